//! Device mode: what `flashlab serve` needs from the simulator beyond the
//! [`flashlab_device::Device`] interface.
//!
//! - [`SimDevice::issue_at`]: issue one request at a given simulated arrival
//!   time and learn its completion time at once (the server applies requests
//!   one by one, in arrival order, from several connections).
//! - [`SimDevice::checkpoint`] / [`SimDevice::restore`]: the whole flash state
//!   (forward and reverse maps, block states, valid and erase counts, bucket
//!   lists, free pools, open blocks, GC policy state, wear-levelling counters)
//!   and the accounting, as bytes. A checkpoint is a *power-cycle boundary*:
//!   the restored device starts with all dies, channels and the host link idle
//!   at the time the old one would have quiesced, an empty (drained) DRAM
//!   cache, no read-ahead, no held last write (`cache.hold_last_write`: its
//!   program was already charged when it arrived) and no pending map flush
//!   (`ftl.sync`: its end lies before the quiesce time). The server therefore replaces its live device by
//!   `restore(checkpoint())` whenever it checkpoints, so a device recovered
//!   from (checkpoint + log of later requests) is exactly the device that was
//!   running (the crash-recovery tests compare the two byte for byte).
//!
//! This module is a child of `device`, so it can reach `SimDevice`'s private
//! fields; the FTL serialises itself through `Ftl::save_state` /
//! `Ftl::load_state` with the primitives of [`crate::codec`].
//!
//! Format: little-endian, `FLSIMCK1`, a format version, the device identity
//! (profile parameters and seed, as JSON) which must match on restore, the
//! simulated time, the accounting, the FTL's state, and a 64-bit checksum of
//! everything before it.

use flashlab_device::{DeviceError, IoRequest, Nanos};

use super::SimDevice;
use crate::accounting::Accounting;
pub use crate::codec::checksum;
use crate::codec::{Dec, Enc};
use crate::config::SimConfig;
use crate::error::{CheckpointError, SimError};

const MAGIC: &[u8; 8] = b"FLSIMCK1";
const VERSION: u32 = 1;

fn put_accounting(e: &mut Enc, a: &Accounting) {
    for v in [
        a.host_reads,
        a.host_writes,
        a.host_trims,
        a.host_read_bytes,
        a.host_write_bytes,
        a.host_trim_bytes,
    ] {
        e.u64(v);
    }
    for l in &a.latency {
        e.u64(l.count);
        e.u64(l.sum_ns);
        e.u64(l.max_ns);
    }
    for arr in [
        &a.flash_reads,
        &a.flash_programs,
        &a.flash_erases,
        &a.read_ns,
        &a.program_ns,
        &a.erase_ns,
        &a.bus_ns,
    ] {
        for &v in arr.iter() {
            e.u64(v);
        }
    }
    for v in [
        a.cache_write_pages,
        a.cache_read_hits,
        a.cache_full_waits,
        a.readahead_pages,
        a.readahead_hits,
        a.unmapped_reads,
        a.rmw_reads,
        a.gc_foreground,
        a.gc_background,
        a.gc_relocated_pages,
        a.wl_moves,
        a.wl_relocated_pages,
    ] {
        e.u64(v);
    }
}

fn get_accounting(d: &mut Dec) -> Result<Accounting, SimError> {
    let mut a = Accounting::default();
    for v in [
        &mut a.host_reads,
        &mut a.host_writes,
        &mut a.host_trims,
        &mut a.host_read_bytes,
        &mut a.host_write_bytes,
        &mut a.host_trim_bytes,
    ] {
        *v = d.u64()?;
    }
    for l in a.latency.iter_mut() {
        l.count = d.u64()?;
        l.sum_ns = d.u64()?;
        l.max_ns = d.u64()?;
    }
    for arr in [
        &mut a.flash_reads,
        &mut a.flash_programs,
        &mut a.flash_erases,
        &mut a.read_ns,
        &mut a.program_ns,
        &mut a.erase_ns,
        &mut a.bus_ns,
    ] {
        for v in arr.iter_mut() {
            *v = d.u64()?;
        }
    }
    for v in [
        &mut a.cache_write_pages,
        &mut a.cache_read_hits,
        &mut a.cache_full_waits,
        &mut a.readahead_pages,
        &mut a.readahead_hits,
        &mut a.unmapped_reads,
        &mut a.rmw_reads,
        &mut a.gc_foreground,
        &mut a.gc_background,
        &mut a.gc_relocated_pages,
        &mut a.wl_moves,
        &mut a.wl_relocated_pages,
    ] {
        *v = d.u64()?;
    }
    Ok(a)
}

