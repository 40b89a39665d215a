//! The crash-test harness: start the server as a child process, write random
//! 4 KiB blocks through our own NBD client (plain, FUA and write-zeroes, with
//! flushes), SIGKILL the server at a random moment (also during start-up and
//! recovery, and during checkpoints when the server checkpoints often),
//! restart it, and verify every block: a block whose write was acknowledged
//! by a FLUSH (or was itself FUA) must read back as that version or a later
//! one that was sent; nothing else is acceptable, not even zeroes.
//!
//! Every block carries its own identity (block number, version) and a
//! pseudo-random body derived from both, so a misplaced, stale or torn block
//! is recognised.

use flashlab_pattern::rng::Rng;
use std::collections::BTreeMap;
use std::fmt;
use std::fs::{self, File, OpenOptions};
use std::io::{self, Read};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitStatus, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::thread;
use std::time::{Duration, Instant};

use crate::client::Client;

pub const BLOCK: usize = 4096;

/// Harness settings.
#[derive(Clone, Debug)]
pub struct HarnessOptions {
    /// Crash points to try.
    pub iterations: u32,
    pub seed: u64,
    /// The server's command line; the harness appends `--data DIR --listen unix:SOCK`.
    pub server: Vec<String>,
    /// Working directory (the store goes in `DIR/store`).
    pub dir: PathBuf,
    /// Blocks in the working set (spread over the first `span_blocks` of the device).
    pub blocks: u64,
    pub span_blocks: u64,
    /// The server is killed between 0 and this many milliseconds after it starts.
    pub max_kill_ms: u64,
    pub verbose: bool,
}

/// What the harness did.
#[derive(Clone, Debug, Default)]
pub struct HarnessReport {
    pub crash_points: u64,
    /// Block checks against a flushed (or FUA) version, summed over restarts.
    pub blocks_verified: u64,
    /// Distinct blocks that had a flushed version at the end.
    pub distinct_blocks: u64,
    pub writes_acked: u64,
    pub flushes_acked: u64,
    /// Crashes that hit before the server accepted a connection (start-up / recovery).
    pub kills_before_ready: u64,
    /// Blocks found holding a newer, unflushed version after a crash (allowed).
    pub unflushed_survivors: u64,
    pub max_restart_ms: u128,
}

/// Why the harness stopped: a broken durability promise ([`HarnessError::LostWrite`]),
/// a server that misbehaved, or a failure of the harness's own set-up. One
/// line each; `log` fields hold the tail of the server's output.
#[derive(Debug)]
pub enum HarnessError {
    /// The working directory could not be created or cleaned
    /// (`what` is "cannot create" or "cannot clean").
    Setup {
        what: &'static str,
        path: PathBuf,
        source: io::Error,
    },
    /// The server's log file could not be opened or shared.
    ServerLog(io::Error),
    /// The server could not be started (`program` is its executable).
    Start { program: String, source: io::Error },
    /// The server exited before it answered, without being killed.
    ExitedOnItsOwn { status: ExitStatus, log: String },
    /// The server did not answer within 120 s.
    NotStarted { log: String },
    /// A verification read was answered with an NBD error.
    ReadRefused { round: u32, block: u64, error: u32 },
    /// A verification read failed while the server was not being killed.
    Read {
        round: u32,
        block: u64,
        source: io::Error,
    },
    /// A block does not hold its durable version or a later one that was
    /// sent: a flushed write was lost (or the block is damaged).
    LostWrite {
        round: u32,
        block: u64,
        read_version: u64,
        intact: bool,
        durable_version: u64,
        unflushed: Vec<u64>,
    },
    /// The flush after verification was answered with an NBD error.
    VerifyFlushRefused { round: u32, error: u32 },
    /// The flush after verification failed while the server was not being killed.
    VerifyFlush { round: u32, source: io::Error },
    /// A flush while writing was answered with an NBD error.
    FlushRefused { error: u32 },
    /// A write was answered with an NBD error.
    WriteRefused { error: u32 },
    /// 100 000 requests since the last flush and no kill came.
    NeverKilled,
    /// The connection broke although the server was not killed.
    ConnectionLost { log: String },
}

