//! Entry point for fuzzing simulator profiles (`--device sim:FILE.toml`),
//! used by the cargo-fuzz target `sim_profile` and by the stable corpus test
//! (`crates/flashlab/tests/fuzz_inputs.rs`). A profile either is refused
//! with a `ConfigError` or opens a device that serves requests (or reports a
//! stall as an error: a profile may describe a very slow device); it never
//! panics, every request completes, and the maps stay consistent.

use flashlab_device::{Device, IoRequest, Mode};

use crate::{Geometry, SimConfig, SimDevice};

/// Devices above this many flash pages are parsed and validated but not
/// driven: the fuzzer's time goes into many small devices, not one large
/// one. (A limit of the fuzz run, not of the simulator.)
const MAX_DRIVEN_PAGES: u64 = 1 << 16;

/// Returns whether the profile opened a device.
pub fn profile(data: &[u8]) -> bool {
    let text = String::from_utf8_lossy(data);
    let Ok(mut cfg) = SimConfig::from_toml(&text, "fuzz") else {
        return false;
    };
    if cfg.validate().is_err() {
        return false;
    }
    let Ok(geo) = Geometry::derive(&cfg) else {
        return false;
    };
    if geo.physical_pages > MAX_DRIVEN_PAGES {
        return false;
    }
    cfg.check.enabled = true;
    let Ok(mut dev) = SimDevice::new(cfg, "sim:fuzz".into(), 1, 4) else {
        return false;
    };
    let size_bytes = dev.info().size_bytes;
    let sector = 512u64;
    let mut done = Vec::new();
    let mut outstanding = 0usize;
    for i in 0..96u64 {
        let mode = match i % 6 {
            0..=2 => Mode::Write,
            3 | 4 => Mode::Read,
            _ => Mode::Trim,
        };
        let size = (sector << (i % 5)).min(size_bytes);
        let slots = (size_bytes - size) / sector + 1;
        let offset = (i.wrapping_mul(0x9e37_79b9) % slots) * sector;
        if outstanding == 4 {
            done.clear();
            if dev.poll(None, &mut done).is_err() {
                return true;
            }
            assert!(
                !done.is_empty(),
                "poll returned nothing with 4 requests outstanding"
            );
            outstanding -= done.len();
        }
        let req = IoRequest {
            tag: i,
            offset_bytes: offset,
            size_bytes: size as u32,
            mode,
        };
        if dev.submit(req).is_err() {
            return true;
        }
        outstanding += 1;
    }
    while outstanding > 0 {
        done.clear();
        if dev.poll(None, &mut done).is_err() {
            return true;
        }
        assert!(
            !done.is_empty(),
            "poll returned nothing with {outstanding} requests outstanding"
        );
        outstanding -= done.len();
    }
    if let Err(e) = dev.check() {
        panic!("a valid profile broke its maps: {e}");
    }
    true
}
