//! `oltp.json`: what one `flashlab oltp` run leaves in its results
//! directory, as one typed document. `flashlab oltp` writes it (at every
//! stage, atomically), and the report, the wang11-oltp suite and the
//! printed summary read it back with [`OltpResult::read`], never by walking
//! untyped JSON.
//!
//! The figures the readers use are typed fields. Each section also keeps
//! what its producer wrote beyond them (`rest`: the TPC-C driver's NURand
//! constants, the tracer's detail, serve's raw statistics), so reading and
//! writing a document back loses nothing, and a newer writer's extra
//! sections survive an older reader ([`OltpResult::other`]).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

/// The file's name inside the results directory.
pub const OLTP_FILE: &str = "oltp.json";
/// The `format` tag of the documents this version writes.
pub const OLTP_FORMAT: &str = "flashlab-oltp/1";

/// A section's keys beyond its typed fields, kept as written.
pub type Rest = Map<String, Value>;

/// Where the run stands; rewritten at each stage, so a killed run leaves
/// the last stage it reached.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum OltpStatus {
    #[default]
    SettingUp,
    Loading,
    WarmingUp,
    Running,
    Complete,
    Interrupted,
    Failed,
}

impl OltpStatus {
    pub fn name(self) -> &'static str {
        match self {
            OltpStatus::SettingUp => "setting-up",
            OltpStatus::Loading => "loading",
            OltpStatus::WarmingUp => "warming-up",
            OltpStatus::Running => "running",
            OltpStatus::Complete => "complete",
            OltpStatus::Interrupted => "interrupted",
            OltpStatus::Failed => "failed",
        }
    }
}

/// One `flashlab oltp` run.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct OltpResult {
    pub format: String,
    pub status: OltpStatus,
    /// Why the run failed (status `failed`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    pub config: OltpRunConfig,
    #[serde(default)]
    pub started_unix_s: u64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub device: Option<DeviceSection>,
    /// The DBMS's own section: one of the two, as `config.dbms` says.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub postgres: Option<DbmsSection>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mariadb: Option<DbmsSection>,
    /// The TPC-C driver's report of the measured window.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tpcc: Option<TpccFigures>,
    /// What a failed run's completed seconds add up to.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tpcc_partial: Option<Value>,
    /// Clause 3.3.2's consistency conditions, read from the database after the run.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tpcc_consistency: Option<ConsistencyFigures>,
    /// The tracer's totals (logical: the DBMS's file-system requests;
    /// physical: the device's block requests).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub trace: Option<TraceTotals>,
    /// Wang et al.'s Figs 7-9: per-interval rates of both layers.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub series: Option<TraceSeries>,
    /// Physical / logical bytes written.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fs_write_amplification: Option<f64>,
    /// The physical trace against /sys/block's counters.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub trace_consistency: Option<TraceConsistency>,
    /// The simulated device's statistics (flashlab serve) over the window.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub serve: Option<ServeFigures>,
    /// PostgreSQL's checkpoints inside the measured window.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub checkpoints: Option<CheckpointReport>,
    /// InnoDB's own counters against the logical trace of the same window.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub innodb: Option<InnodbCounters>,
    /// Seconds the traces cover (the rates' denominator).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub traced_s: Option<f64>,
    /// Seconds of TPC-C's measured window.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub measured_s: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub endurance: Option<Endurance>,
    /// `--repeat N`: every window's figures and their 95 % intervals.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub repeats: Option<RepeatFigures>,
    /// Sections no reader interprets (load, warm-up, block_stat, teardown,
    /// scheduler, ...), by key, as written.
    #[serde(flatten)]
    pub other: BTreeMap<String, Value>,
}

/// What `flashlab oltp` was asked to do (its flags, as recorded).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct OltpRunConfig {
    #[serde(default)]
    pub device: Option<String>,
    #[serde(default)]
    pub mount: Option<PathBuf>,
    #[serde(default)]
    pub fs: String,
    /// `postgres` or `mariadb` (documents from before `--dbms`: postgres).
    #[serde(default = "default_dbms")]
    pub dbms: String,
    #[serde(default)]
    pub warehouses: u32,
    #[serde(default)]
    pub terminals: u32,
    #[serde(default)]
    pub duration_s: f64,
    #[serde(flatten)]
    pub rest: Rest,
}

