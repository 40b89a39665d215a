//! The server against our own client and against hostile clients: malformed
//! handshakes and requests, out-of-range and misaligned requests, clients that
//! vanish mid-request; the server answers with the protocol's errors or drops
//! that client, and keeps serving the others. Plus a time-boxed fuzz-style run
//! of the whole session state machine on random and mutated inputs.

use std::io::{Read, Write};
use std::sync::atomic::AtomicBool;
use std::sync::Arc;
use std::thread;
use std::time::{Duration, Instant};

use flashlab_nbd::client::{self, Client, Stream};
use flashlab_nbd::mem::MemBackend;
use flashlab_nbd::proto::*;
use flashlab_nbd::server::Limits;
use flashlab_nbd::{Backend, Listen, Server, SessionConfig, Store, StoreOptions};

struct Running {
    addr: String,
    stop: Arc<AtomicBool>,
    thread: Option<thread::JoinHandle<()>>,
    _dir: tempfile::TempDir,
}

impl Drop for Running {
    fn drop(&mut self) {
        self.stop.store(true, std::sync::atomic::Ordering::SeqCst);
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

fn start(backend: Arc<dyn Backend>, pace: bool) -> Running {
    start_with(
        backend,
        SessionConfig {
            pace,
            ..SessionConfig::default()
        },
    )
}

fn start_with(backend: Arc<dyn Backend>, cfg: SessionConfig) -> Running {
    let dir = tempfile::tempdir().unwrap();
    let sock = dir.path().join("s.sock");
    let server = Server::bind(&Listen::Unix(sock.clone())).unwrap();
    let stop = Arc::new(AtomicBool::new(false));
    let s2 = stop.clone();
    let cfg = Arc::new(cfg);
    let thread = thread::spawn(move || server.run(backend, cfg, &s2).unwrap());
    Running {
        addr: format!("unix:{}", sock.display()),
        stop,
        thread: Some(thread),
        _dir: dir,
    }
}

fn mem() -> Arc<dyn Backend> {
    Arc::new(MemBackend::new(1 << 20))
}

#[test]
fn read_write_flush_trim_zero_round_trip() {
    let srv = start(mem(), false);
    let mut c = Client::connect(&srv.addr, "").unwrap();
    assert_eq!(c.size, 1 << 20);
    assert_ne!(c.flags & TFLAG_SEND_FLUSH, 0);
    let data: Vec<u8> = (0..8192u32).map(|i| (i * 7) as u8).collect();
    assert_eq!(c.write(4096, &data, false).unwrap(), 0);
    assert_eq!(c.write(65536, &data, true).unwrap(), 0);
    assert_eq!(c.flush().unwrap(), 0);
    let mut buf = vec![0u8; 8192];
    c.read(4096, &mut buf).unwrap().unwrap();
    assert_eq!(buf, data);
    assert_eq!(c.write_zeroes(4096, 4096, true).unwrap(), 0);
    assert_eq!(c.trim(8192, 4096).unwrap(), 0);
    c.read(4096, &mut buf).unwrap().unwrap();
    assert!(buf.iter().all(|&b| b == 0));
    c.disconnect().unwrap();
}

#[test]
fn errors_for_bad_requests_and_the_connection_survives() {
    let srv = start(mem(), false);
    let mut c = Client::connect(&srv.addr, "flashlab").unwrap();
    let mut b = vec![0u8; 512];
    assert_eq!(
        c.read(1 << 20, &mut b).unwrap(),
        Err(EINVAL),
        "read past the end"
    );
    assert_eq!(c.read(100, &mut b).unwrap(), Err(EINVAL), "misaligned read");
    assert_eq!(
        c.write((1 << 20) - 512, &[0u8; 1024], false).unwrap(),
        ENOSPC,
        "write past the end"
    );
    assert_eq!(
        c.write(3, &[0u8; 512], false).unwrap(),
        EINVAL,
        "misaligned write (payload skipped)"
    );
    assert_eq!(
        c.write(0, &[1u8; 100], false).unwrap(),
        EINVAL,
        "odd length"
    );
    assert_eq!(
        c.trim(u64::MAX - 511, 512).unwrap(),
        EINVAL,
        "offset overflow"
    );
    // unknown command, unknown flag, flush with a length, DF not negotiated
    for (flags, kind, off, len) in [
        (0, 99u16, 0u64, 0u32),
        (1 << 9, CMD_FLUSH, 0, 0),
        (0, CMD_FLUSH, 0, 512),
        (CMD_FLAG_DF, CMD_READ, 0, 512),
        (0, CMD_BLOCK_STATUS, 0, 512),
        (0, CMD_CACHE, 0, 512),
    ] {
        let cookie = c.send(flags, kind, off, len, &[]).unwrap();
        assert_eq!(
            c.recv_reply().unwrap(),
            (cookie, EINVAL),
            "flags {flags} kind {kind}"
        );
    }
    // still serving
    assert_eq!(c.write(0, &[5u8; 512], false).unwrap(), 0);
    c.read(0, &mut b).unwrap().unwrap();
    assert_eq!(b, vec![5u8; 512]);
}

fn raw(addr: &str) -> Stream {
    let s = Stream::connect(addr).unwrap();
    s.set_timeout(Some(Duration::from_secs(5))).unwrap();
    s
}

/// Read until EOF (the server hung up) or an error; true when the server closed.
fn closed(s: &mut Stream) -> bool {
    let mut b = [0u8; 4096];
    loop {
        match s.read(&mut b) {
            Ok(0) => return true,
            Ok(_) => continue,
            Err(_) => return false,
        }
    }
}

#[test]
fn hostile_handshakes_get_errors_or_a_hang_up() {
    let srv = start(mem(), false);
    // A good client stays connected throughout.
    let mut good = Client::connect(&srv.addr, "").unwrap();

    // Unknown client flags: hang up.
    let mut s = raw(&srv.addr);
    let mut g = [0u8; 18];
    s.read_exact(&mut g).unwrap();
    s.write_all(&0xffu32.to_be_bytes()).unwrap();
    assert!(closed(&mut s));

    // Wrong option magic: hang up.
    let mut s = raw(&srv.addr);
    client::greet(&mut s).unwrap();
    s.write_all(&[0x55u8; 16]).unwrap();
    assert!(closed(&mut s));

    // Huge option length: hang up without reading it.
    let mut s = raw(&srv.addr);
    client::greet(&mut s).unwrap();
    let mut h = IHAVEOPT.to_be_bytes().to_vec();
    h.extend_from_slice(&OPT_GO.to_be_bytes());
    h.extend_from_slice(&u32::MAX.to_be_bytes());
    s.write_all(&h).unwrap();
    assert!(closed(&mut s));

    // Malformed GO data, unknown export, unknown option, LIST with data: error replies, session goes on.
    let mut s = raw(&srv.addr);
    client::greet(&mut s).unwrap();
    let mut o = Vec::new();
    option(&mut o, OPT_GO, &[0, 0, 0, 200, 1]);
    s.write_all(&o).unwrap();
    assert_eq!(
        client::read_option_reply(&mut s).unwrap().1,
        REP_ERR_INVALID
    );
    let mut d = 4u32.to_be_bytes().to_vec();
    d.extend_from_slice(b"nope");
    d.extend_from_slice(&0u16.to_be_bytes());
    let mut o = Vec::new();
    option(&mut o, OPT_INFO, &d);
    s.write_all(&o).unwrap();
    assert_eq!(
        client::read_option_reply(&mut s).unwrap().1,
        REP_ERR_UNKNOWN
    );
    let mut o = Vec::new();
    option(&mut o, 4242, b"whatever");
    option(&mut o, OPT_STRUCTURED_REPLY, &[]);
    option(&mut o, OPT_LIST, b"x");
    s.write_all(&o).unwrap();
    assert_eq!(client::read_option_reply(&mut s).unwrap().1, REP_ERR_UNSUP);
    assert_eq!(client::read_option_reply(&mut s).unwrap().1, REP_ERR_UNSUP);
    assert_eq!(
        client::read_option_reply(&mut s).unwrap().1,
        REP_ERR_INVALID
    );
    // LIST, then INFO, then ABORT.
    let mut o = Vec::new();
    option(&mut o, OPT_LIST, &[]);
    s.write_all(&o).unwrap();
    let (_, t, data) = client::read_option_reply(&mut s).unwrap();
    assert_eq!(t, REP_SERVER);
    assert_eq!(&data[4..12], b"flashlab");
    assert_eq!(client::read_option_reply(&mut s).unwrap().1, REP_ACK);
    let mut o = Vec::new();
    option(&mut o, OPT_INFO, &[0, 0, 0, 0, 0, 0]);
    s.write_all(&o).unwrap();
    let mut infos = 0;
    loop {
        let (_, t, _) = client::read_option_reply(&mut s).unwrap();
        if t == REP_ACK {
            break;
        }
        assert_eq!(t, REP_INFO);
        infos += 1;
    }
    assert!(infos >= 1);
    let mut o = Vec::new();
    option(&mut o, OPT_ABORT, &[]);
    s.write_all(&o).unwrap();
    assert_eq!(client::read_option_reply(&mut s).unwrap().1, REP_ACK);
    assert!(closed(&mut s));

    // EXPORT_NAME for an unknown export: hang up; for the default one: transmission.
    let mut s = raw(&srv.addr);
    client::greet(&mut s).unwrap();
    let mut o = Vec::new();
    option(&mut o, OPT_EXPORT_NAME, b"nope");
    s.write_all(&o).unwrap();
    assert!(closed(&mut s));
    let mut s = raw(&srv.addr);
    client::greet(&mut s).unwrap();
    let mut o = Vec::new();
    option(&mut o, OPT_EXPORT_NAME, b"");
    s.write_all(&o).unwrap();
    let mut r = [0u8; 10];
    s.read_exact(&mut r).unwrap();
    assert_eq!(u64::from_be_bytes(r[..8].try_into().unwrap()), 1 << 20);

    // Clients that vanish: mid-greeting, mid-option, mid-request header, mid-write payload.
    for cut in [0usize, 2, 10, 30, 60] {
        let mut s = raw(&srv.addr);
        client::greet(&mut s).unwrap();
        let mut bytes = Vec::new();
        let mut d = 0u32.to_be_bytes().to_vec();
        d.extend_from_slice(&0u16.to_be_bytes());
        option(&mut bytes, OPT_GO, &d);
        let skip = bytes.len();
        bytes.extend_from_slice(&request(0, CMD_WRITE, 1, 0, 4096));
        bytes.extend_from_slice(&[9u8; 100]);
        let _ = skip;
        s.write_all(&bytes[..cut.min(bytes.len())]).unwrap();
        drop(s);
    }
    // Bad request magic in transmission: hang up.
    let mut c = Client::connect(&srv.addr, "").unwrap();
    c.stream.write_all(&[0xabu8; 28]).unwrap();
    assert!(closed(&mut c.stream));
    // Oversized write payload: hang up.
    let mut c = Client::connect(&srv.addr, "").unwrap();
    c.stream
        .write_all(&request(0, CMD_WRITE, 1, 0, u32::MAX))
        .unwrap();
    assert!(closed(&mut c.stream));

    // The good client never noticed.
    assert_eq!(good.write(0, &[1u8; 4096], false).unwrap(), 0);
    assert_eq!(good.flush().unwrap(), 0);
    // And new clients are welcome.
    let mut again = Client::connect(&srv.addr, "").unwrap();
    let mut b = vec![0u8; 4096];
    again.read(0, &mut b).unwrap().unwrap();
    assert_eq!(b, vec![1u8; 4096]);
}

#[test]
fn a_stalled_client_does_not_block_the_others() {
    let srv = start(mem(), false);
    // Sends half a write and then nothing.
    let mut stalled = Client::connect(&srv.addr, "").unwrap();
    stalled
        .stream
        .write_all(&request(0, CMD_WRITE, 1, 0, 8192))
        .unwrap();
    stalled.stream.write_all(&[1u8; 1000]).unwrap();
    let t0 = Instant::now();
    let mut c = Client::connect(&srv.addr, "").unwrap();
    for i in 0..100u64 {
        assert_eq!(c.write(i * 4096, &[2u8; 4096], false).unwrap(), 0);
    }
    assert!(t0.elapsed() < Duration::from_secs(5));
}

/// Wait (up to 5 s) until the server closes `s`; how long it took.
fn closed_within(s: &mut Stream) -> Option<Duration> {
    let t0 = Instant::now();
    s.set_timeout(Some(Duration::from_secs(5))).unwrap();
    let mut b = [0u8; 256];
    loop {
        match s.read(&mut b) {
            Ok(0) => return Some(t0.elapsed()),
            Ok(_) => continue,
            Err(e) if e.kind() == std::io::ErrorKind::ConnectionReset => return Some(t0.elapsed()),
            Err(_) => return None,
        }
    }
}

#[test]
fn timeouts_close_slow_handshakes_stalled_payloads_and_idle_connections() {
    let limits = Limits {
        handshake_timeout: Some(Duration::from_millis(300)),
        stall_timeout: Some(Duration::from_millis(300)),
        idle_timeout: Some(Duration::from_millis(600)),
        ..Limits::default()
    };
    let srv = start_with(
        mem(),
        SessionConfig {
            limits,
            ..SessionConfig::default()
        },
    );
    // A handshake dribbled one byte at a time never finishes.
    let mut slow = raw(&srv.addr);
    slow.write_all(&[0]).unwrap();
    let t = closed_within(&mut slow).expect("a slow handshake was not closed");
    assert!(t < Duration::from_secs(3), "{t:?}");
    // A write whose payload stops arriving.
    let mut stalled = Client::connect(&srv.addr, "").unwrap();
    stalled
        .stream
        .write_all(&request(0, CMD_WRITE, 1, 0, 8192))
        .unwrap();
    stalled.stream.write_all(&[1u8; 1000]).unwrap();
    assert!(
        closed_within(&mut stalled.stream).is_some(),
        "stalled payload"
    );
    // No request at all after the handshake.
    let mut idle = Client::connect(&srv.addr, "").unwrap();
    let t = closed_within(&mut idle.stream).expect("an idle connection was not closed");
    assert!(t >= Duration::from_millis(500), "closed too early: {t:?}");
    // A busy client is not idle.
    let mut busy = Client::connect(&srv.addr, "").unwrap();
    for i in 0..20u64 {
        assert_eq!(busy.write(i * 4096, &[2u8; 4096], false).unwrap(), 0);
        thread::sleep(Duration::from_millis(50));
    }
}

#[test]
fn the_connection_cap_evicts_handshakes_then_idle_connections_before_refusing() {
    let srv = start_with(
        mem(),
        SessionConfig {
            limits: Limits {
                max_connections: 4,
                ..Limits::default()
            },
            ..SessionConfig::default()
        },
    );
    // Four silent connections fill the server; a real client still gets in
    // (the oldest silent one makes room).
    // Each reads the server's greeting (18 bytes), so the server has
    // accepted it, in this order, before the next one connects: which is
    // oldest does not depend on how busy the machine is.
    let mut silent: Vec<Stream> = (0..4)
        .map(|_| {
            let mut s = raw(&srv.addr);
            let mut greeting = [0u8; 18];
            s.read_exact(&mut greeting).unwrap();
            s
        })
        .collect();
    let mut c = Client::connect(&srv.addr, "").unwrap();
    assert_eq!(c.write(0, &[1u8; 4096], false).unwrap(), 0);
    assert!(
        closed_within(&mut silent[0]).is_some(),
        "the oldest was evicted"
    );
    // Four clients in transmission, idle: a fifth gets in at once, and the
    // one idle the longest makes room.
    let mut others: Vec<Client> = (0..3)
        .map(|_| Client::connect(&srv.addr, "").unwrap())
        .collect();
    // The server books `c`'s reply as sent (and `c` as idle) just after the
    // client has read it; on a loaded machine (debug build, parallel tests)
    // that bookkeeping thread can wait hundreds of milliseconds for a core,
    // so this wait is generous rather than tight.
    thread::sleep(Duration::from_millis(1500));
    let mut fifth = Client::connect(&srv.addr, "").expect("a fifth connection, in at once");
    assert_eq!(fifth.flush().unwrap(), 0);
    assert!(
        closed_within(&mut c.stream).is_some(),
        "the connection idle the longest was evicted"
    );
    // Every slot busy (a write whose payload is still arriving): a newcomer
    // is refused, and nobody is evicted.
    for o in others.iter_mut().chain(std::iter::once(&mut fifth)) {
        o.stream
            .write_all(&request(0, CMD_WRITE, 9, 0, 8192))
            .unwrap();
    }
    // Long enough for the sessions to have read the four request headers.
    thread::sleep(Duration::from_millis(1000));
    assert!(
        Client::connect(&srv.addr, "").is_err(),
        "a newcomer while every slot has a request in progress"
    );
    // Finishing one payload frees that slot for eviction again.
    fifth.stream.write_all(&[1u8; 8192]).unwrap();
    let mut reply = [0u8; 16];
    fifth.stream.read_exact(&mut reply).unwrap();
    thread::sleep(Duration::from_millis(1000));
    let mut again = Client::connect(&srv.addr, "").unwrap();
    assert_eq!(again.flush().unwrap(), 0);
}

#[test]
fn reads_are_not_held_up_by_writers_holding_the_write_buffers() {
    // 32 MiB of buffers: 24 MiB for write payloads, 8 MiB for read replies.
    let srv = start_with(
        Arc::new(MemBackend::new(64 << 20)),
        SessionConfig {
            limits: Limits {
                buffer_bytes: 32 << 20,
                ..Limits::default()
            },
            ..SessionConfig::default()
        },
    );
    // Nine writers each declare a 32 MiB write and send nothing: the first
    // holds the whole write pool, the others queue behind it until the
    // stall timeout (30 s) ends them.
    let mut writers: Vec<Client> = (0..9)
        .map(|_| Client::connect(&srv.addr, "").unwrap())
        .collect();
    for w in writers.iter_mut() {
        w.stream
            .write_all(&request(0, CMD_WRITE, 1, 0, MAX_PAYLOAD))
            .unwrap();
    }
    thread::sleep(Duration::from_millis(200));
    let mut reader = Client::connect(&srv.addr, "").unwrap();
    reader
        .stream
        .set_timeout(Some(Duration::from_secs(5)))
        .unwrap();
    let mut buf = vec![0u8; 1 << 20];
    for i in 0..20u64 {
        let t0 = Instant::now();
        reader.read(i << 20, &mut buf).unwrap().unwrap();
        assert!(
            t0.elapsed() < Duration::from_secs(1),
            "read {i} waited {:?} behind the writers",
            t0.elapsed()
        );
    }
}

#[test]
fn several_connections_in_parallel_with_pipelining() {
    let srv = start(mem(), false);
    let threads: Vec<_> = (0..4u64)
        .map(|t| {
            let addr = srv.addr.clone();
            thread::spawn(move || {
                let mut c = Client::connect(&addr, "").unwrap();
                // 16 requests in flight, then collect replies in any order.
                for round in 0..20u64 {
                    let mut cookies = Vec::new();
                    for i in 0..16u64 {
                        let off = (t * 64 + i) * 4096;
                        let data = vec![(t * 31 + round + i) as u8; 4096];
                        cookies.push(c.send(0, CMD_WRITE, off, 4096, &data).unwrap());
                    }
                    let mut got: Vec<u64> = (0..16)
                        .map(|_| {
                            let (ck, e) = c.recv_reply().unwrap();
                            assert_eq!(e, 0);
                            ck
                        })
                        .collect();
                    got.sort();
                    cookies.sort();
                    assert_eq!(got, cookies);
                }
                let mut b = vec![0u8; 4096];
                for i in 0..16u64 {
                    c.read((t * 64 + i) * 4096, &mut b).unwrap().unwrap();
                    assert_eq!(b[0], (t * 31 + 19 + i) as u8);
                }
            })
        })
        .collect();
    for t in threads {
        t.join().unwrap();
    }
}

#[test]
fn pacing_delays_replies_by_simulated_latency() {
    let dir = tempfile::tempdir().unwrap();
    // ssd-m without its cache: a 4 KiB write takes about 1 ms of simulated time.
    let store = Store::open(&StoreOptions {
        dir: dir.path().join("d"),
        spec: Some("ssd-m,capacity=1GiB,cache=off".into()),
        seed: 1,
        checkpoint_records: 0,
        trace: None,
        faults: None,
    })
    .unwrap();
    let store: Arc<dyn Backend> = Arc::new(store);
    let time = |pace: bool| {
        let srv = start(store.clone(), pace);
        let mut c = Client::connect(&srv.addr, "").unwrap();
        let t0 = Instant::now();
        for i in 0..50u64 {
            assert_eq!(c.write(i * 4096 * 64, &[3u8; 4096], false).unwrap(), 0);
        }
        t0.elapsed()
    };
    let fast = time(false);
    let paced = time(true);
    assert!(
        paced >= Duration::from_millis(40),
        "50 paced writes of ~1 ms took {paced:?}"
    );
    assert!(paced > fast, "paced {paced:?} vs unpaced {fast:?}");
}

/// Fuzz-style: random and mutated sessions through the whole state machine,
/// for a fixed time (FLASHLAB_FUZZ_SECS, default 3). cargo-fuzz runs the same
/// entry point (`fuzz/`).
#[test]
fn fuzz_sessions_never_panic() {
    let secs: u64 = std::env::var("FLASHLAB_FUZZ_SECS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(3);
    // A valid session to mutate: flags, GO, write, read, flush, trim, zero, disc.
    let mut seed = Vec::new();
    seed.extend_from_slice(&(FLAG_C_FIXED_NEWSTYLE | FLAG_C_NO_ZEROES).to_be_bytes());
    option(&mut seed, OPT_LIST, &[]);
    option(&mut seed, OPT_GO, &[0, 0, 0, 0, 0, 1, 0, 3]);
    seed.extend_from_slice(&request(0, CMD_WRITE, 1, 512, 1024));
    seed.extend_from_slice(&[7u8; 1024]);
    seed.extend_from_slice(&request(0, CMD_READ, 2, 0, 4096));
    seed.extend_from_slice(&request(CMD_FLAG_FUA, CMD_FLUSH, 3, 0, 0));
    seed.extend_from_slice(&request(0, CMD_TRIM, 4, 4096, 4096));
    seed.extend_from_slice(&request(CMD_FLAG_NO_HOLE, CMD_WRITE_ZEROES, 5, 0, 8192));
    seed.extend_from_slice(&request(0, CMD_DISC, 6, 0, 0));
    flashlab_nbd::fuzz_session(&seed);
    let mut x: u64 = 0x1234_5678;
    let mut rnd = || {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        x
    };
    let t0 = Instant::now();
    let mut runs = 0u64;
    while t0.elapsed() < Duration::from_secs(secs) {
        let mut input = seed.clone();
        match rnd() % 4 {
            0 => {
                let n = (rnd() % 300) as usize;
                input = (0..n).map(|_| rnd() as u8).collect();
                if rnd() % 2 == 0 {
                    input.splice(0..0, seed[..22.min(seed.len())].iter().copied());
                }
            }
            _ => {
                for _ in 0..1 + rnd() % 8 {
                    let i = (rnd() as usize) % input.len();
                    match rnd() % 4 {
                        0 => input[i] = rnd() as u8,
                        1 => input[i] ^= 1 << (rnd() % 8),
                        2 => input.truncate(i),
                        _ => {
                            // an interesting value in a 4-byte field
                            let v = [
                                0u32,
                                1,
                                511,
                                512,
                                4096,
                                0xffff_ffff,
                                0x8000_0000,
                                MAX_PAYLOAD + 1,
                            ][(rnd() % 8) as usize];
                            let i = i.min(input.len().saturating_sub(4));
                            if input.len() >= 4 {
                                input[i..i + 4].copy_from_slice(&v.to_be_bytes());
                            }
                        }
                    }
                    if input.is_empty() {
                        break;
                    }
                }
            }
        }
        flashlab_nbd::fuzz_session(&input);
        runs += 1;
    }
    eprintln!("fuzz: {runs} sessions in {secs} s");
    assert!(runs > 100);
}
