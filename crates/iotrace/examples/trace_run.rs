//! Runs a command while tracing, then prints the summary (JSON) and the
//! logical-vs-physical comparison. Used by bench/oltp_trace_overhead.sh.
//!
//! ```text
//! trace_run --out DIR [--pid PID --under DIR] [--dev MAJOR:MINOR] [--interval-ms N] [--reader auto|text|raw] -- COMMAND ARGS...
//! ```
//!
//! `--reader` picks how events are read (default `auto`: the binary
//! per-CPU pipes, else the text pipe); a line on stderr says which was used.
//!
//! Without `--pid` nothing logical is traced; without `--dev` nothing
//! physical. `--pid` may be `@FILE` to read the pid from the first line of
//! FILE (a PostgreSQL data directory's postmaster.pid).

use std::path::PathBuf;
use std::process::{Command, ExitCode};

use flashlab_iotrace::{analysis, start, LogicalSpec, PhysicalSpec, Reader, TraceSpec};

fn usage(msg: &str) -> ExitCode {
    eprintln!("error: {msg}; usage: trace_run --out DIR [--pid PID|@FILE --under DIR] [--dev MAJOR:MINOR] [--interval-ms N] [--reader auto|text|raw] -- COMMAND ARGS...");
    ExitCode::from(2)
}

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let Some(split) = args.iter().position(|a| a == "--") else {
        return usage("missing `--` before the command");
    };
    let (opts, cmd) = (&args[..split], &args[split + 1..]);
    if cmd.is_empty() {
        return usage("no command after `--`");
    }
    let mut out = None;
    let mut pid = None;
    let mut under = None;
    let mut dev = None;
    let mut interval_ms = 1000u64;
    let mut reader = Reader::Auto;
    let mut it = opts.iter();
    while let Some(flag) = it.next() {
        let Some(value) = it.next() else {
            return usage(&format!("{flag} needs a value"));
        };
        match flag.as_str() {
            "--out" => out = Some(PathBuf::from(value)),
            "--pid" => {
                let text = match value.strip_prefix('@') {
                    Some(file) => match std::fs::read_to_string(file) {
                        Ok(t) => t.lines().next().unwrap_or("").to_string(),
                        Err(e) => return usage(&format!("cannot read {file}: {e}")),
                    },
                    None => value.clone(),
                };
                match text.trim().parse::<u32>() {
                    Ok(p) => pid = Some(p),
                    Err(_) => return usage(&format!("--pid '{text}' is not a pid")),
                }
            }
            "--under" => under = Some(PathBuf::from(value)),
            "--dev" => {
                let parsed = value
                    .split_once(':')
                    .and_then(|(a, b)| Some((a.parse().ok()?, b.parse().ok()?)));
                match parsed {
                    Some((major, minor)) => dev = Some(PhysicalSpec { major, minor }),
                    None => return usage(&format!("--dev '{value}' is not MAJOR:MINOR")),
                }
            }
            "--interval-ms" => match value.parse() {
                Ok(v) if v > 0 => interval_ms = v,
                _ => return usage(&format!("--interval-ms '{value}' is not a positive number")),
            },
            "--reader" => {
                reader = match value.as_str() {
                    "auto" => Reader::Auto,
                    "text" => Reader::Text,
                    "raw" => Reader::Raw,
                    _ => return usage(&format!("--reader '{value}' is not auto, text or raw")),
                }
            }
            other => return usage(&format!("unknown flag {other}")),
        }
    }
    let Some(out) = out else {
        return usage("--out is required");
    };
    let logical = match (pid, under) {
        (Some(root_pid), Some(under_dir)) => Some(LogicalSpec {
            root_pid,
            under_dir,
        }),
        (None, None) => None,
        _ => return usage("--pid and --under go together"),
    };
    let session = match start(TraceSpec {
        out_dir: out.clone(),
        logical,
        physical: dev,
        reader,
    }) {
        Ok(s) => {
            eprintln!("trace reader: {}", s.reader());
            for note in s.notes() {
                eprintln!("note: {note}");
            }
            s
        }
        Err(e) => {
            eprintln!("error: {e}");
            return ExitCode::from(2);
        }
    };
    let status = Command::new(&cmd[0]).args(&cmd[1..]).status();
    let summary = match session.stop() {
        Ok(s) => s,
        Err(e) => {
            eprintln!("error: {e}");
            return ExitCode::from(1);
        }
    };
    // The tracer's own cost, taken before the analysis below adds to it:
    // this process's threads (the readers), including the kernel's
    // formatting of the events they read; the traced command is a child
    // and not counted.
    let (user_s, system_s) = own_cpu_seconds();
    eprintln!(
        "traced {:.1} s: logical {} reads / {} writes / {} fsyncs, physical {} reads / {} writes / {} flushes, {} events lost",
        summary.duration_ns as f64 / 1e9,
        summary.logical.reads,
        summary.logical.writes,
        summary.logical.flushes,
        summary.physical.reads,
        summary.physical.writes,
        summary.physical.flushes,
        summary.lost_events
    );
    let traced_s = summary.duration_ns as f64 / 1e9;
    eprintln!(
        "tracer CPU: {user_s:.2} s user + {system_s:.2} s system ({:.1} % of one core over the traced {traced_s:.1} s)",
        100.0 * (user_s + system_s) / traced_s.max(1e-9)
    );
    if let (Some(l), Some(p)) = (&summary.logical_path, &summary.physical_path) {
        match analysis::compare(l, p, interval_ms * 1_000_000) {
            Ok(c) => {
                let secs = summary.duration_ns as f64 / 1e9;
                for (side, s) in [("logical", &c.logical), ("physical", &c.physical)] {
                    let t = &s.total;
                    let avg = |bytes: u64, n: u64| {
                        if n > 0 {
                            bytes as f64 / n as f64 / 1024.0
                        } else {
                            0.0
                        }
                    };
                    eprintln!(
                        "{side:>8}: {:.0} reads/s {:.2} MB/s avg {:.1} KiB | {:.0} writes/s {:.2} MB/s avg {:.1} KiB",
                        t.reads as f64 / secs,
                        t.read_bytes as f64 / secs / 1e6,
                        avg(t.read_bytes, t.reads),
                        t.writes as f64 / secs,
                        t.write_bytes as f64 / secs / 1e6,
                        avg(t.write_bytes, t.writes),
                    );
                }
                eprintln!(
                    "file-system write amplification (physical / logical bytes written): {}",
                    c.fs_write_amplification
                        .map(|w| format!("{w:.2}"))
                        .unwrap_or_else(|| "n/a (nothing written logically)".to_string())
                );
            }
            Err(e) => eprintln!("analysis failed: {e}"),
        }
    }
    match status {
        Ok(s) if s.success() => ExitCode::SUCCESS,
        Ok(s) => {
            eprintln!("error: the command exited with {s}");
            ExitCode::from(1)
        }
        Err(e) => {
            eprintln!("error: cannot run {}: {e}", cmd[0]);
            ExitCode::from(2)
        }
    }
}

/// User and system CPU seconds of this process (all its threads).
fn own_cpu_seconds() -> (f64, f64) {
    // SAFETY: getrusage fills the zeroed struct we pass.
    let mut ru: libc::rusage = unsafe { std::mem::zeroed() };
    if unsafe { libc::getrusage(libc::RUSAGE_SELF, &mut ru) } != 0 {
        return (0.0, 0.0);
    }
    let secs = |t: libc::timeval| t.tv_sec as f64 + t.tv_usec as f64 / 1e6;
    (secs(ru.ru_utime), secs(ru.ru_stime))
}
