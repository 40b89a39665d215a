//! Reading an instance's binary per-CPU pipes (`per_cpu/cpuN/trace_pipe_raw`).
//!
//! The text `trace_pipe` makes the kernel format every event as text (and
//! merge the CPUs' buffers event by event) inside the reader's read call:
//! `perf record` of the tracer under TPC-C put about 15 % of its samples in
//! that formatting and most of the rest in the wake-ups and reads around it
//! (docs/oltp-tracing.md). The raw pipes hand out the ring buffer's pages as
//! they are, a page per read: the kernel only copies, and we decode the
//! few fields we use.
//!
//! Nothing about the binary layout is assumed beyond what tracefs
//! describes: the page header's fields (`events/header_page`: timestamp,
//! commit, data) and every event's fields (`events/SYSTEM/EVENT/format`:
//! name, offset, size, signedness) are read from the instance at start. The
//! record headers inside a page (`events/header_event`: a 32-bit word of a
//! 5-bit type_len and a 27-bit time delta, with type_len 29 padding, 30 a
//! time extension and 31 an absolute time stamp) are the ring buffer's
//! fixed encoding; header_event describes them in prose only, so it is
//! checked to still say what this decoder expects.
//!
//! Order: each CPU's pages are in time order; the reader drains every CPU,
//! then hands the events to the sink merged by timestamp (ties go to the
//! lower CPU, as trace_pipe does). An event is handed over only once it is
//! older than the moment that drain began: an event stamped before that
//! moment was committed before the drain read its CPU (a tracepoint records
//! within microseconds, with preemption off), so no later read can bring
//! an older one. Younger events wait for the next drain. trace_pipe merges
//! only what it has at hand, so an event committed on one CPU just after
//! the reader took later events of another arrived out of order there.

use std::collections::{HashMap, VecDeque};
use std::fmt;
use std::fs::File;
use std::io::{self, Read};
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Instant;

use crate::event::{Event, Kind};
use crate::logical;
use crate::physical::{parse_rwbs, BlockEvent};
use crate::pipe::{self, Sink, Wake, FLUSH_EVERY};
use crate::TraceError;

/// Why the raw pipes cannot be used (the session falls back to the text
/// pipe and says why).
#[derive(Debug)]
pub enum RawUnavailable {
    /// The ring buffer's pages are little-endian here only.
    BigEndian,
    /// A description file is missing or unreadable.
    Read { path: PathBuf, source: io::Error },
    /// A description does not hold what the decoder needs.
    Format { path: PathBuf, problem: String },
    /// The instance has no per-CPU raw pipe.
    NoCpus { dir: PathBuf },
}

impl fmt::Display for RawUnavailable {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            RawUnavailable::BigEndian => {
                f.write_str("this decoder reads little-endian ring-buffer pages only")
            }
            RawUnavailable::Read { path, source } => {
                write!(f, "cannot read {}: {source}", path.display())
            }
            RawUnavailable::Format { path, problem } => {
                write!(f, "{}: {problem}", path.display())
            }
            RawUnavailable::NoCpus { dir } => {
                write!(f, "no per_cpu/cpuN/trace_pipe_raw in {}", dir.display())
            }
        }
    }
}

impl std::error::Error for RawUnavailable {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            RawUnavailable::Read { source, .. } => Some(source),
            _ => None,
        }
    }
}

/// One field of a record: where it is and how to read it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Field {
    pub offset: usize,
    pub size: usize,
    pub signed: bool,
}

impl Field {
    /// The field as an unsigned number (1, 2, 4 or 8 bytes, little-endian),
    /// sign-extended when the field is signed; None past the record's end.
    fn read(&self, data: &[u8]) -> Option<u64> {
        let bytes = data.get(self.offset..self.offset + self.size)?;
        let mut v = [0u8; 8];
        v[..self.size.min(8)].copy_from_slice(&bytes[..self.size.min(8)]);
        let raw = u64::from_le_bytes(v);
        if self.signed && self.size < 8 && self.size > 0 {
            let shift = 64 - 8 * self.size as u32;
            Some((((raw << shift) as i64) >> shift) as u64)
        } else {
            Some(raw)
        }
    }

