//! The tidy table: one row per run of every point, its parameters then its metrics.
//!
//! Columns: `index`, `point` (the id), `seed`, one column per grid parameter
//! (named as in the grid), `run`, `point_status`, `status`, the metrics of
//! [`RunMetrics`](crate::RunMetrics) (`ios`, `iops`, ..., `erase_count_max`)
//! and `error`. A point that failed before its first run has one row with
//! empty metrics. Rows are in expansion order; nothing in the table depends
//! on the wall clock, so the same grid gives the same table.
//!
//! A suite workload has one row per point: `run` is the suite's name and
//! the metric columns are the numeric values of the suite's typed summary,
//! named by their path ([`flatten_summary`]: `table3.rw_ms`,
//! `calibration.RW.startup`, `findings.0.measured`), in the order they first
//! appear among the points; a value a point does not have is an empty cell.

use std::io::{self, Write};
use std::path::Path;

use serde_json::Value;

use crate::grid::{Grid, WorkloadSpec};
use crate::point::{PointOutcome, PointStatus, RunMetrics};

/// The summary's parts that are not measurements by a fixed path: rendered
/// tables (text cells), notes, the device's name, and the list of runs
/// flagged as dominated by one IO (which runs, hence which position, differs
/// between points).
const SUMMARY_TEXT: &[&str] = &[
    "suite",
    "title",
    "device",
    "tables",
    "notes",
    "flagged_runs",
];

/// The numeric values of a suite's summary (JSON), by path: object keys and
/// array positions joined with `.`; numbers as they are, booleans as 1/0,
/// nulls as missing values; text is left out. `keep` (paths or their
/// prefixes) selects some; `None` keeps all. The same summary gives the same
/// list, in the same order: the table's columns follow it.
pub fn flatten_summary(summary: &Value, keep: Option<&[String]>) -> Vec<(String, Option<f64>)> {
    fn walk(path: &str, v: &Value, out: &mut Vec<(String, Option<f64>)>) {
        let child = |k: &str| {
            if path.is_empty() {
                k.to_string()
            } else {
                format!("{path}.{k}")
            }
        };
        match v {
            Value::Number(n) => out.push((path.to_string(), n.as_f64())),
            Value::Bool(b) => out.push((path.to_string(), Some(f64::from(u8::from(*b))))),
            Value::Null => out.push((path.to_string(), None)),
            Value::String(_) => {}
            Value::Array(a) => {
                for (i, x) in a.iter().enumerate() {
                    walk(&child(&i.to_string()), x, out);
                }
            }
            Value::Object(m) => {
                for (k, x) in m {
                    if path.is_empty() && SUMMARY_TEXT.contains(&k.as_str()) {
                        continue;
                    }
                    walk(&child(k), x, out);
                }
            }
        }
    }
    let mut out = Vec::new();
    walk("", summary, &mut out);
    if let Some(keep) = keep {
        out.retain(|(path, _)| {
            keep.iter().any(|p| {
                let p = p.trim_end_matches('.');
                path == p || path.strip_prefix(p).is_some_and(|r| r.starts_with('.'))
            })
        });
    }
    out
}

/// The entries of a suite grid's `metrics` that kept no value of any
/// completed point (a misspelt path): worth a warning, not an error, since
/// a value can be missing from a summary for good reasons.
pub fn unmatched_metrics(grid: &Grid, outcomes: &[PointOutcome]) -> Vec<String> {
    let WorkloadSpec::Suite(s) = &grid.workload else {
        return Vec::new();
    };
    let Some(keep) = &s.metrics else {
        return Vec::new();
    };
    let cols = suite_metric_columns(outcomes);
    if !outcomes.iter().any(|o| o.status == PointStatus::Ok) {
        return Vec::new();
    }
    keep.iter()
        .filter(|p| {
            let p = p.trim_end_matches('.');
            !cols
                .iter()
                .any(|c| c == p || c.strip_prefix(p).is_some_and(|r| r.starts_with('.')))
        })
        .cloned()
        .collect()
}

