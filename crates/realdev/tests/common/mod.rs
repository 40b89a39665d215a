//! Helpers shared by the integration tests: root gating and loop devices that
//! clean up after themselves.
#![allow(dead_code)]

use std::fs;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicU32, Ordering};

/// Whether tests that need root and loop devices can run. When they cannot:
/// with FLASHLAB_REQUIRE_ROOT_TESTS=1 the test fails, otherwise it prints a
/// skip line and the caller returns.
pub fn root_tests_possible(test: &str) -> bool {
    let why = if unsafe_geteuid() != 0 {
        Some("not running as root")
    } else if !Path::new("/dev/loop-control").exists() {
        Some("no /dev/loop-control")
    } else if !tool_exists("losetup") {
        Some("losetup not installed (util-linux)")
    } else {
        None
    };
    match why {
        None => true,
        Some(why) => {
            if std::env::var("FLASHLAB_REQUIRE_ROOT_TESTS").as_deref() == Ok("1") {
                panic!("{test}: cannot run ({why}) and FLASHLAB_REQUIRE_ROOT_TESTS=1");
            }
            eprintln!("skip: {test}: {why}");
            false
        }
    }
}

/// Like [`root_tests_possible`], for a test that also needs `tool`.
pub fn tool_available(test: &str, tool: &str, package: &str) -> bool {
    if tool_exists(tool) {
        return true;
    }
    if std::env::var("FLASHLAB_REQUIRE_ROOT_TESTS").as_deref() == Ok("1") {
        panic!("{test}: {tool} is missing (Debian package {package}) and FLASHLAB_REQUIRE_ROOT_TESTS=1");
    }
    eprintln!("skip: {test}: {tool} not installed (Debian package {package})");
    false
}

fn unsafe_geteuid() -> u32 {
    // SAFETY: geteuid has no preconditions and cannot fail.
    unsafe { libc::geteuid() }
}

pub fn tool_exists(tool: &str) -> bool {
    Command::new("sh")
        .arg("-c")
        .arg(format!("command -v {tool}"))
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .map(|s| s.success())
        .unwrap_or(false)
}

/// Run a command; Err carries its stderr.
pub fn run(cmd: &str, args: &[&str]) -> Result<String, String> {
    let out = Command::new(cmd)
        .args(args)
        .output()
        .map_err(|e| format!("{cmd}: {e}"))?;
    if !out.status.success() {
        return Err(format!(
            "{cmd} {args:?}: {}",
            String::from_utf8_lossy(&out.stderr).trim()
        ));
    }
    Ok(String::from_utf8_lossy(&out.stdout).trim().to_string())
}

/// Run a command with `input` on stdin.
pub fn run_with_input(cmd: &str, args: &[&str], input: &str) -> Result<(), String> {
    use std::io::Write;
    let mut child = Command::new(cmd)
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|e| format!("{cmd}: {e}"))?;
    child
        .stdin
        .take()
        .unwrap()
        .write_all(input.as_bytes())
        .map_err(|e| e.to_string())?;
    let out = child.wait_with_output().map_err(|e| e.to_string())?;
    if !out.status.success() {
        return Err(format!(
            "{cmd}: {}",
            String::from_utf8_lossy(&out.stderr).trim()
        ));
    }
    Ok(())
}

static COUNTER: AtomicU32 = AtomicU32::new(0);

/// A unique name for this process and call.
pub fn unique(tag: &str) -> String {
    format!(
        "flashlab-realdev-test-{}-{}-{}",
        std::process::id(),
        tag,
        COUNTER.fetch_add(1, Ordering::SeqCst)
    )
}

/// A loop device over a /dev/shm file; Drop unmounts, detaches and deletes.
pub struct LoopDev {
    pub dev: PathBuf,
    pub backing: PathBuf,
    mounts: Vec<PathBuf>,
}

impl LoopDev {
    /// `partscan`: let the kernel create loopNpM partition devices.
    pub fn new(tag: &str, size_bytes: u64, partscan: bool) -> LoopDev {
        let backing = PathBuf::from("/dev/shm").join(unique(tag));
        let f = fs::File::create(&backing).expect("create backing file");
        f.set_len(size_bytes).expect("size backing file");
        drop(f);
        let b = backing.to_str().unwrap();
        let mut args = vec!["-f", "--show"];
        if partscan {
            args.push("-P");
        }
        args.push(b);
        let dev = match run("losetup", &args) {
            Ok(d) => PathBuf::from(d),
            Err(e) => {
                let _ = fs::remove_file(&backing);
                panic!("losetup failed: {e}");
            }
        };
        LoopDev {
            dev,
            backing,
            mounts: Vec::new(),
        }
    }

    pub fn path(&self) -> &Path {
        &self.dev
    }

    pub fn name(&self) -> String {
        self.dev.display().to_string()
    }

    pub fn mkfs_ext4(&self) {
        run("mkfs.ext4", &["-q", "-F", &self.name()]).expect("mkfs.ext4");
    }

    /// Mount `what` (the device or a partition) on `dir`; unmounted on drop.
    pub fn mount(&mut self, what: &Path, dir: &Path) {
        run("mount", &[what.to_str().unwrap(), dir.to_str().unwrap()]).expect("mount");
        self.mounts.push(dir.to_path_buf());
    }
}

impl Drop for LoopDev {
    fn drop(&mut self) {
        for m in self.mounts.drain(..).rev() {
            if run("umount", &[m.to_str().unwrap()]).is_err() {
                let _ = run("umount", &["-l", m.to_str().unwrap()]);
            }
        }
        let _ = run("losetup", &["-d", &self.name()]);
        let _ = fs::remove_file(&self.backing);
    }
}

/// A scratch directory on a disk-backed file system (tmpfs has no real O_DIRECT).
pub fn disk_tempdir() -> tempfile::TempDir {
    tempfile::Builder::new()
        .prefix("flashlab-realdev-")
        .tempdir_in(env!("CARGO_TARGET_TMPDIR"))
        .expect("tempdir in the target directory")
}
