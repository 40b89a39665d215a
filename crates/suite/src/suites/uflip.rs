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
use crate::plan::{RunStep, Step};
use crate::runner::{Calibration, RunOutcome};
use crate::state::StateMethod;
use crate::summary::{Compare, SuiteSummary, SummaryTable};
use crate::table3::{hints, table3, Hint, Table3};
use crate::uflip::{
    basic, needs_own_space, order_incrs, order_placement, powers, unplaced_large_incrs, UflipConfig,
};
use flashlab_pattern::rng::derive_seed;
use flashlab_pattern::units::format_size;
use flashlab_pattern::{Basic, Location, Mix, PatternSpec, Timing};

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

    fn display_name(&self) -> &'static str {
        "uFLIP"
    }

    fn seed(&self, config: &UflipConfig) -> u64 {
        config.seed
    }

    fn default_config(&self, quick: bool) -> UflipConfig {
        UflipConfig {
            quick,
            ..UflipConfig::default()
        }
    }

    /// `--quick` narrows uFLIP's parameter ranges; `--scale` is not a
    /// reduction here (the journal keeps the scaled IO counts, and the
    /// runs still stop at the bound).
    fn reduced_run(&self, config: &UflipConfig) -> Option<super::ReducedRun> {
        config.quick.then_some(super::ReducedRun::Quick)
    }

    fn summarise(&self, input: &SummaryInput) -> SuiteSummary {
        let journal = input.journal;
        let config = typed_config(&journal.config);
        let io_size = baseline_io_size_bytes(config.as_ref());
        let t = table3(input.plan, input.runs, io_size);
        let h = hints(input.plan, input.runs, &t, io_size);
        let mut s = base_summary(self, input);
        let mut paragraphs = vec!["This device's row of uFLIP Table 3 (Bouganim et al., CIDR 2009): mean response time of the 32 KiB baseline patterns, the shortest pause after which random writes cost no more than 1.2x sequential ones, the largest area in which random writes cost at most half their unrestricted cost, the number of partitions up to which partitioned sequential writes stay below half the random-write cost, and the cost of reverse, in-place and large-increment writes relative to SW (or RW) (\"=\" within 10 %).".to_string()];
        paragraphs.extend(crate::table3::surprises(
            input.plan, input.runs, &t, io_size,
        ));
        if let Some(cfg) = &config {
            paragraphs.extend(large_incr_text(&t, cfg, input.plan));
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

/// One run of the uFLIP plan, named `{bench}-{series}-{label}`.
struct RunDef<'a> {
    /// The micro-benchmark (uFLIP section 3.2's name, e.g. "granularity").
    bench: &'a str,
    series: &'a str,
    /// The varied parameter (e.g. "IOSize") and its value in this run.
    parameter: &'a str,
    value: f64,
    label: String,
    primary: Basic,
    mix: Option<Mix>,
    timing: Timing,
    /// ParallelDegree.
    parallel: u64,
    /// TargetSize in bytes (None: the plan's random target).
    target: Option<u64>,
}

struct Builder<'a> {
    cfg: &'a UflipConfig,
    device_bytes: u64,
    random_target: u64,
    runs: Vec<RunStep>,
}

impl Builder<'_> {
    fn add(&mut self, def: RunDef) {
        let RunDef {
            bench,
            series,
            parameter,
            value,
            label,
            primary,
            mix,
            timing,
            parallel,
            target,
        } = def;
        let name = format!("{bench}-{series}-{label}");
        let seed = derive_seed(self.cfg.seed, self.runs.len() as u64 + 1);
        let spec = PatternSpec {
            name: name.clone(),
            primary,
            mix,
            timing,
            target_offset_bytes: 0,
            target_size_bytes: target.unwrap_or(self.random_target),
            io_count: self.cfg.max_ios,
            io_ignore: 0,
            parallel_degree: parallel,
            queue_depth: 1,
            seed,
            runtime_ns: None,
            time_based: false,
            rate_iops: None,
            io_size_split: Vec::new(),
        };
        self.runs.push(RunStep {
            name,
            experiment: bench.into(),
            series: series.into(),
            parameter: parameter.into(),
            value,
            spec,
            adaptive: true,
        });
    }

    fn sequential_target(&self, io_size: u64, parallel: u64) -> u64 {
        (self.cfg.max_ios * io_size * parallel)
            .min(self.device_bytes / 4 / io_size * io_size)
            .max(io_size * parallel)
    }
}

