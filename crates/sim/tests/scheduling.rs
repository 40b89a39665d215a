//! The timing model under concurrency (docs/sim.md, "Scheduling"): requests
//! complete when their own data is ready, reads go ahead of queued programs,
//! suspend cuts read tails further.

mod common;

use common::*;
use flashlab_device::{Completion, Device, IoRequest, Mode};
use flashlab_sim::{open_device, SimDevice};

fn dev(spec: &str) -> SimDevice {
    open_device(spec, 1, 64).unwrap_or_else(|e| panic!("{spec}: {e}"))
}

fn submit(d: &mut SimDevice, tag: u64, offset_bytes: u64, mode: Mode) {
    d.submit(IoRequest {
        tag,
        offset_bytes,
        size_bytes: 4096,
        mode,
    })
    .unwrap();
}

fn drain(d: &mut SimDevice, n: usize) -> Vec<Completion> {
    let mut out = Vec::new();
    while out.len() < n {
        d.poll(None, &mut out).unwrap();
    }
    out
}

/// Two dies (one per channel), no cache, the device prefilled: logical page
/// `2k` is on die 0 and `2k + 1` on die 1.
const TWO_DIES: &str = "nvme-tlc,capacity=64MiB,op=0.25,pages_per_block=64,channels=2,geometry.chips_per_channel=1,geometry.dies_per_chip=1,cache=off,prefill=on,nand.program_ns=900000";

#[test]
fn a_read_to_an_idle_die_overtakes_a_write_to_a_busy_die() {
    let mut d = dev(TWO_DIES);
    // The write goes to die 0 (the prefill left the round-robin pointer there)
    // and takes a 900 us program; the read, submitted after it, is of a page on die 1.
    submit(&mut d, 0, 0, Mode::Write);
    submit(&mut d, 1, 4096, Mode::Read);
    let done = drain(&mut d, 2);
    assert_eq!(done[0].tag, 1, "the read completes first: {done:?}");
    assert_eq!(done[1].tag, 0);
    assert!(
        done[0].complete_ns - done[0].submit_ns < 100_000,
        "{done:?}"
    );
    assert!(
        done[1].complete_ns - done[1].submit_ns > 900_000,
        "{done:?}"
    );
    assert_eq!(d.accounting().out_of_order_completions, 1);
}

#[test]
fn a_read_on_the_busy_die_waits_only_for_the_program_in_progress() {
    // Four writes queue four programs on die 0 (every other write goes to die 0);
    // a read of a die-0 page issued after them waits for the program in
    // progress only, not for the ones queued behind it.
    let spec = format!("{TWO_DIES},read_priority=on");
    let mut d = dev(&spec);
    for i in 0..8 {
        submit(&mut d, i, i * 8192, Mode::Write);
    }
    submit(&mut d, 8, 2 * 8192, Mode::Read);
    let done = drain(&mut d, 9);
    let read = done.iter().find(|c| c.tag == 8).unwrap();
    let read_ns = read.complete_ns - read.submit_ns;
    assert!(read_ns < 2 * 900_000, "read took {read_ns} ns");
    let last_write = done
        .iter()
        .filter(|c| c.tag < 8)
        .map(|c| c.complete_ns)
        .max()
        .unwrap();
    assert!(read.complete_ns < last_write);

    // First come, first served: the read waits for all four programs.
    let mut d = dev(&format!("{TWO_DIES},read_priority=off"));
    for i in 0..8 {
        submit(&mut d, i, i * 8192, Mode::Write);
    }
    submit(&mut d, 8, 2 * 8192, Mode::Read);
    let done = drain(&mut d, 9);
    let read = done.iter().find(|c| c.tag == 8).unwrap();
    assert!(read.complete_ns - read.submit_ns > 4 * 900_000);
}

/// Mean and 99th-percentile latency (ns) of the reads and of the writes.
fn split_latency(reqs: &[(u64, u32, Mode)], done: &[Completion]) -> ((f64, u64), (f64, u64)) {
    let mut r = Vec::new();
    let mut w = Vec::new();
    for c in done {
        let lat = c.complete_ns - c.submit_ns;
        match reqs[c.tag as usize].2 {
            Mode::Read => r.push(lat),
            _ => w.push(lat),
        }
    }
    let summary = |mut v: Vec<u64>| {
        v.sort_unstable();
        let mean = v.iter().sum::<u64>() as f64 / v.len().max(1) as f64;
        (mean, v.get(v.len() * 99 / 100).copied().unwrap_or(0))
    };
    (summary(r), summary(w))
}

