//! The DRAM write-back cache.
//!
//! Model: a write's pages enter the cache once the host link has delivered
//! them; each page's write-back to flash starts at once in the background
//! (placed on the die and channel resources like any program) and its cache
//! slot is released when the program ends. A write completes when all its pages
//! are in the cache, so writes are absorbed at host-link speed while the flash
//! keeps up, and wait for the oldest write-back when all slots are taken.
//! Reads of a page still in the cache are served from DRAM, or, with
//! `serve_reads = false`, wait for its write-back and read flash (what Chen et
//! al. observed on SSD-M, section 5.5). A rewrite of a page whose write-back
//! has not started yet (`absorb_rewrites`) updates the DRAM copy: the pending
//! write-back programs the new data, no second program is placed.

use std::cmp::Reverse;
use std::collections::{BinaryHeap, HashMap};
use std::hash::{BuildHasherDefault, Hasher};

use crate::Nanos;

/// A fixed, deterministic hasher for page numbers (no per-process random state).
#[derive(Default, Clone, Copy)]
pub struct PageHasher(u64);

impl Hasher for PageHasher {
    fn finish(&self) -> u64 {
        self.0
    }
    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.0 = (self.0.rotate_left(5) ^ b as u64).wrapping_mul(0x51_7c_c1_b7_27_22_0a_95);
        }
    }
    fn write_u64(&mut self, n: u64) {
        self.0 = (self.0 ^ n).wrapping_mul(0x9e37_79b9_7f4a_7c15);
        self.0 ^= self.0 >> 29;
    }
}

pub type PageMap<V> = HashMap<u64, V, BuildHasherDefault<PageHasher>>;

pub struct WriteCache {
    capacity: usize,
    pub serve_reads: bool,
    /// Slot release times (write-back end) with their page.
    slots: BinaryHeap<Reverse<(Nanos, u64)>>,
    /// Page -> release time (write-back program end) of its newest copy in the cache.
    pages: PageMap<Nanos>,
}

impl WriteCache {
    pub fn new(capacity_pages: usize, serve_reads: bool) -> WriteCache {
        WriteCache {
            capacity: capacity_pages.max(1),
            serve_reads,
            slots: BinaryHeap::with_capacity(capacity_pages.max(1)),
            pages: PageMap::default(),
        }
    }

    fn release_one(&mut self) -> Option<Nanos> {
        let Reverse((t, lpn)) = self.slots.pop()?;
        if self.pages.get(&lpn) == Some(&t) {
            self.pages.remove(&lpn);
        }
        Some(t)
    }

    /// The time a page arriving at `at` gets a slot (>= `at`), and whether it had to wait.
    pub fn admit(&mut self, at: Nanos) -> (Nanos, bool) {
        while let Some(&Reverse((t, _))) = self.slots.peek() {
            if t > at {
                break;
            }
            self.release_one();
        }
        if self.slots.len() < self.capacity {
            (at, false)
        } else {
            let t = self.release_one().unwrap_or(at);
            (t.max(at), true)
        }
    }

    /// Record page `lpn` in the cache until its write-back ends at `release`.
    pub fn insert(&mut self, lpn: u64, release: Nanos) {
        debug_assert!(self.slots.len() < self.capacity);
        self.slots.push(Reverse((release, lpn)));
        self.pages.insert(lpn, release);
    }

    /// Whether a write of page `lpn` arriving at `at` finds the page dirty in
    /// the cache with its write-back program (the last `program_ns` before its
    /// release) not yet started: the DRAM copy absorbs it.
    #[inline]
    pub fn absorbs(&self, lpn: u64, at: Nanos, program_ns: Nanos) -> bool {
        if self.pages.is_empty() {
            return false;
        }
        self.pages
            .get(&lpn)
            .is_some_and(|&release| release.saturating_sub(program_ns) > at)
    }

    /// Forget the cached copy of page `lpn` (TRIM): its slot stays taken until
    /// the write-back ends, but it no longer serves reads or absorbs rewrites.
    pub fn discard(&mut self, lpn: u64) {
        if !self.pages.is_empty() {
            self.pages.remove(&lpn);
        }
    }

    /// If page `lpn` is in the cache at time `at`, when its write-back ends.
    #[inline]
    pub fn lookup(&self, lpn: u64, at: Nanos) -> Option<Nanos> {
        if self.pages.is_empty() {
            return None;
        }
        self.pages.get(&lpn).copied().filter(|&t| t > at)
    }

    /// When the last write-back ends.
    pub fn drained_at(&self) -> Nanos {
        self.slots
            .iter()
            .map(|Reverse((t, _))| *t)
            .max()
            .unwrap_or(0)
    }

    pub fn memory_bytes(&self) -> usize {
        self.slots.capacity() * 16 + self.pages.capacity() * 24
    }
}