/// Builds the uFLIP plan for a device of `device_bytes`: the selected
/// micro-benchmarks' runs (uFLIP section 3.2, one function each), then the
/// calibration, the pause measurement and the runs in the order and space
/// uFLIP 4.2 asks ([`assemble`]).
pub fn plan(cfg: &UflipConfig, device_bytes: u64) -> Plan {
    let io = cfg.io_size_bytes;
    let random_target = cfg.random_target_bytes.unwrap_or(device_bytes) / io * io;
    let mut b = Builder {
        cfg,
        device_bytes,
        random_target,
        runs: Vec::new(),
    };
    let micro_benchmarks: [(&str, AddRuns); 9] = [
        ("granularity", granularity),
        ("alignment", alignment),
        ("locality", locality),
        ("partitioning", partitioning),
        ("order", order),
        ("parallelism", parallelism),
        ("mix", mix),
        ("pause", pause),
        ("bursts", bursts),
    ];
    for (name, add) in micro_benchmarks {
        if cfg.benchmarks.iter().any(|x| x == name) {
            add(&mut b);
        }
    }
    assemble(b)
}

/// Adds one micro-benchmark's runs to the plan.
type AddRuns = fn(&mut Builder);

/// The four baseline patterns (uFLIP section 3.2).
const BASELINES: [&str; 4] = ["SR", "RR", "SW", "RW"];

/// The plan's steps from the micro-benchmarks' runs: the initial state,
/// calibration, the pause measurement, then the runs, those that write
/// sequentially last, each in space of its own.
fn assemble(b: Builder) -> Plan {
    let Builder {
        cfg,
        device_bytes,
        random_target,
        runs,
    } = b;
    let io = cfg.io_size_bytes;
    // Runs that write sequentially go last, each in space of its own; when
    // that space runs out the state is enforced again (uFLIP 4.2).
    let (mut own, shared): (Vec<RunStep>, Vec<RunStep>) =
        runs.into_iter().partition(|r| needs_own_space(&r.spec));
    let mut steps = Vec::new();
    if cfg.state != StateMethod::None {
        steps.push(Step::EnforceState {
            method: cfg.state,
            reason: "initial state".into(),
        });
    }
    let cal = |base: &str, target: u64, offset: u64| {
        let spec = PatternSpec {
            name: format!("calibrate-{base}"),
            primary: basic(base, io),
            mix: None,
            timing: Timing::Consecutive,
            target_offset_bytes: offset,
            target_size_bytes: target,
            io_count: cfg.calibration_ios,
            io_ignore: 0,
            parallel_degree: 1,
            queue_depth: 1,
            seed: derive_seed(
                cfg.seed,
                0xCA1 + base.len() as u64 + base.as_bytes()[0] as u64,
            ),
            runtime_ns: None,
            time_based: false,
            rate_iops: None,
            io_size_split: Vec::new(),
        };
        RunStep {
            name: spec.name.clone(),
            experiment: "calibration".into(),
            series: base.into(),
            parameter: "IOCount".into(),
            value: cfg.calibration_ios as f64,
            spec,
            adaptive: false,
        }
    };
    let cal_seq = (cfg.calibration_ios * io).min(device_bytes / 4 / io * io);
    let mut cursor = 0u64;
    for base in ["SR", "RR", "RW"] {
        let t = if base == "SR" { cal_seq } else { random_target };
        steps.push(Step::Calibrate {
            baseline: base.into(),
            run: cal(base, t, 0),
        });
    }
    // SW calibration gets space of its own, at the start of the sequential area.
    steps.push(Step::Calibrate {
        baseline: "SW".into(),
        run: cal("SW", cal_seq, cursor),
    });
    cursor += cal_seq;
    // Pause determination: SR, a batch of RW, SR again (uFLIP 4.3).
    let probe = |name: &str, base: &str, count: u64, target: u64| {
        let mut r = cal(base, target, 0);
        r.name = format!("pause-probe-{name}");
        r.spec.name = r.name.clone();
        r.spec.io_count = count;
        r.experiment = "pause-probe".into();
        r
    };
    // Enough reads after the batch of writes to see uFLIP's Figure 5 (the
    // Mtron's writes linger for about 3,000 reads): at least 4096.
    let probe_reads = (cfg.calibration_ios / 2).max(4096);
    steps.push(Step::MeasurePause {
        before: probe("SR-before", "SR", probe_reads, cal_seq),
        writes: probe("RW", "RW", (cfg.calibration_ios / 4).max(32), random_target),
        after: probe("SR-after", "SR", probe_reads, cal_seq),
    });
    steps.extend(shared.into_iter().map(Step::Run));
    for mut r in own.drain(..) {
        let need = r.spec.target_size_bytes;
        if cursor + need > device_bytes {
            if cfg.state != StateMethod::None {
                steps.push(Step::EnforceState {
                    method: cfg.state,
                    reason: "the sequential-write runs used up the device's space".into(),
                });
            }
            cursor = 0;
        }
        r.spec.target_offset_bytes = cursor;
        cursor += need;
        steps.push(Step::Run(r));
    }
    Plan {
        suite: "uflip".into(),
        steps,
    }
}

