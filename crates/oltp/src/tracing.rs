//! The seam to the IO tracer (`flashlab-iotrace`): logical IO (the
//! PostgreSQL process tree's file-system calls on files under PGDATA) and
//! physical IO (block requests of the device under test), traced between
//! the load and the end of the TPC-C run.

use std::path::Path;

use serde_json::Value;

use crate::device::Attached;
use crate::error::{OltpError, Result};

/// A finished trace: its summaries and the analyses oltp.json shows.
pub struct Traced {
    pub summary: Value,
    #[cfg(feature = "iotrace")]
    inner: inner::Inner,
}

#[cfg(not(feature = "iotrace"))]
const NOT_BUILT: &str = "this flashlab was built without the IO tracer (the flashlab-iotrace crate; cargo feature `iotrace` of flashlab-oltp); pass --no-trace";

#[cfg(not(feature = "iotrace"))]
pub fn check_available() -> Result<()> {
    Err(OltpError::Trace {
        message: NOT_BUILT.into(),
        user: true,
    })
}

pub struct Session {
    #[cfg(feature = "iotrace")]
    inner: inner::Session,
}

#[cfg(not(feature = "iotrace"))]
pub fn start(_out: &Path, _postmaster: u32, _pgdata: &Path, _dev: &Attached) -> Result<Session> {
    Err(OltpError::Trace {
        message: NOT_BUILT.into(),
        user: true,
    })
}

#[cfg(not(feature = "iotrace"))]
impl Session {
    pub fn stop(self) -> Result<Traced> {
        Err(OltpError::Trace {
            message: NOT_BUILT.into(),
            user: true,
        })
    }
}

#[cfg(not(feature = "iotrace"))]
impl Traced {
    pub fn series(&self, _interval_s: f64) -> Value {
        Value::Null
    }
    pub fn fs_write_amplification(&self) -> Option<f64> {
        None
    }
    pub fn physical_write_bytes(&self) -> Option<u64> {
        None
    }
    /// (read IOs, read bytes, write IOs, write bytes) of the physical trace.
    pub fn physical_counts(&self) -> Option<(u64, u64, u64, u64)> {
        None
    }
}
