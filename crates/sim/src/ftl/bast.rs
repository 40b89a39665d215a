//! BAST-like hybrid log-block FTL (Kim et al., "A space-efficient flash
//! translation layer for CompactFlash systems", IEEE TCE 2002; the "block
//! associative sector translation" named by Lee et al. 2007): block-mapped data
//! blocks plus `ftl.log_blocks` log blocks, each bound to one data block.
//!
//! - A write beyond the data block's write pointer is programmed in place.
//! - Otherwise it is appended to the unit's log block (one is allocated, and
//!   when all are in use the least recently written one is merged first).
//! - While a log block receives its unit's pages in order from offset 0 it is
//!   *sequential*: when full it replaces the data block (switch merge: one
//!   erase), when evicted early it is completed from the data block and switched
//!   (partial merge). A log written out of order needs a full merge: a new
//!   block receives the newest copy of every page, the data and log blocks are
//!   erased.
//!
//! So random writes inside `log_blocks` units cost about one page copy each
//! (a full merge per block of writes), and beyond them every few writes force a
//! full merge: uFLIP's *locality area* is `log_blocks` superblocks; sequential
//! writes to up to `log_blocks` partitions stay switch merges, more partitions
//! force partial merges (uFLIP Table 3, "Partitioning"). Merges are accounted
//! as `gc`.
//!
//! Two options model the low-end USB drives of uFLIP (section 5.2: "they are
//! one or two orders of magnitude slower for the Kingston DTI USB flash
//! drive"; Table 3's in-place x40 and reverse x8 on that drive):
//! - `ftl.log_pages`: a random log block is full after this many pages (the
//!   controller logs into one physical block while a unit spans several), so
//!   out-of-order writes to one unit force a full merge every `log_pages`
//!   pages instead of every superblock.
//! - `ftl.log_overwrite_merges`: a log holds one copy of each page (the
//!   controller finds a page's copy by position, without version numbers), so
//!   rewriting a page already in the unit's log merges the unit first. An
//!   in-place pattern then costs a merge per write, a reverse pattern (every
//!   page once) a merge per `log_pages`, and random writes in a small area
//!   stay about as expensive as anywhere: no locality area.
//! - `ftl.log_window`: a random log is a positional replacement for one
//!   aligned window of `log_pages` pages of its unit (a page sits at its own
//!   offset in the window, as in NFTL's replacement blocks; Gal & Toledo,
//!   ACM Computing Surveys 37(2), 2005, which uFLIP cites as [3]). Reverse
//!   writes walk through a window before they leave it (a merge per
//!   `log_pages` pages, as before), while random writes over more than one
//!   window leave it almost every write: a merge per write wherever they
//!   land, so random writes in a small area are no cheaper than anywhere
//!   (uFLIP 5.2: "some low end USB devices (e.g., Kingston DTI) do not show
//!   any benefit by focusing random IOs in a reduced area").
//!
//! And one option bounds the sequential logs, for partitioned writes:
//! - `ftl.seq_log_limit`: at most this many logs are open sequential logs
//!   (written in order from offset 0, not yet full); a log opened beyond
//!   them is a random log from its first page. FAST keeps a single
//!   sequential log block (Lee et al., ACM TECS 6(3), 2007); with one, of
//!   `p` concurrent sequential streams `p - 1` are logged like random writes
//!   and merged once per random log, so partitioned writes cost a multiple
//!   of a single stream before the log blocks run out (uFLIP Table 3's
//!   Partitioning column: "4 (x5)" on the Kingston DTI, "4 (x2)" on the
//!   Transcends; 5.2: "parallel execution with a high degree can cause
//!   multiple sequential write patterns to degenerate to random write
//!   patterns (more precisely to partitioned write patterns)").

use super::blocks::NONE;
use super::superblock::{sb_common, SbCore, SbKind};
use super::Ftl;
use crate::config::SimConfig;
use crate::error::SimError;
use crate::geometry::Geometry;
use crate::resources::Flash;
use crate::Nanos;

