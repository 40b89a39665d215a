//! `flashlab serve`: the simulator in device mode behind our NBD server
//! (crates/nbd, docs/serve.md). Glue only: flags, start-up messages, live
//! statistics (periodic and on SIGUSR1), clean shutdown on Ctrl-C / SIGTERM.

use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::thread;
use std::time::{Duration, Instant};

use clap::Args;
use flashlab_nbd::server::Limits;
use flashlab_nbd::store::OpenError;
use flashlab_nbd::{Listen, Server, SessionConfig, Store, StoreOptions, StoreStats};

use crate::error::{CliError, CliResult};
use crate::signals;

#[derive(Args, Debug)]
pub struct ServeArgs {
    /// Simulated device: a profile (ssd-m, ssd-h, nvme-tlc, or a .toml) with
    /// optional overrides, as in sim:SPEC (e.g. ssd-m,capacity=1GiB). Needed when
    /// DIR is new; when given for an existing DIR it must match.
    #[arg(long, short = 'p', value_name = "SPEC")]
    pub profile: Option<String>,

    /// Directory holding the device: data, log and checkpoints (created if missing).
    #[arg(long, value_name = "DIR")]
    pub data: PathBuf,

    /// Where to listen: unix:PATH or IP:PORT [default: unix:DIR/nbd.sock].
    #[arg(long, value_name = "ADDR")]
    pub listen: Option<String>,

    /// Allow a non-loopback --listen address (the server has no authentication).
    #[arg(long)]
    pub allow_remote: bool,

    /// Delay every reply by its simulated latency, so software feels the device's timing.
    #[arg(long)]
    pub pace: bool,

    /// Print live statistics this often (e.g. 5s). SIGUSR1 prints them at any time.
    #[arg(long, value_name = "DURATION")]
    pub stats_every: Option<String>,

    /// Write the physical IO trace (every request, flashlab trace format) to FILE.
    #[arg(long, value_name = "FILE")]
    pub trace: Option<PathBuf>,

    /// Also write the statistics as JSON (the store's counters and the
    /// simulator's: WAF, erase counts, flash time per request) to FILE, atomically,
    /// whenever they are printed (SIGUSR1, --stats-every) and at shutdown.
    #[arg(long, value_name = "FILE")]
    pub stats_json: Option<PathBuf>,

    /// Checkpoint the flash state after this many logged requests (0: only at start and exit).
    #[arg(long, value_name = "N", default_value_t = 1_000_000)]
    pub checkpoint_every: u64,

    /// Simulator seed (for a new device).
    #[arg(long, default_value_t = 1)]
    pub seed: u64,

    /// Export name announced to clients (they may also ask for the default export "").
    #[arg(long, value_name = "NAME", default_value = "flashlab")]
    pub export_name: String,

    /// Connections served at once; when full, the oldest one still in its
    /// handshake makes room, else the one idle the longest if idle for at
    /// least --handshake-timeout, else the newcomer is closed.
    #[arg(long, value_name = "N", default_value_t = flashlab_nbd::server::DEFAULT_MAX_CONNECTIONS)]
    pub max_connections: usize,

    /// Close a connection that has not finished its handshake after this long (0: never).
    #[arg(long, value_name = "DURATION", default_value = "10s")]
    pub handshake_timeout: String,

    /// Close a connection that sent no request for this long (0: never, the
    /// default: a mounted file system may stay idle for hours).
    #[arg(long, value_name = "DURATION", default_value = "0")]
    pub idle_timeout: String,

    /// Close a connection whose request payload stops arriving, or which
    /// stops reading its replies, for this long (0: never).
    #[arg(long, value_name = "DURATION", default_value = "30s")]
    pub stall_timeout: String,

    /// Memory for request payloads and read replies of all connections
    /// together: three quarters for writes, a quarter for reads, so writers
    /// never hold up reads; a connection waits for room (e.g. 256MiB).
    #[arg(long, value_name = "SIZE", default_value = "256MiB")]
    pub buffer_limit: String,
}

/// A timeout flag: a duration, or 0 for none.
fn timeout(flag: &str, text: &str) -> CliResult<Option<Duration>> {
    if text.trim() == "0" {
        return Ok(None);
    }
    let ns = flashlab_pattern::units::parse_duration_ns(text)
        .map_err(|e| CliError::user(format!("--{flag}: {e} (0 turns it off)")))?;
    Ok((ns > 0).then(|| Duration::from_nanos(ns)))
}

static STATS_NOW: AtomicBool = AtomicBool::new(false);

extern "C" fn on_usr1(_sig: libc::c_int) {
    STATS_NOW.store(true, Ordering::SeqCst);
}

fn install_usr1() {
    // SAFETY: the handler only stores to an atomic.
    unsafe {
        let mut action: libc::sigaction = std::mem::zeroed();
        action.sa_sigaction = on_usr1 as *const () as usize;
        libc::sigemptyset(&mut action.sa_mask);
        action.sa_flags = libc::SA_RESTART;
        libc::sigaction(libc::SIGUSR1, &action, std::ptr::null_mut());
    }
}

