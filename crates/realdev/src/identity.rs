//! Who the target is, for the results manifest.
//!
//! Everything comes from places that need no privileges and no extra tools:
//! sysfs for block devices (model, serial, queue settings, a loop device's
//! backing file), statfs and mountinfo for files, uname for the kernel. A
//! value that cannot be read is simply absent: identity is descriptive, and a
//! virtual disk without a model string must not stop a run.

use std::collections::BTreeMap;
use std::fs;
use std::path::{Path, PathBuf};

use crate::safety::{parse_mountinfo, MountEntry};

/// The canonical sysfs directory of a block device (`/sys/devices/.../block/loop3`
/// or `.../block/sda/sda1` for a partition).
pub fn sysfs_block_dir(major: u32, minor: u32) -> Option<PathBuf> {
    fs::canonicalize(format!("/sys/dev/block/{major}:{minor}")).ok()
}

/// The sysfs directory of the whole disk that `dir` is (or is a partition of).
pub fn whole_disk_dir(dir: &Path) -> PathBuf {
    if dir.join("partition").exists() {
        if let Some(parent) = dir.parent() {
            return parent.to_path_buf();
        }
    }
    dir.to_path_buf()
}

/// The partitions of a whole disk: (kernel name, major, minor).
pub fn partitions_of(disk_dir: &Path) -> Vec<(String, u32, u32)> {
    let mut out = Vec::new();
    let Ok(entries) = fs::read_dir(disk_dir) else {
        return out;
    };
    for e in entries.flatten() {
        let p = e.path();
        if !p.join("partition").exists() {
            continue;
        }
        if let Some((ma, mi)) = read_trimmed(&p.join("dev"))
            .as_deref()
            .and_then(parse_major_minor)
        {
            out.push((e.file_name().to_string_lossy().into_owned(), ma, mi));
        }
    }
    out.sort();
    out
}

pub fn parse_major_minor(s: &str) -> Option<(u32, u32)> {
    let (a, b) = s.trim().split_once(':')?;
    Some((a.parse().ok()?, b.parse().ok()?))
}

pub fn read_trimmed(p: &Path) -> Option<String> {
    let s = fs::read_to_string(p).ok()?;
    let s = s.trim();
    if s.is_empty() {
        None
    } else {
        Some(s.to_string())
    }
}

/// The active scheduler out of sysfs's `none [mq-deadline] kyber`.
pub fn active_scheduler(s: &str) -> String {
    match (s.find('['), s.find(']')) {
        (Some(a), Some(b)) if a < b => s[a + 1..b].to_string(),
        _ => s.trim().to_string(),
    }
}

/// Identity of the block device `major:minor` (a partition reports its disk's model).
pub fn block_identity(major: u32, minor: u32, map: &mut BTreeMap<String, String>) {
    map.insert("dev".into(), format!("{major}:{minor}"));
    let Some(dir) = sysfs_block_dir(major, minor) else {
        return;
    };
    if let Some(name) = dir.file_name() {
        map.insert("device_name".into(), name.to_string_lossy().into_owned());
    }
    let disk = whole_disk_dir(&dir);
    if disk != dir {
        if let Some(name) = disk.file_name() {
            map.insert("partition_of".into(), name.to_string_lossy().into_owned());
        }
    }
    let dev = disk.join("device");
    fn put(map: &mut BTreeMap<String, String>, key: &str, candidates: &[PathBuf]) {
        if let Some(v) = candidates.iter().find_map(|p| read_trimmed(p)) {
            map.insert(key.to_string(), v);
        }
    }
    put(map, "model", &[dev.join("model")]);
    put(map, "vendor", &[dev.join("vendor")]);
    put(
        map,
        "serial",
        &[dev.join("serial"), disk.join("wwid"), dev.join("wwid")],
    );
    put(
        map,
        "firmware",
        &[dev.join("firmware_rev"), dev.join("rev")],
    );
    let q = disk.join("queue");
    for (key, p) in [
        ("rotational", q.join("rotational")),
        ("logical_block_bytes", q.join("logical_block_size")),
        ("physical_block_bytes", q.join("physical_block_size")),
        ("discard_max_bytes", q.join("discard_max_bytes")),
        ("max_sectors_kb", q.join("max_sectors_kb")),
        ("nr_requests", q.join("nr_requests")),
        ("loop_backing_file", disk.join("loop").join("backing_file")),
        ("loop_dio", disk.join("loop").join("dio")),
    ] {
        put(map, key, &[p]);
    }
    if let Some(s) = read_trimmed(&q.join("scheduler")) {
        map.insert("scheduler".into(), active_scheduler(&s));
    }
    // Where a loop device's data really lives: a backing file on tmpfs is
    // RAM (results' target_warning says so in every run).
    if let Some(backing) = map.get("loop_backing_file").cloned() {
        let path = Path::new(backing.trim_end_matches(" (deleted)"));
        let magic = fs::File::open(path)
            .ok()
            .and_then(|f| crate::sys::fs_magic(std::os::fd::AsFd::as_fd(&f)));
        if let Some(name) = magic.and_then(fs_type_name) {
            map.insert("loop_backing_fs_type".into(), name.into());
        }
    }
}

