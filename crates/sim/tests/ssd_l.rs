//! Chen, Koufaty & Zhang's low-end SSD-L (SIGMETRICS 2009): the mechanisms
//! its profile switches on beyond the ones `paper_profiles.rs` checks, each
//! measured with the mechanism on and off through the Device API. The bands
//! are these tests' own guards; `flashlab validate --profile ssd-l` scores
//! the paper's numbers strictly.
mod common;

use common::*;
use flashlab_device::{Completion, Device, Mode};
use flashlab_sim::{open_device, SimDevice};

fn dev(spec: &str) -> SimDevice {
    open_device(spec, 7, 32).unwrap_or_else(|e| panic!("{spec}: {e}"))
}

/// The fraction of completions within [lo_us, hi_us].
fn within(c: &[Completion], lo_us: u64, hi_us: u64) -> f64 {
    let n = c
        .iter()
        .filter(|c| (lo_us * 1000..=hi_us * 1000).contains(&c.latency_ns()))
        .count();
    n as f64 / c.len() as f64
}

/// Section 5.4: "SSD-L has no external RAM buffer, instead, it only has a
/// 16KB buffer in the controller": a 256 KiB request cannot wait whole in
/// the controller, so its pages stream between the SATA link and the flash
/// bus (`host.cut_through` for reads, `host.write_cut_through` for writes).
/// Section 5.3: a buffered sequential 4 KiB write costs the page's trip
/// "to the register through the serial bus ... around 140-160 us"; stored
/// and forwarded it also waits for the SATA transfer first (167 us).
#[test]
fn ssd_l_streams_requests_through_its_small_buffer() {
    let spec = "ssd-l,capacity=4GiB";
    let off = format!("{spec},host.write_cut_through=false,host.cut_through=false");
    let seq4k = |spec: &str| {
        let mut d = dev(spec);
        let c = run(&mut d, sequential(64 * MIB, 4 * KIB, 1024, Mode::Write), 1);
        let mut l: Vec<u64> = c.iter().map(|c| c.latency_ns()).collect();
        l.sort_unstable();
        (within(&c, 140, 160), l[l.len() / 2] as f64 / 1000.0)
    };
    let ((on, on_us), (stored, stored_us)) = (seq4k(spec), seq4k(&off));
    println!("ssd-l sequential 4 KiB writes within 140-160 us: {on:.2} cut-through (median {on_us:.1} us), {stored:.2} store-and-forward (median {stored_us:.1} us)");
    assert!(on > 0.8, "cut-through: {on}");
    assert!(stored < 0.1, "store-and-forward: {stored}");
    // 256 KiB sequential requests from 32 interleaved streams, one at a time
    // (Chen et al. Figure 1's 32 jobs on a port without NCQ)
    let streams = |mode: Mode| {
        (0..256u64).map(move |i| {
            let (job, k) = (i % 32, i / 32);
            (job * 64 * MIB + k * 256 * KIB, 256 * KIB as u32, mode)
        })
    };
    // the whole 32 GB: its spare blocks give each stream a sequential log
    let (spec, off) = (
        "ssd-l",
        "ssd-l,host.write_cut_through=false,host.cut_through=false",
    );
    let bw = |spec: &str, mode: Mode| {
        let mut d = dev(spec);
        let c = run(&mut d, streams(mode), 1);
        // the fill's map is on flash already: no request flushes the whole
        // map the fill dirtied (that flush took 7 s on one die)
        let worst = c.iter().map(|c| c.latency_ns()).max().unwrap();
        assert!(worst < 100_000_000, "{mode:?} {worst} ns");
        bandwidth_mb_s(&c, 256 * KIB)
    };
    let (r_on, r_off) = (bw(spec, Mode::Read), bw(off, Mode::Read));
    let (w_on, w_off) = (bw(spec, Mode::Write), bw(off, Mode::Write));
    println!("ssd-l 256 KiB, 32 streams: reads {r_on:.0} / {r_off:.0} MB/s, writes {w_on:.0} / {w_off:.0} MB/s (cut-through / store-and-forward)");
    assert!(r_on > 1.2 * r_off, "reads {r_on} vs {r_off}");
    assert!(w_on > 1.1 * w_off, "writes {w_on} vs {w_off}");
}

