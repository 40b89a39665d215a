//! Shared drivers for the simulator's integration tests: closed-loop IO through the Device API.
#![allow(dead_code)]

use flashlab_device::{Completion, Device, IoRequest, Mode};
use flashlab_sim::SimDevice;

pub mod random_device;

pub const KIB: u64 = 1024;
pub const MIB: u64 = 1024 * 1024;

/// A small deterministic generator (splitmix64).
pub struct Rng(pub u64);

impl Rng {
    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }
    pub fn below(&mut self, n: u64) -> u64 {
        self.next_u64() % n
    }
}

/// Run `reqs` with at most `qd` outstanding; optional pause after each completion.
pub fn run_with(
    dev: &mut SimDevice,
    reqs: impl IntoIterator<Item = (u64, u32, Mode)>,
    qd: usize,
    pause_ns: u64,
) -> Vec<Completion> {
    let mut out = Vec::new();
    let mut outstanding = 0usize;
    let mut buf = Vec::new();
    for (tag, (offset, size, mode)) in reqs.into_iter().enumerate() {
        while outstanding >= qd {
            buf.clear();
            dev.poll(None, &mut buf).expect("poll");
            outstanding -= buf.len();
            out.extend_from_slice(&buf);
            if pause_ns > 0 && !buf.is_empty() {
                let d = dev.now_ns() + pause_ns;
                dev.idle_until(d).expect("idle");
            }
        }
        dev.submit(IoRequest {
            tag: tag as u64,
            offset_bytes: offset,
            size_bytes: size,
            mode,
        })
        .expect("submit");
        outstanding += 1;
    }
    while outstanding > 0 {
        buf.clear();
        dev.poll(None, &mut buf).expect("poll");
        outstanding -= buf.len();
        out.extend_from_slice(&buf);
    }
    out
}

pub fn run(
    dev: &mut SimDevice,
    reqs: impl IntoIterator<Item = (u64, u32, Mode)>,
    qd: usize,
) -> Vec<Completion> {
    run_with(dev, reqs, qd, 0)
}

/// uFLIP's random state on `d` (as tests/paper_profiles.rs enforces it):
/// random writes of 4..128 KiB, one capacity's worth, then a quiet pause.
pub fn random_state(d: &mut SimDevice, seed: u64) {
    let size = d.info().size_bytes;
    let mut rng = Rng(seed);
    let mut reqs = Vec::new();
    let mut written = 0;
    while written < size {
        let len = (1 + rng.below(32)) * 4 * KIB;
        let off = rng.below((size - len) / (4 * KIB) + 1) * 4 * KIB;
        reqs.push((off, len as u32, Mode::Write));
        written += len;
    }
    run(d, reqs, 1);
    quiet(d);
}

/// The suite's uFLIP random state (crates/suite/src/state.rs, `RandomFill`)
/// on `d`, at 4 KiB granularity: section 4.1's "random IOs of random size
/// (ranging from 0.5KB to the flash block size, 128 KB) on the whole device"
/// until "the whole flash device" is written "completely". First the writes
/// of [`random_state`] (one capacity's worth at random places), then every
/// stretch they left unwritten, cut into random sizes of 4..128 KiB and
/// written in random order; then a quiet pause.
pub fn complete_random_state(d: &mut SimDevice, seed: u64) {
    let size = d.info().size_bytes;
    let pages = size / (4 * KIB);
    let mut rng = Rng(seed);
    let mut written = vec![false; pages as usize];
    let mut reqs = Vec::new();
    let mut bytes = 0;
    while bytes < size {
        let len = (1 + rng.below(32)) * 4 * KIB;
        let off = rng.below((size - len) / (4 * KIB) + 1) * 4 * KIB;
        reqs.push((off, len as u32, Mode::Write));
        written[(off / (4 * KIB)) as usize..((off + len) / (4 * KIB)) as usize].fill(true);
        bytes += len;
    }
    let mut holes = Vec::new();
    let mut p = 0;
    while p < pages {
        if written[p as usize] {
            p += 1;
            continue;
        }
        let mut end = p;
        while end < pages && !written[end as usize] {
            end += 1;
        }
        while p < end {
            let n = (1 + rng.below(32)).min(end - p);
            holes.push((p * 4 * KIB, (n * 4 * KIB) as u32, Mode::Write));
            p += n;
        }
    }
    for i in (1..holes.len()).rev() {
        holes.swap(i, rng.below(i as u64 + 1) as usize);
    }
    reqs.extend(holes);
    run(d, reqs, 1);
    quiet(d);
}

/// Two seconds of simulated idle time: background work drains.
pub fn quiet(d: &mut SimDevice) {
    let t = d.now_ns() + 2_000_000_000;
    d.idle_until(t).unwrap();
}

/// Sequential fill of the whole device with `io` byte writes at queue depth 32.
pub fn seq_fill(dev: &mut SimDevice, io: u64) {
    let size = dev.info().size_bytes;
    let reqs = (0..size / io).map(|i| (i * io, io as u32, Mode::Write));
    run(dev, reqs, 32);
}

pub fn sequential(
    start: u64,
    io: u64,
    count: u64,
    mode: Mode,
) -> impl Iterator<Item = (u64, u32, Mode)> {
    (0..count).map(move |i| (start + i * io, io as u32, mode))
}

pub fn random(
    seed: u64,
    range: u64,
    io: u64,
    count: u64,
    mode: Mode,
) -> impl Iterator<Item = (u64, u32, Mode)> {
    let mut rng = Rng(seed);
    let slots = range / io;
    (0..count).map(move |_| (rng.below(slots) * io, io as u32, mode))
}

pub fn mean_latency_us(c: &[Completion]) -> f64 {
    c.iter().map(|c| c.latency_ns() as f64).sum::<f64>() / c.len() as f64 / 1000.0
}

/// Bandwidth in MB/s (decimal) of completions of `io` bytes each.
pub fn bandwidth_mb_s(c: &[Completion], io: u64) -> f64 {
    let start = c.iter().map(|c| c.submit_ns).min().unwrap();
    let end = c.iter().map(|c| c.complete_ns).max().unwrap();
    (c.len() as u64 * io) as f64 / ((end - start) as f64 / 1e9) / 1e6
}
