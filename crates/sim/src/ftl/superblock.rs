//! The machinery shared by the block-mapped FTLs ([`super::block`],
//! [`super::bast`], [`super::fast`]): superblocks, the block map, log blocks
//! and merges.
//!
//! # Superblocks
//!
//! A block-mapped FTL maps a *logical unit* (LU) of `N = stripe_dies x
//! pages_per_block` consecutive logical pages to one *superblock* (SB): block
//! `k` on each of `stripe_dies` consecutive dies (a die group). Offset `o` of
//! the unit lives on die `o % stripe_dies` of the group, page `o / stripe_dies`
//! of that die's block, so sequential pages stripe over the dies (Chen et al.
//! 2.2) and a block's pages are still programmed in order on every die. By
//! default a superblock spans all dies (`ftl.stripe_dies = 0`). An erase of a
//! superblock erases its block on every die, in parallel.
//!
//! # Where a logical page is
//!
//! Two bitsets over logical pages and one array say where the newest copy is:
//! - `inlog` set: in a *random* (non-sequential) log block, at `log_loc[lpn]`;
//! - `written` set: at its own offset in a *sequential* block of its unit: the
//!   unit's sequential log (`seq_log[lu]`, a BAST log block still written in
//!   order, FAST's sequential log block, the block FTL's replacement block) if
//!   the offset is below that log's write pointer, else the unit's data block;
//! - neither: unmapped.
//!
//! This representation makes switch and partial merges O(number of dies):
//! a sequential log becomes the data block by changing one pointer.
//!
//! # Merges (Lee et al. 2007, Kim et al. 2002)
//!
//! - *switch*: a full sequential log replaces the data block; the old data
//!   block is erased;
//! - *partial*: a sequential log written up to offset `k` is completed with the
//!   data block's pages `k..N` (copies inside each die), then switched;
//! - *full*: a new superblock receives the newest copy of every page of the
//!   unit (from the data block, the sequential log and the random log blocks),
//!   then the old data block (and any emptied log) is erased.
//!
//! Copies between the same offsets of two superblocks of one die group stay on
//! their die and use copy-back when the NAND has it; pages coming from a random
//! log block move between dies (read, transfer, program). All merge and
//! read-modify-write work is accounted as [`Cause::Gc`].

use std::cmp::Reverse;
use std::collections::BinaryHeap;

use super::blocks::NONE;
use crate::accounting::Cause;
use crate::config::{SimConfig, UnitGroups};
use crate::error::{ConfigError, SimError};
use crate::geometry::Geometry;
use crate::resources::Flash;
use crate::Nanos;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SbKind {
    Free,
    /// The data block of a unit.
    Data,
    /// A sequential log (pages at their own offsets) of a unit.
    SeqLog,
    /// A random log block (pages anywhere, `log_pages` says which).
    RandLog,
}

/// Superblocks, the block map, logs and merges (see the module docs).
pub struct SbCore {
    pub geo: Geometry,
    /// Dies per superblock.
    pub s: u32,
    pub groups: u32,
    pub bpu: u32,
    /// Pages per superblock (= per logical unit).
    pub n: u32,
    pub n_lu: u32,
    pub n_sb: u32,
    pub data_sb: Vec<u32>,
    pub seq_log: Vec<u32>,
    pub sb_kind: Vec<SbKind>,
    pub sb_owner: Vec<u32>,
    pub sb_wp: Vec<u32>,
    /// Random logs: valid pages.
    pub sb_valid: Vec<u32>,
    /// Random logs: index into `log_pages`.
    sb_slot: Vec<u32>,
    log_pages: Vec<Vec<u32>>,
    free_slots: Vec<u32>,
    written: Vec<u64>,
    inlog: Vec<u64>,
    log_loc: Vec<u32>,
    free: Vec<BinaryHeap<Reverse<(u64, u32)>>>,
    erase: Vec<u32>,
    pub mapped: u64,
    counts: Vec<u64>,
    check: bool,
    /// Free superblocks that allocation for data/log never takes (merge targets).
    pub reserve: u32,
    /// `ftl.unit_groups`: which die group holds a unit's superblocks.
    unit_groups: UnitGroups,
}

