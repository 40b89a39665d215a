//! Thin wrappers over the few Linux calls that std does not offer: block
//! device ioctls, hole punching, statx's direct-IO alignment, statfs, uname.
//! Each returns `io::Result` so callers decide what an errno means to the user.

use std::ffi::CString;
use std::io;
use std::os::fd::{AsRawFd, BorrowedFd, FromRawFd, OwnedFd};
use std::os::unix::ffi::OsStrExt;
use std::path::Path;

// From <linux/fs.h>; spelled out because libc does not define them on every target.
const BLKGETSIZE64: libc::c_ulong = 0x8008_1272; // _IOR(0x12, 114, size_t)
const BLKSSZGET: libc::c_ulong = 0x1268; // _IO(0x12, 104)
const BLKPBSZGET: libc::c_ulong = 0x127b; // _IO(0x12, 123)
const BLKDISCARD: libc::c_ulong = 0x1277; // _IO(0x12, 119)

pub fn cstring(path: &Path) -> io::Result<CString> {
    CString::new(path.as_os_str().as_bytes())
        .map_err(|_| io::Error::new(io::ErrorKind::InvalidInput, "path contains a NUL byte"))
}

/// open(2) with raw flags (O_DIRECT, O_EXCL on block devices...), which
/// `std::fs::OpenOptions` can express only partly.
pub fn open_raw(path: &Path, flags: libc::c_int, mode: libc::mode_t) -> io::Result<OwnedFd> {
    let c = cstring(path)?;
    loop {
        // SAFETY: c is a valid NUL-terminated string; open has no other memory effects.
        let fd = unsafe { libc::open(c.as_ptr(), flags | libc::O_CLOEXEC, mode as libc::c_uint) };
        if fd >= 0 {
            // SAFETY: fd was just returned by open and is owned by nobody else.
            return Ok(unsafe { OwnedFd::from_raw_fd(fd) });
        }
        let err = io::Error::last_os_error();
        if err.raw_os_error() != Some(libc::EINTR) {
            return Err(err);
        }
    }
}

/// open(2) with O_EXCL on a block device, retrying EBUSY for a moment: a
/// process (often a previous flashlab run) that just closed the device may
/// still hold the claim while the kernel finishes releasing its files.
pub fn open_excl_patiently(path: &Path, flags: libc::c_int) -> io::Result<OwnedFd> {
    let mut delay_ms = 5;
    let mut waited_ms = 0;
    loop {
        match open_raw(path, flags | libc::O_EXCL, 0) {
            Err(e) if e.raw_os_error() == Some(libc::EBUSY) && waited_ms < 300 => {
                std::thread::sleep(std::time::Duration::from_millis(delay_ms));
                waited_ms += delay_ms;
                delay_ms = (delay_ms * 2).min(100);
            }
            r => return r,
        }
    }
}

pub fn blk_size_bytes(fd: BorrowedFd<'_>) -> io::Result<u64> {
    let mut size: u64 = 0;
    // SAFETY: BLKGETSIZE64 writes one u64 through the pointer, which points to a live u64.
    let rc = unsafe { libc::ioctl(fd.as_raw_fd(), BLKGETSIZE64 as _, &mut size as *mut u64) };
    if rc < 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(size)
}

fn blk_int_ioctl(fd: BorrowedFd<'_>, req: libc::c_ulong) -> io::Result<u32> {
    let mut v: libc::c_int = 0;
    // SAFETY: BLKSSZGET/BLKPBSZGET write one int through the pointer, which points to a live int.
    let rc = unsafe { libc::ioctl(fd.as_raw_fd(), req as _, &mut v as *mut libc::c_int) };
    if rc < 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(v.max(0) as u32)
}

pub fn blk_logical_block_bytes(fd: BorrowedFd<'_>) -> io::Result<u32> {
    blk_int_ioctl(fd, BLKSSZGET)
}

pub fn blk_physical_block_bytes(fd: BorrowedFd<'_>) -> io::Result<u32> {
    blk_int_ioctl(fd, BLKPBSZGET)
}

