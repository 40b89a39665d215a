//! The durable store behind `flashlab serve`: the simulator in device mode,
//! with data, a write-ahead log and checkpoints in a directory.
//!
//! ```text
//! DIR/serve.lock      flock'ed by the live store; holds its pid
//! DIR/device.json     what device this is (spec, seed, size); written once
//! DIR/data.img        the data, addressed by logical offset (sparse file)
//! DIR/ckpt-G.bin      checkpoint G: the simulator's whole flash state
//! DIR/wal-G.log       the requests applied since checkpoint G, 32 bytes each
//! ```
//!
//! **Design.** The simulator is deterministic: its flash state (mapping,
//! block states, valid and erase counts, free pools, GC and wear-levelling
//! state) is a pure function of its configuration, its seed and the sequence
//! of requests with their simulated arrival times. So the store keeps data and
//! flash state apart: data goes to `data.img` at its logical offset (what the
//! host reads back), and the flash state is persisted as a checkpoint plus a
//! log of every request applied since (op, offset, length, arrival time).
//! Recovery loads the newest checkpoint and re-issues the log's valid prefix
//! through the simulator, which rebuilds exactly the flash state that was
//! running when the last logged request was applied.
//!
//! **Ordering.** A write is `pwrite` to `data.img`, then (under the simulator
//! lock) applied to the simulator and appended to the in-memory log buffer.
//! A FLUSH (or a FUA write, trim or write-zeroes) takes the log buffer, then
//! `fdatasync`s `data.img`, then appends the buffer to `wal-G.log` and
//! `fdatasync`s it, and only then replies. Every record in a taken buffer was
//! appended after its data was written, so the data `fdatasync` covers it: a
//! log record on disk never refers to data that is not. A flush covers every
//! write that was acknowledged before it (they are in the buffer it takes).
//! Records carry a checksum salted with G. Bad records after the last good
//! one are a torn tail (it can only belong to a flush that never returned)
//! and are dropped; a bad record with good ones after it is damage inside
//! the log: it is reported, skipped, and the damaged log kept as evidence.
//!
//! **Failures.** Any failed data write, `fdatasync`, log append or checkpoint
//! commit makes the store read-only for good (until restart): every later
//! write and FLUSH answers EIO, so no FLUSH ever covers data that a failed
//! write-back may have dropped ("fsyncgate"). IO goes through an optional
//! [`Faults`] plan so tests can fail chosen operations.
//!
//! **Checkpoints** (every `checkpoint_records` records, after recovery, and at
//! a clean shutdown), with both locks held throughout: write the log out (so
//! checkpoint G+1 = checkpoint G + log G), serialise the simulator, restore a
//! device from the bytes, create and `fsync` an empty `wal-G+1.log`, write
//! `ckpt-G+1.tmp`, `fsync`, rename to `ckpt-G+1.bin`, `fsync` the directory;
//! only then switch the live device (to the restored one: a checkpoint is a
//! power-cycle boundary for the model, see `flashlab_sim::device::persist`)
//! and the log to G+1, and delete generation G-1 (G stays as the fallback
//! for a damaged checkpoint G+1). A failure before the rename
//! leaves generation G complete and in use (retried later); after it, the
//! store turns read-only. A crash at any step leaves generation G complete
//! (checkpoint + log) or G+1 complete.
//!
//! **Lock.** `DIR/serve.lock` is flock'ed for the store's life, before
//! recovery reads or deletes anything.

use std::cmp::Reverse;
use std::collections::{BTreeMap, BinaryHeap};
use std::fs::{self, File, OpenOptions};
use std::io::{BufWriter, Read, Write};
use std::os::fd::AsRawFd;
use std::os::unix::fs::FileExt;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Instant;

use flashlab_device::{Device, DeviceError, IoRequest, Mode, Nanos};
use flashlab_sim::device::persist::checksum;
use flashlab_sim::{resolve_spec, ConfigError, SimDevice, SimError};
use flashlab_trace::{TraceIo, TraceOp, TraceWriter};

use crate::faults::{Faults, IoPoint};
use crate::proto::{EINVAL, EIO, ENOSPC};
use crate::server::Backend;

/// Bytes per log record.
pub const RECORD_BYTES: usize = 32;
/// Log-buffer size that forces a write-out (data fdatasync, then log write)
/// even without a flush from the client.
const LOG_BUFFER_LIMIT: usize = 32 << 20;

const OP_READ: u8 = 0;
const OP_WRITE: u8 = 1;
const OP_TRIM: u8 = 2;

/// What a request leaves to do once applied.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Next {
    Nothing,
    Sync,
    Checkpoint,
}

/// How to open a store.
#[derive(Clone, Debug)]
pub struct StoreOptions {
    pub dir: PathBuf,
    /// Simulator spec (what follows `sim:`). `None`: the one recorded in the directory.
    pub spec: Option<String>,
    pub seed: u64,
    /// Checkpoint after this many log records (0: only at recovery and shutdown).
    pub checkpoint_records: u64,
    /// Write the physical IO trace (flashlab trace format) here (never
    /// inside `dir`).
    pub trace: Option<PathBuf>,
    /// Fault injection for tests: consulted before every write, sync and
    /// log append (`None` in production).
    pub faults: Option<Arc<Faults>>,
}

/// The lock file in the data directory, held (flock) for the store's life
/// so that a second server cannot open, "recover" and delete a live log.
pub const LOCK_FILE: &str = "serve.lock";

/// Why a store could not be opened. [`OpenError::is_user`] marks a mistake
/// in what was asked (wrong profile for the directory, a directory that is
/// not a store...) from a failure of the machine or a damaged directory.
/// Each displays as one line naming the fix.
#[derive(Debug)]
pub enum OpenError {
    /// Another live server holds the directory's lock.
    InUse { dir: PathBuf, pid: Option<u32> },
    /// `--trace` points inside the data directory.
    /// An output file (`--trace`, `--stats-json`) inside the data directory,
    /// or resolving (symlink, hard link) to one of its files.
    OutputInsideData {
        flag: &'static str,
        path: PathBuf,
        dir: PathBuf,
    },
    /// `device.json` is not JSON.
    DamagedDeviceFile {
        path: PathBuf,
        source: serde_json::Error,
    },
    /// `--profile` differs from the profile the directory was made with.
    ProfileMismatch { dir: PathBuf, recorded: String },
    /// A directory with files but no `device.json`.
    NotAStore { dir: PathBuf },
    /// A new directory and no `--profile`.
    NoProfile { dir: PathBuf },
    /// The profile (recorded or given) does not resolve to a configuration.
    Profile(ConfigError),
    /// The configuration does not build a device.
    Device(SimError),
    /// `data.img` is not the device's size.
    DataSize {
        path: PathBuf,
        have_bytes: u64,
        device_bytes: u64,
    },
    /// Logs of later generations without a loadable checkpoint.
    NoUsableCheckpoint { dir: PathBuf, why: String },
    /// Re-issuing a logged request failed.
    Replay { log: PathBuf, source: DeviceError },
    /// A file-system call, or the checkpoint taken after recovery, failed.
    Store(StoreError),
}

