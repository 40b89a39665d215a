//! DFTL (Gupta, Kim & Urgaonkar, "DFTL: a flash translation layer employing
//! demand-based selective caching of page-level address mappings", ASPLOS
//! 2009): a page-level map stored on flash in *translation pages*
//! (`page_bytes / 4` entries each) with a global translation directory in RAM,
//! and a *cached mapping table* (CMT) of `ftl.map_cache / 8` entries (LRU).
//! Data placement, garbage collection and wear levelling are the page FTL's
//! ([`super::page`]).
//!
//! - A host access whose entry is not in the CMT reads its translation page
//!   (cause `mapping`, `map_flash_reads`); the entry enters the CMT.
//! - A write makes its entry dirty in the CMT. Evicting a dirty entry writes
//!   its translation page back: read the page, program the updated page
//!   (cause `mapping`); every other dirty entry of the same translation page
//!   is written with it (DFTL's batch update) and becomes clean.
//! - Garbage collection relocates pages: entries in the CMT are updated there
//!   (dirty); the others are updated in their translation pages, one read
//!   (counted as `gc`, `map_gc_reads`) and one program per translation page
//!   touched by the victim block (batch update).
//! - Translation pages are written round-robin over the dies ([`super::mapstore`]).

use super::lru::Lru;
use super::mapstore::MapStore;
use super::page::PageFtl;
use super::Ftl;
use crate::accounting::Cause;
use crate::config::SimConfig;
use crate::error::SimError;
use crate::geometry::Geometry;
use crate::resources::Flash;
use crate::Nanos;

const NO_DIE: u16 = u16::MAX;

pub struct DftlFtl {
    inner: PageFtl,
    /// Entries per translation page.
    epp: u64,
    /// Die of each translation page (NO_DIE: never written, all entries unmapped).
    tp_die: Vec<u16>,
    /// Write-back generation of each translation page.
    tgen: Vec<u32>,
    /// Per logical page: tgen + 1 of its translation page when it became dirty in the CMT.
    dirty_gen: Vec<u32>,
    cmt: Lru,
    store: MapStore,
    scratch: Vec<u32>,
    /// The translation page read for the current host request and when it
    /// arrived: the request's other pages find their entries in it (one
    /// translation read per request, not per data page).
    request_tp: Option<(u64, Nanos)>,
}

impl DftlFtl {
    pub fn new(cfg: &SimConfig, geo: &Geometry) -> DftlFtl {
        let mut inner = PageFtl::new(cfg, geo);
        inner.relocated = Some(Vec::new());
        let epp = (geo.page_bytes / 4).max(1);
        let n_tp = geo.logical_pages.div_ceil(epp);
        let entries = (cfg.ftl.map_cache.0 / 8).max(1);
        DftlFtl {
            inner,
            epp,
            tp_die: vec![NO_DIE; n_tp as usize],
            tgen: vec![0; n_tp as usize],
            dirty_gen: crate::mem::big_vec_u32(geo.logical_pages as usize, 0),
            cmt: Lru::new(geo.logical_pages, entries),
            store: MapStore::new(geo.units, geo.pages_per_block),
            scratch: Vec::new(),
            request_tp: None,
        }
    }

    #[inline]
    fn is_dirty(&self, lpn: u32) -> bool {
        let tp = lpn as u64 / self.epp;
        self.dirty_gen[lpn as usize] == self.tgen[tp as usize].wrapping_add(1)
    }

    #[inline]
    fn make_dirty(&mut self, lpn: u32) {
        let tp = lpn as u64 / self.epp;
        self.dirty_gen[lpn as usize] = self.tgen[tp as usize].wrapping_add(1);
    }

    /// Read-modify-write translation page `tp` (the read's cause given); returns the program's end.
    fn write_back(&mut self, tp: u64, read_cause: Cause, at: Nanos, flash: &mut Flash) -> Nanos {
        let mut t = at;
        let d = self.tp_die[tp as usize];
        if d != NO_DIE {
            t = flash.read(d as u32, read_cause, at);
            if read_cause == Cause::Gc {
                flash.acct.map_gc_reads += 1;
            }
        }
        let (die, end) = self.store.write(t, flash);
        self.tp_die[tp as usize] = die as u16;
        self.tgen[tp as usize] = self.tgen[tp as usize].wrapping_add(1);
        end
    }

