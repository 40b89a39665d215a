//! The NBD server: a listener (unix socket or TCP on loopback), one thread per
//! connection, and the session logic (handshake, then transmission) generic
//! over any reader and writer so that tests and the fuzz target drive it in
//! memory.
//!
//! Each connection's thread reads a request, checks it, performs it on the
//! [`Backend`] and replies. Several connections share the backend, which
//! serialises what must be serialised (the simulator and its log) and lets
//! data reads and writes proceed in parallel. With pacing, replies go to a
//! per-connection pacer thread that sends each one when its simulated latency
//! has elapsed (measured from the request's arrival), in due order, while the
//! connection keeps reading requests.
//!
//! Hostile clients (docs/serve.md): at most `max_connections` at once (when
//! full, the oldest connection still in its handshake makes room, else the
//! one idle the longest, else — every slot has a request in progress — the
//! new one is closed); a handshake must finish within `handshake_timeout`; a
//! request payload or a reply that does not move for `stall_timeout` ends
//! the connection, and so (optionally) does `idle_timeout` without requests;
//! the payload and read buffers of all connections together stay within
//! `buffer_bytes`, three quarters for write payloads and a quarter for read
//! replies, each pool granted in arrival order (a connection waits for room
//! before it allocates, so a declared 32 MiB write costs nothing until
//! granted, and memory only as its bytes arrive; writers that hold the write
//! pool delay other writers, never reads); with pacing, a connection stops reading requests while
//! `queued_replies` replies wait for their due time or for the client to
//! read them. A reaper in the accept loop enforces the timeouts by shutting
//! the socket down.
//!
//! Hostile input: a wrong magic, an option longer than 64 KiB, more than 1024
//! options, a write payload over 32 MiB or unknown client flags end that
//! connection (a hard disconnect, which the protocol allows after a violation);
//! malformed option data, unknown options and exports, misaligned or
//! out-of-range requests, unknown commands and flags get the protocol's error
//! replies; a client that vanishes mid-request just ends its thread. No lock
//! is held while a connection reads from or writes to its socket, so a stalled
//! client cannot block the others.

use std::collections::BinaryHeap;
use std::io::{self, Read, Write};
use std::net::{Shutdown, SocketAddr, TcpListener, TcpStream};
use std::os::fd::AsRawFd;
use std::os::unix::net::{UnixListener, UnixStream};
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicU8, Ordering};
use std::sync::{mpsc, Arc, Condvar, Mutex};
use std::thread;
use std::time::{Duration, Instant};

use crate::proto::*;

/// What the server serves. Errors are NBD error numbers (`proto::EIO`...).
/// Every successful call returns the request's simulated latency in
/// nanoseconds (0 when there is no simulation), used for pacing.
pub trait Backend: Send + Sync {
    fn size(&self) -> u64;
    fn read(&self, offset: u64, buf: &mut [u8]) -> Result<u64, u32>;
    fn write(&self, offset: u64, data: &[u8], fua: bool) -> Result<u64, u32>;
    fn trim(&self, offset: u64, length: u32, fua: bool) -> Result<u64, u32>;
    fn write_zeroes(&self, offset: u64, length: u32, no_hole: bool, fua: bool) -> Result<u64, u32>;
    fn flush(&self) -> Result<u64, u32>;
    /// Whether writes are refused for good (new clients are told so with
    /// `NBD_FLAG_READ_ONLY`).
    fn read_only(&self) -> bool {
        false
    }
}

/// The transmission flags for a new client of `backend`.
fn transmission_flags(backend: &dyn Backend) -> u16 {
    if backend.read_only() {
        TRANSMISSION_FLAGS | TFLAG_READ_ONLY
    } else {
        TRANSMISSION_FLAGS
    }
}

/// Session settings.
#[derive(Clone, Debug)]
pub struct SessionConfig {
    /// The export's name (clients may also ask for the default export, "").
    pub export_name: String,
    pub description: String,
    /// Delay each reply by its simulated latency.
    pub pace: bool,
    pub limits: Limits,
}

impl Default for SessionConfig {
    fn default() -> Self {
        SessionConfig {
            export_name: "flashlab".into(),
            description: "flashlab simulated SSD".into(),
            pace: false,
            limits: Limits::default(),
        }
    }
}

/// What protects the server from its clients (the server has no
/// authentication, so every client may be hostile).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Limits {
    /// Connections served at once.
    pub max_connections: usize,
    /// Time from accept to the end of the handshake.
    pub handshake_timeout: Option<Duration>,
    /// Time without a request before a connection is closed. Off by
    /// default: a mounted file system may legitimately stay idle for hours.
    pub idle_timeout: Option<Duration>,
    /// Time a request payload may take to arrive, or a reply to be taken by
    /// the client, before the connection is closed.
    pub stall_timeout: Option<Duration>,
    /// Payload and read buffers of all connections together.
    pub buffer_bytes: u64,
    /// Replies (pacing) one connection may have waiting before it stops
    /// reading requests.
    pub queued_replies: usize,
}

pub const DEFAULT_MAX_CONNECTIONS: usize = 64;
pub const DEFAULT_HANDSHAKE_TIMEOUT: Duration = Duration::from_secs(10);
pub const DEFAULT_STALL_TIMEOUT: Duration = Duration::from_secs(30);
pub const DEFAULT_BUFFER_BYTES: u64 = 256 << 20;
pub const DEFAULT_QUEUED_REPLIES: usize = 1024;

