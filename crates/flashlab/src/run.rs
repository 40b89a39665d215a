//! `flashlab run`: resolve the patterns, check them against the target, open
//! it (after the safety check), run every pattern, save and print results.

use std::io::IsTerminal;

use flashlab_device::{Device, DeviceKind};
use flashlab_pattern::units::format_size;
use flashlab_pattern::{PatternFile, PatternSpec, StreamGen, Touched};
use flashlab_results::{RunStatus, RunSummary};
use flashlab_workload::{RunKind, RunStart};

use crate::cli::RunArgs;
use crate::error::{CliError, CliResult};
use crate::target::{self, Probed, Target};
use crate::{output, signals};
use flashlab_pattern::args::SizeValue;
use flashlab_workload::FrontEnd;

/// The runs a command line asks for, before they are resolved against a device.
fn pattern_args(args: &RunArgs) -> CliResult<Vec<flashlab_pattern::PatternArgs>> {
    let mut flags = args.pattern.to_args().map_err(CliError::user)?;
    if let Some(path) = &args.fio_job {
        return fio_job_args(args, path, &flags);
    }
    match &args.pattern_file {
        None => {
            // fio's size is both the file's size and the IO region: --size,
            // which creates the file, is also the default TargetSize of a
            // pattern given by flags that starts at the beginning.
            if flags.target_size.is_none() && flags.target_offset.is_none() {
                flags.target_size = args.target.size.clone().map(SizeValue::Text);
            }
            Ok(vec![flags])
        }
        Some(path) => {
            if !flags.is_empty() {
                return Err(CliError::user(
                    "--pattern-file and pattern flags (--pattern, --io-size, ...) were both given; put the parameters in the file (its [defaults] table applies to every run) or drop --pattern-file",
                ));
            }
            let text = crate::target::read_small_text(path, "pattern file", "--pattern-file")?;
            let file =
                PatternFile::parse(&text, &path.display().to_string()).map_err(CliError::user)?;
            Ok(file.runs())
        }
    }
}

/// The runs of a fio job file (`--fio-job`): one per job section. Target
/// settings of the file (filename, ioengine, direct) must agree with the
/// command line's, which names the target.
fn fio_job_args(
    args: &RunArgs,
    path: &std::path::Path,
    flags: &flashlab_pattern::PatternArgs,
) -> CliResult<Vec<flashlab_pattern::PatternArgs>> {
    if !flags.is_empty() {
        return Err(CliError::user(
            "--fio-job and pattern flags (--rw, --bs, ...) were both given; put the options in the job file or drop --fio-job",
        ));
    }
    let text = crate::target::read_small_text(path, "fio job file", "--fio-job")?;
    let jobs = flashlab_pattern::fio::parse_job_file(&text)
        .map_err(|e| CliError::user(format!("{}: {e}", path.display())))?;
    for job in &jobs {
        if let Some(f) = &job.filename {
            if *f != args.target.device {
                return Err(CliError::user(format!(
                    "{}: job {} writes to filename={f}, but --device is {}; pass --device {f} (flashlab never picks a target from a file)",
                    path.display(),
                    job.args.name.as_deref().unwrap_or("?"),
                    args.target.device
                )));
            }
        }
        if job.engine == Some("sync") && args.target.engine != crate::cli::EngineArg::Sync {
            return Err(CliError::user(format!(
                "{}: the job's ioengine is synchronous; add --engine sync",
                path.display()
            )));
        }
        if job.buffered && !args.target.buffered {
            return Err(CliError::user(format!(
                "{}: direct=0 asks for the page cache; add --buffered",
                path.display()
            )));
        }
        if !args.quiet {
            for n in &job.notes {
                eprintln!("note: {n}");
            }
        }
    }
    Ok(jobs.into_iter().map(|j| j.args).collect())
}

