//! FAST-like hybrid log-block FTL (Lee, Park, Chung, Lee, Park & Song, "A log
//! buffer-based flash translation layer using fully-associative sector
//! translation", ACM TECS 6(3), 2007): block-mapped data blocks, one
//! *sequential* log block and `ftl.log_blocks` fully associative *random* log
//! blocks shared by all units.
//!
//! - A write beyond the data block's write pointer is programmed in place.
//! - A write at offset 0 of a unit starts the sequential log for that unit
//!   (merging the previous one: switch when full, else partial); a write at
//!   the sequential log's next offset appends to it; a full sequential log is
//!   switched at once.
//! - Every other write is appended to the current random log block. When all
//!   random log blocks are full, the oldest is reclaimed: every unit with a
//!   valid page in it gets a full merge (its pages from all log blocks, the
//!   sequential log and the data block go to a new block), then the log block is
//!   erased and reused.
//!
//! Random writes over a range the random logs cover (`log_blocks` x superblock)
//! are cheap because most pages are overwritten in the log before their block
//! is reclaimed; as the range grows, each reclaimed log block holds pages of
//! more units and every page costs about one full merge (Chen et al. 5.7: "the
//! more random the writes are, the more merge operations are needed"). Merges
//! are accounted as `gc`.
//!
//! Two options model uFLIP's Kingston DataTraveler HyperX, whose partitioned
//! sequential writes cost what random writes in its locality area cost (Table
//! 3: "16 (x20)" and "8 (x20)") while reverse and in-place writes, which touch
//! one unit at a time, cost far less (x7, x6):
//! - `ftl.log_pages`: a random log block is full after this many pages.
//! - `ftl.log_units`: at most this many units may have pages in the random
//!   logs (a bounded association table; Cho et al.'s KAST, DATE 2009, bounds
//!   each log block's associativity the same way). A random write to another
//!   unit first gives the least recently written one a full merge, so random
//!   writes over more units than that, or more partitions, cost about a merge
//!   each. With it, a rewrite of the first page of the unit that owns the
//!   sequential log goes to the random log (the unit is associated like any
//!   other) instead of restarting the sequential log with a partial merge.
//!
//! Three options model Chen et al.'s SSD-L (SIGMETRICS 2009; docs/sim-ftl.md):
//! - `ftl.seq_logs`: several sequential logs, one per unit, the least recently
//!   written merged when another unit needs one (LAST, Lee et al., ACM SIGOPS
//!   OSR 42(6), 2008), so interleaved sequential streams stay sequential.
//! - `ftl.seq_large_requests`: LAST's request-size locality detector: a write
//!   of more than one page (size from `Ftl::begin_write`) opens a sequential
//!   log even mid-unit, the unit's pages below it copied first.
//! - `ftl.merges_per_write`: incremental reclaim: the oldest random log is set
//!   aside and each later random write merges up to k of its units first, so
//!   merges are spread over writes instead of all held by one. k is raised
//!   where it would not finish the drain before the logs are full again
//!   (`paced_merges`): the drain's merges are spread over the writes that
//!   fill the logs, so a write's flash work stays bounded by about the
//!   log's merges over its pages, whatever the associativity.
//!
//! One option reclaims dead log space (`ftl.erase_dead_logs`): a random log
//! block none of whose pages is valid any more (all overwritten in later log
//! blocks, or superseded by a sequential log or a merge, e.g. by the
//! papers' sequential re-fill) is erased after the write that invalidated
//! its last page and returned to the free pool, with no merge. Without it the
//! block keeps its write pointer: the log is full again after as many writes
//! as it has clean pages left, and its reclaim merges every unit written
//! since (Chen et al.'s Figure 8a after a re-fill: 366 writes into a log
//! holding 3,730 dead pages, then 64 merges).

use std::collections::VecDeque;

use super::blocks::NONE;
use super::superblock::{sb_common, SbCore, SbKind};
use super::Ftl;
use crate::config::SimConfig;
use crate::error::SimError;
use crate::geometry::Geometry;
use crate::resources::Flash;
use crate::Nanos;

