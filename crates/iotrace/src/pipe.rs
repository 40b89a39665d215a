//! Reading an instance's text `trace_pipe` as the run goes (the fallback
//! when the binary per-CPU pipes of `raw.rs` cannot be used), and what both
//! readers share: the [`Sink`] and the wake-up policy.
//!
//! One thread per instance reads the text pipe (non-blocking, woken by
//! poll every 100 ms at most so that it notices the stop flag), splits it
//! into lines and hands each parsed event to a [`Sink`], which writes its
//! trace file. Each wake-up costs the tracer a poll, a read and (when the
//! sink flushes) a write, about 1 100 of each per second under TPC-C when
//! both readers woke on every event and flushed whenever the pipe was
//! empty (`perf trace -s`, docs/oltp-tracing.md); so the sink's file is
//! flushed at most every [`FLUSH_EVERY`], and a reader whose events need
//! no prompt look-up (the physical one) drains the pipe in batches
//! ([`Wake::Batched`]). The text pipe costs the kernel a formatting step per event;
//! it kept up with the loads we measured (docs/oltp-tracing.md) and any
//! event it could not keep is counted from the per-CPU stats, never lost
//! silently.

use std::fs::File;
use std::io::{self, Read};
use std::os::fd::AsRawFd;
use std::os::unix::fs::OpenOptionsExt;
use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// How often, at most, a reader flushes its sink's file while tracing (and
/// once more at the end).
pub const FLUSH_EVERY: Duration = Duration::from_millis(100);

/// When a reader looks at its pipe again once it is empty.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Wake {
    /// After this pause: the events wait in the ring buffer (sized for
    /// far longer pauses) and are read in one batch.
    Batched(Duration),
    /// As soon as an event arrives, but at most once per this pause (the
    /// logical reader: an fd's path is read from /proc when its openat is
    /// seen, so lag costs names; yet each wake-up, a poll and a context
    /// switch, cost the tracer more than reading the events it brought).
    Coalesced(Duration),
}

use crate::event::{self, Event};
use crate::TraceError;

/// One event line of trace_pipe, split into its common header and the
/// event's own text.
#[derive(Debug, PartialEq, Eq)]
pub struct TextEvent<'a> {
    pub pid: u32,
    /// The trace clock's time (CLOCK_MONOTONIC: we set `trace_clock` to mono).
    pub time_ns: u64,
    /// `block_rq_issue`, or for syscalls the text before `(` / ` ->`.
    pub name: &'a str,
    /// The rest: the event's fields.
    pub body: &'a str,
}

/// Parses `comm-pid [cpu] flags secs.micros: name: body` (block events) and
/// `comm-pid [cpu] flags secs.micros: sys_x(args)` / `sys_x -> 0xret`
/// (syscall events). The command name may contain spaces and dashes, so the
/// line is anchored on the `[cpu]` field.
pub fn parse_event(line: &str) -> Option<TextEvent<'_>> {
    let bytes = line.as_bytes();
    // Find " [ddd] " (the CPU field) preceded by `comm-pid`; a command name
    // that itself holds " [2]" is skipped over.
    let mut search = 0;
    let (cpu_open, pid) = loop {
        let i = search + line[search..].find(" [")?;
        search = i + 2;
        let close = line[i + 2..].find(']').map(|c| c + i + 2)?;
        if close == i + 2 || !bytes[i + 2..close].iter().all(u8::is_ascii_digit) {
            continue;
        }
        let task = line[..i].trim();
        let Some(dash) = task.rfind('-') else {
            continue;
        };
        if let Ok(pid) = task[dash + 1..].parse::<u32>() {
            break (i, pid);
        }
    };
    let after_cpu = &line[cpu_open + 2..];
    let after_cpu = &after_cpu[after_cpu.find(']')? + 1..];
    // flags, then the timestamp ending in ':'.
    let mut rest = after_cpu.trim_start();
    let first_end = rest.find(' ')?;
    let (tok, tail) = rest.split_at(first_end);
    let ts_tok = if tok.ends_with(':') {
        tok
    } else {
        rest = tail.trim_start();
        let end = rest.find(' ')?;
        let (ts, _) = rest.split_at(end);
        ts
    };
    let ts_pos = rest.find(ts_tok)?;
    let time_ns = parse_time(ts_tok.strip_suffix(':')?)?;
    let body = rest[ts_pos + ts_tok.len()..].trim_start();
    // `name: fields` or `sys_x(args)` or `sys_x -> ret`.
    let name_end = body.find([':', '(', ' '])?;
    let name = &body[..name_end];
    let rest = &body[name_end..];
    let rest = rest.strip_prefix(':').unwrap_or(rest).trim_start();
    Some(TextEvent {
        pid,
        time_ns,
        name,
        body: rest,
    })
}

/// `12345.678901` (seconds and a fraction of any length up to 9 digits) to ns.
pub fn parse_time(text: &str) -> Option<u64> {
    let (secs, frac) = text.split_once('.').unwrap_or((text, ""));
    let secs = secs.parse::<u64>().ok()?;
    if frac.len() > 9 || !frac.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    let mut ns = if frac.is_empty() {
        0
    } else {
        frac.parse::<u64>().ok()?
    };
    for _ in frac.len()..9 {
        ns *= 10;
    }
    secs.checked_mul(1_000_000_000)?.checked_add(ns)
}

