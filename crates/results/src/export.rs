//! Exports of saved results to formats other tools read.
//!
//! CSV: one header line, then one line per IO, columns
//! `run,index,stream,mode,offset_bytes,size_bytes,submit_ns,complete_ns,latency_ns,warmup,error`
//! (`pandas.read_csv` reads it without options).

use std::io::{self, Write};

use crate::records::{IoRecord, RecordFile};

pub const CSV_HEADER: &str =
    "run,index,stream,mode,offset_bytes,size_bytes,submit_ns,complete_ns,latency_ns,warmup,error";

pub fn write_csv_header(out: &mut impl Write) -> io::Result<()> {
    writeln!(out, "{CSV_HEADER}")
}

/// Writes one run's records; `run` must not contain commas or quotes (run
/// names are directory-safe identifiers, checked when the run is defined).
pub fn write_csv_rows(out: &mut impl Write, run: &str, records: &[IoRecord]) -> io::Result<()> {
    records.iter().try_for_each(|r| write_csv_row(out, run, r))
}

/// Writes every record of a records file, streamed (constant memory).
pub fn write_csv_file(out: &mut impl Write, run: &str, records: &RecordFile) -> io::Result<()> {
    records.for_each_chunk(|c| write_csv_rows(out, run, c))
}

fn write_csv_row(out: &mut impl Write, run: &str, r: &IoRecord) -> io::Result<()> {
    writeln!(
        out,
        "{run},{},{},{},{},{},{},{},{},{},{}",
        r.index,
        r.stream,
        r.mode,
        r.offset_bytes,
        r.size_bytes,
        r.submit_ns,
        r.complete_ns,
        r.latency_ns(),
        u8::from(r.is_warmup()),
        u8::from(r.is_error())
    )
}
