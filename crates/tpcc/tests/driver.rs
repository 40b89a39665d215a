//! The driver against a real PostgreSQL 15: load two warehouses, run the
//! five transactions, check the database afterwards. One cluster and one load
//! serve the steps below, in order (each step is a function named after
//! what it shows), to keep the whole test well under a minute and a half.

mod common;

use std::io::Read;
use std::sync::atomic::AtomicBool;
use std::sync::Mutex;
use std::time::{Duration, Instant};

use common::PgCluster;
use flashlab_tpcc::{
    check_consistency, generate_rows, load, run, LoadPhase, LoadProgress, LoadReport, TpccConfig,
    TpccError, TpccReport,
};

/// One number from a query returning one value of any integer type.
fn count(db: &postgres::Config, sql: &str) -> i64 {
    let mut c = db.connect(postgres::NoTls).unwrap();
    c.query_one(&format!("SELECT ({sql})::int8"), &[])
        .unwrap()
        .get(0)
}

const WAREHOUSES: i64 = 2;
const SEED: u64 = 42;

/// The loaded tables: which column holds the warehouse, and the primary key
/// order (HISTORY has no key: the order the loader writes it in).
const TABLES: [(&str, &str, &str); 9] = [
    ("item", "", "i_id"),
    ("warehouse", "w_id", "w_id"),
    ("district", "d_w_id", "d_id"),
    ("customer", "c_w_id", "c_d_id, c_id"),
    ("history", "h_w_id", "h_d_id, h_c_id"),
    ("new_order", "no_w_id", "no_d_id, no_o_id"),
    ("orders", "o_w_id", "o_d_id, o_id"),
    ("order_line", "ol_w_id", "ol_d_id, ol_o_id, ol_number"),
    ("stock", "s_w_id", "s_i_id"),
];

fn load_warehouses(db: &postgres::Config, warehouses: u32, workers: u32) -> LoadReport {
    let phases = Mutex::new(Vec::new());
    let report = load(db, warehouses, workers, SEED, &|p: LoadProgress| {
        phases.lock().unwrap().push(p.phase)
    })
    .unwrap();
    let phases = phases.into_inner().unwrap();
    assert_eq!(phases.first(), Some(&LoadPhase::Schema));
    assert_eq!(phases.last(), Some(&LoadPhase::Done));
    report
}

fn loading_two_warehouses_gives_the_spec_row_counts(db: &postgres::Config) -> LoadReport {
    let r = load_warehouses(db, WAREHOUSES as u32, 2);
    eprintln!(
        "loaded {WAREHOUSES} warehouses: {} rows in {:.1} s (data {:.1} s, indexes {:.1} s, analyze {:.1} s), {} MiB",
        r.total_rows,
        r.load_s,
        r.data_s,
        r.index_s,
        r.analyze_s,
        r.database_size_bytes >> 20
    );
    // Clause 4.3.3.1's cardinalities: ITEM once, the rest per warehouse.
    let w = WAREHOUSES;
    let expect = [
        ("item", 100_000),
        ("warehouse", w),
        ("district", 10 * w),
        ("customer", 30_000 * w),
        ("history", 30_000 * w),
        ("orders", 30_000 * w),
        ("new_order", 9_000 * w),
        ("stock", 100_000 * w),
    ];
    for (table, rows) in expect {
        assert_eq!(
            count(db, &format!("SELECT count(*) FROM {table}")),
            rows,
            "{table}"
        );
    }
    let lines = count(db, "SELECT count(*) FROM order_line");
    assert!(
        (150_000 * w..=450_000 * w).contains(&lines),
        "5-15 lines per order: {lines}"
    );
    assert_eq!(lines, count(db, "SELECT sum(o_ol_cnt) FROM orders"));
    assert_eq!(r.rows.order_line, lines as u64);
    assert_eq!(r.rows.stock, 100_000 * w as u64);
    assert_eq!(r.total_rows, r.rows.total());
    // The size estimate for device sizing holds within 10 %.
    let estimate = flashlab_tpcc::estimated_database_bytes(WAREHOUSES as u32) as f64;
    let size = r.database_size_bytes as f64;
    assert!(
        (size - estimate).abs() < 0.1 * estimate,
        "{size} bytes, estimated {estimate}"
    );
    // Undelivered orders are the last 900 of each district.
    assert_eq!(count(db, "SELECT min(no_o_id) FROM new_order"), 2101);
    assert_eq!(
        count(db, "SELECT count(*) FROM orders WHERE o_carrier_id IS NULL"),
        9_000 * w
    );
    // "ORIGINAL" in about 10 % of I_DATA and S_DATA; "BC" credit for about 10 %.
    for (what, sql, total) in [
        (
            "item",
            "SELECT count(*) FROM item WHERE i_data LIKE '%ORIGINAL%'",
            100_000,
        ),
        (
            "stock",
            "SELECT count(*) FROM stock WHERE s_data LIKE '%ORIGINAL%'",
            100_000 * w,
        ),
        (
            "customer",
            "SELECT count(*) FROM customer WHERE c_credit = 'BC'",
            30_000 * w,
        ),
    ] {
        let n = count(db, sql);
        assert!((n * 100 / total - 10).abs() <= 1, "{what}: {n} of {total}");
    }
    // Every district holds all 1,000 last names (its first 1,000 customers).
    let sql = "SELECT min(n) FROM (SELECT count(DISTINCT c_last) n FROM customer GROUP BY c_w_id, c_d_id) x";
    assert_eq!(count(db, sql), 1000);
    r
}

