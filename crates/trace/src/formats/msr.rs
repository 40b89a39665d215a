//! MSR-Cambridge block traces (SNIA IOTTA):
//! `Timestamp,Hostname,DiskNumber,Type,Offset,Size,ResponseTime`, with the
//! timestamp in Windows filetime (100 ns units), Type `Read` or `Write`,
//! offset and size in bytes.

use flashlab_device::Mode;

use super::{lines, quote, request, scaled};
use crate::{LineError, TraceIo, TraceOp};

pub fn parse(text: &str) -> Result<Vec<TraceIo>, LineError> {
    let mut out = Vec::new();
    for (n, line) in lines(text) {
        let cols: Vec<&str> = line.split(',').map(str::trim).collect();
        if cols.len() != 7 {
            return Err((
                n,
                format!("expected 7 comma-separated fields, found {}", cols.len()),
            ));
        }
        if n == 1 && cols[0].eq_ignore_ascii_case("timestamp") {
            continue;
        }
        let num = |i: usize, name: &str| {
            cols[i].parse::<u64>().map_err(|_| {
                (
                    n,
                    format!("field {} ({name}) '{}' is not valid", i + 1, quote(cols[i])),
                )
            })
        };
        let mode = match cols[3].to_ascii_lowercase().as_str() {
            "read" => Mode::Read,
            "write" => Mode::Write,
            other => return Err((n, format!("type '{}' is not Read or Write", quote(other)))),
        };
        out.push(request(
            scaled(num(0, "timestamp")?, 100, "timestamp", n)?,
            TraceOp::Io(mode),
            num(4, "offset")?,
            num(5, "size")?,
            n,
        )?);
    }
    Ok(out)
}