pub struct FastFtl {
    core: SbCore,
    max_logs: u32,
    /// Random log blocks, oldest first; the last one receives writes.
    rw: VecDeque<u32>,
    /// Units owning a sequential log block, with the sequence number of their
    /// last sequential write (at most `max_seq`; FAST has one).
    sw: Vec<(u32, u64)>,
    /// `ftl.seq_logs`.
    max_seq: u32,
    sw_clock: u64,
    merged: Vec<u32>,
    /// Pages a random log takes before it is full (`ftl.log_pages`, at most a superblock).
    rand_cap: u32,
    /// `ftl.log_units` (0 = unbounded).
    max_units: u32,
    /// Units with pages in the random logs, with the sequence number of their
    /// last random write (only kept when `max_units` > 0).
    assoc: Vec<(u32, u64)>,
    seq: u64,
    /// `ftl.merges_per_write` (0 = reclaim a whole log block at once).
    merges_per_write: u32,
    /// Incremental reclaim: the log block being drained (NONE when none),
    /// its valid pages when it was set aside, and how far they were merged.
    draining: u32,
    drain_pages: Vec<u32>,
    drain_pos: usize,
    /// `ftl.seq_large_requests`.
    seq_large: bool,
    /// Pages of the current host write request.
    req_pages: u64,
    /// `ftl.erase_dead_logs`.
    erase_dead_logs: bool,
}

impl FastFtl {
    pub fn new(cfg: &SimConfig, geo: &Geometry) -> FastFtl {
        let drain = u32::from(cfg.ftl.merges_per_write > 0);
        let core = SbCore::new(cfg, geo, cfg.ftl.log_blocks + 1 + drain);
        // sequential logs beyond the first only where spare superblocks allow
        // (data, random logs, the drained log and 2 merge targets come first)
        let spare = core
            .n_sb
            .saturating_sub(core.n_lu + cfg.ftl.log_blocks + drain + 2);
        let max_seq = cfg.ftl.seq_logs.min(spare).max(1);
        FastFtl {
            // + 1 random-log slot: a sequential log can be demoted to a random log during a merge
            core,
            max_logs: cfg.ftl.log_blocks.max(1),
            rw: VecDeque::with_capacity(cfg.ftl.log_blocks as usize + 1),
            sw: Vec::with_capacity(max_seq as usize),
            max_seq,
            sw_clock: 0,
            merged: Vec::new(),
            rand_cap: 0,
            max_units: cfg.ftl.log_units,
            assoc: Vec::new(),
            seq: 0,
            merges_per_write: cfg.ftl.merges_per_write,
            draining: NONE,
            drain_pages: Vec::new(),
            drain_pos: 0,
            seq_large: cfg.ftl.seq_large_requests,
            req_pages: 0,
            erase_dead_logs: cfg.ftl.erase_dead_logs,
        }
        .with_rand_cap(cfg.ftl.log_pages)
    }

    fn with_rand_cap(mut self, log_pages: u32) -> FastFtl {
        self.rand_cap = match log_pages {
            0 => self.core.n,
            p => p.min(self.core.n),
        };
        self
    }

    /// Open a sequential log for `lu` (which has none), merging the least
    /// recently written one first when all are taken.
    fn open_seq_log(&mut self, lu: u32, at: Nanos, flash: &mut Flash) -> Result<Nanos, SimError> {
        let mut t = at;
        if self.sw.len() as u32 >= self.max_seq {
            let victim = least_recent(&self.sw);
            t = self.full_merge(victim, t, flash)?;
        }
        self.core.open_seq(lu)?;
        self.sw_clock += 1;
        self.sw.push((lu, self.sw_clock));
        Ok(t)
    }

    /// Program `lpn` at its unit's sequential log's write pointer; a full log is switched at once.
    fn append_seq(&mut self, lpn: u64, at: Nanos, flash: &mut Flash) -> Result<Nanos, SimError> {
        let (lu, _) = self.core.lu_off(lpn);
        let sl = self.core.seq_log[lu as usize];
        let end = self.core.program_seq(lpn, at, flash);
        if self.core.sb_wp[sl as usize] == self.core.n {
            // full: switch merge at once (the erase runs after the program)
            self.full_merge(lu, end, flash)?;
        }
        Ok(end)
    }

    /// Index in `sw` of `lu`'s sequential log, if it owns one.
    fn sw_index(&self, lu: u32) -> Option<usize> {
        self.sw.iter().position(|&(u, _)| u == lu)
    }

