//! A black-box flash device's geometry and behaviour from timing alone
//! (`flashlab probe`), and a simulator profile fitted to it (`flashlab twin`).
//!
//! Every estimate carries its evidence: the timing curve it was read from
//! ([`Curve`]), so that a user can check the reading instead of trusting it.
//! The probes are the field's hand-designed experiments, run automatically:
//!
//! - erase unit / allocation unit: the period of the slow writes in a
//!   sequential overwrite (uFLIP section 5.1's sequential-write period;
//!   flashbench's idea of timing writes across candidate boundaries);
//! - units open for writing at once: round-robin sequential writes over N
//!   units, N growing, until writes turn slow (uFLIP's partitioning);
//! - mapping granule: the cost of IOs shifted by half their size (uFLIP's
//!   IOShift), which peaks at the size the device maps;
//! - write cache: the knee of a burst of writes after an idle period;
//! - read-ahead: sequential reads after a random one (Chen et al. 5.2);
//! - internal parallelism: random reads at growing queue depths;
//! - FTL family: random vs sequential writes, their locality response and the
//!   partitioning knee (uFLIP Table 3's columns).
//!
//! Reads need no permission. Writes go only inside the one range the caller
//! allows ([`ByteRange`]); without it the write probes report "not measured".
//! The budget is on the device's clock.

#![forbid(unsafe_code)]

use std::fmt;

use flashlab_device::{Device, DeviceError, Nanos};
use serde::{Deserialize, Serialize};

mod estimate;
pub mod session;
pub mod twin;

pub use estimate::{family_from, read_qd_knee, Knee};
pub use session::{ByteRange, Session};

/// Why a probe or a twin stopped.
#[derive(Debug)]
pub enum ProbeError {
    /// The budget ran out (on the device's clock).
    Budget,
    Device(DeviceError),
    /// The target cannot show flash behaviour; the reason.
    Refused(String),
    /// A bug of ours (an IO outside its range): never a user's mistake.
    Internal(String),
}

impl fmt::Display for ProbeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ProbeError::Budget => write!(f, "the time budget ran out; give a larger --budget"),
            ProbeError::Device(e) => write!(f, "device error: {e}"),
            ProbeError::Refused(r) => write!(f, "refused: {r}"),
            ProbeError::Internal(s) => write!(f, "internal error: {s}"),
        }
    }
}

impl std::error::Error for ProbeError {}

/// A timing curve: the evidence an estimate was read from.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Curve {
    pub title: String,
    pub x_label: String,
    pub y_label: String,
    pub points: Vec<(f64, f64)>,
}

impl Curve {
    fn new(title: &str, x_label: &str, y_label: &str) -> Curve {
        Curve {
            title: title.into(),
            x_label: x_label.into(),
            y_label: y_label.into(),
            points: Vec::new(),
        }
    }
}

/// One estimate: a value when the evidence supports one, the reading in
/// words, and the curve.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Estimate {
    pub value: Option<f64>,
    pub unit: String,
    pub reading: String,
    pub evidence: Vec<Curve>,
}

impl Estimate {
    fn skipped(unit: &str, why: &str) -> Estimate {
        Estimate {
            value: None,
            unit: unit.into(),
            reading: format!("not measured: {why}"),
            evidence: Vec::new(),
        }
    }
}

/// The FTL family the evidence points to.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum FtlFamily {
    PageMapped,
    LogBlock,
}

impl FtlFamily {
    pub fn name(self) -> &'static str {
        match self {
            FtlFamily::PageMapped => "page-mapped",
            FtlFamily::LogBlock => "log-block",
        }
    }
}

/// What flattens the queue-depth curve of random reads (see
/// `ProbeReport::qd_limit`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum QdLimit {
    /// The curve bends gradually, as random reads colliding on a few dies
    /// do: the speed-up counts the dies (or the requests served at once).
    Dies,
    /// The curve rises almost linearly, then stops at once, at a rate in
    /// commands per second that does not depend on the request size: one
    /// stage serving one command at a time (a controller core). The dies
    /// behind it are not counted by the curve: it flattens before they do.
    PerCommand,
    /// The same sharp knee, at a rate that falls with the request size: a
    /// per-byte stage (the host link). The dies are hidden behind it too.
    PerByte,
}

