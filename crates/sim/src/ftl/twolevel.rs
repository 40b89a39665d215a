//! The two-level small-chunk map of Budilovsky, Toledo & Zuck ("Prototyping a
//! high-performance low-cost solid-state disk", SYSTOR 2011, sections 3-4),
//! with host-assisted hints. Data placement, garbage collection and wear
//! levelling are the page FTL's ([`super::page`]).
//!
//! - **Map.** The page map is cut into *chunks* of `c = ftl.chunk_entries`
//!   4-byte entries (256 bytes for the paper's default c = 64; `0` means one
//!   flash page of entries, the paper's "DFTL-like" configuration). The *root
//!   array* in RAM holds, per chunk, its flash address and a version number.
//! - **Reads of chunks.** A host access needs the chunk of its page: from a
//!   current host hint, from the controller's RAM (a chunk cache of
//!   `ftl.map_cache / (4 c)` chunks, LRU, plus the dirty chunks waiting to be
//!   written), or by reading the chunk from flash: the page is read in the die
//!   but only the chunk's bytes cross the NAND bus (each chunk has its own ECC,
//!   section 3), cause `mapping`.
//! - **Writes of chunks.** A write (or TRIM) modifies its chunk and bumps its
//!   version; modified chunks are written lazily, one flash page of dirty
//!   chunks at a time (page_bytes / (4 c) chunks, Figure 4), cause `mapping`.
//!   With page-sized chunks that is one page write per modification ("we
//!   commit the chunks immediately", section 7).
//! - **Hints (section 4).** When `ftl.hints.enabled`, the SSD sends every chunk
//!   it reads or modifies to the host, which keeps them in a cache of
//!   `ftl.hints.host_chunks` chunks (LRU; 0 = the whole map) and attaches the
//!   chunks covering a request to it. The SSD uses a hinted chunk only if its
//!   version equals the root array's. **The host's cache is modelled inside the
//!   simulator** because hints travel with requests and the Device interface
//!   has no hint channel; its memory is host memory, not SSD RAM.
//! - **Garbage collection** relocates pages and so modifies their chunks: a
//!   chunk not in RAM is read first. As in the paper, chunk reads made by the
//!   garbage collector are accounted as `gc` (`map_gc_reads`), all chunk-page
//!   writes as `mapping`.
//!
//! Counters: `map_lookups`, `map_hint_hits`, `map_hint_stale`, `map_ram_hits`,
//! `map_flash_reads` (host accesses that needed a chunk read: Figure 10),
//! `map_page_writes`.

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

struct HostHints {
    cache: Lru,
    version: Vec<u32>,
}

pub struct TwoLevelFtl {
    inner: PageFtl,
    /// Entries per chunk.
    c: u64,
    chunk_bytes: u64,
    chunks_per_page: usize,
    version: Vec<u32>,
    chunk_die: Vec<u16>,
    cache: Lru,
    dirty: Vec<bool>,
    dirty_list: Vec<u32>,
    hints: Option<HostHints>,
    store: MapStore,
}

impl TwoLevelFtl {
    pub fn new(cfg: &SimConfig, geo: &Geometry) -> TwoLevelFtl {
        let mut inner = PageFtl::new(cfg, geo);
        inner.relocated = Some(Vec::new());
        let per_page = (geo.page_bytes / 4).max(1);
        let c = match cfg.ftl.chunk_entries {
            0 => per_page,
            c => (c as u64).min(per_page),
        };
        let chunk_bytes = c * 4;
        let chunks_per_page = (geo.page_bytes / chunk_bytes).max(1) as usize;
        let n_chunks = geo.logical_pages.div_ceil(c);
        let cache_chunks = (cfg.ftl.map_cache.0 / chunk_bytes).max(1);
        let hints = cfg.ftl.hints.enabled.then(|| {
            let cap = match cfg.ftl.hints.host_chunks {
                0 => n_chunks,
                h => h.min(n_chunks),
            };
            HostHints {
                cache: Lru::new(n_chunks, cap),
                version: vec![0; n_chunks as usize],
            }
        });
        TwoLevelFtl {
            inner,
            c,
            chunk_bytes,
            chunks_per_page,
            version: vec![0; n_chunks as usize],
            chunk_die: vec![NO_DIE; n_chunks as usize],
            cache: Lru::new(n_chunks, cache_chunks),
            dirty: vec![false; n_chunks as usize],
            dirty_list: Vec::with_capacity(chunks_per_page),
            hints,
            store: MapStore::new(geo.units, geo.pages_per_block),
        }
    }

    /// Chunks in the map.
    pub fn chunks(&self) -> u64 {
        self.version.len() as u64
    }

    #[inline]
    fn push_to_host(&mut self, ch: u32) {
        if let Some(h) = self.hints.as_mut() {
            h.cache.insert(ch);
            h.version[ch as usize] = self.version[ch as usize];
        }
    }

