//! Whole-configuration validation. It needs the derived geometry and each
//! FTL's own checks, so it lives here, above `config`, `geometry` and `ftl`
//! (which then do not depend on each other in a cycle).

use crate::config::SimConfig;
use crate::error::ConfigError;
use crate::ftl;
use crate::geometry::Geometry;

/// The longest one flash or host operation may take: 10 s.
pub const MAX_OPERATION_NS: u64 = 10_000_000_000;
/// The longest interval (idle threshold, reorganisation period): one day.
pub const MAX_INTERVAL_NS: u64 = 86_400_000_000_000;
/// The slowest flash bus: 1 MB/s.
pub const MAX_BUS_NS_PER_BYTE: f64 = 1000.0;
/// The slowest host interface: 0.1 MB/s (a 4 GiB request then takes about
/// 12 hours, far inside u64 nanoseconds).
pub const MIN_HOST_MB_PER_S: f64 = 0.1;

impl SimConfig {
    /// Check the configuration; the error is one line naming the problem and the fix.
    /// Long: one check per configuration field, in the profile's order.
    pub fn validate(&self) -> Result<(), ConfigError> {
        let g = &self.geometry;
        let n = &self.name;
        if g.channels == 0
            || g.chips_per_channel == 0
            || g.dies_per_chip == 0
            || g.planes_per_die == 0
        {
            return Err(ConfigError::invalid(
                n,
                "channels, chips_per_channel, dies_per_chip and planes_per_die must be at least 1",
            ));
        }
        if self.nand.multi_plane && g.planes_per_die > 32 {
            return Err(ConfigError::invalid(
                n,
                format!(
                    "nand.multi_plane supports at most 32 planes per die (got {}); lower geometry.planes_per_die or set multi_plane=false",
                    g.planes_per_die
                ),
            ));
        }
        if g.pages_per_block < 2 || g.pages_per_block > 65535 {
            return Err(ConfigError::invalid(
                n,
                format!(
                    "pages_per_block must be in 2..=65535 (got {})",
                    g.pages_per_block
                ),
            ));
        }
        if g.page_bytes.0 < 512 || !g.page_bytes.0.is_multiple_of(512) {
            return Err(ConfigError::invalid(
                n,
                format!(
                    "page_bytes must be a multiple of 512 (got {})",
                    g.page_bytes.0
                ),
            ));
        }
        if g.capacity.0 == 0 || !g.capacity.0.is_multiple_of(g.page_bytes.0) {
            return Err(ConfigError::invalid(
                n,
                format!(
                    "capacity {} must be a positive multiple of the page size {}",
                    g.capacity, g.page_bytes
                ),
            ));
        }
        let granule = self.ftl.map_granule.0;
        if !granule.is_multiple_of(g.page_bytes.0) || granule / g.page_bytes.0 > 4096 {
            return Err(ConfigError::invalid(
                n,
                format!(
                    "ftl.map_granule {} must be 0 or a multiple of the page size {} (at most 4096 pages)",
                    self.ftl.map_granule, g.page_bytes
                ),
            ));
        }
        if !(g.over_provisioning.is_finite()
            && g.over_provisioning > 0.0
            && g.over_provisioning <= 10.0)
        {
            return Err(ConfigError::invalid(
                n,
                format!(
                    "over_provisioning must be in (0, 10] (got {}); e.g. op=0.07",
                    g.over_provisioning
                ),
            ));
        }
        if !(self.host.mb_per_s.is_finite() && self.host.mb_per_s > 0.0) {
            return Err(ConfigError::invalid(
                n,
                "host.mb_per_s must be positive".to_string(),
            ));
        }
        if self.host.queue_depth == 0 {
            return Err(ConfigError::invalid(
                n,
                "host.queue_depth must be at least 1".to_string(),
            ));
        }
        if let Some(b) = self.nand.bus_ns_per_byte {
            if !(b.is_finite() && b >= 0.0) {
                return Err(ConfigError::invalid(
                    n,
                    "nand.bus_ns_per_byte must be non-negative".to_string(),
                ));
            }
        }
        self.validate_variance()?;
        self.validate_times()?;
        if self.gc.reserve_blocks == 0 {
            return Err(ConfigError::invalid(
                n,
                "gc.reserve_blocks must be at least 1 (GC needs a free block to copy into)"
                    .to_string(),
            ));
        }
        if self.gc.fg_low_watermark <= self.gc.reserve_blocks {
            return Err(ConfigError::invalid(
                n,
                format!(
                    "gc.fg_low_watermark ({}) must exceed gc.reserve_blocks ({})",
                    self.gc.fg_low_watermark, self.gc.reserve_blocks
                ),
            ));
        }
        if self.cache.enabled && self.cache.size.0 < g.page_bytes.0 {
            return Err(ConfigError::invalid(
                n,
                format!("cache.size must hold at least one page ({})", g.page_bytes),
            ));
        }
        let w = self.cache.writeback_window.0;
        if self.cache.enabled && w != 0 && w < g.page_bytes.0 {
            return Err(ConfigError::invalid(
                n,
                format!(
                    "cache.writeback_window must be 0 (off) or hold at least one page ({})",
                    g.page_bytes
                ),
            ));
        }
        let bw = self.cache.dram_mb_per_s;
        if !bw.is_finite() || bw < 0.0 {
            return Err(ConfigError::invalid(
                n,
                format!("cache.dram_mb_per_s must be 0 (off) or a positive bandwidth, not {bw}"),
            ));
        }
        if self.readahead.enabled
            && (self.readahead.trigger == 0 || self.readahead.window.0 < g.page_bytes.0)
        {
            return Err(ConfigError::invalid(
                n,
                "readahead.trigger must be >= 1 and readahead.window at least one page".to_string(),
            ));
        }
        let r = &self.reorg;
        if !r.is_off() {
            if !(r.die_share > 0.0 && r.die_share < 1.0) {
                return Err(ConfigError::invalid(
                    n,
                    format!("reorg.die_share must be in (0, 1) (got {})", r.die_share),
                ));
            }
            if r.interval_ns > 0 && (r.duration_ns == 0 || r.duration_ns >= r.interval_ns) {
                return Err(ConfigError::invalid(
                    n,
                    format!(
                        "reorg.duration_ns must be in 1..reorg.interval_ns (got {} of {})",
                        r.duration_ns, r.interval_ns
                    ),
                ));
            }
            if r.sustained_gap_ns == 0 {
                return Err(ConfigError::invalid(
                    n,
                    "reorg.sustained_gap_ns must be at least 1".to_string(),
                ));
            }
        }
        if self.wear.check_interval == 0 {
            return Err(ConfigError::invalid(
                n,
                "wear.check_interval must be at least 1".to_string(),
            ));
        }
        let geo = Geometry::derive(self)?;
        let spare_blocks = geo.blocks_per_unit as u64
            - geo
                .logical_pages
                .div_ceil(geo.units as u64)
                .div_ceil(geo.pages_per_block as u64);
        // The open blocks (a host and a GC frontier; one of each per plane
        // with multi-plane operations, see ftl/page.rs), the free blocks
        // foreground GC keeps (the watermark, plus a GC block per extra
        // plane) and one block of slack must fit in the spare space. With
        // less, the closed blocks can be all valid data, a reclaim gains
        // nothing, and GC cannot make progress: refuse the profile here
        // rather than stall (or loop) in the middle of a run.
        let page_mapped = matches!(
            self.ftl.kind,
            crate::config::FtlKind::Page
                | crate::config::FtlKind::Dftl
                | crate::config::FtlKind::TwoLevel
        );
        let planes = if self.nand.multi_plane && page_mapped {
            g.planes_per_die.max(1) as u64
        } else {
            1
        };
        let need = 2 * planes + self.gc.fg_low_watermark as u64 + (planes - 1) + 1;
        if spare_blocks < need {
            return Err(ConfigError::invalid(n, format!(
                "over-provisioning {} leaves {spare_blocks} spare blocks per die, need at least {need}{}; raise op or capacity, or use fewer dies",
                g.over_provisioning,
                if planes > 1 { format!(" (a host and a GC block open on each of {planes} planes: multi_plane=off needs fewer)") } else { String::new() }
            )));
        }
        ftl::validate(self, &geo)
    }

