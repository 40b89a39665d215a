//! Profiles modelled on the papers' devices show the behaviour their
//! documentation claims, measured through the Device API without the suites.
//! Every published number and every band a test holds it to come from the
//! scoreboard's data, never restated here: the number from
//! crates/suite/validate/published.toml (by id; `role = "test-only"` for the
//! few no suite scores), the band from crates/suite/validate/tolerances.toml
//! (the scoreboard's class where the test holds to it, else a `test-only`
//! class whose reason says why the test measures differently). The other
//! thresholds below compare a profile with itself without a mechanism.
mod common;

use common::*;
use flashlab_device::{Completion, Device, Mode};
use flashlab_sim::{open_device, SimDevice};

fn dev(spec: &str) -> SimDevice {
    open_device(spec, 7, 32).unwrap_or_else(|e| panic!("{spec}: {e}"))
}

fn mean_ms(c: &[Completion]) -> f64 {
    mean_latency_us(c) / 1000.0
}

/// One file of crates/suite/validate/, parsed.
fn validate_file(name: &str) -> toml::Value {
    let path = format!("{}/../suite/validate/{name}", env!("CARGO_MANIFEST_DIR"));
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"));
    toml::from_str(&text).unwrap_or_else(|e| panic!("{path}: {e}"))
}

/// The `[[key]]` entry of validate/`file` whose `field` is `name`.
fn entry(file: &str, key: &str, field: &str, name: &str) -> toml::Value {
    validate_file(file)[key]
        .as_array()
        .unwrap_or_else(|| panic!("{file}: no [[{key}]] entries"))
        .iter()
        .find(|n| n[field].as_str() == Some(name))
        .unwrap_or_else(|| panic!("{file} has no {name}"))
        .clone()
}

/// The published value of one number of crates/suite/validate/published.toml.
fn published(id: &str) -> f64 {
    number(&entry("published.toml", "number", "id", id)["value"])
        .unwrap_or_else(|| panic!("{id} has no value"))
}

/// The latency bounds (ns) of a published fraction's statistic:
/// `fraction-above:1.4ms` gives [1_400_000], `fraction-within:200us..250us`
/// gives [200_000, 250_000].
fn statistic_bounds_ns(id: &str) -> Vec<u64> {
    let e = entry("published.toml", "number", "id", id);
    let stat = e["statistic"].as_str().unwrap_or_default();
    let (_, bounds) = stat
        .split_once(':')
        .unwrap_or_else(|| panic!("{id}: statistic {stat} has no latency bound"));
    bounds
        .split("..")
        .map(|b| {
            let (digits, unit) = b.split_at(b.find(|c: char| c.is_alphabetic()).unwrap_or(b.len()));
            let scale = match unit {
                "ns" => 1.0,
                "us" => 1e3,
                "ms" => 1e6,
                "s" => 1e9,
                _ => panic!("{id}: unit {unit} in {stat}"),
            };
            (digits
                .parse::<f64>()
                .unwrap_or_else(|e| panic!("{id}: {b}: {e}"))
                * scale) as u64
        })
        .collect()
}

/// A tolerance class of crates/suite/validate/tolerances.toml: its kind
/// and band, as `flashlab validate` reads them.
#[derive(Debug)]
struct Class {
    name: String,
    kind: String,
    min: Option<f64>,
    max: Option<f64>,
}

/// A TOML number, written as an integer or a float.
fn number(v: &toml::Value) -> Option<f64> {
    v.as_float().or_else(|| v.as_integer().map(|i| i as f64))
}

fn class(name: &str) -> Class {
    let c = entry("tolerances.toml", "class", "name", name);
    Class {
        name: name.to_string(),
        kind: c["kind"].as_str().expect("a kind").to_string(),
        min: c.get("min").and_then(number),
        max: c.get("max").and_then(number),
    }
}

impl Class {
    /// Whether `simulated` is within this class of `published` (the
    /// verdicts of crates/suite/src/validate.rs `distance`).
    fn admits(&self, published: f64, simulated: f64) -> bool {
        let (lo, hi) = (
            self.min.unwrap_or(f64::NEG_INFINITY),
            self.max.unwrap_or(f64::INFINITY),
        );
        match self.kind.as_str() {
            "ratio" => (lo..=hi).contains(&(simulated / published)),
            "exact" => (simulated - published).abs() < 1e-9,
            "floor" => simulated >= published - 1e-12,
            "absolute" => (simulated - published).abs() <= hi + 1e-12,
            "at-most" => simulated <= hi,
            "at-least" => simulated >= lo,
            k => panic!("tolerances.toml: class {} has unknown kind {k}", self.name),
        }
    }
}

/// Asserts that `simulated` is within tolerance class `class` of the
/// published number `id`: the number from published.toml, the band from
/// tolerances.toml (the scoreboard's class, or a test's own class whose
/// reason says why it differs).
fn assert_within(id: &str, class_name: &str, simulated: f64, what: &str) {
    let paper = published(id);
    let c = class(class_name);
    assert!(
        c.admits(paper, simulated),
        "{what}: {simulated:.3}, paper {paper} ({id}), outside class {class_name} {c:?}"
    );
}

/// The class published.toml names for `id` (the scoreboard's, for a
/// scoreboard row).
fn entry_class(id: &str) -> String {
    let e = entry("published.toml", "number", "id", id);
    assert!(
        e.get("band").is_none(),
        "{id} has its own band: read it here before using its class"
    );
    e["class"].as_str().expect("a class").to_string()
}

/// [`assert_within`] the class published.toml names for `id`.
fn assert_published(id: &str, simulated: f64, what: &str) {
    assert_within(id, &entry_class(id), simulated, what);
}

/// Table 3's SR, RR, SW, RW (ms) of one uFLIP device, from published.toml.
fn table3_basics(profile: &str) -> [f64; 4] {
    ["sr", "rr", "sw", "rw"].map(|c| published(&format!("uflip.t3.{profile}.{c}")))
}

/// Table 3's locality area (bytes; the paper's MB read as MiB) and partitions.
fn table3_area_parts(profile: &str) -> (u64, u64) {
    (
        published(&format!("uflip.t3.{profile}.locality-mb")) as u64 * MIB,
        published(&format!("uflip.t3.{profile}.partitions")) as u64,
    )
}

