//! `flashlab oltp`: TPC-C on PostgreSQL over a file, a block device or a
//! simulated SSD, with the DBMS's file-system requests (logical IO) and the
//! device's block requests (physical IO) traced in the same run (Wang et al.,
//! IEICE 2011, sections 3 and 4; docs/oltp.md).
//!
//! One call, [`run`], sets everything up, step by step, each step's undo on
//! a [`teardown::Teardown`] stack that is unwound on success, on error and
//! after Ctrl-C: the device (`device/`: file + loop, checked block device,
//! `flashlab serve` + nbdfuse + loop, or an existing mount), the file system
//! and scheduler (`fs.rs`), PostgreSQL (`postgres.rs`); then it loads and
//! runs TPC-C (`driver.rs`, the seam to `flashlab-tpcc`) between the two
//! tracers (`tracing.rs`, the seam to `flashlab-iotrace`), snapshots
//! /sys/block/DEV/stat (`blockstat.rs`) and serve's statistics, computes the
//! endurance (`endurance.rs`) and writes `oltp.json` as it goes
//! (`results.rs`). At the end it checks that nothing is left behind
//! (`leftovers.rs`).

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use serde::{Deserialize, Serialize};

pub mod blockstat;
pub mod checkpoints;
pub mod dbms;
pub mod device;
pub mod driver;
pub mod endurance;
pub mod error;
pub mod fs;
pub mod leftovers;
pub mod postgres;
pub mod proc;
pub mod results;
pub mod stale;
pub mod teardown;
pub mod tracing;

pub use error::{Failure, InputError, OltpError, Result, WorkloadError};

use device::DeviceArg;
use flashlab_results::oltp::{OltpResult, OltpStatus};
use fs::FsKind;
use postgres::PgSettings;

/// Space TPC-C needs per warehouse, measured on PostgreSQL 15 after the
/// load (docs/oltp.md); the WAL (up to max_wal_size) comes on top.
pub const BYTES_PER_WAREHOUSE: u64 = 120 << 20;
/// The file system's own metadata and PostgreSQL's catalog, roughly.
pub const BASE_BYTES: u64 = 256 << 20;

/// Everything `flashlab oltp` was asked to do.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct OltpConfig {
    pub device: Option<String>,
    pub mount: Option<PathBuf>,
    /// Create the file (or size the simulated device) with this many bytes.
    pub size_bytes: Option<u64>,
    pub allow_write_to: Option<PathBuf>,
    pub fs: FsKind,
    pub scheduler: Option<String>,
    /// The DBMS under test (`--dbms`); PostgreSQL unless asked.
    #[serde(default)]
    pub dbms: dbms::DbmsKind,
    pub pg_bin: Option<PathBuf>,
    pub pg: PgSettings,
    /// InnoDB's settings (`--innodb-*`; MariaDB only; its buffer pool is
    /// `--shared-buffers` unless `--innodb-buffer-pool-size` says).
    #[serde(default)]
    pub innodb: dbms::mariadb::InnodbSettings,
    pub warehouses: u32,
    pub load_workers: u32,
    pub terminals: u32,
    /// Warm-up: TPC-C runs this long, untraced and uncounted, before the
    /// CHECKPOINT that starts the measured window.
    pub ramp_up_s: f64,
    pub duration_s: f64,
    pub keying_and_think: bool,
    pub seed: u64,
    /// `--repeat N`: measured windows on the same loaded database (1: one).
    #[serde(default = "one_window")]
    pub repeat: u32,
    /// `--rate TPM`: the offered load, transactions of all types per
    /// minute over all terminals; none runs the terminals flat out.
    #[serde(default)]
    pub rate_per_min: Option<u32>,
    /// `--mix`: the transaction mix, `standard` (None) or one of Wang et
    /// al.'s Table 3 variations, `read-intensive` or `write-intensive`
    /// (section 3.3.2, Fig. 12); the names of `flashlab_tpcc::Mix`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mix: Option<String>,
    pub trace: bool,
    /// sim: serve replies after each request's simulated latency
    /// (`flashlab serve --pace`), so PostgreSQL feels the simulated device.
    pub pace: bool,
    pub rated_lifetime_writes_bytes: Option<u64>,
    /// Length of one interval of the Figs 7-9 series.
    pub interval_s: f64,
    /// Set up, check that PostgreSQL answers, tear down: no load, no run.
    pub setup_only: bool,
    pub results: PathBuf,
    /// The flashlab executable (to start `flashlab serve`).
    #[serde(skip)]
    pub exe: PathBuf,
}

