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
use std::io::{self, Read, Seek, SeekFrom, Write};
use std::path::Path;
use std::sync::mpsc::{sync_channel, Receiver, SyncSender};
use std::thread::JoinHandle;

use flashlab_device::Mode;

use crate::stats::Tally;

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

/// Appends records to a file as a run goes, handing them to the OS in
/// batches of `BATCH_RECORDS`, so that an interrupted run loses at most the
/// batches not yet written.
///
/// The IO loop only copies each record into the current batch. Encoding,
/// `write(2)` and the statistics' first pass ([`Tally`]) happen on a second
/// thread, `flashlab-records`, started when the first batch is full and fed
/// through a bounded channel (at most `QUEUED_BATCHES` batches wait; a
/// producer that is faster than the disk waits for it). A run shorter than
/// one batch never starts the thread: its records are written when the
/// writer is finished. Records reach the file in the order they were
/// appended, so the file and the tally are the same as a single thread's.
pub struct RecordWriter {
    batch: Vec<IoRecord>,
    written: u64,
    state: Option<WriterState>,
    /// False for a writer that keeps no records ([`RecordWriter::tally_only`]):
    /// it never starts the records thread.
    threaded: bool,
}

enum WriterState {
    /// No batch was full yet: the file and the tally are here.
    Inline(Box<Drain>),
    Threaded {
        full: SyncSender<Vec<IoRecord>>,
        /// Batches the thread has written, back for reuse (no allocation,
        /// no fresh pages, per batch).
        empty: Receiver<Vec<IoRecord>>,
        thread: JoinHandle<io::Result<Tally>>,
    },
}

/// The writing end: the file (none when records are not kept), the
/// encoding buffer and the first statistics pass.
struct Drain {
    file: Option<File>,
    bytes: Vec<u8>,
    tally: Tally,
    /// Set for a writer that keeps the file out of the page cache
    /// ([`RecordWriter::create_out_of_cache`]).
    behind: Option<DropBehind>,
}

impl Drain {
    fn new(file: Option<File>, behind: Option<DropBehind>) -> Drain {
        Drain {
            file,
            bytes: Vec::new(),
            tally: Tally::default(),
            behind,
        }
    }

    fn write(&mut self, batch: &[IoRecord]) -> io::Result<()> {
        let Some(file) = &mut self.file else {
            batch.iter().for_each(|r| self.tally.add(r));
            return Ok(());
        };
        self.bytes.clear();
        for r in batch {
            self.bytes.extend_from_slice(&r.encode());
            self.tally.add(r);
        }
        file.write_all(&self.bytes)?;
        match &mut self.behind {
            Some(behind) => behind.wrote(file, self.bytes.len() as u64),
            None => Ok(()),
        }
    }
}

/// Drop-behind: a records file written back as it grows and its pages
/// released, all but the last two `CHUNK_BYTES`, so that a long sweep keeps
/// reusing the same few page-cache pages instead of taking new ones for
/// every record (100 MB a point of 2.5 M IOs). New pages are the expensive
/// part of writing records on a VM whose host takes free memory back: on
/// this project's VM a 100 MB records file cost 0.10-0.12 s of CPU while
/// the machine had recently used pages free, 0.31-0.54 s once it had not,
/// and 0.10-0.12 s throughout with drop-behind (`examples/records_page_cache`;
/// docs/python.md, "Session 11"). The data reaches the disk sooner, nothing
/// else changes: the records are the same and survive the process as
/// before. Linux only (`sync_file_range`, `posix_fadvise`); elsewhere, or
/// on a file system that refuses them, the file is written as usual.
struct DropBehind {
    /// Bytes of the file written so far (the header included).
    written: u64,
    /// Writeback was started for the bytes before this offset.
    submitted: u64,
    /// The pages before this offset were released.
    released: u64,
    page_bytes: u64,
    /// False once the file system refused `sync_file_range`.
    active: bool,
}

impl DropBehind {
    /// Writeback is started a chunk at a time, 16 batches (2.5 MiB): one
    /// request to the disk instead of 16 (each a VM exit on a virtio disk;
    /// per batch they were half of the records thread's CPU time), and a
    /// chunk's pages are released when the next chunk is full, so at most
    /// two chunks of a file stay cached.
    const CHUNK_BYTES: u64 = 16 * (BATCH_RECORDS * RECORD_BYTES) as u64;

