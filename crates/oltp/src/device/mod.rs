//! The device under test, one file per backend: a file behind a loop device
//! (`file.rs`), a block device after the write-safety check (`block.rs`), a
//! simulated SSD served by `flashlab serve` through nbdfuse and a loop device
//! (`sim.rs`), or an existing file system (`mount.rs`). Each backend pushes
//! the undo of every step it takes on the teardown stack.

use std::path::{Path, PathBuf};

use crate::error::{InputError, OltpError, Result};
use crate::teardown::UndoError;

pub mod block;
pub mod file;
pub mod loopdev;
pub mod mount;
pub mod sim;

/// What `--device` / `--mount` named.
#[derive(Clone, Debug, PartialEq, serde::Serialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum DeviceArg {
    /// A regular file (created with `--size` when missing).
    File { path: PathBuf },
    /// A block device (`/dev/...`).
    Block { path: PathBuf },
    /// A simulated SSD: `sim:PROFILE[,key=value...]`.
    Sim { spec: String },
    /// An existing file system: no device set-up, no mkfs.
    Mount { dir: PathBuf },
}

impl DeviceArg {
    pub fn parse(device: Option<&str>, mount: Option<&Path>) -> Result<DeviceArg> {
        match (device, mount) {
            (Some(_), Some(_)) => Err(OltpError::Input(InputError::DeviceAndMount)),
            (None, None) => Err(OltpError::Input(InputError::NoDevice)),
            (None, Some(dir)) => Ok(DeviceArg::Mount {
                dir: dir.to_path_buf(),
            }),
            (Some(d), None) => {
                if let Some(spec) = d.strip_prefix("sim:") {
                    if spec.is_empty() {
                        return Err(OltpError::Input(InputError::SimNoProfile));
                    }
                    return Ok(DeviceArg::Sim {
                        spec: spec.to_string(),
                    });
                }
                let path = PathBuf::from(d);
                match std::fs::metadata(&path) {
                    Ok(m) if is_block(&m) => Ok(DeviceArg::Block { path }),
                    Ok(m) if m.is_file() => Ok(DeviceArg::File { path }),
                    Ok(_) => Err(OltpError::Input(InputError::DeviceNotFileOrBlock {
                        arg: d.to_string(),
                    })),
                    Err(_) if d.starts_with("/dev/") => {
                        Err(OltpError::Input(InputError::DeviceMissing {
                            arg: d.to_string(),
                        }))
                    }
                    Err(_) => Ok(DeviceArg::File { path }),
                }
            }
        }
    }

    pub fn describe(&self) -> String {
        match self {
            DeviceArg::File { path } => path.display().to_string(),
            DeviceArg::Block { path } => path.display().to_string(),
            DeviceArg::Sim { spec } => format!("sim:{spec}"),
            DeviceArg::Mount { dir } => format!("mount:{}", dir.display()),
        }
    }
}

fn is_block(m: &std::fs::Metadata) -> bool {
    use std::os::unix::fs::FileTypeExt;
    m.file_type().is_block_device()
}

/// A block device ready for mkfs (or the file system of `--mount`).
#[derive(Clone, Debug, Default, serde::Serialize)]
pub struct Attached {
    /// The block device the file system lives on (a loop device for files and sim).
    pub block_dev: Option<PathBuf>,
    /// The path mkfs is given: for a checked block device, the descriptor
    /// the safety check examined (`/proc/PID/fd/N`).
    pub mkfs_path: Option<PathBuf>,
    /// Its major:minor, for the block tracepoints.
    pub major: u32,
    pub minor: u32,
    /// Its name under /sys/block or /sys/class/block (loop3, sdb1).
    pub sysfs_name: Option<String>,
    pub size_bytes: u64,
    /// The sim's serve process (statistics on SIGUSR1).
    #[serde(skip)]
    pub serve: Option<sim::ServeHandle>,
}

/// The major:minor of a block device node.
pub fn rdev_of(path: &Path) -> Result<(u32, u32)> {
    use std::os::unix::fs::MetadataExt;
    let m = std::fs::metadata(path)
        .map_err(|e| OltpError::failed(format!("cannot stat {}", path.display()), e))?;
    let rdev = m.rdev();
    Ok((libc::major(rdev), libc::minor(rdev)))
}

/// The kernel's name of a block device (loop3, sda1) from its major:minor.
pub fn sysfs_name(major: u32, minor: u32) -> Option<String> {
    let link = std::fs::read_link(format!("/sys/dev/block/{major}:{minor}")).ok()?;
    link.file_name().map(|n| n.to_string_lossy().into_owned())
}

/// The size of a block device in bytes (sysfs counts 512-byte sectors).
pub fn block_size_bytes(name: &str) -> Option<u64> {
    std::fs::read_to_string(format!("/sys/class/block/{name}/size"))
        .ok()?
        .trim()
        .parse::<u64>()
        .ok()
        .map(|s| s * 512)
}

/// Attaches a loop device to the file open on `file` (never to a path:
/// `loopdev.rs`), registers its detach, and describes it for mkfs and
/// mount, which get the loop device's `/proc/PID/fd/N`.
pub fn attach_loop_fd(
    file: std::os::fd::BorrowedFd<'_>,
    display: &Path,
    teardown: &mut crate::teardown::Teardown,
) -> Result<Attached> {
    let dev = loopdev::attach_fd(file, display)?;
    if let Ok(st) = loopdev::fstat(file) {
        teardown.note(crate::stale::Record::Loop {
            dev: dev.path.clone(),
            file_dev: st.st_dev,
            file_ino: st.st_ino,
        });
    }
    let (major, minor) = (dev.major, dev.minor);
    let name = sysfs_name(major, minor);
    let a = Attached {
        block_dev: Some(dev.path.clone()),
        mkfs_path: Some(dev.proc_path()),
        major,
        minor,
        size_bytes: name.as_deref().and_then(block_size_bytes).unwrap_or(0),
        sysfs_name: name,
        serve: None,
    };
    teardown.push(format!("detach {}", dev.path.display()), move || {
        let r = dev.detach().map_err(|_| UndoError::Detach {
            dev: dev.path.clone(),
        });
        drop(dev);
        r
    });
    Ok(a)
}

/// Fills in major:minor, sysfs name and size of a block device node.
pub fn describe_block(dev: &Path) -> Result<Attached> {
    let (major, minor) = rdev_of(dev)?;
    let name = sysfs_name(major, minor);
    let size = name.as_deref().and_then(block_size_bytes).unwrap_or(0);
    Ok(Attached {
        block_dev: Some(dev.to_path_buf()),
        mkfs_path: Some(dev.to_path_buf()),
        major,
        minor,
        sysfs_name: name,
        size_bytes: size,
        serve: None,
    })
}
