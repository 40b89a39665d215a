//! The crash-test harness (docs/serve.md):
//!
//! ```text
//! cargo run --release -p flashlab-nbd --example crash_harness -- --iterations 200
//! ```
//!
//! Starts a server as a child process (this same program, re-executed with
//! `--serve-child`; or any command given after `--server`, such as
//! `target/release/flashlab serve --profile ssd-m,capacity=1GiB`), writes
//! random blocks with FUA and flushes, SIGKILLs it at random moments, restarts
//! it and verifies every flushed block. Prints the crash points tried and the
//! blocks verified; exits 1 on the first lost write.

use std::path::PathBuf;
use std::sync::atomic::AtomicBool;
use std::sync::Arc;

use flashlab_nbd::harness::{self, HarnessOptions};
use flashlab_nbd::{Listen, Server, SessionConfig, Store, StoreOptions};

fn serve_child(args: &[String]) -> Result<(), String> {
    let mut spec = None;
    let mut data = None;
    let mut listen = None;
    let mut every = 2000;
    let mut i = 0;
    while i < args.len() {
        let v = args.get(i + 1).cloned().unwrap_or_default();
        match args[i].as_str() {
            "--profile" => spec = Some(v),
            "--data" => data = Some(PathBuf::from(v)),
            "--listen" => listen = Some(v),
            "--checkpoint-every" => every = v.parse().map_err(|_| "bad --checkpoint-every")?,
            a => return Err(format!("unknown argument {a}")),
        }
        i += 2;
    }
    let store = Store::open(&StoreOptions {
        dir: data.ok_or("--data missing")?,
        spec,
        seed: 1,
        checkpoint_records: every,
        trace: None,
        faults: None,
    })
    .map_err(|e| e.to_string())?;
    let r = &store.recovery;
    eprintln!(
        "child: recovered generation {} + {} log records ({} torn bytes) in {} ms",
        r.checkpoint_generation, r.log_records_replayed, r.log_tail_bytes_dropped, r.millis
    );
    let listen =
        Listen::parse(&listen.ok_or("--listen missing")?, false).map_err(|e| e.to_string())?;
    let server = Server::bind(&listen).map_err(|e| e.to_string())?;
    let stop = AtomicBool::new(false);
    server
        .run(Arc::new(store), Arc::new(SessionConfig::default()), &stop)
        .map_err(|e| e.to_string())
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    if args.get(1).map(String::as_str) == Some("--serve-child") {
        if let Err(e) = serve_child(&args[2..]) {
            eprintln!("error: {e}");
            std::process::exit(1);
        }
        return;
    }
    let mut iterations = 100u32;
    let mut seed = 1u64;
    let mut verbose = false;
    let mut profile = "ssd-m,capacity=1GiB".to_string();
    let mut server: Option<Vec<String>> = None;
    let mut dir: Option<PathBuf> = None;
    let mut i = 1;
    while i < args.len() {
        let v = args.get(i + 1).cloned().unwrap_or_default();
        match args[i].as_str() {
            "--iterations" => iterations = v.parse().expect("--iterations N"),
            "--seed" => seed = v.parse().expect("--seed N"),
            "--profile" => profile = v,
            "--dir" => dir = Some(PathBuf::from(v)),
            "--verbose" | "-v" => {
                verbose = true;
                i += 1;
                continue;
            }
            "--server" => {
                server = Some(args[i + 1..].to_vec());
                break;
            }
            a => {
                eprintln!("error: unknown argument {a}; usage: crash_harness [--iterations N] [--seed N] [--profile SPEC] [--dir DIR] [-v] [--server CMD...]");
                std::process::exit(2);
            }
        }
        i += 2;
    }
    let exe = std::env::current_exe().unwrap().display().to_string();
    let server = server.unwrap_or_else(|| {
        vec![
            exe,
            "--serve-child".into(),
            "--profile".into(),
            profile.clone(),
        ]
    });
    let tmp = tempdir(dir);
    let opts = HarnessOptions {
        iterations,
        seed,
        server,
        dir: tmp.clone(),
        blocks: 4096,
        span_blocks: 16384,
        max_kill_ms: 400,
        verbose,
    };
    let t0 = std::time::Instant::now();
    match harness::run(&opts) {
        Ok(r) => {
            println!(
                "crash harness: {} crash points tried ({} during start-up/recovery), {} flushed blocks verified ({} distinct), {} writes and {} flushes acknowledged, {} unflushed writes survived, slowest restart {} ms, {:.1} s",
                r.crash_points,
                r.kills_before_ready,
                r.blocks_verified,
                r.distinct_blocks,
                r.writes_acked,
                r.flushes_acked,
                r.unflushed_survivors,
                r.max_restart_ms,
                t0.elapsed().as_secs_f64()
            );
            let _ = std::fs::remove_dir_all(&tmp);
        }
        Err(e) => {
            eprintln!(
                "crash harness FAILED: {e} (state kept in {})",
                tmp.display()
            );
            std::process::exit(1);
        }
    }
}

fn tempdir(dir: Option<PathBuf>) -> PathBuf {
    let d = dir.unwrap_or_else(|| {
        std::env::temp_dir().join(format!("flashlab-crash-{}", std::process::id()))
    });
    std::fs::create_dir_all(&d).unwrap();
    d
}
