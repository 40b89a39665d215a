//! Signatures on a device, as util-linux's libblkid sees them.
//!
//! The safety check must know every file system, RAID member, volume
//! manager label, encryption header, swap area and partition table, wherever
//! on the device its magic lives (md metadata 0.90 and 1.0 sit at the end).
//! A hand-written list of magics cannot keep up (ours missed minix, bfs and
//! md 1.0), so we ask the library that `mount`, `wipefs` and udev ask:
//! libblkid, loaded at run time with `dlopen("libblkid.so.1")` (package
//! libblkid1, part of every Debian/Ubuntu/Fedora base system) and driven
//! through its low-level probe API on *the descriptor the caller opened*
//! (`blkid_probe_set_device(fd)`), so what is probed is what will be
//! written. Every superblock and partition-table prober is enabled, including
//! those that look at the end of the device, and signatures with a bad
//! checksum count too (`BLKID_SUBLKS_BADCSUM`, as wipefs does): a damaged
//! file system still holds data.
//!
//! Where the library cannot be loaded, `wipefs --no-act` (util-linux, the
//! same library inside) lists the signatures of `/proc/PID/fd/N`, which
//! names the opened device itself, not the path the user gave. Where neither
//! exists, the caller gets [`ProbeError::Unavailable`] and refuses.
//!
//! No binding crate: `libblkid-rs`'s sys crate runs bindgen (libclang) on
//! libblkid-dev's headers, found with pkg-config, at build time; that is a
//! lot of build for the nine functions used here, and a missing library
//! would then stop flashlab from building instead of falling back.

use std::ffi::{c_char, c_int, c_void, CStr};
use std::os::fd::{AsRawFd, BorrowedFd};
use std::sync::OnceLock;

/// What a signature is, in blkid's USAGE vocabulary plus partition tables.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SignatureUsage {
    FileSystem,
    /// RAID members and volume managers (md, LVM2, ZFS...): blkid's "raid".
    Raid,
    /// Encryption headers (LUKS, BitLocker...).
    Crypto,
    /// Swap, journals, caches and everything else blkid names.
    Other,
    PartitionTable,
}

impl SignatureUsage {
    fn from_blkid(usage: &str) -> SignatureUsage {
        match usage {
            "filesystem" => SignatureUsage::FileSystem,
            "raid" => SignatureUsage::Raid,
            "crypto" => SignatureUsage::Crypto,
            "partition-table" => SignatureUsage::PartitionTable,
            _ => SignatureUsage::Other,
        }
    }
}

/// One signature found on the device.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Signature {
    /// blkid's TYPE or PTTYPE: "ext4", "linux_raid_member", "gpt", "dos"...
    pub name: String,
    pub usage: SignatureUsage,
    /// blkid's VERSION when it reports one (md metadata "1.0", LUKS "2"...).
    pub version: Option<String>,
    /// Where the magic was found.
    pub offset_bytes: Option<u64>,
    /// blkid found the magic but the checksum did not match.
    pub bad_checksum: bool,
}

impl Signature {
    /// "an ext4 file system signature", "a GPT partition table", "an md RAID
    /// superblock (linux_raid_member, metadata 1.0)": always names blkid's type.
    pub fn describe(&self) -> String {
        let n = self.name.as_str();
        let mut s = match (self.usage, n) {
            (SignatureUsage::PartitionTable, "gpt") => "a GPT partition table".to_string(),
            (SignatureUsage::PartitionTable, "PMBR") => {
                "a GPT protective MBR (PMBR partition table)".to_string()
            }
            (SignatureUsage::PartitionTable, "dos") => {
                "an MBR (DOS) partition table (dos)".to_string()
            }
            (SignatureUsage::PartitionTable, _) => format!("{} {n} partition table", article(n)),
            (SignatureUsage::FileSystem, _) => {
                format!("{} {n} file system signature", article(n))
            }
            (_, "swap") => "a swap signature".to_string(),
            (_, "crypto_LUKS") => "a LUKS encryption header (crypto_LUKS)".to_string(),
            (_, "LVM2_member") => "an LVM2 physical volume label (LVM2_member)".to_string(),
            (_, "linux_raid_member") => "an md RAID superblock (linux_raid_member)".to_string(),
            (SignatureUsage::Raid, _) => format!("{} {n} RAID/volume signature", article(n)),
            (SignatureUsage::Crypto, _) => format!("{} {n} encryption header", article(n)),
            _ => format!("{} {n} signature", article(n)),
        };
        if n == "linux_raid_member" {
            if let Some(v) = &self.version {
                s = format!("an md RAID superblock (linux_raid_member, metadata {v})");
            }
        }
        if self.bad_checksum {
            s.push_str(" with a bad checksum");
        }
        s
    }
}

