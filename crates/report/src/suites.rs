//! Analyses of suite results (`flashlab suite uflip|chen09|wang11|hudlet11`):
//! the uFLIP Table-3 row and design hints, one chart per micro-benchmark,
//! the calibration runs' phases, the paper suites' findings and one chart per
//! paper figure; and, given several devices, the same side by side.
//!
//! Only saved results are read: `manifest.json` (`suite.name`), the plan
//! (`plan.json`: which run belongs to which experiment, series and
//! parameter value), the journal (`suite.json`: calibration) and the
//! summary the suite wrote at its end (`uflip-summary.json` with `table3`
//! and `hints`, `<suite>-summary.json` with `findings`). The charts'
//! statistics come from the report's own runs, recomputed from every record,
//! so they are right even for a suite that was interrupted.
//!
//! Every chart's title names the paper figure it reproduces.

use std::collections::BTreeMap;
use std::path::Path;

use serde_json::Value;

use crate::charts::{self, HALF, WIDE};
use crate::model::{Analysis, DeviceReport, RunReport, Section, Table};
use crate::scan::CdfPoint;
use crate::svg::{Axis, Chart, Marker, Scale, Series, Shape, Unit};
use crate::text;

/// The built-in analysis of suite results; does nothing for other directories.
pub struct SuiteAnalysis;

/// uFLIP's nine micro-benchmarks (Table 1): name, parameter, how x is drawn.
const UFLIP_BENCHMARKS: [(&str, &str, &str, XKind); 9] = [
    ("granularity", "Granularity", "IOSize", XKind::LogBytes),
    ("alignment", "Alignment", "IOShift", XKind::CatBytes),
    ("locality", "Locality", "TargetSize", XKind::LogBytes),
    ("partitioning", "Partitioning", "Partitions", XKind::Log),
    ("order", "Order", "Incr", XKind::Cat),
    ("parallelism", "Parallelism", "ParallelDegree", XKind::Log),
    ("mix", "Mix", "Ratio", XKind::Log),
    ("pause", "Pause", "Pause_ms", XKind::Log),
    ("bursts", "Bursts", "Burst", XKind::Log),
];

#[derive(Clone, Copy, Debug, PartialEq)]
enum XKind {
    /// Log scale, bytes, ticks at the measured values (powers of two).
    LogBytes,
    /// Log scale, plain numbers, ticks at the measured values.
    Log,
    /// Linear fraction 0..1.
    Fraction,
    /// Categories named by the value in bytes (IOShift 0, 512B...).
    CatBytes,
    /// Categories named by the value (Incr -1, 0, 1...).
    Cat,
    /// Categories named by the runs' series (one run each).
    BySeries,
    /// Categories given by the figure (Chen Figure 9: before, after, recovered).
    Named,
}

#[derive(Clone, Copy, Debug, PartialEq)]
enum Metric {
    /// Mean response time, with the p10-p90 band, log y.
    Latency,
    /// MB/s, linear y from 0.
    Bandwidth,
    /// IOs per second, linear y from 0.
    Iops,
    /// The run's whole duration (first submission to last completion).
    Duration,
}

/// One run of the plan, as the report needs it.
#[derive(Clone, Debug)]
struct PlanRun {
    name: String,
    experiment: String,
    series: String,
    parameter: String,
    value: f64,
}

/// What a suite's results directory holds beyond the runs.
struct SuiteData {
    name: String,
    runs: Vec<PlanRun>,
    /// `uflip-summary.json` or `<suite>-summary.json`, when the suite finished.
    summary: Option<Value>,
    journal: Option<Value>,
    notes: Vec<String>,
}

fn read_json(path: &Path) -> Result<Option<Value>, String> {
    match std::fs::read_to_string(path) {
        Err(_) => Ok(None),
        Ok(t) => serde_json::from_str(&t)
            .map(Some)
            .map_err(|e| format!("{}: not valid JSON ({e})", path.display())),
    }
}

impl SuiteData {
    /// `None` when the directory was not written by `flashlab suite`.
    fn load(dir: &Path) -> Option<SuiteData> {
        let manifest = read_json(&dir.join("manifest.json")).ok()??;
        let mut notes = Vec::new();
        let plan = match read_json(&dir.join("plan.json")) {
            Ok(p) => p,
            Err(e) => {
                notes.push(format!("{e}: the suite's charts are left out"));
                None
            }
        };
        let journal = read_json(&dir.join("suite.json")).unwrap_or_else(|e| {
            notes.push(e);
            None
        });
        let name = manifest
            .pointer("/suite/name")
            .and_then(Value::as_str)
            .or_else(|| plan.as_ref()?.get("suite")?.as_str())
            .or_else(|| journal.as_ref()?.get("suite")?.as_str())?
            .to_string();
        let steps = plan
            .as_ref()
            .and_then(|p| p.get("steps"))
            .or_else(|| journal.as_ref()?.pointer("/plan/steps"))
            .and_then(Value::as_array)
            .cloned()
            .unwrap_or_default();
        let mut runs = Vec::new();
        for s in &steps {
            let parts: Vec<&Value> = match s.get("kind").and_then(Value::as_str) {
                Some("run") => vec![s],
                Some("calibrate") => s.get("run").into_iter().collect(),
                Some("measure-pause") => ["before", "writes", "after"]
                    .iter()
                    .filter_map(|k| s.get(*k))
                    .collect(),
                _ => vec![],
            };
            for r in parts {
                let field = |k: &str| r.get(k).and_then(Value::as_str).unwrap_or("").to_string();
                if field("name").is_empty() {
                    continue;
                }
                runs.push(PlanRun {
                    name: field("name"),
                    experiment: field("experiment"),
                    series: field("series"),
                    parameter: field("parameter"),
                    value: r.get("value").and_then(Value::as_f64).unwrap_or(0.0),
                });
            }
        }
        if plan.is_some() && runs.is_empty() {
            notes.push("plan.json lists no runs: the suite's charts are left out".into());
        }
        let summary_name = if name == "uflip" {
            "uflip-summary.json".to_string()
        } else {
            format!("{name}-summary.json")
        };
        let summary = read_json(&dir.join(&summary_name)).unwrap_or_else(|e| {
            notes.push(e);
            None
        });
        if summary.is_none() {
            notes.push(format!(
                "{summary_name} is missing: the suite has not finished (it writes its summary at the end); `flashlab suite {name} --resume {}` completes it",
                dir.display()
            ));
        }
        Some(SuiteData {
            name,
            runs,
            summary,
            journal,
            notes,
        })
    }