/// Section 5.7: "The more random the workload is, the more frequently such
/// extraordinarily high-cost requests appear", and "In the worst case, each
/// individual page in a log block would belong to a different mapping unit
/// and needs a merge operation correspondingly". SSD-L's random log
/// associates at most one log block's worth of units (`ftl.log_units` =
/// 128): right after the fill, random writes over 1 GiB (64 units of
/// 16 MiB) only fill the log, while over 4 GiB (256 units) half of them
/// merge a unit from the first few hundred writes on. Without the bound the
/// 4 GiB writes, too, only fill the 4096-page log.
#[test]
fn ssd_l_merges_once_writes_spread_over_more_units_than_its_log_associates() {
    let mean = |spec: &str, range: u64| {
        let mut d = dev(spec);
        let c = run(&mut d, random(5, range, 4 * KIB, 600, Mode::Write), 1);
        mean_latency_us(&c) / 1000.0
    };
    let spec = "ssd-l,capacity=4GiB";
    let unbounded = format!("{spec},ftl.log_units=0");
    let (near, wide) = (mean(spec, 1 << 30), mean(spec, 4 << 30));
    let wide_unbounded = mean(&unbounded, 4 << 30);
    println!(
        "ssd-l 600 random 4 KiB writes after the fill: 1 GiB {near:.2} ms, 4 GiB {wide:.2} ms, 4 GiB without the bound {wide_unbounded:.2} ms"
    );
    assert!(wide > 8.0 * near, "4 GiB {wide} ms vs 1 GiB {near} ms");
    assert!(
        wide_unbounded < 1.2 * near,
        "without the bound: {wide_unbounded} ms vs 1 GiB {near} ms"
    );
}

/// Section 5.1: "before each experiment we reinitialize the SSD status by
/// sequentially overwriting the SSD with request size of 256KB". The
/// re-fill supersedes every page the random log held, and with
/// `ftl.erase_dead_logs` the dead log is erased, so Figure 8a's random
/// writes over 1 GB start in an empty 4096-page log: 2,000 of them merge
/// nothing. Without it the log keeps its write pointer (3,000 dead pages
/// here), is full again after 1,096 writes, and its drain merges the
/// range's units at about 110 ms each.
#[test]
fn ssd_l_refill_frees_the_random_log() {
    let after_refill = |spec: &str| {
        let mut d = dev(spec);
        run(&mut d, random(11, 1 << 30, 4 * KIB, 3000, Mode::Write), 1);
        // the re-fill of the range the random writes hit
        run(&mut d, sequential(0, 256 * KIB, 4096, Mode::Write), 1);
        d.reset_stats();
        let c = run(&mut d, random(12, 1 << 30, 4 * KIB, 2000, Mode::Write), 1);
        (d.accounting().merges_full, mean_latency_us(&c) / 1000.0)
    };
    let spec = "ssd-l,capacity=4GiB";
    let (freed_merges, freed_ms) = after_refill(spec);
    let (kept_merges, kept_ms) = after_refill(&format!("{spec},ftl.erase_dead_logs=off"));
    println!(
        "ssd-l 2,000 random 4 KiB writes over 1 GiB after a re-fill: {freed_ms:.2} ms ({freed_merges} merges) with the dead log erased, {kept_ms:.2} ms ({kept_merges} merges) with it kept"
    );
    assert_eq!(freed_merges, 0);
    assert!(kept_merges > 0, "{kept_merges}");
    assert!(freed_ms * 2.0 < kept_ms, "{freed_ms} ms vs {kept_ms} ms");
}

