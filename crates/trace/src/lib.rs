//! Block IO traces: reading the formats other tools write, and writing our own.
//!
//! A trace is a list of [`TraceIo`]: when the request arrived (ns, relative
//! to the trace's first request), where, how large, and what it did. Every
//! format has one module under [`formats`] with one function that parses a
//! whole text; [`Format::detect`] picks one from the first lines. Parsers
//! never panic on bad input: the first bad line is reported with its number
//! and what was expected.
//!
//! Formats:
//! - `flashlab`: ours (`# flashlab-trace v1`, then `time_ns op offset_bytes size_bytes`;
//!   a per-file (logical) trace adds `# file` declarations and a file column,
//!   read with [`parse_file_trace`]);
//! - `blkparse`: the default text output of blkparse (one action, `D` by default);
//! - `fio`: fio iolog version 2 (no times) and 3 (ms timestamps);
//! - `mqsim`: MQSim's ASCII traces (`ns dev sector sectors type`, type 0 = write);
//! - `disksim`: DiskSim ASCII (`ms dev block blocks flags`, flag bit 0 = read);
//! - `msr`: MSR-Cambridge CSV (Windows filetime, `Read`/`Write`, bytes).

#![forbid(unsafe_code)]

use std::fmt;
use std::io::{BufRead, BufReader, Read};
use std::path::Path;

use flashlab_device::Mode;

pub mod error;
pub mod formats;
#[doc(hidden)]
pub mod fuzz;

pub use error::TraceFileError;

/// One request of a trace. `Flush` requests carry no range.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TraceIo {
    /// Arrival time relative to the first request of the trace.
    pub time_ns: u64,
    pub op: TraceOp,
    pub offset_bytes: u64,
    pub size_bytes: u64,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TraceOp {
    Io(Mode),
    Flush,
}