#[inline]
fn bit(v: &[u64], i: u64) -> bool {
    v[(i >> 6) as usize] >> (i & 63) & 1 != 0
}
#[inline]
fn set(v: &mut [u64], i: u64) {
    v[(i >> 6) as usize] |= 1 << (i & 63);
}
#[inline]
fn clear(v: &mut [u64], i: u64) {
    v[(i >> 6) as usize] &= !(1 << (i & 63));
}

/// Stripe width for a configuration: `ftl.stripe_dies`, 0 = all dies.
pub fn stripe_of(cfg: &SimConfig, geo: &Geometry) -> u32 {
    if cfg.ftl.stripe_dies == 0 {
        geo.units
    } else {
        cfg.ftl.stripe_dies
    }
}

/// The die group fixed for unit `lu` of `n_lu` over `groups` groups, or None
/// when `ftl.unit_groups = free` (the FTL picks the roomiest group).
fn unit_group_of(mode: UnitGroups, lu: u32, n_lu: u32, groups: u32) -> Option<u32> {
    match mode {
        UnitGroups::Free => None,
        UnitGroups::Interleaved => Some(lu % groups),
        UnitGroups::Contiguous => Some((lu as u64 * groups as u64 / n_lu.max(1) as u64) as u32),
    }
}

/// Check that a block-mapped FTL fits: the stripe divides the dies and there
/// are enough spare superblocks for `logs` log blocks plus merge targets.
pub fn validate(cfg: &SimConfig, geo: &Geometry, logs: u32) -> Result<(), ConfigError> {
    let n = &cfg.name;
    let s = stripe_of(cfg, geo);
    if s == 0 || !geo.units.is_multiple_of(s) {
        return Err(ConfigError::invalid(
            n,
            format!(
                "ftl.stripe_dies ({s}) must divide the number of dies ({}); use 0 for all dies",
                geo.units
            ),
        ));
    }
    let groups = geo.units / s;
    let sb_pages = s as u64 * geo.pages_per_block as u64;
    let n_lu = geo.logical_pages.div_ceil(sb_pages);
    let n_sb = groups as u64 * geo.blocks_per_unit as u64;
    let need = n_lu + logs as u64 + 2;
    if n_sb < need {
        return Err(ConfigError::invalid(n, format!(
            "the {} FTL needs {need} superblocks ({n_lu} for data, {logs} log blocks, 2 for merges) but over-provisioning {} gives {n_sb}; raise op or lower ftl.log_blocks",
            cfg.ftl.kind.name(),
            cfg.geometry.over_provisioning
        )));
    }
    if sb_pages > u32::MAX as u64 / 2 {
        return Err(ConfigError::invalid(n, "superblocks too large"));
    }
    // With units fixed to groups, every group must hold its own units plus
    // the log blocks (they may all belong to its units) and merge targets.
    let mut per_group = vec![0u64; groups as usize];
    for lu in 0..n_lu as u32 {
        if let Some(g) = unit_group_of(cfg.ftl.unit_groups, lu, n_lu as u32, groups) {
            per_group[g as usize] += 1;
        }
    }
    let most = per_group.iter().copied().max().unwrap_or(0);
    if most > 0 && most + logs as u64 + 2 > geo.blocks_per_unit as u64 {
        return Err(ConfigError::invalid(n, format!(
            "ftl.unit_groups = {} puts {most} units in one die group, which has {} superblocks (needs {} with {logs} log blocks and 2 for merges); raise op, lower ftl.log_blocks or use ftl.unit_groups = free",
            cfg.ftl.unit_groups.name(),
            geo.blocks_per_unit,
            most + logs as u64 + 2
        )));
    }
    Ok(())
}