/// Chen et al. Figure 8(a): SSD-L's random 4 KiB writes take 2.17 ms over a
/// 1 GB range and 120.7 ms over 30 GB. Measured after the start-up phase
/// (4096 writes), over 4096 writes. Tolerance: 1 GiB within class
/// paper-profiles.fig8a-1gb (tolerances.toml) of the published 2.17 ms; 16 GiB at least 7x
/// slower than 1 GiB (a mechanism guard: the paper's 30 GB point is out of
/// this 16 GiB device's reach).
#[test]
fn ssd_l_random_writes_degrade_with_range() {
    let mut res = Vec::new();
    for range in [1u64 << 30, 16 << 30] {
        let mut d = dev("ssd-l,capacity=16GiB");
        let c = run(&mut d, random(21, range, 4 * KIB, 8192, Mode::Write), 1);
        res.push(mean_ms(&c[4096..]));
    }
    println!(
        "ssd-l random 4 KiB writes: 1 GiB range {:.2} ms, 16 GiB range {:.2} ms ({:.1}x)",
        res[0],
        res[1],
        res[1] / res[0]
    );
    assert_within(
        "chen09.fig8a.ssd-l.rand-write-mean-1gb",
        "paper-profiles.fig8a-1gb",
        res[0],
        "1 GiB random writes, mean (ms)",
    );
    // 7x: every random write also waits for its map flush (about 0.9 ms,
    // ftl.sync.flush_non_sequential), which both ranges pay alike
    assert!(
        res[1] > 7.0 * res[0],
        "16 GiB {} ms vs 1 GiB {} ms",
        res[1],
        res[0]
    );
}

/// Chen et al. Figure 4: sequential 4 KiB writes on SSD-L mostly take 140-160 us,
/// with a spike of about 1.4-1.5 ms every 64 requests; the average is 209 us.
/// Tolerance: average within the scoreboard's class of 209 us (magnitude:
/// +-25 %); the slowest request of every 64-request window (the published
/// period, a test-only entry) above the paper's next-largest spike (the
/// test-only class paper-profiles.fig4-spike: at least 1 ms) and at the same
/// phase of the window in 9 of 10 windows.
#[test]
fn ssd_l_sequential_write_spikes() {
    let period = published("chen09.fig4.ssd-l.spike-period") as usize;
    let mut d = dev("ssd-l,capacity=4GiB");
    let c = run(&mut d, sequential(64 << 20, 4 * KIB, 4096, Mode::Write), 1);
    let avg = mean_latency_us(&c[period..]);
    let mut phases = Vec::new();
    let mut peaks = Vec::new();
    for w in c[period..].chunks(period) {
        let (i, m) = w
            .iter()
            .enumerate()
            .max_by_key(|(_, c)| c.latency_ns())
            .unwrap();
        phases.push(i);
        peaks.push(m.latency_ns() as f64 / 1000.0);
    }
    let median = {
        let mut l: Vec<f64> = c.iter().map(|c| c.latency_ns() as f64 / 1000.0).collect();
        l.sort_by(|a, b| a.partial_cmp(b).unwrap());
        l[l.len() / 2]
    };
    println!("ssd-l sequential 4 KiB writes: mean {avg:.0} us, median {median:.0} us, spikes {:?} us at phases {:?}", &peaks[..4], &phases[..4]);
    assert_published(
        "chen09.fig4.ssd-l.seq-write-mean",
        avg,
        "sequential 4 KiB writes, mean (us)",
    );
    for p in &peaks {
        assert_published("chen09.fig4.ssd-l.spike-ms", p / 1000.0, "spike (ms)");
    }
    let p0 = phases[0];
    assert!(
        phases.iter().filter(|&&p| p == p0).count() * 10 >= phases.len() * 9,
        "{phases:?}"
    );
}

/// Chen et al. 5.3: on SSD-L "Over 90% of the requests in both workloads
/// [stride and random] have latencies higher than 1.4ms", while sequential
/// writes take 140-160 us. A write that breaks the sequence (5.5: SSD-L
/// detects "a sequential write pattern by recording the previous write
/// request's LBN") completes only once its map update is on flash
/// (`ftl.sync.flush_non_sequential`, 5.7: "SSD-L has to frequently lock the
/// in-memory data structure and flush the metadata"). Without it a stride
/// write is one 800 us program behind its transfer: about 1 ms. Tolerance:
/// the scoreboard's rows for the two sentences (their thresholds and floors
/// from published.toml); without the flush under a tenth above 1.4 ms.
#[test]
fn ssd_l_non_sequential_writes_flush_their_map_update() {
    // "both workloads" of the sentence are random and stride writes
    let above_1_4ms = "chen09.fig3.ssd-l.rand-write-above-1.4ms";
    let threshold_ns = statistic_bounds_ns(above_1_4ms)[0];
    let stride = |flush: bool| {
        let mut d = dev(&format!(
            "ssd-l,capacity=4GiB,ftl.sync.flush_non_sequential={flush}"
        ));
        // every other 4 KiB page of the first 16 MiB: one unit, no merge
        let c = run(
            &mut d,
            sequential(0, 8 * KIB, 1024, Mode::Write).map(|(o, _, m)| (o, 4096, m)),
            1,
        );
        let above = c.iter().filter(|c| c.latency_ns() > threshold_ns).count();
        above as f64 / c.len() as f64
    };
    let (on, off) = (stride(true), stride(false));
    println!(
        "ssd-l stride 4 KiB writes above 1.4 ms: {on:.2} with the map flush, {off:.2} without"
    );
    assert_published(
        above_1_4ms,
        on,
        "stride writes above 1.4 ms, with the flush",
    );
    assert!(off < 0.1, "without the flush: {off}");
    // Figure 6(a), read(n)+write(n+1): a read between two writes does not
    // hide the flush, the write itself waits for it ("nearly all requests
    // have a latency of over 1.3ms", 5.5)
    let mut d = dev("ssd-l,capacity=4GiB");
    let reqs = (0..1000u64).map(|i| {
        let mode = if i % 2 == 0 { Mode::Read } else { Mode::Write };
        (i * 4 * KIB, 4096, mode)
    });
    let c = run(&mut d, reqs, 1);
    // one request at a time: completions come in submission order, writes odd
    let writes: Vec<&Completion> = c.iter().skip(1).step_by(2).collect();
    let above_1_3ms = "chen09.fig6.ssd-l.read-n-write-n+1.writes-above-1.3ms";
    let threshold_ns = statistic_bounds_ns(above_1_3ms)[0];
    let slow = writes
        .iter()
        .filter(|c| c.latency_ns() > threshold_ns)
        .count();
    assert_published(
        above_1_3ms,
        slow as f64 / writes.len() as f64,
        "read(n)+write(n+1): writes above 1.3 ms",
    );
    // sequential writes keep the register buffer's 140-160 us (Figure 3a:
    // 88 % of them, so the median is in the window)
    let window = statistic_bounds_ns("chen09.fig3.ssd-l.seq-write-140-160us");
    let mut d = dev("ssd-l,capacity=4GiB");
    let c = run(&mut d, sequential(0, 4 * KIB, 1024, Mode::Write), 1);
    let mut l: Vec<u64> = c.iter().map(|c| c.latency_ns()).collect();
    l.sort_unstable();
    assert!(
        (window[0]..=window[1]).contains(&l[l.len() / 2]),
        "sequential median {} ns, outside Figure 3a's {window:?} ns",
        l[l.len() / 2]
    );
}