impl SimDevice {
    /// Device mode: issue `req` arriving at simulated time `arrival_ns` (the
    /// clock first advances to it, so idle-time work happens; an arrival in the
    /// past is taken as now) and return its completion time. Requests queued
    /// with `submit` are issued first. The device stays usable through the
    /// `Device` interface; nothing is added to the completion heap.
    pub fn issue_at(&mut self, req: IoRequest, arrival_ns: Nanos) -> Result<Nanos, DeviceError> {
        if let Some(f) = &self.failed {
            return Err(DeviceError::Invariant(f.clone()));
        }
        self.validate(&req)?;
        self.issue_queued()?;
        self.pass_time(arrival_ns)?;
        match self.issue(req, self.now) {
            Ok(done) => {
                self.busy_until = self.busy_until.max(done);
                Ok(done)
            }
            Err(e) => self.fail(e),
        }
    }

    /// Free (erased) blocks over all dies, if the FTL reports them.
    pub fn free_blocks(&self) -> Option<u64> {
        self.ftl.free_blocks()
    }

    /// Whether this device's FTL supports checkpoints.
    pub fn can_checkpoint(&self) -> bool {
        let mut e = Enc::default();
        self.ftl.save_state(&mut e).is_ok()
    }

    /// The device's identity (profile parameters and seed) as one JSON line:
    /// a checkpoint only restores onto a device with the same identity.
    pub fn identity_json(&self) -> String {
        serde_json::to_string(&self.info.identity).unwrap_or_default()
    }

    /// Serialise the whole flash state and the accounting. Requests submitted
    /// through `submit` and not yet polled are refused (device mode issues
    /// everything with `issue_at`). See the module documentation for what a
    /// restored device keeps and what it drops.
    pub fn checkpoint(&self) -> Result<Vec<u8>, SimError> {
        if !self.queued.is_empty() || !self.inflight.is_empty() {
            return Err(CheckpointError::Outstanding.into());
        }
        if let Some(f) = &self.failed {
            return Err(CheckpointError::Failed(f.clone()).into());
        }
        let mut e = Enc::default();
        e.buf.extend_from_slice(MAGIC);
        e.u32(VERSION);
        e.bytes(self.identity_json().as_bytes());
        e.u64(self.quiesce_at());
        put_accounting(&mut e, &self.flash.acct);
        self.ftl.save_state(&mut e)?;
        let sum = checksum(&e.buf);
        e.u64(sum);
        Ok(e.buf)
    }

    /// Build a device from `cfg` (as [`SimDevice::new`]) and load a checkpoint
    /// made by [`SimDevice::checkpoint`] on a device with the same identity.
    pub fn restore(
        cfg: SimConfig,
        name: String,
        seed: u64,
        max_outstanding: usize,
        data: &[u8],
    ) -> Result<SimDevice, SimError> {
        let mut dev = SimDevice::new(cfg, name, seed, max_outstanding)?;
        if data.len() < MAGIC.len() + 12 || &data[..8] != MAGIC {
            return Err(CheckpointError::BadMagic.into());
        }
        let (body, tail) = data.split_at(data.len() - 8);
        if checksum(body) != u64::from_le_bytes(tail.try_into().unwrap()) {
            return Err(CheckpointError::ChecksumMismatch.into());
        }
        let mut d = Dec::new(&body[8..]);
        let v = d.u32()?;
        if v != VERSION {
            return Err(CheckpointError::Version {
                found: v,
                supported: VERSION,
            }
            .into());
        }
        let ident = d.bytes()?;
        if ident != dev.identity_json().as_bytes() {
            return Err(CheckpointError::DifferentDevice {
                identity: String::from_utf8_lossy(ident).into_owned(),
            }
            .into());
        }
        dev.now = d.u64()?;
        // service-time draws go on from a stream of their own after each
        // power cycle (the checkpoint keeps no generator state): a function
        // of the seed and the restored time, so restore(checkpoint()) and a
        // recovery from the same checkpoint draw the same times
        dev.flash
            .seed_variance(flashlab_pattern::rng::derive_seed(seed, dev.now));
        dev.flash.acct = get_accounting(&mut d)?;
        dev.ftl.load_state(&mut d)?;
        if !d.done() {
            return Err(CheckpointError::TrailingBytes.into());
        }
        dev.ftl
            .check()
            .map_err(|e| CheckpointError::Inconsistent(Box::new(e)))?;
        Ok(dev)
    }
}
