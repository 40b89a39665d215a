//! The io_uring engine, flashlab's default at every queue depth.
//!
//! Shaped to cost less per IO than fio's io_uring engine, which it is
//! benchmarked against:
//! - every in-flight slot owns a registered (fixed) read buffer and write
//!   buffer, and the file is registered, so the kernel pins nothing and looks
//!   up nothing per IO, and we allocate nothing per IO;
//! - `submit` only writes an SQE; `poll` issues all queued SQEs with one
//!   `io_uring_enter`, which also waits for the first completion when there
//!   is no deadline (one syscall per batch), and reaps every CQE available;
//! - the ring is created with SINGLE_ISSUER | DEFER_TASKRUN (completion work
//!   runs only when we ask for it, with no inter-processor interrupts), falling
//!   back to COOP_TASKRUN and then to a plain ring on kernels without them.
//!   R_DISABLED postpones choosing the owning thread to the first `poll`, so
//!   the device may be opened on one thread and driven from another.
//!
//! Waiting follows the device contract: a blocking `io_uring_enter` with a
//! timeout (EXT_ARG) until the clock's spin margin (>= 100 us, adapted to
//! the wake-up lateness observed) before a deadline, then a spin that peeks
//! the CQ (entering the kernel only when it flags pending completion work).
//!
//! For comparisons, the environment variable FLASHLAB_IO_URING_SETUP=coop or
//! =plain starts the fallback list further down.
//!
//! Timestamps: every SQE of a batch gets the clock reading taken just before
//! the `io_uring_enter` that issues it; every CQE reaped in one pass gets the
//! reading taken as soon as the CQ was seen non-empty.

use std::os::fd::{AsFd, AsRawFd};

use io_uring::{opcode, types, IoUring};

use flashlab_device::{Completion, Device, DeviceError, DeviceInfo, IoRequest, Mode, Nanos};

use crate::buffers::SlotBuffers;
use crate::clock::Clock;
use crate::open::Target;

#[derive(Clone, Copy)]
struct Slot {
    tag: u64,
    submit_ns: Nanos,
    size: u32,
    mode: Mode,
    /// Tag of the IO that last completed in this slot, while the slot is free.
    last_tag: Option<u64>,
}

pub struct UringEngine {
    // Declared first so that, if Drop could not drain the ring, the ring is
    // closed before the buffers are released (see Drop).
    ring: IoUring,
    t: Target,
    clock: Clock,
    bufs: SlotBuffers,
    slots: Vec<Slot>,
    free: Vec<u32>,
    /// Slots whose SQE is written but not yet issued.
    unissued: Vec<u32>,
    /// Slots holding a TRIM, run synchronously in the next poll.
    trims: Vec<u32>,
    /// IOs issued to the kernel and not yet reaped.
    in_kernel: usize,
    /// Completions reaped during `idle_until`, handed out by the next poll.
    ready: Vec<Completion>,
    max_outstanding: usize,
    max_io_bytes: u32,
    fixed_file: bool,
    fixed_bufs: bool,
    enabled: bool,
    write_seq: u64,
}

fn os_err(what: &str, e: &std::io::Error) -> DeviceError {
    DeviceError::Os {
        what: what.to_string(),
        errno: e.raw_os_error().unwrap_or(libc::EIO),
    }
}

/// What an io_uring_enter's result means to the engine: timeouts and
/// interruptions are not errors (the caller looks at the CQ either way).
fn enter_outcome(r: std::io::Result<usize>) -> Result<(), DeviceError> {
    match r {
        Ok(_) => Ok(()),
        Err(e) => match e.raw_os_error() {
            Some(libc::ETIME) | Some(libc::EINTR) | Some(libc::EAGAIN) | Some(libc::EBUSY) => {
                Ok(())
            }
            Some(libc::EEXIST) => Err(DeviceError::Invariant(
                "the io_uring device was driven from a second thread; poll it from one thread only"
                    .into(),
            )),
            _ => Err(os_err("io_uring_enter", &e)),
        },
    }
}

/// Why the engine could not be built; the target is handed back so the
/// caller can fall back to the synchronous engine.
pub struct UringSetupError {
    pub target: Target,
    pub error: std::io::Error,
}

