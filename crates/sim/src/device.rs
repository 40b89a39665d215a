//! [`SimDevice`]: the simulator behind the [`Device`] interface.
//!
//! Requests are queued by `submit` at the current simulated time and issued by
//! `poll`, in submission order. Issuing a request computes its completion time
//! analytically:
//!
//! 1. it waits for one of the `host.queue_depth` command slots;
//! 2. `host.command_overhead_ns` of controller time; with
//!    `host.controller_cores = n` on one of `n` controller cores, each
//!    processing one command at a time in arrival order (a command waits for a
//!    free core), else at once;
//! 3. read: each page comes from the write cache, the read-ahead buffer, or
//!    flash (through the FTL, on the die/channel resources, moving only the
//!    requested sectors over the channel); once the last page is in the
//!    controller the data crosses the host link's device-to-host direction, in
//!    the first idle gap from then on;
//!    write: the data crosses the host-to-device direction, then enters the
//!    cache (write-back placed at once) or, without a cache, is programmed
//!    before completion;
//!    trim: the FTL invalidates the whole pages covered (partial pages are ignored).
//!
//! The host link is one [`Timeline`] per direction with `host.duplex = full`
//! (PCIe: reads and writes do not wait for each other), one shared by both
//! with `half` (SATA, USB). Each request completes when its own data has
//! crossed, so requests complete out of submission order, as on NVMe and NCQ
//! devices. Completions wait in a heap ordered by (time, issue order); `poll`
//! advances the clock to the earliest and returns every completion due by then.
//! `idle_until` and a `poll` with nothing outstanding let time pass; once the
//! device has been idle for `gc.idle_threshold_ns`, the FTL cleans in the
//! background until the deadline.

use std::cmp::Reverse;
use std::collections::{BTreeMap, BinaryHeap};

use flashlab_device::{
    ClockKind, Completion, Device, DeviceError, DeviceInfo, DeviceKind, DeviceStats, IoRequest,
    Mode, Nanos, SimStats,
};

use crate::accounting::{Accounting, EraseSummary};
use crate::cache::{Wait, WriteCache};
use crate::config::{Duplex, SimConfig, UnmappedRead};
use crate::error::SimError;
use crate::ftl::{self, Ftl};
use crate::geometry::Geometry;
use crate::nand::NandTiming;
use crate::readahead::ReadAhead;
use crate::reorg::Reorg;
use crate::resources::Flash;
use crate::timeline::Timeline;

/// Device mode for `flashlab serve`: `issue_at`, checkpoints (src/persist.rs).
pub mod persist;

/// Sector size the simulator accepts (offsets and sizes are multiples of it).
pub const SECTOR_BYTES: u32 = 512;

/// The simulated SSD.
pub struct SimDevice {
    info: DeviceInfo,
    cfg: SimConfig,
    geo: Geometry,
    seed: u64,
    now: Nanos,
    max_outstanding: usize,
    ftl: Box<dyn Ftl>,
    flash: Flash,
    cache: Option<WriteCache>,
    readahead: Option<ReadAhead>,
    /// Internal reorganisation under sustained writes (`[reorg]`; `None`: off).
    reorg: Option<Reorg>,
    /// Submitted, not yet issued: (request, submit time).
    queued: Vec<(IoRequest, Nanos)>,
    /// Issued: (completion time, issue sequence, tag, submit time).
    inflight: BinaryHeap<Reverse<(Nanos, u64, u64, Nanos)>>,
    issue_seq: u64,
    /// Completion times of the commands occupying the device's queue slots.
    slots: BinaryHeap<Reverse<Nanos>>,
    /// When each controller core is free (`host.controller_cores`; empty: no limit).
    controller: Vec<Nanos>,
    /// Host link: `[host-to-device, device-to-host]`; with half duplex only
    /// the first is used, by both directions.
    link: [Timeline; 2],
    duplex: Duplex,
    /// Highest issue sequence completed so far (out-of-order accounting).
    completed_seq_max: Option<u64>,
    /// When the last issued request completes (the device is busy until then).
    busy_until: Nanos,
    host_ps_per_byte: u64,
    /// The cache manager's DRAM copy, nanoseconds per byte (0: free;
    /// `cache.dram_mb_per_s`).
    dram_ns_per_byte: f64,
    /// When the DRAM's last copy ends (one copy at a time).
    dram_free_at: Nanos,
    /// A host write-back's program (channel transfer + command + array
    /// program): it ends the write-back, GC or a read-modify-write read come before it.
    write_back_ns: Nanos,
    /// One page across a flash channel (`cache.ack_after_channel`).
    page_transfer_ns: Nanos,
    /// Pages acknowledged in their registers whose program no read has
    /// triggered yet (`cache.program_on_read`).
    registers_pending: bool,
    /// A register's program as the read that triggers it waits for it: command + array program.
    register_program_ns: Nanos,
    /// Buffered pages in the registers since they were last programmed
    /// (`cache.program_when_full`).
    registers_filled: u64,
    /// The registers' count: the cache's size in pages (`cache.program_when_full`).
    registers: u64,
    /// When the registers' program started by the last one filling ends:
    /// nothing that needs a register starts before (`cache.program_when_full`).
    registers_busy_until: Nanos,
    /// The logical page after the previous write's last (`cache.sequential_only`).
    next_write_lpn: u64,
    /// The pages (first, last) of the write the controller's buffer holds
    /// (`cache.hold_last_write`); None after a trim or before any write.
    held_write: Option<(u64, u64)>,
    /// `cache.hold_last_write` with the write-back cache off.
    hold_last_write: bool,
    /// Pages per mapping granule (`ftl.map_granule`; 1 = page-granular).
    granule_pages: u64,
    /// The latched failure, as reported: `simulator NAME: what went wrong`.
    failed: Option<String>,
}

