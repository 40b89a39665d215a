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
use std::collections::BinaryHeap;

use crate::Nanos;

/// Why a page entering the cache had to wait for a slot.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Wait {
    /// It got one at once.
    None,
    /// Every slot held a page (`cache.size`).
    Full,
    /// The write-backs in flight filled the back-pressure window
    /// (`cache.writeback_window`) while the cache had room.
    Window,
}

pub struct WriteCache {
    capacity: usize,
    /// At most this many write-backs in flight (<= capacity). Every cached
    /// page is written back at once and leaves the cache when programmed, so
    /// the pages in the cache are the write-backs in flight.
    window: usize,
    pub serve_reads: bool,
    /// Slot release times (write-back end) with their page.
    slots: SlotQueue,
    /// Page -> release time (write-back program end) of its newest copy in the cache.
    pages: PageTable,
    /// The latest write-back end of any page ever inserted: when every
    /// write-back placed so far has ended (`cache.flush_on_read`).
    last_release: Nanos,
}

impl WriteCache {
    /// A cache of `capacity_pages`, at most `window_pages` of them being
    /// written back at once (0: no window).
    pub fn new(capacity_pages: usize, window_pages: usize, serve_reads: bool) -> WriteCache {
        let capacity = capacity_pages.max(1);
        WriteCache {
            capacity,
            window: if window_pages == 0 {
                capacity
            } else {
                window_pages.min(capacity)
            },
            serve_reads,
            slots: SlotQueue::new(),
            pages: PageTable::new(),
            last_release: 0,
        }
    }

    fn release_one(&mut self) -> Option<Nanos> {
        let (t, lpn) = self.slots.pop()?;
        self.pages.remove_if(lpn, t);
        Some(t)
    }

    /// The time a page arriving at `at` gets a slot (>= `at`), and what it waited for.
    pub fn admit(&mut self, at: Nanos) -> (Nanos, Wait) {
        while let Some(t) = self.slots.peek_time() {
            if t > at {
                break;
            }
            self.release_one();
        }
        if self.slots.len() < self.window {
            (at, Wait::None)
        } else {
            // the earliest write-back to end frees its slot
            let wait = if self.slots.len() >= self.capacity {
                Wait::Full
            } else {
                Wait::Window
            };
            let t = self.release_one().unwrap_or(at);
            (t.max(at), wait)
        }
    }

    /// Record page `lpn` in the cache until its write-back ends at `release`.
    pub fn insert(&mut self, lpn: u64, release: Nanos) {
        debug_assert!(self.slots.len() < self.window);
        self.slots.push(release, lpn);
        self.pages.insert(lpn, release);
        self.last_release = self.last_release.max(release);
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
            .get(lpn)
            .is_some_and(|release| release.saturating_sub(program_ns) > at)
    }

    /// Forget the cached copy of page `lpn` (TRIM): its slot stays taken until
    /// the write-back ends, but it no longer serves reads or absorbs rewrites.
    pub fn discard(&mut self, lpn: u64) {
        if !self.pages.is_empty() {
            self.pages.remove(lpn);
        }
    }

    /// If page `lpn` is in the cache at time `at`, when its write-back ends.
    #[inline]
    pub fn lookup(&self, lpn: u64, at: Nanos) -> Option<Nanos> {
        if self.pages.is_empty() {
            return None;
        }
        self.pages.get(lpn).filter(|&t| t > at)
    }

    /// When every write-back placed so far has ended (a running maximum, so a
    /// read need not scan the slots): what a read waits for with
    /// `cache.flush_on_read`.
    #[inline]
    pub fn writebacks_end(&self) -> Nanos {
        self.last_release
    }

    /// When the last write-back ends.
    pub fn drained_at(&self) -> Nanos {
        self.slots.max_time().unwrap_or(0)
    }

    pub fn memory_bytes(&self) -> usize {
        self.slots.memory_bytes() + self.pages.memory_bytes()
    }

    /// A write of page `lpn` is about to be issued: start loading its entry.
    #[inline]
    pub fn prefetch(&self, lpn: u64) {
        self.pages.prefetch(lpn);
    }
}

/// Page -> release time of its newest copy: open addressing with linear
/// probing, at most half full (a lookup is one cache line, where a general
/// hash map reads a control line, then an entry line). Deterministic: a
/// fixed multiplicative hash, and nothing iterates it.
struct PageTable {
    /// (page, release time); page `EMPTY` is a free entry.
    entries: Vec<(u64, Nanos)>,
    /// 64 - log2(entries.len()): the hash's top bits pick the home entry.
    shift: u32,
    len: usize,
}

const EMPTY: u64 = u64::MAX;

impl PageTable {
    fn new() -> PageTable {
        PageTable {
            entries: vec![(EMPTY, 0); 64],
            shift: 64 - 6,
            len: 0,
        }
    }

    #[inline]
    fn mask(&self) -> usize {
        self.entries.len() - 1
    }

    #[inline]
    fn home(&self, lpn: u64) -> usize {
        (lpn.wrapping_mul(0x9e37_79b9_7f4a_7c15) >> self.shift) as usize
    }

