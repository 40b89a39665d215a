//! The write-safety check on real loop devices (root only; see common::root_tests_possible).
//! Each test builds its own loop devices over unique /dev/shm files, torn down by Drop.

mod common;

use std::os::unix::fs::symlink;
use std::path::Path;

use common::LoopDev;
use flashlab_realdev::{check_write_safety, open, OpenErrorKind, OpenOptions};

const MIB: u64 = 1 << 20;

fn write_opts(dev: &Path, allow: Option<&Path>) -> OpenOptions {
    OpenOptions {
        write: true,
        max_outstanding: 1,
        max_io_bytes: 4096,
        allow_write_to: allow.map(Path::to_path_buf),
        ..OpenOptions::new(dev)
    }
}

fn refused(dev: &Path, allow: Option<&Path>) -> String {
    let e = check_write_safety(dev, allow).expect_err("the check must refuse");
    assert_eq!(e.kind(), OpenErrorKind::Refused);
    assert_eq!(e.kind().exit_code(), 2);
    let msg = e.to_string();
    assert!(!msg.contains('\n'));
    assert!(
        msg.starts_with(&format!("refusing to write to {}: ", dev.display())),
        "{msg}"
    );
    // open() applies the same check.
    let e2 = open(&write_opts(dev, allow))
        .err()
        .expect("open must refuse too");
    assert_eq!(e2.kind(), OpenErrorKind::Refused, "{e2}");
    msg
}

#[ignore = "needs root (loop devices, mounts): run as root with `cargo test -- --include-ignored`, as CI does"]
#[test]
fn blank_device_is_writable() {
    if !common::root_tests_possible("blank_device_is_writable") {
        return;
    }
    let lo = LoopDev::new("blank", 32 * MIB, false);
    assert_eq!(
        check_write_safety(lo.path(), None).unwrap(),
        Vec::<String>::new()
    );
    let opened = open(&write_opts(lo.path(), None)).unwrap();
    assert!(opened.warnings.is_empty(), "{:?}", opened.warnings);
    // While we hold it (O_EXCL), nobody else may claim it exclusively.
    let msg = refused(lo.path(), None);
    assert!(msg.contains("exclusively"), "{msg}");
    drop(opened);
    assert!(check_write_safety(lo.path(), None).unwrap().is_empty());
}

#[ignore = "needs root (loop devices, mounts): run as root with `cargo test -- --include-ignored`, as CI does"]
#[test]
fn ext4_signature_is_refused_unless_that_device_is_named() {
    if !common::root_tests_possible("ext4_signature_is_refused")
        || !common::tool_available("ext4_signature_is_refused", "mkfs.ext4", "e2fsprogs")
    {
        return;
    }
    let lo = LoopDev::new("ext4", 32 * MIB, false);
    let other = LoopDev::new("other", 4 * MIB, false);
    lo.mkfs_ext4();
    let dev = lo.path();
    let msg = refused(dev, None);
    assert_eq!(
        msg,
        format!(
            "refusing to write to {0}: it holds an ext4 file system signature; pass --allow-write-to {0} to destroy it",
            dev.display()
        )
    );
    // Naming another device does not count, and the message says so.
    let msg = refused(dev, Some(other.path()));
    assert!(msg.contains("names another device"), "{msg}");
    // Reads never need the check.
    let ro = open(&OpenOptions {
        max_io_bytes: 4096,
        ..OpenOptions::new(dev)
    })
    .unwrap();
    assert!(ro.warnings.is_empty());
    drop(ro);
    // Naming the device (directly or through a symlink) allows it, with warnings.
    let w = check_write_safety(dev, Some(dev)).unwrap();
    assert_eq!(w.len(), 1);
    assert!(w[0].contains("ext4 file system signature"), "{w:?}");
    let dir = tempfile::tempdir().unwrap();
    let link = dir.path().join("my-disk");
    symlink(dev, &link).unwrap();
    assert_eq!(check_write_safety(dev, Some(&link)).unwrap().len(), 1);
    let opened = open(&write_opts(dev, Some(&link))).unwrap();
    assert!(
        opened.warnings.iter().any(|w| w.contains("ext4")),
        "{:?}",
        opened.warnings
    );
}

