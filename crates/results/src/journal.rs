//! The manifest's journal, `manifest.jsonl`: one JSON line per change of the
//! manifest (a run planned, started or finished), appended
//! while a command runs instead of rewriting the whole `manifest.json`.
//!
//! Rewriting the manifest at every run's start and end cost O(runs) bytes per
//! change, O(runs^2) for a pattern file (2000 runs wrote 5 GB). An event is
//! one line of a few hundred bytes, appended with one `write` call; the
//! command compacts (writes the whole `manifest.json`, then removes the
//! journal) when it ends. Readers always apply the journal, if any, to
//! `manifest.json`: every event sets absolute values (a run's entry, its
//! status), so applying events that `manifest.json` already holds (a crash
//! between the compaction's rename and its unlink) changes nothing.
//!
//! A process killed while appending leaves at most its last line torn
//! (without its newline): readers ignore it and say so ([`TornLine`]); the
//! next writer truncates it away before appending. A damaged line anywhere
//! else is an error naming the file and line: events are never skipped.
//!
//! Like the rest of the directory, nothing is fsynced: the journal survives
//! a killed process (appended bytes are in the page cache when `write`
//! returns), not a power cut (docs/results-format.md).

use std::fmt;
use std::fs;
use std::io::{self, Write};
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::dir::{is_kept, kept, Manifest, RunEntry, RunStatus, Workload};

/// The journal's file name in a results directory.
pub const JOURNAL_FILE: &str = "manifest.jsonl";

/// One change of the manifest. Runs are named by their 0-based position
/// (`run`) and their name (checked when applied).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "event", rename_all = "snake_case", deny_unknown_fields)]
pub enum JournalEvent {
    /// A run was added to the plan (the manifest lists it as `planned`).
    Planned {
        run: usize,
        name: String,
        dir: String,
        workload: Workload,
    },
    /// A run's records file was created and its first IO is about to go
    /// (`records: false`: the run keeps no records file).
    Started {
        run: usize,
        name: String,
        #[serde(default = "kept", skip_serializing_if = "is_kept")]
        records: bool,
    },
    /// A run ended; its `run.json` (statistics) was written before this line.
    Finished {
        run: usize,
        name: String,
        status: RunStatus,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        error: Option<String>,
        /// The workload as finally run, when it differs from the planned one
        /// (a suite's automatic IOIgnore and IOCount).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        workload: Option<Workload>,
    },
}

/// Why the manifest (with its journal) cannot be read.
#[derive(Debug)]
pub enum ManifestError {
    /// `manifest.json` or the journal could not be read.
    Io { path: PathBuf, source: io::Error },
    /// `manifest.json` is not a manifest.
    Manifest {
        path: PathBuf,
        source: serde_json::Error,
    },
    /// A line of the journal, other than a torn last one, is damaged or
    /// does not fit the manifest (1-based line number).
    JournalLine {
        path: PathBuf,
        line: usize,
        reason: String,
    },
    /// The manifest or journal is beyond the limits of what flashlab writes
    /// (`what` says which: the file's size, a text field's length).
    TooLarge { path: PathBuf, what: String },
}

impl fmt::Display for ManifestError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ManifestError::Io { path, source } => write!(f, "{}: {source}", path.display()),
            ManifestError::Manifest { path, source } => write!(
                f,
                "{}: not a flashlab manifest ({source}); the results directory is damaged, restore it or re-run",
                path.display()
            ),
            ManifestError::TooLarge { path, what } => write!(
                f,
                "{}: {what}, beyond what flashlab writes; the results directory is damaged or not flashlab's, restore it or re-run",
                path.display()
            ),
            ManifestError::JournalLine { path, line, reason } => write!(
                f,
                "{} line {line}: {reason}; the results directory is damaged (only a torn last line is tolerated), restore it or re-run",
                path.display()
            ),
        }
    }
}

impl std::error::Error for ManifestError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            ManifestError::Io { source, .. } => Some(source),
            ManifestError::Manifest { source, .. } => Some(source),
            ManifestError::JournalLine { .. } | ManifestError::TooLarge { .. } => None,
        }
    }
}