pub fn blk_discard(fd: BorrowedFd<'_>, offset: u64, len: u64) -> io::Result<()> {
    let range: [u64; 2] = [offset, len];
    // SAFETY: BLKDISCARD reads two u64 through the pointer, which points to a live [u64; 2].
    let rc = unsafe { libc::ioctl(fd.as_raw_fd(), BLKDISCARD as _, range.as_ptr()) };
    if rc < 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(())
}

pub fn punch_hole(fd: BorrowedFd<'_>, offset: u64, len: u64) -> io::Result<()> {
    let mode = libc::FALLOC_FL_PUNCH_HOLE | libc::FALLOC_FL_KEEP_SIZE;
    // SAFETY: fallocate takes plain integers.
    let rc = unsafe {
        libc::fallocate(
            fd.as_raw_fd(),
            mode,
            offset as libc::off_t,
            len as libc::off_t,
        )
    };
    if rc < 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(())
}

/// pwrite all of `buf`.
pub fn pwrite_full(fd: BorrowedFd<'_>, buf: &[u8], offset: u64) -> io::Result<()> {
    let mut done = 0;
    while done < buf.len() {
        let rest = &buf[done..];
        // SAFETY: rest is a valid readable slice of rest.len() bytes.
        let n = unsafe {
            libc::pwrite(
                fd.as_raw_fd(),
                rest.as_ptr().cast(),
                rest.len(),
                (offset + done as u64) as libc::off_t,
            )
        };
        if n < 0 {
            let err = io::Error::last_os_error();
            if err.raw_os_error() == Some(libc::EINTR) {
                continue;
            }
            return Err(err);
        }
        if n == 0 {
            return Err(io::Error::new(
                io::ErrorKind::WriteZero,
                "pwrite wrote nothing",
            ));
        }
        done += n as usize;
    }
    Ok(())
}

/// The file system magic number (statfs f_type) of the file behind `fd`.
pub fn fs_magic(fd: BorrowedFd<'_>) -> Option<i64> {
    // SAFETY: statfs is a plain C struct; all-zero is a valid value.
    let mut st: libc::statfs = unsafe { std::mem::zeroed() };
    // SAFETY: st is a live, writable statfs.
    let rc = unsafe { libc::fstatfs(fd.as_raw_fd(), &mut st) };
    if rc < 0 {
        return None;
    }
    Some(st.f_type as i64)
}

pub fn kernel_release() -> Option<String> {
    // SAFETY: utsname is a plain C struct; all-zero is a valid value.
    let mut u: libc::utsname = unsafe { std::mem::zeroed() };
    // SAFETY: u is a live, writable utsname.
    if unsafe { libc::uname(&mut u) } < 0 {
        return None;
    }
    let bytes: Vec<u8> = u
        .release
        .iter()
        .take_while(|&&c| c != 0)
        .map(|&c| c as u8)
        .collect();
    Some(String::from_utf8_lossy(&bytes).into_owned())
}

pub fn fsync(fd: BorrowedFd<'_>) -> io::Result<()> {
    // SAFETY: fsync takes a plain fd.
    if unsafe { libc::fsync(fd.as_raw_fd()) } < 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(())
}

/// Split a dev_t into (major, minor).
pub fn dev_major_minor(dev: u64) -> (u32, u32) {
    (
        libc::major(dev as libc::dev_t),
        libc::minor(dev as libc::dev_t),
    )
}

/// fstat(2): what a descriptor actually refers to (type, st_rdev, st_dev),
/// whatever path it was opened by.
pub fn fstat(fd: BorrowedFd<'_>) -> io::Result<libc::stat> {
    // SAFETY: stat is a plain C struct; all-zero is a valid value.
    let mut st: libc::stat = unsafe { std::mem::zeroed() };
    // SAFETY: st is a live, writable stat.
    if unsafe { libc::fstat(fd.as_raw_fd(), &mut st) } < 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(st)
}

pub fn is_block(st: &libc::stat) -> bool {
    st.st_mode & libc::S_IFMT == libc::S_IFBLK
}

