//! Running a workload is one verb.
//!
//! A [`Workload`] is what a results directory is made of: pattern runs, a
//! trace replay, the pattern runs of another results directory, or a paper
//! suite. It deserializes from a grid's TOML and from Python's dicts (the
//! sweep crate's grid), and `flashlab replay`'s flags build the same
//! [`TraceSpec`]; its settings are checked here once, and a refused setting
//! names its field as each front end spells it ([`FrontEnd`]).
//!
//! [`run`] runs one on a device into a results directory and returns every
//! run's summary and the suite's typed summary. Sweep points, Python's
//! `simulate`, `sweep` and `fit`, `flashlab validate`, `flashlab run` and
//! `flashlab replay` call it in-process; a front end with a terminal is
//! told what happens through one small trait ([`Observer`]: a run starts,
//! its progress, it ends) and stops it with [`RunOptions::stop`] (Ctrl-C).

#![forbid(unsafe_code)]

mod error;
mod patterns;
pub mod scoreboard;
mod suite;
mod trace;

use std::path::PathBuf;
use std::sync::atomic::AtomicBool;

use flashlab_device::Device;
use flashlab_exec::{execute, replay, ExecError, Hooks};
use flashlab_pattern::{PatternArgs, PatternSpec};
use flashlab_results::{HostInfo, ResultsDir, RunStatus, RunSummary, Tally};
use flashlab_suite::summary::SuiteSummary;
use serde::{Deserialize, Serialize};

pub use error::{Field, FrontEnd, Problem, WorkloadError};
pub use flashlab_suite::runner::{Journal, Progress as SuiteProgress};
pub use patterns::{check_patterns, replicated_specs, resolve_patterns};
pub use suite::{begin_suite, run_journal, SuiteSpec};
pub use trace::{ParsedTrace, PreparedTrace, TraceSpec};

/// The most outstanding IOs a simulated device is opened for, and the most
/// any pattern run or replay may keep in flight.
pub const SIM_MAX_OUTSTANDING: usize = 4096;

/// Open-loop replay: the most requests in flight before a request counts as late.
pub const DEFAULT_OPEN_LOOP_IN_FLIGHT: usize = 256;

/// The queue depth of a suite's state enforcement.
pub const SUITE_STATE_QUEUE_DEPTH: usize = 32;

/// What a results directory is made of.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Workload {
    /// Pattern runs, with the pattern file's defaults applied, run in order on one device.
    Patterns { runs: Vec<PatternArgs> },
    /// A trace replayed on the device.
    Trace(TraceSpec),
    /// The pattern runs recorded in a results directory's manifest, exactly as
    /// resolved there (only those named in `runs`, when given, in manifest order).
    Replicate {
        dir: PathBuf,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        runs: Option<Vec<String>>,
    },
    /// A paper suite, with the run's seed.
    Suite(SuiteSpec),
}

impl Workload {
    /// Whether a grid's parameter `key` is a setting of this workload (as
    /// opposed to the simulator's): for pattern runs, a pattern key
    /// (`io_size`, `queue_depth`, `parallel`, `location`, ...; not `name`
    /// or `seed`, which a grid sets otherwise); for a replay, `queue_depth`
    /// or `speed`; for a suite, `suite.OPTION`.
    pub fn is_key(&self, key: &str) -> bool {
        match self {
            Workload::Patterns { .. } => {
                flashlab_pattern::args::FIELD_NAMES.contains(&key) && key != "name" && key != "seed"
            }
            Workload::Trace(_) => key == "queue_depth" || key == "speed",
            Workload::Replicate { .. } => false,
            Workload::Suite(_) => key.starts_with("suite."),
        }
    }

