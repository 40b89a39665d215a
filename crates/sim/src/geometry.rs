//! Derived geometry: dies ("units"), blocks per die, physical page numbering.
//!
//! A *unit* is one die: `units = channels x chips_per_channel x dies_per_chip`.
//! Unit `u` sits on channel `u % channels`, so round-robin striping over units
//! alternates channels first. Planes are counted in the number of blocks; the
//! die is the unit of parallelism. A die's blocks alternate planes (block `b`
//! of a die is on plane `b % planes_per_die`); with `nand.multi_plane` a die
//! reads or programs one page per plane at once (`resources.rs`).
//!
//! Physical page numbers (`ppn`, u32) are die-major:
//! `ppn = (unit * blocks_per_unit + block_in_unit) * pages_per_block + page`,
//! and a global block number is `ppn / pages_per_block`.
//!
//! The number of blocks per die is the smallest multiple of `planes_per_die`
//! that gives at least `logical_pages x (1 + op)` physical pages over all dies.

use crate::config::SimConfig;
use crate::error::ConfigError;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Geometry {
    pub channels: u32,
    pub units: u32,
    pub planes_per_die: u32,
    pub pages_per_block: u32,
    pub blocks_per_unit: u32,
    pub page_bytes: u64,
    pub logical_pages: u64,
    pub physical_pages: u64,
}

impl Geometry {
    pub fn derive(cfg: &SimConfig) -> Result<Geometry, ConfigError> {
        let g = &cfg.geometry;
        let units = g.channels as u64 * g.chips_per_channel as u64 * g.dies_per_chip as u64;
        if units == 0 || units > u32::MAX as u64 / 2 {
            return Err(ConfigError::invalid(
                &cfg.name,
                "the number of dies must be in 1..2^31",
            ));
        }
        let logical_pages = g.capacity.0 / g.page_bytes.0;
        let want = (logical_pages as f64 * (1.0 + g.over_provisioning)).ceil() as u64;
        let ppb = g.pages_per_block as u64;
        let blocks_total = want.div_ceil(ppb);
        let mut bpu = blocks_total.div_ceil(units);
        let planes = g.planes_per_die as u64;
        bpu = bpu.div_ceil(planes) * planes;
        let physical_pages = bpu * units * ppb;
        if physical_pages >= u32::MAX as u64 || logical_pages >= u32::MAX as u64 {
            return Err(ConfigError::invalid(&cfg.name, format!(
                "{physical_pages} physical pages exceed the simulator's 32-bit page numbers; use a smaller capacity or larger pages"
            )));
        }
        Ok(Geometry {
            channels: g.channels,
            units: units as u32,
            planes_per_die: g.planes_per_die,
            pages_per_block: g.pages_per_block,
            blocks_per_unit: bpu as u32,
            page_bytes: g.page_bytes.0,
            logical_pages,
            physical_pages,
        })
    }

    pub fn total_blocks(&self) -> u32 {
        self.blocks_per_unit * self.units
    }

    pub fn pages_per_unit(&self) -> u64 {
        self.blocks_per_unit as u64 * self.pages_per_block as u64
    }

    #[inline]
    pub fn unit_of_ppn(&self, ppn: u32) -> u32 {
        (ppn as u64 / self.pages_per_unit()) as u32
    }

    #[inline]
    pub fn unit_of_block(&self, block: u32) -> u32 {
        block / self.blocks_per_unit
    }

    #[inline]
    pub fn channel_of_unit(&self, unit: u32) -> u32 {
        unit % self.channels
    }

    /// Over-provisioning actually obtained after rounding to whole blocks.
    pub fn effective_op(&self) -> f64 {
        self.physical_pages as f64 / self.logical_pages as f64 - 1.0
    }

    pub fn capacity_bytes(&self) -> u64 {
        self.logical_pages * self.page_bytes
    }
}