/// Chen et al. Figure 2: "Nearly all reads of the three workloads have
/// latencies of 200-250 us on SSD-L" (section 5.2): sequential, random and
/// stride reads alike. Tolerance: the scoreboard's rows (the window and the
/// floor from published.toml; stride reads a test-only entry).
#[test]
fn ssd_l_reads_uniform() {
    let mut d = dev("ssd-l,capacity=4GiB");
    let size = 4u64 << 30;
    let s = run(&mut d, sequential(0, 4 * KIB, 2000, Mode::Read), 1);
    let r = run(&mut d, random(3, size, 4 * KIB, 2000, Mode::Read), 1);
    let st = run(
        &mut d,
        sequential(0, 8 * KIB, 2000, Mode::Read).map(|(o, _, m)| (o, 4096, m)),
        1,
    );
    println!(
        "ssd-l 4 KiB reads: sequential {:.0} us, random {:.0} us, stride {:.0} us",
        mean_latency_us(&s),
        mean_latency_us(&r),
        mean_latency_us(&st)
    );
    for (id, c) in [
        ("chen09.fig2.ssd-l.seq-read-200-250us", &s),
        ("chen09.fig2.ssd-l.rand-read-200-250us", &r),
        ("chen09.fig2.ssd-l.stride-read-200-250us", &st),
    ] {
        let window = statistic_bounds_ns(id);
        let within = c
            .iter()
            .filter(|c| (window[0]..=window[1]).contains(&c.latency_ns()))
            .count();
        assert_published(id, within as f64 / c.len() as f64, id);
    }
}

// ---------------------------------------------------------------------------
// uFLIP's seven devices (Bouganim et al., CIDR 2009, Table 3). Each test puts
// a 1 GiB version of the profile in uFLIP's random state (random writes of
// random size, 4 KiB..128 KiB, one capacity's worth), then measures 32 KiB
// IOs at QD1 and the locality and partitioning behaviour directly through the
// Device API. Tolerances: SR, RR, SW within the test-only class
// paper-profiles.uflip-table3 of Table 3, RW within paper-profiles.uflip-table3-rw
// (tolerances.toml, with why they are not the scoreboard's magnitude class);
// random writes inside the locality area cost less than half of RW and inside
// twice that area more than half (the suite's definition of the area,
// table3::locality_area); partitioned sequential writes over `partitions`
// partitions cost less than half of RW and over twice that many more than half.

const K32: u64 = 32 * KIB;

struct Uflip {
    sr: f64,
    rr: f64,
    sw: f64,
    rw: f64,
    area_rw: f64,
    double_area_rw: f64,
    parts_sw: f64,
    double_parts_sw: f64,
}

/// Partitioned sequential writes: `p` partitions of `part` bytes from `base`, round robin.
fn partitioned(base: u64, p: u64, part: u64, count: u64) -> impl Iterator<Item = (u64, u32, Mode)> {
    (0..count).map(move |i| {
        (
            base + (i % p) * part + (i / p) * K32 % part,
            K32 as u32,
            Mode::Write,
        )
    })
}

/// `area` = the locality area the profile claims; `parts` = its partition count.
fn uflip_measure(spec: &str, area: u64, parts: u64) -> Uflip {
    let mut d = dev(spec);
    random_state(&mut d, 11);
    let size = d.info().size_bytes;
    let mean = |c: &[Completion], skip: usize| mean_ms(&c[skip..]);
    let sr = mean(&run(&mut d, sequential(0, K32, 512, Mode::Read), 1), 0);
    quiet(&mut d);
    let rr = mean(&run(&mut d, random(5, size, K32, 512, Mode::Read), 1), 0);
    quiet(&mut d);
    let rw = mean(&run(&mut d, random(6, size, K32, 768, Mode::Write), 1), 256);
    quiet(&mut d);
    let sw = mean(
        &run(&mut d, sequential(size / 2, K32, 768, Mode::Write), 1),
        256,
    );
    quiet(&mut d);
    let area_rw = mean(
        &run(&mut d, random(7, area, K32, 1536, Mode::Write), 1),
        512,
    );
    quiet(&mut d);
    let double_area_rw = mean(
        &run(&mut d, random(8, 2 * area, K32, 768, Mode::Write), 1),
        256,
    );
    quiet(&mut d);
    let part = 16 * MIB;
    let parts_sw = mean(
        &run(&mut d, partitioned(size / 4, parts, part, 1024), 1),
        256,
    );
    quiet(&mut d);
    let double_parts_sw = mean(
        &run(
            &mut d,
            partitioned(size / 4 + 32 * part, 2 * parts, part, 1024),
            1,
        ),
        256,
    );
    Uflip {
        sr,
        rr,
        sw,
        rw,
        area_rw,
        double_area_rw,
        parts_sw,
        double_parts_sw,
    }
}