    /// Whether chunk `ch` is in the controller's RAM (touches the LRU). Dirty
    /// chunks are always in RAM (they wait to be written), whether or not the
    /// LRU of clean chunks still lists them.
    #[inline]
    fn in_ram(&mut self, ch: u32) -> bool {
        self.dirty[ch as usize] || self.cache.touch(ch)
    }

    /// Read chunk `ch` from flash into RAM; returns when it is there.
    fn fetch(&mut self, ch: u32, cause: Cause, at: Nanos, flash: &mut Flash) -> Nanos {
        let d = self.chunk_die[ch as usize];
        let t = if d == NO_DIE {
            at
        } else {
            flash.read_bytes(d as u32, cause, at, self.chunk_bytes)
        };
        self.cache.insert(ch);
        self.push_to_host(ch);
        t
    }

    /// Host access to `lpn`: find its chunk; returns when the mapping is known.
    fn lookup(&mut self, lpn: u64, at: Nanos, flash: &mut Flash) -> Nanos {
        flash.acct.map_lookups += 1;
        let ch = (lpn / self.c) as u32;
        if let Some(h) = self.hints.as_mut() {
            if h.cache.contains(ch) {
                if h.version[ch as usize] == self.version[ch as usize] {
                    h.cache.touch(ch);
                    flash.acct.map_hint_hits += 1;
                    return at;
                }
                flash.acct.map_hint_stale += 1;
            }
        }
        if self.in_ram(ch) || self.chunk_die[ch as usize] == NO_DIE {
            flash.acct.map_ram_hits += 1;
            return at;
        }
        flash.acct.map_flash_reads += 1;
        self.fetch(ch, Cause::Mapping, at, flash)
    }

    /// Chunk `ch` was modified at `at`: new version, dirty, sent to the host;
    /// a page of dirty chunks is written out.
    fn modify(&mut self, ch: u32, at: Nanos, flash: &mut Flash) {
        self.version[ch as usize] = self.version[ch as usize].wrapping_add(1);
        if !self.dirty[ch as usize] {
            self.dirty[ch as usize] = true;
            self.dirty_list.push(ch);
        }
        self.push_to_host(ch);
        if self.dirty_list.len() >= self.chunks_per_page {
            let (die, _) = self.store.write(at, flash);
            for ch in std::mem::take(&mut self.dirty_list) {
                self.dirty[ch as usize] = false;
                self.chunk_die[ch as usize] = die as u16;
                self.cache.insert(ch);
            }
        }
    }

    fn after_gc(&mut self, at: Nanos, flash: &mut Flash) {
        let Some(moved) = self.inner.relocated.as_mut() else {
            return;
        };
        if moved.is_empty() {
            return;
        }
        let mut moved = std::mem::take(moved);
        for &l in &moved {
            let ch = (l as u64 / self.c) as u32;
            if !self.in_ram(ch) {
                // read the chunk (the host gets it with the modification below)
                flash.acct.map_gc_reads += 1;
                let d = self.chunk_die[ch as usize];
                if d != NO_DIE {
                    flash.read_bytes(d as u32, Cause::Gc, at, self.chunk_bytes);
                }
                self.cache.insert(ch);
            }
            flash.acct.map_gc_updates += 1;
            self.modify(ch, at, flash);
        }
        moved.clear();
        self.inner.relocated = Some(moved);
    }
}

impl Ftl for TwoLevelFtl {
    fn name(&self) -> &'static str {
        "two-level"
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
        self.modify((lpn / self.c) as u32, t, flash);
        self.after_gc(t, flash);
        Ok(end)
    }

    fn trim(&mut self, lpn: u64, at: Nanos, flash: &mut Flash) -> Result<(), SimError> {
        if self.inner.is_mapped(lpn) {
            let t = self.lookup(lpn, at, flash);
            self.inner.trim(lpn, t, flash)?;
            flash.acct.map_host_updates += 1;
            self.modify((lpn / self.c) as u32, t, flash);
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
        self.inner.check()?;
        let n = self.dirty.iter().filter(|&&d| d).count();
        if n != self.dirty_list.len() || n >= self.chunks_per_page {
            return Err(SimError::Invariant(format!(
                "{n} dirty chunks, {} listed, page holds {}",
                self.dirty_list.len(),
                self.chunks_per_page
            )));
        }
        Ok(())
    }

    fn memory_bytes(&self) -> usize {
        self.inner.memory_bytes()
            + self.version.capacity() * 4
            + self.chunk_die.capacity() * 2
            + self.cache.memory_bytes()
            + self.dirty.capacity()
            + self
                .hints
                .as_ref()
                .map_or(0, |h| h.cache.memory_bytes() + h.version.capacity() * 4)
    }
}