/// The bytes `COPY (query) TO STDOUT` prints.
fn copy_out(db: &postgres::Config, query: &str) -> Vec<u8> {
    let mut c = db.connect(postgres::NoTls).unwrap();
    let mut reader = c.copy_out(&format!("COPY ({query}) TO STDOUT")).unwrap();
    let mut out = Vec::new();
    reader.read_to_end(&mut out).unwrap();
    out
}

fn the_database_holds_the_rows_the_seed_defines(db: &postgres::Config) {
    // The loader's rows depend on the seed only (not on the workers or their
    // timing): every loaded table, read back, is byte for byte what the
    // pure generator writes for seed 42.
    for (table, w_col, key) in TABLES {
        let warehouses = if w_col.is_empty() { 1 } else { WAREHOUSES };
        for w in 1..=warehouses {
            let filter = if w_col.is_empty() {
                "true".to_string()
            } else {
                format!("{w_col} = {w}")
            };
            let loaded = copy_out(
                db,
                &format!("SELECT * FROM {table} WHERE {filter} ORDER BY {key}"),
            );
            let mut expected = Vec::new();
            generate_rows(SEED, table, w as u32, &mut expected).unwrap();
            if loaded != expected {
                let (l, e) = (
                    String::from_utf8_lossy(&loaded),
                    String::from_utf8_lossy(&expected),
                );
                let (n, (a, b)) = l
                    .lines()
                    .zip(e.lines())
                    .enumerate()
                    .find(|(_, (a, b))| a != b)
                    .unwrap_or((0, ("", "")));
                panic!("{table} of warehouse {w} differs from seed {SEED}'s rows at row {n}: {a:?} vs {b:?}");
            }
        }
    }
    // And another seed defines other rows.
    let mut other = Vec::new();
    generate_rows(SEED + 1, "customer", 1, &mut other).unwrap();
    assert_ne!(
        other,
        copy_out(
            db,
            "SELECT * FROM customer WHERE c_w_id = 1 ORDER BY c_d_id, c_id"
        )
    );
}