/// A suite sweep's metric columns: every path of every point, in first-seen order.
fn suite_metric_columns(outcomes: &[PointOutcome]) -> Vec<String> {
    let mut seen = std::collections::BTreeSet::new();
    let mut cols = Vec::new();
    for m in outcomes.iter().filter_map(|o| o.suite_metrics.as_ref()) {
        for (path, _) in m {
            if seen.insert(path.as_str()) {
                cols.push(path.clone());
            }
        }
    }
    cols
}

/// The metric columns of this sweep: [`METRIC_COLUMNS`], or a suite's paths.
fn metric_columns(grid: &Grid, outcomes: &[PointOutcome]) -> Vec<String> {
    match grid.workload {
        WorkloadSpec::Suite(_) => suite_metric_columns(outcomes),
        _ => METRIC_COLUMNS.iter().map(|s| s.to_string()).collect(),
    }
}

/// The metric columns, in table order.
pub const METRIC_COLUMNS: &[&str] = &[
    "ios",
    "iops",
    "mb_per_s",
    "latency_mean_ns",
    "latency_p50_ns",
    "latency_p90_ns",
    "latency_p99_ns",
    "latency_p999_ns",
    "latency_max_ns",
    "write_amplification",
    "flash_reads",
    "flash_programs",
    "flash_erases",
    "gc_relocated_pages",
    "erase_count_max",
];

/// The header of the table of `outcomes` of `grid` (a suite's metric columns
/// depend on what its points' summaries hold).
pub fn columns(grid: &Grid, outcomes: &[PointOutcome]) -> Vec<String> {
    let mut c: Vec<String> = ["index", "point", "seed"]
        .iter()
        .map(|s| s.to_string())
        .collect();
    c.extend(grid.parameters.iter().map(|(k, _)| k.clone()));
    c.extend(
        ["run", "point_status", "status"]
            .iter()
            .map(|s| s.to_string()),
    );
    c.extend(metric_columns(grid, outcomes));
    c.push("error".into());
    c
}

fn metric_cells(m: &RunMetrics) -> Vec<String> {
    let o = |v: Option<u64>| v.map(|x| x.to_string()).unwrap_or_default();
    vec![
        m.ios.to_string(),
        m.iops.to_string(),
        m.mb_per_s.to_string(),
        m.latency_mean_ns.to_string(),
        m.latency_p50_ns.to_string(),
        m.latency_p90_ns.to_string(),
        m.latency_p99_ns.to_string(),
        m.latency_p999_ns.to_string(),
        m.latency_max_ns.to_string(),
        m.write_amplification
            .map(|x| x.to_string())
            .unwrap_or_default(),
        o(m.flash_reads),
        o(m.flash_programs),
        o(m.flash_erases),
        o(m.gc_relocated_pages),
        o(m.erase_count_max),
    ]
}