impl From<ManifestError> for io::Error {
    fn from(e: ManifestError) -> io::Error {
        let kind = match &e {
            ManifestError::Io { source, .. } => source.kind(),
            _ => io::ErrorKind::InvalidData,
        };
        io::Error::new(kind, e)
    }
}

/// A last journal line without its newline: the writer was killed while
/// appending it. Its event is ignored.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TornLine {
    pub path: PathBuf,
    /// 1-based line number.
    pub line: usize,
    /// Length of the torn piece.
    pub bytes: usize,
}

impl fmt::Display for TornLine {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{} line {} is torn ({} bytes without a newline: the writing process was killed mid-line); its event is ignored",
            self.path.display(),
            self.line,
            self.bytes
        )
    }
}

/// What applying a journal found.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct JournalReplay {
    /// Complete events applied.
    pub events: usize,
    /// Bytes of complete lines: where the next append must start.
    pub valid_bytes: u64,
    pub torn: Option<TornLine>,
}

/// Applies `root`'s journal, if it has one, to `manifest` (read from
/// `root/manifest.json`).
pub fn replay(root: &Path, manifest: &mut Manifest) -> Result<JournalReplay, ManifestError> {
    let path = root.join(JOURNAL_FILE);
    let bytes = match read_journal(&path) {
        Ok(b) => b,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(JournalReplay::default()),
        Err(source) => return Err(ManifestError::Io { path, source }),
    };
    let mut out = JournalReplay::default();
    let mut start = 0usize;
    let mut line = 0usize;
    while start < bytes.len() {
        line += 1;
        let Some(len) = bytes[start..].iter().position(|&b| b == b'\n') else {
            out.torn = Some(TornLine {
                path,
                line,
                bytes: bytes.len() - start,
            });
            break;
        };
        let text = &bytes[start..start + len];
        let bad = |reason: String| ManifestError::JournalLine {
            path: path.clone(),
            line,
            reason,
        };
        let event: JournalEvent =
            serde_json::from_slice(text).map_err(|e| bad(format!("not a journal event ({e})")))?;
        apply(manifest, event).map_err(|e| bad(e.to_string()))?;
        out.events += 1;
        start += len + 1;
        out.valid_bytes = start as u64;
    }
    Ok(out)
}

/// The journal's bytes: only a regular file (never a FIFO, which would
/// block), of at most [`crate::dir::MAX_MANIFEST_BYTES`].
fn read_journal(path: &Path) -> io::Result<Vec<u8>> {
    use std::io::Read;
    let file = crate::records::open_regular(path)?;
    if file.metadata()?.len() > crate::dir::MAX_MANIFEST_BYTES {
        return Err(io::Error::new(
            io::ErrorKind::InvalidData,
            format!(
                "the journal is larger than {} MiB, beyond what flashlab writes",
                crate::dir::MAX_MANIFEST_BYTES >> 20
            ),
        ));
    }
    let mut bytes = Vec::new();
    file.take(crate::dir::MAX_MANIFEST_BYTES)
        .read_to_end(&mut bytes)?;
    Ok(bytes)
}

/// Why a journal event does not fit the manifest it is applied to.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum JournalConflict {
    /// The event names a run past the last planned one.
    NeverPlanned {
        run: usize,
        name: String,
        planned: usize,
    },
    /// The event names run `run` by another name than the manifest does.
    OtherName {
        run: usize,
        manifest: String,
        event: String,
    },
    /// A run is planned again under another name.
    ReplannedAs {
        run: usize,
        planned: String,
        manifest: String,
    },
    /// A run is planned before the runs ahead of it.
    PlannedEarly {
        run: usize,
        name: String,
        next: usize,
    },
}

impl std::fmt::Display for JournalConflict {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            JournalConflict::NeverPlanned { run, name, planned } => {
                write!(
                    f,
                    "run {run} ('{name}') was never planned ({planned} runs are)"
                )
            }
            JournalConflict::OtherName {
                run,
                manifest,
                event,
            } => write!(
                f,
                "run {run} is '{manifest}' in the manifest, not '{event}'"
            ),
            JournalConflict::ReplannedAs {
                run,
                planned,
                manifest,
            } => write!(
                f,
                "run {run} is planned as '{planned}' but the manifest has '{manifest}'"
            ),
            JournalConflict::PlannedEarly { run, name, next } => {
                write!(f, "run {run} ('{name}') is planned before run {next}")
            }
        }
    }
}

