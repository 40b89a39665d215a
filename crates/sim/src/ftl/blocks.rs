//! Per-block state shared by the FTLs and the GC victim policies: valid-page
//! counts, state, erase counts, close time, and the per-die buckets of closed
//! blocks indexed by valid count (greedy selection in O(pages_per_block)).

use crate::error::{CheckpointError, SimError};

pub const NONE: u32 = u32::MAX;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(u8)]
pub enum BlockState {
    /// Erased, in the die's free pool.
    Free = 0,
    /// Receiving host writes.
    OpenHost = 1,
    /// Receiving GC / wear-levelling relocations.
    OpenGc = 2,
    /// Full; a GC candidate.
    Closed = 3,
    /// Being reclaimed.
    Victim = 4,
}

/// The block table. Blocks are numbered globally; block `b` is on die `b / blocks_per_unit`.
#[derive(Clone, Debug)]
pub struct BlockTable {
    pub pages_per_block: u32,
    pub blocks_per_unit: u32,
    valid: Vec<u16>,
    state: Vec<BlockState>,
    erase: Vec<u32>,
    closed_seq: Vec<u64>,
    prev: Vec<u32>,
    next: Vec<u32>,
    /// Per die, per valid count: head of the list of closed blocks.
    heads: Vec<u32>,
}

impl BlockTable {
    pub fn new(units: u32, blocks_per_unit: u32, pages_per_block: u32) -> BlockTable {
        let n = units as usize * blocks_per_unit as usize;
        BlockTable {
            pages_per_block,
            blocks_per_unit,
            valid: vec![0; n],
            state: vec![BlockState::Free; n],
            erase: vec![0; n],
            closed_seq: vec![0; n],
            prev: vec![NONE; n],
            next: vec![NONE; n],
            heads: vec![NONE; units as usize * (pages_per_block as usize + 1)],
        }
    }

    pub fn len(&self) -> usize {
        self.valid.len()
    }

    pub fn is_empty(&self) -> bool {
        self.valid.is_empty()
    }

    #[inline]
    pub fn valid(&self, b: u32) -> u32 {
        self.valid[b as usize] as u32
    }

    #[inline]
    pub fn state(&self, b: u32) -> BlockState {
        self.state[b as usize]
    }

    #[inline]
    pub fn erase_count(&self, b: u32) -> u32 {
        self.erase[b as usize]
    }

    pub fn erase_counts(&self) -> &[u32] {
        &self.erase
    }

    #[inline]
    pub fn closed_seq(&self, b: u32) -> u64 {
        self.closed_seq[b as usize]
    }

    #[inline]
    fn unit(&self, b: u32) -> u32 {
        b / self.blocks_per_unit
    }

    #[inline]
    fn head_index(&self, unit: u32, v: u32) -> usize {
        unit as usize * (self.pages_per_block as usize + 1) + v as usize
    }

    fn link(&mut self, b: u32) {
        let h = self.head_index(self.unit(b), self.valid(b));
        let old = self.heads[h];
        self.next[b as usize] = old;
        self.prev[b as usize] = NONE;
        if old != NONE {
            self.prev[old as usize] = b;
        }
        self.heads[h] = b;
    }

    fn unlink(&mut self, b: u32) {
        let (p, n) = (self.prev[b as usize], self.next[b as usize]);
        if p != NONE {
            self.next[p as usize] = n;
        } else {
            let h = self.head_index(self.unit(b), self.valid(b));
            debug_assert_eq!(self.heads[h], b, "block {b} not at head of its bucket");
            self.heads[h] = n;
        }
        if n != NONE {
            self.prev[n as usize] = p;
        }
        self.prev[b as usize] = NONE;
        self.next[b as usize] = NONE;
    }

    /// A page of block `b` became valid.
    #[inline]
    pub fn inc_valid(&mut self, b: u32) {
        debug_assert!(self.valid(b) < self.pages_per_block, "block {b} over-full");
        debug_assert!(self.state(b) != BlockState::Closed && self.state(b) != BlockState::Free);
        self.valid[b as usize] += 1;
    }

    /// A page of block `b` became invalid.
    #[inline]
    pub fn dec_valid(&mut self, b: u32) {
        debug_assert!(
            self.valid(b) > 0,
            "block {b} has no valid page to invalidate"
        );
        if self.state(b) == BlockState::Closed {
            self.unlink(b);
            self.valid[b as usize] -= 1;
            self.link(b);
        } else {
            self.valid[b as usize] -= 1;
        }
    }

    /// Victim `b`'s `moved` valid pages have all been relocated.
    #[inline]
    pub fn emptied(&mut self, b: u32, moved: u32) {
        debug_assert_eq!(self.state(b), BlockState::Victim);
        debug_assert_eq!(
            self.valid(b),
            moved,
            "victim {b}: valid count vs pages moved"
        );
        self.valid[b as usize] = 0;
    }

    /// Take a free block for writing.
    pub fn open(&mut self, b: u32, gc: bool) {
        debug_assert_eq!(self.state(b), BlockState::Free);
        debug_assert_eq!(self.valid(b), 0);
        self.state[b as usize] = if gc {
            BlockState::OpenGc
        } else {
            BlockState::OpenHost
        };
    }