    /// A fixed-size char array up to its first NUL.
    fn text<'a>(&self, data: &'a [u8]) -> Option<&'a str> {
        let bytes = data.get(self.offset..self.offset + self.size)?;
        let end = bytes.iter().position(|&b| b == 0).unwrap_or(bytes.len());
        std::str::from_utf8(&bytes[..end]).ok()
    }
}

/// A parsed `format` (or `header_page`) file: its ID and its fields by name,
/// in file order.
#[derive(Debug, Default)]
pub struct Format {
    pub id: Option<u16>,
    pub fields: Vec<(String, String, Field)>,
}

impl Format {
    /// Parses lines like `\tfield:unsigned int fd;\toffset:16;\tsize:8;\tsigned:0;`
    /// (the declaration's last word is the name, `rwbs[10]` is `rwbs`).
    pub fn parse(text: &str) -> Format {
        let mut out = Format::default();
        for line in text.lines() {
            let line = line.trim();
            if let Some(id) = line.strip_prefix("ID:") {
                out.id = id.trim().parse().ok();
                continue;
            }
            let Some(rest) = line.strip_prefix("field:") else {
                continue;
            };
            let mut decl = None;
            let (mut offset, mut size, mut signed) = (None, None, false);
            for part in rest.split(';') {
                let part = part.trim();
                if let Some(v) = part.strip_prefix("offset:") {
                    offset = v.parse().ok();
                } else if let Some(v) = part.strip_prefix("size:") {
                    size = v.parse().ok();
                } else if let Some(v) = part.strip_prefix("signed:") {
                    signed = v == "1";
                } else if decl.is_none() && !part.is_empty() {
                    decl = Some(part);
                }
            }
            let (Some(decl), Some(offset), Some(size)) = (decl, offset, size) else {
                continue;
            };
            let name = decl.rsplit(' ').next().unwrap_or(decl);
            let name = name.split('[').next().unwrap_or(name);
            let ty = decl[..decl.len() - decl.rsplit(' ').next().unwrap_or("").len()].trim();
            out.fields.push((
                name.to_string(),
                ty.to_string(),
                Field {
                    offset,
                    size,
                    signed,
                },
            ));
        }
        out
    }

    pub fn field(&self, name: &str) -> Option<Field> {
        self.fields
            .iter()
            .find(|(n, _, _)| n == name)
            .map(|(_, _, f)| *f)
    }
}

/// How to decode one event id.
#[derive(Clone, Debug)]
enum Decoder {
    SysEnter {
        call: u8,
        args: Vec<Field>,
    },
    SysExit {
        call: u8,
        ret: Field,
    },
    Fork {
        parent_pid: Field,
        child_pid: Field,
    },
    Exec {
        pid: Field,
    },
    ProcessExit {
        pid: Field,
    },
    SyncInode {
        dev: Option<Field>,
        ino: Field,
    },
    Block {
        issue: bool,
        sector: Field,
        nr_sector: Field,
        bytes: Option<Field>,
        rwbs: Field,
    },
}

/// The page layout and the decoders of one instance's events.
#[derive(Debug)]
pub struct Layout {
    /// Bytes one read returns: the page header and its data area.
    pub page_size: usize,
    timestamp: Field,
    commit: Field,
    data_offset: usize,
    common_type: Field,
    common_pid: Field,
    decoders: HashMap<u16, Decoder>,
}

/// The commit word's low bits are the bytes of data in the page; its top
/// bits flag missed events (counted from `stats` instead).
const COMMIT_MASK: u64 = (1 << 27) - 1;
const TYPE_PADDING: u32 = 29;
const TYPE_TIME_EXTEND: u32 = 30;
const TYPE_TIME_STAMP: u32 = 31;
/// An absolute time stamp keeps the clock's top bits from before.
const TS_MSB: u64 = 0x1f << 59;

/// Reads a tracefs description file. In large reads: header_event gives
/// only its first 32 bytes to std's small first read and then nothing.
fn read_text(path: &Path) -> Result<String, RawUnavailable> {
    let err = |source| RawUnavailable::Read {
        path: path.to_path_buf(),
        source,
    };
    let mut f = File::open(path).map_err(err)?;
    let mut buf = vec![0u8; 1 << 16];
    let mut text = Vec::new();
    loop {
        match f.read(&mut buf) {
            Ok(0) => break,
            Ok(n) => text.extend_from_slice(&buf[..n]),
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err(err(e)),
        }
    }
    Ok(String::from_utf8_lossy(&text).into_owned())
}

