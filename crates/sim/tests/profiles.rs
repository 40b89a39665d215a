//! Each built-in profile shows the published behaviour its documentation names.
mod common;

use common::*;
use flashlab_device::{Device, Mode};
use flashlab_sim::{open_device, SimDevice};

fn quiesce(d: &mut SimDevice) {
    let t = d.quiesce_at() + 1_000_000;
    d.idle_until(t).unwrap();
}

fn filled(spec: &str) -> SimDevice {
    let mut d = open_device(spec, 7, 32).unwrap();
    seq_fill(&mut d, 256 * KIB);
    quiesce(&mut d);
    d
}

/// Chen et al. Figure 2: on SSD-M, 4 KiB sequential reads take 75-90 us (read-ahead),
/// random and stride reads 200-230 us.
#[test]
fn ssd_m_sequential_reads_faster_than_random() {
    let mut d = filled("ssd-m,capacity=1GiB");
    let sr = run(&mut d, sequential(0, 4 * KIB, 2000, Mode::Read), 1);
    quiesce(&mut d);
    let rr = run(&mut d, random(1, 1 << 30, 4 * KIB, 2000, Mode::Read), 1);
    quiesce(&mut d);
    let st = run(
        &mut d,
        sequential(0, 8 * KIB, 2000, Mode::Read).map(|(o, _, m)| (o, 4096, m)),
        1,
    );
    let (sr, rr, st) = (
        mean_latency_us(&sr),
        mean_latency_us(&rr),
        mean_latency_us(&st),
    );
    println!("ssd-m 4 KiB reads: sequential {sr:.1} us, random {rr:.1} us, stride {st:.1} us");
    assert!(
        sr * 2.0 < rr,
        "sequential {sr} us not clearly faster than random {rr} us"
    );
    assert!(
        (60.0..110.0).contains(&sr),
        "sequential read {sr} us outside Chen's 75-90 us neighbourhood"
    );
    assert!(
        (180.0..260.0).contains(&rr),
        "random read {rr} us outside Chen's 200-230 us neighbourhood"
    );
    assert!(
        st > 1.8 * sr,
        "stride reads {st} us should miss read-ahead like random reads"
    );
    assert!(d.accounting().readahead_hits > 1900);
}

/// Chen et al. Figures 3 and 5: SSD-M writes land in the disk cache (75-90 us);
/// with the cache disabled all take over 400 us, half over 1.3 ms.
#[test]
fn ssd_m_writes_absorbed_by_cache() {
    let mut on = filled("ssd-m,capacity=1GiB");
    let w_on = run(&mut on, random(3, 1 << 30, 4 * KIB, 2000, Mode::Write), 1);
    let mut off = filled("ssd-m,capacity=1GiB,cache=off");
    let w_off = run(&mut off, random(3, 1 << 30, 4 * KIB, 2000, Mode::Write), 1);
    let (a, b) = (mean_latency_us(&w_on), mean_latency_us(&w_off));
    println!("ssd-m 4 KiB random writes: cache on {a:.1} us, cache off {b:.1} us");
    assert!(a < 100.0, "cached writes take {a} us");
    assert!(b > 900.0, "uncached writes take only {b} us");
    assert!(w_off.iter().all(|c| c.latency_ns() > 400_000));
    assert_eq!(on.accounting().cache_write_pages, 2000 + (1 << 30) / 4096);
}

/// Fragment with "striker" (random 4 KiB writes over the whole device), then
/// measure 4 KiB sequential writes at queue depth 1; returns (before, after) MB/s.
fn fragmentation(spec: &str) -> (f64, f64) {
    let mut d = filled(spec);
    let size = d.info().size_bytes;
    let before = run(&mut d, sequential(size / 2, 4 * KIB, 8192, Mode::Write), 1);
    quiesce(&mut d);
    run(
        &mut d,
        random(11, size, 4 * KIB, size / 4096, Mode::Write),
        32,
    );
    quiesce(&mut d);
    let after = run(&mut d, sequential(0, 4 * KIB, 16384, Mode::Write), 1);
    (
        bandwidth_mb_s(&before, 4 * KIB),
        bandwidth_mb_s(&after, 4 * KIB),
    )
}

