//! The initial database of clause 4.3, written with COPY by `load_workers`
//! connections in parallel, one warehouse at a time.
//!
//! Every table of every warehouse draws from its own random stream (seed,
//! table, warehouse, district), so the rows depend on the seed only, not on
//! the number of workers or their timing. Timestamps that the spec takes from
//! the clock at load time (C_SINCE, H_DATE, O_ENTRY_D, OL_DELIVERY_D) are one
//! fixed instant, `LOAD_TIMESTAMP`, for the same reason.

use std::fmt::Write as _;
use std::io::{self, BufWriter, Write};
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::Mutex;
use std::time::Instant;

use serde::{Deserialize, Serialize};

use crate::error::{During, TpccError};
use crate::rand::{last_name, NuConstants, Rng};
use crate::schema;

/// The instant every loaded row's timestamp holds.
pub const LOAD_TIMESTAMP: &str = "2026-01-01 00:00:00";

/// Cardinalities of clause 4.3.3.1 (per warehouse unless named otherwise).
pub const ITEMS: i64 = 100_000;
pub const DISTRICTS_PER_WAREHOUSE: i64 = 10;
pub const CUSTOMERS_PER_DISTRICT: i64 = 3_000;
pub const ORDERS_PER_DISTRICT: i64 = 3_000;
/// Orders 2101..=3000 of each district are undelivered (in NEW_ORDER).
pub const FIRST_NEW_ORDER: i64 = 2_101;

// Stream ids: one per table (and per shared draw), so tables are independent.
const S_ITEM: u64 = 1;
const S_WAREHOUSE: u64 = 2;
const S_DISTRICT: u64 = 3;
const S_CUSTOMER: u64 = 4;
const S_HISTORY: u64 = 5;
const S_ORDER: u64 = 6;
const S_OL_CNT: u64 = 7;
const S_ORDER_LINE: u64 = 8;
const S_STOCK: u64 = 9;
const S_PERMUTATION: u64 = 10;
const S_CONSTANTS: u64 = 11;

/// The NURand constants the loader used (C_LAST matters: the run picks its
/// own with the delta rule of clause 2.1.6.1).
pub fn load_constants(seed: u64) -> NuConstants {
    NuConstants::random(&mut Rng::stream(seed, &[S_CONSTANTS]))
}

/// About how large a freshly loaded database is (pg_database_size after
/// `load`): 20 MiB (an empty database, ITEM and its key) plus 100 MiB per
/// warehouse, as measured with PostgreSQL 15 (119 MiB for one warehouse,
/// 219 MiB for two; a test keeps the estimate within 10 %). A run adds to
/// it (5 s test runs: 4-6 KB per New-Order, new rows and the new
/// versions of updated rows together), and the WAL comes on top: for sizing
/// a device, not a promise.
pub fn estimated_database_bytes(warehouses: u32) -> u64 {
    (20 + 100 * warehouses as u64) << 20
}

/// What the loader is doing, for a progress display.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum LoadPhase {
    Schema,
    Data,
    Indexes,
    Analyze,
    Done,
}

/// Sent to the progress callback at each phase change and after each
/// warehouse (and ITEM) is loaded; called from the loader's threads.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct LoadProgress {
    pub phase: LoadPhase,
    pub warehouses_done: u32,
    pub warehouses: u32,
    pub rows_loaded: u64,
    pub elapsed_s: f64,
}

/// Rows per table after the load.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct TableRows {
    pub warehouse: u64,
    pub district: u64,
    pub customer: u64,
    pub history: u64,
    pub new_order: u64,
    pub orders: u64,
    pub order_line: u64,
    pub item: u64,
    pub stock: u64,
}

