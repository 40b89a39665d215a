//! Budilovsky, Toledo & Zuck, "Prototyping a high-performance low-cost
//! solid-state disk" (SYSTOR 2011), section 7, on the simulator
//! (`flashlab suite budilovsky11`, docs/budilovsky11.md).
//!
//! Every experiment starts from a sequentially filled device (the simulator's
//! `prefill`, which runs every page through the FTL, so the map chunks are on
//! flash and the host hint cache saw them) and then issues 4 KiB requests of
//! one pattern at queue depth 1: sequential read, random read, sequential
//! write, random write. Write patterns first run a warm-up of the same length
//! so garbage collection is active when measuring. The metric is the average
//! flash-chip time per host request ([`flashlab_sim::breakdown::ChipTime`]):
//! data read, data write, chunk read, chunk write, GC.
//!
//! Configurations (`sim:budilovsky11`: 8 chips on 4 buses, 4 KiB pages):
//! - **DFTL-like**: page-sized chunks (1024 entries), no hints (Figure 5 left);
//! - **small chunks**: c = 64 entries (256 bytes), no hints (Figure 6 right);
//! - **small chunks + hints**: c = 64 with a host hint cache of the whole map (Figure 7 right).
//!
//! Variants: slow MLC (200 us read, 1.5 ms program; Figure 8) and a fast bus
//! (5 ns per byte; Figure 9), and the hint-cache sweep of Figure 10: the
//! fraction of requests that needed a chunk read from flash, with the host
//! cache at 20-100 % of the map, for a random-write and a 50 % random write
//! workload. The paper's claim checked: with small chunks and hints, flash page
//! accesses per 4 KiB request are 1 + epsilon for every pattern.

use std::fmt::Write as _;

use flashlab_device::{Device, IoRequest, Mode};
use flashlab_pattern::rng::Rng;
use flashlab_sim::breakdown::ChipTime;
use flashlab_sim::nand::NandTiming;
use flashlab_sim::SimDevice;
use serde::Serialize;

/// Suite parameters.
#[derive(Clone, Debug)]
pub struct Params {
    /// Simulated device capacity (the paper: 4 GiB).
    pub capacity: String,
    /// Measured requests per experiment (0 = the logical pages / 8).
    pub requests: u64,
    /// Extra `key=value` simulator overrides applied to every configuration.
    pub extra: String,
    pub seed: u64,
}

impl Params {
    /// The default run: the paper's 4 GiB, 2^17 requests per experiment (seconds).
    pub fn default_run() -> Params {
        Params {
            capacity: "4GiB".into(),
            requests: 1 << 17,
            extra: String::new(),
            seed: 11,
        }
    }

    /// A small, fast run for tests.
    pub fn quick() -> Params {
        Params {
            capacity: "256MiB".into(),
            requests: 1 << 13,
            extra: String::new(),
            seed: 11,
        }
    }
}

/// The access patterns of Figures 5-9.
pub const PATTERNS: [&str; 4] = ["SR", "RR", "SW", "RW"];

/// One measured experiment.
#[derive(Clone, Debug, Serialize)]
pub struct Cell {
    pub config: String,
    pub pattern: String,
    pub requests: u64,
    pub chip_time: ChipTime,
    /// Fraction of host requests that needed a chunk read from flash.
    pub chunk_read_fraction: f64,
    /// Flash writes per host write; `None` for read-only patterns, where
    /// there is nothing to amplify.
    pub write_amplification: Option<f64>,
}

/// One figure: configurations x patterns.
#[derive(Clone, Debug, Serialize)]
pub struct Figure {
    pub name: String,
    pub title: String,
    pub timing: String,
    pub cells: Vec<Cell>,
}

/// Figure 10: chunk-read fraction against hint-cache size.
#[derive(Clone, Debug, Serialize)]
pub struct HintSweep {
    /// (host cache % of the full map, random workload, 50 % random workload)
    pub points: Vec<(u32, f64, f64)>,
}

