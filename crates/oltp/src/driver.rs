//! The seam to the TPC-C driver (`flashlab-tpcc`): load, run, check.
//! Without the `tpcc` feature flashlab oltp can set up and tear down
//! (`--setup-only`) but says plainly that it cannot run TPC-C.

use std::path::Path;
use std::sync::atomic::AtomicBool;

use serde_json::Value;

use crate::error::{OltpError, Result};
use crate::{OltpConfig, Progress};

/// What the measured run gives back.
pub struct RunResult {
    /// The driver's report (tpmC, per-type counts and percentiles, per-second series).
    pub report: Value,
    /// Seconds of the measured interval (after ramp-up), if the driver says.
    pub measured_s: Option<f64>,
}

#[cfg(not(feature = "tpcc"))]
const NOT_BUILT: &str = "this flashlab was built without the TPC-C driver (the flashlab-tpcc crate; cargo feature `tpcc` of flashlab-oltp); use --setup-only, or build it with the driver";

#[cfg(not(feature = "tpcc"))]
pub fn check_available() -> Result<()> {
    Err(OltpError::Input(NOT_BUILT.into()))
}

#[cfg(not(feature = "tpcc"))]
pub fn load(_db: &postgres::Config, _cfg: &OltpConfig, _stop: &AtomicBool, _postmaster: u32, _p: &mut dyn Progress) -> Result<Value> {
    Err(OltpError::Workload(NOT_BUILT.into()))
}

#[cfg(not(feature = "tpcc"))]
pub fn run(_db: &postgres::Config, _cfg: &OltpConfig, _stop: &AtomicBool, _seconds: &Path, _p: &mut dyn Progress) -> Result<RunResult> {
    Err(OltpError::Workload(NOT_BUILT.into()))
}

#[cfg(not(feature = "tpcc"))]
pub fn check_consistency(_db: &postgres::Config) -> Result<Value> {
    Err(OltpError::Workload(NOT_BUILT.into()))
}
