//! Dies and channel buses, and the flash operations that occupy them.
//!
//! Each operation is placed analytically when the FTL asks for it (no event
//! queue), but the placement follows what a controller's per-die and
//! per-channel schedulers do:
//!
//! - a channel is a [`Timeline`]: a transfer takes the earliest idle gap at or
//!   after its data is ready, so a die that is idle is not held behind
//!   transfers queued for busy dies (backfilling);
//! - a die runs programs, erases and GC copies in the order they are placed
//!   (`die_free` is when the last ends), and remembers them while they are
//!   queued or running (`queued`);
//! - with `sched.read_priority` a host read goes ahead of the work queued on
//!   its die: it waits only for the operation in progress when it arrives (a
//!   bulk GC relocation counts page by page, so cleaning is preempted by host
//!   reads), or, with `sched.suspend`, suspends a program or erase in progress
//!   (`program-erase` also suspends the page copy in progress of a copy-back
//!   GC relocation or merge).
//!   The die's queued work is then late by the read's time: `die_free` moves
//!   out by it (the already-placed operations keep their times; their
//!   completions are optimistic by at most the reads that overtook them).
//!   Without read priority a read waits for everything placed on its die
//!   (first come, first served).
//!
//! Operations:
//!
//! - read: command + array read on the die, then the requested bytes cross the
//!   channel (the die's register stays busy until they have);
//! - program: the page crosses the channel into the die's register (die must be
//!   free), then command + array program;
//! - erase: command + erase on the die;
//! - copy (GC relocation): with copy-back, read + program inside the die; without,
//!   read, transfer out, transfer in, program.
//!
//! Multi-plane operations (`nand.multi_plane`, ONFI multi-plane read and
//! program; only through [`Flash::read_ppn`], [`Flash::program_ppn`] and
//! [`Flash::copy_pages`], which know the page's plane). A die with P planes
//! forms a *group* of up to P pages, one per plane, at the same page index in
//! their blocks (`nand.multi_plane_same_page`), of one kind (reads or
//! programs). A page joins the die's open group when it was ready by the time
//! the group started (its data was in the controller, or its read queued,
//! when the die began the group: the controller saw both) and nothing else
//! was placed on the die since:
//!
//! - program group: the pages cross the channel one after the other into
//!   their planes' registers, then one array program for all; each page after
//!   the first adds `nand.multi_plane_ns` (ONFI tDBSY). The group ends later
//!   than its first page's placement said (by the later pages' transfers and
//!   tDBSY): the completion times already given to the group's earlier pages
//!   are optimistic by that (operations are never moved once placed);
//! - read group: one array read for all; each page then crosses the channel,
//!   a page after the first `nand.multi_plane_ns` after the array read (its
//!   change-read-column command); the first page's times do not move.
//!
//! Service-time variance (`nand.program_ns_by_page_kind`,
//! `nand.page_kind_order`, `nand.read_ns_by_page_kind`,
//! `nand.program_spread`, `nand.erase_spread`, `nand.read_retry_*`; all off
//! by default, and then no draw is made and nothing changes). Each die has
//! its own seeded stream ([`DieVar`]), so the order in which dies are used
//! does not change another die's draws:
//!
//! - a program's array time is its page kind's (from the page's index in
//!   its block, `NandTiming::page_kind`: modulo the kinds, or the word-line
//!   program order with `nand.page_kind_order = "wordline"`; exact where
//!   the caller names the physical page, [`Flash::program_ppn`] and the page
//!   FTL's GC copies; elsewhere, the block-mapped FTLs, mapping pages and
//!   bulk copies without destinations, the die's own count of such programs
//!   stands for the index), then spread;
//! - an erase's time is spread;
//! - a read's array time is its page kind's (`nand.read_ns_by_page_kind`)
//!   where the caller names the physical page ([`Flash::read_ppn`] and
//!   [`Flash::copy_pages`]: the page FTL's host and GC reads), else
//!   `read_ns`; a page joining a multi-plane read group of faster kinds
//!   adds the difference;
//! - a read takes `read_retry_ns` more per retry (a retry happens with
//!   `read_retry_probability`, a further one with the same probability, at
//!   most `read_retry_max`); a copy-back read is not checked by the
//!   controller's ECC and so never retries;
//! - a copy-back relocation stays one bulk die entry: with variance it lasts
//!   the exact sum of its pages' times, and a host read overtaking it sees
//!   page boundaries at multiples of their mean step (not each page's own
//!   end: one entry per page cost 16 % of `sim_bench`'s speed);
//! - a multi-plane program group's array time is its slowest page's; a page
//!   joining a read group adds its own retries before its transfer.
//!
//! The accounting adds the times actually drawn.

use std::collections::VecDeque;

use crate::accounting::{Accounting, Cause};
use crate::config::{SchedConfig, SuspendKind};
use crate::geometry::Geometry;
use crate::nand::NandTiming;
use crate::timeline::Timeline;
use crate::Nanos;
use flashlab_pattern::rng::{derive_seed, Rng};

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum OpKind {
    Read,
    Program,
    Erase,
    /// GC / wear-levelling relocations, `unit_ns` per page.
    Copy,
    /// A read, then at once a program (a GC copy through the controller):
    /// the two operations in one entry, the read's part `unit_ns` long. A
    /// relocation then costs the queue one entry instead of two; a read
    /// overtaking it sees the part it arrives in (`DieOp::part_at`).
    ReadThenProgram,
}

