//! `flashlab oltp`: glue only. Flags into `flashlab_oltp::OltpConfig`, Ctrl-C
//! into its stop flag (a second Ctrl-C does not abandon the teardown), its
//! typed errors into one line and an exit code, and the summary printed
//! (docs/oltp.md).

use std::path::PathBuf;

use clap::Args;
use flashlab_oltp::dbms::mariadb::InnodbSettings;
use flashlab_oltp::{dbms::DbmsKind, fs::FsKind, postgres::PgSettings, OltpConfig, OltpError};
use flashlab_pattern::units::{parse_duration_ns, parse_size};
use flashlab_results::oltp::OltpResult;

use crate::error::{CliError, CliResult};
use crate::signals;

#[derive(Args, Debug)]
pub struct OltpArgs {
    /// The device: a file (a loop device over it), a block device (mkfs: the
    /// write-safety check applies), or sim:PROFILE (flashlab serve + nbdfuse + loop).
    #[arg(long, short = 'd', value_name = "DEVICE")]
    pub device: Option<String>,

    /// Run on an existing file system mounted at DIR instead (no mkfs).
    #[arg(long, value_name = "DIR")]
    pub mount: Option<PathBuf>,

    /// Create the file DEVICE with this size; for sim:, the simulated capacity
    /// [default for sim: 1.5x what the warehouses need, at least 2GiB].
    #[arg(long, value_name = "SIZE")]
    pub size: Option<String>,

    /// Allow making a file system on this device or existing file although it holds data.
    #[arg(long, value_name = "DEVICE")]
    pub allow_write_to: Option<PathBuf>,

    /// File system: ext2, ext4, xfs or btrfs (btrfs stands in for the paper's nilfs2).
    #[arg(long, value_name = "FS", default_value = "ext4")]
    pub fs: String,

    /// Block scheduler while the run lasts (e.g. none, mq-deadline, bfq), restored afterwards.
    #[arg(long, value_name = "NAME")]
    pub scheduler: Option<String>,

    /// The DBMS under test: postgres (PostgreSQL) or mariadb (MariaDB with
    /// InnoDB, Wang et al.'s "MySQL"; its buffer pool is --shared-buffers).
    #[arg(long, value_name = "DBMS", default_value = "postgres")]
    pub dbms: String,

    /// PostgreSQL's server binaries [default: the newest /usr/lib/postgresql/N/bin].
    #[arg(long, value_name = "DIR")]
    pub pg_bin: Option<PathBuf>,

