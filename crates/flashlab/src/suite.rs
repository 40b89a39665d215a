//! `flashlab suite ...`: plan, run (resumably) and summarise a paper's suite:
//! uflip (with its methodology, Table 3 and hints), chen09, wang11, hudlet11,
//! budilovsky11.

use std::io::IsTerminal;
use std::path::PathBuf;
use std::sync::atomic::Ordering;

use clap::Args;
use flashlab_device::{ClockKind, Device, DeviceInfo};
use flashlab_pattern::units::{format_duration_ns, format_size, parse_duration_ns, parse_size};
use flashlab_results::ResultsDir;
use flashlab_suite::papers::PaperConfig;
use flashlab_suite::plan::Plan;
use flashlab_suite::runner::{Journal, Progress};
use flashlab_suite::session;
use flashlab_suite::state::StateMethod;
use flashlab_suite::suites::{self, DynSuite};
use flashlab_suite::summary::SuiteSummary;
use flashlab_suite::uflip::{UflipConfig, BENCHMARKS};
use flashlab_workload::WorkloadError;

use crate::cli::{EngineArg, SuiteCommand, TargetArgs};
use crate::error::{CliError, CliResult};
use crate::{signals, target};

/// The options every suite takes, with the same meaning in each
/// (uflip, chen09, wang11, hudlet11, budilovsky11): a suite flattens this
/// struct, so a new suite gets them all. `flashlab suite --help` lists them.
#[derive(Args, Debug, Clone, Default)]
#[command(next_help_heading = "Options of every suite")]
pub struct SuiteOptions {
    /// Results directory to create [default: results/DATE-TIME-SUITE].
    #[arg(long, short = 'o', value_name = "DIR")]
    pub results: Option<PathBuf>,

    /// A reduced run: fewer IOs and smaller parameter ranges, a quick look whose findings are not comparable to the paper's.
    #[arg(long)]
    pub quick: bool,

    /// Seed of every random choice [default: 42; budilovsky11: 11].
    #[arg(long, value_name = "N")]
    pub seed: Option<u64>,

    /// Print the summary as JSON on stdout.
    #[arg(long)]
    pub json: bool,

    /// Print only the result (the summary): no plan, progress or saved-files lines.
    #[arg(long, short)]
    pub quiet: bool,

    /// Print the plan (every run) and do nothing else.
    #[arg(long)]
    pub dry_run: bool,

    /// Print the whole plan before running, not just its summary.
    #[arg(long, short)]
    pub verbose: bool,

    /// fio's runtime for every run: a run stops submitting after this much device time
    /// (a bare number is seconds; also 500ms, 2m). Simulated time on the simulator.
    #[arg(long, value_name = "DURATION")]
    pub runtime: Option<String>,

    /// fio's time_based: every measured run repeats its pattern until --runtime
    /// (not uflip, whose runs stop when their mean is known within --bound).
    #[arg(long = "time_based", alias = "time-based")]
    pub time_based: bool,
}

/// The shared options' names, as `flashlab suite --help` lists them.
pub const SHARED_OPTIONS_HELP: &str =
    "Options of every suite (flashlab suite NAME --help for the rest):
  -o, --results <DIR>  Results directory to create [default: results/DATE-TIME-SUITE]
      --quick          A reduced run: a quick look whose findings are not comparable to the paper's
      --seed <N>       Seed of every random choice [default: 42; budilovsky11: 11]
      --json           Print the summary as JSON on stdout
  -q, --quiet          Print only the result (the summary): no plan, progress or saved-files lines
      --dry-run        Print the plan (every run) and do nothing else
  -v, --verbose        Print the whole plan before running, not just its summary
      --runtime <DURATION>  fio's runtime: every run stops submitting after this much device time
      --time_based     fio's time_based: every measured run repeats its pattern until --runtime";

/// What every suite on a device takes: the shared options, the device and --resume.
#[derive(Args, Debug)]
pub struct SuiteCommon {
    #[command(flatten)]
    pub target: TargetArgs,

    /// Continue an interrupted suite in DIR (its device and settings are reused).
    #[arg(long, value_name = "DIR", conflicts_with = "results")]
    pub resume: Option<PathBuf>,

    #[command(flatten)]
    pub options: SuiteOptions,
}

impl std::ops::Deref for SuiteCommon {
    type Target = SuiteOptions;
    fn deref(&self) -> &SuiteOptions {
        &self.options
    }
}

/// The default seed of the suites on a device.
pub const DEFAULT_SEED: u64 = 42;

#[derive(Args, Debug)]
pub struct UflipArgs {
    #[command(flatten)]
    pub common: SuiteCommon,

    /// State enforcement before the runs: random (uFLIP), sequential (Chen et al.), snia (2x capacity), none.
    #[arg(long, value_name = "METHOD", default_value = "random")]
    pub state: String,

    /// IOSize of the baseline patterns.
    #[arg(long, value_name = "SIZE", default_value = "32KiB")]
    pub io_size: String,

