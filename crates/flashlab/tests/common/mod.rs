//! What the CLI tests share: running the binary, reading its output, scratch
//! directories, a small uFLIP suite and a results directory's fingerprint.
//!
//! A test file adopts it with `mod common;` and `use common::{...};`. Each
//! test binary uses only some of these helpers, hence the `dead_code` allow.
#![allow(dead_code)]

use std::path::Path;
use std::process::{Command, Output};

/// Runs `flashlab ARGS` in `cwd` and returns what it did (any exit code).
pub fn flashlab(args: &[&str], cwd: &Path) -> Output {
    Command::new(env!("CARGO_BIN_EXE_flashlab"))
        .args(args)
        .current_dir(cwd)
        .output()
        .expect("flashlab runs")
}

/// The stdout of a command that must have succeeded (its stderr otherwise).
pub fn ok(o: &Output) -> String {
    assert!(
        o.status.success(),
        "exit {:?}: {}",
        o.status.code(),
        String::from_utf8_lossy(&o.stderr)
    );
    stdout(o)
}

pub fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

pub fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// Everything a command printed: stdout, then stderr.
pub fn text(o: &Output) -> String {
    format!("{}{}", stdout(o), stderr(o))
}

/// A directory removed when the test ends, under cargo's per-target tmp dir.
pub fn scratch() -> tempfile::TempDir {
    tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).expect("tempdir")
}

/// The flags of a uFLIP suite small enough for a test: the micro-benchmarks
/// `only` (comma-separated), runs of 64 to 512 IOs, quiet.
pub fn small_uflip(only: &str) -> [&str; 10] {
    [
        "--quick",
        "--only",
        only,
        "--max-ios",
        "512",
        "--min-ios",
        "64",
        "--calibration-ios",
        "512",
        "--quiet",
    ]
}

/// The micro-benchmarks most CLI tests run ([`small_uflip`]).
pub const SMALL_UFLIP_ONLY: &str = "granularity,locality,order,mix";

/// Every byte a results directory's runs produced (each run's
/// `records.bin` and `run.json`, which must all be complete), followed by
/// the named top-level files: two directories with equal fingerprints hold
/// the same results.
pub fn fingerprint(dir: &Path, files: &[&str]) -> Vec<(String, Vec<u8>)> {
    let manifest: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("manifest.json")).unwrap()).unwrap();
    let mut out = Vec::new();
    for run in manifest["runs"].as_array().unwrap() {
        assert_eq!(run["status"], "complete", "{}", run["name"]);
        let d = run["dir"].as_str().unwrap();
        for f in ["records.bin", "run.json"] {
            out.push((
                format!("{d}/{f}"),
                std::fs::read(dir.join(d).join(f)).unwrap(),
            ));
        }
    }
    for f in files {
        out.push((f.to_string(), std::fs::read(dir.join(f)).unwrap()));
    }
    out
}

/// Starts a suite into `RESULTS_NAME` under `dir` and SIGKILLs it at each
/// fraction of `full` (an uninterrupted suite's duration), resuming it
/// with `resume` for every start after the first; `after_kill` looks at the
/// directory as each attempt left it. Returns how many attempts were
/// actually killed (an attempt may finish first).
pub fn kill_at_fractions(
    dir: &Path,
    results_name: &str,
    start: &[&str],
    resume: &[&str],
    full: std::time::Duration,
    fractions: &[f64],
    mut after_kill: impl FnMut(),
) -> usize {
    use std::process::Stdio;
    use std::time::{Duration, Instant};
    let mut kills = 0;
    for (i, f) in fractions.iter().enumerate() {
        let args = if i == 0 { start } else { resume };
        let mut child = Command::new(env!("CARGO_BIN_EXE_flashlab"))
            .args(args)
            .current_dir(dir)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        // Wait for the suite's journal, then for the kill point.
        let journal = dir.join(results_name).join("suite.json");
        let t0 = Instant::now();
        while !journal.exists() && t0.elapsed() < Duration::from_secs(30) {
            std::thread::sleep(Duration::from_millis(5));
        }
        std::thread::sleep(full.mul_f64(*f));
        if child.try_wait().unwrap().is_none() {
            child.kill().unwrap(); // SIGKILL
            kills += 1;
        }
        child.wait().unwrap();
        after_kill();
    }
    kills
}
