//! Summaries of the paper suites: one table per experiment (named after the
//! figure it reproduces) and the findings each paper reports, measured on
//! this device, next to the paper's own numbers.

use std::collections::BTreeMap;

use flashlab_pattern::units::{format_duration_ns, format_size};
use flashlab_results::{RunSummary, Throughput};
use serde::{Deserialize, Serialize};

use crate::plan::Plan;

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Row {
    pub experiment: String,
    pub series: String,
    pub parameter: String,
    pub value: f64,
    pub ios: u64,
    pub mean_ns: f64,
    pub p50_ns: u64,
    pub p99_ns: u64,
    pub iops: f64,
    pub mb_per_s: f64,
    /// For mixed runs: the same per mode.
    pub by_mode: BTreeMap<String, (f64, f64)>,
    pub window_ns: u64,
}

pub fn rows(plan: &Plan, summaries: &[RunSummary]) -> Vec<Row> {
    let by_name: BTreeMap<&str, &RunSummary> =
        summaries.iter().map(|s| (s.name.as_str(), s)).collect();
    let mut out = Vec::new();
    for step in &plan.steps {
        for r in step.runs() {
            let Some(s) = by_name.get(r.name.as_str()) else {
                continue;
            };
            let t: &Throughput = &s.stats.all;
            out.push(Row {
                experiment: r.experiment.clone(),
                series: r.series.clone(),
                parameter: r.parameter.clone(),
                value: r.value,
                ios: t.ios,
                mean_ns: t.latency.mean_ns,
                p50_ns: t.latency.p50_ns,
                p99_ns: t.latency.p99_ns,
                iops: t.iops,
                mb_per_s: t.mb_per_s,
                by_mode: s
                    .stats
                    .by_mode
                    .iter()
                    .map(|(m, t)| (m.clone(), (t.latency.mean_ns, t.mb_per_s)))
                    .collect(),
                window_ns: t.window_ns,
            });
        }
    }
    out
}

/// One Markdown table per experiment.
pub fn markdown_tables(rows: &[Row]) -> String {
    let mut s = String::new();
    let mut current = "";
    for r in rows {
        if r.experiment != current {
            current = &r.experiment;
            s += &format!("\n### {current}\n\n| series | parameter | IOs | mean | p50 | p99 | IOPS | MB/s |\n|---|---|---|---|---|---|---|---|\n");
        }
        let param = if r.parameter.is_empty() {
            String::new()
        } else if ["IOSize", "range", "stride"].contains(&r.parameter.as_str()) {
            format!("{} {}", r.parameter, format_size(r.value as u64))
        } else {
            format!("{} {}", r.parameter, r.value)
        };
        s += &format!(
            "| {} | {param} | {} | {} | {} | {} | {:.0} | {:.1} |\n",
            r.series,
            r.ios,
            format_duration_ns(r.mean_ns.round() as u64),
            format_duration_ns(r.p50_ns),
            format_duration_ns(r.p99_ns),
            r.iops,
            r.mb_per_s
        );
    }
    s
}

/// A finding of the paper, measured here.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Finding {
    /// The figure or table it comes from.
    pub source: String,
    pub what: String,
    pub measured: Option<f64>,
    pub text: String,
    pub paper: String,
}

fn find<'a>(rows: &'a [Row], experiment: &str, series: &str) -> Option<&'a Row> {
    rows.iter()
        .find(|r| r.experiment == experiment && r.series == series)
}

fn find_v<'a>(rows: &'a [Row], experiment: &str, series: &str, value: f64) -> Option<&'a Row> {
    rows.iter().find(|r| {
        r.experiment == experiment && r.series == series && (r.value - value).abs() < 1e-9
    })
}

fn ratio(a: Option<f64>, b: Option<f64>) -> Option<f64> {
    match (a, b) {
        (Some(a), Some(b)) if b > 0.0 => Some(a / b),
        _ => None,
    }
}

/// "2.5x slower" or, below 1, "1.4x faster".
fn slower(r: f64) -> String {
    if r >= 1.0 {
        format!("{r:.1}x slower")
    } else {
        format!("{:.1}x faster", 1.0 / r)
    }
}

fn finding(
    source: &str,
    what: &str,
    measured: Option<f64>,
    text: impl Fn(f64) -> String,
    paper: &str,
) -> Finding {
    Finding {
        source: source.into(),
        what: what.into(),
        measured,
        text: measured.map(text).unwrap_or_else(|| "not measured".into()),
        paper: paper.into(),
    }
}