impl SbCore {
    pub fn new(cfg: &SimConfig, geo: &Geometry, random_logs: u32) -> SbCore {
        let s = stripe_of(cfg, geo);
        let groups = geo.units / s;
        let bpu = geo.blocks_per_unit;
        let n = s * geo.pages_per_block;
        let n_lu = geo.logical_pages.div_ceil(n as u64) as u32;
        let n_sb = groups * bpu;
        let words = (n_lu as u64 * n as u64).div_ceil(64) as usize;
        let mut free = Vec::with_capacity(groups as usize);
        for g in 0..groups {
            let mut h = BinaryHeap::with_capacity(bpu as usize);
            for k in 0..bpu {
                h.push(Reverse((0u64, g * bpu + k)));
            }
            free.push(h);
        }
        let slots = random_logs as usize + 2;
        SbCore {
            geo: *geo,
            s,
            groups,
            bpu,
            n,
            n_lu,
            n_sb,
            data_sb: vec![NONE; n_lu as usize],
            seq_log: vec![NONE; n_lu as usize],
            sb_kind: vec![SbKind::Free; n_sb as usize],
            sb_owner: vec![NONE; n_sb as usize],
            sb_wp: vec![0; n_sb as usize],
            sb_valid: vec![0; n_sb as usize],
            sb_slot: vec![NONE; n_sb as usize],
            log_pages: (0..slots).map(|_| vec![NONE; n as usize]).collect(),
            free_slots: (0..slots as u32).rev().collect(),
            written: vec![0; words],
            inlog: vec![0; words],
            log_loc: crate::mem::big_vec_u32(geo.logical_pages as usize, NONE),
            free,
            erase: vec![0; geo.total_blocks() as usize],
            mapped: 0,
            counts: vec![0; s as usize],
            check: cfg.check.enabled,
            reserve: 1,
            unit_groups: cfg.ftl.unit_groups,
        }
    }

    #[inline]
    pub fn lu_off(&self, lpn: u64) -> (u32, u32) {
        ((lpn / self.n as u64) as u32, (lpn % self.n as u64) as u32)
    }

    #[inline]
    pub fn die_of(&self, sb: u32, pos: u32) -> u32 {
        (sb / self.bpu) * self.s + pos % self.s
    }

    #[inline]
    fn group_of(&self, sb: u32) -> u32 {
        sb / self.bpu
    }

    pub fn free_count(&self) -> u64 {
        self.free.iter().map(|h| h.len() as u64).sum()
    }

    pub fn erase_counts(&self) -> &[u32] {
        &self.erase
    }

    #[inline]
    pub fn is_mapped(&self, lpn: u64) -> bool {
        bit(&self.written, lpn) || bit(&self.inlog, lpn)
    }

    #[inline]
    pub fn is_inlog(&self, lpn: u64) -> bool {
        bit(&self.inlog, lpn)
    }

    /// Where the newest copy of `lpn` is: (superblock, position), or None.
    #[inline]
    pub fn locate(&self, lpn: u64) -> Option<(u32, u32)> {
        if bit(&self.inlog, lpn) {
            let l = self.log_loc[lpn as usize];
            return Some((l / self.n, l % self.n));
        }
        if bit(&self.written, lpn) {
            let (lu, off) = self.lu_off(lpn);
            let sl = self.seq_log[lu as usize];
            if sl != NONE && off < self.sb_wp[sl as usize] {
                return Some((sl, off));
            }
            return Some((self.data_sb[lu as usize], off));
        }
        None
    }

    /// Die holding the newest copy of `lpn`.
    pub fn die_of_lpn(&self, lpn: u64) -> Option<u32> {
        self.locate(lpn).map(|(sb, pos)| self.die_of(sb, pos))
    }

    /// Read a page (host read).
    #[inline]
    pub fn read(&mut self, lpn: u64, at: Nanos, flash: &mut Flash) -> Nanos {
        match self.locate(lpn) {
            Some((sb, pos)) => flash.read(self.die_of(sb, pos), Cause::Host, at),
            None => {
                flash.acct.unmapped_reads += 1;
                at
            }
        }
    }

    /// Take a free superblock, preferring die group `group` (copies then stay on their dies).
    pub fn alloc(&mut self, group: u32, kind: SbKind, owner: u32) -> Result<u32, SimError> {
        let g = if group < self.groups && !self.free[group as usize].is_empty() {
            group as usize
        } else {
            (0..self.groups as usize)
                .max_by_key(|&g| self.free[g].len())
                .unwrap_or(0)
        };
        let Reverse((_, sb)) = self.free[g].pop().ok_or_else(|| {
            SimError::Stall("no free superblock left (log blocks and merges exhausted the spare space); raise op or lower ftl.log_blocks".to_string())
        })?;
        debug_assert_eq!(self.sb_kind[sb as usize], SbKind::Free);
        self.sb_kind[sb as usize] = kind;
        self.sb_owner[sb as usize] = owner;
        self.sb_wp[sb as usize] = 0;
        self.sb_valid[sb as usize] = 0;
        if kind == SbKind::RandLog {
            let slot = self.free_slots.pop().ok_or_else(|| {
                SimError::Invariant("internal: no random-log slot left".to_string())
            })?;
            self.sb_slot[sb as usize] = slot;
        }
        Ok(sb)
    }

