//! What a killed run left behind, undone by the next one.
//!
//! Every run writes, as it sets things up, one line per step that changes
//! the machine to `/var/tmp/flashlab-oltp/PID/record.jsonl` (a process it
//! started, a mount, a loop device, a file it created, a cluster outside
//! the run directory). The teardown stack undoes them in a live run; a run
//! killed with SIGKILL cannot, and PostgreSQL, serve, nbdfuse, the mounts
//! and the loop device stay. The next `flashlab oltp` (or `flashlab oltp
//! --cleanup`) finds run directories whose PID is dead (or now another
//! process: the record's first line holds the owner's start time) and
//! undoes their records newest first, saying what it removed.
//!
//! Each undo re-checks what it acts on: a process is signalled only if its
//! start time is still the recorded one, a loop device is detached only
//! while it is over the recorded file (st_dev, st_ino), a file is removed
//! only if it is still the recorded inode, and the run directory is removed
//! only when nothing is mounted under it any more.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use serde::{Deserialize, Serialize};

/// The directory holding every run's private directory.
pub const ROOT: &str = "/var/tmp/flashlab-oltp";
/// The record's file name inside a run directory.
pub const RECORD: &str = "record.jsonl";

/// One step of a run's set-up, as the next run needs it to undo it.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Record {
    /// The run itself (the first line): its PID's start time.
    Owner { pid: u32, start_ticks: u64 },
    /// A process the run started, and the signal that stops it cleanly.
    Process {
        what: String,
        pid: u32,
        start_ticks: u64,
        signal: i32,
    },
    /// A file system mounted on `dir`.
    Mount { dir: PathBuf },
    /// The nbdfuse mount on `dir`.
    FuseMount { dir: PathBuf },
    /// A loop device over the file (st_dev, st_ino).
    Loop {
        dev: PathBuf,
        file_dev: u64,
        file_ino: u64,
    },
    /// A file the run created (the `--size` image).
    File { path: PathBuf, dev: u64, ino: u64 },
    /// A PostgreSQL cluster outside the run directory (`--mount`), removed
    /// only while it holds flashlab's marker.
    Cluster { pgdata: PathBuf },
}

/// The append-only record of one run.
pub struct Recorder {
    file: std::fs::File,
}

impl Recorder {
    /// Starts the record in `run_dir` with the owner line.
    pub fn create(run_dir: &Path) -> std::io::Result<Recorder> {
        let file = std::fs::OpenOptions::new()
            .append(true)
            .create_new(true)
            .open(run_dir.join(RECORD))?;
        let mut r = Recorder { file };
        let pid = std::process::id();
        r.note(&Record::Owner {
            pid,
            start_ticks: start_ticks(pid).unwrap_or(0),
        });
        Ok(r)
    }

    /// Appends one line. Best effort: a record that cannot be written costs
    /// only the next run's cleanup of this step, never this run.
    pub fn note(&mut self, r: &Record) {
        let mut line = serde_json::to_vec(r).expect("serializes");
        line.push(b'\n');
        let _ = self.file.write_all(&line);
    }
}

/// Field 22 of /proc/PID/stat: the process's start time in clock ticks
/// after boot; with the PID, it names one process for the machine's uptime.
pub fn start_ticks(pid: u32) -> Option<u64> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    // The command name may hold spaces and parentheses: fields follow the last ')'.
    let rest = &stat[stat.rfind(')')? + 1..];
    rest.split_whitespace().nth(19)?.parse().ok()
}

fn is_same_process(pid: u32, ticks: u64) -> bool {
    start_ticks(pid).is_some_and(|t| t == ticks)
}

/// Whether the process is gone (or a zombie waiting for init).
fn is_gone(pid: u32) -> bool {
    match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        Ok(s) => s
            .rfind(')')
            .and_then(|i| s[i + 1..].split_whitespace().next())
            .is_some_and(|st| st == "Z" || st == "X"),
        Err(_) => true,
    }
}

