//! Service times vary (issue 30, mechanism 12; docs/sim.md, "Service times
//! vary"): MLC/TLC page kinds with their own program times, read retries,
//! and a spread of program and erase times, all drawn from seeded per-die
//! streams. Each test fails when its mechanism is off.

mod common;

use common::*;
use flashlab_device::{Completion, Device, Mode};
use flashlab_sim::{open_device, Cause, SimDevice};

fn dev(spec: &str, seed: u64) -> SimDevice {
    open_device(spec, seed, 64).unwrap_or_else(|e| panic!("{spec}: {e}"))
}

/// One MLC die (ssd-m's timing: 50 us reads, 900 us programs, its page
/// kinds switched off: every program 900 us), no cache, no read-ahead: at
/// queue depth 1 every request sees its own flash operation.
const ONE_DIE: &str =
    "ssd-m,capacity=64MiB,op=0.25,channels=1,cache=off,readahead=off,nand.program_ns_by_page_kind=";

/// MLC lower and upper pages: 450 and 1350 us, mean 900 us (ssd-m's
/// program time), an era-typical 1:3 ratio (assumed; docs/sim.md).
const MLC_KINDS: &str = "nand.program_ns_by_page_kind=450000/1350000";

fn latencies(c: &[Completion]) -> Vec<u64> {
    let mut l: Vec<u64> = c.iter().map(|c| c.latency_ns()).collect();
    l.sort_unstable();
    l
}

/// The `q`-quantile (nearest rank) of sorted latencies.
fn quantile(sorted: &[u64], q: f64) -> u64 {
    let i = ((sorted.len() as f64 * q).ceil() as usize).clamp(1, sorted.len());
    sorted[i - 1]
}

fn mean(v: &[u64]) -> f64 {
    v.iter().sum::<u64>() as f64 / v.len() as f64
}

/// 512 sequential 4 KiB writes at queue depth 1: 512 pages in 4 blocks.
fn sequential_writes(spec: &str, seed: u64) -> Vec<u64> {
    let mut d = dev(spec, seed);
    latencies(&run(&mut d, sequential(0, 4 * KIB, 512, Mode::Write), 1))
}

#[test]
fn lower_and_upper_pages_give_two_latency_clusters_with_the_mean_of_the_two_times() {
    let off = sequential_writes(ONE_DIE, 1);
    let on = sequential_writes(&format!("{ONE_DIE},{MLC_KINDS}"), 1);
    // Off: every program takes 900 us, so every write the same time.
    assert_eq!(quantile(&off, 0.1), quantile(&off, 0.9), "off: {off:?}");
    // On: half the pages (the lower ones) program in 450 us, half in 1350 us.
    let (p10, p90) = (quantile(&on, 0.1), quantile(&on, 0.9));
    assert_eq!(
        p90 - p10,
        1_350_000 - 450_000,
        "on: p10 {p10} ns, p90 {p90} ns"
    );
    assert_eq!(p10, quantile(&off, 0.5) - 450_000);
    // Same number of each kind: the mean is the mean of the two times,
    // which is the constant program time.
    assert_eq!(mean(&on), mean(&off));
}

#[test]
fn tlc_pages_cycle_through_three_kinds() {
    let spec = format!("{ONE_DIE},nand.program_ns_by_page_kind=500000/900000/1300000");
    let mut d = dev(&spec, 1);
    // 384 pages: 3 blocks of 128, each with 43, 43 and 42 pages of the kinds
    let c = run(&mut d, sequential(0, 4 * KIB, 384, Mode::Write), 1);
    let l: Vec<u64> = c.iter().map(|c| c.latency_ns()).collect();
    // page i of a block is of kind i % 3: consecutive writes step by 400 us
    assert_eq!(l[1] - l[0], 400_000, "{:?}", &l[..6]);
    assert_eq!(l[2] - l[1], 400_000, "{:?}", &l[..6]);
    assert_eq!(l[3], l[0], "{:?}", &l[..6]);
    // the accounting adds the times actually drawn
    let a = d.accounting();
    let h = Cause::Host as usize;
    let per_block = 43 * 500_000 + 43 * 900_000 + 42 * 1_300_000;
    assert_eq!(a.program_ns[h], 3 * per_block);
}