impl TableRows {
    pub fn total(&self) -> u64 {
        self.warehouse
            + self.district
            + self.customer
            + self.history
            + self.new_order
            + self.orders
            + self.order_line
            + self.item
            + self.stock
    }
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct LoadReport {
    pub warehouses: u32,
    pub load_workers: u32,
    pub seed: u64,
    /// Rows written by COPY, per table.
    pub rows: TableRows,
    pub total_rows: u64,
    /// COPY of all rows.
    pub data_s: f64,
    /// Primary keys and secondary indexes, built after the data.
    pub index_s: f64,
    pub analyze_s: f64,
    /// Everything, schema creation to ANALYZE.
    pub load_s: f64,
    /// pg_database_size after the load.
    pub database_size_bytes: u64,
}

#[derive(Default)]
struct RowCounters {
    warehouse: AtomicU64,
    district: AtomicU64,
    customer: AtomicU64,
    history: AtomicU64,
    new_order: AtomicU64,
    orders: AtomicU64,
    order_line: AtomicU64,
    item: AtomicU64,
    stock: AtomicU64,
}

impl RowCounters {
    fn snapshot(&self) -> TableRows {
        let g = |a: &AtomicU64| a.load(Ordering::Relaxed);
        TableRows {
            warehouse: g(&self.warehouse),
            district: g(&self.district),
            customer: g(&self.customer),
            history: g(&self.history),
            new_order: g(&self.new_order),
            orders: g(&self.orders),
            order_line: g(&self.order_line),
            item: g(&self.item),
            stock: g(&self.stock),
        }
    }
}

/// Describes where a config points, for error messages.
pub(crate) fn describe(db: &postgres::Config) -> String {
    let host = db
        .get_hosts()
        .first()
        .map(|h| match h {
            postgres::config::Host::Tcp(s) => s.clone(),
            postgres::config::Host::Unix(p) => p.display().to_string(),
        })
        .unwrap_or_else(|| "(default host)".into());
    let port = db.get_ports().first().copied().unwrap_or(5432);
    let name = db.get_dbname().unwrap_or("(default database)");
    format!("{host} port {port} database {name}")
}

pub(crate) fn connect(db: &postgres::Config) -> Result<postgres::Client, TpccError> {
    db.connect(postgres::NoTls)
        .map_err(|source| TpccError::Connect {
            target: describe(db),
            source,
        })
}

/// Drops the TPC-C tables (and only those) if they exist.
pub fn drop_schema(db: &postgres::Config) -> Result<(), TpccError> {
    let mut client = connect(db)?;
    let list = schema::TABLES
        .iter()
        .copied()
        .chain(["tpcc_meta"])
        .collect::<Vec<_>>()
        .join(", ");
    client
        .batch_execute(&format!("DROP TABLE IF EXISTS {list}"))
        .during("dropping the TPC-C tables")
}

enum Task {
    Item,
    Warehouse(i64),
}

/// Loads `warehouses` warehouses into an empty database; see the crate docs.
pub fn load(
    db: &postgres::Config,
    warehouses: u32,
    load_workers: u32,
    seed: u64,
    progress: &(dyn Fn(LoadProgress) + Sync),
) -> Result<LoadReport, TpccError> {
    load_cancellable(
        db,
        warehouses,
        load_workers,
        seed,
        &AtomicBool::new(false),
        progress,
    )
}

/// `load`, stopped with `TpccError::Cancelled` soon after `cancel` is set
/// (within about a megabyte of COPY data, or after the index or ANALYZE
/// statement in progress). The database then holds a partial load: drop it
/// with `drop_schema`.
pub fn load_cancellable(
    db: &postgres::Config,
    warehouses: u32,
    load_workers: u32,
    seed: u64,
    cancel: &AtomicBool,
    progress: &(dyn Fn(LoadProgress) + Sync),
) -> Result<LoadReport, TpccError> {
    let lr = LoadRun::begin(warehouses, load_workers, progress)?;
    let (load_workers, report) = (lr.load_workers, |phase, done, rows| {
        lr.report(phase, done, rows)
    });

    let mut client = connect(db)?;
    if let Some(table) = schema::existing_table(&mut client)? {
        return Err(TpccError::SchemaExists {
            target: describe(db),
            table,
        });
    }
    client
        .batch_execute(schema::CREATE)
        .during("creating the TPC-C tables")?;
    let c = load_constants(seed);
    client
        .execute(
            "INSERT INTO tpcc_meta VALUES ($1, $2, $3, $4, $5)",
            &[
                &(warehouses as i32),
                &(seed as i64),
                &(c.c_last as i32),
                &(c.c_id as i32),
                &(c.ol_i_id as i32),
            ],
        )
        .during("recording the load's constants")?;

    // Data: ITEM first (the biggest single task goes first), then warehouses.
    report(LoadPhase::Data, 0, 0);
    let data_start = Instant::now();
    let tasks: Vec<Task> = std::iter::once(Task::Item)
        .chain((1..=warehouses as i64).map(Task::Warehouse))
        .collect();
    let rows = RowCounters::default();
    let done = AtomicU64::new(0);
    run_parallel(db, load_workers, tasks.len(), cancel, |client, i| {
        match tasks[i] {
            Task::Item => copy(client, "item", &rows.item, cancel, |w| gen_item(seed, w))?,
            Task::Warehouse(w_id) => load_warehouse(client, seed, w_id, &rows, cancel)?,
        }
        let d = match tasks[i] {
            Task::Item => done.load(Ordering::Relaxed),
            Task::Warehouse(_) => done.fetch_add(1, Ordering::Relaxed) + 1,
        };
        report(LoadPhase::Data, d as u32, rows.snapshot().total());
        Ok(())
    })?;
    let data_s = data_start.elapsed().as_secs_f64();
    let rows = rows.snapshot();

    report(LoadPhase::Indexes, warehouses, rows.total());
    let index_start = Instant::now();
    run_parallel(
        db,
        load_workers,
        schema::INDEXES.len(),
        cancel,
        |client, i| {
            client
                .batch_execute("SET maintenance_work_mem = '128MB'")
                .during("building indexes")?;
            client
                .batch_execute(schema::INDEXES[i])
                .during("building indexes")
        },
    )?;
    let index_s = index_start.elapsed().as_secs_f64();

    report(LoadPhase::Analyze, warehouses, rows.total());
    let analyze_start = Instant::now();
    // One table per worker: ANALYZE of the whole database is single-threaded.
    run_parallel(
        db,
        load_workers,
        schema::TABLES.len(),
        cancel,
        |client, i| {
            client
                .batch_execute(&format!("ANALYZE {}", schema::TABLES[i]))
                .during("analyzing the loaded tables")
        },
    )?;
    let analyze_s = analyze_start.elapsed().as_secs_f64();
    let size: i64 = client
        .query_one("SELECT pg_database_size(current_database())", &[])
        .during("measuring the database size")?
        .get(0);
    Ok(lr.finish(seed, rows, [data_s, index_s, analyze_s], size.max(0) as u64))
}

/// The frame every loader shares, PostgreSQL's and MariaDB's: the
/// warehouse check, the worker count, the clock, the progress reports and
/// the report at the end.
pub(crate) struct LoadRun<'a> {
    pub warehouses: u32,
    /// At most one per task (ITEM and each warehouse).
    pub load_workers: u32,
    start: Instant,
    progress: &'a (dyn Fn(LoadProgress) + Sync),
}

