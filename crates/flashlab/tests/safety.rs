//! design.md section 8 end to end: `flashlab run` refuses to write to a block
//! device that is mounted, holds a file system or a partition table, unless
//! `--allow-write-to` names that device; and writes nothing when it refuses.
//!
//! Needs root, losetup and mkfs.ext4. With FLASHLAB_REQUIRE_ROOT_TESTS=1 (as
//! in CI) a missing prerequisite fails the test; otherwise it is skipped
//! with a message.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn flashlab(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_flashlab"))
        .args(args)
        .current_dir(env!("CARGO_TARGET_TMPDIR"))
        .output()
        .unwrap()
}

fn sh(cmd: &str, args: &[&str]) -> Result<String, String> {
    let out = Command::new(cmd)
        .args(args)
        .output()
        .map_err(|e| format!("{cmd}: {e}"))?;
    if !out.status.success() {
        return Err(format!(
            "{cmd} {args:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        ));
    }
    Ok(String::from_utf8_lossy(&out.stdout).trim().to_string())
}

fn prerequisites() -> bool {
    // SAFETY: geteuid has no preconditions.
    let root = unsafe { libc::geteuid() } == 0;
    let tools = ["losetup", "mkfs.ext4", "mount", "umount"].iter().all(|t| {
        Command::new("sh")
            .args(["-c", &format!("command -v {t}")])
            .output()
            .is_ok_and(|o| o.status.success())
    });
    if root && tools {
        return true;
    }
    let why = if !root {
        "not root"
    } else {
        "losetup/mkfs.ext4 missing"
    };
    if std::env::var("FLASHLAB_REQUIRE_ROOT_TESTS").as_deref() == Ok("1") {
        panic!("safety tests cannot run ({why}) but FLASHLAB_REQUIRE_ROOT_TESTS=1");
    }
    eprintln!("SKIPPED: safety tests need root and util-linux/e2fsprogs ({why})");
    false
}

/// A loop device over a file in /dev/shm, torn down on drop (even on panic).
struct Loop {
    dev: String,
    backing: PathBuf,
    mount: Option<PathBuf>,
}

impl Loop {
    fn new(tag: &str, size_mib: u64) -> Loop {
        let backing = PathBuf::from(format!(
            "/dev/shm/flashlab-cli-{tag}-{}.img",
            std::process::id()
        ));
        let f = std::fs::File::create(&backing).unwrap();
        f.set_len(size_mib << 20).unwrap();
        let dev = sh("losetup", &["-f", "--show", backing.to_str().unwrap()]).unwrap();
        Loop {
            dev,
            backing,
            mount: None,
        }
    }

    fn mkfs(&self) {
        sh("mkfs.ext4", &["-q", "-F", &self.dev]).unwrap();
    }

    fn mount(&mut self) {
        let dir = PathBuf::from(format!(
            "/tmp/flashlab-cli-mnt-{}-{}",
            std::process::id(),
            self.dev.replace('/', "_")
        ));
        std::fs::create_dir_all(&dir).unwrap();
        sh("mount", &[&self.dev, dir.to_str().unwrap()]).unwrap();
        self.mount = Some(dir);
    }

    fn contents(&self) -> Vec<u8> {
        std::fs::read(&self.backing).unwrap()
    }
}

impl Drop for Loop {
    fn drop(&mut self) {
        if let Some(m) = &self.mount {
            let _ = sh("umount", &[m.to_str().unwrap()]);
            let _ = std::fs::remove_dir(m);
        }
        let _ = sh("losetup", &["-d", &self.dev]);
        let _ = std::fs::remove_file(&self.backing);
    }
}

fn refused(dev: &str, extra: &[&str], expected: &str) {
    let mut args = vec![
        "run",
        "--device",
        dev,
        "--pattern",
        "RW",
        "--io-size",
        "4KiB",
        "--io-count",
        "64",
        "--quiet",
        "--results",
    ];
    let res = format!(
        "{}/res-{}-{}",
        env!("CARGO_TARGET_TMPDIR"),
        std::process::id(),
        dev.replace('/', "_")
    );
    args.push(&res);
    args.extend_from_slice(extra);
    let out = flashlab(&args);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(err.contains(expected), "expected '{expected}' in: {err}");
    assert_eq!(err.trim_end().lines().count(), 1, "{err}");
    assert!(
        err.contains(&format!("--allow-write-to {dev}")),
        "names the flag that overrides: {err}"
    );
    assert!(
        !Path::new(&res).exists(),
        "no results directory for a refused run"
    );
}

#[ignore = "needs root (loop devices, mounts): run as root with `cargo test -- --include-ignored`, as CI does"]
#[test]
fn mounted_ext4_is_refused_and_left_intact() {
    if !prerequisites() {
        return;
    }
    let mut lo = Loop::new("mounted", 64);
    lo.mkfs();
    lo.mount();
    std::fs::write(
        lo.mount.as_ref().unwrap().join("precious.txt"),
        b"user data",
    )
    .unwrap();
    sh("sync", &[]).unwrap();
    let before = lo.contents();
    refused(&lo.dev.clone(), &[], "mounted");
    assert!(lo.contents() == before, "the refused run changed nothing");
    // Reads are always allowed: they cannot destroy anything.
    let out = flashlab(&[
        "run",
        "--device",
        &lo.dev,
        "--pattern",
        "RR",
        "--io-size",
        "4KiB",
        "--io-count",
        "16",
        "--quiet",
        "--json",
    ]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(
        std::fs::read(lo.mount.as_ref().unwrap().join("precious.txt")).unwrap(),
        b"user data"
    );
}

#[ignore = "needs root (loop devices, mounts): run as root with `cargo test -- --include-ignored`, as CI does"]
#[test]
fn file_system_signature_is_refused_unless_that_device_is_named() {
    if !prerequisites() {
        return;
    }
    let lo = Loop::new("sig", 32);
    lo.mkfs();
    let other = Loop::new("other", 8);
    let before = lo.contents();
    refused(&lo.dev.clone(), &[], "ext4");
    // Naming another device does not count.
    refused(&lo.dev.clone(), &["--allow-write-to", &other.dev], "ext4");
    assert!(lo.contents() == before);
    // Naming this device does.
    let res = format!(
        "{}/res-allowed-{}",
        env!("CARGO_TARGET_TMPDIR"),
        std::process::id()
    );
    let out = flashlab(&[
        "run",
        "--device",
        &lo.dev,
        "--pattern",
        "RW",
        "--io-size",
        "4KiB",
        "--io-count",
        "64",
        "--target-size",
        "1MiB",
        "--quiet",
        "--allow-write-to",
        &lo.dev,
        "--results",
        &res,
    ]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("warning"),
        "the override is announced"
    );
    let after = lo.contents();
    assert!(
        after[1 << 20..] == before[1 << 20..],
        "nothing written outside the 1 MiB target"
    );
    assert!(
        after[..1 << 20] != before[..1 << 20],
        "the target was written"
    );
    let _ = std::fs::remove_dir_all(res);
}

#[ignore = "needs root (loop devices, mounts): run as root with `cargo test -- --include-ignored`, as CI does"]
#[test]
fn partition_table_is_refused() {
    if !prerequisites() {
        return;
    }
    let lo = Loop::new("ptable", 16);
    // A DOS partition table with one partition, written by hand so the test
    // needs no partitioning tool.
    let mut mbr = vec![0u8; 512];
    mbr[446 + 4] = 0x83; // Linux partition type
    mbr[446 + 8..446 + 12].copy_from_slice(&2048u32.to_le_bytes());
    mbr[446 + 12..446 + 16].copy_from_slice(&8192u32.to_le_bytes());
    mbr[510] = 0x55;
    mbr[511] = 0xAA;
    std::fs::write(&lo.dev, &mbr).unwrap();
    sh("sync", &[]).unwrap();
    refused(&lo.dev.clone(), &[], "partition table");
}

#[ignore = "needs root (loop devices, mounts): run as root with `cargo test -- --include-ignored`, as CI does"]
#[test]
fn blank_device_is_written_and_only_inside_the_target() {
    if !prerequisites() {
        return;
    }
    let lo = Loop::new("blank", 16);
    let res = format!(
        "{}/res-blank-{}",
        env!("CARGO_TARGET_TMPDIR"),
        std::process::id()
    );
    for qd in ["1", "8"] {
        let _ = std::fs::remove_dir_all(&res);
        let out = flashlab(&[
            "run",
            "--device",
            &lo.dev,
            "--pattern",
            "RW",
            "--io-size",
            "4KiB",
            "--io-count",
            "500",
            "--target-offset",
            "2MiB",
            "--target-size",
            "4MiB",
            "--queue-depth",
            qd,
            "--quiet",
            "--results",
            &res,
        ]);
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let data = lo.contents();
        assert!(
            data[..2 << 20].iter().all(|&b| b == 0),
            "nothing before the target"
        );
        assert!(
            data[6 << 20..].iter().all(|&b| b == 0),
            "nothing after the target"
        );
        assert!(
            data[2 << 20..6 << 20].iter().any(|&b| b != 0),
            "the target was written"
        );
        let recs = flashlab_results::records::read_records(
            &Path::new(&res).join("runs/001-RW/records.bin"),
        )
        .unwrap();
        assert_eq!(recs.len(), 500);
        assert!(recs
            .iter()
            .all(|r| r.offset_bytes >= 2 << 20 && r.offset_bytes + r.size_bytes as u64 <= 6 << 20));
    }
    let _ = std::fs::remove_dir_all(res);
}

#[ignore = "needs root (loop devices, mounts): run as root with `cargo test -- --include-ignored`, as CI does"]
#[test]
fn io_size_below_the_logical_block_is_refused() {
    if !prerequisites() {
        return;
    }
    let backing = format!("/dev/shm/flashlab-cli-4k-{}.img", std::process::id());
    std::fs::File::create(&backing)
        .unwrap()
        .set_len(8 << 20)
        .unwrap();
    let dev = sh(
        "losetup",
        &["-f", "--show", "--sector-size", "4096", &backing],
    )
    .unwrap();
    let out = flashlab(&[
        "run",
        "--device",
        &dev,
        "--pattern",
        "RR",
        "--io-size",
        "2KiB",
        "--quiet",
    ]);
    let _ = sh("losetup", &["-d", &dev]);
    let _ = std::fs::remove_file(&backing);
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("logical block size (4096 B)") && err.contains("O_DIRECT"),
        "{err}"
    );
}

/// `flashlab run --device LINK` while another thread keeps switching LINK
/// between a blank and an ext4 loop device: every run either refuses or
/// writes to the blank one; the ext4 device is never modified.
#[ignore = "needs root (loop devices, mounts): run as root with `cargo test -- --include-ignored`, as CI does"]
#[test]
fn a_raced_symlink_never_sends_writes_to_the_ext4_device() {
    if !prerequisites() {
        return;
    }
    use std::os::unix::fs::symlink;
    use std::sync::atomic::{AtomicBool, Ordering};
    use std::sync::Arc;
    let blank = Loop::new("race-blank", 8);
    let ext4 = Loop::new("race-ext4", 8);
    ext4.mkfs();
    let before = ext4.contents();
    let dir = PathBuf::from(format!(
        "{}/race-{}",
        env!("CARGO_TARGET_TMPDIR"),
        std::process::id()
    ));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let link = dir.join("disk");
    symlink(&blank.dev, &link).unwrap();
    let stop = Arc::new(AtomicBool::new(false));
    let flipper = {
        let (stop, dir) = (stop.clone(), dir.clone());
        let (a, b) = (blank.dev.clone(), ext4.dev.clone());
        std::thread::spawn(move || {
            let mut n = 0u64;
            while !stop.load(Ordering::Relaxed) {
                let tmp = dir.join("disk.new");
                let _ = std::fs::remove_file(&tmp);
                let to = if n & 1 == 0 { &b } else { &a };
                if symlink(to, &tmp).is_err() || std::fs::rename(&tmp, dir.join("disk")).is_err() {
                    break;
                }
                n += 1;
                // Switch often, but let some opens find each device.
                std::thread::sleep(std::time::Duration::from_micros(200));
            }
        })
    };
    let (mut wrote, mut refused) = (0, 0);
    for i in 0..30 {
        let res = dir.join(format!("res-{i}"));
        let out = flashlab(&[
            "run",
            "--device",
            link.to_str().unwrap(),
            "--pattern",
            "RW",
            "--io-size",
            "4KiB",
            "--io-count",
            "32",
            "--target-size",
            "1MiB",
            "--quiet",
            "--results",
            res.to_str().unwrap(),
        ]);
        let err = String::from_utf8_lossy(&out.stderr);
        match out.status.code() {
            Some(0) => wrote += 1,
            Some(2) => {
                // Refused as ext4, or the path changed between probe and open, or
                // the blank device was still claimed by the previous run.
                assert!(
                    err.contains("ext4")
                        || err.contains("changed while")
                        || err.contains("exclusively"),
                    "{err}"
                );
                refused += 1;
            }
            other => panic!("run {i}: exit {other:?}: {err}"),
        }
    }
    stop.store(true, Ordering::Relaxed);
    flipper.join().unwrap();
    eprintln!("30 raced runs: {wrote} wrote to the blank device, {refused} refused");
    assert!(ext4.contents() == before, "a write reached the ext4 device");
    assert!(wrote + refused == 30);
    let _ = std::fs::remove_dir_all(&dir);
}
