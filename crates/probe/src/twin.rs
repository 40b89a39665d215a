//! The twin: a simulator profile fitted to a device's measured responses.
//!
//! 1. The probe (`crate::probe`) gives the geometry and the FTL family.
//! 2. A characterization plan (`plan`) runs on the target: baseline
//!    patterns (uFLIP's SR, RR, SW, RW), granularity (other IO sizes),
//!    locality, queue depth, a read/write mix and pauses; each part's
//!    latencies are kept.
//! 3. The same plan runs on candidate simulated devices (the probe's
//!    geometry, a template's other keys). The timing parameters are fitted
//!    by a small deterministic optimizer in process (coordinate descent in
//!    log space, halving its steps): no Optuna, no Python, the same answer
//!    every time. For a log-block device both log-block FTLs are fitted and
//!    the better kept.
//!    A second stage fits the service-time spreads (program-time spread,
//!    read-retry probability) to the parts' 99th percentiles, the means
//!    still in the loss: constant service times leave p99 to queueing alone.
//! 4. Cross-validation over the plan's parts: each fold's parts are left out
//!    of the loss and the whole fit is repeated from the template's start
//!    (FTL kind and cache choice, both stages) on the other parts only; the
//!    left-out parts' mean and p99 are then predicted. Those held-out
//!    predictions are the twin's honest score: no number a held-out part
//!    measured enters the fit that predicts it.
//! 5. A parameter that ends on its bound makes the twin "not good"; one whose
//!    change does not move the loss is not fitted (the plan cannot see it):
//!    it keeps the template's value and the profile says so.
//!
//! The loss is never scored on a number a parameter was fitted to: the
//! held-out score is the cross-validated one ([`PartScore::fold`] names the
//! fold a part was held out in).

use std::collections::BTreeMap;

use flashlab_device::{Device, Mode, Nanos};
use flashlab_pattern::rng::Rng;
use flashlab_sim::config::FtlKind;
use flashlab_sim::{ByteSize, SimConfig, SimDevice};
use serde::{Deserialize, Serialize};

use crate::session::{ByteRange, Session};
use crate::{FtlFamily, ProbeError, ProbeOptions, ProbeReport, QdLimit};

/// The template profiles whose keys the twin does not measure (GC policy,
/// wear levelling, planes...). Named in the profile's provenance.
pub const PAGE_TEMPLATE: &str = "ssd-m";
pub const LOG_TEMPLATE: &str = "transcend-module";

/// The bytes of the allowed range the plan uses.
const PLAN_REGION_BYTES: u64 = 32 << 20;

#[derive(Clone, Debug)]
pub struct TwinOptions {
    pub budget_ns: Nanos,
    pub max_write_bytes: u64,
    pub writes: ByteRange,
    pub seed: u64,
    /// Largest simulated capacity (a twin of a 2 TB drive need not map 2 TB
    /// to predict the plan's region).
    pub max_capacity_bytes: u64,
    /// Whether the random-write part first writes past the write cache the
    /// probe found ([`plan_warmup_ios`]). `false` (the CLI's default): its
    /// writes are counted from the first. Off by default because on the
    /// blind benchmark (`bench/twin_blind.py --seed 1`, ten hidden devices)
    /// it made the held-out predictions worse, 29/50 means within 20 % and
    /// 26/50 p99s within 35 % against 33/50 and 32/50 without: the merges
    /// it shows on cached log-block devices (mtron) are fitted by a
    /// template whose dies and stripe the probe does not measure, and the
    /// fit bends the other timings to them.
    pub write_past_cache: bool,
}

/// One part of the characterization plan.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Part {
    pub name: String,
    /// baseline, granularity, locality, queue-depth, mix, pause.
    pub group: String,
    pub ios: Vec<(u64, u32, Mode)>,
    pub qd: usize,
    pub pause_ns: Nanos,
    /// Its cross-validation fold (see [`FOLDS`]).
    pub fold: usize,
    /// The first IOs, whose latencies are not counted: they fill the write
    /// cache the probe found, so that the counted ones meet the flash
    /// behind it ([`plan_warmup_ios`]).
    #[serde(default)]
    pub warmup: usize,
}

impl Part {
    fn write_bytes(&self) -> u64 {
        self.ios
            .iter()
            .filter(|i| i.2 == Mode::Write)
            .map(|i| i.1 as u64)
            .sum()
    }
}

/// Cross-validation folds, by part name. Each fold holds reads and writes,
/// so that every fold's training parts still show the reads' and the
/// writes' costs (with folds by position, one fold held out all three
/// random-read parts and its fit never saw a random read's p99).
pub const FOLDS: [(&str, usize); 10] = [
    ("sr-4k", 0),
    ("rw-32k", 0),
    ("rw-4k-pause", 0),
    ("rr-4k", 1),
    ("sw-32k", 1),
    ("rw-4k-local", 1),
    ("mix-70r-4k", 1),
    ("rr-64k", 2),
    ("sw-4k", 2),
    ("rr-4k-qd8", 2),
];

/// Random 32 KiB writes that the random-write part (`rw-32k`) issues
/// before its counted ones, from the write cache the probe found: enough
/// to write one and a half times the burst knee (a cache that drains
/// during the burst shows a knee later than its size, so the knee is an
/// upper estimate already), at most the plan's region. Without them, on a
/// device with a cache of megabytes (mtron: 3.5 MiB) the part's 48 writes
/// (1.5 MiB) all land in the cache, and no part of the plan shows what a
/// random write costs the flash (a merge on a log-block FTL, cleaning on a
/// page-mapped one): the fit then cannot see the erase time or the merge.
/// Chen et al. 5.4 time writes with the cache off for this reason ("To
/// eliminate the impact of the write buffer..."); a black box has no
/// switch the plan can count on, so it writes past the cache instead.
pub fn plan_warmup_ios(probe: &ProbeReport, len: u64) -> usize {
    let k32 = 32u64 << 10;
    probe
        .write_cache_bytes
        .value
        .map(|c| ((c * 1.5) as u64).min(len).div_ceil(k32) as usize)
        .unwrap_or(0)
}

