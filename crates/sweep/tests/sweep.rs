//! Grids, points and tables as a user of `flashlab sweep` meets them.

use std::path::Path;

use flashlab_results::ToolInfo;
use flashlab_sweep::{local, run_point, table, Grid, ParamValue, PointStatus, SweepError};

const GRID: &str = r#"
name = "small"
device = "ssd-m,capacity=128MiB,channels=2,cache=off,prefill=on"
seeds = [1, 2]

[parameters]
op = [0.15, 0.3]
gc = ["greedy", "fifo"]

[[run]]
pattern = "RW"
io_size = "4KiB"
io_count = 8000
io_ignore = 2000
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

#[test]
fn points_are_the_product_of_parameters_and_seeds_in_a_fixed_order() {
    let g = grid(GRID).unwrap();
    assert_eq!(g.len(), 8);
    let points = g.points();
    // Keys alphabetical (gc before op), the last key then the seed vary fastest.
    let label = |i: usize| {
        let p = &points[i];
        format!("{}|{}|{}", p.params[0].1, p.params[1].1, p.seed)
    };
    assert_eq!(label(0), "greedy|0.15|1");
    assert_eq!(label(1), "greedy|0.15|2");
    assert_eq!(label(2), "greedy|0.3|1");
    assert_eq!(label(7), "fifo|0.3|2");
    assert_eq!(
        points[2].device,
        "ssd-m,capacity=128MiB,channels=2,cache=off,prefill=on,gc=greedy,op=0.3"
    );
}

#[test]
fn point_ids_depend_on_values_not_on_position() {
    let g = grid(GRID).unwrap();
    let more = grid(&GRID.replace("op = [0.15, 0.3]", "op = [0.1, 0.15, 0.3]")).unwrap();
    let p = g.points().into_iter().find(|p| p.index == 2).unwrap();
    let same = more
        .points()
        .into_iter()
        .find(|q| q.params == p.params && q.seed == p.seed)
        .unwrap();
    assert_ne!(same.index, p.index);
    assert_eq!(same.id, p.id);
    // Pinned: ids must not change between versions (a sweep resumes by id).
    assert_eq!(p.id, grid(GRID).unwrap().point(2).id);
    assert_eq!(p.id.len(), 16);
    let ids: std::collections::BTreeSet<_> = g.points().into_iter().map(|p| p.id).collect();
    assert_eq!(ids.len(), 8);
}

#[test]
fn bad_grids_are_one_line_naming_the_fix() {
    let cases = [
        (
            GRID.replace("seeds = [1, 2]", "seed = [1]"),
            "unknown key `seed`",
        ),
        (GRID.replace("op = [0.15, 0.3]", "opp = [0.15]"), "opp"),
        ("device = \"ssd-m\"\n".to_string(), "no workload"),
        (
            format!("{GRID}\n[trace]\npath = \"t\"\n"),
            "more than one workload",
        ),
        (
            GRID.replace("seeds = [1, 2]", "seeds = []"),
            "seeds is empty",
        ),
        // A [trace]'s settings are checked when the grid loads (the
        // workload's one check), named as the grid writes them.
        (
            "device = \"ssd-m\"\n[trace]\npath = \"t\"\nspeed = 0.0\n".to_string(),
            "[trace] speed 0 must be a positive number, e.g. speed = 2.0",
        ),
        (
            "device = \"ssd-m\"\n[trace]\npath = \"t\"\nclosed_loop = true\nspeed = 2.0\n"
                .to_string(),
            "[trace] speed applies to open-loop replay",
        ),
    ];
    for (text, expected) in cases {
        let e = grid(&text).unwrap_err();
        assert!(e.to_string().contains(expected), "{e}");
        assert!(e.is_user_error());
        assert_eq!(e.to_string().lines().count(), 1);
    }
    let values = grid(GRID).unwrap().parameters[1].1.clone();
    assert_eq!(
        values,
        vec![ParamValue::Float(0.15), ParamValue::Float(0.3)]
    );
}

