//! The results directory: what a run leaves behind, and everything that is
//! computed from it.
//!
//! Analysis and reports read only saved results, never a live device: a
//! results directory (manifest + per-IO records) is enough to recompute every
//! statistic. The format is versioned ([`SCHEMA_VERSION`]) and documented in
//! `docs/results-format.md`.
//!
//! - [`records`]: the per-IO record file, appended while a run goes;
//! - [`dir`]: the directory layout, manifest and per-run summaries;
//! - [`journal`]: the manifest's append-only journal (run started/finished);
//! - [`stats`]: per-run statistics (IOIgnore excluded);
//! - [`export`] writes CSV;
//! - `parquet` (cargo feature `parquet`): the same columns as Parquet;
//! - [`oltp`]: `oltp.json`, the typed result of one `flashlab oltp` run;
//! - [`time`]: UTC dates without a time-zone database;
//! - [`warnings`]: what makes a run's figures describe something else (reads of never-written pages).

pub mod dir;
pub mod export;
pub mod journal;
pub mod oltp;
#[cfg(feature = "parquet")]
pub mod parquet;
pub mod records;
pub mod stats;
pub mod time;
pub mod warnings;

pub use dir::{
    read_manifest, HostInfo, Manifest, ReplaySpec, ResultsDir, RunEntry, RunStatus, RunSummary,
    Summary, ToolInfo, Workload, SCHEMA_VERSION,
};
pub use journal::{JournalConflict, ManifestError, TornLine, JOURNAL_FILE};
pub use records::{IoRecord, RecordWriter, FLAG_ERROR, FLAG_WARMUP};
pub use stats::{Interval95, LatencyStats, RunStats, Tally, Throughput};

/// A device's statistics as a run summary saves them (`device_stats` in
/// `run.json`): `None` for a device that counts nothing beyond the IOs.
pub fn device_stats_json(stats: &flashlab_device::DeviceStats) -> Option<serde_json::Value> {
    // A struct of numbers and strings always serializes.
    stats
        .sim()
        .map(|s| serde_json::to_value(s).expect("SimStats serializes"))
}
