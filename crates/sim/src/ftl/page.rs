//! The page-mapped FTL: every logical page maps to any physical page.
//!
//! - Maps: forward `l2p: Vec<u32>` and reverse `p2l: Vec<u32>` (`NONE` = unmapped /
//!   never written since the erase), plus the [`BlockTable`]: about 8.3 bytes per
//!   logical page at 7 % over-provisioning. The map lives in DRAM, so there is no
//!   mapping traffic (`Cause::Mapping` stays zero).
//! - Invalidation is lazy: a rewrite or TRIM leaves the old page's `p2l` entry
//!   in place (clearing it was a random write into a map larger than the CPU's
//!   caches on every host write); a physical page is valid exactly while the
//!   forward map points back at it ([`PageFtl::lpn_at`]), and a block's
//!   entries are cleared when it is reclaimed.
//! - Allocation: log-structured. Host writes are striped round-robin over the
//!   dies (or, with `ftl.allocation = "static-cwdp"`, MQSim's static
//!   allocation, go to the die their logical page number selects:
//!   [`PageAllocation::StaticCwdp`]); each die has one open host block and one open GC block (relocated,
//!   colder data is kept apart from fresh host data), both filled in page order.
//!   With multi-plane operations (`nand.multi_plane`) a die has one open host
//!   block and one open GC block per plane, and its writes rotate over the
//!   planes at the same page index (page 0 of each plane, then page 1...), so
//!   that consecutive writes to a die can form a multi-plane program; a plane
//!   with no free block borrows one from another plane (those pages then do not pair).
//!   A free block is taken with the fewest erases first (erase-count-aware
//!   allocation) or oldest-freed first.
//! - Garbage collection per die: foreground when the die's free blocks fall
//!   below `gc.fg_low_watermark` as a host block is opened; background in idle
//!   time up to `gc.bg_high_watermark`. The victim comes from the configured
//!   [`VictimPolicy`]; its valid pages are copied inside the die (copy-back)
//!   and it is erased. `gc.reserve_blocks` free blocks are never given to host writes.
//!   With `gc.incremental` (lazy cleaning, Chen et al. 5.8) a die below the
//!   watermark cleans in steps instead: every host write first relocates its
//!   share of the victim's valid pages ([`PageFtl::clean_step`]).
//! - Static wear levelling: every `wear.check_interval` erases on a die, if the
//!   die's max - min erase count exceeds `wear.static_threshold`, the closed block
//!   with the fewest erases (cold data) is relocated and its block freed for hot data.
//! - TRIM invalidates the page.
//! - Checker mode (`check.enabled`) runs [`checker`] after every reclaimed block.

use std::cmp::Reverse;
use std::collections::BinaryHeap;

use super::blocks::{BlockState, BlockTable, NONE};
use super::Ftl;

pub mod checker;
mod persist;
use super::gc::{self, VictimPolicy};
use crate::accounting::Cause;
use crate::config::{GcConfig, PageAllocation, SimConfig, WearConfig};
use crate::error::SimError;
use crate::geometry::Geometry;
use crate::resources::Flash;
use crate::Nanos;

#[derive(Clone, Copy, Debug)]
pub(crate) struct Frontier {
    pub block: u32,
    pub next: u32,
}

const NO_FRONTIER: Frontier = Frontier {
    block: NONE,
    next: 0,
};

pub struct PageFtl {
    pub(crate) geo: Geometry,
    ppb: u32,
    pub(crate) l2p: Vec<u32>,
    pub(crate) p2l: Vec<u32>,
    pub(crate) blocks: BlockTable,
    /// Per die: free blocks keyed by (erase count or free order, block).
    pub(crate) free: Vec<BinaryHeap<Reverse<(u64, u32)>>>,
    free_seq: u64,
    /// Open blocks, `planes` per die (index `unit * planes + plane`).
    pub(crate) host_open: Vec<Frontier>,
    pub(crate) gc_open: Vec<Frontier>,
    /// Planes the allocation rotates over: the die's planes with multi-plane
    /// operations, else 1.
    pub(crate) planes: u32,
    /// Per die, the plane of its next host / GC write (with multi-plane
    /// operations; a checkpoint does not hold them: `derive_plane_cursors`).
    host_plane: Vec<u8>,
    gc_plane: Vec<u8>,
    /// Scratch for GC relocations with multi-plane operations: (source, destination).
    moves: (Vec<u32>, Vec<u32>),
    /// `gc.incremental`: per die, the victim whose valid pages the host
    /// writes are relocating a share at a time (`NONE`: none). It is kept,
    /// not asked of the policy again, because a policy's choice has effects
    /// (FIFO pops its queue: a half-cleaned block it forgot was never
    /// reclaimed, and the die ran out of free blocks).
    cleaning: Vec<u32>,
    /// `readahead.relocation_breaks_stripe`: per block, 1 while it holds
    /// pages relocated by GC or wear levelling (opened as a GC block), 0
    /// while it holds host writes in stripe order. Empty when off.
    pub(crate) gc_filled: Vec<u8>,
    rr: u32,
    /// `ftl.allocation`: round-robin (`rr`) or static by logical page.
    allocation: PageAllocation,
    policy: Box<dyn VictimPolicy>,
    gc: GcConfig,
    wear: WearConfig,
    /// Pages programmed so far (the GC policies' clock).
    seq: u64,
    erases_since_wl: Vec<u32>,
    check: bool,
    pub(crate) mapped: u64,
    /// Logical pages relocated by GC / wear levelling since the owner last drained it
    /// (`Some` only inside the map-on-flash FTLs, dftl and two-level, which must update their maps).
    pub(crate) relocated: Option<Vec<u32>>,
}

