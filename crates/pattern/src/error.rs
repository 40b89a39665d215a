//! The pattern crate's errors: what a size, a duration, a parameter or a
//! pattern file got wrong.
//!
//! Every `Display` is one line naming the problem and the flag (or the way of
//! writing the value) that fixes it; the CLI prints them as they are and its
//! tests compare the wording. Variants carry the values, so a caller can
//! match on the problem instead of parsing a message.

use std::fmt;

use crate::units::format_size;

/// A size or a duration as text that cannot be read. `text` is the user's
/// text as messages quote it (at most 40 characters, see
/// [`crate::units::quote`]).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum UnitError {
    /// No number where a size was expected.
    NotASize { text: String },
    /// A size unit that is none of B, KiB, ... TB.
    UnknownSizeUnit { text: String, unit: String },
    /// A decimal size that is not a whole number of bytes.
    FractionalBytes { text: String },
    /// A size past 2^64 - 1 bytes.
    SizeTooLarge { text: String },
    /// A duration without a unit ("pause 100" is too easy to get wrong by 1000x).
    MissingTimeUnit { text: String },
    /// A time unit that is none of ns, us, ms, s.
    UnknownTimeUnit { text: String, unit: String },
    /// No number where a duration was expected.
    NotADuration { text: String },
    /// A duration that is negative or past 2^64 - 1 ns.
    DurationOutOfRange { text: String },
}

impl fmt::Display for UnitError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            UnitError::NotASize { text } => {
                write!(f, "'{text}' is not a size; write e.g. 4096, 32KiB or 1GiB")
            }
            UnitError::UnknownSizeUnit { text, unit } => write!(
                f,
                "'{text}' has an unknown size unit '{unit}'; use B, KiB, MiB, GiB, TiB, PiB (powers of 1024) or KB, MB, GB, TB, PB (powers of 1000)"
            ),
            UnitError::FractionalBytes { text } => {
                write!(f, "'{text}' is not a whole number of bytes")
            }
            UnitError::SizeTooLarge { text } => write!(f, "'{text}' is too large"),
            UnitError::MissingTimeUnit { text } => {
                write!(f, "'{text}' needs a time unit; write e.g. 100us, 1ms or 2s")
            }
            UnitError::UnknownTimeUnit { text, unit } => write!(
                f,
                "'{text}' has an unknown time unit '{unit}'; use ns, us, ms or s"
            ),
            UnitError::NotADuration { text } => write!(
                f,
                "'{text}' is not a duration; write e.g. 100us, 1ms or 2s"
            ),
            UnitError::DurationOutOfRange { text } => write!(f, "'{text}' is out of range"),
        }
    }
}

impl std::error::Error for UnitError {}

/// Which pattern of a mix a check is about: the main one, or the one mixed in.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Side {
    Primary,
    Mixed,
}

