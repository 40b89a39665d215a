//! Logical IO: a process tree's file-system requests, from the syscall
//! tracepoints (`syscalls/sys_enter_*` and `sys_exit_*`), restricted to
//! files under one directory.
//!
//! The tracepoints give file descriptors, not paths (the `filename` of
//! openat is a user-space pointer the text output cannot follow, and this
//! kernel has neither kprobes nor event probes to fetch it). So paths come
//! from /proc: a snapshot of every traced process's fds (with positions)
//! at start, `/proc/PID/fd/N` read when the reader sees an openat return
//! N (normally within milliseconds), and the parent's table copied to a
//! child at `sched_process_fork` (a forked backend inherits its fds). An fd
//! first seen in an IO is resolved then, once. Limits (docs/oltp-tracing.md):
//! an fd closed (or its process gone) before the reader resolves it is
//! counted in `unresolved_ios`; an fd closed and reopened on another file
//! within that window would be attributed to the second file; dup/fcntl
//! copies are not followed (PostgreSQL does neither on its files).
//!
//! Offsets: pread/pwrite/preadv/pwritev carry theirs; read/write/readv/
//! writev use the position tracked per fd (from the snapshot's fdinfo, 0
//! after openat, lseek's result, advanced by each transfer). Writes on an
//! O_APPEND fd are counted in `append_writes`: their tracked offset may be
//! wrong. Sizes are the bytes the call returned, and time_ns is the call's
//! entry; lines are written at the call's exit (so they are in completion
//! order; a trace's readers sort by time).

use std::collections::{BTreeMap, HashMap};
use std::fs::File;
use std::io::BufWriter;
use std::path::{Component, Path, PathBuf};

use flashlab_trace::{FileIo, FileKind, FileOp, FileTraceWriter};
use serde::Serialize;

use crate::pipe::{Event, Sink};
use crate::{proc, IoCounts, TraceError};

/// The syscalls traced, each with its enter and exit event.
const SYSCALLS: [&str; 16] = [
    "read",
    "write",
    "pread64",
    "pwrite64",
    "readv",
    "writev",
    "preadv",
    "pwritev",
    "preadv2",
    "pwritev2",
    "fsync",
    "fdatasync",
    "sync_file_range",
    "openat",
    "close",
    "lseek",
];

/// Every tracepoint the logical side enables.
pub const EVENTS: [(&str, &str); 34] = {
    let mut out = [("", ""); 34];
    let mut i = 0;
    while i < SYSCALLS.len() {
        out[2 * i] = ("syscalls", ENTERS[i]);
        out[2 * i + 1] = ("syscalls", EXITS[i]);
        i += 1;
    }
    out[32] = ("sched", "sched_process_fork");
    out[33] = ("sched", "sched_process_exit");
    out
};

const ENTERS: [&str; 16] = [
    "sys_enter_read",
    "sys_enter_write",
    "sys_enter_pread64",
    "sys_enter_pwrite64",
    "sys_enter_readv",
    "sys_enter_writev",
    "sys_enter_preadv",
    "sys_enter_pwritev",
    "sys_enter_preadv2",
    "sys_enter_pwritev2",
    "sys_enter_fsync",
    "sys_enter_fdatasync",
    "sys_enter_sync_file_range",
    "sys_enter_openat",
    "sys_enter_close",
    "sys_enter_lseek",
];

const EXITS: [&str; 16] = [
    "sys_exit_read",
    "sys_exit_write",
    "sys_exit_pread64",
    "sys_exit_pwrite64",
    "sys_exit_readv",
    "sys_exit_writev",
    "sys_exit_preadv",
    "sys_exit_pwritev",
    "sys_exit_preadv2",
    "sys_exit_pwritev2",
    "sys_exit_fsync",
    "sys_exit_fdatasync",
    "sys_exit_sync_file_range",
    "sys_exit_openat",
    "sys_exit_close",
    "sys_exit_lseek",
];

/// A file's kind from its path relative to a PostgreSQL data directory:
/// `pg_wal/` is the write-ahead log; `base/`, `global/` and `pg_tblspc/`
/// hold relations (tables, indexes and their forks); anything else (the
/// commit log, stats, server log, config) is other.
pub fn classify_path(rel: &Path) -> FileKind {
    match rel.components().next() {
        Some(Component::Normal(first)) => match first.to_str() {
            Some("pg_wal") => FileKind::Wal,
            Some("base" | "global" | "pg_tblspc") => FileKind::Data,
            _ => FileKind::Other,
        },
        _ => FileKind::Other,
    }
}

