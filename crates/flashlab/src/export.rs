//! `flashlab export` and `flashlab show`: read a results directory back.

use std::fs::File;
use std::io::{self, BufWriter, Write};
use std::path::Path;

use flashlab_results::export::{write_csv_file, write_csv_header};
use flashlab_results::ResultsDir;

use crate::cli::{ExportArgs, ExportFormat, ShowArgs};
use crate::error::{CliError, CliResult};
use crate::output;

pub fn open_results(dir: &Path) -> CliResult<ResultsDir> {
    check_results_dir(dir)?;
    let results = ResultsDir::open(dir).map_err(|e| {
        // A damaged manifest or journal is named (file and line) with its
        // fix; only a failing disk is a failure.
        let message = format!("cannot read {}: {e}", dir.display());
        if e.kind() == std::io::ErrorKind::InvalidData {
            CliError::user(message)
        } else {
            CliError::failure(message)
        }
    })?;
    if let Some(torn) = results.torn_journal_line() {
        eprintln!("note: {torn}");
    }
    Ok(results)
}

fn check_results_dir(dir: &Path) -> CliResult<()> {
    if !dir.exists() {
        return Err(CliError::user(format!(
            "{} does not exist; pass a results directory written by `flashlab run` (it holds manifest.json)",
            dir.display()
        )));
    }
    if !dir.join("manifest.json").exists() {
        return Err(CliError::user(format!(
            "{} is not a flashlab results directory (no manifest.json); pass a directory written by `flashlab run`",
            dir.display()
        )));
    }
    Ok(())
}

/// A results directory's manifest, checked as [`open_results`] does.
struct ManifestOnly {
    root: std::path::PathBuf,
    manifest: flashlab_results::Manifest,
}

impl ManifestOnly {
    fn manifest(&self) -> &flashlab_results::Manifest {
        &self.manifest
    }
    fn root(&self) -> &Path {
        &self.root
    }
}

fn open_manifest(dir: &Path) -> CliResult<ManifestOnly> {
    check_results_dir(dir)?;
    let (manifest, replay) = flashlab_results::read_manifest(dir).map_err(|e| {
        let message = format!("cannot read {}: {e}", dir.display());
        match e {
            flashlab_results::ManifestError::Io { source, .. }
                if source.kind() != std::io::ErrorKind::InvalidInput =>
            {
                CliError::failure(message)
            }
            _ => CliError::user(message),
        }
    })?;
    if let Some(torn) = replay.torn {
        eprintln!("note: {torn}");
    }
    Ok(ManifestOnly {
        root: dir.to_path_buf(),
        manifest,
    })
}

/// Which runs `--run` selects: a name or a 1-based number; all when absent.
fn select_runs(results: &ResultsDir, run: Option<&str>) -> CliResult<Vec<usize>> {
    let runs = &results.manifest().runs;
    match run {
        None => Ok((0..runs.len()).collect()),
        Some(r) => {
            if let Some(i) = runs.iter().position(|e| e.name == r) {
                return Ok(vec![i]);
            }
            match r.parse::<usize>() {
                Ok(n) if n >= 1 && n <= runs.len() => Ok(vec![n - 1]),
                _ => Err(CliError::user(format!(
                    "no run '{r}' in {}; it has {}",
                    results.root().display(),
                    runs.iter()
                        .map(|e| e.name.as_str())
                        .collect::<Vec<_>>()
                        .join(", ")
                ))),
            }
        }
    }
}

pub fn write_csv(results: &ResultsDir, run: Option<&str>, output: Option<&Path>) -> CliResult<()> {
    let selected = select_runs(results, run)?;
    let write = |out: &mut dyn Write| -> io::Result<()> {
        let mut out = BufWriter::new(out);
        write_csv_header(&mut out)?;
        for &i in &selected {
            let records = results.record_file(i)?;
            write_csv_file(&mut out, &results.manifest().runs[i].name, &records)?;
        }
        out.flush()
    };
    let result = match output {
        Some(p) => {
            let mut f = File::create(p).map_err(|e| {
                CliError::user(format!(
                    "cannot create {}: {e}; check the path given to -o/--csv",
                    p.display()
                ))
            })?;
            write(&mut f)
        }
        None => write(&mut io::stdout().lock()),
    };
    result.map_err(|e| CliError::output("export failed", e))
}

