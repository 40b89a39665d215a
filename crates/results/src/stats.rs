//! Per-run statistics, computed from the per-IO records alone.
//!
//! Warm-up IOs (IOIgnore) and failed IOs are excluded. Percentiles are exact
//! nearest-rank values over all measured IOs, computed in memory that does
//! not grow with the run: a first pass over the records fills a fine
//! log-linear histogram ([`LatencyHistogram`], buckets at most 1/1024 of
//! their value wide) per mode; each percentile's rank falls into one bucket,
//! and when that bucket holds more than one distinct value (it remembers
//! whether it does), further passes count the values inside it in at most
//! 131072 sub-ranges until the rank's exact value is known (one extra pass
//! for latencies below 268 ms; none when every rank's bucket holds a single
//! value, as a simulated device's usually do). The mean and the
//! standard deviation are exact too: both come from integer sums (of the
//! latencies and of their squares), rounded once, at the end.
//!
//! Memory is a constant (about 4 MB of histograms, plus 1 MB per
//! percentile being refined), whatever the number of IOs.

use std::collections::BTreeMap;
use std::io;

use serde::{Deserialize, Serialize};

use crate::records::{IoRecord, RecordFile};
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
    /// From latencies held in memory; sorts them in place. The reference
    /// the streaming [`RunStats::compute`] is tested against.
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

/// Values below this are counted exactly, one bucket per nanosecond.
const EXACT_BELOW: u64 = 1 << (SUB_BUCKET_BITS + 1);
/// log2 of the buckets per power of two above [`EXACT_BELOW`]: a bucket is
/// at most 2^-10 (0.098 %) of its values wide.
pub const SUB_BUCKET_BITS: u32 = 10;
const SUB_BUCKETS: u64 = 1 << SUB_BUCKET_BITS;
const BUCKETS: usize =
    EXACT_BELOW as usize + (63 - SUB_BUCKET_BITS as usize) * SUB_BUCKETS as usize;

/// A fine log-linear latency histogram (HDR-style): exact below 2048 ns,
/// then 1024 buckets per power of two, so that any value it reports for a
/// bucket is within 0.1 % of every latency in that bucket. Fixed size
/// (56320 counters), whatever the number of IOs.
///
/// Each bucket also remembers its value while it has held only one: a
/// rank falling in such a bucket is known exactly without reading the
/// records again. A simulated device's latencies are sums of a few fixed
/// timings (a 2.5 M-IO random-write run has 66 distinct values), so its
/// percentiles usually need no pass over the records file at all.
#[derive(Clone, Debug, PartialEq)]
pub struct LatencyHistogram {
    counts: Vec<u64>,
    /// Per bucket: the value of all its latencies, or [`MIXED`] once two
    /// differ (meaningless while the bucket is empty).
    only: Vec<u64>,
    total: u64,
}

/// [`LatencyHistogram::only`] of a bucket holding two or more distinct
/// values. A latency of exactly `u64::MAX` ns is taken for mixed too, which
/// only costs that bucket its shortcut.
const MIXED: u64 = u64::MAX;

impl Default for LatencyHistogram {
    fn default() -> Self {
        LatencyHistogram {
            counts: vec![0; BUCKETS],
            only: vec![MIXED; BUCKETS],
            total: 0,
        }
    }
}

fn bucket_of(v: u64) -> usize {
    if v < EXACT_BELOW {
        return v as usize;
    }
    let e = 63 - v.leading_zeros() as u64; // >= SUB_BUCKET_BITS + 1
    let shift = e - SUB_BUCKET_BITS as u64;
    (EXACT_BELOW + (e - SUB_BUCKET_BITS as u64 - 1) * SUB_BUCKETS + ((v >> shift) - SUB_BUCKETS))
        as usize
}

/// The first value of bucket `i` and log2 of its width.
fn bucket_range(i: usize) -> (u64, u32) {
    let i = i as u64;
    if i < EXACT_BELOW {
        return (i, 0);
    }
    let j = i - EXACT_BELOW;
    let e = SUB_BUCKET_BITS as u64 + 1 + j / SUB_BUCKETS;
    let shift = (e - SUB_BUCKET_BITS as u64) as u32;
    ((SUB_BUCKETS + j % SUB_BUCKETS) << shift, shift)
}

impl LatencyHistogram {
    #[inline]
    pub fn record(&mut self, latency_ns: u64) {
        let b = bucket_of(latency_ns);
        if self.counts[b] == 0 {
            self.only[b] = latency_ns;
        } else if self.only[b] != latency_ns {
            self.only[b] = MIXED;
        }
        self.counts[b] += 1;
        self.total += 1;
    }

