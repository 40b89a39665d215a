//! Executes a suite's plan step by step, recording every run, and resumes an
//! interrupted suite without losing or repeating a completed run.
//!
//! Progress is a journal (`suite.json`): the plan, the number of completed
//! steps, what calibration measured and what each adaptive run achieved,
//! rewritten atomically after every step. Resuming on a real device skips
//! the completed steps (the device keeps its state). Resuming on a simulated
//! device, whose state lived in memory, first re-executes the completed steps
//! without recording: the simulator is deterministic, so this rebuilds the
//! exact state the interrupted suite had, and the resumed suite ends with
//! the same results as an uninterrupted one.

use std::collections::BTreeMap;
use std::io;
use std::sync::atomic::{AtomicBool, Ordering};

use flashlab_device::{ClockKind, Device};
use flashlab_exec::{execute, ExecError, Hooks, Outcome, RecordSink};
use flashlab_pattern::PatternSpec;
use flashlab_results::dir::{read_json, write_json_atomic};
use flashlab_results::{IoRecord, ResultsDir, RunStatus, Workload};
use serde::{Deserialize, Serialize};

use crate::phases::{detect_period, detect_startup, BatchMeans};
use crate::plan::{Plan, RunStep, Step};
use crate::state::enforce_state;
use crate::uflip::baseline_of;

pub const JOURNAL: &str = "suite.json";
/// The longest a simulated device is left idle to finish its scheduled
/// work after state enforcement or between runs (simulated time).
pub const SIM_SETTLE_BOUND_NS: u64 = 60_000_000_000;
/// The shortest settle after state enforcement on a real device.
pub const REAL_SETTLE_NS: u64 = 1_000_000_000;
/// The plan, written once (the journal is rewritten after every step and
/// stays small).
pub const PLAN: &str = "plan.json";

#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Calibration {
    /// IOs of the start-up phase (IOIgnore).
    pub startup: u64,
    /// IOs per oscillation of the running phase.
    pub period: u64,
}

/// What an executed run achieved.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct RunOutcome {
    pub io_ignore: u64,
    /// IOs issued per stream (the automatic IOCount when adaptive).
    pub io_count: u64,
    pub batch_ios: u64,
    /// 95 % confidence half-width of the mean, relative to the mean.
    pub achieved_bound: Option<f64>,
    /// Whether the bound was met before the IOCount cap.
    pub converged: bool,
    /// Leading IOs of a fixed-count run found to be a start-up phase (uFLIP
    /// section 4.2's two-phase model, detected on the run's own first IOs)
    /// and excluded from its statistics (flagged IOIgnore in its records).
    #[serde(default)]
    pub detected_startup: u64,
}

/// The journal: everything needed to resume.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Journal {
    pub suite: String,
    pub config: serde_json::Value,
    #[serde(skip)]
    pub plan: Plan,
    pub completed_steps: usize,
    pub calibration: BTreeMap<String, Calibration>,
    /// The pause applied between runs (uFLIP 4.3).
    pub pause_between_runs_ns: Option<u64>,
    /// SR IOs after the RW batch still slower than before it.
    pub lingering_ios: Option<u64>,
    pub runs: BTreeMap<String, RunOutcome>,
    pub bound: f64,
    pub min_pause_ns: u64,
    pub min_ios: u64,
    pub finished: bool,
    /// What could not be done as planned (e.g. no write-cache switch).
    #[serde(default)]
    pub notes: Vec<String>,
}

impl Journal {
    pub fn load(results: &ResultsDir) -> io::Result<Journal> {
        let mut j: Journal = read_json(&results.root().join(JOURNAL))?;
        j.plan = read_json(&results.root().join(PLAN))?;
        Ok(j)
    }

    /// Writes the plan; once, when the suite starts.
    pub fn save_plan(&self, results: &ResultsDir) -> io::Result<()> {
        write_json_atomic(&results.root().join(PLAN), &self.plan)
    }

    pub fn save(&self, results: &ResultsDir) -> io::Result<()> {
        write_json_atomic(&results.root().join(JOURNAL), self)
    }
}

