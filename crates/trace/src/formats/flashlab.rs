//! flashlab's own trace format: a text line per request, easy to grep,
//! diff and load (`pandas.read_csv(path, sep=" ", comment="#", names=[...])`).
//!
//! ```text
//! # flashlab-trace v1
//! # time_ns op offset_bytes size_bytes
//! 0 W 1048576 4096
//! 1200 R 0 32768
//! 5000 F 0 0
//! ```
//!
//! `op` is R (read), W (write), T (trim) or F (flush).
//!
//! ## Per-file (logical) traces
//!
//! A trace of file-system requests (what a DBMS asks of its files, before
//! the file system maps them to blocks) extends v1 backward-compatibly with
//! `# file` declarations and a fifth column naming the file:
//!
//! ```text
//! # flashlab-trace v1
//! # time_ns op offset_bytes size_bytes file
//! # file 0 wal pg_wal/000000010000000000000001
//! # file 1 data base/5/16384
//! 0 W 0 8192 0
//! 900 F 0 0 0
//! 1200 R 16384 8192 1
//! ```
//!
//! A `# file ID KIND PATH` line declares file `ID` (KIND: `data`, `wal` or
//! `other`; PATH: the rest of the line, relative to the traced directory)
//! before its first request. `op` is R, W, F (fsync), D (fdatasync) or S
//! (sync_file_range: offset and size of the range, size 0 = to the end).
//! Older readers skip the comments and refuse the five-column lines ("expected
//! 4 fields"); [`parse`] refuses them too with a line naming the physical
//! trace, because file offsets are not device offsets: a per-file trace is
//! read with [`parse_file_trace`] or line by line with [`parse_line`].

use std::io::{self, Write};

use flashlab_device::Mode;

use super::{field, quote, request};
use crate::{LineError, TraceIo, TraceOp};

pub const HEADER: &str = "# flashlab-trace v1\n# time_ns op offset_bytes size_bytes\n";

/// The header of a per-file (logical) trace.
pub const FILE_HEADER: &str = "# flashlab-trace v1\n# time_ns op offset_bytes size_bytes file\n";

/// What a file holds, as far as the IO path cares: a DBMS's relation data
/// (tables, indexes), its write-ahead log, or anything else.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum FileKind {
    Data,
    Wal,
    Other,
}

impl FileKind {
    pub const ALL: [FileKind; 3] = [FileKind::Data, FileKind::Wal, FileKind::Other];

    pub fn name(self) -> &'static str {
        match self {
            FileKind::Data => "data",
            FileKind::Wal => "wal",
            FileKind::Other => "other",
        }
    }

    pub fn parse(text: &str) -> Option<FileKind> {
        match text {
            "data" => Some(FileKind::Data),
            "wal" => Some(FileKind::Wal),
            "other" => Some(FileKind::Other),
            _ => None,
        }
    }
}

/// A request to a file: what the application asked of the file system.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FileOp {
    Read,
    Write,
    Fsync,
    Fdatasync,
    /// sync_file_range: start write-back of a range (no durability promise).
    SyncRange,
}

impl FileOp {
    pub fn letter(self) -> char {
        match self {
            FileOp::Read => 'R',
            FileOp::Write => 'W',
            FileOp::Fsync => 'F',
            FileOp::Fdatasync => 'D',
            FileOp::SyncRange => 'S',
        }
    }

    fn parse(text: &str) -> Option<FileOp> {
        match text {
            "R" => Some(FileOp::Read),
            "W" => Some(FileOp::Write),
            "F" => Some(FileOp::Fsync),
            "D" => Some(FileOp::Fdatasync),
            "S" => Some(FileOp::SyncRange),
            _ => None,
        }
    }
}

/// One request of a per-file trace.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct FileIo {
    pub time_ns: u64,
    pub op: FileOp,
    pub offset_bytes: u64,
    pub size_bytes: u64,
    pub file: u32,
}

