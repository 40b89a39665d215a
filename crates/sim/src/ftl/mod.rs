//! Flash translation layers behind one trait, one module each.
//!
//! The device layer (host interface, cache, read-ahead, request timing) calls
//! an [`Ftl`] page by page; the FTL maps logical pages, allocates physical
//! pages, cleans, levels wear, and places every flash operation it needs on the
//! [`Flash`] resources (which also count them by [`crate::Cause`]).
//!
//! | kind | module | follows |
//! |------|--------|---------|
//! | `page` | [`page`] | page mapping in RAM, log-structured, greedy/cost-benefit/FIFO GC |
//! | `block` | [`block`] | block mapping with read-modify-write (Chen et al. 2.2, 5.3) |
//! | `bast` | [`bast`] | hybrid log-block, log blocks bound to one data block (Kim et al. 2002) |
//! | `fast` | [`fast`] | hybrid log-block, fully associative logs + a sequential log (Lee et al. 2007) |
//! | `dftl` | [`dftl`] | demand-cached page map, translation pages on flash (Gupta et al. 2009) |
//! | `two-level` | [`twolevel`] | small-chunk two-level map with host hints (Budilovsky et al. 2011) |
//!
//! Any of them can be wrapped by [`sync`], periodic metadata synchronisation
//! (Chen et al. 5.7). Map traffic is accounted under `Cause::Mapping`; merges
//! of the block-mapped FTLs under `Cause::Gc`. See docs/sim-ftl.md.

use crate::config::{FtlKind, SimConfig};
use crate::error::{ConfigError, SimError};
use crate::geometry::Geometry;
use crate::resources::Flash;
use crate::Nanos;

/// The `Ftl` methods that a mapping layer over the page FTL (`self.inner`:
/// DFTL, the two-level map, metadata sync) passes straight through.
macro_rules! forward_to_inner {
    () => {
        fn logical_pages(&self) -> u64 {
            self.inner.logical_pages()
        }

        fn is_mapped(&self, lpn: u64) -> bool {
            self.inner.is_mapped(lpn)
        }

        fn prefetch(&self, lpn: u64) {
            self.inner.prefetch(lpn)
        }

        fn stripe_contiguous(&self, prev: u64, next: u64) -> bool {
            self.inner.stripe_contiguous(prev, next)
        }

        fn erase_counts(&self) -> &[u32] {
            self.inner.erase_counts()
        }

        fn mapped_pages(&self) -> u64 {
            self.inner.mapped_pages()
        }

        fn free_blocks(&self) -> Option<u64> {
            self.inner.free_blocks()
        }
    };
}
pub(crate) use forward_to_inner;

pub mod bast;
pub mod block;
pub mod blocks;
pub mod dftl;
pub mod fast;
pub mod gc;
pub mod lru;
pub mod mapstore;
pub mod page;
pub mod superblock;
pub mod sync;
pub mod twolevel;

/// A flash translation layer. Logical page numbers (`lpn`) are in units of the
/// flash page size; every method is given the simulated time `at` when the
/// controller starts the operation and returns when it ends. An `Err` is an
/// invariant violation or a stall (no progress possible); the device reports it
/// as `DeviceError::Invariant`.
/// `Send` so that a device can move between threads (the NBD server shares one behind a lock).
pub trait Ftl: Send {
    fn name(&self) -> &'static str;

    fn logical_pages(&self) -> u64;

    /// Read logical page `lpn`; returns when its data is in the controller.
    /// An unmapped (never written or trimmed) page costs no flash operation.
    fn read(&mut self, lpn: u64, at: Nanos, flash: &mut Flash) -> Result<Nanos, SimError>;

    /// Write logical page `lpn` from data available at `at`; `partial` means the
    /// host covers only part of the page, so the old page must be read first
    /// (read-modify-write). Returns when the page is programmed.
    fn write(
        &mut self,
        lpn: u64,
        partial: bool,
        at: Nanos,
        flash: &mut Flash,
    ) -> Result<Nanos, SimError>;

    /// Discard logical page `lpn` (TRIM).
    fn trim(&mut self, lpn: u64, at: Nanos, flash: &mut Flash) -> Result<(), SimError>;

    /// Idle time from `idle_from` to `deadline`: background cleaning.
    fn idle(
        &mut self,
        idle_from: Nanos,
        deadline: Nanos,
        flash: &mut Flash,
    ) -> Result<(), SimError>;

    fn is_mapped(&self, lpn: u64) -> bool;

    /// Whether `next` is stored where a controller reading ahead from `prev` would
    /// find it (the next die in stripe order). Read-ahead prefetches only such pages.
    fn stripe_contiguous(&self, prev: u64, next: u64) -> bool;

    /// Full consistency check of the maps and counters (the checker).
    fn check(&self) -> Result<(), SimError>;

    /// Erase count of every block.
    fn erase_counts(&self) -> &[u32];

    /// Logical pages currently mapped.
    fn mapped_pages(&self) -> u64;

    /// Bytes of simulator memory held by the FTL.
    fn memory_bytes(&self) -> usize;

    /// A request for logical page `lpn` is about to be issued: a hint to start
    /// loading its map entry (a cache miss in a large map) while the device
    /// does the rest of the request's work. Changes nothing simulated.
    #[inline]
    fn prefetch(&self, _lpn: u64) {}

    /// A new host request starts (an FTL may reuse what it read for the
    /// request's earlier pages, e.g. DFTL's translation page).
    fn begin_request(&mut self) {}