    /// Group whose free pool is largest (for new units).
    pub fn roomiest_group(&self) -> u32 {
        (0..self.groups)
            .max_by_key(|&g| (self.free[g as usize].len(), Reverse(g)))
            .unwrap_or(0)
    }

    /// The die group for a superblock of unit `lu` (`ftl.unit_groups`):
    /// with `free` the roomiest group (the caller keeps a unit's later
    /// superblocks in its data block's group), else fixed by the address.
    /// [`Self::alloc`] still falls back to another group if this one has no
    /// free superblock left.
    pub fn unit_group(&self, lu: u32) -> u32 {
        unit_group_of(self.unit_groups, lu, self.n_lu, self.groups)
            .unwrap_or_else(|| self.roomiest_group())
    }

    /// Erase superblock `sb` (all its dies, in parallel) and return it to the free pool.
    pub fn erase_sb(&mut self, sb: u32, at: Nanos, flash: &mut Flash) -> Nanos {
        debug_assert!(self.sb_kind[sb as usize] != SbKind::Free);
        if self.sb_kind[sb as usize] == SbKind::RandLog {
            debug_assert_eq!(
                self.sb_valid[sb as usize], 0,
                "erasing a log with valid pages"
            );
            let slot = self.sb_slot[sb as usize];
            let wp = self.sb_wp[sb as usize] as usize;
            self.log_pages[slot as usize][..wp].fill(NONE);
            self.free_slots.push(slot);
            self.sb_slot[sb as usize] = NONE;
        }
        let g = self.group_of(sb);
        let k = sb % self.bpu;
        let mut end = at;
        for d in g * self.s..(g + 1) * self.s {
            end = end.max(flash.erase(d, Cause::Gc, at));
            self.erase[(d * self.bpu + k) as usize] += 1;
        }
        self.sb_kind[sb as usize] = SbKind::Free;
        self.sb_owner[sb as usize] = NONE;
        self.sb_wp[sb as usize] = 0;
        self.sb_valid[sb as usize] = 0;
        let key = self.erase[(g * self.s * self.bpu + k) as usize] as u64;
        self.free[g as usize].push(Reverse((key, sb)));
        end
    }

    /// The newest copy of `lpn` is being replaced: forget the old one.
    #[inline]
    fn supersede(&mut self, lpn: u64) {
        if bit(&self.inlog, lpn) {
            let l = self.log_loc[lpn as usize];
            let (sb, pos) = (l / self.n, l % self.n);
            let slot = self.sb_slot[sb as usize];
            debug_assert_eq!(self.log_pages[slot as usize][pos as usize], lpn as u32);
            self.log_pages[slot as usize][pos as usize] = NONE;
            self.sb_valid[sb as usize] -= 1;
            clear(&mut self.inlog, lpn);
        } else if bit(&self.written, lpn) {
            clear(&mut self.written, lpn);
        } else {
            self.mapped += 1;
        }
    }

    /// Program `lpn` at its own offset of the unit's data block (in place, beyond the write pointer).
    pub fn program_data(&mut self, lpn: u64, at: Nanos, flash: &mut Flash) -> Nanos {
        let (lu, off) = self.lu_off(lpn);
        let sb = self.data_sb[lu as usize];
        debug_assert!(self.seq_log[lu as usize] == NONE && off >= self.sb_wp[sb as usize]);
        self.supersede(lpn);
        set(&mut self.written, lpn);
        self.sb_wp[sb as usize] = off + 1;
        flash.program(self.die_of(sb, off), Cause::Host, at)
    }