    fn new(written: u64) -> DropBehind {
        #[cfg(target_os = "linux")]
        // SAFETY: sysconf reads a constant of the system.
        let page = unsafe { libc::sysconf(libc::_SC_PAGESIZE) };
        #[cfg(not(target_os = "linux"))]
        let page = 4096;
        DropBehind {
            written,
            submitted: 0,
            released: 0,
            page_bytes: if page > 0 { page as u64 } else { 4096 },
            active: cfg!(target_os = "linux"),
        }
    }

    /// After `len` more bytes were written: once a chunk is full, starts its
    /// writeback, then waits for the previous chunk's (long under way by
    /// then) and releases its pages.
    #[cfg(target_os = "linux")]
    fn wrote(&mut self, file: &File, len: u64) -> io::Result<()> {
        use std::os::fd::AsRawFd;
        self.written += len;
        if !self.active || self.written - self.submitted < Self::CHUNK_BYTES {
            return Ok(());
        }
        let fd = file.as_raw_fd();
        let sync = |from: u64, bytes: u64, flags: libc::c_uint| -> io::Result<bool> {
            // SAFETY: plain syscall on a file descriptor this writer owns.
            let rc = unsafe { libc::sync_file_range(fd, from as i64, bytes as i64, flags) };
            if rc == 0 {
                return Ok(true);
            }
            let e = io::Error::last_os_error();
            match e.raw_os_error() {
                // The data could not be written: the records are damaged.
                Some(libc::EIO) | Some(libc::ENOSPC) => Err(e),
                // This file system does not do it: write as usual.
                _ => Ok(false),
            }
        };
        let previous = self.submitted;
        if !sync(
            previous,
            self.written - previous,
            libc::SYNC_FILE_RANGE_WRITE,
        )? {
            self.active = false;
            return Ok(());
        }
        self.submitted = self.written;
        let upto = previous / self.page_bytes * self.page_bytes;
        if upto > self.released {
            let bytes = upto - self.released;
            let all = libc::SYNC_FILE_RANGE_WAIT_BEFORE
                | libc::SYNC_FILE_RANGE_WRITE
                | libc::SYNC_FILE_RANGE_WAIT_AFTER;
            if !sync(self.released, bytes, all)? {
                self.active = false;
                return Ok(());
            }
            // Advice only: pages it cannot release stay cached.
            // SAFETY: as above.
            unsafe {
                libc::posix_fadvise(
                    fd,
                    self.released as i64,
                    bytes as i64,
                    libc::POSIX_FADV_DONTNEED,
                )
            };
            self.released = upto;
        }
        Ok(())
    }

    #[cfg(not(target_os = "linux"))]
    fn wrote(&mut self, _file: &File, len: u64) -> io::Result<()> {
        self.written += len;
        Ok(())
    }
}

/// Records handed to the OS at once (160 KB): the most an interrupted run
/// loses, with the batches queued behind it.
const BATCH_RECORDS: usize = 4096;
/// Full batches that may wait for the records thread.
const QUEUED_BATCHES: usize = 2;

impl RecordWriter {
    pub fn create(path: &Path) -> io::Result<RecordWriter> {
        Self::create_with(path, false)
    }

    /// [`Self::create`], for a file written back to disk as it grows and
    /// released from the page cache behind it (all but its last 2.5-5 MiB):
    /// the same file, the same tally, no page cache consumed. For runs whose
    /// records nobody reads right away (a sweep's points); reading them
    /// later reads the disk.
    pub fn create_out_of_cache(path: &Path) -> io::Result<RecordWriter> {
        Self::create_with(path, true)
    }

    fn create_with(path: &Path, out_of_cache: bool) -> io::Result<RecordWriter> {
        let mut file = File::create(path)?;
        file.write_all(&header())?;
        let behind = out_of_cache.then(|| DropBehind::new(HEADER_BYTES as u64));
        Ok(RecordWriter {
            batch: Vec::with_capacity(BATCH_RECORDS),
            written: 0,
            state: Some(WriterState::Inline(Box::new(Drain::new(
                Some(file),
                behind,
            )))),
            threaded: true,
        })
    }

