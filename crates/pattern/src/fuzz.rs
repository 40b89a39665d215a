//! Entry points for fuzzing what users write: pattern TOML files and fio
//! job files. Used by the cargo-fuzz targets `pattern_toml` and by the
//! stable corpus test (`crates/flashlab/tests/fuzz_inputs.rs`). They must
//! never panic, and every IO a parsed pattern plans must lie inside its
//! device.

use crate::{all_ios, PatternArgs, PatternFile};

/// The device the fuzzed patterns are resolved against.
const DEVICE_BYTES: u64 = 64 << 20;

/// IOs generated per run: enough to cover the shapes (locality, shifts,
/// partitions, mixes) without letting a fuzzed IOCount take unbounded time.
const IOS_PER_RUN: usize = 512;

/// Parses `data` as a pattern file and plans each run's first IOs. Returns
/// the IOs planned.
pub fn pattern_file(data: &[u8]) -> usize {
    let text = String::from_utf8_lossy(data);
    match PatternFile::parse(&text, "fuzz") {
        Ok(file) => file.runs().iter().map(plan).sum(),
        Err(_) => 0,
    }
}

/// Parses `data` as a fio job file and plans each job's first IOs.
pub fn fio_job_file(data: &[u8]) -> usize {
    let text = String::from_utf8_lossy(data);
    match crate::fio::parse_job_file(&text) {
        Ok(jobs) => jobs.iter().map(|job| plan(&job.args)).sum(),
        Err(_) => 0,
    }
}

fn plan(args: &PatternArgs) -> usize {
    // The checks every front end makes before it runs a spec.
    let Ok(spec) = args.resolve(DEVICE_BYTES) else {
        return 0;
    };
    if spec
        .check_against_device("fuzz", DEVICE_BYTES, 512)
        .is_err()
    {
        return 0;
    }
    let mut planned = 0;
    for io in all_ios(&spec).take(IOS_PER_RUN) {
        assert!(
            io.size_bytes > 0
                && io
                    .offset_bytes
                    .checked_add(io.size_bytes)
                    .is_some_and(|end| end <= DEVICE_BYTES),
            "planned IO {} B at {} outside the {DEVICE_BYTES} B device",
            io.size_bytes,
            io.offset_bytes
        );
        planned += 1;
    }
    planned
}
