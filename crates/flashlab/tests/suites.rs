//! The suites on the simulator. uflip runs end to end, and a suite
//! killed at random points and resumed ends with exactly the results of an
//! uninterrupted one: no completed run lost or repeated.

mod common;

use common::{fingerprint, flashlab, kill_at_fractions, scratch, small_uflip, SMALL_UFLIP_ONLY};
use std::path::Path;
use std::time::Instant;

const DEVICE: &str = "sim:ssd-m,capacity=1GiB";

/// The runs' bytes (statistics and device statistics per run: a resume
/// re-executes completed steps, whose counters must not leak into the next
/// run), the summary files whole, byte for byte (floats to the last digit),
/// and the summary's Table 3, hints and runs.
fn uflip_fingerprint(dir: &Path) -> Vec<(String, Vec<u8>)> {
    let mut out = fingerprint(
        dir,
        &[
            "uflip-summary.json",
            "uflip-summary.md",
            "figures.json",
            "suite.json",
        ],
    );
    let summary: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("uflip-summary.json")).unwrap())
            .unwrap();
    out.push((
        "table3".into(),
        serde_json::to_vec(&summary["table3"]).unwrap(),
    ));
    out.push((
        "hints".into(),
        serde_json::to_vec(&summary["hints"]).unwrap(),
    ));
    out.push(("runs".into(), serde_json::to_vec(&summary["runs"]).unwrap()));
    // The manifest's runs (workloads as run, statuses), compacted at the end.
    let manifest: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("manifest.json")).unwrap()).unwrap();
    out.push((
        "manifest runs".into(),
        serde_json::to_vec(&manifest["runs"]).unwrap(),
    ));
    assert!(!dir.join(flashlab_results::JOURNAL_FILE).exists());
    out
}

fn suite_args(results: &str) -> Vec<&str> {
    let mut v = vec!["suite", "uflip", "--device", DEVICE, "--results", results];
    v.extend_from_slice(&small_uflip(SMALL_UFLIP_ONLY));
    v
}

#[test]
fn uflip_runs_end_to_end_and_prints_table3_and_hints() {
    let dir = scratch();
    let out = flashlab(&suite_args("a"), dir.path());
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.contains("| Device | SR | RR | SW | RW | Pause RW (ms)"),
        "{text}"
    );
    assert!(text.contains("uFLIP design hints"), "{text}");
    let manifest: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dir.path().join("a/manifest.json")).unwrap())
            .unwrap();
    assert_eq!(manifest["suite"]["state_enforcement"], "random");
    let summary: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(dir.path().join("a/uflip-summary.json")).unwrap(),
    )
    .unwrap();
    for k in ["sr_ms", "rr_ms", "sw_ms", "rw_ms"] {
        assert!(summary["table3"][k].as_f64().unwrap() > 0.0, "{k}");
    }
    // Automatic IOIgnore/IOCount are recorded for every measured run.
    let runs = summary["runs"].as_object().unwrap();
    assert!(runs
        .values()
        .all(|r| r["io_count"].as_u64().unwrap() >= 64 && r["io_count"].as_u64().unwrap() <= 512));
    assert!(dir.path().join("a/uflip-summary.md").exists());
}

#[test]
fn dry_run_prints_the_plan_only() {
    let dir = scratch();
    let mut args = suite_args("d");
    args.push("--dry-run");
    let out = flashlab(&args, dir.path());
    assert!(out.status.success());
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.contains("enforce state")
            && text.contains("calibrate-RW")
            && text.contains("estimated duration"),
        "{text}"
    );
    assert!(!dir.path().join("d").exists());
}

