//! Loop devices attached to a *descriptor*, never to a path.
//!
//! `losetup FILE` opens FILE by name: a symlink swapped in between the
//! moment flashlab created (or checked) the file and that open sends the
//! loop device, and then mkfs, to whatever the symlink names. Here the file
//! is opened once, checked through that descriptor, and the descriptor is
//! handed to the kernel (`LOOP_CONFIGURE`, or `LOOP_SET_FD` on kernels
//! before 5.8) on a loop device allocated from `/dev/loop-control`. After
//! the attach, the loop device's backing is read back (`LOOP_GET_STATUS64`)
//! and must be that very file (st_dev and st_ino). mkfs and mount are then
//! given `/proc/PID/fd/N` of the loop device flashlab holds open.
//!
//! The loop device is attached with autoclear: once flashlab's descriptor
//! is closed and nothing mounts it, the kernel detaches it by itself, so a
//! killed run leaves no loop device behind once its mount is gone.

use std::os::fd::{AsFd, AsRawFd, BorrowedFd, FromRawFd, OwnedFd};
use std::path::{Path, PathBuf};

use flashlab_realdev::LoopInfo64;

use crate::error::{OltpError, Result};

const LOOP_SET_FD: libc::c_ulong = 0x4C00;
const LOOP_CLR_FD: libc::c_ulong = 0x4C01;
const LOOP_SET_STATUS64: libc::c_ulong = 0x4C04;
const LOOP_GET_STATUS64: libc::c_ulong = 0x4C05;
const LOOP_SET_DIRECT_IO: libc::c_ulong = 0x4C08;
const LOOP_CONFIGURE: libc::c_ulong = 0x4C0A;
const LOOP_CTL_GET_FREE: libc::c_ulong = 0x4C82;
const LO_FLAGS_AUTOCLEAR: u32 = 4;
const LO_FLAGS_DIRECT_IO: u32 = 16;
/// The loop driver's block major (Documentation/admin-guide/devices.txt).
const LOOP_MAJOR: u32 = 7;

/// struct loop_config from <linux/loop.h>.
#[repr(C)]
struct LoopConfig {
    fd: u32,
    block_size: u32,
    info: LoopInfo64,
    reserved: [u64; 8],
}

/// A loop device flashlab attached and holds open.
#[derive(Debug)]
pub struct LoopDev {
    /// The loop device itself, open read-write (mkfs and mount get its /proc path).
    pub fd: OwnedFd,
    /// /dev/loopN.
    pub path: PathBuf,
    pub major: u32,
    pub minor: u32,
}

impl LoopDev {
    /// `/proc/PID/fd/N`: exactly this loop device, for mkfs and mount.
    pub fn proc_path(&self) -> PathBuf {
        PathBuf::from(format!(
            "/proc/{}/fd/{}",
            std::process::id(),
            self.fd.as_raw_fd()
        ))
    }

    /// Detaches it (the kernel defers the detach to the last close while
    /// someone else still has it open: autoclear). EBUSY right after an
    /// unmount is retried for a while.
    pub fn detach(&self) -> std::io::Result<()> {
        let mut last = std::io::Error::from_raw_os_error(libc::EBUSY);
        for _ in 0..50 {
            // SAFETY: LOOP_CLR_FD takes no argument; fd is our open loop device.
            let rc = unsafe { libc::ioctl(self.fd.as_raw_fd(), LOOP_CLR_FD as _, 0) };
            if rc == 0 {
                return Ok(());
            }
            last = std::io::Error::last_os_error();
            match last.raw_os_error() {
                // Not bound (any more): nothing to undo.
                Some(libc::ENXIO) => return Ok(()),
                Some(libc::EBUSY) => std::thread::sleep(std::time::Duration::from_millis(100)),
                _ => return Err(last),
            }
        }
        Err(last)
    }
}

fn ioctl_err(what: &str) -> OltpError {
    OltpError::failed(what.to_string(), std::io::Error::last_os_error())
}

