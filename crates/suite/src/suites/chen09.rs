//! Chen, Koufaty & Zhang (SIGMETRICS 2009): Figures 1-9, each run named
//! after the figure it reproduces; findings next to the paper's words.

use flashlab_pattern::units::format_size;
use flashlab_results::RunSummary;

use super::{experiment, experiments, paper_summary, ConfigError, Suite, SummaryInput};
use crate::figures::{
    by_series_figure, cdf_figure, series_figure, CurveSpec, FigureSpec, Metric, Plot, PointSpec,
    SuiteFigures, XKind,
};
use crate::findings::{find, finding, latency_fraction, ratio, slower, Finding, Latency, Row};
use crate::papers::{basic, Builder, PaperConfig, RunDef, CHEN09_RUN_NS, GIB, KIB, MIB};
use crate::plan::Plan;
use crate::plan::Step;
use crate::summary::{Quote, SuiteSummary};
use flashlab_device::Mode;
use flashlab_pattern::{Basic, Location, Mix, Timing};

pub struct Chen09;

fn q(section: &str, text: &str) -> Option<Quote> {
    Some(Quote::new("chen09", section, text))
}

/// Ratios of medians: the paper compares CDFs, whose middle a median reads
/// and a single stall cannot move.
pub fn findings(rows: &[Row]) -> Vec<Finding> {
    let p50 = |e: &str, s: &str| find(rows, e, s).map(|r| r.p50_ns as f64);
    let mean = |e: &str, s: &str| find(rows, e, s).map(|r| r.mean_ns);
    let mbs = |e: &str, s: &str| find(rows, e, s).map(|r| r.mb_per_s);
    let read_mean = |e: &str, s: &str| {
        find(rows, e, s).and_then(|r| r.by_mode.get("read").map(|m| m.0).or(Some(r.mean_ns)))
    };
    let mut out = vec![
        finding("chen09.fig2.rand-over-seq-read-p50", "Figure 2", "random / sequential 4 KiB read latency (medians)", ratio(p50("fig2", "random"), p50("fig2", "sequential")),
            |r| format!("random reads are {} than sequential ones", slower(r)),
            q("section 5.2", "Specifically, sequential has latencies of only 75-90 us, which is nearly 65% less than stride and random (200-230 us).")),
        finding("chen09.fig3.rand-over-seq-write-p50", "Figure 3", "random / sequential 4 KiB write latency (medians)", ratio(p50("fig3", "random"), p50("fig3", "sequential")),
            |r| format!("random writes are {} than sequential ones", slower(r)),
            q("section 5.3", "As shown in Figure 3(a), 88% of the writes in sequential have latencies of only 140-160 us. In contrast, stride and random are much worse. Over 90% of the requests in both workloads have latencies higher than 1.4ms.")),
        finding("chen09.fig5.cache-off-over-on-seq-write-mean", "Figure 5", "sequential write latency, cache off / on (means)", ratio(mean("fig5-cache-off", "sequential"), mean("fig3", "sequential")),
            |r| format!("without the write cache sequential writes are {}", slower(r)),
            q("section 5.4", "Figure 5(a) shows that with disk cache disabled, both SSD-M and SSD-H experienced a significant increase of latencies.")),
        finding("chen09.fig6.read-n-write-n+1-over-only-read.read-mean", "Figure 6", "reads interleaved with writes to the next page / reads alone (read means)", ratio(read_mean("fig6", "read-n-write-n+1"), read_mean("fig6", "only-read")),
            |r| format!("with interleaved writes reads are {}", slower(r)),
            q("section 5.5", "In the former workload, since each incoming read request is not continuous with the previous read request (interrupted by a write), all of the reads have a latency of over 220 us (i.e. random read latency).")),
        finding("chen09.fig7.no-interval-over-10ms.read-mean", "Figure 7", "reads among writes, without / with a 10 ms interval (read means)", ratio(read_mean("fig7", "seq-50pct-write"), read_mean("fig7", "seq-50pct-write-10ms")),
            |r| format!("without idle time between requests reads are {}", slower(r)),
            q("section 5.6", "after inserting a 10ms interval, the percentage of the reads that have latencies lower than 300 us increases from 57% to 74% on SSD-L, and from 78% to 95% on SSD-M.")),
    ];
    let fig8: Vec<&Row> = rows.iter().filter(|r| r.experiment == "fig8a").collect();
    if fig8.len() >= 2 {
        let (a, b) = (fig8[0], fig8[fig8.len() - 1]);
        out.push(finding(
            "chen09.fig8a.largest-over-smallest-range", "Figure 8",
            "random-write latency, largest / smallest range (means)",
            Some(b.mean_ns / a.mean_ns),
            |r| {
                format!(
                    "random writes over {} are {} than over {}",
                    format_size(b.value as u64),
                    slower(r),
                    format_size(a.value as u64)
                )
            },
            q("section 5.7", "as the random range increases from 1GB to 30GB, the average request latency increases by a factor of 55 (from 2.17ms to 120.7ms)"),
        ));
    }
    out.extend(absolute_findings(rows));
    out.push(finding(
        "chen09.fig9.seq-write-before-over-after", "Figure 9",
        "sequential-write bandwidth, before / after striker",
        ratio(mbs("fig9", "SEQ-WR-before"), mbs("fig9", "SEQ-WR-fragmented")),
        |r| format!("fragmentation cuts sequential-write bandwidth {}", crate::findings::times(r)),
        q("section 5.8", "After fragmentation, the bandwidth of sequential write on SSD-M collapses from 42.7MB/sec to 3.02MB/sec (14 times lower)."),
    ));
    out.push(finding(
        "chen09.fig9.seq-read-before-over-after", "Figure 9",
        "sequential-read bandwidth, before / after striker",
        ratio(mbs("fig9", "SEQ-RD-before"), mbs("fig9", "SEQ-RD-fragmented")),
        |r| format!("fragmentation cuts sequential-read bandwidth {}", crate::findings::times(r)),
        q("section 5.8", "This causes the bandwidth of sequential read to drop from 43MB/sec to only 15MB/sec, which is close to the bandwidth of random read."),
    ));
    out.push(finding("chen09.fig9.seq-write-recovered-over-before", "Figure 9", "sequential-write bandwidth, recovered / before", ratio(mbs("fig9", "SEQ-WR-recovered"), mbs("fig9", "SEQ-WR-before")),
        |r| format!("after the recovery procedure sequential writes run at {:.0} % of the fresh bandwidth", r * 100.0),
        q("section 5.8", "We first fill the SSDs with big sequential writes (256KB), then we repeatedly write the first 1024MB data using sequential writes of 4KB many times.")));
    out
}

