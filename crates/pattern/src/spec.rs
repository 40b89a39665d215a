//! Pattern specifications: what the user asked for, validated and resolved
//! against a device, in the vocabulary of uFLIP Table 1.

use std::fmt;

use flashlab_device::Mode;
use serde::{Deserialize, Serialize};

use crate::error::{DeviceAlignment, Param, PatternError, Side, ZeroFix};
use crate::units::{format_duration_ns, format_size, parse_duration_ns};

/// The smallest unit of IOSize, IOShift and TargetOffset (uFLIP: multiples of 512 B).
pub const SECTOR_BYTES: u64 = 512;

/// Where IO number `i` goes, relative to TargetOffset + IOShift.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "kebab-case")]
pub enum Location {
    /// `i x IOSize`, wrapping mod TargetSize.
    Sequential,
    /// Uniform over the TargetSize/IOSize slots.
    Random,
    /// `Incr x i x IOSize` (uFLIP Order): -1 reverse from the end, 0 in place,
    /// > 1 gaps; wrapping mod TargetSize, each new pass one slot further.
    Ordered { incr: i64 },
    /// uFLIP Partitioning: `P_i x PS + O_i`, P round-robin sequential streams.
    Partitioned { partitions: u64 },
    /// Sequential with `gap_bytes` skipped between IOs (Chen et al. "stride").
    Stride { gap_bytes: u64 },
    /// Ascending offsets with random skips: a sorted random subset of
    /// `fraction` of the slots (Hudlet & Schall "skip-sequential").
    SkipSequential { fraction: f64 },
    /// A seeded permutation: every slot exactly once (Hudlet & Schall).
    RandomOnce,
    /// Skewed: the slot of popularity rank k (from 1) drawn with probability
    /// proportional to k^-theta; ranks are scattered over the target by a
    /// seeded permutation, so the hot slots are not one contiguous region.
    Zipf { theta: f64 },
    /// Skewed, Gray et al.'s self-similar rule: a fraction 1-h of the IOs
    /// go to a fraction h of the slots, recursively (h = 0.2: 80/20);
    /// ranks scattered like `Zipf`.
    Pareto { h: f64 },
    /// Around the middle of the target, with a standard deviation of
    /// `sigma_percent` of the target (fio's normal:N); draws beyond either
    /// end wrap around.
    Normal { sigma_percent: f64 },
    /// fio's zoned distribution: `access_percent` of the IOs go, uniformly,
    /// to the next `size_percent` of the target, zone after zone from the
    /// start.
    Zoned { zones: Vec<Zone> },
}

/// One zone of [`Location::Zoned`].
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct Zone {
    pub access_percent: f64,
    pub size_percent: f64,
}

