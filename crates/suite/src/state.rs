//! State enforcement (uFLIP section 4.1, Chen et al. 5.1, SNIA PTS): bring
//! a device to a well-defined state by writing all of it.

use std::sync::atomic::{AtomicBool, Ordering};

use flashlab_device::{Completion, Device, DeviceError, IoRequest, Mode};
use flashlab_pattern::rng::{derive_seed, Rng};
use serde::{Deserialize, Serialize};

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum StateMethod {
    /// uFLIP section 4.1: "*Writing the whole flash device completely
    /// yields a well-defined state*. The rationale is that following a
    /// complete write of the whole flash device, both the direct and indirect
    /// maps managed by the FTL are filled and well-defined. We therefore
    /// propose to enforce an initial state for the benchmark by performing
    /// random IOs of random size (ranging from 0.5KB to the flash block size,
    /// 128 KB) on the whole device." Section 5.1: "we first filled each
    /// device with random writes of random size to enforce a random state."
    ///
    /// So every byte is written, by random writes of random size
    /// ([`RandomFill`]): one capacity's worth at random places, then, in
    /// random order, random-size writes over whatever that left unwritten
    /// (about a third of it).
    Random,
    /// Chen et al.: one sequential pass of 256 KiB writes.
    Sequential,
    /// SNIA-style: sequential 128 KiB writes over twice the capacity.
    Snia,
    /// Leave the device as it is.
    None,
}

/// A state enforcement name [`StateMethod::parse`] does not know (the
/// text as given).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct UnknownStateMethod(pub String);

impl std::fmt::Display for UnknownStateMethod {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "unknown state enforcement '{}'; use random, sequential, snia or none",
            self.0
        )
    }
}

impl std::error::Error for UnknownStateMethod {}

impl StateMethod {
    pub fn parse(text: &str) -> Result<StateMethod, UnknownStateMethod> {
        match text {
            "random" => Ok(StateMethod::Random),
            "sequential" | "seq" => Ok(StateMethod::Sequential),
            "snia" => Ok(StateMethod::Snia),
            "none" => Ok(StateMethod::None),
            other => Err(UnknownStateMethod(other.to_string())),
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
            StateMethod::Random => "uFLIP random state: random writes of random size (0.5-128 KiB) until every byte of the device is written (one capacity's worth at random places, then the places left unwritten, in random order)",
            StateMethod::Sequential => "sequential fill: 256 KiB writes over the whole device (Chen et al.)",
            StateMethod::Snia => "SNIA-style: sequential 128 KiB writes over twice the capacity",
            StateMethod::None => "none: the device is used in the state it is in",
        }
    }

