//! A small, fully deterministic results directory for the tests: fixed
//! timestamps, fixed host, latencies that are a pure function of the IO
//! number, so that rendered reports are byte-for-byte stable.
#![allow(dead_code)]

use flashlab_suite::figures::{
    CurveSpec, FigureGroup, FigureSpec, Metric, Plot, PointSpec, SuiteFigures, XKind,
};
use flashlab_suite::summary::{Compare, SuiteSummary, SummaryTable};
use flashlab_suite::table3::Table3;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use flashlab_device::{ClockKind, DeviceInfo, DeviceKind, Mode};
use flashlab_results::{
    HostInfo, IoRecord, Manifest, ResultsDir, RunStatus, ToolInfo, Workload, FLAG_ERROR,
    FLAG_WARMUP, SCHEMA_VERSION,
};

/// One run of the fixture: name, pattern JSON, and its records.
pub struct RunDef {
    pub name: &'static str,
    pub pattern: serde_json::Value,
    pub records: Vec<IoRecord>,
}

pub fn pattern(
    name: &str,
    location: &str,
    mode: &str,
    io_count: u64,
    io_ignore: u64,
    mix: bool,
) -> serde_json::Value {
    let basic = |loc: &str, m: &str| serde_json::json!({"location": {"kind": loc}, "mode": m, "io_size_bytes": 4096, "io_shift_bytes": 0});
    serde_json::json!({
        "name": name,
        "primary": basic(location, mode),
        "mix": if mix { serde_json::json!({"secondary": basic("random", "write"), "ratio_primary": 3, "ratio_secondary": 1}) } else { serde_json::Value::Null },
        "timing": {"kind": "consecutive"},
        "target_offset_bytes": 0,
        "target_size_bytes": 64u64 << 20,
        "io_count": io_count,
        "io_ignore": io_ignore,
        "parallel_degree": 1,
        "queue_depth": 1,
        "seed": 42
    })
}

/// Back-to-back IOs with the given latencies (ns), 4 KiB each.
pub fn records(
    latencies: &[u64],
    mode_of: impl Fn(u64) -> Mode,
    flags_of: impl Fn(u64) -> u8,
) -> Vec<IoRecord> {
    let mut t = 1_000;
    latencies
        .iter()
        .enumerate()
        .map(|(i, &lat)| {
            let i = i as u64;
            let r = IoRecord {
                index: i,
                stream: 0,
                mode: mode_of(i),
                offset_bytes: (i * 7919 % 16384) * 4096,
                size_bytes: 4096,
                submit_ns: t,
                complete_ns: t + lat,
                flags: flags_of(i),
            };
            t += lat + 500;
            r
        })
        .collect()
}

/// uFLIP-like random writes: a cheap start-up phase, then a period of 16 IOs
/// with one expensive IO (an erase) per period.
pub fn rw_latencies(n: u64, scale: u64) -> Vec<u64> {
    (0..n)
        .map(|i| {
            if i < 24 {
                (90 + i % 5 * 7) * scale
            } else if i % 16 == 15 {
                (4_000 + i % 3 * 500) * scale
            } else {
                (300 + (i * 37) % 120) * scale
            }
        })
        .collect()
}

pub fn sr_latencies(n: u64, scale: u64) -> Vec<u64> {
    (0..n).map(|i| (60 + (i * 13) % 25) * scale).collect()
}

pub fn default_runs(scale: u64) -> Vec<RunDef> {
    vec![
        RunDef {
            name: "RW",
            pattern: pattern("RW", "random", "write", 96, 8, false),
            records: records(
                &rw_latencies(96, scale),
                |_| Mode::Write,
                |i| if i < 8 { FLAG_WARMUP } else { 0 },
            ),
        },
        RunDef {
            name: "SR",
            pattern: pattern("SR", "sequential", "read", 48, 0, false),
            records: records(&sr_latencies(48, scale), |_| Mode::Read, |_| 0),
        },
        RunDef {
            name: "mix",
            pattern: pattern("mix", "sequential", "read", 40, 0, true),
            records: records(
                &(0..40)
                    .map(|i| {
                        if i % 4 == 3 {
                            900 * scale
                        } else {
                            70 * scale + i
                        }
                    })
                    .collect::<Vec<_>>(),
                |i| if i % 4 == 3 { Mode::Write } else { Mode::Read },
                |i| if i == 21 { FLAG_ERROR } else { 0 },
            ),
        },
    ]
}