#[ignore = "needs root (loop devices, mounts): run as root with `cargo test -- --include-ignored`, as CI does"]
#[test]
fn mounted_device_is_refused_and_busy() {
    if !common::root_tests_possible("mounted_device_is_refused")
        || !common::tool_available("mounted_device_is_refused", "mkfs.ext4", "e2fsprogs")
    {
        return;
    }
    let mut lo = LoopDev::new("mounted", 32 * MIB, false);
    lo.mkfs_ext4();
    let mnt = tempfile::tempdir().unwrap();
    let dev = lo.dev.clone();
    lo.mount(&dev, mnt.path());
    let msg = refused(&dev, None);
    assert!(
        msg.contains(&format!("it is mounted on {}", mnt.path().display())),
        "{msg}"
    );
    assert!(msg.contains("unmount it"), "{msg}");
    // A mounted block device cannot be opened exclusively.
    let err = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags_excl()
        .open(&dev)
        .expect_err("O_EXCL on a mounted device");
    assert_eq!(err.raw_os_error(), Some(libc::EBUSY));
    // The override lists every reason.
    let w = check_write_safety(&dev, Some(&dev)).unwrap();
    assert!(w.iter().any(|w| w.contains("mounted")), "{w:?}");
    assert!(w.iter().any(|w| w.contains("ext4")), "{w:?}");
}

trait ExclExt {
    fn custom_flags_excl(&mut self) -> &mut Self;
}

impl ExclExt for std::fs::OpenOptions {
    fn custom_flags_excl(&mut self) -> &mut Self {
        use std::os::unix::fs::OpenOptionsExt;
        self.custom_flags(libc::O_EXCL)
    }
}

#[ignore = "needs root (loop devices, mounts): run as root with `cargo test -- --include-ignored`, as CI does"]
#[test]
fn partition_table_is_refused() {
    if !common::root_tests_possible("partition_table_is_refused") {
        return;
    }
    let lo = LoopDev::new("mbr", 32 * MIB, true);
    if common::tool_exists("sfdisk") {
        common::run_with_input("sfdisk", &["-q", &lo.name()], "label: dos\n,16MiB,L\n")
            .expect("sfdisk");
    } else if !common::tool_available("partition_table_is_refused", "sfdisk", "fdisk") {
        return;
    }
    let msg = refused(lo.path(), None);
    assert!(msg.contains("MBR (DOS) partition table"), "{msg}");
    assert!(
        msg.contains(&format!("--allow-write-to {}", lo.name())),
        "{msg}"
    );
    let w = check_write_safety(lo.path(), Some(lo.path())).unwrap();
    assert!(!w.is_empty());
}

#[ignore = "needs root (loop devices, mounts): run as root with `cargo test -- --include-ignored`, as CI does"]
#[test]
fn gpt_with_a_mounted_partition_is_refused() {
    if !common::root_tests_possible("gpt_with_a_mounted_partition")
        || !common::tool_available("gpt_with_a_mounted_partition", "sfdisk", "fdisk")
        || !common::tool_available("gpt_with_a_mounted_partition", "mkfs.ext4", "e2fsprogs")
    {
        return;
    }
    let mut lo = LoopDev::new("gpt", 32 * MIB, true);
    common::run_with_input("sfdisk", &["-q", &lo.name()], "label: gpt\n,16MiB,L\n")
        .expect("sfdisk");
    let part = std::path::PathBuf::from(format!("{}p1", lo.name()));
    // udev may take a moment to create the partition node.
    for _ in 0..50 {
        if part.exists() {
            break;
        }
        std::thread::sleep(std::time::Duration::from_millis(100));
    }
    if !part.exists() {
        let _ = common::run("partx", &["-a", &lo.name()]);
    }
    if !part.exists() {
        // Without partition nodes the table alone must still be refused.
        let msg = refused(lo.path(), None);
        assert!(msg.contains("GPT partition table"), "{msg}");
        eprintln!(
            "note: no partition node {} appeared; tested the table only",
            part.display()
        );
        return;
    }
    common::run("mkfs.ext4", &["-q", "-F", part.to_str().unwrap()])
        .expect("mkfs.ext4 on the partition");
    let mnt = tempfile::tempdir().unwrap();
    lo.mount(&part, mnt.path());
    let msg = refused(lo.path(), None);
    assert!(
        msg.contains(&format!("its partition {} is mounted", part.display())),
        "{msg}"
    );
}

