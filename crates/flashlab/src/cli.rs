//! The command line: every flag, its help text and its default.

use std::path::PathBuf;

use clap::{Args, Parser, Subcommand, ValueEnum};
use flashlab_pattern::args::{MixValue, RatioValue, SizeValue};
use flashlab_pattern::PatternArgs;

#[derive(Parser, Debug)]
#[command(
    name = "flashlab",
    version = concat!(env!("CARGO_PKG_VERSION"), " (", env!("FLASHLAB_GIT_COMMIT"), ")"),
    about = "Measure, explain and emulate flash storage",
    long_about = "flashlab measures flash devices (SSDs, NVMe drives, USB sticks, SD cards) with the \
                  IO patterns of uFLIP and related papers, and simulates SSDs to explain what it measures."
)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Command,
}

// Parsed once per process; boxing the large variant would only add noise.
#[allow(clippy::large_enum_variant)]
#[derive(Subcommand, Debug)]
pub enum Command {
    /// Run IO patterns against a device, a file or a simulated SSD.
    Run(RunArgs),
    /// Replay a block IO trace against a device, a file or a simulated SSD.
    Replay(ReplayArgs),
    /// Export the per-IO records of a results directory.
    Export(ExportArgs),
    /// Print the statistics saved in a results directory.
    Show(ShowArgs),
    /// Run a paper's experiments: uflip, chen09, wang11, hudlet11, budilovsky11.
    Suite(SuiteArgs),
    /// The SSD simulator: list and print device profiles.
    Sim(SimArgs),
    /// Report results directories as one offline HTML page (or Markdown, JSON); several compare devices.
    Report(crate::report::ReportArgs),
    /// Serve a simulated SSD over NBD (with persistence and crash recovery).
    Serve(crate::serve::ServeArgs),
    /// The papers' published numbers vs the simulator's, with tolerances and a score.
    Validate(crate::validate::ValidateArgs),
    /// Sweep simulator parameters or workload keys (on a simulator, or one point at a time on a real device or file): every point of a grid file on local threads, one table of all (docs/python.md).
    Sweep(crate::sweep::SweepArgs),
    /// TPC-C on PostgreSQL over a file, a block device or a simulated SSD, logical and physical IO traced (docs/oltp.md).
    Oltp(crate::oltp::OltpArgs),
    /// Estimate a device's geometry from timing alone (erase unit, open units, cache, read-ahead, parallelism, FTL family), with the curves (docs/probe.md).
    Probe(crate::probe::ProbeArgs),
    /// Fit a simulator profile to a device: probe, a characterization plan, an in-process fit, held-out scores (docs/probe.md).
    Twin(crate::twin::TwinArgs),
}

#[derive(Args, Debug)]
#[command(after_help = crate::suite::SHARED_OPTIONS_HELP)]
pub struct SuiteArgs {
    #[command(subcommand)]
    pub suite: SuiteCommand,
}

#[derive(Subcommand, Debug)]
pub enum SuiteCommand {
    /// uFLIP (Bouganim et al., CIDR 2009): nine micro-benchmarks with its methodology, Table 3 and hints.
    Uflip(crate::suite::UflipArgs),
    /// Chen, Koufaty & Zhang (SIGMETRICS 2009): read-ahead, write cache, interference, randomness, fragmentation.
    Chen09(crate::suite::PaperArgs),
    /// Wang et al. (IEICE 2011): throughput by request size, 1 and 30 outstanding IOs, the bathtub effect.
    Wang11(crate::suite::PaperArgs),
    /// Hudlet & Schall (BTW 2011): database patterns, page sizes, queue depths, index-vs-scan break-even.
    Hudlet11(crate::suite::PaperArgs),
    /// Budilovsky, Toledo & Zuck (SYSTOR 2011) on the simulator: chunk size and host hints.
    Budilovsky11(crate::suite::Budilovsky11Args),
    /// Wang et al. (IEICE 2011) sections 3-4: TPC-C on PostgreSQL on the three simulated SSDs x ext2/btrfs (root).
    #[command(name = "wang11-oltp")]
    Wang11Oltp(crate::suite_oltp::Wang11OltpArgs),
}

