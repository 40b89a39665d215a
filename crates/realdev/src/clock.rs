//! The device clock and the waiting strategy.
//!
//! Timestamps are nanoseconds on CLOCK_MONOTONIC since the device was opened
//! (`Instant` is CLOCK_MONOTONIC on Linux, read through the vDSO in ~20 ns).
//!
//! Pauses must be accurate to a few microseconds, but a sleeping thread wakes
//! late: on the 2-core VMs flashlab is developed on, 50 to 130 us late even
//! with the timer slack at 1 ns (it is 50 us by default, so we lower it for
//! the waiting thread). So a wait sleeps until a *margin* before the deadline
//! and spins on the clock for the rest. The margin starts at [`SPIN_NS`] and
//! follows the wake-up lateness actually observed (up at once, down slowly,
//! at most [`MAX_SPIN_NS`]): a quiet machine spins ~100 us per pause, a noisy
//! one spins longer but still wakes on time.
//!
//! At the start of every run (`Device::begin_run`, called by the executor
//! before it reads the run's start time) the thread *settles*: it sleeps [`SETTLE_NS`]
//! so that the CPU it burned getting ready (parsing, planning, creating and
//! filling files, writing the previous run's summary) has decayed out of the
//! scheduler's load tracking (PELT halves every 32 ms). Without it, the
//! scheduler sees a busy thread and wakes the block layer's workers on another
//! CPU, which on a virtual machine means an inter-processor interrupt to a
//! halted vCPU per IO: measured on a loop device at QD1, 4 KiB random reads
//! ran at a median of 49 K IOPS (spread 32-171 K) without settling and 77 K
//! (66-81 K) with it, fio's 75 K in the same run (bench/fio_compare.py).
//! The environment variable FLASHLAB_SETTLE_MS overrides the time (0: off).

use std::cell::Cell;
use std::time::{Duration, Instant};

use flashlab_device::Nanos;

/// The least time before a deadline that a waiter stops sleeping and spins.
pub const SPIN_NS: Nanos = 100_000;
/// The most: beyond this, spinning costs more CPU than lateness is worth.
pub const MAX_SPIN_NS: Nanos = 1_000_000;

/// How long a thread sleeps before the first IO of a run (see the module doc).
pub const SETTLE_NS: Nanos = 150_000_000;

/// The settle time: [`SETTLE_NS`] unless FLASHLAB_SETTLE_MS says otherwise.
fn settle_ns() -> Nanos {
    std::env::var("FLASHLAB_SETTLE_MS")
        .ok()
        .and_then(|v| v.trim().parse::<u64>().ok())
        .map_or(SETTLE_NS, |ms| ms.saturating_mul(1_000_000))
}

#[derive(Clone, Debug)]
pub struct Clock {
    origin: Instant,
    margin_ns: Cell<Nanos>,
    settle_ns: Nanos,
}

thread_local! {
    static SLACK_SET: Cell<bool> = const { Cell::new(false) };
}

/// Lower this thread's timer slack so sleeps end when asked (once per thread).
pub(crate) fn tighten_timer_slack() {
    SLACK_SET.with(|s| {
        if !s.get() {
            // SAFETY: PR_SET_TIMERSLACK takes an integer and affects only the calling thread.
            unsafe { libc::prctl(libc::PR_SET_TIMERSLACK, 1 as libc::c_ulong, 0, 0, 0) };
            s.set(true);
        }
    });
}

impl Clock {
    /// A clock whose zero is now (the moment the device is opened).
    pub fn start() -> Clock {
        Clock {
            origin: Instant::now(),
            margin_ns: Cell::new(SPIN_NS),
            settle_ns: settle_ns(),
        }
    }

    /// The settle time in milliseconds, for the results manifest.
    pub fn settle_ms(&self) -> u64 {
        self.settle_ns / 1_000_000
    }

    /// Sleep the settle time (the executor asks for it at the start of each
    /// run, through `Device::begin_run`).
    pub fn settle(&self) {
        if self.settle_ns > 0 {
            std::thread::sleep(Duration::from_nanos(self.settle_ns));
        }
    }

