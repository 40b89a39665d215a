//! IO against the target for the probes: one IO at a time or a batch at a
//! queue depth, every IO checked against the allowed write range and every
//! step against the budget, which is kept on the device's own clock (wall
//! time for a real device, simulated time for `sim:`), as the executor does.

use flashlab_device::{Completion, Device, IoRequest, Mode, Nanos};

use crate::ProbeError;

/// A byte range the probe may write: `[offset_bytes, offset_bytes + len_bytes)`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct ByteRange {
    pub offset_bytes: u64,
    pub len_bytes: u64,
}

impl ByteRange {
    pub fn end_bytes(&self) -> u64 {
        self.offset_bytes + self.len_bytes
    }
    pub fn contains(&self, offset_bytes: u64, size_bytes: u64) -> bool {
        offset_bytes >= self.offset_bytes && offset_bytes + size_bytes <= self.end_bytes()
    }
}

pub struct Session<'a> {
    dev: &'a mut dyn Device,
    deadline_ns: Nanos,
    writes: Option<ByteRange>,
    next_tag: u64,
    done: Vec<Completion>,
    /// Bytes written so far (a twin's plan has a write budget too).
    pub written_bytes: u64,
}

impl<'a> Session<'a> {
    pub fn new(dev: &'a mut dyn Device, budget_ns: Nanos, writes: Option<ByteRange>) -> Self {
        let deadline_ns = dev.now_ns().saturating_add(budget_ns);
        Session {
            dev,
            deadline_ns,
            writes,
            next_tag: 0,
            done: Vec::new(),
            written_bytes: 0,
        }
    }

    pub fn device(&self) -> &dyn Device {
        &*self.dev
    }

    pub fn now_ns(&self) -> Nanos {
        self.dev.now_ns()
    }

    pub fn writes(&self) -> Option<ByteRange> {
        self.writes
    }

    pub fn check_budget(&self) -> Result<(), ProbeError> {
        if self.dev.now_ns() >= self.deadline_ns {
            Err(ProbeError::Budget)
        } else {
            Ok(())
        }
    }

    fn check(&self, offset_bytes: u64, size_bytes: u64, mode: Mode) -> Result<(), ProbeError> {
        let info = self.dev.info();
        if offset_bytes + size_bytes > info.size_bytes {
            return Err(ProbeError::Internal(format!(
                "IO at {offset_bytes}+{size_bytes} beyond the device's {} bytes",
                info.size_bytes
            )));
        }
        if mode.modifies() {
            match self.writes {
                Some(r) if r.contains(offset_bytes, size_bytes) => {}
                _ => {
                    return Err(ProbeError::Internal(format!(
                        "write at {offset_bytes}+{size_bytes} outside the allowed range"
                    )))
                }
            }
        }
        Ok(())
    }

    /// One IO on an otherwise idle queue; its latency.
    pub fn io(
        &mut self,
        offset_bytes: u64,
        size_bytes: u32,
        mode: Mode,
    ) -> Result<Nanos, ProbeError> {
        let lat = self.batch(&[(offset_bytes, size_bytes)], mode, 1)?;
        Ok(lat[0])
    }

    /// IOs kept `qd` outstanding; the latency of each, in submission order.
    pub fn batch(
        &mut self,
        ios: &[(u64, u32)],
        mode: Mode,
        qd: usize,
    ) -> Result<Vec<Nanos>, ProbeError> {
        self.check_budget()?;
        let qd = qd.max(1).min(self.dev.max_outstanding().max(1));
        for &(o, s) in ios {
            self.check(o, s as u64, mode)?;
        }
        let first_tag = self.next_tag;
        self.next_tag += ios.len() as u64;
        let mut lat = vec![0; ios.len()];
        let mut next = 0usize;
        let mut outstanding = 0usize;
        let mut completed = 0usize;
        let mut over = false;
        while completed < next || (!over && next < ios.len()) {
            // A long batch (the fill of a slow USB stick) stops at the
            // deadline too: no more IOs are submitted, those out complete.
            over = over || self.dev.now_ns() >= self.deadline_ns;
            while !over && outstanding < qd && next < ios.len() {
                let (o, s) = ios[next];
                self.dev
                    .submit(IoRequest {
                        tag: first_tag + next as u64,
                        offset_bytes: o,
                        size_bytes: s,
                        mode,
                    })
                    .map_err(ProbeError::Device)?;
                next += 1;
                outstanding += 1;
            }
            self.done.clear();
            self.dev
                .poll(None, &mut self.done)
                .map_err(ProbeError::Device)?;
            for c in &self.done {
                if let Some(errno) = c.errno {
                    return Err(ProbeError::Device(flashlab_device::DeviceError::Os {
                        what: format!("{mode} during the probe"),
                        errno,
                    }));
                }
                let i = (c.tag - first_tag) as usize;
                lat[i] = c.latency_ns();
                outstanding -= 1;
                completed += 1;
            }
        }
        if mode == Mode::Write {
            self.written_bytes += ios[..next].iter().map(|&(_, s)| s as u64).sum::<u64>();
        }
        if next < ios.len() {
            return Err(ProbeError::Budget);
        }
        Ok(lat)
    }

