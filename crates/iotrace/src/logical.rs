//! Logical IO: a process tree's file-system requests, from the syscall
//! tracepoints (`syscalls/sys_enter_*` and `sys_exit_*`), restricted to
//! files under one directory.
//!
//! The tracepoints give file descriptors, not paths (the `filename` of
//! openat is a user-space pointer the text output cannot follow, and this
//! kernel has neither kprobes nor event probes to fetch it). So paths come
//! from /proc: a snapshot of every traced process's fds (with positions)
//! at start, `/proc/PID/fd/N` read when the reader sees an openat return
//! N, the parent's table copied to a child at `sched_process_fork` (a
//! forked backend inherits its fds), dup/dup2/dup3/F_DUPFD copies followed,
//! close/close_range/dup2-over/exec forgetting fds, and an fd first met in
//! an IO resolved then.
//!
//! A look in /proc happens after the event (the reader lags by up to
//! milliseconds), so it may see the *next* file on that fd number. Each
//! look is therefore tentative: it is stamped with CLOCK_MONOTONIC (the
//! trace clock) and the fd's requests wait until the event stream passes
//! that stamp. A close of the fd before the stamp proves the look wrong:
//! the waiting requests are dropped and counted (`unresolved_ios`,
//! `misresolved_fds`), never attributed to the wrong file. (A program's
//! dynamic loader, which opens, reads and closes libraries within
//! microseconds, is the usual case: tests/logical.rs.) Not followed: fds
//! passed over unix sockets, and the small reordering window of events on
//! different CPUs that trace_pipe may deliver out of time order.
//!
//! Offsets: pread/pwrite/preadv/pwritev carry theirs; read/write/readv/
//! writev use the position tracked per fd (from the snapshot's fdinfo, 0
//! after openat, lseek's result, advanced by each transfer). Writes on an
//! O_APPEND fd are counted in `append_writes`: their tracked offset may be
//! wrong. Sizes are the bytes the call returned, and time_ns is the call's
//! entry; lines are written at the call's exit (so they are in completion
//! order; a trace's readers sort by time).

use std::collections::{BTreeMap, HashMap, VecDeque};
use std::fs::File;
use std::io::BufWriter;
use std::path::{Component, Path, PathBuf};

use flashlab_trace::{FileIo, FileKind, FileOp, FileTraceWriter};
use serde::Serialize;

use crate::event::{Event, Kind};
use crate::pipe::Sink;
use crate::{proc, IoCounts, TraceError};

/// The syscalls traced, each with its enter and exit event: the IO calls,
/// and every call that opens, closes or copies an fd on a file (so the fd
/// table stays true).
const SYSCALLS: [&str; 21] = [
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
    "dup",
    "dup2",
    "dup3",
    "fcntl",
    "close_range",
];

/// The index of a syscall (`pwrite64`) in the traced list.
pub fn syscall_index(name: &str) -> Option<u8> {
    SYSCALLS.iter().position(|s| *s == name).map(|i| i as u8)
}

/// Every tracepoint the logical side enables.
pub fn events() -> Vec<(&'static str, String)> {
    let mut out = Vec::new();
    for s in SYSCALLS {
        out.push(("syscalls", format!("sys_enter_{s}")));
        out.push(("syscalls", format!("sys_exit_{s}")));
    }
    for e in [
        "sched_process_fork",
        "sched_process_exec",
        "sched_process_exit",
    ] {
        out.push(("sched", e.to_string()));
    }
    for (system, event) in SYNC_INODE_EVENTS {
        out.push((system, event.to_string()));
    }
    out
}

/// The file systems' own fsync tracepoints, which name the inode an fsync
/// or fdatasync syncs, at every call, dirty or clean. With them an fsync
/// is attributed by inode, however short-lived its fd (PostgreSQL's
/// checkpointer opens, fsyncs and closes a segment within microseconds,
/// before /proc can name the fd). ext2 has none (nor has the generic
/// fsync path an unconditional one: filemap:file_check_and_advance_wb_err
/// fires only when a writeback error changed), so on ext2 such fsyncs stay
/// unresolved and are counted. Those the kernel lacks are left out.
pub const SYNC_INODE_EVENTS: [(&str, &str); 3] = [
    ("ext4", "ext4_sync_file_enter"),
    ("xfs", "xfs_file_fsync"),
    ("btrfs", "btrfs_sync_file"),
];

