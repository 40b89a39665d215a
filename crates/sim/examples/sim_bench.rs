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
//! cargo run --release -p flashlab-sim --example sim_bench -- --all-ftls  # one row per FTL
//! ```
//! Options: --profile NAME (nvme-tlc), --capacity SIZE (16GiB), --op P (0.07),
//! --qd N (32), --warmup X and --writes X (multiples of the logical capacity;
//! 1 and 1), --ftl KIND (the profile's), --all-ftls (page, block, bast, fast,
//! dftl, two-level, two-level with hints, page with metadata sync; prints a
//! table), --set k=v,k=v (more overrides), --small.
//!
//! With `--all-ftls` the block-mapped FTLs (block, bast, fast) measure fewer
//! writes (`--writes` / 16, at least 2^18): each of their random writes is a
//! merge, so their simulated time is enormous, but their wall-clock speed per
//! request is what the row reports. The stall limit is raised for them (a
//! single FAST log reclaim can take minutes of simulated time at 16 GiB).

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

/// CPU time of this process (user + system), seconds: the speed measure that
/// holds on a shared machine, where wall-clock rates depend on other jobs.
fn cpu_secs() -> f64 {
    #[cfg(target_os = "linux")]
    {
        let mut ts = libc::timespec {
            tv_sec: 0,
            tv_nsec: 0,
        };
        // SAFETY: clock_gettime writes into the timespec we own.
        if unsafe { libc::clock_gettime(libc::CLOCK_PROCESS_CPUTIME_ID, &mut ts) } == 0 {
            return ts.tv_sec as f64 + ts.tv_nsec as f64 / 1e9;
        }
    }
    0.0
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

struct Row {
    label: String,
    n: u64,
    secs: f64,
    cpu: f64,
    waf: f64,
    hwm_mib: f64,
    bytes_per_page: f64,
    map_reads: u64,
    map_writes: u64,
}

struct Opts {
    profile: String,
    capacity: String,
    op: f64,
    qd: usize,
    warmup: f64,
    writes: f64,
    extra: String,
    small: bool,
    verbose: bool,
}

/// Fill, warm up, measure; returns the measured row.
fn bench(o: &Opts, label: &str, ftl: &str) -> Row {
    let rss_before_kib = status_kib("VmRSS:");
    let check = if o.small { ",check=off" } else { "" };
    let ftl_set = if ftl.is_empty() {
        String::new()
    } else {
        format!(",{ftl}")
    };
    let spec = format!(
        "{},capacity={},op={}{check}{ftl_set}{}",
        o.profile, o.capacity, o.op, o.extra
    );
    let mut dev = flashlab_sim::open_device(&spec, 1, o.qd).unwrap_or_else(|e| {
        eprintln!("sim_bench: {e}");
        std::process::exit(2);
    });
    let block_mapped = matches!(dev.config().ftl.kind.name(), "block" | "bast" | "fast");
    let (warmup, writes) = if block_mapped && label != "profile" {
        (o.warmup / 16.0, o.writes / 16.0)
    } else {
        (o.warmup, o.writes)
    };
    let geo = *dev.geometry();
    let pages = geo.logical_pages;
    let qd = o.qd;
    if o.verbose {
        println!("sim_bench: sim:{spec}");
        println!(
            "  {} logical pages of {} B, {} dies, {} blocks/die x {} pages, effective op {:.4}, cache {}, ftl {}",
            pages,
            geo.page_bytes,
            geo.units,
            geo.blocks_per_unit,
            geo.pages_per_block,
            geo.effective_op(),
            if dev.config().cache.enabled { dev.config().cache.size.to_string() } else { "off".into() },
            dev.config().ftl.kind.name()
        );
    }

    let t = Instant::now();
    let fill_io = 256 * 1024u64;
    let fill_n = geo.capacity_bytes() / fill_io;
    drive(&mut dev, qd, fill_n, |i| (i * fill_io, fill_io as u32));
    let fill_s = t.elapsed().as_secs_f64();
    if o.verbose {
        println!(
            "  sequential fill: {fill_n} x 256 KiB in {fill_s:.2} s ({:.0} pages/s)",
            pages as f64 / fill_s
        );
    }

    let mut rng = Rng(7);
    let warm_n = ((warmup * pages as f64) as u64).max(if block_mapped { 1 << 18 } else { 0 });
    let t = Instant::now();
    drive(&mut dev, qd, warm_n, |_| {
        ((rng.next() % pages) * 4096, 4096)
    });
    if o.verbose {
        println!(
            "  warm-up: {warm_n} random 4 KiB writes in {:.2} s, WAF so far {:.3}",
            t.elapsed().as_secs_f64(),
            dev.write_amplification()
        );
    }

    dev.reset_stats();
    let n = ((writes * pages as f64) as u64).max(if block_mapped { 1 << 18 } else { 0 });
    let sim_t0 = dev.now_ns();
    let t = Instant::now();
    let c0 = cpu_secs();
    drive(&mut dev, qd, n, |_| ((rng.next() % pages) * 4096, 4096));
    let secs = t.elapsed().as_secs_f64();
    let cpu = cpu_secs() - c0;
    let sim_secs = (dev.now_ns() - sim_t0) as f64 / 1e9;

    let hwm_kib = status_kib("VmHWM:");
    let waf = dev.write_amplification();
    let model = flashlab_sim::theory::desnoyers_greedy_waf(geo.effective_op(), geo.pages_per_block);
    let acct = dev.accounting();
    if o.verbose {
        println!("  measured: {n} random 4 KiB writes (QD {qd}) in {secs:.2} s wall, {sim_secs:.2} s simulated");
        println!("  requests/s (wall):      {:.0}", n as f64 / secs);
        println!("  requests/s (CPU time):  {:.0}", n as f64 / cpu);
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
    }
    if o.small {
        if let Err(e) = dev.check() {
            eprintln!("sim_bench: checker failed ({label}): {e}");
            std::process::exit(1);
        }
        let page_like = !block_mapped;
        if dev.mapped_pages() != pages || (page_like && !(1.0..2.0 * model).contains(&waf)) {
            eprintln!("sim_bench: unexpected state ({label}): {} of {pages} pages mapped, WAF {waf:.3} vs model {model:.3}", dev.mapped_pages());
            std::process::exit(1);
        }
        if o.verbose {
            println!("  checker: ok");
        }
    }
    Row {
        label: label.to_string(),
        n,
        secs,
        cpu,
        waf,
        hwm_mib: hwm_kib as f64 / 1024.0,
        bytes_per_page: dev.memory_bytes() as f64 / pages as f64,
        map_reads: acct.flash_reads[3],
        map_writes: acct.flash_programs[3],
    }
}

fn main() {
    let mut o = Opts {
        profile: "nvme-tlc".to_string(),
        capacity: "16GiB".to_string(),
        op: 0.07,
        qd: 32,
        warmup: 1.0,
        writes: 1.0,
        extra: String::new(),
        small: false,
        verbose: true,
    };
    let mut ftl = String::new();
    let mut all = false;
    let mut args = std::env::args().skip(1);
    while let Some(a) = args.next() {
        let mut val = || args.next().unwrap_or_else(|| panic!("{a} needs a value"));
        match a.as_str() {
            "--profile" => o.profile = val(),
            "--capacity" => o.capacity = val(),
            "--op" => o.op = val().parse().expect("--op"),
            "--qd" => o.qd = val().parse().expect("--qd"),
            "--warmup" => o.warmup = val().parse().expect("--warmup"),
            "--writes" => o.writes = val().parse().expect("--writes"),
            "--set" => o.extra = format!(",{}", val()),
            "--ftl" => ftl = format!("ftl={}", val()),
            "--all-ftls" => all = true,
            "--small" => o.small = true,
            "--help" | "-h" => {
                println!("sim_bench [--profile P] [--capacity SIZE] [--op P] [--qd N] [--warmup X] [--writes X] [--ftl KIND | --all-ftls] [--set k=v,...] [--small]");
                return;
            }
            other => panic!("unknown option {other}; see --help"),
        }
    }
    if o.small {
        o.capacity = "2GiB".into();
        o.warmup = 2.0;
        o.writes = 1.0;
    }
    if !all {
        bench(&o, if ftl.is_empty() { "profile" } else { "ftl" }, &ftl);
        return;
    }
    let rows: &[(&str, &str)] = &[
        ("page", "ftl=page"),
        ("block", "ftl=block,check.stall_ns=1000000000000000"),
        (
            "bast (8 logs)",
            "ftl=bast,log_blocks=8,check.stall_ns=1000000000000000",
        ),
        (
            "fast (8 logs)",
            "ftl=fast,log_blocks=8,check.stall_ns=1000000000000000",
        ),
        ("dftl (64 KiB CMT)", "ftl=dftl"),
        ("two-level (c=64, no hints)", "ftl=two-level"),
        ("two-level (c=64, hints)", "ftl=two-level,hints=on"),
        ("page + metadata sync", "ftl=page,sync=on"),
    ];
    println!(
        "sim_bench --all-ftls: {} at {} (op {}), QD {}",
        o.profile, o.capacity, o.op, o.qd
    );
    println!("| FTL | measured writes | requests/s (CPU time) | requests/s (wall) | WAF | map reads | map writes | peak RSS (MiB) | bytes / logical page |");
    println!("|-----|------|------|------|------|------|------|------|------|");
    o.verbose = false;
    for (label, set) in rows {
        let r = bench(&o, label, set);
        println!(
            "| {} | {} | {:.0} | {:.0} | {:.2} | {} | {} | {:.1} | {:.2} |",
            r.label,
            r.n,
            r.n as f64 / r.cpu,
            r.n as f64 / r.secs,
            r.waf,
            r.map_reads,
            r.map_writes,
            r.hwm_mib,
            r.bytes_per_page
        );
    }
}
