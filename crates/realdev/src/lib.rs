//! The real-device engine: files and block devices, measured with O_DIRECT.
//!
//! flashlab's executor drives every target through the `flashlab_device::Device`
//! trait; this crate is that trait for real hardware. It is shaped by three
//! needs:
//!
//! - **Honest timings.** IO goes around the page cache (O_DIRECT, aligned
//!   buffers), and each timestamp is taken next to the syscall that issues or
//!   reveals the IO. At queue depth 1 a plain `pread`/`pwrite` ([`sync`]) adds
//!   the fewest instructions between the two clock readings, but the io_uring
//!   engine ([`uring`]) is the default at every depth: measured against fio,
//!   the tool we are compared with, it matches or beats it at QD1 and QD32
//!   (fixed buffers, a registered file, batched submission, no allocation per
//!   IO, a lone IO issued and awaited in two syscalls), while pread fell
//!   behind at QD1. Before the first IO of a run the thread settles
//!   ([`clock`]) so the scheduler does not treat it as busy. Pauses are a sleep followed by a spin ([`clock`]), accurate to a
//!   few microseconds.
//! - **Never destroying data by surprise** (design section 8). Writing to a
//!   block device is refused when it is mounted, stacked on, busy, or carries
//!   any signature libblkid knows ([`blkid`]), unless the user names that very
//!   device with `--allow-write-to` ([`safety`]). The target is opened once;
//!   the check examines that descriptor and the engines write only through
//!   it ([`open_checked`]), so a path switched meanwhile redirects nothing
//!   (docs/safety.md). Files are safe targets:
//!   flashlab creates and fills them itself, and never grows one it did not
//!   create.
//! - **Results that say what was measured.** [`probe`] and every opened
//!   device report size, alignment and an identity (model, serial, queue
//!   settings, file system, kernel, engine) for the results manifest
//!   ([`identity`]).
//!
//! Every error a user can cause is an [`OpenError`] whose `Display` is one
//! line naming the problem and the fix; nothing here panics on user input.

pub mod blkid;
pub mod buffers;
pub mod clock;
mod error;
pub mod identity;
mod open;
pub mod safety;
pub mod sync;
mod sys;
pub mod uring;

pub use sys::LoopInfo64;

use std::path::{Path, PathBuf};

use flashlab_device::{Device, DeviceInfo};

pub use error::{OpenError, OpenErrorKind};
pub use open::{MAX_IO_BYTES, MAX_OUTSTANDING};
pub use safety::{open_checked, CheckError, CheckedDevice};
pub use sync::SyncEngine;
pub use uring::UringEngine;

/// Which engine drives the device.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum Engine {
    /// io_uring at every queue depth, falling back to sync (with a warning)
    /// when io_uring is unavailable. At QD1 io_uring was measured faster than
    /// pread on the loop devices we test on (README, "Checked against fio").
    #[default]
    Auto,
    Sync,
    IoUring,
}

impl Engine {
    pub fn name(self) -> &'static str {
        match self {
            Engine::Auto => "auto",
            Engine::Sync => "sync",
            Engine::IoUring => "io_uring",
        }
    }
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct OpenOptions {
    pub path: PathBuf,
    /// The run writes or trims: open read-write, and check safety for block devices.
    pub write: bool,
    pub engine: Engine,
    /// Streams x queue depth.
    pub max_outstanding: usize,
    /// Largest IO of the run (the buffer size of each slot).
    pub max_io_bytes: u32,
    /// O_DIRECT (default true); false measures through the page cache.
    pub direct: bool,
    /// The device the user explicitly allowed to be overwritten.
    pub allow_write_to: Option<PathBuf>,
    /// Create (and fill) the file if it does not exist.
    pub create_size_bytes: Option<u64>,
}