    /// PostgreSQL shared_buffers (the DBMS buffer; the paper's Table 4 varies
    /// it), passed to PostgreSQL as given: PostgreSQL's units, kB, MB, GB
    /// and TB in powers of 1024.
    #[arg(long, value_name = "SIZE", default_value = "128MB")]
    pub shared_buffers: String,
    /// PostgreSQL wal_buffers, in PostgreSQL's units (kB, MB, GB: powers of 1024).
    #[arg(long, value_name = "SIZE", default_value = "4MB")]
    pub wal_buffers: String,
    /// Time between PostgreSQL's checkpoints (its checkpoint_timeout, 30s
    /// to 86400s): the default puts a whole checkpoint inside the default
    /// 60 s window, which starts right after a CHECKPOINT.
    #[arg(
        long,
        visible_alias = "checkpoint-timeout",
        value_name = "DURATION",
        default_value = "30s"
    )]
    pub checkpoint_interval: String,
    /// PostgreSQL max_wal_size, in PostgreSQL's units (kB, MB, GB, TB: powers of 1024).
    #[arg(long, value_name = "SIZE", default_value = "1GB")]
    pub max_wal_size: String,
    /// PostgreSQL synchronous_commit (on: the log is flushed at commit, as in the paper).
    #[arg(long, value_name = "on|off", default_value = "on")]
    pub synchronous_commit: String,
    /// PostgreSQL full_page_writes.
    #[arg(long, value_name = "on|off", default_value = "on")]
    pub full_page_writes: String,
    /// PostgreSQL wal_sync_method: fdatasync, fsync, open_datasync or
    /// open_sync (the WAL written with O_DSYNC/O_SYNC, each write synchronous).
    #[arg(long, value_name = "METHOD", default_value = "fdatasync")]
    pub wal_sync_method: String,

    /// MariaDB: InnoDB's buffer pool (flashlab sizes, e.g. 64MiB) [default: --shared-buffers].
    #[arg(long, value_name = "SIZE")]
    pub innodb_buffer_pool_size: Option<String>,
    /// MariaDB: innodb_flush_method, one of fsync, O_DSYNC, O_DIRECT,
    /// O_DIRECT_NO_FSYNC [default: O_DIRECT, the paper's synchronous IO].
    #[arg(long, value_name = "METHOD")]
    pub innodb_flush_method: Option<String>,
    /// MariaDB: innodb_doublewrite, on or off [default: on].
    #[arg(long, value_name = "on|off")]
    pub innodb_doublewrite: Option<String>,
    /// MariaDB: innodb_log_file_size, the redo log (e.g. 64MiB) [default: 64MiB].
    #[arg(long, value_name = "SIZE")]
    pub innodb_log_file_size: Option<String>,
    /// MariaDB: innodb_flush_log_at_trx_commit, 0, 1 or 2 [default: 1, the
    /// log flushed at every commit].
    #[arg(long, value_name = "0|1|2")]
    pub innodb_flush_log_at_trx_commit: Option<u32>,

    /// TPC-C scale: warehouses (about 120 MiB each).
    #[arg(long, short = 'w', value_name = "N", default_value_t = 1)]
    pub warehouses: u32,
    /// Connections loading the database.
    #[arg(long, value_name = "N", default_value_t = 2)]
    pub load_workers: u32,
    /// Terminals: one connection each.
    #[arg(long, short = 't', value_name = "N", default_value_t = 8)]
    pub terminals: u32,
    /// Measured time.
    #[arg(long, value_name = "DURATION", default_value = "60s")]
    pub duration: String,
    /// Warm-up before the measured time (TPC-C runs, not traced nor counted;
    /// then a CHECKPOINT starts the window).
    #[arg(long, value_name = "DURATION", default_value = "5s")]
    pub ramp_up: String,
    /// Keying and think times of the TPC-C specification (default: none, as in the paper).
    #[arg(long)]
    pub keying_and_think: bool,
    /// Transaction mix: standard (TPC-C's), or Wang et al.'s Table 3
    /// variations read-intensive (Stock-Level and Order-Status 43.48 %
    /// each) and write-intensive (New-Order 96 %), for Fig. 12.
    #[arg(long, value_name = "MIX")]
    pub mix: Option<String>,
    /// Seed of the loader and the terminals.
    #[arg(long, default_value_t = 42)]
    pub seed: u64,
    /// Run the measured window N times on the same loaded database, each
    /// after a checkpoint; tpmC, transactions/s and New-Order's p90 then come
    /// with a 95 % interval. Window 1 is the traced one (trace, WAF, endurance).
    #[arg(long, value_name = "N", default_value_t = 1)]
    pub repeat: u32,
    /// Target-rate mode: the terminals together offer TPM transactions (all
    /// five types; tpmC is about 45 % of them) per minute, evenly spaced, as
    /// BenchBase's rate does; late starts are counted. Default: flat out,
    /// as in the paper.
    #[arg(long, value_name = "TPM")]
    pub rate: Option<u32>,

    /// sim: reply at once instead of after each request's simulated latency
    /// (PostgreSQL then runs at the host's speed, not the simulated SSD's).
    #[arg(long)]
    pub no_pace: bool,

    /// Do not trace logical and physical IO.
    #[arg(long)]
    pub no_trace: bool,
    /// Interval of the logical/physical IO series (Figs 7-9).
    #[arg(long, value_name = "DURATION", default_value = "1s")]
    pub interval: String,
    /// Rated lifetime writes for the endurance estimate (e.g. 2PB) [default: the profile's].
    #[arg(long, value_name = "SIZE")]
    pub rated_lifetime_writes: Option<String>,

    /// Set everything up, check that PostgreSQL answers, tear down (no load, no run).
    #[arg(long)]
    pub setup_only: bool,

    /// Only undo what killed `flashlab oltp` runs left behind (PostgreSQL,
    /// serve, nbdfuse, mounts, loop devices, /var/tmp/flashlab-oltp/PID),
    /// saying what was removed. Every run does this first, too.
    #[arg(long)]
    pub cleanup: bool,

    /// Results directory to create [default: results/DATE-TIME-oltp].
    #[arg(long, short = 'o', value_name = "DIR")]
    pub results: Option<PathBuf>,
    /// Print oltp.json on stdout instead of the summary.
    #[arg(long)]
    pub json: bool,
    /// No progress lines.
    #[arg(long, short)]
    pub quiet: bool,
}

