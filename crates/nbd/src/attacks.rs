//! Hostile-client attacks against a server running as a child process, with
//! the server's peak resident memory (VmHWM) under each: the figures behind
//! the limits in docs/serve.md. Used by `examples/hostile_clients.rs` (prints
//! them) and `crates/flashlab/tests/serve_hostile.rs` (asserts bounds).
//!
//! Every attack starts a fresh server (VmHWM only grows), so each figure is
//! the peak of one attack alone.

use std::fmt;
use std::io::{self, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitStatus, Stdio};
use std::thread;
use std::time::{Duration, Instant};

use crate::client::{Client, Stream};
use crate::proto::*;

/// What one attack did to the server.
#[derive(Clone, Debug)]
pub struct AttackReport {
    pub name: &'static str,
    /// The server's VmHWM after the attack.
    pub peak_rss_bytes: u64,
    /// Connections the attacker got through the handshake / was refused.
    /// A full server evicts an idle connection for a newcomer, so more may
    /// get through than it serves at once.
    pub attacker_connections: u64,
    pub attacker_refused: u64,
    /// Of those, how many the server still held at the end (when counted).
    pub attacker_open: Option<u64>,
    /// For the lock-out attacks: how long an honest client took to get
    /// through (connect, write, flush).
    pub honest_client_ms: Option<u64>,
    pub detail: String,
}

/// Why the attacks could not be run (not what they found: that is in the
/// reports). One line each.
#[derive(Debug)]
pub enum AttackError {
    /// The server could not be started (`program` is its executable).
    Start { program: String, source: io::Error },
    /// The server exited before it answered; `log` is its output.
    Exited { status: ExitStatus, log: String },
    /// The server did not answer within a minute; `log` is its output.
    NoAnswer { log: String },
    /// An honest client could not write and flush in time.
    LockedOut {
        within: Duration,
        last: Option<HonestFailure>,
    },
    /// The paced attacks pipeline over a unix socket.
    NotUnixSocket,
    /// The server died under the silent connections.
    DiedUnderSilentConnections { connections: usize },
    /// A socket, log file or process call of the attacker failed.
    Io(io::Error),
}

/// How an honest client's last attempt failed.
#[derive(Debug)]
pub enum HonestFailure {
    /// The server answered the write or the flush with this NBD error.
    Nbd(u32),
    /// Connecting, writing or flushing failed.
    Io(io::Error),
}

impl fmt::Display for HonestFailure {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            HonestFailure::Nbd(e) => write!(f, "error {e}"),
            HonestFailure::Io(e) => write!(f, "{e}"),
        }
    }
}

impl fmt::Display for AttackError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            AttackError::Start { program, source } => write!(f, "cannot start {program}: {source}"),
            AttackError::Exited { status, log } => write!(f, "server exited ({status}): {log}"),
            AttackError::NoAnswer { log } => write!(f, "server did not answer: {log}"),
            AttackError::LockedOut { within, last } => {
                write!(
                    f,
                    "an honest client could not write and flush within {within:?}: "
                )?;
                match last {
                    Some(l) => write!(f, "{l}"),
                    None => Ok(()),
                }
            }
            AttackError::NotUnixSocket => f.write_str("the paced attack needs a unix socket"),
            AttackError::DiedUnderSilentConnections { connections } => {
                write!(f, "the server died under {connections} silent connections")
            }
            AttackError::Io(e) => write!(f, "{e}"),
        }
    }
}

impl std::error::Error for AttackError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            AttackError::Start { source, .. } | AttackError::Io(source) => Some(source),
            AttackError::LockedOut {
                last: Some(HonestFailure::Io(e)),
                ..
            } => Some(e),
            _ => None,
        }
    }
}

impl From<io::Error> for AttackError {
    fn from(e: io::Error) -> AttackError {
        AttackError::Io(e)
    }
}

/// A server child process, killed on drop.
pub struct Target {
    child: Child,
    pub addr: String,
    pub log: PathBuf,
}

