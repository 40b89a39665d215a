//! `flashlab report`, `flashlab run --report` and `flashlab export --format
//! parquet`, as a user runs them: two small uFLIP suites on two simulated
//! devices compared (Markdown: Table 3 side by side; HTML: every chart drawn
//! from data), a single run's report, and one-line errors.

mod common;

use common::{flashlab, ok, scratch, small_uflip, SMALL_UFLIP_ONLY};
use std::path::Path;

fn uflip(dir: &Path, name: &str, device: &str) {
    let mut args = vec!["suite", "uflip", "--device", device, "--results", name];
    args.extend_from_slice(&small_uflip(SMALL_UFLIP_ONLY));
    ok(&flashlab(&args, dir));
}

/// Static checks of a page: every chart titled and with something drawn.
fn check_charts(html: &str) -> usize {
    let charts: Vec<&str> = html.split("<svg class=\"chart\"").skip(1).collect();
    for c in &charts {
        let c = &c[..c.find("</svg>").unwrap()];
        assert!(c.contains("<title"), "untitled chart");
        assert!(
            !c.contains(">no data</text>"),
            "empty chart: {}",
            &c[..c.len().min(300)]
        );
        assert!(c.contains("class=\"series\""), "chart without series");
    }
    assert!(
        !html.contains("http:") && !html.contains("https:") && !html.contains("src="),
        "the page refers to something outside it"
    );
    charts.len()
}

#[test]
fn report_compares_two_uflip_suites() {
    let dir = scratch();
    uflip(dir.path(), "m", "sim:ssd-m,capacity=1GiB");
    uflip(dir.path(), "h", "sim:ssd-h,capacity=1GiB");

    // Markdown on stdout: the side-by-side Table 3 with a row per device.
    let md = ok(&flashlab(
        &["report", "m", "h", "--format", "md"],
        dir.path(),
    ));
    let t3 = &md[md
        .find("### uFLIP Table 3, side by side")
        .expect("side-by-side Table 3")..];
    assert!(t3.contains("| Device | SR | RR | SW | RW | Pause RW (ms) | Locality RW | Partitions | Reverse | In-place | Large Incr |"), "{t3}");
    let rows: Vec<&str> = t3
        .lines()
        .skip_while(|l| !l.starts_with("| Device"))
        .skip(2)
        .take_while(|l| l.starts_with('|'))
        .collect();
    assert_eq!(rows.len(), 2, "{t3}");
    assert!(
        rows[0].starts_with("| sim:ssd-m") && rows[1].starts_with("| sim:ssd-h"),
        "{rows:?}"
    );
    assert!(md.contains("uFLIP design hints, side by side"));
    assert!(
        md.contains("### uFLIP Table 3 row"),
        "each device's own row"
    );

    // HTML, default file name in the current directory.
    let out = flashlab(&["report", "m", "h"], dir.path());
    ok(&out);
    let html = std::fs::read_to_string(dir.path().join("report.html")).unwrap();
    let n = check_charts(&html);
    for title in [
        "uFLIP micro-benchmark 1 (Granularity)",
        "uFLIP micro-benchmark 3 (Locality)",
        "uFLIP micro-benchmark 5 (Order)",
        "uFLIP micro-benchmark 7 (Mix)",
        "uFLIP Figures 3-5: latency over IO number, RW baseline calibration run",
        "device by device",
    ] {
        assert!(html.contains(title), "no chart {title}");
    }
    // Overlaid curves carry one legend entry per device.
    let overlay = &html[html.find("device by device</title>").unwrap()..];
    let overlay = &overlay[..overlay.find("</svg>").unwrap()];
    assert!(
        overlay.contains(">sim:ssd-m,capacity=1GiB</text>")
            && overlay.contains(">sim:ssd-h,capacity=1GiB</text>"),
        "legend per device"
    );
    assert!(n > 40, "{n} charts");

    // JSON to a file.
    ok(&flashlab(
        &["report", "m", "--format", "json", "--output", "r.json"],
        dir.path(),
    ));
    let v: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dir.path().join("r.json")).unwrap()).unwrap();
    assert_eq!(v["format"], "flashlab-report/1");
    let sections = v["devices"][0]["sections"].as_array().unwrap();
    assert!(sections.iter().any(|s| s["id"] == "uflip-table3"));
}

#[test]
fn run_report_shows_the_runs_time_series_cdf_and_histogram() {
    let dir = scratch();
    let out = flashlab(
        &[
            "run",
            "--device",
            "sim:ssd-m,capacity=1GiB",
            "--pattern",
            "RW",
            "--io-size",
            "4KiB",
            "--io-count",
            "3000",
            "--io-ignore",
            "100",
            "--results",
            "res",
            "--report",
            "out.html",
            "--quiet",
        ],
        dir.path(),
    );
    // --quiet: stdout is the runs table alone; where the report went is said on stderr.
    let text = ok(&out);
    assert!(!text.contains("report:"), "{text}");
    let said = String::from_utf8_lossy(&out.stderr);
    assert!(said.contains("report: out.html"), "{said}");
    let html = std::fs::read_to_string(dir.path().join("out.html")).unwrap();
    assert_eq!(check_charts(&html), 3, "time series, CDF, histogram");
    for t in [
        "Latency over IO number, run RW",
        "Latency CDF, run RW",
        "Latency histogram, run RW",
    ] {
        assert!(html.contains(t), "{t}");
    }
    // Markdown by extension; and a report of the same directory later.
    ok(&flashlab(
        &[
            "run",
            "--device",
            "sim:ssd-m,capacity=1GiB",
            "--pattern",
            "SR",
            "--io-count",
            "200",
            "--results",
            "res2",
            "--report",
            "out.md",
            "--quiet",
        ],
        dir.path(),
    ));
    assert!(std::fs::read_to_string(dir.path().join("out.md"))
        .unwrap()
        .contains("| SR |"));
    let md = ok(&flashlab(&["report", "res", "--format", "md"], dir.path()));
    assert!(md.contains("### Latency distribution"), "{md}");
}

#[test]
fn report_errors_are_one_line_with_exit_2() {
    let dir = scratch();
    for (args, expected) in [
        (vec!["report", "nope"], "nope does not exist"),
        (vec!["report"], "no results directory given"),
        (vec!["report", ".", "--format", "pdf"], "pdf"),
    ] {
        let out = flashlab(&args, dir.path());
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
        assert_eq!(err.trim().lines().count(), 1, "{args:?}: {err}");
        assert!(err.contains(expected), "{args:?}: {err}");
    }
    let out = flashlab(&["report", "."], dir.path());
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("no manifest.json"));
}

#[test]
fn parquet_export_needs_the_feature() {
    let dir = scratch();
    ok(&flashlab(
        &[
            "run",
            "--device",
            "sim:ssd-m,capacity=1GiB",
            "--pattern",
            "RR",
            "--io-count",
            "500",
            "--results",
            "res",
            "--quiet",
        ],
        dir.path(),
    ));
    let out = flashlab(
        &[
            "export",
            "res",
            "--format",
            "parquet",
            "--output",
            "io.parquet",
        ],
        dir.path(),
    );
    if cfg!(feature = "parquet") {
        ok(&out);
        let bytes = std::fs::read(dir.path().join("io.parquet")).unwrap();
        assert!(bytes.starts_with(b"PAR1") && bytes.ends_with(b"PAR1"));
    } else {
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{err}");
        assert_eq!(err.trim().lines().count(), 1, "{err}");
        assert!(
            err.contains("cargo build --release --features parquet"),
            "{err}"
        );
    }
}