impl UringEngine {
    pub fn new(
        mut t: Target,
        max_outstanding: usize,
        max_io_bytes: u32,
    ) -> Result<UringEngine, UringSetupError> {
        let entries = (max_outstanding.max(1).next_power_of_two() as u32).clamp(1, 32768);
        // Most modern first; each later set is accepted by older kernels.
        type Setup = fn(&mut io_uring::Builder);
        let attempts: [(&str, Setup); 3] = [
            ("single_issuer,defer_taskrun,taskrun_flag,r_disabled", |b| {
                b.setup_single_issuer()
                    .setup_defer_taskrun()
                    .setup_taskrun_flag()
                    .setup_r_disabled();
            }),
            ("coop_taskrun,taskrun_flag", |b| {
                b.setup_coop_taskrun().setup_taskrun_flag();
            }),
            ("none", |_| {}),
        ];
        // Diagnostic knob for comparing setups: start the list at the named one.
        let first = match std::env::var("FLASHLAB_IO_URING_SETUP").as_deref() {
            Ok("coop") => 1,
            Ok("plain") => 2,
            _ => 0,
        };
        let mut last_err = None;
        let mut built = None;
        for (name, f) in attempts.into_iter().skip(first) {
            let mut b = IoUring::builder();
            f(&mut b);
            match b.build(entries) {
                Ok(r) => {
                    built = Some((r, name));
                    break;
                }
                Err(e) => last_err = Some(e),
            }
        }
        let Some((ring, setup)) = built else {
            let error = last_err.unwrap_or_else(|| std::io::Error::from_raw_os_error(libc::ENOSYS));
            return Err(UringSetupError { target: t, error });
        };
        let enabled = !setup.contains("r_disabled");

        let Some(mut bufs) = SlotBuffers::new(
            max_outstanding,
            max_io_bytes as usize,
            t.mem_align,
            0x5EED_0002,
        ) else {
            return Err(UringSetupError {
                target: t,
                error: std::io::Error::from_raw_os_error(libc::ENOMEM),
            });
        };
        let fixed_file = ring.submitter().register_files(&[t.fd.as_raw_fd()]).is_ok();
        let iovecs: Vec<libc::iovec> = bufs
            .read
            .iter_mut()
            .chain(bufs.write.iter_mut())
            .map(|b| b.iovec())
            .collect();
        // SAFETY: every iovec points into a buffer owned by `bufs`, which lives in
        // the engine as long as the ring; buffers are unregistered implicitly when
        // the ring closes, and Drop drains IO before anything is freed.
        let fixed_bufs = unsafe { ring.submitter().register_buffers(&iovecs) }.is_ok();

        let clock = Clock::start();
        t.note_engine(
            "io_uring",
            &[
                ("io_uring_setup", setup.to_string()),
                ("io_uring_fixed_buffers", fixed_bufs.to_string()),
                ("io_uring_fixed_file", fixed_file.to_string()),
                ("settle_ms", clock.settle_ms().to_string()),
            ],
        );
        let slots = vec![
            Slot {
                tag: 0,
                submit_ns: 0,
                size: 0,
                mode: Mode::Read,
                last_tag: None
            };
            max_outstanding
        ];
        Ok(UringEngine {
            ring,
            t,
            clock,
            bufs,
            slots,
            free: (0..max_outstanding as u32).rev().collect(),
            unissued: Vec::with_capacity(max_outstanding),
            trims: Vec::with_capacity(max_outstanding),
            in_kernel: 0,
            ready: Vec::with_capacity(max_outstanding),
            max_outstanding,
            max_io_bytes,
            fixed_file,
            fixed_bufs,
            enabled,
            write_seq: 0,
        })
    }

    /// The bytes of the IO tagged `tag` if it completed and its slot has not
    /// been reused since: what a read returned, or what a write sent. For
    /// tests and verification tools.
    pub fn last_data(&self, tag: u64) -> Option<&[u8]> {
        let i = self.slots.iter().position(|s| s.last_tag == Some(tag))?;
        let s = &self.slots[i];
        let buf = match s.mode {
            Mode::Read => &self.bufs.read[i],
            Mode::Write => &self.bufs.write[i],
            Mode::Trim => return None,
        };
        Some(&buf.as_slice()[..s.size as usize])
    }

