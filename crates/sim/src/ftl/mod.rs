//! Flash translation layers behind one trait, one module each.
//!
//! The device layer (host interface, cache, read-ahead, request timing) calls
//! an [`Ftl`] page by page; the FTL maps logical pages, allocates physical
//! pages, cleans, levels wear, and places every flash operation it needs on the
//! [`Flash`] resources (which also count them by [`crate::Cause`]). Later FTLs
//! (block-level, hybrid log-block, DFTL, two-level small-chunk maps) implement
//! the same trait and account their map traffic under `Cause::Mapping`.

use crate::config::{FtlKind, SimConfig};
use crate::geometry::Geometry;
use crate::resources::Flash;
use crate::Nanos;

pub mod blocks;
pub mod page;

/// A flash translation layer. Logical page numbers (`lpn`) are in units of the
/// flash page size; every method is given the simulated time `at` when the
/// controller starts the operation and returns when it ends. An `Err` is an
/// invariant violation or a stall (no progress possible); the device reports it
/// as `DeviceError::Invariant`.
pub trait Ftl {
    fn name(&self) -> &'static str;

    fn logical_pages(&self) -> u64;

    /// Read logical page `lpn`; returns when its data is in the controller.
    /// An unmapped (never written or trimmed) page costs no flash operation.
    fn read(&mut self, lpn: u64, at: Nanos, flash: &mut Flash) -> Result<Nanos, String>;

    /// Write logical page `lpn` from data available at `at`; `partial` means the
    /// host covers only part of the page, so the old page must be read first
    /// (read-modify-write). Returns when the page is programmed.
    fn write(
        &mut self,
        lpn: u64,
        partial: bool,
        at: Nanos,
        flash: &mut Flash,
    ) -> Result<Nanos, String>;

    /// Discard logical page `lpn` (TRIM).
    fn trim(&mut self, lpn: u64, at: Nanos, flash: &mut Flash) -> Result<(), String>;

    /// Idle time from `idle_from` to `deadline`: background cleaning.
    fn idle(&mut self, idle_from: Nanos, deadline: Nanos, flash: &mut Flash) -> Result<(), String>;

    fn is_mapped(&self, lpn: u64) -> bool;

    /// Whether `next` is stored where a controller reading ahead from `prev` would
    /// find it (the next die in stripe order). Read-ahead prefetches only such pages.
    fn stripe_contiguous(&self, prev: u64, next: u64) -> bool;

    /// Full consistency check of the maps and counters (the checker).
    fn check(&self) -> Result<(), String>;

    /// Erase count of every block.
    fn erase_counts(&self) -> &[u32];

    /// Logical pages currently mapped.
    fn mapped_pages(&self) -> u64;

    /// Bytes of simulator memory held by the FTL.
    fn memory_bytes(&self) -> usize;
}

/// Build the FTL named in the configuration.
pub fn make(cfg: &SimConfig, geo: &Geometry) -> Box<dyn Ftl> {
    match cfg.ftl.kind {
        FtlKind::Page => Box::new(page::PageFtl::new(cfg, geo)),
    }
}
