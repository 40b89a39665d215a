//! The experiments of Chen, Koufaty & Zhang (SIGMETRICS 2009), Wang et al.
//! (IEICE 2011) and Hudlet & Schall (BTW 2011) as plans of runs, each run
//! named after the figure it reproduces.

use flashlab_device::Mode;
use flashlab_pattern::rng::derive_seed;
use flashlab_pattern::units::format_size;
use flashlab_pattern::{Basic, Location, Mix, PatternSpec, Timing};
use serde::{Deserialize, Serialize};

use crate::plan::{Plan, RunStep, Step};
use crate::state::StateMethod;

const KIB: u64 = 1024;
const MIB: u64 = 1024 * KIB;
const GIB: u64 = 1024 * MIB;

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct PaperConfig {
    /// Multiplies every run's IO count (0.25 for a quick look).
    pub scale: f64,
    /// Re-fill the device before each experiment, as Chen et al. did (5.1).
    pub refill: bool,
    pub seed: u64,
    /// Hudlet & Schall's test file size.
    pub test_file_bytes: u64,
}

impl Default for PaperConfig {
    fn default() -> Self {
        PaperConfig {
            scale: 1.0,
            refill: true,
            seed: 42,
            test_file_bytes: GIB,
        }
    }
}

fn basic(location: Location, mode: Mode, io_size: u64) -> Basic {
    Basic {
        location,
        mode,
        io_size_bytes: io_size,
        io_shift_bytes: 0,
    }
}

/// One run of a paper's plan, named `{experiment}-{series}[-{value}]` after
/// the figure it reproduces.
struct RunDef<'a> {
    experiment: &'a str,
    series: &'a str,
    /// The swept parameter ("" for none) and its value in this run.
    parameter: &'a str,
    value: f64,
    primary: Basic,
    mix: Option<Mix>,
    timing: Timing,
    /// (TargetOffset, TargetSize) in bytes; the size is rounded down to the
    /// largest IO and raised to one IO per stream.
    target: (u64, u64),
    ios: u64,
    parallel: u64,
}

struct Builder {
    cfg: PaperConfig,
    device_bytes: u64,
    steps: Vec<Step>,
    n: u64,
}

impl Builder {
    fn count(&self, ios: u64) -> u64 {
        ((ios as f64 * self.cfg.scale).round() as u64).max(16)
    }

    fn cap(&self, bytes: u64) -> u64 {
        bytes.min(self.device_bytes)
    }

    fn run(&mut self, def: RunDef) {
        let RunDef {
            experiment,
            series,
            parameter,
            value,
            primary,
            mix,
            timing,
            target,
            ios,
            parallel,
        } = def;
        self.n += 1;
        let label = if parameter.is_empty() {
            String::new()
        } else {
            format!("-{}", value_label(parameter, value))
        };
        let name = format!("{experiment}-{series}{label}");
        let unit = primary
            .io_size_bytes
            .max(mix.as_ref().map(|m| m.secondary.io_size_bytes).unwrap_or(0));
        let size = target.1 / unit * unit;
        let spec = PatternSpec {
            name: name.clone(),
            primary,
            mix,
            timing,
            target_offset_bytes: target.0,
            target_size_bytes: size.max(unit * parallel),
            io_count: ios,
            io_ignore: 0,
            parallel_degree: parallel,
            queue_depth: 1,
            seed: derive_seed(self.cfg.seed, self.n),
            runtime_ns: None,
            time_based: false,
            rate_iops: None,
            io_size_split: Vec::new(),
        };
        self.steps.push(Step::Run(RunStep {
            name,
            experiment: experiment.into(),
            series: series.into(),
            parameter: parameter.into(),
            value,
            spec,
            adaptive: false,
        }));
    }

    fn fill(&mut self, reason: &str) {
        self.steps.push(Step::EnforceState {
            method: StateMethod::Sequential,
            reason: reason.into(),
        });
    }
}