/// Where IOs go, shared by `run` and `replay`.
#[derive(Args, Debug)]
#[command(next_help_heading = "Device")]
pub struct TargetArgs {
    /// Target: a block device (/dev/nvme0n1), a file, or sim:PROFILE[,key=value...].
    #[arg(long, short = 'd', value_name = "DEVICE", default_value = "sim:ssd-m")]
    pub device: String,

    /// Create the file DEVICE with this size (filled with data) if it does not exist;
    /// also the default --target-size, as fio's size is both.
    #[arg(long, value_name = "SIZE")]
    pub size: Option<String>,

    /// How IOs are issued on a real device (auto: io_uring, or sync with a warning where io_uring is unavailable; sync issues one IO at a time).
    #[arg(long, value_enum, default_value_t = EngineArg::Auto)]
    pub engine: EngineArg,

    /// Go through the page cache instead of O_DIRECT (for file systems without O_DIRECT).
    #[arg(long)]
    pub buffered: bool,

    /// Allow writing to this block device even though the safety check refuses it.
    #[arg(long, value_name = "DEVICE")]
    pub allow_write_to: Option<PathBuf>,
}

#[derive(Args, Debug)]
pub struct RunArgs {
    #[command(flatten)]
    pub target: TargetArgs,

    #[command(flatten)]
    pub pattern: PatternFlags,

    /// Run every [[run]] of a TOML pattern file instead of a pattern given by flags.
    #[arg(long, short = 'f', value_name = "FILE")]
    pub pattern_file: Option<PathBuf>,

    /// Run a fio job file's jobs ([global] applied to each), one flashlab run per job;
    /// sizes read as fio reads them (kb_base=1024). Options flashlab cannot express are refused.
    #[arg(long, value_name = "FILE", conflicts_with = "pattern_file")]
    pub fio_job: Option<PathBuf>,

    /// Results directory to create [default: results/DATE-TIME-NAME].
    #[arg(long, short = 'o', value_name = "DIR")]
    pub results: Option<PathBuf>,

    /// Print the runs, their first IOs and the byte ranges they would touch; do no IO.
    #[arg(long)]
    pub dry_run: bool,

    /// How many IOs per run a dry run prints.
    #[arg(long, value_name = "N", default_value_t = 16)]
    pub show_ios: usize,

    /// Print the JSON summary (docs/results-format.md) on stdout instead of a table.
    #[arg(long)]
    pub json: bool,

    /// Also write every run's per-IO records to this CSV file.
    #[arg(long, value_name = "FILE")]
    pub csv: Option<PathBuf>,

    /// Also write a report of the runs (latency over time, CDF, histogram) to this file
    /// (HTML; Markdown or JSON when it ends in .md or .json).
    #[arg(long, value_name = "FILE")]
    pub report: Option<PathBuf>,

