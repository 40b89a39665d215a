//! Read-ahead after a detected sequential read stream.
//!
//! One stream is tracked. A read request that starts where the previous read
//! ended extends the run; after `trigger` such requests (Chen et al. saw the
//! first four sequential reads at random-read latency, section 5.2) the
//! controller prefetches the next `window` bytes into its buffer, and refills
//! whenever less than half a window is left ahead of the stream. Prefetched
//! pages are read from flash like host reads (counted as `Cause::Host` and as
//! `readahead.prefetched_pages`); a read served from the buffer waits only for
//! the prefetch to have finished. The controller reads ahead *physically*: it
//! prefetches a page only if it lies where the stripe continues
//! ([`crate::ftl::Ftl::stripe_contiguous`]), so on a fragmented device, where
//! logically consecutive pages are scattered, read-ahead stops helping (Chen et
//! al., section 5.8, Figure 9).

use std::collections::VecDeque;

use crate::error::SimError;
use crate::ftl::Ftl;
use crate::resources::Flash;
use crate::Nanos;

pub struct ReadAhead {
    trigger: u32,
    window: u64,
    next_expected: u64,
    run: u32,
    /// Buffered pages [start, start + ready.len()).
    start: u64,
    ready: VecDeque<Nanos>,
    /// Prefetch stopped at this page (stripe discontinuity) until the stream passes it.
    stopped_at: Option<u64>,
}

impl ReadAhead {
    pub fn new(trigger: u32, window_pages: u64) -> ReadAhead {
        ReadAhead {
            trigger: trigger.max(1),
            window: window_pages.max(1),
            next_expected: u64::MAX,
            run: 0,
            start: 0,
            // The window comes from a profile: reserve at most a few pages up
            // front, so that a huge `readahead.window` costs memory only as
            // far as a stream actually prefetches (found by fuzzing).
            ready: VecDeque::with_capacity(window_pages.min(1024) as usize + 1),
            stopped_at: None,
        }
    }

    /// If page `lpn` is in the read-ahead buffer, when its prefetch is done.
    #[inline]
    pub fn lookup(&self, lpn: u64) -> Option<Nanos> {
        if lpn >= self.start && lpn < self.start + self.ready.len() as u64 {
            Some(self.ready[(lpn - self.start) as usize])
        } else {
            None
        }
    }

    /// Forget buffered pages overlapping [first, last] (they were written or trimmed).
    pub fn invalidate(&mut self, first: u64, last: u64) {
        let end = self.start + self.ready.len() as u64;
        if !self.ready.is_empty() && first < end && last >= self.start {
            self.ready.clear();
            self.start = 0;
        }
        if self.next_expected != u64::MAX
            && first < self.next_expected + self.window
            && last + 1 >= self.next_expected
        {
            self.stopped_at = None;
        }
    }

    /// A read of pages [first, last] was issued at `at`: update detection, prefetch.
    pub fn observe(
        &mut self,
        first: u64,
        last: u64,
        at: Nanos,
        ftl: &mut dyn Ftl,
        flash: &mut Flash,
    ) -> Result<(), SimError> {
        if first == self.next_expected {
            self.run = self.run.saturating_add(1);
        } else {
            self.run = 1;
            self.ready.clear();
            self.start = 0;
            self.stopped_at = None;
        }
        self.next_expected = last + 1;
        if self.run < self.trigger {
            return Ok(());
        }
        // Drop consumed pages.
        let consumed_to = last + 1;
        if self.ready.is_empty() || consumed_to < self.start {
            self.ready.clear();
            self.start = consumed_to;
        } else {
            while self.start < consumed_to && !self.ready.is_empty() {
                self.ready.pop_front();
                self.start += 1;
            }
            if self.ready.is_empty() {
                self.start = consumed_to;
            }
        }
        if self.ready.len() as u64 * 2 > self.window {
            return Ok(());
        }
        let limit = ftl.logical_pages();
        let mut lpn = self.start + self.ready.len() as u64;
        let target = (consumed_to + self.window).min(limit);
        while lpn < target {
            if self.stopped_at == Some(lpn) {
                break;
            }
            if lpn == 0 || !ftl.stripe_contiguous(lpn - 1, lpn) {
                self.stopped_at = Some(lpn);
                break;
            }
            let t = ftl.read(lpn, at, flash)?;
            flash.acct.readahead_pages += 1;
            self.ready.push_back(t);
            lpn += 1;
        }
        Ok(())
    }
}