impl std::error::Error for JournalConflict {}

fn entry_mut<'a>(
    manifest: &'a mut Manifest,
    run: usize,
    name: &str,
) -> Result<&'a mut RunEntry, JournalConflict> {
    let planned = manifest.runs.len();
    let entry = manifest
        .runs
        .get_mut(run)
        .ok_or_else(|| JournalConflict::NeverPlanned {
            run,
            name: name.to_string(),
            planned,
        })?;
    if entry.name != name {
        return Err(JournalConflict::OtherName {
            run,
            manifest: entry.name.clone(),
            event: name.to_string(),
        });
    }
    Ok(entry)
}

/// Applies one event. Every event sets absolute values, so applying one the
/// manifest already reflects is harmless.
pub fn apply(manifest: &mut Manifest, event: JournalEvent) -> Result<(), JournalConflict> {
    match event {
        JournalEvent::Planned {
            run,
            name,
            dir,
            workload,
        } => {
            let entry = RunEntry {
                name,
                dir,
                status: RunStatus::Planned,
                workload,
                error: None,
                records: true,
            };
            match run.cmp(&manifest.runs.len()) {
                std::cmp::Ordering::Equal => manifest.runs.push(entry),
                std::cmp::Ordering::Less => {
                    let old = &mut manifest.runs[run];
                    if old.name != entry.name {
                        return Err(JournalConflict::ReplannedAs {
                            run,
                            planned: entry.name,
                            manifest: old.name.clone(),
                        });
                    }
                    *old = entry;
                }
                std::cmp::Ordering::Greater => {
                    return Err(JournalConflict::PlannedEarly {
                        run,
                        name: entry.name,
                        next: manifest.runs.len(),
                    })
                }
            }
        }
        JournalEvent::Started { run, name, records } => {
            let entry = entry_mut(manifest, run, &name)?;
            entry.status = RunStatus::Running;
            entry.error = None;
            entry.records = records;
        }
        JournalEvent::Finished {
            run,
            name,
            status,
            error,
            workload,
        } => {
            let entry = entry_mut(manifest, run, &name)?;
            entry.status = status;
            entry.error = error;
            if let Some(w) = workload {
                entry.workload = w;
            }
        }
    }
    Ok(())
}

/// The appending side: opened on the first event, after cutting a torn
/// last line away (so that it does not become a damaged middle line).
#[derive(Debug)]
pub(crate) struct JournalWriter {
    path: PathBuf,
    file: Option<fs::File>,
    /// Bytes of complete lines when the directory was opened.
    valid_bytes: u64,
}

impl JournalWriter {
    pub(crate) fn new(root: &Path, valid_bytes: u64) -> JournalWriter {
        JournalWriter {
            path: root.join(JOURNAL_FILE),
            file: None,
            valid_bytes,
        }
    }

    /// Appends events as lines, with one `write` call: a kill tears at most
    /// the last line.
    pub(crate) fn append(&mut self, events: &[JournalEvent]) -> io::Result<()> {
        let mut buf = Vec::with_capacity(256 * events.len());
        for e in events {
            serde_json::to_writer(&mut buf, e)?;
            buf.push(b'\n');
        }
        if self.file.is_none() {
            let f = fs::OpenOptions::new()
                .create(true)
                .append(true)
                .open(&self.path)?;
            if f.metadata()?.len() > self.valid_bytes {
                f.set_len(self.valid_bytes)?;
            }
            self.file = Some(f);
        }
        let f = self.file.as_mut().expect("opened above");
        f.write_all(&buf)
    }

    /// Removes the journal after `manifest.json` was rewritten with every
    /// event in it.
    pub(crate) fn clear(&mut self) -> io::Result<()> {
        self.file = None;
        self.valid_bytes = 0;
        match fs::remove_file(&self.path) {
            Err(e) if e.kind() != io::ErrorKind::NotFound => Err(e),
            _ => Ok(()),
        }
    }
}