    /// A writer that keeps no records: it only makes the statistics' first
    /// pass ([`Tally`]), on the calling thread, so a run costs one thread
    /// and no disk (a sweep of many points that wants only their metrics).
    /// Percentiles then come from the tally's histogram
    /// ([`RunStats::from_histograms`](crate::stats::RunStats::from_histograms)).
    pub fn tally_only() -> RecordWriter {
        RecordWriter {
            batch: Vec::with_capacity(BATCH_RECORDS),
            written: 0,
            state: Some(WriterState::Inline(Box::new(Drain::new(None, None)))),
            threaded: false,
        }
    }

    #[inline]
    pub fn append(&mut self, r: &IoRecord) -> io::Result<()> {
        self.batch.push(*r);
        self.written += 1;
        if self.batch.len() >= BATCH_RECORDS {
            self.hand_off()?;
        }
        Ok(())
    }

    /// Gives the full batch to the records thread (starting it the first time).
    #[cold]
    fn hand_off(&mut self) -> io::Result<()> {
        if self.state.is_none() {
            return Err(io::Error::other("the records writer stopped on an error"));
        }
        if !self.threaded {
            let Some(WriterState::Inline(drain)) = &mut self.state else {
                unreachable!("a writer without records never starts the thread")
            };
            drain.write(&self.batch)?;
            self.batch.clear();
            return Ok(());
        }
        if let Some(WriterState::Inline(_)) = &self.state {
            let Some(WriterState::Inline(drain)) = self.state.take() else {
                unreachable!("checked above")
            };
            let (full, full_rx) = sync_channel::<Vec<IoRecord>>(QUEUED_BATCHES);
            let (empty_tx, empty) = sync_channel::<Vec<IoRecord>>(QUEUED_BATCHES + 2);
            let thread = std::thread::Builder::new()
                .name("flashlab-records".into())
                .spawn(move || {
                    let mut drain = drain;
                    drain.bytes.reserve(BATCH_RECORDS * RECORD_BYTES);
                    for mut batch in full_rx {
                        drain.write(&batch)?;
                        batch.clear();
                        let _ = empty_tx.try_send(batch);
                    }
                    Ok(drain.tally)
                })?;
            self.state = Some(WriterState::Threaded {
                full,
                empty,
                thread,
            });
        }
        let Some(WriterState::Threaded { full, empty, .. }) = &self.state else {
            unreachable!("the thread was started above")
        };
        let next = empty
            .try_recv()
            .unwrap_or_else(|_| Vec::with_capacity(BATCH_RECORDS));
        let batch = std::mem::replace(&mut self.batch, next);
        if full.send(batch).is_err() {
            // The thread stopped on an error: joining it reports the error.
            let stopped = self.close().err();
            return Err(
                stopped.unwrap_or_else(|| io::Error::other("the records thread stopped early"))
            );
        }
        Ok(())
    }

    pub fn written(&self) -> u64 {
        self.written
    }

    /// Writes what is left and waits for the records thread: the records
    /// survive the process, like everything in a results directory (see
    /// `dir`). Returns the statistics' first pass over every record written
    /// ([`RunStats::from_tally`](crate::stats::RunStats::from_tally)).
    pub fn finish(mut self) -> io::Result<Tally> {
        self.close()
    }

    fn close(&mut self) -> io::Result<Tally> {
        let batch = std::mem::take(&mut self.batch);
        match self.state.take() {
            None => Err(io::Error::other("the records writer was already closed")),
            Some(WriterState::Inline(mut drain)) => {
                drain.write(&batch)?;
                Ok(drain.tally)
            }
            Some(WriterState::Threaded { full, thread, .. }) => {
                let sent = batch.is_empty() || full.send(batch).is_ok();
                drop(full);
                let tally = thread
                    .join()
                    .map_err(|_| io::Error::other("the records thread panicked"))??;
                if !sent {
                    return Err(io::Error::other("the records thread stopped early"));
                }
                Ok(tally)
            }
        }
    }
}

/// A writer dropped without [`RecordWriter::finish`] (an early return, a
/// panic) still writes its records.
impl Drop for RecordWriter {
    fn drop(&mut self) {
        if self.state.is_some() {
            let _ = self.close();
        }
    }
}

/// Why a records file cannot be read.
#[derive(Debug)]
pub enum RecordsError {
    Io(io::Error),
    /// The file does not start with [`MAGIC`].
    NotRecords,
    /// A header or record size other than schema 1's.
    Layout {
        header_bytes: u16,
        record_bytes: u16,
    },
}