impl Location {
    /// Parses `sequential`, `random`, `ordered:INCR`, `partitioned:P`,
    /// `stride:GAP`, `skip-sequential:FRACTION`, `random-once`.
    pub fn parse(text: &str) -> Result<Location, PatternError> {
        let t = text.trim();
        let (name, arg) = match t.split_once(':') {
            Some((n, a)) => (n.trim(), Some(a.trim())),
            None => (t, None),
        };
        let need = |what: &'static str, example: &'static str| PatternError::MissingArgument {
            function: "location",
            name: name.to_string(),
            what,
            example,
        };
        let not_a_number =
            |what: &'static str, value: &str, kind: &'static str, example: &'static str| {
                PatternError::NotANumber {
                    what,
                    value: value.to_string(),
                    kind,
                    example,
                }
            };
        let no_arg = |loc: Location| match arg {
            None => Ok(loc),
            Some(_) => Err(PatternError::UnexpectedArgument {
                name: name.to_string(),
            }),
        };
        match name {
            "sequential" | "seq" => no_arg(Location::Sequential),
            "random" | "rnd" => no_arg(Location::Random),
            "random-once" => no_arg(Location::RandomOnce),
            "ordered" | "order" => {
                let a = arg.ok_or_else(|| need("an Incr", "ordered:-1, ordered:0 or ordered:4"))?;
                let incr = a
                    .parse::<i64>()
                    .map_err(|_| not_a_number("Incr", a, "a whole number", "ordered:-1"))?;
                Ok(Location::Ordered { incr })
            }
            "partitioned" | "partition" => {
                let a = arg.ok_or_else(|| need("a number of partitions", "partitioned:4"))?;
                let partitions = a.parse::<u64>().map_err(|_| {
                    not_a_number("partitions", a, "a whole number", "partitioned:4")
                })?;
                Ok(Location::Partitioned { partitions })
            }
            "stride" => {
                let a = arg.ok_or_else(|| need("a gap size", "stride:4KiB"))?;
                let gap_bytes = crate::units::parse_size(a)?;
                Ok(Location::Stride { gap_bytes })
            }
            "skip-sequential" | "skip-seq" => {
                let a = arg
                    .ok_or_else(|| need("the fraction of slots to visit", "skip-sequential:0.1"))?;
                let fraction = a
                    .parse::<f64>()
                    .map_err(|_| not_a_number("fraction", a, "a number", "skip-sequential:0.1"))?;
                Ok(Location::SkipSequential { fraction })
            }
            "zipf" => {
                let a = arg.ok_or_else(|| need("a theta", "zipf:1.2"))?;
                let theta = a
                    .parse::<f64>()
                    .map_err(|_| not_a_number("zipf theta", a, "a number", "zipf:1.2"))?;
                let loc = Location::Zipf { theta };
                loc.check_params()?;
                Ok(loc)
            }
            "pareto" => {
                let a = arg.ok_or_else(|| need("an h", "pareto:0.2"))?;
                let h = a
                    .parse::<f64>()
                    .map_err(|_| not_a_number("pareto h", a, "a number", "pareto:0.2"))?;
                let loc = Location::Pareto { h };
                loc.check_params()?;
                Ok(loc)
            }
            "normal" | "gauss" => {
                let a =
                    arg.ok_or_else(|| need("a deviation in percent of the target", "normal:10"))?;
                let sigma_percent = a
                    .parse::<f64>()
                    .map_err(|_| not_a_number("normal deviation", a, "a number", "normal:10"))?;
                let loc = Location::Normal { sigma_percent };
                loc.check_params()?;
                Ok(loc)
            }
            "zoned" => {
                let a =
                    arg.ok_or_else(|| need("ACCESS%/SIZE% zones", "zoned:60/10:30/20:10/70"))?;
                let mut zones = Vec::new();
                for z in a.split(':') {
                    let parsed = z.split_once('/').and_then(|(acc, size)| {
                        Some(Zone {
                            access_percent: acc.trim().parse().ok()?,
                            size_percent: size.trim().parse().ok()?,
                        })
                    });
                    zones.push(parsed.ok_or_else(|| {
                        not_a_number(
                            "zone",
                            z,
                            "ACCESS%/SIZE% (two numbers)",
                            "zoned:60/10:30/20:10/70",
                        )
                    })?);
                }
                let loc = Location::Zoned { zones };
                loc.check_params()?;
                Ok(loc)
            }
            other => Err(PatternError::UnknownLocation {
                name: other.to_string(),
            }),
        }
    }

    /// Checks a skewed distribution's parameters (the other functions are
    /// checked against the target by [`PatternSpec::validate`]).
    pub fn check_params(&self) -> Result<(), PatternError> {
        let bad = |problem: String| Err(PatternError::BadDistribution { problem });
        match self {
            Location::Zipf { theta } if !(theta.is_finite() && *theta > 0.0 && *theta <= 100.0) => {
                bad(format!("zipf theta {theta} is outside (0, 100]; write e.g. zipf:1.2"))
            }
            Location::Pareto { h } if !(*h > 0.0 && *h < 1.0) => {
                bad(format!("pareto h {h} is outside (0, 1); write e.g. pareto:0.2 (80 % of IOs on 20 % of the slots)"))
            }
            Location::Normal { sigma_percent }
                if !(sigma_percent.is_finite() && *sigma_percent > 0.0 && *sigma_percent <= 1000.0) =>
            {
                bad(format!("normal deviation {sigma_percent} % is outside (0, 1000]; write e.g. normal:10"))
            }
            Location::Zoned { zones } => {
                if zones.is_empty() || zones.len() > 256 {
                    return bad("zoned needs 1 to 256 zones; write e.g. zoned:60/10:30/20:10/70".into());
                }
                if zones.iter().any(|z| !(z.access_percent >= 0.0 && z.size_percent > 0.0)) {
                    return bad("a zone has a negative access share or an empty size; write e.g. zoned:60/10:30/20:10/70".into());
                }
                let access: f64 = zones.iter().map(|z| z.access_percent).sum();
                let size: f64 = zones.iter().map(|z| z.size_percent).sum();
                if (access - 100.0).abs() > 1e-6 || (size - 100.0).abs() > 1e-6 {
                    return bad(format!("zoned shares add up to {access} % of the IOs and {size} % of the target; both must be 100"));
                }
                Ok(())
            }
            _ => Ok(()),
        }
    }

    /// Whether IOs visit slots in ascending order without repeats inside a pass;
    /// used to describe patterns, not to generate them.
    pub fn short_name(&self) -> String {
        match self {
            Location::Sequential => "seq".into(),
            Location::Random => "rnd".into(),
            Location::Ordered { incr } => format!("ordered({incr})"),
            Location::Partitioned { partitions } => format!("partitioned({partitions})"),
            Location::Stride { gap_bytes } => format!("stride({})", format_size(*gap_bytes)),
            Location::SkipSequential { fraction } => format!("skip-seq({fraction})"),
            Location::RandomOnce => "random-once".into(),
            Location::Zipf { theta } => format!("zipf({theta})"),
            Location::Pareto { h } => format!("pareto({h})"),
            Location::Normal { sigma_percent } => format!("normal({sigma_percent})"),
            Location::Zoned { zones } => format!("zoned({})", zones.len()),
        }
    }
}

