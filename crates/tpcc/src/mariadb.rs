//! The same TPC-C on MariaDB/InnoDB (Wang et al.'s open-source DBMS was
//! "MySQL" with InnoDB, section 3, Table 4): the schema, loader and five
//! transactions of the PostgreSQL driver in MariaDB's dialect, run by the
//! same terminal loop (`run.rs`'s `Backend`).
//!
//! Where the dialects differ:
//! - `timestamp` is `datetime` (a MariaDB `timestamp` updates itself on
//!   every UPDATE of its row and stops at 2038);
//! - the primary keys are made on the empty tables, before the load: InnoDB
//!   stores a table in its primary key, so adding the key after the load
//!   would rebuild every table; the rows come in key order (`generate_rows`);
//! - rows arrive with LOAD DATA LOCAL INFILE, whose default text format
//!   (tab-separated, `\N` for NULL, backslash escapes) is COPY's text format,
//!   so one generator feeds both DBMSs the same rows;
//! - UPDATE has no RETURNING: the row is read with SELECT ... FOR UPDATE
//!   (locked, the newest version) and then updated;
//! - Delivery takes the oldest NEW_ORDER row with SELECT ... ORDER BY ...
//!   LIMIT 1 FOR UPDATE, then deletes it.
//!
//! Isolation matches the PostgreSQL driver: READ COMMITTED for the updating
//! transactions (row locks taken by FOR UPDATE and UPDATE), one consistent
//! snapshot (REPEATABLE READ WITH CONSISTENT SNAPSHOT, READ ONLY) for
//! Order-Status and Stock-Level. Deadlocks (1213) and lock wait timeouts
//! (1205) roll the transaction back and it runs again with the same inputs.

use std::io::{self, Write as _};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::Instant;

use mysql::prelude::Queryable;
use mysql::{Conn, IsolationLevel, LocalInfileHandler, Opts, OptsBuilder, TxOpts};

use crate::consistency::{condition, ConsistencyReport, CONDITIONS};
use crate::error::{mariadb_line, During, TpccError};
use crate::load::{
    generate_rows, load_constants, LoadPhase, LoadProgress, LoadReport, LoadRun, TableRows,
    DISTRICTS_PER_WAREHOUSE,
};
use crate::rand::NuConstants;
use crate::run::{run_on, Backend, Failed, SecondSample, TpccConfig, TpccReport};
use crate::schema;
use crate::txn::{CustomerKey, Extra, Home, Input, NewOrderLine, Outcome, TxnType};

/// MariaDB's error numbers the driver acts on.
const ER_LOCK_WAIT_TIMEOUT: u16 = 1205;
const ER_LOCK_DEADLOCK: u16 = 1213;
/// Server shutdown and killed connections: the terminal cannot go on.
const ER_SERVER_SHUTDOWN: u16 = 1053;
const ER_CONNECTION_KILLED: u16 = 1927;

/// Where to reach the server: its private Unix socket, as root (the socket
/// authentication of a server flashlab started), in `database`.
#[derive(Debug, Clone)]
pub struct MariadbTarget {
    pub socket: std::path::PathBuf,
    pub user: String,
    pub database: String,
}

impl MariadbTarget {
    fn describe(&self) -> String {
        format!(
            "{} database {}",
            self.socket.display(),
            self.database.as_str()
        )
    }

    fn opts(&self, with_db: bool) -> Opts {
        OptsBuilder::new()
            .socket(Some(self.socket.display().to_string()))
            .user(Some(self.user.clone()))
            .db_name(with_db.then(|| self.database.clone()))
            // 23 statements plus the 10 Stock-District variants, prepared once.
            .stmt_cache_size(64)
            .into()
    }

    fn connect(&self) -> Result<Conn, TpccError> {
        Conn::new(self.opts(true)).map_err(|e| TpccError::MariadbConnect {
            target: self.describe(),
            message: mariadb_line(&e),
        })
    }
}

/// The tables of `schema::CREATE` in MariaDB's dialect.
fn create_statements() -> Vec<String> {
    schema::CREATE
        .split(';')
        .map(|s| s.trim())
        .filter(|s| !s.is_empty())
        .map(|s| format!("{} ENGINE=InnoDB", s.replace("timestamp", "datetime")))
        .collect()
}