fn default_dbms() -> String {
    "postgres".into()
}

#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct DeviceSection {
    /// The block device the file system is on (a loop device for files and sim:).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub block_dev: Option<String>,
    #[serde(default)]
    pub size_bytes: u64,
    #[serde(flatten)]
    pub rest: Rest,
}

#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct DbmsSection {
    #[serde(default)]
    pub version: String,
    #[serde(flatten)]
    pub rest: Rest,
}

fn is_zero(n: &u64) -> bool {
    *n == 0
}

/// One measured window of a `--repeat N` run.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct WindowFigures {
    /// 1 is the traced window (the trace, the file-system WAF and the
    /// endurance describe it alone); 2..N follow it, untraced.
    pub window: u32,
    pub seed: u64,
    pub measured_s: f64,
    pub tpmc: f64,
    pub transactions_per_s: f64,
    pub new_order_p90_us: u64,
    pub mix_within_spec: bool,
    /// `--rate`: transactions that started more than one arrival interval late.
    #[serde(default)]
    pub late_starts: u64,
}

impl WindowFigures {
    pub fn of(window: u32, seed: u64, t: &TpccFigures) -> WindowFigures {
        WindowFigures {
            window,
            seed,
            measured_s: t.measured_s,
            tpmc: t.tpmc,
            transactions_per_s: t.transactions_per_s,
            new_order_p90_us: t.new_order.response_time.p90_us,
            mix_within_spec: t.mix.within_spec,
            late_starts: t.late_starts,
        }
    }
}

/// `--repeat N`: the windows run on the same loaded database, each started
/// from a flush (PostgreSQL's CHECKPOINT, InnoDB's dirty pages written), and
/// the 95 % intervals of their figures.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct RepeatFigures {
    pub windows: Vec<WindowFigures>,
    pub tpmc: crate::stats::Interval95,
    pub transactions_per_s: crate::stats::Interval95,
    pub new_order_p90_us: crate::stats::Interval95,
}

impl RepeatFigures {
    pub fn of(windows: Vec<WindowFigures>) -> RepeatFigures {
        let of = |f: fn(&WindowFigures) -> f64| {
            crate::stats::Interval95::of(&windows.iter().map(f).collect::<Vec<_>>())
        };
        RepeatFigures {
            tpmc: of(|w| w.tpmc),
            transactions_per_s: of(|w| w.transactions_per_s),
            new_order_p90_us: of(|w| w.new_order_p90_us as f64),
            windows,
        }
    }
}

/// The TPC-C driver's report (flashlab-tpcc's `TpccReport`).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct TpccFigures {
    /// New-Orders completed per minute (commits and user rollbacks).
    pub tpmc: f64,
    pub transactions_per_s: f64,
    #[serde(default)]
    pub measured_s: f64,
    #[serde(default)]
    pub new_order: TypeFigures,
    #[serde(default)]
    pub payment: TypeFigures,
    #[serde(default)]
    pub order_status: TypeFigures,
    #[serde(default)]
    pub delivery: TypeFigures,
    #[serde(default)]
    pub stock_level: TypeFigures,
    /// Clause 9.2.2.5's audit of the window's mix.
    #[serde(default)]
    pub mix: MixFigures,
    /// `--rate`: the offered load, transactions of all types per minute.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rate_per_min: Option<u32>,
    /// `--rate`: transactions that started more than one arrival interval
    /// late (left out when 0, so a document from before `--rate` reads
    /// back and writes out unchanged).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub late_starts: u64,
    /// One sample per second, from the start of the run.
    #[serde(default)]
    pub seconds: Vec<SecondFigures>,
    #[serde(flatten)]
    pub rest: Rest,
}