/// What the logical reader measured besides the trace.
#[derive(Clone, Debug, Default, Serialize)]
pub struct LogicalDetail {
    /// Traced syscalls (all files, sockets and pipes) seen completing.
    pub syscalls: u64,
    /// Requests written to the trace (files under the directory).
    pub file_requests: u64,
    /// Files declared in the trace.
    pub files: u64,
    /// Counts by file kind (data, wal, other).
    pub by_kind: BTreeMap<String, IoCounts>,
    /// IOs on an fd whose path could not be found (closed, or its process
    /// gone, before the reader resolved it): not in the trace.
    pub unresolved_ios: u64,
    /// fds first met in an IO and resolved then (not by openat/snapshot).
    pub late_resolved_fds: u64,
    /// Calls on traced files that failed (negative return): not in the trace.
    pub failed_calls: u64,
    /// Writes on O_APPEND fds (offset approximate).
    pub append_writes: u64,
    /// Exits with no matching entry (a call in progress at start).
    pub exits_without_entry: u64,
    /// Lines the reader could not parse (should be 0).
    pub unparsed_lines: u64,
}

#[derive(Clone, Copy, Debug)]
struct FdEntry {
    /// The trace's file id, or None when the fd is not a file under the directory.
    file: Option<u32>,
    pos: u64,
    append: bool,
}

#[derive(Clone, Copy, Debug)]
struct Pending {
    call: usize,
    time_ns: u64,
    args: [u64; 6],
}

struct FileInfo {
    kind: FileKind,
    declared: bool,
    rel: String,
}

pub struct LogicalSink {
    t0_ns: u64,
    under: PathBuf,
    out: FileTraceWriter<BufWriter<File>>,
    pub counts: IoCounts,
    pub detail: LogicalDetail,
    pending: HashMap<u32, Pending>,
    tgids: HashMap<u32, u32>,
    fds: HashMap<u32, HashMap<u64, FdEntry>>,
    file_ids: HashMap<PathBuf, u32>,
    files: Vec<FileInfo>,
}

const O_APPEND: u64 = 0o2000;

impl LogicalSink {
    pub fn new(t0_ns: u64, file: File, under: PathBuf) -> Result<LogicalSink, TraceError> {
        let out = FileTraceWriter::new(BufWriter::with_capacity(1 << 16, file))
            .map_err(|e| TraceError::io("writing the logical trace".to_string(), e))?;
        Ok(LogicalSink {
            t0_ns,
            under,
            out,
            counts: IoCounts::default(),
            detail: LogicalDetail::default(),
            pending: HashMap::new(),
            tgids: HashMap::new(),
            fds: HashMap::new(),
            file_ids: HashMap::new(),
            files: Vec::new(),
        })
    }

    /// Records the open fds (and positions) of every traced process.
    pub fn snapshot(&mut self, pids: &[u32]) {
        for &pid in pids {
            let tgid = self.tgid(pid);
            if tgid != pid {
                continue; // threads share their process's table
            }
            for (fd, path, pos) in proc::fds(pid) {
                let file = self.file_id(&path);
                self.fds.entry(tgid).or_default().insert(
                    fd,
                    FdEntry {
                        file,
                        pos,
                        append: false,
                    },
                );
            }
        }
    }

    fn tgid(&mut self, pid: u32) -> u32 {
        if let Some(t) = self.tgids.get(&pid) {
            return *t;
        }
        let t = proc::tgid(pid).unwrap_or(pid);
        self.tgids.insert(pid, t);
        t
    }

    /// The trace's id for `path` if it is under the directory.
    fn file_id(&mut self, path: &Path) -> Option<u32> {
        let rel = path.strip_prefix(&self.under).ok()?;
        if let Some(id) = self.file_ids.get(path) {
            return Some(*id);
        }
        let id = self.files.len() as u32;
        self.files.push(FileInfo {
            kind: classify_path(rel),
            declared: false,
            rel: rel.to_string_lossy().into_owned(),
        });
        self.file_ids.insert(path.to_path_buf(), id);
        Some(id)
    }

    fn entry(&mut self, pid: u32, fd: u64) -> Option<&mut FdEntry> {
        let tgid = self.tgid(pid);
        let known = self.fds.get(&tgid).is_some_and(|t| t.contains_key(&fd));
        if !known {
            // First met here: resolve now, once.
            let path = proc::fd_path(pid, fd)?;
            self.detail.late_resolved_fds += 1;
            let file = self.file_id(&path);
            self.fds.entry(tgid).or_default().insert(
                fd,
                FdEntry {
                    file,
                    pos: 0,
                    append: false,
                },
            );
        }
        self.fds.get_mut(&tgid)?.get_mut(&fd)
    }