    /// This workload with `params` (keys for which [`Workload::is_key`]
    /// holds) replacing its settings: every pattern run's, the replay's,
    /// or the suite's options. A value of the wrong type is refused,
    /// naming the key.
    pub fn with_params(
        &self,
        params: &[(String, serde_json::Value)],
    ) -> Result<Workload, WorkloadError> {
        if params.is_empty() {
            return Ok(self.clone());
        }
        // Through the settings' own serde: a value is read exactly as the
        // same key written in the workload's table would be.
        fn set<T: Serialize + serde::de::DeserializeOwned>(
            value: &T,
            params: &[(String, serde_json::Value)],
        ) -> Result<T, WorkloadError> {
            let mut v = serde_json::to_value(value).expect("settings serialize");
            for (key, x) in params {
                v[key.as_str()] = x.clone();
            }
            serde_json::from_value(v).map_err(|e| {
                let keys: Vec<&str> = params.iter().map(|(k, _)| k.as_str()).collect();
                WorkloadError::Input(format!(
                    "parameter {}: {e}; give values as the workload's table takes them",
                    keys.join(", ")
                ))
            })
        }
        let unknown = params.iter().find(|(k, _)| !self.is_key(k));
        if let Some((key, _)) = unknown {
            return Err(WorkloadError::Input(format!(
                "parameter {key} is not a setting of this workload"
            )));
        }
        Ok(match self {
            Workload::Patterns { runs } => Workload::Patterns {
                runs: runs
                    .iter()
                    .map(|r| set(r, params))
                    .collect::<Result<_, _>>()?,
            },
            Workload::Trace(t) => Workload::Trace(set(t, params)?),
            Workload::Replicate { .. } => self.clone(),
            Workload::Suite(s) => {
                let mut s = s.clone();
                for (key, x) in params {
                    let option = key.strip_prefix("suite.").unwrap_or(key);
                    s.options.insert(option.to_string(), x.clone());
                }
                Workload::Suite(s)
            }
        })
    }
}

/// What a workload asks of the device it runs on, known before it runs: a
/// real device is opened for writing (after the safety check) only when the
/// workload writes or trims, with its io_uring ring and buffers sized for
/// the most IOs in flight and the largest IO. A flush needs no write access
/// (fsync works on a read-only descriptor).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct DeviceNeeds {
    pub writes: bool,
    pub max_outstanding: usize,
    pub max_io_bytes: u64,
}

impl DeviceNeeds {
    /// The needs of pattern runs done one after another.
    pub fn of_patterns(specs: &[PatternSpec]) -> DeviceNeeds {
        DeviceNeeds {
            writes: specs.iter().any(PatternSpec::writes),
            max_outstanding: specs
                .iter()
                .map(PatternSpec::max_outstanding)
                .max()
                .unwrap_or(1),
            max_io_bytes: specs
                .iter()
                .map(PatternSpec::max_io_bytes)
                .max()
                .unwrap_or(512),
        }
    }

    /// The needs of a replay: its requests that modify the device, the most
    /// it keeps in flight, its largest request.
    pub fn of_trace(trace: &PreparedTrace) -> DeviceNeeds {
        DeviceNeeds {
            writes: trace
                .ios
                .iter()
                .any(|io| matches!(io.op, flashlab_trace::TraceOp::Io(m) if m.modifies())),
            max_outstanding: trace.in_flight.max(1),
            max_io_bytes: trace
                .ios
                .iter()
                .map(|io| io.size_bytes)
                .max()
                .unwrap_or(512),
        }
    }
}

/// A workload resolved against the device it will run on: pattern specs,
/// a trace read and fitted, or a suite (planned when it runs). Preparing
/// once lets a front end size the device from [`Prepared::needs`] and run
/// exactly what it sized it for ([`run_prepared`]), with the trace read once.
pub enum Prepared {
    Patterns(Vec<PatternSpec>),
    Trace(PreparedTrace),
    Suite(SuiteSpec),
    /// A suite already begun in the results directory: planned by a front
    /// end (`flashlab suite NAME`'s flags) or resumed (`--resume`).
    Journal(Journal),
}

impl Workload {
    /// Resolves this workload on a device described by `info`, with `seed`
    /// for every run that does not fix its own.
    pub fn prepare(
        &self,
        seed: u64,
        info: &flashlab_device::DeviceInfo,
    ) -> Result<Prepared, WorkloadError> {
        let lbs = info.logical_block_bytes as u64;
        Ok(match self {
            Workload::Patterns { runs } => {
                Prepared::Patterns(resolve_patterns(runs, Some(seed), info, lbs)?)
            }
            Workload::Replicate { dir, runs } => {
                Prepared::Patterns(replicated_specs(dir, runs.as_deref(), info)?)
            }
            Workload::Trace(t) => {
                t.check()?;
                Prepared::Trace(t.prepare(t.read()?, info.size_bytes, lbs)?)
            }
            Workload::Suite(s) => Prepared::Suite(s.clone()),
        })
    }
}

impl Prepared {
    /// What the device must offer; `None` for a suite, whose runs are
    /// planned on the device itself.
    pub fn needs(&self) -> Option<DeviceNeeds> {
        match self {
            Prepared::Patterns(specs) => Some(DeviceNeeds::of_patterns(specs)),
            Prepared::Trace(trace) => Some(DeviceNeeds::of_trace(trace)),
            Prepared::Suite(_) | Prepared::Journal(_) => None,
        }
    }
}