#[test]
fn a_point_runs_into_its_own_directory_and_resumes_from_its_marker() {
    let g = grid(GRID).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let p = g.point(0);
    let first = run_point(&g, &p, dir.path(), &tool()).unwrap();
    assert_eq!(first.status, PointStatus::Ok);
    assert!(!first.resumed);
    assert_eq!(first.runs.len(), 1);
    assert_eq!(first.runs[0].ios, 6000);
    assert!(first.runs[0].write_amplification.unwrap() > 1.0);
    assert!(dir
        .path()
        .join("points")
        .join(&p.id)
        .join("results/runs/001-RW/records.bin")
        .exists());
    let again = run_point(&g, &p, dir.path(), &tool()).unwrap();
    assert!(again.resumed);
    assert_eq!(again.runs, first.runs);
}

const WORKLOAD_GRID: &str = r#"
name = "bs-x-qd"
device = "ssd-m,capacity=1GiB"
[parameters]
io_size = ["4KiB", "16KiB"]
op = [0.1]
queue_depth = [1, 4]
[[run]]
pattern = "SR"
io_count = 200
"#;

#[test]
fn a_grid_sweeps_workload_keys_as_well_as_simulator_keys() {
    let g = grid(WORKLOAD_GRID).unwrap();
    assert_eq!(g.len(), 4);
    // Keys alphabetical: io_size, op, queue_depth (the last varies fastest).
    let p = g.point(3);
    assert_eq!(
        p.device, "ssd-m,capacity=1GiB,op=0.1",
        "only simulator keys"
    );
    assert_eq!(
        p.workload_params,
        vec![
            ("io_size".to_string(), ParamValue::Str("16KiB".into())),
            ("queue_depth".to_string(), ParamValue::Int(4)),
        ]
    );
    // Points that differ only in their workload are different points.
    let ids: std::collections::HashSet<String> = g.points().into_iter().map(|p| p.id).collect();
    assert_eq!(ids.len(), 4);
    let dir = tempfile::tempdir().unwrap();
    let out = run_point(&g, &p, dir.path(), &tool()).unwrap();
    assert_eq!(out.status, PointStatus::Ok, "{:?}", out.error);
    let (manifest, _) = flashlab_results::read_manifest(&out.results_dir).unwrap();
    let spec = manifest.runs[0].workload.pattern().unwrap();
    assert_eq!(spec.primary.io_size_bytes, 16384);
    assert_eq!(spec.queue_depth, 4);
    // Run again: the marker records the applied workload, so it resumes.
    assert!(run_point(&g, &p, dir.path(), &tool()).unwrap().resumed);
}

#[test]
fn a_workload_parameter_of_the_wrong_type_refuses_the_grid() {
    let e = grid(&WORKLOAD_GRID.replace("queue_depth = [1, 4]", "queue_depth = [1, \"deep\"]"))
        .unwrap_err();
    assert!(e.is_user_error());
    assert!(e.to_string().contains("parameter queue_depth"), "{e}");
}

#[test]
fn a_point_keeps_the_cpu_time_of_its_thread_next_to_its_wall_time() {
    let g = grid(GRID).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let out = run_point(&g, &g.point(0), dir.path(), &tool()).unwrap();
    // The point ran on this thread: it used some CPU, and never more than
    // the wall time it took (a clock tick of slack for the two readings).
    assert!(out.cpu_s > 0.0, "cpu_s {}", out.cpu_s);
    assert!(
        out.cpu_s <= out.wall_s + 0.01,
        "cpu_s {} > wall_s {}",
        out.cpu_s,
        out.wall_s
    );
    let marker: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(
            dir.path()
                .join("points")
                .join(&g.point(0).id)
                .join("point.json"),
        )
        .unwrap(),
    )
    .unwrap();
    assert_eq!(marker["cpu_s"].as_f64(), Some(out.cpu_s));
}

