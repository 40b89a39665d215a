//! The DBMS under test, behind one small interface (one file per backend,
//! as fio keeps its engines): each backend starts a throwaway server of its
//! own inside the file system under test, says how the TPC-C driver reaches
//! it, flushes its dirty pages before the measured window, and reports its
//! own IO counters for the window. flashlab touches only servers it created
//! (the marker file `postgres::MARKER` in the data directory, for both).
//!
//! - `postgres.rs`: PostgreSQL (the server itself is `crate::postgres`);
//! - `mariadb.rs`: MariaDB with InnoDB (Wang et al.'s "MySQL", Table 4).

use std::path::Path;

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::driver::Target;
use crate::error::Result;
use crate::Progress;

pub mod mariadb;
pub mod postgres;

/// Which DBMS `flashlab oltp --dbms` runs.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum DbmsKind {
    #[default]
    Postgres,
    Mariadb,
}

impl DbmsKind {
    pub const NAMES: [&'static str; 2] = ["postgres", "mariadb"];

    /// `--dbms`'s value (exact names only; the CLI suggests the nearest).
    pub fn parse(name: &str) -> Option<DbmsKind> {
        match name {
            "postgres" => Some(DbmsKind::Postgres),
            "mariadb" => Some(DbmsKind::Mariadb),
            _ => None,
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            DbmsKind::Postgres => "postgres",
            DbmsKind::Mariadb => "mariadb",
        }
    }

    /// The data directory's name inside the file system under test.
    pub fn data_dir_name(self, on_users_mount: bool) -> &'static str {
        match (self, on_users_mount) {
            (DbmsKind::Postgres, false) => "pgdata",
            (DbmsKind::Postgres, true) => "flashlab-oltp-pgdata",
            (DbmsKind::Mariadb, false) => "mariadb",
            (DbmsKind::Mariadb, true) => "flashlab-oltp-mariadb",
        }
    }
}

/// A running server flashlab started (its stop is on the teardown stack).
pub trait Dbms {
    fn kind(&self) -> DbmsKind;
    /// The server's process: the root of the logical trace's process tree
    /// (PostgreSQL's postmaster and its children; mysqld and its threads).
    fn pid(&self) -> u32;
    /// The signal that shuts the server down quickly (a Ctrl-C during the load).
    fn shutdown_signal(&self) -> libc::c_int;
    /// The data directory: the logical trace keeps the files under it.
    fn data_dir(&self) -> &Path;
    /// How the TPC-C driver connects.
    fn target(&self) -> Target;
    /// The oltp.json section describing the server (version, settings).
    fn section(&self) -> (&'static str, Value);
    /// Writes every dirty page, so the measured window starts from a
    /// flushed state (PostgreSQL: CHECKPOINT; InnoDB: dirty pages to 0).
    fn flush(&mut self, progress: &mut dyn Progress) -> Result<()>;
    /// Snapshots the server's own IO counters at the window's start.
    fn window_start(&mut self) -> Result<()>;
    /// The window's counters (oltp.json key and value), with a line to print;
    /// `trace` is the trace's summary (oltp.json's `trace`), which the
    /// server's own counts are set against.
    fn window_end(&mut self, trace: Option<&Value>) -> Option<(&'static str, Value, String)>;
}
