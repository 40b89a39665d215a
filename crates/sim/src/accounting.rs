//! Accounting: host requests, flash operations by cause, flash-chip time by
//! component (the metric of Budilovsky et al., section 7), write amplification,
//! latency, cache and read-ahead hits, GC invocations, erase-count distribution.

use flashlab_device::stats::{
    ByCause, CacheCounts, ChipTimePerRequest, EraseBin, EraseCounts, FlashCounts, GcCounts,
    HostCounts, LatencySummary, MappingCounts, MergeCounts, MultiPlaneCounts, OpLatencies,
    ReadaheadCounts, SimStats, WearLevelingCounts,
};

use crate::Nanos;

/// Why a flash operation happened.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Cause {
    /// Serving a host read or write (including read-ahead and read-modify-write).
    Host = 0,
    /// Garbage collection (relocation and erase).
    Gc = 1,
    /// Static wear levelling.
    WearLeveling = 2,
    /// Reading or writing mapping metadata (zero for the page FTL, whose map is in DRAM).
    Mapping = 3,
}

impl Cause {
    pub const ALL: [Cause; 4] = [Cause::Host, Cause::Gc, Cause::WearLeveling, Cause::Mapping];

    pub fn name(self) -> &'static str {
        match self {
            Cause::Host => "host",
            Cause::Gc => "gc",
            Cause::WearLeveling => "wear_leveling",
            Cause::Mapping => "mapping",
        }
    }
}

/// Latency summary of one request kind.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct LatencyStat {
    pub count: u64,
    pub sum_ns: u64,
    pub max_ns: u64,
}

impl LatencyStat {
    pub fn add(&mut self, ns: Nanos) {
        self.count += 1;
        self.sum_ns += ns;
        self.max_ns = self.max_ns.max(ns);
    }

    pub fn mean_ns(&self) -> f64 {
        if self.count == 0 {
            0.0
        } else {
            self.sum_ns as f64 / self.count as f64
        }
    }
}

/// Every counter of the simulator. Read it with [`crate::SimDevice::accounting`].
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Accounting {
    // host side
    pub host_reads: u64,
    pub host_writes: u64,
    pub host_trims: u64,
    pub host_read_bytes: u64,
    pub host_write_bytes: u64,
    pub host_trim_bytes: u64,
    /// Latency per request mode (read, write, trim).
    pub latency: [LatencyStat; 3],
    // flash side, indexed by `Cause as usize`
    pub flash_reads: [u64; 4],
    pub flash_programs: [u64; 4],
    pub flash_erases: [u64; 4],
    /// Flash-chip array time by cause.
    pub read_ns: [u64; 4],
    pub program_ns: [u64; 4],
    pub erase_ns: [u64; 4],
    /// Channel transfer time by cause.
    pub bus_ns: [u64; 4],
    // cache and read-ahead
    pub cache_write_pages: u64,
    pub cache_read_hits: u64,
    pub cache_full_waits: u64,
    /// Pages that waited for a write-back in flight to end because the
    /// back-pressure window was full while the cache had room
    /// (`cache.writeback_window`).
    pub cache_window_waits: u64,
    /// Host pages written into a dirty cached copy before its write-back started (no program).
    pub cache_absorbed_pages: u64,
    /// Reads that waited for the page registers' programs they triggered (`cache.program_on_read`).
    pub register_programs_on_read: u64,
    /// Times every page register held a buffered page and all were
    /// programmed at once (`cache.program_when_full`; not in the run
    /// summary's statistics).
    pub register_programs_when_full: u64,
    pub readahead_pages: u64,
    pub readahead_hits: u64,
    pub unmapped_reads: u64,
    pub rmw_reads: u64,
    /// Host reads that suspended a program or erase in progress (`sched.suspend`).
    pub suspends: u64,
    /// Completions reported before that of a request submitted earlier.
    pub out_of_order_completions: u64,
    /// Pages read / programmed as a further plane of a multi-plane operation
    /// (`nand.multi_plane`): they shared the first page's array time.
    pub multi_plane_reads: u64,
    pub multi_plane_programs: u64,
    // GC and WL
    pub gc_foreground: u64,
    pub gc_background: u64,
    pub gc_relocated_pages: u64,
    pub wl_moves: u64,
    pub wl_relocated_pages: u64,
    // mapping (dftl, two-level; docs/sim-ftl.md)
    /// Host page accesses that needed the map (dftl, two-level).
    pub map_lookups: u64,
    /// ... of which the map entry was in the controller's RAM (CMT, chunk cache, dirty chunks).
    pub map_ram_hits: u64,
    /// ... of which a current host hint supplied the chunk (two-level with hints).
    pub map_hint_hits: u64,
    /// Hints offered by the host but stale (older version than the root array's).
    pub map_hint_stale: u64,
    /// ... of which the map had to be read from flash (a chunk / translation-page read).
    pub map_flash_reads: u64,
    /// Map pages written (dirty chunk pages, translation-page write-backs, sync flushes).
    pub map_page_writes: u64,
    /// Map reads made by the garbage collector (accounted under `gc`, as Budilovsky et al. do).
    pub map_gc_reads: u64,
    /// Map entries changed by host writes and TRIMs, and by GC relocations (two-level, dftl).
    pub map_host_updates: u64,
    pub map_gc_updates: u64,
    /// Metadata synchronisations (Chen et al. 5.7) and the pages they wrote.
    pub map_syncs: u64,
    pub map_sync_pages: u64,
    // merges of the block-mapped FTLs (block, bast, fast)
    pub merges_switch: u64,
    pub merges_partial: u64,
    pub merges_full: u64,
    /// Block FTL: read-modify-write rewrites of a block.
    pub block_rewrites: u64,
}