pub struct BastFtl {
    core: SbCore,
    max_logs: u32,
    /// Per unit: its log block (sequential or random), NONE if none.
    log_of: Vec<u32>,
    /// Units owning a log block, with the write sequence of their last log write.
    owners: Vec<(u32, u64)>,
    seq: u64,
    /// Pages a random log takes before it is full (`ftl.log_pages`, at most a superblock).
    rand_cap: u32,
    /// `ftl.log_overwrite_merges`.
    overwrite_merges: bool,
    /// `ftl.log_window`: per unit, the window (offset / `rand_cap`) its
    /// random log holds; empty when the option is off.
    window_of: Vec<u32>,
    /// `ftl.seq_log_limit` (0 = no limit).
    seq_limit: u32,
}

impl BastFtl {
    pub fn new(cfg: &SimConfig, geo: &Geometry) -> BastFtl {
        let core = SbCore::new(cfg, geo, cfg.ftl.log_blocks);
        let n_lu = core.n_lu as usize;
        BastFtl {
            max_logs: cfg.ftl.log_blocks.max(1),
            log_of: vec![NONE; n_lu],
            owners: Vec::with_capacity(cfg.ftl.log_blocks as usize),
            seq: 0,
            rand_cap: match cfg.ftl.log_pages {
                0 => core.n,
                p => p.min(core.n),
            },
            overwrite_merges: cfg.ftl.log_overwrite_merges,
            window_of: if cfg.ftl.log_window {
                vec![NONE; n_lu]
            } else {
                Vec::new()
            },
            seq_limit: cfg.ftl.seq_log_limit,
            core,
        }
    }

    /// Whether `log` can take no more pages: a sequential log when it holds the
    /// whole unit, a random log after `rand_cap` pages.
    fn log_full(&self, log: u32) -> bool {
        let c = &self.core;
        let cap = if c.sb_kind[log as usize] == SbKind::RandLog {
            self.rand_cap
        } else {
            c.n
        };
        c.sb_wp[log as usize] >= cap
    }

    /// Whether the newest copy of `lpn` (of unit `lu`) is in `lu`'s log `log`.
    fn in_log(&self, lpn: u64, lu: u32, off: u32, log: u32) -> bool {
        let c = &self.core;
        if c.seq_log[lu as usize] == log {
            off < c.sb_wp[log as usize]
        } else {
            c.is_inlog(lpn)
        }
    }

    /// Whether `off` lies outside the window `lu`'s random log holds
    /// (`ftl.log_window`; never when the option is off).
    fn outside_window(&self, lu: u32, off: u32) -> bool {
        !self.window_of.is_empty() && self.window_of[lu as usize] != off / self.rand_cap
    }

    /// Open sequential logs: written in order from offset 0, not yet full.
    fn open_seq_logs(&self) -> u32 {
        let c = &self.core;
        self.owners
            .iter()
            .filter(|&&(u, _)| {
                let l = self.log_of[u as usize];
                c.seq_log[u as usize] == l && c.sb_wp[l as usize] < c.n
            })
            .count() as u32
    }

    /// Merge unit `lu`'s log block into its data block and free the log.
    fn merge(&mut self, lu: u32, at: Nanos, flash: &mut Flash) -> Result<Nanos, SimError> {
        let log = self.log_of[lu as usize];
        debug_assert!(log != NONE);
        self.log_of[lu as usize] = NONE;
        self.owners.retain(|&(u, _)| u != lu);
        let c = &mut self.core;
        let end = if c.seq_log[lu as usize] == log {
            if c.sb_wp[log as usize] < c.n {
                flash.acct.merges_partial += 1;
            }
            c.switch(lu, at, flash)
        } else {
            let t = c.full_merge(lu, at, flash)?;
            c.erase_sb(log, t, flash)
        };
        c.maybe_check("a BAST merge")?;
        Ok(end)
    }
}

