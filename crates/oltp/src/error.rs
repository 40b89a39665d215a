//! Typed errors. Every variant renders as one line naming the problem and
//! the install or flag that fixes it; `is_user` says whether the user can
//! fix it (exit 2) or the machine failed (exit 1).

use std::fmt;
use std::io;
use std::path::PathBuf;
use std::process::ExitStatus;

#[derive(Debug)]
pub enum OltpError {
    /// A program flashlab needs is not installed.
    MissingTool {
        tool: String,
        package: &'static str,
        why: &'static str,
    },
    /// PostgreSQL's server binaries are not where we look.
    NoPostgres { looked_in: String },
    /// flashlab oltp must run as root.
    NotRoot,
    /// Bad flags or a device that cannot hold the run.
    Input(InputError),
    /// A cluster or file that flashlab did not create is in the way.
    NotOurs(String),
    /// The device, a tool or a process failed.
    Failed(Failure),
    /// The TPC-C driver failed.
    Workload(WorkloadError),
    /// Tracing failed or is unavailable.
    Trace { message: String, user: bool },
    /// Ctrl-C or SIGTERM.
    Interrupted,
}

/// What is wrong with the flags, or with what they name.
#[derive(Debug)]
pub enum InputError {
    /// flashlab was built without the TPC-C driver.
    NoTpccDriver,
    NoNilfs2,
    UnsupportedFs {
        fs: String,
    },
    NoSchedulerChoice {
        disk: String,
    },
    UnknownScheduler {
        wanted: String,
        disk: String,
        offered: Vec<String>,
    },
    /// --scheduler with --mount on a file system without a block device.
    SchedulerWithoutDevice,
    /// PostgreSQL refuses to run as root and there is no `postgres` user.
    NoPostgresUser,
    /// `--dbms mariadb` without Debian's mariadb-server.
    NoMariadb,
    /// MariaDB's server drops root for the `mysql` user, which is missing.
    NoMysqlUser,
    NoWarehouses,
    NoTerminals,
    BadWalSize {
        given: String,
    },
    /// `--mix` names no mix the driver knows.
    BadMix {
        given: String,
    },
    /// The device or file system cannot hold the database and its WAL.
    TooSmall {
        what: String,
        have_bytes: u64,
        needed_bytes: u64,
        warehouses: u32,
        max_wal_size: String,
        flag: String,
    },
    /// The results directory exists and holds something (an OLTP run,
    /// another command's results): never written into, as `run -o`.
    ResultsNotEmpty {
        dir: PathBuf,
    },
    ResultsCreate {
        dir: PathBuf,
        source: io::Error,
    },
    DeviceOpen {
        path: PathBuf,
        source: io::Error,
    },
    MountNotDir {
        dir: PathBuf,
    },
    MountUnknownFs {
        dir: PathBuf,
    },
    DeviceFileMissing {
        path: PathBuf,
    },
    DeviceFileCreate {
        path: PathBuf,
        source: io::Error,
    },
    DeviceFileSize {
        path: PathBuf,
        size_bytes: u64,
        source: io::Error,
    },
    SimSpec {
        spec: String,
        source: flashlab_sim::ConfigError,
    },
    DeviceAndMount,
    NoDevice,
    SimNoProfile,
    DeviceNotFileOrBlock {
        arg: String,
    },
    DeviceMissing {
        arg: String,
    },
}

/// What failed on the machine.
#[derive(Debug)]
pub enum Failure {
    /// An OS call failed: `context` says what we tried (`cannot create X`).
    Io { context: String, source: io::Error },
    /// A tool exited with a failure status; its last line of output.
    Tool {
        what: String,
        status: ExitStatus,
        message: String,
    },
    /// A server we started exited before it was ready.
    Exited {
        what: &'static str,
        status: ExitStatus,
        last_line: String,
    },
    /// A server was not ready in time (`what` says at what).
    NotReady {
        what: String,
        within_s: u64,
        last_log_line: Option<String>,
    },
    /// losetup printed something that is not a device path.
    NotALoopDevice { printed: String },
    /// A statement flashlab sent to its own server failed (`what` says which).
    Sql {
        what: String,
        source: postgres::Error,
    },
    /// The server answered something flashlab cannot read.
    Unexpected { what: String, answer: String },
    /// A statement flashlab sent to its own MariaDB server failed.
    Mariadb { what: String, message: String },
}

