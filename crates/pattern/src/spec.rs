//! Pattern specifications: what the user asked for, validated and resolved
//! against a device, in the vocabulary of uFLIP Table 1.

use std::fmt;

use flashlab_device::Mode;
use serde::{Deserialize, Serialize};

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
}

impl Location {
    /// Parses `sequential`, `random`, `ordered:INCR`, `partitioned:P`,
    /// `stride:GAP`, `skip-sequential:FRACTION`, `random-once`.
    pub fn parse(text: &str) -> Result<Location, String> {
        let t = text.trim();
        let (name, arg) = match t.split_once(':') {
            Some((n, a)) => (n.trim(), Some(a.trim())),
            None => (t, None),
        };
        let need = |what: &str, example: &str| {
            format!("location '{name}' needs {what}; write e.g. {example}")
        };
        let no_arg = |loc: Location| match arg {
            None => Ok(loc),
            Some(_) => Err(format!(
                "location '{name}' takes no argument; write just '{name}'"
            )),
        };
        match name {
            "sequential" | "seq" => no_arg(Location::Sequential),
            "random" | "rnd" => no_arg(Location::Random),
            "random-once" => no_arg(Location::RandomOnce),
            "ordered" | "order" => {
                let a = arg.ok_or_else(|| need("an Incr", "ordered:-1, ordered:0 or ordered:4"))?;
                let incr = a.parse::<i64>().map_err(|_| {
                    format!("Incr '{a}' is not a whole number; write e.g. ordered:-1")
                })?;
                Ok(Location::Ordered { incr })
            }
            "partitioned" | "partition" => {
                let a = arg.ok_or_else(|| need("a number of partitions", "partitioned:4"))?;
                let partitions = a.parse::<u64>().map_err(|_| {
                    format!("partitions '{a}' is not a whole number; write e.g. partitioned:4")
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
                let fraction = a.parse::<f64>().map_err(|_| {
                    format!("fraction '{a}' is not a number; write e.g. skip-sequential:0.1")
                })?;
                Ok(Location::SkipSequential { fraction })
            }
            other => Err(format!(
                "unknown location function '{other}'; use sequential, random, ordered:INCR, \
                 partitioned:P, stride:GAP, skip-sequential:FRACTION or random-once"
            )),
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
    pub fn parse(text: &str) -> Result<Timing, String> {
        let parts: Vec<&str> = text.trim().split(':').map(str::trim).collect();
        match parts.as_slice() {
            ["consecutive"] => Ok(Timing::Consecutive),
            ["pause", d] => Ok(Timing::Pause { pause_ns: parse_duration_ns(d)? }),
            ["burst", d, n] => {
                let burst = n.parse::<u64>().map_err(|_| {
                    format!("burst length '{n}' is not a whole number; write e.g. burst:100ms:10")
                })?;
                Ok(Timing::Burst { pause_ns: parse_duration_ns(d)?, burst })
            }
            ["pause"] => Err("time 'pause' needs a duration; write e.g. pause:1ms".into()),
            ["burst", ..] => Err("time 'burst' needs a pause and a count; write e.g. burst:100ms:10".into()),
            _ => Err(format!(
                "unknown time function '{text}'; use consecutive, pause:DURATION or burst:DURATION:COUNT"
            )),
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
        self.basics().map(|b| b.io_size_bytes).max().unwrap_or(0)
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
            Some(b) => format!("{b} {}", format_size(self.primary.io_size_bytes)),
            None => self.primary.describe(),
        };
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
        s
    }

    /// Checks the spec on its own (the device is checked by [`check_against_device`]).
    /// Every message names the parameter and how to fix it.
    pub fn validate(&self) -> Result<(), String> {
        if self.parallel_degree == 0 {
            return Err("ParallelDegree must be at least 1; pass --parallel 1 or more".into());
        }
        if self.queue_depth == 0 {
            return Err("queue depth must be at least 1; pass --queue-depth 1 or more".into());
        }
        if self.max_outstanding() > 4096 {
            return Err(format!(
                "ParallelDegree x queue depth = {} is more than 4096 outstanding IOs; lower --parallel or --queue-depth",
                self.max_outstanding()
            ));
        }
        if self.io_count == 0 {
            return Err("IOCount must be at least 1; pass --io-count N".into());
        }
        if self.io_ignore >= self.io_count {
            return Err(format!(
                "IOIgnore ({}) must be smaller than IOCount ({}); lower --io-ignore or raise --io-count",
                self.io_ignore, self.io_count
            ));
        }
        if !self.target_offset_bytes.is_multiple_of(SECTOR_BYTES) {
            return Err(format!(
                "TargetOffset {} is not a multiple of 512 B; use e.g. --target-offset {}",
                self.target_offset_bytes,
                format_size(self.target_offset_bytes / SECTOR_BYTES * SECTOR_BYTES)
            ));
        }
        if let Timing::Burst { burst: 0, .. } = self.timing {
            return Err(
                "a burst must hold at least one IO; write e.g. --time burst:100ms:10".into(),
            );
        }
        if let Some(m) = &self.mix {
            if m.ratio_primary == 0 || m.ratio_secondary == 0 {
                return Err("both sides of the mix Ratio must be at least 1; write e.g. --ratio 4 or --ratio 1:4".into());
            }
            // The generator cycles through ratio_primary + ratio_secondary
            // IOs: the sum must be a count, not wrap around.
            if m.ratio_primary.saturating_add(m.ratio_secondary) > MAX_RATIO_SUM {
                return Err(format!(
                    "mix Ratio {}:{} is too large (the two sides may add up to at most 2^32); write e.g. --ratio 4 or --ratio 1:4",
                    m.ratio_primary, m.ratio_secondary
                ));
            }
        }
        for (which, b) in self.basics().enumerate() {
            let who = if which == 0 { "" } else { "mixed pattern's " };
            if b.io_size_bytes == 0 || b.io_size_bytes % SECTOR_BYTES != 0 {
                return Err(format!(
                    "{who}IOSize {} B is not a positive multiple of 512 B; use e.g. --io-size 4KiB",
                    b.io_size_bytes
                ));
            }
            if b.io_size_bytes > u32::MAX as u64 {
                return Err(format!(
                    "{who}IOSize {} is larger than 4 GiB; use a smaller --io-size",
                    format_size(b.io_size_bytes)
                ));
            }
            if b.io_shift_bytes % SECTOR_BYTES != 0 {
                return Err(format!(
                    "{who}IOShift {} B is not a multiple of 512 B; use e.g. --io-shift 512",
                    b.io_shift_bytes
                ));
            }
            let (_, stream_size) = self.stream_target(0);
            let slots = crate::generate::slot_count(b, stream_size);
            if slots == 0 {
                let streams = if self.parallel_degree > 1 {
                    format!(
                        " (each of the {} streams gets {})",
                        self.parallel_degree,
                        format_size(stream_size)
                    )
                } else {
                    String::new()
                };
                return Err(format!(
                    "TargetSize {}{streams} cannot hold one {who}IO of IOSize {} with IOShift {}; raise --target-size or lower --io-size/--io-shift",
                    format_size(self.target_size_bytes),
                    format_size(b.io_size_bytes),
                    format_size(b.io_shift_bytes)
                ));
            }
            match b.location {
                Location::Partitioned { partitions } => {
                    if partitions == 0 {
                        return Err(
                            "the number of partitions must be at least 1; write e.g. partitioned:4"
                                .into(),
                        );
                    }
                    if slots / partitions == 0 {
                        return Err(format!(
                            "TargetSize {} split into {partitions} partitions leaves less than one IOSize ({}) per partition; use fewer partitions or a larger --target-size",
                            format_size(stream_size),
                            format_size(b.io_size_bytes)
                        ));
                    }
                }
                Location::Stride { gap_bytes } if gap_bytes % SECTOR_BYTES != 0 => {
                    return Err(format!(
                            "stride gap {gap_bytes} B is not a multiple of 512 B; write e.g. stride:4KiB"
                        ));
                }
                Location::SkipSequential { fraction } if !(fraction > 0.0 && fraction <= 1.0) => {
                    return Err(format!(
                            "skip-sequential fraction {fraction} is outside (0, 1]; write e.g. skip-sequential:0.1"
                        ));
                }
                _ => {}
            }
        }
        Ok(())
    }

    /// Checks the spec against a device's size and alignment.
    pub fn check_against_device(
        &self,
        device_name: &str,
        size_bytes: u64,
        logical_block_bytes: u64,
    ) -> Result<(), String> {
        let end = self.target_offset_bytes.checked_add(self.target_size_bytes);
        match end {
            Some(end) if end <= size_bytes => {}
            _ => {
                return Err(format!(
                    "the target [{}, {}) runs past the end of {device_name} ({} = {} B); lower --target-offset or --target-size",
                    self.target_offset_bytes,
                    self.target_offset_bytes as u128 + self.target_size_bytes as u128,
                    format_size(size_bytes),
                    size_bytes
                ))
            }
        }
        let lbs = logical_block_bytes.max(1);
        if !self.target_offset_bytes.is_multiple_of(lbs) {
            return Err(format!(
                "TargetOffset {} is not a multiple of {device_name}'s logical block size ({lbs} B) required by O_DIRECT; use a multiple of {lbs}",
                self.target_offset_bytes
            ));
        }
        let (_, share) = self.stream_target(0);
        if self.parallel_degree > 1 && share % lbs != 0 {
            return Err(format!(
                "each stream's share of TargetSize ({share} B) is not a multiple of the logical block size ({lbs} B); pick a --target-size divisible by {} ",
                lbs * self.parallel_degree
            ));
        }
        for b in self.basics() {
            if b.io_size_bytes % lbs != 0 {
                return Err(format!(
                    "IOSize {} B is not a multiple of {device_name}'s logical block size ({lbs} B) required by O_DIRECT; use --io-size {} or pass --buffered",
                    b.io_size_bytes,
                    format_size(b.io_size_bytes.div_ceil(lbs) * lbs)
                ));
            }
            if b.io_shift_bytes % lbs != 0 {
                return Err(format!(
                    "IOShift {} B is not a multiple of {device_name}'s logical block size ({lbs} B) required by O_DIRECT; use a multiple of {lbs} or pass --buffered",
                    b.io_shift_bytes
                ));
            }
            if let Location::Stride { gap_bytes } = b.location {
                if gap_bytes % lbs != 0 {
                    return Err(format!(
                        "stride gap {gap_bytes} B is not a multiple of {device_name}'s logical block size ({lbs} B); use a multiple of {lbs}"
                    ));
                }
            }
        }
        Ok(())
    }
}
