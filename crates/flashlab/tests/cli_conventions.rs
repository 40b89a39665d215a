//! The conventions every command keeps (issue 33, item 7): `--quiet`
//! prints the result and nothing else; `-o` is the results directory and a
//! file output is `--output FILE`; suites take fio's `--runtime` and
//! `--time_based`; uflip takes the `--scale` the README offers.

mod common;

use common::{flashlab, ok, scratch, stderr, stdout, text};

fn summary(dir: &std::path::Path) -> serde_json::Value {
    serde_json::from_str(&std::fs::read_to_string(dir.join("summary.json")).unwrap()).unwrap()
}

#[test]
fn quiet_run_prints_the_runs_table_and_nothing_else() {
    let dir = scratch();
    let out = flashlab(
        &[
            "run",
            "-d",
            "sim:ssd-m",
            "-p",
            "RW",
            "-n",
            "200",
            "-o",
            "r",
            "-q",
        ],
        dir.path(),
    );
    let lines: Vec<String> = ok(&out).lines().map(String::from).collect();
    // The header and one row: no device, results, run or simulator lines.
    assert_eq!(lines.len(), 2, "{lines:?}");
    assert!(
        lines[0].starts_with("run ") && lines[0].contains("IOPS"),
        "{lines:?}"
    );
    assert!(lines[1].starts_with("RW "), "{lines:?}");
}

#[test]
fn quiet_suite_prints_its_summary_and_quiet_sweep_its_result_line() {
    let dir = scratch();
    let out = flashlab(
        &["suite", "wang11", "--quick", "--results", "w", "--quiet"],
        dir.path(),
    );
    let t = ok(&out);
    assert!(t.starts_with("## wang11 on sim:ssd-m"), "{t}");
    for chatter in ["results:", "saved:", "runs in", "estimated duration"] {
        assert!(!t.contains(chatter), "--quiet printed {chatter:?}:\n{t}");
    }

    std::fs::write(
        dir.path().join("g.toml"),
        "device = \"ssd-m,capacity=128MiB,channels=2,cache=off,prefill=on\"\nseeds = [1]\n[parameters]\nop = [0.15, 0.3]\n\
         [[run]]\npattern = \"RW\"\nio_size = \"4KiB\"\nio_count = 300\n",
    )
    .unwrap();
    let out = flashlab(&["sweep", "g.toml", "-o", "sw", "--quiet"], dir.path());
    assert_eq!(
        ok(&out),
        "2 points: 2 ran, 0 already done, 0 failed; table: sw/sweep.csv\n"
    );
}

#[test]
fn o_is_the_results_directory_and_a_file_is_output() {
    let dir = scratch();
    ok(&flashlab(
        &["run", "-p", "RW", "-n", "64", "-o", "r", "-q"],
        dir.path(),
    ));
    // export writes a file: --output, silently.
    let out = flashlab(&["export", "r", "--output", "io.csv"], dir.path());
    ok(&out);
    assert_eq!(stderr(&out), "");
    assert!(dir.path().join("io.csv").exists());
    // The old -o FILE still works, and says what to write instead.
    let out = flashlab(&["export", "r", "-o", "old.csv"], dir.path());
    ok(&out);
    assert!(
        stderr(&out).contains("write --output old.csv"),
        "{}",
        stderr(&out)
    );
    assert!(dir.path().join("old.csv").exists());
    let out = flashlab(&["sim", "show", "ssd-m", "-o", "p.toml"], dir.path());
    ok(&out);
    assert!(stderr(&out).contains("--output p.toml"));
    let out = flashlab(
        &["report", "r", "-q", "-o", "old.md", "--format", "md"],
        dir.path(),
    );
    ok(&out);
    assert!(
        stderr(&out).contains("write --output old.md"),
        "{}",
        stderr(&out)
    );
    assert!(dir.path().join("old.md").exists());
    // The same hidden flag everywhere: it refuses to be given with --output.
    for args in [
        &["export", "r", "-o", "a.csv", "--output", "b.csv"][..],
        &["report", "r", "-o", "a.md", "--output", "b.md"],
        &["sim", "show", "ssd-m", "-o", "a.toml", "--output", "b.toml"],
        &["twin", "sim:ssd-m", "-o", "a.toml", "--output", "b.toml"],
    ] {
        let out = flashlab(args, dir.path());
        assert_eq!(out.status.code(), Some(2), "{args:?}: {}", text(&out));
        assert!(
            stderr(&out).contains("cannot be used with"),
            "{args:?}: {}",
            stderr(&out)
        );
    }
    // A twin without its output file: one line naming the flag.
    let out = flashlab(&["twin", "sim:ssd-m"], dir.path());
    assert_eq!(out.status.code(), Some(2));
    let e = stderr(&out);
    assert_eq!(e.lines().count(), 1, "{e}");
    assert!(e.contains("--output <PROFILE.toml>"), "{e}");
}