fn stop_process(what: &str, pid: u32, ticks: u64, signal: i32) -> Option<String> {
    if !is_same_process(pid, ticks) || is_gone(pid) {
        return None;
    }
    // SAFETY: kill(2); the start time identified the recorded process.
    unsafe { libc::kill(pid as libc::pid_t, signal) };
    let end = Instant::now() + Duration::from_secs(60);
    while Instant::now() < end {
        if is_gone(pid) {
            return Some(format!("stopped {what} (pid {pid})"));
        }
        std::thread::sleep(Duration::from_millis(100));
    }
    if is_same_process(pid, ticks) {
        // SAFETY: as above; it ignored the clean stop for a minute.
        unsafe { libc::kill(pid as libc::pid_t, libc::SIGKILL) };
    }
    Some(format!(
        "killed {what} (pid {pid}) after it ignored signal {signal} for 60 s"
    ))
}

fn is_mounted(dir: &Path) -> bool {
    let Ok(c) = std::fs::canonicalize(dir) else {
        return false;
    };
    crate::device::mount::mounts()
        .iter()
        .any(|m| m.mount_point == c)
}

fn unmount(tool: &str, args: &[&str], dir: &Path) -> Option<String> {
    if !is_mounted(dir) {
        return None;
    }
    for _ in 0..50 {
        let _ = std::process::Command::new(tool)
            .args(args)
            .arg(dir)
            .stderr(std::process::Stdio::null())
            .status();
        if !is_mounted(dir) {
            return Some(format!("unmounted {}", dir.display()));
        }
        std::thread::sleep(Duration::from_millis(200));
    }
    Some(format!("could not unmount {} (still busy)", dir.display()))
}

fn detach(dev: &Path, file_dev: u64, file_ino: u64) -> Option<String> {
    use std::os::fd::{AsFd, AsRawFd};
    let f = std::fs::File::open(dev).ok()?;
    let (d, i) = crate::device::loopdev::backing_file_id(f.as_fd()).ok()?;
    if (d, i) != (file_dev, file_ino) {
        return None;
    }
    // SAFETY: LOOP_CLR_FD takes no argument; the backing was checked above.
    let rc = unsafe { libc::ioctl(f.as_raw_fd(), 0x4C01 as _, 0) };
    Some(if rc == 0 {
        format!("detached {}", dev.display())
    } else {
        format!(
            "could not detach {}: {}",
            dev.display(),
            std::io::Error::last_os_error()
        )
    })
}

fn remove_file(path: &Path, dev: u64, ino: u64) -> Option<String> {
    use std::os::unix::fs::MetadataExt;
    let m = std::fs::symlink_metadata(path).ok()?;
    if (m.dev(), m.ino()) != (dev, ino) {
        return None;
    }
    Some(match std::fs::remove_file(path) {
        Ok(()) => format!("removed {}", path.display()),
        Err(e) => format!("could not remove {}: {e}", path.display()),
    })
}

fn remove_cluster(pgdata: &Path) -> Option<String> {
    if !pgdata.join(crate::postgres::MARKER).exists() {
        return None;
    }
    Some(match std::fs::remove_dir_all(pgdata) {
        Ok(()) => format!("removed the cluster {}", pgdata.display()),
        Err(e) => format!("could not remove {}: {e}", pgdata.display()),
    })
}

/// Undoes one dead run's records newest first, then removes its directory
/// (only once nothing is mounted under it). Returns what it did.
pub fn undo_run(run_dir: &Path) -> Vec<String> {
    let records: Vec<Record> = std::fs::read_to_string(run_dir.join(RECORD))
        .unwrap_or_default()
        .lines()
        .filter_map(|l| serde_json::from_str(l).ok())
        .collect();
    let mut done = Vec::new();
    for r in records.iter().rev() {
        let did = match r {
            Record::Owner { .. } => None,
            Record::Process {
                what,
                pid,
                start_ticks,
                signal,
            } => stop_process(what, *pid, *start_ticks, *signal),
            Record::Mount { dir } => unmount("umount", &[], dir),
            Record::FuseMount { dir } => unmount("fusermount3", &["-u"], dir),
            Record::Loop {
                dev,
                file_dev,
                file_ino,
            } => detach(dev, *file_dev, *file_ino),
            Record::File { path, dev, ino } => remove_file(path, *dev, *ino),
            Record::Cluster { pgdata } => remove_cluster(pgdata),
        };
        done.extend(did);
    }
    // Whatever is still mounted under it (a run of an older version, with
    // no record), deepest first; the directory itself only when none is left:
    // removing it recursively would otherwise delete a mounted file system's files.
    let Ok(canon) = std::fs::canonicalize(run_dir) else {
        return done;
    };
    let mut under: Vec<PathBuf> = crate::device::mount::mounts()
        .into_iter()
        .filter(|m| m.mount_point.starts_with(&canon))
        .map(|m| m.mount_point)
        .collect();
    under.sort_by_key(|p| std::cmp::Reverse(p.as_os_str().len()));
    for m in under {
        done.extend(unmount("umount", &[], &m));
    }
    if crate::device::mount::mounts()
        .iter()
        .any(|m| m.mount_point.starts_with(&canon))
    {
        done.push(format!(
            "left {} in place: something is still mounted under it",
            run_dir.display()
        ));
    } else {
        match std::fs::remove_dir_all(run_dir) {
            Ok(()) => done.push(format!("removed {}", run_dir.display())),
            Err(e) => done.push(format!("could not remove {}: {e}", run_dir.display())),
        }
    }
    done
}