    /// Print only the result (the runs table): no progress bar, no device or results lines.
    #[arg(long, short)]
    pub quiet: bool,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum EngineArg {
    Auto,
    Sync,
    #[value(name = "io_uring", alias = "io-uring", alias = "uring")]
    IoUring,
}

/// The pattern algebra's parameters (uFLIP Table 1 names in the help).
#[derive(Args, Debug, Default)]
#[command(next_help_heading = "Pattern")]
pub struct PatternFlags {
    /// A uFLIP baseline pattern: SR, RR, SW or RW (sets --location and --mode).
    #[arg(long, short = 'p', value_name = "SR|RR|SW|RW")]
    pub pattern: Option<String>,
    /// Location function: sequential, random, ordered:INCR, partitioned:P, stride:GAP,
    /// skip-sequential:FRACTION, random-once, zipf:THETA, pareto:H, normal:SIGMA%,
    /// zoned:ACCESS%/SIZE%:... [default: sequential].
    #[arg(long, value_name = "FUNCTION", allow_hyphen_values = true)]
    pub location: Option<String>,
    /// read, write or trim [default: read].
    #[arg(long, value_name = "MODE")]
    pub mode: Option<String>,
    /// IOSize, a multiple of 512 B [default: 32KiB].
    #[arg(long, short = 's', visible_alias = "bs", value_name = "SIZE")]
    pub io_size: Option<String>,
    /// IOShift: offset added to every IO to misalign it [default: 0].
    #[arg(long, value_name = "SIZE")]
    pub io_shift: Option<String>,
    /// TargetOffset: start of the target space [default: 0].
    #[arg(long, visible_alias = "offset", value_name = "SIZE")]
    pub target_offset: Option<String>,
    /// TargetSize: size of the target space [default: the rest of the device].
    #[arg(long, value_name = "SIZE")]
    pub target_size: Option<String>,
    /// Time function: consecutive, pause:DURATION or burst:DURATION:COUNT [default: consecutive].
    #[arg(long, value_name = "FUNCTION")]
    pub time: Option<String>,
    /// IOCount: IOs per stream [default: 1024].
    #[arg(long, short = 'n', value_name = "N")]
    pub io_count: Option<u64>,
    /// IOIgnore: leading IOs of each stream left out of the statistics [default: 0].
    #[arg(long, value_name = "N")]
    pub io_ignore: Option<u64>,
    /// ParallelDegree: streams, each on its own slice of the target [default: 1]
    /// (fio's numjobs, except that fio's jobs each cover the whole target).
    #[arg(long, visible_alias = "numjobs", value_name = "D")]
    pub parallel: Option<u64>,
    /// Outstanding IOs per stream [default: 1].
    #[arg(long, visible_aliases = ["qd", "iodepth"], value_name = "Q")]
    pub queue_depth: Option<u64>,
    /// Seed of every random choice [default: 42].
    #[arg(long, value_name = "N")]
    pub seed: Option<u64>,
    /// Mix with a second pattern: SR|RR|SW|RW or LOCATION/MODE[@IOSIZE].
    #[arg(long, value_name = "PATTERN", allow_hyphen_values = true)]
    pub mix: Option<String>,
    /// Mix Ratio #1:#2, e.g. 4 (= 4:1) or 1:4 [default: 1:1].
    #[arg(long, value_name = "RATIO")]
    pub ratio: Option<String>,
    /// Name of the run in results [default: derived from the pattern].
    #[arg(long, value_name = "NAME")]
    pub name: Option<String>,
    /// fio's rw: read, write, randread, randwrite, trim or randtrim (sets --location and --mode).
    #[arg(long, value_name = "RW")]
    pub rw: Option<String>,
    /// fio's random_distribution for a random --rw: random, zipf:THETA, pareto:H,
    /// normal:SIGMA% or zoned:ACCESS%/SIZE%:... (the --location functions of the same names).
    #[arg(
        long = "random_distribution",
        alias = "random-distribution",
        value_name = "DIST"
    )]
    pub random_distribution: Option<String>,
    /// fio's runtime: stop submitting after this long (a bare number is seconds, as in fio;
    /// also 500ms, 2m). Simulated time on the simulator, wall time on a real device. Without
    /// --time_based it caps a run of --io-count IOs per stream.
    #[arg(long, value_name = "DURATION")]
    pub runtime: Option<String>,
    /// fio's time_based: repeat the pattern past --io-count until --runtime.
    #[arg(long = "time_based", alias = "time-based")]
    pub time_based: bool,
    /// fio's rate_iops: submit at most N IOs per second per stream (fio: per job), on a fixed
    /// schedule (IO i at i/N s) that does not wait for completions, only for a free queue slot.
    #[arg(long = "rate_iops", alias = "rate-iops", value_name = "N")]
    pub rate_iops: Option<u64>,
    /// fio's bssplit: each IO's size drawn by count shares, e.g. 4k/50:64k/50 (flashlab's units);
    /// offsets on the grid of the smallest size. Sequential and random locations only.
    #[arg(long, value_name = "SIZE/PERCENT:...")]
    pub bssplit: Option<String>,
}