/// The paper's absolute numbers (bandwidths, latencies) measured the
/// paper's way, one finding each; `flashlab validate` compares them with
/// the values Chen et al. print for each device.
fn absolute_findings(rows: &[Row]) -> Vec<Finding> {
    let mbs = |e: &str, s: &str| find(rows, e, s).map(|r| r.mb_per_s);
    let p50_us = |e: &str, s: &str| find(rows, e, s).map(|r| r.p50_ns as f64 / 1e3);
    let mean_us = |e: &str, s: &str| find(rows, e, s).map(|r| r.mean_ns / 1e3);
    let mode_mean_us = |e: &str, s: &str, m: &str| {
        find(rows, e, s).and_then(|r| r.by_mode.get(m).map(|x| x.0 / 1e3))
    };
    let fig8_mean_ms = |e: &str, last: bool| {
        let runs: Vec<&Row> = rows.iter().filter(|r| r.experiment == e).collect();
        let r = if last { runs.last() } else { runs.first() };
        r.map(|r| r.mean_ns / 1e6)
    };
    let mb = |v: f64| format!("{v:.1} MB/s");
    let us = |v: f64| format!("{v:.0} us");
    let ms = |v: f64| format!("{v:.2} ms");
    let fig1_rw = "For random write, SSD-M and SSD-H achieve bandwidths of 46MB/sec and 48MB/sec, respectively. SSD-L, the low-end device, has a much lower bandwidth (1.14MB/sec), which is only comparable to the HDD (1.49MB/sec).";
    let fig1_rr = "Specifically, all the three SSDs significantly outperform the HDD (0.54MB/sec) by over 31 times higher bandwidths.";
    let fig1_sr = "When handling sequential read, the bandwidth of SSD-L reaches 133MB/sec, and both SSD-M and SSD-H achieve an adorable bandwidth of over 240MB/sec, which is nearly 2/3 of the full bandwidth supported by the SATA bus.";
    let fig1_sw = "SSD-H, the enterprise SSD, achieves a much higher bandwidth, 196MB/sec.";
    let fig2_l = "Nearly all reads of the three workloads have latencies of 200-250 us on SSD-L.";
    let fig2_mh = "Specifically, sequential has latencies of only 75-90 us, which is nearly 65% less than stride and random (200-230 us).";
    let fig3_mh = "On both SSDs, over 90% of the requests of all the three workloads have latencies of 75-90 us.";
    let fig3_l = "As shown in Figure 3(a), 88% of the writes in sequential have latencies of only 140-160 us. In contrast, stride and random are much worse. Over 90% of the requests in both workloads have latencies higher than 1.4ms.";
    vec![
        finding("chen09.fig1.rand-read-bw", "Figure 1", "Fig 1 random-read bandwidth, 4 KiB, 32 jobs (MB/s)", mbs("fig1", "random-read"), mb, q("section 4", fig1_rr)),
        finding("chen09.fig1.rand-write-bw", "Figure 1", "Fig 1 random-write bandwidth, 4 KiB, 32 jobs (MB/s)", mbs("fig1", "random-write"), mb, q("section 4", fig1_rw)),
        finding("chen09.fig1.seq-read-bw", "Figure 1", "Fig 1 sequential-read bandwidth, 256 KiB, 32 jobs (MB/s)", mbs("fig1", "sequential-read"), mb, q("section 4", fig1_sr)),
        finding("chen09.fig1.seq-write-bw", "Figure 1", "Fig 1 sequential-write bandwidth, 256 KiB, 32 jobs (MB/s)", mbs("fig1", "sequential-write"), mb, q("section 4", fig1_sw)),
        finding("chen09.fig2.seq-read-p50", "Figure 2", "Fig 2 sequential 4 KiB read latency, median (us)", p50_us("fig2", "sequential"), us, q("section 5.2", fig2_mh)),
        finding("chen09.fig2.rand-read-p50", "Figure 2", "Fig 2 random 4 KiB read latency, median (us)", p50_us("fig2", "random"), us, q("section 5.2", fig2_l)),
        finding("chen09.fig3.seq-write-p50", "Figure 3", "Fig 3 sequential 4 KiB write latency, median (us)", p50_us("fig3", "sequential"), us, q("section 5.3", fig3_mh)),
        finding("chen09.fig3.rand-write-p50", "Figure 3", "Fig 3 random 4 KiB write latency, median (us)", p50_us("fig3", "random"), us, q("section 5.3", fig3_l)),
        finding("chen09.fig4.seq-write-mean", "Figure 4", "Fig 4 sequential 4 KiB write latency, mean (us)", mean_us("fig3", "sequential"), us,
            q("section 5.3", "A spike of around 1.4-1.5ms appears every 64 requests, and three spikes of around 1ms, 700 us, and 300 us periodically appear in between. The average latency is 209 us.")),
        finding("chen09.fig5.cache-off-seq-write-p50", "Figure 5", "Fig 5 sequential 4 KiB write latency with the cache off, median (us)", p50_us("fig5-cache-off", "sequential"), us,
            q("section 5.4", "On SSD-M, more than 50% of the requests suffer latencies of over 1.3ms, and all requests have latencies of over 400 us.")),
        finding("chen09.fig6.read-n-write-n.read-mean", "Figure 6", "Fig 6 read latency, read(n)+write(n), mean (us)", mode_mean_us("fig6", "read-n-write-n", "read"), us,
            q("section 5.5", "read latencies (around 75 us) do not change, even when being interleaved with writes, just like in only-read.")),
        finding("chen09.fig6.read-n-write-n+1.read-mean", "Figure 6", "Fig 6 read latency, read(n)+write(n+1), mean (us)", mode_mean_us("fig6", "read-n-write-n+1", "read"), us,
            q("section 5.5", "In the former workload, since each incoming read request is not continuous with the previous read request (interrupted by a write), all of the reads have a latency of over 220 us (i.e. random read latency).")),
        finding("chen09.fig6.write-n-read-n.read-mean", "Figure 6", "Fig 6 read latency, write(n)+read(n), mean (us)", mode_mean_us("fig6", "write-n-read-n", "read"), us,
            q("section 5.5", "This also explains the fact that over 80% of the reads in these workloads have a latency of higher than 1ms.")),
        finding("chen09.fig6.read-n-write-n+1.write-mean", "Figure 6", "Fig 6 write latency, read(n)+write(n+1), mean (us)", mode_mean_us("fig6", "read-n-write-n+1", "write"), us,
            q("section 5.5", "As expected, it shows the worst write performance, and nearly all requests have a latency of over 1.3ms.")),
        finding("chen09.fig8a.smallest-range-mean", "Figure 8", "Fig 8a random-write latency over the smallest range, mean (ms)", fig8_mean_ms("fig8a", false), ms,
            q("section 5.7", "as the random range increases from 1GB to 30GB, the average request latency increases by a factor of 55 (from 2.17ms to 120.7ms)")),
        finding("chen09.fig8b.smallest-stride-mean", "Figure 8", "Fig 8b stride-write latency at the smallest stride, mean (ms)", fig8_mean_ms("fig8b", false), ms,
            q("section 5.7", "As we increase the stride step from 4KB to 128MB, the average latency increases from 1.69ms to 151.2ms (89 times increase) and the bandwidth drops to only 0.025MB/sec.")),
        finding("chen09.fig8b.largest-stride-mean", "Figure 8", "Fig 8b stride-write latency at the largest stride, mean (ms)", fig8_mean_ms("fig8b", true), ms,
            q("section 5.7", "As we increase the stride step from 4KB to 128MB, the average latency increases from 1.69ms to 151.2ms (89 times increase) and the bandwidth drops to only 0.025MB/sec.")),
        finding("chen09.fig9.seq-read-bw-before", "Figure 9", "Fig 9 sequential-read bandwidth before striker (MB/s)", mbs("fig9", "SEQ-RD-before"), mb,
            q("section 5.8", "This causes the bandwidth of sequential read to drop from 43MB/sec to only 15MB/sec, which is close to the bandwidth of random read.")),
        finding("chen09.fig9.seq-read-bw-after", "Figure 9", "Fig 9 sequential-read bandwidth after striker (MB/s)", mbs("fig9", "SEQ-RD-fragmented"), mb,
            q("section 5.8", "This causes the bandwidth of sequential read to drop from 43MB/sec to only 15MB/sec, which is close to the bandwidth of random read.")),
        finding("chen09.fig9.seq-write-bw-before", "Figure 9", "Fig 9 sequential-write bandwidth before striker (MB/s)", mbs("fig9", "SEQ-WR-before"), mb,
            q("section 5.8", "After fragmentation, the bandwidth of sequential write on SSD-M collapses from 42.7MB/sec to 3.02MB/sec (14 times lower).")),
        finding("chen09.fig9.seq-write-bw-after", "Figure 9", "Fig 9 sequential-write bandwidth after striker (MB/s)", mbs("fig9", "SEQ-WR-fragmented"), mb,
            q("section 5.8", "Its bandwidth still reaches 40.3MB/sec for sequential write and 11.4MB/sec for random write.")),
        finding("chen09.fig9.rand-write-bw-after", "Figure 9", "Fig 9 random-write bandwidth after striker (MB/s)", mbs("fig9", "RND-WR-fragmented"), mb,
            q("section 5.8", "Its bandwidth still reaches 40.3MB/sec for sequential write and 11.4MB/sec for random write.")),
    ]
}

