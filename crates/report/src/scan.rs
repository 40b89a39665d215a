//! One streaming pass over a run's `records.bin`: exact statistics from every
//! record, and the reduced series the charts show.
//!
//! A run can hold tens of millions of records. Decoding them into
//! `IoRecord`s (as `flashlab_results::records::read_records` does) would take
//! the file's size twice over in memory, so this module reads fixed-size
//! chunks and keeps only what it needs: one `u64` per measured IO (latency and
//! mode packed together, sorted once for exact percentiles and the CDF) and a
//! fixed number of time-series buckets.
//!
//! The statistics are the same numbers as `RunStats::from_records` (same
//! exclusions, same nearest-rank percentiles, same summation order for the
//! mean because `LatencyStats::from_latencies` sorts before summing); a test
//! checks that.

use std::collections::BTreeMap;
use std::fs::File;
use std::io::{self, Read};
use std::path::Path;

use flashlab_device::Mode;
use flashlab_results::records::{HEADER_BYTES, MAGIC, RECORD_BYTES};
use flashlab_results::{LatencyStats, RunStats, Throughput, FLAG_ERROR, FLAG_WARMUP};
use serde::Serialize;

/// How many buckets a latency time series is reduced to: about one per
/// horizontal pixel of the chart, so min/max per bucket loses nothing visible.
pub const TIMELINE_BUCKETS: usize = 640;

/// How many points a CDF keeps (quantiles at equal steps of the fraction).
pub const CDF_POINTS: usize = 500;

/// Histogram bins per decade of latency.
pub const HISTOGRAM_BINS_PER_DECADE: usize = 10;

/// One bucket of consecutive IOs (in completion order) of a latency time series.
///
/// Serialized as `[first, count, min_ns, max_ns, mean_ns]` to keep JSON small.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Bucket(pub u64, pub u64, pub u64, pub u64, pub f64);

impl Bucket {
    /// Position (in completion order, 0-based) of the bucket's first IO.
    pub fn first(&self) -> u64 {
        self.0
    }
    /// IOs plotted in the bucket (failed IOs are not plotted).
    pub fn count(&self) -> u64 {
        self.1
    }
    pub fn min_ns(&self) -> u64 {
        self.2
    }
    pub fn max_ns(&self) -> u64 {
        self.3
    }
    pub fn mean_ns(&self) -> f64 {
        self.4
    }
}

/// Latency over IO number (uFLIP Figures 3-5), reduced to buckets.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct Timeline {
    /// Records in the file (every IO, warm-up and failed included).
    pub ios: u64,
    /// IOs per bucket (1: nothing was reduced).
    pub bucket_ios: u64,
    /// One past the position of the last warm-up (IOIgnore) IO, if any.
    pub warmup_end: Option<u64>,
    pub buckets: Vec<Bucket>,
}

/// One CDF point: `[latency_ns, fraction of measured IOs <= latency_ns]`.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct CdfPoint(pub u64, pub f64);

/// Counts of measured IOs in log-spaced latency bins.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct Histogram {
    /// Bin edges, one more than `counts`; bin i is [edges[i], edges[i+1]).
    /// The last bin also holds the maximum.
    pub edges_ns: Vec<u64>,
    pub counts: Vec<u64>,
}

/// Everything the report needs from one run's records.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct RunData {
    pub stats: RunStats,
    /// Records in the file.
    pub records: u64,
    /// Records skipped because their mode byte was invalid (damaged file).
    pub damaged: u64,
    /// Bytes at the end of the file that did not make a whole record (a torn write).
    pub torn_bytes: u64,
    pub timeline: Timeline,
    pub cdf: Vec<CdfPoint>,
    pub histogram: Histogram,
}

/// Per-mode accumulators of measured IOs.
#[derive(Clone, Copy)]
struct ModeAcc {
    ios: u64,
    bytes: u64,
    first_submit: u64,
    last_complete: u64,
}

impl Default for ModeAcc {
    fn default() -> Self {
        ModeAcc {
            ios: 0,
            bytes: 0,
            first_submit: u64::MAX,
            last_complete: 0,
        }
    }
}

struct BucketAcc {
    first: u64,
    count: u64,
    min: u64,
    max: u64,
    sum: f64,
}

/// Latencies are packed with the mode code in the low 2 bits so that one
/// vector serves both the overall and the per-mode statistics. Latencies are
/// far below 2^62 ns (146 years).
const MODE_BITS: u32 = 2;

/// Reads a records file once and reduces it. Errors name the file.
pub fn scan_run(path: &Path) -> Result<RunData, String> {
    scan_run_with(path, TIMELINE_BUCKETS, CDF_POINTS)
}

