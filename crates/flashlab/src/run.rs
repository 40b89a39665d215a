//! `flashlab run`: resolve the patterns, check them against the target, open
//! it (after the safety check), run every pattern, save and print results.

use std::fs;
use std::io::IsTerminal;
use std::path::PathBuf;

use flashlab_device::{Device, DeviceInfo, DeviceKind};
use flashlab_exec::{execute, Hooks, Outcome};
use flashlab_pattern::units::{format_size, parse_size};
use flashlab_pattern::{PatternFile, PatternSpec, StreamGen, Touched};
use flashlab_realdev::{Engine, OpenOptions};
use flashlab_results::{HostInfo, Manifest, ResultsDir, RunStatus, RunSummary, ToolInfo};

use crate::cli::{EngineArg, RunArgs};
use crate::error::{CliError, CliResult};
use crate::{output, signals};

/// The most outstanding IOs a simulated device is opened for; patterns are
/// validated against the same bound.
const SIM_MAX_OUTSTANDING: usize = 4096;

enum Target {
    Sim(String),
    Path(PathBuf),
}

fn parse_target(device: &str) -> Target {
    match device.strip_prefix("sim:") {
        Some(spec) => Target::Sim(spec.to_string()),
        None => Target::Path(PathBuf::from(device)),
    }
}

/// The runs a command line asks for, before they are resolved against a device.
fn pattern_args(args: &RunArgs) -> CliResult<Vec<flashlab_pattern::PatternArgs>> {
    let flags = args.pattern.to_args();
    match &args.pattern_file {
        None => Ok(vec![flags]),
        Some(path) => {
            if !flags.is_empty() {
                return Err(CliError::user(
                    "--pattern-file and pattern flags (--pattern, --io-size, ...) were both given; put the parameters in the file (its [defaults] table applies to every run) or drop --pattern-file",
                ));
            }
            let text = fs::read_to_string(path).map_err(|e| {
                CliError::user(format!("cannot read pattern file {}: {e}; check the path given to --pattern-file", path.display()))
            })?;
            let file = PatternFile::parse(&text, &path.display().to_string()).map_err(CliError::user)?;
            Ok(file.runs())
        }
    }
}

fn resolve_all(list: &[flashlab_pattern::PatternArgs], info: &DeviceInfo, lbs: u64) -> CliResult<Vec<PatternSpec>> {
    let mut specs: Vec<PatternSpec> = Vec::new();
    for (i, a) in list.iter().enumerate() {
        let where_ = if list.len() > 1 { format!("run {}: ", i + 1) } else { String::new() };
        let spec = a.resolve(info.size_bytes).map_err(|e| CliError::user(format!("{where_}{e}")))?;
        spec.check_against_device(&info.name, info.size_bytes, lbs)
            .map_err(|e| CliError::user(format!("{where_}{e}")))?;
        if spec.max_outstanding() > SIM_MAX_OUTSTANDING {
            return Err(CliError::user(format!("{where_}too many outstanding IOs")));
        }
        if specs.iter().any(|s| s.name == spec.name) {
            return Err(CliError::user(format!(
                "{where_}two runs are named '{}'; give each run its own name",
                spec.name
            )));
        }
        specs.push(spec);
    }
    Ok(specs)
}