fn value_label(parameter: &str, value: f64) -> String {
    match parameter {
        "IOSize" | "range" | "stride" | "TargetSize" => format_size(value as u64),
        "selectivity" => format!("{}pct", (value * 100.0).round()),
        _ => format!("{value}"),
    }
}

/// Chen et al. 5.1: "In default, each micro-benchmark runs for 10 seconds"
/// (simulated time on a simulator; the Figure 8(a) ranges use it).
pub const CHEN09_RUN_NS: u64 = 10_000_000_000;

/// Chen, Koufaty & Zhang: general tests (Figure 1), read and write latency
/// by pattern (Figures 2, 3), write cache (Figure 5), read/write
/// interference (Figure 6), background operations (Figure 7), randomness
/// (Figure 8), fragmentation and recovery (Figure 9).
pub fn chen09(cfg: &PaperConfig, device_bytes: u64) -> Plan {
    let mut b = Builder {
        cfg: cfg.clone(),
        device_bytes,
        steps: Vec::new(),
        n: 0,
    };
    let first_gib = (0, b.cap(GIB));
    let whole = (0, device_bytes);
    let seq = Location::Sequential;
    let rnd = Location::Random;
    let stride = Location::Stride { gap_bytes: 4 * KIB };
    b.fill("Chen et al. 5.1: the device is filled with sequential 256 KiB writes first");
    // Figure 1: 4 KiB random in the first GiB, 256 KiB sequential; 32 jobs.
    let c = b.count(1024);
    b.run(RunDef {
        experiment: "fig1",
        series: "random-read",
        parameter: "",
        value: 0.0,
        primary: basic(rnd.clone(), Mode::Read, 4 * KIB),
        mix: None,
        timing: Timing::Consecutive,
        target: first_gib,
        ios: c,
        parallel: 32,
    });
    b.run(RunDef {
        experiment: "fig1",
        series: "sequential-read",
        parameter: "",
        value: 0.0,
        primary: basic(seq.clone(), Mode::Read, 256 * KIB),
        mix: None,
        timing: Timing::Consecutive,
        target: whole,
        ios: b.count(128),
        parallel: 32,
    });
    b.run(RunDef {
        experiment: "fig1",
        series: "random-write",
        parameter: "",
        value: 0.0,
        primary: basic(rnd.clone(), Mode::Write, 4 * KIB),
        mix: None,
        timing: Timing::Consecutive,
        target: first_gib,
        ios: c,
        parallel: 32,
    });
    b.run(RunDef {
        experiment: "fig1",
        series: "sequential-write",
        parameter: "",
        value: 0.0,
        primary: basic(seq.clone(), Mode::Write, 256 * KIB),
        mix: None,
        timing: Timing::Consecutive,
        target: whole,
        ios: b.count(128),
        parallel: 32,
    });
    // Figure 2: 4 KiB reads, sequential / random / stride, one job, each on
    // a freshly filled device ("before each experiment", Chen et al. 5.1).
    let c = b.count(4096);
    for (name, loc) in [
        ("sequential", seq.clone()),
        ("random", rnd.clone()),
        ("stride", stride.clone()),
    ] {
        if cfg.refill {
            b.fill("Chen et al. 5.1: re-fill before each experiment");
        }
        b.run(RunDef {
            experiment: "fig2",
            series: name,
            parameter: "",
            value: 0.0,
            primary: basic(loc, Mode::Read, 4 * KIB),
            mix: None,
            timing: Timing::Consecutive,
            target: first_gib,
            ios: c,
            parallel: 1,
        });
    }
    // Figure 3: the same as writes, each on a freshly filled device.
    for (name, loc) in [
        ("sequential", seq.clone()),
        ("random", rnd.clone()),
        ("stride", stride.clone()),
    ] {
        if cfg.refill {
            b.fill("Chen et al. 5.1: re-fill before each experiment");
        }
        b.run(RunDef {
            experiment: "fig3",
            series: name,
            parameter: "",
            value: 0.0,
            primary: basic(loc, Mode::Write, 4 * KIB),
            mix: None,
            timing: Timing::Consecutive,
            target: first_gib,
            ios: c,
            parallel: 1,
        });
    }
    // Figure 5: writes with the write cache disabled.
    b.steps.push(Step::WriteCache { enabled: false });
    for (name, loc) in [
        ("sequential", seq.clone()),
        ("random", rnd.clone()),
        ("stride", stride.clone()),
    ] {
        if cfg.refill {
            b.fill("Chen et al. 5.1: re-fill before each experiment");
        }
        b.run(RunDef {
            experiment: "fig5-cache-off",
            series: name,
            parameter: "",
            value: 0.0,
            primary: basic(loc, Mode::Write, 4 * KIB),
            mix: None,
            timing: Timing::Consecutive,
            target: first_gib,
            ios: c,
            parallel: 1,
        });
    }
    b.steps.push(Step::WriteCache { enabled: true });
    // Figure 6: 1000 requests of 4 KiB in four read/write sequences, without and with a 10 ms interval.
    let c = b.count(1000);
    let area = (0, b.cap(64 * MIB));
    for (timing, suffix) in [
        (Timing::Consecutive, ""),
        (
            Timing::Pause {
                pause_ns: 10_000_000,
            },
            "-10ms",
        ),
    ] {
        if cfg.refill {
            b.fill("Chen et al. 5.1: re-fill before each experiment");
        }
        let r = |loc| basic(loc, Mode::Read, 4 * KIB);
        let w = |loc| basic(loc, Mode::Write, 4 * KIB);
        let one_to_one = |second: Basic| {
            Some(Mix {
                secondary: second,
                ratio_primary: 1,
                ratio_secondary: 1,
                random_order: false,
                shared_location: false,
            })
        };
        b.run(RunDef {
            experiment: "fig6",
            series: &format!("only-read{suffix}"),
            parameter: "",
            value: 0.0,
            primary: r(seq.clone()),
            mix: None,
            timing,
            target: area,
            ios: c,
            parallel: 1,
        });
        b.run(RunDef {
            experiment: "fig6",
            series: &format!("only-write{suffix}"),
            parameter: "",
            value: 0.0,
            primary: w(seq.clone()),
            mix: None,
            timing,
            target: area,
            ios: c,
            parallel: 1,
        });
        b.run(RunDef {
            experiment: "fig6",
            series: &format!("read-n-write-n{suffix}"),
            parameter: "",
            value: 0.0,
            primary: r(seq.clone()),
            mix: one_to_one(w(seq.clone())),
            timing,
            target: area,
            ios: 2 * c,
            parallel: 1,
        });
        b.run(RunDef {
            experiment: "fig6",
            series: &format!("write-n-read-n{suffix}"),
            parameter: "",
            value: 0.0,
            primary: w(seq.clone()),
            mix: one_to_one(r(seq.clone())),
            timing,
            target: area,
            ios: 2 * c,
            parallel: 1,
        });
        let mut odd = w(stride.clone());
        odd.io_shift_bytes = 4 * KIB;
        b.run(RunDef {
            experiment: "fig6",
            series: &format!("read-n-write-n+1{suffix}"),
            parameter: "",
            value: 0.0,
            primary: r(stride.clone()),
            mix: one_to_one(odd),
            timing,
            target: area,
            ios: 2 * c,
            parallel: 1,
        });
        let mut far = w(seq.clone());
        far.io_shift_bytes = 4 * MIB;
        b.run(RunDef {
            experiment: "fig6",
            series: &format!("read-n-write-n+4MiB{suffix}"),
            parameter: "",
            value: 0.0,
            primary: r(seq.clone()),
            mix: one_to_one(far),
            timing,
            target: (0, b.cap(64 * MIB + 4 * MIB)),
            ios: 2 * c,
            parallel: 1,
        });
    }
    // Figure 7: sequential 4 KiB, half writes, without and with a 10 ms
    // interval. Section 5.6: "we use the toolkit to run a *sequential*
    // workload using request size of 4KB. The type (read/write) of each
    // request is randomly determined and 50% of the requests are writes":
    // one sequential address stream, each IO's mode drawn at random (a
    // read's page was not just written, and a write follows a read about
    // half the time, so neither side stays a continuous stream).
    let c = b.count(5000);
    for (timing, suffix) in [
        (Timing::Consecutive, ""),
        (
            Timing::Pause {
                pause_ns: 10_000_000,
            },
            "-10ms",
        ),
    ] {
        if cfg.refill {
            b.fill("Chen et al. 5.1: re-fill before each experiment");
        }
        let mix = Some(Mix {
            secondary: basic(seq.clone(), Mode::Write, 4 * KIB),
            ratio_primary: 1,
            ratio_secondary: 1,
            random_order: true,
            shared_location: true,
        });
        b.run(RunDef {
            experiment: "fig7",
            series: &format!("seq-50pct-write{suffix}"),
            parameter: "",
            value: 0.0,
            primary: basic(seq.clone(), Mode::Read, 4 * KIB),
            mix,
            timing,
            target: area,
            ios: c,
            parallel: 1,
        });
    }
    // Figure 8: random writes over a growing range, stride writes with a
    // growing stride. Each range runs for the paper's 10 seconds (5.1: "In
    // default, each micro-benchmark runs for 10 seconds"), at most 12288
    // writes, and is measured whole: section 5.7 reports "the average
    // request latency" of the run, so a device whose log blocks absorb the
    // first few thousand writes after the fill (ssd-l's random log holds
    // 4096) averages them in, as the paper's did. The ranges follow each
    // other without a re-fill (the figure is one experiment), each starting
    // from the state the previous one left.
    let c = b.count(12_288);
    if cfg.refill {
        b.fill("Chen et al. 5.1: re-fill before each experiment");
    }
    let mut ranges: Vec<u64> = [1, 2, 4, 8, 16, 30]
        .iter()
        .map(|g| g * GIB)
        .filter(|r| *r <= device_bytes)
        .collect();
    if ranges.is_empty() || *ranges.last().unwrap() < device_bytes.min(30 * GIB) {
        ranges.push(device_bytes.min(30 * GIB) / (4 * KIB) * 4 * KIB);
    }
    for r in ranges {
        let at = b.steps.len();
        b.run(RunDef {
            experiment: "fig8a",
            series: "random-write",
            parameter: "range",
            value: r as f64,
            primary: basic(rnd.clone(), Mode::Write, 4 * KIB),
            mix: None,
            timing: Timing::Consecutive,
            target: (0, r),
            ios: c,
            parallel: 1,
        });
        if let Some(Step::Run(run)) = b.steps.get_mut(at) {
            run.spec.runtime_ns = Some(CHEN09_RUN_NS);
        }
    }
    // Stride writes keep the paper's 1024 (a larger count would drop the
    // large strides, which wrap around the device at most 4 times). Figure
    // 8(b) is its own experiment: the device is re-filled first (5.1),
    // so its smallest stride does not inherit the merges Figure 8(a)'s
    // 30 GB range left pending.
    if cfg.refill {
        b.fill("Chen et al. 5.1: re-fill before each experiment");
    }
    let c = b.count(1024);
    let mut s = 4 * KIB;
    while s <= 128 * MIB && c * (s + 4 * KIB) <= device_bytes * 4 {
        b.run(RunDef {
            experiment: "fig8b",
            series: "stride-write",
            parameter: "stride",
            value: s as f64,
            primary: basic(Location::Stride { gap_bytes: s }, Mode::Write, 4 * KIB),
            mix: None,
            timing: Timing::Consecutive,
            target: whole,
            ios: c,
            parallel: 1,
        });
        s *= 4;
    }
    // Figure 9: the four 4 KiB patterns before fragmentation, after "striker", after recovery.
    let c = b.count(4096);
    // After the striker every write is cleaning-bound, but a write-back
    // cache first absorbs its size in writes at cache speed: a run measures
    // the fragmented device only past that start-up. Each run detects and
    // ignores its start-up, up to half the run, and on SSD-M it lasts longer
    // than the cache's 2048 pages (the cache drains while it fills), so at
    // 4096 writes the measured half was still mostly cached (8.4 MB/s, 4 %
    // above 1 ms, where its last quarter ran at 0.85 ms a write). Four times
    // as many writes measure the running phase.
    let c_fragmented_writes = b.count(4 * 4096);
    let four = |b: &mut Builder, phase: &str| {
        for (name, loc, mode) in [
            ("RND-RD", rnd.clone(), Mode::Read),
            ("SEQ-RD", seq.clone(), Mode::Read),
            ("RND-WR", rnd.clone(), Mode::Write),
            ("SEQ-WR", seq.clone(), Mode::Write),
        ] {
            let c = if phase == "fragmented" && mode == Mode::Write {
                c_fragmented_writes
            } else {
                c
            };
            b.run(RunDef {
                experiment: "fig9",
                series: &format!("{name}-{phase}"),
                parameter: "",
                value: 0.0,
                primary: basic(loc, mode, 4 * KIB),
                mix: None,
                timing: Timing::Consecutive,
                target: if name.starts_with("RND") {
                    whole
                } else {
                    first_gib
                },
                ios: c,
                parallel: 1,
            });
        }
    };
    b.fill("Chen et al. 5.8: a freshly filled device before fragmentation");
    four(&mut b, "before");
    // Striker: 4 KiB random writes, 4 GiB in all, over the whole device.
    let striker = b.cap(4 * GIB) / (4 * KIB);
    b.run(RunDef {
        experiment: "fig9",
        series: "striker",
        parameter: "",
        value: 0.0,
        primary: basic(rnd.clone(), Mode::Write, 4 * KIB),
        mix: None,
        timing: Timing::Consecutive,
        target: whole,
        ios: ((striker as f64 * cfg.scale.min(1.0)) as u64).max(1024),
        parallel: 1,
    });
    four(&mut b, "fragmented");
    // Recovery: fill with 256 KiB writes, then write the first GiB sequentially in 4 KiB, four times.
    b.fill("Chen et al. 5.8 recovery: big sequential writes");
    let passes = first_gib.1 / (4 * KIB);
    b.run(RunDef {
        experiment: "fig9",
        series: "recovery-4KiB-passes",
        parameter: "",
        value: 0.0,
        primary: basic(seq.clone(), Mode::Write, 4 * KIB),
        mix: None,
        timing: Timing::Consecutive,
        target: first_gib,
        ios: ((4 * passes) as f64 * cfg.scale.min(1.0)) as u64 + 1,
        parallel: 1,
    });
    four(&mut b, "recovered");
    Plan {
        suite: "chen09".into(),
        steps: b.steps,
    }
}