    /// Program `lpn` into its unit's sequential log at its own offset (>= the log's write pointer;
    /// call [`Self::fill_seq`] first to copy the gap).
    pub fn program_seq(&mut self, lpn: u64, at: Nanos, flash: &mut Flash) -> Nanos {
        let (lu, off) = self.lu_off(lpn);
        let sl = self.seq_log[lu as usize];
        debug_assert!(sl != NONE && off == self.sb_wp[sl as usize]);
        self.supersede(lpn);
        set(&mut self.written, lpn);
        self.sb_wp[sl as usize] = off + 1;
        flash.program(self.die_of(sl, off), Cause::Host, at)
    }

    /// Append `lpn` to random log `sb`.
    pub fn program_rand(&mut self, sb: u32, lpn: u64, at: Nanos, flash: &mut Flash) -> Nanos {
        let pos = self.sb_wp[sb as usize];
        debug_assert!(pos < self.n && self.sb_kind[sb as usize] == SbKind::RandLog);
        self.supersede(lpn);
        set(&mut self.inlog, lpn);
        self.log_loc[lpn as usize] = sb * self.n + pos;
        let slot = self.sb_slot[sb as usize];
        self.log_pages[slot as usize][pos as usize] = lpn as u32;
        self.sb_valid[sb as usize] += 1;
        self.sb_wp[sb as usize] = pos + 1;
        flash.program(self.die_of(sb, pos), Cause::Host, at)
    }

    /// Add the offsets [x, y) of a unit to the per-die-slot counts.
    #[inline]
    fn add_run(&mut self, x: u32, y: u32) {
        let s = self.s;
        let len = y - x;
        let full = (len / s) as u64;
        if full > 0 {
            for c in self.counts.iter_mut() {
                *c += full;
            }
        }
        for i in 0..len % s {
            self.counts[((x + i) % s) as usize] += 1;
        }
    }

    /// Copy into `lu`'s sequential log the newest copy of every mapped page at
    /// offsets [log write pointer, upto): data-block pages die by die, random-log
    /// pages one by one. Returns when all copies are done.
    pub fn fill_seq(&mut self, lu: u32, upto: u32, at: Nanos, flash: &mut Flash) -> Nanos {
        let r = self.seq_log[lu as usize];
        debug_assert!(r != NONE);
        let a = self.sb_wp[r as usize];
        if a >= upto {
            return at;
        }
        let base = lu as u64 * self.n as u64;
        let src = self.data_sb[lu as usize];
        self.counts.iter_mut().for_each(|c| *c = 0);
        let mut log_pages: Vec<u64> = Vec::new();
        // scan written (data-located, since >= a) runs and inlog pages
        let (lo, hi) = (base + a as u64, base + upto as u64);
        let mut w = lo >> 6;
        let mut run_start: Option<u64> = None;
        while w << 6 < hi {
            let wlo = w << 6;
            let mask = word_mask(wlo, lo, hi);
            let wr = self.written[w as usize] & mask;
            let il = self.inlog[w as usize] & mask;
            if wr == mask {
                if run_start.is_none() {
                    run_start = Some(wlo.max(lo));
                }
            } else {
                let mut pos = (wlo.max(lo) - wlo) as u32;
                let endp = ((wlo + 64).min(hi) - wlo) as u32;
                while pos < endp {
                    let rest = wr >> pos;
                    if rest & 1 == 1 {
                        if run_start.is_none() {
                            run_start = Some(wlo + pos as u64);
                        }
                        pos += rest.trailing_ones().min(endp - pos);
                    } else {
                        if let Some(x) = run_start.take() {
                            self.add_run((x - base) as u32, (wlo + pos as u64 - base) as u32);
                        }
                        let z = if rest == 0 { 64 } else { rest.trailing_zeros() };
                        pos += z.min(endp - pos);
                    }
                }
            }
            let mut m = il;
            while m != 0 {
                let t = m.trailing_zeros() as u64;
                log_pages.push(wlo + t);
                m &= m - 1;
            }
            w += 1;
        }
        if let Some(x) = run_start.take() {
            self.add_run((x - base) as u32, (hi - base) as u32);
        }
        let mut end = at;
        // data-block pages: per die slot
        if src != NONE {
            let same_group = self.group_of(src) == self.group_of(r);
            for slot in 0..self.s {
                let cnt = self.counts[slot as usize];
                if cnt == 0 {
                    continue;
                }
                let from = self.die_of(src, slot);
                let to = self.die_of(r, slot);
                if same_group {
                    end = end.max(flash.copy_n(from, Cause::Gc, at, cnt));
                } else {
                    let mut t = at;
                    for _ in 0..cnt {
                        let rd = flash.read(from, Cause::Gc, t);
                        t = flash.program(to, Cause::Gc, rd);
                    }
                    end = end.max(t);
                }
            }
            flash.acct.gc_relocated_pages += self.counts.iter().sum::<u64>();
        } else {
            debug_assert!(self.counts.iter().all(|&c| c == 0));
        }
        // random-log pages: move between dies
        for &lpn in &log_pages {
            let l = self.log_loc[lpn as usize];
            let (sb, pos) = (l / self.n, l % self.n);
            let off = (lpn - base) as u32;
            let rd = flash.read(self.die_of(sb, pos), Cause::Gc, at);
            end = end.max(flash.program(self.die_of(r, off), Cause::Gc, rd));
            let slot = self.sb_slot[sb as usize];
            self.log_pages[slot as usize][pos as usize] = NONE;
            self.sb_valid[sb as usize] -= 1;
            clear(&mut self.inlog, lpn);
            set(&mut self.written, lpn);
        }
        flash.acct.gc_relocated_pages += log_pages.len() as u64;
        self.sb_wp[r as usize] = upto;
        end
    }