/// An operation placed on a die that has not ended yet.
#[derive(Clone, Copy, Debug)]
struct DieOp {
    start: Nanos,
    end: Nanos,
    /// Length of one indivisible step (a page of a bulk copy; 0: the whole
    /// op); for `ReadThenProgram`, the read's length.
    unit_ns: u32,
    kind: OpKind,
}

impl DieOp {
    /// The operation in progress at `t` (start <= t): the read or the
    /// program of a `ReadThenProgram`, else the operation itself.
    #[inline]
    fn part_at(self, t: Nanos) -> DieOp {
        if self.kind != OpKind::ReadThenProgram {
            return self;
        }
        let mid = self.start + self.unit_ns as Nanos;
        let (start, end, kind) = if t < mid {
            (self.start, mid, OpKind::Read)
        } else {
            (mid, self.end, OpKind::Program)
        };
        DieOp {
            start,
            end,
            unit_ns: 0,
            kind,
        }
    }

    /// The end of the step in progress at `t` (start <= t < end).
    fn step_end(&self, t: Nanos) -> Nanos {
        if self.unit_ns == 0 {
            return self.end;
        }
        let unit = self.unit_ns as Nanos;
        let steps = (t - self.start) / unit + 1;
        (self.start + steps * unit).min(self.end)
    }
}

/// The shortest die queue from which ended operations are dropped.
const QUEUE_PRUNE_MIN: usize = 64;

/// A multi-plane operation being formed on a die (`mask == 0`: none).
#[derive(Clone, Copy, Debug, Default)]
struct PlaneGroup {
    /// Planes taken, one bit each.
    mask: u32,
    count: u32,
    /// The page index its pages share.
    page: u32,
    /// When the group started (program: its first transfer; read: its array
    /// read): a page ready by then may join.
    start: Nanos,
    /// Program: when its last transfer in ends; read: when its array read ends.
    mark: Nanos,
    /// When the group ends on the die.
    end: Nanos,
    /// Program group: its array program time (its slowest page's); read
    /// group: its sensing time before retries (its slowest page kind's).
    array_ns: Nanos,
}

/// A die's service-time draws (`nand` variance fields): its own stream, so
/// one die's draws do not depend on how work was spread over the others.
#[derive(Clone, Debug)]
struct DieVar {
    rng: Rng,
    /// Programs placed on the die without a page index (their page kind).
    programs: u32,
}

/// Label of the dies' service-time streams under the device seed.
const VARIANCE_STREAM: u64 = 0x5E5_71CE;

/// `base` spread uniformly over `base - span ..= base + span` (exact mean `base`).
#[inline]
fn spread(rng: &mut Rng, base: Nanos, span: Nanos) -> Nanos {
    if span == 0 {
        return base;
    }
    base - span + rng.below(2 * span + 1)
}

/// The flash array: timing, per-die schedules, per-channel timelines, and the accounting.
#[derive(Clone, Debug)]
pub struct Flash {
    pub t: NandTiming,
    /// Per die, its channel (`unit % channels`, looked up: a division on
    /// every flash operation showed in profiles).
    die_channel: Vec<u32>,
    /// When the last operation placed on each die ends.
    die_free: Vec<Nanos>,
    /// When the last priority (host) read placed on each die ends.
    read_free: Vec<Nanos>,
    /// Per die: operations placed and not yet ended by `now` (only with read priority).
    queued: Vec<VecDeque<DieOp>>,
    /// Per die, the end of `queued`'s first operation (0: none): checked
    /// before every placement, and the front of a long queue is usually out
    /// of the CPU's caches.
    queued_front_end: Vec<Nanos>,
    /// Per die, the length of `queued` at which `push_op` next drops the
    /// operations that have ended: in bulk, because dropping them one by one
    /// as they end read each (long unvisited, uncached) entry on its own;
    /// priority reads drop them all first, so what they see is the same.
    queued_prune_at: Vec<usize>,
    ch: Vec<Timeline>,
    sched: SchedConfig,
    /// The device's current time: no later placement starts before it.
    now: Nanos,
    /// Bytes the next host data read moves over the channel (0: the whole page).
    pub next_read_bytes: u64,
    pub acct: Accounting,
    /// Planes a multi-plane operation may span (1: no multi-plane operations).
    planes: u32,
    pages_per_block: u32,
    blocks_per_unit: u32,
    /// Per die, the open multi-plane program and read groups (empty without multi-plane).
    prog_group: Vec<PlaneGroup>,
    read_group: Vec<PlaneGroup>,
    /// `false`: a scratch array that places nothing and counts nothing (every
    /// operation ends when it starts), for [`crate::ftl::prefill`] of an FTL
    /// whose state does not depend on the times it is given
    /// ([`crate::ftl::Ftl::prefill_untimed`]).
    timed: bool,
    /// Per die, service-time variance (empty when every time is constant).
    var: Vec<DieVar>,
    /// The array time of the last program placed (its page kind's, spread).
    last_program_ns: Nanos,
    /// When the foreground part of the FTL's work for the page being written
    /// ends (`gc.incremental_synchronous`: its cleaning step's reads), 0 if
    /// it has none. Set by the FTL, taken by the device (a cached write is
    /// acknowledged no earlier); never outlives one page's write.
    pub foreground_until: Nanos,
}

