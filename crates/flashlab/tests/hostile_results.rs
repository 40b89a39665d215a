//! Sweeps and results directories under attack, through the CLI: two
//! `flashlab sweep` processes into one directory, and `export` of a
//! directory whose records file is a FIFO.

mod common;

use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use common::{flashlab, ok, scratch, text};

const GRID: &str = r#"
device = "ssd-m,capacity=128MiB,channels=2,cache=off,prefill=on"
seeds = [1, 1, 2]
[parameters]
op = [0.15, 0.2, 0.3]
[[run]]
pattern = "RW"
io_size = "4KiB"
io_count = 5000
"#;

#[test]
fn two_sweeps_into_one_directory_at_once_leave_every_row_ok_with_its_planned_ios() {
    let dir = scratch();
    std::fs::write(dir.path().join("g.toml"), GRID).unwrap();
    let spawn = || {
        Command::new(env!("CARGO_BIN_EXE_flashlab"))
            .args(["sweep", "g.toml", "--jobs", "2", "--results", "s", "-q"])
            .current_dir(dir.path())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap()
    };
    let (a, b) = (spawn(), spawn());
    for child in [a, b] {
        let out = child.wait_with_output().unwrap();
        assert!(out.status.success(), "{}", text(&out));
    }
    let csv = std::fs::read_to_string(dir.path().join("s/sweep.csv")).unwrap();
    let rows: Vec<&str> = csv.lines().skip(1).collect();
    // seeds = [1, 1, 2] is two seeds: 6 points, each once.
    assert_eq!(rows.len(), 6, "{csv}");
    for row in rows {
        assert!(row.contains(",RW,ok,complete,5000,"), "{row}");
    }
}

#[test]
fn export_refuses_a_fifo_records_file_at_once() {
    let dir = scratch();
    ok(&flashlab(
        &[
            "run",
            "--device",
            "sim:ssd-m,capacity=128MiB,channels=2",
            "--pattern",
            "RW",
            "--io-count",
            "100",
            "-o",
            "r",
            "-q",
        ],
        dir.path(),
    ));
    let records = dir.path().join("r/runs/001-RW/records.bin");
    std::fs::remove_file(&records).unwrap();
    let status = Command::new("mkfifo").arg(&records).status().unwrap();
    assert!(status.success());
    let started = Instant::now();
    let mut child = Command::new(env!("CARGO_BIN_EXE_flashlab"))
        .args(["export", "r", "--format", "csv", "--output", "out.csv"])
        .current_dir(dir.path())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    while child.try_wait().unwrap().is_none() {
        if started.elapsed() > Duration::from_secs(10) {
            child.kill().unwrap();
            panic!("export hung on a FIFO records.bin");
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    let out = child.wait_with_output().unwrap();
    assert_ne!(out.status.code(), Some(0));
    assert!(text(&out).contains("not a regular file"), "{}", text(&out));
}
