//! Running one point: build the simulated device, run the workload into a
//! results directory, and keep each run's metrics.
//!
//! A point is single-threaded and touches nothing outside its own directory
//! (and its lock and working copy in `.points-work/`), so points run side by
//! side on threads, processes or machines. It is written into a fresh
//! working directory, checked against its plan, marked with `point.json`
//! and renamed into `points/ID` whole, under a lock that dies with its
//! holder ([`run_point_of`]). A point whose marker says `ok` for the same
//! workload and version and whose files hold every planned IO is done:
//! [`run_point`] returns it, its metrics read back from those files,
//! without running it again (resume). Anything else is run afresh.

use std::path::{Path, PathBuf};
use std::time::Instant;

use flashlab_device::Device;
use flashlab_exec::{execute, replay, Hooks, Outcome, ReplayMode};
use flashlab_pattern::{PatternArgs, PatternSpec};
use flashlab_results::{
    HostInfo, Manifest, ReplaySpec, ResultsDir, RunStatus, RunSummary, Tally, ToolInfo, Workload,
};
use flashlab_trace::{fit_to_device, Fit, Format, TraceOp};
use serde::{Deserialize, Serialize};

use crate::error::SweepError;
use crate::grid::{is_kept, records_kept, Grid, Point, SuiteSpec, TraceSpec, WorkloadSpec};
use crate::lock::Lock;

/// The most outstanding IOs a simulated device is opened for (as `flashlab run`).
pub const SIM_MAX_OUTSTANDING: usize = 4096;

/// The name of the completed marker in a point's directory.
pub const POINT_FILE: &str = "point.json";

/// The queue depth of a suite's state enforcement (as `flashlab suite`).
const SUITE_STATE_QUEUE_DEPTH: usize = 32;

/// Open loop: the most requests in flight before a request counts as late (as `flashlab replay`).
const DEFAULT_OPEN_LOOP_IN_FLIGHT: usize = 256;

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum PointStatus {
    Ok,
    Failed,
}

/// The metrics of one run of a point: a row of the tidy table.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct RunMetrics {
    pub run: String,
    /// `complete`, `failed`, ...
    pub status: String,
    /// Measured IOs (IOIgnore and failed IOs excluded).
    pub ios: u64,
    pub iops: f64,
    pub mb_per_s: f64,
    pub latency_mean_ns: f64,
    pub latency_p50_ns: u64,
    pub latency_p90_ns: u64,
    pub latency_p99_ns: u64,
    pub latency_p999_ns: u64,
    pub latency_max_ns: u64,
    /// Flash programs / host-written pages over the whole run (warm-up included).
    pub write_amplification: Option<f64>,
    pub flash_reads: Option<u64>,
    pub flash_programs: Option<u64>,
    pub flash_erases: Option<u64>,
    pub gc_relocated_pages: Option<u64>,
    pub erase_count_max: Option<u64>,
}

impl RunMetrics {
    pub fn from_summary(s: &RunSummary) -> RunMetrics {
        let d = s.device_stats.as_ref();
        let get = |path: &[&str]| {
            let mut v = d?;
            for p in path {
                v = v.get(p)?;
            }
            Some(v)
        };
        let u = |path: &[&str]| get(path).and_then(|v| v.as_u64());
        let all = &s.stats.all;
        RunMetrics {
            run: s.name.clone(),
            status: s.status.name().to_string(),
            ios: all.ios,
            iops: all.iops,
            mb_per_s: all.mb_per_s,
            latency_mean_ns: all.latency.mean_ns,
            latency_p50_ns: all.latency.p50_ns,
            latency_p90_ns: all.latency.p90_ns,
            latency_p99_ns: all.latency.p99_ns,
            latency_p999_ns: all.latency.p999_ns,
            latency_max_ns: all.latency.max_ns,
            write_amplification: get(&["write_amplification"]).and_then(|v| v.as_f64()),
            flash_reads: u(&["flash", "reads", "total"]),
            flash_programs: u(&["flash", "programs", "total"]),
            flash_erases: u(&["flash", "erases", "total"]),
            gc_relocated_pages: u(&["gc", "relocated_pages"]),
            erase_count_max: u(&["erase_count", "max"]),
        }
    }
}

