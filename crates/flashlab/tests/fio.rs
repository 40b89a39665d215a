//! fio's language and honest simulator reads, as a user meets them: a read
//! benchmark on a fresh simulated SSD says its reads never touched flash,
//! fio's flag names and job files run as flashlab runs, and what flashlab
//! cannot express is refused naming the option.

mod common;

use std::path::Path;

use common::{flashlab, ok, scratch, stderr, stdout};
use serde_json::Value;

fn run_json(results: &Path) -> Value {
    let summary: Value =
        serde_json::from_str(&std::fs::read_to_string(results.join("summary.json")).unwrap())
            .unwrap();
    summary["runs"][0].clone()
}

#[test]
fn reads_of_a_fresh_simulated_ssd_are_flagged_with_the_fix() {
    let dir = scratch();
    let out = flashlab(
        &[
            "run",
            "--device",
            "sim:ssd-m,capacity=1GiB",
            "--pattern",
            "RR",
            "--qd",
            "8",
            "-n",
            "256",
            "-o",
            "fresh",
            "--quiet",
        ],
        dir.path(),
    );
    ok(&out);
    let err = stderr(&out);
    assert!(
        err.contains("warning: run RR: 100.0 % of reads hit never-written pages"),
        "{err}"
    );
    assert!(err.contains("prefill=on"), "{err}");
    let run = run_json(&dir.path().join("fresh"));
    assert_eq!(run["unmapped_read_fraction"], 1.0);
    assert!(run["warnings"][0]
        .as_str()
        .unwrap()
        .contains("never-written"));
    // and in the report
    ok(&flashlab(
        &["report", "fresh", "--output", "r.md"],
        dir.path(),
    ));
    let md = std::fs::read_to_string(dir.path().join("r.md")).unwrap();
    assert!(
        md.contains("never-written pages"),
        "the report shows the warning"
    );
}

#[test]
fn a_prefilled_device_reads_flash_and_does_not_warn() {
    let dir = scratch();
    let out = flashlab(
        &[
            "run",
            "--device",
            "sim:ssd-m,capacity=1GiB,prefill=on",
            "--pattern",
            "RR",
            "-n",
            "256",
            "-o",
            "filled",
            "--quiet",
        ],
        dir.path(),
    );
    ok(&out);
    assert!(!stderr(&out).contains("warning"), "{}", stderr(&out));
    let run = run_json(&dir.path().join("filled"));
    assert_eq!(run["unmapped_read_fraction"], 0.0);
    assert!(run.get("warnings").is_none());
}

/// A run without host writes has no write amplification to report: it says
/// so instead of "0.000", which would read as a perfect FTL; a run with
/// writes prints its figure (issue 33 item 7).
#[test]
fn a_read_only_run_prints_no_write_amplification() {
    let dir = scratch();
    let run = |pattern: &str, out: &str| {
        let o = flashlab(
            &[
                "run",
                "--device",
                "sim:ssd-m,capacity=1GiB,prefill=on",
                "--pattern",
                pattern,
                "-n",
                "64",
                "-o",
                out,
            ],
            dir.path(),
        );
        ok(&o);
        stdout(&o)
    };
    let reads = run("RR", "r");
    assert!(
        reads.contains("simulator: write amplification - (no host writes)"),
        "{reads}"
    );
    assert!(!reads.contains("write amplification 0.000"), "{reads}");
    let writes = run("RW", "w");
    assert!(
        writes.contains("simulator: write amplification 1."),
        "{writes}"
    );
}

