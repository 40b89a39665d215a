//! What can go wrong reading a trace or fitting it onto a device.
//!
//! Every `Display` is one line naming the problem and, where the user can
//! act, the flag or the file that fixes it; `flashlab replay` prints them as
//! they are and its tests compare the wording.

use std::fmt;
use std::io;

use crate::{Format, MAX_LINE_BYTES, MAX_TRACE_BYTES};

/// Why a trace cannot be read, parsed or replayed on a device.
#[derive(Debug)]
pub enum TraceFileError {
    /// `--format` names no format we read.
    UnknownFormat { name: String },
    /// `--fit` is none of error, wrap, scale.
    UnknownFit { name: String },
    /// The trace file cannot be opened.
    Open { path: String, source: io::Error },
    /// Reading the trace failed part way.
    Read { origin: String, source: io::Error },
    /// A line longer than [`MAX_LINE_BYTES`]: not a trace file.
    LineTooLong { origin: String, line: usize },
    /// A file larger than [`MAX_TRACE_BYTES`].
    TooLarge { origin: String },
    /// A line that is not UTF-8 text, or holds a NUL.
    NotText { origin: String, line: usize },
    /// A line that does not parse in the trace's format; `problem` is what
    /// the format's parser expected (see [`crate::LineError`]).
    Line {
        origin: String,
        line: usize,
        problem: String,
    },
    /// The trace parses but holds no request.
    NoRequests { origin: String, format: Format },
    /// A request whose size is not a whole number of the device's blocks
    /// (`request` counts from 1, in time order).
    UnalignedSize {
        request: usize,
        size_bytes: u64,
        block_bytes: u64,
    },
    /// A request larger than the whole device.
    LargerThanDevice { request: usize, size_bytes: u64 },
    /// A request whose offset is not on a device block.
    UnalignedOffset {
        request: usize,
        offset_bytes: u64,
        block_bytes: u64,
    },
    /// A request past the end of the device with `--fit error`.
    PastDeviceEnd {
        request: usize,
        end_bytes: u64,
        device_bytes: u64,
    },
}

impl fmt::Display for TraceFileError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            TraceFileError::UnknownFormat { name } => {
                write!(f, "unknown trace format '{name}'; use {}", Format::NAMES)
            }
            TraceFileError::UnknownFit { name } => {
                write!(f, "unknown --fit '{name}'; use error, wrap or scale")
            }
            TraceFileError::Open { path, source } => {
                write!(f, "cannot read trace {path}: {source}; check the path")
            }
            TraceFileError::Read { origin, source } => {
                write!(f, "cannot read trace {origin}: {source}")
            }
            TraceFileError::LineTooLong { origin, line } => write!(
                f,
                "{origin} line {line} is longer than {} KiB: not a trace file; pass a text trace ({})",
                MAX_LINE_BYTES / 1024,
                Format::NAMES
            ),
            TraceFileError::TooLarge { origin } => write!(
                f,
                "{origin} is larger than {} GiB; split the trace (e.g. with split -l) and replay the parts",
                MAX_TRACE_BYTES >> 30
            ),
            TraceFileError::NotText { origin, line } => write!(
                f,
                "{origin} line {line} is not text (binary data); pass a text trace ({})",
                Format::NAMES
            ),
            TraceFileError::Line {
                origin,
                line,
                problem,
            } => write!(f, "{origin} line {line}: {problem}"),
            TraceFileError::NoRequests { origin, format } => write!(
                f,
                "{origin} holds no requests in {format} format; check the file or pass --format"
            ),
            TraceFileError::UnalignedSize {
                request,
                size_bytes,
                block_bytes,
            } => write!(
                f,
                "request {request} has size {size_bytes} B, not a positive multiple of the device's {block_bytes} B blocks; replay on a device with smaller blocks"
            ),
            TraceFileError::LargerThanDevice {
                request,
                size_bytes,
            } => write!(
                f,
                "request {request} ({size_bytes} B) is larger than the device"
            ),
            TraceFileError::UnalignedOffset {
                request,
                offset_bytes,
                block_bytes,
            } => write!(
                f,
                "request {request} at offset {offset_bytes} is not aligned to {block_bytes} B"
            ),
            TraceFileError::PastDeviceEnd {
                request,
                end_bytes,
                device_bytes,
            } => write!(
                f,
                "request {request} ends at byte {end_bytes}, past the end of the device ({device_bytes} B); pass --fit wrap or --fit scale to fold the trace onto the device"
            ),
        }
    }
}

impl std::error::Error for TraceFileError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            TraceFileError::Open { source, .. } | TraceFileError::Read { source, .. } => {
                Some(source)
            }
            _ => None,
        }
    }
}
