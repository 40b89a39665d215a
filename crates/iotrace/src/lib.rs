//! Logical and physical IO traced in the same run (Wang et al. sections 3-4).
//!
//! *Logical* IO is what an application asks of the file system: the
//! read/write/pread/pwrite/fsync/... system calls of a process tree on files
//! under a directory. *Physical* IO is what reaches the device: the block
//! requests of one block device. Both come from the kernel's tracepoints
//! through tracefs (no kprobes, no blktrace: neither works everywhere), each
//! in a private tracefs instance so a user's own tracing is untouched, read
//! by one thread per instance as the run goes and written in flashlab's
//! trace format: `physical.trace` replays as-is with `flashlab replay`;
//! `logical.trace` is the per-file variant (a file column and `# file`
//! declarations naming each file's kind: relation data, WAL, other).
//!
//! ```no_run
//! # fn main() -> Result<(), flashlab_iotrace::TraceError> {
//! use flashlab_iotrace::{start, PhysicalSpec, TraceSpec};
//! let session = start(TraceSpec {
//!     out_dir: "results/oltp".into(),
//!     logical: None,
//!     physical: Some(PhysicalSpec { major: 7, minor: 0 }),
//!     reader: Default::default(),
//! })?;
//! // ... the measured run ...
//! let summary = session.stop()?;
//! println!("{} physical writes, {} events lost", summary.physical.writes, summary.lost_events);
//! # Ok(()) }
//! ```
//!
//! Events the kernel could not buffer are counted from each instance's
//! per-CPU `stats` (overrun, dropped) and reported in
//! [`TraceSummary::lost_events`], never dropped silently. docs/oltp-tracing.md
//! says what is traced, how, the limits and the overhead measured.

use std::fmt;
use std::fs::File;
use std::io;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;

use serde::Serialize;

pub mod analysis;
mod event;
#[doc(hidden)]
pub mod fuzz;
mod logical;
mod physical;
mod pipe;
mod proc;
mod raw;
mod tracefs;

pub use logical::{classify_path, LogicalDetail};
pub use physical::{CompletionCounts, PhysicalDetail, ServiceTime};
pub use raw::RawUnavailable;

/// What to trace and where to write it.
#[derive(Clone, Debug)]
pub struct TraceSpec {
    /// Created if missing; receives `logical.trace`, `physical.trace` and
    /// `iotrace.json` (the summary).
    pub out_dir: PathBuf,
    pub logical: Option<LogicalSpec>,
    pub physical: Option<PhysicalSpec>,
    /// How the events are read from the kernel ([`Reader::Auto`]: the
    /// binary per-CPU pipes, or the text pipe where they cannot be used).
    pub reader: Reader,
}

/// How a session reads its events from tracefs. Both readers give the same
/// events (tests/readers.rs compares them on one workload); the binary one
/// costs the tracer less CPU (docs/oltp-tracing.md).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Reader {
    /// Raw where it can be used, else text (with a note saying why).
    #[default]
    Auto,
    /// The text `trace_pipe` (the kernel formats every event).
    Text,
    /// The binary per-CPU `trace_pipe_raw` ring-buffer pages; an error if
    /// they cannot be used.
    Raw,
}

impl fmt::Display for Reader {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Reader::Auto => "the binary per-CPU pipes where they work, else the text trace_pipe",
            Reader::Text => "the text trace_pipe",
            Reader::Raw => "the binary per-CPU ring-buffer pages (trace_pipe_raw)",
        })
    }
}

/// Logical IO: the system calls of `root_pid` and every process it forks
/// (also those already running at start), on files under `under_dir`.
#[derive(Clone, Debug)]
pub struct LogicalSpec {
    pub root_pid: u32,
    pub under_dir: PathBuf,
}

/// Physical IO: the block requests of the device `major:minor`.
#[derive(Clone, Copy, Debug)]
pub struct PhysicalSpec {
    pub major: u32,
    pub minor: u32,
}

/// Requests counted by class. Logical: `flushes` counts fsync and
/// fdatasync, `sync_ranges` sync_file_range, discards are 0. Physical:
/// requests issued to the device (a flush is a zero-size flush request).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
pub struct IoCounts {
    pub reads: u64,
    pub read_bytes: u64,
    pub writes: u64,
    pub write_bytes: u64,
    pub discards: u64,
    pub discard_bytes: u64,
    pub flushes: u64,
    pub sync_ranges: u64,
}