pub fn run(args: RunArgs) -> CliResult<()> {
    let list = pattern_args(&args)?;
    let target = parse_target(&args.device);
    let create_size = match &args.size {
        Some(s) => Some(parse_size(s).map_err(|e| CliError::user(format!("--size: {e}")))?),
        None => None,
    };

    // Learn the target's size and alignment without opening it for IO.
    let (info, lbs, mut sim_device) = match &target {
        Target::Sim(spec) => {
            if args.size.is_some() {
                return Err(CliError::user(format!(
                    "--size does not apply to a simulated device; set its capacity in the device name, e.g. --device sim:{},capacity=4GiB",
                    spec.split(',').next().unwrap_or("ssd-m")
                )));
            }
            if args.buffered || args.engine != EngineArg::Auto {
                return Err(CliError::user(
                    "--buffered and --engine apply to real devices only; drop them for a sim: device",
                ));
            }
            let seed = list.first().and_then(|a| a.seed).unwrap_or(flashlab_pattern::DEFAULT_SEED);
            let dev = crate::simdev::open_device(spec, seed, SIM_MAX_OUTSTANDING).map_err(CliError::user)?;
            let info = dev.info().clone();
            let lbs = info.logical_block_bytes as u64;
            (info, lbs, Some(dev))
        }
        Target::Path(path) => {
            let info = match flashlab_realdev::probe(path) {
                Ok(info) => {
                    if let Some(size) = create_size {
                        if info.kind == DeviceKind::BlockDevice {
                            return Err(CliError::user(format!(
                                "--size creates files, but {} is a block device; drop --size",
                                path.display()
                            )));
                        }
                        if info.size_bytes != size {
                            return Err(CliError::user(format!(
                                "{} already exists with {} ({} B), not {}; drop --size to use it as it is",
                                path.display(),
                                format_size(info.size_bytes),
                                info.size_bytes,
                                format_size(size)
                            )));
                        }
                    }
                    info
                }
                Err(e) if !path.exists() && create_size.is_some() => {
                    let _ = e;
                    DeviceInfo {
                        name: path.display().to_string(),
                        kind: DeviceKind::File,
                        clock: flashlab_device::ClockKind::Wall,
                        size_bytes: create_size.unwrap_or(0),
                        logical_block_bytes: 512,
                        identity: Default::default(),
                    }
                }
                Err(e) => return Err(CliError { message: e.to_string(), exit_code: e.kind().exit_code() as u8 }),
            };
            let lbs = if args.buffered { 512 } else { info.logical_block_bytes as u64 };
            (info, lbs, None)
        }
    };

    let specs = resolve_all(&list, &info, lbs)?;
    let writes = specs.iter().any(PatternSpec::writes);

    if args.dry_run {
        return dry_run(&args, &target, &info, &specs, writes, create_size);
    }

    let max_outstanding = specs.iter().map(PatternSpec::max_outstanding).max().unwrap_or(1);
    let max_io = specs.iter().map(PatternSpec::max_io_bytes).max().unwrap_or(512);
    let (mut device, engine): (Box<dyn Device>, String) = match &target {
        Target::Sim(_) => (sim_device.take().expect("opened above"), "simulator".to_string()),
        Target::Path(path) => {
            let engine = match args.engine {
                EngineArg::Auto => Engine::Auto,
                EngineArg::Sync => Engine::Sync,
                EngineArg::IoUring => Engine::IoUring,
            };
            if engine == Engine::Sync && max_outstanding > 1 {
                return Err(CliError::user(format!(
                    "--engine sync issues one IO at a time, but the pattern keeps up to {max_outstanding} outstanding; use --engine io_uring or auto"
                )));
            }
            if create_size.is_some() && !path.exists() && !args.quiet {
                eprintln!("creating {} ({}) and filling it with data...", path.display(), format_size(create_size.unwrap_or(0)));
            }
            let opened = flashlab_realdev::open(&OpenOptions {
                path: path.clone(),
                write: writes,
                engine,
                max_outstanding,
                max_io_bytes: max_io as u32,
                direct: !args.buffered,
                allow_write_to: args.allow_write_to.clone(),
                create_size_bytes: create_size,
            })
            .map_err(|e| CliError { message: e.to_string(), exit_code: e.kind().exit_code() as u8 })?;
            for w in &opened.warnings {
                eprintln!("warning: {w}");
            }
            let engine = opened
                .device
                .info()
                .identity
                .get("engine")
                .cloned()
                .unwrap_or_else(|| if max_outstanding == 1 { "sync".into() } else { "io_uring".into() });
            (opened.device, engine)
        }
    };

    let results_root = match &args.results {
        Some(p) => p.clone(),
        None => default_results_dir(&specs),
    };
    let manifest = Manifest {
        schema_version: flashlab_results::SCHEMA_VERSION,
        tool: tool_info(),
        created_unix_s: std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_secs())
            .unwrap_or(0),
        command_line: std::env::args().collect(),
        host: host_info(),
        device: device.info().clone(),
        engine: engine.clone(),
        runs: Vec::new(),
    };
    let mut results = ResultsDir::create(&results_root, manifest).map_err(|e| {
        CliError::user(format!("cannot create results directory {}: {e}", results_root.display()))
    })?;
    let planned: Vec<usize> = specs
        .iter()
        .map(|s| results.plan_run(s))
        .collect::<Result<_, _>>()
        .map_err(|e| CliError::failure(format!("cannot write the manifest: {e}")))?;

    let human = !args.json;
    if human {
        println!("device:  {}", output::device_line(device.info(), &engine));
        println!("results: {}", results_root.display());
    }
    signals::install();
    let show_progress = !args.quiet && std::io::stderr().is_terminal();
    let mut rows = Vec::new();
    let mut failure: Option<CliError> = None;
    for (spec, &idx) in specs.iter().zip(&planned) {
        if human {
            println!("run {}/{}: {} — {}, {} IOs/stream, seed {}", idx + 1, specs.len(), spec.name, spec.describe(), spec.io_count, spec.seed);
        }
        let (status, error) = run_one(&mut *device, spec, &mut results, idx, show_progress)?;
        let summary = results
            .finish_run(idx, status, error.clone(), device.stats_json())
            .map_err(|e| CliError::failure(format!("cannot save results of run {}: {e}", spec.name)))?;
        device.reset_stats();
        if human {
            rows.extend(output::rows(&summary));
            println!("{}", output::table(&output::rows(&summary)));
            print_device_stats(&summary);
        }
        match status {
            RunStatus::Complete => {}
            RunStatus::Interrupted => {
                failure = Some(CliError { message: format!("interrupted; the results so far are in {}", results_root.display()), exit_code: 130 });
                break;
            }
            _ => {
                failure = Some(CliError::failure(format!(
                    "run {} failed: {}; the results so far are in {}",
                    spec.name,
                    error.unwrap_or_default(),
                    results_root.display()
                )));
                break;
            }
        }
    }
    if let Err(e) = device.flush() {
        eprintln!("warning: flushing the device failed: {e}");
    }
    if human && specs.len() > 1 {
        println!("\nall runs:\n{}", output::table(&rows));
    }
    if let Some(csv) = &args.csv {
        crate::export::write_csv(&results, None, Some(csv))?;
    }
    if args.json {
        let text = serde_json::to_string_pretty(&results.summary()).expect("summary serializes");
        println!("{text}");
    }
    match failure {
        Some(f) => Err(f),
        None => Ok(()),
    }
}

