//! `flashlab replay`: a block IO trace against any target, open or closed loop.

use std::io::IsTerminal;

use flashlab_exec::{replay, ReplayMode};
use flashlab_pattern::units::format_size;
use flashlab_results::{ReplaySpec, Workload};
use flashlab_trace::{fit_to_device, Fit, Format, TraceIo, TraceOp};

use crate::cli::ReplayArgs;
use crate::error::{CliError, CliResult};
use crate::run::{print_device_stats, print_warnings, record_run};
use crate::{output, signals, target};

/// Open loop: the most requests in flight before a request counts as late.
const DEFAULT_OPEN_LOOP_IN_FLIGHT: usize = 256;

pub fn replay_cmd(args: ReplayArgs) -> CliResult<()> {
    // Read with limits: /dev/zero or a disk image is refused at once.
    let text = flashlab_trace::read_text(&args.trace).map_err(CliError::user)?;
    let origin = args.trace.display().to_string();
    let format = match &args.format {
        Some(f) => Format::parse(f).map_err(CliError::user)?,
        None => Format::detect(&text).ok_or_else(|| {
            CliError::user(format!(
                "cannot tell the format of {origin}; pass --format {}",
                Format::NAMES.replace(" or ", "|").replace(", ", "|")
            ))
        })?,
    };
    let fit = Fit::parse(&args.fit).map_err(CliError::user)?;
    if !(args.speed > 0.0 && args.speed.is_finite()) {
        return Err(CliError::user(format!(
            "--speed {} must be a positive number, e.g. --speed 2",
            args.speed
        )));
    }
    if args.closed_loop && args.speed != 1.0 {
        return Err(CliError::user(
            "--speed applies to open-loop replay; drop it or drop --closed-loop",
        ));
    }
    if args.name.is_empty() || args.name.contains('/') {
        return Err(CliError::user(format!(
            "run name '{}' cannot name a directory; use letters, digits, '-' and '_'",
            args.name
        )));
    }
    let mut trace = flashlab_trace::parse(&text, format, &origin).map_err(CliError::user)?;
    let in_flight = args.queue_depth.unwrap_or(if args.closed_loop {
        1
    } else {
        DEFAULT_OPEN_LOOP_IN_FLIGHT
    });
    if in_flight == 0 || in_flight > target::SIM_MAX_OUTSTANDING {
        return Err(CliError::user(format!(
            "--queue-depth must be between 1 and {}",
            target::SIM_MAX_OUTSTANDING
        )));
    }

    let probed = target::probe(&args.target, flashlab_pattern::DEFAULT_SEED)?;
    fit_to_device(&mut trace, probed.info.size_bytes, probed.lbs, fit)
        .map_err(|e| CliError::user(format!("{origin}: {e}")))?;
    let writes = trace
        .iter()
        .any(|io| matches!(io.op, TraceOp::Io(m) if m.modifies()));
    let max_io = trace.iter().map(|io| io.size_bytes).max().unwrap_or(512);
    let requests = trace.iter().filter(|io| io.op != TraceOp::Flush).count() as u64;
    let spec = ReplaySpec {
        trace_path: origin.clone(),
        format: format.name().to_string(),
        requests,
        loop_mode: if args.closed_loop {
            "closed_loop"
        } else {
            "open_loop"
        }
        .to_string(),
        speed: args.speed,
        max_outstanding: in_flight as u64,
        fit: args.fit.clone(),
    };
    let workload = Workload::Replay(spec);

    if args.dry_run {
        let span_ns = trace.last().map(|io| io.time_ns).unwrap_or(0);
        println!("dry run: no IO is done and nothing is written.");
        println!("{}", workload.describe());
        println!(
            "{} requests over {:.3} s of recorded time, largest {}, {} writes or trims, {} flushes",
            requests,
            span_ns as f64 / 1e9,
            format_size(max_io),
            trace
                .iter()
                .filter(|io| matches!(io.op, TraceOp::Io(m) if m.modifies()))
                .count(),
            trace.iter().filter(|io| io.op == TraceOp::Flush).count()
        );
        for io in trace.iter().take(10) {
            println!(
                "  {:>12} ns  {}  {:>14}  {}",
                io.time_ns,
                io.op.letter(),
                io.offset_bytes,
                format_size(io.size_bytes)
            );
        }
        return Ok(());
    }

    let (mut device, engine) = probed.open(&args.target, writes, in_flight, max_io, args.quiet)?;
    let mut results =
        target::create_results(args.results.as_deref(), &args.name, &*device, &engine)?;
    let idx = results
        .plan_run(&args.name, workload.clone())
        .map_err(|e| CliError::failure(format!("cannot write the manifest: {e}")))?;
    if !args.json {
        println!("device:  {}", output::device_line(device.info(), &engine));
        println!("results: {}", results.root().display());
        println!("{}", workload.describe());
    }
    signals::install();
    let mode = if args.closed_loop {
        ReplayMode::ClosedLoop {
            queue_depth: in_flight,
        }
    } else {
        ReplayMode::OpenLoop {
            speed: args.speed,
            max_outstanding: in_flight,
        }
    };
    let show_progress = !args.quiet && std::io::stderr().is_terminal();
    let mut report = None;
    let (status, error, tally) = record_run(
        &mut results,
        idx,
        &args.name,
        requests,
        show_progress,
        |w, hooks| {
            let (outcome, r) = replay(&mut *device, &trace, mode, w, hooks)?;
            report = Some(r);
            Ok(outcome)
        },
    )?;
    let mut device_stats = device.stats_json();
    if let Some(r) = report {
        let extra = serde_json::json!({ "late_requests": r.late, "flushes": r.flushes });
        device_stats = Some(match device_stats {
            Some(serde_json::Value::Object(mut m)) => {
                m.insert("replay".into(), extra);
                serde_json::Value::Object(m)
            }
            _ => serde_json::json!({ "replay": extra }),
        });
    }
    let summary = results
        .finish_run_tallied(idx, status, error.clone(), device_stats, tally)
        .map_err(|e| CliError::failure(format!("cannot save results: {e}")))?;
    results
        .write_summary()
        .map_err(|e| CliError::failure(format!("cannot save results: {e}")))?;
    if args.json {
        println!(
            "{}",
            serde_json::to_string_pretty(&results.summary()).expect("summary serializes")
        );
    } else {
        println!("{}", output::table(&output::rows(&summary)));
        if let Some(r) = report {
            if !args.closed_loop {
                println!(
                    "  {} of {} requests were late (more than {} in flight when due)",
                    r.late, requests, in_flight
                );
                if r.late > 0 {
                    if let Some(hint) = late_hint(&trace, args.speed, summary.stats.all.iops) {
                        println!("  {hint}");
                    }
                }
            }
        }
        print_device_stats(&summary);
    }
    print_warnings(&summary);
    match status {
        flashlab_results::RunStatus::Complete => Ok(()),
        flashlab_results::RunStatus::Interrupted => Err(CliError {
            message: format!(
                "interrupted; the results so far are in {}",
                results.root().display()
            ),
            exit_code: 130,
        }),
        _ => Err(CliError::failure(format!(
            "replay failed: {}",
            error.unwrap_or_default()
        ))),
    }
}