pub fn export(args: ExportArgs) -> CliResult<()> {
    let results = open_results(&args.results_dir)?;
    match args.format {
        ExportFormat::Csv => write_csv(&results, args.run.as_deref(), args.output.as_deref()),
        ExportFormat::Parquet => {
            crate::report::export_parquet(&results, args.run.as_deref(), args.output.as_deref())
        }
        ExportFormat::Json => {
            let selected = select_runs(&results, args.run.as_deref())?;
            let mut summary = results.summary();
            // A set: a manifest of 200,000 runs is selected in linear time.
            let names: std::collections::HashSet<&str> = selected
                .iter()
                .map(|&i| results.manifest().runs[i].name.as_str())
                .collect();
            summary.runs.retain(|r| names.contains(r.name.as_str()));
            let text = serde_json::to_string_pretty(&summary).expect("summary serializes") + "\n";
            match &args.output {
                Some(p) => std::fs::write(p, text)
                    .map_err(|e| CliError::user(format!("cannot write {}: {e}", p.display()))),
                None => {
                    print!("{text}");
                    Ok(())
                }
            }
        }
    }
}

pub fn show(args: ShowArgs) -> CliResult<()> {
    if args.json {
        let results = open_results(&args.results_dir)?;
        println!(
            "{}",
            serde_json::to_string_pretty(&results.summary()).expect("summary serializes")
        );
        return Ok(());
    }
    // The manifest alone, and each run's statistics one at a time: holding
    // every run's summary made a 200,000-run directory cost 3.6 GB and a minute.
    let results = open_manifest(&args.results_dir)?;
    let m = results.manifest();
    println!("device:  {}", output::device_line(&m.device, &m.engine));
    println!(
        "tool:    {} {} ({})",
        m.tool.name, m.tool.version, m.tool.git_commit
    );
    let mut rows = Vec::new();
    let (mut interrupted, mut not_converged) = (0, 0);
    for entry in &m.runs {
        match run_stats(results.root(), entry) {
            Some(run) => {
                // A mark after the name: the figures are of part of a run, or
                // of a mean less certain than the suite asked for.
                let mut name = entry.name.clone();
                if entry.status == flashlab_results::RunStatus::Interrupted {
                    name += " [interrupted]";
                    interrupted += 1;
                }
                if run
                    .warnings
                    .iter()
                    .any(|w| w.starts_with(flashlab_results::warnings::NOT_CONVERGED))
                {
                    name += " [not converged]";
                    not_converged += 1;
                }
                rows.extend(output::rows_of(&name, &run.stats))
            }
            None => println!("run {}: {:?}, no statistics", entry.name, entry.status),
        }
    }
    println!("{}", output::table(&rows));
    if interrupted > 0 {
        println!(
            "[interrupted]: stopped before its last IO (Ctrl-C); its figures cover the IOs done"
        );
    }
    if not_converged > 0 {
        println!("[not converged]: the 95 % confidence interval of its mean did not reach the suite's bound before its IO cap (run.json says by how much)");
    }
    Ok(())
}

/// What `show` needs of a run's `run.json`: its statistics, read one run at
/// a time (the simulator's accounting, most of the file, is skipped).
#[derive(serde::Deserialize)]
struct RunStatsOnly {
    name: String,
    stats: flashlab_results::RunStats,
    #[serde(default)]
    warnings: Vec<String>,
}

fn run_stats(root: &Path, entry: &flashlab_results::RunEntry) -> Option<RunStatsOnly> {
    let path = root.join(&entry.dir).join("run.json");
    let run: RunStatsOnly = flashlab_results::dir::read_json(&path).ok()?;
    (run.name == entry.name).then_some(run)
}