    /// Make `lpn`'s entry available (CMT hit or translation-page read); returns when it is.
    fn lookup(&mut self, lpn: u64, at: Nanos, flash: &mut Flash) -> Nanos {
        flash.acct.map_lookups += 1;
        let l = lpn as u32;
        if self.cmt.touch(l) {
            flash.acct.map_ram_hits += 1;
            return at;
        }
        let mut t = at;
        if let Some(ev) = self.cmt.insert(l) {
            if self.is_dirty(ev) {
                t = self.write_back(ev as u64 / self.epp, Cause::Mapping, t, flash);
            }
        }
        let tp = lpn / self.epp;
        let d = self.tp_die[tp as usize];
        if d == NO_DIE {
            flash.acct.map_ram_hits += 1;
            return t;
        }
        if let Some((rtp, ready)) = self.request_tp {
            if rtp == tp {
                flash.acct.map_ram_hits += 1;
                return t.max(ready);
            }
        }
        flash.acct.map_flash_reads += 1;
        let ready = flash.read(d as u32, Cause::Mapping, t);
        self.request_tp = Some((tp, ready));
        ready
    }

    /// Update the map for pages the garbage collector relocated.
    fn after_gc(&mut self, at: Nanos, flash: &mut Flash) {
        let Some(moved) = self.inner.relocated.as_mut() else {
            return;
        };
        if moved.is_empty() {
            return;
        }
        let mut moved = std::mem::take(moved);
        flash.acct.map_gc_updates += moved.len() as u64;
        self.scratch.clear();
        for &l in &moved {
            if self.cmt.contains(l) {
                self.make_dirty(l);
            } else {
                self.scratch.push((l as u64 / self.epp) as u32);
            }
        }
        self.scratch.sort_unstable();
        self.scratch.dedup();
        let tps = std::mem::take(&mut self.scratch);
        for &tp in &tps {
            self.write_back(tp as u64, Cause::Gc, at, flash);
        }
        self.scratch = tps;
        moved.clear();
        self.inner.relocated = Some(moved);
    }
}

impl Ftl for DftlFtl {
    fn name(&self) -> &'static str {
        "dftl"
    }

    fn begin_request(&mut self) {
        self.request_tp = None;
    }

    super::forward_to_inner!();

    fn read(&mut self, lpn: u64, at: Nanos, flash: &mut Flash) -> Result<Nanos, SimError> {
        let t = self.lookup(lpn, at, flash);
        self.inner.read(lpn, t, flash)
    }

    fn write(
        &mut self,
        lpn: u64,
        partial: bool,
        at: Nanos,
        flash: &mut Flash,
    ) -> Result<Nanos, SimError> {
        let t = self.lookup(lpn, at, flash);
        let end = self.inner.write(lpn, partial, t, flash)?;
        flash.acct.map_host_updates += 1;
        self.make_dirty(lpn as u32);
        self.after_gc(t, flash);
        Ok(end)
    }

    fn trim(&mut self, lpn: u64, at: Nanos, flash: &mut Flash) -> Result<(), SimError> {
        if self.inner.is_mapped(lpn) {
            let t = self.lookup(lpn, at, flash);
            self.inner.trim(lpn, t, flash)?;
            self.make_dirty(lpn as u32);
        }
        Ok(())
    }

    fn idle(
        &mut self,
        idle_from: Nanos,
        deadline: Nanos,
        flash: &mut Flash,
    ) -> Result<(), SimError> {
        self.inner.idle(idle_from, deadline, flash)?;
        self.after_gc(idle_from, flash);
        Ok(())
    }

    fn check(&self) -> Result<(), SimError> {
        self.inner.check()
    }

    fn memory_bytes(&self) -> usize {
        self.inner.memory_bytes()
            + self.cmt.memory_bytes()
            + self.dirty_gen.capacity() * 4
            + self.tp_die.capacity() * 2
            + self.tgen.capacity() * 4
    }
}
