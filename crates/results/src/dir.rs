//! The results directory: one manifest, one folder per run.
//!
//! ```text
//! RESULTS_DIR/
//!   manifest.json            tool, commit, host, device, every run's workload and status
//!   manifest.jsonl           the manifest's journal while a command runs: one line per
//!                            run planned/started/finished (removed when it ends)
//!   summary.json             every finished run's statistics (after each run of
//!                            `flashlab run`; at the end of a suite)
//!   runs/001-RW/records.bin  per-IO records, appended while the run goes
//!   runs/001-RW/run.json     the run's workload, status, statistics, device accounting
//! ```
//!
//! `manifest.json` is written atomically (write, rename) when the directory
//! is created and when runs are planned in bulk; each run's start and end is
//! one line appended to the journal ([`crate::journal`]), and the command
//! compacts (rewrites `manifest.json`, removes the journal) when it ends. So
//! a directory is always readable after the process dies at any moment, an
//! interrupted run is marked as such rather than silently missing, and a
//! pattern file of thousands of runs costs linear, not quadratic, bytes.
//! Readers go through [`read_manifest`], which applies the journal. Nothing
//! is fsynced: results must survive a killed process, not a power cut, and a
//! suite of hundreds of runs would otherwise spend most of its time waiting
//! for the disk.

use std::fs;
use std::io::{self, Write};
use std::path::{Path, PathBuf};

use flashlab_device::DeviceInfo;
use flashlab_pattern::PatternSpec;
use serde::{Deserialize, Serialize};

use crate::journal::{self, JournalEvent, JournalWriter, ManifestError, TornLine};
use crate::records::{IoRecord, RecordFile, RecordWriter};
use crate::stats::{RunStats, Tally};

pub const SCHEMA_VERSION: u32 = 1;

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ToolInfo {
    pub name: String,
    pub version: String,
    /// `git describe`-style commit of the build, or "unknown".
    pub git_commit: String,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct HostInfo {
    pub hostname: String,
    pub kernel: String,
    pub cpus: usize,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum RunStatus {
    Planned,
    Running,
    Complete,
    /// Stopped by the user (Ctrl-C); its records up to the stop are kept.
    Interrupted,
    Failed,
}

impl RunStatus {
    /// The name the manifest uses (its serde name).
    pub fn name(self) -> &'static str {
        match self {
            RunStatus::Planned => "planned",
            RunStatus::Running => "running",
            RunStatus::Complete => "complete",
            RunStatus::Interrupted => "interrupted",
            RunStatus::Failed => "failed",
        }
    }
}

/// A trace replay, as recorded in the manifest.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ReplaySpec {
    pub trace_path: String,
    pub format: String,
    pub requests: u64,
    /// "open_loop" or "closed_loop".
    pub loop_mode: String,
    /// Open loop: recorded times are divided by this.
    pub speed: f64,
    /// Open loop: the most requests in flight; closed loop: the queue depth.
    pub max_outstanding: u64,
    /// How offsets were fitted onto the device: "error", "wrap" or "scale".
    pub fit: String,
}

/// What a run did: a pattern of the algebra, or a trace replay.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Workload {
    Pattern(PatternSpec),
    Replay(ReplaySpec),
}

impl Workload {
    pub fn describe(&self) -> String {
        match self {
            Workload::Pattern(p) => p.describe(),
            Workload::Replay(r) => format!(
                "replay of {} ({} format, {} requests), {}{}",
                r.trace_path,
                r.format,
                r.requests,
                r.loop_mode.replace('_', " "),
                if r.loop_mode == "open_loop" {
                    format!(
                        " at {}x speed, up to {} in flight",
                        r.speed, r.max_outstanding
                    )
                } else {
                    format!(", QD{}", r.max_outstanding)
                }
            ),
        }
    }

    pub fn pattern(&self) -> Option<&PatternSpec> {
        match self {
            Workload::Pattern(p) => Some(p),
            Workload::Replay(_) => None,
        }
    }
}