impl<'a> LoadRun<'a> {
    /// Checks the arguments and reports the schema phase.
    pub(crate) fn begin(
        warehouses: u32,
        load_workers: u32,
        progress: &'a (dyn Fn(LoadProgress) + Sync),
    ) -> Result<LoadRun<'a>, TpccError> {
        if warehouses == 0 {
            return Err(TpccError::InvalidConfig {
                problem: "0 warehouses".into(),
                fix: "load at least 1 warehouse",
            });
        }
        let lr = LoadRun {
            warehouses,
            load_workers: load_workers.clamp(1, warehouses + 1),
            start: Instant::now(),
            progress,
        };
        lr.report(LoadPhase::Schema, 0, 0);
        Ok(lr)
    }

    pub(crate) fn report(&self, phase: LoadPhase, warehouses_done: u32, rows_loaded: u64) {
        (self.progress)(LoadProgress {
            phase,
            warehouses_done,
            warehouses: self.warehouses,
            rows_loaded,
            elapsed_s: self.start.elapsed().as_secs_f64(),
        })
    }

    /// Reports the end and makes the load's report; `phases_s` are the
    /// data, index and analyze times.
    pub(crate) fn finish(
        &self,
        seed: u64,
        rows: TableRows,
        phases_s: [f64; 3],
        database_size_bytes: u64,
    ) -> LoadReport {
        self.report(LoadPhase::Done, self.warehouses, rows.total());
        LoadReport {
            warehouses: self.warehouses,
            load_workers: self.load_workers,
            seed,
            total_rows: rows.total(),
            rows,
            data_s: phases_s[0],
            index_s: phases_s[1],
            analyze_s: phases_s[2],
            load_s: self.start.elapsed().as_secs_f64(),
            database_size_bytes,
        }
    }
}

