//! The report of a sweep directory (`flashlab sweep` writes `sweep.csv` and
//! `grid.json` there): fio-plot's "vary the block size / queue depth" view
//! from flashlab's own table. One chart per swept parameter and metric, the
//! parameter on x, one line per combination of the other parameters (and per
//! run name when the workload has several), each point the mean over the
//! grid's seeds; the best point per metric first, then the table.
//!
//! It reads the table alone, through the results crate's regular-file
//! opener and a size cap (no crate dependency on the sweep: the CSV's header
//! is the contract): the parameter columns are those between `seed` and
//! `run`, as `flashlab_sweep::table::columns` writes them.

use std::collections::BTreeMap;
use std::io::Read;
use std::path::Path;

use crate::error::ReportError;
use crate::model::{Report, Section, Table, REPORT_FORMAT};
use crate::svg::{Axis, Chart, Scale, Series, Shape, Unit};

/// A sweep table larger than this is not one flashlab wrote at a sane grid
/// size (100,000 points of a few runs are about 100 MB).
const MAX_TABLE_BYTES: u64 = 1 << 30;

/// Rows shown in the report's table; the CSV has them all.
const MAX_TABLE_ROWS: usize = 2000;

/// The metrics charted, as (CSV column, label, unit, higher is better).
const METRICS: [(&str, &str, Unit, bool); 4] = [
    ("iops", "IOPS", Unit::Count, true),
    ("mb_per_s", "MB/s", Unit::Number, true),
    ("latency_mean_ns", "mean latency", Unit::Nanos, false),
    ("latency_p99_ns", "p99 latency", Unit::Nanos, false),
];

/// Whether `path` is a sweep directory (`sweep.csv` and `grid.json`).
pub fn is_sweep_dir(path: &Path) -> bool {
    path.is_dir() && path.join("sweep.csv").is_file() && path.join("grid.json").is_file()
}

/// One row of the table that completed.
struct Row {
    /// The swept parameters' values, as written in the grid.
    params: Vec<String>,
    seed: String,
    run: String,
    /// `METRICS`' values, in their order.
    metrics: [Option<f64>; 4],
}

/// The table read: parameter names, completed rows, and how many did not complete.
struct SweepTable {
    params: Vec<String>,
    rows: Vec<Row>,
    failed: usize,
}

fn table_error(path: &Path, what: String) -> ReportError {
    ReportError::Io {
        path: path.display().to_string(),
        source: std::io::Error::new(std::io::ErrorKind::InvalidData, what),
    }
}

fn read_table(path: &Path) -> Result<SweepTable, ReportError> {
    let io = |source| ReportError::Io {
        path: path.display().to_string(),
        source,
    };
    let file = flashlab_results::records::open_regular(path).map_err(io)?;
    if file.metadata().map_err(io)?.len() > MAX_TABLE_BYTES {
        return Err(table_error(
            path,
            format!(
                "larger than {} MiB: not a table flashlab sweep wrote",
                MAX_TABLE_BYTES >> 20
            ),
        ));
    }
    let mut reader = csv::ReaderBuilder::new()
        .flexible(true)
        .from_reader(file.take(MAX_TABLE_BYTES));
    let header: Vec<String> = reader
        .headers()
        .map_err(|e| table_error(path, e.to_string()))?
        .iter()
        .map(String::from)
        .collect();
    let col = |name: &str| header.iter().position(|h| h == name);
    let (Some(seed), Some(run)) = (col("seed"), col("run")) else {
        return Err(table_error(
            path,
            "no `seed` and `run` columns: not a table flashlab sweep wrote".into(),
        ));
    };
    if run <= seed {
        return Err(table_error(
            path,
            "`run` before `seed`: not a table flashlab sweep wrote".into(),
        ));
    }
    let params: Vec<String> = header[seed + 1..run].to_vec();
    let (point_status, status) = (col("point_status"), col("status"));
    let metric_cols: Vec<Option<usize>> = METRICS.iter().map(|m| col(m.0)).collect();
    let mut rows = Vec::new();
    let mut failed = 0;
    for record in reader.records() {
        let record = record.map_err(|e| table_error(path, e.to_string()))?;
        let cell = |i: usize| record.get(i).unwrap_or("");
        let ok = point_status.is_none_or(|i| cell(i) == "ok")
            && status.is_none_or(|i| cell(i) == "complete");
        if !ok {
            failed += 1;
            continue;
        }
        let mut metrics = [None; 4];
        for (m, c) in metrics.iter_mut().zip(&metric_cols) {
            *m = c
                .and_then(|i| cell(i).parse::<f64>().ok())
                .filter(|v| v.is_finite());
        }
        rows.push(Row {
            params: (seed + 1..run).map(|i| cell(i).to_string()).collect(),
            seed: cell(seed).to_string(),
            run: cell(run).to_string(),
            metrics,
        });
    }
    Ok(SweepTable {
        params,
        rows,
        failed,
    })
}

