//! Opening a target: file creation, O_DIRECT, geometry, identity and the
//! safety check, shared by both engines.
//!
//! Everything that can be refused is refused here, before an engine allocates
//! buffers or a ring, and every refusal is one line naming the problem and the
//! fix. The [`Target`] that comes out also carries the request validation both
//! engines apply (defence in depth: the executor already keeps requests in
//! range and aligned).

use std::collections::BTreeMap;
use std::fs;
use std::io;
use std::os::fd::{AsFd, OwnedFd};
use std::os::unix::fs::FileTypeExt;
use std::path::Path;

use flashlab_device::{ClockKind, DeviceError, DeviceInfo, DeviceKind, IoRequest, Mode};

use crate::buffers::{AlignedBuf, SplitMix64};
use crate::error::{OpenError, OpenErrorKind};
use crate::identity;
use crate::safety;
use crate::sys;
use crate::OpenOptions;

/// Most slots (streams x queue depth) an engine accepts: far beyond any
/// device's useful queue depth, and it keeps fixed-buffer indexes in a u16.
pub const MAX_OUTSTANDING: usize = 4096;
/// Largest single IO (the buffer of every slot is this big).
pub const MAX_IO_BYTES: u32 = 64 << 20;
/// Cap on all slot buffers together, so a typo cannot exhaust memory.
const MAX_BUFFER_BYTES: u64 = 8 << 30;
/// Chunk of the sequential fill of a created file.
const FILL_CHUNK: usize = 4 << 20;
const PAGE: usize = 4096;

/// An opened file or block device, ready for an engine.
pub struct Target {
    pub fd: OwnedFd,
    pub info: DeviceInfo,
    /// Offsets and sizes must be multiples of this under O_DIRECT.
    pub align: u32,
    /// Buffer address alignment.
    pub mem_align: usize,
    pub direct: bool,
    pub writable: bool,
    /// What the user named, for messages.
    pub display: String,
}

impl Target {
    pub fn kind(&self) -> DeviceKind {
        self.info.kind
    }

    pub fn size(&self) -> u64 {
        self.info.size_bytes
    }

    /// Reject requests the executor should never make.
    #[inline]
    pub fn check(&self, req: &IoRequest, max_io_bytes: u32) -> Result<(), DeviceError> {
        let size = req.size_bytes;
        if size == 0 {
            return Err(DeviceError::InvalidRequest(format!(
                "IO {} has size 0",
                req.tag
            )));
        }
        if req.mode != Mode::Trim && size > max_io_bytes {
            return Err(DeviceError::InvalidRequest(format!(
                "IO of {size} bytes is larger than the {max_io_bytes} bytes this device was opened for"
            )));
        }
        if req.mode.modifies() && !self.writable {
            return Err(DeviceError::InvalidRequest(format!(
                "{} on {}, which was opened read-only (open it with write: true)",
                req.mode, self.display
            )));
        }
        let end = req.offset_bytes.checked_add(size as u64);
        if !matches!(end, Some(e) if e <= self.size()) {
            return Err(DeviceError::InvalidRequest(format!(
                "{} of {size} bytes at offset {} goes beyond the end of {} ({} bytes)",
                req.mode,
                req.offset_bytes,
                self.display,
                self.size()
            )));
        }
        let align = self.align as u64;
        if (self.direct || req.mode == Mode::Trim)
            && (!req.offset_bytes.is_multiple_of(align) || !(size as u64).is_multiple_of(align))
        {
            return Err(DeviceError::InvalidRequest(format!(
                "{} of {size} bytes at offset {} is not aligned to the {align}-byte blocks of {}",
                req.mode, req.offset_bytes, self.display
            )));
        }
        Ok(())
    }

    /// TRIM, synchronously: BLKDISCARD on block devices, a punched hole in files.
    /// `Ok(Some(errno))` is an IO error to report in the completion.
    pub fn trim(&self, offset: u64, len: u64) -> Result<Option<i32>, DeviceError> {
        let r = match self.kind() {
            DeviceKind::BlockDevice => sys::blk_discard(self.fd.as_fd(), offset, len),
            _ => sys::punch_hole(self.fd.as_fd(), offset, len),
        };
        match r {
            Ok(()) => Ok(None),
            Err(e) => match e.raw_os_error() {
                Some(libc::EOPNOTSUPP) | Some(libc::ENOTTY) | Some(libc::ENOSYS) => {
                    Err(DeviceError::Unsupported(match self.kind() {
                        DeviceKind::BlockDevice => format!(
                            "{} does not support discard (TRIM); leave trim out of the pattern for this device",
                            self.display
                        ),
                        _ => format!(
                            "the file system of {} cannot punch holes, so TRIM cannot be emulated; \
                             leave trim out of the pattern, or put the file on ext4, xfs or btrfs",
                            self.display
                        ),
                    }))
                }
                errno => Ok(Some(errno.unwrap_or(libc::EIO))),
            },
        }
    }