/// Checks one profile against its Table 3 row (SR, RR, SW, RW, ms, from
/// published.toml). `area`: the locality area, None when Table 3 says "No"
/// (then the caller checks that none exists).
fn check_table3(name: &str, claimed_area: Option<u64>, parts: u64) -> Uflip {
    let paper = table3_basics(name);
    let area = claimed_area.unwrap_or(8 * MIB);
    let u = uflip_measure(&format!("{name},capacity=1GiB"), area, parts);
    println!(
        "{name}: SR {:.2} RR {:.2} SW {:.2} RW {:.1} ms (paper {paper:?}); RW in {} MiB {:.2} ms, in {} MiB {:.2} ms; SW over {parts} partitions {:.2} ms, over {} {:.2} ms",
        u.sr, u.rr, u.sw, u.rw, area >> 20, u.area_rw, (2 * area) >> 20, u.double_area_rw, u.parts_sw, 2 * parts, u.double_parts_sw
    );
    for (column, got, class) in [
        ("sr", u.sr, "paper-profiles.uflip-table3"),
        ("rr", u.rr, "paper-profiles.uflip-table3"),
        ("sw", u.sw, "paper-profiles.uflip-table3"),
        ("rw", u.rw, "paper-profiles.uflip-table3-rw"),
    ] {
        assert_within(
            &format!("uflip.t3.{name}.{column}"),
            class,
            got,
            &format!("{name} {column} (ms)"),
        );
    }
    assert!(
        claimed_area.is_none() || u.area_rw < 0.5 * u.rw,
        "{name}: RW inside the {} MiB locality area {:.2} ms, not below half of RW {:.2}",
        area >> 20,
        u.area_rw,
        u.rw
    );
    assert!(
        claimed_area.is_none() || u.double_area_rw > 0.5 * u.rw,
        "{name}: RW inside twice the area {:.2} ms, not above half of RW {:.2}",
        u.double_area_rw,
        u.rw
    );
    assert!(
        u.parts_sw < 0.5 * u.rw,
        "{name}: SW over {parts} partitions {:.2} ms, not below half of RW {:.2}",
        u.parts_sw,
        u.rw
    );
    assert!(
        u.double_parts_sw > 0.5 * u.rw,
        "{name}: SW over {} partitions {:.2} ms, not above half of RW {:.2}",
        2 * parts,
        u.double_parts_sw,
        u.rw
    );
    u
}

#[test]
fn memoright_table3() {
    let (area, parts) = table3_area_parts("memoright");
    check_table3("memoright", Some(area), parts);
}

#[test]
fn mtron_table3() {
    let (area, parts) = table3_area_parts("mtron");
    check_table3("mtron", Some(area), parts);
}

#[test]
fn samsung_table3() {
    let (area, parts) = table3_area_parts("samsung");
    check_table3("samsung", Some(area), parts);
}

#[test]
fn transcend_module_table3() {
    let (area, parts) = table3_area_parts("transcend-module");
    check_table3("transcend-module", Some(area), parts);
}

#[test]
fn transcend_mlc_table3() {
    let (area, parts) = table3_area_parts("transcend-mlc");
    check_table3("transcend-mlc", Some(area), parts);
}

#[test]
fn kingston_dthx_table3() {
    let (area, parts) = table3_area_parts("kingston-dthx");
    check_table3("kingston-dthx", Some(area), parts);
}

/// Table 3 gives the DTI no locality area ("some low end USB devices (e.g.,
/// Kingston DTI) do not show any benefit by focusing random IOs in a reduced
/// area", section 5.2): by Table 3's definition (an area where random writes
/// cost at most half of RW) none of the sizes may be one. One IO rewritten in
/// place merges on every write (a log holds one copy per page); over a few
/// IOs rewrites come every few writes; over more than one window of the
/// positional log (`ftl.log_window`) random writes leave the window on
/// almost every write. And Table 3's "4 (x5)": with two open sequential logs
/// (`ftl.seq_log_limit`) two of four partitioned streams are logged like
/// random writes, so four partitions cost several times one stream
/// (the scoreboard's relative class around Table 3's x5).
#[test]
fn kingston_dti_table3() {
    let parts = published("uflip.t3.kingston-dti.partitions") as u64;
    let u = check_table3("kingston-dti", None, parts);
    assert_published(
        "uflip.t3.kingston-dti.partitions-relative",
        u.parts_sw / u.sw,
        &format!("kingston-dti: SW over {parts} partitions / SW"),
    );
    let mut d = dev("kingston-dti,capacity=1GiB");
    random_state(&mut d, 11);
    let size = d.info().size_bytes;
    let rw = mean_ms(&run(&mut d, random(6, size, K32, 256, Mode::Write), 1)[64..]);
    for (seed, area) in [
        (7, K32),
        (8, 4 * K32),
        (9, 8 * K32),
        (10, MIB),
        (11, 8 * MIB),
    ] {
        quiet(&mut d);
        let c = run(&mut d, random(seed, area, K32, 256, Mode::Write), 1);
        let area_rw = mean_ms(&c[64..]);
        println!(
            "kingston-dti: RW over {} KiB {area_rw:.1} ms ({:.2}x RW {rw:.1} ms)",
            area >> 10,
            area_rw / rw
        );
        assert!(
            area_rw > 0.5 * rw,
            "kingston-dti: random writes over {} KiB {area_rw:.1} ms, not above half of RW {rw:.1} ms: a locality area",
            area >> 10
        );
    }
}

/// uFLIP Table 3 "Pause": on Memoright and Mtron random writes separated by a
/// pause about as long as a random write cost what sequential writes cost
/// (the cache drains in the pause); without a cache (Samsung) a pause changes
/// nothing. Tolerance: with a pause of 2x the published RW cost, RW within
/// 1.3x SW; Samsung's RW with such a pause still above 10x SW.
#[test]
fn pause_lets_cached_devices_absorb_random_writes() {
    for (name, expect_absorbed) in [("memoright", true), ("mtron", true), ("samsung", false)] {
        // Twice the published RW cost (Table 3, from published.toml).
        let pause_ms = 2.0 * published(&format!("uflip.t3.{name}.rw"));
        let mut d = dev(&format!("{name},capacity=1GiB"));
        random_state(&mut d, 12);
        let size = d.info().size_bytes;
        let sw = mean_ms(&run(&mut d, sequential(size / 2, K32, 512, Mode::Write), 1)[128..]);
        quiet(&mut d);
        let c = run_with(
            &mut d,
            random(9, size, K32, 256, Mode::Write),
            1,
            (pause_ms * 1e6) as u64,
        );
        let rw = mean_ms(&c[64..]);
        println!("{name}: SW {sw:.2} ms, RW with a {pause_ms} ms pause {rw:.2} ms");
        if expect_absorbed {
            assert!(rw < 1.3 * sw, "{name}: RW with pause {rw} ms vs SW {sw} ms");
        } else {
            assert!(
                rw > 10.0 * sw,
                "{name}: RW with pause {rw} ms vs SW {sw} ms"
            );
        }
    }
}

// ---------------------------------------------------------------------------
// Wang et al.'s SSDs (IEICE 2011, section 2.2): random 4 KiB IO on a
// sequentially filled 8 GiB device, 1 and 30 outstanding IOs, and a 50/50
// random read/write mix. Tolerances (tolerances.toml): the mix "drastically
// degraded" against reads = paper-profiles.wang11-drastically (test-only
// entries *.mix-over-read); "no improvement" with 30 outstanding IOs = the
// scoreboard's wang11.no-gain; "improved clearly" = paper-profiles.wang11-scales,
// stricter than the scoreboard's wang11.gain.