impl TpccFigures {
    /// The five types in the specification's order.
    pub fn types(&self) -> [&TypeFigures; 5] {
        [
            &self.new_order,
            &self.payment,
            &self.order_status,
            &self.delivery,
            &self.stock_level,
        ]
    }
}

#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct TypeFigures {
    #[serde(default)]
    pub name: String,
    #[serde(default)]
    pub commits: u64,
    #[serde(default)]
    pub mix_percent: f64,
    #[serde(default)]
    pub response_time: ResponseTimeFigures,
    #[serde(flatten)]
    pub rest: Rest,
}

#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct ResponseTimeFigures {
    #[serde(default)]
    pub mean_us: f64,
    #[serde(default)]
    pub p90_us: u64,
    #[serde(default)]
    pub p99_us: u64,
    #[serde(default)]
    pub max_us: u64,
    #[serde(flatten)]
    pub rest: Rest,
}

#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct MixFigures {
    #[serde(default)]
    pub within_spec: bool,
    #[serde(default)]
    pub verdict: String,
    #[serde(default)]
    pub types: Vec<MixShareFigures>,
    #[serde(flatten)]
    pub rest: Rest,
}

#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct MixShareFigures {
    pub name: String,
    pub percent: f64,
    #[serde(flatten)]
    pub rest: Rest,
}

#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct SecondFigures {
    pub second: u32,
    pub transactions_per_s: f64,
    #[serde(flatten)]
    pub rest: Rest,
}

/// Both layers' totals over the traced time.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct TraceTotals {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub logical: Option<LayerTotals>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub physical: Option<LayerTotals>,
    #[serde(flatten)]
    pub rest: Rest,
}

#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct LayerTotals {
    pub reads: u64,
    pub writes: u64,
    pub read_bytes: u64,
    pub write_bytes: u64,
    #[serde(default)]
    pub flushes: u64,
    #[serde(flatten)]
    pub rest: Rest,
}

impl LayerTotals {
    /// Mean bytes per write (None without writes).
    pub fn avg_write_bytes(&self) -> Option<f64> {
        (self.writes > 0).then(|| self.write_bytes as f64 / self.writes as f64)
    }

    /// Mean bytes per read (None without reads).
    pub fn avg_read_bytes(&self) -> Option<f64> {
        (self.reads > 0).then(|| self.read_bytes as f64 / self.reads as f64)
    }
}

#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct TraceSeries {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub logical: Option<LayerSeries>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub physical: Option<LayerSeries>,
    #[serde(flatten)]
    pub rest: Rest,
}

#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct LayerSeries {
    #[serde(default)]
    pub rates: Vec<IntervalRates>,
    #[serde(flatten)]
    pub rest: Rest,
}

/// One interval of a layer's series.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct IntervalRates {
    pub start_ns: u64,
    #[serde(default)]
    pub read_iops: f64,
    #[serde(default)]
    pub write_iops: f64,
    /// None in an interval without reads (writes).
    #[serde(default)]
    pub avg_read_size_bytes: Option<f64>,
    #[serde(default)]
    pub avg_write_size_bytes: Option<f64>,
    #[serde(flatten)]
    pub rest: Rest,
}

/// The physical trace against /sys/block/DEV/stat (bytes must agree).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct TraceConsistency {
    pub checked: bool,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub trace_read_bytes: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub trace_write_bytes: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub trace_read_ios: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub trace_write_ios: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub completed_write_bytes: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stat_read_bytes: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stat_write_bytes: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stat_read_ios: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stat_write_ios: Option<u64>,
    /// Write-zeroes and other requests the trace file has no operation for.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub other_requests: Option<u64>,
    /// Logical requests no file could be named for (0 is the goal).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub logical_unattributed_ios: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub logical_syncs_by_inode: Option<u64>,
    #[serde(flatten)]
    pub rest: Rest,
}

#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct ServeFigures {
    /// Deltas over the measured window.
    #[serde(default)]
    pub run: ServeRun,
    #[serde(default)]
    pub whole_device: ServeWholeDevice,
    #[serde(flatten)]
    pub rest: Rest,
}