/// A run as listed in the manifest.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct RunEntry {
    pub name: String,
    /// Relative to the results directory.
    pub dir: String,
    pub status: RunStatus,
    pub workload: Workload,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    /// False when the run kept no per-IO records (`records.bin`): a sweep
    /// point of a grid with `records = false`. Its statistics' percentiles
    /// come from the histogram ([`RunStats::from_histograms`]).
    #[serde(default = "kept", skip_serializing_if = "is_kept")]
    pub records: bool,
}

pub(crate) fn kept() -> bool {
    true
}

pub(crate) fn is_kept(records: &bool) -> bool {
    *records
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Manifest {
    pub schema_version: u32,
    pub tool: ToolInfo,
    /// Wall-clock creation time (seconds since the Unix epoch).
    pub created_unix_s: u64,
    pub command_line: Vec<String>,
    pub host: HostInfo,
    pub device: DeviceInfo,
    /// How IOs were issued: "sync", "io_uring", "simulator"...
    pub engine: String,
    /// For suites: the suite's name, its state enforcement and settings.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub suite: Option<serde_json::Value>,
    pub runs: Vec<RunEntry>,
}

/// What `run.json` and the `--json` summary hold for one run.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct RunSummary {
    pub name: String,
    pub description: String,
    pub status: RunStatus,
    pub workload: Workload,
    pub stats: RunStats,
    /// Device-specific accounting (the simulator's flash operations, WAF...).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub device_stats: Option<serde_json::Value>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    /// The simulator's fraction of page reads that hit never-written pages
    /// ([`crate::warnings::unmapped_read_fraction`]); absent for real devices
    /// and runs without reads.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub unmapped_read_fraction: Option<f64>,
    /// One line each: what makes this run's figures describe something else
    /// than the user meant, and the fix ([`crate::warnings`]).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub warnings: Vec<String>,
}

/// `summary.json`, and what `flashlab run --json` prints.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Summary {
    pub schema_version: u32,
    pub results_dir: String,
    pub device: DeviceInfo,
    pub engine: String,
    pub runs: Vec<RunSummary>,
}

pub struct ResultsDir {
    root: PathBuf,
    manifest: Manifest,
    summaries: Vec<RunSummary>,
    /// How many summaries `summary.json` held when last written.
    summary_written: std::cell::Cell<usize>,
    journal: std::cell::RefCell<JournalWriter>,
    /// The journal's torn last line found when the directory was opened.
    torn: Option<TornLine>,
    /// Runs whose workload `set_workload` changed since they were planned.
    workload_changed: Vec<bool>,
    /// Warnings the writer of a run adds to its `run.json` ([`Self::add_warning`]).
    added_warnings: std::collections::HashMap<usize, Vec<String>>,
    /// Records files are kept out of the page cache as they grow (direct
    /// IO or drop-behind, [`Self::keep_records_out_of_cache`]).
    records_out_of_cache: bool,
}

/// `summary.json` is rewritten after every run of the first this many;
/// beyond, whenever a quarter more runs have finished (and at the end), so
/// that a file of thousands of runs costs linear, not quadratic, time.
const SUMMARY_EVERY_RUN_UP_TO: usize = 64;

/// `Summary` serialized from borrowed runs (no clone of every run's
/// statistics per write).
#[derive(Serialize)]
struct SummaryRef<'a> {
    schema_version: u32,
    results_dir: String,
    device: &'a DeviceInfo,
    engine: &'a str,
    runs: Vec<&'a RunSummary>,
}