impl SimDevice {
    /// Build a device from a validated configuration.
    pub fn new(
        cfg: SimConfig,
        name: String,
        seed: u64,
        max_outstanding: usize,
    ) -> Result<SimDevice, SimError> {
        cfg.validate()?;
        let geo = Geometry::derive(&cfg)?;
        let timing = NandTiming::resolve(&cfg.nand, geo.page_bytes);
        let mut flash = Flash::new(timing, &geo);
        flash.set_sched(&cfg.sched);
        flash.seed_variance(seed);
        let mut ftl = ftl::make(&cfg, &geo);
        if cfg.ftl.prefill {
            ftl::prefill(ftl.as_mut(), &timing, &geo)?;
        }
        let cache = cfg.cache.enabled.then(|| {
            WriteCache::new(
                (cfg.cache.size.0 / geo.page_bytes) as usize,
                (cfg.cache.writeback_window.0 / geo.page_bytes) as usize,
                cfg.cache.serve_reads,
            )
        });
        // a float: 51 200 MB/s is 0.0195 ns per byte, too fine for integer
        // picoseconds (20 ps would be 2.4 % slow)
        let dram_ns_per_byte = if cfg.cache.dram_mb_per_s > 0.0 {
            1000.0 / cfg.cache.dram_mb_per_s
        } else {
            0.0
        };
        let readahead = cfg.readahead.enabled.then(|| {
            ReadAhead::new(
                cfg.readahead.trigger,
                cfg.readahead.window.0.div_ceil(geo.page_bytes),
            )
        });
        let reorg = (!cfg.reorg.is_off()).then(|| {
            Reorg::new(
                &cfg.reorg,
                geo.units,
                cfg.geometry.pages_per_block,
                timing.erase_ns,
            )
        });
        let host_ps_per_byte = (1_000_000.0 / cfg.host.mb_per_s).round() as u64;
        let info = DeviceInfo {
            name,
            kind: DeviceKind::Simulated,
            clock: ClockKind::Simulated,
            size_bytes: geo.capacity_bytes(),
            logical_block_bytes: SECTOR_BYTES,
            identity: identity(&cfg, &geo, &timing, seed),
        };
        Ok(SimDevice {
            info,
            geo,
            seed,
            now: 0,
            max_outstanding: max_outstanding.max(1),
            ftl,
            flash,
            cache,
            readahead,
            reorg,
            queued: Vec::with_capacity(max_outstanding.max(1)),
            inflight: BinaryHeap::with_capacity(max_outstanding.max(1)),
            issue_seq: 0,
            slots: BinaryHeap::with_capacity(cfg.host.queue_depth as usize),
            controller: vec![0; cfg.host.controller_cores as usize],
            link: [Timeline::new(), Timeline::new()],
            duplex: cfg.host.effective_duplex(),
            completed_seq_max: None,
            busy_until: 0,
            host_ps_per_byte,
            dram_ns_per_byte,
            dram_free_at: 0,
            write_back_ns: timing.page_transfer_ns + timing.command_ns + timing.program_ns,
            page_transfer_ns: timing.page_transfer_ns,
            registers_pending: false,
            register_program_ns: timing.command_ns + timing.program_ns,
            registers_filled: 0,
            registers: (cfg.cache.size.0 / geo.page_bytes).max(1),
            registers_busy_until: 0,
            next_write_lpn: u64::MAX,
            held_write: None,
            hold_last_write: cfg.cache.hold_last_write && !cfg.cache.enabled,
            granule_pages: (cfg.ftl.map_granule.0 / geo.page_bytes).max(1),
            failed: None,
            cfg,
        })
    }

    /// The configuration the device runs.
    pub fn config(&self) -> &SimConfig {
        &self.cfg
    }

    pub fn geometry(&self) -> &Geometry {
        &self.geo
    }

    pub fn seed(&self) -> u64 {
        self.seed
    }

    /// All counters (read-only).
    pub fn accounting(&self) -> &Accounting {
        &self.flash.acct
    }

    /// Write amplification since the last `reset_stats`.
    pub fn write_amplification(&self) -> f64 {
        self.flash.acct.write_amplification(self.geo.page_bytes)
    }