impl fmt::Display for Location {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Location::Sequential => f.write_str("sequential"),
            Location::Random => f.write_str("random"),
            Location::Ordered { incr } => write!(f, "ordered:{incr}"),
            Location::Partitioned { partitions } => write!(f, "partitioned:{partitions}"),
            Location::Stride { gap_bytes } => write!(f, "stride:{}", format_size(*gap_bytes)),
            Location::SkipSequential { fraction } => write!(f, "skip-sequential:{fraction}"),
            Location::RandomOnce => f.write_str("random-once"),
            Location::Zipf { theta } => write!(f, "zipf:{theta}"),
            Location::Pareto { h } => write!(f, "pareto:{h}"),
            Location::Normal { sigma_percent } => write!(f, "normal:{sigma_percent}"),
            Location::Zoned { zones } => {
                f.write_str("zoned:")?;
                for (i, z) in zones.iter().enumerate() {
                    if i > 0 {
                        f.write_str(":")?;
                    }
                    write!(f, "{}/{}", z.access_percent, z.size_percent)?;
                }
                Ok(())
            }
        }
    }
}

/// When IO number `i + 1` may be submitted (uFLIP's time functions).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "kebab-case")]
pub enum Timing {
    /// As soon as a queue slot is free.
    Consecutive,
    /// `pause_ns` after each completion.
    Pause { pause_ns: u64 },
    /// `pause_ns` after every `burst` completions.
    Burst { pause_ns: u64, burst: u64 },
}

