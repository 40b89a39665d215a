//! Budilovsky et al.'s metric (SYSTOR 2011, section 7): the average flash-chip
//! time consumed per host request, broken down into data read, data write,
//! chunk (map) read, chunk (map) write and garbage collection. Each component
//! is the chip time of its operations plus their NAND-bus transfers: "the
//! number of pages read by the time NAND chips take to read a page, the number
//! of pages written by the program time, and so on", with the bytes moved on
//! the NAND buses.
//!
//! Mapping to the simulator's causes: data read / write = cause `host` reads /
//! programs (+ host erases of the block-mapped FTLs in `gc`); chunk read =
//! cause `mapping` reads (only the chunk's bytes cross the bus); chunk write =
//! cause `mapping` programs and erases (all map-page writes, including those
//! carrying chunks modified by GC, which the paper also counts as host-related);
//! GC = cause `gc` (relocations, erases, and chunk reads made by the garbage
//! collector) plus wear levelling.

use serde::{Deserialize, Serialize};

use crate::accounting::{Accounting, Cause};
use crate::nand::NandTiming;

/// Chip time per host request (ns), by component.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct ChipTime {
    pub data_read_ns: f64,
    pub data_write_ns: f64,
    pub chunk_read_ns: f64,
    pub chunk_write_ns: f64,
    pub gc_ns: f64,
    pub total_ns: f64,
    /// Flash page accesses (reads and programs, chunk reads included) per host
    /// request on behalf of the host: causes `host` and `mapping`.
    pub page_accesses: f64,
    /// The same with the map writes due to GC relocations left out (their
    /// share of map-page writes, from `map_gc_updates`): the paper's
    /// "ignoring garbage-collection costs".
    pub page_accesses_excl_gc: f64,
}

impl From<ChipTime> for flashlab_device::stats::TwoLevelChipTime {
    fn from(c: ChipTime) -> Self {
        flashlab_device::stats::TwoLevelChipTime {
            data_read_ns: c.data_read_ns,
            data_write_ns: c.data_write_ns,
            chunk_read_ns: c.chunk_read_ns,
            chunk_write_ns: c.chunk_write_ns,
            gc_ns: c.gc_ns,
            total_ns: c.total_ns,
            page_accesses: c.page_accesses,
            page_accesses_excl_gc: c.page_accesses_excl_gc,
        }
    }
}

impl ChipTime {
    pub fn from_accounting(a: &Accounting, t: &NandTiming) -> ChipTime {
        let reqs = a.host_requests().max(1) as f64;
        let (h, g, w, m) = (
            Cause::Host as usize,
            Cause::Gc as usize,
            Cause::WearLeveling as usize,
            Cause::Mapping as usize,
        );
        let x = t.page_transfer_ns;
        let data_read = a.read_ns[h] + a.flash_reads[h] * x;
        let data_write = a.program_ns[h] + a.flash_programs[h] * x + a.erase_ns[h];
        let map_write_bus = a.flash_programs[m] * x;
        let chunk_read = a.read_ns[m] + a.bus_ns[m].saturating_sub(map_write_bus);
        let chunk_write = a.program_ns[m] + map_write_bus + a.erase_ns[m];
        let gc = a.read_ns[g]
            + a.program_ns[g]
            + a.erase_ns[g]
            + a.bus_ns[g]
            + a.read_ns[w]
            + a.program_ns[w]
            + a.erase_ns[w]
            + a.bus_ns[w];
        let accesses =
            (a.flash_reads[h] + a.flash_programs[h] + a.flash_reads[m] + a.flash_programs[m])
                as f64;
        let updates = a.map_host_updates + a.map_gc_updates;
        let gc_share = if updates == 0 {
            0.0
        } else {
            a.map_gc_updates as f64 / updates as f64
        };
        let gc_map_writes = a.flash_programs[m] as f64 * gc_share;
        let f = |ns: u64| ns as f64 / reqs;
        ChipTime {
            data_read_ns: f(data_read),
            data_write_ns: f(data_write),
            chunk_read_ns: f(chunk_read),
            chunk_write_ns: f(chunk_write),
            gc_ns: f(gc),
            total_ns: f(data_read + data_write + chunk_read + chunk_write + gc),
            page_accesses: accesses / reqs,
            page_accesses_excl_gc: (accesses - gc_map_writes) / reqs,
        }
    }
}