/// Why the TPC-C driver could not run.
#[derive(Debug)]
pub enum WorkloadError {
    /// flashlab was built without the TPC-C driver.
    NotBuilt,
    /// The loader thread panicked.
    LoaderPanicked,
    /// The driver's own error.
    #[cfg(feature = "tpcc")]
    Tpcc(flashlab_tpcc::TpccError),
}

impl OltpError {
    pub fn is_user(&self) -> bool {
        match self {
            OltpError::MissingTool { .. }
            | OltpError::NoPostgres { .. }
            | OltpError::NotRoot
            | OltpError::Input(_)
            | OltpError::NotOurs(_) => true,
            OltpError::Trace { user, .. } => *user,
            OltpError::Failed(_) | OltpError::Workload(_) | OltpError::Interrupted => false,
        }
    }

    /// An OS call that failed: `context` is what we tried.
    pub fn failed(context: impl Into<String>, source: io::Error) -> OltpError {
        OltpError::Failed(Failure::Io {
            context: context.into(),
            source,
        })
    }
}

const NOT_BUILT: &str = "this flashlab was built without the TPC-C driver (the flashlab-tpcc crate; cargo feature `tpcc` of flashlab-oltp); use --setup-only, or build it with the driver";
const NO_POSTGRES_USER: &str = "there is no 'postgres' user (PostgreSQL refuses to run as root); install the server package: apt-get install postgresql";

impl fmt::Display for OltpError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            OltpError::MissingTool { tool, package, why } => write!(
                f,
                "{tool} is not installed ({why}); install it: apt-get install {package}"
            ),
            OltpError::NoPostgres { looked_in } => write!(
                f,
                "PostgreSQL is not installed (no initdb and postgres in {looked_in}); install it: apt-get install postgresql, or pass --pg-bin DIR"
            ),
            OltpError::NotRoot => f.write_str(
                "flashlab oltp needs root (loop devices, mkfs, mount, tracefs, and starting PostgreSQL as the postgres user); run it with sudo",
            ),
            OltpError::Input(e) => fmt::Display::fmt(e, f),
            OltpError::NotOurs(m) => f.write_str(m),
            OltpError::Failed(e) => fmt::Display::fmt(e, f),
            OltpError::Workload(e) => write!(f, "TPC-C: {e}"),
            OltpError::Trace { message, .. } => write!(f, "tracing: {message}"),
            OltpError::Interrupted => f.write_str("interrupted"),
        }
    }
}

