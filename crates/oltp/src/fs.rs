//! The file system (mkfs + mount, unmount at teardown) and the block
//! scheduler (set where the device offers a choice, restored at teardown).

use std::path::{Path, PathBuf};
use std::process::Command;

use crate::error::{InputError, OltpError, Result};
use crate::proc;
use crate::teardown::{Teardown, UndoError};

/// The file systems flashlab oltp makes. The paper compares ext2 with the
/// log-structured nilfs2; this kernel has no nilfs2, so btrfs stands in for
/// copy-on-write placement.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum FsKind {
    Ext2,
    Ext4,
    Xfs,
    Btrfs,
}

impl FsKind {
    pub fn parse(s: &str) -> Result<FsKind> {
        Ok(match s {
            "ext2" => FsKind::Ext2,
            "ext4" => FsKind::Ext4,
            "xfs" => FsKind::Xfs,
            "btrfs" => FsKind::Btrfs,
            "nilfs2" => return Err(OltpError::Input(InputError::NoNilfs2)),
            _ => {
                return Err(OltpError::Input(InputError::UnsupportedFs {
                    fs: s.to_string(),
                }))
            }
        })
    }

    pub fn name(self) -> &'static str {
        match self {
            FsKind::Ext2 => "ext2",
            FsKind::Ext4 => "ext4",
            FsKind::Xfs => "xfs",
            FsKind::Btrfs => "btrfs",
        }
    }

    fn tool(self) -> (&'static str, &'static str) {
        match self {
            FsKind::Ext2 => ("mkfs.ext2", "e2fsprogs"),
            FsKind::Ext4 => ("mkfs.ext4", "e2fsprogs"),
            FsKind::Xfs => ("mkfs.xfs", "xfsprogs"),
            FsKind::Btrfs => ("mkfs.btrfs", "btrfs-progs"),
        }
    }

    /// The mkfs tool, or a one-line error naming its package.
    pub fn find_mkfs(self) -> Result<PathBuf> {
        let (tool, package) = self.tool();
        proc::find_tool(tool, package, "to make the file system given by --fs")
    }

    /// 4 KiB blocks as in the paper; no discard of the whole device (a
    /// simulated SSD would count it as a TRIM of every page).
    fn args(self) -> &'static [&'static str] {
        match self {
            FsKind::Ext2 | FsKind::Ext4 => &["-F", "-q", "-b", "4096", "-E", "nodiscard"],
            FsKind::Xfs => &["-f", "-q", "-K"],
            FsKind::Btrfs => &["-f", "-q", "-K"],
        }
    }
}

pub fn mkfs(kind: FsKind, tool: &Path, dev: &Path) -> Result<()> {
    proc::run(
        Command::new(tool).args(kind.args()).arg(dev),
        &format!("mkfs.{}", kind.name()),
    )?;
    Ok(())
}

/// Mounts `dev` on `dir` and registers the unmount.
pub fn mount(kind: FsKind, dev: &Path, dir: &Path, teardown: &mut Teardown) -> Result<()> {
    let mount = proc::find_tool("mount", "mount", "to mount the file system")?;
    let umount = proc::find_tool("umount", "mount", "to unmount the file system")?;
    std::fs::create_dir_all(dir)
        .map_err(|e| OltpError::failed(format!("cannot create {}", dir.display()), e))?;
    proc::run(
        Command::new(mount)
            .arg("-t")
            .arg(kind.name())
            .arg(dev)
            .arg(dir),
        &format!("mount -t {}", kind.name()),
    )?;
    teardown.note(crate::stale::Record::Mount {
        dir: std::fs::canonicalize(dir).unwrap_or_else(|_| dir.to_path_buf()),
    });
    let d = dir.to_path_buf();
    teardown.push(format!("unmount {}", dir.display()), move || {
        // Unmounting writes back what the page cache holds; a busy mount
        // (a process that has not exited yet) is retried for a while.
        let mut last = String::new();
        for _ in 0..100 {
            match Command::new(&umount).arg(&d).output() {
                Ok(o) if o.status.success() => return Ok(()),
                Ok(o) => last = String::from_utf8_lossy(&o.stderr).trim().to_string(),
                Err(e) => last = e.to_string(),
            }
            std::thread::sleep(std::time::Duration::from_millis(200));
        }
        Err(UndoError::Unmount { dir: d, last })
    });
    Ok(())
}