/// A results-directory manifest (with no runs) beside oltp.json, so that
/// `flashlab report DIR` reads the directory like any other and adds the
/// OLTP section. Written after the run, and only if the run wrote oltp.json:
/// a refused command leaves no directory.
pub fn write_manifest(cfg: &OltpConfig) {
    use flashlab_device::{ClockKind, DeviceInfo, DeviceKind};
    let Ok(doc) = OltpResult::read(&cfg.results) else {
        return;
    };
    let (name, kind) = match (&cfg.device, &cfg.mount) {
        (Some(d), _) if d.starts_with("sim:") => (d.clone(), DeviceKind::Simulated),
        (Some(d), _) if d.starts_with("/dev/") => (d.clone(), DeviceKind::BlockDevice),
        (Some(d), _) => (d.clone(), DeviceKind::File),
        (None, Some(m)) => (format!("mount:{}", m.display()), DeviceKind::File),
        (None, None) => ("?".into(), DeviceKind::File),
    };
    let mut identity = std::collections::BTreeMap::new();
    identity.insert(
        "workload".to_string(),
        format!("flashlab oltp (TPC-C on {})", doc.dbms_name()),
    );
    identity.insert("fs".to_string(), cfg.fs.name().to_string());
    if let Some(b) = doc.device.as_ref().and_then(|d| d.block_dev.clone()) {
        identity.insert("block_device".to_string(), b);
    }
    if let Some(p) = cfg.device.as_deref().and_then(|d| d.strip_prefix("sim:")) {
        identity.insert("profile".to_string(), p.to_string());
    }
    let manifest = flashlab_results::dir::Manifest {
        schema_version: flashlab_results::SCHEMA_VERSION,
        tool: crate::target::tool_info(),
        created_unix_s: Some(doc.started_unix_s)
            .filter(|s| *s > 0)
            .unwrap_or_else(flashlab_results::time::now_unix_s),
        command_line: std::env::args().collect(),
        host: crate::target::host_info(),
        device: DeviceInfo {
            name,
            kind,
            clock: ClockKind::Wall,
            size_bytes: doc.device.as_ref().map_or(0, |d| d.size_bytes),
            logical_block_bytes: 512,
            identity,
        },
        engine: if doc.config.dbms == "mariadb" {
            "mariadb".into()
        } else {
            "postgresql".into()
        },
        suite: None,
        runs: Vec::new(),
    };
    if let Err(e) =
        flashlab_results::dir::write_json_atomic(&cfg.results.join("manifest.json"), &manifest)
    {
        eprintln!(
            "warning: cannot write {}: {e}",
            cfg.results.join("manifest.json").display()
        );
    }
}

fn secs(flag: &str, text: &str) -> CliResult<f64> {
    let ns = parse_duration_ns(text).map_err(|e| CliError::user(format!("--{flag}: {e}")))?;
    Ok(ns as f64 / 1e9)
}

/// The shared size parser: `2PB` is decimal petabytes, as vendors rate.
fn rated_bytes(text: &str) -> CliResult<u64> {
    match parse_size(text) {
        Ok(b) if b > 0 => Ok(b),
        Ok(_) => Err(CliError::user(
            "--rated-lifetime-writes must be more than 0 bytes, e.g. 2PB",
        )),
        Err(e) => Err(CliError::user(format!(
            "--rated-lifetime-writes: {e} (e.g. 2PB)"
        ))),
    }
}

/// `--checkpoint-interval` as PostgreSQL's checkpoint_timeout, in whole
/// seconds inside the range PostgreSQL accepts.
fn checkpoint_interval(text: &str) -> CliResult<String> {
    let s = secs("checkpoint-interval", text)?;
    if !(30.0..=86400.0).contains(&s) || s.fract() != 0.0 {
        return Err(CliError::user(format!(
            "--checkpoint-interval {text}: PostgreSQL's checkpoint_timeout takes whole seconds from 30s to 86400s; e.g. 30s"
        )));
    }
    Ok(format!("{}s", s as u64))
}