/// How [`run`] runs a workload.
pub struct RunOptions<'a> {
    /// The seed of every run that does not fix its own, and of a suite.
    pub seed: u64,
    /// Keep each run's per-IO records (`records.bin`); without them a run
    /// has its histogram's statistics only.
    pub records: bool,
    /// Set from outside to stop: a workload stopped early is an error.
    pub stop: &'a AtomicBool,
}

/// What a workload left: every run's summary (the runs before a failure
/// too), and a suite's summary.
#[derive(Default)]
pub struct Outcome {
    pub runs: Vec<RunSummary>,
    pub suite: Option<SuiteSummary>,
    /// A suite's journal as the suite left it: where a stopped suite resumes.
    pub journal: Option<Journal>,
}

/// A workload that failed, with the runs it completed first.
pub struct Failed {
    pub outcome: Outcome,
    pub error: WorkloadError,
}

/// What a front end is told while a workload runs (hyperfine-style: one
/// small trait, every method a no-op by default): `flashlab run` prints a
/// line as each run starts, a progress bar while it runs, a table when it
/// ends. The run loop itself is [`run`]'s alone.
pub trait Observer {
    /// Run `start.index` (0-based) of `start.count` is about to start.
    fn run_started(&mut self, _start: &RunStart<'_>) {}
    /// About every 1 % of the current run: (completed, total) IOs, or for a
    /// run with a runtime, milliseconds of device time.
    fn progress(&mut self, _done: u64, _total: u64) {}
    /// The current run ended (complete, interrupted or failed) and its
    /// results are saved.
    fn run_finished(&mut self, _summary: &RunSummary) {}
    /// A suite's step started, or one of its runs ended (its runs are not
    /// announced one by one: the suite's runner plans them as it goes).
    fn suite_progress(&mut self, _progress: &SuiteProgress) {}
}

/// An observer that is told nothing: sweep points, Python, validate.
pub struct Unobserved;

impl Observer for Unobserved {}

/// A run about to start, as [`Observer::run_started`] is told it.
pub struct RunStart<'a> {
    /// The run's index in the results directory (0-based).
    pub index: usize,
    /// How many runs the workload makes.
    pub count: usize,
    pub name: &'a str,
    pub what: RunKind<'a>,
}