    pub fn add(&mut self, other: &LatencyHistogram) {
        for (b, &c) in other.counts.iter().enumerate() {
            if c == 0 {
                continue;
            }
            if self.counts[b] == 0 {
                self.only[b] = other.only[b];
            } else if self.only[b] != other.only[b] {
                self.only[b] = MIXED;
            }
            self.counts[b] += c;
        }
        self.total += other.total;
    }

    /// The one value every latency in (non-empty) bucket `b` has, if they
    /// all have the same. Buckets 1 ns wide always do.
    fn single_value(&self, b: usize) -> Option<u64> {
        match bucket_range(b) {
            (lo, 0) => Some(lo),
            _ if self.only[b] != MIXED => Some(self.only[b]),
            _ => None,
        }
    }

    pub fn count(&self) -> u64 {
        self.total
    }

    /// Non-empty buckets in increasing order: `(first_ns, last_ns, count)`.
    pub fn buckets(&self) -> impl Iterator<Item = (u64, u64, u64)> + '_ {
        self.counts
            .iter()
            .enumerate()
            .filter(|(_, &c)| c > 0)
            .map(|(i, &c)| {
                let (lo, shift) = bucket_range(i);
                (lo, lo + ((1u64 << shift) - 1), c)
            })
    }

    /// Population standard deviation around `mean_ns`, each value taken as
    /// its bucket's middle: within a bucket's width (0.1 %) of the exact one.
    fn stddev_ns(&self, mean_ns: f64) -> f64 {
        if self.total == 0 {
            return 0.0;
        }
        let m2: f64 = self
            .buckets()
            .map(|(lo, hi, c)| {
                let d = (lo as f64 + hi as f64) / 2.0 - mean_ns;
                c as f64 * d * d
            })
            .sum();
        (m2 / self.total as f64).sqrt()
    }

    /// The bucket holding the `rank`-th smallest value (1-based):
    /// `(index, rank within the bucket)`.
    fn locate(&self, rank: u64) -> (usize, u64) {
        let mut before = 0u64;
        for (i, &c) in self.counts.iter().enumerate() {
            if before + c >= rank {
                return (i, rank - before);
            }
            before += c;
        }
        unreachable!("rank {rank} beyond {} values", self.total)
    }
}

/// Something statistics can read, any number of times, from the start.
pub trait RecordSource {
    fn pass(&mut self, visit: &mut dyn FnMut(&IoRecord)) -> io::Result<()>;
}

impl RecordSource for &[IoRecord] {
    fn pass(&mut self, visit: &mut dyn FnMut(&IoRecord)) -> io::Result<()> {
        self.iter().for_each(visit);
        Ok(())
    }
}

/// A file's damaged records (invalid mode byte) are skipped, as a report
/// counts them separately.
impl RecordSource for &RecordFile {
    fn pass(&mut self, visit: &mut dyn FnMut(&IoRecord)) -> io::Result<()> {
        self.for_each(|_, r| {
            if let Some(r) = r {
                visit(&r)
            }
        })
    }
}

/// Accumulators of one group of measured IOs (one mode, or all).
#[derive(Clone)]
struct Acc {
    ios: u64,
    bytes: u64,
    first_submit: u64,
    last_complete: u64,
    sum_ns: u128,
    /// Sum of squared latencies, exact: the variance is computed once, at
    /// the end, from integers (`n * sum_sq - sum^2`), so a record costs no
    /// division (Welford's running mean made a chain of divisions, one per
    /// record, about a quarter of the records thread's own user time) and
    /// merging groups is plain addition. Saturates only beyond 2^128 ns^2
    /// (e.g. a million IOs of 200 days each); the deviation then comes from
    /// the histogram.
    sum_sq_ns: u128,
    min_ns: u64,
    max_ns: u64,
    hist: LatencyHistogram,
}

impl Default for Acc {
    fn default() -> Self {
        Acc {
            ios: 0,
            bytes: 0,
            first_submit: u64::MAX,
            last_complete: 0,
            sum_ns: 0,
            sum_sq_ns: 0,
            min_ns: u64::MAX,
            max_ns: 0,
            hist: LatencyHistogram::default(),
        }
    }
}

impl Acc {
    fn add(&mut self, r: &IoRecord) {
        let lat = r.latency_ns();
        self.ios += 1;
        self.bytes += r.size_bytes as u64;
        self.first_submit = self.first_submit.min(r.submit_ns);
        self.last_complete = self.last_complete.max(r.complete_ns);
        self.sum_ns += lat as u128;
        self.sum_sq_ns = self.sum_sq_ns.saturating_add(lat as u128 * lat as u128);
        self.min_ns = self.min_ns.min(lat);
        self.max_ns = self.max_ns.max(lat);
        self.hist.record(lat);
    }

