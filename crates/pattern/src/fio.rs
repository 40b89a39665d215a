//! fio's vocabulary: its `rw` names, its sizes and its job files, turned into
//! flashlab's parameters where the meaning is the same, and refused with the
//! option's name (and flashlab's nearest equivalent) where it is not.
//!
//! Written from fio's documented semantics (its HOWTO), not its code:
//!
//! - sizes in a job file are read as fio reads them: with the default
//!   `kb_base=1024`, `4k`, `4K`, `4KB` and `4KiB` are all 4096 bytes;
//!   `kb_base=1000` makes `KB` 1000 and keeps `KiB` 1024. flashlab's own
//!   flags keep flashlab's units (`KB` = 1000, `units.rs`);
//! - each job section (with `[global]` applied first) is one flashlab run;
//!   fio runs jobs concurrently unless `stonewall` separates them, flashlab
//!   one after another, so a job file of several jobs measures each alone;
//! - a job does `size` bytes of IO (`io_size`/`number_ios` change that) on
//!   `size` bytes from `offset`; `numjobs=N` is N flashlab streams, each on
//!   its own slice of `size` (fio clones the job over the whole region;
//!   for random access the two are alike, for sequential they differ).

use std::fmt;

use crate::args::{PatternArgs, SizeValue};

/// Why a fio option or job file cannot be run as flashlab runs.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum FioError {
    /// An option flashlab has no equivalent for; `hint` names the nearest
    /// flashlab parameter, if any.
    Unsupported {
        option: String,
        hint: Option<&'static str>,
    },
    /// A value fio would accept that flashlab cannot express, or a bad value.
    BadValue {
        option: String,
        value: String,
        why: String,
    },
    /// A line of a job file that is neither a section, an option nor a comment.
    Syntax { line: usize, text: String },
    /// A job file without a job section.
    NoJobs,
}

impl fmt::Display for FioError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            FioError::Unsupported { option, hint: Some(h) } => {
                write!(f, "fio option '{option}' is not supported by flashlab; {h}")
            }
            FioError::Unsupported { option, hint: None } => write!(
                f,
                "fio option '{option}' has no flashlab equivalent; remove it from the job (docs/fio.md lists what is supported)"
            ),
            FioError::BadValue { option, value, why } => {
                write!(f, "fio option {option}={value}: {why}")
            }
            FioError::Syntax { line, text } => write!(
                f,
                "fio job file line {line}: '{text}' is not [section], option=value, option or a comment"
            ),
            FioError::NoJobs => f.write_str(
                "the fio job file has no job section; add one, e.g. [job1] after [global]",
            ),
        }
    }
}

impl std::error::Error for FioError {}

/// fio options with a flashlab equivalent under another name, and fio
/// options flashlab cannot honour, with what to use instead. Shared by the
/// command line (an unknown `--option`) and job files.
pub const HINTS: &[(&str, &str)] = &[
    ("ioengine", "use --engine io_uring|sync (job files: ioengine=io_uring, libaio, psync, sync)"),
    ("direct", "flashlab uses O_DIRECT by default; --buffered goes through the page cache"),
    ("filename", "use --device PATH"),
    ("rwmixread", "mix with --pattern RR --mix RW --ratio 70:30 (an interleave, not fio's random order)"),
    ("rwmixwrite", "mix with --pattern RR --mix RW --ratio 30:70 (an interleave, not fio's random order)"),
    ("loops", "use --io-count (IOs per stream) to run longer"),
    ("io_size", "use --io-count (IOs per stream)"),
    ("number_ios", "use --io-count (IOs per stream)"),
    ("ramp_time", "use --io-ignore N: the first N IOs of each stream are left out of the statistics"),
    ("thinktime", "use --time pause:DURATION (after each IO) or --time burst:DURATION:COUNT"),
    ("randseed", "use --seed"),
    ("randrepeat", "flashlab's random choices are always repeatable from --seed"),
    ("blockalign", "flashlab aligns every IO to its IOSize; --io-shift misaligns by a fixed amount"),
    ("zonemode", "flashlab has no zoned-device mode"),
    ("zoned_abs", "use --location zoned:ACCESS%/SIZE%:... (shares of the target in percent)"),
    ("rate", "flashlab paces IOs per second, not bytes: use --rate_iops N (bytes/s divided by the block size)"),
    ("rate_process", "flashlab's --rate_iops is fio's default, rate_process=linear"),
    ("bsrange", "flashlab draws sizes from a list, not a range: --bssplit 4k/50:64k/50"),
    ("verify", "flashlab measures, it does not verify data"),
    ("fsync", "flashlab issues no fsync; results of a file target are as durable as the page cache"),
    ("output-format", "use --json"),
];

