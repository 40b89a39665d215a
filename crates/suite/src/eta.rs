//! A suite's remaining time: what is known in advance is added exactly, and
//! what is not is learned per IO class from the runs so far.
//!
//! One smoothed duration per run (the estimate before this module) is wrong
//! on a real device by an order of magnitude either way: uFLIP's pause and
//! burst runs spend most of their time idle (a 25.6 ms pause after each of
//! a few hundred IOs, a 100 ms pause after every burst), so they take ~100x
//! longer than the runs around them, and a random write can cost 100x a
//! sequential read. So the estimate splits a run's time in two:
//!
//! - **Known time**, added exactly: the pauses and bursts of a run's time
//!   function (uFLIP's Pause and Bursts micro-benchmarks; `Timing`), the
//!   pause the runner waits between runs, the settle after state
//!   enforcement, and a time-based run's `--runtime`. On a simulated device
//!   idle time is simulated time and costs no wall time, so none is added.
//! - **IO time**: IOs x the per-IO cost of the run's class. A class is a
//!   mode (read, write, trim) x sequential or random x IOSize (a power of
//!   two) x outstanding IOs (a power of two); a mix is the ratio-weighted
//!   cost of its two parts. Each finished run adds one observation (its IO
//!   time over its IOs) and a class's cost is the median of its
//!   observations, so one stalled run does not swing it.
//!
//! A class not seen yet borrows from the classes that were, through bounds
//! that hold on any storage device: a larger IO costs at least as much and
//! at most proportionally more (per-byte cost does not grow with size);
//! more IOs outstanding cost at most as much per IO and at most
//! proportionally less. Across sequential/random and across modes no bound
//! holds, so an assumed factor ([`CROSS_CLASS_FACTOR`]) is used each way.
//! The estimate is then an interval, [`Span`], which the CLI prints as a
//! range while it is wide. An adaptive run's IO count (it stops once its
//! mean is known within the bound) is learned the same way, as the fraction
//! of its IOCount cap that finished adaptive runs used.
//!
//! What a step takes beyond its runs' own time and the known pauses
//! (saving each run's records and statistics, the journal) is learned too,
//! as a median time per run.
//!
//! Nothing here reads a clock: the caller passes times (wall time on a
//! real device, or anything monotonic), so the estimate is testable with
//! synthetic run histories.

use std::collections::BTreeMap;

use flashlab_pattern::{Basic, Location, PatternSpec, Timing};

use crate::plan::{RunStep, Step};
use crate::runner::REAL_SETTLE_NS;
use crate::state::StateMethod;

/// How far a class's per-IO cost may be from a known class's when they
/// differ in sequential/random or in mode (either way). assumed: uFLIP's
/// Table 3 has random writes up to about 100x the cost of sequential ones
/// on its devices, and reads within that of writes; no physical bound.
pub const CROSS_CLASS_FACTOR: f64 = 100.0;

/// What one IO's cost is learned by.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct IoClass {
    /// `Mode::code()`: read, write, trim.
    pub mode: u8,
    pub random: bool,
    /// IOSize rounded down to a power of two.
    pub size_bytes: u64,
    /// ParallelDegree x queue depth, rounded down to a power of two.
    pub outstanding: u64,
}

fn pow2_floor(x: u64) -> u64 {
    if x <= 1 {
        1
    } else {
        1 << (63 - x.leading_zeros())
    }
}

impl IoClass {
    pub fn new(
        mode: flashlab_device::Mode,
        random: bool,
        size_bytes: u64,
        outstanding: u64,
    ) -> IoClass {
        IoClass {
            mode: mode.code(),
            random,
            size_bytes: pow2_floor(size_bytes),
            outstanding: pow2_floor(outstanding),
        }
    }

    /// The cost interval of `self` given `known` costs `cost_ns` per IO.
    fn bounds_from(&self, known: &IoClass, cost_ns: f64) -> (f64, f64) {
        let size = self.size_bytes as f64 / known.size_bytes as f64;
        let (mut lo, mut hi) = (cost_ns * size.min(1.0), cost_ns * size.max(1.0));
        let out = known.outstanding as f64 / self.outstanding as f64;
        lo *= out.min(1.0);
        hi *= out.max(1.0);
        if self.random != known.random {
            lo /= CROSS_CLASS_FACTOR;
            hi *= CROSS_CLASS_FACTOR;
        }
        if self.mode != known.mode {
            lo /= CROSS_CLASS_FACTOR;
            hi *= CROSS_CLASS_FACTOR;
        }
        (lo, hi)
    }

    /// How unlike `other` this class is: mode first, then locality, then
    /// the factors of size and outstanding IOs.
    fn distance(&self, other: &IoClass) -> u64 {
        let log2 = |x: u64| 63 - x.leading_zeros() as i64;
        (self.mode != other.mode) as u64 * 1000
            + (self.random != other.random) as u64 * 100
            + (log2(self.size_bytes) - log2(other.size_bytes)).unsigned_abs()
            + (log2(self.outstanding) - log2(other.outstanding)).unsigned_abs()
    }
}

/// Whether a location function jumps around (random) or walks (sequential,
/// also with gaps, in order or in partitions).
fn is_random(location: &Location) -> bool {
    !matches!(
        location,
        Location::Sequential
            | Location::Ordered { .. }
            | Location::Partitioned { .. }
            | Location::Stride { .. }
            | Location::SkipSequential { .. }
    )
}

/// The classes of a pattern's IOs and their shares of its IOs.
pub fn classes_of(spec: &PatternSpec) -> Vec<(IoClass, f64)> {
    let outstanding = spec.parallel_degree.max(1) * spec.queue_depth.max(1);
    // A bssplit's sizes drawn by count: the mean size stands for them.
    let split_mean = (!spec.io_size_split.is_empty()).then(|| {
        spec.io_size_split
            .iter()
            .map(|s| s.size_bytes * s.percent)
            .sum::<u64>()
            / 100
    });
    let class = |b: &Basic, location: &Location| {
        IoClass::new(
            b.mode,
            is_random(location),
            split_mean.unwrap_or(b.io_size_bytes),
            outstanding,
        )
    };
    match &spec.mix {
        None => vec![(class(&spec.primary, &spec.primary.location), 1.0)],
        Some(m) => {
            let total = (m.ratio_primary + m.ratio_secondary).max(1) as f64;
            let secondary_location = if m.shared_location {
                &spec.primary.location
            } else {
                &m.secondary.location
            };
            vec![
                (
                    class(&spec.primary, &spec.primary.location),
                    m.ratio_primary as f64 / total,
                ),
                (
                    class(&m.secondary, secondary_location),
                    m.ratio_secondary as f64 / total,
                ),
            ]
        }
    }
}

/// An estimate with its interval, in nanoseconds (or IOs): `lo <= mid <= hi`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Span {
    pub lo: f64,
    pub mid: f64,
    pub hi: f64,
}

impl Span {
    pub const ZERO: Span = Span {
        lo: 0.0,
        mid: 0.0,
        hi: 0.0,
    };

    pub fn exact(x: f64) -> Span {
        Span {
            lo: x,
            mid: x,
            hi: x,
        }
    }

    /// From bounds, the middle being their geometric mean.
    pub fn between(lo: f64, hi: f64) -> Span {
        let (lo, hi) = (lo.min(hi), hi.max(lo));
        Span {
            lo,
            mid: (lo * hi).sqrt(),
            hi,
        }
    }

    fn plus(self, o: Span) -> Span {
        Span {
            lo: self.lo + o.lo,
            mid: self.mid + o.mid,
            hi: self.hi + o.hi,
        }
    }