    #[inline]
    fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The entry holding `lpn`, or the free entry where it would go.
    #[inline]
    fn slot(&self, lpn: u64) -> usize {
        debug_assert_ne!(lpn, EMPTY);
        let mask = self.mask();
        let mut i = self.home(lpn);
        loop {
            let k = self.entries[i].0;
            if k == lpn || k == EMPTY {
                return i;
            }
            i = (i + 1) & mask;
        }
    }

    #[inline]
    fn get(&self, lpn: u64) -> Option<Nanos> {
        let e = self.entries[self.slot(lpn)];
        (e.0 == lpn).then_some(e.1)
    }

    #[inline]
    fn insert(&mut self, lpn: u64, t: Nanos) {
        let i = self.slot(lpn);
        if self.entries[i].0 == lpn {
            self.entries[i].1 = t;
            return;
        }
        self.entries[i] = (lpn, t);
        self.len += 1;
        if self.len * 2 > self.entries.len() {
            self.grow();
        }
    }

    #[cold]
    fn grow(&mut self) {
        let size = self.entries.len() * 2;
        let old = std::mem::replace(&mut self.entries, vec![(EMPTY, 0); size]);
        self.shift -= 1;
        for (lpn, t) in old {
            if lpn != EMPTY {
                let i = self.slot(lpn);
                self.entries[i] = (lpn, t);
            }
        }
    }

    /// Remove `lpn` if its release time is `t` (its newest copy).
    #[inline]
    fn remove_if(&mut self, lpn: u64, t: Nanos) {
        let i = self.slot(lpn);
        if self.entries[i] == (lpn, t) {
            self.remove_at(i);
        }
    }

    #[inline]
    fn remove(&mut self, lpn: u64) {
        let i = self.slot(lpn);
        if self.entries[i].0 == lpn {
            self.remove_at(i);
        }
    }

    /// Empty entry `i`, moving later entries of its probe run back so that
    /// every entry stays reachable from its home (no tombstones).
    fn remove_at(&mut self, mut i: usize) {
        let mask = self.mask();
        let mut j = i;
        loop {
            j = (j + 1) & mask;
            let k = self.entries[j].0;
            if k == EMPTY {
                break;
            }
            let h = self.home(k);
            // entry j may move to i unless its home lies cyclically in (i, j]
            let stays = if i <= j {
                i < h && h <= j
            } else {
                i < h || h <= j
            };
            if !stays {
                self.entries[i] = self.entries[j];
                i = j;
            }
        }
        self.entries[i].0 = EMPTY;
        self.len -= 1;
    }

    #[inline]
    fn prefetch(&self, lpn: u64) {
        crate::mem::prefetch(&self.entries, self.home(lpn));
    }

    fn memory_bytes(&self) -> usize {
        self.entries.capacity() * 16
    }
}

/// The cache slots' release times, popped in (time, page) order: a radix
/// heap. A binary heap of the 8192 slots of a 32 MiB cache cost a third of
/// the simulator's time (13 levels of unpredictable comparisons per page);
/// here a push is an append and each entry moves down a bucket only a few
/// times before it is popped.
///
/// A radix heap needs every pushed time to be at least the last popped one.
/// That holds whenever the cache is full (a page enters at the time a slot
/// frees, and its write-back ends later), but not while slots are free, so a
/// time below `last` goes to a small ordinary heap, `low`, whose entries are
/// all below every bucket's: the order popped is exactly a heap's.
struct SlotQueue {
    /// Entries whose time was below `last` when pushed.
    low: BinaryHeap<Reverse<(Nanos, u64)>>,
    /// Bucket 0: time == `last`; bucket i >= 1: time and `last` differ
    /// first (from the top) in bit i - 1.
    buckets: Vec<Vec<(Nanos, u64)>>,
    /// Bit i set: bucket i is not empty.
    nonempty: u128,
    /// The smallest time in the buckets or below it (never decreases).
    last: Nanos,
    len: usize,
}

impl SlotQueue {
    fn new() -> SlotQueue {
        SlotQueue {
            low: BinaryHeap::new(),
            buckets: (0..65).map(|_| Vec::new()).collect(),
            nonempty: 0,
            last: 0,
            len: 0,
        }
    }

    #[inline]
    fn len(&self) -> usize {
        self.len
    }

    #[inline]
    fn bucket(&self, t: Nanos) -> usize {
        (Nanos::BITS - (t ^ self.last).leading_zeros()) as usize
    }

    #[inline]
    fn push(&mut self, t: Nanos, lpn: u64) {
        self.len += 1;
        if t < self.last {
            self.low.push(Reverse((t, lpn)));
            return;
        }
        let b = self.bucket(t);
        self.buckets[b].push((t, lpn));
        self.nonempty |= 1 << b;
    }

