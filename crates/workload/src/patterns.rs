//! Pattern runs resolved against a device: the one place where a list of
//! runs as users write them becomes checked `PatternSpec`s (for `flashlab
//! run`, a sweep point and a replicated results directory alike).

use std::path::Path;

use flashlab_device::DeviceInfo;
use flashlab_pattern::{PatternArgs, PatternSpec};

use crate::error::WorkloadError;
use crate::SIM_MAX_OUTSTANDING;

/// Resolves every run of `list` on a device (`info`, logical blocks of `lbs`
/// bytes). A run without a seed takes `seed` when given (a sweep point's:
/// it drives every random choice), else the pattern default. Two runs of one
/// name are refused: each names its records.
pub fn resolve_patterns(
    list: &[PatternArgs],
    seed: Option<u64>,
    info: &DeviceInfo,
    lbs: u64,
) -> Result<Vec<PatternSpec>, WorkloadError> {
    let mut specs: Vec<PatternSpec> = Vec::new();
    for (i, a) in list.iter().enumerate() {
        let where_ = if list.len() > 1 {
            format!("run {}: ", i + 1)
        } else {
            String::new()
        };
        let refused = |e: String| WorkloadError::Input(format!("{where_}{e}"));
        let spec = match (a.seed, seed) {
            (None, Some(seed)) => PatternArgs {
                seed: Some(seed),
                ..a.clone()
            }
            .resolve(info.size_bytes),
            _ => a.resolve(info.size_bytes),
        }
        .map_err(|error| WorkloadError::Pattern {
            run: (list.len() > 1).then_some(i + 1),
            error,
        })?;
        check_spec(&spec, info, lbs).map_err(refused)?;
        if specs.iter().any(|s| s.name == spec.name) {
            return Err(refused(format!(
                "two runs are named '{}'; give each run its own name",
                spec.name
            )));
        }
        specs.push(spec);
    }
    Ok(specs)
}

/// The checks of `list` that need no device (IOSize alignment, counts of
/// 0, a ratio without a mix, ...), so that a front end can name a refused
/// parameter its own way before it opens a device: each run is resolved
/// against a nominal 1 PiB device, which no size check can refuse.
pub fn check_patterns(list: &[PatternArgs]) -> Result<(), WorkloadError> {
    const NOMINAL_DEVICE_BYTES: u64 = 1 << 50;
    for (i, a) in list.iter().enumerate() {
        a.resolve(NOMINAL_DEVICE_BYTES)
            .map_err(|error| WorkloadError::Pattern {
                run: (list.len() > 1).then_some(i + 1),
                error,
            })?;
    }
    Ok(())
}

/// A resolved run fits the device and the most IOs any target is opened for.
fn check_spec(spec: &PatternSpec, info: &DeviceInfo, lbs: u64) -> Result<(), String> {
    spec.check_against_device(&info.name, info.size_bytes, lbs)?;
    if spec.max_outstanding() > SIM_MAX_OUTSTANDING {
        return Err(format!(
            "too many outstanding IOs ({}; at most {SIM_MAX_OUTSTANDING})",
            spec.max_outstanding()
        ));
    }
    Ok(())
}

/// The pattern runs of a results directory, exactly as they were resolved
/// there (only those named in `names`, when given, in manifest order).
pub fn replicated_specs(
    dir: &Path,
    names: Option<&[String]>,
    info: &DeviceInfo,
) -> Result<Vec<PatternSpec>, WorkloadError> {
    let (manifest, _) = flashlab_results::read_manifest(dir).map_err(|e| {
            WorkloadError::Input(format!(
                "cannot read results directory {}: {e}; replicate needs a directory written by flashlab run",
                dir.display()
            ))
        })?;
    let specs: Vec<PatternSpec> = manifest
        .runs
        .iter()
        .filter(|r| match names {
            Some(n) => n.contains(&r.name),
            None => true,
        })
        .filter_map(|r| r.workload.pattern().cloned())
        .collect();
    if let Some(names) = names {
        if let Some(missing) = names.iter().find(|n| !specs.iter().any(|s| &s.name == *n)) {
            return Err(WorkloadError::Input(format!(
                "{} has no pattern run named '{missing}'; replicate_runs must name runs of its manifest",
                dir.display()
            )));
        }
    }
    if specs.is_empty() {
        return Err(WorkloadError::Input(format!(
            "{} has no pattern runs to replicate",
            dir.display()
        )));
    }
    for s in &specs {
        check_spec(s, info, info.logical_block_bytes as u64).map_err(|e| {
            WorkloadError::Input(format!(
                "replicating run {} of {}: {e}; give the simulated device at least the measured device's capacity",
                s.name,
                dir.display()
            ))
        })?;
    }
    Ok(specs)
}