impl Flash {
    /// A flash array that schedules first come, first served until
    /// [`Flash::set_sched`] gives it the profile's policies (the device does
    /// at once). Prefill's scratch copy never gets them: its clock never
    /// advances, so a per-die record of queued operations (read priority)
    /// would keep one entry per page programmed, 24 bytes per logical page
    /// (96 MiB of a 16 GiB device's peak memory), for reads that never come.
    pub fn new(t: NandTiming, geo: &Geometry) -> Flash {
        let planes = if t.multi_plane {
            geo.planes_per_die.max(1)
        } else {
            1
        };
        let groups = if planes > 1 { geo.units as usize } else { 0 };
        Flash {
            t,
            die_channel: (0..geo.units).map(|u| u % geo.channels).collect(),
            die_free: vec![0; geo.units as usize],
            read_free: vec![0; geo.units as usize],
            queued: vec![VecDeque::new(); geo.units as usize],
            queued_front_end: vec![0; geo.units as usize],
            queued_prune_at: vec![QUEUE_PRUNE_MIN; geo.units as usize],
            ch: vec![Timeline::new(); geo.channels as usize],
            sched: SchedConfig {
                read_priority: false,
                ..SchedConfig::default()
            },
            now: 0,
            next_read_bytes: 0,
            acct: Accounting::default(),
            planes,
            pages_per_block: geo.pages_per_block,
            blocks_per_unit: geo.blocks_per_unit,
            prog_group: vec![PlaneGroup::default(); groups],
            read_group: vec![PlaneGroup::default(); groups],
            timed: true,
            var: Vec::new(),
            last_program_ns: t.program_ns,
            foreground_until: 0,
        }
        .seeded(0)
    }

    /// Seed the dies' service-time streams (a no-op when nothing varies):
    /// die `u` draws from `derive_seed(derive_seed(seed, label), u)`.
    pub fn seed_variance(&mut self, seed: u64) {
        if !self.t.varies() {
            return;
        }
        let base = derive_seed(seed, VARIANCE_STREAM);
        self.var = (0..self.die_free.len() as u64)
            .map(|u| DieVar {
                rng: Rng::new(derive_seed(base, u)),
                programs: 0,
            })
            .collect();
    }

    fn seeded(mut self, seed: u64) -> Flash {
        self.seed_variance(seed);
        self
    }

    /// The array time of the last program placed (`program_ns` when program
    /// times do not vary).
    #[inline]
    pub fn last_program_ns(&self) -> Nanos {
        self.last_program_ns
    }

    /// Array program time of a page on die `u` (`page`: its index in its
    /// block, if known).
    #[inline]
    fn program_time(&mut self, u: usize, page: Option<u32>) -> Nanos {
        if self.var.is_empty() {
            return self.t.program_ns;
        }
        self.draw_program(u, page)
    }

    #[inline(never)]
    fn draw_program(&mut self, u: usize, page: Option<u32>) -> Nanos {
        let t = &self.t;
        let d = &mut self.var[u];
        let k = if t.page_kinds > 0 {
            let page = page.unwrap_or_else(|| {
                let p = d.programs;
                d.programs = if p + 1 == self.pages_per_block {
                    0
                } else {
                    p + 1
                };
                p
            });
            t.page_kind(page, self.pages_per_block)
        } else {
            0
        };
        let base = if t.page_kinds > 0 {
            t.program_kind_ns[k]
        } else {
            t.program_ns
        };
        spread(&mut d.rng, base, t.program_span_ns[k])
    }

    /// Array time of a read on die `u` (`page`: its index in its block, if
    /// known): its page kind's read time (or `read_ns`) plus its retries.
    #[inline]
    fn read_time(&mut self, u: usize, page: Option<u32>) -> Nanos {
        if self.var.is_empty() || (self.t.read_retry_threshold == 0 && !self.t.read_kinds) {
            return self.t.read_ns;
        }
        let base = self.read_base(page);
        if self.t.read_retry_threshold == 0 {
            return base;
        }
        base + self.draw_retries(u)
    }

    /// A read's array time before retries: its page kind's with
    /// `nand.read_ns_by_page_kind` where the page is known, else `read_ns`.
    #[inline]
    fn read_base(&self, page: Option<u32>) -> Nanos {
        match page {
            Some(p) if self.t.read_kinds => {
                self.t.read_kind_ns[self.t.page_kind(p, self.pages_per_block)]
            }
            _ => self.t.read_ns,
        }
    }

    /// The die time of one read's retries.
    #[inline(never)]
    fn draw_retries(&mut self, u: usize) -> Nanos {
        let rng = &mut self.var[u].rng;
        let mut n = 0;
        while n < self.t.read_retry_max && rng.next_u64() < self.t.read_retry_threshold {
            n += 1;
        }
        n as Nanos * self.t.read_retry_ns
    }

    /// Erase time of a block on die `u`.
    #[inline]
    fn erase_time(&mut self, u: usize) -> Nanos {
        if self.t.erase_span_ns == 0 || self.var.is_empty() {
            return self.t.erase_ns;
        }
        spread(&mut self.var[u].rng, self.t.erase_ns, self.t.erase_span_ns)
    }

    /// A scratch array on which every operation takes no time and nothing is
    /// placed or counted: a prefill of 4 M pages on a timed scratch array
    /// spent most of its time keeping channel timelines (and compacting
    /// them, as its clock never advances) that were then thrown away.
    pub fn untimed(t: NandTiming, geo: &Geometry) -> Flash {
        Flash {
            timed: false,
            ..Flash::new(t, geo)
        }
    }

