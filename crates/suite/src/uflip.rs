//! The uFLIP benchmark (Bouganim, Jónsson, Bonnet, CIDR 2009): the nine
//! micro-benchmarks of Table 1 over the four baseline patterns, planned with
//! the methodology of section 4.

use flashlab_device::Mode;
use flashlab_pattern::{Basic, Location, PatternSpec};
use serde::{Deserialize, Serialize};

use crate::plan::Plan;
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

pub(crate) fn basic(baseline: &str, io_size: u64) -> Basic {
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
pub(crate) fn needs_own_space(spec: &PatternSpec) -> bool {
    spec.basics().any(|b| {
        b.mode.modifies() && !matches!(b.location, Location::Random | Location::RandomOnce)
    })
}

pub(crate) fn powers(lo: u32, hi: u32) -> impl Iterator<Item = u64> {
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::plan::{RunStep, Step};
    use crate::suites::uflip::plan;
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
