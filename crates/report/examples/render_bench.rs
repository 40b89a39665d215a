//! How fast is a report of a big suite? Generates a synthetic results
//! directory (default: 20 runs of 1,000,000 IOs = 20 M per-IO records, 800 MB),
//! renders it as HTML, Markdown and JSON, and prints times and sizes.
//!
//! ```sh
//! cargo run --release -p flashlab-report --example render_bench -- [--records N] [--runs R] [--dir DIR]
//! cargo run --release -p flashlab-report --example render_bench -- --uflip [--records N] [--dir DIR]
//! ```
//!
//! `--uflip` makes the directory a full uFLIP suite as `flashlab suite uflip`
//! leaves it: the 301 runs of the full plan (nine micro-benchmarks over the
//! baselines, calibration and pause probe) with `plan.json`, `suite.json`
//! and `uflip-summary.json`, so that the report has its Table 3, hints and
//! one chart per micro-benchmark (default: 21 M records then).
//!
//! The target (issue 6): under 30 s and under 20 MB of HTML for tens of
//! millions of records. The directory is deleted at the end unless `--dir`
//! names one to keep (an existing directory is reused, not regenerated).

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::time::Instant;

use flashlab_device::{ClockKind, DeviceInfo, DeviceKind, Mode};
use flashlab_report::{Options, Report, ReportFormat};
use flashlab_results::{
    HostInfo, IoRecord, Manifest, ResultsDir, RunStatus, ToolInfo, Workload, FLAG_WARMUP,
};

fn main() {
    let mut records: u64 = 20_000_000;
    let mut runs: u64 = 20;
    let mut dir: Option<PathBuf> = None;
    let mut uflip = false;
    let mut args = std::env::args().skip(1);
    while let Some(a) = args.next() {
        if a == "--uflip" {
            uflip = true;
            records = records.max(21_000_000);
            continue;
        }
        let v = args.next().unwrap_or_else(|| usage());
        match a.as_str() {
            "--records" => records = v.parse().unwrap_or_else(|_| usage()),
            "--runs" => runs = v.parse().unwrap_or_else(|_| usage()),
            "--dir" => dir = Some(PathBuf::from(v)),
            _ => usage(),
        }
    }
    let runs = runs.max(1);
    let tmp = tempfile::Builder::new()
        .prefix("flashlab-render-bench")
        .tempdir()
        .expect("temporary directory");
    let root = dir.clone().unwrap_or_else(|| tmp.path().join("results"));
    if root.join("manifest.json").is_file() {
        println!("reusing {}", root.display());
    } else {
        let t = Instant::now();
        let plan = if uflip {
            uflip_plan()
        } else {
            plain_plan(runs)
        };
        let runs = plan.len();
        generate(&root, records, &plan, uflip);
        println!(
            "generated {} records in {runs} runs in {:.1} s: {}",
            records,
            t.elapsed().as_secs_f64(),
            root.display()
        );
    }

    let t = Instant::now();
    let report = Report::build(std::slice::from_ref(&root), &Options::default())
        .unwrap_or_else(|e| panic!("{e}"));
    let build_s = t.elapsed().as_secs_f64();
    let total: u64 = report.devices[0].runs.iter().map(|r| r.records).sum();
    println!("read and reduced {total} records: {build_s:.2} s");
    for format in [
        ReportFormat::Html,
        ReportFormat::Markdown,
        ReportFormat::Json,
    ] {
        let t = Instant::now();
        let text = report.render(format);
        println!(
            "  {:<4} rendered in {:.3} s: {:.2} MB ({} bytes); total with reading {:.2} s",
            format.extension(),
            t.elapsed().as_secs_f64(),
            text.len() as f64 / 1e6,
            text.len(),
            build_s + t.elapsed().as_secs_f64()
        );
    }
    if dir.is_some() {
        println!("kept {}", root.display());
    }
}

fn usage() -> ! {
    eprintln!("usage: render_bench [--uflip] [--records N] [--runs R] [--dir DIR]");
    std::process::exit(2)
}

/// uFLIP-like runs: a cheap start-up phase, then a running phase with a
/// periodic expensive IO, noise, and rare large outliers; every fourth run
/// mixes reads and writes.
/// (name, experiment, series, parameter, value) of each run.
type PlanRun = (String, String, String, String, f64);