/// Options that only shape fio's own reporting or bookkeeping: a job file
/// may keep them; they change nothing flashlab measures.
const REPORTING_ONLY: &[&str] = &[
    "thread",
    "group_reporting",
    "norandommap",
    "lat_percentiles",
    "clat_percentiles",
    "slat_percentiles",
    "percentile_list",
    "write_lat_log",
    "write_bw_log",
    "write_iops_log",
    "log_avg_msec",
    "stonewall",
    "wait_for_previous",
    "description",
    "new_group",
    "invalidate",
];

/// The hint for an unsupported fio option, if it is one we know.
pub fn hint(option: &str) -> Option<&'static str> {
    let o = option.trim_start_matches('-');
    HINTS.iter().find(|(n, _)| *n == o).map(|(_, h)| *h)
}

/// A fio `rw` value as a flashlab location and mode: `read`, `write`,
/// `randread`, `randwrite`, `trim`, `randtrim`. Mixed reads and writes
/// (`rw`, `readwrite`, `randrw`) are refused: flashlab's mix interleaves
/// by Ratio, it does not draw each IO's direction as fio does.
pub fn rw(value: &str) -> Result<(&'static str, &'static str), FioError> {
    // fio allows a ":N" suffix (an offset modifier); flashlab has none.
    let bad = |why: &str| FioError::BadValue {
        option: "rw".into(),
        value: value.to_string(),
        why: why.to_string(),
    };
    match value.trim() {
        "read" => Ok(("sequential", "read")),
        "write" => Ok(("sequential", "write")),
        "randread" => Ok(("random", "read")),
        "randwrite" => Ok(("random", "write")),
        "trim" => Ok(("sequential", "trim")),
        "randtrim" => Ok(("random", "trim")),
        "rw" | "readwrite" | "randrw" => Err(bad(
            "flashlab does not draw each IO's direction at random; mix two patterns instead: --pattern RR --mix RW --ratio 1:1",
        )),
        "trimwrite" | "randtrimwrite" => Err(bad("flashlab has no trim-then-write pattern")),
        _ => Err(bad(
            "expected read, write, randread, randwrite, trim or randtrim",
        )),
    }
}

/// A fio `random_distribution` value as a flashlab location function:
/// `random`, `zipf:T`, `pareto:H`, `normal:S` (fio's `gauss` too) and
/// `zoned:A/S:...`. fio's default theta and h when none is given.
pub fn random_distribution(value: &str) -> Result<String, FioError> {
    let v = value.trim();
    let (name, arg) = match v.split_once(':') {
        Some((n, a)) => (n, Some(a)),
        None => (v, None),
    };
    let out = match (name, arg) {
        ("random", None) => "random".to_string(),
        ("zipf", a) => format!("zipf:{}", a.unwrap_or("1.1")),
        ("pareto", a) => format!("pareto:{}", a.unwrap_or("0.2")),
        ("normal" | "gauss", Some(a)) => format!("normal:{a}"),
        ("zoned", Some(a)) => format!("zoned:{a}"),
        ("zoned_abs", _) => {
            return Err(FioError::Unsupported {
                option: "random_distribution=zoned_abs".into(),
                hint: hint("zoned_abs"),
            })
        }
        _ => {
            return Err(FioError::BadValue {
                option: "random_distribution".into(),
                value: value.to_string(),
                why: "expected random, zipf:THETA, pareto:H, normal:SIGMA% or zoned:A/S:...".into(),
            })
        }
    };
    // A bad parameter is caught here, with the option's name on it.
    crate::spec::Location::parse(&out).map_err(|e| FioError::BadValue {
        option: "random_distribution".into(),
        value: value.to_string(),
        why: e.to_string(),
    })?;
    Ok(out)
}