/// Progress as the runner reports it.
#[derive(Clone, Debug)]
pub struct Progress {
    pub step: usize,
    pub steps: usize,
    pub what: String,
    /// IOs of the plan's budget done so far, and the budget.
    pub ios_done: u64,
    pub ios_total: u64,
    /// Re-executing completed steps to rebuild a simulated device's state.
    pub replaying: bool,
    /// Set when this report is the end of one of the step's runs (a step
    /// reports once as it starts, and once per run as each ends).
    pub finished_run: Option<FinishedRun>,
    /// The pause the runner waits before each run-step from now on (uFLIP
    /// 4.3: the minimum until the pause probe has measured it).
    pub pause_between_runs_ns: u64,
}

/// A run that just ended, for the remaining-time estimate
/// ([`crate::eta`]).
#[derive(Clone, Debug)]
pub struct FinishedRun {
    pub name: String,
    /// IOs completed over all its streams.
    pub ios: u64,
    /// Device time from its start to its end, without the pause before it
    /// (wall time on a real device, simulated time on the simulator).
    pub device_ns: u64,
}

#[derive(Debug)]
pub enum SuiteError {
    Exec(ExecError),
    Results(io::Error),
    Device(flashlab_device::DeviceError),
}

impl std::fmt::Display for SuiteError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            SuiteError::Exec(e) => write!(f, "{e}"),
            SuiteError::Results(e) => write!(f, "cannot save results: {e}"),
            SuiteError::Device(e) => write!(f, "{e}"),
        }
    }
}

impl From<ExecError> for SuiteError {
    fn from(e: ExecError) -> Self {
        SuiteError::Exec(e)
    }
}
impl From<io::Error> for SuiteError {
    fn from(e: io::Error) -> Self {
        SuiteError::Results(e)
    }
}
impl From<flashlab_device::DeviceError> for SuiteError {
    fn from(e: flashlab_device::DeviceError) -> Self {
        SuiteError::Device(e)
    }
}

/// Registers every run of a fresh plan in the manifest, so that the
/// manifest lists the whole suite before the first IO.
pub fn register_runs(results: &mut ResultsDir, plan: &Plan) -> io::Result<()> {
    let runs = plan.steps.iter().flat_map(|step| step.runs());
    results.plan_runs(runs.map(|r| (r.name.clone(), Workload::Pattern(r.spec.clone()))))?;
    Ok(())
}

/// Forwards records to the results (or nowhere, when replaying) and decides
/// when an adaptive run has enough IOs.
struct AdaptiveSink<'a> {
    out: Option<&'a mut dyn RecordSink>,
    batches: BatchMeans,
    adaptive: bool,
    min_ios: u64,
    bound: f64,
    measured: u64,
    converged: bool,
    stop: &'a AtomicBool,
    user_stop: &'a AtomicBool,
    latencies: Vec<u64>,
    keep_latencies: bool,
    issued_max_index: u64,
    /// Fixed-count runs: their first IOs, held until the start-up phase
    /// among them is known.
    startup: Option<StartupFilter>,
    /// Every record received (the run's completed IOs).
    completed: u64,
}

/// Holds a run's first `window` records, finds the start-up phase among
/// them with [`detect_startup`] (no fixed count), and forwards them with
/// the start-up IOs flagged IOIgnore.
struct StartupFilter {
    window: usize,
    held: Vec<IoRecord>,
    detected: Option<u64>,
}

/// Most records held for start-up detection (a start-up of up to half of
/// it is found: ssd-l's 4096-write log fill fits).
pub const STARTUP_WINDOW: usize = 16_384;