    /// The plan's runs of one experiment, in plan order.
    fn experiment(&self, e: &str) -> Vec<&PlanRun> {
        self.runs.iter().filter(|r| r.experiment == e).collect()
    }

    /// Experiments in plan order.
    fn experiments(&self) -> Vec<&str> {
        let mut out: Vec<&str> = Vec::new();
        for r in &self.runs {
            if !out.contains(&r.experiment.as_str()) {
                out.push(&r.experiment);
            }
        }
        out
    }
}

// ---------------------------------------------------------------------------
// Figures: the data of one chart, independent of the device, so that the
// same figure of several devices can be overlaid.

#[derive(Clone, Debug)]
struct Pt {
    x: f64,
    /// The category, on categorical axes.
    cat: Option<String>,
    y: f64,
    band: Option<(f64, f64)>,
}

#[derive(Clone, Debug)]
enum Data {
    Points(Vec<Pt>),
    Cdf(Vec<CdfPoint>),
}

#[derive(Clone, Debug)]
struct Curve {
    label: String,
    /// Palette index when the curve has a colour of its own (uFLIP's
    /// baselines keep theirs across charts); else by position.
    color: Option<usize>,
    data: Data,
    /// Reference lines (the full scan) are drawn without dots or band.
    reference: bool,
}

#[derive(Clone, Debug)]
struct Fig {
    /// Stable across devices: figures with the same id are overlaid.
    id: String,
    title: String,
    x_label: String,
    x: XKind,
    metric: Metric,
    cdf: bool,
    curves: Vec<Curve>,
    /// Vertical markers (value, label): the break-even selectivity.
    markers: Vec<(f64, String)>,
    wide: bool,
}

fn quantile(cdf: &[CdfPoint], f: f64) -> Option<f64> {
    cdf.iter()
        .find(|p| p.1 >= f - 1e-12)
        .or(cdf.last())
        .map(|p| p.0 as f64)
}

fn metric_of(run: &RunReport, m: Metric) -> Option<(f64, Option<(f64, f64)>)> {
    let t = &run.stats.all;
    if t.ios == 0 {
        return None;
    }
    Some(match m {
        Metric::Latency => (
            t.latency.mean_ns,
            quantile(&run.cdf, 0.10).zip(quantile(&run.cdf, 0.90)),
        ),
        Metric::Bandwidth => (t.mb_per_s, None),
        Metric::Iops => (t.iops, None),
        Metric::Duration => (t.window_ns as f64, None),
    })
}

fn value_label(kind: XKind, v: f64) -> String {
    match kind {
        XKind::CatBytes | XKind::LogBytes => text::bytes_approx(v.max(0.0) as u64),
        _ => crate::svg::fmt_value(v, Unit::Number),
    }
}

/// Curves of one experiment: one per series, x the parameter value.
fn series_curves(
    runs: &[&PlanRun],
    by_name: &BTreeMap<&str, &RunReport>,
    x: XKind,
    metric: Metric,
) -> Vec<Curve> {
    let mut curves: Vec<Curve> = Vec::new();
    for r in runs {
        let Some((y, band)) = by_name
            .get(r.name.as_str())
            .and_then(|run| metric_of(run, metric))
        else {
            continue;
        };
        let cat = matches!(x, XKind::Cat | XKind::CatBytes).then(|| value_label(x, r.value));
        let pt = Pt {
            x: r.value,
            cat,
            y,
            band,
        };
        match curves.iter_mut().find(|c| c.label == r.series) {
            Some(Curve {
                data: Data::Points(p),
                ..
            }) => p.push(pt),
            _ => curves.push(Curve {
                label: r.series.clone(),
                color: None,
                data: Data::Points(vec![pt]),
                reference: false,
            }),
        }
    }
    for c in &mut curves {
        if let Data::Points(p) = &mut c.data {
            if !matches!(x, XKind::Cat | XKind::CatBytes) {
                p.sort_by(|a, b| a.x.total_cmp(&b.x));
            }
        }
    }
    curves
}

fn cdf_curves(runs: &[&PlanRun], by_name: &BTreeMap<&str, &RunReport>) -> Vec<Curve> {
    runs.iter()
        .filter_map(|r| {
            let run = by_name.get(r.name.as_str())?;
            (!run.cdf.is_empty()).then(|| Curve {
                label: r.series.clone(),
                color: None,
                data: Data::Cdf(run.cdf.clone()),
                reference: false,
            })
        })
        .collect()
}

fn fig(
    id: &str,
    title: String,
    x_label: &str,
    x: XKind,
    metric: Metric,
    curves: Vec<Curve>,
) -> Fig {
    Fig {
        id: id.to_string(),
        title,
        x_label: x_label.to_string(),
        x,
        metric,
        cdf: false,
        curves,
        markers: Vec::new(),
        wide: false,
    }
}

fn cdf_fig(id: &str, title: String, curves: Vec<Curve>) -> Fig {
    Fig {
        cdf: true,
        ..fig(id, title, "", XKind::Log, Metric::Latency, curves)
    }
}