struct Wang {
    read: f64,
    write: f64,
    mix: f64,
    read30: f64,
    write30: f64,
}

fn iops(c: &[Completion]) -> f64 {
    let start = c.iter().map(|c| c.submit_ns).min().unwrap();
    let end = c.iter().map(|c| c.complete_ns).max().unwrap();
    c.len() as f64 / ((end - start) as f64 / 1e9)
}

fn wang_measure(name: &str) -> Wang {
    let mut d = dev(&format!("{name},capacity=8GiB"));
    seq_fill(&mut d, 256 * KIB);
    quiet(&mut d);
    let size = d.info().size_bytes;
    let k4 = 4 * KIB;
    let read = iops(&run(&mut d, random(1, size, k4, 2048, Mode::Read), 1));
    let write = iops(&run(&mut d, random(2, size, k4, 2048, Mode::Write), 1)[512..]);
    let mut rng = Rng(3);
    let mix: Vec<_> = (0..2048)
        .map(|i| {
            (
                rng.below(size / k4) * k4,
                k4 as u32,
                if i % 2 == 0 { Mode::Read } else { Mode::Write },
            )
        })
        .collect();
    let mix = iops(&run(&mut d, mix, 1)[512..]);
    quiet(&mut d);
    let read30 = iops(&run(&mut d, random(4, size, k4, 4096, Mode::Read), 30));
    let write30 = iops(&run(&mut d, random(5, size, k4, 2048, Mode::Write), 30)[512..]);
    println!("{name}: 4 KiB random IOPS read {read:.0}, write {write:.0}, 50/50 mix {mix:.0}; 30 outstanding: read {read30:.0} ({:.1}x), write {write30:.0} ({:.1}x)", read30 / read, write30 / write);
    Wang {
        read,
        write,
        mix,
        read30,
        write30,
    }
}

#[test]
fn mtron_pro7500_bathtub_and_reads_bounded_by_the_controller() {
    let w = wang_measure("mtron-pro7500");
    assert_published(
        "wang11.fig2.mtron-pro7500.mix-over-read",
        w.mix / w.read,
        "mix / read IOPS",
    );
    // 32 NCQ commands, one controller core (issue 30 item 10): 30 outstanding
    // reads gain until the controller, the link or the dies bind. Wang et
    // al.'s Figure 3 shows no gain (the scoreboard row fails: docs/profiles.md,
    // KNOWN_GAPS), so the 1.5x here guards the mechanism, not a published band.
    let overhead_ns = flashlab_sim::open_device("mtron-pro7500", 7, 1)
        .unwrap()
        .config()
        .host
        .command_overhead_ns;
    assert!(
        w.read30 > 1.5 * w.read && w.read30 <= 1.001e9 / overhead_ns as f64,
        "reads bounded by the controller: {} vs {}",
        w.read30,
        w.read
    );
    assert_published(
        "wang11.fig3.mtron-pro7500.rand-write-qd30-over-qd1",
        w.write30 / w.write,
        "writes must not scale: 30 / 1 outstanding",
    );
    assert_within(
        "wang11.table2.mtron-pro7500.rand-write-iops",
        "paper-profiles.wang11-datasheet-iops",
        w.write,
        "random write IOPS",
    );
}

#[test]
fn ocz_vertex_ex_bathtub_reads_scale() {
    let w = wang_measure("ocz-vertex-ex");
    assert_published(
        "wang11.fig2.ocz-vertex-ex.mix-over-read",
        w.mix / w.read,
        "mix / read IOPS",
    );
    assert_within(
        "wang11.fig3.ocz-vertex-ex.rand-read-qd30-over-qd1",
        "paper-profiles.wang11-scales",
        w.read30 / w.read,
        "reads must scale with NCQ: 30 / 1 outstanding",
    );
    assert_published(
        "wang11.fig3.ocz-vertex-ex.rand-write-qd30-over-qd1",
        w.write30 / w.write,
        "writes must not scale: 30 / 1 outstanding",
    );
}

#[test]
fn intel_x25e_reads_scale_with_30_outstanding() {
    let w = wang_measure("intel-x25e");
    assert_within(
        "wang11.fig3.intel-x25e.rand-read-qd30-over-qd1",
        "paper-profiles.wang11-scales",
        w.read30 / w.read,
        "reads must scale with NCQ: 30 / 1 outstanding",
    );
    // The exception of Wang et al.'s Figure 2: write and mix throughput
    // clearly better than the hard disk's
    assert_published(
        "wang11.fig2.intel-x25e.write-iops-vs-disk",
        w.write,
        "write IOPS",
    );
    assert_published("wang11.fig2.intel-x25e.mix-iops-vs-disk", w.mix, "mix IOPS");
}

/// `Device::set_write_cache` on the simulator (Chen et al. Figure 5): turning
/// the cache off drains it (the clock reaches the last write-back) and later
/// writes wait for their program; turning it on again absorbs them again.
#[test]
fn write_cache_switch_drains_and_slows_writes() {
    let mut d = dev("ssd-m,capacity=1GiB");
    let on = mean_latency_us(&run(&mut d, sequential(0, 4 * KIB, 1024, Mode::Write), 1));
    let before = d.now_ns();
    d.set_write_cache(false).unwrap();
    assert!(
        d.now_ns() >= before && d.now_ns() >= d.quiesce_at(),
        "the switch drains the cache"
    );
    let off = mean_latency_us(&run(
        &mut d,
        sequential(8 * MIB, 4 * KIB, 1024, Mode::Write),
        1,
    ));
    d.set_write_cache(true).unwrap();
    let again = mean_latency_us(&run(
        &mut d,
        sequential(16 * MIB, 4 * KIB, 1024, Mode::Write),
        1,
    ));
    println!("ssd-m 4 KiB sequential writes: cache on {on:.0} us, off {off:.0} us, on again {again:.0} us");
    assert!(
        off > 5.0 * on && again < 2.0 * on,
        "on {on} off {off} again {again}"
    );
}

// ---------------------------------------------------------------------------
// Mechanisms behind Chen et al.'s and Wang et al.'s numbers (issue 16). Each
// test compares the profile with the same profile without the mechanism, so
// it fails if the mechanism is removed.