/// Everything the suite measured.
#[derive(Clone, Debug, Serialize)]
pub struct Report {
    pub capacity: String,
    pub requests: u64,
    pub figures: Vec<Figure>,
    pub hint_sweep: HintSweep,
    /// Page accesses per request minus 1, small chunks + hints, default
    /// timing, per pattern, in the paper's convention (section 7): map-chunk
    /// pages written because of garbage collection count as host-related.
    pub epsilon: Vec<(String, f64)>,
    /// The same with the map writes due to GC relocations left out (not the
    /// paper's convention; the abstract's "ignoring garbage-collection costs").
    pub epsilon_excluding_gc_map_writes: Vec<(String, f64)>,
}

/// What the paper says about epsilon, verbatim (section, text); a test
/// checks them against the paper.
pub const QUOTES: [(&str, &str); 2] = [
    ("section 8", "our SSD performs only 1 + epsilon physical accesses to NAND flash pages for every request of a page-size block by the host, for a very small epsilon"),
    ("section 7", "When the SSD writes pages of mapping chunks, the pages include both SCSI-triggered chunks and garbage-collection-triggered chunks. We consider all of these page write operations to be SCSI related (this makes our results seem a little worse than they really are)."),
];

/// The three configurations of Figures 5-7: (name, overrides).
pub const CONFIGS: [(&str, &str); 3] = [
    ("DFTL-like", "chunk_entries=0,hints=off"),
    ("small chunks", "chunk_entries=64,hints=off"),
    ("small chunks + hints", "chunk_entries=64,hints=on"),
];

fn open(p: &Params, overrides: &str) -> Result<SimDevice, String> {
    let extra = if p.extra.is_empty() {
        String::new()
    } else {
        format!(",{}", p.extra)
    };
    let spec = format!(
        "budilovsky11,capacity={},prefill=on,{overrides}{extra}",
        p.capacity
    );
    flashlab_sim::open_device(&spec, p.seed, 1).map_err(|e| e.to_string())
}

/// Issue `n` 4 KiB requests at queue depth 1; `next(i)` gives (page, mode).
fn drive(
    dev: &mut SimDevice,
    n: u64,
    mut next: impl FnMut(u64) -> (u64, Mode),
) -> Result<(), String> {
    let mut out = Vec::with_capacity(1);
    for i in 0..n {
        let (page, mode) = next(i);
        dev.submit(IoRequest {
            tag: i,
            offset_bytes: page * 4096,
            size_bytes: 4096,
            mode,
        })
        .map_err(|e| e.to_string())?;
        out.clear();
        while out.is_empty() {
            dev.poll(None, &mut out).map_err(|e| e.to_string())?;
        }
    }
    Ok(())
}

fn pattern_gen(pattern: &str, pages: u64, seed: u64) -> impl FnMut(u64) -> (u64, Mode) {
    let mode = if pattern.ends_with('W') {
        Mode::Write
    } else {
        Mode::Read
    };
    let random = pattern.starts_with('R');
    let mut rng = Rng::new(seed);
    let mut seq = 0u64;
    move |_| {
        let page = if random {
            rng.next_u64() % pages
        } else {
            seq = (seq + 1) % pages;
            seq
        };
        (page, mode)
    }
}

/// Run one configuration on one pattern.
fn measure(p: &Params, config: &str, overrides: &str, pattern: &str) -> Result<Cell, String> {
    let mut dev = open(p, overrides)?;
    let pages = dev.geometry().logical_pages;
    let n = if p.requests == 0 {
        pages / 8
    } else {
        p.requests
    };
    let mut gen = pattern_gen(pattern, pages, p.seed ^ 0x5eed);
    if pattern.ends_with('W') {
        drive(&mut dev, n, &mut gen)?;
    }
    dev.reset_stats();
    drive(&mut dev, n, &mut gen)?;
    Ok(cell(&dev, config, pattern, n))
}

