//! Physical IO: the block requests of one device, from `block/block_rq_issue`
//! and `block/block_rq_complete`, filtered in the kernel on the device's
//! dev_t (`dev == MAJOR << 20 | MINOR`).
//!
//! The trace holds one line per request *issued* to the driver (the time
//! the device saw it), which is what a replay must reproduce: reads (R),
//! writes (W), discards and secure erases (T) and flushes (F; a zero-size
//! flush request, rwbs `FF` or `F`). Completions are matched to issues by
//! sector and size (flushes, which carry no sector, in order) to give each
//! request's service time; a completion with no matching issue (a request
//! issued before tracing started, or the zero-size write that a PREFLUSH
//! bio leaves behind once its flush request is done) counts as unmatched.
//! Completion counts by class (reads, writes including zero-size ones,
//! discards, flushes) are kept separately: they are what
//! `/sys/block/DEV/stat` counts, so a test compares them.

use std::collections::{HashMap, VecDeque};
use std::fs::File;
use std::io::BufWriter;

use flashlab_device::Mode;
use flashlab_trace::{TraceIo, TraceOp, TraceWriter};
use serde::Serialize;

use crate::event::{Event, Kind};
use crate::pipe::Sink;
use crate::{IoCounts, TraceError};

/// The request's kind, from the event's rwbs text (blk_fill_rwbs: an
/// optional `F` for PREFLUSH, then the operation W, R, D (DE: secure
/// erase), F (flush) or N (other), then flags: F (FUA), A, S, M).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Rwbs {
    pub preflush: bool,
    pub op: BlockOp,
    pub fua: bool,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum BlockOp {
    Read,
    Write,
    Discard,
    Flush,
    Other,
}

pub fn parse_rwbs(text: &str) -> Option<Rwbs> {
    let b = text.as_bytes();
    if b.is_empty() {
        return None;
    }
    let (preflush, rest) = if b[0] == b'F' && b.len() > 1 && b"WRDFN".contains(&b[1]) {
        (true, &b[1..])
    } else {
        (false, b)
    };
    let op = match rest[0] {
        b'R' => BlockOp::Read,
        b'W' => BlockOp::Write,
        b'D' => BlockOp::Discard,
        b'F' => BlockOp::Flush,
        b'N' => BlockOp::Other,
        _ => return None,
    };
    let flags = &rest[1..];
    let flags = flags.strip_prefix(b"E").unwrap_or(flags);
    Some(Rwbs {
        preflush,
        op,
        fua: flags.first() == Some(&b'F'),
    })
}

/// `7,0 WS 4096 () 2048 + 8 be,0,4 [comm]` (issue) or
/// `7,0 WS () 2048 + 8 be,0,4 [0]` (complete): rwbs, bytes (issue only),
/// sector, sectors.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct BlockEvent {
    pub rwbs: Rwbs,
    pub bytes: Option<u64>,
    pub sector: u64,
    pub sectors: u64,
}

pub fn parse_block(body: &str, issue: bool) -> Option<BlockEvent> {
    let mut cols = body.split_whitespace();
    let _dev = cols.next()?;
    let rwbs = parse_rwbs(cols.next()?)?;
    let bytes = if issue {
        Some(cols.next()?.parse::<u64>().ok()?)
    } else {
        None
    };
    // The command field `(...)` may be empty `()` or hold hex bytes.
    let mut tok = cols.next()?;
    if tok.starts_with('(') {
        while !tok.ends_with(')') {
            tok = cols.next()?;
        }
        tok = cols.next()?;
    }
    let sector = tok.parse::<u64>().ok()?;
    if cols.next()? != "+" {
        return None;
    }
    let sectors = cols.next()?.parse::<u64>().ok()?;
    Some(BlockEvent {
        rwbs,
        bytes,
        sector,
        sectors,
    })
}

/// What the physical reader measured besides the trace.
#[derive(Clone, Debug, Default, Serialize)]
pub struct PhysicalDetail {
    /// Completions by class, as /sys/block/DEV/stat counts them.
    pub completed: CompletionCounts,
    /// Completions matched to their issue (service time known).
    pub matched: u64,
    /// Completions with no issue seen (see the module doc).
    pub unmatched_completions: u64,
    /// Issues never seen completing before the trace stopped.
    pub outstanding_at_stop: u64,
    /// Service time (issue to completion) of the matched requests.
    pub service_time: ServiceTime,
    /// Requests with rwbs `N` (write-zeroes and others) or FUA writes.
    pub other_requests: u64,
    pub fua_writes: u64,
    /// Lines the reader could not parse (should be 0).
    pub unparsed_lines: u64,
}