    /// Complete `lu`'s sequential log to the end of the unit and make it the data block;
    /// erase the old data block. A switch merge when the log was full, else a partial merge.
    pub fn switch(&mut self, lu: u32, at: Nanos, flash: &mut Flash) -> Nanos {
        let r = self.seq_log[lu as usize];
        debug_assert!(r != NONE);
        let was_full = self.sb_wp[r as usize] == self.n;
        let t = self.fill_seq(lu, self.n, at, flash);
        let old = self.data_sb[lu as usize];
        self.data_sb[lu as usize] = r;
        self.seq_log[lu as usize] = NONE;
        self.sb_kind[r as usize] = SbKind::Data;
        self.sb_owner[r as usize] = lu;
        self.sb_wp[r as usize] = self.n;
        if was_full {
            flash.acct.merges_switch += 1;
        }
        let mut end = t;
        if old != NONE {
            end = self.erase_sb(old, t, flash);
        }
        end
    }

    /// Start a sequential log for `lu` in a fresh superblock (write pointer 0).
    pub fn open_seq(&mut self, lu: u32) -> Result<u32, SimError> {
        debug_assert_eq!(self.seq_log[lu as usize], NONE);
        let g = match (self.unit_groups, self.data_sb[lu as usize]) {
            (UnitGroups::Free, NONE) => self.roomiest_group(),
            (UnitGroups::Free, d) => self.group_of(d),
            _ => self.unit_group(lu),
        };
        let r = self.alloc(g, SbKind::SeqLog, lu)?;
        self.seq_log[lu as usize] = r;
        Ok(r)
    }

    /// Turn `lu`'s sequential log into a random log (its pages keep their positions).
    /// O(log write pointer). Returns the log.
    pub fn demote_seq(&mut self, lu: u32) -> Result<u32, SimError> {
        let r = self.seq_log[lu as usize];
        debug_assert!(r != NONE);
        let slot = self
            .free_slots
            .pop()
            .ok_or_else(|| SimError::Invariant("internal: no random-log slot left".to_string()))?;
        self.sb_slot[r as usize] = slot;
        self.sb_kind[r as usize] = SbKind::RandLog;
        let base = lu as u64 * self.n as u64;
        let wp = self.sb_wp[r as usize];
        let mut valid = 0;
        for off in 0..wp {
            let lpn = base + off as u64;
            if bit(&self.written, lpn) {
                clear(&mut self.written, lpn);
                set(&mut self.inlog, lpn);
                self.log_loc[lpn as usize] = r * self.n + off;
                self.log_pages[slot as usize][off as usize] = lpn as u32;
                valid += 1;
            }
        }
        self.sb_valid[r as usize] = valid;
        self.seq_log[lu as usize] = NONE;
        Ok(r)
    }