impl fmt::Display for HarnessError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            HarnessError::Setup { what, path, source } => {
                write!(f, "{what} {}: {source}", path.display())
            }
            HarnessError::ServerLog(e) => write!(f, "{e}"),
            HarnessError::Start { program, source } => {
                write!(f, "cannot start the server {program}: {source}")
            }
            HarnessError::ExitedOnItsOwn { status, log } => {
                write!(f, "server exited ({status}) on its own; log: {log}")
            }
            HarnessError::NotStarted { log } => {
                write!(f, "server did not start in 120 s; log: {log}")
            }
            HarnessError::ReadRefused {
                round,
                block,
                error,
            } => write!(
                f,
                "round {round}: reading block {block} failed with NBD error {error}"
            ),
            HarnessError::Read {
                round,
                block,
                source,
            } => write!(f, "round {round}: reading block {block}: {source}"),
            HarnessError::LostWrite {
                round,
                block,
                read_version,
                intact,
                durable_version,
                unflushed,
            } => write!(
                f,
                "round {round}: block {block} lost a flushed write: reads version {read_version} (content {}), durable version is {durable_version}, unflushed {unflushed:?}",
                if *intact { "intact" } else { "damaged" },
            ),
            HarnessError::VerifyFlushRefused { round, error } => {
                write!(f, "round {round}: flush failed with NBD error {error}")
            }
            HarnessError::VerifyFlush { round, source } => {
                write!(f, "round {round}: flush: {source}")
            }
            HarnessError::FlushRefused { error } => {
                write!(f, "flush failed with NBD error {error}")
            }
            HarnessError::WriteRefused { error } => {
                write!(f, "write failed with NBD error {error}")
            }
            HarnessError::NeverKilled => f.write_str("the server was never killed"),
            HarnessError::ConnectionLost { log } => write!(
                f,
                "connection lost but the server was not killed; log: {log}"
            ),
        }
    }
}

impl std::error::Error for HarnessError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            HarnessError::Setup { source, .. }
            | HarnessError::Start { source, .. }
            | HarnessError::Read { source, .. }
            | HarnessError::VerifyFlush { source, .. }
            | HarnessError::ServerLog(source) => Some(source),
            _ => None,
        }
    }
}

/// The content of `block` at `version` (version 0: zeroes).
pub fn block_content(seed: u64, block: u64, version: u64, out: &mut [u8]) {
    if version == 0 {
        out.fill(0);
        return;
    }
    out[0..8].copy_from_slice(&block.to_le_bytes());
    out[8..16].copy_from_slice(&version.to_le_bytes());
    let mut r = Rng::new(seed ^ block.wrapping_mul(0x1000_0000_01b3) ^ version.rotate_left(32));
    for c in out[16..].chunks_mut(8) {
        let v = r.next_u64().to_le_bytes();
        c.copy_from_slice(&v[..c.len()]);
    }
}

#[derive(Clone, Default)]
struct BlockModel {
    /// The newest version acknowledged durable (by FLUSH or FUA); 0 = zeroes.
    durable: u64,
    /// Versions sent after it (acknowledged or not): any may survive a crash.
    pending: Vec<u64>,
    /// The newest acknowledged version (covered by the next flush).
    acked: u64,
    ever_flushed: bool,
}

