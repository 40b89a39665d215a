//! A resource's busy intervals, for placing work in the earliest idle gap
//! (backfilling).
//!
//! Channels and host-link directions are [`Timeline`]s: a transfer is placed
//! when its data is ready, in the first gap long enough for it, even if work
//! for a later time was placed before it. So a transfer for an idle die is not
//! held behind transfers queued for busy dies, and a read whose data is ready
//! early leaves the link before a read issued earlier whose data is not.
//!
//! Bounded: at most [`Timeline::MAX_INTERVALS`] intervals are kept (touching
//! ones merge); when more would be needed the smallest gaps are counted as
//! busy, which can only delay work, never overlap it (the bound is far above
//! what a channel holds in practice: about the write cache's pages per
//! channel). Intervals that ended before the device's clock are dropped
//! (`floor`). New work lands near the end (dies free up in step), so the
//! search and the insertion touch few intervals; everything is deterministic.

use std::collections::VecDeque;

use crate::Nanos;

#[derive(Clone, Debug, Default)]
pub struct Timeline {
    /// Disjoint busy intervals `[start, end)`, in time order.
    iv: VecDeque<(Nanos, Nanos)>,
    /// Nothing may be placed before this.
    floor: Nanos,
    /// Scratch for `compact`.
    gaps: Vec<Nanos>,
    /// The end of the first interval (0: none), kept here because `prune`
    /// asks for it before every placement, and the deque's front, thousands
    /// of intervals behind its back, is usually out of the CPU's caches.
    front_end: Nanos,
    /// The end of the last interval (0: none), kept here because nearly every
    /// placement lands after it (a die's transfers follow one another), and
    /// the deque's back, written a few placements ago, may be out of the
    /// CPU's caches by then.
    back_end: Nanos,
    /// When the last transfer placed by [`Timeline::place_priority`] ends.
    priority_free: Nanos,
}

impl Timeline {
    pub const MAX_INTERVALS: usize = 4096;

    pub fn new() -> Timeline {
        Timeline {
            iv: VecDeque::with_capacity(16),
            floor: 0,
            gaps: Vec::new(),
            front_end: 0,
            back_end: 0,
            priority_free: 0,
        }
    }

    /// When the last placed work ends.
    #[inline]
    pub fn free_at(&self) -> Nanos {
        debug_assert_eq!(self.back_end, self.iv.back().map_or(0, |&(_, e)| e));
        self.back_end.max(self.floor)
    }

    /// Forget intervals that end by `now` (no later placement asks about them).
    #[inline]
    pub fn prune(&mut self, now: Nanos) {
        debug_assert_eq!(self.front_end, self.iv.front().map_or(0, |&(_, e)| e));
        if self.front_end > now {
            return;
        }
        while let Some(&(_, e)) = self.iv.front() {
            if e > now {
                break;
            }
            self.iv.pop_front();
            self.floor = self.floor.max(e);
        }
        self.refresh_front();
        if self.iv.is_empty() {
            self.back_end = 0;
        }
    }

    #[inline]
    fn refresh_front(&mut self) {
        self.front_end = self.iv.front().map_or(0, |&(_, e)| e);
    }

    /// Reserve `dur` ns at the earliest time >= `at` the resource is idle that
    /// long; returns the start.
    #[inline]
    pub fn place(&mut self, at: Nanos, dur: Nanos) -> Nanos {
        let t = at.max(self.floor);
        if dur == 0 {
            return t;
        }
        // Fast path: after everything placed so far.
        debug_assert_eq!(self.back_end, self.iv.back().map_or(0, |&(_, e)| e));
        if t >= self.back_end {
            self.push_end(t, t + dur);
            return t;
        }
        let mut i = self.first_ending_after(t);
        let mut s = t;
        while i < self.iv.len() {
            let (is, ie) = self.iv[i];
            if s + dur <= is {
                self.insert(i, s, s + dur);
                return s;
            }
            s = s.max(ie);
            i += 1;
        }
        let at_end = self.iv.len();
        self.insert(at_end, s, s + dur);
        s
    }