    /// Fewest IOs a run makes before it may stop.
    #[arg(long, value_name = "N", default_value_t = 256)]
    pub min_ios: u64,

    /// Most IOs per run (per stream): the cap of the automatic IOCount.
    #[arg(long, value_name = "N", default_value_t = 4096)]
    pub max_ios: u64,

    /// IOs of each long calibration run (start-up phase and period).
    #[arg(long, value_name = "N", default_value_t = 4096)]
    pub calibration_ios: u64,

    /// Stop a run when the 95 % confidence interval of its mean is within +/- this fraction.
    #[arg(long, value_name = "FRACTION", default_value_t = 0.05)]
    pub bound: f64,

    /// TargetSize of the random patterns [default: the whole device].
    #[arg(long, value_name = "SIZE")]
    pub random_target: Option<String>,

    /// Shortest pause between runs, whatever the pause probe measures.
    #[arg(long, value_name = "DURATION", default_value = "1s")]
    pub min_pause: String,

    /// Only these micro-benchmarks (comma-separated): granularity, alignment, locality,
    /// partitioning, order, parallelism, mix, pause, bursts.
    #[arg(long, value_name = "LIST")]
    pub only: Option<String>,

    /// Multiply the IO counts (--min-ios, --max-ios, --calibration-ios), e.g. 0.1 for a
    /// shorter look [default: 1]. Unlike --quick, the parameter ranges stay uFLIP's.
    #[arg(long, value_name = "X")]
    pub scale: Option<f64>,
}

/// chen09, wang11 and hudlet11.
#[derive(Args, Debug)]
pub struct PaperArgs {
    #[command(flatten)]
    pub common: SuiteCommon,

    /// Multiply every run's IO count (e.g. 0.25 for a quick look) [default: 1; --quick: 0.1].
    #[arg(long, value_name = "X")]
    pub scale: Option<f64>,

    /// chen09: do not re-fill the device before each experiment (the paper does).
    #[arg(long)]
    pub no_refill: bool,

    /// hudlet11: size of the test file (the paper: 1 GiB).
    #[arg(long, value_name = "SIZE", default_value = "1GiB")]
    pub test_file_size: String,
}

/// budilovsky11: its own device (`sim:budilovsky11`, rebuilt fresh for
/// every experiment), so a capacity and overrides instead of `--device`.
#[derive(Args, Debug)]
pub struct Budilovsky11Args {
    /// Simulated device capacity (the paper's 4 GiB; larger is slower).
    #[arg(long, value_name = "SIZE", default_value = "4GiB")]
    pub capacity: String,

    /// Measured 4 KiB requests per experiment (writes first run as many as warm-up).
    #[arg(long, value_name = "N", default_value_t = 1 << 17)]
    pub requests: u64,

    /// More simulator overrides for every configuration, e.g. op=0.25 or nand.erase_ns=3000000.
    #[arg(long = "set", value_name = "KEY=VALUE,...")]
    pub set: Option<String>,

    /// Continue an interrupted suite in DIR.
    #[arg(long, value_name = "DIR", conflicts_with = "results")]
    pub resume: Option<PathBuf>,

    /// --quick here: 256 MiB, 8192 requests per experiment.
    #[command(flatten)]
    pub options: SuiteOptions,
}

impl std::ops::Deref for Budilovsky11Args {
    type Target = SuiteOptions;
    fn deref(&self) -> &SuiteOptions {
        &self.options
    }
}

/// The seed of the paper's runs here (the suites on devices use 42).
const BUDILOVSKY11_SEED: u64 = flashlab_workload::scoreboard::BUDILOVSKY11_SEED;

/// A check of the probed device against a suite's flags.
type DeviceCheck = Box<dyn Fn(&DeviceInfo) -> CliResult<()>>;

/// One `flashlab suite NAME` as its flags give it. Every suite then takes
/// the same path ([`suite`]): the registry's suite plans the configuration,
/// heads the plan and sets the journal's rule.
struct Invocation {
    /// The suite's name in the registry.
    name: &'static str,
    common: SuiteCommon,
    /// The suite's typed configuration built from its flags, as the journal
    /// saves it. A bad flag is reported only when not resuming (`--resume`
    /// takes the journal's configuration).
    config: CliResult<serde_json::Value>,
    /// The checks of the probed device against the flags, worded by flag.
    check_device: DeviceCheck,
    /// What to change when a run of the plan is not a valid pattern.
    plan_hint: &'static str,
}