impl PageFtl {
    pub fn new(cfg: &SimConfig, geo: &Geometry) -> PageFtl {
        let units = geo.units;
        let bpu = geo.blocks_per_unit;
        let mut free = Vec::with_capacity(units as usize);
        for u in 0..units {
            let mut h = BinaryHeap::with_capacity(bpu as usize);
            for b in u * bpu..(u + 1) * bpu {
                // key 0 for all: ties broken by block number, so a fresh die fills from block 0.
                h.push(Reverse((0u64, b)));
            }
            free.push(h);
        }
        let planes = if cfg.nand.multi_plane {
            geo.planes_per_die.max(1)
        } else {
            1
        };
        PageFtl {
            geo: *geo,
            ppb: geo.pages_per_block,
            l2p: crate::mem::big_vec_u32(geo.logical_pages as usize, NONE),
            p2l: crate::mem::big_vec_u32(geo.physical_pages as usize, NONE),
            blocks: BlockTable::new(units, bpu, geo.pages_per_block),
            free,
            free_seq: 0,
            host_open: vec![NO_FRONTIER; (units * planes) as usize],
            gc_open: vec![NO_FRONTIER; (units * planes) as usize],
            planes,
            host_plane: vec![0; if planes > 1 { units as usize } else { 0 }],
            gc_plane: vec![0; if planes > 1 { units as usize } else { 0 }],
            moves: (Vec::new(), Vec::new()),
            cleaning: vec![NONE; units as usize],
            gc_filled: if cfg.readahead.relocation_breaks_stripe {
                vec![0; (units * bpu) as usize]
            } else {
                Vec::new()
            },
            rr: 0,
            allocation: cfg.ftl.allocation,
            policy: gc::make(cfg.gc.policy, units),
            gc: cfg.gc.clone(),
            wear: cfg.wear.clone(),
            seq: 0,
            erases_since_wl: vec![0; units as usize],
            check: cfg.check.enabled,
            mapped: 0,
            relocated: None,
        }
    }

    #[inline]
    fn unit_of(&self, ppn: u32) -> u32 {
        self.geo.unit_of_ppn(ppn)
    }

    fn pop_free(&mut self, unit: u32) -> Option<u32> {
        self.free[unit as usize].pop().map(|Reverse((_, b))| b)
    }

    /// The best free block of `plane` on die `unit` (the best of any plane if
    /// that plane has none).
    fn pop_free_plane(&mut self, unit: u32, plane: u32) -> Option<u32> {
        if self.planes <= 1 {
            return self.pop_free(unit);
        }
        let bpu = self.geo.blocks_per_unit;
        let heap = &mut self.free[unit as usize];
        let mut other = Vec::new();
        let mut found = None;
        while let Some(e) = heap.pop() {
            if (e.0 .1 % bpu) % self.planes == plane {
                found = Some(e);
                break;
            }
            other.push(e);
        }
        let found = match found {
            Some(e) => Some(e),
            None if !other.is_empty() => Some(other.remove(0)),
            None => None,
        };
        heap.extend(other);
        found.map(|Reverse((_, b))| b)
    }