/// Mean and variance of the retries of one read: each retry happens with
/// probability `p` (a further one again with `p`), at most `max`.
fn retry_moments(p: f64, max: u32) -> (f64, f64) {
    let (mut m1, mut m2) = (0.0, 0.0);
    for k in 0..=max {
        let pk = if k < max {
            p.powi(k as i32) * (1.0 - p)
        } else {
            p.powi(max as i32)
        };
        m1 += pk * k as f64;
        m2 += pk * (k * k) as f64;
    }
    (m1, m2 - m1 * m1)
}

/// Mean latency of 4000 random 4 KiB reads at queue depth 1 over 1024 written pages.
fn random_read_mean(spec: &str) -> f64 {
    let mut d = dev(spec, 7);
    run(&mut d, sequential(0, 4 * KIB, 1024, Mode::Write), 1);
    let mut rng = Rng(3);
    let reads = (0..4000).map(|_| (rng.below(1024) * 4 * KIB, 4 * KIB as u32, Mode::Read));
    mean(&latencies(&run(&mut d, reads, 1)))
}

#[test]
fn read_retries_raise_the_mean_read_by_the_expected_retries_times_the_retry_time() {
    let off = random_read_mean(ONE_DIE);
    let (p, max, retry_ns) = (0.2, 4, 50_000.0);
    let on = random_read_mean(&format!(
        "{ONE_DIE},nand.read_retry_probability={p},nand.read_retry_max={max}"
    ));
    // Every read otherwise takes the same time on an idle die, so the
    // difference is the retries' die time: its mean is E[retries] x 50 us
    // (read_retry_ns defaults to read_ns), its standard error
    // sqrt(Var[retries] / n) x 50 us; allow 5 standard errors.
    let (m, var) = retry_moments(p, max);
    let expected = m * retry_ns;
    let bound = 5.0 * (var / 4000.0).sqrt() * retry_ns;
    let extra = on - off;
    assert!(
        (extra - expected).abs() < bound,
        "extra {extra:.0} ns, expected {expected:.0} +- {bound:.0} ns"
    );
    assert!(extra > 0.0);
}

#[test]
fn program_and_erase_spread_stay_within_their_bounds() {
    let spread = "nand.program_spread=0.1,nand.erase_spread=0.1";
    let off = sequential_writes(ONE_DIE, 1);
    let on = sequential_writes(&format!("{ONE_DIE},{spread}"), 1);
    // +-10 % of 900 us, uniform: every write within 90 us of the constant
    // time, and over 512 writes both ends of the range are nearly reached.
    let base = off[0] as i64;
    let dev_ns: Vec<i64> = on.iter().map(|&l| l as i64 - base).collect();
    let (lo, hi) = (dev_ns[0], dev_ns[dev_ns.len() - 1]);
    assert!(lo >= -90_000 && hi <= 90_000, "{lo}..{hi}");
    assert!(lo < -80_000 && hi > 80_000, "{lo}..{hi}");
    // the mean stays near the constant: 26 us standard deviation / sqrt(512)
    let m = dev_ns.iter().sum::<i64>() as f64 / dev_ns.len() as f64;
    assert!(m.abs() < 5.0 * 52_000.0 / (512f64).sqrt() / 2.0, "mean {m}");

    // Erases: random overwrites on the small device make GC erase blocks.
    let small = "ssd-m,capacity=16MiB,op=0.25,channels=1,cache=off,readahead=off,nand.program_ns_by_page_kind=";
    let erase_means = |spec: &str| {
        let mut d = dev(spec, 5);
        seq_fill(&mut d, 4 * KIB);
        let mut rng = Rng(9);
        let w = (0..8000).map(|_| (rng.below(4096) * 4 * KIB, 4 * KIB as u32, Mode::Write));
        run(&mut d, w, 4);
        let a = d.accounting();
        let g = Cause::Gc as usize;
        assert!(a.flash_erases[g] > 50, "{} GC erases", a.flash_erases[g]);
        a.erase_ns[g] as f64 / a.flash_erases[g] as f64
    };
    let off = erase_means(small);
    let on = erase_means(&format!("{small},{spread}"));
    assert_eq!(off, 3_500_000.0);
    assert!(on != off && (on - off).abs() < 0.1 * off, "{on} vs {off}");
}

