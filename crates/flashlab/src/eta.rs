//! A suite's remaining time on the progress bar, and a real device's dry
//! run estimate from a short probe.
//!
//! The estimate itself is [`flashlab_suite::eta`]: what is known in advance
//! (pauses, bursts, the pause between runs, a `--runtime`) added exactly,
//! per-IO costs learned per IO class from the runs so far. This module gives
//! it wall-clock times and prints it ("ETA 4m10s", or a range while classes
//! are still unseen: "ETA 3m05s-9m20s").

use std::time::{Duration, Instant};

use flashlab_device::Device;
use flashlab_exec::{execute, Hooks};
use flashlab_pattern::units::format_duration_ns;
use flashlab_pattern::{Basic, Location, PatternSpec, Timing};
use flashlab_results::IoRecord;
use flashlab_suite::eta::{classes_of, CostModel, EtaContext, IoClass, Span};
use flashlab_suite::plan::Step;

pub use flashlab_suite::eta::SuiteEta as Estimator;

/// The estimator on the wall clock.
pub struct SuiteEta {
    pub inner: Estimator,
    origin: Instant,
    /// Whether runs are timed by the device (a real device's clock is wall
    /// time) or by the wall clock between reports (a simulator's device time
    /// is simulated).
    device_time_is_wall: bool,
    last_report: Instant,
}

impl SuiteEta {
    pub fn new(steps: Vec<Step>, ctx: EtaContext, min_pause_ns: u64) -> SuiteEta {
        let now = Instant::now();
        SuiteEta {
            inner: Estimator::new(steps, ctx, min_pause_ns),
            origin: now,
            device_time_is_wall: ctx.idle_is_wall_time,
            last_report: now,
        }
    }

    fn ns(&self, t: Instant) -> u64 {
        t.duration_since(self.origin).as_nanos() as u64
    }

    /// One progress report of the runner.
    pub fn report(&mut self, p: &flashlab_suite::runner::Progress, now: Instant) {
        let now_ns = self.ns(now);
        match &p.finished_run {
            Some(run) => {
                let run_ns = if self.device_time_is_wall {
                    run.device_ns
                } else {
                    now.duration_since(self.last_report).as_nanos() as u64
                };
                self.inner.run_finished(&run.name, run.ios, run_ns, now_ns);
            }
            None => self
                .inner
                .step_started(p.step, now_ns, p.pause_between_runs_ns),
        }
        self.last_report = now;
    }

    /// "runs 12/301, ETA 1m40s" (or a range, or "ETA after the first run").
    pub fn label(&self, now: Instant) -> String {
        let (done, total) = self.inner.runs();
        let eta = match self.inner.remaining(self.ns(now)) {
            Some(span) => format!("ETA {}", format_span(&span)),
            None => "ETA after the first run".to_string(),
        };
        format!("runs {done}/{total}, {eta}")
    }
}

/// "4m10s", or "3m05s-9m20s" when the interval is wide.
pub fn format_span(span: &Span) -> String {
    let d = |ns: f64| Duration::from_nanos(ns.max(0.0) as u64);
    if span.is_wide() {
        format!("{}-{}", format_eta(d(span.lo)), format_eta(d(span.hi)))
    } else {
        format_eta(d(span.mid))
    }
}

pub fn format_eta(d: Duration) -> String {
    let s = d.as_secs();
    if s >= 3600 {
        format!("{}h{:02}m", s / 3600, (s % 3600) / 60)
    } else if s >= 60 {
        format!("{}m{:02}s", s / 60, s % 60)
    } else {
        format_duration_ns((d.as_millis() as u64 / 100 * 100).max(100) * 1_000_000)
    }
}

/// Wall time a dry run's probe of back-to-back IOs may take in all.
pub const PROBE_BUDGET_NS: u64 = 4_000_000_000;
/// Pause time a dry run's probe of wake-up costs may spend in all.
pub const WAKE_PROBE_BUDGET_NS: u64 = 3_000_000_000;
/// Most IOs of one probe pattern.
const PROBE_IOS: u64 = 256;
/// Fewest and most pauses of one wake-up probe.
const WAKE_PROBE_PAUSES: (u64, u64) = (3, 16);

