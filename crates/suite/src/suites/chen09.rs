//! Chen, Koufaty & Zhang (SIGMETRICS 2009): Figures 1-9, each run named
//! after the figure it reproduces; findings next to the paper's words.

use flashlab_pattern::units::format_size;
use flashlab_results::RunSummary;

use super::{experiment, experiments, paper_summary, parse, ConfigError, Suite, SummaryInput};
use crate::figures::{
    by_series_figure, cdf_figure, series_figure, CurveSpec, FigureSpec, Metric, Plot, PointSpec,
    SuiteFigures, XKind,
};
use crate::findings::{find, finding, ratio, slower, Finding, Row};
use crate::papers::{self, PaperConfig};
use crate::plan::Plan;
use crate::summary::{Quote, SuiteSummary};

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
        finding("Figure 2", "random / sequential 4 KiB read latency (medians)", ratio(p50("fig2", "random"), p50("fig2", "sequential")),
            |r| format!("random reads are {} than sequential ones", slower(r)),
            q("section 5.2", "Specifically, sequential has latencies of only 75-90 us, which is nearly 65% less than stride and random (200-230 us).")),
        finding("Figure 3", "random / sequential 4 KiB write latency (medians)", ratio(p50("fig3", "random"), p50("fig3", "sequential")),
            |r| format!("random writes are {} than sequential ones", slower(r)),
            q("section 5.3", "As shown in Figure 3(a), 88% of the writes in sequential have latencies of only 140-160 us. In contrast, stride and random are much worse. Over 90% of the requests in both workloads have latencies higher than 1.4ms.")),
        finding("Figure 5", "sequential write latency, cache off / on (means)", ratio(mean("fig5-cache-off", "sequential"), mean("fig3", "sequential")),
            |r| format!("without the write cache sequential writes are {}", slower(r)),
            q("section 5.4", "Figure 5(a) shows that with disk cache disabled, both SSD-M and SSD-H experienced a significant increase of latencies.")),
        finding("Figure 6", "reads interleaved with writes to the next page / reads alone (read means)", ratio(read_mean("fig6", "read-n-write-n+1"), read_mean("fig6", "only-read")),
            |r| format!("with interleaved writes reads are {}", slower(r)),
            q("section 5.5", "In the former workload, since each incoming read request is not continuous with the previous read request (interrupted by a write), all of the reads have a latency of over 220 us (i.e. random read latency).")),
        finding("Figure 7", "reads among writes, without / with a 10 ms interval (read means)", ratio(read_mean("fig7", "seq-50pct-write"), read_mean("fig7", "seq-50pct-write-10ms")),
            |r| format!("without idle time between requests reads are {}", slower(r)),
            q("section 5.6", "after inserting a 10ms interval, the percentage of the reads that have latencies lower than 300 us increases from 57% to 74% on SSD-L, and from 78% to 95% on SSD-M.")),
    ];
    let fig8: Vec<&Row> = rows.iter().filter(|r| r.experiment == "fig8a").collect();
    if fig8.len() >= 2 {
        let (a, b) = (fig8[0], fig8[fig8.len() - 1]);
        out.push(finding(
            "Figure 8",
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
    out.push(finding(
        "Figure 9",
        "sequential-write bandwidth, before / after striker",
        ratio(mbs("fig9", "SEQ-WR-before"), mbs("fig9", "SEQ-WR-fragmented")),
        |r| format!("fragmentation cuts sequential-write bandwidth {}", crate::findings::times(r)),
        q("section 5.8", "After fragmentation, the bandwidth of sequential write on SSD-M collapses from 42.7MB/sec to 3.02MB/sec (14 times lower)."),
    ));
    out.push(finding(
        "Figure 9",
        "sequential-read bandwidth, before / after striker",
        ratio(mbs("fig9", "SEQ-RD-before"), mbs("fig9", "SEQ-RD-fragmented")),
        |r| format!("fragmentation cuts sequential-read bandwidth {}", crate::findings::times(r)),
        q("section 5.8", "This causes the bandwidth of sequential read to drop from 43MB/sec to only 15MB/sec, which is close to the bandwidth of random read."),
    ));
    out.push(finding("Figure 9", "sequential-write bandwidth, recovered / before", ratio(mbs("fig9", "SEQ-WR-recovered"), mbs("fig9", "SEQ-WR-before")),
        |r| format!("after the recovery procedure sequential writes run at {:.0} % of the fresh bandwidth", r * 100.0),
        q("section 5.8", "We first fill the SSDs with big sequential writes (256KB), then we repeatedly write the first 1024MB data using sequential writes of 4KB many times.")));
    out
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
    fn name(&self) -> &'static str {
        "chen09"
    }

    fn title(&self) -> &'static str {
        "Chen, Koufaty & Zhang (SIGMETRICS 2009)"
    }

    fn plan(&self, config: &serde_json::Value, device_bytes: u64) -> Result<Plan, ConfigError> {
        let cfg: PaperConfig = parse("chen09", config)?;
        Ok(papers::chen09(&cfg, device_bytes))
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
        paper_summary(self, input, findings)
    }
}