/// The plan: a fill of the region, then the parts, in this order (the
/// device's state after each is the next one's start, on the target and on
/// every candidate alike). `warmup_ios` random 32 KiB writes open the
/// random-write part, uncounted ([`plan_warmup_ios`]); they draw their
/// offsets from a stream of their own, so that every other IO of the plan
/// is the same with and without them.
pub fn plan(base: u64, len: u64, seed: u64, warmup_ios: usize) -> Vec<Part> {
    let mut rng = Rng::new(seed);
    let k4 = 4096u64;
    let k32 = 32u64 << 10;
    let mut rnd = |n: u64, size: u64, area: u64, mode_of: &mut dyn FnMut(&mut Rng) -> Mode| {
        let mut v = Vec::new();
        for _ in 0..n {
            let o = base + rng.below(area / size) * size;
            let m = mode_of(&mut rng);
            v.push((o, size as u32, m));
        }
        v
    };
    let seq = |n: u64, size: u64, start: u64, mode: Mode| -> Vec<(u64, u32, Mode)> {
        (0..n)
            .map(|i| (base + start + i * size, size as u32, mode))
            .collect()
    };
    let part = |name: &str, group: &str, ios, qd, pause_ns| Part {
        name: name.into(),
        group: group.into(),
        ios,
        qd,
        pause_ns,
        warmup: 0,
        fold: FOLDS
            .iter()
            .find(|f| f.0 == name)
            .map(|f| f.1)
            .expect("every plan part has a fold"),
    };
    let mut read = |_: &mut Rng| Mode::Read;
    let mut write = |_: &mut Rng| Mode::Write;
    let mut mix70 = |r: &mut Rng| {
        if r.below(10) < 7 {
            Mode::Read
        } else {
            Mode::Write
        }
    };
    let sr_4k = part("sr-4k", "baseline", seq(256, k4, 0, Mode::Read), 1, 0);
    let rr_4k = part("rr-4k", "baseline", rnd(256, k4, len, &mut read), 1, 0);
    let sw_32k = part(
        "sw-32k",
        "baseline",
        seq(128, k32, len / 2, Mode::Write),
        1,
        0,
    );
    let mut rw_32k = part("rw-32k", "baseline", rnd(48, k32, len, &mut write), 1, 0);
    if warmup_ios > 0 {
        let mut wrng = Rng::new(seed ^ 0x5741_524d_5550); // "WARMUP"
        let mut ios: Vec<(u64, u32, Mode)> = (0..warmup_ios)
            .map(|_| (base + wrng.below(len / k32) * k32, k32 as u32, Mode::Write))
            .collect();
        ios.append(&mut rw_32k.ios);
        rw_32k.ios = ios;
        rw_32k.warmup = warmup_ios;
    }
    vec![
        sr_4k,
        rr_4k,
        sw_32k,
        rw_32k,
        part(
            "rr-64k",
            "granularity",
            rnd(128, 64 << 10, len, &mut read),
            1,
            0,
        ),
        part(
            "sw-4k",
            "granularity",
            seq(256, k4, len / 4, Mode::Write),
            1,
            0,
        ),
        part(
            "rw-4k-local",
            "locality",
            rnd(128, k4, 1 << 20, &mut write),
            1,
            0,
        ),
        part(
            "rr-4k-qd8",
            "queue-depth",
            rnd(512, k4, len, &mut read),
            8,
            0,
        ),
        part("mix-70r-4k", "mix", rnd(256, k4, len, &mut mix70), 1, 0),
        part(
            "rw-4k-pause",
            "pause",
            rnd(64, k4, len, &mut write),
            1,
            2_000_000,
        ),
    ]
}

/// Mean and 99th percentile of a part's latencies.
#[derive(Clone, Copy, Debug, Default, Serialize, Deserialize)]
pub struct Stat {
    pub mean_ns: f64,
    pub p99_ns: f64,
}

fn stat(lat: &[Nanos]) -> Stat {
    if lat.is_empty() {
        return Stat::default();
    }
    let mut s = lat.to_vec();
    s.sort_unstable();
    let idx = ((s.len() as f64 * 0.99).ceil() as usize).clamp(1, s.len()) - 1;
    Stat {
        mean_ns: s.iter().map(|&x| x as f64).sum::<f64>() / s.len() as f64,
        p99_ns: s[idx] as f64,
    }
}

/// Runs the fill and the parts on a device; each part's statistics (`None`
/// for a part skipped by the write budget).
pub fn run_plan(
    s: &mut Session,
    base: u64,
    len: u64,
    parts: &[Part],
    max_write_bytes: u64,
) -> Result<Vec<Option<Stat>>, ProbeError> {
    let fill: Vec<(u64, u32)> = (0..len / (32 << 10))
        .map(|i| (base + i * (32 << 10), 32 << 10))
        .collect();
    s.batch(&fill, Mode::Write, 1)?;
    let mut out = Vec::new();
    for p in parts {
        if s.written_bytes + p.write_bytes() > max_write_bytes {
            out.push(None);
            continue;
        }
        s.idle(100_000_000)?;
        let lat = run_part(s, p)?;
        out.push(Some(stat(&lat[p.warmup.min(lat.len())..])));
    }
    Ok(out)
}

fn run_part(s: &mut Session, p: &Part) -> Result<Vec<Nanos>, ProbeError> {
    if p.qd > 1 && p.pause_ns == 0 && p.ios.iter().all(|i| i.2 == p.ios[0].2) {
        let ios: Vec<(u64, u32)> = p.ios.iter().map(|i| (i.0, i.1)).collect();
        return s.batch(&ios, p.ios[0].2, p.qd);
    }
    let mut lat = Vec::with_capacity(p.ios.len());
    for &(o, size, mode) in &p.ios {
        lat.push(s.io(o, size, mode)?);
        if p.pause_ns > 0 {
            s.pause(p.pause_ns)?;
        }
    }
    Ok(lat)
}

/// A fitted timing parameter: its dotted key, bounds, and how to set it.
#[derive(Clone, Copy, Debug)]
struct Param {
    key: &'static str,
    lo: f64,
    hi: f64,
}

