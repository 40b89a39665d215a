//! Internal reorganisation under sustained writes (issue 30 item 9;
//! `[reorg]`, src/reorg.rs). Hudlet & Schall section 6: "every 4 to 5
//! seconds, performance is heavily degraded for about 3 seconds. We
//! conclude, the drive is performing internal re-organization like freeing
//! up flash blocks or searching for another writable block." and, after
//! TRIM (Figure 5): "Apparently, the SSD tries to free up flash blocks while
//! we were simultaneously applying a write load to it."

mod common;

use common::*;
use flashlab_device::{Completion, Device, Mode};
use flashlab_sim::{open_device, SimDevice};

const X25M: &str = "hs-intel-x25m-g2,capacity=1GiB";
const OFF: &str = ",reorg.interval_ns=0,reorg.trim_cleaning=false";

/// Writes completed in each simulated second (by completion time), from
/// the first completion on; the last, partial second dropped.
fn per_second(c: &[Completion]) -> Vec<u64> {
    let t0 = c.iter().map(|c| c.complete_ns).min().unwrap();
    let t1 = c.iter().map(|c| c.complete_ns).max().unwrap();
    let mut bins = vec![0u64; ((t1 - t0) / 1_000_000_000) as usize];
    for c in c {
        if let Some(b) = bins.get_mut(((c.complete_ns - t0) / 1_000_000_000) as usize) {
            *b += 1;
        }
    }
    bins
}

/// Sustained random 4 KiB writes over the device's first 512 MiB at QD 32.
fn sustained_writes(d: &mut SimDevice, count: u64) -> Vec<Completion> {
    run(d, random(5, 512 * MIB, 4 * KIB, count, Mode::Write), 32)
}

fn median(v: &[u64]) -> u64 {
    let mut s = v.to_vec();
    s.sort_unstable();
    s[s.len() / 2]
}

/// The seconds whose throughput fell below 3/4 of the median second.
fn drops(bins: &[u64]) -> Vec<usize> {
    let m = median(bins);
    (0..bins.len()).filter(|&i| bins[i] * 4 < m * 3).collect()
}

#[test]
fn sustained_writes_drop_every_few_seconds_with_timed_reorganisation() {
    let mut on = open_device(X25M, 7, 64).unwrap();
    let cfg = on.config().reorg.clone();
    assert_eq!(cfg.interval_ns, 4_500_000_000, "the profile's interval");
    let bins = per_second(&sustained_writes(&mut on, 240_000));
    println!("reorg on, writes per second: {bins:?}");
    assert!(bins.len() >= 12, "{} seconds", bins.len());
    let low = drops(&bins);
    // degraded seconds come in runs that start every interval_ns
    let starts: Vec<usize> = low
        .iter()
        .copied()
        .filter(|&i| i == 0 || !low.contains(&(i - 1)))
        .collect();
    assert!(starts.len() >= 2, "drops at {low:?}");
    for w in starts.windows(2) {
        let period_s = (w[1] - w[0]) as f64;
        assert!((4.0..=5.0).contains(&period_s), "drops at {low:?}");
    }
    assert!(on.reorg_erases().unwrap().0 > 0);

    // Off, the same load runs at one rate.
    let mut off = open_device(&format!("{X25M}{OFF}"), 7, 64).unwrap();
    assert!(off.reorg_erases().is_none());
    let bins_off = per_second(&sustained_writes(&mut off, 240_000));
    println!("reorg off, writes per second: {bins_off:?}");
    assert!(drops(&bins_off).is_empty(), "{bins_off:?}");
}

#[test]
fn a_pause_between_writes_restarts_the_timer() {
    let mut d = open_device(X25M, 7, 64).unwrap();
    // bursts shorter than the interval, separated by idle gaps longer than
    // sustained_gap_ns: no reorganisation ever starts
    for burst in 0..4u64 {
        let reqs = random(burst, 512 * MIB, 4 * KIB, 20_000, Mode::Write);
        run(&mut d, reqs, 32);
        let t = d.quiesce_at() + 2_000_000_000;
        d.idle_until(t).unwrap();
    }
    assert_eq!(d.reorg_erases(), Some((0, 0)));
}

/// Writes right after a TRIM of a full device are slower than the same
/// writes once the cleaning it started is done; without `trim_cleaning`
/// they are not.
fn after_trim(spec: &str) -> (f64, f64, u64) {
    let mut d = open_device(spec, 7, 64).unwrap();
    seq_fill(&mut d, 256 * KIB);
    let size = d.info().size_bytes;
    run(&mut d, [(0, size as u32, Mode::Trim)], 1);
    let owed = d.reorg_erases().map_or(0, |r| r.1);
    let bins = per_second(&sustained_writes(&mut d, 80_000));
    let first = bins[0] as f64;
    let last = bins[bins.len() - 1] as f64;
    (first, last, owed)
}

#[test]
fn writes_after_trim_wait_for_the_cleaning_it_started() {
    // timed reorganisation off in both, to see the post-TRIM cleaning alone
    let (first, last, owed) = after_trim(&format!("{X25M},reorg.interval_ns=0"));
    println!("post-TRIM cleaning on: first second {first}, last {last}, {owed} erases owed");
    // one erase per 128-page block of the trimmed GiB
    assert_eq!(owed, (1u64 << 30) / (128 * 4096));
    assert!(first < 0.8 * last, "first {first} last {last}");
    let (first, last, owed) = after_trim(&format!("{X25M}{OFF}"));
    println!("off: first second {first}, last {last}");
    assert_eq!(owed, 0);
    assert!(first > 0.9 * last, "first {first} last {last}");
}

/// The post-TRIM erases still owed after `writes` sustained writes, on a
/// full 1 GiB device trimmed whole, with short timed windows (200 ms apart,
/// 150 ms long) so that the cleaning meets several of them.
fn owed_after_trim(spec: &str, writes: u64) -> u64 {
    let mut d = open_device(
        &format!("{spec},reorg.interval_ns=200000000,reorg.duration_ns=150000000"),
        7,
        64,
    )
    .unwrap();
    seq_fill(&mut d, 256 * KIB);
    let size = d.info().size_bytes;
    run(&mut d, [(0, size as u32, Mode::Trim)], 1);
    assert_eq!(d.reorg_erases().unwrap().1, (1u64 << 30) / (128 * 4096));
    sustained_writes(&mut d, writes);
    d.reorg_erases().unwrap().1
}

#[test]
fn a_timed_reorganisation_frees_the_trimmed_blocks_first() {
    // The profile: the windows' erases pay the post-TRIM debt, so the 2,048
    // owed erases (0.61 s of cleaning at half of 20 dies' time) are paid
    // within the first second of writing, windows or not.
    assert!(
        open_device(X25M, 7, 64)
            .unwrap()
            .config()
            .reorg
            .timed_frees_trimmed
    );
    let on = owed_after_trim(X25M, 20_000);
    println!("timed_frees_trimmed on: {on} erases still owed");
    assert_eq!(on, 0);
    // Off, the debt waits out every window (it runs in 50 of every 200 ms)
    // and is still owed after the same writes.
    let off = owed_after_trim(&format!("{X25M},reorg.timed_frees_trimmed=false"), 20_000);
    println!("timed_frees_trimmed off: {off} erases still owed");
    assert!(off > 100, "{off}");
}
