//! `flashlab probe DEVICE`: geometry from timing (crates/probe), printed with
//! its evidence and saved as JSON. Also the target opening and write-range
//! parsing that `flashlab twin` shares.

use std::path::{Path, PathBuf};

use clap::Args;
use flashlab_device::Device;
use flashlab_pattern::units::{format_duration_ns, format_size};
use flashlab_probe::{render_curve, ByteRange, ProbeOptions, ProbeReport};

use crate::cli::{EngineArg, TargetArgs};
use crate::error::{CliError, CliResult};

#[derive(Args, Debug)]
pub struct ProbeArgs {
    /// Target: a block device, a file, or sim:PROFILE[,key=value...].
    #[arg(value_name = "DEVICE")]
    pub device: String,

    /// Longest the probe may take, on the device's clock (simulated time for sim:).
    #[arg(long, value_name = "DURATION", default_value = "10m")]
    pub budget: String,

    /// Allow writes to OFFSET+LENGTH of the device (e.g. 1GiB+256MiB), or `all`; the
    /// write probes use the largest range given. Without it a real device is only read
    /// (a sim: device may always be written: it is a model). The write-safety check still applies.
    #[arg(long, value_name = "RANGE")]
    pub allow_write_to: Vec<String>,

    /// Directory for probe.json and probe.txt [default: results/probe-NAME].
    #[arg(long, short = 'o', value_name = "DIR")]
    pub results: Option<PathBuf>,

    /// Seed of the random offsets (and of a simulated device).
    #[arg(long, default_value_t = 1)]
    pub seed: u64,

    /// Print the JSON report on stdout instead of the text.
    #[arg(long)]
    pub json: bool,
}

/// `OFFSET+LENGTH` or `all`, inside a device of `size` bytes.
pub fn parse_range(text: &str, size: u64) -> CliResult<ByteRange> {
    flashlab_probe::session::parse_range(text, size).map_err(|why| {
        CliError::user(format!(
            "--allow-write-to {text}: {why}; write OFFSET+LENGTH (e.g. 1GiB+256MiB) or all"
        ))
    })
}

/// A duration; also minutes and hours (`10m`, `1h`).
pub fn parse_budget(text: &str) -> CliResult<u64> {
    flashlab_probe::session::parse_budget_ns(text).map_err(|e| {
        CliError::user(format!(
            "--budget {text}: {e}; write a duration such as 10m or 90s"
        ))
    })
}

/// A real target's identity and size, without opening it for IO: the
/// target arguments probe and twin use (the automatic engine, direct IO).
pub fn probe_path(device: &str, seed: u64) -> CliResult<(TargetArgs, crate::target::Probed)> {
    let t = TargetArgs {
        device: device.to_string(),
        size: None,
        engine: EngineArg::Auto,
        buffered: false,
        allow_write_to: None,
    };
    let probed = crate::target::probe(&t, seed)?;
    Ok((t, probed))
}

/// Opens DEVICE, for writing only when `writes` (after the safety check,
/// inside flashlab-realdev). Returns the device and the ranges allowed.
pub fn open_target(
    device: &str,
    ranges: &[String],
    seed: u64,
) -> CliResult<(Box<dyn Device>, Option<ByteRange>)> {
    if let Some(spec) = device.strip_prefix("sim:") {
        let dev = flashlab_sim::open_device(spec, seed, 64).map_err(CliError::user)?;
        let size = dev.info().size_bytes;
        let mut best = None::<ByteRange>;
        for r in ranges {
            let r = parse_range(r, size)?;
            best = Some(best.map_or(r, |b| if r.len_bytes > b.len_bytes { r } else { b }));
        }
        // A model has nothing to lose: the whole device unless a range is given.
        let writes = best.or(Some(ByteRange {
            offset_bytes: 0,
            len_bytes: size,
        }));
        return Ok((Box::new(dev), writes));
    }
    let (t, probed) = probe_path(device, seed)?;
    let size = probed.info.size_bytes;
    let mut best = None::<ByteRange>;
    for r in ranges {
        let r = parse_range(r, size)?;
        best = Some(best.map_or(r, |b| if r.len_bytes > b.len_bytes { r } else { b }));
    }
    let (dev, _engine) = probed.open(&t, best.is_some(), 64, 1 << 20, false)?;
    Ok((dev, best))
}

/// The report as terminal text: each estimate, its reading, its curves.
pub fn render(r: &ProbeReport) -> String {
    let mut out = format!(
        "probe of {} ({}), {} on the device's clock, {} written\n",
        r.device,
        format_size(r.size_bytes),
        format_duration_ns(r.elapsed_ns),
        format_size(r.written_bytes)
    );
    match r.writes_allowed {
        Some(w) => out.push_str(&format!(
            "writes allowed: {}+{}\n",
            format_size(w.offset_bytes),
            format_size(w.len_bytes)
        )),
        None => out.push_str("read-only: the write probes are not measured\n"),
    }
    for (name, e) in r.estimates() {
        let v = match (e.value, e.unit.as_str()) {
            (None, _) => "-".to_string(),
            (Some(v), "B") => format_size(v as u64),
            (Some(_), "") => r.family.map(|f| f.name()).unwrap_or("-").to_string(),
            (Some(v), u) => format!("{v} {u}"),
        };
        out.push_str(&format!("\n{name}: {v}\n  {}\n", e.reading));
        for c in &e.evidence {
            out.push_str(&render_curve(c));
        }
    }
    out
}

pub fn write_json(dir: &Path, name: &str, value: &impl serde::Serialize) -> CliResult<()> {
    std::fs::create_dir_all(dir)
        .map_err(|e| CliError::failure(format!("cannot create {}: {e}", dir.display())))?;
    let path = dir.join(name);
    let text = serde_json::to_string_pretty(value)
        .map_err(|e| CliError::failure(format!("cannot serialise {name}: {e}")))?;
    std::fs::write(&path, text + "\n")
        .map_err(|e| CliError::failure(format!("cannot write {}: {e}", path.display())))
}

fn default_dir(device: &str) -> PathBuf {
    let name: String = device
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '-' {
                c
            } else {
                '_'
            }
        })
        .collect();
    PathBuf::from("results").join(format!("probe-{}", name.trim_matches('_')))
}

pub fn probe(a: ProbeArgs) -> CliResult<()> {
    let budget_ns = parse_budget(&a.budget)?;
    let (mut dev, writes) = open_target(&a.device, &a.allow_write_to, a.seed)?;
    let opts = ProbeOptions {
        budget_ns,
        writes,
        seed: a.seed,
        ..Default::default()
    };
    let r = flashlab_probe::probe(&mut *dev, &opts).map_err(|e| match e {
        flashlab_probe::ProbeError::Device(_) => CliError::failure(e.to_string()),
        _ => CliError::user(e.to_string()),
    })?;
    let dir = a.results.unwrap_or_else(|| default_dir(&a.device));
    write_json(&dir, "probe.json", &r)?;
    let text = render(&r);
    std::fs::write(dir.join("probe.txt"), &text)
        .map_err(|e| CliError::failure(format!("cannot write probe.txt: {e}")))?;
    if a.json {
        println!("{}", serde_json::to_string_pretty(&r).unwrap_or_default());
    } else {
        print!("{text}");
        println!("\nsaved: {} (probe.json, probe.txt)", dir.display());
    }
    Ok(())
}