/// Why pattern parameters (flags, a TOML table) or a pattern file cannot be
/// used, or a pattern does not fit its device.
#[derive(Clone, Debug, PartialEq)]
pub enum PatternError {
    /// A size or duration that cannot be read, with the parameter it was
    /// given for when that is not evident (`io_size: ...`).
    Unit {
        field: Option<&'static str>,
        source: UnitError,
    },
    /// A mix ratio that is neither N nor A:B.
    Ratio { text: String },
    /// A baseline pattern that is none of SR, RR, SW, RW.
    UnknownBaseline { name: String },
    /// A mode that is none of read, write, trim.
    UnknownMode { mode: String },
    /// A pattern next to a location or a mode it would override.
    PatternAndLocationOrMode {
        side: Side,
        pattern: String,
        other: &'static str,
    },
    /// A location or time function given without its argument.
    MissingArgument {
        function: &'static str,
        name: String,
        what: &'static str,
        example: &'static str,
    },
    /// A location function that takes no argument was given one.
    UnexpectedArgument { name: String },
    /// A function's argument that is not the number it must be.
    NotANumber {
        what: &'static str,
        value: String,
        kind: &'static str,
        example: &'static str,
    },
    /// A location function we do not know.
    UnknownLocation { name: String },
    /// A time function we do not know.
    UnknownTiming { text: String },
    /// `--ratio` without `--mix`.
    RatioWithoutMix,
    /// A run name that cannot name a results directory.
    BadRunName { name: String },
    /// The default TargetSize would be empty: the offset is past the device.
    TargetOffsetPastEnd {
        target_offset_bytes: u64,
        device_bytes: u64,
    },
    /// TargetSize 0.
    EmptyTarget,
    /// A count that must be at least 1 is 0; `fix` names the parameter.
    Zero { what: &'static str, fix: ZeroFix },
    /// `burst:D:0`.
    EmptyBurst,
    /// fio's time_based without a runtime (fio would run until killed).
    TimeBasedWithoutRuntime,
    /// A bssplit that cannot be run.
    BadSizeSplit { problem: String },
    /// More than 4096 outstanding IOs.
    TooManyOutstanding { outstanding: usize },
    /// IOIgnore would ignore every IO.
    IgnoresEverything { io_ignore: u64, io_count: u64 },
    /// TargetOffset not on a sector boundary.
    UnalignedTargetOffset { target_offset_bytes: u64 },
    /// The two sides of a ratio add up past 2^32.
    RatioTooLarge { primary: u64, secondary: u64 },
    /// A mix sharing one location function has sides of different IOSizes.
    SharedLocationSizes { primary: u64, secondary: u64 },
    /// IOSize 0 or not a multiple of 512 B.
    UnalignedIoSize { side: Side, io_size_bytes: u64 },
    /// IOSize above 4 GiB.
    IoSizeTooLarge { side: Side, io_size_bytes: u64 },
    /// IOShift not a multiple of 512 B.
    UnalignedIoShift { side: Side, io_shift_bytes: u64 },
    /// The target (or each stream's share of it) holds no IO.
    TargetTooSmall {
        side: Side,
        target_size_bytes: u64,
        parallel_degree: u64,
        stream_bytes: u64,
        io_size_bytes: u64,
        io_shift_bytes: u64,
    },
    /// Partitions that would each be smaller than one IO.
    PartitionsTooSmall {
        stream_bytes: u64,
        partitions: u64,
        io_size_bytes: u64,
    },
    /// A stride gap not a multiple of 512 B.
    UnalignedStride { gap_bytes: u64 },
    /// A skip-sequential fraction outside (0, 1].
    FractionOutOfRange { fraction: f64 },
    /// A skewed location function's parameters that do not describe a
    /// distribution (zipf, pareto, normal, zoned); `problem` says which and
    /// gives an example.
    BadDistribution { problem: String },
    /// The target runs past the end of the device.
    PastDeviceEnd {
        device: String,
        target_offset_bytes: u64,
        target_size_bytes: u64,
        device_bytes: u64,
    },
    /// A value that O_DIRECT needs aligned to the device's logical block.
    UnalignedToDevice {
        what: DeviceAlignment,
        device: String,
        value_bytes: u64,
        logical_block_bytes: u64,
    },
    /// Each stream's share of TargetSize is not a multiple of the logical block.
    UnalignedStreamShare {
        share_bytes: u64,
        logical_block_bytes: u64,
        parallel_degree: u64,
    },
    /// A pattern file that is not valid TOML for pattern parameters.
    FileSyntax {
        origin: String,
        line: Option<usize>,
        message: String,
    },
    /// A pattern file with a key we do not know, and the closest known one.
    UnknownKey {
        origin: String,
        line: Option<usize>,
        key: String,
        suggestion: Option<&'static str>,
    },
    /// A pattern file without a `[[run]]` table.
    NoRuns { origin: String },
}

/// What [`PatternError::UnalignedToDevice`] is about.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DeviceAlignment {
    TargetOffset,
    IoSize,
    IoShift,
    StrideGap,
}