/// How a parameter's values go on an axis: numbers (sizes in bytes) in
/// numeric order, or categories in the order they first appear.
enum XValues {
    Numeric {
        unit: Unit,
        values: Vec<(String, f64)>,
    },
    Categorical(Vec<String>),
}

fn x_values(values: &[String]) -> XValues {
    let mut distinct: Vec<String> = Vec::new();
    for v in values {
        if !distinct.contains(v) {
            distinct.push(v.clone());
        }
    }
    // Every value a number, or every value a size: in numeric order.
    let numeric = |parse: &dyn Fn(&str) -> Option<f64>, unit: Unit| {
        let numbers: Option<Vec<f64>> = distinct.iter().map(|v| parse(v)).collect();
        numbers.map(|numbers| {
            let mut values: Vec<(String, f64)> = distinct.iter().cloned().zip(numbers).collect();
            values.sort_by(|a, b| a.1.total_cmp(&b.1));
            XValues::Numeric { unit, values }
        })
    };
    numeric(&|v| v.parse::<f64>().ok(), Unit::Number)
        .or_else(|| {
            numeric(
                &|v| {
                    flashlab_pattern::units::parse_size(v)
                        .ok()
                        .map(|b| b as f64)
                },
                Unit::Bytes,
            )
        })
        .unwrap_or(XValues::Categorical(distinct))
}

fn format_metric(v: Option<f64>, unit: Unit) -> String {
    match (v, unit) {
        (None, _) => "-".into(),
        (Some(v), Unit::Nanos) => format!("{:.1} us", v / 1e3),
        (Some(v), Unit::Count) => format!("{v:.0}"),
        (Some(v), _) => format!("{v:.1}"),
    }
}

/// The charts of parameter `p`: one per metric, a line per combination of
/// the other parameters (and run), each point the mean over seeds.
fn charts_of(table: &SweepTable, p: usize, several_runs: bool) -> Vec<Chart> {
    let name = &table.params[p];
    let column: Vec<String> = table.rows.iter().map(|r| r.params[p].clone()).collect();
    let xs = x_values(&column);
    // Each value written in the grid and where it goes on x.
    let (x_axis, positions): (Axis, Vec<(String, f64)>) = match xs {
        XValues::Numeric { unit, values } => {
            let lo = values.first().map_or(0.0, |v| v.1);
            let hi = values.last().map_or(0.0, |v| v.1);
            // Block sizes and queue depths grow by factors: a log axis
            // spaces 4 KiB, 16 KiB, 64 KiB evenly, as fio-plot does.
            let scale = if lo > 0.0 && hi / lo >= 8.0 {
                Scale::Log
            } else {
                Scale::Linear
            };
            let ticks = values.iter().map(|v| v.1).collect();
            (Axis::new(name, scale, unit).with_ticks(ticks), values)
        }
        XValues::Categorical(cats) => {
            let positions = cats.iter().cloned().zip((0..).map(f64::from)).collect();
            (Axis::categorical(name, cats), positions)
        }
    };
    let position = |v: &str| positions.iter().find(|p| p.0 == v).map(|p| p.1);
    // series label -> x -> (sum, n) per metric
    let mut series: BTreeMap<String, BTreeMap<u64, [(f64, u32); 4]>> = BTreeMap::new();
    let mut order: Vec<String> = Vec::new();
    for row in &table.rows {
        let mut label: Vec<String> = table
            .params
            .iter()
            .zip(&row.params)
            .enumerate()
            .filter(|(i, _)| *i != p)
            .map(|(_, (k, v))| format!("{k}={v}"))
            .collect();
        if several_runs {
            label.insert(0, row.run.clone());
        }
        let label = if label.is_empty() {
            "all points".to_string()
        } else {
            label.join(", ")
        };
        let Some(x) = position(&row.params[p]) else {
            continue;
        };
        if !order.contains(&label) {
            order.push(label.clone());
        }
        let at = series
            .entry(label)
            .or_default()
            .entry(x.to_bits())
            .or_insert([(0.0, 0); 4]);
        for (acc, v) in at.iter_mut().zip(row.metrics) {
            if let Some(v) = v {
                acc.0 += v;
                acc.1 += 1;
            }
        }
    }
    METRICS
        .iter()
        .enumerate()
        .map(|(m, (column, label, unit, _))| {
            let lines = order
                .iter()
                .enumerate()
                .map(|(color, s)| {
                    let mut points: Vec<[f64; 2]> = series[s]
                        .iter()
                        .filter(|(_, acc)| acc[m].1 > 0)
                        .map(|(x, acc)| [f64::from_bits(*x), acc[m].0 / f64::from(acc[m].1)])
                        .collect();
                    points.sort_by(|a, b| a[0].total_cmp(&b[0]));
                    Series {
                        label: s.clone(),
                        color,
                        shapes: vec![Shape::Line(points)],
                    }
                })
                .collect();
            Chart {
                id: format!("sweep-{name}-{column}"),
                title: format!("{label} by {name}"),
                x: x_axis.clone(),
                y: Axis::new(label, Scale::Linear, *unit),
                series: lines,
                spans: Vec::new(),
                markers: Vec::new(),
                width: 560,
                height: 260,
            }
        })
        .collect()
}