pub fn scan_run_with(path: &Path, buckets: usize, cdf_points: usize) -> Result<RunData, String> {
    let err = |e: io::Error| format!("{}: {e}", path.display());
    let mut file = File::open(path).map_err(err)?;
    let len = file.metadata().map_err(err)?.len();
    let mut header = [0u8; HEADER_BYTES];
    if len < HEADER_BYTES as u64 || file.read_exact(&mut header).is_err() || header[0..8] != MAGIC {
        return Err(format!(
            "{}: not a flashlab records file (bad magic); the run's records are damaged, re-run it or remove it from manifest.json",
            path.display()
        ));
    }
    let (hb, rb) = (
        u16::from_le_bytes([header[8], header[9]]),
        u16::from_le_bytes([header[10], header[11]]),
    );
    if hb as usize != HEADER_BYTES || rb as usize != RECORD_BYTES {
        return Err(format!(
            "{}: records layout {hb}/{rb} is not schema 1 (32/40); render it with the flashlab version that wrote it",
            path.display()
        ));
    }
    let body = len - HEADER_BYTES as u64;
    let n = body / RECORD_BYTES as u64;
    let torn_bytes = body % RECORD_BYTES as u64;
    let bucket_ios = n.div_ceil(buckets.max(1) as u64).max(1);

    let mut packed: Vec<u64> = Vec::with_capacity(n as usize);
    let mut modes = [ModeAcc::default(); 3];
    let mut ignored = 0u64;
    let mut failed = 0u64;
    let mut damaged = 0u64;
    let mut warmup_end = None;
    let mut out_buckets: Vec<Bucket> = Vec::with_capacity(buckets.min(n as usize));
    let mut cur: Option<BucketAcc> = None;

    // Whole records per read: 100k records = 4 MB, large enough that the
    // per-call cost vanishes, small enough to stay in cache-friendly sizes.
    const CHUNK_RECORDS: usize = 100_000;
    let mut buf = vec![0u8; CHUNK_RECORDS * RECORD_BYTES];
    let mut pos = 0u64;
    while pos < n {
        let want = ((n - pos) as usize).min(CHUNK_RECORDS);
        let bytes = &mut buf[..want * RECORD_BYTES];
        file.read_exact(bytes).map_err(err)?;
        for rec in bytes.chunks_exact(RECORD_BYTES) {
            let i = pos;
            pos += 1;
            let u64_at = |o: usize| u64::from_le_bytes(rec[o..o + 8].try_into().expect("8 bytes"));
            let (submit, complete) = (u64_at(8), u64_at(16));
            let size = u32::from_le_bytes(rec[32..36].try_into().expect("4 bytes")) as u64;
            let Some(mode) = Mode::from_code(rec[38]) else {
                damaged += 1;
                continue;
            };
            let flags = rec[39];
            let warmup = flags & FLAG_WARMUP != 0;
            let error = flags & FLAG_ERROR != 0;
            if warmup {
                ignored += 1;
                warmup_end = Some(i + 1);
            }
            if error {
                // A failed IO's latency says nothing about the device's speed:
                // neither plotted nor counted, only reported.
                failed += 1;
                continue;
            }
            let lat = complete.saturating_sub(submit);
            let b = i / bucket_ios;
            match &mut cur {
                Some(acc) if acc.first / bucket_ios == b => {
                    acc.count += 1;
                    acc.min = acc.min.min(lat);
                    acc.max = acc.max.max(lat);
                    acc.sum += lat as f64;
                }
                _ => {
                    if let Some(acc) = cur.take() {
                        out_buckets.push(finish_bucket(acc));
                    }
                    cur = Some(BucketAcc {
                        first: i,
                        count: 1,
                        min: lat,
                        max: lat,
                        sum: lat as f64,
                    });
                }
            }
            if !warmup {
                let m = &mut modes[mode.code() as usize];
                m.ios += 1;
                m.bytes += size;
                m.first_submit = m.first_submit.min(submit);
                m.last_complete = m.last_complete.max(complete);
                packed.push(lat.min(u64::MAX >> MODE_BITS) << MODE_BITS | mode.code() as u64);
            }
        }
    }
    if let Some(acc) = cur.take() {
        out_buckets.push(finish_bucket(acc));
    }

    packed.sort_unstable();
    let present: Vec<usize> = (0..3).filter(|&m| modes[m].ios > 0).collect();
    let mut by_mode = BTreeMap::new();
    if present.len() > 1 {
        for &m in &present {
            // Filtering a sorted vector keeps it sorted: the re-sort inside
            // from_latencies is then a linear check.
            let mut lat: Vec<u64> = packed
                .iter()
                .filter(|&&p| (p & 3) as usize == m)
                .map(|&p| p >> MODE_BITS)
                .collect();
            let mode = Mode::from_code(m as u8).expect("valid mode code");
            by_mode.insert(mode.name().to_string(), throughput(&modes[m], &mut lat));
        }
    }
    let mut all_latencies = packed;
    for p in all_latencies.iter_mut() {
        *p >>= MODE_BITS;
    }
    let total = modes.iter().fold(ModeAcc::default(), |a, m| ModeAcc {
        ios: a.ios + m.ios,
        bytes: a.bytes + m.bytes,
        first_submit: a.first_submit.min(m.first_submit),
        last_complete: a.last_complete.max(m.last_complete),
    });
    let all = throughput(&total, &mut all_latencies);
    let cdf = cdf_points_of(&all_latencies, cdf_points);
    let histogram = histogram_of(&all_latencies);
    Ok(RunData {
        stats: RunStats {
            ios_ignored: ignored,
            ios_failed: failed,
            all,
            by_mode,
        },
        records: n,
        damaged,
        torn_bytes,
        timeline: Timeline {
            ios: n,
            bucket_ios,
            warmup_end,
            buckets: out_buckets,
        },
        cdf,
        histogram,
    })
}