/// What a point left behind (`point.json`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct PointOutcome {
    pub point: Point,
    pub status: PointStatus,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    /// One entry per run that ran (a failing point keeps the runs before the
    /// failure); empty for a suite, whose metrics are `suite_metrics`.
    pub runs: Vec<RunMetrics>,
    /// A suite point's metrics: the numeric values of its summary, by path
    /// ([`crate::table::flatten_summary`]); `None` for other workloads.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub suite_metrics: Option<Vec<(String, Option<f64>)>>,
    /// The workload the point ran: a marker of another workload (the grid
    /// was edited) does not count as done.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub workload: Option<WorkloadSpec>,
    /// False when the point's runs kept no per-IO records (the grid's
    /// `records = false`); a point done the other way is run again.
    #[serde(default = "records_kept", skip_serializing_if = "is_kept")]
    pub records: bool,
    /// The git commit of the flashlab that wrote the point (`ToolInfo::git_commit`):
    /// resume runs a point written by another version again.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub git_commit: Option<String>,
    /// The point's results directory, as it was written.
    pub results_dir: PathBuf,
    /// Wall-clock time the point took (not a metric: it differs between identical runs).
    pub wall_s: f64,
    /// CPU time (user + system) of the thread that ran the point, over the
    /// same span as `wall_s`. Together they tell a point that waited for a
    /// core (wall well above CPU) from one that got slower itself (CPU up):
    /// `bench/sweep_scaling.py` prints both. Not a metric either.
    #[serde(default)]
    pub cpu_s: f64,
    /// True when the point was found done and not run again.
    #[serde(default)]
    pub resumed: bool,
}

impl PointOutcome {
    /// A point that could not run or be written at all (its own files
    /// failed, or its task died): a `failed` row with `error`, so that the
    /// sweep goes on and its table is written.
    pub fn failed(point: &Point, root: &Path, error: &str) -> PointOutcome {
        PointOutcome {
            point: point.clone(),
            status: PointStatus::Failed,
            error: Some(error.to_string()),
            runs: Vec::new(),
            suite_metrics: None,
            workload: None,
            records: true,
            git_commit: None,
            results_dir: point_dir(root, point),
            wall_s: 0.0,
            cpu_s: 0.0,
            resumed: false,
        }
    }
}

/// Where point `id` of a sweep rooted at `root` keeps its results.
pub fn point_dir(root: &Path, point: &Point) -> PathBuf {
    root.join("points").join(&point.id)
}

/// The sweep's working files, beside `points/` so that `points/` holds only
/// finished points: each point's lock (`ID.lock`) and the directory a
/// point is written into before it is renamed into place (`ID.partial`).
pub const WORK_DIR: &str = ".points-work";

/// Runs one point of `grid` into `root/points/ID` (or returns it if already done there).
///
/// Errors of the point itself (a refused pattern, a device failure) are in
/// the returned outcome, status `failed`, so that a sweep goes on; `Err` is
/// only for the sweep's own files.
pub fn run_point(
    grid: &Grid,
    point: &Point,
    root: &Path,
    tool: &ToolInfo,
) -> Result<PointOutcome, SweepError> {
    run_point_of(&grid.workload, grid.records, point, root, tool)
}