impl fmt::Display for InputError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        use flashlab_pattern::units::format_size;
        match self {
            InputError::NoTpccDriver => f.write_str(NOT_BUILT),
            InputError::NoNilfs2 => f.write_str(
                "--fs nilfs2: this kernel has no nilfs2; use --fs btrfs (copy-on-write placement, its stand-in here)",
            ),
            InputError::UnsupportedFs { fs } => write!(
                f,
                "--fs {fs} is not supported; use ext2, ext4, xfs or btrfs"
            ),
            InputError::NoSchedulerChoice { disk } => write!(
                f,
                "--scheduler: {disk} offers no scheduler choice (no /sys/block/{disk}/queue/scheduler); leave --scheduler out"
            ),
            InputError::UnknownScheduler {
                wanted,
                disk,
                offered,
            } => write!(
                f,
                "--scheduler {wanted}: {disk} offers {}; pass one of them (the paper's noop is 'none' on blk-mq, anticipatory is gone: mq-deadline or bfq are the nearest)",
                offered.join(", ")
            ),
            InputError::SchedulerWithoutDevice => f.write_str(
                "--scheduler: the file system of --mount has no block device to schedule; leave --scheduler out",
            ),
            InputError::NoPostgresUser => f.write_str(NO_POSTGRES_USER),
            InputError::NoMariadb => f.write_str("MariaDB is not installed (no /usr/sbin/mariadbd and /usr/bin/mariadb-install-db); install it: apt-get install mariadb-server"),
            InputError::NoMysqlUser => f.write_str("there is no 'mysql' user (mariadbd runs as it); install the server package: apt-get install mariadb-server"),
            InputError::NoWarehouses => f.write_str("--warehouses must be at least 1"),
            InputError::NoTerminals => f.write_str("--terminals must be at least 1"),
            InputError::BadWalSize { given } => write!(
                f,
                "--max-wal-size {given}: not a PostgreSQL size; e.g. 1GB or 512MB"
            ),
            InputError::BadMix { given } => write!(
                f,
                "--mix {given}: not a mix; use standard, read-intensive or write-intensive"
            ),
            InputError::TooSmall {
                what,
                have_bytes,
                needed_bytes,
                warehouses,
                max_wal_size,
                flag,
            } => write!(
                f,
                "{what} ({}) is too small for {warehouses} warehouse{} (about {} with the WAL up to --max-wal-size {max_wal_size}); give {flag} {} or fewer --warehouses",
                format_size(*have_bytes),
                if *warehouses == 1 { "" } else { "s" },
                format_size(*needed_bytes),
                format_size(needed_bytes.div_ceil(1 << 30) << 30)
            ),
            InputError::ResultsNotEmpty { dir } => write!(
                f,
                "results directory {} already exists and is not empty; pass another --results directory",
                dir.display()
            ),
            InputError::ResultsCreate { dir, source } => write!(
                f,
                "cannot create {}: {source}; check --results",
                dir.display()
            ),
            InputError::DeviceOpen { path, source } => {
                write!(f, "cannot open {}: {source}", path.display())
            }
            InputError::MountNotDir { dir } => write!(
                f,
                "--mount {} is not a directory; pass the directory of a mounted file system",
                dir.display()
            ),
            InputError::MountUnknownFs { dir } => {
                write!(f, "cannot find the file system of {}", dir.display())
            }
            InputError::DeviceFileMissing { path } => write!(
                f,
                "{} does not exist; pass --size (e.g. --size 4GiB) to create it",
                path.display()
            ),
            InputError::DeviceFileCreate { path, source } => write!(
                f,
                "cannot create {}: {source}; check the path given to --device",
                path.display()
            ),
            InputError::DeviceFileSize {
                path,
                size_bytes,
                source,
            } => write!(
                f,
                "cannot size {} to {size_bytes} bytes: {source}",
                path.display()
            ),
            InputError::SimSpec { spec, source } => write!(f, "--device sim:{spec}: {source}"),
            InputError::DeviceAndMount => f.write_str(
                "--device and --mount exclude each other: --mount DIR runs on an existing file system, --device sets one up",
            ),
            InputError::NoDevice => f.write_str(
                "no device: pass --device FILE|/dev/X|sim:PROFILE (e.g. --device sim:intel-x25e) or --mount DIR",
            ),
            InputError::SimNoProfile => f.write_str(
                "--device sim: needs a profile, e.g. sim:intel-x25e (flashlab sim profiles lists them)",
            ),
            InputError::DeviceNotFileOrBlock { arg } => write!(
                f,
                "--device {arg} is neither a file nor a block device; pass a file, /dev/X or sim:PROFILE"
            ),
            InputError::DeviceMissing { arg } => write!(
                f,
                "--device {arg} does not exist; lsblk lists the block devices"
            ),
        }
    }
}