/// "an ext4", "a btrfs", "an xfs": names read letter by letter take "an"
/// when the letter's name starts with a vowel sound.
fn article(word: &str) -> &'static str {
    const SPELLED: [&str; 6] = ["f2fs", "xfs", "ntfs", "hfs", "hfsplus", "lvm"];
    const YOU: [&str; 4] = ["udf", "ufs", "ubi", "ubifs"];
    if YOU.contains(&word.to_ascii_lowercase().as_str()) {
        return "a";
    }
    match word.chars().next() {
        Some(c) if "aeiouAEIOU".contains(c) => "an",
        _ if SPELLED.contains(&word.to_ascii_lowercase().as_str()) => "an",
        _ => "a",
    }
}

/// Why signatures could not be listed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ProbeError {
    /// Neither libblkid nor wipefs is installed.
    Unavailable,
    /// The prober ran and failed (a read error, a crashed tool).
    Failed(String),
}

/// Which implementation lists the signatures.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Prober {
    /// libblkid through dlopen.
    Library,
    /// `wipefs --no-act` on /proc/PID/fd/N.
    Wipefs,
}

/// Every signature on the device (or file) behind `fd`, with the library
/// when it loads and wipefs otherwise. Also returns which prober answered.
pub fn probe_signatures(fd: BorrowedFd<'_>) -> Result<(Vec<Signature>, Prober), ProbeError> {
    match probe_signatures_with(fd, Prober::Library) {
        Err(ProbeError::Unavailable) => {
            probe_signatures_with(fd, Prober::Wipefs).map(|s| (s, Prober::Wipefs))
        }
        r => r.map(|s| (s, Prober::Library)),
    }
}

/// Every signature on the device behind `fd`, with the named prober.
pub fn probe_signatures_with(
    fd: BorrowedFd<'_>,
    prober: Prober,
) -> Result<Vec<Signature>, ProbeError> {
    match prober {
        Prober::Library => match library() {
            Some(lib) => lib.probe(fd),
            None => Err(ProbeError::Unavailable),
        },
        Prober::Wipefs => wipefs(fd),
    }
}

/// Whether libblkid could be loaded.
pub fn library_available() -> bool {
    library().is_some()
}

type BlkidProbe = *mut c_void;

// Flags from <blkid/blkid.h> (stable ABI since util-linux 2.15-2.23).
const BLKID_SUBLKS_TYPE: c_int = 1 << 5;
const BLKID_SUBLKS_USAGE: c_int = 1 << 7;
const BLKID_SUBLKS_VERSION: c_int = 1 << 8;
const BLKID_SUBLKS_MAGIC: c_int = 1 << 9;
const BLKID_SUBLKS_BADCSUM: c_int = 1 << 10;
const BLKID_PARTS_FORCE_GPT: c_int = 1 << 1;
const BLKID_PARTS_MAGIC: c_int = 1 << 3;
/// More signatures than any real device carries; bounds the probe loop.
const MAX_SIGNATURES: usize = 64;

struct Lib {
    new_probe: unsafe extern "C" fn() -> BlkidProbe,
    free_probe: unsafe extern "C" fn(BlkidProbe),
    set_device: unsafe extern "C" fn(BlkidProbe, c_int, i64, i64) -> c_int,
    enable_superblocks: unsafe extern "C" fn(BlkidProbe, c_int) -> c_int,
    set_superblocks_flags: unsafe extern "C" fn(BlkidProbe, c_int) -> c_int,
    enable_partitions: unsafe extern "C" fn(BlkidProbe, c_int) -> c_int,
    set_partitions_flags: unsafe extern "C" fn(BlkidProbe, c_int) -> c_int,
    do_probe: unsafe extern "C" fn(BlkidProbe) -> c_int,
    lookup_value:
        unsafe extern "C" fn(BlkidProbe, *const c_char, *mut *const c_char, *mut usize) -> c_int,
}

fn library() -> Option<&'static Lib> {
    static LIB: OnceLock<Option<Lib>> = OnceLock::new();
    LIB.get_or_init(load_library).as_ref()
}

