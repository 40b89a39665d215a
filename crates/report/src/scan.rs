//! One report's view of a run's `records.bin`: exact statistics from every
//! record, and the reduced series the charts show, in constant memory.
//!
//! A run can hold tens of millions of records, so nothing here keeps one
//! value per IO. The statistics are `RunStats::compute`'s (the very code
//! `flashlab run` uses, over the same shared reader,
//! `flashlab_results::records::RecordFile`), which also yields a fine
//! latency histogram (buckets within 0.1 % of their values) from which the
//! CDF is drawn; one more pass builds the time series buckets and the
//! log-spaced histogram, whose counts are exact.
use std::io;
use std::path::Path;

use flashlab_results::records::{RecordFile, RecordsError};
use flashlab_results::stats::{exact_ranks, LatencyHistogram, RankRequest, RecordSource};
use flashlab_results::RunStats;

use crate::error::ReportError;
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

struct BucketAcc {
    first: u64,
    count: u64,
    min: u64,
    max: u64,
    sum: f64,
}

/// Reads a records file and reduces it. Errors name the file.
pub fn scan_run(path: &Path) -> Result<RunData, ReportError> {
    scan_run_with(path, TIMELINE_BUCKETS, CDF_POINTS)
}

pub fn scan_run_with(
    path: &Path,
    buckets: usize,
    cdf_point_count: usize,
) -> Result<RunData, ReportError> {
    let shown = || path.display().to_string();
    let err = |source: io::Error| ReportError::Io {
        path: shown(),
        source,
    };
    let file = match RecordFile::open(path) {
        Ok(f) => f,
        Err(RecordsError::Io(e)) => return Err(err(e)),
        Err(RecordsError::NotRecords) => return Err(ReportError::NotRecords { path: shown() }),
        Err(RecordsError::Layout {
            header_bytes,
            record_bytes,
        }) => {
            return Err(ReportError::RecordsLayout {
                path: shown(),
                header_bytes,
                record_bytes,
            })
        }
    };
    let (stats, fine) = RunStats::compute(&mut &file).map_err(err)?;
    let n = file.len();
    let bucket_ios = n.div_ceil(buckets.max(1) as u64).max(1);
    let lat = &stats.all.latency;
    let edges = if lat.count > 0 {
        histogram_edges(lat.min_ns, lat.max_ns)
    } else {
        Vec::new()
    };
    let mut counts = vec![0u64; edges.len().saturating_sub(1)];
    let mut damaged = 0u64;
    let mut warmup_end = None;
    let mut out_buckets: Vec<Bucket> = Vec::with_capacity(buckets.min(n as usize));
    let mut cur: Option<BucketAcc> = None;
    file.for_each(|i, r| {
        let Some(r) = r else {
            damaged += 1;
            return;
        };
        if r.is_warmup() {
            warmup_end = Some(i + 1);
        }
        if r.is_error() {
            // A failed IO's latency says nothing about the device's speed:
            // neither plotted nor counted, only reported.
            return;
        }
        let lat = r.latency_ns();
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
        if !r.is_warmup() {
            counts[bin_of(&edges, lat)] += 1;
        }
    })
    .map_err(err)?;
    if let Some(acc) = cur.take() {
        out_buckets.push(finish_bucket(acc));
    }
    let cdf = cdf_points(&mut &file, &fine, cdf_point_count).map_err(err)?;
    Ok(RunData {
        stats,
        records: n,
        damaged,
        torn_bytes: file.torn_bytes(),
        timeline: Timeline {
            ios: n,
            bucket_ios,
            warmup_end,
            buckets: out_buckets,
        },
        cdf,
        histogram: Histogram {
            edges_ns: edges,
            counts,
        },
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

/// CDF points from the fine histogram of a file's measured IOs: the
/// nearest-rank quantile at `points` equal steps of the fraction, plus the
/// minimum; every IO when there are fewer IOs than points. Values and
/// fractions are exact (refined by `exact_ranks`' extra passes over the
/// file, 256 counters per distinct bucket). Equal latencies collapse to
/// their highest fraction.
pub fn cdf_points<S: RecordSource + ?Sized>(
    src: &mut S,
    fine: &LatencyHistogram,
    points: usize,
) -> io::Result<Vec<CdfPoint>> {
    let n = fine.count();
    if n == 0 {
        return Ok(Vec::new());
    }
    let mut ranks: Vec<u64> = if n <= points as u64 {
        (1..=n).collect()
    } else {
        let mut r = vec![1];
        r.extend((1..=points).map(|k| ((k as f64 / points as f64) * n as f64).ceil() as u64));
        r
    };
    ranks.dedup();
    for r in ranks.iter_mut() {
        *r = (*r).clamp(1, n);
    }
    let values = exact_ranks(
        src,
        &[RankRequest {
            mode: None,
            histogram: fine,
            ranks,
        }],
        CDF_REFINE_BITS,
    )?;
    let mut out: Vec<CdfPoint> = Vec::new();
    for (v, at_most) in values.into_iter().next().unwrap_or_default() {
        let f = at_most as f64 / n as f64;
        match out.last_mut() {
            Some(last) if last.0 == v => last.1 = f,
            _ => out.push(CdfPoint(v, f)),
        }
    }
    Ok(out)
}

/// 256 counters per distinct bucket holding CDF points (up to 501 of them).
const CDF_REFINE_BITS: u32 = 8;

/// Log-spaced bin edges (`HISTOGRAM_BINS_PER_DECADE` per decade, rounded
/// to whole nanoseconds) from `lo` to past `hi`.
pub fn histogram_edges(lo: u64, hi: u64) -> Vec<u64> {
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
        if e == u64::MAX {
            // Saturated: the last bin also holds the maximum.
            if edges.len() < 2 {
                edges.insert(0, lo);
            }
            break;
        }
        k += 1;
    }
    if edges[0] > lo {
        edges[0] = lo; // latencies of 0 ns (or below the first edge after rounding)
    }
    edges
}

/// The bin of `v`: bin i is [edges[i], edges[i+1]); the last bin also holds
/// anything above.
fn bin_of(edges: &[u64], v: u64) -> usize {
    edges
        .partition_point(|&e| e <= v)
        .saturating_sub(1)
        .min(edges.len() - 2)
}

/// Log-spaced bins from the minimum to the maximum of latencies in memory.
pub fn histogram_of(latencies: &[u64]) -> Histogram {
    let (Some(&lo), Some(&hi)) = (latencies.iter().min(), latencies.iter().max()) else {
        return Histogram::default();
    };
    let edges = histogram_edges(lo, hi);
    let mut counts = vec![0u64; edges.len() - 1];
    for &v in latencies {
        counts[bin_of(&edges, v)] += 1;
    }
    Histogram {
        edges_ns: edges,
        counts,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    use flashlab_device::Mode;
    use flashlab_results::IoRecord;

    fn cdf_of(v: &[u64], points: usize) -> Vec<CdfPoint> {
        let recs: Vec<IoRecord> = v
            .iter()
            .map(|&lat| IoRecord {
                index: 0,
                stream: 0,
                mode: Mode::Read,
                offset_bytes: 0,
                size_bytes: 4096,
                submit_ns: 5,
                complete_ns: 5 + lat,
                flags: 0,
            })
            .collect();
        let mut h = LatencyHistogram::default();
        v.iter().for_each(|&x| h.record(x));
        cdf_points(&mut &recs[..], &h, points).unwrap()
    }

    #[test]
    fn cdf_small_and_large() {
        let v: Vec<u64> = vec![1, 2, 2, 3];
        assert_eq!(
            cdf_of(&v, 500),
            vec![CdfPoint(1, 0.25), CdfPoint(2, 0.75), CdfPoint(3, 1.0)]
        );
        // Spread to 10^8 ns, so that most points need refined buckets.
        let v: Vec<u64> = (1..=100_000).map(|i| i * 1000 + i % 7).collect();
        let c = cdf_of(&v, 500);
        assert_eq!(c.len(), 501);
        assert_eq!(c[0], CdfPoint(1001, 1e-5));
        assert_eq!(c.last().unwrap(), &CdfPoint(100_000_000 + 100_000 % 7, 1.0));
        assert!(c.windows(2).all(|w| w[0].0 < w[1].0 && w[0].1 < w[1].1));
        // Every point is an exact value of the data with its exact fraction.
        for p in &c {
            assert!(v.contains(&p.0), "{p:?}");
            let below = v.iter().filter(|&&x| x <= p.0).count() as f64 / v.len() as f64;
            assert_eq!(below, p.1, "{p:?}");
        }
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