    /// Population standard deviation: exact integer moments, one rounding
    /// (to f64) before the square root.
    fn stddev_ns(&self) -> f64 {
        let n = self.ios as u128;
        if n == 0 {
            return 0.0;
        }
        let saturated = self.sum_sq_ns == u128::MAX;
        match n
            .checked_mul(self.sum_sq_ns)
            .zip(self.sum_ns.checked_mul(self.sum_ns))
        {
            Some((a, b)) if !saturated => (a.saturating_sub(b) as f64).sqrt() / self.ios as f64,
            _ => self.hist.stddev_ns(self.sum_ns as f64 / self.ios as f64),
        }
    }

    /// Merges another group's accumulators: every moment is a sum.
    fn merge(&mut self, o: &Acc) {
        if o.ios == 0 {
            return;
        }
        self.ios += o.ios;
        self.bytes += o.bytes;
        self.first_submit = self.first_submit.min(o.first_submit);
        self.last_complete = self.last_complete.max(o.last_complete);
        self.sum_ns += o.sum_ns;
        self.sum_sq_ns = self.sum_sq_ns.saturating_add(o.sum_sq_ns);
        self.min_ns = self.min_ns.min(o.min_ns);
        self.max_ns = self.max_ns.max(o.max_ns);
        self.hist.add(&o.hist);
    }
}

const PERCENTILES: [f64; 4] = [0.50, 0.90, 0.99, 0.999];

/// One request to [`exact_ranks`]: the measured IOs of a group (`None`: all
/// modes; `Some(code)`: one mode), their fine histogram, and the 1-based
/// ranks whose exact values are wanted.
pub struct RankRequest<'a> {
    pub mode: Option<u8>,
    pub histogram: &'a LatencyHistogram,
    pub ranks: Vec<u64>,
}

/// A value range still being narrowed down: [lo, lo + 2^shift), holding the
/// ranks `members` as (position in the request, rank within the range).
struct Pending {
    lo: u64,
    shift: u32,
    members: Vec<(usize, u64)>,
    counts: Vec<u64>,
}

