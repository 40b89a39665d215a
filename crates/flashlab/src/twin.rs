//! `flashlab twin DEVICE -o profile.toml`: a simulator profile fitted to a
//! device (crates/probe's twin), with predicted vs measured per plan part,
//! held-out scores, and refusals where the target cannot show flash.

use std::path::{Path, PathBuf};

use clap::Args;
use flashlab_pattern::units::{format_duration_ns, format_size, parse_size};
use flashlab_probe::twin::{Stat, Twin, TwinOptions};
use flashlab_probe::ProbeError;

use crate::error::{CliError, CliResult};
use crate::probe::{open_target, parse_budget, write_json};

#[derive(Args, Debug)]
pub struct TwinArgs {
    /// Target: a block device, a file, or sim:PROFILE[,key=value...].
    #[arg(value_name = "DEVICE")]
    pub device: String,

    /// Where to write the profile (TOML); the twin's report goes beside it as PROFILE.twin.json.
    #[arg(
        long,
        value_name = "PROFILE.toml",
        required_unless_present = "output_o"
    )]
    pub output: Option<PathBuf>,
    #[command(flatten)]
    pub old_output: crate::cli::OldOutput,

    /// Longest the measurements may take, on the device's clock (the fit runs after, in process).
    #[arg(long, value_name = "DURATION", default_value = "15m")]
    pub budget: String,

    /// Most bytes the probe and the plan may write; plan parts that would exceed it are skipped.
    #[arg(long, value_name = "SIZE", default_value = "2GiB")]
    pub max_write_bytes: String,

    /// Allow writes to OFFSET+LENGTH (e.g. 1GiB+256MiB) or `all`; required for a real device
    /// (a twin needs writes). The write-safety check still applies.
    #[arg(long, value_name = "RANGE")]
    pub allow_write_to: Vec<String>,

    /// Largest capacity of the simulated twin (its timing does not depend on the rest).
    #[arg(long, value_name = "SIZE", default_value = "8GiB")]
    pub max_capacity: String,

    /// Seed of the plan's random offsets (and of a simulated target).
    #[arg(long, default_value_t = 1)]
    pub seed: u64,

    /// Where the probe found a write cache, let the plan's random-write part write past it
    /// before counting (docs/probe.md). Off by default: on the blind benchmark it made the
    /// held-out predictions worse (the log-block template cannot fit the merges it shows).
    #[arg(long)]
    pub write_past_cache: bool,
}

/// Why a target cannot show flash behaviour, before any IO: what its
/// identity says (a file on tmpfs or ramfs, a RAM disk, a loop device over a
/// RAM-backed file or through the page cache), the same test every run's
/// warnings use.
pub fn ram_backed(device: &str, seed: u64) -> CliResult<Option<String>> {
    let (_, probed) = crate::probe::probe_path(device, seed)?;
    Ok(flashlab_results::warnings::not_flash_reason(
        &probed.info.identity,
    ))
}

fn us(v: f64) -> String {
    format!("{:.1}", v / 1e3)
}

fn pct(e: Option<f64>) -> String {
    e.map(|e| format!("{:+.0}%", e * 100.0))
        .unwrap_or_else(|| "-".into())
}