fn mix(seed: u64, size: u64, n: usize, read_percent: u64) -> Vec<(u64, u32, Mode)> {
    let mut rng = Rng(seed);
    (0..n)
        .map(|_| {
            let mode = if rng.below(100) < read_percent {
                Mode::Read
            } else {
                Mode::Write
            };
            (rng.below(size / 4096) * 4096, 4096u32, mode)
        })
        .collect()
}

#[test]
fn reads_keep_their_latency_under_a_70_30_mix_when_the_cache_absorbs_the_writes() {
    let spec = "nvme-tlc,capacity=1GiB,op=0.25,prefill=on";
    let mut d = dev(spec);
    let size = d.info().size_bytes;
    let pure = mix(7, size, 20_000, 100);
    let done = run(&mut d, pure.iter().copied(), 32);
    let ((pure_read_ns, _), _) = split_latency(&pure, &done);

    let mut d = dev(spec);
    let mixed = mix(8, size, 20_000, 70);
    let done = run(&mut d, mixed.iter().copied(), 32);
    let ((mixed_read_ns, _), (write_ns, _)) = split_latency(&mixed, &done);
    println!(
        "QD32 reads: pure {:.1} us, in a 70/30 mix {:.1} us; writes {:.1} us; {} completions out of order",
        pure_read_ns / 1e3,
        mixed_read_ns / 1e3,
        write_ns / 1e3,
        d.accounting().out_of_order_completions
    );
    assert!(
        mixed_read_ns < 1.25 * pure_read_ns,
        "mixed reads {mixed_read_ns} ns vs pure {pure_read_ns} ns"
    );
    // The cache absorbs the writes: they complete at link speed.
    assert!(write_ns < 20_000.0, "writes {write_ns} ns");
    assert!(d.accounting().out_of_order_completions > 5_000);
}

#[test]
fn read_priority_and_suspend_cut_read_tails_under_writes() {
    // An MLC device whose writes outrun the flash: its 8 MiB cache fills and
    // about a hundred programs queue on every die. 20 % reads at QD 32.
    let base = "ssd-m,capacity=1GiB,prefill=on,cache.serve_reads=true,readahead=off";
    let p99 = |extra: &str| {
        let mut d = dev(&format!("{base}{extra}"));
        let size = d.info().size_bytes;
        let reqs = mix(9, size, 16_000, 20);
        let done = run(&mut d, reqs.iter().copied(), 32);
        let ((mean, p99), _) = split_latency(&reqs, &done);
        (mean, p99, d.accounting().suspends)
    };
    let (fcfs_mean, fcfs, _) = p99(",read_priority=off");
    let (prio_mean, prio, _) = p99(",read_priority=on,suspend=off");
    let (susp_mean, susp, suspends) = p99(",read_priority=on,suspend=program-erase");
    println!(
        "read mean/p99 us: first come first served {:.0}/{:.0}, read priority {:.0}/{:.0}, with program/erase suspend {:.0}/{:.0} ({suspends} suspends)",
        fcfs_mean / 1e3,
        fcfs as f64 / 1e3,
        prio_mean / 1e3,
        prio as f64 / 1e3,
        susp_mean / 1e3,
        susp as f64 / 1e3
    );
    assert!(prio < fcfs / 2, "priority p99 {prio} vs fcfs {fcfs}");
    assert!(susp < prio, "suspend p99 {susp} vs priority {prio}");
    assert!(suspends > 0);
}

#[test]
fn a_partial_page_read_moves_only_the_requested_sectors() {
    // 8 KiB pages on a slow bus (25 ns/B): a 4 KiB read saves 4 KiB x 25 ns = 102 us of channel time.
    let spec =
        "ssd-m,capacity=256MiB,op=0.25,page_bytes=8KiB,pages_per_block=32,prefill=on,readahead=off";
    let lat = |size: u32| {
        let mut d = dev(spec);
        d.submit(IoRequest {
            tag: 0,
            offset_bytes: 1 << 20,
            size_bytes: size,
            mode: Mode::Read,
        })
        .unwrap();
        let c = drain(&mut d, 1);
        c[0].complete_ns - c[0].submit_ns
    };
    let (half, whole) = (lat(4096), lat(8192));
    let saved = whole - half;
    // channel time saved plus the host-link time of the smaller transfer
    assert!(
        (102_000..=160_000).contains(&saved),
        "4 KiB {half} ns, 8 KiB {whole} ns"
    );
}