    /// Bytes this method writes on a device of `size_bytes` (for the random
    /// state an estimate: the capacity, then the third or so of it the first
    /// pass leaves unwritten, [`RandomFill`]).
    pub fn bytes_written(self, size_bytes: u64) -> u64 {
        match self {
            StateMethod::Random => size_bytes + size_bytes / 3,
            StateMethod::Sequential => size_bytes,
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
    let unit = block_bytes.max(512);
    let mut fill = (method == StateMethod::Random)
        .then(|| RandomFill::new(size, unit, derive_seed(seed, 0x57A7E)));
    let mut written = 0u64;
    let mut cursor = 0u64;
    let qd = queue_depth.clamp(1, dev.max_outstanding());
    let mut outstanding = 0usize;
    let mut free: Vec<u64> = (0..qd as u64).collect();
    let mut completions: Vec<Completion> = Vec::with_capacity(qd);
    let mut ios = 0u64;
    let mut last_report = 0u64;
    let mut exhausted = false;
    loop {
        while !exhausted && !free.is_empty() && !stop.load(Ordering::Relaxed) {
            let next = match method {
                StateMethod::Random => fill.as_mut().expect("random state").next(),
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
                    (written < total).then_some((off, len))
                }
                StateMethod::None => unreachable!("returned above"),
            };
            let Some((offset, len)) = next else {
                exhausted = true;
                break;
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
    let complete = exhausted || (fill.is_none() && written >= total);
    Ok(if complete { Some(ios) } else { None })
}

/// The writes of uFLIP's random state ([`StateMethod::Random`]) on a device
/// of `size_bytes`, as (offset, length) in bytes, every one a whole number of
/// `unit_bytes` and 1 to 128 KiB long (uFLIP 4.1: "random IOs of random size
/// (ranging from 0.5KB to the flash block size, 128 KB)").
///
/// Section 4.1 asks for a device written completely and section 5.1 for one
/// "filled ... with random writes of random size"; neither says how many
/// writes that took. Random writes at random places alone reach every byte
/// only after some fifteen capacities (on 1 GiB, one capacity's worth writes
/// 65.3 % of the 4 KiB pages, and each further capacity leaves about 1/e of
/// what was still unwritten), so the fill is done in two passes that end in
/// the same kind of state at a fraction of the cost:
/// 1. one capacity's worth of writes of uniform random size at uniform
///    random places (overwrites included, as in a long random fill, so a
///    page-mapped FTL is cleaning by the end of it);
/// 2. every stretch the first pass left unwritten, cut into pieces of the
///    same random sizes (clipped at the stretch's end), written in random
///    order: the writes a longer random fill would have landed there, with
///    those that only rewrite written places left out.
///
/// Seeded: the same size, unit and seed give the same writes.
pub struct RandomFill {
    size_bytes: u64,
    unit_bytes: u64,
    max_units: u64,
    rng: Rng,
    /// Bytes the first pass has issued so far.
    first_pass_bytes: u64,
    /// Which units the first pass wrote (one bit a unit).
    written: Vec<u64>,
    /// The second pass's writes, issued from the end; `None` until the
    /// first pass is over.
    holes: Option<Vec<(u64, u64)>>,
}

impl RandomFill {
    pub fn new(size_bytes: u64, unit_bytes: u64, seed: u64) -> RandomFill {
        let unit_bytes = unit_bytes.max(1);
        let size_bytes = size_bytes / unit_bytes * unit_bytes;
        let units = size_bytes / unit_bytes;
        RandomFill {
            size_bytes,
            unit_bytes,
            max_units: (128 * 1024 / unit_bytes).max(1),
            rng: Rng::new(seed),
            first_pass_bytes: 0,
            written: vec![0; units.div_ceil(64) as usize],
            holes: None,
        }
    }

    fn mark(&mut self, first_unit: u64, units: u64) {
        for u in first_unit..first_unit + units {
            self.written[(u / 64) as usize] |= 1 << (u % 64);
        }
    }

    fn is_written(&self, u: u64) -> bool {
        self.written[(u / 64) as usize] & (1 << (u % 64)) != 0
    }

    /// The second pass: the stretches left unwritten, cut into random sizes,
    /// in random order (Fisher-Yates).
    fn second_pass(&mut self) -> Vec<(u64, u64)> {
        let units = self.size_bytes / self.unit_bytes;
        let mut pieces = Vec::new();
        let mut u = 0;
        while u < units {
            if self.is_written(u) {
                u += 1;
                continue;
            }
            let mut end = u;
            while end < units && !self.is_written(end) {
                end += 1;
            }
            while u < end {
                let len = (1 + self.rng.below(self.max_units)).min(end - u);
                pieces.push((u * self.unit_bytes, len * self.unit_bytes));
                u += len;
            }
        }
        for i in (1..pieces.len()).rev() {
            let j = self.rng.below(i as u64 + 1) as usize;
            pieces.swap(i, j);
        }
        pieces
    }
}

impl Iterator for RandomFill {
    type Item = (u64, u64);

    fn next(&mut self) -> Option<(u64, u64)> {
        if self.size_bytes == 0 {
            return None;
        }
        if self.first_pass_bytes < self.size_bytes {
            let len = ((1 + self.rng.below(self.max_units)) * self.unit_bytes).min(self.size_bytes);
            let slots = (self.size_bytes - len) / self.unit_bytes + 1;
            let off = self.rng.below(slots) * self.unit_bytes;
            self.mark(off / self.unit_bytes, len / self.unit_bytes);
            self.first_pass_bytes += len;
            return Some((off, len));
        }
        if self.holes.is_none() {
            let pieces = self.second_pass();
            self.holes = Some(pieces);
        }
        self.holes.as_mut().expect("just built").pop()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MIB: u64 = 1024 * 1024;

    /// `--state` names a state enforcement; an unknown one is a typed
    /// error whose text lists the known ones.
    #[test]
    fn an_unknown_state_enforcement_is_a_typed_error_listing_the_known_ones() {
        assert_eq!(StateMethod::parse("seq"), Ok(StateMethod::Sequential));
        let err = StateMethod::parse("trim").unwrap_err();
        assert_eq!(err, UnknownStateMethod("trim".into()));
        assert_eq!(
            err.to_string(),
            "unknown state enforcement 'trim'; use random, sequential, snia or none"
        );
    }

    #[test]
    fn the_random_state_writes_every_byte_with_random_writes_of_half_a_kib_to_128_kib() {
        let size = 64 * MIB;
        let mut covered = vec![false; (size / 512) as usize];
        let mut bytes = 0;
        for (off, len) in RandomFill::new(size, 512, 7) {
            assert!((512..=128 * 1024).contains(&len), "length {len}");
            assert_eq!((off % 512, len % 512), (0, 0));
            assert!(off + len <= size);
            covered[(off / 512) as usize..((off + len) / 512) as usize].fill(true);
            bytes += len;
        }
        assert!(covered.iter().all(|&c| c), "a sector was never written");
        // the first pass writes one capacity and leaves about 1/e of it
        // unwritten, which the second pass writes once
        let second = bytes as f64 / size as f64 - 1.0;
        assert!(
            (0.30..0.40).contains(&second),
            "second pass {second:.3} capacities"
        );
    }

    #[test]
    fn the_first_pass_is_one_capacity_at_random_places_and_the_second_is_shuffled() {
        let size = 16 * MIB;
        let writes: Vec<_> = RandomFill::new(size, 512, 3).collect();
        let mut first = 0;
        let mut n_first = 0;
        while first < size {
            first += writes[n_first].1;
            n_first += 1;
        }
        let second = &writes[n_first..];
        // the second pass never writes a sector twice...
        let mut sorted = second.to_vec();
        sorted.sort();
        assert!(sorted.windows(2).all(|w| w[0].0 + w[0].1 <= w[1].0));
        // ...and is not issued in address order
        assert_ne!(sorted, second.to_vec());
    }

    #[test]
    fn the_same_seed_gives_the_same_writes_and_another_seed_others() {
        let a: Vec<_> = RandomFill::new(8 * MIB, 4096, 1).collect();
        let b: Vec<_> = RandomFill::new(8 * MIB, 4096, 1).collect();
        let c: Vec<_> = RandomFill::new(8 * MIB, 4096, 2).collect();
        assert_eq!(a, b);
        assert_ne!(a, c);
    }
}