impl Timing {
    /// Parses `consecutive`, `pause:DURATION`, `burst:DURATION:COUNT`.
    pub fn parse(text: &str) -> Result<Timing, PatternError> {
        let parts: Vec<&str> = text.trim().split(':').map(str::trim).collect();
        match parts.as_slice() {
            ["consecutive"] => Ok(Timing::Consecutive),
            ["pause", d] => Ok(Timing::Pause {
                pause_ns: parse_duration_ns(d)?,
            }),
            ["burst", d, n] => {
                let burst = n.parse::<u64>().map_err(|_| PatternError::NotANumber {
                    what: "burst length",
                    value: n.to_string(),
                    kind: "a whole number",
                    example: "burst:100ms:10",
                })?;
                Ok(Timing::Burst {
                    pause_ns: parse_duration_ns(d)?,
                    burst,
                })
            }
            ["pause"] => Err(PatternError::MissingArgument {
                function: "time",
                name: "pause".to_string(),
                what: "a duration",
                example: "pause:1ms",
            }),
            ["burst", ..] => Err(PatternError::MissingArgument {
                function: "time",
                name: "burst".to_string(),
                what: "a pause and a count",
                example: "burst:100ms:10",
            }),
            _ => Err(PatternError::UnknownTiming {
                text: text.to_string(),
            }),
        }
    }

    /// The pause owed after the IO with 0-based index `i` completes.
    pub fn pause_after(&self, i: u64) -> u64 {
        match *self {
            Timing::Consecutive => 0,
            Timing::Pause { pause_ns } => pause_ns,
            Timing::Burst { pause_ns, burst } => {
                if (i + 1).is_multiple_of(burst) {
                    pause_ns
                } else {
                    0
                }
            }
        }
    }
}

impl fmt::Display for Timing {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Timing::Consecutive => f.write_str("consecutive"),
            Timing::Pause { pause_ns } => write!(f, "pause:{}", format_duration_ns(*pause_ns)),
            Timing::Burst { pause_ns, burst } => {
                write!(f, "burst:{}:{burst}", format_duration_ns(*pause_ns))
            }
        }
    }
}

/// One basic pattern's space and mode: location function, IOSize, IOShift, mode.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Basic {
    pub location: Location,
    pub mode: Mode,
    pub io_size_bytes: u64,
    pub io_shift_bytes: u64,
}

impl Basic {
    /// uFLIP's name for the four baseline patterns, if this is one of them.
    pub fn baseline_name(&self) -> Option<&'static str> {
        match (&self.location, self.mode) {
            (Location::Sequential, Mode::Read) => Some("SR"),
            (Location::Random, Mode::Read) => Some("RR"),
            (Location::Sequential, Mode::Write) => Some("SW"),
            (Location::Random, Mode::Write) => Some("RW"),
            _ => None,
        }
    }

    pub fn describe(&self) -> String {
        let mut s = format!(
            "{} {} {}",
            self.location.short_name(),
            self.mode,
            format_size(self.io_size_bytes)
        );
        if self.io_shift_bytes != 0 {
            s += &format!(" shift {}", format_size(self.io_shift_bytes));
        }
        s
    }
}

/// The largest sum of a mix Ratio's two sides.
pub const MAX_RATIO_SUM: u64 = 1 << 32;

/// Two basic patterns interleaved: `ratio_primary` IOs of the primary pattern,
/// then `ratio_secondary` of this one, repeated (uFLIP Mix, Ratio = #1/#2).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Mix {
    pub secondary: Basic,
    pub ratio_primary: u64,
    pub ratio_secondary: u64,
    /// Each IO's side is drawn at random (the primary with probability
    /// `ratio_primary / (ratio_primary + ratio_secondary)`) from the
    /// stream's seed, instead of the fixed interleave: Chen et al. 5.6, "The
    /// type (read/write) of each request is randomly determined".
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub random_order: bool,
    /// Both sides take their offsets, in turn, from the primary's location
    /// function: one address stream whose IOs are of either side (Chen et
    /// al. 5.6: "a *sequential* workload using request size of 4KB"). The
    /// secondary's location is not used; both sides have the same IOSize.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub shared_location: bool,
}