/// `flashlab suite NAME ...`: one path for every suite of the registry; the
/// OLTP matrix (`wang11-oltp`, not in the registry) has its own
/// ([`crate::suite_oltp`]).
pub fn suite(cmd: SuiteCommand) -> CliResult<()> {
    let inv = match cmd {
        SuiteCommand::Uflip(a) => uflip(a),
        SuiteCommand::Chen09(a) => paper("chen09", a),
        SuiteCommand::Wang11(a) => paper("wang11", a),
        SuiteCommand::Hudlet11(a) => paper("hudlet11", a),
        SuiteCommand::Budilovsky11(a) => budilovsky11(a)?,
        // The OLTP matrix: whole TPC-C runs, not executor steps, so not a
        // suite of the registry (flashlab_suite::suites::Kind::Oltp).
        SuiteCommand::Wang11Oltp(a) => return crate::suite_oltp::run(a),
    };
    let common = &inv.common;
    if let Some(dir) = &common.resume {
        if common.runtime.is_some() || common.time_based {
            return Err(CliError::user(
                "--resume continues the plan the suite started with; drop --runtime and --time_based",
            ));
        }
        return resume(dir, common);
    }
    let runtime_ns = suite_runtime(common)?;
    let config = inv.config?;
    let suite = registry_suite(inv.name)?;
    let probed = target::probe(&common.target, common.seed.unwrap_or(DEFAULT_SEED))?;
    let size = probed.info.size_bytes;
    (inv.check_device)(&probed.info)?;
    let mut plan = suite
        .plan(&config, size)
        .map_err(|e| CliError::user(e.to_string()))?;
    if let Some(runtime_ns) = runtime_ns {
        // Before the plan is saved: a resumed suite keeps the runtime.
        plan.with_runtime(runtime_ns, common.time_based)
            .map_err(|e| CliError::user(e.render("--runtime", "--time_based", "--runtime 10s")))?;
    }
    // Every run of the plan must be a valid pattern (e.g. a small
    // --random-target cannot hold uFLIP's granularity benchmark's largest
    // IOs): refused here, in one line, rather than when the run comes up.
    for run in plan.steps.iter().flat_map(|s| s.runs()) {
        run.spec.validate().map_err(|e| {
            CliError::user(format!(
                "{} run {}: {e}{}",
                suite.display_name(),
                run.name,
                inv.plan_hint
            ))
        })?;
    }
    let user = |e: flashlab_suite::suites::ConfigError| CliError::user(e.to_string());
    let header = suite
        .plan_header(&config, &probed.info.name, size)
        .map_err(user)?;
    let rule = suite.journal_rule(&config).map_err(user)?;
    // (the manifest's suite and the journal's stopping rule come from the
    // configuration: flashlab_suite::session::begin)
    start(
        common,
        probed,
        plan,
        header,
        config,
        rule.min_pause_ns,
        rule.min_ios,
    )
}

/// `--runtime` in nanoseconds, checked with `--time_based`.
fn suite_runtime(options: &SuiteOptions) -> CliResult<Option<u64>> {
    flashlab_suite::plan::parse_runtime(options.runtime.as_deref(), options.time_based)
        .map_err(|e| CliError::user(e.render("--runtime", "--time_based", "--runtime 10s")))
}

fn budilovsky11(args: Budilovsky11Args) -> CliResult<Invocation> {
    use flashlab_suite::suites::budilovsky11::Budilovsky11Config;
    let (capacity, requests) = if args.quick {
        ("256MiB".to_string(), Budilovsky11Config::quick().requests)
    } else {
        (args.capacity.clone(), args.requests)
    };
    if requests == 0 {
        return Err(CliError::user("--requests must be at least 1"));
    }
    let device = match &args.set {
        Some(s) if !s.trim().is_empty() => format!("sim:budilovsky11,capacity={capacity},{s}"),
        _ => format!("sim:budilovsky11,capacity={capacity}"),
    };
    // one line naming the flag for a bad capacity or override, before any work
    flashlab_sim::resolve_spec(device.trim_start_matches("sim:")).map_err(|e| {
        CliError::user(format!(
            "--capacity/--set: {e}; e.g. --capacity 1GiB --set op=0.25"
        ))
    })?;
    let seed = args.seed.unwrap_or(BUDILOVSKY11_SEED);
    let common = SuiteCommon {
        target: TargetArgs {
            device,
            size: None,
            engine: EngineArg::Auto,
            buffered: false,
            allow_write_to: None,
        },
        resume: args.resume,
        options: SuiteOptions {
            seed: Some(seed),
            ..args.options
        },
    };
    Ok(Invocation {
        name: "budilovsky11",
        common,
        config: Ok(to_json(&Budilovsky11Config { requests, seed })),
        check_device: Box::new(|_| Ok(())),
        plan_hint: "",
    })
}

fn to_json(config: &impl serde::Serialize) -> serde_json::Value {
    serde_json::to_value(config).expect("config serializes")
}

/// `count` multiplied by `--scale`, rounded, at least 1.
fn scaled(count: u64, scale: f64) -> u64 {
    ((count as f64 * scale).round() as u64).max(1)
}