const PARAMS: [Param; 6] = [
    Param {
        key: "nand.read_ns",
        lo: 5e3,
        hi: 2e6,
    },
    Param {
        key: "nand.program_ns",
        lo: 5e4,
        hi: 1e7,
    },
    Param {
        key: "nand.erase_ns",
        lo: 3e5,
        hi: 3e7,
    },
    Param {
        key: "nand.bus_ns_per_byte",
        lo: 0.5,
        hi: 200.0,
    },
    Param {
        key: "host.command_overhead_ns",
        lo: 1e3,
        hi: 2e6,
    },
    Param {
        key: "host.mb_per_s",
        lo: 5.0,
        hi: 8000.0,
    },
];

/// Service-time spreads fitted to the p99s (stage 2). Linear, from 0 (no
/// spread) to `hi`; 0 is a legitimate answer, so only `hi` counts as a bound.
const SPREADS: [Param; 2] = [
    Param {
        key: "nand.program_spread",
        lo: 0.0,
        hi: 0.9,
    },
    Param {
        key: "nand.read_retry_probability",
        lo: 0.0,
        hi: 0.3,
    },
];

fn get(cfg: &SimConfig, key: &str) -> f64 {
    match key {
        "nand.program_spread" => cfg.nand.program_spread,
        "nand.read_retry_probability" => cfg.nand.read_retry_probability,
        "nand.read_ns" => cfg.nand.read_ns.unwrap_or(50_000) as f64,
        "nand.program_ns" => cfg.nand.program_ns.unwrap_or(900_000) as f64,
        "nand.erase_ns" => cfg.nand.erase_ns.unwrap_or(3_500_000) as f64,
        "nand.bus_ns_per_byte" => cfg.nand.bus_ns_per_byte.unwrap_or(25.0),
        "host.command_overhead_ns" => cfg.host.command_overhead_ns as f64,
        "host.mb_per_s" => cfg.host.mb_per_s,
        _ => unreachable!("not a fitted key: {key}"),
    }
}

fn set(cfg: &mut SimConfig, key: &str, v: f64) {
    match key {
        // Three decimals: finer spreads do not move a plan's p99.
        "nand.program_spread" => cfg.nand.program_spread = (v * 1000.0).round() / 1000.0,
        "nand.read_retry_probability" => {
            cfg.nand.read_retry_probability = (v * 1000.0).round() / 1000.0
        }
        "nand.read_ns" => cfg.nand.read_ns = Some(v.round() as u64),
        "nand.program_ns" => cfg.nand.program_ns = Some(v.round() as u64),
        "nand.erase_ns" => cfg.nand.erase_ns = Some(v.round() as u64),
        // Two decimals: the profile stays readable and the loss is flat below.
        "nand.bus_ns_per_byte" => cfg.nand.bus_ns_per_byte = Some((v * 100.0).round() / 100.0),
        "host.command_overhead_ns" => cfg.host.command_overhead_ns = v.round() as u64,
        "host.mb_per_s" => cfg.host.mb_per_s = (v * 10.0).round() / 10.0,
        _ => unreachable!("not a fitted key: {key}"),
    }
}

/// What the target measured and a candidate predicted, part by part.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct PartScore {
    pub name: String,
    pub group: String,
    pub measured: Option<Stat>,
    /// The final twin (fitted on every part).
    pub predicted: Option<Stat>,
    /// Cross-validated: fitted without this part's fold.
    pub held_out: Option<Stat>,
    /// The cross-validation fold this part was held out in (its
    /// `held_out` prediction comes from a fit on the other folds' parts).
    pub fold: usize,
}

impl PartScore {
    pub fn mean_error(&self, s: Option<Stat>) -> Option<f64> {
        let (m, p) = (self.measured?, s?);
        Some(p.mean_ns / m.mean_ns - 1.0)
    }
    pub fn p99_error(&self, s: Option<Stat>) -> Option<f64> {
        let (m, p) = (self.measured?, s?);
        Some(p.p99_ns / m.p99_ns - 1.0)
    }
}

/// One fitted or kept parameter and how it was obtained.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct ParamResult {
    pub key: String,
    pub value: f64,
    pub lo: f64,
    pub hi: f64,
    /// fitted, on-bound, no-effect.
    pub status: String,
    /// Loss change (rms log error) when the value is x1.5 or /1.5 (a
    /// spread: +-0.1 of its range).
    pub effect: f64,
    /// What it was fitted to: "means" (stage 1) or "p99" (stage 2).
    pub fitted_to: String,
}

#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Twin {
    pub probe: ProbeReport,
    pub ftl_kind: String,
    /// Training loss (rms of log(predicted/measured) means) per FTL kind tried.
    pub kinds_tried: Vec<(String, f64)>,
    pub params: Vec<ParamResult>,
    pub parts: Vec<PartScore>,
    /// rms log error of the means over the plan's parts (training).
    pub loss_rms: f64,
    /// The same over each part's held-out prediction.
    pub cv_loss_rms: f64,
    /// rms log error of the p99s (training).
    pub p99_loss_rms: f64,
    /// The same over each part's held-out prediction.
    pub cv_p99_loss_rms: f64,
    /// Per fold: the parts held out, and the FTL kind its own fit chose.
    pub folds: Vec<Fold>,
    /// The plan's region and seed (the plan is regenerated from them).
    pub plan_base_bytes: u64,
    pub plan_len_bytes: u64,
    pub seed: u64,
    /// The random-write part's uncounted opening writes ([`plan_warmup_ios`];
    /// 0 in twins made before they existed, which is the plan they ran).
    #[serde(default)]
    pub plan_warmup_ios: usize,
    pub evaluations: usize,
    /// Why the twin is not good; empty when it is.
    pub not_good: Vec<String>,
    /// The profile text, every key with its provenance comment.
    pub profile_toml: String,
}

/// One cross-validation fold: the parts it held out and what the fit on the
/// other parts chose.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Fold {
    pub held_out: Vec<String>,
    pub trained_on: Vec<String>,
    pub ftl_kind: String,
}

impl Twin {
    pub fn is_good(&self) -> bool {
        self.not_good.is_empty()
    }
}

/// The evidence a candidate is fitted against.
struct Target<'a> {
    parts: &'a [Part],
    measured: &'a [Option<Stat>],
    base: u64,
    len: u64,
    seed: u64,
}

