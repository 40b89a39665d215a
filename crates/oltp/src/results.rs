//! The results directory, written as the run goes: `oltp.json` is rewritten
//! atomically (write + rename) at every stage with its `status`
//! (setting-up, loading, running, complete, interrupted, failed), so a run
//! killed with -9 leaves the last stage it reached; TPC-C's per-second
//! samples are appended to `tpcc-seconds.jsonl`; the traces are
//! `logical.trace` and `physical.trace` (and, on a simulated device,
//! `device.trace`: every NBD request serve received).

use std::path::{Path, PathBuf};

use flashlab_results::oltp::{OltpResult, OltpStatus};
use serde_json::{json, Value};

use crate::blockstat::BlockStat;
use crate::device::DeviceArg;
use crate::endurance::{self, Endurance};
use crate::error::{InputError, OltpError, Result};
use crate::leftovers::Watch;
use crate::OltpConfig;

pub const FILE: &str = flashlab_results::oltp::OLTP_FILE;
/// The key suffix of a section kept as written because it did not fit its type.
pub const MISFIT_SUFFIX: &str = "_as_written";

/// `oltp.json` as the run goes: the typed [`OltpResult`], saved at every
/// stage.
pub struct Doc {
    path: PathBuf,
    pub result: OltpResult,
    pub watch: Watch,
}

impl Doc {
    pub fn create(dir: &Path, cfg: &OltpConfig) -> Result<Doc> {
        // Any entry counts: an existing results directory of another
        // command would lose its manifest.json to ours (and its runs would
        // vanish from `show`).
        let holds_something = std::fs::read_dir(dir).is_ok_and(|mut rd| rd.next().is_some())
            || dir.exists() && !dir.is_dir();
        if holds_something {
            return Err(OltpError::Input(InputError::ResultsNotEmpty {
                dir: dir.to_path_buf(),
            }));
        }
        std::fs::create_dir_all(dir).map_err(|e| {
            OltpError::Input(InputError::ResultsCreate {
                dir: dir.to_path_buf(),
                source: e,
            })
        })?;
        let mut d = Doc {
            path: dir.join(FILE),
            result: OltpResult::new(Default::default(), flashlab_results::time::now_unix_s()),
            watch: Watch::default(),
        };
        d.set("config", serde_json::to_value(cfg).expect("serializes"));
        d.save()?;
        Ok(d)
    }

    /// Puts a producer's section (the driver's report, the tracer's
    /// summary, a DBMS's counters) in its typed place; sections no reader
    /// interprets go to `other` as they are. The producers live in other
    /// crates (tpcc, iotrace) that do not depend on the results schema, so
    /// their values cross here, in memory, through serde's data model; one
    /// that does not fit its typed section (a bug between two of our crates,
    /// which `every_section_lands_in_its_typed_place` and the runs' tests
    /// guard) is kept under `other` as `KEY_as_written`, not lost.
    pub fn set(&mut self, key: &str, v: Value) {
        fn typed<T: serde::de::DeserializeOwned>(
            other: &mut std::collections::BTreeMap<String, Value>,
            key: &str,
            v: Value,
        ) -> Option<T> {
            match serde_json::from_value(v.clone()) {
                Ok(t) => Some(t),
                Err(_) => {
                    // Not under `key` itself: readers would then fail on
                    // the whole document, not only miss this section.
                    other.insert(format!("{key}{MISFIT_SUFFIX}"), v);
                    None
                }
            }
        }
        let r = &mut self.result;
        let o = &mut r.other;
        match key {
            "config" => r.config = typed(o, key, v).unwrap_or_default(),
            "device" => r.device = typed(o, key, v),
            "postgres" => r.postgres = typed(o, key, v),
            "mariadb" => r.mariadb = typed(o, key, v),
            "tpcc" => r.tpcc = typed(o, key, v),
            "tpcc_partial" => r.tpcc_partial = Some(v),
            "tpcc_consistency" => r.tpcc_consistency = typed(o, key, v),
            "trace" => r.trace = typed(o, key, v),
            "series" => r.series = typed(o, key, v),
            "fs_write_amplification" => r.fs_write_amplification = v.as_f64(),
            "trace_consistency" => r.trace_consistency = typed(o, key, v),
            "serve" => r.serve = typed(o, key, v),
            "checkpoints" => r.checkpoints = typed(o, key, v),
            "innodb" => r.innodb = typed(o, key, v),
            "traced_s" => r.traced_s = v.as_f64(),
            "measured_s" => r.measured_s = v.as_f64(),
            "endurance" => r.endurance = typed(o, key, v),
            _ => {
                o.insert(key.into(), v);
            }
        }
    }

