//! A paper suite as a workload: configured from options given as data,
//! planned for the device, and run through the suite runner, exactly as
//! `flashlab suite NAME` runs it.

use std::sync::atomic::AtomicBool;

use flashlab_device::Device;
use flashlab_results::ResultsDir;
use flashlab_suite::runner::{Progress, Runner, SuiteOutcome};
use flashlab_suite::session;
use flashlab_suite::summary::SuiteSummary;
use serde::{Deserialize, Serialize};

use crate::error::WorkloadError;
use crate::SUITE_STATE_QUEUE_DEPTH;

/// A paper suite (`flashlab suite NAME`, a grid's `[suite]`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SuiteSpec {
    /// The suite's name (`flashlab suite --help` lists them).
    pub name: String,
    /// The suite's reduced configuration, as `flashlab suite NAME --quick`.
    #[serde(default)]
    pub quick: bool,
    /// Fields of the suite's configuration to replace (as in its
    /// `manifest.json`'s `suite.config`), e.g. `benchmarks = ["granularity"]`.
    #[serde(default)]
    pub options: serde_json::Map<String, serde_json::Value>,
    /// Which values of the summary become table columns: paths or their
    /// prefixes, e.g. `["table3", "findings"]` [default: every numeric value].
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub metrics: Option<Vec<String>>,
    /// fio's `runtime` for every run of the suite (`flashlab suite
    /// --runtime`), e.g. "10s"; a bare number is seconds.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub runtime: Option<String>,
    /// fio's `time_based`: each measured run repeats until `runtime`.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub time_based: bool,
}

/// Runs suite `s` with `seed` on `device` into `results` (a new directory)
/// and returns its summary, saved there as `flashlab suite` saves it.
/// `stop` ends it early (an error: a workload runs to its end or fails).
pub fn run_suite(
    device: &mut dyn Device,
    results: &mut ResultsDir,
    s: &SuiteSpec,
    seed: u64,
    stop: &AtomicBool,
    progress: &mut dyn FnMut(&Progress),
) -> Result<SuiteSummary, WorkloadError> {
    let input = |e: &dyn std::fmt::Display| WorkloadError::Input(e.to_string());
    let root = results.root().to_path_buf();
    let suite = session::runnable(&s.name).map_err(|e| input(&e))?;
    let config = session::configure(suite, s.quick, &s.options, seed).map_err(|e| input(&e))?;
    let size = device.info().size_bytes;
    let mut plan = session::plan(suite, &config, size).map_err(|e| input(&e))?;
    // The same plan-wide runtime as `flashlab suite --runtime`, named as
    // the grid's [suite] table (and Python's dict) spells it.
    let runtime = |e: flashlab_suite::plan::RuntimeError| {
        WorkloadError::Input(e.render("[suite] runtime", "[suite] time_based", "runtime = \"10s\""))
    };
    if let Some(runtime_ns) =
        flashlab_suite::plan::parse_runtime(s.runtime.as_deref(), s.time_based).map_err(runtime)?
    {
        plan.with_runtime(runtime_ns, s.time_based)
            .map_err(runtime)?;
    }
    let journal = session::begin(results, suite, config, plan).map_err(WorkloadError::io(&root))?;
    let block_bytes = (device.info().logical_block_bytes as u64).max(512);
    let mut runner = Runner {
        dev: device,
        results,
        journal,
        user_stop: stop,
        progress,
        block_bytes,
        state_queue_depth: SUITE_STATE_QUEUE_DEPTH,
    };
    let outcome = runner
        .execute()
        .map_err(|e| WorkloadError::Run(format!("suite {} failed: {e}", s.name)))?;
    let journal = runner.journal.clone();
    if outcome != SuiteOutcome::Complete {
        return Err(WorkloadError::Run(format!(
            "suite {} stopped before its end",
            s.name
        )));
    }
    session::summarise(results, &journal).map_err(WorkloadError::io(&root))
}