struct Server {
    child: Child,
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn log_tail(p: &Path) -> String {
    let mut s = String::new();
    if let Ok(mut f) = File::open(p) {
        let _ = f.read_to_string(&mut s);
    }
    let lines: Vec<&str> = s.lines().collect();
    lines[lines.len().saturating_sub(8)..].join(" | ")
}

/// Run the harness.
/// Long: the harness loop: random operations against the server, checked against the model,
/// with crash and restart points; every branch updates the same model and connection.
pub fn run(opts: &HarnessOptions) -> Result<HarnessReport, HarnessError> {
    let store = opts.dir.join("store");
    let sock = opts.dir.join("harness.sock");
    let log_path = opts.dir.join("server.log");
    fs::create_dir_all(&opts.dir).map_err(|source| HarnessError::Setup {
        what: "cannot create",
        path: opts.dir.clone(),
        source,
    })?;
    if store.exists() {
        fs::remove_dir_all(&store).map_err(|source| HarnessError::Setup {
            what: "cannot clean",
            path: store.clone(),
            source,
        })?;
    }
    let mut rng = Rng::new(opts.seed);
    let mut model: BTreeMap<u64, BlockModel> = BTreeMap::new();
    let mut version = 0u64;
    let mut rep = HarnessReport::default();
    let addr = format!("unix:{}", sock.display());
    let mut buf = vec![0u8; BLOCK];
    let mut want = vec![0u8; BLOCK];
    // The working set: `blocks` distinct block numbers in the span.
    let mut set: Vec<u64> = Vec::new();
    {
        let mut seen = std::collections::BTreeSet::new();
        while (set.len() as u64) < opts.blocks.min(opts.span_blocks) {
            let b = rng.below(opts.span_blocks.max(1));
            if seen.insert(b) {
                set.push(b);
            }
        }
    }

    for it in 0..=opts.iterations {
        // Start (or restart) the server.
        let logf = OpenOptions::new()
            .create(true)
            .append(true)
            .open(&log_path)
            .map_err(HarnessError::ServerLog)?;
        let mut cmd = Command::new(&opts.server[0]);
        cmd.args(&opts.server[1..])
            .arg("--data")
            .arg(&store)
            .arg("--listen")
            .arg(&addr)
            .stdin(Stdio::null())
            .stdout(logf.try_clone().map_err(HarnessError::ServerLog)?)
            .stderr(logf);
        let started = Instant::now();
        let child = cmd.spawn().map_err(|source| HarnessError::Start {
            program: opts.server[0].clone(),
            source,
        })?;
        let pid = child.id() as i32;
        let mut server = Server { child };
        let last = it == opts.iterations;
        // The killer: SIGKILL at a random moment (not in the last round, which only verifies).
        let killed = Arc::new(AtomicBool::new(false));
        let kill_after = Duration::from_millis(rng.below(opts.max_kill_ms.max(1)));
        let killer = (!last).then(|| {
            let k = killed.clone();
            thread::spawn(move || {
                thread::sleep(kill_after);
                k.store(true, Ordering::SeqCst);
                // SAFETY: signalling our own child, which has not been reaped yet.
                unsafe { libc::kill(pid, libc::SIGKILL) };
            })
        });
        // Wait until it accepts a connection.
        let mut client = None;
        let deadline = Instant::now() + Duration::from_secs(120);
        while Instant::now() < deadline {
            if let Ok(Some(status)) = server.child.try_wait() {
                if !killed.load(Ordering::SeqCst) {
                    return Err(HarnessError::ExitedOnItsOwn {
                        status,
                        log: log_tail(&log_path),
                    });
                }
                break;
            }
            match Client::connect(&addr, "") {
                Ok(c) => {
                    client = Some(c);
                    break;
                }
                Err(_) => thread::sleep(Duration::from_millis(5)),
            }
        }
        let Some(mut c) = client else {
            if !killed.load(Ordering::SeqCst) {
                return Err(HarnessError::NotStarted {
                    log: log_tail(&log_path),
                });
            }
            rep.kills_before_ready += 1;
            rep.crash_points += 1;
            if let Some(k) = killer {
                let _ = k.join();
            }
            let _ = server.child.wait();
            continue;
        };
        rep.max_restart_ms = rep.max_restart_ms.max(started.elapsed().as_millis());

        // Verify every block of the model (the server may die meanwhile: then retry next round).
        let mut verified_all = true;
        let mut checked = 0u64;
        let mut observed = Vec::with_capacity(model.len());
        for (&b, m) in model.iter() {
            match c.read(b * BLOCK as u64, &mut buf) {
                Ok(Ok(())) => {}
                Ok(Err(error)) => {
                    return Err(HarnessError::ReadRefused {
                        round: it,
                        block: b,
                        error,
                    })
                }
                Err(_) if killed.load(Ordering::SeqCst) => {
                    verified_all = false;
                    break;
                }
                Err(source) => {
                    return Err(HarnessError::Read {
                        round: it,
                        block: b,
                        source,
                    })
                }
            }
            let got = if buf.iter().all(|&x| x == 0) {
                0
            } else {
                u64::from_le_bytes(buf[8..16].try_into().unwrap())
            };
            let ok_version = got == m.durable || m.pending.contains(&got);
            block_content(opts.seed, b, got, &mut want);
            if !ok_version || buf != want {
                return Err(HarnessError::LostWrite {
                    round: it,
                    block: b,
                    read_version: got,
                    intact: buf == want,
                    durable_version: m.durable,
                    unflushed: m.pending.clone(),
                });
            }
            if m.ever_flushed {
                checked += 1;
            }
            if got != m.durable {
                rep.unflushed_survivors += 1;
            }
            observed.push((b, got));
        }
        rep.blocks_verified += checked;
        if verified_all && !model.is_empty() {
            match c.flush() {
                Ok(0) => {
                    // What we read is the device's content; the flush made it durable.
                    for (b, got) in observed.drain(..) {
                        let m = model.get_mut(&b).unwrap();
                        m.durable = got;
                        m.acked = got;
                        m.pending.clear();
                    }
                }
                Ok(error) => return Err(HarnessError::VerifyFlushRefused { round: it, error }),
                Err(_) if killed.load(Ordering::SeqCst) => {}
                Err(source) => return Err(HarnessError::VerifyFlush { round: it, source }),
            }
        }
        if opts.verbose {
            eprintln!("round {it}: verified {checked} flushed blocks (kill after {kill_after:?})");
        }
        if last {
            let _ = c.disconnect();
            break;
        }
        rep.crash_points += 1;

        // Write until the server dies.
        let mut since_flush = 0;
        'writing: loop {
            let b = set[rng.below(set.len() as u64) as usize];
            let r = rng.below(100);
            if r < 6 {
                // FLUSH
                match c.flush() {
                    Ok(0) => {
                        rep.flushes_acked += 1;
                        for m in model.values_mut() {
                            if m.acked != m.durable || !m.pending.is_empty() {
                                m.durable = m.acked;
                                m.pending.retain(|&v| v > m.acked);
                            }
                            if m.durable != 0 {
                                m.ever_flushed = true;
                            }
                        }
                        since_flush = 0;
                    }
                    Ok(error) => return Err(HarnessError::FlushRefused { error }),
                    Err(_) => break 'writing,
                }
                continue;
            }
            let zero = r < 10;
            let fua = !zero && r < 20;
            version += 1;
            let v = if zero { 0 } else { version };
            let m = model.entry(b).or_default();
            m.pending.push(v);
            let res = if zero {
                c.write_zeroes(b * BLOCK as u64, BLOCK as u32, rng.below(2) == 0)
            } else {
                block_content(opts.seed, b, v, &mut buf);
                c.write(b * BLOCK as u64, &buf, fua)
            };
            match res {
                Ok(0) => {
                    rep.writes_acked += 1;
                    let m = model.get_mut(&b).unwrap();
                    m.acked = v;
                    if fua {
                        m.durable = v;
                        m.pending.clear();
                        m.ever_flushed = true;
                    }
                }
                Ok(error) => return Err(HarnessError::WriteRefused { error }),
                Err(_) => break 'writing,
            }
            since_flush += 1;
            if !killed.load(Ordering::SeqCst) && since_flush > 100_000 {
                return Err(HarnessError::NeverKilled);
            }
        }
        if !killed.load(Ordering::SeqCst) {
            return Err(HarnessError::ConnectionLost {
                log: log_tail(&log_path),
            });
        }
        if let Some(k) = killer {
            let _ = k.join();
        }
        let _ = server.child.wait();
    }
    rep.distinct_blocks = model.values().filter(|m| m.ever_flushed).count() as u64;
    Ok(rep)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_lost_write_names_the_block_and_its_versions() {
        let e = HarnessError::LostWrite {
            round: 3,
            block: 17,
            read_version: 0,
            intact: true,
            durable_version: 42,
            unflushed: vec![43, 44],
        };
        assert_eq!(
            e.to_string(),
            "round 3: block 17 lost a flushed write: reads version 0 (content intact), durable version is 42, unflushed [43, 44]"
        );
        let e = HarnessError::Read {
            round: 1,
            block: 2,
            source: io::Error::from_raw_os_error(libc::ECONNRESET),
        };
        assert_eq!(
            e.to_string(),
            "round 1: reading block 2: Connection reset by peer (os error 104)"
        );
        assert!(std::error::Error::source(&e).is_some());
    }
}
