//! The pure parsers: option headers, INFO/GO data, request headers and their checks.
#![no_main]
use flashlab_nbd::proto;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    if data.len() >= 16 {
        let _ = proto::parse_option_header(data[..16].try_into().unwrap());
    }
    let _ = proto::parse_info_request(data);
    if data.len() >= proto::REQUEST_BYTES {
        if let Ok(r) = proto::parse_request(data[..proto::REQUEST_BYTES].try_into().unwrap()) {
            let size = data.get(28).map_or(1 << 20, |&b| (b as u64) << 20);
            let _ = proto::check_request(&r, size);
        }
    }
});