    fn times(self, o: Span) -> Span {
        Span {
            lo: self.lo * o.lo,
            mid: self.mid * o.mid,
            hi: self.hi * o.hi,
        }
    }

    fn map(self, f: impl Fn(f64) -> f64) -> Span {
        Span {
            lo: f(self.lo),
            mid: f(self.mid),
            hi: f(self.hi),
        }
    }

    /// Whether the interval is wide enough to be shown as a range: its
    /// ends more than 30 % apart.
    pub fn is_wide(&self) -> bool {
        self.hi > 1.3 * self.lo.max(1.0)
    }
}

fn median(xs: &[f64]) -> Option<f64> {
    if xs.is_empty() {
        return None;
    }
    let mut v = xs.to_vec();
    v.sort_by(f64::total_cmp);
    let n = v.len();
    Some(if n % 2 == 1 {
        v[n / 2]
    } else {
        (v[n / 2 - 1] + v[n / 2]) / 2.0
    })
}

/// What an IO after an idle gap is learned by: the primary's mode and
/// locality, the gap (a pause, or the pause between bursts) rounded down
/// to a power of two of nanoseconds (its log2), and the burst length's
/// log2 plus one (0: a pause after every IO). A burst's IOs are learned
/// with their pause: on the test machine a burst of 80 random writes
/// after 100 ms idle cost 3.7 ms per write, 7x a back-to-back one.
pub type WakeKey = (u8, bool, u32, u32);

/// The wake-up key of a pattern with pauses, and how many pauses a stream
/// of `ios_per_stream` IOs makes (as [`idle_ns`] counts them: with more
/// IOs outstanding the pauses after IOs that complete together overlap).
pub fn wake_of(spec: &PatternSpec, ios_per_stream: f64) -> Option<(WakeKey, f64)> {
    let n = ios_per_stream.max(1.0);
    let (pause_ns, burst, pauses) = match spec.timing {
        Timing::Consecutive => return None,
        Timing::Pause { pause_ns } => (pause_ns, 0, (n - 1.0) / spec.queue_depth.max(1) as f64),
        Timing::Burst { pause_ns, burst } => (
            pause_ns,
            64 - burst.max(1).leading_zeros(),
            ((n - 1.0) / burst.max(1) as f64).floor(),
        ),
    };
    let key = (
        spec.primary.mode.code(),
        is_random(&spec.primary.location),
        63 - pause_ns.max(1).leading_zeros(),
        burst,
    );
    Some((key, pauses))
}

/// Per-IO costs and adaptive IO fractions learned from finished runs.
#[derive(Clone, Debug, Default)]
pub struct CostModel {
    per_io_ns: BTreeMap<IoClass, Vec<f64>>,
    /// Adaptive runs' IOs over their cap, by the primary's (mode, random)
    /// and whether the run pauses.
    io_fraction: BTreeMap<(u8, bool, bool), Vec<f64>>,
    /// What each pause costs beyond itself (the wake-up cost of the IO
    /// after it), per [`WakeKey`]. An IO after an idle gap is slower than
    /// one after another IO: the device and the host leave their idle
    /// states (power states, interrupt moderation, a cold controller
    /// cache). On a 1 GiB O_DIRECT file of this project's test machine a
    /// sequential 32 KiB read took 70 us back to back and 800 us after
    /// each 25.6 ms pause, a random write 95 us and 5.3 ms: pause runs
    /// took 1.03-1.2x their pauses plus back-to-back IOs, the whole
    /// difference between the estimate and the truth. So this is learned
    /// apart from the back-to-back costs, per pause length.
    wake_ns: BTreeMap<WakeKey, Vec<f64>>,
}

impl CostModel {
    pub fn is_empty(&self) -> bool {
        self.per_io_ns.is_empty()
    }

    /// One measured per-IO cost of a class.
    pub fn observe(&mut self, class: IoClass, per_io_ns: f64) {
        if per_io_ns.is_finite() && per_io_ns >= 0.0 {
            self.per_io_ns.entry(class).or_default().push(per_io_ns);
        }
    }

    /// The per-IO cost of one class: its median when seen, else the
    /// intersection of the bounds the known classes give, nearest first
    /// (a bound that would leave nothing, noise between measurements, is
    /// skipped).
    pub fn per_io(&self, class: &IoClass) -> Option<Span> {
        if let Some(m) = self.per_io_ns.get(class).and_then(|v| median(v)) {
            return Some(Span::exact(m));
        }
        let mut known: Vec<(u64, (f64, f64))> = self
            .per_io_ns
            .iter()
            .filter_map(|(k, v)| Some((class.distance(k), class.bounds_from(k, median(v)?))))
            .collect();
        known.sort_by_key(|(d, _)| *d);
        let mut it = known.into_iter();
        let (_, (mut lo, mut hi)) = it.next()?;
        for (_, (l, h)) in it {
            let (nl, nh) = (lo.max(l), hi.min(h));
            if nl <= nh {
                (lo, hi) = (nl, nh);
            }
        }
        Some(Span::between(lo, hi))
    }

    /// The per-IO cost of a pattern: its classes weighted by their shares.
    pub fn spec_per_io(&self, spec: &PatternSpec) -> Option<Span> {
        let mut total = Span::ZERO;
        for (class, share) in classes_of(spec) {
            total = total.plus(self.per_io(&class)?.map(|x| x * share));
        }
        Some(total)
    }

    /// A finished run of `spec`: `ios` IOs in `io_time_ns` (its known idle
    /// time already taken out). A mix's time is shared among its parts in
    /// proportion to what the model expected of each; a part not seen yet
    /// gets what the seen part leaves of the measurement.
    pub fn observe_run(&mut self, spec: &PatternSpec, ios: u64, io_time_ns: f64) {
        if ios == 0 {
            return;
        }
        let per_io = io_time_ns / ios as f64;
        let parts = classes_of(spec);
        if parts.len() == 1 {
            self.observe(parts[0].0, per_io);
            return;
        }
        let known: Vec<Option<f64>> = parts
            .iter()
            .map(|(c, _)| self.per_io_ns.get(c).and_then(|v| median(v)))
            .collect();
        match (known[0], known[1]) {
            (Some(a), Some(b)) => {
                let expected = a * parts[0].1 + b * parts[1].1;
                if expected > 0.0 {
                    let scale = per_io / expected;
                    self.observe(parts[0].0, a * scale);
                    self.observe(parts[1].0, b * scale);
                }
            }
            (Some(a), None) | (None, Some(a)) => {
                let (seen, unseen) = if known[0].is_some() { (0, 1) } else { (1, 0) };
                let rest = (per_io - a * parts[seen].1) / parts[unseen].1.max(f64::MIN_POSITIVE);
                if rest > 0.0 {
                    self.observe(parts[unseen].0, rest);
                }
            }
            (None, None) => {
                self.observe(parts[0].0, per_io);
                self.observe(parts[1].0, per_io);
            }
        }
    }

    /// One measured wake-up cost: what one pause of `key` cost beyond
    /// itself and a back-to-back IO.
    pub fn observe_wake(&mut self, key: WakeKey, per_pause_ns: f64) {
        if per_pause_ns.is_finite() {
            self.wake_ns
                .entry(key)
                .or_default()
                .push(per_pause_ns.max(0.0));
        }
    }

