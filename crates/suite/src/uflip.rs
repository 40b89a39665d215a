//! The uFLIP benchmark (Bouganim, Jónsson, Bonnet, CIDR 2009): the nine
//! micro-benchmarks of Table 1 over the four baseline patterns, planned with
//! the methodology of section 4.

use flashlab_device::Mode;
use flashlab_pattern::rng::derive_seed;
use flashlab_pattern::units::format_size;
use flashlab_pattern::{Basic, Location, Mix, PatternSpec, Timing};
use serde::{Deserialize, Serialize};

use crate::plan::{Plan, RunStep, Step};
use crate::state::StateMethod;

/// The nine micro-benchmarks, in uFLIP's order.
pub const BENCHMARKS: [&str; 9] = [
    "granularity",
    "alignment",
    "locality",
    "partitioning",
    "order",
    "parallelism",
    "mix",
    "pause",
    "bursts",
];

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct UflipConfig {
    pub state: StateMethod,
    /// IOSize of the baseline patterns (uFLIP: 32 KiB).
    pub io_size_bytes: u64,
    /// Bounds of the automatic IOCount.
    pub min_ios: u64,
    pub max_ios: u64,
    /// IOCount of the long calibration runs (start-up and period).
    pub calibration_ios: u64,
    /// Target half-width of the 95 % confidence interval, relative to the mean.
    pub bound: f64,
    /// TargetSize of random patterns (default: the whole device).
    pub random_target_bytes: Option<u64>,
    pub seed: u64,
    /// The shortest pause between runs, whatever the measurement says (uFLIP: 1 s).
    pub min_pause_ns: u64,
    /// Which micro-benchmarks to run (all by default).
    pub benchmarks: Vec<String>,
    /// Reduced parameter ranges, for demonstrations and tests.
    pub quick: bool,
}

impl Default for UflipConfig {
    fn default() -> Self {
        UflipConfig {
            state: StateMethod::Random,
            io_size_bytes: 32 * 1024,
            min_ios: 256,
            max_ios: 4096,
            calibration_ios: 4096,
            bound: 0.05,
            random_target_bytes: None,
            seed: 42,
            min_pause_ns: 1_000_000_000,
            benchmarks: BENCHMARKS.iter().map(|s| s.to_string()).collect(),
            quick: false,
        }
    }
}

fn basic(baseline: &str, io_size: u64) -> Basic {
    let (location, mode) = match baseline {
        "SR" => (Location::Sequential, Mode::Read),
        "RR" => (Location::Random, Mode::Read),
        "SW" => (Location::Sequential, Mode::Write),
        "RW" => (Location::Random, Mode::Write),
        other => unreachable!("not a baseline: {other}"),
    };
    Basic {
        location,
        mode,
        io_size_bytes: io_size,
        io_shift_bytes: 0,
    }
}

/// The baseline a basic pattern behaves like, for IOIgnore and batch sizes.
pub fn baseline_of(b: &Basic) -> &'static str {
    match (&b.location, b.mode) {
        (Location::Random | Location::RandomOnce, Mode::Read) => "RR",
        (Location::Random | Location::RandomOnce, _) => "RW",
        (_, Mode::Read) => "SR",
        _ => "SW",
    }
}

/// Whether a run writes non-randomly: such runs get target space of their
/// own, so that they do not disturb the random state (uFLIP 4.1).
fn needs_own_space(spec: &PatternSpec) -> bool {
    spec.basics().any(|b| {
        b.mode.modifies() && !matches!(b.location, Location::Random | Location::RandomOnce)
    })
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

fn powers(lo: u32, hi: u32) -> impl Iterator<Item = u64> {
    (lo..=hi).map(|e| 1u64 << e)
}

/// The smallest Incr averaged in Table 3's Large Incr column: at uFLIP's
/// 32 KiB IOSize, Incr 32 puts 1 MiB between consecutive IOs (section 5.2:
/// "gaps from one 1 MB to 8 MB", Incr 32 to 256).
pub const LARGE_INCR_MIN: i64 = 32;

/// The order micro-benchmark's Incr values (uFLIP Table 1: -1, 0, 2^0 .. 2^8).
pub fn order_incrs(cfg: &UflipConfig) -> Vec<i64> {
    if cfg.quick {
        vec![-1, 0, 1, 64]
    } else {
        [-1i64, 0]
            .into_iter()
            .chain(powers(0, 8).map(|p| p as i64))
            .collect()
    }
}

/// Where one order run goes: its IOCount (the cap of the adaptive run)
/// and TargetSize.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct OrderPlacement {
    pub io_count: u64,
    pub target_size_bytes: u64,
}

