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
///
/// Laid out as its record in the file (`repr(C)`, fields in file order, no
/// padding: the `IntoBytes` derive refuses a layout with any), so on a
/// little-endian machine a batch of records is written as its own bytes,
/// without an encoding pass (about 5 % of the records thread's samples).
/// [`IoRecord::encode`] gives the same bytes on any machine.
#[derive(Clone, Copy, Debug, PartialEq, Eq, zerocopy::IntoBytes, zerocopy::Immutable)]
#[repr(C)]
pub struct IoRecord {
    pub index: u64,
    pub submit_ns: u64,
    pub complete_ns: u64,
    pub offset_bytes: u64,
    pub size_bytes: u32,
    pub stream: u16,
    pub mode: Mode,
    pub flags: u8,
}

const _: () = assert!(std::mem::size_of::<IoRecord>() == RECORD_BYTES);

/// The file's bytes of a batch of records: the records' own memory where
/// that is the file's layout (little-endian), else encoded into `buf`.
fn batch_bytes<'a>(batch: &'a [IoRecord], buf: &'a mut Vec<u8>) -> &'a [u8] {
    if cfg!(target_endian = "little") {
        zerocopy::IntoBytes::as_bytes(batch)
    } else {
        buf.clear();
        for r in batch {
            buf.extend_from_slice(&r.encode());
        }
        buf
    }
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

    /// None for a record no run writes: an invalid mode byte, or a
    /// completion before its submission (its latency would read as 0 ns).
    pub fn decode(b: &[u8; RECORD_BYTES]) -> Option<IoRecord> {
        let u64_at = |i: usize| u64::from_le_bytes(b[i..i + 8].try_into().expect("8 bytes"));
        if u64_at(16) < u64_at(8) {
            return None;
        }
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
/// batches not yet written (a writer that keeps its file out of the page
/// cache, up to 2.5 MiB more: see `Direct`).
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
    /// The error that stopped the writer (say ENOSPC), as (OS error code,
    /// kind, text): every later call reports it again, so that `finish`
    /// after a failed append names the cause, not "already closed".
    stopped: Option<(Option<i32>, io::ErrorKind, String)>,
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
/// encoding buffer (used on big-endian machines only) and the first
/// statistics pass.
struct Drain {
    file: Option<File>,
    bytes: Vec<u8>,
    tally: Tally,
    /// A writer that keeps the file out of the page cache
    /// ([`RecordWriter::create_out_of_cache`]) writes it with direct IO
    /// where the file system takes it ...
    direct: Option<Direct>,
    /// ... and else releases its pages behind the writes.
    behind: Option<DropBehind>,
}

impl Drain {
    fn new(file: Option<File>, direct: Option<Direct>, behind: Option<DropBehind>) -> Drain {
        Drain {
            file,
            bytes: Vec::new(),
            tally: Tally::default(),
            direct,
            behind,
        }
    }

    fn write(&mut self, batch: &[IoRecord]) -> io::Result<()> {
        batch.iter().for_each(|r| self.tally.add(r));
        let Some(file) = &mut self.file else {
            return Ok(());
        };
        let bytes = batch_bytes(batch, &mut self.bytes);
        if let Some(direct) = &mut self.direct {
            if let Some(written) = direct.write(file, bytes)? {
                // Direct IO refused mid-file: everything is written, the
                // rest of the file goes through the page cache.
                self.direct = None;
                self.behind = Some(DropBehind::new(written));
            }
            return Ok(());
        }
        file.write_all(bytes)?;
        match &mut self.behind {
            Some(behind) => behind.wrote(file, bytes.len() as u64),
            None => Ok(()),
        }
    }

    /// After the last batch: writes what direct IO could not (the file's
    /// last, partial block).
    fn finish(&mut self) -> io::Result<()> {
        match (&mut self.file, self.direct.take()) {
            (Some(file), Some(mut direct)) => direct.finish(file).map(|_| ()),
            _ => Ok(()),
        }
    }
}

/// Direct IO (`O_DIRECT`) for a records file nobody reads right away (a
/// sweep's points): the disk takes the records from the writer's own
/// buffer, so no page-cache page is taken, filled, written back and
/// released for them. Through the page cache, with drop-behind, those four
/// steps were 60 % of the records thread's CPU time (perf, 10 points of
/// 1.8 M IOs: write 39 %, sync_file_range 14 %, fadvise 7 % of the
/// thread's samples); docs/python.md, "Session 12", has the figures after.
///
/// Direct IO writes whole blocks at block offsets from aligned memory, and
/// a record (40 bytes, after a 32-byte header) is neither, so the file's
/// bytes are staged in an aligned buffer: batches are appended to it until
/// it holds a write's worth ([`DIRECT_WRITE_BYTES`]), its whole blocks are
/// written, and the partial block left over moves to the buffer's front,
/// to be written with the next. [`Direct::finish`] writes what is left
/// through the page cache. So a run killed meanwhile loses, besides the
/// batches queued, up to 2.5 MiB of records (65 536) that the page cache
/// would have kept: the price of keeping them out of it, paid only by the
/// writers that ask ([`RecordWriter::create_out_of_cache`], a sweep's
/// points, where a killed point is run again anyway). A file system that
/// refuses direct IO (at `create`, or later with `EINVAL`) gets the usual
/// writes with drop-behind instead; a failed write (`EIO`, `ENOSPC`) fails
/// the run as any other.
#[cfg(target_os = "linux")]
struct Direct {
    /// The file's bytes from offset `flushed` on that are not written yet.
    staged: Vec<DirectBlock>,
    staged_bytes: usize,
    /// Bytes of the file written (a multiple of `DIRECT_BLOCK_BYTES`).
    flushed: u64,
}

/// The unit of a direct write (offset, length and memory address): 4 KiB
/// covers the 512-byte and 4 KiB logical blocks of disks and the page size.
#[cfg(target_os = "linux")]
const DIRECT_BLOCK_BYTES: usize = 4096;

/// Bytes staged before a direct write: 16 batches (2.5 MiB), the same as
/// drop-behind's chunk and for the same reason. Each write is a request to
/// the disk, and on a virtio disk each request a VM exit: written a batch
/// (160 KB) at a time, the exits alone (`iowrite16`) took 27 ms of CPU a
/// point of 1.8 M IOs, more than the page cache had cost.
#[cfg(target_os = "linux")]
const DIRECT_WRITE_BYTES: usize = 16 * BATCH_RECORDS * RECORD_BYTES;

#[cfg(target_os = "linux")]
#[derive(Clone, Copy, zerocopy::IntoBytes, zerocopy::FromBytes, zerocopy::Immutable)]
#[repr(C, align(4096))]
struct DirectBlock([u8; DIRECT_BLOCK_BYTES]);

#[cfg(target_os = "linux")]
impl Direct {
    /// Switches `file` (its `header` already written through the page
    /// cache) to direct IO, or returns None if its file system refuses.
    fn start(file: &File, header: &[u8]) -> Option<Direct> {
        set_direct(file, true).ok()?;
        // A write's worth, a batch and a partial block always fit.
        let blocks =
            (DIRECT_WRITE_BYTES + BATCH_RECORDS * RECORD_BYTES).div_ceil(DIRECT_BLOCK_BYTES) + 1;
        let mut direct = Direct {
            staged: vec![DirectBlock([0; DIRECT_BLOCK_BYTES]); blocks],
            staged_bytes: 0,
            flushed: 0,
        };
        // The header is rewritten with the first block: one block, one write.
        direct.stage(header);
        Some(direct)
    }

    fn stage(&mut self, bytes: &[u8]) {
        let end = self.staged_bytes + bytes.len();
        if end > self.staged.len() * DIRECT_BLOCK_BYTES {
            let blocks = end.div_ceil(DIRECT_BLOCK_BYTES);
            self.staged
                .resize(blocks, DirectBlock([0; DIRECT_BLOCK_BYTES]));
        }
        let buf = zerocopy::IntoBytes::as_mut_bytes(&mut self.staged[..]);
        buf[self.staged_bytes..end].copy_from_slice(bytes);
        self.staged_bytes = end;
    }

    /// Stages `bytes` and writes the whole blocks staged. Returns the
    /// file's size if direct IO was refused and everything was written
    /// through the page cache instead (the file is then a usual one, its
    /// position at the end).
    fn write(&mut self, file: &mut File, bytes: &[u8]) -> io::Result<Option<u64>> {
        use std::os::unix::fs::FileExt;
        self.stage(bytes);
        if self.staged_bytes < DIRECT_WRITE_BYTES {
            return Ok(None);
        }
        let whole = self.staged_bytes / DIRECT_BLOCK_BYTES * DIRECT_BLOCK_BYTES;
        let mut done = 0;
        while done < whole {
            let buf = zerocopy::IntoBytes::as_bytes(&self.staged[..]);
            match file.write_at(&buf[done..whole], self.flushed + done as u64) {
                Ok(0) => return Err(io::ErrorKind::WriteZero.into()),
                Ok(n) => done += n,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                // Refused (an alignment this file system does not take, or
                // a short write left the rest unaligned): no direct IO.
                Err(e) if matches!(e.raw_os_error(), Some(libc::EINVAL | libc::EOPNOTSUPP)) => {
                    self.consume(done);
                    return self.finish(file).map(Some);
                }
                Err(e) => return Err(e),
            }
        }
        self.consume(done);
        Ok(None)
    }

    /// Forgets the first `n` staged bytes (written at `flushed`).
    fn consume(&mut self, n: usize) {
        let buf = zerocopy::IntoBytes::as_mut_bytes(&mut self.staged[..]);
        buf.copy_within(n..self.staged_bytes, 0);
        self.staged_bytes -= n;
        self.flushed += n as u64;
    }

    /// Writes what is staged through the page cache (direct IO off) and
    /// leaves the file's position at its end. Returns the file's size.
    fn finish(&mut self, file: &mut File) -> io::Result<u64> {
        use std::os::unix::fs::FileExt;
        set_direct(file, false)?;
        let buf = zerocopy::IntoBytes::as_bytes(&self.staged[..]);
        file.write_all_at(&buf[..self.staged_bytes], self.flushed)?;
        let end = self.flushed + self.staged_bytes as u64;
        self.consume(self.staged_bytes);
        file.seek(SeekFrom::Start(end))?;
        Ok(end)
    }
}

/// Turns `O_DIRECT` on or off for an open file.
#[cfg(target_os = "linux")]
fn set_direct(file: &File, on: bool) -> io::Result<()> {
    use std::os::fd::AsRawFd;
    let fd = file.as_raw_fd();
    // SAFETY: fcntl on a descriptor this writer owns; no pointers.
    let flags = unsafe { libc::fcntl(fd, libc::F_GETFL) };
    if flags < 0 {
        return Err(io::Error::last_os_error());
    }
    let flags = if on {
        flags | libc::O_DIRECT
    } else {
        flags & !libc::O_DIRECT
    };
    // SAFETY: as above.
    if unsafe { libc::fcntl(fd, libc::F_SETFL, flags) } < 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(())
}

/// Elsewhere than Linux there is no direct IO here: drop-behind's fallback,
/// plain writes.
#[cfg(not(target_os = "linux"))]
struct Direct;

#[cfg(not(target_os = "linux"))]
impl Direct {
    fn start(_file: &File, _header: &[u8]) -> Option<Direct> {
        None
    }
    fn write(&mut self, _file: &mut File, _bytes: &[u8]) -> io::Result<Option<u64>> {
        unreachable!("never started")
    }
    fn finish(&mut self, _file: &mut File) -> io::Result<u64> {
        unreachable!("never started")
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

    /// [`Self::create`], for a file kept out of the page cache: written
    /// with direct IO where the file system takes it (all but the last
    /// partial block), else written back as it grows and released behind
    /// (all but its last 2.5-5 MiB): the same file, the same tally, no
    /// page cache consumed. For runs whose records nobody reads right away
    /// (a sweep's points); reading them later reads the disk.
    pub fn create_out_of_cache(path: &Path) -> io::Result<RecordWriter> {
        Self::create_with(path, true)
    }

    fn create_with(path: &Path, out_of_cache: bool) -> io::Result<RecordWriter> {
        let mut file = File::create(path)?;
        // Written through the page cache first, so the file is a records
        // file from the start, whatever happens next.
        file.write_all(&header())?;
        let direct = if out_of_cache {
            Direct::start(&file, &header())
        } else {
            None
        };
        let behind =
            (out_of_cache && direct.is_none()).then(|| DropBehind::new(HEADER_BYTES as u64));
        Ok(RecordWriter {
            batch: Vec::with_capacity(BATCH_RECORDS),
            written: 0,
            state: Some(WriterState::Inline(Box::new(Drain::new(
                Some(file),
                direct,
                behind,
            )))),
            threaded: true,
            stopped: None,
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
            state: Some(WriterState::Inline(Box::new(Drain::new(None, None, None)))),
            threaded: false,
            stopped: None,
        }
    }

    #[inline]
    pub fn append(&mut self, r: &IoRecord) -> io::Result<()> {
        self.batch.push(*r);
        self.written += 1;
        if self.batch.len() >= BATCH_RECORDS {
            let handed = self.hand_off();
            return self.remember(handed);
        }
        Ok(())
    }

    /// Keeps the first error that stopped the writer, and turns later
    /// calls' errors into it.
    fn remember<T>(&mut self, result: io::Result<T>) -> io::Result<T> {
        match (result, &self.stopped) {
            (Ok(v), _) => Ok(v),
            (Err(_), Some(first)) => Err(Self::again(first)),
            (Err(e), None) => {
                self.stopped = Some((e.raw_os_error(), e.kind(), e.to_string()));
                Err(e)
            }
        }
    }

    fn again((code, kind, text): &(Option<i32>, io::ErrorKind, String)) -> io::Error {
        match code {
            Some(c) => io::Error::from_raw_os_error(*c),
            None => io::Error::new(*kind, text.clone()),
        }
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
                    for mut batch in full_rx {
                        drain.write(&batch)?;
                        batch.clear();
                        let _ = empty_tx.try_send(batch);
                    }
                    drain.finish()?;
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
        let closed = self.close();
        self.remember(closed)
    }

    fn close(&mut self) -> io::Result<Tally> {
        let batch = std::mem::take(&mut self.batch);
        match self.state.take() {
            None => Err(io::Error::other("the records writer was already closed")),
            Some(WriterState::Inline(mut drain)) => {
                drain.write(&batch)?;
                drain.finish()?;
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

/// Opens `path` for reading if it is a regular file. A results directory
/// may be hostile or damaged: opening a FIFO would wait forever for a
/// writer and a device would be read without end, so the open does not
/// block (O_NONBLOCK, which regular files ignore) and anything but a
/// regular file is refused.
pub fn open_regular(path: &Path) -> io::Result<File> {
    use std::os::unix::fs::OpenOptionsExt;
    let file = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NONBLOCK | libc::O_NOCTTY)
        .open(path)?;
    if !file.metadata()?.is_file() {
        return Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            format!(
                "{} is not a regular file; a results directory holds only files written by flashlab",
                path.display()
            ),
        ));
    }
    Ok(file)
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
        let mut file = open_regular(path)?;
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
        let mut file = open_regular(&self.path)?;
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
                format!(
                    "{}: record {pos} is damaged (a bad mode code, or a completion before its submission)",
                    self.path.display()
                ),
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
                RecordsError::Io(io::Error::new(
                    io::ErrorKind::InvalidData,
                    "a damaged record (a bad mode code, or a completion before its submission)",
                ))
            })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_record_completed_before_its_submission_is_refused_not_read_as_0_ns() {
        let r = IoRecord {
            index: 0,
            submit_ns: 1_000,
            complete_ns: 999,
            offset_bytes: 0,
            size_bytes: 4096,
            stream: 0,
            mode: Mode::Read,
            flags: 0,
        };
        assert!(IoRecord::decode(&r.encode()).is_none());
        let same = IoRecord {
            complete_ns: 1_000,
            ..r
        };
        assert_eq!(IoRecord::decode(&same.encode()).unwrap().latency_ns(), 0);
    }

    #[test]
    fn a_batch_is_written_as_the_documented_little_endian_layout() {
        // Every field distinct in every byte, so a field in the wrong place,
        // a byte order or a padding byte shows.
        let recs = [
            IoRecord {
                index: 0x0102_0304_0506_0708,
                submit_ns: 0x1112_1314_1516_1718,
                complete_ns: 0x2122_2324_2526_2728,
                offset_bytes: 0x3132_3334_3536_3738,
                size_bytes: 0x4142_4344,
                stream: 0x5152,
                mode: Mode::Trim,
                flags: FLAG_WARMUP | FLAG_ERROR,
            },
            IoRecord {
                index: 9,
                submit_ns: 1,
                complete_ns: 2,
                offset_bytes: 4096,
                size_bytes: 512,
                stream: 1,
                mode: Mode::Write,
                flags: 0,
            },
        ];
        let mut buf = Vec::new();
        let bytes = batch_bytes(&recs, &mut buf).to_vec();
        let mut want: Vec<u8> = Vec::new();
        want.extend_from_slice(&[8, 7, 6, 5, 4, 3, 2, 1]);
        want.extend_from_slice(&[0x18, 0x17, 0x16, 0x15, 0x14, 0x13, 0x12, 0x11]);
        want.extend_from_slice(&[0x28, 0x27, 0x26, 0x25, 0x24, 0x23, 0x22, 0x21]);
        want.extend_from_slice(&[0x38, 0x37, 0x36, 0x35, 0x34, 0x33, 0x32, 0x31]);
        want.extend_from_slice(&[0x44, 0x43, 0x42, 0x41, 0x52, 0x51, 2, 3]);
        want.extend_from_slice(&[9, 0, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0]);
        want.extend_from_slice(&[2, 0, 0, 0, 0, 0, 0, 0, 0, 16, 0, 0, 0, 0, 0, 0]);
        want.extend_from_slice(&[0, 2, 0, 0, 1, 0, 1, 0]);
        assert_eq!(bytes, want);
        let encoded: Vec<u8> = recs.iter().flat_map(|r| r.encode()).collect();
        assert_eq!(bytes, encoded);
        for (r, c) in recs.iter().zip(bytes.chunks_exact(RECORD_BYTES)) {
            assert_eq!(IoRecord::decode(c.try_into().unwrap()), Some(*r));
        }
    }

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

    /// Writes `recs` to `usual` with the usual writer and to `out` with the
    /// out-of-cache one; their tallies, in that order.
    fn write_usual_and_out_of_cache(recs: &[IoRecord], usual: &Path, out: &Path) -> [Tally; 2] {
        let write = |mut w: RecordWriter| {
            for r in recs {
                w.append(r).unwrap();
            }
            w.finish().unwrap()
        };
        [
            write(RecordWriter::create(usual).unwrap()),
            write(RecordWriter::create_out_of_cache(out).unwrap()),
        ]
    }

    /// Whether files in `dir` can be opened for direct IO.
    #[cfg(target_os = "linux")]
    fn takes_direct_io(dir: &Path) -> bool {
        use std::os::unix::fs::OpenOptionsExt;
        let probe = dir.join("direct-io-probe");
        let ok = std::fs::OpenOptions::new()
            .write(true)
            .create(true)
            .truncate(true)
            .custom_flags(libc::O_DIRECT)
            .open(&probe)
            .is_ok();
        let _ = std::fs::remove_file(probe);
        ok
    }

    #[test]
    fn an_out_of_cache_file_has_the_usual_bytes_at_every_block_and_batch_boundary() {
        // The header and records straddle direct IO's 4 KiB blocks: record
        // 101 ends at byte 4072, record 102 at 4112. Counts around a block,
        // a batch, a direct write (16 batches) and several, so the partial
        // block carried from one write to the next and the one `finish`
        // writes are both hit.
        let dir = tempfile::tempdir().unwrap();
        let batch = BATCH_RECORDS as u64;
        for n in [
            0,
            1,
            101,
            102,
            103,
            batch - 1,
            batch,
            batch + 1,
            3 * batch + 102,
            16 * batch,
            16 * batch + 1,
            35 * batch + 7,
        ] {
            let recs = mixed(n);
            let (usual, out) = (
                dir.path().join(format!("usual-{n}.bin")),
                dir.path().join(format!("out-{n}.bin")),
            );
            let tallies = write_usual_and_out_of_cache(&recs, &usual, &out);
            assert_eq!(
                std::fs::read(&out).unwrap(),
                std::fs::read(&usual).unwrap(),
                "{n} records"
            );
            assert_eq!(tallies[0].records(), n);
            assert_eq!(tallies[1].records(), n);
        }
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
        let tallies = write_usual_and_out_of_cache(&recs, &cached, &out);
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
        // Direct IO leaves only the page of the last, partial block (written
        // through the cache); drop-behind, where the file system refuses
        // direct IO, the last two chunks.
        let window = if takes_direct_io(dir.path()) {
            1
        } else {
            eprintln!("{}: no direct IO, drop-behind", dir.path().display());
            (2 * DropBehind::CHUNK_BYTES / page) as usize + 2
        };
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
        // a write fails on the records thread, and the writer must report
        // it (from `append` or `finish`), never succeed.
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
        // More than a direct write's worth (16 batches), so the
        // out-of-cache writer's direct write meets the full disk too.
        let recs = mixed(20 * BATCH_RECORDS as u64);
        let path = dir.path().join("records.bin");
        // The usual writer, then the out-of-cache one (direct IO where
        // tmpfs takes it, drop-behind where not).
        for out_of_cache in [false, true] {
            let _ = std::fs::remove_file(&path);
            let mut w = if out_of_cache {
                RecordWriter::create_out_of_cache(&path).unwrap()
            } else {
                RecordWriter::create(&path).unwrap()
            };
            let appended = recs.iter().try_for_each(|r| w.append(r));
            let outcome = appended.and_then(|()| w.finish().map(|_| ()));
            let err = outcome.expect_err("records beyond the disk's space were reported written");
            assert_eq!(
                err.kind(),
                io::ErrorKind::StorageFull,
                "out of cache: {out_of_cache}: {err}"
            );
        }
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
