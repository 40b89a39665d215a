//! Metadata synchronisation (Chen, Koufaty & Zhang, SIGMETRICS 2009, section
//! 5.7): the FTL keeps map updates in a volatile buffer and periodically
//! flushes them to flash; "with limited buffer space, SSD-L has to frequently
//! lock the in-memory data structure and flush the metadata ... which could
//! cause a high spike to appear repeatedly", and "the more random writes are,
//! the more indexing nodes have to be updated".
//!
//! A wrapper around any FTL (`[ftl.sync] enabled = true`). Every host page write
//! dirties the map page covering it (`entries_per_page` entries, default
//! page_bytes / 4). After `interval_writes` host page writes, or when
//! `dirty_limit` map pages are dirty, the dirty map pages plus `extra_pages`
//! (a root / commit record) are written one after another on one die
//! (rotating), cause `mapping` (`map_syncs`, `map_sync_pages`). With `blocking`
//! (the default) the map is locked meanwhile: no flash operation of the
//! wrapped FTL starts before the flush ends, so the requests behind it see a
//! latency spike. With `per_request`, `interval_writes` counts host write
//! requests rather than page writes (one 256 KiB write is one request, as
//! Chen et al. count SSD-L's spikes "every 64 requests" of 4 KiB). Sequential writes dirty one map page per `entries_per_page`
//! writes, random writes up to one per write: the spikes grow with randomness.

use super::mapstore::MapStore;
use super::Ftl;
use crate::config::SyncConfig;
use crate::error::{CheckpointError, SimError};
use crate::geometry::Geometry;
use crate::resources::Flash;
use crate::Nanos;

pub struct SyncFtl {
    inner: Box<dyn Ftl>,
    cfg: SyncConfig,
    epp: u64,
    dirty: Vec<u64>,
    dirty_list: Vec<u32>,
    writes: u64,
    blocked_until: Nanos,
    store: MapStore,
    die: u32,
    units: u32,
    /// No page of the current host request written yet (`per_request` counting).
    new_request: bool,
    /// Pages of the current host write request (`flush_non_sequential`).
    req_pages: u64,
    /// When the latest flush's last page is programmed.
    last_flush_end: Nanos,
    /// The page after the previous host write's last (`flush_non_sequential`).
    next_lpn: u64,
}

impl SyncFtl {
    pub fn new(inner: Box<dyn Ftl>, cfg: &SyncConfig, geo: &Geometry) -> SyncFtl {
        let epp = match cfg.entries_per_page {
            0 => (geo.page_bytes / 4).max(1),
            e => e as u64,
        };
        let pages = geo.logical_pages.div_ceil(epp);
        SyncFtl {
            inner,
            cfg: cfg.clone(),
            epp,
            dirty: vec![0; pages.div_ceil(64) as usize],
            dirty_list: Vec::new(),
            writes: 0,
            blocked_until: 0,
            store: MapStore::new(geo.units, geo.pages_per_block),
            die: 0,
            units: geo.units,
            new_request: true,
            req_pages: 0,
            last_flush_end: 0,
            next_lpn: u64::MAX,
        }
    }

    fn flush(&mut self, at: Nanos, flash: &mut Flash) {
        let pages = self.dirty_list.len() as u64 + self.cfg.extra_pages as u64;
        for &p in &self.dirty_list {
            self.dirty[(p >> 6) as usize] &= !(1u64 << (p & 63));
        }
        self.dirty_list.clear();
        self.writes = 0;
        let die = self.die;
        self.die = (self.die + 1) % self.units;
        let mut t = at;
        for _ in 0..pages {
            t = self.store.write_on(die, t, flash).1;
        }
        flash.acct.map_syncs += 1;
        flash.acct.map_sync_pages += pages;
        self.last_flush_end = t;
        if self.cfg.blocking {
            self.blocked_until = self.blocked_until.max(t);
        }
    }
}

