//! Headless Chromium for the browser tests (shared with
//! crates/flashlab/tests/report_browser.rs, which includes this file by path).
#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

pub fn find_browser() -> Option<PathBuf> {
    if let Some(p) = std::env::var_os("FLASHLAB_CHROMIUM") {
        return Some(PathBuf::from(p));
    }
    let path = std::env::var_os("PATH")?;
    for dir in std::env::split_paths(&path) {
        for name in [
            "chromium",
            "chromium-browser",
            "google-chrome",
            "google-chrome-stable",
        ] {
            let p = dir.join(name);
            if p.is_file() {
                return Some(p);
            }
        }
    }
    None
}

pub fn browser_or_skip() -> Option<PathBuf> {
    let b = find_browser();
    if b.is_none() {
        if std::env::var("FLASHLAB_REQUIRE_BROWSER_TESTS").as_deref() == Ok("1") {
            panic!("FLASHLAB_REQUIRE_BROWSER_TESTS=1 but no chromium found in PATH; install it with `apt-get install -y chromium`");
        }
        eprintln!(
            "skipping the headless browser test: no chromium in PATH (apt-get install -y chromium)"
        );
    }
    b
}

/// Runs headless Chromium with networking off, returning (stdout, stderr).
pub fn chromium(browser: &Path, profile: &Path, extra: &[String]) -> (String, String) {
    let mut cmd = Command::new(browser);
    cmd.args([
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
        "--no-first-run",
        "--no-default-browser-check",
        "--hide-scrollbars",
        // Networking off: no name resolves and every proxied request fails.
        "--host-resolver-rules=MAP * ~NOTFOUND",
        "--proxy-server=127.0.0.1:9",
        "--enable-logging=stderr",
        "--v=0",
    ])
    .arg(format!("--user-data-dir={}", profile.display()))
    .args(extra)
    .stdin(Stdio::null())
    .stdout(Stdio::piped())
    .stderr(Stdio::piped());
    let mut child = cmd.spawn().expect("start chromium");
    // Read pipes on threads so a chatty browser cannot block on a full pipe.
    let mut out = child.stdout.take().unwrap();
    let mut err = child.stderr.take().unwrap();
    let t_out = std::thread::spawn(move || {
        let mut s = String::new();
        std::io::Read::read_to_string(&mut out, &mut s).ok();
        s
    });
    let t_err = std::thread::spawn(move || {
        let mut s = String::new();
        std::io::Read::read_to_string(&mut err, &mut s).ok();
        s
    });
    let start = Instant::now();
    loop {
        if child.try_wait().unwrap().is_some() {
            break;
        }
        if start.elapsed() > Duration::from_secs(120) {
            child.kill().ok();
            child.wait().ok();
            panic!("chromium did not finish within 120 s");
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    (t_out.join().unwrap(), t_err.join().unwrap())
}

pub fn body_attr<'a>(dom: &'a str, name: &str) -> Option<&'a str> {
    let body = &dom[dom.find("<body")?..];
    let tag = &body[..body.find('>')?];
    let key = format!(" {name}=\"");
    let start = tag.find(&key)? + key.len();
    Some(&tag[start..start + tag[start..].find('"')?])
}

pub fn check_page(browser: &Path, tmp: &Path, html_path: &Path, html: &str) {
    let url = format!("file://{}#selftest", html_path.display());
    let (dom, log) = chromium(
        browser,
        &tmp.join("profile-dom"),
        &["--dump-dom".to_string(), url],
    );
    assert!(
        dom.contains("<body"),
        "chromium printed no DOM; its log:\n{log}"
    );
    let errors: Vec<&str> = log
        .lines()
        .filter(|l| {
            l.contains("Uncaught")
                || l.to_ascii_lowercase().contains("console error")
                || (l.contains(":CONSOLE") && l.contains("Error"))
        })
        .collect();
    assert!(
        errors.is_empty(),
        "the page logged errors:\n{}",
        errors.join("\n")
    );
    assert_eq!(body_attr(&dom, "data-error"), None, "script error");
    assert_eq!(
        body_attr(&dom, "data-ok"),
        Some("1"),
        "the page's script did not finish"
    );
    let expected = html.matches("<svg class=\"chart\"").count();
    assert!(expected > 0);
    assert_eq!(
        body_attr(&dom, "data-charts"),
        Some(expected.to_string().as_str()),
        "charts in the DOM"
    );
    assert_eq!(
        body_attr(&dom, "data-empty-charts"),
        Some("0"),
        "some chart has nothing drawn"
    );
    let tip = body_attr(&dom, "data-selftest-tip").unwrap_or("");
    // The read-out starts with the pointer's x and y, then each series' nearest point.
    assert!(
        tip.starts_with("x ") && tip.contains("   y ") && tip.contains(": "),
        "hovering a chart shows no values: {tip:?}"
    );
    assert_eq!(
        body_attr(&dom, "data-selftest-hidden"),
        Some("1"),
        "clicking a legend entry did not hide its series"
    );
    assert_eq!(
        body_attr(&dom, "data-save-links"),
        Some((2 * expected).to_string().as_str()),
        "an SVG and a PNG link under every chart"
    );
    // The saved SVG is a document of its own: it names the SVG namespace.
    let saved = body_attr(&dom, "data-selftest-svg").unwrap_or("");
    assert!(
        saved.starts_with("data:image/svg+xml;charset=utf-8,%3Csvg")
            && saved.contains("xmlns%3D%22http%3A%2F%2Fwww.w3.org%2F2000%2Fsvg%22"),
        "the SVG a user saves: {saved:?}"
    );
}