impl std::fmt::Display for RecordsError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            RecordsError::Io(e) => write!(f, "{e}"),
            RecordsError::NotRecords => write!(f, "not a flashlab records file (bad magic)"),
            RecordsError::Layout {
                header_bytes,
                record_bytes,
            } => write!(
                f,
                "records file layout {header_bytes}/{record_bytes} is not schema 1 (32/40)"
            ),
        }
    }
}

impl std::error::Error for RecordsError {}

impl From<io::Error> for RecordsError {
    fn from(e: io::Error) -> Self {
        RecordsError::Io(e)
    }
}

/// An opened, validated records file: the one reader that statistics,
/// reports and exports share.
///
/// It never holds more than one fixed-size chunk of the file in memory, so
/// a run of any length is read in constant memory, and every pass re-reads
/// the file from its first record (passes are cheap: the file is normally
/// in the page cache right after the run that wrote it).
#[derive(Debug)]
pub struct RecordFile {
    path: std::path::PathBuf,
    records: u64,
    torn_bytes: u64,
}

/// Records per read: 64k records = 2.5 MB, large enough that the per-call
/// cost vanishes, small enough to stay a constant.
const CHUNK_RECORDS: usize = 65_536;

impl RecordFile {
    /// Every whole record in memory (tests and small files; everything else
    /// streams through [`Self::for_each_chunk`]).
    pub fn read_all(&self) -> io::Result<Vec<IoRecord>> {
        let mut out = Vec::new();
        self.for_each_chunk(|c| {
            out.extend_from_slice(c);
            Ok(())
        })?;
        Ok(out)
    }