/// Runs the plan on a candidate; `None` where the simulator refused the
/// configuration or stalled (an infinite loss).
fn simulate(cfg: &SimConfig, t: &Target) -> Option<Vec<Option<Stat>>> {
    let mut dev = SimDevice::new(cfg.clone(), "sim:twin-candidate".into(), t.seed, 64).ok()?;
    let mut s = Session::new(
        &mut dev,
        u64::MAX / 4,
        Some(ByteRange {
            offset_bytes: t.base,
            len_bytes: t.len,
        }),
    );
    run_plan(&mut s, t.base, t.len, t.parts, u64::MAX).ok()
}

/// Which statistics a loss compares.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Terms {
    /// The parts' means (stage 1: the timing parameters).
    Mean,
    /// The parts' p99s alone (reported, not fitted to alone).
    P99,
    /// Means and p99s (stage 2: the spreads; the means stay in so that a
    /// spread cannot buy a p99 with a wrong mean).
    Both,
}

/// rms of log(predicted/measured) over the parts in `use_part`.
fn loss(pred: &[Option<Stat>], t: &Target, use_part: &dyn Fn(usize) -> bool, terms: Terms) -> f64 {
    let mut sum = 0.0;
    let mut n = 0.0;
    let mut add = |p: f64, m: f64| {
        let e = (p.max(1.0) / m.max(1.0)).ln();
        sum += e * e;
        n += 1.0;
    };
    for (i, (p, m)) in pred.iter().zip(t.measured).enumerate() {
        if !use_part(i) {
            continue;
        }
        if let (Some(p), Some(m)) = (p, m) {
            if terms != Terms::P99 {
                add(p.mean_ns, m.mean_ns);
            }
            if terms != Terms::Mean {
                add(p.p99_ns, m.p99_ns);
            }
        }
    }
    if n == 0.0 {
        f64::INFINITY
    } else {
        (sum / n).sqrt()
    }
}

struct Fit {
    cfg: SimConfig,
    loss: f64,
    evals: usize,
}

/// How a coordinate descent moves one parameter, and how its step shrinks
/// after a pass over every parameter brings no improvement.
#[derive(Clone, Copy)]
enum Steps {
    /// Log space (timings span decades): x*s and x/s, s from 4, its square
    /// root after a pass with no gain, while above 1.03; at most 400 runs.
    Log,
    /// Linear (spreads and probabilities start at 0, where log space cannot
    /// move): x +- s*(hi - lo), s from a quarter, halved, down to 1/64; at
    /// most 120 runs.
    Linear,
}

impl Steps {
    fn first(self) -> f64 {
        match self {
            Steps::Log => 4.0,
            Steps::Linear => 0.25,
        }
    }
    fn live(self, step: f64, evals: usize) -> bool {
        match self {
            Steps::Log => step > 1.03 && evals < 400,
            Steps::Linear => step >= 1.0 / 64.0 && evals < 120,
        }
    }
    fn shrink(self, step: f64) -> f64 {
        match self {
            Steps::Log => step.sqrt(),
            Steps::Linear => step / 2.0,
        }
    }
    fn candidates(self, x: f64, step: f64, p: &Param) -> [f64; 2] {
        match self {
            Steps::Log => [x * step, x / step],
            Steps::Linear => {
                let d = step * (p.hi - p.lo);
                [x + d, x - d]
            }
        }
    }
}

/// Coordinate descent: each parameter in turn tries its two candidates
/// (inside its bounds) and keeps the first that lowers the loss.
/// Deterministic: same evidence, same answer.
fn descend(
    start: &SimConfig,
    params: &[Param],
    steps: Steps,
    eval: impl Fn(&SimConfig) -> f64,
) -> Fit {
    let mut cfg = start.clone();
    let mut best = eval(&cfg);
    let mut evals = 1;
    let mut step = steps.first();
    while steps.live(step, evals) {
        let mut improved = false;
        for p in params {
            let x = get(&cfg, p.key);
            for cand in steps.candidates(x, step, p) {
                let cand = cand.clamp(p.lo, p.hi);
                if (cand - x).abs() < 1e-9 * x.abs().max(1.0) {
                    continue;
                }
                let mut c = cfg.clone();
                set(&mut c, p.key, cand);
                let l = eval(&c);
                evals += 1;
                if l < best - 1e-9 {
                    best = l;
                    cfg = c;
                    improved = true;
                    break;
                }
            }
        }
        if !improved {
            step = steps.shrink(step);
        }
    }
    Fit {
        cfg,
        loss: best,
        evals,
    }
}

/// Stage 1: the timing parameters `fitted`, in log space, on the means of
/// the parts in `use_part`.
fn fit(start: &SimConfig, t: &Target, fitted: &[Param], use_part: &dyn Fn(usize) -> bool) -> Fit {
    descend(start, fitted, Steps::Log, |c| {
        simulate(c, t).map_or(f64::INFINITY, |p| loss(&p, t, use_part, Terms::Mean))
    })
}

/// Stage 2: the spreads, linearly from 0, on means and p99s of the parts in
/// `use_part`. The timing parameters stay where stage 1 left them.
fn fit_spreads(start: &SimConfig, t: &Target, use_part: &dyn Fn(usize) -> bool) -> Fit {
    descend(start, &SPREADS, Steps::Linear, |c| {
        simulate(c, t).map_or(f64::INFINITY, |p| loss(&p, t, use_part, Terms::Both))
    })
}

/// One whole fit on the parts `use_part` selects: every candidate (FTL kind
/// x cache on/off) from its template start, stage 1 on the means, stage 2
/// on the p99s; the candidate with the lowest training loss (means and
/// p99s) is kept. The final twin runs it on every part; each
/// cross-validation fold runs it again on its training parts only.
struct Whole {
    fit: Fit,
    kind: FtlKind,
    notes: BTreeMap<String, String>,
    /// (label, training loss on means and p99s) per candidate.
    tried: Vec<(String, f64)>,
    evals: usize,
}

