//! One module per trace format, each with `parse(text) -> Result<Vec<TraceIo>, LineError>`.

pub mod blkparse;
pub mod disksim;
pub mod fio;
pub mod flashlab;
pub mod mqsim;
pub mod msr;

use crate::{LineError, TraceIo, TraceOp, MAX_REQUEST_BYTES};

/// Parses one whitespace-separated field as `T`, naming it on failure.
pub(crate) fn field<T: std::str::FromStr>(
    cols: &[&str],
    i: usize,
    name: &str,
    line: usize,
) -> Result<T, LineError> {
    let text = cols
        .get(i)
        .ok_or_else(|| (line, format!("missing field {} ({name})", i + 1)))?;
    text.parse::<T>().map_err(|_| {
        (
            line,
            format!("field {} ({name}) '{}' is not valid", i + 1, quote(text)),
        )
    })
}

/// Lines worth parsing: numbered from 1, blank lines and `#` comments skipped.
pub(crate) fn lines(text: &str) -> impl Iterator<Item = (usize, &str)> {
    text.lines()
        .enumerate()
        .map(|(i, l)| (i + 1, l.trim()))
        .filter(|(_, l)| !l.is_empty() && !l.starts_with('#'))
}

/// A field as an error message shows it: at most 40 characters.
pub(crate) fn quote(text: &str) -> String {
    match text.char_indices().nth(40) {
        Some((i, _)) => format!("{}...", &text[..i]),
        None => text.to_string(),
    }
}

/// `value * unit` (sectors, blocks, ms to ns...), refused when it does not
/// fit in 64 bits instead of wrapping.
pub(crate) fn scaled(value: u64, unit: u64, name: &str, line: usize) -> Result<u64, LineError> {
    value.checked_mul(unit).ok_or_else(|| {
        (
            line,
            format!("{name} {value} is too large (past 2^64 once scaled by {unit})"),
        )
    })
}

/// Seconds (or another unit, `ns_per_unit`) as a float to whole ns, refusing
/// negative, non-finite and out-of-range times.
pub(crate) fn float_ns(
    value: f64,
    ns_per_unit: f64,
    name: &str,
    line: usize,
) -> Result<u64, LineError> {
    let ns = (value * ns_per_unit).round();
    if !(ns.is_finite() && ns >= 0.0 && ns < u64::MAX as f64) {
        return Err((
            line,
            format!("{name} {value} is not a time between 0 and 2^64 ns"),
        ));
    }
    Ok(ns as u64)
}

/// A request, checked: its size fits an IO (at most 4 GiB - 1) and its end
/// fits in 64 bits.
pub(crate) fn request(
    time_ns: u64,
    op: TraceOp,
    offset_bytes: u64,
    size_bytes: u64,
    line: usize,
) -> Result<TraceIo, LineError> {
    if size_bytes > MAX_REQUEST_BYTES {
        return Err((
            line,
            format!("request size {size_bytes} B is larger than the largest IO (4 GiB - 1 B)"),
        ));
    }
    if offset_bytes.checked_add(size_bytes).is_none() {
        return Err((
            line,
            format!("request at offset {offset_bytes} B of {size_bytes} B ends past 2^64 bytes"),
        ));
    }
    Ok(TraceIo {
        time_ns,
        op,
        offset_bytes,
        size_bytes,
    })
}
