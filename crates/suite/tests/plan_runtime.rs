//! fio's `runtime` and `time_based` over a whole suite's plan, as every
//! front end applies them (`flashlab suite --runtime`, a grid's `[suite]
//! runtime`, Python's dict).

use flashlab_suite::plan::{parse_runtime, Plan, RuntimeError, Step};
use flashlab_suite::session;

const GIB: u64 = 1 << 30;

fn plan_of(name: &str) -> Plan {
    let suite = session::runnable(name).unwrap();
    let config = session::configure(suite, true, &serde_json::Map::new(), 1).unwrap();
    session::plan(suite, &config, GIB).unwrap()
}

#[test]
fn a_runtime_caps_every_run_and_time_based_repeats_only_the_measured_ones() {
    let mut plan = plan_of("chen09");
    plan.with_runtime(2_000_000_000, true).unwrap();
    let mut measured = 0;
    for step in &plan.steps {
        for run in step.runs() {
            assert_eq!(run.spec.runtime_ns, Some(2_000_000_000), "{}", run.name);
            assert_eq!(
                run.spec.time_based,
                matches!(step, Step::Run(_)),
                "{}: only measured runs repeat",
                run.name
            );
            measured += usize::from(run.spec.time_based);
        }
    }
    assert!(measured > 0);
}

#[test]
fn adaptive_runs_refuse_time_based_and_leave_the_plan_as_it_was() {
    // uFLIP's measured runs stop when their mean is known within the bound.
    let mut plan = plan_of("uflip");
    let before = plan.clone();
    let e = plan.with_runtime(1_000_000_000, true).unwrap_err();
    assert!(matches!(e, RuntimeError::AdaptiveTimeBased { .. }), "{e:?}");
    assert_eq!(plan, before);
    assert!(e
        .render("--runtime", "--time_based", "--runtime 10s")
        .starts_with("--time_based: uflip run "));
    // A runtime alone caps them.
    plan.with_runtime(1_000_000_000, false).unwrap();
    assert!(plan
        .steps
        .iter()
        .flat_map(|s| s.runs())
        .all(|r| r.spec.runtime_ns == Some(1_000_000_000) && !r.spec.time_based));
}

#[test]
fn a_runtime_is_read_as_fio_reads_it_and_refusals_name_the_setting() {
    assert_eq!(parse_runtime(Some("10"), false), Ok(Some(10_000_000_000)));
    assert_eq!(parse_runtime(Some("250ms"), true), Ok(Some(250_000_000)));
    assert_eq!(parse_runtime(None, false), Ok(None));
    let grid =
        |e: RuntimeError| e.render("[suite] runtime", "[suite] time_based", "runtime = \"10s\"");
    assert_eq!(
        grid(parse_runtime(None, true).unwrap_err()),
        "[suite] time_based repeats each run until [suite] runtime; add e.g. runtime = \"10s\""
    );
    assert!(grid(parse_runtime(Some("0"), false).unwrap_err())
        .starts_with("[suite] runtime 0 runs nothing"));
    assert!(grid(parse_runtime(Some("soon"), false).unwrap_err()).starts_with("[suite] runtime: "));
}
