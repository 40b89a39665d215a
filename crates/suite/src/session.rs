//! A suite's life around the [`Runner`](crate::runner::Runner): starting it
//! in a results directory (manifest, plan, figures, journal) and
//! summarising it once complete (summary JSON and Markdown, figures with
//! their markers). `flashlab suite NAME` and a sweep's suite points
//! (`flashlab-sweep`) both go through these functions, so a sweep point's
//! results directory is the one the CLI writes, and `flashlab report` reads it.
//!
//! [`configure`] builds a suite's configuration from options given as data
//! (a sweep grid's `[suite.options]`): the suite's own default configuration
//! ([`DynSuite::default_config`]) with the given fields replaced.

use std::io;

use flashlab_results::dir::write_json_atomic;
use flashlab_results::ResultsDir;
use serde_json::Value;

use crate::figures::FIGURES;
use crate::plan::Plan;
use crate::runner::{register_runs, Journal};
use crate::suites::{self, ConfigError, DynSuite, ReducedRun, SummaryInput};
use crate::summary::SuiteSummary;

/// The suite named `name`: every suite of the registry runs on the
/// executor; the OLTP matrix, named here too, is refused with the command
/// that runs it.
pub fn runnable(name: &str) -> Result<&'static dyn DynSuite, ConfigError> {
    let known = || {
        suites::registry()
            .iter()
            .map(|s| s.name())
            .collect::<Vec<_>>()
            .join(", ")
    };
    match suites::kind(name) {
        Some(suites::Kind::Executor(s)) => Ok(s),
        Some(suites::Kind::Oltp(m)) => Err(ConfigError(format!(
            "suite {}: it does not run on the executor (use `flashlab suite {}`); a sweep can run {}",
            m.name(),
            m.name(),
            known()
        ))),
        None => {
            let names: Vec<&str> = suites::registry()
                .iter()
                .map(|s| s.name())
                .chain(suites::oltp_matrices().iter().map(|m| m.name()))
                .collect();
            Err(ConfigError(format!(
                "unknown suite '{name}'; use one of {}{}",
                known(),
                flashlab_pattern::file::closest(name, names.iter())
                    .map_or(String::new(), |s| format!("; did you mean '{s}'?"))
            )))
        }
    }
}

/// `suite`'s configuration: its default (`quick` or not) with `options`
/// replacing fields, and `seed` as its seed. An option the configuration
/// does not have is refused, naming the ones it has.
pub fn configure(
    suite: &dyn DynSuite,
    quick: bool,
    options: &serde_json::Map<String, Value>,
    seed: u64,
) -> Result<Value, ConfigError> {
    let Value::Object(mut cfg) = suite.default_config(quick) else {
        return Err(ConfigError(format!(
            "suite {}: its configuration is not a table of options",
            suite.name()
        )));
    };
    for (key, value) in options {
        if key == "seed" || key == "quick" {
            return Err(ConfigError(format!(
                "suite option `{key}` is set by the sweep; use the grid's {}",
                if key == "seed" {
                    "seeds = [...]"
                } else {
                    "[suite] quick = true"
                }
            )));
        }
        if !cfg.contains_key(key) {
            let mut names: Vec<&str> = cfg
                .keys()
                .map(String::as_str)
                .filter(|k| *k != "seed" && *k != "quick")
                .collect();
            names.sort_unstable();
            return Err(ConfigError(format!(
                "{} has no option `{key}`; its options are {}",
                suite.name(),
                names.join(", ")
            )));
        }
        cfg.insert(key.clone(), value.clone());
    }
    if cfg.contains_key("seed") {
        cfg.insert("seed".into(), Value::from(seed));
    }
    Ok(Value::Object(cfg))
}

/// The plan of `config` on a device of `device_bytes`, every run a valid pattern.
pub fn plan(suite: &dyn DynSuite, config: &Value, device_bytes: u64) -> Result<Plan, ConfigError> {
    let plan = suite.plan(config, device_bytes)?;
    for run in plan.steps.iter().flat_map(|s| s.runs()) {
        run.spec.validate().map_err(|e| {
            ConfigError(format!(
                "{} run {}: {e}; change the suite's options or the device",
                suite.name(),
                run.name
            ))
        })?;
    }
    Ok(plan)
}

