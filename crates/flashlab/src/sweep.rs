//! `flashlab sweep GRID.toml`: every point of a grid on local threads, one
//! results directory per point, one tidy table (`sweep.csv`) of all of them.
//! The grid, the points and the table are `flashlab-sweep`'s, shared with
//! the Python package's Dask sweeps.

use std::io::IsTerminal;
use std::path::PathBuf;
use std::sync::atomic::{AtomicUsize, Ordering};

use clap::Args;
use flashlab_sweep::{local, table, Grid, PointStatus};

use crate::error::{CliError, CliResult};
use crate::target;

#[derive(Args, Debug)]
pub struct SweepArgs {
    /// The grid file (TOML): base simulator, parameter lists, seeds, workload (docs/python.md).
    pub grid: PathBuf,
    /// Points run at once, one thread each (default: one per core).
    #[arg(long, short = 'j')]
    pub jobs: Option<usize>,
    /// Where the points and the table go (default results/sweep-NAME; running again resumes there).
    #[arg(long, short = 'o', value_name = "DIR")]
    pub results: Option<PathBuf>,
    /// Print only the result line (points run, failed, the table's path); failures still on stderr.
    #[arg(long, short = 'q')]
    pub quiet: bool,
}

pub fn sweep(args: SweepArgs) -> CliResult<()> {
    let grid = Grid::load(&args.grid).map_err(|e| CliError::user(e.to_string()))?;
    let jobs = match args.jobs {
        Some(0) => {
            return Err(CliError::user(
                "--jobs 0 runs nothing; give at least --jobs 1",
            ))
        }
        Some(n) => n,
        None => std::thread::available_parallelism()
            .map(|n| n.get())
            .unwrap_or(1),
    };
    let jobs = match &grid.target {
        None => jobs,
        Some(t) => {
            if args.jobs.is_some_and(|n| n > 1) && !args.quiet {
                eprintln!(
                    "note: the points on {} run one at a time (--jobs {jobs} applies to simulated devices): at once they would measure each other",
                    t.path.display()
                );
            }
            1
        }
    };
    let root = args
        .results
        .clone()
        .unwrap_or_else(|| PathBuf::from(format!("results/sweep-{}", grid.name)));
    std::fs::create_dir_all(&root).map_err(|e| {
        CliError::user(format!(
            "cannot create {}: {e}; choose another directory with --results",
            root.display()
        ))
    })?;
    let lock_table = || {
        table::lock_table(&root).map_err(|e| {
            CliError::failure(format!("cannot lock the table of {}: {e}", root.display()))
        })
    };
    let grid_copy = root.join("grid.json");
    {
        // Another sweep into this directory writes its grid.json and table under the same lock.
        let _table = lock_table()?;
        flashlab_results::dir::write_json_atomic(&grid_copy, &grid)
            .map_err(|e| CliError::failure(format!("cannot write {}: {e}", grid_copy.display())))?;
    }
    let total = grid.len();
    if !args.quiet {
        println!(
            "sweep {}: {total} points on {} thread(s) into {}",
            grid.name,
            jobs.min(total),
            root.display()
        );
    }
    let bar = (!args.quiet && std::io::stderr().is_terminal()).then(|| {
        let bar = indicatif::ProgressBar::new(total as u64);
        bar.set_style(
            indicatif::ProgressStyle::with_template(
                "{spinner} [{bar:30}] {pos}/{len} points, {msg} ETA {eta}",
            )
            .expect("valid template")
            .progress_chars("=> "),
        );
        bar
    });
    let failed = AtomicUsize::new(0);
    let resumed = AtomicUsize::new(0);
    let tool = target::tool_info();
    let outcomes = local::run_local(&grid, &root, jobs, &tool, &|o| {
        if o.status == PointStatus::Failed {
            failed.fetch_add(1, Ordering::Relaxed);
            let line = format!(
                "point {} ({}) failed: {}",
                o.point.index,
                o.point.id,
                o.error.as_deref().unwrap_or("unknown error")
            );
            match &bar {
                Some(b) => b.println(line),
                // An error, not progress: printed with --quiet too (the
                // final error line refers to it).
                None => eprintln!("{line}"),
            }
        }
        if o.resumed {
            resumed.fetch_add(1, Ordering::Relaxed);
        }
        if let Some(b) = &bar {
            b.set_message(format!(
                "{} failed, {} already done,",
                failed.load(Ordering::Relaxed),
                resumed.load(Ordering::Relaxed)
            ));
            b.inc(1);
        }
    });
    if let Some(b) = bar {
        b.finish_and_clear();
    }
    let csv = root.join("sweep.csv");
    let _table = lock_table()?;
    table::save_csv(&csv, &grid, &outcomes)
        .map_err(|e| CliError::failure(format!("cannot write {}: {e}", csv.display())))?;
    #[cfg(feature = "parquet")]
    {
        let pq = root.join("sweep.parquet");
        flashlab_sweep::table::save_parquet(&pq, &grid, &outcomes)
            .map_err(|e| CliError::failure(format!("cannot write {}: {e}", pq.display())))?;
    }
    for m in table::unmatched_metrics(&grid, &outcomes) {
        eprintln!(
            "warning: metrics entry `{m}` matched no value of the suite's summaries; the paths are those of points/ID/results/*-summary.json (e.g. table3.rw_ms)"
        );
    }
    let failed = failed.into_inner();
    // The result line, printed with --quiet too (it is all --quiet prints).
    {
        println!(
            "{} points: {} ran, {} already done, {} failed; table: {}",
            total,
            total - resumed.load(Ordering::Relaxed),
            resumed.load(Ordering::Relaxed),
            failed,
            csv.display()
        );
    }
    if failed > 0 {
        return Err(CliError::failure(format!(
            "{failed} of {total} points failed (their errors are above and in the table's error column); fix the grid and run the same command again to redo only them"
        )));
    }
    Ok(())
}
