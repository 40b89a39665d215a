//! The write-safety check (design section 8): flashlab never destroys data by surprise.
//!
//! Before a run writes to (or trims) a block device, the device is refused
//! when it or one of its partitions is mounted or used as swap, when something
//! stacks on it (device-mapper, LVM, md: a non-empty sysfs `holders/`), when
//! someone holds it open exclusively, or when its first ~1.1 MiB carry a
//! partition table or a file-system/volume signature. A refusal is one line
//! with the reason and the fix; the only override is `--allow-write-to`
//! naming *that* device (compared after canonicalization, so a by-id symlink
//! counts and a flag naming another device does not).
//!
//! Files need no check: they are created or sized by flashlab, and the
//! engines reject any request outside the file. Reads never need the check.
//!
//! Detection works on bytes and text that tests can build in memory
//! ([`detect_signature`], [`parse_mountinfo`]); only the gathering touches
//! the system.

use std::fs;
use std::os::fd::AsFd;
use std::os::unix::fs::{FileTypeExt, MetadataExt};
use std::path::{Path, PathBuf};

use crate::error::{OpenError, OpenErrorKind};
use crate::identity::{partitions_of, sysfs_block_dir};
use crate::sys;

/// How much of the device start is read for signatures: covers the btrfs
/// superblock (64 KiB), ISO9660 (32 KiB), GPT on 4 KiB sectors, bcache, and
/// the first two ZFS labels (0 and 256 KiB, 256 KiB each).
pub const SIGNATURE_PROBE_BYTES: usize = 1_152 * 1024;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SignatureKind {
    PartitionTable,
    FileSystem,
    /// Swap, encryption, volume managers, RAID, caches.
    Volume,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Signature {
    /// Short name as blkid would print it: "ext4", "gpt", "swap", "LVM2_member"...
    pub name: &'static str,
    pub kind: SignatureKind,
}

impl Signature {
    fn new(name: &'static str, kind: SignatureKind) -> Signature {
        Signature { name, kind }
    }

    /// "an ext4 file system signature", "a GPT partition table"...
    pub fn describe(&self) -> String {
        match (self.kind, self.name) {
            (SignatureKind::PartitionTable, "gpt") => "a GPT partition table".into(),
            (SignatureKind::PartitionTable, "dos") => "an MBR (DOS) partition table".into(),
            (SignatureKind::PartitionTable, n) => format!("a {n} partition table"),
            (SignatureKind::FileSystem, n) => format!("{} {n} file system signature", article(n)),
            (SignatureKind::Volume, "swap") => "a swap signature".into(),
            (SignatureKind::Volume, "crypto_LUKS") => "a LUKS encryption header".into(),
            (SignatureKind::Volume, "LVM2_member") => "an LVM2 physical volume label".into(),
            (SignatureKind::Volume, "linux_raid_member") => "an md RAID superblock".into(),
            (SignatureKind::Volume, "bcache") => "a bcache superblock".into(),
            (SignatureKind::Volume, "zfs_member") => "a ZFS pool label".into(),
            (SignatureKind::Volume, n) => format!("{} {n} signature", article(n)),
        }
    }
}

fn article(word: &str) -> &'static str {
    match word.chars().next() {
        Some(c) if "aeiouAEIOU".contains(c) => "an",
        _ => "a",
    }
}

fn at(buf: &[u8], off: usize, len: usize) -> Option<&[u8]> {
    buf.get(off..off.checked_add(len)?)
}

fn has(buf: &[u8], off: usize, magic: &[u8]) -> bool {
    at(buf, off, magic.len()) == Some(magic)
}

fn le16(buf: &[u8], off: usize) -> Option<u16> {
    Some(u16::from_le_bytes(at(buf, off, 2)?.try_into().ok()?))
}

fn le32(buf: &[u8], off: usize) -> Option<u32> {
    Some(u32::from_le_bytes(at(buf, off, 4)?.try_into().ok()?))
}

