//! Per-run statistics, computed from the per-IO records alone.
//!
//! Warm-up IOs (IOIgnore) and failed IOs are excluded. Percentiles are exact
//! (nearest rank over all measured IOs, not a histogram approximation): a run
//! holds at most a few million IOs and sorting them costs less than reading
//! them.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::records::IoRecord;

/// Response-time statistics of a set of IOs, in nanoseconds.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct LatencyStats {
    pub count: u64,
    pub min_ns: u64,
    pub max_ns: u64,
    pub mean_ns: f64,
    /// Population standard deviation.
    pub stddev_ns: f64,
    pub p50_ns: u64,
    pub p90_ns: u64,
    pub p99_ns: u64,
    pub p999_ns: u64,
}

impl LatencyStats {
    /// From latencies; sorts them in place.
    pub fn from_latencies(lat: &mut [u64]) -> LatencyStats {
        if lat.is_empty() {
            return LatencyStats::default();
        }
        lat.sort_unstable();
        let n = lat.len();
        let mean = lat.iter().map(|&x| x as f64).sum::<f64>() / n as f64;
        let var = lat.iter().map(|&x| (x as f64 - mean).powi(2)).sum::<f64>() / n as f64;
        let pct = |p: f64| lat[((p * n as f64).ceil() as usize).clamp(1, n) - 1];
        LatencyStats {
            count: n as u64,
            min_ns: lat[0],
            max_ns: lat[n - 1],
            mean_ns: mean,
            stddev_ns: var.sqrt(),
            p50_ns: pct(0.50),
            p90_ns: pct(0.90),
            p99_ns: pct(0.99),
            p999_ns: pct(0.999),
        }
    }
}

/// Throughput and latency of the measured part of one run (or one mode of it).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Throughput {
    pub ios: u64,
    pub bytes: u64,
    /// From the first measured submission to the last measured completion.
    pub window_ns: u64,
    pub iops: f64,
    /// 10^6 bytes per second.
    pub mb_per_s: f64,
    pub latency: LatencyStats,
}

/// Statistics of one run.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct RunStats {
    /// IOs excluded as warm-up (IOIgnore).
    pub ios_ignored: u64,
    pub ios_failed: u64,
    #[serde(flatten)]
    pub all: Throughput,
    /// The same per mode ("read", "write", "trim"), for mixed patterns.
    pub by_mode: BTreeMap<String, Throughput>,
}

fn throughput<'a>(records: impl Iterator<Item = &'a IoRecord>) -> Throughput {
    let mut lat = Vec::new();
    let mut bytes = 0u64;
    let mut first = u64::MAX;
    let mut last = 0u64;
    for r in records {
        lat.push(r.latency_ns());
        bytes += r.size_bytes as u64;
        first = first.min(r.submit_ns);
        last = last.max(r.complete_ns);
    }
    let ios = lat.len() as u64;
    let window_ns = if ios == 0 {
        0
    } else {
        last.saturating_sub(first)
    };
    let secs = window_ns as f64 / 1e9;
    Throughput {
        ios,
        bytes,
        window_ns,
        iops: if secs > 0.0 { ios as f64 / secs } else { 0.0 },
        mb_per_s: if secs > 0.0 {
            bytes as f64 / secs / 1e6
        } else {
            0.0
        },
        latency: LatencyStats::from_latencies(&mut lat),
    }
}

impl RunStats {
    pub fn from_records(records: &[IoRecord]) -> RunStats {
        let measured = || records.iter().filter(|r| !r.is_warmup() && !r.is_error());
        let mut by_mode = BTreeMap::new();
        let modes: std::collections::BTreeSet<_> = measured().map(|r| r.mode).collect();
        if modes.len() > 1 {
            for m in modes {
                by_mode.insert(
                    m.name().to_string(),
                    throughput(measured().filter(|r| r.mode == m)),
                );
            }
        }
        RunStats {
            ios_ignored: records.iter().filter(|r| r.is_warmup()).count() as u64,
            ios_failed: records.iter().filter(|r| r.is_error()).count() as u64,
            all: throughput(measured()),
            by_mode,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::records::FLAG_WARMUP;
    use flashlab_device::Mode;

    fn rec(i: u64, submit: u64, lat: u64, flags: u8) -> IoRecord {
        IoRecord {
            index: i,
            stream: 0,
            mode: Mode::Read,
            offset_bytes: 0,
            size_bytes: 1_000_000,
            submit_ns: submit,
            complete_ns: submit + lat,
            flags,
        }
    }

    #[test]
    fn percentiles_are_nearest_rank() {
        let mut lat: Vec<u64> = (1..=1000).collect();
        let s = LatencyStats::from_latencies(&mut lat);
        assert_eq!(
            (s.min_ns, s.p50_ns, s.p90_ns, s.p99_ns, s.p999_ns, s.max_ns),
            (1, 500, 900, 990, 999, 1000)
        );
        assert_eq!(s.mean_ns, 500.5);
    }

    #[test]
    fn warmup_is_excluded_and_throughput_uses_the_window() {
        // Two warm-up IOs of 1 s, then 10 back-to-back IOs of 100 ms each.
        let mut recs = vec![
            rec(0, 0, 1_000_000_000, FLAG_WARMUP),
            rec(1, 1_000_000_000, 1_000_000_000, FLAG_WARMUP),
        ];
        for i in 0..10 {
            recs.push(rec(i + 2, 2_000_000_000 + i * 100_000_000, 100_000_000, 0));
        }
        let s = RunStats::from_records(&recs);
        assert_eq!(s.ios_ignored, 2);
        assert_eq!(s.all.ios, 10);
        assert_eq!(s.all.window_ns, 1_000_000_000);
        assert!((s.all.iops - 10.0).abs() < 1e-9);
        assert!((s.all.mb_per_s - 10.0).abs() < 1e-9);
        assert_eq!(s.all.latency.max_ns, 100_000_000);
        assert_eq!(s.all.latency.stddev_ns, 0.0);
    }
}