/// What a dry run's probe measured.
pub struct ProbeResult {
    pub model: CostModel,
    pub classes: usize,
    pub ios: u64,
    pub wall: Duration,
    pub wrote: bool,
}

/// The IO classes a plan's runs use, by (mode, random): the smallest,
/// the largest and the most used IOSize of each, one IO outstanding, plus
/// the most outstanding IOs at the most used size.
fn probe_classes(steps: &[Step], writes: bool) -> Vec<IoClass> {
    use std::collections::BTreeMap;
    let mut by_kind: BTreeMap<(u8, bool), BTreeMap<(u64, u64), u64>> = BTreeMap::new();
    for run in steps.iter().flat_map(|s| s.runs()) {
        for (class, share) in classes_of(&run.spec) {
            let ios = (run.spec.total_ios() as f64 * share) as u64;
            *by_kind
                .entry((class.mode, class.random))
                .or_default()
                .entry((class.size_bytes, class.outstanding))
                .or_default() += ios;
        }
    }
    let mut out = Vec::new();
    for ((mode, random), sizes) in by_kind {
        if mode != flashlab_device::Mode::Read.code() && !writes {
            continue;
        }
        let min = sizes.keys().map(|k| k.0).min().unwrap_or(4096);
        let max = sizes.keys().map(|k| k.0).max().unwrap_or(4096);
        let common = sizes
            .iter()
            .max_by_key(|(_, ios)| **ios)
            .map_or(4096, |(k, _)| k.0);
        let most_out = sizes.keys().map(|k| k.1).max().unwrap_or(1);
        let mut pick = vec![(min, 1), (max, 1), (common, 1), (common, most_out)];
        pick.sort();
        pick.dedup();
        for (size_bytes, outstanding) in pick {
            out.push(IoClass {
                mode,
                random,
                size_bytes,
                outstanding,
            });
        }
    }
    out
}

/// The wake-ups a plan's runs with pauses pay, by (mode, random): the
/// longest pause (or pause between bursts) of that kind, and the most used
/// IOSize among those runs.
fn wake_classes(steps: &[Step], writes: bool) -> Vec<(IoClass, u64)> {
    use std::collections::BTreeMap;
    let mut by_kind: BTreeMap<(u8, bool), (u64, BTreeMap<u64, u64>)> = BTreeMap::new();
    for run in steps.iter().flat_map(|s| s.runs()) {
        let pause_ns = match run.spec.timing {
            Timing::Consecutive => continue,
            Timing::Pause { pause_ns } | Timing::Burst { pause_ns, .. } => pause_ns,
        };
        let (class, _) = classes_of(&run.spec)[0];
        if class.mode == flashlab_device::Mode::Trim.code()
            || (class.mode != flashlab_device::Mode::Read.code() && !writes)
        {
            continue;
        }
        let e = by_kind.entry((class.mode, class.random)).or_default();
        e.0 = e.0.max(pause_ns);
        *e.1.entry(class.size_bytes).or_default() += run.spec.total_ios();
    }
    by_kind
        .into_iter()
        .filter(|(_, (pause_ns, _))| *pause_ns > 0)
        .map(|((mode, random), (pause_ns, sizes))| {
            let size_bytes = sizes
                .iter()
                .max_by_key(|(_, ios)| **ios)
                .map_or(4096, |(s, _)| *s);
            (
                IoClass {
                    mode,
                    random,
                    size_bytes,
                    outstanding: 1,
                },
                pause_ns,
            )
        })
        .collect()
}

fn probe_spec(name: String, class: &IoClass, io: u64, size: u64, seed: u64) -> PatternSpec {
    let mode = if class.mode == flashlab_device::Mode::Write.code() {
        flashlab_device::Mode::Write
    } else {
        flashlab_device::Mode::Read
    };
    PatternSpec {
        name,
        primary: Basic {
            location: if class.random {
                Location::Random
            } else {
                Location::Sequential
            },
            mode,
            io_size_bytes: io,
            io_shift_bytes: 0,
        },
        mix: None,
        timing: Timing::Consecutive,
        target_offset_bytes: 0,
        target_size_bytes: size / io * io,
        io_count: PROBE_IOS,
        io_ignore: 0,
        parallel_degree: 1,
        queue_depth: 1,
        seed,
        runtime_ns: None,
        time_based: false,
        rate_iops: None,
        io_size_split: Vec::new(),
    }
}