impl Side {
    /// How messages name the pattern whose parameter is wrong.
    fn who(self) -> &'static str {
        match self {
            Side::Primary => "",
            Side::Mixed => "mixed pattern's ",
        }
    }
}

fn line_suffix(line: &Option<usize>) -> String {
    line.map(|l| format!(" line {l}")).unwrap_or_default()
}

/// How the user wrote a pattern's parameters: decides how a message names
/// one and writes its fix (issue 34: each front end says a field the way
/// its user wrote it).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Spelling {
    /// Command-line flags: `--io-size 4KiB`.
    Flags,
    /// A pattern file's or a grid's `[[run]]` table: `io_size = "4KiB"`.
    Toml,
    /// Python's `pattern={..., "io_size": "4KiB"}`.
    Dict,
}

/// A pattern parameter that a message names.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Param {
    IoSize,
    IoShift,
    IoCount,
    IoIgnore,
    Parallel,
    QueueDepth,
    TargetOffset,
    TargetSize,
    Location,
    Mode,
    Mix,
    Ratio,
    Time,
    Runtime,
    RateIops,
}

impl Param {
    /// The `[[run]]` key (and Python's dict key).
    pub fn key(self) -> &'static str {
        match self {
            Param::IoSize => "io_size",
            Param::IoShift => "io_shift",
            Param::IoCount => "io_count",
            Param::IoIgnore => "io_ignore",
            Param::Parallel => "parallel",
            Param::QueueDepth => "queue_depth",
            Param::TargetOffset => "target_offset",
            Param::TargetSize => "target_size",
            Param::Location => "location",
            Param::Mode => "mode",
            Param::Mix => "mix",
            Param::Ratio => "ratio",
            Param::Time => "time",
            Param::Runtime => "runtime",
            Param::RateIops => "rate_iops",
        }
    }

    /// The command-line flag.
    pub fn flag(self) -> &'static str {
        match self {
            Param::IoSize => "--io-size",
            Param::IoShift => "--io-shift",
            Param::IoCount => "--io-count",
            Param::IoIgnore => "--io-ignore",
            Param::Parallel => "--parallel",
            Param::QueueDepth => "--queue-depth",
            Param::TargetOffset => "--target-offset",
            Param::TargetSize => "--target-size",
            Param::Location => "--location",
            Param::Mode => "--mode",
            Param::Mix => "--mix",
            Param::Ratio => "--ratio",
            Param::Time => "--time",
            Param::Runtime => "--runtime",
            Param::RateIops => "--rate_iops",
        }
    }

    /// Whether a file or a dict writes its value as text (in quotes).
    fn text(self) -> bool {
        !matches!(
            self,
            Param::IoCount
                | Param::IoIgnore
                | Param::Parallel
                | Param::QueueDepth
                | Param::RateIops
        )
    }

    /// The parameter as `s` names it.
    pub fn name(self, s: Spelling) -> String {
        match s {
            Spelling::Flags => self.flag().to_string(),
            Spelling::Toml => self.key().to_string(),
            Spelling::Dict => format!("pattern[\"{}\"]", self.key()),
        }
    }

    /// The parameter set to `value`, as `s` writes it.
    pub fn set(self, s: Spelling, value: &str) -> String {
        let q = if self.text() && value.parse::<f64>().is_err() {
            "\""
        } else {
            ""
        };
        match s {
            Spelling::Flags => format!("{} {value}", self.flag()),
            Spelling::Toml => format!("{} = {q}{value}{q}", self.key()),
            Spelling::Dict => format!("pattern={{..., \"{}\": {q}{value}{q}}}", self.key()),
        }
    }
}

/// How to fix a count of 0 ([`PatternError::Zero`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ZeroFix {
    /// Pass the parameter 1 or more.
    AtLeastOne(Param),
    /// `--io-count N`.
    IoCount,
    /// `--runtime 10s`.
    Runtime,
    /// `--rate_iops 1000`, or none.
    RateIops,
    /// `--ratio 4` or `--ratio 1:4`.
    Ratio,
    /// `partitioned:4` (inside a location function: spelled the same everywhere).
    Partitions,
}

