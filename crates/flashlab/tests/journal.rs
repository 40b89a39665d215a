//! `flashlab run` of a long pattern file killed with SIGKILL at seeded random
//! moments: the directory stays readable, every run the manifest (with its
//! journal) calls complete has the records and statistics of an
//! uninterrupted run, a run cut short holds a prefix of them, and a damaged
//! journal is refused in one line (exit 2).

mod common;

use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use common::{flashlab, scratch};
use flashlab_results::{read_manifest, RunStatus, JOURNAL_FILE};

const RUNS: usize = 300;
const RECORD_BYTES: usize = 40;
const HEADER_BYTES: usize = 32;

fn run_args(results: &str) -> Vec<&str> {
    vec![
        "run",
        "-q",
        "--device",
        "sim:ssd-m,capacity=1GiB",
        "--pattern-file",
        "p.toml",
        "--results",
        results,
    ]
}

/// Many small runs of mixed kinds (the simulator's state carries from run to
/// run, so a run's results depend on every run before it).
fn write_pattern_file(dir: &Path) {
    let mut text = String::from("[defaults]\nio_size = \"4KiB\"\nio_count = 24\n");
    for i in 0..RUNS {
        let pattern = ["SW", "RW", "RR", "SR"][i % 4];
        text.push_str(&format!(
            "[[run]]\nname = \"r{i}\"\npattern = \"{pattern}\"\n"
        ));
    }
    std::fs::write(dir.join("p.toml"), text).unwrap();
}

