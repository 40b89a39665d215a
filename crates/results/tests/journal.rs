//! The manifest's journal: a directory reads the same whether its command
//! ended (compacted) or was killed (manifest.json + manifest.jsonl), a torn
//! last line is tolerated and reported, a damaged middle line is an error
//! naming its file and line, and directories written before the journal
//! existed still open.

use std::collections::BTreeMap;
use std::fs;
use std::io::Write;
use std::path::Path;

use flashlab_device::{ClockKind, DeviceInfo, DeviceKind};
use flashlab_results::{
    read_manifest, HostInfo, IoRecord, Manifest, ManifestError, ReplaySpec, ResultsDir, RunStatus,
    ToolInfo, Workload, JOURNAL_FILE, SCHEMA_VERSION,
};

fn manifest() -> Manifest {
    Manifest {
        schema_version: SCHEMA_VERSION,
        tool: ToolInfo {
            name: "flashlab".into(),
            version: "0.1.0".into(),
            git_commit: "test".into(),
        },
        created_unix_s: 1_795_000_000,
        command_line: vec!["flashlab".into(), "replay".into()],
        host: HostInfo {
            hostname: "testhost".into(),
            kernel: "6.1.0".into(),
            cpus: 2,
        },
        device: DeviceInfo {
            name: "sim:test".into(),
            kind: DeviceKind::Simulated,
            clock: ClockKind::Simulated,
            size_bytes: 1 << 30,
            logical_block_bytes: 512,
            identity: BTreeMap::new(),
        },
        engine: "simulator".into(),
        suite: None,
        runs: Vec::new(),
    }
}

fn workload(requests: u64) -> Workload {
    Workload::Replay(ReplaySpec {
        trace_path: "t.trace".into(),
        format: "flashlab".into(),
        requests,
        loop_mode: "closed_loop".into(),
        speed: 1.0,
        max_outstanding: 1,
        fit: "error".into(),
    })
}

fn record(i: u64) -> IoRecord {
    IoRecord {
        index: i,
        submit_ns: 1000 * i,
        complete_ns: 1000 * i + 500 + i,
        offset_bytes: 4096 * i,
        size_bytes: 4096,
        stream: 0,
        mode: flashlab_device::Mode::Write,
        flags: 0,
    }
}

/// Three runs planned one by one (journal events), two finished, the third
/// started: the state of a command killed during its third run.
fn killed_during_third_run(root: &Path) -> ResultsDir {
    let mut dir = ResultsDir::create(root, manifest()).unwrap();
    for (i, name) in ["a", "b", "c"].iter().enumerate() {
        dir.plan_run(name, workload(i as u64 + 1)).unwrap();
    }
    for idx in 0..2 {
        let mut w = dir.start_run(idx).unwrap();
        for i in 0..100 {
            w.append(&record(i)).unwrap();
        }
        w.finish().unwrap();
        dir.finish_run(idx, RunStatus::Complete, None, None)
            .unwrap();
    }
    // Run c's workload as finally run differs from the planned one (like a
    // suite's automatic IOIgnore), but it never finishes.
    let _w = dir.start_run(2).unwrap();
    dir
}

fn statuses(m: &Manifest) -> Vec<(String, RunStatus)> {
    m.runs.iter().map(|r| (r.name.clone(), r.status)).collect()
}

#[test]
fn a_killed_command_leaves_a_journal_that_readers_apply() {
    let t = tempfile::tempdir().unwrap();
    let root = t.path().join("r");
    let live = killed_during_third_run(&root);
    assert!(root.join(JOURNAL_FILE).exists());
    // manifest.json alone still says what the command started with.
    let on_disk: Manifest =
        serde_json::from_slice(&fs::read(root.join("manifest.json")).unwrap()).unwrap();
    assert!(on_disk.runs.is_empty());

    let opened = ResultsDir::open(&root).unwrap();
    assert_eq!(opened.manifest(), live.manifest());
    assert_eq!(
        statuses(opened.manifest()),
        vec![
            ("a".into(), RunStatus::Complete),
            ("b".into(), RunStatus::Complete),
            ("c".into(), RunStatus::Running),
        ]
    );
    assert_eq!(opened.summaries().len(), 2);
    assert_eq!(opened.summaries()[1].stats.all.ios, 100);
    assert!(opened.torn_journal_line().is_none());
}