    /// Switches the volatile write cache with `hdparm -W` (Chen et al. 5.4
    /// did the same). Only block devices have one to switch; hdparm needs a
    /// device that implements the ATA/SCSI cache command.
    pub fn set_write_cache(&self, enabled: bool) -> Result<(), DeviceError> {
        if self.kind() != DeviceKind::BlockDevice {
            return Err(DeviceError::Unsupported(format!(
                "{} is a file: flashlab cannot switch the write cache of the disk under it",
                self.display
            )));
        }
        let flag = if enabled { "-W1" } else { "-W0" };
        // The device this descriptor holds, not whatever the user's path names now.
        let node = format!(
            "/proc/{}/fd/{}",
            std::process::id(),
            std::os::fd::AsRawFd::as_raw_fd(&self.fd)
        );
        let out = std::process::Command::new("hdparm")
            .arg(flag)
            .arg(&node)
            .output();
        match out {
            Err(e) => Err(DeviceError::Unsupported(format!(
                "cannot run hdparm ({e}); install it (apt-get install hdparm) to switch the write cache of {}",
                self.display
            ))),
            Ok(o) if !o.status.success() || String::from_utf8_lossy(&o.stderr).contains("failed") => {
                let why = String::from_utf8_lossy(&o.stderr).lines().find(|l| !l.trim().is_empty()).unwrap_or("").trim().to_string();
                Err(DeviceError::Unsupported(format!(
                    "hdparm {flag} {} did not work ({why}): the device does not support switching its write cache",
                    self.display
                )))
            }
            Ok(_) => Ok(()),
        }
    }

    /// Add the engine's own identity entries.
    pub fn note_engine(&mut self, engine: &str, extra: &[(&str, String)]) {
        let id = &mut self.info.identity;
        id.insert("engine".into(), engine.into());
        id.insert("o_direct".into(), self.direct.to_string());
        for (k, v) in extra {
            id.insert((*k).into(), v.clone());
        }
    }
}

fn no_direct_message(display: &str) -> String {
    format!(
        "{display} does not support O_DIRECT: put the file on a disk-backed file system, \
         or pass --buffered to measure through the page cache"
    )
}

fn not_found_message(display: &str) -> String {
    // Files are created on request; devices are not: under /dev the only
    // fix is the right path (a created file there would be lost on reboot).
    if display.starts_with("/dev/") {
        format!("no such device: {display}; check the path (lsblk lists block devices)")
    } else {
        format!("no such file or device: {display}; check the path, or pass --size SIZE to create a file there")
    }
}

fn permission_message(display: &str, write: bool) -> String {
    let access = if write { "read-write" } else { "read" };
    format!("permission denied opening {display} for {access} access; run as root or as a user who may open it")
}

pub fn validate_options(opts: &OpenOptions) -> Result<(), OpenError> {
    if opts.max_outstanding == 0 || opts.max_outstanding > MAX_OUTSTANDING {
        return Err(OpenError::invalid(format!(
            "{} outstanding IOs (streams x queue depth) is out of range; use 1 to {MAX_OUTSTANDING}",
            opts.max_outstanding
        )));
    }
    if opts.max_io_bytes < 512 || opts.max_io_bytes > MAX_IO_BYTES {
        return Err(OpenError::invalid(format!(
            "an IO size of {} bytes is out of range; use 512 bytes to {} MiB",
            opts.max_io_bytes,
            MAX_IO_BYTES >> 20
        )));
    }
    let total = 2 * opts.max_outstanding as u64 * opts.max_io_bytes as u64;
    if total > MAX_BUFFER_BYTES {
        return Err(OpenError::invalid(format!(
            "{} outstanding IOs of up to {} bytes need {} MiB of buffers, more than the {} MiB limit; \
             lower the queue depth, the streams or the IO size",
            opts.max_outstanding,
            opts.max_io_bytes,
            total >> 20,
            MAX_BUFFER_BYTES >> 20
        )));
    }
    Ok(())
}

