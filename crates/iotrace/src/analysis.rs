//! What Wang et al. plot from their traces, for any flashlab trace (block
//! or per-file): read and write IO rate (Fig 7 logical, Fig 8 physical),
//! bytes per second and average IO size (Fig 9) per interval, and the file
//! system's write amplification between two traces of the same run
//! (physical bytes written / logical bytes written), plus the Table 6
//! endurance estimate (rated lifetime writes / physical write rate).
//!
//! Traces are streamed line by line: memory is O(intervals), not O(requests).
//! Times are taken as written (both traces of a session count from the same
//! start), so the two series line up interval by interval.

use std::fmt;
use std::fs::File;
use std::io::{BufRead, BufReader, Read};
use std::path::Path;

use flashlab_device::Mode;
use flashlab_trace::formats::flashlab::{parse_line, Line};
use flashlab_trace::{FileKind, FileOp, TraceOp};
use serde::Serialize;

/// The most intervals a series may have (e.g. a day at 10 ms): a bound on
/// memory against a trace with absurd times.
pub const MAX_INTERVALS: u64 = 10_000_000;

#[derive(Debug)]
pub struct AnalysisError(pub String);

impl fmt::Display for AnalysisError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for AnalysisError {}

/// Reads and writes in one interval (or a whole trace).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
pub struct Tally {
    pub reads: u64,
    pub read_bytes: u64,
    pub writes: u64,
    pub write_bytes: u64,
    /// fsync/fdatasync (logical) or flush requests (physical).
    pub flushes: u64,
}

impl Tally {
    fn add_read(&mut self, bytes: u64) {
        self.reads += 1;
        self.read_bytes += bytes;
    }
    fn add_write(&mut self, bytes: u64) {
        self.writes += 1;
        self.write_bytes += bytes;
    }
}

/// One interval of a series, as rates.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct IntervalRates {
    pub start_ns: u64,
    pub read_iops: f64,
    pub write_iops: f64,
    pub read_bytes_per_s: f64,
    pub write_bytes_per_s: f64,
    /// None when the interval has no read (resp. write).
    pub avg_read_size_bytes: Option<f64>,
    pub avg_write_size_bytes: Option<f64>,
}

/// A trace's per-interval tallies and its totals.
#[derive(Clone, Debug, Serialize)]
pub struct Series {
    pub interval_ns: u64,
    pub intervals: Vec<Tally>,
    pub total: Tally,
    /// Totals by file kind (per-file traces only): data, wal, other.
    pub by_kind: Vec<(String, Tally)>,
    /// Time of the last request.
    pub last_ns: u64,
}

impl Series {
    /// Rates per interval (IO/s, bytes/s, average size: Figs 7-9).
    pub fn rates(&self) -> Vec<IntervalRates> {
        let secs = self.interval_ns as f64 / 1e9;
        self.intervals
            .iter()
            .enumerate()
            .map(|(i, t)| IntervalRates {
                start_ns: i as u64 * self.interval_ns,
                read_iops: t.reads as f64 / secs,
                write_iops: t.writes as f64 / secs,
                read_bytes_per_s: t.read_bytes as f64 / secs,
                write_bytes_per_s: t.write_bytes as f64 / secs,
                avg_read_size_bytes: (t.reads > 0).then(|| t.read_bytes as f64 / t.reads as f64),
                avg_write_size_bytes: (t.writes > 0)
                    .then(|| t.write_bytes as f64 / t.writes as f64),
            })
            .collect()
    }

    /// Average write rate over `duration_ns` (the traced run's length; the
    /// last request's time when None).
    pub fn write_bytes_per_s(&self, duration_ns: Option<u64>) -> f64 {
        let d = duration_ns.unwrap_or(self.last_ns).max(1);
        self.total.write_bytes as f64 / (d as f64 / 1e9)
    }
}

