//! The write-safety check (design section 8): flashlab never destroys data by surprise.
//!
//! **One descriptor, checked, then used.** [`open_checked`] opens the path
//! once (read-write, `O_EXCL` on a block device), and every question is then
//! asked about *what was opened*, never about the path again: `fstat` gives
//! its type and `st_rdev`; sysfs (`/sys/dev/block/MAJ:MIN`) its partitions,
//! holders and loop backing; `/proc/self/mountinfo` and `/proc/swaps` are
//! matched by device number; signatures are read by libblkid through that
//! same descriptor ([`crate::blkid`]). The engines then do all IO through
//! it. A symlink or device node switched after the open cannot redirect a
//! single write (a test flips a symlink between a blank and an ext4 loop
//! device while runs open it).
//!
//! A block device is refused when
//! - it or one of its partitions is mounted or used as swap;
//! - something stacks on it: a non-empty sysfs `holders/` (device-mapper,
//!   LVM, md, bcache), or a loop device over it that is itself in use (the
//!   base device under a mounted stacked loop);
//! - it is a loop device over a block device that is in use, or over a file
//!   whose file system lives on a mounted block device (writes land in another
//!   file system's file). Files on RAM-backed file systems (tmpfs, such as
//!   /dev/shm) have no device under them and do not count;
//! - someone else holds it open exclusively (`O_EXCL` gives EBUSY);
//! - libblkid finds any signature on it (every file system, RAID member
//!   including md 0.90/1.0 superblocks at the end, LVM, LUKS, swap, any
//!   partition table), or it has partition devices;
//! - its signatures cannot be checked (neither libblkid nor wipefs is
//!   installed, or reading the device failed).
//!
//! A refusal is one line with the reason and the fix; the only override is
//! `--allow-write-to` naming *that* device: a path whose block device number
//! equals the opened descriptor's `st_rdev` (a by-id symlink counts, a flag
//! naming another device does not).
//!
//! Files need no check: they are created or sized by flashlab, and the
//! engines reject any request outside the file. Reads never need the check.

use std::collections::BTreeSet;
use std::fs;
use std::io;
use std::os::fd::{AsFd, BorrowedFd, OwnedFd};
use std::os::unix::fs::{FileTypeExt, MetadataExt};
use std::path::{Path, PathBuf};

pub use crate::blkid::{ProbeError, Prober, Signature, SignatureUsage};
use crate::error::{OpenError, OpenErrorKind};
use crate::identity::{parse_major_minor, partitions_of, read_trimmed, sysfs_block_dir};
use crate::sys;

/// How deep loop devices stacked on loop devices are followed.
const MAX_STACK_DEPTH: usize = 8;

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
    /// `loop_dev` is a loop device over this device (or one of its
    /// partitions), and it is in use for the reason `why`.
    StackedLoopInUse {
        loop_dev: String,
        why: Box<Hazard>,
    },
    /// This is a loop device over the block device `backing`, which is in use.
    LoopOverDeviceInUse {
        backing: String,
        why: Box<Hazard>,
    },
    /// This is a loop device over `file`, which lives on the file system of
    /// the block device `device`, mounted on `mount_point`.
    LoopOverMountedFile {
        file: String,
        device: String,
        mount_point: PathBuf,
    },
    Busy,
    Partitions {
        names: Vec<String>,
    },
    Signatures(Vec<Signature>),
    /// Signatures could not be listed.
    Unverified {
        why: String,
    },
}

impl Hazard {
    /// The reason, with "it" as the device under test.
    pub fn reason(&self) -> String {
        self.reason_about("it")
    }

