//! The safety check cannot be raced (root only; see common::root_tests_possible).
//!
//! A thread keeps switching a symlink between a blank loop device and an
//! ext4-formatted one while runs open the symlink for writing and write a
//! block through what they opened. Every open must either be refused (it
//! opened the ext4 device) or write to the blank device: the ext4 device's
//! bytes never change. Before the check examined the opened descriptor, the
//! symlink was checked and then opened again, and writes reached the ext4
//! device in most raced runs.

mod common;

use std::os::unix::fs::{symlink, MetadataExt};
use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use common::LoopDev;
use flashlab_device::{IoRequest, Mode};
use flashlab_realdev::{open, Engine, OpenErrorKind, OpenOptions};

const MIB: u64 = 1 << 20;
const RUNS: usize = 200;

fn major_minor(dev: &Path) -> String {
    let rdev = std::fs::metadata(dev).unwrap().rdev();
    format!("{}:{}", libc::major(rdev), libc::minor(rdev))
}

#[ignore = "needs root (loop devices, mounts): run as root with `cargo test -- --include-ignored`, as CI does"]
#[test]
fn a_symlink_switched_during_the_check_never_redirects_writes() {
    if !common::root_tests_possible("safety_race")
        || !common::tool_available("safety_race", "mkfs.ext4", "e2fsprogs")
    {
        return;
    }
    let blank = LoopDev::new("race-blank", 8 * MIB, false);
    let ext4 = LoopDev::new("race-ext4", 8 * MIB, false);
    ext4.mkfs_ext4();
    let ext4_before = std::fs::read(&ext4.backing).unwrap();
    let blank_id = major_minor(blank.path());

    let dir = tempfile::tempdir().unwrap();
    let link = dir.path().join("disk");
    symlink(blank.path(), &link).unwrap();
    let stop = Arc::new(AtomicBool::new(false));
    let flipper = {
        let (stop, dir) = (stop.clone(), dir.path().to_path_buf());
        let (a, b) = (blank.dev.clone(), ext4.dev.clone());
        std::thread::spawn(move || {
            let tmp = dir.join("disk.new");
            let link = dir.join("disk");
            let mut flips = 0u64;
            while !stop.load(Ordering::Relaxed) {
                let to = if flips & 1 == 0 { &b } else { &a };
                let _ = std::fs::remove_file(&tmp);
                // rename(2) swaps the link atomically: the path always names one of the two.
                if symlink(to, &tmp).is_err() || std::fs::rename(&tmp, &link).is_err() {
                    break; // the test failed and is tearing down
                }
                flips += 1;
                // Thousands of switches a second, without taking a whole core.
                std::thread::sleep(std::time::Duration::from_micros(50));
            }
            flips
        })
    };

    let (mut written, mut refused) = (0usize, 0usize);
    for i in 0..RUNS {
        let engine = if i & 1 == 0 {
            Engine::Sync
        } else {
            Engine::IoUring
        };
        let opts = OpenOptions {
            write: true,
            engine,
            max_outstanding: 1,
            max_io_bytes: 4096,
            ..OpenOptions::new(&link)
        };
        match open(&opts) {
            Ok(mut opened) => {
                assert_eq!(
                    opened.device.info().identity.get("dev"),
                    Some(&blank_id),
                    "run {i} opened a device other than the blank one"
                );
                let d = &mut opened.device;
                d.submit(IoRequest {
                    tag: 1,
                    offset_bytes: (i as u64 % 1024) * 4096,
                    size_bytes: 4096,
                    mode: Mode::Write,
                })
                .unwrap();
                let mut out = Vec::new();
                while out.is_empty() {
                    d.poll(None, &mut out).unwrap();
                }
                written += 1;
            }
            Err(e) => {
                assert_eq!(e.kind(), OpenErrorKind::Refused, "run {i}: {e}");
                // The ext4 device, or the blank one still claimed by the previous
                // run's io_uring teardown: both are refusals, which is safe.
                let msg = e.to_string();
                assert!(
                    msg.contains("ext4") || msg.contains("exclusively"),
                    "run {i}: {msg}"
                );
                refused += 1;
            }
        }
    }
    stop.store(true, Ordering::Relaxed);
    let flips = flipper.join().unwrap();
    eprintln!("{RUNS} runs: {written} wrote to the blank device, {refused} refused; {flips} symlink flips");
    assert!(
        std::fs::read(&ext4.backing).unwrap() == ext4_before,
        "a write reached the ext4 device"
    );
    // Both outcomes happened, so the race was really exercised.
    assert!(
        written > 0 && refused > 0,
        "{written} written, {refused} refused"
    );
    assert!(
        std::fs::read(&blank.backing)
            .unwrap()
            .iter()
            .any(|&b| b != 0),
        "the writes reached the blank device"
    );
}
