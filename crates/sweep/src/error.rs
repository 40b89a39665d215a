//! The sweep's errors: each displays as one line naming the problem and the fix.

use std::fmt;
use std::path::PathBuf;

#[derive(Debug)]
pub enum SweepError {
    /// The grid file is malformed or names something that does not exist.
    Grid(String),
    /// A workload or device parameter is refused (bad pattern, unknown simulator key...).
    Input(String),
    /// The simulated device failed or a run stopped with an error.
    Run(String),
    /// Reading or writing a file failed.
    Io {
        path: PathBuf,
        source: std::io::Error,
    },
}

impl SweepError {
    /// True for mistakes in what the user wrote (CLI exit code 2), false for failures.
    pub fn is_user_error(&self) -> bool {
        matches!(self, SweepError::Grid(_) | SweepError::Input(_))
    }

    pub(crate) fn io(path: impl Into<PathBuf>) -> impl FnOnce(std::io::Error) -> SweepError {
        let path = path.into();
        move |source| SweepError::Io { path, source }
    }
}

impl fmt::Display for SweepError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            SweepError::Grid(m) | SweepError::Input(m) | SweepError::Run(m) => f.write_str(m),
            SweepError::Io { path, source } => write!(f, "{}: {source}", path.display()),
        }
    }
}

impl std::error::Error for SweepError {}

/// A workload's error, as a grid names its fields (`[trace] speed`).
impl From<flashlab_workload::WorkloadError> for SweepError {
    fn from(e: flashlab_workload::WorkloadError) -> SweepError {
        use flashlab_workload::{FrontEnd, WorkloadError};
        match e {
            WorkloadError::Field { .. } | WorkloadError::Pattern { .. } => {
                SweepError::Input(e.render(FrontEnd::Grid))
            }
            WorkloadError::Input(m) => SweepError::Input(m),
            WorkloadError::Run(m) | WorkloadError::Stopped(m) => SweepError::Run(m),
            e @ WorkloadError::Suite { .. } => SweepError::Run(e.to_string()),
            WorkloadError::Io { path, source } => SweepError::Io { path, source },
        }
    }
}