pub(crate) fn fstat(fd: BorrowedFd<'_>) -> std::io::Result<libc::stat> {
    // SAFETY: stat is plain data; fstat fills it through a live pointer.
    let mut st: libc::stat = unsafe { std::mem::zeroed() };
    // SAFETY: fd is open for the duration of the call.
    if unsafe { libc::fstat(fd.as_raw_fd(), &mut st) } < 0 {
        return Err(std::io::Error::last_os_error());
    }
    Ok(st)
}

/// What a loop device is bound to: (st_dev, st_ino, st_rdev) of its backing.
fn backing(fd: BorrowedFd<'_>) -> std::io::Result<(u64, u64, u64)> {
    // SAFETY: LoopInfo64 is plain data; all-zero is valid.
    let mut info: LoopInfo64 = unsafe { std::mem::zeroed() };
    // SAFETY: LOOP_GET_STATUS64 writes one loop_info64 through a live pointer.
    let rc = unsafe { libc::ioctl(fd.as_raw_fd(), LOOP_GET_STATUS64 as _, &mut info) };
    if rc < 0 {
        return Err(std::io::Error::last_os_error());
    }
    Ok((info.lo_device, info.lo_inode, info.lo_rdevice))
}

/// A free loop device from /dev/loop-control, opened read-write and
/// checked to be a loop device node.
fn open_free_loop() -> Result<(OwnedFd, PathBuf, u32, u32)> {
    let ctl = std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .open("/dev/loop-control")
        .map_err(|e| OltpError::failed("cannot open /dev/loop-control", e))?;
    // SAFETY: LOOP_CTL_GET_FREE takes no argument and returns a number.
    let n = unsafe { libc::ioctl(ctl.as_raw_fd(), LOOP_CTL_GET_FREE as _, 0) };
    if n < 0 {
        return Err(ioctl_err("no free loop device (LOOP_CTL_GET_FREE)"));
    }
    let path = PathBuf::from(format!("/dev/loop{n}"));
    let c = std::ffi::CString::new(path.as_os_str().as_encoded_bytes()).expect("no NUL");
    // O_NOFOLLOW: /dev/loopN itself must be the node, not a link to one.
    // SAFETY: c is a valid C string; open returns a new descriptor or -1.
    let raw = unsafe {
        libc::open(
            c.as_ptr(),
            libc::O_RDWR | libc::O_CLOEXEC | libc::O_NOFOLLOW,
        )
    };
    if raw < 0 {
        return Err(OltpError::failed(
            format!("cannot open {}", path.display()),
            std::io::Error::last_os_error(),
        ));
    }
    // SAFETY: raw is a descriptor we just opened and own.
    let fd = unsafe { OwnedFd::from_raw_fd(raw) };
    let st = fstat(fd.as_fd())
        .map_err(|e| OltpError::failed(format!("cannot stat {}", path.display()), e))?;
    let (major, minor) = (libc::major(st.st_rdev), libc::minor(st.st_rdev));
    if st.st_mode & libc::S_IFMT != libc::S_IFBLK || major != LOOP_MAJOR {
        return Err(OltpError::failed(
            format!("{} is not a loop device node", path.display()),
            std::io::Error::from_raw_os_error(libc::ENODEV),
        ));
    }
    Ok((fd, path, major, minor))
}

