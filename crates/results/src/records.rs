//! Per-IO records: a compact, fixed-width, little-endian binary file that a
//! run appends to as it goes.
//!
//! Layout of `records.bin` (schema 1):
//!
//! | bytes | field |
//! |---|---|
//! | 0..8 | magic `FLREC\0\0\x01` |
//! | 8..10 | u16 header size in bytes (32) |
//! | 10..12 | u16 record size in bytes (40) |
//! | 12..32 | reserved, zero |
//!
//! then one 40-byte record per IO, in completion order:
//!
//! | offset | type | field |
//! |---|---|---|
//! | 0 | u64 | `index` (0-based IO number within its stream) |
//! | 8 | u64 | `submit_ns` (device clock) |
//! | 16 | u64 | `complete_ns` |
//! | 24 | u64 | `offset_bytes` |
//! | 32 | u32 | `size_bytes` |
//! | 36 | u16 | `stream` |
//! | 38 | u8 | `mode` (0 read, 1 write, 2 trim) |
//! | 39 | u8 | `flags` (bit 0: warm-up IO excluded by IOIgnore; bit 1: the IO failed) |
//!
//! Fixed width keeps appends cheap and lets numpy read the file in one call
//! (`np.fromfile(path, dtype, offset=32)`, see docs/results-format.md). A
//! run killed mid-write leaves at most one partial record at the end, which
//! the reader drops.

use std::fs::File;
use std::io::{self, BufWriter, Read, Write};
use std::path::Path;

use flashlab_device::Mode;

pub const MAGIC: [u8; 8] = *b"FLREC\0\0\x01";
pub const HEADER_BYTES: usize = 32;
pub const RECORD_BYTES: usize = 40;

pub const FLAG_WARMUP: u8 = 1;
pub const FLAG_ERROR: u8 = 2;

/// One completed IO.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct IoRecord {
    pub index: u64,
    pub stream: u16,
    pub mode: Mode,
    pub offset_bytes: u64,
    pub size_bytes: u32,
    pub submit_ns: u64,
    pub complete_ns: u64,
    pub flags: u8,
}

impl IoRecord {
    pub fn latency_ns(&self) -> u64 {
        self.complete_ns.saturating_sub(self.submit_ns)
    }

    pub fn is_warmup(&self) -> bool {
        self.flags & FLAG_WARMUP != 0
    }

    pub fn is_error(&self) -> bool {
        self.flags & FLAG_ERROR != 0
    }

    pub fn encode(&self) -> [u8; RECORD_BYTES] {
        let mut b = [0u8; RECORD_BYTES];
        b[0..8].copy_from_slice(&self.index.to_le_bytes());
        b[8..16].copy_from_slice(&self.submit_ns.to_le_bytes());
        b[16..24].copy_from_slice(&self.complete_ns.to_le_bytes());
        b[24..32].copy_from_slice(&self.offset_bytes.to_le_bytes());
        b[32..36].copy_from_slice(&self.size_bytes.to_le_bytes());
        b[36..38].copy_from_slice(&self.stream.to_le_bytes());
        b[38] = self.mode.code();
        b[39] = self.flags;
        b
    }

    pub fn decode(b: &[u8; RECORD_BYTES]) -> Option<IoRecord> {
        let u64_at = |i: usize| u64::from_le_bytes(b[i..i + 8].try_into().expect("8 bytes"));
        Some(IoRecord {
            index: u64_at(0),
            submit_ns: u64_at(8),
            complete_ns: u64_at(16),
            offset_bytes: u64_at(24),
            size_bytes: u32::from_le_bytes(b[32..36].try_into().expect("4 bytes")),
            stream: u16::from_le_bytes(b[36..38].try_into().expect("2 bytes")),
            mode: Mode::from_code(b[38])?,
            flags: b[39],
        })
    }
}