fn problem(path: &Path, problem: impl Into<String>) -> RawUnavailable {
    RawUnavailable::Format {
        path: path.to_path_buf(),
        problem: problem.into(),
    }
}

impl Layout {
    /// Reads the instance's descriptions of the page and of `events`.
    pub fn load(instance: &Path, events: &[(&str, &str)]) -> Result<Layout, RawUnavailable> {
        if cfg!(target_endian = "big") {
            return Err(RawUnavailable::BigEndian);
        }
        let header_event = instance.join("events/header_event");
        let text = read_text(&header_event)?;
        let words = text.split_whitespace().collect::<Vec<_>>().join(" ");
        for expected in [
            "type_len : 5 bits",
            "time_delta : 27 bits",
            "type == 29",
            "type == 30",
            "type == 31",
        ] {
            if !words.contains(expected) {
                return Err(problem(&header_event, format!("does not say `{expected}`")));
            }
        }
        let header_page = instance.join("events/header_page");
        let page = Format::parse(&read_text(&header_page)?);
        let need = |name: &str| {
            page.field(name)
                .ok_or_else(|| problem(&header_page, format!("has no field {name}")))
        };
        let (timestamp, commit, data) = (need("timestamp")?, need("commit")?, need("data")?);
        let mut layout = Layout {
            page_size: data.offset + data.size,
            timestamp,
            commit,
            data_offset: data.offset,
            // Both are set from the first event's format below.
            common_type: Field {
                offset: 0,
                size: 2,
                signed: false,
            },
            common_pid: Field {
                offset: 4,
                size: 4,
                signed: true,
            },
            decoders: HashMap::new(),
        };
        let mut common_seen = false;
        for (system, event) in events {
            let path = instance
                .join("events")
                .join(system)
                .join(event)
                .join("format");
            let format = Format::parse(&read_text(&path)?);
            let id = format.id.ok_or_else(|| problem(&path, "has no ID"))?;
            let field = |name: &str| {
                format
                    .field(name)
                    .ok_or_else(|| problem(&path, format!("has no field {name}")))
            };
            let (ty, pid) = (field("common_type")?, field("common_pid")?);
            if common_seen && (ty, pid) != (layout.common_type, layout.common_pid) {
                return Err(problem(
                    &path,
                    "common_type or common_pid is not where the other events have it",
                ));
            }
            (layout.common_type, layout.common_pid) = (ty, pid);
            common_seen = true;
            let decoder = if let Some(call) = event.strip_prefix("sys_enter_") {
                let call = logical::syscall_index(call).ok_or_else(|| {
                    problem(&path, "is a syscall the logical side does not trace")
                })?;
                // The arguments, in order: every field after the common
                // ones and the syscall number (what the text pipe prints).
                let args = format
                    .fields
                    .iter()
                    .filter(|(n, ty, _)| {
                        !n.starts_with("common_")
                            && n != "__syscall_nr"
                            && !ty.starts_with("__data_loc")
                    })
                    .map(|(_, _, f)| *f)
                    .take(6)
                    .collect();
                Decoder::SysEnter { call, args }
            } else if let Some(call) = event.strip_prefix("sys_exit_") {
                let call = logical::syscall_index(call).ok_or_else(|| {
                    problem(&path, "is a syscall the logical side does not trace")
                })?;
                Decoder::SysExit {
                    call,
                    ret: field("ret")?,
                }
            } else {
                match *event {
                    "sched_process_fork" => Decoder::Fork {
                        parent_pid: field("parent_pid")?,
                        child_pid: field("child_pid")?,
                    },
                    "sched_process_exec" => Decoder::Exec { pid: field("pid")? },
                    "sched_process_exit" => Decoder::ProcessExit { pid: field("pid")? },
                    "ext4_sync_file_enter" | "xfs_file_fsync" => Decoder::SyncInode {
                        dev: Some(field("dev")?),
                        ino: field("ino")?,
                    },
                    "btrfs_sync_file" => Decoder::SyncInode {
                        dev: None,
                        ino: field("ino")?,
                    },
                    "block_rq_issue" | "block_rq_complete" => Decoder::Block {
                        issue: *event == "block_rq_issue",
                        sector: field("sector")?,
                        nr_sector: field("nr_sector")?,
                        bytes: if *event == "block_rq_issue" {
                            Some(field("bytes")?)
                        } else {
                            None
                        },
                        rwbs: field("rwbs")?,
                    },
                    other => return Err(problem(&path, format!("{other} has no decoder"))),
                }
            };
            layout.decoders.insert(id, decoder);
        }
        Ok(layout)
    }