/// The exact value at each requested rank, and how many of the group's IOs
/// are at most that value (for CDFs), in memory that does not grow
/// with the IOs: each rank's fine-histogram bucket is narrowed by passes
/// over `src` that count the values inside it in 2^`refine_bits`
/// sub-ranges, until the sub-range is one nanosecond wide. Ranks sharing a
/// range share its counters; ranges are disjoint, found by binary search.
pub fn exact_ranks<S: RecordSource + ?Sized>(
    src: &mut S,
    requests: &[RankRequest<'_>],
    refine_bits: u32,
) -> io::Result<Vec<Vec<(u64, u64)>>> {
    let mut out: Vec<Vec<(u64, u64)>> = requests
        .iter()
        .map(|r| vec![(0, 0); r.ranks.len()])
        .collect();
    let mut pending: Vec<Vec<Pending>> = Vec::with_capacity(requests.len());
    for (gi, req) in requests.iter().enumerate() {
        let mut ranges: BTreeMap<u64, Pending> = BTreeMap::new();
        for (ri, &rank) in req.ranks.iter().enumerate() {
            let (b, k) = req.histogram.locate(rank);
            if let Some(v) = req.histogram.single_value(b) {
                out[gi][ri] = (v, rank - k + req.histogram.counts[b]);
            } else {
                let (lo, shift) = bucket_range(b);
                ranges
                    .entry(lo)
                    .or_insert_with(|| Pending {
                        lo,
                        shift,
                        members: Vec::new(),
                        counts: Vec::new(),
                    })
                    .members
                    .push((ri, k));
            }
        }
        pending.push(ranges.into_values().collect());
    }
    while pending.iter().any(|g| !g.is_empty()) {
        for p in pending.iter_mut().flatten() {
            let sub = p.shift.saturating_sub(refine_bits);
            p.counts = vec![0; 1 << (p.shift - sub)];
        }
        src.pass(&mut |r| {
            if r.is_warmup() || r.is_error() {
                return;
            }
            let lat = r.latency_ns();
            for (req, ranges) in requests.iter().zip(pending.iter_mut()) {
                if ranges.is_empty() || req.mode.is_some_and(|m| m != r.mode.code()) {
                    continue;
                }
                let i = ranges.partition_point(|p| p.lo <= lat);
                if i == 0 {
                    continue;
                }
                let p = &mut ranges[i - 1];
                if (lat - p.lo) >> p.shift == 0 {
                    let sub = p.shift.saturating_sub(refine_bits);
                    p.counts[((lat - p.lo) >> sub) as usize] += 1;
                }
            }
        })?;
        for (gi, ranges) in pending.iter_mut().enumerate() {
            let mut next: BTreeMap<u64, Pending> = BTreeMap::new();
            for p in ranges.drain(..) {
                let sub = p.shift.saturating_sub(refine_bits);
                for (ri, k) in p.members {
                    let mut before = 0u64;
                    let mut at = p.counts.len() - 1;
                    for (i, &c) in p.counts.iter().enumerate() {
                        if before + c >= k {
                            at = i;
                            break;
                        }
                        before += c;
                    }
                    let lo = p.lo + ((at as u64) << sub);
                    if sub == 0 {
                        // Below the range: rank - k; in it, below lo: before.
                        let rank = requests[gi].ranks[ri];
                        out[gi][ri] = (lo, rank - k + before + p.counts[at]);
                    } else {
                        next.entry(lo)
                            .or_insert_with(|| Pending {
                                lo,
                                shift: sub,
                                members: Vec::new(),
                                counts: Vec::new(),
                            })
                            .members
                            .push((ri, k - before));
                    }
                }
            }
            *ranges = next.into_values().collect();
        }
    }
    Ok(out)
}

/// Sub-ranges per refinement pass for the four percentiles (2^17 counters
/// of 8 bytes each: one extra pass for latencies below 268 ms; a run of
/// garbage-collecting writes has its p99.9 above 134 ms, where 2^16 took
/// two passes over the file).
const REFINE_BITS: u32 = 17;

/// Exact nearest-rank percentiles of each group.
fn percentiles<S: RecordSource + ?Sized>(
    src: &mut S,
    groups: &[(Option<u8>, &Acc)],
) -> io::Result<Vec<[u64; 4]>> {
    let requests: Vec<RankRequest<'_>> = groups
        .iter()
        .map(|(mode, acc)| RankRequest {
            mode: *mode,
            histogram: &acc.hist,
            ranks: if acc.ios == 0 {
                Vec::new()
            } else {
                PERCENTILES
                    .iter()
                    .map(|p| ((p * acc.ios as f64).ceil() as u64).clamp(1, acc.ios))
                    .collect()
            },
        })
        .collect();
    let values = exact_ranks(src, &requests, REFINE_BITS)?;
    Ok(values
        .into_iter()
        .map(|v| {
            let mut a = [0u64; 4];
            for (x, (y, _)) in a.iter_mut().zip(v) {
                *x = y;
            }
            a
        })
        .collect())
}

/// [`percentiles`] from each group's fine histogram alone.
fn histogram_percentiles(groups: &[(Option<u8>, &Acc)]) -> Vec<[u64; 4]> {
    groups
        .iter()
        .map(|(_, acc)| {
            let mut out = [0u64; 4];
            if acc.ios == 0 {
                return out;
            }
            for (x, p) in out.iter_mut().zip(PERCENTILES) {
                let rank = ((p * acc.ios as f64).ceil() as u64).clamp(1, acc.ios);
                let (b, _) = acc.hist.locate(rank);
                *x = acc.hist.single_value(b).unwrap_or_else(|| {
                    let (lo, shift) = bucket_range(b);
                    let middle = lo + ((1u64 << shift) >> 1);
                    middle.clamp(acc.min_ns, acc.max_ns)
                });
            }
            out
        })
        .collect()
}

fn throughput(acc: &Acc, pct: [u64; 4]) -> Throughput {
    let ios = acc.ios;
    let window_ns = if ios == 0 {
        0
    } else {
        acc.last_complete.saturating_sub(acc.first_submit)
    };
    let secs = window_ns as f64 / 1e9;
    let latency = if ios == 0 {
        LatencyStats::default()
    } else {
        LatencyStats {
            count: ios,
            min_ns: acc.min_ns,
            max_ns: acc.max_ns,
            mean_ns: (acc.sum_ns as f64) / ios as f64,
            stddev_ns: acc.stddev_ns(),
            p50_ns: pct[0],
            p90_ns: pct[1],
            p99_ns: pct[2],
            p999_ns: pct[3],
        }
    };
    Throughput {
        ios,
        bytes: acc.bytes,
        window_ns,
        iops: if secs > 0.0 { ios as f64 / secs } else { 0.0 },
        mb_per_s: if secs > 0.0 {
            acc.bytes as f64 / secs / 1e6
        } else {
            0.0
        },
        latency,
    }
}

impl RunStats {
    /// Statistics of records in memory.
    pub fn from_records(records: &[IoRecord]) -> RunStats {
        Self::compute(&mut &*records)
            .expect("reading memory cannot fail")
            .0
    }

    /// Statistics of a records file, streamed (constant memory).
    pub fn from_file(file: &RecordFile) -> io::Result<RunStats> {
        Ok(Self::compute(&mut &*file)?.0)
    }

    /// Statistics of any record source, and the fine histogram of every
    /// measured IO's latency (for CDFs, with [`exact_ranks`]).
    pub fn compute<S: RecordSource + ?Sized>(
        src: &mut S,
    ) -> io::Result<(RunStats, LatencyHistogram)> {
        let mut tally = Tally::default();
        src.pass(&mut |r| tally.add(r))?;
        Self::from_tally(src, tally)
    }

    /// Statistics from a first pass already made ([`Tally`], e.g. by the
    /// records writer while the run went) over exactly the records `src`
    /// holds: only the passes that refine percentiles read `src`. The result
    /// is [`Self::compute`]'s, bit for bit (it is the same code).
    pub fn from_tally<S: RecordSource + ?Sized>(
        src: &mut S,
        tally: Tally,
    ) -> io::Result<(RunStats, LatencyHistogram)> {
        Self::from_tally_with(tally, |groups| percentiles(src, groups))
    }

    /// Statistics of a run whose records were not kept
    /// ([`RecordWriter::tally_only`](crate::records::RecordWriter::tally_only)):
    /// everything as [`Self::from_tally`] except the percentiles, which are
    /// read from the fine histogram instead of refined over the records:
    /// exact below 2048 ns and wherever the rank's bucket holds a single
    /// value; otherwise the middle of the value's bucket, within 0.05 % of
    /// the exact nearest-rank value (a bucket is at most 2^-10 of its
    /// values wide), and never outside the group's min..max.
    pub fn from_histograms(tally: Tally) -> (RunStats, LatencyHistogram) {
        Self::from_tally_with(tally, |groups| Ok(histogram_percentiles(groups)))
            .expect("the histograms need no reading")
    }

    fn from_tally_with(
        tally: Tally,
        percentiles: impl FnOnce(&[(Option<u8>, &Acc)]) -> io::Result<Vec<[u64; 4]>>,
    ) -> io::Result<(RunStats, LatencyHistogram)> {
        let Tally {
            modes,
            ignored,
            failed,
            records: _,
        } = tally;
        let mut all = Acc::default();
        for m in &modes {
            all.merge(m);
        }
        let present: Vec<u8> = (0..3u8).filter(|&m| modes[m as usize].ios > 0).collect();
        let mut groups: Vec<(Option<u8>, &Acc)> = vec![(None, &all)];
        if present.len() > 1 {
            groups.extend(present.iter().map(|&m| (Some(m), &modes[m as usize])));
        }
        let pct = percentiles(&groups)?;
        let mut by_mode = BTreeMap::new();
        for (g, p) in groups.iter().zip(&pct).skip(1) {
            let m = flashlab_device::Mode::from_code(g.0.expect("a mode group")).expect("valid");
            by_mode.insert(m.name().to_string(), throughput(g.1, *p));
        }
        let stats = RunStats {
            ios_ignored: ignored,
            ios_failed: failed,
            all: throughput(&all, pct[0]),
            by_mode,
        };
        Ok((stats, all.hist))
    }
}

/// The first pass of [`RunStats::compute`], record by record: counts,
/// sums (of latencies and of their squares) and the fine histogram of each
/// mode. Whoever sees the records in file order can make it (the records
/// writer does, on its own thread, so that a run's statistics need no pass
/// of their own); only the percentile refinement then reads the file.
#[derive(Clone, Default)]
pub struct Tally {
    modes: [Acc; 3],
    ignored: u64,
    failed: u64,
    records: u64,
}

impl Tally {
    #[inline]
    pub fn add(&mut self, r: &IoRecord) {
        self.records += 1;
        if r.is_warmup() {
            self.ignored += 1;
        }
        if r.is_error() {
            self.failed += 1;
        }
        if !r.is_warmup() && !r.is_error() {
            self.modes[r.mode.code() as usize].add(r);
        }
    }

    /// Records seen (measured, warm-up and failed).
    pub fn records(&self) -> u64 {
        self.records
    }
}

/// The 0.975 quantile of Student's t with `df` degrees of freedom (for a
/// 95 % two-sided interval). Exact table for small df, Cornish-Fisher
/// expansion beyond (error < 1e-3).
pub fn t975(df: usize) -> f64 {
    const TABLE: [f64; 30] = [
        12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228, 2.201, 2.179, 2.160,
        2.145, 2.131, 2.120, 2.110, 2.101, 2.093, 2.086, 2.080, 2.074, 2.069, 2.064, 2.060, 2.056,
        2.052, 2.048, 2.045, 2.042,
    ];
    match df {
        0 => f64::INFINITY,
        d if d <= 30 => TABLE[d - 1],
        d => {
            let z: f64 = 1.959964;
            let d = d as f64;
            z + (z.powi(3) + z) / (4.0 * d)
                + (5.0 * z.powi(5) + 16.0 * z.powi(3) + 3.0 * z) / (96.0 * d * d)
        }
    }
}

/// The mean of `values` and the half width of its 95 % confidence interval
/// (Student's t over the sample standard deviation; 0 for fewer than two
/// values). The one computation behind [`Interval95::of`] and the suite's
/// batch-means stop rule, which compares the half width bit for bit.
pub fn mean_and_half_width95(values: &[f64]) -> (f64, f64) {
    let n = values.len();
    if n == 0 {
        return (0.0, 0.0);
    }
    let mean = values.iter().sum::<f64>() / n as f64;
    if n < 2 {
        return (mean, 0.0);
    }
    let var = values.iter().map(|v| (v - mean).powi(2)).sum::<f64>() / (n - 1) as f64;
    (mean, t975(n - 1) * (var / n as f64).sqrt())
}

/// The mean of repeated measurements with its 95 % confidence interval
/// (Student's t over the sample standard deviation: the repeats are few
/// and their spread unknown). One value has no interval (low = high =
/// the value, `n` = 1 says why).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Interval95 {
    pub n: usize,
    pub mean: f64,
    pub low: f64,
    pub high: f64,
}

