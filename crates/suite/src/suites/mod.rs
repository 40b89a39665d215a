//! The registry of suites: each paper is one module implementing [`Suite`],
//! which owns its plan, its typed summary and findings, and its figures
//! declared as data. Every suite of the [`registry`] runs on the executor
//! (`flashlab suite NAME`, a sweep's `[suite]`); the report finds a results
//! directory's suite by its manifest's name ([`kind`]).
//!
//! Wang et al.'s TPC-C matrix ([`wang11_oltp::OltpMatrix`]) is not a
//! [`Suite`]: its runs are whole `flashlab oltp` runs (a DBMS, the TPC-C
//! driver, both tracers), not executor steps, so it has no plan, no figures
//! and a summary of its own runs' `oltp.json`. It is its own [`Kind`] of
//! results directory, outside the registry.

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

/// How a suite's journal runs its plan: the state enforcement named in the
/// manifest and the stopping rule of its runs.
#[derive(Clone, Debug, PartialEq)]
pub struct JournalRule {
    /// The state enforcement's name (`random`, `sequential`, ...).
    pub state: String,
    /// Half-width of the 95 % confidence interval a run stops at, relative to its mean.
    pub bound: f64,
    /// Shortest pause between runs.
    pub min_pause_ns: u64,
    /// Fewest IOs a run makes before it may stop.
    pub min_ios: u64,
}

/// A paper's suite, with its typed configuration. The registry holds
/// suites as [`DynSuite`], whose configuration is the JSON the journal saves
/// (every `Suite` is one); code that knows the suite uses this trait.
pub trait Suite: Sync {
    /// The suite's configuration: what its flags, a grid's `[suite.options]`
    /// or a journal give, as one value.
    type Config: serde::Serialize + serde::de::DeserializeOwned;
    /// The name on the command line and in the results directory.
    fn name(&self) -> &'static str;
    /// The paper, as cited.
    fn title(&self) -> &'static str;
    /// The plan for `config` on a device of `device_bytes`.
    fn plan(&self, config: &Self::Config, device_bytes: u64) -> Result<Plan, ConfigError>;
    /// The figures of the plan; `runs` once results exist (markers such as a
    /// break-even point need them).
    fn figures(&self, plan: &Plan, runs: Option<&[RunSummary]>) -> SuiteFigures;
    /// The typed summary: tables, findings, notes, flagged runs.
    fn summarise(&self, input: &SummaryInput) -> SuiteSummary;
    /// The suite's name in prose, as the paper writes it (`uFLIP`): what
    /// the CLI's messages about a run of its plan say.
    fn display_name(&self) -> &'static str {
        self.name()
    }
    /// The configuration `flashlab suite NAME [--quick]` starts from before
    /// its flags: what a sweep's suite options replace fields of.
    fn default_config(&self, quick: bool) -> Self::Config;
    /// The seed of `config`'s random patterns: what `flashlab suite
    /// --resume` seeds the device probe with, as the first run did.
    fn seed(&self, config: &Self::Config) -> u64;
    /// Whether `config` is a reduced run (`--quick`, `--scale` below 1),
    /// whose findings are not comparable to the paper's; `None` for a
    /// configuration at the paper's sizes. (budilovsky11 keeps the default:
    /// its `--quick` device size is not in its configuration, and its
    /// summary has said nothing of it so far.)
    fn reduced_run(&self, _config: &Self::Config) -> Option<ReducedRun> {
        None
    }
    /// How the journal runs `config`'s plan. The paper suites' rule (fixed
    /// IO counts): the 5 % bound, no pause floor, at least 16 IOs, after
    /// sequential state enforcement.
    fn journal_rule(&self, _config: &Self::Config) -> JournalRule {
        JournalRule {
            state: "sequential".into(),
            bound: 0.05,
            min_pause_ns: 0,
            min_ios: 16,
        }
    }
    /// The first line `flashlab suite NAME` prints: what the plan is, on
    /// which device.
    fn plan_header(&self, _config: &Self::Config, device: &str, device_bytes: u64) -> String {
        format!(
            "{} plan for {device} ({}), runs named after the paper's figures",
            self.name(),
            flashlab_pattern::units::format_size(device_bytes)
        )
    }
}