impl Drop for Target {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn status_kib(pid: u32, key: &str) -> u64 {
    std::fs::read_to_string(format!("/proc/{pid}/status"))
        .unwrap_or_default()
        .lines()
        .find_map(|l| l.strip_prefix(key))
        .and_then(|v| v.split_whitespace().next()?.parse().ok())
        .unwrap_or(0)
}

impl Target {
    /// Start `server... --data DIR --listen unix:DIR.sock extra...` and wait
    /// until it answers.
    pub fn start(server: &[String], dir: &Path, extra: &[&str]) -> Result<Target, AttackError> {
        let sock = dir.with_extension("sock");
        let log = dir.with_extension("log");
        let logf = std::fs::File::create(&log)?;
        let child = Command::new(&server[0])
            .args(&server[1..])
            .arg("--data")
            .arg(dir)
            .arg("--listen")
            .arg(format!("unix:{}", sock.display()))
            .args(extra)
            .stdin(Stdio::null())
            .stdout(logf.try_clone()?)
            .stderr(logf)
            .spawn()
            .map_err(|source| AttackError::Start {
                program: server[0].clone(),
                source,
            })?;
        let mut t = Target {
            child,
            addr: format!("unix:{}", sock.display()),
            log,
        };
        let t0 = Instant::now();
        loop {
            if let Some(status) = t.child.try_wait()? {
                return Err(AttackError::Exited {
                    status,
                    log: t.log_text(),
                });
            }
            if let Ok(c) = Client::connect(&t.addr, "") {
                let _ = c.disconnect();
                return Ok(t);
            }
            if t0.elapsed() > Duration::from_secs(60) {
                return Err(AttackError::NoAnswer { log: t.log_text() });
            }
            thread::sleep(Duration::from_millis(10));
        }
    }

    pub fn log_text(&self) -> String {
        std::fs::read_to_string(&self.log).unwrap_or_default()
    }

    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    /// Peak resident set size so far (VmHWM).
    pub fn peak_rss_bytes(&self) -> u64 {
        status_kib(self.pid(), "VmHWM:") * 1024
    }

