//! Fresh and used states (issue 30 item 7). uFLIP (Bouganim et al. 2009)
//! section 4.1: "Out-of-the-box, the Samsung SSD (see Section 5 for details)
//! had excellent random write performance (around 1 msec for a 16KB random
//! write, compared to around 8 msec for other SSDs). After randomly writing
//! the entire 32GB of flash, however, the write performance decreased by
//! almost an order of magnitude and became comparable to the other SSDs."
//!
//! In the log-block model the difference is the data blocks' write pointers:
//! out of the box a unit has no data block, so a random write allocates one
//! and programs its pages in place (beyond the write pointer); once every
//! data block is full, every random write goes to a log block and, over the
//! whole device, costs a merge.

mod common;

use common::*;
use flashlab_device::{Device, Mode};
use flashlab_sim::open_device;

/// Mean latency (us) of 512 random 16 KiB writes over the whole device
/// after `prepare`, and the full merges they caused.
fn random_16k_writes_us(
    spec: &str,
    prepare: impl FnOnce(&mut flashlab_sim::SimDevice),
) -> (f64, u64) {
    let mut d = open_device(spec, 7, 32).unwrap();
    prepare(&mut d);
    let size = d.info().size_bytes;
    let merges_before = d.accounting().merges_full;
    let c = run(&mut d, random(5, size, 16 * KIB, 512, Mode::Write), 1);
    (
        mean_latency_us(&c),
        d.accounting().merges_full - merges_before,
    )
}

/// uFLIP 4.1's random state: random writes of random size (0.5 KB up to the
/// 128 KB flash block, 512-byte aligned) until the device's size is written.
fn random_state(d: &mut flashlab_sim::SimDevice) {
    let size = d.info().size_bytes;
    let mut rng = Rng(9);
    let mut written = 0;
    let mut reqs = Vec::new();
    while written < size {
        let len = (1 + rng.below(256)) * 512;
        let off = rng.below((size - len) / 512) * 512;
        reqs.push((off, len as u32, Mode::Write));
        written += len;
    }
    run(d, reqs, 1);
}

#[test]
fn samsung_random_writes_are_cheap_out_of_the_box_and_dear_once_used() {
    // out of the box, on the paper's 32 GB: 512 writes over 8,192 units of
    // 4 MiB rarely meet a unit twice
    let (fresh, fresh_merges) = random_16k_writes_us("samsung", |_| {});
    // the random state of the whole 32 GB is about 500,000 writes, each a
    // merge: scaled to 1 GiB (256 units, still far more than the 4 log
    // blocks, so a random write costs one unit merge on either size)
    let (used, used_merges) = random_16k_writes_us("samsung,capacity=1GiB", random_state);
    println!(
        "samsung 16 KiB random writes: out of the box {fresh:.0} us ({fresh_merges} full merges), after the random state {used:.0} us ({used_merges}): x{:.1}",
        used / fresh
    );
    // "around 1 msec for a 16KB random write, compared to around 8 msec
    // for other SSDs": the model gives about 0.5 ms (a page program on each
    // of 4 dies, the 80 us command and the transfer), within a factor 2 of
    // it and far from the used 8 ms
    assert!((400.0..1500.0).contains(&fresh), "fresh {fresh} us");
    // "decreased by almost an order of magnitude"; the model overshoots
    // (about x33): its used random write costs a whole unit merge whatever
    // its size, where the paper's 16 KB writes took about 8 ms and its
    // 32 KB ones 18 ms (Table 3) - issue 30 item 5, not modelled
    assert!(used > 5.0 * fresh, "used {used} us vs fresh {fresh} us");
    assert!(used_merges > 10 * fresh_merges.max(1));
}