fn ratio_examples(s: Spelling) -> String {
    format!(
        "{} or {}",
        Param::Ratio.set(s, "4"),
        Param::Ratio.set(s, "1:4")
    )
}

impl fmt::Display for PatternError {
    /// The message as the command line's flags name the parameters; other
    /// front ends call [`PatternError::render`].
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.render(Spelling::Flags))
    }
}

impl PatternError {
    /// Long: one message per error variant.
    /// One line naming the problem and its fix, the parameters spelled as
    /// `s` writes them.
    pub fn render(&self, s: Spelling) -> String {
        let p = |param: Param| param.name(s);
        let set = |param: Param, value: &str| param.set(s, value);
        match self {
            PatternError::Unit {
                field: Some(field),
                source,
            } => format!("{field}: {source}"),
            PatternError::Unit {
                field: None,
                source,
            } => source.to_string(),
            PatternError::Ratio { text } => format!(
                "Ratio '{text}' is not N or A:B; write e.g. {}",
                ratio_examples(s)
            ),
            PatternError::UnknownBaseline { name } => format!(
                "unknown baseline pattern '{name}'; use SR, RR, SW or RW (or {} and {})",
                p(Param::Location),
                p(Param::Mode)
            ),
            PatternError::UnknownMode { mode } => {
                format!("unknown mode '{mode}'; use read, write or trim")
            }
            PatternError::PatternAndLocationOrMode {
                side,
                pattern,
                other,
            } => {
                let who = match side {
                    Side::Primary => "",
                    Side::Mixed => "mixed ",
                };
                format!(
                    "{who}pattern '{pattern}' already sets the location and mode; drop the {other}, or replace the pattern with location and mode"
                )
            }
            PatternError::MissingArgument {
                function,
                name,
                what,
                example,
            } => format!("{function} '{name}' needs {what}; write e.g. {example}"),
            PatternError::UnexpectedArgument { name } => {
                format!("location '{name}' takes no argument; write just '{name}'")
            }
            PatternError::NotANumber {
                what,
                value,
                kind,
                example,
            } => format!("{what} '{value}' is not {kind}; write e.g. {example}"),
            PatternError::UnknownLocation { name } => format!(
                "unknown location function '{name}'; use sequential, random, ordered:INCR, \
                 partitioned:P, stride:GAP, skip-sequential:FRACTION or random-once"
            ),
            PatternError::UnknownTiming { text } => format!(
                "unknown time function '{text}'; use consecutive, pause:DURATION or burst:DURATION:COUNT"
            ),
            PatternError::RatioWithoutMix => format!(
                "{} needs a second pattern to mix with; add {}",
                p(Param::Ratio),
                set(Param::Mix, "SR|RR|SW|RW")
            ),
            PatternError::BadRunName { name } => format!(
                "run name '{name}' cannot name a directory; use letters, digits, '-' and '_'"
            ),
            PatternError::TargetOffsetPastEnd {
                target_offset_bytes,
                device_bytes,
            } => format!(
                "TargetOffset {} is at or past the end of the device ({}); lower {}",
                format_size(*target_offset_bytes),
                format_size(*device_bytes),
                p(Param::TargetOffset)
            ),
            PatternError::EmptyTarget => format!(
                "TargetSize must be larger than 0; pass e.g. {}",
                set(Param::TargetSize, "1GiB")
            ),
            PatternError::Zero { what, fix } => {
                let fix = match fix {
                    ZeroFix::AtLeastOne(param) => format!("pass {} or more", set(*param, "1")),
                    ZeroFix::IoCount => format!("pass {}", set(Param::IoCount, "N")),
                    ZeroFix::Runtime => format!(
                        "pass e.g. {} (a bare number is seconds, as in fio)",
                        set(Param::Runtime, "10s")
                    ),
                    ZeroFix::RateIops => format!(
                        "pass e.g. {} (IOs per second per stream), or drop it",
                        set(Param::RateIops, "1000")
                    ),
                    ZeroFix::Ratio => format!("write e.g. {}", ratio_examples(s)),
                    ZeroFix::Partitions => "write e.g. partitioned:4".to_string(),
                };
                format!("{what} must be at least 1; {fix}")
            }
            PatternError::BadSizeSplit { problem } => format!("bssplit: {problem}"),
            PatternError::TimeBasedWithoutRuntime => format!(
                "time_based repeats the pattern until the runtime, but no runtime was given; add {} (e.g. {})",
                set(Param::Runtime, "DURATION"),
                set(Param::Runtime, "30s")
            ),
            PatternError::EmptyBurst => format!(
                "a burst must hold at least one IO; write e.g. {}",
                set(Param::Time, "burst:100ms:10")
            ),
            PatternError::TooManyOutstanding { outstanding } => format!(
                "ParallelDegree x queue depth = {outstanding} is more than 4096 outstanding IOs; lower {} or {}",
                p(Param::Parallel),
                p(Param::QueueDepth)
            ),
            PatternError::IgnoresEverything {
                io_ignore,
                io_count,
            } => format!(
                "IOIgnore ({io_ignore}) must be smaller than IOCount ({io_count}); lower {} or raise {}",
                p(Param::IoIgnore),
                p(Param::IoCount)
            ),
            PatternError::UnalignedTargetOffset {
                target_offset_bytes,
            } => format!(
                "TargetOffset {target_offset_bytes} is not a multiple of 512 B; use e.g. {}",
                set(
                    Param::TargetOffset,
                    &format_size(target_offset_bytes / 512 * 512)
                )
            ),
            PatternError::SharedLocationSizes { primary, secondary } => format!(
                "a mix with one shared location needs one IOSize on both sides (got {primary} and {secondary} bytes); give both sides the same io_size"
            ),
            PatternError::RatioTooLarge { primary, secondary } => format!(
                "mix Ratio {primary}:{secondary} is too large (the two sides may add up to at most 2^32); write e.g. {}",
                ratio_examples(s)
            ),
            PatternError::UnalignedIoSize {
                side,
                io_size_bytes,
            } => format!(
                "{}IOSize {io_size_bytes} B is not a positive multiple of 512 B; use e.g. {}",
                side.who(),
                set(Param::IoSize, "4KiB")
            ),
            PatternError::IoSizeTooLarge {
                side,
                io_size_bytes,
            } => format!(
                "{}IOSize {} is larger than 4 GiB; use a smaller {}",
                side.who(),
                format_size(*io_size_bytes),
                p(Param::IoSize)
            ),
            PatternError::UnalignedIoShift {
                side,
                io_shift_bytes,
            } => format!(
                "{}IOShift {io_shift_bytes} B is not a multiple of 512 B; use e.g. {}",
                side.who(),
                set(Param::IoShift, "512")
            ),
            PatternError::TargetTooSmall {
                side,
                target_size_bytes,
                parallel_degree,
                stream_bytes,
                io_size_bytes,
                io_shift_bytes,
            } => {
                let streams = if *parallel_degree > 1 {
                    format!(
                        " (each of the {parallel_degree} streams gets {})",
                        format_size(*stream_bytes)
                    )
                } else {
                    String::new()
                };
                let lower = match s {
                    Spelling::Flags => "--io-size/--io-shift".to_string(),
                    _ => format!("{} or {}", p(Param::IoSize), p(Param::IoShift)),
                };
                format!(
                    "TargetSize {}{streams} cannot hold one {}IO of IOSize {} with IOShift {}; raise {} or lower {lower}",
                    format_size(*target_size_bytes),
                    side.who(),
                    format_size(*io_size_bytes),
                    format_size(*io_shift_bytes),
                    p(Param::TargetSize)
                )
            }
            PatternError::PartitionsTooSmall {
                stream_bytes,
                partitions,
                io_size_bytes,
            } => format!(
                "TargetSize {} split into {partitions} partitions leaves less than one IOSize ({}) per partition; use fewer partitions or a larger {}",
                format_size(*stream_bytes),
                format_size(*io_size_bytes),
                p(Param::TargetSize)
            ),
            PatternError::UnalignedStride { gap_bytes } => format!(
                "stride gap {gap_bytes} B is not a multiple of 512 B; write e.g. stride:4KiB"
            ),
            PatternError::BadDistribution { problem } => problem.clone(),
            PatternError::FractionOutOfRange { fraction } => format!(
                "skip-sequential fraction {fraction} is outside (0, 1]; write e.g. skip-sequential:0.1"
            ),
            PatternError::PastDeviceEnd {
                device,
                target_offset_bytes,
                target_size_bytes,
                device_bytes,
            } => format!(
                "the target [{target_offset_bytes}, {}) runs past the end of {device} ({} = {device_bytes} B); lower {} or {}",
                *target_offset_bytes as u128 + *target_size_bytes as u128,
                format_size(*device_bytes),
                p(Param::TargetOffset),
                p(Param::TargetSize)
            ),
            PatternError::UnalignedToDevice {
                what,
                device,
                value_bytes,
                logical_block_bytes: lbs,
            } => match what {
                DeviceAlignment::TargetOffset => format!(
                    "TargetOffset {value_bytes} is not a multiple of {device}'s logical block size ({lbs} B) required by O_DIRECT; use a multiple of {lbs}"
                ),
                DeviceAlignment::IoSize => {
                    let size = format_size(value_bytes.div_ceil(*lbs) * lbs);
                    let use_ = match s {
                        Spelling::Flags => format!("--io-size {size}"),
                        _ => set(Param::IoSize, &size),
                    };
                    format!(
                        "IOSize {value_bytes} B is not a multiple of {device}'s logical block size ({lbs} B) required by O_DIRECT; use {use_} or pass --buffered"
                    )
                }
                DeviceAlignment::IoShift => format!(
                    "IOShift {value_bytes} B is not a multiple of {device}'s logical block size ({lbs} B) required by O_DIRECT; use a multiple of {lbs} or pass --buffered"
                ),
                DeviceAlignment::StrideGap => format!(
                    "stride gap {value_bytes} B is not a multiple of {device}'s logical block size ({lbs} B); use a multiple of {lbs}"
                ),
            },
            PatternError::UnalignedStreamShare {
                share_bytes,
                logical_block_bytes: lbs,
                parallel_degree,
            } => format!(
                "each stream's share of TargetSize ({share_bytes} B) is not a multiple of the logical block size ({lbs} B); pick a {} divisible by {} ",
                p(Param::TargetSize),
                lbs * parallel_degree
            ),
            PatternError::FileSyntax {
                origin,
                line,
                message,
            } => format!("{origin}{}: {message}", line_suffix(line)),
            PatternError::UnknownKey {
                origin,
                line,
                key,
                suggestion,
            } => {
                let hint = match suggestion {
                    Some(best) => format!("did you mean `{best}`?"),
                    None => format!("known keys are {}", crate::args::FIELD_NAMES.join(", ")),
                };
                format!("{origin}{}: unknown key `{key}`; {hint}", line_suffix(line))
            }
            PatternError::NoRuns { origin } => format!(
                "{origin} has no [[run]] table; add one per run, e.g. [[run]] followed by pattern = \"RW\""
            ),
        }
    }
}

impl std::error::Error for PatternError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            PatternError::Unit { source, .. } => Some(source),
            _ => None,
        }
    }
}

impl From<UnitError> for PatternError {
    fn from(source: UnitError) -> PatternError {
        PatternError::Unit {
            field: None,
            source,
        }
    }
}

// Callers that still compose their own message lines (the sweep's per-point
// checks, the simulator's profile parser) take the one-line text with `?`.
impl From<PatternError> for String {
    fn from(e: PatternError) -> String {
        e.to_string()
    }
}

impl From<UnitError> for String {
    fn from(e: UnitError) -> String {
        e.to_string()
    }
}