impl OpenOptions {
    /// Read-only, one outstanding IO of up to 1 MiB, O_DIRECT, automatic engine.
    pub fn new(path: impl Into<PathBuf>) -> OpenOptions {
        OpenOptions {
            path: path.into(),
            write: false,
            engine: Engine::Auto,
            max_outstanding: 1,
            max_io_bytes: 1 << 20,
            direct: true,
            allow_write_to: None,
            create_size_bytes: None,
        }
    }
}

pub struct Opened {
    pub device: Box<dyn Device>,
    /// For the CLI to print (overridden safety refusals, created files, tmpfs...).
    pub warnings: Vec<String>,
}

fn sync_engine(t: open::Target, opts: &OpenOptions) -> Result<SyncEngine, OpenError> {
    SyncEngine::new(t, opts.max_outstanding, opts.max_io_bytes)
        .ok_or_else(|| OpenError::new(OpenErrorKind::Io, "cannot allocate IO buffers"))
}

fn uring_error(display: &str, e: &std::io::Error) -> OpenError {
    OpenError::unsupported(format!(
        "cannot set up io_uring for {display} ({e}); check that io_uring is enabled \
         (sysctl kernel.io_uring_disabled) or pass --engine sync"
    ))
}

/// Open the synchronous engine on `opts.path` (whatever `opts.engine` says).
pub fn open_sync(opts: &OpenOptions) -> Result<(SyncEngine, Vec<String>), OpenError> {
    let (t, warnings) = open::open_target(opts)?;
    Ok((sync_engine(t, opts)?, warnings))
}

/// Open the io_uring engine on `opts.path` (whatever `opts.engine` says).
pub fn open_uring(opts: &OpenOptions) -> Result<(UringEngine, Vec<String>), OpenError> {
    let (t, warnings) = open::open_target(opts)?;
    let display = t.display.clone();
    let e = UringEngine::new(t, opts.max_outstanding, opts.max_io_bytes)
        .map_err(|e| uring_error(&display, &e.error))?;
    Ok((e, warnings))
}

/// Open a file or block device for a run: the safety check (writes to block
/// devices), file creation, O_DIRECT, the engine.
pub fn open(opts: &OpenOptions) -> Result<Opened, OpenError> {
    open_with_progress(opts, &mut |_, _| {})
}

/// [`open`], calling `fill_progress(bytes_written, bytes_total)` while it
/// fills a file it creates (`create_size_bytes`): a multi-GiB fill takes
/// minutes and should show that it moves.
pub fn open_with_progress(
    opts: &OpenOptions,
    fill_progress: &mut dyn FnMut(u64, u64),
) -> Result<Opened, OpenError> {
    let engine = match opts.engine {
        Engine::Auto => Engine::IoUring,
        e => e,
    };
    let (t, mut warnings) = open::open_target_with_progress(opts, fill_progress)?;
    let device: Box<dyn Device> = match engine {
        Engine::IoUring => match UringEngine::new(t, opts.max_outstanding, opts.max_io_bytes) {
            Ok(e) => Box::new(e),
            Err(fail) if opts.engine == Engine::Auto => {
                warnings.push(format!(
                    "io_uring is unavailable ({}); using the synchronous engine, which issues one IO at a time",
                    fail.error
                ));
                Box::new(sync_engine(fail.target, opts)?)
            }
            Err(fail) => return Err(uring_error(&fail.target.display, &fail.error)),
        },
        _ => Box::new(sync_engine(t, opts)?),
    };
    Ok(Opened { device, warnings })
}

/// Size, alignment and identity without opening for IO (used by --dry-run and
/// validation); never writes.
pub fn probe(path: &Path) -> Result<DeviceInfo, OpenError> {
    open::probe(path)
}

/// The safety check alone (used by dry runs to say whether a real run would be
/// refused). Files and missing paths (which would become files) pass with no
/// warnings; block devices are examined as in [`open`] with `write: true`.
pub fn check_write_safety(
    path: &Path,
    allow_write_to: Option<&Path>,
) -> Result<Vec<String>, OpenError> {
    safety::check_write_safety(path, allow_write_to)
}
