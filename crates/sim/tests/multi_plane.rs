//! Multi-plane reads and programs (`nand.multi_plane`, docs/sim.md): a die
//! with P planes reads or programs up to P pages, one per plane at the same
//! page index, in one array time; the transfers still cross the channel one
//! by one. Off, planes only count capacity.

mod common;

use common::*;
use flashlab_device::{Device, Mode};
use flashlab_sim::{open_device, SimDevice};

fn dev(spec: &str) -> SimDevice {
    open_device(spec, 1, 64).unwrap_or_else(|e| panic!("{spec}: {e}"))
}

/// One die on one channel, 4 planes, MLC timing (900 us programs, 50 us
/// reads), a fast bus (4 KiB cross in 4.1 us), no cache or read-ahead: the
/// die is the bottleneck.
const ONE_DIE: &str = "ssd-m,capacity=64MiB,op=0.25,channels=1,geometry.planes_per_die=4,cache=off,readahead=off,nand.bus_ns_per_byte=1.0";

fn seq_write_mb_s(spec: &str) -> f64 {
    let mut d = dev(spec);
    let c = run(&mut d, sequential(0, 256 * KIB, 64, Mode::Write), 1);
    bandwidth_mb_s(&c, 256 * KIB)
}

#[test]
fn a_die_limited_sequential_write_stream_gains_about_p_times_bandwidth() {
    let off = seq_write_mb_s(ONE_DIE);
    let on = seq_write_mb_s(&format!("{ONE_DIE},multi_plane=on"));
    // Off: one page per (4.1 us transfer + 1 us command + 900 us program).
    // On: four pages per (4 transfers + 3 x 1 us tDBSY + 1 us + 900 us).
    // Each 256 KiB write also spends 934 us in the controller and on the
    // SATA link before its programs: (64 x 905 + 934) / (16 x 920.4 + 934).
    let gain = on / off;
    assert!(
        (3.7..3.8).contains(&gain),
        "off {off:.2} MB/s, on {on:.2} MB/s, gain {gain:.2}"
    );
    // With a write cache the write-backs of a die pair up the same way.
    let cached_off = seq_write_mb_s(&format!("{ONE_DIE},cache=on"));
    let cached_on = seq_write_mb_s(&format!("{ONE_DIE},cache=on,multi_plane=on"));
    let gain = cached_on / cached_off;
    assert!(
        (3.5..4.0).contains(&gain),
        "cached: off {cached_off:.2} MB/s, on {cached_on:.2} MB/s, gain {gain:.2}"
    );
}

#[test]
fn multi_plane_bandwidth_is_bounded_by_the_channel() {
    // A slow bus (25 ns/B: 102 us per 4 KiB page) and 8 planes: a group's 8
    // transfers take 819 us of channel time, about its 900 us program, so the
    // gain is far below 8x and the stream never beats the channel.
    let slow =
        "ssd-m,capacity=64MiB,op=0.25,channels=1,geometry.planes_per_die=8,cache=off,readahead=off";
    let off = seq_write_mb_s(slow);
    let on = seq_write_mb_s(&format!("{slow},multi_plane=on"));
    let channel_mb_s = 4096.0 / 102.4e-6 / 1e6;
    assert!(
        on < channel_mb_s,
        "on {on:.2} MB/s, channel {channel_mb_s:.2}"
    );
    let gain = on / off;
    // 8 pages per (8 x 102.4 + 7 + 1 + 900) us against 8 x 1003.4 us
    assert!(
        (4.4..4.8).contains(&gain),
        "off {off:.2} MB/s, on {on:.2} MB/s, gain {gain:.2}"
    );
}

/// Read `lpns` (4 KiB logical pages) submitted together; the slowest latency.
fn read_together(d: &mut SimDevice, lpns: &[u64]) -> u64 {
    let c = run(
        d,
        lpns.iter().map(|&l| (l * 4096, 4096, Mode::Read)),
        lpns.len(),
    );
    c.iter().map(|c| c.latency_ns()).max().unwrap()
}

#[test]
fn reads_to_different_planes_of_a_die_queued_together_take_about_one_read() {
    let base = format!("{ONE_DIE},prefill=on");
    // The prefill writes logical page k to plane k % 4 at page index k / 4 of
    // the die's blocks (the allocation rotates over the planes), so pages
    // 4j..4j+3 share a page index on four different planes.
    let mut rng = Rng(7);
    for _ in 0..20 {
        let j = rng.below(16 * 1024 / 4 - 1);
        let lpns = [4 * j, 4 * j + 1, 4 * j + 2, 4 * j + 3];
        let mut off = dev(&base);
        let mut on = dev(&format!("{base},multi_plane=on"));
        let t_off = read_together(&mut off, &lpns);
        let t_on = read_together(&mut on, &lpns);
        // ssd-m's 68.85 us command overhead, then off: four 50 us reads one
        // after the other; on: one 51 us array read, four 4.1 us transfers
        // (3 us of column changes), then the SATA link's 4 x 13.7 us.
        assert!(t_off > 68_850 + 4 * 50_000, "off: {t_off} ns for {lpns:?}");
        assert!(
            t_on < 68_850 + 51_000 + 4 * 4_100 + 3_000 + 4 * 13_700 + 1_000,
            "on: {t_on} ns for {lpns:?}"
        );
        assert_eq!(on.accounting().multi_plane_reads, 3, "{lpns:?}");
        assert_eq!(off.accounting().multi_plane_reads, 0);
    }
}

