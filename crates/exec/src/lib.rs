//! The executor: drives one pattern against one [`Device`].
//!
//! It is written once for every target. It never reads a clock of its own:
//! "now" is the device's clock, waiting is the device's `poll`/`idle_until`,
//! and every timestamp in a record comes from a [`Completion`]. So on the
//! simulator a pause advances simulated time, and on a real device it is a
//! spin-then-sleep on CLOCK_MONOTONIC inside the real-device engine.
//!
//! Scheduling: each of the ParallelDegree streams keeps up to `queue_depth`
//! IOs outstanding; after a completion the stream's time function may owe a
//! pause, during which that stream submits nothing (other streams go on).
//! Every IO is checked against its stream's target range before submission,
//! as a second line of defence behind the pattern generator.

#![forbid(unsafe_code)]

use std::fmt;
use std::io;
use std::sync::atomic::{AtomicBool, Ordering};

use flashlab_device::{Completion, Device, DeviceError, IoRequest, Nanos};
use flashlab_pattern::{PatternSpec, PlannedIo, StreamGen};
use flashlab_results::{IoRecord, RecordWriter, FLAG_ERROR, FLAG_WARMUP};

pub mod replay;
pub use replay::{replay, ReplayMode, ReplayReport};

/// Where records go as IOs complete.
pub trait RecordSink {
    fn record(&mut self, r: &IoRecord) -> io::Result<()>;
}

impl RecordSink for RecordWriter {
    #[inline]
    fn record(&mut self, r: &IoRecord) -> io::Result<()> {
        self.append(r)
    }
}

impl RecordSink for Vec<IoRecord> {
    fn record(&mut self, r: &IoRecord) -> io::Result<()> {
        self.push(*r);
        Ok(())
    }
}

#[derive(Debug)]
pub enum ExecError {
    Device(DeviceError),
    /// An IO completed with an error; the run stops after draining.
    Io {
        io: PlannedIo,
        errno: i32,
    },
    Records(io::Error),
    /// The device made no progress with IOs outstanding.
    Stall {
        outstanding: usize,
    },
    /// The generator produced an IO outside its stream's target: a bug, never written.
    OutOfRange {
        io: PlannedIo,
        start: u64,
        end: u64,
    },
}

impl fmt::Display for ExecError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ExecError::Device(e) => write!(f, "device error: {e}"),
            ExecError::Io { io, errno } => write!(
                f,
                "{} of {} B at offset {} failed: {}",
                io.mode,
                io.size_bytes,
                io.offset_bytes,
                io::Error::from_raw_os_error(*errno)
            ),
            ExecError::Records(e) => write!(f, "cannot write per-IO records: {e}"),
            ExecError::Stall { outstanding } => {
                write!(f, "the device made no progress with {outstanding} IOs outstanding")
            }
            ExecError::OutOfRange { io, start, end } => write!(
                f,
                "internal error: IO at [{}, {}) is outside the target [{start}, {end}); nothing was submitted",
                io.offset_bytes,
                io.offset_bytes + io.size_bytes
            ),
        }
    }
}

impl std::error::Error for ExecError {}

impl From<DeviceError> for ExecError {
    fn from(e: DeviceError) -> Self {
        ExecError::Device(e)
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Outcome {
    Complete,
    /// The stop flag was raised; outstanding IOs were drained and recorded.
    Interrupted,
}

/// Optional hooks of a run.
#[derive(Default)]
pub struct Hooks<'a> {
    /// Checked before every submission; when set, no new IO is submitted.
    pub stop: Option<&'a AtomicBool>,
    /// Called with (completed, total) about every 1 % of the run: IOs, or
    /// for a run with a runtime, milliseconds of device time.
    pub progress: Option<&'a mut dyn FnMut(u64, u64)>,
}

/// Turns completions into records: flags, the sink, progress, and the first
/// failed IO (which stops the run). Shared by patterns and replays.
pub(crate) struct Recorder<'s, 'p, S: RecordSink + ?Sized> {
    sink: &'s mut S,
    progress: Option<&'p mut dyn FnMut(u64, u64)>,
    done: u64,
    total: u64,
    step: u64,
    first_error: Option<ExecError>,
    /// Set by [`Recorder::by_time`]: the run's start and runtime.
    clock: Option<(Nanos, Nanos)>,
}

impl<'s, 'p, S: RecordSink + ?Sized> Recorder<'s, 'p, S> {
    pub(crate) fn new(
        sink: &'s mut S,
        progress: Option<&'p mut dyn FnMut(u64, u64)>,
        total: u64,
    ) -> Self {
        Recorder {
            sink,
            progress,
            done: 0,
            total,
            step: (total / 100).max(1),
            first_error: None,
            clock: None,
        }
    }

