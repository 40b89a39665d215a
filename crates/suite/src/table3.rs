//! uFLIP's Table 3 row and the design hints of section 5.3, computed from a
//! suite's saved results (never from the device).
//!
//! Definitions (uFLIP describes the columns; the thresholds are ours and
//! stated here so the numbers can be checked):
//! - SR, RR, SW, RW: mean response time of the 32 KiB baseline runs
//!   (granularity runs at the baseline IOSize).
//! - Pause RW: the shortest Pause at which random writes cost no more than
//!   1.2 x sequential writes; empty when no pause gets there.
//! - Locality RW: the largest TargetSize up to which every random-write run
//!   costs at most half of unrestricted random writes; in parentheses the
//!   highest cost inside that area relative to SW ("=" within 10 %).
//! - Partitioning: the largest number of partitions up to which partitioned
//!   sequential writes cost at most half of random writes; relative cost as above.
//! - Reverse, In-place: Incr = -1 and Incr = 0 sequential writes relative to SW;
//!   Large Incr: the mean of Incr >= 32 (1 MiB+ gaps at 32 KiB) relative to RW,
//!   over the runs the plan placed by its one rule (`uflip::order_placement`:
//!   one pass from the run's own TargetOffset, never wrapping); the Incr
//!   values averaged are in `large_incr_averaged`, and values that rule
//!   could not place on the device are named in the summary.

use std::collections::BTreeMap;

use flashlab_pattern::units::format_size;
use flashlab_results::RunSummary;
use serde::{Deserialize, Serialize};

use crate::plan::{Plan, RunStep};

#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Table3 {
    pub sr_ms: Option<f64>,
    pub rr_ms: Option<f64>,
    pub sw_ms: Option<f64>,
    pub rw_ms: Option<f64>,
    pub pause_rw_ms: Option<f64>,
    pub locality_rw_bytes: Option<u64>,
    pub locality_rw_relative: Option<f64>,
    pub partitions: Option<u64>,
    pub partitions_relative: Option<f64>,
    pub reverse_relative: Option<f64>,
    pub in_place_relative: Option<f64>,
    pub large_incr_relative: Option<f64>,
    /// The Incr values whose runs Large Incr averages (in order).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub large_incr_averaged: Vec<i64>,
    /// Columns (as in [`Table3::HEADER`]) that no run measured (e.g. a
    /// suite run with `--only granularity`): their values are null and the
    /// table says "not measured", unlike a measured column with no value
    /// ("No" locality area, "-" no partitioning that helps).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub not_measured: Vec<String>,
    /// Not a Table 3 column: the worst misaligned 32 KiB random write (the
    /// alignment micro-benchmark, IOShift > 0) minus the aligned one, in ms
    /// (uFLIP 5.2: on the Samsung "the response time increases from 18 msec
    /// to 32 msec").
    #[serde(default)]
    pub misaligned_rw_extra_ms: Option<f64>,
}

/// What a never-measured Table 3 cell says.
pub const NOT_MEASURED: &str = "n/m";

/// What the table's signs mean, printed under it (uFLIP's own Table 3 uses
/// "=" for no effect and xN for a factor).
pub const LEGEND: &str =
    "Times per device in us below 1 ms, else ms, to three significant digits. \
\"=\": no effect (within 10 % of the baseline); \"xN\": N times the baseline; \
\"n/m\": not measured (no run of that column in the plan); \"No\": measured, no such area found.";

/// One design hint, with the figures it rests on.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Hint {
    pub number: u32,
    pub paper: String,
    pub device: String,
    pub evidence: String,
    /// The device contradicts the paper's general hint.
    pub contradicts_paper: bool,
}

/// Mean response time (ns) per (experiment, series, value) over the plan's runs.
pub struct Means<'a> {
    runs: Vec<(&'a RunStep, f64)>,
}

