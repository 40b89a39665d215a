//! The paper suites on the simulated profiles show what the papers report for
//! the devices the profiles model (issue 5, "validated on the simulator").
//! Tolerances are stated per test and in docs/profiles.md ("Suite findings on
//! the simulator").

mod common;

use std::path::Path;
use std::process::Command;

use common::scratch;

fn suite(args: &[&str], dir: &Path, summary: &str) -> serde_json::Value {
    let out = Command::new(env!("CARGO_BIN_EXE_flashlab"))
        .args(args)
        .arg("--results")
        .arg(dir)
        .arg("--quiet")
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_str(&std::fs::read_to_string(dir.join(summary)).unwrap()).unwrap()
}

/// uFLIP on a 1 GiB version of `profile`: locality, partitioning, order and
/// pause micro-benchmarks (full parameter ranges), runs capped at 1024 IOs.
fn table3(profile: &str) -> serde_json::Value {
    let dir = scratch();
    let device = format!("sim:{profile},capacity=1GiB");
    let s = suite(
        &[
            "suite",
            "uflip",
            "--device",
            &device,
            "--only",
            "locality,partitioning,order,pause",
            "--max-ios",
            "1024",
            "--calibration-ios",
            "1024",
        ],
        dir.path(),
        "uflip-summary.json",
    );
    let t = s["table3"].clone();
    println!("{profile}: {t}");
    t
}

fn f(t: &serde_json::Value, k: &str) -> f64 {
    t[k].as_f64()
        .unwrap_or_else(|| panic!("{k} missing in {t}"))
}

/// Table 3's row: SR, RR, SW, RW (ms), locality area (MiB, None = "No"),
/// partitions, pause (ms, None = no effect).
struct Row {
    basics: [f64; 4],
    area_mib: Option<u64>,
    partitions: u64,
    pause_ms: Option<f64>,
}

/// Tolerances: SR, RR, SW within 0.6x..1.6x of the paper, RW within
/// 0.5x..1.6x; the locality area and the partition count exactly the
/// paper's (uFLIP's MB read as MiB); the pause column, where the paper has
/// one, at most the next power-of-two step of the pause series above the
/// paper's value (the series is 0.1 ms x 2^k: 5 ms -> 6.4, 9 ms -> 12.8),
/// and absent where the paper has none.
fn check(profile: &str, row: Row) {
    let t = table3(profile);
    for (k, want, lo, hi) in [
        ("sr_ms", row.basics[0], 0.6, 1.6),
        ("rr_ms", row.basics[1], 0.6, 1.6),
        ("sw_ms", row.basics[2], 0.6, 1.6),
        ("rw_ms", row.basics[3], 0.5, 1.6),
    ] {
        let got = f(&t, k);
        assert!(
            got >= lo * want && got <= hi * want,
            "{profile} {k}: {got:.3}, paper {want} ({lo}x..{hi}x)"
        );
    }
    assert_eq!(
        t["locality_rw_bytes"].as_u64(),
        row.area_mib.map(|m| m << 20),
        "{profile}: locality area"
    );
    assert_eq!(
        t["partitions"].as_u64(),
        Some(row.partitions),
        "{profile}: partitions"
    );
    match row.pause_ms {
        Some(p) => {
            let got = f(&t, "pause_rw_ms");
            let step = 0.1 * 2f64.powi((p / 0.1).log2().ceil() as i32);
            assert!(
                got <= step + 1e-9,
                "{profile}: pause {got} ms, paper {p} ms (allowed up to {step} ms)"
            );
        }
        None => assert!(
            t["pause_rw_ms"].is_null(),
            "{profile}: pause {} but the paper has none",
            t["pause_rw_ms"]
        ),
    }
}

#[test]
fn uflip_memoright_table3_row() {
    check(
        "memoright",
        Row {
            basics: [0.3, 0.4, 0.3, 5.0],
            area_mib: Some(8),
            partitions: 8,
            pause_ms: Some(5.0),
        },
    );
}

#[test]
fn uflip_mtron_table3_row() {
    check(
        "mtron",
        Row {
            basics: [0.4, 0.5, 0.4, 9.0],
            area_mib: Some(8),
            partitions: 4,
            pause_ms: Some(9.0),
        },
    );
}

#[test]
fn uflip_samsung_table3_row() {
    check(
        "samsung",
        Row {
            basics: [0.5, 0.5, 0.6, 18.0],
            area_mib: Some(16),
            partitions: 4,
            pause_ms: None,
        },
    );
}

#[test]
fn uflip_transcend_module_table3_row() {
    check(
        "transcend-module",
        Row {
            basics: [1.2, 1.3, 1.7, 18.0],
            area_mib: Some(4),
            partitions: 4,
            pause_ms: None,
        },
    );
}

#[test]
fn uflip_transcend_mlc_table3_row() {
    check(
        "transcend-mlc",
        Row {
            basics: [1.4, 3.0, 2.6, 233.0],
            area_mib: Some(4),
            partitions: 4,
            pause_ms: None,
        },
    );
}

#[test]
fn uflip_kingston_dthx_table3_row() {
    check(
        "kingston-dthx",
        Row {
            basics: [1.3, 1.5, 1.8, 270.0],
            area_mib: Some(16),
            partitions: 8,
            pause_ms: None,
        },
    );
}