impl AdaptiveSink<'_> {
    /// Decides the start-up phase of the held records and forwards them.
    fn release_startup(&mut self) -> io::Result<()> {
        let Some(f) = self.startup.as_mut() else {
            return Ok(());
        };
        if f.detected.is_some() {
            return Ok(());
        }
        let lat: Vec<u64> = f
            .held
            .iter()
            .filter(|r| !r.is_error())
            .map(|r| r.latency_ns())
            .collect();
        let k = detect_startup(&lat);
        f.detected = Some(k as u64);
        let held = std::mem::take(&mut f.held);
        for (i, mut r) in held.into_iter().enumerate() {
            if i < k {
                r.flags |= flashlab_results::records::FLAG_WARMUP;
            }
            self.forward(&r)?;
        }
        Ok(())
    }

    fn forward(&mut self, r: &IoRecord) -> io::Result<()> {
        if let Some(out) = self.out.as_mut() {
            out.record(r)?;
        }
        self.issued_max_index = self.issued_max_index.max(r.index + 1);
        if self.keep_latencies {
            self.latencies.push(r.latency_ns());
        }
        if self.user_stop.load(Ordering::Relaxed) {
            self.stop.store(true, Ordering::Relaxed);
        }
        if r.is_warmup() || r.is_error() {
            return Ok(());
        }
        self.measured += 1;
        if self.batches.push(r.latency_ns())
            && self.adaptive
            && !self.converged
            && self.measured >= self.min_ios
        {
            if let Some((_, rel)) = self.batches.interval() {
                if self.batches.batches() >= 10 && rel <= self.bound {
                    self.converged = true;
                    self.stop.store(true, Ordering::Relaxed);
                }
            }
        }
        Ok(())
    }
}

impl RecordSink for AdaptiveSink<'_> {
    fn record(&mut self, r: &IoRecord) -> io::Result<()> {
        self.completed += 1;
        if self.user_stop.load(Ordering::Relaxed) {
            self.stop.store(true, Ordering::Relaxed);
        }
        if let Some(f) = self.startup.as_mut() {
            if f.detected.is_none() {
                f.held.push(*r);
                if f.held.len() >= f.window {
                    self.release_startup()?;
                }
                return Ok(());
            }
        }
        self.forward(r)
    }
}

pub struct Runner<'a> {
    pub dev: &'a mut dyn Device,
    pub results: &'a mut ResultsDir,
    pub journal: Journal,
    pub user_stop: &'a AtomicBool,
    pub progress: &'a mut dyn FnMut(&Progress),
    pub block_bytes: u64,
    pub state_queue_depth: usize,
}

/// The step a progress report is about.
struct StepAt {
    step: usize,
    steps: usize,
    what: String,
    ios_done: u64,
    ios_total: u64,
    replaying: bool,
}

/// How a suite ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SuiteOutcome {
    Complete,
    Interrupted,
}

