//! Hudlet & Schall's drives on the simulator (docs/profiles.md): the
//! mechanisms behind section 6's numbers, through `flashlab suite hudlet11`
//! at a reduced size (the scoreboard, `flashlab validate`, runs the full one).

use std::process::Command;

fn findings(profile: &str) -> serde_json::Value {
    let dir = tempfile::tempdir().unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_flashlab"))
        .args([
            "suite",
            "hudlet11",
            "--device",
            &format!("sim:{profile},capacity=8GiB"),
            "--scale",
            "0.25",
            "--quiet",
            "--json",
            "--results",
        ])
        .arg(dir.path().join("r"))
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{profile}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).unwrap()
}

fn measured(v: &serde_json::Value, what: &str) -> f64 {
    v["findings"]
        .as_array()
        .unwrap()
        .iter()
        .find(|f| f["what"].as_str().unwrap().starts_with(what))
        .and_then(|f| f["measured"].as_f64())
        .unwrap_or_else(|| panic!("finding '{what}' measured"))
}

/// Figure 6 on every drive: QD 2 helps random reads, more does not (the
/// controller overlaps two commands).
fn queue_depth_saturates_at_two(v: &serde_json::Value) {
    assert!(measured(v, "random-read throughput, QD2 / QD1") >= 1.3);
    assert!(measured(v, "random-read throughput, QD32 / QD2") <= 1.15);
}

#[test]
fn mtron_7525_reads_uniformly_and_an_index_wins_almost_everywhere() {
    let v = findings("hs-mtron-7525");
    // no read-ahead: random reads as fast as sequential (paper: -5 %)
    let r = measured(&v, "random / sequential read throughput");
    assert!((0.9..=1.1).contains(&r), "{r}");
    // so a sorted index beats a scan up to ~90 % or more of the pages
    assert!(measured(&v, "index-vs-scan break-even selectivity (skip-sequential") >= 0.85);
    // log-block merges: random writes "tremendously slower"
    assert!(measured(&v, "random / sequential write throughput") <= 0.25);
    queue_depth_saturates_at_two(&v);
}

#[test]
fn x25m_g2_reads_ahead_so_an_index_loses_from_about_half() {
    let v = findings("hs-intel-x25m-g2");
    let b = measured(&v, "index-vs-scan break-even selectivity (skip-sequential");
    assert!((0.4..=0.6).contains(&b), "break-even {b}");
    // writes through the buffer at one speed whatever the pattern
    let w = measured(&v, "random / sequential write throughput");
    assert!((0.8..=1.25).contains(&w), "{w}");
    // below the data sheet's 35,000 IOPS
    assert!(measured(&v, "random-read IOPS (4 KiB, QD 32)") < 0.9 * 35_000.0);
    queue_depth_saturates_at_two(&v);
}

#[test]
fn realssd_breaks_even_at_three_quarters_and_suffers_random_writes() {
    let v = findings("hs-crucial-realssd");
    let b = measured(&v, "index-vs-scan break-even selectivity (skip-sequential");
    assert!((0.64..=0.86).contains(&b), "break-even {b}");
    assert!(measured(&v, "random / sequential write throughput") <= 0.25);
    let a = measured(&v, "sequential write / read throughput");
    assert!((0.1..=0.9).contains(&a), "{a}");
    queue_depth_saturates_at_two(&v);
}