impl OpenError {
    /// True for a mistake in what was asked (exit 2), false when the
    /// machine or the directory failed (exit 1).
    pub fn is_user(&self) -> bool {
        match self {
            OpenError::InUse { .. }
            | OpenError::OutputInsideData { .. }
            | OpenError::DamagedDeviceFile { .. }
            | OpenError::ProfileMismatch { .. }
            | OpenError::NotAStore { .. }
            | OpenError::NoProfile { .. }
            | OpenError::Profile(_)
            | OpenError::Device(_) => true,
            OpenError::DataSize { .. }
            | OpenError::NoUsableCheckpoint { .. }
            | OpenError::Replay { .. }
            | OpenError::Store(_) => false,
        }
    }
}

impl From<StoreError> for OpenError {
    fn from(e: StoreError) -> OpenError {
        OpenError::Store(e)
    }
}

impl std::fmt::Display for OpenError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            OpenError::InUse { dir, pid } => {
                write!(f, "{} is in use by another flashlab serve", dir.display())?;
                if let Some(pid) = pid {
                    write!(f, " (pid {pid})")?;
                }
                f.write_str("; stop that server first, or use another --data directory")
            }
            OpenError::OutputInsideData { flag, path, dir } => write!(
                f,
                "{flag} {} is inside the data directory {} or resolves to one of its files (writing it would destroy the device); write it somewhere else",
                path.display(),
                dir.display()
            ),
            OpenError::DamagedDeviceFile { path, source } => write!(
                f,
                "{} is damaged ({source}); it is not a flashlab serve directory",
                path.display()
            ),
            OpenError::ProfileMismatch { dir, recorded } => write!(
                f,
                "{} holds a device made with --profile {recorded}; serve it with that profile (or omit --profile), or use another --data directory",
                dir.display()
            ),
            OpenError::NotAStore { dir } => write!(
                f,
                "{} is not empty and holds no flashlab device (no device.json); use an empty or new directory",
                dir.display()
            ),
            OpenError::NoProfile { dir } => write!(
                f,
                "{} holds no device yet; give --profile, e.g. --profile ssd-m",
                dir.display()
            ),
            OpenError::Profile(e) => write!(f, "{e}"),
            OpenError::Device(e) => write!(f, "{e}"),
            OpenError::DataSize {
                path,
                have_bytes,
                device_bytes,
            } => write!(
                f,
                "{} is {have_bytes} bytes, the device is {device_bytes}; the directory is damaged",
                path.display()
            ),
            OpenError::NoUsableCheckpoint { dir, why } => write!(
                f,
                "{d}: no usable checkpoint for the logs present ({why}); the data in {d}/data.img is intact: to serve it with a fresh simulated flash state, move {d}/ckpt-* and {d}/wal-* aside and start again",
                d = dir.display()
            ),
            OpenError::Replay { log, source } => {
                write!(f, "replaying {}: {source}", log.display())
            }
            OpenError::Store(e) => write!(f, "{e}"),
        }
    }
}

impl std::error::Error for OpenError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            OpenError::DamagedDeviceFile { source, .. } => Some(source),
            OpenError::Replay { source, .. } => Some(source),
            OpenError::Store(e) => std::error::Error::source(e),
            _ => None,
        }
    }
}

/// Why a sync, a checkpoint or a shutdown of an open store failed. A
/// failure to write data or the log back also makes the store read-only
/// (see [`Store::is_read_only`]), which later calls report as
/// [`StoreError::ReadOnly`] with this first error as the cause. Clone, so
/// that the first one can be kept as that cause.
#[derive(Clone, Debug)]
pub enum StoreError {
    /// A file-system call on one of the store's files or its directory
    /// (`what` is e.g. "cannot sync", "cannot rename").
    File {
        what: &'static str,
        path: PathBuf,
        source: Arc<std::io::Error>,
    },
    /// A write-back step failed: the store turned read-only.
    WriteBack {
        step: WriteBackStep,
        source: Arc<std::io::Error>,
    },
    /// The simulator could not be serialised or restored for a checkpoint.
    Serialise(SimError),
    /// Refused: an earlier IO error made the store read-only.
    ReadOnly { cause: Option<Box<StoreError>> },
}

/// The write-back step whose failure turns a store read-only.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum WriteBackStep {
    /// `pwrite` of a write's data to `data.img`.
    DataWrite,
    /// Punching a hole (TRIM, write-zeroes) in `data.img`.
    PunchHole,
    /// Writing zeroes where the file system cannot punch holes.
    WriteZeroes,
    /// `fdatasync(data.img)`.
    DataSync,
    /// Appending records to the log.
    LogAppend,
    /// `fdatasync` of the log.
    LogSync,
}

impl std::fmt::Display for WriteBackStep {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            WriteBackStep::DataWrite => "writing data.img",
            WriteBackStep::PunchHole => "punching a hole in data.img",
            WriteBackStep::WriteZeroes => "writing zeroes to data.img",
            WriteBackStep::DataSync => "fdatasync data.img",
            WriteBackStep::LogAppend => "appending to the log",
            WriteBackStep::LogSync => "fdatasync the log",
        })
    }
}

impl std::fmt::Display for StoreError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            StoreError::File { what, path, source } => {
                write!(f, "{what} {}: {source}", path.display())
            }
            StoreError::WriteBack { step, source } => write!(f, "{step}: {source}"),
            StoreError::Serialise(e) => write!(f, "serialising the simulator: {e}"),
            StoreError::ReadOnly { cause } => match cause {
                Some(c) => write!(f, "read-only after an earlier IO error ({c})"),
                None => f.write_str("read-only after an earlier IO error (?)"),
            },
        }
    }
}

