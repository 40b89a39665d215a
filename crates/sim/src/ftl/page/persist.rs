//! Checkpoints of the page-mapped FTL (device mode, `crate::device::persist`):
//! every field that evolves, so that a restored FTL continues exactly as the
//! saved one would have. A child module of `ftl::page` so it reaches the
//! private fields.

use std::cmp::Reverse;

use super::{Frontier, PageFtl, NONE};
use crate::codec::{Dec, Enc};
use crate::error::{CheckpointError, SimError};

impl PageFtl {
    pub(crate) fn save_state_impl(&self, e: &mut Enc) -> Result<(), SimError> {
        e.vec_u32(&self.l2p);
        // The reverse map as it was before invalidation became lazy (stale
        // entries written as NONE), so checkpoints keep their format and meaning.
        e.u64(self.p2l.len() as u64);
        e.buf.reserve(self.p2l.len() * 4);
        for ppn in 0..self.p2l.len() as u32 {
            e.u32(self.lpn_at(ppn).unwrap_or(NONE));
        }
        self.blocks.save_state(e);
        e.u64(self.free.len() as u64);
        for heap in &self.free {
            // A heap pops by its (unique) keys alone, so the sorted set of keys restores it exactly.
            let mut keys: Vec<(u64, u32)> = heap.iter().map(|Reverse(k)| *k).collect();
            keys.sort_unstable();
            e.u64(keys.len() as u64);
            for (k, b) in keys {
                e.u64(k);
                e.u32(b);
            }
        }
        e.u64(self.free_seq);
        for f in self.host_open.iter().chain(&self.gc_open) {
            e.u32(f.block);
            e.u32(f.next);
        }
        e.u32(self.rr);
        e.u64(self.seq);
        e.vec_u32(&self.erases_since_wl);
        e.u64(self.mapped);
        let mut policy = Enc::default();
        self.policy.save_state(&mut policy);
        e.bytes(&policy.buf);
        // Only with lazy cleaning, so that other checkpoints keep their
        // format (the configuration, in the header, says which).
        if self.gc.incremental {
            e.vec_u32(&self.cleaning);
        }
        // Likewise only with `readahead.relocation_breaks_stripe`.
        if !self.gc_filled.is_empty() {
            e.bytes(&self.gc_filled);
        }
        Ok(())
    }

    pub(crate) fn load_state_impl(&mut self, d: &mut Dec) -> Result<(), SimError> {
        let lp = self.geo.logical_pages as usize;
        let pp = self.geo.physical_pages as usize;
        let nblocks = self.blocks.len() as u32;
        let l2p = d.vec_u32_len(lp, "forward map")?;
        let p2l = d.vec_u32_len(pp, "reverse map")?;
        if l2p.iter().any(|&p| p != NONE && p as usize >= pp)
            || p2l.iter().any(|&l| l != NONE && l as usize >= lp)
        {
            return Err(
                CheckpointError::Malformed("checkpoint maps: page numbers out of range").into(),
            );
        }
        self.blocks.load_state(d)?;
        let units = d.u64()? as usize;
        if units != self.free.len() {
            return Err(CheckpointError::MalformedValue(format!(
                "checkpoint free pools: {units} dies, expected {}",
                self.free.len()
            ))
            .into());
        }
        for u in 0..units {
            let n = d.u64()?;
            if n > self.geo.blocks_per_unit as u64 {
                return Err(CheckpointError::Malformed("checkpoint free pool too large").into());
            }
            let heap = &mut self.free[u];
            heap.clear();
            for _ in 0..n {
                let k = d.u64()?;
                let b = d.u32()?;
                if b >= nblocks || self.geo.unit_of_block(b) as usize != u {
                    return Err(CheckpointError::Malformed(
                        "checkpoint free pool: block out of range",
                    )
                    .into());
                }
                heap.push(Reverse((k, b)));
            }
        }
        self.free_seq = d.u64()?;
        let ppb = self.ppb;
        // open blocks: `planes` per die with multi-plane operations
        let n_open = self.host_open.len();
        for i in 0..2 * n_open {
            let block = d.u32()?;
            let next = d.u32()?;
            if (block != NONE && block >= nblocks) || next > ppb {
                return Err(
                    CheckpointError::Malformed("checkpoint open blocks out of range").into(),
                );
            }
            let f = Frontier { block, next };
            if i < n_open {
                self.host_open[i] = f;
            } else {
                self.gc_open[i - n_open] = f;
            }
        }
        self.derive_plane_cursors();
        self.rr = d.u32()?;
        if self.rr >= self.geo.units {
            return Err(CheckpointError::Malformed("checkpoint: bad allocation die").into());
        }
        self.seq = d.u64()?;
        self.erases_since_wl = d.vec_u32_len(self.geo.units as usize, "wear-levelling counters")?;
        self.mapped = d.u64()?;
        let policy = d.bytes()?;
        let mut pd = Dec::new(policy);
        self.policy.load_state(&mut pd, nblocks)?;
        if !pd.done() {
            return Err(CheckpointError::Malformed(
                "checkpoint: GC policy state has trailing bytes",
            )
            .into());
        }
        if self.gc.incremental {
            let cleaning = d.vec_u32_len(self.cleaning.len(), "blocks being cleaned")?;
            let bpu = self.geo.blocks_per_unit;
            if cleaning
                .iter()
                .enumerate()
                .any(|(u, &b)| b != NONE && (b >= nblocks || b / bpu != u as u32))
            {
                return Err(CheckpointError::Malformed(
                    "checkpoint: a block being cleaned is out of range",
                )
                .into());
            }
            self.cleaning.copy_from_slice(&cleaning);
        }
        if !self.gc_filled.is_empty() {
            let flags = d.bytes()?;
            if flags.len() != self.gc_filled.len() || flags.iter().any(|&f| f > 1) {
                return Err(CheckpointError::Malformed(
                    "checkpoint: the relocated-block flags do not match the device",
                )
                .into());
            }
            self.gc_filled.copy_from_slice(flags);
        }
        self.l2p.copy_from_slice(&l2p);
        self.p2l.copy_from_slice(&p2l);
        Ok(())
    }

    pub(crate) fn free_blocks_impl(&self) -> u64 {
        self.free.iter().map(|h| h.len() as u64).sum()
    }
}
