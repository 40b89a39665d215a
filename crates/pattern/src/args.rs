//! Pattern parameters as a user gives them (command-line flags or a TOML
//! table), and their resolution into a validated [`PatternSpec`].
//!
//! Flags and TOML share this one type so that both accept exactly the same
//! parameters with the same names (`io_size` in TOML is `--io-size` on the
//! command line) and the same checks.

use flashlab_device::Mode;
use serde::{Deserialize, Serialize};

use crate::error::{PatternError, Side};
use crate::spec::{Basic, Location, Mix, PatternSpec, Timing, SECTOR_BYTES};
use crate::units::{parse_runtime_ns, parse_size};

/// IOSize of the uFLIP baseline patterns.
pub const DEFAULT_IO_SIZE_BYTES: u64 = 32 * 1024;
pub const DEFAULT_IO_COUNT: u64 = 1024;
/// The seed used when none is given; printed with every run so it can be varied.
pub const DEFAULT_SEED: u64 = 42;

/// A size written as a number of bytes or as text with a unit.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum SizeValue {
    Bytes(u64),
    Text(String),
}

impl SizeValue {
    fn bytes(&self, what: &'static str) -> Result<u64, PatternError> {
        match self {
            SizeValue::Bytes(b) => Ok(*b),
            SizeValue::Text(t) => parse_size(t).map_err(|source| PatternError::Unit {
                field: Some(what),
                source,
            }),
        }
    }
}

/// A mix Ratio written as `4` (meaning 4:1) or as text `"1:4"`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum RatioValue {
    Number(u64),
    Text(String),
}

impl RatioValue {
    pub fn parse(&self) -> Result<(u64, u64), PatternError> {
        match self {
            RatioValue::Number(n) => Ok((*n, 1)),
            RatioValue::Text(t) => {
                let bad = || PatternError::Ratio { text: t.clone() };
                match t.split_once(':') {
                    Some((a, b)) => Ok((
                        a.trim().parse().map_err(|_| bad())?,
                        b.trim().parse().map_err(|_| bad())?,
                    )),
                    None => Ok((t.trim().parse().map_err(|_| bad())?, 1)),
                }
            }
        }
    }
}

/// The second pattern of a mix: a baseline name (`"RW"`), a compact
/// `LOCATION/MODE[@IOSIZE]` (`"random/write@4KiB"`), or a TOML table.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum MixValue {
    Text(String),
    Table(MixTable),
}

#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct MixTable {
    pub pattern: Option<String>,
    pub location: Option<String>,
    pub mode: Option<String>,
    pub io_size: Option<SizeValue>,
    pub io_shift: Option<SizeValue>,
}

impl MixValue {
    fn table(&self) -> MixTable {
        match self {
            MixValue::Table(t) => t.clone(),
            MixValue::Text(text) => {
                let (head, size) = match text.split_once('@') {
                    Some((h, s)) => (h, Some(SizeValue::Text(s.to_string()))),
                    None => (text.as_str(), None),
                };
                let mut t = MixTable {
                    io_size: size,
                    ..MixTable::default()
                };
                match head.rsplit_once('/') {
                    Some((loc, mode)) => {
                        t.location = Some(loc.to_string());
                        t.mode = Some(mode.to_string());
                    }
                    None => t.pattern = Some(head.to_string()),
                }
                t
            }
        }
    }
}

/// Every pattern parameter, each optional; see [`PatternArgs::resolve`] for defaults.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PatternArgs {
    pub name: Option<String>,
    /// A uFLIP baseline pattern: SR, RR, SW or RW (sets location and mode).
    pub pattern: Option<String>,
    pub location: Option<String>,
    pub mode: Option<String>,
    pub io_size: Option<SizeValue>,
    pub io_shift: Option<SizeValue>,
    pub target_offset: Option<SizeValue>,
    pub target_size: Option<SizeValue>,
    pub time: Option<String>,
    pub io_count: Option<u64>,
    pub io_ignore: Option<u64>,
    pub parallel: Option<u64>,
    pub queue_depth: Option<u64>,
    pub seed: Option<u64>,
    pub mix: Option<MixValue>,
    pub ratio: Option<RatioValue>,
    /// fio's runtime: a bare number is seconds (`60`, `500ms`, `2m`).
    pub runtime: Option<String>,
    /// fio's time_based: repeat the pattern until `runtime`.
    pub time_based: Option<bool>,
    /// fio's rate_iops: IOs per second per stream.
    pub rate_iops: Option<u64>,
    /// fio's bssplit: `4KiB/50:64KiB/50`, each IO's size drawn by these shares.
    pub bssplit: Option<String>,
}

