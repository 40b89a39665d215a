//! PostgreSQL from the Debian package: a cluster initialised by flashlab
//! inside the file system under test, started as a child process of
//! flashlab as the unprivileged `postgres` user (PostgreSQL refuses root),
//! with no TCP listener (`listen_addresses=''`) and a private unix socket
//! directory. A marker file in the data directory records that flashlab
//! created the cluster: flashlab only ever stops or removes a cluster that
//! carries it, never another one.

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use serde::{Deserialize, Serialize};

use crate::error::{Failure, InputError, OltpError, Result};
use crate::proc;
use crate::teardown::{Teardown, UndoError};

/// The marker file's name inside a cluster flashlab created.
pub const MARKER: &str = "flashlab-oltp-cluster.json";

/// The server settings given as flags (the paper varies the buffer size, Table 4).
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct PgSettings {
    pub shared_buffers: String,
    pub wal_buffers: String,
    pub checkpoint_timeout: String,
    pub max_wal_size: String,
    pub synchronous_commit: String,
    pub full_page_writes: String,
    /// How the WAL is made durable (PostgreSQL's wal_sync_method); records
    /// from before the flag had PostgreSQL's Linux default.
    #[serde(default = "default_wal_sync_method")]
    pub wal_sync_method: String,
}

fn default_wal_sync_method() -> String {
    "fdatasync".into()
}

/// What `--wal-sync-method` takes on Linux (fsync_writethrough is
/// Windows' and macOS's).
pub const WAL_SYNC_METHODS: [&str; 4] = ["fdatasync", "fsync", "open_datasync", "open_sync"];

impl Default for PgSettings {
    fn default() -> Self {
        PgSettings {
            shared_buffers: "128MB".into(),
            wal_buffers: "4MB".into(),
            // PostgreSQL's minimum: a 60 s window holds a whole checkpoint.
            checkpoint_timeout: "30s".into(),
            max_wal_size: "1GB".into(),
            synchronous_commit: "on".into(),
            full_page_writes: "on".into(),
            wal_sync_method: default_wal_sync_method(),
        }
    }
}

/// The server binaries: `--pg-bin`, else the newest /usr/lib/postgresql/N/bin.
pub fn find_bin(given: Option<&Path>) -> Result<PathBuf> {
    let ok = |d: &Path| {
        proc::is_executable(&d.join("initdb")) && proc::is_executable(&d.join("postgres"))
    };
    if let Some(d) = given {
        return if ok(d) {
            Ok(d.to_path_buf())
        } else {
            Err(OltpError::NoPostgres {
                looked_in: d.display().to_string(),
            })
        };
    }
    let mut found: Vec<(u32, PathBuf)> = std::fs::read_dir("/usr/lib/postgresql")
        .into_iter()
        .flatten()
        .flatten()
        .filter_map(|e| {
            let v: u32 = e.file_name().to_string_lossy().parse().ok()?;
            let bin = e.path().join("bin");
            ok(&bin).then_some((v, bin))
        })
        .collect();
    found.sort();
    found.pop().map(|(_, b)| b).ok_or(OltpError::NoPostgres {
        looked_in: "/usr/lib/postgresql/*/bin".into(),
    })
}

#[derive(Debug, Serialize, Deserialize)]
struct Marker {
    created_by: String,
    pid: u32,
    created_unix_s: u64,
}

/// Refuses a data directory flashlab did not create, or one whose server is
/// still running; removes one of ours left by an earlier, killed run.
pub fn claim_data_dir(pgdata: &Path) -> Result<()> {
    if !pgdata.exists() {
        return Ok(());
    }
    let marker = pgdata.join(MARKER);
    if !marker.exists() {
        return Err(OltpError::NotOurs(format!(
            "{} exists and flashlab did not create it (no {MARKER}); flashlab never touches a PostgreSQL cluster it did not create: move it away or pass another --mount directory",
            pgdata.display()
        )));
    }
    if let Some(pid) = postmaster_pid(pgdata) {
        if proc::pid_alive(pid) {
            return Err(OltpError::NotOurs(format!(
                "{} is a flashlab cluster whose server (pid {pid}) still runs, left by an earlier run; stop it: kill -INT {pid}",
                pgdata.display()
            )));
        }
    }
    std::fs::remove_dir_all(pgdata).map_err(|e| {
        OltpError::failed(
            format!(
                "cannot remove the old flashlab cluster {}",
                pgdata.display()
            ),
            e,
        )
    })
}

