//! The registry of suites: each paper is one module implementing [`Suite`],
//! which owns its plan, its typed summary and findings, and its figures
//! declared as data. The CLI and the report loop over [`registry`]; adding a
//! paper is adding a module here.

use flashlab_results::RunSummary;

use crate::figures::SuiteFigures;
use crate::plan::Plan;
use crate::runner::Journal;
use crate::summary::SuiteSummary;

pub mod budilovsky11;
pub mod chen09;
pub mod hudlet11;
pub mod uflip;
pub mod wang11;
pub mod wang11_oltp;

/// What a suite summarises: the plan, the journal and every run's statistics.
pub struct SummaryInput<'a> {
    pub plan: &'a Plan,
    pub journal: &'a Journal,
    pub runs: &'a [RunSummary],
    pub device: &'a str,
    /// The results directory, for findings computed from per-IO records
    /// (fractions of requests); `None` where only the statistics exist.
    pub results: Option<&'a flashlab_results::ResultsDir>,
}

/// Why a suite's configuration cannot be planned.
#[derive(Debug)]
pub struct ConfigError(pub String);

impl std::fmt::Display for ConfigError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for ConfigError {}

pub trait Suite: Sync {
    /// The name on the command line and in the results directory.
    fn name(&self) -> &'static str;
    /// The paper, as cited.
    fn title(&self) -> &'static str;
    /// The plan for this configuration (the suite's config struct as JSON,
    /// as saved in the journal) on a device of `device_bytes`.
    fn plan(&self, config: &serde_json::Value, device_bytes: u64) -> Result<Plan, ConfigError>;
    /// The figures of the plan; `runs` once results exist (markers such as a
    /// break-even point need them).
    fn figures(&self, plan: &Plan, runs: Option<&[RunSummary]>) -> SuiteFigures;
    /// The typed summary: tables, findings, notes, flagged runs.
    fn summarise(&self, input: &SummaryInput) -> SuiteSummary;
    /// The configuration `flashlab suite NAME [--quick]` starts from before
    /// its flags (JSON, as [`Suite::plan`] takes it): what a sweep's suite
    /// options are merged into. `None` for a suite the executor does not run.
    fn default_config(&self, _quick: bool) -> Option<serde_json::Value> {
        None
    }
}

static REGISTRY: [&dyn Suite; 6] = [
    &uflip::Uflip,
    &chen09::Chen09,
    &wang11::Wang11,
    &hudlet11::Hudlet11,
    &budilovsky11::Budilovsky11,
    &wang11_oltp::Wang11Oltp,
];

/// Every suite that runs on the executor and the results directory.
pub fn registry() -> &'static [&'static dyn Suite] {
    &REGISTRY
}

pub fn find(name: &str) -> Option<&'static dyn Suite> {
    REGISTRY.iter().copied().find(|s| s.name() == name)
}

/// The parts every suite's summary shares: device, notes (the journal's
/// and dominated runs'), flags.
pub(crate) fn base_summary(suite: &dyn Suite, input: &SummaryInput) -> SuiteSummary {
    SuiteSummary {
        suite: suite.name().into(),
        title: suite.title().into(),
        device: input.device.into(),
        tables: Vec::new(),
        findings: Vec::new(),
        notes: input.journal.notes.clone(),
        flagged_runs: crate::summary::dominated_runs(input.runs),
        detail: serde_json::Map::new(),
    }
}

/// The plan's runs of one experiment, in plan order.
pub(crate) fn experiment<'a>(plan: &'a Plan, e: &str) -> Vec<&'a crate::plan::RunStep> {
    plan.steps
        .iter()
        .flat_map(|s| s.runs())
        .filter(|r| r.experiment == e)
        .collect()
}

/// Experiments in plan order.
pub(crate) fn experiments(plan: &Plan) -> Vec<&str> {
    let mut out: Vec<&str> = Vec::new();
    for r in plan.steps.iter().flat_map(|s| s.runs()) {
        if !out.contains(&r.experiment.as_str()) {
            out.push(&r.experiment);
        }
    }
    out
}

fn parse<T: serde::de::DeserializeOwned>(
    suite: &str,
    config: &serde_json::Value,
) -> Result<T, ConfigError> {
    serde_json::from_value(config.clone())
        .map_err(|e| ConfigError(format!("{suite}: invalid configuration: {e}")))
}

/// The summary of a paper suite: its findings, one detail table per
/// experiment, and the per-run rows as its typed detail (`runs`).
pub(crate) fn paper_summary(
    suite: &dyn Suite,
    input: &SummaryInput,
    findings: impl Fn(&[crate::findings::Row]) -> Vec<crate::summary::Finding>,
) -> SuiteSummary {
    use crate::summary::{Compare, SummaryTable};
    let rows = crate::findings::rows(input.plan, input.runs);
    let mut s = base_summary(suite, input);
    s.findings = findings(&rows);
    for e in experiments(input.plan) {
        let of: Vec<&crate::findings::Row> = rows.iter().filter(|r| r.experiment == e).collect();
        if of.is_empty() {
            continue;
        }
        s.tables.push(SummaryTable {
            id: format!("{}-{e}", suite.name()),
            title: e.to_string(),
            paragraphs: Vec::new(),
            header: crate::findings::ROW_HEADER.map(str::to_string).to_vec(),
            rows: of.iter().map(|r| crate::findings::row_cells(r)).collect(),
            compare: Compare::None,
            compare_title: None,
            detail_only: true,
        });
    }
    s.detail.insert(
        "runs".into(),
        serde_json::to_value(&rows).expect("rows serialize"),
    );
    s
}

/// The one figure group of a paper suite.
pub(crate) fn paper_group(
    suite: &dyn Suite,
    figures: Vec<crate::figures::FigureSpec>,
) -> crate::figures::FigureGroup {
    crate::figures::FigureGroup {
        id: format!("{}-figures", suite.name()),
        title: format!("{}: figures", suite.title()),
        paragraph: "One chart per paper figure, from this device's runs (each run named after its figure). Response-time CDFs: log response time on x, fraction of IOs on y. Statistics leave out each run's start-up phase, detected on its own first IOs (IOIgnore).".into(),
        figures,
    }
}

/// chen09, wang11 and hudlet11's starting configuration: `--quick` is a
/// tenth of the paper's IOs ([`QUICK_SCALE`]).
pub(crate) fn paper_default_config(quick: bool) -> Option<serde_json::Value> {
    serde_json::to_value(crate::papers::PaperConfig {
        scale: if quick { QUICK_SCALE } else { 1.0 },
        ..Default::default()
    })
    .ok()
}

/// The IO-count factor of `--quick` in chen09, wang11 and hudlet11.
pub const QUICK_SCALE: f64 = 0.1;