/// Runs tasks 0..n on `workers` threads, each with its own connection; the
/// first error stops the others (between tasks) and is returned; so does a
/// cancel.
fn run_parallel(
    db: &postgres::Config,
    workers: u32,
    n: usize,
    cancel: &AtomicBool,
    task: impl Fn(&mut postgres::Client, usize) -> Result<(), TpccError> + Sync,
) -> Result<(), TpccError> {
    parallel(workers, n, cancel, || connect(db), task)
}

/// Runs tasks 0..n on `workers` threads, each with its own connection from
/// `connect` (either DBMS's); the first error stops the others (between
/// tasks) and is returned; so does a cancel.
pub(crate) fn parallel<C>(
    workers: u32,
    n: usize,
    cancel: &AtomicBool,
    connect: impl Fn() -> Result<C, TpccError> + Sync,
    task: impl Fn(&mut C, usize) -> Result<(), TpccError> + Sync,
) -> Result<(), TpccError> {
    let next = AtomicUsize::new(0);
    let failed = AtomicBool::new(false);
    let first_error: Mutex<Option<TpccError>> = Mutex::new(None);
    std::thread::scope(|s| {
        for _ in 0..workers.min(n as u32) {
            s.spawn(|| {
                let result = (|| {
                    let mut conn = connect()?;
                    loop {
                        let i = next.fetch_add(1, Ordering::Relaxed);
                        if i >= n || failed.load(Ordering::Relaxed) {
                            return Ok(());
                        }
                        if cancel.load(Ordering::Relaxed) {
                            return Err(TpccError::Cancelled);
                        }
                        task(&mut conn, i)?;
                    }
                })();
                if let Err(e) = result {
                    failed.store(true, Ordering::Relaxed);
                    first_error
                        .lock()
                        .unwrap_or_else(|p| p.into_inner())
                        .get_or_insert(e);
                }
            });
        }
    });
    match first_error.into_inner().unwrap_or_else(|p| p.into_inner()) {
        Some(e) => Err(e),
        None => Ok(()),
    }
}

/// COPYs the text rows `gen` writes into `table`, adding the row count.
fn copy(
    client: &mut postgres::Client,
    table: &'static str,
    counter: &AtomicU64,
    cancel: &AtomicBool,
    gen: impl FnOnce(&mut dyn Write) -> io::Result<u64>,
) -> Result<(), TpccError> {
    let sql = format!("COPY {table} FROM STDIN");
    let writer = client.copy_in(&sql).during("starting a COPY")?;
    // Dropping the writer unfinished (on an error or a cancel) aborts the COPY.
    let mut buffered = BufWriter::with_capacity(
        1 << 20,
        Cancellable {
            inner: writer,
            cancel,
        },
    );
    let rows = gen(&mut buffered).map_err(|e| copy_error(table, e))?;
    let writer = buffered
        .into_inner()
        .map_err(|e| copy_error(table, e.into_error()))?;
    writer.inner.finish().during("finishing a COPY")?;
    counter.fetch_add(rows, Ordering::Relaxed);
    Ok(())
}

/// The marker error of a cancelled COPY.
#[derive(Debug)]
struct LoadCancelled;

impl std::fmt::Display for LoadCancelled {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("load cancelled")
    }
}

impl std::error::Error for LoadCancelled {}

/// A COPY writer that fails (with `LoadCancelled`) once `cancel` is set.
struct Cancellable<'a, W> {
    inner: W,
    cancel: &'a AtomicBool,
}

impl<W: Write> Write for Cancellable<'_, W> {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        if self.cancel.load(Ordering::Relaxed) {
            return Err(io::Error::other(LoadCancelled));
        }
        self.inner.write(buf)
    }

    fn flush(&mut self) -> io::Result<()> {
        self.inner.flush()
    }
}

/// A COPY write failed: the writer wraps the server's error in an IO error;
/// unwrap it so the message is PostgreSQL's.
fn copy_error(table: &'static str, e: io::Error) -> TpccError {
    if e.get_ref().is_some_and(|inner| inner.is::<LoadCancelled>()) {
        return TpccError::Cancelled;
    }
    if e.get_ref()
        .is_some_and(|inner| inner.is::<postgres::Error>())
    {
        if let Some(Ok(pg)) = e.into_inner().map(|b| b.downcast::<postgres::Error>()) {
            return TpccError::Sql {
                during: "loading rows with COPY",
                source: *pg,
            };
        }
        unreachable!("checked that the inner error is a postgres::Error");
    }
    TpccError::CopyIo { table, source: e }
}

