//! A suite's remaining time, from the measured durations of its runs.
//!
//! A suite's IO budget is an upper bound (runs stop early once their mean
//! is known within the bound, and state enforcement is counted as 64 KiB
//! IOs), so a rate over budget IOs swings wildly (2 min, then "223y", then
//! 77 s on a real device). Instead: the wall time of each finished step
//! divided by its runs, smoothed (exponentially weighted), times the runs
//! left. Steps without runs (state enforcement, cache switches) are not
//! counted as runs; their time goes into the next run-step's estimate only
//! through the smoothing of what was measured.

use std::time::{Duration, Instant};

use flashlab_pattern::units::format_duration_ns;

/// Weight of the newest per-run duration in the smoothed mean.
const SMOOTHING: f64 = 0.2;

pub struct SuiteEta {
    runs_per_step: Vec<u64>,
    total_runs: u64,
    /// The step under way (1-based), when it started, and whether it is a
    /// replay (resume on a simulator: not a measurement of real run time).
    current: Option<(usize, Instant, bool)>,
    per_run_s: Option<f64>,
    done_runs: u64,
}

impl SuiteEta {
    pub fn new(runs_per_step: Vec<u64>) -> SuiteEta {
        let total_runs = runs_per_step.iter().sum();
        SuiteEta {
            runs_per_step,
            total_runs,
            current: None,
            per_run_s: None,
            done_runs: 0,
        }
    }

    /// Step `step` (1-based) starts at `now`; the previous step ended.
    pub fn step_started(&mut self, step: usize, now: Instant, replaying: bool) {
        if let Some((prev, started, prev_replaying)) = self.current {
            let runs = self.runs_per_step.get(prev - 1).copied().unwrap_or(0);
            if runs > 0 && !prev_replaying && step > prev {
                let per_run = now.duration_since(started).as_secs_f64() / runs as f64;
                self.per_run_s = Some(match self.per_run_s {
                    None => per_run,
                    Some(mean) => mean + SMOOTHING * (per_run - mean),
                });
            }
        }
        let before = step.saturating_sub(1).min(self.runs_per_step.len());
        self.done_runs = self.runs_per_step[..before].iter().sum();
        self.current = Some((step, now, replaying));
    }

    /// Runs finished and in all.
    pub fn runs(&self) -> (u64, u64) {
        (self.done_runs, self.total_runs)
    }

    /// The time left, once at least one run was measured.
    pub fn remaining(&self) -> Option<Duration> {
        let per_run = self.per_run_s?;
        let left = self.total_runs.saturating_sub(self.done_runs);
        Some(Duration::from_secs_f64(per_run * left as f64))
    }

    /// "runs 12/301, ETA 1m40s" (or "ETA after the first run").
    pub fn label(&self) -> String {
        let (done, total) = self.runs();
        let eta = match self.remaining() {
            Some(d) => format!("ETA {}", format_eta(d)),
            None => "ETA after the first run".to_string(),
        };
        format!("runs {done}/{total}, {eta}")
    }
}

fn format_eta(d: Duration) -> String {
    let s = d.as_secs();
    if s >= 3600 {
        format!("{}h{:02}m", s / 3600, (s % 3600) / 60)
    } else if s >= 60 {
        format!("{}m{:02}s", s / 60, s % 60)
    } else {
        format_duration_ns((d.as_millis() as u64 / 100 * 100).max(100) * 1_000_000)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn eta_is_the_smoothed_per_run_duration_times_the_runs_left() {
        // Steps: enforce state (0 runs), 2 runs, 1 run, 3 runs, 4 runs.
        let mut eta = SuiteEta::new(vec![0, 2, 1, 3, 4]);
        let t0 = Instant::now();
        let at = |s: u64| t0 + Duration::from_secs(s);
        eta.step_started(1, at(0), false);
        assert_eq!(eta.label(), "runs 0/10, ETA after the first run");
        eta.step_started(2, at(100), false); // state enforcement: not a run
        assert!(eta.remaining().is_none());
        eta.step_started(3, at(120), false); // 2 runs in 20 s: 10 s per run
        assert_eq!(eta.runs(), (2, 10));
        assert_eq!(eta.remaining(), Some(Duration::from_secs(80)));
        eta.step_started(4, at(180), false); // 1 run in 60 s: 10 + 0.2 * 50 = 20 s per run
        assert_eq!(eta.runs(), (3, 10));
        assert_eq!(eta.remaining(), Some(Duration::from_secs(140)));
        assert_eq!(eta.label(), "runs 3/10, ETA 2m20s");
    }

    #[test]
    fn one_odd_run_moves_the_eta_but_does_not_swing_it() {
        let mut eta = SuiteEta::new(vec![1; 100]);
        let t0 = Instant::now();
        let mut t = t0;
        for step in 1..=50 {
            eta.step_started(step, t, false);
            t += Duration::from_secs(1);
        }
        let steady = eta.remaining().unwrap().as_secs_f64();
        // One run of 1000 s (a device stalling once) ...
        eta.step_started(51, t, false);
        t += Duration::from_secs(1000);
        eta.step_started(52, t, false);
        let after = eta.remaining().unwrap().as_secs_f64();
        // ... raises the estimate by its weight, not to 1000 s per run.
        assert!(after > steady, "{steady} {after}");
        assert!(after < 0.25 * 1000.0 * 49.0, "{after}");
    }

    #[test]
    fn replayed_steps_are_not_measurements() {
        let mut eta = SuiteEta::new(vec![5, 5, 5]);
        let t0 = Instant::now();
        eta.step_started(1, t0, true);
        eta.step_started(2, t0 + Duration::from_millis(10), false);
        assert!(eta.remaining().is_none());
        eta.step_started(3, t0 + Duration::from_millis(50_010), false);
        assert_eq!(eta.remaining(), Some(Duration::from_secs(50)));
    }
}
