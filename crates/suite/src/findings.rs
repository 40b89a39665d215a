//! Summaries of the paper suites: one table per experiment (named after the
//! figure it reproduces) and the findings each paper reports, measured on
//! this device, next to the paper's own numbers.

use std::collections::BTreeMap;

use flashlab_pattern::units::{format_duration_ns, format_size};
use flashlab_results::{RunSummary, Throughput};
use serde::{Deserialize, Serialize};

use crate::plan::Plan;
use crate::summary::Quote;

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

/// The columns of an experiment's table.
pub const ROW_HEADER: [&str; 8] = [
    "series",
    "parameter",
    "IOs",
    "mean",
    "p50",
    "p99",
    "IOPS",
    "MB/s",
];

/// One row of an experiment's table.
pub fn row_cells(r: &Row) -> Vec<String> {
    let param = if r.parameter.is_empty() {
        String::new()
    } else if ["IOSize", "range", "stride"].contains(&r.parameter.as_str()) {
        format!("{} {}", r.parameter, format_size(r.value as u64))
    } else {
        format!("{} {}", r.parameter, r.value)
    };
    vec![
        r.series.clone(),
        param,
        r.ios.to_string(),
        format_duration_ns(r.mean_ns.round() as u64),
        format_duration_ns(r.p50_ns),
        format_duration_ns(r.p99_ns),
        format!("{:.0}", r.iops),
        format!("{:.1}", r.mb_per_s),
    ]
}

pub use crate::summary::Finding;

/// Which response times a fraction of requests counts (bounds in ns):
/// `Above(t)` latency > t, `Below(t)` latency < t, `Within(a, b)`
/// a <= latency <= b.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Latency {
    Above(u64),
    Below(u64),
    Within(u64, u64),
}

impl Latency {
    pub fn holds(self, ns: u64) -> bool {
        match self {
            Latency::Above(t) => ns > t,
            Latency::Below(t) => ns < t,
            Latency::Within(a, b) => (a..=b).contains(&ns),
        }
    }
}

/// The fraction of one run's requests (of `mode` only, when given) whose
/// response time is `which`, counted over the run's per-IO records
/// (`records.bin`, through the one reader `RecordFile`), leaving out the
/// start-up phase and failed IOs as the run's statistics do. `None` when
/// the run, its records or any counted request is missing.
pub fn latency_fraction(
    input: &crate::suites::SummaryInput,
    experiment: &str,
    series: &str,
    mode: Option<flashlab_device::Mode>,
    which: Latency,
) -> Option<f64> {
    let file = run_records(input, experiment, series)?;
    let (mut counted, mut hits) = (0u64, 0u64);
    file.for_each(|_, rec| {
        let Some(r) = rec else { return };
        if r.is_warmup() || r.is_error() || mode.is_some_and(|m| m != r.mode) {
            return;
        }
        counted += 1;
        if which.holds(r.latency_ns()) {
            hits += 1;
        }
    })
    .ok()?;
    (counted > 0).then(|| hits as f64 / counted as f64)
}

/// The per-IO records of the run named by `experiment` and `series`.
fn run_records(
    input: &crate::suites::SummaryInput,
    experiment: &str,
    series: &str,
) -> Option<flashlab_results::records::RecordFile> {
    let results = input.results?;
    let run = input
        .plan
        .steps
        .iter()
        .flat_map(|s| s.runs())
        .find(|r| r.experiment == experiment && r.series == series)?;
    let idx = results
        .manifest()
        .runs
        .iter()
        .position(|e| e.name == run.name)?;
    results.record_file(idx).ok()
}

/// One run's throughput over time: the requests completed in each
/// `bin_ns` from the first completion on, counted over the run's per-IO
/// records (failed IOs left out, the start-up phase kept: this is the time
/// series itself), the last, partial bin dropped. Hudlet & Schall's Figure 4
/// is such a series, per second ("We did some changes to the source code of
/// IOMeter to enable per-second tracking of measurement values"). `None`
/// when the run or its records are missing.
pub fn completions_per_bin(
    input: &crate::suites::SummaryInput,
    experiment: &str,
    series: &str,
    bin_ns: u64,
) -> Option<Vec<u64>> {
    let file = run_records(input, experiment, series)?;
    let mut done = Vec::new();
    file.for_each(|_, rec| {
        if let Some(r) = rec.filter(|r| !r.is_error()) {
            done.push(r.complete_ns);
        }
    })
    .ok()?;
    let t0 = *done.iter().min()?;
    let t1 = *done.iter().max()?;
    let mut bins = vec![0u64; ((t1 - t0) / bin_ns.max(1)) as usize];
    for t in done {
        if let Some(b) = bins.get_mut(((t - t0) / bin_ns.max(1)) as usize) {
            *b += 1;
        }
    }
    Some(bins)
}

pub(crate) fn find<'a>(rows: &'a [Row], experiment: &str, series: &str) -> Option<&'a Row> {
    rows.iter()
        .find(|r| r.experiment == experiment && r.series == series)
}

pub(crate) fn find_v<'a>(
    rows: &'a [Row],
    experiment: &str,
    series: &str,
    value: f64,
) -> Option<&'a Row> {
    rows.iter().find(|r| {
        r.experiment == experiment && r.series == series && (r.value - value).abs() < 1e-9
    })
}

pub(crate) fn ratio(a: Option<f64>, b: Option<f64>) -> Option<f64> {
    match (a, b) {
        (Some(a), Some(b)) if b > 0.0 => Some(a / b),
        _ => None,
    }
}

/// "2.5x slower" or, below 1, "1.4x faster".
pub(crate) fn slower(r: f64) -> String {
    if r >= 1.0 {
        format!("{} slower", times(r))
    } else {
        format!("{} faster", times(1.0 / r))
    }
}

/// A ratio as "12.1x", "1.7x" or, below 1, with two significant digits
/// ("0.034x", "0.50x"): "0.0x" would say nothing.
pub fn times(r: f64) -> String {
    if !r.is_finite() || r >= 1.0 || r <= 0.0 {
        return format!("{r:.1}x");
    }
    let decimals = (1 - r.log10().floor() as i32).clamp(2, 12) as usize;
    format!("{r:.decimals$}x")
}

pub(crate) fn finding(
    id: &str,
    source: &str,
    what: &str,
    measured: Option<f64>,
    text: impl Fn(f64) -> String,
    paper: Option<Quote>,
) -> Finding {
    Finding {
        id: id.into(),
        source: source.into(),
        what: what.into(),
        measured,
        text: measured.map(text).unwrap_or_else(|| "not measured".into()),
        paper,
    }
}

/// The selectivity at which reading that fraction of the pages through an
/// index takes as long as scanning them all, by linear interpolation over
/// the measured selectivities; `None` when no measured point reaches it.
#[cfg(test)]
mod ratio_tests {
    use super::*;

    #[test]
    fn small_ratios_keep_two_significant_digits() {
        assert_eq!(times(0.034), "0.034x");
        assert_eq!(times(0.5), "0.50x");
        assert_eq!(times(0.0012), "0.0012x");
        assert_eq!(times(1.7), "1.7x");
        assert_eq!(times(12.1), "12.1x");
        assert_eq!(slower(0.03), "33.3x faster");
        assert_eq!(slower(1.0 / 0.03), "33.3x slower");
    }
}

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