fn mixed(spec: &str, seed: u64) -> Vec<(u64, u64)> {
    let mut d = dev(spec, seed);
    let mut rng = Rng(11);
    let reqs: Vec<_> = (0..3000)
        .map(|_| {
            let mode = if rng.below(10) < 7 {
                Mode::Read
            } else {
                Mode::Write
            };
            (rng.below(8192) * 4 * KIB, 4 * KIB as u32, mode)
        })
        .collect();
    run(&mut d, reqs, 8)
        .iter()
        .map(|c| (c.tag, c.complete_ns))
        .collect()
}

#[test]
fn the_same_seed_gives_the_same_completions_and_another_seed_others() {
    let spec = format!(
        "ssd-m,capacity=64MiB,op=0.25,channels=2,cache=off,{MLC_KINDS},nand.program_spread=0.1,nand.erase_spread=0.1,nand.read_retry_probability=0.05"
    );
    let a = mixed(&spec, 1);
    assert_eq!(a, mixed(&spec, 1));
    assert_ne!(a, mixed(&spec, 2));
    // with every time constant, the seed changes nothing
    let constant = "ssd-m,capacity=64MiB,op=0.25,channels=2,cache=off";
    assert_eq!(mixed(constant, 1), mixed(constant, 2));
}

#[test]
fn bad_variance_settings_are_refused_with_the_fix() {
    for (spec, needle) in [
        (
            "ssd-m,nand.program_ns_by_page_kind=900000/0",
            "must be positive",
        ),
        (
            "ssd-m,nand.program_ns_by_page_kind=1/2/3/4/5",
            "2 (MLC), 3 (TLC) or 4",
        ),
        ("ssd-m,nand.program_spread=1.5", "[0, 1)"),
        ("ssd-m,nand.read_retry_probability=1", "[0, 1)"),
        ("ssd-m,nand.read_retry_max=0", "1..=64"),
        (
            "ssd-m,nand.read_ns_by_page_kind=40000/50000/60000",
            "one time per page kind",
        ),
        (
            "ssd-m,nand.read_ns_by_page_kind=0/50000",
            "must be positive",
        ),
        (
            "ssd-m,nand.program_ns_by_page_kind=1/2/3/4,nand.page_kind_order=wordline",
            "2 (MLC) or 3 (TLC)",
        ),
        ("ssd-m,nand.page_kind_order=random", "page_kind_order"),
        // a misspelt key: the error lists the valid ones
        ("ssd-m,nand.page_kind_ordr=wordline", "page_kind_order"),
        ("ssd-m,nand.read_ns_by_kind=1/2", "read_ns_by_page_kind"),
    ] {
        let e = open_device(spec, 1, 1).err().expect(spec).to_string();
        assert!(e.contains(needle), "{spec}: {e}");
    }
}

/// Random overwrites keeping GC busy, with the maps checked after every GC.
fn gc_heavy(spec: &str, seed: u64) -> (Vec<(u64, u64)>, u64) {
    let mut d = dev(spec, seed);
    seq_fill(&mut d, 64 * KIB);
    let pages = d.info().size_bytes / (4 * KIB);
    let mut rng = Rng(13);
    let reqs: Vec<_> = (0..20_000)
        .map(|_| {
            let mode = if rng.below(4) == 0 {
                Mode::Read
            } else {
                Mode::Write
            };
            (rng.below(pages) * 4 * KIB, 4 * KIB as u32, mode)
        })
        .collect();
    let c = run(&mut d, reqs, 16);
    let relocated = d.accounting().gc_relocated_pages;
    (
        c.iter().map(|c| (c.tag, c.complete_ns)).collect(),
        relocated,
    )
}

