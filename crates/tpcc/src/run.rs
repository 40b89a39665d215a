//! The measured run: terminals (one thread and one connection each), the
//! per-second time series, and the report.
//!
//! A terminal deals its next transaction from its deck, draws the inputs,
//! optionally waits the keying time, runs the transaction (again with the same
//! inputs after a serialization failure or deadlock, counting each retry),
//! then optionally thinks. Response time runs from the first attempt's start
//! to the commit (or the user rollback), retries included. Transactions that
//! end during ramp-up appear in the time series only; the report's counts,
//! percentiles and tpmC cover the measured window.

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Mutex;
use std::time::{Duration, Instant};

use hdrhistogram::Histogram;
use postgres::error::SqlState;
use serde::{Deserialize, Serialize};

use crate::error::{During, TpccError};
use crate::load::{connect, load_constants, DISTRICTS_PER_WAREHOUSE};
use crate::rand::{NuConstants, Rng};
use crate::schema;
use crate::txn::{draw_input, execute, Deck, Extra, Home, Input, Outcome, Statements, TxnType};

/// A run's settings (see the crate docs).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct TpccConfig {
    pub warehouses: u32,
    pub terminals: u32,
    pub ramp_up: Duration,
    pub duration: Duration,
    /// Keying and think times of clause 5.2.5 when true; none (the paper's
    /// maximum-throughput setting) when false.
    pub keying_and_think: bool,
    pub seed: u64,
    /// Target-rate mode: the terminals together offer this many
    /// transactions (all five types) per minute, evenly spaced (see
    /// [`due_offset`]), instead of running flat out. Not with
    /// `keying_and_think`, which paces the terminals its own way.
    #[serde(default)]
    pub rate_per_min: Option<u32>,
    /// The deck the terminals deal from: TPC-C's mix, or one of Wang et
    /// al.'s Table 3 variations (Fig. 12).
    #[serde(default)]
    pub mix: crate::Mix,
}

/// When terminal `t` of `terminals` is due to start its `k`-th transaction
/// (0-based), from the start of the run, at `rate_per_min` transactions per
/// minute over all terminals: each terminal offers one every
/// `terminals / rate` minutes, the terminals shifted by a fraction of that
/// interval, so the arrivals interleave evenly. A fixed schedule, not a
/// pause after each transaction: a terminal that falls behind starts its
/// due transactions back to back, so the offered load stays what was asked
/// (as an open system's arrivals would), and the report counts the late starts.
pub fn due_offset(t: u32, terminals: u32, rate_per_min: u32, k: u64) -> Duration {
    let interval_s = 60.0 * terminals as f64 / rate_per_min.max(1) as f64;
    Duration::from_secs_f64(interval_s * (k as f64 + t as f64 / terminals.max(1) as f64))
}

impl Default for TpccConfig {
    fn default() -> TpccConfig {
        TpccConfig {
            warehouses: 1,
            terminals: 8,
            ramp_up: Duration::from_secs(10),
            duration: Duration::from_secs(60),
            keying_and_think: false,
            seed: 1,
            rate_per_min: None,
            mix: crate::Mix::Standard,
        }
    }
}

/// How many times one business transaction is re-run after serialization
/// failures or deadlocks before it counts as an error.
pub const MAX_RETRIES: u32 = 20;

/// How one attempt of a transaction failed, as the terminal loop treats it.
pub(crate) enum Failed {
    /// A serialization failure or deadlock: the same inputs run again.
    Retry,
    /// The connection or the server is gone: the terminal stops, and so
    /// does the run.
    Fatal(TpccError),
    /// One statement failed: counted as an error, the terminal goes on.
    Counted,
}

/// The seam between the terminal loop (DBMS-neutral: decks, inputs, timing,
/// counting) and one DBMS's connections and SQL dialect.
pub(crate) trait Backend: Sync {
    type Terminal;
    /// The loaded warehouses and the loader's NURand constants (tpcc_meta),
    /// after checking that every table is there.
    fn loaded(&self) -> Result<(u32, NuConstants, u64), TpccError>;
    fn open_terminal(&self, t: u32) -> Result<Self::Terminal, TpccError>;
    fn execute(
        &self,
        term: &mut Self::Terminal,
        t: u32,
        kind: TxnType,
        home: &Home,
        input: &Input,
    ) -> Result<(Outcome, Extra), Failed>;
}