/// SplitMix64: the kill moments are random but the same every time.
fn splitmix(state: &mut u64) -> u64 {
    *state = state.wrapping_add(0x9E37_79B9_7F4A_7C15);
    let mut z = *state;
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

#[test]
fn a_run_killed_at_random_moments_keeps_every_finished_run_exactly() {
    let dir = scratch();
    write_pattern_file(dir.path());
    let t = Instant::now();
    let out = flashlab(&run_args("ref"), dir.path());
    let full = t.elapsed();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let reference = dir.path().join("ref");
    assert!(
        !reference.join(JOURNAL_FILE).exists(),
        "a finished command compacts its journal"
    );
    let (ref_manifest, _) = read_manifest(&reference).unwrap();

    let mut seed = 0x1157_u64;
    let mut complete_seen = Vec::new();
    for k in 0..4 {
        let name = format!("killed{k}");
        let mut child = Command::new(env!("CARGO_BIN_EXE_flashlab"))
            .args(run_args(&name))
            .current_dir(dir.path())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        // A moment between 5 % and 95 % of an uninterrupted run.
        let fraction = 0.05 + 0.9 * (splitmix(&mut seed) % 1000) as f64 / 1000.0;
        std::thread::sleep(full.mul_f64(fraction));
        child.kill().unwrap(); // SIGKILL
        child.wait().unwrap();
        let root = dir.path().join(&name);
        if !root.join("manifest.json").exists() {
            continue; // killed before the directory was created
        }

        // The CLI's reader opens it (a torn last journal line is a note).
        let show = flashlab(&["show", "--json", &name], dir.path());
        assert!(
            show.status.success(),
            "{}",
            String::from_utf8_lossy(&show.stderr)
        );
        let shown: serde_json::Value = serde_json::from_slice(&show.stdout).unwrap();

        let (manifest, replay) = read_manifest(&root).unwrap();
        let mut complete = 0;
        for (i, (run, want)) in manifest.runs.iter().zip(&ref_manifest.runs).enumerate() {
            assert_eq!(run.name, want.name);
            assert_eq!(run.workload, want.workload);
            let records = std::fs::read(root.join(&run.dir).join("records.bin"));
            let want_records =
                std::fs::read(reference.join(&want.dir).join("records.bin")).unwrap();
            match run.status {
                RunStatus::Complete => {
                    complete += 1;
                    assert!(
                        records.unwrap() == want_records,
                        "{name}: records of run {i}"
                    );
                    let stats = |root: &Path, dir: &str| -> serde_json::Value {
                        let v: serde_json::Value = serde_json::from_slice(
                            &std::fs::read(root.join(dir).join("run.json")).unwrap(),
                        )
                        .unwrap();
                        serde_json::json!([v["stats"], v["device_stats"]])
                    };
                    assert_eq!(
                        stats(&root, &run.dir),
                        stats(&reference, &want.dir),
                        "{name}: statistics of run {i}"
                    );
                    assert!(
                        shown["runs"]
                            .as_array()
                            .unwrap()
                            .iter()
                            .any(|r| r["name"] == run.name.as_str()),
                        "{name}: show lists run {i}"
                    );
                }
                RunStatus::Running => {
                    // Cut short: whatever records reached the disk are the
                    // reference's first ones (a torn last record is dropped).
                    if let Ok(bytes) = records {
                        let whole = if bytes.len() < HEADER_BYTES {
                            0
                        } else {
                            HEADER_BYTES
                                + (bytes.len() - HEADER_BYTES) / RECORD_BYTES * RECORD_BYTES
                        };
                        assert!(bytes[..whole] == want_records[..whole], "{name}: run {i}");
                    }
                }
                RunStatus::Planned => assert!(
                    !root.join(&run.dir).join("run.json").exists(),
                    "{name}: run {i} planned but has run.json"
                ),
                other => panic!("{name}: run {i} is {other:?}"),
            }
        }
        eprintln!(
            "{name}: killed at {:.0} % of {full:?}: {complete} of {RUNS} runs complete, journal of {} events{}",
            fraction * 100.0,
            replay.events,
            if replay.torn.is_some() { ", torn last line" } else { "" }
        );
        complete_seen.push(complete);
    }
    assert!(
        complete_seen.iter().any(|&c| c > 0 && c < RUNS),
        "the test must kill some run mid-file: {complete_seen:?}"
    );
}

#[test]
fn a_damaged_journal_line_is_one_line_and_exit_2() {
    let dir = scratch();
    std::fs::write(
        dir.path().join("p.toml"),
        "[defaults]\nio_size = \"4KiB\"\nio_count = 4\n[[run]]\nname = \"a\"\npattern = \"RW\"\n[[run]]\nname = \"b\"\npattern = \"RR\"\n",
    )
    .unwrap();
    assert!(flashlab(&run_args("r"), dir.path()).status.success());
    // As if killed after its first run: the journal of a command that ran it.
    let journal = dir.path().join("r").join(JOURNAL_FILE);
    std::fs::write(
        &journal,
        "{\"event\":\"started\",\"run\":0,\"name\":\"a\"}\n{\"event\":\"started\",\"ru\n{\"event\":\"finished\",\"run\":0,\"name\":\"a\",\"status\":\"complete\"}\n",
    )
    .unwrap();
    for cmd in [&["show", "r"][..], &["export", "r"], &["report", "r"]] {
        let out = flashlab(cmd, dir.path());
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{cmd:?}: {err}");
        assert_eq!(err.trim_end().lines().count(), 1, "{cmd:?}: {err}");
        assert!(err.contains("manifest.jsonl line 2"), "{cmd:?}: {err}");
    }

    // A torn last line is read past, and said.
    std::fs::write(
        &journal,
        "{\"event\":\"started\",\"run\":1,\"name\":\"b\"}\n{\"event\":\"fini",
    )
    .unwrap();
    let out = flashlab(&["show", "r"], dir.path());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{err}");
    assert!(err.contains("manifest.jsonl line 2 is torn"), "{err}");
}

#[test]
fn output_closed_early_is_not_an_error() {
    // `| head -1`: the reader goes away; flashlab exits 0 without a word.
    let dir = scratch();
    std::fs::write(
        dir.path().join("p.toml"),
        "[defaults]\nio_size = \"4KiB\"\nio_count = 20000\n[[run]]\nname = \"a\"\npattern = \"RW\"\n",
    )
    .unwrap();
    assert!(flashlab(&run_args("r"), dir.path()).status.success());
    let mut dry = run_args("unused");
    dry.extend_from_slice(&["--dry-run", "--show-ios", "100000"]);
    for args in [dry, vec!["export", "r"]] {
        let mut child = Command::new(env!("CARGO_BIN_EXE_flashlab"))
            .args(&args)
            .current_dir(dir.path())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        // Read one line, then close the pipe, as `head -1` does.
        let mut stdout = child.stdout.take().unwrap();
        let mut first = [0u8; 64];
        let n = std::io::Read::read(&mut stdout, &mut first).unwrap();
        assert!(n > 0);
        drop(stdout);
        let t = Instant::now();
        let out = child.wait_with_output().unwrap();
        assert!(t.elapsed() < Duration::from_secs(60));
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(0), "{args:?}: {err}");
        assert!(err.is_empty(), "{args:?}: {err}");
    }
}
