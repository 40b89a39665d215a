//! PostgreSQL behind the `Dbms` interface: the server is `crate::postgres`,
//! the window's checkpoints `crate::checkpoints`.

use std::path::{Path, PathBuf};

use serde_json::Value;

use super::{Dbms, DbmsKind};
use crate::checkpoints;
use crate::driver::Target;
use crate::error::Result;
use crate::postgres::{PgSettings, Server};
use crate::Progress;

pub struct Postgres {
    pub server: Server,
    pub version: String,
    pub settings: PgSettings,
    /// The server log, where the window's started checkpoints are counted.
    pub log: PathBuf,
    window: Option<Window>,
}

struct Window {
    view: &'static str,
    block_bytes: u64,
    before: checkpoints::Counters,
    log_from: u64,
}

impl Postgres {
    pub fn new(server: Server, version: String, settings: PgSettings, log: PathBuf) -> Postgres {
        Postgres {
            server,
            version,
            settings,
            log,
            window: None,
        }
    }
}

impl Dbms for Postgres {
    fn kind(&self) -> DbmsKind {
        DbmsKind::Postgres
    }

    fn pid(&self) -> u32 {
        self.server.pid
    }

    fn shutdown_signal(&self) -> libc::c_int {
        libc::SIGINT // fast shutdown
    }

    fn data_dir(&self) -> &Path {
        &self.server.pgdata
    }

    fn target(&self) -> Target {
        Target::Postgres(Box::new(self.server.config()))
    }

    fn section(&self) -> (&'static str, Value) {
        (
            "postgres",
            serde_json::json!({"version": self.version, "pgdata": self.server.pgdata, "pid": self.server.pid, "settings": self.settings}),
        )
    }

    fn flush(&mut self, progress: &mut dyn Progress) -> Result<()> {
        progress.say("CHECKPOINT: the measured window starts from a checkpointed state");
        checkpoints::checkpoint(&self.server.config())
    }

    fn window_start(&mut self) -> Result<()> {
        let db = self.server.config();
        let block_bytes = checkpoints::block_bytes(&db)?;
        let (view, before) = checkpoints::read(&db)?;
        self.window = Some(Window {
            view,
            block_bytes,
            before,
            log_from: checkpoints::log_len(&self.log),
        });
        Ok(())
    }

    fn window_end(&mut self, _trace: Option<&Value>) -> Option<(&'static str, Value, String)> {
        let w = self.window.take()?;
        // A server that went away leaves the section out; the run's own error says why.
        let (_, after) = checkpoints::read(&self.server.config()).ok()?;
        let report = checkpoints::between(
            w.view,
            crate::checkpoint_interval_s(&self.settings.checkpoint_timeout),
            w.block_bytes,
            &w.before,
            &after,
            checkpoints::started_since(&self.log, w.log_from),
        );
        let line = format!(
            "checkpoints in the window: {} started, {} completed, {:.1} MB written by them",
            report.started,
            report.completed,
            report.bytes_written as f64 / 1e6
        );
        Some((
            "checkpoints",
            serde_json::to_value(&report).expect("serializes"),
            line,
        ))
    }
}