fn load_warehouse(
    client: &mut postgres::Client,
    seed: u64,
    w_id: i64,
    rows: &RowCounters,
    cancel: &AtomicBool,
) -> Result<(), TpccError> {
    let c = cancel;
    copy(client, "warehouse", &rows.warehouse, c, |w| {
        gen_warehouse(seed, w_id, w)
    })?;
    copy(client, "district", &rows.district, c, |w| {
        gen_district(seed, w_id, w)
    })?;
    copy(client, "customer", &rows.customer, c, |w| {
        gen_customer(seed, w_id, w)
    })?;
    copy(client, "history", &rows.history, c, |w| {
        gen_history(seed, w_id, w)
    })?;
    copy(client, "orders", &rows.orders, c, |w| {
        gen_orders(seed, w_id, w)
    })?;
    copy(client, "order_line", &rows.order_line, c, |w| {
        gen_order_line(seed, w_id, w)
    })?;
    copy(client, "new_order", &rows.new_order, c, |w| {
        gen_new_order(w_id, w)
    })?;
    copy(client, "stock", &rows.stock, c, |w| {
        gen_stock(seed, w_id, w)
    })?;
    Ok(())
}

/// The rows the loader writes into `table` for warehouse `w_id` (all of
/// ITEM for "item"), as COPY text in primary-key order: what
/// `COPY (SELECT * FROM table WHERE <warehouse> = w_id ORDER BY <key>) TO
/// STDOUT` prints after a load with this seed (the tests compare the two).
pub fn generate_rows(seed: u64, table: &str, w_id: u32, out: &mut dyn Write) -> io::Result<u64> {
    let w = w_id as i64;
    match table {
        "item" => gen_item(seed, out),
        "warehouse" => gen_warehouse(seed, w, out),
        "district" => gen_district(seed, w, out),
        "customer" => gen_customer(seed, w, out),
        "history" => gen_history(seed, w, out),
        "orders" => gen_orders(seed, w, out),
        "order_line" => gen_order_line(seed, w, out),
        "new_order" => gen_new_order(w, out),
        "stock" => gen_stock(seed, w, out),
        _ => Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            format!("no TPC-C table {table:?}"),
        )),
    }
}

// ---- Row generators: COPY text format (tab-separated, \N for NULL). Our
// strings are letters and digits only, so nothing needs escaping.

fn money(cents: i64, out: &mut String) {
    let sign = if cents < 0 { "-" } else { "" };
    let _ = write!(out, "{sign}{}.{:02}", cents.abs() / 100, cents.abs() % 100);
}

/// A rate with four decimals, such as W_TAX, from ten-thousandths.
fn rate(ten_thousandths: i64, out: &mut String) {
    let _ = write!(out, "0.{ten_thousandths:04}");
}

fn address(rng: &mut Rng, line: &mut String) {
    for _ in 0..3 {
        rng.astring(10, 20, line); // street 1, street 2, city
        line.push('\t');
    }
    rng.astring(2, 2, line); // state
    line.push('\t');
    rng.zip(line);
}

pub(crate) fn gen_item(seed: u64, w: &mut dyn Write) -> io::Result<u64> {
    let mut rng = Rng::stream(seed, &[S_ITEM]);
    let mut line = String::with_capacity(128);
    for i_id in 1..=ITEMS {
        line.clear();
        let _ = write!(line, "{i_id}\t{}\t", rng.uniform(1, 10_000));
        rng.astring(14, 24, &mut line);
        line.push('\t');
        money(rng.uniform(100, 10_000), &mut line);
        line.push('\t');
        rng.data_with_original(&mut line);
        line.push('\n');
        w.write_all(line.as_bytes())?;
    }
    Ok(ITEMS as u64)
}

pub(crate) fn gen_warehouse(seed: u64, w_id: i64, w: &mut dyn Write) -> io::Result<u64> {
    let mut rng = Rng::stream(seed, &[S_WAREHOUSE, w_id as u64]);
    let mut line = String::with_capacity(128);
    let _ = write!(line, "{w_id}\t");
    rng.astring(6, 10, &mut line);
    line.push('\t');
    address(&mut rng, &mut line);
    line.push('\t');
    rate(rng.uniform(0, 2000), &mut line);
    line.push_str("\t300000.00\n");
    w.write_all(line.as_bytes())?;
    Ok(1)
}