fn fit_whole(
    report: &ProbeReport,
    t: &Target,
    choices: &[(FtlKind, bool)],
    capacity: u64,
    use_part: &dyn Fn(usize) -> bool,
) -> Whole {
    let mut best: Option<(Fit, FtlKind, BTreeMap<String, String>)> = None;
    let mut tried = Vec::new();
    let mut evals = 0;
    for &(kind, cache) in choices {
        let mut notes = BTreeMap::new();
        let start = candidate(report, kind, cache, capacity, &mut notes);
        let means = fit(&start, t, &PARAMS, use_part);
        let spreads = fit_spreads(&means.cfg, t, use_part);
        evals += means.evals + spreads.evals;
        let label = format!("{}{}", kind.name(), if cache { "+cache" } else { "" });
        tried.push((label, spreads.loss));
        if best.as_ref().is_none_or(|b| spreads.loss < b.0.loss) {
            best = Some((spreads, kind, notes));
        }
    }
    let (fit, kind, notes) = best.expect("at least one candidate");
    Whole {
        fit,
        kind,
        notes,
        tried,
        evals,
    }
}

/// The candidate configuration the probe's evidence describes.
/// Long: one group of profile keys per probe estimate, each noted with its provenance.
fn candidate(
    r: &ProbeReport,
    kind: FtlKind,
    cache_without_knee: bool,
    capacity: u64,
    notes: &mut BTreeMap<String, String>,
) -> SimConfig {
    let template = if kind == FtlKind::Page {
        PAGE_TEMPLATE
    } else {
        LOG_TEMPLATE
    };
    let mut cfg = flashlab_sim::profiles::builtin(template).expect("built-in template");
    let mut note = |k: &str, v: String| {
        notes.insert(k.to_string(), v);
    };
    // The template's service-time variance is its own assumption: the twin
    // starts from constant service times; stage 2 fits the spreads to the
    // plan's p99s (`fit_spreads`).
    cfg.nand.program_ns_by_page_kind.clear();
    cfg.nand.read_ns_by_page_kind.clear();
    cfg.nand.program_spread = 0.0;
    cfg.nand.erase_spread = 0.0;
    cfg.nand.read_retry_probability = 0.0;
    note(
        "nand.program_ns_by_page_kind",
        "assumed: none (constant program time): the plan's means cannot separate page kinds".into(),
    );
    cfg.ftl.kind = kind;
    note(
        "ftl.kind",
        format!(
            "mechanism: {} from the probe's FTL-family curve ({}){}",
            kind.name(),
            r.ftl_family.reading,
            if kind == FtlKind::Page {
                String::new()
            } else {
                "; bast vs fast chosen by the lower training loss".into()
            }
        ),
    );
    let page = 4096u64;
    cfg.geometry.page_bytes = ByteSize(page);
    note(
        "geometry.page_bytes",
        format!(
            "assumed: 4 KiB; the probe's granule curve read {}",
            r.map_granule_bytes.reading
        ),
    );
    let par = r.parallelism.value.unwrap_or(1.0).round().clamp(1.0, 64.0) as u32;
    // A sharp knee is one serial stage's rate, not the dies: they are at
    // least the speed-up, and the curve says no more.
    let dies_hidden = matches!(r.qd_limit, Some(QdLimit::PerCommand | QdLimit::PerByte));
    if kind == FtlKind::Page {
        let template_dies =
            cfg.geometry.channels * cfg.geometry.chips_per_channel * cfg.geometry.dies_per_chip;
        let units = if dies_hidden {
            par.max(template_dies)
        } else {
            par
        };
        cfg.geometry.channels = units;
        cfg.geometry.chips_per_channel = 1;
        cfg.geometry.dies_per_chip = 1;
        note(
            "geometry.channels",
            if dies_hidden {
                format!(
                    "assumed: one die per channel, the template {template}'s {template_dies} dies or the speed-up if larger: the queue-depth curve stops at a serial stage's rate before the dies bind, so it gives only a lower bound ({})",
                    r.parallelism.reading
                )
            } else {
                format!(
                    "mechanism: one die per channel, as many as the queue-depth curve's speed-up ({})",
                    r.parallelism.reading
                )
            },
        );
        note(
            "geometry.chips_per_channel",
            "assumed: 1 (parallel units counted as channels)".into(),
        );
        note(
            "geometry.dies_per_chip",
            "assumed: 1 (parallel units counted as channels)".into(),
        );
    } else {
        // A log-block device's unit is stripe_dies x pages_per_block pages.
        let dies = 4u32;
        cfg.geometry.channels = 1;
        cfg.geometry.chips_per_channel = dies;
        cfg.geometry.dies_per_chip = 1;
        cfg.ftl.stripe_dies = dies;
        let unit = r
            .erase_unit_bytes
            .value
            .map(|v| v as u64)
            .unwrap_or(1 << 20);
        cfg.geometry.pages_per_block = ((unit / page) / dies as u64).max(1) as u32;
        note(
            "geometry.channels",
            "assumed: 1 channel of 4 dies (a single-tag device shows no parallelism to count)"
                .into(),
        );
        note(
            "geometry.chips_per_channel",
            "assumed: 4 dies, the unit striped over them".into(),
        );
        note("geometry.dies_per_chip", "assumed: 1".into());
        note(
            "ftl.stripe_dies",
            "assumed: the unit striped over the 4 dies".into(),
        );
        note(
            "geometry.pages_per_block",
            match r.erase_unit_bytes.value {
                Some(_) => format!(
                    "mechanism: unit / (4 dies x 4 KiB) from the probe's unit curve ({})",
                    r.erase_unit_bytes.reading
                ),
                None => "assumed: a 1 MiB unit; the probe saw none".into(),
            },
        );
        let logs = r.open_units.value.unwrap_or(4.0).clamp(1.0, 64.0) as u32;
        cfg.ftl.log_blocks = logs;
        note(
            "ftl.log_blocks",
            match r.open_units.value {
                Some(_) => format!(
                    "mechanism: the partitioning knee ({})",
                    r.open_units.reading
                ),
                None => "assumed: 4; the probe saw no knee".into(),
            },
        );
        cfg.ftl.log_window = false;
        cfg.ftl.seq_log_limit = 0;
        cfg.ftl.log_pages = 0;
        note(
            "ftl.log_window",
            "assumed: whole-unit logs (the template's positional window is its own)".into(),
        );
        note("ftl.seq_log_limit", "assumed: no limit".into());
        note("ftl.log_pages", "assumed: whole-unit logs".into());
    }
    let lbs_units = cfg.geometry.pages_per_block as u64 * page * 64;
    cfg.geometry.capacity = ByteSize((capacity / lbs_units).max(1) * lbs_units);
    note(
        "geometry.capacity",
        format!(
            "mechanism: the target's size ({} B), capped at the twin's maximum and rounded to whole blocks",
            r.size_bytes
        ),
    );
    if r.qd_limit == Some(QdLimit::PerCommand) {
        cfg.host.controller_cores = 1;
        note(
            "host.controller_cores",
            format!(
                "mechanism: one command processed at a time (for host.command_overhead_ns): the queue-depth curve's sharp knee at the same rate of commands for two request sizes ({})",
                r.parallelism.reading
            ),
        );
    }
    if par > 1 {
        cfg.host.queue_depth = 32;
        note("host.queue_depth", "mechanism: reads keep scaling past depth 1 (the queue-depth curve): NCQ's 32 tags assumed".into());
    } else {
        cfg.host.queue_depth = 1;
        note("host.queue_depth", "mechanism: no speed-up at depth 2 or more (the queue-depth curve): one command at a time".into());
    }
    match r.write_cache_bytes.value {
        Some(v) => {
            cfg.cache.enabled = true;
            // The probe's estimate already takes off what drained during the
            // burst (`write_cache`); rounding it to a power of two (as this
            // did before) put a 7 MiB cache at 4 MiB, and once the plan
            // writes past the cache the twin's merges start too early.
            cfg.cache.size = ByteSize(((v as u64) / page * page).max(page));
            note(
                "cache.enabled",
                format!(
                    "mechanism: the burst curve's knee ({})",
                    r.write_cache_bytes.reading
                ),
            );
            note("cache.size", "mechanism: the burst curve's knee less what the flash drained during the burst (the probe's estimate), in whole 4 KiB pages".into());
        }
        None if cache_without_knee => {
            // No knee, yet the fit with a cache explains the plan better: a
            // cache that the flash drains as fast as the burst fills it.
            cfg.cache.enabled = true;
            note("cache.enabled", format!("fitted: on, chosen over off by the lower training loss; the burst curves showed no knee ({})", r.write_cache_bytes.reading));
            note(
                "cache.size",
                "assumed: the template's size: without a knee the probe cannot size it".into(),
            );
        }
        None => {
            cfg.cache.enabled = false;
            note("cache.enabled", format!("mechanism: no knee in the burst curves ({}), and off fits the plan better than on", r.write_cache_bytes.reading));
        }
    }
    match (r.readahead_bytes.value, r.readahead_trigger) {
        (Some(w), Some(t)) if w > 0.0 => {
            cfg.readahead.enabled = true;
            cfg.readahead.trigger = t;
            let p2 = 1u64 << (64 - ((w as u64).max(page) - 1).leading_zeros());
            cfg.readahead.window = ByteSize(p2);
            note(
                "readahead.enabled",
                format!(
                    "mechanism: the sequential-after-random curve ({})",
                    r.readahead_bytes.reading
                ),
            );
            note(
                "readahead.trigger",
                "mechanism: the reads before the fast ones in that curve".into(),
            );
            note(
                "readahead.window",
                "mechanism: the skip-ahead curve's reach rounded up to a power of two".into(),
            );
        }
        _ => {
            cfg.readahead.enabled = false;
            note(
                "readahead.enabled",
                format!("mechanism: {}", r.readahead_bytes.reading),
            );
        }
    }
    cfg.name = "twin".into();
    cfg.description = format!("flashlab twin of {}", r.device);
    cfg.source = format!(
        "flashlab probe + twin of {}: geometry from the probe's curves, timing fitted by coordinate descent over the simulator; other keys from the template profile {template}",
        r.device
    );
    cfg.behaviour = "see the twin's report (predicted vs measured per plan part)".into();
    notes.insert("__template".into(), template.into());
    cfg
}

