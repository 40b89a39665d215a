//! The one verb, as its callers use it: a workload checked once, its errors
//! named per front end, and `run` on a simulated device.

use std::path::Path;
use std::sync::atomic::AtomicBool;

use flashlab_device::Device;
use flashlab_results::{Manifest, ResultsDir, ToolInfo};
use flashlab_workload::{run, DeviceNeeds, FrontEnd, RunOptions, TraceSpec, Workload};

fn trace(speed: f64, closed_loop: bool, queue_depth: Option<usize>) -> TraceSpec {
    TraceSpec {
        path: "t.trace".into(),
        format: None,
        closed_loop,
        queue_depth,
        speed,
        fit: "error".into(),
    }
}

#[test]
fn a_refused_setting_is_named_as_each_front_end_writes_it() {
    let e = trace(0.0, false, None).check().unwrap_err();
    assert!(e.is_user_error());
    assert_eq!(
        e.render(FrontEnd::Cli),
        "--speed 0 must be a positive number, e.g. --speed 2"
    );
    assert_eq!(
        e.render(FrontEnd::Grid),
        "[trace] speed 0 must be a positive number, e.g. speed = 2.0"
    );
    assert_eq!(
        e.render(FrontEnd::Python),
        r#"trace["speed"] 0 must be a positive number, e.g. trace={"path": ..., "speed": 2.0}"#
    );
    let e = trace(1.0, false, Some(5000)).check().unwrap_err();
    assert_eq!(
        e.render(FrontEnd::Cli),
        "--queue-depth must be between 1 and 4096"
    );
    assert_eq!(
        e.render(FrontEnd::Grid),
        "[trace] queue_depth must be between 1 and 4096"
    );
    assert_eq!(
        e.render(FrontEnd::Python),
        r#"trace["queue_depth"] must be between 1 and 4096"#
    );
}

#[test]
fn a_speed_with_closed_loop_replay_is_refused_from_every_front_end() {
    // A grid used to accept it and ignore the speed; the CLI refused it.
    let e = trace(2.0, true, None).check().unwrap_err();
    assert_eq!(
        e.render(FrontEnd::Grid),
        "[trace] speed applies to open-loop replay; drop it or drop [trace] closed_loop"
    );
    assert!(trace(1.0, true, Some(8)).check().is_ok());
}

#[test]
fn a_trace_is_read_with_the_bounded_reader() {
    // /dev/zero is refused at once, not read into memory.
    let spec = TraceSpec {
        path: "/dev/zero".into(),
        ..trace(1.0, false, None)
    };
    match spec.read() {
        Ok(_) => panic!("/dev/zero was read as a trace"),
        Err(e) => assert!(e.is_user_error(), "{e}"),
    }
}

fn results_on(dir: &Path, device: &dyn Device) -> ResultsDir {
    ResultsDir::create(
        dir,
        Manifest {
            schema_version: flashlab_results::SCHEMA_VERSION,
            tool: ToolInfo {
                name: "test".into(),
                version: "0".into(),
                git_commit: "unknown".into(),
            },
            created_unix_s: 0,
            command_line: vec![],
            host: flashlab_workload::host_info(),
            device: device.info().clone(),
            engine: "simulator".into(),
            suite: None,
            runs: Vec::new(),
        },
    )
    .unwrap()
}

/// Runs `workload_json` with `seed` on a small simulated device; the bytes of its records.
fn records_of(workload_json: &str, seed: u64) -> Vec<u8> {
    let workload: Workload = serde_json::from_str(workload_json).unwrap();
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("r");
    let mut device = flashlab_sim::open_device("ssd-m,capacity=1GiB", seed, 64).unwrap();
    let mut results = results_on(&out, &device);
    let never = AtomicBool::new(false);
    let options = RunOptions {
        seed,
        records: true,
        stop: &never,
    };
    let outcome = run(&workload, &mut device, &mut results, &options)
        .unwrap_or_else(|f| panic!("{}", f.error));
    assert_eq!(outcome.runs.len(), 1);
    assert!(outcome.suite.is_none());
    assert_eq!(outcome.runs[0].stats.all.ios, 2000);
    std::fs::read(out.join("runs/001-RW/records.bin")).unwrap()
}