    /// Decodes one record's data (the event's fields, from common_type on).
    fn decode(&self, data: &[u8]) -> (u32, Kind) {
        let pid = self.common_pid.read(data).unwrap_or(0) as u32;
        let id = self.common_type.read(data).unwrap_or(u64::MAX);
        let kind = match u16::try_from(id).ok().and_then(|id| self.decoders.get(&id)) {
            Some(d) => decode_kind(d, data).unwrap_or(Kind::Unknown),
            None => Kind::Unknown,
        };
        (pid, kind)
    }

    /// Decodes one page (as a read returned it), appending its events.
    /// Returns false when the page is malformed (its events up to there
    /// are kept; the sinks count the rest as one unparsed event).
    pub fn page(&self, page: &[u8], out: &mut VecDeque<Event>) -> bool {
        let (Some(mut ts), Some(commit)) = (self.timestamp.read(page), self.commit.read(page))
        else {
            return false;
        };
        let len = (commit & COMMIT_MASK) as usize;
        let Some(data) = page.get(self.data_offset..self.data_offset + len) else {
            return false;
        };
        let word = |at: usize| -> Option<u32> {
            data.get(at..at + 4)
                .map(|b| u32::from_le_bytes([b[0], b[1], b[2], b[3]]))
        };
        let mut at = 0;
        while at + 4 <= data.len() {
            let Some(head) = word(at) else { return false };
            let type_len = head & 0x1f;
            let delta = u64::from(head >> 5);
            let (record, size) = match type_len {
                TYPE_PADDING => {
                    // A zero delta marks the unused rest of the page; a
                    // discarded event keeps its length (and adds no time,
                    // as the kernel's own reader does).
                    if delta == 0 {
                        break;
                    }
                    let Some(len) = word(at + 4) else {
                        return false;
                    };
                    at += 4 + len as usize;
                    continue;
                }
                TYPE_TIME_EXTEND => {
                    let Some(high) = word(at + 4) else {
                        return false;
                    };
                    ts = ts.wrapping_add((u64::from(high) << 27) | delta);
                    at += 8;
                    continue;
                }
                TYPE_TIME_STAMP => {
                    let Some(high) = word(at + 4) else {
                        return false;
                    };
                    ts = ((u64::from(high) << 27) | delta) | (ts & TS_MSB);
                    at += 8;
                    continue;
                }
                0 => {
                    // Length in the next word (counting itself), data after.
                    let Some(len) = word(at + 4) else {
                        return false;
                    };
                    let len = len as usize;
                    if len < 4 {
                        return false;
                    }
                    (data.get(at + 8..at + 4 + len), 4 + len)
                }
                n => {
                    let len = 4 * n as usize;
                    (data.get(at + 4..at + 4 + len), 4 + len)
                }
            };
            let Some(record) = record else { return false };
            ts = ts.wrapping_add(delta);
            let (pid, kind) = self.decode(record);
            out.push_back(Event {
                pid,
                time_ns: ts,
                kind,
            });
            at += size;
        }
        true
    }
}

