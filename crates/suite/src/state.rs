//! State enforcement (uFLIP section 4.1, Chen et al. 5.1, SNIA PTS): bring
//! a device to a well-defined state by writing all of it.

use std::sync::atomic::{AtomicBool, Ordering};

use flashlab_device::{Completion, Device, DeviceError, IoRequest, Mode};
use flashlab_pattern::rng::{derive_seed, Rng};
use serde::{Deserialize, Serialize};

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum StateMethod {
    /// uFLIP: random writes of random size (0.5 KiB .. 128 KiB) until the
    /// device's capacity has been written.
    Random,
    /// Chen et al.: one sequential pass of 256 KiB writes.
    Sequential,
    /// SNIA-style: sequential 128 KiB writes over twice the capacity.
    Snia,
    /// Leave the device as it is.
    None,
}

impl StateMethod {
    pub fn parse(text: &str) -> Result<StateMethod, String> {
        match text {
            "random" => Ok(StateMethod::Random),
            "sequential" | "seq" => Ok(StateMethod::Sequential),
            "snia" => Ok(StateMethod::Snia),
            "none" => Ok(StateMethod::None),
            other => Err(format!(
                "unknown state enforcement '{other}'; use random, sequential, snia or none"
            )),
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            StateMethod::Random => "random",
            StateMethod::Sequential => "sequential",
            StateMethod::Snia => "snia",
            StateMethod::None => "none",
        }
    }

    pub fn describe(self) -> &'static str {
        match self {
            StateMethod::Random => "uFLIP random state: random writes of random size (0.5-128 KiB) over the whole device, one capacity's worth",
            StateMethod::Sequential => "sequential fill: 256 KiB writes over the whole device (Chen et al.)",
            StateMethod::Snia => "SNIA-style: sequential 128 KiB writes over twice the capacity",
            StateMethod::None => "none: the device is used in the state it is in",
        }
    }

    /// Bytes this method writes on a device of `size_bytes`.
    pub fn bytes_written(self, size_bytes: u64) -> u64 {
        match self {
            StateMethod::Random | StateMethod::Sequential => size_bytes,
            StateMethod::Snia => 2 * size_bytes,
            StateMethod::None => 0,
        }
    }
}

/// Writes the device into the state `method` defines, `queue_depth` IOs at a
/// time. Returns the number of IOs, or `Ok(None)` when `stop` was raised.
pub fn enforce_state(
    dev: &mut dyn Device,
    method: StateMethod,
    seed: u64,
    queue_depth: usize,
    block_bytes: u64,
    stop: &AtomicBool,
    progress: &mut dyn FnMut(u64, u64),
) -> Result<Option<u64>, DeviceError> {
    let size = dev.info().size_bytes / block_bytes * block_bytes;
    let total = method.bytes_written(size);
    if total == 0 {
        return Ok(Some(0));
    }
    let mut rng = Rng::new(derive_seed(seed, 0x57A7E));
    let mut written = 0u64;
    let mut cursor = 0u64;
    let qd = queue_depth.clamp(1, dev.max_outstanding());
    let mut outstanding = 0usize;
    let mut free: Vec<u64> = (0..qd as u64).collect();
    let mut completions: Vec<Completion> = Vec::with_capacity(qd);
    let mut ios = 0u64;
    let mut last_report = 0u64;
    let unit = block_bytes.max(512);
    loop {
        while written < total && !free.is_empty() && !stop.load(Ordering::Relaxed) {
            let (offset, len) = match method {
                StateMethod::Random => {
                    let max_units = (128 * 1024 / unit).max(1);
                    let len = (1 + rng.below(max_units)) * unit;
                    let len = len.min(size);
                    let slots = (size - len) / unit + 1;
                    (rng.below(slots) * unit, len)
                }
                StateMethod::Sequential | StateMethod::Snia => {
                    let chunk = if method == StateMethod::Sequential {
                        256 * 1024
                    } else {
                        128 * 1024
                    };
                    let chunk = (chunk / unit * unit).max(unit);
                    if cursor >= size {
                        cursor = 0;
                    }
                    let len = chunk.min(size - cursor);
                    let off = cursor;
                    cursor += len;
                    (off, len)
                }
                StateMethod::None => unreachable!("returned above"),
            };
            let tag = free.pop().expect("checked");
            dev.submit(IoRequest {
                tag,
                offset_bytes: offset,
                size_bytes: len as u32,
                mode: Mode::Write,
            })?;
            outstanding += 1;
            written += len;
            ios += 1;
        }
        if outstanding == 0 {
            break;
        }
        completions.clear();
        dev.poll(None, &mut completions)?;
        for c in &completions {
            if let Some(errno) = c.errno {
                return Err(DeviceError::Os {
                    what: "state enforcement write".into(),
                    errno,
                });
            }
            free.push(c.tag);
            outstanding -= 1;
        }
        if written - last_report > total / 200 {
            last_report = written;
            progress(written.min(total), total);
        }
    }
    progress(written.min(total), total);
    Ok(if written >= total { Some(ios) } else { None })
}
