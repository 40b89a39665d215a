//! flashlab-tpcc: our own TPC-C driver for PostgreSQL and MariaDB/InnoDB
//! ([`mariadb`]: the same schema, rows and terminals in MariaDB's dialect) (TPC-C standard
//! specification revision 5.11), the workload of Wang et al.'s sections 3-4.
//!
//! - [`load`] creates the nine tables of clause 1.3 and fills them as clause
//!   4.3 says for a number of warehouses, with COPY over `load_workers`
//!   connections in parallel, then builds the keys and indexes and analyzes.
//!   The rows depend on the seed only.
//! - [`run`] drives the five transactions (clauses 2.4-2.8) in the standard
//!   mix from `terminals` threads, one connection each, and reports tpmC,
//!   transactions per second, per-type counts and response-time percentiles,
//!   and a per-second time series.
//! - [`check_consistency`] checks conditions 1-6 of clause 3.3.2.
//!
//! What is implemented and what is not: docs/tpcc.md.

mod consistency;
mod error;
mod load;
pub mod mariadb;
pub mod mix;
mod rand;
mod run;
mod schema;
mod txn;

pub use consistency::{check_consistency, ConditionResult, ConsistencyReport};
pub use error::TpccError;
pub use load::{
    drop_schema, estimated_database_bytes, generate_rows, load, load_cancellable, LoadPhase,
    LoadProgress, LoadReport, TableRows, LOAD_TIMESTAMP,
};
pub use mix::Mix;
/// The MariaDB client the `mariadb` module speaks through.
pub use mysql;
pub use run::{
    due_offset, run, MixAudit, MixShare, NurandConstants, PerType, ResponseTimes, SecondSample,
    TpccConfig, TpccReport, TypeReport, MAX_RETRIES,
};
pub use schema::TABLES;