    /// Erase-count distribution of all blocks (not reset by `reset_stats`).
    pub fn erase_summary(&self) -> EraseSummary {
        EraseSummary::from_counts(self.ftl.erase_counts())
    }

    /// The statistics since the last reset, as a run summary saves them.
    pub fn sim_stats(&self) -> SimStats {
        let mut s = self
            .flash
            .acct
            .to_stats(self.geo.page_bytes, &self.erase_summary());
        s.ftl = self.ftl.name().into();
        s.gc_policy = self.cfg.gc.policy.name().into();
        s.mapped_pages = self.ftl.mapped_pages();
        s.logical_pages = self.geo.logical_pages;
        s.unmapped_reads_read_flash =
            self.cfg.sched.unmapped_read == crate::config::UnmappedRead::Flash;
        if self.ftl.name() == "two-level" {
            // Budilovsky et al.'s metric, with the page accesses per
            // request their epsilon is read from (breakdown.rs).
            let t = NandTiming::resolve(&self.cfg.nand, self.geo.page_bytes);
            let chip = crate::breakdown::ChipTime::from_accounting(&self.flash.acct, &t);
            s.two_level_chip_time = Some(chip.into());
        }
        s
    }

    /// [`SimDevice::sim_stats`] as the JSON of a run summary's `device_stats`.
    pub fn stats_json(&self) -> Option<serde_json::Value> {
        serde_json::to_value(self.sim_stats()).ok()
    }

    /// Run the checker now.
    pub fn check(&self) -> Result<(), SimError> {
        self.ftl.check()
    }

    /// Whether logical page `lpn` (in flash pages) holds data.
    pub fn is_mapped(&self, lpn: u64) -> bool {
        self.ftl.is_mapped(lpn)
    }

    /// Erases placed by the internal reorganisation (`[reorg]`), and the
    /// post-TRIM erases it still owes; `None` when it is off.
    pub fn reorg_erases(&self) -> Option<(u64, u64)> {
        self.reorg.as_ref().map(|r| (r.erases(), r.owed_erases()))
    }

    pub fn mapped_pages(&self) -> u64 {
        self.ftl.mapped_pages()
    }

    /// When every scheduled piece of work (requests, cache write-backs, GC) has finished.
    /// `idle_until(dev.quiesce_at() + margin)` drains the device between experiments.
    pub fn quiesce_at(&self) -> Nanos {
        self.busy_until
            .max(self.flash.all_dies_free())
            .max(self.link[0].free_at())
            .max(self.link[1].free_at())
            .max(self.now)
    }

    /// Bytes of memory held by the simulator's data structures.
    pub fn memory_bytes(&self) -> usize {
        self.ftl.memory_bytes()
            + self.cache.as_ref().map_or(0, |c| c.memory_bytes())
            + self.inflight.capacity() * 32
            + self.queued.capacity() * 40
            + self.slots.capacity() * 8
            + self.controller.capacity() * 8
            + self.flash.memory_bytes()
            + self.link[0].memory_bytes()
            + self.link[1].memory_bytes()
    }

    #[inline]
    fn host_xfer(&self, bytes: u64) -> Nanos {
        bytes * self.host_ps_per_byte / 1000
    }

    fn fail<T>(&mut self, msg: SimError) -> Result<T, DeviceError> {
        let full = format!("simulator {}: {msg}", self.info.name);
        self.failed = Some(full.clone());
        Err(DeviceError::Invariant(full))
    }

    fn validate(&self, req: &IoRequest) -> Result<(), DeviceError> {
        let s = SECTOR_BYTES as u64;
        if req.size_bytes == 0
            || !(req.size_bytes as u64).is_multiple_of(s)
            || !req.offset_bytes.is_multiple_of(s)
        {
            return Err(DeviceError::InvalidRequest(format!(
                "offset {} and size {} must be non-zero multiples of {s} bytes",
                req.offset_bytes, req.size_bytes
            )));
        }
        if req
            .offset_bytes
            .checked_add(req.size_bytes as u64)
            .is_none_or(|end| end > self.info.size_bytes)
        {
            return Err(DeviceError::InvalidRequest(format!(
                "IO at {} of {} bytes goes past the end of the {}-byte simulated device",
                req.offset_bytes, req.size_bytes, self.info.size_bytes
            )));
        }
        Ok(())
    }

