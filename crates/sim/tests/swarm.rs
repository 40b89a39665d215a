//! Swarm testing in the spirit of TigerBeetle's VOPR: one seed chooses a
//! random valid device (a built-in profile as the base, then FTL, GC policy,
//! geometry, cache, over-provisioning, scheduling and variance mechanisms)
//! and a random workload (a mix of writes, reads, trims and pauses, with
//! sequential runs, hot spots and misaligned sizes, at a random queue depth).
//! Every seed runs with `check=on` under global checkers:
//!
//! - the maps agree after every garbage collection (the simulator's own
//!   checker, switched on) and once more at the end;
//! - no acknowledged write is lost and no trimmed page comes back: a shadow
//!   of the last operation on every logical page must match the device's map;
//! - every request completes exactly once, never before it was submitted, and
//!   nothing completes with an error;
//! - no stall: a request that would take longer than the seed's stall bound
//!   fails the seed (`check.stall_ns`);
//! - determinism: the same seed run twice gives identical completion records.
//!
//! `FLASHLAB_SWARM_SEEDS=N` runs N seeds (default 200), starting at
//! `FLASHLAB_SWARM_FIRST` (default 1). A failing seed is printed with the
//! command that reruns exactly it: `FLASHLAB_SWARM_SEED=S`; add
//! `FLASHLAB_SWARM_APPEND=key=value,...` to override its device and find the
//! mechanism at fault.
mod common;

use common::{random_device::device_spec, Rng};
use flashlab_device::{Completion, Device, IoRequest, Mode};
use flashlab_sim::open_device;

#[derive(Clone, Copy, Debug)]
enum Op {
    Io { mode: Mode, offset: u64, size: u64 },
    Pause(u64),
}

/// One randomly chosen workload over a device of `size_bytes`.
fn workload(rng: &mut Rng, size_bytes: u64) -> (Vec<Op>, usize, bool) {
    let count = 300 + rng.below(2500) as usize;
    let queue_depth = [1usize, 2, 4, 8, 32][rng.below(5) as usize];
    let prefill = rng.below(2) == 0;
    // Per-seed weights, so that some seeds are write-only floods and others
    // read-heavy or trim-heavy.
    let (w, r, t, p) = (1 + rng.below(10), rng.below(6), rng.below(3), rng.below(2));
    let hot_bytes = (size_bytes / (2 + rng.below(30))).max(4096) / 512 * 512;
    let mut cursor = 0u64;
    let mut ops = Vec::with_capacity(count);
    for _ in 0..count {
        let pick = rng.below(w + r + t + p);
        if pick >= w + r + t {
            ops.push(Op::Pause(rng.below(20_000_000)));
            continue;
        }
        let mode = if pick < w {
            Mode::Write
        } else if pick < w + r {
            Mode::Read
        } else {
            Mode::Trim
        };
        let size = match rng.below(4) {
            0 => 512 * (1 + rng.below(16)),
            1 => 4096,
            2 => 4096 << rng.below(6),
            _ => 512 * (1 + rng.below(512)),
        };
        let offset = match rng.below(3) {
            // A sequential run, wrapping at the end of the device.
            0 => {
                if cursor + size > size_bytes {
                    cursor = 0;
                }
                let at = cursor;
                cursor += size;
                at
            }
            1 => rng.below(hot_bytes / 512) * 512,
            _ => rng.below(size_bytes / 512) * 512,
        };
        let size = size.min(size_bytes - offset);
        if size > 0 {
            ops.push(Op::Io { mode, offset, size });
        }
    }
    (ops, queue_depth, prefill)
}

/// What a seed observed: its completions in order, for the determinism check.
struct Outcome {
    completions: Vec<Completion>,
    /// Blocks erased (reclaims, merges, wear levelling): a swarm whose seeds
    /// never erase would never test the code that loses data.
    erases: u64,
}

/// Deliberate faults that prove the checkers can fail.
#[derive(Clone, Copy, PartialEq)]
enum Sabotage {
    None,
    /// The shadow records one page the device was never told about, as if
    /// the device had lost a write (or resurrected a trimmed page).
    ForgetPage,
    /// The device runs with another seed than the shadow's, as a device that
    /// read the wall clock or an unseeded generator would.
    OtherDeviceSeed,
}