#[test]
fn compaction_writes_the_manifest_and_removes_the_journal() {
    let t = tempfile::tempdir().unwrap();
    let root = t.path().join("r");
    let mut live = killed_during_third_run(&root);
    live.finish_run(2, RunStatus::Interrupted, None, None)
        .unwrap();
    let journal = fs::read(root.join(JOURNAL_FILE)).unwrap();
    live.write_summary().unwrap();
    assert!(!root.join(JOURNAL_FILE).exists());
    let on_disk: Manifest =
        serde_json::from_slice(&fs::read(root.join("manifest.json")).unwrap()).unwrap();
    assert_eq!(&on_disk, live.manifest());

    // Killed between the rename of manifest.json and the unlink of the
    // journal: applying events the manifest already holds changes nothing.
    fs::write(root.join(JOURNAL_FILE), journal).unwrap();
    let (again, replay) = read_manifest(&root).unwrap();
    assert_eq!(&again, live.manifest());
    // Three runs planned, started and finished.
    assert_eq!(replay.events, 3 + 3 + 3);
}

#[test]
fn a_workload_changed_before_finishing_is_journaled() {
    let t = tempfile::tempdir().unwrap();
    let root = t.path().join("r");
    let mut dir = ResultsDir::create(&root, manifest()).unwrap();
    dir.plan_run("a", workload(1)).unwrap();
    let w = dir.start_run(0).unwrap();
    w.finish().unwrap();
    dir.set_workload(0, workload(7));
    dir.finish_run(0, RunStatus::Complete, None, None).unwrap();
    let (m, _) = read_manifest(&root).unwrap();
    assert_eq!(m.runs[0].workload, workload(7));
}

#[test]
fn a_torn_last_line_is_ignored_reported_and_cut_by_the_next_writer() {
    let t = tempfile::tempdir().unwrap();
    let root = t.path().join("r");
    drop(killed_during_third_run(&root));
    // The process was killed while appending run c's "finished" line.
    let mut f = fs::OpenOptions::new()
        .append(true)
        .open(root.join(JOURNAL_FILE))
        .unwrap();
    let torn_piece = br#"{"event":"finished","run":2,"name":"c","sta"#;
    f.write_all(torn_piece).unwrap();
    drop(f);
    let lines = fs::read_to_string(root.join(JOURNAL_FILE))
        .unwrap()
        .lines()
        .count();

    let mut dir = ResultsDir::open(&root).unwrap();
    let torn = dir.torn_journal_line().expect("torn line reported").clone();
    assert_eq!(torn.line, lines, "the torn piece is the last line");
    assert_eq!(torn.bytes, torn_piece.len());
    assert!(torn.to_string().contains("manifest.jsonl line"), "{torn}");
    assert_eq!(dir.manifest().runs[2].status, RunStatus::Running);

    // A resumed command appends: the torn piece must not become a damaged
    // middle line.
    let mut w = dir.start_run(2).unwrap();
    w.append(&record(0)).unwrap();
    w.finish().unwrap();
    dir.finish_run(2, RunStatus::Complete, None, None).unwrap();
    let (m, replay) = read_manifest(&root).unwrap();
    assert!(replay.torn.is_none());
    assert_eq!(m.runs[2].status, RunStatus::Complete);
}

#[test]
fn a_damaged_middle_line_is_an_error_naming_file_and_line() {
    let t = tempfile::tempdir().unwrap();
    let root = t.path().join("r");
    drop(killed_during_third_run(&root));
    let path = root.join(JOURNAL_FILE);
    let text = fs::read_to_string(&path).unwrap();
    let mut lines: Vec<&str> = text.lines().collect();
    lines[3] = r#"{"event":"started","run":0,"na"#;
    fs::write(&path, lines.join("\n") + "\n").unwrap();

    let err = read_manifest(&root).unwrap_err();
    assert!(
        matches!(&err, ManifestError::JournalLine { line: 4, .. }),
        "{err:?}"
    );
    let shown = err.to_string();
    assert!(
        shown.contains("manifest.jsonl line 4: not a journal event"),
        "{shown}"
    );
    assert!(!shown.contains('\n'));
    let io = ResultsDir::open(&root).err().expect("open refuses it");
    assert_eq!(io.kind(), std::io::ErrorKind::InvalidData);
    assert!(io.to_string().contains("line 4"), "{io}");

    // A well-formed event that does not fit the manifest is damage too.
    lines[3] = r#"{"event":"started","run":9,"name":"z"}"#;
    fs::write(&path, lines.join("\n") + "\n").unwrap();
    let shown = read_manifest(&root).unwrap_err().to_string();
    assert!(
        shown.contains("line 4: run 9 ('z') was never planned"),
        "{shown}"
    );
}

