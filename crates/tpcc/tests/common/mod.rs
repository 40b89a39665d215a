//! A throwaway PostgreSQL 15 cluster for the tests: a temporary directory
//! owned by `postgres`, initdb and pg_ctl run as that user (PostgreSQL refuses
//! root), no TCP (`listen_addresses = ''`), the unix socket in the temporary
//! directory. Dropping the guard (also while a test panics) stops the server
//! and removes the directory.

#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::Command;

pub const BIN: &str = "/usr/lib/postgresql/15/bin";
pub const PORT: u16 = 5432;

pub struct PgCluster {
    dir: PathBuf,
    started: bool,
}

/// Why the tests cannot start a cluster here, if they cannot.
fn unavailable() -> Option<String> {
    // SAFETY: geteuid has no preconditions.
    if unsafe { libc::geteuid() } != 0 {
        return Some("not root (the cluster is started as user postgres through su)".into());
    }
    if !Path::new(BIN).join("initdb").exists() {
        return Some(format!(
            "PostgreSQL 15 is not installed ({BIN}/initdb missing; apt-get install postgresql)"
        ));
    }
    let ok = Command::new("id")
        .arg("postgres")
        .output()
        .map(|o| o.status.success())
        .unwrap_or(false);
    if !ok {
        return Some("there is no postgres user (apt-get install postgresql creates it)".into());
    }
    None
}

fn run_as_postgres(script: &str) -> std::process::Output {
    Command::new("su")
        .args(["postgres", "-s", "/bin/sh", "-c", script])
        .output()
        .expect("run su")
}

impl PgCluster {
    /// Starts a cluster, or returns None after printing why the test is
    /// skipped (not root, PostgreSQL missing). With
    /// FLASHLAB_REQUIRE_ROOT_TESTS=1 (CI) a missing prerequisite fails.
    pub fn start(test: &str) -> Option<PgCluster> {
        if let Some(why) = unavailable() {
            if std::env::var("FLASHLAB_REQUIRE_ROOT_TESTS").as_deref() == Ok("1") {
                panic!("{test}: cannot run ({why}) and FLASHLAB_REQUIRE_ROOT_TESTS=1");
            }
            eprintln!("skipped {test}: {why}");
            return None;
        }
        let dir = tempfile::Builder::new()
            .prefix("flashlab-tpcc-pg.")
            .tempdir()
            .expect("temp dir")
            .keep();
        let mut cluster = PgCluster {
            dir: dir.clone(),
            started: false,
        };
        let status = Command::new("chown")
            .args(["postgres:postgres"])
            .arg(&dir)
            .status()
            .expect("chown");
        assert!(status.success(), "chown {}", dir.display());
        let d = dir.display();
        let out = run_as_postgres(&format!(
            "{BIN}/initdb -D {d}/data -U postgres -A trust --no-sync -E UTF8 --locale=C >{d}/initdb.log 2>&1"
        ));
        assert!(
            out.status.success(),
            "initdb failed: {}",
            std::fs::read_to_string(dir.join("initdb.log")).unwrap_or_default()
        );
        // No TCP; the socket in our directory; fsync off: these tests check
        // the driver, not durability, on a slow shared machine.
        let opts = format!(
            "-c listen_addresses='' -c unix_socket_directories='{d}' -p {PORT} -c fsync=off \
             -c synchronous_commit=off -c full_page_writes=off -c shared_buffers=64MB -c max_connections=40"
        );
        let out = run_as_postgres(&format!("{BIN}/pg_ctl -D {d}/data -l {d}/server.log -w -t 60 -o \"{opts}\" start >{d}/pg_ctl.log 2>&1"));
        cluster.started = true; // stop even if start half-worked
        assert!(
            out.status.success(),
            "pg_ctl start failed: {} {}",
            std::fs::read_to_string(dir.join("pg_ctl.log")).unwrap_or_default(),
            std::fs::read_to_string(dir.join("server.log")).unwrap_or_default()
        );
        Some(cluster)
    }

    pub fn socket_dir(&self) -> &Path {
        &self.dir
    }

    /// A connection config for database `dbname` (created if missing).
    pub fn database(&self, dbname: &str) -> postgres::Config {
        let admin = self.config("postgres");
        let mut client = admin
            .connect(postgres::NoTls)
            .expect("connect to the test cluster");
        let exists = client
            .query_opt("SELECT 1 FROM pg_database WHERE datname = $1", &[&dbname])
            .unwrap()
            .is_some();
        if !exists {
            client
                .batch_execute(&format!("CREATE DATABASE {dbname}"))
                .unwrap();
        }
        self.config(dbname)
    }

    pub fn config(&self, dbname: &str) -> postgres::Config {
        let mut c = postgres::Config::new();
        c.host_path(&self.dir)
            .port(PORT)
            .user("postgres")
            .dbname(dbname);
        c
    }
}

impl Drop for PgCluster {
    fn drop(&mut self) {
        if self.started {
            let d = self.dir.display();
            let _ = run_as_postgres(&format!(
                "{BIN}/pg_ctl -D {d}/data -m immediate -w -t 60 stop >/dev/null 2>&1"
            ));
        }
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}