/// Chen et al. 5.3: SSD-L buffers sequential writes in its planes' registers
/// (140-160 us each, the bus transfer) and writes anything else directly to
/// flash (over 1 ms). `cache.sequential_only` and `cache.ack_after_channel`.
#[test]
fn ssd_l_buffers_only_sequential_writes_in_its_registers() {
    let median = |c: &[Completion]| {
        let mut l: Vec<u64> = c.iter().map(|c| c.latency_ns()).collect();
        l.sort_unstable();
        l[l.len() / 2] as f64 / 1000.0
    };
    let measure = |spec: &str| {
        let mut d = dev(spec);
        let s = median(&run(
            &mut d,
            sequential(64 << 20, 4 * KIB, 1024, Mode::Write),
            1,
        ));
        let r = median(&run(
            &mut d,
            random(9, 1 << 30, 4 * KIB, 1024, Mode::Write),
            1,
        ));
        (s, r)
    };
    let (seq, rnd) = measure("ssd-l,capacity=4GiB");
    // the register buffer alone: without the map flush a non-sequential write also waits for
    let (seq_all, rnd_all) = measure(
        "ssd-l,capacity=4GiB,cache.sequential_only=false,ftl.sync.flush_non_sequential=false",
    );
    let (seq_dram, _) = measure("ssd-l,capacity=4GiB,cache.ack_after_channel=false");
    println!("ssd-l 4 KiB write medians: sequential {seq:.0} us, random {rnd:.0} us; buffering every write: {seq_all:.0} / {rnd_all:.0} us; acknowledged in the controller: {seq_dram:.0} us");
    let window = statistic_bounds_ns("chen09.fig3.ssd-l.seq-write-140-160us");
    assert!(
        (window[0] as f64 / 1e3..=window[1] as f64 / 1e3).contains(&seq),
        "sequential median {seq} us, outside Figure 3a's {window:?} ns"
    );
    assert!(
        rnd > 900.0,
        "random {rnd} us: must be programmed before completing"
    );
    assert!(
        rnd_all < 300.0,
        "without sequential_only random writes are buffered: {rnd_all}"
    );
    assert!(seq_dram < 100.0, "without ack_after_channel: {seq_dram}");
}

/// Chen et al. Figure 1: SSD-H reads 256 KiB at over 240 MB/s, more than
/// its flash channels and the SATA link give one after the other:
/// `host.cut_through` streams a read to the host as its pages arrive.
/// Tolerance: the test-only class paper-profiles.ssd-h-qd1-reads around
/// the published 240 MB/s (one outstanding random read, not Figure 1's 32
/// sequential jobs); store-and-forward under 0.8x of it.
#[test]
fn ssd_h_large_reads_stream_through() {
    let bw = |spec: &str| {
        let mut d = dev(spec);
        seq_fill(&mut d, 256 * KIB);
        let c = run(&mut d, random(4, 1 << 30, 256 * KIB, 256, Mode::Read), 1);
        bandwidth_mb_s(&c, 256 * KIB)
    };
    let on = bw("ssd-h,capacity=2GiB");
    let off = bw("ssd-h,capacity=2GiB,host.cut_through=false");
    println!("ssd-h 256 KiB reads: {on:.0} MB/s cut-through, {off:.0} MB/s store-and-forward");
    assert_within(
        "chen09.fig1.ssd-h.seq-read-bw",
        "paper-profiles.ssd-h-qd1-reads",
        on,
        "256 KiB random reads, cut-through (MB/s)",
    );
    assert!(off < 0.8 * on, "store-and-forward {off} vs {on}");
}

/// Wang et al. Figure 1(c): the Intel X25-E's sequential write throughput
/// falls above 32 KiB requests (`cache.bypass_above`), yet reaches its rated
/// 170 MB/s at 1 MiB. Tolerance: the scoreboard's rows (wang11.decrease for
/// 256 KiB against 32 KiB, magnitude at 1 MiB); without the bypass 256 KiB
/// writes are faster than 32 KiB ones.
#[test]
fn intel_x25e_large_writes_bypass_the_buffer() {
    let bw = |spec: &str, io: u64| {
        let mut d = dev(spec);
        let n = (64 << 20) / io;
        bandwidth_mb_s(&run(&mut d, sequential(0, io, n, Mode::Write), 1), io)
    };
    let spec = "intel-x25e,capacity=4GiB";
    let k32 = bw(spec, 32 * KIB);
    let k256 = bw(spec, 256 * KIB);
    let m1 = bw(spec, 1024 * KIB);
    let k256_cached = bw("intel-x25e,capacity=4GiB,cache.bypass_above=0", 256 * KIB);
    println!("intel-x25e sequential writes: 32 KiB {k32:.0} MB/s, 256 KiB {k256:.0} MB/s, 1 MiB {m1:.0} MB/s; 256 KiB all cached {k256_cached:.0} MB/s");
    assert_published(
        "wang11.fig1.intel-x25e.seq-write-256k-over-best-32k",
        k256 / k32,
        "256 KiB / 32 KiB sequential writes",
    );
    assert!(
        k256_cached > k32,
        "cached 256 KiB {k256_cached} vs 32 KiB {k32}"
    );
    assert_published(
        "wang11.fig1.intel-x25e.seq-write-bw-1mib",
        m1,
        "1 MiB sequential writes (MB/s)",
    );
}

/// Wang et al. Figure 2: 4 KiB random reads run as fast as sequential ones
/// on the three drives (no read-ahead gain). Tolerance: the scoreboard's
/// class for "kept untouched" (equal), on the IOPS ratio.
#[test]
fn wang_drives_read_random_as_fast_as_sequential() {
    for name in ["intel-x25e", "mtron-pro7500", "ocz-vertex-ex"] {
        let mut d = dev(&format!("{name},capacity=2GiB"));
        seq_fill(&mut d, 256 * KIB);
        let s = mean_latency_us(&run(&mut d, sequential(0, 4 * KIB, 2048, Mode::Read), 1));
        let r = mean_latency_us(&run(
            &mut d,
            random(5, 2 << 30, 4 * KIB, 2048, Mode::Read),
            1,
        ));
        println!("{name}: 4 KiB reads sequential {s:.0} us, random {r:.0} us");
        // one outstanding read: IOPS random / sequential = latency s / r
        assert_published(
            &format!("wang11.fig2.{name}.rand-over-seq-read"),
            s / r,
            &format!("{name}: random / sequential read IOPS"),
        );
    }
}

