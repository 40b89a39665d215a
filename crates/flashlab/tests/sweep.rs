//! `flashlab sweep` as a user meets it: the table, resuming, a failing point, bad grids.

mod common;

use common::flashlab;

const GRID: &str = r#"
device = "ssd-m,capacity=128MiB,channels=2,cache=off,prefill=on"
seeds = [1]
[parameters]
op = [0.01, 0.15, 0.3]
[[run]]
pattern = "RW"
io_size = "4KiB"
io_count = 4000
"#;

#[test]
fn sweep_writes_one_row_per_point_reports_a_failing_point_and_resumes() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("g.toml"), GRID).unwrap();
    let out = flashlab(&["sweep", "g.toml", "--jobs", "2"], dir.path());
    let err = String::from_utf8_lossy(&out.stderr);
    // op=0.01 leaves too few spare blocks: that point fails, the others complete.
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(err.contains("failed: profile"), "{err}");
    assert!(err.contains("1 of 3 points failed"), "{err}");
    let csv = std::fs::read_to_string(dir.path().join("results/sweep-g/sweep.csv")).unwrap();
    let rows: Vec<&str> = csv.lines().collect();
    assert_eq!(rows.len(), 4, "{csv}");
    assert!(rows[1].contains(",0.01,,failed,failed,"), "{}", rows[1]);
    assert!(
        rows[2].contains(",0.15,RW,ok,complete,4000,"),
        "{}",
        rows[2]
    );
    assert!(rows[3].contains(",0.3,RW,ok,complete,4000,"), "{}", rows[3]);

    // Again: the two finished points are skipped, the failed one is retried.
    let again = flashlab(&["sweep", "g.toml"], dir.path());
    let text = String::from_utf8_lossy(&again.stdout);
    assert!(
        text.contains("3 points: 1 ran, 2 already done, 1 failed"),
        "{text}"
    );
    let csv2 = std::fs::read_to_string(dir.path().join("results/sweep-g/sweep.csv")).unwrap();
    assert_eq!(csv, csv2);
}

#[test]
fn a_bad_grid_is_one_line_and_exit_code_2() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("g.toml"),
        GRID.replace("seeds = [1]", "seeds = [1]\nworkers = 3"),
    )
    .unwrap();
    for args in [
        &["sweep", "g.toml"][..],
        &["sweep", "missing.toml"],
        &["sweep", "g.toml", "--jobs", "0"],
    ] {
        let out = flashlab(args, dir.path());
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
        assert_eq!(err.trim_end().lines().count(), 1, "{err}");
    }
    let out = flashlab(&["sweep", "g.toml"], dir.path());
    assert!(String::from_utf8_lossy(&out.stderr).contains("unknown key `workers`"));
}

/// A pattern no point could run is refused when the grid loads (not once
/// per point), its parameter named as the grid writes it (issue 34 item 1).
#[test]
fn a_grid_whose_pattern_no_point_can_run_is_refused_when_it_loads() {
    let dir = tempfile::tempdir().unwrap();
    for (name, grid, want) in [
        (
            "size.toml",
            GRID.replace("io_size = \"4KiB\"", "io_size = \"1000\""),
            r#"use e.g. io_size = "4KiB""#,
        ),
        (
            "qd.toml",
            GRID.replace("op = [0.01, 0.15, 0.3]", "queue_depth = [1, 0]"),
            "parameter queue_depth = 0: queue depth must be at least 1; pass queue_depth = 1 or more",
        ),
    ] {
        std::fs::write(dir.path().join(name), grid).unwrap();
        let out = flashlab(&["sweep", name], dir.path());
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{err}");
        assert_eq!(err.trim_end().lines().count(), 1, "{err}");
        assert!(err.contains(want), "{err}");
        assert!(!err.contains("--"), "no command-line flag in a grid's message: {err}");
        assert!(!dir.path().join("results").exists(), "no point ran: {err}");
    }
}

/// A reduced uFLIP on two devices (op 0.15 and 0.3).
const SUITE_GRID: &str = r#"
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

