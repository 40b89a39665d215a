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

/// Writes one run's records. The run name is quoted as CSV requires when it
/// holds a comma, a quote or a line break (the csv crate's quoting).
pub fn write_csv_rows(out: &mut impl Write, run: &str, records: &[IoRecord]) -> io::Result<()> {
    let mut w = csv_writer(out);
    records
        .iter()
        .try_for_each(|r| write_csv_row(&mut w, run, r))?;
    w.flush()
}

/// Writes every record of a records file, streamed (constant memory).
pub fn write_csv_file(out: &mut impl Write, run: &str, records: &RecordFile) -> io::Result<()> {
    let mut w = csv_writer(out);
    records.for_each_chunk(|c| c.iter().try_for_each(|r| write_csv_row(&mut w, run, r)))?;
    w.flush()
}

fn csv_writer<W: Write>(out: W) -> csv::Writer<W> {
    csv::WriterBuilder::new()
        .has_headers(false)
        .from_writer(out)
}

fn write_csv_row<W: Write>(w: &mut csv::Writer<W>, run: &str, r: &IoRecord) -> io::Result<()> {
    w.serialize((
        run,
        r.index,
        r.stream,
        r.mode.name(),
        r.offset_bytes,
        r.size_bytes,
        r.submit_ns,
        r.complete_ns,
        r.latency_ns(),
        u8::from(r.is_warmup()),
        u8::from(r.is_error()),
    ))
    .map_err(csv_error)
}

/// A csv error as the io error it wraps (what is written is plain numbers
/// and text, so writing is the only way it fails); the sweep table uses it too.
pub fn csv_error(e: csv::Error) -> io::Error {
    match e.into_kind() {
        csv::ErrorKind::Io(e) => e,
        other => io::Error::other(format!("{other:?}")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_run_name_with_a_comma_or_a_quote_stays_one_field() {
        let r = IoRecord {
            index: 0,
            submit_ns: 10,
            complete_ns: 17,
            offset_bytes: 4096,
            size_bytes: 4096,
            stream: 0,
            mode: flashlab_device::Mode::Write,
            flags: 0,
        };
        let mut out = Vec::new();
        write_csv_header(&mut out).unwrap();
        write_csv_rows(&mut out, "RW, QD \"32\"", &[r]).unwrap();
        let mut rd = csv::Reader::from_reader(out.as_slice());
        let header_fields = rd.headers().unwrap().len();
        let row = rd.records().next().unwrap().unwrap();
        assert_eq!(row.len(), header_fields);
        assert_eq!(&row[0], "RW, QD \"32\"");
        assert_eq!(&row[3], "write");
        assert_eq!(&row[8], "7", "latency_ns");
    }
}