#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct ServeRun {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ftl_write_amplification: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub erases: Option<f64>,
    #[serde(flatten)]
    pub rest: Rest,
}

#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct ServeWholeDevice {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub chip_time_per_host_request_ns: Option<ChipTime>,
    #[serde(flatten)]
    pub rest: Rest,
}

#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct ChipTime {
    pub total: f64,
    #[serde(flatten)]
    pub rest: Rest,
}

/// The checkpoints of the measured window (PostgreSQL's own counters).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct CheckpointReport {
    /// The view the counters come from.
    pub source: String,
    /// PostgreSQL's checkpoint_timeout over the window, seconds.
    pub interval_s: f64,
    /// Checkpoints completed inside the window (timed + requested).
    pub completed: u64,
    pub timed: u64,
    pub requested: u64,
    /// Checkpoints started inside the window ("checkpoint starting" log
    /// lines): one still writing at the end is started, not completed.
    pub started: u64,
    /// Buffers the completed checkpoints wrote, and those in bytes.
    pub buffers_written: u64,
    pub bytes_written: u64,
    pub write_time_ms: f64,
    pub sync_time_ms: f64,
}

/// InnoDB's status counters over the window, set against the logical trace.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct InnodbCounters {
    /// (what, InnoDB's count, the trace's count).
    #[serde(default)]
    pub counter_vs_trace: Vec<(String, u64, u64)>,
    #[serde(flatten)]
    pub rest: Rest,
}

/// Clause 3.3.2's conditions as the database answered them.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct ConsistencyFigures {
    /// Every condition held.
    #[serde(default)]
    pub ok: bool,
    #[serde(default)]
    pub conditions: Vec<ConditionFigures>,
    #[serde(flatten)]
    pub rest: Rest,
}

#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ConditionFigures {
    pub number: u32,
    pub description: String,
    pub violations: u64,
}

/// Endurance as in Wang et al. Table 6: the rated lifetime writes divided by
/// the physical write rate, in years; on a simulated device also from its
/// erase counts against the rated program/erase cycles of its blocks.
#[derive(Clone, Debug, Default, Serialize, Deserialize, PartialEq)]
pub struct Endurance {
    /// Physical bytes written per second during the measured run.
    pub physical_write_bytes_per_s: f64,
    pub rated_lifetime_writes_bytes: Option<u64>,
    /// Where the rating comes from (`--rated-lifetime-writes` or the profile).
    pub rated_lifetime_writes_source: Option<String>,
    /// rated lifetime writes / physical write rate (Table 6).
    pub years_from_rated_writes: Option<f64>,
    pub rated_pe_cycles: Option<u64>,
    /// Simulated device: block erases per second during the run.
    pub erases_per_s: Option<f64>,
    /// Simulated device: its flash blocks.
    pub flash_blocks: Option<u64>,
    /// Simulated device: rated P/E cycles x blocks / erase rate (perfect
    /// wear levelling), for the simulated capacity.
    pub years_from_erase_counts: Option<f64>,
    /// The same, scaled to the rated device's capacity (the run's erase
    /// rate spread over proportionally more blocks).
    pub years_from_erase_counts_at_rated_capacity: Option<f64>,
}

/// A per-second rate of a total over the traced time.
fn per_s(total: u64, secs: Option<f64>) -> Option<f64> {
    secs.filter(|s| *s > 0.0).map(|s| total as f64 / s)
}

impl OltpResult {
    /// A new document for a run about to start.
    pub fn new(config: OltpRunConfig, started_unix_s: u64) -> OltpResult {
        OltpResult {
            format: OLTP_FORMAT.into(),
            config,
            started_unix_s,
            ..OltpResult::default()
        }
    }

    /// Reads `DIR/oltp.json` (size-limited, a regular file only).
    pub fn read(dir: &Path) -> std::io::Result<OltpResult> {
        crate::dir::read_json(&dir.join(OLTP_FILE))
    }