impl std::error::Error for StoreError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            StoreError::File { source, .. } | StoreError::WriteBack { source, .. } => {
                Some(source.as_ref())
            }
            StoreError::Serialise(e) => Some(e),
            StoreError::ReadOnly { cause } => cause
                .as_deref()
                .map(|c| c as &(dyn std::error::Error + 'static)),
        }
    }
}

/// What recovery found and did.
#[derive(Clone, Debug, Default)]
pub struct Recovery {
    pub created: bool,
    pub checkpoint_generation: u64,
    pub log_records_replayed: u64,
    /// Bytes at the log's end that did not form valid records (a torn tail).
    pub log_tail_bytes_dropped: u64,
    /// Records that failed their checksum with valid records after them:
    /// not a torn tail but damage inside the log, as (generation, byte
    /// offset in `wal-G.log`). They are skipped, the valid records after
    /// them replayed, and the damaged log kept as `wal-G.log.damaged`.
    pub corrupt_log_records: Vec<(u64, u64)>,
    /// When the newest checkpoint was damaged: the older generation the
    /// flash state was rebuilt from (its checkpoint and the logs since).
    pub rebuilt_from_generation: Option<u64>,
    pub millis: u128,
}

/// Live statistics.
#[derive(Clone, Debug, Default)]
pub struct StoreStats {
    pub reads: u64,
    pub writes: u64,
    pub trims: u64,
    pub flushes: u64,
    pub read_bytes: u64,
    pub write_bytes: u64,
    pub checkpoints: u64,
    pub log_records: u64,
    pub sim_now_ns: u64,
    pub waf: f64,
    pub gc_foreground: u64,
    pub gc_background: u64,
    pub gc_relocated_pages: u64,
    pub erases: u64,
    pub free_blocks: Option<u64>,
    pub mapped_pages: u64,
    pub logical_pages: u64,
    /// Checkpoints that failed before they took effect (the previous
    /// generation stayed in use).
    pub checkpoint_failures: u64,
    /// An IO error made the store refuse every later write and FLUSH.
    pub read_only: bool,
}

struct Inner {
    dev: SimDevice,
    log: Vec<u8>,
    /// Records appended to the current generation's log (written or buffered).
    records: u64,
    gen: u64,
    /// Simulated time at `start` (the wall clock drives arrivals).
    base_ns: Nanos,
    start: Instant,
    trace: Option<TraceWriter<BufWriter<File>>>,
    stats: StoreStats,
    failed: Option<String>,
    /// Simulated completion times of the requests that may still be in the
    /// device (a min-heap), at most `host.queue_depth`: a request arrives no
    /// earlier than a command slot frees, so however fast the host is (pacing
    /// off), the simulated backlog stays bounded by the device's queue.
    inflight: BinaryHeap<Reverse<Nanos>>,
    queue_depth: usize,
    /// Checkpoint when `records` reaches this (pushed back after a failed one).
    checkpoint_at: u64,
}

struct Wal {
    file: File,
}

/// The store. All methods take `&self`; connections call them concurrently.
pub struct Store {
    dir: PathBuf,
    data: File,
    size: u64,
    spec: String,
    seed: u64,
    can_checkpoint: bool,
    checkpoint_records: u64,
    wal: Mutex<Wal>,
    inner: Mutex<Inner>,
    pub recovery: Recovery,
    faults: Option<Arc<Faults>>,
    /// Set by the first failed data write, fdatasync, log append or
    /// checkpoint commit; never cleared (sticky until restart, like
    /// PostgreSQL's PANIC on a failed fsync): after a failed fdatasync the
    /// kernel may have dropped the dirty pages and reports the error once,
    /// so a later successful fdatasync proves nothing about them.
    poisoned: AtomicBool,
    poison_reason: Mutex<Option<StoreError>>,
    /// The flock on `DIR/serve.lock`, released when the store is dropped.
    _lock: File,
}

fn io_err(what: &'static str, p: &Path, e: std::io::Error) -> StoreError {
    StoreError::File {
        what,
        path: p.to_path_buf(),
        source: Arc::new(e),
    }
}

fn fsync_dir(dir: &Path) -> Result<(), StoreError> {
    File::open(dir)
        .and_then(|f| f.sync_all())
        .map_err(|e| io_err("cannot sync directory", dir, e))
}

/// Take the directory's lock (flock, non-blocking) and record our pid in it.
fn lock_dir(dir: &Path) -> Result<File, OpenError> {
    let p = dir.join(LOCK_FILE);
    let f = OpenOptions::new()
        .create(true)
        .truncate(false)
        .read(true)
        .write(true)
        .open(&p)
        .map_err(|e| io_err("cannot open", &p, e))?;
    // SAFETY: flock on our own open file descriptor.
    if unsafe { libc::flock(f.as_raw_fd(), libc::LOCK_EX | libc::LOCK_NB) } != 0 {
        let e = std::io::Error::last_os_error();
        if e.raw_os_error() == Some(libc::EWOULDBLOCK) {
            let pid = fs::read_to_string(&p)
                .ok()
                .and_then(|s| s.trim().parse::<u32>().ok());
            return Err(OpenError::InUse {
                dir: dir.to_path_buf(),
                pid,
            });
        }
        return Err(io_err("cannot lock", &p, e).into());
    }
    f.set_len(0)
        .and_then(|_| f.write_all_at(format!("{}\n", std::process::id()).as_bytes(), 0))
        .map_err(|e| io_err("cannot write", &p, e))?;
    Ok(f)
}

/// An output file inside the data directory, or one that resolves to a
/// file of it, would overwrite the store's own files (`data.img` is the
/// device): refuse it. Checked by what the path resolves to (symlinks
/// followed, also a dangling one's target) and by inode (a hard link), so
/// neither a symlink nor a hard link outside the directory reaches in.
pub fn check_output_outside(dir: &Path, path: &Path, flag: &'static str) -> Result<(), OpenError> {
    let refuse = || OpenError::OutputInsideData {
        flag,
        path: path.to_path_buf(),
        dir: dir.to_path_buf(),
    };
    let Ok(dc) = dir.canonicalize() else {
        return Ok(());
    };
    // Where a new file would be created: follow a dangling symlink's chain.
    let mut target = path.to_path_buf();
    for _ in 0..40 {
        match fs::read_link(&target) {
            Ok(next) => {
                target = match target.parent() {
                    Some(p) if next.is_relative() => p.join(next),
                    _ => next,
                }
            }
            Err(_) => break,
        }
    }
    let parent = match target.parent() {
        Some(p) if !p.as_os_str().is_empty() => p,
        _ => Path::new("."),
    };
    if parent.canonicalize().is_ok_and(|pc| pc.starts_with(&dc)) {
        return Err(refuse());
    }
    if let Ok(m) = fs::metadata(path) {
        use std::os::unix::fs::MetadataExt;
        let same = |e: &fs::DirEntry| {
            e.metadata()
                .is_ok_and(|em| em.dev() == m.dev() && em.ino() == m.ino())
        };
        if fs::read_dir(&dc).is_ok_and(|mut rd| rd.any(|e| e.is_ok_and(|e| same(&e)))) {
            return Err(refuse());
        }
    }
    Ok(())
}

