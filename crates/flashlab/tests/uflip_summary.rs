//! What `flashlab suite uflip` says at the end, when only some
//! micro-benchmarks ran: Table 3 says "n/m" (not measured) for the columns no run
//! measured (not "No" or "-", which mean measured and none), every design
//! hint keeps its number and says when it is not applicable, and a row that
//! contradicts the paper's devices (sequential writes slower than random
//! ones on sim:ssd-m) is explained in one line from the runs' accounting.

mod common;

use common::flashlab;

#[test]
fn granularity_only_run_says_what_was_not_measured() {
    let dir = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).unwrap();
    let out = flashlab(
        &[
            "suite",
            "uflip",
            "--device",
            "sim:ssd-m",
            "--quick",
            "--only",
            "granularity",
            "--results",
            "g",
            "--quiet",
        ],
        dir.path(),
    );
    let text = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(
        out.status.success(),
        "{text}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let row = text
        .lines()
        .find(|l| l.starts_with("| sim:ssd-m |"))
        .unwrap_or_else(|| panic!("no Table 3 row: {text}"));
    let cells: Vec<&str> = row.split('|').map(str::trim).collect();
    // | Device | SR | RR | SW | RW | Pause | Locality | Partitions | Reverse | In-place | Large Incr |
    for (i, name) in [
        (5, "Pause"),
        (6, "Locality"),
        (7, "Partitions"),
        (10, "Large Incr"),
    ] {
        assert_eq!(
            cells[i + 1],
            flashlab_suite::table3::NOT_MEASURED,
            "{name}: {row}"
        );
    }
    // Times carry the device's unit in each cell ("0.174 ms", "87.6 us").
    let (value, unit) = cells[2].split_once(' ').expect("a value and its unit");
    assert!(
        value.parse::<f64>().is_ok() && ["us", "ms"].contains(&unit),
        "SR measured: {row}"
    );
    // JSON: the never-measured columns are listed, their values null.
    let json: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(dir.path().join("g/uflip-summary.json")).unwrap(),
    )
    .unwrap();
    let not_measured = json["table3"]["not_measured"].as_array().unwrap();
    assert!(not_measured.iter().any(|v| v == "Locality RW"), "{json}");
    assert!(json["table3"]["locality_rw_bytes"].is_null());
    // Hints 1-7, numbered stably, the unmeasured ones said to be not applicable.
    let numbers: Vec<u64> = json["hints"]
        .as_array()
        .unwrap()
        .iter()
        .map(|h| h["number"].as_u64().unwrap())
        .collect();
    assert_eq!(numbers, (1..=7).collect::<Vec<u64>>());
    for h in &json["hints"].as_array().unwrap()[2..] {
        assert!(
            h["device"].as_str().unwrap().starts_with("Not applicable"),
            "{h}"
        );
    }
    assert!(text.contains("| 5 | Not applicable"), "{text}");
    // sim:ssd-m writes sequentially slower than randomly here: said, and why.
    // One unit per device, so the two cells compare by their numbers.
    let number = |cell: &str| -> f64 { cell.split(' ').next().unwrap().parse().unwrap() };
    let (sw, rw) = (number(cells[4]), number(cells[5]));
    if sw > rw {
        assert!(
            text.contains("are slower than random ones") && text.contains("pages per page written"),
            "{text}"
        );
    } else {
        assert!(!text.contains("are slower than random ones"), "{text}");
    }
}
