//! uFLIP (Bouganim, Jónsson & Bonnet, CIDR 2009): the nine micro-benchmarks,
//! the device's Table 3 row and design hints, one figure per micro-benchmark
//! and the calibration runs' timelines.

use flashlab_results::RunSummary;
use serde::Serialize;

use super::{base_summary, experiment, ConfigError, JournalRule, Suite, SummaryInput};
use crate::figures::{
    series_figure, CurveSpec, FigureGroup, FigureSpec, Metric, Plot, PointSpec, SuiteFigures, XKind,
};
use crate::plan::Plan;
use crate::runner::{Calibration, RunOutcome};
use crate::summary::{Compare, SuiteSummary, SummaryTable};
use crate::table3::{hints, table3, Hint, Table3};
use crate::uflip::{plan, unplaced_large_incrs, UflipConfig};
use flashlab_pattern::units::format_size;

pub struct Uflip;

/// uFLIP's nine micro-benchmarks (Table 1): name, title, parameter, x.
const BENCHMARKS: [(&str, &str, &str, XKind); 9] = [
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

/// SR, RR, SW, RW in this order and colour in every chart.
const ORDER: [&str; 4] = ["SR", "RR", "SW", "RW"];

/// The typed detail of `uflip-summary.json`.
#[derive(Serialize)]
struct UflipDetail<'a> {
    table3: &'a Table3,
    hints: &'a [Hint],
    calibration: &'a std::collections::BTreeMap<String, Calibration>,
    pause_between_runs_ns: Option<u64>,
    /// Sequential reads after the pause probe's random writes still slower
    /// than before them (uFLIP 4.3, Figure 5).
    lingering_ios: Option<u64>,
    runs: &'a std::collections::BTreeMap<String, RunOutcome>,
}

fn calibration_text(cal: &std::collections::BTreeMap<String, Calibration>) -> Option<String> {
    (!cal.is_empty()).then(|| {
        format!(
            "Calibration (uFLIP section 4.2): {}.",
            cal.iter()
                .map(|(b, c)| format!("{b} start-up {} IOs, period {}", c.startup, c.period))
                .collect::<Vec<_>>()
                .join("; ")
        )
    })
}

/// What `flashlab suite uflip` checks of its flags, for a configuration
/// given as data (a sweep's `[suite.options]`), naming the fields.
fn check(cfg: &UflipConfig, device_bytes: u64) -> Result<(), ConfigError> {
    let fail = |m: String| Err(ConfigError(format!("uflip: {m}")));
    if cfg.io_size_bytes == 0 || !cfg.io_size_bytes.is_multiple_of(512) {
        return fail(format!(
            "io_size_bytes {} is not a positive multiple of 512, e.g. 32768",
            cfg.io_size_bytes
        ));
    }
    if cfg.min_ios == 0 || cfg.min_ios > cfg.max_ios {
        return fail(format!(
            "min_ios ({}) must be between 1 and max_ios ({})",
            cfg.min_ios, cfg.max_ios
        ));
    }
    if cfg.calibration_ios < 64 {
        return fail(
            "calibration_ios must be at least 64 to see a start-up phase and a period".into(),
        );
    }
    if !(cfg.bound > 0.0 && cfg.bound < 1.0) {
        return fail(format!(
            "bound {} must be between 0 and 1, e.g. 0.05 for +/-5 %",
            cfg.bound
        ));
    }
    if let Some(b) = cfg
        .benchmarks
        .iter()
        .find(|b| !crate::uflip::BENCHMARKS.contains(&b.as_str()))
    {
        return fail(format!(
            "unknown micro-benchmark '{b}' in benchmarks; use {}",
            crate::uflip::BENCHMARKS.join(", ")
        ));
    }
    let smallest = 64 * cfg.io_size_bytes * 16;
    if device_bytes < smallest {
        return fail(format!(
            "the device ({device_bytes} B) is too small for IOSize {} B; use a device of at least {smallest} B",
            cfg.io_size_bytes
        ));
    }
    Ok(())
}

