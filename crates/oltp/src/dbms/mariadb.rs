//! MariaDB with InnoDB (Debian's `mariadb-server`), Wang et al.'s
//! open-source DBMS ("MySQL", InnoDB, "Synchronous IO: Yes", Table 4).
//!
//! Started like the PostgreSQL cluster: `mariadb-install-db` makes a data
//! directory inside the file system under test, `mariadbd` runs as the
//! `mysql` user (it drops root itself) in its own process group, with no
//! TCP (`--skip-networking`), a private socket, and `--no-defaults` (no
//! /etc/mysql file changes what is measured). The marker file of
//! `crate::postgres::MARKER` says flashlab made the directory.
//!
//! The InnoDB settings that decide the IO, and why (docs/tpcc.md):
//! - `innodb_flush_method=O_DIRECT`: data files bypass the page cache, so
//!   every logical data write is a physical one (the paper's synchronous
//!   IO); the redo log still goes through the page cache and is made
//!   durable by fdatasync;
//! - `innodb_use_native_aio=0`: InnoDB's page writes and reads are then
//!   pwrite/pread system calls in its IO threads, which the logical tracer
//!   sees; with native AIO (io_submit, io_uring) they would bypass it;
//! - `innodb_doublewrite=1` (the default): each flushed page is written
//!   twice, once to the doublewrite buffer, as MySQL did by default;
//! - `innodb_flush_log_at_trx_commit=1`: the redo log is written and
//!   flushed at every commit (PostgreSQL's synchronous_commit=on);
//! - `innodb_buffer_pool_size` = `--shared-buffers` (128 MiB by default,
//!   MariaDB's own default too): the DBMS buffer the paper's Fig 11 varies,
//!   the same size for both DBMSs;
//! - `innodb_log_file_size=64M`: small enough that the checkpoint age
//!   drives steady page flushing within a minute-long window at one
//!   warehouse, as a long run would;
//! - `innodb_page_size=16k` (the default, said explicitly: it must be the
//!   same at install and start).

use std::cell::RefCell;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::rc::Rc;
use std::time::{Duration, Instant};

use mysql::prelude::Queryable;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::{Dbms, DbmsKind};
use crate::driver::Target;
use crate::error::{Failure, InputError, OltpError, Result};
use crate::postgres::MARKER;
use crate::proc;
use crate::teardown::{Teardown, UndoError};
use crate::Progress;

const MARIADBD: &str = "/usr/sbin/mariadbd";
const INSTALL_DB: &str = "/usr/bin/mariadb-install-db";
/// The database the TPC-C tables live in.
pub const DATABASE: &str = "tpcc";

/// The InnoDB settings flashlab starts the server with (module docs say
/// why; the `--innodb-*` flags change them, and `oltp.json` records them).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct InnodbSettings {
    pub flush_method: String,
    /// Always off: native AIO would bypass the system-call tracer.
    pub use_native_aio: bool,
    pub doublewrite: bool,
    pub flush_log_at_trx_commit: u32,
    pub buffer_pool_size_bytes: u64,
    pub log_file_size_bytes: u64,
    pub page_size: String,
}

impl Default for InnodbSettings {
    fn default() -> InnodbSettings {
        InnodbSettings {
            flush_method: "O_DIRECT".into(),
            use_native_aio: false,
            doublewrite: true,
            flush_log_at_trx_commit: 1,
            buffer_pool_size_bytes: 128 << 20,
            log_file_size_bytes: 64 << 20,
            page_size: "16k".into(),
        }
    }
}

