//! Loop devices and mounts for the root-only tests, each removed by a guard.

#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::Command;

pub fn is_root() -> bool {
    // SAFETY: geteuid has no preconditions.
    unsafe { libc::geteuid() == 0 }
}

/// Whether the root tests can run here: root, loop devices, tracefs and
/// its tracepoints, and the tools the tests drive. When they cannot: with
/// FLASHLAB_REQUIRE_ROOT_TESTS=1 (CI) the test fails, otherwise it prints
/// why it skips and the caller returns.
pub fn root_tests_possible(test: &str) -> bool {
    let tools = [
        ("losetup", "util-linux"),
        ("blkdiscard", "util-linux"),
        ("mkfs.ext4", "e2fsprogs"),
        ("filefrag", "e2fsprogs"),
        ("fio", "fio"),
    ];
    let why = if !is_root() {
        Some("not running as root".to_string())
    } else if !Path::new("/dev/loop-control").exists() {
        Some("no /dev/loop-control".to_string())
    } else if let Some((tool, package)) = tools.iter().find(|(t, _)| !tool_exists(t)) {
        Some(format!("{tool} not installed (Debian package {package})"))
    } else {
        tracefs_mounted_for_these_tests();
        flashlab_iotrace::check_available()
            .err()
            .map(|e| e.to_string())
    };
    match why {
        None => true,
        Some(why) => {
            if std::env::var("FLASHLAB_REQUIRE_ROOT_TESTS").as_deref() == Ok("1") {
                panic!("{test}: cannot run ({why}) and FLASHLAB_REQUIRE_ROOT_TESTS=1");
            }
            // Straight to stderr: libtest captures eprintln! of passing tests.
            use std::io::Write;
            let _ = writeln!(std::io::stderr(), "SKIPPED: {test}: {why}");
            false
        }
    }
}

/// Mounts tracefs once for this test process when the machine has not (a
/// fresh machine may not: most distributions mount it at boot). The tests
/// of a file run side by side, and sessions that each mount tracefs and
/// unmount it at their end would race each other (EBUSY), and some tests
/// read the global instance directly. Left mounted, as at boot.
fn tracefs_mounted_for_these_tests() {
    static ONCE: std::sync::Once = std::sync::Once::new();
    ONCE.call_once(|| {
        if !Path::new("/sys/kernel/tracing/instances").is_dir() {
            let _ = Command::new("mount")
                .args(["-t", "tracefs", "nodev", "/sys/kernel/tracing"])
                .status();
        }
    });
}

fn tool_exists(tool: &str) -> bool {
    std::env::var_os("PATH")
        .map(|paths| std::env::split_paths(&paths).any(|d| d.join(tool).is_file()))
        .unwrap_or(false)
        || ["/usr/sbin", "/sbin"]
            .iter()
            .any(|d| Path::new(d).join(tool).is_file())
}

/// Skips (with a visible reason) when the root tests cannot run here.
#[macro_export]
macro_rules! require_root {
    () => {
        if !common::root_tests_possible(module_path!()) {
            return;
        }
    };
}

fn run(cmd: &mut Command) -> String {
    let out = cmd.output().unwrap_or_else(|e| panic!("{cmd:?}: {e}"));
    assert!(
        out.status.success(),
        "{cmd:?} failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

/// A loop device over a file in /dev/shm, detached and deleted on drop.
pub struct Loop {
    pub dev: PathBuf,
    pub name: String,
    pub major: u32,
    pub minor: u32,
    image: PathBuf,
}

impl Loop {
    pub fn new(size_bytes: u64) -> Loop {
        let image = PathBuf::from(format!(
            "/dev/shm/flashlab-iotrace-test-{}-{}.img",
            std::process::id(),
            std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .unwrap()
                .as_nanos()
        ));
        let f = std::fs::File::create(&image).unwrap();
        f.set_len(size_bytes).unwrap();
        drop(f);
        let dev = run(Command::new("losetup")
            .args(["-f", "--show", "--direct-io=on"])
            .arg(&image));
        let dev = PathBuf::from(dev.trim());
        let name = dev.file_name().unwrap().to_str().unwrap().to_string();
        let mm = std::fs::read_to_string(format!("/sys/block/{name}/dev")).unwrap();
        let (major, minor) = mm.trim().split_once(':').unwrap();
        let l = Loop {
            dev,
            name,
            major: major.parse().unwrap(),
            minor: minor.parse().unwrap(),
            image,
        };
        l.settle();
        l
    }

    /// Waits until udev's probes of a new device are done, so that only
    /// the test's IO happens while it counts.
    pub fn settle(&self) {
        let _ = Command::new("udevadm")
            .args(["settle", "--timeout=5"])
            .status();
        std::thread::sleep(std::time::Duration::from_millis(300));
    }

    /// /sys/block/NAME/stat: reads, read sectors, writes, write sectors,
    /// discards, discard sectors, flushes.
    pub fn stat(&self) -> [u64; 7] {
        let text = std::fs::read_to_string(format!("/sys/block/{}/stat", self.name)).unwrap();
        let v: Vec<u64> = text
            .split_whitespace()
            .map(|x| x.parse().unwrap())
            .collect();
        [v[0], v[2], v[4], v[6], v[11], v[13], v[15]]
    }
}

impl Drop for Loop {
    fn drop(&mut self) {
        let _ = Command::new("losetup").arg("-d").arg(&self.dev).status();
        let _ = std::fs::remove_file(&self.image);
    }
}

/// An ext4 file system on a loop device, unmounted on drop.
pub struct Mount {
    pub dir: tempfile::TempDir,
}

impl Mount {
    pub fn ext4(dev: &Path) -> Mount {
        // No background writes of the file system's own while a test
        // traces: inode tables and journal zeroed by mkfs, not later by
        // ext4lazyinit, and no periodic journal commit (every 5 s by
        // default) in the middle of a comparison; the tests `sync` instead.
        run(Command::new("mkfs.ext4")
            .args(["-q", "-F", "-b", "4096"])
            .args(["-E", "lazy_itable_init=0,lazy_journal_init=0"])
            .arg(dev));
        let dir = tempfile::tempdir().unwrap();
        run(Command::new("mount")
            .args(["-o", "commit=300"])
            .arg(dev)
            .arg(dir.path()));
        Mount { dir }
    }
}

impl Drop for Mount {
    fn drop(&mut self) {
        let _ = Command::new("umount").arg(self.dir.path()).status();
    }
}

/// Runs a command, panicking with its stderr on failure.
pub fn sh(cmd: &mut Command) -> String {
    run(cmd)
}