/// PostgreSQL: one connection and its prepared statements per terminal.
struct Postgres<'a>(&'a postgres::Config);

impl Backend for Postgres<'_> {
    type Terminal = (postgres::Client, Statements);

    fn loaded(&self) -> Result<(u32, NuConstants, u64), TpccError> {
        let mut client = connect(self.0)?;
        if let Some(table) = schema::missing_table(&mut client)? {
            return Err(TpccError::NotLoaded {
                target: crate::load::describe(self.0),
                table,
            });
        }
        let meta = client
            .query_one(
                "SELECT warehouses, seed, c_last_load, c_id_load, ol_i_id_load FROM tpcc_meta",
                &[],
            )
            .during("reading the load's constants")?;
        let load_c = NuConstants {
            c_last: meta.get::<_, i32>(2) as i64,
            c_id: meta.get::<_, i32>(3) as i64,
            ol_i_id: meta.get::<_, i32>(4) as i64,
        };
        Ok((
            meta.get::<_, i32>(0) as u32,
            load_c,
            meta.get::<_, i64>(1) as u64,
        ))
    }

    fn open_terminal(&self, t: u32) -> Result<Self::Terminal, TpccError> {
        let mut client = connect(self.0)?;
        let statements =
            Statements::prepare(&mut client).map_err(|source| TpccError::Terminal {
                terminal: t,
                transaction: "preparing statements",
                source,
            })?;
        Ok((client, statements))
    }

    fn execute(
        &self,
        (client, statements): &mut Self::Terminal,
        t: u32,
        kind: TxnType,
        home: &Home,
        input: &Input,
    ) -> Result<(Outcome, Extra), Failed> {
        execute(client, statements, home, input).map_err(|e| {
            if retryable(&e) {
                Failed::Retry
            } else if fatal(&e) || client.is_closed() {
                Failed::Fatal(TpccError::Terminal {
                    terminal: t,
                    transaction: kind.name(),
                    source: e,
                })
            } else {
                Failed::Counted
            }
        })
    }
}

/// One value per transaction type.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct PerType {
    pub new_order: u64,
    pub payment: u64,
    pub order_status: u64,
    pub delivery: u64,
    pub stock_level: u64,
}

impl PerType {
    fn from_array(a: [u64; 5]) -> PerType {
        PerType {
            new_order: a[0],
            payment: a[1],
            order_status: a[2],
            delivery: a[3],
            stock_level: a[4],
        }
    }

    pub fn total(&self) -> u64 {
        self.new_order + self.payment + self.order_status + self.delivery + self.stock_level
    }
}

/// One second of the run (seconds count from the start of ramp-up).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SecondSample {
    /// 1 for [0 s, 1 s) after the start, and so on.
    pub second: u32,
    /// The second began before the end of ramp-up.
    pub ramp_up: bool,
    /// Transactions that completed in this second (New-Order user rollbacks
    /// are in `new_order_rollbacks`, not here).
    pub commits: PerType,
    pub new_order_rollbacks: u64,
    /// Re-runs after serialization failures or deadlocks.
    pub retries: u64,
    pub errors: u64,
    /// New-Orders completed in this second (commits and user rollbacks, as
    /// tpmC counts them), per minute.
    pub tpmc: f64,
    /// Completed transactions (commits and user rollbacks) of this second.
    pub transactions_per_s: f64,
}

/// Response-time percentiles in microseconds.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ResponseTimes {
    pub count: u64,
    pub mean_us: f64,
    pub p50_us: u64,
    pub p90_us: u64,
    pub p95_us: u64,
    pub p99_us: u64,
    pub max_us: u64,
}

/// One transaction type over the measured window.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct TypeReport {
    pub name: String,
    pub commits: u64,
    /// New-Order's 1 % user rollbacks (0 for the other types).
    pub rollbacks: u64,
    pub retries: u64,
    /// Failed after `MAX_RETRIES` retries, or a non-retryable SQL error.
    pub errors: u64,
    /// Share of all completed transactions (commits + rollbacks), percent.
    pub mix_percent: f64,
    /// Of completed transactions (commits and user rollbacks).
    pub response_time: ResponseTimes,
}