/// [`run_point`] given only what the point needs: its workload and whether
/// it keeps records (what a Dask task carries, instead of the whole grid).
///
/// One holder at a time runs a point: it takes the point's lock (which dies
/// with it), then either finds the point complete ([`completed`]) or runs it
/// into a fresh `ID.partial` directory, checks what it wrote against its
/// plan, and renames it into place. A second sweep of the same point waits
/// for the first and then finds it done; a killed attempt leaves only a
/// partial directory, which the next holder removes.
pub fn run_point_of(
    workload: &WorkloadSpec,
    records: bool,
    point: &Point,
    root: &Path,
    tool: &ToolInfo,
) -> Result<PointOutcome, SweepError> {
    let work = root.join(WORK_DIR);
    std::fs::create_dir_all(&work).map_err(SweepError::io(&work))?;
    let points = root.join("points");
    std::fs::create_dir_all(&points).map_err(SweepError::io(&points))?;
    let lock_path = work.join(format!("{}.lock", point.id));
    let _lock = Lock::exclusive(&lock_path).map_err(SweepError::io(&lock_path))?;
    let dir = point_dir(root, point);
    if let Some(done) = completed(workload, records, point, &dir, tool) {
        return Ok(PointOutcome {
            resumed: true,
            ..done
        });
    }
    // We hold the lock: a partial directory of this point is a dead attempt's.
    let partial = work.join(format!("{}.partial", point.id));
    if partial.symlink_metadata().is_ok() {
        std::fs::remove_dir_all(&partial).map_err(SweepError::io(&partial))?;
    }
    std::fs::create_dir(&partial).map_err(SweepError::io(&partial))?;
    let started = Instant::now();
    let cpu_started = thread_cpu_s();
    let mut runs = Vec::new();
    let mut summary = None;
    let partial_results = partial.join("results");
    let result = simulate_into(
        &point.device,
        point.seed,
        workload,
        if records {
            Keep::RecordsOutOfCache
        } else {
            Keep::Metrics
        },
        &partial_results,
        tool,
        &mut runs,
        &mut summary,
    );
    let (status, error) = match result {
        // The figures reported are those read back from the point's own files.
        Ok(()) => match verify(&partial_results, workload, records) {
            Ok(read_back) => {
                runs = read_back;
                (PointStatus::Ok, None)
            }
            Err(e) => (
                PointStatus::Failed,
                Some(format!(
                    "the point's files do not match its plan: {e}; run the sweep again to redo it"
                )),
            ),
        },
        Err(SweepError::Io { path, source }) if path.starts_with(&partial) => {
            return Err(SweepError::Io {
                path: relocate(&path, &partial, &dir),
                source,
            })
        }
        Err(e) => (PointStatus::Failed, Some(e.to_string())),
    };
    let outcome = PointOutcome {
        point: point.clone(),
        status,
        error,
        runs: match workload {
            WorkloadSpec::Suite(_) => Vec::new(),
            _ => runs.iter().map(RunMetrics::from_summary).collect(),
        },
        suite_metrics: match workload {
            WorkloadSpec::Suite(s) => summary
                .as_ref()
                .map(|v| crate::table::flatten_summary(v, s.metrics.as_deref())),
            _ => None,
        },
        workload: Some(workload.clone()),
        records,
        git_commit: Some(tool.git_commit.clone()),
        results_dir: dir.join("results"),
        wall_s: started.elapsed().as_secs_f64(),
        cpu_s: thread_cpu_s() - cpu_started,
        resumed: false,
    };
    let marker = partial.join(POINT_FILE);
    flashlab_results::dir::write_json_atomic(&marker, &outcome).map_err(SweepError::io(&marker))?;
    point_summary_names(&partial_results, &dir.join("results"))?;
    // Into place: move a previous attempt (failed, or of another workload)
    // aside, then rename the complete directory over its name.
    if dir.symlink_metadata().is_ok() {
        let old = work.join(format!("{}.old", point.id));
        if old.symlink_metadata().is_ok() {
            std::fs::remove_dir_all(&old).map_err(SweepError::io(&old))?;
        }
        std::fs::rename(&dir, &old).map_err(SweepError::io(&dir))?;
        std::fs::remove_dir_all(&old).map_err(SweepError::io(&old))?;
    }
    std::fs::rename(&partial, &dir).map_err(SweepError::io(&dir))?;
    Ok(outcome)
}

/// `path` under `from`, named as it will be under `to` (messages name the
/// point's directory, not its working copy).
fn relocate(path: &Path, from: &Path, to: &Path) -> PathBuf {
    path.strip_prefix(from)
        .map(|rest| to.join(rest))
        .unwrap_or_else(|_| path.to_path_buf())
}

