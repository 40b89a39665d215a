//! A paper suite as a sweep's workload: each point runs the suite on its
//! own simulated device, and the table has one row per point with the
//! summary's numeric values as columns.

use std::path::Path;

use flashlab_results::{ResultsDir, ToolInfo};
use flashlab_sweep::{local, table, Grid, PointStatus, SweepError};

/// Two points of a reduced uFLIP (granularity and locality only, short
/// calibration) on a small device.
const GRID: &str = r#"
name = "uflip-op"
device = "ssd-m,capacity=128MiB,channels=2,cache=off"
seeds = [7]

[parameters]
op = [0.15, 0.3]

[suite]
name = "uflip"
quick = true
[suite.options]
benchmarks = ["granularity", "locality"]
calibration_ios = 512
max_ios = 1024
"#;

fn grid(text: &str) -> Result<Grid, SweepError> {
    Grid::parse(text, "g.toml", Path::new("."), "g")
}

fn tool() -> ToolInfo {
    ToolInfo {
        name: "test".into(),
        version: "0".into(),
        git_commit: "unknown".into(),
    }
}

fn csv(g: &Grid, outcomes: &[flashlab_sweep::PointOutcome]) -> String {
    let mut out = Vec::new();
    table::write_csv(&mut out, g, outcomes).unwrap();
    String::from_utf8(out).unwrap()
}

#[test]
fn a_suite_grid_has_one_row_per_point_with_its_parameters_and_summary_values() {
    let g = grid(GRID).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let outcomes = local::run_local(&g, dir.path(), 2, &tool(), &|_| {});
    for o in &outcomes {
        assert_eq!(o.status, PointStatus::Ok, "{:?}", o.error);
    }
    let text = csv(&g, &outcomes);
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines.len(), 3, "{text}");
    let header: Vec<&str> = lines[0].split(',').collect();
    assert_eq!(
        &header[..7],
        [
            "index",
            "point",
            "seed",
            "op",
            "run",
            "point_status",
            "status"
        ]
    );
    let col = |name: &str| header.iter().position(|h| *h == name).unwrap();
    for (i, op) in ["0.15", "0.3"].iter().enumerate() {
        let row: Vec<&str> = lines[i + 1].split(',').collect();
        assert_eq!(row[col("op")], *op);
        assert_eq!(row[col("seed")], "7");
        assert_eq!(row[col("run")], "uflip");
        assert_eq!(row[col("status")], "complete");
        // Table 3's baseline costs, from the typed summary, by path.
        for m in ["table3.sr_ms", "table3.rw_ms", "calibration.RW.startup"] {
            let v: f64 = row[col(m)]
                .parse()
                .unwrap_or_else(|_| panic!("{m}: {row:?}"));
            assert!(v >= 0.0, "{m} = {v}");
        }
        assert!(row[col("table3.rw_ms")].parse::<f64>().unwrap() > 0.0);
    }
    // Text is no column; nor are the rendered tables.
    assert!(!header
        .iter()
        .any(|h| h.starts_with("tables.") || h.ends_with(".text")));

    // Each point's directory is a suite's results directory, as the CLI writes it.
    let results = ResultsDir::open(&outcomes[0].results_dir).unwrap();
    assert_eq!(results.manifest().suite.as_ref().unwrap()["name"], "uflip");
    assert!(outcomes[0].results_dir.join("uflip-summary.json").exists());
    assert!(outcomes[0].results_dir.join("figures.json").exists());
}

#[test]
fn the_same_suite_grid_twice_gives_identical_metrics_and_resume_skips_done_points() {
    let g = grid(GRID).unwrap();
    let a = tempfile::tempdir().unwrap();
    let b = tempfile::tempdir().unwrap();
    let first = local::run_local(&g, a.path(), 1, &tool(), &|_| {});
    let second = local::run_local(&g, b.path(), 2, &tool(), &|_| {});
    assert_eq!(csv(&g, &first), csv(&g, &second));
    assert!(first.iter().all(|o| !o.resumed));

    // Again into the first directory: nothing runs, the table is the same.
    let marker = first[0].results_dir.parent().unwrap().join("point.json");
    let before = std::fs::metadata(&marker).unwrap().modified().unwrap();
    let again = local::run_local(&g, a.path(), 2, &tool(), &|_| {});
    assert!(again.iter().all(|o| o.resumed));
    assert_eq!(
        std::fs::metadata(&marker).unwrap().modified().unwrap(),
        before
    );
    assert_eq!(csv(&g, &first), csv(&g, &again));

    // Other suite options are another workload: the points run again.
    let changed = grid(&GRID.replace("max_ios = 1024", "max_ios = 768")).unwrap();
    let redone = local::run_local(&changed, a.path(), 2, &tool(), &|_| {});
    assert!(redone
        .iter()
        .all(|o| !o.resumed && o.status == PointStatus::Ok));
}