/// Wang et al.: sequential throughput by request size (Figure 1), random
/// throughput with one (Figure 2) and thirty (Figure 3) outstanding IOs for
/// reads, writes and a 50/50 mix, response-time distributions (Figure 4).
pub fn wang11(cfg: &PaperConfig, device_bytes: u64) -> Plan {
    let mut b = Builder {
        cfg: cfg.clone(),
        device_bytes,
        steps: Vec::new(),
        n: 0,
    };
    b.fill("a filled device");
    let sizes: Vec<u64> = (0..=9).map(|e| 512u64 << e).collect();
    let area = (0, b.cap(8 * GIB));
    // Figure 1 shows up to 256 KiB; the text confirms Table 2's bandwidth
    // at 1 MiB ("when the request size was set to 1MB"), so the sequential
    // runs go on to 1 MiB.
    let seq_sizes: Vec<u64> = (0..=11).map(|e| 512u64 << e).collect();
    for mode in [Mode::Read, Mode::Write] {
        for &s in &seq_sizes {
            let ios = b.count((64 * MIB / s).clamp(256, 8192));
            b.run(RunDef {
                experiment: "fig1",
                series: &format!("sequential-{mode}"),
                parameter: "IOSize",
                value: s as f64,
                primary: basic(Location::Sequential, mode, s),
                mix: None,
                timing: Timing::Consecutive,
                target: area,
                ios,
                parallel: 1,
            });
        }
    }
    // Wang et al. do not give the drives' state; they had served the
    // paper's TPC-C runs (section 3), i.e. had been written at random, and
    // Table 2's random-write IOPS are the vendors' steady-state figures. So
    // the random experiments run after uFLIP's random state (random writes
    // of random size until every byte is written, its first pass one
    // capacity at random places): a page-mapped drive is then cleaning while
    // it writes, as in service.
    b.steps.push(Step::EnforceState {
        method: StateMethod::Random,
        reason: "Wang et al.: drives in service (TPC-C, section 3); random writes measured in steady state".into(),
    });
    for (fig, parallel) in [("fig2", 1u64), ("fig3", 30)] {
        for series in ["read", "write", "mix50"] {
            for &s in &sizes[3..] {
                let (mode, mix) = match series {
                    "read" => (Mode::Read, None),
                    "write" => (Mode::Write, None),
                    _ => (
                        Mode::Read,
                        Some(Mix {
                            secondary: basic(Location::Random, Mode::Write, s),
                            ratio_primary: 1,
                            ratio_secondary: 1,
                            random_order: false,
                            shared_location: false,
                        }),
                    ),
                };
                let ios = b.count(wang11_random_ios(series, s, parallel));
                b.run(RunDef {
                    experiment: fig,
                    series: &format!("random-{series}"),
                    parameter: "IOSize",
                    value: s as f64,
                    primary: basic(Location::Random, mode, s),
                    mix,
                    timing: Timing::Consecutive,
                    target: area,
                    ios,
                    parallel,
                });
            }
        }
    }
    Plan {
        suite: "wang11".into(),
        steps: b.steps,
    }
}