pub fn run(args: RunArgs) -> CliResult<()> {
    let list = pattern_args(&args)?;

    let seed = list
        .first()
        .and_then(|a| a.seed)
        .unwrap_or(flashlab_pattern::DEFAULT_SEED);
    let probed = target::probe(&args.target, seed)?;
    let (info, lbs) = (probed.info.clone(), probed.lbs);
    let specs = flashlab_workload::resolve_patterns(&list, None, &info, lbs)
        .map_err(|e| CliError::user(e.render(FrontEnd::Cli)))?;
    let needs = flashlab_workload::DeviceNeeds::of_patterns(&specs);

    if args.dry_run {
        return dry_run(&args, &probed, &specs, needs.writes);
    }

    let (mut device, engine) = probed.open(
        &args.target,
        needs.writes,
        needs.max_outstanding,
        needs.max_io_bytes,
        args.quiet,
    )?;
    let default_name = if specs.len() == 1 {
        specs[0].name.clone()
    } else {
        format!("{}-runs", specs.len())
    };
    let mut results =
        target::create_results(args.results.as_deref(), &default_name, &*device, &engine)?;
    let results_root = results.root().to_path_buf();
    let count = specs.len();

    // --quiet prints the result (the runs table, once, at the end) and
    // nothing else; warnings still go to stderr.
    let human = !(args.json || args.quiet);
    if human {
        println!("device:  {}", output::device_line(device.info(), &engine));
        println!("results: {}", results_root.display());
    }
    signals::install();
    let mut terminal = Terminal::new(human, !args.json, args.quiet);
    let ran = flashlab_workload::run_observed(
        flashlab_workload::Prepared::Patterns(specs),
        &mut *device,
        &mut results,
        &run_options(seed),
        &mut terminal,
    );
    terminal.clear();
    let failure = match ran {
        Ok(_) => None,
        Err(failed) => Some(ended_early(*failed, &results_root)?),
    };
    if let Err(e) = device.flush() {
        eprintln!("warning: flushing the device failed: {e}");
    }
    let rows = terminal.rows;
    if human && count > 1 {
        println!("\nall runs:\n{}", output::table(&rows));
    }
    if args.quiet && !args.json {
        println!("{}", output::table(&rows));
    }
    if let Some(csv) = &args.csv {
        crate::export::write_csv(&results, None, Some(csv))?;
    }
    if args.json {
        let text = serde_json::to_string_pretty(&results.summary()).expect("summary serializes");
        println!("{text}");
    }
    if let Some(path) = &args.report {
        crate::report::run_report(&results_root, path, human)?;
    }
    match failure {
        Some(f) => Err(f),
        None => Ok(()),
    }
}

/// How the CLI runs a workload: every run's records kept, stopped by
/// Ctrl-C (the runs so far are saved, the run stopped as "interrupted").
pub(crate) fn run_options(seed: u64) -> flashlab_workload::RunOptions<'static> {
    flashlab_workload::RunOptions {
        seed,
        records: true,
        stop: &signals::STOP,
    }
}

/// The error of a workload that ended early, as the command reports it: a
/// run interrupted (exit 130) or failed, after the runs so far were saved;
/// or an error saving them, returned at once.
pub(crate) fn ended_early(
    failed: flashlab_workload::Failed,
    results_root: &std::path::Path,
) -> CliResult<CliError> {
    let last = match (&failed.error, failed.outcome.runs.last()) {
        (
            flashlab_workload::WorkloadError::Run(_) | flashlab_workload::WorkloadError::Stopped(_),
            Some(last),
        ) => last,
        (flashlab_workload::WorkloadError::Io { source, .. }, _) => {
            return Err(CliError::failure(source.to_string()))
        }
        (e, _) => return Err(CliError::failure(e.render(FrontEnd::Cli))),
    };
    Ok(match last.status {
        RunStatus::Interrupted => interrupted(results_root),
        _ => CliError::failure(format!(
            "{}; the results so far are in {}",
            failed.error,
            results_root.display()
        )),
    })
}