/// Which runs Table 3's Large Incr averages, by which placement rule, and
/// which Incr values the rule could not place on this device.
fn large_incr_text(t: &Table3, cfg: &UflipConfig, plan: &Plan) -> Option<String> {
    let unplaced = unplaced_large_incrs(cfg, plan);
    if t.large_incr_averaged.is_empty() && unplaced.is_empty() {
        return None;
    }
    let list = |v: &[i64]| {
        v.iter()
            .map(|i| i.to_string())
            .collect::<Vec<_>>()
            .join(", ")
    };
    let mut s = if t.large_incr_averaged.is_empty() {
        "Large Incr: no run measured.".to_string()
    } else {
        format!(
            "Large Incr averages the sequential writes with Incr {}, each one pass of IOCount x Incr x IOSize from its own TargetOffset, never wrapping.",
            list(&t.large_incr_averaged)
        )
    };
    if !unplaced.is_empty() {
        let incrs: Vec<i64> = unplaced.iter().map(|u| u.0).collect();
        let needs: Vec<String> = unplaced.iter().map(|u| format_size(u.1)).collect();
        s += &format!(
            " Not placed, so not averaged: Incr {}: one pass of {} IOs (--min-ios) needs {}, more than the half of this device a sequential-write run may use.",
            list(&incrs),
            cfg.min_ios,
            needs.join(", ")
        );
    }
    Some(s)
}

impl Suite for Uflip {
    type Config = UflipConfig;