impl TraceOp {
    pub fn letter(self) -> char {
        match self {
            TraceOp::Io(Mode::Read) => 'R',
            TraceOp::Io(Mode::Write) => 'W',
            TraceOp::Io(Mode::Trim) => 'T',
            TraceOp::Flush => 'F',
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Format {
    Flashlab,
    Blkparse,
    Fio,
    Mqsim,
    Disksim,
    Msr,
}

impl Format {
    pub const NAMES: &'static str = "flashlab, blkparse, fio, mqsim, disksim or msr";

    pub fn parse(name: &str) -> Result<Format, TraceFileError> {
        match name {
            "flashlab" => Ok(Format::Flashlab),
            "blkparse" => Ok(Format::Blkparse),
            "fio" | "iolog" => Ok(Format::Fio),
            "mqsim" => Ok(Format::Mqsim),
            "disksim" => Ok(Format::Disksim),
            "msr" => Ok(Format::Msr),
            other => Err(TraceFileError::UnknownFormat {
                name: other.to_string(),
            }),
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            Format::Flashlab => "flashlab",
            Format::Blkparse => "blkparse",
            Format::Fio => "fio",
            Format::Mqsim => "mqsim",
            Format::Disksim => "disksim",
            Format::Msr => "msr",
        }
    }

    /// Guesses the format from the text's first non-empty lines. MQSim and
    /// DiskSim lines look alike; an integer first column with a sector-sized
    /// fourth is MQSim (ns), a fractional first column is DiskSim (ms).
    pub fn detect(text: &str) -> Option<Format> {
        let first = text.lines().map(str::trim).find(|l| !l.is_empty())?;
        if first.starts_with("# flashlab-trace") {
            return Some(Format::Flashlab);
        }
        if first.starts_with("fio version") {
            return Some(Format::Fio);
        }
        let comma: Vec<&str> = first.split(',').collect();
        if comma.len() == 7
            && (comma[3].eq_ignore_ascii_case("read") || comma[3].eq_ignore_ascii_case("write"))
        {
            return Some(Format::Msr);
        }
        let cols: Vec<&str> = first.split_whitespace().collect();
        if cols.len() >= 8 && cols[0].contains(',') && cols[3].contains('.') {
            return Some(Format::Blkparse);
        }
        if cols.len() == 5 && cols.iter().all(|c| c.parse::<f64>().is_ok()) {
            return Some(if cols[0].contains('.') {
                Format::Disksim
            } else {
                Format::Mqsim
            });
        }
        None
    }
}

impl fmt::Display for Format {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// Parses a whole trace in `format`; times are made relative to the first
/// request and requests are sorted by time (stable, so equal times keep
/// file order).
pub fn parse(text: &str, format: Format, origin: &str) -> Result<Vec<TraceIo>, TraceFileError> {
    let mut ios = match format {
        Format::Flashlab => formats::flashlab::parse(text),
        Format::Blkparse => formats::blkparse::parse(text, 'D'),
        Format::Fio => formats::fio::parse(text),
        Format::Mqsim => formats::mqsim::parse(text),
        Format::Disksim => formats::disksim::parse(text),
        Format::Msr => formats::msr::parse(text),
    }
    .map_err(|(line, problem)| TraceFileError::Line {
        origin: origin.to_string(),
        line,
        problem,
    })?;
    if ios.is_empty() {
        return Err(TraceFileError::NoRequests {
            origin: origin.to_string(),
            format,
        });
    }
    ios.sort_by_key(|io| io.time_ns);
    let t0 = ios[0].time_ns;
    for io in &mut ios {
        io.time_ns -= t0;
    }
    Ok(ios)
}

/// The longest line any trace format has (MSR-Cambridge lines are about
/// 60 bytes): a longer "line" means the file is not a trace (`/dev/zero`,
/// a binary), and is refused before it can fill memory.
pub const MAX_LINE_BYTES: usize = 64 * 1024;

/// The largest trace text read: 4 GiB (about 100 million requests).
pub const MAX_TRACE_BYTES: u64 = 4 << 30;

/// The largest request a trace may hold: IOs are at most 4 GiB - 1 bytes
/// (records keep sizes in 32 bits); a larger size is refused, never truncated.
pub const MAX_REQUEST_BYTES: u64 = u32::MAX as u64;

/// Reads a trace file's text line by line, refusing (with one line naming
/// the problem) a file that is not text, has a line longer than
/// [`MAX_LINE_BYTES`] or is larger than [`MAX_TRACE_BYTES`], so that
/// `/dev/zero` or a disk image fails at once instead of growing memory.
pub fn read_text(path: &Path) -> Result<String, TraceFileError> {
    let shown = path.display().to_string();
    match std::fs::File::open(path) {
        Ok(file) => read_text_from(file, &shown),
        Err(source) => Err(TraceFileError::Open {
            path: shown,
            source,
        }),
    }
}

/// [`read_text`] from any reader; `origin` names it in errors.
pub fn read_text_from(reader: impl Read, origin: &str) -> Result<String, TraceFileError> {
    let origin = || origin.to_string();
    let mut reader = BufReader::with_capacity(1 << 16, reader);
    let mut text = String::new();
    let mut line = Vec::with_capacity(256);
    for n in 1usize.. {
        line.clear();
        let got = (&mut reader)
            .take(MAX_LINE_BYTES as u64 + 1)
            .read_until(b'\n', &mut line)
            .map_err(|source| TraceFileError::Read {
                origin: origin(),
                source,
            })?;
        if got == 0 {
            break;
        }
        if line.len() > MAX_LINE_BYTES {
            return Err(TraceFileError::LineTooLong {
                origin: origin(),
                line: n,
            });
        }
        if text.len() as u64 + line.len() as u64 > MAX_TRACE_BYTES {
            return Err(TraceFileError::TooLarge { origin: origin() });
        }
        match std::str::from_utf8(&line) {
            Ok(l) if !l.contains('\0') => text.push_str(l),
            _ => {
                return Err(TraceFileError::NotText {
                    origin: origin(),
                    line: n,
                })
            }
        }
    }
    Ok(text)
}

/// A parse error: 1-based line number and message.
pub type LineError = (usize, String);

/// Writes traces in flashlab's own format.
pub use formats::flashlab::TraceWriter;

/// Per-file (logical) traces: flashlab's format with a file column.
pub use formats::flashlab::{
    parse_file_trace, FileIo, FileKind, FileOp, FileTrace, FileTraceWriter, TraceFile,
};

/// What to do with requests that fall outside the device.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Fit {
    /// Refuse the trace.
    Error,
    /// Fold offsets modulo the device size.
    Wrap,
    /// Scale offsets so the trace's highest end maps to the device's end.
    Scale,
}

impl Fit {
    pub fn parse(text: &str) -> Result<Fit, TraceFileError> {
        match text {
            "error" => Ok(Fit::Error),
            "wrap" => Ok(Fit::Wrap),
            "scale" => Ok(Fit::Scale),
            other => Err(TraceFileError::UnknownFit {
                name: other.to_string(),
            }),
        }
    }
}

/// Makes every request fit a device of `device_bytes` with `block_bytes`
/// alignment, or explains why it cannot. Offsets stay aligned to
/// `block_bytes`; sizes must already be multiples of it.
pub fn fit_to_device(
    ios: &mut [TraceIo],
    device_bytes: u64,
    block_bytes: u64,
    fit: Fit,
) -> Result<(), TraceFileError> {
    let block = block_bytes.max(1);
    // Parsers refuse requests whose end does not fit in 64 bits; saturate
    // anyway so that a TraceIo built elsewhere cannot wrap around.
    let max_end = ios
        .iter()
        .map(|io| io.offset_bytes.saturating_add(io.size_bytes))
        .max()
        .unwrap_or(0);
    for (i, io) in ios.iter_mut().enumerate() {
        if io.op == TraceOp::Flush {
            continue;
        }
        if io.size_bytes == 0 || io.size_bytes % block != 0 {
            return Err(TraceFileError::UnalignedSize {
                request: i + 1,
                size_bytes: io.size_bytes,
                block_bytes: block,
            });
        }
        if io.size_bytes > device_bytes {
            return Err(TraceFileError::LargerThanDevice {
                request: i + 1,
                size_bytes: io.size_bytes,
            });
        }
        let end = io.offset_bytes.saturating_add(io.size_bytes);
        if end <= device_bytes && fit != Fit::Scale {
            if io.offset_bytes % block != 0 {
                return Err(TraceFileError::UnalignedOffset {
                    request: i + 1,
                    offset_bytes: io.offset_bytes,
                    block_bytes: block,
                });
            }
            continue;
        }
        let room = device_bytes - io.size_bytes;
        let offset = match fit {
            Fit::Error => {
                return Err(TraceFileError::PastDeviceEnd {
                    request: i + 1,
                    end_bytes: end,
                    device_bytes,
                })
            }
            Fit::Wrap => io.offset_bytes % device_bytes,
            Fit::Scale => {
                ((io.offset_bytes as u128 * device_bytes as u128) / max_end.max(1) as u128) as u64
            }
        };
        io.offset_bytes = (offset.min(room)) / block * block;
    }
    Ok(())
}
