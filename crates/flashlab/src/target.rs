//! Targets as the commands see them: parse `--device`, learn its size and
//! alignment without opening it for IO, open it (after the safety check), and
//! create the results directory that records what was opened.

use std::fs;
use std::io::IsTerminal;
use std::path::{Path, PathBuf};

use flashlab_device::{ClockKind, Device, DeviceInfo, DeviceKind};
use flashlab_pattern::units::{format_size, parse_size};
use flashlab_realdev::{Engine, OpenOptions};
use flashlab_results::{Manifest, ResultsDir, ToolInfo};

use crate::cli::{EngineArg, TargetArgs};
use crate::error::{CliError, CliResult};

pub use flashlab_workload::{host_info, SIM_MAX_OUTSTANDING};

pub enum Target {
    Sim,
    Path(PathBuf),
}

/// A target whose size and alignment are known, not yet opened for IO
/// (a simulated device is already built: building it is how we learn its size).
pub struct Probed {
    pub target: Target,
    pub info: DeviceInfo,
    /// The alignment IOs must keep (O_DIRECT's logical block, or 512 buffered).
    pub lbs: u64,
    pub create_size: Option<u64>,
    sim: Option<Box<dyn Device>>,
}

fn open_error(e: flashlab_realdev::OpenError) -> CliError {
    CliError {
        message: e.to_string(),
        exit_code: e.kind().exit_code() as u8,
    }
}

pub fn probe(t: &TargetArgs, seed: u64) -> CliResult<Probed> {
    let create_size = match &t.size {
        Some(s) => Some(parse_size(s).map_err(|e| CliError::user(format!("--size: {e}")))?),
        None => None,
    };
    match t.device.strip_prefix("sim:") {
        Some(spec) => {
            if t.size.is_some() {
                return Err(CliError::user(format!(
                    "--size does not apply to a simulated device; set its capacity in the device name, e.g. --device sim:{},capacity=4GiB",
                    spec.split(',').next().unwrap_or("ssd-m")
                )));
            }
            if t.buffered || t.engine != EngineArg::Auto {
                return Err(CliError::user("--buffered and --engine apply to real devices only; drop them for a sim: device"));
            }
            let dev = flashlab_sim::open_device(spec, seed, SIM_MAX_OUTSTANDING)
                .map(|d| Box::new(d) as Box<dyn Device>)
                .map_err(CliError::user)?;
            let info = dev.info().clone();
            let lbs = info.logical_block_bytes as u64;
            Ok(Probed {
                target: Target::Sim,
                info,
                lbs,
                create_size: None,
                sim: Some(dev),
            })
        }
        None => {
            let path = PathBuf::from(&t.device);
            let info = match flashlab_realdev::probe(&path) {
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
                Err(_) if !path.exists() && create_size.is_some() => DeviceInfo {
                    name: path.display().to_string(),
                    kind: DeviceKind::File,
                    clock: ClockKind::Wall,
                    size_bytes: create_size.unwrap_or(0),
                    logical_block_bytes: 512,
                    identity: Default::default(),
                },
                Err(e) => return Err(open_error(e)),
            };
            let lbs = if t.buffered {
                512
            } else {
                info.logical_block_bytes as u64
            };
            Ok(Probed {
                target: Target::Path(path),
                info,
                lbs,
                create_size,
                sim: None,
            })
        }
    }
}