fn encode_record(gen: u64, op: u8, offset: u64, len: u32, at: Nanos) -> [u8; RECORD_BYTES] {
    let mut r = [0u8; RECORD_BYTES];
    r[0] = op;
    r[4..8].copy_from_slice(&len.to_le_bytes());
    r[8..16].copy_from_slice(&offset.to_le_bytes());
    r[16..24].copy_from_slice(&at.to_le_bytes());
    let sum = checksum(&r[..24]) ^ gen.wrapping_mul(0x9e37_79b9_7f4a_7c15);
    r[24..32].copy_from_slice(&sum.to_le_bytes());
    r
}

fn decode_record(gen: u64, r: &[u8]) -> Option<(u8, u64, u32, Nanos)> {
    let sum = checksum(&r[..24]) ^ gen.wrapping_mul(0x9e37_79b9_7f4a_7c15);
    if u64::from_le_bytes(r[24..32].try_into().unwrap()) != sum
        || r[0] > OP_TRIM
        || r[1..4] != [0, 0, 0]
    {
        return None;
    }
    Some((
        r[0],
        u64::from_le_bytes(r[8..16].try_into().unwrap()),
        u32::from_le_bytes(r[4..8].try_into().unwrap()),
        u64::from_le_bytes(r[16..24].try_into().unwrap()),
    ))
}

fn op_mode(op: u8) -> Mode {
    match op {
        OP_READ => Mode::Read,
        OP_WRITE => Mode::Write,
        _ => Mode::Trim,
    }
}

/// Generations present in `dir`: (checkpoints, logs).
fn generations(dir: &Path) -> Result<(Vec<u64>, Vec<u64>), StoreError> {
    let mut ck = Vec::new();
    let mut wl = Vec::new();
    for e in fs::read_dir(dir).map_err(|e| io_err("cannot list", dir, e))? {
        let name = e.map_err(|e| io_err("cannot list", dir, e))?.file_name();
        let name = name.to_string_lossy();
        if let Some(g) = name
            .strip_prefix("ckpt-")
            .and_then(|s| s.strip_suffix(".bin"))
            .and_then(|s| s.parse().ok())
        {
            ck.push(g);
        } else if let Some(g) = name
            .strip_prefix("wal-")
            .and_then(|s| s.strip_suffix(".log"))
            .and_then(|s| s.parse().ok())
        {
            wl.push(g);
        }
    }
    ck.sort_unstable();
    wl.sort_unstable();
    Ok((ck, wl))
}

