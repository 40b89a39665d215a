//! Every signature the tools here can write is refused, with a message that
//! names it, and accepted again once wipefs has erased it (root only: loop
//! devices over /dev/shm files; see common::root_tests_possible).
//!
//! Each test also lists the signatures through both probers (libblkid and
//! the wipefs fallback) and checks that they agree.

mod common;

use std::collections::BTreeSet;
use std::os::fd::AsFd;
use std::path::Path;

use common::{LoopDev, MdMetadata};
use flashlab_realdev::blkid::{probe_signatures_with, Prober};
use flashlab_realdev::{check_write_safety, open, OpenErrorKind, OpenOptions};

const MIB: u64 = 1 << 20;

fn write_opts(dev: &Path) -> OpenOptions {
    OpenOptions {
        write: true,
        max_outstanding: 1,
        max_io_bytes: 4096,
        ..OpenOptions::new(dev)
    }
}

fn names(dev: &Path, prober: Prober) -> BTreeSet<String> {
    let f = std::fs::File::open(dev).unwrap();
    probe_signatures_with(f.as_fd(), prober)
        .unwrap()
        .into_iter()
        .map(|s| s.name)
        .collect()
}

/// The device is refused with a message naming `words`; both probers list
/// `blkid_type`; after `wipefs -a` it is accepted and written.
fn refused_until_wiped(lo: &LoopDev, blkid_type: &str, words: &[&str]) {
    let dev = lo.path();
    let lib = names(dev, Prober::Library);
    assert!(lib.contains(blkid_type), "libblkid found {lib:?}");
    // The fallback sees at least as much: wipefs also hides each signature it
    // finds and probes again, which uncovers a PMBR under a GPT and the 0x55AA
    // of an NTFS boot sector as an MBR.
    let wipefs = names(dev, Prober::Wipefs);
    assert!(
        wipefs.is_superset(&lib),
        "wipefs {wipefs:?}, libblkid {lib:?}"
    );

    let e = open(&write_opts(dev))
        .err()
        .expect("a signed device must be refused");
    assert_eq!(e.kind(), OpenErrorKind::Refused, "{e}");
    let msg = e.to_string();
    assert!(!msg.contains('\n'), "{msg}");
    for w in words {
        assert!(msg.contains(w), "'{w}' missing from: {msg}");
    }
    assert!(
        msg.ends_with(&format!(
            "pass --allow-write-to {} to destroy it",
            lo.name()
        )),
        "{msg}"
    );
    // The dry-run check agrees.
    assert_eq!(check_write_safety(dev, None).unwrap_err().to_string(), msg);

    wipe(&lo.name());
    assert!(names(dev, Prober::Library).is_empty());
    let opened = open(&write_opts(dev)).expect("a wiped device is writable");
    assert!(opened.warnings.is_empty(), "{:?}", opened.warnings);
}

/// `wipefs -a`, retried for a moment: it claims the device exclusively, and a
/// parallel test or tool may hold that claim briefly.
fn wipe(dev: &str) {
    let mut last = String::new();
    for _ in 0..20 {
        match common::run("wipefs", &["-a", "-q", dev]) {
            Ok(_) => return,
            Err(e) => last = e,
        }
        std::thread::sleep(std::time::Duration::from_millis(100));
    }
    panic!("wipefs: {last}");
}

/// Format a fresh loop device with `cmd` ("DEV" in an argument stands for it) and check it.
fn tool_case(
    test: &str,
    size_mib: u64,
    cmd: &[&str],
    package: &str,
    blkid_type: &str,
    words: &[&str],
) {
    if !common::root_tests_possible(test)
        || !common::tool_available(test, "wipefs", "util-linux")
        || !common::tool_available(test, cmd[0], package)
    {
        return;
    }
    let lo = LoopDev::new(test, size_mib * MIB, false);
    let args: Vec<String> = cmd[1..]
        .iter()
        .map(|a| a.replace("DEV", &lo.name()))
        .collect();
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    common::run(cmd[0], &args).unwrap_or_else(|e| panic!("{test}: {e}"));
    refused_until_wiped(&lo, blkid_type, words);
}

#[ignore = "needs root (loop devices, mounts): run as root with `cargo test -- --include-ignored`, as CI does"]
#[test]
fn ext2() {
    tool_case(
        "ext2",
        16,
        &["mkfs.ext2", "-q", "-F", "DEV"],
        "e2fsprogs",
        "ext2",
        &["an ext2 file system signature"],
    );
}

#[ignore = "needs root (loop devices, mounts): run as root with `cargo test -- --include-ignored`, as CI does"]
#[test]
fn ext3() {
    tool_case(
        "ext3",
        16,
        &["mkfs.ext3", "-q", "-F", "DEV"],
        "e2fsprogs",
        "ext3",
        &["an ext3 file system signature"],
    );
}

#[ignore = "needs root (loop devices, mounts): run as root with `cargo test -- --include-ignored`, as CI does"]
#[test]
fn ext4() {
    tool_case(
        "ext4",
        16,
        &["mkfs.ext4", "-q", "-F", "DEV"],
        "e2fsprogs",
        "ext4",
        &["an ext4 file system signature"],
    );
}