/// The `--innodb-*` flags over the defaults; refused with --dbms postgres
/// (they would be recorded but change nothing).
fn innodb(a: &OltpArgs, dbms: DbmsKind) -> CliResult<InnodbSettings> {
    let given = [
        (
            "innodb-buffer-pool-size",
            a.innodb_buffer_pool_size.is_some(),
        ),
        ("innodb-flush-method", a.innodb_flush_method.is_some()),
        ("innodb-doublewrite", a.innodb_doublewrite.is_some()),
        ("innodb-log-file-size", a.innodb_log_file_size.is_some()),
        (
            "innodb-flush-log-at-trx-commit",
            a.innodb_flush_log_at_trx_commit.is_some(),
        ),
    ];
    if let (DbmsKind::Postgres, Some((flag, _))) = (dbms, given.iter().find(|(_, g)| *g)) {
        return Err(CliError::user(format!(
            "--{flag} is an InnoDB setting: add --dbms mariadb, or leave it out for PostgreSQL"
        )));
    }
    let mut s =
        InnodbSettings::new(flashlab_oltp::pg_size_bytes(&a.shared_buffers).unwrap_or(128 << 20));
    let size = |flag: &str, text: &str, min_bytes: u64| -> CliResult<u64> {
        match parse_size(text) {
            Ok(b) if b >= min_bytes => Ok(b),
            Ok(_) => Err(CliError::user(format!(
                "--{flag} {text}: at least {} MiB, e.g. 64MiB",
                min_bytes >> 20
            ))),
            Err(e) => Err(CliError::user(format!("--{flag}: {e} (e.g. 64MiB)"))),
        }
    };
    // MariaDB's minimums (10.11): 2 MiB of buffer pool, 1 MiB of redo log.
    if let Some(t) = &a.innodb_buffer_pool_size {
        s.buffer_pool_size_bytes = size("innodb-buffer-pool-size", t, 2 << 20)?;
    }
    if let Some(t) = &a.innodb_log_file_size {
        s.log_file_size_bytes = size("innodb-log-file-size", t, 1 << 20)?;
    }
    if let Some(m) = &a.innodb_flush_method {
        let Some(known) = InnodbSettings::FLUSH_METHODS
            .iter()
            .find(|k| k.eq_ignore_ascii_case(m))
        else {
            return Err(CliError::user(format!(
                "--innodb-flush-method {m}: unknown; use one of {}",
                InnodbSettings::FLUSH_METHODS.join(", ")
            )));
        };
        s.flush_method = known.to_string();
    }
    if let Some(d) = &a.innodb_doublewrite {
        s.doublewrite = match d.as_str() {
            "on" => true,
            "off" => false,
            _ => {
                return Err(CliError::user(format!(
                    "--innodb-doublewrite {d}: use on or off"
                )))
            }
        };
    }
    if let Some(n) = a.innodb_flush_log_at_trx_commit {
        if n > 2 {
            return Err(CliError::user(format!(
                "--innodb-flush-log-at-trx-commit {n}: use 0, 1 or 2"
            )));
        }
        s.flush_log_at_trx_commit = n;
    }
    Ok(s)
}

/// `--dbms NAME`, checked here, not by clap, so the one error line names
/// the choices, and the nearest one when the name is a slip
/// ("did you mean"), as for unknown pattern keys.
pub fn parse_dbms(name: &str) -> CliResult<DbmsKind> {
    match DbmsKind::parse(name) {
        Some(k) => Ok(k),
        None => {
            let hint = DbmsKind::NAMES
                .iter()
                .map(|n| (strsim::osa_distance(&name.to_ascii_lowercase(), n), n))
                .filter(|(d, _)| *d <= 3)
                .min()
                .map(|(_, n)| format!(" (did you mean {n}?)"))
                .unwrap_or_default();
            Err(CliError::user(format!(
                "--dbms {name}: unknown DBMS{hint}; use {}",
                DbmsKind::NAMES.join(" or ")
            )))
        }
    }
}