    /// Planes a multi-plane operation may span (1 without `nand.multi_plane`).
    #[inline]
    pub fn multi_planes(&self) -> u32 {
        self.planes
    }

    /// The die, plane and page index of physical page `ppn` (geometry.rs's
    /// numbering; a die's blocks alternate planes, as ONFI's plane-select
    /// bits are the block address's lowest).
    #[inline]
    fn locate(&self, ppn: u32) -> (u32, u32, u32) {
        let block = ppn / self.pages_per_block;
        let unit = block / self.blocks_per_unit;
        let plane = (block % self.blocks_per_unit) % self.planes;
        (unit, plane, ppn % self.pages_per_block)
    }

    /// Whether a page of `plane` at `page`, ready at `at`, may join group `g`.
    #[inline]
    fn joins(&self, g: &PlaneGroup, plane: u32, page: u32, at: Nanos) -> bool {
        g.mask != 0
            && g.count < self.planes
            && g.mask & (1 << plane) == 0
            && (!self.t.multi_plane_same_page || g.page == page)
            && at <= g.start
    }

    /// Use the profile's scheduling policies.
    pub fn set_sched(&mut self, sched: &SchedConfig) {
        self.sched = sched.clone();
    }

    /// The device's clock moved to `now` (requests arrive in time order): forget
    /// what has ended.
    #[inline]
    pub fn advance(&mut self, now: Nanos) {
        if now > self.now {
            self.now = now;
        }
    }

    #[inline]
    fn ch(&self, unit: u32) -> usize {
        self.die_channel[unit as usize] as usize
    }

    /// When die `unit` is next free.
    #[inline]
    pub fn die_free(&self, unit: u32) -> Nanos {
        self.die_free[unit as usize]
    }

    /// The latest busy-until time over all dies and channels.
    pub fn all_dies_free(&self) -> Nanos {
        let d = self.die_free.iter().copied().max().unwrap_or(0);
        let c = self.ch.iter().map(|c| c.free_at()).max().unwrap_or(0);
        d.max(c)
    }

    pub fn memory_bytes(&self) -> usize {
        self.queued.iter().map(|q| q.capacity() * 24).sum::<usize>()
            + self.ch.iter().map(|c| c.memory_bytes()).sum::<usize>()
            + self.die_free.len() * 32
            + self.die_channel.capacity() * 4
            + (self.prog_group.capacity() + self.read_group.capacity())
                * std::mem::size_of::<PlaneGroup>()
            + self.var.capacity() * std::mem::size_of::<DieVar>()
    }

    /// Reserve channel `c` for `dur` ns from `at` (or after its last transfer,
    /// without `sched.channel_backfill`).
    #[inline]
    fn place_xfer(&mut self, c: usize, at: Nanos, dur: Nanos) -> Nanos {
        let ch = &mut self.ch[c];
        if self.sched.channel_backfill {
            ch.place(at, dur)
        } else {
            ch.place(at.max(ch.free_at()), dur)
        }
    }

    /// Record an operation on die `u` (for reads that overtake queued work).
    #[inline]
    fn push_op(&mut self, u: usize, start: Nanos, end: Nanos, unit_ns: Nanos, kind: OpKind) {
        if !self.sched.read_priority {
            return;
        }
        if self.queued[u].len() >= self.queued_prune_at[u] {
            self.pop_ended(u);
            // at most a quarter more than the operations still queued, so
            // memory stays bounded (the search makes a drop cheap)
            let live = self.queued[u].len();
            self.queued_prune_at[u] = (live + live / 4).max(QUEUE_PRUNE_MIN);
        }
        let q = &mut self.queued[u];
        // what `pop_ended`'s search relies on
        debug_assert!(q.back().is_none_or(|op| op.end <= start));
        if kind == OpKind::Program {
            if let Some(back) = q.back_mut() {
                // a program right after a read (a GC copy): one entry
                if back.kind == OpKind::Read && back.end == start && back.start < start {
                    if let Ok(read_ns) = u32::try_from(start - back.start) {
                        *back = DieOp {
                            start: back.start,
                            end,
                            unit_ns: read_ns,
                            kind: OpKind::ReadThenProgram,
                        };
                        if q.len() == 1 {
                            self.queued_front_end[u] = end;
                        }
                        return;
                    }
                }
            }
        }
        q.push_back(DieOp {
            start,
            end,
            // a step longer than 4 s is treated as indivisible
            unit_ns: u32::try_from(unit_ns).unwrap_or(0),
            kind,
        });
        if q.len() == 1 {
            self.queued_front_end[u] = end;
        }
    }

    /// Forget die `u`'s queued operations that have ended by now.
    #[inline]
    fn pop_ended(&mut self, u: usize) {
        let now = self.now;
        let q = &mut self.queued[u];
        debug_assert_eq!(self.queued_front_end[u], q.front().map_or(0, |op| op.end));
        if self.queued_front_end[u] > now {
            return;
        }
        // A die's operations are placed one after another (each starts at or
        // after `die_free`, the previous one's end), so their ends are in
        // order and the ended ones are a prefix: found by a binary search
        // that reads a few entries, not every ended one.
        let ended = q.partition_point(|op| op.end <= now);
        q.drain(..ended);
        self.refresh_queued_front(u);
    }

    #[inline]
    fn refresh_queued_front(&mut self, u: usize) {
        self.queued_front_end[u] = self.queued[u].front().map_or(0, |op| op.end);
    }