    /// Lets `ns` pass with nothing submitted (a plan's pauses).
    pub fn pause(&mut self, ns: Nanos) -> Result<(), ProbeError> {
        self.check_budget()?;
        let until = self.dev.now_ns() + ns;
        self.dev.idle_until(until).map_err(ProbeError::Device)
    }

    /// Switches the device's write cache (see `Device::set_write_cache`).
    pub fn set_write_cache(&mut self, enabled: bool) -> Result<(), flashlab_device::DeviceError> {
        self.dev.set_write_cache(enabled)
    }

    /// Lets the device idle until its scheduled work is done (the simulator
    /// knows when), or for `max_ns` on a real device, so that a write cache
    /// drains before a burst.
    pub fn idle(&mut self, max_ns: Nanos) -> Result<(), ProbeError> {
        let now = self.dev.now_ns();
        let until = match self.dev.quiesce_at_ns() {
            Some(q) => q.max(now).min(now + max_ns),
            None => now + max_ns,
        };
        self.dev.idle_until(until).map_err(ProbeError::Device)
    }
}

/// Why a write range or a budget given by a user could not be read: the
/// problem alone; each front end words it with its own flag or argument name.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ArgError(pub String);

impl std::fmt::Display for ArgError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for ArgError {}

/// `OFFSET+LENGTH` (sizes as flashlab writes them) or `all`, inside a device
/// of `size_bytes`.
pub fn parse_range(text: &str, size_bytes: u64) -> Result<ByteRange, ArgError> {
    use flashlab_pattern::units::{format_size, parse_size};
    if text == "all" {
        return Ok(ByteRange {
            offset_bytes: 0,
            len_bytes: size_bytes,
        });
    }
    let (o, l) = text
        .split_once('+')
        .ok_or_else(|| ArgError("no '+' between offset and length".into()))?;
    let o = parse_size(o).map_err(|e| ArgError(e.to_string()))?;
    let l = parse_size(l).map_err(|e| ArgError(e.to_string()))?;
    if o.checked_add(l).is_none_or(|end| end > size_bytes) {
        return Err(ArgError(format!(
            "the range ends past the device's {}",
            format_size(size_bytes)
        )));
    }
    Ok(ByteRange {
        offset_bytes: o,
        len_bytes: l,
    })
}

/// A duration as IO patterns write them (`90s`, `500ms`), and also minutes
/// and hours (`10m`, `1h`), which a budget needs and patterns do not.
pub fn parse_budget_ns(text: &str) -> Result<Nanos, ArgError> {
    let t = text.trim();
    let scaled = |num: &str, mult: f64| -> Result<Nanos, ArgError> {
        let v: f64 = num.parse().map_err(|_| ArgError("not a number".into()))?;
        if !(v.is_finite() && v > 0.0) {
            return Err(ArgError("not a positive duration".into()));
        }
        Ok((v * mult) as Nanos)
    };
    if let Some(n) = t.strip_suffix('h') {
        return scaled(n, 3.6e12);
    }
    if let Some(n) = t.strip_suffix('m') {
        return scaled(n, 6e10);
    }
    flashlab_pattern::units::parse_duration_ns(t).map_err(|e| ArgError(e.to_string()))
}