impl ResultsDir {
    /// Creates `root` (which must not exist or be empty) with its manifest.
    pub fn create(root: &Path, manifest: Manifest) -> io::Result<ResultsDir> {
        if root.exists() && fs::read_dir(root)?.next().is_some() {
            return Err(io::Error::new(
                io::ErrorKind::AlreadyExists,
                format!("results directory {} already exists and is not empty; choose another with --results", root.display()),
            ));
        }
        fs::create_dir_all(root.join("runs"))?;
        let runs = manifest.runs.len();
        let dir = ResultsDir {
            root: root.to_path_buf(),
            manifest,
            summaries: Vec::new(),
            summary_written: std::cell::Cell::new(0),
            journal: std::cell::RefCell::new(JournalWriter::new(root, 0)),
            torn: None,
            workload_changed: vec![false; runs],
            added_warnings: Default::default(),
            records_out_of_cache: false,
        };
        dir.compact()?;
        Ok(dir)
    }

    /// Opens a directory written by any version: `manifest.json` with the
    /// journal applied, and every finished run's `run.json`. Reading changes
    /// nothing on disk (a run may be going on); the first event appended
    /// afterwards cuts a torn last journal line away.
    pub fn open(root: &Path) -> io::Result<ResultsDir> {
        let (manifest, replay) = read_manifest(root)?;
        let mut summaries = Vec::new();
        for run in &manifest.runs {
            let p = root.join(&run.dir).join("run.json");
            if p.exists() {
                summaries.push(read_json(&p)?);
            }
        }
        Ok(ResultsDir {
            root: root.to_path_buf(),
            workload_changed: vec![false; manifest.runs.len()],
            added_warnings: Default::default(),
            manifest,
            summary_written: std::cell::Cell::new(summaries.len()),
            summaries,
            journal: std::cell::RefCell::new(JournalWriter::new(root, replay.valid_bytes)),
            torn: replay.torn,
            records_out_of_cache: false,
        })
    }

    /// The journal's torn last line, if [`Self::open`] found one (the
    /// writer was killed mid-line; the event was ignored).
    pub fn torn_journal_line(&self) -> Option<&TornLine> {
        self.torn.as_ref()
    }

    pub fn root(&self) -> &Path {
        &self.root
    }

    /// Runs started from now on write their records out of the page cache
    /// ([`RecordWriter::create_out_of_cache`]): for directories whose
    /// records nobody reads right away, such as a sweep's points.
    pub fn keep_records_out_of_cache(&mut self, on: bool) {
        self.records_out_of_cache = on;
    }

    pub fn manifest(&self) -> &Manifest {
        &self.manifest
    }

    pub fn summaries(&self) -> &[RunSummary] {
        &self.summaries
    }

    /// Registers a run as planned (so the manifest lists every run up front) and returns its index.
    pub fn plan_run(&mut self, name: &str, workload: Workload) -> io::Result<usize> {
        let idx = self.manifest.runs.len();
        let dir = format!("runs/{:03}-{}", idx + 1, name);
        self.journal.borrow_mut().append(&[JournalEvent::Planned {
            run: idx,
            name: name.to_string(),
            dir: dir.clone(),
            workload: workload.clone(),
        }])?;
        self.manifest.runs.push(RunEntry {
            name: name.to_string(),
            dir,
            status: RunStatus::Planned,
            workload,
            error: None,
            records: true,
        });
        self.workload_changed.push(false);
        Ok(idx)
    }

    /// Registers many runs as planned with one manifest write (a pattern
    /// file of thousands of runs stays linear, and readers that ignore the
    /// journal still see the whole plan); returns their indices.
    pub fn plan_runs(
        &mut self,
        runs: impl IntoIterator<Item = (String, Workload)>,
    ) -> io::Result<Vec<usize>> {
        let mut out = Vec::new();
        for (name, workload) in runs {
            let idx = self.manifest.runs.len();
            let dir = format!("runs/{:03}-{}", idx + 1, name);
            self.manifest.runs.push(RunEntry {
                name,
                dir,
                status: RunStatus::Planned,
                workload,
                error: None,
                records: true,
            });
            self.workload_changed.push(false);
            out.push(idx);
        }
        self.compact()?;
        Ok(out)
    }

