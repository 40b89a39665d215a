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
    /// The backing file is ours to delete (false for a loop over someone's device or file).
    owns_backing: bool,
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
            owns_backing: true,
        }
    }

    /// A loop device over an existing file or block device, left in place on drop.
    pub fn over(backing: &Path) -> LoopDev {
        let dev = run("losetup", &["-f", "--show", backing.to_str().unwrap()])
            .unwrap_or_else(|e| panic!("losetup over {}: {e}", backing.display()));
        LoopDev {
            dev: PathBuf::from(dev),
            backing: backing.to_path_buf(),
            mounts: Vec::new(),
            owns_backing: false,
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
        if self.owns_backing {
            let _ = fs::remove_file(&self.backing);
        }
    }
}

/// A scratch directory on a disk-backed file system (tmpfs has no real O_DIRECT).
pub fn disk_tempdir() -> tempfile::TempDir {
    tempfile::Builder::new()
        .prefix("flashlab-realdev-")
        .tempdir_in(env!("CARGO_TARGET_TMPDIR"))
        .expect("tempdir in the target directory")
}

/// md RAID superblock versions the test writer knows.
#[derive(Clone, Copy, Debug)]
pub enum MdMetadata {
    /// 0.90: 4 KiB at the last 64 KiB-aligned block before the end.
    V0_90,
    /// 1.0: at the end (8 KiB before it, 4 KiB-aligned).
    V1_0,
    /// 1.1: at the start.
    V1_1,
    /// 1.2: 4 KiB from the start.
    V1_2,
}

/// Write an md superblock of `version` for a 2-disk RAID1 member onto the
/// device `dev` of `size_bytes`: mdadm cannot create arrays here (no md
/// driver), and a test of detection needs only the superblock. Tests check
/// that util-linux's own `blkid -p` recognises it, so the writer cannot
/// drift from what real md metadata looks like to libblkid.
pub fn write_md_superblock(dev: &Path, size_bytes: u64, version: MdMetadata) {
    use std::io::{Seek, SeekFrom, Write};
    const MD_MAGIC: u32 = 0xa92b_4efc;
    let put32 =
        |sb: &mut [u8], off: usize, v: u32| sb[off..off + 4].copy_from_slice(&v.to_le_bytes());
    let (offset, sb) = match version {
        MdMetadata::V0_90 => {
            // mdp_super_t: magic, major 0, minor 90, patch 0, then the set uuid words.
            let mut sb = vec![0u8; 4096];
            put32(&mut sb, 0, MD_MAGIC);
            put32(&mut sb, 8, 90);
            put32(&mut sb, 20, 0x1111_1111); // set_uuid0
            put32(&mut sb, 28, 1); // level
            put32(&mut sb, 40, 2); // raid_disks
            for (i, w) in [0x2222_2222u32, 0x3333_3333, 0x4444_4444]
                .iter()
                .enumerate()
            {
                put32(&mut sb, 52 + 4 * i, *w); // set_uuid1..3
            }
            ((size_bytes & !0xffff) - 0x1_0000, sb)
        }
        v => {
            // mdp_superblock_1 with max_dev 0: 256 bytes, checksummed.
            let offset = match v {
                MdMetadata::V1_0 => (((size_bytes >> 9) - 16) & !7) << 9,
                MdMetadata::V1_1 => 0,
                _ => 4096,
            };
            let mut sb = vec![0u8; 256];
            put32(&mut sb, 0, MD_MAGIC);
            put32(&mut sb, 4, 1); // major_version
            for (i, b) in sb[16..32].iter_mut().enumerate() {
                *b = i as u8 + 1; // set_uuid
            }
            sb[32..40].copy_from_slice(b"flashlab"); // set_name
            put32(&mut sb, 72, 1); // level
            put32(&mut sb, 92, 2); // raid_disks
            sb[144..152].copy_from_slice(&(offset >> 9).to_le_bytes()); // super_offset
            for (i, b) in sb[168..184].iter_mut().enumerate() {
                *b = i as u8 + 17; // device_uuid
            }
            let sum: u64 = sb
                .chunks(4)
                .map(|w| u32::from_le_bytes(w.try_into().unwrap()) as u64)
                .sum();
            let csum = (sum & 0xffff_ffff) + (sum >> 32);
            put32(&mut sb, 216, csum as u32);
            (offset, sb)
        }
    };
    let mut f = fs::OpenOptions::new().write(true).open(dev).unwrap();
    f.seek(SeekFrom::Start(offset)).unwrap();
    f.write_all(&sb).unwrap();
    f.sync_all().unwrap();
}

/// What util-linux's `blkid -p` (low-level probe, no cache) calls the
/// device: TYPE or PTTYPE, or None.
pub fn blkid_type(dev: &Path) -> Option<String> {
    let out = run("blkid", &["-p", "-o", "export", dev.to_str().unwrap()]).ok()?;
    out.lines()
        .find_map(|l| {
            l.strip_prefix("TYPE=")
                .or_else(|| l.strip_prefix("PTTYPE="))
        })
        .map(str::to_string)
}
