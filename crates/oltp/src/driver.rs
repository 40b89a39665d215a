//! The seam to the TPC-C driver (`flashlab-tpcc`): load, run, check.
//! Without the `tpcc` feature flashlab oltp can set up and tear down
//! (`--setup-only`) but says plainly that it cannot run TPC-C.

use std::path::Path;
use std::sync::atomic::AtomicBool;

use serde_json::Value;

use crate::error::{OltpError, Result, WorkloadError};
use crate::{OltpConfig, Progress};

/// Where the driver reaches the DBMS (`dbms::Dbms::target`).
#[derive(Clone, Debug)]
pub enum Target {
    Postgres(Box<postgres::Config>),
    /// MariaDB over its private socket, as root (socket authentication).
    Mariadb {
        socket: std::path::PathBuf,
        database: String,
    },
}

#[cfg(feature = "tpcc")]
fn mariadb_target(socket: &Path, database: &str) -> flashlab_tpcc::mariadb::MariadbTarget {
    flashlab_tpcc::mariadb::MariadbTarget {
        socket: socket.to_path_buf(),
        user: "root".into(),
        database: database.into(),
    }
}

/// What the measured run gives back.
pub struct RunResult {
    /// The driver's report (tpmC, per-type counts and percentiles, per-second series).
    pub report: Value,
    /// Seconds of the measured interval, if the driver says.
    pub measured_s: Option<f64>,
}

#[cfg(not(feature = "tpcc"))]
pub fn check_available() -> Result<()> {
    Err(OltpError::Input(crate::error::InputError::NoTpccDriver))
}

#[cfg(not(feature = "tpcc"))]
pub fn load(
    _db: &Target,
    _cfg: &OltpConfig,
    _stop: &AtomicBool,
    _server_pid: u32,
    _signal: libc::c_int,
    _p: &mut dyn Progress,
) -> Result<Value> {
    Err(OltpError::Workload(WorkloadError::NotBuilt))
}

#[cfg(not(feature = "tpcc"))]
pub fn run(
    _db: &Target,
    _cfg: &OltpConfig,
    _stop: &AtomicBool,
    _seconds: &Path,
    _p: &mut dyn Progress,
) -> Result<RunResult> {
    Err(OltpError::Workload(WorkloadError::NotBuilt))
}

#[cfg(not(feature = "tpcc"))]
pub fn run_window(
    _db: &Target,
    _cfg: &OltpConfig,
    _seed: u64,
    _stop: &AtomicBool,
    _seconds: &Path,
    _p: &mut dyn Progress,
) -> Result<RunResult> {
    Err(OltpError::Workload(WorkloadError::NotBuilt))
}

#[cfg(not(feature = "tpcc"))]
pub fn warm_up(
    _db: &Target,
    _cfg: &OltpConfig,
    _stop: &AtomicBool,
    _seconds: &Path,
    _p: &mut dyn Progress,
) -> Result<RunResult> {
    Err(OltpError::Workload(WorkloadError::NotBuilt))
}

#[cfg(not(feature = "tpcc"))]
pub fn check_consistency(_db: &Target) -> Result<Value> {
    Err(OltpError::Workload(WorkloadError::NotBuilt))
}

#[cfg(feature = "tpcc")]
pub fn check_available() -> Result<()> {
    Ok(())
}

#[cfg(feature = "tpcc")]
fn err(e: flashlab_tpcc::TpccError) -> OltpError {
    OltpError::Workload(WorkloadError::Tpcc(e))
}

/// Loads the warehouses. A Ctrl-C during the load stops the server (fast
/// shutdown): the loader's connections end and the load returns at once.
#[cfg(feature = "tpcc")]
pub fn load(
    db: &Target,
    cfg: &OltpConfig,
    stop: &AtomicBool,
    server_pid: u32,
    signal: libc::c_int,
    p: &mut dyn Progress,
) -> Result<Value> {
    use std::sync::atomic::Ordering;
    use std::sync::Mutex;
    let last = Mutex::new(String::new());
    let progress = |lp: flashlab_tpcc::LoadProgress| {
        let line = format!(
            "load: {:?}, {}/{} warehouses, {} rows, {:.0} s",
            lp.phase, lp.warehouses_done, lp.warehouses, lp.rows_loaded, lp.elapsed_s
        );
        if let Ok(mut l) = last.lock() {
            *l = line;
        }
    };
    let report = std::thread::scope(|s| {
        let loader = s.spawn(|| match db {
            Target::Postgres(db) => {
                flashlab_tpcc::load(db, cfg.warehouses, cfg.load_workers, cfg.seed, &progress)
            }
            Target::Mariadb { socket, database } => flashlab_tpcc::mariadb::load(
                &mariadb_target(socket, database),
                cfg.warehouses,
                cfg.load_workers,
                cfg.seed,
                stop,
                &progress,
            ),
        });
        let mut shown = String::new();
        let mut signalled = false;
        while !loader.is_finished() {
            if stop.load(Ordering::SeqCst) && !signalled {
                // SAFETY: kill(2) on the server we started (its quick shutdown).
                unsafe {
                    libc::kill(server_pid as libc::pid_t, signal);
                }
                signalled = true;
            }
            let line = last.lock().map(|l| l.clone()).unwrap_or_default();
            if !line.is_empty() && line != shown {
                p.say(&line);
                shown = line;
            }
            std::thread::sleep(std::time::Duration::from_millis(200));
        }
        loader.join()
    });
    if stop.load(Ordering::SeqCst) {
        return Err(OltpError::Interrupted);
    }
    let report = report
        .map_err(|_| OltpError::Workload(WorkloadError::LoaderPanicked))?
        .map_err(err)?;
    p.say(&format!(
        "loaded {} warehouses: {} rows, database {} MiB, {:.0} s",
        report.warehouses,
        report.total_rows,
        report.database_size_bytes >> 20,
        report.load_s
    ));
    Ok(serde_json::to_value(&report).expect("serializes"))
}