    /// Compute one request's completion; returns the completion time.
    /// Long: the stages of one request in order (command slot, controller, cache, FTL, dies and
    /// channels, host link), all advancing the same request times; the simulator's hot path.
    fn issue(&mut self, req: IoRequest, arrival: Nanos) -> Result<Nanos, SimError> {
        // the first page's map entry loads while the slot and link are placed
        let first_lpn = req.offset_bytes / self.geo.page_bytes;
        self.ftl.prefetch(first_lpn);
        if let Some(cache) = self.cache.as_ref() {
            cache.prefetch(first_lpn);
        }
        // 1. a command slot
        while let Some(&Reverse(t)) = self.slots.peek() {
            if t > arrival {
                break;
            }
            self.slots.pop();
        }
        let start = if self.slots.len() < self.cfg.host.queue_depth as usize {
            arrival
        } else {
            self.slots
                .pop()
                .map_or(arrival, |Reverse(t)| t.max(arrival))
        };
        // 2. controller overhead, on the core free first when the cores are limited
        let t_cmd = match self.controller.iter_mut().min() {
            Some(core) => {
                *core = start.max(*core) + self.cfg.host.command_overhead_ns;
                *core
            }
            None => start + self.cfg.host.command_overhead_ns,
        };
        self.flash.advance(arrival);
        self.ftl.begin_request();
        self.link[0].prune(arrival);
        self.link[1].prune(arrival);
        let d2h = match self.duplex {
            Duplex::Full => 1,
            Duplex::Half => 0,
        };
        let pb = self.geo.page_bytes;
        let first = req.offset_bytes / pb;
        let end_byte = req.offset_bytes + req.size_bytes as u64;
        let last = (end_byte - 1) / pb;
        let bytes = req.size_bytes as u64;
        let acct_i;
        let done = match req.mode {
            Mode::Read => {
                acct_i = 0;
                self.flash.acct.host_reads += 1;
                self.flash.acct.host_read_bytes += bytes;
                // a read needs its die's register: it waits for the
                // registers' program their filling started (program_when_full)
                let mut t_cmd = t_cmd.max(self.registers_busy_until);
                if self.registers_pending {
                    // the read makes the controller program the registers first
                    self.registers_pending = false;
                    self.registers_filled = 0;
                    self.flash.acct.register_programs_on_read += 1;
                    t_cmd += self.register_program_ns;
                }
                if self.cfg.cache.flush_on_read {
                    if let Some(cache) = self.cache.as_ref() {
                        // the controller writes its buffer back before it
                        // serves the read (cache.flush_on_read)
                        t_cmd = t_cmd.max(cache.writebacks_end());
                    }
                }
                let mut ready = t_cmd;
                let mut first_ready = Nanos::MAX;
                for lpn in first..=last {
                    let page_start = lpn * pb;
                    let lo = req.offset_bytes.max(page_start);
                    let hi = end_byte.min(page_start + pb);
                    let r = self.read_page(lpn, hi - lo, t_cmd)?;
                    ready = ready.max(r);
                    first_ready = first_ready.min(r);
                }
                if let Some(ra) = self.readahead.as_mut() {
                    ra.observe(first, last, t_cmd, self.ftl.as_mut(), &mut self.flash)?;
                }
                let dur = self.host_xfer(bytes);
                // Cut-through: stream from the first page on, but never end
                // before the last page is in and has crossed itself.
                let from = if self.cfg.host.cut_through && first < last {
                    let tail = ready + self.host_xfer(bytes.min(pb));
                    first_ready.max(tail.saturating_sub(dur))
                } else {
                    ready
                };
                self.link[d2h].place(from, dur) + dur
            }
            Mode::Write => {
                acct_i = 1;
                self.flash.acct.host_writes += 1;
                self.flash.acct.host_write_bytes += bytes;
                if let Some(reorg) = self.reorg.as_mut() {
                    reorg.on_write(arrival, &mut self.flash);
                }
                if let Some(ra) = self.readahead.as_mut() {
                    ra.invalidate(first, last);
                }
                let dur = self.host_xfer(bytes);
                let mut xe = self.link[0].place(t_cmd, dur) + dur;
                if self.dram_ns_per_byte > 0.0 && self.cache.is_some() {
                    // store and forward: the data is copied into the cache's
                    // DRAM once it has crossed the link, one copy at a time
                    let copy = self.cfg.cache.dram_access_ns
                        + (bytes as f64 * self.dram_ns_per_byte).round() as u64;
                    xe = xe.max(self.dram_free_at) + copy;
                    self.dram_free_at = xe;
                }
                let mut done = xe;
                // host.write_cut_through: where the link's transfer of this
                // request starts (None: store-and-forward, every page at `xe`)
                let stream_from = (self.cfg.host.write_cut_through
                    && !(self.dram_ns_per_byte > 0.0 && self.cache.is_some()))
                .then(|| xe - dur);
                // Large writes bypass the cache (cache.bypass_above).
                let bypass =
                    self.cfg.cache.bypass_above.0 > 0 && bytes > self.cfg.cache.bypass_above.0;
                // A write covering a mapping granule in part moves the whole
                // granule (ftl.map_granule): its other pages are read, then
                // programmed with the write's own.
                let g = self.granule_pages;
                let (w_first, w_last) = if g > 1 {
                    (
                        first - first % g,
                        (last - last % g + g - 1).min(self.geo.logical_pages - 1),
                    )
                } else {
                    (first, last)
                };
                // The controller's buffer holds the previous write until a
                // write to other pages displaces it (`cache.hold_last_write`;
                // the held write's program was charged when it arrived: no
                // asynchronous work). A write to exactly its pages replaces
                // the held data and is never programmed.
                let held = self.hold_last_write && self.held_write == Some((first, last));
                if self.hold_last_write {
                    self.held_write = Some((first, last));
                }
                let (w_first, w_last) = if held {
                    self.flash.acct.cache_absorbed_pages += last - first + 1;
                    // an empty range: nothing reaches the FTL
                    (1, 0)
                } else {
                    self.ftl.begin_write(w_last - w_first + 1);
                    (w_first, w_last)
                };
                let continues = first == self.next_write_lpn;
                self.next_write_lpn = last + 1;
                for lpn in w_first..=w_last {
                    let page_start = lpn * pb;
                    let own = (first..=last).contains(&lpn);
                    // a granule page read whole is written whole
                    let partial =
                        own && (req.offset_bytes > page_start || end_byte < page_start + pb);
                    let xe = if !own {
                        if !self.ftl.is_mapped(lpn) {
                            // no data to keep: nothing to read or rewrite
                            continue;
                        }
                        self.flash.acct.rmw_reads += 1;
                        self.ftl.read(lpn, t_cmd, &mut self.flash)?.max(xe)
                    } else if let Some(link_start) = stream_from {
                        // cut-through: the page may start across the flash bus
                        // once its first bytes are in, and must not finish
                        // crossing it before its last byte has arrived
                        let lo = req.offset_bytes.max(page_start) - req.offset_bytes;
                        let hi = end_byte.min(page_start + pb) - req.offset_bytes;
                        let bus = self.page_transfer_ns * (hi - lo) / pb;
                        (link_start + self.host_xfer(lo))
                            .max((link_start + self.host_xfer(hi)).saturating_sub(bus))
                    } else {
                        xe
                    };
                    // a page crosses into a register only once the registers'
                    // program its predecessors' filling started has ended
                    // (cache.program_when_full; 0 otherwise)
                    let xe = if own {
                        xe.max(self.registers_busy_until)
                    } else {
                        xe
                    };
                    // A sequential-only buffer takes a page that follows the one
                    // written before it: every page of a write but its first, and
                    // the first if the write continues the previous one.
                    let direct =
                        bypass || (self.cfg.cache.sequential_only && lpn == first && !continues);
                    let cache = if direct { None } else { self.cache.as_mut() };
                    let d = match cache {
                        Some(cache)
                            if self.cfg.cache.absorb_rewrites
                                && cache.absorbs(lpn, xe, self.write_back_ns)
                                && self.ftl.is_mapped(lpn) =>
                        {
                            // the pending write-back will program the new data
                            self.flash.acct.cache_write_pages += 1;
                            self.flash.acct.cache_absorbed_pages += 1;
                            xe
                        }
                        Some(cache) => {
                            let (entry, wait) = cache.admit(xe);
                            match wait {
                                Wait::None => {}
                                Wait::Full => self.flash.acct.cache_full_waits += 1,
                                Wait::Window => self.flash.acct.cache_window_waits += 1,
                            }
                            self.flash.acct.cache_write_pages += 1;
                            self.flash.foreground_until = 0;
                            let release = self.ftl.write(lpn, partial, entry, &mut self.flash)?;
                            // the FTL's foreground work for the page
                            // (`gc.incremental_synchronous`) before the write is done
                            let entry = entry.max(std::mem::take(&mut self.flash.foreground_until));
                            cache.insert(lpn, release);
                            if self.cfg.cache.ack_after_channel {
                                self.registers_pending |= self.cfg.cache.program_on_read;
                                // in the register once the transfer before its
                                // program has ended (after any flush the FTL
                                // makes it wait for)
                                let in_register = (entry + self.page_transfer_ns)
                                    .max(release.saturating_sub(self.flash.last_program_ns()));
                                // only one-page writes wait to fill the
                                // registers (see CacheConfig::program_when_full)
                                if self.cfg.cache.program_when_full && first == last {
                                    self.registers_filled += 1;
                                    if self.registers_filled >= self.registers {
                                        // Chen et al. 5.3: "When the registers are
                                        // full, a page program confirm command is
                                        // issued": all program at once
                                        self.registers_filled = 0;
                                        self.registers_pending = false;
                                        self.flash.acct.register_programs_when_full += 1;
                                        self.registers_busy_until =
                                            in_register + self.register_program_ns;
                                    }
                                }
                                in_register
                            } else {
                                entry
                            }
                        }
                        None => self.ftl.write(lpn, partial, xe, &mut self.flash)?,
                    };
                    done = done.max(d);
                }
                done
            }
            Mode::Trim => {
                self.held_write = None;
                acct_i = 2;
                self.flash.acct.host_trims += 1;
                self.flash.acct.host_trim_bytes += bytes;
                if let Some(ra) = self.readahead.as_mut() {
                    ra.invalidate(first, last);
                }
                let whole_first = req.offset_bytes.div_ceil(pb);
                let whole_end = end_byte / pb;
                for lpn in whole_first..whole_end {
                    if let Some(cache) = self.cache.as_mut() {
                        cache.discard(lpn);
                    }
                    if let Some(reorg) = self.reorg.as_mut() {
                        if self.ftl.is_mapped(lpn) {
                            reorg.trimmed(1);
                        }
                    }
                    self.ftl.trim(lpn, t_cmd, &mut self.flash)?;
                }
                t_cmd
            }
        };
        self.slots.push(Reverse(done));
        let latency = done - arrival;
        self.flash.acct.latency[acct_i].add(latency);
        if latency > self.cfg.check.stall_ns {
            return Err(SimError::Stall(format!(
                "request tag {} ({} {} bytes at {}) would take {:.3} s of simulated time (limit check.stall_ns = {} ns); the device cannot make progress",
                req.tag,
                req.mode,
                req.size_bytes,
                req.offset_bytes,
                latency as f64 / 1e9,
                self.cfg.check.stall_ns
            )));
        }
        Ok(done)
    }