#[ignore = "needs root (loop devices, mounts): run as root with `cargo test -- --include-ignored`, as CI does"]
#[test]
fn xfs() {
    // mkfs.xfs refuses devices under 300 MiB; the file is sparse.
    tool_case(
        "xfs",
        320,
        &["mkfs.xfs", "-q", "-f", "DEV"],
        "xfsprogs",
        "xfs",
        &["an xfs file system signature"],
    );
}

#[ignore = "needs root (loop devices, mounts): run as root with `cargo test -- --include-ignored`, as CI does"]
#[test]
fn btrfs() {
    tool_case(
        "btrfs",
        128,
        &["mkfs.btrfs", "-q", "-f", "DEV"],
        "btrfs-progs",
        "btrfs",
        &["a btrfs file system signature"],
    );
}

#[ignore = "needs root (loop devices, mounts): run as root with `cargo test -- --include-ignored`, as CI does"]
#[test]
fn vfat() {
    tool_case(
        "vfat",
        32,
        &["mkfs.vfat", "DEV"],
        "dosfstools",
        "vfat",
        &["a vfat file system signature"],
    );
}

#[ignore = "needs root (loop devices, mounts): run as root with `cargo test -- --include-ignored`, as CI does"]
#[test]
fn exfat() {
    tool_case(
        "exfat",
        32,
        &["mkfs.exfat", "DEV"],
        "exfatprogs",
        "exfat",
        &["an exfat file system signature"],
    );
}

#[ignore = "needs root (loop devices, mounts): run as root with `cargo test -- --include-ignored`, as CI does"]
#[test]
fn ntfs() {
    tool_case(
        "ntfs",
        32,
        &["mkntfs", "-Q", "-F", "DEV"],
        "ntfs-3g",
        "ntfs",
        &["an ntfs file system signature"],
    );
}

#[ignore = "needs root (loop devices, mounts): run as root with `cargo test -- --include-ignored`, as CI does"]
#[test]
fn f2fs() {
    tool_case(
        "f2fs",
        64,
        &["mkfs.f2fs", "-q", "-f", "DEV"],
        "f2fs-tools",
        "f2fs",
        &["an f2fs file system signature"],
    );
}

#[ignore = "needs root (loop devices, mounts): run as root with `cargo test -- --include-ignored`, as CI does"]
#[test]
fn minix() {
    tool_case(
        "minix",
        16,
        &["mkfs.minix", "DEV"],
        "util-linux",
        "minix",
        &["a minix file system signature"],
    );
}

#[ignore = "needs root (loop devices, mounts): run as root with `cargo test -- --include-ignored`, as CI does"]
#[test]
fn bfs() {
    tool_case(
        "bfs",
        16,
        &["mkfs.bfs", "DEV"],
        "util-linux",
        "bfs",
        &["a bfs file system signature"],
    );
}

#[ignore = "needs root (loop devices, mounts): run as root with `cargo test -- --include-ignored`, as CI does"]
#[test]
fn swap() {
    tool_case(
        "swap",
        16,
        &["mkswap", "DEV"],
        "util-linux",
        "swap",
        &["a swap signature"],
    );
}

#[ignore = "needs root (loop devices, mounts): run as root with `cargo test -- --include-ignored`, as CI does"]
#[test]
fn lvm2_physical_volume() {
    tool_case(
        "lvm",
        16,
        &["pvcreate", "-q", "-ff", "-y", "DEV"],
        "lvm2",
        "LVM2_member",
        &["an LVM2 physical volume label (LVM2_member)"],
    );
}

#[ignore = "needs root (loop devices, mounts): run as root with `cargo test -- --include-ignored`, as CI does"]
#[test]
fn luks2() {
    key_file_case("luks2", "luks2");
}

#[ignore = "needs root (loop devices, mounts): run as root with `cargo test -- --include-ignored`, as CI does"]
#[test]
fn luks1() {
    key_file_case("luks1", "luks1");
}

fn key_file_case(test: &str, kind: &str) {
    let dir = tempfile::tempdir().unwrap();
    let key = dir.path().join("key");
    std::fs::write(&key, b"not a secret").unwrap();
    tool_case(
        test,
        32,
        &[
            "cryptsetup",
            "luksFormat",
            "-q",
            "--type",
            kind,
            "--pbkdf",
            "pbkdf2",
            "--pbkdf-force-iterations",
            "1000",
            "--key-file",
            key.to_str().unwrap(),
            "DEV",
        ],
        "cryptsetup-bin",
        "crypto_LUKS",
        &["a LUKS encryption header (crypto_LUKS)"],
    );
}

fn partition_table_case(test: &str, script: &str, blkid_type: &str, words: &[&str]) {
    if !common::root_tests_possible(test)
        || !common::tool_available(test, "sfdisk", "fdisk")
        || !common::tool_available(test, "wipefs", "util-linux")
    {
        return;
    }
    // No partition scanning: the table alone must be refused, and no
    // partition nodes keep the wiped device busy.
    let lo = LoopDev::new(test, 32 * MIB, false);
    common::run_with_input("sfdisk", &["-q", "--no-reread", &lo.name()], script).expect("sfdisk");
    refused_until_wiped(&lo, blkid_type, words);
}

