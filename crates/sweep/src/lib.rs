//! Sweeps: many independent simulator runs, described by one grid file.
//!
//! A grid names a base simulator device, lists of values for simulator keys
//! (`op`, `gc`, `cache`, dotted paths such as `nand.program_ns`), seeds and
//! one workload (pattern runs, a trace, the pattern runs of an existing
//! results directory, or a paper suite). Its expansion is the Cartesian product, in a fixed
//! order; each point gets an id hashed from its parameter values, so adding
//! a value to a list does not rename the points already done.
//!
//! A point runs single-threaded into a results directory of its own
//! (`points/ID/`) and ends with `point.json`, the completed marker that
//! makes sweeps resumable; its metrics are one row per run of the tidy
//! table (`sweep.csv`). The CLI (`flashlab sweep`, [`local::run_local`] on
//! threads) and the Python package (Dask tasks calling [`point::run_point`])
//! share this code, so both produce the same points and the same table.
//!
//! - [`grid`]: the grid file, its checks and its expansion;
//! - [`point`]: running one point (or one ad-hoc simulation) and its metrics;
//! - [`table`]: the tidy table;
//! - [`local`]: a thread pool for one machine.

pub mod error;
pub mod grid;
pub mod local;
pub mod lock;
pub mod point;
pub mod table;

pub use error::SweepError;
pub use grid::{Grid, ParamValue, Point, RealTarget, SuiteSpec, TraceSpec, WorkloadSpec};
pub use point::{run_point, simulate, PointOutcome, PointStatus, RunMetrics};