fn finish_bucket(acc: BucketAcc) -> Bucket {
    Bucket(
        acc.first,
        acc.count,
        acc.min,
        acc.max,
        acc.sum / acc.count as f64,
    )
}

/// The same formulas as `flashlab_results::stats` (window from the first
/// measured submission to the last measured completion).
fn throughput(acc: &ModeAcc, latencies: &mut [u64]) -> Throughput {
    let window_ns = if acc.ios == 0 {
        0
    } else {
        acc.last_complete.saturating_sub(acc.first_submit)
    };
    let secs = window_ns as f64 / 1e9;
    Throughput {
        ios: acc.ios,
        bytes: acc.bytes,
        window_ns,
        iops: if secs > 0.0 {
            acc.ios as f64 / secs
        } else {
            0.0
        },
        mb_per_s: if secs > 0.0 {
            acc.bytes as f64 / secs / 1e6
        } else {
            0.0
        },
        latency: LatencyStats::from_latencies(latencies),
    }
}

/// CDF points from sorted latencies: the nearest-rank quantile at `points`
/// equal steps of the fraction, plus the minimum; every IO when there are
/// fewer IOs than points. Equal latencies collapse to their highest fraction.
pub fn cdf_points_of(sorted: &[u64], points: usize) -> Vec<CdfPoint> {
    let n = sorted.len();
    if n == 0 {
        return Vec::new();
    }
    let mut ranks: Vec<usize> = if n <= points {
        (1..=n).collect()
    } else {
        let mut r = vec![1];
        r.extend((1..=points).map(|k| ((k as f64 / points as f64) * n as f64).ceil() as usize));
        r
    };
    ranks.dedup();
    let mut out: Vec<CdfPoint> = Vec::with_capacity(ranks.len());
    for r in ranks {
        let r = r.clamp(1, n);
        let v = sorted[r - 1];
        // The empirical CDF at v counts every IO <= v: move to the last equal one.
        let f = sorted.partition_point(|&x| x <= v) as f64 / n as f64;
        match out.last_mut() {
            Some(last) if last.0 == v => last.1 = f,
            _ => out.push(CdfPoint(v, f)),
        }
    }
    out
}

/// Log-spaced bins (`HISTOGRAM_BINS_PER_DECADE` per decade, edges rounded to
/// whole nanoseconds) from the minimum to the maximum of sorted latencies.
pub fn histogram_of(sorted: &[u64]) -> Histogram {
    let (Some(&lo), Some(&hi)) = (sorted.first(), sorted.last()) else {
        return Histogram::default();
    };
    let step = 1.0 / HISTOGRAM_BINS_PER_DECADE as f64;
    let lo_f = (lo.max(1) as f64).log10();
    let start = (lo_f / step).floor() as i64;
    let mut edges: Vec<u64> = Vec::new();
    let mut k = start;
    loop {
        let e = 10f64.powf(k as f64 * step).round() as u64;
        if edges.last() != Some(&e) {
            edges.push(e);
        }
        if e > hi && edges.len() >= 2 {
            break;
        }
        k += 1;
    }
    if edges[0] > lo {
        edges[0] = lo; // latencies of 0 ns (or below the first edge after rounding)
    }
    let counts = edges
        .windows(2)
        .map(|w| {
            (sorted.partition_point(|&x| x < w[1]) - sorted.partition_point(|&x| x < w[0])) as u64
        })
        .collect();
    Histogram {
        edges_ns: edges,
        counts,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cdf_small_and_large() {
        let v: Vec<u64> = vec![1, 2, 2, 3];
        assert_eq!(
            cdf_points_of(&v, 500),
            vec![CdfPoint(1, 0.25), CdfPoint(2, 0.75), CdfPoint(3, 1.0)]
        );
        let v: Vec<u64> = (1..=100_000).collect();
        let c = cdf_points_of(&v, 500);
        assert_eq!(c.len(), 501);
        assert_eq!(c[0], CdfPoint(1, 1e-5));
        assert_eq!(c.last().unwrap(), &CdfPoint(100_000, 1.0));
        assert!(c.windows(2).all(|w| w[0].0 < w[1].0 && w[0].1 < w[1].1));
    }

    #[test]
    fn histogram_counts_everything() {
        let v: Vec<u64> = (0..10_000u64).map(|i| 1000 + i * i / 50).collect();
        let h = histogram_of(&v);
        assert_eq!(h.counts.iter().sum::<u64>(), v.len() as u64);
        assert_eq!(h.edges_ns.len(), h.counts.len() + 1);
        assert!(h.edges_ns[0] <= 1000 && *h.edges_ns.last().unwrap() > *v.last().unwrap());
        let one = histogram_of(&[0, 0, 0]);
        assert_eq!(one.counts.iter().sum::<u64>(), 3);
    }
}