fn a_run_reports_tpmc_every_type_the_mix_and_ordered_percentiles(
    db: &postgres::Config,
) -> TpccReport {
    let cfg = TpccConfig {
        warehouses: WAREHOUSES as u32,
        terminals: 4,
        ramp_up: Duration::from_secs(1),
        duration: Duration::from_secs(5),
        ..TpccConfig::default()
    };
    let mut samples = Vec::new();
    let r = run(db, &cfg, &AtomicBool::new(false), &mut |s| {
        samples.push(s.clone())
    })
    .unwrap();
    eprintln!(
        "4 terminals, 5 s: tpmC {:.0}, {:.0} transactions/s, New-Order p90 {} us",
        r.tpmc, r.transactions_per_s, r.new_order.response_time.p90_us
    );
    assert!(!r.cancelled);
    assert!(r.tpmc > 0.0);
    let table = r.table();
    assert_eq!(table.lines().count(), 8, "{table}");
    assert!(
        table.starts_with("tpmC ") && table.contains("Stock-Level"),
        "{table}"
    );
    assert!(r.started_unix_ns > 1_700_000_000_000_000_000 && r.started_monotonic_ns > 0);
    // The report survives a JSON round trip (flashlab oltp saves it).
    let json = serde_json::to_string(&r).unwrap();
    assert_eq!(serde_json::from_str::<TpccReport>(&json).unwrap(), r);
    assert!(
        (r.measured_s - 5.0).abs() < 1e-6,
        "measured window {}",
        r.measured_s
    );
    // tpmC counts every completed New-Order, the user rollbacks included.
    assert!(
        (r.tpmc - (r.new_order.commits + r.new_order.rollbacks) as f64 * 60.0 / r.measured_s).abs()
            < 1e-6
    );
    assert_eq!(r.mix.types.len(), 5);
    assert!(r.table().contains(&format!("mix: {}", r.mix.verdict)));
    let completed: u64 = r.types().iter().map(|t| t.commits + t.rollbacks).sum();
    // The mix: each type within 4 binomial standard deviations of its
    // target share (the per-terminal deck varies less than that).
    let deck = [10.0, 10.0, 1.0, 1.0, 1.0].map(|c| c * 100.0 / 23.0);
    for (t, target) in r.types().into_iter().zip(deck) {
        assert!(t.commits > 0, "{} never committed", t.name);
        assert_eq!(t.errors, 0, "{} had errors", t.name);
        let sigma = (target * (100.0 - target) / completed as f64).sqrt();
        assert!(
            (t.mix_percent - target).abs() <= 4.0 * sigma,
            "{}: {:.1} % of {completed}, target {target} %",
            t.name,
            t.mix_percent
        );
        let p = &t.response_time;
        assert!(
            p.p50_us > 0 && p.p50_us <= p.p90_us && p.p90_us <= p.p95_us,
            "{}: {p:?}",
            t.name
        );
        assert!(
            p.p95_us <= p.p99_us && p.p99_us <= p.max_us,
            "{}: {p:?}",
            t.name
        );
        assert_eq!(p.count, t.commits + t.rollbacks);
    }
    // Only New-Order rolls back, and only about 1 % of the time.
    assert!(
        r.new_order.rollbacks * 100 <= r.new_order.commits * 5 + 5,
        "rollbacks {}",
        r.new_order.rollbacks
    );
    assert!(r.types()[1..].iter().all(|t| t.rollbacks == 0));
    // One sample per second, the first in ramp-up, the measured ones after.
    assert_eq!(samples, r.seconds);
    assert!(
        (5..=7).contains(&r.seconds.len()),
        "{} samples",
        r.seconds.len()
    );
    assert!(r.seconds[0].ramp_up && !r.seconds.last().unwrap().ramp_up);
    assert!(r
        .seconds
        .iter()
        .enumerate()
        .all(|(i, s)| s.second == i as u32 + 1));
    // The run's C_LAST keeps the delta rule against the load's (2.1.6.1).
    let delta = (r.nurand.c_last_run - r.nurand.c_last_load).abs();
    assert!((65..=119).contains(&delta) && delta != 96 && delta != 112);
    r
}

fn the_database_holds_exactly_what_committed(db: &postgres::Config, r: &TpccReport) {
    let w = WAREHOUSES as u64;
    // Each committed New-Order added one order; rolled-back ones left nothing.
    assert_eq!(
        count(db, "SELECT count(*) FROM orders") as u64,
        30_000 * w + r.all_commits.new_order
    );
    assert_eq!(
        count(db, "SELECT count(*) FROM order_line WHERE ol_i_id > 100000"),
        0
    );
    // Each Payment added one history row.
    assert_eq!(
        count(db, "SELECT count(*) FROM history") as u64,
        30_000 * w + r.all_commits.payment
    );
    // Each Delivery delivered one order in each district of its warehouse
    // (9,000 undelivered orders per warehouse never run dry in a short run).
    let undelivered = count(db, "SELECT count(*) FROM new_order") as u64;
    assert_eq!(
        9_000 * w + r.all_commits.new_order - undelivered,
        r.all_commits.delivery * 10
    );
    assert_eq!(r.delivery_skipped_districts, 0);
}