/// A [`Suite`] behind the registry: its configuration as the JSON the
/// journal and a manifest save, parsed into the suite's own type at each
/// call. Implemented for every `Suite`.
pub trait DynSuite: Sync {
    fn name(&self) -> &'static str;
    fn title(&self) -> &'static str;
    /// [`Suite::display_name`].
    fn display_name(&self) -> &'static str;
    /// [`Suite::plan`] of the configuration given as JSON.
    fn plan(&self, config: &serde_json::Value, device_bytes: u64) -> Result<Plan, ConfigError>;
    fn figures(&self, plan: &Plan, runs: Option<&[RunSummary]>) -> SuiteFigures;
    fn summarise(&self, input: &SummaryInput) -> SuiteSummary;
    /// [`Suite::default_config`] as JSON.
    fn default_config(&self, quick: bool) -> serde_json::Value;
    /// [`Suite::seed`] of the configuration given as JSON.
    fn seed(&self, config: &serde_json::Value) -> Result<u64, ConfigError>;
    /// [`Suite::reduced_run`] of the configuration given as JSON.
    fn reduced_run(&self, config: &serde_json::Value) -> Result<Option<ReducedRun>, ConfigError>;
    /// [`Suite::journal_rule`] of the configuration given as JSON.
    fn journal_rule(&self, config: &serde_json::Value) -> Result<JournalRule, ConfigError>;
    /// [`Suite::plan_header`] of the configuration given as JSON.
    fn plan_header(
        &self,
        config: &serde_json::Value,
        device: &str,
        device_bytes: u64,
    ) -> Result<String, ConfigError>;
}

impl<S: Suite> DynSuite for S {
    fn name(&self) -> &'static str {
        Suite::name(self)
    }
    fn title(&self) -> &'static str {
        Suite::title(self)
    }
    fn display_name(&self) -> &'static str {
        Suite::display_name(self)
    }
    fn plan(&self, config: &serde_json::Value, device_bytes: u64) -> Result<Plan, ConfigError> {
        Suite::plan(self, &parse(Suite::name(self), config)?, device_bytes)
    }
    fn figures(&self, plan: &Plan, runs: Option<&[RunSummary]>) -> SuiteFigures {
        Suite::figures(self, plan, runs)
    }
    fn summarise(&self, input: &SummaryInput) -> SuiteSummary {
        Suite::summarise(self, input)
    }
    fn default_config(&self, quick: bool) -> serde_json::Value {
        serde_json::to_value(Suite::default_config(self, quick)).expect("serializes")
    }
    fn seed(&self, config: &serde_json::Value) -> Result<u64, ConfigError> {
        Ok(Suite::seed(self, &parse(Suite::name(self), config)?))
    }
    fn reduced_run(&self, config: &serde_json::Value) -> Result<Option<ReducedRun>, ConfigError> {
        Ok(Suite::reduced_run(self, &parse(Suite::name(self), config)?))
    }
    fn journal_rule(&self, config: &serde_json::Value) -> Result<JournalRule, ConfigError> {
        Ok(Suite::journal_rule(
            self,
            &parse(Suite::name(self), config)?,
        ))
    }
    fn plan_header(
        &self,
        config: &serde_json::Value,
        device: &str,
        device_bytes: u64,
    ) -> Result<String, ConfigError> {
        let config = parse(Suite::name(self), config)?;
        Ok(Suite::plan_header(self, &config, device, device_bytes))
    }
}

/// How a configuration is smaller than the paper's ([`Suite::reduced_run`]).
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum ReducedRun {
    /// `--quick`: smaller parameter ranges and fewer IOs (uflip).
    Quick,
    /// `--scale X` (X below 1, `--quick` on the papers' suites is 0.1): X
    /// times the paper's IOs per run.
    Scale(f64),
}