#[test]
fn killed_and_resumed_suite_matches_an_uninterrupted_one() {
    let dir = scratch();
    let reference = flashlab(&suite_args("ref"), dir.path());
    assert!(
        reference.status.success(),
        "{}",
        String::from_utf8_lossy(&reference.stderr)
    );
    let started = Instant::now();
    // How long an uninterrupted suite takes here: kill points are spread over it.
    let full = {
        let t = Instant::now();
        let out = flashlab(&suite_args("timing"), dir.path());
        assert!(out.status.success());
        t.elapsed()
    };
    let _ = started;
    // Deterministic "random" kill points: fractions of the full duration.
    let fractions = [0.15, 0.35, 0.55, 0.8];
    let kills = kill_at_fractions(
        dir.path(),
        "resumed",
        &suite_args("resumed"),
        &["suite", "uflip", "--resume", "resumed", "--quiet"],
        full,
        &fractions,
        || {
            // Readable as it was left (manifest.json plus its journal).
            let show = flashlab(&["show", "resumed"], dir.path());
            assert!(
                show.status.success(),
                "{}",
                String::from_utf8_lossy(&show.stderr)
            );
        },
    );
    // Finish it.
    let out = flashlab(
        &["suite", "uflip", "--resume", "resumed", "--quiet"],
        dir.path(),
    );
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    eprintln!("killed {kills} times");
    assert!(kills >= 1, "the test must actually interrupt the suite");
    // Resuming a finished suite with --json prints its summary.
    let again = flashlab(
        &["suite", "uflip", "--resume", "resumed", "--json"],
        dir.path(),
    );
    assert!(again.status.success());
    let v: serde_json::Value = serde_json::from_slice(&again.stdout).unwrap();
    assert_eq!(v["suite"], "uflip");
    assert!(v["table3"]["sr_ms"].as_f64().is_some());
    let a = uflip_fingerprint(&dir.path().join("ref"));
    let b = uflip_fingerprint(&dir.path().join("resumed"));
    assert_eq!(a.len(), b.len());
    for ((na, ba), (nb, bb)) in a.iter().zip(&b) {
        assert_eq!(na, nb);
        assert!(ba == bb, "{na} differs after kill and resume");
    }
}

fn paper_suite(name: &str, extra: &[&str]) -> serde_json::Value {
    let dir = scratch();
    let mut args = vec![
        "suite",
        name,
        "--device",
        DEVICE,
        "--scale",
        "0.05",
        "--results",
        "r",
        "--quiet",
    ];
    args.extend_from_slice(extra);
    let out = flashlab(&args, dir.path());
    assert!(
        out.status.success(),
        "{name}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains(&format!("## {name} on {DEVICE}")), "{text}");
    assert!(dir.path().join(format!("r/{name}-summary.md")).exists());
    let v: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(dir.path().join(format!("r/{name}-summary.json"))).unwrap(),
    )
    .unwrap();
    let manifest: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dir.path().join("r/manifest.json")).unwrap())
            .unwrap();
    assert!(manifest["runs"]
        .as_array()
        .unwrap()
        .iter()
        .all(|r| r["status"] == "complete"));
    v
}

fn measured(v: &serde_json::Value, what: &str) -> f64 {
    v["findings"]
        .as_array()
        .unwrap()
        .iter()
        .find(|f| f["what"].as_str().unwrap().contains(what))
        .and_then(|f| f["measured"].as_f64())
        .unwrap_or_else(|| panic!("finding '{what}' measured"))
}

#[test]
fn chen09_runs_every_figure() {
    let v = paper_suite("chen09", &[]);
    let experiments: std::collections::BTreeSet<&str> = v["runs"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["experiment"].as_str().unwrap())
        .collect();
    for fig in [
        "fig1",
        "fig2",
        "fig3",
        "fig5-cache-off",
        "fig6",
        "fig7",
        "fig8a",
        "fig8b",
        "fig9",
    ] {
        assert!(experiments.contains(fig), "{fig} missing: {experiments:?}");
    }
    assert!(measured(&v, "before / after striker") > 0.0);
}

#[test]
fn wang11_measures_the_bathtub_and_outstanding_ios() {
    let v = paper_suite("wang11", &[]);
    assert!(measured(&v, "bathtub") > 0.0);
    assert!(measured(&v, "random reads: 30 / 1") > 0.0);
}

#[test]
fn hudlet11_reports_the_break_even_selectivity() {
    let v = paper_suite("hudlet11", &["--test-file-size", "64MiB"]);
    let s = measured(&v, "break-even selectivity (skip-sequential");
    assert!(s > 0.0 && s <= 1.0, "{s}");
    assert!(measured(&v, "QD2 / QD1") > 0.0);
}

#[test]
fn uflip_runs_on_a_file() {
    let dir = scratch();
    let out = flashlab(
        &[
            "suite",
            "uflip",
            "--device",
            "u.img",
            "--size",
            "64MiB",
            "--quick",
            "--only",
            "granularity,order",
            "--max-ios",
            "128",
            "--min-ios",
            "32",
            "--calibration-ios",
            "128",
            "--min-pause",
            "1ms",
            "--results",
            "r",
            "--quiet",
        ],
        dir.path(),
    );
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let summary: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(dir.path().join("r/uflip-summary.json")).unwrap(),
    )
    .unwrap();
    for k in ["sr_ms", "rr_ms", "sw_ms", "rw_ms"] {
        assert!(summary["table3"][k].as_f64().unwrap() > 0.0, "{k}");
    }
    let manifest: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dir.path().join("r/manifest.json")).unwrap())
            .unwrap();
    assert_eq!(manifest["device"]["kind"], "file");
    assert_eq!(manifest["device"]["clock"], "wall");
}