#[ignore = "needs root (loop devices, mounts): run as root with `cargo test -- --include-ignored`, as CI does"]
#[test]
fn base_device_under_a_mounted_stacked_loop_is_in_use() {
    if !common::root_tests_possible("stacked_loop")
        || !common::tool_available("stacked_loop", "mkfs.ext4", "e2fsprogs")
    {
        return;
    }
    let base = LoopDev::new("base", 32 * MIB, false);
    // Declared after `base`, so dropped (unmounted, detached) before it.
    let mut upper = LoopDev::over(base.path());
    upper.mkfs_ext4();
    let mnt = tempfile::tempdir().unwrap();
    let up = upper.dev.clone();
    upper.mount(&up, mnt.path());
    let msg = refused(base.path(), None);
    assert!(
        msg.contains(&format!(
            "the loop device {} is stacked on it and is mounted on {}",
            upper.name(),
            mnt.path().display()
        )),
        "{msg}"
    );
    assert!(msg.contains("remove what is stacked on it"), "{msg}");
}

#[ignore = "needs root (loop devices, mounts): run as root with `cargo test -- --include-ignored`, as CI does"]
#[test]
fn loop_over_a_mounted_device_is_in_use() {
    if !common::root_tests_possible("loop_over_mounted")
        || !common::tool_available("loop_over_mounted", "mkfs.ext4", "e2fsprogs")
    {
        return;
    }
    let mut base = LoopDev::new("mounted-base", 32 * MIB, false);
    base.mkfs_ext4();
    let mnt = tempfile::tempdir().unwrap();
    let b = base.dev.clone();
    base.mount(&b, mnt.path());
    let upper = LoopDev::over(base.path());
    let msg = refused(upper.path(), None);
    assert!(
        msg.contains(&format!(
            "it is a loop device over {0}, and {0} is mounted on {1}",
            base.name(),
            mnt.path().display()
        )),
        "{msg}"
    );
    drop(upper);
}

#[ignore = "needs root (loop devices, mounts): run as root with `cargo test -- --include-ignored`, as CI does"]
#[test]
fn loop_over_a_file_on_a_mounted_device_is_in_use_but_tmpfs_files_are_not() {
    if !common::root_tests_possible("loop_over_file")
        || !common::tool_available("loop_over_file", "mkfs.ext4", "e2fsprogs")
    {
        return;
    }
    let mut disk = LoopDev::new("file-host", 32 * MIB, false);
    disk.mkfs_ext4();
    let mnt = tempfile::tempdir().unwrap();
    let d = disk.dev.clone();
    disk.mount(&d, mnt.path());
    let image = mnt.path().join("disk.img");
    std::fs::File::create(&image)
        .unwrap()
        .set_len(8 * MIB)
        .unwrap();
    let lo = LoopDev::over(&image);
    let msg = refused(lo.path(), None);
    assert!(
        msg.contains(&format!(
            "it is a loop device over {}, a file on {} (mounted on {})",
            image.display(),
            disk.name(),
            mnt.path().display()
        )),
        "{msg}"
    );
    assert!(msg.contains("run on the file itself"), "{msg}");
    // Naming it allows it, with the reason as a warning.
    let opened = open(&write_opts(lo.path(), Some(lo.path()))).unwrap();
    assert!(
        opened.warnings.iter().any(|w| w.contains("a file on")),
        "{:?}",
        opened.warnings
    );
    drop(opened);
    drop(lo);
    // A loop device over a /dev/shm (tmpfs) file has no device under it: writable.
    let shm = LoopDev::new("shm", 8 * MIB, false);
    assert!(check_write_safety(shm.path(), None).unwrap().is_empty());
}