/// The field names, for "did you mean" suggestions on typos.
pub const FIELD_NAMES: &[&str] = &[
    "name",
    "pattern",
    "location",
    "mode",
    "io_size",
    "io_shift",
    "target_offset",
    "target_size",
    "time",
    "io_count",
    "io_ignore",
    "parallel",
    "queue_depth",
    "seed",
    "mix",
    "ratio",
    "runtime",
    "time_based",
    "rate_iops",
    "bssplit",
];

/// Parses SR, RR, SW, RW (any case) into a location and a mode.
pub fn parse_baseline(name: &str) -> Result<(Location, Mode), PatternError> {
    match name.trim().to_ascii_uppercase().as_str() {
        "SR" => Ok((Location::Sequential, Mode::Read)),
        "RR" => Ok((Location::Random, Mode::Read)),
        "SW" => Ok((Location::Sequential, Mode::Write)),
        "RW" => Ok((Location::Random, Mode::Write)),
        _ => Err(PatternError::UnknownBaseline {
            name: name.to_string(),
        }),
    }
}

pub fn parse_mode(text: &str) -> Result<Mode, PatternError> {
    match text.trim().to_ascii_lowercase().as_str() {
        "read" | "r" => Ok(Mode::Read),
        "write" | "w" => Ok(Mode::Write),
        "trim" | "discard" => Ok(Mode::Trim),
        other => Err(PatternError::UnknownMode {
            mode: other.to_string(),
        }),
    }
}

fn location_and_mode(
    side: Side,
    pattern: &Option<String>,
    location: &Option<String>,
    mode: &Option<String>,
) -> Result<(Location, Mode), PatternError> {
    if let Some(p) = pattern {
        if location.is_some() || mode.is_some() {
            let other = if location.is_some() {
                "location"
            } else {
                "mode"
            };
            return Err(PatternError::PatternAndLocationOrMode {
                side,
                pattern: p.clone(),
                other,
            });
        }
        return parse_baseline(p);
    }
    let loc = match location {
        Some(l) => Location::parse(l)?,
        None => Location::Sequential,
    };
    let mode = match mode {
        Some(m) => parse_mode(m)?,
        None => Mode::Read,
    };
    Ok((loc, mode))
}

impl PatternArgs {
    /// `self` with every unset field taken from `base` (e.g. a file's `[defaults]`).
    pub fn or(self, base: &PatternArgs) -> PatternArgs {
        let base = base.clone();
        let own_pattern = self.pattern.is_some();
        let own_location_or_mode = self.location.is_some() || self.mode.is_some();
        PatternArgs {
            name: self.name.or(base.name),
            // A run that names its own location or mode replaces a default
            // baseline pattern rather than contradicting it, and vice versa.
            pattern: if own_location_or_mode {
                self.pattern
            } else {
                self.pattern.or(base.pattern)
            },
            location: if own_pattern {
                self.location
            } else {
                self.location.or(base.location)
            },
            mode: if own_pattern {
                self.mode
            } else {
                self.mode.or(base.mode)
            },
            io_size: self.io_size.or(base.io_size),
            io_shift: self.io_shift.or(base.io_shift),
            target_offset: self.target_offset.or(base.target_offset),
            target_size: self.target_size.or(base.target_size),
            time: self.time.or(base.time),
            io_count: self.io_count.or(base.io_count),
            io_ignore: self.io_ignore.or(base.io_ignore),
            parallel: self.parallel.or(base.parallel),
            queue_depth: self.queue_depth.or(base.queue_depth),
            seed: self.seed.or(base.seed),
            mix: self.mix.or(base.mix),
            ratio: self.ratio.or(base.ratio),
            runtime: self.runtime.or(base.runtime),
            time_based: self.time_based.or(base.time_based),
            rate_iops: self.rate_iops.or(base.rate_iops),
            bssplit: self.bssplit.or(base.bssplit),
        }
    }

    /// Whether any parameter is set (used to refuse flags next to a pattern file).
    pub fn is_empty(&self) -> bool {
        *self == PatternArgs::default()
    }

