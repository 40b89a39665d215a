//! The one interface every flashlab target implements.
//!
//! A real block device or file (O_DIRECT, synchronous or io_uring) and the
//! simulator implement [`Device`], so the pattern executor, the methodology,
//! the suites and the analysis are written once and serve hardware and
//! simulation alike.
//!
//! The interface is shaped around *time owned by the device*: a real device
//! reports wall-clock nanoseconds since it was opened, the simulator reports
//! simulated nanoseconds. The executor never reads a clock of its own; it asks
//! the device (`now_ns`), waits through the device (`poll`, `idle_until`), and
//! takes every timestamp from a [`Completion`]. That is what lets pauses advance
//! simulated time (so idle-time garbage collection happens) and keeps the
//! simulator free of the wall clock.

#![forbid(unsafe_code)]

use std::collections::BTreeMap;
use std::fmt;

use serde::{Deserialize, Serialize};

pub mod stats;
pub use stats::{DeviceStats, SimStats};

/// Nanoseconds on a device's clock (wall or simulated), since the device was opened.
pub type Nanos = u64;

/// What an IO does.
///
/// One byte whose value is its code in per-IO records, so a record is
/// written as its own bytes (`zerocopy::IntoBytes`).
#[derive(
    Clone,
    Copy,
    Debug,
    PartialEq,
    Eq,
    PartialOrd,
    Ord,
    Hash,
    Serialize,
    Deserialize,
    zerocopy::IntoBytes,
    zerocopy::Immutable,
)]
#[serde(rename_all = "lowercase")]
#[repr(u8)]
pub enum Mode {
    Read = 0,
    Write = 1,
    /// Discard (TRIM): an extension of uFLIP's read/write modes.
    Trim = 2,
}

impl Mode {
    /// The one-byte code used in per-IO records.
    pub fn code(self) -> u8 {
        self as u8
    }

    pub fn from_code(code: u8) -> Option<Mode> {
        match code {
            0 => Some(Mode::Read),
            1 => Some(Mode::Write),
            2 => Some(Mode::Trim),
            _ => None,
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            Mode::Read => "read",
            Mode::Write => "write",
            Mode::Trim => "trim",
        }
    }

    /// Whether the IO changes the device's contents.
    pub fn modifies(self) -> bool {
        !matches!(self, Mode::Read)
    }
}

impl fmt::Display for Mode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// One IO handed to a device. `tag` is chosen by the caller and comes back in
/// the matching [`Completion`]; the device never interprets it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct IoRequest {
    pub tag: u64,
    pub offset_bytes: u64,
    pub size_bytes: u32,
    pub mode: Mode,
}

/// The outcome of one IO, with both timestamps on the device's clock.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Completion {
    pub tag: u64,
    /// When the IO was handed to the device (for io_uring: the submitting syscall).
    pub submit_ns: Nanos,
    /// When the executor learned that it completed.
    pub complete_ns: Nanos,
    /// `None` on success, else the OS error number (or a simulated one).
    pub errno: Option<i32>,
}

impl Completion {
    pub fn latency_ns(&self) -> Nanos {
        self.complete_ns.saturating_sub(self.submit_ns)
    }
}

/// What kind of target a device is; recorded in the manifest.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum DeviceKind {
    File,
    BlockDevice,
    Simulated,
}

/// Which clock a device's timestamps are on.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ClockKind {
    /// CLOCK_MONOTONIC, nanoseconds since the device was opened.
    Wall,
    /// Simulated nanoseconds; no wall clock is read.
    Simulated,
}

/// Identity and geometry of a target, as recorded in a results manifest.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct DeviceInfo {
    /// What the user named (`/dev/loop3`, `./scratch.img`, `sim:ssd-m`).
    pub name: String,
    pub kind: DeviceKind,
    pub clock: ClockKind,
    pub size_bytes: u64,
    /// Offsets and sizes must be multiples of this (O_DIRECT alignment, or the
    /// simulator's sector size).
    pub logical_block_bytes: u32,
    /// Free-form identity: model, serial, firmware, rotational, scheduler,
    /// profile name and parameters... Sorted for stable manifests.
    pub identity: BTreeMap<String, String>,
}

/// An error raised by a device while running IOs.
#[derive(Debug)]
pub enum DeviceError {
    /// An OS call failed.
    Os { what: String, errno: i32 },
    /// The device cannot do what was asked (e.g. TRIM on a file system without hole punching).
    Unsupported(String),
    /// A request that the caller should never have made (misaligned, out of range).
    InvalidRequest(String),
    /// An internal invariant broke (the simulator's checker, a stall).
    Invariant(String),
}

impl fmt::Display for DeviceError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            DeviceError::Os { what, errno } => {
                let msg = std::io::Error::from_raw_os_error(*errno);
                write!(f, "{what}: {msg}")
            }
            DeviceError::Unsupported(s) => write!(f, "unsupported: {s}"),
            DeviceError::InvalidRequest(s) => write!(f, "invalid request: {s}"),
            DeviceError::Invariant(s) => write!(f, "invariant violated: {s}"),
        }
    }
}

impl std::error::Error for DeviceError {}