/// What a twin is fitted to: the probe's report and the plan's measured
/// statistics, with what regenerates the plan (its region and seed). Saved
/// in the twin's JSON, so a twin can be refitted without the device
/// ([`Measurement::from_twin`], Python's `flashlab.twin("x.twin.json")`).
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Measurement {
    pub probe: ProbeReport,
    pub plan_base_bytes: u64,
    pub plan_len_bytes: u64,
    pub seed: u64,
    /// See [`Twin::plan_warmup_ios`].
    #[serde(default)]
    pub plan_warmup_ios: usize,
    /// Per plan part, in plan order (`None`: skipped by the write budget).
    pub measured: Vec<Option<Stat>>,
}

impl Measurement {
    /// The measurement a saved twin was fitted to.
    pub fn from_twin(t: &Twin) -> Measurement {
        Measurement {
            probe: t.probe.clone(),
            plan_base_bytes: t.plan_base_bytes,
            plan_len_bytes: t.plan_len_bytes,
            seed: t.seed,
            plan_warmup_ios: t.plan_warmup_ios,
            measured: t.parts.iter().map(|p| p.measured).collect(),
        }
    }
}

/// Builds the twin: probe, plan, fit, cross-validation, verdict.
pub fn twin(dev: &mut dyn Device, opts: &TwinOptions) -> Result<Twin, ProbeError> {
    let m = measure(dev, opts)?;
    fit_twin(&m, opts.max_capacity_bytes)
}

/// The device's part of a twin: the probe and the plan, run on the target.
/// Refuses a target answering at memory speed.
pub fn measure(dev: &mut dyn Device, opts: &TwinOptions) -> Result<Measurement, ProbeError> {
    let probe_opts = ProbeOptions {
        budget_ns: opts.budget_ns / 2,
        writes: Some(opts.writes),
        seed: opts.seed,
        ..Default::default()
    };
    let report = crate::probe(dev, &probe_opts)?;
    // Memory speed is no flash: refuse before fitting a model to it.
    if let Some(why) = memory_speed(&report) {
        return Err(ProbeError::Refused(why));
    }
    let base = opts.writes.offset_bytes.div_ceil(1 << 20) << 20;
    let len = (opts.writes.end_bytes().min(base + PLAN_REGION_BYTES) - base) >> 20 << 20;
    if len < 8 << 20 {
        return Err(ProbeError::Refused(
            "the allowed write range holds less than 8 MiB: the plan needs a region to write"
                .into(),
        ));
    }
    let warmup = if opts.write_past_cache {
        plan_warmup_ios(&report, len)
    } else {
        0
    };
    let parts = plan(base, len, opts.seed, warmup);
    let remaining = opts.budget_ns.saturating_sub(report.elapsed_ns);
    let mut s = Session::new(dev, remaining, Some(opts.writes));
    s.written_bytes = report.written_bytes;
    let measured = run_plan(&mut s, base, len, &parts, opts.max_write_bytes)?;
    Ok(Measurement {
        probe: report,
        plan_base_bytes: base,
        plan_len_bytes: len,
        seed: opts.seed,
        plan_warmup_ios: warmup,
        measured,
    })
}