pub(crate) fn gen_district(seed: u64, w_id: i64, w: &mut dyn Write) -> io::Result<u64> {
    let mut rng = Rng::stream(seed, &[S_DISTRICT, w_id as u64]);
    let mut line = String::with_capacity(128);
    for d_id in 1..=DISTRICTS_PER_WAREHOUSE {
        line.clear();
        let _ = write!(line, "{d_id}\t{w_id}\t");
        rng.astring(6, 10, &mut line);
        line.push('\t');
        address(&mut rng, &mut line);
        line.push('\t');
        rate(rng.uniform(0, 2000), &mut line);
        let _ = writeln!(line, "\t30000.00\t{}", ORDERS_PER_DISTRICT + 1);
        w.write_all(line.as_bytes())?;
    }
    Ok(DISTRICTS_PER_WAREHOUSE as u64)
}

pub(crate) fn gen_customer(seed: u64, w_id: i64, w: &mut dyn Write) -> io::Result<u64> {
    let c_last_load = load_constants(seed).c_last;
    let mut line = String::with_capacity(700);
    for d_id in 1..=DISTRICTS_PER_WAREHOUSE {
        let mut rng = Rng::stream(seed, &[S_CUSTOMER, w_id as u64, d_id as u64]);
        for c_id in 1..=CUSTOMERS_PER_DISTRICT {
            line.clear();
            let _ = write!(line, "{c_id}\t{d_id}\t{w_id}\t");
            rng.astring(8, 16, &mut line);
            line.push_str("\tOE\t");
            // The first 1,000 customers take the 1,000 names in order, so
            // every name exists in every district; the rest are skewed.
            let n = if c_id <= 1000 {
                c_id - 1
            } else {
                rng.nurand(255, c_last_load, 0, 999)
            };
            last_name(n, &mut line);
            line.push('\t');
            address(&mut rng, &mut line);
            line.push('\t');
            rng.nstring(16, 16, &mut line);
            let _ = write!(line, "\t{LOAD_TIMESTAMP}\t");
            line.push_str(if rng.uniform(1, 10) == 1 { "BC" } else { "GC" });
            line.push_str("\t50000.00\t");
            rate(rng.uniform(0, 5000), &mut line);
            line.push_str("\t-10.00\t10.00\t1\t0\t");
            rng.astring(300, 500, &mut line);
            line.push('\n');
            w.write_all(line.as_bytes())?;
        }
    }
    Ok((DISTRICTS_PER_WAREHOUSE * CUSTOMERS_PER_DISTRICT) as u64)
}

pub(crate) fn gen_history(seed: u64, w_id: i64, w: &mut dyn Write) -> io::Result<u64> {
    let mut rng = Rng::stream(seed, &[S_HISTORY, w_id as u64]);
    let mut line = String::with_capacity(128);
    for d_id in 1..=DISTRICTS_PER_WAREHOUSE {
        for c_id in 1..=CUSTOMERS_PER_DISTRICT {
            line.clear();
            let _ = write!(
                line,
                "{c_id}\t{d_id}\t{w_id}\t{d_id}\t{w_id}\t{LOAD_TIMESTAMP}\t10.00\t"
            );
            rng.astring(12, 24, &mut line);
            line.push('\n');
            w.write_all(line.as_bytes())?;
        }
    }
    Ok((DISTRICTS_PER_WAREHOUSE * CUSTOMERS_PER_DISTRICT) as u64)
}

/// O_C_ID of orders 1..=3000 of a district: a random permutation of the
/// customer ids (4.3.3.1), so every customer has exactly one order.
fn customer_permutation(seed: u64, w_id: i64, d_id: i64) -> Vec<i64> {
    let mut rng = Rng::stream(seed, &[S_PERMUTATION, w_id as u64, d_id as u64]);
    let mut ids: Vec<i64> = (1..=CUSTOMERS_PER_DISTRICT).collect();
    for i in (1..ids.len()).rev() {
        let j = rng.uniform(0, i as i64) as usize;
        ids.swap(i, j);
    }
    ids
}