    pub fn set_status(&mut self, status: OltpStatus, error: Option<String>) {
        self.result.status = status;
        if error.is_some() {
            self.result.error = error;
        }
    }

    pub fn save(&self) -> Result<()> {
        flashlab_results::dir::write_json_atomic(&self.path, &self.result)
            .map_err(|e| OltpError::failed(format!("cannot write {}", self.path.display()), e))
    }
}

/// What a failed run's TPC-C seconds add up to (`tpcc-seconds.jsonl`,
/// appended as they came): the seconds, commits per type and the tpmC over
/// them.
pub fn partial_tpcc(seconds: &Path) -> Value {
    let text = std::fs::read_to_string(seconds).unwrap_or_default();
    let samples: Vec<Value> = text
        .lines()
        .filter_map(|l| serde_json::from_str(l).ok())
        .collect();
    let sum = |key: &str| -> u64 {
        samples
            .iter()
            .filter_map(|s| s.pointer(key).and_then(Value::as_u64))
            .sum()
    };
    let n = samples.len() as u64;
    let new_orders = sum("/commits/new_order") + sum("/new_order_rollbacks");
    json!({
        "seconds": n,
        "commits": {
            "new_order": sum("/commits/new_order"),
            "payment": sum("/commits/payment"),
            "order_status": sum("/commits/order_status"),
            "delivery": sum("/commits/delivery"),
            "stock_level": sum("/commits/stock_level"),
        },
        "new_order_rollbacks": sum("/new_order_rollbacks"),
        "errors": sum("/errors"),
        "tpmc": if n > 0 { new_orders as f64 * 60.0 / n as f64 } else { 0.0 },
    })
}

/// serve's statistics before and after the measured run, and the deltas
/// that matter: the FTL's WAF over the run, erases, flash time per request.
pub fn serve_section(before: Option<&Value>, after: Option<&Value>) -> Value {
    let num = |v: Option<&Value>, path: &[&str]| -> Option<f64> {
        let mut cur = v?;
        for p in path {
            cur = cur.get(p)?;
        }
        cur.as_f64()
    };
    let d = |path: &[&str]| Some(num(after, path)? - num(before, path)?);
    let page_bytes = num(after, &["sim", "page_bytes"]).unwrap_or(4096.0);
    let host_written = d(&["sim", "host", "write_bytes"]);
    let programs = d(&["sim", "flash", "programs", "total"]);
    let ftl_waf = match (host_written, programs) {
        (Some(h), Some(p)) if h > 0.0 => Some(p * page_bytes / h),
        _ => None,
    };
    json!({
        "before": before,
        "after": after,
        "run": {
            "host_write_bytes": host_written,
            "host_read_bytes": d(&["sim", "host", "read_bytes"]),
            "flash_programs": programs,
            "erases": d(&["sim", "flash", "erases", "total"]),
            "ftl_write_amplification": ftl_waf,
            "gc_relocated_pages": d(&["sim", "gc", "relocated_pages"]),
        },
        "whole_device": {
            "ftl_write_amplification": num(after, &["sim", "write_amplification"]),
            "erase_count": after.and_then(|a| a.pointer("/sim/erase_count")).cloned(),
            "chip_time_per_host_request_ns": after.and_then(|a| a.pointer("/sim/chip_time_per_host_request_ns")).cloned(),
        }
    })
}

