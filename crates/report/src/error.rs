//! Why a report cannot be built: what the user passed, or what a results
//! directory holds.
//!
//! Every `Display` is one line naming the problem and the fix; `flashlab
//! report` prints them as they are and its tests compare the wording.

use std::fmt;
use std::io;

use flashlab_results::SCHEMA_VERSION;

/// Anything building a report can fail with.
#[derive(Debug)]
pub enum ReportError {
    /// `--format` is none of html, md, json.
    UnknownFormat { text: String },
    /// No results directory at all.
    NoDirectories,
    /// `--run` names runs no directory has.
    UnknownRuns {
        runs: Vec<String>,
        dirs: Vec<String>,
    },
    /// One directory has none of the `--run` names; `runs` is what it has
    /// (already cut to a few names when it has many).
    NoSuchRun {
        dir: String,
        wanted: Vec<String>,
        runs: String,
    },
    /// The path does not exist.
    Missing { path: String },
    /// The path is a directory's `manifest.json`.
    ManifestGiven { path: String, parent: String },
    /// The path is some other file.
    NotADirectory { path: String },
    /// A directory without `manifest.json`, and results directories found in it.
    NotResults { dir: String, contains: Vec<String> },
    /// A file that cannot be read.
    Io { path: String, source: io::Error },
    /// A manifest that is not JSON, or not a manifest (`not_a_manifest`).
    DamagedManifest {
        path: String,
        not_a_manifest: bool,
        source: serde_json::Error,
    },
    /// The manifest's journal cannot be read or applied.
    Journal(flashlab_results::ManifestError),
    /// A manifest of another schema version (`None`: it has none).
    Schema { path: String, found: Option<u64> },
    /// A JSON file an analysis reads that does not parse; `what` says how
    /// (`not valid JSON`, `not valid`).
    InvalidJson {
        path: String,
        what: &'static str,
        source: serde_json::Error,
    },
    /// A run's records file without flashlab's magic.
    NotRecords { path: String },
    /// A `*.twin.json` that is not a twin's result (no probe or parts).
    NotATwin { path: String },
    /// A records file of another layout.
    RecordsLayout {
        path: String,
        header_bytes: u16,
        record_bytes: u16,
    },
}

impl fmt::Display for ReportError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ReportError::UnknownFormat { text } => {
                write!(f, "unknown report format '{text}'; use html, md or json")
            }
            ReportError::NoDirectories => f.write_str(
                "no results directory given; pass one or more directories written by `flashlab run`",
            ),
            ReportError::UnknownRuns { runs, dirs } => write!(
                f,
                "no run named {} in {}; `flashlab show DIR` lists a directory's runs",
                runs.join(", "),
                dirs.join(", ")
            ),
            ReportError::NoSuchRun { dir, wanted, runs } => write!(
                f,
                "{dir} has no run named {}; its runs are: {runs}",
                wanted.join(", ")
            ),
            ReportError::Missing { path } => write!(
                f,
                "{path} does not exist; pass a results directory written by `flashlab run` (it holds manifest.json)"
            ),
            ReportError::ManifestGiven { path, parent } => write!(
                f,
                "{path} is a manifest file; pass its directory instead: {parent}"
            ),
            ReportError::NotADirectory { path } => write!(
                f,
                "{path} is a file, not a results directory; pass a directory written by `flashlab run` (it holds manifest.json)"
            ),
            ReportError::NotResults { dir, contains } => {
                write!(
                    f,
                    "{dir} is not a flashlab results directory (no manifest.json); pass a directory written by `flashlab run --results DIR`"
                )?;
                if !contains.is_empty() {
                    write!(
                        f,
                        "; it contains results directories, e.g. {}",
                        contains.join(", ")
                    )?;
                }
                Ok(())
            }
            ReportError::Io { path, source } => write!(f, "{path}: {source}"),
            ReportError::DamagedManifest {
                path,
                not_a_manifest,
                source,
            } => {
                let what = if *not_a_manifest {
                    "not a flashlab manifest"
                } else {
                    "not valid JSON"
                };
                write!(
                    f,
                    "{path}: {what} ({source}); the manifest is damaged, restore it or re-run"
                )
            }
            ReportError::Journal(e) => e.fmt(f),
            ReportError::Schema { path, found } => {
                let found = found.map_or("no schema_version".to_string(), |s| format!("schema {s}"));
                write!(
                    f,
                    "{path}: {found}, but this flashlab reads schema {SCHEMA_VERSION}; render it with the flashlab version that wrote it"
                )
            }
            ReportError::InvalidJson { path, what, source } => {
                write!(f, "{path}: {what} ({source})")
            }
            ReportError::NotATwin { path } => write!(
                f,
                "{path} is not a twin's result (no probe or parts); give the PROFILE.twin.json that flashlab twin wrote"
            ),
            ReportError::NotRecords { path } => write!(
                f,
                "{path}: not a flashlab records file (bad magic); the run's records are damaged, re-run it or remove it from manifest.json"
            ),
            ReportError::RecordsLayout {
                path,
                header_bytes,
                record_bytes,
            } => write!(
                f,
                "{path}: records layout {header_bytes}/{record_bytes} is not schema 1 (32/40); render it with the flashlab version that wrote it"
            ),
        }
    }
}

impl std::error::Error for ReportError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            ReportError::Io { source, .. } => Some(source),
            ReportError::Journal(e) => Some(e),
            ReportError::DamagedManifest { source, .. }
            | ReportError::InvalidJson { source, .. } => Some(source),
            _ => None,
        }
    }
}