    /// Every duration a profile gives is bounded, so that simulated time
    /// (u64 nanoseconds, about 584 years) cannot overflow however many
    /// operations a run chains: one flash or host operation takes at most
    /// [`MAX_OPERATION_NS`] (flash parts take microseconds to milliseconds),
    /// an interval at most [`MAX_INTERVAL_NS`]. (Fuzzing found a profile
    /// with `read_ns = 2^63 - 1` that overflowed the die's clock.)
    fn validate_times(&self) -> Result<(), ConfigError> {
        let n = &self.name;
        let v = &self.nand;
        let operations = [
            ("nand.read_ns", v.read_ns),
            ("nand.program_ns", v.program_ns),
            ("nand.erase_ns", v.erase_ns),
            ("nand.command_ns", v.command_ns),
            ("nand.read_retry_ns", v.read_retry_ns),
            ("nand.multi_plane_ns", Some(v.multi_plane_ns)),
            (
                "host.command_overhead_ns",
                Some(self.host.command_overhead_ns),
            ),
            (
                "sched.suspend_program_ns",
                Some(self.sched.suspend_program_ns),
            ),
            ("sched.suspend_erase_ns", Some(self.sched.suspend_erase_ns)),
        ]
        .into_iter()
        .chain(
            v.program_ns_by_page_kind
                .iter()
                .map(|&t| ("nand.program_ns_by_page_kind", Some(t))),
        )
        .chain(
            v.read_ns_by_page_kind
                .iter()
                .map(|&t| ("nand.read_ns_by_page_kind", Some(t))),
        );
        for (field, value) in operations {
            if let Some(ns) = value.filter(|&ns| ns > MAX_OPERATION_NS) {
                return Err(ConfigError::invalid(
                    n,
                    format!("{field} = {ns} is longer than one flash operation can take (at most {MAX_OPERATION_NS} ns = 10 s)"),
                ));
            }
        }
        let r = &self.reorg;
        for (field, ns) in [
            ("gc.idle_threshold_ns", self.gc.idle_threshold_ns),
            ("reorg.interval_ns", r.interval_ns),
            ("reorg.duration_ns", r.duration_ns),
            ("reorg.sustained_gap_ns", r.sustained_gap_ns),
        ] {
            if ns > MAX_INTERVAL_NS {
                return Err(ConfigError::invalid(
                    n,
                    format!("{field} = {ns} is longer than a day (at most {MAX_INTERVAL_NS} ns)"),
                ));
            }
        }
        if let Some(b) = v.bus_ns_per_byte.filter(|&b| b > MAX_BUS_NS_PER_BYTE) {
            return Err(ConfigError::invalid(
                n,
                format!("nand.bus_ns_per_byte = {b} is slower than any flash bus (at most {MAX_BUS_NS_PER_BYTE}: 1 MB/s)"),
            ));
        }
        if self.host.mb_per_s < MIN_HOST_MB_PER_S {
            return Err(ConfigError::invalid(
                n,
                format!(
                    "host.mb_per_s = {} is slower than any host interface (at least {MIN_HOST_MB_PER_S})",
                    self.host.mb_per_s
                ),
            ));
        }
        Ok(())
    }