#[test]
fn variance_works_with_copy_back_multi_plane_groups_and_gc() {
    // nvme-tlc relocates with copy-back (placed page by page with variance);
    // ssd-m without it, through multi-plane groups; both under the checker.
    let tlc = "nand.program_ns_by_page_kind=30000/45000/60000,nand.program_spread=0.1,nand.erase_spread=0.1,nand.read_retry_probability=0.05";
    for base in [
        "nvme-tlc,capacity=128MiB,op=0.25,channels=1,cache=off,check=on",
        "ssd-m,capacity=64MiB,op=0.25,channels=2,cache=off,multi_plane=on,check=on",
    ] {
        let spec = format!("{base},{tlc}");
        let (a, relocated) = gc_heavy(&spec, 1);
        assert!(relocated > 1000, "{spec}: {relocated} pages relocated");
        assert_eq!(a, gc_heavy(&spec, 1).0, "{spec}");
        assert_ne!(a, gc_heavy(base, 1).0, "{spec}");
    }
}

#[test]
fn an_override_of_the_program_time_moves_every_page_kind() {
    // ssd-m writes both: [450000, 1350000] around its 900 us program time.
    // A fit overrides nand.program_ns; the kinds keep their 1:3 split
    // around the new mean instead of ignoring it.
    let mean_write_us = |spec: &str| {
        let mut d = open_device(spec, 1, 1).expect("opens");
        let reqs = (0..400u64).map(|i| (i * 4096, 4096u32, Mode::Write));
        mean_latency_us(&run(&mut d, reqs, 1))
    };
    let base = "ssd-m,capacity=128MiB,channels=2,cache=off,prefill=on";
    let at_900 = mean_write_us(base);
    let at_450 = mean_write_us(&format!("{base},nand.program_ns=450000"));
    // 450 us less program time per write, whatever the split
    assert!(
        (at_900 - at_450 - 450.0).abs() < 20.0,
        "900 us: {at_900:.0} us a write, 450 us: {at_450:.0} us"
    );
}

/// 2000 random 4 KiB writes at queue depth 1 on the one die (no GC: the
/// device has room for them all).
fn random_writes(spec: &str, seed: u64) -> Vec<u64> {
    let mut d = dev(spec, seed);
    let pages = d.info().size_bytes / (4 * KIB);
    let mut rng = Rng(21);
    let w = (0..2000).map(|_| (rng.below(pages) * 4 * KIB, 4 * KIB as u32, Mode::Write));
    latencies(&run(&mut d, w, 1))
}

#[test]
fn random_writes_have_a_p99_above_their_p50_only_when_service_times_vary() {
    let off = random_writes(ONE_DIE, 1);
    assert_eq!(quantile(&off, 0.5), quantile(&off, 0.99), "off: {off:?}");
    for on in [
        MLC_KINDS,
        "nand.program_spread=0.1",
        "nand.program_ns_by_page_kind=450000/1350000,nand.page_kind_order=wordline",
    ] {
        let l = random_writes(&format!("{ONE_DIE},{on}"), 1);
        let (p50, p99) = (quantile(&l, 0.5), quantile(&l, 0.99));
        assert!(p99 > p50, "{on}: p50 {p50} ns, p99 {p99} ns");
    }
    // the page kinds alone: the p99 is an upper page's, the p50 a lower one's
    let l = random_writes(&format!("{ONE_DIE},{MLC_KINDS}"), 1);
    assert_eq!(quantile(&l, 0.99) - quantile(&l, 0.5), 900_000);
}

/// Whether each program of 256 sequential 4 KiB writes (two 128-page
/// blocks) at queue depth 1 took the slow time: `true` for an upper page.
fn upper_pages(spec: &str) -> Vec<bool> {
    let l: Vec<u64> = {
        let mut d = dev(spec, 1);
        run(&mut d, sequential(0, 4 * KIB, 256, Mode::Write), 1)
            .iter()
            .map(|c| c.latency_ns())
            .collect()
    };
    let fast = *l.iter().min().unwrap();
    l.iter().map(|&x| x > fast).collect()
}