fn uflip_figs(s: &SuiteData, by_name: &BTreeMap<&str, &RunReport>) -> Vec<Fig> {
    let mut out = Vec::new();
    for (i, (bench, title, param, x)) in UFLIP_BENCHMARKS.iter().enumerate() {
        let runs = s.experiment(bench);
        if runs.is_empty() {
            continue;
        }
        let x_label = match *param {
            "Pause_ms" => "Pause (ms)".to_string(),
            "Ratio" => "Ratio (pattern #1 IOs per pattern #2 IO)".to_string(),
            p => p.to_string(),
        };
        let mut curves = series_curves(&runs, by_name, *x, Metric::Latency);
        // SR, RR, SW, RW in this order and colour in every chart.
        const ORDER: [&str; 4] = ["SR", "RR", "SW", "RW"];
        curves.sort_by_key(|c| ORDER.iter().position(|b| *b == c.label).unwrap_or(4));
        for c in &mut curves {
            c.color = ORDER.iter().position(|b| *b == c.label);
        }
        out.push(fig(
            bench,
            format!(
                "uFLIP micro-benchmark {} ({title}): mean response time by {param}, per baseline pattern (as uFLIP Figures 6-8; band: p10-p90)",
                i + 1
            ),
            &x_label,
            *x,
            Metric::Latency,
            curves,
        ));
    }
    out
}

/// Chen Figure 9: the four patterns before fragmentation, after, recovered.
fn chen_fig9(s: &SuiteData, by_name: &BTreeMap<&str, &RunReport>) -> Option<Fig> {
    const PHASES: [&str; 3] = ["before", "fragmented", "recovered"];
    let mut curves: Vec<Curve> = Vec::new();
    for r in s.experiment("fig9") {
        let Some((pattern, phase)) = r.series.rsplit_once('-') else {
            continue;
        };
        let Some(pos) = PHASES.iter().position(|p| *p == phase) else {
            continue;
        };
        let Some((y, _)) = by_name
            .get(r.name.as_str())
            .and_then(|run| metric_of(run, Metric::Bandwidth))
        else {
            continue;
        };
        let pt = Pt {
            x: pos as f64,
            cat: Some(phase.to_string()),
            y,
            band: None,
        };
        match curves.iter_mut().find(|c| c.label == pattern) {
            Some(Curve {
                data: Data::Points(p),
                ..
            }) => p.push(pt),
            _ => curves.push(Curve {
                label: pattern.to_string(),
                color: None,
                data: Data::Points(vec![pt]),
                reference: false,
            }),
        }
    }
    (!curves.is_empty()).then(|| {
        fig(
            "fig9",
            "Chen et al. Figure 9: bandwidth of 4 KiB patterns before fragmentation, after the striker, and after recovery".into(),
            "device state",
            XKind::Named,
            Metric::Bandwidth,
            curves,
        )
    })
}

/// Hudlet & Schall section 6: index access vs full scan, break-even marked.
fn hudlet_break_even(s: &SuiteData, by_name: &BTreeMap<&str, &RunReport>) -> Option<Fig> {
    let runs = s.experiment("break-even");
    let scan = runs
        .iter()
        .find(|r| r.series == "scan")
        .and_then(|r| by_name.get(r.name.as_str()))
        .and_then(|run| metric_of(run, Metric::Duration))
        .map(|m| m.0);
    let index: Vec<&PlanRun> = runs
        .iter()
        .copied()
        .filter(|r| r.series != "scan")
        .collect();
    let mut curves = series_curves(&index, by_name, XKind::Fraction, Metric::Duration);
    if curves.is_empty() {
        return None;
    }
    let mut markers = Vec::new();
    if let Some(scan) = scan {
        for c in &curves {
            if let Data::Points(p) = &c.data {
                let pts: Vec<(f64, f64)> = p.iter().map(|q| (q.x, q.y)).collect();
                if let Some(be) = break_even(scan, &pts) {
                    markers.push((be, format!("{} break-even {:.0} %", c.label, be * 100.0)));
                }
            }
        }
        curves.push(Curve {
            label: "full scan".into(),
            color: Some(7),
            data: Data::Points(
                [0.0, 1.0]
                    .iter()
                    .map(|&x| Pt {
                        x,
                        cat: None,
                        y: scan,
                        band: None,
                    })
                    .collect(),
            ),
            reference: true,
        });
    }
    let mut f = fig(
        "break-even",
        "Hudlet & Schall section 6: index access (skip-sequential, random-once) vs a full scan by selectivity, break-even marked".into(),
        "selectivity (fraction of the pages read)",
        XKind::Fraction,
        Metric::Duration,
        curves,
    );
    f.markers = markers;
    f.wide = true;
    Some(f)
}

/// The selectivity at which index access takes as long as the scan (linear
/// interpolation, as `flashlab_suite::findings::break_even`).
fn break_even(scan: f64, points: &[(f64, f64)]) -> Option<f64> {
    let mut prev: Option<(f64, f64)> = None;
    for &(s, t) in points {
        if t >= scan {
            return Some(match prev {
                Some((s0, t0)) if t > t0 => s0 + (s - s0) * (scan - t0) / (t - t0),
                _ => s,
            });
        }
        prev = Some((s, t));
    }
    None
}