/// Open the target for IO. Returns it with the warnings for the CLI to print.
///
/// The path is opened exactly once; everything after (the safety check, the
/// type, size, alignment, identity, O_DIRECT) is learned from that
/// descriptor, and the engines do all their IO through it. What the path
/// names later does not matter.
pub fn open_target(opts: &OpenOptions) -> Result<(Target, Vec<String>), OpenError> {
    open_target_with_progress(opts, &mut |_, _| {})
}

/// [`open_target`], reporting (bytes written, bytes total) while filling a created file.
pub fn open_target_with_progress(
    opts: &OpenOptions,
    fill_progress: &mut dyn FnMut(u64, u64),
) -> Result<(Target, Vec<String>), OpenError> {
    validate_options(opts)?;
    let path = opts.path.as_path();
    let display = path.display().to_string();
    let mut warnings = Vec::new();
    let mut created = false;
    match fs::metadata(path) {
        Ok(_) => {}
        Err(e) if e.kind() == io::ErrorKind::NotFound => match opts.create_size_bytes {
            // A mistyped device name must not become a file in devtmpfs (RAM).
            Some(_) if path.starts_with("/dev") && !path.starts_with("/dev/shm") => {
                return Err(OpenError::new(
                    OpenErrorKind::NotFound,
                    format!("no such device: {display}; check the name (flashlab creates files, not devices)"),
                ))
            }
            Some(size) => {
                // O_CREAT | O_EXCL on the partial name, then link(2) to the
                // target's name: never replaces or follows anything that
                // appeared meanwhile.
                let (size, stale) = create_file(path, &display, size, opts.direct, fill_progress)?;
                created = true;
                if stale {
                    warnings.push(format!(
                        "an earlier creation of {display} was interrupted; its partial file {} was removed and the file created again",
                        partial_path(path).display()
                    ));
                }
                warnings.push(format!("created {display}: {size} bytes of pseudo-random data"));
            }
            None => return Err(OpenError::new(OpenErrorKind::NotFound, not_found_message(&display))),
        },
        Err(e) if e.kind() == io::ErrorKind::PermissionDenied => {
            return Err(OpenError::invalid(permission_message(&display, opts.write)))
        }
        Err(e) => return Err(OpenError::io(format!("cannot examine {display}"), &e)),
    }
    let (fd, stat) = if opts.write {
        match safety::open_checked(path, opts.allow_write_to.as_deref()) {
            Ok(checked) => {
                if checked.is_block_device() && !checked.exclusive {
                    // Only reachable with --allow-write-to naming it: say what it means.
                    if !checked.warnings.iter().any(|w| w.contains("exclusively")) {
                        warnings.push(format!("{display} is in use: opened without exclusive access (allowed by --allow-write-to)"));
                    }
                }
                warnings.extend(checked.warnings);
                (checked.fd, checked.stat)
            }
            Err(safety::CheckError::Open(e)) => return Err(map_open_err(e, &display, true, false)),
            Err(safety::CheckError::Refused(e)) => return Err(e),
        }
    } else {
        // O_NONBLOCK: opening a FIFO for reading must not hang; cleared below.
        let fd = sys::open_raw(path, libc::O_RDONLY | libc::O_NONBLOCK, 0)
            .map_err(|e| map_open_err(e, &display, false, false))?;
        let stat = sys::fstat(fd.as_fd())
            .map_err(|e| OpenError::io(format!("cannot examine {display}"), &e))?;
        (fd, stat)
    };
    if !sys::is_block(&stat) && !sys::is_regular(&stat) {
        return Err(OpenError::invalid(format!(
            "{display} is neither a regular file nor a block device; name a file or a block device such as /dev/nvme0n1"
        )));
    }
    let direct = if opts.direct { libc::O_DIRECT } else { 0 };
    sys::update_flags(fd.as_fd(), direct, libc::O_NONBLOCK).map_err(|e| {
        if e.raw_os_error() == Some(libc::EINVAL) && opts.direct {
            OpenError::unsupported(no_direct_message(&display))
        } else {
            OpenError::io(format!("cannot set up {display}"), &e)
        }
    })?;
    let target = if sys::is_block(&stat) {
        open_block(opts, &display, fd, &stat)?
    } else {
        open_file(opts, &display, fd, &stat, created, &mut warnings)?
    };
    Ok((target, warnings))
}