impl<'a> Means<'a> {
    pub fn new(plan: &'a Plan, summaries: &[RunSummary]) -> Means<'a> {
        let by_name: BTreeMap<&str, &RunSummary> =
            summaries.iter().map(|s| (s.name.as_str(), s)).collect();
        let mut runs = Vec::new();
        for step in &plan.steps {
            for r in step.runs() {
                if let Some(s) = by_name.get(r.name.as_str()) {
                    if s.stats.all.ios > 0 {
                        runs.push((r, s.stats.all.latency.mean_ns));
                    }
                }
            }
        }
        Means { runs }
    }

    pub fn get(&self, experiment: &str, series: &str, value: f64) -> Option<f64> {
        self.runs
            .iter()
            .find(|(r, _)| {
                r.experiment == experiment && r.series == series && (r.value - value).abs() < 1e-9
            })
            .map(|(_, m)| *m)
    }

    /// (value, mean) of one series, ordered by value.
    pub fn series(&self, experiment: &str, series: &str) -> Vec<(f64, f64)> {
        let mut v: Vec<(f64, f64)> = self
            .runs
            .iter()
            .filter(|(r, _)| r.experiment == experiment && r.series == series)
            .map(|(r, m)| (r.value, *m))
            .collect();
        v.sort_by(|a, b| a.0.total_cmp(&b.0));
        v
    }
}

fn largest_prefix_below(series: &[(f64, f64)], limit: f64) -> Option<(f64, f64)> {
    let mut best = None;
    let mut worst = 0.0f64;
    for &(v, m) in series {
        if m > limit {
            break;
        }
        worst = worst.max(m);
        best = Some((v, worst));
    }
    best
}

/// uFLIP's locality area (Table 3, Figure 8): the largest target size up to
/// which random writes stay below `limit`, with the worst mean inside it.
/// Unlike partitions, the run of cheap sizes need not start at the smallest
/// tested size: random writes over one or two IOs of space are rewrites of
/// the same pages (uFLIP's in-place pattern, measured in its own column), and
/// a device that is slow at those but cheap over a few MB still has a
/// locality area there. Of the runs of consecutive cheap sizes, the longest
/// counts (the larger on a tie), so neither an expensive smallest size nor
/// one stray cheap size decides the answer.
fn locality_area(series: &[(f64, f64)], limit: f64) -> Option<(f64, f64)> {
    let mut best: Option<(usize, f64, f64)> = None;
    let mut run: Option<(usize, f64, f64)> = None;
    for &(v, m) in series {
        if m > limit {
            run = None;
            continue;
        }
        let r = match run {
            Some((n, _, worst)) => (n + 1, v, worst.max(m)),
            None => (1, v, m),
        };
        run = Some(r);
        if best.is_none_or(|b| r.0 >= b.0) {
            best = Some(r);
        }
    }
    best.map(|(_, v, worst)| (v, worst))
}

pub fn table3(plan: &Plan, summaries: &[RunSummary], io_size: u64) -> Table3 {
    let means = Means::new(plan, summaries);
    let base = |b: &str| {
        means.get("granularity", b, io_size as f64).or_else(|| {
            means.get(
                "calibration",
                b,
                means
                    .series("calibration", b)
                    .first()
                    .map(|x| x.0)
                    .unwrap_or(0.0),
            )
        })
    };
    let ms = |ns: Option<f64>| ns.map(|v| v / 1e6);
    let (sr, rr, sw, rw) = (base("SR"), base("RR"), base("SW"), base("RW"));
    let mut t = Table3 {
        sr_ms: ms(sr),
        rr_ms: ms(rr),
        sw_ms: ms(sw),
        rw_ms: ms(rw),
        ..Table3::default()
    };
    if let (Some(sw), Some(rw)) = (sw, rw) {
        t.pause_rw_ms = means
            .series("pause", "RW")
            .into_iter()
            .find(|&(_, m)| m <= 1.2 * sw)
            .map(|(p, _)| p);
        if let Some((area, worst)) = locality_area(&means.series("locality", "RW"), 0.5 * rw) {
            t.locality_rw_bytes = Some(area as u64);
            t.locality_rw_relative = Some(worst / sw);
        }
        if let Some((p, worst)) =
            largest_prefix_below(&means.series("partitioning", "SW"), 0.5 * rw)
        {
            t.partitions = Some(p as u64);
            t.partitions_relative = Some(worst / sw);
        }
        t.reverse_relative = means.get("order", "SW", -1.0).map(|m| m / sw);
        t.in_place_relative = means.get("order", "SW", 0.0).map(|m| m / sw);
        let large: Vec<(f64, f64)> = means
            .series("order", "SW")
            .into_iter()
            .filter(|(v, _)| *v >= crate::uflip::LARGE_INCR_MIN as f64)
            .collect();
        if !large.is_empty() {
            let mean = large.iter().map(|x| x.1).sum::<f64>() / large.len() as f64;
            t.large_incr_relative = Some(mean / rw);
            t.large_incr_averaged = large.iter().map(|x| x.0 as i64).collect();
        }
    }
    // Which columns no run measured. The relative columns need SW and RW too.
    let baselines = sw.is_some() && rw.is_some();
    let measured = [
        sr.is_some(),
        rr.is_some(),
        sw.is_some(),
        rw.is_some(),
        baselines && !means.series("pause", "RW").is_empty(),
        baselines && !means.series("locality", "RW").is_empty(),
        baselines && !means.series("partitioning", "SW").is_empty(),
        t.reverse_relative.is_some(),
        t.in_place_relative.is_some(),
        t.large_incr_relative.is_some(),
    ];
    t.not_measured = Table3::HEADER
        .iter()
        .zip(measured)
        .filter(|(_, m)| !m)
        .map(|(h, _)| h.to_string())
        .collect();
    let al = means.series("alignment", "RW");
    if let Some(&(0.0, aligned)) = al.first() {
        if al.len() >= 2 {
            let worst = al[1..].iter().map(|x| x.1).fold(0.0, f64::max);
            t.misaligned_rw_extra_ms = Some((worst - aligned) / 1e6);
        }
    }
    t
}

/// "=" within 10 %, else "x1.5".
pub fn factor(r: Option<f64>) -> String {
    match r {
        None => NOT_MEASURED.into(),
        Some(r) if (r - 1.0).abs() <= 0.1 => "=".into(),
        Some(r) if r >= 10.0 => format!("x{r:.0}"),
        Some(r) => format!("x{r:.1}"),
    }
}

/// Three significant digits: 0.0123, 1.23, 12.3, 123, 1230.
fn significant3(v: f64) -> String {
    if v == 0.0 || !v.is_finite() {
        return format!("{v}");
    }
    let decimals = (2 - v.abs().log10().floor() as i32).max(0) as usize;
    format!("{v:.decimals$}")
}

/// A time cell in the device's unit, with the unit.
fn time(ms: Option<f64>, in_us: bool) -> String {
    match ms {
        None => NOT_MEASURED.into(),
        Some(v) if in_us => format!("{} us", significant3(v * 1000.0)),
        Some(v) => format!("{} ms", significant3(v)),
    }
}

/// A time in ms as the paper's Table 3 prints it (docs/profiles.md sets
/// the simulated value beside the paper's).
fn ms(v: Option<f64>) -> String {
    match v {
        None => NOT_MEASURED.into(),
        Some(v) if v >= 10.0 => format!("{v:.0}"),
        Some(v) if v >= 1.0 => format!("{v:.1}"),
        Some(v) => format!("{v:.2}"),
    }
}

impl Table3 {
    pub const HEADER: [&'static str; 10] = [
        "SR (ms)",
        "RR (ms)",
        "SW (ms)",
        "RW (ms)",
        "Pause RW (ms)",
        "Locality RW",
        "Partitions",
        "Reverse",
        "In-place",
        "Large Incr",
    ];