fn paper_figs(s: &SuiteData, by_name: &BTreeMap<&str, &RunReport>) -> Vec<Fig> {
    let mut out = Vec::new();
    for e in s.experiments() {
        let runs = s.experiment(e);
        let by_series = |title: &str, metric: Metric| {
            let mut curve = Curve {
                label: match metric {
                    Metric::Bandwidth => "MB/s".into(),
                    _ => "mean response time".into(),
                },
                color: None,
                data: Data::Points(Vec::new()),
                reference: false,
            };
            if let Data::Points(p) = &mut curve.data {
                for (i, r) in runs.iter().enumerate() {
                    if let Some((y, band)) = by_name
                        .get(r.name.as_str())
                        .and_then(|run| metric_of(run, metric))
                    {
                        p.push(Pt {
                            x: i as f64,
                            cat: Some(r.series.clone()),
                            y,
                            band,
                        });
                    }
                }
            }
            fig(
                e,
                title.to_string(),
                "pattern",
                XKind::BySeries,
                metric,
                vec![curve],
            )
        };
        let line = |title: String, x_label: &str, x: XKind, metric: Metric| {
            fig(
                e,
                title,
                x_label,
                x,
                metric,
                series_curves(&runs, by_name, x, metric),
            )
        };
        let cdf = |title: String| cdf_fig(e, title, cdf_curves(&runs, by_name));
        let f = match (s.name.as_str(), e) {
            ("chen09", "fig1") => vec![by_series(
                "Chen et al. Figure 1: throughput of the general tests (4 KiB random, 256 KiB sequential; 32 jobs)",
                Metric::Bandwidth,
            )],
            ("chen09", "fig2") => vec![cdf("Chen et al. Figure 2: response-time CDFs of 4 KiB reads: sequential, random, stride".into())],
            ("chen09", "fig3") => vec![cdf("Chen et al. Figure 3: response-time CDFs of 4 KiB writes: sequential, random, stride".into())],
            ("chen09", "fig5-cache-off") => vec![cdf("Chen et al. Figure 5: response-time CDFs of 4 KiB writes with the write cache off".into())],
            ("chen09", "fig6") => {
                let (plain, paused): (Vec<&PlanRun>, Vec<&PlanRun>) =
                    runs.iter().partition(|r| !r.series.ends_with("-10ms"));
                vec![
                    cdf_fig("fig6", "Chen et al. Figure 6: response-time CDFs of interleaved reads and writes, back to back".into(), cdf_curves(&plain, by_name)),
                    cdf_fig("fig6-10ms", "Chen et al. Figure 6: response-time CDFs of interleaved reads and writes, 10 ms apart".into(), cdf_curves(&paused, by_name)),
                ]
            }
            ("chen09", "fig7") => vec![cdf("Chen et al. Figure 7: response-time CDFs of sequential reads among writes, without and with a 10 ms interval".into())],
            ("chen09", "fig8a") => vec![line("Chen et al. Figure 8(a): mean random-write response time by range (band: p10-p90)".into(), "range written", XKind::LogBytes, Metric::Latency)],
            ("chen09", "fig8b") => vec![line("Chen et al. Figure 8(b): mean stride-write response time by stride (band: p10-p90)".into(), "stride", XKind::LogBytes, Metric::Latency)],
            ("chen09", "fig9") => chen_fig9(s, by_name).into_iter().collect(),
            ("wang11", "fig1") => vec![line("Wang et al. Figure 1: sequential throughput by request size".into(), "request size", XKind::LogBytes, Metric::Bandwidth)],
            ("wang11", "fig2") => {
                let four: Vec<&PlanRun> = runs.iter().copied().filter(|r| r.value == 4096.0).collect();
                vec![
                    line("Wang et al. Figure 2: random throughput by request size, 1 outstanding IO (the bathtub effect)".into(), "request size", XKind::LogBytes, Metric::Bandwidth),
                    cdf_fig("fig4", "Wang et al. Figure 4: response-time CDFs of 4 KiB random reads, writes and a 50/50 mix (1 outstanding IO)".into(), cdf_curves(&four, by_name)),
                ]
            }
            ("wang11", "fig3") => vec![line("Wang et al. Figure 3: random throughput by request size, 30 outstanding IOs".into(), "request size", XKind::LogBytes, Metric::Bandwidth)],
            ("hudlet11", "setup") => vec![],
            ("hudlet11", "pagesize-empty") => vec![line("Hudlet & Schall section 5: throughput by page size on an empty drive".into(), "page size", XKind::LogBytes, Metric::Bandwidth)],
            ("hudlet11", "pagesize-full") => vec![line("Hudlet & Schall section 5: throughput by page size on a full drive".into(), "page size", XKind::LogBytes, Metric::Bandwidth)],
            ("hudlet11", "queue-depth") => vec![line("Hudlet & Schall Figure 6: random-read throughput by queue depth".into(), "queue depth", XKind::Log, Metric::Iops)],
            ("hudlet11", "break-even") => hudlet_break_even(s, by_name).into_iter().collect(),
            _ => generic(s, e, &runs, by_name),
        };
        out.extend(f);
    }
    out
}

/// An experiment no figure is known for: mean response time by its
/// parameter when it varies one, else the CDFs of its series.
fn generic(
    s: &SuiteData,
    e: &str,
    runs: &[&PlanRun],
    by_name: &BTreeMap<&str, &RunReport>,
) -> Vec<Fig> {
    let param = runs.first().map(|r| r.parameter.as_str()).unwrap_or("");
    let mut values: Vec<f64> = runs.iter().map(|r| r.value).collect();
    values.sort_by(f64::total_cmp);
    values.dedup();
    let title = format!("{} experiment {e}", s.name);
    if !param.is_empty() && values.len() >= 2 {
        let bytes = [
            "IOSize",
            "TargetSize",
            "IOShift",
            "range",
            "stride",
            "size",
            "chunk",
        ]
        .iter()
        .any(|p| param.to_ascii_lowercase().contains(&p.to_ascii_lowercase()));
        let x = match (bytes, values[0] > 0.0) {
            (true, true) => XKind::LogBytes,
            (false, true) => XKind::Log,
            (true, false) => XKind::CatBytes,
            (false, false) => XKind::Cat,
        };
        return vec![fig(
            e,
            format!("{title}: mean response time by {param} (band: p10-p90)"),
            param,
            x,
            Metric::Latency,
            series_curves(runs, by_name, x, Metric::Latency),
        )];
    }
    let curves = cdf_curves(runs, by_name);
    if curves.len() >= 2 && curves.len() <= 12 {
        return vec![cdf_fig(
            e,
            format!("{title}: response-time CDFs of its runs"),
            curves,
        )];
    }
    Vec::new()
}