#[ignore = "needs root (loop devices, mounts): run as root with `cargo test -- --include-ignored`, as CI does"]
#[test]
fn mbr_partition_table() {
    partition_table_case(
        "mbr",
        "label: dos\n,16MiB,L\n",
        "dos",
        &["an MBR (DOS) partition table (dos)"],
    );
}

#[ignore = "needs root (loop devices, mounts): run as root with `cargo test -- --include-ignored`, as CI does"]
#[test]
fn gpt_partition_table() {
    partition_table_case(
        "gpt",
        "label: gpt\n,16MiB,L\n",
        "gpt",
        &["a GPT partition table"],
    );
}

fn md_case(test: &str, version: MdMetadata, label: &str) {
    if !common::root_tests_possible(test)
        || !common::tool_available(test, "wipefs", "util-linux")
        || !common::tool_available(test, "blkid", "util-linux")
    {
        return;
    }
    let size = 64 * MIB;
    let lo = LoopDev::new(test, size, false);
    common::write_md_superblock(lo.path(), size, version);
    assert_eq!(
        common::blkid_type(lo.path()).as_deref(),
        Some("linux_raid_member"),
        "util-linux's blkid -p must recognise the test's md {label} superblock"
    );
    refused_until_wiped(
        &lo,
        "linux_raid_member",
        &[&format!(
            "an md RAID superblock (linux_raid_member, metadata {label})"
        )],
    );
}

#[ignore = "needs root (loop devices, mounts): run as root with `cargo test -- --include-ignored`, as CI does"]
#[test]
fn md_metadata_0_90_at_the_end() {
    md_case("md090", MdMetadata::V0_90, "0.90.0");
}

#[ignore = "needs root (loop devices, mounts): run as root with `cargo test -- --include-ignored`, as CI does"]
#[test]
fn md_metadata_1_0_at_the_end() {
    md_case("md10", MdMetadata::V1_0, "1.0");
}

#[ignore = "needs root (loop devices, mounts): run as root with `cargo test -- --include-ignored`, as CI does"]
#[test]
fn md_metadata_1_1() {
    md_case("md11", MdMetadata::V1_1, "1.1");
}

#[ignore = "needs root (loop devices, mounts): run as root with `cargo test -- --include-ignored`, as CI does"]
#[test]
fn md_metadata_1_2() {
    md_case("md12", MdMetadata::V1_2, "1.2");
}

#[ignore = "needs root (loop devices, mounts): run as root with `cargo test -- --include-ignored`, as CI does"]
#[test]
fn jfs() {
    tool_case(
        "jfs",
        32,
        &["mkfs.jfs", "-q", "DEV"],
        "jfsutils",
        "jfs",
        &["a jfs file system signature"],
    );
}

#[ignore = "needs root (loop devices, mounts): run as root with `cargo test -- --include-ignored`, as CI does"]
#[test]
fn nilfs2() {
    tool_case(
        "nilfs2",
        256,
        &["mkfs.nilfs2", "-q", "-f", "DEV"],
        "nilfs-tools",
        "nilfs2",
        &["a nilfs2 file system signature"],
    );
}

#[ignore = "needs root (loop devices, mounts): run as root with `cargo test -- --include-ignored`, as CI does"]
#[test]
fn reiserfs() {
    tool_case(
        "reiserfs",
        64,
        &["mkfs.reiserfs", "-q", "-f", "DEV"],
        "reiserfsprogs",
        "reiserfs",
        &["a reiserfs file system signature"],
    );
}

#[ignore = "needs root (loop devices, mounts): run as root with `cargo test -- --include-ignored`, as CI does"]
#[test]
fn udf() {
    tool_case(
        "udf",
        32,
        &["mkudffs", "DEV"],
        "udftools",
        "udf",
        &["a udf file system signature"],
    );
}

#[ignore = "needs root (loop devices, mounts): run as root with `cargo test -- --include-ignored`, as CI does"]
#[test]
fn squashfs() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("file"), b"data").unwrap();
    let src = dir.path().to_str().unwrap();
    tool_case(
        "squashfs",
        16,
        &["mksquashfs", src, "DEV", "-noappend", "-quiet"],
        "squashfs-tools",
        "squashfs",
        &["a squashfs file system signature"],
    );
}

#[ignore = "needs root (loop devices, mounts): run as root with `cargo test -- --include-ignored`, as CI does"]
#[test]
fn iso9660() {
    // tool_case checks the first word only ("sh"): check genisoimage here.
    if !common::root_tests_possible("iso9660")
        || !common::tool_available("iso9660", "genisoimage", "genisoimage")
    {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("file"), b"data").unwrap();
    let script = format!(
        "genisoimage -quiet -o - {} | dd of=DEV conv=notrunc status=none",
        dir.path().display()
    );
    tool_case(
        "iso9660",
        16,
        &["sh", "-c", &script],
        "genisoimage",
        "iso9660",
        &["an iso9660 file system signature"],
    );
}