    /// Read `bytes` of logical page `lpn` (a partial page moves only those
    /// sectors over the channel).
    #[inline]
    fn read_page(&mut self, lpn: u64, bytes: u64, at: Nanos) -> Result<Nanos, SimError> {
        if let Some(cache) = self.cache.as_ref() {
            if let Some(release) = cache.lookup(lpn, at) {
                if cache.serve_reads {
                    self.flash.acct.cache_read_hits += 1;
                    return Ok(at);
                }
                return self.flash_read(lpn, bytes, release);
            }
        }
        if let Some(ra) = self.readahead.as_ref() {
            if let Some(t) = ra.lookup(lpn) {
                self.flash.acct.readahead_hits += 1;
                return Ok(t.max(at));
            }
        }
        self.flash_read(lpn, bytes, at)
    }

    #[inline]
    fn flash_read(&mut self, lpn: u64, bytes: u64, at: Nanos) -> Result<Nanos, SimError> {
        if self.cfg.sched.unmapped_read == UnmappedRead::Flash && !self.ftl.is_mapped(lpn) {
            // MQSim's convention: a never-written page still costs a flash read,
            // on the die it would stripe to.
            self.flash.acct.unmapped_reads += 1;
            self.flash.next_read_bytes = bytes;
            let unit = (lpn % self.geo.units as u64) as u32;
            return Ok(self.flash.read(unit, crate::Cause::Host, at));
        }
        self.flash.next_read_bytes = if bytes < self.geo.page_bytes {
            bytes
        } else {
            0
        };
        let r = self.ftl.read(lpn, at, &mut self.flash);
        self.flash.next_read_bytes = 0;
        r
    }

