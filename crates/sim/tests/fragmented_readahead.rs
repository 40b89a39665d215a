//! Read-ahead on a fragmented device (`readahead.relocation_breaks_stripe`;
//! issue 30, Chen et al. 2009 section 5.8). Chen et al. on SSD-M after the
//! *striker* (random 4 KB writes of 4 GB): "Due to the internal
//! fragmentation, logically continuous pages are actually physically
//! non-continuous to each other, which makes readahead ineffective. This
//! causes the bandwidth of *sequential read* to drop from 43MB/sec to only
//! 15MB/sec, which is close to the bandwidth of *random read*."
//!
//! A controller reads ahead by physical address. Garbage collection copies a
//! victim's valid pages into a GC block in the victim's order, so a page it
//! relocated is no longer where the striped host write put it. Without the
//! option only the die is checked, and a relocation inside a die keeps it: a
//! logical run whose pages were all moved still looks contiguous.

mod common;

use common::*;
use flashlab_device::{Device, Mode};
use flashlab_sim::{open_device, SimDevice};

fn quiesce(d: &mut SimDevice) {
    let t = d.quiesce_at() + 1_000_000;
    d.idle_until(t).unwrap();
}

/// Mean latency (us) of 4 KiB sequential reads over the first 16 MiB, and the
/// read-ahead hits they made: on the freshly filled device, then after the
/// striker.
fn sequential_reads(spec: &str) -> ((f64, u64), (f64, u64)) {
    let mut d = open_device(spec, 5, 32).unwrap();
    let size = d.info().size_bytes;
    seq_fill(&mut d, 256 * KIB);
    quiesce(&mut d);
    let reads = |d: &mut SimDevice| {
        let hits = d.accounting().readahead_hits;
        let c = run(d, sequential(0, 4 * KIB, 4096, Mode::Read), 1);
        quiesce(d);
        (mean_latency_us(&c), d.accounting().readahead_hits - hits)
    };
    let fresh = reads(&mut d);
    // the striker: random 4 KiB writes, as many bytes as the device holds
    run(
        &mut d,
        random(11, size, 4 * KIB, size / (4 * KIB), Mode::Write),
        32,
    );
    quiesce(&mut d);
    (fresh, reads(&mut d))
}

#[test]
fn relocated_pages_break_read_ahead_after_the_striker() {
    let off = sequential_reads("ssd-m,capacity=1GiB,readahead.relocation_breaks_stripe=false");
    let on = sequential_reads("ssd-m,capacity=1GiB,readahead.relocation_breaks_stripe=true");
    println!("4 KiB sequential reads (mean us, read-ahead hits of 4096), fresh then fragmented: die-only check {off:?}; relocation breaks the stripe {on:?}");
    // A freshly filled device is read ahead either way: nothing was relocated.
    assert_eq!(on.0, off.0, "the option changed reads of a fresh device");
    assert!(on.0 .1 > 4000, "fresh device: only {} hits", on.0 .1);
    // After the striker the die-only check still finds a fifth of the pages
    // (pages never rewritten keep their die; a random write lands on the
    // right die one time in ten); read by physical address, almost none.
    assert!(
        off.1 .1 > 500,
        "die-only check: {} hits after the striker",
        off.1 .1
    );
    assert!(
        on.1 .1 < off.1 .1 / 4,
        "relocated pages still read ahead: {} hits (die-only {})",
        on.1 .1,
        off.1 .1
    );
    // So sequential reads fall to about random-read latency (Figure 2:
    // 200-230 us on SSD-M).
    assert!(
        on.1 .0 > 180.0,
        "fragmented sequential reads still take only {:.1} us",
        on.1 .0
    );
}
