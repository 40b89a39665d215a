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
//!
//! Service-time variance (all off unless a profile or override sets them;
//! docs/sim.md, "Service times vary"): program time by page kind (MLC lower
//! and upper pages, TLC lower, middle and upper: `nand.program_ns_by_page_kind`;
//! which page index is of which kind: `nand.page_kind_order`), read time by
//! page kind (`nand.read_ns_by_page_kind`), a relative spread of program and
//! erase times, and read retries. This
//! module resolves them to integers; `resources.rs` draws them, from one
//! seeded stream per die.

use crate::config::NandConfig;
pub use crate::config::{CellKind, PageKindOrder};
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
    /// Page kinds (0: none; then every program takes `program_ns`): page
    /// `i` of a block is of kind `i % page_kinds` and programs in
    /// `program_kind_ns[kind]` (`program_ns` is then their mean).
    pub page_kinds: u32,
    /// Which page index is of which kind (`nand.page_kind_order`).
    pub page_kind_order: PageKindOrder,
    pub program_kind_ns: [Nanos; 4],
    /// Whether reads take their page kind's time (`read_kind_ns`; then
    /// `read_ns` is their mean).
    pub read_kinds: bool,
    pub read_kind_ns: [Nanos; 4],
    /// Half-width of the uniform program-time spread, per kind (or, without
    /// kinds, in `[0]`): a program takes base - span ..= base + span.
    pub program_span_ns: [Nanos; 4],
    /// Half-width of the uniform erase-time spread.
    pub erase_span_ns: Nanos,
    /// A read (and each retry) retries when a uniform 64-bit draw is below
    /// this (`read_retry_probability` x 2^64; 0: never).
    pub read_retry_threshold: u64,
    pub read_retry_ns: Nanos,
    pub read_retry_max: u32,
}

/// `base x spread`, rounded down: the half-width of a uniform spread.
fn span(base: Nanos, spread: f64) -> Nanos {
    (base as f64 * spread) as Nanos
}

/// Per-kind times (at most 4) scaled so that their mean is `mean` where
/// given (the kinds give the split, `mean` the level: an override of the
/// one time moves every kind), and that mean.
fn scale_kinds(kinds: &[u64], mean: Option<Nanos>) -> ([Nanos; 4], Nanos) {
    let n = kinds.len().min(4);
    let mut out = [0; 4];
    if n == 0 {
        return (out, mean.unwrap_or(0));
    }
    let sum: u64 = kinds.iter().take(n).sum();
    let own = sum / n as u64;
    let target = mean.unwrap_or(own);
    for (k, &ns) in kinds.iter().take(n).enumerate() {
        out[k] = if target == own || sum == 0 {
            ns
        } else {
            (ns as u128 * target as u128 * n as u128 / sum as u128) as u64
        };
    }
    (out, out.iter().take(n).sum::<u64>() / n as u64)
}

impl NandTiming {
    pub fn resolve(cfg: &NandConfig, page_bytes: u64) -> NandTiming {
        let (r, p, e, c, b) = preset(cfg.cell);
        let bus = cfg.bus_ns_per_byte.unwrap_or(b);
        let bus_ps_per_byte = (bus * 1000.0).round() as u64;
        let kinds = &cfg.program_ns_by_page_kind;
        let page_kinds = kinds.len().min(4) as u32;
        let mut program_kind_ns = [0; 4];
        let mut program_span_ns = [0; 4];
        let program_ns = if page_kinds > 0 {
            // The page kinds give the split; `program_ns`, where given, the
            // mean: the kinds are scaled to it (a profile writes both with
            // that mean; an override of `nand.program_ns`, as a fit makes,
            // moves every kind with it instead of being ignored).
            let (scaled, mean) = scale_kinds(kinds, cfg.program_ns);
            program_kind_ns = scaled;
            for (k, &ns) in scaled.iter().take(page_kinds as usize).enumerate() {
                program_span_ns[k] = span(ns, cfg.program_spread);
            }
            mean
        } else {
            let p = cfg.program_ns.unwrap_or(p);
            program_span_ns[0] = span(p, cfg.program_spread);
            p
        };
        let read_kinds = !cfg.read_ns_by_page_kind.is_empty();
        let (read_kind_ns, read_ns) = if read_kinds {
            scale_kinds(&cfg.read_ns_by_page_kind, cfg.read_ns)
        } else {
            ([0; 4], cfg.read_ns.unwrap_or(r))
        };
        let erase_ns = cfg.erase_ns.unwrap_or(e);
        // p x 2^64, below 2^64 as p < 1 (validated)
        let read_retry_threshold =
            (cfg.read_retry_probability * 18_446_744_073_709_551_616.0).min(u64::MAX as f64) as u64;
        NandTiming {
            cell: cfg.cell,
            read_ns,
            program_ns,
            erase_ns,
            command_ns: cfg.command_ns.unwrap_or(c),
            page_transfer_ns: page_bytes * bus_ps_per_byte / 1000,
            bus_ps_per_byte,
            copyback: cfg.copyback,
            page_bytes,
            multi_plane: cfg.multi_plane,
            multi_plane_same_page: cfg.multi_plane_same_page,
            multi_plane_ns: cfg.multi_plane_ns,
            page_kinds,
            page_kind_order: cfg.page_kind_order,
            program_kind_ns,
            read_kinds,
            read_kind_ns,
            program_span_ns,
            erase_span_ns: span(erase_ns, cfg.erase_spread),
            read_retry_threshold,
            read_retry_ns: cfg.read_retry_ns.unwrap_or(read_ns),
            read_retry_max: cfg.read_retry_max,
        }
    }

    /// The kind of page `page` of a block of `pages_per_block` pages (with
    /// page kinds; `nand.page_kind_order`).
    #[inline]
    pub fn page_kind(&self, page: u32, pages_per_block: u32) -> usize {
        (match (self.page_kind_order, self.page_kinds) {
            // constant divisors: no division instruction on the hot path
            (PageKindOrder::Cyclic, 2) => page & 1,
            (PageKindOrder::Cyclic, 3) => page % 3,
            (PageKindOrder::Cyclic, _) => page & 3,
            // MLC, Linux MTD's distance-3 pairing: lower pages 0, 1, 3, 5,
            // ..., upper pages 2, 4, 6, ... and the block's last page
            (PageKindOrder::Wordline, 2) => {
                let lower = page == 0 || (page & 1 == 1 && page + 1 != pages_per_block);
                u32::from(!lower)
            }
            // TLC, MQSim's rule (Yaakobi et al. 2012): 0-5 lower, 6-7
            // middle, then two pages each of lower, middle, upper
            (PageKindOrder::Wordline, _) => match page {
                0..=5 => 0,
                6 | 7 => 1,
                _ => ((page - 8) >> 1) % 3,
            },
        }) as usize
    }

    /// Whether any service time varies (page kinds, spreads, read retries).
    pub fn varies(&self) -> bool {
        self.page_kinds > 0 || self.read_kinds || self.draws()
    }

    /// Whether service times are drawn from the dies' random streams.
    pub fn draws(&self) -> bool {
        self.program_span_ns.iter().any(|&s| s > 0)
            || self.erase_span_ns > 0
            || self.read_retry_threshold > 0
    }

    /// Channel time to move `bytes`.
    pub fn transfer_ns(&self, bytes: u64) -> Nanos {
        bytes * self.bus_ps_per_byte / 1000
    }
}
