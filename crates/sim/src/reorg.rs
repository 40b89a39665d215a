//! Internal reorganisation under sustained writes (`[reorg]`, Hudlet &
//! Schall section 6, Figures 4 and 5): on a timer, and after TRIM.
//!
//! The controller's own work is modelled as what it is on the flash, block
//! erases, not as a slowdown factor: while a reorganisation runs, one erase
//! is placed every `erase_ns / (die_share x dies)` of simulated time, on the
//! dies in turn, so it takes `die_share` of each die's time and host programs
//! queue behind it. The erases are charged lazily, when a host write arrives,
//! at the times they were due (a die busy with earlier work starts them
//! later, as any operation). Nothing runs between writes further apart than
//! `sustained_gap_ns`: Figure 4's drops are seen under a write load, and
//! Figure 5's cleaning happens "while we were simultaneously applying a write
//! load". The FTL's block state is not touched: the erases stand for the
//! controller's search and consolidation, whose outcome the paper cannot
//! see; with `timed_frees_trimmed` a timed window's erases pay the
//! post-TRIM debt (the window frees the trimmed blocks first). Post-TRIM cleaning of a page-mapped FTL that later erases the same
//! blocks again in its own GC counts at most one extra erase per trimmed
//! block.

use flashlab_device::Nanos;

use crate::accounting::Cause;
use crate::config::ReorgConfig;
use crate::resources::Flash;

/// The reorganisation's schedule and what it still owes.
#[derive(Clone, Debug)]
pub struct Reorg {
    cfg: ReorgConfig,
    dies: u32,
    pages_per_block: u64,
    /// Simulated time between two erases, device-wide.
    gap_ns: Nanos,
    /// The die the next erase goes to.
    next_die: u32,
    /// The last host write's arrival (`None`: no write yet).
    last_write: Option<Nanos>,
    /// Work due before this time has been placed.
    cursor: Nanos,
    /// Start of the next (or current) timed reorganisation.
    window_start: Nanos,
    /// Post-TRIM erases still owed, and trimmed pages short of a block.
    owed_erases: u64,
    trimmed_pages: u64,
    /// Erases placed so far (timed and post-TRIM).
    erases: u64,
}

impl Reorg {
    pub fn new(cfg: &ReorgConfig, dies: u32, pages_per_block: u32, erase_ns: Nanos) -> Reorg {
        let per_die = (erase_ns as f64 / cfg.die_share).round() as Nanos;
        Reorg {
            cfg: cfg.clone(),
            dies: dies.max(1),
            pages_per_block: pages_per_block.max(1) as u64,
            gap_ns: (per_die / dies.max(1) as Nanos).max(1),
            next_die: 0,
            last_write: None,
            cursor: 0,
            window_start: 0,
            owed_erases: 0,
            trimmed_pages: 0,
            erases: 0,
        }
    }

    /// Erases the reorganisation has placed.
    pub fn erases(&self) -> u64 {
        self.erases
    }

    /// Post-TRIM erases still owed.
    pub fn owed_erases(&self) -> u64 {
        self.owed_erases
    }

    /// `pages` pages that held data were trimmed: their blocks are to be
    /// freed (`trim_cleaning`).
    pub fn trimmed(&mut self, pages: u64) {
        if !self.cfg.trim_cleaning {
            return;
        }
        self.trimmed_pages += pages;
        self.owed_erases += self.trimmed_pages / self.pages_per_block;
        self.trimmed_pages %= self.pages_per_block;
    }

    /// A host write arrives at `at`: place the work due since the last one.
    pub fn on_write(&mut self, at: Nanos, flash: &mut Flash) {
        let sustained = self
            .last_write
            .is_some_and(|last| at.saturating_sub(last) <= self.cfg.sustained_gap_ns);
        self.last_write = Some(at);
        if !sustained {
            // a new write load: the timer starts over, nothing ran while idle
            self.cursor = at;
            self.window_start = at + self.cfg.interval_ns;
            return;
        }
        // Bounded: at most sustained_gap_ns / gap_ns erases per write.
        while self.cursor < at {
            let timed = self.cfg.interval_ns > 0;
            let window_end = self.window_start + self.cfg.duration_ns;
            if timed && self.cursor >= window_end {
                self.window_start += self.cfg.interval_ns;
                continue;
            }
            let in_window = timed && self.cursor >= self.window_start;
            if !in_window && self.owed_erases == 0 {
                // idle until the next window (or this write)
                self.cursor = if timed { self.window_start.min(at) } else { at };
                continue;
            }
            // Outside a window only the debt runs; inside one, the window's
            // erases pay it when `timed_frees_trimmed` (one activity, not two).
            if self.owed_erases > 0 && (!in_window || self.cfg.timed_frees_trimmed) {
                self.owed_erases -= 1;
            }
            flash.erase(self.next_die, Cause::Gc, self.cursor);
            self.erases += 1;
            self.next_die = (self.next_die + 1) % self.dies;
            self.cursor += self.gap_ns;
        }
    }
}