/// A declared file of a per-file trace.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TraceFile {
    pub id: u32,
    pub kind: FileKind,
    pub path: String,
}

/// A whole per-file trace: the declared files and the requests, in file order.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct FileTrace {
    pub files: Vec<TraceFile>,
    pub ios: Vec<FileIo>,
}

/// One line of a flashlab trace.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Line {
    /// Blank or a comment.
    Nothing,
    /// A block request (four columns).
    Block(TraceIo),
    /// `# file ID KIND PATH`.
    File(TraceFile),
    /// A file request (five columns).
    FileRequest(FileIo),
}

/// Parses one line (`n` is its 1-based number, for errors). Checks each
/// line alone; [`parse`] and [`parse_file_trace`] check that a trace does
/// not mix block and file requests and that files are declared first.
pub fn parse_line(line: &str, n: usize) -> Result<Line, LineError> {
    let line = line.trim();
    if let Some(rest) = line.strip_prefix("# file ") {
        return declaration(rest, n).map(Line::File);
    }
    // The version line: a later version may mean something else by the
    // same columns, so only v1 is read.
    if let Some(v) = line.strip_prefix("# flashlab-trace ") {
        if v.trim() != "v1" {
            return Err((
                n,
                format!(
                    "trace format '{}' is not v1, the only version this flashlab reads; convert the trace or use the flashlab that wrote it",
                    quote(v.trim())
                ),
            ));
        }
    }
    if line.is_empty() || line.starts_with('#') {
        return Ok(Line::Nothing);
    }
    let cols: Vec<&str> = line.split_whitespace().collect();
    match cols.len() {
        4 => {
            let op = match cols[1] {
                "R" => TraceOp::Io(Mode::Read),
                "W" => TraceOp::Io(Mode::Write),
                "T" => TraceOp::Io(Mode::Trim),
                "F" => TraceOp::Flush,
                other => return Err((n, format!("op '{}' is not R, W, T or F", quote(other)))),
            };
            Ok(Line::Block(request(
                field(&cols, 0, "time_ns", n)?,
                op,
                field(&cols, 2, "offset_bytes", n)?,
                field(&cols, 3, "size_bytes", n)?,
                n,
            )?))
        }
        5 => {
            let op = FileOp::parse(cols[1]).ok_or_else(|| {
                (
                    n,
                    format!(
                        "op '{}' is not R, W, F, D or S (a per-file trace)",
                        quote(cols[1])
                    ),
                )
            })?;
            let io = request(
                field(&cols, 0, "time_ns", n)?,
                TraceOp::Flush,
                field(&cols, 2, "offset_bytes", n)?,
                field(&cols, 3, "size_bytes", n)?,
                n,
            )?;
            Ok(Line::FileRequest(FileIo {
                time_ns: io.time_ns,
                op,
                offset_bytes: io.offset_bytes,
                size_bytes: io.size_bytes,
                file: field(&cols, 4, "file", n)?,
            }))
        }
        found => Err((
            n,
            format!(
                "expected 4 fields (time_ns op offset_bytes size_bytes) or 5 (with file), found {found}"
            ),
        )),
    }
}

fn declaration(rest: &str, n: usize) -> Result<TraceFile, LineError> {
    let mut parts = rest.trim().splitn(3, ' ');
    let (id, kind, path) = match (parts.next(), parts.next(), parts.next()) {
        (Some(id), Some(kind), Some(path)) if !path.trim().is_empty() => (id, kind, path),
        _ => return Err((n, "a file declaration is '# file ID KIND PATH'".to_string())),
    };
    let id = id.parse::<u32>().map_err(|_| {
        (
            n,
            format!("file id '{}' is not a number below 2^32", quote(id)),
        )
    })?;
    let kind = FileKind::parse(kind).ok_or_else(|| {
        (
            n,
            format!("file kind '{}' is not data, wal or other", quote(kind)),
        )
    })?;
    Ok(TraceFile {
        id,
        kind,
        path: path.trim().to_string(),
    })
}

