//! `flashlab._native`: the Rust side of the Python package. Thin: every
//! function calls `flashlab-sweep` (the same code as `flashlab sweep`) or
//! `flashlab-workload` (the scoreboard of `flashlab validate`) or
//! `flashlab-probe` (`flashlab twin`) and
//! passes JSON text across; long calls release the GIL so that threads
//! (and Dask workers with several threads) run simulations in parallel.

use std::path::{Path, PathBuf};

use flashlab_results::ToolInfo;
use flashlab_sweep::{Grid, SweepError, WorkloadSpec};
use pyo3::create_exception;
use pyo3::exceptions::PyException;
use pyo3::prelude::*;

create_exception!(
    flashlab,
    FlashlabError,
    PyException,
    "A flashlab error: the message is the CLI's one-line message."
);

fn err(e: impl std::fmt::Display) -> PyErr {
    FlashlabError::new_err(e.to_string())
}

fn sweep_err(e: SweepError) -> PyErr {
    err(e)
}

fn tool() -> ToolInfo {
    ToolInfo {
        name: "flashlab-python".into(),
        version: env!("CARGO_PKG_VERSION").into(),
        // The commit this module was built from (build.rs): sweep points
        // record it, and resume runs a point of another version again.
        git_commit: env!("FLASHLAB_GIT_COMMIT").into(),
    }
}

fn to_json<T: serde::Serialize>(v: &T) -> PyResult<String> {
    serde_json::to_string(v).map_err(err)
}

fn grid_from_json(grid_json: &str) -> PyResult<Grid> {
    serde_json::from_str(grid_json).map_err(|e| err(format!("internal: bad grid JSON: {e}")))
}

/// Loads and checks a grid file (TOML); returns the grid as JSON.
#[pyfunction]
fn load_grid(path: PathBuf) -> PyResult<String> {
    to_json(&Grid::load(&path).map_err(sweep_err)?)
}

/// Checks a grid given as JSON text (a Python dict with the grid file's
/// keys); relative paths are taken from `base_dir`. Returns the checked grid as JSON.
#[pyfunction]
fn parse_grid(text: &str, base_dir: PathBuf, name: &str) -> PyResult<String> {
    to_json(&Grid::parse_json(text, "grid", &base_dir, name).map_err(sweep_err)?)
}

/// Every point of a grid (JSON list), in expansion order.
#[pyfunction]
fn grid_points(grid_json: &str) -> PyResult<String> {
    to_json(&grid_from_json(grid_json)?.points())
}

/// Runs one point (JSON, an element of `grid_points`) of a sweep whose
/// workload (JSON) and records setting are given, under `root/points/ID`
/// (or returns it if done there already); returns its outcome as JSON. A
/// Dask task carries only this: its point and the workload, never the
/// whole grid. A point whose own files cannot be written is a failed
/// outcome, as in the CLI, so the sweep goes on. The GIL is released while
/// the point runs.
#[pyfunction]
fn run_point(
    py: Python<'_>,
    point_json: &str,
    workload_json: &str,
    records: bool,
    root: PathBuf,
) -> PyResult<String> {
    let point: flashlab_sweep::Point = serde_json::from_str(point_json)
        .map_err(|e| err(format!("internal: bad point JSON: {e}")))?;
    let workload: WorkloadSpec = serde_json::from_str(workload_json)
        .map_err(|e| err(format!("internal: bad workload JSON: {e}")))?;
    let outcome = py.detach(|| {
        flashlab_sweep::point::run_point_of(&workload, records, &point, &root, &tool())
            .unwrap_or_else(|e| flashlab_sweep::PointOutcome::failed(&point, &root, &e.to_string()))
    });
    to_json(&outcome)
}

/// A failed outcome for a point whose task did not return one (its worker
/// died, the cluster lost it): the row is marked failed with `message`.
#[pyfunction]
fn failed_outcome(point_json: &str, root: PathBuf, message: &str) -> PyResult<String> {
    let point: flashlab_sweep::Point = serde_json::from_str(point_json)
        .map_err(|e| err(format!("internal: bad point JSON: {e}")))?;
    to_json(&flashlab_sweep::PointOutcome::failed(
        &point, &root, message,
    ))
}

/// Writes the tidy table of the given outcomes (JSON texts) as CSV at `path`.
#[pyfunction]
fn write_table(grid_json: &str, outcomes: Vec<String>, path: PathBuf) -> PyResult<()> {
    let grid = grid_from_json(grid_json)?;
    let mut list: Vec<flashlab_sweep::PointOutcome> = outcomes
        .iter()
        .map(|o| serde_json::from_str(o).map_err(|e| err(format!("internal: bad outcome: {e}"))))
        .collect::<PyResult<_>>()?;
    list.sort_by_key(|o| o.point.index);
    // Another sweep into the same directory writes its table under the same lock.
    let root = path.parent().unwrap_or(Path::new("."));
    let _table = flashlab_sweep::table::lock_table(root)
        .map_err(|e| err(format!("cannot lock the table of {}: {e}", root.display())))?;
    flashlab_sweep::table::save_csv(&path, &grid, &list)
        .map_err(|e| err(format!("cannot write {}: {e}", path.display())))
}