    /// Full merge of `lu` (which must have no sequential log): a new superblock
    /// receives the newest copy of every page; the old data block is erased.
    pub fn full_merge(&mut self, lu: u32, at: Nanos, flash: &mut Flash) -> Result<Nanos, SimError> {
        debug_assert_eq!(self.seq_log[lu as usize], NONE);
        self.open_seq(lu)?;
        flash.acct.merges_full += 1;
        Ok(self.switch(lu, at, flash))
    }

    /// Whether any page of `lu` at offsets [0, upto) is in a random log.
    pub fn any_inlog_below(&self, lu: u32, upto: u32) -> bool {
        let lo = lu as u64 * self.n as u64;
        let hi = lo + upto as u64;
        let mut w = lo >> 6;
        while w << 6 < hi {
            let wlo = w << 6;
            let mask = word_mask(wlo, lo, hi);
            if self.inlog[w as usize] & mask != 0 {
                return true;
            }
            w += 1;
        }
        false
    }

    /// Valid pages (logical page numbers) of random log `sb`.
    pub fn log_valid_pages(&self, sb: u32) -> Vec<u32> {
        let slot = self.sb_slot[sb as usize];
        self.log_pages[slot as usize][..self.sb_wp[sb as usize] as usize]
            .iter()
            .copied()
            .filter(|&l| l != NONE)
            .collect()
    }

    /// TRIM: the page is no longer mapped (its copies become invalid).
    pub fn trim(&mut self, lpn: u64) {
        if bit(&self.inlog, lpn) {
            self.supersede(lpn);
            self.mapped -= 1;
        } else if bit(&self.written, lpn) {
            clear(&mut self.written, lpn);
            self.mapped -= 1;
        }
    }

    /// Consistency check of the maps, logs and pools.
    pub fn check(&self) -> Result<(), SimError> {
        let mut mapped = 0u64;
        let mut valid = vec![0u32; self.n_sb as usize];
        for lpn in 0..self.geo.logical_pages {
            let w = bit(&self.written, lpn);
            let l = bit(&self.inlog, lpn);
            if w && l {
                return Err(SimError::Invariant(format!(
                    "lpn {lpn} both in a log and in place"
                )));
            }
            if w || l {
                mapped += 1;
            }
            if l {
                let loc = self.log_loc[lpn as usize];
                let (sb, pos) = (loc / self.n, loc % self.n);
                if self.sb_kind[sb as usize] != SbKind::RandLog {
                    return Err(SimError::Invariant(format!(
                        "lpn {lpn} in log superblock {sb} of kind {:?}",
                        self.sb_kind[sb as usize]
                    )));
                }
                let slot = self.sb_slot[sb as usize];
                if self.log_pages[slot as usize][pos as usize] != lpn as u32 {
                    return Err(SimError::Invariant(format!(
                        "lpn {lpn}: log position {pos} of superblock {sb} holds {}",
                        self.log_pages[slot as usize][pos as usize]
                    )));
                }
                if pos >= self.sb_wp[sb as usize] {
                    return Err(SimError::Invariant(format!(
                        "lpn {lpn} past the write pointer of log {sb}"
                    )));
                }
                valid[sb as usize] += 1;
            }
            if w {
                let (lu, off) = self.lu_off(lpn);
                let sl = self.seq_log[lu as usize];
                let in_seq = sl != NONE && off < self.sb_wp[sl as usize];
                let d = self.data_sb[lu as usize];
                if !in_seq && (d == NONE || off >= self.sb_wp[d as usize]) {
                    return Err(SimError::Invariant(format!(
                        "lpn {lpn} marked written but unit {lu} has no programmed page for it"
                    )));
                }
            }
        }
        if mapped != self.mapped {
            return Err(SimError::Invariant(format!(
                "{mapped} pages mapped, counter says {}",
                self.mapped
            )));
        }
        let mut free_seen = vec![false; self.n_sb as usize];
        for (g, h) in self.free.iter().enumerate() {
            for Reverse((_, sb)) in h.iter() {
                if self.group_of(*sb) as usize != g || self.sb_kind[*sb as usize] != SbKind::Free {
                    return Err(SimError::Invariant(format!(
                        "free pool {g} holds superblock {sb} ({:?})",
                        self.sb_kind[*sb as usize]
                    )));
                }
                free_seen[*sb as usize] = true;
            }
        }
        for sb in 0..self.n_sb {
            let k = self.sb_kind[sb as usize];
            if (k == SbKind::Free) != free_seen[sb as usize] {
                return Err(SimError::Invariant(format!(
                    "superblock {sb} ({k:?}) and the free pools disagree"
                )));
            }
            if k == SbKind::RandLog && valid[sb as usize] != self.sb_valid[sb as usize] {
                return Err(SimError::Invariant(format!(
                    "log {sb}: {} valid pages, counter says {}",
                    valid[sb as usize], self.sb_valid[sb as usize]
                )));
            }
            let o = self.sb_owner[sb as usize];
            match k {
                SbKind::Data if self.data_sb[o as usize] != sb => {
                    return Err(SimError::Invariant(format!(
                        "data superblock {sb} not the data block of its unit {o}"
                    )))
                }
                SbKind::SeqLog if self.seq_log[o as usize] != sb => {
                    return Err(SimError::Invariant(format!(
                        "sequential log {sb} not the log of its unit {o}"
                    )))
                }
                _ => {}
            }
        }
        Ok(())
    }

