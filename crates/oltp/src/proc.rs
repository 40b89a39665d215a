//! Programs and processes: finding a tool on PATH (so that a missing one is
//! named with its Debian package before anything is set up), running a
//! command to completion with its error's last line, and stopping a child
//! within a deadline.

use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitStatus, Stdio};
use std::time::{Duration, Instant};

use crate::error::{Failure, OltpError, Result};
use crate::teardown::UndoError;

/// Finds `tool` on PATH (as a shell would).
pub fn find_tool(tool: &str, package: &'static str, why: &'static str) -> Result<PathBuf> {
    let path = std::env::var_os("PATH").unwrap_or_default();
    for dir in std::env::split_paths(&path) {
        let p = dir.join(tool);
        if is_executable(&p) {
            return Ok(p);
        }
    }
    Err(OltpError::MissingTool {
        tool: tool.to_string(),
        package,
        why,
    })
}

pub fn is_executable(p: &Path) -> bool {
    use std::os::unix::fs::PermissionsExt;
    std::fs::metadata(p)
        .map(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
        .unwrap_or(false)
}

/// Runs a command to completion; on failure, the error names it and quotes
/// the last line it printed. Returns its stdout.
pub fn run(cmd: &mut Command, what: &str) -> Result<String> {
    let out = cmd
        .stdin(Stdio::null())
        .output()
        .map_err(|e| OltpError::failed(format!("cannot start {what}"), e))?;
    if out.status.success() {
        Ok(String::from_utf8_lossy(&out.stdout).into_owned())
    } else {
        Err(OltpError::Failed(Failure::Tool {
            what: what.to_string(),
            status: out.status,
            message: last_line(&String::from_utf8_lossy(&out.stderr))
                .or_else(|| last_line(&String::from_utf8_lossy(&out.stdout)))
                .unwrap_or_else(|| "no message".into()),
        }))
    }
}

pub fn last_line(text: &str) -> Option<String> {
    text.lines()
        .rev()
        .find(|l| !l.trim().is_empty())
        .map(|l| l.trim().to_string())
}

/// The last non-empty line of a log file (for a child that died).
pub fn last_log_line(path: &Path) -> String {
    std::fs::read_to_string(path)
        .ok()
        .and_then(|t| last_line(&t))
        .unwrap_or_else(|| format!("see {}", path.display()))
}

/// A PostgreSQL log's most telling line: the last FATAL, PANIC or ERROR
/// (PostgreSQL follows it with DETAIL and HINT lines, which alone do not
/// say what went wrong), else the last line.
pub fn last_error_line(path: &Path) -> String {
    let Ok(text) = std::fs::read_to_string(path) else {
        return format!("see {}", path.display());
    };
    text.lines()
        .rev()
        .find(|l| ["FATAL:", "PANIC:", "ERROR:"].iter().any(|k| l.contains(k)))
        .map(|l| l.trim().to_string())
        .or_else(|| last_line(&text))
        .unwrap_or_else(|| format!("see {}", path.display()))
}

/// Waits for a child up to `timeout`; None if it is still running.
pub fn wait_timeout(child: &mut Child, timeout: Duration) -> Option<ExitStatus> {
    let end = Instant::now() + timeout;
    loop {
        match child.try_wait() {
            Ok(Some(s)) => return Some(s),
            Ok(None) if Instant::now() >= end => return None,
            Ok(None) => std::thread::sleep(Duration::from_millis(20)),
            Err(_) => return None,
        }
    }
}

/// Sends `sig` to a child we started (by its pid, never by name).
pub fn signal(child: &Child, sig: libc::c_int) {
    // SAFETY: kill(2) on a pid we own and have not reaped.
    unsafe {
        libc::kill(child.id() as libc::pid_t, sig);
    }
}

/// Stops a child: `first` signal, then SIGKILL after `grace`. Reaps it.
pub fn stop_child(
    child: &mut Child,
    first: libc::c_int,
    grace: Duration,
) -> std::result::Result<ExitStatus, UndoError> {
    if let Ok(Some(s)) = child.try_wait() {
        return Ok(s);
    }
    signal(child, first);
    if let Some(s) = wait_timeout(child, grace) {
        return Ok(s);
    }
    signal(child, libc::SIGKILL);
    child.wait().map_err(|source| UndoError::Reap {
        pid: child.id(),
        source,
    })
}

/// The uid and gid of a user name.
pub fn user_ids(name: &str) -> Option<(u32, u32)> {
    let c = std::ffi::CString::new(name).ok()?;
    // SAFETY: getpwnam returns a pointer to static storage or null; we copy
    // the two fields at once, single-threaded set-up.
    unsafe {
        let pw = libc::getpwnam(c.as_ptr());
        if pw.is_null() {
            None
        } else {
            Some(((*pw).pw_uid, (*pw).pw_gid))
        }
    }
}

pub fn is_root() -> bool {
    // SAFETY: geteuid cannot fail.
    unsafe { libc::geteuid() == 0 }
}

pub fn chown(path: &Path, uid: u32, gid: u32) -> Result<()> {
    std::os::unix::fs::chown(path, Some(uid), Some(gid))
        .map_err(|e| OltpError::failed(format!("cannot chown {}", path.display()), e))
}

/// Whether a process with this pid exists.
pub fn pid_alive(pid: u32) -> bool {
    Path::new(&format!("/proc/{pid}")).exists()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn postgres_s_error_line_is_shown_not_its_hint() {
        let dir = tempfile::tempdir().unwrap();
        let log = dir.path().join("postgres.log");
        std::fs::write(
            &log,
            "2026-11-27 01:40:00.000 UTC [9] FATAL:  invalid value for parameter \"shared_buffers\": \"lots\"\n\
             2026-11-27 01:40:00.000 UTC [9] HINT:  Valid units for this parameter are \"B\", \"kB\", \"MB\", \"GB\", and \"TB\".\n",
        )
        .unwrap();
        assert_eq!(
            last_error_line(&log),
            "2026-11-27 01:40:00.000 UTC [9] FATAL:  invalid value for parameter \"shared_buffers\": \"lots\""
        );
        std::fs::write(&log, "LOG:  starting\nLOG:  still starting\n").unwrap();
        assert_eq!(last_error_line(&log), "LOG:  still starting");
    }
}