/// The simulator's part of a twin: candidates, both fitting stages,
/// cross-validation, the verdict and the profile, from a measurement alone.
/// Long: the twin's pipeline in order (candidates, the mean stage, the p99 stage,
/// cross-validation, the verdict, the profile).
pub fn fit_twin(m: &Measurement, max_capacity_bytes: u64) -> Result<Twin, ProbeError> {
    let report = m.probe.clone();
    let (base, len) = (m.plan_base_bytes, m.plan_len_bytes);
    let parts = plan(base, len, m.seed, m.plan_warmup_ios);
    if m.measured.len() != parts.len() {
        return Err(ProbeError::Refused(format!(
            "the measurement holds {} plan parts, the plan has {}: it was made by another version of flashlab twin; measure again",
            m.measured.len(),
            parts.len()
        )));
    }
    let measured = m.measured.clone();
    let t = Target {
        parts: &parts,
        measured: &measured,
        base,
        len,
        seed: m.seed,
    };
    let capacity = report.size_bytes.min(max_capacity_bytes);
    let kinds: Vec<FtlKind> = match report.family {
        Some(FtlFamily::LogBlock) => vec![FtlKind::Bast, FtlKind::Fast],
        _ => vec![FtlKind::Page],
    };
    // Without a knee the probe cannot tell "no cache" from "a cache the
    // flash drains as fast as it fills": both are fitted, the better kept.
    let caches: &[bool] = if report.write_cache_bytes.value.is_some() {
        &[false]
    } else {
        &[false, true]
    };
    let choices: Vec<(FtlKind, bool)> = kinds
        .iter()
        .flat_map(|&k| caches.iter().map(move |&c| (k, c)))
        .collect();
    let all = |_: usize| true;
    let whole = fit_whole(&report, &t, &choices, capacity, &all);
    let mut evaluations = whole.evals;
    let kind = whole.kind;
    let kinds_tried = whole.tried;
    let mut notes = whole.notes;
    let final_loss = whole.fit.loss;
    // Sensitivity at the optimum: a parameter whose x1.5 and /1.5 move the
    // loss by under 0.005 (half a percent of rms log error) is not seen by
    // the plan: the profile says the plan cannot see it (its value is
    // whatever the descent left, from the template's). Spreads move by
    // +-0.1 of their range instead (x1.5 of 0 is 0).
    // Each parameter's effect is on the loss of the stage that fits it: a
    // timing parameter on the means, a spread on the means and p99s.
    let eval_all = |c: &SimConfig, terms: Terms| {
        simulate(c, &t).map_or(f64::INFINITY, |p| loss(&p, &t, &all, terms))
    };
    let cfg = whole.fit.cfg.clone();
    let base_loss = |terms: Terms| eval_all(&cfg, terms);
    let (mean_loss, both_loss) = (base_loss(Terms::Mean), final_loss);
    let mut params = Vec::new();
    let mut not_good = Vec::new();
    let stage = |p: &Param| -> bool { SPREADS.iter().any(|q| q.key == p.key) };
    for p in PARAMS.iter().chain(SPREADS.iter()) {
        let x = get(&cfg, p.key);
        let spread = stage(p);
        let moves: Vec<f64> = if spread {
            let d = 0.1 * (p.hi - p.lo);
            vec![(x + d).min(p.hi), (x - d).max(p.lo)]
        } else {
            vec![(x * 1.5).clamp(p.lo, p.hi), (x / 1.5).clamp(p.lo, p.hi)]
        };
        let mut effect: f64 = 0.0;
        for m in moves {
            if (m - x).abs() < 1e-12 {
                continue;
            }
            let mut c = cfg.clone();
            set(&mut c, p.key, m);
            let (terms, at) = if spread {
                (Terms::Both, both_loss)
            } else {
                (Terms::Mean, mean_loss)
            };
            effect = effect.max((eval_all(&c, terms) - at).abs());
            evaluations += 1;
        }
        // A spread of 0 is "no spread", an answer, not a bound.
        let on_bound = if spread {
            (x - p.hi).abs() < 1e-9
        } else {
            (x / p.lo).ln().abs() < 0.01 || (x / p.hi).ln().abs() < 0.01
        };
        let status = if effect < 0.005 {
            "no-effect"
        } else if on_bound {
            not_good.push(format!(
                "{} = {} sits on its bound [{}, {}]: the fit wanted beyond what the model allows",
                p.key, x, p.lo, p.hi
            ));
            "on-bound"
        } else {
            "fitted"
        };
        params.push(ParamResult {
            key: p.key.into(),
            value: x,
            lo: p.lo,
            hi: p.hi,
            status: status.into(),
            effect,
            fitted_to: if spread { "p99" } else { "means" }.into(),
        });
    }
    let pred_final = simulate(&cfg, &t).unwrap_or_else(|| vec![None; parts.len()]);
    let loss_rms = loss(&pred_final, &t, &all, Terms::Mean);
    let p99_loss_rms = loss(&pred_final, &t, &all, Terms::P99);
    // Cross-validation: three folds of parts (`FOLDS`). Each fold repeats
    // the whole fit (candidates, both stages) from the template's start on
    // the other folds' parts only, then predicts its own parts: starting
    // from the all-parts optimum would carry the held-out parts' numbers
    // into their own prediction.
    let folds = 3;
    let mut held_out: Vec<Option<Stat>> = vec![None; parts.len()];
    let mut fold_list = Vec::new();
    for f in 0..folds {
        let fold_of: Vec<usize> = parts.iter().map(|p| p.fold).collect();
        let train = |i: usize| fold_of[i] != f;
        let w = fit_whole(&report, &t, &choices, capacity, &train);
        evaluations += w.evals;
        if let Some(p) = simulate(&w.fit.cfg, &t) {
            for i in (0..parts.len()).filter(|&i| parts[i].fold == f) {
                held_out[i] = p[i];
            }
        }
        let names = |keep: bool| -> Vec<String> {
            (0..parts.len())
                .filter(|&i| (parts[i].fold == f) == keep)
                .map(|i| parts[i].name.clone())
                .collect()
        };
        fold_list.push(Fold {
            held_out: names(true),
            trained_on: names(false),
            ftl_kind: w.kind.name().to_string(),
        });
    }
    let cv_loss_rms = loss(&held_out, &t, &all, Terms::Mean);
    let cv_p99_loss_rms = loss(&held_out, &t, &all, Terms::P99);
    let scores: Vec<PartScore> = parts
        .iter()
        .enumerate()
        .map(|(i, p)| PartScore {
            name: p.name.clone(),
            group: p.group.clone(),
            measured: measured[i],
            predicted: pred_final[i],
            held_out: held_out[i],
            fold: p.fold,
        })
        .collect();
    let counted: Vec<f64> = scores
        .iter()
        .filter_map(|s| s.mean_error(s.held_out))
        .collect();
    let within = counted.iter().filter(|e| e.abs() <= 0.20).count();
    if counted.is_empty() || (within as f64) < 0.8 * counted.len() as f64 {
        not_good.push(format!(
            "held-out means within 20 % on {within} of {} parts (the target is 80 %)",
            counted.len()
        ));
    }
    let counted99: Vec<f64> = scores
        .iter()
        .filter_map(|s| s.p99_error(s.held_out))
        .collect();
    let within99 = counted99.iter().filter(|e| e.abs() <= 0.35).count();
    if counted99.is_empty() || (within99 as f64) < 0.7 * counted99.len() as f64 {
        not_good.push(format!(
            "held-out p99s within 35 % on {within99} of {} parts (the target is 70 %)",
            counted99.len()
        ));
    }
    // Provenance of the fitted and kept timing keys: which plan parts
    // (measured on the target by the probe's plan) each was fitted to.
    let trained: Vec<&str> = parts.iter().map(|p| p.name.as_str()).collect();
    for p in &params {
        let what = if p.fitted_to == "p99" {
            format!(
                "stage 2, the p99s and means of plan parts {} (training rms log error of the p99s {:.3}, cross-validated {:.3})",
                trained.join(", "),
                p99_loss_rms,
                cv_p99_loss_rms
            )
        } else {
            format!(
                "the means of plan parts {} (training rms log error {:.3}, cross-validated {:.3})",
                trained.join(", "),
                loss_rms,
                cv_loss_rms
            )
        };
        let text = match p.status.as_str() {
            "fitted" => format!(
                "fitted: flashlab twin, coordinate descent on {what}; {} moves the loss by {:.3}",
                if p.fitted_to == "p99" { "+-0.1 of its range" } else { "x1.5" },
                p.effect
            ),
            "on-bound" => format!(
                "fitted: ON ITS BOUND [{}, {}] on {what}: not trustworthy",
                p.lo, p.hi
            ),
            _ => format!(
                "assumed: not identified: moving it changed the plan's loss by {:.4} (< 0.005), so the plan cannot see it; the value is the template's as the descent left it",
                p.effect
            ),
        };
        notes.insert(p.key.clone(), text);
    }
    let profile_toml = annotate(&cfg, &notes, &not_good);
    Ok(Twin {
        probe: report,
        ftl_kind: kind.name().to_string(),
        kinds_tried,
        params,
        parts: scores,
        loss_rms,
        cv_loss_rms,
        p99_loss_rms,
        cv_p99_loss_rms,
        folds: fold_list,
        plan_base_bytes: base,
        plan_len_bytes: len,
        seed: m.seed,
        plan_warmup_ios: m.plan_warmup_ios,
        evaluations,
        not_good,
        profile_toml,
    })
}