fn u64_either(buf: &[u8], off: usize) -> Option<(u64, u64)> {
    let b: [u8; 8] = at(buf, off, 8)?.try_into().ok()?;
    Some((u64::from_le_bytes(b), u64::from_be_bytes(b)))
}

const BCACHE_MAGIC: [u8; 16] = [
    0xc6, 0x85, 0x73, 0xf6, 0x4e, 0x1a, 0x45, 0xca, 0x82, 0x65, 0xf5, 0x7f, 0x48, 0xba, 0x6d, 0x81,
];
const MD_MAGIC: u32 = 0xa92b_4efc;
const ZFS_UBERBLOCK_MAGIC: u64 = 0x00ba_b10c;

/// The first signature found at the start of a device (`head` = its first bytes).
///
/// Unambiguous magics come first; boot-sector formats (FAT, NTFS, exFAT) come
/// before the MBR test because they end in the same 0x55AA.
pub fn detect_signature(head: &[u8]) -> Option<Signature> {
    use SignatureKind::*;
    // ext2/3/4: superblock at 1024, s_magic at 0x38.
    if le16(head, 1024 + 0x38) == Some(0xEF53) {
        let compat = le32(head, 1024 + 0x5C).unwrap_or(0);
        let incompat = le32(head, 1024 + 0x60).unwrap_or(0);
        let ro_compat = le32(head, 1024 + 0x64).unwrap_or(0);
        let name = if incompat & 0x0008 != 0 {
            "jbd" // an external ext3/4 journal device
        } else if incompat & (0x0040 | 0x0080 | 0x0200 | 0x0400 | 0x8000 | 0x1_0000) != 0
            || ro_compat & (0x0008 | 0x0010 | 0x0020 | 0x0040 | 0x0400) != 0
        {
            "ext4"
        } else if compat & 0x0004 != 0 {
            "ext3"
        } else {
            "ext2"
        };
        return Some(Signature::new(
            name,
            if name == "jbd" { Volume } else { FileSystem },
        ));
    }
    if has(head, 0, b"XFSB") {
        return Some(Signature::new("xfs", FileSystem));
    }
    if has(head, 0x1_0040, b"_BHRfS_M") {
        return Some(Signature::new("btrfs", FileSystem));
    }
    if le32(head, 1024) == Some(0xF2F5_2010) {
        return Some(Signature::new("f2fs", FileSystem));
    }
    if has(head, 0, b"hsqs") || has(head, 0, b"sqsh") {
        return Some(Signature::new("squashfs", FileSystem));
    }
    if has(head, 0x8001, b"CD001") {
        return Some(Signature::new("iso9660", FileSystem));
    }
    if has(head, 0, b"LUKS\xba\xbe") {
        return Some(Signature::new("crypto_LUKS", Volume));
    }
    for sector in 0..4 {
        if has(head, 512 * sector, b"LABELONE") && has(head, 512 * sector + 24, b"LVM2 001") {
            return Some(Signature::new("LVM2_member", Volume));
        }
    }
    for page in [4096usize, 8192, 16384, 32768, 65536] {
        if has(head, page - 10, b"SWAPSPACE2") || has(head, page - 10, b"SWAP-SPACE") {
            return Some(Signature::new("swap", Volume));
        }
    }
    if has(head, 4096 + 24, &BCACHE_MAGIC) {
        return Some(Signature::new("bcache", Volume));
    }
    // md superblock versions 1.1 (at 0) and 1.2 (at 4 KiB); 0.90 and 1.0 live at the end.
    if le32(head, 0) == Some(MD_MAGIC) || le32(head, 4096) == Some(MD_MAGIC) {
        return Some(Signature::new("linux_raid_member", Volume));
    }
    // ZFS: uberblock arrays at 128..256 KiB of labels L0 (at 0) and L1 (at 256 KiB).
    for label in [0usize, 256 * 1024] {
        let mut off = label + 128 * 1024;
        while off < label + 256 * 1024 {
            if let Some((le, be)) = u64_either(head, off) {
                if le == ZFS_UBERBLOCK_MAGIC || be == ZFS_UBERBLOCK_MAGIC {
                    return Some(Signature::new("zfs_member", Volume));
                }
            }
            off += 1024;
        }
    }
    // GPT header at LBA 1, for 512- and 4096-byte sectors.
    if has(head, 512, b"EFI PART") || has(head, 4096, b"EFI PART") {
        return Some(Signature::new("gpt", PartitionTable));
    }
    if has(head, 3, b"EXFAT   ") {
        return Some(Signature::new("exfat", FileSystem));
    }
    if has(head, 3, b"NTFS    ") {
        return Some(Signature::new("ntfs", FileSystem));
    }
    let boot_sig = has(head, 510, &[0x55, 0xAA]);
    if boot_sig
        && (has(head, 54, b"FAT12   ")
            || has(head, 54, b"FAT16   ")
            || has(head, 54, b"FAT     ")
            || has(head, 82, b"FAT32   "))
    {
        return Some(Signature::new("vfat", FileSystem));
    }
    if boot_sig {
        // An MBR counts when one of its four entries is in use (type byte non-zero).
        let used = (0..4).any(|i| head.get(446 + 16 * i + 4).is_some_and(|&t| t != 0));
        if used {
            return Some(Signature::new("dos", PartitionTable));
        }
    }
    None
}