fn run_one(
    device: &mut dyn Device,
    spec: &PatternSpec,
    results: &mut ResultsDir,
    idx: usize,
    show_progress: bool,
) -> CliResult<(RunStatus, Option<String>)> {
    let mut writer = results
        .start_run(idx)
        .map_err(|e| CliError::failure(format!("cannot write records of run {}: {e}", spec.name)))?;
    let bar = show_progress.then(|| {
        let bar = indicatif::ProgressBar::new(spec.total_ios());
        bar.set_style(
            indicatif::ProgressStyle::with_template("{spinner} {msg} [{bar:30}] {pos}/{len} IOs, ETA {eta}")
                .expect("valid template")
                .progress_chars("=> "),
        );
        bar.set_message(spec.name.clone());
        bar
    });
    let mut progress = |done: u64, _total: u64| {
        if let Some(b) = &bar {
            b.set_position(done);
        }
    };
    let result = execute(
        device,
        spec,
        &mut writer,
        Hooks { stop: Some(&signals::STOP), progress: Some(&mut progress) },
    );
    if let Some(b) = bar {
        b.finish_and_clear();
    }
    let closed = writer.finish();
    let (status, error) = match result {
        Ok(Outcome::Complete) => (RunStatus::Complete, None),
        Ok(Outcome::Interrupted) => (RunStatus::Interrupted, None),
        Err(e) => (RunStatus::Failed, Some(e.to_string())),
    };
    if let Err(e) = closed {
        return Err(CliError::failure(format!("cannot write records of run {}: {e}", spec.name)));
    }
    Ok((status, error))
}