    /// The wake-up cost of one pause of `key`: its median when seen. Else
    /// at least the largest of its class's shorter gaps (a longer idle gap
    /// lets the device and host sink into deeper idle states, so waking
    /// costs at least as much; 0 when none was seen) and at most the
    /// smallest of its class's longer gaps; without one, the largest other
    /// classes paid at the same gap and burst length, or, without those,
    /// at any gap at least as long (any gap when none is). The middle is
    /// the median of the other classes' at the same gap and burst length.
    /// None before any pause has run.
    pub fn wake(&self, key: WakeKey) -> Option<Span> {
        if let Some(m) = self.wake_ns.get(&key).and_then(|v| median(v)) {
            return Some(Span::exact(m));
        }
        let medians: Vec<(WakeKey, f64)> = self
            .wake_ns
            .iter()
            .filter_map(|(k, v)| Some((*k, median(v)?)))
            .collect();
        if medians.is_empty() {
            return None;
        }
        let (mode, random, gap, burst) = key;
        let of = |keep: &dyn Fn(&WakeKey) -> bool| -> Vec<f64> {
            medians
                .iter()
                .filter(|(k, _)| keep(k))
                .map(|(_, m)| *m)
                .collect()
        };
        let max = |v: &[f64]| v.iter().copied().reduce(f64::max);
        let min = |v: &[f64]| v.iter().copied().reduce(f64::min);
        let same_class = |k: &WakeKey| k.0 == mode && k.1 == random && k.3 == burst;
        let lo = max(&of(&|k| same_class(k) && k.2 < gap)).unwrap_or(0.0);
        let same_gap = of(&|k| k.2 == gap && k.3 == burst);
        let hi = min(&of(&|k| same_class(k) && k.2 > gap))
            .or_else(|| max(&same_gap))
            .or_else(|| max(&of(&|k| k.2 >= gap)))
            .or_else(|| max(&of(&|_| true)))
            .unwrap_or(0.0)
            .max(lo);
        let mid = median(&same_gap).unwrap_or((lo + hi) / 2.0);
        Some(Span {
            lo,
            mid: mid.clamp(lo, hi),
            hi,
        })
    }

    /// A run's wake-up time: its pauses x the wake-up cost of one (none
    /// without pauses, nothing known before a pause run has finished).
    pub fn wake_time(&self, spec: &PatternSpec, ios: Span) -> Span {
        let streams = spec.parallel_degree.max(1) as f64;
        let Some((key, _)) = wake_of(spec, 1.0) else {
            return Span::ZERO;
        };
        let Some(cost) = self.wake(key) else {
            return Span::ZERO;
        };
        ios.map(|n| wake_of(spec, n / streams).map_or(0.0, |(_, p)| p * streams))
            .times(cost)
    }

    /// A finished adaptive run used `fraction` of its IOCount cap.
    pub fn observe_fraction(&mut self, spec: &PatternSpec, fraction: f64) {
        if fraction.is_finite() && fraction > 0.0 {
            self.io_fraction
                .entry(fraction_key(spec))
                .or_default()
                .push(fraction.min(1.0));
        }
    }

    /// The fraction of its cap an adaptive run of `spec` will use: the
    /// median of its kind (mode, locality, with pauses or not); else
    /// between the fewest and most adaptive runs with pauses (or without)
    /// used, or any adaptive run; else anything from `min_fraction` to the
    /// whole cap. (Runs with pauses converge otherwise: the IOs after a
    /// pause vary more, and on the test machine every uFLIP pause run
    /// reached its cap while granularity runs stopped at 16-100 % of it.)
    pub fn fraction(&self, spec: &PatternSpec, min_fraction: f64) -> Span {
        let key = fraction_key(spec);
        if let Some(m) = self.io_fraction.get(&key).and_then(|v| median(v)) {
            return Span::exact(m);
        }
        let alike: Vec<f64> = self
            .io_fraction
            .iter()
            .filter(|(k, _)| k.2 == key.2)
            .flat_map(|(_, v)| v.iter().copied())
            .collect();
        let all: Vec<f64> = if alike.is_empty() {
            self.io_fraction.values().flatten().copied().collect()
        } else {
            alike
        };
        match median(&all) {
            Some(m) => {
                let lo = all.iter().copied().fold(f64::INFINITY, f64::min);
                let hi = all.iter().copied().fold(0.0, f64::max);
                Span { lo, mid: m, hi }
            }
            None => Span::between(min_fraction.clamp(0.0, 1.0), 1.0),
        }
    }
}

/// The key an adaptive run's IO fraction is learned by.
fn fraction_key(spec: &PatternSpec) -> (u8, bool, bool) {
    (
        spec.primary.mode.code(),
        is_random(&spec.primary.location),
        spec.timing != Timing::Consecutive,
    )
}

/// The idle time a stream of `ios_per_stream` IOs owes its time function
/// (the executor: a pause after each completion, or after every `burst`-th;
/// none after the last IO, since nothing follows it). With more than one IO
/// outstanding, the pauses after IOs that complete together overlap.
pub fn idle_ns(timing: Timing, ios_per_stream: f64, queue_depth: u64) -> f64 {
    let n = ios_per_stream.max(1.0);
    match timing {
        Timing::Consecutive => 0.0,
        Timing::Pause { pause_ns } => (n - 1.0) * pause_ns as f64 / queue_depth.max(1) as f64,
        Timing::Burst { pause_ns, burst } => {
            ((n - 1.0) / burst.max(1) as f64).floor() * pause_ns as f64
        }
    }
}

/// What the completed runs of a results directory took, for
/// [`SuiteEta::resume_from`]: per run, its name, its IOs (records) and its
/// own time as the runner measures it, i.e. from its first submission to
/// its last completion plus the settle before its first IO
/// (`run_settle_ns`; the records do not hold it). Runs without records or
/// not complete are left out.
pub fn history_of(
    results: &flashlab_results::ResultsDir,
    run_settle_ns: u64,
) -> Vec<(String, u64, u64)> {
    let mut out = Vec::new();
    for (idx, entry) in results.manifest().runs.iter().enumerate() {
        if entry.status != flashlab_results::RunStatus::Complete || !entry.records {
            continue;
        }
        let Ok(file) = results.record_file(idx) else {
            continue;
        };
        let (mut ios, mut first, mut last) = (0u64, u64::MAX, 0u64);
        let visited = file.for_each(|_, r| {
            if let Some(r) = r {
                ios += 1;
                first = first.min(r.submit_ns);
                last = last.max(r.complete_ns);
            }
        });
        if visited.is_ok() && ios > 0 {
            out.push((
                entry.name.clone(),
                ios,
                last.saturating_sub(first) + run_settle_ns,
            ));
        }
    }
    out
}

/// What the estimate needs to know about where the suite runs.
#[derive(Clone, Copy, Debug)]
pub struct EtaContext {
    pub device_bytes: u64,
    /// Fewest IOs an adaptive run makes (the journal's `min_ios`).
    pub min_ios: u64,
    /// Outstanding writes of state enforcement (the runner's).
    pub state_queue_depth: u64,
    /// Whether idle time (pauses, settles) takes wall time: a real device.
    pub idle_is_wall_time: bool,
    /// What a real device sleeps at the start of every run before its
    /// first IO (`Device::begin_run`: the IO thread settles so that the
    /// scheduler stops treating it as busy; flashlab-realdev's clock, 150
    /// ms unless FLASHLAB_SETTLE_MS says otherwise; the device's identity
    /// says it as `settle_ms`). It is inside each run's measured time, so
    /// it is known time: added per run, taken out before learning a cost.
    pub run_settle_ns: u64,
}