fn configure(loop_fd: BorrowedFd<'_>, file: BorrowedFd<'_>, flags: u32) -> std::io::Result<()> {
    // SAFETY: LoopConfig is plain data; all-zero is valid.
    let mut cfg: LoopConfig = unsafe { std::mem::zeroed() };
    cfg.fd = file.as_raw_fd() as u32;
    cfg.info.lo_flags = flags;
    // SAFETY: LOOP_CONFIGURE reads one loop_config through a live pointer.
    let rc = unsafe { libc::ioctl(loop_fd.as_raw_fd(), LOOP_CONFIGURE as _, &cfg) };
    if rc == 0 {
        return Ok(());
    }
    let e = std::io::Error::last_os_error();
    if e.raw_os_error() != Some(libc::EINVAL) && e.raw_os_error() != Some(libc::ENOTTY) {
        return Err(e);
    }
    // Kernels before 5.8: bind, then set the flags.
    // SAFETY: LOOP_SET_FD takes the backing descriptor as its argument.
    let rc = unsafe { libc::ioctl(loop_fd.as_raw_fd(), LOOP_SET_FD as _, file.as_raw_fd()) };
    if rc < 0 {
        return Err(std::io::Error::last_os_error());
    }
    // SAFETY: LoopInfo64 is plain data; all-zero is valid.
    let mut info: LoopInfo64 = unsafe { std::mem::zeroed() };
    info.lo_flags = LO_FLAGS_AUTOCLEAR;
    // SAFETY: LOOP_SET_STATUS64 reads one loop_info64 through a live pointer.
    unsafe { libc::ioctl(loop_fd.as_raw_fd(), LOOP_SET_STATUS64 as _, &info) };
    if flags & LO_FLAGS_DIRECT_IO != 0 {
        // SAFETY: LOOP_SET_DIRECT_IO takes 0 or 1; failure leaves buffered IO.
        unsafe { libc::ioctl(loop_fd.as_raw_fd(), LOOP_SET_DIRECT_IO as _, 1) };
    }
    Ok(())
}

/// Attaches a free loop device to the regular file open on `file`, and
/// checks that the loop device ends up over that very file. Direct IO where
/// the file's file system allows it (so that its page cache is not doubled).
pub fn attach_fd(file: BorrowedFd<'_>, display: &Path) -> Result<LoopDev> {
    let st = fstat(file)
        .map_err(|e| OltpError::failed(format!("cannot stat {}", display.display()), e))?;
    if st.st_mode & libc::S_IFMT != libc::S_IFREG {
        return Err(OltpError::NotOurs(format!(
            "{} is not a regular file (any more); flashlab oltp attaches loop devices to files only",
            display.display()
        )));
    }
    // Another process may take the free device between GET_FREE and the
    // attach (EBUSY): ask again.
    let mut tries = 0;
    let (fd, path, major, minor) = loop {
        let (fd, path, major, minor) = open_free_loop()?;
        let r = configure(fd.as_fd(), file, LO_FLAGS_AUTOCLEAR | LO_FLAGS_DIRECT_IO).or_else(|e| {
            // A file system without O_DIRECT refuses direct IO: buffered then.
            if e.raw_os_error() == Some(libc::EINVAL) {
                configure(fd.as_fd(), file, LO_FLAGS_AUTOCLEAR)
            } else {
                Err(e)
            }
        });
        match r {
            Ok(()) => break (fd, path, major, minor),
            Err(e) if e.raw_os_error() == Some(libc::EBUSY) && tries < 20 => tries += 1,
            Err(e) => {
                return Err(OltpError::failed(
                    format!("cannot attach {} to {}", path.display(), display.display()),
                    e,
                ))
            }
        }
    };
    let dev = LoopDev {
        fd,
        path,
        major,
        minor,
    };
    // The check on what the loop device is over: the file we opened, nothing else.
    match backing(dev.fd.as_fd()) {
        Ok((d, i, r)) if d == st.st_dev && i == st.st_ino && r == 0 => Ok(dev),
        Ok(_) => {
            let _ = dev.detach();
            Err(OltpError::NotOurs(format!(
                "{} ended up over another file than {}; detached it, nothing was written",
                dev.path.display(),
                display.display()
            )))
        }
        Err(e) => {
            let _ = dev.detach();
            Err(OltpError::failed(
                format!("cannot read back what {} is over", dev.path.display()),
                e,
            ))
        }
    }
}

/// (st_dev, st_ino) the loop device open on `fd` is over, for tests and
/// for the record of a run.
pub fn backing_file_id(fd: BorrowedFd<'_>) -> std::io::Result<(u64, u64)> {
    backing(fd).map(|(d, i, _)| (d, i))
}