/// Erase-count distribution over all blocks.
#[derive(Clone, Debug, PartialEq)]
pub struct EraseSummary {
    pub blocks: u64,
    pub min: u32,
    pub max: u32,
    pub mean: f64,
    /// (lowest count, highest count, blocks) per bin; at most 16 bins.
    pub histogram: Vec<(u32, u32, u64)>,
}

impl EraseSummary {
    pub fn from_counts(counts: &[u32]) -> EraseSummary {
        if counts.is_empty() {
            return EraseSummary {
                blocks: 0,
                min: 0,
                max: 0,
                mean: 0.0,
                histogram: Vec::new(),
            };
        }
        let min = *counts.iter().min().unwrap_or(&0);
        let max = *counts.iter().max().unwrap_or(&0);
        let sum: u64 = counts.iter().map(|&c| c as u64).sum();
        let span = (max - min) as u64 + 1;
        let bins = span.min(16);
        let width = span.div_ceil(bins);
        let mut hist = vec![0u64; bins as usize];
        for &c in counts {
            hist[((c - min) as u64 / width) as usize] += 1;
        }
        let histogram = hist
            .iter()
            .enumerate()
            .map(|(i, &n)| {
                let lo = min as u64 + i as u64 * width;
                let hi = (lo + width - 1).min(max as u64);
                (lo as u32, hi as u32, n)
            })
            .collect();
        EraseSummary {
            blocks: counts.len() as u64,
            min,
            max,
            mean: sum as f64 / counts.len() as f64,
            histogram,
        }
    }
}

impl Accounting {
    /// Host data written, in flash pages (bytes / page size).
    pub fn host_written_pages(&self, page_bytes: u64) -> f64 {
        self.host_write_bytes as f64 / page_bytes as f64
    }

    pub fn total_programs(&self) -> u64 {
        self.flash_programs.iter().sum()
    }

    /// Flash page programs (all causes) per page of host data written; 0 before any write.
    pub fn write_amplification(&self, page_bytes: u64) -> f64 {
        let host = self.host_written_pages(page_bytes);
        if host == 0.0 {
            0.0
        } else {
            self.total_programs() as f64 / host
        }
    }

    /// The flash-chip time components, summed over the run (ns).
    pub fn chip_time_components(&self) -> Vec<(&'static str, u64)> {
        let h = Cause::Host as usize;
        let g = Cause::Gc as usize;
        let w = Cause::WearLeveling as usize;
        let m = Cause::Mapping as usize;
        vec![
            ("data_read", self.read_ns[h]),
            ("data_write", self.program_ns[h]),
            ("host_erase", self.erase_ns[h]),
            ("gc_read", self.read_ns[g]),
            ("gc_write", self.program_ns[g]),
            ("gc_erase", self.erase_ns[g]),
            (
                "wear_leveling",
                self.read_ns[w] + self.program_ns[w] + self.erase_ns[w],
            ),
            ("mapping_read", self.read_ns[m]),
            ("mapping_write", self.program_ns[m] + self.erase_ns[m]),
            ("bus_transfer", self.bus_ns.iter().sum()),
        ]
    }

    /// Host read + write requests (the denominator of the chip-time metric).
    pub fn host_requests(&self) -> u64 {
        self.host_reads + self.host_writes
    }

