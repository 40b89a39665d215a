//! How fast is a report of a big suite? Generates a synthetic results
//! directory (default: 20 runs of 1,000,000 IOs = 20 M per-IO records, 800 MB),
//! renders it as HTML, Markdown and JSON, and prints times and sizes.
//!
//! ```sh
//! cargo run --release -p flashlab-report --example render_bench -- [--records N] [--runs R] [--dir DIR]
//! ```
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
    let mut args = std::env::args().skip(1);
    while let Some(a) = args.next() {
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
        generate(&root, records, runs);
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
    eprintln!("usage: render_bench [--records N] [--runs R] [--dir DIR]");
    std::process::exit(2)
}

/// uFLIP-like runs: a cheap start-up phase, then a running phase with a
/// periodic expensive IO, noise, and rare large outliers; every fourth run
/// mixes reads and writes.
fn generate(root: &std::path::Path, records: u64, runs: u64) {
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
    for r in 0..runs {
        let name = format!("run{:02}", r + 1);
        let mixed = r % 4 == 3;
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
                &name,
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
}
