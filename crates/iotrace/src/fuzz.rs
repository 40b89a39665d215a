//! Entry points for fuzzing what the tracer reads from the kernel: raw ring
//! buffer pages (`raw`) and trace_pipe text lines (`pipe`, `physical`,
//! `tracefs`'s stats). The cargo-fuzz targets in `fuzz/` and the stable
//! corpus test (`crates/flashlab/tests/fuzz_inputs.rs`) call these, so both
//! exercise exactly the same code. Neither may panic on any input.

use std::collections::VecDeque;

use crate::raw::Layout;

/// Decodes `data` as one raw page with a fixed layout (three event kinds:
/// a syscall entry and exit and a block issue). Returns the events decoded.
pub fn raw_page(data: &[u8]) -> usize {
    let mut out = VecDeque::new();
    Layout::fixture().page(data, &mut out);
    // Times within a page only grow (deltas are unsigned), unless an
    // absolute time stamp resets them; either way decoding must not wrap
    // into a panic, which the call above already proved.
    out.len()
}

/// Parses every line of `data` as trace_pipe text (block and syscall
/// events), and the whole of it as a `per_cpu/cpuN/stats` file. Returns
/// the lines that parsed as events.
pub fn pipe_text(data: &[u8]) -> usize {
    let text = String::from_utf8_lossy(data);
    let mut events = 0;
    for line in text.lines() {
        if let Some(ev) = crate::pipe::parse_event(line) {
            let _ = crate::event::from_text(&ev);
            let _ = crate::physical::parse_block(ev.body, true);
            events += 1;
        }
        let _ = crate::physical::parse_rwbs(line);
        let _ = crate::pipe::parse_time(line);
    }
    let _ = crate::tracefs::parse_lost(&text);
    events
}

/// A valid raw page for the fixture layout: a syscall exit, a time
/// extension, a block issue and a syscall entry. The corpus test mutates it.
pub fn sample_raw_page() -> Vec<u8> {
    let mut data = Vec::new();
    let header = |delta: u32, type_len: u32| ((delta << 5) | type_len).to_le_bytes();
    // A syscall exit: 16 bytes (type_len 4 words).
    data.extend_from_slice(&header(5, 4));
    data.extend_from_slice(&[7, 0, 0, 0]);
    data.extend_from_slice(&100u32.to_le_bytes());
    data.extend_from_slice(&8192i64.to_le_bytes());
    // A time extension (type 30).
    data.extend_from_slice(&header(2, 30));
    data.extend_from_slice(&3u32.to_le_bytes());
    // A block issue: 36 bytes (9 words).
    data.extend_from_slice(&header(1, 9));
    let mut block = vec![9, 0, 0, 0];
    block.extend_from_slice(&101u32.to_le_bytes());
    block.extend_from_slice(&2048u64.to_le_bytes());
    block.extend_from_slice(&8u32.to_le_bytes());
    block.extend_from_slice(&4096u32.to_le_bytes());
    block.extend_from_slice(b"WS\0\0\0\0\0\0\0\0");
    block.resize(36, 0);
    data.extend_from_slice(&block);
    // A syscall entry: 56 bytes (14 words).
    data.extend_from_slice(&header(1, 14));
    let mut enter = vec![8, 0, 0, 0];
    enter.extend_from_slice(&102u32.to_le_bytes());
    for arg in [3u64, 0x7f00, 4096, 8192, 0, 0] {
        enter.extend_from_slice(&arg.to_le_bytes());
    }
    data.extend_from_slice(&enter);
    let mut page = vec![0u8; 4096];
    page[..8].copy_from_slice(&1_000u64.to_le_bytes());
    page[8..16].copy_from_slice(&(data.len() as u64).to_le_bytes());
    page[16..16 + data.len()].copy_from_slice(&data);
    page
}

/// Sample trace_pipe lines, one of each kind the tracer reads.
pub const SAMPLE_PIPE_TEXT: &str = "\
postgres-1234 [001] ..... 12345.678901: block_rq_issue: 7,0 WS 4096 () 2048 + 8 [postgres]
postgres-1234 [001] ..... 12345.678950: block_rq_complete: 7,0 WS () 2048 + 8 [0]
postgres-1234 [000] ..... 12345.679001: sys_pwrite64(fd: 3, buf: 7f00, count: 2000, pos: 4000)
postgres-1234 [000] ..... 12345.679101: sys_pwrite64 -> 0x2000
postgres-1234 [000] ..... 12345.679201: sys_fdatasync(fd: 3)
CPU:0
entries: 12
overrun: 0
commit overrun: 0
dropped events: 3
";

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_samples_decode_to_their_events() {
        assert_eq!(raw_page(&sample_raw_page()), 3);
        assert!(pipe_text(SAMPLE_PIPE_TEXT.as_bytes()) >= 5);
    }
}