#[test]
fn run_is_deterministic_and_a_run_without_a_seed_takes_the_workloads() {
    let unseeded = r#"{"kind": "patterns", "runs": [{"pattern": "RW", "io_count": 2000}]}"#;
    let a = records_of(unseeded, 7);
    assert_eq!(a, records_of(unseeded, 7));
    assert_ne!(
        a,
        records_of(unseeded, 8),
        "the seed drives the random writes"
    );
    // A run with its own seed keeps it whatever the workload's.
    let seeded =
        r#"{"kind": "patterns", "runs": [{"pattern": "RW", "io_count": 2000, "seed": 7}]}"#;
    assert_eq!(records_of(seeded, 7), records_of(unseeded, 7));
}

#[test]
fn a_refused_pattern_fails_before_any_run() {
    let workload: Workload = serde_json::from_str(
        r#"{"kind": "patterns", "runs": [{"pattern": "SR", "io_count": 10, "parallel": 8192}]}"#,
    )
    .unwrap();
    let tmp = tempfile::tempdir().unwrap();
    let mut device = flashlab_sim::open_device("ssd-m,capacity=1GiB", 1, 64).unwrap();
    let mut results = results_on(&tmp.path().join("r"), &device);
    let never = AtomicBool::new(false);
    let options = RunOptions {
        seed: 1,
        records: true,
        stop: &never,
    };
    let failed = match run(&workload, &mut device, &mut results, &options) {
        Ok(_) => panic!("8192 streams were accepted"),
        Err(f) => f,
    };
    assert!(failed.outcome.runs.is_empty());
    assert!(failed.error.is_user_error(), "{}", failed.error);
}

/// A device that counts nothing beyond its IOs, as a real disk or file:
/// the simulator underneath, its statistics hidden.
struct CountsNothing(Box<dyn Device>);

impl Device for CountsNothing {
    fn info(&self) -> &flashlab_device::DeviceInfo {
        self.0.info()
    }
    fn now_ns(&self) -> flashlab_device::Nanos {
        self.0.now_ns()
    }
    fn max_outstanding(&self) -> usize {
        self.0.max_outstanding()
    }
    fn submit(
        &mut self,
        req: flashlab_device::IoRequest,
    ) -> Result<(), flashlab_device::DeviceError> {
        self.0.submit(req)
    }
    fn poll(
        &mut self,
        deadline_ns: Option<flashlab_device::Nanos>,
        out: &mut Vec<flashlab_device::Completion>,
    ) -> Result<(), flashlab_device::DeviceError> {
        self.0.poll(deadline_ns, out)
    }
    fn idle_until(
        &mut self,
        deadline_ns: flashlab_device::Nanos,
    ) -> Result<(), flashlab_device::DeviceError> {
        self.0.idle_until(deadline_ns)
    }
}

#[test]
fn a_replay_on_a_device_that_counts_nothing_keeps_its_late_requests() {
    let tmp = tempfile::tempdir().unwrap();
    let trace_path = tmp.path().join("t.trace");
    // Four writes due at once with one allowed in flight: three are late.
    std::fs::write(
        &trace_path,
        "# flashlab-trace v1\n0 W 0 4096\n0 W 4096 4096\n0 W 8192 4096\n0 W 12288 4096\n",
    )
    .unwrap();
    let workload = Workload::Trace(TraceSpec {
        path: trace_path,
        queue_depth: Some(1),
        ..trace(1.0, false, None)
    });
    let sim = flashlab_sim::open_device("ssd-m,capacity=1GiB", 1, 64).unwrap();
    let mut device = CountsNothing(Box::new(sim));
    assert!(device.stats().sim().is_none());
    let mut results = results_on(&tmp.path().join("r"), &device);
    let never = AtomicBool::new(false);
    let options = RunOptions {
        seed: 1,
        records: true,
        stop: &never,
    };
    let outcome = run(&workload, &mut device, &mut results, &options)
        .unwrap_or_else(|f| panic!("{}", f.error));
    assert_eq!(
        outcome.runs[0].device_stats,
        Some(serde_json::json!({ "replay": { "late_requests": 3, "flushes": 0 } }))
    );
}