/// The result of a session.
#[derive(Clone, Debug, Serialize)]
pub struct TraceSummary {
    pub logical_path: Option<PathBuf>,
    pub physical_path: Option<PathBuf>,
    pub logical: IoCounts,
    pub physical: IoCounts,
    /// Events the kernel's ring buffers could not keep (both instances).
    pub lost_events: u64,
    pub logical_lost_events: u64,
    pub physical_lost_events: u64,
    /// Wall time the session traced (start to stop).
    pub duration_ns: u64,
    /// CLOCK_MONOTONIC at start: both traces' `time_ns` count from it.
    pub t0_monotonic_ns: u64,
    pub logical_detail: Option<LogicalDetail>,
    pub physical_detail: Option<PhysicalDetail>,
    /// The reader the session used: `raw`, or `text` when any side fell
    /// back to the text pipe (a note says why).
    pub reader: Reader,
    /// Things the user should know (e.g. that tracefs was mounted).
    pub notes: Vec<String>,
}

/// Why tracing could not start or finish. Each displays as one line naming
/// the fix.
#[derive(Debug)]
pub enum TraceError {
    /// Not running as root.
    NotRoot,
    /// tracefs missing or not mountable, or a tracepoint missing.
    Unavailable(Unavailable),
    /// A bad spec (no such process, directory, device).
    Spec(SpecError),
    /// An IO error on tracefs or an output file.
    Io { what: String, source: io::Error },
    /// A reader thread panicked.
    Reader(ReaderError),
}

impl TraceError {
    pub(crate) fn io(what: String, source: io::Error) -> TraceError {
        TraceError::Io { what, source }
    }
}

impl fmt::Display for TraceError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            TraceError::NotRoot => f.write_str(
                "IO tracing needs root (tracefs instances and tracepoints); run as root or pass --no-trace",
            ),
            TraceError::Unavailable(e) => fmt::Display::fmt(e, f),
            TraceError::Reader(e) => fmt::Display::fmt(e, f),
            TraceError::Spec(e) => fmt::Display::fmt(e, f),
            TraceError::Io { what, source } => write!(f, "IO tracing: {what}: {source}"),
        }
    }
}

impl std::error::Error for TraceError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            TraceError::Io { source, .. } => Some(source),
            TraceError::Spec(e) => std::error::Error::source(e),
            TraceError::Unavailable(e) => std::error::Error::source(e),
            _ => None,
        }
    }
}

/// Why tracing cannot work on this machine; each names the fix.
#[derive(Debug)]
pub enum Unavailable {
    /// There is no tracefs mount point: the kernel has no tracing.
    NoTracefs,
    /// tracefs was not mounted and mounting it failed.
    MountFailed(io::Error),
    /// tracefs has no `instances` directory (a kernel before 4.x).
    NoInstances,
    /// A tracepoint we use is missing.
    NoTracepoint {
        system: &'static str,
        event: String,
        root: PathBuf,
    },
    /// [`Reader::Raw`] was asked for and the binary pipes cannot be used.
    Raw(RawUnavailable),
}

impl fmt::Display for Unavailable {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Unavailable::NoTracefs => write!(
                f,
                "{} does not exist: this kernel has no tracefs (CONFIG_TRACING); use a kernel with tracing",
                tracefs::TRACEFS
            ),
            Unavailable::MountFailed(e) => write!(
                f,
                "tracefs is not mounted and mounting it failed ({e}); {}",
                tracefs::MOUNT_FIX
            ),
            Unavailable::NoInstances => write!(
                f,
                "tracefs mounted at {} has no instances directory; use a kernel with tracing instances (4.x or later)",
                tracefs::TRACEFS
            ),
            Unavailable::NoTracepoint { system, event, root } => write!(
                f,
                "the kernel has no tracepoint {system}/{event} in {}; use a kernel with CONFIG_FTRACE_SYSCALLS and block tracepoints, or pass --no-trace",
                root.display()
            ),
            Unavailable::Raw(e) => write!(
                f,
                "the binary trace pipes cannot be used ({e}); use the text reader (Reader::Auto or Reader::Text)"
            ),
        }
    }
}