/// Why a fio size ([`parse_size`]) cannot be read; each holds the text as
/// written.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum FioSizeError {
    /// No whole number where a size was expected (`50%`, `x`).
    NotASize(String),
    /// A unit that is none of fio's (k, m, g, t, p).
    UnknownUnit(String),
    /// More bytes than a u64 holds.
    TooLarge(String),
}

impl std::fmt::Display for FioSizeError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            FioSizeError::NotASize(text) => {
                write!(f, "'{text}' is not a size (e.g. 4k, 1g, 4096)")
            }
            FioSizeError::UnknownUnit(text) => {
                write!(f, "'{text}' has an unknown unit (fio's are k, m, g, t, p)")
            }
            FioSizeError::TooLarge(text) => write!(f, "'{text}' is too large"),
        }
    }
}

impl std::error::Error for FioSizeError {}

/// Reads a size as fio does: a number with an optional unit `k`, `m`, `g`,
/// `t`, `p` (any case, optionally followed by `b` or `ib`); with
/// `kb_base=1024` every unit is a power of 1024, with 1000 `KB`-style units
/// are powers of 1000 and `KiB`-style ones of 1024. A percentage (`50%`)
/// is refused: flashlab needs bytes.
pub fn parse_size(text: &str, kb_base: u64) -> Result<u64, FioSizeError> {
    let t = text.trim();
    let split = t.find(|c: char| !c.is_ascii_digit()).unwrap_or(t.len());
    let (num, unit) = t.split_at(split);
    let n: u64 = num
        .parse()
        .map_err(|_| FioSizeError::NotASize(text.to_string()))?;
    let unit = unit.to_ascii_lowercase();
    let (power, suffix) = match unit.chars().next() {
        None => return Ok(n),
        Some('k') => (1, &unit[1..]),
        Some('m') => (2, &unit[1..]),
        Some('g') => (3, &unit[1..]),
        Some('t') => (4, &unit[1..]),
        Some('p') => (5, &unit[1..]),
        Some('b') if unit == "b" => return Ok(n),
        _ => return Err(FioSizeError::UnknownUnit(text.to_string())),
    };
    let base = match suffix {
        "" | "b" => kb_base,
        "ib" => 1024,
        _ => return Err(FioSizeError::UnknownUnit(text.to_string())),
    };
    n.checked_mul(base.pow(power))
        .ok_or_else(|| FioSizeError::TooLarge(text.to_string()))
}

/// One fio job as flashlab runs: the pattern and the target settings.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct FioJob {
    pub args: PatternArgs,
    /// `filename`: the target (a file or block device), if the job names one.
    pub filename: Option<String>,
    /// `ioengine` mapped to flashlab's engine name (`io_uring` or `sync`).
    pub engine: Option<&'static str>,
    /// `direct=0`: through the page cache.
    pub buffered: bool,
    /// Notes on meanings that differ (printed before the runs).
    pub notes: Vec<String>,
}

/// Parses a fio job file: `[global]` options apply to every job section
/// after it; each job section is one [`FioJob`] named after its section.
pub fn parse_job_file(text: &str) -> Result<Vec<FioJob>, FioError> {
    let mut global: Vec<(String, String)> = Vec::new();
    let mut jobs: Vec<(String, Vec<(String, String)>)> = Vec::new();
    let mut in_global = false;
    for (i, raw) in text.lines().enumerate() {
        let line = raw.trim();
        if line.is_empty() || line.starts_with('#') || line.starts_with(';') {
            continue;
        }
        if let Some(name) = line.strip_prefix('[').and_then(|l| l.strip_suffix(']')) {
            let name = name.trim();
            in_global = name == "global";
            if !in_global {
                jobs.push((name.to_string(), Vec::new()));
            }
            continue;
        }
        let (k, v) = match line.split_once('=') {
            Some((k, v)) => (k.trim(), v.trim()),
            None => (line, ""),
        };
        if k.is_empty() || k.contains(char::is_whitespace) {
            return Err(FioError::Syntax {
                line: i + 1,
                text: raw.to_string(),
            });
        }
        let entry = (k.to_string(), v.to_string());
        match jobs.last_mut() {
            Some((_, opts)) if !in_global => opts.push(entry),
            _ => global.push(entry),
        }
    }
    if jobs.is_empty() {
        return Err(FioError::NoJobs);
    }
    jobs.into_iter()
        .map(|(name, opts)| {
            let all: Vec<(String, String)> = global.iter().cloned().chain(opts).collect();
            job(&name, &all)
        })
        .collect()
}