/// The physical trace against the kernel's /sys/block/DEV/stat deltas.
pub fn consistency(t: &crate::tracing::Traced, delta: Option<&BlockStat>) -> Value {
    let Some(d) = delta else {
        return json!({"checked": false, "why": "no /sys/block statistics for this device"});
    };
    let (r, w) = t.physical_counts().unwrap_or((0, 0, 0, 0)).into_pair();
    let completed = |k: &str| {
        t.summary
            .pointer(&format!("/physical_detail/completed/{k}"))
            .and_then(Value::as_u64)
    };
    let logical = |k: &str| t.summary.pointer(&format!("/logical_detail/{k}")).cloned();
    json!({
        "checked": true,
        "lost_events": t.summary.get("physical_lost_events"),
        // Logical requests no file could be named for (an fd closed, and
        // its process gone, before /proc could say; 0 is the goal), and
        // the fsyncs named by the inode they synced instead of their fd.
        "logical_unattributed_ios": logical("unresolved_ios"),
        "logical_misresolved_fds": logical("misresolved_fds"),
        "logical_syncs_by_inode": logical("syncs_by_inode"),
        // Completions as the tracer saw them, which the kernel's counters
        // count too (write-zeroes requests among the writes).
        "completed_read_bytes": completed("read_sectors").map(|s| s * 512),
        "completed_write_bytes": completed("write_sectors").map(|s| s * 512),
        // Requests the trace format has no operation for (write-zeroes):
        // counted by /sys/block as writes, absent from physical.trace.
        "other_requests": t.summary.pointer("/physical_detail/other_requests"),
        "stat_read_ios": d.read_ios, "stat_write_ios": d.write_ios,
        "stat_read_bytes": d.read_bytes(), "stat_write_bytes": d.write_bytes(),
        "trace_read_ios": r.0, "trace_read_bytes": r.1,
        "trace_write_ios": w.0, "trace_write_bytes": w.1,
    })
}

trait Pair {
    fn into_pair(self) -> ((u64, u64), (u64, u64));
}

impl Pair for (u64, u64, u64, u64) {
    fn into_pair(self) -> ((u64, u64), (u64, u64)) {
        ((self.0, self.1), (self.2, self.3))
    }
}

/// Table 6 (and the erase-count estimate on a simulated device).
pub fn endurance(
    cfg: &OltpConfig,
    dev: &DeviceArg,
    physical_write_bytes: u64,
    seconds: f64,
    serve_before: Option<&Value>,
    serve_after: Option<&Value>,
) -> Endurance {
    let rate = physical_write_bytes as f64 / seconds.max(1e-9);
    let profile = match dev {
        DeviceArg::Sim { spec } => flashlab_sim::resolve_spec(spec).ok(),
        _ => None,
    };
    let prof_end = profile
        .as_ref()
        .map(|p| p.endurance.clone())
        .unwrap_or_default();
    let (rated, source) = match (
        cfg.rated_lifetime_writes_bytes,
        prof_end.rated_lifetime_writes_bytes,
    ) {
        (Some(b), _) => (Some(b), Some("--rated-lifetime-writes".to_string())),
        (None, Some(b)) => (
            Some(b),
            Some(format!(
                "profile {}: {}",
                profile.as_ref().map(|p| p.name.as_str()).unwrap_or("?"),
                prof_end.source
            )),
        ),
        (None, None) => (None, None),
    };
    let mut e = Endurance {
        physical_write_bytes_per_s: rate,
        rated_lifetime_writes_bytes: rated,
        rated_lifetime_writes_source: source,
        years_from_rated_writes: rated.and_then(|b| endurance::years_from_writes(b, rate)),
        rated_pe_cycles: prof_end.rated_pe_cycles,
        ..Endurance::default()
    };
    let erases = |v: Option<&Value>| v?.pointer("/sim/flash/erases/total")?.as_f64();
    if let (Some(b), Some(a)) = (erases(serve_before), erases(serve_after)) {
        let per_s = (a - b).max(0.0) / seconds.max(1e-9);
        e.erases_per_s = Some(per_s);
        let blocks = serve_after
            .and_then(|v| v.pointer("/sim/erase_count/blocks"))
            .and_then(|b| b.as_u64());
        e.flash_blocks = blocks;
        if let (Some(pe), Some(blocks)) = (e.rated_pe_cycles, blocks) {
            e.years_from_erase_counts = endurance::years_from_erases(pe, blocks, per_s);
            let logical = serve_after
                .and_then(|v| v.pointer("/store/logical_pages"))
                .and_then(|x| x.as_f64());
            let page = serve_after
                .and_then(|v| v.pointer("/sim/page_bytes"))
                .and_then(|x| x.as_f64())
                .unwrap_or(4096.0);
            let rated_cap = profile.as_ref().map(|p| p.geometry.capacity.0 as f64);
            if let (Some(y), Some(l), Some(rc)) = (e.years_from_erase_counts, logical, rated_cap) {
                let sim_cap = l * page;
                if sim_cap > 0.0 {
                    e.years_from_erase_counts_at_rated_capacity = Some(y * rc / sim_cap);
                }
            }
        }
    }
    e
}

#[cfg(test)]
mod tests {
    use super::*;