/// Bytes a wang11 random write or mix run writes at least, so that its
/// throughput is the drive's steady state and not its buffer's: the largest
/// cache Wang et al.'s Table 2 lists ("OCZ VERTEX EX ... 120GB 64MB"). The
/// paper gives no run length or preconditioning for its micro benchmark
/// (section 2.2.1 says only "We employed default settings in all the
/// experiments"); a run shorter than the buffer measures the buffer (the
/// X25-E's 1,024 random writes at one outstanding IO ran at 13,092 IOPS, 2.5x
/// its 30-outstanding rate, because none waited for cleaning).
pub const WANG11_STEADY_WRITE_BYTES: u64 = 64 * MIB;

/// IOs per stream of a wang11 random run of `series` with `io_size` bytes
/// and `parallel` outstanding IOs (before the suite's scale). Reads keep
/// 1,024 (128 per stream with 30): they have no start-up phase. Writes and
/// the 50/50 mix write [`WANG11_STEADY_WRITE_BYTES`] over all streams
/// (the mix half of it), at least as many IOs as reads and at most the
/// start-up detector's window (`runner::STARTUP_WINDOW`), which then flags
/// the buffered start as warm-up.
pub fn wang11_random_ios(series: &str, io_size: u64, parallel: u64) -> u64 {
    let floor = if parallel == 1 { 1024 } else { 128 };
    if series == "read" {
        return floor;
    }
    let total = (WANG11_STEADY_WRITE_BYTES / io_size).min(crate::runner::STARTUP_WINDOW as u64);
    total.div_ceil(parallel).max(floor)
}