    fn ensure_enabled(&mut self) -> Result<(), DeviceError> {
        if !self.enabled {
            // The thread that enables a SINGLE_ISSUER ring becomes its owner.
            self.ring
                .submitter()
                .register_enable_rings()
                .map_err(|e| os_err("io_uring enable rings", &e))?;
            self.enabled = true;
        }
        Ok(())
    }

    /// One io_uring_enter: issue what is queued and wait for `want` completions,
    /// at most `timeout_ns`. Timeouts and interruptions are not errors.
    fn enter(&mut self, want: usize, timeout_ns: Option<Nanos>) -> Result<(), DeviceError> {
        let r = match timeout_ns {
            None => self.ring.submit_and_wait(want),
            Some(ns) => {
                crate::clock::tighten_timer_slack();
                let ts = types::Timespec::new()
                    .sec(ns / 1_000_000_000)
                    .nsec((ns % 1_000_000_000) as u32);
                let args = types::SubmitArgs::new().timespec(&ts);
                self.ring.submitter().submit_with_args(want, &args)
            }
        };
        enter_outcome(r)
    }

    /// Issue what is queued without waiting, running deferred completion work.
    fn submit_only(&mut self) -> Result<(), DeviceError> {
        const IORING_ENTER_GETEVENTS: u32 = 1;
        let to_submit = self.ring.submission().len() as u32;
        // SAFETY: no signal mask is passed.
        let r = unsafe {
            self.ring.submitter().enter::<libc::sigset_t>(
                to_submit,
                0,
                IORING_ENTER_GETEVENTS,
                None,
            )
        };
        enter_outcome(r)
    }

    /// Issue the queued SQEs; `want` > 0 also waits for that many completions.
    fn issue(&mut self, want: usize) -> Result<(), DeviceError> {
        if self.unissued.is_empty() {
            return Ok(());
        }
        let t = self.clock.now_ns();
        for &s in &self.unissued {
            self.slots[s as usize].submit_ns = t;
        }
        let lone = self.in_kernel == 0 && self.unissued.len() == 1;
        self.in_kernel += self.unissued.len();
        self.unissued.clear();
        if lone && want > 0 {
            // A lone IO is issued and then waited for, in two syscalls, as fio
            // does at QD1. On a loop device one submit-and-wait syscall per IO
            // measured fewer IOPS (30 K against 37 K in flashlab, 31 K against
            // 59 K in a minimal program); the scheduler then places the loop
            // worker less favourably. See README "flashlab and fio, measured".
            self.submit_only()?;
            while self.in_kernel > 0 && self.ring.completion().is_empty() {
                self.enter(want, None)?;
            }
        } else {
            self.enter(want, None)?;
        }
        // An interrupted enter may leave SQEs behind; they must not wait for the next batch.
        while !self.ring.submission().is_empty() {
            self.enter(0, None)?;
        }
        Ok(())
    }

    fn run_trims(&mut self, out: &mut Vec<Completion>) -> Result<(), DeviceError> {
        while let Some(s) = self.trims.pop() {
            let slot = self.slots[s as usize];
            self.free.push(s);
            let offset = slot.submit_ns; // a trim's offset is parked in submit_ns until it runs
            let t0 = self.clock.now_ns();
            let errno = self.t.trim(offset, slot.size as u64)?;
            let t1 = self.clock.now_ns();
            self.slots[s as usize].last_tag = Some(slot.tag);
            out.push(Completion {
                tag: slot.tag,
                submit_ns: t0,
                complete_ns: t1,
                errno,
            });
        }
        Ok(())
    }