fn run_seed(seed: u64, sabotage: Sabotage) -> Result<Outcome, String> {
    let mut rng = Rng(seed);
    let mut spec = device_spec(&mut rng);
    // `FLASHLAB_SWARM_APPEND=key=value,...` overrides a failing seed's
    // device, to find the mechanism that fails (the workload is unchanged).
    if let Ok(extra) = std::env::var("FLASHLAB_SWARM_APPEND") {
        spec = format!("{spec},{extra}");
    }
    let device_seed = if sabotage == Sabotage::OtherDeviceSeed {
        seed ^ 0x5eed
    } else {
        seed
    };
    let mut dev = open_device(&spec, device_seed, 32).map_err(|e| format!("{spec}: {e}"))?;
    let size_bytes = dev.info().size_bytes;
    // The shadow is kept per flash page, the unit `is_mapped` answers for.
    let page = dev.geometry().page_bytes;
    let (ops, queue_depth, prefill) = workload(&mut rng, size_bytes);
    let pages = dev.geometry().logical_pages;
    // A profile that starts sequentially filled (`ftl.prefill`, as Chen et
    // al. filled their devices) maps every page before the first request.
    let mut shadow = vec![dev.config().ftl.prefill; pages as usize];
    let mut submitted_at = std::collections::HashMap::new();
    let mut completions = Vec::new();
    let mut buf = Vec::new();
    let mut tag = 0u64;
    let fail = |what: String| Err(format!("{spec}: {what}"));

    let mut requests: Vec<Op> = Vec::new();
    if prefill {
        let step = 256 << 10;
        let mut at = 0;
        while at < size_bytes {
            let size = step.min(size_bytes - at);
            requests.push(Op::Io {
                mode: Mode::Write,
                offset: at,
                size,
            });
            at += size;
        }
    }
    requests.extend(ops);

    let mut drain = |dev: &mut flashlab_sim::SimDevice,
                     outstanding: &mut usize,
                     submitted_at: &mut std::collections::HashMap<u64, u64>,
                     completions: &mut Vec<Completion>|
     -> Result<(), String> {
        buf.clear();
        dev.poll(None, &mut buf).map_err(|e| e.to_string())?;
        for c in &buf {
            let Some(at) = submitted_at.remove(&c.tag) else {
                return Err(format!(
                    "tag {} completed twice or was never submitted",
                    c.tag
                ));
            };
            if c.complete_ns < at || c.submit_ns < at {
                return Err(format!(
                    "tag {} completed at {} before its submission at {at}",
                    c.tag, c.complete_ns
                ));
            }
            if let Some(errno) = c.errno {
                return Err(format!("tag {} failed with errno {errno}", c.tag));
            }
        }
        *outstanding -= buf.len();
        completions.extend_from_slice(&buf);
        Ok(())
    };

    let mut outstanding = 0usize;
    for op in requests {
        while outstanding >= queue_depth {
            if let Err(e) = drain(
                &mut dev,
                &mut outstanding,
                &mut submitted_at,
                &mut completions,
            ) {
                return fail(e);
            }
        }
        match op {
            Op::Pause(ns) => {
                let until = dev.now_ns() + ns;
                if let Err(e) = dev.idle_until(until) {
                    return fail(format!("pause: {e}"));
                }
            }
            Op::Io { mode, offset, size } => {
                submitted_at.insert(tag, dev.now_ns());
                if let Err(e) = dev.submit(IoRequest {
                    tag,
                    offset_bytes: offset,
                    size_bytes: size as u32,
                    mode,
                }) {
                    return fail(format!(
                        "submit tag {tag} ({mode:?} {size} B at {offset}): {e}"
                    ));
                }
                tag += 1;
                outstanding += 1;
                match mode {
                    // A write maps every page it touches, partial ones too.
                    Mode::Write => shadow
                        [(offset / page) as usize..=((offset + size - 1) / page) as usize]
                        .iter_mut()
                        .for_each(|s| *s = true),
                    // A trim unmaps only the pages it covers entirely.
                    Mode::Trim => {
                        let (first, end) = (offset.div_ceil(page), (offset + size) / page);
                        if first < end {
                            shadow[first as usize..end as usize]
                                .iter_mut()
                                .for_each(|s| *s = false);
                        }
                    }
                    Mode::Read => {}
                }
            }
        }
    }
    while outstanding > 0 {
        if let Err(e) = drain(
            &mut dev,
            &mut outstanding,
            &mut submitted_at,
            &mut completions,
        ) {
            return fail(e);
        }
    }
    if !submitted_at.is_empty() {
        return fail(format!("{} requests never completed", submitted_at.len()));
    }
    if let Err(e) = dev.check() {
        return fail(format!("final map check: {e}"));
    }
    if sabotage == Sabotage::ForgetPage {
        shadow[0] = !shadow[0];
    }
    for (lpn, &live) in shadow.iter().enumerate() {
        if dev.is_mapped(lpn as u64) != live {
            return fail(format!(
                "logical page {lpn}: the host {} it last, the device {} it",
                if live {
                    "wrote"
                } else {
                    "trimmed (or never wrote)"
                },
                if live { "lost" } else { "still maps" }
            ));
        }
    }
    let erases = dev.accounting().flash_erases.iter().sum();
    Ok(Outcome {
        completions,
        erases,
    })
}