    /// Bring every page of `lu` into one data block (its sequential log, if
    /// any, is switched or partially merged when nothing of it is in a random
    /// log, else all of it is fully merged).
    fn full_merge(&mut self, lu: u32, at: Nanos, flash: &mut Flash) -> Result<Nanos, SimError> {
        if self.max_units > 0 {
            self.assoc.retain(|&(u, _)| u != lu);
        }
        let c = &mut self.core;
        let sl = c.seq_log[lu as usize];
        if sl != NONE {
            if let Some(i) = self.sw.iter().position(|&(u, _)| u == lu) {
                self.sw.swap_remove(i);
            }
            if !c.any_inlog_below(lu, c.sb_wp[sl as usize]) {
                // every page below the log's write pointer is newest in the log
                if c.sb_wp[sl as usize] < c.n {
                    flash.acct.merges_partial += 1;
                }
                return Ok(c.switch(lu, at, flash));
            }
            // some of its pages were overwritten in random logs: full merge
            let demoted = c.demote_seq(lu)?;
            let t = c.full_merge(lu, at, flash)?;
            return Ok(c.erase_sb(demoted, t, flash));
        }
        c.full_merge(lu, at, flash)
    }

    /// Reclaim the oldest random log block: full-merge every unit with a valid page in it.
    fn reclaim(&mut self, at: Nanos, flash: &mut Flash) -> Result<Nanos, SimError> {
        let victim = self
            .rw
            .pop_front()
            .ok_or_else(|| SimError::Invariant("internal: no random log to reclaim".to_string()))?;
        let pages = self.core.log_valid_pages(victim);
        self.merged.clear();
        let mut t = at;
        for lpn in pages {
            if !self.core.is_inlog(lpn as u64) {
                continue; // merged with an earlier page of its unit
            }
            let (lu, _) = self.core.lu_off(lpn as u64);
            t = self.full_merge(lu, t, flash)?;
        }
        debug_assert_eq!(self.core.sb_valid[victim as usize], 0);
        let end = self.core.erase_sb(victim, t, flash);
        self.core.maybe_check("a FAST log reclaim")?;
        Ok(end)
    }

    /// Incremental reclaim: set the oldest random log aside to be drained.
    fn start_drain(&mut self) -> Result<(), SimError> {
        let victim = self
            .rw
            .pop_front()
            .ok_or_else(|| SimError::Invariant("internal: no random log to drain".to_string()))?;
        self.drain_pages = self.core.log_valid_pages(victim);
        self.drain_pos = 0;
        self.draining = victim;
        Ok(())
    }

    /// How many units this random write merges from the log being drained:
    /// `ftl.merges_per_write`, or more where that would not finish the drain
    /// before the random logs are full again (the pages still to drain over
    /// the free pages left in the logs, rounded up). The drain is paced over
    /// the writes that fill the logs, so no write ever holds a whole log's
    /// merges ("finish it now" in `append_random` is then a checker's path).
    fn paced_merges(&self) -> u32 {
        let left = (self.drain_pages.len() - self.drain_pos) as u64;
        let open = self.rw.back().map_or(0, |&b| {
            self.rand_cap.saturating_sub(self.core.sb_wp[b as usize])
        });
        let spare_logs = self.max_logs.saturating_sub(self.rw.len() as u32);
        let free = open as u64 + spare_logs as u64 * self.rand_cap as u64;
        let needed = left.div_ceil(free.max(1));
        (self.merges_per_write as u64)
            .max(needed)
            .min(u32::MAX as u64) as u32
    }

    /// Merge up to `k` units that still have pages in the log being drained;
    /// erase it once it holds no valid page.
    fn drain(&mut self, k: u32, at: Nanos, flash: &mut Flash) -> Result<Nanos, SimError> {
        let d = self.draining;
        let mut t = at;
        let mut merged = 0;
        while merged < k && self.drain_pos < self.drain_pages.len() {
            let lpn = self.drain_pages[self.drain_pos] as u64;
            self.drain_pos += 1;
            if !matches!(self.core.locate(lpn), Some((sb, _)) if sb == d) {
                continue; // rewritten since, or merged with an earlier page of its unit
            }
            let (lu, _) = self.core.lu_off(lpn);
            t = self.full_merge(lu, t, flash)?;
            merged += 1;
        }
        if self.drain_pos == self.drain_pages.len() {
            if self.core.sb_valid[d as usize] != 0 {
                return Err(SimError::Invariant(format!(
                    "drained log {d} still holds {} valid pages",
                    self.core.sb_valid[d as usize]
                )));
            }
            self.draining = NONE;
            t = self.core.erase_sb(d, t, flash);
            self.core.maybe_check("a FAST incremental reclaim")?;
        }
        Ok(t)
    }

