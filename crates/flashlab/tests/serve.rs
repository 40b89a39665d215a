//! `flashlab serve`: user errors, kill -9 and recovery, the crash harness
//! (CI size), live statistics, the physical IO trace and its replay.

mod serve_util;

use std::process::Command;
use std::time::Duration;

use flashlab_nbd::client::Client;
use flashlab_nbd::harness::{self, HarnessOptions};
use serve_util::{bin, Serve};

const SPEC: &str = "ssd-m,capacity=1GiB";

fn flashlab(args: &[&str]) -> (i32, String) {
    let o = Command::new(bin()).args(args).output().unwrap();
    (
        o.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&o.stderr).to_string(),
    )
}

#[test]
fn user_mistakes_are_one_line_and_exit_2() {
    let d = tempfile::tempdir().unwrap();
    let data = d.path().join("dev");
    let data_s = data.to_str().unwrap();
    let cases: Vec<(Vec<&str>, &str)> = vec![
        (vec!["serve", "--data", data_s], "give --profile"),
        (
            vec!["serve", "--data", data_s, "--profile", "nope"],
            "unknown simulator profile",
        ),
        (
            vec![
                "serve",
                "--data",
                data_s,
                "--profile",
                SPEC,
                "--listen",
                "10.1.2.3:10809",
            ],
            "--allow-remote",
        ),
        (
            vec![
                "serve",
                "--data",
                data_s,
                "--profile",
                SPEC,
                "--listen",
                "somewhere",
            ],
            "unix:PATH",
        ),
        (
            vec![
                "serve",
                "--data",
                data_s,
                "--profile",
                SPEC,
                "--stats-every",
                "5",
            ],
            "--stats-every",
        ),
    ];
    for (args, want) in cases {
        let (code, err) = flashlab(&args);
        assert_eq!(code, 2, "{args:?}: {err}");
        assert_eq!(err.trim().lines().count(), 1, "{args:?}: {err}");
        assert!(err.contains(want), "{args:?}: {err}");
    }
    // A directory holding something else.
    let other = d.path().join("other");
    std::fs::create_dir_all(&other).unwrap();
    std::fs::write(other.join("precious.txt"), "x").unwrap();
    let (code, err) = flashlab(&[
        "serve",
        "--data",
        other.to_str().unwrap(),
        "--profile",
        SPEC,
    ]);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("not empty"), "{err}");
    // A device made with another profile.
    let s = Serve::start(&data, &["--profile", SPEC]);
    s.kill9();
    let (code, err) = flashlab(&[
        "serve",
        "--data",
        data_s,
        "--profile",
        "ssd-h,capacity=1GiB",
    ]);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("--profile ssd-m,capacity=1GiB"), "{err}");
}

fn pattern(i: u64) -> Vec<u8> {
    (0..4096u64)
        .map(|j| (i.wrapping_mul(131) ^ j.wrapping_mul(7)) as u8)
        .collect()
}

#[test]
fn kill_9_then_restart_recovers_every_flushed_write() {
    let d = tempfile::tempdir().unwrap();
    let data = d.path().join("dev");
    let s = Serve::start(&data, &["--profile", SPEC, "--checkpoint-every", "500"]);
    let mut c = Client::connect(&s.addr(), "").unwrap();
    // 1200 writes (two checkpoints happen), a flush, then unflushed writes elsewhere.
    for i in 0..1200u64 {
        assert_eq!(
            c.write((i % 700) * 4096 * 3, &pattern(i), false).unwrap(),
            0
        );
    }
    assert_eq!(c.flush().unwrap(), 0);
    for i in 0..50u64 {
        assert_eq!(
            c.write((3000 + i) * 4096, &pattern(9999), false).unwrap(),
            0
        );
    }
    s.kill9();
    let s = Serve::start(&data, &[]);
    let log = s.log_text();
    assert!(log.contains("recovered sim:ssd-m,capacity=1GiB"), "{log}");
    let mut c = Client::connect(&s.addr(), "").unwrap();
    let mut b = vec![0u8; 4096];
    for k in 0..700u64 {
        let last = (0..1200u64).filter(|i| i % 700 == k).max().unwrap();
        c.read(k * 4096 * 3, &mut b).unwrap().unwrap();
        assert!(b == pattern(last), "block {k} lost its flushed content");
    }
    // SIGTERM: clean exit with a checkpoint.
    let st = s.terminate();
    assert!(st.success(), "{st}");
    let names: Vec<String> = std::fs::read_dir(&data)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().to_string())
        .collect();
    assert!(names.iter().any(|n| n.starts_with("ckpt-")), "{names:?}");
}

