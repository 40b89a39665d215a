//! Reads and writes interfering, as Chen, Koufaty & Zhang observed (SIGMETRICS
//! 2009, section 5.5) on SSD-L, whose write buffer is its planes' page
//! registers: "writes just transfer data to the flash memory plane
//! registers, and reads trigger the programming process and cause a
//! synchronous delay (800 $\mu$ s). This also explains the fact that over
//! 80% of the reads in these workloads have a latency of higher than 1ms."

mod common;

use common::*;
use flashlab_device::{Completion, Device, Mode};
use flashlab_sim::{open_device, SimDevice};

fn dev(spec: &str) -> SimDevice {
    open_device(spec, 1, 64).unwrap_or_else(|e| panic!("{spec}: {e}"))
}

/// Chen's write(n)+read(n): write a 4 KiB page, then read it, sequentially.
fn write_then_read(n: u64) -> Vec<(u64, u32, Mode)> {
    let io = 4 * KIB;
    (0..n)
        .flat_map(|i| {
            [
                (i * io, io as u32, Mode::Write),
                (i * io, io as u32, Mode::Read),
            ]
        })
        .collect()
}

/// Chen's read(n)+write(n+4MB): two sequential streams, 4 MB apart.
fn read_and_write_4mb_apart(n: u64) -> Vec<(u64, u32, Mode)> {
    let io = 4 * KIB;
    (0..n)
        .flat_map(|i| {
            [
                (i * io, io as u32, Mode::Read),
                (4 * MIB + i * io, io as u32, Mode::Write),
            ]
        })
        .collect()
}

fn reads_over_1ms(spec: &str, reqs: &[(u64, u32, Mode)], pause_ns: u64) -> f64 {
    let mut d = dev(spec);
    let done: Vec<Completion> = run_with(&mut d, reqs.iter().copied(), 1, pause_ns);
    let reads: Vec<_> = done
        .iter()
        .filter(|c| reqs[c.tag as usize].2 == Mode::Read)
        .collect();
    let slow = reads.iter().filter(|c| c.latency_ns() > 1_000_000).count();
    slow as f64 / reads.len() as f64
}

const SSD_L: &str = "ssd-l,capacity=1GiB,prefill=on";

#[test]
fn on_ssd_l_over_80_percent_of_reads_mingled_with_writes_take_over_1ms() {
    for (name, reqs) in [
        ("write(n)+read(n)", write_then_read(500)),
        ("read(n)+write(n+4MB)", read_and_write_4mb_apart(500)),
    ] {
        let f = reads_over_1ms(SSD_L, &reqs, 0);
        assert!(f > 0.8, "{name}: {:.0} % of reads over 1 ms", f * 100.0);
    }
}

#[test]
fn a_pause_does_not_help_because_only_a_read_starts_the_program() {
    // 5.5: "inserting a delay would not improve performance"
    let f = reads_over_1ms(SSD_L, &write_then_read(300), 10_000_000);
    assert!(f > 0.8, "{:.0} % of reads over 1 ms", f * 100.0);
}

#[test]
fn without_program_on_read_the_reads_are_fast() {
    // the control: the same registers, programmed as soon as the data is in
    // (a read of the very page just written still waits for its program, so
    // the control reads other pages)
    let spec = format!("{SSD_L},cache.program_on_read=false");
    let f = reads_over_1ms(&spec, &read_and_write_4mb_apart(500), 0);
    assert!(f < 0.2, "{:.0} % of reads over 1 ms", f * 100.0);
}

/// Wang et al.'s bathtub (IEICE 2011, section 2.2.2) on a log-block drive
/// with a DRAM write-back cache. In a 50/50 random mix at one outstanding
/// IO on the Mtron PRO 7500's BAST, every write's write-back is a full merge
/// (64 copy-backs on each of the superblock's 8 dies, Wang et al. Table 1's
/// 25 us read and 200 us program each: over 14 ms), and the cache holds the
/// merges of earlier writes too. With `cache.flush_on_read` a read waits
/// until all of them have ended, so no read is served while a merge is in
/// flight; without it a read waits only for the work queued on its own dies,
/// and one landing on the die group that is not merging is served at once.
/// Returns the read latencies (ms) past the first 100 IOs, sorted.
fn reads_ms_in_a_random_mix(spec: &str) -> Vec<f64> {
    let mut d = dev(spec);
    seq_fill(&mut d, 256 * KIB);
    quiet(&mut d);
    let size = d.info().size_bytes;
    let k4 = 4 * KIB;
    let mut rng = Rng(3);
    let mix: Vec<_> = (0..600)
        .map(|i| {
            (
                rng.below(size / k4) * k4,
                k4 as u32,
                if i % 2 == 0 { Mode::Write } else { Mode::Read },
            )
        })
        .collect();
    let done = run(&mut d, mix.iter().copied(), 1);
    let mut reads: Vec<f64> = done[100..]
        .iter()
        .filter(|c| mix[c.tag as usize].2 == Mode::Read)
        .map(|c| c.latency_ns() as f64 / 1e6)
        .collect();
    reads.sort_by(f64::total_cmp);
    let q = |f: f64| reads[((reads.len() - 1) as f64 * f) as usize];
    println!(
        "{spec}: reads in the mix (ms): min {:.3}, p10 {:.3}, p25 {:.3}, p50 {:.3}, p90 {:.3}",
        q(0.0),
        q(0.1),
        q(0.25),
        q(0.5),
        q(0.9)
    );
    reads
}

const MTRON: &str = "mtron-pro7500,capacity=2GiB";

#[test]
fn with_flush_on_read_a_read_waits_for_the_merge_of_the_write_before_it() {
    // only a read after a write that needed no merge (its unit already had
    // a log block with room) escapes: at least 90 % of the reads wait
    let on = reads_ms_in_a_random_mix(&format!("{MTRON},cache.flush_on_read=true"));
    let p10 = on[on.len() / 10];
    assert!(p10 > 10.0, "p10 read {p10:.3} ms: expected a merge's wait");
}

#[test]
fn without_flush_on_read_reads_on_the_idle_die_group_wait_for_no_merge() {
    // the control: a read waits only for the merges queued on its own dies
    let off = reads_ms_in_a_random_mix(&format!("{MTRON},cache.flush_on_read=false"));
    let p25 = off[off.len() / 4];
    assert!(
        p25 < 1.0,
        "p25 read {p25:.3} ms: expected reads without a merge's wait"
    );
}