impl std::error::Error for Unavailable {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            Unavailable::MountFailed(e) => Some(e),
            Unavailable::Raw(e) => Some(e),
            _ => None,
        }
    }
}

/// A reader thread's failure other than an IO error.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ReaderError {
    /// The thread panicked (a bug: the trace is incomplete).
    Panicked,
}

impl fmt::Display for ReaderError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ReaderError::Panicked => f.write_str("a trace reader thread panicked"),
        }
    }
}

impl std::error::Error for ReaderError {}

/// What is wrong with a [`TraceSpec`]: the process, directory or device it
/// names does not exist, or it names nothing.
#[derive(Debug)]
pub enum SpecError {
    /// Neither a logical nor a physical spec.
    NothingToTrace,
    /// The physical spec's major:minor is no block device.
    NoBlockDevice {
        major: u32,
        minor: u32,
        /// The /sys/dev/block entry that does not exist.
        sys_path: PathBuf,
    },
    /// The logical spec's directory cannot be resolved.
    NoDirectory { dir: PathBuf, source: io::Error },
    /// The logical spec's root process does not exist.
    NoProcess { pid: u32 },
}

impl fmt::Display for SpecError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            SpecError::NothingToTrace => {
                f.write_str("nothing to trace: give a logical or a physical spec")
            }
            SpecError::NoBlockDevice {
                major,
                minor,
                sys_path,
            } => write!(
                f,
                "no block device {major}:{minor} ({} does not exist); pass the major:minor of the device under test",
                sys_path.display()
            ),
            SpecError::NoDirectory { dir, source } => write!(
                f,
                "cannot trace files under {}: {source}; pass an existing directory",
                dir.display()
            ),
            SpecError::NoProcess { pid } => write!(
                f,
                "no process {pid} to trace; pass the pid of a running process (e.g. the postmaster)"
            ),
        }
    }
}

impl std::error::Error for SpecError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            SpecError::NoDirectory { source, .. } => Some(source),
            _ => None,
        }
    }
}

/// The tracepoints each side needs.
const PHYSICAL_EVENTS: [(&str, &str); 2] =
    [("block", "block_rq_issue"), ("block", "block_rq_complete")];

/// Checks that tracing can work here: root, tracefs present (mounting it
/// if needed: mounting is harmless and what the fix would say), and every
/// tracepoint we use. The error is one line naming the fix.
pub fn check_available() -> Result<(), TraceError> {
    // A tracefs this check mounts stays mounted (`tracefs::ensure_mounted`
    // says why): a session started meanwhile may be using it.
    check()?;
    Ok(())
}

/// [`check_available`], returning tracefs's root and whether we mounted it.
fn check() -> Result<(PathBuf, bool), TraceError> {
    // SAFETY: geteuid has no preconditions.
    if unsafe { libc::geteuid() } != 0 {
        return Err(TraceError::NotRoot);
    }
    let (root, mounted) = tracefs::ensure_mounted()?;
    let logical = logical::events();
    let all = PHYSICAL_EVENTS
        .iter()
        .cloned()
        .chain(logical.iter().map(|(s, e)| (*s, e.as_str())));
    for (system, event) in all {
        if !tracefs::has_event(&root, system, event) {
            return Err(TraceError::Unavailable(Unavailable::NoTracepoint {
                system,
                event: event.to_string(),
                root,
            }));
        }
    }
    Ok((root, mounted))
}

/// A running trace. [`TraceSession::stop`] ends it and returns the summary;
/// dropping it also stops the readers and removes the tracefs instances.
pub struct TraceSession {
    t0_ns: u64,
    out_dir: PathBuf,
    notes: Vec<String>,
    reader: Reader,
    physical: Option<Part<physical::PhysicalSink>>,
    logical: Option<Part<logical::LogicalSink>>,
}

impl Drop for TraceSession {
    fn drop(&mut self) {
        // The parts first: their instances keep tracefs busy.
        self.physical.take();
        self.logical.take();
    }
}