impl Runner<'_> {
    fn run_index(&self, name: &str) -> usize {
        self.results
            .manifest()
            .runs
            .iter()
            .position(|r| r.name == name)
            .expect("every planned run is registered")
    }

    fn ignore_and_batch(&self, spec: &PatternSpec) -> (u64, u64) {
        // uFLIP scales IOIgnore for mixed patterns: a component that is one
        // IO in k needs k times as many IOs to get through its start-up.
        let total_ratio = spec
            .mix
            .as_ref()
            .map(|m| m.ratio_primary + m.ratio_secondary)
            .unwrap_or(1);
        let mut ignore = 0;
        let mut batch = 1;
        for (i, b) in spec.basics().enumerate() {
            let share = match (&spec.mix, i) {
                (None, _) => 1,
                (Some(m), 0) => m.ratio_primary,
                (Some(m), _) => m.ratio_secondary,
            };
            let scale = total_ratio.div_ceil(share.max(1));
            let c = self
                .journal
                .calibration
                .get(baseline_of(b))
                .copied()
                .unwrap_or_default();
            ignore = ignore.max(c.startup * scale);
            batch = batch.max(c.period * scale);
        }
        (ignore.min(spec.io_count / 2), batch.max(16))
    }

    /// Runs (or, when `record` is false, re-executes) one run.
    fn run(
        &mut self,
        step: &RunStep,
        record: bool,
        adaptive: bool,
        keep: bool,
        detect_own_startup: bool,
        at: &StepAt,
    ) -> Result<(Outcome, RunOutcome, Vec<u64>), SuiteError> {
        let (ignore, batch) = if adaptive {
            self.ignore_and_batch(&step.spec)
        } else {
            (0, 1)
        };
        let mut spec = step.spec.clone();
        spec.io_ignore = ignore;
        let stop = AtomicBool::new(false);
        // Device statistics per run: whatever happened before (state
        // enforcement, earlier runs, a resume's re-execution) is not this
        // run's.
        self.dev.reset_stats();
        // A run bounded by time (the paper's "runs for 10 seconds") is
        // measured whole, as the paper averaged it: its first writes are
        // part of what the paper saw, not a start-up to skip.
        let detect =
            detect_own_startup && !adaptive && ignore == 0 && step.spec.runtime_ns.is_none();
        let idx = self.run_index(&step.name);
        let mut writer = if record {
            Some(self.results.start_run(idx)?)
        } else {
            None
        };
        let mut sink = AdaptiveSink {
            out: writer.as_mut().map(|w| w as &mut dyn RecordSink),
            batches: BatchMeans::new(batch as usize),
            adaptive,
            min_ios: self.journal.min_ios,
            bound: self.journal.bound,
            measured: 0,
            converged: false,
            stop: &stop,
            user_stop: self.user_stop,
            latencies: Vec::new(),
            keep_latencies: keep,
            issued_max_index: 0,
            startup: detect.then(|| StartupFilter {
                window: (spec.total_ios() as usize).clamp(1, STARTUP_WINDOW),
                held: Vec::new(),
                detected: None,
            }),
            completed: 0,
        };
        let started_ns = self.dev.now_ns();
        let result = execute(
            self.dev,
            &spec,
            &mut sink,
            Hooks {
                stop: Some(&stop),
                progress: None,
            },
        );
        let finished = FinishedRun {
            name: step.name.clone(),
            ios: sink.completed,
            device_ns: self.dev.now_ns().saturating_sub(started_ns),
        };
        sink.release_startup()?;
        let detected_startup = sink.startup.as_ref().and_then(|f| f.detected).unwrap_or(0);
        let outcome = RunOutcome {
            detected_startup,
            io_ignore: ignore,
            io_count: sink.issued_max_index,
            batch_ios: batch,
            achieved_bound: sink.batches.interval().map(|(_, r)| r),
            converged: sink.converged,
        };
        let latencies = std::mem::take(&mut sink.latencies);
        let user_stopped = self.user_stop.load(Ordering::Relaxed);
        let (status, error, out) = match &result {
            Ok(Outcome::Interrupted) if !user_stopped => {
                (RunStatus::Complete, None, Outcome::Complete)
            }
            Ok(o) => (
                if *o == Outcome::Complete {
                    RunStatus::Complete
                } else {
                    RunStatus::Interrupted
                },
                None,
                *o,
            ),
            Err(e) => (RunStatus::Failed, Some(e.to_string()), Outcome::Interrupted),
        };
        if let Some(w) = writer {
            // An adaptive run that stopped at its cap, not at its bound.
            if adaptive && !outcome.converged && !user_stopped && result.is_ok() {
                self.results.add_warning(
                    idx,
                    flashlab_results::warnings::not_converged(
                        outcome.io_count,
                        outcome.achieved_bound,
                        self.journal.bound,
                    ),
                );
            }
            let tally = w.finish()?;
            spec.io_count = outcome.io_count.max(1);
            self.results.set_workload(idx, Workload::Pattern(spec));
            self.results.finish_run_tallied(
                idx,
                status,
                error,
                flashlab_results::device_stats_json(&self.dev.stats()),
                Some(tally),
            )?;
            self.dev.reset_stats();
        }
        result?;
        if out == Outcome::Complete {
            self.report(at, Some(finished));
        }
        Ok((out, outcome, latencies))
    }

    /// Executes the plan from the first incomplete step; on a simulated
    /// device first re-executes the completed ones without recording.
    /// Long: one arm per kind of plan step, all sharing the journal, the device and the results
    /// directory.
    pub fn execute(&mut self) -> Result<SuiteOutcome, SuiteError> {
        let steps = self.journal.plan.steps.clone();
        let size = self.dev.info().size_bytes;
        let total: u64 = steps.iter().map(|s| s.io_budget(size)).sum();
        let simulated = self.dev.info().clock == ClockKind::Simulated;
        let mut done_ios = 0u64;
        let mut first_run = true;
        if simulated && self.journal.completed_steps > 0 {
            // The completed steps are replayed, and each must meet the pause
            // the original run had at that point: the minimum until the
            // pause step measured the lingering effect (its replay measures
            // the same value again), not the measured one from the start.
            self.journal.pause_between_runs_ns = None;
        }
        for (i, step) in steps.iter().enumerate() {
            let completed = i < self.journal.completed_steps;
            if completed && !simulated {
                done_ios += step.io_budget(size);
                continue;
            }
            let record = !completed;
            let at = StepAt {
                step: i + 1,
                steps: steps.len(),
                what: step_label(step),
                ios_done: done_ios,
                ios_total: total,
                replaying: !record,
            };
            self.report(&at, None);
            if self.user_stop.load(Ordering::Relaxed) {
                return Ok(SuiteOutcome::Interrupted);
            }
            let finished = match step {
                Step::EnforceState { method, .. } => {
                    let mut nop = |_: u64, _: u64| {};
                    let seed = self
                        .journal
                        .config
                        .get("seed")
                        .and_then(|s| s.as_u64())
                        .unwrap_or(42)
                        ^ i as u64;
                    enforce_state(
                        self.dev,
                        *method,
                        seed,
                        self.state_queue_depth,
                        self.block_bytes,
                        self.user_stop,
                        &mut nop,
                    )?
                    .is_some()
                        && {
                            self.settle()?;
                            true
                        }
                }
                Step::Calibrate { baseline, run } => {
                    self.pause_between(&mut first_run)?;
                    let (o, outcome, lat) = self.run(run, record, false, true, false, &at)?;
                    if o == Outcome::Complete && record {
                        let startup = detect_startup(&lat);
                        let period = detect_period(&lat[startup..]);
                        self.journal.calibration.insert(
                            baseline.clone(),
                            Calibration {
                                startup: startup as u64,
                                period: period as u64,
                            },
                        );
                        self.journal.runs.insert(run.name.clone(), outcome);
                    }
                    o == Outcome::Complete
                }
                Step::MeasurePause {
                    before,
                    writes,
                    after,
                } => {
                    self.pause_between(&mut first_run)?;
                    let (o1, _, lat_before) = self.run(before, record, false, true, false, &at)?;
                    let (o2, _, _) = if o1 == Outcome::Complete {
                        self.run(writes, record, false, false, false, &at)?
                    } else {
                        (o1, RunOutcome::default(), vec![])
                    };
                    let (o3, _, lat_after) = if o2 == Outcome::Complete {
                        self.run(after, record, false, true, false, &at)?
                    } else {
                        (o2, RunOutcome::default(), vec![])
                    };
                    // Also when replaying (not recording): the later steps'
                    // pause depends on it.
                    if o3 == Outcome::Complete {
                        let (lingering, lingering_ns) = lingering(&lat_before, &lat_after);
                        self.journal.lingering_ios = Some(lingering);
                        self.journal.pause_between_runs_ns =
                            Some((2 * lingering_ns).max(self.journal.min_pause_ns));
                    }
                    o3 == Outcome::Complete
                }
                Step::WriteCache { enabled } => {
                    if let Err(e) = self.dev.set_write_cache(*enabled) {
                        let note = format!(
                            "step {}: write cache {} not possible: {e}",
                            i + 1,
                            if *enabled { "on" } else { "off" }
                        );
                        if record && !self.journal.notes.contains(&note) {
                            self.journal.notes.push(note);
                        }
                    }
                    true
                }
                Step::Discard { .. } => {
                    if let Err(e) = discard_all(self.dev) {
                        let note = format!("step {}: discarding the device failed: {e}", i + 1);
                        if record && !self.journal.notes.contains(&note) {
                            self.journal.notes.push(note);
                        }
                    }
                    self.settle()?;
                    true
                }
                Step::Reconfigure { overrides, .. } => {
                    // A fresh device: nothing of the previous one's state,
                    // scheduled work or clock carries over.
                    self.dev.reconfigure(overrides)?;
                    first_run = true;
                    true
                }
                Step::Run(run) => {
                    self.pause_between(&mut first_run)?;
                    let (o, outcome, _) = self.run(run, record, run.adaptive, false, true, &at)?;
                    if o == Outcome::Complete && record {
                        self.journal.runs.insert(run.name.clone(), outcome);
                    }
                    o == Outcome::Complete
                }
            };
            if !finished {
                self.journal.save(self.results)?;
                return Ok(SuiteOutcome::Interrupted);
            }
            done_ios += step.io_budget(size);
            if record {
                self.journal.completed_steps = i + 1;
                self.journal.save(self.results)?;
            }
        }
        self.journal.finished = true;
        self.journal.save(self.results)?;
        self.report(
            &StepAt {
                step: steps.len(),
                steps: steps.len(),
                what: "done".into(),
                ios_done: total,
                ios_total: total,
                replaying: false,
            },
            None,
        );
        Ok(SuiteOutcome::Complete)
    }

    /// Reports progress: a step starting, or one of its runs ending.
    fn report(&mut self, at: &StepAt, finished_run: Option<FinishedRun>) {
        let pause_between_runs_ns = self
            .journal
            .pause_between_runs_ns
            .unwrap_or(self.journal.min_pause_ns);
        (self.progress)(&Progress {
            step: at.step,
            steps: at.steps,
            what: at.what.clone(),
            ios_done: at.ios_done,
            ios_total: at.ios_total,
            replaying: at.replaying,
            finished_run,
            pause_between_runs_ns,
        });
    }

    /// Waits the measured pause between runs (uFLIP 4.3) so that one run's
    /// background work does not leak into the next.
    fn pause_between(&mut self, first: &mut bool) -> Result<(), SuiteError> {
        if std::mem::take(first) {
            return Ok(());
        }
        let pause = self
            .journal
            .pause_between_runs_ns
            .unwrap_or(self.journal.min_pause_ns);
        let until = self.dev.now_ns() + pause;
        self.dev.idle_until(until)?;
        self.drain()
    }

    /// After state enforcement (or a discard): wait until the device is
    /// idle, so that the first request of the next run does not wait for
    /// leftover flash work (Chen et al.'s and uFLIP's means took up to
    /// 554 ms of it). A simulated device says when its scheduled work ends;
    /// a real one gets the measured pause between runs, at least
    /// [`REAL_SETTLE_NS`].
    fn settle(&mut self) -> Result<(), SuiteError> {
        if self.dev.info().clock == ClockKind::Simulated {
            return self.drain();
        }
        let pause = self
            .journal
            .pause_between_runs_ns
            .unwrap_or(self.journal.min_pause_ns)
            .max(REAL_SETTLE_NS);
        let until = self.dev.now_ns() + pause;
        self.dev.idle_until(until)?;
        Ok(())
    }

    /// On a simulated device: idle until its scheduled work (requests,
    /// write-backs, GC) has ended, at most [`SIM_SETTLE_BOUND_NS`] of
    /// simulated time. Nothing on real devices (their pause is measured).
    fn drain(&mut self) -> Result<(), SuiteError> {
        let start = self.dev.now_ns();
        let bound = start + SIM_SETTLE_BOUND_NS;
        // Idle time may start background work that ends later still; a
        // few rounds reach quiet, the bound ends it regardless.
        for _ in 0..64 {
            let Some(q) = self.dev.quiesce_at_ns() else {
                return Ok(());
            };
            let now = self.dev.now_ns();
            if q <= now || now >= bound {
                break;
            }
            self.dev.idle_until(q.min(bound))?;
        }
        Ok(())
    }
}