#[test]
fn metrics_keeps_the_chosen_summary_paths() {
    let g =
        grid(&GRID.replace("[suite.options]", "metrics = [\"table3\"]\n[suite.options]")).unwrap();
    let g = Grid {
        seeds: vec![7],
        parameters: vec![(
            g.parameters[0].0.clone(),
            vec![g.parameters[0].1[1].clone()],
        )],
        ..g
    };
    let dir = tempfile::tempdir().unwrap();
    let outcomes = local::run_local(&g, dir.path(), 1, &tool(), &|_| {});
    let cols = table::columns(&g, &outcomes);
    let metrics: Vec<&String> = cols[7..cols.len() - 1].iter().collect();
    assert!(!metrics.is_empty());
    assert!(
        metrics.iter().all(|c| c.starts_with("table3.")),
        "{metrics:?}"
    );
    assert!(metrics.iter().any(|c| *c == "table3.rw_ms"));
    assert!(table::unmatched_metrics(&g, &outcomes).is_empty());
    let typo = Grid {
        workload: match g.workload.clone() {
            flashlab_sweep::WorkloadSpec::Suite(s) => {
                flashlab_sweep::WorkloadSpec::Suite(flashlab_sweep::SuiteSpec {
                    metrics: Some(vec!["table3".into(), "tabel3".into()]),
                    ..s
                })
            }
            w => w,
        },
        ..g.clone()
    };
    assert_eq!(table::unmatched_metrics(&typo, &outcomes), ["tabel3"]);
}

#[test]
fn flattening_names_numbers_by_path_and_leaves_text_out() {
    let summary = serde_json::json!({
        "suite": "x", "title": "t", "device": "d", "notes": ["n"],
        "tables": [{"rows": [["1"]]}],
        "flagged_runs": [{"max_share": 0.9}],
        "table3": {"rw_ms": 1.5, "partitions": null, "label": "text"},
        "findings": [{"measured": 2.0, "text": "x"}, {"measured": null}],
        "ok": true,
    });
    let all = table::flatten_summary(&summary, None);
    let names: Vec<&str> = all.iter().map(|(k, _)| k.as_str()).collect();
    assert_eq!(
        names,
        [
            "findings.0.measured",
            "findings.1.measured",
            "ok",
            "table3.partitions",
            "table3.rw_ms"
        ]
    );
    assert_eq!(all[0].1, Some(2.0));
    assert_eq!(all[1].1, None);
    assert_eq!(all[2].1, Some(1.0));
    let some = table::flatten_summary(&summary, Some(&["table3.rw_ms".into(), "find".into()]));
    assert_eq!(some, vec![("table3.rw_ms".to_string(), Some(1.5))]);
}

#[test]
fn bad_suite_workloads_are_one_line_naming_the_fix() {
    let cases = [
        (
            GRID.replace("name = \"uflip\"", "name = \"uflips\""),
            "unknown suite 'uflips'; use one of uflip, chen09",
        ),
        (
            GRID.replace("name = \"uflip\"", "name = \"uflips\""),
            "did you mean 'uflip'?",
        ),
        (
            GRID.replace("name = \"uflip\"", "name = \"wang11-oltp\""),
            "does not run on the executor",
        ),
        (
            GRID.replace("max_ios = 1024", "max_io = 1024"),
            "[suite] uflip has no option `max_io`; its options are benchmarks, bound",
        ),
        (
            GRID.replace("max_ios = 1024", "max_ios = \"lots\""),
            "max_ios",
        ),
        (
            GRID.replace("max_ios = 1024", "seed = 3"),
            "use the grid's seeds = [...]",
        ),
        (
            GRID.replace(
                "[\"granularity\", \"locality\"]",
                "[\"granularity\", \"localty\"]",
            ),
            "unknown micro-benchmark 'localty'",
        ),
        (
            GRID.replace("quick = true", "quick = true\nfast = true"),
            "unknown key `fast` in [suite]; it has name, quick, options, metrics",
        ),
        (
            GRID.replace("[suite]", "[trace]\npath = \"t\"\n[suite]"),
            "more than one workload",
        ),
        (
            GRID.replace("quick = true", "quick = true\ntime_based = true"),
            "[suite] time_based repeats each run until [suite] runtime; add e.g. runtime = \"10s\"",
        ),
        (
            GRID.replace("quick = true", "quick = true\nruntime = \"0\""),
            "[suite] runtime 0 runs nothing",
        ),
        (
            // uFLIP's measured runs stop when their mean is known.
            GRID.replace(
                "quick = true",
                "quick = true\nruntime = \"1s\"\ntime_based = true",
            ),
            "[suite] time_based: uflip run ",
        ),
    ];
    for (text, want) in cases {
        let e = grid(&text).unwrap_err().to_string();
        assert!(e.contains(want), "{want:?} not in: {e}");
        assert_eq!(e.lines().count(), 1, "{e}");
        assert!(e.len() < 600, "{e}");
        assert!(e.starts_with("g.toml"), "{e}");
    }
}