#[test]
fn reads_of_never_written_pages_cost_what_the_profile_says() {
    let lat = |extra: &str| {
        let mut d = dev(&format!(
            "nvme-tlc,capacity=256MiB,op=0.25,pages_per_block=64{extra}"
        ));
        submit(&mut d, 0, 0, Mode::Read);
        let c = drain(&mut d, 1);
        (
            c[0].complete_ns - c[0].submit_ns,
            d.accounting().unmapped_reads,
        )
    };
    let (controller, n1) = lat("");
    let (flash, n2) = lat(",unmapped_read=flash");
    assert_eq!((n1, n2), (1, 1));
    assert!(controller < 10_000, "{controller}");
    assert!(flash >= controller + 50_000, "{flash}");
}

#[test]
fn a_rewrite_of_a_page_still_dirty_in_the_cache_is_absorbed() {
    let spec = TWO_DIES.replace("cache=off", "cache=on");
    let mut d = dev(&format!("{spec},cache.absorb_rewrites=true"));
    // Eight writes queue four 900 us programs on each die; page 6's program
    // is the last on its die when it is written again.
    for i in 0..8 {
        submit(&mut d, i, i * 4096, Mode::Write);
    }
    submit(&mut d, 8, 6 * 4096, Mode::Write);
    let done = drain(&mut d, 9);
    assert!(
        done.iter().all(|c| c.complete_ns - c.submit_ns < 100_000),
        "{done:?}"
    );
    let a = d.accounting();
    assert_eq!(a.cache_absorbed_pages, 1);
    assert_eq!(a.flash_programs[flashlab_sim::Cause::Host as usize], 8);

    // Without absorption the rewrite is a ninth program.
    let mut d = dev(&format!("{spec},cache.absorb_rewrites=false"));
    for i in 0..8 {
        submit(&mut d, i, i * 4096, Mode::Write);
    }
    submit(&mut d, 8, 6 * 4096, Mode::Write);
    drain(&mut d, 9);
    assert_eq!(
        d.accounting().flash_programs[flashlab_sim::Cause::Host as usize],
        9
    );
}

#[test]
fn dftl_reads_a_translation_page_once_per_request() {
    // A cold CMT: a 32 KiB read covers 8 data pages whose map entries share
    // one translation page.
    let mut d = dev(
        "nvme-tlc,capacity=256MiB,op=0.25,pages_per_block=64,cache=off,ftl=dftl,map_cache=4KiB",
    );
    let size = d.info().size_bytes;
    run(
        &mut d,
        sequential(0, 256 * KIB, size / (256 * KIB), Mode::Write),
        8,
    );
    // evict the entries of the first translation page from the 512-entry CMT
    run(&mut d, sequential(size / 2, 4 * KIB, 2048, Mode::Read), 1);
    let before = d.accounting().map_flash_reads;
    d.submit(IoRequest {
        tag: 0,
        offset_bytes: 0,
        size_bytes: 32 * 1024,
        mode: Mode::Read,
    })
    .unwrap();
    drain(&mut d, 1);
    assert_eq!(d.accounting().map_flash_reads - before, 1);
}

/// Sustained random 4 KiB overwrites at QD 32 on a nearly full nvme-tlc run
/// past the point where GC keeps every die busy; with the default cache they
/// must never stall (absorbing rewrites once piled valid data onto one die).
#[test]
fn sustained_random_overwrites_with_the_default_cache_never_stall() {
    let mut d = dev("nvme-tlc,capacity=2GiB,op=0.07,prefill=on");
    let size = d.info().size_bytes;
    let writes = mix(11, size, 1_200_000, 0);
    let done = run(&mut d, writes.iter().copied(), 32);
    assert_eq!(done.len(), writes.len());
    assert!(
        d.accounting().flash_erases.iter().sum::<u64>() > 0,
        "GC ran"
    );
}