fn decode_kind(d: &Decoder, data: &[u8]) -> Option<Kind> {
    Some(match d {
        Decoder::SysEnter { call, args } => {
            let mut out = [0u64; 6];
            for (slot, f) in out.iter_mut().zip(args) {
                *slot = f.read(data)?;
            }
            Kind::SysEnter {
                call: *call,
                args: out,
            }
        }
        Decoder::SysExit { call, ret } => Kind::SysExit {
            call: *call,
            ret: ret.read(data)? as i64,
        },
        Decoder::Fork {
            parent_pid,
            child_pid,
        } => Kind::Fork {
            parent_pid: parent_pid.read(data)? as u32,
            child_pid: child_pid.read(data)? as u32,
        },
        Decoder::Exec { pid } => Kind::Exec {
            pid: pid.read(data)? as u32,
        },
        Decoder::ProcessExit { pid } => Kind::ProcessExit {
            pid: pid.read(data)? as u32,
        },
        Decoder::SyncInode { dev, ino } => Kind::SyncInode {
            dev: match dev {
                Some(f) => f.read(data)? as u32,
                None => 0,
            },
            ino: ino.read(data)?,
        },
        Decoder::Block {
            issue,
            sector,
            nr_sector,
            bytes,
            rwbs,
        } => {
            let b = BlockEvent {
                rwbs: parse_rwbs(rwbs.text(data)?)?,
                bytes: match bytes {
                    Some(f) => Some(f.read(data)?),
                    None => None,
                },
                sector: sector.read(data)?,
                sectors: nr_sector.read(data)?,
            };
            if *issue {
                Kind::BlockIssue(b)
            } else {
                Kind::BlockComplete(b)
            }
        }
    })
}

/// Opens every CPU's raw pipe of the instance, non-blocking.
pub fn open_cpus(instance: &Path) -> Result<Vec<File>, RawUnavailable> {
    let dir = instance.join("per_cpu");
    let entries = std::fs::read_dir(&dir).map_err(|source| RawUnavailable::Read {
        path: dir.clone(),
        source,
    })?;
    let mut cpus: Vec<(u32, PathBuf)> = entries
        .flatten()
        .filter_map(|e| {
            let n = e.file_name().to_str()?.strip_prefix("cpu")?.parse().ok()?;
            Some((n, e.path().join("trace_pipe_raw")))
        })
        .collect();
    cpus.sort();
    let mut files = Vec::with_capacity(cpus.len());
    for (_, path) in cpus {
        let f = std::fs::OpenOptions::new()
            .read(true)
            .custom_flags(libc::O_NONBLOCK)
            .open(&path)
            .map_err(|source| RawUnavailable::Read { path, source })?;
        files.push(f);
    }
    if files.is_empty() {
        return Err(RawUnavailable::NoCpus { dir });
    }
    Ok(files)
}

/// Reads the raw pipes until `stop` is set and every one is drained,
/// handing the events to `sink` in time order (see the module doc).
pub fn run<S: Sink + ?Sized>(
    mut cpus: Vec<File>,
    layout: &Layout,
    stop: &Arc<AtomicBool>,
    sink: &mut S,
    wake: Wake,
) -> Result<(), TraceError> {
    let mut page = vec![0u8; layout.page_size];
    let mut queues: Vec<VecDeque<Event>> = cpus.iter().map(|_| VecDeque::new()).collect();
    let mut flushed = Instant::now();
    loop {
        // Read before the drain: once set, tracing is already off, so a
        // drain that starts after it finds everything.
        let stopping = stop.load(Ordering::Acquire);
        let drain_start_ns = crate::monotonic_ns();
        let mut read_any = false;
        for (cpu, queue) in cpus.iter_mut().zip(queues.iter_mut()) {
            loop {
                match cpu.read(&mut page) {
                    Ok(0) => break,
                    Ok(n) => {
                        read_any = true;
                        if !layout.page(&page[..n], queue) {
                            queue.push_back(Event {
                                pid: 0,
                                time_ns: queue.back().map_or(0, |e| e.time_ns),
                                kind: Kind::Unknown,
                            });
                        }
                    }
                    Err(e) if e.kind() == io::ErrorKind::WouldBlock => break,
                    Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                    Err(e) => return Err(TraceError::io("reading trace_pipe_raw".to_string(), e)),
                }
            }
        }
        if stopping && !read_any {
            merge(&mut queues, u64::MAX, sink)?;
            break;
        }
        merge(&mut queues, drain_start_ns, sink)?;
        if !read_any {
            if flushed.elapsed() >= FLUSH_EVERY {
                sink.flush()?;
                flushed = Instant::now();
            }
            pipe::wait_for(&cpus, wake);
        }
    }
    sink.flush()
}

