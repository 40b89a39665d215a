//! A whole NBD session (handshake and transmission) with the fuzzer's bytes
//! as everything the client sends, against an in-memory export.
#![no_main]
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    flashlab_nbd::fuzz_session(data);
});
