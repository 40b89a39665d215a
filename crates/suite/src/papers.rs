//! What the plans of Chen, Koufaty & Zhang (SIGMETRICS 2009), Wang et al.
//! (IEICE 2011) and Hudlet & Schall (BTW 2011) share: their configuration
//! and the builder of runs named after the figure they reproduce. Each
//! paper's plan is in its `suites/*.rs`.

use flashlab_device::Mode;
use flashlab_pattern::rng::derive_seed;
use flashlab_pattern::units::format_size;
use flashlab_pattern::{Basic, Location, Mix, PatternSpec, Timing};
use serde::{Deserialize, Serialize};

use crate::plan::{Plan, RunStep, Step};
use crate::state::StateMethod;

pub(crate) const KIB: u64 = 1024;
pub(crate) const MIB: u64 = 1024 * KIB;
pub(crate) const GIB: u64 = 1024 * MIB;

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct PaperConfig {
    /// Multiplies every run's IO count (0.25 for a quick look).
    pub scale: f64,
    /// Re-fill the device before each experiment, as Chen et al. did (5.1).
    pub refill: bool,
    pub seed: u64,
    /// Hudlet & Schall's test file size.
    pub test_file_bytes: u64,
}

impl Default for PaperConfig {
    fn default() -> Self {
        PaperConfig {
            scale: 1.0,
            refill: true,
            seed: 42,
            test_file_bytes: GIB,
        }
    }
}

pub(crate) fn basic(location: Location, mode: Mode, io_size: u64) -> Basic {
    Basic {
        location,
        mode,
        io_size_bytes: io_size,
        io_shift_bytes: 0,
    }
}

/// One run of a paper's plan, named `{experiment}-{series}[-{value}]` after
/// the figure it reproduces.
pub(crate) struct RunDef<'a> {
    pub(crate) experiment: &'a str,
    pub(crate) series: &'a str,
    /// The swept parameter ("" for none) and its value in this run.
    pub(crate) parameter: &'a str,
    pub(crate) value: f64,
    pub(crate) primary: Basic,
    pub(crate) mix: Option<Mix>,
    pub(crate) timing: Timing,
    /// (TargetOffset, TargetSize) in bytes; the size is rounded down to the
    /// largest IO and raised to one IO per stream.
    pub(crate) target: (u64, u64),
    pub(crate) ios: u64,
    pub(crate) parallel: u64,
}

pub(crate) struct Builder {
    pub(crate) cfg: PaperConfig,
    pub(crate) device_bytes: u64,
    pub(crate) steps: Vec<Step>,
    n: u64,
}

impl Builder {
    pub(crate) fn new(cfg: &PaperConfig, device_bytes: u64) -> Self {
        Builder {
            cfg: cfg.clone(),
            device_bytes,
            steps: Vec::new(),
            n: 0,
        }
    }

    pub(crate) fn finish(self, suite: &str) -> Plan {
        Plan {
            suite: suite.into(),
            steps: self.steps,
        }
    }

    pub(crate) fn count(&self, ios: u64) -> u64 {
        ((ios as f64 * self.cfg.scale).round() as u64).max(16)
    }

    pub(crate) fn cap(&self, bytes: u64) -> u64 {
        bytes.min(self.device_bytes)
    }

    pub(crate) fn run(&mut self, def: RunDef) {
        let RunDef {
            experiment,
            series,
            parameter,
            value,
            primary,
            mix,
            timing,
            target,
            ios,
            parallel,
        } = def;
        self.n += 1;
        let label = if parameter.is_empty() {
            String::new()
        } else {
            format!("-{}", value_label(parameter, value))
        };
        let name = format!("{experiment}-{series}{label}");
        let unit = primary
            .io_size_bytes
            .max(mix.as_ref().map(|m| m.secondary.io_size_bytes).unwrap_or(0));
        let size = target.1 / unit * unit;
        let spec = PatternSpec {
            name: name.clone(),
            primary,
            mix,
            timing,
            target_offset_bytes: target.0,
            target_size_bytes: size.max(unit * parallel),
            io_count: ios,
            io_ignore: 0,
            parallel_degree: parallel,
            queue_depth: 1,
            seed: derive_seed(self.cfg.seed, self.n),
            runtime_ns: None,
            time_based: false,
            rate_iops: None,
            io_size_split: Vec::new(),
        };
        self.steps.push(Step::Run(RunStep {
            name,
            experiment: experiment.into(),
            series: series.into(),
            parameter: parameter.into(),
            value,
            spec,
            adaptive: false,
        }));
    }

    pub(crate) fn fill(&mut self, reason: &str) {
        self.steps.push(Step::EnforceState {
            method: StateMethod::Sequential,
            reason: reason.into(),
        });
    }
}

fn value_label(parameter: &str, value: f64) -> String {
    match parameter {
        "IOSize" | "range" | "stride" | "TargetSize" => format_size(value as u64),
        "selectivity" => format!("{}pct", (value * 100.0).round()),
        _ => format!("{value}"),
    }
}

/// Chen et al. 5.1: "In default, each micro-benchmark runs for 10 seconds"
/// (simulated time on a simulator; the Figure 8(a) ranges use it).
pub const CHEN09_RUN_NS: u64 = 10_000_000_000;