// ---------------------------------------------------------------------------
// Drawing figures.

/// One drawn curve: the figure's curve of one device.
struct Drawn<'a> {
    label: String,
    color: usize,
    curve: &'a Curve,
}

fn y_axis(m: Metric) -> Axis {
    match m {
        Metric::Latency => Axis::new("mean response time (log)", Scale::Log, Unit::Nanos),
        Metric::Bandwidth => Axis::new("throughput (MB/s)", Scale::Linear, Unit::Number),
        Metric::Iops => Axis::new("IOs per second", Scale::Linear, Unit::Count),
        Metric::Duration => Axis::new("time to read the pages", Scale::Linear, Unit::Nanos),
    }
}

fn draw(f: &Fig, id: &str, title: &str, curves: &[Drawn], markers: &[(f64, String)]) -> Chart {
    let size = if f.wide { WIDE } else { HALF };
    if f.cdf {
        let c: Vec<(String, usize, &[CdfPoint])> = curves
            .iter()
            .filter_map(|d| match &d.curve.data {
                Data::Cdf(p) => Some((d.label.clone(), d.color, p.as_slice())),
                Data::Points(_) => None,
            })
            .collect();
        return charts::cdf(id, title, &c, size);
    }
    // Categories in order of first appearance over every curve.
    let mut cats: Vec<String> = Vec::new();
    let mut xs: Vec<f64> = Vec::new();
    for d in curves {
        if let Data::Points(p) = &d.curve.data {
            for q in p {
                if let Some(c) = &q.cat {
                    if !cats.contains(c) {
                        cats.push(c.clone());
                    }
                }
                if !d.curve.reference && !xs.contains(&q.x) {
                    xs.push(q.x);
                }
            }
        }
    }
    if f.x == XKind::Named {
        // Chen Figure 9: phases in their order, whatever appeared first.
        cats.sort_by_key(|c| {
            ["before", "fragmented", "recovered"]
                .iter()
                .position(|p| p == c)
                .unwrap_or(9)
        });
    }
    xs.sort_by(f64::total_cmp);
    let categorical = matches!(
        f.x,
        XKind::Cat | XKind::CatBytes | XKind::BySeries | XKind::Named
    );
    let xpos = |q: &Pt| -> f64 {
        match (&q.cat, categorical) {
            (Some(c), true) => cats.iter().position(|x| x == c).unwrap_or(0) as f64,
            _ => q.x,
        }
    };
    let series = curves
        .iter()
        .filter_map(|d| {
            let Data::Points(p) = &d.curve.data else {
                return None;
            };
            let line: Vec<[f64; 2]> = p.iter().map(|q| [xpos(q), q.y]).collect();
            let band: Vec<[f64; 3]> = p
                .iter()
                .filter_map(|q| q.band.map(|(lo, hi)| [xpos(q), lo, hi]))
                .collect();
            let mut shapes = Vec::new();
            if !band.is_empty() && !d.curve.reference {
                shapes.push(Shape::Band(band));
            }
            if line.len() > 1 {
                shapes.push(Shape::Line(line.clone()));
            }
            if !d.curve.reference {
                shapes.push(Shape::Points(line));
            }
            Some(Series {
                label: d.label.clone(),
                color: d.color,
                shapes,
            })
        })
        .collect();
    let x = if categorical {
        Axis::categorical(&f.x_label, cats)
    } else {
        match f.x {
            XKind::LogBytes => {
                Axis::new(&format!("{} (log)", f.x_label), Scale::Log, Unit::Bytes).with_ticks(xs)
            }
            XKind::Fraction => {
                Axis::new(&f.x_label, Scale::Linear, Unit::Fraction).with_range(0.0, 1.0)
            }
            _ => {
                Axis::new(&format!("{} (log)", f.x_label), Scale::Log, Unit::Number).with_ticks(xs)
            }
        }
    };
    Chart {
        id: id.to_string(),
        title: title.to_string(),
        x,
        y: y_axis(f.metric),
        series,
        spans: Vec::new(),
        markers: markers
            .iter()
            .map(|(x, l)| Marker {
                x: *x,
                label: Some(l.clone()),
            })
            .collect(),
        width: size.0,
        height: size.1,
    }
}

/// A figure of one device: a colour per curve.
fn draw_device(f: &Fig) -> Option<Chart> {
    let drawn: Vec<Drawn> = f
        .curves
        .iter()
        .enumerate()
        .map(|(i, c)| Drawn {
            label: c.label.clone(),
            color: c.color.unwrap_or(i),
            curve: c,
        })
        .collect();
    let chart = draw(f, &f.id, &f.title, &drawn, &f.markers);
    chart.has_data().then_some(chart)
}

/// The same figure of several devices: one chart per curve name (or one
/// chart when the figure has a single curve), a colour per device.
fn draw_compare(figs: &[(&DeviceReport, &Fig)]) -> Vec<Chart> {
    let Some((_, first)) = figs.first() else {
        return Vec::new();
    };
    let mut names: Vec<&str> = Vec::new();
    for (_, f) in figs {
        for c in &f.curves {
            if !c.reference && !names.contains(&c.label.as_str()) {
                names.push(&c.label);
            }
        }
    }
    let single = figs
        .iter()
        .all(|(_, f)| f.curves.iter().filter(|c| !c.reference).count() <= 1);
    let mut out = Vec::new();
    for name in &names {
        let mut drawn = Vec::new();
        let mut markers = Vec::new();
        for (d, f) in figs {
            for c in &f.curves {
                if c.label == *name || (single && !c.reference) {
                    drawn.push(Drawn {
                        label: d.label.clone(),
                        color: d.color,
                        curve: c,
                    });
                }
                if c.reference {
                    drawn.push(Drawn {
                        label: format!("{}: {}", d.label, c.label),
                        color: d.color,
                        curve: c,
                    });
                }
            }
            for (x, l) in &f.markers {
                if l.starts_with(name) {
                    markers.push((*x, format!("{}: {l}", d.label)));
                }
            }
        }
        let (id, title) = if single {
            (
                first.id.clone(),
                format!("{}, device by device", first.title),
            )
        } else {
            (
                format!("{}-{name}", first.id),
                format!("{}: {name}, device by device", first.title),
            )
        };
        let chart = draw(first, &id, &title, &drawn, &markers);
        if chart.has_data() {
            out.push(chart);
        }
        if single {
            break;
        }
    }
    out
}