    /// Rebuild the plane cursors from the open blocks (after loading a
    /// checkpoint). The rotation serves a die's planes strictly in turn, so
    /// their write pointers move in step: the planes before the cursor hold
    /// one page more than the rest (a block just reopened holds 1, a full one
    /// not yet reopened `pages_per_block`); the cursor is the first plane
    /// whose pointer differs from plane 0's, or plane 0 if none does.
    pub(crate) fn derive_plane_cursors(&mut self) {
        if self.planes <= 1 {
            return;
        }
        let p = self.planes as usize;
        for (open, cursor) in [
            (&self.host_open, &mut self.host_plane),
            (&self.gc_open, &mut self.gc_plane),
        ] {
            for (unit, c) in cursor.iter_mut().enumerate() {
                let fr = &open[unit * p..(unit + 1) * p];
                *c = (1..p).find(|&i| fr[i].next != fr[0].next).unwrap_or(0) as u8;
            }
        }
    }

    /// The frontier (index into `host_open` / `gc_open`) of the plane die
    /// `unit`'s next write goes to: the die's planes in turn (`cursor`), so
    /// that they fill in step, page index by page index.
    #[inline]
    fn next_plane(planes: u32, cursor: &mut [u8], unit: u32) -> usize {
        let base = (unit * planes) as usize;
        if planes <= 1 {
            return base;
        }
        let c = &mut cursor[unit as usize];
        let p = *c as u32;
        *c = if p + 1 == planes { 0 } else { p as u8 + 1 };
        base + p as usize
    }

    fn push_free(&mut self, unit: u32, b: u32) {
        let key = if self.wear.aware_allocation {
            self.blocks.erase_count(b) as u64
        } else {
            self.free_seq += 1;
            self.free_seq
        };
        self.free[unit as usize].push(Reverse((key, b)));
    }

    fn close(&mut self, b: u32) {
        let unit = self.geo.unit_of_block(b);
        self.blocks.close(b, self.seq);
        self.policy.on_close(unit, b, self.seq);
    }

    /// The logical page whose valid copy physical page `ppn` holds, if any:
    /// its reverse-map entry, provided the forward map still points back at
    /// `ppn` (invalidation leaves stale reverse entries behind).
    #[inline]
    pub(crate) fn lpn_at(&self, ppn: u32) -> Option<u32> {
        let lpn = self.p2l[ppn as usize];
        (lpn != NONE && self.l2p.get(lpn as usize) == Some(&ppn)).then_some(lpn)
    }

    /// Invalidate physical page `ppn` (its logical page is rewritten or
    /// trimmed): only its block's valid count changes; the caller repoints
    /// or clears the forward map, which is what makes `ppn` invalid.
    #[inline]
    fn invalidate(&mut self, ppn: u32) {
        debug_assert!(
            self.lpn_at(ppn).is_some(),
            "invalidating invalid page {ppn}"
        );
        self.blocks.dec_valid(ppn / self.ppb);
    }

    fn alloc_host(&mut self, unit: u32, at: Nanos, flash: &mut Flash) -> Result<u32, SimError> {
        let i = Self::next_plane(self.planes, &mut self.host_plane, unit);
        let f = self.host_open[i];
        if f.block != NONE && f.next < self.ppb {
            self.host_open[i].next += 1;
            return Ok(f.block * self.ppb + f.next);
        }
        if f.block != NONE {
            self.close(f.block);
            self.host_open[i] = NO_FRONTIER;
        }
        self.ensure_free(unit, at, flash)?;
        let plane = i as u32 % self.planes;
        let b = self.pop_free_plane(unit, plane).ok_or_else(|| {
            SimError::Stall(format!("die {unit} has no free block for host writes"))
        })?;
        self.blocks.open(b, false);
        if let Some(f) = self.gc_filled.get_mut(b as usize) {
            *f = 0;
        }
        self.host_open[i] = Frontier { block: b, next: 1 };
        Ok(b * self.ppb)
    }

    fn alloc_gc(&mut self, unit: u32) -> Result<u32, SimError> {
        let i = Self::next_plane(self.planes, &mut self.gc_plane, unit);
        let f = self.gc_open[i];
        if f.block != NONE && f.next < self.ppb {
            self.gc_open[i].next += 1;
            return Ok(f.block * self.ppb + f.next);
        }
        if f.block != NONE {
            self.close(f.block);
            self.gc_open[i] = NO_FRONTIER;
        }
        let plane = i as u32 % self.planes;
        let b = self.pop_free_plane(unit, plane).ok_or_else(|| {
            SimError::Stall(format!("die {unit} ran out of free blocks during garbage collection (reserve exhausted); raise gc.reserve_blocks or op"))
        })?;
        self.blocks.open(b, true);
        if let Some(f) = self.gc_filled.get_mut(b as usize) {
            *f = 1;
        }
        self.gc_open[i] = Frontier { block: b, next: 1 };
        Ok(b * self.ppb)
    }