pub fn is_regular(st: &libc::stat) -> bool {
    st.st_mode & libc::S_IFMT == libc::S_IFREG
}

/// Set and clear status flags of an open descriptor (fcntl F_SETFL): the
/// safety check reads through the descriptor with unaligned buffers before
/// O_DIRECT is turned on, and O_NONBLOCK (which keeps open(2) of a FIFO from
/// hanging) is cleared before any IO. EINVAL on O_DIRECT means no direct IO here.
pub fn update_flags(fd: BorrowedFd<'_>, set: libc::c_int, clear: libc::c_int) -> io::Result<()> {
    // SAFETY: fcntl F_GETFL/F_SETFL take plain integers.
    let flags = unsafe { libc::fcntl(fd.as_raw_fd(), libc::F_GETFL) };
    if flags < 0 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: as above.
    if unsafe { libc::fcntl(fd.as_raw_fd(), libc::F_SETFL, (flags | set) & !clear) } < 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(())
}

/// The direct-IO alignment of an open file from statx(STATX_DIOALIGN):
/// (memory, offset). `None` when the kernel or the file system does not report
/// it; `Some((0, 0))` means the file system has no direct IO for this file.
pub fn statx_dio_align_fd(fd: BorrowedFd<'_>) -> Option<(u32, u32)> {
    // SAFETY: statx is a plain C struct; all-zero is a valid value.
    let mut stx: libc::statx = unsafe { std::mem::zeroed() };
    // SAFETY: the empty path with AT_EMPTY_PATH names fd itself; stx is live and writable.
    let rc = unsafe {
        libc::statx(
            fd.as_raw_fd(),
            c"".as_ptr(),
            libc::AT_EMPTY_PATH,
            libc::STATX_DIOALIGN,
            &mut stx,
        )
    };
    if rc < 0 || stx.stx_mask & libc::STATX_DIOALIGN == 0 {
        return None;
    }
    Some((stx.stx_dio_mem_align, stx.stx_dio_offset_align))
}

/// struct loop_info64 from <linux/loop.h> (also used by flashlab-oltp, which
/// attaches loop devices to descriptors).
#[repr(C)]
#[derive(Clone, Copy)]
pub struct LoopInfo64 {
    pub lo_device: u64,
    pub lo_inode: u64,
    pub lo_rdevice: u64,
    pub lo_offset: u64,
    pub lo_sizelimit: u64,
    pub lo_number: u32,
    pub lo_encrypt_type: u32,
    pub lo_encrypt_key_size: u32,
    pub lo_flags: u32,
    pub lo_file_name: [u8; 64],
    pub lo_crypt_name: [u8; 64],
    pub lo_encrypt_key: [u8; 32],
    pub lo_init: [u64; 2],
}

const LOOP_GET_STATUS64: libc::c_ulong = 0x4C05;

/// What a loop device reads and writes through.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct LoopBacking {
    /// st_dev of the backing file or node (the file system it lives on).
    pub st_dev: u64,
    /// st_rdev of the backing object: non-zero when it is a block device.
    pub st_rdev: u64,
    /// st_ino of the backing object (with `st_dev`, which file it is).
    pub st_ino: u64,
}

/// LOOP_GET_STATUS64 on a loop device; ENXIO when it is not bound.
pub fn loop_backing(fd: BorrowedFd<'_>) -> io::Result<LoopBacking> {
    // SAFETY: LoopInfo64 is plain data; all-zero is valid.
    let mut info: LoopInfo64 = unsafe { std::mem::zeroed() };
    // SAFETY: LOOP_GET_STATUS64 writes one loop_info64 through the pointer, which points to a live one.
    let rc = unsafe {
        libc::ioctl(
            fd.as_raw_fd(),
            LOOP_GET_STATUS64 as _,
            &mut info as *mut LoopInfo64,
        )
    };
    if rc < 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(LoopBacking {
        st_dev: info.lo_device,
        st_rdev: info.lo_rdevice,
        st_ino: info.lo_inode,
    })
}
