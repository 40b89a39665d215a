//! A suite's configuration is its own type (`Suite::Config`); the registry
//! holds the same suites with the configuration as the JSON a journal saves.
//! Both doors give the same plan, and a configuration of the wrong shape is
//! refused naming the suite. Every suite of the registry runs on the
//! executor; the OLTP matrix is a kind of its own, outside it. What a suite
//! says of itself (its name in prose, whether a configuration is a reduced
//! run) comes from its typed configuration, not from JSON keys.

use flashlab_suite::papers::PaperConfig;
use flashlab_suite::session;
use flashlab_suite::suites::budilovsky11::{Budilovsky11, Budilovsky11Config};
use flashlab_suite::suites::chen09::Chen09;
use flashlab_suite::suites::uflip::Uflip;
use flashlab_suite::suites::wang11_oltp::{self, OltpMatrix, Part};
use flashlab_suite::suites::{self, JournalRule, Kind, ReducedRun, Suite};
use flashlab_suite::uflip::UflipConfig;

const GIB: u64 = 1 << 30;

/// The plan a suite gives for its typed configuration, and the one the
/// registry gives for that configuration as JSON, serialized.
fn both_plans<S: Suite>(suite: &S, config: &S::Config, device_bytes: u64) -> (String, String) {
    let typed = Suite::plan(suite, config, device_bytes).expect("typed plan");
    let json = serde_json::to_value(config).unwrap();
    let registry = suites::find(Suite::name(suite)).expect("in the registry");
    let erased = registry.plan(&json, device_bytes).expect("registry plan");
    (
        serde_json::to_string(&typed).unwrap(),
        serde_json::to_string(&erased).unwrap(),
    )
}

#[test]
fn the_typed_configuration_and_its_json_plan_the_same_runs() {
    let uflip = UflipConfig {
        quick: true,
        benchmarks: vec!["granularity".into(), "pause".into()],
        ..UflipConfig::default()
    };
    let (a, b) = both_plans(&Uflip, &uflip, GIB);
    assert_eq!(a, b);
    assert!(a.contains("granularity"));

    let paper = PaperConfig {
        scale: 0.1,
        ..PaperConfig::default()
    };
    let (a, b) = both_plans(&Chen09, &paper, GIB);
    assert_eq!(a, b);

    let (a, b) = both_plans(&Budilovsky11, &Budilovsky11Config::quick(), GIB / 4);
    assert_eq!(a, b);
}

#[test]
fn every_suite_of_the_registry_plans_its_own_default_configuration() {
    let names: Vec<&str> = suites::registry().iter().map(|s| s.name()).collect();
    assert_eq!(
        names,
        ["uflip", "chen09", "wang11", "hudlet11", "budilovsky11"]
    );
    for s in suites::registry() {
        let config = s.default_config(true);
        let plan = s.plan(&config, GIB).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(plan.suite, s.name());
        assert!(plan.run_count() > 0, "{}: an empty plan", s.name());
    }
}

/// The OLTP matrix's cases are whole `flashlab oltp` runs, not executor
/// steps: it is not a `Suite` and not in the registry, but a results
/// directory naming it is still found, as its own kind.
#[test]
fn the_oltp_matrix_is_its_own_kind_outside_the_registry() {
    assert!(suites::find("wang11-oltp").is_none());
    assert!(suites::registry().iter().all(|s| s.name() != "wang11-oltp"));
    let matrices: Vec<&str> = suites::oltp_matrices().iter().map(|m| m.name()).collect();
    assert_eq!(matrices, ["wang11-oltp"]);
    match suites::kind("wang11-oltp") {
        Some(Kind::Oltp(m)) => {
            assert_eq!(m.title(), wang11_oltp::TITLE);
            assert!(m.title().starts_with("Wang et al. (IEICE 2011)"));
        }
        _ => panic!("wang11-oltp is not found as an OLTP matrix"),
    }
    assert!(matches!(suites::kind("wang11"), Some(Kind::Executor(s)) if s.name() == "wang11"));
    assert!(suites::kind("wang12").is_none());
    // A sweep (or Python) asking for it is told which command runs it.
    let e = session::runnable("wang11-oltp").err().unwrap().to_string();
    assert!(
        e.contains("does not run on the executor (use `flashlab suite wang11-oltp`)"),
        "{e}"
    );
    // Its cases: every part asked for, in the paper's order.
    let one = |s: &str| vec![s.to_string()];
    let cases = OltpMatrix.cases(
        &[Part::Fig11, Part::Fig6To9],
        &one("postgres"),
        &one("intel-x25e"),
        &one("ext2"),
    );
    let parts: Vec<Part> = cases.iter().map(|c| c.part).collect();
    assert_eq!(parts[0], Part::Fig6To9);
    assert_eq!(parts.len(), 1 + 2 * wang11_oltp::FIG11_BUFFERS.len());
    assert!(parts[1..].iter().all(|p| *p == Part::Fig11));
    let summary = OltpMatrix.summarise(&[], &[Part::Fig10], "sim", Vec::new());
    assert_eq!(summary.suite, "wang11-oltp");
    assert_eq!(
        summary.findings.len(),
        1,
        "Fig. 10's not-comparable finding"
    );
}