fn plain_plan(runs: u64) -> Vec<PlanRun> {
    (0..runs)
        .map(|r| {
            (
                format!("run{:02}", r + 1),
                String::new(),
                "RW".into(),
                String::new(),
                0.0,
            )
        })
        .collect()
}

/// The full uFLIP plan's runs (crates/suite/src/uflip.rs, not quick).
fn uflip_plan() -> Vec<PlanRun> {
    let all = ["SR", "RR", "SW", "RW"];
    let mut out: Vec<PlanRun> = Vec::new();
    let mut add = |e: &str, s: &str, p: &str, v: f64| {
        out.push((format!("{e}-{s}-{v}"), e.into(), s.into(), p.into(), v));
    };
    for b in all {
        add("calibration", b, "IOCount", 4096.0);
    }
    for b in ["SR", "RW", "SR"] {
        add("pause-probe", b, "IOCount", 2048.0);
    }
    let p2 = |lo: u32, hi: u32| (lo..=hi).map(|e| (1u64 << e) as f64).collect::<Vec<f64>>();
    for b in all {
        let mut sizes: Vec<f64> = p2(0, 9).iter().map(|p| p * 512.0).collect();
        sizes.extend([12288.0, 49152.0]);
        for v in sizes {
            add("granularity", b, "IOSize", v);
        }
        for v in std::iter::once(0.0).chain(p2(0, 5).iter().map(|p| p * 512.0)) {
            add("alignment", b, "IOShift", v);
        }
        let hi = if b.starts_with('R') { 16 } else { 8 };
        for v in p2(0, hi) {
            add("locality", b, "TargetSize", v * 32768.0);
        }
        for v in p2(0, 4) {
            add("parallelism", b, "ParallelDegree", v);
        }
        for v in p2(0, 8) {
            add("pause", b, "Pause_ms", v * 0.1);
        }
        for v in p2(0, 6) {
            add("bursts", b, "Burst", v * 10.0);
        }
    }
    for b in ["SR", "SW"] {
        for v in p2(0, 8) {
            add("partitioning", b, "Partitions", v);
        }
        for v in [-1.0, 0.0].into_iter().chain(p2(0, 8)) {
            add("order", b, "Incr", v);
        }
    }
    for pair in ["SR-RR", "SR-SW", "SR-RW", "RR-SW", "RR-RW", "SW-RW"] {
        for v in p2(0, 6) {
            add("mix", pair, "Ratio", v);
        }
    }
    out
}

/// The suite's files beside the runs: plan, journal, summary.
fn write_suite_files(root: &std::path::Path, plan: &[PlanRun]) {
    let steps: Vec<serde_json::Value> = plan
        .iter()
        .map(|(name, e, s, p, v)| {
            let run = serde_json::json!({"name": name, "experiment": e, "series": s, "parameter": p, "value": v});
            if e == "calibration" {
                serde_json::json!({"kind": "calibrate", "baseline": s, "run": run})
            } else {
                let mut r = run;
                r["kind"] = "run".into();
                r
            }
        })
        .collect();
    let write = |name: &str, v: serde_json::Value| {
        std::fs::write(root.join(name), serde_json::to_string_pretty(&v).unwrap()).unwrap()
    };
    write(
        "plan.json",
        serde_json::json!({"suite": "uflip", "steps": steps}),
    );
    write(
        "suite.json",
        serde_json::json!({"suite": "uflip", "finished": true, "calibration": {
            "SR": {"startup": 0, "period": 1}, "RR": {"startup": 0, "period": 1},
            "SW": {"startup": 5000, "period": 64}, "RW": {"startup": 5000, "period": 64}}}),
    );
    write(
        "uflip-summary.json",
        serde_json::json!({"device": "sim:synthetic", "table3": {"sr_ms": 0.08, "rr_ms": 0.25, "sw_ms": 0.3, "rw_ms": 1.1,
            "pause_rw_ms": null, "locality_rw_bytes": 4194304, "locality_rw_relative": 1.3, "partitions": 4,
            "partitions_relative": 1.1, "reverse_relative": 1.0, "in_place_relative": 0.9, "large_incr_relative": 1.2},
            "hints": [{"number": 1, "paper": "Flash devices do incur latency: larger IOs are beneficial, even for reads.",
                "device": "Confirmed (synthetic).", "evidence": "-", "contradicts_paper": false}]}),
    );
    let m = root.join("manifest.json");
    let mut v: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&m).unwrap()).unwrap();
    v["suite"] =
        serde_json::json!({"name": "uflip", "state_enforcement": "random", "config": {"seed": 42}});
    std::fs::write(&m, serde_json::to_string_pretty(&v).unwrap()).unwrap();
}

