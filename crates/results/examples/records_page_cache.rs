//! What writing records costs, in the page cache and out of it: lists of
//! records files written one after another and kept, as a sweep's points
//! leave them, alternately with `RecordWriter::create` (the page cache
//! keeps every page) and `RecordWriter::create_out_of_cache` (direct IO,
//! 2.5 MiB a write; where the file system refuses it, drop-behind: written
//! back as it grows, all but its last pages released).
//!
//!     cargo run --release -p flashlab-results --example records_page_cache -- \
//!         [--dir DIR] [--files 10] [--ios 2500000] [--rounds 2]
//!
//! Prints, per list, the CPU time (user + system, both of the writer's
//! threads) and wall time of each file. On a machine whose free memory is
//! backed by the host (no balloon, no free page reporting) both cost about
//! the same; on a VM whose host takes free pages back, new page-cache
//! pages can cost ten times more once the recently freed ones run out
//! (docs/python.md, "Session 11"). Needs `--files x --ios x 40 bytes x
//! 2 x --rounds` of free disk space in DIR (8 GB with the defaults); the
//! files are deleted at the end.

use std::path::{Path, PathBuf};
use std::time::Instant;

use flashlab_device::Mode;
use flashlab_results::{IoRecord, RecordWriter};

fn cpu_s() -> f64 {
    // SAFETY: getrusage fills the struct it is given.
    let r = unsafe {
        let mut r: libc::rusage = std::mem::zeroed();
        libc::getrusage(libc::RUSAGE_SELF, &mut r);
        r
    };
    let t = |tv: libc::timeval| tv.tv_sec as f64 + tv.tv_usec as f64 / 1e6;
    t(r.ru_utime) + t(r.ru_stime)
}

/// One file of `ios` records shaped like a simulated random-write run's.
fn write(path: &Path, ios: u64, out_of_cache: bool) -> (f64, f64) {
    let (c0, t0) = (cpu_s(), Instant::now());
    let mut w = if out_of_cache {
        RecordWriter::create_out_of_cache(path)
    } else {
        RecordWriter::create(path)
    }
    .unwrap_or_else(|e| fail(&format!("cannot create {}: {e}", path.display())));
    for i in 0..ios {
        let r = IoRecord {
            index: i,
            stream: 0,
            mode: Mode::Write,
            offset_bytes: (i * 2_654_435_761) % (1 << 29) / 4096 * 4096,
            size_bytes: 4096,
            submit_ns: i * 1_000_000,
            complete_ns: i * 1_000_000 + 1_077_000,
            flags: 0,
        };
        if let Err(e) = w.append(&r) {
            fail(&format!("cannot write {}: {e}", path.display()));
        }
    }
    w.finish()
        .unwrap_or_else(|e| fail(&format!("cannot write {}: {e}", path.display())));
    (cpu_s() - c0, t0.elapsed().as_secs_f64())
}

fn fail(msg: &str) -> ! {
    eprintln!("records_page_cache: {msg}");
    std::process::exit(2)
}

fn main() {
    let mut dir = std::env::temp_dir();
    let (mut files, mut ios, mut rounds) = (10usize, 2_500_000u64, 2usize);
    let mut args = std::env::args().skip(1);
    while let Some(a) = args.next() {
        let mut value = || {
            args.next()
                .unwrap_or_else(|| fail(&format!("{a} needs a value")))
        };
        let number = |v: String| -> u64 {
            v.parse()
                .unwrap_or_else(|_| fail(&format!("{a} takes a number, not {v:?}")))
        };
        match a.as_str() {
            "--dir" => dir = PathBuf::from(value()),
            "--files" => files = number(value()) as usize,
            "--ios" => ios = number(value()),
            "--rounds" => rounds = number(value()) as usize,
            _ => fail(&format!(
                "unknown argument {a:?}; use --dir, --files, --ios or --rounds"
            )),
        }
    }
    let scratch = dir.join(format!("records_page_cache.{}", std::process::id()));
    std::fs::create_dir_all(&scratch)
        .unwrap_or_else(|e| fail(&format!("cannot create {}: {e}", scratch.display())));
    println!(
        "{files} files of {ios} records ({:.0} MB each) per list, kept until the end, in {}",
        ios as f64 * 40.0 / 1e6,
        scratch.display()
    );
    let mut n = 0;
    for round in 1..=rounds {
        for out_of_cache in [false, true] {
            let (mut cpu, mut wall) = (Vec::new(), Vec::new());
            for _ in 0..files {
                let (c, w) = write(&scratch.join(format!("{n}.bin")), ios, out_of_cache);
                n += 1;
                cpu.push(c);
                wall.push(w);
            }
            let list = |v: &[f64]| {
                v.iter()
                    .map(|x| format!("{x:.3}"))
                    .collect::<Vec<_>>()
                    .join(" ")
            };
            println!(
                "round {round}, {:<13} CPU s per file: {}  (sum {:.2} s; wall sum {:.2} s)",
                if out_of_cache {
                    "out of cache"
                } else {
                    "page cache"
                },
                list(&cpu),
                cpu.iter().sum::<f64>(),
                wall.iter().sum::<f64>()
            );
        }
    }
    if let Err(e) = std::fs::remove_dir_all(&scratch) {
        fail(&format!("cannot remove {}: {e}", scratch.display()));
    }
}