/// A claim of Chen et al. about a fraction of requests ("over 90% of the
/// requests ... higher than 1.4ms"): the finding is that fraction of the
/// run's per-IO records, never a mean or a percentile.
pub struct FractionClaim {
    pub id: &'static str,
    pub source: &'static str,
    pub what: &'static str,
    pub experiment: &'static str,
    pub series: &'static str,
    /// Only the reads or the writes of a mixed run.
    pub mode: Option<Mode>,
    pub which: Latency,
    pub section: &'static str,
    pub quote: &'static str,
}

const US: u64 = 1_000;
const MS: u64 = 1_000_000;

const fn claim(
    id: &'static str,
    source: &'static str,
    what: &'static str,
    (experiment, series, mode): (&'static str, &'static str, Option<Mode>),
    which: Latency,
    (section, quote): (&'static str, &'static str),
) -> FractionClaim {
    FractionClaim {
        id,
        source,
        what,
        experiment,
        series,
        mode,
        which,
        section,
        quote,
    }
}

const FIG2_L: (&str, &str) = (
    "section 5.2",
    "Nearly all reads of the three workloads have latencies of 200-250 us on SSD-L.",
);
const FIG3_MH: (&str, &str) = (
    "section 5.3",
    "On both SSDs, over 90% of the requests of all the three workloads have latencies of 75-90 us.",
);
const FIG7: (&str, &str) = ("section 5.6", "Specifically, after inserting a 10ms interval, the percentage of the reads that have latencies lower than 300 us increases from 57% to 74% on SSD-L, and from 78% to 95% on SSD-M.");