    /// The request that just began is a write of `pages` pages (called after
    /// `begin_request`, before its first page): FTLs that classify writes by
    /// their size (FAST's `seq_large_requests`, LAST's locality detector) use it.
    fn begin_write(&mut self, _pages: u64) {}

    /// The device was just prefilled ([`prefill`]) on scratch resources: forget
    /// any simulated time the FTL keeps (the prefill took none).
    fn after_prefill(&mut self) {}

    /// Whether [`prefill`] may run on an untimed scratch array
    /// ([`Flash::untimed`]): true only for an FTL whose state (maps, blocks,
    /// victims) does not depend on the times its operations end. The state
    /// after the prefill is then the same as on a timed array; it is only
    /// built faster.
    fn prefill_untimed(&self) -> bool {
        false
    }

    /// Free (erased) blocks over all dies, for live statistics (`None`: not tracked).
    fn free_blocks(&self) -> Option<u64> {
        None
    }

    /// Device mode (`flashlab serve`): append the FTL's whole state to a
    /// checkpoint (`crate::device::persist`). An FTL without it cannot be
    /// checkpointed; the server then recovers by replaying its whole log.
    fn save_state(&self, _out: &mut crate::codec::Enc) -> Result<(), SimError> {
        Err(SimError::Invariant(format!(
            "the {} FTL cannot be checkpointed",
            self.name()
        )))
    }

    /// Load a state written by `save_state` into a freshly built FTL of the same configuration.
    fn load_state(&mut self, _inp: &mut crate::codec::Dec) -> Result<(), SimError> {
        Err(SimError::Invariant(format!(
            "the {} FTL cannot be checkpointed",
            self.name()
        )))
    }
}

/// Build the FTL named in the configuration.
pub fn make(cfg: &SimConfig, geo: &Geometry) -> Box<dyn Ftl> {
    let ftl: Box<dyn Ftl> = match cfg.ftl.kind {
        FtlKind::Page => Box::new(page::PageFtl::new(cfg, geo)),
        FtlKind::Block => Box::new(block::BlockFtl::new(cfg, geo)),
        FtlKind::Bast => Box::new(bast::BastFtl::new(cfg, geo)),
        FtlKind::Fast => Box::new(fast::FastFtl::new(cfg, geo)),
        FtlKind::Dftl => Box::new(dftl::DftlFtl::new(cfg, geo)),
        FtlKind::TwoLevel => Box::new(twolevel::TwoLevelFtl::new(cfg, geo)),
    };
    if cfg.ftl.sync.enabled {
        Box::new(sync::SyncFtl::new(ftl, &cfg.ftl.sync, geo))
    } else {
        ftl
    }
}

/// Write every logical page once, in order, on a scratch copy of the flash
/// resources (no simulated time passes and nothing is counted): the device
/// starts full and sequentially laid out, as after the papers' sequential fill.
pub fn prefill(
    ftl: &mut dyn Ftl,
    timing: &crate::nand::NandTiming,
    geo: &Geometry,
) -> Result<(), SimError> {
    let mut scratch = if ftl.prefill_untimed() {
        Flash::untimed(*timing, geo)
    } else {
        Flash::new(*timing, geo)
    };
    for lpn in 0..ftl.logical_pages() {
        ftl.write(lpn, false, 0, &mut scratch)?;
    }
    ftl.after_prefill();
    Ok(())
}

/// FTL-specific checks of a configuration (called by `SimConfig::validate`).
pub fn validate(cfg: &SimConfig, geo: &Geometry) -> Result<(), ConfigError> {
    let n = &cfg.name;
    let f = &cfg.ftl;
    match f.kind {
        FtlKind::Block => superblock::validate(cfg, geo, 1)?,
        FtlKind::Bast | FtlKind::Fast => {
            if f.log_blocks == 0 {
                return Err(ConfigError::invalid(n, "ftl.log_blocks must be at least 1"));
            }
            if f.kind == FtlKind::Fast && f.seq_logs == 0 {
                return Err(ConfigError::invalid(n, "ftl.seq_logs must be at least 1"));
            }
            // FAST: one sequential log (more only where the spare space allows,
            // see `FastFtl::new`), and the log drained by an incremental reclaim
            let extra = match f.kind {
                FtlKind::Fast => 1 + u32::from(f.merges_per_write > 0),
                _ => 1,
            };
            superblock::validate(cfg, geo, f.log_blocks + extra)?
        }
        FtlKind::TwoLevel => {
            if f.chunk_entries != 0 && !(geo.page_bytes / 4).is_multiple_of(f.chunk_entries as u64)
            {
                return Err(ConfigError::invalid(n, format!(
                    "ftl.chunk_entries ({}) must divide the entries per page ({}); 0 = page-sized chunks",
                    f.chunk_entries,
                    geo.page_bytes / 4
                )));
            }
        }
        FtlKind::Page | FtlKind::Dftl => {}
    }
    if f.kind != FtlKind::TwoLevel && f.hints.enabled {
        return Err(ConfigError::invalid(
            n,
            "ftl.hints need ftl.kind = \"two-level\"".to_string(),
        ));
    }
    if f.sync.enabled && f.sync.interval_writes == 0 && f.sync.dirty_limit == 0 {
        return Err(ConfigError::invalid(
            n,
            "ftl.sync needs interval_writes or dirty_limit above 0".to_string(),
        ));
    }
    if geo.units > u16::MAX as u32 - 1 {
        return Err(ConfigError::invalid(n, "at most 65534 dies"));
    }
    Ok(())
}