/// The NURand constants of the run and of the load (clause 2.1.6).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct NurandConstants {
    pub c_last_load: i64,
    pub c_last_run: i64,
    pub c_id: i64,
    pub ol_i_id: i64,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TpccReport {
    pub warehouses: u32,
    pub terminals: u32,
    pub ramp_up_s: f64,
    pub duration_s: f64,
    pub keying_and_think: bool,
    pub seed: u64,
    /// The run was cancelled before its end: the figures cover what ran.
    pub cancelled: bool,
    /// When the run (ramp-up) started: wall clock, nanoseconds since the Unix
    /// epoch, and CLOCK_MONOTONIC, to line the per-second series up with IO
    /// traces taken in the same run.
    pub started_unix_ns: u64,
    pub started_monotonic_ns: u64,
    /// Length of the measured window (after ramp-up), seconds.
    pub measured_s: f64,
    /// New-Orders completed per minute over the measured window: commits
    /// and the 1 % user rollbacks of clause 2.4.2.3, which the
    /// specification's tpmC counts as completed New-Orders.
    pub tpmc: f64,
    /// Completed transactions of all types per second, measured window.
    pub transactions_per_s: f64,
    pub new_order: TypeReport,
    pub payment: TypeReport,
    pub order_status: TypeReport,
    pub delivery: TypeReport,
    pub stock_level: TypeReport,
    /// Everything that committed since the start, ramp-up and the
    /// transactions in flight at the end included: what the database holds.
    pub all_commits: PerType,
    pub all_new_order_rollbacks: u64,
    /// Delivery: districts skipped because they had no undelivered order.
    pub delivery_skipped_districts: u64,
    /// The measured window's mix against clause 5.2.3's minimums.
    #[serde(default)]
    pub mix: MixAudit,
    /// Target-rate mode: the offered load (transactions per minute, all types).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rate_per_min: Option<u32>,
    /// Target-rate mode: measured-window transactions that started more than
    /// one arrival interval after they were due (the system could not keep
    /// up with the offered load).
    #[serde(default)]
    pub late_starts: u64,
    pub nurand: NurandConstants,
    /// From the start of ramp-up.
    pub seconds: Vec<SecondSample>,
}

/// One type's share of the measured window's mix.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct MixShare {
    pub name: String,
    /// Completed transactions (commits and user rollbacks).
    pub completed: u64,
    pub percent: f64,
    /// Clause 5.2.3's minimum (0 for New-Order, which has none).
    pub minimum_percent: f64,
    pub within: bool,
}

/// The realised mix over the measured window, audited as clause 9.2.2.5
/// asks: every type at or above its clause 5.2.3 minimum.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct MixAudit {
    pub completed: u64,
    pub types: Vec<MixShare>,
    /// All types at or above their minimums (false with nothing completed).
    pub within_spec: bool,
    /// One line: "within clause 5.2.3's minimums" or which types fell below.
    pub verdict: String,
}

impl MixAudit {
    /// The audit of completed-transaction counts in [`TxnType::ALL`] order
    /// (New-Order, Payment, Order-Status, Delivery, Stock-Level).
    pub fn of(completed: [u64; 5]) -> MixAudit {
        let total: u64 = completed.iter().sum();
        let types: Vec<MixShare> = TxnType::ALL
            .iter()
            .map(|&t| {
                let n = completed[t as usize];
                let percent = if total > 0 {
                    n as f64 * 100.0 / total as f64
                } else {
                    0.0
                };
                MixShare {
                    name: t.name().to_string(),
                    completed: n,
                    percent,
                    minimum_percent: t.minimum_percent(),
                    within: total > 0 && percent >= t.minimum_percent(),
                }
            })
            .collect();
        let below: Vec<String> = types
            .iter()
            .filter(|s| !s.within)
            .map(|s| format!("{} {:.2} % < {} %", s.name, s.percent, s.minimum_percent))
            .collect();
        let within_spec = total > 0 && below.is_empty();
        let verdict = if total == 0 {
            "not audited: no transaction completed in the measured window".to_string()
        } else if within_spec {
            format!("within clause 5.2.3's minimums ({total} transactions)")
        } else {
            format!(
                "below clause 5.2.3's minimums: {} ({total} transactions)",
                below.join(", ")
            )
        };
        MixAudit {
            completed: total,
            types,
            within_spec,
            verdict,
        }
    }
}