/// Discards the whole device in 1 GiB requests, one at a time.
fn discard_all(dev: &mut dyn Device) -> Result<(), flashlab_device::DeviceError> {
    let size = dev.info().size_bytes;
    let chunk = 1u64 << 30;
    let mut off = 0;
    let mut out = Vec::new();
    while off < size {
        let len = chunk.min(size - off);
        dev.submit(flashlab_device::IoRequest {
            tag: 0,
            offset_bytes: off,
            size_bytes: len as u32,
            mode: flashlab_device::Mode::Trim,
        })?;
        loop {
            out.clear();
            dev.poll(None, &mut out)?;
            if let Some(c) = out.first() {
                if let Some(errno) = c.errno {
                    return Err(flashlab_device::DeviceError::Os {
                        what: "discard".into(),
                        errno,
                    });
                }
                break;
            }
        }
        off += len;
    }
    Ok(())
}

fn step_label(step: &Step) -> String {
    match step {
        Step::WriteCache { enabled } => {
            format!("write cache {}", if *enabled { "on" } else { "off" })
        }
        Step::Discard { .. } => "discard".into(),
        Step::Reconfigure { overrides, .. } => format!("device {overrides}"),
        Step::EnforceState { method, .. } => format!("state: {}", method.name()),
        Step::Calibrate { baseline, .. } => format!("calibrate {baseline}"),
        Step::MeasurePause { .. } => "pause probe".into(),
        Step::Run(r) => r.name.clone(),
    }
}