/// The space one order run may use: half the device, so that a run and
/// the next sequential-write run still fit between two state enforcements.
pub fn order_space_bytes(cfg: &UflipConfig, device_bytes: u64) -> u64 {
    device_bytes / 2 / cfg.io_size_bytes * cfg.io_size_bytes
}

/// The one placement rule of every order run (uFLIP Table 1: LBA =
/// TargetOffset + Incr x i x IOSize): the run writes (or reads) one pass
/// without wrapping, so every IO after the first lands |Incr| x IOSize from
/// the previous one, whatever Incr. TargetSize is IOCount x max(|Incr|, 1)
/// x IOSize, and IOCount is max_ios or, for large Incr on a small device,
/// as many IOs as fit in [`order_space_bytes`]. A run that cannot hold
/// min_ios IOs that way is not planned (None): capping its TargetSize
/// would make it wrap and rewrite the blocks its first pass opened, a
/// different pattern from the other Incr values averaged with it.
pub fn order_placement(cfg: &UflipConfig, device_bytes: u64, incr: i64) -> Option<OrderPlacement> {
    let step = incr.unsigned_abs().max(1) * cfg.io_size_bytes;
    let io_count = cfg.max_ios.min(order_space_bytes(cfg, device_bytes) / step);
    (io_count >= cfg.min_ios.max(1)).then_some(OrderPlacement {
        io_count,
        target_size_bytes: io_count * step,
    })
}

/// The Large Incr values (Incr >= [`LARGE_INCR_MIN`]) of the configuration
/// that [`order_placement`] left out of `plan`, each with the space one
/// pass of min_ios IOs would need: what the summary says about them.
pub fn unplaced_large_incrs(cfg: &UflipConfig, plan: &Plan) -> Vec<(i64, u64)> {
    if !cfg.benchmarks.iter().any(|b| b == "order") {
        return Vec::new();
    }
    let planned: Vec<f64> = plan
        .steps
        .iter()
        .flat_map(|s| s.runs())
        .filter(|r| r.experiment == "order" && r.series == "SW")
        .map(|r| r.value)
        .collect();
    order_incrs(cfg)
        .into_iter()
        .filter(|&i| i >= LARGE_INCR_MIN && !planned.contains(&(i as f64)))
        .map(|i| (i, cfg.min_ios.max(1) * i.unsigned_abs() * cfg.io_size_bytes))
        .collect()
}