/// Reads a sweep directory and builds its report; `runs` (`--run`) keeps
/// only those run names of the workload.
pub fn load(dir: &Path, runs: &[String], generator: &str) -> Result<Report, ReportError> {
    let mut table = read_table(&dir.join("sweep.csv"))?;
    let grid: serde_json::Value = flashlab_results::dir::read_json(&dir.join("grid.json"))
        .map_err(|source| ReportError::Io {
            path: dir.join("grid.json").display().to_string(),
            source,
        })?;
    if !runs.is_empty() {
        let have: Vec<String> = {
            let mut h: Vec<String> = table.rows.iter().map(|r| r.run.clone()).collect();
            h.sort_unstable();
            h.dedup();
            h
        };
        let unknown: Vec<String> = runs.iter().filter(|r| !have.contains(r)).cloned().collect();
        if !unknown.is_empty() {
            return Err(ReportError::NoSuchRun {
                dir: dir.display().to_string(),
                wanted: unknown,
                runs: have.join(", "),
            });
        }
        table.rows.retain(|r| runs.contains(&r.run));
    }
    let name = grid["name"].as_str().unwrap_or("sweep").to_string();
    let target = grid["device"]
        .as_str()
        .map(|d| format!("sim:{d}"))
        .or_else(|| grid["target"].as_str().map(String::from))
        .unwrap_or_else(|| "-".into());
    let mut run_names: Vec<&str> = table.rows.iter().map(|r| r.run.as_str()).collect();
    run_names.sort_unstable();
    run_names.dedup();
    let several_runs = run_names.len() > 1;

    // The result first: the best point of each metric.
    let mut best = Vec::new();
    for (m, (_, label, unit, higher)) in METRICS.iter().enumerate() {
        let pick = table
            .rows
            .iter()
            .filter(|r| r.metrics[m].is_some())
            .reduce(|a, b| {
                let (va, vb) = (a.metrics[m].unwrap_or(0.0), b.metrics[m].unwrap_or(0.0));
                if (vb > va) == *higher && vb != va {
                    b
                } else {
                    a
                }
            });
        if let Some(r) = pick {
            let at: Vec<String> = table
                .params
                .iter()
                .zip(&r.params)
                .map(|(k, v)| format!("{k}={v}"))
                .collect();
            best.push(vec![
                format!("{} {label}", if *higher { "highest" } else { "lowest" }),
                format_metric(r.metrics[m], *unit),
                at.join(", "),
                r.run.clone(),
                r.seed.clone(),
            ]);
        }
    }
    let mut paragraphs = vec![format!(
        "{} points' runs completed on {target}{}; each chart point is the mean over the grid's seeds.",
        table.rows.len(),
        if table.failed > 0 {
            format!(", {} did not and are left out (sweep.csv has their errors)", table.failed)
        } else {
            String::new()
        }
    )];
    if table.params.is_empty() {
        paragraphs.push(
            "The grid sweeps no parameter (only seeds): there is nothing to chart against.".into(),
        );
    }
    let charts: Vec<Chart> = (0..table.params.len())
        .flat_map(|p| charts_of(&table, p, several_runs))
        .collect();
    let mut header: Vec<String> = table.params.clone();
    header.extend(["seed", "run"].map(String::from));
    header.extend(METRICS.iter().map(|m| m.1.to_string()));
    let rows: Vec<Vec<String>> = table
        .rows
        .iter()
        .take(MAX_TABLE_ROWS)
        .map(|r| {
            let mut cells = r.params.clone();
            cells.push(r.seed.clone());
            cells.push(r.run.clone());
            cells.extend(
                METRICS
                    .iter()
                    .zip(r.metrics)
                    .map(|(m, v)| format_metric(v, m.2)),
            );
            cells
        })
        .collect();
    if table.rows.len() > MAX_TABLE_ROWS {
        paragraphs.push(format!(
            "The table shows the first {MAX_TABLE_ROWS} of {} rows; sweep.csv has them all.",
            table.rows.len()
        ));
    }
    Ok(Report {
        format: REPORT_FORMAT,
        generator: generator.to_string(),
        title: format!("flashlab sweep {name}"),
        devices: Vec::new(),
        comparisons: Vec::new(),
        sections: vec![
            Section {
                id: "sweep-best".into(),
                title: format!("Sweep {name}: the best points"),
                paragraphs,
                tables: vec![Table {
                    header: ["", "value", "at", "run", "seed"]
                        .map(String::from)
                        .to_vec(),
                    rows: best,
                }],
                charts: Vec::new(),
            },
            Section {
                id: "sweep-charts".into(),
                title: "By parameter".into(),
                paragraphs: vec![
                    "Each swept parameter on x; a line per combination of the other parameters."
                        .into(),
                ],
                tables: Vec::new(),
                charts,
            },
            Section {
                id: "sweep-table".into(),
                title: "Points".into(),
                paragraphs: Vec::new(),
                tables: vec![Table { header, rows }],
                charts: Vec::new(),
            },
        ],
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn strings(v: &[&str]) -> Vec<String> {
        v.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn sizes_sort_by_bytes_numbers_by_value_and_words_stay_in_grid_order() {
        let XValues::Numeric { unit, values } = x_values(&strings(&["64KiB", "4KiB", "1MiB"]))
        else {
            panic!("sizes are numeric");
        };
        assert_eq!(unit, Unit::Bytes);
        assert_eq!(
            values,
            [("4KiB", 4096.0), ("64KiB", 65536.0), ("1MiB", 1048576.0)]
                .map(|(s, b)| (s.to_string(), b))
        );
        let XValues::Numeric { unit, values } = x_values(&strings(&["32", "1", "4", "1"])) else {
            panic!("numbers are numeric");
        };
        assert_eq!(unit, Unit::Number);
        assert_eq!(
            values.iter().map(|v| v.1).collect::<Vec<_>>(),
            [1.0, 4.0, 32.0]
        );
        let XValues::Categorical(c) = x_values(&strings(&["seq", "rnd", "seq"])) else {
            panic!("words are categories");
        };
        assert_eq!(c, ["seq", "rnd"]);
    }

    #[test]
    fn failed_points_are_counted_and_left_out_of_the_charts() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("sweep.csv");
        std::fs::write(
            &path,
            "index,point,seed,op,run,point_status,status,ios,iops,mb_per_s,latency_mean_ns,latency_p99_ns,error\n\
             0,a,1,0.01,,failed,failed,,,,,,too few spare blocks\n\
             1,b,1,0.15,RW,ok,complete,100,2000,8.0,500000,900000,\n\
             2,c,1,0.3,RW,ok,complete,100,4000,16.0,250000,400000,\n",
        )
        .unwrap();
        let t = read_table(&path).unwrap();
        assert_eq!(t.params, ["op"]);
        assert_eq!((t.rows.len(), t.failed), (2, 1));
        let charts = charts_of(&t, 0, false);
        assert_eq!(charts[0].title, "IOPS by op");
        assert_eq!(
            charts[0].series[0].shapes,
            vec![Shape::Line(vec![[0.15, 2000.0], [0.3, 4000.0]])]
        );
    }

    #[test]
    fn a_table_without_seed_and_run_is_refused_in_one_line() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("sweep.csv");
        std::fs::write(&path, "a,b\n1,2\n").unwrap();
        let e = read_table(&path).err().unwrap().to_string();
        assert!(e.contains("not a table flashlab sweep wrote"), "{e}");
        assert_eq!(e.lines().count(), 1);
    }
}