#[test]
fn a_failing_point_is_reported_and_the_others_complete() {
    let g = grid(
        &GRID
            .replace("op = [0.15, 0.3]", "op = [0.01, 0.3]")
            .replace("seeds = [1, 2]", "seeds = [1]"),
    )
    .unwrap();
    let dir = tempfile::tempdir().unwrap();
    let outcomes = local::run_local(&g, dir.path(), 2, &tool(), &|_| {});
    assert_eq!(outcomes.len(), 4);
    for o in &outcomes {
        let op = &o.point.params[1].1;
        if *op == ParamValue::Float(0.01) {
            assert_eq!(o.status, PointStatus::Failed);
            assert!(o.error.as_deref().unwrap().contains("over-provisioning"));
        } else {
            assert_eq!(o.status, PointStatus::Ok, "{:?}", o.error);
        }
    }
    let mut csv = Vec::new();
    table::write_csv(&mut csv, &g, &outcomes).unwrap();
    let text = String::from_utf8(csv).unwrap();
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines.len(), 5);
    assert!(lines[0].starts_with("index,point,seed,gc,op,run,point_status,status,ios,"));
    assert!(
        lines[1].contains(",greedy,0.01,,failed,failed,"),
        "{}",
        lines[1]
    );
}

#[test]
fn the_same_grid_gives_the_same_table_on_any_number_of_threads() {
    let g = grid(GRID).unwrap();
    let (a, b) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let one = local::run_local(&g, a.path(), 1, &tool(), &|_| {});
    let two = local::run_local(&g, b.path(), 2, &tool(), &|_| {});
    let csv = |o| {
        let mut v = Vec::new();
        table::write_csv(&mut v, &g, o).unwrap();
        String::from_utf8(v).unwrap()
    };
    assert_eq!(csv(&one), csv(&two));
    // Different seeds are different experiments.
    assert_ne!(
        one[0].runs[0].latency_mean_ns,
        one[1].runs[0].latency_mean_ns
    );
}

#[cfg(feature = "parquet")]
#[test]
fn the_table_as_parquet_has_the_csv_columns_typed_by_content() {
    use parquet::file::reader::{FileReader, SerializedFileReader};

    let g = grid(&GRID.replace("op = [0.15, 0.3]", "op = [0.01, 0.3]")).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let outcomes = local::run_local(&g, dir.path(), 2, &tool(), &|_| {});
    let path = dir.path().join("sweep.parquet");
    table::save_parquet(&path, &g, &outcomes).unwrap();
    let reader = SerializedFileReader::new(std::fs::File::open(&path).unwrap()).unwrap();
    let meta = reader.metadata();
    assert_eq!(meta.file_metadata().num_rows(), 8);
    let schema = meta.file_metadata().schema_descr();
    let names: Vec<String> = (0..schema.num_columns())
        .map(|i| schema.column(i).name().to_string())
        .collect();
    assert_eq!(names, table::columns(&g, &outcomes));
    let kind = |name: &str| {
        let i = names.iter().position(|n| n == name).unwrap();
        schema.column(i).physical_type().to_string()
    };
    assert_eq!(kind("ios"), "INT64");
    assert_eq!(kind("op"), "DOUBLE");
    assert_eq!(kind("write_amplification"), "DOUBLE");
    assert_eq!(kind("gc"), "BYTE_ARRAY");
    assert_eq!(kind("error"), "BYTE_ARRAY");
}

#[test]
fn replicate_runs_the_chosen_pattern_runs_of_a_results_directory() {
    let dir = tempfile::tempdir().unwrap();
    let measured = dir.path().join("measured");
    let workload: flashlab_sweep::WorkloadSpec = serde_json::from_str(
        r#"{"kind": "patterns", "runs": [
            {"name": "SW", "pattern": "SW", "io_size": "4KiB", "io_count": 500},
            {"name": "RR", "pattern": "RR", "io_size": "4KiB", "io_count": 700}]}"#,
    )
    .unwrap();
    let base = "ssd-m,capacity=128MiB,channels=2,cache=off";
    let target = flashlab_sweep::simulate(base, 7, &workload, &measured, &tool()).unwrap();
    assert_eq!(target.len(), 2);

    // Every run, in order, on the same device and seed: the measured figures exactly.
    let all = format!("device = \"{base}\"\nseeds = [7]\nreplicate = \"measured\"\n");
    let g = Grid::parse(&all, "g.toml", dir.path(), "g").unwrap();
    let out = run_point(&g, &g.point(0), &dir.path().join("sweep0"), &tool()).unwrap();
    assert_eq!(out.status, PointStatus::Ok, "{:?}", out.error);
    assert_eq!(out.runs.len(), 2);
    for (got, want) in out.runs.iter().zip(&target) {
        assert_eq!(got.latency_mean_ns, want.stats.all.latency.mean_ns);
        assert_eq!(got.latency_p99_ns, want.stats.all.latency.p99_ns);
    }

    // Only RR (on a fresh device: it no longer follows SW's writes).
    let text = format!("{all}replicate_runs = [\"RR\"]\n");
    let g = Grid::parse(&text, "g.toml", dir.path(), "g").unwrap();
    let out = run_point(&g, &g.point(0), &dir.path().join("sweep"), &tool()).unwrap();
    assert_eq!(out.status, PointStatus::Ok, "{:?}", out.error);
    assert_eq!(out.runs.len(), 1);
    assert_eq!(out.runs[0].run, "RR");
    assert_eq!(out.runs[0].ios, 700);

    let bad = format!("{all}replicate_runs = [\"RX\"]\n");
    let g = Grid::parse(&bad, "g.toml", dir.path(), "g").unwrap();
    let out = run_point(&g, &g.point(0), &dir.path().join("sweep2"), &tool()).unwrap();
    assert_eq!(out.status, PointStatus::Failed);
    assert!(out.error.unwrap().contains("no pattern run named 'RX'"));
}