/// The table's rows as text cells (the CSV's content), in the order of `outcomes`.
pub fn rows(grid: &Grid, outcomes: &[PointOutcome]) -> Vec<Vec<String>> {
    let metrics = metric_columns(grid, outcomes);
    let mut out = Vec::new();
    for o in outcomes {
        let p = &o.point;
        let mut head = vec![p.index.to_string(), p.id.clone(), p.seed.to_string()];
        for (key, _) in &grid.parameters {
            let v = p
                .params
                .iter()
                .find(|(k, _)| k == key)
                .map(|(_, v)| v.to_string());
            head.push(v.unwrap_or_default());
        }
        let point_status = match o.status {
            PointStatus::Ok => "ok",
            PointStatus::Failed => "failed",
        };
        let error = o.error.clone().unwrap_or_default();
        if let WorkloadSpec::Suite(s) = &grid.workload {
            // One row per point: the suite's values, by path.
            let values: std::collections::BTreeMap<&str, Option<f64>> = o
                .suite_metrics
                .iter()
                .flatten()
                .map(|(k, v)| (k.as_str(), *v))
                .collect();
            let mut row = head;
            let status = if o.status == PointStatus::Ok {
                "complete"
            } else {
                "failed"
            };
            row.extend([s.name.clone(), point_status.to_string(), status.into()]);
            row.extend(metrics.iter().map(|m| {
                values
                    .get(m.as_str())
                    .copied()
                    .flatten()
                    .map(|x| x.to_string())
                    .unwrap_or_default()
            }));
            row.push(error);
            out.push(row);
            continue;
        }
        if o.runs.is_empty() {
            let mut row = head.clone();
            row.extend([String::new(), point_status.to_string(), "failed".into()]);
            row.extend(metrics.iter().map(|_| String::new()));
            row.push(error);
            out.push(row);
            continue;
        }
        for m in &o.runs {
            let mut row = head.clone();
            row.extend([m.run.clone(), point_status.to_string(), m.status.clone()]);
            row.extend(metric_cells(m));
            // The point's error belongs to the run that failed (the last one).
            row.push(if m.status == "complete" {
                String::new()
            } else {
                error.clone()
            });
            out.push(row);
        }
    }
    out
}

/// Writes the table as CSV (`pandas.read_csv` reads it without options;
/// cells with commas, quotes or line breaks quoted by the csv crate).
pub fn write_csv(out: &mut impl Write, grid: &Grid, outcomes: &[PointOutcome]) -> io::Result<()> {
    let mut w = csv::WriterBuilder::new()
        .has_headers(false)
        // Rows are as wide as the header by construction (`rows`).
        .flexible(true)
        .from_writer(out);
    let to_io = flashlab_results::export::csv_error;
    w.write_record(columns(grid, outcomes)).map_err(to_io)?;
    for row in rows(grid, outcomes) {
        w.write_record(row).map_err(to_io)?;
    }
    w.flush()
}

/// Writes the table to `path` atomically (write, rename).
/// Takes the lock on the table of the sweep directory `root` (waiting for
/// another sweep that is writing it): two sweeps into one directory write
/// their tables one after the other, never into the same temporary file at
/// once. Held until dropped; it dies with its holder.
pub fn lock_table(root: &Path) -> io::Result<crate::lock::Lock> {
    let work = root.join(crate::point::WORK_DIR);
    std::fs::create_dir_all(&work)?;
    crate::lock::Lock::exclusive(&work.join("table.lock"))
}

pub fn save_csv(path: &Path, grid: &Grid, outcomes: &[PointOutcome]) -> io::Result<()> {
    let tmp = path.with_extension("csv.tmp");
    {
        let mut f = io::BufWriter::new(std::fs::File::create(&tmp)?);
        write_csv(&mut f, grid, outcomes)?;
        f.flush()?;
    }
    std::fs::rename(&tmp, path)
}