    /// Whether die `unit`'s next GC page opens a block (its plane's GC
    /// frontier is full or absent); does not move the plane cursor.
    #[inline]
    fn gc_needs_block(&self, unit: u32) -> bool {
        let p = self.planes as usize;
        let cursor = if p > 1 {
            self.gc_plane[unit as usize] as usize
        } else {
            0
        };
        let f = self.gc_open[unit as usize * p + cursor];
        f.block == NONE || f.next >= self.ppb
    }

    /// Free blocks a die keeps before a host block is opened: below this,
    /// foreground GC runs. With multi-plane operations a reclaim may open a
    /// GC block on each plane.
    #[inline]
    fn fg_need(&self) -> usize {
        (self.gc.fg_low_watermark.max(self.gc.reserve_blocks + 1) + self.planes - 1) as usize
    }

    /// `gc.incremental`: before a host write to die `unit` whose free blocks
    /// are below [`Self::fg_need`], relocate this write's share of the
    /// victim's valid pages: paced over the pages left in the die's open host
    /// blocks (this one included), counting that the copies fill GC pages
    /// too, so the die gains a block by the time they are full and the next
    /// block opens without a whole-victim reclaim. The victim is whichever block the policy picks now (greedy
    /// keeps picking the one being emptied: its valid count only falls), so
    /// no cleaning state outlives the write. Returns when the step's flash
    /// work ends.
    fn clean_step(&mut self, unit: u32, at: Nanos, flash: &mut Flash) -> Result<Nanos, SimError> {
        if self.free[unit as usize].len() >= self.fg_need() {
            return Ok(at);
        }
        let victim = match self.cleaning[unit as usize] {
            NONE => match self.policy.select(unit, &self.blocks, self.seq) {
                Some(v) => v,
                None => return Ok(at),
            },
            v => v,
        };
        self.cleaning[unit as usize] = victim;
        let valid = self.blocks.valid(victim);
        if valid == 0 {
            flash.acct.gc_foreground += 1;
            return self.reclaim(unit, victim, Cause::Gc, at, flash);
        }
        let planes = self.planes as usize;
        let left: u32 = self.host_open[unit as usize * planes..(unit as usize + 1) * planes]
            .iter()
            .filter(|f| f.block != NONE)
            .map(|f| self.ppb - f.next)
            .sum();
        // Copies consume pages of the die's GC block too: emptying a victim
        // of `valid` pages gains `ppb - valid` pages, so each host page
        // needs `valid / (ppb - valid)` copies, over the host pages left.
        let gain = (self.ppb - valid).max(1) as u64;
        let share = (valid as u64 * self.ppb as u64).div_ceil((left as u64 + 1) * gain) as u32;
        let multi_plane = flash.multi_planes() > 1 || flash.t.page_kinds > 0;
        // `gc.incremental_synchronous`: the step's reads are the host
        // write's own work, so each source page is needed
        let synchronous = self.gc.incremental_synchronous;
        let (mut srcs, mut dsts) = std::mem::take(&mut self.moves);
        srcs.clear();
        dsts.clear();
        let base = victim * self.ppb;
        let mut moved = 0u32;
        for i in 0..self.ppb {
            if moved == share {
                break;
            }
            let src = base + i;
            let Some(lpn) = self.lpn_at(src) else {
                continue;
            };
            // With multi-plane GC, a lazy step never takes the blocks the
            // other planes' GC frontiers need in a whole-victim reclaim: it
            // stops, and the reclaim at the next block opening finishes the
            // victim. (Taking them left the pool empty outside GC: swarm
            // seed 171 under debug assertions.)
            if self.planes > 1
                && self.gc_needs_block(unit)
                && self.free[unit as usize].len() < self.planes as usize
            {
                break;
            }
            self.blocks.dec_valid(victim);
            self.move_page(
                unit,
                src,
                lpn,
                (multi_plane || synchronous).then_some((&mut srcs, &mut dsts)),
            )?;
            moved += 1;
        }
        let end = if synchronous {
            // read out now, ahead of the die's queued write-backs (the host
            // write waits for them), programmed behind them
            let (read_out, end) = flash.copy_pages_foreground(unit, Cause::Gc, at, &srcs, &dsts);
            flash.foreground_until = flash.foreground_until.max(read_out);
            end
        } else {
            Self::copy_moved(
                flash,
                unit,
                Cause::Gc,
                at,
                moved as u64,
                multi_plane,
                &srcs,
                &dsts,
            )
        };
        self.moves = (srcs, dsts);
        flash.acct.gc_relocated_pages += moved as u64;
        if self.blocks.valid(victim) == 0 {
            flash.acct.gc_foreground += 1;
            return self.reclaim(unit, victim, Cause::Gc, end, flash);
        }
        Ok(end)
    }