/// The first of our tables that exists (`existing = true`) or is missing.
fn find_table(conn: &mut Conn, existing: bool) -> Result<Option<String>, TpccError> {
    let present: Vec<String> = conn
        .query("SELECT table_name FROM information_schema.tables WHERE table_schema = DATABASE()")
        .during("looking for the TPC-C tables")?;
    let ours = schema::TABLES.iter().copied().chain(["tpcc_meta"]);
    let mut hits = ours.filter(|t| present.iter().any(|p| p == t) == existing);
    Ok(hits.next().map(str::to_string))
}

/// Creates the database if needed and drops the TPC-C tables (only those).
pub fn drop_schema(db: &MariadbTarget) -> Result<(), TpccError> {
    let mut conn = Conn::new(db.opts(false)).map_err(|e| TpccError::MariadbConnect {
        target: db.describe(),
        message: mariadb_line(&e),
    })?;
    conn.query_drop(format!("CREATE DATABASE IF NOT EXISTS `{}`", db.database))
        .during("creating the database")?;
    conn.query_drop(format!("USE `{}`", db.database))
        .during("creating the database")?;
    let list = schema::TABLES
        .iter()
        .copied()
        .chain(["tpcc_meta"])
        .collect::<Vec<_>>()
        .join(", ");
    conn.query_drop(format!("DROP TABLE IF EXISTS {list}"))
        .during("dropping the TPC-C tables")
}

/// Loads `warehouses` warehouses into an empty database (created if
/// missing). `cancel` is checked between tables.
pub fn load(
    db: &MariadbTarget,
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
    {
        let mut conn = Conn::new(db.opts(false)).map_err(|e| TpccError::MariadbConnect {
            target: db.describe(),
            message: mariadb_line(&e),
        })?;
        conn.query_drop(format!("CREATE DATABASE IF NOT EXISTS `{}`", db.database))
            .during("creating the database")?;
    }
    let mut conn = db.connect()?;
    if let Some(table) = find_table(&mut conn, true)? {
        return Err(TpccError::SchemaExists {
            target: db.describe(),
            table,
        });
    }
    for stmt in create_statements() {
        conn.query_drop(stmt).during("creating the TPC-C tables")?;
    }
    // The primary keys (the first 8 of INDEXES) on the empty tables.
    for stmt in &schema::INDEXES[..8] {
        conn.query_drop(*stmt).during("creating the primary keys")?;
    }
    let c = load_constants(seed);
    conn.exec_drop(
        "INSERT INTO tpcc_meta VALUES (?, ?, ?, ?, ?)",
        (warehouses, seed as i64, c.c_last, c.c_id, c.ol_i_id),
    )
    .during("recording the load's constants")?;

    report(LoadPhase::Data, 0, 0);
    let data_start = Instant::now();
    const PER_WAREHOUSE: [&str; 8] = [
        "warehouse",
        "district",
        "customer",
        "history",
        "orders",
        "order_line",
        "new_order",
        "stock",
    ];
    // Tasks: ITEM, then each warehouse's tables.
    let tasks: Vec<(&str, u32)> = std::iter::once(("item", 0))
        .chain((1..=warehouses).flat_map(|w| PER_WAREHOUSE.iter().map(move |t| (*t, w))))
        .collect();
    let counts: Vec<AtomicU64> = (0..schema::TABLES.len())
        .map(|_| AtomicU64::new(0))
        .collect();
    let done_warehouses = AtomicU64::new(0);
    parallel(db, load_workers, tasks.len(), cancel, |conn, i| {
        let (table, w_id) = tasks[i];
        // The handler writes the generated rows into the server's request
        // for the "file" named table/warehouse.
        let gen_rows = std::sync::Arc::new(AtomicU64::new(0));
        let counter = gen_rows.clone();
        conn.set_local_infile_handler(Some(LocalInfileHandler::new(move |name, out| {
            let name = String::from_utf8_lossy(name);
            let (t, w) = name.split_once('/').unwrap_or((&name, "0"));
            let w: u32 = w.parse().unwrap_or(0);
            let mut buffered = io::BufWriter::with_capacity(1 << 20, out);
            let n = generate_rows(seed, t, w, &mut buffered)?;
            buffered.flush()?;
            counter.fetch_add(n, Ordering::Relaxed);
            Ok(())
        })));
        conn.query_drop(format!(
            "LOAD DATA LOCAL INFILE '{table}/{w_id}' INTO TABLE {table}"
        ))
        .during("loading rows with LOAD DATA")?;
        let k = schema::TABLES.iter().position(|t| *t == table).unwrap_or(0);
        counts[k].fetch_add(gen_rows.load(Ordering::Relaxed), Ordering::Relaxed);
        if table == "stock" {
            done_warehouses.fetch_add(1, Ordering::Relaxed);
        }
        let total: u64 = counts.iter().map(|c| c.load(Ordering::Relaxed)).sum();
        report(
            LoadPhase::Data,
            done_warehouses.load(Ordering::Relaxed) as u32,
            total,
        );
        Ok(())
    })?;
    let data_s = data_start.elapsed().as_secs_f64();
    let g = |t: &str| {
        counts[schema::TABLES.iter().position(|x| *x == t).unwrap_or(0)].load(Ordering::Relaxed)
    };
    let rows = TableRows {
        warehouse: g("warehouse"),
        district: g("district"),
        customer: g("customer"),
        history: g("history"),
        new_order: g("new_order"),
        orders: g("orders"),
        order_line: g("order_line"),
        item: g("item"),
        stock: g("stock"),
    };

    report(LoadPhase::Indexes, warehouses, rows.total());
    let index_start = Instant::now();
    parallel(db, load_workers, 2, cancel, |conn, i| {
        conn.query_drop(schema::INDEXES[8 + i])
            .during("building indexes")
    })?;
    let index_s = index_start.elapsed().as_secs_f64();

    report(LoadPhase::Analyze, warehouses, rows.total());
    let analyze_start = Instant::now();
    let list = schema::TABLES.join(", ");
    let _: Vec<mysql::Row> = conn
        .query(format!("ANALYZE TABLE {list}"))
        .during("analyzing the loaded tables")?;
    let analyze_s = analyze_start.elapsed().as_secs_f64();
    let size: Option<i64> = conn
        .query_first(
            "SELECT CAST(SUM(data_length + index_length) AS SIGNED) FROM information_schema.tables
             WHERE table_schema = DATABASE()",
        )
        .during("measuring the database size")?;
    Ok(lr.finish(
        seed,
        rows,
        [data_s, index_s, analyze_s],
        size.unwrap_or(0).max(0) as u64,
    ))
}