fn cell(dev: &SimDevice, config: &str, pattern: &str, n: u64) -> Cell {
    let t = NandTiming::resolve(&dev.config().nand, dev.geometry().page_bytes);
    let a = dev.accounting();
    Cell {
        config: config.to_string(),
        pattern: pattern.to_string(),
        requests: n,
        chip_time: ChipTime::from_accounting(a, &t),
        chunk_read_fraction: a.map_flash_reads as f64 / a.host_requests().max(1) as f64,
        // A read-only pattern writes nothing: its WAF is undefined, not 0.
        write_amplification: pattern.ends_with('W').then(|| dev.write_amplification()),
    }
}

fn figure(
    p: &Params,
    name: &str,
    title: &str,
    timing: &str,
    configs: &[(&str, &str)],
) -> Result<Figure, String> {
    let mut cells = Vec::new();
    for (config, ov) in configs {
        let ov = if timing.is_empty() {
            ov.to_string()
        } else {
            format!("{ov},{timing}")
        };
        for pat in PATTERNS {
            cells.push(measure(p, config, &ov, pat)?);
        }
    }
    Ok(Figure {
        name: name.into(),
        title: title.into(),
        timing: timing.into(),
        cells,
    })
}

/// Figure 10: requests needing a chunk read, by host hint-cache size.
fn hint_sweep(p: &Params) -> Result<HintSweep, String> {
    let mut points = Vec::new();
    for pct in [20u32, 40, 60, 80, 100] {
        let mut fr = [0.0; 2];
        for (k, random_share) in [1.0f64, 0.5].into_iter().enumerate() {
            let probe = open(p, "chunk_entries=64,hints=on")?;
            let pages = probe.geometry().logical_pages;
            drop(probe);
            let chunks = pages.div_ceil(64);
            let host = (chunks * pct as u64 / 100).max(1);
            let mut dev = open(p, &format!("chunk_entries=64,hints=on,hint_chunks={host}"))?;
            let n = if p.requests == 0 {
                pages / 8
            } else {
                p.requests
            };
            let mut rng = Rng::new(p.seed ^ (pct as u64) << 8 ^ k as u64);
            let mut seq = rng.next_u64() % pages;
            let mut gen = move |_| {
                let r = rng.next_u64();
                let page = if random_share >= 1.0 || r & 1 == 0 {
                    r % pages
                } else {
                    seq = (seq + 1) % pages;
                    seq
                };
                (page, Mode::Write)
            };
            drive(&mut dev, n, &mut gen)?;
            dev.reset_stats();
            drive(&mut dev, n, &mut gen)?;
            let a = dev.accounting();
            fr[k] = a.map_flash_reads as f64 / a.host_requests().max(1) as f64;
        }
        points.push((pct, fr[0], fr[1]));
    }
    Ok(HintSweep { points })
}

/// Run the whole suite. `progress` is told what runs.
pub fn run(p: &Params, mut progress: impl FnMut(&str)) -> Result<Report, String> {
    let mut figures = Vec::new();
    progress("Figures 5-7: DFTL-like, small chunks, small chunks + hints");
    figures.push(figure(
        p,
        "fig5-7",
        "Figures 5-7: chip time per 4 KiB request (default NAND: 25 us read, 200 us program, 25 ns/B bus)",
        "",
        &CONFIGS,
    )?);
    progress("Figure 8: slow MLC (200 us read, 1.5 ms program)");
    figures.push(figure(
        p,
        "fig8",
        "Figure 8: slow MLC, 200 us read and 1.5 ms program (bus unchanged)",
        "nand.read_ns=200000,nand.program_ns=1500000",
        &CONFIGS[1..],
    )?);
    progress("Figure 9: fast bus (5 ns per byte)");
    figures.push(figure(
        p,
        "fig9",
        "Figure 9: fast NAND bus, 5 ns per byte",
        "nand.bus_ns_per_byte=5",
        &CONFIGS[1..],
    )?);
    progress("Figure 10: hint-cache size sweep");
    let hint_sweep = hint_sweep(p)?;
    let hinted: Vec<&Cell> = figures[0]
        .cells
        .iter()
        .filter(|c| c.config == CONFIGS[2].0)
        .collect();
    let epsilon = hinted
        .iter()
        .map(|c| (c.pattern.clone(), c.chip_time.page_accesses - 1.0))
        .collect();
    let epsilon_excluding_gc_map_writes = hinted
        .iter()
        .map(|c| (c.pattern.clone(), c.chip_time.page_accesses_excl_gc - 1.0))
        .collect();
    Ok(Report {
        capacity: p.capacity.clone(),
        requests: p.requests,
        figures,
        hint_sweep,
        epsilon,
        epsilon_excluding_gc_map_writes,
    })
}