    /// Where a priority read arriving at `at` on die `u` starts, and the die
    /// time a suspend adds.
    fn priority_start(&mut self, u: usize, at: Nanos) -> (Nanos, Nanos) {
        self.pop_ended(u);
        let q = &self.queued[u];
        let s = at.max(self.read_free[u]);
        if self.die_free[u] <= s {
            return (s, 0);
        }
        let i = q.partition_point(|op| op.start <= s);
        if i == 0 {
            return (s, 0);
        }
        let op = q[i - 1].part_at(s);
        if op.end <= s {
            return (s, 0);
        }
        let suspend = match (self.sched.suspend, op.kind) {
            // a copy-back GC copy is a read then a program inside the die:
            // its program part is suspended like a host program's
            (SuspendKind::ProgramErase, OpKind::Program | OpKind::Copy) => {
                Some(self.sched.suspend_program_ns)
            }
            (SuspendKind::ProgramErase | SuspendKind::Erase, OpKind::Erase) => {
                Some(self.sched.suspend_erase_ns)
            }
            _ => None,
        };
        let step_end = op.step_end(s);
        match suspend {
            Some(ns) if s + ns < step_end => {
                self.acct.suspends += 1;
                (s + ns, ns)
            }
            _ => (step_end, 0),
        }
    }

    /// Read one page (or `next_read_bytes` of it, for a host read) from die
    /// `unit`; returns when the data is in the controller.
    #[inline]
    pub fn read(&mut self, unit: u32, cause: Cause, at: Nanos) -> Nanos {
        self.read_page(unit, cause, at, None)
    }

    /// [`Flash::read`] of page index `page` of its block, if known (its
    /// page kind's read time).
    #[inline]
    fn read_page(&mut self, unit: u32, cause: Cause, at: Nanos, page: Option<u32>) -> Nanos {
        let mut bytes = self.t.page_bytes;
        if cause == Cause::Host && self.next_read_bytes != 0 {
            bytes = self.next_read_bytes.min(bytes);
            self.next_read_bytes = 0;
        }
        if !self.timed {
            return at;
        }
        self.read_placed(unit, cause, at, bytes, page).1
    }

    pub fn read_bytes(&mut self, unit: u32, cause: Cause, at: Nanos, bytes: u64) -> Nanos {
        if !self.timed {
            return at;
        }
        self.read_placed(unit, cause, at, bytes, None).1
    }

    /// Read physical page `ppn` (or `next_read_bytes` of it, for a host
    /// read): as [`Flash::read`] on its die, or, with multi-plane operations,
    /// joining the die's read group if it can.
    #[inline]
    pub fn read_ppn(&mut self, ppn: u32, cause: Cause, at: Nanos) -> Nanos {
        let (unit, plane, page) = self.locate(ppn);
        if self.planes <= 1 || !self.timed {
            return self.read_page(unit, cause, at, Some(page));
        }
        let mut bytes = self.t.page_bytes;
        if cause == Cause::Host && self.next_read_bytes != 0 {
            bytes = self.next_read_bytes.min(bytes);
            self.next_read_bytes = 0;
        }
        let u = unit as usize;
        let g = self.read_group[u];
        let priority = self.sched.read_priority && matches!(cause, Cause::Host | Cause::Mapping);
        // the group is still the die's latest read (priority) / operation
        let latest = if priority {
            self.read_free[u] == g.end
        } else {
            self.die_free[u] == g.end
        };
        if latest && self.joins(&g, plane, page, at) {
            let c = self.ch(unit);
            let xfer = if bytes == self.t.page_bytes {
                self.t.page_transfer_ns
            } else {
                self.t.transfer_ns(bytes)
            };
            self.ch[c].prune(self.now);
            // out of its plane's register after a change-read-column
            // command (and after its own retries, if it needs any, and the
            // longer sensing of a slower page kind than the group's so far)
            let base = self.read_base(Some(page));
            let extra = self.read_time(u, Some(page)).saturating_sub(g.array_ns);
            let ready = g.mark + g.count as Nanos * self.t.multi_plane_ns + extra;
            // A priority read's page goes ahead of the queued transfers, as
            // in `read_placed`: placed behind them, a host read joining a
            // group waited for every queued write-back's transfer (the swarm
            // found a 4 KiB read taking 93 s of simulated time).
            let xfer_start = if priority {
                let page = self.t.page_transfer_ns;
                self.ch[c].place_priority(ready, xfer, page)
            } else {
                self.place_xfer(c, ready, xfer)
            };
            let end = xfer_start + xfer;
            let longer = end.saturating_sub(g.end);
            if priority {
                self.read_free[u] = self.read_free[u].max(end);
                if self.die_free[u] > g.end {
                    // queued work waits for this page too
                    self.die_free[u] += longer;
                } else {
                    self.die_free[u] = self.die_free[u].max(end);
                }
            } else {
                self.die_free[u] = end.max(g.end);
                if let Some(op) = self.queued[u].back_mut() {
                    if op.kind == OpKind::Read && op.end == g.end {
                        op.end = end.max(g.end);
                    }
                }
                self.refresh_queued_front(u);
            }
            self.read_group[u] = PlaneGroup {
                mask: g.mask | 1 << plane,
                count: g.count + 1,
                end: end.max(g.end),
                array_ns: g.array_ns.max(base),
                ..g
            };
            let i = cause as usize;
            self.acct.flash_reads[i] += 1;
            self.acct.multi_plane_reads += 1;
            self.acct.read_ns[i] += self.t.multi_plane_ns + extra;
            self.acct.bus_ns[i] += xfer;
            return end;
        }
        let (start, end, array_end) = self.read_placed(unit, cause, at, bytes, Some(page));
        self.read_group[u] = PlaneGroup {
            mask: 1 << plane,
            count: 1,
            page,
            start,
            mark: array_end,
            end,
            // its sensing time before retries (a slower page joining adds
            // the difference)
            array_ns: self.read_base(Some(page)),
        };
        end
    }