fn uflip_config(args: &UflipArgs) -> CliResult<UflipConfig> {
    // --scale multiplies the IO counts as the papers' suites' --scale does
    // (the README offers it for every suite); the journal keeps the
    // scaled counts, so a resumed suite runs the same plan.
    let scale = args.scale.unwrap_or(1.0);
    if !(scale > 0.0 && scale <= 100.0) {
        return Err(CliError::user(format!(
            "--scale {scale} must be a positive factor of at most 100, e.g. 0.25"
        )));
    }
    let (min_ios, max_ios, calibration_ios) = (
        scaled(args.min_ios, scale),
        scaled(args.max_ios, scale),
        scaled(args.calibration_ios, scale),
    );
    if args.scale.is_some() && calibration_ios < 64 {
        return Err(CliError::user(format!(
            "--scale {scale} leaves {calibration_ios} calibration IOs; at least 64 are needed to see a start-up phase and a period: raise --scale to {:.3} or --calibration-ios",
            64.0 / args.calibration_ios as f64
        )));
    }
    let state =
        StateMethod::parse(&args.state).map_err(|e| CliError::user(format!("--state: {e}")))?;
    let io = parse_size(&args.io_size).map_err(|e| CliError::user(format!("--io-size: {e}")))?;
    if io == 0 || io % 512 != 0 {
        return Err(CliError::user(format!(
            "--io-size {} is not a positive multiple of 512 B; use e.g. 32KiB",
            args.io_size
        )));
    }
    if args.min_ios == 0 || args.min_ios > args.max_ios {
        return Err(CliError::user(format!(
            "--min-ios ({}) must be between 1 and --max-ios ({})",
            args.min_ios, args.max_ios
        )));
    }
    if calibration_ios < 64 {
        return Err(CliError::user(
            "--calibration-ios must be at least 64 to see a start-up phase and a period",
        ));
    }
    if !(args.bound > 0.0 && args.bound < 1.0) {
        return Err(CliError::user(format!(
            "--bound {} must be between 0 and 1, e.g. 0.05 for +/-5 %",
            args.bound
        )));
    }
    let benchmarks = match &args.only {
        None => BENCHMARKS.iter().map(|s| s.to_string()).collect(),
        Some(list) => {
            let v: Vec<String> = list.split(',').map(|s| s.trim().to_string()).collect();
            for b in &v {
                if !BENCHMARKS.contains(&b.as_str()) {
                    return Err(CliError::user(format!(
                        "--only: unknown micro-benchmark '{b}'; use {}",
                        BENCHMARKS.join(", ")
                    )));
                }
            }
            v
        }
    };
    let random_target_bytes = match &args.random_target {
        Some(s) => {
            Some(parse_size(s).map_err(|e| CliError::user(format!("--random-target: {e}")))?)
        }
        None => None,
    };
    Ok(UflipConfig {
        state,
        io_size_bytes: io,
        min_ios,
        max_ios,
        calibration_ios,
        bound: args.bound,
        random_target_bytes,
        seed: args.common.seed.unwrap_or(DEFAULT_SEED),
        min_pause_ns: parse_duration_ns(&args.min_pause)
            .map_err(|e| CliError::user(format!("--min-pause: {e}")))?,
        benchmarks,
        quick: args.common.quick,
    })
}

/// A rough duration: every IO of the budget at `per_io_ns`, plus pauses;
/// a run with a runtime takes at most that (a time-based run exactly that).
fn estimate_ns(plan: &Plan, device_bytes: u64, per_io_ns: u64, pause_ns: u64) -> u64 {
    let mut total = plan.run_count() as u64 * pause_ns;
    for step in &plan.steps {
        if step.runs().is_empty() {
            total += step.io_budget(device_bytes) * per_io_ns;
        }
        for r in step.runs() {
            let pauses = match r.spec.timing {
                flashlab_pattern::Timing::Consecutive => 0,
                flashlab_pattern::Timing::Pause { pause_ns } => pause_ns * r.spec.io_count,
                flashlab_pattern::Timing::Burst { pause_ns, burst } => {
                    pause_ns * (r.spec.io_count / burst)
                }
            };
            let counted = r.spec.total_ios() * per_io_ns + pauses;
            total += match (r.spec.runtime_ns, r.spec.time_based) {
                (Some(runtime_ns), true) => runtime_ns,
                (Some(runtime_ns), false) => counted.min(runtime_ns),
                (None, _) => counted,
            };
        }
    }
    total
}

fn uflip(args: UflipArgs) -> Invocation {
    let config = uflip_config(&args);
    let typed = config.as_ref().ok().cloned();
    let plan_hint = if matches!(&typed, Some(c) if c.random_target_bytes.is_some()) {
        "; raise --random-target"
    } else {
        ""
    };
    Invocation {
        name: "uflip",
        common: args.common,
        config: config.map(|c| to_json(&c)),
        check_device: Box::new(move |info| match &typed {
            Some(cfg) => uflip_check_device(cfg, info),
            None => Ok(()),
        }),
        plan_hint,
    }
}

/// The device against `--io-size` and `--random-target`.
fn uflip_check_device(cfg: &UflipConfig, info: &DeviceInfo) -> CliResult<()> {
    let size = info.size_bytes;
    if size < 64 * cfg.io_size_bytes * 16 {
        return Err(CliError::user(format!(
            "{} ({}) is too small for uFLIP; use a device of at least {}",
            info.name,
            format_size(size),
            format_size(64 * cfg.io_size_bytes * 16)
        )));
    }
    if let Some(t) = cfg.random_target_bytes {
        if t < cfg.io_size_bytes || t > size {
            return Err(CliError::user(format!(
                "--random-target {} must be at least the IOSize ({}) and at most the device's size ({}); e.g. --random-target {}",
                format_size(t),
                format_size(cfg.io_size_bytes),
                format_size(size),
                format_size(size)
            )));
        }
    }
    Ok(())
}

