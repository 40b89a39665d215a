//! MQSim's ASCII trace format (also the format of `shared/traces/`):
//! `arrival_time_ns device_number start_sector size_in_sectors type`, with
//! 512-byte sectors and type 0 = write, 1 = read. The device column is ignored.

use flashlab_device::Mode;

use super::{field, lines, request, scaled};
use crate::{LineError, TraceIo, TraceOp};

pub fn parse(text: &str) -> Result<Vec<TraceIo>, LineError> {
    let mut out = Vec::new();
    for (n, line) in lines(text) {
        let cols: Vec<&str> = line.split_whitespace().collect();
        if cols.len() != 5 {
            return Err((
                n,
                format!(
                    "expected 5 fields (time_ns device sector sectors type), found {}",
                    cols.len()
                ),
            ));
        }
        let mode = match field::<u32>(&cols, 4, "type", n)? {
            0 => Mode::Write,
            1 => Mode::Read,
            t => return Err((n, format!("type {t} is not 0 (write) or 1 (read)"))),
        };
        out.push(request(
            field(&cols, 0, "arrival_time_ns", n)?,
            TraceOp::Io(mode),
            scaled(field(&cols, 2, "start_sector", n)?, 512, "start_sector", n)?,
            scaled(
                field(&cols, 3, "size_in_sectors", n)?,
                512,
                "size_in_sectors",
                n,
            )?,
            n,
        )?);
    }
    Ok(out)
}