/// Every fraction-of-requests claim the suite measures from the records.
pub const FRACTIONS: [FractionClaim; 14] = [
    claim("chen09.fig2.seq-read.within-200-250us", "Figure 2", "Fig 2 sequential 4 KiB reads within 200-250 us (fraction)", ("fig2", "sequential", None), Latency::Within(200 * US, 250 * US), FIG2_L),
    claim("chen09.fig2.rand-read.within-200-250us", "Figure 2", "Fig 2 random 4 KiB reads within 200-250 us (fraction)", ("fig2", "random", None), Latency::Within(200 * US, 250 * US), FIG2_L),
    claim("chen09.fig3.seq-write.within-140-160us", "Figure 3", "Fig 3 sequential 4 KiB writes within 140-160 us (fraction)", ("fig3", "sequential", None), Latency::Within(140 * US, 160 * US),
        ("section 5.3", "As shown in Figure 3(a), 88% of the writes in sequential have latencies of only 140-160 us.")),
    claim("chen09.fig3.rand-write.above-1.4ms", "Figure 3", "Fig 3 random 4 KiB writes above 1.4 ms (fraction)", ("fig3", "random", None), Latency::Above(1_400 * US),
        ("section 5.3", "Over 90% of the requests in both workloads have latencies higher than 1.4ms.")),
    claim("chen09.fig3.seq-write.within-75-90us", "Figure 3", "Fig 3 sequential 4 KiB writes within 75-90 us (fraction)", ("fig3", "sequential", None), Latency::Within(75 * US, 90 * US), FIG3_MH),
    claim("chen09.fig3.rand-write.within-75-90us", "Figure 3", "Fig 3 random 4 KiB writes within 75-90 us (fraction)", ("fig3", "random", None), Latency::Within(75 * US, 90 * US), FIG3_MH),
    claim("chen09.fig5.cache-off-seq-write.above-1.3ms", "Figure 5", "Fig 5 sequential 4 KiB writes with the cache off above 1.3 ms (fraction)", ("fig5-cache-off", "sequential", None), Latency::Above(1_300 * US),
        ("section 5.4", "On SSD-M, more than 50% of the requests suffer latencies of over 1.3ms, and all requests have latencies of over 400 us.")),
    claim("chen09.fig5.cache-off-seq-write.within-400-500us", "Figure 5", "Fig 5 sequential 4 KiB writes with the cache off within 400-500 us (fraction)", ("fig5-cache-off", "sequential", None), Latency::Within(400 * US, 500 * US),
        ("section 5.4", "Nearly all requests have latencies of 400-500 us.")),
    claim("chen09.fig6.write-n-read-n.reads-above-1ms", "Figure 6", "Fig 6 reads of write(n)+read(n) above 1 ms (fraction)", ("fig6", "write-n-read-n", Some(Mode::Read)), Latency::Above(MS),
        ("section 5.5", "This also explains the fact that over 80% of the reads in these workloads have a latency of higher than 1ms.")),
    claim("chen09.fig6.read-n-write-n+1.writes-above-1.3ms", "Figure 6", "Fig 6 writes of read(n)+write(n+1) above 1.3 ms (fraction)", ("fig6", "read-n-write-n+1", Some(Mode::Write)), Latency::Above(1_300 * US),
        ("section 5.5", "As expected, it shows the worst write performance, and nearly all requests have a latency of over 1.3ms.")),
    claim("chen09.fig6.read-n-write-n+1.reads-above-220us", "Figure 6", "Fig 6 reads of read(n)+write(n+1) above 220 us (fraction)", ("fig6", "read-n-write-n+1", Some(Mode::Read)), Latency::Above(220 * US),
        ("section 5.5", "In the former workload, since each incoming read request is not continuous with the previous read request (interrupted by a write), all of the reads have a latency of over 220 us (i.e. random read latency).")),
    claim("chen09.fig7.seq-50pct-write.reads-below-300us", "Figure 7", "Fig 7 reads among sequential writes below 300 us, back to back (fraction)", ("fig7", "seq-50pct-write", Some(Mode::Read)), Latency::Below(300 * US), FIG7),
    claim("chen09.fig7.seq-50pct-write-10ms.reads-below-300us", "Figure 7", "Fig 7 reads among sequential writes below 300 us, 10 ms apart (fraction)", ("fig7", "seq-50pct-write-10ms", Some(Mode::Read)), Latency::Below(300 * US), FIG7),
    claim("chen09.fig9.seq-write-after.above-1ms", "Figure 9", "Fig 9 sequential 4 KiB writes after the striker above 1 ms (fraction)", ("fig9", "SEQ-WR-fragmented", None), Latency::Above(MS),
        ("section 5.8", "The result is that nearly 38% of the writes have a latency higher than 1ms in sequential write, and many of them have a latency of 8-9ms.")),
];