#[test]
fn a_suite_runtime_caps_every_run_as_fio_caps_a_job() {
    let dir = scratch();
    let base = ["suite", "chen09", "--quick", "--quiet"];
    ok(&flashlab(
        &[&base[..], &["-o", "full"]].concat(),
        dir.path(),
    ));
    ok(&flashlab(
        &[&base[..], &["-o", "capped", "--runtime", "1ms"]].concat(),
        dir.path(),
    ));
    let (full, capped) = (
        summary(&dir.path().join("full")),
        summary(&dir.path().join("capped")),
    );
    let ios = |s: &serde_json::Value| -> u64 {
        s["runs"]
            .as_array()
            .unwrap()
            .iter()
            .map(|r| r["stats"]["ios"].as_u64().unwrap())
            .sum()
    };
    assert!(ios(&capped) < ios(&full), "{} {}", ios(&capped), ios(&full));
    for r in capped["runs"].as_array().unwrap() {
        assert_eq!(r["workload"]["runtime_ns"], 1_000_000, "{}", r["name"]);
        assert!(r["workload"].get("time_based").is_none_or(|t| t == false));
        // Nothing is submitted after 1 ms; what was in flight completes.
        let (window, max) = (
            r["stats"]["window_ns"].as_u64().unwrap(),
            r["stats"]["latency"]["max_ns"].as_u64().unwrap(),
        );
        assert!(window <= 1_000_000 + max, "{}: {window} {max}", r["name"]);
    }
}

#[test]
fn a_time_based_suite_runs_each_measured_run_for_the_runtime() {
    let dir = scratch();
    let args = [
        "suite",
        "wang11",
        "--quick",
        "--quiet",
        "-o",
        "t",
        "--runtime",
        "2ms",
        "--time_based",
    ];
    ok(&flashlab(&args, dir.path()));
    let s = summary(&dir.path().join("t"));
    for r in s["runs"].as_array().unwrap() {
        assert_eq!(r["workload"]["time_based"], true, "{}", r["name"]);
        let window = r["stats"]["window_ns"].as_u64().unwrap();
        assert!(window >= 2_000_000, "{}: {window}", r["name"]);
    }
    // uFLIP's runs stop at their bound: a fixed time is refused, naming the way out.
    for (args, names) in [
        (
            &[
                "suite",
                "uflip",
                "--quick",
                "--runtime",
                "1s",
                "--time_based",
                "--dry-run",
            ][..],
            "use --runtime alone",
        ),
        (
            &["suite", "chen09", "--quick", "--time_based", "--dry-run"],
            "add e.g. --runtime 10s",
        ),
        (
            &["suite", "chen09", "--runtime", "0"],
            "--runtime 0 runs nothing",
        ),
        (
            &["suite", "chen09", "--resume", "t", "--runtime", "1s"],
            "drop --runtime",
        ),
    ] {
        let out = flashlab(args, dir.path());
        assert_eq!(out.status.code(), Some(2), "{args:?}: {}", text(&out));
        assert!(stderr(&out).contains(names), "{args:?}: {}", stderr(&out));
    }
}

#[test]
fn uflip_scale_multiplies_its_io_counts() {
    let dir = scratch();
    let plan = |extra: &[&str]| {
        stdout(&flashlab(
            &[&["suite", "uflip", "--dry-run"][..], extra].concat(),
            dir.path(),
        ))
    };
    assert!(plan(&[]).contains("256..4096 IOs"), "{}", plan(&[]));
    let tenth = plan(&["--scale", "0.1"]);
    assert!(tenth.contains("26..410 IOs"), "{tenth}");
    let out = flashlab(
        &["suite", "uflip", "--scale", "0.01", "--dry-run"],
        dir.path(),
    );
    assert_eq!(out.status.code(), Some(2));
    assert!(
        stderr(&out).contains("--scale 0.01 leaves 41 calibration IOs"),
        "{}",
        stderr(&out)
    );
}

#[test]
fn a_size_is_echoed_in_the_unit_it_was_written_in() {
    let dir = scratch();
    // A decimal capacity that is not a whole number of pages: the error
    // quotes it as written (4GB), not as 3906250KiB.
    let out = flashlab(
        &["run", "-d", "sim:ssd-m,capacity=4GB", "-p", "SR", "-n", "8"],
        dir.path(),
    );
    assert_eq!(out.status.code(), Some(2), "{}", text(&out));
    let e = stderr(&out);
    assert!(e.contains("capacity 4GB "), "{e}");
    assert!(!e.contains("KiB must"), "{e}");

    // A capacity of 8GB is 8GB in the run's header and in the report, not
    // 7812500KiB nor 7.5GiB; a binary one stays binary.
    for (capacity, shown) in [("8GB", "8GB"), ("2GiB", "2GiB")] {
        let device = format!("sim:ssd-m,capacity={capacity}");
        let results = format!("r-{capacity}");
        let out = flashlab(
            &["run", "-d", &device, "-p", "SR", "-n", "8", "-o", &results],
            dir.path(),
        );
        let header = stdout(&out);
        ok(&out);
        assert!(
            header.contains(&format!("simulated SSD, {shown},")),
            "{header}"
        );
        let out = flashlab(&["report", &results, "--format", "md"], dir.path());
        let md = ok(&out);
        assert!(md.contains(&format!("simulated SSD, {shown},")), "{md}");
        assert!(!md.contains("KiB,") && !md.contains("7.5GiB"), "{md}");
    }
}