    /// The column names as shown: the time columns carry their unit in
    /// each cell ([`Table3::cells`]), since it is chosen per device.
    pub fn display_header() -> [String; 10] {
        Table3::HEADER.map(|h| match h {
            "SR (ms)" | "RR (ms)" | "SW (ms)" | "RW (ms)" => {
                h.trim_end_matches(" (ms)").to_string()
            }
            other => other.to_string(),
        })
    }

    /// Whether this device's times read best in us: every measured baseline
    /// mean is under 1 ms.
    pub fn times_in_us(&self) -> bool {
        let times = [self.sr_ms, self.rr_ms, self.sw_ms, self.rw_ms];
        times.iter().any(Option::is_some) && times.iter().flatten().all(|&v| v < 1.0)
    }

    /// The row's cells, times in the device's unit ([`Table3::display_header`]).
    pub fn cells(&self) -> [String; 10] {
        let in_us = self.times_in_us();
        let mut cells = self.cells_in_ms();
        for (cell, v) in cells
            .iter_mut()
            .zip([self.sr_ms, self.rr_ms, self.sw_ms, self.rw_ms])
        {
            if cell != NOT_MEASURED {
                *cell = time(v, in_us);
            }
        }
        cells
    }

    /// The row's cells with times in ms, as uFLIP's Table 3 prints them
    /// ([`Table3::HEADER`]).
    pub fn cells_in_ms(&self) -> [String; 10] {
        let area = match self.locality_rw_bytes {
            None => "No".to_string(),
            Some(b) => format!("{} ({})", format_size(b), factor(self.locality_rw_relative)),
        };
        let parts = match self.partitions {
            None => "-".to_string(),
            Some(p) => format!("{p} ({})", factor(self.partitions_relative)),
        };
        let mut cells = [
            ms(self.sr_ms),
            ms(self.rr_ms),
            ms(self.sw_ms),
            ms(self.rw_ms),
            self.pause_rw_ms.map(|p| format!("{p}")).unwrap_or_default(),
            area,
            parts,
            factor(self.reverse_relative),
            factor(self.in_place_relative),
            factor(self.large_incr_relative),
        ];
        for (cell, header) in cells.iter_mut().zip(Table3::HEADER) {
            if self.not_measured.iter().any(|h| h == header) {
                *cell = NOT_MEASURED.to_string();
            }
        }
        cells
    }