    /// `ftl.erase_dead_logs`: erase every random log block that holds no
    /// valid page, starting at `at`, and return it to the free pool.
    ///
    /// When: right after the write that invalidated the block's last page,
    /// not when the log next needs space. The FTL keeps a valid-page count
    /// per log block (FAST's page-level map of the log area), so it knows
    /// at once that the block holds nothing; reclaiming it then costs only
    /// the erase a later reclaim would end with (its merges loop over valid
    /// pages and find none). Waiting for the log to fill would not free the
    /// space on a device with one random log block (SSD-L): that block is
    /// also the one receiving writes, so it would be full of new pages,
    /// which need merges, by the time it is reclaimed. The erase runs after
    /// the write's own programs; the write does not wait for it (the dies
    /// are busy with it afterwards, as after a switch merge in
    /// `append_seq`). Pages made invalid by a TRIM are swept at the next
    /// write. Accounted as a `gc` erase, never as a merge.
    fn erase_dead_logs(&mut self, at: Nanos, flash: &mut Flash) -> Result<(), SimError> {
        let mut erased = false;
        let d = self.draining;
        if d != NONE && self.core.sb_valid[d as usize] == 0 {
            // every page still to drain was overwritten since: nothing left to merge
            self.draining = NONE;
            self.drain_pages.clear();
            self.drain_pos = 0;
            self.core.erase_sb(d, at, flash);
            erased = true;
        }
        let mut i = 0;
        while i < self.rw.len() {
            let b = self.rw[i] as usize;
            if self.core.sb_valid[b] == 0 && self.core.sb_wp[b] > 0 {
                self.rw.remove(i);
                self.core.erase_sb(b as u32, at, flash);
                erased = true;
            } else {
                i += 1;
            }
        }
        if erased {
            self.core.maybe_check("a FAST dead log erase")?;
        }
        Ok(())
    }

    fn append_random(&mut self, lpn: u64, at: Nanos, flash: &mut Flash) -> Result<Nanos, SimError> {
        let mut t = at;
        if self.max_units > 0 {
            let (lu, _) = self.core.lu_off(lpn);
            self.seq += 1;
            if let Some(a) = self.assoc.iter_mut().find(|(u, _)| *u == lu) {
                a.1 = self.seq;
            } else {
                if self.assoc.len() as u32 >= self.max_units {
                    // A unit whose random-log pages have all been superseded
                    // since (rewritten sequentially, e.g. by section 5.1's
                    // refill, or trimmed) has nothing in the logs to merge:
                    // its entry is stale and frees without a merge. Section
                    // 5.7: "each page in the log block has to be merged with
                    // the other valid pages in the same mapping unit": a merge
                    // is owed for valid log pages only.
                    let (core, n) = (&self.core, self.core.n);
                    self.assoc.retain(|&(u, _)| core.any_inlog_below(u, n));
                }
                if self.assoc.len() as u32 >= self.max_units {
                    let victim = least_recent(&self.assoc);
                    t = self.full_merge(victim, t, flash)?;
                    self.core.maybe_check("a FAST association eviction")?;
                }
                self.assoc.push((lu, self.seq));
            }
        }
        let need_new = match self.rw.back() {
            Some(&b) => self.core.sb_wp[b as usize] >= self.rand_cap,
            None => true,
        };
        if need_new {
            if self.rw.len() as u32 >= self.max_logs {
                if self.merges_per_write == 0 {
                    t = self.reclaim(t, flash)?;
                } else {
                    if self.draining != NONE {
                        // the logs filled again before the drain ended: finish it now
                        t = self.drain(u32::MAX, t, flash)?;
                    }
                    self.start_drain()?;
                }
            }
            let g = self.core.roomiest_group();
            let sb = self.core.alloc(g, SbKind::RandLog, NONE)?;
            self.rw.push_back(sb);
        }
        if self.draining != NONE {
            let k = self.paced_merges();
            t = self.drain(k, t, flash)?;
        }
        let log = *self.rw.back().expect("a random log");
        Ok(self.core.program_rand(log, lpn, t, flash))
    }