impl Default for Limits {
    fn default() -> Self {
        Limits {
            max_connections: DEFAULT_MAX_CONNECTIONS,
            handshake_timeout: Some(DEFAULT_HANDSHAKE_TIMEOUT),
            idle_timeout: None,
            stall_timeout: Some(DEFAULT_STALL_TIMEOUT),
            buffer_bytes: DEFAULT_BUFFER_BYTES,
            queued_replies: DEFAULT_QUEUED_REPLIES,
        }
    }
}

/// Counters shared by all connections.
#[derive(Default, Debug)]
pub struct ServerCounters {
    pub connections_total: AtomicU64,
    pub connections_active: AtomicU64,
    /// Connections closed at accept because `max_connections` were open.
    pub connections_refused: AtomicU64,
    /// Connections closed by a timeout (handshake, stall, idle) or evicted
    /// while in their handshake or idle to make room.
    pub connections_timed_out: AtomicU64,
    /// Connections ended because the client broke the protocol.
    pub violations: AtomicU64,
    /// Requests answered with an error.
    pub error_replies: AtomicU64,
    /// Write payload buffers, shared by all connections: three quarters of
    /// `Limits::buffer_bytes`, granted first come, first served.
    pub buffers: BufferBudget,
    /// Read reply buffers: the other quarter. Reads have their own pool so
    /// that writers holding the write pool (or declaring payloads they never
    /// send) delay only other writers, never a read.
    pub read_buffers: BufferBudget,
}

impl ServerCounters {
    /// Split `buffer_bytes` between the write and the read pool.
    pub fn set_buffer_limit(&self, buffer_bytes: u64) {
        let reads = buffer_bytes / 4;
        self.read_buffers.set_limit(reads);
        self.buffers.set_limit(buffer_bytes - reads);
    }
}

/// A byte budget for request payloads or read replies: a connection waits
/// for room before it allocates (back-pressure instead of memory growth).
/// Requests are granted in arrival order, so a large request is not starved
/// by a stream of small ones, and no connection can jump the queue.
#[derive(Debug)]
pub struct BufferBudget {
    limit: AtomicU64,
    state: Mutex<BudgetState>,
    freed: Condvar,
    peak: AtomicU64,
}

#[derive(Debug, Default)]
struct BudgetState {
    used: u64,
    /// The next ticket to hand out, and the ticket being served.
    next_ticket: u64,
    serving: u64,
}

impl Default for BufferBudget {
    fn default() -> Self {
        BufferBudget {
            limit: AtomicU64::new(DEFAULT_BUFFER_BYTES),
            state: Mutex::new(BudgetState::default()),
            freed: Condvar::new(),
            peak: AtomicU64::new(0),
        }
    }
}

/// Bytes granted by a [`BufferBudget`], given back on drop.
#[derive(Debug)]
pub struct Permit<'a> {
    budget: &'a BufferBudget,
    bytes: u64,
}

impl Drop for Permit<'_> {
    fn drop(&mut self) {
        let mut st = self.budget.lock();
        st.used -= self.bytes;
        self.budget.freed.notify_all();
    }
}

impl BufferBudget {
    pub fn set_limit(&self, bytes: u64) {
        self.limit.store(bytes.max(1), Ordering::Relaxed);
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, BudgetState> {
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Wait for this request's turn and until `bytes` fit (one request
    /// larger than the whole budget waits until it is alone).
    pub fn acquire(&self, bytes: u64) -> Permit<'_> {
        let limit = self.limit.load(Ordering::Relaxed);
        let mut st = self.lock();
        let ticket = st.next_ticket;
        st.next_ticket += 1;
        while st.serving != ticket || (st.used > 0 && st.used + bytes > limit) {
            st = self.freed.wait(st).unwrap_or_else(|p| p.into_inner());
        }
        st.serving += 1;
        st.used += bytes;
        self.peak.fetch_max(st.used, Ordering::Relaxed);
        // The next ticket may fit too.
        self.freed.notify_all();
        Permit {
            budget: self,
            bytes,
        }
    }

    /// Bytes in use now, and at most so far.
    pub fn used(&self) -> (u64, u64) {
        (self.lock().used, self.peak.load(Ordering::Relaxed))
    }
}

const PHASE_HANDSHAKE: u8 = 0;
const PHASE_TRANSMISSION: u8 = 1;
const PHASE_DONE: u8 = 2;

/// What a connection is doing, for the reaper: its phase, when it last
/// received a request, and since when it has been receiving a payload or
/// sending a reply (0: not). Times are nanoseconds since accept, plus 1.
#[derive(Debug)]
pub struct ConnWatch {
    start: Instant,
    phase: AtomicU8,
    last_request: AtomicU64,
    receiving_since: AtomicU64,
    sending_since: AtomicU64,
    /// Requests received whose reply has not been written yet: a connection
    /// with one is busy, never idle, even while the backend works on it.
    in_flight: AtomicU64,
}

impl Default for ConnWatch {
    fn default() -> Self {
        ConnWatch {
            start: Instant::now(),
            phase: AtomicU8::new(PHASE_HANDSHAKE),
            last_request: AtomicU64::new(1),
            receiving_since: AtomicU64::new(0),
            sending_since: AtomicU64::new(0),
            in_flight: AtomicU64::new(0),
        }
    }
}

impl ConnWatch {
    fn now(&self) -> u64 {
        self.start.elapsed().as_nanos() as u64 + 1
    }