    /// Read `bytes` of a page on die `unit`: (array read start, data in
    /// the controller, array read end).
    fn read_placed(
        &mut self,
        unit: u32,
        cause: Cause,
        at: Nanos,
        bytes: u64,
        page: Option<u32>,
    ) -> (Nanos, Nanos, Nanos) {
        // Host and mapping reads (on the host read path) get priority; GC reads queue.
        let priority = self.sched.read_priority && matches!(cause, Cause::Host | Cause::Mapping);
        self.read_placed_as(unit, cause, at, bytes, page, priority)
    }

    /// [`Flash::read_placed`], going ahead of the die's queued work or not.
    fn read_placed_as(
        &mut self,
        unit: u32,
        cause: Cause,
        at: Nanos,
        bytes: u64,
        page: Option<u32>,
        priority: bool,
    ) -> (Nanos, Nanos, Nanos) {
        let u = unit as usize;
        let c = self.ch(unit);
        let read_ns = self.read_time(u, page);
        let array = self.t.command_ns + read_ns;
        let xfer = if bytes == self.t.page_bytes {
            self.t.page_transfer_ns
        } else {
            self.t.transfer_ns(bytes)
        };
        let (start, extra) = if priority {
            self.priority_start(u, at)
        } else {
            (at.max(self.die_free[u]), 0)
        };
        let array_end = start + array;
        self.ch[c].prune(self.now);
        let xfer_start = if priority {
            // ahead of the transfers queued on the channel too: a read waits
            // for the page transfer in progress, never for a whole reclaim's
            let page = self.t.page_transfer_ns;
            self.ch[c].place_priority(array_end, xfer, page)
        } else {
            self.place_xfer(c, array_end, xfer)
        };
        let end = xfer_start + xfer;
        if priority {
            self.read_free[u] = end;
            if self.die_free[u] > start {
                // queued work waits for the read (and the suspend/resume)
                self.die_free[u] += end - start + extra;
            } else {
                self.die_free[u] = end;
            }
        } else {
            self.die_free[u] = end;
            self.push_op(u, start, end, 0, OpKind::Read);
        }
        let i = cause as usize;
        self.acct.flash_reads[i] += 1;
        self.acct.read_ns[i] += read_ns;
        self.acct.bus_ns[i] += xfer;
        (start, end, array_end)
    }

    /// Program one page on die `unit`; returns when the program has finished.
    #[inline]
    pub fn program(&mut self, unit: u32, cause: Cause, at: Nanos) -> Nanos {
        if !self.timed {
            return at;
        }
        self.program_placed(unit, cause, at, None).1
    }

    /// Program physical page `ppn`: as [`Flash::program`] on its die, or,
    /// with multi-plane operations, joining the die's program group if it can.
    #[inline]
    pub fn program_ppn(&mut self, ppn: u32, cause: Cause, at: Nanos) -> Nanos {
        let (unit, plane, page) = self.locate(ppn);
        if self.planes <= 1 || !self.timed {
            return self.program(unit, cause, at);
        }
        let u = unit as usize;
        let g = self.prog_group[u];
        if g.end == self.die_free[u] && self.joins(&g, plane, page, at) {
            let c = self.ch(unit);
            let xfer = self.t.page_transfer_ns;
            self.ch[c].prune(self.now);
            // into its plane's register after the group's previous transfer
            let xfer_start = self.place_xfer(c, at.max(g.mark), xfer);
            let mark = xfer_start + xfer;
            // the group's array program lasts as long as its slowest page's
            let array_ns = g.array_ns.max(self.program_time(u, Some(page)));
            self.last_program_ns = array_ns;
            let end =
                mark + g.count as Nanos * self.t.multi_plane_ns + self.t.command_ns + array_ns;
            self.die_free[u] = end;
            if let Some(op) = self.queued[u].back_mut() {
                if matches!(op.kind, OpKind::Program | OpKind::ReadThenProgram) && op.end == g.end {
                    op.end = end;
                }
            }
            self.refresh_queued_front(u);
            self.prog_group[u] = PlaneGroup {
                mask: g.mask | 1 << plane,
                count: g.count + 1,
                mark,
                end,
                array_ns,
                ..g
            };
            let i = cause as usize;
            self.acct.flash_programs[i] += 1;
            self.acct.multi_plane_programs += 1;
            // die time: the shared array program is counted once, with its
            // first page (a slower page joining adds the difference)
            self.acct.program_ns[i] += self.t.multi_plane_ns + (array_ns - g.array_ns);
            self.acct.bus_ns[i] += xfer;
            return end;
        }
        let (xfer_start, end) = self.program_placed(unit, cause, at, Some(page));
        self.prog_group[u] = PlaneGroup {
            mask: 1 << plane,
            count: 1,
            page,
            start: xfer_start,
            mark: xfer_start + self.t.page_transfer_ns,
            end,
            array_ns: self.last_program_ns,
        };
        end
    }