use flashlab_suite::suites::QUICK_SCALE;

/// chen09, wang11 and hudlet11.
fn paper(name: &'static str, args: PaperArgs) -> Invocation {
    Invocation {
        name,
        config: paper_config(&args).map(|c| to_json(&c)),
        common: args.common,
        check_device: Box::new(move |info| {
            if info.size_bytes < 64 * 1024 * 1024 {
                return Err(CliError::user(format!(
                    "{} ({}) is too small for {name}; use a device of at least 64MiB",
                    info.name,
                    format_size(info.size_bytes)
                )));
            }
            Ok(())
        }),
        plan_hint: "",
    }
}

fn paper_config(args: &PaperArgs) -> CliResult<PaperConfig> {
    // --quick is the papers' suites at a tenth of their IOs.
    let scale = args
        .scale
        .unwrap_or(if args.common.quick { QUICK_SCALE } else { 1.0 });
    if !(scale > 0.0 && scale <= 100.0) {
        return Err(CliError::user(format!(
            "--scale {scale} must be a positive factor, e.g. 0.25"
        )));
    }
    let test_file_bytes = parse_size(&args.test_file_size)
        .map_err(|e| CliError::user(format!("--test-file-size: {e}")))?;
    Ok(PaperConfig {
        scale,
        refill: !args.no_refill,
        seed: args.common.seed.unwrap_or(DEFAULT_SEED),
        test_file_bytes,
    })
}

fn start(
    common: &SuiteCommon,
    probed: target::Probed,
    plan: Plan,
    header: String,
    cfg_json: serde_json::Value,
    min_pause_ns: u64,
    min_ios: u64,
) -> CliResult<()> {
    let size = probed.info.size_bytes;
    let simulated = probed.info.clock == ClockKind::Simulated;
    // --quiet prints the result (the summary) and nothing else; a dry
    // run's result is the plan.
    if common.dry_run || !(common.json || common.quiet) {
        println!("{header}");
        if common.dry_run || common.verbose {
            print!("{}", plan.describe(size));
        } else {
            // Result first: the plan in one line; every run with --dry-run or --verbose.
            let budget: u64 = plan.steps.iter().map(|s| s.io_budget(size)).sum();
            let amount = match (common.runtime.as_ref(), common.time_based) {
                (Some(r), true) => format!("each measured run {r} of device time (--time_based)"),
                (Some(r), false) => format!("at most {budget} IOs, each run at most {r}"),
                (None, _) => format!("at most {budget} IOs"),
            };
            println!(
                "{} runs in {} steps, {amount} (--verbose or --dry-run lists every run)",
                plan.run_count(),
                plan.steps.len()
            );
        }
        if simulated {
            let sim = estimate_ns(&plan, size, 300_000, min_pause_ns);
            println!("estimated duration: seconds to minutes of wall-clock time ({} of simulated time at 0.3 ms/IO)", format_duration_ns(sim));
        } else if common.dry_run {
            return dry_run_estimate(common, probed, &plan, min_pause_ns, min_ios);
        } else {
            println!("estimated duration: the ETA on the progress bar, from the runs as they finish (--dry-run probes the device for a range first)");
        }
    }
    if common.dry_run {
        return Ok(());
    }
    let name = plan.suite.clone();
    let (max_parallel, max_io) = open_sizes(&plan);
    let (device, engine) = probed.open(&common.target, true, max_parallel, max_io, common.quiet)?;
    let mut results = target::create_results(common.results.as_deref(), &name, &*device, &engine)?;
    let suite_impl = registry_suite(&name)?;
    let journal = session::begin(&mut results, suite_impl, cfg_json, plan)
        .map_err(|e| CliError::failure(format!("cannot start the suite: {e}")))?;
    if !(common.json || common.quiet) {
        println!(
            "results: {} (resume with --resume {} if interrupted)",
            results.root().display(),
            results.root().display()
        );
    }
    execute(device, results, journal, common)
}

/// What a device must be opened for to run `plan`: the most outstanding
/// IOs and the largest IO of its runs, at least what state enforcement
/// issues (32 outstanding writes of up to 256 KiB).
fn open_sizes(plan: &Plan) -> (usize, u64) {
    let runs = || plan.steps.iter().flat_map(|s| s.runs());
    let max_parallel = runs().map(|r| r.spec.max_outstanding()).max().unwrap_or(1);
    let max_io = runs().map(|r| r.spec.max_io_bytes()).max().unwrap_or(4096);
    (max_parallel.max(32), max_io.max(256 * 1024))
}