    fn set(&self, what: &AtomicU64, on: bool) {
        what.store(if on { self.now() } else { 0 }, Ordering::Relaxed);
    }

    /// How long the connection has been waiting for a request (in
    /// transmission, nothing being received or sent).
    fn idle_ns(&self) -> Option<u64> {
        (self.phase.load(Ordering::Relaxed) == PHASE_TRANSMISSION
            && self.in_flight.load(Ordering::Relaxed) == 0
            && self.receiving_since.load(Ordering::Relaxed) == 0
            && self.sending_since.load(Ordering::Relaxed) == 0)
            .then(|| {
                self.now()
                    .saturating_sub(self.last_request.load(Ordering::Relaxed))
            })
    }

    /// Why the connection must be closed now, if it must.
    fn expired(&self, l: &Limits) -> Option<&'static str> {
        let now = self.now();
        // The session thread stamps `since` concurrently: a stamp taken after
        // `now` was read is later than `now`, and must read as "just started",
        // never wrap into a huge wait (which closed busy, healthy connections).
        let over = |since: u64, t: Option<Duration>| {
            since != 0 && t.is_some_and(|t| now.saturating_sub(since) > t.as_nanos() as u64)
        };
        match self.phase.load(Ordering::Relaxed) {
            PHASE_HANDSHAKE if over(1, l.handshake_timeout) => Some("handshake timeout"),
            PHASE_TRANSMISSION => {
                let rx = self.receiving_since.load(Ordering::Relaxed);
                let tx = self.sending_since.load(Ordering::Relaxed);
                if over(rx, l.stall_timeout) {
                    Some("request payload stalled")
                } else if over(tx, l.stall_timeout) {
                    Some("client does not read its replies")
                } else if rx == 0
                    && tx == 0
                    && over(self.last_request.load(Ordering::Relaxed), l.idle_timeout)
                {
                    Some("idle timeout")
                } else {
                    None
                }
            }
            _ => None,
        }
    }
}

/// How a session ended.
#[derive(Debug, PartialEq, Eq)]
pub enum SessionEnd {
    /// NBD_OPT_ABORT or NBD_CMD_DISC.
    Clean,
    /// The client closed the connection or an IO error occurred.
    Vanished,
    /// The client broke the protocol; we hung up.
    Violation(String),
}

const TRANSMISSION_FLAGS: u16 = TFLAG_HAS_FLAGS
    | TFLAG_SEND_FLUSH
    | TFLAG_SEND_FUA
    | TFLAG_SEND_TRIM
    | TFLAG_SEND_WRITE_ZEROES
    | TFLAG_CAN_MULTI_CONN;

/// A reply on its way to the pacer: due time, sequence number, bytes, and
/// the buffer budget it holds until sent.
type Paced<'a> = (Instant, u64, Vec<u8>, Option<Permit<'a>>);

/// Where replies go: straight to the socket, or through the pacer thread
/// (over a bounded channel: back-pressure when the client reads slowly).
enum Out<'a, W: Write> {
    Direct(W, &'a ConnWatch),
    Paced {
        tx: mpsc::SyncSender<Paced<'a>>,
        seq: u64,
    },
}

impl<'a, W: Write> Out<'a, W> {
    /// Send a reply now (Direct) or when `due` (Paced).
    fn send(
        &mut self,
        due: Instant,
        parts: &[&[u8]],
        permit: Option<Permit<'a>>,
    ) -> io::Result<()> {
        match self {
            Out::Direct(w, watch) => {
                watch.set(&watch.sending_since, true);
                let r = if parts.len() == 1 {
                    w.write_all(parts[0])
                } else {
                    let mut v = Vec::with_capacity(parts.iter().map(|p| p.len()).sum());
                    for p in parts {
                        v.extend_from_slice(p);
                    }
                    w.write_all(&v)
                }
                .and_then(|_| w.flush());
                watch.set(&watch.sending_since, false);
                watch.set(&watch.last_request, true);
                watch.in_flight.fetch_sub(1, Ordering::Relaxed);
                drop(permit);
                r
            }
            Out::Paced { tx, seq } => {
                let mut v = Vec::with_capacity(parts.iter().map(|p| p.len()).sum());
                for p in parts {
                    v.extend_from_slice(p);
                }
                *seq += 1;
                tx.send((due, *seq, v, permit))
                    .map_err(|_| io::Error::new(io::ErrorKind::BrokenPipe, "pacer gone"))
            }
        }
    }
}