static REGISTRY: [&dyn DynSuite; 5] = [
    &uflip::Uflip,
    &chen09::Chen09,
    &wang11::Wang11,
    &hudlet11::Hudlet11,
    &budilovsky11::Budilovsky11,
];

/// Every suite: each runs on the executor into a results directory.
pub fn registry() -> &'static [&'static dyn DynSuite] {
    &REGISTRY
}

/// The registry's suite named `name` (`None` for the OLTP matrix, which is
/// not a [`Suite`]: [`kind`] finds both).
pub fn find(name: &str) -> Option<&'static dyn DynSuite> {
    REGISTRY.iter().copied().find(|s| s.name() == name)
}

static OLTP_MATRICES: [&wang11_oltp::OltpMatrix; 1] = [&wang11_oltp::OltpMatrix];

/// Every OLTP matrix (one: `wang11-oltp`), the other kind of suite
/// results directory: each case a whole `flashlab oltp` run.
pub fn oltp_matrices() -> &'static [&'static wang11_oltp::OltpMatrix] {
    &OLTP_MATRICES
}

/// What a results directory's manifest can name as its suite.
#[derive(Clone, Copy)]
pub enum Kind {
    /// A suite of the registry: a plan of executor steps, its journal and figures.
    Executor(&'static dyn DynSuite),
    /// An OLTP matrix: whole `flashlab oltp` runs in subdirectories and the
    /// summary of their `oltp.json`.
    Oltp(&'static wang11_oltp::OltpMatrix),
}

impl Kind {
    pub fn name(&self) -> &'static str {
        match self {
            Kind::Executor(s) => s.name(),
            Kind::Oltp(m) => m.name(),
        }
    }

    pub fn title(&self) -> &'static str {
        match self {
            Kind::Executor(s) => s.title(),
            Kind::Oltp(m) => m.title(),
        }
    }
}

/// The suite or OLTP matrix named `name` (a manifest's `suite.name`).
pub fn kind(name: &str) -> Option<Kind> {
    find(name).map(Kind::Executor).or_else(|| {
        OLTP_MATRICES
            .iter()
            .copied()
            .find(|m| m.name() == name)
            .map(Kind::Oltp)
    })
}

/// The parts every suite's summary shares: device, notes (the journal's
/// and dominated runs'), flags.
pub(crate) fn base_summary(suite: &dyn DynSuite, input: &SummaryInput) -> SuiteSummary {
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
    suite: &dyn DynSuite,
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
    suite: &dyn DynSuite,
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
pub(crate) fn paper_default_config(quick: bool) -> crate::papers::PaperConfig {
    crate::papers::PaperConfig {
        scale: if quick { QUICK_SCALE } else { 1.0 },
        ..Default::default()
    }
}

/// chen09, wang11 and hudlet11 are reduced by their `--scale` (which
/// `--quick` sets) below 1.
pub(crate) fn paper_reduced_run(config: &crate::papers::PaperConfig) -> Option<ReducedRun> {
    (config.scale < 1.0).then_some(ReducedRun::Scale(config.scale))
}

/// The IO-count factor of `--quick` in chen09, wang11 and hudlet11.
pub const QUICK_SCALE: f64 = 0.1;

#[cfg(test)]
mod tests {
    use super::*;

    /// `--resume` seeds the device probe from the journal's configuration
    /// through the suite's typed config: every suite's seed is the one its
    /// configuration holds, and a configuration that does not parse is an
    /// error naming the suite, not a silent default.
    #[test]
    fn every_suite_reads_its_seed_from_its_typed_config() {
        for suite in registry() {
            let mut config = suite.default_config(true);
            config["seed"] = serde_json::json!(7_777);
            assert_eq!(suite.seed(&config).unwrap(), 7_777, "{}", suite.name());
            let err = suite
                .seed(&serde_json::json!({"seed": "not a number"}))
                .unwrap_err();
            assert!(
                err.to_string()
                    .starts_with(&format!("{}: invalid configuration", suite.name())),
                "{}: {err}",
                suite.name()
            );
        }
    }
}
