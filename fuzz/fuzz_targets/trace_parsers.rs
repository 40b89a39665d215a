//! `flashlab_trace::fuzz::every_format`: see its documentation for what it checks beyond "no panic".
//! The stable corpus test (crates/flashlab/tests/fuzz_inputs.rs) runs the
//! same entry point on mutations of its seed corpus.
#![no_main]
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let _ = flashlab_trace::fuzz::every_format(data);
});