fn map_open_err(e: io::Error, display: &str, write: bool, direct: bool) -> OpenError {
    match e.raw_os_error() {
        Some(libc::ENOENT) => OpenError::new(OpenErrorKind::NotFound, not_found_message(display)),
        Some(libc::EISDIR) => OpenError::invalid(format!(
            "{display} is neither a regular file nor a block device; name a file or a block device such as /dev/nvme0n1"
        )),
        Some(libc::EROFS) => OpenError::invalid(format!(
            "{display} is on a read-only file system or device; choose a writable target"
        )),
        Some(libc::EACCES) | Some(libc::EPERM) => {
            OpenError::invalid(permission_message(display, write))
        }
        Some(libc::EINVAL) if direct => OpenError::unsupported(no_direct_message(display)),
        _ => OpenError::io(format!("cannot open {display}"), &e),
    }
}

fn open_block(
    opts: &OpenOptions,
    display: &str,
    fd: OwnedFd,
    stat: &libc::stat,
) -> Result<Target, OpenError> {
    let info = block_info(fd.as_fd(), display, stat.st_rdev)?;
    let align = info.logical_block_bytes.max(512);
    Ok(Target {
        fd,
        info,
        align,
        mem_align: (align as usize).max(PAGE),
        direct: opts.direct,
        writable: opts.write,
        display: display.to_string(),
    })
}

fn block_info(
    fd: std::os::fd::BorrowedFd<'_>,
    display: &str,
    rdev: u64,
) -> Result<DeviceInfo, OpenError> {
    let size = sys::blk_size_bytes(fd)
        .map_err(|e| OpenError::io(format!("cannot read the size of {display}"), &e))?;
    let lbs = sys::blk_logical_block_bytes(fd).unwrap_or(512).max(512);
    if size == 0 {
        return Err(OpenError::invalid(format!(
            "{display} has size 0 (an unbound loop device or an empty drive?); name a device with media"
        )));
    }
    let mut identity = BTreeMap::new();
    let (major, minor) = sys::dev_major_minor(rdev);
    identity::block_identity(major, minor, &mut identity);
    if let Ok(pbs) = sys::blk_physical_block_bytes(fd) {
        identity.insert("physical_block_bytes".into(), pbs.to_string());
    }
    identity::common_identity(&mut identity);
    Ok(DeviceInfo {
        name: display.to_string(),
        kind: DeviceKind::BlockDevice,
        clock: ClockKind::Wall,
        // A whole number of logical blocks: the executor never sees a tail it cannot address.
        size_bytes: size - size % lbs as u64,
        logical_block_bytes: lbs,
        identity,
    })
}

/// The O_DIRECT alignment of a file: statx's DIOALIGN, else the logical block
/// size of the device under it, else 512. `None` when statx says the file
/// system has no direct IO for it.
fn file_dio_align(fd: std::os::fd::BorrowedFd<'_>, st_dev: u64) -> Option<(u32, usize)> {
    match sys::statx_dio_align_fd(fd) {
        Some((0, 0)) => None,
        Some((mem, off)) if off > 0 => Some((off.max(512), (mem as usize).max(PAGE))),
        _ => {
            let (major, minor) = sys::dev_major_minor(st_dev);
            let lbs = identity::sysfs_block_dir(major, minor)
                .map(|d| identity::whole_disk_dir(&d).join("queue/logical_block_size"))
                .and_then(|p| identity::read_trimmed(&p))
                .and_then(|s| s.parse::<u32>().ok())
                .unwrap_or(512)
                .max(512);
            Some((lbs, (lbs as usize).max(PAGE)))
        }
    }
}

fn file_info(
    path: &Path,
    display: &str,
    stat: &libc::stat,
    fd: std::os::fd::BorrowedFd<'_>,
) -> (DeviceInfo, Option<(u32, usize)>) {
    let dio = file_dio_align(fd, stat.st_dev);
    let lbs = dio.map(|d| d.0).unwrap_or(512);
    let mut identity = BTreeMap::new();
    // For the identity only (which mount the file is on): the descriptor is what is measured.
    let canonical = fs::canonicalize(path).unwrap_or_else(|_| path.to_path_buf());
    let magic = sys::fs_magic(fd);
    identity::file_identity(&canonical, stat.st_dev, magic, &mut identity);
    identity.insert("o_direct_supported".into(), dio.is_some().to_string());
    identity::common_identity(&mut identity);
    let size = stat.st_size as u64;
    let info = DeviceInfo {
        name: display.to_string(),
        kind: DeviceKind::File,
        clock: ClockKind::Wall,
        size_bytes: size - size % lbs as u64,
        logical_block_bytes: lbs,
        identity,
    };
    (info, dio)
}

