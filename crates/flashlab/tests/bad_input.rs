//! Bad input is refused, never misread: every case of the corpus in
//! `tests/bad_input/cases.txt` (malformed traces, pattern files, profiles,
//! flags) must end in exit code 2 with one short line naming the problem,
//! never a panic, a silent acceptance or unbounded memory. Also: a closed
//! stdout ends a command quietly, and long pattern files stay linear.

mod common;

use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use common::scratch;

fn corpus() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/bad_input")
}

#[test]
fn every_malformed_input_of_the_corpus_is_one_line_and_exit_2() {
    let dir = corpus();
    let cases = std::fs::read_to_string(dir.join("cases.txt")).unwrap();
    let mut failures = Vec::new();
    let mut n = 0;
    for line in cases
        .lines()
        .filter(|l| !l.trim().is_empty() && !l.starts_with('#'))
    {
        n += 1;
        let (expected, args) = line.split_once('\t').expect("expected<TAB>args");
        let args: Vec<String> = args
            .split_whitespace()
            .map(|a| a.replace("{dir}", dir.to_str().unwrap()))
            .collect();
        let cwd = scratch();
        let out = Command::new(env!("CARGO_BIN_EXE_flashlab"))
            .args(&args)
            .current_dir(cwd.path())
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        let ok = out.status.code() == Some(2)
            && err.ends_with('\n')
            && err.lines().count() == 1
            && err.starts_with("error: ")
            && err.contains(expected)
            && !err.contains("panicked")
            && err.len() <= 600 + "error: \n".len()
            && !cwd.path().join("results").exists();
        if !ok {
            failures.push(format!(
                "{args:?}: exit {:?}, expected '{expected}', stderr ({} bytes): {}",
                out.status.code(),
                err.len(),
                err.chars().take(300).collect::<String>()
            ));
        }
    }
    assert!(n >= 35, "the corpus lists {n} cases");
    assert!(
        failures.is_empty(),
        "{} of {n} cases failed:\n{}",
        failures.len(),
        failures.join("\n")
    );
}

/// Starts flashlab with its stdout a pipe whose reader is already gone.
fn with_closed_stdout(args: &[&str], cwd: &Path) -> (Option<i32>, String) {
    let mut child = Command::new(env!("CARGO_BIN_EXE_flashlab"))
        .args(args)
        .current_dir(cwd)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    drop(child.stdout.take()); // the reader closes before the first write
    let mut err = String::new();
    child
        .stderr
        .take()
        .unwrap()
        .read_to_string(&mut err)
        .unwrap();
    (child.wait().unwrap().code(), err)
}

#[test]
fn a_closed_stdout_ends_dry_runs_and_exports_quietly_with_exit_0() {
    let dir = scratch();
    let dry = [
        "run",
        "--device",
        "sim:ssd-m,capacity=1GiB",
        "--pattern",
        "RW",
        "--io-count",
        "100",
        "--dry-run",
    ];
    assert_eq!(
        with_closed_stdout(&dry, dir.path()),
        (Some(0), String::new())
    );
    let made = Command::new(env!("CARGO_BIN_EXE_flashlab"))
        .args([
            "run",
            "-q",
            "--device",
            "sim:ssd-m,capacity=1GiB",
            "--pattern",
            "RW",
            "--io-count",
            "20000",
            "--results",
            "r",
        ])
        .current_dir(dir.path())
        .output()
        .unwrap();
    assert!(made.status.success());
    assert_eq!(
        with_closed_stdout(&["export", "r"], dir.path()),
        (Some(0), String::new())
    );
    assert_eq!(
        with_closed_stdout(&["show", "r"], dir.path()),
        (Some(0), String::new())
    );
}

fn run_creating(dir: &Path, size: &str) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_flashlab"))
        .args([
            "run",
            "-q",
            "--device",
            "t.img",
            "--size",
            size,
            "--pattern",
            "RR",
            "--io-count",
            "10",
            "--results",
            "r",
        ])
        .current_dir(dir)
        .output()
        .unwrap()
}

#[test]
fn a_file_target_whose_creation_was_killed_is_detected_and_created_again() {
    let dir = scratch();
    // Kill a creation mid-fill (1 GiB takes seconds to fill): the target's
    // name must not exist, only the partial file.
    let mut child = Command::new(env!("CARGO_BIN_EXE_flashlab"))
        .args([
            "run",
            "-q",
            "--device",
            "t.img",
            "--size",
            "1GiB",
            "--pattern",
            "RR",
            "--io-count",
            "10",
            "--results",
            "r0",
        ])
        .current_dir(dir.path())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let partial = dir.path().join(".t.img.flashlab-partial");
    let t0 = std::time::Instant::now();
    while !partial.exists() && t0.elapsed() < std::time::Duration::from_secs(60) {
        std::thread::sleep(std::time::Duration::from_millis(5));
    }
    child.kill().unwrap();
    child.wait().unwrap();
    assert!(partial.exists(), "the fill happens under the partial name");
    assert!(
        !dir.path().join("t.img").exists(),
        "a half-filled file never takes the target's name"
    );

    // The next run notices, says so, and creates the file afresh.
    let out = run_creating(dir.path(), "1MiB");
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{err}");
    assert!(err.contains("was interrupted"), "{err}");
    assert!(!partial.exists());
    let data = std::fs::read(dir.path().join("t.img")).unwrap();
    assert_eq!(data.len(), 1 << 20);
    assert!(
        data[data.len() - 4096..].iter().any(|&b| b != 0),
        "filled to the end"
    );
}

#[test]
fn a_pattern_file_of_2000_runs_completes_with_every_run_summarized() {
    // 2000 tiny runs on the simulator (they took 150 s when every run
    // re-planned and re-summarized all the others). Not timed: a benchmark
    // prints times; this checks the outcome of the batched planning and the
    // final summary.
    let dir = scratch();
    let mut text = String::from("[defaults]\nio_size = \"4KiB\"\nio_count = 2\npattern = \"SR\"\n");
    for i in 0..2000 {
        text.push_str(&format!("[[run]]\nname = \"r{i}\"\n"));
    }
    std::fs::write(dir.path().join("p.toml"), text).unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_flashlab"))
        .args([
            "run",
            "-q",
            "--device",
            "sim:ssd-m,capacity=1GiB",
            "--pattern-file",
            "p.toml",
            "--results",
            "r",
        ])
        .current_dir(dir.path())
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let summary: serde_json::Value =
        serde_json::from_slice(&std::fs::read(dir.path().join("r/summary.json")).unwrap()).unwrap();
    let runs = summary["runs"].as_array().unwrap();
    assert_eq!(runs.len(), 2000, "summary.json has every run at the end");
    assert_eq!(runs[1999]["name"], "r1999");
}
