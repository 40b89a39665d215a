//! What a device reports about itself after a run, beyond the IOs'
//! timestamps: typed, so that no crate reads another's counters by string.
//! A run summary saves [`SimStats`] as `device_stats` (its field names are
//! that JSON's keys, in the order the simulator has always written them).

use serde::{Deserialize, Serialize};

/// A device's own accounting for a run.
#[derive(Clone, Debug, Default, PartialEq)]
pub enum DeviceStats {
    /// Real files and block devices count nothing beyond the IOs.
    #[default]
    None,
    /// The simulator's flash operations by cause, write amplification...
    Sim(Box<SimStats>),
}

impl DeviceStats {
    /// The simulator's statistics, if this is the simulator.
    pub fn sim(&self) -> Option<&SimStats> {
        match self {
            DeviceStats::Sim(s) => Some(s),
            DeviceStats::None => None,
        }
    }
}

/// The simulator's accounting since its statistics were last reset.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct SimStats {
    pub host: HostCounts,
    pub flash: FlashCounts,
    /// Flash pages programmed per page the host wrote.
    pub write_amplification: f64,
    pub latency: OpLatencies,
    /// Flash chip time per host read or write request, by component.
    pub chip_time_per_host_request_ns: ChipTimePerRequest,
    pub erase_count: EraseCounts,
    pub cache: CacheCounts,
    pub readahead: ReadaheadCounts,
    /// Host reads of pages that hold no data.
    pub unmapped_reads: u64,
    /// Whether those reads read the flash (the simulator's
    /// `sched.unmapped_read = "flash"`, as MQSim charges them) instead of
    /// being answered by the controller; left out of the JSON when false.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub unmapped_reads_read_flash: bool,
    /// Reads of a partial page's rest before it is rewritten.
    pub rmw_reads: u64,
    /// Programs or erases suspended for a read.
    pub suspends: u64,
    pub out_of_order_completions: u64,
    pub gc: GcCounts,
    pub wear_leveling: WearLevelingCounts,
    pub mapping: MappingCounts,
    pub merges: MergeCounts,
    /// Only with multi-plane operations, so that other devices' statistics
    /// (and bench/sim_identical.sh's digests of them) stay as they were.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub multi_plane: Option<MultiPlaneCounts>,
    /// The FTL's name.
    pub ftl: String,
    /// The garbage-collection victim policy's name.
    pub gc_policy: String,
    pub mapped_pages: u64,
    pub logical_pages: u64,
    pub page_bytes: u64,
    /// Budilovsky et al.'s metric, for the two-level FTL only.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub two_level_chip_time: Option<TwoLevelChipTime>,
}

#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct HostCounts {
    pub reads: u64,
    pub writes: u64,
    pub trims: u64,
    pub read_bytes: u64,
    pub write_bytes: u64,
    pub trim_bytes: u64,
}

/// One kind of flash operation, by the cause it was made for.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct ByCause {
    pub host: u64,
    pub gc: u64,
    pub wear_leveling: u64,
    pub mapping: u64,
    pub total: u64,
}

#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct FlashCounts {
    pub reads: ByCause,
    pub programs: ByCause,
    pub erases: ByCause,
}

#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct LatencySummary {
    pub count: u64,
    pub mean_ns: f64,
    pub max_ns: u64,
}

#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct OpLatencies {
    pub read: LatencySummary,
    pub write: LatencySummary,
    pub trim: LatencySummary,
}

/// Chip time per host request (ns), by component.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct ChipTimePerRequest {
    pub data_read: f64,
    pub data_write: f64,
    pub host_erase: f64,
    pub gc_read: f64,
    pub gc_write: f64,
    pub gc_erase: f64,
    pub wear_leveling: f64,
    pub mapping_read: f64,
    pub mapping_write: f64,
    pub bus_transfer: f64,
    pub total: f64,
}

#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct EraseCounts {
    pub blocks: u64,
    pub min: u32,
    pub max: u32,
    pub mean: f64,
    /// At most 16 bins.
    pub histogram: Vec<EraseBin>,
}

/// Blocks whose erase count lies in `lo..=hi`.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct EraseBin {
    pub lo: u32,
    pub hi: u32,
    pub blocks: u64,
}

#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct CacheCounts {
    pub write_pages: u64,
    pub read_hits: u64,
    pub full_waits: u64,
    pub window_waits: u64,
    pub absorbed_pages: u64,
    pub register_programs_on_read: u64,
}

#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct ReadaheadCounts {
    pub prefetched_pages: u64,
    pub hits: u64,
}

#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct GcCounts {
    pub foreground: u64,
    pub background: u64,
    pub relocated_pages: u64,
}

#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct WearLevelingCounts {
    pub moves: u64,
    pub relocated_pages: u64,
}

#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct MappingCounts {
    pub lookups: u64,
    pub ram_hits: u64,
    pub hint_hits: u64,
    pub hint_stale: u64,
    pub flash_reads: u64,
    pub page_writes: u64,
    pub gc_reads: u64,
    pub host_updates: u64,
    pub gc_updates: u64,
    pub syncs: u64,
    pub sync_pages: u64,
}

#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct MergeCounts {
    pub switch: u64,
    pub partial: u64,
    pub full: u64,
    pub block_rewrites: u64,
}

#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct MultiPlaneCounts {
    pub reads: u64,
    pub programs: u64,
}

/// Chip time per host request (ns) as Budilovsky et al. break it down, and
/// the page accesses their epsilon is read from.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct TwoLevelChipTime {
    pub data_read_ns: f64,
    pub data_write_ns: f64,
    pub chunk_read_ns: f64,
    pub chunk_write_ns: f64,
    pub gc_ns: f64,
    pub total_ns: f64,
    pub page_accesses: f64,
    pub page_accesses_excl_gc: f64,
}