// ---------------------------------------------------------------------------
// Sections.

fn figs_of(s: &SuiteData, d: &DeviceReport) -> Vec<Fig> {
    let by_name: BTreeMap<&str, &RunReport> = d.runs.iter().map(|r| (r.name.as_str(), r)).collect();
    if s.name == "uflip" {
        uflip_figs(s, &by_name)
    } else {
        paper_figs(s, &by_name)
    }
}

fn f2(v: Option<f64>) -> String {
    match v {
        None => "-".into(),
        Some(v) if v >= 10.0 => format!("{v:.0}"),
        Some(v) if v >= 1.0 => format!("{v:.1}"),
        Some(v) => format!("{v:.2}"),
    }
}

fn factor(r: Option<f64>) -> String {
    match r {
        None => "-".into(),
        Some(r) if (r - 1.0).abs() <= 0.1 => "=".into(),
        Some(r) if r >= 10.0 => format!("x{r:.0}"),
        Some(r) => format!("x{r:.1}"),
    }
}

/// uFLIP Table 3's columns, as `flashlab_suite::table3::Table3::HEADER`.
const TABLE3_HEADER: [&str; 10] = [
    "SR (ms)",
    "RR (ms)",
    "SW (ms)",
    "RW (ms)",
    "Pause RW (ms)",
    "Locality RW",
    "Partitions",
    "Reverse",
    "In-place",
    "Large Incr",
];

/// A Table-3 row from `uflip-summary.json`'s `table3`, formatted as the
/// suite's own Markdown summary does.
fn table3_cells(t: &Value) -> Vec<String> {
    let f = |k: &str| t.get(k).and_then(Value::as_f64);
    let u = |k: &str| t.get(k).and_then(Value::as_u64);
    vec![
        f2(f("sr_ms")),
        f2(f("rr_ms")),
        f2(f("sw_ms")),
        f2(f("rw_ms")),
        f("pause_rw_ms").map(|p| format!("{p}")).unwrap_or_default(),
        match u("locality_rw_bytes") {
            None => "No".into(),
            Some(b) => format!(
                "{} ({})",
                text::format_size(b),
                factor(f("locality_rw_relative"))
            ),
        },
        match u("partitions") {
            None => "-".into(),
            Some(p) => format!("{p} ({})", factor(f("partitions_relative"))),
        },
        factor(f("reverse_relative")),
        factor(f("in_place_relative")),
        factor(f("large_incr_relative")),
    ]
}

fn table3_header() -> Vec<String> {
    std::iter::once("Device")
        .chain(TABLE3_HEADER)
        .map(str::to_string)
        .collect()
}

fn calibration_text(journal: Option<&Value>) -> Option<String> {
    let cal = journal?.get("calibration")?.as_object()?;
    if cal.is_empty() {
        return None;
    }
    let parts: Vec<String> = cal
        .iter()
        .map(|(b, c)| {
            format!(
                "{b} start-up {} IOs, period {}",
                c.get("startup").and_then(Value::as_u64).unwrap_or(0),
                c.get("period").and_then(Value::as_u64).unwrap_or(0)
            )
        })
        .collect();
    Some(format!(
        "Calibration (uFLIP section 4.2): {}.",
        parts.join("; ")
    ))
}