/// One instance and its reader thread. Field order matters: the thread is
/// joined (in Drop) before the instance is removed, because an open
/// trace_pipe keeps the instance busy.
struct Part<S: pipe::Sink + 'static> {
    stop: Arc<AtomicBool>,
    thread: Option<JoinHandle<(S, Result<(), TraceError>)>>,
    instance: tracefs::Instance,
    path: PathBuf,
}

/// Where a reader thread takes its events from.
enum Source {
    Text(File),
    Raw(Vec<File>, raw::Layout),
}

impl Source {
    /// Opens the pipe(s) `want` asks for. With [`Reader::Auto`], a raw side
    /// that cannot work falls back to the text pipe and says why in `notes`.
    fn open(
        instance: &tracefs::Instance,
        events: &[(&str, &str)],
        want: Reader,
        side: &str,
        notes: &mut Vec<String>,
    ) -> Result<Source, TraceError> {
        if want != Reader::Text {
            let raw = raw::Layout::load(instance.dir(), events)
                .and_then(|layout| Ok(Source::Raw(raw::open_cpus(instance.dir())?, layout)));
            match raw {
                Ok(source) => return Ok(source),
                Err(e) if want == Reader::Raw => {
                    return Err(TraceError::Unavailable(Unavailable::Raw(e)))
                }
                Err(e) => notes.push(format!(
                    "the {side} side reads the text trace_pipe: the binary per-CPU pipes cannot be used ({e})"
                )),
            }
        }
        Ok(Source::Text(pipe::open_pipe(&instance.path("trace_pipe"))?))
    }

    fn reader(&self) -> Reader {
        match self {
            Source::Text(_) => Reader::Text,
            Source::Raw(..) => Reader::Raw,
        }
    }
}

impl<S: pipe::Sink + 'static> Part<S> {
    fn spawn(
        instance: tracefs::Instance,
        path: PathBuf,
        mut sink: S,
        name: &str,
        wake: pipe::Wake,
        source: Source,
    ) -> Result<Part<S>, TraceError> {
        let stop = Arc::new(AtomicBool::new(false));
        let flag = stop.clone();
        let thread = std::thread::Builder::new()
            .name(format!("iotrace-{name}"))
            .spawn(move || {
                let r = match source {
                    Source::Text(pipe) => pipe::run(pipe, &flag, &mut sink, wake),
                    Source::Raw(cpus, layout) => raw::run(cpus, &layout, &flag, &mut sink, wake),
                };
                (sink, r)
            })
            .map_err(|e| TraceError::io("starting a trace reader thread".to_string(), e))?;
        Ok(Part {
            stop,
            thread: Some(thread),
            instance,
            path,
        })
    }

    /// Stops the kernel side, drains the pipe, joins the reader and reads
    /// the lost-event counts; the instance is removed afterwards.
    fn finish(mut self) -> Result<(S, u64, PathBuf), TraceError> {
        let _ = self.instance.set("tracing_on", "0");
        self.stop.store(true, Ordering::Release);
        let thread = self.thread.take().expect("joined once");
        let (sink, result) = thread
            .join()
            .map_err(|_| TraceError::Reader(ReaderError::Panicked))?;
        result?;
        let lost = self.instance.lost_events()?;
        self.instance.remove()?;
        Ok((sink, lost, self.path.clone()))
    }
}

impl<S: pipe::Sink + 'static> Drop for Part<S> {
    fn drop(&mut self) {
        let _ = self.instance.set("tracing_on", "0");
        self.stop.store(true, Ordering::Release);
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
        // `instance` is dropped next and removes itself.
    }
}

pub(crate) fn monotonic_ns() -> u64 {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: a valid timespec pointer.
    unsafe {
        libc::clock_gettime(libc::CLOCK_MONOTONIC, &mut ts);
    }
    ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64
}