/// A file's kind from its path relative to a PostgreSQL data directory:
/// `pg_wal/` is the write-ahead log; files named by a relfilenode number
/// (`16384`, `16384.1`, `16384_fsm`, `16384_vm`) under `base/`, `global/`
/// and `pg_tblspc/` are relations (tables, indexes and their forks);
/// anything else (the relation cache's init files, PG_VERSION, the
/// filenode map, the commit log, the server log, config) is other.
///
/// An InnoDB data directory (MariaDB, `flashlab oltp --dbms mariadb`):
/// `ib_logfile*` is the redo log (the WAL); the system tablespace
/// `ibdata*` (which holds the doublewrite buffer), the undo tablespaces
/// `undo*` and the tables' `*.ibd` files are data.
pub fn classify_path(rel: &Path) -> FileKind {
    let name = rel.file_name().and_then(|n| n.to_str()).unwrap_or("");
    if rel.components().count() == 1 && name.starts_with("ib_logfile") {
        return FileKind::Wal;
    }
    if name.ends_with(".ibd")
        || (rel.components().count() == 1
            && (name.starts_with("ibdata") || name.starts_with("undo")))
    {
        return FileKind::Data;
    }
    let first = match rel.components().next() {
        Some(Component::Normal(first)) => first.to_str(),
        _ => None,
    };
    let numeric_name = rel
        .file_name()
        .and_then(|n| n.to_str())
        .is_some_and(|n| n.bytes().next().is_some_and(|b| b.is_ascii_digit()));
    match first {
        Some("pg_wal") => FileKind::Wal,
        Some("base" | "global" | "pg_tblspc") if numeric_name => FileKind::Data,
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
    /// Requests in the trace by the syscall that made them (e.g. whether
    /// a DBMS uses pwrite or write for its files).
    pub by_syscall: BTreeMap<String, u64>,
    /// IOs on an fd whose path could not be found (closed, or its process
    /// gone, before the reader resolved it): not in the trace.
    pub unresolved_ios: u64,
    /// fds first met in an IO and resolved then (not by openat/snapshot).
    pub late_resolved_fds: u64,
    /// Calls on traced files that failed (negative return): not in the trace.
    pub failed_calls: u64,
    /// Writes on O_APPEND fds (offset approximate).
    pub append_writes: u64,
    /// fds whose path, read from /proc, turned out to be another file's
    /// (the fd was closed before the reader looked): their requests are
    /// counted in `unresolved_ios`.
    pub misresolved_fds: u64,
    /// Exits with no matching entry (a call in progress at start).
    pub exits_without_entry: u64,
    /// Lines the reader could not parse (should be 0).
    pub unparsed_lines: u64,
    /// fsyncs and fdatasyncs attributed by the inode they synced
    /// ([`SYNC_INODE_EVENTS`]), not by their fd.
    pub syncs_by_inode: u64,
}

/// What an fd refers to.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Target {
    /// A file under the directory: its trace id.
    Ours(u32),
    /// Something else (another file, a socket, a pipe).
    Foreign,
    /// /proc could not say (the fd or its process was gone).
    Unknown,
}

/// A request waiting for its fd's path to be confirmed.
#[derive(Clone, Copy, Debug)]
struct Queued {
    call: usize,
    time_ns: u64,
    op: FileOp,
    offset_bytes: u64,
    size_bytes: u64,
}

/// A path read from /proc at `resolved_at_ns` (CLOCK_MONOTONIC, the trace
/// clock) is only right if the fd was not closed between the event that
/// named it and that moment. Until the event stream passes
/// `resolved_at_ns` without such a close, the fd's requests wait here.
#[derive(Clone, Debug)]
struct Tentative {
    resolved_at_ns: u64,
    generation: u64,
    queue: Vec<Queued>,
    /// Requests seen while the fd looked foreign (would be unresolved if
    /// the look turns out wrong).
    foreign_requests: u64,
}

#[derive(Clone, Debug)]
struct FdEntry {
    target: Target,
    pos: u64,
    append: bool,
    tentative: Option<Tentative>,
}