    /// Move every available CQE to `out`; returns how many.
    fn reap(&mut self, out: &mut Vec<Completion>) -> usize {
        let mut cq = self.ring.completion();
        if cq.is_empty() {
            return 0;
        }
        let now = self.clock.now_ns();
        let mut n = 0;
        for cqe in &mut cq {
            let s = cqe.user_data() as usize;
            let Some(slot) = self.slots.get_mut(s) else {
                continue;
            };
            let res = cqe.result();
            let errno = if res < 0 {
                Some(-res)
            } else if res as u32 != slot.size {
                // A short transfer cannot be timed as one IO: report it as an error.
                Some(libc::EIO)
            } else {
                None
            };
            slot.last_tag = Some(slot.tag);
            out.push(Completion {
                tag: slot.tag,
                submit_ns: slot.submit_ns,
                complete_ns: now,
                errno,
            });
            self.free.push(s as u32);
            n += 1;
        }
        self.in_kernel -= n;
        n
    }

    /// While spinning: whether completion work is pending that only a syscall
    /// will run (DEFER_TASKRUN or COOP_TASKRUN with the TASKRUN flag).
    fn kernel_has_work(&mut self) -> bool {
        self.ring.submission().taskrun()
    }

    /// Wait for a completion until `deadline_ns` (None: forever); reaped CQEs go to `out`.
    fn wait(
        &mut self,
        deadline_ns: Option<Nanos>,
        out: &mut Vec<Completion>,
    ) -> Result<usize, DeviceError> {
        loop {
            let n = self.reap(out);
            if n > 0 || self.in_kernel == 0 {
                return Ok(n);
            }
            let Some(d) = deadline_ns else {
                self.enter(1, None)?;
                continue;
            };
            let now = self.clock.now_ns();
            if now >= d {
                return Ok(0);
            }
            let remaining = d - now;
            let margin = self.clock.spin_margin_ns();
            if remaining > margin {
                let target = d - margin;
                self.enter(1, Some(remaining - margin))?;
                if self.ring.completion().is_empty() && !self.kernel_has_work() {
                    // Woken by the timeout: learn how late, as the clock does for sleeps.
                    self.clock
                        .learn_wake_lateness(self.clock.now_ns().saturating_sub(target));
                }
            } else if self.kernel_has_work() {
                // Completion work is pending (under DEFER_TASKRUN it runs only
                // inside io_uring_enter); the crate adds GETEVENTS for it.
                self.enter(0, None)?;
            } else {
                std::hint::spin_loop();
            }
        }
    }
}