/// A target that runs IOs on its own clock.
///
/// Contract, relied on by the executor and checked by its tests:
/// - `submit` only queues; a request may not reach the device before the next
///   `poll` (so that io_uring can batch). At most `max_outstanding()` requests
///   may be submitted and not yet completed.
/// - `poll` issues everything queued, then returns once at least one
///   completion was appended to `out`, or the clock has reached `deadline_ns`,
///   whichever is first. With nothing outstanding it returns at once (after
///   waiting for the deadline if one is given). It never blocks forever.
/// - `idle_until` lets time pass with no new requests until `deadline_ns`
///   (spinning for short waits on a real device; background work on a
///   simulated one). Outstanding requests may complete meanwhile and are
///   returned by the next `poll`.
/// - Timestamps are monotonic and on the clock named by `info().clock`.
pub trait Device {
    fn info(&self) -> &DeviceInfo;

    /// Current time on the device's clock.
    fn now_ns(&self) -> Nanos;

    /// Most requests that may be outstanding at once.
    fn max_outstanding(&self) -> usize;

    fn submit(&mut self, req: IoRequest) -> Result<(), DeviceError>;

    fn poll(
        &mut self,
        deadline_ns: Option<Nanos>,
        out: &mut Vec<Completion>,
    ) -> Result<(), DeviceError>;

    fn idle_until(&mut self, deadline_ns: Nanos) -> Result<(), DeviceError>;

    /// When the work the device has scheduled (requests, write-backs,
    /// garbage collection) ends, if it knows: the simulator does, so a suite
    /// can wait until it is idle. Real devices return `None`.
    fn quiesce_at_ns(&self) -> Option<Nanos> {
        None
    }

    /// Device-specific accounting for the run summary (the simulator's flash
    /// operations by cause, write amplification...). Real devices count
    /// nothing beyond the IOs.
    fn stats(&self) -> DeviceStats {
        DeviceStats::None
    }

    /// Reset the device-specific accounting (between runs of one session).
    fn reset_stats(&mut self) {}

    /// Called by the executor at the start of every run, before it reads the
    /// run's start time. Real devices let the host settle here (the IO thread
    /// sleeps so that the scheduler stops treating it as busy; see
    /// flashlab-realdev's clock). The simulator has nothing to settle.
    fn begin_run(&mut self) {}

    /// A hint that a request at `offset_bytes` will be submitted soon: the
    /// simulator starts loading its map entries into the CPU cache (they are
    /// random accesses into maps far larger than it). It must change nothing
    /// a run observes; devices without such state ignore it.
    #[inline]
    fn upcoming(&self, offset_bytes: u64) {
        let _ = offset_bytes;
    }

    /// Turns the device's volatile write cache on or off (`hdparm -W` on a
    /// SATA disk; a profile setting on the simulator). Devices that cannot
    /// return `Unsupported`, saying why.
    fn set_write_cache(&mut self, enabled: bool) -> Result<(), DeviceError> {
        let _ = enabled;
        Err(DeviceError::Unsupported(format!(
            "{} has no write-cache switch",
            self.info().name
        )))
    }

    /// Make completed writes durable (fsync for files; a no-op for the simulator in benchmark mode).
    fn flush(&mut self) -> Result<(), DeviceError> {
        Ok(())
    }

    /// Rebuild the device from its own specification plus `overrides`
    /// (`key=value,...`), in its initial state: a suite that compares
    /// device designs (Budilovsky et al.'s chunk size and host hints) runs
    /// each configuration on a fresh device through one executor. Only the
    /// simulator can; the capacity must not change (the results directory
    /// describes one device size).
    fn reconfigure(&mut self, overrides: &str) -> Result<(), DeviceError> {
        Err(DeviceError::Unsupported(format!(
            "{} cannot be reconfigured to '{overrides}'; this suite needs a simulated device (--device sim:...)",
            self.info().name
        )))
    }
}

impl<D: Device + ?Sized> Device for Box<D> {
    fn info(&self) -> &DeviceInfo {
        (**self).info()
    }
    fn now_ns(&self) -> Nanos {
        (**self).now_ns()
    }
    fn max_outstanding(&self) -> usize {
        (**self).max_outstanding()
    }
    fn submit(&mut self, req: IoRequest) -> Result<(), DeviceError> {
        (**self).submit(req)
    }
    fn poll(
        &mut self,
        deadline_ns: Option<Nanos>,
        out: &mut Vec<Completion>,
    ) -> Result<(), DeviceError> {
        (**self).poll(deadline_ns, out)
    }
    fn idle_until(&mut self, deadline_ns: Nanos) -> Result<(), DeviceError> {
        (**self).idle_until(deadline_ns)
    }
    fn quiesce_at_ns(&self) -> Option<Nanos> {
        (**self).quiesce_at_ns()
    }
    fn stats(&self) -> DeviceStats {
        (**self).stats()
    }
    fn reset_stats(&mut self) {
        (**self).reset_stats()
    }
    fn begin_run(&mut self) {
        (**self).begin_run()
    }
    fn upcoming(&self, offset_bytes: u64) {
        (**self).upcoming(offset_bytes)
    }
    fn flush(&mut self) -> Result<(), DeviceError> {
        (**self).flush()
    }
    fn set_write_cache(&mut self, enabled: bool) -> Result<(), DeviceError> {
        (**self).set_write_cache(enabled)
    }
    fn reconfigure(&mut self, overrides: &str) -> Result<(), DeviceError> {
        (**self).reconfigure(overrides)
    }
}
