//! `--mount DIR`: an existing file system; no device set-up and no mkfs.
//! The physical trace follows the block device the file system is mounted
//! from, when it has one (a tmpfs or an overlay has none).

use std::path::{Path, PathBuf};

use super::{sysfs_name, Attached};
use crate::error::{InputError, OltpError, Result};

/// One mount, as realdev's safety check reads it.
pub use flashlab_realdev::safety::MountEntry;

/// /proc/self/mountinfo, parsed by realdev's parser (the one the
/// write-safety check uses; octal escapes in paths decoded).
pub fn mounts() -> Vec<MountEntry> {
    let text = std::fs::read_to_string("/proc/self/mountinfo").unwrap_or_default();
    flashlab_realdev::safety::parse_mountinfo(&text)
}

/// The mount holding `dir` (the longest mount point that prefixes it).
pub fn mount_of(dir: &Path) -> Option<MountEntry> {
    let canon = std::fs::canonicalize(dir).ok()?;
    mounts()
        .into_iter()
        .filter(|m| canon.starts_with(&m.mount_point))
        .max_by_key(|m| m.mount_point.as_os_str().len())
}

pub fn attach(dir: &Path) -> Result<(Attached, MountEntry)> {
    if !dir.is_dir() {
        return Err(OltpError::Input(InputError::MountNotDir {
            dir: dir.to_path_buf(),
        }));
    }
    let m = mount_of(dir).ok_or_else(|| {
        OltpError::Input(InputError::MountUnknownFs {
            dir: dir.to_path_buf(),
        })
    })?;
    let name = if m.major == 0 {
        None
    } else {
        sysfs_name(m.major, m.minor)
    };
    let free = statvfs_free(dir).unwrap_or(0);
    Ok((
        Attached {
            block_dev: name.as_ref().map(|n| PathBuf::from(format!("/dev/{n}"))),
            mkfs_path: None,
            major: m.major,
            minor: m.minor,
            // What the run can use: the file system's free space.
            size_bytes: free,
            sysfs_name: name,
            serve: None,
        },
        m,
    ))
}

/// Free bytes of the file system holding `dir`.
pub fn statvfs_free(dir: &Path) -> Option<u64> {
    let c = std::ffi::CString::new(dir.as_os_str().as_encoded_bytes()).ok()?;
    // SAFETY: statvfs fills the struct we pass.
    unsafe {
        let mut s: libc::statvfs = std::mem::zeroed();
        if libc::statvfs(c.as_ptr(), &mut s) != 0 {
            return None;
        }
        Some(s.f_bavail as u64 * s.f_frsize as u64)
    }
}
