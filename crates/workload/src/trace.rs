//! A trace replay workload: its settings (one struct, whether they came from
//! `flashlab replay`'s flags or a grid's `[trace]` table), checked once, and
//! the trace read with the bounded reader and fitted onto a device.

use std::path::PathBuf;

use flashlab_exec::ReplayMode;
use flashlab_results::ReplaySpec;
use flashlab_trace::{fit_to_device, Fit, Format, TraceIo, TraceOp};
use serde::{Deserialize, Serialize};

use crate::error::{Field, Problem, WorkloadError};
use crate::{DEFAULT_OPEN_LOOP_IN_FLIGHT, SIM_MAX_OUTSTANDING};

/// A trace replay (`flashlab replay`, a grid's `[trace]`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TraceSpec {
    pub path: PathBuf,
    /// The trace format; detected from the first line when absent.
    #[serde(default)]
    pub format: Option<String>,
    #[serde(default)]
    pub closed_loop: bool,
    /// Closed loop: the queue depth (default 1); open loop: the most requests in flight (default 256).
    #[serde(default)]
    pub queue_depth: Option<usize>,
    /// Open loop: recorded times are divided by this.
    #[serde(default = "one")]
    pub speed: f64,
    /// `error`, `wrap` or `scale`, as `flashlab replay --fit`.
    #[serde(default = "fit_error")]
    pub fit: String,
}

fn one() -> f64 {
    1.0
}
fn fit_error() -> String {
    "error".into()
}

/// A trace read and parsed, not yet fitted onto a device.
pub struct ParsedTrace {
    pub ios: Vec<TraceIo>,
    pub format: Format,
    /// The trace's path as messages and the manifest name it.
    pub origin: String,
}

/// A trace ready to replay on one device.
pub struct PreparedTrace {
    /// The run's name in the results directory ("replay"; `flashlab replay --name`).
    pub name: String,
    pub ios: Vec<TraceIo>,
    /// What the manifest records of the replay.
    pub spec: ReplaySpec,
    pub mode: ReplayMode,
    /// Requests (flushes are not requests).
    pub requests: u64,
    /// The most requests in flight.
    pub in_flight: usize,
}

impl TraceSpec {
    /// The settings' own checks, before the trace is read: speed, queue
    /// depth, their combination and the fit mode.
    pub fn check(&self) -> Result<(), WorkloadError> {
        let refuse = |field, problem| Err(WorkloadError::Field { field, problem });
        if !(self.speed > 0.0 && self.speed.is_finite()) {
            return refuse(Field::Speed, Problem::NotPositive(self.speed));
        }
        // Closed-loop replay issues each request when one completes: there
        // is no recorded clock for a speed to scale.
        if self.closed_loop && self.speed != 1.0 {
            return refuse(Field::Speed, Problem::SpeedWithClosedLoop);
        }
        let in_flight = self.in_flight();
        if in_flight == 0 || in_flight > SIM_MAX_OUTSTANDING {
            return refuse(
                Field::QueueDepth,
                Problem::OutOfRange {
                    max: SIM_MAX_OUTSTANDING,
                },
            );
        }
        Fit::parse(&self.fit).map_err(|e| WorkloadError::Input(e.to_string()))?;
        Ok(())
    }

    /// The most requests in flight: the queue depth, or its default for the loop mode.
    pub fn in_flight(&self) -> usize {
        self.queue_depth.unwrap_or(if self.closed_loop {
            1
        } else {
            DEFAULT_OPEN_LOOP_IN_FLIGHT
        })
    }

    /// Reads the trace with the bounded reader (`/dev/zero` or a disk image
    /// is refused at once) and parses it in its format, given or detected.
    pub fn read(&self) -> Result<ParsedTrace, WorkloadError> {
        let input = |e: &dyn std::fmt::Display| WorkloadError::Input(e.to_string());
        let text = flashlab_trace::read_text(&self.path).map_err(|e| input(&e))?;
        let origin = self.path.display().to_string();
        let format = match &self.format {
            Some(f) => Format::parse(f).map_err(|e| input(&e))?,
            None => Format::detect(&text).ok_or_else(|| WorkloadError::Field {
                field: Field::Format,
                problem: Problem::Undetected {
                    origin: origin.clone(),
                    names: Format::NAMES,
                },
            })?,
        };
        let ios = flashlab_trace::parse(&text, format, &origin).map_err(|e| input(&e))?;
        Ok(ParsedTrace {
            ios,
            format,
            origin,
        })
    }

    /// Fits a parsed trace onto a device of `size_bytes` with logical blocks
    /// of `lbs` bytes (`fit`), and says how it replays.
    pub fn prepare(
        &self,
        parsed: ParsedTrace,
        size_bytes: u64,
        lbs: u64,
    ) -> Result<PreparedTrace, WorkloadError> {
        let ParsedTrace {
            mut ios,
            format,
            origin,
        } = parsed;
        let fit = Fit::parse(&self.fit).map_err(|e| WorkloadError::Input(e.to_string()))?;
        fit_to_device(&mut ios, size_bytes, lbs, fit)
            .map_err(|e| WorkloadError::Input(format!("{origin}: {e}")))?;
        let requests = ios.iter().filter(|io| io.op != TraceOp::Flush).count() as u64;
        let in_flight = self.in_flight();
        let spec = ReplaySpec {
            trace_path: origin,
            format: format.name().to_string(),
            requests,
            loop_mode: if self.closed_loop {
                "closed_loop"
            } else {
                "open_loop"
            }
            .to_string(),
            speed: self.speed,
            max_outstanding: in_flight as u64,
            fit: self.fit.clone(),
        };
        let mode = if self.closed_loop {
            ReplayMode::ClosedLoop {
                queue_depth: in_flight,
            }
        } else {
            ReplayMode::OpenLoop {
                speed: self.speed,
                max_outstanding: in_flight,
            }
        };
        Ok(PreparedTrace {
            name: "replay".to_string(),
            ios,
            spec,
            mode,
            requests,
            in_flight,
        })
    }
}