impl InnodbSettings {
    /// What `--innodb-flush-method` takes: MariaDB 10.11's names.
    pub const FLUSH_METHODS: [&'static str; 4] =
        ["fsync", "O_DSYNC", "O_DIRECT", "O_DIRECT_NO_FSYNC"];

    pub fn new(buffer_pool_size_bytes: u64) -> InnodbSettings {
        InnodbSettings {
            buffer_pool_size_bytes,
            ..InnodbSettings::default()
        }
    }

    fn args(&self) -> Vec<String> {
        vec![
            format!("--innodb-flush-method={}", self.flush_method),
            format!("--innodb-use-native-aio={}", self.use_native_aio as u8),
            format!("--innodb-doublewrite={}", self.doublewrite as u8),
            format!(
                "--innodb-flush-log-at-trx-commit={}",
                self.flush_log_at_trx_commit
            ),
            format!("--innodb-buffer-pool-size={}", self.buffer_pool_size_bytes),
            format!("--innodb-log-file-size={}", self.log_file_size_bytes),
            format!("--innodb-page-size={}", self.page_size),
        ]
    }
}

/// Both programs are there (the package installs them together).
pub fn check_installed() -> Result<()> {
    if proc::is_executable(Path::new(MARIADBD)) && proc::is_executable(Path::new(INSTALL_DB)) {
        Ok(())
    } else {
        Err(OltpError::Input(InputError::NoMariadb))
    }
}

pub struct StartSpec<'a> {
    pub datadir: &'a Path,
    pub socket_dir: &'a Path,
    pub log: &'a Path,
    pub settings: InnodbSettings,
    pub max_connections: u32,
    /// Remove the data directory at teardown (`--mount` runs).
    pub remove_at_teardown: bool,
}

pub struct Mariadb {
    pid: u32,
    datadir: PathBuf,
    socket: PathBuf,
    version: String,
    settings: InnodbSettings,
    /// The server's own values of the variables `settings` sets.
    applied: Vec<(String, String)>,
    before: Option<Status>,
}

/// The InnoDB counters of SHOW GLOBAL STATUS the window reports.
const COUNTERS: [&str; 10] = [
    "Innodb_data_written",
    "Innodb_data_writes",
    "Innodb_data_read",
    "Innodb_data_reads",
    "Innodb_data_fsyncs",
    "Innodb_os_log_written",
    "Innodb_log_writes",
    "Innodb_pages_written",
    "Innodb_dblwr_pages_written",
    "Innodb_buffer_pool_pages_flushed",
];

type Status = Vec<(String, u64)>;

fn failed(what: &str, e: mysql::Error) -> OltpError {
    OltpError::Failed(Failure::Mariadb {
        what: what.to_string(),
        message: e
            .to_string()
            .split_whitespace()
            .collect::<Vec<_>>()
            .join(" "),
    })
}

impl Mariadb {
    fn opts(&self) -> mysql::Opts {
        opts(&self.socket)
    }

    fn conn(&self, what: &str) -> Result<mysql::Conn> {
        mysql::Conn::new(self.opts()).map_err(|e| failed(what, e))
    }

    fn status(&self) -> Result<Status> {
        let mut c = self.conn("reading its status")?;
        let rows: Vec<(String, String)> = c
            .query("SHOW GLOBAL STATUS LIKE 'Innodb%'")
            .map_err(|e| failed("reading its status", e))?;
        Ok(COUNTERS
            .iter()
            .map(|k| {
                let v = rows
                    .iter()
                    .find(|(n, _)| n.eq_ignore_ascii_case(k))
                    .and_then(|(_, v)| v.parse().ok())
                    .unwrap_or(0);
                (k.to_string(), v)
            })
            .collect())
    }
}

fn opts(socket: &Path) -> mysql::Opts {
    mysql::OptsBuilder::new()
        .socket(Some(socket.display().to_string()))
        .user(Some("root"))
        .into()
}

pub fn version() -> String {
    Command::new(MARIADBD)
        .arg("--version")
        .output()
        .ok()
        .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_string())
        .unwrap_or_default()
}