impl TpccReport {
    /// tpmC and the per-type table (counts, mix, response-time percentiles),
    /// as plain text lines for a terminal.
    pub fn table(&self) -> String {
        use std::fmt::Write as _;
        let mut out = String::new();
        let _ = writeln!(
            out,
            "tpmC {:.0} over {:.0} s ({} warehouses, {} terminals{}), {:.0} transactions/s{}",
            self.tpmc,
            self.measured_s,
            self.warehouses,
            self.terminals,
            if self.keying_and_think {
                ", keying and think times"
            } else {
                ""
            },
            self.transactions_per_s,
            if self.cancelled { " (cancelled)" } else { "" }
        );
        if let Some(rate) = self.rate_per_min {
            let _ = writeln!(
                out,
                "offered load {rate} transactions/min ({:.1}/s), achieved {:.1}/s; {} started late",
                rate as f64 / 60.0,
                self.transactions_per_s,
                self.late_starts
            );
        }
        let _ = writeln!(
            out,
            "{:<13} {:>8} {:>9} {:>7} {:>6} {:>6} {:>9} {:>9} {:>9} {:>9} {:>9}",
            "type",
            "commits",
            "rollbacks",
            "retries",
            "errors",
            "mix %",
            "p50 us",
            "p90 us",
            "p95 us",
            "p99 us",
            "max us"
        );
        for t in self.types() {
            let p = &t.response_time;
            let _ = writeln!(
                out,
                "{:<13} {:>8} {:>9} {:>7} {:>6} {:>6.1} {:>9} {:>9} {:>9} {:>9} {:>9}",
                t.name,
                t.commits,
                t.rollbacks,
                t.retries,
                t.errors,
                t.mix_percent,
                p.p50_us,
                p.p90_us,
                p.p95_us,
                p.p99_us,
                p.max_us
            );
        }
        let _ = writeln!(out, "mix: {}", self.mix.verdict);
        out
    }

    pub fn types(&self) -> [&TypeReport; 5] {
        [
            &self.new_order,
            &self.payment,
            &self.order_status,
            &self.delivery,
            &self.stock_level,
        ]
    }
}

/// Counters the monitor reads every second (totals since the start).
#[derive(Default)]
struct Live {
    commits: [AtomicU64; 5],
    rollbacks: AtomicU64,
    retries: AtomicU64,
    errors: AtomicU64,
}

/// A terminal's measured-window results.
struct TerminalStats {
    commits: [u64; 5],
    rollbacks: [u64; 5],
    retries: [u64; 5],
    errors: [u64; 5],
    latency_us: Vec<Histogram<u64>>,
    skipped_districts: u64,
    late_starts: u64,
}

impl TerminalStats {
    fn new() -> TerminalStats {
        TerminalStats {
            commits: [0; 5],
            rollbacks: [0; 5],
            retries: [0; 5],
            errors: [0; 5],
            // 1 us to 10 min, 3 significant digits.
            latency_us: (0..5)
                .map(|_| Histogram::new_with_bounds(1, 600_000_000, 3).expect("valid bounds"))
                .collect(),
            skipped_districts: 0,
            late_starts: 0,
        }
    }
}

fn retryable(e: &postgres::Error) -> bool {
    matches!(e.code(), Some(c) if *c == SqlState::T_R_SERIALIZATION_FAILURE || *c == SqlState::T_R_DEADLOCK_DETECTED)
}

/// Sets the flag when dropped, also while unwinding.
struct StopOnDrop<'a>(&'a AtomicBool);

impl Drop for StopOnDrop<'_> {
    fn drop(&mut self) {
        self.0.store(true, Ordering::Relaxed);
    }
}

/// A lost connection, or the server going away (SQLSTATE class 08,
/// connection exception, and 57, operator intervention: shutdown, crash,
/// terminated backend): the terminal cannot go on.
fn fatal(e: &postgres::Error) -> bool {
    match e.as_db_error() {
        None => true,
        Some(db) => {
            let code = db.code().code();
            code.starts_with("08") || code.starts_with("57")
        }
    }
}

/// CLOCK_MONOTONIC now, in nanoseconds (what `Instant` reads on Linux).
fn monotonic_ns() -> u64 {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: clock_gettime writes one timespec into the valid pointer.
    let rc = unsafe { libc::clock_gettime(libc::CLOCK_MONOTONIC, &mut ts) };
    if rc != 0 {
        return 0;
    }
    ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64
}

/// Sleeps until `until` unless `stop` is set first (checked every 50 ms).
fn sleep_until(until: Instant, stop: &AtomicBool) {
    loop {
        let now = Instant::now();
        if now >= until || stop.load(Ordering::Relaxed) {
            return;
        }
        std::thread::sleep((until - now).min(Duration::from_millis(50)));
    }
}