impl Store {
    /// Open the store in `opts.dir`, creating it if empty, recovering otherwise.
    /// Long: recovery in order (the directory lock, the newest loadable checkpoint, the logs
    /// replayed onto it, the damaged files set aside), every step on the same recovery state.
    pub fn open(opts: &StoreOptions) -> Result<Store, OpenError> {
        let t0 = Instant::now();
        let dir = opts.dir.clone();
        fs::create_dir_all(&dir).map_err(|e| io_err("cannot create", &dir, e))?;
        if let Some(t) = &opts.trace {
            check_output_outside(&dir, t, "--trace")?;
        }
        // Before anything is read or deleted: one server per directory.
        let lock = lock_dir(&dir)?;
        let meta_path = dir.join("device.json");
        let mut recovery = Recovery::default();
        let (spec, seed) = if meta_path.exists() {
            let text =
                fs::read_to_string(&meta_path).map_err(|e| io_err("cannot read", &meta_path, e))?;
            let v: serde_json::Value =
                serde_json::from_str(&text).map_err(|source| OpenError::DamagedDeviceFile {
                    path: meta_path.clone(),
                    source,
                })?;
            let spec = v["spec"].as_str().unwrap_or("").to_string();
            let seed = v["seed"].as_u64().unwrap_or(0);
            if let Some(want) = &opts.spec {
                if *want != spec {
                    return Err(OpenError::ProfileMismatch {
                        dir: dir.clone(),
                        recorded: spec,
                    });
                }
            }
            (spec, seed)
        } else {
            // Leftovers of a creation that did not finish, or a stale socket, do not count.
            let others = fs::read_dir(&dir)
                .map_err(|e| io_err("cannot list", &dir, e))?
                .flatten()
                .any(|e| {
                    !matches!(
                        e.file_name().to_str(),
                        Some("data.img" | "device.json.tmp" | "nbd.sock" | LOCK_FILE)
                    )
                });
            if others {
                return Err(OpenError::NotAStore { dir: dir.clone() });
            }
            let spec = opts
                .spec
                .clone()
                .ok_or_else(|| OpenError::NoProfile { dir: dir.clone() })?;
            recovery.created = true;
            (spec, opts.seed)
        };
        let cfg = resolve_spec(&spec).map_err(OpenError::Profile)?;
        let name = format!("sim:{spec}");
        let fresh =
            SimDevice::new(cfg.clone(), name.clone(), seed, 1).map_err(OpenError::Device)?;
        let size = fresh.info().size_bytes;
        let can_checkpoint = fresh.can_checkpoint();
        let data_path = dir.join("data.img");
        if recovery.created {
            let f = File::create(&data_path).map_err(|e| io_err("cannot create", &data_path, e))?;
            f.set_len(size)
                .map_err(|e| io_err("cannot size", &data_path, e))?;
            f.sync_all()
                .map_err(|e| io_err("cannot sync", &data_path, e))?;
            let meta = serde_json::json!({
                "format": "flashlab-serve v1",
                "spec": spec,
                "seed": seed,
                "size_bytes": size,
                "identity": fresh.info().identity,
            });
            let tmp = dir.join("device.json.tmp");
            fs::write(&tmp, serde_json::to_string_pretty(&meta).unwrap() + "\n")
                .map_err(|e| io_err("cannot write", &tmp, e))?;
            File::open(&tmp)
                .and_then(|f| f.sync_all())
                .map_err(|e| io_err("cannot sync", &tmp, e))?;
            fs::rename(&tmp, &meta_path).map_err(|e| io_err("cannot rename", &tmp, e))?;
            fsync_dir(&dir)?;
        }
        let data = OpenOptions::new()
            .read(true)
            .write(true)
            .open(&data_path)
            .map_err(|e| io_err("cannot open", &data_path, e))?;
        let have = data
            .metadata()
            .map_err(|e| io_err("cannot stat", &data_path, e))?
            .len();
        if have != size {
            return Err(OpenError::DataSize {
                path: data_path,
                have_bytes: have,
                device_bytes: size,
            });
        }

        // Recovery: the newest loadable checkpoint, then every log from its
        // generation to the newest checkpoint's (the previous generation is
        // kept for this: checkpoint G+1 = checkpoint G + log G, so a damaged
        // newest checkpoint is rebuilt from the one before it).
        let (cks, wals) = generations(&dir)?;
        let newest = cks.last().copied();
        let mut dev = None;
        let mut gen = 0;
        let mut from = 0;
        let mut damaged: Vec<(u64, String)> = Vec::new();
        for &g in cks.iter().rev() {
            // Every log from g up to the newest checkpoint must be there.
            if (g..newest.unwrap_or(g)).any(|h| !wals.contains(&h)) {
                break;
            }
            let p = dir.join(format!("ckpt-{g}.bin"));
            let loaded = fs::read(&p).map_err(|e| e.to_string()).and_then(|bytes| {
                SimDevice::restore(cfg.clone(), name.clone(), seed, 1, &bytes)
                    .map_err(|e| e.to_string())
            });
            match loaded {
                Ok(d) => {
                    dev = Some(d);
                    from = g;
                    gen = newest.unwrap_or(g);
                    break;
                }
                Err(why) => {
                    eprintln!("flashlab serve: skipping checkpoint {}: {why}", p.display());
                    damaged.push((g, why));
                }
            }
        }
        let mut dev = match dev {
            Some(d) => d,
            // Generation 0 is the fresh device, which has no checkpoint
            // file: it is the start when its log and every later one up to
            // the newest checkpoint are there. (A log of generation G > 0
            // without any checkpoint is the leftover of an interrupted first
            // checkpoint only while generation 0's log is still there.)
            None if (newest.is_none() && (wals.is_empty() || wals.contains(&0)))
                || (newest.is_some() && (0..newest.unwrap_or(0)).all(|h| wals.contains(&h))) =>
            {
                from = 0;
                gen = newest.unwrap_or(0);
                fresh
            }
            None => {
                return Err(OpenError::NoUsableCheckpoint {
                    dir: dir.clone(),
                    why: damaged
                        .first()
                        .map(|(g, why)| format!("ckpt-{g}.bin: {why}"))
                        .unwrap_or_else(|| "a log without its checkpoint".to_string()),
                });
            }
        };
        recovery.checkpoint_generation = gen;
        recovery.rebuilt_from_generation = (from != gen).then_some(from);
        let mut valid_len = 0u64;
        for h in from..=gen {
            let wal_path = dir.join(format!("wal-{h}.log"));
            if !wal_path.exists() {
                continue;
            }
            let mut bytes = Vec::new();
            File::open(&wal_path)
                .and_then(|mut f| f.read_to_end(&mut bytes))
                .map_err(|e| io_err("cannot read", &wal_path, e))?;
            // Records after the last one that decodes are the torn tail of a
            // flush that never returned; a bad record before it is damage
            // inside the log (a torn append writes only at the end).
            let records: Vec<&[u8]> = bytes.chunks_exact(RECORD_BYTES).collect();
            let last_valid = records.iter().rposition(|r| decode_record(h, r).is_some());
            let tail_bytes =
                bytes.len() as u64 - last_valid.map_or(0, |l| (l as u64 + 1) * RECORD_BYTES as u64);
            let mut valid = 0u64;
            let mut corrupt_here = false;
            for (i, rec) in records.iter().enumerate() {
                if last_valid.is_none_or(|last| i > last) {
                    break;
                }
                let Some((op, offset, len, at)) = decode_record(h, rec) else {
                    recovery
                        .corrupt_log_records
                        .push((h, (i * RECORD_BYTES) as u64));
                    corrupt_here = true;
                    continue;
                };
                let req = IoRequest {
                    tag: 0,
                    offset_bytes: offset,
                    size_bytes: len,
                    mode: op_mode(op),
                };
                dev.issue_at(req, at).map_err(|source| OpenError::Replay {
                    log: wal_path.clone(),
                    source,
                })?;
                valid += RECORD_BYTES as u64;
                recovery.log_records_replayed += 1;
            }
            if corrupt_here {
                // The evidence stays; the live log keeps only valid records,
                // so that the next recovery replays the same ones.
                let kept = wal_path.with_extension("log.damaged");
                fs::copy(&wal_path, &kept).map_err(|e| io_err("cannot keep", &kept, e))?;
                let clean: Vec<u8> = records
                    .iter()
                    .take(last_valid.map_or(0, |l| l + 1))
                    .filter(|r| decode_record(h, r).is_some())
                    .flat_map(|r| r.iter().copied())
                    .collect();
                let tmp = wal_path.with_extension("log.tmp");
                fs::write(&tmp, &clean)
                    .and_then(|()| File::open(&tmp)?.sync_all())
                    .and_then(|()| fs::rename(&tmp, &wal_path))
                    .map_err(|e| io_err("cannot rewrite", &wal_path, e))?;
                fsync_dir(&dir)?;
            }
            if h < gen {
                // A completed generation's log, then the power-cycle boundary
                // its checkpoint was: the live store restored the next
                // generation from the serialised state, and so does this.
                let bytes = dev
                    .checkpoint()
                    .map_err(|e| OpenError::Store(StoreError::Serialise(e)))?;
                dev = SimDevice::restore(cfg.clone(), name.clone(), seed, 1, &bytes)
                    .map_err(|e| OpenError::Store(StoreError::Serialise(e)))?;
            } else {
                valid_len = valid;
                recovery.log_tail_bytes_dropped = tail_bytes;
            }
        }
        let wal_path = dir.join(format!("wal-{gen}.log"));
        // A damaged checkpoint is kept as evidence under another name (it no
        // longer counts as a generation).
        for (g, _) in &damaged {
            let p = dir.join(format!("ckpt-{g}.bin"));
            let _ = fs::rename(&p, dir.join(format!("ckpt-{g}.bin.damaged")));
        }
        // Clean up leftovers of other generations and interrupted
        // checkpoints; the previous generation stays as the fallback.
        for e in fs::read_dir(&dir)
            .map_err(|e| io_err("cannot list", &dir, e))?
            .flatten()
        {
            let n = e.file_name().to_string_lossy().to_string();
            let keep = [gen, gen.saturating_sub(1)]
                .iter()
                .any(|g| n == format!("ckpt-{g}.bin") || n == format!("wal-{g}.log"))
                || n.ends_with(".damaged");
            if (n.starts_with("ckpt-") || n.starts_with("wal-")) && !keep {
                let _ = fs::remove_file(e.path());
            }
        }
        let wal_file = OpenOptions::new()
            .create(true)
            .truncate(false)
            .write(true)
            .open(&wal_path)
            .map_err(|e| io_err("cannot open", &wal_path, e))?;
        wal_file
            .set_len(valid_len)
            .map_err(|e| io_err("cannot truncate", &wal_path, e))?;
        wal_file
            .sync_all()
            .map_err(|e| io_err("cannot sync", &wal_path, e))?;
        fsync_dir(&dir)?;
        let mut wal_file = wal_file;
        use std::io::Seek;
        wal_file
            .seek(std::io::SeekFrom::End(0))
            .map_err(|e| io_err("cannot seek", &wal_path, e))?;

        let trace = match &opts.trace {
            Some(p) => {
                let f = File::create(p).map_err(|e| io_err("cannot create trace", p, e))?;
                Some(
                    TraceWriter::new(BufWriter::with_capacity(1 << 20, f))
                        .map_err(|e| io_err("cannot write trace", p, e))?,
                )
            }
            None => None,
        };
        let base_ns = dev.quiesce_at();
        let mut store = Store {
            dir,
            data,
            size,
            spec,
            seed,
            can_checkpoint,
            checkpoint_records: opts.checkpoint_records,
            wal: Mutex::new(Wal { file: wal_file }),
            inner: Mutex::new(Inner {
                dev,
                log: Vec::with_capacity(64 * 1024),
                records: recovery.log_records_replayed,
                gen,
                base_ns,
                start: Instant::now(),
                trace,
                stats: StoreStats::default(),
                failed: None,
                inflight: BinaryHeap::new(),
                queue_depth: (cfg.host.queue_depth as usize).max(1),
                checkpoint_at: opts.checkpoint_records,
            }),
            recovery,
            faults: opts.faults.clone(),
            poisoned: AtomicBool::new(false),
            poison_reason: Mutex::new(None),
            _lock: lock,
        };
        if store.can_checkpoint {
            store.checkpoint()?;
        }
        store.recovery.millis = t0.elapsed().as_millis();
        Ok(store)
    }

