//! Block-level mapping (Ban's NFTL-style block map; Chen et al. 2.2 and 5.3):
//! each logical unit (a superblock's worth of pages, see [`super::superblock`])
//! maps to one physical superblock, and a page lives at its own offset.
//!
//! - A write beyond the data block's write pointer is programmed in place.
//! - An update (a write at or below the write pointer) is a read-modify-write
//!   of the block: a *replacement* block is opened, the pages before the
//!   written offset are copied into it, the new page is programmed at its
//!   offset. Later writes to higher offsets of the same unit continue in the
//!   replacement (the gap copied first), so a sequential overwrite costs one
//!   program per page plus one erase per block, as Chen et al. describe
//!   ("a sequential write only incurs one page write and 1/N erase
//!   operations"); a write to a lower offset, or to another unit, closes the
//!   replacement: the remaining pages are copied, it becomes the data block and
//!   the old block is erased. One replacement is open at a time, so a random
//!   write costs up to N - 1 page copies, N programs and an erase ("a random
//!   write may incur up to N - 1 page reads from the old block, N page writes
//!   to the new block, and one block erase", Chen et al. 5.3).
//!
//! Copies and erases are accounted as `gc`; `block_rewrites` counts the
//! read-modify-writes.

use super::blocks::NONE;
use super::superblock::{sb_common, SbCore};
use super::Ftl;
use crate::config::SimConfig;
use crate::error::SimError;
use crate::geometry::Geometry;
use crate::resources::Flash;
use crate::Nanos;

pub struct BlockFtl {
    core: SbCore,
    /// The unit whose replacement block is open.
    open: u32,
}

impl BlockFtl {
    pub fn new(cfg: &SimConfig, geo: &Geometry) -> BlockFtl {
        BlockFtl {
            core: SbCore::new(cfg, geo, 0),
            open: NONE,
        }
    }

    fn close_open(&mut self, at: Nanos, flash: &mut Flash) -> Nanos {
        if self.open == NONE {
            return at;
        }
        let lu = self.open;
        self.open = NONE;
        self.core.switch(lu, at, flash)
    }
}

impl Ftl for BlockFtl {
    fn name(&self) -> &'static str {
        "block"
    }

    sb_common!();

    fn write(
        &mut self,
        lpn: u64,
        _partial: bool,
        at: Nanos,
        flash: &mut Flash,
    ) -> Result<Nanos, SimError> {
        let c = &mut self.core;
        let (lu, off) = c.lu_off(lpn);
        if c.seq_log[lu as usize] != NONE {
            let r = c.seq_log[lu as usize];
            if off >= c.sb_wp[r as usize] {
                let t = c.fill_seq(lu, off, at, flash);
                return Ok(c.program_seq(lpn, t, flash));
            }
            let t = self.close_open(at, flash);
            return self.write(lpn, _partial, t, flash);
        }
        if c.data_sb[lu as usize] == NONE {
            let g = c.unit_group(lu);
            let sb = c.alloc(g, super::superblock::SbKind::Data, lu)?;
            c.data_sb[lu as usize] = sb;
        }
        let d = c.data_sb[lu as usize];
        if off >= c.sb_wp[d as usize] {
            return Ok(c.program_data(lpn, at, flash));
        }
        // read-modify-write: open a replacement block for this unit
        let t = self.close_open(at, flash);
        let c = &mut self.core;
        c.open_seq(lu)?;
        self.open = lu;
        flash.acct.block_rewrites += 1;
        let t = c.fill_seq(lu, off, t, flash);
        let end = c.program_seq(lpn, t, flash);
        c.maybe_check("a block rewrite")?;
        Ok(end)
    }

    fn idle(&mut self, _from: Nanos, _deadline: Nanos, _flash: &mut Flash) -> Result<(), SimError> {
        Ok(())
    }

    fn check(&self) -> Result<(), SimError> {
        self.core.check()
    }

    fn memory_bytes(&self) -> usize {
        self.core.memory_bytes()
    }
}