/// swapoff on drop, even when the test fails.
struct SwapOn(String);

impl Drop for SwapOn {
    fn drop(&mut self) {
        let _ = common::run("swapoff", &[&self.0]);
    }
}

#[ignore = "needs root (loop devices, mounts): run as root with `cargo test -- --include-ignored`, as CI does"]
#[test]
fn active_swap_is_refused() {
    if !common::root_tests_possible("active_swap")
        || !common::tool_available("active_swap", "swapon", "mount")
    {
        return;
    }
    let lo = LoopDev::new("swap", 16 * MIB, false);
    common::run("mkswap", &[&lo.name()]).expect("mkswap");
    common::run("swapon", &[&lo.name()]).expect("swapon");
    let _on = SwapOn(lo.name());
    let msg = refused(lo.path(), None);
    assert!(msg.contains("it is in use as swap; swapoff it"), "{msg}");
}

#[ignore = "needs root (loop devices, mounts): run as root with `cargo test -- --include-ignored`, as CI does"]
#[test]
fn a_mount_two_loop_devices_up_is_found() {
    if !common::root_tests_possible("two_stacked_loops")
        || !common::tool_available("two_stacked_loops", "mkfs.ext4", "e2fsprogs")
    {
        return;
    }
    let base = LoopDev::new("base2", 32 * MIB, false);
    let mid = LoopDev::over(base.path());
    let mut top = LoopDev::over(mid.path());
    top.mkfs_ext4();
    let mnt = tempfile::tempdir().unwrap();
    let t = top.dev.clone();
    top.mount(&t, mnt.path());
    let msg = refused(base.path(), None);
    assert!(
        msg.contains(&format!(
            "the loop device {0} is stacked on it and the loop device {1} is stacked on {0} and is mounted on {2}",
            mid.name(),
            top.name(),
            mnt.path().display()
        )),
        "{msg}"
    );
    drop(top);
    drop(mid);
}

#[ignore = "needs root (loop devices, mounts): run as root with `cargo test -- --include-ignored`, as CI does"]
#[test]
fn open_checked_returns_the_one_descriptor_it_checked() {
    use std::os::unix::fs::MetadataExt;
    if !common::root_tests_possible("open_checked")
        || !common::tool_available("open_checked", "mkfs.ext4", "e2fsprogs")
    {
        return;
    }
    let blank = LoopDev::new("checked-blank", 8 * MIB, false);
    let checked = flashlab_realdev::open_checked(blank.path(), None).unwrap();
    assert!(checked.is_block_device() && checked.exclusive);
    assert!(checked.warnings.is_empty(), "{:?}", checked.warnings);
    let rdev = std::fs::metadata(blank.path()).unwrap().rdev();
    assert_eq!(checked.rdev(), rdev);
    // proc_path names the same device.
    assert_eq!(std::fs::metadata(checked.proc_path()).unwrap().rdev(), rdev);
    drop(checked);

    let ext4 = LoopDev::new("checked-ext4", 8 * MIB, false);
    ext4.mkfs_ext4();
    match flashlab_realdev::open_checked(ext4.path(), None) {
        Err(flashlab_realdev::CheckError::Refused(e)) => {
            assert_eq!(e.kind(), OpenErrorKind::Refused);
            assert!(e.to_string().contains("ext4"), "{e}");
        }
        Err(flashlab_realdev::CheckError::Open(e)) => panic!("open failed: {e}"),
        Ok(_) => panic!("an ext4 device must be refused"),
    }
    let allowed = flashlab_realdev::open_checked(ext4.path(), Some(ext4.path())).unwrap();
    assert!(allowed.warnings.iter().any(|w| w.contains("ext4")));
}