fn print_device_stats(summary: &RunSummary) {
    let Some(stats) = &summary.device_stats else { return };
    let waf = stats.get("write_amplification").and_then(|v| v.as_f64());
    if let Some(waf) = waf {
        println!("  simulator: write amplification {waf:.3} (full accounting in run.json and --json)");
    }
}

fn dry_run(
    args: &RunArgs,
    target: &Target,
    info: &DeviceInfo,
    specs: &[PatternSpec],
    writes: bool,
    create_size: Option<u64>,
) -> CliResult<()> {
    println!("dry run: no IO is done and nothing is written.");
    println!(
        "device: {} ({}, logical block {} B)",
        info.name,
        format_size(info.size_bytes),
        info.logical_block_bytes
    );
    if let Target::Path(path) = target {
        if !path.exists() {
            println!("note: {} does not exist; a real run creates it with {} of data", path.display(), format_size(create_size.unwrap_or(0)));
        } else if writes && info.kind == DeviceKind::BlockDevice {
            match flashlab_realdev::check_write_safety(path, args.allow_write_to.as_deref()) {
                Ok(warnings) if warnings.is_empty() => println!("safety: a real run may write to {}", path.display()),
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
        println!(
            "  IOCount {} per stream ({} in all), IOIgnore {}, seed {}",
            spec.io_count,
            spec.total_ios(),
            spec.io_ignore,
            spec.seed
        );
        println!("  first IOs:");
        println!("  {:>8} {:>6} {:>14} {:>8}  mode", "index", "stream", "offset_bytes", "size");
        let first = (0..spec.parallel_degree)
            .flat_map(|p| StreamGen::new(spec, p).take(args.show_ios.div_ceil(spec.parallel_degree as usize).max(1)))
            .take(args.show_ios);
        for io in first {
            println!("  {:>8} {:>6} {:>14} {:>8}  {}", io.index, io.stream, io.offset_bytes, format_size(io.size_bytes), io.mode);
        }
        let touched = Touched::of(spec);
        println!("  would write: {}", output::ranges(&touched.written, 6));
        println!("  would read:  {}", output::ranges(&touched.read, 6));
    }
    Ok(())
}

fn default_results_dir(specs: &[PatternSpec]) -> PathBuf {
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or(0);
    let (y, mo, d, h, mi, s) = civil_from_unix(now);
    let name = if specs.len() == 1 { specs[0].name.clone() } else { format!("{}-runs", specs.len()) };
    let base = format!("results/{y:04}{mo:02}{d:02}-{h:02}{mi:02}{s:02}-{name}");
    let mut path = PathBuf::from(&base);
    let mut n = 2;
    while path.exists() {
        path = PathBuf::from(format!("{base}-{n}"));
        n += 1;
    }
    path
}

/// UTC date and time from Unix seconds (Howard Hinnant's civil-from-days).
fn civil_from_unix(secs: u64) -> (i64, u32, u32, u32, u32, u32) {
    let days = (secs / 86_400) as i64;
    let rem = secs % 86_400;
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let m = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    let y = yoe + era * 400 + i64::from(m <= 2);
    (y, m, d, (rem / 3600) as u32, (rem % 3600 / 60) as u32, (rem % 60) as u32)
}

pub fn tool_info() -> ToolInfo {
    ToolInfo {
        name: "flashlab".into(),
        version: env!("CARGO_PKG_VERSION").into(),
        git_commit: env!("FLASHLAB_GIT_COMMIT").into(),
    }
}

fn host_info() -> HostInfo {
    let read = |p: &str| fs::read_to_string(p).map(|s| s.trim().to_string()).unwrap_or_else(|_| "unknown".into());
    HostInfo {
        hostname: read("/proc/sys/kernel/hostname"),
        kernel: read("/proc/sys/kernel/osrelease"),
        cpus: std::thread::available_parallelism().map(|n| n.get()).unwrap_or(1),
    }
}


#[cfg(test)]
mod tests {
    #[test]
    fn civil_dates() {
        assert_eq!(super::civil_from_unix(0), (1970, 1, 1, 0, 0, 0));
        assert_eq!(super::civil_from_unix(1_795_000_000), (2026, 11, 18, 11, 6, 40));
    }
}
