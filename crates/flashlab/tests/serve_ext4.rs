//! Real software on a simulated SSD: `flashlab serve` -> nbdfuse -> loop
//! device (`losetup --direct-io=on`) -> mkfs.ext4, mount, write and read
//! files, unmount, `fsck.ext4 -n` (clean); kill -9 the server, restart it,
//! attach again and find every file; tear everything down even on failure.
//!
//! Needs root, nbdfuse (libnbd-bin), fusermount3 (fuse3), losetup, mkfs.ext4
//! and fsck.ext4 (e2fsprogs). Skipped with a message when something is
//! missing, failed instead under FLASHLAB_REQUIRE_ROOT_TESTS=1 (CI).

mod serve_util;

use std::path::Path;
use std::process::Command;

use serve_util::blockdev::{sh, Fuse, Loop, Mount};
use serve_util::{is_root, missing_tools, skip, Serve};

fn content(i: usize, len: usize) -> Vec<u8> {
    let mut x = (i as u64 + 1).wrapping_mul(0x9e37_79b9_7f4a_7c15);
    (0..len)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x as u8
        })
        .collect()
}

fn write_files(root: &Path, from: usize, n: usize) {
    std::fs::create_dir_all(root.join("files")).unwrap();
    for i in from..from + n {
        let len = if i % 10 == 0 { 3 << 20 } else { 1000 + i * 517 };
        std::fs::write(root.join(format!("files/f{i}")), content(i, len)).unwrap();
    }
}

fn check_files(root: &Path, n: usize) {
    for i in 0..n {
        let len = if i % 10 == 0 { 3 << 20 } else { 1000 + i * 517 };
        let got = std::fs::read(root.join(format!("files/f{i}")))
            .unwrap_or_else(|e| panic!("file f{i}: {e}"));
        assert!(got == content(i, len), "file f{i} has different content");
    }
}

fn fsck_clean(dev: &str) {
    let o = Command::new("fsck.ext4")
        .args(["-n", "-f", dev])
        .output()
        .unwrap();
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(
        o.status.success(),
        "fsck.ext4 -n found problems: {out}{}",
        String::from_utf8_lossy(&o.stderr)
    );
}

#[ignore = "needs root (loop devices, mounts): run as root with `cargo test -- --include-ignored`, as CI does"]
#[test]
fn ext4_on_a_simulated_ssd_survives_kill_9() {
    let why = if !is_root() {
        Some("needs root (losetup, mount)".to_string())
    } else if !Path::new("/dev/fuse").exists() || !Path::new("/dev/loop-control").exists() {
        Some("needs /dev/fuse and /dev/loop-control".to_string())
    } else {
        missing_tools(&[
            "nbdfuse",
            "fusermount3",
            "losetup",
            "mkfs.ext4",
            "fsck.ext4",
        ])
    };
    if skip("serve_ext4", why) {
        return;
    }
    let d = tempfile::tempdir().unwrap();
    let data = d.path().join("dev");
    let mnt = d.path().join("mnt");
    let fuse_dir = d.path().join("fuse");
    let s = Serve::start(&data, &["--profile", "ssd-m,capacity=1GiB"]);
    {
        let fuse = Fuse::attach(&s.sock, &fuse_dir);
        let lo = Loop::attach(&fuse.file());
        sh("mkfs.ext4", &["-q", "-F", &lo.0]);
        let m = Mount::at(&lo.0, &mnt);
        write_files(&mnt, 0, 60);
        check_files(&mnt, 60);
        m.unmount();
        fsck_clean(&lo.0);
        // Mounted again, more files; unmount flushes them.
        let m = Mount::at(&lo.0, &mnt);
        write_files(&mnt, 60, 40);
        check_files(&mnt, 100);
        m.unmount();
        // kill -9 the server while the loop device and nbdfuse are attached.
        s.kill9();
        drop(lo);
        drop(fuse);
    }
    let s = Serve::start(&data, &[]);
    assert!(s.log_text().contains("recovered"), "{}", s.log_text());
    {
        let fuse = Fuse::attach(&s.sock, &fuse_dir);
        let lo = Loop::attach(&fuse.file());
        fsck_clean(&lo.0);
        let m = Mount::at(&lo.0, &mnt);
        check_files(&mnt, 100);
        std::fs::remove_file(mnt.join("files/f0")).unwrap();
        sh("fstrim", &[mnt.to_str().unwrap()]);
        m.unmount();
        fsck_clean(&lo.0);
    }
    let st = s.terminate();
    assert!(st.success());
}