fn open_file(
    opts: &OpenOptions,
    display: &str,
    fd: OwnedFd,
    stat: &libc::stat,
    created: bool,
    warnings: &mut Vec<String>,
) -> Result<Target, OpenError> {
    let path = opts.path.as_path();
    let file_len = stat.st_size as u64;
    if let Some(want) = opts.create_size_bytes {
        if !created && file_len < want {
            return Err(OpenError::invalid(format!(
                "{display} exists and is {} bytes, smaller than the requested size of {want} bytes; \
                 flashlab does not grow existing files: pass a --size of at most {} or delete the file",
                file_len,
                file_len
            )));
        }
    }
    let (info, dio) = file_info(path, display, stat, fd.as_fd());
    if info.size_bytes == 0 {
        return Err(OpenError::invalid(format!(
            "{display} is empty; delete it and pass --size SIZE to let flashlab create and fill it"
        )));
    }
    let (align, mem_align) = match (opts.direct, dio) {
        (true, None) => return Err(OpenError::unsupported(no_direct_message(display))),
        (true, Some(d)) => d,
        (false, _) => (info.logical_block_bytes, PAGE),
    };
    if opts.direct {
        // Some file systems accept O_DIRECT at open and refuse it at the first IO.
        let mut probe = AlignedBuf::new(align as usize, mem_align)
            .ok_or_else(|| OpenError::new(OpenErrorKind::Io, "cannot allocate a probe buffer"))?;
        // SAFETY: probe is an aligned, writable buffer of probe.len() >= align bytes.
        let n = unsafe {
            libc::pread(
                std::os::fd::AsRawFd::as_raw_fd(&fd),
                probe.as_mut_ptr().cast(),
                align as usize,
                0,
            )
        };
        if n < 0 {
            let e = io::Error::last_os_error();
            return Err(match e.raw_os_error() {
                Some(libc::EINVAL) => OpenError::unsupported(no_direct_message(display)),
                _ => OpenError::io(format!("cannot read {display}"), &e),
            });
        }
    }
    // A file on tmpfs measures RAM: every run's warnings say so
    // (flashlab_results::warnings::target_warning, from this identity).
    if info.size_bytes != file_len {
        warnings.push(format!(
            "{display} is {} bytes, not a multiple of {}; the last {} bytes are not used",
            file_len,
            info.logical_block_bytes,
            file_len - info.size_bytes
        ));
    }
    Ok(Target {
        fd,
        info,
        align,
        mem_align,
        direct: opts.direct,
        writable: opts.write,
        display: display.to_string(),
    })
}

/// Where a file target is filled before it takes its name:
/// `DIR/.NAME.flashlab-partial`. A creation interrupted at any moment (even
/// SIGKILL or a power cut) leaves only this name behind, never a target that
/// looks ready: the next run that creates NAME removes it and starts over.
pub fn partial_path(path: &Path) -> std::path::PathBuf {
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    path.with_file_name(format!(".{name}.flashlab-partial"))
}

/// Create `path` and fill it with pseudo-random data, so that reads hit real
/// data and not holes (which some file systems answer without touching the
/// device). Returns the size actually created (rounded up to 4 KiB, which
/// satisfies every O_DIRECT alignment flashlab meets), and whether a partial
/// file of an interrupted creation was found and removed. The file is
/// filled under [`partial_path`] and fsynced, then linked to `path`: a
/// half-filled file never carries the target's name (it would silently
/// measure holes). On failure the partial file is removed.
fn create_file(
    path: &Path,
    display: &str,
    size: u64,
    direct: bool,
    fill_progress: &mut dyn FnMut(u64, u64),
) -> Result<(u64, bool), OpenError> {
    if size == 0 {
        return Err(OpenError::invalid(format!(
            "cannot create {display} with size 0; pass a positive --size"
        )));
    }
    let size = size.div_ceil(PAGE as u64) * PAGE as u64;
    if let Some(parent) = path.parent().filter(|p| !p.as_os_str().is_empty()) {
        if !parent.is_dir() {
            return Err(OpenError::invalid(format!(
                "cannot create {display}: the directory {} does not exist",
                parent.display()
            )));
        }
    }
    let partial = partial_path(path);
    // Only a regular file under our own reserved name is ever removed.
    let stale = fs::symlink_metadata(&partial).is_ok_and(|m| m.file_type().is_file());
    if stale {
        fs::remove_file(&partial).map_err(|e| {
            OpenError::io(
                format!(
                    "cannot remove {}, left by an interrupted creation of {display}",
                    partial.display()
                ),
                &e,
            )
        })?;
    }
    let mut flags = libc::O_WRONLY | libc::O_CREAT | libc::O_EXCL;
    if direct {
        flags |= libc::O_DIRECT;
    }
    let fd = match sys::open_raw(&partial, flags, 0o644) {
        Ok(fd) => fd,
        Err(e) => {
            // Linux creates the inode before it checks O_DIRECT support.
            if e.raw_os_error() == Some(libc::EINVAL) {
                let _ = fs::remove_file(&partial);
            }
            return Err(map_open_err(e, display, true, direct));
        }
    };
    let result = fill_file(fd, display, size, fill_progress).and_then(|()| {
        // link fails if `path` appeared meanwhile: nothing is replaced.
        fs::hard_link(&partial, path)
            .map_err(|e| OpenError::io(format!("cannot create {display}"), &e))
    });
    let _ = fs::remove_file(&partial);
    result.map(|()| (size, stale))
}