impl Interval95 {
    pub fn of(values: &[f64]) -> Interval95 {
        let n = values.len();
        if n == 0 {
            return Interval95::default();
        }
        let (mean, half) = mean_and_half_width95(values);
        Interval95 {
            n,
            mean,
            low: mean - half,
            high: mean + half,
        }
    }

    /// Half the interval's width relative to the mean (0.05 is +-5 %).
    pub fn relative_half_width(&self) -> f64 {
        if self.mean == 0.0 {
            0.0
        } else {
            (self.high - self.low) / 2.0 / self.mean.abs()
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_95_percent_interval_of_repeats_uses_student_s_t() {
        // Mean 10, sample sd 1 over 4 repeats: half width t(3) * 1 / 2.
        let i = Interval95::of(&[9.0, 9.0, 11.0, 11.0]);
        let sd = (4.0f64 / 3.0).sqrt();
        assert_eq!((i.n, i.mean), (4, 10.0));
        assert!((i.high - 10.0 - 3.182 * sd / 2.0).abs() < 1e-9, "{i:?}");
        assert!((10.0 - i.low - 3.182 * sd / 2.0).abs() < 1e-9, "{i:?}");
        // One window: no interval, and it says so with n = 1.
        let one = Interval95::of(&[5.0]);
        assert_eq!((one.n, one.low, one.high), (1, 5.0, 5.0));
        assert!((t975(60) - 2.000).abs() < 2e-3);
    }
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
    fn histogram_percentiles_are_within_half_a_bucket_of_the_exact_ones() {
        // Latencies from 100 ns to ~40 ms, spread over many buckets and
        // octaves; the exact statistics refine over the records, the
        // histogram ones never look at them again.
        let mut x = 0x9e37_79b9_7f4a_7c15u64;
        let recs: Vec<IoRecord> = (0..20_000)
            .map(|i| {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                rec(i, i * 1000, 100 + (x % 40_000_000) / (1 + i % 7), 0)
            })
            .collect();
        let mut tally = Tally::default();
        recs.iter().for_each(|r| tally.add(r));
        let exact = RunStats::from_tally(&mut &recs[..], tally.clone())
            .unwrap()
            .0;
        let approx = RunStats::from_histograms(tally).0;
        let (e, a) = (&exact.all.latency, &approx.all.latency);
        assert_eq!(
            (e.min_ns, e.max_ns, e.mean_ns),
            (a.min_ns, a.max_ns, a.mean_ns)
        );
        assert_eq!(exact.all.iops, approx.all.iops);
        for (x, y) in [
            (e.p50_ns, a.p50_ns),
            (e.p90_ns, a.p90_ns),
            (e.p99_ns, a.p99_ns),
            (e.p999_ns, a.p999_ns),
        ] {
            let rel = (y as f64 - x as f64).abs() / x as f64;
            assert!(rel <= 1.0 / 2048.0, "{y} vs exact {x}");
        }
        assert_ne!(
            e.p50_ns, a.p50_ns,
            "a value this large is not in an exact bucket"
        );
    }

    /// A record source that counts the passes made over it.
    struct Counted<'a> {
        recs: &'a [IoRecord],
        passes: usize,
    }

    impl RecordSource for Counted<'_> {
        fn pass(&mut self, visit: &mut dyn FnMut(&IoRecord)) -> io::Result<()> {
            self.passes += 1;
            self.recs.iter().for_each(visit);
            Ok(())
        }
    }

