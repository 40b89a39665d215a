//! A paper suite as a workload: configured from options given as data,
//! planned for the device ([`begin_suite`]), and run from its journal
//! through the suite runner ([`run_journal`]), which is also how `flashlab
//! suite NAME` runs it (a suite planned from its flags, or resumed).

use std::sync::atomic::AtomicBool;

use flashlab_device::Device;
use flashlab_results::ResultsDir;
use flashlab_suite::runner::{Journal, Progress, Runner, SuiteOutcome};
use flashlab_suite::session;
use flashlab_suite::summary::SuiteSummary;
use serde::{Deserialize, Serialize};

use crate::error::WorkloadError;
use crate::{Observer, SUITE_STATE_QUEUE_DEPTH};

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

/// Begins suite `s` with `seed` in `results` (a new directory) for a
/// device of `device_bytes`: configured from its options, planned, with
/// the runtime of every run, and its journal started (every run listed in
/// the manifest before the first IO). [`run_journal`] then runs it.
pub fn begin_suite(
    device_bytes: u64,
    results: &mut ResultsDir,
    s: &SuiteSpec,
    seed: u64,
) -> Result<Journal, WorkloadError> {
    let input = |e: &dyn std::fmt::Display| WorkloadError::Input(e.to_string());
    let root = results.root().to_path_buf();
    let suite = session::runnable(&s.name).map_err(|e| input(&e))?;
    let config = session::configure(suite, s.quick, &s.options, seed).map_err(|e| input(&e))?;
    let mut plan = session::plan(suite, &config, device_bytes).map_err(|e| input(&e))?;
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
    session::begin(results, suite, config, plan).map_err(WorkloadError::io(&root))
}

/// Runs a begun suite (a new one, or one resumed from its results
/// directory) from its journal to its end on `device`, and returns its
/// summary, saved as `flashlab suite` saves it. `stop` ends it early, an
/// error ([`WorkloadError::Stopped`]); `journal` is left as the suite left
/// it (where to resume).
pub fn run_journal(
    device: &mut dyn Device,
    results: &mut ResultsDir,
    journal: &mut Journal,
    stop: &AtomicBool,
    observer: &mut dyn Observer,
) -> Result<SuiteSummary, WorkloadError> {
    let block_bytes = (device.info().logical_block_bytes as u64).max(512);
    let mut progress = |p: &Progress| observer.suite_progress(p);
    let mut runner = Runner {
        dev: device,
        results,
        journal: journal.clone(),
        user_stop: stop,
        progress: &mut progress,
        block_bytes,
        state_queue_depth: SUITE_STATE_QUEUE_DEPTH,
    };
    let outcome = runner.execute();
    *journal = runner.journal;
    match outcome {
        Err(e) => Err(WorkloadError::Suite {
            name: journal.suite.clone(),
            error: e.to_string(),
        }),
        Ok(SuiteOutcome::Interrupted) => Err(WorkloadError::Stopped(format!(
            "suite {} stopped before its end",
            journal.suite
        ))),
        Ok(SuiteOutcome::Complete) => {
            let root = results.root().to_path_buf();
            session::summarise(results, journal).map_err(|e| WorkloadError::Io {
                path: root,
                source: std::io::Error::new(e.kind(), format!("cannot save the summary: {e}")),
            })
        }
    }
}
