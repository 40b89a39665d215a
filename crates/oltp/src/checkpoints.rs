//! PostgreSQL's checkpoints over the measured window: how many the
//! checkpointer completed and how many bytes they wrote, from its own
//! counters (`pg_stat_checkpointer` from PostgreSQL 17 on, the checkpoint
//! columns of `pg_stat_bgwriter` before), and how many it started, from
//! its log (`log_checkpoints=on`).
//!
//! Why it matters: a run shorter than the checkpoint interval writes no
//! data pages and no full-page images; an outside audit found physical bytes
//! per New-Order 66 % higher once one checkpoint fell inside the window
//! (issue 32).

use std::path::Path;
use std::time::{Duration, Instant};

use serde::{Deserialize, Serialize};

use crate::error::{Failure, OltpError, Result};

/// The checkpointer's counters at one moment.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
pub struct Counters {
    pub timed: u64,
    pub requested: u64,
    pub buffers_written: u64,
    pub write_time_ms: f64,
    pub sync_time_ms: f64,
}

/// The checkpoints of the measured window, typed in the results crate's
/// `oltp.json` schema.
pub use flashlab_results::oltp::CheckpointReport;

/// The report of the counters read at the window's start and end.
pub fn between(
    source: &str,
    interval_s: f64,
    block_bytes: u64,
    before: &Counters,
    after: &Counters,
    started: u64,
) -> CheckpointReport {
    let timed = after.timed.saturating_sub(before.timed);
    let requested = after.requested.saturating_sub(before.requested);
    let buffers = after.buffers_written.saturating_sub(before.buffers_written);
    CheckpointReport {
        source: source.to_string(),
        interval_s,
        completed: timed + requested,
        timed,
        requested,
        started,
        buffers_written: buffers,
        bytes_written: buffers * block_bytes,
        write_time_ms: after.write_time_ms - before.write_time_ms,
        sync_time_ms: after.sync_time_ms - before.sync_time_ms,
    }
}

/// The two shapes of the counters: PostgreSQL 17 moved them out of
/// pg_stat_bgwriter into pg_stat_checkpointer and renamed them.
const VIEWS: [(&str, &str); 2] = [
    (
        "pg_stat_checkpointer",
        "SELECT num_timed::int8, num_requested::int8, buffers_written::int8, \
         write_time::float8, sync_time::float8 FROM pg_stat_checkpointer",
    ),
    (
        "pg_stat_bgwriter",
        "SELECT checkpoints_timed::int8, checkpoints_req::int8, buffers_checkpoint::int8, \
         checkpoint_write_time::float8, checkpoint_sync_time::float8 FROM pg_stat_bgwriter",
    ),
];

fn failed(what: &str, source: postgres::Error) -> OltpError {
    OltpError::Failed(Failure::Sql {
        what: what.to_string(),
        source,
    })
}

/// The counters now, and the view they come from. A new connection each
/// time: a session caches what it read of the statistics.
pub fn read(db: &postgres::Config) -> Result<(&'static str, Counters)> {
    let mut c = db
        .connect(postgres::NoTls)
        .map_err(|e| failed("connecting to read the checkpoint counters", e))?;
    let has_checkpointer = c
        .query_one(
            "SELECT to_regclass('pg_catalog.pg_stat_checkpointer') IS NOT NULL",
            &[],
        )
        .map_err(|e| failed("looking for pg_stat_checkpointer", e))?
        .get::<_, bool>(0);
    let (view, sql) = VIEWS[if has_checkpointer { 0 } else { 1 }];
    let row = c
        .query_one(sql, &[])
        .map_err(|e| failed(&format!("reading {view}"), e))?;
    Ok((
        view,
        Counters {
            timed: row.get::<_, i64>(0) as u64,
            requested: row.get::<_, i64>(1) as u64,
            buffers_written: row.get::<_, i64>(2) as u64,
            write_time_ms: row.get(3),
            sync_time_ms: row.get(4),
        },
    ))
}

/// PostgreSQL's page size (`block_size`), bytes.
pub fn block_bytes(db: &postgres::Config) -> Result<u64> {
    let mut c = db
        .connect(postgres::NoTls)
        .map_err(|e| failed("connecting to read block_size", e))?;
    let v: String = c
        .query_one("SHOW block_size", &[])
        .map_err(|e| failed("SHOW block_size", e))?
        .get(0);
    v.parse().map_err(|_| {
        OltpError::Failed(Failure::Unexpected {
            what: "SHOW block_size".into(),
            answer: v.clone(),
        })
    })
}

/// A CHECKPOINT, returned once the checkpointer has also counted it (the
/// command returns when the checkpoint is done, the counters follow a
/// moment later): so it never shows up as the window's own.
pub fn checkpoint(db: &postgres::Config) -> Result<()> {
    let (_, before) = read(db)?;
    let mut c = db
        .connect(postgres::NoTls)
        .map_err(|e| failed("connecting for CHECKPOINT", e))?;
    c.batch_execute("CHECKPOINT")
        .map_err(|e| failed("CHECKPOINT", e))?;
    let end = Instant::now() + Duration::from_secs(10);
    while Instant::now() < end {
        let (_, now) = read(db)?;
        if now.requested > before.requested {
            return Ok(());
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    Ok(())
}

/// Checkpoints started in a PostgreSQL log after byte `from` (log lines
/// "LOG:  checkpoint starting: time", or ": immediate force wait").
pub fn started_since(log: &Path, from: u64) -> u64 {
    let text = std::fs::read(log).unwrap_or_default();
    let from = (from as usize).min(text.len());
    String::from_utf8_lossy(&text[from..])
        .lines()
        .filter(|l| l.contains("checkpoint starting:"))
        .count() as u64
}

/// The log's length now (where the window's lines start).
pub fn log_len(log: &Path) -> u64 {
    std::fs::metadata(log).map(|m| m.len()).unwrap_or(0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_window_counts_what_the_checkpointer_did_in_it() {
        let before = Counters {
            timed: 3,
            requested: 2,
            buffers_written: 1000,
            write_time_ms: 10.0,
            sync_time_ms: 1.0,
        };
        let after = Counters {
            timed: 4,
            requested: 2,
            buffers_written: 3500,
            write_time_ms: 27_010.0,
            sync_time_ms: 21.0,
        };
        let r = between("pg_stat_bgwriter", 30.0, 8192, &before, &after, 2);
        assert_eq!((r.completed, r.timed, r.requested, r.started), (1, 1, 0, 2));
        assert_eq!(r.bytes_written, 2500 * 8192);
        assert_eq!(r.write_time_ms, 27_000.0);
    }

    #[test]
    fn started_checkpoints_are_counted_from_the_log_offset_on() {
        let dir = tempfile::tempdir().unwrap();
        let log = dir.path().join("postgres.log");
        std::fs::write(
            &log,
            "2026-11-27 LOG:  checkpoint starting: immediate force wait\n",
        )
        .unwrap();
        let from = log_len(&log);
        std::fs::write(
            &log,
            "2026-11-27 LOG:  checkpoint starting: immediate force wait\n\
             2026-11-27 LOG:  checkpoint complete: wrote 10 buffers (0.1%)\n\
             2026-11-27 LOG:  checkpoint starting: time\n",
        )
        .unwrap();
        assert_eq!(started_since(&log, from), 1);
        assert_eq!(started_since(&log, 0), 2);
    }
}