    /// The order statistics (the deviation from sorting rounds differently).
    fn ranks(l: &LatencyStats) -> [u64; 6] {
        [l.min_ns, l.p50_ns, l.p90_ns, l.p99_ns, l.p999_ns, l.max_ns]
    }

    fn tally_of(recs: &[IoRecord]) -> Tally {
        let mut tally = Tally::default();
        recs.iter().for_each(|r| tally.add(r));
        tally
    }

    /// Latencies like a simulated device's: a few fixed values, far above
    /// the exact 1-ns buckets (1.077 ms is in a bucket 1024 ns wide).
    fn few_values(n: u64, values: &[u64]) -> Vec<IoRecord> {
        (0..n)
            .map(|i| {
                rec(
                    i,
                    i * 10_000_000,
                    values[(i * 7 % 11) as usize % values.len()],
                    0,
                )
            })
            .collect()
    }

    /// The statistics of `recs` from their tally, the passes that took
    /// over them, and their latencies' statistics by sorting.
    fn stats_and_passes(recs: &[IoRecord]) -> (RunStats, usize, LatencyStats) {
        let mut lat: Vec<u64> = recs.iter().map(|r| r.latency_ns()).collect();
        let mut src = Counted { recs, passes: 0 };
        let stats = RunStats::from_tally(&mut src, tally_of(recs)).unwrap().0;
        (stats, src.passes, LatencyStats::from_latencies(&mut lat))
    }

