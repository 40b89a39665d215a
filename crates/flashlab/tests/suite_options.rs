//! The options every suite shares mean the same thing everywhere: `--quick`,
//! `--results`, `--seed`, `--json`, `--quiet`, `--dry-run` on uflip, chen09,
//! wang11, hudlet11 and budilovsky11, listed by `flashlab suite --help`; a
//! reduced run says its findings are not comparable to the paper's; a suite
//! shows its plan in one line unless asked for every run.

mod common;

use common::{flashlab, scratch, text};

const SUITES: [&str; 5] = ["uflip", "chen09", "wang11", "hudlet11", "budilovsky11"];
const SHARED: [&str; 7] = [
    "--quick",
    "--results",
    "--seed",
    "--json",
    "--quiet",
    "--dry-run",
    "--verbose",
];

#[test]
fn every_suite_takes_the_shared_options_and_suite_help_lists_them() {
    let dir = scratch();
    let help = text(&flashlab(&["suite", "--help"], dir.path()));
    for flag in SHARED {
        assert!(
            help.contains(flag),
            "`flashlab suite --help` lacks {flag}:\n{help}"
        );
    }
    for suite in SUITES {
        let out = flashlab(&["suite", suite, "--help"], dir.path());
        let help = text(&out);
        assert!(out.status.success(), "{suite}: {help}");
        for flag in SHARED {
            assert!(help.contains(flag), "{suite} --help lacks {flag}:\n{help}");
        }
        // Each one parses and plans with --quick (no "did you mean --quiet").
        let out = flashlab(
            &["suite", suite, "--quick", "--dry-run", "--seed", "7"],
            dir.path(),
        );
        assert!(
            out.status.success(),
            "{suite} --quick --dry-run: {}",
            text(&out)
        );
    }
}

/// The OLTP matrix is not a suite of the registry, but `flashlab suite`
/// still offers it, with its own flags (whole `flashlab oltp` runs: no
/// `--dry-run` or `--quick`).
#[test]
fn suite_help_lists_the_oltp_matrix_beside_the_suites() {
    let dir = scratch();
    let help = text(&flashlab(&["suite", "--help"], dir.path()));
    for suite in SUITES.iter().chain(&["wang11-oltp"]) {
        assert!(
            help.lines().any(|l| l.trim_start().starts_with(suite)),
            "`flashlab suite --help` lacks {suite}:\n{help}"
        );
    }
    let out = flashlab(&["suite", "wang11-oltp", "--help"], dir.path());
    let help = text(&out);
    assert!(out.status.success(), "{help}");
    for flag in ["--dbms", "--profiles", "--fs", "--parts", "--results"] {
        assert!(
            help.contains(flag),
            "wang11-oltp --help lacks {flag}:\n{help}"
        );
    }
    assert!(!help.contains("--dry-run"), "{help}");
}

#[test]
fn a_reduced_run_says_its_findings_are_not_comparable() {
    let dir = scratch();
    let out = flashlab(
        &["suite", "wang11", "--quick", "--results", "q", "--quiet"],
        dir.path(),
    );
    let t = text(&out);
    assert!(out.status.success(), "{t}");
    assert!(t.contains("not comparable to the paper's"), "{t}");
    let summary = std::fs::read_to_string(dir.path().join("q/wang11-summary.json")).unwrap();
    assert!(
        summary.contains("not comparable to the paper's"),
        "{summary}"
    );
    // --quick on the papers' suites is --scale 0.1, and says so.
    assert!(t.contains("--quick"), "{t}");
    assert!(
        summary.contains("This was a reduced run (--scale 0.1: 10 % of the paper's IOs per run)"),
        "{summary}"
    );
}

#[test]
fn the_plan_is_one_line_unless_asked_for_every_run() {
    let dir = scratch();
    let args = ["suite", "chen09", "--quick", "--dry-run"];
    let full = text(&flashlab(&args, dir.path()));
    // The dry run lists every run, numbered.
    assert!(
        full.lines().any(|l| l.trim_start().starts_with("1  ")),
        "{full}"
    );
    let out = flashlab(
        // (not --quiet, which prints the summary alone)
        &["suite", "hudlet11", "--quick", "--results", "h"],
        dir.path(),
    );
    let t = text(&out);
    assert!(out.status.success(), "{t}");
    assert!(t.contains("--verbose or --dry-run lists every run"), "{t}");
    assert!(!t.lines().any(|l| l.trim_start().starts_with("1  ")), "{t}");
}

/// A real device's dry run probes the plan's IO classes for a few seconds
/// and prints the duration as a range, not a guess of 1 ms per IO. It
/// writes only when the suite overwrites the device first anyway (and the
/// safety check allows it: a file always does).
#[test]
fn a_real_devices_dry_run_estimates_a_range_from_a_short_probe() {
    let dir = scratch();
    let file = dir.path().join("dev.img");
    std::fs::File::create(&file)
        .and_then(|f| f.set_len(64 << 20))
        .expect("64 MiB file");
    let device = file.to_str().expect("utf-8 path");
    let dry = |state: &str| {
        let started = std::time::Instant::now();
        let out = text(&flashlab(
            &[
                "suite",
                "uflip",
                "--device",
                device,
                "--quick",
                "--only",
                "pause,bursts",
                "--state",
                state,
                "--dry-run",
            ],
            dir.path(),
        ));
        // The probe is bounded (4 s); the rest is planning.
        assert!(started.elapsed().as_secs() < 60, "{out}");
        out.lines()
            .find(|l| l.starts_with("estimated duration:"))
            .unwrap_or_else(|| panic!("no estimate in:\n{out}"))
            .to_string()
    };
    let written = dry("random");
    assert!(
        written.contains(" to ")
            && written.contains("probe of")
            && written.contains("reads and writes"),
        "{written}"
    );
    assert!(!written.contains("1 ms per IO"), "{written}");
    let read_only = dry("none");
    assert!(
        read_only.contains("probe of") && read_only.contains("reads only"),
        "{read_only}"
    );
    // The pauses alone are known exactly: 1 s between runs (--min-pause)
    // and, per baseline, a run pausing 25.6 ms after each of its IOs.
    let lower = read_only
        .trim_start_matches("estimated duration: ")
        .split(" to ")
        .next()
        .unwrap();
    assert!(seconds(lower) > 20.0, "{read_only}");
    assert!(!dir.path().join("results").exists());
}

/// "1h02m", "4m10s", "12.5s", "300ms" in seconds.
fn seconds(text: &str) -> f64 {
    let num = |s: &str| s.parse::<f64>().unwrap_or_else(|_| panic!("{text}"));
    if let Some((h, m)) = text.split_once('h') {
        num(h) * 3600.0 + num(m.trim_end_matches('m')) * 60.0
    } else if let Some(ms) = text.strip_suffix("ms") {
        num(ms) / 1000.0
    } else if let Some((m, s)) = text.split_once('m') {
        num(m) * 60.0 + num(s.trim_end_matches('s'))
    } else {
        num(text.trim_end_matches('s'))
    }
}