#[test]
fn a_directory_written_before_the_journal_still_opens() {
    // manifest.json and run.json as schema 1 wrote them, without a journal.
    let t = tempfile::tempdir().unwrap();
    let root = t.path();
    fs::create_dir_all(root.join("runs/001-RW")).unwrap();
    fs::write(
        root.join("manifest.json"),
        r#"{
  "schema_version": 1,
  "tool": {"name": "flashlab", "version": "0.1.0", "git_commit": "old"},
  "created_unix_s": 1790000000,
  "command_line": ["flashlab", "replay"],
  "host": {"hostname": "h", "kernel": "6.1.0", "cpus": 2},
  "device": {"name": "sim:ssd-m", "kind": "simulated", "clock": "simulated",
             "size_bytes": 1073741824, "logical_block_bytes": 512, "identity": {}},
  "engine": "simulator",
  "runs": [
    {"name": "RW", "dir": "runs/001-RW", "status": "complete",
     "workload": {"kind": "replay", "trace_path": "t.trace", "format": "flashlab",
                  "requests": 1, "loop_mode": "closed_loop", "speed": 1.0,
                  "max_outstanding": 1, "fit": "error"}},
    {"name": "RR", "dir": "runs/002-RR", "status": "interrupted",
     "workload": {"kind": "replay", "trace_path": "t.trace", "format": "flashlab",
                  "requests": 2, "loop_mode": "closed_loop", "speed": 1.0,
                  "max_outstanding": 1, "fit": "error"}}
  ]
}
"#,
    )
    .unwrap();
    let mut w =
        flashlab_results::RecordWriter::create(&root.join("runs/001-RW/records.bin")).unwrap();
    w.append(&record(1)).unwrap();
    w.finish().unwrap();
    let dir = ResultsDir::open(root).unwrap();
    assert_eq!(
        statuses(dir.manifest()),
        vec![
            ("RW".into(), RunStatus::Complete),
            ("RR".into(), RunStatus::Interrupted)
        ]
    );
    assert_eq!(dir.record_file(0).unwrap().len(), 1);
    assert!(dir.torn_journal_line().is_none());
}

#[test]
fn a_run_without_records_is_journaled_as_such_and_read_back_from_a_killed_command() {
    let t = tempfile::tempdir().unwrap();
    let root = t.path().join("r");
    let mut dir = ResultsDir::create(&root, manifest()).unwrap();
    dir.plan_run("kept", workload(1)).unwrap();
    dir.plan_run("unkept", workload(2)).unwrap();
    for (idx, keep) in [(0, true), (1, false)] {
        let mut w = dir.start_run_keeping(idx, keep).unwrap();
        for i in 0..5000 {
            w.append(&record(i)).unwrap();
        }
        let tally = w.finish().unwrap();
        dir.finish_run_tallied(idx, RunStatus::Complete, None, None, Some(tally))
            .unwrap();
    }
    // Killed before compaction: only the journal knows which run kept records.
    assert!(root.join(JOURNAL_FILE).exists());
    assert!(!root.join("runs/002-unkept/records.bin").exists());
    let opened = ResultsDir::open(&root).unwrap();
    let runs = &opened.manifest().runs;
    assert!(runs[0].records && !runs[1].records);
    let journal = fs::read_to_string(root.join(JOURNAL_FILE)).unwrap();
    assert_eq!(journal.matches("\"records\":false").count(), 1, "{journal}");
    assert!(opened.record_file(0).is_ok());
    assert!(opened
        .record_file(1)
        .unwrap_err()
        .to_string()
        .contains("kept no per-IO records"));
    // Both runs have the same statistics but for percentiles (within 2^-11).
    let (a, b) = (
        &opened.summaries()[0].stats.all,
        &opened.summaries()[1].stats.all,
    );
    assert_eq!((a.ios, a.latency.mean_ns), (b.ios, b.latency.mean_ns));
    let rel = (b.latency.p99_ns as f64 - a.latency.p99_ns as f64).abs() / a.latency.p99_ns as f64;
    assert!(rel <= 1.0 / 2048.0);
}
