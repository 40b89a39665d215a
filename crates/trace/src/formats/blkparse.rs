//! blkparse's default text output:
//!
//! ```text
//!   8,0    3        1     0.000000000   697  Q  WS 223490 + 8 [kjournald]
//! ```
//!
//! dev, cpu, sequence, time (s), pid, action, RWBS, sector + sectors,
//! [process]. A request shows up once per action (Q queued, G get request,
//! I inserted, D issued to the driver, C completed...); we keep one action,
//! D by default: what the device was asked to do. Lines of other shapes
//! (blkparse's per-CPU summaries, notes, actions without a sector range) are
//! skipped. Sectors are 512 bytes.

use flashlab_device::Mode;

use super::{field, float_ns, request, scaled};
use crate::{LineError, TraceIo, TraceOp};

pub fn parse(text: &str, action: char) -> Result<Vec<TraceIo>, LineError> {
    let mut out = Vec::new();
    let mut seen_any = false;
    for (i, raw) in text.lines().enumerate() {
        let n = i + 1;
        let cols: Vec<&str> = raw.split_whitespace().collect();
        // The summary at the end of blkparse's output starts a different layout.
        if cols
            .first()
            .is_some_and(|c| c.starts_with("CPU") || *c == "Total")
        {
            break;
        }
        if cols.len() < 7 || !cols[0].contains(',') {
            continue;
        }
        seen_any = true;
        if cols[5].len() != 1 || !cols[5].starts_with(action) {
            continue;
        }
        let rwbs = cols[6];
        let is_flush = rwbs.contains('F');
        let op = if rwbs.contains('D') {
            TraceOp::Io(Mode::Trim)
        } else if rwbs.contains('W') {
            TraceOp::Io(Mode::Write)
        } else if rwbs.contains('R') {
            TraceOp::Io(Mode::Read)
        } else if is_flush {
            TraceOp::Flush
        } else {
            continue;
        };
        let secs: f64 = field(&cols, 3, "time", n)?;
        let time_ns = float_ns(secs, 1e9, "time", n)?;
        let (offset_bytes, size_bytes) = if cols.len() >= 10 && cols[8] == "+" {
            let sector: u64 = field(&cols, 7, "sector", n)?;
            let sectors: u64 = field(&cols, 9, "sectors", n)?;
            (
                scaled(sector, 512, "sector", n)?,
                scaled(sectors, 512, "sectors", n)?,
            )
        } else if op == TraceOp::Flush {
            (0, 0)
        } else {
            continue;
        };
        if size_bytes == 0 && op != TraceOp::Flush {
            // A pure flush with a data flag (e.g. "FWS" with no range) is a flush.
            if is_flush {
                out.push(TraceIo {
                    time_ns,
                    op: TraceOp::Flush,
                    offset_bytes: 0,
                    size_bytes: 0,
                });
            }
            continue;
        }
        out.push(request(time_ns, op, offset_bytes, size_bytes, n)?);
    }
    if !seen_any {
        return Err((1, "no blkparse event lines (expected e.g. '8,0 3 1 0.000000000 697 D W 223490 + 8 [proc]')".into()));
    }
    Ok(out)
}