fn one_window() -> u32 {
    1
}

/// Where a run prints what it does.
pub trait Progress {
    fn say(&mut self, line: &str);
}

impl<F: FnMut(&str)> Progress for F {
    fn say(&mut self, line: &str) {
        self(line)
    }
}

/// The run's outcome: the final oltp.json, and what teardown left behind
/// (empty when all is well).
pub struct Outcome {
    pub result: OltpResult,
    pub leftovers: Vec<String>,
}

/// The mixes `--mix` takes (`flashlab_tpcc::Mix`'s names; the driver is an
/// optional dependency, so the names are checked here too).
pub const MIXES: [&str; 3] = ["standard", "read-intensive", "write-intensive"];

/// The bytes a run of `warehouses` needs on its file system.
pub fn bytes_needed(warehouses: u32, max_wal_bytes: u64) -> u64 {
    BASE_BYTES + warehouses as u64 * BYTES_PER_WAREHOUSE + max_wal_bytes + (64 << 20)
}

/// A simulated device's capacity when no `--size` or `capacity=` says:
/// 1.5x what the warehouses need, at least 2 GiB, in whole GiB.
pub fn default_sim_capacity_bytes(needed_bytes: u64) -> u64 {
    (needed_bytes * 3 / 2).max(2 << 30).div_ceil(1 << 30) << 30
}

/// PostgreSQL sizes ("1GB", "512MB", "64kB") in bytes, read as PostgreSQL
/// reads them: its unit words are powers of 1024 (its "MB" is flashlab's
/// "MiB"), case-sensitive, a bare number counts 8 kB pages. The
/// arithmetic is the shared size parser's.
pub fn pg_size_bytes(text: &str) -> Option<u64> {
    let t = text.trim();
    let split = t.find(|c: char| !c.is_ascii_digit()).unwrap_or(t.len());
    let (n, unit) = (&t[..split], t[split..].trim());
    if n.is_empty() {
        return None;
    }
    let (iec, pages) = match unit {
        "" => ("KiB", 8), // blocks of 8 kB for the page-sized settings
        "kB" => ("KiB", 1),
        "MB" => ("MiB", 1),
        "GB" => ("GiB", 1),
        "TB" => ("TiB", 1),
        _ => return None,
    };
    let bytes = flashlab_pattern::units::parse_size(&format!("{n}{iec}")).ok()?;
    bytes.checked_mul(pages)
}

/// The checks made before anything is set up: each a one-line error.
pub fn preflight(cfg: &OltpConfig) -> Result<(DeviceArg, PathBuf)> {
    if !proc::is_root() {
        return Err(OltpError::NotRoot);
    }
    let dev = DeviceArg::parse(cfg.device.as_deref(), cfg.mount.as_deref())?;
    if cfg.warehouses == 0 {
        return Err(OltpError::Input(InputError::NoWarehouses));
    }
    if cfg.terminals == 0 {
        return Err(OltpError::Input(InputError::NoTerminals));
    }
    if let Some(m) = &cfg.mix {
        if !MIXES.contains(&m.as_str()) {
            return Err(OltpError::Input(InputError::BadMix { given: m.clone() }));
        }
    }
    if pg_size_bytes(&cfg.pg.max_wal_size).is_none() {
        return Err(OltpError::Input(InputError::BadWalSize {
            given: cfg.pg.max_wal_size.clone(),
        }));
    }
    let pg_bin = match cfg.dbms {
        dbms::DbmsKind::Postgres => {
            let bin = postgres::find_bin(cfg.pg_bin.as_deref())?;
            if postgres::proc_user_missing() {
                return Err(OltpError::Input(InputError::NoPostgresUser));
            }
            bin
        }
        dbms::DbmsKind::Mariadb => {
            dbms::mariadb::check_installed()?;
            PathBuf::new()
        }
    };
    // Every tool, before anything changes on the machine.
    if !matches!(dev, DeviceArg::Mount { .. }) {
        cfg.fs.find_mkfs()?;
        proc::find_tool("mount", "mount", "to mount the file system")?;
        proc::find_tool("losetup", "util-linux", "to attach a loop device")?;
    }
    if matches!(dev, DeviceArg::Sim { .. }) {
        proc::find_tool(
            "nbdfuse",
            "libnbd-bin",
            "to reach the simulated SSD's NBD export as a file",
        )?;
        proc::find_tool("fusermount3", "fuse3", "to unmount the nbdfuse file")?;
    }
    if cfg.trace && !cfg.setup_only {
        tracing::check_available()?;
    }
    if !cfg.setup_only {
        driver::check_available()?;
    }
    Ok((dev, pg_bin))
}