#[derive(Clone, Copy, Debug)]
struct Pending {
    call: usize,
    time_ns: u64,
    args: [u64; 6],
    /// fsync/fdatasync: the inode the kernel synced, (dev, ino).
    sync_inode: Option<(u32, u64)>,
}

struct FileInfo {
    kind: FileKind,
    declared: bool,
    rel: String,
}

/// The most requests one fd may hold while its path waits for
/// confirmation (a bound on memory; normally a few ms of requests).
const MAX_QUEUED: usize = 1 << 16;

pub struct LogicalSink {
    t0_ns: u64,
    under: PathBuf,
    out: FileTraceWriter<BufWriter<File>>,
    pub counts: IoCounts,
    pub detail: LogicalDetail,
    pending: HashMap<u32, Pending>,
    tgids: HashMap<u32, u32>,
    fds: HashMap<u32, HashMap<u64, FdEntry>>,
    /// (resolved_at_ns, tgid, fd, generation), in resolution order.
    tentative: VecDeque<(u64, u32, u64, u64)>,
    generation: u64,
    file_ids: HashMap<PathBuf, u32>,
    files: Vec<FileInfo>,
    /// Inode numbers of the files and directories under `under` (walked
    /// when an fsync names an inode not yet seen).
    inodes: HashMap<u64, PathBuf>,
    /// The kernel's device number(s) of the file system under `under`
    /// (major << 20 | minor): from stat, and from fsyncs of fds already
    /// known to be ours (btrfs reports another number to stat).
    devs: Vec<u32>,
}

