//! tracefs: finding (or mounting) it, and private instances.
//!
//! Every session works in its own instance
//! (`/sys/kernel/tracing/instances/flashlab-<pid>-<n>`): its own ring
//! buffers, events, filters and pid list, so a user's global tracing (and
//! another flashlab session) is untouched. The instance is removed when the
//! [`Instance`] is dropped: at stop, on error and on unwind.

use std::ffi::CString;
use std::fs;
use std::io::{self, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU32, Ordering};

use crate::{TraceError, Unavailable};

/// Where tracefs lives (and where we mount it when it is not mounted).
pub const TRACEFS: &str = "/sys/kernel/tracing";

/// The fix printed with every tracefs problem.
pub const MOUNT_FIX: &str = "mount it with `mount -t tracefs nodev /sys/kernel/tracing`";

/// Finds tracefs, mounting it at [`TRACEFS`] when it is not mounted.
/// Returns its root and whether we mounted it.
///
/// A mount is left in place (as a distribution's boot mounts it): another
/// flashlab process may have found it mounted a moment later and be
/// tracing in it, and no process can tell when the last user is gone
/// without a shared count. Unmounting at the end of each session raced:
/// one session's unmount under another's start, or EBUSY. A mount that
/// fails because another process mounted tracefs meanwhile (EBUSY) is
/// checked again: then tracefs is there, mounted by someone else.
pub fn ensure_mounted() -> Result<(PathBuf, bool), TraceError> {
    let root = PathBuf::from(TRACEFS);
    if root.join("instances").is_dir() {
        return Ok((root, false));
    }
    // The old location: debugfs with tracing inside.
    let old = Path::new("/sys/kernel/debug/tracing");
    if old.join("instances").is_dir() {
        return Ok((old.to_path_buf(), false));
    }
    if !root.is_dir() {
        return Err(TraceError::Unavailable(Unavailable::NoTracefs));
    }
    let source = CString::new("nodev").unwrap();
    let target = CString::new(TRACEFS).unwrap();
    let fstype = CString::new("tracefs").unwrap();
    // SAFETY: all pointers are valid NUL-terminated strings; data is null.
    let rc = unsafe {
        libc::mount(
            source.as_ptr(),
            target.as_ptr(),
            fstype.as_ptr(),
            0,
            std::ptr::null(),
        )
    };
    if rc != 0 {
        let e = io::Error::last_os_error();
        if e.raw_os_error() == Some(libc::EBUSY) && root.join("instances").is_dir() {
            return Ok((root, false));
        }
        return Err(TraceError::Unavailable(Unavailable::MountFailed(e)));
    }
    if !root.join("instances").is_dir() {
        return Err(TraceError::Unavailable(Unavailable::NoInstances));
    }
    Ok((root, true))
}

static NEXT_INSTANCE: AtomicU32 = AtomicU32::new(0);

/// A private tracefs instance, removed on drop.
pub struct Instance {
    dir: PathBuf,
    removed: bool,
}

impl Instance {
    pub fn create(root: &Path) -> Result<Instance, TraceError> {
        remove_stale(root);
        let name = format!(
            "flashlab-{}-{}",
            std::process::id(),
            NEXT_INSTANCE.fetch_add(1, Ordering::Relaxed)
        );
        let dir = root.join("instances").join(name);
        fs::create_dir(&dir)
            .map_err(|e| TraceError::io(format!("creating {}", dir.display()), e))?;
        Ok(Instance {
            dir,
            removed: false,
        })
    }

    pub fn dir(&self) -> &Path {
        &self.dir
    }

    pub fn path(&self, rel: &str) -> PathBuf {
        self.dir.join(rel)
    }

    /// Writes `value` to a control file of the instance (truncating).
    pub fn set(&self, rel: &str, value: &str) -> Result<(), TraceError> {
        write_file(&self.path(rel), value)
    }