/// `summary.json` names the directory it was written in: the partial one.
/// Name the point's own directory instead, where it is read from.
fn point_summary_names(written: &Path, final_dir: &Path) -> Result<(), SweepError> {
    let path = written.join("summary.json");
    let Ok(mut summary) = flashlab_results::dir::read_json::<serde_json::Value>(&path) else {
        return Ok(()); // a point that failed before its first run has none
    };
    if let Some(m) = summary.as_object_mut() {
        m.insert("results_dir".into(), final_dir.display().to_string().into());
    }
    flashlab_results::dir::write_json_atomic(&path, &summary).map_err(SweepError::io(&path))
}

/// The point in `dir`, if it is complete: its marker says `ok` for this
/// very point, workload, records setting and version of flashlab, and its
/// files hold every run it planned ([`verify`]). The runs' metrics are
/// read again from those files, not taken from the marker.
pub fn completed(
    workload: &WorkloadSpec,
    records: bool,
    point: &Point,
    dir: &Path,
    tool: &ToolInfo,
) -> Option<PointOutcome> {
    let done: PointOutcome = read_bounded_json(&dir.join(POINT_FILE)).ok()?;
    if done.status != PointStatus::Ok
        || done.point != *point
        || done.workload.as_ref() != Some(workload)
        || done.records != records
        || done.git_commit.as_deref() != Some(tool.git_commit.as_str())
    {
        return None;
    }
    let runs = verify(&dir.join("results"), workload, records).ok()?;
    Some(PointOutcome {
        runs: match workload {
            WorkloadSpec::Suite(_) => Vec::new(),
            _ => runs.iter().map(RunMetrics::from_summary).collect(),
        },
        results_dir: dir.join("results"),
        ..done
    })
}

/// The largest `point.json` read back (a suite point's metrics included).
const MAX_MARKER_BYTES: u64 = 16 << 20;

fn read_bounded_json<T: for<'de> Deserialize<'de>>(path: &Path) -> Result<T, String> {
    use std::io::Read;
    let file = std::fs::File::open(path).map_err(|e| e.to_string())?;
    if !file.metadata().map_err(|e| e.to_string())?.is_file() {
        return Err(format!("{} is not a regular file", path.display()));
    }
    let mut text = Vec::new();
    file.take(MAX_MARKER_BYTES + 1)
        .read_to_end(&mut text)
        .map_err(|e| e.to_string())?;
    if text.len() as u64 > MAX_MARKER_BYTES {
        return Err(format!("{} is larger than 16 MiB", path.display()));
    }
    serde_json::from_slice(&text).map_err(|e| e.to_string())
}

/// Checks a point's results directory against its plan and returns its
/// runs' summaries as written: every planned run is complete, each run's
/// statistics count exactly the IOs its workload planned, and its records
/// file (when kept) holds exactly those IOs, no torn tail.
fn verify(
    results: &Path,
    workload: &WorkloadSpec,
    records: bool,
) -> Result<Vec<RunSummary>, String> {
    let (manifest, _) = flashlab_results::read_manifest(results).map_err(|e| e.to_string())?;
    let expected_runs = match workload {
        WorkloadSpec::Patterns { runs } => Some(runs.len()),
        WorkloadSpec::Trace(_) => Some(1),
        WorkloadSpec::Replicate {
            runs: Some(names), ..
        } => Some(names.len()),
        WorkloadSpec::Replicate { runs: None, .. } | WorkloadSpec::Suite(_) => None,
    };
    if let Some(n) = expected_runs {
        if manifest.runs.len() != n {
            return Err(format!(
                "{} runs in its manifest, {n} planned",
                manifest.runs.len()
            ));
        }
    }
    if manifest.runs.is_empty() {
        return Err("no runs in its manifest".into());
    }
    let mut summaries = Vec::with_capacity(manifest.runs.len());
    for run in &manifest.runs {
        if run.status != RunStatus::Complete {
            return Err(format!("run {} is {}", run.name, run.status.name()));
        }
        let run_dir = results.join(&run.dir);
        let summary: RunSummary = read_bounded_json(&run_dir.join("run.json"))?;
        if summary.status != RunStatus::Complete || summary.name != run.name {
            return Err(format!(
                "run {}'s run.json is not its complete run",
                run.name
            ));
        }
        let s = &summary.stats;
        let counted = s.all.ios + s.ios_ignored + s.ios_failed;
        let planned = match &run.workload {
            Workload::Pattern(p) => p.total_ios(),
            Workload::Replay(r) => r.requests,
        };
        if counted != planned {
            return Err(format!(
                "run {} counted {counted} IOs, {planned} planned",
                run.name
            ));
        }
        if records != run.records {
            return Err(format!("run {}'s records setting differs", run.name));
        }
        if run.records {
            let path = run_dir.join("records.bin");
            let meta =
                std::fs::symlink_metadata(&path).map_err(|e| format!("{}: {e}", path.display()))?;
            if !meta.is_file() {
                return Err(format!("{} is not a regular file", path.display()));
            }
            let file = flashlab_results::records::RecordFile::open(&path)
                .map_err(|e| format!("{}: {e}", path.display()))?;
            if file.len() != planned || file.torn_bytes() != 0 {
                return Err(format!(
                    "run {}'s records.bin holds {} records, {planned} planned",
                    run.name,
                    file.len()
                ));
            }
        }
        summaries.push(summary);
    }
    Ok(summaries)
}