/// Whether the run that owns `run_dir` (named by its PID) is alive: its PID
/// exists with the recorded start time. Our own PID's directory is always a
/// dead run's (this process has not made its own yet).
fn owner_alive(run_dir: &Path, pid: u32) -> bool {
    if pid == std::process::id() {
        return false;
    }
    let owner = std::fs::read_to_string(run_dir.join(RECORD))
        .ok()
        .and_then(|t| {
            t.lines()
                .next()
                .and_then(|l| serde_json::from_str::<Record>(l).ok())
        });
    match owner {
        Some(Record::Owner { start_ticks, .. }) => is_same_process(pid, start_ticks),
        // No record (an older version, or killed before its first line):
        // alive while the PID is a flashlab process.
        _ => std::fs::read(format!("/proc/{pid}/cmdline"))
            .is_ok_and(|c| String::from_utf8_lossy(&c).contains("flashlab")),
    }
}

/// Every dead run under [`ROOT`], undone. One line per thing removed,
/// prefixed with the run's PID.
pub fn cleanup() -> Vec<String> {
    let mut out = Vec::new();
    let Ok(rd) = std::fs::read_dir(ROOT) else {
        return out;
    };
    let mut dirs: Vec<(u32, PathBuf)> = rd
        .flatten()
        .filter_map(|e| {
            let pid = e.file_name().to_str()?.parse::<u32>().ok()?;
            e.file_type().ok()?.is_dir().then(|| (pid, e.path()))
        })
        .collect();
    dirs.sort();
    for (pid, dir) in dirs {
        if owner_alive(&dir, pid) {
            continue;
        }
        for line in undo_run(&dir) {
            out.push(format!("killed run {pid}: {line}"));
        }
    }
    out
}

/// [`ROOT`], made safe to hold run directories: a real directory (not a
/// symlink) owned by root and writable by root only, created if missing.
pub fn prepare_root() -> std::io::Result<()> {
    use std::os::unix::fs::{MetadataExt, PermissionsExt};
    match std::fs::create_dir(ROOT) {
        Ok(()) => {}
        Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {}
        Err(e) => return Err(e),
    }
    let m = std::fs::symlink_metadata(ROOT)?;
    if !m.is_dir() || m.uid() != 0 {
        return Err(std::io::Error::other(format!(
            "{ROOT} is not a directory owned by root; remove it (flashlab oltp recreates it)"
        )));
    }
    std::fs::set_permissions(ROOT, std::fs::Permissions::from_mode(0o755))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_start_time_names_this_process() {
        let me = std::process::id();
        let t = start_ticks(me).unwrap();
        assert!(is_same_process(me, t));
        assert!(!is_same_process(me, t + 1));
    }

    #[test]
    fn records_read_back_as_written() {
        let r = Record::Loop {
            dev: "/dev/loop3".into(),
            file_dev: 2049,
            file_ino: 12,
        };
        let line = serde_json::to_string(&r).unwrap();
        assert!(line.contains("\"kind\":\"loop\""), "{line}");
        assert_eq!(serde_json::from_str::<Record>(&line).unwrap(), r);
    }
}