/// The private directory for mount points, sockets and the simulated
/// device's data (on disk: /run is often a small tmpfs).
fn run_dir() -> PathBuf {
    Path::new(stale::ROOT).join(std::process::id().to_string())
}

/// Undoes what killed runs left (`stale.rs`); one line per thing removed.
pub fn cleanup_killed_runs() -> Result<Vec<String>> {
    if !proc::is_root() {
        return Err(OltpError::NotRoot);
    }
    let done = stale::cleanup();
    // No empty parent left behind either (removed only when empty).
    let _ = std::fs::remove_dir(stale::ROOT);
    Ok(done)
}

/// Runs everything; the teardown stack is unwound before this returns,
/// whatever happened, and what it left behind is reported.
pub fn run(cfg: &OltpConfig, stop: &AtomicBool, progress: &mut dyn Progress) -> Result<Outcome> {
    let (dev, pg_bin) = preflight(cfg)?;
    stale::prepare_root()
        .map_err(|e| OltpError::failed(format!("cannot prepare {}", stale::ROOT), e))?;
    for line in stale::cleanup() {
        progress.say(&format!("cleaning up: {line}"));
    }
    let mut doc = results::Doc::create(&cfg.results, cfg)?;
    let rdir = run_dir();
    let mut teardown = teardown::Teardown::new(false);
    let result = setup_and_run(
        cfg,
        &dev,
        &pg_bin,
        &rdir,
        stop,
        progress,
        &mut doc,
        &mut teardown,
    );
    progress.say("tearing down");
    teardown.unwind();
    // The parent of the run directories goes too when no other run uses it
    // (remove_dir removes only an empty directory).
    let _ = std::fs::remove_dir(stale::ROOT);
    let left = leftovers::check(&rdir, &doc.watch);
    doc.set(
        "teardown",
        serde_json::json!({"log": teardown.log, "errors": teardown.errors, "leftovers": left}),
    );
    match &result {
        Ok(()) => doc.set_status(OltpStatus::Complete, None),
        Err(OltpError::Interrupted) => doc.set_status(OltpStatus::Interrupted, None),
        Err(e) => doc.set_status(OltpStatus::Failed, Some(e.to_string())),
    }
    doc.save()?;
    result.map(|()| Outcome {
        result: doc.result.clone(),
        leftovers: left,
    })
}

fn check_stop(stop: &AtomicBool) -> Result<()> {
    if stop.load(Ordering::SeqCst) {
        Err(OltpError::Interrupted)
    } else {
        Ok(())
    }
}