/// A real device's dry run: a short probe of the plan's IO classes
/// ([`crate::eta::probe`]), then the plan's duration as a range. Reads
/// only, unless the device passes the write-safety check and the suite
/// overwrites all of it first anyway (a state enforcement as its first
/// step): then the probe writes too, since writes are what a suite's time
/// depends on most.
///
/// Why the upper end bounds the true duration. Before, it fell short of
/// it (0.8x last session; here, on a 1 GiB O_DIRECT file with uflip
/// --quick --only granularity,pause,bursts --scale 0.25 --min-pause 200ms,
/// 20.5 s to 3m31s against 221.6 s, 0.95x). The suite's time was its runs' own
/// (192.1 s), the pauses between runs (23.6 s), a 150 ms settle before
/// every run's first IO (5.9 s) and state enforcement (1.7 s); saving the
/// results took no measurable time. The estimate missed two of these:
/// - the settle (`Device::begin_run`), now known time per run
///   (`EtaContext::run_settle_ns`, from the device's `settle_ms`);
/// - the wake-up after a pause: an IO after an idle gap cost 10-50x a
///   back-to-back one (32 KiB sequential reads 70 us back to back, 800 us
///   after 25.6 ms pauses; random writes 95 us and 5.3 ms), 25 s of the
///   pause runs. The probe now runs a few IOs after the plan's longest
///   pause of each kind it pauses between; a shorter pause wakes from a
///   shallower idle state, so it costs at most that (`CostModel::wake`).
///
/// The upper end then takes every adaptive run to its cap, every unseen
/// class at its bound, the pause between runs at twice the probe step's
/// reads and writes, and each shorter pause's wake-up at the longest's. It
/// is an upper bound as long as the device's costs during the suite stay
/// those the probe measured: a device whose writes slow down as the suite
/// fills it (no physical bound says by how much) can still exceed it.
fn dry_run_estimate(
    common: &SuiteCommon,
    probed: target::Probed,
    plan: &Plan,
    min_pause_ns: u64,
    min_ios: u64,
) -> CliResult<()> {
    use flashlab_suite::plan::Step;
    use flashlab_suite::state::StateMethod;
    let size = probed.info.size_bytes;
    if let target::Target::Path(path) = &probed.target {
        if !path.exists() {
            println!(
                "estimated duration: not probed, {} does not exist yet (the suite creates it); the progress bar shows an ETA once the first runs are measured",
                path.display()
            );
            return Ok(());
        }
    }
    let overwritten_first = matches!(
        plan.steps.first(),
        Some(Step::EnforceState { method, .. }) if *method != StateMethod::None
    );
    let (max_parallel, max_io) = open_sizes(plan);
    let seed = common.seed.unwrap_or(DEFAULT_SEED);
    // The safety check decides whether the probe may write; a refusal is
    // not an error here (the probe reads instead), so the device is probed
    // again for a read-only open.
    let (mut device, writes) = if overwritten_first {
        match probed.open(&common.target, true, max_parallel, max_io, true) {
            Ok((d, _)) => (d, true),
            Err(_) => {
                let again = target::probe(&common.target, seed)?;
                (
                    again
                        .open(&common.target, false, max_parallel, max_io, true)?
                        .0,
                    false,
                )
            }
        }
    } else {
        (
            probed
                .open(&common.target, false, max_parallel, max_io, true)?
                .0,
            false,
        )
    };
    let result = crate::eta::probe(&mut *device, &plan.steps, writes, seed);
    let ctx = flashlab_suite::eta::EtaContext {
        device_bytes: size,
        min_ios,
        state_queue_depth: flashlab_workload::SUITE_STATE_QUEUE_DEPTH as u64,
        idle_is_wall_time: true,
        run_settle_ns: flashlab_suite::eta::EtaContext::settle_ns_of(&device.info().identity),
    };
    let mut eta = flashlab_suite::eta::SuiteEta::new(plan.steps.clone(), ctx, min_pause_ns);
    eta.model = result.model;
    let what = if result.wrote {
        "reads and writes; the suite overwrites the device first anyway"
    } else if overwritten_first {
        "reads only: the write-safety check refuses writes"
    } else {
        "reads only: the suite does not overwrite the device first"
    };
    match eta.whole_plan() {
        Some(span) => println!(
            "estimated duration: {} to {} (a {:.1} s probe of {} IO classes, {} IOs, {what}; the range is the IOs adaptive runs may take, from --min-ios to their cap, the IO classes the probe did not measure, and the wake-up after pauses shorter than the longest, which was probed)",
            crate::eta::format_eta(std::time::Duration::from_nanos(span.lo as u64)),
            crate::eta::format_eta(std::time::Duration::from_nanos(span.hi as u64)),
            result.wall.as_secs_f64(),
            result.classes,
            result.ios,
        ),
        None => println!(
            "estimated duration: unknown, the probe could not measure {} ({what}); the progress bar shows an ETA once the first runs are measured",
            device.info().name
        ),
    }
    Ok(())
}