    /// Foreground GC: clean die `unit` until it has enough free blocks.
    ///
    /// Termination: each reclaim adds the victim's invalid pages to the die's
    /// free space (free blocks plus the unwritten pages of its GC blocks),
    /// which is bounded, so the loop ends once victims with invalid pages
    /// run out. The guard therefore counts *fruitless* reclaims, those whose
    /// victim was all valid data, and gives up after a die's worth of them in
    /// a row. (Counting free blocks instead is wrong: with multi-plane GC a
    /// reclaim can gain a block while a GC frontier on another plane takes
    /// one, so the count can stay level forever without any progress.)
    fn ensure_free(&mut self, unit: u32, at: Nanos, flash: &mut Flash) -> Result<(), SimError> {
        let need = self.fg_need();
        let mut fruitless = 0u32;
        while self.free[unit as usize].len() < need {
            debug_assert!(
                !self.free[unit as usize].is_empty(),
                "die {unit}: free pool empty outside GC"
            );
            let in_progress = self.cleaning[unit as usize];
            let chosen = if in_progress != NONE {
                Some(in_progress)
            } else {
                self.policy.select(unit, &self.blocks, self.seq)
            };
            let victim = chosen.ok_or_else(|| {
                SimError::Stall(format!(
                    "die {unit} needs a free block but has no closed block to clean ({} mapped of {} logical pages)",
                    self.mapped, self.geo.logical_pages
                ))
            })?;
            let gained_pages = self.ppb - self.blocks.valid(victim);
            flash.acct.gc_foreground += 1;
            self.reclaim(unit, victim, Cause::Gc, at, flash)?;
            if gained_pages == 0 {
                fruitless += 1;
                if fruitless > self.geo.blocks_per_unit {
                    return Err(SimError::Stall(format!(
                        "garbage collection on die {unit} makes no progress (every block full of valid data); raise op or TRIM data"
                    )));
                }
            } else {
                fruitless = 0;
            }
        }
        Ok(())
    }

    /// Move logical page `lpn` from physical page `src` to the die's GC
    /// frontier: the map's side of one relocation, shared by a lazy cleaning
    /// step and a whole-victim reclaim. The victim's valid count is the
    /// caller's (a step decrements it page by page, a reclaim empties the
    /// block at once). With `group`, the source and destination are recorded
    /// for the flash's multi-plane copy (or its page kinds).
    fn move_page(
        &mut self,
        unit: u32,
        src: u32,
        lpn: u32,
        group: Option<(&mut Vec<u32>, &mut Vec<u32>)>,
    ) -> Result<(), SimError> {
        let dst = self.alloc_gc(unit)?;
        self.p2l[dst as usize] = lpn;
        self.l2p[lpn as usize] = dst;
        self.blocks.inc_valid(dst / self.ppb);
        if let Some((srcs, dsts)) = group {
            srcs.push(src);
            dsts.push(dst);
        }
        if let Some(r) = self.relocated.as_mut() {
            r.push(lpn);
        }
        self.seq += 1;
        Ok(())
    }

    /// The flash time of `moved` relocations started at `at`: page by page
    /// in multi-plane groups when the destinations matter, else as a count.
    #[allow(clippy::too_many_arguments)]
    fn copy_moved(
        flash: &mut Flash,
        unit: u32,
        cause: Cause,
        at: Nanos,
        moved: u64,
        multi_plane: bool,
        srcs: &[u32],
        dsts: &[u32],
    ) -> Nanos {
        if multi_plane {
            flash.copy_pages(unit, cause, at, srcs, dsts)
        } else {
            flash.copy_n(unit, cause, at, moved)
        }
    }

