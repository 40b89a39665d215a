//! Exclusive locks on a sweep's files that die with their holder.
//!
//! Two sweeps may write into one directory (two CLI runs, or a resumed
//! Dask sweep while the killed client's tasks still run). A point, or the
//! sweep's table, is written by one holder at a time: `flock(2)` on an open
//! descriptor of a lock file. The kernel drops the lock when the descriptor
//! closes, so a killed holder never leaves a stale lock behind (a marker
//! file or a PID would).

use std::fs::{File, OpenOptions};
use std::io;
use std::os::unix::fs::OpenOptionsExt;
use std::os::unix::io::AsRawFd;
use std::path::Path;

/// A held lock; dropping it (or the process dying) releases it.
#[derive(Debug)]
pub struct Lock {
    _file: File,
}

impl Lock {
    /// Takes the exclusive lock on `path` (created if absent), waiting while
    /// another holder has it. `path` must be a regular file: a symlink is
    /// not followed.
    pub fn exclusive(path: &Path) -> io::Result<Lock> {
        let file = OpenOptions::new()
            .read(true)
            .write(true)
            .create(true)
            .truncate(false)
            .mode(0o644)
            .custom_flags(libc::O_NOFOLLOW | libc::O_CLOEXEC)
            .open(path)?;
        loop {
            // SAFETY: flock on a descriptor we own; no memory is shared.
            if unsafe { libc::flock(file.as_raw_fd(), libc::LOCK_EX) } == 0 {
                return Ok(Lock { _file: file });
            }
            let e = io::Error::last_os_error();
            if e.kind() != io::ErrorKind::Interrupted {
                return Err(e);
            }
        }
    }
}