    pub fn size(&self) -> u64 {
        self.size
    }

    pub fn spec(&self) -> &str {
        &self.spec
    }

    pub fn seed(&self) -> u64 {
        self.seed
    }

    pub fn dir(&self) -> &Path {
        &self.dir
    }

    fn lock_inner(&self) -> MutexGuard<'_, Inner> {
        self.inner.lock().unwrap_or_else(|p| p.into_inner())
    }

    fn lock_wal(&self) -> MutexGuard<'_, Wal> {
        self.wal.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Apply one request to the simulator and the log; returns its simulated latency.
    fn apply(&self, op: u8, offset: u64, len: u32) -> Result<(u64, Next), u32> {
        let mut g = self.lock_inner();
        if g.failed.is_some() {
            return Err(EIO);
        }
        let wall = g.base_ns + g.start.elapsed().as_nanos() as u64;
        let mut at = wall.max(g.dev.now_ns());
        while g.inflight.peek().is_some_and(|&Reverse(t)| t <= at) {
            g.inflight.pop();
        }
        if g.inflight.len() >= g.queue_depth {
            if let Some(Reverse(t)) = g.inflight.pop() {
                at = at.max(t);
            }
        }
        let req = IoRequest {
            tag: 0,
            offset_bytes: offset,
            size_bytes: len,
            mode: op_mode(op),
        };
        let done = match g.dev.issue_at(req, at) {
            Ok(d) => d,
            Err(e) => {
                eprintln!("flashlab serve: simulator failed: {e}; answering EIO from now on");
                g.failed = Some(e.to_string());
                return Err(EIO);
            }
        };
        g.inflight.push(Reverse(done));
        let gen = g.gen;
        g.log
            .extend_from_slice(&encode_record(gen, op, offset, len, at));
        g.records += 1;
        let s = &mut g.stats;
        match op {
            OP_READ => {
                s.reads += 1;
                s.read_bytes += len as u64;
            }
            OP_WRITE => {
                s.writes += 1;
                s.write_bytes += len as u64;
            }
            _ => s.trims += 1,
        }
        if let Some(t) = g.trace.as_mut() {
            let _ = t.write(&TraceIo {
                time_ns: at,
                op: TraceOp::Io(op_mode(op)),
                offset_bytes: offset,
                size_bytes: len as u64,
            });
        }
        let next =
            if self.checkpoint_records > 0 && self.can_checkpoint && g.records >= g.checkpoint_at {
                Next::Checkpoint
            } else if g.log.len() >= LOG_BUFFER_LIMIT {
                Next::Sync
            } else {
                Next::Nothing
            };
        Ok((done - at, next))
    }

    /// Run the fault plan (tests) for an IO operation about to happen.
    fn inject(&self, point: IoPoint) -> std::io::Result<()> {
        match &self.faults {
            Some(f) => f.check(point),
            None => Ok(()),
        }
    }

    /// Whether an IO error has made the store refuse writes and FLUSHes.
    pub fn is_read_only(&self) -> bool {
        self.poisoned.load(Ordering::Acquire)
    }

    /// Enter the sticky read-only state (first reason wins); returns `why`.
    fn poison(&self, why: StoreError) -> StoreError {
        let mut r = self.poison_reason.lock().unwrap_or_else(|p| p.into_inner());
        if r.is_none() {
            eprintln!(
                "flashlab serve: {why}; from now on every write and FLUSH fails with EIO (reads go on) until the server is restarted, which recovers what the log proves"
            );
            *r = Some(why.clone());
            self.poisoned.store(true, Ordering::Release);
        }
        why
    }

    /// A write-back step failed: poison the store with it.
    fn poison_step(&self, step: WriteBackStep, e: std::io::Error) -> StoreError {
        self.poison(StoreError::WriteBack {
            step,
            source: Arc::new(e),
        })
    }

    fn check_poison(&self) -> Result<(), StoreError> {
        if !self.is_read_only() {
            return Ok(());
        }
        let r = self.poison_reason.lock().unwrap_or_else(|p| p.into_inner());
        Err(StoreError::ReadOnly {
            cause: r.clone().map(Box::new),
        })
    }

    /// `fdatasync(data.img)`, append `buf` to the log, `fdatasync` the log.
    /// Any failure poisons the store: the kernel may have dropped the pages
    /// it failed to write back, and a partial append leaves a tail that only
    /// recovery may judge.
    fn write_out(&self, wal: &mut Wal, buf: &[u8]) -> Result<(), StoreError> {
        self.inject(IoPoint::DataSync)
            .and_then(|_| self.data.sync_data())
            .map_err(|e| self.poison_step(WriteBackStep::DataSync, e))?;
        if !buf.is_empty() {
            self.inject(IoPoint::LogWrite)
                .and_then(|_| wal.file.write_all(buf))
                .map_err(|e| self.poison_step(WriteBackStep::LogAppend, e))?;
        }
        self.inject(IoPoint::LogSync)
            .and_then(|_| wal.file.sync_data())
            .map_err(|e| self.poison_step(WriteBackStep::LogSync, e))
    }

    /// Make everything applied so far durable: data first, then the log.
    pub fn sync(&self) -> Result<(), StoreError> {
        let mut wal = self.lock_wal();
        self.check_poison()?;
        let buf = std::mem::take(&mut self.lock_inner().log);
        self.write_out(&mut wal, &buf)
    }

    /// Write a checkpoint and start a new log generation.
    pub fn checkpoint(&self) -> Result<(), StoreError> {
        self.checkpoint_if(true)
    }

    /// Checkpoint; unless `force`, only if one is due (several connections
    /// may ask at once).
    ///
    /// Both locks are held throughout, so generation G+1's checkpoint equals
    /// generation G's checkpoint plus its whole log: the log is written out
    /// first, no request is applied meanwhile, and the live device switches
    /// to the restored snapshot only once `ckpt-G+1.bin` is durable. A
    /// failure before the rename leaves generation G (checkpoint + log)
    /// complete and in use, so nothing logged later is lost at restart; the
    /// next attempt comes `checkpoint_records` requests later. A failure
    /// after the rename poisons the store (either generation on disk is
    /// complete, but we no longer know which one the log must follow).
    fn checkpoint_if(&self, force: bool) -> Result<(), StoreError> {
        if !self.can_checkpoint {
            return self.sync();
        }
        let mut wal = self.lock_wal();
        self.check_poison()?;
        let mut g = self.lock_inner();
        if !force && g.records < g.checkpoint_at {
            return Ok(());
        }
        let buf = std::mem::take(&mut g.log);
        self.write_out(&mut wal, &buf)?;
        // The live device continues from exactly what is saved (a checkpoint
        // is a power-cycle boundary for the model).
        let cfg = g.dev.config().clone();
        let name = g.dev.info().name.clone();
        let prepared = g.dev.checkpoint().and_then(|bytes| {
            SimDevice::restore(cfg, name, self.seed, 1, &bytes).map(|d| (bytes, d))
        });
        let old = g.gen;
        let next = old + 1;
        let written = prepared.map_err(|e| (StoreError::Serialise(e), false));
        let written = written.and_then(|(bytes, restored)| {
            self.write_generation(next, &bytes).map(|f| (f, restored))
        });
        let (file, restored) = match written {
            Ok(x) => x,
            Err((e, true)) => return Err(self.poison(e)),
            Err((e, false)) => {
                g.stats.checkpoint_failures += 1;
                g.checkpoint_at = g.records + self.checkpoint_records.max(1);
                eprintln!(
                    "flashlab serve: checkpoint {next} failed ({e}); generation {old} (checkpoint and log) stays complete and in use; next attempt after {} more requests",
                    self.checkpoint_records.max(1)
                );
                return if force { Err(e) } else { Ok(()) };
            }
        };
        g.dev = restored;
        g.base_ns = g.dev.now_ns();
        g.start = Instant::now();
        g.gen = next;
        g.records = 0;
        g.checkpoint_at = self.checkpoint_records;
        g.stats.checkpoints += 1;
        wal.file = file;
        drop(g);
        // Generation `old` stays as the fallback should `next`'s checkpoint
        // be damaged later; the one before it goes.
        if let Some(older) = old.checked_sub(1) {
            let _ = fs::remove_file(self.dir.join(format!("wal-{older}.log")));
            let _ = fs::remove_file(self.dir.join(format!("ckpt-{older}.bin")));
        }
        Ok(())
    }

    /// Make generation `next` durable: its empty log, then its checkpoint
    /// (tmp, fsync, rename), then one directory fsync. Err((why, committed)):
    /// `committed` once the rename happened.
    fn write_generation(&self, next: u64, bytes: &[u8]) -> Result<File, (StoreError, bool)> {
        let tmp = self.dir.join(format!("ckpt-{next}.tmp"));
        let fin = self.dir.join(format!("ckpt-{next}.bin"));
        let wal_path = self.dir.join(format!("wal-{next}.log"));
        let undo = |e: StoreError| {
            let _ = fs::remove_file(&tmp);
            let _ = fs::remove_file(&wal_path);
            (e, false)
        };
        // Without its checkpoint, an empty next log is a leftover recovery deletes.
        let file = self
            .inject(IoPoint::LogCreate)
            .and_then(|_| File::create(&wal_path))
            .and_then(|f| f.sync_all().map(|_| f))
            .map_err(|e| undo(io_err("cannot create", &wal_path, e)))?;
        self.inject(IoPoint::CheckpointWrite)
            .and_then(|_| File::create(&tmp))
            .and_then(|mut f| f.write_all(bytes).map(|_| f))
            .map_err(|e| undo(io_err("cannot write", &tmp, e)))
            .and_then(|f| {
                self.inject(IoPoint::CheckpointSync)
                    .and_then(|_| f.sync_all())
                    .map_err(|e| undo(io_err("cannot sync", &tmp, e)))
            })?;
        fs::rename(&tmp, &fin).map_err(|e| undo(io_err("cannot rename", &tmp, e)))?;
        self.inject(IoPoint::DirSync)
            .map_err(|e| io_err("cannot sync directory", &self.dir, e))
            .and_then(|_| fsync_dir(&self.dir))
            .map_err(|e| (e, true))?;
        Ok(file)
    }

    /// After a request: write out the log if it must be durable (FLUSH, FUA)
    /// or its buffer is full; checkpoint when due (a checkpoint also makes
    /// every request applied before it durable).
    fn after(&self, next: Next, durable: bool) -> Result<(), u32> {
        let r = match next {
            Next::Checkpoint => self.checkpoint_if(false),
            Next::Sync => self.sync(),
            Next::Nothing if durable => self.sync(),
            Next::Nothing => Ok(()),
        };
        r.map_err(|e| {
            eprintln!("flashlab serve: {e}");
            EIO
        })
    }

    /// Current statistics.
    pub fn stats(&self) -> StoreStats {
        let g = self.lock_inner();
        let mut s = g.stats.clone();
        let a = g.dev.accounting();
        s.sim_now_ns = g.dev.now_ns();
        s.waf = g.dev.write_amplification();
        s.gc_foreground = a.gc_foreground;
        s.gc_background = a.gc_background;
        s.gc_relocated_pages = a.gc_relocated_pages;
        s.erases = a.flash_erases.iter().sum();
        s.free_blocks = g.dev.free_blocks();
        s.mapped_pages = g.dev.mapped_pages();
        s.logical_pages = g.dev.geometry().logical_pages;
        s.log_records = g.records;
        s.read_only = self.is_read_only();
        s
    }

    /// The simulator's statistics as JSON (the same as a run's summary).
    pub fn stats_json(&self) -> Option<serde_json::Value> {
        self.lock_inner().dev.stats_json()
    }

    /// Flush the trace file's buffer.
    pub fn flush_trace(&self) {
        if let Some(t) = self.lock_inner().trace.as_mut() {
            let _ = t.flush();
        }
    }

    /// Clean shutdown: checkpoint (or sync) and flush the trace.
    pub fn shutdown(&self) -> Result<(), StoreError> {
        self.flush_trace();
        self.checkpoint()
    }

    /// The identity recorded for the device.
    pub fn identity(&self) -> BTreeMap<String, String> {
        self.lock_inner().dev.info().identity.clone()
    }

    /// Deallocate (or zero) a range of `data.img`. A failure poisons the store.
    fn punch(&self, offset: u64, len: u64) -> Result<(), u32> {
        self.inject(IoPoint::DataWrite).map_err(|e| {
            self.poison_step(WriteBackStep::PunchHole, e);
            EIO
        })?;
        // SAFETY: fallocate on our own open file descriptor.
        let r = unsafe {
            libc::fallocate(
                self.data.as_raw_fd(),
                libc::FALLOC_FL_PUNCH_HOLE | libc::FALLOC_FL_KEEP_SIZE,
                offset as libc::off_t,
                len as libc::off_t,
            )
        };
        if r == 0 {
            return Ok(());
        }
        // No hole punching on this file system: write zeroes.
        let zero = vec![0u8; (len as usize).min(1 << 20)];
        let mut done = 0u64;
        while done < len {
            let n = (len - done).min(zero.len() as u64) as usize;
            self.data
                .write_all_at(&zero[..n], offset + done)
                .map_err(|e| {
                    self.poison_step(WriteBackStep::WriteZeroes, e);
                    EIO
                })?;
            done += n as u64;
        }
        Ok(())
    }

    /// Writes, trims and FLUSHes are refused once the store is read-only.
    fn writable(&self) -> Result<(), u32> {
        if self.is_read_only() {
            Err(EIO)
        } else {
            Ok(())
        }
    }

    fn check(&self, offset: u64, len: u64, write: bool) -> Result<(), u32> {
        match offset.checked_add(len) {
            Some(e) if e <= self.size => Ok(()),
            _ => Err(if write { ENOSPC } else { EINVAL }),
        }
    }
}