    fn issue_queued(&mut self) -> Result<(), DeviceError> {
        if self.queued.is_empty() {
            return Ok(());
        }
        for i in 0..self.queued.len() {
            let (req, submit) = self.queued[i];
            match self.issue(req, submit) {
                Ok(done) => {
                    self.busy_until = self.busy_until.max(done);
                    self.inflight
                        .push(Reverse((done, self.issue_seq, req.tag, submit)));
                    self.issue_seq += 1;
                }
                Err(e) => {
                    self.queued.drain(..=i);
                    return self.fail(e);
                }
            }
        }
        self.queued.clear();
        Ok(())
    }

    /// `poll` with one request queued and none in flight (queue depth 1):
    /// the same steps as issuing it into `inflight` and popping it again,
    /// without the heap, whose entries were written and read back with
    /// different widths (a store-forwarding stall per IO).
    fn poll_one(
        &mut self,
        deadline_ns: Option<Nanos>,
        out: &mut Vec<Completion>,
    ) -> Result<(), DeviceError> {
        let (req, submit) = self.queued[0];
        self.queued.clear();
        let done = match self.issue(req, submit) {
            Ok(done) => done,
            Err(e) => return self.fail(e),
        };
        self.busy_until = self.busy_until.max(done);
        let seq = self.issue_seq;
        self.issue_seq += 1;
        if let Some(d) = deadline_ns {
            if d < done {
                self.inflight.push(Reverse((done, seq, req.tag, submit)));
                self.now = self.now.max(d);
                return Ok(());
            }
        }
        self.now = self.now.max(done);
        match self.completed_seq_max {
            Some(m) if seq < m => self.flash.acct.out_of_order_completions += 1,
            _ => self.completed_seq_max = Some(seq),
        }
        out.push(Completion {
            tag: req.tag,
            submit_ns: submit,
            complete_ns: done,
            errno: None,
        });
        Ok(())
    }

    /// Let time pass to `deadline` with no new requests: background work once idle.
    fn pass_time(&mut self, deadline: Nanos) -> Result<(), DeviceError> {
        if deadline <= self.now {
            return Ok(());
        }
        let idle_from = self.busy_until.max(self.now) + self.cfg.gc.idle_threshold_ns;
        if idle_from < deadline {
            if let Err(e) = self.ftl.idle(idle_from, deadline, &mut self.flash) {
                return self.fail(e);
            }
        }
        self.now = deadline;
        Ok(())
    }
}

