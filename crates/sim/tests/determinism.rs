//! Same config + seed => identical completions and accounting.
mod common;

use common::*;
use flashlab_device::{Completion, Device, IoRequest, Mode};
use flashlab_sim::open_device;

/// A mixed workload: random reads, writes (some sub-page), trims, pauses, QD 8.
fn workload(spec: &str, seed: u64) -> (Vec<Completion>, String) {
    let mut d = open_device(spec, seed, 8).unwrap();
    let size = d.info().size_bytes;
    let mut rng = Rng(seed);
    let mut out = Vec::new();
    let mut buf = Vec::new();
    let mut outstanding = 0;
    for tag in 0..20_000u64 {
        while outstanding >= 8 {
            buf.clear();
            d.poll(None, &mut buf).unwrap();
            outstanding -= buf.len();
            out.extend_from_slice(&buf);
        }
        let sectors = 1 + rng.below(64);
        let size_bytes = sectors * 512;
        let offset = rng.below((size - size_bytes) / 512) * 512;
        let mode = match rng.below(10) {
            0..=3 => Mode::Read,
            4..=8 => Mode::Write,
            _ => Mode::Trim,
        };
        d.submit(IoRequest {
            tag,
            offset_bytes: offset,
            size_bytes: size_bytes as u32,
            mode,
        })
        .unwrap();
        outstanding += 1;
        if rng.below(500) == 0 {
            let t = d.now_ns() + rng.below(50_000_000);
            d.idle_until(t).unwrap();
        }
    }
    while outstanding > 0 {
        buf.clear();
        d.poll(None, &mut buf).unwrap();
        outstanding -= buf.len();
        out.extend_from_slice(&buf);
    }
    (out, d.stats_json().unwrap().to_string())
}

#[test]
fn same_seed_same_completions() {
    for spec in [
        "ssd-m,capacity=512MiB,op=0.15",
        "ssd-h,capacity=128MiB",
        "nvme-tlc,capacity=2GiB",
    ] {
        let (a, sa) = workload(spec, 1234);
        let (b, sb) = workload(spec, 1234);
        assert_eq!(a.len(), 20_000);
        assert_eq!(a, b, "{spec}: completions differ between identical runs");
        assert_eq!(sa, sb, "{spec}: accounting differs between identical runs");
        let (c, _) = workload(spec, 99);
        assert_ne!(a, c, "{spec}: a different seed should give a different run");
    }
}