/// A fully resolved, validated pattern: everything needed to generate its IOs.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct PatternSpec {
    pub name: String,
    pub primary: Basic,
    pub mix: Option<Mix>,
    pub timing: Timing,
    pub target_offset_bytes: u64,
    pub target_size_bytes: u64,
    /// IOs issued by each stream.
    pub io_count: u64,
    /// Leading IOs of each stream excluded from statistics (warm-up).
    pub io_ignore: u64,
    pub parallel_degree: u64,
    /// Outstanding IOs per stream.
    pub queue_depth: u64,
    pub seed: u64,
    /// fio's `runtime`: no IO is submitted once this much device time
    /// (simulated on the simulator, wall time on a real device) has passed
    /// since the run's first IO; IOs in flight then complete and are kept.
    /// Without `time_based` it only caps a run of IOCount IOs per stream.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub runtime_ns: Option<u64>,
    /// fio's `time_based`: the pattern goes on past IOCount (each location
    /// function continues: sequential wraps, random keeps drawing) until
    /// `runtime_ns`. Needs a runtime.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub time_based: bool,
    /// fio's `rate_iops`, per stream as fio's is per job: IO i of a stream
    /// is submitted no earlier than i / rate after the run's start (open
    /// loop: the schedule does not wait for completions, only for a free
    /// queue slot; a device that falls behind gets IOs as fast as it takes them).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rate_iops: Option<u64>,
    /// fio's `bssplit`: each IO's size drawn from these shares (by count,
    /// seeded); empty for one IOSize. The primary's IOSize is then the
    /// smallest, the grid every offset is aligned to, as fio aligns to its
    /// smallest block size. Sequential and random locations only, no mix.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub io_size_split: Vec<SizeShare>,
}

/// One size of [`PatternSpec::io_size_split`]: `percent` of the IOs are
/// `size_bytes` long.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct SizeShare {
    pub size_bytes: u64,
    pub percent: u64,
}

/// Parses fio's bssplit, `SIZE/PERCENT:SIZE/PERCENT:...`, with `size` reading
/// each size (flashlab's units on the command line, fio's in a job file).
/// A last entry without a percentage takes what the others leave, as in
/// fio; the percentages must add up to 100.
pub fn parse_bssplit(
    text: &str,
    size: impl Fn(&str) -> Result<u64, String>,
) -> Result<Vec<SizeShare>, String> {
    if text.contains(',') {
        return Err(
            "flashlab has one size split for reads and writes; give one SIZE/PERCENT:... list"
                .into(),
        );
    }
    let entries: Vec<&str> = text.split(':').map(str::trim).collect();
    let mut out = Vec::new();
    let mut sum = 0u64;
    for (i, e) in entries.iter().enumerate() {
        let (sz, pct) = match e.split_once('/') {
            Some((sz, pct)) => (sz, Some(pct)),
            None => (*e, None),
        };
        let size_bytes = size(sz)?;
        let percent = match pct {
            Some(p) => p
                .trim()
                .parse::<u64>()
                .ok()
                .filter(|p| *p <= 100)
                .ok_or_else(|| format!("'{p}' is not a whole percentage in {e}"))?,
            None if i + 1 == entries.len() => 100u64.saturating_sub(sum),
            None => return Err(format!("{e} has no percentage; write e.g. 4k/50:64k/50")),
        };
        sum += percent;
        out.push(SizeShare {
            size_bytes,
            percent,
        });
    }
    if sum != 100 {
        return Err(format!(
            "the percentages add up to {sum}, not 100; write e.g. 4k/50:64k/50"
        ));
    }
    out.retain(|s| s.percent > 0);
    Ok(out)
}

impl PatternSpec {
    /// The most IOs outstanding at once over all streams.
    pub fn max_outstanding(&self) -> usize {
        (self.parallel_degree * self.queue_depth) as usize
    }

    pub fn basics(&self) -> impl Iterator<Item = &Basic> {
        std::iter::once(&self.primary).chain(self.mix.as_ref().map(|m| &m.secondary))
    }

    pub fn writes(&self) -> bool {
        self.basics().any(|b| b.mode.modifies())
    }

    pub fn max_io_bytes(&self) -> u64 {
        let split = self.io_size_split.iter().map(|s| s.size_bytes);
        self.basics()
            .map(|b| b.io_size_bytes)
            .chain(split)
            .max()
            .unwrap_or(0)
    }