impl PatternFlags {
    /// The parameters, with fio's `--rw` and `--random_distribution` turned
    /// into a location and a mode; an error names the conflicting flags.
    pub fn to_args(&self) -> Result<PatternArgs, String> {
        let size = |s: &Option<String>| s.clone().map(SizeValue::Text);
        let (mut location, mut mode) = (self.location.clone(), self.mode.clone());
        if let Some(rw) = &self.rw {
            if self.pattern.is_some() || location.is_some() || mode.is_some() {
                return Err("--rw sets the location and the mode; drop --pattern, --location and --mode, or --rw".into());
            }
            let (l, m) = flashlab_pattern::fio::rw(rw).map_err(|e| e.to_string())?;
            location = Some(l.to_string());
            mode = Some(m.to_string());
        }
        if let Some(d) = &self.random_distribution {
            let random = location.as_deref() == Some("random")
                || self
                    .pattern
                    .as_deref()
                    .is_some_and(|p| p.eq_ignore_ascii_case("RR") || p.eq_ignore_ascii_case("RW"));
            if !random {
                return Err("--random_distribution applies to random IO; add --rw randread or randwrite (or give the function as --location)".into());
            }
            location =
                Some(flashlab_pattern::fio::random_distribution(d).map_err(|e| e.to_string())?);
            if let Some(p) = &self.pattern {
                mode = Some(
                    if p.eq_ignore_ascii_case("RR") {
                        "read"
                    } else {
                        "write"
                    }
                    .to_string(),
                );
            }
        }
        let pattern = if self.random_distribution.is_some() {
            None
        } else {
            self.pattern.clone()
        };
        Ok(PatternArgs {
            name: self.name.clone(),
            pattern,
            location,
            mode,
            io_size: size(&self.io_size),
            io_shift: size(&self.io_shift),
            target_offset: size(&self.target_offset),
            target_size: size(&self.target_size),
            time: self.time.clone(),
            io_count: self.io_count,
            io_ignore: self.io_ignore,
            parallel: self.parallel,
            queue_depth: self.queue_depth,
            seed: self.seed,
            mix: self.mix.clone().map(MixValue::Text),
            ratio: self.ratio.clone().map(RatioValue::Text),
            runtime: self.runtime.clone(),
            time_based: self.time_based.then_some(true),
            rate_iops: self.rate_iops,
            bssplit: self.bssplit.clone(),
        })
    }
}

#[derive(Args, Debug)]
pub struct ExportArgs {
    /// A results directory written by `flashlab run`.
    pub results_dir: PathBuf,
    /// Output format.
    #[arg(long, value_enum, default_value_t = ExportFormat::Csv)]
    pub format: ExportFormat,
    /// Only this run (its name or its 1-based number).
    #[arg(long, value_name = "RUN")]
    pub run: Option<String>,
    /// Output file [default: stdout].
    #[arg(long, value_name = "FILE")]
    pub output: Option<PathBuf>,
    #[command(flatten)]
    pub old_output: OldOutput,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum ExportFormat {
    Csv,
    Json,
    /// Needs a flashlab built with `--features parquet`.
    Parquet,
}

#[derive(Args, Debug)]
pub struct ShowArgs {
    /// A results directory written by `flashlab run`.
    pub results_dir: PathBuf,
    /// Print the JSON summary instead of a table.
    #[arg(long)]
    pub json: bool,
}

#[derive(Args, Debug)]
pub struct SimArgs {
    #[command(subcommand)]
    pub command: SimCommand,
}

#[derive(Subcommand, Debug)]
pub enum SimCommand {
    /// List the built-in device profiles.
    Profiles,
    /// Print a profile as TOML, to copy and edit into your own.
    #[command(visible_alias = "profile")]
    Show {
        /// A profile name from `flashlab sim profiles`.
        profile: String,
        /// Write the TOML to this file instead of stdout.
        #[arg(long, value_name = "FILE")]
        output: Option<PathBuf>,
        #[command(flatten)]
        old_output: OldOutput,
    },
}

#[derive(Args, Debug)]
pub struct ReplayArgs {
    /// The trace file.
    pub trace: PathBuf,