/// The granularity micro-benchmark (uFLIP section 3.2): [2^0 .. 2^9] x 512 B, plus some non-powers of 2.
fn granularity(b: &mut Builder) {
    let q = b.cfg.quick;
    let all = BASELINES;
    let mut sizes: Vec<u64> = if q {
        vec![4096, 32768, 131072]
    } else {
        powers(0, 9).map(|p| p * 512).collect()
    };
    if !q {
        sizes.extend([12 * 1024, 48 * 1024]);
        sizes.sort_unstable();
    }
    for base in all {
        for &s in &sizes {
            let t = if base.starts_with('S') {
                Some(b.sequential_target(s, 1))
            } else {
                None
            };
            b.add(RunDef {
                bench: "granularity",
                series: base,
                parameter: "IOSize",
                value: s as f64,
                label: format_size(s),
                primary: basic(base, s),
                mix: None,
                timing: Timing::Consecutive,
                parallel: 1,
                target: t,
            });
        }
    }
}

/// The alignment micro-benchmark (uFLIP section 3.2): IOShift in [2^0 .. IOSize/512] x 512 B (0 is the baseline).
fn alignment(b: &mut Builder) {
    let io = b.cfg.io_size_bytes;
    let q = b.cfg.quick;
    let all = BASELINES;
    let max_exp = (io / 512).trailing_zeros();
    let shifts: Vec<u64> = if q {
        vec![0, 512, io / 2]
    } else {
        std::iter::once(0)
            .chain(powers(0, max_exp.saturating_sub(1)).map(|p| p * 512))
            .collect()
    };
    for base in all {
        for &shift in &shifts {
            let mut p = basic(base, io);
            p.io_shift_bytes = shift;
            let t = if base.starts_with('S') {
                Some(b.sequential_target(io, 1) + io)
            } else {
                None
            };
            b.add(RunDef {
                bench: "alignment",
                series: base,
                parameter: "IOShift",
                value: shift as f64,
                label: format_size(shift),
                primary: p,
                mix: None,
                timing: Timing::Consecutive,
                parallel: 1,
                target: t,
            });
        }
    }
}

