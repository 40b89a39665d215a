//! A workload's errors. A refused setting is a [`WorkloadError::Field`]: it
//! names the field, and each front end says it the way its user wrote it
//! ([`FrontEnd`]: `--speed` on the command line, `[trace] speed` in a grid,
//! `trace={"speed": ...}` in Python's `simulate`).

use std::fmt;
use std::path::PathBuf;

/// Where a workload was written: decides how a field is named in messages.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FrontEnd {
    /// `flashlab replay --speed 2`
    Cli,
    /// A grid's `[trace]` table, in TOML or as a Python dict.
    Grid,
    /// Python's `flashlab.simulate(trace={"path": ..., "speed": 2.0})`.
    Python,
}

/// A setting of a trace replay, the one kind of workload whose settings are
/// checked here (pattern runs are checked by `flashlab-pattern`, suites by
/// their own configuration).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Field {
    Speed,
    QueueDepth,
    Format,
    ClosedLoop,
}

impl Field {
    /// The field as `front` spells it.
    pub fn spelled(self, front: FrontEnd) -> &'static str {
        match (self, front) {
            (Field::Speed, FrontEnd::Cli) => "--speed",
            (Field::Speed, FrontEnd::Grid) => "[trace] speed",
            (Field::QueueDepth, FrontEnd::Cli) => "--queue-depth",
            (Field::QueueDepth, FrontEnd::Grid) => "[trace] queue_depth",
            (Field::Format, FrontEnd::Cli) => "--format",
            (Field::Format, FrontEnd::Grid) => "[trace] format",
            (Field::ClosedLoop, FrontEnd::Cli) => "--closed-loop",
            (Field::ClosedLoop, FrontEnd::Grid) => "[trace] closed_loop",
            (Field::Speed, FrontEnd::Python) => "trace[\"speed\"]",
            (Field::QueueDepth, FrontEnd::Python) => "trace[\"queue_depth\"]",
            (Field::Format, FrontEnd::Python) => "trace[\"format\"]",
            (Field::ClosedLoop, FrontEnd::Python) => "trace[\"closed_loop\"]",
        }
    }

    /// An example setting as `front` writes it (the fix a message proposes).
    fn example(self, front: FrontEnd) -> &'static str {
        match (self, front) {
            (Field::Speed, FrontEnd::Cli) => "--speed 2",
            (Field::Speed, FrontEnd::Grid) => "speed = 2.0",
            (Field::QueueDepth, FrontEnd::Cli) => "--queue-depth 32",
            (Field::QueueDepth, FrontEnd::Grid) => "queue_depth = 32",
            (Field::Format, FrontEnd::Cli) => "--format",
            (Field::Format, FrontEnd::Grid) => "format = \"...\" in [trace]",
            (Field::ClosedLoop, FrontEnd::Cli) => "--closed-loop",
            (Field::ClosedLoop, FrontEnd::Grid) => "closed_loop = true",
            (Field::Speed, FrontEnd::Python) => "trace={\"path\": ..., \"speed\": 2.0}",
            (Field::QueueDepth, FrontEnd::Python) => "trace={\"path\": ..., \"queue_depth\": 32}",
            (Field::Format, FrontEnd::Python) => "trace={\"path\": ..., \"format\": \"...\"}",
            (Field::ClosedLoop, FrontEnd::Python) => "trace={\"path\": ..., \"closed_loop\": True}",
        }
    }
}

/// What is wrong with a field's value, independent of how it was written.
#[derive(Clone, Debug, PartialEq)]
pub enum Problem {
    /// The replay speed is not a positive finite number.
    NotPositive(f64),
    /// In flight: at least 1 and at most the given bound.
    OutOfRange { max: usize },
    /// A speed other than 1 with closed-loop replay, which has no clock to scale.
    SpeedWithClosedLoop,
    /// The trace's format cannot be told from its first lines.
    Undetected { origin: String, names: &'static str },
}

#[derive(Debug)]
pub enum WorkloadError {
    /// A setting is refused: rendered per front end by [`WorkloadError::render`].
    Field { field: Field, problem: Problem },
    /// A pattern run is refused (`run`: its position when the workload has
    /// several): rendered per front end by [`WorkloadError::render`], its
    /// parameters named as that front end writes them.
    Pattern {
        run: Option<usize>,
        error: flashlab_pattern::error::PatternError,
    },
    /// The workload is refused (a bad pattern, an unreadable trace, a suite's configuration).
    Input(String),
    /// The device failed or a run stopped with an error.
    Run(String),
    /// A suite's runner failed (`error`); its journal says where to resume.
    Suite { name: String, error: String },
    /// Stopped from outside ([`crate::RunOptions::stop`]) before its end.
    Stopped(String),
    /// Reading or writing the results directory failed.
    Io {
        path: PathBuf,
        source: std::io::Error,
    },
}

impl WorkloadError {
    /// True for mistakes in what the user wrote (CLI exit code 2).
    pub fn is_user_error(&self) -> bool {
        matches!(
            self,
            WorkloadError::Field { .. } | WorkloadError::Pattern { .. } | WorkloadError::Input(_)
        )
    }

    pub(crate) fn io(path: impl Into<PathBuf>) -> impl FnOnce(std::io::Error) -> WorkloadError {
        let path = path.into();
        move |source| WorkloadError::Io { path, source }
    }

    /// One line, naming a refused field as `front` spells it.
    pub fn render(&self, front: FrontEnd) -> String {
        if let WorkloadError::Pattern { run, error } = self {
            use flashlab_pattern::error::Spelling;
            let spelling = match front {
                FrontEnd::Cli => Spelling::Flags,
                FrontEnd::Grid => Spelling::Toml,
                FrontEnd::Python => Spelling::Dict,
            };
            let at = run.map(|i| format!("run {i}: ")).unwrap_or_default();
            return format!("{at}{}", error.render(spelling));
        }
        let WorkloadError::Field { field, problem } = self else {
            return self.to_string();
        };
        let name = field.spelled(front);
        let example = field.example(front);
        match problem {
            Problem::NotPositive(v) => {
                format!("{name} {v} must be a positive number, e.g. {example}")
            }
            Problem::OutOfRange { max } => format!("{name} must be between 1 and {max}"),
            Problem::SpeedWithClosedLoop => format!(
                "{name} applies to open-loop replay; drop it or drop {}",
                Field::ClosedLoop.spelled(front)
            ),
            Problem::Undetected { origin, names } => match front {
                FrontEnd::Cli => format!(
                    "cannot tell the format of {origin}; pass {example} {}",
                    names.replace(" or ", "|").replace(", ", "|")
                ),
                FrontEnd::Grid | FrontEnd::Python => {
                    format!("cannot tell the format of {origin}; set {example} ({names})")
                }
            },
        }
    }
}

impl fmt::Display for WorkloadError {
    /// A refused field is named as a grid writes it; front ends with another
    /// spelling call [`WorkloadError::render`].
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            WorkloadError::Field { .. } | WorkloadError::Pattern { .. } => {
                f.write_str(&self.render(FrontEnd::Grid))
            }
            WorkloadError::Input(m) | WorkloadError::Run(m) | WorkloadError::Stopped(m) => {
                f.write_str(m)
            }
            WorkloadError::Suite { name, error } => write!(f, "suite {name} failed: {error}"),
            WorkloadError::Io { path, source } => write!(f, "{}: {source}", path.display()),
        }
    }
}

impl std::error::Error for WorkloadError {}