    /// Whether the server is still running.
    pub fn alive(&mut self) -> bool {
        matches!(self.child.try_wait(), Ok(None))
    }
}

/// An honest client: connect (retrying while refused), write, flush.
/// Returns the time it took, or an error after `within`.
fn honest_client(addr: &str, within: Duration) -> Result<Duration, AttackError> {
    let t0 = Instant::now();
    let mut last = None;
    while t0.elapsed() < within {
        match Client::connect(addr, "") {
            Ok(mut c) => match c.write(0, &[7u8; 4096], false).and_then(|_| c.flush()) {
                Ok(0) => return Ok(t0.elapsed()),
                Ok(e) => last = Some(HonestFailure::Nbd(e)),
                Err(e) => last = Some(HonestFailure::Io(e)),
            },
            Err(e) => last = Some(HonestFailure::Io(e)),
        }
        thread::sleep(Duration::from_millis(50));
    }
    Err(AttackError::LockedOut { within, last })
}

/// A new client that reads 20 x 128 KiB; how long all of them took. A read
/// that fails is an error: a reader must be served while writers wait.
fn honest_reader(addr: &str, within: Duration) -> Result<Duration, AttackError> {
    let t0 = Instant::now();
    let mut c = Client::connect(addr, "").map_err(|e| AttackError::LockedOut {
        within,
        last: Some(HonestFailure::Io(e)),
    })?;
    c.stream.set_timeout(Some(within))?;
    let mut buf = vec![0u8; 128 * 1024];
    for i in 0..20u64 {
        match c.read(i * buf.len() as u64, &mut buf) {
            Ok(Ok(())) => {}
            Ok(Err(e)) => {
                return Err(AttackError::LockedOut {
                    within,
                    last: Some(HonestFailure::Nbd(e)),
                })
            }
            Err(e) => {
                return Err(AttackError::LockedOut {
                    within,
                    last: Some(HonestFailure::Io(e)),
                })
            }
        }
    }
    Ok(t0.elapsed())
}

/// How many of `cs` the server has not closed (a closed one reads EOF or a
/// reset at once; an open one times out).
fn still_open(cs: &mut [Client]) -> u64 {
    let mut open = 0;
    for c in cs.iter_mut() {
        let _ = c.stream.set_timeout(Some(Duration::from_millis(20)));
        let mut b = [0u8; 64];
        match std::io::Read::read(&mut c.stream, &mut b) {
            Err(e)
                if matches!(
                    e.kind(),
                    io::ErrorKind::WouldBlock | io::ErrorKind::TimedOut
                ) =>
            {
                open += 1
            }
            _ => {}
        }
    }
    open
}

/// Connections through the handshake, as many as the server lets in.
fn open_clients(addr: &str, n: usize) -> (Vec<Client>, u64) {
    let mut v = Vec::new();
    let mut refused = 0;
    for _ in 0..n {
        match Client::connect(addr, "") {
            Ok(c) => v.push(c),
            Err(_) => refused += 1,
        }
    }
    (v, refused)
}

const MIB: u64 = 1 << 20;

/// Run every attack against fresh servers started from `server` (a command
/// that takes `--data`, `--listen` and the limit flags), with data
/// directories under `dir`.
/// A thread that pipelines 128 KiB reads over the first GiB on `w` until the
/// socket fails, and returns how many requests the socket took. Its writes
/// block: when the server stops reading (back-pressure) the thread just
/// waits until the attack shuts the socket down.
fn pipeline_reads(mut w: std::os::unix::net::UnixStream) -> thread::JoinHandle<u64> {
    thread::spawn(move || {
        let span = 1024 * MIB / (128 * 1024);
        let mut sent = 0u64;
        while w
            .write_all(&request(
                0,
                CMD_READ,
                sent,
                (sent % span) * 128 * 1024,
                128 * 1024,
            ))
            .is_ok()
        {
            sent += 1;
        }
        sent
    })
}

/// Long: one block per attack, each a few lines, run in order against fresh servers.
pub fn run_all(server: &[String], dir: &Path) -> Result<Vec<AttackReport>, AttackError> {
    let mut out = Vec::new();
    let fresh = |name: &str, extra: &[&str]| Target::start(server, &dir.join(name), extra);

    // Baseline: one honest client, 1000 writes and a flush.
    {
        let t = fresh("baseline", &[])?;
        let mut c = Client::connect(&t.addr, "")?;
        for i in 0..1000u64 {
            c.write(i * 4096, &[1u8; 4096], false)?;
        }
        c.flush()?;
        out.push(AttackReport {
            name: "baseline (1 client, 1000 x 4 KiB writes, flush)",
            peak_rss_bytes: t.peak_rss_bytes(),
            attacker_connections: 0,
            attacker_refused: 0,
            attacker_open: None,
            honest_client_ms: None,
            detail: String::new(),
        });
    }

    // 200 connections each declare a 32 MiB write and send 4 KiB of it.
    {
        let t = fresh("declared", &[])?;
        let (mut cs, refused) = open_clients(&t.addr, 200);
        for c in cs.iter_mut() {
            let _ = c
                .stream
                .write_all(&request(0, CMD_WRITE, 1, 0, MAX_PAYLOAD))
                .and_then(|_| c.stream.write_all(&[3u8; 4096]));
        }
        thread::sleep(Duration::from_millis(1500));
        let peak_rss_bytes = t.peak_rss_bytes();
        out.push(AttackReport {
            name: "200 connections declare a 32 MiB write, send 4 KiB",
            peak_rss_bytes,
            attacker_connections: cs.len() as u64,
            attacker_refused: refused,
            attacker_open: Some(still_open(&mut cs)),
            honest_client_ms: None,
            detail: String::new(),
        });
    }

    // Nine connections each declare a 32 MiB write and send none of it
    // (together more than the write pool), then an honest reader: reads have
    // their own pool, so it is served at once, not after the stall timeout.
    {
        let t = fresh("starve", &[])?;
        let (mut cs, refused) = open_clients(&t.addr, 9);
        for c in cs.iter_mut() {
            let _ = c
                .stream
                .write_all(&request(0, CMD_WRITE, 1, 0, MAX_PAYLOAD));
        }
        thread::sleep(Duration::from_millis(300));
        let took = honest_reader(&t.addr, Duration::from_secs(15))?;
        out.push(AttackReport {
            name: "9 connections declare a 32 MiB write and send nothing, then an honest reader (20 x 128 KiB)",
            peak_rss_bytes: t.peak_rss_bytes(),
            attacker_connections: cs.len() as u64,
            attacker_refused: refused,
            attacker_open: None,
            honest_client_ms: Some(took.as_millis() as u64),
            detail: String::new(),
        });
    }

    // 16 connections each send two whole 32 MiB writes, never reading replies.
    {
        let t = fresh("full", &[])?;
        let (cs, refused) = open_clients(&t.addr, 16);
        let payload: &'static [u8] = Box::leak(vec![5u8; MAX_PAYLOAD as usize].into_boxed_slice());
        let n = cs.len() as u64;
        let threads: Vec<_> = cs
            .into_iter()
            .enumerate()
            .map(|(i, mut c)| {
                thread::spawn(move || {
                    for k in 0..2u64 {
                        let off = ((i as u64 * 2 + k) % 8) * MAX_PAYLOAD as u64;
                        if c.stream
                            .write_all(&request(0, CMD_WRITE, k, off, MAX_PAYLOAD))
                            .and_then(|_| c.stream.write_all(payload))
                            .is_err()
                        {
                            return;
                        }
                    }
                    thread::sleep(Duration::from_millis(500));
                })
            })
            .collect();
        for h in threads {
            let _ = h.join();
        }
        out.push(AttackReport {
            name: "16 connections send 2 whole 32 MiB writes each (1 GiB), replies unread",
            peak_rss_bytes: t.peak_rss_bytes(),
            attacker_connections: n,
            attacker_refused: refused,
            attacker_open: None,
            honest_client_ms: None,
            detail: String::new(),
        });
    }

    // --pace: one client pipelines 128 KiB reads for 3 s, never reading replies.
    {
        let t = fresh("paced", &["--pace"])?;
        let c = Client::connect(&t.addr, "")?;
        let Stream::Unix(sock) = c.stream else {
            return Err(AttackError::NotUnixSocket);
        };
        let w = sock.try_clone()?;
        w.set_write_timeout(None)?;
        let writer = pipeline_reads(w);
        thread::sleep(Duration::from_secs(3));
        let peak = t.peak_rss_bytes();
        let _ = sock.shutdown(std::net::Shutdown::Both);
        let sent = writer.join().unwrap_or(0);
        out.push(AttackReport {
            name: "--pace: 1 client pipelines 128 KiB reads for 3 s, replies unread",
            peak_rss_bytes: peak,
            attacker_connections: 1,
            attacker_refused: 0,
            attacker_open: None,
            honest_client_ms: None,
            detail: format!("{sent} requests taken by the socket"),
        });
    }

    // --pace: one client pipelines 128 KiB reads for 3 s and drains the
    // replies, faster than the simulated device: replies pile up waiting
    // for their due time.
    {
        let t = fresh("paced-drained", &["--pace"])?;
        let c = Client::connect(&t.addr, "")?;
        let Stream::Unix(sock) = c.stream else {
            return Err(AttackError::NotUnixSocket);
        };
        let w = sock.try_clone()?;
        let mut r = sock.try_clone()?;
        r.set_read_timeout(None)?;
        w.set_write_timeout(None)?;
        let reader = thread::spawn(move || {
            let mut got = 0u64;
            let mut buf = vec![0u8; 16 + 128 * 1024];
            while std::io::Read::read_exact(&mut r, &mut buf).is_ok() {
                got += 1;
            }
            got
        });
        let writer = pipeline_reads(w);
        thread::sleep(Duration::from_secs(3));
        let peak = t.peak_rss_bytes();
        let _ = sock.shutdown(std::net::Shutdown::Both);
        let sent = writer.join().unwrap_or(0);
        let got = reader.join().unwrap_or(0);
        out.push(AttackReport {
            name: "--pace: 1 client pipelines 128 KiB reads for 3 s, drains replies",
            peak_rss_bytes: peak,
            attacker_connections: 1,
            attacker_refused: 0,
            attacker_open: None,
            honest_client_ms: None,
            detail: format!("{sent} requests taken by the socket, {got} replies received"),
        });
    }

    // 200 silent connections (no handshake), then an honest client.
    {
        let mut t = fresh("silent", &[])?;
        const SILENT: usize = 200;
        let mut silent = Vec::new();
        for _ in 0..SILENT {
            if let Ok(s) = Stream::connect(&t.addr) {
                silent.push(s);
            }
        }
        let took = honest_client(&t.addr, Duration::from_secs(15))?;
        if !t.alive() {
            return Err(AttackError::DiedUnderSilentConnections {
                connections: SILENT,
            });
        }
        out.push(AttackReport {
            name: "200 silent connections (no handshake), then an honest client",
            peak_rss_bytes: t.peak_rss_bytes(),
            attacker_connections: silent.len() as u64,
            attacker_refused: 0,
            attacker_open: None,
            honest_client_ms: Some(took.as_millis() as u64),
            detail: String::new(),
        });
    }

    // 200 connections finish the handshake and idle (no --idle-timeout),
    // then an honest client: when the server is full, the connection idle
    // the longest makes room at once.
    {
        let t = fresh("idle", &[])?;
        let (cs, refused) = open_clients(&t.addr, 200);
        let took = honest_client(&t.addr, Duration::from_secs(15))?;
        out.push(AttackReport {
            name: "200 connections finish the handshake and idle, then an honest client",
            peak_rss_bytes: t.peak_rss_bytes(),
            attacker_connections: cs.len() as u64,
            attacker_refused: refused,
            attacker_open: None,
            honest_client_ms: Some(took.as_millis() as u64),
            detail: String::new(),
        });
    }
    Ok(out)
}

/// The reports as a table.
pub fn table(reports: &[AttackReport]) -> String {
    let mut s = String::from(
        "attack | server peak RSS (VmHWM) | attacker connections (refused) | honest client\n",
    );
    for r in reports {
        s += &format!(
            "{} | {:.1} MiB | {}{} ({}) | {}{}\n",
            r.name,
            r.peak_rss_bytes as f64 / MIB as f64,
            r.attacker_connections,
            r.attacker_open
                .map_or(String::new(), |n| format!(", {n} still open")),
            r.attacker_refused,
            r.honest_client_ms
                .map_or("-".to_string(), |ms| format!("got through in {ms} ms")),
            if r.detail.is_empty() {
                String::new()
            } else {
                format!(" | {}", r.detail)
            }
        );
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_locked_out_client_reports_its_last_failure() {
        let e = AttackError::LockedOut {
            within: Duration::from_secs(15),
            last: Some(HonestFailure::Nbd(5)),
        };
        assert_eq!(
            e.to_string(),
            "an honest client could not write and flush within 15s: error 5"
        );
        let e = AttackError::LockedOut {
            within: Duration::from_secs(15),
            last: None,
        };
        assert_eq!(
            e.to_string(),
            "an honest client could not write and flush within 15s: "
        );
        assert_eq!(
            AttackError::DiedUnderSilentConnections { connections: 200 }.to_string(),
            "the server died under 200 silent connections"
        );
    }
}
