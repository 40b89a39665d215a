//! flashlab's own trace format: a text line per request, easy to grep,
//! diff and load (`pandas.read_csv(path, sep=" ", comment="#", names=[...])`).
//!
//! ```text
//! # flashlab-trace v1
//! # time_ns op offset_bytes size_bytes
//! 0 W 1048576 4096
//! 1200 R 0 32768
//! 5000 F 0 0
//! ```
//!
//! `op` is R (read), W (write), T (trim) or F (flush).

use std::io::{self, Write};

use flashlab_device::Mode;

use super::{field, lines, quote, request};
use crate::{LineError, TraceIo, TraceOp};

pub const HEADER: &str = "# flashlab-trace v1\n# time_ns op offset_bytes size_bytes\n";

pub fn parse(text: &str) -> Result<Vec<TraceIo>, LineError> {
    let mut out = Vec::new();
    for (n, line) in lines(text) {
        let cols: Vec<&str> = line.split_whitespace().collect();
        if cols.len() != 4 {
            return Err((
                n,
                format!(
                    "expected 4 fields (time_ns op offset_bytes size_bytes), found {}",
                    cols.len()
                ),
            ));
        }
        let op = match cols[1] {
            "R" => TraceOp::Io(Mode::Read),
            "W" => TraceOp::Io(Mode::Write),
            "T" => TraceOp::Io(Mode::Trim),
            "F" => TraceOp::Flush,
            other => return Err((n, format!("op '{}' is not R, W, T or F", quote(other)))),
        };
        out.push(request(
            field(&cols, 0, "time_ns", n)?,
            op,
            field(&cols, 2, "offset_bytes", n)?,
            field(&cols, 3, "size_bytes", n)?,
            n,
        )?);
    }
    Ok(out)
}

/// Appends requests to a trace as they happen.
pub struct TraceWriter<W: Write> {
    out: W,
}

impl<W: Write> TraceWriter<W> {
    pub fn new(mut out: W) -> io::Result<TraceWriter<W>> {
        out.write_all(HEADER.as_bytes())?;
        Ok(TraceWriter { out })
    }

    pub fn write(&mut self, io: &TraceIo) -> io::Result<()> {
        writeln!(
            self.out,
            "{} {} {} {}",
            io.time_ns,
            io.op.letter(),
            io.offset_bytes,
            io.size_bytes
        )
    }

    pub fn flush(&mut self) -> io::Result<()> {
        self.out.flush()
    }

    pub fn into_inner(self) -> W {
        self.out
    }
}