    pub fn memory_bytes(&self) -> usize {
        (self.written.capacity() + self.inlog.capacity()) * 8
            + self.log_loc.capacity() * 4
            + (self.data_sb.len() + self.seq_log.len()) * 4
            + self.n_sb as usize * (1 + 4 * 4)
            + self
                .log_pages
                .iter()
                .map(|v| v.capacity() * 4)
                .sum::<usize>()
            + self.free.iter().map(|h| h.capacity() * 16).sum::<usize>()
            + self.erase.capacity() * 4
    }

    /// Run the checker if `check=on`.
    pub fn maybe_check(&self, what: &str) -> Result<(), SimError> {
        if self.check {
            self.check()
                .map_err(|e| e.context(format_args!("checker after {what}")))
        } else {
            Ok(())
        }
    }

    /// Read-ahead support: `next` is on the die after `prev`'s.
    pub fn stripe_contiguous(&self, prev: u64, next: u64) -> bool {
        match (self.die_of_lpn(prev), self.die_of_lpn(next)) {
            (Some(a), Some(b)) => b == (a + 1) % self.geo.units || self.geo.units == 1,
            _ => false,
        }
    }
}

/// The `Ftl` methods every block-mapped FTL delegates to its [`SbCore`] (field `core`).
macro_rules! sb_common {
    () => {
        fn logical_pages(&self) -> u64 {
            self.core.geo.logical_pages
        }

        #[inline]
        fn read(&mut self, lpn: u64, at: Nanos, flash: &mut Flash) -> Result<Nanos, SimError> {
            Ok(self.core.read(lpn, at, flash))
        }

        fn trim(&mut self, lpn: u64, _at: Nanos, _flash: &mut Flash) -> Result<(), SimError> {
            self.core.trim(lpn);
            Ok(())
        }

        fn is_mapped(&self, lpn: u64) -> bool {
            self.core.is_mapped(lpn)
        }

        fn stripe_contiguous(&self, prev: u64, next: u64) -> bool {
            self.core.stripe_contiguous(prev, next)
        }

        fn erase_counts(&self) -> &[u32] {
            self.core.erase_counts()
        }

        fn mapped_pages(&self) -> u64 {
            self.core.mapped
        }

        fn free_blocks(&self) -> Option<u64> {
            Some(self.core.free_count() * self.core.s as u64)
        }
    };
}
pub(crate) use sb_common;

/// The bits of the 64-bit bitmap word starting at bit `wlo` that fall in
/// [lo, hi); the caller guarantees the word overlaps the range.
fn word_mask(wlo: u64, lo: u64, hi: u64) -> u64 {
    let mut mask = u64::MAX;
    if wlo < lo {
        mask &= u64::MAX << (lo - wlo);
    }
    if wlo + 64 > hi {
        mask &= u64::MAX >> (wlo + 64 - hi);
    }
    mask
}