/// Sequential reads after a batch of random writes compared read by read
/// with the same reads before it: how many are slowed (the last read of the
/// last window of 32 over 10 % slower, as the uFLIP suite counts them), and
/// the slowed reads' mean relative to before.
fn lingering_reads(spec: &str) -> (usize, f64) {
    let mut d = dev(spec);
    random_state(&mut d, 13);
    let size = d.info().size_bytes;
    let before = run(&mut d, sequential(0, K32, 4096, Mode::Read), 1);
    run(&mut d, random(9, size, K32, 256, Mode::Write), 1);
    let after = run(&mut d, sequential(0, K32, 4096, Mode::Read), 1);
    let lat = |c: &[Completion]| c.iter().map(|c| c.latency_ns()).collect::<Vec<_>>();
    let (b, a) = (lat(&before), lat(&after));
    let w = 32;
    let slower = |x: u64, y: u64| x as f64 > 1.1 * y as f64;
    let last = (0..=b.len() - w)
        .rev()
        .find(|&i| slower(a[i..i + w].iter().sum(), b[i..i + w].iter().sum()));
    let Some(last) = last else { return (0, 1.0) };
    let n = (last..last + w)
        .rev()
        .find(|&k| slower(a[k], b[k]))
        .unwrap()
        + 1;
    let rel = a[..n].iter().sum::<u64>() as f64 / b[..n].iter().sum::<u64>() as f64;
    (n, rel)
}

/// uFLIP section 5.1, Figure 5 (pause determination: sequential reads, a
/// batch of random writes, sequential reads again): on the Mtron "the
/// lingering effect of the random writes lasts for about 3,000 sequential
/// reads, corresponding to about 2.5 seconds"; "for all the other devices
/// ... there was no lingering impact". Mechanism: the write-back cache holds
/// the batch's last writes, whose merges are still queued on the dies when
/// the reads come; reads go ahead of queued work but wait for the operation
/// in progress on their dies, and each read pushes the queued merges back,
/// so write-back and reads compete until the cache has drained. Without a
/// cache (Samsung, Transcend module) the merges end with the writes.
/// Tolerance: Mtron's slowed reads within the test-only class
/// paper-profiles.uflip-lingering of the published 3,000, at least 1.15x
/// slower on average; Samsung and the Transcend module none.
#[test]
fn mtron_random_writes_linger_on_later_reads() {
    let (n, rel) = lingering_reads("mtron,capacity=1GiB");
    println!("mtron: {n} sequential reads slowed after 256 random writes, {rel:.2}x");
    assert_within(
        "uflip.fig5.mtron.lingering-reads",
        "paper-profiles.uflip-lingering",
        n as f64,
        "mtron: lingering reads",
    );
    assert!(rel >= 1.15, "mtron: slowed reads only {rel:.2}x");
    for name in ["samsung", "transcend-module"] {
        let (n, rel) = lingering_reads(&format!("{name},capacity=1GiB"));
        println!("{name}: {n} sequential reads slowed, {rel:.2}x");
        assert_eq!(n, 0, "{name}: {n} lingering reads, the paper saw none");
    }
}

/// uFLIP section 5.1: the Memoright reclaims asynchronously too (Table 3's
/// pause column, a start-up phase of 30 writes), yet "for all the other
/// devices, including the other SSDs, there was no lingering impact from the
/// random writes". Mechanism: its reads suspend the program (or copy-back
/// page copy) and erase in progress (`sched.suspend = "program-erase"`), so
/// the queued merges do not slow them. Tolerance: no slowed reads; without
/// the suspend the same run slows more than 100.
#[test]
fn memoright_reads_do_not_linger_after_random_writes() {
    let (n, rel) = lingering_reads("memoright,capacity=1GiB");
    let (n_no_suspend, rel_no_suspend) =
        lingering_reads("memoright,capacity=1GiB,sched.suspend=off");
    println!(
        "memoright: {n} sequential reads slowed ({rel:.2}x); without suspend {n_no_suspend} ({rel_no_suspend:.2}x)"
    );
    assert_eq!(n, 0, "memoright: {n} lingering reads, the paper saw none");
    assert!(
        n_no_suspend > 100,
        "without suspend only {n_no_suspend}: the test shows nothing"
    );
}

/// Chen et al. Figure 9: after the striker SSD-H still writes 40.3 MB/s
/// sequentially but only 11.4 MB/s at random. Mechanism (section 5.7, metadata
/// synchronisation, which "the manufacturer confirmed" for SSD-H's spikes):
/// every host write dirties the map page covering it and 300 dirty map pages
/// are flushed while the map is locked (`ftl.sync.dirty_limit`). Random 4 KiB
/// writes over the whole 4 GiB device (1024 map pages) dirty a new map page
/// almost every write; over section 5.1's first 1024 MB (256 map pages) they
/// never fill the buffer, and sequential writes dirty one per 1024 writes.
/// Measured over the second half of 8192 writes at queue depth 1 (past the
/// 8 MiB cache's absorption). Tolerance: whole-device random writes at most
/// half the bandwidth of random writes over 1 GiB, which run at the cached
/// rate as sequential ones do (within 10 %); only the former flush the map
/// repeatedly.
#[test]
fn ssd_h_random_writes_over_the_device_wait_for_map_flushes() {
    let measure = |reqs: Vec<(u64, u32, Mode)>| {
        let mut d = dev("ssd-h,prefill=on");
        let c = run(&mut d, reqs, 1);
        (
            bandwidth_mb_s(&c[4096..], 4 * KIB),
            d.accounting().map_syncs,
        )
    };
    let device = 4u64 << 30;
    let (whole, whole_syncs) = measure(random(9, device, 4 * KIB, 8192, Mode::Write).collect());
    let (gib, gib_syncs) = measure(random(9, 1 << 30, 4 * KIB, 8192, Mode::Write).collect());
    let (seq, seq_syncs) = measure(sequential(0, 4 * KIB, 8192, Mode::Write).collect());
    println!(
        "ssd-h 4 KiB writes: random over 4 GiB {whole:.1} MB/s ({whole_syncs} map flushes), over 1 GiB {gib:.1} MB/s ({gib_syncs}), sequential {seq:.1} MB/s ({seq_syncs})"
    );
    assert!(
        whole < 0.5 * gib,
        "whole device {whole} MB/s vs 1 GiB {gib} MB/s"
    );
    assert!(
        (gib / seq - 1.0).abs() < 0.1,
        "1 GiB random {gib} vs sequential {seq} MB/s"
    );
    // The fill leaves its last, partly dirty buffer (1024 map pages written
    // in order, flushed 300 at a time): one flush at most for the others.
    assert!(whole_syncs > 10, "whole device: {whole_syncs} map flushes");
    assert!(
        gib_syncs <= 1 && seq_syncs <= 1,
        "1 GiB: {gib_syncs}, sequential: {seq_syncs} map flushes"
    );
}