impl Report {
    /// The cell of `config` and `pattern` in figure `fig`.
    pub fn cell(&self, fig: &str, config: &str, pattern: &str) -> Option<&Cell> {
        self.figures
            .iter()
            .find(|f| f.name == fig)?
            .cells
            .iter()
            .find(|c| c.config == config && c.pattern == pattern)
    }

    /// The largest epsilon over the patterns.
    pub fn max_epsilon(&self) -> f64 {
        self.epsilon.iter().map(|e| e.1).fold(f64::MIN, f64::max)
    }

    /// The tables as Markdown.
    pub fn markdown(&self) -> String {
        let mut s = String::new();
        let _ = writeln!(
            s,
            "# Budilovsky et al. (SYSTOR 2011) on the simulator\n\nDevice: `sim:budilovsky11,capacity={}` (sequentially prefilled), 4 KiB requests at QD 1, {} measured requests per cell.\nChip time per host request, microseconds.\n",
            self.capacity,
            self.requests
        );
        for f in &self.figures {
            let _ = writeln!(s, "## {}\n", f.title);
            let _ = writeln!(s, "| configuration | pattern | data read | data write | chunk read | chunk write | GC | total | page accesses / request | WAF |");
            let _ = writeln!(s, "|---|---|---:|---:|---:|---:|---:|---:|---:|---:|");
            for c in &f.cells {
                let t = &c.chip_time;
                let _ = writeln!(
                    s,
                    "| {} | {} | {:.1} | {:.1} | {:.1} | {:.1} | {:.1} | {:.1} | {:.4} | {} |",
                    c.config,
                    c.pattern,
                    t.data_read_ns / 1e3,
                    t.data_write_ns / 1e3,
                    t.chunk_read_ns / 1e3,
                    t.chunk_write_ns / 1e3,
                    t.gc_ns / 1e3,
                    t.total_ns / 1e3,
                    t.page_accesses,
                    c.write_amplification
                        .map(|w| format!("{w:.2}"))
                        .unwrap_or_else(|| "n/a".into())
                );
            }
            s.push('\n');
        }
        let _ = writeln!(
            s,
            "## Figure 10: requests that needed a chunk read, by host hint-cache size\n"
        );
        let _ = writeln!(
            s,
            "| host cache (% of the map) | random writes | 50 % random writes |"
        );
        let _ = writeln!(s, "|---:|---:|---:|");
        for (pct, a, b) in &self.hint_sweep.points {
            let _ = writeln!(s, "| {pct} % | {:.1} % | {:.1} % |", a * 100.0, b * 100.0);
        }
        let _ = writeln!(
            s,
            "\n## Flash page accesses per 4 KiB request, small chunks + hints\n"
        );
        let _ = writeln!(
            s,
            "| pattern | epsilon (the paper's convention, section 7: every map write counted) | epsilon (GC's map writes left out) |"
        );
        let _ = writeln!(s, "|---|---:|---:|");
        for ((p, e), (_, e2)) in self
            .epsilon
            .iter()
            .zip(&self.epsilon_excluding_gc_map_writes)
        {
            let _ = writeln!(s, "| {p} | {e:.4} | {e2:.4} |");
        }
        let _ = writeln!(
            s,
            "\nEvery access pattern costs 1 + epsilon flash page accesses per request, epsilon <= {:.4} in the paper's convention. The paper (section 8): \"{}\" Its convention (section 7): \"{}\"",
            self.max_epsilon(),
            QUOTES[0].1,
            QUOTES[1].1
        );
        s
    }
}