impl fmt::Display for Failure {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Failure::Io { context, source } => write!(f, "{context}: {source}"),
            Failure::Tool {
                what,
                status,
                message,
            } => write!(f, "{what} failed ({status}): {message}"),
            Failure::Exited {
                what,
                status,
                last_line,
            } => write!(f, "{what} exited ({status}): {last_line}"),
            Failure::NotReady {
                what,
                within_s,
                last_log_line,
            } => {
                write!(f, "{what} within {within_s} s")?;
                match last_log_line {
                    Some(line) => write!(f, ": {line}"),
                    None => Ok(()),
                }
            }
            Failure::NotALoopDevice { printed } => {
                write!(f, "losetup printed '{printed}', not a loop device")
            }
            Failure::Sql { what, source } => write!(f, "PostgreSQL: {what}: {source}"),
            Failure::Unexpected { what, answer } => {
                write!(f, "PostgreSQL: {what}: unexpected answer '{answer}'")
            }
            Failure::Mariadb { what, message } => {
                write!(f, "MariaDB failed while {what}: {message}; see mariadb.log in the results directory")
            }
        }
    }
}

impl fmt::Display for WorkloadError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            WorkloadError::NotBuilt => f.write_str(NOT_BUILT),
            WorkloadError::LoaderPanicked => f.write_str("the loader panicked"),
            #[cfg(feature = "tpcc")]
            WorkloadError::Tpcc(e) => fmt::Display::fmt(e, f),
        }
    }
}

impl std::error::Error for OltpError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            OltpError::Input(e) => Some(e),
            OltpError::Failed(e) => Some(e),
            OltpError::Workload(e) => Some(e),
            _ => None,
        }
    }
}

impl std::error::Error for InputError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            InputError::ResultsCreate { source, .. }
            | InputError::DeviceOpen { source, .. }
            | InputError::DeviceFileCreate { source, .. }
            | InputError::DeviceFileSize { source, .. } => Some(source),
            InputError::SimSpec { source, .. } => Some(source),
            _ => None,
        }
    }
}

impl std::error::Error for Failure {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            Failure::Io { source, .. } => Some(source),
            Failure::Sql { source, .. } => Some(source),
            _ => None,
        }
    }
}

impl std::error::Error for WorkloadError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            #[cfg(feature = "tpcc")]
            WorkloadError::Tpcc(e) => Some(e),
            _ => None,
        }
    }
}

impl From<InputError> for OltpError {
    fn from(e: InputError) -> OltpError {
        OltpError::Input(e)
    }
}

impl From<Failure> for OltpError {
    fn from(e: Failure) -> OltpError {
        OltpError::Failed(e)
    }
}

impl From<WorkloadError> for OltpError {
    fn from(e: WorkloadError) -> OltpError {
        OltpError::Workload(e)
    }
}