impl EtaContext {
    /// The per-run settle a device's identity states (`settle_ms`), none
    /// when it states none (the simulator).
    pub fn settle_ns_of(identity: &BTreeMap<String, String>) -> u64 {
        identity
            .get("settle_ms")
            .and_then(|v| v.trim().parse::<u64>().ok())
            .map_or(0, |ms| ms.saturating_mul(1_000_000))
    }

    /// The known idle time a run spends besides its IOs' own time, on a
    /// device where idle time is wall time: its settle, and the pauses of
    /// its time function for `ios` IOs over all its streams.
    fn run_idle_ns(&self, spec: &PatternSpec, ios: f64) -> f64 {
        if !self.idle_is_wall_time {
            return 0.0;
        }
        let streams = spec.parallel_degree.max(1) as f64;
        self.run_settle_ns as f64 + idle_ns(spec.timing, ios / streams, spec.queue_depth)
    }
}

/// State enforcement as IOs: its class and count (uFLIP's random sizes are
/// uniform over 0.5-128 KiB, so their mean stands for them).
pub fn enforce_ios(method: StateMethod, ctx: &EtaContext) -> Option<(IoClass, u64)> {
    let (random, size) = match method {
        StateMethod::None => return None,
        StateMethod::Random => (true, 64 * 1024 + 256),
        StateMethod::Sequential => (false, 256 * 1024),
        StateMethod::Snia => (false, 128 * 1024),
    };
    let ios = method.bytes_written(ctx.device_bytes) / size;
    Some((
        IoClass::new(
            flashlab_device::Mode::Write,
            random,
            size,
            ctx.state_queue_depth,
        ),
        ios,
    ))
}

/// One run's time: IOs x per-IO cost, plus its pauses exactly; a
/// time-based run exactly its runtime, a capped one at most that.
pub fn run_estimate(model: &CostModel, run: &RunStep, ctx: &EtaContext) -> Option<Span> {
    let spec = &run.spec;
    if let (Some(runtime_ns), true) = (spec.runtime_ns, spec.time_based) {
        return Some(Span::exact(runtime_ns as f64));
    }
    let cap = spec.total_ios() as f64;
    let ios = if run.adaptive && cap > 0.0 {
        let min = (ctx.min_ios * spec.parallel_degree) as f64 / cap;
        model.fraction(spec, min).map(|f| f * cap)
    } else {
        Span::exact(cap)
    };
    let cost = model.spec_per_io(spec)?;
    let mut total = ios.times(cost).plus(ios.map(|n| ctx.run_idle_ns(spec, n)));
    if ctx.idle_is_wall_time {
        total = total.plus(model.wake_time(spec, ios));
    }
    if let Some(runtime_ns) = spec.runtime_ns {
        total = total.map(|t| t.min(runtime_ns as f64));
    }
    Some(total)
}

/// The pause before a step's runs, and the settle after a state
/// enforcement or discard, on a device where they take wall time.
fn step_known_ns(step: &Step, ctx: &EtaContext, pause_ns: u64, first_run_step: bool) -> f64 {
    if !ctx.idle_is_wall_time {
        return 0.0;
    }
    match step {
        Step::Run(_) | Step::Calibrate { .. } | Step::MeasurePause { .. } if !first_run_step => {
            pause_ns as f64
        }
        Step::EnforceState {
            method: StateMethod::None,
            ..
        } => 0.0,
        Step::EnforceState { .. } | Step::Discard { .. } => pause_ns.max(REAL_SETTLE_NS) as f64,
        _ => 0.0,
    }
}

/// The runs of a suite's plan and what is learned as they finish.
#[derive(Clone, Debug)]
pub struct SuiteEta {
    steps: Vec<Step>,
    ctx: EtaContext,
    pub model: CostModel,
    pause_between_ns: u64,
    /// The step under way (0-based), when it (or its last finished run)
    /// started, and how many of its runs finished.
    current: Option<usize>,
    step_started_ns: u64,
    last_event_ns: u64,
    runs_done_in_step: usize,
    /// The index of the first step with runs (no pause before it), and of
    /// the first after each fresh device.
    first_run_steps: Vec<usize>,
    /// The current step's runs' own time so far.
    run_ns_in_step: u64,
    /// Per run, the time of a step that neither its runs nor the known
    /// pauses explain (saving records and statistics, the journal).
    overhead_per_run_ns: Vec<f64>,
    /// Set by [`Self::resume_from`]: the current step has not started yet
    /// (the runner's first report starts it).
    resumed_before_current: bool,
}

impl SuiteEta {
    pub fn new(steps: Vec<Step>, ctx: EtaContext, min_pause_ns: u64) -> SuiteEta {
        let mut first_run_steps = Vec::new();
        let mut first = true;
        for (i, s) in steps.iter().enumerate() {
            if matches!(s, Step::Reconfigure { .. }) {
                first = true;
            }
            if !s.runs().is_empty() && std::mem::take(&mut first) {
                first_run_steps.push(i);
            }
        }
        SuiteEta {
            steps,
            ctx,
            model: CostModel::default(),
            pause_between_ns: min_pause_ns,
            current: None,
            step_started_ns: 0,
            last_event_ns: 0,
            runs_done_in_step: 0,
            first_run_steps,
            run_ns_in_step: 0,
            overhead_per_run_ns: Vec::new(),
            resumed_before_current: false,
        }
    }

    /// What a run costs besides its IOs and pauses: the median of the
    /// finished steps' unexplained time per run.
    fn overhead_per_run(&self) -> f64 {
        median(&self.overhead_per_run_ns).unwrap_or(0.0)
    }

    /// Runs finished (those of the steps before the current one, and the
    /// current step's finished ones) and in all.
    pub fn runs(&self) -> (u64, u64) {
        let total = self.steps.iter().map(|s| s.runs().len() as u64).sum();
        let done = match self.current {
            None => 0,
            Some(c) => {
                self.steps[..c]
                    .iter()
                    .map(|s| s.runs().len() as u64)
                    .sum::<u64>()
                    + self.runs_done_in_step as u64
            }
        };
        (done, total)
    }

    /// Step `step` (1-based) starts at `now_ns`; the runner will wait
    /// `pause_between_ns` before each run-step from now on. A step without
    /// runs that just ended (state enforcement) is learned from here.
    pub fn step_started(&mut self, step: usize, now_ns: u64, pause_between_ns: u64) {
        self.pause_between_ns = pause_between_ns;
        let index = step.saturating_sub(1).min(self.steps.len());
        let resumed_here =
            std::mem::take(&mut self.resumed_before_current) && self.current == Some(index);
        if let (Some(prev), false) = (self.current, resumed_here) {
            if index <= prev {
                return;
            }
            let runs = self.steps[prev].runs().len();
            if runs > 0 && self.runs_done_in_step == runs {
                let first = self.first_run_steps.contains(&prev);
                let known = step_known_ns(&self.steps[prev], &self.ctx, pause_between_ns, first);
                let wall = now_ns.saturating_sub(self.step_started_ns) as f64;
                let unexplained = wall - known - self.run_ns_in_step as f64;
                self.overhead_per_run_ns
                    .push(unexplained.max(0.0) / runs as f64);
            }
            if let Step::EnforceState { method, .. } = &self.steps[prev] {
                if let Some((class, ios)) = enforce_ios(*method, &self.ctx) {
                    let known =
                        step_known_ns(&self.steps[prev], &self.ctx, pause_between_ns, false);
                    let io_ns = now_ns.saturating_sub(self.step_started_ns) as f64 - known;
                    if ios > 0 && io_ns > 0.0 {
                        self.model.observe(class, io_ns / ios as f64);
                    }
                }
            }
        }
        self.current = Some(index);
        self.step_started_ns = now_ns;
        self.last_event_ns = now_ns;
        self.runs_done_in_step = 0;
        self.run_ns_in_step = 0;
    }