    /// Reports progress as device time (ms of `runtime_ns` since `t0`)
    /// instead of IOs: a run that stops at a runtime has no IO total.
    pub(crate) fn by_time(&mut self, t0: Nanos, runtime_ns: Nanos) {
        self.clock = Some((t0, runtime_ns));
        self.total = runtime_ns / 1_000_000;
        // Often enough for a slow device, rarely enough for a fast one.
        self.step = 64;
    }

    /// Records one completed IO; returns whether it failed.
    #[inline]
    pub(crate) fn record(
        &mut self,
        io: PlannedIo,
        c: &Completion,
        warmup: bool,
    ) -> Result<bool, ExecError> {
        let mut flags = if warmup { FLAG_WARMUP } else { 0 };
        if let Some(errno) = c.errno {
            flags |= FLAG_ERROR;
            self.first_error.get_or_insert(ExecError::Io { io, errno });
        }
        self.sink
            .record(&IoRecord {
                index: io.index,
                stream: io.stream as u16,
                mode: io.mode,
                offset_bytes: io.offset_bytes,
                size_bytes: io.size_bytes as u32,
                submit_ns: c.submit_ns,
                complete_ns: c.complete_ns,
                flags,
            })
            .map_err(ExecError::Records)?;
        self.done += 1;
        if self.done.is_multiple_of(self.step) {
            let at = match self.clock {
                Some((t0, runtime)) => c.complete_ns.saturating_sub(t0).min(runtime) / 1_000_000,
                None => self.done,
            };
            if let Some(p) = self.progress.as_mut() {
                p(at, self.total);
            }
        }
        Ok(c.errno.is_some())
    }

    /// The number of IOs recorded, or the first IO error.
    pub(crate) fn finish(mut self) -> Result<u64, ExecError> {
        if let Some(e) = self.first_error.take() {
            return Err(e);
        }
        let at = if self.clock.is_some() {
            self.total
        } else {
            self.done
        };
        if let Some(p) = self.progress.as_mut() {
            p(at, self.total);
        }
        Ok(self.done)
    }
}

/// A [`PlannedIo`] held by the executor (a stream's next IO, an IO in
/// flight), copied field by field. Copying whole `PlannedIo`s (or options of
/// them) moved their padding bytes with overlapping loads that stalled store
/// forwarding twice per IO, a tenth of the executor's time.
#[derive(Clone, Copy)]
struct Held {
    index: u64,
    offset_bytes: u64,
    size_bytes: u64,
    stream: u32,
    mode: flashlab_device::Mode,
}

impl Held {
    const NONE: Held = Held {
        index: 0,
        offset_bytes: 0,
        size_bytes: 0,
        stream: 0,
        mode: flashlab_device::Mode::Read,
    };

    #[inline]
    fn of(io: &PlannedIo) -> Held {
        Held {
            index: io.index,
            offset_bytes: io.offset_bytes,
            size_bytes: io.size_bytes,
            stream: io.stream as u32,
            mode: io.mode,
        }
    }