    /// The service-time variance fields of `[nand]` (docs/sim.md, "Service times vary").
    fn validate_variance(&self) -> Result<(), ConfigError> {
        let n = &self.name;
        let v = &self.nand;
        let kinds = &v.program_ns_by_page_kind;
        if !kinds.is_empty() && !(2..=4).contains(&kinds.len()) {
            return Err(ConfigError::invalid(
                n,
                format!(
                    "nand.program_ns_by_page_kind needs 2 (MLC), 3 (TLC) or 4 (QLC) times (got {}); for one time use nand.program_ns",
                    kinds.len()
                ),
            ));
        }
        if kinds.contains(&0) {
            return Err(ConfigError::invalid(
                n,
                "nand.program_ns_by_page_kind: every time must be positive".to_string(),
            ));
        }
        if !kinds.is_empty() && kinds.len() as u32 > self.geometry.pages_per_block {
            return Err(ConfigError::invalid(
                n,
                "nand.program_ns_by_page_kind has more kinds than a block has pages".to_string(),
            ));
        }
        let reads = &v.read_ns_by_page_kind;
        if !reads.is_empty() && reads.len() != kinds.len() {
            return Err(ConfigError::invalid(
                n,
                format!(
                    "nand.read_ns_by_page_kind needs one time per page kind of nand.program_ns_by_page_kind ({} kinds, got {} read times)",
                    kinds.len(),
                    reads.len()
                ),
            ));
        }
        if reads.contains(&0) {
            return Err(ConfigError::invalid(
                n,
                "nand.read_ns_by_page_kind: every time must be positive".to_string(),
            ));
        }
        if v.page_kind_order == crate::config::PageKindOrder::Wordline
            && !(2..=3).contains(&kinds.len())
        {
            return Err(ConfigError::invalid(
                n,
                format!(
                    "nand.page_kind_order = \"wordline\" is defined for 2 (MLC) or 3 (TLC) page kinds (nand.program_ns_by_page_kind has {}); use \"cyclic\"",
                    kinds.len()
                ),
            ));
        }
        for (name, s) in [
            ("program_spread", v.program_spread),
            ("erase_spread", v.erase_spread),
        ] {
            if !(s.is_finite() && (0.0..1.0).contains(&s)) {
                return Err(ConfigError::invalid(
                    n,
                    format!("nand.{name} must be in [0, 1) (got {s}); e.g. 0.1 for +-10 %"),
                ));
            }
        }
        let p = v.read_retry_probability;
        if !(p.is_finite() && (0.0..1.0).contains(&p)) {
            return Err(ConfigError::invalid(
                n,
                format!("nand.read_retry_probability must be in [0, 1) (got {p}); e.g. 0.01"),
            ));
        }
        if !(1..=64).contains(&v.read_retry_max) {
            return Err(ConfigError::invalid(
                n,
                format!(
                    "nand.read_retry_max must be in 1..=64 (got {})",
                    v.read_retry_max
                ),
            ));
        }
        Ok(())
    }
}