/// How many sequential reads after a batch of random writes are slowed by
/// them, and how long they took (uFLIP 4.3: "We count the number of
/// sequential reads in the second batch which are affected by the random
/// writes").
///
/// Both batches read the same addresses in the same order, so read `i` after
/// the writes is compared with read `i` before them (a device's own periodic
/// costs, e.g. a read-ahead refill every N reads, cancel out). The affected
/// reads end at the last window of 32 whose total is over 10 % above the same
/// window before the writes, at its last read that is itself over 10 % slower.
/// Counting up to the *last* disturbed window, not to the first undisturbed
/// one: write-back competing with reads slows them unevenly (a read that
/// meets no merge on its dies is not slowed), so an early undisturbed window
/// does not mean the effect is over.
pub fn lingering(before: &[u64], after: &[u64]) -> (u64, u64) {
    let n = before.len().min(after.len());
    if n == 0 {
        return (0, 0);
    }
    let w = 32.min(n);
    let slower = |a: u64, b: u64| a as f64 > 1.1 * b as f64;
    let (mut sum_a, mut sum_b) = (0u64, 0u64);
    let mut last_window = None;
    for i in 0..n {
        sum_a += after[i];
        sum_b += before[i];
        if i >= w {
            sum_a -= after[i - w];
            sum_b -= before[i - w];
        }
        if i + 1 >= w && slower(sum_a, sum_b) {
            last_window = Some(i + 1 - w);
        }
    }
    let Some(start) = last_window else {
        return (0, 0);
    };
    let end = (start..start + w)
        .rev()
        .find(|&k| slower(after[k], before[k]))
        .map_or(start + w, |k| k + 1);
    (end as u64, after[..end].iter().sum())
}

