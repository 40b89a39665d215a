//! A quick engine benchmark, for comparing with fio on the same device:
//!
//! ```text
//! cargo run --release -p flashlab-realdev --example qd_bench -- DEV PATTERN BS QD SECONDS [sync|io_uring]
//! ```
//! PATTERN is sr, rr, sw or rw (sequential/random read/write). Writes need a
//! device that passes the safety check (a blank loop device, or a file).
//! Prints IOPS and mean/p99 latency (submit to completion, as flashlab records it).

use std::path::PathBuf;

use flashlab_device::{Completion, IoRequest, Mode};
use flashlab_realdev::{open, Engine, OpenOptions};

fn main() {
    let a: Vec<String> = std::env::args().collect();
    if a.len() < 6 {
        eprintln!("usage: qd_bench DEV sr|rr|sw|rw BS QD SECONDS [sync|io_uring]");
        std::process::exit(2);
    }
    let (dev, pat) = (PathBuf::from(&a[1]), a[2].as_str());
    let bs: u32 = a[3].parse().unwrap();
    let qd: usize = a[4].parse().unwrap();
    let secs: f64 = a[5].parse().unwrap();
    let engine = match a.get(6).map(String::as_str) {
        Some("sync") => Engine::Sync,
        Some("io_uring") => Engine::IoUring,
        _ => Engine::Auto,
    };
    let (mode, random) = match pat {
        "sr" => (Mode::Read, false),
        "rr" => (Mode::Read, true),
        "sw" => (Mode::Write, false),
        "rw" => (Mode::Write, true),
        _ => panic!("pattern"),
    };
    let opts = OpenOptions {
        write: mode == Mode::Write,
        engine,
        max_outstanding: qd,
        max_io_bytes: bs,
        ..OpenOptions::new(&dev)
    };
    let opened = open(&opts).unwrap_or_else(|e| {
        eprintln!("{e}");
        std::process::exit(e.kind().exit_code())
    });
    for w in &opened.warnings {
        eprintln!("warning: {w}");
    }
    let mut d = opened.device;
    let slots = d.info().size_bytes / bs as u64;
    let mut x: u64 = 0x1234_5678_9abc_def1;
    let mut next = 0u64;
    let mut offset = || {
        let s = if random {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x % slots
        } else {
            let s = next % slots;
            next += 1;
            s
        };
        s * bs as u64
    };
    let mut lat: Vec<u64> = Vec::with_capacity(4_000_000);
    let mut out: Vec<Completion> = Vec::with_capacity(qd);
    let end = d.now_ns() + (secs * 1e9) as u64;
    let mut outstanding = 0;
    let mut tag = 0;
    let t0 = d.now_ns();
    loop {
        let stop = d.now_ns() >= end;
        while !stop && outstanding < qd {
            d.submit(IoRequest {
                tag,
                offset_bytes: offset(),
                size_bytes: bs,
                mode,
            })
            .unwrap();
            tag += 1;
            outstanding += 1;
        }
        if outstanding == 0 {
            break;
        }
        out.clear();
        d.poll(None, &mut out).unwrap();
        for c in &out {
            assert_eq!(c.errno, None);
            lat.push(c.latency_ns());
        }
        outstanding -= out.len();
    }
    let elapsed = (d.now_ns() - t0) as f64 / 1e9;
    let n = lat.len();
    let mean = lat.iter().sum::<u64>() as f64 / n as f64;
    lat.sort_unstable();
    println!(
        "{} {pat} bs={bs} qd={qd}: {:.0} IOPS, mean {:.1} us, p50 {:.1} us, p99 {:.1} us ({n} IOs)",
        d.info()
            .identity
            .get("engine")
            .map(String::as_str)
            .unwrap_or("?"),
        n as f64 / elapsed,
        mean / 1e3,
        lat[n / 2] as f64 / 1e3,
        lat[n * 99 / 100] as f64 / 1e3
    );
}
