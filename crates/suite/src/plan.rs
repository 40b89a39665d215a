//! A suite's plan: the ordered steps, fixed before anything runs, saved in
//! the results directory so that a suite can be resumed step by step.

use flashlab_pattern::units::format_size;
use flashlab_pattern::PatternSpec;
use serde::{Deserialize, Serialize};

use crate::state::StateMethod;

/// One run of a micro-benchmark or experiment.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct RunStep {
    /// Unique within the suite; names the run's directory.
    pub name: String,
    /// The micro-benchmark or experiment (paper figure) it belongs to.
    pub experiment: String,
    /// The baseline pattern (SR, RR, SW, RW) or the experiment's series.
    pub series: String,
    /// The varying parameter and its value (for charts and summaries).
    pub parameter: String,
    pub value: f64,
    /// `io_count` is the cap when `adaptive`; `io_ignore` is set from the
    /// measured start-up phase when `adaptive`.
    pub spec: PatternSpec,
    /// Stop when the confidence interval of the mean is within the bound.
    pub adaptive: bool,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "kebab-case")]
// A plan holds a few hundred steps built once per suite, so the size
// difference between variants costs nothing worth boxing for.
#[allow(clippy::large_enum_variant)]
pub enum Step {
    /// Write the device into a defined state.
    EnforceState {
        method: StateMethod,
        reason: String,
    },
    /// A long baseline run whose records give the start-up phase and period.
    Calibrate {
        baseline: String,
        run: RunStep,
    },
    /// uFLIP 4.3: sequential reads, a batch of random writes, sequential
    /// reads again; the lingering effect sets the pause between runs.
    MeasurePause {
        before: RunStep,
        writes: RunStep,
        after: RunStep,
    },
    Run(RunStep),
    /// Turn the device's write cache on or off (Chen et al. Figure 5).
    WriteCache {
        enabled: bool,
    },
    /// Discard (TRIM) the whole device: an "empty" drive (Hudlet & Schall).
    Discard {
        reason: String,
    },
    /// Rebuild a simulated device from its own spec plus `overrides`, in its
    /// initial state (Budilovsky et al.: each design on a fresh device).
    Reconfigure {
        overrides: String,
        reason: String,
    },
}

impl Step {
    /// The runs this step records, in order.
    pub fn runs(&self) -> Vec<&RunStep> {
        match self {
            Step::EnforceState { .. }
            | Step::WriteCache { .. }
            | Step::Discard { .. }
            | Step::Reconfigure { .. } => vec![],
            Step::Calibrate { run, .. } => vec![run],
            Step::MeasurePause {
                before,
                writes,
                after,
            } => vec![before, writes, after],
            Step::Run(r) => vec![r],
        }
    }

    /// IOs this step issues at most (for progress and estimates).
    pub fn io_budget(&self, device_bytes: u64) -> u64 {
        match self {
            Step::EnforceState { method, .. } => method.bytes_written(device_bytes) / (64 * 1024),
            _ => self.runs().iter().map(|r| r.spec.total_ios()).sum(),
        }
    }
}

#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Plan {
    pub suite: String,
    pub steps: Vec<Step>,
}

impl Plan {
    /// The plan as a person reads it: numbered steps, targets, state resets.
    pub fn describe(&self, device_bytes: u64) -> String {
        let mut out = String::new();
        let mut n = 0;
        for step in &self.steps {
            match step {
                Step::EnforceState { method, reason } => {
                    out += &format!("     -- enforce state: {} ({reason})\n", method.describe());
                }
                Step::WriteCache { enabled } => {
                    out += &format!(
                        "     -- write cache {}\n",
                        if *enabled { "on" } else { "off" }
                    );
                }
                Step::Discard { reason } => {
                    out += &format!("     -- discard the whole device ({reason})\n");
                }
                Step::Reconfigure { overrides, reason } => {
                    out += &format!("     -- fresh device with {overrides} ({reason})\n");
                }
                _ => {
                    for r in step.runs() {
                        n += 1;
                        let (start, size) = (r.spec.target_offset_bytes, r.spec.target_size_bytes);
                        let count = if r.adaptive {
                            format!("auto <= {}", r.spec.io_count)
                        } else {
                            r.spec.io_count.to_string()
                        };
                        out += &format!(
                            "{n:>4}  {:<34} {:<28} target [{}, +{}) IOs/stream {count}\n",
                            r.name,
                            truncate(&r.spec.describe_short(), 28),
                            format_size(start),
                            format_size(size)
                        );
                    }
                }
            }
        }
        let budget: u64 = self.steps.iter().map(|s| s.io_budget(device_bytes)).sum();
        out += &format!(
            "{n} runs; at most {budget} IOs in all (state enforcement counted as 64 KiB IOs)\n"
        );
        out
    }

    pub fn run_count(&self) -> usize {
        self.steps.iter().map(|s| s.runs().len()).sum()
    }
}

fn truncate(s: &str, n: usize) -> String {
    if s.chars().count() <= n {
        s.to_string()
    } else {
        s.chars().take(n - 1).collect::<String>() + "…"
    }
}

/// Short pattern descriptions for plan listings.
pub trait DescribeShort {
    fn describe_short(&self) -> String;
}

impl DescribeShort for PatternSpec {
    fn describe_short(&self) -> String {
        let mut s = match self.primary.baseline_name() {
            Some(b) => format!("{b} {}", format_size(self.primary.io_size_bytes)),
            None => self.primary.describe(),
        };
        if let Some(m) = &self.mix {
            let other = m
                .secondary
                .baseline_name()
                .map(str::to_string)
                .unwrap_or_else(|| m.secondary.describe());
            s += &format!(" {}:{} {other}", m.ratio_primary, m.ratio_secondary);
        }
        if self.primary.io_shift_bytes > 0 {
            s += &format!(" +{}", format_size(self.primary.io_shift_bytes));
        }
        if self.parallel_degree > 1 {
            s += &format!(" x{}", self.parallel_degree);
        }
        if self.timing != flashlab_pattern::Timing::Consecutive {
            s += &format!(" {}", self.timing);
        }
        s
    }
}