/// The fraction-of-requests findings, from the runs' per-IO records.
pub fn fraction_findings(input: &SummaryInput) -> Vec<Finding> {
    FRACTIONS
        .iter()
        .map(|c| {
            let v = latency_fraction(input, c.experiment, c.series, c.mode, c.which);
            finding(
                c.id,
                c.source,
                c.what,
                v,
                |v| format!("{:.1} % of the requests", v * 100.0),
                q(c.section, c.quote),
            )
        })
        .collect()
}

/// Figure 9: the four patterns before fragmentation, after, recovered.
fn fig9(plan: &Plan) -> Option<FigureSpec> {
    const PHASES: [&str; 3] = ["before", "fragmented", "recovered"];
    let mut curves: Vec<CurveSpec> = Vec::new();
    for r in experiment(plan, "fig9") {
        let Some((pattern, phase)) = r.series.rsplit_once('-') else {
            continue;
        };
        let Some(pos) = PHASES.iter().position(|p| *p == phase) else {
            continue;
        };
        let pt = PointSpec {
            run: r.name.clone(),
            x: pos as f64,
            category: Some(phase.to_string()),
        };
        match curves.iter_mut().find(|c| c.label == pattern) {
            Some(c) => c.points.push(pt),
            None => curves.push(CurveSpec {
                label: pattern.to_string(),
                color: None,
                reference: false,
                points: vec![pt],
            }),
        }
    }
    (!curves.is_empty()).then(|| FigureSpec {
        id: "fig9".into(),
        title: "Chen et al. Figure 9: bandwidth of 4 KiB patterns before fragmentation, after the striker, and after recovery".into(),
        plot: Plot::Points {
            x_label: "device state".into(),
            x: XKind::Named,
            metric: Metric::Bandwidth,
        },
        curves,
        markers: Vec::new(),
        wide: false,
    })
}

impl Suite for Chen09 {
    type Config = PaperConfig;

    fn name(&self) -> &'static str {
        "chen09"
    }

    fn title(&self) -> &'static str {
        "Chen, Koufaty & Zhang (SIGMETRICS 2009)"
    }

    fn seed(&self, config: &PaperConfig) -> u64 {
        config.seed
    }

    fn default_config(&self, quick: bool) -> PaperConfig {
        super::paper_default_config(quick)
    }

    fn reduced_run(&self, config: &PaperConfig) -> Option<super::ReducedRun> {
        super::paper_reduced_run(config)
    }

    fn plan(&self, cfg: &PaperConfig, device_bytes: u64) -> Result<Plan, ConfigError> {
        Ok(plan(cfg, device_bytes))
    }

    fn figures(&self, plan: &Plan, _runs: Option<&[RunSummary]>) -> SuiteFigures {
        let mut figures = Vec::new();
        for e in experiments(plan) {
            let runs = experiment(plan, e);
            let line = |title: &str, x_label: &str| {
                series_figure(e, title, x_label, XKind::LogBytes, Metric::Latency, &runs)
            };
            match e {
                "fig1" => figures.push(by_series_figure(e, "Chen et al. Figure 1: throughput of the general tests (4 KiB random, 256 KiB sequential; 32 jobs)", "MB/s", Metric::Bandwidth, &runs)),
                "fig2" => figures.push(cdf_figure(e, "Chen et al. Figure 2: response-time CDFs of 4 KiB reads: sequential, random, stride", &runs)),
                "fig3" => figures.push(cdf_figure(e, "Chen et al. Figure 3: response-time CDFs of 4 KiB writes: sequential, random, stride", &runs)),
                "fig5-cache-off" => figures.push(cdf_figure(e, "Chen et al. Figure 5: response-time CDFs of 4 KiB writes with the write cache off", &runs)),
                "fig6" => {
                    let (plain, paused): (Vec<_>, Vec<_>) =
                        runs.iter().partition(|r| !r.series.ends_with("-10ms"));
                    figures.push(cdf_figure("fig6", "Chen et al. Figure 6: response-time CDFs of interleaved reads and writes, back to back", &plain));
                    figures.push(cdf_figure("fig6-10ms", "Chen et al. Figure 6: response-time CDFs of interleaved reads and writes, 10 ms apart", &paused));
                }
                "fig7" => figures.push(cdf_figure(e, "Chen et al. Figure 7: response-time CDFs of sequential reads among writes, without and with a 10 ms interval", &runs)),
                "fig8a" => figures.push(line("Chen et al. Figure 8(a): mean random-write response time by range (band: p10-p90)", "range written")),
                "fig8b" => figures.push(line("Chen et al. Figure 8(b): mean stride-write response time by stride (band: p10-p90)", "stride")),
                "fig9" => figures.extend(fig9(plan)),
                _ => {}
            }
        }
        let featured = experiment(plan, "fig2")
            .into_iter()
            .chain(experiment(plan, "fig3"))
            .map(|r| r.name.clone())
            .collect();
        SuiteFigures {
            suite: self.name().into(),
            groups: vec![super::paper_group(self, figures)],
            featured_runs: featured,
        }
    }

    fn summarise(&self, input: &SummaryInput) -> SuiteSummary {
        let mut s = paper_summary(self, input, findings);
        s.findings.extend(fraction_findings(input));
        s
    }
}

