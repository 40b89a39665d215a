//! The checkpoint byte format's primitives: a little-endian encoder, a
//! bounds-checked decoder and a checksum. A leaf module, so the FTLs and the
//! device both serialise through it without depending on each other.

use crate::error::CheckpointError;

/// Little-endian encoder for checkpoints.
#[derive(Default)]
pub struct Enc {
    pub buf: Vec<u8>,
}

impl Enc {
    pub fn u8(&mut self, v: u8) {
        self.buf.push(v);
    }
    pub fn u32(&mut self, v: u32) {
        self.buf.extend_from_slice(&v.to_le_bytes());
    }
    pub fn u64(&mut self, v: u64) {
        self.buf.extend_from_slice(&v.to_le_bytes());
    }
    pub fn bytes(&mut self, v: &[u8]) {
        self.u64(v.len() as u64);
        self.buf.extend_from_slice(v);
    }
    pub fn vec_u16(&mut self, v: &[u16]) {
        self.u64(v.len() as u64);
        self.buf.reserve(v.len() * 2);
        for x in v {
            self.buf.extend_from_slice(&x.to_le_bytes());
        }
    }
    pub fn vec_u32(&mut self, v: &[u32]) {
        self.u64(v.len() as u64);
        self.buf.reserve(v.len() * 4);
        for x in v {
            self.buf.extend_from_slice(&x.to_le_bytes());
        }
    }
    pub fn vec_u64(&mut self, v: &[u64]) {
        self.u64(v.len() as u64);
        self.buf.reserve(v.len() * 8);
        for x in v {
            self.buf.extend_from_slice(&x.to_le_bytes());
        }
    }
}

/// Decoder for checkpoints; every read is bounds-checked (a damaged file is an error, never a panic).
pub struct Dec<'a> {
    data: &'a [u8],
    pos: usize,
}

impl<'a> Dec<'a> {
    pub fn new(data: &'a [u8]) -> Dec<'a> {
        Dec { data, pos: 0 }
    }
    fn take(&mut self, n: usize) -> Result<&'a [u8], CheckpointError> {
        let end = self
            .pos
            .checked_add(n)
            .filter(|&e| e <= self.data.len())
            .ok_or(CheckpointError::Truncated)?;
        let s = &self.data[self.pos..end];
        self.pos = end;
        Ok(s)
    }
    pub fn u8(&mut self) -> Result<u8, CheckpointError> {
        Ok(self.take(1)?[0])
    }
    pub fn u32(&mut self) -> Result<u32, CheckpointError> {
        Ok(u32::from_le_bytes(self.take(4)?.try_into().unwrap()))
    }
    pub fn u64(&mut self) -> Result<u64, CheckpointError> {
        Ok(u64::from_le_bytes(self.take(8)?.try_into().unwrap()))
    }
    fn len(&mut self, elem: usize) -> Result<usize, CheckpointError> {
        let n = self.u64()?;
        if n.saturating_mul(elem as u64) > (self.data.len() - self.pos) as u64 {
            return Err(CheckpointError::LengthPastEnd);
        }
        Ok(n as usize)
    }
    pub fn bytes(&mut self) -> Result<&'a [u8], CheckpointError> {
        let n = self.len(1)?;
        self.take(n)
    }
    pub fn vec_u16(&mut self) -> Result<Vec<u16>, CheckpointError> {
        let n = self.len(2)?;
        let s = self.take(n * 2)?;
        Ok(s.chunks_exact(2)
            .map(|c| u16::from_le_bytes([c[0], c[1]]))
            .collect())
    }
    pub fn vec_u32(&mut self) -> Result<Vec<u32>, CheckpointError> {
        let n = self.len(4)?;
        let s = self.take(n * 4)?;
        Ok(s.chunks_exact(4)
            .map(|c| u32::from_le_bytes(c.try_into().unwrap()))
            .collect())
    }
    pub fn vec_u64(&mut self) -> Result<Vec<u64>, CheckpointError> {
        let n = self.len(8)?;
        let s = self.take(n * 8)?;
        Ok(s.chunks_exact(8)
            .map(|c| u64::from_le_bytes(c.try_into().unwrap()))
            .collect())
    }
    /// Read a vector that must have exactly `n` elements.
    pub fn vec_u32_len(&mut self, n: usize, what: &str) -> Result<Vec<u32>, CheckpointError> {
        let v = self.vec_u32()?;
        if v.len() != n {
            return Err(CheckpointError::Count {
                what: what.to_string(),
                found: v.len(),
                expected: n,
            });
        }
        Ok(v)
    }
    pub fn done(&self) -> bool {
        self.pos == self.data.len()
    }
}

/// A 64-bit checksum (FNV-1a over 8-byte words, then a final mix): detects torn
/// or damaged files; not cryptographic.
pub fn checksum(data: &[u8]) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    let mut chunks = data.chunks_exact(8);
    for c in &mut chunks {
        h ^= u64::from_le_bytes(c.try_into().unwrap());
        h = h.wrapping_mul(0x0000_0100_0000_01b3);
        h ^= h >> 32;
    }
    for &b in chunks.remainder() {
        h ^= b as u64;
        h = h.wrapping_mul(0x0000_0100_0000_01b3);
    }
    h ^= data.len() as u64;
    h = (h ^ (h >> 33)).wrapping_mul(0xff51_afd7_ed55_8ccd);
    h ^ (h >> 33)
}