#[test]
fn fio_flag_names_mean_what_they_mean_in_fio() {
    let dir = scratch();
    ok(&flashlab(
        &[
            "run",
            "--device",
            "sim:ssd-m,capacity=1GiB,prefill=on",
            "--rw",
            "randwrite",
            "--bs",
            "4k",
            "--iodepth",
            "4",
            "--numjobs",
            "2",
            "--offset",
            "1MiB",
            "--random_distribution",
            "zipf:1.2",
            "-n",
            "100",
            "-o",
            "fio",
            "--quiet",
        ],
        dir.path(),
    ));
    let spec = &run_json(&dir.path().join("fio"))["workload"];
    let text = spec.to_string();
    assert!(text.contains(r#""kind":"zipf""#), "{text}");
    assert!(text.contains(r#""mode":"write""#), "{text}");
    assert!(text.contains(r#""io_size_bytes":4096"#), "{text}");
    assert!(text.contains(r#""queue_depth":4"#), "{text}");
    assert!(text.contains(r#""parallel_degree":2"#), "{text}");
    assert!(text.contains(r#""target_offset_bytes":1048576"#), "{text}");
}

/// fio's --runtime with --time_based: the run goes on past --io-count until
/// the runtime, in simulated time on the simulator (so the same every time).
#[test]
fn a_time_based_run_lasts_its_runtime_in_simulated_time() {
    let dir = scratch();
    let args = |out: &'static str| {
        [
            "run",
            "--device",
            "sim:ssd-m,capacity=1GiB,prefill=on",
            "--rw",
            "randread",
            "--bs",
            "4k",
            "--iodepth",
            "8",
            "-n",
            "16",
            "--runtime",
            "100ms",
            "--time_based",
            "-o",
            out,
        ]
    };
    // (not --quiet, which prints the runs table alone)
    let out = flashlab(&args("a"), dir.path());
    ok(&out);
    assert!(
        String::from_utf8_lossy(&out.stdout).contains("100ms, time-based"),
        "the run line says how long it runs"
    );
    let a = run_json(&dir.path().join("a"));
    assert_eq!(a["status"], "complete");
    let ios = a["stats"]["ios"].as_u64().unwrap();
    assert!(ios > 16, "past --io-count: {ios}");
    // the last IO was submitted before 100 ms and completed soon after
    let window_ns = a["stats"]["window_ns"].as_u64().unwrap();
    assert!(
        (100_000_000..101_000_000).contains(&window_ns),
        "{window_ns}"
    );
    assert_eq!(a["workload"]["runtime_ns"], 100_000_000);
    assert_eq!(a["workload"]["time_based"], true);
    // deterministic: simulated time, not the wall clock
    ok(&flashlab(&args("b"), dir.path()));
    assert_eq!(run_json(&dir.path().join("b"))["stats"]["ios"], ios);
}

/// Without --time_based, fio's runtime only caps the run; and a rate paces it.
#[test]
fn a_runtime_caps_a_run_and_rate_iops_paces_it() {
    let dir = scratch();
    ok(&flashlab(
        &[
            "run",
            "--device",
            "sim:ssd-m,capacity=1GiB,prefill=on",
            "--rw",
            "randread",
            "--bs",
            "4k",
            "-n",
            "1000",
            "--rate_iops",
            "2000",
            "--runtime",
            "100ms",
            "-o",
            "capped",
            "--quiet",
        ],
        dir.path(),
    ));
    let run = run_json(&dir.path().join("capped"));
    // 2000 IO/s for 100 ms: IOs at 0, 0.5 ms, ..., 99.5 ms
    assert_eq!(run["stats"]["ios"], 200);
    assert_eq!(run["status"], "complete");
    assert_eq!(run["workload"]["rate_iops"], 2000);
}

#[test]
fn a_fio_job_file_runs_for_its_runtime_at_its_rate() {
    let dir = scratch();
    std::fs::write(
        dir.path().join("t.fio"),
        "[global]\nsize=8m\nruntime=1\ntime_based\n\n[paced]\nrw=randread\nbs=4k\nrate_iops=500\n",
    )
    .unwrap();
    ok(&flashlab(
        &[
            "run",
            "--device",
            "sim:ssd-m,capacity=1GiB,prefill=on",
            "--fio-job",
            "t.fio",
            "-o",
            "job",
            "--quiet",
        ],
        dir.path(),
    ));
    let run = run_json(&dir.path().join("job"));
    // runtime=1 is one second (fio's unit); 500 IO/s for it, past size/bs
    assert_eq!(run["workload"]["runtime_ns"], 1_000_000_000u64);
    assert_eq!(run["stats"]["ios"], 500);
}

fn refused(args: &[&str], expected: &str) {
    let dir = scratch();
    let out = flashlab(args, dir.path());
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
    assert_eq!(err.trim_end().lines().count(), 1, "one line: {err}");
    assert!(err.contains(expected), "expected '{expected}' in: {err}");
}

#[test]
fn an_unsupported_fio_flag_names_flashlabs_equivalent() {
    refused(
        &["run", "--ioengine=libaio"],
        "fio option '--ioengine' is not supported by flashlab; use --engine",
    );
    refused(&["run", "--ramp_time", "5"], "--io-ignore");
    refused(&["run", "--rw", "randrw"], "--mix RW");
    refused(
        &["run", "--rw", "read", "--random_distribution", "zipf:1.1"],
        "applies to random IO",
    );
    refused(
        &["run", "--location", "zipf:0"],
        "zipf theta 0 is outside (0, 100]",
    );
    refused(
        &["run", "--location", "zoned:60/10:30/20"],
        "add up to 90 % of the IOs and 30 % of the target",
    );
    refused(&["run", "--time_based"], "--runtime");
    refused(&["run", "--runtime", "0"], "runtime must be at least 1");
    refused(&["run", "--rate", "10m"], "--rate_iops");
    refused(
        &["run", "--bssplit", "4k/50:64k/40"],
        "bssplit: the percentages add up to 90, not 100",
    );
    refused(
        &["run", "--bssplit", "4k/50:64k/50", "--bs", "8k"],
        "drop io_size (--bs)",
    );
    refused(
        &["run", "--location", "zipf:1.1", "--bssplit", "4k/50:64k/50"],
        "sequential and random locations",
    );
}

const JOB: &str = "\
[global]
ioengine=io_uring
direct=1
size=8m
group_reporting

[rr-zipf]
rw=randread
bs=4KB
iodepth=4
random_distribution=zipf:1.1

[sw]
rw=write
bs=64k
";

#[test]
fn a_fio_job_file_runs_its_jobs_as_flashlab_runs() {
    let dir = scratch();
    std::fs::write(dir.path().join("t.fio"), JOB).unwrap();
    ok(&flashlab(
        &[
            "run",
            "--device",
            "sim:ssd-m,capacity=1GiB,prefill=on",
            "--fio-job",
            "t.fio",
            "-o",
            "job",
            "--quiet",
        ],
        dir.path(),
    ));
    let summary: Value = serde_json::from_str(
        &std::fs::read_to_string(dir.path().join("job/summary.json")).unwrap(),
    )
    .unwrap();
    let runs = summary["runs"].as_array().unwrap();
    assert_eq!(runs.len(), 2);
    assert_eq!(runs[0]["name"], "rr-zipf");
    // 4KB is 4096 in a job file; size=8m over bs=4k is 2048 IOs, as fio does
    assert_eq!(runs[0]["workload"]["primary"]["io_size_bytes"], 4096);
    assert_eq!(runs[0]["workload"]["io_count"], 2048);
    assert_eq!(runs[0]["workload"]["target_size_bytes"], 8 << 20);
    assert_eq!(runs[1]["workload"]["io_count"], 128);
}

#[test]
fn a_fio_job_file_with_an_option_flashlab_cannot_express_is_refused() {
    let dir = scratch();
    std::fs::write(
        dir.path().join("t.fio"),
        "[j]\nrw=randread\nbsrange=4k-64k\n",
    )
    .unwrap();
    let out = flashlab(&["run", "--fio-job", "t.fio"], dir.path());
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert_eq!(err.trim_end().lines().count(), 1, "{err}");
    assert!(
        err.contains("fio option 'bsrange' is not supported by flashlab")
            && err.contains("--bssplit"),
        "{err}"
    );
}

/// fio's bssplit: each IO's size drawn by its share, from the seed; random
/// offsets on the grid of the smallest size, as fio aligns them.
#[test]
fn a_bssplit_draws_each_ios_size_by_its_share() {
    let dir = scratch();
    ok(&flashlab(
        &[
            "run",
            "--device",
            "sim:ssd-m,capacity=1GiB,prefill=on",
            "--rw",
            "randread",
            "--bssplit",
            "4k/75:64k/25",
            "-n",
            "2000",
            "-o",
            "split",
            "--csv",
            "ios.csv",
            "--quiet",
        ],
        dir.path(),
    ));
    let csv = std::fs::read_to_string(dir.path().join("ios.csv")).unwrap();
    let mut lines = csv.lines();
    let header: Vec<&str> = lines.next().unwrap().split(',').collect();
    let col = |name: &str| header.iter().position(|h| *h == name).unwrap();
    let (size_col, offset_col) = (col("size_bytes"), col("offset_bytes"));
    let (mut small, mut large) = (0, 0);
    for line in lines {
        let f: Vec<&str> = line.split(',').collect();
        let size: u64 = f[size_col].parse().unwrap();
        let offset: u64 = f[offset_col].parse().unwrap();
        assert_eq!(offset % 4096, 0, "on the 4 KiB grid");
        match size {
            4096 => small += 1,
            65536 => large += 1,
            other => panic!("size {other}"),
        }
    }
    assert_eq!(small + large, 2000);
    // 75 % of 2000 = 1500; a binomial's deviation is 19
    assert!((1440..1560).contains(&small), "{small} of 2000 at 4 KiB");
    let run = run_json(&dir.path().join("split"));
    assert_eq!(run["workload"]["io_size_split"][1]["size_bytes"], 65536);
    assert!(run["description"]
        .as_str()
        .unwrap()
        .contains("bssplit 4KiB/75:64KiB/25"));
}

/// A file in /dev/shm is RAM: every run says its figures describe memory,
/// the terminal says it once, and the report shows it.
#[test]
fn a_ram_backed_target_is_flagged_once_on_the_terminal_and_in_every_run() {
    let dir = scratch();
    let shm = tempfile::Builder::new()
        .prefix("flashlab-ram-test")
        .tempdir_in("/dev/shm")
        .unwrap();
    let img = shm.path().join("t.img");
    let pattern = dir.path().join("two.toml");
    std::fs::write(
        &pattern,
        "[defaults]\nio_size = \"4KiB\"\nio_count = 64\n\n[[run]]\npattern = \"SR\"\n\n[[run]]\npattern = \"RR\"\n",
    )
    .unwrap();
    let out = flashlab(
        &[
            "run",
            "--device",
            img.to_str().unwrap(),
            "--size",
            "16MiB",
            "--pattern-file",
            pattern.to_str().unwrap(),
            "-o",
            "ram",
            "--quiet",
        ],
        dir.path(),
    );
    ok(&out);
    let err = stderr(&out);
    assert_eq!(
        err.matches("describe memory, not flash").count(),
        1,
        "{err}"
    );
    let summary: Value = serde_json::from_str(
        &std::fs::read_to_string(dir.path().join("ram/summary.json")).unwrap(),
    )
    .unwrap();
    for run in summary["runs"].as_array().unwrap() {
        assert!(
            run["warnings"][0].as_str().unwrap().contains("tmpfs"),
            "{run}"
        );
    }
    ok(&flashlab(
        &["report", "ram", "--output", "r.md"],
        dir.path(),
    ));
    let md = std::fs::read_to_string(dir.path().join("r.md")).unwrap();
    assert!(
        md.contains("describe memory, not flash"),
        "the report shows it"
    );
}