struct Shared<'a, B: Backend> {
    backend: &'a B,
    cfg: &'a TpccConfig,
    constants: NuConstants,
    start: Instant,
    ramp_end: Instant,
    end: Instant,
    stop: AtomicBool,
    live: Live,
    failure: Mutex<Option<TpccError>>,
}

/// Runs the benchmark; see the crate docs.
pub fn run(
    db: &postgres::Config,
    cfg: &TpccConfig,
    cancel: &AtomicBool,
    on_second: &mut dyn FnMut(&SecondSample),
) -> Result<TpccReport, TpccError> {
    run_on(&Postgres(db), cfg, cancel, on_second)
}

/// The run on any backend.
/// Long: the driver loop: terminals, the transaction mix, keying and think times, and the
/// measured window, on one shared clock.
pub(crate) fn run_on<B: Backend>(
    backend: &B,
    cfg: &TpccConfig,
    cancel: &AtomicBool,
    on_second: &mut dyn FnMut(&SecondSample),
) -> Result<TpccReport, TpccError> {
    if cfg.warehouses == 0 || cfg.terminals == 0 {
        return Err(TpccError::InvalidConfig {
            problem: format!(
                "{} warehouses and {} terminals",
                cfg.warehouses, cfg.terminals
            ),
            fix: "use at least 1 warehouse and 1 terminal",
        });
    }
    if cfg.duration.is_zero() {
        return Err(TpccError::InvalidConfig {
            problem: "a zero duration".into(),
            fix: "give the run a duration of at least 1 s",
        });
    }
    match cfg.rate_per_min {
        Some(0) => {
            return Err(TpccError::InvalidConfig {
                problem: "a target rate of 0 transactions per minute".into(),
                fix: "give a rate of at least 1 transaction per minute, or none to run flat out",
            })
        }
        Some(_) if cfg.keying_and_think => {
            return Err(TpccError::InvalidConfig {
                problem: "a target rate with keying and think times".into(),
                fix: "use one of them: both pace the terminals",
            })
        }
        _ => {}
    }
    let (loaded, load_c, load_seed) = backend.loaded()?;
    if cfg.warehouses > loaded {
        return Err(TpccError::TooFewWarehouses {
            asked: cfg.warehouses,
            loaded,
        });
    }
    debug_assert_eq!(load_c, load_constants(load_seed));
    let constants = NuConstants::for_run(&load_c, &mut Rng::stream(cfg.seed, &[0x0072_756e]));

    let start = Instant::now();
    let started_monotonic_ns = monotonic_ns();
    let started_unix_ns = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos() as u64);
    let ramp_end = start + cfg.ramp_up;
    let shared = Shared {
        backend,
        cfg,
        constants,
        start,
        ramp_end,
        end: ramp_end + cfg.duration,
        stop: AtomicBool::new(false),
        live: Live::default(),
        failure: Mutex::new(None),
    };

    let mut seconds = Vec::new();
    let mut stopped_at = None;
    let results: Vec<Option<TerminalStats>> = std::thread::scope(|s| {
        let handles: Vec<_> = (0..cfg.terminals)
            .map(|t| {
                s.spawn({
                    let shared = &shared;
                    move || terminal(shared, t)
                })
            })
            .collect();
        // Should `on_second` panic, the terminals stop before the scope waits
        // for them (instead of running to the end of the duration).
        let _stop_terminals = StopOnDrop(&shared.stop);
        // The monitor: one sample per second, cancel and failure checks.
        let mut prev = [0u64; 8];
        let mut second = 0u32;
        loop {
            let next_tick = start + Duration::from_secs(second as u64 + 1);
            let stop_now = loop {
                let now = Instant::now();
                if cancel.load(Ordering::Relaxed) {
                    break Some(now);
                }
                if shared.stop.load(Ordering::Relaxed) {
                    break Some(now); // a terminal failed
                }
                if now >= next_tick {
                    break None;
                }
                std::thread::sleep((next_tick - now).min(Duration::from_millis(20)));
            };
            if let Some(at) = stop_now {
                shared.stop.store(true, Ordering::Relaxed);
                stopped_at = Some(at);
                break;
            }
            second += 1;
            let now_totals = totals(&shared.live);
            let delta: Vec<u64> = now_totals.iter().zip(prev).map(|(a, b)| a - b).collect();
            prev = now_totals;
            let commits = PerType::from_array([delta[0], delta[1], delta[2], delta[3], delta[4]]);
            let sample = SecondSample {
                second,
                ramp_up: Duration::from_secs(second as u64 - 1) < cfg.ramp_up,
                commits,
                new_order_rollbacks: delta[5],
                retries: delta[6],
                errors: delta[7],
                tpmc: (commits.new_order + delta[5]) as f64 * 60.0,
                transactions_per_s: (commits.total() + delta[5]) as f64,
            };
            on_second(&sample);
            seconds.push(sample);
            if Instant::now() >= shared.end {
                shared.stop.store(true, Ordering::Relaxed);
                break;
            }
        }
        handles
            .into_iter()
            .map(|h| h.join().ok().flatten())
            .collect()
    });

    if let Some(e) = shared
        .failure
        .lock()
        .unwrap_or_else(|p| p.into_inner())
        .take()
    {
        return Err(e);
    }
    if results.iter().any(|r| r.is_none()) {
        return Err(TpccError::Panicked("a terminal thread panicked".into()));
    }
    let window_end = stopped_at.map_or(shared.end, |at| at.min(shared.end));
    let measured_s = window_end.saturating_duration_since(ramp_end).as_secs_f64();
    let all = totals(&shared.live);
    let mut report = report(
        cfg,
        constants,
        load_c,
        stopped_at.is_some() && cancel.load(Ordering::Relaxed),
        measured_s,
        results.into_iter().flatten().collect(),
        seconds,
    );
    report.started_unix_ns = started_unix_ns;
    report.started_monotonic_ns = started_monotonic_ns;
    report.all_commits = PerType::from_array([all[0], all[1], all[2], all[3], all[4]]);
    report.all_new_order_rollbacks = all[5];
    Ok(report)
}