fn pacer<W: Write>(mut w: W, rx: mpsc::Receiver<Paced<'_>>, watch: &ConnWatch, bound: usize) {
    use std::cmp::Reverse;
    // Ordered by (due, seq); the permit rides along and is dropped once sent.
    struct Item<'a>(Paced<'a>);
    impl PartialEq for Item<'_> {
        fn eq(&self, o: &Self) -> bool {
            (self.0 .0, self.0 .1) == (o.0 .0, o.0 .1)
        }
    }
    impl Eq for Item<'_> {}
    impl PartialOrd for Item<'_> {
        fn partial_cmp(&self, o: &Self) -> Option<std::cmp::Ordering> {
            Some(self.cmp(o))
        }
    }
    impl Ord for Item<'_> {
        fn cmp(&self, o: &Self) -> std::cmp::Ordering {
            (self.0 .0, self.0 .1).cmp(&(o.0 .0, o.0 .1))
        }
    }
    let mut heap: BinaryHeap<Reverse<Item>> = BinaryHeap::new();
    let mut open = true;
    loop {
        // Send everything due.
        let now = Instant::now();
        while let Some(Reverse(Item((due, _, _, _)))) = heap.peek() {
            if *due > now {
                break;
            }
            let Reverse(Item((_, _, v, permit))) = heap.pop().unwrap();
            watch.set(&watch.sending_since, true);
            let r = w.write_all(&v).and_then(|_| w.flush());
            watch.set(&watch.sending_since, false);
            watch.set(&watch.last_request, true);
            watch.in_flight.fetch_sub(1, Ordering::Relaxed);
            drop(permit);
            if r.is_err() {
                return;
            }
        }
        if !open && heap.is_empty() {
            return;
        }
        let msg = match heap.peek() {
            Some(Reverse(Item((due, _, _, _)))) => {
                let wait = due.saturating_duration_since(Instant::now());
                if !open || heap.len() >= bound {
                    // Full: take nothing more until the earliest reply is
                    // due, so the connection blocks and stops reading.
                    thread::sleep(wait);
                    continue;
                }
                match rx.recv_timeout(wait) {
                    Ok(m) => Some(m),
                    Err(mpsc::RecvTimeoutError::Timeout) => None,
                    Err(mpsc::RecvTimeoutError::Disconnected) => {
                        open = false;
                        None
                    }
                }
            }
            None => match rx.recv() {
                Ok(m) => Some(m),
                Err(_) => {
                    open = false;
                    None
                }
            },
        };
        if let Some(m) = msg {
            heap.push(Reverse(Item(m)));
        }
    }
}