/// Long: one arm per fio option the job reader understands.
fn job(name: &str, opts: &[(String, String)]) -> Result<FioJob, FioError> {
    // kb_base first: it changes how every size of the job reads.
    let kb_base = match opts.iter().rev().find(|(k, _)| k == "kb_base") {
        None => 1024,
        Some((_, v)) if v == "1024" => 1024,
        Some((_, v)) if v == "1000" => 1000,
        Some((_, v)) => {
            return Err(FioError::BadValue {
                option: "kb_base".into(),
                value: v.clone(),
                why: "must be 1024 or 1000".into(),
            })
        }
    };
    let bad = |k: &str, v: &str, why: String| FioError::BadValue {
        option: k.to_string(),
        value: v.to_string(),
        why,
    };
    let size = |k: &str, v: &str| parse_size(v, kb_base).map_err(|why| bad(k, v, why.to_string()));
    let count = |k: &str, v: &str| {
        v.parse::<u64>()
            .map_err(|_| bad(k, v, "expected a whole number".into()))
    };
    let mut out = FioJob {
        args: PatternArgs {
            name: Some(name.to_string()),
            location: Some("sequential".into()),
            mode: Some("read".into()),
            ..PatternArgs::default()
        },
        ..FioJob::default()
    };
    let mut random = false;
    let mut distribution: Option<String> = None;
    let mut bssplit: Option<Vec<crate::spec::SizeShare>> = None;
    let (mut bs, mut size_bytes, mut io_bytes, mut number_ios, mut numjobs) =
        (4096u64, None, None, None, 1u64);
    for (k, v) in opts {
        let (k, v) = (k.as_str(), v.as_str());
        match k {
            "kb_base" | "name" => {}
            "rw" | "readwrite" => {
                let (loc, mode) = rw(v)?;
                random = loc == "random";
                out.args.location = Some(loc.into());
                out.args.mode = Some(mode.into());
            }
            "bs" | "blocksize" => {
                if v.contains(',') {
                    return Err(bad(k, v, "flashlab has one IOSize for reads and writes; give one size".into()));
                }
                bs = size(k, v)?;
                if bs == 0 {
                    return Err(bad(k, v, "a block size must be at least one sector, e.g. bs=4k".into()));
                }
            }
            "bssplit" => {
                let split = crate::spec::parse_bssplit(v, |t| {
                    parse_size(t, kb_base).map_err(|e| e.to_string())
                })
                    .map_err(|why| bad(k, v, why))?;
                bssplit = Some(split);
            }
            "size" => size_bytes = Some(size(k, v)?),
            "offset" => out.args.target_offset = Some(SizeValue::Bytes(size(k, v)?)),
            "io_size" | "io_limit" => io_bytes = Some(size(k, v)?),
            "number_ios" => number_ios = Some(count(k, v)?),
            "iodepth" => out.args.queue_depth = Some(count(k, v)?),
            "numjobs" => numjobs = count(k, v)?.max(1),
            "randseed" => out.args.seed = Some(count(k, v)?),
            "random_distribution" => distribution = Some(random_distribution(v)?),
            "filename" => {
                if v.contains(':') {
                    return Err(bad(k, v, "flashlab runs one target per job; give one file".into()));
                }
                out.filename = Some(v.to_string());
            }
            "ioengine" => {
                out.engine = Some(match v {
                    "io_uring" => "io_uring",
                    "libaio" => {
                        out.notes.push(format!("{name}: ioengine=libaio runs on io_uring, flashlab's asynchronous engine"));
                        "io_uring"
                    }
                    "psync" | "sync" | "pvsync" | "pvsync2" => "sync",
                    other => {
                        return Err(bad(k, other, "flashlab's engines are io_uring (for io_uring, libaio) and sync (for psync, sync, pvsync)".into()))
                    }
                })
            }
            "direct" => out.buffered = v == "0",
            "buffered" => out.buffered = v != "0",
            // fio's runtime: a bare number is seconds.
            "runtime" | "timeout" => {
                crate::units::parse_runtime_ns(v).map_err(|e| bad(k, v, e.to_string()))?;
                out.args.runtime = Some(v.to_string());
            }
            // A bare `time_based` sets it, as in fio.
            "time_based" => out.args.time_based = Some(v != "0"),
            "rate_iops" => {
                // fio's `reads,writes[,trims]`: one rate for every direction only.
                let mut rates = v.split(',').filter(|r| !r.is_empty());
                let first = rates.next().unwrap_or("");
                if rates.any(|r| r != first) {
                    return Err(bad(k, v, "flashlab paces every direction at one rate; give one number".into()));
                }
                out.args.rate_iops = Some(count(k, first)?);
            }
            _ if REPORTING_ONLY.contains(&k) => {}
            _ => {
                return Err(FioError::Unsupported {
                    option: k.to_string(),
                    hint: hint(k),
                })
            }
        }
    }
    if let Some(d) = distribution {
        if random {
            out.args.location = Some(d);
        }
    }
    // A bssplit sets every IO's size; `size` bytes of IO is then the IO
    // count at the split's mean size.
    if let Some(split) = &bssplit {
        let text: Vec<String> = split
            .iter()
            .map(|x| format!("{}/{}", x.size_bytes, x.percent))
            .collect();
        out.args.bssplit = Some(text.join(":"));
        // u128: a job file's sizes can be anything up to u64::MAX (the
        // fuzz corpus test found the overflow); the planner then refuses
        // an IO larger than the device.
        let mean = split
            .iter()
            .map(|x| x.size_bytes as u128 * x.percent as u128)
            .sum::<u128>()
            / 100;
        bs = u64::try_from(mean).unwrap_or(u64::MAX).max(1);
    } else {
        out.args.io_size = Some(SizeValue::Bytes(bs));
    }
    if let Some(s) = size_bytes {
        out.args.target_size = Some(SizeValue::Bytes(s));
    }
    if numjobs > 1 {
        out.args.parallel = Some(numjobs);
        out.notes.push(format!(
            "{name}: numjobs={numjobs} runs {numjobs} streams, each on its own slice of size (fio's jobs each cover all of it)"
        ));
    }
    // IOs per stream: number_ios, or io_size (default: size) over the block
    // size, split between the streams as their slices are.
    out.args.io_count = match (number_ios, io_bytes.or(size_bytes)) {
        (Some(n), _) => Some(n),
        (None, Some(bytes)) => Some((bytes / bs / numjobs).max(1)),
        (None, None) => None,
    };
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_zero_block_size_is_refused_not_divided_by() {
        let err = parse_job_file("[j]\nrw=read\nbs=0\nsize=1m\n").unwrap_err();
        assert!(err.to_string().contains("bs=0"), "{err}");
    }

    #[test]
    fn sizes_read_as_fio_reads_them() {
        assert_eq!(parse_size("4k", 1024), Ok(4096));
        assert_eq!(parse_size("4KB", 1024), Ok(4096));
        assert_eq!(parse_size("4KiB", 1024), Ok(4096));
        assert_eq!(parse_size("1g", 1024), Ok(1 << 30));
        assert_eq!(parse_size("4KB", 1000), Ok(4000));
        assert_eq!(parse_size("4KiB", 1000), Ok(4096));
        assert_eq!(parse_size("512", 1024), Ok(512));
        assert!(parse_size("50%", 1024).is_err());
    }

    /// A size fio's way cannot be read: a typed error per cause, each
    /// saying the text as written.
    #[test]
    fn unreadable_sizes_are_typed_errors_that_quote_the_text() {
        let cases = [
            (
                "50%",
                FioSizeError::UnknownUnit("50%".into()),
                "'50%' has an unknown unit (fio's are k, m, g, t, p)",
            ),
            (
                "4kx",
                FioSizeError::UnknownUnit("4kx".into()),
                "'4kx' has an unknown unit (fio's are k, m, g, t, p)",
            ),
            (
                "k",
                FioSizeError::NotASize("k".into()),
                "'k' is not a size (e.g. 4k, 1g, 4096)",
            ),
            (
                "99999p",
                FioSizeError::TooLarge("99999p".into()),
                "'99999p' is too large",
            ),
        ];
        for (text, error, message) in cases {
            let got = parse_size(text, 1024).unwrap_err();
            assert_eq!(got, error, "{text}");
            assert_eq!(got.to_string(), message, "{text}");
        }
    }

    const JOB: &str = "
; a team's random-read job
[global]
ioengine=libaio
direct=1
bs=4k
size=64m
group_reporting

[randread-qd8]
rw=randread
iodepth=8
random_distribution=zipf:1.2

[seqwrite]
rw=write
bs=128KB
";

    #[test]
    fn a_job_file_becomes_one_run_per_job_with_the_global_options() {
        let jobs = parse_job_file(JOB).unwrap();
        assert_eq!(jobs.len(), 2);
        let a = &jobs[0].args;
        assert_eq!(a.name.as_deref(), Some("randread-qd8"));
        assert_eq!(a.location.as_deref(), Some("zipf:1.2"));
        assert_eq!(a.mode.as_deref(), Some("read"));
        assert_eq!(a.queue_depth, Some(8));
        assert_eq!(a.io_size, Some(SizeValue::Bytes(4096)));
        assert_eq!(a.target_size, Some(SizeValue::Bytes(64 << 20)));
        // one pass of size over bs, as fio does
        assert_eq!(a.io_count, Some((64 << 20) / 4096));
        assert_eq!(jobs[0].engine, Some("io_uring"));
        let b = &jobs[1].args;
        assert_eq!(b.location.as_deref(), Some("sequential"));
        assert_eq!(b.mode.as_deref(), Some("write"));
        // 128KB is 128 KiB in a job file (kb_base=1024)
        assert_eq!(b.io_size, Some(SizeValue::Bytes(128 << 10)));
        assert_eq!(b.io_count, Some(512));
    }

    #[test]
    fn what_flashlab_cannot_express_is_refused_naming_the_option() {
        let e = parse_job_file("[j]\nrw=randread\nrate=500k\n").unwrap_err();
        assert!(
            e.to_string()
                .starts_with("fio option 'rate' is not supported")
                && e.to_string().contains("--rate_iops"),
            "{e}"
        );
        let e = parse_job_file("[j]\nrw=randrw\n").unwrap_err();
        assert!(e.to_string().contains("rw=randrw"), "{e}");
        assert!(e.to_string().contains("--mix"), "{e}");
        let e = parse_job_file("[j]\nexec_prerun=ls\n").unwrap_err();
        assert!(
            e.to_string()
                .contains("'exec_prerun' has no flashlab equivalent"),
            "{e}"
        );
        let e = parse_job_file("[global]\nbs=4k\n").unwrap_err();
        assert_eq!(e, FioError::NoJobs);
    }

    #[test]
    fn a_bssplit_reads_its_sizes_as_fio_does_and_sets_the_io_count_by_its_mean() {
        let jobs = parse_job_file("[j]\nrw=randread\nsize=1m\nbssplit=4k/50:60k\n").unwrap();
        let a = &jobs[0].args;
        assert_eq!(a.bssplit.as_deref(), Some("4096/50:61440/50"));
        assert_eq!(a.io_size, None);
        // 1 MiB at a mean of 32 KiB
        assert_eq!(a.io_count, Some(32));
        let e = parse_job_file("[j]\nbssplit=4k/30:64k/30\n").unwrap_err();
        assert!(e.to_string().contains("add up to 60, not 100"), "{e}");
        let e = parse_job_file("[j]\nbssplit=4k/50:64k/50,8k\n").unwrap_err();
        assert!(e.to_string().contains("one size split"), "{e}");
    }

    #[test]
    fn a_distribution_applies_to_random_jobs_only() {
        let jobs = parse_job_file("[j]\nrw=read\nrandom_distribution=pareto:0.3\n").unwrap();
        assert_eq!(jobs[0].args.location.as_deref(), Some("sequential"));
        assert!(random_distribution("zipf:0").is_err());
        assert_eq!(random_distribution("zipf").unwrap(), "zipf:1.1");
    }
}
