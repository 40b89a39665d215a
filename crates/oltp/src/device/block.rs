//! `--device /dev/X`: making a file system is a destructive write, so the
//! device passes the same write-safety check as a raw-device run
//! (`flashlab_realdev::open_checked`, docs/safety.md), or `--allow-write-to`
//! names it. mkfs then writes through the descriptor the check examined
//! (`/proc/PID/fd/N`), never through the path again: a device node renamed
//! in between cannot redirect it.

use std::os::fd::{AsRawFd, OwnedFd};
use std::path::{Path, PathBuf};

use super::{block_size_bytes, sysfs_name, Attached};
use crate::error::{InputError, OltpError, Result};
use crate::teardown::Teardown;

pub fn attach(
    path: &Path,
    allow_write_to: Option<&Path>,
    teardown: &mut Teardown,
) -> Result<Attached> {
    let checked = flashlab_realdev::open_checked(path, allow_write_to).map_err(|e| match e {
        flashlab_realdev::CheckError::Open(e) => OltpError::Input(InputError::DeviceOpen {
            path: path.to_path_buf(),
            source: e,
        }),
        flashlab_realdev::CheckError::Refused(e) => OltpError::NotOurs(e.to_string()),
    })?;
    for w in &checked.warnings {
        eprintln!("warning: {w}");
    }
    let rdev = checked.stat.st_rdev;
    let (major, minor) = (libc::major(rdev), libc::minor(rdev));
    // mkfs and mount claim the device exclusively: keep a second,
    // non-exclusive descriptor of the very device the check examined, and
    // give its /proc path to mkfs.
    let pinned: OwnedFd = std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .open(format!("/proc/self/fd/{}", checked.fd.as_raw_fd()))
        .map_err(|e| OltpError::failed(format!("cannot reopen {}", path.display()), e))?
        .into();
    drop(checked);
    let proc_path = PathBuf::from(format!(
        "/proc/{}/fd/{}",
        std::process::id(),
        pinned.as_raw_fd()
    ));
    teardown.push(format!("close {}", path.display()), move || {
        drop(pinned);
        Ok(())
    });
    let name = sysfs_name(major, minor);
    Ok(Attached {
        block_dev: Some(path.to_path_buf()),
        mkfs_path: Some(proc_path),
        major,
        minor,
        size_bytes: name.as_deref().and_then(block_size_bytes).unwrap_or(0),
        sysfs_name: name,
        serve: None,
    })
}