pub fn device(name: &str, kind: DeviceKind) -> DeviceInfo {
    let mut identity = BTreeMap::new();
    let clock = if kind == DeviceKind::Simulated {
        identity.insert("profile".to_string(), "ssd-m".to_string());
        identity.insert("channels".to_string(), "4".to_string());
        ClockKind::Simulated
    } else {
        identity.insert("model".to_string(), "FAKE SSD 9000".to_string());
        identity.insert("rotational".to_string(), "0".to_string());
        ClockKind::Wall
    };
    DeviceInfo {
        name: name.to_string(),
        kind,
        clock,
        size_bytes: 1 << 30,
        logical_block_bytes: 512,
        identity,
    }
}

/// Writes a results directory at `root` with the given device and runs.
/// `extra` is merged into manifest.json; `journal`, if any, is written as the
/// suite journal `suite.json`.
pub fn write_dir(
    root: &Path,
    dev: DeviceInfo,
    runs: Vec<RunDef>,
    extra: Option<serde_json::Value>,
    journal: Option<serde_json::Value>,
) -> PathBuf {
    let manifest = Manifest {
        schema_version: SCHEMA_VERSION,
        tool: ToolInfo {
            name: "flashlab".into(),
            version: "0.1.0".into(),
            git_commit: "0123abcdef".into(),
        },
        created_unix_s: 1_795_000_000,
        command_line: vec![
            "flashlab".into(),
            "run".into(),
            "--device".into(),
            dev.name.clone(),
            "--pattern-file".into(),
            "my runs.toml".into(),
        ],
        host: HostInfo {
            hostname: "testhost".into(),
            kernel: "6.1.0".into(),
            cpus: 8,
        },
        device: dev,
        engine: "simulator".into(),
        suite: None,
        runs: Vec::new(),
    };
    let mut dir = ResultsDir::create(root, manifest).expect("create results dir");
    let idxs: Vec<usize> = runs
        .iter()
        .map(|r| {
            dir.plan_run(
                r.name,
                Workload::Pattern(serde_json::from_value(r.pattern.clone()).expect("pattern")),
            )
            .unwrap()
        })
        .collect();
    for (run, idx) in runs.iter().zip(idxs) {
        let mut w = dir.start_run(idx).unwrap();
        for rec in &run.records {
            w.append(rec).unwrap();
        }
        w.finish().unwrap();
        let device_stats =
            (idx == 0).then(|| serde_json::json!({"flash_programs": 123, "waf": 1.5}));
        dir.finish_run(idx, RunStatus::Complete, None, device_stats)
            .unwrap();
    }
    // As every command does when it ends: manifest.json holds every run.
    dir.compact().unwrap();
    if let Some(extra) = extra {
        patch_json(&root.join("manifest.json"), extra);
    }
    if let Some(j) = journal {
        std::fs::write(
            root.join("suite.json"),
            serde_json::to_string_pretty(&j).unwrap(),
        )
        .unwrap();
    }
    root.to_path_buf()
}

pub fn patch_json(path: &Path, extra: serde_json::Value) {
    let mut v: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
    for (k, x) in extra.as_object().unwrap() {
        v[k] = x.clone();
    }
    std::fs::write(path, serde_json::to_string_pretty(&v).unwrap()).unwrap();
}

/// The standard fixture: a simulated device, as `flashlab suite` leaves it:
/// the state enforcement in the manifest, and run RW as the calibration run
/// of the suite journal, which measured its start-up phase and period.
pub fn sim_dir(root: &Path) -> PathBuf {
    write_dir(
        root,
        device("sim:ssd-m", DeviceKind::Simulated),
        default_runs(1_000),
        Some(
            serde_json::json!({"suite": {"name": "uflip", "state_enforcement": "random", "config": {"seed": 42}}}),
        ),
        Some(serde_json::json!({
            "suite": "uflip",
            "plan": {"suite": "uflip", "steps": [
                {"kind": "enforce-state", "method": "random", "reason": "start"},
                {"kind": "calibrate", "baseline": "RW", "run": {"name": "RW"}},
                {"kind": "run", "name": "SR"}
            ]},
            "completed_steps": 3,
            "calibration": {"RW": {"startup": 24, "period": 16}},
            "finished": true
        })),
    )
}

/// A second device for comparisons: slower, and without the "mix" run.
pub fn block_dir(root: &Path) -> PathBuf {
    let mut runs = default_runs(1_700);
    runs.truncate(2);
    write_dir(
        root,
        device("/dev/fake0", DeviceKind::BlockDevice),
        runs,
        None,
        None,
    )
}