    /// Reserve `dur` ns for work that goes ahead of the work already queued
    /// (a host read's transfer with `sched.read_priority`): it waits only for
    /// the step in progress at `at` (busy intervals are taken to be steps of
    /// `step_ns` from their start; 0: the whole interval), never for the steps
    /// queued behind it. Where it fits in an idle gap it is placed there;
    /// otherwise it overlaps queued work, and the queued work is late by
    /// `dur`: the last interval is extended by it (placed work keeps its
    /// times, optimistic by at most the transfers that overtook it, as on a
    /// die). Returns the start.
    #[inline]
    pub fn place_priority(&mut self, at: Nanos, dur: Nanos, step_ns: Nanos) -> Nanos {
        // priority transfers do not overtake one another
        let t = at.max(self.floor).max(self.priority_free);
        if dur == 0 {
            return t;
        }
        debug_assert_eq!(self.back_end, self.iv.back().map_or(0, |&(_, e)| e));
        if t >= self.back_end {
            self.push_end(t, t + dur);
            self.priority_free = t + dur;
            return t;
        }
        let i = self.first_ending_after(t);
        let (is, ie) = self.iv[i];
        let start = if t < is {
            t
        } else if step_ns == 0 {
            ie
        } else {
            // the end of the step in progress
            (t + step_ns - (t - is) % step_ns).min(ie)
        };
        let end = start + dur;
        // an idle gap after the step in progress that holds it
        let j = if start >= ie { i + 1 } else { i };
        let fits = if start >= ie {
            self.iv.get(j).is_none_or(|&(ns, _)| end <= ns)
        } else {
            end <= is
        };
        self.priority_free = end;
        if fits {
            self.insert(j, start, end);
            return start;
        }
        // overtake: everything queued from here on is late by `dur`
        if let Some(back) = self.iv.back_mut() {
            back.1 += dur;
            self.back_end = back.1;
        }
        if self.iv.len() == 1 {
            self.front_end = self.back_end;
        }
        start
    }

    /// The index of the first interval ending after `t` (ends are sorted: the
    /// intervals are disjoint). Work usually lands near the end, but behind a
    /// GC backlog it can land thousands of intervals earlier: search
    /// exponentially from the back (1, 2, 4, ... intervals), then binary
    /// search the bracket, O(log distance) either way.
    #[inline]
    fn first_ending_after(&self, t: Nanos) -> usize {
        let n = self.iv.len();
        // Invariant: every interval from index `hi` on ends after t.
        let mut hi = n;
        let mut step = 1;
        let lo = loop {
            if hi == 0 {
                return 0;
            }
            let probe = hi.saturating_sub(step);
            if self.iv[probe].1 <= t {
                break probe + 1;
            }
            if probe == 0 {
                return 0;
            }
            hi = probe;
            step *= 2;
        };
        // iv[lo - 1] ends by t; the answer is in [lo, hi].
        let (mut a, mut b) = (lo, hi);
        while a < b {
            let mid = a + (b - a) / 2;
            if self.iv[mid].1 <= t {
                a = mid + 1;
            } else {
                b = mid;
            }
        }
        a
    }

    /// Append `[s, e)` (`s` >= the last end), merging with the last interval
    /// when they touch: `insert` at the end without reading the deque's back.
    #[inline]
    fn push_end(&mut self, s: Nanos, e: Nanos) {
        match self.iv.back_mut() {
            Some(back) if self.back_end == s => back.1 = e,
            _ => {
                self.iv.push_back((s, e));
                if self.iv.len() > Self::MAX_INTERVALS {
                    // keeps the last interval's end
                    self.compact();
                }
            }
        }
        self.back_end = e;
        if self.iv.len() == 1 {
            self.front_end = e;
        }
    }

    /// Insert `[s, e)` before index `i`, merging with touching neighbours.
    fn insert(&mut self, i: usize, s: Nanos, e: Nanos) {
        self.insert_at(i, s, e);
        // only a change at the first interval (or a compaction) moves its end
        if i <= 1 {
            self.refresh_front();
        }
        self.back_end = self.iv.back().map_or(0, |&(_, e)| e);
    }

    #[inline]
    fn insert_at(&mut self, i: usize, s: Nanos, e: Nanos) {
        let merge_prev = i > 0 && self.iv[i - 1].1 == s;
        let merge_next = i < self.iv.len() && self.iv[i].0 == e;
        match (merge_prev, merge_next) {
            (true, true) => {
                self.iv[i - 1].1 = self.iv[i].1;
                self.iv.remove(i);
            }
            (true, false) => self.iv[i - 1].1 = e,
            (false, true) => self.iv[i].0 = s,
            (false, false) => {
                // most work lands after everything placed (a plain push)
                if i == self.iv.len() {
                    self.iv.push_back((s, e));
                } else {
                    self.iv.insert(i, (s, e));
                }
                if self.iv.len() > Self::MAX_INTERVALS {
                    self.compact();
                }
            }
        }
    }