/// One line of /proc/self/mountinfo, the fields the safety check and identity need.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct MountEntry {
    pub major: u32,
    pub minor: u32,
    pub mount_point: PathBuf,
    pub fstype: String,
    pub source: String,
}

/// mountinfo escapes space, tab, newline and backslash as octal `\040`.
fn unescape_octal(s: &str) -> String {
    let b = s.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        if b[i] == b'\\'
            && i + 3 < b.len()
            && b[i + 1..i + 4].iter().all(|c| (b'0'..=b'7').contains(c))
        {
            let v = (b[i + 1] - b'0') as u32 * 64
                + (b[i + 2] - b'0') as u32 * 8
                + (b[i + 3] - b'0') as u32;
            out.push(v as u8);
            i += 4;
        } else {
            out.push(b[i]);
            i += 1;
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// Parse /proc/self/mountinfo; malformed lines are skipped (the format is the
/// kernel's, but a check must not fail on a line it does not understand).
pub fn parse_mountinfo(text: &str) -> Vec<MountEntry> {
    let mut out = Vec::new();
    for line in text.lines() {
        let fields: Vec<&str> = line.split(' ').collect();
        // id parent major:minor root mount_point options [optional...] - fstype source superoptions
        let Some(sep) = fields.iter().position(|&f| f == "-") else {
            continue;
        };
        if sep < 6 || fields.len() < sep + 3 {
            continue;
        }
        let Some((major, minor)) = crate::identity::parse_major_minor(fields[2]) else {
            continue;
        };
        out.push(MountEntry {
            major,
            minor,
            mount_point: PathBuf::from(unescape_octal(fields[4])),
            fstype: fields[sep + 1].to_string(),
            source: unescape_octal(fields[sep + 2]),
        });
    }
    out
}

/// The file names of active swap areas in /proc/swaps.
pub fn parse_swaps(text: &str) -> Vec<String> {
    text.lines()
        .skip(1)
        .filter_map(|l| l.split_whitespace().next())
        .map(unescape_octal)
        .collect()
}

/// Why a block device may not be written to.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Hazard {
    /// `node` is the device itself or one of its partitions.
    Mounted {
        node: String,
        is_self: bool,
        mount_point: PathBuf,
    },
    Swap {
        node: String,
        is_self: bool,
    },
    Held {
        node: String,
        is_self: bool,
        holders: Vec<String>,
    },
    Busy,
    Partitions {
        names: Vec<String>,
    },
    Signature(Signature),
}

impl Hazard {
    pub fn reason(&self) -> String {
        fn who(node: &str, is_self: bool) -> String {
            if is_self {
                "it".to_string()
            } else {
                format!("its partition {node}")
            }
        }
        match self {
            Hazard::Mounted {
                node,
                is_self,
                mount_point,
            } => {
                format!(
                    "{} is mounted on {}",
                    who(node, *is_self),
                    mount_point.display()
                )
            }
            Hazard::Swap { node, is_self } => format!("{} is in use as swap", who(node, *is_self)),
            Hazard::Held {
                node,
                is_self,
                holders,
            } => format!(
                "{} is in use by {} (device-mapper, LVM, md or similar)",
                who(node, *is_self),
                holders.join(", ")
            ),
            Hazard::Busy => {
                "it is open exclusively by another program (O_EXCL open gives EBUSY)".into()
            }
            Hazard::Partitions { names } => format!("it has partitions ({})", names.join(", ")),
            Hazard::Signature(s) => format!("it holds {}", s.describe()),
        }
    }

    fn fix(&self, dev: &str) -> String {
        let flag = format!("--allow-write-to {dev}");
        match self {
            Hazard::Mounted { .. } => format!("unmount it, or pass {flag} to write anyway"),
            Hazard::Swap { .. } => format!("swapoff it, or pass {flag} to write anyway"),
            Hazard::Held { .. } => {
                format!("remove what is stacked on it, or pass {flag} to write anyway")
            }
            Hazard::Busy => format!("stop the program using it, or pass {flag} to write anyway"),
            Hazard::Partitions { .. } | Hazard::Signature(_) => {
                format!("pass {flag} to destroy it")
            }
        }
    }
}

/// Compose the one-line refusal.
pub fn refusal_message(dev: &str, hazard: &Hazard, other_allowed: Option<&Path>) -> String {
    let mut msg = format!(
        "refusing to write to {dev}: {}; {}",
        hazard.reason(),
        hazard.fix(dev)
    );
    if let Some(other) = other_allowed {
        msg.push_str(&format!(
            " (--allow-write-to {} names another device)",
            other.display()
        ));
    }
    msg
}

/// Whether `allow_write_to` names the device at `canonical_dev`.
pub fn allow_names(allow_write_to: Option<&Path>, canonical_dev: &Path, rdev: u64) -> bool {
    let Some(a) = allow_write_to else {
        return false;
    };
    if let Ok(c) = fs::canonicalize(a) {
        if c == canonical_dev {
            return true;
        }
    }
    // Two device nodes for the same device (e.g. made with mknod elsewhere) count too.
    match fs::metadata(a) {
        Ok(m) => m.file_type().is_block_device() && m.rdev() == rdev,
        Err(_) => false,
    }
}

/// The result of examining a block device: every hazard found, most severe first.
pub struct Examination {
    pub canonical: PathBuf,
    pub rdev: u64,
    pub hazards: Vec<Hazard>,
}

/// Gather every hazard of the block device at `path` (which must be one).
pub fn examine_block_device(path: &Path, rdev: u64) -> Result<Examination, OpenError> {
    let canonical = fs::canonicalize(path)
        .map_err(|e| OpenError::io(format!("cannot resolve {}", path.display()), &e))?;
    let (major, minor) = sys::dev_major_minor(rdev);
    let mut hazards = Vec::new();

    // The device itself and its partitions: (node path, is_self, major, minor, sysfs dir).
    let mut nodes: Vec<(String, bool, u32, u32, Option<PathBuf>)> = Vec::new();
    let dir = sysfs_block_dir(major, minor);
    nodes.push((
        canonical.display().to_string(),
        true,
        major,
        minor,
        dir.clone(),
    ));
    let mut part_names = Vec::new();
    if let Some(dir) = &dir {
        for (name, ma, mi) in partitions_of(dir) {
            part_names.push(format!("/dev/{name}"));
            nodes.push((format!("/dev/{name}"), false, ma, mi, Some(dir.join(&name))));
        }
    }

    if let Ok(text) = fs::read_to_string("/proc/self/mountinfo") {
        for e in parse_mountinfo(&text) {
            let source_canon = if e.source.starts_with('/') {
                fs::canonicalize(&e.source).ok()
            } else {
                None
            };
            // btrfs reports an anonymous 0:N in mountinfo, so the source path is compared too.
            let hit = nodes.iter().find(|(node, _, ma, mi, _)| {
                (*ma == e.major && *mi == e.minor)
                    || source_canon.as_deref() == Some(Path::new(node))
            });
            if let Some((node, is_self, ..)) = hit {
                let h = Hazard::Mounted {
                    node: node.clone(),
                    is_self: *is_self,
                    mount_point: e.mount_point.clone(),
                };
                if !hazards.contains(&h) {
                    hazards.push(h);
                }
            }
        }
    }

    if let Ok(text) = fs::read_to_string("/proc/swaps") {
        for name in parse_swaps(&text) {
            let Ok(m) = fs::metadata(&name) else { continue };
            if !m.file_type().is_block_device() {
                continue;
            }
            let (ma, mi) = sys::dev_major_minor(m.rdev());
            if let Some((node, is_self, ..)) = nodes.iter().find(|n| n.2 == ma && n.3 == mi) {
                hazards.push(Hazard::Swap {
                    node: node.clone(),
                    is_self: *is_self,
                });
            }
        }
    }

    for (node, is_self, _, _, d) in &nodes {
        let Some(d) = d else { continue };
        let Ok(entries) = fs::read_dir(d.join("holders")) else {
            continue;
        };
        let mut holders: Vec<String> = entries
            .flatten()
            .map(|e| e.file_name().to_string_lossy().into_owned())
            .collect();
        if !holders.is_empty() {
            holders.sort();
            hazards.push(Hazard::Held {
                node: node.clone(),
                is_self: *is_self,
                holders,
            });
        }
    }

    // O_EXCL on a block device fails with EBUSY while anyone else holds it exclusively
    // (a mount, a holder, another flashlab). Only worth naming when nothing above explains it.
    // With a known cause, a busy device is no surprise: do not wait for it to free up.
    let excl = if hazards.is_empty() {
        sys::open_excl_patiently(path, libc::O_RDONLY)
    } else {
        sys::open_raw(path, libc::O_RDONLY | libc::O_EXCL, 0)
    };
    let fd = match excl {
        Ok(fd) => Some(fd),
        Err(e) if e.raw_os_error() == Some(libc::EBUSY) => {
            if hazards.is_empty() {
                hazards.push(Hazard::Busy);
            }
            sys::open_raw(path, libc::O_RDONLY, 0).ok()
        }
        Err(e) => {
            return Err(OpenError::io(
                format!("cannot open {} to check it", path.display()),
                &e,
            ))
        }
    };

    let mut sig_found = false;
    if let Some(fd) = &fd {
        let mut head = vec![0u8; SIGNATURE_PROBE_BYTES];
        let n = sys::pread_full(fd.as_fd(), &mut head, 0).map_err(|e| {
            OpenError::io(
                format!("cannot read the start of {} to check it", path.display()),
                &e,
            )
        })?;
        head.truncate(n);
        if let Some(sig) = detect_signature(&head) {
            hazards.push(Hazard::Signature(sig));
            sig_found = true;
        }
    }
    if !part_names.is_empty() && !sig_found {
        hazards.push(Hazard::Partitions { names: part_names });
    }

    Ok(Examination {
        canonical,
        rdev,
        hazards,
    })
}

/// See the crate-level `check_write_safety`.
pub fn check_write_safety(
    path: &Path,
    allow_write_to: Option<&Path>,
) -> Result<Vec<String>, OpenError> {
    let meta = match fs::metadata(path) {
        Ok(m) => m,
        // A missing path becomes a file flashlab creates: safe.
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
        Err(e) => {
            return Err(OpenError::io(
                format!("cannot examine {}", path.display()),
                &e,
            ))
        }
    };
    if !meta.file_type().is_block_device() {
        return Ok(Vec::new());
    }
    let exam = examine_block_device(path, meta.rdev())?;
    verdict(path, &exam, allow_write_to)
}

/// Turn an examination into warnings (allowed) or a refusal.
pub fn verdict(
    path: &Path,
    exam: &Examination,
    allow_write_to: Option<&Path>,
) -> Result<Vec<String>, OpenError> {
    let dev = path.display().to_string();
    if exam.hazards.is_empty() {
        return Ok(Vec::new());
    }
    if allow_names(allow_write_to, &exam.canonical, exam.rdev) {
        return Ok(exam
            .hazards
            .iter()
            .map(|h| {
                format!(
                    "writing to {dev} although {} (allowed by --allow-write-to)",
                    h.reason()
                )
            })
            .collect());
    }
    Err(OpenError::new(
        OpenErrorKind::Refused,
        refusal_message(&dev, &exam.hazards[0], allow_write_to),
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    const MIB: usize = 1024 * 1024;

    fn blank() -> Vec<u8> {
        vec![0u8; SIGNATURE_PROBE_BYTES]
    }

    fn put(img: &mut [u8], off: usize, bytes: &[u8]) {
        img[off..off + bytes.len()].copy_from_slice(bytes);
    }

    fn name_of(img: &[u8]) -> Option<&'static str> {
        detect_signature(img).map(|s| s.name)
    }

    #[test]
    fn blank_and_random_have_no_signature() {
        assert_eq!(name_of(&blank()), None);
        let mut img = blank();
        let mut rng = crate::buffers::SplitMix64::new(42);
        for c in img.chunks_mut(8) {
            c.copy_from_slice(&rng.next_u64().to_le_bytes());
        }
        // Random bytes could match a 2-byte magic by chance; this seed does not.
        assert_eq!(name_of(&img), None);
        assert_eq!(name_of(&[]), None);
        assert_eq!(name_of(&[0u8; 100]), None);
    }

    #[test]
    fn ext_variants() {
        let mut img = blank();
        put(&mut img, 1024 + 0x38, &0xEF53u16.to_le_bytes());
        assert_eq!(name_of(&img), Some("ext2"));
        put(&mut img, 1024 + 0x5C, &4u32.to_le_bytes());
        assert_eq!(name_of(&img), Some("ext3"));
        put(&mut img, 1024 + 0x60, &0x40u32.to_le_bytes());
        assert_eq!(name_of(&img), Some("ext4"));
        let s = detect_signature(&img).unwrap();
        assert_eq!(s.describe(), "an ext4 file system signature");
    }

    #[test]
    fn each_magic() {
        type Make = Box<dyn Fn(&mut Vec<u8>)>;
        let cases: Vec<(&str, Make)> = vec![
            ("xfs", Box::new(|i| put(i, 0, b"XFSB"))),
            ("btrfs", Box::new(|i| put(i, 0x10040, b"_BHRfS_M"))),
            (
                "f2fs",
                Box::new(|i| put(i, 1024, &0xF2F5_2010u32.to_le_bytes())),
            ),
            ("squashfs", Box::new(|i| put(i, 0, b"hsqs"))),
            ("iso9660", Box::new(|i| put(i, 0x8001, b"CD001"))),
            ("crypto_LUKS", Box::new(|i| put(i, 0, b"LUKS\xba\xbe"))),
            (
                "LVM2_member",
                Box::new(|i| {
                    put(i, 512, b"LABELONE");
                    put(i, 512 + 24, b"LVM2 001");
                }),
            ),
            ("swap", Box::new(|i| put(i, 4096 - 10, b"SWAPSPACE2"))),
            ("swap", Box::new(|i| put(i, 65536 - 10, b"SWAPSPACE2"))),
            ("bcache", Box::new(|i| put(i, 4096 + 24, &BCACHE_MAGIC))),
            (
                "linux_raid_member",
                Box::new(|i| put(i, 4096, &MD_MAGIC.to_le_bytes())),
            ),
            (
                "zfs_member",
                Box::new(|i| put(i, 128 * 1024 + 5 * 1024, &ZFS_UBERBLOCK_MAGIC.to_le_bytes())),
            ),
            (
                "zfs_member",
                Box::new(|i| {
                    put(
                        i,
                        256 * 1024 + 128 * 1024,
                        &ZFS_UBERBLOCK_MAGIC.to_be_bytes(),
                    )
                }),
            ),
            ("gpt", Box::new(|i| put(i, 512, b"EFI PART"))),
            ("gpt", Box::new(|i| put(i, 4096, b"EFI PART"))),
            ("exfat", Box::new(|i| put(i, 3, b"EXFAT   "))),
            (
                "ntfs",
                Box::new(|i| {
                    put(i, 3, b"NTFS    ");
                    put(i, 510, &[0x55, 0xAA]);
                }),
            ),
            (
                "vfat",
                Box::new(|i| {
                    put(i, 82, b"FAT32   ");
                    put(i, 510, &[0x55, 0xAA]);
                    put(i, 446 + 4, &[0x0c]); // boot code bytes must not make it an MBR
                }),
            ),
            (
                "vfat",
                Box::new(|i| {
                    put(i, 54, b"FAT16   ");
                    put(i, 510, &[0x55, 0xAA]);
                }),
            ),
            (
                "dos",
                Box::new(|i| {
                    put(i, 510, &[0x55, 0xAA]);
                    put(i, 446 + 16 + 4, &[0x83]);
                }),
            ),
        ];
        for (want, make) in cases {
            let mut img = blank();
            make(&mut img);
            assert_eq!(name_of(&img), Some(want), "image for {want}");
        }
    }

    #[test]
    fn empty_mbr_is_not_a_partition_table() {
        let mut img = blank();
        put(&mut img, 510, &[0x55, 0xAA]);
        assert_eq!(name_of(&img), None);
    }

    #[test]
    fn protective_mbr_reports_gpt() {
        let mut img = blank();
        put(&mut img, 510, &[0x55, 0xAA]);
        put(&mut img, 446 + 4, &[0xEE]);
        put(&mut img, 512, b"EFI PART");
        assert_eq!(name_of(&img), Some("gpt"));
        assert_eq!(
            detect_signature(&img).unwrap().describe(),
            "a GPT partition table"
        );
    }

    #[test]
    fn truncated_images_do_not_panic() {
        let mut img = vec![0u8; 2 * MIB];
        put(&mut img, 0x10040, b"_BHRfS_M");
        for len in [
            0,
            1,
            511,
            512,
            1025,
            4096,
            0x10040,
            0x10047,
            0x10048,
            SIGNATURE_PROBE_BYTES,
        ] {
            let _ = detect_signature(&img[..len]);
        }
        assert_eq!(name_of(&img[..0x10048]), Some("btrfs"));
        assert_eq!(name_of(&img[..0x10047]), None);
    }

    /// Real tools, when installed, must agree with the in-memory magics.
    #[test]
    fn real_mkfs_images() {
        let dir = tempfile::tempdir().unwrap();
        let tools: [(&str, &[&str], &str); 2] = [
            ("mkfs.ext4", &["-q", "-F"], "ext4"),
            ("mkswap", &[], "swap"),
        ];
        for (tool, args, want) in tools {
            let img = dir.path().join(format!("{want}.img"));
            fs::write(&img, vec![0u8; 8 * MIB]).unwrap();
            let status = std::process::Command::new(tool)
                .args(args)
                .arg(&img)
                .stdout(std::process::Stdio::null())
                .stderr(std::process::Stdio::null())
                .status();
            match status {
                Ok(s) if s.success() => {
                    let head = fs::read(&img).unwrap();
                    assert_eq!(
                        name_of(&head[..SIGNATURE_PROBE_BYTES]),
                        Some(want),
                        "{tool}"
                    );
                }
                _ => eprintln!("skip: {tool} not available"),
            }
        }
    }

    #[test]
    fn mountinfo_parsing() {
        let text = "\
22 1 254:0 / / rw,relatime shared:1 - ext4 /dev/vda rw\n\
35 22 7:3 / /mnt/with\\040space rw,relatime shared:20 master:3 - ext4 /dev/loop3 rw\n\
40 22 0:45 / /srv rw - btrfs /dev/sdb2 rw,space_cache\n\
41 22 0:46 / /dev/shm rw,nosuid - tmpfs tmpfs rw\n\
garbage line\n\
42 22 x:y / /bad rw - ext4 /dev/x rw\n";
        let e = parse_mountinfo(text);
        assert_eq!(e.len(), 4);
        assert_eq!((e[0].major, e[0].minor), (254, 0));
        assert_eq!(e[1].mount_point, PathBuf::from("/mnt/with space"));
        assert_eq!(e[1].fstype, "ext4");
        assert_eq!(e[1].source, "/dev/loop3");
        assert_eq!(
            (e[2].major, e[2].minor, e[2].source.as_str()),
            (0, 45, "/dev/sdb2")
        );
        assert_eq!(e[3].fstype, "tmpfs");
    }

    #[test]
    fn mountinfo_of_this_machine_parses() {
        let text = fs::read_to_string("/proc/self/mountinfo").unwrap();
        let e = parse_mountinfo(&text);
        assert!(e.iter().any(|m| m.mount_point == Path::new("/")));
    }

    #[test]
    fn swaps_parsing() {
        let text = "Filename\tType\tSize\tUsed\tPriority\n/dev/sda2 partition 100 0 -2\n/swap\\040file file 10 0 -3\n";
        assert_eq!(
            parse_swaps(text),
            vec!["/dev/sda2".to_string(), "/swap file".to_string()]
        );
        assert!(parse_swaps("Filename\tType\n").is_empty());
    }

    #[test]
    fn refusal_is_one_line_with_reason_and_fix() {
        let sig = detect_signature(&{
            let mut i = blank();
            put(&mut i, 1024 + 0x38, &0xEF53u16.to_le_bytes());
            put(&mut i, 1024 + 0x60, &0x40u32.to_le_bytes());
            i
        })
        .unwrap();
        let m = refusal_message("/dev/loop3", &Hazard::Signature(sig), None);
        assert_eq!(
            m,
            "refusing to write to /dev/loop3: it holds an ext4 file system signature; pass --allow-write-to /dev/loop3 to destroy it"
        );
        let m = refusal_message(
            "/dev/loop3",
            &Hazard::Mounted {
                node: "/dev/loop3p1".into(),
                is_self: false,
                mount_point: "/mnt/x".into(),
            },
            Some(Path::new("/dev/loop4")),
        );
        assert!(
            m.contains("its partition /dev/loop3p1 is mounted on /mnt/x"),
            "{m}"
        );
        assert!(m.contains("names another device"), "{m}");
        assert!(!m.contains('\n'));
    }

    #[test]
    fn files_and_missing_paths_need_no_check() {
        let dir = tempfile::tempdir().unwrap();
        let f = dir.path().join("f");
        fs::write(&f, b"x").unwrap();
        assert_eq!(check_write_safety(&f, None).unwrap(), Vec::<String>::new());
        assert_eq!(
            check_write_safety(&dir.path().join("missing"), None).unwrap(),
            Vec::<String>::new()
        );
    }
}