#[cfg(test)]
mod tests {
    use super::lingering;

    #[test]
    fn reads_slowed_unevenly_after_the_writes_count_up_to_the_last_slowed_one() {
        let before = vec![400u64; 4096];
        let mut after = before.clone();
        // The first 100 reads meet no write-back, then 1900 reads are slowed
        // on every other read (the merges on their dies), then none.
        for (i, a) in after.iter_mut().enumerate().take(2000).skip(100) {
            if i % 2 == 0 {
                *a = 900;
            }
        }
        let (n, ns) = lingering(&before, &after);
        assert_eq!(n, 1999, "the last slowed read is read 1998");
        assert_eq!(ns, 1999 * 400 + 950 * 500);
    }

    #[test]
    fn a_devices_own_periodic_costs_are_not_lingering() {
        // Every 128th read refills a buffer (4x slower) before and after alike.
        let before: Vec<u64> = (0..4096)
            .map(|i| if i % 128 == 0 { 1600 } else { 400 })
            .collect();
        assert_eq!(lingering(&before, &before.clone()), (0, 0));
    }

    #[test]
    fn one_read_waiting_for_a_drain_is_one_affected_read() {
        let before = vec![400u64; 1024];
        let mut after = before.clone();
        after[0] = 1_000_000;
        assert_eq!(lingering(&before, &after), (1, 1_000_000));
        assert_eq!(lingering(&before, &before), (0, 0));
        assert_eq!(lingering(&[], &after), (0, 0));
    }
}