fn header() -> [u8; HEADER_BYTES] {
    let mut h = [0u8; HEADER_BYTES];
    h[0..8].copy_from_slice(&MAGIC);
    h[8..10].copy_from_slice(&(HEADER_BYTES as u16).to_le_bytes());
    h[10..12].copy_from_slice(&(RECORD_BYTES as u16).to_le_bytes());
    h
}

/// Appends records to a file, flushing to the OS every `FLUSH_EVERY`
/// records so that an interrupted run loses at most that many.
pub struct RecordWriter {
    out: BufWriter<File>,
    since_flush: usize,
    written: u64,
}

const FLUSH_EVERY: usize = 4096;

impl RecordWriter {
    pub fn create(path: &Path) -> io::Result<RecordWriter> {
        let file = File::create(path)?;
        let mut out = BufWriter::with_capacity(RECORD_BYTES * FLUSH_EVERY, file);
        out.write_all(&header())?;
        Ok(RecordWriter {
            out,
            since_flush: 0,
            written: 0,
        })
    }

    pub fn append(&mut self, r: &IoRecord) -> io::Result<()> {
        self.out.write_all(&r.encode())?;
        self.written += 1;
        self.since_flush += 1;
        if self.since_flush >= FLUSH_EVERY {
            self.out.flush()?;
            self.since_flush = 0;
        }
        Ok(())
    }

    pub fn written(&self) -> u64 {
        self.written
    }

    /// Flushes to the OS: the records survive the process, like everything
    /// in a results directory (see `dir`).
    pub fn finish(mut self) -> io::Result<()> {
        self.out.flush()
    }
}

/// Reads every whole record of a records file.
pub fn read_records(path: &Path) -> io::Result<Vec<IoRecord>> {
    let mut bytes = Vec::new();
    File::open(path)?.read_to_end(&mut bytes)?;
    decode_all(&bytes).map_err(|e| {
        io::Error::new(
            io::ErrorKind::InvalidData,
            format!("{}: {e}", path.display()),
        )
    })
}

pub fn decode_all(bytes: &[u8]) -> Result<Vec<IoRecord>, String> {
    if bytes.len() < HEADER_BYTES || bytes[0..8] != MAGIC {
        return Err("not a flashlab records file (bad magic)".into());
    }
    let header_bytes = u16::from_le_bytes([bytes[8], bytes[9]]) as usize;
    let record_bytes = u16::from_le_bytes([bytes[10], bytes[11]]) as usize;
    if record_bytes != RECORD_BYTES || header_bytes != HEADER_BYTES {
        return Err(format!(
            "records file layout {header_bytes}/{record_bytes} is not schema 1 (32/40)"
        ));
    }
    bytes[HEADER_BYTES..]
        .chunks_exact(RECORD_BYTES)
        .map(|c| {
            IoRecord::decode(c.try_into().expect("chunk size"))
                .ok_or_else(|| "bad mode code".to_string())
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trip_and_truncated_tail() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("records.bin");
        let recs: Vec<IoRecord> = (0..10)
            .map(|i| IoRecord {
                index: i,
                stream: (i % 3) as u16,
                mode: if i % 2 == 0 { Mode::Read } else { Mode::Write },
                offset_bytes: i * 4096,
                size_bytes: 4096,
                submit_ns: i * 1000,
                complete_ns: i * 1000 + 77,
                flags: if i < 2 { FLAG_WARMUP } else { 0 },
            })
            .collect();
        let mut w = RecordWriter::create(&path).unwrap();
        for r in &recs {
            w.append(r).unwrap();
        }
        w.finish().unwrap();
        assert_eq!(read_records(&path).unwrap(), recs);
        // A kill mid-append leaves a partial record: it is dropped, the rest survive.
        let mut bytes = std::fs::read(&path).unwrap();
        bytes.truncate(bytes.len() - 7);
        assert_eq!(decode_all(&bytes).unwrap(), recs[..9].to_vec());
    }
}