impl Device for SimDevice {
    fn info(&self) -> &DeviceInfo {
        &self.info
    }

    fn now_ns(&self) -> Nanos {
        self.now
    }

    fn max_outstanding(&self) -> usize {
        self.max_outstanding
    }

    fn submit(&mut self, req: IoRequest) -> Result<(), DeviceError> {
        if let Some(f) = &self.failed {
            return Err(DeviceError::Invariant(f.clone()));
        }
        if self.queued.len() + self.inflight.len() >= self.max_outstanding {
            return Err(DeviceError::InvalidRequest(format!(
                "more than {} requests outstanding; poll for completions first",
                self.max_outstanding
            )));
        }
        self.validate(&req)?;
        self.queued.push((req, self.now));
        Ok(())
    }

    fn poll(
        &mut self,
        deadline_ns: Option<Nanos>,
        out: &mut Vec<Completion>,
    ) -> Result<(), DeviceError> {
        if let Some(f) = &self.failed {
            return Err(DeviceError::Invariant(f.clone()));
        }
        if self.queued.len() == 1 && self.inflight.is_empty() {
            return self.poll_one(deadline_ns, out);
        }
        self.issue_queued()?;
        let Some(&Reverse((first, ..))) = self.inflight.peek() else {
            if let Some(d) = deadline_ns {
                self.pass_time(d)?;
            }
            return Ok(());
        };
        if let Some(d) = deadline_ns {
            if d < first {
                self.now = self.now.max(d);
                return Ok(());
            }
        }
        self.now = self.now.max(first);
        while let Some(&Reverse((t, seq, tag, submit))) = self.inflight.peek() {
            if t > self.now {
                break;
            }
            self.inflight.pop();
            // Out of order: a request submitted later has already completed.
            match self.completed_seq_max {
                Some(m) if seq < m => self.flash.acct.out_of_order_completions += 1,
                _ => self.completed_seq_max = Some(seq),
            }
            out.push(Completion {
                tag,
                submit_ns: submit,
                complete_ns: t,
                errno: None,
            });
        }
        Ok(())
    }

    fn idle_until(&mut self, deadline_ns: Nanos) -> Result<(), DeviceError> {
        if let Some(f) = &self.failed {
            return Err(DeviceError::Invariant(f.clone()));
        }
        self.issue_queued()?;
        self.pass_time(deadline_ns)
    }

    fn quiesce_at_ns(&self) -> Option<Nanos> {
        Some(self.quiesce_at())
    }

    #[inline]
    fn upcoming(&self, offset_bytes: u64) {
        let lpn = offset_bytes / self.geo.page_bytes;
        self.ftl.prefetch(lpn);
        if let Some(cache) = self.cache.as_ref() {
            cache.prefetch(lpn);
        }
    }

    fn stats(&self) -> DeviceStats {
        DeviceStats::Sim(Box::new(self.sim_stats()))
    }

    fn reset_stats(&mut self) {
        self.flash.acct = Accounting::default();
    }

    /// A fresh device of this one's spec (its name, `sim:SPEC`) plus
    /// `overrides`, same seed and queue limit, in its initial state
    /// (prefilled if the spec says so). The name and identity stay the
    /// original's; a change of capacity is refused.
    fn reconfigure(&mut self, overrides: &str) -> Result<(), DeviceError> {
        let base = self
            .info
            .name
            .strip_prefix("sim:")
            .unwrap_or(&self.info.name);
        let spec = if overrides.trim().is_empty() {
            base.to_string()
        } else {
            format!("{base},{overrides}")
        };
        let cfg =
            crate::resolve_spec(&spec).map_err(|e| DeviceError::InvalidRequest(e.to_string()))?;
        let fresh = SimDevice::new(cfg, self.info.name.clone(), self.seed, self.max_outstanding)
            .map_err(|e| DeviceError::InvalidRequest(e.to_string()))?;
        if fresh.info.size_bytes != self.info.size_bytes {
            return Err(DeviceError::InvalidRequest(format!(
                "reconfiguring {} with '{overrides}' changes its capacity ({} -> {} B); a suite runs on one device size",
                self.info.name, self.info.size_bytes, fresh.info.size_bytes
            )));
        }
        let info = std::mem::replace(&mut self.info, fresh.info.clone());
        *self = fresh;
        self.info = info;
        Ok(())
    }