/// `load::parallel` over MariaDB connections.
fn parallel(
    db: &MariadbTarget,
    workers: u32,
    n: usize,
    cancel: &AtomicBool,
    task: impl Fn(&mut Conn, usize) -> Result<(), TpccError> + Sync,
) -> Result<(), TpccError> {
    crate::load::parallel(workers, n, cancel, || db.connect(), task)
}

/// Runs the benchmark on MariaDB; see `run` (the same terminals, decks,
/// timing and report).
pub fn run(
    db: &MariadbTarget,
    cfg: &TpccConfig,
    cancel: &AtomicBool,
    on_second: &mut dyn FnMut(&SecondSample),
) -> Result<TpccReport, TpccError> {
    run_on(&Mariadb(db), cfg, cancel, on_second)
}

struct Mariadb<'a>(&'a MariadbTarget);

fn classify(e: mysql::Error, t: u32, kind: TxnType) -> Failed {
    match &e {
        mysql::Error::MySqlError(m)
            if m.code == ER_LOCK_DEADLOCK || m.code == ER_LOCK_WAIT_TIMEOUT =>
        {
            Failed::Retry
        }
        mysql::Error::MySqlError(m)
            if m.code != ER_SERVER_SHUTDOWN && m.code != ER_CONNECTION_KILLED =>
        {
            Failed::Counted
        }
        _ => Failed::Fatal(TpccError::MariadbTerminal {
            terminal: t,
            transaction: kind.name(),
            message: mariadb_line(&e),
        }),
    }
}

