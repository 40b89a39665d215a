//! Reports of simulator suite results as a person sees them: `flashlab
//! suite` runs (two small uFLIP suites, a short chen09), `flashlab report`
//! renders them, and headless Chromium (networking off) loads the pages:
//! every chart present and drawn with a non-empty box, no script error or
//! console error, hovering shows values, a legend click hides a series.
//!
//! Skipped (with a message) when no Chromium is installed, unless
//! FLASHLAB_REQUIRE_BROWSER_TESTS=1 (CI sets it). Set
//! FLASHLAB_REPORT_SCREENSHOT=PATH to keep a screenshot of the uFLIP
//! comparison (docs/img/report-uflip.png).

#[path = "../../report/tests/browser_util/mod.rs"]
mod browser_util;
mod common;

use std::path::Path;

use browser_util::{browser_or_skip, check_page, chromium};
use common::{flashlab, ok, small_uflip};

/// uFLIP with alignment too (the report draws its chart).
const ONLY: &str = "granularity,alignment,locality,order,mix";

/// Runs flashlab, which must succeed.
fn flashlab_ok(args: &[&str], cwd: &Path) {
    ok(&flashlab(args, cwd));
}

#[test]
fn suite_reports_render_in_headless_chromium() {
    let Some(browser) = browser_or_skip() else {
        return;
    };
    let tmp = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).unwrap();
    let dir = tmp.path();
    for (name, device) in [
        ("m", "sim:ssd-m,capacity=1GiB"),
        ("h", "sim:ssd-h,capacity=1GiB"),
    ] {
        let mut args = vec!["suite", "uflip", "--device", device, "--results", name];
        args.extend_from_slice(&small_uflip(ONLY));
        flashlab_ok(&args, dir);
    }
    flashlab_ok(
        &[
            "suite",
            "chen09",
            "--device",
            "sim:ssd-m,capacity=1GiB",
            "--scale",
            "0.02",
            "--results",
            "c",
            "--quiet",
        ],
        dir,
    );

    for (page, dirs, titles) in [
        (
            "uflip.html",
            vec!["m", "h"],
            vec![
                "uFLIP micro-benchmark 1 (Granularity)",
                "uFLIP Table 3, side by side",
                "device by device",
            ],
        ),
        (
            "chen09.html",
            vec!["c"],
            vec![
                "Chen et al. Figure 2",
                "Chen et al. Figure 8(a)",
                "Chen et al. Figure 9",
            ],
        ),
    ] {
        let mut args = vec!["report"];
        args.extend(dirs.iter().copied());
        args.extend(["--output", page, "--quiet"]);
        flashlab_ok(&args, dir);
        let path = dir.join(page);
        let html = std::fs::read_to_string(&path).unwrap();
        for t in titles {
            assert!(html.contains(t), "{page}: no {t}");
        }
        check_page(&browser, dir, &path, &html);
    }

    let shot = dir.join("uflip.png");
    let (_, log) = chromium(
        &browser,
        &dir.join("profile-shot"),
        &[
            format!("--screenshot={}", shot.display()),
            "--window-size=1280,3000".to_string(),
            format!("file://{}", dir.join("uflip.html").display()),
        ],
    );
    let size = std::fs::metadata(&shot).map(|m| m.len()).unwrap_or(0);
    assert!(
        size > 50_000,
        "screenshot of {size} bytes; chromium log:\n{log}"
    );
    if let Some(keep) = std::env::var_os("FLASHLAB_REPORT_SCREENSHOT") {
        std::fs::copy(&shot, keep).unwrap();
    }
}