impl QdLimit {
    pub fn name(self) -> &'static str {
        match self {
            QdLimit::Dies => "dies",
            QdLimit::PerCommand => "per-command",
            QdLimit::PerByte => "per-byte",
        }
    }
}

/// What the probe found.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct ProbeReport {
    pub device: String,
    pub size_bytes: u64,
    pub writes_allowed: Option<ByteRange>,
    pub erase_unit_bytes: Estimate,
    pub open_units: Estimate,
    pub map_granule_bytes: Estimate,
    pub write_cache_bytes: Estimate,
    pub readahead_bytes: Estimate,
    /// Sequential reads before read-ahead serves them (Chen et al. 5.2: four).
    pub readahead_trigger: Option<u32>,
    pub parallelism: Estimate,
    /// What the queue-depth curve's flattening is read as (the parallelism
    /// estimate's reading says why); `None` where it was not measured.
    #[serde(default)]
    pub qd_limit: Option<QdLimit>,
    pub ftl_family: Estimate,
    /// `ftl_family`'s value in words, when one was read.
    pub family: Option<FtlFamily>,
    /// Device-clock nanoseconds the probe took.
    pub elapsed_ns: Nanos,
    pub written_bytes: u64,
}

impl ProbeReport {
    /// The estimates in print order, with their names.
    pub fn estimates(&self) -> [(&'static str, &Estimate); 7] {
        [
            ("erase unit", &self.erase_unit_bytes),
            ("open units", &self.open_units),
            ("mapping granule", &self.map_granule_bytes),
            ("write cache", &self.write_cache_bytes),
            ("read-ahead", &self.readahead_bytes),
            ("parallelism", &self.parallelism),
            ("FTL family", &self.ftl_family),
        ]
    }
}

/// How the probe may use the device.
#[derive(Clone, Debug)]
pub struct ProbeOptions {
    /// On the device's clock.
    pub budget_ns: Nanos,
    /// Where writes may go; `None`: read-only.
    pub writes: Option<ByteRange>,
    /// Seeds the random offsets.
    pub seed: u64,
    /// The most bytes of the allowed range the write probes use (a region
    /// at its start): enough for several allocation units and a cache burst.
    pub region_bytes: u64,
}

impl Default for ProbeOptions {
    fn default() -> Self {
        ProbeOptions {
            budget_ns: 600_000_000_000,
            writes: None,
            seed: 1,
            region_bytes: 256 << 20,
        }
    }
}

/// Runs every probe the permissions and the budget allow.
pub fn probe(dev: &mut dyn Device, opts: &ProbeOptions) -> Result<ProbeReport, ProbeError> {
    let info = dev.info().clone();
    let start_ns = dev.now_ns();
    let mut s = Session::new(dev, opts.budget_ns, opts.writes);
    let mut r = ProbeReport {
        device: info.name.clone(),
        size_bytes: info.size_bytes,
        writes_allowed: opts.writes,
        ..Default::default()
    };
    estimate::run_all(&mut s, opts, &mut r)?;
    r.elapsed_ns = s.now_ns() - start_ns;
    r.written_bytes = s.written_bytes;
    Ok(r)
}

/// Bytes as the CLI prints them.
pub fn fmt_bytes(b: f64) -> String {
    flashlab_pattern::units::format_size(b.max(0.0) as u64)
}

/// A curve as terminal text: `x:y` pairs, several per line; a long curve
/// (a burst of thousands of IOs) is thinned to about 24 points on screen
/// (the JSON keeps them all).
pub fn render_curve(c: &Curve) -> String {
    let mut out = format!("    {} ({} -> {}):\n", c.title, c.x_label, c.y_label);
    let stride = c.points.len().div_ceil(24).max(1);
    if stride > 1 {
        out.push_str(&format!(
            "      (every {stride}th of {} points)\n",
            c.points.len()
        ));
    }
    let cells: Vec<String> = c
        .points
        .iter()
        .step_by(stride)
        .map(|(x, y)| format!("{}:{}", short(*x), short(*y)))
        .collect();
    for chunk in cells.chunks(8) {
        out.push_str("      ");
        out.push_str(&chunk.join("  "));
        out.push('\n');
    }
    out
}

fn short(v: f64) -> String {
    if v.fract() == 0.0 && v.abs() < 1e15 {
        format!("{}", v as i64)
    } else {
        format!("{v:.3}")
    }
}