/// The name of a statfs magic number, for the file systems flashlab is likely to meet.
pub fn fs_type_name(magic: i64) -> Option<&'static str> {
    Some(match magic {
        0xEF53 => "ext2/3/4",
        0x5846_5342 => "xfs",
        0x9123_683E => "btrfs",
        0x0102_1994 => "tmpfs",
        0x8584_58f6 => "ramfs",
        0x794c_7630 => "overlay",
        0x6969 => "nfs",
        0x2fc1_2fc1 => "zfs",
        0xF2F5_2010 => "f2fs",
        0x6573_5546 => "fuse",
        0x4d44 => "vfat",
        0x2011_BAB0 => "exfat",
        0x5346_544e => "ntfs",
        0x0102_1997 => "9p",
        0xca45_1a4e => "bcachefs",
        0x3434 => "nilfs2",
        _ => return None,
    })
}

/// The mount that holds `canonical_path` on device `major:minor`: the entry
/// with that device whose mount point is the longest prefix of the path.
pub fn mount_of(
    entries: &[MountEntry],
    canonical_path: &Path,
    major: u32,
    minor: u32,
) -> Option<MountEntry> {
    entries
        .iter()
        .filter(|e| {
            e.major == major && e.minor == minor && canonical_path.starts_with(&e.mount_point)
        })
        .max_by_key(|e| e.mount_point.as_os_str().len())
        .cloned()
}

/// Identity of a regular file: its file system and the device under it.
pub fn file_identity(
    canonical_path: &Path,
    st_dev: u64,
    fs_magic: Option<i64>,
    map: &mut BTreeMap<String, String>,
) {
    let (major, minor) = crate::sys::dev_major_minor(st_dev);
    map.insert("backing_dev".into(), format!("{major}:{minor}"));
    if let Some(m) = fs_magic {
        map.insert("fs_magic".into(), format!("{m:#x}"));
        if let Some(name) = fs_type_name(m) {
            map.insert("fs_type".into(), name.into());
        }
    }
    if let Ok(text) = fs::read_to_string("/proc/self/mountinfo") {
        let entries = parse_mountinfo(&text);
        if let Some(e) = mount_of(&entries, canonical_path, major, minor) {
            // mountinfo names ext4 as ext4, where the magic only says ext2/3/4.
            map.insert("fs_type".into(), e.fstype.clone());
            map.insert("mount_point".into(), e.mount_point.display().to_string());
            map.insert("fs_source".into(), e.source.clone());
        }
    }
    // Anonymous devices (tmpfs, overlay, btrfs subvolumes) have major 0 and no sysfs entry.
    if major != 0 {
        let mut dev = BTreeMap::new();
        block_identity(major, minor, &mut dev);
        for key in [
            "device_name",
            "model",
            "vendor",
            "serial",
            "rotational",
            "scheduler",
            "loop_backing_file",
        ] {
            if let Some(v) = dev.remove(key) {
                map.insert(format!("backing_{key}"), v);
            }
        }
    }
}

pub fn common_identity(map: &mut BTreeMap<String, String>) {
    if let Some(k) = crate::sys::kernel_release() {
        map.insert("kernel".into(), k);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn scheduler_in_brackets() {
        assert_eq!(active_scheduler("none [mq-deadline] kyber"), "mq-deadline");
        assert_eq!(active_scheduler("[none] mq-deadline"), "none");
        assert_eq!(active_scheduler("none"), "none");
    }

    #[test]
    fn major_minor() {
        assert_eq!(parse_major_minor("7:3\n"), Some((7, 3)));
        assert_eq!(parse_major_minor("259:12"), Some((259, 12)));
        assert_eq!(parse_major_minor("x"), None);
    }

    #[test]
    fn longest_mount_prefix_wins() {
        let text = "22 1 254:0 / / rw - ext4 /dev/vda rw\n\
                    30 22 254:0 /sub /data rw - ext4 /dev/vda rw\n\
                    31 22 0:30 / /data/tmp rw - tmpfs tmpfs rw\n";
        let e = parse_mountinfo(text);
        let m = mount_of(&e, Path::new("/data/x/file"), 254, 0).unwrap();
        assert_eq!(m.mount_point, PathBuf::from("/data"));
        let m = mount_of(&e, Path::new("/etc/x"), 254, 0).unwrap();
        assert_eq!(m.mount_point, PathBuf::from("/"));
        let m = mount_of(&e, Path::new("/data/tmp/f"), 0, 30).unwrap();
        assert_eq!(m.fstype, "tmpfs");
    }
}