impl Report {
    /// The typed summary every suite writes (`budilovsky11-summary.json`),
    /// so that `flashlab report` shows this suite through the same generic
    /// path: one table per figure, Figure 10, epsilon, and the paper's claim
    /// as a finding with its quote.
    pub fn summary(&self, device: &str) -> crate::summary::SuiteSummary {
        use crate::summary::{Compare, Finding, Quote, SuiteSummary, SummaryTable};
        let table = |id: &str, title: &str, header: &[&str], rows: Vec<Vec<String>>| SummaryTable {
            id: id.into(),
            title: title.into(),
            paragraphs: Vec::new(),
            header: header.iter().map(|h| h.to_string()).collect(),
            rows,
            compare: Compare::None,
            compare_title: None,
            detail_only: false,
        };
        let mut tables: Vec<SummaryTable> = self
            .figures
            .iter()
            .map(|f| {
                table(
                    &format!("budilovsky11-{}", f.name),
                    &f.title,
                    &[
                        "configuration",
                        "pattern",
                        "data read (us)",
                        "data write (us)",
                        "chunk read (us)",
                        "chunk write (us)",
                        "GC (us)",
                        "total (us)",
                        "page accesses / request",
                        "WAF",
                    ],
                    f.cells
                        .iter()
                        .map(|c| {
                            let t = &c.chip_time;
                            vec![
                                c.config.clone(),
                                c.pattern.clone(),
                                format!("{:.1}", t.data_read_ns / 1e3),
                                format!("{:.1}", t.data_write_ns / 1e3),
                                format!("{:.1}", t.chunk_read_ns / 1e3),
                                format!("{:.1}", t.chunk_write_ns / 1e3),
                                format!("{:.1}", t.gc_ns / 1e3),
                                format!("{:.1}", t.total_ns / 1e3),
                                format!("{:.4}", t.page_accesses),
                                c.write_amplification
                                    .map(|w| format!("{w:.2}"))
                                    .unwrap_or_else(|| "n/a".into()),
                            ]
                        })
                        .collect(),
                )
            })
            .collect();
        tables.push(table(
            "budilovsky11-fig10",
            "Figure 10: requests that needed a chunk read, by host hint-cache size",
            &[
                "host cache (% of the map)",
                "random writes",
                "50 % random writes",
            ],
            self.hint_sweep
                .points
                .iter()
                .map(|(p, a, b)| {
                    vec![
                        format!("{p} %"),
                        format!("{:.1} %", a * 100.0),
                        format!("{:.1} %", b * 100.0),
                    ]
                })
                .collect(),
        ));
        tables.push(table(
            "budilovsky11-epsilon",
            "Flash page accesses per 4 KiB request minus 1 (epsilon), small chunks + hints",
            &[
                "pattern",
                "epsilon (the paper's convention, section 7: every map write counted)",
                "epsilon (GC's map writes left out)",
            ],
            self.epsilon
                .iter()
                .zip(&self.epsilon_excluding_gc_map_writes)
                .map(|((p, e), (_, x))| vec![p.clone(), format!("{e:.4}"), format!("{x:.4}")])
                .collect(),
        ));
        let eps = self.max_epsilon();
        let mut detail = serde_json::Map::new();
        if let Ok(serde_json::Value::Object(m)) = serde_json::to_value(self) {
            detail = m;
        }
        SuiteSummary {
            suite: "budilovsky11".into(),
            title: "Budilovsky, Toledo & Zuck (SYSTOR 2011)".into(),
            device: device.into(),
            tables,
            findings: vec![Finding {
                source: "section 7".into(),
                what: "largest epsilon over the patterns, small chunks + hints (the paper's convention)".into(),
                measured: Some(eps),
                text: format!("every pattern costs 1 + epsilon flash page accesses per request, epsilon <= {eps:.4}"),
                paper: Some(Quote::new("budilovsky11", QUOTES[0].0, QUOTES[0].1)),
            }],
            notes: vec![format!(
                "The paper counts the map-chunk pages written because of garbage collection as host-related ({}: \"{}\"); epsilon is reported that way.",
                QUOTES[1].0, QUOTES[1].1
            )],
            flagged_runs: Vec::new(),
            detail,
        }
    }
}