fn totals(live: &Live) -> [u64; 8] {
    let g = |a: &AtomicU64| a.load(Ordering::Relaxed);
    [
        g(&live.commits[0]),
        g(&live.commits[1]),
        g(&live.commits[2]),
        g(&live.commits[3]),
        g(&live.commits[4]),
        g(&live.rollbacks),
        g(&live.retries),
        g(&live.errors),
    ]
}

/// Terminal `t`: home warehouse t mod W + 1 (terminals spread evenly over
/// warehouses), Stock-Level district (t / W) mod 10 + 1.
fn home_of(t: u32, warehouses: u32) -> Home {
    Home {
        w_id: (t % warehouses + 1) as i32,
        d_id: ((t / warehouses) as i64 % DISTRICTS_PER_WAREHOUSE + 1) as i32,
        warehouses: warehouses as i32,
    }
}

/// Runs terminal `t` until the end or a stop; `None` after a fatal failure
/// (recorded in `shared.failure`).
fn terminal<B: Backend>(shared: &Shared<'_, B>, t: u32) -> Option<TerminalStats> {
    let fail = |e: TpccError| {
        shared.stop.store(true, Ordering::Relaxed);
        shared
            .failure
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .get_or_insert(e);
    };
    let mut term = match shared.backend.open_terminal(t) {
        Ok(c) => c,
        Err(e) => {
            fail(e);
            return None;
        }
    };
    let home = home_of(t, shared.cfg.warehouses);
    let mut rng = Rng::stream(shared.cfg.seed, &[0x7465_726d, t as u64]);
    let mut deck = Deck::of(shared.cfg.mix);
    let mut stats = TerminalStats::new();
    let live = &shared.live;
    let running = |stop: &AtomicBool| !stop.load(Ordering::Relaxed) && Instant::now() < shared.end;
    let mut arrivals = 0u64;
    while running(&shared.stop) {
        // Target-rate mode: wait for this transaction's arrival; a start
        // more than one interval after it is late.
        let mut late = false;
        if let Some(rate) = shared.cfg.rate_per_min {
            let terminals = shared.cfg.terminals;
            let due = shared.start + due_offset(t, terminals, rate, arrivals);
            arrivals += 1;
            sleep_until(due, &shared.stop);
            if !running(&shared.stop) {
                break;
            }
            late = Instant::now() > due + due_offset(0, terminals, rate, 1);
        }
        let kind = deck.deal(&mut rng);
        let input = draw_input(kind, &mut rng, &home, &shared.constants);
        let k = kind as usize;
        let (keying_s, mean_think_s) = kind.keying_and_mean_think_s();
        if shared.cfg.keying_and_think {
            sleep_until(
                Instant::now() + Duration::from_secs_f64(keying_s),
                &shared.stop,
            );
            if !running(&shared.stop) {
                break;
            }
        }
        let began = Instant::now();
        let mut retries = 0u64;
        let result = loop {
            match shared.backend.execute(&mut term, t, kind, &home, &input) {
                Err(Failed::Retry) if retries < MAX_RETRIES as u64 => {
                    retries += 1;
                    live.retries.fetch_add(1, Ordering::Relaxed);
                }
                other => break other,
            }
        };
        let ended = Instant::now();
        let measured = ended >= shared.ramp_end && ended <= shared.end;
        if measured {
            stats.retries[k] += retries;
            stats.late_starts += late as u64;
        }
        match result {
            Ok((outcome, extra)) => {
                match outcome {
                    Outcome::Committed => live.commits[k].fetch_add(1, Ordering::Relaxed),
                    Outcome::RolledBack => live.rollbacks.fetch_add(1, Ordering::Relaxed),
                };
                if measured {
                    match outcome {
                        Outcome::Committed => stats.commits[k] += 1,
                        Outcome::RolledBack => stats.rollbacks[k] += 1,
                    }
                    let us = (ended - began).as_micros().max(1) as u64;
                    stats.latency_us[k].saturating_record(us);
                    stats.skipped_districts += extra.skipped_districts as u64;
                }
            }
            // A lost connection ends the run; a failed statement is counted.
            Err(Failed::Fatal(e)) => {
                fail(e);
                return None;
            }
            Err(Failed::Retry | Failed::Counted) => {
                live.errors.fetch_add(1, Ordering::Relaxed);
                if measured {
                    stats.errors[k] += 1;
                }
            }
        }
        if shared.cfg.keying_and_think {
            // Negative exponential think time, truncated at 10 x the mean.
            let think = (-(1.0 - rng.unit()).ln() * mean_think_s).min(10.0 * mean_think_s);
            sleep_until(
                Instant::now() + Duration::from_secs_f64(think),
                &shared.stop,
            );
        }
    }
    Some(stats)
}

