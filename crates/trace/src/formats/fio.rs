//! fio iolog, versions 2 and 3.
//!
//! ```text
//! fio version 2 iolog          fio version 3 iolog
//! /dev/sdb add                 0 /dev/sdb add
//! /dev/sdb open                0 /dev/sdb open
//! /dev/sdb write 0 4096        12 /dev/sdb write 0 4096
//! /dev/sdb read 8192 4096      15 /dev/sdb read 8192 4096
//! /dev/sdb close               20 /dev/sdb close
//! ```
//!
//! Version 3 prefixes each line with a timestamp in milliseconds. Version 2
//! has none (fio replays it as fast as it can); we give its requests time 0,
//! which makes an open-loop replay issue them all at once, bounded by the
//! queue depth. `wait` lines of version 2 (microseconds) advance time.
//! Actions other than read/write/trim/sync/datasync (add, open, close) carry
//! no IO and are skipped.

use flashlab_device::Mode;

use super::{field, quote, request, scaled};
use crate::{LineError, TraceIo, TraceOp};

pub fn parse(text: &str) -> Result<Vec<TraceIo>, LineError> {
    let mut lines = text
        .lines()
        .enumerate()
        .map(|(i, l)| (i + 1, l.trim()))
        .filter(|(_, l)| !l.is_empty());
    let (n, head) = lines.next().ok_or((1, "empty fio iolog".to_string()))?;
    let version = match head {
        "fio version 2 iolog" => 2,
        "fio version 3 iolog" => 3,
        other => {
            return Err((
                n,
                format!(
                    "'{}' is not 'fio version 2 iolog' or 'fio version 3 iolog'",
                    quote(other)
                ),
            ))
        }
    };
    let mut out = Vec::new();
    let mut now_ns = 0u64;
    for (n, line) in lines {
        let cols: Vec<&str> = line.split_whitespace().collect();
        let (time_ns, rest) = if version == 3 {
            let ms: u64 = field(&cols, 0, "timestamp_ms", n)?;
            (scaled(ms, 1_000_000, "timestamp_ms", n)?, &cols[1..])
        } else {
            (now_ns, &cols[..])
        };
        let action = *rest
            .get(1)
            .ok_or((n, "expected 'FILE ACTION [OFFSET LENGTH]'".to_string()))?;
        let op = match action {
            "read" => TraceOp::Io(Mode::Read),
            "write" => TraceOp::Io(Mode::Write),
            "trim" => TraceOp::Io(Mode::Trim),
            "sync" | "datasync" => TraceOp::Flush,
            "wait" if version == 2 => {
                let us: u64 = field(rest, 2, "wait_us", n)?;
                now_ns = now_ns
                    .checked_add(scaled(us, 1000, "wait_us", n)?)
                    .ok_or((n, "waits add up to more than 2^64 ns".to_string()))?;
                continue;
            }
            "add" | "open" | "close" => continue,
            other => return Err((n, format!("unknown fio iolog action '{}'", quote(other)))),
        };
        let (offset_bytes, size_bytes) = match op {
            TraceOp::Flush => (0, 0),
            TraceOp::Io(_) => (field(rest, 2, "offset", n)?, field(rest, 3, "length", n)?),
        };
        out.push(request(time_ns, op, offset_bytes, size_bytes, n)?);
    }
    Ok(out)
}
