//! NAND timing: SLC/MLC/TLC presets and the resolved per-operation times.
//!
//! Presets (per flash page of the profile's page size):
//!
//! | cell | read | program | erase | bus | source |
//! |------|------|---------|-------|-----|--------|
//! | SLC  | 25 us | 250 us | 700 us | 25 ns/B | Chen et al. 2009, section 2.1 and Table 1 (SSD-H) |
//! | MLC  | 50 us | 900 us | 3.5 ms | 25 ns/B | Chen et al. 2009, Table 1 (SSD-M); section 2.1 (100 us to shift 4 KB over the bus) |
//! | TLC  | 60 us | 700 us | 3.5 ms | 1 ns/B  | typical 3D TLC datasheet figures (ONFI 4 bus, ~1 GB/s) |
//!
//! A profile may override any of them.

pub use crate::config::CellKind;
use crate::config::NandConfig;
use crate::Nanos;

/// The cell type's datasheet-typical timing: (read, program, erase, command,
/// bus ns per byte). A free function so that `CellKind` (a profile value)
/// lives in `config` and `config` does not depend on `nand`.
fn preset(cell: CellKind) -> (Nanos, Nanos, Nanos, Nanos, f64) {
    match cell {
        CellKind::Slc => (25_000, 250_000, 700_000, 1_000, 25.0),
        CellKind::Mlc => (50_000, 900_000, 3_500_000, 1_000, 25.0),
        CellKind::Tlc => (60_000, 700_000, 3_500_000, 500, 1.0),
    }
}

/// Resolved NAND timing, in integer nanoseconds (no floating point after resolution).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct NandTiming {
    pub cell: CellKind,
    pub read_ns: Nanos,
    pub program_ns: Nanos,
    pub erase_ns: Nanos,
    pub command_ns: Nanos,
    /// Channel transfer time of one page.
    pub page_transfer_ns: Nanos,
    /// Channel transfer time per byte in picoseconds (for partial transfers, e.g. mapping chunks).
    pub bus_ps_per_byte: u64,
    pub copyback: bool,
    pub page_bytes: u64,
    /// Multi-plane operations (`nand.multi_plane`), their same-page rule and
    /// the die time each further plane adds.
    pub multi_plane: bool,
    pub multi_plane_same_page: bool,
    pub multi_plane_ns: Nanos,
}

impl NandTiming {
    pub fn resolve(cfg: &NandConfig, page_bytes: u64) -> NandTiming {
        let (r, p, e, c, b) = preset(cfg.cell);
        let bus = cfg.bus_ns_per_byte.unwrap_or(b);
        let bus_ps_per_byte = (bus * 1000.0).round() as u64;
        NandTiming {
            cell: cfg.cell,
            read_ns: cfg.read_ns.unwrap_or(r),
            program_ns: cfg.program_ns.unwrap_or(p),
            erase_ns: cfg.erase_ns.unwrap_or(e),
            command_ns: cfg.command_ns.unwrap_or(c),
            page_transfer_ns: page_bytes * bus_ps_per_byte / 1000,
            bus_ps_per_byte,
            copyback: cfg.copyback,
            page_bytes,
            multi_plane: cfg.multi_plane,
            multi_plane_same_page: cfg.multi_plane_same_page,
            multi_plane_ns: cfg.multi_plane_ns,
        }
    }

    /// Channel time to move `bytes`.
    pub fn transfer_ns(&self, bytes: u64) -> Nanos {
        bytes * self.bus_ps_per_byte / 1000
    }
}
