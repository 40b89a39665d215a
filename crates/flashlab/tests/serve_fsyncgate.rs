//! The "fsyncgate" pattern on a real file system: `flashlab serve` keeps its
//! data directory on ext4 over a device whose writes fail on demand
//! (nbdkit's memory plugin behind `--filter=error`, exposed by nbdfuse and a
//! loop device). While the device fails, the host's write-back of data.img
//! fails and a FLUSH must answer EIO; once the device recovers, a later
//! FLUSH must still answer EIO (the kernel may have dropped the pages it
//! could not write, and reports the error once), and so must every write,
//! until a restart, which recovers what the log proves.
//!
//! Needs root, nbdkit (with its error filter), nbdfuse (libnbd-bin),
//! fusermount3 (fuse3), losetup, mkfs.ext4. Skipped with a message when
//! something is missing, failed instead under FLASHLAB_REQUIRE_ROOT_TESTS=1 (CI).

mod serve_util;

use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use flashlab_nbd::client::Client;
use serve_util::blockdev::{sh, Fuse, Loop, Mount};
use serve_util::{is_root, missing_tools, skip, Serve};

/// nbdkit serving a RAM disk whose writes fail while `inject` exists.
struct Nbdkit(Child);

impl Nbdkit {
    fn start(sock: &Path, inject: &Path) -> Nbdkit {
        let child = Command::new("nbdkit")
            .arg("--foreground")
            .arg("--unix")
            .arg(sock)
            .args(["--filter=error", "memory", "512M", "error-pwrite=EIO"])
            .arg("error-pwrite-rate=100%")
            .arg(format!("error-pwrite-file={}", inject.display()))
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let t0 = Instant::now();
        while !sock.exists() {
            assert!(
                t0.elapsed() < Duration::from_secs(30),
                "nbdkit did not start"
            );
            std::thread::sleep(Duration::from_millis(20));
        }
        Nbdkit(child)
    }
}

impl Drop for Nbdkit {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

fn block(i: u64) -> Vec<u8> {
    (0..4096u64)
        .map(|j| (i.wrapping_mul(131) ^ j.wrapping_mul(7) ^ 0x5a) as u8)
        .collect()
}

#[ignore = "needs root (loop devices, mounts): run as root with `cargo test -- --include-ignored`, as CI does"]
#[test]
fn a_flush_never_covers_a_write_the_host_file_system_lost() {
    let why = if !is_root() {
        Some("needs root (losetup, mount)".to_string())
    } else if !Path::new("/dev/fuse").exists() || !Path::new("/dev/loop-control").exists() {
        Some("needs /dev/fuse and /dev/loop-control".to_string())
    } else {
        missing_tools(&["nbdkit", "nbdfuse", "fusermount3", "losetup", "mkfs.ext4"])
    };
    if skip("serve_fsyncgate", why) {
        return;
    }
    let d = tempfile::tempdir().unwrap();
    let inject = d.path().join("inject-errors");
    let kit = Nbdkit::start(&d.path().join("nbdkit.sock"), &inject);
    let fuse = Fuse::attach(&d.path().join("nbdkit.sock"), &d.path().join("fuse"));
    let lo = Loop::attach(&fuse.file());
    sh("mkfs.ext4", &["-q", "-F", &lo.0]);
    let mnt = d.path().join("mnt");
    let m = Mount::at(&lo.0, &mnt);
    let data = mnt.join("dev");
    let s = Serve::start(&data, &["--profile", "ssd-m,capacity=256MiB,channels=2"]);
    let mut c = Client::connect(&s.addr(), "").unwrap();
    for i in 0..64u64 {
        assert_eq!(c.write(i * 4096, &block(i), false).unwrap(), 0);
    }
    assert_eq!(c.flush().unwrap(), 0, "a FLUSH on a healthy disk");
    // Acknowledged writes still in the host's page cache; then the disk fails.
    for i in 64..128u64 {
        assert_eq!(c.write(i * 4096, &block(i), false).unwrap(), 0);
    }
    std::fs::write(&inject, b"").unwrap();
    assert_eq!(c.flush().unwrap(), 5, "a FLUSH while write-back fails: EIO");
    // The disk recovers. fsyncgate: the next fdatasync would succeed.
    std::fs::remove_file(&inject).unwrap();
    assert_eq!(c.flush().unwrap(), 5, "a FLUSH after a lost write-back");
    assert_eq!(c.write(0, &block(999), true).unwrap(), 5, "a FUA write");
    assert_eq!(c.write(0, &block(999), false).unwrap(), 5, "a plain write");
    let mut b = vec![0u8; 4096];
    c.read(0, &mut b).unwrap().unwrap();
    assert_eq!(b, block(0), "reads go on");
    let late = Client::connect(&s.addr(), "").unwrap();
    assert_ne!(
        late.flags & flashlab_nbd::proto::TFLAG_READ_ONLY,
        0,
        "a new client is told the export is read-only"
    );
    drop(late);
    drop(c);
    s.kill9();
    // Restart on the same file system: the writes flushed before the failure are there.
    let s = Serve::start(&data, &[]);
    let log = s.log_text();
    assert!(log.contains("recovered"), "{log}");
    let mut c = Client::connect(&s.addr(), "").unwrap();
    for i in 0..64u64 {
        c.read(i * 4096, &mut b).unwrap().unwrap();
        assert!(b == block(i), "flushed block {i} lost");
    }
    assert_eq!(c.write(0, &block(1000), true).unwrap(), 0, "writable again");
    drop(c);
    let _ = s.terminate();
    m.unmount();
    drop(lo);
    drop(fuse);
    drop(kit);
}