/// uFLIP 5.2 (Table 3's Large Incr): "for high end SSDs and for the
/// Transcend IDE Module, the cost is twice or four times the cost of a
/// random writes" at gaps of 1 to 8 MB. The Mtron's two die groups serve
/// contiguous halves of the address space (`ftl.unit_groups =
/// "contiguous"`): writes 2 MiB apart stay in one group and queue a merge
/// each on its dies, while random writes overlap their merges over both
/// groups behind the cache. With the default free placement the same writes
/// cost less than random writes. Both measured after the cache's start-up
/// (the first 128 writes of each run left out). Tolerance: contiguous above
/// RW and at least 1.1x free placement; free below RW.
#[test]
fn mtron_large_increments_cost_more_than_random_writes() {
    let measure = |groups: &str| {
        let mut d = dev(&format!("mtron,capacity=1GiB,ftl.unit_groups={groups}"));
        random_state(&mut d, 11);
        let size = d.info().size_bytes;
        let rw = mean_ms(&run(&mut d, random(6, size, K32, 512, Mode::Write), 1)[128..]);
        quiet(&mut d);
        // Incr 64 at 32 KiB: one write every 2 MiB, 384 writes over 768 MiB
        let incr = mean_ms(
            &run(
                &mut d,
                (0..384).map(|i| (i * 64 * K32, K32 as u32, Mode::Write)),
                1,
            )[128..],
        );
        (rw, incr)
    };
    let (rw, incr) = measure("contiguous");
    let (rw_free, incr_free) = measure("free");
    println!(
        "mtron Incr 64 vs RW: contiguous groups {incr:.2} / {rw:.2} ms (x{:.2}), free placement {incr_free:.2} / {rw_free:.2} ms (x{:.2})",
        incr / rw,
        incr_free / rw_free
    );
    // measured: x1.07 contiguous, x0.88 free (the paper's x2 is out of
    // reach for the reasons in KNOWN_GAPS)
    assert!(incr > rw, "{incr} vs {rw}");
    assert!(incr_free < rw_free, "{incr_free} vs {rw_free}");
    assert!(incr > 1.1 * incr_free, "{incr} vs {incr_free}");
}

/// uFLIP Table 3: on the Memoright the in-place pattern (Incr = 0, the same
/// 32 KiB rewritten) costs what a sequential write does ("="), and 5.2
/// attributes its cheap small writes to "caching" (Figure 6). Mechanism: the
/// write-back cache updates a page still waiting in it
/// (`cache.absorb_rewrites`), so back-to-back rewrites of one block are
/// programmed about once per write-back, not once each. Without it every
/// rewrite is programmed into the unit's log, which fills with copies of one
/// block and is merged every 32 writes: about 1.5 flash programs per page
/// rewritten against 0.9. Measured after the random state,
/// 1024 rewrites (all counted, as the suite's order runs count them) against
/// 768 sequential writes (the first 256 left out). Tolerance: the
/// scoreboard's class for Table 3's "=" (equal) with the mechanism, and
/// under 0.75x the flash programs of the same run without it, which costs
/// more.
#[test]
fn memoright_cache_absorbs_in_place_rewrites() {
    let measure = |spec: &str| {
        let mut d = dev(spec);
        random_state(&mut d, 11);
        let size = d.info().size_bytes;
        let sw = mean_ms(&run(&mut d, sequential(size / 2, K32, 768, Mode::Write), 1)[256..]);
        quiet(&mut d);
        let before = d.accounting().clone();
        let in_place = mean_ms(&run(
            &mut d,
            (0..1024).map(|_| (size / 4, K32 as u32, Mode::Write)),
            1,
        ));
        quiet(&mut d);
        let after = d.accounting();
        let programs: u64 =
            after.flash_programs.iter().sum::<u64>() - before.flash_programs.iter().sum::<u64>();
        // flash programs per page the host wrote (8 per 32 KiB rewrite)
        (in_place / sw, programs as f64 / (1024.0 * 8.0))
    };
    let (absorbed, absorbed_programs) = measure("memoright,capacity=1GiB");
    let (programmed, programmed_programs) =
        measure("memoright,capacity=1GiB,cache.absorb_rewrites=false");
    println!(
        "memoright in-place / SW: x{absorbed:.2} absorbing rewrites ({absorbed_programs:.3} programs per page written), x{programmed:.2} programming each ({programmed_programs:.2})"
    );
    assert_published("uflip.t3.memoright.in-place", absorbed, "in-place / SW");
    // measured: 0.88 against 1.50 programs (flash and merge copies) per page
    assert!(
        absorbed_programs < 0.75 * programmed_programs,
        "{absorbed_programs:.2} flash programs per page rewritten: the cache does not absorb"
    );
    assert!(
        programmed > absorbed,
        "without absorbing rewrites x{programmed:.2}, {programmed_programs:.2} programs per page: the test shows nothing"
    );
}

/// uFLIP 5.2 on Table 3's in-place column: "ranging from time savings of
/// about 40% for the Samsung SSD", a write-back-free drive (no pause effect).
/// Mechanism (`cache.hold_last_write`): the controller holds the last write
/// in its buffer until a write elsewhere displaces it, and a rewrite of the
/// held block replaces it without a program, so an in-place write costs the
/// command and the transfer only. Measured after the random state: 1024
/// rewrites of one 32 KiB block (all counted) against 768 sequential writes
/// (the first 256 left out). Tolerance: the scoreboard's class for Table 3's
/// x0.6 (relative) with the mechanism; at least SW's cost without it.
#[test]
fn samsung_rewrites_of_the_last_write_are_not_programmed() {
    let measure = |spec: &str| {
        let mut d = dev(spec);
        random_state(&mut d, 11);
        let size = d.info().size_bytes;
        let sw = mean_ms(&run(&mut d, sequential(size / 2, K32, 768, Mode::Write), 1)[256..]);
        quiet(&mut d);
        let in_place = mean_ms(&run(
            &mut d,
            (0..1024).map(|_| (size / 4, K32 as u32, Mode::Write)),
            1,
        ));
        in_place / sw
    };
    let held = measure("samsung,capacity=1GiB");
    let programmed = measure("samsung,capacity=1GiB,cache.hold_last_write=false");
    println!("samsung in-place / SW: x{held:.2} holding the last write, x{programmed:.2} programming each");
    assert_published("uflip.t3.samsung.in-place", held, "in-place / SW");
    assert!(
        programmed >= 1.0,
        "without the buffer x{programmed:.2}: the test shows nothing"
    );
}