#[allow(clippy::too_many_arguments)]
/// Long: the run in order (directory, device, file system, DBMS, load, measured window,
/// results, teardown); the stages share the run directory and the attached device, and each
/// later failure tears down the earlier stages.
fn setup_and_run(
    cfg: &OltpConfig,
    dev: &DeviceArg,
    pg_bin: &Path,
    rdir: &Path,
    stop: &AtomicBool,
    progress: &mut dyn Progress,
    doc: &mut results::Doc,
    teardown: &mut teardown::Teardown,
) -> Result<()> {
    let max_wal = pg_size_bytes(&cfg.pg.max_wal_size).unwrap_or(1 << 30);
    let needed = bytes_needed(cfg.warehouses, max_wal);
    // A new directory (not create_dir_all): the cleanup above removed any
    // earlier one of this PID, so one that exists now is not ours. Once
    // more if another run's teardown removed the empty parent meanwhile.
    let created = std::fs::create_dir(rdir).or_else(|e| {
        if e.kind() != std::io::ErrorKind::NotFound {
            return Err(e);
        }
        stale::prepare_root()?;
        std::fs::create_dir(rdir)
    });
    created.map_err(|e| OltpError::failed(format!("cannot create {}", rdir.display()), e))?;
    {
        let d = rdir.to_path_buf();
        teardown.push(format!("remove {}", rdir.display()), move || {
            std::fs::remove_dir_all(&d)
                .map_err(|source| teardown::UndoError::Remove { path: d, source })
        });
    }
    teardown.recorder = Some(stale::Recorder::create(rdir).map_err(|e| {
        OltpError::failed(format!("cannot write the record in {}", rdir.display()), e)
    })?);
    // The run directory must be traversable by the postgres user (socket, mount).
    use std::os::unix::fs::PermissionsExt;
    let _ = std::fs::set_permissions(rdir, std::fs::Permissions::from_mode(0o755));

    // 1. The device.
    progress.say(&format!("device: {}", dev.describe()));
    let attached = match dev {
        DeviceArg::File { path } => {
            if let Some(size) = cfg.size_bytes {
                if size < needed {
                    return Err(too_small(
                        &path.display().to_string(),
                        size,
                        needed,
                        cfg,
                        "--size",
                    ));
                }
            }
            device::file::attach(
                path,
                cfg.size_bytes,
                cfg.allow_write_to.as_deref(),
                teardown,
            )?
        }
        DeviceArg::Block { path } => {
            device::block::attach(path, cfg.allow_write_to.as_deref(), teardown)?
        }
        DeviceArg::Sim { spec } => {
            let capacity = cfg
                .size_bytes
                .unwrap_or_else(|| default_sim_capacity_bytes(needed));
            let setup = device::sim::SimSetup {
                spec,
                default_capacity_bytes: capacity,
                exe: &cfg.exe,
                run_dir: rdir,
                trace: &cfg.results.join("device.trace"),
                stats_json: &cfg.results.join("serve-stats.json"),
                serve_log: &cfg.results.join("serve.log"),
                seed: cfg.seed,
                pace: cfg.pace,
            };
            device::sim::attach(&setup, teardown)?
        }
        DeviceArg::Mount { dir } => device::mount::attach(dir)?.0,
    };
    if let (Some(name), DeviceArg::File { .. } | DeviceArg::Sim { .. }) =
        (&attached.sysfs_name, dev)
    {
        if let Ok(b) = std::fs::read_to_string(format!("/sys/block/{name}/loop/backing_file")) {
            doc.watch
                .loop_devices
                .push((name.clone(), b.trim().to_string()));
        }
    }
    if let Some(s) = &attached.serve {
        doc.watch.pids.push(s.pid);
    }
    doc.set(
        "device",
        serde_json::to_value(&attached).expect("serializes"),
    );
    doc.save()?;
    if attached.size_bytes > 0 && attached.size_bytes < needed {
        let what = if matches!(dev, DeviceArg::Mount { .. }) {
            "the free space of --mount"
        } else {
            "--size"
        };
        return Err(too_small(
            &dev.describe(),
            attached.size_bytes,
            needed,
            cfg,
            what,
        ));
    }
    check_stop(stop)?;

    // 2. The file system and the scheduler.
    let mnt = match dev {
        DeviceArg::Mount { dir } => dir.clone(),
        _ => {
            let mkfs_tool = cfg.fs.find_mkfs()?;
            let target = attached
                .mkfs_path
                .clone()
                .expect("a device to make the file system on");
            progress.say(&format!(
                "mkfs.{} {}",
                cfg.fs.name(),
                attached.block_dev.as_deref().unwrap_or(&target).display()
            ));
            fs::mkfs(cfg.fs, &mkfs_tool, &target)?;
            let mnt = rdir.join("mnt");
            fs::mount(cfg.fs, &target, &mnt, teardown)?;
            mnt
        }
    };
    if let (Some(s), Some(name)) = (&cfg.scheduler, &attached.sysfs_name) {
        let prev = fs::set_scheduler(name, s, teardown)?;
        doc.set("scheduler", serde_json::json!({"set": s, "previous": prev}));
    } else if cfg.scheduler.is_some() {
        return Err(OltpError::Input(InputError::SchedulerWithoutDevice));
    }
    if let Some(name) = &attached.sysfs_name {
        if let Some((all, current)) = fs::schedulers(name) {
            doc.set(
                "scheduler_in_use",
                serde_json::json!({"current": current, "offered": all}),
            );
        }
    }
    check_stop(stop)?;

    // 3. The DBMS, its data directory inside the file system under test.
    let on_users_mount = matches!(dev, DeviceArg::Mount { .. });
    let datadir = mnt.join(cfg.dbms.data_dir_name(on_users_mount));
    let max_connections = cfg.terminals + cfg.load_workers + 10;
    let mut server: Box<dyn dbms::Dbms> = match cfg.dbms {
        dbms::DbmsKind::Postgres => {
            let version = postgres::version(pg_bin);
            progress.say(&format!(
                "PostgreSQL: initdb {} and start ({version})",
                datadir.display(),
            ));
            let log = cfg.results.join("postgres.log");
            let server = postgres::init_and_start(
                &postgres::StartSpec {
                    bin: pg_bin,
                    pgdata: &datadir,
                    socket_dir: &rdir.join("pgsock"),
                    log: &log,
                    settings: &cfg.pg,
                    max_connections,
                    remove_at_teardown: on_users_mount,
                },
                teardown,
            )?;
            Box::new(dbms::postgres::Postgres::new(
                server,
                version,
                cfg.pg.clone(),
                log,
            ))
        }
        dbms::DbmsKind::Mariadb => {
            progress.say(&format!(
                "MariaDB: mariadb-install-db {} and start ({})",
                datadir.display(),
                dbms::mariadb::version()
            ));
            Box::new(dbms::mariadb::init_and_start(
                &dbms::mariadb::StartSpec {
                    datadir: &datadir,
                    socket_dir: &rdir.join("mysqlsock"),
                    log: &cfg.results.join("mariadb.log"),
                    settings: cfg.innodb.clone(),
                    max_connections,
                    remove_at_teardown: on_users_mount,
                },
                teardown,
            )?)
        }
    };
    doc.watch.pids.push(server.pid());
    let (key, section) = server.section();
    doc.set(key, section);
    doc.save()?;
    check_stop(stop)?;
    if cfg.setup_only {
        progress.say("set-up complete (--setup-only): the DBMS answers; tearing down");
        return Ok(());
    }
    let db = server.target();

    // 4. Load (a Ctrl-C stops the server, which ends the load at once).
    doc.set_status(OltpStatus::Loading, None);
    doc.save()?;
    let load = driver::load(
        &db,
        cfg,
        stop,
        server.pid(),
        server.shutdown_signal(),
        progress,
    )?;
    doc.set("load", load);
    doc.save()?;
    check_stop(stop)?;

    // 5. Warm-up, then a CHECKPOINT: the measured window starts from a
    // warmed-up, checkpointed steady state (the load's dirty buffers on disk,
    // the next timed checkpoint one interval into the window), as a long run
    // would be at any checkpoint.
    if cfg.ramp_up_s > 0.0 {
        doc.set_status(OltpStatus::WarmingUp, None);
        doc.save()?;
        let warm = driver::warm_up(
            &db,
            cfg,
            stop,
            &cfg.results.join("warm-up-seconds.jsonl"),
            progress,
        )?;
        doc.set("warm_up", warm.report);
        doc.save()?;
        check_stop(stop)?;
    }
    server.flush(progress)?;
    server.window_start()?;
    check_stop(stop)?;

    // 6. Measure: block stat and serve before, tracers, TPC-C, tracers, after.
    // The block statistics are read while the file system is frozen (every
    // dirty page written back, no write can start), right before the
    // tracers start and right after they stop: both count the same
    // requests. A file system flashlab did not make (--mount) is not frozen.
    let freezable = !matches!(dev, DeviceArg::Mount { .. });
    let frozen = if freezable {
        Some(fs::freeze(&mnt)?)
    } else {
        None
    };
    let stat_before = attached
        .sysfs_name
        .as_deref()
        .and_then(blockstat::BlockStat::read);
    // serve's statistics inside the same bracket: its deltas are the traced window's.
    let serve_before = attached.serve.as_ref().and_then(|s| s.snapshot());
    let tracer = if cfg.trace {
        Some(tracing::start(
            &cfg.results,
            server.pid(),
            server.data_dir(),
            &attached,
        )?)
    } else {
        None
    };
    drop(frozen);
    doc.set_status(OltpStatus::Running, None);
    doc.save()?;
    let started = std::time::Instant::now();
    let run = driver::run(
        &db,
        cfg,
        stop,
        &cfg.results.join("tpcc-seconds.jsonl"),
        progress,
    );
    let elapsed_s = started.elapsed().as_secs_f64();
    let frozen = if freezable {
        fs::freeze(&mnt).ok()
    } else {
        None
    };
    let traced = tracer.map(|t| t.stop()).transpose();
    let stat_after = attached
        .sysfs_name
        .as_deref()
        .and_then(blockstat::BlockStat::read);
    let serve_after = attached.serve.as_ref().and_then(|s| s.snapshot());
    drop(frozen);
    // The server's own counters for the window (checkpoints, InnoDB's
    // bytes), set against the trace; a server that went away leaves the
    // section out (the run's own error says why).
    let trace_summary = match &traced {
        Ok(Some(t)) => Some(&t.summary),
        _ => None,
    };
    if let Some((key, value, line)) = server.window_end(trace_summary) {
        progress.say(&line);
        doc.set(key, value);
    }
    // A failed run keeps what it measured: the trace's summary and the
    // TPC-C seconds that completed, then the error.
    if let Ok(Some(t)) = &traced {
        doc.set("trace", t.summary.clone());
    }
    let run = match run {
        Ok(r) => r,
        Err(e) => {
            doc.set(
                "tpcc_partial",
                results::partial_tpcc(&cfg.results.join("tpcc-seconds.jsonl")),
            );
            doc.save()?;
            return Err(e);
        }
    };
    let traced = traced?;
    doc.set("tpcc", run.report.clone());
    let delta = match (&stat_before, &stat_after) {
        (Some(b), Some(a)) => Some(b.delta(a)),
        _ => None,
    };
    doc.set(
        "block_stat",
        serde_json::json!({"device": attached.sysfs_name, "before": stat_before, "after": stat_after, "delta": delta}),
    );
    if serve_before.is_some() || serve_after.is_some() {
        doc.set(
            "serve",
            results::serve_section(serve_before.as_ref(), serve_after.as_ref()),
        );
    }
    doc.save()?;

    // 7. Analysis: series, file-system WAF, consistency, endurance.
    let measured_s = run.measured_s.unwrap_or(elapsed_s).max(1e-9);
    if let Some(t) = &traced {
        doc.set("trace", t.summary.clone());
        doc.set("series", t.series(cfg.interval_s));
        doc.result.fs_write_amplification = t.fs_write_amplification();
        doc.set("trace_consistency", results::consistency(t, delta.as_ref()));
    }
    let physical_write_bytes = traced
        .as_ref()
        .and_then(|t| t.physical_write_bytes())
        .or(delta.map(|d| d.write_bytes()))
        .unwrap_or(0);
    // Rates over the traced time (ramp-up and measured run), the window the
    // physical bytes were counted in.
    let traced_s = traced
        .as_ref()
        .map(|t| t.duration_s())
        .filter(|s| *s > 0.0)
        .unwrap_or(elapsed_s);
    doc.result.traced_s = Some(traced_s);
    let endurance = results::endurance(
        cfg,
        dev,
        physical_write_bytes,
        traced_s,
        serve_before.as_ref(),
        serve_after.as_ref(),
    );
    doc.result.endurance = Some(endurance);
    doc.result.measured_s = Some(measured_s);
    doc.save()?;
    if stop.load(Ordering::SeqCst) {
        return Err(OltpError::Interrupted);
    }
    repeat_windows(cfg, &db, server.as_mut(), &run.report, stop, progress, doc)?;
    if let Ok(c) = driver::check_consistency(&db) {
        doc.set("tpcc_consistency", c);
    }
    doc.save()?;
    Ok(())
}