impl Backend for Mariadb<'_> {
    type Terminal = Conn;

    fn loaded(&self) -> Result<(u32, NuConstants, u64), TpccError> {
        let mut conn = self.0.connect()?;
        if let Some(table) = find_table(&mut conn, false)? {
            return Err(TpccError::NotLoaded {
                target: self.0.describe(),
                table,
            });
        }
        let meta: Option<(u32, i64, i64, i64, i64)> = conn
            .query_first(
                "SELECT warehouses, seed, c_last_load, c_id_load, ol_i_id_load FROM tpcc_meta",
            )
            .during("reading the load's constants")?;
        let Some((w, seed, c_last, c_id, ol_i_id)) = meta else {
            return Err(TpccError::NotLoaded {
                target: self.0.describe(),
                table: "tpcc_meta (empty)".into(),
            });
        };
        Ok((
            w,
            NuConstants {
                c_last,
                c_id,
                ol_i_id,
            },
            seed as u64,
        ))
    }

    fn open_terminal(&self, _t: u32) -> Result<Conn, TpccError> {
        let mut conn = self.0.connect()?;
        conn.query_drop("SET SESSION TRANSACTION ISOLATION LEVEL READ COMMITTED")
            .during("setting the isolation level")?;
        Ok(conn)
    }

    fn execute(
        &self,
        conn: &mut Conn,
        t: u32,
        kind: TxnType,
        home: &Home,
        input: &Input,
    ) -> Result<(Outcome, Extra), Failed> {
        let r = match input {
            Input::NewOrder { d_id, c_id, lines } => new_order(conn, home, *d_id, *c_id, lines),
            Input::Payment {
                d_id,
                c_w_id,
                c_d_id,
                customer,
                amount_cents,
            } => payment(conn, home, *d_id, *c_w_id, *c_d_id, customer, *amount_cents),
            Input::OrderStatus { d_id, customer } => order_status(conn, home, *d_id, customer),
            Input::Delivery { carrier_id } => delivery(conn, home, *carrier_id),
            Input::StockLevel { threshold } => stock_level(conn, home, *threshold),
        };
        r.map_err(|e| classify(e, t, kind))
    }
}

type Res<T> = Result<T, mysql::Error>;

fn read_write(conn: &mut Conn) -> Res<mysql::Transaction<'_>> {
    conn.start_transaction(TxOpts::default())
}

fn read_only(conn: &mut Conn) -> Res<mysql::Transaction<'_>> {
    conn.start_transaction(
        TxOpts::default()
            .set_isolation_level(Some(IsolationLevel::RepeatableRead))
            .set_with_consistent_snapshot(true)
            .set_access_mode(Some(mysql::AccessMode::ReadOnly)),
    )
}

/// A row the benchmark's data always holds was not there.
fn missing(what: &str) -> mysql::Error {
    mysql::Error::MySqlError(mysql::MySqlError {
        state: "02000".into(),
        message: format!("no {what} row: the data was changed outside the benchmark"),
        code: 1032,
    })
}

