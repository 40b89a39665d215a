//! Shared by the `serve*` tests: start `flashlab serve` as a child process,
//! wait until it answers, stop it (SIGKILL or SIGTERM); skip or fail tests
//! whose prerequisites are missing.

#![allow(dead_code)]

pub mod blockdev;

use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitStatus, Stdio};
use std::time::{Duration, Instant};

use flashlab_nbd::client::Client;

pub fn bin() -> &'static str {
    env!("CARGO_BIN_EXE_flashlab")
}

/// `Some(reason)` when a prerequisite is missing: panics under
/// FLASHLAB_REQUIRE_ROOT_TESTS=1 (CI), else prints a skip line.
pub fn skip(test: &str, why: Option<String>) -> bool {
    let Some(why) = why else { return false };
    if std::env::var("FLASHLAB_REQUIRE_ROOT_TESTS").as_deref() == Ok("1") {
        panic!("{test} cannot run ({why}) but FLASHLAB_REQUIRE_ROOT_TESTS=1");
    }
    eprintln!("SKIPPED: {test}: {why}");
    true
}

pub fn have(tool: &str) -> bool {
    Command::new("sh")
        .arg("-c")
        .arg(format!("command -v {tool}"))
        .stdout(Stdio::null())
        .status()
        .is_ok_and(|s| s.success())
}

pub fn missing_tools(tools: &[&str]) -> Option<String> {
    let m: Vec<&str> = tools.iter().copied().filter(|t| !have(t)).collect();
    (!m.is_empty()).then(|| {
        format!(
            "missing {} (apt-get install nbdkit libnbd-bin fuse3 qemu-utils e2fsprogs)",
            m.join(", ")
        )
    })
}

pub fn is_root() -> bool {
    // SAFETY: getuid has no preconditions.
    unsafe { libc::getuid() == 0 }
}

/// A running `flashlab serve`, killed on drop.
pub struct Serve {
    pub child: Option<Child>,
    pub sock: PathBuf,
    pub log: PathBuf,
}

impl Serve {
    /// Start `flashlab serve --data DIR --listen unix:DIR/../NAME.sock ARGS...` and wait until it answers.
    pub fn start(data: &Path, args: &[&str]) -> Serve {
        let sock = data.with_extension("sock");
        let log = data.with_extension("log");
        let logf = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(&log)
            .unwrap();
        let child = Command::new(bin())
            .arg("serve")
            .arg("--data")
            .arg(data)
            .arg("--listen")
            .arg(format!("unix:{}", sock.display()))
            .args(args)
            .stdin(Stdio::null())
            .stdout(logf.try_clone().unwrap())
            .stderr(logf)
            .spawn()
            .unwrap();
        let mut s = Serve {
            child: Some(child),
            sock,
            log,
        };
        s.wait_ready();
        s
    }

    pub fn addr(&self) -> String {
        format!("unix:{}", self.sock.display())
    }

    pub fn uri(&self) -> String {
        format!("nbd+unix:///?socket={}", self.sock.display())
    }

    fn wait_ready(&mut self) {
        let t0 = Instant::now();
        while t0.elapsed() < Duration::from_secs(60) {
            if let Some(st) = self.child.as_mut().unwrap().try_wait().unwrap() {
                panic!("flashlab serve exited ({st}): {}", self.log_text());
            }
            if let Ok(c) = Client::connect(&self.addr(), "") {
                let _ = c.disconnect();
                return;
            }
            std::thread::sleep(Duration::from_millis(10));
        }
        panic!("flashlab serve did not answer in 60 s: {}", self.log_text());
    }

    pub fn log_text(&self) -> String {
        std::fs::read_to_string(&self.log).unwrap_or_default()
    }

    pub fn pid(&self) -> i32 {
        self.child.as_ref().unwrap().id() as i32
    }

    pub fn signal(&self, sig: i32) {
        // SAFETY: signalling our own child, not yet reaped.
        unsafe { libc::kill(self.pid(), sig) };
    }

    /// kill -9, and reap it.
    pub fn kill9(mut self) {
        let mut c = self.child.take().unwrap();
        let _ = c.kill();
        let _ = c.wait();
    }

    /// SIGTERM; wait for the exit status.
    pub fn terminate(mut self) -> ExitStatus {
        self.signal(libc::SIGTERM);
        let mut c = self.child.take().unwrap();
        let t0 = Instant::now();
        loop {
            if let Some(st) = c.try_wait().unwrap() {
                return st;
            }
            if t0.elapsed() > Duration::from_secs(60) {
                let _ = c.kill();
                panic!("flashlab serve ignored SIGTERM for 60 s");
            }
            std::thread::sleep(Duration::from_millis(20));
        }
    }
}

impl Drop for Serve {
    fn drop(&mut self) {
        if let Some(mut c) = self.child.take() {
            let _ = c.kill();
            let _ = c.wait();
        }
    }
}
