//! `flashlab report` and `flashlab run --report`: render saved results with
//! the report library (`crates/report`), and `flashlab export --format
//! parquet` (behind the `parquet` cargo feature).

use std::path::{Path, PathBuf};

use clap::{Args, ValueEnum};
use flashlab_report::{Options, Report, ReportFormat};

use crate::error::{CliError, CliResult};

#[derive(Args, Debug)]
pub struct ReportArgs {
    /// Results directories (of `flashlab run`, `replay` or `suite`); several compare devices.
    /// Or one twin's result, PROFILE.twin.json (of `flashlab twin`).
    #[arg(value_name = "RESULTS_DIR")]
    pub dirs: Vec<PathBuf>,

    /// Output file [default: report.html for html, stdout for md and json].
    #[arg(long, value_name = "FILE")]
    pub output: Option<PathBuf>,
    #[command(flatten)]
    pub old_output: crate::cli::OldOutput,

    /// html: one self-contained page with charts (works offline); md: Markdown
    /// tables (Table 3 side by side, hints, findings, statistics); json: the report model.
    #[arg(long, value_enum, default_value_t = FormatArg::Html)]
    pub format: FormatArg,

    /// Only these runs (by name; repeat or separate with commas).
    #[arg(long, value_name = "NAME", value_delimiter = ',')]
    pub run: Vec<String>,