    /// Total IOs over all streams.
    pub fn total_ios(&self) -> u64 {
        self.io_count * self.parallel_degree
    }

    /// The target space of stream `p` (uFLIP Parallelism): `TargetOffset_p =
    /// TargetOffset + p x TargetSize/D`, `TargetSize_p = TargetSize/D`, with
    /// the share rounded down to a multiple of the largest IOSize so that each
    /// stream's IOs keep the alignment of the undivided pattern.
    pub fn stream_target(&self, stream: u64) -> (u64, u64) {
        let share = self.target_size_bytes / self.parallel_degree;
        let unit = self.max_io_bytes().max(SECTOR_BYTES);
        let share = share / unit * unit;
        (self.target_offset_bytes + stream * share, share)
    }

    /// A one-line human description, e.g. `RW 32KiB over 1GiB, 1024 IOs, QD1`.
    pub fn describe(&self) -> String {
        let mut s = match self.primary.baseline_name() {
            // A bssplit names its sizes below.
            Some(b) if !self.io_size_split.is_empty() => b.to_string(),
            Some(b) => format!("{b} {}", format_size(self.primary.io_size_bytes)),
            None => self.primary.describe(),
        };
        if !self.io_size_split.is_empty() {
            let split: Vec<String> = self
                .io_size_split
                .iter()
                .map(|x| format!("{}/{}", format_size(x.size_bytes), x.percent))
                .collect();
            s += &format!(" (bssplit {})", split.join(":"));
        }
        if self.primary.io_shift_bytes != 0 && self.primary.baseline_name().is_some() {
            s += &format!(" shift {}", format_size(self.primary.io_shift_bytes));
        }
        if let Some(m) = &self.mix {
            let other = m
                .secondary
                .baseline_name()
                .map(str::to_string)
                .unwrap_or_else(|| m.secondary.describe());
            s += &format!(
                " mixed {}:{} with {other}",
                m.ratio_primary, m.ratio_secondary
            );
        }
        s += &format!(
            " in [{}, +{})",
            format_size(self.target_offset_bytes),
            format_size(self.target_size_bytes)
        );
        if self.timing != Timing::Consecutive {
            s += &format!(", {}", self.timing);
        }
        if self.parallel_degree > 1 {
            s += &format!(", {} streams", self.parallel_degree);
        }
        s += &format!(", QD{}", self.queue_depth);
        if let Some(rate) = self.rate_iops {
            s += &format!(", {rate} IOPS/stream");
        }
        s
    }

    /// How much IO a run does: `1024 IOs/stream`, `1024 IOs/stream or 2s,
    /// whichever first`, or `2s, time-based`.
    pub fn amount(&self) -> String {
        match (self.runtime_ns, self.time_based) {
            (Some(r), true) => format!("{}, time-based", format_duration_ns(r)),
            (Some(r), false) => format!(
                "{} IOs/stream or {}, whichever first",
                self.io_count,
                format_duration_ns(r)
            ),
            (None, _) => format!("{} IOs/stream", self.io_count),
        }
    }