    /// The run `name` of the current step finished: `ios` IOs over all its
    /// streams in `run_ns` (its own time, without the pause before it).
    pub fn run_finished(&mut self, name: &str, ios: u64, run_ns: u64, now_ns: u64) {
        self.last_event_ns = now_ns;
        let Some(c) = self.current else { return };
        let Some(step) = self.steps.get(c) else {
            return;
        };
        let runs = step.runs();
        let Some(pos) = runs.iter().position(|r| r.name == name) else {
            return;
        };
        let run = runs[pos].clone();
        self.runs_done_in_step = pos + 1;
        self.run_ns_in_step += run_ns;
        self.learn(&run, ios, run_ns);
    }

    /// What a finished run teaches: its classes' per-IO costs (its known
    /// idle time, settle and pauses, taken out) and, when adaptive, the
    /// fraction of its cap it used.
    fn learn(&mut self, run: &RunStep, ios: u64, run_ns: u64) {
        let spec = &run.spec;
        let idle = self.ctx.run_idle_ns(spec, ios as f64);
        let busy_ns = (run_ns as f64 - idle).max(0.0);
        let streams = spec.parallel_degree.max(1);
        let wake = wake_of(spec, ios as f64 / streams as f64)
            .filter(|(_, pauses)| *pauses >= 1.0 && self.ctx.idle_is_wall_time);
        // A run with pauses teaches the wake-up cost once its IOs' own
        // cost is known (from back-to-back runs of its classes); before,
        // its IOs, wake-ups included.
        match (wake, self.model.spec_per_io(spec)) {
            (Some((key, pauses)), Some(cost)) if !cost.is_wide() => {
                let extra = busy_ns - cost.mid * ios as f64;
                self.model
                    .observe_wake(key, extra / (pauses * streams as f64));
            }
            _ => self.model.observe_run(spec, ios, busy_ns),
        }
        if run.adaptive && spec.total_ios() > 0 {
            self.model
                .observe_fraction(spec, ios as f64 / spec.total_ios() as f64);
        }
    }

    /// A resumed suite: the first `completed_steps` steps ran before it
    /// was interrupted, and `history` holds what their runs took (name, IOs
    /// over all streams, own time in ns, as [`Self::run_finished`] takes
    /// them; from their records, [`history_of`]). Their costs are learned,
    /// so the resumed suite's ETA starts where the interrupted one was,
    /// not from scratch. Runs not in those steps are ignored.
    pub fn resume_from(&mut self, completed_steps: usize, history: &[(String, u64, u64)]) {
        let done = completed_steps.min(self.steps.len());
        let runs: BTreeMap<String, RunStep> = self.steps[..done]
            .iter()
            .flat_map(|s| s.runs())
            .map(|r| (r.name.clone(), r.clone()))
            .collect();
        for (name, ios, run_ns) in history {
            if let Some(run) = runs.get(name.as_str()) {
                self.learn(run, *ios, *run_ns);
            }
        }
        // The steps before the first the runner reports are done: counted
        // as such by `runs()` until it reports.
        self.current = Some(done);
        self.runs_done_in_step = 0;
        self.resumed_before_current = true;
    }

    /// The pause between runs before step `i`: the one the runner reported,
    /// unless uFLIP's pause probe (a `MeasurePause` step) comes before step
    /// `i` and has not finished: then anything from that minimum to twice
    /// the time of the probe's reads after its writes plus the writes' own
    /// time (uFLIP 4.3; the runner's pause is twice the time of the reads
    /// the writes slowed, at most all of them; and the writes slow them by
    /// at most the work the writes left behind, which is at most the
    /// writes' own work).
    fn pause_span(&self, i: usize) -> Span {
        let pause = self.pause_between_ns as f64;
        let from = self.current.unwrap_or(0).min(i);
        let probe = self.steps[from..i.min(self.steps.len())]
            .iter()
            .find_map(|s| match s {
                Step::MeasurePause { writes, after, .. } => Some((writes, after)),
                _ => None,
            });
        let io_time = |run: &RunStep| {
            let cost = self.model.spec_per_io(&run.spec)?;
            Some(cost.map(|c| c * run.spec.total_ios() as f64))
        };
        match probe.and_then(|(writes, after)| Some(io_time(after)?.plus(io_time(writes)?))) {
            Some(slowed) => Span::between(pause, pause.max(2.0 * slowed.hi)),
            None => Span::exact(pause),
        }
    }

    /// The estimate of step `i` as a whole, or of what is left of it after
    /// `done_runs` of its runs.
    fn step_estimate(&self, i: usize, done_runs: usize) -> Option<Span> {
        let step = &self.steps[i];
        let first = self.first_run_steps.contains(&i);
        let mut total = if done_runs == 0 {
            let known = |pause_ns: f64| step_known_ns(step, &self.ctx, pause_ns as u64, first);
            self.pause_span(i).map(known)
        } else {
            Span::ZERO
        };
        if let Step::EnforceState { method, .. } = step {
            if let Some((class, ios)) = enforce_ios(*method, &self.ctx) {
                let cost = self.model.per_io(&class)?;
                total = total.plus(cost.map(|c| c * ios as f64));
            }
        }
        let overhead = self.overhead_per_run();
        for run in step.runs().into_iter().skip(done_runs) {
            total = total.plus(run_estimate(&self.model, run, &self.ctx)?.map(|t| t + overhead));
        }
        Some(total)
    }

    /// The time left at `now_ns`, once anything was measured: the steps
    /// after the current one whole, and what is left of the current one
    /// (its estimate less the time since its last finished run).
    pub fn remaining(&self, now_ns: u64) -> Option<Span> {
        let c = self.current?;
        if self.model.is_empty() {
            return None;
        }
        let mut total = Span::ZERO;
        for i in c + 1..self.steps.len() {
            total = total.plus(self.step_estimate(i, 0)?);
        }
        if c < self.steps.len() {
            let elapsed = now_ns.saturating_sub(self.last_event_ns) as f64;
            let here = self.step_estimate(c, self.runs_done_in_step)?;
            total = total.plus(here.map(|t| (t - elapsed).max(0.0)));
        }
        Some(total)
    }