/// Hands over, in time order, every queued event older than `before_ns`.
fn merge<S: Sink + ?Sized>(
    queues: &mut [VecDeque<Event>],
    before_ns: u64,
    sink: &mut S,
) -> Result<(), TraceError> {
    loop {
        let mut next: Option<(usize, u64)> = None;
        for (i, q) in queues.iter().enumerate() {
            if let Some(e) = q.front() {
                if e.time_ns < before_ns && next.is_none_or(|(_, t)| e.time_ns < t) {
                    next = Some((i, e.time_ns));
                }
            }
        }
        let Some((i, _)) = next else {
            return Ok(());
        };
        let ev = queues[i].pop_front().expect("has a front");
        sink.event(&ev)?;
    }
}

/// x86-64's `header_page` as tracefs describes it.
const HEADER_PAGE: &str = "\tfield: u64 timestamp;\toffset:0;\tsize:8;\tsigned:0;\n\
    \tfield: local_t commit;\toffset:8;\tsize:8;\tsigned:1;\n\
    \tfield: int overwrite;\toffset:8;\tsize:1;\tsigned:1;\n\
    \tfield: char data;\toffset:16;\tsize:4080;\tsigned:0;\n";

impl Layout {
    /// A layout without a tracefs instance, for the unit tests and the
    /// fuzzer (`crate::fuzz`): event 7 is the first traced syscall's exit
    /// (a pid at 4, an 8-byte signed `ret` at 8), event 8 its entry (six
    /// 8-byte arguments from 8), event 9 a `block_rq_issue` (sector at 8,
    /// nr_sector at 16, bytes at 20, a 10-byte rwbs at 24).
    pub(crate) fn fixture() -> Layout {
        let page = Format::parse(HEADER_PAGE);
        let field = |offset, size, signed| Field {
            offset,
            size,
            signed,
        };
        let mut decoders = HashMap::new();
        decoders.insert(
            7,
            Decoder::SysExit {
                call: 0,
                ret: field(8, 8, true),
            },
        );
        decoders.insert(
            8,
            Decoder::SysEnter {
                call: 0,
                args: (0..6).map(|i| field(8 + 8 * i, 8, false)).collect(),
            },
        );
        decoders.insert(
            9,
            Decoder::Block {
                issue: true,
                sector: field(8, 8, false),
                nr_sector: field(16, 4, false),
                bytes: Some(field(20, 4, false)),
                rwbs: field(24, 10, false),
            },
        );
        Layout {
            page_size: 4096,
            timestamp: page.field("timestamp").unwrap_or(field(0, 8, false)),
            commit: page.field("commit").unwrap_or(field(8, 8, true)),
            data_offset: 16,
            common_type: field(0, 2, false),
            common_pid: field(4, 4, true),
            decoders,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn format_files_give_each_field_its_offset_size_and_sign() {
        let f = Format::parse(
            "name: block_rq_issue\nID: 2104\nformat:\n\
             \tfield:unsigned short common_type;\toffset:0;\tsize:2;\tsigned:0;\n\
             \tfield:int common_pid;\toffset:4;\tsize:4;\tsigned:1;\n\n\
             \tfield:char rwbs[10];\toffset:34;\tsize:10;\tsigned:0;\n\
             \tfield:__data_loc char[] cmd;\toffset:60;\tsize:4;\tsigned:0;\n\n\
             print fmt: \"%d,%d %s\", REC->dev\n",
        );
        assert_eq!(f.id, Some(2104));
        assert_eq!(
            f.field("common_pid"),
            Some(Field {
                offset: 4,
                size: 4,
                signed: true
            })
        );
        assert_eq!(f.field("rwbs").map(|r| (r.offset, r.size)), Some((34, 10)));
        assert_eq!(f.fields[3].1, "__data_loc char[]");
        let page = Format::parse(HEADER_PAGE);
        assert_eq!(page.field("data").map(|d| d.offset + d.size), Some(4096));
    }

    /// A fake instance directory: header files and one event's format.
    fn instance(header_event: &str) -> tempfile::TempDir {
        let dir = tempfile::tempdir().unwrap();
        let events = dir.path().join("events");
        std::fs::create_dir_all(events.join("block/block_rq_complete")).unwrap();
        std::fs::write(events.join("header_page"), HEADER_PAGE).unwrap();
        std::fs::write(events.join("header_event"), header_event).unwrap();
        std::fs::write(
            events.join("block/block_rq_complete/format"),
            "name: block_rq_complete\nID: 9\nformat:\n\
             \tfield:unsigned short common_type;\toffset:0;\tsize:2;\tsigned:0;\n\
             \tfield:int common_pid;\toffset:4;\tsize:4;\tsigned:1;\n\n\
             \tfield:sector_t sector;\toffset:16;\tsize:8;\tsigned:0;\n\
             \tfield:unsigned int nr_sector;\toffset:24;\tsize:4;\tsigned:0;\n\
             \tfield:char rwbs[10];\toffset:34;\tsize:10;\tsigned:0;\n",
        )
        .unwrap();
        dir
    }

    const HEADER_EVENT: &str = "# compressed entry header\n\ttype_len    :    5 bits\n\
        \ttime_delta  :   27 bits\n\tarray       :   32 bits\n\n\
        \tpadding     : type == 29\n\ttime_extend : type == 30\n\
        \ttime_stamp : type == 31\n\tdata max type_len  == 28\n";

    #[test]
    fn layouts_come_from_the_instances_descriptions() {
        let dir = instance(HEADER_EVENT);
        let events = [("block", "block_rq_complete")];
        let layout = Layout::load(dir.path(), &events).unwrap();
        assert_eq!(layout.page_size, 4096);
        let mut record = vec![0u8; 48];
        record[0] = 9;
        record[4..8].copy_from_slice(&77i32.to_le_bytes());
        record[16..24].copy_from_slice(&2048u64.to_le_bytes());
        record[24..28].copy_from_slice(&8u32.to_le_bytes());
        record[34..36].copy_from_slice(b"WS");
        let (pid, kind) = layout.decode(&record);
        assert_eq!(pid, 77);
        assert!(
            matches!(kind, Kind::BlockComplete(b) if b.sector == 2048 && b.sectors == 8 && b.rwbs.op == crate::physical::BlockOp::Write),
            "{kind:?}"
        );
        // An id without a decoder is an unknown event, not a misreading.
        record[0] = 10;
        assert_eq!(layout.decode(&record).1, Kind::Unknown);
    }

    #[test]
    fn descriptions_that_do_not_read_as_expected_refuse_the_raw_reader() {
        let dir = instance("# compressed entry header\n\ttype_len    :    6 bits\n");
        let e = Layout::load(dir.path(), &[("block", "block_rq_complete")]).unwrap_err();
        assert!(
            e.to_string()
                .ends_with("header_event: does not say `type_len : 5 bits`"),
            "{e}"
        );
        let dir = instance(HEADER_EVENT);
        let e = Layout::load(dir.path(), &[("block", "block_rq_issue")]).unwrap_err();
        assert!(matches!(e, RawUnavailable::Read { .. }), "{e}");
        std::fs::write(
            dir.path().join("events/block/block_rq_complete/format"),
            "name: block_rq_complete\nID: 9\n",
        )
        .unwrap();
        let e = Layout::load(dir.path(), &[("block", "block_rq_complete")]).unwrap_err();
        assert!(e.to_string().ends_with("has no field common_type"), "{e}");
    }

    #[test]
    fn signed_fields_extend_their_sign() {
        let f = Field {
            offset: 0,
            size: 4,
            signed: true,
        };
        assert_eq!(f.read(&(-5i32).to_le_bytes()).map(|v| v as i64), Some(-5));
        let u = Field { signed: false, ..f };
        assert_eq!(u.read(&(-5i32).to_le_bytes()), Some(0xffff_fffb));
        assert_eq!(u.read(&[1, 2, 3]), None);
    }

    fn layout() -> Layout {
        Layout::fixture()
    }

    fn record(pid: u32, ret: i64) -> Vec<u8> {
        let mut r = vec![7, 0, 0, 0];
        r.extend_from_slice(&pid.to_le_bytes());
        r.extend_from_slice(&ret.to_le_bytes());
        r
    }

    #[test]
    fn a_page_yields_its_events_with_their_times() {
        let mut data = Vec::new();
        // A 16-byte record in the compact form: type_len 4, delta 5.
        data.extend_from_slice(&((5u32 << 5) | 4).to_le_bytes());
        data.extend_from_slice(&record(100, 8192));
        // A time extension of 3 << 27 + 2, then a record with delta 1.
        data.extend_from_slice(&((2u32 << 5) | TYPE_TIME_EXTEND).to_le_bytes());
        data.extend_from_slice(&3u32.to_le_bytes());
        data.extend_from_slice(&((1u32 << 5) | 4).to_le_bytes());
        data.extend_from_slice(&record(101, -14));
        // A discarded event (padding with a delta): skipped, adds no time.
        // Its length word counts the record's bytes after the header.
        data.extend_from_slice(&((9u32 << 5) | TYPE_PADDING).to_le_bytes());
        data.extend_from_slice(&8u32.to_le_bytes());
        data.extend_from_slice(&[0; 4]);
        // The long form: type_len 0, the length word (data + itself).
        data.extend_from_slice(&(4u32 << 5).to_le_bytes());
        data.extend_from_slice(&20u32.to_le_bytes());
        data.extend_from_slice(&record(102, 1));
        // An absolute time stamp, then a record with delta 0.
        data.extend_from_slice(&((6u32 << 5) | TYPE_TIME_STAMP).to_le_bytes());
        data.extend_from_slice(&1u32.to_le_bytes());
        data.extend_from_slice(&4u32.to_le_bytes());
        data.extend_from_slice(&record(103, 2));
        let mut page = vec![0u8; 4096];
        page[..8].copy_from_slice(&1_000u64.to_le_bytes());
        // The commit word: data length, with the missed-events flag set.
        let commit = data.len() as u64 | (1 << 31);
        page[8..16].copy_from_slice(&commit.to_le_bytes());
        page[16..16 + data.len()].copy_from_slice(&data);
        let mut out = VecDeque::new();
        assert!(layout().page(&page, &mut out));
        let got: Vec<(u32, u64, Kind)> = out.iter().map(|e| (e.pid, e.time_ns, e.kind)).collect();
        let exit = |ret| Kind::SysExit { call: 0, ret };
        let extended = 1_005 + (3u64 << 27) + 2 + 1;
        let absolute = (1u64 << 27) | 6;
        assert_eq!(
            got,
            vec![
                (100, 1_005, exit(8192)),
                (101, extended, exit(-14)),
                (102, extended + 4, exit(1)),
                (103, absolute, exit(2)),
            ]
        );
    }

    #[test]
    fn a_truncated_page_keeps_the_events_before_the_cut() {
        let mut page = [0u8; 64];
        // 24 bytes of data: a whole record, then a header whose data is cut.
        page[8..16].copy_from_slice(&24u64.to_le_bytes());
        page[16..20].copy_from_slice(&((5u32 << 5) | 4).to_le_bytes());
        page[20..36].copy_from_slice(&record(1, 0));
        page[36..40].copy_from_slice(&((5u32 << 5) | 4).to_le_bytes());
        let mut out = VecDeque::new();
        assert!(!layout().page(&page[..40], &mut out), "cut inside a record");
        assert_eq!(out.len(), 1);
    }

    struct Collect(Vec<u64>);
    impl Sink for Collect {
        fn event(&mut self, ev: &Event) -> Result<(), TraceError> {
            self.0.push(ev.time_ns);
            Ok(())
        }
        fn flush(&mut self) -> Result<(), TraceError> {
            Ok(())
        }
    }

    #[test]
    fn cpus_merge_by_time_and_young_events_wait_for_the_next_drain() {
        let ev = |t| Event {
            pid: 1,
            time_ns: t,
            kind: Kind::Unknown,
        };
        let mut queues = vec![
            VecDeque::from([ev(1), ev(4), ev(9)]),
            VecDeque::from([ev(2), ev(3), ev(12)]),
        ];
        let mut sink = Collect(Vec::new());
        merge(&mut queues, 10, &mut sink).unwrap();
        assert_eq!(sink.0, vec![1, 2, 3, 4, 9]);
        queues[0].push_back(ev(11));
        merge(&mut queues, u64::MAX, &mut sink).unwrap();
        assert_eq!(sink.0, vec![1, 2, 3, 4, 9, 11, 12]);
    }
}
