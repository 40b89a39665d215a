//! Entry point for fuzzing trace files, used by the cargo-fuzz target
//! `trace_parsers` and by the stable corpus test
//! (`crates/flashlab/tests/fuzz_inputs.rs`). It reads the bytes as the CLI
//! reads a trace file (with its line and size limits), parses them in every
//! format, and fits what parses to a small device. It must never panic, and
//! whatever parses must keep the invariants replay relies on.

use crate::{fit_to_device, parse, read_text_from, Fit, Format, TraceOp, MAX_REQUEST_BYTES};

const FORMATS: [Format; 6] = [
    Format::Flashlab,
    Format::Blkparse,
    Format::Fio,
    Format::Mqsim,
    Format::Disksim,
    Format::Msr,
];

/// Returns the requests parsed over all formats.
pub fn every_format(data: &[u8]) -> usize {
    let Ok(text) = read_text_from(data, "fuzz") else {
        return 0;
    };
    let lines = text.lines().count();
    let mut total = 0;
    for format in FORMATS {
        let Ok(ios) = parse(&text, format, "fuzz") else {
            continue;
        };
        // One request per line at most: a parser never invents requests.
        assert!(
            ios.len() <= lines,
            "{format}: {} requests from {lines} lines",
            ios.len()
        );
        assert_eq!(
            ios[0].time_ns, 0,
            "{format}: times are relative to the first"
        );
        assert!(
            ios.windows(2).all(|w| w[0].time_ns <= w[1].time_ns),
            "{format}: requests are sorted by time"
        );
        assert!(
            ios.iter().all(|io| io.size_bytes <= MAX_REQUEST_BYTES
                && io.offset_bytes.checked_add(io.size_bytes).is_some()),
            "{format}: sizes fit a record and ends fit 64 bits"
        );
        total += ios.len();
        for fit in [Fit::Error, Fit::Wrap, Fit::Scale] {
            let mut fitted = ios.clone();
            let device_bytes = 1 << 20;
            if fit_to_device(&mut fitted, device_bytes, 512, fit).is_ok() {
                assert!(
                    fitted.iter().all(|io| io.op == TraceOp::Flush
                        || io.offset_bytes + io.size_bytes <= device_bytes),
                    "{format}: a fitted request ends past the device ({fit:?})"
                );
            }
        }
    }
    total
}