    /// The whole plan's estimate (a dry run's, from a probe's costs).
    pub fn whole_plan(&self) -> Option<Span> {
        let mut total = Span::ZERO;
        for i in 0..self.steps.len() {
            total = total.plus(self.step_estimate(i, 0)?);
        }
        Some(total)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use flashlab_device::Mode;

    const MS: u64 = 1_000_000;

    fn basic(mode: Mode, location: Location, size: u64) -> Basic {
        Basic {
            location,
            mode,
            io_size_bytes: size,
            io_shift_bytes: 0,
        }
    }

    fn run(name: &str, primary: Basic, timing: Timing, io_count: u64, adaptive: bool) -> RunStep {
        RunStep {
            name: name.into(),
            experiment: "x".into(),
            series: "x".into(),
            parameter: "x".into(),
            value: 0.0,
            spec: PatternSpec {
                name: name.into(),
                primary,
                mix: None,
                timing,
                target_offset_bytes: 0,
                target_size_bytes: 1 << 30,
                io_count,
                io_ignore: 0,
                parallel_degree: 1,
                queue_depth: 1,
                seed: 1,
                runtime_ns: None,
                time_based: false,
                rate_iops: None,
                io_size_split: Vec::new(),
            },
            adaptive,
        }
    }

    fn real() -> EtaContext {
        EtaContext {
            device_bytes: 1 << 30,
            min_ios: 64,
            state_queue_depth: 32,
            idle_is_wall_time: true,
            run_settle_ns: 0,
        }
    }

    /// A synthetic device: what one IO of a run truly costs.
    fn true_cost_ns(spec: &PatternSpec) -> u64 {
        let b = &spec.primary;
        let base = match (b.mode, is_random(&b.location)) {
            (Mode::Read, false) => 20_000,
            (Mode::Read, true) => 50_000,
            (Mode::Write, false) => 100_000,
            _ => 500_000,
        };
        base * (1 + b.io_size_bytes / (64 * 1024))
    }

    /// A true history of a step: its runs' IOs (adaptive ones stop at a
    /// third of their cap) and durations.
    fn history(step: &Step) -> Vec<(String, u64, u64)> {
        step.runs()
            .iter()
            .map(|r| {
                let ios = if r.adaptive {
                    r.spec.io_count / 3
                } else {
                    r.spec.io_count
                };
                let idle = idle_ns(r.spec.timing, ios as f64, 1) as u64;
                (r.name.clone(), ios, ios * true_cost_ns(&r.spec) + idle)
            })
            .collect()
    }

    /// A uFLIP-shaped plan: the four baselines, then granularity-like runs,
    /// then pause runs whose pauses make them 100x longer than the rest.
    fn uflip_like() -> Vec<Step> {
        use Location::{Random, Sequential};
        let mut steps = Vec::new();
        for (n, m, l) in [
            ("SR", Mode::Read, Sequential),
            ("RR", Mode::Read, Random),
            ("SW", Mode::Write, Sequential),
            ("RW", Mode::Write, Random),
        ] {
            steps.push(Step::Calibrate {
                baseline: n.into(),
                run: run(
                    &format!("cal-{n}"),
                    basic(m, l.clone(), 32 << 10),
                    Timing::Consecutive,
                    4096,
                    false,
                ),
            });
        }
        for size_kib in [4u64, 8, 16, 32, 64, 128] {
            for (n, m, l) in [
                ("SR", Mode::Read, Sequential),
                ("RR", Mode::Read, Random),
                ("RW", Mode::Write, Random),
            ] {
                steps.push(Step::Run(run(
                    &format!("gran-{n}-{size_kib}"),
                    basic(m, l.clone(), size_kib << 10),
                    Timing::Consecutive,
                    4096,
                    true,
                )));
            }
        }
        for p in [1u64, 4, 16, 64, 256] {
            for (n, m, l) in [("SR", Mode::Read, Sequential), ("RR", Mode::Read, Random)] {
                steps.push(Step::Run(run(
                    &format!("pause-{n}-{p}"),
                    basic(m, l.clone(), 32 << 10),
                    Timing::Pause {
                        pause_ns: p * 100_000,
                    },
                    4096,
                    true,
                )));
            }
        }
        steps
    }

    /// Feeds `steps[..upto]`'s true history; returns the estimator and the
    /// true time left after them.
    fn replay(steps: &[Step], upto: usize, pause_ns: u64) -> (SuiteEta, u64) {
        let mut eta = SuiteEta::new(steps.to_vec(), real(), pause_ns);
        let mut now = 0u64;
        let mut truth_after = 0u64;
        for (i, step) in steps.iter().enumerate() {
            if i == upto {
                eta.step_started(i + 1, now, pause_ns);
            }
            let pause = if i == 0 { 0 } else { pause_ns };
            if i < upto {
                eta.step_started(i + 1, now, pause_ns);
                now += pause;
                for (name, ios, ns) in history(step) {
                    now += ns;
                    eta.run_finished(&name, ios, ns, now);
                }
            } else {
                truth_after += pause;
                truth_after += history(step).iter().map(|h| h.2).sum::<u64>();
            }
        }
        (eta, truth_after)
    }

    #[test]
    fn pauses_are_added_exactly_not_learned() {
        // One SR run measured; a pause run of the same class is then its
        // IOs at the measured cost plus its pauses, to the nanosecond.
        let sr = basic(Mode::Read, Location::Sequential, 32 << 10);
        let steps = vec![
            Step::Run(run("sr", sr.clone(), Timing::Consecutive, 1000, false)),
            Step::Run(run(
                "pause",
                sr.clone(),
                Timing::Pause {
                    pause_ns: 25 * MS + MS / 2,
                },
                1000,
                false,
            )),
            Step::Run(run(
                "burst",
                sr,
                Timing::Burst {
                    pause_ns: 100 * MS,
                    burst: 10,
                },
                1000,
                false,
            )),
        ];
        let mut eta = SuiteEta::new(steps, real(), 0);
        eta.step_started(1, 0, 0);
        eta.run_finished("sr", 1000, 100 * MS, 100 * MS); // 0.1 ms per IO
        eta.step_started(2, 100 * MS, 0);
        let left = eta.remaining(100 * MS).unwrap();
        let ios_ns = 2.0 * 1000.0 * 0.1e6;
        let pauses_ns = 999.0 * 25.5e6 + 99.0 * 100e6;
        assert_eq!(left, Span::exact(ios_ns + pauses_ns));
    }

    #[test]
    fn after_a_few_runs_the_eta_of_a_suite_with_long_pause_runs_is_within_a_factor_of_1_5() {
        let steps = uflip_like();
        let pause_ns = 100 * MS;
        // The history has uFLIP's shape: its longest pause run takes over
        // 100x the median run without pauses.
        let durations = |pause: bool| -> Vec<f64> {
            steps
                .iter()
                .flat_map(history)
                .filter(|h| h.0.starts_with("pause") == pause)
                .map(|h| h.2 as f64)
                .collect()
        };
        let longest_pause_run = durations(true).into_iter().fold(0.0, f64::max);
        assert!(longest_pause_run > 100.0 * median(&durations(false)).unwrap());
        // After the calibration runs and the first granularity runs (7 of
        // 40 steps: before any pause run or any IO over 32 KiB), and later.
        for upto in [7, 12, 20, 30] {
            let (eta, truth) = replay(&steps, upto, pause_ns);
            let left = eta.remaining(0).unwrap();
            let ratio = left.mid / truth as f64;
            assert!(
                (1.0 / 1.5..=1.5).contains(&ratio),
                "after {upto} steps: estimated {:.1} s, truly {:.1} s left",
                left.mid / 1e9,
                truth as f64 / 1e9
            );
            assert!(
                left.lo <= truth as f64 * 1.01 && left.hi >= truth as f64 * 0.99,
                "{left:?} {truth}"
            );
        }
    }

    #[test]
    fn the_time_a_step_spends_besides_its_runs_is_learned_per_run() {
        let sr = basic(Mode::Read, Location::Sequential, 4096);
        let steps: Vec<Step> = (0..4)
            .map(|i| {
                Step::Run(run(
                    &format!("r{i}"),
                    sr.clone(),
                    Timing::Consecutive,
                    100,
                    false,
                ))
            })
            .collect();
        let mut eta = SuiteEta::new(steps, real(), 0);
        // Each run's IOs take 10 ms; saving it takes 40 ms more.
        eta.step_started(1, 0, 0);
        eta.run_finished("r0", 100, 10 * MS, 10 * MS);
        eta.step_started(2, 50 * MS, 0);
        assert_eq!(eta.remaining(50 * MS), Some(Span::exact(3.0 * 50e6)));
    }

    #[test]
    fn until_the_pause_probe_has_run_the_pause_between_runs_is_a_range() {
        let sr = basic(Mode::Read, Location::Sequential, 4096);
        let rw = basic(Mode::Write, Location::Random, 4096);
        let steps = vec![
            Step::Run(run("first", sr.clone(), Timing::Consecutive, 10, false)),
            Step::MeasurePause {
                before: run("before", sr.clone(), Timing::Consecutive, 1000, false),
                writes: run("writes", rw.clone(), Timing::Consecutive, 10, false),
                after: run("after", sr.clone(), Timing::Consecutive, 1000, false),
            },
            Step::Run(run("later", sr, Timing::Consecutive, 10, false)),
        ];
        let mut eta = SuiteEta::new(steps, real(), 200 * MS);
        eta.step_started(1, 0, 200 * MS);
        eta.run_finished("first", 10, 10 * MS, 10 * MS); // 1 ms per read
        let rw_class = classes_of(&run("w", rw, Timing::Consecutive, 1, false).spec)[0].0;
        eta.model.observe(rw_class, 5e6); // 5 ms per random write
                                          // Before the probe: the pause before "later" is 200 ms to twice the
                                          // 1000 reads after the writes and the 10 writes' own work (2.1 s).
        assert_eq!(eta.pause_span(2), Span::between(200e6, 2.1e9));
        assert_eq!(eta.pause_span(1), Span::exact(200e6));
        // The probe measured 700 ms: from then on, exactly that.
        eta.step_started(2, 10 * MS, 200 * MS);
        eta.step_started(3, 5_000 * MS, 700 * MS);
        assert_eq!(eta.pause_span(2), Span::exact(700e6));
    }

    #[test]
    fn an_unseen_io_size_is_bracketed_by_the_seen_ones() {
        let mut m = CostModel::default();
        let class = |size| IoClass::new(Mode::Read, true, size, 1);
        m.observe(class(4096), 100_000.0);
        m.observe(class(65536), 400_000.0);
        // 16 KiB: at least 4 KiB's cost, at most 4x it; at most 64 KiB's, at least a quarter of it.
        let s = m.per_io(&class(16384)).unwrap();
        assert_eq!((s.lo, s.hi), (100_000.0, 400_000.0));
        assert!(s.is_wide());
        // Seen: one number.
        assert_eq!(m.per_io(&class(4096)), Some(Span::exact(100_000.0)));
    }

    #[test]
    fn a_class_is_the_median_of_its_runs_so_one_stall_does_not_swing_it() {
        let mut m = CostModel::default();
        let c = IoClass::new(Mode::Write, true, 32768, 1);
        for x in [1.0e6, 1.1e6, 1000.0e6, 0.9e6, 1.0e6] {
            m.observe(c, x);
        }
        assert_eq!(m.per_io(&c), Some(Span::exact(1.0e6)));
    }

    #[test]
    fn a_mix_is_its_parts_weighted_and_teaches_the_unseen_part() {
        let r = basic(Mode::Read, Location::Random, 32 << 10);
        let w = basic(Mode::Write, Location::Random, 32 << 10);
        let mut mixed = run("mix", r.clone(), Timing::Consecutive, 100, false);
        mixed.spec.mix = Some(flashlab_pattern::Mix {
            secondary: w.clone(),
            ratio_primary: 3,
            ratio_secondary: 1,
            random_order: false,
            shared_location: false,
        });
        let mut m = CostModel::default();
        m.observe(classes_of(&mixed.spec)[0].0, 100_000.0);
        // 100 IOs in 32.5 ms: 75 reads at 0.1 ms leave 25 ms for 25 writes.
        m.observe_run(&mixed.spec, 100, 32.5e6);
        let wc = classes_of(&run("w", w, Timing::Consecutive, 1, false).spec)[0].0;
        assert_eq!(m.per_io(&wc), Some(Span::exact(1.0e6)));
        assert_eq!(
            m.spec_per_io(&mixed.spec),
            Some(Span::exact(0.75 * 0.1e6 + 0.25 * 1e6))
        );
    }

    #[test]
    fn an_adaptive_runs_io_count_is_a_range_until_one_finished() {
        let sr = basic(Mode::Read, Location::Sequential, 4096);
        let r = run("a", sr, Timing::Consecutive, 4096, true);
        let mut m = CostModel::default();
        m.observe(classes_of(&r.spec)[0].0, 1000.0);
        let ctx = real();
        let before = run_estimate(&m, &r, &ctx).unwrap();
        assert_eq!((before.lo, before.hi), (64.0 * 1000.0, 4096.0 * 1000.0));
        m.observe_fraction(&r.spec, 0.25);
        assert_eq!(
            run_estimate(&m, &r, &ctx),
            Some(Span::exact(1024.0 * 1000.0))
        );
    }

    #[test]
    fn a_time_based_run_takes_its_runtime_and_a_capped_one_at_most_that() {
        let sr = basic(Mode::Read, Location::Sequential, 4096);
        let mut r = run("t", sr, Timing::Consecutive, 1_000_000, false);
        let mut m = CostModel::default();
        m.observe(classes_of(&r.spec)[0].0, 1000.0);
        r.spec.runtime_ns = Some(2_000 * MS);
        assert_eq!(run_estimate(&m, &r, &real()), Some(Span::exact(1e9)));
        r.spec.time_based = true;
        assert_eq!(run_estimate(&m, &r, &real()), Some(Span::exact(2e9)));
    }

    #[test]
    fn on_a_simulator_pauses_cost_no_wall_time() {
        let sr = basic(Mode::Read, Location::Sequential, 4096);
        let r = run("p", sr, Timing::Pause { pause_ns: 100 * MS }, 100, false);
        let mut m = CostModel::default();
        m.observe(classes_of(&r.spec)[0].0, 1000.0);
        let sim = EtaContext {
            idle_is_wall_time: false,
            ..real()
        };
        assert_eq!(
            run_estimate(&m, &r, &sim),
            Some(Span::exact(100.0 * 1000.0))
        );
        assert_eq!(
            run_estimate(&m, &r, &real()),
            Some(Span::exact(100.0 * 1000.0 + 99.0 * 100e6))
        );
    }

    #[test]
    fn state_enforcement_is_learned_from_its_step_less_the_settle() {
        let sr = basic(Mode::Read, Location::Sequential, 4096);
        let steps = vec![
            Step::EnforceState {
                method: StateMethod::Sequential,
                reason: "x".into(),
            },
            Step::Run(run("sr", sr, Timing::Consecutive, 10, false)),
        ];
        let ctx = real();
        let mut eta = SuiteEta::new(steps, ctx, 0);
        eta.step_started(1, 0, 0);
        assert_eq!(eta.remaining(0), None, "nothing measured yet");
        // 4096 writes of 256 KiB in 5 s, then the 1 s settle.
        eta.step_started(2, 6_000 * MS, 0);
        let (class, ios) = enforce_ios(StateMethod::Sequential, &ctx).unwrap();
        assert_eq!(ios, 4096);
        assert_eq!(eta.model.per_io(&class), Some(Span::exact(5e9 / 4096.0)));
    }

    #[test]
    fn the_settle_before_each_runs_first_io_is_known_time() {
        let sr = basic(Mode::Read, Location::Sequential, 4096);
        let steps: Vec<Step> = ["a", "b"]
            .iter()
            .map(|n| Step::Run(run(n, sr.clone(), Timing::Consecutive, 100, false)))
            .collect();
        let ctx = EtaContext {
            run_settle_ns: 150 * MS,
            ..real()
        };
        let mut eta = SuiteEta::new(steps, ctx, 0);
        eta.step_started(1, 0, 0);
        // 100 IOs of 1 ms after the 150 ms settle: 1 ms per IO is learned,
        // and the next run is its IOs plus its settle.
        eta.run_finished("a", 100, 250 * MS, 250 * MS);
        let cost = eta.model.spec_per_io(&steps_spec(&eta, 1));
        assert_eq!(cost, Some(Span::exact(1e6)));
        eta.step_started(2, 250 * MS, 0);
        assert_eq!(eta.remaining(250 * MS), Some(Span::exact(250e6)));
    }

    fn steps_spec(eta: &SuiteEta, i: usize) -> PatternSpec {
        eta.steps[i].runs()[0].spec.clone()
    }

    /// What a device's IO after a pause truly costs beyond a back-to-back
    /// one (the wake-up): grows with the pause, random writes pay most.
    fn wake_truth_ns(spec: &PatternSpec) -> u64 {
        let pause_ns = match spec.timing {
            Timing::Consecutive => return 0,
            Timing::Pause { pause_ns } | Timing::Burst { pause_ns, .. } => pause_ns,
        };
        let kind = match (spec.primary.mode, is_random(&spec.primary.location)) {
            (Mode::Read, false) => 1,
            (Mode::Read, true) => 4,
            _ => 6,
        };
        kind * pause_ns / 30
    }

    #[test]
    fn an_io_after_a_pause_pays_a_wake_up_learned_per_pause_length() {
        let sr = basic(Mode::Read, Location::Sequential, 32 << 10);
        let pause = |ns| Timing::Pause { pause_ns: ns };
        let steps = vec![
            Step::Run(run("sr", sr.clone(), Timing::Consecutive, 1000, false)),
            Step::Run(run("p-long", sr.clone(), pause(25_600_000), 1000, false)),
            Step::Run(run("p-long-2", sr.clone(), pause(25_600_000), 500, false)),
            Step::Run(run("p-short", sr.clone(), pause(1_600_000), 1000, false)),
        ];
        let mut eta = SuiteEta::new(steps, real(), 0);
        let truth = |r: &RunStep| {
            let ios = r.spec.io_count;
            let pauses = ios - 1;
            ios * true_cost_ns(&r.spec)
                + idle_ns(r.spec.timing, ios as f64, 1) as u64
                + pauses * wake_truth_ns(&r.spec)
        };
        let runs: Vec<RunStep> = eta.steps.iter().map(|s| s.runs()[0].clone()).collect();
        let mut now = 0;
        for (i, r) in runs.iter().enumerate().take(2) {
            eta.step_started(i + 1, now, 0);
            now += truth(r);
            eta.run_finished(&r.name, r.spec.io_count, truth(r), now);
        }
        eta.step_started(3, now, 0);
        let left = eta.remaining(now).unwrap();
        // The second long-pause run exactly; the short pause's wake-up
        // between nothing and the long pause's (a shorter idle gap wakes
        // from a shallower idle state).
        let long2 = truth(&runs[2]) as f64;
        let short_no_wake = (truth(&runs[3]) - 999 * wake_truth_ns(&runs[3].spec)) as f64;
        let long_wake = 999.0 * wake_truth_ns(&runs[1].spec) as f64;
        assert_eq!(left.lo, long2 + short_no_wake);
        assert_eq!(left.hi, long2 + short_no_wake + long_wake);
        assert!(left.hi >= long2 + truth(&runs[3]) as f64);
        // The back-to-back cost stayed the back-to-back runs' own.
        assert_eq!(
            eta.model.spec_per_io(&runs[0].spec),
            Some(Span::exact(true_cost_ns(&runs[0].spec) as f64))
        );
    }

    #[test]
    fn an_adaptive_run_with_pauses_learns_its_io_count_from_runs_with_pauses() {
        let sr = basic(Mode::Read, Location::Sequential, 4096);
        let rr = basic(Mode::Read, Location::Random, 4096);
        let back_to_back = run("b", sr.clone(), Timing::Consecutive, 1000, true);
        let paused = run("p", sr, Timing::Pause { pause_ns: MS }, 1000, true);
        let paused_rr = run("q", rr, Timing::Pause { pause_ns: MS }, 1000, true);
        let mut m = CostModel::default();
        m.observe_fraction(&back_to_back.spec, 0.2);
        m.observe_fraction(&paused.spec, 1.0);
        assert_eq!(m.fraction(&back_to_back.spec, 0.1), Span::exact(0.2));
        assert_eq!(m.fraction(&paused.spec, 0.1), Span::exact(1.0));
        // Another kind with pauses: as the runs with pauses were.
        assert_eq!(m.fraction(&paused_rr.spec, 0.1).mid, 1.0);
    }

    #[test]
    fn a_resumed_suite_starts_from_the_costs_of_the_runs_done_before() {
        let steps = uflip_like();
        let upto = 20;
        // Uninterrupted: the estimator lived through the first 20 steps.
        let (lived, truth) = replay(&steps, upto, 0);
        // Resumed: a fresh estimator, given what the records of those steps'
        // runs say, then the runner's first report.
        let history: Vec<(String, u64, u64)> = steps[..upto].iter().flat_map(history).collect();
        let mut resumed = SuiteEta::new(steps.clone(), real(), 0);
        assert_eq!(resumed.remaining(0), None, "a fresh one knows nothing");
        resumed.resume_from(upto, &history);
        assert_eq!(resumed.runs().0, lived.runs().0);
        resumed.step_started(upto + 1, 7 * MS, 0);
        let (a, b) = (
            resumed.remaining(7 * MS).unwrap(),
            lived.remaining(0).unwrap(),
        );
        assert_eq!(a, b);
        assert!(a.lo <= truth as f64 * 1.01 && a.hi >= truth as f64 * 0.99);
        // Its first step is then measured from the runner's report on.
        let r = &steps[upto].runs()[0];
        resumed.run_finished(&r.name, r.spec.io_count, MS, 8 * MS);
        assert_eq!(resumed.runs().0, lived.runs().0 + 1);
    }

    #[test]
    fn an_unseen_classes_wake_up_is_what_other_classes_paid_after_the_same_gap() {
        let mut m = CostModel::default();
        let (read, write) = (Mode::Read.code(), Mode::Write.code());
        let gap_25ms = 24; // log2 of 25.6 ms in ns
        m.observe_wake((read, false, gap_25ms, 0), 2.0e6);
        m.observe_wake((read, true, gap_25ms, 0), 3.0e6);
        m.observe_wake((write, true, gap_25ms, 0), 6.0e6);
        // A burst of 80 after 100 ms idle: learned apart from single pauses.
        m.observe_wake((write, true, 26, 7), 276.0e6);
        m.observe_wake((write, false, 16, 0), 0.5e6);
        let s = m.wake((write, false, gap_25ms, 0)).unwrap();
        // At least its own shorter pause's, at most the most any class paid
        // after 25.6 ms (not the burst's), the middle their median.
        assert_eq!(
            s,
            Span {
                lo: 0.5e6,
                mid: 3.0e6,
                hi: 6.0e6
            }
        );
        assert_eq!(m.wake((read, true, gap_25ms, 0)), Some(Span::exact(3.0e6)));
        assert_eq!(CostModel::default().wake((read, true, gap_25ms, 0)), None);
    }
}