fn new_order(
    conn: &mut Conn,
    home: &Home,
    d_id: i32,
    c_id: i32,
    lines: &[NewOrderLine],
) -> Res<(Outcome, Extra)> {
    let w_id = home.w_id;
    let mut tx = read_write(conn)?;
    let w_tax: f64 = tx
        .exec_first(
            "SELECT CAST(w_tax AS DOUBLE) FROM warehouse WHERE w_id = ?",
            (w_id,),
        )?
        .ok_or_else(|| missing("warehouse"))?;
    let (d_tax, o_id): (f64, i32) = tx
        .exec_first(
            "SELECT CAST(d_tax AS DOUBLE), d_next_o_id FROM district WHERE d_w_id = ? AND d_id = ? FOR UPDATE",
            (w_id, d_id),
        )?
        .ok_or_else(|| missing("district"))?;
    tx.exec_drop(
        "UPDATE district SET d_next_o_id = d_next_o_id + 1 WHERE d_w_id = ? AND d_id = ?",
        (w_id, d_id),
    )?;
    let (c_discount, _c_last, _c_credit): (f64, String, String) = tx
        .exec_first(
            "SELECT CAST(c_discount AS DOUBLE), c_last, c_credit FROM customer
             WHERE c_w_id = ? AND c_d_id = ? AND c_id = ?",
            (w_id, d_id, c_id),
        )?
        .ok_or_else(|| missing("customer"))?;
    let all_local = lines.iter().all(|l| l.supply_w_id == w_id) as i32;
    tx.exec_drop(
        "INSERT INTO orders (o_id, o_d_id, o_w_id, o_c_id, o_entry_d, o_carrier_id, o_ol_cnt, o_all_local)
         VALUES (?, ?, ?, ?, NOW(6), NULL, ?, ?)",
        (o_id, d_id, w_id, c_id, lines.len() as i32, all_local),
    )?;
    tx.exec_drop(
        "INSERT INTO new_order (no_o_id, no_d_id, no_w_id) VALUES (?, ?, ?)",
        (o_id, d_id, w_id),
    )?;
    let dist_column = format!("s_dist_{d_id:02}");
    let stock_sql = format!(
        "SELECT s_quantity, s_data, {dist_column} FROM stock WHERE s_w_id = ? AND s_i_id = ? FOR UPDATE"
    );
    let mut total_cents: i64 = 0;
    for (n, line) in lines.iter().enumerate() {
        let item: Option<(i64, String, String)> = tx.exec_first(
            "SELECT CAST(i_price * 100 AS SIGNED), i_name, i_data FROM item WHERE i_id = ?",
            (line.i_id,),
        )?;
        let Some((price_cents, _i_name, i_data)) = item else {
            // "Item number is not valid": the whole order rolls back.
            tx.rollback()?;
            return Ok((Outcome::RolledBack, Extra::default()));
        };
        let (s_quantity, s_data, dist_info): (i32, String, String) = tx
            .exec_first(stock_sql.as_str(), (line.supply_w_id, line.i_id))?
            .ok_or_else(|| missing("stock"))?;
        let quantity = if s_quantity >= line.quantity + 10 {
            s_quantity - line.quantity
        } else {
            s_quantity - line.quantity + 91
        };
        let remote = (line.supply_w_id != w_id) as i32;
        tx.exec_drop(
            "UPDATE stock SET s_quantity = ?, s_ytd = s_ytd + ?, s_order_cnt = s_order_cnt + 1,
                s_remote_cnt = s_remote_cnt + ? WHERE s_w_id = ? AND s_i_id = ?",
            (quantity, line.quantity, remote, line.supply_w_id, line.i_id),
        )?;
        let _brand = if i_data.contains("ORIGINAL") && s_data.contains("ORIGINAL") {
            'B'
        } else {
            'G'
        };
        let amount_cents = line.quantity as i64 * price_cents;
        total_cents += amount_cents;
        tx.exec_drop(
            "INSERT INTO order_line (ol_o_id, ol_d_id, ol_w_id, ol_number, ol_i_id, ol_supply_w_id,
                ol_delivery_d, ol_quantity, ol_amount, ol_dist_info)
             VALUES (?, ?, ?, ?, ?, ?, NULL, ?, ? / 100, ?)",
            (
                o_id,
                d_id,
                w_id,
                n as i32 + 1,
                line.i_id,
                line.supply_w_id,
                line.quantity,
                amount_cents,
                dist_info,
            ),
        )?;
    }
    let _total = total_cents as f64 / 100.0 * (1.0 - c_discount) * (1.0 + w_tax + d_tax);
    tx.commit()?;
    Ok((Outcome::Committed, Extra::default()))
}

/// The customer in the middle of those with this last name, sorted by first
/// name (clause 2.5.2.2: position n/2 rounded up).
fn customer_by_name(
    tx: &mut mysql::Transaction<'_>,
    w_id: i32,
    d_id: i32,
    last: &str,
) -> Res<Option<i32>> {
    let ids: Vec<i32> = tx.exec(
        "SELECT c_id FROM customer WHERE c_w_id = ? AND c_d_id = ? AND c_last = ? ORDER BY c_first",
        (w_id, d_id, last),
    )?;
    if ids.is_empty() {
        return Ok(None);
    }
    Ok(Some(ids[ids.len().div_ceil(2) - 1]))
}

