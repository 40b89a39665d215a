//! The one error type of the driver: each variant's message is one line that
//! names the problem and what fixes it.

use thiserror::Error;

/// Flattens a PostgreSQL error (whose text may span lines, with DETAIL and
/// HINT) onto one line.
pub(crate) fn one_line(e: &postgres::Error) -> String {
    let text = match e.as_db_error() {
        Some(db) => {
            let mut s = format!("{} ({})", db.message(), db.code().code());
            if let Some(d) = db.detail() {
                s.push_str(": ");
                s.push_str(d);
            }
            s
        }
        None => e.to_string(),
    };
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// What fixes a failed connection, from the server's answer if there was one.
fn connect_fix(e: &postgres::Error) -> &'static str {
    use postgres::error::SqlState;
    match e.code() {
        Some(c) if *c == SqlState::TOO_MANY_CONNECTIONS => {
            "use fewer terminals or loader workers, or raise the server's max_connections"
        }
        Some(c) if *c == SqlState::INVALID_CATALOG_NAME => {
            "create the database first (createdb), or name an existing one"
        }
        Some(c)
            if *c == SqlState::INVALID_PASSWORD
                || *c == SqlState::INVALID_AUTHORIZATION_SPECIFICATION =>
        {
            "check the user name and the server's pg_hba.conf"
        }
        Some(c) if *c == SqlState::CANNOT_CONNECT_NOW => {
            "the server is starting or stopping: wait until it accepts connections"
        }
        _ => "check the socket directory and port, and that the server is running",
    }
}

#[derive(Debug, Error)]
pub enum TpccError {
    #[error("cannot connect to PostgreSQL at {target}: {}; {}", one_line(.source), connect_fix(.source))]
    Connect {
        target: String,
        #[source]
        source: postgres::Error,
    },
    #[error("invalid TPC-C setting: {problem}; {fix}")]
    InvalidConfig { problem: String, fix: &'static str },
    #[error("database {target} already has TPC-C table {table}: load into an empty database, or call flashlab_tpcc::drop_schema first")]
    SchemaExists { target: String, table: String },
    #[error("database {target} has no loaded TPC-C schema (table {table} missing): run the loader (flashlab_tpcc::load) first")]
    NotLoaded { target: String, table: String },
    #[error("the run asks for {asked} warehouses but the database holds {loaded}: pass at most {loaded} warehouses, or load more")]
    TooFewWarehouses { asked: u32, loaded: u32 },
    #[error("PostgreSQL failed while {during}: {}; see the server log", one_line(.source))]
    Sql {
        during: &'static str,
        #[source]
        source: postgres::Error,
    },
    #[error("terminal {terminal} failed during {transaction}: {}; see the server log (the run was stopped)", one_line(.source))]
    Terminal {
        terminal: u32,
        transaction: &'static str,
        #[source]
        source: postgres::Error,
    },
    #[error("cannot connect to MariaDB at {target}: {message}; check the socket path and that the server is running")]
    MariadbConnect { target: String, message: String },
    #[error("MariaDB failed while {during}: {message}; see the server log")]
    Mariadb {
        during: &'static str,
        message: String,
    },
    #[error("terminal {terminal} failed during {transaction}: {message}; see the server log (the run was stopped)")]
    MariadbTerminal {
        terminal: u32,
        transaction: &'static str,
        message: String,
    },
    #[error("writing rows into table {table} failed: {source}; see the server log")]
    CopyIo {
        table: &'static str,
        #[source]
        source: std::io::Error,
    },
    #[error("the load was cancelled; the database holds a partial load: drop it (flashlab_tpcc::drop_schema) before loading again")]
    Cancelled,
    #[error("a loader or terminal thread panicked: {0}; this is a bug in flashlab-tpcc, please report it")]
    Panicked(String),
}

/// Attaches what we were doing to a PostgreSQL error.
pub(crate) trait During<T> {
    fn during(self, what: &'static str) -> Result<T, TpccError>;
}

impl<T> During<T> for Result<T, postgres::Error> {
    fn during(self, what: &'static str) -> Result<T, TpccError> {
        self.map_err(|source| TpccError::Sql {
            during: what,
            source,
        })
    }
}

/// A MariaDB client error on one line.
pub(crate) fn mariadb_line(e: &mysql::Error) -> String {
    e.to_string()
        .split_whitespace()
        .collect::<Vec<_>>()
        .join(" ")
}

impl<T> During<T> for Result<T, mysql::Error> {
    fn during(self, what: &'static str) -> Result<T, TpccError> {
        self.map_err(|e| TpccError::Mariadb {
            during: what,
            message: mariadb_line(&e),
        })
    }
}