fn load_library() -> Option<Lib> {
    // SAFETY: dlopen with a constant NUL-terminated name; the handle is kept
    // for the life of the process (never dlclosed), so the symbols stay valid.
    let handle = unsafe { libc::dlopen(c"libblkid.so.1".as_ptr(), libc::RTLD_NOW) };
    if handle.is_null() {
        return None;
    }
    let sym = |name: &CStr| -> Option<*mut c_void> {
        // SAFETY: handle is a live dlopen handle and name is NUL-terminated.
        let p = unsafe { libc::dlsym(handle, name.as_ptr()) };
        (!p.is_null()).then_some(p)
    };
    // SAFETY (each transmute): the symbol has exactly this C signature in
    // <blkid/blkid.h>; blkid_loff_t is int64_t.
    unsafe {
        Some(Lib {
            new_probe: std::mem::transmute::<*mut c_void, unsafe extern "C" fn() -> BlkidProbe>(
                sym(c"blkid_new_probe")?,
            ),
            free_probe: std::mem::transmute::<*mut c_void, unsafe extern "C" fn(BlkidProbe)>(sym(
                c"blkid_free_probe",
            )?),
            set_device: std::mem::transmute::<
                *mut c_void,
                unsafe extern "C" fn(BlkidProbe, c_int, i64, i64) -> c_int,
            >(sym(c"blkid_probe_set_device")?),
            enable_superblocks: std::mem::transmute::<
                *mut c_void,
                unsafe extern "C" fn(BlkidProbe, c_int) -> c_int,
            >(sym(c"blkid_probe_enable_superblocks")?),
            set_superblocks_flags: std::mem::transmute::<
                *mut c_void,
                unsafe extern "C" fn(BlkidProbe, c_int) -> c_int,
            >(sym(c"blkid_probe_set_superblocks_flags")?),
            enable_partitions: std::mem::transmute::<
                *mut c_void,
                unsafe extern "C" fn(BlkidProbe, c_int) -> c_int,
            >(sym(c"blkid_probe_enable_partitions")?),
            set_partitions_flags: std::mem::transmute::<
                *mut c_void,
                unsafe extern "C" fn(BlkidProbe, c_int) -> c_int,
            >(sym(c"blkid_probe_set_partitions_flags")?),
            do_probe: std::mem::transmute::<*mut c_void, unsafe extern "C" fn(BlkidProbe) -> c_int>(
                sym(c"blkid_do_probe")?,
            ),
            lookup_value: std::mem::transmute::<
                *mut c_void,
                unsafe extern "C" fn(
                    BlkidProbe,
                    *const c_char,
                    *mut *const c_char,
                    *mut usize,
                ) -> c_int,
            >(sym(c"blkid_probe_lookup_value")?),
        })
    }
}

/// A probe freed on every path out.
struct ProbeGuard<'a> {
    lib: &'a Lib,
    pr: BlkidProbe,
}

impl Drop for ProbeGuard<'_> {
    fn drop(&mut self) {
        // SAFETY: pr came from blkid_new_probe and is freed once.
        unsafe { (self.lib.free_probe)(self.pr) }
    }
}

impl Lib {
    fn value(&self, pr: BlkidProbe, name: &CStr) -> Option<String> {
        let mut data: *const c_char = std::ptr::null();
        let mut len: usize = 0;
        // SAFETY: pr is live; data/len point to live locals; on success data is
        // a NUL-terminated string owned by the probe, copied before the next call.
        let rc = unsafe { (self.lookup_value)(pr, name.as_ptr(), &mut data, &mut len) };
        if rc != 0 || data.is_null() {
            return None;
        }
        // SAFETY: libblkid returns a NUL-terminated string on success.
        Some(
            unsafe { CStr::from_ptr(data) }
                .to_string_lossy()
                .into_owned(),
        )
    }