/// The measured run: TPC-C for `duration_s` with no ramp-up of its own
/// (the warm-up ran before the CHECKPOINT that starts the window); every
/// second's sample is appended to `seconds` (JSON lines) as it comes, so a
/// killed run keeps them.
#[cfg(feature = "tpcc")]
pub fn run(
    db: &Target,
    cfg: &OltpConfig,
    stop: &AtomicBool,
    seconds: &Path,
    p: &mut dyn Progress,
) -> Result<RunResult> {
    p.say(&format!(
        "TPC-C: {} terminals, {:.0} s measured{}",
        cfg.terminals,
        cfg.duration_s,
        match cfg.rate_per_min {
            Some(r) => format!(", offered load {r} transactions/min"),
            None => String::new(),
        }
    ));
    drive(db, cfg, cfg.duration_s, cfg.seed, stop, seconds, p)
}

/// One more measured window of `--repeat` (window 2 on), with its own seed.
#[cfg(feature = "tpcc")]
pub fn run_window(
    db: &Target,
    cfg: &OltpConfig,
    seed: u64,
    stop: &AtomicBool,
    seconds: &Path,
    p: &mut dyn Progress,
) -> Result<RunResult> {
    drive(db, cfg, cfg.duration_s, seed, stop, seconds, p)
}

/// The warm-up: TPC-C for `ramp_up_s`, before the CHECKPOINT. Its own seed
/// (the run's terminals would otherwise replay the warm-up's inputs).
#[cfg(feature = "tpcc")]
pub fn warm_up(
    db: &Target,
    cfg: &OltpConfig,
    stop: &AtomicBool,
    seconds: &Path,
    p: &mut dyn Progress,
) -> Result<RunResult> {
    p.say(&format!(
        "warm-up: TPC-C for {:.0} s (not traced, not counted)",
        cfg.ramp_up_s
    ));
    let r = drive(
        db,
        cfg,
        cfg.ramp_up_s,
        cfg.seed ^ 0x7761_726d,
        stop,
        seconds,
        p,
    )?;
    // The per-second series is in the file; oltp.json keeps the figures.
    let mut report = r.report;
    if let Some(o) = report.as_object_mut() {
        o.remove("seconds");
    }
    Ok(RunResult { report, ..r })
}

#[cfg(feature = "tpcc")]
fn drive(
    db: &Target,
    cfg: &OltpConfig,
    duration_s: f64,
    seed: u64,
    stop: &AtomicBool,
    seconds: &Path,
    p: &mut dyn Progress,
) -> Result<RunResult> {
    use std::io::Write;
    let tc = flashlab_tpcc::TpccConfig {
        warehouses: cfg.warehouses,
        terminals: cfg.terminals,
        ramp_up: std::time::Duration::ZERO,
        duration: std::time::Duration::from_secs_f64(duration_s),
        keying_and_think: cfg.keying_and_think,
        seed,
        rate_per_min: cfg.rate_per_min,
        // preflight checked the name.
        mix: cfg
            .mix
            .as_deref()
            .and_then(flashlab_tpcc::Mix::parse)
            .unwrap_or_default(),
    };
    let mut file = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(seconds)
        .map_err(|e| OltpError::failed(format!("cannot create {}", seconds.display()), e))?;
    let mut on_second = |s: &flashlab_tpcc::SecondSample| {
        if let Ok(line) = serde_json::to_string(s) {
            let _ = writeln!(file, "{line}");
        }
        if s.second % 10 == 9 {
            p.say(&format!(
                "second {}{}: {:.0} tpmC, {:.0} transactions/s",
                s.second + 1,
                if s.ramp_up { " (ramp-up)" } else { "" },
                s.tpmc,
                s.transactions_per_s
            ));
        }
    };
    let report = match db {
        Target::Postgres(db) => flashlab_tpcc::run(db, &tc, stop, &mut on_second),
        Target::Mariadb { socket, database } => flashlab_tpcc::mariadb::run(
            &mariadb_target(socket, database),
            &tc,
            stop,
            &mut on_second,
        ),
    }
    .map_err(err)?;
    Ok(RunResult {
        measured_s: Some(report.measured_s),
        report: serde_json::to_value(&report).expect("serializes"),
    })
}

#[cfg(feature = "tpcc")]
pub fn check_consistency(db: &Target) -> Result<Value> {
    // Clause 3.3.2's conditions, the same queries on both DBMSs.
    let r = match db {
        Target::Postgres(db) => flashlab_tpcc::check_consistency(db),
        Target::Mariadb { socket, database } => {
            flashlab_tpcc::mariadb::check_consistency(&mariadb_target(socket, database))
        }
    }
    .map_err(err)?;
    let ok = r.ok();
    let mut v = serde_json::to_value(&r).expect("serializes");
    if let Some(o) = v.as_object_mut() {
        o.insert("ok".into(), Value::Bool(ok));
    }
    Ok(v)
}