    /// The DBMS's own section, whichever it is.
    pub fn dbms_section(&self) -> Option<&DbmsSection> {
        self.mariadb.as_ref().or(self.postgres.as_ref())
    }

    /// "MariaDB/InnoDB" or "PostgreSQL", as `config.dbms` says.
    pub fn dbms_name(&self) -> &'static str {
        if self.config.dbms == "mariadb" {
            "MariaDB/InnoDB"
        } else {
            "PostgreSQL"
        }
    }

    /// A layer's totals (`logical` or `physical`).
    pub fn layer(&self, physical: bool) -> Option<&LayerTotals> {
        let t = self.trace.as_ref()?;
        if physical {
            t.physical.as_ref()
        } else {
            t.logical.as_ref()
        }
    }

    /// The traced seconds, when positive.
    fn secs(&self) -> Option<f64> {
        self.traced_s.filter(|s| *s > 0.0)
    }

    /// A layer's requests (reads + writes) per second over the traced time.
    pub fn iops(&self, physical: bool) -> Option<f64> {
        let l = self.layer(physical)?;
        per_s(l.reads + l.writes, self.secs())
    }

    /// A layer's bytes read per second over the traced time.
    pub fn read_bytes_per_s(&self, physical: bool) -> Option<f64> {
        per_s(self.layer(physical)?.read_bytes, self.secs())
    }

    /// A layer's bytes written per second over the traced time.
    pub fn write_bytes_per_s(&self, physical: bool) -> Option<f64> {
        per_s(self.layer(physical)?.write_bytes, self.secs())
    }

    /// The same for reads, writes and flushes counted per second.
    pub fn reads_per_s(&self, physical: bool) -> Option<f64> {
        per_s(self.layer(physical)?.reads, self.secs())
    }

    pub fn writes_per_s(&self, physical: bool) -> Option<f64> {
        per_s(self.layer(physical)?.writes, self.secs())
    }

    pub fn flushes_per_s(&self, physical: bool) -> Option<f64> {
        per_s(self.layer(physical)?.flushes, self.secs())
    }

    /// A layer's per-interval series (Figs 7-9).
    pub fn rates(&self, physical: bool) -> &[IntervalRates] {
        let s = self.series.as_ref().and_then(|s| {
            if physical {
                s.physical.as_ref()
            } else {
                s.logical.as_ref()
            }
        });
        s.map_or(&[], |l| l.rates.as_slice())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The shape `flashlab oltp` writes (abridged from a real MariaDB run).
    fn written() -> Value {
        let ty = |name: &str| {
            serde_json::json!({"name": name, "commits": 1630, "rollbacks": 13, "mix_percent": 43.56,
                               "response_time": {"mean_us": 5000.0, "p90_us": 9000, "p99_us": 20000, "max_us": 90000, "p50_us": 4000}})
        };
        serde_json::json!({
            "format": "flashlab-oltp/1",
            "status": "complete",
            "config": {"device": "sim:intel-x25e", "mount": null, "fs": "ext4", "dbms": "mariadb",
                       "warehouses": 1, "terminals": 8, "duration_s": 30.0, "seed": 42},
            "started_unix_s": 1_700_000_000u64,
            "device": {"block_dev": "/dev/loop0", "size_bytes": 3_221_225_472u64, "sysfs_name": "loop0"},
            "mariadb": {"version": "10.11", "innodb": {"flush_method": "O_DIRECT"}},
            "tpcc": {"tpmc": 3286.0, "transactions_per_s": 125.7, "measured_s": 30.0,
                     "new_order": ty("New-Order"), "payment": ty("Payment"), "order_status": ty("Order-Status"),
                     "delivery": ty("Delivery"), "stock_level": ty("Stock-Level"),
                     "mix": {"within_spec": true, "verdict": "within", "completed": 3772,
                             "types": [{"name": "New-Order", "percent": 43.56, "within": true}]},
                     "seconds": [{"second": 0, "transactions_per_s": 120.0, "ramp_up": false}],
                     "nurand": {"c_id": 1}},
            "trace": {"logical": {"reads": 112, "writes": 1040, "read_bytes": 1_835_008u64, "write_bytes": 27_028_480u64,
                                  "flushes": 1064, "discards": 0},
                      "physical": {"reads": 112, "writes": 1073, "read_bytes": 1_835_008u64, "write_bytes": 27_241_984u64, "flushes": 1082},
                      "lost_events": 0},
            "series": {"interval_s": 1.0, "logical": {"rates": [{"start_ns": 0, "read_iops": 41.0, "write_iops": 11.0,
                        "avg_read_size_bytes": 16384.0, "avg_write_size_bytes": 19688.7, "read_bytes_per_s": 671_744.0}]}},
            "fs_write_amplification": 1.0079,
            "trace_consistency": {"checked": true, "trace_write_bytes": 27_241_984u64, "stat_write_bytes": 27_241_984u64, "lost_events": 0},
            "innodb": {"counter_vs_trace": [["fsyncs", 1064, 1064]], "delta": {"Innodb_data_fsyncs": 1064}},
            "traced_s": 30.5887,
            "endurance": {"physical_write_bytes_per_s": 890_589.6, "rated_lifetime_writes_bytes": 2_000_000_000_000_000u64,
                          "rated_lifetime_writes_source": "profile", "years_from_rated_writes": 71.16, "rated_pe_cycles": 100_000,
                          "erases_per_s": 0.0, "flash_blocks": 13160, "years_from_erase_counts": null,
                          "years_from_erase_counts_at_rated_capacity": null},
            "tpcc_consistency": {"ok": true, "conditions": [{"number": 1, "description": "W_YTD", "violations": 0}]},
            "teardown": {"log": ["stop MariaDB"], "errors": [], "leftovers": []},
            "load": {"total_rows": 599_936}
        })
    }

    #[test]
    fn a_written_document_reads_back_typed_and_round_trips_unchanged() {
        let doc = written();
        let r: OltpResult = serde_json::from_value(doc.clone()).unwrap();
        assert_eq!(r.status, OltpStatus::Complete);
        assert_eq!(r.dbms_name(), "MariaDB/InnoDB");
        assert_eq!(r.tpcc.as_ref().unwrap().tpmc, 3286.0);
        assert_eq!(
            r.tpcc.as_ref().unwrap().new_order.response_time.p90_us,
            9000
        );
        assert_eq!(r.layer(true).unwrap().write_bytes, 27_241_984);
        assert_eq!(r.rates(false)[0].write_iops, 11.0);
        assert!(r.rates(true).is_empty());
        assert_eq!(r.innodb.as_ref().unwrap().counter_vs_trace[0].1, 1064);
        assert!(r.tpcc_consistency.as_ref().unwrap().ok);
        // Rates over the traced time.
        let w = r.write_bytes_per_s(false).unwrap();
        assert!((w - 27_028_480.0 / 30.5887).abs() < 1e-6, "{w}");
        // Nothing is lost: the producers' extra keys and the sections no
        // reader interprets come back as written.
        assert_eq!(serde_json::to_value(&r).unwrap(), doc);
        assert!(r.other.contains_key("teardown"));
    }

    #[test]
    fn a_document_from_before_dbms_is_postgres_and_a_partial_one_reads() {
        let r: OltpResult = serde_json::from_value(serde_json::json!({
            "format": "flashlab-oltp/1", "status": "loading",
            "config": {"device": "/var/tmp/x.img", "fs": "ext2", "warehouses": 2, "terminals": 4},
        }))
        .unwrap();
        assert_eq!(r.config.dbms, "postgres");
        assert_eq!(r.dbms_name(), "PostgreSQL");
        assert_eq!(r.status, OltpStatus::Loading);
        assert!(r.tpcc.is_none() && r.iops(false).is_none());
    }

    #[test]
    fn the_status_names_are_what_the_file_says() {
        for s in [
            OltpStatus::SettingUp,
            OltpStatus::WarmingUp,
            OltpStatus::Complete,
            OltpStatus::Failed,
        ] {
            assert_eq!(serde_json::to_value(s).unwrap(), s.name());
        }
    }
}
