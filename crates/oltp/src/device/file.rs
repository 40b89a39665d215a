//! `--device FILE`: a loop device over a file. flashlab makes a file system
//! on it, which destroys what the file held: a file is used only when
//! flashlab creates it (`--size`, removed again at teardown) or when
//! `--allow-write-to FILE` names it.

use std::path::Path;

use super::{attach_loop, describe_block, Attached};
use crate::error::{InputError, OltpError, Result};
use crate::teardown::{Teardown, UndoError};

pub fn attach(
    path: &Path,
    size_bytes: Option<u64>,
    allow_write_to: Option<&Path>,
    teardown: &mut Teardown,
) -> Result<Attached> {
    let exists = path.exists();
    let allowed = allow_write_to.is_some_and(|a| {
        std::fs::canonicalize(a).ok().is_some()
            && std::fs::canonicalize(a).ok() == std::fs::canonicalize(path).ok()
    });
    if exists && !allowed {
        return Err(OltpError::NotOurs(format!(
            "{} exists: flashlab oltp makes a file system on its device, destroying the file's contents; pass --allow-write-to {} to use it anyway, or a new path with --size (e.g. --size 4GiB)",
            path.display(),
            path.display()
        )));
    }
    if !exists {
        let Some(size) = size_bytes else {
            return Err(OltpError::Input(InputError::DeviceFileMissing {
                path: path.to_path_buf(),
            }));
        };
        // Sparse: the file system and the DBMS write what they use.
        let f = std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .open(path)
            .map_err(|e| {
                OltpError::Input(InputError::DeviceFileCreate {
                    path: path.to_path_buf(),
                    source: e,
                })
            })?;
        let p = path.to_path_buf();
        teardown.push(format!("remove {}", path.display()), move || {
            std::fs::remove_file(&p).map_err(|source| UndoError::Remove { path: p, source })
        });
        f.set_len(size).map_err(|e| {
            OltpError::Input(InputError::DeviceFileSize {
                path: path.to_path_buf(),
                size_bytes: size,
                source: e,
            })
        })?;
    }
    let dev = attach_loop(path, teardown)?;
    describe_block(&dev)
}