    /// Relocate the valid pages of `victim`, erase it, return it to the free pool.
    fn reclaim(
        &mut self,
        unit: u32,
        victim: u32,
        cause: Cause,
        at: Nanos,
        flash: &mut Flash,
    ) -> Result<Nanos, SimError> {
        debug_assert_eq!(self.geo.unit_of_block(victim), unit);
        if self.cleaning[unit as usize] == victim {
            self.cleaning[unit as usize] = NONE;
        }
        self.blocks.take_victim(victim);
        let base = victim * self.ppb;
        let victim_range = base as usize..(base + self.ppb) as usize;
        // The pages' forward-map entries (which tell whether a page is still
        // valid) are random, each a cache miss: ask for all of them first so
        // the misses overlap, instead of taking them one by one in the loop below.
        for &lpn in &self.p2l[victim_range.clone()] {
            if lpn != NONE {
                crate::mem::prefetch(&self.l2p, lpn as usize);
            }
        }
        let mut moved = 0u64;
        // the destinations, for multi-plane groups and for their page kinds
        let multi_plane = flash.multi_planes() > 1 || flash.t.page_kinds > 0;
        let (mut srcs, mut dsts) = std::mem::take(&mut self.moves);
        srcs.clear();
        dsts.clear();
        for i in 0..self.ppb {
            let src = base + i;
            let Some(lpn) = self.lpn_at(src) else {
                continue;
            };
            self.move_page(
                unit,
                src,
                lpn,
                multi_plane.then_some((&mut srcs, &mut dsts)),
            )?;
            moved += 1;
        }
        self.blocks.emptied(victim, moved as u32);
        self.p2l[victim_range].fill(NONE);
        let copied = Self::copy_moved(flash, unit, cause, at, moved, multi_plane, &srcs, &dsts);
        self.moves = (srcs, dsts);
        let end = flash.erase(unit, cause, copied);
        self.blocks.erased(victim);
        self.push_free(unit, victim);
        match cause {
            Cause::WearLeveling => {
                flash.acct.wl_moves += 1;
                flash.acct.wl_relocated_pages += moved;
            }
            _ => flash.acct.gc_relocated_pages += moved,
        }
        if self.check {
            self.check().map_err(|e| {
                e.context(format_args!(
                    "checker after reclaiming block {victim} on die {unit}"
                ))
            })?;
        }
        self.erases_since_wl[unit as usize] += 1;
        if cause == Cause::Gc {
            self.maybe_static_wl(unit, end, flash)?;
        }
        Ok(end)
    }

    fn maybe_static_wl(&mut self, unit: u32, at: Nanos, flash: &mut Flash) -> Result<(), SimError> {
        if self.wear.static_threshold == 0
            || self.erases_since_wl[unit as usize] < self.wear.check_interval
        {
            return Ok(());
        }
        self.erases_since_wl[unit as usize] = 0;
        let mut max = 0u32;
        let mut coldest: Option<(u32, u32)> = None;
        for b in self.blocks.unit_blocks(unit) {
            let e = self.blocks.erase_count(b);
            max = max.max(e);
            if self.blocks.state(b) == BlockState::Closed && coldest.is_none_or(|(ce, _)| e < ce) {
                coldest = Some((e, b));
            }
        }
        if let Some((e, b)) = coldest {
            if max - e > self.wear.static_threshold {
                self.reclaim(unit, b, Cause::WearLeveling, at, flash)?;
            }
        }
        Ok(())
    }
}