    /// Records what suite produced this directory (state enforcement, settings).
    /// Called once, before the first run: `manifest.json` is rewritten.
    pub fn set_suite(&mut self, suite: serde_json::Value) -> io::Result<()> {
        self.manifest.suite = Some(suite);
        self.compact()
    }

    /// Replaces run `idx`'s workload (e.g. with the IOIgnore and IOCount a
    /// suite chose automatically); saved by the `finish_run` that follows.
    pub fn set_workload(&mut self, idx: usize, workload: Workload) {
        if self.manifest.runs[idx].workload != workload {
            self.manifest.runs[idx].workload = workload;
            self.workload_changed[idx] = true;
        }
    }

    /// Marks run `idx` as running and opens its records file.
    pub fn start_run(&mut self, idx: usize) -> io::Result<RecordWriter> {
        self.start_run_keeping(idx, true)
    }

    /// [`Self::start_run`], or with `records` false a run that keeps no
    /// records file: the writer only tallies ([`RecordWriter::tally_only`]),
    /// the manifest says `"records": false`, and the run's percentiles come
    /// from the histogram. Readers of the records ([`Self::record_file`])
    /// then say why there are none.
    pub fn start_run_keeping(&mut self, idx: usize, records: bool) -> io::Result<RecordWriter> {
        let dir = self.root.join(&self.manifest.runs[idx].dir);
        fs::create_dir_all(&dir)?;
        let w = if records && self.records_out_of_cache {
            RecordWriter::create_out_of_cache(&dir.join("records.bin"))?
        } else if records {
            RecordWriter::create(&dir.join("records.bin"))?
        } else {
            RecordWriter::tally_only()
        };
        let entry = &mut self.manifest.runs[idx];
        self.journal.borrow_mut().append(&[JournalEvent::Started {
            run: idx,
            name: entry.name.clone(),
            records,
        }])?;
        entry.status = RunStatus::Running;
        entry.error = None;
        entry.records = records;
        Ok(w)
    }

    /// Records how run `idx` ended; computes its statistics from the records on disk.
    pub fn finish_run(
        &mut self,
        idx: usize,
        status: RunStatus,
        error: Option<String>,
        device_stats: Option<serde_json::Value>,
    ) -> io::Result<RunSummary> {
        self.finish_run_tallied(idx, status, error, device_stats, None)
    }

    /// Adds a warning to run `idx`'s `run.json` when it finishes: something
    /// only the writer of the run knows (a suite's run that did not converge).
    pub fn add_warning(&mut self, idx: usize, text: String) {
        self.added_warnings.entry(idx).or_default().push(text);
    }