#[test]
fn a_prepared_trace_says_what_the_device_must_offer() {
    let tmp = tempfile::tempdir().unwrap();
    let trace_path = tmp.path().join("t.trace");
    let sim = flashlab_sim::open_device("ssd-m,capacity=1GiB", 1, 64).unwrap();
    let needs_of = |text: &str| {
        std::fs::write(&trace_path, text).unwrap();
        let workload = Workload::Trace(TraceSpec {
            path: trace_path.clone(),
            ..trace(1.0, false, Some(2))
        });
        let prepared = workload.prepare(1, sim.info()).unwrap();
        prepared.needs().expect("a replay has needs")
    };
    // Reads and a flush: no write access (fsync works read-only); at most
    // the replay's queue depth in flight.
    let reads = needs_of("# flashlab-trace v1\n0 R 0 4096\n0 R 8192 16384\n1 F 0 0\n");
    assert_eq!(
        reads,
        DeviceNeeds {
            writes: false,
            max_outstanding: 2,
            max_io_bytes: 16384
        }
    );
    // One trim makes it a writing workload.
    assert!(needs_of("# flashlab-trace v1\n0 R 0 4096\n5 T 0 4096\n").writes);
}

#[test]
fn pattern_runs_need_their_largest_io_and_most_outstanding() {
    let sim = flashlab_sim::open_device("ssd-m,capacity=1GiB", 1, 64).unwrap();
    let workload: Workload = serde_json::from_str(
        r#"{"kind": "patterns", "runs": [
            {"name": "a", "pattern": "SR", "io_size": "4KiB", "io_count": 8},
            {"name": "b", "pattern": "RR", "io_size": "64KiB", "io_count": 8, "queue_depth": 8}]}"#,
    )
    .unwrap();
    let needs = workload.prepare(1, sim.info()).unwrap().needs().unwrap();
    assert_eq!(
        needs,
        DeviceNeeds {
            writes: false,
            max_outstanding: 8,
            max_io_bytes: 65536
        }
    );
}