#[derive(Clone, Debug, Default, Serialize, PartialEq, Eq)]
pub struct CompletionCounts {
    pub reads: u64,
    pub read_sectors: u64,
    pub writes: u64,
    pub write_sectors: u64,
    pub discards: u64,
    pub discard_sectors: u64,
    pub flushes: u64,
}

/// Service times in constant memory: count, sum, max and power-of-two
/// buckets (bucket i holds times in [2^i, 2^(i+1)) ns) for percentiles.
#[derive(Clone, Debug, Serialize)]
pub struct ServiceTime {
    pub count: u64,
    pub total_ns: u64,
    pub max_ns: u64,
    pub log2_buckets: Vec<u64>,
}

impl Default for ServiceTime {
    fn default() -> Self {
        ServiceTime {
            count: 0,
            total_ns: 0,
            max_ns: 0,
            log2_buckets: vec![0; 40],
        }
    }
}

impl ServiceTime {
    pub fn add(&mut self, ns: u64) {
        self.count += 1;
        self.total_ns = self.total_ns.saturating_add(ns);
        self.max_ns = self.max_ns.max(ns);
        let bucket = (64 - ns.max(1).leading_zeros() - 1) as usize;
        let last = self.log2_buckets.len() - 1;
        self.log2_buckets[bucket.min(last)] += 1;
    }

    pub fn mean_ns(&self) -> Option<f64> {
        (self.count > 0).then(|| self.total_ns as f64 / self.count as f64)
    }
}

/// The most issues we remember waiting for their completion: a bound on
/// memory if completions stop coming (a hung device); past it, new issues
/// are not matched (counted as unmatched when they complete).
const MAX_OUTSTANDING: usize = 1 << 20;

pub struct PhysicalSink {
    t0_ns: u64,
    out: TraceWriter<BufWriter<File>>,
    pub counts: IoCounts,
    pub detail: PhysicalDetail,
    outstanding: HashMap<(BlockOp, u64, u64), VecDeque<u64>>,
    outstanding_len: usize,
    flushes: VecDeque<u64>,
}

impl PhysicalSink {
    pub fn new(t0_ns: u64, file: File) -> Result<PhysicalSink, TraceError> {
        let out = TraceWriter::new(BufWriter::with_capacity(1 << 16, file))
            .map_err(|e| TraceError::io("writing the physical trace".to_string(), e))?;
        Ok(PhysicalSink {
            t0_ns,
            out,
            counts: IoCounts::default(),
            detail: PhysicalDetail::default(),
            outstanding: HashMap::new(),
            outstanding_len: 0,
            flushes: VecDeque::new(),
        })
    }

    fn emit(
        &mut self,
        time_ns: u64,
        op: TraceOp,
        offset_bytes: u64,
        size_bytes: u64,
    ) -> Result<(), TraceError> {
        self.out
            .write(&TraceIo {
                time_ns,
                op,
                offset_bytes,
                size_bytes,
            })
            .map_err(|e| TraceError::io("writing the physical trace".to_string(), e))
    }

    fn issue(&mut self, ts: u64, ev: BlockEvent) -> Result<(), TraceError> {
        let time_ns = ts.saturating_sub(self.t0_ns);
        let offset = ev.sector.saturating_mul(512);
        let size = match ev.bytes {
            Some(b) if b > 0 => b,
            _ => ev.sectors * 512,
        };
        if ev.rwbs.preflush && ev.rwbs.op != BlockOp::Flush {
            // A PREFLUSH riding on a request: the flush happens first.
            self.emit(time_ns, TraceOp::Flush, 0, 0)?;
            self.counts.flushes += 1;
        }
        let op = match ev.rwbs.op {
            BlockOp::Flush => {
                self.emit(time_ns, TraceOp::Flush, 0, 0)?;
                self.counts.flushes += 1;
                self.flushes.push_back(ts);
                if self.flushes.len() > MAX_OUTSTANDING {
                    self.flushes.pop_front();
                }
                return Ok(());
            }
            BlockOp::Other => {
                self.detail.other_requests += 1;
                return Ok(());
            }
            BlockOp::Read if size > 0 => {
                self.counts.reads += 1;
                self.counts.read_bytes += size;
                Mode::Read
            }
            BlockOp::Write if size > 0 => {
                self.counts.writes += 1;
                self.counts.write_bytes += size;
                if ev.rwbs.fua {
                    self.detail.fua_writes += 1;
                }
                Mode::Write
            }
            BlockOp::Discard if size > 0 => {
                self.counts.discards += 1;
                self.counts.discard_bytes += size;
                Mode::Trim
            }
            _ => return Ok(()),
        };
        self.emit(time_ns, TraceOp::Io(op), offset, size)?;
        if self.outstanding_len < MAX_OUTSTANDING {
            self.outstanding
                .entry((ev.rwbs.op, ev.sector, ev.sectors))
                .or_default()
                .push_back(ts);
            self.outstanding_len += 1;
        }
        Ok(())
    }