fn uflip_sections(s: &SuiteData, d: &DeviceReport) -> Vec<Section> {
    let mut out = Vec::new();
    let mut t3 = Section {
        id: "uflip-table3".into(),
        title: "uFLIP Table 3 row".into(),
        ..Section::default()
    };
    t3.paragraphs.extend(s.notes.iter().cloned());
    match s.summary.as_ref() {
        Some(sum) => {
            t3.paragraphs.push("This device's row of uFLIP Table 3 (Bouganim et al., CIDR 2009): mean response time of the 32 KiB baseline patterns, the shortest pause after which random writes cost no more than 1.2x sequential ones, the largest area in which random writes cost at most half their unrestricted cost, the number of partitions up to which partitioned sequential writes stay below half the random-write cost, and the cost of reverse, in-place and large-increment writes relative to SW (or RW) (\"=\" within 10 %).".into());
            if let Some(t) = sum.get("table3") {
                let mut row = vec![d.label.clone()];
                row.extend(table3_cells(t));
                t3.tables.push(Table {
                    header: table3_header(),
                    rows: vec![row],
                });
            }
            if let Some(c) = calibration_text(s.journal.as_ref()) {
                t3.paragraphs.push(c);
            }
            let hints: Vec<Vec<String>> = sum
                .get("hints")
                .and_then(Value::as_array)
                .map(|h| {
                    h.iter()
                        .map(|h| {
                            let f = |k: &str| {
                                h.get(k).and_then(Value::as_str).unwrap_or("").to_string()
                            };
                            vec![
                                h.get("number")
                                    .and_then(Value::as_u64)
                                    .map(|n| n.to_string())
                                    .unwrap_or_default(),
                                f("device"),
                                f("paper"),
                                f("evidence"),
                                if h.get("contradicts_paper").and_then(Value::as_bool) == Some(true)
                                {
                                    "differs from the paper".into()
                                } else {
                                    "agrees".into()
                                },
                            ]
                        })
                        .collect()
                })
                .unwrap_or_default();
            out.push(std::mem::take(&mut t3));
            if !hints.is_empty() {
                out.push(Section {
                    id: "uflip-hints".into(),
                    title: "uFLIP design hints for this device".into(),
                    paragraphs: vec!["The seven design hints of uFLIP section 5.3, as this device's measurements put them, next to the paper's general hints:".into()],
                    tables: vec![Table {
                        header: ["#", "this device", "paper's hint", "measured", "vs paper"]
                            .map(str::to_string)
                            .to_vec(),
                        rows: hints,
                    }],
                    ..Section::default()
                });
            }
        }
        None => out.push(t3),
    }

    let charts: Vec<Chart> = figs_of(s, d).iter().filter_map(draw_device).collect();
    if !charts.is_empty() {
        out.push(Section {
            id: "uflip-benchmarks".into(),
            title: "uFLIP micro-benchmarks".into(),
            paragraphs: vec!["One chart per micro-benchmark of uFLIP Table 1: the varying parameter on x (log scale for powers of two; IOShift and Incr by value), the mean response time of each run on a log axis, one curve per baseline pattern (SR, RR, SW, RW; pattern pairs for Mix), the shaded band spanning each run's 10th to 90th percentile. Statistics exclude each run's start-up IOs (IOIgnore).".into()],
            charts,
            ..Section::default()
        });
    }

    // The calibration runs: start-up and period marked (uFLIP Figures 3-5).
    let mut phases = Section {
        id: "uflip-phases".into(),
        title: "uFLIP start-up and running phases (Figures 3-5)".into(),
        paragraphs: vec!["The long baseline runs the suite measured its start-up phase and running-phase period on (uFLIP section 4.2): response time of every IO in completion order on a log axis, the start-up phase shaded and the period marked; the micro-benchmark runs ignore that many IOs (IOIgnore).".into()],
        ..Section::default()
    };
    for r in s.experiment("calibration") {
        if let Some(run) = d.runs.iter().find(|x| x.name == r.name && x.has_data()) {
            phases.charts.push(charts::timeline(
                &format!("cal-{}", r.series),
                &format!(
                    "uFLIP Figures 3-5: latency over IO number, {} baseline calibration run on {}",
                    r.series, d.label
                ),
                run,
                d.color,
                None,
                None,
                WIDE,
            ));
        }
    }
    if !phases.charts.is_empty() {
        out.push(phases);
    }
    out
}

fn suite_title(name: &str) -> &str {
    match name {
        "chen09" => "Chen, Koufaty & Zhang (SIGMETRICS 2009)",
        "wang11" => "Wang et al. (IEICE 2011)",
        "hudlet11" => "Hudlet & Schall (BTW 2011)",
        "budilovsky11" => "Budilovsky, Toledo & Zuck (SYSTOR 2011)",
        _ => name,
    }
}

fn findings_rows(sum: &Value) -> Vec<Vec<String>> {
    sum.get("findings")
        .and_then(Value::as_array)
        .map(|f| {
            f.iter()
                .map(|x| {
                    let g = |k: &str| x.get(k).and_then(Value::as_str).unwrap_or("").to_string();
                    vec![g("source"), g("what"), g("text"), g("paper")]
                })
                .collect()
        })
        .unwrap_or_default()
}

fn paper_sections(s: &SuiteData, d: &DeviceReport) -> Vec<Section> {
    let mut out = Vec::new();
    let mut f = Section {
        id: format!("{}-findings", s.name),
        title: format!("{}: findings", suite_title(&s.name)),
        paragraphs: s.notes.clone(),
        ..Section::default()
    };
    if let Some(sum) = &s.summary {
        let rows = findings_rows(sum);
        if !rows.is_empty() {
            f.paragraphs.push(format!(
                "What the paper reports, measured on {} (from {}-summary.json):",
                d.label, s.name
            ));
            f.tables.push(Table {
                header: ["source", "finding", "measured here", "paper"]
                    .map(str::to_string)
                    .to_vec(),
                rows,
            });
        }
        if let Some(notes) = sum.get("notes").and_then(Value::as_array) {
            for n in notes.iter().filter_map(Value::as_str) {
                f.paragraphs.push(format!("Note: {n}"));
            }
        }
    }
    out.push(f);
    let charts: Vec<Chart> = figs_of(s, d).iter().filter_map(draw_device).collect();
    if !charts.is_empty() {
        out.push(Section {
            id: format!("{}-figures", s.name),
            title: format!("{}: figures", suite_title(&s.name)),
            paragraphs: vec!["One chart per paper figure, from this device's runs (each run named after its figure). Response-time CDFs: log response time on x, fraction of IOs on y. Statistics use every record.".into()],
            charts,
            ..Section::default()
        });
    }
    out
}

impl Analysis for SuiteAnalysis {
    fn sections(&self, device: &DeviceReport, results_dir: &Path) -> Result<Vec<Section>, String> {
        let Some(s) = SuiteData::load(results_dir) else {
            return Ok(Vec::new());
        };
        Ok(if s.name == "uflip" {
            uflip_sections(&s, device)
        } else {
            paper_sections(&s, device)
        })
    }