    /// Resolves defaults against a device of `device_size_bytes` and validates.
    ///
    /// Defaults: sequential reads (never a write unless asked), IOSize 32 KiB,
    /// the whole device from TargetOffset on, IOCount 1024, IOIgnore 0, one
    /// stream at queue depth 1, consecutive timing, seed 42.
    pub fn resolve(&self, device_size_bytes: u64) -> Result<PatternSpec, PatternError> {
        let (location, mode) =
            location_and_mode(Side::Primary, &self.pattern, &self.location, &self.mode)?;
        let io_size_split = match &self.bssplit {
            None => Vec::new(),
            Some(text) => {
                if self.io_size.is_some() {
                    return Err(PatternError::BadSizeSplit {
                        problem: "it sets every IO's size; drop io_size (--bs)".into(),
                    });
                }
                crate::spec::parse_bssplit(text, |t| parse_size(t).map_err(|e| e.to_string()))
                    .map_err(|problem| PatternError::BadSizeSplit { problem })?
            }
        };
        let io_size_bytes = match (
            &self.io_size,
            io_size_split.iter().map(|x| x.size_bytes).min(),
        ) {
            (_, Some(smallest)) => smallest,
            (Some(v), None) => v.bytes("io_size")?,
            (None, None) => DEFAULT_IO_SIZE_BYTES,
        };
        let io_shift_bytes = match &self.io_shift {
            Some(v) => v.bytes("io_shift")?,
            None => 0,
        };
        let target_offset_bytes = match &self.target_offset {
            Some(v) => v.bytes("target_offset")?,
            None => 0,
        };
        let target_size_bytes = match &self.target_size {
            Some(v) => v.bytes("target_size")?,
            None => {
                if target_offset_bytes >= device_size_bytes {
                    return Err(PatternError::TargetOffsetPastEnd {
                        target_offset_bytes,
                        device_bytes: device_size_bytes,
                    });
                }
                (device_size_bytes - target_offset_bytes) / SECTOR_BYTES * SECTOR_BYTES
            }
        };
        if target_size_bytes == 0 {
            return Err(PatternError::EmptyTarget);
        }
        let timing = match &self.time {
            Some(t) => Timing::parse(t)?,
            None => Timing::Consecutive,
        };
        let primary = Basic {
            location,
            mode,
            io_size_bytes,
            io_shift_bytes,
        };
        let mix = match (&self.mix, &self.ratio) {
            (None, Some(_)) => return Err(PatternError::RatioWithoutMix),
            (None, None) => None,
            (Some(m), ratio) => {
                let t = m.table();
                let (location, mode) =
                    location_and_mode(Side::Mixed, &t.pattern, &t.location, &t.mode)?;
                let io_size_bytes = match &t.io_size {
                    Some(v) => v.bytes("mix io_size")?,
                    None => io_size_bytes,
                };
                let io_shift_bytes = match &t.io_shift {
                    Some(v) => v.bytes("mix io_shift")?,
                    None => io_shift_bytes,
                };
                let (a, b) = match ratio {
                    Some(r) => r.parse()?,
                    None => (1, 1),
                };
                Some(Mix {
                    secondary: Basic {
                        location,
                        mode,
                        io_size_bytes,
                        io_shift_bytes,
                    },
                    ratio_primary: a,
                    ratio_secondary: b,
                    random_order: false,
                    shared_location: false,
                })
            }
        };
        let name = match &self.name {
            Some(n) => n.clone(),
            None => default_name(&primary, mix.as_ref()),
        };
        if name.is_empty() || name.contains('/') || name.contains('\0') || name.starts_with('.') {
            return Err(PatternError::BadRunName { name });
        }
        let spec = PatternSpec {
            name,
            primary,
            mix,
            timing,
            target_offset_bytes,
            target_size_bytes,
            io_count: self.io_count.unwrap_or(DEFAULT_IO_COUNT),
            io_ignore: self.io_ignore.unwrap_or(0),
            parallel_degree: self.parallel.unwrap_or(1),
            queue_depth: self.queue_depth.unwrap_or(1),
            seed: self.seed.unwrap_or(DEFAULT_SEED),
            runtime_ns: match &self.runtime {
                Some(t) => Some(parse_runtime_ns(t).map_err(|source| PatternError::Unit {
                    field: Some("runtime"),
                    source,
                })?),
                None => None,
            },
            time_based: self.time_based.unwrap_or(false),
            rate_iops: self.rate_iops,
            io_size_split,
        };
        spec.validate()?;
        Ok(spec)
    }
}

fn default_name(primary: &Basic, mix: Option<&Mix>) -> String {
    let one = |b: &Basic| {
        b.baseline_name()
            .map(str::to_string)
            .unwrap_or_else(|| format!("{}-{}", b.location.short_name(), b.mode))
            .replace(['(', ')'], "")
            .replace(['/', ' '], "_")
    };
    match mix {
        None => one(primary),
        Some(m) => format!(
            "{}-{}-{}to{}",
            one(primary),
            one(&m.secondary),
            m.ratio_primary,
            m.ratio_secondary
        ),
    }
}