#[test]
fn wordline_order_programs_the_next_lower_page_before_the_previous_upper_page() {
    let cyclic = upper_pages(&format!("{ONE_DIE},{MLC_KINDS}"));
    let wordline = upper_pages(&format!(
        "{ONE_DIE},{MLC_KINDS},nand.page_kind_order=wordline"
    ));
    for block in [&cyclic[..128], &cyclic[128..]] {
        // cyclic: lower and upper pages alternate
        assert!(block.iter().enumerate().all(|(i, &u)| u == (i % 2 == 1)));
    }
    for block in [&wordline[..128], &wordline[128..]] {
        // Linux MTD's distance-3 pairing: lower 0, 1, 3, 5, ..., 125; upper
        // 2, 4, ..., 126 and the last page, 127
        let upper: Vec<usize> = (0..128).filter(|&i| block[i]).collect();
        let expected: Vec<usize> = (1..64).map(|k| 2 * k).chain([127]).collect();
        assert_eq!(upper, expected);
    }
    // the same mix of kinds (64 of each per block), so the same mean
    let mean_us = |spec: &str| mean(&sequential_writes(spec, 1));
    assert_eq!(
        mean_us(&format!("{ONE_DIE},{MLC_KINDS}")),
        mean_us(&format!(
            "{ONE_DIE},{MLC_KINDS},nand.page_kind_order=wordline"
        ))
    );

    // TLC (MQSim's rule after Yaakobi et al.): pages 0-5 lower, 6-7
    // middle, then pairs of lower, middle, upper
    let tlc = format!(
        "{ONE_DIE},nand.program_ns_by_page_kind=500000/900000/1300000,nand.page_kind_order=wordline"
    );
    let mut d = dev(&tlc, 1);
    let c = run(&mut d, sequential(0, 4 * KIB, 20, Mode::Write), 1);
    let lower = c[0].latency_ns();
    let kinds: Vec<u64> = c
        .iter()
        .map(|c| (c.latency_ns() - lower) / 400_000)
        .collect();
    assert_eq!(
        kinds,
        [0, 0, 0, 0, 0, 0, 1, 1, 0, 0, 1, 1, 2, 2, 0, 0, 1, 1, 2, 2]
    );
}

#[test]
fn reads_take_their_page_kinds_read_time() {
    // ssd-m reads in 50 us; lower pages 40 us, upper 60 us keep that mean
    let kinds = "nand.read_ns_by_page_kind=40000/60000";
    let reads = |spec: &str| {
        let mut d = dev(spec, 1);
        run(&mut d, sequential(0, 4 * KIB, 256, Mode::Write), 1);
        run(&mut d, sequential(0, 4 * KIB, 256, Mode::Read), 1)
            .iter()
            .map(|c| c.latency_ns())
            .collect::<Vec<u64>>()
    };
    let off = reads(&format!("{ONE_DIE},{MLC_KINDS}"));
    let on = reads(&format!("{ONE_DIE},{MLC_KINDS},{kinds}"));
    assert!(off.iter().all(|&l| l == off[0]), "off: every read the same");
    // written in order, page i of a block holds the i-th write: kinds alternate
    for (i, (&a, &b)) in on.iter().zip(&off).enumerate() {
        let expected = if i % 2 == 0 { b - 10_000 } else { b + 10_000 };
        assert_eq!(a, expected, "read {i}");
    }
    // an override of nand.read_ns moves both kinds with it (a fit's knob)
    let faster = reads(&format!("{ONE_DIE},{MLC_KINDS},{kinds},nand.read_ns=25000"));
    assert_eq!(on[0] - faster[0], 20_000);
    assert_eq!(on[1] - faster[1], 30_000);
}

#[test]
fn page_kind_order_and_read_kinds_work_with_multi_plane_groups_copy_back_and_gc() {
    let on = "nand.program_ns_by_page_kind=30000/45000/60000,nand.read_ns_by_page_kind=40000/50000/70000,nand.page_kind_order=wordline,nand.read_retry_probability=0.05";
    for base in [
        "nvme-tlc,capacity=128MiB,op=0.25,channels=1,cache=off,check=on",
        "ssd-m,capacity=64MiB,op=0.25,channels=2,cache=off,multi_plane=on,check=on",
    ] {
        let spec = format!("{base},{on}");
        let (a, relocated) = gc_heavy(&spec, 1);
        assert!(relocated > 1000, "{spec}: {relocated} pages relocated");
        assert_eq!(a, gc_heavy(&spec, 1).0, "{spec}");
        assert_ne!(a, gc_heavy(&spec, 2).0, "{spec}");
    }
}