    /// Close the smallest gaps until a quarter of the intervals are free
    /// again (ties: the latest gaps first). Small gaps are the least use for
    /// backfilling, and counting an idle gap as busy can only delay later
    /// work, never overlap it. One O(n) pass per n/4 insertions.
    #[cold]
    fn compact(&mut self) {
        let n = self.iv.len();
        let target = Self::MAX_INTERVALS * 3 / 4;
        let close = n - target;
        self.gaps.clear();
        self.gaps
            .extend((1..n).map(|j| self.iv[j].0 - self.iv[j - 1].1));
        let (_, &mut thr, _) = self.gaps.select_nth_unstable(close - 1);
        let below = self.gaps.iter().filter(|&&g| g < thr).count();
        let mut equal_left = close - below;
        // Walk from the latest interval back, merging closed gaps.
        let mut out: Vec<(Nanos, Nanos)> = Vec::with_capacity(target + 1);
        let mut cur = self.iv[n - 1];
        for j in (1..n).rev() {
            let prev = self.iv[j - 1];
            let gap = cur.0 - prev.1;
            let merge = gap < thr || (gap == thr && equal_left > 0);
            if gap == thr && merge {
                equal_left -= 1;
            }
            if merge {
                cur.0 = prev.0;
            } else {
                out.push(cur);
                cur = prev;
            }
        }
        out.push(cur);
        self.iv.clear();
        self.iv.extend(out.into_iter().rev());
        self.refresh_front();
    }

    pub fn memory_bytes(&self) -> usize {
        self.iv.capacity() * 16 + self.gaps.capacity() * 8
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_short_transfer_fills_an_earlier_gap() {
        let mut t = Timeline::new();
        assert_eq!(t.place(0, 10), 0);
        assert_eq!(t.place(100, 10), 100);
        // ready at 20: fits in the gap [10, 100)
        assert_eq!(t.place(20, 10), 20);
        // too long for the gap [30, 100): goes after 110
        assert_eq!(t.place(25, 80), 110);
        assert_eq!(t.free_at(), 190);
    }

    /// The placement rule written as plainly as possible: a linear scan.
    fn reference_place(iv: &mut Vec<(Nanos, Nanos)>, floor: Nanos, at: Nanos, dur: Nanos) -> Nanos {
        let mut s = at.max(floor);
        if dur == 0 {
            return s;
        }
        let mut i = 0;
        while i < iv.len() && iv[i].1 <= s {
            i += 1;
        }
        while i < iv.len() && s + dur > iv[i].0 {
            s = s.max(iv[i].1);
            i += 1;
        }
        iv.insert(i, (s, s + dur));
        // merge touching neighbours, as the timeline does
        if i + 1 < iv.len() && iv[i + 1].0 == iv[i].1 {
            iv[i].1 = iv[i + 1].1;
            iv.remove(i + 1);
        }
        if i > 0 && iv[i - 1].1 == iv[i].0 {
            iv[i - 1].1 = iv[i].1;
            iv.remove(i);
        }
        s
    }

    #[test]
    fn placement_matches_a_linear_scan_near_and_far_from_the_end() {
        let mut rng = 0x1234_5678_9abc_def0u64;
        let mut next = move || {
            rng ^= rng << 13;
            rng ^= rng >> 7;
            rng ^= rng << 17;
            rng
        };
        let mut t = Timeline::new();
        let mut reference: Vec<(Nanos, Nanos)> = Vec::new();
        let mut now = 0;
        let mut most = 0;
        for k in 0..20_000u64 {
            // mostly near the end, sometimes far behind (a GC backlog), a few zero-length
            let horizon = t.free_at();
            let at = match next() % 4 {
                0 => now + next() % 1000,
                1 => horizon.saturating_sub(next() % 50_000),
                2 => now + next() % (horizon - now + 1),
                _ => now + next() % 400_000,
            };
            let dur = [0, 7, 40, 100, 333][(next() % 5) as usize];
            let got = t.place(at, dur);
            let want = reference_place(&mut reference, t.floor, at, dur);
            assert_eq!(got, want, "placement {k} at {at} for {dur}");
            assert!(
                t.iv.len() < Timeline::MAX_INTERVALS,
                "no compaction in this test"
            );
            assert!(
                t.iv.iter().copied().eq(reference.iter().copied()),
                "intervals after {k}"
            );
            most = most.max(t.iv.len());
            if k % 50 == 0 {
                now += next() % 20_000;
                t.prune(now);
                reference.retain(|&(_, e)| e > now);
            }
        }
        // long enough that the search goes far back from the end
        assert!(most > 500, "only {most} intervals");
    }

    #[test]
    fn intervals_are_bounded_and_never_overlap() {
        let mut t = Timeline::new();
        for k in 0..1000u64 {
            t.place(k * 100, 10);
        }
        assert!(t.iv.len() <= Timeline::MAX_INTERVALS);
        // The earliest gaps stay usable.
        assert_eq!(t.place(10, 5), 10);
        t.prune(50_000);
        let floor = t.floor;
        assert!(floor > 0 && floor <= 50_000);
        assert!(t.place(0, 5) >= floor);
        let v: Vec<_> = t.iv.iter().copied().collect();
        for w in v.windows(2) {
            assert!(w[0].1 <= w[1].0, "{w:?}");
        }
    }
}
