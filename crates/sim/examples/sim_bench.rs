//! Simulator speed and memory benchmark (a benchmark, not a timed test).
//!
//! Full sequential fill (256 KiB writes), a warm-up of random 4 KiB overwrites
//! to reach the garbage-collection steady state, then the measured phase:
//! random 4 KiB overwrites through the `Device` interface at queue depth 32.
//! Prints simulated requests per wall-clock second, peak memory (VmHWM), bytes
//! per 4 KiB logical page, and the write amplification next to Desnoyers' model.
//!
//! ```text
//! cargo run --release -p flashlab-sim --example sim_bench -- --capacity 16GiB --op 0.07
//! cargo run --release -p flashlab-sim --example sim_bench -- --small      # CI size, also runs the checker
//! ```
//! Options: --profile NAME (nvme-tlc), --capacity SIZE (16GiB), --op P (0.07),
//! --qd N (32), --warmup X and --writes X (multiples of the logical capacity;
//! 1 and 1), --set k=v,k=v (more overrides), --small.

use std::time::Instant;

use flashlab_device::{Device, IoRequest, Mode};

struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }
}

fn status_kib(field: &str) -> u64 {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with(field))
                .and_then(|l| l.split_whitespace().nth(1).and_then(|v| v.parse().ok()))
        })
        .unwrap_or(0)
}

/// Closed loop at `qd` outstanding; `next` yields (offset, size) writes.
fn drive(
    dev: &mut flashlab_sim::SimDevice,
    qd: usize,
    count: u64,
    mut next: impl FnMut(u64) -> (u64, u32),
) {
    let mut out = Vec::with_capacity(qd);
    let mut outstanding = 0usize;
    for i in 0..count {
        while outstanding >= qd {
            out.clear();
            dev.poll(None, &mut out).expect("poll");
            outstanding -= out.len();
        }
        let (offset_bytes, size_bytes) = next(i);
        dev.submit(IoRequest {
            tag: i,
            offset_bytes,
            size_bytes,
            mode: Mode::Write,
        })
        .expect("submit");
        outstanding += 1;
    }
    while outstanding > 0 {
        out.clear();
        dev.poll(None, &mut out).expect("poll");
        outstanding -= out.len();
    }
}