fn config(a: &OltpArgs) -> CliResult<OltpConfig> {
    let results = a.results.clone().unwrap_or_else(|| {
        PathBuf::from(format!(
            "results/{}-oltp",
            flashlab_results::time::compact_utc(flashlab_results::time::now_unix_s())
        ))
    });
    let size_bytes = match &a.size {
        Some(s) => Some(parse_size(s).map_err(|e| CliError::user(format!("--size: {e}")))?),
        None => None,
    };
    let fs = FsKind::parse(&a.fs).map_err(|e| CliError::user(e.to_string()))?;
    let interval_s = secs("interval", &a.interval)?;
    if interval_s <= 0.0 {
        return Err(CliError::user("--interval must be positive, e.g. 1s"));
    }
    let duration_s = secs("duration", &a.duration)?;
    if duration_s <= 0.0 && !a.setup_only {
        return Err(CliError::user("--duration must be positive, e.g. 60s"));
    }
    for (flag, v) in [
        ("synchronous-commit", &a.synchronous_commit),
        ("full-page-writes", &a.full_page_writes),
    ] {
        if !["on", "off", "local", "remote_write", "remote_apply"].contains(&v.as_str())
            || (flag == "full-page-writes" && !["on", "off"].contains(&v.as_str()))
        {
            return Err(CliError::user(format!("--{flag} {v}: use on or off")));
        }
    }
    if let Some(m) = &a.mix {
        if !flashlab_oltp::MIXES.contains(&m.as_str()) {
            return Err(CliError::user(
                flashlab_oltp::InputError::BadMix { given: m.clone() }.to_string(),
            ));
        }
    }
    let dbms = parse_dbms(&a.dbms)?;
    if a.repeat == 0 {
        return Err(CliError::user(
            "--repeat 0: give at least 1 measured window, e.g. --repeat 5",
        ));
    }
    match a.rate {
        Some(0) => {
            return Err(CliError::user(
                "--rate 0: give the offered load in transactions per minute, e.g. --rate 6000, or leave it out to run flat out",
            ))
        }
        Some(_) if a.keying_and_think => {
            return Err(CliError::user(
                "--rate and --keying-and-think both pace the terminals: use one of them",
            ))
        }
        _ => {}
    }
    if !flashlab_oltp::postgres::WAL_SYNC_METHODS.contains(&a.wal_sync_method.as_str()) {
        return Err(CliError::user(format!(
            "--wal-sync-method {}: use one of {}",
            a.wal_sync_method,
            flashlab_oltp::postgres::WAL_SYNC_METHODS.join(", ")
        )));
    }
    Ok(OltpConfig {
        device: a.device.clone(),
        mount: a.mount.clone(),
        size_bytes,
        allow_write_to: a.allow_write_to.clone(),
        fs,
        scheduler: a.scheduler.clone(),
        // Checked here, not by clap, so the one error line names the choices.
        dbms,
        innodb: innodb(a, dbms)?,
        pg_bin: a.pg_bin.clone(),
        pg: PgSettings {
            shared_buffers: a.shared_buffers.clone(),
            wal_buffers: a.wal_buffers.clone(),
            checkpoint_timeout: checkpoint_interval(&a.checkpoint_interval)?,
            max_wal_size: a.max_wal_size.clone(),
            synchronous_commit: a.synchronous_commit.clone(),
            full_page_writes: a.full_page_writes.clone(),
            wal_sync_method: a.wal_sync_method.clone(),
        },
        warehouses: a.warehouses,
        load_workers: a.load_workers.max(1),
        terminals: a.terminals,
        ramp_up_s: secs("ramp-up", &a.ramp_up)?,
        duration_s,
        keying_and_think: a.keying_and_think,
        seed: a.seed,
        repeat: a.repeat,
        rate_per_min: a.rate,
        mix: a.mix.clone(),
        trace: !a.no_trace,
        pace: !a.no_pace,
        rated_lifetime_writes_bytes: match &a.rated_lifetime_writes {
            Some(t) => Some(rated_bytes(t)?),
            None => None,
        },
        interval_s,
        setup_only: a.setup_only,
        results,
        exe: std::env::current_exe()
            .map_err(|e| CliError::failure(format!("cannot find the flashlab executable: {e}")))?,
    })
}