    /// Switches the DRAM write-back cache at run time (`hdparm -W` on the
    /// simulator; Chen et al.'s Figure 5). Turning it off drains it: the
    /// switch returns when the last cached page's write-back has ended (the
    /// clock advances to then), and later writes complete only once
    /// programmed. Turning it on creates an empty cache of `cache.size`
    /// (the profile's size, even if the profile starts with it off). The
    /// profile (`config()`, identity, checkpoints) is unchanged: a device
    /// restored from a checkpoint has the profile's cache setting.
    fn set_write_cache(&mut self, enabled: bool) -> Result<(), DeviceError> {
        if let Some(f) = &self.failed {
            return Err(DeviceError::Invariant(f.clone()));
        }
        if enabled == self.cache.is_some() {
            return Ok(());
        }
        self.issue_queued()?;
        if enabled {
            self.cache = Some(WriteCache::new(
                (self.cfg.cache.size.0 / self.geo.page_bytes) as usize,
                (self.cfg.cache.writeback_window.0 / self.geo.page_bytes) as usize,
                self.cfg.cache.serve_reads,
            ));
        } else if let Some(cache) = self.cache.take() {
            let drained = cache.drained_at();
            self.busy_until = self.busy_until.max(drained);
            self.now = self.now.max(drained);
        }
        Ok(())
    }
}

fn identity(
    cfg: &SimConfig,
    geo: &Geometry,
    t: &NandTiming,
    seed: u64,
) -> BTreeMap<String, String> {
    let mut m = BTreeMap::new();
    let mut put = |k: &str, v: String| {
        m.insert(k.to_string(), v);
    };
    put("profile", cfg.name.clone());
    put("description", cfg.description.clone());
    put("ftl", cfg.ftl.kind.name().to_string());
    put("gc_policy", cfg.gc.policy.name().to_string());
    put("gc_background", cfg.gc.background.to_string());
    put("channels", geo.channels.to_string());
    put("dies", geo.units.to_string());
    put("planes_per_die", geo.planes_per_die.to_string());
    put("blocks_per_die", geo.blocks_per_unit.to_string());
    put("pages_per_block", geo.pages_per_block.to_string());
    put("page_bytes", geo.page_bytes.to_string());
    put("logical_pages", geo.logical_pages.to_string());
    put("physical_pages", geo.physical_pages.to_string());
    put(
        "over_provisioning",
        format!("{}", cfg.geometry.over_provisioning),
    );
    put(
        "over_provisioning_effective",
        format!("{:.4}", geo.effective_op()),
    );
    put("cell", t.cell.name().to_string());
    put("read_ns", t.read_ns.to_string());
    put("program_ns", t.program_ns.to_string());
    put("erase_ns", t.erase_ns.to_string());
    put("page_transfer_ns", t.page_transfer_ns.to_string());
    put("copyback", t.copyback.to_string());
    // only when on, so other devices' identities stay as they were
    let n = &cfg.nand;
    if !n.program_ns_by_page_kind.is_empty() {
        put(
            "program_ns_by_page_kind",
            format!("{:?}", n.program_ns_by_page_kind),
        );
    }
    if n.page_kind_order != crate::config::PageKindOrder::Cyclic {
        put(
            "page_kind_order",
            format!("{:?}", n.page_kind_order).to_lowercase(),
        );
    }
    if !n.read_ns_by_page_kind.is_empty() {
        put(
            "read_ns_by_page_kind",
            format!(
                "{:?}",
                t.read_kind_ns[..n.read_ns_by_page_kind.len().min(4)].to_vec()
            ),
        );
    }
    if n.program_spread != 0.0 {
        put("program_spread", format!("{}", n.program_spread));
    }
    if n.erase_spread != 0.0 {
        put("erase_spread", format!("{}", n.erase_spread));
    }
    if n.read_retry_probability != 0.0 {
        put(
            "read_retry",
            format!(
                "probability {}, {} ns each, at most {}",
                n.read_retry_probability, t.read_retry_ns, t.read_retry_max
            ),
        );
    }
    if t.multi_plane {
        // only when on, so other devices' identities stay as they were
        put(
            "multi_plane",
            format!(
                "{} planes, same page {}, {} ns per further plane",
                geo.planes_per_die, t.multi_plane_same_page, t.multi_plane_ns
            ),
        );
    }
    put("host_mb_per_s", format!("{}", cfg.host.mb_per_s));
    put(
        "host_command_overhead_ns",
        cfg.host.command_overhead_ns.to_string(),
    );
    put("host_queue_depth", cfg.host.queue_depth.to_string());
    if cfg.host.controller_cores > 0 {
        // only when set, so other devices' identities stay as they were
        put(
            "host_controller_cores",
            cfg.host.controller_cores.to_string(),
        );
    }
    put(
        "cache",
        if cfg.cache.enabled {
            cfg.cache.size.to_string()
        } else {
            "off".into()
        },
    );
    put(
        "readahead",
        if cfg.readahead.enabled {
            format!(
                "trigger {} window {}",
                cfg.readahead.trigger, cfg.readahead.window
            )
        } else {
            "off".into()
        },
    );
    put(
        "wear_static_threshold",
        cfg.wear.static_threshold.to_string(),
    );
    put("check", cfg.check.enabled.to_string());
    put("seed", seed.to_string());
    m
}
