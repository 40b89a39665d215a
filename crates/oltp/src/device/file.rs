//! `--device FILE`: a loop device over a file. flashlab makes a file system
//! on it, which destroys what the file held: a file is used only when
//! flashlab creates it (`--size`, removed again at teardown) or when
//! `--allow-write-to FILE` names it.
//!
//! The path is opened once: a new file with `O_CREAT|O_EXCL|O_NOFOLLOW`
//! (a symlink planted at the path fails the create instead of being
//! followed), an existing one with `O_NOFOLLOW` and checked through the
//! descriptor (a regular file, the one `--allow-write-to` names, backing no
//! loop device). The loop device is attached to that descriptor
//! (`loopdev.rs`), so swapping the path afterwards redirects nothing.

use std::fs::File;
use std::os::fd::AsFd;
use std::os::unix::fs::{MetadataExt, OpenOptionsExt};
use std::path::Path;

use super::{attach_loop_fd, Attached};
use crate::error::{InputError, OltpError, Result};
use crate::teardown::{Teardown, UndoError};

pub fn attach(
    path: &Path,
    size_bytes: Option<u64>,
    allow_write_to: Option<&Path>,
    teardown: &mut Teardown,
) -> Result<Attached> {
    let file = open_image(path, size_bytes, allow_write_to, teardown)?;
    attach_loop_fd(file.as_fd(), path, teardown)
}

/// The image file, opened once: created (sparse, `size_bytes`) when the
/// path is free, or the existing file `--allow-write-to` names. Its removal
/// is registered when it was created.
pub fn open_image(
    path: &Path,
    size_bytes: Option<u64>,
    allow_write_to: Option<&Path>,
    teardown: &mut Teardown,
) -> Result<File> {
    let exists = std::fs::symlink_metadata(path).is_ok();
    if !exists {
        let Some(size) = size_bytes else {
            return Err(OltpError::Input(InputError::DeviceFileMissing {
                path: path.to_path_buf(),
            }));
        };
        let create_err = |e| {
            OltpError::Input(InputError::DeviceFileCreate {
                path: path.to_path_buf(),
                source: e,
            })
        };
        let f = std::fs::OpenOptions::new()
            .read(true)
            .write(true)
            .create_new(true)
            .mode(0o600)
            .custom_flags(libc::O_NOFOLLOW)
            .open(path)
            .map_err(create_err)?;
        let m = f.metadata().map_err(create_err)?;
        let (dev, ino) = (m.dev(), m.ino());
        teardown.note(crate::stale::Record::File {
            path: std::path::absolute(path).unwrap_or_else(|_| path.to_path_buf()),
            dev,
            ino,
        });
        let p = path.to_path_buf();
        teardown.push(format!("remove {}", path.display()), move || {
            // Only the file we created: a path replaced since is left alone.
            match std::fs::symlink_metadata(&p) {
                Ok(m) if m.dev() == dev && m.ino() == ino => {
                    std::fs::remove_file(&p).map_err(|source| UndoError::Remove { path: p, source })
                }
                Ok(_) => Err(UndoError::Remove {
                    path: p,
                    source: std::io::Error::other(
                        "no longer the file flashlab created; left in place",
                    ),
                }),
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(()),
                Err(source) => Err(UndoError::Remove { path: p, source }),
            }
        });
        // Sparse: the file system and the DBMS write what they use.
        f.set_len(size).map_err(|e| {
            OltpError::Input(InputError::DeviceFileSize {
                path: path.to_path_buf(),
                size_bytes: size,
                source: e,
            })
        })?;
        check_no_loop_over(&f, path)?;
        return Ok(f);
    }
    let not_ours = || {
        OltpError::NotOurs(format!(
            "{} exists: flashlab oltp makes a file system on its device, destroying the file's contents; pass --allow-write-to {} to use it anyway, or a new path with --size (e.g. --size 4GiB)",
            path.display(),
            path.display()
        ))
    };
    let Some(allow) = allow_write_to else {
        return Err(not_ours());
    };
    let f = std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK)
        .open(path)
        .map_err(|e| {
            if e.raw_os_error() == Some(libc::ELOOP) {
                OltpError::NotOurs(format!(
                    "{} is a symbolic link; name the file itself with --device and --allow-write-to",
                    path.display()
                ))
            } else {
                OltpError::Input(InputError::DeviceOpen {
                    path: path.to_path_buf(),
                    source: e,
                })
            }
        })?;
    let m = f.metadata().map_err(|e| {
        OltpError::Input(InputError::DeviceOpen {
            path: path.to_path_buf(),
            source: e,
        })
    })?;
    if !m.is_file() {
        return Err(OltpError::Input(InputError::DeviceNotFileOrBlock {
            arg: path.display().to_string(),
        }));
    }
    // The override names this very file (the same inode), whatever the
    // paths look like.
    let named = std::fs::metadata(allow).is_ok_and(|a| a.dev() == m.dev() && a.ino() == m.ino());
    if !named {
        return Err(not_ours());
    }
    check_no_loop_over(&f, path)?;
    Ok(f)
}

/// A file that backs a loop device is that device's storage: a file system
/// made on it corrupts whatever uses the loop device (a mounted ext4). As
/// `run` refuses a block device in use, this refuses the file, whatever
/// `--allow-write-to` says.
fn check_no_loop_over(f: &File, path: &Path) -> Result<()> {
    let loops = flashlab_realdev::safety::loops_over_file(f.as_fd())
        .map_err(|e| OltpError::failed(format!("cannot examine {}", path.display()), e))?;
    if let Some(l) = loops.first() {
        let how = if l.in_use.is_some() {
            "stop using it and detach it"
        } else {
            "detach it"
        };
        return Err(OltpError::NotOurs(format!(
            "refusing to write to {}: {}; {how} first (losetup -d {}); --allow-write-to does not override this",
            path.display(),
            l.reason_about("it"),
            l.loop_dev
        )));
    }
    Ok(())
}
