//! A suite's configuration is its own type (`Suite::Config`); the registry
//! holds the same suites with the configuration as the JSON a journal saves.
//! Both doors give the same plan, and a configuration of the wrong shape is
//! refused naming the suite.

use flashlab_suite::papers::PaperConfig;
use flashlab_suite::suites::budilovsky11::{Budilovsky11, Budilovsky11Config};
use flashlab_suite::suites::chen09::Chen09;
use flashlab_suite::suites::uflip::Uflip;
use flashlab_suite::suites::{self, DynSuite, JournalRule, Suite};
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
fn every_runnable_suite_plans_its_own_default_configuration() {
    let runnable: Vec<&dyn DynSuite> = suites::registry()
        .iter()
        .copied()
        .filter(|s| s.default_config(true).is_some())
        .collect();
    let names: Vec<&str> = runnable.iter().map(|s| s.name()).collect();
    assert_eq!(
        names,
        ["uflip", "chen09", "wang11", "hudlet11", "budilovsky11"]
    );
    for s in runnable {
        let config = s.default_config(true).unwrap();
        let plan = s.plan(&config, GIB).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(plan.suite, s.name());
        assert!(plan.run_count() > 0, "{}: an empty plan", s.name());
    }
    // The OLTP matrix has no executor configuration to start from.
    assert!(suites::find("wang11-oltp")
        .unwrap()
        .default_config(false)
        .is_none());
}

#[test]
fn a_configuration_of_the_wrong_shape_is_refused_naming_the_suite() {
    let chen09 = suites::find("chen09").unwrap();
    let mut config = chen09.default_config(false).unwrap();
    config["scale"] = serde_json::json!("a tenth");
    let e = chen09.plan(&config, GIB).unwrap_err().to_string();
    assert!(e.starts_with("chen09: invalid configuration"), "{e}");
    assert!(e.contains("invalid type"), "{e}");
    // The OLTP matrix's configuration has no value at all.
    let oltp = suites::find("wang11-oltp").unwrap();
    assert!(oltp.plan(&serde_json::json!({}), GIB).is_err());
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
    let rule = paper
        .journal_rule(&paper.default_config(false).unwrap())
        .unwrap();
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