#[allow(clippy::too_many_arguments)]
fn payment(
    conn: &mut Conn,
    home: &Home,
    d_id: i32,
    c_w_id: i32,
    c_d_id: i32,
    customer: &CustomerKey,
    amount_cents: i64,
) -> Res<(Outcome, Extra)> {
    let w_id = home.w_id;
    let mut tx = read_write(conn)?;
    tx.exec_drop(
        "UPDATE warehouse SET w_ytd = w_ytd + ? / 100 WHERE w_id = ?",
        (amount_cents, w_id),
    )?;
    let w_name: String = tx
        .exec_first("SELECT w_name FROM warehouse WHERE w_id = ?", (w_id,))?
        .ok_or_else(|| missing("warehouse"))?;
    tx.exec_drop(
        "UPDATE district SET d_ytd = d_ytd + ? / 100 WHERE d_w_id = ? AND d_id = ?",
        (amount_cents, w_id, d_id),
    )?;
    let d_name: String = tx
        .exec_first(
            "SELECT d_name FROM district WHERE d_w_id = ? AND d_id = ?",
            (w_id, d_id),
        )?
        .ok_or_else(|| missing("district"))?;
    let c_id = match customer {
        CustomerKey::Id(id) => *id,
        CustomerKey::LastName(name) => customer_by_name(&mut tx, c_w_id, c_d_id, name)?
            .ok_or_else(|| missing("customer by last name"))?,
    };
    let _c: Option<(String, String)> = tx.exec_first(
        "SELECT c_first, c_credit FROM customer WHERE c_w_id = ? AND c_d_id = ? AND c_id = ? FOR UPDATE",
        (c_w_id, c_d_id, c_id),
    )?;
    let amount = format!("{}.{:02}", amount_cents / 100, amount_cents % 100);
    let prefix = format!("{c_id} {c_d_id} {c_w_id} {d_id} {w_id} {amount} ");
    tx.exec_drop(
        "UPDATE customer SET
            c_balance = c_balance - ? / 100,
            c_ytd_payment = c_ytd_payment + ? / 100,
            c_payment_cnt = c_payment_cnt + 1,
            c_data = CASE WHEN c_credit = 'BC' THEN LEFT(CONCAT(?, c_data), 500) ELSE c_data END
         WHERE c_w_id = ? AND c_d_id = ? AND c_id = ?",
        (amount_cents, amount_cents, prefix, c_w_id, c_d_id, c_id),
    )?;
    let h_data = format!("{w_name}    {d_name}");
    tx.exec_drop(
        "INSERT INTO history (h_c_id, h_c_d_id, h_c_w_id, h_d_id, h_w_id, h_date, h_amount, h_data)
         VALUES (?, ?, ?, ?, ?, NOW(6), ? / 100, ?)",
        (c_id, c_d_id, c_w_id, d_id, w_id, amount_cents, h_data),
    )?;
    tx.commit()?;
    Ok((Outcome::Committed, Extra::default()))
}

fn order_status(
    conn: &mut Conn,
    home: &Home,
    d_id: i32,
    customer: &CustomerKey,
) -> Res<(Outcome, Extra)> {
    let w_id = home.w_id;
    let mut tx = read_only(conn)?;
    let c_id = match customer {
        CustomerKey::Id(id) => *id,
        CustomerKey::LastName(name) => customer_by_name(&mut tx, w_id, d_id, name)?
            .ok_or_else(|| missing("customer by last name"))?,
    };
    let _customer: Option<(f64, String, String, String)> = tx.exec_first(
        "SELECT CAST(c_balance AS DOUBLE), c_first, c_middle, c_last FROM customer
         WHERE c_w_id = ? AND c_d_id = ? AND c_id = ?",
        (w_id, d_id, c_id),
    )?;
    let order: Option<(i32, String, Option<i32>)> = tx.exec_first(
        "SELECT o_id, CAST(o_entry_d AS CHAR), o_carrier_id FROM orders
         WHERE o_w_id = ? AND o_d_id = ? AND o_c_id = ? ORDER BY o_id DESC LIMIT 1",
        (w_id, d_id, c_id),
    )?;
    if let Some((o_id, _, _)) = order {
        let _lines: Vec<(i32, i32, i32, f64, Option<String>)> = tx.exec(
            "SELECT ol_i_id, ol_supply_w_id, ol_quantity, CAST(ol_amount AS DOUBLE), CAST(ol_delivery_d AS CHAR)
             FROM order_line WHERE ol_w_id = ? AND ol_d_id = ? AND ol_o_id = ?",
            (w_id, d_id, o_id),
        )?;
    }
    tx.commit()?;
    Ok((Outcome::Committed, Extra::default()))
}