/// Reads a flashlab trace (block or per-file) into a series of
/// `interval_ns` intervals. Discards (T) and sync_file_range (S) are
/// neither reads nor writes.
pub fn series(path: &Path, interval_ns: u64) -> Result<Series, AnalysisError> {
    if interval_ns == 0 {
        return Err(AnalysisError("the interval must be positive".to_string()));
    }
    let shown = path.display();
    let file =
        File::open(path).map_err(|e| AnalysisError(format!("cannot read trace {shown}: {e}")))?;
    let mut reader = BufReader::with_capacity(1 << 16, file);
    let mut s = Series {
        interval_ns,
        intervals: Vec::new(),
        total: Tally::default(),
        by_kind: Vec::new(),
        last_ns: 0,
    };
    let mut kinds: Vec<FileKind> = Vec::new(); // file id -> kind
    let mut by_kind = [Tally::default(); 3];
    let mut line = String::new();
    for n in 1usize.. {
        line.clear();
        let got = (&mut reader)
            .take(flashlab_trace::MAX_LINE_BYTES as u64 + 1)
            .read_line(&mut line)
            .map_err(|e| AnalysisError(format!("cannot read trace {shown} line {n}: {e}")))?;
        if got == 0 {
            break;
        }
        if line.len() > flashlab_trace::MAX_LINE_BYTES {
            return Err(AnalysisError(format!(
                "{shown} line {n} is too long: not a flashlab trace"
            )));
        }
        let parsed = parse_line(&line, n)
            .map_err(|(n, m)| AnalysisError(format!("{shown} line {n}: {m}")))?;
        let (time_ns, read, write, flush, kind) = match parsed {
            Line::Nothing => continue,
            Line::File(f) => {
                let id = f.id as usize;
                if kinds.len() <= id {
                    if id > 1 << 24 {
                        return Err(AnalysisError(format!(
                            "{shown} line {n}: file id {id} is too large"
                        )));
                    }
                    kinds.resize(id + 1, FileKind::Other);
                }
                kinds[id] = f.kind;
                continue;
            }
            Line::Block(io) => match io.op {
                TraceOp::Io(Mode::Read) => (io.time_ns, Some(io.size_bytes), None, false, None),
                TraceOp::Io(Mode::Write) => (io.time_ns, None, Some(io.size_bytes), false, None),
                TraceOp::Io(Mode::Trim) => (io.time_ns, None, None, false, None),
                TraceOp::Flush => (io.time_ns, None, None, true, None),
            },
            Line::FileRequest(io) => {
                let kind = kinds.get(io.file as usize).copied().ok_or_else(|| {
                    AnalysisError(format!(
                        "{shown} line {n}: file {} is used before its '# file' line",
                        io.file
                    ))
                })?;
                match io.op {
                    FileOp::Read => (io.time_ns, Some(io.size_bytes), None, false, Some(kind)),
                    FileOp::Write => (io.time_ns, None, Some(io.size_bytes), false, Some(kind)),
                    FileOp::Fsync | FileOp::Fdatasync => (io.time_ns, None, None, true, Some(kind)),
                    FileOp::SyncRange => (io.time_ns, None, None, false, Some(kind)),
                }
            }
        };
        let bucket = time_ns / interval_ns;
        if bucket >= MAX_INTERVALS {
            return Err(AnalysisError(format!(
                "{shown} line {n}: time {time_ns} ns is past {MAX_INTERVALS} intervals; use a longer interval"
            )));
        }
        if s.intervals.len() as u64 <= bucket {
            s.intervals.resize(bucket as usize + 1, Tally::default());
        }
        s.last_ns = s.last_ns.max(time_ns);
        let slot = kind.map(|k| FileKind::ALL.iter().position(|x| *x == k).unwrap());
        let apply = |t: &mut Tally| {
            if let Some(b) = read {
                t.add_read(b);
            }
            if let Some(b) = write {
                t.add_write(b);
            }
            if flush {
                t.flushes += 1;
            }
        };
        apply(&mut s.intervals[bucket as usize]);
        apply(&mut s.total);
        if let Some(k) = slot {
            apply(&mut by_kind[k]);
        }
    }
    if !kinds.is_empty() {
        s.by_kind = FileKind::ALL
            .iter()
            .zip(by_kind)
            .map(|(k, t)| (k.name().to_string(), t))
            .collect();
    }
    Ok(s)
}