/// Hudlet & Schall: sequential, random-once and skip-sequential access to a
/// test file, by page size and queue depth, on an empty then a full device,
/// the index-vs-scan break-even selectivity, and sustained writes per
/// second before and after a TRIM (Figures 4 and 5).
pub fn hudlet11(cfg: &PaperConfig, device_bytes: u64) -> Plan {
    let mut b = Builder {
        cfg: cfg.clone(),
        device_bytes,
        steps: Vec::new(),
        n: 0,
    };
    let file = (0, b.cap(cfg.test_file_bytes));
    // The test file, filled with data, on an otherwise empty device.
    b.steps.push(Step::Discard {
        reason: "Hudlet & Schall: a nearly empty drive".into(),
    });
    let pages = |size: u64| file.1 / size;
    b.run(RunDef {
        experiment: "setup",
        series: "fill-test-file",
        parameter: "",
        value: 0.0,
        primary: basic(Location::Sequential, Mode::Write, 256 * KIB),
        mix: None,
        timing: Timing::Consecutive,
        target: file,
        ios: pages(256 * KIB).max(1),
        parallel: 1,
    });
    for state in ["empty", "full"] {
        if state == "full" {
            b.fill("Hudlet & Schall: the drive filled with data (the test file included)");
        }
        // Every read pattern before any write of this state: "First, we
        // measured read and write patterns on a nearly empty drive" (section
        // 4). Section 6's -50 % for SSD3/SSD4 at 32 KiB needs sequential
        // reads that the read-ahead serves, which a file already rewritten by
        // small random writes defeats (Chen et al. 5.8: fragmentation "makes
        // readahead ineffective"), so the reads see the file as filled.
        for mode in [Mode::Read, Mode::Write] {
            for size in [4 * KIB, 8 * KIB, 16 * KIB, 32 * KIB, 64 * KIB] {
                for (name, loc) in [
                    ("sequential", Location::Sequential),
                    ("random-once", Location::RandomOnce),
                ] {
                    let ios = b.count(pages(size).min(65_536));
                    b.run(RunDef {
                        experiment: &format!("pagesize-{state}"),
                        series: &format!("{name}-{mode}"),
                        parameter: "IOSize",
                        value: size as f64,
                        primary: basic(loc.clone(), mode, size),
                        mix: None,
                        timing: Timing::Consecutive,
                        target: file,
                        ios,
                        parallel: 1,
                    });
                }
            }
        }
    }
    // Figure 6: random reads by queue depth, in the paper's two page sizes
    // (section 5: "We measured using 32K pages for bandwidth and 2 - 8K
    // pages for IOPS"): 4 KiB for the IOPS against the data sheets, 32 KiB
    // for Figure 6's "data throughput".
    for (series, size) in [
        ("random-once-read", 4 * KIB),
        ("random-once-read-32KiB", 32 * KIB),
    ] {
        for qd in [1u64, 2, 4, 8, 16, 32] {
            let ios = b.count(16_384).min(pages(size).max(1));
            b.run_qd(
                "queue-depth",
                series,
                qd,
                basic(Location::RandomOnce, Mode::Read, size),
                file,
                ios,
            );
        }
    }
    // Index-vs-scan: a full scan, and index access (skip-sequential) at a range of selectivities.
    let n = pages(4 * KIB);
    let scan_ios = b.count(n.min(262_144));
    b.run(RunDef {
        experiment: "break-even",
        series: "scan",
        parameter: "selectivity",
        value: 1.0,
        primary: basic(Location::Sequential, Mode::Read, 4 * KIB),
        mix: None,
        timing: Timing::Consecutive,
        target: (0, scan_ios * 4 * KIB),
        ios: scan_ios,
        parallel: 1,
    });
    for s in [0.01, 0.05, 0.1, 0.25, 0.5, 0.75, 0.9, 0.95, 1.0] {
        let ios = ((scan_ios as f64 * s).round() as u64).max(16);
        b.run(RunDef {
            experiment: "break-even",
            series: "skip-sequential",
            parameter: "selectivity",
            value: s,
            primary: basic(
                Location::SkipSequential { fraction: s },
                Mode::Read,
                4 * KIB,
            ),
            mix: None,
            timing: Timing::Consecutive,
            target: (0, scan_ios * 4 * KIB),
            ios,
            parallel: 1,
        });
        b.run(RunDef {
            experiment: "break-even",
            series: "random-once",
            parameter: "selectivity",
            value: s,
            primary: basic(Location::RandomOnce, Mode::Read, 4 * KIB),
            mix: None,
            timing: Timing::Consecutive,
            target: (0, scan_ios * 4 * KIB),
            ios,
            parallel: 1,
        });
    }
    // Section 6, Figure 4: sustained writes tracked per second ("every 4 to
    // 5 seconds, performance is heavily degraded for about 3 seconds"), on
    // the full drive, after every read experiment (the writes fragment the
    // test file): 32 KiB random writes (footnote 3's preferred page size) to
    // the test file, twice its size. Not scaled by `scale`: the series must
    // span several periods whatever the IO budget.
    let fig4_ios = 2 * pages(32 * KIB).max(1);
    b.run(RunDef {
        experiment: "fig4",
        series: "random-write-per-second",
        parameter: "",
        value: 0.0,
        primary: basic(Location::Random, Mode::Write, 32 * KIB),
        mix: None,
        timing: Timing::Consecutive,
        target: file,
        ios: fig4_ios,
        parallel: 1,
    });
    // Figure 5: writes right after TRIM of most of the full drive ("right
    // after deleting ~ 130 GB of files on the drive and issuing
    // corresponding TRIM commands"): the whole drive discarded, then the
    // same writes, four times the test file (a length chosen before any
    // run, not tuned), compared first half against second half.
    b.steps.push(Step::Discard {
        reason: "Hudlet & Schall Figure 5: files deleted and trimmed on a full drive".into(),
    });
    b.run(RunDef {
        experiment: "fig5",
        series: "random-write-after-trim",
        parameter: "",
        value: 0.0,
        primary: basic(Location::Random, Mode::Write, 32 * KIB),
        mix: None,
        timing: Timing::Consecutive,
        target: file,
        ios: 2 * fig4_ios,
        parallel: 1,
    });
    Plan {
        suite: "hudlet11".into(),
        steps: b.steps,
    }
}

