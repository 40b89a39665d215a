//! flashlab's deterministic SSD simulator, in simulated time.
//!
//! `flashlab run --device sim:PROFILE ...` runs any IO pattern against a
//! [`SimDevice`], which implements the same [`flashlab_device::Device`]
//! interface as real files and block devices; latencies are simulated
//! nanoseconds and pauses advance simulated time (so idle-time work happens).
//!
//! # Model
//!
//! - **Geometry** ([`geometry`]): channels x chips x dies x planes x blocks x
//!   pages; the logical capacity and the over-provisioning `op` (physical =
//!   logical x (1 + op)) give the number of blocks. Dies are the unit of
//!   parallelism; die `u` is on channel `u % channels`.
//! - **NAND timing** ([`nand`]): page read, program, block erase, command
//!   cycles, bus transfer per byte, copy-back; SLC/MLC/TLC presets.
//! - **Resources** ([`resources`]): every die and every channel bus has a
//!   busy-until time; each flash operation is placed analytically at the
//!   earliest time its resources are free, so a request's pages proceed in
//!   parallel where the mapping puts them on different dies and channels. The
//!   host link is one more resource; the host interface adds a per-command
//!   overhead and has a queue depth.
//! - **FTL** ([`ftl`]): one trait, one module per FTL. [`ftl::page`] is the
//!   page-mapped FTL: log-structured allocation striped round-robin over dies,
//!   per-die garbage collection (foreground below a low watermark, idle-time
//!   background up to a high watermark, a reserve only GC may use), victim
//!   policies in [`ftl::gc`] (greedy, cost-benefit, FIFO), TRIM, erase-count-aware
//!   allocation and static wear levelling.
//! - **Cache** ([`cache`]): a DRAM write-back cache with background flush.
//! - **Read-ahead** ([`readahead`]): prefetch after a detected sequential stream.
//! - **Accounting** ([`accounting`]): flash reads, programs and erases by cause
//!   (host, GC, wear levelling, mapping), write amplification, latency, flash
//!   chip time per host request by component (Budilovsky et al.), erase-count
//!   distribution, cache and read-ahead hits, GC invocations.
//! - **Checker** ([`ftl::page::checker`]): full map/counter verification, after every GC in
//!   `check=on` mode.
//! - **Theory** ([`theory`]): Desnoyers' analytic greedy write amplification.
//!
//! - **Errors** ([`error`]): [`SimError`] (a bad configuration, a stall, a
//!   checkpoint that cannot be made or restored, a broken invariant), with
//!   [`ConfigError`] and [`CheckpointError`] for the details; each `Display`
//!   is one line naming the problem and the fix.
//!
//! Module dependencies form no cycle: `config` and `geometry` know nothing of
//! the FTLs (whole-profile checks are in `validate`, above them), the FTLs and
//! the device serialise checkpoints through the leaf module `codec`, and the
//! GC victim policies and the checker live under `ftl` beside what they read.
//!
//! Profiles ([`profiles`], files in `crates/sim/profiles/`) are TOML documents;
//! a device spec is a profile name or a TOML path, then `,key=value` overrides.
//!
//! # Invariants
//!
//! - The simulator never reads the wall clock, spawns threads or touches the
//!   file system in benchmark mode; the only file access is loading a TOML
//!   profile in [`open_device`], before the device exists. All time is
//!   simulated nanoseconds owned by the device.
//! - Everything is derived from the configuration and the one seed: same
//!   config + seed => identical completions (and so byte-identical per-IO
//!   records). No hash map is iterated, no randomly seeded hasher is used, and
//!   timing is integer nanoseconds. The only random draws are the service-time
//!   variance of `[nand]` (off by default; [`resources`]): one stream of
//!   `flashlab_pattern::rng` per die, seeded from the device seed; any
//!   future randomness must come from the seed too.
//! - Dense debug assertions guard the maps and counters; `check=on` runs the
//!   full checker (forward and reverse maps agree, valid-page counts equal live
//!   logical pages, free pools and GC buckets consistent) after every GC.
//! - A stall (work queued and no progress possible: GC cannot reclaim space, or
//!   a request would exceed `check.stall_ns` of simulated latency) returns
//!   `DeviceError::Invariant` and latches the device into that error; it never hangs.
//!   Every loop in the simulator is bounded.
//! - Benchmark mode stores no data: the FTL keeps maps only. (A later device
//!   mode can attach a data store keyed by physical page.)

