//! The synchronous engine: one pread/pwrite at a time.
//!
//! Nothing sits between the two clock readings but the syscall itself, which
//! makes it the reference for what one IO costs; it is chosen with
//! `--engine sync`, and automatically only where io_uring is unavailable
//! (on our loop-device benchmark io_uring was faster even at QD1, see
//! README "Checked against fio"). Queued requests (if a user forces this engine with more than one
//! outstanding) are issued one after another in `poll`, each timed on its own.

use std::collections::VecDeque;
use std::os::fd::{AsFd, AsRawFd};

use flashlab_device::{Completion, Device, DeviceError, DeviceInfo, IoRequest, Mode, Nanos};

use crate::buffers::{AlignedBuf, SplitMix64};
use crate::clock::Clock;
use crate::open::Target;

pub struct SyncEngine {
    t: Target,
    clock: Clock,
    max_outstanding: usize,
    max_io_bytes: u32,
    queue: VecDeque<IoRequest>,
    read_buf: AlignedBuf,
    write_buf: AlignedBuf,
    write_seq: u64,
    /// The last completed IO (tag, mode, size), for [`SyncEngine::last_data`].
    last: Option<(u64, Mode, u32)>,
}

impl SyncEngine {
    pub fn new(mut t: Target, max_outstanding: usize, max_io_bytes: u32) -> Option<SyncEngine> {
        let read_buf = AlignedBuf::new(max_io_bytes as usize, t.mem_align)?;
        let mut write_buf = AlignedBuf::new(max_io_bytes as usize, t.mem_align)?;
        write_buf.fill_random(&mut SplitMix64::new(0x5EED_0001));
        let clock = Clock::start();
        t.note_engine("sync", &[("settle_ms", clock.settle_ms().to_string())]);
        Some(SyncEngine {
            t,
            clock,
            max_outstanding: max_outstanding.max(1),
            max_io_bytes,
            queue: VecDeque::with_capacity(max_outstanding.max(1)),
            read_buf,
            write_buf,
            write_seq: 0,
            last: None,
        })
    }

    /// The bytes of the last completed IO if its tag is `tag`: what a read
    /// returned, or what a write sent. For tests and verification tools.
    pub fn last_data(&self, tag: u64) -> Option<&[u8]> {
        let (t, mode, size) = self.last?;
        if t != tag {
            return None;
        }
        let buf = match mode {
            Mode::Read => &self.read_buf,
            Mode::Write => &self.write_buf,
            Mode::Trim => return None,
        };
        Some(&buf.as_slice()[..size as usize])
    }

    fn issue(&mut self, req: IoRequest) -> Result<Completion, DeviceError> {
        let fd = self.t.fd.as_raw_fd();
        let size = req.size_bytes as usize;
        let off = req.offset_bytes as libc::off_t;
        if req.mode == Mode::Write {
            self.write_seq += 1;
            self.write_buf.stamp(req.offset_bytes, size, self.write_seq);
        }
        let (submit_ns, complete_ns, errno) = match req.mode {
            Mode::Trim => {
                let t0 = self.clock.now_ns();
                let r = self.t.trim(req.offset_bytes, req.size_bytes as u64)?;
                (t0, self.clock.now_ns(), r)
            }
            Mode::Read | Mode::Write => loop {
                let t0 = self.clock.now_ns();
                let n = match req.mode {
                    // SAFETY: read_buf is aligned and holds max_io_bytes >= size bytes (checked in submit).
                    Mode::Read => unsafe {
                        libc::pread(fd, self.read_buf.as_mut_ptr().cast(), size, off)
                    },
                    // SAFETY: write_buf is aligned and holds max_io_bytes >= size bytes (checked in submit).
                    _ => unsafe { libc::pwrite(fd, self.write_buf.as_ptr().cast(), size, off) },
                };
                let t1 = self.clock.now_ns();
                if n < 0 {
                    let errno = std::io::Error::last_os_error()
                        .raw_os_error()
                        .unwrap_or(libc::EIO);
                    if errno == libc::EINTR {
                        continue;
                    }
                    break (t0, t1, Some(errno));
                }
                // A short transfer inside the device cannot be timed as one IO: report it as an error.
                break (
                    t0,
                    t1,
                    if n as usize == size {
                        None
                    } else {
                        Some(libc::EIO)
                    },
                );
            },
        };
        self.last = Some((req.tag, req.mode, req.size_bytes));
        Ok(Completion {
            tag: req.tag,
            submit_ns,
            complete_ns,
            errno,
        })
    }
}

impl Device for SyncEngine {
    fn info(&self) -> &DeviceInfo {
        &self.t.info
    }

    fn now_ns(&self) -> Nanos {
        self.clock.now_ns()
    }

    fn max_outstanding(&self) -> usize {
        self.max_outstanding
    }

    fn submit(&mut self, req: IoRequest) -> Result<(), DeviceError> {
        self.t.check(&req, self.max_io_bytes)?;
        if self.queue.len() >= self.max_outstanding {
            return Err(DeviceError::InvalidRequest(format!(
                "more than {} outstanding IOs submitted",
                self.max_outstanding
            )));
        }
        self.queue.push_back(req);
        Ok(())
    }

    fn poll(
        &mut self,
        deadline_ns: Option<Nanos>,
        out: &mut Vec<Completion>,
    ) -> Result<(), DeviceError> {
        if self.queue.is_empty() {
            if let Some(d) = deadline_ns {
                self.clock.wait_until(d);
            }
            return Ok(());
        }
        while let Some(req) = self.queue.pop_front() {
            let c = self.issue(req)?;
            out.push(c);
        }
        Ok(())
    }

    fn idle_until(&mut self, deadline_ns: Nanos) -> Result<(), DeviceError> {
        self.clock.wait_until(deadline_ns);
        Ok(())
    }

    fn begin_run(&mut self) {
        self.clock.settle();
    }

    fn set_write_cache(&mut self, enabled: bool) -> Result<(), DeviceError> {
        self.t.set_write_cache(enabled)
    }

    fn flush(&mut self) -> Result<(), DeviceError> {
        crate::sys::fsync(self.t.fd.as_fd()).map_err(|e| DeviceError::Os {
            what: format!("fsync {}", self.t.display),
            errno: e.raw_os_error().unwrap_or(libc::EIO),
        })
    }
}