    #[test]
    fn percentiles_of_single_valued_buckets_need_no_pass_over_the_records() {
        let recs = few_values(10_000, &[1_077_000, 2_154_321, 9_999_999, 1_063_000_017]);
        let (stats, passes, sorted) = stats_and_passes(&recs);
        assert_eq!(passes, 0, "every percentile's bucket held one value");
        assert_eq!(ranks(&stats.all.latency), ranks(&sorted));
        // The histogram alone (a sweep's `records = false`) is exact too.
        let approx = RunStats::from_histograms(tally_of(&recs)).0.all.latency;
        assert_eq!(ranks(&approx), ranks(&sorted));
    }

    #[test]
    fn a_bucket_with_two_values_is_refined_over_the_records() {
        // 1_077_000 and 1_077_001 share a 1024-ns bucket: that bucket's
        // ranks need the records, and the pass gives the exact values.
        let recs = few_values(10_000, &[1_077_000, 1_077_001, 9_999_999]);
        let (stats, passes, sorted) = stats_and_passes(&recs);
        assert_eq!(passes, 1);
        assert_eq!(ranks(&stats.all.latency), ranks(&sorted));
        let approx = RunStats::from_histograms(tally_of(&recs)).0.all.latency;
        assert_ne!(
            approx.p50_ns, sorted.p50_ns,
            "a mixed bucket gives its middle"
        );
    }