fn remote_orders_and_payments_reached_the_other_warehouse(db: &postgres::Config, r: &TpccReport) {
    assert!(
        r.all_commits.new_order >= 100,
        "only {} New-Orders",
        r.all_commits.new_order
    );
    // About 1 % of order lines come from the other warehouse (10 per
    // 100 New-Orders): none at all would be a 1-in-e^10 event, or a bug.
    let remote_lines = count(
        db,
        "SELECT count(*) FROM order_line WHERE ol_supply_w_id <> ol_w_id",
    );
    assert!(remote_lines > 0);
    assert_eq!(
        remote_lines,
        count(db, "SELECT sum(s_remote_cnt) FROM stock")
    );
    assert!(count(db, "SELECT count(*) FROM orders WHERE o_all_local = 0") > 0);
    // 15 % of Payments pay for a customer of the other warehouse.
    assert!(count(db, "SELECT count(*) FROM history WHERE h_c_w_id <> h_w_id") > 0);
    // Both warehouses were home to terminals.
    assert_eq!(
        count(
            db,
            "SELECT count(DISTINCT o_w_id) FROM orders WHERE o_id > 3000"
        ),
        2
    );
}

fn the_consistency_conditions_hold_after_the_run(db: &postgres::Config) {
    let c = check_consistency(db).unwrap();
    assert!(c.conditions.len() >= 4);
    assert!(c.ok(), "{:?}", c.conditions);
}

fn a_broken_database_fails_the_consistency_check(db: &postgres::Config) {
    let mut c = db.connect(postgres::NoTls).unwrap();
    c.batch_execute("UPDATE warehouse SET w_ytd = w_ytd + 1 WHERE w_id = 1")
        .unwrap();
    let report = check_consistency(db).unwrap();
    assert!(!report.ok());
    assert_eq!(
        report
            .conditions
            .iter()
            .find(|c| c.number == 1)
            .unwrap()
            .violations,
        1
    );
    // Repaired (the next consistency check, after the cancelled run, sees it).
    c.batch_execute("UPDATE warehouse SET w_ytd = w_ytd - 1 WHERE w_id = 1")
        .unwrap();
}

fn cancel_stops_the_run_early_with_a_partial_report(db: &postgres::Config) {
    let cfg = TpccConfig {
        terminals: 2,
        ramp_up: Duration::from_secs(1),
        duration: Duration::from_secs(60),
        ..TpccConfig::default()
    };
    let cancel = AtomicBool::new(false);
    let began = Instant::now();
    let r = run(db, &cfg, &cancel, &mut |s| {
        if s.second == 2 {
            cancel.store(true, std::sync::atomic::Ordering::Relaxed);
        }
    })
    .unwrap();
    let took = began.elapsed();
    assert!(took < Duration::from_secs(15), "cancel took {took:?}");
    assert!(r.cancelled);
    assert!(
        r.measured_s > 0.0 && r.measured_s < 10.0,
        "measured {}",
        r.measured_s
    );
    assert_eq!(r.seconds.len(), 2);
    assert!(r.new_order.commits > 0 && r.tpmc > 0.0);
}

fn keying_and_think_times_pace_the_terminals(db: &postgres::Config) {
    let cfg = TpccConfig {
        terminals: 2,
        ramp_up: Duration::ZERO,
        duration: Duration::from_secs(3),
        keying_and_think: true,
        ..TpccConfig::default()
    };
    let began = Instant::now();
    let r = run(db, &cfg, &AtomicBool::new(false), &mut |_| {}).unwrap();
    // Every keying time is at least 2 s: in 3 s a terminal completes at most
    // one transaction, and the run still ends on time (sleeps are cut short).
    let done = r.all_commits.total() + r.all_new_order_rollbacks;
    assert!(done <= 2, "{done} transactions in 3 s with keying times");
    assert!(
        began.elapsed() < Duration::from_secs(8),
        "took {:?}",
        began.elapsed()
    );
    assert!(r.seconds.iter().all(|s| !s.ramp_up));
}