fn fill_file(
    fd: OwnedFd,
    display: &str,
    size: u64,
    fill_progress: &mut dyn FnMut(u64, u64),
) -> Result<(), OpenError> {
    let space_err = |e: io::Error| {
        if e.raw_os_error() == Some(libc::ENOSPC) || e.raw_os_error() == Some(libc::EDQUOT) {
            OpenError::invalid(format!(
                "not enough space to create {display} ({size} bytes); pass a smaller --size"
            ))
        } else if e.raw_os_error() == Some(libc::EINVAL) {
            OpenError::unsupported(no_direct_message(display))
        } else {
            OpenError::io(format!("cannot fill {display}"), &e)
        }
    };
    // Reserve the space first so a full disk fails now, not after minutes of writing.
    // SAFETY: fallocate takes plain integers.
    let rc = unsafe {
        libc::fallocate(
            std::os::fd::AsRawFd::as_raw_fd(&fd),
            0,
            0,
            size as libc::off_t,
        )
    };
    if rc < 0 {
        let e = io::Error::last_os_error();
        if matches!(e.raw_os_error(), Some(libc::ENOSPC) | Some(libc::EDQUOT)) {
            return Err(space_err(e));
        }
    }
    let mut buf = AlignedBuf::new(FILL_CHUNK, PAGE)
        .ok_or_else(|| OpenError::new(OpenErrorKind::Io, "cannot allocate a fill buffer"))?;
    let mut rng = SplitMix64::new(0x666c_6173_686c_6162 ^ size);
    let mut off = 0u64;
    while off < size {
        let n = (size - off).min(FILL_CHUNK as u64) as usize;
        buf.fill_random(&mut rng);
        sys::pwrite_full(fd.as_fd(), &buf.as_slice()[..n], off).map_err(space_err)?;
        off += n as u64;
        fill_progress(off, size);
    }
    sys::fsync(fd.as_fd()).map_err(|e| OpenError::io(format!("cannot fsync {display}"), &e))?;
    Ok(())
}

/// Size, alignment and identity without opening for IO; never writes.
pub fn probe(path: &Path) -> Result<DeviceInfo, OpenError> {
    let display = path.display().to_string();
    let meta = match fs::metadata(path) {
        Ok(m) => m,
        Err(e) if e.kind() == io::ErrorKind::NotFound => {
            return Err(OpenError::new(
                OpenErrorKind::NotFound,
                not_found_message(&display),
            ))
        }
        Err(e) if e.kind() == io::ErrorKind::PermissionDenied => {
            return Err(OpenError::invalid(permission_message(&display, false)))
        }
        Err(e) => return Err(OpenError::io(format!("cannot examine {display}"), &e)),
    };
    let ft = meta.file_type();
    if ft.is_block_device() || ft.is_file() {
        let fd = sys::open_raw(path, libc::O_RDONLY | libc::O_NONBLOCK, 0)
            .map_err(|e| map_open_err(e, &display, false, false))?;
        let stat = sys::fstat(fd.as_fd())
            .map_err(|e| OpenError::io(format!("cannot examine {display}"), &e))?;
        if sys::is_block(&stat) {
            block_info(fd.as_fd(), &display, stat.st_rdev)
        } else {
            Ok(file_info(path, &display, &stat, fd.as_fd()).0)
        }
    } else {
        Err(OpenError::invalid(format!(
            "{display} is neither a regular file nor a block device; name a file or a block device such as /dev/nvme0n1"
        )))
    }
}