#[test]
fn a_configuration_of_the_wrong_shape_is_refused_naming_the_suite() {
    let chen09 = suites::find("chen09").unwrap();
    let mut config = chen09.default_config(false);
    config["scale"] = serde_json::json!("a tenth");
    let e = chen09.plan(&config, GIB).unwrap_err().to_string();
    assert!(e.starts_with("chen09: invalid configuration"), "{e}");
    assert!(e.contains("invalid type"), "{e}");
    let e = chen09.reduced_run(&config).unwrap_err().to_string();
    assert!(e.starts_with("chen09: invalid configuration"), "{e}");
}

/// The CLI's messages name uFLIP as its paper writes it, the others by
/// their command-line names.
#[test]
fn a_suite_names_itself_in_prose() {
    let prose: Vec<&str> = suites::registry()
        .iter()
        .map(|s| s.display_name())
        .collect();
    assert_eq!(
        prose,
        ["uFLIP", "chen09", "wang11", "hudlet11", "budilovsky11"]
    );
}

/// `--quick` on uflip narrows its ranges; on the papers' suites it is
/// `--scale 0.1`, and a `--scale` below 1 is reduced too; budilovsky11
/// says nothing of its `--quick`, as before.
#[test]
fn a_reduced_run_is_known_from_the_typed_configuration() {
    let reduced = |name: &str, config: &serde_json::Value| {
        suites::find(name).unwrap().reduced_run(config).unwrap()
    };
    let default = |name: &str, quick: bool| suites::find(name).unwrap().default_config(quick);
    assert_eq!(
        reduced("uflip", &default("uflip", true)),
        Some(ReducedRun::Quick)
    );
    assert_eq!(reduced("uflip", &default("uflip", false)), None);
    for paper in ["chen09", "wang11", "hudlet11"] {
        assert_eq!(
            reduced(paper, &default(paper, true)),
            Some(ReducedRun::Scale(suites::QUICK_SCALE)),
            "{paper}"
        );
        assert_eq!(reduced(paper, &default(paper, false)), None, "{paper}");
        let mut larger = default(paper, false);
        larger["scale"] = serde_json::json!(2.0);
        assert_eq!(
            reduced(paper, &larger),
            None,
            "{paper}: more IOs are not reduced"
        );
        larger["scale"] = serde_json::json!(0.25);
        assert_eq!(reduced(paper, &larger), Some(ReducedRun::Scale(0.25)));
    }
    assert_eq!(
        reduced("budilovsky11", &default("budilovsky11", true)),
        None
    );
    // The note the summary opens with, worded by how the run was reduced.
    let quick = session::reduced_run_note(ReducedRun::Quick);
    assert!(
        quick.contains("(--quick: smaller parameter ranges and fewer IOs)"),
        "{quick}"
    );
    let scaled = session::reduced_run_note(ReducedRun::Scale(0.25));
    assert!(
        scaled.contains("(--scale 0.25: 25 % of the paper's IOs per run)"),
        "{scaled}"
    );
    assert!(scaled.contains("not comparable to the paper's"), "{scaled}");
}

#[test]
fn the_journal_rule_comes_from_the_typed_configuration() {
    let cfg = UflipConfig {
        bound: 0.02,
        min_pause_ns: 5_000_000,
        min_ios: 100,
        state: flashlab_suite::state::StateMethod::Snia,
        ..UflipConfig::default()
    };
    assert_eq!(
        Suite::journal_rule(&Uflip, &cfg),
        JournalRule {
            state: "snia".into(),
            bound: 0.02,
            min_pause_ns: 5_000_000,
            min_ios: 100,
        }
    );
    // The paper suites run fixed IO counts after a sequential fill.
    let paper = suites::find("wang11").unwrap();
    let rule = paper.journal_rule(&paper.default_config(false)).unwrap();
    assert_eq!(
        rule,
        JournalRule {
            state: "sequential".into(),
            bound: 0.05,
            min_pause_ns: 0,
            min_ios: 16,
        }
    );
}