/// `--repeat N`: windows 2..N after the traced window 1, on the same loaded
/// database, each after the same flush that started window 1 (PostgreSQL's
/// CHECKPOINT, InnoDB's dirty pages written), each with its own seed and
/// its per-second series in `tpcc-seconds-W.jsonl`. They are not traced: the
/// trace, the file-system WAF and the endurance describe window 1. After
/// each window oltp.json gets every window's figures and their 95 %
/// intervals, so an interrupted series keeps the windows that completed.
fn repeat_windows(
    cfg: &OltpConfig,
    db: &driver::Target,
    server: &mut dyn dbms::Dbms,
    first: &serde_json::Value,
    stop: &AtomicBool,
    progress: &mut dyn Progress,
    doc: &mut results::Doc,
) -> Result<()> {
    use flashlab_results::oltp::{RepeatFigures, TpccFigures, WindowFigures};
    if cfg.repeat <= 1 {
        return Ok(());
    }
    let figures = |v: &serde_json::Value| -> TpccFigures {
        serde_json::from_value(v.clone()).unwrap_or_default()
    };
    let mut windows = vec![WindowFigures::of(1, cfg.seed, &figures(first))];
    for w in 2..=cfg.repeat {
        check_stop(stop)?;
        server.flush(progress)?;
        let seed = window_seed(cfg.seed, w);
        progress.say(&format!(
            "window {w}/{} (seed {seed}, not traced)",
            cfg.repeat
        ));
        let r = driver::run_window(
            db,
            cfg,
            seed,
            stop,
            &cfg.results.join(format!("tpcc-seconds-{w}.jsonl")),
            progress,
        )?;
        windows.push(WindowFigures::of(w, seed, &figures(&r.report)));
        let repeats = RepeatFigures::of(windows.clone());
        progress.say(&format!(
            "window {w}: tpmC {:.0}; over {} windows {:.0} (95 % interval {:.0}-{:.0})",
            windows.last().map_or(0.0, |x| x.tpmc),
            repeats.tpmc.n,
            repeats.tpmc.mean,
            repeats.tpmc.low,
            repeats.tpmc.high
        ));
        doc.result.repeats = Some(repeats);
        doc.save()?;
    }
    Ok(())
}