/// Parses a block trace. A per-file (logical) trace is refused: its
/// offsets are file offsets, not device offsets.
pub fn parse(text: &str) -> Result<Vec<TraceIo>, LineError> {
    let mut out = Vec::new();
    for (i, line) in text.lines().enumerate() {
        match parse_line(line, i + 1)? {
            Line::Nothing => {}
            Line::Block(io) => out.push(io),
            Line::File(_) | Line::FileRequest(_) => {
                return Err((
                    i + 1,
                    "this is a per-file (logical) trace: its offsets are file offsets, not device offsets; replay the physical (block) trace instead".to_string(),
                ))
            }
        }
    }
    Ok(out)
}

/// Parses a per-file trace: every request names a file declared before it;
/// a file id is declared once; block (four-column) lines are refused.
pub fn parse_file_trace(text: &str) -> Result<FileTrace, LineError> {
    let mut trace = FileTrace::default();
    let mut declared = std::collections::HashSet::new();
    for (i, line) in text.lines().enumerate() {
        let n = i + 1;
        match parse_line(line, n)? {
            Line::Nothing => {}
            Line::Block(_) => {
                return Err((
                    n,
                    "a block request (4 fields) in a per-file trace; every request needs its file column"
                        .to_string(),
                ))
            }
            Line::File(file) => {
                if !declared.insert(file.id) {
                    return Err((n, format!("file {} is declared twice", file.id)));
                }
                trace.files.push(file);
            }
            Line::FileRequest(io) => {
                if !declared.contains(&io.file) {
                    return Err((
                        n,
                        format!(
                            "file {} is used before its '# file {} KIND PATH' line",
                            io.file, io.file
                        ),
                    ));
                }
                trace.ios.push(io);
            }
        }
    }
    Ok(trace)
}

/// Appends requests to a trace as they happen.
pub struct TraceWriter<W: Write> {
    out: W,
}

impl<W: Write> TraceWriter<W> {
    pub fn new(mut out: W) -> io::Result<TraceWriter<W>> {
        out.write_all(HEADER.as_bytes())?;
        Ok(TraceWriter { out })
    }

    pub fn write(&mut self, io: &TraceIo) -> io::Result<()> {
        writeln!(
            self.out,
            "{} {} {} {}",
            io.time_ns,
            io.op.letter(),
            io.offset_bytes,
            io.size_bytes
        )
    }

    pub fn flush(&mut self) -> io::Result<()> {
        self.out.flush()
    }

    pub fn into_inner(self) -> W {
        self.out
    }
}

/// Appends file requests and file declarations to a per-file trace.
pub struct FileTraceWriter<W: Write> {
    out: W,
}

impl<W: Write> FileTraceWriter<W> {
    pub fn new(mut out: W) -> io::Result<FileTraceWriter<W>> {
        out.write_all(FILE_HEADER.as_bytes())?;
        Ok(FileTraceWriter { out })
    }

    /// Declares a file; call it once per id, before the file's first
    /// request. Control characters in the path (a newline would end the
    /// line) are written as `?`: the path is for people, the id is the key.
    pub fn declare(&mut self, id: u32, kind: FileKind, path: &str) -> io::Result<()> {
        let shown: String = path
            .trim()
            .chars()
            .map(|c| if c.is_control() { '?' } else { c })
            .collect();
        let shown = if shown.is_empty() { "?" } else { &shown };
        writeln!(self.out, "# file {id} {} {shown}", kind.name())
    }

    pub fn write(&mut self, io: &FileIo) -> io::Result<()> {
        writeln!(
            self.out,
            "{} {} {} {} {}",
            io.time_ns,
            io.op.letter(),
            io.offset_bytes,
            io.size_bytes,
            io.file
        )
    }

    pub fn flush(&mut self) -> io::Result<()> {
        self.out.flush()
    }

    pub fn into_inner(self) -> W {
        self.out
    }
}
