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
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::os::fd::AsRawFd;
use std::os::unix::net::{UnixListener, UnixStream};
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{mpsc, Arc};
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
}

/// Session settings.
#[derive(Clone, Debug)]
pub struct SessionConfig {
    /// The export's name (clients may also ask for the default export, "").
    pub export_name: String,
    pub description: String,
    /// Delay each reply by its simulated latency.
    pub pace: bool,
}

impl Default for SessionConfig {
    fn default() -> Self {
        SessionConfig {
            export_name: "flashlab".into(),
            description: "flashlab simulated SSD".into(),
            pace: false,
        }
    }
}

/// Counters shared by all connections.
#[derive(Default, Debug)]
pub struct ServerCounters {
    pub connections_total: AtomicU64,
    pub connections_active: AtomicU64,
    /// Connections ended because the client broke the protocol.
    pub violations: AtomicU64,
    /// Requests answered with an error.
    pub error_replies: AtomicU64,
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

/// Where replies go: straight to the socket, or through the pacer thread.
enum Out<W: Write + Send + 'static> {
    Direct(W),
    Paced {
        tx: mpsc::Sender<(Instant, u64, Vec<u8>)>,
        thread: thread::JoinHandle<()>,
        seq: u64,
    },
}

impl<W: Write + Send + 'static> Out<W> {
    fn new(w: W, pace: bool) -> Out<W> {
        if !pace {
            return Out::Direct(w);
        }
        let (tx, rx) = mpsc::channel::<(Instant, u64, Vec<u8>)>();
        let thread = thread::spawn(move || pacer(w, rx));
        Out::Paced { tx, thread, seq: 0 }
    }

    /// Send a reply now (Direct) or when `due` (Paced).
    fn send(&mut self, due: Instant, parts: &[&[u8]]) -> io::Result<()> {
        match self {
            Out::Direct(w) => {
                if parts.len() == 1 {
                    w.write_all(parts[0])?;
                } else {
                    let mut v = Vec::with_capacity(parts.iter().map(|p| p.len()).sum());
                    for p in parts {
                        v.extend_from_slice(p);
                    }
                    w.write_all(&v)?;
                }
                w.flush()
            }
            Out::Paced { tx, seq, .. } => {
                let mut v = Vec::with_capacity(parts.iter().map(|p| p.len()).sum());
                for p in parts {
                    v.extend_from_slice(p);
                }
                *seq += 1;
                tx.send((due, *seq, v))
                    .map_err(|_| io::Error::new(io::ErrorKind::BrokenPipe, "pacer gone"))
            }
        }
    }

    /// Wait until every reply has been sent.
    fn finish(self) {
        if let Out::Paced { tx, thread, .. } = self {
            drop(tx);
            let _ = thread.join();
        }
    }
}

