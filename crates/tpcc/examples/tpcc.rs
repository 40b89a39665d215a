//! Runs the TPC-C driver against a running PostgreSQL server, loading the
//! database first if it holds no TPC-C tables, and prints tpmC and the
//! per-type table.
//!
//!     cargo run --release -p flashlab-tpcc --example tpcc -- SOCKET_DIR PORT WAREHOUSES TERMINALS SECONDS [DBNAME]
//!
//! SOCKET_DIR is the server's unix_socket_directories; the user is
//! `postgres`, the database `tpcc` unless DBNAME is given (it must exist).
//! Ramp-up is 10 % of SECONDS (at least 1 s, at most 10 s), before SECONDS.

use std::process::ExitCode;
use std::sync::atomic::AtomicBool;
use std::time::Duration;

use flashlab_tpcc::{check_consistency, load, run, TpccConfig, TpccError};

fn usage(problem: &str) -> ExitCode {
    eprintln!("tpcc: {problem}; usage: tpcc SOCKET_DIR PORT WAREHOUSES TERMINALS SECONDS [DBNAME]");
    ExitCode::from(2)
}

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    if args.len() < 5 || args.len() > 6 {
        return usage("expected 5 or 6 arguments");
    }
    let port: u16 = match args[1].parse() {
        Ok(p) => p,
        Err(_) => return usage(&format!("PORT {:?} is not a port number", args[1])),
    };
    let mut numbers = [0u32; 3];
    for (i, name) in ["WAREHOUSES", "TERMINALS", "SECONDS"].iter().enumerate() {
        match args[2 + i].parse::<u32>() {
            Ok(n) if n > 0 => numbers[i] = n,
            _ => {
                return usage(&format!(
                    "{name} {:?} is not a positive integer",
                    args[2 + i]
                ))
            }
        }
    }
    let [warehouses, terminals, seconds] = numbers;
    let mut db = postgres::Config::new();
    db.host_path(&args[0])
        .port(port)
        .user("postgres")
        .dbname(args.get(5).map_or("tpcc", |s| s.as_str()));
    match main_inner(&db, warehouses, terminals, seconds) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("tpcc: {e}");
            ExitCode::from(1)
        }
    }
}

fn main_inner(
    db: &postgres::Config,
    warehouses: u32,
    terminals: u32,
    seconds: u32,
) -> Result<(), TpccError> {
    match load(db, warehouses, 2, 1, &|p| eprint!("\rloading: {:?} {}/{} warehouses", p.phase, p.warehouses_done, p.warehouses)) {
        Ok(r) => eprintln!(
            "\nloaded {} warehouses: {} rows in {:.1} s (data {:.1} s, indexes {:.1} s, analyze {:.1} s), {:.0} MiB",
            r.warehouses,
            r.total_rows,
            r.load_s,
            r.data_s,
            r.index_s,
            r.analyze_s,
            r.database_size_bytes as f64 / (1u64 << 20) as f64
        ),
        Err(TpccError::SchemaExists { .. }) => eprintln!("the database is already loaded: running on it"),
        Err(e) => return Err(e),
    }
    let cfg = TpccConfig {
        warehouses,
        terminals,
        ramp_up: Duration::from_secs((seconds as u64 / 10).clamp(1, 10)),
        duration: Duration::from_secs(seconds as u64),
        ..TpccConfig::default()
    };
    let r = run(db, &cfg, &AtomicBool::new(false), &mut |s| {
        eprintln!(
            "{:>4} s{} tpmC {:>8.0}  {:>6.0} txn/s  retries {}",
            s.second,
            if s.ramp_up { " (ramp-up)" } else { "" },
            s.tpmc,
            s.transactions_per_s,
            s.retries
        )
    })?;
    print!("{}", r.table());
    let c = check_consistency(db)?;
    for cond in &c.conditions {
        if cond.violations > 0 {
            println!(
                "consistency condition {} violated {} times: {}",
                cond.number, cond.violations, cond.description
            );
        }
    }
    println!(
        "consistency conditions 1-{}: {}",
        c.conditions.len(),
        if c.ok() { "hold" } else { "VIOLATED" }
    );
    Ok(())
}