/// Ctrl-C stopped the command; what was done is saved.
pub(crate) fn interrupted(results_root: &std::path::Path) -> CliError {
    CliError {
        message: format!(
            "interrupted; the results so far are in {}",
            results_root.display()
        ),
        exit_code: 130,
    }
}

/// The terminal as [`flashlab_workload::run`] runs: a line as each run
/// starts, its progress bar (on a terminal), its table when it ends, and
/// its warnings.
pub(crate) struct Terminal {
    /// Print a line as each run starts and its table when it ends.
    pub announce: bool,
    /// Keep every run's rows, for the table at the end.
    pub keep_rows: bool,
    pub show_progress: bool,
    pub bar: Option<indicatif::ProgressBar>,
    pub rows: Vec<[String; 10]>,
}

impl Terminal {
    /// A terminal that shows a progress bar unless `quiet` or stderr is not
    /// a terminal.
    pub fn new(announce: bool, keep_rows: bool, quiet: bool) -> Terminal {
        Terminal {
            announce,
            keep_rows,
            show_progress: !quiet && std::io::stderr().is_terminal(),
            bar: None,
            rows: Vec::new(),
        }
    }

    /// Removes a progress bar a run left (it ended without its results saved).
    pub fn clear(&mut self) {
        if let Some(b) = self.bar.take() {
            b.finish_and_clear();
        }
    }
}

impl flashlab_workload::Observer for Terminal {
    fn run_started(&mut self, start: &RunStart<'_>) {
        let total = match start.what {
            RunKind::Pattern(spec) => {
                if self.announce {
                    println!(
                        "run {}/{}: {} — {}, {}, seed {}",
                        start.index + 1,
                        start.count,
                        spec.name,
                        spec.describe(),
                        spec.amount(),
                        spec.seed
                    );
                }
                progress_total(spec)
            }
            RunKind::Replay(trace) => Progress {
                total: trace.requests,
                unit: "IOs",
            },
        };
        self.bar = self.show_progress.then(|| {
            let bar = indicatif::ProgressBar::new(total.total);
            bar.set_style(
                indicatif::ProgressStyle::with_template(&format!(
                    "{{spinner}} {{msg}} [{{bar:30}}] {{pos}}/{{len}} {}, ETA {{eta}}",
                    total.unit
                ))
                .expect("valid template")
                .progress_chars("=> "),
            );
            bar.set_message(start.name.to_string());
            bar
        });
    }

    fn progress(&mut self, done: u64, _total: u64) {
        if let Some(b) = &self.bar {
            b.set_position(done);
        }
    }

    fn run_finished(&mut self, summary: &RunSummary) {
        self.clear();
        if self.keep_rows {
            self.rows.extend(output::rows(summary));
        }
        if self.announce {
            println!("{}", output::table(&output::rows(summary)));
            print_device_stats(summary);
        }
        print_warnings(summary);
    }
}

/// What a run's progress bar counts to: IOs, or for a run with a runtime
/// the milliseconds of it (the executor reports progress in those).
fn progress_total(spec: &PatternSpec) -> Progress {
    match spec.runtime_ns {
        Some(r) => Progress {
            total: r / 1_000_000,
            unit: "ms",
        },
        None => Progress {
            total: spec.total_ios(),
            unit: "IOs",
        },
    }
}

/// A progress bar's length and unit.
#[derive(Clone, Copy)]
struct Progress {
    total: u64,
    unit: &'static str,
}