    /// Checks the spec on its own (the device is checked by [`check_against_device`]).
    /// Every message names the parameter and how to fix it.
    pub fn validate(&self) -> Result<(), PatternError> {
        if self.parallel_degree == 0 {
            return Err(PatternError::Zero {
                what: "ParallelDegree",
                fix: ZeroFix::AtLeastOne(Param::Parallel),
            });
        }
        if self.queue_depth == 0 {
            return Err(PatternError::Zero {
                what: "queue depth",
                fix: ZeroFix::AtLeastOne(Param::QueueDepth),
            });
        }
        if self.max_outstanding() > 4096 {
            return Err(PatternError::TooManyOutstanding {
                outstanding: self.max_outstanding(),
            });
        }
        if self.io_count == 0 {
            return Err(PatternError::Zero {
                what: "IOCount",
                fix: ZeroFix::IoCount,
            });
        }
        if self.io_ignore >= self.io_count {
            return Err(PatternError::IgnoresEverything {
                io_ignore: self.io_ignore,
                io_count: self.io_count,
            });
        }
        if self.runtime_ns == Some(0) {
            return Err(PatternError::Zero {
                what: "runtime",
                fix: ZeroFix::Runtime,
            });
        }
        if self.time_based && self.runtime_ns.is_none() {
            return Err(PatternError::TimeBasedWithoutRuntime);
        }
        if self.rate_iops == Some(0) {
            return Err(PatternError::Zero {
                what: "rate_iops",
                fix: ZeroFix::RateIops,
            });
        }
        self.validate_split()?;
        if !self.target_offset_bytes.is_multiple_of(SECTOR_BYTES) {
            return Err(PatternError::UnalignedTargetOffset {
                target_offset_bytes: self.target_offset_bytes,
            });
        }
        if let Timing::Burst { burst: 0, .. } = self.timing {
            return Err(PatternError::EmptyBurst);
        }
        if let Some(m) = &self.mix {
            if m.ratio_primary == 0 || m.ratio_secondary == 0 {
                return Err(PatternError::Zero {
                    what: "both sides of the mix Ratio",
                    fix: ZeroFix::Ratio,
                });
            }
            // The generator cycles through ratio_primary + ratio_secondary
            // IOs: the sum must be a count, not wrap around.
            if m.shared_location && m.secondary.io_size_bytes != self.primary.io_size_bytes {
                return Err(PatternError::SharedLocationSizes {
                    primary: self.primary.io_size_bytes,
                    secondary: m.secondary.io_size_bytes,
                });
            }
            if m.ratio_primary.saturating_add(m.ratio_secondary) > MAX_RATIO_SUM {
                return Err(PatternError::RatioTooLarge {
                    primary: m.ratio_primary,
                    secondary: m.ratio_secondary,
                });
            }
        }
        for (which, b) in self.basics().enumerate() {
            let side = if which == 0 {
                Side::Primary
            } else {
                Side::Mixed
            };
            if b.io_size_bytes == 0 || b.io_size_bytes % SECTOR_BYTES != 0 {
                return Err(PatternError::UnalignedIoSize {
                    side,
                    io_size_bytes: b.io_size_bytes,
                });
            }
            if b.io_size_bytes > u32::MAX as u64 {
                return Err(PatternError::IoSizeTooLarge {
                    side,
                    io_size_bytes: b.io_size_bytes,
                });
            }
            if b.io_shift_bytes % SECTOR_BYTES != 0 {
                return Err(PatternError::UnalignedIoShift {
                    side,
                    io_shift_bytes: b.io_shift_bytes,
                });
            }
            let (_, stream_size) = self.stream_target(0);
            let slots = crate::generate::slot_count(b, stream_size);
            if slots == 0 {
                return Err(PatternError::TargetTooSmall {
                    side,
                    target_size_bytes: self.target_size_bytes,
                    parallel_degree: self.parallel_degree,
                    stream_bytes: stream_size,
                    io_size_bytes: b.io_size_bytes,
                    io_shift_bytes: b.io_shift_bytes,
                });
            }
            match &b.location {
                &Location::Partitioned { partitions } => {
                    if partitions == 0 {
                        return Err(PatternError::Zero {
                            what: "the number of partitions",
                            fix: ZeroFix::Partitions,
                        });
                    }
                    if slots / partitions == 0 {
                        return Err(PatternError::PartitionsTooSmall {
                            stream_bytes: stream_size,
                            partitions,
                            io_size_bytes: b.io_size_bytes,
                        });
                    }
                }
                &Location::Stride { gap_bytes } if gap_bytes % SECTOR_BYTES != 0 => {
                    return Err(PatternError::UnalignedStride { gap_bytes });
                }
                Location::SkipSequential { fraction } if !(*fraction > 0.0 && *fraction <= 1.0) => {
                    return Err(PatternError::FractionOutOfRange {
                        fraction: *fraction,
                    });
                }
                other => other.check_params()?,
            }
        }
        Ok(())
    }