/// What a run does: a pattern or a replay.
pub enum RunKind<'a> {
    Pattern(&'a PatternSpec),
    Replay(&'a PreparedTrace),
}

/// Runs `workload` on `device` into `results` (a results directory just
/// created for it, whose manifest names the device), each run's device
/// statistics reset after it, and the summary written at the end.
pub fn run(
    workload: &Workload,
    device: &mut dyn Device,
    results: &mut ResultsDir,
    options: &RunOptions<'_>,
) -> Result<Outcome, Box<Failed>> {
    match workload.prepare(options.seed, device.info()) {
        Ok(prepared) => run_prepared(prepared, device, results, options),
        Err(error) => Err(Box::new(Failed {
            outcome: Outcome::default(),
            error,
        })),
    }
}

/// [`run`] for a workload already prepared ([`Workload::prepare`]) on this
/// device's description.
pub fn run_prepared(
    prepared: Prepared,
    device: &mut dyn Device,
    results: &mut ResultsDir,
    options: &RunOptions<'_>,
) -> Result<Outcome, Box<Failed>> {
    run_observed(prepared, device, results, options, &mut Unobserved)
}

/// [`run_prepared`], telling `observer` what happens. The summary is
/// written at the end, also when a run fails or is interrupted; a run
/// that ended early is the last of [`Failed::outcome`]'s runs, with its
/// status.
pub fn run_observed(
    prepared: Prepared,
    device: &mut dyn Device,
    results: &mut ResultsDir,
    options: &RunOptions<'_>,
    observer: &mut dyn Observer,
) -> Result<Outcome, Box<Failed>> {
    let mut outcome = Outcome::default();
    let result = run_into(prepared, device, results, options, observer, &mut outcome);
    match result {
        Ok(()) => Ok(outcome),
        Err(error) => Err(Box::new(Failed { outcome, error })),
    }
}

fn run_into(
    prepared: Prepared,
    device: &mut dyn Device,
    results: &mut ResultsDir,
    options: &RunOptions<'_>,
    observer: &mut dyn Observer,
    outcome: &mut Outcome,
) -> Result<(), WorkloadError> {
    match prepared {
        Prepared::Patterns(specs) => {
            let ran = run_specs(
                device,
                results,
                &specs,
                options,
                observer,
                &mut outcome.runs,
            );
            // Written once more at the end (run_specs writes it when due),
            // also after a failed or interrupted run.
            let saved = write_summary(results);
            ran.and(saved)
        }
        Prepared::Trace(trace) => {
            run_trace(device, results, trace, options, observer, &mut outcome.runs)
        }
        Prepared::Suite(s) => {
            let journal = begin_suite(device.info().size_bytes, results, &s, options.seed)?;
            run_journal_into(device, results, journal, options, observer, outcome)
        }
        Prepared::Journal(journal) => {
            run_journal_into(device, results, journal, options, observer, outcome)
        }
    }
}

fn run_journal_into(
    device: &mut dyn Device,
    results: &mut ResultsDir,
    mut journal: Journal,
    options: &RunOptions<'_>,
    observer: &mut dyn Observer,
    outcome: &mut Outcome,
) -> Result<(), WorkloadError> {
    let summary = run_journal(device, results, &mut journal, options.stop, observer);
    outcome.runs.extend(results.summary().runs);
    outcome.journal = Some(journal);
    outcome.suite = Some(summary?);
    Ok(())
}

fn run_specs(
    device: &mut dyn Device,
    results: &mut ResultsDir,
    specs: &[PatternSpec],
    options: &RunOptions<'_>,
    observer: &mut dyn Observer,
    runs: &mut Vec<RunSummary>,
) -> Result<(), WorkloadError> {
    // One manifest write for the whole plan: a pattern file of thousands
    // of runs stays linear.
    let planned: Vec<usize> = results
        .plan_runs(specs.iter().map(|s| {
            (
                s.name.clone(),
                flashlab_results::Workload::Pattern(s.clone()),
            )
        }))
        .map_err(saving(results, "cannot write the manifest".into()))?;
    for (spec, &idx) in specs.iter().zip(&planned) {
        observer.run_started(&RunStart {
            index: idx,
            count: specs.len(),
            name: &spec.name,
            what: RunKind::Pattern(spec),
        });
        let mut writer = start_records(results, idx, &spec.name, options.records)?;
        let mut progress = |done: u64, total: u64| observer.progress(done, total);
        let hooks = Hooks {
            stop: Some(options.stop),
            progress: Some(&mut progress),
        };
        let outcome = execute(&mut *device, spec, &mut writer, hooks);
        let tally = close_records(results, idx, &spec.name, writer)?;
        let (summary, error) = finish(device, results, idx, &spec.name, outcome, tally, None)?;
        results
            .write_summary_if_due()
            .map_err(saving(results, "cannot save results".into()))?;
        observer.run_finished(&summary);
        runs.push(summary);
        if let Some(e) = error {
            let text = format!("run {} failed: {e}", spec.name);
            return Err(match runs.last().map(|r| r.status) {
                Some(RunStatus::Interrupted) => WorkloadError::Stopped(text),
                _ => WorkloadError::Run(text),
            });
        }
    }
    Ok(())
}

fn run_trace(
    device: &mut dyn Device,
    results: &mut ResultsDir,
    trace: PreparedTrace,
    options: &RunOptions<'_>,
    observer: &mut dyn Observer,
    runs: &mut Vec<RunSummary>,
) -> Result<(), WorkloadError> {
    let name = trace.name.clone();
    let idx = results
        .plan_run(
            &name,
            flashlab_results::Workload::Replay(trace.spec.clone()),
        )
        .map_err(saving(results, "cannot write the manifest".into()))?;
    observer.run_started(&RunStart {
        index: idx,
        count: 1,
        name: &name,
        what: RunKind::Replay(&trace),
    });
    let mut writer = start_records(results, idx, &name, options.records)?;
    let mut progress = |done: u64, total: u64| observer.progress(done, total);
    let hooks = Hooks {
        stop: Some(options.stop),
        progress: Some(&mut progress),
    };
    let outcome = replay(&mut *device, &trace.ios, trace.mode, &mut writer, hooks);
    let tally = close_records(results, idx, &name, writer)?;
    let (outcome, extra) = match outcome {
        Ok((o, r)) => (Ok(o), Some(replay_stats(r.late, r.flushes))),
        Err(e) => (Err(e), None),
    };
    let (summary, error) = finish(device, results, idx, &name, outcome, tally, extra)?;
    write_summary(results)?;
    observer.run_finished(&summary);
    let stopped = summary.status == RunStatus::Interrupted;
    runs.push(summary);
    match error {
        Some(e) if stopped => Err(WorkloadError::Stopped(format!("replay failed: {e}"))),
        Some(e) => Err(WorkloadError::Run(format!("replay failed: {e}"))),
        None => Ok(()),
    }
}

/// What a replay adds to its run's device statistics (`replay`).
fn replay_stats(late: u64, flushes: u64) -> serde_json::Value {
    serde_json::json!({ "late_requests": late, "flushes": flushes })
}

/// A run's `device_stats` in run.json: the device's own statistics, with
/// what a replay adds under `replay`. A device that counts nothing (a real
/// disk or file) still gets the replay's, as `{"replay": ...}`: late
/// requests on hardware are the figure a replay's user needs most.
fn run_device_stats(
    device: Option<serde_json::Value>,
    replay: Option<serde_json::Value>,
) -> Option<serde_json::Value> {
    match (device, replay) {
        (device, None) => device,
        (Some(serde_json::Value::Object(mut m)), Some(r)) => {
            m.insert("replay".into(), r);
            Some(serde_json::Value::Object(m))
        }
        (_, Some(r)) => Some(serde_json::json!({ "replay": r })),
    }
}

/// An error saving results into `results`, with what was being saved.
fn saving(results: &ResultsDir, what: String) -> impl Fn(std::io::Error) -> WorkloadError {
    let path = results.root().to_path_buf();
    move |e| WorkloadError::Io {
        path: path.clone(),
        source: std::io::Error::new(e.kind(), format!("{what}: {e}")),
    }
}

fn write_summary(results: &ResultsDir) -> Result<(), WorkloadError> {
    results
        .write_summary()
        .map_err(saving(results, "cannot save results".into()))
}

/// Opens run `idx`'s records writer (a tally only without `records`).
fn start_records(
    results: &mut ResultsDir,
    idx: usize,
    name: &str,
    records: bool,
) -> Result<flashlab_results::RecordWriter, WorkloadError> {
    let what = format!("cannot write records of run {name}");
    let on_error = saving(results, what);
    results.start_run_keeping(idx, records).map_err(on_error)
}

/// Closes run `idx`'s records writer. When it cannot (the results disk is
/// full), the run is marked failed in the manifest, so that `flashlab show`
/// says failed rather than running, and the error names its cause.
fn close_records(
    results: &mut ResultsDir,
    idx: usize,
    name: &str,
    writer: flashlab_results::RecordWriter,
) -> Result<Tally, WorkloadError> {
    writer.finish().map_err(|e| {
        let text = match e.raw_os_error() {
            Some(libc::ENOSPC) => format!(
                "cannot write records of run {name}: the results disk is full (ENOSPC: {e}); free space and run again"
            ),
            _ => format!("cannot write records of run {name}: {e}"),
        };
        // Best effort: on a full disk the journal line may not fit either.
        let _ = results.fail_run(idx, text.clone());
        let _ = results.compact();
        WorkloadError::Io {
            path: results.root().to_path_buf(),
            source: std::io::Error::new(e.kind(), text),
        }
    })
}

/// Saves how run `idx` ended and resets the device's statistics. Returns
/// its summary and, when it did not complete, why ("interrupted" when
/// stopped: the manifest says so by its status alone).
fn finish(
    device: &mut dyn Device,
    results: &mut ResultsDir,
    idx: usize,
    name: &str,
    outcome: Result<flashlab_exec::Outcome, ExecError>,
    tally: Tally,
    extra: Option<serde_json::Value>,
) -> Result<(RunSummary, Option<String>), WorkloadError> {
    let (status, recorded, error) = match outcome {
        Ok(flashlab_exec::Outcome::Complete) => (RunStatus::Complete, None, None),
        Ok(flashlab_exec::Outcome::Interrupted) => (
            RunStatus::Interrupted,
            None,
            Some("interrupted".to_string()),
        ),
        Err(e) => (RunStatus::Failed, Some(e.to_string()), Some(e.to_string())),
    };
    let stats = run_device_stats(flashlab_results::device_stats_json(&device.stats()), extra);
    let summary = results
        .finish_run_tallied(idx, status, recorded, stats, Some(tally))
        .map_err(saving(
            results,
            format!("cannot save results of run {name}"),
        ))?;
    device.reset_stats();
    Ok((summary, error))
}

/// The host a results directory was written on (its manifest's `host`).
pub fn host_info() -> HostInfo {
    let read = |p: &str| {
        std::fs::read_to_string(p)
            .map(|s| s.trim().to_string())
            .unwrap_or_else(|_| "unknown".into())
    };
    HostInfo {
        hostname: read("/proc/sys/kernel/hostname"),
        kernel: read("/proc/sys/kernel/osrelease"),
        cpus: std::thread::available_parallelism()
            .map(|n| n.get())
            .unwrap_or(1),
    }
}
