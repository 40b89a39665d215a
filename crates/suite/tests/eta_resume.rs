//! A resumed suite's ETA starts from what its completed runs took, read
//! from their records (`eta::history_of`), not from nothing.

use std::collections::BTreeMap;

use flashlab_device::{ClockKind, DeviceInfo, DeviceKind, Mode};
use flashlab_pattern::{Basic, Location, PatternSpec, Timing};
use flashlab_results::{
    HostInfo, IoRecord, Manifest, ResultsDir, RunStatus, ToolInfo, Workload, SCHEMA_VERSION,
};
use flashlab_suite::eta::{history_of, EtaContext, Span, SuiteEta};
use flashlab_suite::plan::{RunStep, Step};

const MS: u64 = 1_000_000;
const SETTLE_NS: u64 = 150 * MS;

fn spec(name: &str, mode: Mode, io_count: u64) -> PatternSpec {
    PatternSpec {
        name: name.into(),
        primary: Basic {
            location: Location::Random,
            mode,
            io_size_bytes: 4096,
            io_shift_bytes: 0,
        },
        mix: None,
        timing: Timing::Consecutive,
        target_offset_bytes: 0,
        target_size_bytes: 1 << 30,
        io_count,
        io_ignore: 0,
        parallel_degree: 1,
        queue_depth: 1,
        seed: 1,
        runtime_ns: None,
        time_based: false,
        rate_iops: None,
        io_size_split: Vec::new(),
    }
}

fn step(name: &str, mode: Mode, io_count: u64) -> Step {
    Step::Run(RunStep {
        name: name.into(),
        experiment: "x".into(),
        series: "x".into(),
        parameter: "x".into(),
        value: 0.0,
        spec: spec(name, mode, io_count),
        adaptive: false,
    })
}

fn manifest() -> Manifest {
    Manifest {
        schema_version: SCHEMA_VERSION,
        tool: ToolInfo {
            name: "flashlab".into(),
            version: "0.1.0".into(),
            git_commit: "test".into(),
        },
        created_unix_s: 1_795_000_000,
        command_line: vec!["flashlab".into(), "suite".into()],
        host: HostInfo {
            hostname: "testhost".into(),
            kernel: "6.1.0".into(),
            cpus: 2,
        },
        device: DeviceInfo {
            name: "/dev/loop9".into(),
            kind: DeviceKind::BlockDevice,
            clock: ClockKind::Wall,
            size_bytes: 1 << 30,
            logical_block_bytes: 512,
            identity: BTreeMap::from([("settle_ms".to_string(), "150".to_string())]),
        },
        engine: "io_uring".into(),
        suite: None,
        runs: Vec::new(),
    }
}

/// `ios` IOs one after another, each `cost_ns`, the first submitted at
/// `start_ns` (a device clock's origin is arbitrary).
fn records(ios: u64, cost_ns: u64, start_ns: u64, mode: Mode) -> Vec<IoRecord> {
    (0..ios)
        .map(|i| IoRecord {
            index: i,
            submit_ns: start_ns + i * cost_ns,
            complete_ns: start_ns + (i + 1) * cost_ns,
            offset_bytes: 4096 * i,
            size_bytes: 4096,
            stream: 0,
            mode,
            flags: 0,
        })
        .collect()
}

#[test]
fn a_resumed_suite_learns_the_completed_runs_costs_from_their_records() {
    let t = tempfile::tempdir().unwrap();
    // Random reads cost 0.1 ms, random writes 2 ms. The suite was
    // interrupted during its third step: its run has some records, but
    // it is not complete and its step is run again.
    let steps = vec![
        step("rr", Mode::Read, 1000),
        step("rw", Mode::Write, 500),
        step("rw-again", Mode::Write, 2000),
        step("rr-again", Mode::Read, 3000),
    ];
    let mut results = ResultsDir::create(&t.path().join("r"), manifest()).unwrap();
    for s in &steps {
        let r = &s.runs()[0];
        results
            .plan_run(&r.name, Workload::Pattern(r.spec.clone()))
            .unwrap();
    }
    for (idx, ios, cost_ns, mode, status) in [
        (0, 1000, 100_000, Mode::Read, RunStatus::Complete),
        (1, 500, 2 * MS, Mode::Write, RunStatus::Complete),
        (2, 7, 50 * MS, Mode::Write, RunStatus::Interrupted),
    ] {
        let mut w = results.start_run(idx).unwrap();
        for r in records(ios, cost_ns, 9_000 * MS * (idx as u64 + 1), mode) {
            w.append(&r).unwrap();
        }
        w.finish().unwrap();
        results.finish_run(idx, status, None, None).unwrap();
    }

    let history = history_of(&results, SETTLE_NS);
    assert_eq!(
        history,
        vec![
            ("rr".to_string(), 1000, 100 * MS + SETTLE_NS),
            ("rw".to_string(), 500, 1000 * MS + SETTLE_NS),
        ]
    );

    let ctx = EtaContext {
        device_bytes: 1 << 30,
        min_ios: 64,
        state_queue_depth: 32,
        idle_is_wall_time: true,
        run_settle_ns: SETTLE_NS,
    };
    let mut eta = SuiteEta::new(steps, ctx, 0);
    eta.resume_from(2, &history);
    assert_eq!(eta.runs(), (2, 4));
    // The runner's first report: step 3 starts. Left: 2000 writes at 2 ms
    // and 3000 reads at 0.1 ms, each run after its settle.
    eta.step_started(3, 0, 0);
    assert_eq!(
        eta.remaining(0),
        Some(Span::exact(
            (2000 * 2 * MS + 3000 * 100_000 + 2 * SETTLE_NS) as f64
        ))
    );
}
