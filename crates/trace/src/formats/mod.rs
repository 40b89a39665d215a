//! One module per trace format, each with `parse(text) -> Result<Vec<TraceIo>, LineError>`.

pub mod blkparse;
pub mod disksim;
pub mod fio;
pub mod flashlab;
pub mod mqsim;
pub mod msr;

use crate::LineError;

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
            format!("field {} ({name}) '{text}' is not valid", i + 1),
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