    /// The typed statistics of a run summary (`device_stats`), but for the
    /// device's identity (FTL, policy, mapped pages), which the device adds.
    pub fn to_stats(&self, page_bytes: u64, erase: &EraseSummary) -> SimStats {
        let by_cause = |a: &[u64; 4]| ByCause {
            host: a[Cause::Host as usize],
            gc: a[Cause::Gc as usize],
            wear_leveling: a[Cause::WearLeveling as usize],
            mapping: a[Cause::Mapping as usize],
            total: a.iter().sum::<u64>(),
        };
        let reqs = self.host_requests();
        let per_req = |ns: u64| {
            if reqs == 0 {
                0.0
            } else {
                ns as f64 / reqs as f64
            }
        };
        let comps = self.chip_time_components();
        let total: u64 = comps.iter().map(|(_, ns)| ns).sum();
        let component = |name: &str| {
            per_req(
                comps
                    .iter()
                    .find(|(n, _)| *n == name)
                    .map_or(0, |(_, ns)| *ns),
            )
        };
        let lat = |l: &LatencyStat| LatencySummary {
            count: l.count,
            mean_ns: l.mean_ns(),
            max_ns: l.max_ns,
        };
        SimStats {
            host: HostCounts {
                reads: self.host_reads,
                writes: self.host_writes,
                trims: self.host_trims,
                read_bytes: self.host_read_bytes,
                write_bytes: self.host_write_bytes,
                trim_bytes: self.host_trim_bytes,
            },
            flash: FlashCounts {
                reads: by_cause(&self.flash_reads),
                programs: by_cause(&self.flash_programs),
                erases: by_cause(&self.flash_erases),
            },
            write_amplification: self.write_amplification(page_bytes),
            latency: OpLatencies {
                read: lat(&self.latency[0]),
                write: lat(&self.latency[1]),
                trim: lat(&self.latency[2]),
            },
            chip_time_per_host_request_ns: ChipTimePerRequest {
                data_read: component("data_read"),
                data_write: component("data_write"),
                host_erase: component("host_erase"),
                gc_read: component("gc_read"),
                gc_write: component("gc_write"),
                gc_erase: component("gc_erase"),
                wear_leveling: component("wear_leveling"),
                mapping_read: component("mapping_read"),
                mapping_write: component("mapping_write"),
                bus_transfer: component("bus_transfer"),
                total: per_req(total),
            },
            erase_count: EraseCounts {
                blocks: erase.blocks,
                min: erase.min,
                max: erase.max,
                mean: erase.mean,
                histogram: erase
                    .histogram
                    .iter()
                    .map(|&(lo, hi, blocks)| EraseBin { lo, hi, blocks })
                    .collect(),
            },
            cache: CacheCounts {
                write_pages: self.cache_write_pages,
                read_hits: self.cache_read_hits,
                full_waits: self.cache_full_waits,
                window_waits: self.cache_window_waits,
                absorbed_pages: self.cache_absorbed_pages,
                register_programs_on_read: self.register_programs_on_read,
            },
            readahead: ReadaheadCounts {
                prefetched_pages: self.readahead_pages,
                hits: self.readahead_hits,
            },
            unmapped_reads: self.unmapped_reads,
            unmapped_reads_read_flash: false,
            rmw_reads: self.rmw_reads,
            suspends: self.suspends,
            out_of_order_completions: self.out_of_order_completions,
            gc: GcCounts {
                foreground: self.gc_foreground,
                background: self.gc_background,
                relocated_pages: self.gc_relocated_pages,
            },
            wear_leveling: WearLevelingCounts {
                moves: self.wl_moves,
                relocated_pages: self.wl_relocated_pages,
            },
            mapping: MappingCounts {
                lookups: self.map_lookups,
                ram_hits: self.map_ram_hits,
                hint_hits: self.map_hint_hits,
                hint_stale: self.map_hint_stale,
                flash_reads: self.map_flash_reads,
                page_writes: self.map_page_writes,
                gc_reads: self.map_gc_reads,
                host_updates: self.map_host_updates,
                gc_updates: self.map_gc_updates,
                syncs: self.map_syncs,
                sync_pages: self.map_sync_pages,
            },
            merges: MergeCounts {
                switch: self.merges_switch,
                partial: self.merges_partial,
                full: self.merges_full,
                block_rewrites: self.block_rewrites,
            },
            // Only with multi-plane operations, so that other devices'
            // statistics (and bench/sim_identical.sh's digests of them)
            // stay as they were.
            multi_plane: (self.multi_plane_reads + self.multi_plane_programs > 0).then_some(
                MultiPlaneCounts {
                    reads: self.multi_plane_reads,
                    programs: self.multi_plane_programs,
                },
            ),
            ftl: String::new(),
            gc_policy: String::new(),
            mapped_pages: 0,
            logical_pages: 0,
            page_bytes,
            two_level_chip_time: None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn erase_histogram() {
        let s = EraseSummary::from_counts(&[0, 1, 1, 2, 40]);
        assert_eq!(s.min, 0);
        assert_eq!(s.max, 40);
        assert_eq!(s.histogram.iter().map(|h| h.2).sum::<u64>(), 5);
        assert!(s.histogram.len() <= 16);
        let one = EraseSummary::from_counts(&[3, 3]);
        assert_eq!(one.histogram, vec![(3, 3, 2)]);
    }
}
