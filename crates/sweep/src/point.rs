//! Running one point: open its device (simulated, or the grid's real
//! target), run the workload into a results directory, and keep each run's
//! metrics.
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

use std::sync::atomic::AtomicBool;

use flashlab_device::Device;
use flashlab_results::{Manifest, ResultsDir, RunStatus, RunSummary, ToolInfo, Workload};
use serde::{Deserialize, Serialize};

use crate::error::SweepError;
use crate::grid::{is_kept, records_kept, Grid, Point, RealTarget, WorkloadSpec};
use crate::lock::Lock;

/// The name of the completed marker in a point's directory.
pub const POINT_FILE: &str = "point.json";

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
    // The grid's workload with the point's own workload parameters (its
    // io_size, queue_depth, suite option...): what it runs and records.
    let applied;
    let workload = if point.workload_params.is_empty() {
        workload
    } else {
        match point.workload(workload) {
            Ok(w) => {
                applied = w;
                &applied
            }
            Err(e) => return Ok(PointOutcome::failed(point, root, &e.to_string())),
        }
    };
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
    let result = open_and_run(
        &point.device,
        point.target.as_ref(),
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
    open_and_run(
        device,
        None,
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

/// Opens the point's device (simulated, or the grid's real `target`),
/// creates its results directory and runs the workload there with the
/// library's one verb (`flashlab_workload::run`). The runs done (before a
/// failure too) go to `runs`, a suite's summary to `suite_summary`.
#[allow(clippy::too_many_arguments)]
fn open_and_run(
    device_spec: &str,
    target: Option<&RealTarget>,
    seed: u64,
    workload: &WorkloadSpec,
    keep: Keep,
    out: &Path,
    tool: &ToolInfo,
    runs: &mut Vec<RunSummary>,
    suite_summary: &mut Option<serde_json::Value>,
) -> Result<(), SweepError> {
    // A real target is sized for the workload prepared on its description,
    // and that prepared workload is what runs (a trace is read once).
    let (mut device, engine, command, prepared): (Box<dyn Device>, String, String, _) = match target
    {
        None => (
            Box::new(
                flashlab_sim::open_device(
                    device_spec,
                    seed,
                    flashlab_workload::SIM_MAX_OUTSTANDING,
                )
                .map_err(|e| SweepError::Input(e.to_string()))?,
            ),
            "simulator".into(),
            format!("sweep point: sim:{device_spec} seed={seed}"),
            None,
        ),
        Some(t) => {
            let (device, engine, prepared) = open_real(t, seed, workload)?;
            (
                device,
                engine,
                format!("sweep point: {} seed={seed}", t.path.display()),
                Some(prepared),
            )
        }
    };
    let info = device.info().clone();
    let mut results = ResultsDir::create(
        out,
        Manifest {
            schema_version: flashlab_results::SCHEMA_VERSION,
            tool: tool.clone(),
            created_unix_s: flashlab_results::time::now_unix_s(),
            command_line: vec![command],
            host: flashlab_workload::host_info(),
            device: info,
            engine,
            suite: None,
            runs: Vec::new(),
        },
    )
    .map_err(SweepError::io(out))?;
    results.keep_records_out_of_cache(matches!(keep, Keep::RecordsOutOfCache));
    // A point is never stopped from outside: it runs to its end or fails.
    let never = AtomicBool::new(false);
    let options = flashlab_workload::RunOptions {
        seed,
        records: !matches!(keep, Keep::Metrics),
        stop: &never,
    };
    let ran = match prepared {
        Some(prepared) => {
            flashlab_workload::run_prepared(prepared, &mut *device, &mut results, &options)
        }
        None => flashlab_workload::run(workload, &mut *device, &mut results, &options),
    };
    let (outcome, error) = match ran {
        Ok(outcome) => (outcome, None),
        Err(failed) => (failed.outcome, Some(failed.error)),
    };
    runs.extend(outcome.runs);
    if let Some(summary) = outcome.suite {
        *suite_summary = Some(serde_json::to_value(&summary).expect("a summary serializes"));
    }
    match error {
        None => Ok(()),
        Some(e) => Err(SweepError::from(e)),
    }
}

/// Opens a grid's real target for one point's workload, as `flashlab run`
/// opens `--device PATH`: O_DIRECT, io_uring (else the synchronous engine),
/// sized for the workload's most outstanding IOs and largest IO, and, when
/// the workload writes, only after the write-safety check (a block device
/// in use is refused unless `allow_write_to` names it). Returns the device,
/// its engine's name and the workload prepared on its description (what
/// the point then runs: a trace is read once).
fn open_real(
    t: &RealTarget,
    seed: u64,
    workload: &WorkloadSpec,
) -> Result<(Box<dyn Device>, String, flashlab_workload::Prepared), SweepError> {
    let failed = |e: flashlab_realdev::OpenError| {
        SweepError::Input(format!("target {}: {e}", t.path.display()))
    };
    let info = flashlab_realdev::probe(&t.path).map_err(failed)?;
    let prepared = workload.prepare(seed, &info)?;
    let Some(needs) = prepared.needs() else {
        return Err(SweepError::Input(format!(
            "target {}: a suite runs on a real device with flashlab suite NAME --device PATH",
            t.path.display()
        )));
    };
    let opened = flashlab_realdev::open(&flashlab_realdev::OpenOptions {
        path: t.path.clone(),
        write: needs.writes,
        engine: flashlab_realdev::Engine::Auto,
        max_outstanding: needs.max_outstanding,
        max_io_bytes: u32::try_from(needs.max_io_bytes).unwrap_or(u32::MAX),
        direct: true,
        allow_write_to: t.allow_write_to.clone(),
        create_size_bytes: None,
    })
    .map_err(failed)?;
    let got = opened.device.info();
    if got.kind != info.kind
        || got.size_bytes != info.size_bytes
        || got.logical_block_bytes != info.logical_block_bytes
    {
        return Err(SweepError::Input(format!(
            "target {} changed while the point opened it (first {} bytes, then {}); check the path and run again",
            t.path.display(),
            info.size_bytes,
            got.size_bytes
        )));
    }
    for w in &opened.warnings {
        eprintln!("warning: target {}: {w}", t.path.display());
    }
    let engine = got
        .identity
        .get("engine")
        .cloned()
        .unwrap_or_else(|| "unknown".into());
    Ok((opened.device, engine, prepared))
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