impl Probed {
    /// Opens the target for IO: for a block device that will be written, only
    /// after the safety check, which examines the opened descriptor itself
    /// (flashlab_realdev::open_checked); all IO goes through that descriptor.
    /// Returns the device and the engine's name.
    pub fn open(
        mut self,
        t: &TargetArgs,
        writes: bool,
        max_outstanding: usize,
        max_io_bytes: u64,
        quiet: bool,
    ) -> CliResult<(Box<dyn Device>, String)> {
        match &self.target {
            Target::Sim => Ok((
                self.sim.take().expect("built by probe"),
                "simulator".to_string(),
            )),
            Target::Path(path) => {
                let engine = match t.engine {
                    EngineArg::Auto => Engine::Auto,
                    EngineArg::Sync => Engine::Sync,
                    EngineArg::IoUring => Engine::IoUring,
                };
                if engine == Engine::Sync && max_outstanding > 1 {
                    return Err(CliError::user(format!(
                        "--engine sync issues one IO at a time, but up to {max_outstanding} IOs must be outstanding; use --engine io_uring or auto"
                    )));
                }
                let creating = self.create_size.is_some() && !path.exists();
                if creating && !quiet {
                    eprintln!(
                        "creating {} ({}) and filling it with data...",
                        path.display(),
                        format_size(self.create_size.unwrap_or(0))
                    );
                }
                // Filling a multi-GiB file takes minutes: a bar shows it moving.
                let bar = (creating && !quiet && std::io::stderr().is_terminal()).then(|| {
                    let bar = indicatif::ProgressBar::new(self.create_size.unwrap_or(0));
                    bar.set_style(
                        indicatif::ProgressStyle::with_template(
                            "filling [{bar:30}] {bytes}/{total_bytes} {bytes_per_sec} ETA {eta}",
                        )
                        .expect("valid template")
                        .progress_chars("=> "),
                    );
                    bar
                });
                let mut fill_progress = |done: u64, total: u64| {
                    if let Some(b) = &bar {
                        b.set_length(total);
                        b.set_position(done);
                    }
                };
                let opened = flashlab_realdev::open_with_progress(
                    &OpenOptions {
                        path: path.clone(),
                        write: writes,
                        engine,
                        max_outstanding,
                        max_io_bytes: max_io_bytes as u32,
                        direct: !t.buffered,
                        allow_write_to: t.allow_write_to.clone(),
                        create_size_bytes: self.create_size,
                    },
                    &mut fill_progress,
                )
                .map_err(open_error);
                if let Some(b) = bar {
                    b.finish_and_clear();
                }
                let opened = opened?;
                // The pattern was validated against what probe() saw; the run
                // uses what the open (and the safety check) got. Both come from
                // the path, which may have been switched in between.
                let got = opened.device.info();
                if !creating
                    && (got.kind != self.info.kind || got.size_bytes != self.info.size_bytes)
                {
                    return Err(CliError::user(format!(
                        "{} changed while flashlab opened it (first {} bytes, then {} bytes): it names another device or file now; check the path and run again",
                        path.display(),
                        self.info.size_bytes,
                        got.size_bytes
                    )));
                }
                for w in &opened.warnings {
                    // Creating a file is news, not a warning.
                    let label = if creating && w.starts_with("created ") {
                        "note"
                    } else {
                        "warning"
                    };
                    if label == "warning" || !quiet {
                        eprintln!("{label}: {w}");
                    }
                }
                let engine = opened
                    .device
                    .info()
                    .identity
                    .get("engine")
                    .cloned()
                    .unwrap_or_else(|| "unknown".into());
                Ok((opened.device, engine))
            }
        }
    }
}

/// Creates the results directory (`root`, or `results/DATE-TIME-NAME`) with
/// a manifest describing the opened device.
pub fn create_results(
    root: Option<&Path>,
    default_name: &str,
    device: &dyn Device,
    engine: &str,
) -> CliResult<ResultsDir> {
    let root = match root {
        Some(p) => p.to_path_buf(),
        None => default_results_dir(default_name),
    };
    let manifest = Manifest {
        schema_version: flashlab_results::SCHEMA_VERSION,
        tool: tool_info(),
        created_unix_s: flashlab_results::time::now_unix_s(),
        command_line: std::env::args().collect(),
        host: host_info(),
        device: device.info().clone(),
        engine: engine.to_string(),
        suite: None,
        runs: Vec::new(),
    };
    ResultsDir::create(&root, manifest).map_err(|e| {
        CliError::user(format!(
            "cannot create results directory {}: {e}",
            root.display()
        ))
    })
}

fn default_results_dir(name: &str) -> PathBuf {
    let base = format!(
        "results/{}-{name}",
        flashlab_results::time::compact_utc(flashlab_results::time::now_unix_s())
    );
    let mut path = PathBuf::from(&base);
    let mut n = 2;
    while path.exists() {
        path = PathBuf::from(format!("{base}-{n}"));
        n += 1;
    }
    path
}

pub fn tool_info() -> ToolInfo {
    ToolInfo {
        name: "flashlab".into(),
        version: env!("CARGO_PKG_VERSION").into(),
        git_commit: env!("FLASHLAB_GIT_COMMIT").into(),
    }
}

/// The largest pattern file read: 16 MiB (about 100,000 runs).
pub const MAX_TEXT_FILE_BYTES: u64 = 16 << 20;

/// Reads a small text input (a pattern file) with a size limit, so that
/// `/dev/zero` or a disk image given by mistake is refused at once.
pub fn read_small_text(path: &std::path::Path, what: &str, flag: &str) -> CliResult<String> {
    use std::io::Read;
    let shown = path.display();
    let file = fs::File::open(path).map_err(|e| {
        CliError::user(format!(
            "cannot read {what} {shown}: {e}; check the path given to {flag}"
        ))
    })?;
    let mut bytes = Vec::new();
    file.take(MAX_TEXT_FILE_BYTES + 1)
        .read_to_end(&mut bytes)
        .map_err(|e| {
            CliError::user(format!(
                "cannot read {what} {shown}: {e}; check the path given to {flag}"
            ))
        })?;
    if bytes.len() as u64 > MAX_TEXT_FILE_BYTES {
        return Err(CliError::user(format!(
            "{what} {shown} is larger than {} MiB; is it the right file? (check {flag})",
            MAX_TEXT_FILE_BYTES >> 20
        )));
    }
    String::from_utf8(bytes).map_err(|_| {
        CliError::user(format!(
            "{what} {shown} is not UTF-8 text; pass a TOML file to {flag}"
        ))
    })
}