pub mod accounting;
pub mod breakdown;
pub mod cache;
mod codec;
pub mod config;
pub mod device;
pub mod error;
pub mod ftl;
#[doc(hidden)]
pub mod fuzz;
pub mod geometry;
mod mem;
pub mod nand;
pub mod profiles;
pub mod readahead;
pub mod reorg;
pub mod resources;
pub mod theory;
pub mod timeline;
mod validate;

pub use accounting::{Accounting, Cause, EraseSummary, LatencyStat};
pub use config::{ByteSize, GcPolicy, SimConfig};
pub use device::SimDevice;
pub use error::{CheckpointError, ConfigError, SimError};
pub use flashlab_device::Nanos;
pub use geometry::Geometry;

/// One built-in profile, for `flashlab sim profiles`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ProfileSummary {
    pub name: &'static str,
    /// One line.
    pub description: String,
}

/// The built-in profiles.
pub fn profiles() -> Vec<ProfileSummary> {
    profiles::BUILTIN
        .iter()
        .map(|(name, _)| ProfileSummary {
            name,
            description: profiles::builtin(name)
                .map(|c| c.description)
                .unwrap_or_default(),
        })
        .collect()
}

/// A built-in profile as TOML (with its comments), for users to copy and edit.
pub fn profile_toml(name: &str) -> Result<String, ConfigError> {
    profiles::BUILTIN
        .iter()
        .find(|(n, _)| *n == name)
        .map(|(_, text)| text.to_string())
        .ok_or_else(|| unknown_profile(name))
}

/// Resolve a device spec (what follows `sim:`) into a validated configuration.
pub fn resolve_spec(spec: &str) -> Result<SimConfig, ConfigError> {
    let mut parts = spec.split(',');
    let head = parts.next().unwrap_or("").trim();
    if head.is_empty() {
        return Err(ConfigError::EmptySpec);
    }
    let mut cfg = match profiles::builtin(head) {
        Some(c) => c,
        None if head.ends_with(".toml") || head.contains('/') => {
            let text = read_profile(head)?;
            SimConfig::from_toml(&text, head)?
        }
        None => return Err(unknown_profile(head)),
    };
    for kv in parts {
        let kv = kv.trim();
        if kv.is_empty() {
            continue;
        }
        let (k, v) = kv
            .split_once('=')
            .ok_or_else(|| ConfigError::OverrideWithoutValue {
                text: kv.to_string(),
            })?;
        cfg.apply_override(k, v)?;
    }
    cfg.validate()?;
    Ok(cfg)
}

/// Open a simulated device. `spec` is what follows `sim:` in `--device sim:SPEC`:
/// a built-in profile name or a path to a TOML profile, optionally followed by
/// comma-separated overrides, e.g. `ssd-m`, `ssd-m,capacity=4GiB,op=0.15,cache=off,check=on`,
/// `./my.toml`. Errors are one line naming the problem and the fix.
pub fn open_device(spec: &str, seed: u64, max_outstanding: usize) -> Result<SimDevice, SimError> {
    let cfg = resolve_spec(spec)?;
    SimDevice::new(cfg, format!("sim:{spec}"), seed, max_outstanding)
}

/// A profile is a page of TOML: anything over 1 MiB (`/dev/zero`, a disk
/// image) is refused before it can fill memory.
const MAX_PROFILE_BYTES: u64 = 1 << 20;

fn read_profile(path: &str) -> Result<String, ConfigError> {
    use std::io::Read;
    let mut bytes = Vec::new();
    std::fs::File::open(path)
        .and_then(|f| f.take(MAX_PROFILE_BYTES + 1).read_to_end(&mut bytes))
        .map_err(|e| ConfigError::UnreadableProfile {
            path: path.to_string(),
            reason: e.to_string(),
        })?;
    if bytes.len() as u64 > MAX_PROFILE_BYTES {
        return Err(ConfigError::ProfileTooLarge {
            path: path.to_string(),
        });
    }
    String::from_utf8(bytes).map_err(|_| ConfigError::ProfileNotUtf8 {
        path: path.to_string(),
    })
}

fn unknown_profile(name: &str) -> ConfigError {
    let names: Vec<&str> = profiles::BUILTIN.iter().map(|(n, _)| *n).collect();
    ConfigError::UnknownProfile {
        name: name.to_string(),
        suggestion: flashlab_pattern::file::closest(name, names.iter()).map(str::to_string),
    }
}