    /// The reason, naming the device under test `subject`.
    fn reason_about(&self, subject: &str) -> String {
        let who = |node: &str, is_self: bool| {
            if is_self {
                subject.to_string()
            } else if subject == "it" {
                format!("its partition {node}")
            } else {
                format!("{subject}'s partition {node}")
            }
        };
        match self {
            Hazard::Mounted {
                node,
                is_self,
                mount_point,
            } => format!(
                "{} is mounted on {}",
                who(node, *is_self),
                mount_point.display()
            ),
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
            Hazard::StackedLoopInUse { loop_dev, why } => format!(
                "the loop device {loop_dev} is stacked on {subject} and {}",
                why.reason_about(loop_dev)
                    .strip_prefix(&format!("{loop_dev} "))
                    .map(str::to_string)
                    .unwrap_or_else(|| why.reason_about(loop_dev))
            ),
            Hazard::LoopOverDeviceInUse { backing, why } => format!(
                "{subject} is a loop device over {backing}, and {}",
                why.reason_about(backing)
            ),
            Hazard::LoopOverMountedFile {
                file,
                device,
                mount_point,
            } => format!(
                "{subject} is a loop device over {file}, a file on {device} (mounted on {})",
                mount_point.display()
            ),
            Hazard::Busy => format!(
                "{subject} is open exclusively by another program (O_EXCL open gives EBUSY)"
            ),
            Hazard::Partitions { names } => {
                format!("{subject} has partitions ({})", names.join(", "))
            }
            Hazard::Signatures(sigs) => {
                let list: Vec<String> = sigs.iter().map(Signature::describe).collect();
                format!("{subject} holds {}", join_and(&list))
            }
            Hazard::Unverified { why } => {
                format!("{subject} cannot be checked for file systems and partition tables ({why})")
            }
        }
    }

    fn fix(&self, dev: &str) -> String {
        let flag = format!("--allow-write-to {dev}");
        match self {
            Hazard::Mounted { .. } => format!("unmount it, or pass {flag} to write anyway"),
            Hazard::Swap { .. } => format!("swapoff it, or pass {flag} to write anyway"),
            Hazard::Held { .. } | Hazard::StackedLoopInUse { .. } => {
                format!("remove what is stacked on it, or pass {flag} to write anyway")
            }
            Hazard::LoopOverDeviceInUse { .. } => {
                format!("stop using the device under it, or pass {flag} to write anyway")
            }
            Hazard::LoopOverMountedFile { .. } => format!(
                "run on the file itself (--device FILE), or pass {flag} to overwrite the file"
            ),
            Hazard::Busy => format!("stop the program using it, or pass {flag} to write anyway"),
            Hazard::Partitions { .. } | Hazard::Signatures(_) => {
                format!("pass {flag} to destroy it")
            }
            Hazard::Unverified { .. } => format!(
                "make sure util-linux (libblkid1, wipefs) is installed and the device is readable, or pass {flag} if it holds nothing"
            ),
        }
    }
}

fn join_and(items: &[String]) -> String {
    match items {
        [] => String::new(),
        [one] => one.clone(),
        [rest @ .., last] => format!("{} and {last}", rest.join(", ")),
    }
}

/// Compose the one-line refusal.
pub fn refusal_message(dev: &str, hazard: &Hazard, other_allowed: Option<&Path>) -> String {
    refusal_message_for(dev, dev, hazard, other_allowed)
}

/// Whether `allow_write_to` names the block device `rdev`: the path (after
/// symlinks) is a block device node with that very device number.
pub fn allow_names(allow_write_to: Option<&Path>, rdev: u64) -> bool {
    let Some(a) = allow_write_to else {
        return false;
    };
    match fs::metadata(a) {
        Ok(m) => m.file_type().is_block_device() && m.rdev() == rdev,
        Err(_) => false,
    }
}

/// "/dev/NAME" of a block device from sysfs (its uevent's DEVNAME), or "MAJ:MIN".
pub fn device_name(major: u32, minor: u32) -> String {
    fs::read_to_string(format!("/sys/dev/block/{major}:{minor}/uevent"))
        .ok()
        .and_then(|t| {
            t.lines()
                .find_map(|l| l.strip_prefix("DEVNAME=").map(|n| format!("/dev/{n}")))
        })
        .unwrap_or_else(|| format!("{major}:{minor}"))
}

/// What a loop device is bound to.
#[derive(Clone, Debug, PartialEq, Eq)]
enum Backing {
    /// A block device (st_rdev of the backing node).
    Device(u32, u32),
    /// A regular file living on the file system with this st_dev.
    File {
        path: String,
        st_dev: (u32, u32),
        st_ino: u64,
    },
}

fn backing_of(b: sys::LoopBacking, path: String) -> Backing {
    if b.st_rdev != 0 {
        let (ma, mi) = sys::dev_major_minor(b.st_rdev);
        Backing::Device(ma, mi)
    } else {
        Backing::File {
            path,
            st_dev: sys::dev_major_minor(b.st_dev),
            st_ino: b.st_ino,
        }
    }
}