    /// Reads the per-CPU `stats` files: events lost to a full buffer
    /// (`overrun` in overwrite mode, `dropped events` otherwise).
    pub fn lost_events(&self) -> Result<u64, TraceError> {
        let per_cpu = self.path("per_cpu");
        let mut lost = 0u64;
        let entries = fs::read_dir(&per_cpu)
            .map_err(|e| TraceError::io(format!("reading {}", per_cpu.display()), e))?;
        for entry in entries.flatten() {
            let stats = entry.path().join("stats");
            let Ok(text) = fs::read_to_string(&stats) else {
                continue;
            };
            lost = lost.saturating_add(parse_lost(&text));
        }
        Ok(lost)
    }

    /// Disables everything and removes the instance. Idempotent.
    pub fn remove(&mut self) -> Result<(), TraceError> {
        if self.removed {
            return Ok(());
        }
        let _ = write_file(&self.path("tracing_on"), "0");
        let _ = write_file(&self.path("events/enable"), "0");
        let _ = write_file(&self.path("set_event_pid"), "");
        match fs::remove_dir(&self.dir) {
            Ok(()) => {
                self.removed = true;
                Ok(())
            }
            Err(e) if e.kind() == io::ErrorKind::NotFound => {
                self.removed = true;
                Ok(())
            }
            Err(e) => Err(TraceError::io(
                format!("removing tracefs instance {}", self.dir.display()),
                e,
            )),
        }
    }
}

impl Drop for Instance {
    fn drop(&mut self) {
        let _ = self.remove();
    }
}

/// Sums `overrun` and `dropped events` of one CPU's stats text.
pub fn parse_lost(stats: &str) -> u64 {
    let mut lost = 0u64;
    for line in stats.lines() {
        let (key, value) = match line.split_once(':') {
            Some(kv) => kv,
            None => continue,
        };
        if key.trim() == "overrun" || key.trim() == "dropped events" {
            if let Ok(v) = value.trim().parse::<u64>() {
                lost = lost.saturating_add(v);
            }
        }
    }
    lost
}

/// Removes instances left by flashlab processes that no longer exist (a
/// killed run cannot clean up after itself).
fn remove_stale(root: &Path) {
    let Ok(entries) = fs::read_dir(root.join("instances")) else {
        return;
    };
    for entry in entries.flatten() {
        let name = entry.file_name();
        let Some(name) = name.to_str() else { continue };
        let Some(rest) = name.strip_prefix("flashlab-") else {
            continue;
        };
        let Some(pid) = rest.split('-').next().and_then(|p| p.parse::<u32>().ok()) else {
            continue;
        };
        if !Path::new(&format!("/proc/{pid}")).exists() {
            let dir = entry.path();
            let _ = write_file(&dir.join("events/enable"), "0");
            let _ = fs::remove_dir(&dir);
        }
    }
}

pub fn write_file(path: &Path, value: &str) -> Result<(), TraceError> {
    let mut f = fs::OpenOptions::new()
        .write(true)
        .truncate(true)
        .open(path)
        .map_err(|e| TraceError::io(format!("opening {}", path.display()), e))?;
    f.write_all(value.as_bytes()).map_err(|e| {
        TraceError::io(
            format!("writing '{}' to {}", value.trim(), path.display()),
            e,
        )
    })
}

/// True when the kernel has the tracepoint `system/event`.
pub fn has_event(root: &Path, system: &str, event: &str) -> bool {
    root.join("events")
        .join(system)
        .join(event)
        .join("enable")
        .exists()
}

#[cfg(test)]
mod tests {
    #[test]
    fn lost_events_sum_overruns_and_drops() {
        let stats = "entries: 3\noverrun: 5\ncommit overrun: 0\nbytes: 184\n\
                     oldest event ts: 10942.855788\nnow ts: 10943.197456\n\
                     dropped events: 7\nread events: 0\n";
        assert_eq!(super::parse_lost(stats), 12);
    }
}