/// Why requests were late, in the user's terms: the rate the trace asks for
/// against the rate the device sustained, and the flags that replay it at a
/// pace the device can follow. `None` when the trace spans no time.
fn late_hint(trace: &[TraceIo], speed: f64, device_iops: f64) -> Option<String> {
    let first_ns = trace.iter().map(|io| io.time_ns).min()?;
    let last_ns = trace.iter().map(|io| io.time_ns).max()?;
    let span_ns = last_ns.checked_sub(first_ns).filter(|&s| s > 0)? as f64 / speed;
    let asked_per_s = trace.len() as f64 / (span_ns / 1e9);
    Some(format!(
        "the trace asks for {} requests/s at {speed}x ({} requests in {}); the device completed {}/s: \
         use --speed {} or --closed-loop to replay at a pace it can follow",
        output::format_rate(asked_per_s),
        trace.len(),
        flashlab_pattern::units::format_duration_ns(span_ns as u64),
        output::format_rate(device_iops),
        format_speed(speed * device_iops / asked_per_s),
    ))
}

/// A speed factor with two significant digits, never printed as 0.
fn format_speed(speed: f64) -> String {
    if speed >= 1.0 {
        format!("{speed:.1}")
    } else {
        let digits = (-speed.log10().floor()) as usize + 1;
        format!("{speed:.digits$}")
    }
}