impl Ftl for BastFtl {
    fn name(&self) -> &'static str {
        "bast"
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
            let g = c.unit_group(lu);
            let sb = c.alloc(g, SbKind::Data, lu)?;
            c.data_sb[lu as usize] = sb;
        }
        if self.log_of[lu as usize] == NONE {
            let d = c.data_sb[lu as usize];
            if off >= c.sb_wp[d as usize] {
                return Ok(c.program_data(lpn, at, flash));
            }
        }
        let mut t = at;
        self.seq += 1;
        let mut log = self.log_of[lu as usize];
        if log != NONE && self.overwrite_merges && self.in_log(lpn, lu, off, log) {
            // the log cannot hold a second copy of this page
            t = self.merge(lu, t, flash)?;
            log = NONE;
        }
        if log != NONE
            && self.core.sb_kind[log as usize] == SbKind::RandLog
            && self.outside_window(lu, off)
        {
            // a positional log holds one window of its unit
            t = self.merge(lu, t, flash)?;
            log = NONE;
        }
        if log != NONE && self.log_full(log) {
            t = self.merge(lu, t, flash)?;
            log = NONE;
        }
        if log == NONE {
            if self.owners.len() as u32 >= self.max_logs {
                let victim = self
                    .owners
                    .iter()
                    .min_by_key(|&&(_, s)| s)
                    .map(|&(u, _)| u)
                    .unwrap_or(NONE);
                t = self.merge(victim, t, flash)?;
            }
            let seq_allowed = self.seq_limit == 0 || self.open_seq_logs() < self.seq_limit;
            // a log starts sequential: at offset 0 in its own positions
            log = self.core.open_seq(lu)?;
            self.log_of[lu as usize] = log;
            self.owners.push((lu, self.seq));
            if !seq_allowed {
                // no sequential log left: a random log from its first page
                self.core.demote_seq(lu)?;
                if !self.window_of.is_empty() {
                    self.window_of[lu as usize] = off / self.rand_cap;
                }
            }
        } else if let Some(o) = self.owners.iter_mut().find(|(u, _)| *u == lu) {
            o.1 = self.seq;
        }
        let c = &mut self.core;
        if c.seq_log[lu as usize] == log {
            if off == c.sb_wp[log as usize] {
                return Ok(c.program_seq(lpn, t, flash));
            }
            // out of order: the log becomes a random log block of this unit
            let wp = c.sb_wp[log as usize];
            c.demote_seq(lu)?;
            // a positional log keeps the in-order pages only if they and
            // this page share one window
            let window = off / self.rand_cap;
            let spans = !self.window_of.is_empty() && wp > 0 && (wp > self.rand_cap || window != 0);
            if self.log_full(log) || spans {
                // already past a random log's capacity (or its window): merge, start a new log
                let t = self.merge(lu, t, flash)?;
                return self.write(lpn, _partial, t, flash);
            }
            if !self.window_of.is_empty() {
                self.window_of[lu as usize] = window;
            }
        }
        Ok(self.core.program_rand(log, lpn, t, flash))
    }

    fn idle(&mut self, _from: Nanos, _deadline: Nanos, _flash: &mut Flash) -> Result<(), SimError> {
        Ok(())
    }

    fn check(&self) -> Result<(), SimError> {
        self.core.check()?;
        for &(u, _) in &self.owners {
            let l = self.log_of[u as usize];
            let k = self.core.sb_kind[l as usize];
            if l == NONE || !(k == SbKind::SeqLog || k == SbKind::RandLog) {
                return Err(SimError::Invariant(format!(
                    "unit {u} listed as owning log {l} of kind {k:?}"
                )));
            }
        }
        Ok(())
    }

    fn memory_bytes(&self) -> usize {
        self.core.memory_bytes()
            + self.log_of.capacity() * 4
            + self.window_of.capacity() * 4
            + self.owners.capacity() * 12
    }
}