/// Section 5.3: SSD-L holds sequential writes in "the 4KB registers of the
/// 32 planes", and "When the registers are full, a page program confirm
/// command is issued to initiate the programming process and data can be
/// written into flash memory in parallel, which results in the observed high
/// spikes" (`cache.program_when_full`): every 32nd buffered write fills the
/// registers, and the write after it waits for the 800 us program (Table 1)
/// before its page can cross into a register. Figure 4 shows, besides the
/// map flush's 1.4-1.5 ms spike every 64 requests, "three spikes of around
/// 1ms, 700 us, and 300 us periodically appear in between". Without the
/// mechanism each page programs as soon as it is in, and the 32 dies keep up
/// with the writes: only the map flush stands out.
#[test]
fn ssd_l_programs_its_registers_when_all_are_full() {
    let writes = 4096u64;
    let seq4k = |on: bool| {
        let mut d = dev(&format!("ssd-l,capacity=4GiB,cache.program_when_full={on}"));
        let c = run(
            &mut d,
            sequential(64 * MIB, 4 * KIB, writes, Mode::Write),
            1,
        );
        // a write that waited for a program: above 700 us, below the map
        // flush's 1.4 ms
        let program_waits = c
            .iter()
            .filter(|c| (700_000..1_300_000).contains(&c.latency_ns()))
            .count();
        let programs = d.accounting().register_programs_when_full;
        (
            program_waits as f64 / c.len() as f64,
            within(&c, 140, 160),
            mean_latency_us(&c),
            programs,
        )
    };
    let (on_waits, on_within, on_mean, on_programs) = seq4k(true);
    let (off_waits, off_within, off_mean, off_programs) = seq4k(false);
    println!(
        "ssd-l sequential 4 KiB writes: 700 us-1.3 ms {on_waits:.3} / {off_waits:.3}, within 140-160 us {on_within:.3} / {off_within:.3}, mean {on_mean:.0} / {off_mean:.0} us, register programs {on_programs} / {off_programs} (registers programmed when full / as each page is in)"
    );
    // the first write follows no earlier one and is written directly: the
    // other 4095 fill the 32 registers 127 times
    assert_eq!(on_programs, (writes - 1) / 32);
    assert_eq!(off_programs, 0);
    // a write waits for a program at least every 64 writes (where one
    // coincides with the map flush its wait hides in the flush's), never
    // without the mechanism
    assert!(on_waits >= 0.9 / 64.0, "{on_waits}");
    assert!(off_waits < 0.1 / 64.0, "{off_waits}");
    assert!(on_within < off_within, "{on_within} vs {off_within}");
    assert!(on_mean > off_mean, "{on_mean} vs {off_mean}");
}

/// Section 5.7: in a log-block FTL "each page in the log block has to be
/// merged with the other valid pages in the same mapping unit": a unit owes a
/// merge for its valid pages in the random log, nothing else. Once a unit's
/// log pages are all superseded (here trimmed; a sequential rewrite whose log
/// is still open does the same), its entry in the association table
/// (`ftl.log_units`) is stale: a random write to a new unit frees it without a
/// merge. (The FAST FTL used to give each stale entry it evicted a full merge
/// of a 16 MiB unit, about 110 ms.)
#[test]
fn ssd_l_stale_log_associations_free_without_merges() {
    const UNIT: u64 = 16 * MIB;
    let mut d = dev("ssd-l,capacity=4GiB");
    // one random-log page in each of 128 units: the association table is full
    let page1 = |u: u64, mode: Mode| (u * UNIT + 4 * KIB, 4 * KIB as u32, mode);
    run(&mut d, (0..128).map(|u| page1(u, Mode::Write)), 1);
    // their log pages trimmed: nothing of those units is left in the log
    run(&mut d, (0..128).map(|u| page1(u, Mode::Trim)), 1);
    d.reset_stats();
    let c = run(&mut d, (128..192).map(|u| page1(u, Mode::Write)), 1);
    let merges = d.accounting().merges_full;
    println!(
        "ssd-l 64 random writes to new units after 128 associated units were trimmed: {merges} full merges, mean {:.2} ms",
        mean_latency_us(&c) / 1000.0
    );
    assert_eq!(merges, 0);
}