    /// [`Self::finish_run`], given the statistics' first pass that the
    /// records writer made ([`RecordWriter::finish`]): only the percentile
    /// refinement reads the file. A tally that does not cover exactly the
    /// file's records is not used (the file is summarized from scratch).
    pub fn finish_run_tallied(
        &mut self,
        idx: usize,
        status: RunStatus,
        error: Option<String>,
        device_stats: Option<serde_json::Value>,
        tally: Option<Tally>,
    ) -> io::Result<RunSummary> {
        let target_warning = crate::warnings::target_warning(&self.manifest.device.identity);
        let entry = &mut self.manifest.runs[idx];
        entry.status = status;
        entry.error = error.clone();
        let dir = self.root.join(&entry.dir);
        let stats = if entry.records {
            // Streamed: a run of any length is summarized in constant memory.
            let records_path = dir.join("records.bin");
            let records = RecordFile::open(&records_path).map_err(|e| {
                io::Error::new(
                    io::ErrorKind::InvalidData,
                    format!("{}: {e}", records_path.display()),
                )
            })?;
            match tally {
                Some(t) if t.records() == records.len() && records.torn_bytes() == 0 => {
                    RunStats::from_tally(&mut &records, t)?.0
                }
                _ => RunStats::from_file(&records)?,
            }
        } else {
            let tally = tally.ok_or_else(|| {
                io::Error::new(
                    io::ErrorKind::InvalidInput,
                    format!(
                        "run {} kept no records: its statistics need the records writer's tally",
                        entry.name
                    ),
                )
            })?;
            RunStats::from_histograms(tally).0
        };
        let summary = RunSummary {
            name: entry.name.clone(),
            description: entry.workload.describe(),
            status,
            workload: entry.workload.clone(),
            stats,
            unmapped_read_fraction: device_stats
                .as_ref()
                .and_then(crate::warnings::unmapped_read_fraction),
            warnings: target_warning
                .into_iter()
                .chain(crate::warnings::device_warnings(device_stats.as_ref()))
                .chain(self.added_warnings.remove(&idx).unwrap_or_default())
                .collect(),
            device_stats,
            error,
        };
        // run.json first: a run the journal says finished has its statistics.
        write_json_atomic(&dir.join("run.json"), &summary)?;
        let workload = self.workload_changed[idx].then(|| summary.workload.clone());
        self.journal.borrow_mut().append(&[JournalEvent::Finished {
            run: idx,
            name: summary.name.clone(),
            status,
            error: summary.error.clone(),
            workload,
        }])?;
        self.workload_changed[idx] = false;
        self.summaries.retain(|s| s.name != summary.name);
        self.summaries.push(summary.clone());
        Ok(summary)
    }

    /// Records that run `idx` failed before its statistics could be
    /// computed (its records could not be written, say on a full disk):
    /// status `failed` with `error`, and no `run.json`. `show` then lists
    /// it as failed, not running. Best effort on a full disk: the journal
    /// line may not fit either.
    pub fn fail_run(&mut self, idx: usize, error: String) -> io::Result<()> {
        let entry = &mut self.manifest.runs[idx];
        entry.status = RunStatus::Failed;
        entry.error = Some(error.clone());
        let workload = self.workload_changed[idx].then(|| entry.workload.clone());
        let name = entry.name.clone();
        self.journal.borrow_mut().append(&[JournalEvent::Finished {
            run: idx,
            name,
            status: RunStatus::Failed,
            error: Some(error),
            workload,
        }])?;
        self.workload_changed[idx] = false;
        Ok(())
    }

    /// Writes the whole `manifest.json` (atomically) and then removes the
    /// journal, whose events it now holds. [`Self::write_summary`] does it,
    /// so every command compacts when it ends (also when interrupted or
    /// failed) and, through [`Self::write_summary_if_due`], at geometrically
    /// spaced points of a long one (linear bytes in all, and a journal that
    /// stays short); a directory whose command was killed in between is read
    /// the same way through the journal.
    pub fn compact(&self) -> io::Result<()> {
        write_json_atomic(&self.root.join("manifest.json"), &self.manifest)?;
        self.journal.borrow_mut().clear()
    }

    /// Position of each run in the manifest, by name (run names are unique).
    fn run_order(&self) -> impl Fn(&str) -> usize {
        let order: std::collections::HashMap<String, usize> = self
            .manifest
            .runs
            .iter()
            .enumerate()
            .map(|(i, r)| (r.name.clone(), i))
            .collect();
        move |name: &str| order.get(name).copied().unwrap_or(usize::MAX)
    }

    /// Writes `summary.json` (every finished run's statistics) and compacts
    /// the manifest ([`Self::compact`]). Commands call it after each run or
    /// at the end; `ResultsDir::open` never needs it.
    pub fn write_summary(&self) -> io::Result<()> {
        let order = self.run_order();
        let mut runs: Vec<(usize, &RunSummary)> =
            self.summaries.iter().map(|r| (order(&r.name), r)).collect();
        runs.sort_by_key(|r| r.0);
        let summary = SummaryRef {
            schema_version: SCHEMA_VERSION,
            results_dir: self.root.display().to_string(),
            device: &self.manifest.device,
            engine: &self.manifest.engine,
            runs: runs.into_iter().map(|r| r.1).collect(),
        };
        write_json_atomic(&self.root.join("summary.json"), &summary)?;
        self.summary_written.set(self.summaries.len());
        self.compact()
    }