#[cfg(feature = "parquet")]
#[test]
fn a_suite_grid_as_parquet_has_the_csv_columns_with_summary_values_as_doubles() {
    use parquet::file::reader::{FileReader, SerializedFileReader};
    use parquet::record::RowAccessor;

    let g = grid(GRID).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let outcomes = local::run_local(&g, dir.path(), 2, &tool(), &|_| {});
    for o in &outcomes {
        assert_eq!(o.status, PointStatus::Ok, "{:?}", o.error);
    }
    let path = dir.path().join("sweep.parquet");
    table::save_parquet(&path, &g, &outcomes).unwrap();
    let reader = SerializedFileReader::new(std::fs::File::open(&path).unwrap()).unwrap();
    let meta = reader.metadata();
    assert_eq!(meta.file_metadata().num_rows(), 2);
    let schema = meta.file_metadata().schema_descr();
    let names: Vec<String> = (0..schema.num_columns())
        .map(|i| schema.column(i).name().to_string())
        .collect();
    assert_eq!(names, table::columns(&g, &outcomes));
    let at = |name: &str| names.iter().position(|n| n == name).unwrap();
    assert_eq!(
        schema
            .column(at("table3.rw_ms"))
            .physical_type()
            .to_string(),
        "DOUBLE"
    );
    // The Parquet values are the CSV's, row by row.
    let text = csv(&g, &outcomes);
    let csv_rows: Vec<Vec<&str>> = text
        .lines()
        .skip(1)
        .map(|l| l.split(',').collect())
        .collect();
    for (i, row) in reader.get_row_iter(None).unwrap().enumerate() {
        let row = row.unwrap();
        for m in ["table3.sr_ms", "table3.rw_ms"] {
            let from_csv: f64 = csv_rows[i][at(m)].parse().unwrap();
            assert_eq!(row.get_double(at(m)).unwrap(), from_csv, "{m}, row {i}");
        }
        assert_eq!(row.get_string(at("run")).unwrap(), "uflip");
    }
}

#[test]
fn a_suite_option_is_a_parameter_and_a_bad_one_refuses_the_grid() {
    let g = grid(&GRID.replace("op = [0.15, 0.3]", "suite.max_ios = [1024, 2048]")).unwrap();
    let p = g.point(1);
    assert_eq!(p.device, "ssd-m,capacity=128MiB,channels=2,cache=off");
    let flashlab_sweep::WorkloadSpec::Suite(s) = p.workload(&g.workload).unwrap() else {
        panic!("a suite grid runs a suite")
    };
    assert_eq!(s.options["max_ios"], 2048);
    let e = grid(&GRID.replace("op = [0.15, 0.3]", "suite.max_iops = [1024]")).unwrap_err();
    assert!(e.is_user_error());
    assert!(e.to_string().contains("no option `max_iops`"), "{e}");
}

#[test]
fn a_suite_runtime_caps_every_run_of_each_point_as_the_cli_does() {
    // fio's runtime over the whole suite: each run stops after 20 ms of
    // device time, far below its IO count's worth.
    let g = grid(&GRID.replace("quick = true", "quick = true\nruntime = \"20ms\"")).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let outcomes = local::run_local(&g, dir.path(), 1, &tool(), &|_| {});
    assert_eq!(
        outcomes[0].status,
        PointStatus::Ok,
        "{:?}",
        outcomes[0].error
    );
    let results = ResultsDir::open(&outcomes[0].results_dir).unwrap();
    let runs = &results.manifest().runs;
    assert!(!runs.is_empty());
    for run in runs {
        let flashlab_results::Workload::Pattern(spec) = &run.workload else {
            panic!("{}: not a pattern run", run.name)
        };
        assert_eq!(spec.runtime_ns, Some(20_000_000), "{}", run.name);
    }
}