fn resume(dir: &std::path::Path, common: &SuiteCommon) -> CliResult<()> {
    let results = crate::export::open_results(dir)?;
    let journal = Journal::load(&results).map_err(|e| {
        if e.kind() == std::io::ErrorKind::NotFound {
            CliError::user(format!(
                "{} is not a suite's results directory (no suite.json); --resume takes a directory written by `flashlab suite NAME`",
                dir.display()
            ))
        } else {
            CliError::user(format!(
                "{}: the suite journal cannot be read ({e}); start the suite again with `flashlab suite NAME`",
                dir.display()
            ))
        }
    })?;
    if journal.finished {
        if !(common.json || common.quiet) {
            println!("{} is already complete.", dir.display());
        }
        return summarise(&results, &journal, common);
    }
    // The probe is seeded as the first run was: by the seed of the suite's
    // typed configuration.
    let seed = registry_suite(&journal.suite)?
        .seed(&journal.config)
        .map_err(|e| {
            CliError::user(format!(
                "{}: {e}; start the suite again with `flashlab suite NAME`",
                dir.display()
            ))
        })?;
    let device_name = results.manifest().device.name.clone();
    let target_args = TargetArgs {
        device: device_name.clone(),
        size: None,
        engine: EngineArg::Auto,
        buffered: common.target.buffered,
        allow_write_to: common.target.allow_write_to.clone(),
    };
    let probed = target::probe(&target_args, seed)?;
    if probed.info.size_bytes != results.manifest().device.size_bytes {
        return Err(CliError::user(format!(
            "{device_name} is now {} B, the suite started on {} B; resume on the same device",
            probed.info.size_bytes,
            results.manifest().device.size_bytes
        )));
    }
    let (max_parallel, max_io) = open_sizes(&journal.plan);
    let (device, _) = probed.open(&target_args, true, max_parallel, max_io, common.quiet)?;
    if !(common.json || common.quiet) {
        println!(
            "resuming {} at step {} of {}",
            dir.display(),
            journal.completed_steps + 1,
            journal.plan.steps.len()
        );
    }
    execute(device, results, journal, common)
}

fn execute(
    mut device: Box<dyn Device>,
    mut results: ResultsDir,
    journal: Journal,
    args: &SuiteCommon,
) -> CliResult<()> {
    signals::install();
    // Progress in runs, with an ETA (crate::eta): pauses known in advance,
    // per-IO costs learned per IO class; the bar's position counts the
    // runs finished.
    let info = device.info().clone();
    let simulated = info.clock == ClockKind::Simulated;
    let ctx = flashlab_suite::eta::EtaContext {
        device_bytes: info.size_bytes,
        min_ios: journal.min_ios,
        state_queue_depth: flashlab_workload::SUITE_STATE_QUEUE_DEPTH as u64,
        idle_is_wall_time: !simulated,
        run_settle_ns: flashlab_suite::eta::EtaContext::settle_ns_of(&info.identity),
    };
    let mut estimator =
        crate::eta::SuiteEta::new(journal.plan.steps.clone(), ctx, journal.min_pause_ns);
    // A resumed suite on a real device skips its completed steps: their
    // runs' records say what each class cost, so the ETA starts from them.
    // (A simulated device re-executes them, and learns as they run.)
    if journal.completed_steps > 0 && !simulated {
        let history = flashlab_suite::eta::history_of(&results, ctx.run_settle_ns);
        estimator
            .inner
            .resume_from(journal.completed_steps, &history);
    }
    let eta = std::sync::Mutex::new(estimator);
    // The step's text after the ETA, kept for the ticker's refreshes.
    let step_text = std::sync::Mutex::new(String::new());
    let bar = (!args.quiet && std::io::stderr().is_terminal()).then(|| {
        let bar = indicatif::ProgressBar::new(1);
        bar.set_style(
            indicatif::ProgressStyle::with_template("{spinner} [{bar:30}] {msg}")
                .expect("valid template")
                .progress_chars("=> "),
        );
        bar
    });
    let refresh = |b: &indicatif::ProgressBar| {
        let now = std::time::Instant::now();
        let eta = eta.lock().unwrap_or_else(|e| e.into_inner());
        let (done, total) = eta.inner.runs();
        b.set_length(total.max(1));
        b.set_position(done);
        let text = step_text.lock().unwrap_or_else(|e| e.into_inner());
        b.set_message(format!("{}, {}", eta.label(now), *text));
    };
    let mut observer = SuiteTerminal(|p: &Progress| {
        eta.lock()
            .unwrap_or_else(|e| e.into_inner())
            .report(p, std::time::Instant::now());
        *step_text.lock().unwrap_or_else(|e| e.into_inner()) = format!(
            "step {}/{} {}{}",
            p.step,
            p.steps,
            p.what,
            if p.replaying {
                " (rebuilding simulated state)"
            } else {
                ""
            }
        );
        if let Some(b) = &bar {
            refresh(b);
        }
    });
    let ticking = std::sync::atomic::AtomicBool::new(true);
    let ran = std::thread::scope(|scope| {
        // The ETA counts down between reports too (a pause run takes
        // minutes): the bar is refreshed twice a second.
        if let Some(b) = &bar {
            let (ticking, refresh) = (&ticking, &refresh);
            scope.spawn(move || {
                while ticking.load(Ordering::Relaxed) {
                    std::thread::sleep(std::time::Duration::from_millis(500));
                    if ticking.load(Ordering::Relaxed) {
                        refresh(b);
                    }
                }
            });
        }
        // The journal holds the suite's seed: the options' is not used.
        let ran = flashlab_workload::run_observed(
            flashlab_workload::Prepared::Journal(journal),
            &mut *device,
            &mut results,
            &crate::run::run_options(DEFAULT_SEED),
            &mut observer,
        );
        ticking.store(false, Ordering::Relaxed);
        ran
    });
    if let Some(b) = bar {
        b.finish_and_clear();
    }
    print_not_converged(&results);
    let failed = match ran {
        Ok(outcome) => {
            let (Some(summary), Some(journal)) = (outcome.suite, outcome.journal) else {
                unreachable!("a suite's outcome has its summary and journal")
            };
            print_summary(&results, &journal.suite, &summary, args);
            return Ok(());
        }
        Err(failed) => *failed,
    };
    if matches!(
        failed.error,
        WorkloadError::Suite { .. } | WorkloadError::Stopped(_)
    ) {
        // A complete suite compacts with its summary; this one stops here.
        if let Err(e) = results.compact() {
            eprintln!(
                "warning: cannot compact the manifest (its journal keeps every run's status): {e}"
            );
        }
    }
    let root = results.root().display();
    Err(match (failed.error, failed.outcome.journal) {
        (WorkloadError::Suite { error, .. }, _) => CliError::failure(format!(
            "suite failed: {error}; resume with --resume {root}"
        )),
        (WorkloadError::Stopped(_), Some(journal)) => CliError {
            message: format!(
                "interrupted at step {} of {}; continue with: flashlab suite {} --resume {root}",
                journal.completed_steps + 1,
                journal.plan.steps.len(),
                journal.suite,
            ),
            exit_code: 130,
        },
        (WorkloadError::Io { source, .. }, _) => CliError::failure(source.to_string()),
        (e, _) => CliError::failure(e.render(flashlab_workload::FrontEnd::Cli)),
    })
}