/// File-system write amplification: physical bytes written / logical bytes
/// written (None when nothing was written logically).
pub fn fs_write_amplification(logical: &Tally, physical: &Tally) -> Option<f64> {
    (logical.write_bytes > 0).then(|| physical.write_bytes as f64 / logical.write_bytes as f64)
}

/// Seconds in a (Julian) year.
pub const SECONDS_PER_YEAR: f64 = 365.25 * 24.0 * 3600.0;

/// Table 6: the years a device rated for `rated_lifetime_write_bytes` lasts
/// at a sustained physical write rate (None at a zero rate).
pub fn endurance_years(rated_lifetime_write_bytes: f64, write_bytes_per_s: f64) -> Option<f64> {
    (write_bytes_per_s > 0.0)
        .then(|| rated_lifetime_write_bytes / write_bytes_per_s / SECONDS_PER_YEAR)
}

/// Logical vs physical IO of one run, interval by interval.
#[derive(Clone, Debug, Serialize)]
pub struct Comparison {
    pub logical: Series,
    pub physical: Series,
    pub fs_write_amplification: Option<f64>,
}

/// Reads both traces of a run with the same intervals.
pub fn compare(
    logical: &Path,
    physical: &Path,
    interval_ns: u64,
) -> Result<Comparison, AnalysisError> {
    let logical = series(logical, interval_ns)?;
    let physical = series(physical, interval_ns)?;
    let fs_write_amplification = fs_write_amplification(&logical.total, &physical.total);
    Ok(Comparison {
        logical,
        physical,
        fs_write_amplification,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn write(dir: &Path, name: &str, text: &str) -> std::path::PathBuf {
        let p = dir.join(name);
        std::fs::write(&p, text).unwrap();
        p
    }

    #[test]
    fn rates_sizes_and_write_amplification_from_two_traces() {
        let dir = tempfile::tempdir().unwrap();
        let logical = write(
            dir.path(),
            "logical.trace",
            "# flashlab-trace v1\n# file 0 wal pg_wal/1\n# file 1 data base/5/1\n\
             0 W 0 8192 0\n100 F 0 0 0\n500000000 R 0 8192 1\n1200000000 W 8192 8192 1\n",
        );
        let physical = write(
            dir.path(),
            "physical.trace",
            "# flashlab-trace v1\n10 W 0 4096\n20 W 4096 4096\n30 F 0 0\n1300000000 W 0 16384\n",
        );
        let c = compare(&logical, &physical, 1_000_000_000).unwrap();
        assert_eq!(c.logical.intervals.len(), 2);
        assert_eq!(c.logical.total.write_bytes, 16384);
        assert_eq!(c.logical.total.flushes, 1);
        let wal = &c
            .logical
            .by_kind
            .iter()
            .find(|(k, _)| k == "wal")
            .unwrap()
            .1;
        assert_eq!((wal.writes, wal.flushes), (1, 1));
        let r = c.physical.rates();
        assert_eq!(r[0].write_iops, 2.0);
        assert_eq!(r[0].avg_write_size_bytes, Some(4096.0));
        assert_eq!(r[1].avg_write_size_bytes, Some(16384.0));
        assert_eq!(r[0].avg_read_size_bytes, None);
        // 24 KiB physical for 16 KiB logical.
        assert_eq!(c.fs_write_amplification, Some(1.5));
    }

    #[test]
    fn endurance_is_rated_writes_over_the_write_rate() {
        // Intel X25-E 64 GB: 2 PB of lifetime writes; at 14.5 MB/s about 4.4 years.
        let y = endurance_years(2e15, 14.5e6).unwrap();
        assert!((y - 4.37).abs() < 0.01, "{y}");
        assert_eq!(endurance_years(2e15, 0.0), None);
    }

    #[test]
    fn a_bad_line_names_its_file_and_number() {
        let dir = tempfile::tempdir().unwrap();
        let p = write(
            dir.path(),
            "t",
            "# flashlab-trace v1\n0 W 0 4096\n5 X 0 1\n",
        );
        let e = series(&p, 1000).unwrap_err().to_string();
        assert!(
            e.contains("line 3") && e.contains("not R, W, T or F"),
            "{e}"
        );
    }
}