    #[inline]
    fn planned(&self) -> PlannedIo {
        PlannedIo {
            index: self.index,
            stream: self.stream as u64,
            offset_bytes: self.offset_bytes,
            size_bytes: self.size_bytes,
            mode: self.mode,
        }
    }
}

struct Stream {
    gen: StreamGen,
    /// The stream's next IO (when `has_next`), generated one ahead so that
    /// the device can be told it is coming ([`Device::upcoming`]) while it
    /// works on the current one. Generation is pure: drawing it early
    /// changes nothing.
    next: Held,
    has_next: bool,
    start: u64,
    end: u64,
    outstanding: usize,
    ready_at: Nanos,
}

/// How many empty polls without a deadline we tolerate before calling it a stall.
const STALL_POLLS: u32 = 10_000;

/// Runs `spec` on `dev`, sending one record per completed IO to `sink`
/// (generic, so that a `RecordWriter`'s append is inlined: the record is
/// built in place in its batch).
/// Long: the executor's submission and completion loop, whose slot and stream state every
/// branch shares.
pub fn execute<S: RecordSink + ?Sized>(
    dev: &mut dyn Device,
    spec: &PatternSpec,
    sink: &mut S,
    hooks: Hooks<'_>,
) -> Result<Outcome, ExecError> {
    let qd = spec.queue_depth as usize;
    let max_outstanding = spec.max_outstanding();
    assert!(
        dev.max_outstanding() >= max_outstanding,
        "device opened for {} outstanding IOs, pattern needs {max_outstanding}",
        dev.max_outstanding()
    );
    let mut streams: Vec<Stream> = (0..spec.parallel_degree)
        .map(|p| {
            let gen = StreamGen::new(spec, p);
            let (start, size) = gen.target();
            Stream {
                gen,
                next: Held::NONE,
                has_next: false,
                start,
                end: start + size,
                outstanding: 0,
                ready_at: 0,
            }
        })
        .collect();
    // In-flight IOs by tag; tags are slot numbers, reused through `free`.
    let mut slots: Vec<Held> = vec![Held::NONE; max_outstanding];
    let mut busy: Vec<bool> = vec![false; max_outstanding];
    let mut free: Vec<usize> = (0..max_outstanding).rev().collect();
    let mut completions: Vec<Completion> = Vec::with_capacity(max_outstanding);
    let total = spec.total_ios();
    let mut recorder = Recorder::new(sink, hooks.progress, total);
    // Everything is built: settle, then start the clock for the first IO.
    dev.begin_run();
    let t0 = dev.now_ns();
    for s in &mut streams {
        s.ready_at = t0;
    }
    // fio's runtime: no submission at or after the deadline (device time).
    let deadline = spec.runtime_ns.map(|r| t0.saturating_add(r));
    if let Some(r) = spec.runtime_ns {
        recorder.by_time(t0, r);
    }
    // fio's rate_iops: IO i of a stream is due at t0 + i / rate.
    let due = |i: u64| -> Nanos {
        spec.rate_iops.map_or(0, |rate| {
            t0.saturating_add((i as u128 * 1_000_000_000 / rate as u128) as Nanos)
        })
    };
    let timing = spec.timing;
    let io_ignore = spec.io_ignore;
    let mut outstanding = 0usize;
    let mut stopping = false;
    // Whether the stop flag (not the runtime) ended submission early.
    let mut interrupted = false;
    let mut empty_polls = 0u32;

    loop {
        let now = dev.now_ns();
        if !stopping && hooks.stop.is_some_and(|s| s.load(Ordering::Relaxed)) {
            stopping = true;
            interrupted = streams.iter().any(|s| s.has_next || s.gen.remaining() > 0);
        }
        if !stopping && deadline.is_some_and(|d| now >= d) {
            stopping = true;
        }
        let mut next_ready: Option<Nanos> = None;
        if !stopping {
            for (p, s) in streams.iter_mut().enumerate() {
                while s.outstanding < qd && (s.has_next || s.gen.remaining() > 0) {
                    if s.ready_at > now {
                        // A stream due only after the runtime is done.
                        if deadline.is_none_or(|d| s.ready_at < d) {
                            next_ready =
                                Some(next_ready.map_or(s.ready_at, |t: Nanos| t.min(s.ready_at)));
                        }
                        break;
                    }
                    let io = if s.has_next {
                        s.has_next = false;
                        s.next
                    } else {
                        Held::of(&s.gen.next().expect("remaining > 0"))
                    };
                    if io.offset_bytes < s.start || io.offset_bytes + io.size_bytes > s.end {
                        return Err(ExecError::OutOfRange {
                            io: io.planned(),
                            start: s.start,
                            end: s.end,
                        });
                    }
                    let slot = free.pop().expect("a free slot per outstanding IO");
                    slots[slot] = io;
                    busy[slot] = true;
                    dev.submit(IoRequest {
                        tag: slot as u64,
                        offset_bytes: io.offset_bytes,
                        size_bytes: io.size_bytes as u32,
                        mode: io.mode,
                    })?;
                    debug_assert_eq!(io.stream as usize, p);
                    s.outstanding += 1;
                    outstanding += 1;
                    if spec.rate_iops.is_some() {
                        s.ready_at = s.ready_at.max(due(io.index + 1));
                    }
                    if let Some(next) = s.gen.next() {
                        s.next = Held::of(&next);
                        s.has_next = true;
                        dev.upcoming(next.offset_bytes);
                    }
                }
            }
        }
        if outstanding == 0 {
            match next_ready {
                Some(t) if !stopping => {
                    // Wake at the deadline at the latest, to stop there.
                    dev.idle_until(deadline.map_or(t, |d| t.min(d)))?;
                    continue;
                }
                _ => break,
            }
        }
        completions.clear();
        dev.poll(next_ready, &mut completions)?;
        if completions.is_empty() {
            if next_ready.is_none() {
                empty_polls += 1;
                if empty_polls >= STALL_POLLS {
                    return Err(ExecError::Stall { outstanding });
                }
            }
            continue;
        }
        empty_polls = 0;
        for c in &completions {
            let slot = c.tag as usize;
            if !busy.get(slot).copied().unwrap_or(false) {
                return Err(ExecError::Device(DeviceError::Invariant(format!(
                    "completion for unknown tag {}",
                    c.tag
                ))));
            }
            busy[slot] = false;
            let io = slots[slot].planned();
            free.push(slot);
            outstanding -= 1;
            let s = &mut streams[io.stream as usize];
            s.outstanding -= 1;
            let pause = timing.pause_after(io.index);
            if pause > 0 {
                s.ready_at = s.ready_at.max(c.complete_ns + pause);
            }
            if recorder.record(io, c, io.index < io_ignore)? {
                stopping = true;
            }
        }
    }
    recorder.finish()?;
    Ok(if interrupted {
        Outcome::Interrupted
    } else {
        Outcome::Complete
    })
}