    fn write_io(
        &mut self,
        time_ns: u64,
        op: FileOp,
        file: u32,
        offset_bytes: u64,
        size_bytes: u64,
    ) -> Result<(), TraceError> {
        let err = |e| TraceError::io("writing the logical trace".to_string(), e);
        let info = &mut self.files[file as usize];
        if !info.declared {
            info.declared = true;
            self.out.declare(file, info.kind, &info.rel).map_err(err)?;
            self.detail.files += 1;
        }
        let kind = info.kind.name().to_string();
        let by_kind = self.detail.by_kind.entry(kind).or_default();
        for c in [&mut self.counts, by_kind] {
            match op {
                FileOp::Read => {
                    c.reads += 1;
                    c.read_bytes += size_bytes;
                }
                FileOp::Write => {
                    c.writes += 1;
                    c.write_bytes += size_bytes;
                }
                FileOp::Fsync | FileOp::Fdatasync => c.flushes += 1,
                FileOp::SyncRange => c.sync_ranges += 1,
            }
        }
        self.detail.file_requests += 1;
        self.out
            .write(&FileIo {
                time_ns: time_ns.saturating_sub(self.t0_ns),
                op,
                offset_bytes,
                size_bytes,
                file,
            })
            .map_err(err)
    }

    fn exit(&mut self, pid: u32, call: usize, p: Pending, ret: i64) -> Result<(), TraceError> {
        self.detail.syscalls += 1;
        let name = SYSCALLS[call];
        let fd = p.args[0];
        match name {
            "openat" => {
                if ret >= 0 {
                    let fd = ret as u64;
                    let file = proc::fd_path(pid, fd).and_then(|path| self.file_id(&path));
                    let tgid = self.tgid(pid);
                    self.fds.entry(tgid).or_default().insert(
                        fd,
                        FdEntry {
                            file,
                            pos: 0,
                            append: p.args[2] & O_APPEND != 0,
                        },
                    );
                }
            }
            "close" => {
                // The fd is gone whatever close returned (Linux semantics).
                let tgid = self.tgid(pid);
                if let Some(t) = self.fds.get_mut(&tgid) {
                    t.remove(&fd);
                }
            }
            "lseek" => {
                if ret >= 0 {
                    if let Some(e) = self.entry(pid, fd) {
                        e.pos = ret as u64;
                    }
                }
            }
            _ => {
                let Some(e) = self.entry(pid, fd).copied() else {
                    if is_io(name) {
                        self.detail.unresolved_ios += 1;
                    }
                    return Ok(());
                };
                let Some(file) = e.file else {
                    // Not a file under the directory; keep positions right.
                    if ret > 0 && advances(name, &p) {
                        if let Some(e) = self.entry(pid, fd) {
                            e.pos = e.pos.saturating_add(ret as u64);
                        }
                    }
                    return Ok(());
                };
                if ret < 0 {
                    self.detail.failed_calls += 1;
                    return Ok(());
                }
                let size = ret as u64;
                let (op, offset, size) = match name {
                    "fsync" => (FileOp::Fsync, 0, 0),
                    "fdatasync" => (FileOp::Fdatasync, 0, 0),
                    "sync_file_range" => (FileOp::SyncRange, p.args[1], p.args[2]),
                    "pread64" | "preadv" => (FileOp::Read, p.args[3], size),
                    "pwrite64" | "pwritev" => (FileOp::Write, p.args[3], size),
                    "preadv2" | "pwritev2" if p.args[3] != u64::MAX => {
                        let op = if name == "preadv2" {
                            FileOp::Read
                        } else {
                            FileOp::Write
                        };
                        (op, p.args[3], size)
                    }
                    _ => {
                        let op = if name.contains("read") {
                            FileOp::Read
                        } else {
                            FileOp::Write
                        };
                        if op == FileOp::Write && e.append {
                            self.detail.append_writes += 1;
                        }
                        if let Some(e) = self.entry(pid, fd) {
                            e.pos = e.pos.saturating_add(size);
                        }
                        (op, e.pos, size)
                    }
                };
                if matches!(op, FileOp::Read | FileOp::Write) && size == 0 {
                    return Ok(()); // end of file: nothing transferred
                }
                self.write_io(p.time_ns, op, file, offset, size)?;
            }
        }
        Ok(())
    }

    fn fork(&mut self, body: &str) {
        let field = |key: &str| -> Option<u32> {
            body.split_whitespace()
                .find_map(|kv| kv.strip_prefix(key))
                .and_then(|v| v.parse().ok())
        };
        let (Some(parent), Some(child)) = (field("pid="), field("child_pid=")) else {
            self.detail.unparsed_lines += 1;
            return;
        };
        let ptgid = self.tgid(parent);
        // A thread (same thread group) shares the table; a process copies it.
        let ctgid = proc::tgid(child).unwrap_or(child);
        self.tgids.insert(child, ctgid);
        if ctgid != ptgid {
            let table = self.fds.get(&ptgid).cloned().unwrap_or_default();
            self.fds.insert(ctgid, table);
        }
    }