pub fn chen09(rows: &[Row]) -> Vec<Finding> {
    let mean = |e: &str, s: &str| find(rows, e, s).map(|r| r.mean_ns);
    let mbs = |e: &str, s: &str| find(rows, e, s).map(|r| r.mb_per_s);
    let read_mean = |e: &str, s: &str| {
        find(rows, e, s).and_then(|r| r.by_mode.get("read").map(|m| m.0).or(Some(r.mean_ns)))
    };
    let mut out = vec![
        finding("Figure 2", "random / sequential 4 KiB read latency", ratio(mean("fig2", "random"), mean("fig2", "sequential")),
            |r| format!("random reads are {} than sequential ones", slower(r)),
            "SSD-M/H: sequential 75-90 us vs random 200-230 us (about 2.6x, read-ahead); SSD-L uniform"),
        finding("Figure 3", "random / sequential 4 KiB write latency", ratio(mean("fig3", "random"), mean("fig3", "sequential")),
            |r| format!("random writes are {} than sequential ones", slower(r)),
            "SSD-L: 88 % of sequential writes 140-160 us, over 90 % of random ones above 1.4 ms; SSD-M/H uniform"),
        finding("Figure 5", "sequential write latency, cache off / on", ratio(mean("fig5-cache-off", "sequential"), mean("fig3", "sequential")),
            |r| format!("without the write cache sequential writes are {}", slower(r)),
            "SSD-M/H: writes become much slower without the disk cache"),
        finding("Figure 6", "reads interleaved with writes to the next page / reads alone", ratio(read_mean("fig6", "read-n-write-n+1"), mean("fig6", "only-read")),
            |r| format!("with interleaved writes reads are {}", slower(r)),
            "SSD-M/H: about 220 us instead of 75 us: read-ahead broken"),
        finding("Figure 7", "reads among writes, without / with a 10 ms interval", ratio(read_mean("fig7", "seq-50pct-write"), read_mean("fig7", "seq-50pct-write-10ms")),
            |r| format!("without idle time between requests reads are {}", slower(r)),
            "SSD-M: reads under 300 us rise from 78 % to 95 % with a 10 ms interval"),
    ];
    let fig8: Vec<&Row> = rows.iter().filter(|r| r.experiment == "fig8a").collect();
    if fig8.len() >= 2 {
        let (a, b) = (fig8[0], fig8[fig8.len() - 1]);
        out.push(finding(
            "Figure 8",
            "random-write latency, largest / smallest range",
            Some(b.mean_ns / a.mean_ns),
            |r| {
                format!(
                    "random writes over {} are {} than over {}",
                    format_size(b.value as u64),
                    slower(r),
                    format_size(a.value as u64)
                )
            },
            "SSD-L: 2.17 ms over 1 GB to 120.7 ms over 30 GB (55x); SSD-M/H flat",
        ));
    }
    out.push(finding(
        "Figure 9",
        "sequential-write bandwidth, before / after striker",
        ratio(
            mbs("fig9", "SEQ-WR-before"),
            mbs("fig9", "SEQ-WR-fragmented"),
        ),
        |r| format!("fragmentation cuts sequential-write bandwidth {r:.1}x"),
        "SSD-M: 42.7 MB/s to 3.02 MB/s (14x); SSD-H: 40.3 MB/s after",
    ));
    out.push(finding(
        "Figure 9",
        "sequential-read bandwidth, before / after striker",
        ratio(
            mbs("fig9", "SEQ-RD-before"),
            mbs("fig9", "SEQ-RD-fragmented"),
        ),
        |r| format!("fragmentation cuts sequential-read bandwidth {r:.1}x"),
        "SSD-M: 43 MB/s to 15 MB/s (2.8x): read-ahead ineffective",
    ));
    out.push(finding("Figure 9", "sequential-write bandwidth, recovered / before", ratio(mbs("fig9", "SEQ-WR-recovered"), mbs("fig9", "SEQ-WR-before")),
        |r| format!("after the recovery procedure sequential writes run at {:.0} % of the fresh bandwidth", r * 100.0),
        "big sequential writes, then repeated small sequential writes to the first GiB, restore performance"));
    out
}

pub fn wang11(rows: &[Row]) -> Vec<Finding> {
    let iops = |fig: &str, series: &str, size: f64| find_v(rows, fig, series, size).map(|r| r.iops);
    let k4 = 4096.0;
    let max_mbs = |series: &str| {
        rows.iter()
            .filter(|r| r.experiment == "fig1" && r.series == series)
            .map(|r| r.mb_per_s)
            .fold(None, |m: Option<f64>, v| Some(m.map_or(v, |m| m.max(v))))
    };
    vec![
        finding("Figure 1", "best sequential read bandwidth (MB/s)", max_mbs("sequential-read"), |v| format!("sequential reads reach {v:.0} MB/s"), "Mtron 120 MB/s, Intel 250 MB/s"),
        finding("Figure 1", "best sequential write bandwidth (MB/s)", max_mbs("sequential-write"), |v| format!("sequential writes reach {v:.0} MB/s"), "Mtron 120 MB/s, Intel 170 MB/s"),
        finding("Figure 2", "bathtub: 50/50 mix / write throughput, 4 KiB, 1 outstanding", ratio(iops("fig2", "random-mix50", k4), iops("fig2", "random-write", k4)),
            |r| format!("the 50/50 mix runs at {r:.1}x the write throughput"),
            "Mtron and OCZ: the mix is close to the write throughput, far below reads (the bathtub effect)"),
        finding("Figure 2", "50/50 mix / read throughput, 4 KiB, 1 outstanding", ratio(iops("fig2", "random-mix50", k4), iops("fig2", "random-read", k4)),
            |r| format!("the 50/50 mix runs at {:.0} % of the read throughput", r * 100.0), "far below reads"),
        finding("Figure 3", "random reads: 30 / 1 outstanding IOs", ratio(iops("fig3", "random-read", k4), iops("fig2", "random-read", k4)),
            |r| format!("30 outstanding IOs give {r:.1}x the random-read throughput"), "Intel and OCZ improve clearly; Mtron does not"),
        finding("Figure 3", "random writes: 30 / 1 outstanding IOs", ratio(iops("fig3", "random-write", k4), iops("fig2", "random-write", k4)),
            |r| format!("30 outstanding IOs give {r:.1}x the random-write throughput"), "no significant improvement on any SSD"),
    ]
}