pub fn render(t: &Twin) -> String {
    let mut out = format!(
        "twin of {}: FTL {} (tried {}), {} simulations\n  means: training rms log error {:.3}, held-out {:.3}; p99s: training {:.3}, held-out {:.3}\n\n",
        t.probe.device,
        t.ftl_kind,
        t.kinds_tried
            .iter()
            .map(|(k, l)| format!("{k} {l:.3}"))
            .collect::<Vec<_>>()
            .join(", "),
        t.evaluations,
        t.loss_rms,
        t.cv_loss_rms,
        t.p99_loss_rms,
        t.cv_p99_loss_rms,
    );
    out.push_str("parameter                      value         status     fitted to  effect\n");
    for p in &t.params {
        out.push_str(&format!(
            "{:<30} {:<13} {:<10} {:<10} {:.3}\n",
            p.key,
            format!("{}", (p.value * 1000.0).round() / 1000.0),
            p.status,
            p.fitted_to,
            p.effect
        ));
    }
    out.push_str("\ncross-validation: each fold's parts are predicted by a fit (FTL kind, cache, both stages) on the other folds' parts only\n");
    for (i, f) in t.folds.iter().enumerate() {
        out.push_str(&format!(
            "  fold {i}: held out {}; trained on {}; chose {}\n",
            f.held_out.join(", "),
            f.trained_on.join(", "),
            f.ftl_kind
        ));
    }
    out.push_str("\npart            group        fold  measured mean/p99 us   fitted on all (mean err)    held-out mean/p99 us (mean err, p99 err)\n");
    for s in &t.parts {
        let cell = |x: Option<Stat>| -> String {
            x.map(|x| format!("{}/{}", us(x.mean_ns), us(x.p99_ns)))
                .unwrap_or_else(|| "skipped".into())
        };
        out.push_str(&format!(
            "{:<15} {:<12} {:<5} {:<22} {:<14} {:<12} {:<18} {}, {}\n",
            s.name,
            s.group,
            s.fold,
            cell(s.measured),
            cell(s.predicted),
            pct(s.mean_error(s.predicted)),
            cell(s.held_out),
            pct(s.mean_error(s.held_out)),
            pct(s.p99_error(s.held_out)),
        ));
    }
    out.push('\n');
    if t.is_good() {
        out.push_str("verdict: good: no fitted parameter on its bound, held-out means within 20 % on at least 80 % of the parts and p99s within 35 % on at least 70 %\n");
    } else {
        for r in &t.not_good {
            out.push_str(&format!("verdict: NOT GOOD: {r}\n"));
        }
    }
    for p in t.params.iter().filter(|p| p.status == "no-effect") {
        let kept = if p.fitted_to == "p99" {
            "the value the descent left, not identified"
        } else {
            "kept at the template's value"
        };
        out.push_str(&format!(
            "note: {} has no effect on the plan's loss: {kept}, not fitted; the twin cannot predict what depends on it\n",
            p.key
        ));
    }
    out
}

pub fn twin(a: TwinArgs) -> CliResult<()> {
    // clap requires --output or -o, and main moves -o into --output.
    let output = a.output.clone().expect("--output is required");
    let budget_ns = parse_budget(&a.budget)?;
    let max_write_bytes = parse_size(&a.max_write_bytes)
        .map_err(|e| CliError::user(format!("--max-write-bytes: {e}")))?;
    let max_capacity_bytes =
        parse_size(&a.max_capacity).map_err(|e| CliError::user(format!("--max-capacity: {e}")))?;
    if !a.device.starts_with("sim:") {
        if let Some(why) = ram_backed(&a.device, a.seed)? {
            return Err(CliError::user(format!(
                "refusing to twin {}: {why}; twin a flash device (an SSD, a USB stick, an SD card) or a sim: profile",
                a.device
            )));
        }
        if a.allow_write_to.is_empty() {
            return Err(CliError::user(format!(
                "a twin needs writes: give --allow-write-to OFFSET+LENGTH (at least 64MiB) of {} that may be overwritten",
                a.device
            )));
        }
    }
    let (mut dev, writes) = open_target(&a.device, &a.allow_write_to, a.seed)?;
    let writes = writes.ok_or_else(|| CliError::user("a twin needs --allow-write-to"))?;
    let opts = TwinOptions {
        budget_ns,
        max_write_bytes,
        writes,
        seed: a.seed,
        max_capacity_bytes,
        write_past_cache: a.write_past_cache,
    };
    let t = flashlab_probe::twin::twin(&mut *dev, &opts).map_err(|e| match e {
        ProbeError::Refused(why) => CliError::user(format!("refusing to twin {}: {why}", a.device)),
        ProbeError::Device(_) => CliError::failure(e.to_string()),
        _ => CliError::user(e.to_string()),
    })?;
    print!("{}", crate::probe::render(&t.probe));
    println!();
    print!("{}", render(&t));
    std::fs::write(&output, &t.profile_toml)
        .map_err(|e| CliError::failure(format!("cannot write {}: {e}", output.display())))?;
    let mut json_name = output.file_name().unwrap_or_default().to_os_string();
    json_name.push(".twin.json");
    let dir = output
        .parent()
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    write_json(dir, &json_name.to_string_lossy(), &t)?;
    println!(
        "profile: {} (use it as --device sim:{}); report: {}; measured in {} of device time, {} written",
        output.display(),
        output.display(),
        dir.join(&json_name).display(),
        format_duration_ns(t.probe.elapsed_ns),
        format_size(t.probe.written_bytes)
    );
    if t.is_good() {
        Ok(())
    } else {
        Err(CliError::user(format!(
            "the twin in {} is not good: {}",
            output.display(),
            t.not_good.join("; ")
        )))
    }
}