/// Run one seed twice and compare; the error names the seed and how to rerun it.
fn check_seed(seed: u64) -> Result<u64, String> {
    check_seed_with(seed, Sabotage::None)
}

/// Ok: the blocks the seed erased.
fn check_seed_with(seed: u64, sabotage: Sabotage) -> Result<u64, String> {
    let rerun =
        format!("rerun: FLASHLAB_SWARM_SEED={seed} cargo test -p flashlab-sim --test swarm");
    let first = std::panic::catch_unwind(|| run_seed(seed, Sabotage::None))
        .map_err(|p| format!("seed {seed} panicked: {}; {rerun}", panic_text(&p)))?
        .map_err(|e| format!("seed {seed}: {e}; {rerun}"))?;
    let second =
        run_seed(seed, sabotage).map_err(|e| format!("seed {seed} (second run): {e}; {rerun}"))?;
    if first.completions != second.completions {
        let at = first
            .completions
            .iter()
            .zip(&second.completions)
            .position(|(a, b)| a != b)
            .unwrap_or(first.completions.len().min(second.completions.len()));
        return Err(format!(
            "seed {seed}: not deterministic, the runs differ from completion {at}; {rerun}"
        ));
    }
    Ok(first.erases)
}

fn panic_text(p: &Box<dyn std::any::Any + Send>) -> String {
    p.downcast_ref::<String>()
        .cloned()
        .or_else(|| p.downcast_ref::<&str>().map(|s| s.to_string()))
        .unwrap_or_else(|| "(no message)".into())
}

fn env_u64(name: &str) -> Option<u64> {
    std::env::var(name).ok().and_then(|v| v.parse().ok())
}

#[test]
fn swarm_of_random_devices_and_workloads_keeps_every_invariant() {
    let seeds: Vec<u64> = match env_u64("FLASHLAB_SWARM_SEED") {
        Some(seed) => vec![seed],
        None => {
            let first = env_u64("FLASHLAB_SWARM_FIRST").unwrap_or(1);
            let count = env_u64("FLASHLAB_SWARM_SEEDS").unwrap_or(200);
            (first..first + count).collect()
        }
    };
    let mut failures = Vec::new();
    let mut erasing_seeds = 0;
    for &seed in &seeds {
        match check_seed(seed) {
            Ok(erases) => erasing_seeds += usize::from(erases > 0),
            Err(e) => failures.push(e),
        }
    }
    eprintln!(
        "swarm: {} seeds, {} failed, {erasing_seeds} erased blocks",
        seeds.len(),
        failures.len()
    );
    assert!(
        failures.is_empty(),
        "{} of {} seeds failed:\n{}",
        failures.len(),
        seeds.len(),
        failures.join("\n")
    );
    if seeds.len() >= 50 {
        assert!(
            erasing_seeds * 2 >= seeds.len(),
            "only {erasing_seeds} of {} seeds erased a block: the generator no longer reaches reclamation",
            seeds.len()
        );
    }
}

/// The generator must produce valid profiles: a spec the simulator refuses
/// would silently shrink the swarm to the easy cases.
#[test]
fn every_generated_device_is_a_valid_profile() {
    for seed in 1..=500 {
        let spec = device_spec(&mut Rng(seed));
        if let Err(e) = open_device(&spec, seed, 32) {
            panic!("seed {seed}: generated spec refused: {e}\n{spec}");
        }
    }
}

/// The checkers must be able to fail, and say which seed to rerun.
#[test]
fn a_device_that_loses_a_write_fails_its_seed() {
    let err = check_seed_with(3, Sabotage::ForgetPage).unwrap_err();
    assert!(err.contains("logical page 0"), "{err}");
    assert!(err.contains("FLASHLAB_SWARM_SEED=3"), "{err}");
}

#[test]
fn a_device_that_is_not_deterministic_fails_its_seed() {
    // Seeds whose workload has enough queueing for the device seed to
    // matter (variance, retries): at least one of a handful must differ.
    let caught = (1..=10).any(|seed| {
        check_seed_with(seed, Sabotage::OtherDeviceSeed)
            .is_err_and(|e| e.contains("not deterministic"))
    });
    assert!(caught, "the determinism checker never fired");
}