fn generate(root: &std::path::Path, records: u64, plan: &[PlanRun], uflip: bool) {
    let runs = plan.len() as u64;
    let mut identity = BTreeMap::new();
    identity.insert("profile".to_string(), "synthetic".to_string());
    let manifest = Manifest {
        schema_version: flashlab_results::SCHEMA_VERSION,
        tool: ToolInfo {
            name: "flashlab".into(),
            version: "0.1.0".into(),
            git_commit: "bench".into(),
        },
        created_unix_s: 1_795_000_000,
        command_line: vec!["render_bench".into()],
        host: HostInfo {
            hostname: "bench".into(),
            kernel: "-".into(),
            cpus: 1,
        },
        device: DeviceInfo {
            name: "sim:synthetic".into(),
            kind: DeviceKind::Simulated,
            clock: ClockKind::Simulated,
            size_bytes: 64 << 30,
            logical_block_bytes: 512,
            identity,
        },
        engine: "simulator".into(),
        suite: None,
        runs: Vec::new(),
    };
    let mut dir = ResultsDir::create(root, manifest).expect("create results directory");
    let per_run = records / runs;
    let mut rng = 0x9e37_79b9_7f4a_7c15u64;
    let mut next = move || {
        rng ^= rng << 13;
        rng ^= rng >> 7;
        rng ^= rng << 17;
        rng
    };
    for (r, (name, _, series, _, value)) in plan.iter().enumerate() {
        let r = r as u64;
        let mixed = r % 4 == 3;
        // Baselines differ by an order of magnitude; the parameter scales it.
        let base = match series.as_str() {
            "SR" => 0.3,
            "RR" => 1.0,
            "SW" => 1.2,
            _ => 4.0,
        } * (1.0 + (value.abs() + 1.0).log2() / 8.0);
        let spec = serde_json::json!({
            "name": name,
            "primary": {"location": {"kind": "random"}, "mode": "write", "io_size_bytes": 32768, "io_shift_bytes": 0},
            "mix": if mixed { serde_json::json!({"secondary": {"location": {"kind": "sequential"}, "mode": "read", "io_size_bytes": 32768, "io_shift_bytes": 0}, "ratio_primary": 1, "ratio_secondary": 1}) } else { serde_json::Value::Null },
            "timing": {"kind": "consecutive"},
            "target_offset_bytes": 0, "target_size_bytes": 1u64 << 30,
            "io_count": per_run, "io_ignore": 1000, "parallel_degree": 1, "queue_depth": 1, "seed": 42
        });
        let idx = dir
            .plan_run(
                name,
                Workload::Pattern(serde_json::from_value(spec).unwrap()),
            )
            .unwrap();
        let mut w = dir.start_run(idx).unwrap();
        let mut t = 0u64;
        let period = 64 + r * 8;
        for i in 0..per_run {
            let noise = next() % 40_000;
            let lat = if i < 5_000 {
                80_000 + noise
            } else if i % period == period - 1 {
                2_000_000 + noise * 20
            } else if next() % 100_000 == 0 {
                50_000_000
            } else {
                250_000 + noise
            };
            let lat = (lat as f64 * base / 4.0) as u64 + 20_000;
            let mode = if mixed && i % 2 == 1 {
                Mode::Read
            } else {
                Mode::Write
            };
            w.append(&IoRecord {
                index: i,
                stream: 0,
                mode,
                offset_bytes: (next() % 32768) * 32768,
                size_bytes: 32768,
                submit_ns: t,
                complete_ns: t + lat,
                flags: if i < 1000 { FLAG_WARMUP } else { 0 },
            })
            .unwrap();
            t += lat + 1_000;
        }
        w.finish().unwrap();
        dir.finish_run(idx, RunStatus::Complete, None, None)
            .unwrap();
    }
    if uflip {
        write_suite_files(root, plan);
    }
}
