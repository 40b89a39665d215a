//! An in-memory [`Backend`] (no simulation): protocol tests and fuzzing.

use std::sync::Mutex;

use crate::proto::EINVAL;
use crate::server::Backend;

pub struct MemBackend {
    data: Mutex<Vec<u8>>,
    size: u64,
}

impl MemBackend {
    pub fn new(size: usize) -> MemBackend {
        MemBackend {
            data: Mutex::new(vec![0; size]),
            size: size as u64,
        }
    }

    fn range(&self, offset: u64, len: usize) -> Result<std::ops::Range<usize>, u32> {
        match offset.checked_add(len as u64) {
            Some(e) if e <= self.size => Ok(offset as usize..e as usize),
            _ => Err(EINVAL),
        }
    }
}

impl Backend for MemBackend {
    fn size(&self) -> u64 {
        self.size
    }
    fn read(&self, offset: u64, buf: &mut [u8]) -> Result<u64, u32> {
        let r = self.range(offset, buf.len())?;
        buf.copy_from_slice(&self.data.lock().unwrap()[r]);
        Ok(0)
    }
    fn write(&self, offset: u64, data: &[u8], _fua: bool) -> Result<u64, u32> {
        let r = self.range(offset, data.len())?;
        self.data.lock().unwrap()[r].copy_from_slice(data);
        Ok(0)
    }
    fn trim(&self, offset: u64, length: u32, _fua: bool) -> Result<u64, u32> {
        let r = self.range(offset, length as usize)?;
        self.data.lock().unwrap()[r].fill(0);
        Ok(0)
    }
    fn write_zeroes(
        &self,
        offset: u64,
        length: u32,
        _no_hole: bool,
        _fua: bool,
    ) -> Result<u64, u32> {
        self.trim(offset, length, false)
    }
    fn flush(&self) -> Result<u64, u32> {
        Ok(0)
    }
}
