//! Trace replay: the requests of a recorded trace against any [`Device`].
//!
//! - **Open loop**: request i is submitted at its recorded arrival time
//!   (divided by `speed`), whatever the device is doing, as the trace's
//!   application did. When `max_outstanding` requests are already in flight
//!   the next one waits: it is then *late*, and the count of late requests
//!   is reported (a device that cannot keep up is itself a finding).
//! - **Closed loop**: as fast as the device allows, `queue_depth` requests in
//!   flight, recorded times ignored.
//!
//! A flush waits for every request before it to complete, then flushes the
//! device; flushes are counted, not recorded as IOs.

use std::sync::atomic::Ordering;

use flashlab_device::{Completion, Device, IoRequest, Nanos};
use flashlab_pattern::PlannedIo;
use flashlab_trace::{TraceIo, TraceOp};

use crate::{ExecError, Hooks, Outcome, RecordSink, Recorder};

#[derive(Clone, Copy, Debug, PartialEq)]
pub enum ReplayMode {
    OpenLoop { speed: f64, max_outstanding: usize },
    ClosedLoop { queue_depth: usize },
}

#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ReplayReport {
    pub requests: u64,
    pub flushes: u64,
    /// Open loop: requests submitted more than 1 us after their due time
    /// because the in-flight limit was reached.
    pub late: u64,
}

pub fn replay(
    dev: &mut dyn Device,
    trace: &[TraceIo],
    mode: ReplayMode,
    sink: &mut dyn RecordSink,
    hooks: Hooks<'_>,
) -> Result<(Outcome, ReplayReport), ExecError> {
    let limit = match mode {
        ReplayMode::OpenLoop {
            max_outstanding, ..
        } => max_outstanding,
        ReplayMode::ClosedLoop { queue_depth } => queue_depth,
    }
    .clamp(1, dev.max_outstanding());
    let speed = match mode {
        ReplayMode::OpenLoop { speed, .. } => speed,
        ReplayMode::ClosedLoop { .. } => f64::INFINITY,
    };
    let mut slots: Vec<Option<(u64, TraceIo)>> = vec![None; limit];
    let mut free: Vec<usize> = (0..limit).rev().collect();
    let mut completions: Vec<Completion> = Vec::with_capacity(limit);
    let mut recorder = Recorder::new(sink, hooks.progress, trace.len() as u64);
    // Everything is built: settle, then start the clock the schedule counts from.
    dev.begin_run();
    let t0 = dev.now_ns();
    let due = |io: &TraceIo| -> Nanos {
        if speed.is_infinite() {
            t0
        } else {
            t0 + (io.time_ns as f64 / speed) as Nanos
        }
    };
    let mut report = ReplayReport::default();
    let mut next = 0usize;
    let mut outstanding = 0usize;
    let mut stopping = false;
    // When the in-flight limit last held back a due request: a request counts
    // as late only if it was due by then (lateness from the host's scheduling
    // is in the records, not in this count).
    let mut limit_hit_ns: Option<Nanos> = None;
    loop {
        if hooks.stop.is_some_and(|s| s.load(Ordering::Relaxed)) {
            stopping = true;
        }
        let now = dev.now_ns();
        let mut wait_until = None;
        while !stopping && next < trace.len() {
            let io = trace[next];
            let t_due = due(&io);
            if t_due > now {
                wait_until = Some(t_due);
                break;
            }
            if io.op == TraceOp::Flush {
                if outstanding > 0 {
                    break; // drain first
                }
                dev.flush()?;
                report.flushes += 1;
                next += 1;
                continue;
            }
            let Some(slot) = free.pop() else {
                limit_hit_ns = Some(now);
                break;
            };
            if now > t_due + 1_000 && limit_hit_ns.is_some_and(|t| t >= t_due) {
                report.late += 1;
            }
            let TraceOp::Io(m) = io.op else {
                unreachable!("flush handled above")
            };
            dev.submit(IoRequest {
                tag: slot as u64,
                offset_bytes: io.offset_bytes,
                size_bytes: io.size_bytes as u32,
                mode: m,
            })?;
            slots[slot] = Some((next as u64, io));
            outstanding += 1;
            next += 1;
        }
        if outstanding == 0 {
            match wait_until {
                Some(t) if !stopping => {
                    dev.idle_until(t)?;
                    continue;
                }
                _ if next < trace.len() && !stopping => continue,
                _ => break,
            }
        }
        completions.clear();
        dev.poll(wait_until, &mut completions)?;
        for c in &completions {
            let slot = c.tag as usize;
            let (index, io) = slots[slot]
                .take()
                .expect("completion of an in-flight request");
            free.push(slot);
            outstanding -= 1;
            let TraceOp::Io(mode) = io.op else {
                unreachable!("flushes are never in flight")
            };
            let planned = PlannedIo {
                index,
                stream: 0,
                offset_bytes: io.offset_bytes,
                size_bytes: io.size_bytes,
                mode,
            };
            if recorder.record(planned, c, false)? {
                stopping = true;
            }
            report.requests += 1;
        }
    }
    recorder.finish()?;
    let complete = next == trace.len();
    Ok((
        if complete {
            Outcome::Complete
        } else {
            Outcome::Interrupted
        },
        report,
    ))
}