fn read_exact_or_eof<R: Read>(r: &mut R, buf: &mut [u8]) -> io::Result<bool> {
    let mut done = 0;
    while done < buf.len() {
        match r.read(&mut buf[done..]) {
            Ok(0) => {
                return if done == 0 {
                    Ok(false)
                } else {
                    Err(io::ErrorKind::UnexpectedEof.into())
                };
            }
            Ok(n) => done += n,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    Ok(true)
}

/// Run one session (handshake, then transmission) on a connection.
pub fn session<R: Read, W: Write + Send>(
    r: R,
    w: W,
    backend: &dyn Backend,
    cfg: &SessionConfig,
    counters: &ServerCounters,
) -> SessionEnd {
    session_watched(r, w, backend, cfg, counters, &ConnWatch::default())
}

/// [`session`], reporting its progress to `watch` (the reaper's view).
pub fn session_watched<R: Read, W: Write + Send>(
    mut r: R,
    w: W,
    backend: &dyn Backend,
    cfg: &SessionConfig,
    counters: &ServerCounters,
    watch: &ConnWatch,
) -> SessionEnd {
    let mut w = w;
    // Entering transmission is recorded before the last handshake reply is
    // sent, so the accept loop never takes an admitted client for one still
    // in its handshake.
    let admitted = || {
        watch.set(&watch.last_request, true);
        watch.phase.store(PHASE_TRANSMISSION, Ordering::Relaxed);
    };
    let end = match handshake(&mut r, &mut w, backend, cfg, &admitted) {
        Ok(Some(())) => {
            if cfg.pace {
                let bound = cfg.limits.queued_replies.max(1);
                thread::scope(|sc| {
                    let (tx, rx) = mpsc::sync_channel::<Paced>(16);
                    sc.spawn(move || pacer(w, rx, watch, bound));
                    let out: Out<'_, W> = Out::Paced { tx, seq: 0 };
                    transmission(&mut r, out, backend, counters, watch)
                })
            } else {
                transmission(&mut r, Out::Direct(w, watch), backend, counters, watch)
            }
        }
        Ok(None) => SessionEnd::Clean,
        Err(HsError::Io) => SessionEnd::Vanished,
        Err(HsError::Violation(v)) => SessionEnd::Violation(v),
    };
    watch.phase.store(PHASE_DONE, Ordering::Relaxed);
    if matches!(end, SessionEnd::Violation(_)) {
        counters.violations.fetch_add(1, Ordering::Relaxed);
    }
    end
}

enum HsError {
    Io,
    Violation(String),
}

impl From<io::Error> for HsError {
    fn from(_: io::Error) -> HsError {
        HsError::Io
    }
}

/// The fixed newstyle handshake. `Ok(Some(()))`: go to transmission; `Ok(None)`: the client aborted.
fn handshake<R: Read, W: Write>(
    r: &mut R,
    w: &mut W,
    backend: &dyn Backend,
    cfg: &SessionConfig,
    admitted: &dyn Fn(),
) -> Result<Option<()>, HsError> {
    w.write_all(&greeting())?;
    w.flush()?;
    let mut b4 = [0u8; 4];
    r.read_exact(&mut b4)?;
    let client_flags = u32::from_be_bytes(b4);
    if client_flags & !(FLAG_C_FIXED_NEWSTYLE | FLAG_C_NO_ZEROES) != 0 {
        return Err(HsError::Violation(format!(
            "unknown client flags {client_flags:#x}"
        )));
    }
    let no_zeroes = client_flags & FLAG_C_NO_ZEROES != 0;
    let export_ok = |name: &[u8]| name.is_empty() || name == cfg.export_name.as_bytes();
    let mut out = Vec::with_capacity(256);
    for _ in 0..MAX_OPTIONS {
        let mut hb = [0u8; 16];
        r.read_exact(&mut hb)?;
        let h = parse_option_header(&hb).map_err(|v| HsError::Violation(v.0))?;
        let mut data = vec![0u8; h.length as usize];
        r.read_exact(&mut data)?;
        out.clear();
        match h.option {
            OPT_EXPORT_NAME => {
                if !export_ok(&data) {
                    // The protocol offers no error reply here: hang up.
                    return Err(HsError::Violation(format!(
                        "NBD_OPT_EXPORT_NAME for unknown export '{}'",
                        String::from_utf8_lossy(&data)
                    )));
                }
                out.extend_from_slice(&backend.size().to_be_bytes());
                out.extend_from_slice(&transmission_flags(backend).to_be_bytes());
                if !no_zeroes {
                    out.extend_from_slice(&[0u8; 124]);
                }
                admitted();
                w.write_all(&out)?;
                w.flush()?;
                return Ok(Some(()));
            }
            OPT_ABORT => {
                option_reply(&mut out, h.option, REP_ACK, &[]);
                let _ = w.write_all(&out).and_then(|_| w.flush());
                return Ok(None);
            }
            OPT_LIST => {
                if !data.is_empty() {
                    option_reply(
                        &mut out,
                        h.option,
                        REP_ERR_INVALID,
                        b"NBD_OPT_LIST takes no data",
                    );
                } else {
                    let name = cfg.export_name.as_bytes();
                    let mut d = Vec::with_capacity(4 + name.len() + cfg.description.len());
                    d.extend_from_slice(&(name.len() as u32).to_be_bytes());
                    d.extend_from_slice(name);
                    d.extend_from_slice(cfg.description.as_bytes());
                    option_reply(&mut out, h.option, REP_SERVER, &d);
                    option_reply(&mut out, h.option, REP_ACK, &[]);
                }
            }
            OPT_INFO | OPT_GO => match parse_info_request(&data) {
                Err(e) => option_reply(
                    &mut out,
                    h.option,
                    REP_ERR_INVALID,
                    e.to_string().as_bytes(),
                ),
                Ok(req) if !export_ok(&req.name) => {
                    option_reply(&mut out, h.option, REP_ERR_UNKNOWN, b"no such export")
                }
                Ok(req) => {
                    let mut d = Vec::with_capacity(16);
                    d.extend_from_slice(&INFO_EXPORT.to_be_bytes());
                    d.extend_from_slice(&backend.size().to_be_bytes());
                    d.extend_from_slice(&transmission_flags(backend).to_be_bytes());
                    option_reply(&mut out, h.option, REP_INFO, &d);
                    // Our minimum block is 512, not the default 1: always tell.
                    let mut d = Vec::with_capacity(14);
                    d.extend_from_slice(&INFO_BLOCK_SIZE.to_be_bytes());
                    d.extend_from_slice(&MIN_BLOCK.to_be_bytes());
                    d.extend_from_slice(&PREFERRED_BLOCK.to_be_bytes());
                    d.extend_from_slice(&MAX_PAYLOAD.to_be_bytes());
                    option_reply(&mut out, h.option, REP_INFO, &d);
                    if req.requests.contains(&INFO_NAME) {
                        let mut d = INFO_NAME.to_be_bytes().to_vec();
                        d.extend_from_slice(cfg.export_name.as_bytes());
                        option_reply(&mut out, h.option, REP_INFO, &d);
                    }
                    if req.requests.contains(&INFO_DESCRIPTION) {
                        let mut d = INFO_DESCRIPTION.to_be_bytes().to_vec();
                        d.extend_from_slice(cfg.description.as_bytes());
                        option_reply(&mut out, h.option, REP_INFO, &d);
                    }
                    option_reply(&mut out, h.option, REP_ACK, &[]);
                    if h.option == OPT_GO {
                        admitted();
                        w.write_all(&out)?;
                        w.flush()?;
                        return Ok(Some(()));
                    }
                }
            },
            OPT_STARTTLS => {
                option_reply(&mut out, h.option, REP_ERR_POLICY, b"TLS is not supported")
            }
            _ => option_reply(&mut out, h.option, REP_ERR_UNSUP, b"option not supported"),
        }
        w.write_all(&out)?;
        w.flush()?;
    }
    Err(HsError::Violation(format!(
        "more than {MAX_OPTIONS} options"
    )))
}

fn transmission<'a, R: Read, W: Write>(
    r: &mut R,
    mut out: Out<'a, W>,
    backend: &dyn Backend,
    counters: &'a ServerCounters,
    watch: &ConnWatch,
) -> SessionEnd {
    let size = backend.size();
    let mut hdr = [0u8; REQUEST_BYTES];
    let end = loop {
        match read_exact_or_eof(r, &mut hdr) {
            Ok(true) => {}
            Ok(false) | Err(_) => break SessionEnd::Vanished,
        }
        let arrived = Instant::now();
        watch.set(&watch.last_request, true);
        // Counted down when its reply is written (a request that ends the
        // session leaves it counted: the connection is finished anyway).
        watch.in_flight.fetch_add(1, Ordering::Relaxed);
        let req = match parse_request(&hdr) {
            Ok(q) => q,
            Err(v) => break SessionEnd::Violation(v.0),
        };
        let checked = match check_request(&req, size) {
            Ok(c) => c,
            Err(v) => break SessionEnd::Violation(v.0),
        };
        // Read (or skip) a write's payload first, to stay in step with the
        // client: into a buffer granted by the budget (zeroed pages cost no
        // memory until the bytes arrive), or, for a refused write, into a
        // small scratch buffer.
        let payload = payload_bytes(&req) as u64;
        let mut data = None;
        if payload > 0 {
            watch.set(&watch.receiving_since, true);
            let ok = if matches!(checked, Checked::Write { .. }) {
                let permit = counters.buffers.acquire(payload);
                let mut buf = vec![0u8; payload as usize];
                let ok = r.read_exact(&mut buf).is_ok();
                data = Some((buf, permit));
                ok
            } else {
                io::copy(&mut r.by_ref().take(payload), &mut io::sink()).ok() == Some(payload)
            };
            watch.set(&watch.receiving_since, false);
            if !ok {
                break SessionEnd::Vanished;
            }
        }
        let result: Result<u64, u32> = match checked {
            Checked::Disconnect => break SessionEnd::Clean,
            Checked::Error(e) => Err(e),
            Checked::Read { offset, length } => {
                let n = length as usize;
                let permit = counters.read_buffers.acquire(16 + n as u64);
                let mut v = vec![0u8; 16 + n];
                match backend.read(offset, &mut v[16..]) {
                    Ok(lat) => {
                        v[..16].copy_from_slice(&simple_reply(0, req.cookie));
                        if out
                            .send(arrived + Duration::from_nanos(lat), &[&v], Some(permit))
                            .is_err()
                        {
                            break SessionEnd::Vanished;
                        }
                        continue;
                    }
                    Err(e) => Err(e),
                }
            }
            Checked::Write {
                offset,
                length,
                fua,
            } => {
                let (buf, permit) = data.take().expect("payload read above");
                let r = backend.write(offset, &buf[..length as usize], fua);
                drop(buf);
                drop(permit);
                r
            }
            Checked::Flush => backend.flush(),
            Checked::Trim {
                offset,
                length,
                fua,
            } => backend.trim(offset, length, fua),
            Checked::WriteZeroes {
                offset,
                length,
                fua,
                no_hole,
            } => backend.write_zeroes(offset, length, no_hole, fua),
        };
        let (err, lat) = match result {
            Ok(lat) => (0, lat),
            Err(e) => {
                counters.error_replies.fetch_add(1, Ordering::Relaxed);
                (e, 0)
            }
        };
        if out
            .send(
                arrived + Duration::from_nanos(lat),
                &[&simple_reply(err, req.cookie)],
                None,
            )
            .is_err()
        {
            break SessionEnd::Vanished;
        }
    };
    // Dropping `out` closes the pacer's channel; it sends what is left and
    // ends (the scope joins it).
    drop(out);
    end
}

/// Where the server listens.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Listen {
    Unix(PathBuf),
    Tcp(SocketAddr),
}