    #[test]
    fn merged_modes_keep_a_bucket_single_only_when_both_hold_the_same_value() {
        // Reads all at 1_077_000, writes all at 1_077_001: each mode's
        // buckets are single-valued, the merged group's one bucket is not.
        let recs: Vec<IoRecord> = (0..1000)
            .map(|i| {
                let mut r = rec(i, i * 10_000_000, 1_077_000 + i % 2, 0);
                r.mode = if i % 2 == 0 { Mode::Read } else { Mode::Write };
                r
            })
            .collect();
        let (stats, passes, _) = stats_and_passes(&recs);
        assert_eq!(passes, 1, "only the merged group needed a pass");
        assert_eq!(stats.by_mode["read"].latency.p99_ns, 1_077_000);
        assert_eq!(stats.by_mode["write"].latency.p50_ns, 1_077_001);
        assert_eq!(
            (stats.all.latency.p50_ns, stats.all.latency.p99_ns),
            (1_077_000, 1_077_001)
        );
        let same: Vec<IoRecord> = recs
            .iter()
            .map(|r| IoRecord {
                complete_ns: r.submit_ns + 1_077_000,
                ..*r
            })
            .collect();
        let (_, passes, _) = stats_and_passes(&same);
        assert_eq!(passes, 0, "the same value in both modes stays single");
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

    #[test]
    fn the_deviation_is_exact_for_a_large_mean_with_a_tiny_spread() {
        // 10^12 ns plus 0, 1 or 2 ns, a third each: the population standard
        // deviation is sqrt(2/3) ns exactly; a running f64 mean of values
        // near 2^40 keeps about 12 bits of their fraction.
        let recs: Vec<IoRecord> = (0..30_000u64)
            .map(|i| rec(i, i, 1_000_000_000_000 + i % 3, 0))
            .collect();
        let s = RunStats::from_records(&recs).all.latency;
        assert_eq!(s.stddev_ns, (2.0f64 / 3.0).sqrt());
        assert_eq!(s.mean_ns, 1_000_000_000_001.0);
    }

    #[test]
    fn a_deviation_beyond_the_exact_moments_comes_from_the_histogram() {
        // Four latencies near 2^63 ns: their squares sum past 2^128, so the
        // exact moments saturate and the histogram's bucket middles (within
        // 0.1 %) give the deviation instead of a wrapped, wrong one.
        let big = 1u64 << 62;
        let lats = [big, 2 * big, big + big / 2, 3 * big];
        let recs: Vec<IoRecord> = lats
            .iter()
            .enumerate()
            .map(|(i, &l)| rec(i as u64, 0, l, 0))
            .collect();
        let s = RunStats::from_records(&recs).all.latency;
        let mut exact = lats.to_vec();
        let reference = LatencyStats::from_latencies(&mut exact);
        assert!(
            (s.stddev_ns - reference.stddev_ns).abs() <= 1e-3 * reference.stddev_ns,
            "{} vs {}",
            s.stddev_ns,
            reference.stddev_ns
        );
    }

    /// A small deterministic generator (tests only).
    fn lcg(state: &mut u64) -> u64 {
        *state = state
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        *state >> 11
    }

    #[test]
    fn streaming_percentiles_equal_sorting_them() {
        // Latencies from 0 ns to about 2^50 ns, so that percentiles fall in
        // exact buckets, in buckets refined once, and in buckets refined
        // several times; three modes so that by_mode is computed too.
        let mut st = 7u64;
        let recs: Vec<IoRecord> = (0..20_000u64)
            .map(|i| {
                let bits = lcg(&mut st) % 50;
                let lat = lcg(&mut st) % (1u64 << bits).max(1);
                IoRecord {
                    index: i,
                    stream: 0,
                    mode: Mode::from_code((lcg(&mut st) % 3) as u8).unwrap(),
                    offset_bytes: 0,
                    size_bytes: 4096,
                    submit_ns: i,
                    complete_ns: i + lat,
                    flags: if i % 97 == 0 { FLAG_WARMUP } else { 0 },
                }
            })
            .collect();
        let s = RunStats::from_records(&recs);
        let measured = || recs.iter().filter(|r| !r.is_warmup());
        let mut all: Vec<u64> = measured().map(IoRecord::latency_ns).collect();
        let reference = LatencyStats::from_latencies(&mut all);
        let same = |a: &LatencyStats, b: &LatencyStats| {
            assert_eq!(
                (a.count, a.min_ns, a.p50_ns, a.p90_ns, a.p99_ns, a.p999_ns, a.max_ns),
                (b.count, b.min_ns, b.p50_ns, b.p90_ns, b.p99_ns, b.p999_ns, b.max_ns)
            );
            assert!((a.mean_ns - b.mean_ns).abs() <= 1e-9 * b.mean_ns);
            assert!((a.stddev_ns - b.stddev_ns).abs() <= 1e-6 * b.stddev_ns);
        };
        same(&s.all.latency, &reference);
        assert_eq!(s.by_mode.len(), 3);
        for m in [Mode::Read, Mode::Write, Mode::Trim] {
            let mut lat: Vec<u64> = measured()
                .filter(|r| r.mode == m)
                .map(IoRecord::latency_ns)
                .collect();
            same(
                &s.by_mode[m.name()].latency,
                &LatencyStats::from_latencies(&mut lat),
            );
        }
    }

    #[test]
    fn histogram_buckets_are_within_a_thousandth_of_their_values() {
        for v in [0u64, 1, 2047, 2048, 2049, 1 << 20, 123_456_789, u64::MAX] {
            let (lo, shift) = bucket_range(bucket_of(v));
            assert!(lo <= v && (v - lo) >> shift == 0, "{v}");
            assert!((1u64 << shift) as f64 <= v as f64 / 1000.0 || shift == 0);
        }
        assert_eq!(bucket_of(u64::MAX), BUCKETS - 1);
    }
}
