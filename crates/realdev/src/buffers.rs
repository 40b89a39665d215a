//! IO buffers: aligned for O_DIRECT, allocated once, filled once.
//!
//! Every in-flight slot owns one read buffer and one write buffer, each sized
//! to the largest IO of the run, so the hot path never allocates and the
//! io_uring engine can register them all as fixed buffers. Reads and writes do
//! not share buffers: a read would otherwise replace a write buffer's random
//! bytes with whatever the device held (often zeros), and compressing or
//! deduplicating SSDs would then see easy data.
//!
//! Write buffers are pseudo-random. Before each write the engine *stamps* every
//! 4 KiB block of the buffer with its device offset and a write sequence number
//! (16 bytes per block, two stores): identical payloads would let a
//! deduplicating device skip work, and the stamp lets tests (and a curious
//! user with `hexdump`) check that data landed where it was sent.

use std::alloc::{self, Layout};
use std::ptr::NonNull;

/// Offset of a stamp inside every 4 KiB block; a stamp is the block's device
/// offset then the write sequence number, both little-endian u64.
pub const STAMP_BLOCK: usize = 4096;

/// A zero-initialized heap buffer whose address is aligned to `align`.
pub struct AlignedBuf {
    ptr: NonNull<u8>,
    layout: Layout,
}

// SAFETY: the buffer is plain owned memory; nothing about it is tied to a thread.
unsafe impl Send for AlignedBuf {}

impl AlignedBuf {
    /// `len` is rounded up to a multiple of `align`; `align` must be a power of two.
    pub fn new(len: usize, align: usize) -> Option<AlignedBuf> {
        let align = align.max(std::mem::align_of::<u64>());
        let len = len.max(1).checked_next_multiple_of(align)?;
        let layout = Layout::from_size_align(len, align).ok()?;
        // SAFETY: layout has a non-zero size.
        let raw = unsafe { alloc::alloc_zeroed(layout) };
        let ptr = NonNull::new(raw)?;
        Some(AlignedBuf { ptr, layout })
    }

    pub fn len(&self) -> usize {
        self.layout.size()
    }

    pub fn is_empty(&self) -> bool {
        false
    }

    pub fn as_ptr(&self) -> *const u8 {
        self.ptr.as_ptr()
    }

    pub fn as_mut_ptr(&mut self) -> *mut u8 {
        self.ptr.as_ptr()
    }

    pub fn as_slice(&self) -> &[u8] {
        // SAFETY: ptr is valid for layout.size() initialized bytes (alloc_zeroed) while self lives.
        unsafe { std::slice::from_raw_parts(self.ptr.as_ptr(), self.layout.size()) }
    }

    pub fn as_mut_slice(&mut self) -> &mut [u8] {
        // SAFETY: as above, and &mut self guarantees exclusive access.
        unsafe { std::slice::from_raw_parts_mut(self.ptr.as_ptr(), self.layout.size()) }
    }

    pub fn iovec(&mut self) -> libc::iovec {
        libc::iovec {
            iov_base: self.ptr.as_ptr().cast(),
            iov_len: self.layout.size(),
        }
    }

    /// Overwrite the whole buffer with pseudo-random bytes from `rng`.
    pub fn fill_random(&mut self, rng: &mut SplitMix64) {
        for chunk in self.as_mut_slice().chunks_mut(8) {
            let v = rng.next_u64().to_le_bytes();
            chunk.copy_from_slice(&v[..chunk.len()]);
        }
    }

    /// Stamp the first `len` bytes for a write at `offset_bytes` (see the module doc).
    #[inline]
    pub fn stamp(&mut self, offset_bytes: u64, len: usize, seq: u64) {
        let buf = self.as_mut_slice();
        let len = len.min(buf.len());
        let mut at = 0;
        while at + 16 <= len {
            buf[at..at + 8].copy_from_slice(&(offset_bytes + at as u64).to_le_bytes());
            buf[at + 8..at + 16].copy_from_slice(&seq.to_le_bytes());
            at += STAMP_BLOCK;
        }
    }
}

impl Drop for AlignedBuf {
    fn drop(&mut self) {
        // SAFETY: ptr came from alloc_zeroed with this very layout.
        unsafe { alloc::dealloc(self.ptr.as_ptr(), self.layout) }
    }
}

/// Read a stamp back: (device offset, write sequence) of the 4 KiB block starting at `block`.
pub fn read_stamp(block: &[u8]) -> Option<(u64, u64)> {
    let off = u64::from_le_bytes(block.get(0..8)?.try_into().ok()?);
    let seq = u64::from_le_bytes(block.get(8..16)?.try_into().ok()?);
    Some((off, seq))
}

/// A tiny, fast, seedable generator: buffer contents need to be incompressible,
/// not cryptographic, and a fixed algorithm keeps them reproducible.
#[derive(Clone, Debug)]
pub struct SplitMix64(u64);

impl SplitMix64 {
    pub fn new(seed: u64) -> SplitMix64 {
        SplitMix64(seed)
    }

    #[inline]
    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }
}

/// The buffers of an engine: `slots` read buffers and `slots` write buffers of `len` bytes.
pub struct SlotBuffers {
    pub read: Vec<AlignedBuf>,
    pub write: Vec<AlignedBuf>,
}

impl SlotBuffers {
    pub fn new(slots: usize, len: usize, align: usize, seed: u64) -> Option<SlotBuffers> {
        let mut rng = SplitMix64::new(seed);
        let mut read = Vec::with_capacity(slots);
        let mut write = Vec::with_capacity(slots);
        for _ in 0..slots {
            read.push(AlignedBuf::new(len, align)?);
            let mut w = AlignedBuf::new(len, align)?;
            w.fill_random(&mut rng);
            write.push(w);
        }
        Some(SlotBuffers { read, write })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn aligned_and_rounded() {
        for align in [512usize, 4096, 65536] {
            let b = AlignedBuf::new(1000, align).unwrap();
            assert_eq!(b.as_ptr() as usize % align, 0);
            assert_eq!(b.len() % align, 0);
            assert!(b.len() >= 1000);
        }
    }

    #[test]
    fn random_fill_is_not_zero_and_differs_per_slot() {
        let bufs = SlotBuffers::new(2, 8192, 4096, 1).unwrap();
        let a = bufs.write[0].as_slice();
        let b = bufs.write[1].as_slice();
        assert!(a.iter().filter(|&&x| x == 0).count() < 200);
        assert_ne!(a, b);
        assert!(bufs.read[0].as_slice().iter().all(|&x| x == 0));
    }

    #[test]
    fn stamps_every_block() {
        let mut b = AlignedBuf::new(16384, 4096).unwrap();
        b.stamp(1 << 20, 12288, 7);
        let s = b.as_slice();
        assert_eq!(read_stamp(&s[0..]), Some((1 << 20, 7)));
        assert_eq!(read_stamp(&s[4096..]), Some(((1 << 20) + 4096, 7)));
        assert_eq!(read_stamp(&s[8192..]), Some(((1 << 20) + 8192, 7)));
        assert_eq!(read_stamp(&s[12288..]), Some((0, 0)));
        // A 512-byte write still gets one stamp.
        b.stamp(512, 512, 9);
        assert_eq!(read_stamp(s_of(&b)), Some((512, 9)));
    }

    fn s_of(b: &AlignedBuf) -> &[u8] {
        b.as_slice()
    }
}
