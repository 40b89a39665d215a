//! `bench/twin_blind.py --via nbd`: the route by which the blind benchmark
//! shows a hidden simulated device to `flashlab twin` as nothing but a block
//! device (`flashlab serve --pace` -> nbdfuse -> `losetup --direct-io=on`),
//! and its teardown: after a clean run, after an error with everything set
//! up, and after SIGTERM, no loop device, FUSE mount, server or data
//! directory is left behind.
//!
//! Needs root, python3, nbdfuse (libnbd-bin), fusermount3 (fuse3) and
//! losetup. Skipped with a message when something is missing, failed
//! instead under FLASHLAB_REQUIRE_ROOT_TESTS=1 (CI).

mod serve_util;

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

use serve_util::{bin, is_root, missing_tools, skip};

fn script() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../bench/twin_blind.py")
}

fn why_not() -> Option<String> {
    if !is_root() {
        Some("needs root (losetup, a FUSE mount)".to_string())
    } else if !Path::new("/dev/fuse").exists() || !Path::new("/dev/loop-control").exists() {
        Some("needs /dev/fuse and /dev/loop-control".to_string())
    } else {
        missing_tools(&["python3", "nbdfuse", "fusermount3", "losetup"])
    }
}

fn route_check(scratch: &Path, extra: &[&str]) -> Command {
    let mut c = Command::new("python3");
    c.arg(script())
        .args(["--via", "nbd", "--route-check", "--profiles", "ssd-m"])
        .arg("--scratch")
        .arg(scratch)
        .arg("--flashlab")
        .arg(bin())
        .args(extra);
    c
}

fn text(o: &Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    )
}

/// The pid after "LABEL pid " in the script's log.
fn pid_after(log: &str, label: &str) -> i32 {
    let at = log
        .find(&format!("{label} pid "))
        .unwrap_or_else(|| panic!("no {label} pid: {log}"));
    log[at + label.len() + 5..]
        .split_whitespace()
        .next()
        .unwrap()
        .parse()
        .unwrap()
}

/// Nothing of the route is left: the loop device it attached is detached
/// (or reused by someone else for another file), no mount under SCRATCH,
/// neither process alive, its directory gone.
fn assert_torn_down(scratch: &Path, log: &str) {
    let s = scratch.to_str().unwrap();
    let at = log
        .find("route: loop device /dev/")
        .expect("a loop device was attached");
    let loop_name = log[at + "route: loop device /dev/".len()..]
        .split_whitespace()
        .next()
        .unwrap();
    // Attached, the loop device names its backing file; once the FUSE mount
    // is gone (lazily unmounted) the name left is the file's, "/disk".
    if let Ok(back) = std::fs::read_to_string(format!("/sys/block/{loop_name}/loop/backing_file")) {
        let back = back.trim();
        assert!(
            !back.contains(s) && back != "/disk",
            "{loop_name} is still attached to {back}\n{log}"
        );
    }
    let mounts = std::fs::read_to_string("/proc/self/mountinfo").unwrap();
    assert!(!mounts.contains(s), "a mount is left: {mounts}\n{log}");
    for label in ["serve", "nbdfuse"] {
        let pid = pid_after(log, label);
        let cmdline = std::fs::read(format!("/proc/{pid}/cmdline")).unwrap_or_default();
        assert!(
            !String::from_utf8_lossy(&cmdline).contains(s),
            "{label} (pid {pid}) is still running\n{log}"
        );
    }
    assert!(
        !scratch.join("route-check").exists(),
        "the served device's directory is left\n{log}"
    );
}

#[ignore = "needs root (loop devices, FUSE): run as root with `cargo test -- --include-ignored`, as CI does"]
#[test]
fn the_nbd_route_gives_a_writable_loop_device_and_leaves_nothing_behind() {
    if skip("twin_nbd_route", why_not()) {
        return;
    }
    let d = tempfile::tempdir().unwrap();
    let o = route_check(d.path(), &[]).output().unwrap();
    let log = text(&o);
    assert!(o.status.success(), "{log}");
    assert!(log.contains("route: loop device /dev/loop"), "{log}");
    assert!(log.contains("64 random 4 KiB writes on /dev/loop"), "{log}");
    assert!(log.contains("route: torn down"), "{log}");
    assert_torn_down(d.path(), &log);
}

#[ignore = "needs root (loop devices, FUSE): run as root with `cargo test -- --include-ignored`, as CI does"]
#[test]
fn the_nbd_route_is_torn_down_after_an_error() {
    if skip("twin_nbd_route", why_not()) {
        return;
    }
    let d = tempfile::tempdir().unwrap();
    let o = route_check(d.path(), &["--route-check-fail"])
        .output()
        .unwrap();
    let log = text(&o);
    assert_eq!(o.status.code(), Some(1), "{log}");
    assert!(log.contains("failing on purpose after setup"), "{log}");
    assert!(log.contains("route: detached /dev/loop"), "{log}");
    assert_torn_down(d.path(), &log);
}

#[ignore = "needs root (loop devices, FUSE): run as root with `cargo test -- --include-ignored`, as CI does"]
#[test]
fn the_nbd_route_is_torn_down_on_sigterm() {
    if skip("twin_nbd_route", why_not()) {
        return;
    }
    let d = tempfile::tempdir().unwrap();
    let mut child = route_check(d.path(), &["--route-check-hold"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut log = String::new();
    let mut out = BufReader::new(child.stdout.take().unwrap());
    // Everything is set up once the script says it is holding.
    loop {
        let mut line = String::new();
        assert!(out.read_line(&mut line).unwrap() > 0, "ended early: {log}");
        log.push_str(&line);
        if line.contains("holding until a signal") {
            break;
        }
    }
    // SAFETY: signalling our own child, not yet reaped.
    unsafe { libc::kill(child.id() as i32, libc::SIGTERM) };
    let st = child.wait().unwrap();
    let mut rest = String::new();
    std::io::Read::read_to_string(&mut out, &mut rest).unwrap();
    log.push_str(&rest);
    let mut err = String::new();
    std::io::Read::read_to_string(&mut child.stderr.take().unwrap(), &mut err).unwrap();
    log.push_str(&err);
    assert_eq!(st.code(), Some(130), "{log}");
    assert!(log.contains("interrupted"), "{log}");
    assert!(log.contains("route: stopped serve"), "{log}");
    assert_torn_down(d.path(), &log);
}