#[test]
fn reads_at_different_page_indices_pair_only_without_the_same_page_rule() {
    let base = format!("{ONE_DIE},prefill=on,multi_plane=on");
    // pages 0 and 5: planes 0 and 1, page indices 0 and 1
    let lpns = [0, 5];
    let mut onfi = dev(&base);
    let t_onfi = read_together(&mut onfi, &lpns);
    assert_eq!(onfi.accounting().multi_plane_reads, 0);
    let mut independent = dev(&format!("{base},nand.multi_plane_same_page=false"));
    let t_independent = read_together(&mut independent, &lpns);
    assert_eq!(independent.accounting().multi_plane_reads, 1);
    // the second page's 50 us array read is not shared
    assert!(
        t_onfi >= t_independent + 35_000,
        "{t_onfi} vs {t_independent}"
    );
    // Two pages of one plane never pair: pages 0 and 4 are both on plane 0.
    let mut same_plane = dev(&format!("{base},nand.multi_plane_same_page=false"));
    read_together(&mut same_plane, &[0, 4]);
    assert_eq!(same_plane.accounting().multi_plane_reads, 0);
}

/// Completion times of a mixed workload (fill, random overwrites with GC,
/// random reads), for comparing configurations that must agree exactly.
fn mixed_times(spec: &str) -> Vec<(u64, u64)> {
    let mut d = dev(spec);
    let size = d.info().size_bytes;
    seq_fill(&mut d, 256 * KIB);
    let mut all = Vec::new();
    all.extend(run(
        &mut d,
        random(3, size, 4 * KIB, 40_000, Mode::Write),
        8,
    ));
    all.extend(run(&mut d, random(4, size, 4 * KIB, 5_000, Mode::Read), 8));
    all.iter().map(|c| (c.tag, c.complete_ns)).collect()
}

#[test]
fn off_planes_only_count_capacity() {
    // 64 MiB at op 0.25 gives 160 blocks per die on 1 die: a multiple of 1,
    // 4 and 8, so the planes change nothing in the geometry.
    let one = mixed_times(&format!("{ONE_DIE},geometry.planes_per_die=1,cache=on"));
    let four = mixed_times(&format!("{ONE_DIE},cache=on"));
    let four_off = mixed_times(&format!("{ONE_DIE},cache=on,multi_plane=off"));
    let single_plane_on = mixed_times(&format!(
        "{ONE_DIE},geometry.planes_per_die=1,cache=on,multi_plane=on"
    ));
    assert_eq!(one, four);
    assert_eq!(one, four_off);
    assert_eq!(one, single_plane_on);
    let on = mixed_times(&format!("{ONE_DIE},cache=on,multi_plane=on"));
    assert_ne!(one, on);
}

#[test]
fn gc_copies_pair_and_the_maps_stay_consistent() {
    // Random overwrites with GC on two dies (op 0.25: the least that leaves
    // room for a host and a GC block open on each plane); the checker runs after every
    // reclaimed block (per-plane open blocks included).
    // Whole-victim reclaims (ssd-m's lazy cleaning moves a page or two per
    // host write, too few to pair).
    let spec = "ssd-m,capacity=32MiB,op=0.25,channels=2,geometry.planes_per_die=2,readahead=off,multi_plane=on,gc.incremental=false,check=on";
    let mut d = dev(spec);
    let size = d.info().size_bytes;
    seq_fill(&mut d, 256 * KIB);
    run(&mut d, random(9, size, 4 * KIB, 30_000, Mode::Write), 8);
    let a = d.accounting();
    assert!(a.gc_relocated_pages > 1000, "{}", a.gc_relocated_pages);
    // With two planes at most every other program joins a group; more than
    // 40 % of that do (a plane that runs out of free blocks borrows one from
    // the other, and those pages lose their partner).
    let programs = a.flash_programs.iter().sum::<u64>();
    assert!(
        a.multi_plane_programs * 2 > programs * 4 / 10,
        "{} of {} programs joined a group",
        a.multi_plane_programs,
        programs
    );
    d.check().unwrap();
    let again = mixed_times(&format!("{spec},check=off"));
    assert_eq!(again, mixed_times(&format!("{spec},check=off")));
}

#[test]
fn a_priority_read_joining_a_plane_group_does_not_wait_for_queued_write_backs() {
    // Write-backs of a full cache keep the die and its channel busy for many
    // milliseconds. Host reads go ahead of them (`sched.read_priority`): the
    // first page of a group waits for the step in progress; the pages that
    // join its multi-plane read must go ahead of the queued transfers too.
    // Four dies share the one channel, and a slow bus (60 ns/B, a USB
    // stick's: 246 us per page) makes the channel the bottleneck, so
    // transfers queue on it.
    let spec = format!("{ONE_DIE},geometry.chips_per_channel=4,nand.bus_ns_per_byte=60,op=0.5,prefill=on,cache=on,multi_plane=on,sched.read_priority=on");
    let mut d = dev(&spec);
    let size = d.info().size_bytes;
    // writes to the first half, reads from the second: no read waits for
    // its own page's write-back (this cache does not serve reads)
    run(&mut d, random(5, size / 2, 4 * KIB, 2_000, Mode::Write), 32);
    let before = d.accounting().multi_plane_reads;
    let slowest = read_together(&mut d, &[16_000, 16_004, 16_008, 16_012]);
    assert!(d.accounting().multi_plane_reads > before, "no group formed");
    // Each page waits for the transfer and the program in progress on its
    // die and channel, then its array read and its own transfer; the
    // priority transfers of the four reads go one after another. Measured
    // 3.8 ms; with the joining pages placed behind the queued transfers,
    // 14.8 ms (and 93 s of simulated time on the swarm's seed 115).
    assert!(slowest < 5_000_000, "slowest read {slowest} ns");
}