impl Listen {
    /// Parse `unix:PATH` or `HOST:PORT` (an IP address). Non-loopback
    /// addresses are refused unless `allow_remote`.
    pub fn parse(s: &str, allow_remote: bool) -> Result<Listen, ListenError> {
        if let Some(p) = s.strip_prefix("unix:") {
            if p.is_empty() {
                return Err(ListenError::NoSocketPath);
            }
            return Ok(Listen::Unix(PathBuf::from(p)));
        }
        let addr: SocketAddr = s.parse().map_err(|_| ListenError::BadAddress {
            text: s.to_string(),
        })?;
        if !addr.ip().is_loopback() && !allow_remote {
            return Err(ListenError::NotLoopback {
                text: s.to_string(),
            });
        }
        Ok(Listen::Tcp(addr))
    }

    /// An NBD URI for clients (nbdinfo, nbdcopy, qemu-img).
    pub fn uri(&self) -> String {
        match self {
            Listen::Unix(p) => format!("nbd+unix:///?socket={}", p.display()),
            Listen::Tcp(a) => format!("nbd://{a}"),
        }
    }
}

/// Why `--listen` cannot be used or bound. One line each, naming the fix.
#[derive(Debug)]
pub enum ListenError {
    /// `unix:` without a path.
    NoSocketPath,
    /// Neither `unix:PATH` nor `IP:PORT`.
    BadAddress { text: String },
    /// A non-loopback address without `--allow-remote`.
    NotLoopback { text: String },
    /// A unix socket another server answers on.
    InUse { path: PathBuf },
    /// A stale unix socket that cannot be removed.
    StaleSocket { path: PathBuf, source: io::Error },
    /// bind(2) failed.
    Bind { address: String, source: io::Error },
}