/// O_OL_CNT of each order of a district, from its own stream: ORDER and
/// ORDER_LINE draw the same counts without holding them in memory.
fn ol_cnt_stream(seed: u64, w_id: i64, d_id: i64) -> Rng {
    Rng::stream(seed, &[S_OL_CNT, w_id as u64, d_id as u64])
}

pub(crate) fn gen_orders(seed: u64, w_id: i64, w: &mut dyn Write) -> io::Result<u64> {
    let mut rng = Rng::stream(seed, &[S_ORDER, w_id as u64]);
    let mut line = String::with_capacity(128);
    for d_id in 1..=DISTRICTS_PER_WAREHOUSE {
        let customers = customer_permutation(seed, w_id, d_id);
        let mut ol_cnt = ol_cnt_stream(seed, w_id, d_id);
        for o_id in 1..=ORDERS_PER_DISTRICT {
            line.clear();
            let c_id = customers[(o_id - 1) as usize];
            let _ = write!(line, "{o_id}\t{d_id}\t{w_id}\t{c_id}\t{LOAD_TIMESTAMP}\t");
            if o_id < FIRST_NEW_ORDER {
                let _ = write!(line, "{}", rng.uniform(1, 10));
            } else {
                line.push_str("\\N");
            }
            let _ = writeln!(line, "\t{}\t1", ol_cnt.uniform(5, 15));
            w.write_all(line.as_bytes())?;
        }
    }
    Ok((DISTRICTS_PER_WAREHOUSE * ORDERS_PER_DISTRICT) as u64)
}

pub(crate) fn gen_order_line(seed: u64, w_id: i64, w: &mut dyn Write) -> io::Result<u64> {
    let mut rng = Rng::stream(seed, &[S_ORDER_LINE, w_id as u64]);
    let mut line = String::with_capacity(128);
    let mut rows = 0;
    for d_id in 1..=DISTRICTS_PER_WAREHOUSE {
        let mut ol_cnt = ol_cnt_stream(seed, w_id, d_id);
        for o_id in 1..=ORDERS_PER_DISTRICT {
            for ol_number in 1..=ol_cnt.uniform(5, 15) {
                line.clear();
                let _ = write!(
                    line,
                    "{o_id}\t{d_id}\t{w_id}\t{ol_number}\t{}\t{w_id}\t",
                    rng.uniform(1, ITEMS)
                );
                if o_id < FIRST_NEW_ORDER {
                    let _ = write!(line, "{LOAD_TIMESTAMP}\t5\t0.00\t");
                } else {
                    line.push_str("\\N\t5\t");
                    money(rng.uniform(1, 999_999), &mut line);
                    line.push('\t');
                }
                rng.astring(24, 24, &mut line);
                line.push('\n');
                w.write_all(line.as_bytes())?;
                rows += 1;
            }
        }
    }
    Ok(rows)
}

pub(crate) fn gen_new_order(w_id: i64, w: &mut dyn Write) -> io::Result<u64> {
    let mut line = String::with_capacity(32);
    for d_id in 1..=DISTRICTS_PER_WAREHOUSE {
        for o_id in FIRST_NEW_ORDER..=ORDERS_PER_DISTRICT {
            line.clear();
            let _ = writeln!(line, "{o_id}\t{d_id}\t{w_id}");
            w.write_all(line.as_bytes())?;
        }
    }
    Ok((DISTRICTS_PER_WAREHOUSE * (ORDERS_PER_DISTRICT - FIRST_NEW_ORDER + 1)) as u64)
}