/// Window `w`'s terminal seed: its own inputs, not window 1's again.
pub fn window_seed(seed: u64, w: u32) -> u64 {
    if w <= 1 {
        seed
    } else {
        seed ^ (0x7265_7065_6174_0000 | w as u64)
    }
}

/// checkpoint_timeout as flashlab passes it ("30s"), in seconds.
pub(crate) fn checkpoint_interval_s(text: &str) -> f64 {
    flashlab_pattern::units::parse_duration_ns(text).map_or(0.0, |ns| ns as f64 / 1e9)
}

fn too_small(what: &str, have: u64, needed: u64, cfg: &OltpConfig, flag: &str) -> OltpError {
    OltpError::Input(InputError::TooSmall {
        what: what.to_string(),
        have_bytes: have,
        needed_bytes: needed,
        warehouses: cfg.warehouses,
        max_wal_size: cfg.pg.max_wal_size.clone(),
        flag: flag.to_string(),
    })
}

/// How long a Ctrl-C may wait for the current stage.
pub const STOP_GRACE: Duration = Duration::from_secs(60);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn postgres_sizes_read_as_postgres_does() {
        assert_eq!(pg_size_bytes("1GB"), Some(1 << 30));
        assert_eq!(pg_size_bytes("512MB"), Some(512 << 20));
        assert_eq!(pg_size_bytes("64kB"), Some(64 << 10));
        assert_eq!(pg_size_bytes("16"), Some(16 * 8192));
        assert_eq!(pg_size_bytes("1 GiB"), None);
    }

    #[test]
    fn the_space_needed_grows_with_warehouses_and_wal() {
        assert!(bytes_needed(2, 1 << 30) > bytes_needed(1, 1 << 30));
        assert_eq!(
            bytes_needed(2, 1 << 30) - bytes_needed(1, 1 << 30),
            BYTES_PER_WAREHOUSE
        );
    }
}