impl Device for UringEngine {
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
        let Some(s) = self.free.pop() else {
            return Err(DeviceError::InvalidRequest(format!(
                "more than {} outstanding IOs submitted",
                self.max_outstanding
            )));
        };
        let i = s as usize;
        self.slots[i] = Slot {
            tag: req.tag,
            submit_ns: 0,
            size: req.size_bytes,
            mode: req.mode,
            last_tag: None,
        };
        let len = req.size_bytes;
        let off = req.offset_bytes;
        let entry = match req.mode {
            Mode::Trim => {
                self.slots[i].submit_ns = off;
                self.trims.push(s);
                return Ok(());
            }
            Mode::Read => {
                let buf = self.bufs.read[i].as_mut_ptr();
                match (self.fixed_file, self.fixed_bufs) {
                    (true, true) => opcode::ReadFixed::new(types::Fixed(0), buf, len, s as u16)
                        .offset(off)
                        .build(),
                    (false, true) => {
                        opcode::ReadFixed::new(types::Fd(self.t.fd.as_raw_fd()), buf, len, s as u16)
                            .offset(off)
                            .build()
                    }
                    (true, false) => opcode::Read::new(types::Fixed(0), buf, len)
                        .offset(off)
                        .build(),
                    (false, false) => opcode::Read::new(types::Fd(self.t.fd.as_raw_fd()), buf, len)
                        .offset(off)
                        .build(),
                }
            }
            Mode::Write => {
                self.write_seq += 1;
                let wb = &mut self.bufs.write[i];
                wb.stamp(off, len as usize, self.write_seq);
                let buf = wb.as_ptr();
                let idx = (self.max_outstanding + i) as u16;
                match (self.fixed_file, self.fixed_bufs) {
                    (true, true) => opcode::WriteFixed::new(types::Fixed(0), buf, len, idx)
                        .offset(off)
                        .build(),
                    (false, true) => {
                        opcode::WriteFixed::new(types::Fd(self.t.fd.as_raw_fd()), buf, len, idx)
                            .offset(off)
                            .build()
                    }
                    (true, false) => opcode::Write::new(types::Fixed(0), buf, len)
                        .offset(off)
                        .build(),
                    (false, false) => {
                        opcode::Write::new(types::Fd(self.t.fd.as_raw_fd()), buf, len)
                            .offset(off)
                            .build()
                    }
                }
            }
        };
        let entry = entry.user_data(s as u64);
        // SAFETY: the SQE points into slot i's buffer, owned by the engine and not
        // touched again until the slot's CQE is reaped (the slot is off the free list).
        let pushed = unsafe { self.ring.submission().push(&entry) };
        if pushed.is_err() {
            // Cannot happen: the SQ has at least max_outstanding entries.
            self.free.push(s);
            return Err(DeviceError::Invariant(
                "io_uring submission queue full".into(),
            ));
        }
        self.unissued.push(s);
        Ok(())
    }

    fn poll(
        &mut self,
        deadline_ns: Option<Nanos>,
        out: &mut Vec<Completion>,
    ) -> Result<(), DeviceError> {
        let start = out.len();
        out.append(&mut self.ready);
        if !self.unissued.is_empty() {
            self.ensure_enabled()?;
            // With nothing else to hand back, issue and wait in one syscall.
            let nothing_ready =
                out.len() == start && self.trims.is_empty() && deadline_ns.is_none();
            let want = if nothing_ready && self.ring.completion().is_empty() {
                1
            } else {
                0
            };
            self.issue(want)?;
        }
        self.run_trims(out)?;
        self.reap(out);
        if out.len() > start {
            return Ok(());
        }
        if self.in_kernel == 0 {
            if let Some(d) = deadline_ns {
                self.clock.wait_until(d);
            }
            return Ok(());
        }
        self.ensure_enabled()?;
        self.wait(deadline_ns, out)?;
        Ok(())
    }

    fn idle_until(&mut self, deadline_ns: Nanos) -> Result<(), DeviceError> {
        if self.in_kernel == 0 {
            self.clock.wait_until(deadline_ns);
            return Ok(());
        }
        // Keep reaping so IOs outstanding during a pause get accurate completion times.
        let mut ready = std::mem::take(&mut self.ready);
        let r = (|| {
            while self.clock.now_ns() < deadline_ns {
                if self.in_kernel == 0 {
                    self.clock.wait_until(deadline_ns);
                    break;
                }
                self.wait(Some(deadline_ns), &mut ready)?;
            }
            Ok(())
        })();
        self.ready = ready;
        r
    }

    fn begin_run(&mut self) {
        self.clock.settle();
        // Enable the ring now, on the thread that will drive it, so the run's
        // first IO does not pay for it. A failure shows again at the first poll.
        let _ = self.ensure_enabled();
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

impl Drop for UringEngine {
    fn drop(&mut self) {
        // The kernel may still DMA into slot buffers: wait for every issued IO
        // (bounded, so a hung device cannot hang the process forever).
        let mut sink = Vec::with_capacity(self.max_outstanding);
        let give_up = self.clock.now_ns() + 30_000_000_000;
        if self.in_kernel > 0 && self.ensure_enabled().is_ok() {
            while self.in_kernel > 0 && self.clock.now_ns() < give_up {
                if self.wait(Some(give_up), &mut sink).is_err() {
                    break;
                }
                sink.clear();
            }
        }
        // The registered file holds its own reference, and a closing ring drops it
        // only later, from a kernel worker: a block device's O_EXCL claim would
        // outlive us and the next open (ours, or the next run's) would see EBUSY.
        // Unregistering waits for the references to go.
        if self.fixed_file {
            let _ = self.ring.submitter().unregister_files();
        }
        if self.in_kernel == 0 && self.fixed_bufs {
            let _ = self.ring.submitter().unregister_buffers();
        }
        if self.in_kernel > 0 {
            // Still in flight: leak the buffers rather than free memory the
            // kernel may write to.
            let bufs = std::mem::replace(
                &mut self.bufs,
                SlotBuffers {
                    read: Vec::new(),
                    write: Vec::new(),
                },
            );
            std::mem::forget(bufs);
        }
    }
}