/// Receives the events of one instance, in time order.
pub trait Sink: Send {
    /// One decoded event.
    fn event(&mut self, ev: &Event) -> Result<(), TraceError>;
    /// Called when the pipe is idle and at the end: flush files.
    fn flush(&mut self) -> Result<(), TraceError>;
}

/// Opens `trace_pipe` non-blocking (so that the reader can poll and notice
/// the stop flag).
pub fn open_pipe(path: &Path) -> Result<File, TraceError> {
    std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NONBLOCK)
        .open(path)
        .map_err(|e| TraceError::io(format!("opening {}", path.display()), e))
}

/// Reads the pipe until `stop` is set and the pipe is empty. Lines are
/// bounded: a line over 64 KiB (none is near that) is skipped and counted.
pub fn run<S: Sink + ?Sized>(
    mut pipe: File,
    stop: &Arc<AtomicBool>,
    sink: &mut S,
    wake: Wake,
) -> Result<(), TraceError> {
    let mut buf = vec![0u8; 1 << 16];
    let mut pending: Vec<u8> = Vec::with_capacity(1 << 16);
    let mut flushed = Instant::now();
    loop {
        match pipe.read(&mut buf) {
            Ok(0) => {
                if stop.load(Ordering::Acquire) {
                    break;
                }
                wait(&pipe, wake);
            }
            Ok(n) => {
                pending.extend_from_slice(&buf[..n]);
                let mut start = 0;
                while let Some(nl) = pending[start..].iter().position(|&b| b == b'\n') {
                    let line = &pending[start..start + nl];
                    start += nl + 1;
                    let line = String::from_utf8_lossy(line);
                    // Lines that are no event (`CPU:1 [LOST 12 EVENTS]`)
                    // are skipped: the per-CPU stats count lost events.
                    if let Some(ev) = parse_event(&line) {
                        sink.event(&event::from_text(&ev))?;
                    }
                }
                pending.drain(..start);
                if pending.len() > (1 << 16) {
                    pending.clear();
                }
            }
            Err(e) if e.kind() == io::ErrorKind::WouldBlock => {
                // Stop only once the pipe is drained: tracing was switched
                // off before `stop` was set, so nothing new arrives.
                if stop.load(Ordering::Acquire) {
                    break;
                }
                if flushed.elapsed() >= FLUSH_EVERY {
                    sink.flush()?;
                    flushed = Instant::now();
                }
                wait(&pipe, wake);
            }
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err(TraceError::io("reading trace_pipe".to_string(), e)),
        }
    }
    sink.flush()
}

fn wait(pipe: &File, wake: Wake) {
    wait_for(std::slice::from_ref(pipe), wake)
}

/// Waits as `wake` says for any of `pipes` (the raw reader has one per CPU).
pub fn wait_for(pipes: &[File], wake: Wake) {
    match wake {
        Wake::Coalesced(pause) => {
            std::thread::sleep(pause.min(Duration::from_millis(100)));
            wait_readable(pipes)
        }
        // Shorter than poll's 100 ms, so the stop flag is seen as soon.
        Wake::Batched(pause) => std::thread::sleep(pause.min(Duration::from_millis(100))),
    }
}

fn wait_readable(pipes: &[File]) {
    let mut pfds: Vec<libc::pollfd> = pipes
        .iter()
        .map(|p| libc::pollfd {
            fd: p.as_raw_fd(),
            events: libc::POLLIN,
            revents: 0,
        })
        .collect();
    // SAFETY: valid pollfds for open files; a timeout bounds the wait so
    // the stop flag is seen within 100 ms.
    unsafe {
        libc::poll(pfds.as_mut_ptr(), pfds.len() as libc::nfds_t, 100);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn block_and_syscall_lines_split_into_pid_time_name_and_body() {
        let ev = parse_event(
            "    kworker/1:1H-44      [001] ..... 10942.412517: block_rq_issue: 7,0 DS 1048576 () 0 + 2048 be,0,4 [kworker/1:1H]",
        )
        .unwrap();
        assert_eq!(ev.pid, 44);
        assert_eq!(ev.time_ns, 10_942_412_517_000);
        assert_eq!(ev.name, "block_rq_issue");
        assert!(ev.body.starts_with("7,0 DS 1048576"));
        let ev = parse_event(
            "         python3-9095    [001] ..... 10977.937801: sys_pwrite64(fd: 3, buf: 0x55bc45c5bcc0, count: 0x2000, pos: 0x1000)",
        )
        .unwrap();
        assert_eq!((ev.pid, ev.name), (9095, "sys_pwrite64"));
        assert_eq!(
            ev.body,
            "(fd: 3, buf: 0x55bc45c5bcc0, count: 0x2000, pos: 0x1000)"
        );
        let ev =
            parse_event("  my task-x [2]-77 [000] d.s1. 5.000001: sys_pwrite64 -> 0x2000").unwrap();
        assert_eq!(
            (ev.pid, ev.time_ns, ev.name),
            (77, 5_000_001_000, "sys_pwrite64")
        );
        assert_eq!(ev.body, "-> 0x2000");
        assert_eq!(parse_event("CPU:1 [LOST 12 EVENTS]"), None);
    }

    #[test]
    fn times_keep_every_digit() {
        assert_eq!(parse_time("1.5"), Some(1_500_000_000));
        assert_eq!(parse_time("0.000000001"), Some(1));
        assert_eq!(parse_time("0.0000000001"), None);
        assert_eq!(parse_time("x.1"), None);
    }
}