/// A bound loop device of this machine.
struct LoopDevice {
    name: String,
    dev: (u32, u32),
    backing: Backing,
}

/// One snapshot of the system's users of block devices, all keyed by device number.
struct SystemView {
    /// (mountinfo entry, st_rdev of its source when the source is a block device node).
    mounts: Vec<(MountEntry, Option<(u32, u32)>)>,
    swaps: Vec<(u32, u32)>,
    loops: Vec<LoopDevice>,
}

impl SystemView {
    fn gather() -> SystemView {
        let block_rdev = |p: &str| -> Option<(u32, u32)> {
            let m = fs::metadata(p).ok()?;
            m.file_type()
                .is_block_device()
                .then(|| sys::dev_major_minor(m.rdev()))
        };
        let mounts = fs::read_to_string("/proc/self/mountinfo")
            .map(|t| parse_mountinfo(&t))
            .unwrap_or_default()
            .into_iter()
            .map(|e| {
                let src = if e.source.starts_with('/') {
                    block_rdev(&e.source)
                } else {
                    None
                };
                (e, src)
            })
            .collect();
        let swaps = fs::read_to_string("/proc/swaps")
            .map(|t| parse_swaps(&t))
            .unwrap_or_default()
            .iter()
            .filter_map(|n| block_rdev(n))
            .collect();
        SystemView {
            mounts,
            swaps,
            loops: bound_loops(),
        }
    }
}

/// Every bound loop device, from /sys/block/loop*: the backing comes from
/// LOOP_GET_STATUS64 on the node (checked to be that device), else from the
/// backing_file sysfs names.
fn bound_loops() -> Vec<LoopDevice> {
    let mut out = Vec::new();
    let Ok(entries) = fs::read_dir("/sys/block") else {
        return out;
    };
    for e in entries.flatten() {
        let dir = e.path();
        let Some(file) = read_trimmed(&dir.join("loop/backing_file")) else {
            continue;
        };
        let Some(dev) = read_trimmed(&dir.join("dev"))
            .as_deref()
            .and_then(parse_major_minor)
        else {
            continue;
        };
        let name = format!("/dev/{}", e.file_name().to_string_lossy());
        let from_ioctl = sys::open_raw(Path::new(&name), libc::O_RDONLY | libc::O_NONBLOCK, 0)
            .ok()
            .filter(|fd| {
                sys::fstat(fd.as_fd())
                    .is_ok_and(|st| sys::is_block(&st) && sys::dev_major_minor(st.st_rdev) == dev)
            })
            .and_then(|fd| sys::loop_backing(fd.as_fd()).ok());
        let backing = match from_ioctl {
            Some(b) => backing_of(b, file.clone()),
            // The name sysfs gives may be stale (renamed, deleted): only a guess.
            None => match fs::metadata(file.trim_end_matches(" (deleted)")) {
                Ok(m) if m.file_type().is_block_device() => {
                    let (ma, mi) = sys::dev_major_minor(m.rdev());
                    Backing::Device(ma, mi)
                }
                Ok(m) => Backing::File {
                    path: file.clone(),
                    st_dev: sys::dev_major_minor(m.dev()),
                    st_ino: m.ino(),
                },
                Err(_) => continue,
            },
        };
        out.push(LoopDevice { name, dev, backing });
    }
    out.sort_by(|a, b| a.name.cmp(&b.name));
    out
}

/// The device and its partitions: (node name, is_self, major:minor, sysfs dir).
struct Node {
    name: String,
    is_self: bool,
    dev: (u32, u32),
    dir: Option<PathBuf>,
}

fn nodes_of(name: String, dev: (u32, u32)) -> Vec<Node> {
    let dir = sysfs_block_dir(dev.0, dev.1);
    let mut nodes = vec![Node {
        name,
        is_self: true,
        dev,
        dir: dir.clone(),
    }];
    if let Some(dir) = &dir {
        for (part, ma, mi) in partitions_of(dir) {
            nodes.push(Node {
                name: format!("/dev/{part}"),
                is_self: false,
                dev: (ma, mi),
                dir: Some(dir.join(&part)),
            });
        }
    }
    nodes
}