fn report(
    cfg: &TpccConfig,
    run_c: NuConstants,
    load_c: NuConstants,
    cancelled: bool,
    measured_s: f64,
    terminals: Vec<TerminalStats>,
    seconds: Vec<SecondSample>,
) -> TpccReport {
    let mut all = TerminalStats::new();
    for t in &terminals {
        for k in 0..5 {
            all.commits[k] += t.commits[k];
            all.rollbacks[k] += t.rollbacks[k];
            all.retries[k] += t.retries[k];
            all.errors[k] += t.errors[k];
            all.latency_us[k]
                .add(&t.latency_us[k])
                .expect("same bounds");
        }
        all.skipped_districts += t.skipped_districts;
        all.late_starts += t.late_starts;
    }
    let completed: u64 = (0..5).map(|k| all.commits[k] + all.rollbacks[k]).sum();
    let per_min = if measured_s > 0.0 {
        60.0 / measured_s
    } else {
        0.0
    };
    let type_report = |kind: TxnType| {
        let k = kind as usize;
        let h = &all.latency_us[k];
        let done = all.commits[k] + all.rollbacks[k];
        TypeReport {
            name: kind.name().to_string(),
            commits: all.commits[k],
            rollbacks: all.rollbacks[k],
            retries: all.retries[k],
            errors: all.errors[k],
            mix_percent: if completed > 0 {
                done as f64 * 100.0 / completed as f64
            } else {
                0.0
            },
            response_time: if h.is_empty() {
                ResponseTimes::default()
            } else {
                ResponseTimes {
                    count: h.len(),
                    mean_us: h.mean(),
                    p50_us: h.value_at_quantile(0.50),
                    p90_us: h.value_at_quantile(0.90),
                    p95_us: h.value_at_quantile(0.95),
                    p99_us: h.value_at_quantile(0.99),
                    max_us: h.max(),
                }
            },
        }
    };
    TpccReport {
        warehouses: cfg.warehouses,
        terminals: cfg.terminals,
        ramp_up_s: cfg.ramp_up.as_secs_f64(),
        duration_s: cfg.duration.as_secs_f64(),
        keying_and_think: cfg.keying_and_think,
        seed: cfg.seed,
        cancelled,
        started_unix_ns: 0,
        started_monotonic_ns: 0,
        measured_s,
        tpmc: (all.commits[0] + all.rollbacks[0]) as f64 * per_min,
        transactions_per_s: if measured_s > 0.0 {
            completed as f64 / measured_s
        } else {
            0.0
        },
        new_order: type_report(TxnType::NewOrder),
        payment: type_report(TxnType::Payment),
        order_status: type_report(TxnType::OrderStatus),
        delivery: type_report(TxnType::Delivery),
        stock_level: type_report(TxnType::StockLevel),
        all_commits: PerType::default(),
        all_new_order_rollbacks: 0,
        delivery_skipped_districts: all.skipped_districts,
        mix: MixAudit::of(std::array::from_fn(|k| all.commits[k] + all.rollbacks[k])),
        rate_per_min: cfg.rate_per_min,
        late_starts: all.late_starts,
        nurand: NurandConstants {
            c_last_load: load_c.c_last,
            c_last_run: run_c.c_last,
            c_id: run_c.c_id,
            ol_i_id: run_c.ol_i_id,
        },
        seconds,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Completed counts of `terminals` terminals, each dealing from its own
    /// deck and cut to a window of `per_terminal` transactions that starts
    /// at a random point of its deck (what a measured window does).
    fn cut_off_window(seed: u64, terminals: u64, per_terminal: usize) -> [u64; 5] {
        let mut n = [0u64; 5];
        for t in 0..terminals {
            let mut rng = Rng::stream(seed, &[t]);
            let mut deck = Deck::new();
            let skip = rng.uniform(0, 22) as usize;
            for _ in 0..skip {
                deck.deal(&mut rng);
            }
            for _ in 0..per_terminal {
                n[deck.deal(&mut rng) as usize] += 1;
            }
        }
        n
    }

    #[test]
    fn cut_off_windows_of_the_decks_stay_inside_the_specification() {
        // 8 terminals of 600 transactions (4800 in the window, a 30 s run
        // at 160 transactions/s), 200 windows cut at random points.
        let outside = (0..200)
            .map(|seed| MixAudit::of(cut_off_window(seed, 8, 600)))
            .filter(|a| !a.within_spec)
            .inspect(|a| eprintln!("{}", a.verdict))
            .count();
        assert_eq!(outside, 0, "{outside} of 200 windows fell below a minimum");
    }

    #[test]
    fn the_audit_names_the_types_below_their_minimums() {
        let a = MixAudit::of([4500, 4300, 400, 400, 400]);
        assert!(a.within_spec, "{}", a.verdict);
        assert!(a.verdict.starts_with("within"), "{}", a.verdict);
        let b = MixAudit::of([4580, 4250, 400, 400, 370]);
        assert!(!b.within_spec);
        assert_eq!(
            b.verdict,
            "below clause 5.2.3's minimums: Payment 42.50 % < 43 %, Stock-Level 3.70 % < 4 % (10000 transactions)"
        );
        assert_eq!(
            b.types.iter().map(|s| s.within).collect::<Vec<_>>(),
            [true, false, true, true, false]
        );
        assert!(!MixAudit::of([0; 5]).within_spec);
    }

    #[test]
    fn a_target_rate_spaces_the_arrivals_evenly_over_the_terminals() {
        // 600 transactions a minute from 4 terminals: one every 100 ms in
        // all, each terminal one every 400 ms, shifted by 100 ms each.
        let mut due: Vec<Duration> = (0..4)
            .flat_map(|t| (0..150).map(move |k| due_offset(t, 4, 600, k)))
            .collect();
        due.sort();
        assert_eq!(due.len(), 600);
        for (i, d) in due.iter().enumerate() {
            let expected = Duration::from_millis(100 * i as u64);
            let error = d.as_secs_f64() - expected.as_secs_f64();
            assert!(
                error.abs() < 1e-9,
                "arrival {i} at {d:?}, expected {expected:?}"
            );
        }
        // The whole minute holds exactly the offered load.
        assert!(due.iter().all(|d| *d < Duration::from_secs(60)));
        assert_eq!(due_offset(0, 4, 600, 1), Duration::from_millis(400));
    }

    #[test]
    fn terminals_spread_over_warehouses_and_districts() {
        let homes: Vec<(i32, i32)> = (0..6)
            .map(|t| home_of(t, 3))
            .map(|h| (h.w_id, h.d_id))
            .collect();
        assert_eq!(homes, [(1, 1), (2, 1), (3, 1), (1, 2), (2, 2), (3, 2)]);
    }
}