    fn config(results: &Path) -> OltpConfig {
        OltpConfig {
            device: Some("sim:intel-x25e".into()),
            mount: None,
            size_bytes: None,
            allow_write_to: None,
            fs: crate::fs::FsKind::Ext2,
            scheduler: None,
            dbms: crate::dbms::DbmsKind::Mariadb,
            pg_bin: None,
            pg: Default::default(),
            innodb: Default::default(),
            warehouses: 1,
            load_workers: 2,
            terminals: 8,
            ramp_up_s: 5.0,
            duration_s: 30.0,
            keying_and_think: false,
            seed: 42,
            repeat: 1,
            rate_per_min: None,
            mix: None,
            trace: true,
            pace: true,
            rated_lifetime_writes_bytes: None,
            interval_s: 1.0,
            setup_only: false,
            results: results.to_path_buf(),
            exe: PathBuf::new(),
        }
    }

    #[test]
    fn every_section_lands_in_its_typed_place() {
        let dir = tempfile::tempdir().unwrap();
        let res = dir.path().join("res");
        let mut doc = Doc::create(&res, &config(&res)).unwrap();
        assert_eq!(doc.result.config.dbms, "mariadb");
        assert_eq!(doc.result.config.warehouses, 1);
        // The producers' own values where this crate makes them.
        doc.set("serve", serve_section(None, None));
        doc.set(
            "checkpoints",
            serde_json::to_value(crate::checkpoints::CheckpointReport::default()).unwrap(),
        );
        doc.set(
            "endurance",
            serde_json::to_value(Endurance::default()).unwrap(),
        );
        doc.set(
            "device",
            json!({"block_dev": "/dev/loop0", "size_bytes": 1, "sysfs_name": "loop0"}),
        );
        doc.set("mariadb", json!({"version": "10.11", "innodb": {}}));
        doc.set(
            "tpcc",
            json!({"tpmc": 60.0, "transactions_per_s": 2.5, "nurand": {}}),
        );
        doc.set(
            "trace",
            json!({"logical": {"reads": 1, "writes": 2, "read_bytes": 8192, "write_bytes": 16384}}),
        );
        doc.set("series", json!({"logical": {"rates": [], "by_kind": []}}));
        doc.set(
            "trace_consistency",
            json!({"checked": false, "why": "no statistics"}),
        );
        doc.set("innodb", json!({"counter_vs_trace": [["fsyncs", 3, 3]]}));
        doc.set("tpcc_consistency", json!({"conditions": [], "ok": true}));
        doc.set("traced_s", json!(2.0));
        doc.set("load", json!({"total_rows": 1}));
        let r = &doc.result;
        assert!(r.serve.is_some() && r.checkpoints.is_some() && r.endurance.is_some());
        assert!(r.device.is_some() && r.mariadb.is_some() && r.tpcc.is_some());
        assert!(r.trace.is_some() && r.series.is_some() && r.trace_consistency.is_some());
        assert!(r.innodb.is_some() && r.tpcc_consistency.is_some());
        assert_eq!(r.write_bytes_per_s(false), Some(8192.0));
        // Only the section no reader interprets is left untyped.
        assert_eq!(r.other.keys().collect::<Vec<_>>(), ["load"]);
        // A value that does not fit its type is kept, not lost.
        doc.set("tpcc", json!("not a report"));
        assert!(doc.result.tpcc.is_none());
        assert_eq!(doc.result.other["tpcc_as_written"], "not a report");
        // What is saved reads back as the same document.
        doc.save().unwrap();
        assert_eq!(OltpResult::read(&res).unwrap(), doc.result);
    }

    #[test]
    fn a_failed_run_s_seconds_add_up_to_a_partial_report() {
        let dir = tempfile::tempdir().unwrap();
        let f = dir.path().join("tpcc-seconds.jsonl");
        let second = |no: u64, rb: u64| {
            json!({"second": 1, "ramp_up": false,
                   "commits": {"new_order": no, "payment": 9, "order_status": 1, "delivery": 1, "stock_level": 1},
                   "new_order_rollbacks": rb, "retries": 0, "errors": 0, "tpmc": 0.0, "transactions_per_s": 0.0})
            .to_string()
        };
        std::fs::write(&f, format!("{}\n{}\n", second(10, 0), second(9, 1))).unwrap();
        let p = partial_tpcc(&f);
        assert_eq!(p["seconds"], 2);
        assert_eq!(p["commits"]["new_order"], 19);
        // Rolled-back New-Orders count in tpmC, as in the full report.
        assert_eq!(p["tpmc"], 600.0);
        assert_eq!(partial_tpcc(&dir.path().join("none"))["seconds"], 0);
    }
}