/// Every way the block device `dev` (named `name`) is in use, from device
/// numbers only. `own_backing` is what the device is bound to when it is a
/// loop device (read through the caller's descriptor at the top level).
fn in_use(
    name: String,
    dev: (u32, u32),
    own_backing: Option<Backing>,
    view: &SystemView,
    visited: &mut BTreeSet<(u32, u32)>,
    depth: usize,
) -> Vec<Hazard> {
    let mut hazards = Vec::new();
    // `visited` breaks cycles (a loop over a loop over itself is refused by
    // the kernel, but sysfs names can be stale); `depth` bounds the stack.
    if !visited.insert(dev) || depth > MAX_STACK_DEPTH {
        return hazards;
    }
    let nodes = nodes_of(name, dev);
    fn push(h: Hazard, hazards: &mut Vec<Hazard>) {
        if !hazards.contains(&h) {
            hazards.push(h);
        }
    }
    for (e, src) in &view.mounts {
        // btrfs reports an anonymous 0:N in mountinfo: its source node counts too.
        if let Some(n) = nodes
            .iter()
            .find(|n| n.dev == (e.major, e.minor) || Some(n.dev) == *src)
        {
            push(
                Hazard::Mounted {
                    node: n.name.clone(),
                    is_self: n.is_self,
                    mount_point: e.mount_point.clone(),
                },
                &mut hazards,
            );
        }
    }
    for s in &view.swaps {
        if let Some(n) = nodes.iter().find(|n| n.dev == *s) {
            push(
                Hazard::Swap {
                    node: n.name.clone(),
                    is_self: n.is_self,
                },
                &mut hazards,
            );
        }
    }
    for n in &nodes {
        let Some(d) = &n.dir else { continue };
        let Ok(entries) = fs::read_dir(d.join("holders")) else {
            continue;
        };
        let mut holders: Vec<String> = entries
            .flatten()
            .map(|e| e.file_name().to_string_lossy().into_owned())
            .collect();
        if !holders.is_empty() {
            holders.sort();
            push(
                Hazard::Held {
                    node: n.name.clone(),
                    is_self: n.is_self,
                    holders,
                },
                &mut hazards,
            );
        }
    }
    // Loop devices over this device or its partitions: in use when they are.
    for l in &view.loops {
        let Backing::Device(ma, mi) = l.backing else {
            continue;
        };
        if !nodes.iter().any(|n| n.dev == (ma, mi)) || visited.contains(&l.dev) {
            continue;
        }
        let inner = in_use(
            l.name.clone(),
            l.dev,
            Some(l.backing.clone()),
            view,
            visited,
            depth + 1,
        );
        if let Some(why) = inner.into_iter().next() {
            push(
                Hazard::StackedLoopInUse {
                    loop_dev: l.name.clone(),
                    why: Box::new(why),
                },
                &mut hazards,
            );
        }
    }
    // This device is a loop device: what it writes through.
    let backing = own_backing.or_else(|| {
        view.loops
            .iter()
            .find(|l| l.dev == dev)
            .map(|l| l.backing.clone())
    });
    match backing {
        Some(Backing::Device(ma, mi)) if !visited.contains(&(ma, mi)) => {
            let b = device_name(ma, mi);
            let inner = in_use(b.clone(), (ma, mi), None, view, visited, depth + 1);
            if let Some(why) = inner.into_iter().next() {
                push(
                    Hazard::LoopOverDeviceInUse {
                        backing: b,
                        why: Box::new(why),
                    },
                    &mut hazards,
                );
            }
        }
        Some(Backing::File { path, st_dev, .. }) => {
            // Only a file system on a block device counts: tmpfs, ramfs and the
            // like have an anonymous device and a source that is no block node.
            if let Some((e, src)) = view
                .mounts
                .iter()
                .find(|(e, src)| (e.major, e.minor) == st_dev && src.is_some())
            {
                let (ma, mi) = src.unwrap_or(st_dev);
                push(
                    Hazard::LoopOverMountedFile {
                        file: path,
                        device: device_name(ma, mi),
                        mount_point: e.mount_point.clone(),
                    },
                    &mut hazards,
                );
            }
        }
        _ => {}
    }
    hazards
}