    fn name(&self) -> &'static str {
        "uflip"
    }

    fn title(&self) -> &'static str {
        "uFLIP (Bouganim, Jónsson & Bonnet, CIDR 2009)"
    }

    fn plan(&self, cfg: &UflipConfig, device_bytes: u64) -> Result<Plan, ConfigError> {
        check(cfg, device_bytes)?;
        Ok(plan(cfg, device_bytes))
    }

    /// uFLIP's own rule: runs stop at the configured bound (95 % CI, batch
    /// means) between `min_ios` and the cap, after `min_pause_ns` at least.
    fn journal_rule(&self, cfg: &UflipConfig) -> JournalRule {
        JournalRule {
            state: cfg.state.name().into(),
            bound: cfg.bound,
            min_pause_ns: cfg.min_pause_ns,
            min_ios: cfg.min_ios,
        }
    }

    fn plan_header(&self, cfg: &UflipConfig, device: &str, device_bytes: u64) -> String {
        format!(
            "uFLIP benchmark plan for {device} ({}), state enforcement: {}\nIOIgnore and IOCount are automatic: start-up ignored, runs stop at +/-{:.0} % (95 % CI, batch means), {}..{} IOs",
            format_size(device_bytes),
            cfg.state.describe(),
            cfg.bound * 100.0,
            cfg.min_ios,
            cfg.max_ios
        )
    }

    fn figures(&self, plan: &Plan, _runs: Option<&[RunSummary]>) -> SuiteFigures {
        let mut figures = Vec::new();
        for (i, (bench, title, param, x)) in BENCHMARKS.iter().enumerate() {
            let runs = experiment(plan, bench);
            if runs.is_empty() {
                continue;
            }
            let x_label = match *param {
                "Pause_ms" => "Pause (ms)",
                "Ratio" => "Ratio (pattern #1 IOs per pattern #2 IO)",
                p => p,
            };
            let mut f = series_figure(
                bench,
                format!(
                    "uFLIP micro-benchmark {} ({title}): mean response time by {param}, per baseline pattern (as uFLIP Figures 6-8; band: p10-p90)",
                    i + 1
                ),
                x_label,
                *x,
                Metric::Latency,
                &runs,
            );
            f.curves
                .sort_by_key(|c| ORDER.iter().position(|b| *b == c.label).unwrap_or(4));
            for c in &mut f.curves {
                c.color = ORDER.iter().position(|b| *b == c.label);
            }
            figures.push(f);
        }
        let calibration = experiment(plan, "calibration");
        let timelines = calibration
            .iter()
            .map(|r| FigureSpec {
                id: format!("cal-{}", r.series),
                title: format!(
                    "uFLIP Figures 3-5: latency over IO number, {} baseline calibration run",
                    r.series
                ),
                plot: Plot::Timeline,
                curves: vec![CurveSpec {
                    label: r.series.clone(),
                    color: None,
                    reference: false,
                    points: vec![PointSpec {
                        run: r.name.clone(),
                        x: 0.0,
                        category: None,
                    }],
                }],
                markers: Vec::new(),
                wide: true,
            })
            .collect();
        SuiteFigures {
            suite: self.name().into(),
            groups: vec![
                FigureGroup {
                    id: "uflip-benchmarks".into(),
                    title: "uFLIP micro-benchmarks".into(),
                    paragraph: "One chart per micro-benchmark of uFLIP Table 1: the varying parameter on x (log scale for powers of two; IOShift and Incr by value), the mean response time of each run on a log axis, one curve per baseline pattern (SR, RR, SW, RW; pattern pairs for Mix), the shaded band spanning each run's 10th to 90th percentile. Statistics exclude each run's start-up IOs (IOIgnore).".into(),
                    figures,
                },
                FigureGroup {
                    id: "uflip-phases".into(),
                    title: "uFLIP start-up and running phases (Figures 3-5)".into(),
                    paragraph: "The long baseline runs the suite measured its start-up phase and running-phase period on (uFLIP section 4.2): response time of every IO in completion order on a log axis, the start-up phase shaded and the period marked; the micro-benchmark runs ignore that many IOs (IOIgnore).".into(),
                    figures: timelines,
                },
            ],
            featured_runs: calibration.iter().map(|r| r.name.clone()).collect(),
        }
    }

    fn default_config(&self, quick: bool) -> Option<UflipConfig> {
        Some(UflipConfig {
            quick,
            ..UflipConfig::default()
        })
    }

    fn summarise(&self, input: &SummaryInput) -> SuiteSummary {
        let journal = input.journal;
        let io_size = journal.config["io_size_bytes"].as_u64().unwrap_or(32768);
        let t = table3(input.plan, input.runs, io_size);
        let h = hints(input.plan, input.runs, &t, io_size);
        let mut s = base_summary(self, input);
        let mut paragraphs = vec!["This device's row of uFLIP Table 3 (Bouganim et al., CIDR 2009): mean response time of the 32 KiB baseline patterns, the shortest pause after which random writes cost no more than 1.2x sequential ones, the largest area in which random writes cost at most half their unrestricted cost, the number of partitions up to which partitioned sequential writes stay below half the random-write cost, and the cost of reverse, in-place and large-increment writes relative to SW (or RW) (\"=\" within 10 %).".to_string()];
        paragraphs.extend(crate::table3::surprises(
            input.plan, input.runs, &t, io_size,
        ));
        if let Ok(cfg) = serde_json::from_value::<UflipConfig>(journal.config.clone()) {
            paragraphs.extend(large_incr_text(&t, &cfg, input.plan));
        }
        paragraphs.extend(calibration_text(&journal.calibration));
        if let Some(p) = journal.pause_between_runs_ns {
            paragraphs.push(format!(
                "Pause between runs (uFLIP section 4.3): {} ({} lingering reads).",
                flashlab_pattern::units::format_duration_ns(p),
                journal.lingering_ios.unwrap_or(0)
            ));
        }
        let converged = journal.runs.values().filter(|r| r.converged).count();
        paragraphs.push(format!(
            "Runs: {} measured, {} reached the +/-{:.0} % bound before the cap.",
            journal.runs.len(),
            converged,
            journal.bound * 100.0
        ));
        paragraphs.push(crate::table3::LEGEND.to_string());
        s.tables.push(SummaryTable {
            id: "uflip-table3".into(),
            title: "uFLIP Table 3 row".into(),
            paragraphs,
            header: Table3::display_header().to_vec(),
            rows: vec![t.cells().to_vec()],
            compare: Compare::Rows,
            compare_title: Some("uFLIP Table 3, side by side".into()),
            detail_only: false,
        });
        if !h.is_empty() {
            s.tables.push(SummaryTable {
                id: "uflip-hints".into(),
                title: "uFLIP design hints".into(),
                paragraphs: vec!["The seven design hints of uFLIP section 5.3, as this device's measurements put them, next to the paper's general hints:".into()],
                header: ["#", "this device", "paper's hint", "measured", "vs paper"]
                    .map(str::to_string)
                    .to_vec(),
                rows: h
                    .iter()
                    .map(|h| {
                        vec![
                            h.number.to_string(),
                            h.device.clone(),
                            h.paper.clone(),
                            h.evidence.clone(),
                            if h.evidence == crate::table3::NOT_MEASURED {
                                crate::table3::NOT_MEASURED.into()
                            } else if h.contradicts_paper {
                                "differs from the paper".into()
                            } else {
                                "agrees".into()
                            },
                        ]
                    })
                    .collect(),
                compare: Compare::Column {
                    keys: vec![0, 2],
                    value: 1,
                },
                compare_title: None,
                detail_only: false,
            });
        }
        let detail = UflipDetail {
            table3: &t,
            hints: &h,
            calibration: &journal.calibration,
            pause_between_runs_ns: journal.pause_between_runs_ns,
            lingering_ios: journal.lingering_ios,
            runs: &journal.runs,
        };
        if let serde_json::Value::Object(m) = serde_json::to_value(&detail).expect("serializes") {
            s.detail = m;
        }
        s
    }
}