/// The selectivity at which reading that fraction of the pages through an
/// index takes as long as scanning them all, by linear interpolation over
/// the measured selectivities; `None` when no measured point reaches it.
pub fn break_even(scan_ns: f64, points: &[(f64, f64)]) -> Option<f64> {
    let mut prev: Option<(f64, f64)> = None;
    for &(s, t) in points {
        if t >= scan_ns {
            return Some(match prev {
                Some((s0, t0)) if t > t0 => s0 + (s - s0) * (scan_ns - t0) / (t - t0),
                _ => s,
            });
        }
        prev = Some((s, t));
    }
    None
}

pub fn hudlet11(rows: &[Row]) -> Vec<Finding> {
    let scan = find(rows, "break-even", "scan").map(|r| r.window_ns as f64);
    let curve = |series: &str| -> Vec<(f64, f64)> {
        rows.iter()
            .filter(|r| r.experiment == "break-even" && r.series == series)
            .map(|r| (r.value, r.window_ns as f64))
            .collect()
    };
    let be = |series: &str| scan.and_then(|s| break_even(s, &curve(series)));
    let qd = |q: f64| find_v(rows, "queue-depth", "random-once-read", q).map(|r| r.iops);
    let empty_full = ratio(
        find_v(rows, "pagesize-full", "random-once-write", 4096.0).map(|r| r.mean_ns),
        find_v(rows, "pagesize-empty", "random-once-write", 4096.0).map(|r| r.mean_ns),
    );
    let pct = |v: f64| format!("{:.0} %", v * 100.0);
    vec![
        finding(
            "Section 6",
            "index-vs-scan break-even selectivity (skip-sequential index access)",
            be("skip-sequential"),
            |v| {
                format!(
                    "an index (sorted page accesses) beats a full scan below {} selectivity",
                    pct(v)
                )
            },
            "SSD1/SSD2 about 90 %, SSD3/SSD4 about 50 %, SSD5 about 75 %; hard disks 1-3 %",
        ),
        finding(
            "Section 6",
            "index-vs-scan break-even selectivity (unsorted random accesses)",
            be("random-once"),
            |v| {
                format!(
                    "unsorted index access beats a full scan below {} selectivity",
                    pct(v)
                )
            },
            "(not in the paper: the unsorted variant)",
        ),
        finding(
            "Figure 6",
            "random-read throughput, QD2 / QD1",
            ratio(qd(2.0), qd(1.0)),
            |r| format!("queue depth 2 gives {r:.1}x QD1"),
            "the only significant improvement is from QD1 to QD2",
        ),
        finding(
            "Figure 6",
            "random-read throughput, QD32 / QD2",
            ratio(qd(32.0), qd(2.0)),
            |r| format!("queue depth 32 gives {r:.1}x QD2"),
            "beyond QD2 no improvement",
        ),
        finding(
            "Section 5",
            "4 KiB random-write latency, full / empty drive",
            empty_full,
            |r| format!("random writes are {} on a full drive", slower(r)),
            "write performance degrades on a full drive",
        ),
    ]
}

pub fn findings_markdown(findings: &[Finding]) -> String {
    let mut s = String::from("| source | finding | measured here | paper |\n|---|---|---|---|\n");
    for f in findings {
        s += &format!("| {} | {} | {} | {} |\n", f.source, f.what, f.text, f.paper);
    }
    s
}

#[cfg(test)]
mod tests {
    use super::break_even;

    #[test]
    fn break_even_interpolates() {
        let pts = [(0.1, 10.0), (0.5, 50.0), (0.9, 90.0)];
        assert!((break_even(70.0, &pts).unwrap() - 0.7).abs() < 1e-9);
        assert_eq!(break_even(5.0, &pts), Some(0.1));
        assert_eq!(break_even(100.0, &pts), None);
    }
}