    /// A full open block becomes a GC candidate.
    pub fn close(&mut self, b: u32, seq: u64) {
        debug_assert!(matches!(
            self.state(b),
            BlockState::OpenHost | BlockState::OpenGc
        ));
        self.state[b as usize] = BlockState::Closed;
        self.closed_seq[b as usize] = seq;
        self.link(b);
    }

    /// A closed block is chosen for reclamation.
    pub fn take_victim(&mut self, b: u32) {
        debug_assert_eq!(self.state(b), BlockState::Closed);
        self.unlink(b);
        self.state[b as usize] = BlockState::Victim;
    }

    /// A reclaimed (all invalid) block is erased.
    pub fn erased(&mut self, b: u32) {
        debug_assert_eq!(self.state(b), BlockState::Victim);
        debug_assert_eq!(self.valid(b), 0, "erasing block {b} with valid pages");
        self.state[b as usize] = BlockState::Free;
        self.erase[b as usize] += 1;
    }

    /// The closed block of `unit` with the fewest valid pages.
    pub fn min_valid_closed(&self, unit: u32) -> Option<u32> {
        let base = self.head_index(unit, 0);
        self.heads[base..base + self.pages_per_block as usize + 1]
            .iter()
            .copied()
            .find(|&h| h != NONE)
    }

    /// Blocks of `unit`.
    pub fn unit_blocks(&self, unit: u32) -> std::ops::Range<u32> {
        unit * self.blocks_per_unit..(unit + 1) * self.blocks_per_unit
    }

    /// Verify the bucket lists against states and valid counts.
    pub fn check_buckets(&self, units: u32) -> Result<(), SimError> {
        let mut seen = vec![false; self.len()];
        for u in 0..units {
            for v in 0..=self.pages_per_block {
                let mut b = self.heads[self.head_index(u, v)];
                let mut prev = NONE;
                let mut guard = 0usize;
                while b != NONE {
                    guard += 1;
                    if guard > self.len() {
                        return Err(SimError::Invariant(format!(
                            "bucket list of die {u} valid {v} loops"
                        )));
                    }
                    if self.state(b) != BlockState::Closed
                        || self.valid(b) != v
                        || self.unit(b) != u
                    {
                        return Err(SimError::Invariant(format!(
                            "block {b} in bucket (die {u}, valid {v}) has state {:?}, valid {}",
                            self.state(b),
                            self.valid(b)
                        )));
                    }
                    if self.prev[b as usize] != prev {
                        return Err(SimError::Invariant(format!("block {b}: bad prev link")));
                    }
                    seen[b as usize] = true;
                    prev = b;
                    b = self.next[b as usize];
                }
            }
        }
        for b in 0..self.len() as u32 {
            if (self.state(b) == BlockState::Closed) != seen[b as usize] {
                return Err(SimError::Invariant(format!(
                    "closed block {b} missing from its bucket (or non-closed block present)"
                )));
            }
        }
        Ok(())
    }

    pub fn memory_bytes(&self) -> usize {
        self.len() * (2 + 1 + 4 + 8 + 4 + 4) + self.heads.len() * 4
    }
}

/// Checkpoints (device mode, `crate::device::persist`).
impl BlockTable {
    pub(crate) fn save_state(&self, e: &mut crate::codec::Enc) {
        e.vec_u16(&self.valid);
        e.u64(self.state.len() as u64);
        for s in &self.state {
            e.u8(*s as u8);
        }
        e.vec_u32(&self.erase);
        e.vec_u64(&self.closed_seq);
        e.vec_u32(&self.prev);
        e.vec_u32(&self.next);
        e.vec_u32(&self.heads);
    }

    pub(crate) fn load_state(&mut self, d: &mut crate::codec::Dec) -> Result<(), SimError> {
        let n = self.len();
        let valid = d.vec_u16()?;
        let ns = d.u64()? as usize;
        if valid.len() != n || ns != n {
            return Err(CheckpointError::MalformedValue(format!(
                "checkpoint block table: {} blocks, expected {n}",
                valid.len()
            ))
            .into());
        }
        let mut state = Vec::with_capacity(n);
        for _ in 0..n {
            state.push(match d.u8()? {
                0 => BlockState::Free,
                1 => BlockState::OpenHost,
                2 => BlockState::OpenGc,
                3 => BlockState::Closed,
                4 => BlockState::Victim,
                x => {
                    return Err(CheckpointError::MalformedValue(format!(
                        "checkpoint block table: bad block state {x}"
                    ))
                    .into())
                }
            });
        }
        let erase = d.vec_u32_len(n, "erase counts")?;
        let closed_seq = d.vec_u64()?;
        let prev = d.vec_u32_len(n, "bucket links")?;
        let next = d.vec_u32_len(n, "bucket links")?;
        let heads = d.vec_u32_len(self.heads.len(), "bucket heads")?;
        if closed_seq.len() != n {
            return Err(
                CheckpointError::Malformed("checkpoint block table: bad close times").into(),
            );
        }
        if valid.iter().any(|&v| v as u32 > self.pages_per_block)
            || prev
                .iter()
                .chain(&next)
                .chain(&heads)
                .any(|&b| b != NONE && b as usize >= n)
        {
            return Err(
                CheckpointError::Malformed("checkpoint block table: values out of range").into(),
            );
        }
        self.valid = valid;
        self.state = state;
        self.erase = erase;
        self.closed_seq = closed_seq;
        self.prev = prev;
        self.next = next;
        self.heads = heads;
        Ok(())
    }
}
