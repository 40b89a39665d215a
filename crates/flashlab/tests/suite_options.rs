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