/// The statistics as one JSON document: the store's counters, the
/// simulator's statistics (as in a run's summary) and a sequence number that
/// grows with every write, so that a reader polling the file can tell a
/// fresh snapshot from the previous one.
pub fn stats_document(
    s: &StoreStats,
    sim: Option<serde_json::Value>,
    seq: u64,
    stopped: bool,
) -> serde_json::Value {
    serde_json::json!({
        "seq": seq,
        "stopped": stopped,
        "store": {
            "reads": s.reads, "writes": s.writes, "trims": s.trims, "flushes": s.flushes,
            "read_bytes": s.read_bytes, "write_bytes": s.write_bytes,
            "checkpoints": s.checkpoints, "log_records": s.log_records,
            "sim_now_ns": s.sim_now_ns, "waf": s.waf,
            "gc_foreground": s.gc_foreground, "gc_background": s.gc_background,
            "gc_relocated_pages": s.gc_relocated_pages, "erases": s.erases,
            "free_blocks": s.free_blocks, "mapped_pages": s.mapped_pages,
            "logical_pages": s.logical_pages, "read_only": s.read_only,
        },
        "sim": sim,
    })
}

fn write_stats_json(path: &std::path::Path, store: &Store, seq: u64, stopped: bool) {
    let doc = stats_document(&store.stats(), store.stats_json(), seq, stopped);
    if let Err(e) = flashlab_results::dir::write_json_atomic(path, &doc) {
        eprintln!("flashlab serve: cannot write {}: {e}", path.display());
    }
}

fn stats_line(s: &StoreStats, prev: &StoreStats, secs: f64, elapsed: f64) -> String {
    let d = |a: u64, b: u64| a.saturating_sub(b) as f64 / secs.max(1e-9);
    let iops = d(
        s.reads + s.writes + s.trims,
        prev.reads + prev.writes + prev.trims,
    );
    format!(
        "[{elapsed:8.1} s] {iops:.0} IOPS (read {:.0}, write {:.0}, trim {:.0}, flush {:.0}/s) {:.1} MB/s | WAF {:.3} | GC {} foreground, {} background, {} pages relocated, {} erases | free blocks {} | mapped {:.1} % | checkpoints {}",
        d(s.reads, prev.reads),
        d(s.writes, prev.writes),
        d(s.trims, prev.trims),
        d(s.flushes, prev.flushes),
        d(s.read_bytes + s.write_bytes, prev.read_bytes + prev.write_bytes) / 1e6,
        s.waf,
        s.gc_foreground,
        s.gc_background,
        s.gc_relocated_pages,
        s.erases,
        s.free_blocks.map_or("?".to_string(), |f| f.to_string()),
        100.0 * s.mapped_pages as f64 / s.logical_pages.max(1) as f64,
        s.checkpoints,
    )
}