/// Runs `workload` on `sim:DEVICE` with `seed` into a new results directory
/// `out`, and returns every run's summary. `flashlab.simulate` in Python.
pub fn simulate(
    device: &str,
    seed: u64,
    workload: &WorkloadSpec,
    out: &Path,
    tool: &ToolInfo,
) -> Result<Vec<RunSummary>, SweepError> {
    let mut runs = Vec::new();
    simulate_into(
        device,
        seed,
        workload,
        Keep::Records,
        out,
        tool,
        &mut runs,
        &mut None,
    )?;
    Ok(runs)
}

/// What a simulation keeps of its per-IO records.
#[derive(Clone, Copy)]
enum Keep {
    /// No records file (a grid's `records = false`): metrics only.
    Metrics,
    /// The records, left in the page cache to be read right away
    /// ([`simulate`]: Python loads them into a DataFrame next).
    Records,
    /// The records, kept out of the page cache as they grow (a sweep's
    /// points: thousands of files that nobody reads at once; direct IO,
    /// `RecordWriter::create_out_of_cache`).
    RecordsOutOfCache,
}

#[allow(clippy::too_many_arguments)]
fn simulate_into(
    device_spec: &str,
    seed: u64,
    workload: &WorkloadSpec,
    keep: Keep,
    out: &Path,
    tool: &ToolInfo,
    runs: &mut Vec<RunSummary>,
    suite_summary: &mut Option<serde_json::Value>,
) -> Result<(), SweepError> {
    let mut device = flashlab_sim::open_device(device_spec, seed, SIM_MAX_OUTSTANDING)
        .map_err(|e| SweepError::Input(e.to_string()))?;
    let info = device.info().clone();
    let mut results = ResultsDir::create(
        out,
        Manifest {
            schema_version: flashlab_results::SCHEMA_VERSION,
            tool: tool.clone(),
            created_unix_s: flashlab_results::time::now_unix_s(),
            command_line: vec![format!("sweep point: sim:{device_spec} seed={seed}")],
            host: host_info(),
            device: info.clone(),
            engine: "simulator".into(),
            suite: None,
            runs: Vec::new(),
        },
    )
    .map_err(SweepError::io(out))?;
    results.keep_records_out_of_cache(matches!(keep, Keep::RecordsOutOfCache));
    let records = !matches!(keep, Keep::Metrics);

    match workload {
        WorkloadSpec::Patterns { runs: list } => {
            let specs = resolve_patterns(list, seed, &info)?;
            run_specs(&mut device, &mut results, &specs, records, runs)
        }
        WorkloadSpec::Replicate { dir, runs: names } => {
            let specs = replicated_specs(dir, names.as_deref(), &info)?;
            run_specs(&mut device, &mut results, &specs, records, runs)
        }
        WorkloadSpec::Trace(t) => run_trace(&mut device, &mut results, t, records, runs),
        WorkloadSpec::Suite(s) => {
            *suite_summary = Some(run_suite(&mut device, &mut results, s, seed)?);
            runs.extend(results.summary().runs);
            Ok(())
        }
    }
}