    #[inline]
    pub fn now_ns(&self) -> Nanos {
        // u64 nanoseconds overflow after 584 years of uptime.
        self.origin.elapsed().as_nanos() as Nanos
    }

    /// How long before a deadline to stop sleeping (or blocking) and spin.
    pub fn spin_margin_ns(&self) -> Nanos {
        self.margin_ns.get()
    }

    /// Tell the clock that a sleep meant to end at some time ended `late_ns` after it.
    pub fn learn_wake_lateness(&self, late_ns: Nanos) {
        let want = (late_ns + late_ns / 4 + 10_000).clamp(SPIN_NS, MAX_SPIN_NS);
        let m = self.margin_ns.get();
        self.margin_ns
            .set(if want >= m { want } else { m - (m - want) / 32 });
    }

    /// Sleep (not spin) for `ns`, learning how late the wake-up was.
    pub fn sleep_ns(&self, ns: Nanos) {
        tighten_timer_slack();
        let target = self.now_ns() + ns;
        std::thread::sleep(Duration::from_nanos(ns));
        self.learn_wake_lateness(self.now_ns().saturating_sub(target));
    }

    /// Wait until the clock reads `deadline_ns`: sleep, then spin.
    pub fn wait_until(&self, deadline_ns: Nanos) {
        self.wait_until_or(deadline_ns, || false);
    }

    /// Like [`wait_until`](Self::wait_until), but calls `ready` while spinning
    /// and returns early (true) as soon as it says so. The sleep phase does not
    /// look at `ready`: callers that can block on their own event source (the
    /// io_uring engine) do the long part of the wait themselves.
    pub fn wait_until_or(&self, deadline_ns: Nanos, mut ready: impl FnMut() -> bool) -> bool {
        loop {
            let now = self.now_ns();
            if now >= deadline_ns {
                return false;
            }
            let remaining = deadline_ns - now;
            let margin = self.spin_margin_ns();
            if remaining > margin {
                self.sleep_ns(remaining - margin);
                continue;
            }
            if ready() {
                return true;
            }
            std::hint::spin_loop();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn waits_at_least_the_requested_time() {
        let c = Clock::start();
        for wait in [0u64, 5_000, 50_000, 250_000, 2_000_000] {
            let t0 = c.now_ns();
            c.wait_until(t0 + wait);
            let t1 = c.now_ns();
            assert!(t1 - t0 >= wait);
            eprintln!("clock wait {wait} ns: overshoot {} ns", t1 - t0 - wait);
        }
    }

    #[test]
    fn settle_sleeps_the_settle_time() {
        let mut c = Clock::start();
        c.settle_ns = 30_000_000;
        let t0 = c.now_ns();
        c.settle();
        assert!(c.now_ns() - t0 >= 30_000_000);
        c.settle_ns = 0;
        let t1 = c.now_ns();
        c.settle();
        assert!(
            c.now_ns() - t1 < 30_000_000,
            "FLASHLAB_SETTLE_MS=0 turns it off"
        );
    }

    #[test]
    fn margin_follows_lateness() {
        let c = Clock::start();
        assert_eq!(c.spin_margin_ns(), SPIN_NS);
        c.learn_wake_lateness(400_000);
        assert!(c.spin_margin_ns() >= 400_000);
        c.learn_wake_lateness(10_000_000);
        assert_eq!(c.spin_margin_ns(), MAX_SPIN_NS);
        for _ in 0..2000 {
            c.learn_wake_lateness(0);
        }
        assert!(c.spin_margin_ns() < SPIN_NS + 1_000);
    }

    #[test]
    fn ready_ends_the_spin() {
        let c = Clock::start();
        // A deadline inside the spin window, so `ready` is consulted from the
        // start; retried because a preempted test thread can miss a 100 us window.
        let early = (0..20).any(|_| {
            let mut n = 0;
            c.wait_until_or(c.now_ns() + c.spin_margin_ns(), || {
                n += 1;
                n > 3
            })
        });
        assert!(early);
    }
}