    /// Write one page (what `Ftl::write` does before `ftl.erase_dead_logs`).
    fn write_page(&mut self, lpn: u64, at: Nanos, flash: &mut Flash) -> Result<Nanos, SimError> {
        let (lu, off) = self.core.lu_off(lpn);
        // LAST's locality detector: a write of more than one page is sequential
        let large = self.seq_large && self.req_pages > 1;
        let c = &mut self.core;
        if c.data_sb[lu as usize] == NONE {
            let g = c.unit_group(lu);
            let sb = c.alloc(g, SbKind::Data, lu)?;
            c.data_sb[lu as usize] = sb;
        }
        let d = c.data_sb[lu as usize];
        if c.seq_log[lu as usize] == NONE && off >= c.sb_wp[d as usize] {
            return Ok(c.program_data(lpn, at, flash));
        }
        let own = self.sw_index(lu);
        if let Some(i) = own {
            let sl = self.core.seq_log[lu as usize];
            if off == self.core.sb_wp[sl as usize] {
                self.sw_clock += 1;
                self.sw[i].1 = self.sw_clock;
                let end = self.core.program_seq(lpn, at, flash);
                if self.core.sb_wp[sl as usize] == self.core.n {
                    // full: switch merge at once (the erase runs after the program)
                    self.full_merge(lu, end, flash)?;
                }
                return Ok(end);
            }
        }
        if large && off > 0 {
            if let Some(i) = own {
                let sl = self.core.seq_log[lu as usize];
                if off > self.core.sb_wp[sl as usize] {
                    // a large write skips ahead in its unit: copy the skipped pages, then continue
                    self.sw_clock += 1;
                    self.sw[i].1 = self.sw_clock;
                    let t = self.core.fill_seq(lu, off, at, flash);
                    return self.append_seq(lpn, t, flash);
                }
            } else {
                // a sequential log starting mid-unit: the unit's pages below it are copied first
                let t = self.open_seq_log(lu, at, flash)?;
                let t = self.core.fill_seq(lu, off, t, flash);
                return self.append_seq(lpn, t, flash);
            }
        }
        if off == 0 && !(self.max_units > 0 && own.is_some()) {
            // restart this unit's sequential log, or make room for one by
            // merging the least recently written (FAST: the only one)
            let mut t = at;
            if own.is_some() {
                t = self.full_merge(lu, t, flash)?;
            } else if self.sw.len() as u32 >= self.max_seq {
                let victim = least_recent(&self.sw);
                t = self.full_merge(victim, t, flash)?;
            }
            if self.core.seq_log[lu as usize] != NONE {
                t = self.full_merge(lu, t, flash)?;
            }
            self.core.open_seq(lu)?;
            self.sw_clock += 1;
            self.sw.push((lu, self.sw_clock));
            return Ok(self.core.program_seq(lpn, t, flash));
        }
        self.append_random(lpn, at, flash)
    }
}

impl Ftl for FastFtl {
    fn name(&self) -> &'static str {
        "fast"
    }

    sb_common!();

    fn write(
        &mut self,
        lpn: u64,
        _partial: bool,
        at: Nanos,
        flash: &mut Flash,
    ) -> Result<Nanos, SimError> {
        let end = self.write_page(lpn, at, flash)?;
        if self.erase_dead_logs {
            self.erase_dead_logs(end, flash)?;
        }
        Ok(end)
    }

    fn begin_request(&mut self) {
        self.req_pages = 0;
    }

    fn begin_write(&mut self, pages: u64) {
        self.req_pages = pages;
    }

    fn idle(&mut self, _from: Nanos, _deadline: Nanos, _flash: &mut Flash) -> Result<(), SimError> {
        Ok(())
    }

    fn check(&self) -> Result<(), SimError> {
        self.core.check()?;
        for &b in &self.rw {
            if self.core.sb_kind[b as usize] != SbKind::RandLog {
                return Err(SimError::Invariant(format!(
                    "random log {b} has kind {:?}",
                    self.core.sb_kind[b as usize]
                )));
            }
        }
        for &(u, _) in &self.sw {
            if self.core.seq_log[u as usize] == NONE {
                return Err(SimError::Invariant(format!(
                    "sequential log owner {u} has no log"
                )));
            }
        }
        if self.sw.len() as u32 > self.max_seq {
            return Err(SimError::Invariant(format!(
                "{} sequential logs, at most {} allowed",
                self.sw.len(),
                self.max_seq
            )));
        }
        if self.draining != NONE && self.core.sb_kind[self.draining as usize] != SbKind::RandLog {
            return Err(SimError::Invariant(format!(
                "draining log {} has kind {:?}",
                self.draining, self.core.sb_kind[self.draining as usize]
            )));
        }
        Ok(())
    }

    fn memory_bytes(&self) -> usize {
        self.core.memory_bytes()
            + self.rw.capacity() * 4
            + self.assoc.capacity() * 12
            + self.sw.capacity() * 12
            + self.drain_pages.capacity() * 4
    }
}

/// The unit of a (unit, last-use stamp) list used least recently: the
/// eviction victim of the sequential logs and of the random log's
/// associations (NONE when the list is empty).
fn least_recent(units: &[(u32, u64)]) -> u32 {
    units
        .iter()
        .min_by_key(|&&(_, stamp)| stamp)
        .map(|&(unit, _)| unit)
        .unwrap_or(NONE)
}