/// Chen, Koufaty & Zhang: general tests (Figure 1), read and write latency
/// by pattern (Figures 2, 3), write cache (Figure 5), read/write
/// interference (Figure 6), background operations (Figure 7), randomness
/// (Figure 8), fragmentation and recovery (Figure 9).
pub fn plan(cfg: &PaperConfig, device_bytes: u64) -> Plan {
    let mut b = Builder::new(cfg, device_bytes);
    b.fill("Chen et al. 5.1: the device is filled with sequential 256 KiB writes first");
    fig1_general(&mut b);
    fig2_read_patterns(&mut b);
    fig3_write_patterns(&mut b);
    fig5_cache_off(&mut b);
    fig6_interference(&mut b);
    fig7_background(&mut b);
    fig8_randomness(&mut b);
    fig9_fragmentation(&mut b);
    b.finish("chen09")
}

/// Figure 1: 4 KiB random in the first GiB, 256 KiB sequential; 32 jobs.
fn fig1_general(b: &mut Builder) {
    let first_gib = (0, b.cap(GIB));
    let whole = (0, b.device_bytes);
    let seq = Location::Sequential;
    let rnd = Location::Random;
    let c = b.count(1024);
    b.run(RunDef {
        experiment: "fig1",
        series: "random-read",
        parameter: "",
        value: 0.0,
        primary: basic(rnd.clone(), Mode::Read, 4 * KIB),
        mix: None,
        timing: Timing::Consecutive,
        target: first_gib,
        ios: c,
        parallel: 32,
    });
    b.run(RunDef {
        experiment: "fig1",
        series: "sequential-read",
        parameter: "",
        value: 0.0,
        primary: basic(seq.clone(), Mode::Read, 256 * KIB),
        mix: None,
        timing: Timing::Consecutive,
        target: whole,
        ios: b.count(128),
        parallel: 32,
    });
    b.run(RunDef {
        experiment: "fig1",
        series: "random-write",
        parameter: "",
        value: 0.0,
        primary: basic(rnd.clone(), Mode::Write, 4 * KIB),
        mix: None,
        timing: Timing::Consecutive,
        target: first_gib,
        ios: c,
        parallel: 32,
    });
    b.run(RunDef {
        experiment: "fig1",
        series: "sequential-write",
        parameter: "",
        value: 0.0,
        primary: basic(seq.clone(), Mode::Write, 256 * KIB),
        mix: None,
        timing: Timing::Consecutive,
        target: whole,
        ios: b.count(128),
        parallel: 32,
    });
}

/// Figure 2: 4 KiB reads, sequential / random / stride, one job, each on
/// a freshly filled device ("before each experiment", Chen et al. 5.1).
fn fig2_read_patterns(b: &mut Builder) {
    let cfg = b.cfg.clone();
    let first_gib = (0, b.cap(GIB));
    let seq = Location::Sequential;
    let rnd = Location::Random;
    let stride = Location::Stride { gap_bytes: 4 * KIB };
    let c = b.count(4096);
    for (name, loc) in [
        ("sequential", seq.clone()),
        ("random", rnd.clone()),
        ("stride", stride.clone()),
    ] {
        if cfg.refill {
            b.fill("Chen et al. 5.1: re-fill before each experiment");
        }
        b.run(RunDef {
            experiment: "fig2",
            series: name,
            parameter: "",
            value: 0.0,
            primary: basic(loc, Mode::Read, 4 * KIB),
            mix: None,
            timing: Timing::Consecutive,
            target: first_gib,
            ios: c,
            parallel: 1,
        });
    }
}

/// Figure 3: the same as writes, each on a freshly filled device.
fn fig3_write_patterns(b: &mut Builder) {
    // The same count as Figure 2: the figures compare them IO for IO.
    let c = b.count(4096);
    let cfg = b.cfg.clone();
    let first_gib = (0, b.cap(GIB));
    let seq = Location::Sequential;
    let rnd = Location::Random;
    let stride = Location::Stride { gap_bytes: 4 * KIB };
    for (name, loc) in [
        ("sequential", seq.clone()),
        ("random", rnd.clone()),
        ("stride", stride.clone()),
    ] {
        if cfg.refill {
            b.fill("Chen et al. 5.1: re-fill before each experiment");
        }
        b.run(RunDef {
            experiment: "fig3",
            series: name,
            parameter: "",
            value: 0.0,
            primary: basic(loc, Mode::Write, 4 * KIB),
            mix: None,
            timing: Timing::Consecutive,
            target: first_gib,
            ios: c,
            parallel: 1,
        });
    }
}

/// Figure 5: writes with the write cache disabled.
fn fig5_cache_off(b: &mut Builder) {
    // The same count as Figure 2: the figures compare them IO for IO.
    let c = b.count(4096);
    let cfg = b.cfg.clone();
    let first_gib = (0, b.cap(GIB));
    let seq = Location::Sequential;
    let rnd = Location::Random;
    let stride = Location::Stride { gap_bytes: 4 * KIB };
    b.steps.push(Step::WriteCache { enabled: false });
    for (name, loc) in [
        ("sequential", seq.clone()),
        ("random", rnd.clone()),
        ("stride", stride.clone()),
    ] {
        if cfg.refill {
            b.fill("Chen et al. 5.1: re-fill before each experiment");
        }
        b.run(RunDef {
            experiment: "fig5-cache-off",
            series: name,
            parameter: "",
            value: 0.0,
            primary: basic(loc, Mode::Write, 4 * KIB),
            mix: None,
            timing: Timing::Consecutive,
            target: first_gib,
            ios: c,
            parallel: 1,
        });
    }
    b.steps.push(Step::WriteCache { enabled: true });
}

