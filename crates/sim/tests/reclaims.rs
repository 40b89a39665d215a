//! Merges and reclaims are bounded flash work placed on the dies like any
//! other operation: a read that arrives while they run waits for the step in
//! progress, never for the whole reclaim, and no single write holds a whole
//! log block's merges (issue: "every suite runs on every profile").
//!
//! uFLIP section 5.2: "mixing patterns does not affect significantly the
//! overall cost" (the cost of a mix is about the cost of its parts).

mod common;

use common::*;
use flashlab_device::{Completion, Mode};
use flashlab_sim::{open_device, SimDevice};

fn dev(spec: &str) -> SimDevice {
    open_device(spec, 1, 64).unwrap_or_else(|e| panic!("{spec}: {e}"))
}

fn of_mode(c: &[Completion], reqs: &[(u64, u32, Mode)], mode: Mode) -> Vec<Completion> {
    c.iter()
        .filter(|c| reqs[c.tag as usize].2 == mode)
        .copied()
        .collect()
}

fn max_latency_ns(c: &[Completion]) -> u64 {
    c.iter().map(|c| c.latency_ns()).max().unwrap()
}

/// uFLIP's Transcend MLC: BAST log blocks over an in-order channel queue (a
/// simple controller), a 256 KiB write-back buffer, each random 32 KiB write
/// a full merge of a 1 MiB unit (about 190 ms).
const TRANSCEND: &str = "transcend-mlc,capacity=1GiB,prefill=on";

/// Sequential 32 KiB reads mixed 1:1 with random 32 KiB writes, as uFLIP's
/// mix micro-benchmark runs them (QD 1, consecutive).
fn sr_rw_mix(n: u64) -> Vec<(u64, u32, Mode)> {
    let io = 32 * KIB;
    let mut rng = Rng(7);
    let range = 128 * MIB;
    (0..n)
        .map(|i| {
            if i % 2 == 0 {
                ((i / 2) * io, io as u32, Mode::Read)
            } else {
                (rng.below(range / io) * io, io as u32, Mode::Write)
            }
        })
        .collect()
}

#[test]
fn a_read_mixed_with_merging_writes_waits_for_a_step_not_for_the_merges() {
    let reqs = sr_rw_mix(400);
    let mut d = dev(TRANSCEND);
    let done = run(&mut d, reqs.iter().copied(), 1);
    let reads = of_mode(&done, &reqs, Mode::Read);
    let writes = of_mode(&done, &reqs, Mode::Write);
    // the writes merge (each random write evicts a log block)...
    assert!(
        mean_latency_us(&writes) > 100_000.0,
        "writes {:.0} us",
        mean_latency_us(&writes)
    );
    // ...and a read that arrives meanwhile waits for at most a page step on
    // its die and channel per page, never for a merge (about 190 ms) or a
    // backlog of them (before: reads of 0.2 s to 35 s, growing run-long)
    let worst = max_latency_ns(&reads);
    assert!(worst < 100_000_000, "slowest read {worst} ns");
    assert!(
        mean_latency_us(&reads) < 5_000.0,
        "reads {:.0} us",
        mean_latency_us(&reads)
    );
}

#[test]
fn a_mix_costs_about_what_its_parts_cost() {
    let io = 32 * KIB;
    let reqs = sr_rw_mix(400);
    let mut d = dev(TRANSCEND);
    let mix = run(&mut d, reqs.iter().copied(), 1);
    let alone = |reqs: Vec<(u64, u32, Mode)>| {
        let mut d = dev(TRANSCEND);
        mean_latency_us(&run(&mut d, reqs, 1))
    };
    let sr = alone(sequential(0, io, 200, Mode::Read).collect());
    let rw = alone(
        reqs.iter()
            .copied()
            .filter(|r| r.2 == Mode::Write)
            .collect(),
    );
    let parts = (sr + rw) / 2.0;
    let ratio = mean_latency_us(&mix) / parts;
    assert!(
        (0.8..1.25).contains(&ratio),
        "mix {:.0} us vs parts {parts:.0} us (SR {sr:.0}, RW {rw:.0}): x{ratio:.2}",
        mean_latency_us(&mix)
    );
}

/// FAST with a wide unit (8 MiB over 16 dies) and 8 random logs: reclaiming
/// one log of random 4 KiB pages is a full merge of nearly every unit it
/// touches, hundreds of them.
const REALSSD: &str = "hs-crucial-realssd,capacity=2GiB,prefill=on";

#[test]
fn a_fast_reclaim_is_paced_over_the_writes_that_fill_the_logs() {
    let io = 4 * KIB;
    let reqs: Vec<_> = random(3, 2048 * MIB, io, 30_000, Mode::Write).collect();
    let mut d = dev(REALSSD);
    let done = run(&mut d, reqs.iter().copied(), 1);
    let merges = d.accounting().merges_full;
    assert!(merges > 200, "{merges} full merges: the logs never filled");
    // one full merge of an 8 MiB unit: 2048 copy-back copies over 16 dies
    // (about 120 ms); a whole log reclaimed at once is hundreds of them
    let worst = max_latency_ns(&done);
    assert!(
        worst < 3_000_000_000,
        "slowest write {:.1} s: a reclaim held by one write",
        worst as f64 / 1e9
    );
}

#[test]
fn without_pacing_one_write_would_hold_the_whole_reclaim() {
    // the control: the same writes with FAST's whole-log reclaim
    let io = 4 * KIB;
    let reqs: Vec<_> = random(3, 2048 * MIB, io, 30_000, Mode::Write).collect();
    let mut d = dev(&format!("{REALSSD},ftl.merges_per_write=0"));
    let done = run(&mut d, reqs.iter().copied(), 1);
    let worst = max_latency_ns(&done);
    assert!(
        worst > 10_000_000_000,
        "slowest write {:.1} s",
        worst as f64 / 1e9
    );
}