/// Runs a paper suite on the point's device, as `flashlab suite NAME
/// --device sim:DEVICE --seed SEED` would (the same session and runner),
/// and returns its summary as JSON.
fn run_suite(
    device: &mut flashlab_sim::SimDevice,
    results: &mut ResultsDir,
    s: &SuiteSpec,
    seed: u64,
) -> Result<serde_json::Value, SweepError> {
    use flashlab_suite::session;
    let root = results.root().to_path_buf();
    let suite = session::runnable(&s.name).map_err(|e| SweepError::Input(e.to_string()))?;
    let config = session::configure(suite, s.quick, &s.options, seed)
        .map_err(|e| SweepError::Input(e.to_string()))?;
    let size = device.info().size_bytes;
    let plan = session::plan(suite, &config, size).map_err(|e| SweepError::Input(e.to_string()))?;
    let journal = session::begin(results, suite, config, plan).map_err(SweepError::io(&root))?;
    let block_bytes = (device.info().logical_block_bytes as u64).max(512);
    // A point is never stopped from outside: it runs to its end or fails.
    let never = std::sync::atomic::AtomicBool::new(false);
    let mut runner = flashlab_suite::runner::Runner {
        dev: device,
        results,
        journal,
        user_stop: &never,
        progress: &mut |_| {},
        block_bytes,
        state_queue_depth: SUITE_STATE_QUEUE_DEPTH,
    };
    let outcome = runner
        .execute()
        .map_err(|e| SweepError::Run(format!("suite {} failed: {e}", s.name)))?;
    let journal = runner.journal.clone();
    if outcome != flashlab_suite::runner::SuiteOutcome::Complete {
        return Err(SweepError::Run(format!(
            "suite {} stopped before its end",
            s.name
        )));
    }
    let summary = session::summarise(results, &journal).map_err(SweepError::io(&root))?;
    Ok(serde_json::to_value(&summary).expect("a summary serializes"))
}

fn resolve_patterns(
    list: &[PatternArgs],
    seed: u64,
    info: &flashlab_device::DeviceInfo,
) -> Result<Vec<PatternSpec>, SweepError> {
    let lbs = info.logical_block_bytes as u64;
    let mut specs: Vec<PatternSpec> = Vec::new();
    for (i, a) in list.iter().enumerate() {
        let where_ = if list.len() > 1 {
            format!("run {}: ", i + 1)
        } else {
            String::new()
        };
        // The point's seed drives every random choice, unless a run fixes its own.
        let mut a = a.clone();
        a.seed = a.seed.or(Some(seed));
        let spec = a
            .resolve(info.size_bytes)
            .map_err(|e| SweepError::Input(format!("{where_}{e}")))?;
        check_spec(&spec, info, lbs).map_err(|e| SweepError::Input(format!("{where_}{e}")))?;
        if specs.iter().any(|s| s.name == spec.name) {
            return Err(SweepError::Input(format!(
                "{where_}two runs are named '{}'; give each run its own name",
                spec.name
            )));
        }
        specs.push(spec);
    }
    Ok(specs)
}

fn check_spec(
    spec: &PatternSpec,
    info: &flashlab_device::DeviceInfo,
    lbs: u64,
) -> Result<(), String> {
    spec.check_against_device(&info.name, info.size_bytes, lbs)?;
    if spec.max_outstanding() > SIM_MAX_OUTSTANDING {
        return Err(format!(
            "too many outstanding IOs ({}; at most {SIM_MAX_OUTSTANDING})",
            spec.max_outstanding()
        ));
    }
    Ok(())
}