/// Replaces the temporary directory's path (which changes every run) in a rendering.
pub fn normalize(text: &str, tmp: &Path) -> String {
    text.replace(&tmp.display().to_string(), "TMP")
}

/// A small uFLIP suite as `flashlab suite uflip` leaves it: a calibration
/// run, granularity runs of SR and RW at two IO sizes, alignment runs of RW
/// (a categorical axis), the plan, the journal and `uflip-summary.json`
/// (Table-3 row and hints). `scale` slows the device down.
pub fn uflip_dir(root: &Path, name: &str, scale: u64) -> PathBuf {
    const RUNS: [(&str, &str, &str, &str, &str, f64); 7] = [
        ("calibrate-RW", "calibration", "RW", "random", "write", 96.0),
        (
            "granularity-SR-4KiB",
            "granularity",
            "SR",
            "sequential",
            "read",
            4096.0,
        ),
        (
            "granularity-SR-32KiB",
            "granularity",
            "SR",
            "sequential",
            "read",
            32768.0,
        ),
        (
            "granularity-RW-4KiB",
            "granularity",
            "RW",
            "random",
            "write",
            4096.0,
        ),
        (
            "granularity-RW-32KiB",
            "granularity",
            "RW",
            "random",
            "write",
            32768.0,
        ),
        ("alignment-RW-0B", "alignment", "RW", "random", "write", 0.0),
        (
            "alignment-RW-512B",
            "alignment",
            "RW",
            "random",
            "write",
            512.0,
        ),
    ];
    let runs = RUNS
        .iter()
        .enumerate()
        .map(|(k, &(run, _, base, loc, mode, value))| {
            let big = if value >= 32768.0 { 3 } else { 1 };
            let lat: Vec<u64> = if base == "RW" {
                rw_latencies(64, scale * big + k as u64)
            } else {
                sr_latencies(64, scale * big)
            };
            RunDef {
                name: run,
                pattern: pattern(run, loc, mode, 64, 0, false),
                records: records(
                    &lat,
                    |_| {
                        if mode == "read" {
                            Mode::Read
                        } else {
                            Mode::Write
                        }
                    },
                    |_| 0,
                ),
            }
        })
        .collect();
    let step = |&(run, exp, base, _, _, value): &(&str, &str, &str, &str, &str, f64)| {
        let param = match exp {
            "calibration" => "IOCount",
            "granularity" => "IOSize",
            _ => "IOShift",
        };
        let r = serde_json::json!({"name": run, "experiment": exp, "series": base, "parameter": param, "value": value, "adaptive": exp != "calibration"});
        if exp == "calibration" {
            serde_json::json!({"kind": "calibrate", "baseline": base, "run": r})
        } else {
            let mut r = r;
            r["kind"] = "run".into();
            r
        }
    };
    let mut steps = vec![
        serde_json::json!({"kind": "enforce-state", "method": "random", "reason": "initial state"}),
    ];
    steps.extend(RUNS.iter().map(step));
    let dir = write_dir(
        root,
        device(name, DeviceKind::Simulated),
        runs,
        Some(
            serde_json::json!({"suite": {"name": "uflip", "state_enforcement": "random", "config": {"seed": 42}}}),
        ),
        Some(serde_json::json!({
            "suite": "uflip",
            "completed_steps": 8,
            "calibration": {"RW": {"startup": 16, "period": 8}},
            "finished": true
        })),
    );
    std::fs::write(
        dir.join("plan.json"),
        serde_json::to_string_pretty(&serde_json::json!({"suite": "uflip", "steps": steps}))
            .unwrap(),
    )
    .unwrap();
    let ms = scale as f64 / 1000.0;
    // The summary as `flashlab suite uflip` writes it: typed, the Table-3
    // row and the hints as tables the report lays out without knowing uFLIP.
    let t = Table3 {
        sr_ms: Some(0.07 * ms),
        rw_ms: Some(1.2 * ms),
        locality_rw_bytes: Some(4194304),
        locality_rw_relative: Some(1.05),
        partitions: Some(4),
        partitions_relative: Some(2.5),
        ..Table3::default()
    };
    let hints = [
        (
            1,
            "Flash devices do incur latency: larger IOs are beneficial, even for reads.",
            format!("Confirmed on {name}."),
            "SR 4KiB: 70 us; SR 32KiB: 210 us",
            "agrees",
        ),
        (
            3,
            "Blocks should be aligned to flash pages.",
            "Alignment hardly matters for RW here.".to_string(),
            "RW aligned 1.2 ms",
            "differs from the paper",
        ),
    ];
    let summary = SuiteSummary {
        suite: "uflip".into(),
        title: "uFLIP (Bouganim, Jonsson & Bonnet, CIDR 2009)".into(),
        device: name.into(),
        tables: vec![
            SummaryTable {
                id: "uflip-table3".into(),
                title: "uFLIP Table 3 row".into(),
                paragraphs: vec![
                    "This device's row of uFLIP Table 3.".into(),
                    "Calibration (uFLIP section 4.2): RW start-up 16 IOs, period 8.".into(),
                ],
                header: Table3::display_header().to_vec(),
                rows: vec![t.cells().to_vec()],
                compare: Compare::Rows,
                compare_title: Some("uFLIP Table 3, side by side".into()),
                detail_only: false,
            },
            SummaryTable {
                id: "uflip-hints".into(),
                title: "uFLIP design hints".into(),
                paragraphs: vec![],
                header: ["#", "this device", "paper's hint", "measured", "vs paper"]
                    .map(str::to_string)
                    .to_vec(),
                rows: hints
                    .iter()
                    .map(|(n, paper, device, evidence, verdict)| {
                        vec![
                            n.to_string(),
                            device.clone(),
                            paper.to_string(),
                            evidence.to_string(),
                            verdict.to_string(),
                        ]
                    })
                    .collect(),
                compare: Compare::Column {
                    keys: vec![0, 2],
                    value: 1,
                },
                compare_title: None,
                detail_only: false,
            },
        ],
        findings: vec![],
        notes: vec![],
        flagged_runs: vec![],
        detail: serde_json::json!({"table3": t})
            .as_object()
            .unwrap()
            .clone(),
    };
    std::fs::write(
        dir.join("uflip-summary.json"),
        serde_json::to_string_pretty(&summary).unwrap(),
    )
    .unwrap();
    // The figures as the suite declares them: a curve per baseline.
    let point = |run: &str, x: f64| PointSpec {
        run: run.into(),
        x,
        category: None,
    };
    let curve = |label: &str, color: usize, points: Vec<PointSpec>| CurveSpec {
        label: label.into(),
        color: Some(color),
        reference: false,
        points,
    };
    let figure =
        |id: &str, title: &str, x_label: &str, x: XKind, curves: Vec<CurveSpec>| FigureSpec {
            id: id.into(),
            title: title.into(),
            plot: Plot::Points {
                x_label: x_label.into(),
                x,
                metric: Metric::Latency,
            },
            curves,
            markers: vec![],
            wide: false,
        };
    let figures = SuiteFigures {
        suite: "uflip".into(),
        groups: vec![
            FigureGroup {
                id: "uflip-benchmarks".into(),
                title: "uFLIP micro-benchmarks".into(),
                paragraph: "One chart per micro-benchmark.".into(),
                figures: vec![
                    figure(
                        "granularity",
                        "uFLIP micro-benchmark 1 (Granularity): mean response time by IOSize",
                        "IOSize",
                        XKind::LogBytes,
                        vec![
                            curve(
                                "SR",
                                0,
                                vec![
                                    point("granularity-SR-4KiB", 4096.0),
                                    point("granularity-SR-32KiB", 32768.0),
                                ],
                            ),
                            curve(
                                "RW",
                                3,
                                vec![
                                    point("granularity-RW-4KiB", 4096.0),
                                    point("granularity-RW-32KiB", 32768.0),
                                ],
                            ),
                        ],
                    ),
                    figure(
                        "alignment",
                        "uFLIP micro-benchmark 2 (Alignment): mean response time by IOShift",
                        "IOShift",
                        XKind::CatBytes,
                        vec![curve(
                            "RW",
                            3,
                            vec![
                                point("alignment-RW-0B", 0.0),
                                point("alignment-RW-512B", 512.0),
                            ],
                        )],
                    ),
                ],
            },
            FigureGroup {
                id: "uflip-phases".into(),
                title: "uFLIP start-up and running phases (Figures 3-5)".into(),
                paragraph: "The calibration runs.".into(),
                figures: vec![FigureSpec {
                    id: "cal-RW".into(),
                    title: "uFLIP Figures 3-5: latency over IO number, RW baseline calibration run"
                        .into(),
                    plot: Plot::Timeline,
                    curves: vec![curve("RW", 3, vec![point("calibrate-RW", 0.0)])],
                    markers: vec![],
                    wide: true,
                }],
            },
        ],
        featured_runs: vec!["calibrate-RW".into()],
    };
    std::fs::write(
        dir.join("figures.json"),
        serde_json::to_string_pretty(&figures).unwrap(),
    )
    .unwrap();
    dir
}