pub fn oltp(args: OltpArgs) -> CliResult<()> {
    if args.cleanup {
        let done =
            flashlab_oltp::cleanup_killed_runs().map_err(|e| CliError::user(e.to_string()))?;
        if done.is_empty() {
            println!("nothing left by killed runs");
        }
        for line in done {
            println!("{line}");
        }
        return Ok(());
    }
    let cfg = config(&args)?;
    signals::PATIENT.store(true, std::sync::atomic::Ordering::SeqCst);
    signals::install();
    let quiet = args.quiet || args.json;
    let mut progress = |line: &str| {
        if !quiet {
            eprintln!("oltp: {line}");
        }
    };
    // Only a directory this run creates (or finds empty) gets a manifest:
    // one refused early (a bad flag, not root) may hold an earlier run's
    // oltp.json, and its manifest.json must stay as it is.
    let fresh =
        std::fs::read_dir(&cfg.results).map_or(!cfg.results.exists(), |mut d| d.next().is_none());
    let outcome = flashlab_oltp::run(&cfg, &signals::STOP, &mut progress);
    if fresh {
        write_manifest(&cfg);
    }
    let outcome = outcome.map_err(|e| match e {
        OltpError::Interrupted => CliError {
            message: format!(
                "interrupted; everything set up was torn down; partial results in {}",
                cfg.results.display()
            ),
            exit_code: 130,
        },
        e if e.is_user() => CliError::user(e.to_string()),
        e => CliError::failure(format!("{e} (results so far in {})", cfg.results.display())),
    })?;
    if !outcome.leftovers.is_empty() {
        return Err(CliError::failure(format!(
            "teardown left something behind: {}",
            outcome.leftovers.join("; ")
        )));
    }
    if args.json {
        println!(
            "{}",
            serde_json::to_string_pretty(&outcome.result).expect("serializes")
        );
    } else {
        print!("{}", summary_text(&outcome.result));
        println!("results: {}", cfg.results.display());
    }
    Ok(())
}

/// Vendors rate lifetime writes in powers of ten (2 PB).
fn decimal_bytes(b: f64) -> String {
    for (unit, m) in [("PB", 1e15), ("TB", 1e12), ("GB", 1e9), ("MB", 1e6)] {
        if b >= m {
            return format!("{:.2} {unit}", b / m);
        }
    }
    format!("{b:.0} B")
}