/// The result of examining an opened block device: every hazard found, most severe first.
pub struct Examination {
    /// st_rdev of the opened descriptor.
    pub rdev: u64,
    /// The kernel's name for it ("/dev/loop3").
    pub device_name: String,
    pub hazards: Vec<Hazard>,
    /// Which prober listed the signatures (None when none could).
    pub prober: Option<Prober>,
}

/// Gather every hazard of the block device open on `fd`. `exclusive`: whether
/// the descriptor holds the O_EXCL claim (false: another holder refused it).
pub fn examine_fd(fd: BorrowedFd<'_>, exclusive: bool) -> Result<Examination, OpenError> {
    let st = sys::fstat(fd).map_err(|e| OpenError::io("cannot fstat the opened device", &e))?;
    if !sys::is_block(&st) {
        return Err(OpenError::invalid(
            "the safety check examines block devices only",
        ));
    }
    let rdev = st.st_rdev;
    let dev = sys::dev_major_minor(rdev);
    let name = device_name(dev.0, dev.1);
    let view = SystemView::gather();
    let own_backing = sysfs_block_dir(dev.0, dev.1)
        .filter(|d| d.join("loop").exists())
        .and_then(|d| {
            let file = read_trimmed(&d.join("loop/backing_file")).unwrap_or_default();
            sys::loop_backing(fd).ok().map(|b| backing_of(b, file))
        });
    let mut hazards = in_use(
        name.clone(),
        dev,
        own_backing,
        &view,
        &mut BTreeSet::new(),
        0,
    );
    // O_EXCL fails with EBUSY while anyone else holds the device exclusively
    // (a mount, a holder, another flashlab). Named only when nothing above explains it.
    if !exclusive && hazards.is_empty() {
        hazards.push(Hazard::Busy);
    }
    let mut prober = None;
    match crate::blkid::probe_signatures(fd) {
        Ok((sigs, p)) => {
            prober = Some(p);
            if !sigs.is_empty() {
                hazards.push(Hazard::Signatures(sigs));
            }
        }
        Err(ProbeError::Unavailable) => hazards.push(Hazard::Unverified {
            why: "neither libblkid.so.1 nor wipefs is installed".into(),
        }),
        // A device that cannot be read may still hold data: refused, but
        // overridable like every other hazard.
        Err(ProbeError::Failed(why)) => hazards.push(Hazard::Unverified { why }),
    }
    let has_sig = hazards.iter().any(|h| matches!(h, Hazard::Signatures(_)));
    let parts: Vec<String> = nodes_of(name.clone(), dev)
        .into_iter()
        .filter(|n| !n.is_self)
        .map(|n| n.name)
        .collect();
    if !parts.is_empty() && !has_sig {
        hazards.push(Hazard::Partitions { names: parts });
    }
    Ok(Examination {
        rdev,
        device_name: name,
        hazards,
        prober,
    })
}

/// A loop device bound to a file, and the first way it is in use (None:
/// bound, but nothing mounts, holds or stacks on it).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LoopOverFile {
    pub loop_dev: String,
    pub in_use: Option<Hazard>,
}

impl LoopOverFile {
    /// Why writing to the file is refused, naming the file as `subject`:
    /// writing under a bound loop device bypasses whatever uses it (a
    /// mounted file system is corrupted from below).
    pub fn reason_about(&self, subject: &str) -> String {
        match &self.in_use {
            Some(h) => format!(
                "{subject} backs the loop device {}, and {}",
                self.loop_dev,
                h.reason_about(&self.loop_dev)
            ),
            None => format!("{subject} backs the loop device {}", self.loop_dev),
        }
    }
}

/// The loop devices bound to the regular file open on `fd` (the same
/// st_dev and st_ino, as the kernel reports the backing of each), each with
/// how it is in use. A file under a loop device is that device's storage:
/// writing to it is writing to the block device, so it gets the block
/// device's check.
pub fn loops_over_file(fd: BorrowedFd<'_>) -> io::Result<Vec<LoopOverFile>> {
    let st = sys::fstat(fd)?;
    let me = (sys::dev_major_minor(st.st_dev), st.st_ino);
    let view = SystemView::gather();
    let mut out = Vec::new();
    for l in &view.loops {
        let Backing::File { st_dev, st_ino, .. } = &l.backing else {
            continue;
        };
        if (*st_dev, *st_ino) != me {
            continue;
        }
        let why = in_use(
            l.name.clone(),
            l.dev,
            Some(l.backing.clone()),
            &view,
            &mut BTreeSet::new(),
            0,
        )
        .into_iter()
        // Its own backing on a mounted file system is the loop's nature, not a use.
        .find(|h| !matches!(h, Hazard::LoopOverMountedFile { .. }));
        out.push(LoopOverFile {
            loop_dev: l.name.clone(),
            in_use: why,
        });
    }
    Ok(out)
}