    pub fn open(path: &Path) -> Result<RecordFile, RecordsError> {
        let mut file = File::open(path)?;
        let len = file.metadata()?.len();
        let mut header = [0u8; HEADER_BYTES];
        if len < HEADER_BYTES as u64 {
            return Err(RecordsError::NotRecords);
        }
        file.read_exact(&mut header)?;
        check_header(&header)?;
        let body = len - HEADER_BYTES as u64;
        Ok(RecordFile {
            path: path.to_path_buf(),
            records: body / RECORD_BYTES as u64,
            torn_bytes: body % RECORD_BYTES as u64,
        })
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Whole records in the file (as it was when opened).
    pub fn len(&self) -> u64 {
        self.records
    }

    pub fn is_empty(&self) -> bool {
        self.records == 0
    }

    /// Bytes at the end that did not make a whole record (a torn write).
    pub fn torn_bytes(&self) -> u64 {
        self.torn_bytes
    }

    /// One pass over every whole record, in file order: `visit(position,
    /// record)`, with `None` for a record whose mode byte is invalid
    /// (a damaged file).
    pub fn for_each(&self, mut visit: impl FnMut(u64, Option<IoRecord>)) -> io::Result<()> {
        let mut file = File::open(&self.path)?;
        file.seek(SeekFrom::Start(HEADER_BYTES as u64))?;
        // A small run's pass allocates only what it reads.
        let chunk = (self.records as usize).min(CHUNK_RECORDS);
        let mut buf = vec![0u8; chunk * RECORD_BYTES];
        let mut pos = 0u64;
        while pos < self.records {
            let want = ((self.records - pos) as usize).min(CHUNK_RECORDS);
            let bytes = &mut buf[..want * RECORD_BYTES];
            file.read_exact(bytes)?;
            for rec in bytes.chunks_exact(RECORD_BYTES) {
                visit(pos, IoRecord::decode(rec.try_into().expect("record size")));
                pos += 1;
            }
        }
        Ok(())
    }

    /// One pass in chunks of at most `CHUNK_RECORDS` decoded records (for
    /// column writers); a damaged record is an error here.
    pub fn for_each_chunk(
        &self,
        mut visit: impl FnMut(&[IoRecord]) -> io::Result<()>,
    ) -> io::Result<()> {
        let mut chunk = Vec::with_capacity(CHUNK_RECORDS);
        let mut damaged = None;
        let mut result = Ok(());
        self.for_each(|pos, r| {
            if result.is_err() || damaged.is_some() {
                return;
            }
            match r {
                Some(r) => chunk.push(r),
                None => damaged = Some(pos),
            }
            if chunk.len() == CHUNK_RECORDS {
                result = visit(&chunk);
                chunk.clear();
            }
        })?;
        result?;
        if let Some(pos) = damaged {
            return Err(io::Error::new(
                io::ErrorKind::InvalidData,
                format!("{}: record {pos} has a bad mode code", self.path.display()),
            ));
        }
        if !chunk.is_empty() {
            visit(&chunk)?;
        }
        Ok(())
    }
}

fn check_header(h: &[u8]) -> Result<(), RecordsError> {
    if h.len() < HEADER_BYTES || h[0..8] != MAGIC {
        return Err(RecordsError::NotRecords);
    }
    let header_bytes = u16::from_le_bytes([h[8], h[9]]);
    let record_bytes = u16::from_le_bytes([h[10], h[11]]);
    if record_bytes as usize != RECORD_BYTES || header_bytes as usize != HEADER_BYTES {
        return Err(RecordsError::Layout {
            header_bytes,
            record_bytes,
        });
    }
    Ok(())
}

fn to_io(path: &Path, e: RecordsError) -> io::Error {
    match e {
        RecordsError::Io(e) => io::Error::new(e.kind(), format!("{}: {e}", path.display())),
        e => io::Error::new(
            io::ErrorKind::InvalidData,
            format!("{}: {e}", path.display()),
        ),
    }
}

/// Reads every whole record of a records file into memory (tests and small
/// files; everything else streams through [`RecordFile`]).
pub fn read_records(path: &Path) -> io::Result<Vec<IoRecord>> {
    RecordFile::open(path)
        .map_err(|e| to_io(path, e))?
        .read_all()
}

pub fn decode_all(bytes: &[u8]) -> Result<Vec<IoRecord>, RecordsError> {
    check_header(bytes)?;
    bytes[HEADER_BYTES..]
        .chunks_exact(RECORD_BYTES)
        .map(|c| {
            IoRecord::decode(c.try_into().expect("chunk size")).ok_or_else(|| {
                RecordsError::Io(io::Error::new(io::ErrorKind::InvalidData, "bad mode code"))
            })
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

    fn mixed(n: u64) -> Vec<IoRecord> {
        (0..n)
            .map(|i| IoRecord {
                index: i,
                stream: (i % 2) as u16,
                mode: Mode::from_code((i * 7 % 3) as u8).unwrap(),
                offset_bytes: i * 512,
                size_bytes: 4096,
                submit_ns: i * 1000,
                complete_ns: i * 1000 + (i * 2_654_435_761) % 3_000_000,
                flags: if i < 100 { FLAG_WARMUP } else { 0 },
            })
            .collect()
    }

    /// Pages of `path` in the page cache, and its pages in all (`mincore`
    /// over a read-only mapping).
    #[cfg(target_os = "linux")]
    fn cached_pages(path: &Path) -> (usize, usize) {
        use std::os::fd::AsRawFd;
        let file = File::open(path).unwrap();
        let len = file.metadata().unwrap().len() as usize;
        // SAFETY: a read-only shared mapping of a file nobody truncates
        // meanwhile, unmapped before returning; `vec` has a byte per page.
        unsafe {
            let page = libc::sysconf(libc::_SC_PAGESIZE) as usize;
            let pages = len.div_ceil(page);
            let map = libc::mmap(
                std::ptr::null_mut(),
                len,
                libc::PROT_READ,
                libc::MAP_SHARED,
                file.as_raw_fd(),
                0,
            );
            assert_ne!(map, libc::MAP_FAILED);
            let mut vec = vec![0u8; pages];
            assert_eq!(libc::mincore(map, len, vec.as_mut_ptr()), 0);
            libc::munmap(map, len);
            (vec.iter().filter(|&&b| b & 1 == 1).count(), pages)
        }
    }

    #[test]
    #[cfg(target_os = "linux")]
    fn an_out_of_cache_writer_leaves_the_same_file_with_only_its_last_pages_cached() {
        let dir = tempfile::tempdir().unwrap();
        // SAFETY: statfs fills the struct it is given.
        let tmpfs = unsafe {
            let mut st: libc::statfs = std::mem::zeroed();
            let c = std::ffi::CString::new(dir.path().as_os_str().as_encoded_bytes()).unwrap();
            libc::statfs(c.as_ptr(), &mut st) == 0 && st.f_type == libc::TMPFS_MAGIC
        };
        if tmpfs {
            eprintln!(
                "skipped: {} is on tmpfs, whose pages are its storage",
                dir.path().display()
            );
            return;
        }
        let recs = mixed(160 * BATCH_RECORDS as u64 + 5);
        let (cached, out) = (dir.path().join("cached.bin"), dir.path().join("out.bin"));
        let mut tallies = Vec::new();
        for mut w in [
            RecordWriter::create(&cached).unwrap(),
            RecordWriter::create_out_of_cache(&out).unwrap(),
        ] {
            for r in &recs {
                w.append(r).unwrap();
            }
            tallies.push(w.finish().unwrap());
        }
        // Before anything reads the files back into the cache.
        let (usual_cached, pages) = cached_pages(&cached);
        let (out_cached, _) = cached_pages(&out);
        // The control: this file system keeps a written file's pages.
        assert!(
            usual_cached > pages / 2,
            "{usual_cached} of {pages} pages of the usual file cached"
        );
        // SAFETY: sysconf reads a constant of the system.
        let page = unsafe { libc::sysconf(libc::_SC_PAGESIZE) } as u64;
        let window = (2 * DropBehind::CHUNK_BYTES / page) as usize + 2;
        assert!(
            out_cached <= window,
            "{out_cached} of {pages} pages still cached, the window is {window}"
        );
        assert_eq!(read_records(&out).unwrap(), recs);
        assert_eq!(
            std::fs::read(&cached).unwrap(),
            std::fs::read(&out).unwrap()
        );
        let stats = |t: &Tally| {
            crate::stats::RunStats::from_tally(&mut &recs[..], t.clone())
                .unwrap()
                .0
        };
        assert_eq!(stats(&tallies[0]), stats(&tallies[1]));
    }

    #[test]
    fn records_written_through_the_records_thread_are_in_order_with_their_tally() {
        use crate::stats::RunStats;
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("records.bin");
        // Several full batches and a partial one: the thread starts, reuses
        // batches, and the last records are written by `finish`.
        let recs = mixed(3 * BATCH_RECORDS as u64 + 123);
        let mut w = RecordWriter::create(&path).unwrap();
        for r in &recs {
            w.append(r).unwrap();
        }
        let tally = w.finish().unwrap();
        assert_eq!(tally.records(), recs.len() as u64);
        assert_eq!(read_records(&path).unwrap(), recs);
        let file = RecordFile::open(&path).unwrap();
        // The tally stands for the statistics' own first pass, bit for bit.
        assert_eq!(
            RunStats::from_tally(&mut &file, tally).unwrap().0,
            RunStats::from_file(&file).unwrap()
        );
        assert_eq!(
            RunStats::from_file(&file).unwrap(),
            RunStats::from_records(&recs)
        );
    }

    #[test]
    fn a_full_disk_under_the_records_thread_fails_the_run_instead_of_losing_records() {
        // A 256 KiB tmpfs holds the header and one batch (160 KB), not two:
        // the second batch's write fails on the records thread, and the
        // writer must report it (from `append` or `finish`), never succeed.
        let dir = tempfile::tempdir().unwrap();
        let mounted = std::process::Command::new("mount")
            .args(["-t", "tmpfs", "-o", "size=256k", "tmpfs"])
            .arg(dir.path())
            .stderr(std::process::Stdio::null())
            .status()
            .is_ok_and(|s| s.success());
        if !mounted {
            eprintln!("skipped: mounting a tmpfs needs root");
            return;
        }
        struct Unmount<'a>(&'a Path);
        impl Drop for Unmount<'_> {
            fn drop(&mut self) {
                let _ = std::process::Command::new("umount").arg(self.0).status();
            }
        }
        let _unmount = Unmount(dir.path());
        let recs = mixed(4 * BATCH_RECORDS as u64);
        let mut w = RecordWriter::create(&dir.path().join("records.bin")).unwrap();
        let appended = recs.iter().try_for_each(|r| w.append(r));
        let outcome = appended.and_then(|()| w.finish().map(|_| ()));
        let err = outcome.expect_err("records beyond the disk's space were reported written");
        assert_eq!(err.kind(), io::ErrorKind::StorageFull, "{err}");
    }

    #[test]
    fn a_dropped_writer_still_writes_its_records() {
        let dir = tempfile::tempdir().unwrap();
        for n in [10, BATCH_RECORDS as u64 + 10] {
            let path = dir.path().join(format!("records-{n}.bin"));
            let recs = mixed(n);
            let mut w = RecordWriter::create(&path).unwrap();
            for r in &recs {
                w.append(r).unwrap();
            }
            drop(w);
            assert_eq!(read_records(&path).unwrap(), recs, "{n} records");
        }
    }
}