/// Installs and starts the server; its stop (and the data directory's
/// removal, for `--mount`) goes on the teardown stack.
pub fn init_and_start(s: &StartSpec, teardown: &mut Teardown) -> Result<Mariadb> {
    check_installed()?;
    let (uid, gid) = proc::user_ids("mysql").ok_or(OltpError::Input(InputError::NoMysqlUser))?;
    crate::postgres::claim_data_dir(s.datadir)?;
    if s.remove_at_teardown {
        teardown.note(crate::stale::Record::Cluster {
            pgdata: s.datadir.to_path_buf(),
        });
        let d = s.datadir.to_path_buf();
        teardown.push(
            format!("remove the MariaDB data directory {}", s.datadir.display()),
            move || {
                if d.join(MARKER).exists() || !d.join("mysql").exists() {
                    std::fs::remove_dir_all(&d)
                        .map_err(|source| UndoError::Remove { path: d, source })
                } else {
                    Err(UndoError::MarkerLost { dir: d })
                }
            },
        );
    }
    std::fs::create_dir_all(s.datadir)
        .map_err(|e| OltpError::failed(format!("cannot create {}", s.datadir.display()), e))?;
    proc::chown(s.datadir, uid, gid)?;
    std::fs::create_dir_all(s.socket_dir)
        .map_err(|e| OltpError::failed(format!("cannot create {}", s.socket_dir.display()), e))?;
    proc::chown(s.socket_dir, uid, gid)?;
    let innodb = s.settings.args();
    let mut install = Command::new(INSTALL_DB);
    install
        .arg("--no-defaults")
        .arg("--user=mysql")
        .arg(format!("--datadir={}", s.datadir.display()))
        .args([
            "--auth-root-authentication-method=socket",
            "--skip-test-db",
            "--skip-name-resolve",
        ])
        .args(&innodb)
        .env("LC_ALL", "C")
        .current_dir("/");
    proc::run(&mut install, "mariadb-install-db")?;
    let marker = serde_json::json!({
        "created_by": format!("flashlab oltp {}", env!("CARGO_PKG_VERSION")),
        "pid": std::process::id(),
    });
    std::fs::write(
        s.datadir.join(MARKER),
        serde_json::to_vec_pretty(&marker).expect("serializes"),
    )
    .map_err(|e| OltpError::failed("cannot write the data directory's marker", e))?;
    // The server writes its log after dropping to the mysql user.
    std::fs::File::create(s.log)
        .map_err(|e| OltpError::failed(format!("cannot create {}", s.log.display()), e))?;
    proc::chown(s.log, uid, gid)?;
    let socket = s.socket_dir.join("mysqld.sock");
    let mut cmd = Command::new(MARIADBD);
    cmd.arg("--no-defaults")
        .arg("--user=mysql")
        .arg(format!("--datadir={}", s.datadir.display()))
        .arg(format!("--socket={}", socket.display()))
        .arg(format!(
            "--pid-file={}",
            s.socket_dir.join("mysqld.pid").display()
        ))
        .arg(format!("--log-error={}", s.log.display()))
        .arg("--skip-networking")
        .arg("--skip-name-resolve")
        // The loader sends its rows with LOAD DATA LOCAL INFILE.
        .arg("--local-infile=1")
        // No binary log: a DBMS with one server writes only data and redo.
        .arg("--skip-log-bin")
        .arg(format!("--max-connections={}", s.max_connections))
        .args(&innodb)
        .env("LC_ALL", "C")
        .current_dir("/")
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null());
    // Its own process group: Ctrl-C reaches flashlab, which stops the
    // server in order before it unmounts.
    std::os::unix::process::CommandExt::process_group(&mut cmd, 0);
    let child = cmd
        .spawn()
        .map_err(|e| OltpError::failed("cannot start mariadbd", e))?;
    let pid = child.id();
    // SIGTERM: mariadbd's normal shutdown.
    teardown.note(crate::stale::Record::Process {
        what: "MariaDB".into(),
        pid,
        start_ticks: crate::stale::start_ticks(pid).unwrap_or(0),
        signal: libc::SIGTERM,
    });
    let child = Rc::new(RefCell::new(child));
    {
        let child = child.clone();
        teardown.push(format!("stop MariaDB (pid {pid})"), move || {
            stop(&mut child.borrow_mut())
        });
    }
    let end = Instant::now() + Duration::from_secs(120);
    loop {
        if let Ok(Some(st)) = child.borrow_mut().try_wait() {
            return Err(OltpError::Failed(Failure::Exited {
                what: "mariadbd",
                status: st,
                last_line: proc::last_error_line(s.log),
            }));
        }
        if let Ok(mut c) = mysql::Conn::new(opts(&socket)) {
            if c.query_drop("SELECT 1").is_ok() {
                break;
            }
        }
        if Instant::now() > end {
            return Err(OltpError::Failed(Failure::NotReady {
                what: "MariaDB did not accept connections".into(),
                within_s: 120,
                last_log_line: Some(proc::last_error_line(s.log)),
            }));
        }
        std::thread::sleep(Duration::from_millis(200));
    }
    // What the server runs with, as it reports it: MariaDB rounds sizes
    // (the buffer pool to whole chunks) and may not take a setting as given.
    let applied = server_variables(&socket);
    Ok(Mariadb {
        pid,
        datadir: s.datadir.to_path_buf(),
        socket,
        version: version(),
        settings: s.settings.clone(),
        applied,
        before: None,
    })
}