impl Backend for Store {
    fn size(&self) -> u64 {
        self.size
    }

    fn read_only(&self) -> bool {
        self.is_read_only()
    }

    fn read(&self, offset: u64, buf: &mut [u8]) -> Result<u64, u32> {
        self.check(offset, buf.len() as u64, false)?;
        self.data.read_exact_at(buf, offset).map_err(|_| EIO)?;
        if self.is_read_only() {
            // Read-only: serve the data, leave the model (and its log) alone.
            return Ok(0);
        }
        let (lat, full) = self.apply(OP_READ, offset, buf.len() as u32)?;
        self.after(full, false)?;
        Ok(lat)
    }

    fn write(&self, offset: u64, data: &[u8], fua: bool) -> Result<u64, u32> {
        self.check(offset, data.len() as u64, true)?;
        self.writable()?;
        self.inject(IoPoint::DataWrite)
            .and_then(|_| self.data.write_all_at(data, offset))
            .map_err(|e| {
                let enospc = e.raw_os_error() == Some(libc::ENOSPC);
                self.poison_step(WriteBackStep::DataWrite, e);
                if enospc {
                    ENOSPC
                } else {
                    EIO
                }
            })?;
        let (lat, full) = self.apply(OP_WRITE, offset, data.len() as u32)?;
        self.after(full, fua)?;
        Ok(lat)
    }