pub type Result<T> = std::result::Result<T, OltpError>;

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::process::ExitStatusExt;

    fn enoent() -> io::Error {
        io::Error::from_raw_os_error(libc::ENOENT)
    }

    /// The messages of the typed variants, byte for byte what the text
    /// variants printed before (users and scripts read them).
    #[test]
    fn input_errors_name_the_flag_that_fixes_them() {
        let cases: Vec<(InputError, &str)> = vec![
            (InputError::NoWarehouses, "--warehouses must be at least 1"),
            (InputError::NoTerminals, "--terminals must be at least 1"),
            (
                InputError::BadWalSize { given: "lots".into() },
                "--max-wal-size lots: not a PostgreSQL size; e.g. 1GB or 512MB",
            ),
            (
                InputError::BadMix { given: "heavy".into() },
                "--mix heavy: not a mix; use standard, read-intensive or write-intensive",
            ),
            (
                InputError::UnsupportedFs { fs: "zfs".into() },
                "--fs zfs is not supported; use ext2, ext4, xfs or btrfs",
            ),
            (
                InputError::NoSchedulerChoice { disk: "nbd0".into() },
                "--scheduler: nbd0 offers no scheduler choice (no /sys/block/nbd0/queue/scheduler); leave --scheduler out",
            ),
            (
                InputError::UnknownScheduler {
                    wanted: "noop".into(),
                    disk: "loop0".into(),
                    offered: vec!["none".into(), "mq-deadline".into()],
                },
                "--scheduler noop: loop0 offers none, mq-deadline; pass one of them (the paper's noop is 'none' on blk-mq, anticipatory is gone: mq-deadline or bfq are the nearest)",
            ),
            (
                InputError::TooSmall {
                    what: "--size".into(),
                    have_bytes: 1 << 30,
                    needed_bytes: 3 << 29,
                    warehouses: 2,
                    max_wal_size: "1GB".into(),
                    flag: "--size".into(),
                },
                "--size (1GiB) is too small for 2 warehouses (about 1536MiB with the WAL up to --max-wal-size 1GB); give --size 2GiB or fewer --warehouses",
            ),
            (
                InputError::ResultsNotEmpty { dir: "/r".into() },
                "results directory /r already exists and is not empty; pass another --results directory",
            ),
            (
                InputError::ResultsCreate {
                    dir: "/r".into(),
                    source: enoent(),
                },
                "cannot create /r: No such file or directory (os error 2); check --results",
            ),
            (
                InputError::DeviceFileSize {
                    path: "/d".into(),
                    size_bytes: 4096,
                    source: enoent(),
                },
                "cannot size /d to 4096 bytes: No such file or directory (os error 2)",
            ),
            (
                InputError::DeviceMissing { arg: "/dev/sdz".into() },
                "--device /dev/sdz does not exist; lsblk lists the block devices",
            ),
            (
                InputError::DeviceNotFileOrBlock { arg: "/tmp".into() },
                "--device /tmp is neither a file nor a block device; pass a file, /dev/X or sim:PROFILE",
            ),
            (
                InputError::MountNotDir { dir: "/f".into() },
                "--mount /f is not a directory; pass the directory of a mounted file system",
            ),
            (InputError::NoPostgresUser, NO_POSTGRES_USER),
        ];
        for (e, text) in cases {
            let e = OltpError::from(e);
            assert!(e.is_user(), "{e}");
            assert_eq!(e.to_string(), text);
        }
        let e = OltpError::from(InputError::DeviceOpen {
            path: "/dev/x".into(),
            source: enoent(),
        });
        assert!(std::error::Error::source(&e).is_some(), "keeps its cause");
    }

    #[test]
    fn failures_say_what_failed_and_why() {
        let cases: Vec<(Failure, &str)> = vec![
            (
                Failure::Io {
                    context: "cannot create /x".into(),
                    source: enoent(),
                },
                "cannot create /x: No such file or directory (os error 2)",
            ),
            (
                Failure::Tool {
                    what: "mkfs.ext4".into(),
                    status: ExitStatus::from_raw(1 << 8),
                    message: "bad".into(),
                },
                "mkfs.ext4 failed (exit status: 1): bad",
            ),
            (
                Failure::Exited {
                    what: "postgres",
                    status: ExitStatus::from_raw(1 << 8),
                    last_line: "FATAL: x".into(),
                },
                "postgres exited (exit status: 1): FATAL: x",
            ),
            (
                Failure::NotReady {
                    what: "PostgreSQL did not accept connections".into(),
                    within_s: 120,
                    last_log_line: Some("LOG: y".into()),
                },
                "PostgreSQL did not accept connections within 120 s: LOG: y",
            ),
            (
                Failure::NotReady {
                    what: "flashlab serve did not listen".into(),
                    within_s: 120,
                    last_log_line: None,
                },
                "flashlab serve did not listen within 120 s",
            ),
            (
                Failure::NotALoopDevice {
                    printed: "huh".into(),
                },
                "losetup printed 'huh', not a loop device",
            ),
        ];
        for (e, text) in cases {
            let e = OltpError::from(e);
            assert!(!e.is_user(), "{e}");
            assert_eq!(e.to_string(), text);
        }
    }

    #[test]
    fn workload_errors_carry_the_tpcc_prefix() {
        assert_eq!(
            OltpError::from(WorkloadError::LoaderPanicked).to_string(),
            "TPC-C: the loader panicked"
        );
        assert_eq!(
            OltpError::from(WorkloadError::NotBuilt).to_string(),
            format!("TPC-C: {NOT_BUILT}")
        );
        assert_eq!(
            OltpError::from(InputError::NoTpccDriver).to_string(),
            NOT_BUILT
        );
    }
}
