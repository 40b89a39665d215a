//! `flashlab suite budilovsky11`: Budilovsky, Toledo & Zuck (SYSTOR 2011) on
//! the simulator (docs/budilovsky11.md). Prints the chip-time breakdown
//! tables, the hint-cache sweep and epsilon; saves `budilovsky11.json` and
//! `budilovsky11.md` in the results directory.

use std::path::PathBuf;

use clap::Args;
use flashlab_device::Device;
use flashlab_suite::budilovsky11::{self, Params};

use crate::error::{CliError, CliResult};
use crate::suite::SuiteOptions;

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

    /// --quick here: 256 MiB, 8192 requests per experiment; --json prints
    /// the JSON report instead of the tables.
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
const DEFAULT_SEED: u64 = 11;

pub fn run(args: Budilovsky11Args) -> CliResult<()> {
    let mut p = if args.quick {
        Params::quick()
    } else {
        Params {
            capacity: args.capacity.clone(),
            requests: args.requests,
            ..Params::default_run()
        }
    };
    p.seed = args.seed.unwrap_or(DEFAULT_SEED);
    if let Some(s) = &args.set {
        p.extra = s.clone();
    }
    if p.requests == 0 {
        return Err(CliError::user("--requests must be at least 1"));
    }
    // one-line user errors for a bad capacity or override, before any work
    flashlab_sim::resolve_spec(&format!(
        "budilovsky11,capacity={}{}",
        p.capacity,
        if p.extra.is_empty() {
            String::new()
        } else {
            format!(",{}", p.extra)
        }
    ))
    .map_err(CliError::user)?;
    if args.dry_run {
        println!(
            "budilovsky11 plan: sim:budilovsky11,capacity={}{}, seed {}: every chunk size and hint configuration of section 7, {} measured 4 KiB requests per experiment (writes after as many warm-up writes); nothing run (--dry-run)",
            p.capacity,
            if p.extra.is_empty() { String::new() } else { format!(",{}", p.extra) },
            p.seed,
            p.requests
        );
        return Ok(());
    }
    let dir = args.results.clone().unwrap_or_else(default_dir);
    // A results directory like every suite's (manifest naming the suite and
    // the simulated device), so that `flashlab report` shows it. Its
    // experiments run on their own simulated devices, not on the executor:
    // the directory has no runs, only the summary.
    let spec = format!(
        "budilovsky11,capacity={}{}",
        p.capacity,
        if p.extra.is_empty() {
            String::new()
        } else {
            format!(",{}", p.extra)
        }
    );
    let device = flashlab_sim::open_device(&spec, p.seed, 1).map_err(CliError::user)?;
    let mut results = crate::target::create_results(Some(&dir), "budilovsky11", &device, "sim")?;
    results
        .set_suite(serde_json::json!({
            "name": "budilovsky11",
            "state_enforcement": "sequential",
            "config": {"capacity": p.capacity, "requests": p.requests, "seed": p.seed, "set": p.extra},
        }))
        .map_err(|e| CliError::failure(format!("cannot write the manifest: {e}")))?;
    let quiet = args.quiet || args.json;
    let report = budilovsky11::run(&p, |what| {
        if !quiet {
            eprintln!("budilovsky11: {what}");
        }
    })
    .map_err(|e| CliError::failure(format!("budilovsky11: {e}")))?;
    let json = serde_json::to_string_pretty(&report)
        .map_err(|e| CliError::failure(format!("cannot serialise the report: {e}")))?;
    let md = report.markdown();
    let write = |name: &str, text: &str| {
        let path = dir.join(name);
        std::fs::write(&path, text)
            .map_err(|e| CliError::failure(format!("cannot write {}: {e}", path.display())))
    };
    write("budilovsky11.json", &json)?;
    write("budilovsky11.md", &md)?;
    let summary = report.summary(&device.info().name);
    write(
        "budilovsky11-summary.json",
        &serde_json::to_string_pretty(&summary).expect("serializes"),
    )?;
    write("budilovsky11-summary.md", &summary.markdown())?;
    if args.json {
        println!("{json}");
    } else {
        print!("{md}");
        if args.quick {
            println!(
                "\nThis was a reduced run (--quick: 256 MiB, 8192 requests per experiment); its findings are not comparable to the paper's. Run without --quick for the paper's sizes."
            );
        }
        println!(
            "\nSaved {} and budilovsky11.md.",
            dir.join("budilovsky11.json").display()
        );
    }
    Ok(())
}

fn default_dir() -> PathBuf {
    PathBuf::from(format!(
        "results/{}-budilovsky11",
        flashlab_results::time::compact_utc(flashlab_results::time::now_unix_s())
    ))
}