/// The pattern runs of a results directory, as they were resolved there.
fn replicated_specs(
    dir: &Path,
    names: Option<&[String]>,
    info: &flashlab_device::DeviceInfo,
) -> Result<Vec<PatternSpec>, SweepError> {
    let (manifest, _) = flashlab_results::read_manifest(dir).map_err(|e| {
            SweepError::Input(format!(
                "cannot read results directory {}: {e}; replicate needs a directory written by flashlab run",
                dir.display()
            ))
        })?;
    let specs: Vec<PatternSpec> = manifest
        .runs
        .iter()
        .filter(|r| match names {
            Some(n) => n.contains(&r.name),
            None => true,
        })
        .filter_map(|r| r.workload.pattern().cloned())
        .collect();
    if let Some(names) = names {
        if let Some(missing) = names.iter().find(|n| !specs.iter().any(|s| &s.name == *n)) {
            return Err(SweepError::Input(format!(
                "{} has no pattern run named '{missing}'; replicate_runs must name runs of its manifest",
                dir.display()
            )));
        }
    }
    if specs.is_empty() {
        return Err(SweepError::Input(format!(
            "{} has no pattern runs to replicate",
            dir.display()
        )));
    }
    for s in &specs {
        check_spec(s, info, info.logical_block_bytes as u64).map_err(|e| {
            SweepError::Input(format!(
                "replicating run {} of {}: {e}; give the simulated device at least the measured device's capacity",
                s.name,
                dir.display()
            ))
        })?;
    }
    Ok(specs)
}

fn run_specs(
    device: &mut flashlab_sim::SimDevice,
    results: &mut ResultsDir,
    specs: &[PatternSpec],
    records: bool,
    runs: &mut Vec<RunSummary>,
) -> Result<(), SweepError> {
    let root = results.root().to_path_buf();
    let planned: Vec<usize> = specs
        .iter()
        .map(|s| results.plan_run(&s.name, Workload::Pattern(s.clone())))
        .collect::<Result<_, _>>()
        .map_err(SweepError::io(&root))?;
    for (spec, &idx) in specs.iter().zip(&planned) {
        let mut writer = results
            .start_run_keeping(idx, records)
            .map_err(SweepError::io(&root))?;
        let outcome = execute(device, spec, &mut writer, Hooks::default());
        let tally = close_records(results, idx, &spec.name, writer)?;
        let (summary, error) = finish(device, results, idx, outcome, tally, None)?;
        runs.push(summary);
        if let Some(e) = error {
            return Err(SweepError::Run(format!("run {} failed: {e}", spec.name)));
        }
    }
    Ok(())
}

/// Closes run `idx`'s records writer. When it cannot (the results disk is
/// full), the run is marked failed in the manifest, so that `flashlab show`
/// says failed rather than running, and the error names its cause.
fn close_records(
    results: &mut ResultsDir,
    idx: usize,
    name: &str,
    writer: flashlab_results::RecordWriter,
) -> Result<Tally, SweepError> {
    writer.finish().map_err(|e| {
        let text = match e.raw_os_error() {
            Some(libc::ENOSPC) => format!(
                "cannot write the records of run {name}: the results disk is full (ENOSPC: {e}); free space and run again"
            ),
            _ => format!("cannot write the records of run {name}: {e}"),
        };
        // Best effort: on a full disk the journal line may not fit either.
        let _ = results.fail_run(idx, text.clone());
        let _ = results.compact();
        SweepError::Io {
            path: results.root().to_path_buf(),
            source: std::io::Error::new(e.kind(), text),
        }
    })
}

fn finish(
    device: &mut flashlab_sim::SimDevice,
    results: &mut ResultsDir,
    idx: usize,
    outcome: Result<Outcome, flashlab_exec::ExecError>,
    tally: Tally,
    extra: Option<serde_json::Value>,
) -> Result<(RunSummary, Option<String>), SweepError> {
    let root = results.root().to_path_buf();
    let (status, error) = match outcome {
        Ok(Outcome::Complete) => (RunStatus::Complete, None),
        Ok(Outcome::Interrupted) => (RunStatus::Interrupted, Some("interrupted".to_string())),
        Err(e) => (RunStatus::Failed, Some(e.to_string())),
    };
    let mut stats = device.stats_json();
    if let (Some(serde_json::Value::Object(m)), Some(extra)) = (&mut stats, extra) {
        m.insert("replay".into(), extra);
    }
    let summary = results
        .finish_run_tallied(idx, status, error.clone(), stats, Some(tally))
        .map_err(SweepError::io(&root))?;
    device.reset_stats();
    results.write_summary().map_err(SweepError::io(&root))?;
    Ok((summary, error))
}