fn pacer<W: Write>(mut w: W, rx: mpsc::Receiver<(Instant, u64, Vec<u8>)>) {
    use std::cmp::Reverse;
    let mut heap: BinaryHeap<Reverse<(Instant, u64, Vec<u8>)>> = BinaryHeap::new();
    let mut open = true;
    loop {
        // Send everything due.
        let now = Instant::now();
        while let Some(Reverse((due, _, _))) = heap.peek() {
            if *due > now {
                break;
            }
            let Reverse((_, _, v)) = heap.pop().unwrap();
            if w.write_all(&v).and_then(|_| w.flush()).is_err() {
                return;
            }
        }
        if !open && heap.is_empty() {
            return;
        }
        let msg = match heap.peek() {
            Some(Reverse((due, _, _))) => {
                let wait = due.saturating_duration_since(Instant::now());
                if !open {
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
            heap.push(Reverse(m));
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
pub fn session<R: Read, W: Write + Send + 'static>(
    mut r: R,
    w: W,
    backend: &dyn Backend,
    cfg: &SessionConfig,
    counters: &ServerCounters,
) -> SessionEnd {
    let mut w = w;
    let end = match handshake(&mut r, &mut w, backend, cfg) {
        Ok(Some(())) => transmission(&mut r, Out::new(w, cfg.pace), backend, counters),
        Ok(None) => SessionEnd::Clean,
        Err(HsError::Io) => SessionEnd::Vanished,
        Err(HsError::Violation(v)) => SessionEnd::Violation(v),
    };
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
                out.extend_from_slice(&TRANSMISSION_FLAGS.to_be_bytes());
                if !no_zeroes {
                    out.extend_from_slice(&[0u8; 124]);
                }
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
                Err(e) => option_reply(&mut out, h.option, REP_ERR_INVALID, e.as_bytes()),
                Ok(req) if !export_ok(&req.name) => {
                    option_reply(&mut out, h.option, REP_ERR_UNKNOWN, b"no such export")
                }
                Ok(req) => {
                    let mut d = Vec::with_capacity(16);
                    d.extend_from_slice(&INFO_EXPORT.to_be_bytes());
                    d.extend_from_slice(&backend.size().to_be_bytes());
                    d.extend_from_slice(&TRANSMISSION_FLAGS.to_be_bytes());
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

fn transmission<R: Read, W: Write + Send + 'static>(
    r: &mut R,
    mut out: Out<W>,
    backend: &dyn Backend,
    counters: &ServerCounters,
) -> SessionEnd {
    let size = backend.size();
    let mut hdr = [0u8; REQUEST_BYTES];
    let mut buf: Vec<u8> = Vec::new();
    let end = loop {
        match read_exact_or_eof(r, &mut hdr) {
            Ok(true) => {}
            Ok(false) | Err(_) => break SessionEnd::Vanished,
        }
        let arrived = Instant::now();
        let req = match parse_request(&hdr) {
            Ok(q) => q,
            Err(v) => break SessionEnd::Violation(v.0),
        };
        let checked = match check_request(&req, size) {
            Ok(c) => c,
            Err(v) => break SessionEnd::Violation(v.0),
        };
        // Read (or skip) a write's payload first, to stay in step with the client.
        let payload = payload_bytes(&req) as usize;
        if payload > 0 {
            if buf.len() < payload {
                buf.resize(payload, 0);
            }
            if r.read_exact(&mut buf[..payload]).is_err() {
                break SessionEnd::Vanished;
            }
        }
        let result: Result<(u64, bool), u32> = match checked {
            Checked::Disconnect => break SessionEnd::Clean,
            Checked::Error(e) => Err(e),
            Checked::Read { offset, length } => {
                let n = length as usize;
                let mut v = vec![0u8; 16 + n];
                match backend.read(offset, &mut v[16..]) {
                    Ok(lat) => {
                        v[..16].copy_from_slice(&simple_reply(0, req.cookie));
                        if out
                            .send(arrived + Duration::from_nanos(lat), &[&v])
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
            } => backend
                .write(offset, &buf[..length as usize], fua)
                .map(|l| (l, true)),
            Checked::Flush => backend.flush().map(|l| (l, true)),
            Checked::Trim {
                offset,
                length,
                fua,
            } => backend.trim(offset, length, fua).map(|l| (l, true)),
            Checked::WriteZeroes {
                offset,
                length,
                fua,
                no_hole,
            } => backend
                .write_zeroes(offset, length, no_hole, fua)
                .map(|l| (l, true)),
        };
        let (err, lat) = match result {
            Ok((lat, _)) => (0, lat),
            Err(e) => {
                counters.error_replies.fetch_add(1, Ordering::Relaxed);
                (e, 0)
            }
        };
        if out
            .send(
                arrived + Duration::from_nanos(lat),
                &[&simple_reply(err, req.cookie)],
            )
            .is_err()
        {
            break SessionEnd::Vanished;
        }
    };
    out.finish();
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
    pub fn parse(s: &str, allow_remote: bool) -> Result<Listen, String> {
        if let Some(p) = s.strip_prefix("unix:") {
            if p.is_empty() {
                return Err("--listen unix: needs a path, e.g. unix:/tmp/flashlab.sock".into());
            }
            return Ok(Listen::Unix(PathBuf::from(p)));
        }
        let addr: SocketAddr = s.parse().map_err(|_| {
            format!("--listen '{s}' is neither unix:PATH nor IP:PORT (e.g. 127.0.0.1:10809)")
        })?;
        if !addr.ip().is_loopback() && !allow_remote {
            return Err(format!(
                "--listen {s} is not a loopback address; the server has no authentication, so add --allow-remote if you really mean it"
            ));
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
    pub fn bind(listen: &Listen) -> Result<Server, String> {
        let listener = match listen {
            Listen::Unix(p) => {
                if p.exists() {
                    if UnixStream::connect(p).is_ok() {
                        return Err(format!(
                            "{} is in use by another server; stop it or choose another socket",
                            p.display()
                        ));
                    }
                    std::fs::remove_file(p)
                        .map_err(|e| format!("cannot remove stale socket {}: {e}", p.display()))?;
                }
                let l = UnixListener::bind(p)
                    .map_err(|e| format!("cannot listen on {}: {e}", p.display()))?;
                AnyListener::Unix(l, p.clone())
            }
            Listen::Tcp(a) => AnyListener::Tcp(
                TcpListener::bind(a).map_err(|e| format!("cannot listen on {a}: {e}"))?,
            ),
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

    /// Accept connections until `stop` is set; each runs on its own thread.
    pub fn run(
        &self,
        backend: Arc<dyn Backend>,
        cfg: Arc<SessionConfig>,
        stop: &AtomicBool,
    ) -> Result<(), String> {
        let fd = match &self.listener {
            AnyListener::Unix(l, _) => l.as_raw_fd(),
            AnyListener::Tcp(l) => l.as_raw_fd(),
        };
        while !stop.load(Ordering::SeqCst) {
            let mut pfd = libc::pollfd {
                fd,
                events: libc::POLLIN,
                revents: 0,
            };
            // SAFETY: one valid pollfd.
            let n = unsafe { libc::poll(&mut pfd, 1, 100) };
            if n <= 0 {
                continue;
            }
            let (b, c, k) = (backend.clone(), cfg.clone(), self.counters.clone());
            match &self.listener {
                AnyListener::Unix(l, _) => match l.accept() {
                    Ok((s, _)) => spawn_unix(s, b, c, k),
                    Err(e) => accept_error(e)?,
                },
                AnyListener::Tcp(l) => match l.accept() {
                    Ok((s, _)) => spawn_tcp(s, b, c, k),
                    Err(e) => accept_error(e)?,
                },
            }
        }
        Ok(())
    }
}

fn accept_error(e: io::Error) -> Result<(), String> {
    match e.kind() {
        io::ErrorKind::Interrupted
        | io::ErrorKind::WouldBlock
        | io::ErrorKind::ConnectionAborted => Ok(()),
        _ if e.raw_os_error() == Some(libc::EMFILE) || e.raw_os_error() == Some(libc::ENFILE) => {
            thread::sleep(Duration::from_millis(50));
            Ok(())
        }
        _ => Err(format!("accept failed: {e}")),
    }
}

fn spawn_unix(s: UnixStream, b: Arc<dyn Backend>, c: Arc<SessionConfig>, k: Arc<ServerCounters>) {
    let Ok(w) = s.try_clone() else { return };
    spawn_session(io::BufReader::with_capacity(256 * 1024, s), w, b, c, k);
}

fn spawn_tcp(s: TcpStream, b: Arc<dyn Backend>, c: Arc<SessionConfig>, k: Arc<ServerCounters>) {
    let _ = s.set_nodelay(true);
    let Ok(w) = s.try_clone() else { return };
    spawn_session(io::BufReader::with_capacity(256 * 1024, s), w, b, c, k);
}

fn spawn_session<R: Read + Send + 'static, W: Write + Send + 'static>(
    r: R,
    w: W,
    b: Arc<dyn Backend>,
    c: Arc<SessionConfig>,
    k: Arc<ServerCounters>,
) {
    k.connections_total.fetch_add(1, Ordering::Relaxed);
    k.connections_active.fetch_add(1, Ordering::Relaxed);
    let spawned = thread::Builder::new()
        .name("nbd-conn".into())
        .spawn(move || {
            let _ = session(r, w, &*b, &c, &k);
            k.connections_active.fetch_sub(1, Ordering::Relaxed);
        });
    if spawned.is_err() {
        // Out of threads: the connection is dropped (closed), the server goes on.
    }
}