/// The printed summary: tpmC, logical vs physical IO, WAF, endurance.
/// Long: one paragraph per part of the result (tpmC, repeats, mix, IO by layer, WAF, endurance,
/// serve), in the order printed.
pub fn summary_text(r: &OltpResult) -> String {
    let mut out = String::new();
    let mb = |b: f64| b / 1e6;
    let Some(tpcc) = &r.tpcc else {
        return out;
    };
    out += &format!("tpmC: {:.0}\n", tpcc.tpmc);
    if let Some(rate) = tpcc.rate_per_min {
        out += &format!(
            "offered load: {rate} transactions/min ({:.1}/s), achieved {:.1}/s, {} started late\n",
            rate as f64 / 60.0,
            tpcc.transactions_per_s,
            tpcc.late_starts
        );
    }
    if let Some(rep) = &r.repeats {
        let per: Vec<String> = rep
            .windows
            .iter()
            .map(|w| format!("{:.0}", w.tpmc))
            .collect();
        out += &format!(
            "over {} windows: tpmC {:.0} (95 % interval {:.0}-{:.0}, +-{:.1} %; windows {}), transactions/s {:.1} ({:.1}-{:.1}), New-Order p90 {:.0} us ({:.0}-{:.0}); window 1 alone is traced\n",
            rep.tpmc.n,
            rep.tpmc.mean,
            rep.tpmc.low,
            rep.tpmc.high,
            rep.tpmc.relative_half_width() * 100.0,
            per.join(", "),
            rep.transactions_per_s.mean,
            rep.transactions_per_s.low,
            rep.transactions_per_s.high,
            rep.new_order_p90_us.mean,
            rep.new_order_p90_us.low,
            rep.new_order_p90_us.high,
        );
    }
    if !tpcc.mix.verdict.is_empty() {
        let shares: Vec<String> = tpcc
            .mix
            .types
            .iter()
            .map(|t| format!("{} {:.2} %", t.name, t.percent))
            .collect();
        out += &format!(
            "TPC-C mix: {} (clause 9.2.2.5 audit: {})\n",
            shares.join(", "),
            tpcc.mix.verdict
        );
    }
    if let Some(k) = &r.tpcc_consistency {
        let broken: Vec<String> = k
            .conditions
            .iter()
            .filter(|c| c.violations > 0)
            .map(|c| {
                format!(
                    "condition {} ({}): {} violations",
                    c.number, c.description, c.violations
                )
            })
            .collect();
        if k.ok {
            out += &format!(
                "TPC-C consistency (clause 3.3.2, read from the database): conditions 1-{} hold\n",
                k.conditions.len()
            );
        } else {
            out += &format!(
                "TPC-C consistency (clause 3.3.2, read from the database): {}\n",
                broken.join("; ")
            );
        }
    }
    for (name, physical) in [("logical (file system)", false), ("physical (block)", true)] {
        if let (Some(rb), Some(wb)) = (r.read_bytes_per_s(physical), r.write_bytes_per_s(physical))
        {
            out += &format!(
                "{name:<22} read {:8.2} MB/s ({:.0} IO/s)   write {:8.2} MB/s ({:.0} IO/s)\n",
                mb(rb),
                r.reads_per_s(physical).unwrap_or(0.0),
                mb(wb),
                r.writes_per_s(physical).unwrap_or(0.0),
            );
        }
    }
    if let Some(w) = r.fs_write_amplification {
        out += &format!(
            "file-system write amplification (physical / logical bytes written): {w:.2}\n"
        );
    }
    if let Some(s) = &r.serve {
        if let Some(w) = s.run.ftl_write_amplification {
            out += &format!(
                "simulated SSD: FTL write amplification {w:.2}, {:.0} erases during the run\n",
                s.run.erases.unwrap_or(0.0)
            );
        }
    }
    let n = |v: Option<u64>| v.map_or("-".to_string(), |v| v.to_string());
    if let Some(c) = r.trace_consistency.as_ref().filter(|c| c.checked) {
        out += &format!(
            "physical trace vs /sys/block stat: written {} (completed {}) vs {} bytes, read {} vs {} bytes{}\n",
            n(c.trace_write_bytes),
            n(c.completed_write_bytes),
            n(c.stat_write_bytes),
            n(c.trace_read_bytes),
            n(c.stat_read_bytes),
            match c.other_requests {
                Some(o) if o > 0 => format!("; {o} write-zeroes requests are not in the trace file"),
                _ => String::new(),
            }
        );
        if let Some(u) = c.logical_unattributed_ios {
            out += &format!(
                "logical trace: {u} requests not attributable to a file (0 is the goal), {} fsyncs named by their inode\n",
                c.logical_syncs_by_inode.unwrap_or(0)
            );
        }
    }
    if let Some(c) = &r.checkpoints {
        out += &format!(
            "checkpoints in the window: {} started, {} completed, {:.1} MB written by them (interval {} s)\n",
            c.started,
            c.completed,
            c.bytes_written as f64 / 1e6,
            c.interval_s
        );
    }
    // InnoDB's own counters beside the logical trace of the same window.
    if let Some(i) = r.innodb.as_ref().filter(|i| !i.counter_vs_trace.is_empty()) {
        let rows: Vec<String> = i
            .counter_vs_trace
            .iter()
            .map(|(what, innodb, trace)| format!(" {what} {innodb} vs {trace}"))
            .collect();
        out += &format!(
            "InnoDB's counters vs the logical trace:{}\n",
            rows.join(";")
        );
    }
    let e = r.endurance.clone().unwrap_or_default();
    let rate = e.physical_write_bytes_per_s;
    out += &format!("physical write rate: {:.2} MB/s\n", rate / 1e6);
    match (e.years_from_rated_writes, e.rated_lifetime_writes_bytes) {
        (Some(y), Some(b)) => out += &format!("endurance (Wang et al. Table 6): {} rated lifetime writes / {:.2} MB/s = {y:.2} years\n", decimal_bytes(b as f64), rate / 1e6),
        _ => out += "endurance from rated lifetime writes: no rating (pass --rated-lifetime-writes, e.g. 2PB)\n",
    }
    if e.erases_per_s == Some(0.0) {
        out += "endurance from erase counts: no flash block was erased during the run (the simulated device is not full yet); a longer run or a smaller --size gives one\n";
    }
    if let Some(y) = e.years_from_erase_counts {
        out += &format!(
            "endurance from erase counts: {y:.2} years at {} P/E cycles ({:.2} years at the rated capacity)\n",
            e.rated_pe_cycles.unwrap_or(0),
            e.years_from_erase_counts_at_rated_capacity.unwrap_or(f64::NAN)
        );
    }
    out
}