fn run_trace(
    device: &mut flashlab_sim::SimDevice,
    results: &mut ResultsDir,
    t: &TraceSpec,
    records: bool,
    runs: &mut Vec<RunSummary>,
) -> Result<(), SweepError> {
    let origin = t.path.display().to_string();
    // The CLI's bounded reader: /dev/zero or a disk image is refused at once.
    let text = flashlab_trace::read_text(&t.path).map_err(|e| SweepError::Input(e.to_string()))?;
    let format = match &t.format {
        Some(f) => Format::parse(f).map_err(|e| SweepError::Input(e.to_string()))?,
        None => Format::detect(&text).ok_or_else(|| {
            SweepError::Input(format!(
                "cannot tell the format of {origin}; set format = \"...\" in [trace] ({})",
                Format::NAMES
            ))
        })?,
    };
    let fit = Fit::parse(&t.fit).map_err(|e| SweepError::Input(e.to_string()))?;
    if !(t.speed > 0.0 && t.speed.is_finite()) {
        return Err(SweepError::Input(format!(
            "[trace] speed {} must be a positive number, e.g. speed = 2.0",
            t.speed
        )));
    }
    let in_flight = t.queue_depth.unwrap_or(if t.closed_loop {
        1
    } else {
        DEFAULT_OPEN_LOOP_IN_FLIGHT
    });
    if in_flight == 0 || in_flight > SIM_MAX_OUTSTANDING {
        return Err(SweepError::Input(format!(
            "[trace] queue_depth must be between 1 and {SIM_MAX_OUTSTANDING}"
        )));
    }
    let mut trace = flashlab_trace::parse(&text, format, &origin)
        .map_err(|e| SweepError::Input(e.to_string()))?;
    let info = device.info().clone();
    fit_to_device(
        &mut trace,
        info.size_bytes,
        info.logical_block_bytes as u64,
        fit,
    )
    .map_err(|e| SweepError::Input(format!("{origin}: {e}")))?;
    let requests = trace.iter().filter(|io| io.op != TraceOp::Flush).count() as u64;
    let spec = ReplaySpec {
        trace_path: origin.clone(),
        format: format.name().to_string(),
        requests,
        loop_mode: if t.closed_loop {
            "closed_loop"
        } else {
            "open_loop"
        }
        .to_string(),
        speed: t.speed,
        max_outstanding: in_flight as u64,
        fit: t.fit.clone(),
    };
    let name = "replay";
    let root = results.root().to_path_buf();
    let idx = results
        .plan_run(name, Workload::Replay(spec))
        .map_err(SweepError::io(&root))?;
    let mode = if t.closed_loop {
        ReplayMode::ClosedLoop {
            queue_depth: in_flight,
        }
    } else {
        ReplayMode::OpenLoop {
            speed: t.speed,
            max_outstanding: in_flight,
        }
    };
    let mut writer = results
        .start_run_keeping(idx, records)
        .map_err(SweepError::io(&root))?;
    let outcome = replay(device, &trace, mode, &mut writer, Hooks::default());
    let tally = close_records(results, idx, name, writer)?;
    let (outcome, extra) = match outcome {
        Ok((o, r)) => (
            Ok(o),
            Some(serde_json::json!({ "late_requests": r.late, "flushes": r.flushes })),
        ),
        Err(e) => (Err(e), None),
    };
    let (summary, error) = finish(device, results, idx, outcome, tally, extra)?;
    runs.push(summary);
    match error {
        Some(e) => Err(SweepError::Run(format!("replay failed: {e}"))),
        None => Ok(()),
    }
}

/// CPU time consumed so far by the calling thread, in seconds (0 if the
/// clock cannot be read: the figure is informative only).
fn thread_cpu_s() -> f64 {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: clock_gettime writes one timespec into the valid `ts`.
    if unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut ts) } != 0 {
        return 0.0;
    }
    ts.tv_sec as f64 + ts.tv_nsec as f64 / 1e9
}

fn host_info() -> HostInfo {
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