fn a_cancelled_load_stops_early_and_drops_cleanly(db: &postgres::Config) {
    let cancel = AtomicBool::new(false);
    let began = Mutex::new(None);
    let e = std::thread::scope(|s| {
        s.spawn(|| {
            // Cancel 300 ms into the data phase: mid-COPY (a warehouse's data
            // takes seconds here).
            while began.lock().unwrap().is_none() {
                std::thread::sleep(Duration::from_millis(10));
            }
            std::thread::sleep(Duration::from_millis(300));
            cancel.store(true, std::sync::atomic::Ordering::Relaxed);
        });
        flashlab_tpcc::load_cancellable(db, 1, 2, SEED, &cancel, &|p| {
            if p.phase == LoadPhase::Data {
                began.lock().unwrap().get_or_insert(Instant::now());
            }
        })
        .unwrap_err()
    });
    assert!(matches!(e, TpccError::Cancelled), "{e}");
    assert!(!e.to_string().contains('\n'));
    let rows: i64 = ["item", "stock", "customer", "order_line"]
        .iter()
        .map(|t| count(db, &format!("SELECT count(*) FROM {t}")))
        .sum();
    assert!(
        rows < 100_000 + 100_000 + 30_000 + 150_000,
        "{rows} rows after a cancel"
    );
    flashlab_tpcc::drop_schema(db).unwrap();
    assert_eq!(
        count(
            db,
            "SELECT count(*) FROM pg_tables WHERE schemaname = 'public'"
        ),
        0
    );
}

fn a_lost_connection_stops_the_run_with_a_one_line_error(db: &postgres::Config) {
    let cfg = TpccConfig {
        terminals: 2,
        ramp_up: Duration::ZERO,
        duration: Duration::from_secs(60),
        ..TpccConfig::default()
    };
    let began = Instant::now();
    let mut admin = db.connect(postgres::NoTls).unwrap();
    let e = run(db, &cfg, &AtomicBool::new(false), &mut |s| {
        if s.second == 1 {
            // What a server restart or an administrator does to the terminals.
            admin
                .batch_execute(
                    "SELECT pg_terminate_backend(pid) FROM pg_stat_activity
                     WHERE datname = current_database() AND pid <> pg_backend_pid()",
                )
                .unwrap();
        }
    })
    .unwrap_err();
    assert!(
        began.elapsed() < Duration::from_secs(20),
        "took {:?}",
        began.elapsed()
    );
    assert!(matches!(e, TpccError::Terminal { .. }), "{e:?}");
    let line = e.to_string();
    eprintln!("terminals cut off: {line}");
    assert!(
        !line.contains('\n') && line.contains("the run was stopped"),
        "{line}"
    );
}

fn a_panicking_callback_stops_the_terminals(db: &postgres::Config) {
    let cfg = TpccConfig {
        terminals: 2,
        ramp_up: Duration::ZERO,
        duration: Duration::from_secs(60),
        ..TpccConfig::default()
    };
    let began = Instant::now();
    let result = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        run(db, &cfg, &AtomicBool::new(false), &mut |_| {
            // resume_unwind: a panic without the hook's message and backtrace.
            std::panic::resume_unwind(Box::new("the caller's callback failed"))
        })
    }));
    assert!(result.is_err());
    // The panic reached us after the terminals stopped, not after 60 s.
    assert!(
        began.elapsed() < Duration::from_secs(15),
        "took {:?}",
        began.elapsed()
    );
}

fn loading_into_a_loaded_database_is_refused(db: &postgres::Config) {
    let e = load(db, 1, 1, 42, &|_| {}).unwrap_err();
    assert!(matches!(e, TpccError::SchemaExists { .. }), "{e}");
}

