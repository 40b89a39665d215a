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

/// Why fio's `runtime`/`time_based` cannot apply to a suite's plan. The
/// front end names the settings ([`RuntimeError::render`]): `--runtime`
/// on the command line, `[suite] runtime` in a grid.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum RuntimeError {
    /// `time_based` repeats each run until the runtime, which is missing.
    TimeBasedWithoutRuntime,
    /// A runtime of zero runs nothing.
    Zero,
    /// The runtime does not read as a duration.
    Unreadable(String),
    /// An adaptive run stops when its mean is known within the bound, so it
    /// cannot also run for a fixed time.
    AdaptiveTimeBased { suite: String, run: String },
}

impl RuntimeError {
    /// The problem in one line, naming the settings as the front end
    /// spells them (`runtime`, `time_based`) with an `example` of a
    /// runtime written there (`--runtime 10s`, `runtime = "10s"`).
    pub fn render(&self, runtime: &str, time_based: &str, example: &str) -> String {
        match self {
            RuntimeError::TimeBasedWithoutRuntime => {
                format!("{time_based} repeats each run until {runtime}; add e.g. {example}")
            }
            RuntimeError::Zero => format!(
                "{runtime} 0 runs nothing; give e.g. {example} (a bare number is seconds, as in fio)"
            ),
            RuntimeError::Unreadable(e) => format!("{runtime}: {e}"),
            RuntimeError::AdaptiveTimeBased { suite, run } => format!(
                "{time_based}: {suite} run {run} stops when its mean is known within the bound, so it cannot run for a fixed time; use {runtime} alone to cap each run"
            ),
        }
    }
}

/// fio's `runtime` (a duration; a bare number is seconds) checked with
/// `time_based`: `None` when no runtime is given.
pub fn parse_runtime(runtime: Option<&str>, time_based: bool) -> Result<Option<u64>, RuntimeError> {
    let runtime_ns = match runtime {
        None if time_based => return Err(RuntimeError::TimeBasedWithoutRuntime),
        None => return Ok(None),
        Some(text) => flashlab_pattern::units::parse_runtime_ns(text)
            .map_err(|e| RuntimeError::Unreadable(e.to_string()))?,
    };
    if runtime_ns == 0 {
        return Err(RuntimeError::Zero);
    }
    Ok(Some(runtime_ns))
}

impl Plan {
    /// fio's `runtime` and `time_based` for a whole suite, as fio applies
    /// them to every job: every run of the plan stops submitting after
    /// `runtime_ns` of device time; with `time_based`, each measured run (a
    /// `Step::Run`) repeats its pattern until then. Calibration runs and
    /// uFLIP's pause probe keep their IO counts, which their method needs
    /// (a period is found in a fixed number of IOs), under the cap. An
    /// adaptive run stops when its mean is known within the bound, so it
    /// cannot also run for a fixed time: that combination is refused, and
    /// the plan is left unchanged.
    pub fn with_runtime(&mut self, runtime_ns: u64, time_based: bool) -> Result<(), RuntimeError> {
        if time_based {
            let adaptive = self.steps.iter().find_map(|step| match step {
                Step::Run(r) if r.adaptive => Some(r.name.clone()),
                _ => None,
            });
            if let Some(run) = adaptive {
                return Err(RuntimeError::AdaptiveTimeBased {
                    suite: self.suite.clone(),
                    run,
                });
            }
        }
        for step in &mut self.steps {
            let (measured, runs): (bool, Vec<&mut RunStep>) = match step {
                Step::Run(r) => (true, vec![r]),
                Step::Calibrate { run, .. } => (false, vec![run]),
                Step::MeasurePause {
                    before,
                    writes,
                    after,
                } => (false, vec![before, writes, after]),
                Step::EnforceState { .. }
                | Step::WriteCache { .. }
                | Step::Discard { .. }
                | Step::Reconfigure { .. } => (false, vec![]),
            };
            for run in runs {
                run.spec.runtime_ns = Some(runtime_ns);
                run.spec.time_based = time_based && measured;
            }
        }
        Ok(())
    }

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
