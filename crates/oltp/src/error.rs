//! Typed errors. Every variant renders as one line naming the problem and
//! the install or flag that fixes it; `is_user` says whether the user can
//! fix it (exit 2) or the machine failed (exit 1).

use std::fmt;

#[derive(Debug)]
pub enum OltpError {
    /// A program flashlab needs is not installed.
    MissingTool {
        tool: String,
        package: &'static str,
        why: &'static str,
    },
    /// PostgreSQL's server binaries are not where we look.
    NoPostgres { looked_in: String },
    /// flashlab oltp must run as root.
    NotRoot,
    /// Bad flags or a device that cannot hold the run.
    Input(String),
    /// A cluster or file that flashlab did not create is in the way.
    NotOurs(String),
    /// The device, a tool or a process failed.
    Failed(String),
    /// The TPC-C driver failed.
    Workload(String),
    /// Tracing failed or is unavailable.
    Trace { message: String, user: bool },
    /// Ctrl-C or SIGTERM.
    Interrupted,
}

impl OltpError {
    pub fn is_user(&self) -> bool {
        match self {
            OltpError::MissingTool { .. }
            | OltpError::NoPostgres { .. }
            | OltpError::NotRoot
            | OltpError::Input(_)
            | OltpError::NotOurs(_) => true,
            OltpError::Trace { user, .. } => *user,
            OltpError::Failed(_) | OltpError::Workload(_) | OltpError::Interrupted => false,
        }
    }

    pub fn failed(context: impl fmt::Display, e: impl fmt::Display) -> OltpError {
        OltpError::Failed(format!("{context}: {e}"))
    }
}

impl fmt::Display for OltpError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            OltpError::MissingTool { tool, package, why } => write!(
                f,
                "{tool} is not installed ({why}); install it: apt-get install {package}"
            ),
            OltpError::NoPostgres { looked_in } => write!(
                f,
                "PostgreSQL is not installed (no initdb and postgres in {looked_in}); install it: apt-get install postgresql, or pass --pg-bin DIR"
            ),
            OltpError::NotRoot => f.write_str(
                "flashlab oltp needs root (loop devices, mkfs, mount, tracefs, and starting PostgreSQL as the postgres user); run it with sudo",
            ),
            OltpError::Input(m) | OltpError::NotOurs(m) | OltpError::Failed(m) => f.write_str(m),
            OltpError::Workload(m) => write!(f, "TPC-C: {m}"),
            OltpError::Trace { message, .. } => write!(f, "tracing: {message}"),
            OltpError::Interrupted => f.write_str("interrupted"),
        }
    }
}

impl std::error::Error for OltpError {}

pub type Result<T> = std::result::Result<T, OltpError>;
