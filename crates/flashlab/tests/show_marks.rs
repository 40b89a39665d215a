//! `flashlab show` marks the runs whose figures are not what they seem: a
//! run stopped by Ctrl-C (its figures cover part of it) and a suite's run
//! whose mean did not converge within the bound before its IO cap.

mod common;

use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use common::{flashlab, ok, scratch, stderr};

#[test]
fn a_suite_run_that_did_not_converge_is_marked_in_its_run_json_and_by_show() {
    let dir = scratch();
    // A bound no 64-IO run meets: every adaptive run stops at its cap.
    let out = flashlab(
        &[
            "suite",
            "uflip",
            "--device",
            "sim:ssd-m,capacity=1GiB",
            "--quick",
            "--only",
            "granularity",
            "--max-ios",
            "64",
            "--min-ios",
            "32",
            "--calibration-ios",
            "256",
            "--bound",
            "0.0001",
            "--results",
            "nc",
            "--quiet",
        ],
        dir.path(),
    );
    ok(&out);
    let err = stderr(&out);
    assert!(
        err.contains("runs did not converge within the bound"),
        "{err}"
    );
    let summary: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dir.path().join("nc/summary.json")).unwrap())
            .unwrap();
    let marked = summary["runs"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|r| {
            r["warnings"].as_array().is_some_and(|w| {
                w.iter().any(|w| {
                    w.as_str()
                        .unwrap()
                        .starts_with("did not converge: after 64 IOs")
                })
            })
        })
        .count();
    assert!(marked > 0, "no run.json says it did not converge");
    let shown = flashlab(&["show", "nc"], dir.path());
    ok(&shown);
    let text = String::from_utf8_lossy(&shown.stdout);
    assert_eq!(
        text.matches("[not converged]").count(),
        marked + 1,
        "each such run marked, and the legend: {text}"
    );
}

#[test]
fn show_marks_a_run_stopped_by_ctrl_c() {
    let dir = scratch();
    let mut child = Command::new(env!("CARGO_BIN_EXE_flashlab"))
        .args([
            "run",
            "--device",
            "sim:ssd-m,capacity=1GiB",
            "--pattern",
            "SW",
            "-n",
            "100000000",
            "-o",
            "cut",
            "--quiet",
        ])
        .current_dir(dir.path())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    // Once the run has records, as a user would press Ctrl-C.
    let records = dir.path().join("cut");
    let start = Instant::now();
    while !std::fs::read_dir(&records)
        .map(|d| d.count() > 1)
        .unwrap_or(false)
    {
        assert!(start.elapsed() < Duration::from_secs(60));
        std::thread::sleep(Duration::from_millis(50));
    }
    std::thread::sleep(Duration::from_millis(500));
    let status = Command::new("kill")
        .args(["-INT", &child.id().to_string()])
        .status()
        .unwrap();
    assert!(status.success());
    assert_eq!(child.wait().unwrap().code(), Some(130));
    let shown = flashlab(&["show", "cut"], dir.path());
    ok(&shown);
    let text = String::from_utf8_lossy(&shown.stdout);
    assert!(text.contains("SW [interrupted]"), "{text}");
    assert!(
        text.contains("[interrupted]: stopped before its last IO"),
        "{text}"
    );
}