    fn compare(&self, devices: &[(&DeviceReport, &Path)]) -> Result<Vec<Section>, String> {
        let loaded: Vec<(&DeviceReport, SuiteData)> = devices
            .iter()
            .filter_map(|(d, p)| SuiteData::load(p).map(|s| (*d, s)))
            .collect();
        let mut suites: Vec<&str> = Vec::new();
        for (_, s) in &loaded {
            if !suites.contains(&s.name.as_str()) {
                suites.push(&s.name);
            }
        }
        let mut out = Vec::new();
        for name in suites {
            let group: Vec<&(&DeviceReport, SuiteData)> =
                loaded.iter().filter(|(_, s)| s.name == name).collect();
            if group.len() < 2 {
                continue;
            }
            if name == "uflip" {
                let rows: Vec<Vec<String>> = group
                    .iter()
                    .map(|(d, s)| {
                        let mut row = vec![d.label.clone()];
                        match s.summary.as_ref().and_then(|v| v.get("table3")) {
                            Some(t) => row.extend(table3_cells(t)),
                            None => row.extend(std::iter::repeat_n("-".to_string(), 10)),
                        }
                        row
                    })
                    .collect();
                let mut hints: BTreeMap<u64, Vec<String>> = BTreeMap::new();
                for (i, (_, s)) in group.iter().enumerate() {
                    for h in s
                        .summary
                        .as_ref()
                        .and_then(|v| v.get("hints"))
                        .and_then(Value::as_array)
                        .into_iter()
                        .flatten()
                    {
                        let Some(n) = h.get("number").and_then(Value::as_u64) else {
                            continue;
                        };
                        let row = hints.entry(n).or_insert_with(|| {
                            let mut r = vec![
                                n.to_string(),
                                h.get("paper")
                                    .and_then(Value::as_str)
                                    .unwrap_or("")
                                    .to_string(),
                            ];
                            r.extend(std::iter::repeat_n("-".to_string(), group.len()));
                            r
                        });
                        row[2 + i] = h
                            .get("device")
                            .and_then(Value::as_str)
                            .unwrap_or("")
                            .to_string();
                    }
                }
                let mut header = vec!["#".to_string(), "paper's hint".to_string()];
                header.extend(group.iter().map(|(d, _)| d.label.clone()));
                out.push(Section {
                    id: "uflip-table3".into(),
                    title: "uFLIP Table 3, side by side".into(),
                    paragraphs: vec!["Each device's row of uFLIP Table 3 (columns as in the paper; \"=\" within 10 %):".into()],
                    tables: vec![Table {
                        header: table3_header(),
                        rows,
                    }],
                    ..Section::default()
                });
                if !hints.is_empty() {
                    out.push(Section {
                        id: "uflip-hints".into(),
                        title: "uFLIP design hints, side by side".into(),
                        paragraphs: vec!["The design hints of uFLIP section 5.3 as each device's measurements put them:".into()],
                        tables: vec![Table {
                            header,
                            rows: hints.into_values().collect(),
                        }],
                        ..Section::default()
                    });
                }
            } else {
                let mut keys: Vec<(String, String)> = Vec::new();
                let mut cells: BTreeMap<(String, String), Vec<String>> = BTreeMap::new();
                for (i, (_, s)) in group.iter().enumerate() {
                    for r in s.summary.as_ref().map(findings_rows).unwrap_or_default() {
                        let k = (r[0].clone(), r[1].clone());
                        if !keys.contains(&k) {
                            keys.push(k.clone());
                        }
                        let row = cells
                            .entry(k)
                            .or_insert_with(|| vec!["-".into(); group.len()]);
                        row[i] = r[2].clone();
                    }
                }
                let mut header = vec!["source".to_string(), "finding".to_string()];
                header.extend(group.iter().map(|(d, _)| d.label.clone()));
                let rows = keys
                    .iter()
                    .map(|k| {
                        let mut r = vec![k.0.clone(), k.1.clone()];
                        r.extend(cells.remove(k).unwrap_or_default());
                        r
                    })
                    .collect();
                out.push(Section {
                    id: format!("{name}-findings"),
                    title: format!("{}: findings, side by side", suite_title(name)),
                    tables: vec![Table { header, rows }],
                    ..Section::default()
                });
            }
            // Overlaid curves: each figure, a colour per device.
            let figs: Vec<(&DeviceReport, Vec<Fig>)> =
                group.iter().map(|(d, s)| (*d, figs_of(s, d))).collect();
            let mut ids: Vec<String> = Vec::new();
            for (_, fs) in &figs {
                for f in fs {
                    if !ids.contains(&f.id) {
                        ids.push(f.id.clone());
                    }
                }
            }
            let mut charts = Vec::new();
            for id in ids {
                let same: Vec<(&DeviceReport, &Fig)> = figs
                    .iter()
                    .filter_map(|(d, fs)| fs.iter().find(|f| f.id == id).map(|f| (*d, f)))
                    .collect();
                charts.extend(draw_compare(&same));
            }
            if !charts.is_empty() {
                let what = if name == "uflip" {
                    "micro-benchmark"
                } else {
                    "figure"
                };
                out.push(Section {
                    id: format!("{name}-overlay"),
                    title: format!("{}: each {what}, device by device", suite_title(if name == "uflip" { "uFLIP" } else { name })),
                    paragraphs: vec![format!(
                        "The same curves as in each device's section, overlaid with one colour per device ({}); a {what} with several curves gets one chart per curve.",
                        group.iter().map(|(d, _)| d.label.as_str()).collect::<Vec<_>>().join(", ")
                    )],
                    charts,
                    ..Section::default()
                });
            }
        }
        Ok(out)
    }

    fn featured_runs(&self, _device: &DeviceReport, results_dir: &Path) -> Vec<String> {
        let Some(s) = SuiteData::load(results_dir) else {
            return Vec::new();
        };
        let wanted: &[&str] = match s.name.as_str() {
            "uflip" => &["calibration"],
            "chen09" => &["fig2", "fig3"],
            "wang11" => &[],
            _ => &[],
        };
        s.runs
            .iter()
            .filter(|r| wanted.contains(&r.experiment.as_str()))
            .map(|r| r.name.clone())
            .take(crate::model::MAX_CHARTED_COMPARISONS)
            .collect()
    }
}