fn delivery(conn: &mut Conn, home: &Home, carrier_id: i32) -> Res<(Outcome, Extra)> {
    let w_id = home.w_id;
    let mut tx = read_write(conn)?;
    let mut extra = Extra::default();
    for d_id in 1..=DISTRICTS_PER_WAREHOUSE as i32 {
        // The oldest undelivered order, locked: a concurrent Delivery of
        // this warehouse waits, then reads the next one.
        let o_id: Option<i32> = tx.exec_first(
            "SELECT no_o_id FROM new_order WHERE no_w_id = ? AND no_d_id = ?
             ORDER BY no_o_id LIMIT 1 FOR UPDATE",
            (w_id, d_id),
        )?;
        let Some(o_id) = o_id else {
            extra.skipped_districts += 1;
            continue;
        };
        tx.exec_drop(
            "DELETE FROM new_order WHERE no_w_id = ? AND no_d_id = ? AND no_o_id = ?",
            (w_id, d_id, o_id),
        )?;
        let c_id: i32 = tx
            .exec_first(
                "SELECT o_c_id FROM orders WHERE o_w_id = ? AND o_d_id = ? AND o_id = ? FOR UPDATE",
                (w_id, d_id, o_id),
            )?
            .ok_or_else(|| missing("orders"))?;
        tx.exec_drop(
            "UPDATE orders SET o_carrier_id = ? WHERE o_w_id = ? AND o_d_id = ? AND o_id = ?",
            (carrier_id, w_id, d_id, o_id),
        )?;
        tx.exec_drop(
            "UPDATE order_line SET ol_delivery_d = NOW(6) WHERE ol_w_id = ? AND ol_d_id = ? AND ol_o_id = ?",
            (w_id, d_id, o_id),
        )?;
        tx.exec_drop(
            "UPDATE customer SET
                c_balance = c_balance + (SELECT COALESCE(SUM(ol_amount), 0) FROM order_line
                    WHERE ol_w_id = ? AND ol_d_id = ? AND ol_o_id = ?),
                c_delivery_cnt = c_delivery_cnt + 1
             WHERE c_w_id = ? AND c_d_id = ? AND c_id = ?",
            (w_id, d_id, o_id, w_id, d_id, c_id),
        )?;
    }
    tx.commit()?;
    Ok((Outcome::Committed, extra))
}

fn stock_level(conn: &mut Conn, home: &Home, threshold: i32) -> Res<(Outcome, Extra)> {
    let (w_id, d_id) = (home.w_id, home.d_id);
    let mut tx = read_only(conn)?;
    let next_o_id: i32 = tx
        .exec_first(
            "SELECT d_next_o_id FROM district WHERE d_w_id = ? AND d_id = ?",
            (w_id, d_id),
        )?
        .ok_or_else(|| missing("district"))?;
    let _low_stock: Option<i64> = tx.exec_first(
        "SELECT COUNT(DISTINCT s_i_id) FROM order_line JOIN stock ON s_w_id = ol_w_id AND s_i_id = ol_i_id
         WHERE ol_w_id = ? AND ol_d_id = ? AND ol_o_id >= ? - 20 AND ol_o_id < ? AND s_quantity < ?",
        (w_id, d_id, next_o_id, next_o_id, threshold),
    )?;
    tx.commit()?;
    Ok((Outcome::Committed, Extra::default()))
}

/// Checks conditions 1-6 of clause 3.3.2 (the same queries as on
/// PostgreSQL) in one consistent snapshot: REPEATABLE READ WITH CONSISTENT
/// SNAPSHOT, READ ONLY, as Order-Status and Stock-Level read.
pub fn check_consistency(db: &MariadbTarget) -> Result<ConsistencyReport, TpccError> {
    let mut conn = db.connect()?;
    if let Some(table) = find_table(&mut conn, false)? {
        return Err(TpccError::NotLoaded {
            target: db.describe(),
            table,
        });
    }
    let mut tx = read_only(&mut conn).during("starting the consistency check")?;
    let mut conditions = Vec::new();
    for (number, description, sql) in CONDITIONS {
        let violations: Option<i64> = tx.query_first(sql).during("checking consistency")?;
        conditions.push(condition(number, description, violations.unwrap_or(0)));
    }
    tx.commit().during("finishing the consistency check")?;
    Ok(ConsistencyReport { conditions })
}

/// Runs `f` with a plain connection to the database (for the callers'
/// own queries: server status counters, flushes).
pub fn with_connection<T>(
    db: &MariadbTarget,
    f: impl FnOnce(&mut Conn) -> Result<T, mysql::Error>,
) -> Result<T, TpccError> {
    let mut conn = Conn::new(db.opts(false)).map_err(|e| TpccError::MariadbConnect {
        target: db.describe(),
        message: mariadb_line(&e),
    })?;
    f(&mut conn).during("querying the server")
}