pub(crate) fn gen_stock(seed: u64, w_id: i64, w: &mut dyn Write) -> io::Result<u64> {
    let mut rng = Rng::stream(seed, &[S_STOCK, w_id as u64]);
    let mut line = String::with_capacity(400);
    for i_id in 1..=ITEMS {
        line.clear();
        let _ = write!(line, "{i_id}\t{w_id}\t{}\t", rng.uniform(10, 100));
        for _ in 0..10 {
            rng.astring(24, 24, &mut line);
            line.push('\t');
        }
        line.push_str("0\t0\t0\t");
        rng.data_with_original(&mut line);
        line.push('\n');
        w.write_all(line.as_bytes())?;
    }
    Ok(ITEMS as u64)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn text(gen: impl Fn(&mut dyn Write) -> io::Result<u64>) -> (u64, String) {
        let mut out = Vec::new();
        let rows = gen(&mut out).unwrap();
        (rows, String::from_utf8(out).unwrap())
    }

    #[test]
    fn same_seed_same_rows_other_seed_other_rows() {
        let a = text(|w| gen_customer(1, 1, w));
        let b = text(|w| gen_customer(1, 1, w));
        let c = text(|w| gen_customer(2, 1, w));
        assert_eq!(a, b);
        assert_ne!(a.1, c.1);
        // Another warehouse of the same seed differs too.
        assert_ne!(a.1, text(|w| gen_customer(1, 2, w)).1);
    }

    #[test]
    fn orders_and_order_lines_agree_on_line_counts() {
        let (orders, o) = text(|w| gen_orders(5, 1, w));
        let (lines, l) = text(|w| gen_order_line(5, 1, w));
        assert_eq!(orders, 30_000);
        let sum: u64 = o
            .lines()
            .map(|r| r.split('\t').nth(6).unwrap().parse::<u64>().unwrap())
            .sum();
        assert_eq!(sum, lines);
        assert_eq!(l.lines().count() as u64, lines);
        // Undelivered orders have no carrier and no delivery date.
        let undelivered = o
            .lines()
            .filter(|r| r.split('\t').nth(5) == Some("\\N"))
            .count();
        assert_eq!(undelivered, 9_000);
    }

    #[test]
    fn every_customer_has_one_order_per_district() {
        let mut p = customer_permutation(1, 1, 3);
        p.sort_unstable();
        assert_eq!(p, (1..=3000).collect::<Vec<_>>());
    }

    #[test]
    fn first_thousand_customers_cover_every_last_name() {
        let (_, c) = text(|w| gen_customer(9, 1, w));
        let names: std::collections::HashSet<&str> = c
            .lines()
            .filter(|r| r.split('\t').nth(1) == Some("4"))
            .map(|r| r.split('\t').nth(5).unwrap())
            .collect();
        assert_eq!(names.len(), 1000);
    }

    #[test]
    fn money_and_rates_print_as_numeric_literals() {
        let mut s = String::new();
        money(-1000, &mut s);
        s.push(' ');
        money(5, &mut s);
        s.push(' ');
        rate(123, &mut s);
        assert_eq!(s, "-10.00 0.05 0.0123");
    }
}

#[cfg(test)]
mod pinned {
    use super::*;

    /// FNV-1a: a fixed hash (std's hashers may change between versions).
    fn fnv1a(bytes: &[u8]) -> u64 {
        bytes.iter().fold(0xcbf2_9ce4_8422_2325, |h, &b| {
            (h ^ b as u64).wrapping_mul(0x0100_0000_01b3)
        })
    }

    fn rows(table: &str) -> String {
        let mut out = Vec::new();
        generate_rows(1, table, 1, &mut out).unwrap();
        String::from_utf8(out).unwrap()
    }

    /// The rows of a seed must stay the same in later versions (results
    /// record the seed, not the rows): these are seed 1's, warehouse 1.
    #[test]
    fn seed_1_rows_are_pinned() {
        assert_eq!(
            rows("item").lines().next().unwrap(),
            "1\t3179\tIFAVTkcCGuuR6Xa52w\t51.85\tBy98TCew0HoDoNgVjltx97lnrwnjFe0mE"
        );
        assert_eq!(
            rows("order_line").lines().next().unwrap(),
            "1\t1\t1\t1\t79452\t1\t2026-01-01 00:00:00\t5\t0.00\tmmtSfSrhPwLrKFukXlZDHA0G"
        );
        // Every table, whole.
        let pinned: [(&str, u64); 9] = [
            ("item", 0x5ad5_c222_23f0_8269),
            ("warehouse", 0x6776_db22_9694_eec8),
            ("district", 0xc313_e0fb_b263_ec67),
            ("customer", 0x7f11_ee0c_bd0c_d227),
            ("history", 0x1c0f_136b_224a_5de9),
            ("orders", 0xa0ec_17ad_2aa5_d34c),
            ("order_line", 0x8526_e0d0_a85b_2055),
            ("new_order", 0x20a3_f0dd_1218_d7eb),
            ("stock", 0x9f36_6601_1bfb_c6c4),
        ];
        for (table, hash) in pinned {
            assert_eq!(
                fnv1a(rows(table).as_bytes()),
                hash,
                "{table}: seed 1's rows changed"
            );
        }
    }
}