/// The InnoDB variables that decide the IO, read back from the server
/// (name, value); empty if the server does not answer.
fn server_variables(socket: &Path) -> Vec<(String, String)> {
    let Ok(mut c) = mysql::Conn::new(opts(socket)) else {
        return Vec::new();
    };
    c.query(
        "SELECT LOWER(VARIABLE_NAME), VARIABLE_VALUE FROM information_schema.GLOBAL_VARIABLES \
         WHERE VARIABLE_NAME IN ('INNODB_FLUSH_METHOD', 'INNODB_USE_NATIVE_AIO', 'INNODB_DOUBLEWRITE', \
         'INNODB_FLUSH_LOG_AT_TRX_COMMIT', 'INNODB_BUFFER_POOL_SIZE', 'INNODB_LOG_FILE_SIZE', 'INNODB_PAGE_SIZE') \
         ORDER BY 1",
    )
    .unwrap_or_default()
}

/// SIGTERM (a normal shutdown: dirty pages flushed), SIGKILL after two minutes.
fn stop(child: &mut Child) -> std::result::Result<(), UndoError> {
    proc::stop_child(child, libc::SIGTERM, Duration::from_secs(120)).map(|_| ())
}

impl Dbms for Mariadb {
    fn kind(&self) -> DbmsKind {
        DbmsKind::Mariadb
    }

    fn pid(&self) -> u32 {
        self.pid
    }

    fn shutdown_signal(&self) -> libc::c_int {
        libc::SIGTERM
    }

    fn data_dir(&self) -> &Path {
        &self.datadir
    }

    fn target(&self) -> Target {
        Target::Mariadb {
            socket: self.socket.clone(),
            database: DATABASE.into(),
        }
    }

    fn section(&self) -> (&'static str, Value) {
        (
            "mariadb",
            serde_json::json!({"version": self.version, "datadir": self.datadir, "pid": self.pid, "innodb": self.settings,
                "server_variables": self.applied.iter().cloned().collect::<std::collections::BTreeMap<_, _>>()}),
        )
    }

