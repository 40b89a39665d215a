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
    pub fn duration_s(&self) -> f64 {
        0.0
    }
    /// (read IOs, read bytes, write IOs, write bytes) of the physical trace.
    pub fn physical_counts(&self) -> Option<(u64, u64, u64, u64)> {
        None
    }
}

#[cfg(feature = "iotrace")]
mod inner {
    pub struct Session(pub flashlab_iotrace::TraceSession);
    pub struct Inner(pub flashlab_iotrace::TraceSummary);
}

#[cfg(feature = "iotrace")]
fn trace_err(e: flashlab_iotrace::TraceError) -> OltpError {
    use flashlab_iotrace::TraceError as T;
    let user = matches!(e, T::NotRoot | T::Unavailable(_));
    OltpError::Trace {
        message: e.to_string(),
        user,
    }
}

#[cfg(feature = "iotrace")]
pub fn check_available() -> Result<()> {
    flashlab_iotrace::check_available().map_err(trace_err)
}

/// Starts both tracers: logical on the postmaster's process tree and files
/// under PGDATA, physical on the device (when the file system has one).
#[cfg(feature = "iotrace")]
pub fn start(out: &Path, postmaster: u32, pgdata: &Path, dev: &Attached) -> Result<Session> {
    use flashlab_iotrace::{LogicalSpec, PhysicalSpec, TraceSpec};
    let spec = TraceSpec {
        out_dir: out.to_path_buf(),
        logical: Some(LogicalSpec {
            root_pid: postmaster,
            under_dir: pgdata.to_path_buf(),
        }),
        physical: (dev.major != 0).then_some(PhysicalSpec {
            major: dev.major,
            minor: dev.minor,
        }),
        reader: Default::default(),
    };
    Ok(Session {
        inner: inner::Session(flashlab_iotrace::start(spec).map_err(trace_err)?),
    })
}

#[cfg(feature = "iotrace")]
impl Session {
    pub fn stop(self) -> Result<Traced> {
        let summary = self.inner.0.stop().map_err(trace_err)?;
        Ok(Traced {
            summary: serde_json::to_value(&summary).expect("serializes"),
            inner: inner::Inner(summary),
        })
    }
}

#[cfg(feature = "iotrace")]
impl Traced {
    fn tally(c: &flashlab_iotrace::IoCounts) -> flashlab_iotrace::analysis::Tally {
        flashlab_iotrace::analysis::Tally {
            reads: c.reads,
            read_bytes: c.read_bytes,
            writes: c.writes,
            write_bytes: c.write_bytes,
            flushes: c.flushes,
        }
    }

    /// Figs 7-9: per interval, logical and physical, reads and writes
    /// apart: IO/s, bytes/s and average IO size; and the totals by file kind.
    pub fn series(&self, interval_s: f64) -> Value {
        use flashlab_iotrace::analysis;
        let interval_ns = (interval_s * 1e9).max(1e6) as u64;
        let one = |p: &Option<std::path::PathBuf>| -> Value {
            let Some(p) = p else { return Value::Null };
            match analysis::series(p, interval_ns) {
                Ok(s) => serde_json::json!({
                    "interval_ns": s.interval_ns,
                    "rates": s.rates(),
                    "total": s.total,
                    "by_kind": s.by_kind,
                }),
                Err(e) => serde_json::json!({"error": e.to_string()}),
            }
        };
        serde_json::json!({
            "interval_s": interval_s,
            "logical": one(&self.inner.0.logical_path),
            "physical": one(&self.inner.0.physical_path),
        })
    }

    /// Physical / logical bytes written.
    pub fn fs_write_amplification(&self) -> Option<f64> {
        let s = &self.inner.0;
        s.physical_path.as_ref()?;
        flashlab_iotrace::analysis::fs_write_amplification(
            &Self::tally(&s.logical),
            &Self::tally(&s.physical),
        )
    }

    /// Seconds the tracers ran (ramp-up and measured run).
    pub fn duration_s(&self) -> f64 {
        self.inner.0.duration_ns as f64 / 1e9
    }

    pub fn physical_write_bytes(&self) -> Option<u64> {
        let s = &self.inner.0;
        s.physical_path.as_ref().map(|_| s.physical.write_bytes)
    }

    /// (read IOs, read bytes, write IOs, write bytes) of the physical trace.
    pub fn physical_counts(&self) -> Option<(u64, u64, u64, u64)> {
        let s = &self.inner.0;
        s.physical_path.as_ref()?;
        let p = &s.physical;
        Some((p.reads, p.read_bytes, p.writes, p.write_bytes))
    }
}