impl std::fmt::Display for ListenError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ListenError::NoSocketPath => {
                f.write_str("--listen unix: needs a path, e.g. unix:/tmp/flashlab.sock")
            }
            ListenError::BadAddress { text } => write!(
                f,
                "--listen '{text}' is neither unix:PATH nor IP:PORT (e.g. 127.0.0.1:10809)"
            ),
            ListenError::NotLoopback { text } => write!(
                f,
                "--listen {text} is not a loopback address; the server has no authentication, so add --allow-remote if you really mean it"
            ),
            ListenError::InUse { path } => write!(
                f,
                "{} is in use by another server; stop it or choose another socket",
                path.display()
            ),
            ListenError::StaleSocket { path, source } => write!(
                f,
                "cannot remove stale socket {}: {source}",
                path.display()
            ),
            ListenError::Bind { address, source } => {
                write!(f, "cannot listen on {address}: {source}")
            }
        }
    }
}

impl std::error::Error for ListenError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            ListenError::StaleSocket { source, .. } | ListenError::Bind { source, .. } => {
                Some(source)
            }
            _ => None,
        }
    }
}

impl std::fmt::Display for Listen {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Listen::Unix(p) => write!(f, "unix:{}", p.display()),
            Listen::Tcp(a) => write!(f, "{a}"),
        }
    }
}

enum AnyListener {
    Unix(UnixListener, PathBuf),
    Tcp(TcpListener),
}

impl Drop for AnyListener {
    fn drop(&mut self) {
        if let AnyListener::Unix(_, p) = self {
            let _ = std::fs::remove_file(p);
        }
    }
}

/// A bound listener.
pub struct Server {
    listener: AnyListener,
    pub counters: Arc<ServerCounters>,
    local: String,
}

impl Server {
    /// Bind. A stale unix socket file (no server answering) is replaced.
    pub fn bind(listen: &Listen) -> Result<Server, ListenError> {
        let listener = match listen {
            Listen::Unix(p) => {
                if p.exists() {
                    if UnixStream::connect(p).is_ok() {
                        return Err(ListenError::InUse { path: p.clone() });
                    }
                    std::fs::remove_file(p).map_err(|source| ListenError::StaleSocket {
                        path: p.clone(),
                        source,
                    })?;
                }
                let l = UnixListener::bind(p).map_err(|source| ListenError::Bind {
                    address: p.display().to_string(),
                    source,
                })?;
                AnyListener::Unix(l, p.clone())
            }
            Listen::Tcp(a) => {
                AnyListener::Tcp(TcpListener::bind(a).map_err(|source| ListenError::Bind {
                    address: a.to_string(),
                    source,
                })?)
            }
        };
        let local = match &listener {
            AnyListener::Unix(_, p) => format!("unix:{}", p.display()),
            AnyListener::Tcp(l) => l.local_addr().map(|a| a.to_string()).unwrap_or_default(),
        };
        Ok(Server {
            listener,
            counters: Arc::new(ServerCounters::default()),
            local,
        })
    }

    /// The address actually bound (useful with port 0).
    pub fn local(&self) -> &str {
        &self.local
    }

    /// Accept connections until `stop` is set; each runs on its own
    /// thread. Between accepts (at least every 100 ms) the reaper closes
    /// connections past their timeouts (`cfg.limits`).
    pub fn run(
        &self,
        backend: Arc<dyn Backend>,
        cfg: Arc<SessionConfig>,
        stop: &AtomicBool,
    ) -> Result<(), RunError> {
        let fd = match &self.listener {
            AnyListener::Unix(l, _) => l.as_raw_fd(),
            AnyListener::Tcp(l) => l.as_raw_fd(),
        };
        let limits = cfg.limits.clone();
        self.counters.set_buffer_limit(limits.buffer_bytes);
        let mut conns: Vec<Conn> = Vec::new();
        while !stop.load(Ordering::SeqCst) {
            let mut pfd = libc::pollfd {
                fd,
                events: libc::POLLIN,
                revents: 0,
            };
            // SAFETY: one valid pollfd.
            let n = unsafe { libc::poll(&mut pfd, 1, 100) };
            self.reap(&mut conns, &limits);
            if n <= 0 {
                continue;
            }
            let accepted = match &self.listener {
                AnyListener::Unix(l, _) => match l.accept() {
                    Ok((s, _)) => Some(Sock::Unix(s)),
                    Err(e) => accept_error(e).map(|_| None)?,
                },
                AnyListener::Tcp(l) => match l.accept() {
                    Ok((s, _)) => {
                        let _ = s.set_nodelay(true);
                        Some(Sock::Tcp(s))
                    }
                    Err(e) => accept_error(e).map(|_| None)?,
                },
            };
            let Some(sock) = accepted else { continue };
            if conns.len() >= limits.max_connections.max(1) {
                // Full: the oldest connection still in its handshake (it
                // has not even asked for the export) makes room, else the
                // one idle the longest (no request in flight, nothing being
                // received or sent), so silent or parked connections cannot
                // lock a newcomer out; only when every slot has a request
                // in progress is the newcomer closed.
                let victim = conns
                    .iter()
                    .position(|c| c.watch.phase.load(Ordering::Relaxed) == PHASE_HANDSHAKE)
                    .or_else(|| {
                        conns
                            .iter()
                            .enumerate()
                            .filter_map(|(i, c)| Some((i, c.watch.idle_ns()?)))
                            .max_by_key(|&(_, idle)| idle)
                            .map(|(i, _)| i)
                    });
                match victim {
                    Some(i) => {
                        let c = conns.remove(i);
                        c.sock.shutdown();
                        self.counters
                            .connections_timed_out
                            .fetch_add(1, Ordering::Relaxed);
                    }
                    None => {
                        self.counters
                            .connections_refused
                            .fetch_add(1, Ordering::Relaxed);
                        drop(sock);
                        continue;
                    }
                }
            }
            if let Some(c) =
                spawn_session(sock, backend.clone(), cfg.clone(), self.counters.clone())
            {
                conns.push(c);
            }
        }
        Ok(())
    }