/// Chen et al. Figure 9: after fragmentation, SSD-M's sequential-write bandwidth
/// collapses from 42.7 MB/s to 3.02 MB/s (14x).
#[test]
fn ssd_m_fragmentation_collapses_sequential_writes() {
    let (before, after) = fragmentation("ssd-m,capacity=1GiB");
    println!("ssd-m 4 KiB sequential writes: {before:.1} MB/s fresh, {after:.2} MB/s fragmented ({:.1}x)", before / after);
    assert!(before > 35.0, "fresh sequential writes only {before} MB/s");
    assert!(
        before / after > 5.0,
        "no collapse: {before} -> {after} MB/s"
    );
}

/// Chen et al. Figure 9: SSD-H (25 % over-provisioning, SLC) keeps 40.3 MB/s of
/// sequential writes after fragmentation, where SSD-M falls to 3.02 MB/s.
#[test]
fn ssd_h_resists_fragmentation_better_than_ssd_m() {
    let (_, m) = fragmentation("ssd-m,capacity=1GiB");
    let (h_before, h) = fragmentation("ssd-h,capacity=1GiB");
    println!("fragmented 4 KiB sequential writes: ssd-m {m:.2} MB/s, ssd-h {h:.2} MB/s (ssd-h fresh {h_before:.1})");
    assert!(h > 3.0 * m, "ssd-h {h} MB/s vs ssd-m {m} MB/s");
}

/// Pauses advance simulated time, so ssd-h's idle-time GC reclaims space.
#[test]
fn ssd_h_cleans_in_idle_time() {
    let mut d = filled("ssd-h,capacity=256MiB");
    let size = d.info().size_bytes;
    run(
        &mut d,
        random(5, size, 4 * KIB, size / 4096, Mode::Write),
        32,
    );
    assert_eq!(d.accounting().gc_background, 0);
    let t = d.now_ns() + 5_000_000_000;
    d.idle_until(t).unwrap();
    assert!(
        d.accounting().gc_background > 0,
        "no background GC in 5 s of idle time"
    );
    assert_eq!(d.now_ns(), t);
}

/// Modern NVMe: random 4 KiB reads scale with queue depth through die parallelism.
#[test]
fn nvme_tlc_random_reads_scale_with_queue_depth() {
    let mut d = filled("nvme-tlc,capacity=2GiB");
    let qd1 = run(&mut d, random(9, 1 << 30, 4 * KIB, 4000, Mode::Read), 1);
    quiesce(&mut d);
    let qd32 = run(&mut d, random(10, 1 << 30, 4 * KIB, 20000, Mode::Read), 32);
    let (a, b) = (
        bandwidth_mb_s(&qd1, 4 * KIB),
        bandwidth_mb_s(&qd32, 4 * KIB),
    );
    println!(
        "nvme-tlc random 4 KiB reads: QD1 {:.0} IOPS, QD32 {:.0} IOPS",
        a * 1e6 / 4096.0,
        b * 1e6 / 4096.0
    );
    assert!(b > 8.0 * a, "QD32 {b} MB/s vs QD1 {a} MB/s");
}

/// Durations are bounded so that simulated time cannot overflow (fuzzing
/// found `read_ns = 2^63 - 1` overflowing a die's clock).
#[test]
fn absurd_durations_are_refused_naming_the_field() {
    for (spec, field) in [
        ("ssd-h,nand.read_ns=9223372036854775807", "nand.read_ns"),
        (
            "ssd-h,host.command_overhead_ns=20000000000",
            "host.command_overhead_ns",
        ),
        ("ssd-h,nand.bus_ns_per_byte=1e9", "nand.bus_ns_per_byte"),
        ("ssd-h,host.mb_per_s=0.001", "host.mb_per_s"),
    ] {
        let err = flashlab_sim::open_device(spec, 1, 1)
            .err()
            .expect(spec)
            .to_string();
        assert!(err.contains(field), "{spec}: {err}");
    }
    assert!(flashlab_sim::open_device("ssd-h,nand.read_ns=5000000000", 1, 1).is_ok());
}