/// The paper's DTI has no locality area ("No", section 5.2: "some low end
/// USB devices (e.g., Kingston DTI) do not show any benefit by focusing
/// random IOs in a reduced area"). The model's logs are positional
/// replacements for one 48-page window of a unit (`ftl.log_window`): random
/// writes over more than one window merge on almost every write, those over
/// a few IOs rewrite a page every few writes, so no tested size costs under
/// half of RW. (Until issue 16's third pass the model had a 16 MiB area: its
/// logs took 8 random writes anywhere in the unit before merging.)
#[test]
fn uflip_kingston_dti_table3_row() {
    check(
        "kingston-dti",
        Row {
            basics: [1.9, 2.2, 2.9, 256.0],
            area_mib: None,
            partitions: 4,
            pause_ms: None,
        },
    );
}

fn finding(s: &serde_json::Value, what: &str) -> f64 {
    let f = s["findings"]
        .as_array()
        .unwrap()
        .iter()
        .find(|f| f["what"].as_str().unwrap().starts_with(what))
        .unwrap_or_else(|| panic!("no finding '{what}'"));
    f["measured"]
        .as_f64()
        .unwrap_or_else(|| panic!("'{what}' not measured"))
}

/// Chen et al. Figure 9 on ssd-m: sequential-write bandwidth collapses 14x
/// after "striker" (the simulator: 12.3x; tolerance >= 7x); sequential reads
/// 2.8x (simulated 2.6x; tolerance 2x..4x). Figure 5: writes without the
/// write cache much slower (simulated 15.0x; tolerance >= 5x).
#[test]
fn chen09_ssd_m_fragmentation_and_cache() {
    let dir = scratch();
    let s = suite(
        &["suite", "chen09", "--device", "sim:ssd-m", "--scale", "1"],
        dir.path(),
        "chen09-summary.json",
    );
    let w = finding(&s, "sequential-write bandwidth, before / after striker");
    let r = finding(&s, "sequential-read bandwidth, before / after striker");
    let c = finding(&s, "sequential write latency, cache off / on");
    println!("ssd-m: sequential writes {w:.1}x, sequential reads {r:.1}x after striker; cache off {c:.1}x");
    assert!(w >= 7.0, "sequential-write collapse {w}x (paper 14x)");
    assert!(
        (2.0..4.0).contains(&r),
        "sequential-read drop {r}x (paper 2.8x)"
    );
    assert!(c >= 5.0, "cache off {c}x");
}

/// Wang et al. Figures 2-3 on mtron-pro7500: the bathtub (50/50 mix within
/// 2.5x of the write throughput, below 10 % of the read throughput) and no
/// gain from 30 outstanding IOs for reads or writes (under 1.5x).
#[test]
fn wang11_mtron_pro7500_bathtub_and_outstanding_ios() {
    let dir = scratch();
    let s = suite(
        &[
            "suite",
            "wang11",
            "--device",
            "sim:mtron-pro7500,capacity=8GiB",
            "--scale",
            "0.5",
        ],
        dir.path(),
        "wang11-summary.json",
    );
    let mix_w = finding(&s, "bathtub");
    let mix_r = finding(&s, "50/50 mix / read");
    let r30 = finding(&s, "random reads: 30 / 1");
    let w30 = finding(&s, "random writes: 30 / 1");
    println!("mtron-pro7500: mix/write {mix_w:.2}, mix/read {mix_r:.3}, reads 30/1 {r30:.2}, writes 30/1 {w30:.2}");
    assert!(
        mix_w <= 2.5 && mix_r < 0.1,
        "bathtub: mix/write {mix_w}, mix/read {mix_r}"
    );
    assert!(
        r30 < 1.5 && w30 < 1.5,
        "30 outstanding: reads {r30}x, writes {w30}x"
    );
}

/// Wang et al. Figure 3 on ocz-vertex-ex: reads improve clearly with 30
/// outstanding IOs (>= 3x), writes do not (< 1.5x); the bathtub as above.
#[test]
fn wang11_ocz_vertex_ex_outstanding_ios() {
    let dir = scratch();
    let s = suite(
        &[
            "suite",
            "wang11",
            "--device",
            "sim:ocz-vertex-ex,capacity=8GiB",
            "--scale",
            "0.5",
        ],
        dir.path(),
        "wang11-summary.json",
    );
    let mix_w = finding(&s, "bathtub");
    let mix_r = finding(&s, "50/50 mix / read");
    let r30 = finding(&s, "random reads: 30 / 1");
    let w30 = finding(&s, "random writes: 30 / 1");
    println!("ocz-vertex-ex: mix/write {mix_w:.2}, mix/read {mix_r:.3}, reads 30/1 {r30:.2}, writes 30/1 {w30:.2}");
    assert!(
        mix_w <= 2.5 && mix_r < 0.1,
        "bathtub: mix/write {mix_w}, mix/read {mix_r}"
    );
    assert!(
        r30 >= 3.0 && w30 < 1.5,
        "30 outstanding: reads {r30}x, writes {w30}x"
    );
}