/// Ring-buffer size per CPU for each side: large enough to ride out a
/// reader descheduled for a few hundred ms on a loaded 2-core machine at
/// tens of thousands of events per second (a syscall event is ~100 bytes
/// in the buffer, two per call).
const PHYSICAL_BUFFER_KB: u32 = 8 * 1024;
/// The physical reader's pause between batches: at the 48 K IOPS measured
/// for the text pipe's ceiling (two ~100-byte events per request), 50 ms
/// fill about 1 MB of the buffer's 8 MiB per CPU.
const PHYSICAL_BATCH: std::time::Duration = std::time::Duration::from_millis(50);
const LOGICAL_BUFFER_KB: u32 = 32 * 1024;
/// The logical reader wakes on an event, but at most every 5 ms: under
/// TPC-C, waking on every event cost the raw reader 17.6 µs of CPU per
/// traced request (median of 3 runs), 5 ms apart 8.5 µs (interleaved, same
/// run; a 2 ms pause gave 11.1 µs against 6.7 µs for 5 ms in another).
/// The lag this adds (paths are read from /proc when an openat is seen)
/// did not raise `unresolved_ios` beyond the runs' spread (1.1-2.6 % of
/// file requests either way; docs/oltp-tracing.md).
const LOGICAL_WAKE: pipe::Wake = pipe::Wake::Coalesced(std::time::Duration::from_millis(5));

/// Starts tracing. Errors leave nothing behind (instances are removed).
pub fn start(spec: TraceSpec) -> Result<TraceSession, TraceError> {
    if spec.logical.is_none() && spec.physical.is_none() {
        return Err(TraceError::Spec(SpecError::NothingToTrace));
    }
    let (root, mounted) = check()?;
    if let Some(p) = spec.physical {
        let sys = format!("/sys/dev/block/{}:{}", p.major, p.minor);
        if !Path::new(&sys).exists() {
            return Err(TraceError::Spec(SpecError::NoBlockDevice {
                major: p.major,
                minor: p.minor,
                sys_path: PathBuf::from(sys),
            }));
        }
    }
    let mut notes = Vec::new();
    if mounted {
        notes.push(format!(
            "mounted tracefs at {} (it was not mounted); it stays mounted, as another flashlab session may be tracing in it (`umount {}` removes it)",
            root.display(),
            root.display()
        ));
    }
    std::fs::create_dir_all(&spec.out_dir)
        .map_err(|e| TraceError::io(format!("creating {}", spec.out_dir.display()), e))?;
    let t0_ns = monotonic_ns();
    let mut session = TraceSession {
        t0_ns,
        out_dir: spec.out_dir.clone(),
        notes,
        reader: Reader::Raw,
        physical: None,
        logical: None,
    };
    if let Some(p) = spec.physical {
        let instance = tracefs::Instance::create(&root)?;
        instance.set("tracing_on", "0")?;
        instance.set("buffer_size_kb", &PHYSICAL_BUFFER_KB.to_string())?;
        instance.set("trace_clock", "mono")?;
        // Drop new events rather than overwrite old ones when the buffer
        // is full: the trace keeps its order and `dropped events` counts.
        instance.set("options/overwrite", "0")?;
        let dev = (u64::from(p.major) << 20) | u64::from(p.minor);
        for (system, event) in PHYSICAL_EVENTS {
            instance.set(
                &format!("events/{system}/{event}/filter"),
                &format!("dev == {dev}"),
            )?;
            instance.set(&format!("events/{system}/{event}/enable"), "1")?;
        }
        let path = spec.out_dir.join("physical.trace");
        let file = create(&path)?;
        let sink = physical::PhysicalSink::new(t0_ns, file)?;
        let source = Source::open(
            &instance,
            &PHYSICAL_EVENTS,
            spec.reader,
            "physical",
            &mut session.notes,
        )?;
        if source.reader() == Reader::Text {
            session.reader = Reader::Text;
        }
        // Block events need no prompt look-up: read them in batches.
        let part = Part::spawn(
            instance,
            path,
            sink,
            "physical",
            pipe::Wake::Batched(PHYSICAL_BATCH),
            source,
        )?;
        part.instance.set("tracing_on", "1")?;
        session.physical = Some(part);
    }
    if let Some(l) = spec.logical {
        let under = l.under_dir.canonicalize().map_err(|source| {
            TraceError::Spec(SpecError::NoDirectory {
                dir: l.under_dir.clone(),
                source,
            })
        })?;
        let pids = proc::tree(l.root_pid);
        if pids.is_empty() {
            return Err(TraceError::Spec(SpecError::NoProcess { pid: l.root_pid }));
        }
        let instance = tracefs::Instance::create(&root)?;
        instance.set("tracing_on", "0")?;
        instance.set("buffer_size_kb", &LOGICAL_BUFFER_KB.to_string())?;
        instance.set("trace_clock", "mono")?;
        instance.set("options/overwrite", "0")?;
        // Wake the reader on any event, not when the buffer is half full
        // (poll's default): paths are read from /proc when the reader sees
        // an openat, so its lag decides which short-lived fds it can name.
        instance.set("buffer_percent", "0")?;
        // Follow the tree: children forked later join the pid list.
        instance.set("options/event-fork", "1")?;
        let list: Vec<String> = pids.iter().map(u32::to_string).collect();
        instance.set("set_event_pid", &list.join(" "))?;
        let mut events = logical::events();
        // The file systems' fsync events this kernel has (a module not
        // loaded has none).
        events.retain(|(system, event)| {
            !logical::SYNC_INODE_EVENTS.contains(&(system, event.as_str()))
                || instance.path(&format!("events/{system}/{event}")).is_dir()
        });
        for (system, event) in &events {
            instance.set(&format!("events/{system}/{event}/enable"), "1")?;
        }
        let events: Vec<(&str, &str)> = events.iter().map(|(s, e)| (*s, e.as_str())).collect();
        let source = Source::open(
            &instance,
            &events,
            spec.reader,
            "logical",
            &mut session.notes,
        )?;
        if source.reader() == Reader::Text {
            session.reader = Reader::Text;
        }
        let path = spec.out_dir.join("logical.trace");
        let file = create(&path)?;
        let mut sink = logical::LogicalSink::new(t0_ns, file, under)?;
        sink.follow_sync_inodes();
        let part_instance = instance;
        part_instance.set("tracing_on", "1")?;
        // The snapshot comes after tracing is on: an fd opened in between
        // is seen twice (harmless), never missed.
        sink.snapshot(&pids);
        session.logical = Some(Part::spawn(
            part_instance,
            path,
            sink,
            "logical",
            LOGICAL_WAKE,
            source,
        )?);
    }
    Ok(session)
}