/// Writes the table as Parquet (cargo feature `parquet`): the CSV's columns,
/// typed: counts INT64, rates and latencies' means DOUBLE, a parameter
/// INT64 or DOUBLE when all its values are numbers, text as STRING; empty cells are nulls.
#[cfg(feature = "parquet")]
pub fn save_parquet(path: &Path, grid: &Grid, outcomes: &[PointOutcome]) -> io::Result<()> {
    use std::sync::Arc;

    use parquet::basic::{Compression, LogicalType, Repetition, Type as PhysicalType};
    use parquet::data_type::{ByteArray, ByteArrayType, DoubleType, Int64Type};
    use parquet::file::properties::WriterProperties;
    use parquet::file::writer::SerializedFileWriter;
    use parquet::schema::types::Type;

    use crate::grid::ParamValue;

    let to_io = |e: parquet::errors::ParquetError| io::Error::other(e.to_string());
    let names = columns(grid, outcomes);
    let suite = matches!(grid.workload, WorkloadSpec::Suite(_));
    let rows = rows(grid, outcomes);
    #[derive(Clone, Copy)]
    enum Kind {
        Int,
        Double,
        Text,
    }
    // Types come from the schema, not the cells: a float column whose values
    // happen to be whole numbers stays DOUBLE in every sweep.
    let float_metrics = ["iops", "mb_per_s", "latency_mean_ns", "write_amplification"];
    let kinds: Vec<Kind> = names
        .iter()
        .map(|name| {
            if let Some((_, values)) = grid.parameters.iter().find(|(k, _)| k == name) {
                return if values.iter().all(|v| matches!(v, ParamValue::Int(_))) {
                    Kind::Int
                } else if values
                    .iter()
                    .all(|v| matches!(v, ParamValue::Int(_) | ParamValue::Float(_)))
                {
                    Kind::Double
                } else {
                    Kind::Text
                };
            }
            match name.as_str() {
                "index" | "seed" => Kind::Int,
                "point" | "run" | "point_status" | "status" | "error" => Kind::Text,
                // a suite's values are numbers of its summary, whole or not
                _ if suite => Kind::Double,
                n if float_metrics.contains(&n) => Kind::Double,
                n if METRIC_COLUMNS.contains(&n) => Kind::Int,
                _ => Kind::Text,
            }
        })
        .collect();
    let fields = names
        .iter()
        .zip(&kinds)
        .map(|(name, kind)| {
            let b = match kind {
                Kind::Int => Type::primitive_type_builder(name, PhysicalType::INT64),
                Kind::Double => Type::primitive_type_builder(name, PhysicalType::DOUBLE),
                Kind::Text => Type::primitive_type_builder(name, PhysicalType::BYTE_ARRAY)
                    .with_logical_type(Some(LogicalType::String)),
            };
            b.with_repetition(Repetition::OPTIONAL)
                .build()
                .map(Arc::new)
        })
        .collect::<Result<Vec<_>, _>>()
        .map_err(to_io)?;
    let schema = Arc::new(
        Type::group_type_builder("flashlab_sweep")
            .with_fields(fields)
            .build()
            .map_err(to_io)?,
    );
    let props = Arc::new(
        WriterProperties::builder()
            .set_compression(Compression::SNAPPY)
            .build(),
    );
    let tmp = path.with_extension("parquet.tmp");
    let file = std::fs::File::create(&tmp)?;
    let mut w = SerializedFileWriter::new(file, schema, props).map_err(to_io)?;
    let mut rg = w.next_row_group().map_err(to_io)?;
    let mut c = 0;
    while let Some(mut col) = rg.next_column().map_err(to_io)? {
        let cells: Vec<&str> = rows.iter().map(|r| r[c].as_str()).collect();
        let def: Vec<i16> = cells.iter().map(|s| i16::from(!s.is_empty())).collect();
        let present = cells.iter().filter(|s| !s.is_empty());
        match kinds[c] {
            Kind::Int => {
                let v: Vec<i64> = present.map(|s| s.parse().unwrap_or_default()).collect();
                col.typed::<Int64Type>().write_batch(&v, Some(&def), None)
            }
            Kind::Double => {
                let v: Vec<f64> = present.map(|s| s.parse().unwrap_or_default()).collect();
                col.typed::<DoubleType>().write_batch(&v, Some(&def), None)
            }
            Kind::Text => {
                let v: Vec<ByteArray> = present.map(|s| ByteArray::from(*s)).collect();
                col.typed::<ByteArrayType>()
                    .write_batch(&v, Some(&def), None)
            }
        }
        .map_err(to_io)?;
        col.close().map_err(to_io)?;
        c += 1;
    }
    rg.close().map_err(to_io)?;
    w.close().map_err(to_io)?;
    std::fs::rename(&tmp, path)
}