pub(crate) fn print_device_stats(summary: &RunSummary) {
    let Some(stats) = &summary.device_stats else {
        return;
    };
    let waf = stats.get("write_amplification").and_then(|v| v.as_f64());
    if let Some(waf) = waf {
        // A run without host writes has no write amplification: 0.000
        // would read as a perfect FTL (issue 33 item 7).
        let host_writes = stats.pointer("/host/writes").and_then(|v| v.as_u64());
        let waf = match host_writes {
            Some(0) => "write amplification - (no host writes)".to_string(),
            _ => format!("write amplification {waf:.3}"),
        };
        let unmapped = summary
            .unmapped_read_fraction
            .map(|f| format!(", reads of never-written pages {:.1} %", f * 100.0))
            .unwrap_or_default();
        println!("  simulator: {waf}{unmapped} (full accounting in run.json and --json)");
    }
}

/// A run's warnings, on stderr so that `--json` output stays parseable.
/// A warning every run repeats (the target is RAM-backed) is printed once
/// per command, at its first run; each run's `run.json` keeps it.
pub(crate) fn print_warnings(summary: &RunSummary) {
    static PRINTED: std::sync::Mutex<Vec<String>> = std::sync::Mutex::new(Vec::new());
    let mut printed = PRINTED.lock().unwrap_or_else(|e| e.into_inner());
    for w in &summary.warnings {
        if printed.contains(w) {
            continue;
        }
        eprintln!("warning: run {}: {w}", summary.name);
        printed.push(w.clone());
    }
}

fn dry_run(args: &RunArgs, probed: &Probed, specs: &[PatternSpec], writes: bool) -> CliResult<()> {
    let info = &probed.info;
    println!("dry run: no IO is done and nothing is written.");
    println!(
        "device: {} ({}, logical block {} B)",
        info.name,
        format_size(info.size_bytes),
        info.logical_block_bytes
    );
    if let Target::Path(path) = &probed.target {
        if !path.exists() {
            println!(
                "note: {} does not exist; a real run creates it with {} of data",
                path.display(),
                format_size(probed.create_size.unwrap_or(0))
            );
        } else if writes && info.kind == DeviceKind::BlockDevice {
            match flashlab_realdev::check_write_safety(path, args.target.allow_write_to.as_deref())
            {
                Ok(warnings) if warnings.is_empty() => {
                    println!("safety: a real run may write to {}", path.display())
                }
                Ok(warnings) => {
                    for w in warnings {
                        println!("safety: allowed by --allow-write-to, but: {w}");
                    }
                }
                Err(e) => println!("safety: a real run would be REFUSED: {e}"),
            }
        }
    }
    for (i, spec) in specs.iter().enumerate() {
        println!();
        println!("run {}: {} — {}", i + 1, spec.name, spec.describe());
        if spec.time_based {
            println!(
                "  time-based: each stream repeats the pattern until the runtime; IOIgnore {}, seed {}",
                spec.io_ignore, spec.seed
            );
        } else {
            println!(
                "  IOCount {} per stream ({} in all){}, IOIgnore {}, seed {}",
                spec.io_count,
                spec.total_ios(),
                spec.runtime_ns
                    .map(|r| format!(
                        ", or fewer if the runtime {} ends first",
                        flashlab_pattern::units::format_duration_ns(r)
                    ))
                    .unwrap_or_default(),
                spec.io_ignore,
                spec.seed
            );
        }
        println!("  first IOs:");
        println!(
            "  {:>8} {:>6} {:>14} {:>8}  mode",
            "index", "stream", "offset_bytes", "size"
        );
        let first = (0..spec.parallel_degree)
            .flat_map(|p| {
                StreamGen::new(spec, p)
                    .take(args.show_ios.div_ceil(spec.parallel_degree as usize).max(1))
            })
            .take(args.show_ios);
        for io in first {
            println!(
                "  {:>8} {:>6} {:>14} {:>8}  {}",
                io.index,
                io.stream,
                io.offset_bytes,
                format_size(io.size_bytes),
                io.mode
            );
        }
        let touched = Touched::of(spec);
        println!("  would write: {}", output::ranges(&touched.written, 6));
        println!("  would read:  {}", output::ranges(&touched.read, 6));
    }
    Ok(())
}
