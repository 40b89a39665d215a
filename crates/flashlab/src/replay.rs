//! `flashlab replay`: a block IO trace against any target, open or closed loop.

use flashlab_pattern::units::format_size;
use flashlab_results::Workload;
use flashlab_trace::{TraceIo, TraceOp};
use flashlab_workload::{DeviceNeeds, FrontEnd, TraceSpec, WorkloadError};

use crate::cli::ReplayArgs;
use crate::error::{CliError, CliResult};
use crate::run::{interrupted, print_device_stats, print_warnings, run_options, Terminal};
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
    let mut prepared = workload_spec
        .prepare(parsed, probed.info.size_bytes, probed.lbs)
        .map_err(as_flags)?;
    prepared.name = args.name.clone();
    let needs = DeviceNeeds::of_trace(&prepared);
    let max_io = needs.max_io_bytes;
    let (requests, in_flight) = (prepared.requests, prepared.in_flight);
    let recorded = Recorded::of(&prepared.ios);
    let workload = Workload::Replay(prepared.spec.clone());

    if args.dry_run {
        let trace = &prepared.ios;
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
    let results_root = results.root().to_path_buf();
    // --quiet prints the result (the runs table) and nothing else.
    if !(args.json || args.quiet) {
        println!("device:  {}", output::device_line(device.info(), &engine));
        println!("results: {}", results_root.display());
        println!("{}", workload.describe());
    }
    signals::install();
    // The progress bar only: the table and the late requests follow.
    let mut terminal = Terminal::new(false, false, args.quiet);
    let ran = flashlab_workload::run_observed(
        flashlab_workload::Prepared::Trace(prepared),
        &mut *device,
        &mut results,
        &run_options(flashlab_pattern::DEFAULT_SEED),
        &mut terminal,
    );
    terminal.clear();
    let (summary, error) = match ran {
        Ok(mut outcome) => (outcome.runs.pop(), None),
        Err(failed) => {
            let failed = *failed;
            match failed.error {
                WorkloadError::Io { source, .. } => {
                    return Err(CliError::failure(source.to_string()))
                }
                error => (failed.outcome.runs.into_iter().last(), Some(error)),
            }
        }
    };
    let Some(summary) = summary else {
        let e = error.map(|e| e.render(FrontEnd::Cli)).unwrap_or_default();
        return Err(CliError::failure(e));
    };
    if args.json {
        println!(
            "{}",
            serde_json::to_string_pretty(&results.summary()).expect("summary serializes")
        );
    } else {
        // The late requests belong to the result (was the replay
        // faithful?): --quiet keeps them with the table.
        println!("{}", output::table(&output::rows(&summary)));
        if let Some(late) = late_requests(&summary) {
            if !args.closed_loop {
                println!(
                    "  {late} of {requests} requests were late (more than {in_flight} in flight when due)"
                );
                if late > 0 {
                    if let Some(hint) = late_hint(recorded, args.speed, summary.stats.all.iops) {
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
    match (summary.status, error) {
        (flashlab_results::RunStatus::Interrupted, _) => Err(interrupted(&results_root)),
        (_, None) => Ok(()),
        (_, Some(e)) => Err(CliError::failure(e.to_string())),
    }
}

/// The late requests of a replay that ran to its end or was stopped (its
/// run's `device_stats.replay`; absent when the replay failed).
fn late_requests(summary: &flashlab_results::RunSummary) -> Option<u64> {
    summary
        .device_stats
        .as_ref()?
        .get("replay")?
        .get("late_requests")?
        .as_u64()
}

/// What the late-request hint needs of the trace: the span of its recorded
/// times and its length. `None` when it is empty.
#[derive(Clone, Copy)]
struct Recorded {
    first_ns: u64,
    last_ns: u64,
    len: usize,
}

impl Recorded {
    fn of(trace: &[TraceIo]) -> Option<Recorded> {
        Some(Recorded {
            first_ns: trace.iter().map(|io| io.time_ns).min()?,
            last_ns: trace.iter().map(|io| io.time_ns).max()?,
            len: trace.len(),
        })
    }
}

/// Why requests were late, in the user's terms: the rate the trace asks for
/// against the rate the device sustained, and the flags that replay it at a
/// pace the device can follow. `None` when the trace spans no time.
fn late_hint(recorded: Option<Recorded>, speed: f64, device_iops: f64) -> Option<String> {
    let Recorded {
        first_ns,
        last_ns,
        len,
    } = recorded?;
    let span_ns = last_ns.checked_sub(first_ns).filter(|&s| s > 0)? as f64 / speed;
    let asked_per_s = len as f64 / (span_ns / 1e9);
    Some(format!(
        "the trace asks for {} requests/s at {speed}x ({} requests in {}); the device completed {}/s: \
         use --speed {} or --closed-loop to replay at a pace it can follow",
        output::format_rate(asked_per_s),
        len,
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