/// Runs a few IOs of each class a plan uses (reads only unless `writes`),
/// at most [`PROBE_BUDGET_NS`] in all, and learns their per-IO costs; then,
/// for each kind of IO the plan pauses between, a few IOs each after the
/// plan's longest pause of that kind (at most [`WAKE_PROBE_BUDGET_NS`] of
/// pauses in all), and learns what an IO after such a pause costs beyond
/// the pause and a back-to-back IO (`CostModel::wake`: a shorter pause
/// then costs between nothing and that).
pub fn probe(dev: &mut dyn Device, steps: &[Step], writes: bool, seed: u64) -> ProbeResult {
    let started = Instant::now();
    let classes = probe_classes(steps, writes);
    let size = dev.info().size_bytes;
    let block = (dev.info().logical_block_bytes as u64).max(512);
    let share_ns = PROBE_BUDGET_NS / classes.len().max(1) as u64;
    let mut model = CostModel::default();
    let mut ios = 0;
    let mut probed = 0;
    for (i, class) in classes.iter().enumerate() {
        let io = class.size_bytes.max(block) / block * block;
        if io * 4 > size {
            continue;
        }
        if class.mode == flashlab_device::Mode::Trim.code() {
            // Trims are not probed: they may discard what the device holds.
            continue;
        }
        let mut spec = probe_spec(format!("probe-{i}"), class, io, size, seed ^ i as u64);
        spec.queue_depth = class.outstanding.clamp(1, dev.max_outstanding() as u64);
        spec.runtime_ns = Some(share_ns);
        let mut records: Vec<IoRecord> = Vec::new();
        if execute(dev, &spec, &mut records, Hooks::default()).is_err() || records.is_empty() {
            continue;
        }
        let first = records.iter().map(|r| r.submit_ns).min().unwrap_or(0);
        let last = records.iter().map(|r| r.complete_ns).max().unwrap_or(0);
        model.observe(
            *class,
            last.saturating_sub(first) as f64 / records.len() as f64,
        );
        ios += records.len() as u64;
        probed += 1;
    }
    let wakes = wake_classes(steps, writes);
    for (i, (class, pause_ns)) in wakes.iter().enumerate() {
        let io = class.size_bytes.max(block) / block * block;
        let Some(cost) = model.per_io(class) else {
            continue;
        };
        if io * 4 > size {
            continue;
        }
        let pauses = (WAKE_PROBE_BUDGET_NS / wakes.len() as u64 / pause_ns.max(&1))
            .clamp(WAKE_PROBE_PAUSES.0, WAKE_PROBE_PAUSES.1);
        let mut spec = probe_spec(
            format!("probe-wake-{i}"),
            class,
            io,
            size,
            seed ^ (1000 + i as u64),
        );
        spec.timing = Timing::Pause {
            pause_ns: *pause_ns,
        };
        spec.io_count = pauses + 1;
        let mut records: Vec<IoRecord> = Vec::new();
        if execute(dev, &spec, &mut records, Hooks::default()).is_err() || records.len() < 2 {
            continue;
        }
        let first = records.iter().map(|r| r.submit_ns).min().unwrap_or(0);
        let last = records.iter().map(|r| r.complete_ns).max().unwrap_or(0);
        let n = records.len() as f64;
        let extra = last.saturating_sub(first) as f64 - (n - 1.0) * *pause_ns as f64 - n * cost.mid;
        if let Some((key, _)) = flashlab_suite::eta::wake_of(&spec, n) {
            model.observe_wake(key, extra / (n - 1.0));
        }
        ios += records.len() as u64;
        probed += 1;
    }
    ProbeResult {
        model,
        classes: probed,
        ios,
        wall: started.elapsed(),
        wrote: writes,
    }
}