    /// Program one page on die `unit` (`page`: its index in its block, if
    /// known): (transfer start, program end).
    #[inline]
    fn program_placed(
        &mut self,
        unit: u32,
        cause: Cause,
        at: Nanos,
        page: Option<u32>,
    ) -> (Nanos, Nanos) {
        let u = unit as usize;
        let c = self.ch(unit);
        let xfer = self.t.page_transfer_ns;
        self.ch[c].prune(self.now);
        let xfer_start = self.place_xfer(c, at.max(self.die_free[u]), xfer);
        let xfer_end = xfer_start + xfer;
        let program_ns = self.program_time(u, page);
        self.last_program_ns = program_ns;
        let end = xfer_end + self.t.command_ns + program_ns;
        self.die_free[u] = end;
        self.push_op(u, xfer_start, end, 0, OpKind::Program);
        let i = cause as usize;
        self.acct.flash_programs[i] += 1;
        self.acct.program_ns[i] += program_ns;
        self.acct.bus_ns[i] += xfer;
        (xfer_start, end)
    }

    /// Erase one block on die `unit`.
    #[inline]
    pub fn erase(&mut self, unit: u32, cause: Cause, at: Nanos) -> Nanos {
        if !self.timed {
            return at;
        }
        let u = unit as usize;
        let start = at.max(self.die_free[u]);
        let erase_ns = self.erase_time(u);
        let end = start + self.t.command_ns + erase_ns;
        self.die_free[u] = end;
        self.push_op(u, start, end, 0, OpKind::Erase);
        let i = cause as usize;
        self.acct.flash_erases[i] += 1;
        self.acct.erase_ns[i] += erase_ns;
        end
    }

    /// A cleaning step done as part of a host write
    /// (`gc.incremental_synchronous`): the pages `src[k]` (all on die `unit`)
    /// are read out to the controller one after another, next on the die
    /// (with `sched.read_priority`, like a host read: after the operation in
    /// progress, ahead of the queued write-backs, which in a controller wait
    /// in its DRAM, not on the die), then programmed to `dst[k]` from the
    /// controller's buffer behind that work. The write cache is not told
    /// that the write-backs the reads delay end later (as for host reads).
    /// Returns (the last page in the controller, the last program's end).
    pub fn copy_pages_foreground(
        &mut self,
        unit: u32,
        cause: Cause,
        at: Nanos,
        src: &[u32],
        dst: &[u32],
    ) -> (Nanos, Nanos) {
        debug_assert_eq!(src.len(), dst.len());
        if !self.timed {
            return (at, at);
        }
        if src.is_empty() {
            return (at, at.max(self.die_free[unit as usize]));
        }
        let ppb = self.pages_per_block;
        let priority = self.sched.read_priority;
        let bytes = self.t.page_bytes;
        let mut read_end = at;
        for &s in src {
            let page = self.t.read_kinds.then_some(s % ppb);
            read_end = self
                .read_placed_as(unit, cause, read_end, bytes, page, priority)
                .1;
        }
        let mut end = read_end;
        for &d in dst {
            end = self.program_placed(unit, cause, read_end, Some(d % ppb)).1;
        }
        (read_end, end)
    }

    /// Relocate one page inside die `unit` (GC, wear levelling).
    #[inline]
    pub fn copy(&mut self, unit: u32, cause: Cause, at: Nanos) -> Nanos {
        self.copy_n(unit, cause, at, 1)
    }

    /// Relocate the pages `src[k]` to `dst[k]` (GC, wear levelling; one die).
    /// Without multi-plane operations or with copy-back this is
    /// [`Flash::copy_n`]. With them, the pages move P at a time (P planes):
    /// P reads out to the controller, then their programs, which form a
    /// multi-plane program when the destinations allow (copy-back would keep
    /// each page in its plane: not modelled as multi-plane).
    pub fn copy_pages(
        &mut self,
        unit: u32,
        cause: Cause,
        at: Nanos,
        src: &[u32],
        dst: &[u32],
    ) -> Nanos {
        debug_assert_eq!(src.len(), dst.len());
        if self.planes <= 1 || self.t.copyback || !self.timed {
            return self.copy_to(unit, cause, at, src.len() as u64, Some((src, dst)));
        }
        let mut t = at;
        let mut ready = [0 as Nanos; 32];
        let mut k = 0;
        while k < src.len() {
            // the next destinations that can form one multi-plane program
            let (_, plane, page) = self.locate(dst[k]);
            let mut mask = 1u32 << plane;
            let mut n = 1;
            while n < self.planes as usize && k + n < dst.len() {
                let (_, p, pg) = self.locate(dst[k + n]);
                if mask & (1 << p) != 0 || (self.t.multi_plane_same_page && pg != page) {
                    break;
                }
                mask |= 1 << p;
                n += 1;
            }
            for j in 0..n {
                ready[j] = self.read_ppn(src[k + j], cause, t);
                t = ready[j];
            }
            for j in 0..n {
                t = t.max(self.program_ppn(dst[k + j], cause, ready[j]));
            }
            k += n;
        }
        t
    }

    /// Relocate `n` pages inside die `unit`; same timing as `n` single copies,
    /// and host reads may overtake it between any two pages.
    pub fn copy_n(&mut self, unit: u32, cause: Cause, at: Nanos, n: u64) -> Nanos {
        self.copy_to(unit, cause, at, n, None)
    }