/// The whole disk's sysfs name for a partition (sda1 -> sda).
pub fn disk_of(name: &str) -> String {
    let part = Path::new("/sys/class/block").join(name).join("partition");
    if part.exists() {
        if let Ok(link) = std::fs::canonicalize(Path::new("/sys/class/block").join(name)) {
            if let Some(parent) = link.parent().and_then(|p| p.file_name()) {
                return parent.to_string_lossy().into_owned();
            }
        }
    }
    name.to_string()
}

/// The schedulers a device offers and the current one ("[none] mq-deadline").
pub fn schedulers(name: &str) -> Option<(Vec<String>, String)> {
    let text =
        std::fs::read_to_string(format!("/sys/block/{}/queue/scheduler", disk_of(name))).ok()?;
    let mut all = Vec::new();
    let mut current = String::new();
    for w in text.split_whitespace() {
        if let Some(c) = w.strip_prefix('[').and_then(|w| w.strip_suffix(']')) {
            current = c.to_string();
            all.push(c.to_string());
        } else {
            all.push(w.to_string());
        }
    }
    Some((all, current))
}

/// Sets the scheduler and registers restoring the previous one. Returns the previous.
pub fn set_scheduler(name: &str, wanted: &str, teardown: &mut Teardown) -> Result<String> {
    let disk = disk_of(name);
    let Some((all, current)) = schedulers(name) else {
        return Err(OltpError::Input(InputError::NoSchedulerChoice {
            disk: disk.to_string(),
        }));
    };
    if !all.iter().any(|s| s == wanted) {
        return Err(OltpError::Input(InputError::UnknownScheduler {
            wanted: wanted.to_string(),
            disk: disk.to_string(),
            offered: all,
        }));
    }
    let path = PathBuf::from(format!("/sys/block/{disk}/queue/scheduler"));
    std::fs::write(&path, wanted).map_err(|e| {
        OltpError::failed(format!("cannot set the scheduler in {}", path.display()), e)
    })?;
    if current != wanted {
        let prev = current.clone();
        teardown.push(format!("restore {disk}'s scheduler to {prev}"), move || {
            std::fs::write(&path, &prev).map_err(UndoError::RestoreScheduler)
        });
    }
    Ok(current)
}

/// A file system frozen with FIFREEZE: every dirty page has been written
/// back and no new write reaches the device until it is thawed (on drop).
/// Used around the start and the end of the traced window, so that the
/// /sys/block statistics read inside it count exactly the traced requests.
pub struct Frozen {
    dir: std::fs::File,
}

const FIFREEZE: libc::c_ulong = 0xC004_5877;
const FITHAW: libc::c_ulong = 0xC004_5878;

pub fn freeze(dir: &Path) -> Result<Frozen> {
    use std::os::fd::AsRawFd;
    let f = std::fs::File::open(dir)
        .map_err(|e| OltpError::failed(format!("cannot open {}", dir.display()), e))?;
    // SAFETY: FIFREEZE on a descriptor of the mount point; no memory is passed.
    let r = unsafe { libc::ioctl(f.as_raw_fd(), FIFREEZE as _, 0) };
    if r != 0 {
        return Err(OltpError::failed(
            format!("cannot freeze {}", dir.display()),
            std::io::Error::last_os_error(),
        ));
    }
    Ok(Frozen { dir: f })
}

impl Drop for Frozen {
    fn drop(&mut self) {
        use std::os::fd::AsRawFd;
        // SAFETY: FITHAW on the descriptor we froze through.
        unsafe {
            libc::ioctl(self.dir.as_raw_fd(), FITHAW as _, 0);
        }
    }
}