/// Runs a workload on `sim:DEVICE` into a new results directory `out`;
/// returns the runs' summaries (JSON list). `workload_json` is a
/// `WorkloadSpec`: `{"kind": "patterns", "runs": [...]}` or `{"kind": "trace", ...}`.
/// The GIL is released while the simulation runs.
#[pyfunction]
fn simulate(
    py: Python<'_>,
    device: &str,
    workload_json: &str,
    seed: u64,
    out: PathBuf,
) -> PyResult<String> {
    let workload: WorkloadSpec = serde_json::from_str(workload_json).map_err(|e| {
        err(format!(
            "workload: {e}; a pattern takes the keys of a pattern file's [[run]] (pattern, io_size, io_count, ...)"
        ))
    })?;
    // A replay's settings are checked here, before the sweep's runner
    // (which names them as a grid does), so that the message names them as
    // the Python caller wrote them: trace={"speed": ...}.
    match &workload {
        WorkloadSpec::Trace(t) => t
            .check()
            .map_err(|e| err(e.render(flashlab_workload::FrontEnd::Python)))?,
        // Likewise a pattern's parameters: pattern={"io_size": ...}.
        WorkloadSpec::Patterns { runs } => flashlab_workload::check_patterns(runs)
            .map_err(|e| err(e.render(flashlab_workload::FrontEnd::Python)))?,
        _ => {}
    }
    let device = device.strip_prefix("sim:").unwrap_or(device).to_string();
    let runs = py
        .detach(|| flashlab_sweep::simulate(&device, seed, &workload, Path::new(&out), &tool()))
        .map_err(sweep_err)?;
    to_json(&runs)
}

/// `flashlab validate --profile PROFILE --set SET --json`, in this process
/// (what `fit` scores a `validate:PROFILE` candidate by): the scoreboard's
/// rows of one profile with the simulator overrides `set`, as JSON. The
/// suites' results go to a temporary directory, removed after. The GIL is
/// released while the suites run.
#[pyfunction]
fn validate(py: Python<'_>, profile: &str, set: &str) -> PyResult<String> {
    use flashlab_workload::scoreboard::{scoreboard, ScoreboardOptions};
    use std::sync::atomic::{AtomicU64, Ordering};
    // One directory per call: threads of one worker score candidates at once.
    static CALLS: AtomicU64 = AtomicU64::new(0);
    let root = std::env::temp_dir().join(format!(
        "flashlab-fit-{}-{}",
        std::process::id(),
        CALLS.fetch_add(1, Ordering::Relaxed)
    ));
    let _ = std::fs::remove_dir_all(&root);
    std::fs::create_dir_all(&root).map_err(|e| err(format!("{}: {e}", root.display())))?;
    let board = py.detach(|| {
        scoreboard(
            &ScoreboardOptions {
                profile: Some(profile),
                set: Some(set),
                quick: false,
                root: &root,
                tool: &tool(),
            },
            &mut |_| {},
        )
    });
    let _ = std::fs::remove_dir_all(&root);
    to_json(&board.map_err(err)?.to_json())
}

/// The fully resolved simulator profile of a spec (`ssd-m,op=0.2`), as TOML.
#[pyfunction]
fn profile_toml(spec: &str) -> PyResult<String> {
    let spec = spec.strip_prefix("sim:").unwrap_or(spec);
    Ok(flashlab_sim::resolve_spec(spec).map_err(err)?.to_toml())
}

/// Opens a twin's target: `sim:SPEC` (always writable: a model), or a file
/// or block device, refused when it is RAM-backed (the test every run's
/// warnings use) and opened for writing only with a range, after
/// flashlab-realdev's write-safety check, as `flashlab twin` does.
fn open_twin_target(
    device: &str,
    allow_write_to: Option<&str>,
    seed: u64,
) -> Result<(Box<dyn flashlab_device::Device>, flashlab_probe::ByteRange), String> {
    use flashlab_probe::session::parse_range;
    let range = |text: Option<&str>,
                 size: u64|
     -> Result<Option<flashlab_probe::ByteRange>, String> {
        text.map(|t| {
            parse_range(t, size).map_err(|why| {
                format!(
                    "allow_write_to={t:?}: {why}; write \"OFFSET+LENGTH\" (e.g. \"1GiB+256MiB\") or \"all\""
                )
            })
        })
        .transpose()
    };
    if let Some(spec) = device.strip_prefix("sim:") {
        let dev = flashlab_sim::open_device(spec, seed, 64).map_err(|e| e.to_string())?;
        let size = flashlab_device::Device::info(&dev).size_bytes;
        // A model has nothing to lose: the whole device unless a range is given.
        let r = range(allow_write_to, size)?.unwrap_or(flashlab_probe::ByteRange {
            offset_bytes: 0,
            len_bytes: size,
        });
        return Ok((Box::new(dev), r));
    }
    let path = PathBuf::from(device);
    let info = flashlab_realdev::probe(&path).map_err(|e| e.to_string())?;
    if let Some(why) = flashlab_results::warnings::not_flash_reason(&info.identity) {
        return Err(format!(
            "refusing to twin {device}: {why}; twin a flash device (an SSD, a USB stick, an SD card) or a sim: profile"
        ));
    }
    let Some(r) = range(allow_write_to, info.size_bytes)? else {
        return Err(format!(
            "a twin needs writes: give allow_write_to=\"OFFSET+LENGTH\" (at least 64MiB) of {device} that may be overwritten"
        ));
    };
    let mut opts = flashlab_realdev::OpenOptions::new(&path);
    opts.write = true;
    opts.max_outstanding = 64;
    let opened = flashlab_realdev::open(&opts).map_err(|e| e.to_string())?;
    let got = opened.device.info();
    if got.kind != info.kind || got.size_bytes != info.size_bytes {
        return Err(format!(
            "{device} changed while flashlab opened it (first {} bytes, then {} bytes): it names another device or file now; check the path and run again",
            info.size_bytes, got.size_bytes
        ));
    }
    Ok((opened.device, r))
}