    fn probe(&self, fd: BorrowedFd<'_>) -> Result<Vec<Signature>, ProbeError> {
        // SAFETY: blkid_new_probe has no preconditions; null means out of memory.
        let pr = unsafe { (self.new_probe)() };
        if pr.is_null() {
            return Err(ProbeError::Failed("blkid_new_probe failed".into()));
        }
        let g = ProbeGuard { lib: self, pr };
        // SAFETY: pr is live; fd stays open for the whole probe (borrowed);
        // offset 0 and size 0 mean the whole device. libblkid does not close it.
        let rc = unsafe { (self.set_device)(g.pr, fd.as_raw_fd(), 0, 0) };
        if rc != 0 {
            return Err(ProbeError::Failed(format!(
                "libblkid cannot probe the device: {}",
                std::io::Error::last_os_error()
            )));
        }
        // SAFETY: pr is live; these calls only set flags on it.
        unsafe {
            (self.enable_superblocks)(g.pr, 1);
            (self.set_superblocks_flags)(
                g.pr,
                BLKID_SUBLKS_TYPE
                    | BLKID_SUBLKS_USAGE
                    | BLKID_SUBLKS_VERSION
                    | BLKID_SUBLKS_MAGIC
                    | BLKID_SUBLKS_BADCSUM,
            );
            (self.enable_partitions)(g.pr, 1);
            // FORCE_GPT: a GPT whose protective MBR is damaged still counts.
            (self.set_partitions_flags)(g.pr, BLKID_PARTS_MAGIC | BLKID_PARTS_FORCE_GPT);
        }
        let mut out = Vec::new();
        // blkid_do_probe steps through every prober in turn and stops at each
        // match, so the loop sees every signature (what wipefs lists), not only
        // the unambiguous one blkid_do_safeprobe would return.
        for _ in 0..MAX_SIGNATURES {
            // SAFETY: pr is live.
            match unsafe { (self.do_probe)(g.pr) } {
                0 => {}
                1 => return Ok(out),
                _ => {
                    return Err(ProbeError::Failed(format!(
                        "libblkid failed to read the device: {}",
                        std::io::Error::last_os_error()
                    )))
                }
            }
            let offset = |key: &CStr| self.value(g.pr, key).and_then(|s| s.parse::<u64>().ok());
            if let Some(name) = self.value(g.pr, c"TYPE") {
                let usage = self
                    .value(g.pr, c"USAGE")
                    .map(|u| SignatureUsage::from_blkid(&u))
                    .unwrap_or(SignatureUsage::Other);
                out.push(Signature {
                    name,
                    usage,
                    version: self.value(g.pr, c"VERSION"),
                    offset_bytes: offset(c"SBMAGIC_OFFSET"),
                    bad_checksum: self.value(g.pr, c"SBBADCSUM").is_some(),
                });
            } else if let Some(name) = self.value(g.pr, c"PTTYPE") {
                out.push(Signature {
                    name,
                    usage: SignatureUsage::PartitionTable,
                    version: None,
                    offset_bytes: offset(c"PTMAGIC_OFFSET"),
                    bad_checksum: false,
                });
            }
        }
        Ok(out)
    }
}

/// The fallback: `wipefs --no-act` lists every signature libblkid knows.
fn wipefs(fd: BorrowedFd<'_>) -> Result<Vec<Signature>, ProbeError> {
    // /proc/PID/fd/N reopens the very device this descriptor refers to, not
    // whatever the user's path names now.
    let node = format!("/proc/{}/fd/{}", std::process::id(), fd.as_raw_fd());
    let out = std::process::Command::new("wipefs")
        .args(["--no-act", "--noheadings", "--parsable", "-O"])
        .arg("TYPE,USAGE,OFFSET")
        .arg(&node)
        .stdin(std::process::Stdio::null())
        .output();
    let out = match out {
        Ok(o) => o,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Err(ProbeError::Unavailable),
        Err(e) => return Err(ProbeError::Failed(format!("cannot run wipefs: {e}"))),
    };
    if !out.status.success() {
        return Err(ProbeError::Failed(format!(
            "wipefs failed: {}",
            String::from_utf8_lossy(&out.stderr).trim()
        )));
    }
    Ok(parse_wipefs(&String::from_utf8_lossy(&out.stdout)))
}

/// Parse `wipefs -n -p -i -O TYPE,USAGE,OFFSET` (comma-separated, one signature a line).
pub fn parse_wipefs(text: &str) -> Vec<Signature> {
    text.lines()
        .filter_map(|line| {
            let mut f = line.trim().split(',');
            let name = f.next()?.trim();
            if name.is_empty() {
                return None;
            }
            let usage = SignatureUsage::from_blkid(f.next().unwrap_or("").trim());
            let offset_bytes = f
                .next()
                .and_then(|o| u64::from_str_radix(o.trim().trim_start_matches("0x"), 16).ok());
            Some(Signature {
                name: name.to_string(),
                usage,
                version: None,
                offset_bytes,
                bad_checksum: false,
            })
        })
        .collect()
}
