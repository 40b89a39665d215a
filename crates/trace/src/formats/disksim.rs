//! DiskSim's ASCII trace format: `arrival_ms device block blocks flags`,
//! with fractional milliseconds, 512-byte blocks, and flags bit 0 set for a
//! read (DiskSim's `READ` flag).

use flashlab_device::Mode;

use super::{field, float_ns, lines, request, scaled};
use crate::{LineError, TraceIo, TraceOp};

pub fn parse(text: &str) -> Result<Vec<TraceIo>, LineError> {
    let mut out = Vec::new();
    for (n, line) in lines(text) {
        let cols: Vec<&str> = line.split_whitespace().collect();
        if cols.len() != 5 {
            return Err((
                n,
                format!(
                    "expected 5 fields (time_ms device block blocks flags), found {}",
                    cols.len()
                ),
            ));
        }
        let ms: f64 = field(&cols, 0, "arrival_time_ms", n)?;
        if !(ms >= 0.0 && ms.is_finite()) {
            return Err((
                n,
                format!("arrival time {ms} is not a non-negative number of ms"),
            ));
        }
        let flags: u32 = field(&cols, 4, "flags", n)?;
        let op = TraceOp::Io(if flags & 1 == 1 {
            Mode::Read
        } else {
            Mode::Write
        });
        out.push(request(
            float_ns(ms, 1e6, "arrival time", n)?,
            op,
            scaled(field(&cols, 2, "block", n)?, 512, "block", n)?,
            scaled(field(&cols, 3, "blocks", n)?, 512, "blocks", n)?,
            n,
        )?);
    }
    Ok(out)
}