    fn trim(&self, offset: u64, length: u32, fua: bool) -> Result<u64, u32> {
        self.check(offset, length as u64, false)?;
        self.writable()?;
        self.punch(offset, length as u64)?;
        let (lat, full) = self.apply(OP_TRIM, offset, length)?;
        self.after(full, fua)?;
        Ok(lat)
    }

    fn write_zeroes(&self, offset: u64, length: u32, no_hole: bool, fua: bool) -> Result<u64, u32> {
        self.check(offset, length as u64, true)?;
        self.writable()?;
        self.punch(offset, length as u64)?;
        // NO_HOLE: the device programs zeroes; otherwise it unmaps (like TRIM).
        let op = if no_hole { OP_WRITE } else { OP_TRIM };
        let (lat, full) = self.apply(op, offset, length)?;
        self.after(full, fua)?;
        Ok(lat)
    }

    fn flush(&self) -> Result<u64, u32> {
        self.writable()?;
        let lat = {
            let mut g = self.lock_inner();
            g.stats.flushes += 1;
            let now = g.dev.now_ns();
            if let Some(t) = g.trace.as_mut() {
                let _ = t.write(&TraceIo {
                    time_ns: now,
                    op: TraceOp::Flush,
                    offset_bytes: 0,
                    size_bytes: 0,
                });
            }
            g.dev.quiesce_at().saturating_sub(now)
        };
        self.after(Next::Nothing, true)?;
        Ok(lat)
    }
}