    /// Writes `summary.json` after a run when it is due: after each of the
    /// first 64 runs, then whenever a quarter more runs have finished.
    /// Commands call [`Self::write_summary`] once more at the end.
    pub fn write_summary_if_due(&self) -> io::Result<()> {
        let n = self.summaries.len();
        let written = self.summary_written.get();
        if n <= SUMMARY_EVERY_RUN_UP_TO || n >= written + written / 4 {
            self.write_summary()?;
        }
        Ok(())
    }

    /// Every finished run's summary, in manifest order.
    pub fn summary(&self) -> Summary {
        let mut runs = self.summaries.clone();
        let order = self.run_order();
        runs.sort_by_key(|r| order(&r.name));
        Summary {
            schema_version: SCHEMA_VERSION,
            results_dir: self.root.display().to_string(),
            device: self.manifest.device.clone(),
            engine: self.manifest.engine.clone(),
            runs,
        }
    }

    /// The records file of run `idx` (0-based), opened for streaming.
    pub fn record_file(&self, idx: usize) -> io::Result<RecordFile> {
        let entry = &self.manifest.runs[idx];
        if !entry.records {
            return Err(io::Error::new(
                io::ErrorKind::NotFound,
                format!(
                    "run {} kept no per-IO records (its sweep grid said records = false); run it again with records kept for per-IO analyses",
                    entry.name
                ),
            ));
        }
        let path = self.root.join(&entry.dir).join("records.bin");
        RecordFile::open(&path).map_err(|e| {
            io::Error::new(
                io::ErrorKind::InvalidData,
                format!("{}: {e}", path.display()),
            )
        })
    }

    /// Every record of run `idx` (0-based) in memory; prefer [`Self::record_file`].
    pub fn records_of(&self, idx: usize) -> io::Result<Vec<IoRecord>> {
        self.record_file(idx)?.read_all()
    }
}

/// The largest `manifest.json` (or journal) read: 1 GiB, ten times a
/// 200,000-run manifest. A larger one is not flashlab's.
pub const MAX_MANIFEST_BYTES: u64 = 1 << 30;

/// The longest text a manifest holds in one field (a device's name, a run's
/// name or error, a command-line word): 64 KiB. Reports copy these into
/// every table and chart, so a hostile directory's 300 MB device name would
/// cost gigabytes; it is refused when the manifest is read.
pub const MAX_FIELD_BYTES: usize = 64 << 10;

/// The largest `run.json` (or other JSON file of a results directory) read: 64 MiB.
pub const MAX_JSON_BYTES: u64 = 64 << 20;

/// `root`'s manifest as it stands: `manifest.json` with the journal, if
/// any, applied. Every reader goes through here (or [`ResultsDir::open`]).
/// The file is parsed as it is read (no copy of its text), only if it is a
/// regular file (a FIFO would block forever) of at most
/// [`MAX_MANIFEST_BYTES`], and every text field is at most [`MAX_FIELD_BYTES`].
pub fn read_manifest(root: &Path) -> Result<(Manifest, journal::JournalReplay), ManifestError> {
    let path = root.join("manifest.json");
    let io_err = |source| ManifestError::Io {
        path: path.clone(),
        source,
    };
    let file = crate::records::open_regular(&path).map_err(io_err)?;
    if file.metadata().map_err(io_err)?.len() > MAX_MANIFEST_BYTES {
        return Err(ManifestError::TooLarge {
            path,
            what: format!("the file is larger than {} MiB", MAX_MANIFEST_BYTES >> 20),
        });
    }
    let reader = io::BufReader::with_capacity(1 << 16, io::Read::take(file, MAX_MANIFEST_BYTES));
    let mut manifest: Manifest =
        serde_json::from_reader(reader).map_err(|source| ManifestError::Manifest {
            path: path.clone(),
            source,
        })?;
    let replay = journal::replay(root, &mut manifest)?;
    if let Some(field) = overlong_field(&manifest) {
        return Err(ManifestError::TooLarge {
            path,
            what: format!("{field} is longer than {} KiB", MAX_FIELD_BYTES >> 10),
        });
    }
    Ok((manifest, replay))
}