/// Starts `plan` in `results`: the manifest's suite and runs (every run
/// listed before the first IO), the plan, the figures (declared before any
/// run, so that the report can draw an interrupted suite's) and the journal.
pub fn begin(
    results: &mut ResultsDir,
    suite: &dyn DynSuite,
    config: Value,
    plan: Plan,
) -> io::Result<Journal> {
    let rule = suite
        .journal_rule(&config)
        .map_err(|e| io::Error::new(io::ErrorKind::InvalidInput, e))?;
    results.set_suite(serde_json::json!({
        "name": suite.name(),
        "state_enforcement": rule.state,
        "config": config,
    }))?;
    register_runs(results, &plan)?;
    let journal = Journal {
        suite: suite.name().to_string(),
        config,
        plan,
        completed_steps: 0,
        calibration: Default::default(),
        pause_between_runs_ns: None,
        lingering_ios: None,
        runs: Default::default(),
        bound: rule.bound,
        min_pause_ns: rule.min_pause_ns,
        min_ios: rule.min_ios,
        finished: false,
        notes: Vec::new(),
    };
    journal.save_plan(results)?;
    write_json_atomic(
        &results.root().join(FIGURES),
        &suite.figures(&journal.plan, None),
    )?;
    journal.save(results)?;
    Ok(journal)
}

/// The summary of a completed suite, saved as `SUITE-summary.json` and
/// `SUITE-summary.md`; its figures, now with the markers results give,
/// saved again.
pub fn summarise(results: &ResultsDir, journal: &Journal) -> io::Result<SuiteSummary> {
    results.write_summary()?;
    let suite = suites::find(&journal.suite).ok_or_else(|| {
        io::Error::new(
            io::ErrorKind::InvalidData,
            format!("unknown suite '{}' in the journal", journal.suite),
        )
    })?;
    let runs = results.summary().runs;
    let device = results.manifest().device.name.clone();
    let mut summary = suite.summarise(&SummaryInput {
        plan: &journal.plan,
        journal,
        runs: &runs,
        device: &device,
        results: Some(results),
    });
    // A journal from an older flashlab whose configuration no longer
    // parses still gets its summary; the note says what is unknown.
    match suite.reduced_run(&journal.config) {
        Ok(Some(reduced)) => summary.notes.insert(0, reduced_run_note(reduced)),
        Ok(None) => {}
        Err(e) => summary.notes.insert(
            0,
            format!("Whether this was a reduced run (--quick, --scale) is unknown: {e}."),
        ),
    }
    let root = results.root();
    write_json_atomic(
        &root.join(FIGURES),
        &suite.figures(&journal.plan, Some(&runs)),
    )?;
    write_json_atomic(&root.join(SuiteSummary::file_name(suite.name())), &summary)?;
    std::fs::write(
        root.join(format!("{}-summary.md", suite.name())),
        summary.markdown(),
    )?;
    Ok(summary)
}

/// What a reduced run (`--quick`, `--scale` below 1) says about its
/// findings: at a fraction of the paper's IOs a finding can change
/// direction (chen09 at 0.1: fragmentation 1.0x instead of 12.1x), so they
/// are not comparable to the paper's.
pub fn reduced_run_note(reduced: ReducedRun) -> String {
    let how = match reduced {
        ReducedRun::Quick => "--quick: smaller parameter ranges and fewer IOs".to_string(),
        ReducedRun::Scale(s) => {
            format!("--scale {s}: {:.0} % of the paper's IOs per run", s * 100.0)
        }
    };
    format!(
        "This was a reduced run ({how}); its findings are not comparable to the paper's \
         (at this size a finding can even change direction). Run without --quick or --scale \
         for the paper's sizes."
    )
}