/// Builds the uFLIP plan for a device of `device_bytes`.
pub fn plan(cfg: &UflipConfig, device_bytes: u64) -> Plan {
    let io = cfg.io_size_bytes;
    let random_target = cfg.random_target_bytes.unwrap_or(device_bytes) / io * io;
    let mut b = Builder {
        cfg,
        device_bytes,
        random_target,
        runs: Vec::new(),
    };
    let on = |name: &str| cfg.benchmarks.iter().any(|x| x == name);
    let q = cfg.quick;
    let all = ["SR", "RR", "SW", "RW"];

    if on("granularity") {
        // [2^0 .. 2^9] x 512 B, plus some non-powers of 2.
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
    if on("alignment") {
        // IOShift in [2^0 .. IOSize/512] x 512 B (0 is the baseline).
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
    if on("locality") {
        // TargetSize: Rnd [2^0 .. 2^16] x IOSize, Seq [2^0 .. 2^8] x IOSize.
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
    if on("partitioning") {
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
    if on("order") {
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
    if on("parallelism") {
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
    if on("mix") {
        // Pattern #1 / #2: SR/RR, SR/SW, SR/RW, RR/SW, RR/RW, SW/RW; Ratio [2^0 .. 2^6].
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
    if on("pause") {
        // Pause [2^0 .. 2^8] x 0.1 ms.
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
    if on("bursts") {
        // Pause 100 ms, Burst [2^0 .. 2^6] x 10.
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

    // Runs that write sequentially go last, each in space of its own; when
    // that space runs out the state is enforced again (uFLIP 4.2).
    let (mut own, shared): (Vec<RunStep>, Vec<RunStep>) =
        b.runs.into_iter().partition(|r| needs_own_space(&r.spec));
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

#[cfg(test)]
mod tests {
    use super::*;
    use flashlab_pattern::all_ios;

    const GIB: u64 = 1 << 30;

    /// The configurations the suite is run with: the default, `--quick`,
    /// and `flashlab validate`'s (`--max-ios 1024`).
    fn configs() -> Vec<UflipConfig> {
        let only_order = |c: UflipConfig| UflipConfig {
            benchmarks: vec!["order".into()],
            ..c
        };
        vec![
            only_order(UflipConfig::default()),
            only_order(UflipConfig {
                quick: true,
                ..UflipConfig::default()
            }),
            only_order(UflipConfig {
                max_ios: 1024,
                calibration_ios: 1024,
                ..UflipConfig::default()
            }),
        ]
    }

    fn order_runs(p: &Plan) -> Vec<&RunStep> {
        p.steps
            .iter()
            .flat_map(|s| s.runs())
            .filter(|r| r.experiment == "order")
            .collect()
    }

    #[test]
    fn every_order_run_visits_one_pass_at_incr_times_iosize_without_wrapping() {
        for device in [GIB, 4 * GIB, 32 * GIB] {
            for cfg in configs() {
                let p = plan(&cfg, device);
                let runs = order_runs(&p);
                assert!(!runs.is_empty());
                for r in runs {
                    let Location::Ordered { incr } = r.spec.primary.location else {
                        panic!("{} is not ordered", r.name);
                    };
                    let io = cfg.io_size_bytes as i64;
                    let s = &r.spec;
                    assert!(
                        s.target_offset_bytes + s.target_size_bytes <= device,
                        "{} leaves the device",
                        r.name
                    );
                    assert_eq!(
                        s.target_size_bytes,
                        s.io_count * incr.unsigned_abs().max(1) * cfg.io_size_bytes,
                        "{}: TargetSize is not IOCount x |Incr| x IOSize",
                        r.name
                    );
                    // Every IO the run may issue (its cap) is exactly
                    // Incr x IOSize after the previous one: no wrap.
                    let offsets: Vec<i64> = all_ios(s).map(|io| io.offset_bytes as i64).collect();
                    assert_eq!(offsets.len() as u64, s.io_count);
                    for w in offsets.windows(2) {
                        assert_eq!(w[1] - w[0], incr * io, "{} wraps", r.name);
                    }
                }
            }
        }
    }

    #[test]
    fn large_incr_runs_use_one_rule_and_the_ones_that_do_not_fit_are_named() {
        // flashlab validate's device and IOCounts: 1 GiB, up to 1024 IOs,
        // at least 256. Half the device (512 MiB) holds 512 IOs at Incr 32
        // (1 MiB apart) and 256 at Incr 64; Incr 128 and 256 would need
        // 1 GiB and 2 GiB for 256 IOs, so they are left out rather than
        // wrapped onto the blocks their first pass opened.
        let cfg = &configs()[2];
        let p = plan(cfg, GIB);
        let large: Vec<(i64, u64, u64)> = order_runs(&p)
            .into_iter()
            .filter(|r| r.series == "SW" && r.value >= LARGE_INCR_MIN as f64)
            .map(|r| (r.value as i64, r.spec.io_count, r.spec.target_size_bytes))
            .collect();
        assert_eq!(large, vec![(32, 512, 512 << 20), (64, 256, 512 << 20)]);
        assert_eq!(
            unplaced_large_incrs(cfg, &p),
            vec![(128, GIB), (256, 2 * GIB)]
        );
        // On a 32 GiB device (the paper's size) every Incr gets max_ios IOs.
        let p = plan(cfg, 32 * GIB);
        assert!(unplaced_large_incrs(cfg, &p).is_empty());
        for r in order_runs(&p) {
            assert_eq!(r.spec.io_count, 1024, "{}", r.name);
        }
    }

    #[test]
    fn sequential_order_writes_get_space_of_their_own() {
        // The same TargetOffset rule as every sequential-write run: disjoint
        // from the other sequential-write runs since the last state enforcement.
        for cfg in configs() {
            let p = plan(&cfg, GIB);
            let mut used: Vec<(u64, u64)> = Vec::new();
            for step in &p.steps {
                match step {
                    Step::EnforceState { .. } => used.clear(),
                    Step::Run(r) if needs_own_space(&r.spec) => {
                        let (a, b) = (
                            r.spec.target_offset_bytes,
                            r.spec.target_offset_bytes + r.spec.target_size_bytes,
                        );
                        assert!(
                            used.iter().all(|&(x, y)| b <= x || a >= y),
                            "{} overlaps an earlier sequential write",
                            r.name
                        );
                        used.push((a, b));
                    }
                    _ => {}
                }
            }
        }
    }
}