/// A pattern's refused parameter is named as each front end writes it: a
/// flag on the command line, a `[[run]]` key in a grid, a dict key in
/// Python (issue 34 item 1), with the run's position when there are several.
#[test]
fn a_refused_pattern_parameter_is_named_as_each_front_end_writes_it() {
    let run = |json: &str| -> flashlab_pattern::PatternArgs { serde_json::from_str(json).unwrap() };
    let e = flashlab_workload::check_patterns(&[run(r#"{"pattern": "RW", "io_size": 1000}"#)])
        .unwrap_err();
    assert!(e.is_user_error());
    assert_eq!(
        e.render(FrontEnd::Cli),
        "IOSize 1000 B is not a positive multiple of 512 B; use e.g. --io-size 4KiB"
    );
    assert_eq!(
        e.render(FrontEnd::Grid),
        "IOSize 1000 B is not a positive multiple of 512 B; use e.g. io_size = \"4KiB\""
    );
    assert_eq!(
        e.render(FrontEnd::Python),
        r#"IOSize 1000 B is not a positive multiple of 512 B; use e.g. pattern={..., "io_size": "4KiB"}"#
    );
    let e = flashlab_workload::check_patterns(&[
        run(r#"{"pattern": "RW"}"#),
        run(r#"{"pattern": "RR", "queue_depth": 0}"#),
    ])
    .unwrap_err();
    assert_eq!(
        e.render(FrontEnd::Cli),
        "run 2: queue depth must be at least 1; pass --queue-depth 1 or more"
    );
    assert_eq!(
        e.render(FrontEnd::Grid),
        "run 2: queue depth must be at least 1; pass queue_depth = 1 or more"
    );
    assert_eq!(
        e.render(FrontEnd::Python),
        r#"run 2: queue depth must be at least 1; pass pattern={..., "queue_depth": 1} or more"#
    );
}

/// What a terminal is told: each run as it starts, its progress, its end.
#[derive(Default)]
struct Told {
    events: Vec<String>,
    progress_reports: u64,
}

impl flashlab_workload::Observer for Told {
    fn run_started(&mut self, start: &flashlab_workload::RunStart<'_>) {
        self.events.push(format!(
            "start {} {}/{}",
            start.name,
            start.index + 1,
            start.count
        ));
    }
    fn progress(&mut self, _done: u64, _total: u64) {
        self.progress_reports += 1;
    }
    fn run_finished(&mut self, summary: &flashlab_results::RunSummary) {
        self.events
            .push(format!("end {} {:?}", summary.name, summary.status));
    }
}

fn prepared(workload_json: &str, device: &dyn Device) -> flashlab_workload::Prepared {
    let workload: Workload = serde_json::from_str(workload_json).unwrap();
    workload.prepare(1, device.info()).unwrap()
}

#[test]
fn an_observer_is_told_each_run_as_it_starts_progresses_and_ends() {
    let tmp = tempfile::tempdir().unwrap();
    let mut device = flashlab_sim::open_device("ssd-m,capacity=1GiB", 1, 64).unwrap();
    let mut results = results_on(&tmp.path().join("r"), &device);
    let never = AtomicBool::new(false);
    let options = RunOptions {
        seed: 1,
        records: true,
        stop: &never,
    };
    let workload = prepared(
        r#"{"kind": "patterns", "runs": [
            {"name": "a", "pattern": "SW", "io_count": 1000},
            {"name": "b", "pattern": "RR", "io_count": 1000}]}"#,
        &device,
    );
    let mut told = Told::default();
    let outcome =
        flashlab_workload::run_observed(workload, &mut device, &mut results, &options, &mut told)
            .unwrap_or_else(|f| panic!("{}", f.error));
    assert_eq!(outcome.runs.len(), 2);
    assert_eq!(
        told.events,
        [
            "start a 1/2",
            "end a Complete",
            "start b 2/2",
            "end b Complete"
        ]
    );
    assert!(
        told.progress_reports > 0,
        "progress is reported while a run runs"
    );
}

#[test]
fn a_stopped_workload_saves_its_run_as_interrupted_and_says_it_was_stopped() {
    let tmp = tempfile::tempdir().unwrap();
    let mut device = flashlab_sim::open_device("ssd-m,capacity=1GiB", 1, 64).unwrap();
    let mut results = results_on(&tmp.path().join("r"), &device);
    // Set before the run: it submits nothing and ends interrupted.
    let stopped = AtomicBool::new(true);
    let options = RunOptions {
        seed: 1,
        records: true,
        stop: &stopped,
    };
    let workload = prepared(
        r#"{"kind": "patterns", "runs": [
            {"name": "a", "pattern": "SW", "io_count": 1000},
            {"name": "b", "pattern": "RR", "io_count": 1000}]}"#,
        &device,
    );
    let mut told = Told::default();
    let failed = match flashlab_workload::run_observed(
        workload,
        &mut device,
        &mut results,
        &options,
        &mut told,
    ) {
        Ok(_) => panic!("a stopped workload ran to its end"),
        Err(f) => f,
    };
    assert!(
        matches!(failed.error, flashlab_workload::WorkloadError::Stopped(_)),
        "{}",
        failed.error
    );
    assert_eq!(told.events, ["start a 1/2", "end a Interrupted"]);
    let run = &failed.outcome.runs[0];
    assert_eq!(run.status, flashlab_results::RunStatus::Interrupted);
    // The manifest says so by the status alone, as `flashlab run` saves it.
    assert_eq!(run.error, None);
    let summary: serde_json::Value =
        serde_json::from_slice(&std::fs::read(tmp.path().join("r/summary.json")).unwrap()).unwrap();
    assert_eq!(summary["runs"][0]["status"], "interrupted");
}
