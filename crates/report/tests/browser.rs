//! The report as a person sees it: rendered by headless Chromium (Debian's
//! `chromium` package), with the page's own script run, then checked through
//! the DOM it leaves: every chart present and drawn with a non-empty box, no
//! script error, hovering shows values, clicking a legend entry hides a series.
//!
//! Skipped (with a message) when no Chromium is installed, unless
//! FLASHLAB_REQUIRE_BROWSER_TESTS=1 (CI sets it). Set
//! FLASHLAB_REPORT_SCREENSHOT=PATH to keep the screenshot (docs/img/report-example.png).

mod browser_util;
mod common;

use browser_util::{browser_or_skip, check_page, chromium};

use flashlab_report::{render, ReportFormat};

#[test]
fn report_renders_in_headless_chromium() {
    let Some(browser) = browser_or_skip() else {
        return;
    };
    let tmp = tempfile::tempdir().unwrap();
    let sim = common::sim_dir(&tmp.path().join("sim"));
    let block = common::block_dir(&tmp.path().join("block"));

    // A run whose every IO took the same time (the simulator does that).
    let flat = common::write_dir(
        &tmp.path().join("flat"),
        common::device("sim:flat", flashlab_device::DeviceKind::Simulated),
        vec![common::RunDef {
            name: "flat",
            pattern: common::pattern("flat", "sequential", "read", 64, 0, false),
            records: common::records(&[169_215; 64], |_| flashlab_device::Mode::Read, |_| 0),
        }],
        None,
        None,
    );

    // A device comparison, a single device, and a flat run beside a device.
    for (name, dirs) in [
        ("compare.html", vec![sim.clone(), block.clone()]),
        ("single.html", vec![sim.clone()]),
        ("flat.html", vec![flat, block.clone()]),
    ] {
        let html = render(&dirs, ReportFormat::Html).unwrap();
        let path = tmp.path().join(name);
        std::fs::write(&path, &html).unwrap();
        check_page(&browser, tmp.path(), &path, &html);
    }

    // The screenshot: the page renders to a non-trivial image.
    let shot = tmp.path().join("report.png");
    let (_, log) = chromium(
        &browser,
        &tmp.path().join("profile-shot"),
        &[
            format!("--screenshot={}", shot.display()),
            "--window-size=1280,2000".to_string(),
            format!("file://{}", tmp.path().join("compare.html").display()),
        ],
    );
    let size = std::fs::metadata(&shot).map(|m| m.len()).unwrap_or(0);
    assert!(
        size > 20_000,
        "screenshot of {size} bytes; chromium log:\n{log}"
    );
    if let Some(keep) = std::env::var_os("FLASHLAB_REPORT_SCREENSHOT") {
        std::fs::copy(&shot, keep).unwrap();
    }
}