fn main() {
    let mut profile = "nvme-tlc".to_string();
    let mut capacity = "16GiB".to_string();
    let mut op = 0.07f64;
    let mut qd = 32usize;
    let mut warmup = 1.0f64;
    let mut writes = 1.0f64;
    let mut extra = String::new();
    let mut small = false;
    let mut args = std::env::args().skip(1);
    while let Some(a) = args.next() {
        let mut val = || args.next().unwrap_or_else(|| panic!("{a} needs a value"));
        match a.as_str() {
            "--profile" => profile = val(),
            "--capacity" => capacity = val(),
            "--op" => op = val().parse().expect("--op"),
            "--qd" => qd = val().parse().expect("--qd"),
            "--warmup" => warmup = val().parse().expect("--warmup"),
            "--writes" => writes = val().parse().expect("--writes"),
            "--set" => extra = format!(",{}", val()),
            "--small" => small = true,
            "--help" | "-h" => {
                println!("sim_bench [--profile P] [--capacity SIZE] [--op P] [--qd N] [--warmup X] [--writes X] [--set k=v,...] [--small]");
                return;
            }
            other => panic!("unknown option {other}; see --help"),
        }
    }
    if small {
        capacity = "2GiB".into();
        warmup = 2.0;
        writes = 1.0;
    }
    let rss_before_kib = status_kib("VmRSS:");
    let check = if small { ",check=off" } else { "" };
    let spec = format!("{profile},capacity={capacity},op={op}{check}{extra}");
    let mut dev = flashlab_sim::open_device(&spec, 1, qd).unwrap_or_else(|e| {
        eprintln!("sim_bench: {e}");
        std::process::exit(2);
    });
    let geo = *dev.geometry();
    let pages = geo.logical_pages;
    println!("sim_bench: sim:{spec}");
    println!(
        "  {} logical pages of {} B, {} dies, {} blocks/die x {} pages, effective op {:.4}, cache {}",
        pages,
        geo.page_bytes,
        geo.units,
        geo.blocks_per_unit,
        geo.pages_per_block,
        geo.effective_op(),
        if dev.config().cache.enabled { dev.config().cache.size.to_string() } else { "off".into() }
    );

    let t = Instant::now();
    let fill_io = 256 * 1024u64;
    let fill_n = geo.capacity_bytes() / fill_io;
    drive(&mut dev, qd, fill_n, |i| (i * fill_io, fill_io as u32));
    let fill_s = t.elapsed().as_secs_f64();
    println!(
        "  sequential fill: {fill_n} x 256 KiB in {fill_s:.2} s ({:.0} pages/s)",
        pages as f64 / fill_s
    );

    let mut rng = Rng(7);
    let warm_n = (warmup * pages as f64) as u64;
    let t = Instant::now();
    drive(&mut dev, qd, warm_n, |_| {
        ((rng.next() % pages) * 4096, 4096)
    });
    println!(
        "  warm-up: {warm_n} random 4 KiB writes in {:.2} s, WAF so far {:.3}",
        t.elapsed().as_secs_f64(),
        dev.write_amplification()
    );

    dev.reset_stats();
    let n = (writes * pages as f64) as u64;
    let sim_t0 = dev.now_ns();
    let t = Instant::now();
    drive(&mut dev, qd, n, |_| ((rng.next() % pages) * 4096, 4096));
    let secs = t.elapsed().as_secs_f64();
    let sim_secs = (dev.now_ns() - sim_t0) as f64 / 1e9;

    let hwm_kib = status_kib("VmHWM:");
    let waf = dev.write_amplification();
    let model = flashlab_sim::theory::desnoyers_greedy_waf(geo.effective_op(), geo.pages_per_block);
    let acct = dev.accounting();
    println!("  measured: {n} random 4 KiB writes (QD {qd}) in {secs:.2} s wall, {sim_secs:.2} s simulated");
    println!("  requests/s (wall):      {:.0}", n as f64 / secs);
    println!(
        "  flash ops/s (wall):     {:.0}",
        (acct.flash_programs.iter().sum::<u64>() + acct.flash_reads.iter().sum::<u64>()) as f64
            / secs
    );
    println!("  simulated IOPS:         {:.0}", n as f64 / sim_secs);
    println!("  write amplification:    {waf:.3} (Desnoyers greedy model at op {:.4}: {model:.3}; per-die open and free blocks shift small dies' WAF)", geo.effective_op());
    println!(
        "  GC: {} foreground, {} background, {} pages relocated",
        acct.gc_foreground, acct.gc_background, acct.gc_relocated_pages
    );
    println!(
        "  peak memory (VmHWM):    {:.1} MiB (RSS before open {:.1} MiB)",
        hwm_kib as f64 / 1024.0,
        rss_before_kib as f64 / 1024.0
    );
    println!("  bytes per logical page: {:.2} (peak RSS), {:.2} (peak RSS - RSS before open), {:.2} (simulator structures)",
        hwm_kib as f64 * 1024.0 / pages as f64,
        (hwm_kib.saturating_sub(rss_before_kib)) as f64 * 1024.0 / pages as f64,
        dev.memory_bytes() as f64 / pages as f64);
    if small {
        if let Err(e) = dev.check() {
            eprintln!("sim_bench: checker failed: {e}");
            std::process::exit(1);
        }
        if dev.mapped_pages() != pages || !(1.0..2.0 * model).contains(&waf) {
            eprintln!("sim_bench: unexpected state: {} of {pages} pages mapped, WAF {waf:.3} vs model {model:.3}", dev.mapped_pages());
            std::process::exit(1);
        }
        println!("  checker: ok");
    }
}