    /// [`Flash::copy_n`], with the source and destination pages when known
    /// (`src[k]`, `dst[k]`: the physical pages the `k`-th copy reads and
    /// programs; their page kinds).
    fn copy_to(
        &mut self,
        unit: u32,
        cause: Cause,
        at: Nanos,
        n: u64,
        pages: Option<(&[u32], &[u32])>,
    ) -> Nanos {
        if !self.timed {
            return at;
        }
        if n == 0 {
            return at.max(self.die_free[unit as usize]);
        }
        // the destinations' page indices: a division for the first and
        // after a jump, else the next page of the same block
        let ppb = self.pages_per_block;
        let dst = pages.map(|(_, d)| d);
        let mut prev: Option<(u32, u32)> = None;
        let mut page = |k: usize| {
            let d = dst?[k];
            let p = match prev {
                Some((pd, pp)) if d == pd + 1 && pp + 1 < ppb => pp + 1,
                _ => d % ppb,
            };
            prev = Some((d, p));
            Some(p)
        };
        if self.t.copyback && !self.var.is_empty() {
            // each copy's program time is its own; the relocation stays one
            // die entry (one per page cost 16 % of the write benchmark's
            // speed and 2.4 bytes per logical page), lasting the exact sum,
            // whose steps a host read sees as their mean (`step_end`)
            let u = unit as usize;
            let i = cause as usize;
            let mut programs = 0;
            for k in 0..n as usize {
                let program_ns = self.program_time(u, page(k));
                programs += program_ns;
                self.last_program_ns = program_ns;
            }
            let total = n * (2 * self.t.command_ns + self.t.read_ns) + programs;
            let start = at.max(self.die_free[u]);
            let end = start + total;
            self.die_free[u] = end;
            self.push_op(u, start, end, (total / n).max(1), OpKind::Copy);
            self.acct.flash_reads[i] += n;
            self.acct.flash_programs[i] += n;
            self.acct.read_ns[i] += n * self.t.read_ns;
            self.acct.program_ns[i] += programs;
            return end;
        }
        if self.t.copyback {
            let u = unit as usize;
            let step = 2 * self.t.command_ns + self.t.read_ns + self.t.program_ns;
            let start = at.max(self.die_free[u]);
            let end = start + n * step;
            self.die_free[u] = end;
            self.push_op(u, start, end, step, OpKind::Copy);
            let i = cause as usize;
            self.acct.flash_reads[i] += n;
            self.acct.flash_programs[i] += n;
            self.acct.read_ns[i] += n * self.t.read_ns;
            self.acct.program_ns[i] += n * self.t.program_ns;
            end
        } else {
            // the sources' page kinds only where reads have kinds (a division each)
            let src = pages.filter(|_| self.t.read_kinds).map(|(s, _)| s);
            let mut t = at;
            for k in 0..n as usize {
                let from = src.map(|s| s[k] % ppb);
                let r = self.read_placed(unit, cause, t, self.t.page_bytes, from).1;
                t = self.program_placed(unit, cause, r, page(k)).1;
            }
            t
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// ssd-m's first die: read priority, no copy-back (a relocation is a read
    /// out to the controller, then a program).
    fn ssd_m(suspend: SuspendKind) -> Flash {
        let mut cfg = crate::resolve_spec("ssd-m,capacity=1GiB").unwrap();
        cfg.sched.suspend = suspend;
        // constant program times: the copy's steps are what the test computes
        cfg.nand.program_ns_by_page_kind.clear();
        let geo = Geometry::derive(&cfg).unwrap();
        let mut flash = Flash::new(NandTiming::resolve(&cfg.nand, geo.page_bytes), &geo);
        flash.set_sched(&cfg.sched);
        flash
    }

    /// Where a host read arriving at `at` starts on die 0, after one GC copy.
    fn host_read_start_after_a_copy(suspend: SuspendKind, at: Nanos) -> Nanos {
        let mut flash = ssd_m(suspend);
        flash.copy_n(0, Cause::Gc, 0, 1);
        assert_eq!(
            flash.queued[0].len(),
            1,
            "the copy's read and program: one entry"
        );
        flash.advance(at);
        let bytes = flash.t.page_bytes;
        flash.read_placed(0, Cause::Host, at, bytes, None).0
    }

    #[test]
    fn a_host_read_overtaking_a_gc_copy_waits_for_the_part_it_arrives_in() {
        let t = ssd_m(SuspendKind::Off).t;
        let read_end = t.command_ns + t.read_ns + t.page_transfer_ns;
        let copy_end = read_end + t.page_transfer_ns + t.command_ns + t.program_ns;
        // during the copy's read: waits for the read only
        assert_eq!(host_read_start_after_a_copy(SuspendKind::Off, 10), read_end);
        // during its program: waits for the program
        assert_eq!(
            host_read_start_after_a_copy(SuspendKind::Off, read_end + 10),
            copy_end
        );
        // which a read may suspend; a read in progress it may not
        let suspend = SuspendKind::ProgramErase;
        let at = read_end + 10;
        let suspended = at + SchedConfig::default().suspend_program_ns;
        assert_eq!(host_read_start_after_a_copy(suspend, at), suspended);
        assert_eq!(host_read_start_after_a_copy(suspend, 10), read_end);
        // after the copy: at once
        assert_eq!(
            host_read_start_after_a_copy(SuspendKind::Off, copy_end),
            copy_end
        );
    }
}