/// Figure 6: 1000 requests of 4 KiB in four read/write sequences, without and with a 10 ms interval.
fn fig6_interference(b: &mut Builder) {
    let cfg = b.cfg.clone();
    let seq = Location::Sequential;
    let stride = Location::Stride { gap_bytes: 4 * KIB };
    let c = b.count(1000);
    let area = (0, b.cap(64 * MIB));
    for (timing, suffix) in [
        (Timing::Consecutive, ""),
        (
            Timing::Pause {
                pause_ns: 10_000_000,
            },
            "-10ms",
        ),
    ] {
        if cfg.refill {
            b.fill("Chen et al. 5.1: re-fill before each experiment");
        }
        let r = |loc| basic(loc, Mode::Read, 4 * KIB);
        let w = |loc| basic(loc, Mode::Write, 4 * KIB);
        let one_to_one = |second: Basic| {
            Some(Mix {
                secondary: second,
                ratio_primary: 1,
                ratio_secondary: 1,
                random_order: false,
                shared_location: false,
            })
        };
        b.run(RunDef {
            experiment: "fig6",
            series: &format!("only-read{suffix}"),
            parameter: "",
            value: 0.0,
            primary: r(seq.clone()),
            mix: None,
            timing,
            target: area,
            ios: c,
            parallel: 1,
        });
        b.run(RunDef {
            experiment: "fig6",
            series: &format!("only-write{suffix}"),
            parameter: "",
            value: 0.0,
            primary: w(seq.clone()),
            mix: None,
            timing,
            target: area,
            ios: c,
            parallel: 1,
        });
        b.run(RunDef {
            experiment: "fig6",
            series: &format!("read-n-write-n{suffix}"),
            parameter: "",
            value: 0.0,
            primary: r(seq.clone()),
            mix: one_to_one(w(seq.clone())),
            timing,
            target: area,
            ios: 2 * c,
            parallel: 1,
        });
        b.run(RunDef {
            experiment: "fig6",
            series: &format!("write-n-read-n{suffix}"),
            parameter: "",
            value: 0.0,
            primary: w(seq.clone()),
            mix: one_to_one(r(seq.clone())),
            timing,
            target: area,
            ios: 2 * c,
            parallel: 1,
        });
        let mut odd = w(stride.clone());
        odd.io_shift_bytes = 4 * KIB;
        b.run(RunDef {
            experiment: "fig6",
            series: &format!("read-n-write-n+1{suffix}"),
            parameter: "",
            value: 0.0,
            primary: r(stride.clone()),
            mix: one_to_one(odd),
            timing,
            target: area,
            ios: 2 * c,
            parallel: 1,
        });
        let mut far = w(seq.clone());
        far.io_shift_bytes = 4 * MIB;
        b.run(RunDef {
            experiment: "fig6",
            series: &format!("read-n-write-n+4MiB{suffix}"),
            parameter: "",
            value: 0.0,
            primary: r(seq.clone()),
            mix: one_to_one(far),
            timing,
            target: (0, b.cap(64 * MIB + 4 * MIB)),
            ios: 2 * c,
            parallel: 1,
        });
    }
}

/// Figure 7: sequential 4 KiB, half writes, without and with a 10 ms
/// interval. Section 5.6: "we use the toolkit to run a *sequential*
/// workload using request size of 4KB. The type (read/write) of each
/// request is randomly determined and 50% of the requests are writes":
/// one sequential address stream, each IO's mode drawn at random (a
/// read's page was not just written, and a write follows a read about
/// half the time, so neither side stays a continuous stream).
fn fig7_background(b: &mut Builder) {
    let cfg = b.cfg.clone();
    let seq = Location::Sequential;
    // Figure 6's 64 MiB area.
    let area = (0, b.cap(64 * MIB));
    let c = b.count(5000);
    for (timing, suffix) in [
        (Timing::Consecutive, ""),
        (
            Timing::Pause {
                pause_ns: 10_000_000,
            },
            "-10ms",
        ),
    ] {
        if cfg.refill {
            b.fill("Chen et al. 5.1: re-fill before each experiment");
        }
        let mix = Some(Mix {
            secondary: basic(seq.clone(), Mode::Write, 4 * KIB),
            ratio_primary: 1,
            ratio_secondary: 1,
            random_order: true,
            shared_location: true,
        });
        b.run(RunDef {
            experiment: "fig7",
            series: &format!("seq-50pct-write{suffix}"),
            parameter: "",
            value: 0.0,
            primary: basic(seq.clone(), Mode::Read, 4 * KIB),
            mix,
            timing,
            target: area,
            ios: c,
            parallel: 1,
        });
    }
}