/// Long: checks every flag before anything is written, then opens the store and serves; the
/// checks share the parsed limits.
pub fn serve(args: ServeArgs) -> CliResult<()> {
    let every = match &args.stats_every {
        Some(t) => {
            let ns = flashlab_pattern::units::parse_duration_ns(t)
                .map_err(|e| CliError::user(format!("--stats-every: {e}")))?;
            if ns == 0 {
                return Err(CliError::user("--stats-every must be positive, e.g. 5s"));
            }
            Some(Duration::from_nanos(ns))
        }
        None => None,
    };
    let listen_text = args
        .listen
        .clone()
        .unwrap_or_else(|| format!("unix:{}", args.data.join("nbd.sock").display()));
    let listen = Listen::parse(&listen_text, args.allow_remote).map_err(CliError::user)?;
    if args.max_connections == 0 {
        return Err(CliError::user(
            "--max-connections must be at least 1, e.g. --max-connections 64",
        ));
    }
    let buffer_bytes = flashlab_pattern::units::parse_size(&args.buffer_limit)
        .map_err(|e| CliError::user(format!("--buffer-limit: {e}")))?;
    if buffer_bytes < u64::from(flashlab_nbd::proto::MAX_PAYLOAD) {
        return Err(CliError::user(format!(
            "--buffer-limit {} is smaller than one maximal request (32MiB); give at least 32MiB",
            args.buffer_limit
        )));
    }
    let limits = Limits {
        max_connections: args.max_connections,
        handshake_timeout: timeout("handshake-timeout", &args.handshake_timeout)?,
        idle_timeout: timeout("idle-timeout", &args.idle_timeout)?,
        stall_timeout: timeout("stall-timeout", &args.stall_timeout)?,
        buffer_bytes,
        ..Limits::default()
    };
    let store = Store::open(&StoreOptions {
        dir: args.data.clone(),
        spec: args.profile.clone(),
        seed: args.seed,
        checkpoint_records: args.checkpoint_every,
        trace: args.trace.clone(),
        faults: None,
    })
    .map_err(|e: OpenError| {
        if e.is_user() {
            CliError::user(e.to_string())
        } else {
            CliError::failure(e.to_string())
        }
    })?;
    // Refused before anything is written: a --stats-json resolving to a
    // file of the data directory (data.img through a symlink) would
    // replace the device with a JSON document.
    if let Some(p) = &args.stats_json {
        flashlab_nbd::store::check_output_outside(&args.data, p, "--stats-json")
            .map_err(|e| CliError::user(e.to_string()))?;
    }
    let store = Arc::new(store);
    let server = Server::bind(&listen).map_err(|e| CliError::failure(e.to_string()))?;
    let r = &store.recovery;
    let size = store.size();
    if r.created {
        eprintln!(
            "flashlab serve: new device sim:{} ({} bytes) in {}",
            store.spec(),
            size,
            args.data.display()
        );
    } else {
        eprintln!(
            "flashlab serve: recovered sim:{} from {}: checkpoint {} + {} logged requests replayed{} in {} ms",
            store.spec(),
            args.data.display(),
            r.checkpoint_generation,
            r.log_records_replayed,
            if r.log_tail_bytes_dropped > 0 { format!(" ({} bytes of torn log tail dropped)", r.log_tail_bytes_dropped) } else { String::new() },
            r.millis
        );
    }
    if let Some(&(g, offset)) = r.corrupt_log_records.first() {
        eprintln!(
            "flashlab serve: {} corrupt record(s) inside the request log (the first at byte {offset} of wal-{g}.log), not a torn tail: skipped, the valid records after them replayed; the damaged log is kept as wal-{g}.log.damaged (the data file is not affected: the log drives only the simulated flash state)",
            r.corrupt_log_records.len()
        );
    }
    if let Some(g) = r.rebuilt_from_generation {
        eprintln!(
            "flashlab serve: checkpoint {} was damaged (kept as ckpt-{}.bin.damaged); its flash state was rebuilt from generation {g}",
            r.checkpoint_generation, r.checkpoint_generation
        );
    }
    eprintln!(
        "flashlab serve: listening on {} (NBD URI {}), export '{}', pacing {}; stats on SIGUSR1{}",
        server.local(),
        listen.uri(),
        args.export_name,
        if args.pace { "on" } else { "off" },
        every.map_or(String::new(), |d| format!(" and every {d:?}"))
    );

    signals::install();
    install_usr1();
    let done = Arc::new(AtomicBool::new(false));
    let seq = Arc::new(std::sync::atomic::AtomicU64::new(0));
    if let Some(p) = &args.stats_json {
        write_stats_json(p, &store, seq.fetch_add(1, Ordering::SeqCst), false);
    }
    let stats_thread = {
        let store = store.clone();
        let done = done.clone();
        let counters = server.counters.clone();
        let stats_json = args.stats_json.clone();
        let seq = seq.clone();
        thread::spawn(move || {
            let start = Instant::now();
            let mut prev = store.stats();
            let mut prev_t = Instant::now();
            let mut next = every.map(|d| Instant::now() + d);
            while !done.load(Ordering::SeqCst) {
                thread::sleep(Duration::from_millis(50));
                let due = next.is_some_and(|n| Instant::now() >= n);
                if STATS_NOW.swap(false, Ordering::SeqCst) || due {
                    let s = store.stats();
                    let secs = prev_t.elapsed().as_secs_f64();
                    eprintln!(
                        "{} | connections {} ({} refused, {} timed out){}",
                        stats_line(&s, &prev, secs, start.elapsed().as_secs_f64()),
                        counters.connections_active.load(Ordering::Relaxed),
                        counters.connections_refused.load(Ordering::Relaxed),
                        counters.connections_timed_out.load(Ordering::Relaxed),
                        if s.read_only {
                            " | READ-ONLY after an IO error: restart to recover"
                        } else {
                            ""
                        }
                    );
                    store.flush_trace();
                    if let Some(p) = &stats_json {
                        write_stats_json(p, &store, seq.fetch_add(1, Ordering::SeqCst), false);
                    }
                    prev = s;
                    prev_t = Instant::now();
                    if let (Some(n), Some(d)) = (next.as_mut(), every) {
                        if due {
                            *n += d;
                        }
                    }
                }
            }
        })
    };
    let cfg = SessionConfig {
        export_name: args.export_name.clone(),
        description: format!("flashlab sim:{}", store.spec()),
        pace: args.pace,
        limits,
    };
    let result = server.run(store.clone(), Arc::new(cfg), &signals::STOP);
    done.store(true, Ordering::SeqCst);
    let _ = stats_thread.join();
    drop(server);
    eprintln!("flashlab serve: stopping; writing a checkpoint");
    store
        .shutdown()
        .map_err(|e| CliError::failure(e.to_string()))?;
    if let Some(p) = &args.stats_json {
        write_stats_json(p, &store, seq.fetch_add(1, Ordering::SeqCst), true);
    }
    let s = store.stats();
    eprintln!(
        "flashlab serve: stopped after {} reads, {} writes, {} trims, {} flushes; WAF {:.3}",
        s.reads, s.writes, s.trims, s.flushes, s.waf
    );
    result.map_err(|e| CliError::failure(e.to_string()))
}