fn postmaster_pid(pgdata: &Path) -> Option<u32> {
    std::fs::read_to_string(pgdata.join("postmaster.pid"))
        .ok()?
        .lines()
        .next()?
        .trim()
        .parse()
        .ok()
}

/// A running server flashlab started.
pub struct Server {
    pub pid: u32,
    pub pgdata: PathBuf,
    pub socket_dir: PathBuf,
    pub port: u16,
}

impl Server {
    /// How the TPC-C driver connects: the private socket, as `postgres`.
    pub fn config(&self) -> postgres::Config {
        let mut c = postgres::Config::new();
        c.host_path(&self.socket_dir)
            .port(self.port)
            .user("postgres")
            .dbname("postgres")
            .application_name("flashlab-oltp")
            .connect_timeout(Duration::from_secs(10));
        c
    }
}

pub struct StartSpec<'a> {
    pub bin: &'a Path,
    pub pgdata: &'a Path,
    pub socket_dir: &'a Path,
    pub log: &'a Path,
    pub settings: &'a PgSettings,
    pub max_connections: u32,
    /// Remove the data directory at teardown (always ours; `--mount` runs
    /// would otherwise leave the cluster in the user's directory).
    pub remove_at_teardown: bool,
}

pub fn init_and_start(s: &StartSpec, teardown: &mut Teardown) -> Result<Server> {
    let (uid, gid) =
        proc::user_ids("postgres").ok_or(OltpError::Input(InputError::NoPostgresUser))?;
    claim_data_dir(s.pgdata)?;
    std::fs::create_dir_all(s.pgdata)
        .map_err(|e| OltpError::failed(format!("cannot create {}", s.pgdata.display()), e))?;
    if s.remove_at_teardown {
        teardown.note(crate::stale::Record::Cluster {
            pgdata: std::fs::canonicalize(s.pgdata).unwrap_or_else(|_| s.pgdata.to_path_buf()),
        });
        let d = s.pgdata.to_path_buf();
        teardown.push(
            format!("remove the cluster {}", s.pgdata.display()),
            move || {
                // Only ever a directory with our marker (or an initdb that failed before it).
                if d.join(MARKER).exists() || !d.join("PG_VERSION").exists() {
                    std::fs::remove_dir_all(&d)
                        .map_err(|source| UndoError::Remove { path: d, source })
                } else {
                    Err(UndoError::MarkerLost { dir: d })
                }
            },
        );
    }
    proc::chown(s.pgdata, uid, gid)?;
    std::fs::create_dir_all(s.socket_dir)
        .map_err(|e| OltpError::failed(format!("cannot create {}", s.socket_dir.display()), e))?;
    proc::chown(s.socket_dir, uid, gid)?;
    let as_postgres = |cmd: &mut Command| {
        use std::os::unix::process::CommandExt;
        cmd.uid(uid)
            .gid(gid)
            .env("LC_ALL", "C")
            .env_remove("PGDATA")
            .current_dir("/");
    };
    let mut initdb = Command::new(s.bin.join("initdb"));
    initdb.arg("-D").arg(s.pgdata).args([
        "--auth=trust",
        "-U",
        "postgres",
        "-E",
        "UTF8",
        "--locale=C",
        "--no-sync",
    ]);
    as_postgres(&mut initdb);
    proc::run(&mut initdb, "initdb")?;
    let marker = Marker {
        created_by: format!("flashlab oltp {}", env!("CARGO_PKG_VERSION")),
        pid: std::process::id(),
        created_unix_s: std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_secs())
            .unwrap_or(0),
    };
    std::fs::write(
        s.pgdata.join(MARKER),
        serde_json::to_vec_pretty(&marker).expect("serializes"),
    )
    .map_err(|e| OltpError::failed("cannot write the cluster marker", e))?;
    let log = std::fs::File::create(s.log)
        .map_err(|e| OltpError::failed(format!("cannot create {}", s.log.display()), e))?;
    let port = 5432u16;
    let st = s.settings;
    let mut cmd = Command::new(s.bin.join("postgres"));
    cmd.arg("-D").arg(s.pgdata).arg("-p").arg(port.to_string());
    for (k, v) in [
        ("listen_addresses", ""),
        (
            "unix_socket_directories",
            &s.socket_dir.display().to_string(),
        ),
        ("shared_buffers", &st.shared_buffers),
        ("wal_buffers", &st.wal_buffers),
        ("checkpoint_timeout", &st.checkpoint_timeout),
        ("max_wal_size", &st.max_wal_size),
        ("synchronous_commit", &st.synchronous_commit),
        ("full_page_writes", &st.full_page_writes),
        ("wal_sync_method", &st.wal_sync_method),
        ("max_connections", &s.max_connections.to_string()),
        ("logging_collector", "off"),
        // The window's started checkpoints are counted from these lines.
        ("log_checkpoints", "on"),
    ] {
        cmd.arg("-c").arg(format!("{k}={v}"));
    }
    as_postgres(&mut cmd);
    cmd.stdin(Stdio::null())
        .stdout(
            log.try_clone()
                .map_err(|e| OltpError::failed("cannot dup the log", e))?,
        )
        .stderr(log);
    // Its own process group: Ctrl-C reaches flashlab, which stops the
    // server in order (fast shutdown) before it unmounts.
    std::os::unix::process::CommandExt::process_group(&mut cmd, 0);
    let child = cmd
        .spawn()
        .map_err(|e| OltpError::failed("cannot start postgres", e))?;
    let pid = child.id();
    // SIGINT: PostgreSQL's fast shutdown.
    teardown.note(crate::stale::Record::Process {
        what: "PostgreSQL".into(),
        pid,
        start_ticks: crate::stale::start_ticks(pid).unwrap_or(0),
        signal: libc::SIGINT,
    });
    let child = std::rc::Rc::new(std::cell::RefCell::new(child));
    {
        let child = child.clone();
        teardown.push(format!("stop PostgreSQL (pid {pid})"), move || {
            stop(&mut child.borrow_mut())
        });
    }
    let server = Server {
        pid,
        pgdata: s.pgdata.to_path_buf(),
        socket_dir: s.socket_dir.to_path_buf(),
        port,
    };
    let cfg = server.config();
    let end = Instant::now() + Duration::from_secs(120);
    loop {
        if let Ok(Some(st)) = child.borrow_mut().try_wait() {
            return Err(OltpError::Failed(Failure::Exited {
                what: "postgres",
                status: st,
                last_line: proc::last_error_line(s.log),
            }));
        }
        if let Ok(mut c) = cfg.connect(postgres::NoTls) {
            if c.simple_query("SELECT 1").is_ok() {
                break;
            }
        }
        if Instant::now() > end {
            return Err(OltpError::Failed(Failure::NotReady {
                what: "PostgreSQL did not accept connections".into(),
                within_s: 120,
                last_log_line: Some(proc::last_error_line(s.log)),
            }));
        }
        std::thread::sleep(Duration::from_millis(200));
    }
    Ok(server)
}

/// The server's version string (for oltp.json).
pub fn version(bin: &Path) -> String {
    Command::new(bin.join("postgres"))
        .arg("--version")
        .output()
        .ok()
        .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_string())
        .unwrap_or_default()
}

/// Fast shutdown (what `pg_ctl stop -m fast` sends: SIGINT), immediate
/// (SIGQUIT) if it takes longer than a minute, SIGKILL as a last resort.
fn stop(child: &mut Child) -> std::result::Result<(), UndoError> {
    if let Ok(Some(_)) = child.try_wait() {
        return Ok(());
    }
    proc::signal(child, libc::SIGINT);
    if proc::wait_timeout(child, Duration::from_secs(60)).is_some() {
        return Ok(());
    }
    proc::signal(child, libc::SIGQUIT);
    if proc::wait_timeout(child, Duration::from_secs(10)).is_some() {
        return Err(UndoError::PostgresImmediateShutdown);
    }
    proc::signal(child, libc::SIGKILL);
    let _ = child.wait();
    Err(UndoError::PostgresKilled)
}

/// True when the `postgres` user is missing (the server package makes it).
pub fn proc_user_missing() -> bool {
    proc::user_ids("postgres").is_none()
}