/// The reason a target cannot be flash, from its response times: random 4
/// KiB reads and writes both faster than any NAND read (tens of
/// microseconds) are served from memory (a page cache, a RAM disk).
pub fn memory_speed(r: &ProbeReport) -> Option<String> {
    let rr = r
        .parallelism
        .evidence
        .first()
        .and_then(|c| c.points.first())
        .map(|p| 1e9 / p.1.max(1.0))?;
    (rr < 5_000.0).then(|| {
        format!(
            "random 4 KiB reads take {:.1} us at queue depth 1: memory speed, no flash behind them (a page cache or a RAM-backed target); a twin would model the memory",
            rr / 1e3
        )
    })
}

/// The profile as TOML with a provenance comment above every key.
fn annotate(cfg: &SimConfig, notes: &BTreeMap<String, String>, not_good: &[String]) -> String {
    let template = notes.get("__template").cloned().unwrap_or_default();
    let mut out = String::new();
    out.push_str("# A flashlab twin: geometry from `flashlab probe`'s curves, timing fitted in\n");
    out.push_str(
        "# process over the simulator (docs/probe.md). Every key says how it was obtained.\n",
    );
    if not_good.is_empty() {
        out.push_str("# Verdict: good (see the twin's report for held-out errors).\n");
    } else {
        for r in not_good {
            out.push_str(&format!("# NOT GOOD: {r}\n"));
        }
    }
    let mut section = String::new();
    for line in cfg.to_toml().lines() {
        let t = line.trim();
        if t.starts_with('[') {
            section = t.trim_matches(|c| c == '[' || c == ']').to_string();
            out.push('\n');
            out.push_str(line);
            out.push('\n');
            continue;
        }
        if let Some((k, _)) = t.split_once(" = ") {
            let key = if section.is_empty() {
                k.to_string()
            } else {
                format!("{section}.{k}")
            };
            let text = notes.get(&key).cloned().unwrap_or_else(|| {
                if section.is_empty() {
                    "identity: written by flashlab twin".to_string()
                } else {
                    format!("assumed: the template profile {template}'s value, not measured")
                }
            });
            out.push_str(&format!("# {text}\n"));
        }
        out.push_str(line);
        out.push('\n');
    }
    out
}