/// Figure 8: random writes over a growing range, stride writes with a
/// growing stride. Each range runs for the paper's 10 seconds (5.1: "In
/// default, each micro-benchmark runs for 10 seconds"), at most 12288
/// writes, and is measured whole: section 5.7 reports "the average
/// request latency" of the run, so a device whose log blocks absorb the
/// first few thousand writes after the fill (ssd-l's random log holds
/// 4096) averages them in, as the paper's did. The ranges follow each
/// other without a re-fill (the figure is one experiment), each starting
/// from the state the previous one left.
fn fig8_randomness(b: &mut Builder) {
    let cfg = b.cfg.clone();
    let whole = (0, b.device_bytes);
    let rnd = Location::Random;
    let c = b.count(12_288);
    if cfg.refill {
        b.fill("Chen et al. 5.1: re-fill before each experiment");
    }
    let mut ranges: Vec<u64> = [1, 2, 4, 8, 16, 30]
        .iter()
        .map(|g| g * GIB)
        .filter(|r| *r <= b.device_bytes)
        .collect();
    if ranges.is_empty() || *ranges.last().unwrap() < b.device_bytes.min(30 * GIB) {
        ranges.push(b.device_bytes.min(30 * GIB) / (4 * KIB) * 4 * KIB);
    }
    for r in ranges {
        let at = b.steps.len();
        b.run(RunDef {
            experiment: "fig8a",
            series: "random-write",
            parameter: "range",
            value: r as f64,
            primary: basic(rnd.clone(), Mode::Write, 4 * KIB),
            mix: None,
            timing: Timing::Consecutive,
            target: (0, r),
            ios: c,
            parallel: 1,
        });
        if let Some(Step::Run(run)) = b.steps.get_mut(at) {
            run.spec.runtime_ns = Some(CHEN09_RUN_NS);
        }
    }
    // Stride writes keep the paper's 1024 (a larger count would drop the
    // large strides, which wrap around the device at most 4 times). Figure
    // 8(b) is its own experiment: the device is re-filled first (5.1),
    // so its smallest stride does not inherit the merges Figure 8(a)'s
    // 30 GB range left pending.
    if cfg.refill {
        b.fill("Chen et al. 5.1: re-fill before each experiment");
    }
    let c = b.count(1024);
    let mut s = 4 * KIB;
    while s <= 128 * MIB && c * (s + 4 * KIB) <= b.device_bytes * 4 {
        b.run(RunDef {
            experiment: "fig8b",
            series: "stride-write",
            parameter: "stride",
            value: s as f64,
            primary: basic(Location::Stride { gap_bytes: s }, Mode::Write, 4 * KIB),
            mix: None,
            timing: Timing::Consecutive,
            target: whole,
            ios: c,
            parallel: 1,
        });
        s *= 4;
    }
}

/// Figure 9: the four 4 KiB patterns before fragmentation, after "striker", after recovery.
fn fig9_fragmentation(b: &mut Builder) {
    let cfg = b.cfg.clone();
    let first_gib = (0, b.cap(GIB));
    let whole = (0, b.device_bytes);
    let seq = Location::Sequential;
    let rnd = Location::Random;
    let c = b.count(4096);
    // After the striker every write is cleaning-bound, but a write-back
    // cache first absorbs its size in writes at cache speed: a run measures
    // the fragmented device only past that start-up. Each run detects and
    // ignores its start-up, up to half the run, and on SSD-M it lasts longer
    // than the cache's 2048 pages (the cache drains while it fills), so at
    // 4096 writes the measured half was still mostly cached (8.4 MB/s, 4 %
    // above 1 ms, where its last quarter ran at 0.85 ms a write). Four times
    // as many writes measure the running phase.
    let c_fragmented_writes = b.count(4 * 4096);
    let four = |b: &mut Builder, phase: &str| {
        for (name, loc, mode) in [
            ("RND-RD", rnd.clone(), Mode::Read),
            ("SEQ-RD", seq.clone(), Mode::Read),
            ("RND-WR", rnd.clone(), Mode::Write),
            ("SEQ-WR", seq.clone(), Mode::Write),
        ] {
            let c = if phase == "fragmented" && mode == Mode::Write {
                c_fragmented_writes
            } else {
                c
            };
            b.run(RunDef {
                experiment: "fig9",
                series: &format!("{name}-{phase}"),
                parameter: "",
                value: 0.0,
                primary: basic(loc, mode, 4 * KIB),
                mix: None,
                timing: Timing::Consecutive,
                target: if name.starts_with("RND") {
                    whole
                } else {
                    first_gib
                },
                ios: c,
                parallel: 1,
            });
        }
    };
    b.fill("Chen et al. 5.8: a freshly filled device before fragmentation");
    four(b, "before");
    // Striker: 4 KiB random writes, 4 GiB in all, over the whole device.
    let striker = b.cap(4 * GIB) / (4 * KIB);
    b.run(RunDef {
        experiment: "fig9",
        series: "striker",
        parameter: "",
        value: 0.0,
        primary: basic(rnd.clone(), Mode::Write, 4 * KIB),
        mix: None,
        timing: Timing::Consecutive,
        target: whole,
        ios: ((striker as f64 * cfg.scale.min(1.0)) as u64).max(1024),
        parallel: 1,
    });
    four(b, "fragmented");
    // Recovery: fill with 256 KiB writes, then write the first GiB sequentially in 4 KiB, four times.
    b.fill("Chen et al. 5.8 recovery: big sequential writes");
    let passes = first_gib.1 / (4 * KIB);
    b.run(RunDef {
        experiment: "fig9",
        series: "recovery-4KiB-passes",
        parameter: "",
        value: 0.0,
        primary: basic(seq.clone(), Mode::Write, 4 * KIB),
        mix: None,
        timing: Timing::Consecutive,
        target: first_gib,
        ios: ((4 * passes) as f64 * cfg.scale.min(1.0)) as u64 + 1,
        parallel: 1,
    });
    four(b, "recovered");
}