#[test]
fn crash_harness_ci_size() {
    let d = tempfile::tempdir().unwrap();
    let iterations = std::env::var("FLASHLAB_CRASH_ITERATIONS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(12);
    let opts = HarnessOptions {
        iterations,
        seed: 11,
        server: vec![
            bin().into(),
            "serve".into(),
            "--profile".into(),
            SPEC.into(),
            "--checkpoint-every".into(),
            "700".into(),
        ],
        dir: d.path().to_path_buf(),
        blocks: 1024,
        span_blocks: 8192,
        max_kill_ms: 500,
        verbose: false,
    };
    let r = harness::run(&opts).unwrap_or_else(|e| panic!("crash harness: {e}"));
    eprintln!(
        "crash harness: {} crash points tried ({} during start-up/recovery), {} flushed blocks verified ({} distinct), {} writes and {} flushes acknowledged",
        r.crash_points, r.kills_before_ready, r.blocks_verified, r.distinct_blocks, r.writes_acked, r.flushes_acked
    );
    assert_eq!(r.crash_points, iterations as u64);
    assert!(r.blocks_verified > 0);
}

#[test]
fn statistics_on_sigusr1_and_a_replayable_trace() {
    let d = tempfile::tempdir().unwrap();
    let data = d.path().join("dev");
    let trace = d.path().join("phys.trace");
    let s = Serve::start(
        &data,
        &[
            "--profile",
            SPEC,
            "--trace",
            trace.to_str().unwrap(),
            "--stats-every",
            "300ms",
        ],
    );
    let mut c = Client::connect(&s.addr(), "").unwrap();
    for i in 0..300u64 {
        assert_eq!(c.write(i * 8192, &pattern(i), false).unwrap(), 0);
    }
    let mut b = vec![0u8; 4096];
    for i in 0..100u64 {
        c.read(i * 8192, &mut b).unwrap().unwrap();
    }
    assert_eq!(c.trim(0, 65536).unwrap(), 0);
    assert_eq!(c.flush().unwrap(), 0);
    s.signal(libc::SIGUSR1);
    std::thread::sleep(Duration::from_millis(700));
    let log = s.log_text();
    assert!(
        log.contains("IOPS") && log.contains("WAF") && log.contains("free blocks"),
        "{log}"
    );
    let st = s.terminate();
    assert!(st.success());
    let text = std::fs::read_to_string(&trace).unwrap();
    let ios = flashlab_trace::parse(&text, flashlab_trace::Format::Flashlab, "trace").unwrap();
    assert_eq!(ios.len(), 300 + 100 + 1 + 1, "every request is traced");
    // The trace replays on the simulator.
    let res = d.path().join("res");
    let o = Command::new(bin())
        .args([
            "replay",
            trace.to_str().unwrap(),
            "--device",
            &format!("sim:{SPEC}"),
            "--results",
            res.to_str().unwrap(),
        ])
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
}

#[test]
fn a_second_serve_on_a_live_directory_is_refused_and_deletes_nothing() {
    let d = tempfile::tempdir().unwrap();
    let data = d.path().join("dev");
    let data_s = data.to_str().unwrap();
    let s = Serve::start(&data, &["--profile", SPEC]);
    let mut c = Client::connect(&s.addr(), "").unwrap();
    for i in 0..100u64 {
        assert_eq!(c.write(i * 4096, &pattern(i), false).unwrap(), 0);
    }
    assert_eq!(c.flush().unwrap(), 0);
    let other_sock = d.path().join("other.sock");
    let (code, err) = flashlab(&[
        "serve",
        "--data",
        data_s,
        "--listen",
        &format!("unix:{}", other_sock.display()),
    ]);
    assert_eq!(code, 2, "{err}");
    assert_eq!(err.trim().lines().count(), 1, "{err}");
    assert!(
        err.contains("in use by another flashlab serve")
            && err.contains(&format!("pid {}", s.pid())),
        "{err}"
    );
    // The live server's log is intact: kill -9 and recover every flushed write.
    s.kill9();
    let s = Serve::start(&data, &[]);
    let mut c = Client::connect(&s.addr(), "").unwrap();
    let mut b = vec![0u8; 4096];
    for i in 0..100u64 {
        c.read(i * 4096, &mut b).unwrap().unwrap();
        assert!(b == pattern(i), "block {i} lost");
    }
    // A trace inside the data directory, and bad limit flags.
    let trace = data.join("trace.txt");
    for (args, want) in [
        (
            vec!["--trace", trace.to_str().unwrap()],
            "inside the data directory",
        ),
        (vec!["--max-connections", "0"], "--max-connections"),
        (vec!["--handshake-timeout", "5"], "--handshake-timeout"),
        (vec!["--buffer-limit", "1MiB"], "--buffer-limit"),
    ] {
        let mut a = vec!["serve", "--data", data_s];
        a.extend(args.iter().copied());
        let (code, err) = flashlab(&a);
        assert_eq!(code, 2, "{args:?}: {err}");
        assert_eq!(err.trim().lines().count(), 1, "{args:?}: {err}");
        assert!(err.contains(want), "{args:?}: {err}");
    }
    assert!(s.terminate().success());
}