fn create(path: &Path) -> Result<File, TraceError> {
    File::create(path).map_err(|e| TraceError::io(format!("creating {}", path.display()), e))
}

impl TraceSession {
    /// The reader in use: [`Reader::Raw`], or [`Reader::Text`] when any
    /// side reads the text pipe.
    pub fn reader(&self) -> Reader {
        self.reader
    }

    /// Notes so far (e.g. "mounted tracefs").
    pub fn notes(&self) -> &[String] {
        &self.notes
    }

    /// The tracefs instances this session created (removed at stop).
    pub fn instance_dirs(&self) -> Vec<PathBuf> {
        let mut out = Vec::new();
        if let Some(p) = &self.physical {
            out.push(p.instance.dir().to_path_buf());
        }
        if let Some(l) = &self.logical {
            out.push(l.instance.dir().to_path_buf());
        }
        out
    }

    /// Stops tracing, drains the readers, removes the instances and writes
    /// `iotrace.json` beside the traces.
    pub fn stop(mut self) -> Result<TraceSummary, TraceError> {
        let duration_ns = monotonic_ns().saturating_sub(self.t0_ns);
        let mut summary = TraceSummary {
            logical_path: None,
            physical_path: None,
            logical: IoCounts::default(),
            physical: IoCounts::default(),
            lost_events: 0,
            logical_lost_events: 0,
            physical_lost_events: 0,
            duration_ns,
            t0_monotonic_ns: self.t0_ns,
            logical_detail: None,
            physical_detail: None,
            reader: self.reader,
            notes: std::mem::take(&mut self.notes),
        };
        // Finish both even if one fails, then report the first error.
        let physical = self.physical.take().map(Part::finish);
        let logical = self.logical.take().map(Part::finish);
        if let Some(r) = physical {
            let (mut sink, lost, path) = r?;
            sink.finish();
            summary.physical = sink.counts;
            summary.physical_lost_events = lost;
            summary.physical_detail = Some(sink.detail);
            summary.physical_path = Some(path);
        }
        if let Some(r) = logical {
            let (mut sink, lost, path) = r?;
            sink.finish()?;
            summary.logical = sink.counts;
            summary.logical_lost_events = lost;
            summary.logical_detail = Some(sink.detail);
            summary.logical_path = Some(path);
        }
        summary.lost_events = summary.logical_lost_events + summary.physical_lost_events;
        if summary.lost_events > 0 {
            summary.notes.push(format!(
                "{} trace events were lost (the kernel's buffers filled faster than they were read): the traces are incomplete",
                summary.lost_events
            ));
        }
        let json = serde_json::to_string_pretty(&summary).expect("summary serializes");
        let path = self.out_dir.join("iotrace.json");
        std::fs::write(&path, json + "\n")
            .map_err(|e| TraceError::io(format!("writing {}", path.display()), e))?;
        Ok(summary)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_empty_spec_is_refused_before_anything_starts() {
        let e = start(TraceSpec {
            out_dir: PathBuf::from("/nonexistent/never-created"),
            logical: None,
            physical: None,
            reader: Reader::Auto,
        })
        .err()
        .expect("nothing to trace");
        assert!(
            matches!(e, TraceError::Spec(SpecError::NothingToTrace)),
            "{e:?}"
        );
        assert_eq!(
            e.to_string(),
            "nothing to trace: give a logical or a physical spec"
        );
    }

    #[test]
    fn unavailable_tracing_names_the_fix() {
        let cases = [
            (
                Unavailable::NoTracefs,
                "/sys/kernel/tracing does not exist: this kernel has no tracefs (CONFIG_TRACING); use a kernel with tracing",
            ),
            (
                Unavailable::MountFailed(io::Error::from_raw_os_error(libc::EPERM)),
                "tracefs is not mounted and mounting it failed (Operation not permitted (os error 1)); mount it with `mount -t tracefs nodev /sys/kernel/tracing`",
            ),
            (
                Unavailable::NoInstances,
                "tracefs mounted at /sys/kernel/tracing has no instances directory; use a kernel with tracing instances (4.x or later)",
            ),
            (
                Unavailable::NoTracepoint {
                    system: "syscalls",
                    event: "sys_enter_pwrite64".into(),
                    root: PathBuf::from("/sys/kernel/tracing"),
                },
                "the kernel has no tracepoint syscalls/sys_enter_pwrite64 in /sys/kernel/tracing; use a kernel with CONFIG_FTRACE_SYSCALLS and block tracepoints, or pass --no-trace",
            ),
            (
                Unavailable::Raw(RawUnavailable::NoCpus {
                    dir: PathBuf::from("/i/per_cpu"),
                }),
                "the binary trace pipes cannot be used (no per_cpu/cpuN/trace_pipe_raw in /i/per_cpu); use the text reader (Reader::Auto or Reader::Text)",
            ),
        ];
        for (e, text) in cases {
            assert_eq!(TraceError::Unavailable(e).to_string(), text);
        }
        assert_eq!(
            TraceError::Reader(ReaderError::Panicked).to_string(),
            "a trace reader thread panicked"
        );
        let e = TraceError::Unavailable(Unavailable::MountFailed(io::Error::from_raw_os_error(
            libc::EPERM,
        )));
        assert!(std::error::Error::source(&e).is_some(), "keeps its cause");
    }

    #[test]
    fn spec_errors_name_what_to_pass() {
        let cases = [
            (
                SpecError::NoBlockDevice {
                    major: 7,
                    minor: 99,
                    sys_path: PathBuf::from("/sys/dev/block/7:99"),
                },
                "no block device 7:99 (/sys/dev/block/7:99 does not exist); pass the major:minor of the device under test",
            ),
            (
                SpecError::NoDirectory {
                    dir: PathBuf::from("/no/such"),
                    source: io::Error::from_raw_os_error(libc::ENOENT),
                },
                "cannot trace files under /no/such: No such file or directory (os error 2); pass an existing directory",
            ),
            (
                SpecError::NoProcess { pid: 4_000_000 },
                "no process 4000000 to trace; pass the pid of a running process (e.g. the postmaster)",
            ),
        ];
        for (e, text) in cases {
            assert_eq!(TraceError::Spec(e).to_string(), text);
        }
    }
}