    /// Forget finished connections; shut down those past a timeout.
    fn reap(&self, conns: &mut Vec<Conn>, limits: &Limits) {
        conns.retain(|c| {
            if c.watch.phase.load(Ordering::Relaxed) == PHASE_DONE {
                return false;
            }
            if c.watch.expired(limits).is_some() {
                c.sock.shutdown();
                self.counters
                    .connections_timed_out
                    .fetch_add(1, Ordering::Relaxed);
                return false;
            }
            true
        });
    }
}

fn accept_error(e: io::Error) -> Result<(), RunError> {
    match e.kind() {
        io::ErrorKind::Interrupted
        | io::ErrorKind::WouldBlock
        | io::ErrorKind::ConnectionAborted => Ok(()),
        _ if e.raw_os_error() == Some(libc::EMFILE) || e.raw_os_error() == Some(libc::ENFILE) => {
            thread::sleep(Duration::from_millis(50));
            Ok(())
        }
        _ => Err(RunError::Accept(e)),
    }
}

/// Why [`Server::run`] stopped before it was asked to.
#[derive(Debug)]
pub enum RunError {
    /// accept(2) failed with an error that retrying does not cure.
    Accept(io::Error),
}

impl std::fmt::Display for RunError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            RunError::Accept(e) => write!(f, "accept failed: {e}"),
        }
    }
}

impl std::error::Error for RunError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            RunError::Accept(e) => Some(e),
        }
    }
}

/// An accepted socket.
enum Sock {
    Unix(UnixStream),
    Tcp(TcpStream),
}

impl Sock {
    /// Unblock the connection's thread (its reads and writes fail).
    fn shutdown(&self) {
        let _ = match self {
            Sock::Unix(s) => s.shutdown(Shutdown::Both),
            Sock::Tcp(s) => s.shutdown(Shutdown::Both),
        };
    }
}

/// A live connection, as the accept loop sees it.
struct Conn {
    watch: Arc<ConnWatch>,
    sock: Sock,
}

fn spawn_session(
    sock: Sock,
    b: Arc<dyn Backend>,
    c: Arc<SessionConfig>,
    k: Arc<ServerCounters>,
) -> Option<Conn> {
    let watch = Arc::new(ConnWatch::default());
    let (r, w, keep): (Box<dyn Read + Send>, Box<dyn Write + Send>, Sock) = match &sock {
        Sock::Unix(s) => (
            Box::new(io::BufReader::with_capacity(
                256 * 1024,
                s.try_clone().ok()?,
            )),
            Box::new(s.try_clone().ok()?),
            sock,
        ),
        Sock::Tcp(s) => (
            Box::new(io::BufReader::with_capacity(
                256 * 1024,
                s.try_clone().ok()?,
            )),
            Box::new(s.try_clone().ok()?),
            sock,
        ),
    };
    k.connections_total.fetch_add(1, Ordering::Relaxed);
    k.connections_active.fetch_add(1, Ordering::Relaxed);
    let w2 = watch.clone();
    let spawned = thread::Builder::new()
        .name("nbd-conn".into())
        .spawn(move || {
            let _ = session_watched(r, w, &*b, &c, &k, &w2);
            w2.phase.store(PHASE_DONE, Ordering::Relaxed);
            k.connections_active.fetch_sub(1, Ordering::Relaxed);
        });
    match spawned {
        Ok(_) => Some(Conn { watch, sock: keep }),
        // Out of threads: the connection is dropped (closed), the server goes on.
        Err(_) => None,
    }
}

#[cfg(test)]
mod watch_tests {
    use super::*;

    /// A request that began after the reaper read the clock is not a stall.
    #[test]
    fn a_stamp_taken_after_the_reapers_clock_read_is_not_a_stall() {
        let w = ConnWatch::default();
        w.phase.store(PHASE_TRANSMISSION, Ordering::Relaxed);
        let limits = Limits::default();
        let stall = limits.stall_timeout.unwrap().as_nanos() as u64;
        // Stamps in the future of any clock read the reaper can make now.
        w.receiving_since.store(w.now() + stall, Ordering::Relaxed);
        w.sending_since.store(w.now() + stall, Ordering::Relaxed);
        assert_eq!(w.expired(&limits), None);
        // A stamp older than the stall timeout is still caught.
        w.receiving_since.store(1, Ordering::Relaxed);
        w.sending_since.store(0, Ordering::Relaxed);
        std::thread::sleep(Duration::from_millis(2));
        let short = Limits {
            stall_timeout: Some(Duration::from_millis(1)),
            ..Limits::default()
        };
        assert_eq!(w.expired(&short), Some("request payload stalled"));
    }
}
