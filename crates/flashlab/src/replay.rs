//! `flashlab replay`: a block IO trace against any target, open or closed loop.

use std::io::IsTerminal;

use flashlab_exec::replay;
use flashlab_pattern::units::format_size;
use flashlab_results::Workload;
use flashlab_trace::{TraceIo, TraceOp};
use flashlab_workload::{DeviceNeeds, FrontEnd, PreparedTrace, TraceSpec, WorkloadError};

use crate::cli::ReplayArgs;
use crate::error::{CliError, CliResult};
use crate::run::{print_device_stats, print_warnings, record_run};
use crate::{output, signals, target};

pub fn replay_cmd(args: ReplayArgs) -> CliResult<()> {
    // The flags are the library's trace workload, checked there once and
    // named back as flags.
    let workload_spec = TraceSpec {
        path: args.trace.clone(),
        format: args.format.clone(),
        closed_loop: args.closed_loop,
        queue_depth: args.queue_depth,
        speed: args.speed,
        fit: args.fit.clone(),
    };
    let as_flags = |e: WorkloadError| CliError::user(e.render(FrontEnd::Cli));
    workload_spec.check().map_err(as_flags)?;
    if args.name.is_empty() || args.name.contains('/') {
        return Err(CliError::user(format!(
            "run name '{}' cannot name a directory; use letters, digits, '-' and '_'",
            args.name
        )));
    }
    // Read with limits: /dev/zero or a disk image is refused at once.
    let parsed = workload_spec.read().map_err(as_flags)?;
    let probed = target::probe(&args.target, flashlab_pattern::DEFAULT_SEED)?;
    let prepared = workload_spec
        .prepare(parsed, probed.info.size_bytes, probed.lbs)
        .map_err(as_flags)?;
    let needs = DeviceNeeds::of_trace(&prepared);
    let PreparedTrace {
        ios: trace,
        spec,
        mode,
        requests,
        in_flight,
    } = prepared;
    let max_io = needs.max_io_bytes;
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

    let (mut device, engine) = probed.open(
        &args.target,
        needs.writes,
        needs.max_outstanding,
        max_io,
        args.quiet,
    )?;
    let mut results =
        target::create_results(args.results.as_deref(), &args.name, &*device, &engine)?;
    let idx = results
        .plan_run(&args.name, workload.clone())
        .map_err(|e| CliError::failure(format!("cannot write the manifest: {e}")))?;
    // --quiet prints the result (the runs table) and nothing else.
    if !(args.json || args.quiet) {
        println!("device:  {}", output::device_line(device.info(), &engine));
        println!("results: {}", results.root().display());
        println!("{}", workload.describe());
    }
    signals::install();
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
    let device_stats = flashlab_workload::run_device_stats(
        flashlab_results::device_stats_json(&device.stats()),
        report.map(|r| flashlab_workload::replay_stats(r.late, r.flushes)),
    );
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
        // The late requests belong to the result (was the replay
        // faithful?): --quiet keeps them with the table.
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
        if !args.quiet {
            print_device_stats(&summary);
        }
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