    #[command(flatten)]
    pub target: TargetArgs,

    /// Trace format: flashlab, blkparse, fio, mqsim, disksim or msr [default: detected].
    #[arg(long, value_name = "FORMAT")]
    pub format: Option<String>,

    /// Issue requests as fast as the device allows, --queue-depth at a time, ignoring recorded times.
    #[arg(long)]
    pub closed_loop: bool,

    /// Closed loop: requests in flight. Open loop: the most in flight before requests are late.
    #[arg(long, visible_alias = "qd", value_name = "Q")]
    pub queue_depth: Option<usize>,

    /// Open loop: replay this many times faster than recorded.
    #[arg(long, value_name = "X", default_value_t = 1.0)]
    pub speed: f64,

    /// Requests past the end of the device: error, wrap (fold modulo the size) or scale.
    #[arg(long, value_name = "HOW", default_value = "error")]
    pub fit: String,

    /// Results directory to create [default: results/DATE-TIME-replay].
    #[arg(long, short = 'o', value_name = "DIR")]
    pub results: Option<PathBuf>,

    /// Name of the run in results.
    #[arg(long, value_name = "NAME", default_value = "replay")]
    pub name: String,

    /// Print the JSON summary on stdout instead of a table.
    #[arg(long)]
    pub json: bool,

    /// Check the trace and print what would be replayed; do no IO.
    #[arg(long)]
    pub dry_run: bool,

    /// Print only the result (the runs table and late requests): no progress bar, no device or results lines.
    #[arg(long, short)]
    pub quiet: bool,
}

/// `-o` means the results directory in every command that writes one
/// (run, replay, suite, sweep, validate, oltp, probe). The commands that
/// write one file (export, report, sim show, twin) take `--output FILE`;
/// their old `-o FILE` still works, with a warning, so scripts keep
/// running while they move. Each of them flattens this one hidden flag
/// beside its `output` field (the `conflicts_with` names that field).
#[derive(Args, Debug, Default)]
pub struct OldOutput {
    /// The old spelling of --output.
    #[arg(
        short = 'o',
        hide = true,
        value_name = "FILE",
        conflicts_with = "output"
    )]
    pub output_o: Option<PathBuf>,
}

impl OldOutput {
    /// Moves an old `-o FILE` into `output`, with the warning that names
    /// the new spelling.
    pub fn move_into(&mut self, output: &mut Option<PathBuf>) {
        if let Some(path) = self.output_o.take() {
            eprintln!(
                "warning: -o {} names an output file here, but -o is the results directory in flashlab's other commands; write --output {}",
                path.display(),
                path.display()
            );
            *output = Some(path);
        }
    }
}

/// Applies [`OldOutput`] once, after parsing.
pub fn take_old_output(command: &mut Command) {
    match command {
        Command::Export(a) => a.old_output.move_into(&mut a.output),
        Command::Report(a) => a.old_output.move_into(&mut a.output),
        Command::Twin(a) => a.old_output.move_into(&mut a.output),
        Command::Sim(SimArgs {
            command: SimCommand::Show {
                output, old_output, ..
            },
        }) => old_output.move_into(output),
        _ => {}
    }
}