impl Ftl for PageFtl {
    fn name(&self) -> &'static str {
        "page"
    }

    /// Times only flow through to the flash array: allocation, victims (by
    /// valid count or by the page-program clock `seq`) and wear levelling
    /// never look at them.
    fn prefill_untimed(&self) -> bool {
        true
    }

    fn logical_pages(&self) -> u64 {
        self.geo.logical_pages
    }

    #[inline]
    fn prefetch(&self, lpn: u64) {
        crate::mem::prefetch(&self.l2p, lpn as usize);
    }

    #[inline]
    fn read(&mut self, lpn: u64, at: Nanos, flash: &mut Flash) -> Result<Nanos, SimError> {
        let ppn = self.l2p[lpn as usize];
        if ppn == NONE {
            flash.acct.unmapped_reads += 1;
            return Ok(at);
        }
        Ok(flash.read_ppn(ppn, Cause::Host, at))
    }

    fn write(
        &mut self,
        lpn: u64,
        partial: bool,
        at: Nanos,
        flash: &mut Flash,
    ) -> Result<Nanos, SimError> {
        let lpn32 = lpn as u32;
        debug_assert!((lpn as usize) < self.l2p.len());
        let old = self.l2p[lpn as usize];
        let mut ready = at;
        if old != NONE {
            if partial {
                ready = flash.read_ppn(old, Cause::Host, at);
                flash.acct.rmw_reads += 1;
            }
            self.invalidate(old);
            self.l2p[lpn as usize] = NONE;
            self.mapped -= 1;
        }
        let unit = match self.allocation {
            PageAllocation::RoundRobin => {
                let unit = self.rr;
                self.rr = if self.rr + 1 == self.geo.units {
                    0
                } else {
                    self.rr + 1
                };
                unit
            }
            // MQSim's CWDP: channel, then way, then die; unit u is on
            // channel u mod C, so the three together are `lpn mod dies`
            PageAllocation::StaticCwdp => (lpn % self.geo.units as u64) as u32,
        };
        let ppn = self.alloc_host(unit, at, flash)?;
        if self.gc.incremental {
            ready = ready.max(self.clean_step(unit, at, flash)?);
        }
        debug_assert_eq!(self.p2l[ppn as usize], NONE);
        // `mapped` apart from `seq`: incremented together, the compiler loads
        // both with one 16-byte load, which cannot be forwarded from the
        // 8-byte decrement above and so waited for every older store (perf
        // put 86 % of this function's samples there).
        self.mapped += 1;
        self.p2l[ppn as usize] = lpn32;
        self.l2p[lpn as usize] = ppn;
        self.blocks.inc_valid(ppn / self.ppb);
        self.seq += 1;
        Ok(flash.program_ppn(ppn, Cause::Host, ready))
    }

    fn trim(&mut self, lpn: u64, _at: Nanos, _flash: &mut Flash) -> Result<(), SimError> {
        let old = self.l2p[lpn as usize];
        if old != NONE {
            self.invalidate(old);
            self.l2p[lpn as usize] = NONE;
            self.mapped -= 1;
        }
        Ok(())
    }

    fn idle(
        &mut self,
        idle_from: Nanos,
        deadline: Nanos,
        flash: &mut Flash,
    ) -> Result<(), SimError> {
        if !self.gc.background {
            return Ok(());
        }
        let high = self.gc.bg_high_watermark as usize;
        for unit in 0..self.geo.units {
            while self.free[unit as usize].len() < high {
                let start = idle_from.max(flash.die_free(unit));
                if start >= deadline {
                    break;
                }
                match self.blocks.min_valid_closed(unit) {
                    Some(b) if self.blocks.valid(b) < self.ppb => {}
                    _ => break,
                }
                let Some(victim) = self.policy.select(unit, &self.blocks, self.seq) else {
                    break;
                };
                flash.acct.gc_background += 1;
                self.reclaim(unit, victim, Cause::Gc, start, flash)?;
            }
        }
        Ok(())
    }

    #[inline]
    fn is_mapped(&self, lpn: u64) -> bool {
        self.l2p[lpn as usize] != NONE
    }

    fn stripe_contiguous(&self, prev: u64, next: u64) -> bool {
        let (a, b) = (self.l2p[prev as usize], self.l2p[next as usize]);
        if a == NONE || b == NONE {
            return false;
        }
        // A relocated page was compacted into a GC block in victim order,
        // not where the host's striped write put it: reading ahead by
        // physical address does not find it (Chen et al. 5.8).
        if !self.gc_filled.is_empty()
            && (self.gc_filled[(a / self.ppb) as usize] != 0
                || self.gc_filled[(b / self.ppb) as usize] != 0)
        {
            return false;
        }
        if self.geo.units == 1 {
            return b == a + 1;
        }
        let ua = self.unit_of(a);
        self.unit_of(b) == if ua + 1 == self.geo.units { 0 } else { ua + 1 }
    }

    fn check(&self) -> Result<(), SimError> {
        checker::check_page_ftl(self)
    }

    fn erase_counts(&self) -> &[u32] {
        self.blocks.erase_counts()
    }

    fn mapped_pages(&self) -> u64 {
        self.mapped
    }

    fn memory_bytes(&self) -> usize {
        self.l2p.capacity() * 4
            + self.p2l.capacity() * 4
            + self.blocks.memory_bytes()
            + self.free.iter().map(|h| h.capacity() * 16).sum::<usize>()
            + self.gc_filled.capacity()
            + self.host_open.len() * 16
            + (self.moves.0.capacity() + self.moves.1.capacity()) * 4
            + self.erases_since_wl.len() * 4
    }

    fn free_blocks(&self) -> Option<u64> {
        Some(self.free_blocks_impl())
    }

    fn save_state(&self, out: &mut crate::codec::Enc) -> Result<(), SimError> {
        self.save_state_impl(out)
    }

    fn load_state(&mut self, inp: &mut crate::codec::Dec) -> Result<(), SimError> {
        self.load_state_impl(inp)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::nand::NandTiming;

    fn small() -> (PageFtl, Flash) {
        let cfg = crate::resolve_spec("ssd-h,capacity=8MiB,channels=2,geometry.chips_per_channel=1,geometry.planes_per_die=1,pages_per_block=16,check=on").unwrap();
        let geo = Geometry::derive(&cfg).unwrap();
        let flash = Flash::new(NandTiming::resolve(&cfg.nand, geo.page_bytes), &geo);
        (PageFtl::new(&cfg, &geo), flash)
    }

    #[test]
    fn checker_catches_corruption() {
        let (mut f, mut flash) = small();
        for i in 0..3 * f.geo.logical_pages {
            f.write((i * 7919) % f.geo.logical_pages, false, 0, &mut flash)
                .unwrap();
        }
        assert!(flash.acct.gc_foreground > 0);
        f.check().unwrap();
        let (a, b) = (f.l2p[1], f.l2p[2]);
        f.l2p[1] = b;
        f.l2p[2] = a;
        assert!(f.check().unwrap_err().to_string().contains("forward map"));
        f.l2p[1] = a;
        f.l2p[2] = b;
        f.check().unwrap();
        f.mapped += 1;
        assert!(f.check().is_err());
    }

    #[test]
    fn a_prefill_on_an_untimed_array_leaves_the_same_state_and_timing() {
        // Two passes, so that the prefill itself garbage-collects.
        let spec = "ssd-h,capacity=8MiB,channels=2,geometry.chips_per_channel=1,geometry.planes_per_die=1,pages_per_block=16,check=on";
        let cfg = crate::resolve_spec(spec).unwrap();
        let geo = Geometry::derive(&cfg).unwrap();
        let t = NandTiming::resolve(&cfg.nand, geo.page_bytes);
        let run = |scratch: &mut Flash| {
            let mut f = PageFtl::new(&cfg, &geo);
            for _ in 0..2 {
                for lpn in 0..geo.logical_pages {
                    f.write(lpn, false, 0, scratch).unwrap();
                }
            }
            // then the same random writes on a fresh timed array
            let mut flash = Flash::new(t, &geo);
            let times: Vec<Nanos> = (0..3 * geo.logical_pages)
                .map(|i| {
                    let at = i * 1000;
                    flash.advance(at);
                    let lpn = (i * 7919) % geo.logical_pages;
                    f.write(lpn, false, at, &mut flash).unwrap()
                })
                .collect();
            f.check().unwrap();
            (f.l2p, f.p2l, f.blocks.erase_counts().to_vec(), f.seq, times)
        };
        let mut timed = Flash::new(t, &geo);
        let mut untimed = Flash::untimed(t, &geo);
        let a = run(&mut timed);
        let b = run(&mut untimed);
        assert!(
            timed.acct.gc_foreground > 0,
            "the prefill garbage-collected"
        );
        assert_eq!(
            untimed.acct.total_programs(),
            0,
            "the untimed array counts nothing"
        );
        assert!(a == b, "state or later completion times differ");
    }

    #[test]
    fn a_rewritten_page_keeps_a_stale_reverse_entry_that_counts_as_invalid() {
        let (mut f, mut flash) = small();
        f.write(5, false, 0, &mut flash).unwrap();
        let old = f.l2p[5];
        f.write(5, false, 0, &mut flash).unwrap();
        f.trim(6, 0, &mut flash).unwrap();
        assert_ne!(f.l2p[5], old);
        assert_eq!(f.p2l[old as usize], 5, "invalidation left the entry");
        assert_eq!(f.lpn_at(old), None, "but it is not a valid page");
        assert_eq!(f.lpn_at(f.l2p[5]), Some(5));
        assert_eq!(
            f.blocks.valid(old / f.ppb),
            0,
            "its block counts it invalid"
        );
        f.check().unwrap();
        // a checkpoint holds the reverse map with stale entries cleared
        let mut e = crate::codec::Enc::default();
        f.save_state(&mut e).unwrap();
        let (mut g, _) = small();
        g.load_state(&mut crate::codec::Dec::new(&e.buf)).unwrap();
        assert_eq!(g.p2l[old as usize], NONE);
        assert_eq!(g.l2p, f.l2p);
        g.check().unwrap();
        // a stale entry naming a page outside the device is caught
        f.p2l[old as usize] = f.geo.logical_pages as u32;
        assert!(f.check().unwrap_err().to_string().contains("out-of-range"));
    }

    #[test]
    fn trim_then_gc_relocates_nothing_trimmed() {
        let (mut f, mut flash) = small();
        let n = f.geo.logical_pages;
        for l in 0..n {
            f.write(l, false, 0, &mut flash).unwrap();
        }
        for l in 0..n / 2 {
            f.trim(l, 0, &mut flash).unwrap();
        }
        assert_eq!(f.mapped_pages(), n - n / 2);
        for l in n / 2..n {
            f.write(l, false, 0, &mut flash).unwrap();
        }
        // the trimmed half made whole blocks invalid: GC found free victims
        assert_eq!(flash.acct.gc_relocated_pages, 0);
        f.check().unwrap();
    }
}