fn running_more_warehouses_than_loaded_is_refused(db: &postgres::Config) {
    let cfg = TpccConfig {
        warehouses: 3,
        ..TpccConfig::default()
    };
    let e = run(db, &cfg, &AtomicBool::new(false), &mut |_| {}).unwrap_err();
    assert!(
        matches!(
            e,
            TpccError::TooFewWarehouses {
                asked: 3,
                loaded: 2
            }
        ),
        "{e}"
    );
    assert!(e.to_string().contains("at most 2"), "{e}");
}

/// Runs one step, printing how long it took (the test's time budget).
macro_rules! step {
    ($f:ident ( $($arg:expr),* )) => {{
        let began = Instant::now();
        let out = $f($($arg),*);
        eprintln!("{:>6.1} s  {}", began.elapsed().as_secs_f64(), stringify!($f));
        out
    }};
}

#[test]
fn tpcc_on_a_throwaway_postgresql_cluster() {
    let Some(pg) = PgCluster::start("tpcc_on_a_throwaway_postgresql_cluster") else {
        return;
    };
    let db = pg.database("tpcc");
    let loaded = step!(loading_two_warehouses_gives_the_spec_row_counts(&db));
    step!(the_database_holds_the_rows_the_seed_defines(&db));
    let r = step!(a_run_reports_tpmc_every_type_the_mix_and_ordered_percentiles(&db));
    step!(the_database_holds_exactly_what_committed(&db, &r));
    let grown = count(&db, "SELECT pg_database_size(current_database())")
        - loaded.database_size_bytes as i64;
    eprintln!(
        "the run grew the database by {} KiB: {} bytes per New-Order",
        grown >> 10,
        grown / r.all_commits.new_order.max(1) as i64
    );
    step!(remote_orders_and_payments_reached_the_other_warehouse(
        &db, &r
    ));
    step!(the_consistency_conditions_hold_after_the_run(&db));
    step!(a_broken_database_fails_the_consistency_check(&db));
    step!(cancel_stops_the_run_early_with_a_partial_report(&db));
    step!(the_consistency_conditions_hold_after_the_run(&db));
    step!(keying_and_think_times_pace_the_terminals(&db));
    step!(a_lost_connection_stops_the_run_with_a_one_line_error(&db));
    step!(a_panicking_callback_stops_the_terminals(&db));
    step!(loading_into_a_loaded_database_is_refused(&db));
    step!(running_more_warehouses_than_loaded_is_refused(&db));

    // A database that does not exist: the message says to create it.
    let e = load(&pg.config("no_such_db"), 1, 1, 1, &|_| {}).unwrap_err();
    assert!(
        matches!(e, TpccError::Connect { .. }) && e.to_string().contains("create the database"),
        "{e}"
    );

    step!(a_cancelled_load_stops_early_and_drops_cleanly(
        &pg.database("cancelled")
    ));

    let empty = pg.database("empty");
    let e = run(
        &empty,
        &TpccConfig::default(),
        &AtomicBool::new(false),
        &mut |_| {},
    )
    .unwrap_err();
    assert!(matches!(e, TpccError::NotLoaded { .. }), "{e}");
}

#[test]
fn a_bad_connection_is_a_typed_one_line_error() {
    let mut db = postgres::Config::new();
    db.host_path("/nonexistent/flashlab-socket-dir")
        .port(5432)
        .user("postgres")
        .dbname("tpcc");
    let e = load(&db, 1, 1, 1, &|_| {}).unwrap_err();
    assert!(matches!(e, TpccError::Connect { .. }), "{e:?}");
    let line = e.to_string();
    assert!(!line.contains('\n'), "{line}");
    assert!(
        line.contains("/nonexistent/flashlab-socket-dir") && line.contains("socket directory"),
        "{line}"
    );
    let e = run(
        &db,
        &TpccConfig::default(),
        &AtomicBool::new(false),
        &mut |_| {},
    )
    .unwrap_err();
    assert!(matches!(e, TpccError::Connect { .. }), "{e:?}");
    let e = run(
        &db,
        &TpccConfig {
            terminals: 0,
            ..TpccConfig::default()
        },
        &AtomicBool::new(false),
        &mut |_| {},
    )
    .unwrap_err();
    assert!(matches!(e, TpccError::InvalidConfig { .. }), "{e:?}");
    assert!(!e.to_string().contains('\n'));
}
