//! `flashlab probe` and `flashlab twin` from the command line.

mod common;

use common::{flashlab, ok, scratch, text};

#[test]
fn probe_of_a_simulated_usb_stick_prints_its_unit_with_the_curve_and_saves_json() {
    let dir = scratch();
    let out = flashlab(
        &[
            "probe",
            "sim:transcend-module",
            "-o",
            "p",
            "--budget",
            "10m",
        ],
        dir.path(),
    );
    let t = ok(&out);
    assert!(t.contains("erase unit: 1MiB"), "{t}");
    assert!(
        t.contains("round-robin sequential 4 KiB streams d bytes apart"),
        "{t}"
    );
    let json: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dir.path().join("p/probe.json")).unwrap())
            .unwrap();
    assert_eq!(json["erase_unit_bytes"]["value"], 1048576.0);
    assert_eq!(json["family"], "log-block");
}

#[test]
fn twin_refuses_a_file_in_dev_shm_and_writes_no_profile() {
    let name = format!("/dev/shm/flashlab-twin-test-{}", std::process::id());
    std::fs::write(&name, vec![0u8; 1 << 20]).unwrap();
    let dir = scratch();
    let out = flashlab(
        &[
            "twin",
            &name,
            "--output",
            "t.toml",
            "--allow-write-to",
            "all",
        ],
        dir.path(),
    );
    std::fs::remove_file(&name).unwrap();
    assert_eq!(out.status.code(), Some(2), "{}", text(&out));
    let t = text(&out);
    assert!(t.contains("RAM-backed file system"), "{t}");
    assert!(t.contains("tmpfs"), "{t}");
    assert_eq!(t.lines().count(), 1, "one line: {t}");
    assert!(!dir.path().join("t.toml").exists());
}

#[test]
fn twin_of_a_simulated_ssd_writes_a_profile_that_flashlab_runs() {
    let dir = scratch();
    let out = flashlab(
        &["twin", "sim:nvme-tlc", "--output", "twin.toml"],
        dir.path(),
    );
    let t = ok(&out);
    assert!(t.contains("verdict: good"), "{t}");
    assert!(t.contains("held-out"), "{t}");
    let run = flashlab(
        &[
            "run",
            "--device",
            "sim:twin.toml",
            "--io-size",
            "4KiB",
            "--io-count",
            "100",
            "-o",
            "r",
        ],
        dir.path(),
    );
    ok(&run);
    // The twin's report: what was probed, the parameters with the plan parts
    // they were fitted to, and the held-out predictions apart from the fit.
    let rep = flashlab(
        &[
            "report",
            "twin.toml.twin.json",
            "--format",
            "md",
            "--output",
            "-",
        ],
        dir.path(),
    );
    let md = ok(&rep);
    for want in [
        "### Probe of sim:nvme-tlc",
        "| FTL family | page-mapped |",
        "| nand.read_ns |",
        "fitted: flashlab twin, coordinate descent on the means of plan parts sr-4k, rr-4k",
        "| nand.read_retry_probability |",
        "| fold | held out | trained on | FTL chosen |",
        "| 0 | sr-4k, rw-32k, rw-4k-pause |",
        "| part | group | fold | measured mean (us) | measured p99 (us) | held-out mean (us) | mean error | held-out p99 (us) | p99 error |",
        "Verdict: good",
    ] {
        assert!(md.contains(want), "{want:?} missing from the twin's report:\n{md}");
    }
    let html = flashlab(
        &["report", "twin.toml.twin.json", "--output", "t.html"],
        dir.path(),
    );
    ok(&html);
    let page = std::fs::read_to_string(dir.path().join("t.html")).unwrap();
    assert!(page.contains("<svg"), "the probe's curves are charted");
}

#[test]
fn bad_budget_and_range_get_one_line_naming_the_fix() {
    let dir = scratch();
    let out = flashlab(&["probe", "sim:ssd-m", "--budget", "ten"], dir.path());
    assert_eq!(out.status.code(), Some(2));
    assert!(
        text(&out).contains("write a duration such as 10m"),
        "{}",
        text(&out)
    );
    let out = flashlab(
        &["probe", "sim:ssd-m", "--allow-write-to", "1GiB"],
        dir.path(),
    );
    assert_eq!(out.status.code(), Some(2));
    assert!(text(&out).contains("write OFFSET+LENGTH"), "{}", text(&out));
}