/// The first text field of `m` longer than [`MAX_FIELD_BYTES`], named.
fn overlong_field(m: &Manifest) -> Option<String> {
    let long = |s: &str| s.len() > MAX_FIELD_BYTES;
    let d = &m.device;
    if long(&d.name) {
        return Some("the device's name".into());
    }
    if let Some((k, _)) = d.identity.iter().find(|(k, v)| long(k) || long(v)) {
        return Some(format!("the device's identity field {:.40}", k));
    }
    let header = [
        ("tool.name", &m.tool.name),
        ("tool.version", &m.tool.version),
        ("tool.git_commit", &m.tool.git_commit),
        ("host.hostname", &m.host.hostname),
        ("host.kernel", &m.host.kernel),
        ("engine", &m.engine),
    ];
    if let Some((name, _)) = header.iter().find(|(_, v)| long(v)) {
        return Some((*name).into());
    }
    if m.command_line.iter().any(|w| long(w)) {
        return Some("a word of the command line".into());
    }
    for (i, r) in m.runs.iter().enumerate() {
        let spec_name = r.workload.pattern().map(|p| p.name.as_str()).unwrap_or("");
        let trace = match &r.workload {
            Workload::Replay(t) => [t.trace_path.as_str(), &t.format, &t.loop_mode, &t.fit]
                .into_iter()
                .any(long),
            Workload::Pattern(_) => false,
        };
        if long(&r.name)
            || long(&r.dir)
            || long(spec_name)
            || trace
            || r.error.as_deref().is_some_and(long)
        {
            return Some(format!("a text field of run {}", i + 1));
        }
    }
    None
}

/// Reads a JSON file of a results directory: only a regular file (a FIFO
/// would block forever), of at most [`MAX_JSON_BYTES`].
pub fn read_json<T: for<'de> Deserialize<'de>>(path: &Path) -> io::Result<T> {
    let file = crate::records::open_regular(path)?;
    if file.metadata()?.len() > MAX_JSON_BYTES {
        return Err(io::Error::new(
            io::ErrorKind::InvalidData,
            format!(
                "{} is larger than {} MiB; it is not a file flashlab wrote",
                path.display(),
                MAX_JSON_BYTES >> 20
            ),
        ));
    }
    // Small files: read whole, then parsed (several times faster than
    // serde_json's byte-at-a-time reader; a 200,000-run `show` reads as many).
    let mut bytes = Vec::new();
    io::Read::read_to_end(&mut io::Read::take(file, MAX_JSON_BYTES), &mut bytes)?;
    serde_json::from_slice(&bytes).map_err(|e| {
        io::Error::new(
            io::ErrorKind::InvalidData,
            format!("{}: {e}", path.display()),
        )
    })
}

/// Writes JSON so that readers see the old or the new file, never half of one
/// (rename is atomic; see the module comment on why there is no fsync).
pub fn write_json_atomic<T: Serialize>(path: &Path, value: &T) -> io::Result<()> {
    let tmp = path.with_extension("json.tmp");
    {
        let mut f = io::BufWriter::new(fs::File::create(&tmp)?);
        serde_json::to_writer_pretty(&mut f, value)?;
        f.write_all(b"\n")?;
        f.flush()?;
    }
    fs::rename(&tmp, path)
}