const O_APPEND: u64 = 0o2000;
const F_DUPFD: u64 = 0;
const F_DUPFD_CLOEXEC: u64 = 1030;
const CLOSE_RANGE_CLOEXEC: u64 = 1 << 2;

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
            tentative: VecDeque::new(),
            generation: 0,
            file_ids: HashMap::new(),
            files: Vec::new(),
            inodes: HashMap::new(),
            devs: Vec::new(),
        })
    }

    /// Attributes fsyncs by inode from now on (the kernel has the event).
    pub fn follow_sync_inodes(&mut self) {
        use std::os::unix::fs::MetadataExt;
        if let Ok(m) = std::fs::metadata(&self.under) {
            let d = m.dev();
            self.devs
                .push(((libc::major(d) as u32) << 20) | libc::minor(d) as u32);
        }
        self.walk();
    }

    /// Maps every inode under `under` to its path.
    fn walk(&mut self) {
        use std::os::unix::fs::MetadataExt;
        let mut stack = vec![self.under.clone()];
        while let Some(dir) = stack.pop() {
            if let Ok(m) = std::fs::symlink_metadata(&dir) {
                self.inodes.insert(m.ino(), dir.clone());
            }
            let Ok(entries) = std::fs::read_dir(&dir) else {
                continue;
            };
            for e in entries.flatten() {
                let Ok(m) = e.metadata() else { continue };
                if m.is_dir() {
                    stack.push(e.path());
                } else if m.is_file() {
                    self.inodes.insert(m.ino(), e.path());
                }
            }
        }
    }

    /// The path of inode `ino` under `under`, walking again once if it is
    /// new (a file created since the last walk).
    fn inode_path(&mut self, ino: u64) -> Option<PathBuf> {
        if let Some(p) = self.inodes.get(&ino) {
            return Some(p.clone());
        }
        self.walk();
        self.inodes.get(&ino).cloned()
    }

    /// An fsync or fdatasync whose synced inode the kernel named: written
    /// to the trace by inode, whatever became of its fd. False when the
    /// inode is on another file system (the fd path decides then).
    fn sync_by_inode(
        &mut self,
        p: &Pending,
        op: FileOp,
        tgid: u32,
        ret: i64,
    ) -> Result<bool, TraceError> {
        let Some((dev, ino)) = p.sync_inode else {
            return Ok(false);
        };
        // dev 0: btrfs's event names the file system by its UUID instead.
        if dev != 0 && !self.devs.contains(&dev) {
            // A file system we have not seen under `under` yet: ours if
            // the fd is known to be (btrfs's stat reports another device).
            let ours = self
                .fds
                .get(&tgid)
                .and_then(|t| t.get(&p.args[0]))
                .is_some_and(|e| e.tentative.is_none() && matches!(e.target, Target::Ours(_)));
            if !ours {
                return Ok(false);
            }
            self.devs.push(dev);
        }
        match self.inode_path(ino) {
            Some(path) => {
                let Target::Ours(file) = self.target(Some(path)) else {
                    return Ok(false);
                };
                if ret < 0 {
                    self.detail.failed_calls += 1;
                    return Ok(true);
                }
                self.detail.syncs_by_inode += 1;
                self.write_io(p.call, p.time_ns, op, file, 0, 0)?;
            }
            // On our file system, gone before we could walk to it.
            None => self.detail.unresolved_ios += 1,
        }
        Ok(true)
    }

    /// Records the open fds (and positions) of every traced process, as
    /// tentative entries: an fd closed (and maybe reopened) after tracing
    /// started but before this look is corrected by the close event.
    pub fn snapshot(&mut self, pids: &[u32]) {
        for &pid in pids {
            let tgid = self.tgid(pid);
            if tgid != pid {
                continue; // threads share their process's table
            }
            for (fd, path, pos) in proc::fds(pid) {
                let target = self.target(Some(path));
                self.insert_tentative(tgid, fd, target, pos, false);
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

    fn target(&mut self, path: Option<PathBuf>) -> Target {
        let Some(path) = path else {
            return Target::Unknown;
        };
        let Ok(rel) = path.strip_prefix(&self.under) else {
            return Target::Foreign;
        };
        if let Some(id) = self.file_ids.get(&path) {
            return Target::Ours(*id);
        }
        let id = self.files.len() as u32;
        self.files.push(FileInfo {
            kind: classify_path(rel),
            declared: false,
            rel: rel.to_string_lossy().into_owned(),
        });
        self.file_ids.insert(path, id);
        Target::Ours(id)
    }

    /// Reads `fd`'s path from /proc now and enters it as tentative.
    fn resolve(&mut self, pid: u32, tgid: u32, fd: u64, append: bool) {
        let target = self.target(proc::fd_path(pid, fd));
        self.insert_tentative(tgid, fd, target, 0, append);
    }

    fn insert_tentative(&mut self, tgid: u32, fd: u64, target: Target, pos: u64, append: bool) {
        let now = crate::monotonic_ns();
        self.generation += 1;
        let generation = self.generation;
        let old = self.fds.entry(tgid).or_default().insert(
            fd,
            FdEntry {
                target,
                pos,
                append,
                tentative: Some(Tentative {
                    resolved_at_ns: now,
                    generation,
                    queue: Vec::new(),
                    foreign_requests: 0,
                }),
            },
        );
        if let Some(old) = old {
            // Replaced (an openat returned an fd we thought open): what it
            // held is as good as a close at this point.
            self.settle_removed(old, u64::MAX);
        }
        self.tentative.push_back((now, tgid, fd, generation));
    }

    /// The event stream has reached `time_ns`: every path read before it
    /// (with no close seen in between) is confirmed.
    fn confirm_until(&mut self, time_ns: u64) -> Result<(), TraceError> {
        while let Some(&(at, tgid, fd, generation)) = self.tentative.front() {
            if at > time_ns {
                break;
            }
            self.tentative.pop_front();
            self.confirm(tgid, fd, generation)?;
        }
        Ok(())
    }

    fn confirm(&mut self, tgid: u32, fd: u64, generation: u64) -> Result<(), TraceError> {
        let Some(entry) = self.fds.get_mut(&tgid).and_then(|t| t.get_mut(&fd)) else {
            return Ok(());
        };
        if entry.tentative.as_ref().map(|t| t.generation) != Some(generation) {
            return Ok(());
        }
        let t = entry.tentative.take().expect("checked");
        let target = entry.target;
        self.flush_queue(target, t)
    }

    fn flush_queue(&mut self, target: Target, t: Tentative) -> Result<(), TraceError> {
        match target {
            Target::Ours(file) => {
                for q in t.queue {
                    self.write_io(q.call, q.time_ns, q.op, file, q.offset_bytes, q.size_bytes)?;
                }
            }
            Target::Unknown => self.detail.unresolved_ios += t.queue.len() as u64,
            Target::Foreign => {}
        }
        Ok(())
    }

    /// An fd closed at `closed_at_ns` (u64::MAX: replaced): a path read
    /// after the close belonged to something else, so its waiting requests
    /// cannot be attributed; one read before is confirmed.
    fn settle_removed(&mut self, entry: FdEntry, closed_at_ns: u64) {
        if let Some(t) = entry.tentative {
            if t.resolved_at_ns > closed_at_ns || closed_at_ns == u64::MAX {
                self.detail.unresolved_ios += t.queue.len() as u64 + t.foreign_requests;
                self.detail.misresolved_fds += 1;
            } else {
                // Confirmed by the close itself.
                let _ = self.flush_queue(entry.target, t);
            }
        }
    }

    fn close(&mut self, tgid: u32, fd: u64, at_ns: u64) {
        if let Some(entry) = self.fds.get_mut(&tgid).and_then(|t| t.remove(&fd)) {
            self.settle_removed(entry, at_ns);
        }
    }

    /// `newfd` becomes a copy of `oldfd` (dup, dup2, dup3, F_DUPFD).
    fn dup(&mut self, tgid: u32, oldfd: u64, newfd: u64) {
        let Some(old) = self.fds.get(&tgid).and_then(|t| t.get(&oldfd)).cloned() else {
            return;
        };
        let resolved_at = old.tentative.as_ref().map(|t| t.resolved_at_ns);
        self.generation += 1;
        let generation = self.generation;
        let copy = FdEntry {
            tentative: resolved_at.map(|r| Tentative {
                resolved_at_ns: r,
                generation,
                queue: Vec::new(),
                foreign_requests: 0,
            }),
            ..old
        };
        self.fds.entry(tgid).or_default().insert(newfd, copy);
        if let Some(r) = resolved_at {
            // Confirmed together with (not before) the original's look.
            self.tentative.push_back((r, tgid, newfd, generation));
        }
    }

    fn write_io(
        &mut self,
        call: usize,
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
        *self
            .detail
            .by_syscall
            .entry(SYSCALLS[call].to_string())
            .or_default() += 1;
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

    /// A call's entry: fds that a call closes are gone from its entry on
    /// (a path read during the call may already be the next file's).
    fn enter(&mut self, pid: u32, call: usize, time_ns: u64, args: [u64; 6]) {
        let tgid = self.tgid(pid);
        match SYSCALLS[call] {
            "close" => self.close(tgid, args[0], time_ns),
            "dup2" | "dup3" if args[0] != args[1] => self.close(tgid, args[1], time_ns),
            "close_range" if args[2] & CLOSE_RANGE_CLOEXEC == 0 => {
                let (first, last) = (args[0], args[1]);
                let fds: Vec<u64> = self
                    .fds
                    .get(&tgid)
                    .map(|t| {
                        t.keys()
                            .copied()
                            .filter(|fd| (first..=last).contains(fd))
                            .collect()
                    })
                    .unwrap_or_default();
                for fd in fds {
                    self.close(tgid, fd, time_ns);
                }
            }
            _ => {}
        }
        self.pending.insert(
            pid,
            Pending {
                call,
                time_ns,
                args,
                sync_inode: None,
            },
        );
    }

    fn exit(&mut self, pid: u32, call: usize, p: Pending, ret: i64) -> Result<(), TraceError> {
        self.detail.syscalls += 1;
        let name = SYSCALLS[call];
        let tgid = self.tgid(pid);
        let fd = p.args[0];
        match name {
            "openat" if ret >= 0 => self.resolve(pid, tgid, ret as u64, p.args[2] & O_APPEND != 0),
            "dup" | "dup2" | "dup3" if ret >= 0 => self.dup(tgid, fd, ret as u64),
            "fcntl" if ret >= 0 && (p.args[1] == F_DUPFD || p.args[1] == F_DUPFD_CLOEXEC) => {
                self.dup(tgid, fd, ret as u64)
            }
            "openat" | "close" | "dup" | "dup2" | "dup3" | "fcntl" | "close_range" => {}
            "lseek" => {
                if ret >= 0 {
                    if let Some(e) = self.fds.get_mut(&tgid).and_then(|t| t.get_mut(&fd)) {
                        e.pos = ret as u64;
                    }
                }
            }
            _ => self.io(pid, tgid, name, p, ret)?,
        }
        Ok(())
    }

    fn io(
        &mut self,
        pid: u32,
        tgid: u32,
        name: &str,
        p: Pending,
        ret: i64,
    ) -> Result<(), TraceError> {
        let fd = p.args[0];
        let sync_op = match name {
            "fsync" => Some(FileOp::Fsync),
            "fdatasync" => Some(FileOp::Fdatasync),
            _ => None,
        };
        if let Some(op) = sync_op {
            if self.sync_by_inode(&p, op, tgid, ret)? {
                return Ok(());
            }
        }
        let known = self.fds.get(&tgid).is_some_and(|t| t.contains_key(&fd));
        if !known {
            // First met here (an fd from a call we do not trace, or
            // inherited across exec): resolve now, once.
            self.detail.late_resolved_fds += 1;
            self.resolve(pid, tgid, fd, false);
        }
        let entry = self
            .fds
            .get_mut(&tgid)
            .and_then(|t| t.get_mut(&fd))
            .expect("just inserted");
        if ret < 0 {
            if matches!(entry.target, Target::Ours(_)) {
                self.detail.failed_calls += 1;
            }
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
                // read, write, readv, writev, and the v2 calls at the
                // current position: the tracked position moves.
                let op = if name.contains("read") {
                    FileOp::Read
                } else {
                    FileOp::Write
                };
                let at = entry.pos;
                entry.pos = entry.pos.saturating_add(size);
                if op == FileOp::Write && entry.append && matches!(entry.target, Target::Ours(_)) {
                    self.detail.append_writes += 1;
                }
                (op, at, size)
            }
        };
        if matches!(op, FileOp::Read | FileOp::Write) && size == 0 {
            return Ok(()); // end of file: nothing transferred
        }
        let target = entry.target;
        if let Some(t) = entry.tentative.as_mut() {
            match target {
                Target::Foreign => t.foreign_requests += 1,
                _ if t.queue.len() >= MAX_QUEUED => self.detail.unresolved_ios += 1,
                _ => t.queue.push(Queued {
                    call: p.call,
                    time_ns: p.time_ns,
                    op,
                    offset_bytes: offset,
                    size_bytes: size,
                }),
            }
            return Ok(());
        }
        match target {
            Target::Ours(file) => self.write_io(p.call, p.time_ns, op, file, offset, size),
            Target::Unknown => {
                self.detail.unresolved_ios += 1;
                Ok(())
            }
            Target::Foreign => Ok(()),
        }
    }

    fn fork(&mut self, parent: u32, child: u32) {
        let ptgid = self.tgid(parent);
        // A thread (same thread group) shares the table; a process copies it.
        let ctgid = proc::tgid(child).unwrap_or(child);
        self.tgids.insert(child, ctgid);
        if ctgid == ptgid {
            return;
        }
        let table = self.fds.get(&ptgid).cloned().unwrap_or_default();
        let mut copy = HashMap::with_capacity(table.len());
        for (fd, mut e) in table {
            if let Some(t) = e.tentative.as_mut() {
                // The child's copy waits for the same look, on its own.
                self.generation += 1;
                t.generation = self.generation;
                t.queue.clear();
                t.foreign_requests = 0;
                self.tentative
                    .push_back((t.resolved_at_ns, ctgid, fd, t.generation));
            }
            copy.insert(fd, e);
        }
        self.fds.insert(ctgid, copy);
    }

    /// exec closes the close-on-exec fds without a close call: forget the
    /// whole table; inherited fds are resolved again at their first use.
    fn exec(&mut self, time_ns: u64, pid: u32) {
        let tgid = self.tgid(pid);
        if let Some(table) = self.fds.remove(&tgid) {
            for (_, e) in table {
                self.settle_removed(e, time_ns);
            }
        }
    }

    fn process_exit(&mut self, time_ns: u64, pid: u32) {
        self.pending.remove(&pid);
        if self.tgids.remove(&pid) == Some(pid) {
            if let Some(table) = self.fds.remove(&pid) {
                for (_, e) in table {
                    self.settle_removed(e, time_ns);
                }
            }
        }
    }

    /// At the end every remaining look is confirmed: a close before it
    /// would have been in the stream.
    pub fn finish(&mut self) -> Result<(), TraceError> {
        self.confirm_until(u64::MAX)?;
        self.flush()
    }
}

/// `0x1f` or `31` (the kernel prints small values in decimal).
pub(crate) fn number(text: &str) -> Option<u64> {
    let t = text.trim();
    match t.strip_prefix("0x") {
        Some(hex) => u64::from_str_radix(hex, 16).ok(),
        None => t.parse().ok(),
    }
}

/// `(fd: 3, buf: 0x55bc, count: 0x2000, pos: 0x1000)` to the values in order.
pub(crate) fn args(body: &str) -> Option<[u64; 6]> {
    let inner = body.trim().strip_prefix('(')?.strip_suffix(')')?;
    let mut out = [0u64; 6];
    for (i, kv) in inner.split(", ").enumerate().take(6) {
        let (_, v) = kv.split_once(':')?;
        out[i] = number(v)?;
    }
    Some(out)
}

impl Sink for LogicalSink {
    fn event(&mut self, ev: &Event) -> Result<(), TraceError> {
        self.confirm_until(ev.time_ns)?;
        match ev.kind {
            Kind::SysEnter { call, args } => self.enter(ev.pid, call as usize, ev.time_ns, args),
            Kind::SysExit { call, ret } => match self.pending.remove(&ev.pid) {
                Some(p) if p.call == call as usize => self.exit(ev.pid, p.call, p, ret)?,
                _ => self.detail.exits_without_entry += 1,
            },
            Kind::Fork {
                parent_pid,
                child_pid,
            } => self.fork(parent_pid, child_pid),
            Kind::Exec { pid } => self.exec(ev.time_ns, pid),
            Kind::ProcessExit { pid } => self.process_exit(ev.time_ns, pid),
            Kind::SyncInode { dev, ino } => {
                // The first inode synced inside an fsync or fdatasync call.
                if let Some(p) = self.pending.get_mut(&ev.pid) {
                    if matches!(SYSCALLS[p.call], "fsync" | "fdatasync") && p.sync_inode.is_none() {
                        p.sync_inode = Some((dev, ino));
                    }
                }
            }
            _ => self.detail.unparsed_lines += 1,
        }
        Ok(())
    }

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
        assert_eq!(classify_path(Path::new("base/5/16384.1")), FileKind::Data);
        assert_eq!(classify_path(Path::new("base/5/16384_fsm")), FileKind::Data);
        assert_eq!(
            classify_path(Path::new("base/5/pg_internal.init")),
            FileKind::Other
        );
        assert_eq!(
            classify_path(Path::new("global/pg_filenode.map")),
            FileKind::Other
        );
        assert_eq!(classify_path(Path::new("pg_xact/0000")), FileKind::Other);
        assert_eq!(classify_path(Path::new("postmaster.pid")), FileKind::Other);
    }

    #[test]
    fn innodb_paths_are_classified_by_their_names() {
        assert_eq!(classify_path(Path::new("ib_logfile0")), FileKind::Wal);
        assert_eq!(classify_path(Path::new("ibdata1")), FileKind::Data);
        assert_eq!(classify_path(Path::new("undo001")), FileKind::Data);
        assert_eq!(classify_path(Path::new("tpcc/stock.ibd")), FileKind::Data);
        assert_eq!(
            classify_path(Path::new("mysql/innodb_index_stats.ibd")),
            FileKind::Data
        );
        assert_eq!(classify_path(Path::new("tpcc/stock.frm")), FileKind::Other);
        assert_eq!(
            classify_path(Path::new("aria_log.00000001")),
            FileKind::Other
        );
        assert_eq!(classify_path(Path::new("ib_buffer_pool")), FileKind::Other);
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
        let e = events();
        assert_eq!(e.len(), 2 * SYSCALLS.len() + 3 + SYNC_INODE_EVENTS.len());
        assert!(e.contains(&("syscalls", "sys_exit_pwrite64".to_string())));
    }
}