    /// Checks a bssplit: sector-sized sizes, the smallest as the primary's
    /// IOSize, no mix, a sequential or random location, the largest fitting
    /// each stream's target.
    fn validate_split(&self) -> Result<(), PatternError> {
        if self.io_size_split.is_empty() {
            return Ok(());
        }
        let bad = |problem: String| Err(PatternError::BadSizeSplit { problem });
        if self.mix.is_some() {
            return bad(
                "a bssplit cannot be mixed with a second pattern; drop --mix or --bssplit".into(),
            );
        }
        if !matches!(
            self.primary.location,
            Location::Sequential | Location::Random
        ) {
            return bad(format!(
                "a bssplit works with sequential and random locations, not {}",
                self.primary.location
            ));
        }
        if self.primary.io_shift_bytes != 0 {
            return bad("a bssplit cannot be shifted; drop --io-shift".into());
        }
        for x in &self.io_size_split {
            if x.size_bytes == 0
                || x.size_bytes % SECTOR_BYTES != 0
                || x.size_bytes > u32::MAX as u64
            {
                return bad(format!(
                    "size {} B is not a multiple of 512 B up to 4 GiB",
                    x.size_bytes
                ));
            }
        }
        let min = self.io_size_split.iter().map(|x| x.size_bytes).min();
        if min != Some(self.primary.io_size_bytes) {
            return bad("the IOSize of a bssplit is its smallest size; drop --io-size".into());
        }
        let (_, share) = self.stream_target(0);
        if self.max_io_bytes() > share {
            return bad(format!(
                "its largest size, {}, does not fit a stream's target of {}",
                format_size(self.max_io_bytes()),
                format_size(share)
            ));
        }
        Ok(())
    }

    /// Checks the spec against a device's size and alignment.
    pub fn check_against_device(
        &self,
        device_name: &str,
        size_bytes: u64,
        logical_block_bytes: u64,
    ) -> Result<(), PatternError> {
        let end = self.target_offset_bytes.checked_add(self.target_size_bytes);
        match end {
            Some(end) if end <= size_bytes => {}
            _ => {
                return Err(PatternError::PastDeviceEnd {
                    device: device_name.to_string(),
                    target_offset_bytes: self.target_offset_bytes,
                    target_size_bytes: self.target_size_bytes,
                    device_bytes: size_bytes,
                })
            }
        }
        let lbs = logical_block_bytes.max(1);
        let unaligned = |what: DeviceAlignment, value_bytes: u64| PatternError::UnalignedToDevice {
            what,
            device: device_name.to_string(),
            value_bytes,
            logical_block_bytes: lbs,
        };
        if !self.target_offset_bytes.is_multiple_of(lbs) {
            return Err(unaligned(
                DeviceAlignment::TargetOffset,
                self.target_offset_bytes,
            ));
        }
        let (_, share) = self.stream_target(0);
        if self.parallel_degree > 1 && share % lbs != 0 {
            return Err(PatternError::UnalignedStreamShare {
                share_bytes: share,
                logical_block_bytes: lbs,
                parallel_degree: self.parallel_degree,
            });
        }
        for b in self.basics() {
            if b.io_size_bytes % lbs != 0 {
                return Err(unaligned(DeviceAlignment::IoSize, b.io_size_bytes));
            }
            if b.io_shift_bytes % lbs != 0 {
                return Err(unaligned(DeviceAlignment::IoShift, b.io_shift_bytes));
            }
            if let Some(x) = self.io_size_split.iter().find(|x| x.size_bytes % lbs != 0) {
                return Err(unaligned(DeviceAlignment::IoSize, x.size_bytes));
            }
            if let Location::Stride { gap_bytes } = b.location {
                if gap_bytes % lbs != 0 {
                    return Err(unaligned(DeviceAlignment::StrideGap, gap_bytes));
                }
            }
        }
        Ok(())
    }
}