impl Ftl for SyncFtl {
    fn name(&self) -> &'static str {
        self.inner.name()
    }

    fn begin_request(&mut self) {
        self.new_request = true;
        self.inner.begin_request();
    }

    fn begin_write(&mut self, pages: u64) {
        self.req_pages = pages;
        self.inner.begin_write(pages);
    }

    super::forward_to_inner!();

    fn read(&mut self, lpn: u64, at: Nanos, flash: &mut Flash) -> Result<Nanos, SimError> {
        self.inner.read(lpn, at.max(self.blocked_until), flash)
    }

    fn write(
        &mut self,
        lpn: u64,
        partial: bool,
        at: Nanos,
        flash: &mut Flash,
    ) -> Result<Nanos, SimError> {
        let end = self
            .inner
            .write(lpn, partial, at.max(self.blocked_until), flash)?;
        let p = lpn / self.epp;
        let w = &mut self.dirty[(p >> 6) as usize];
        if *w >> (p & 63) & 1 == 0 {
            *w |= 1 << (p & 63);
            self.dirty_list.push(p as u32);
        }
        let first_of_request = self.new_request;
        if !self.cfg.per_request || self.new_request {
            self.writes += 1;
        }
        self.new_request = false;
        // Chen et al. 5.5: SSD-L tells a sequential write by the previous
        // write request's LBN; one that breaks the sequence is written
        // directly, and (5.7) its map update cannot wait in the small buffer:
        // the write completes once its map page is on flash too.
        let continues = lpn == self.next_lpn;
        self.next_lpn = lpn + 1;
        if self.cfg.flush_non_sequential && first_of_request && !continues && self.req_pages <= 1 {
            self.flush(end, flash);
            return Ok(end.max(self.last_flush_end));
        }
        let due = (self.cfg.interval_writes > 0 && self.writes >= self.cfg.interval_writes)
            || (self.cfg.dirty_limit > 0 && self.dirty_list.len() as u32 >= self.cfg.dirty_limit);
        if due {
            self.flush(end, flash);
        }
        Ok(end)
    }

    fn trim(&mut self, lpn: u64, at: Nanos, flash: &mut Flash) -> Result<(), SimError> {
        self.inner.trim(lpn, at.max(self.blocked_until), flash)
    }

    fn idle(
        &mut self,
        idle_from: Nanos,
        deadline: Nanos,
        flash: &mut Flash,
    ) -> Result<(), SimError> {
        self.inner
            .idle(idle_from.max(self.blocked_until), deadline, flash)
    }

    fn check(&self) -> Result<(), SimError> {
        self.inner.check()
    }

    fn memory_bytes(&self) -> usize {
        self.inner.memory_bytes() + self.dirty.capacity() * 8 + self.dirty_list.capacity() * 4
    }

    /// Device mode: the wrapped FTL's state, then the buffer of dirty map
    /// pages and the flush clock, so that a restored device flushes at the
    /// same write as the saved one would have.
    fn save_state(&self, out: &mut crate::codec::Enc) -> Result<(), SimError> {
        self.inner.save_state(out)?;
        out.vec_u64(&self.dirty);
        out.vec_u32(&self.dirty_list);
        out.u64(self.writes);
        out.u64(self.blocked_until);
        out.u32(self.die);
        out.u8(self.new_request as u8);
        if self.cfg.flush_non_sequential {
            // only with the option on, so other profiles' checkpoints keep their layout
            out.u64(self.next_lpn);
        }
        self.store.save_state(out);
        Ok(())
    }

    fn load_state(&mut self, inp: &mut crate::codec::Dec) -> Result<(), SimError> {
        self.inner.load_state(inp)?;
        let dirty = inp.vec_u64()?;
        let dirty_list = inp.vec_u32()?;
        let map_pages = self.dirty.len() as u64 * 64;
        let consistent = dirty.len() == self.dirty.len()
            && dirty_list
                .iter()
                .all(|&p| (p as u64) < map_pages && dirty[(p >> 6) as usize] >> (p & 63) & 1 == 1)
            && dirty.iter().map(|w| w.count_ones() as usize).sum::<usize>() == dirty_list.len();
        if !consistent {
            return Err(CheckpointError::Malformed(
                "checkpoint map buffer: dirty pages and their list disagree",
            )
            .into());
        }
        self.dirty = dirty;
        self.dirty_list = dirty_list;
        self.writes = inp.u64()?;
        self.blocked_until = inp.u64()?;
        let die = inp.u32()?;
        if die >= self.units {
            return Err(
                CheckpointError::Malformed("checkpoint map buffer: die out of range").into(),
            );
        }
        self.die = die;
        self.new_request = inp.u8()? != 0;
        if self.cfg.flush_non_sequential {
            self.next_lpn = inp.u64()?;
        }
        self.store.load_state(inp)
    }

    fn after_prefill(&mut self) {
        self.inner.after_prefill();
        // The fill's map is on flash when the device starts (Chen et al.
        // 5.1: after the initial overwrite "the status would remain
        // stable"): no map page is dirty, and the next flush writes only
        // what later writes change, not the whole map the fill touched.
        self.dirty.fill(0);
        self.dirty_list.clear();
        self.writes = 0;
        self.blocked_until = 0;
        self.last_flush_end = 0;
        // the first write after the fill is judged on its own
        self.next_lpn = u64::MAX;
    }
}