    /// InnoDB has no CHECKPOINT statement: with innodb_max_dirty_pages_pct
    /// at 0 its page cleaner writes every dirty page; we wait until none is
    /// left (at most two minutes), then restore the setting.
    fn flush(&mut self, progress: &mut dyn Progress) -> Result<()> {
        progress
            .say("flushing InnoDB's dirty pages: the measured window starts from a flushed state");
        let mut c = self.conn("flushing dirty pages")?;
        let pct: Option<String> = c
            .query_first("SELECT @@GLOBAL.innodb_max_dirty_pages_pct")
            .map_err(|e| failed("flushing dirty pages", e))?;
        let pct = pct.unwrap_or_else(|| "90".into());
        c.query_drop("SET GLOBAL innodb_max_dirty_pages_pct = 0")
            .map_err(|e| failed("flushing dirty pages", e))?;
        let end = Instant::now() + Duration::from_secs(120);
        let mut dirty = u64::MAX;
        while Instant::now() < end {
            let row: Option<(String, String)> = c
                .query_first("SHOW GLOBAL STATUS LIKE 'Innodb_buffer_pool_pages_dirty'")
                .map_err(|e| failed("flushing dirty pages", e))?;
            dirty = row.and_then(|(_, v)| v.parse().ok()).unwrap_or(0);
            if dirty == 0 {
                break;
            }
            std::thread::sleep(Duration::from_millis(200));
        }
        c.query_drop(format!("SET GLOBAL innodb_max_dirty_pages_pct = {pct}"))
            .map_err(|e| failed("flushing dirty pages", e))?;
        if dirty != 0 {
            progress.say(&format!(
                "note: {dirty} dirty pages were left after two minutes of flushing"
            ));
        }
        Ok(())
    }

    fn window_start(&mut self) -> Result<()> {
        self.before = Some(self.status()?);
        Ok(())
    }

    /// InnoDB's counters against the trace, file kind by file kind:
    /// Innodb_data_written counts the data files' writes (tables, undo, the
    /// system tablespace with its doublewrite buffer), Innodb_os_log_written
    /// the redo log's payload; Innodb_data_fsyncs every fsync/fdatasync of
    /// either, Innodb_data_reads/_read the data files' reads.
    fn window_end(&mut self, trace: Option<&Value>) -> Option<(&'static str, Value, String)> {
        let before = self.before.take()?;
        let after = self.status().ok()?;
        let delta: serde_json::Map<String, Value> = before
            .iter()
            .zip(&after)
            .map(|((k, b), (_, a))| (k.clone(), Value::from(a.saturating_sub(*b))))
            .collect();
        let get = |k: &str| delta.get(k).and_then(Value::as_u64).unwrap_or(0);
        let traced = |p: &str| trace.and_then(|t| t.pointer(p)).and_then(Value::as_u64);
        let comparison = serde_json::json!([
            [
                "data files: bytes written",
                get("Innodb_data_written"),
                traced("/logical_detail/by_kind/data/write_bytes")
            ],
            [
                "data files: writes",
                get("Innodb_data_writes"),
                traced("/logical_detail/by_kind/data/writes")
            ],
            [
                "redo log: bytes written",
                get("Innodb_os_log_written"),
                traced("/logical_detail/by_kind/wal/write_bytes")
            ],
            [
                "redo log: writes",
                get("Innodb_log_writes"),
                traced("/logical_detail/by_kind/wal/writes")
            ],
            [
                "fsyncs",
                get("Innodb_data_fsyncs"),
                traced("/logical/flushes")
            ],
            ["reads", get("Innodb_data_reads"), traced("/logical/reads")],
            [
                "bytes read",
                get("Innodb_data_read"),
                traced("/logical/read_bytes")
            ],
        ]);
        let mb = |v: Option<u64>| v.map_or("-".into(), |b| format!("{:.1}", b as f64 / 1e6));
        let line = format!(
            "InnoDB vs logical trace in the window: data files {} vs {} MB written, redo log {} vs {} MB, fsyncs {} vs {}",
            mb(Some(get("Innodb_data_written"))),
            mb(traced("/logical_detail/by_kind/data/write_bytes")),
            mb(Some(get("Innodb_os_log_written"))),
            mb(traced("/logical_detail/by_kind/wal/write_bytes")),
            get("Innodb_data_fsyncs"),
            traced("/logical/flushes").map_or("-".into(), |n| n.to_string()),
        );
        Some((
            "innodb",
            serde_json::json!({
                "delta": delta,
                "counter_vs_trace": comparison,
            }),
            line,
        ))
    }
}