#[test]
fn a_grid_without_records_gives_the_same_metrics_with_histogram_percentiles_and_no_records_file() {
    let kept = grid(GRID).unwrap();
    let unkept = grid(&format!("records = false\n{GRID}")).unwrap();
    assert!(kept.records && !unkept.records);
    let (a, b) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let p = kept.point(0);
    let with = run_point(&kept, &p, a.path(), &tool()).unwrap();
    let without = run_point(&unkept, &p, b.path(), &tool()).unwrap();
    assert_eq!(without.status, PointStatus::Ok);
    let run_dir = |root: &Path| root.join("points").join(&p.id).join("results/runs/001-RW");
    assert!(run_dir(a.path()).join("records.bin").exists());
    assert!(!run_dir(b.path()).join("records.bin").exists());
    assert!(run_dir(b.path()).join("run.json").exists());
    let (w, o) = (&with.runs[0], &without.runs[0]);
    // The same simulation: counts, means, extremes and the device's
    // accounting are identical; only the percentiles are read off the
    // histogram instead of refined over the records.
    assert_eq!(
        (w.ios, w.iops, w.latency_mean_ns, w.latency_max_ns),
        (o.ios, o.iops, o.latency_mean_ns, o.latency_max_ns)
    );
    assert_eq!(w.write_amplification, o.write_amplification);
    assert_eq!(w.flash_programs, o.flash_programs);
    for (exact, approx) in [
        (w.latency_p50_ns, o.latency_p50_ns),
        (w.latency_p90_ns, o.latency_p90_ns),
        (w.latency_p99_ns, o.latency_p99_ns),
        (w.latency_p999_ns, o.latency_p999_ns),
    ] {
        let rel = (approx as f64 - exact as f64).abs() / exact as f64;
        assert!(rel <= 1.0 / 2048.0, "{approx} vs exact {exact}: {rel}");
    }
    // The manifest says so, and asking for the records says why there are none.
    let results =
        flashlab_results::ResultsDir::open(&b.path().join("points").join(&p.id).join("results"))
            .unwrap();
    assert!(!results.manifest().runs[0].records);
    let e = results.record_file(0).unwrap_err().to_string();
    assert!(e.contains("kept no per-IO records"), "{e}");
    // A point done with records is not reused by a grid without them.
    let again = run_point(&unkept, &p, a.path(), &tool()).unwrap();
    assert!(!again.resumed);
    assert!(!run_dir(a.path()).join("records.bin").exists());
    assert!(run_point(&unkept, &p, a.path(), &tool()).unwrap().resumed);
}

#[test]
fn records_false_is_refused_for_a_suite_grid() {
    let e = grid(
        "records = false\nname = \"s\"\ndevice = \"ssd-m,capacity=128MiB\"\n[suite]\nname = \"uflip\"\nquick = true\n",
    )
    .unwrap_err()
    .to_string();
    assert!(e.contains("records = false is for"), "{e}");
}