    fn process_exit(&mut self, body: &str) {
        let pid = body
            .split_whitespace()
            .find_map(|kv| kv.strip_prefix("pid="))
            .and_then(|v| v.parse::<u32>().ok());
        if let Some(pid) = pid {
            self.pending.remove(&pid);
            if self.tgids.remove(&pid) == Some(pid) {
                self.fds.remove(&pid);
            }
        }
    }
}

fn is_io(name: &str) -> bool {
    !matches!(name, "openat" | "close" | "lseek")
}

/// Calls that move the fd's position.
fn advances(name: &str, p: &Pending) -> bool {
    match name {
        "read" | "write" | "readv" | "writev" => true,
        "preadv2" | "pwritev2" => p.args[3] == u64::MAX,
        _ => false,
    }
}

/// `0x1f` or `31` (the kernel prints small values in decimal).
fn number(text: &str) -> Option<u64> {
    let t = text.trim();
    match t.strip_prefix("0x") {
        Some(hex) => u64::from_str_radix(hex, 16).ok(),
        None => t.parse().ok(),
    }
}

/// `(fd: 3, buf: 0x55bc, count: 0x2000, pos: 0x1000)` to the values in order.
fn args(body: &str) -> Option<[u64; 6]> {
    let inner = body.trim().strip_prefix('(')?.strip_suffix(')')?;
    let mut out = [0u64; 6];
    for (i, kv) in inner.split(", ").enumerate().take(6) {
        let (_, v) = kv.split_once(':')?;
        out[i] = number(v)?;
    }
    Some(out)
}

impl Sink for LogicalSink {
    fn event(&mut self, ev: &Event<'_>) -> Result<(), TraceError> {
        if let Some(call) = ev.name.strip_prefix("sys_") {
            let Some(i) = SYSCALLS.iter().position(|s| *s == call) else {
                self.detail.unparsed_lines += 1;
                return Ok(());
            };
            if let Some(ret) = ev.body.strip_prefix("->") {
                let Some(ret) = number(ret) else {
                    self.detail.unparsed_lines += 1;
                    return Ok(());
                };
                match self.pending.remove(&ev.pid) {
                    Some(p) if p.call == i => self.exit(ev.pid, i, p, ret as i64)?,
                    _ => self.detail.exits_without_entry += 1,
                }
            } else {
                match args(ev.body) {
                    Some(args) => {
                        self.pending.insert(
                            ev.pid,
                            Pending {
                                call: i,
                                time_ns: ev.time_ns,
                                args,
                            },
                        );
                    }
                    None => self.detail.unparsed_lines += 1,
                }
            }
            return Ok(());
        }
        match ev.name {
            "sched_process_fork" => self.fork(ev.body),
            "sched_process_exit" => self.process_exit(ev.body),
            _ => self.detail.unparsed_lines += 1,
        }
        Ok(())
    }

    fn other_line(&mut self, _line: &str) {}

    fn flush(&mut self) -> Result<(), TraceError> {
        self.out
            .flush()
            .map_err(|e| TraceError::io("writing the logical trace".to_string(), e))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn postgres_paths_are_classified_by_their_directory() {
        assert_eq!(
            classify_path(Path::new("pg_wal/000000010000000000000001")),
            FileKind::Wal
        );
        assert_eq!(classify_path(Path::new("base/5/16384")), FileKind::Data);
        assert_eq!(classify_path(Path::new("global/1262")), FileKind::Data);
        assert_eq!(classify_path(Path::new("pg_xact/0000")), FileKind::Other);
        assert_eq!(classify_path(Path::new("postmaster.pid")), FileKind::Other);
    }

    #[test]
    fn syscall_arguments_parse_in_hex_and_decimal() {
        let a = args("(fd: 3, buf: 0x55bc45c5bcc0, count: 0x2000, pos: 0x1000)").unwrap();
        assert_eq!(&a[..4], &[3, 0x55bc45c5bcc0, 0x2000, 0x1000]);
        assert_eq!(number("0xfffffffffffffff2").map(|v| v as i64), Some(-14));
        assert_eq!(args("(fd: 3"), None);
    }

    #[test]
    fn every_syscall_has_its_enter_and_exit_event() {
        for (i, s) in SYSCALLS.iter().enumerate() {
            assert_eq!(ENTERS[i], format!("sys_enter_{s}"));
            assert_eq!(EXITS[i], format!("sys_exit_{s}"));
        }
    }
}
