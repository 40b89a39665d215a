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
    /// The unit owning the sequential log block.
    sw: u32,
    merged: Vec<u32>,
    /// Pages a random log takes before it is full (`ftl.log_pages`, at most a superblock).
    rand_cap: u32,
    /// `ftl.log_units` (0 = unbounded).
    max_units: u32,
    /// Units with pages in the random logs, with the sequence number of their
    /// last random write (only kept when `max_units` > 0).
    assoc: Vec<(u32, u64)>,
    seq: u64,
}

impl FastFtl {
    pub fn new(cfg: &SimConfig, geo: &Geometry) -> FastFtl {
        FastFtl {
            // + 1: the sequential log can be demoted to a random log during a merge
            core: SbCore::new(cfg, geo, cfg.ftl.log_blocks + 1),
            max_logs: cfg.ftl.log_blocks.max(1),
            rw: VecDeque::with_capacity(cfg.ftl.log_blocks as usize + 1),
            sw: NONE,
            merged: Vec::new(),
            rand_cap: 0,
            max_units: cfg.ftl.log_units,
            assoc: Vec::new(),
            seq: 0,
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

    /// Merge the sequential log (switch or partial).
    fn merge_sw(&mut self, at: Nanos, flash: &mut Flash) -> Result<Nanos, SimError> {
        let lu = self.sw;
        if lu == NONE {
            return Ok(at);
        }
        self.sw = NONE;
        self.full_merge(lu, at, flash)
    }

    /// Bring every page of `lu` into one data block.
    fn full_merge(&mut self, lu: u32, at: Nanos, flash: &mut Flash) -> Result<Nanos, SimError> {
        if self.max_units > 0 {
            self.assoc.retain(|&(u, _)| u != lu);
        }
        let c = &mut self.core;
        let sl = c.seq_log[lu as usize];
        if sl != NONE {
            if self.sw == lu {
                self.sw = NONE;
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

    fn append_random(&mut self, lpn: u64, at: Nanos, flash: &mut Flash) -> Result<Nanos, SimError> {
        let mut t = at;
        if self.max_units > 0 {
            let (lu, _) = self.core.lu_off(lpn);
            self.seq += 1;
            if let Some(a) = self.assoc.iter_mut().find(|(u, _)| *u == lu) {
                a.1 = self.seq;
            } else {
                if self.assoc.len() as u32 >= self.max_units {
                    let victim = self
                        .assoc
                        .iter()
                        .min_by_key(|&&(_, s)| s)
                        .map(|&(u, _)| u)
                        .unwrap_or(NONE);
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
                t = self.reclaim(t, flash)?;
            }
            let g = self.core.roomiest_group();
            let sb = self.core.alloc(g, SbKind::RandLog, NONE)?;
            self.rw.push_back(sb);
        }
        let log = *self.rw.back().expect("a random log");
        Ok(self.core.program_rand(log, lpn, t, flash))
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
        let (lu, off) = self.core.lu_off(lpn);
        let c = &mut self.core;
        if c.data_sb[lu as usize] == NONE {
            let g = c.roomiest_group();
            let sb = c.alloc(g, SbKind::Data, lu)?;
            c.data_sb[lu as usize] = sb;
        }
        let d = c.data_sb[lu as usize];
        if c.seq_log[lu as usize] == NONE && off >= c.sb_wp[d as usize] {
            return Ok(c.program_data(lpn, at, flash));
        }
        if self.sw == lu {
            let sl = self.core.seq_log[lu as usize];
            if off == self.core.sb_wp[sl as usize] {
                let end = self.core.program_seq(lpn, at, flash);
                if self.core.sb_wp[sl as usize] == self.core.n {
                    // full: switch merge at once (the erase runs after the program)
                    self.merge_sw(end, flash)?;
                }
                return Ok(end);
            }
        }
        if off == 0 && !(self.max_units > 0 && self.sw == lu) {
            let mut t = self.merge_sw(at, flash)?;
            if self.core.seq_log[lu as usize] != NONE {
                t = self.full_merge(lu, t, flash)?;
            }
            self.core.open_seq(lu)?;
            self.sw = lu;
            return Ok(self.core.program_seq(lpn, t, flash));
        }
        self.append_random(lpn, at, flash)
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
        if self.sw != NONE && self.core.seq_log[self.sw as usize] == NONE {
            return Err(SimError::Invariant(format!(
                "sequential log owner {} has no log",
                self.sw
            )));
        }
        Ok(())
    }

    fn memory_bytes(&self) -> usize {
        self.core.memory_bytes() + self.rw.capacity() * 4 + self.assoc.capacity() * 12
    }
}