impl Builder {
    fn run_qd(
        &mut self,
        experiment: &str,
        series: &str,
        qd: u64,
        primary: Basic,
        target: (u64, u64),
        ios: u64,
    ) {
        self.run(RunDef {
            experiment,
            series,
            parameter: "QD",
            value: qd as f64,
            primary,
            mix: None,
            timing: Timing::Consecutive,
            target,
            ios,
            parallel: 1,
        });
        if let Some(Step::Run(r)) = self.steps.last_mut() {
            r.spec.queue_depth = qd;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every wang11 random write and mix run writes at least Table 2's
    /// largest cache (64 MB) or fills the start-up detector's window, so its
    /// throughput is the drive's steady state, not its buffer's; reads keep
    /// their short runs. Fails if the runs go back to 1,024 IOs (the X25-E
    /// then wrote 4 MiB at 13,092 IOPS, none of it waiting for cleaning).
    #[test]
    fn wang11_write_runs_outlast_the_buffer() {
        let plan = wang11(&PaperConfig::default(), 64 * GIB);
        let mut checked = 0;
        for run in plan.steps.iter().flat_map(|s| s.runs()) {
            let s = &run.spec;
            if !run.series.starts_with("random-") {
                continue;
            }
            let total = s.total_ios();
            let size = s.primary.io_size_bytes;
            if run.series == "random-read" {
                assert!(
                    total <= 4096,
                    "{}: reads stay short ({total} IOs)",
                    run.name
                );
                continue;
            }
            let writes = if run.series == "random-mix50" {
                total / 2
            } else {
                total
            };
            let window = crate::runner::STARTUP_WINDOW as u64;
            assert!(
                writes * size >= WANG11_STEADY_WRITE_BYTES / 2 || total >= window,
                "{}: {total} IOs of {size} bytes write {} MiB, under the 64 MB buffer",
                run.name,
                (writes * size) >> 20
            );
            checked += 1;
        }
        // 7 sizes x (write, mix) x (1, 30 outstanding)
        assert_eq!(checked, 28);
    }
}