    /// A Markdown table: one header row, one row per (device, row).
    pub fn markdown(rows: &[(String, &Table3)]) -> String {
        let mut s = format!(
            "| Device | {} |\n|---|{}\n",
            Table3::display_header().join(" | "),
            "---|".repeat(10)
        );
        for (name, t) in rows {
            s += &format!("| {name} | {} |\n", t.cells().join(" | "));
        }
        s += &format!("\n{LEGEND}\n");
        s
    }
}

/// uFLIP section 5.3's seven design hints, verbatim (a test checks them
/// against the paper).
pub const HINT_QUOTES: [&str; 7] = [
    "Flash devices do incur latency. Despite the absence of mechanical parts, the software layers incur some overhead per IO operation. Therefore, larger IOs are generally beneficial, even for read operations.",
    "Block size should (currently) be 32KB.",
    "Blocks should be aligned to flash pages.",
    "Random writes should be limited to a focused area. Our experiments show that, for most devices, random writes to an area of 4\u{2013}16MB perform nearly as well as sequential writes.",
    "Sequential writes should be limited to a few partitions. Concurrent sequential writes to 4\u{2013}8 different partitions are acceptable; beyond that performance degrades to random writes.",
    "Combining a limited number of patterns is acceptable.",
    "Neither concurrent nor delayed IOs improve the performance.",
];

/// Hint 2 from the random-write means by IOSize, (size, mean ns) in size
/// order, at least two: (this device's hint, evidence, contradicts).
fn hint_2(rw: &[(f64, f64)]) -> (String, String, bool) {
    let per_byte: Vec<(f64, f64)> = rw.iter().map(|&(s, m)| (s, m / s)).collect();
    let best = per_byte.iter().map(|x| x.1).fold(f64::INFINITY, f64::min);
    let largest = per_byte[per_byte.len() - 1];
    let knee = per_byte
        .iter()
        .find(|x| x.1 <= 1.25 * best)
        .map(|x| x.0 as u64);
    match knee {
        Some(k) if (k as f64) < largest.0 => (
            format!(
                "Use IOs of at least {} for random writes: smaller ones cost more per byte, larger ones no less.",
                format_size(k)
            ),
            format!(
                "random-write cost per KiB is within 25 % of its best from {} to {} (the largest tested)",
                format_size(k),
                format_size(largest.0 as u64)
            ),
            k != 32 * 1024,
        ),
        _ => {
            let prev = per_byte[per_byte.len() - 2];
            (
                format!(
                    "No block size inside the tested range: random-write cost per KiB still falls at {} (the largest size tested); the trend continues past it.",
                    format_size(largest.0 as u64)
                ),
                format!(
                    "random-write cost per KiB at {} is {:.0} % above the {} value",
                    format_size(prev.0 as u64),
                    (prev.1 / largest.1 - 1.0) * 100.0,
                    format_size(largest.0 as u64)
                ),
                false,
            )
        }
    }
}

/// One-line explanations of Table 3 rows that contradict what the paper's
/// devices showed, from the runs' own accounting where the device gives it
/// (the simulator's garbage collection), so that a surprising number does
/// not stand unexplained.
pub fn surprises(plan: &Plan, summaries: &[RunSummary], t: &Table3, io_size: u64) -> Vec<String> {
    let mut out = Vec::new();
    let (Some(sw), Some(rw)) = (t.sw_ms, t.rw_ms) else {
        return out;
    };
    if sw <= rw {
        return out;
    }
    // Pages garbage collection moved per page the host wrote, in the
    // baseline runs of one pattern (simulator accounting).
    let gc_per_page = |series: &str| -> Option<f64> {
        let names: Vec<&str> = plan
            .steps
            .iter()
            .flat_map(|s| s.runs())
            .filter(|r| {
                r.experiment == "granularity"
                    && r.series == series
                    && (r.value - io_size as f64).abs() < 1e-9
            })
            .map(|r| r.name.as_str())
            .collect();
        let (mut moved, mut written) = (0.0, 0.0);
        for s in summaries
            .iter()
            .filter(|s| names.contains(&s.name.as_str()))
        {
            let d = s.device_stats.as_ref()?;
            moved += d.pointer("/gc/relocated_pages")?.as_f64()?;
            written += d.pointer("/flash/programs/host")?.as_f64()?;
        }
        (written > 0.0).then(|| moved / written)
    };
    let line = match (gc_per_page("SW"), gc_per_page("RW")) {
        (Some(s), Some(r)) if s > r => format!(
            "Sequential writes ({sw:.2} ms) are slower than random ones ({rw:.2} ms) here because of the state each met, not the pattern: during the SW runs garbage collection moved {s:.2} pages per page written, during the RW runs {r:.2}."
        ),
        (Some(s), Some(r)) => format!(
            "Sequential writes ({sw:.2} ms) are slower than random ones ({rw:.2} ms) here although garbage collection moved fewer pages during them ({s:.2} per page written, RW {r:.2}): the cost is elsewhere (see the runs' accounting in run.json)."
        ),
        _ => format!(
            "Sequential writes ({sw:.2} ms) are slower than random ones ({rw:.2} ms) here, unlike on uFLIP's devices: the sequential runs most likely met garbage collection left by earlier writes; their latency over time (`flashlab report`) shows where."
        ),
    };
    out.push(line);
    out
}

/// The device's own version of uFLIP's seven design hints.
/// Long: one block per uFLIP design hint, each with its own evidence rule.
pub fn hints(plan: &Plan, summaries: &[RunSummary], t: &Table3, io_size: u64) -> Vec<Hint> {
    let means = Means::new(plan, summaries);
    let mut out = Vec::new();
    let mut push = |number: u32, paper: &str, device: String, evidence: String, contradicts| {
        out.push(Hint {
            number,
            paper: paper.into(),
            device,
            evidence,
            contradicts_paper: contradicts,
        })
    };
    // Hint 1: per-IO latency makes larger IOs beneficial, even for reads.
    let sr = means.series("granularity", "SR");
    if sr.len() >= 2 {
        let (small, large) = (sr[0], sr[sr.len() - 1]);
        let tp = |(size, m): (f64, f64)| size / m * 1e9 / 1e6; // MB/s
        let gain = tp(large) / tp(small);
        push(
            1,
            HINT_QUOTES[0],
            if gain > 1.5 {
                format!("Confirmed: sequential reads of {} move {} more data per second than reads of {}.", format_size(large.0 as u64), crate::findings::times(gain), format_size(small.0 as u64))
            } else {
                format!("Not on this device: read throughput barely grows with IO size ({} from {} to {}).", crate::findings::times(gain), format_size(small.0 as u64), format_size(large.0 as u64))
            },
            format!(
                "SR {}: {:.1} us; SR {}: {:.1} us",
                format_size(small.0 as u64),
                small.1 / 1e3,
                format_size(large.0 as u64),
                large.1 / 1e3
            ),
            gain <= 1.5,
        );
    }
    // Hint 2: block size 32 KiB: the smallest write size whose per-byte cost
    // is near the best. Evidence only inside the tested range: when the
    // per-byte cost still falls at the largest size tested, no size is
    // recommended, and the hint says the trend continues past it.
    let rw = means.series("granularity", "RW");
    if rw.len() >= 2 {
        let (device, evidence, contradicts) = hint_2(&rw);
        push(2, HINT_QUOTES[1], device, evidence, contradicts);
    }
    // Hint 3: alignment.
    for base in ["RW", "SW", "RR"] {
        let al = means.series("alignment", base);
        if al.len() >= 2 {
            let aligned = al[0].1;
            let worst = al[1..].iter().map(|x| x.1).fold(0.0, f64::max);
            let pen = worst / aligned;
            push(
                3,
                HINT_QUOTES[2],
                if pen > 1.2 {
                    format!(
                        "Align IOs: misaligned {base} cost up to {} aligned ones.",
                        crate::findings::times(pen)
                    )
                } else {
                    format!("Alignment hardly matters for {base} here (worst misaligned cost {pen:.2}x aligned).")
                },
                format!(
                    "{base} aligned {:.2} ms, worst shifted {:.2} ms",
                    aligned / 1e6,
                    worst / 1e6
                ),
                pen <= 1.2,
            );
            break;
        }
    }
    // Hint 4: random writes in a focused area.
    if t.rw_ms.is_some() && !means.series("locality", "RW").is_empty() {
        let (device, contra) = match t.locality_rw_bytes {
            Some(b) => (format!("Keep random writes inside {}: there they cost {} sequential writes.", format_size(b), match factor(t.locality_rw_relative).as_str() { "=" => "the same as".to_string(), f => f.to_string() }), b < 4 << 20),
            None => ("Random writes cost the same whatever the area: focusing them does not help on this device.".into(), true),
        };
        push(
            4,
            HINT_QUOTES[3],
            device,
            format!(
                "RW {:.2} ms over the whole target; locality area {}",
                t.rw_ms.unwrap_or(0.0),
                t.locality_rw_bytes
                    .map(format_size)
                    .unwrap_or_else(|| "none".into())
            ),
            contra,
        );
    }
    // Hint 5: few partitions.
    let partitioned = means.series("partitioning", "SW");
    if let (None, Some(&(fewest, cost)), Some(rw)) = (t.partitions, partitioned.first(), t.rw_ms) {
        // Measured, and no number of partitions stays below half the RW cost.
        push(
            5,
            HINT_QUOTES[4],
            format!(
                "Not applicable here: partitioned sequential writes cost more than half of random writes from {fewest:.0} partitions on, so no number of streams keeps them fast."
            ),
            format!(
                "partitioned SW with {fewest:.0} partitions {:.2} ms/IO; RW {rw:.2} ms",
                cost / 1e6
            ),
            true,
        );
    }
    if let Some(p) = t.partitions {
        push(
            5,
            HINT_QUOTES[4],
            format!(
                "Write at most {p} sequential streams at once; more degrade toward random writes."
            ),
            format!(
                "partitioned SW cost {} SW up to {p} partitions",
                factor(t.partitions_relative)
            ),
            !(4..=8).contains(&p),
        );
    }
    // Hint 6: mixes. Only pairs with a write: mixing two read patterns
    // mostly breaks read-ahead (SR interleaved with RR costs what RR does),
    // which says nothing about combining patterns; it is reported apart.
    let mut worst_mix: Option<(String, f64)> = None;
    let mut read_mix: Option<(String, f64)> = None;
    for pair in ["SR-RR", "SR-SW", "SR-RW", "RR-SW", "RR-RW", "SW-RW"] {
        let (a, b) = pair.split_once('-').expect("pair");
        let (Some(ma), Some(mb)) = (
            means.get("granularity", a, io_size as f64),
            means.get("granularity", b, io_size as f64),
        ) else {
            continue;
        };
        let slot = if pair == "SR-RR" {
            &mut read_mix
        } else {
            &mut worst_mix
        };
        for (ratio, m) in means.series("mix", pair) {
            let expected = (ratio * ma + mb) / (ratio + 1.0);
            let r = m / expected;
            if slot.as_ref().is_none_or(|w| r > w.1) {
                *slot = Some((format!("{pair} {ratio}:1"), r));
            }
        }
    }
    if let Some((which, r)) = worst_mix {
        let reads = read_mix
            .map(|(w, r)| format!("; reads only ({w}): {r:.2}x, read-ahead lost, not counted"))
            .unwrap_or_default();
        push(
            6,
            HINT_QUOTES[5],
            if r <= 1.25 {
                "Mixing patterns costs what its parts cost: combining them is fine.".into()
            } else {
                format!(
                    "Avoid mixing {which}: the mix costs {} the weighted cost of its parts.",
                    crate::findings::times(r)
                )
            },
            format!("worst mix with writes {which}: {r:.2}x its parts' weighted mean{reads}"),
            r > 1.25,
        );
    }
    // Hint 7: neither parallel nor delayed IOs help.
    let par = means.series("parallelism", "RW");
    if par.len() >= 2 {
        let one = par[0].1;
        let (d, md) = par[par.len() - 1];
        // Throughput gain with D streams: D IOs per mean response time.
        let gain = (d / md) / (1.0 / one);
        push(
            7,
            HINT_QUOTES[6],
            if gain > 1.3 {
                format!("Issue random writes concurrently: {d:.0} streams give {} the throughput of one.", crate::findings::times(gain))
            } else {
                "Concurrency does not raise random-write throughput here.".into()
            },
            // These are the parallelism runs, not Table 3's RW baseline
            // (another run, on another part of the device): say so, and
            // give the throughput the hint is about.
            format!(
                "parallelism runs (not Table 3's RW run): 1 stream {:.2} ms/IO, {:.0} IO/s; {d:.0} streams {:.2} ms/IO each, {:.0} IO/s in all",
                one / 1e6,
                1e9 / one,
                md / 1e6,
                d * 1e9 / md
            ),
            gain > 1.3,
        );
    }
    // Every hint keeps its number: one the run could not measure says so.
    let benchmark = [
        "granularity (SR)",
        "granularity (RW)",
        "alignment",
        "locality",
        "partitioning",
        "mix",
        "parallelism",
    ];
    for (i, quote) in HINT_QUOTES.iter().enumerate() {
        let number = i as u32 + 1;
        if !out.iter().any(|h| h.number == number) {
            out.push(Hint {
                number,
                paper: (*quote).into(),
                device: format!(
                    "Not applicable: the {} micro-benchmark was not measured in this run.",
                    benchmark[i]
                ),
                evidence: NOT_MEASURED.into(),
                contradicts_paper: false,
            });
        }
    }
    out.sort_by_key(|h| h.number);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Random-write cost per byte still falling at the largest size tested:
    /// no size is recommended, and the hint says the trend continues.
    #[test]
    fn a_locality_area_is_found_above_expensive_in_place_sizes() {
        const K: f64 = 1024.0;
        let sizes = [
            32.0 * K,
            64.0 * K,
            128.0 * K,
            1024.0 * K,
            4096.0 * K,
            16384.0 * K,
            65536.0 * K,
        ];
        let series = |ms: [f64; 7]| sizes.iter().copied().zip(ms).collect::<Vec<_>>();
        // Cheap from the smallest size to 4 MiB: the area is 4 MiB.
        let memo = series([1.0, 1.2, 1.1, 1.5, 2.0, 9.0, 10.0]);
        assert_eq!(locality_area(&memo, 5.0), Some((4096.0 * K, 2.0)));
        // Rewrites of a few IOs are expensive, 1 MiB..16 MiB cheap:
        // a 16 MiB area, not "No" (Kingston DTI, issue 16).
        let dti = series([246.0, 170.0, 117.0, 46.0, 37.0, 37.0, 165.0]);
        assert_eq!(locality_area(&dti, 84.5), Some((16384.0 * K, 46.0)));
        // Expensive everywhere: no area.
        let none = series([246.0, 193.0, 230.0, 251.0, 251.0, 251.0, 216.0]);
        assert_eq!(locality_area(&none, 84.5), None);
        // One stray cheap size does not outweigh a longer run.
        let stray = series([1.0, 1.0, 1.0, 9.0, 9.0, 1.0, 9.0]);
        assert_eq!(locality_area(&stray, 5.0), Some((128.0 * K, 1.0)));
    }

    #[test]
    fn times_take_the_devices_unit_with_three_significant_digits() {
        let fast = Table3 {
            sr_ms: Some(0.0123),
            rr_ms: Some(0.0876),
            sw_ms: Some(0.015),
            rw_ms: Some(0.25),
            ..Table3::default()
        };
        assert_eq!(
            &fast.cells()[..4],
            ["12.3 us", "87.6 us", "15.0 us", "250 us"]
        );
        let slow = Table3 {
            sr_ms: Some(0.3),
            rr_ms: Some(0.5),
            sw_ms: Some(1.234),
            rw_ms: Some(123.4),
            ..Table3::default()
        };
        assert_eq!(
            &slow.cells()[..4],
            ["0.300 ms", "0.500 ms", "1.23 ms", "123 ms"]
        );
        assert_eq!(Table3::display_header()[0], "SR");
        let md = Table3::markdown(&[("a".into(), &fast)]);
        assert!(
            md.contains("no effect") && md.contains("not measured"),
            "{md}"
        );
    }

    #[test]
    fn never_measured_cells_say_so_and_measured_empty_ones_do_not() {
        // Locality measured, no area found: "No". Partitioning never run: "not measured".
        let t = Table3 {
            sr_ms: Some(0.2),
            rr_ms: Some(0.4),
            sw_ms: Some(1.0),
            rw_ms: Some(2.0),
            locality_rw_bytes: None,
            not_measured: vec!["Partitions".into(), "Pause RW (ms)".into()],
            ..Table3::default()
        };
        let cells = t.cells();
        assert_eq!(cells[5], "No");
        assert_eq!(cells[6], NOT_MEASURED);
        assert_eq!(cells[4], NOT_MEASURED);
        assert_eq!(cells[0], "0.200 ms", "SW and RW take 1 ms or more: ms");
        assert_eq!(
            t.cells_in_ms()[0],
            "0.20",
            "the paper's unit for the comparison page"
        );
        // JSON: the list names the columns; a summary without it (older) reads as before.
        let json = serde_json::to_value(&t).unwrap();
        assert_eq!(json["not_measured"][0], "Partitions");
        assert!(json["partitions"].is_null());
        let old: Table3 = serde_json::from_str(r#"{"sr_ms":0.2,"rr_ms":null,"sw_ms":null,"rw_ms":null,"pause_rw_ms":null,"locality_rw_bytes":null,"locality_rw_relative":null,"partitions":null,"partitions_relative":null,"reverse_relative":null,"in_place_relative":null,"large_incr_relative":null}"#).unwrap();
        assert!(old.not_measured.is_empty());
    }

    #[test]
    fn hint_2_needs_a_knee_inside_the_tested_range() {
        let per_io = |size: f64| 1_000_000.0 + size * 10.0; // fixed cost dominates
        let h = |sizes: &[f64]| {
            let pts: Vec<(f64, f64)> = sizes.iter().map(|&s| (s, per_io(s))).collect();
            hint_2(&pts)
        };
        let (text, _, contradicts) = h(&[4096.0, 32768.0, 262144.0]);
        assert!(
            text.starts_with("No block size inside the tested range"),
            "{text}"
        );
        assert!(text.contains("continues past"), "{text}");
        assert!(!contradicts);
    }
}