    /// No progress line on stderr.
    #[arg(long, short)]
    pub quiet: bool,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum FormatArg {
    Html,
    #[value(alias = "markdown")]
    Md,
    Json,
}

impl FormatArg {
    fn format(self) -> ReportFormat {
        match self {
            FormatArg::Html => ReportFormat::Html,
            FormatArg::Md => ReportFormat::Markdown,
            FormatArg::Json => ReportFormat::Json,
        }
    }
}

/// Builds a report; the library's errors are one line naming the problem
/// and the fix, and all come from what the user passed (exit 2).
fn build(dirs: &[PathBuf], runs: Vec<String>) -> CliResult<Report> {
    // A twin's result (`flashlab twin --output X` writes X.twin.json) is reported
    // on its own: the probe, the fitted parameters, predicted vs measured.
    if let [one] = dirs {
        if flashlab_report::twin::is_twin_json(one) {
            if !runs.is_empty() {
                return Err(CliError::user(
                    "--run selects runs of results directories; a twin's report has none: drop --run",
                ));
            }
            return flashlab_report::twin::load(
                one,
                &format!("flashlab {}", env!("CARGO_PKG_VERSION")),
            )
            .map_err(CliError::user);
        }
    }
    // A sweep directory (`flashlab sweep` writes sweep.csv and grid.json):
    // its metrics charted against each swept parameter.
    if let [one] = dirs {
        if flashlab_report::sweep::is_sweep_dir(one) {
            return flashlab_report::sweep::load(
                one,
                &runs,
                &format!("flashlab {}", env!("CARGO_PKG_VERSION")),
            )
            .map_err(CliError::user);
        }
    }
    let options = Options {
        runs,
        ..Options::default()
    };
    Report::build(dirs, &options).map_err(CliError::user)
}

fn write_file(path: &Path, text: &str) -> CliResult<()> {
    std::fs::write(path, text).map_err(|e| {
        CliError::user(format!(
            "cannot write {}: {e}; check the path given to -o",
            path.display()
        ))
    })
}

pub fn report(args: ReportArgs) -> CliResult<()> {
    let start = std::time::Instant::now();
    let format = args.format.format();
    let report = build(&args.dirs, args.run)?;
    let text = report.render(format);
    let output = match (&args.output, format) {
        (Some(p), _) if p.as_os_str() == "-" => None,
        (Some(p), _) => Some(p.clone()),
        (None, ReportFormat::Html) => Some(PathBuf::from("report.html")),
        (None, _) => None,
    };
    match output {
        Some(path) => {
            write_file(&path, &text)?;
            if !args.quiet && report.devices.is_empty() {
                eprintln!(
                    "report: {} ({}, {:.1} MB, {:.1} s)",
                    path.display(),
                    report.title,
                    text.len() as f64 / 1e6,
                    start.elapsed().as_secs_f64()
                );
            } else if !args.quiet {
                let runs: usize = report.devices.iter().map(|d| d.runs.len()).sum();
                eprintln!(
                    "report: {} ({} device{}, {runs} runs, {:.1} MB, {:.1} s)",
                    path.display(),
                    report.devices.len(),
                    if report.devices.len() == 1 { "" } else { "s" },
                    text.len() as f64 / 1e6,
                    start.elapsed().as_secs_f64()
                );
            }
        }
        None => print!("{text}"),
    }
    Ok(())
}

/// `flashlab run --report FILE`: the report of the results just written (its
/// format from the file's extension: .md, .json, else HTML).
pub fn run_report(results_dir: &Path, path: &Path, announce: bool) -> CliResult<()> {
    let format = match path.extension().and_then(|e| e.to_str()) {
        Some("md") | Some("markdown") => ReportFormat::Markdown,
        Some("json") => ReportFormat::Json,
        _ => ReportFormat::Html,
    };
    let report = Report::build(&[results_dir.to_path_buf()], &Options::default())
        .map_err(|e| CliError::failure(format!("cannot build the report: {e}")))?;
    write_file(path, &report.render(format))?;
    if announce {
        println!("report:  {}", path.display());
    } else {
        eprintln!("report: {}", path.display());
    }
    Ok(())
}

/// `flashlab export --format parquet`: one row per IO, the CSV's columns.
#[cfg(feature = "parquet")]
pub fn export_parquet(
    results: &flashlab_results::ResultsDir,
    run: Option<&str>,
    output: Option<&Path>,
) -> CliResult<()> {
    let Some(path) = output else {
        return Err(CliError::user(
            "--format parquet writes a binary file: give it with -o FILE.parquet",
        ));
    };
    let runs = &results.manifest().runs;
    let selected: Vec<usize> = match run {
        None => (0..runs.len()).collect(),
        Some(r) => match runs.iter().position(|e| e.name == r) {
            Some(i) => vec![i],
            None => match r.parse::<usize>() {
                Ok(n) if n >= 1 && n <= runs.len() => vec![n - 1],
                _ => {
                    return Err(CliError::user(format!(
                        "no run '{r}' in {}; it has {}",
                        results.root().display(),
                        runs.iter()
                            .map(|e| e.name.as_str())
                            .collect::<Vec<_>>()
                            .join(", ")
                    )))
                }
            },
        },
    };
    let file = std::fs::File::create(path).map_err(|e| {
        CliError::user(format!(
            "cannot create {}: {e}; check the path given to -o",
            path.display()
        ))
    })?;
    let mut w = flashlab_results::parquet::ParquetWriter::new(file)
        .map_err(|e| CliError::failure(format!("parquet export failed: {e}")))?;
    for i in selected {
        let records = results.record_file(i).map_err(|e| {
            CliError::failure(format!(
                "cannot read the records of run {}: {e}",
                runs[i].name
            ))
        })?;
        // Streamed in chunks (one row group each): constant memory.
        let mut failed = None;
        records
            .for_each_chunk(|c| {
                if failed.is_none() {
                    if let Err(e) = w.write_run(&runs[i].name, c) {
                        failed = Some(e);
                    }
                }
                Ok(())
            })
            .map_err(|e| {
                CliError::failure(format!(
                    "cannot read the records of run {}: {e}",
                    runs[i].name
                ))
            })?;
        if let Some(e) = failed {
            return Err(CliError::failure(format!("parquet export failed: {e}")));
        }
    }
    w.finish()
        .map_err(|e| CliError::failure(format!("parquet export failed: {e}")))?;
    Ok(())
}

#[cfg(not(feature = "parquet"))]
pub fn export_parquet(
    _results: &flashlab_results::ResultsDir,
    _run: Option<&str>,
    _output: Option<&Path>,
) -> CliResult<()> {
    Err(CliError::user(
        "this flashlab was built without Parquet support; rebuild it with `cargo build --release --features parquet` (or export CSV: --format csv)",
    ))
}
