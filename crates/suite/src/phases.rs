//! uFLIP section 4.2's two-phase model, measured: the start-up phase (cheap
//! IOs before the device settles) and the oscillation period of the running
//! phase; and the batch-means confidence interval that decides how many IOs
//! a run needs (uFLIP's "future work").

/// The number of leading IOs of a long run that belong to a cheap start-up
/// phase, or 0 when there is none.
///
/// The split point k minimises the squared error of a two-segment constant
/// fit (the classic single change-point estimate); it is accepted as a
/// start-up phase only when the first segment is clearly cheaper (mean below
/// 70 % of the rest), at least 8 IOs long and at most half the run: uFLIP's
/// start-up is "cheap, then oscillating", not any shift in level.
pub fn detect_startup(latencies_ns: &[u64]) -> usize {
    let n = latencies_ns.len();
    if n < 32 {
        return 0;
    }
    let x: Vec<f64> = latencies_ns.iter().map(|&v| v as f64).collect();
    let mut prefix = vec![0.0; n + 1];
    let mut prefix_sq = vec![0.0; n + 1];
    for i in 0..n {
        prefix[i + 1] = prefix[i] + x[i];
        prefix_sq[i + 1] = prefix_sq[i] + x[i] * x[i];
    }
    let sse = |a: usize, b: usize| {
        let len = (b - a) as f64;
        let s = prefix[b] - prefix[a];
        (prefix_sq[b] - prefix_sq[a]) - s * s / len
    };
    let mut best = (f64::INFINITY, 0usize);
    for k in 8..=n / 2 {
        let cost = sse(0, k) + sse(k, n);
        if cost < best.0 {
            best = (cost, k);
        }
    }
    let k = best.1;
    if k == 0 {
        return 0;
    }
    let head = (prefix[k]) / k as f64;
    let tail = (prefix[n] - prefix[k]) / (n - k) as f64;
    if head < 0.7 * tail {
        k
    } else {
        0
    }
}

/// The oscillation period of a running phase, in IOs: the lag of the highest
/// autocorrelation peak (a local maximum above 0.3) up to a quarter of the
/// series; 1 when the costs do not oscillate.
pub fn detect_period(latencies_ns: &[u64]) -> usize {
    let n = latencies_ns.len();
    if n < 16 {
        return 1;
    }
    let x: Vec<f64> = latencies_ns.iter().map(|&v| v as f64).collect();
    let mean = x.iter().sum::<f64>() / n as f64;
    let var: f64 = x.iter().map(|v| (v - mean).powi(2)).sum();
    if var <= f64::EPSILON * n as f64 * mean.max(1.0) {
        return 1;
    }
    let max_lag = (n / 4).min(2048);
    let acf: Vec<f64> = (0..=max_lag + 1)
        .map(|lag| {
            (0..n - lag)
                .map(|i| (x[i] - mean) * (x[i + lag] - mean))
                .sum::<f64>()
                / var
        })
        .collect();
    let mut best: Option<(f64, usize)> = None;
    for lag in 2..=max_lag {
        let peak = acf[lag] > acf[lag - 1] && acf[lag] >= acf[lag + 1] && acf[lag] > 0.3;
        if peak && best.is_none_or(|(v, _)| acf[lag] > v + 0.05) {
            best = Some((acf[lag], lag));
        }
    }
    best.map(|(_, lag)| lag).unwrap_or(1)
}

/// Student's t quantile for the 95 % intervals, shared with the OLTP repeats.
pub use flashlab_results::stats::t975;

/// Batch means: consecutive IOs grouped into batches of at least one period,
/// so that batches are nearly independent even when costs oscillate; the
/// confidence interval of the mean is computed over batch means.
#[derive(Clone, Debug)]
pub struct BatchMeans {
    batch: usize,
    current_sum: f64,
    current_len: usize,
    means: Vec<f64>,
}

impl BatchMeans {
    pub fn new(batch: usize) -> BatchMeans {
        BatchMeans {
            batch: batch.max(1),
            current_sum: 0.0,
            current_len: 0,
            means: Vec::new(),
        }
    }

    /// Adds one measured latency; returns true when it closed a batch.
    pub fn push(&mut self, latency_ns: u64) -> bool {
        self.current_sum += latency_ns as f64;
        self.current_len += 1;
        if self.current_len == self.batch {
            self.means.push(self.current_sum / self.batch as f64);
            self.current_sum = 0.0;
            self.current_len = 0;
            true
        } else {
            false
        }
    }

    pub fn batches(&self) -> usize {
        self.means.len()
    }

    /// (mean, 95 % half-width relative to the mean) over the closed batches.
    pub fn interval(&self) -> Option<(f64, f64)> {
        if self.means.len() < 2 {
            return None;
        }
        let (mean, half) = flashlab_results::stats::mean_and_half_width95(&self.means);
        Some((mean, if mean > 0.0 { half / mean } else { 0.0 }))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn startup_of_cheap_then_oscillating() {
        // uFLIP 4.2's example: 128 cheap writes, then alternating cheap and expensive.
        let mut lat = vec![400_000u64; 128];
        lat.extend((0..2000).map(|i| if i % 2 == 0 { 400_000 } else { 27_000_000 }));
        let k = detect_startup(&lat);
        assert!((120..=136).contains(&k), "start-up {k}");
        assert_eq!(detect_period(&lat[k..]), 2);
    }

    #[test]
    fn no_startup_no_period_on_flat_costs() {
        // Flat costs with aperiodic noise of +-5 %.
        let mut rng = flashlab_pattern::rng::Rng::new(3);
        let lat: Vec<u64> = (0..1000).map(|_| 95_000 + rng.below(10_000)).collect();
        assert_eq!(detect_startup(&lat), 0);
        assert_eq!(detect_period(&lat), 1);
    }

    #[test]
    fn period_of_a_spike_every_128() {
        // uFLIP Figure 4: Kingston DTI, period about 128.
        let lat: Vec<u64> = (0..4096)
            .map(|i| {
                if i % 128 == 127 {
                    50_000_000
                } else {
                    2_000_000
                }
            })
            .collect();
        assert_eq!(detect_startup(&lat), 0);
        assert_eq!(detect_period(&lat), 128);
    }

    #[test]
    fn t_quantiles() {
        assert_eq!(t975(1), 12.706);
        assert!((t975(60) - 2.000).abs() < 2e-3);
        assert!((t975(1000) - 1.962).abs() < 2e-3);
    }

    #[test]
    fn batch_means_interval_shrinks() {
        let mut b = BatchMeans::new(2);
        for i in 0..400 {
            b.push(if i % 2 == 0 { 100 } else { 300 });
        }
        let (mean, rel) = b.interval().unwrap();
        assert_eq!(mean, 200.0);
        assert_eq!(
            rel, 0.0,
            "batches of one period remove the oscillation entirely"
        );
    }
}