/// The terminal as a suite runs: each report moves the progress bar and its ETA.
struct SuiteTerminal<F: FnMut(&Progress)>(F);

impl<F: FnMut(&Progress)> flashlab_workload::Observer for SuiteTerminal<F> {
    fn suite_progress(&mut self, progress: &Progress) {
        (self.0)(progress)
    }
}

/// One line for the runs whose mean did not reach the bound (each run's
/// `run.json` has the figures; `flashlab show` marks them).
fn print_not_converged(results: &ResultsDir) {
    let summary = results.summary();
    let names: Vec<&str> = summary
        .runs
        .iter()
        .filter(|r| {
            r.warnings
                .iter()
                .any(|w| w.starts_with(flashlab_results::warnings::NOT_CONVERGED))
        })
        .map(|r| r.name.as_str())
        .collect();
    if names.is_empty() {
        return;
    }
    let shown: Vec<&str> = names.iter().take(5).copied().collect();
    eprintln!(
        "warning: {} of {} runs did not converge within the bound before --max-ios ({}{}); their warnings are in run.json, and flashlab show marks them",
        names.len(),
        summary.runs.len(),
        shown.join(", "),
        if names.len() > shown.len() { ", ..." } else { "" }
    );
}

/// The summary of a suite completed before (`--resume` of a complete
/// suite), saved again as JSON and Markdown and printed.
fn summarise(results: &ResultsDir, journal: &Journal, options: &SuiteOptions) -> CliResult<()> {
    registry_suite(&journal.suite)?;
    let summary = session::summarise(results, journal)
        .map_err(|e| CliError::failure(format!("cannot save the summary: {e}")))?;
    print_summary(results, &journal.suite, &summary, options);
    Ok(())
}

/// A suite's summary, printed (as JSON with --json), and where it is saved.
fn print_summary(results: &ResultsDir, name: &str, summary: &SuiteSummary, options: &SuiteOptions) {
    let json_path = results.root().join(SuiteSummary::file_name(name));
    let md_path = results.root().join(format!("{name}-summary.md"));
    if options.json {
        println!(
            "{}",
            serde_json::to_string_pretty(summary).expect("serializes")
        );
    } else {
        // (A reduced run's note is among the summary's notes, printed last.)
        print!("{}", summary.markdown());
        if !options.quiet {
            println!("\nsaved: {} and {}", md_path.display(), json_path.display());
        }
    }
}

fn registry_suite(name: &str) -> CliResult<&'static dyn DynSuite> {
    suites::find(name).ok_or_else(|| {
        CliError::user(format!(
            "unknown suite '{name}'; known: {}",
            suites::registry()
                .iter()
                .map(|s| s.name())
                .collect::<Vec<_>>()
                .join(", ")
        ))
    })
}