/// The locality micro-benchmark (uFLIP section 3.2): TargetSize: Rnd [2^0 .. 2^16] x IOSize, Seq [2^0 .. 2^8] x IOSize.
fn locality(b: &mut Builder) {
    let io = b.cfg.io_size_bytes;
    let q = b.cfg.quick;
    let all = BASELINES;
    let device_bytes = b.device_bytes;
    for base in all {
        let hi = if base.starts_with('R') {
            if q {
                12
            } else {
                16
            }
        } else if q {
            4
        } else {
            8
        };
        let step = if q { 4 } else { 1 };
        for e in (0..=hi).step_by(step) {
            let ts = (io << e).min(device_bytes / io * io);
            b.add(RunDef {
                bench: "locality",
                series: base,
                parameter: "TargetSize",
                value: ts as f64,
                label: format_size(ts),
                primary: basic(base, io),
                mix: None,
                timing: Timing::Consecutive,
                parallel: 1,
                target: Some(ts),
            });
        }
    }
}

/// The partitioning micro-benchmark (uFLIP section 3.2).
fn partitioning(b: &mut Builder) {
    let io = b.cfg.io_size_bytes;
    let q = b.cfg.quick;
    for base in ["SR", "SW"] {
        for p in powers(0, if q { 4 } else { 8 }).filter(|p| !q || p % 4 == 1 || *p == 16) {
            let loc = Basic {
                location: Location::Partitioned { partitions: p },
                ..basic(base, io)
            };
            let t = b.sequential_target(io, 1).max(p * io);
            b.add(RunDef {
                bench: "partitioning",
                series: base,
                parameter: "Partitions",
                value: p as f64,
                label: p.to_string(),
                primary: loc,
                mix: None,
                timing: Timing::Consecutive,
                parallel: 1,
                target: Some(t),
            });
        }
    }
}

/// The order micro-benchmark (uFLIP section 3.2).
fn order(b: &mut Builder) {
    let cfg = b.cfg;
    let io = b.cfg.io_size_bytes;
    let device_bytes = b.device_bytes;
    for base in ["SR", "SW"] {
        for incr in order_incrs(cfg) {
            // One placement rule for every Incr (order_placement): one
            // pass from the run's TargetOffset, never wrapping. Runs
            // whose pass cannot hold min_ios IOs are not planned; the
            // summary names them (unplaced_large_incrs).
            let Some(place) = order_placement(cfg, device_bytes, incr) else {
                continue;
            };
            let loc = Basic {
                location: Location::Ordered { incr },
                ..basic(base, io)
            };
            b.add(RunDef {
                bench: "order",
                series: base,
                parameter: "Incr",
                value: incr as f64,
                label: format!("incr{incr}"),
                primary: loc,
                mix: None,
                timing: Timing::Consecutive,
                parallel: 1,
                target: Some(place.target_size_bytes),
            });
            let run = b.runs.last_mut().expect("just added");
            run.spec.io_count = place.io_count;
        }
    }
}

/// The parallelism micro-benchmark (uFLIP section 3.2).
fn parallelism(b: &mut Builder) {
    let io = b.cfg.io_size_bytes;
    let q = b.cfg.quick;
    let all = BASELINES;
    for base in all {
        for d in powers(0, if q { 2 } else { 4 }) {
            let t = if base.starts_with('S') {
                Some(b.sequential_target(io, d))
            } else {
                None
            };
            b.add(RunDef {
                bench: "parallelism",
                series: base,
                parameter: "ParallelDegree",
                value: d as f64,
                label: d.to_string(),
                primary: basic(base, io),
                mix: None,
                timing: Timing::Consecutive,
                parallel: d,
                target: t,
            });
        }
    }
}

/// The mix micro-benchmark (uFLIP section 3.2): Pattern #1 / #2: SR/RR, SR/SW, SR/RW, RR/SW, RR/RW, SW/RW; Ratio [2^0 .. 2^6].
fn mix(b: &mut Builder) {
    let io = b.cfg.io_size_bytes;
    let q = b.cfg.quick;
    let pairs = [
        ("SR", "RR"),
        ("SR", "SW"),
        ("SR", "RW"),
        ("RR", "SW"),
        ("RR", "RW"),
        ("SW", "RW"),
    ];
    for (one, two) in pairs {
        for r in powers(0, 6).filter(|r| !q || *r == 1 || *r == 16) {
            let mix = Mix {
                secondary: basic(two, io),
                ratio_primary: r,
                ratio_secondary: 1,
                random_order: false,
                shared_location: false,
            };
            let seq = one.starts_with('S') || two.starts_with('S');
            let t = if seq {
                Some(b.sequential_target(io, 1))
            } else {
                None
            };
            b.add(RunDef {
                bench: "mix",
                series: &format!("{one}-{two}"),
                parameter: "Ratio",
                value: r as f64,
                label: format!("{r}to1"),
                primary: basic(one, io),
                mix: Some(mix),
                timing: Timing::Consecutive,
                parallel: 1,
                target: t,
            });
        }
    }
}