#[test]
fn a_suite_sweep_point_is_the_suite_the_cli_runs_and_reports_like_it() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("g.toml"), SUITE_GRID).unwrap();
    let out = flashlab(&["sweep", "g.toml", "--jobs", "2", "--quiet"], dir.path());
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let csv = std::fs::read_to_string(dir.path().join("results/sweep-g/sweep.csv")).unwrap();
    assert_eq!(csv.lines().count(), 3, "{csv}");
    assert!(csv.lines().next().unwrap().contains(",table3.rw_ms,"));

    // The op=0.3 point against `flashlab suite uflip` with the same settings.
    // (which point is which: the sweep's own marker, point.json)
    let point = std::fs::read_dir(dir.path().join("results/sweep-g/points"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .find(|p| {
            let marker: serde_json::Value =
                serde_json::from_str(&std::fs::read_to_string(p.join("point.json")).unwrap())
                    .unwrap();
            marker["point"]["device"]
                .as_str()
                .unwrap()
                .ends_with(",op=0.3")
        })
        .unwrap()
        .join("results");
    let cli = flashlab(
        &[
            "suite",
            "uflip",
            "--device",
            "sim:ssd-m,capacity=128MiB,channels=2,cache=off,op=0.3",
            "--quick",
            "--seed",
            "7",
            "--only",
            "granularity,locality",
            "--calibration-ios",
            "512",
            "--max-ios",
            "1024",
            "--results",
            "cli",
            "--quiet",
            "--json",
        ],
        dir.path(),
    );
    assert!(
        cli.status.success(),
        "{}",
        String::from_utf8_lossy(&cli.stderr)
    );
    for file in [
        "uflip-summary.json",
        "uflip-summary.md",
        "figures.json",
        "plan.json",
        "suite.json",
    ] {
        let a = std::fs::read_to_string(point.join(file)).unwrap();
        let b = std::fs::read_to_string(dir.path().join("cli").join(file)).unwrap();
        assert_eq!(a, b, "{file} differs between the sweep point and the CLI");
    }
    // ...and `flashlab report` reads a point's directory.
    let report = flashlab(
        &["report", point.to_str().unwrap(), "--output", "r.html"],
        dir.path(),
    );
    assert!(
        report.status.success(),
        "{}",
        String::from_utf8_lossy(&report.stderr)
    );
}

#[test]
fn a_bad_suite_in_a_grid_is_one_line_and_exit_code_2() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("g.toml"),
        SUITE_GRID.replace("name = \"uflip\"", "name = \"uflp\""),
    )
    .unwrap();
    let out = flashlab(&["sweep", "g.toml"], dir.path());
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert_eq!(err.trim_end().lines().count(), 1, "{err}");
    assert!(
        err.contains("unknown suite 'uflp'; use one of uflip"),
        "{err}"
    );
}

/// fio-plot's "vary the block size / queue depth" view from flashlab's own
/// report (issue 34 item 2): `flashlab report` on a sweep directory charts
/// each metric against each swept workload key, a line per value of the
/// other key, sizes in numeric order on a log axis, and names the best point
/// first. The numbers in it are the table's.
#[test]
fn a_sweep_report_charts_each_metric_against_each_swept_key() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("sizes.toml"),
        r#"
device = "ssd-m,capacity=1GiB,prefill=on"
seeds = [1]
[parameters]
io_size = ["64KiB", "4KiB", "16KiB"]
queue_depth = [1, 4]
[[run]]
pattern = "RR"
io_count = 300
"#,
    )
    .unwrap();
    let out = flashlab(&["sweep", "sizes.toml", "-o", "sw", "-q"], dir.path());
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let out = flashlab(
        &["report", "sw", "--format", "json", "--output", "r.json"],
        dir.path(),
    );
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let report: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dir.path().join("r.json")).unwrap()).unwrap();
    let sections = report["sections"].as_array().unwrap();
    let charts = sections
        .iter()
        .flat_map(|s| s["charts"].as_array().unwrap())
        .collect::<Vec<_>>();
    let titles: Vec<&str> = charts
        .iter()
        .map(|c| c["title"].as_str().unwrap())
        .collect();
    for want in [
        "IOPS by io_size",
        "p99 latency by io_size",
        "IOPS by queue_depth",
    ] {
        assert!(titles.contains(&want), "{titles:?}");
    }
    let by_size = charts
        .iter()
        .find(|c| c["title"] == "IOPS by io_size")
        .unwrap();
    assert_eq!(
        by_size["x"]["scale"], "log",
        "4 KiB to 64 KiB is a factor of 16"
    );
    assert_eq!(by_size["x"]["unit"], "bytes");
    let labels: Vec<&str> = by_size["series"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["label"].as_str().unwrap())
        .collect();
    assert_eq!(labels, ["queue_depth=1", "queue_depth=4"]);
    // The QD4 line's points, in size order, are the table's IOPS.
    let csv = std::fs::read_to_string(dir.path().join("sw/sweep.csv")).unwrap();
    let header: Vec<&str> = csv.lines().next().unwrap().split(',').collect();
    let col = |n: &str| header.iter().position(|h| *h == n).unwrap();
    let iops_at = |size: &str, qd: &str| -> f64 {
        csv.lines()
            .skip(1)
            .map(|l| l.split(',').collect::<Vec<_>>())
            .find(|c| c[col("io_size")] == size && c[col("queue_depth")] == qd)
            .unwrap()[col("iops")]
        .parse()
        .unwrap()
    };
    let qd4 = &by_size["series"][1]["shapes"][0]["points"];
    let points: Vec<(f64, f64)> = qd4
        .as_array()
        .unwrap()
        .iter()
        .map(|p| (p[0].as_f64().unwrap(), p[1].as_f64().unwrap()))
        .collect();
    let want: Vec<(f64, f64)> = [("4KiB", 4096.0), ("16KiB", 16384.0), ("64KiB", 65536.0)]
        .iter()
        .map(|(s, b)| (*b, iops_at(s, "4")))
        .collect();
    assert_eq!(points, want);
    // The best IOPS comes first, at its point.
    let best = &sections[0]["tables"][0]["rows"][0];
    assert_eq!(best[0], "highest IOPS");
    let top = ["4KiB", "16KiB", "64KiB"]
        .iter()
        .flat_map(|s| ["1", "4"].map(|q| (iops_at(s, q), format!("io_size={s}, queue_depth={q}"))))
        .max_by(|a, b| a.0.total_cmp(&b.0))
        .unwrap();
    assert_eq!(best[2], top.1.as_str());
    // --run names a run the sweep does not have: one line naming those it has.
    let out = flashlab(&["report", "sw", "--run", "SW"], dir.path());
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("no run named SW") && err.contains("RR"),
        "{err}"
    );
}