    fn complete(&mut self, ts: u64, ev: BlockEvent) {
        let c = &mut self.detail.completed;
        match ev.rwbs.op {
            BlockOp::Read => {
                c.reads += 1;
                c.read_sectors += ev.sectors;
            }
            BlockOp::Write | BlockOp::Other => {
                c.writes += 1;
                c.write_sectors += ev.sectors;
            }
            BlockOp::Discard => {
                c.discards += 1;
                c.discard_sectors += ev.sectors;
            }
            BlockOp::Flush => c.flushes += 1,
        }
        let issued = if ev.rwbs.op == BlockOp::Flush {
            self.flushes.pop_front()
        } else {
            let key = (ev.rwbs.op, ev.sector, ev.sectors);
            let found = self.outstanding.get_mut(&key).and_then(VecDeque::pop_front);
            if found.is_some() {
                self.outstanding_len -= 1;
                if self.outstanding.get(&key).is_some_and(VecDeque::is_empty) {
                    self.outstanding.remove(&key);
                }
            }
            found
        };
        match issued {
            Some(t) => {
                self.detail.matched += 1;
                self.detail.service_time.add(ts.saturating_sub(t));
            }
            None => self.detail.unmatched_completions += 1,
        }
    }

    pub fn finish(&mut self) {
        self.detail.outstanding_at_stop = (self.outstanding_len + self.flushes.len()) as u64;
    }
}

impl Sink for PhysicalSink {
    fn event(&mut self, ev: &Event) -> Result<(), TraceError> {
        match ev.kind {
            Kind::BlockIssue(b) => self.issue(ev.time_ns, b)?,
            Kind::BlockComplete(b) => self.complete(ev.time_ns, b),
            _ => self.detail.unparsed_lines += 1,
        }
        Ok(())
    }

    fn flush(&mut self) -> Result<(), TraceError> {
        self.out
            .flush()
            .map_err(|e| TraceError::io("writing the physical trace".to_string(), e))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rwbs_names_the_operation_and_its_flags() {
        let r = |t| parse_rwbs(t).unwrap();
        assert_eq!(r("FF").op, BlockOp::Flush);
        assert!(r("FF").preflush);
        assert_eq!(r("WS").op, BlockOp::Write);
        assert!(r("WFS").fua && !r("WFS").preflush);
        assert!(r("FWS").preflush && r("FWS").op == BlockOp::Write);
        assert_eq!(r("RA").op, BlockOp::Read);
        assert_eq!(r("DS").op, BlockOp::Discard);
        assert_eq!(r("DE").op, BlockOp::Discard);
        assert_eq!(r("N").op, BlockOp::Other);
        assert_eq!(parse_rwbs("X"), None);
    }

    #[test]
    fn issue_and_complete_bodies_parse() {
        let e = parse_block("7,0 DS 1048576 () 0 + 2048 be,0,4 [kworker/1:1H]", true).unwrap();
        assert_eq!((e.bytes, e.sector, e.sectors), (Some(1048576), 0, 2048));
        let e = parse_block("7,0 FF () 18446744073709551615 + 0 none,0,0 [0]", false).unwrap();
        assert_eq!(
            (e.rwbs.op, e.sector, e.sectors),
            (BlockOp::Flush, u64::MAX, 0)
        );
        let e = parse_block("8,0 W 4096 (2a 00 00) 100 + 8 be,0,4 [fio]", true).unwrap();
        assert_eq!((e.sector, e.sectors), (100, 8));
    }
}