/// The pause micro-benchmark (uFLIP section 3.2): Pause [2^0 .. 2^8] x 0.1 ms.
fn pause(b: &mut Builder) {
    let io = b.cfg.io_size_bytes;
    let q = b.cfg.quick;
    let all = BASELINES;
    for base in all {
        for p in powers(0, 8).filter(|p| !q || [1, 16, 256].contains(p)) {
            let ns = p * 100_000;
            let t = if base.starts_with('S') {
                Some(b.sequential_target(io, 1))
            } else {
                None
            };
            b.add(RunDef {
                bench: "pause",
                series: base,
                parameter: "Pause_ms",
                value: ns as f64 / 1e6,
                label: format!("{}us", ns / 1000),
                primary: basic(base, io),
                mix: None,
                timing: Timing::Pause { pause_ns: ns },
                parallel: 1,
                target: t,
            });
        }
    }
}

/// The bursts micro-benchmark (uFLIP section 3.2): Pause 100 ms, Burst [2^0 .. 2^6] x 10.
fn bursts(b: &mut Builder) {
    let io = b.cfg.io_size_bytes;
    let q = b.cfg.quick;
    let all = BASELINES;
    for base in all {
        for k in powers(0, 6).filter(|k| !q || [1, 8].contains(k)) {
            let burst = k * 10;
            let t = if base.starts_with('S') {
                Some(b.sequential_target(io, 1))
            } else {
                None
            };
            b.add(RunDef {
                bench: "bursts",
                series: base,
                parameter: "Burst",
                value: burst as f64,
                label: burst.to_string(),
                primary: basic(base, io),
                mix: None,
                timing: Timing::Burst {
                    pause_ns: 100_000_000,
                    burst,
                },
                parallel: 1,
                target: t,
            });
        }
    }
}

/// The journal's configuration as uFLIP's typed one; `None` for a journal
/// of an older flashlab whose configuration no longer parses (its summary
/// still gets written: crates/suite/src/session.rs notes what is unknown).
fn typed_config(config: &serde_json::Value) -> Option<UflipConfig> {
    serde_json::from_value(config.clone()).ok()
}

/// The IOSize of the baseline patterns Table 3 is read at: the
/// configuration's, or uFLIP's 32 KiB where the configuration does not parse.
fn baseline_io_size_bytes(config: Option<&UflipConfig>) -> u64 {
    config.map_or(UflipConfig::default().io_size_bytes, |c| c.io_size_bytes)
}

#[cfg(test)]
mod typed_config_tests {
    use super::*;

    /// Table 3 is read at the journal's own IOSize (a `--io-size 4KiB`
    /// run's baselines are 4 KiB patterns), taken from the typed
    /// configuration; one that no longer parses falls back to uFLIP's 32 KiB.
    #[test]
    fn table3_reads_the_io_size_of_the_typed_config() {
        let config = UflipConfig {
            io_size_bytes: 4096,
            ..UflipConfig::default()
        };
        let json = serde_json::to_value(&config).unwrap();
        assert_eq!(typed_config(&json), Some(config.clone()));
        assert_eq!(baseline_io_size_bytes(typed_config(&json).as_ref()), 4096);
        let older = serde_json::json!({"io_size_bytes": 4096});
        assert_eq!(typed_config(&older), None);
        assert_eq!(baseline_io_size_bytes(None), 32 * 1024);
    }
}