/// `flashlab twin DEVICE` in this process: probe, plan, fit (both stages),
/// cross-validation; returns the twin (probe, parts, parameters, folds,
/// profile text) as JSON. A refusal (RAM-backed target, memory speed) is a
/// FlashlabError naming the reason. The GIL is released while it runs.
#[pyfunction]
#[pyo3(signature = (device, allow_write_to, budget, max_write_bytes, max_capacity, seed))]
fn twin(
    py: Python<'_>,
    device: &str,
    allow_write_to: Option<&str>,
    budget: &str,
    max_write_bytes: &str,
    max_capacity: &str,
    seed: u64,
) -> PyResult<String> {
    use flashlab_pattern::units::parse_size;
    let budget_ns = flashlab_probe::session::parse_budget_ns(budget).map_err(|e| {
        err(format!(
            "budget={budget:?}: {e}; write a duration such as \"10m\" or \"90s\""
        ))
    })?;
    let max_write_bytes = parse_size(max_write_bytes)
        .map_err(|e| err(format!("max_write_bytes={max_write_bytes:?}: {e}")))?;
    let max_capacity_bytes =
        parse_size(max_capacity).map_err(|e| err(format!("max_capacity={max_capacity:?}: {e}")))?;
    // The device is opened inside the released section: an io_uring engine
    // stays on the thread that runs it.
    let t = py
        .detach(|| {
            let (mut dev, writes) = open_twin_target(device, allow_write_to, seed)?;
            let opts = flashlab_probe::twin::TwinOptions {
                budget_ns,
                max_write_bytes,
                writes,
                seed,
                max_capacity_bytes,
                write_past_cache: false,
            };
            flashlab_probe::twin::twin(&mut *dev, &opts).map_err(|e| match e {
                flashlab_probe::ProbeError::Refused(why) => {
                    format!("refusing to twin {device}: {why}")
                }
                e => e.to_string(),
            })
        })
        .map_err(err)?;
    to_json(&t)
}

/// Refits a saved twin (its JSON, `PROFILE.twin.json`) from the measurement
/// it holds, without the device: the same probe report and plan statistics,
/// fitted again by this version's code. Returns the new twin as JSON.
#[pyfunction]
fn refit_twin(py: Python<'_>, twin_json: &str, max_capacity: &str) -> PyResult<String> {
    let max_capacity_bytes = flashlab_pattern::units::parse_size(max_capacity)
        .map_err(|e| err(format!("max_capacity={max_capacity:?}: {e}")))?;
    let saved: flashlab_probe::twin::Twin = serde_json::from_str(twin_json).map_err(|e| {
        err(format!(
            "not a twin's JSON ({e}); give the PROFILE.twin.json that flashlab twin or flashlab.twin wrote"
        ))
    })?;
    let m = flashlab_probe::twin::Measurement::from_twin(&saved);
    let t = py
        .detach(|| flashlab_probe::twin::fit_twin(&m, max_capacity_bytes))
        .map_err(err)?;
    to_json(&t)
}

#[pymodule]
fn _native(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add("FlashlabError", m.py().get_type::<FlashlabError>())?;
    m.add_function(wrap_pyfunction!(load_grid, m)?)?;
    m.add_function(wrap_pyfunction!(parse_grid, m)?)?;
    m.add_function(wrap_pyfunction!(grid_points, m)?)?;
    m.add_function(wrap_pyfunction!(run_point, m)?)?;
    m.add_function(wrap_pyfunction!(failed_outcome, m)?)?;
    m.add_function(wrap_pyfunction!(write_table, m)?)?;
    m.add_function(wrap_pyfunction!(simulate, m)?)?;
    m.add_function(wrap_pyfunction!(profile_toml, m)?)?;
    m.add_function(wrap_pyfunction!(validate, m)?)?;
    m.add_function(wrap_pyfunction!(twin, m)?)?;
    m.add_function(wrap_pyfunction!(refit_twin, m)?)?;
    Ok(())
}