    /// Make bucket 0 hold the smallest time (bucket 0 empty, some other not):
    /// raise `last` to the smallest time of the lowest non-empty bucket and
    /// spread that bucket over the buckets below it.
    fn redistribute(&mut self) {
        let i = self.nonempty.trailing_zeros() as usize;
        debug_assert!(i > 0 && i < 65);
        let mut v = std::mem::take(&mut self.buckets[i]);
        self.nonempty &= !(1 << i);
        self.last = v.iter().map(|&(t, _)| t).min().unwrap_or(self.last);
        for e in v.drain(..) {
            let b = self.bucket(e.0);
            self.buckets[b].push(e);
            self.nonempty |= 1 << b;
        }
        // keep the allocation for the next time this bucket fills
        self.buckets[i] = v;
    }

    /// The smallest time.
    #[inline]
    fn peek_time(&mut self) -> Option<Nanos> {
        if let Some(&Reverse((t, _))) = self.low.peek() {
            return Some(t);
        }
        if self.len == 0 {
            return None;
        }
        if self.nonempty & 1 == 0 {
            self.redistribute();
        }
        Some(self.last)
    }

    /// Remove the smallest (time, page).
    #[inline]
    fn pop(&mut self) -> Option<(Nanos, u64)> {
        if let Some(Reverse(e)) = self.low.pop() {
            self.len -= 1;
            return Some(e);
        }
        self.peek_time()?;
        let b0 = &mut self.buckets[0];
        // all of bucket 0 has time `last`: the smallest page goes first
        let mut k = 0;
        for j in 1..b0.len() {
            if b0[j].1 < b0[k].1 {
                k = j;
            }
        }
        let e = b0.swap_remove(k);
        if b0.is_empty() {
            self.nonempty &= !1;
        }
        self.len -= 1;
        Some(e)
    }

    fn max_time(&self) -> Option<Nanos> {
        let low = self.low.iter().map(|Reverse((t, _))| *t);
        let high = self.buckets.iter().flatten().map(|&(t, _)| t);
        low.chain(high).max()
    }

    fn memory_bytes(&self) -> usize {
        (self.low.capacity() + self.buckets.iter().map(Vec::capacity).sum::<usize>()) * 16
            + self.buckets.capacity() * 24
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The slot queue pops exactly what a binary heap of (time, page) pops,
    /// with times pushed below the last popped one (free slots), ties on
    /// time, and far-apart times.
    #[test]
    fn slot_queue_pops_in_the_same_order_as_a_binary_heap() {
        let mut rng = 0x9e37_79b9_7f4a_7c15u64;
        let mut next = move || {
            rng ^= rng << 13;
            rng ^= rng >> 7;
            rng ^= rng << 17;
            rng
        };
        let mut q = SlotQueue::new();
        let mut reference: BinaryHeap<Reverse<(Nanos, u64)>> = BinaryHeap::new();
        let mut now: Nanos = 0;
        for k in 0..200_000u32 {
            match next() % 8 {
                0..=3 => {
                    let t = match next() % 4 {
                        0 => now.saturating_sub(next() % 1000),
                        1 => now + next() % 4,
                        2 => now + next() % 1_000_000,
                        _ => now + (next() % (1 << 40)),
                    };
                    let lpn = next() % 64;
                    q.push(t, lpn);
                    reference.push(Reverse((t, lpn)));
                }
                4..=6 => {
                    let got = q.pop();
                    let want = reference.pop().map(|Reverse(e)| e);
                    assert_eq!(got, want, "pop {k}");
                    if let Some((t, _)) = got {
                        now = now.max(t);
                    }
                }
                _ => {
                    let want = reference.peek().map(|Reverse((t, _))| *t);
                    assert_eq!(q.peek_time(), want, "peek {k}");
                }
            }
            assert_eq!(q.len(), reference.len());
        }
        let want = reference.iter().map(|Reverse((t, _))| *t).max();
        assert_eq!(q.max_time(), want);
        while let Some(Reverse(e)) = reference.pop() {
            assert_eq!(q.pop(), Some(e));
        }
        assert_eq!(q.pop(), None);
    }

    /// The page table behaves as a map through growth and removals that
    /// shift probe runs back (many keys sharing few home entries).
    #[test]
    fn page_table_agrees_with_a_btree_map() {
        let mut rng = 0x1234_5678_9abc_def1u64;
        let mut next = move || {
            rng ^= rng << 13;
            rng ^= rng >> 7;
            rng ^= rng << 17;
            rng
        };
        let mut t = PageTable::new();
        let mut reference = std::collections::BTreeMap::new();
        for k in 0..300_000u64 {
            // a small key space at first (long probe runs, frequent hits), a wide one later
            let lpn = if k < 150_000 {
                next() % 700
            } else {
                next() % 5_000_000
            };
            match next() % 4 {
                0 | 1 => {
                    let v = next() % 100;
                    t.insert(lpn, v);
                    reference.insert(lpn, v);
                }
                2 => {
                    let v = next() % 100;
                    t.remove_if(lpn, v);
                    if reference.get(&lpn) == Some(&v) {
                        reference.remove(&lpn);
                    }
                }
                _ => {
                    t.remove(lpn);
                    reference.remove(&lpn);
                }
            }
            assert_eq!(t.get(lpn), reference.get(&lpn).copied(), "step {k}");
            assert_eq!(t.len, reference.len());
        }
        for (&lpn, &v) in &reference {
            assert_eq!(t.get(lpn), Some(v));
        }
    }
}