/// Turn an examination into warnings (allowed) or a refusal. `display` is
/// what the user named.
pub fn verdict(
    display: &str,
    exam: &Examination,
    allow_write_to: Option<&Path>,
) -> Result<Vec<String>, OpenError> {
    if exam.hazards.is_empty() {
        return Ok(Vec::new());
    }
    // Say which device a symlink or alias led to.
    let dev = if display == exam.device_name {
        display.to_string()
    } else {
        format!("{display} ({})", exam.device_name)
    };
    if allow_names(allow_write_to, exam.rdev) {
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
    // The override names the device that was checked, not a path that may
    // point elsewhere by the time the user retries.
    let flag_target = if exam.device_name.starts_with("/dev/") {
        exam.device_name.as_str()
    } else {
        display
    };
    Err(OpenError::new(
        OpenErrorKind::Refused,
        refusal_message_for(&dev, flag_target, &exam.hazards[0], allow_write_to),
    ))
}

fn refusal_message_for(
    dev: &str,
    flag_target: &str,
    hazard: &Hazard,
    other_allowed: Option<&Path>,
) -> String {
    let mut msg = format!(
        "refusing to write to {dev}: {}; {}",
        hazard.reason(),
        hazard.fix(flag_target)
    );
    if let Some(other) = other_allowed {
        msg.push_str(&format!(
            " (--allow-write-to {} names another device)",
            other.display()
        ));
    }
    msg
}

/// A descriptor opened once and checked: all IO of a run goes through `fd`.
pub struct CheckedDevice {
    pub fd: OwnedFd,
    /// fstat of `fd`: its type, st_rdev (block devices), st_dev, size (files).
    pub stat: libc::stat,
    /// Whether `fd` holds the exclusive claim on a block device (O_EXCL).
    pub exclusive: bool,
    /// Hazards overridden by --allow-write-to, for the CLI to print.
    pub warnings: Vec<String>,
}

impl CheckedDevice {
    pub fn is_block_device(&self) -> bool {
        sys::is_block(&self.stat)
    }

    /// st_rdev: the device number of a block device (0 for a file).
    pub fn rdev(&self) -> u64 {
        if self.is_block_device() {
            self.stat.st_rdev
        } else {
            0
        }
    }

    /// `/proc/PID/fd/N`: a path that names exactly this descriptor's device
    /// or file, for a child process (hdparm, a file-system tool), whatever
    /// the user's path names by then. A tool that opens it with O_EXCL gets
    /// EBUSY while this descriptor holds the exclusive claim.
    pub fn proc_path(&self) -> PathBuf {
        PathBuf::from(format!(
            "/proc/{}/fd/{}",
            std::process::id(),
            std::os::fd::AsRawFd::as_raw_fd(&self.fd)
        ))
    }
}

/// open(2) `path` with `flags | O_EXCL`, waiting a moment on EBUSY; when it
/// stays busy, open it without O_EXCL. Returns the fd and whether it is exclusive.
fn open_claiming(path: &Path, flags: libc::c_int) -> io::Result<(OwnedFd, bool)> {
    let flags = flags | libc::O_NONBLOCK;
    match sys::open_excl_patiently(path, flags) {
        Ok(fd) => Ok((fd, true)),
        Err(e) if e.raw_os_error() == Some(libc::EBUSY) => {
            sys::open_raw(path, flags, 0).map(|fd| (fd, false))
        }
        Err(e) => Err(e),
    }
}

/// Open `path` once for writing and check what was opened.
///
/// A block device is opened read-write with `O_EXCL` (so nobody can mount it
/// while the run writes) and examined through the descriptor; it is returned
/// only when nothing was found or `allow_write_to` names it (then with the
/// overridden hazards as warnings). A regular file is returned unchecked.
/// The descriptor has no O_DIRECT yet (libblkid reads unaligned): turn it on
/// after the check (the engines' open does). A failed open comes back as
/// [`CheckError::Open`] for the caller to phrase; a refusal as [`CheckError::Refused`].
pub fn open_checked(
    path: &Path,
    allow_write_to: Option<&Path>,
) -> Result<CheckedDevice, CheckError> {
    let (fd, exclusive) = open_claiming(path, libc::O_RDWR).map_err(CheckError::Open)?;
    let stat = sys::fstat(fd.as_fd()).map_err(CheckError::Open)?;
    if sys::is_block(&stat) || sys::is_regular(&stat) {
        sys::update_flags(fd.as_fd(), 0, libc::O_NONBLOCK).map_err(CheckError::Open)?;
    }
    if !sys::is_block(&stat) {
        return Ok(CheckedDevice {
            fd,
            stat,
            exclusive: false,
            warnings: Vec::new(),
        });
    }
    let exam = examine_fd(fd.as_fd(), exclusive).map_err(CheckError::Refused)?;
    let display = path.display().to_string();
    let warnings = verdict(&display, &exam, allow_write_to).map_err(CheckError::Refused)?;
    Ok(CheckedDevice {
        fd,
        stat,
        exclusive,
        warnings,
    })
}

/// Why [`open_checked`] returned no descriptor.
#[derive(Debug)]
pub enum CheckError {
    /// open(2) or fstat failed (missing path, permissions, read-only...).
    Open(io::Error),
    /// The check refused (or could not run).
    Refused(OpenError),
}

/// The check alone, for dry runs: opens `path` read-only (claiming it with
/// O_EXCL for a moment, as a run would) and examines what was opened.
pub fn check_write_safety(
    path: &Path,
    allow_write_to: Option<&Path>,
) -> Result<Vec<String>, OpenError> {
    let (fd, exclusive) = match open_claiming(path, libc::O_RDONLY) {
        Ok(x) => x,
        // A missing path becomes a file flashlab creates: safe.
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(Vec::new()),
        Err(e) => {
            return Err(OpenError::io(
                format!("cannot open {} to check it", path.display()),
                &e,
            ))
        }
    };
    let st = sys::fstat(fd.as_fd())
        .map_err(|e| OpenError::io(format!("cannot examine {}", path.display()), &e))?;
    if !sys::is_block(&st) {
        return Ok(Vec::new());
    }
    let exam = examine_fd(fd.as_fd(), exclusive)?;
    verdict(&path.display().to_string(), &exam, allow_write_to)
}

#[cfg(test)]
mod tests {
    use super::*;

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

    fn image(len: usize, edit: impl FnOnce(&mut [u8])) -> tempfile::NamedTempFile {
        let mut img = vec![0u8; len];
        edit(&mut img);
        let f = tempfile::NamedTempFile::new().unwrap();
        fs::write(f.path(), &img).unwrap();
        f
    }

    fn names(f: &tempfile::NamedTempFile, prober: Prober) -> Vec<String> {
        let file = fs::File::open(f.path()).unwrap();
        crate::blkid::probe_signatures_with(file.as_fd(), prober)
            .unwrap()
            .into_iter()
            .map(|s| s.name)
            .collect()
    }

    /// A DOS partition table with one Linux partition, as fdisk writes it.
    fn mbr(img: &mut [u8]) {
        img[446 + 4] = 0x83;
        img[446 + 8..446 + 12].copy_from_slice(&2048u32.to_le_bytes());
        img[446 + 12..446 + 16].copy_from_slice(&4096u32.to_le_bytes());
        img[510] = 0x55;
        img[511] = 0xAA;
    }

    #[test]
    fn libblkid_and_wipefs_agree_on_images() {
        if !crate::blkid::library_available() {
            eprintln!("skip: libblkid.so.1 not installed");
            return;
        }
        let blank = image(4 << 20, |_| {});
        assert!(names(&blank, Prober::Library).is_empty());
        let table = image(4 << 20, mbr);
        assert_eq!(names(&table, Prober::Library), vec!["dos".to_string()]);
        let has_wipefs = std::process::Command::new("wipefs")
            .arg("--version")
            .output()
            .is_ok();
        if has_wipefs {
            assert!(names(&blank, Prober::Wipefs).is_empty());
            assert_eq!(names(&table, Prober::Wipefs), vec!["dos".to_string()]);
        }
    }

    /// Real tools, when installed, write what libblkid names (no root needed: images are files).
    #[test]
    fn mkfs_images_are_named_by_libblkid() {
        if !crate::blkid::library_available() {
            eprintln!("skip: libblkid.so.1 not installed");
            return;
        }
        let tools: [(&str, &[&str], &str); 4] = [
            ("mkfs.ext4", &["-q", "-F"], "ext4"),
            ("mkswap", &[], "swap"),
            ("mkfs.minix", &[], "minix"),
            ("mkfs.bfs", &[], "bfs"),
        ];
        for (tool, args, want) in tools {
            let img = image(8 << 20, |_| {});
            let status = std::process::Command::new(tool)
                .args(args)
                .arg(img.path())
                .stdout(std::process::Stdio::null())
                .stderr(std::process::Stdio::null())
                .status();
            match status {
                Ok(s) if s.success() => {
                    assert_eq!(
                        names(&img, Prober::Library),
                        vec![want.to_string()],
                        "{tool}"
                    )
                }
                _ => eprintln!("skip: {tool} not available"),
            }
        }
    }

    #[test]
    fn wipefs_output_parses() {
        let s = crate::blkid::parse_wipefs("gpt,partition-table,0x200\nPMBR,partition-table,0x1fe\nlinux_raid_member,raid,0x3ffe000\n\n");
        assert_eq!(s.len(), 3);
        assert_eq!(s[0].name, "gpt");
        assert_eq!(s[0].usage, SignatureUsage::PartitionTable);
        assert_eq!(s[0].offset_bytes, Some(0x200));
        assert_eq!(s[2].usage, SignatureUsage::Raid);
        assert_eq!(s[2].offset_bytes, Some(0x3ff_e000));
    }

    fn sig(name: &str, usage: SignatureUsage, version: Option<&str>) -> Signature {
        Signature {
            name: name.into(),
            usage,
            version: version.map(str::to_string),
            offset_bytes: None,
            bad_checksum: false,
        }
    }

    #[test]
    fn refusal_is_one_line_with_reason_and_fix() {
        let ext4 = Hazard::Signatures(vec![sig("ext4", SignatureUsage::FileSystem, None)]);
        let m = refusal_message("/dev/loop3", &ext4, None);
        assert_eq!(
            m,
            "refusing to write to /dev/loop3: it holds an ext4 file system signature; pass --allow-write-to /dev/loop3 to destroy it"
        );
        let two = Hazard::Signatures(vec![
            sig("linux_raid_member", SignatureUsage::Raid, Some("1.0")),
            sig("gpt", SignatureUsage::PartitionTable, None),
        ]);
        assert_eq!(
            two.reason(),
            "it holds an md RAID superblock (linux_raid_member, metadata 1.0) and a GPT partition table"
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
    fn stacked_loop_reasons_name_the_chain() {
        let mounted = |node: &str| Hazard::Mounted {
            node: node.into(),
            is_self: true,
            mount_point: "/mnt/x".into(),
        };
        let h = Hazard::StackedLoopInUse {
            loop_dev: "/dev/loop1".into(),
            why: Box::new(mounted("/dev/loop1")),
        };
        assert_eq!(
            h.reason(),
            "the loop device /dev/loop1 is stacked on it and is mounted on /mnt/x"
        );
        let h = Hazard::LoopOverDeviceInUse {
            backing: "/dev/loop0".into(),
            why: Box::new(mounted("/dev/loop0")),
        };
        assert_eq!(
            h.reason(),
            "it is a loop device over /dev/loop0, and /dev/loop0 is mounted on /mnt/x"
        );
        let h = Hazard::LoopOverMountedFile {
            file: "/data/disk.img".into(),
            device: "/dev/sda2".into(),
            mount_point: "/data".into(),
        };
        assert_eq!(
            refusal_message("/dev/loop5", &h, None),
            "refusing to write to /dev/loop5: it is a loop device over /data/disk.img, a file on /dev/sda2 (mounted on /data); \
             run on the file itself (--device FILE), or pass --allow-write-to /dev/loop5 to overwrite the file"
        );
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
