//! Engine tests on files (disk-backed, since tmpfs has no real O_DIRECT) and,
//! as root, on a blank loop device.

mod common;

use std::collections::HashMap;
use std::fs;
use std::path::Path;

use flashlab_device::{Completion, Device, DeviceError, DeviceKind, IoRequest, Mode};
use flashlab_realdev::{
    buffers::read_stamp, open, open_sync, open_uring, probe, Engine, OpenErrorKind, OpenOptions,
    SyncEngine, UringEngine,
};

const MIB: u64 = 1 << 20;

#[allow(clippy::large_enum_variant)]
enum Eng {
    S(SyncEngine),
    U(UringEngine),
}

impl Eng {
    fn open(opts: &OpenOptions, which: Engine) -> Eng {
        match which {
            Engine::Sync => Eng::S(open_sync(opts).unwrap().0),
            _ => Eng::U(open_uring(opts).unwrap().0),
        }
    }
    fn dev(&mut self) -> &mut dyn Device {
        match self {
            Eng::S(e) => e,
            Eng::U(e) => e,
        }
    }
    fn data(&self, tag: u64) -> Option<Vec<u8>> {
        match self {
            Eng::S(e) => e.last_data(tag).map(<[u8]>::to_vec),
            Eng::U(e) => e.last_data(tag).map(<[u8]>::to_vec),
        }
    }
}

/// Run `reqs` keeping the queue full; `check` sees each completion before the
/// next submission can reuse its buffer.
fn drive(
    e: &mut Eng,
    reqs: &[IoRequest],
    mut check: impl FnMut(&Eng, &Completion),
) -> Vec<Completion> {
    let qd = e.dev().max_outstanding();
    let (mut next, mut outstanding) = (0, 0);
    let mut all = Vec::new();
    let mut out = Vec::new();
    while next < reqs.len() || outstanding > 0 {
        while outstanding < qd && next < reqs.len() {
            e.dev().submit(reqs[next]).unwrap();
            next += 1;
            outstanding += 1;
        }
        out.clear();
        e.dev().poll(None, &mut out).unwrap();
        assert!(
            !out.is_empty(),
            "poll(None) with IO outstanding returned nothing"
        );
        for c in &out {
            check(e, c);
        }
        outstanding -= out.len();
        all.extend_from_slice(&out);
    }
    all
}

fn opts(path: &Path, write: bool, qd: usize, max_io: u32) -> OpenOptions {
    OpenOptions {
        write,
        max_outstanding: qd,
        max_io_bytes: max_io,
        ..OpenOptions::new(path)
    }
}

/// A pseudo-random permutation of 0..n (no rand dependency needed).
fn shuffled(n: u64, seed: u64) -> Vec<u64> {
    let mut v: Vec<u64> = (0..n).collect();
    let mut x = seed | 1;
    for i in (1..v.len()).rev() {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        v.swap(i, (x % (i as u64 + 1)) as usize);
    }
    v
}

fn create(dir: &Path, name: &str, size: u64) -> std::path::PathBuf {
    let p = dir.join(name);
    let o = OpenOptions {
        create_size_bytes: Some(size),
        ..opts(&p, true, 1, 65536)
    };
    let opened = open(&o).unwrap();
    assert!(
        opened.warnings.iter().any(|w| w.contains("created")),
        "{:?}",
        opened.warnings
    );
    p
}

/// Write with one engine, check where the data landed, read back with another.
fn roundtrip(path: &Path, writer: Engine, reader: Engine, size: u64) {
    let wqd = if writer == Engine::Sync { 1 } else { 16 };
    let rqd = if reader == Engine::Sync { 1 } else { 32 };
    roundtrip_qd(path, (writer, wqd), (reader, rqd), size);
}

fn roundtrip_qd(
    path: &Path,
    (writer, wqd): (Engine, usize),
    (reader, rqd): (Engine, usize),
    size: u64,
) {
    let wsize = 65536u64;
    let mut w = Eng::open(&opts(path, true, wqd, wsize as u32), writer);
    let reqs: Vec<IoRequest> = shuffled(size / wsize, 7)
        .into_iter()
        .enumerate()
        .map(|(i, b)| IoRequest {
            tag: 10_000 + i as u64,
            offset_bytes: b * wsize,
            size_bytes: wsize as u32,
            mode: Mode::Write,
        })
        .collect();
    let by_tag: HashMap<u64, IoRequest> = reqs.iter().map(|r| (r.tag, *r)).collect();
    let done = drive(&mut w, &reqs, |e, c| {
        assert_eq!(c.errno, None);
        let sent = e.data(c.tag).expect("write buffer of a just-completed IO");
        let r = by_tag[&c.tag];
        assert_eq!(read_stamp(&sent).unwrap().0, r.offset_bytes);
    });
    assert_eq!(done.len(), reqs.len());
    w.dev().flush().unwrap();
    drop(w);

    // Every 4 KiB block carries the stamp of its own offset.
    let content = fs::read(path).unwrap();
    for (i, block) in content[..size as usize].chunks(4096).enumerate() {
        let (off, seq) = read_stamp(block).unwrap();
        assert_eq!(
            off,
            i as u64 * 4096,
            "block {i} holds data meant for offset {off}"
        );
        assert!(seq > 0);
    }

    let rsize = 32768u64;
    let mut r = Eng::open(&opts(path, false, rqd, rsize as u32), reader);
    let reqs: Vec<IoRequest> = shuffled(size / rsize, 11)
        .into_iter()
        .enumerate()
        .map(|(i, b)| IoRequest {
            tag: 500 + i as u64,
            offset_bytes: b * rsize,
            size_bytes: rsize as u32,
            mode: Mode::Read,
        })
        .collect();
    let by_tag: HashMap<u64, IoRequest> = reqs.iter().map(|r| (r.tag, *r)).collect();
    let mut checked = 0;
    drive(&mut r, &reqs, |e, c| {
        assert_eq!(c.errno, None);
        let got = e.data(c.tag).expect("read buffer of a just-completed IO");
        let q = by_tag[&c.tag];
        let want = &content[q.offset_bytes as usize..(q.offset_bytes + rsize) as usize];
        assert!(
            got == want,
            "read of tag {} at {} differs from the file",
            c.tag,
            q.offset_bytes
        );
        checked += 1;
    });
    assert_eq!(checked, reqs.len());
}

#[test]
fn file_roundtrip_across_engines() {
    let dir = common::disk_tempdir();
    let p = create(dir.path(), "rt.img", 4 * MIB);
    let content = fs::read(&p).unwrap();
    assert_eq!(content.len() as u64, 4 * MIB);
    assert!(
        content.iter().filter(|&&b| b == 0).count() < content.len() / 64,
        "created file must not be zeros"
    );
    for (w, r) in [
        (Engine::Sync, Engine::IoUring),
        (Engine::IoUring, Engine::Sync),
        (Engine::IoUring, Engine::IoUring),
    ] {
        roundtrip(&p, w, r, 4 * MIB);
    }
    // io_uring at QD1 (flashlab's default there) takes its own lone-IO path.
    roundtrip_qd(&p, (Engine::IoUring, 1), (Engine::IoUring, 1), 4 * MIB);
}

#[test]
fn qd32_completions_return_every_tag_once() {
    let dir = common::disk_tempdir();
    let p = create(dir.path(), "tags.img", 4 * MIB);
    let mut e = Eng::open(&opts(&p, false, 32, 4096), Engine::IoUring);
    let n = 2000u64;
    let blocks = 4 * MIB / 4096;
    let reqs: Vec<IoRequest> = (0..n)
        .map(|i| IoRequest {
            tag: i.wrapping_mul(0x9E37_79B9_7F4A_7C15),
            offset_bytes: (i * 7919 % blocks) * 4096,
            size_bytes: 4096,
            mode: Mode::Read,
        })
        .collect();
    let done = drive(&mut e, &reqs, |_, c| {
        assert_eq!(c.errno, None);
        assert!(c.submit_ns <= c.complete_ns);
    });
    let mut tags: Vec<u64> = done.iter().map(|c| c.tag).collect();
    let mut want: Vec<u64> = reqs.iter().map(|r| r.tag).collect();
    tags.sort_unstable();
    want.sort_unstable();
    assert_eq!(tags, want);
    let mean = done.iter().map(|c| c.latency_ns()).sum::<u64>() / n;
    eprintln!("qd32 4K reads on a file: mean latency {mean} ns");
}

#[test]
fn poll_with_nothing_outstanding() {
    let dir = common::disk_tempdir();
    let p = create(dir.path(), "poll.img", MIB);
    for which in [Engine::Sync, Engine::IoUring] {
        let mut e = Eng::open(&opts(&p, false, 4, 4096), which);
        let d = e.dev();
        let mut out = Vec::new();
        let t0 = d.now_ns();
        d.poll(None, &mut out).unwrap();
        assert!(out.is_empty());
        assert!(
            d.now_ns() - t0 < 50_000_000,
            "poll(None) with nothing outstanding must return at once"
        );
        for wait in [20_000u64, 300_000, 2_000_000] {
            let deadline = d.now_ns() + wait;
            d.poll(Some(deadline), &mut out).unwrap();
            let now = d.now_ns();
            assert!(out.is_empty());
            assert!(now >= deadline);
            eprintln!(
                "{which:?} poll deadline {wait} ns: overshoot {} ns",
                now - deadline
            );
        }
    }
}

#[test]
fn poll_returns_at_first_completion_before_deadline() {
    let dir = common::disk_tempdir();
    let p = create(dir.path(), "early.img", MIB);
    for which in [Engine::Sync, Engine::IoUring] {
        let mut e = Eng::open(&opts(&p, false, 4, 4096), which);
        let d = e.dev();
        d.submit(IoRequest {
            tag: 1,
            offset_bytes: 0,
            size_bytes: 4096,
            mode: Mode::Read,
        })
        .unwrap();
        let mut out = Vec::new();
        let deadline = d.now_ns() + 10_000_000_000;
        d.poll(Some(deadline), &mut out).unwrap();
        assert_eq!(out.len(), 1);
        assert!(d.now_ns() < deadline - 9_000_000_000);
    }
}

#[test]
fn idle_until_waits_at_least_the_requested_time() {
    let dir = common::disk_tempdir();
    let p = create(dir.path(), "idle.img", MIB);
    for which in [Engine::Sync, Engine::IoUring] {
        let mut e = Eng::open(&opts(&p, false, 4, 4096), which);
        let d = e.dev();
        for wait in [5_000u64, 50_000, 150_000, 1_000_000, 5_000_000] {
            let t0 = d.now_ns();
            d.idle_until(t0 + wait).unwrap();
            let t1 = d.now_ns();
            assert!(t1 - t0 >= wait);
            eprintln!("{which:?} idle {wait} ns: overshoot {} ns", t1 - t0 - wait);
        }
    }
}

#[test]
fn uring_reaps_while_idle() {
    let dir = common::disk_tempdir();
    let p = create(dir.path(), "idlereap.img", MIB);
    let mut e = Eng::open(&opts(&p, false, 4, 4096), Engine::IoUring);
    let d = e.dev();
    d.submit(IoRequest {
        tag: 9,
        offset_bytes: 4096,
        size_bytes: 4096,
        mode: Mode::Read,
    })
    .unwrap();
    // Issue it, without waiting: a deadline in the past.
    let mut out = Vec::new();
    d.poll(Some(0), &mut out).unwrap();
    let t_idle = d.now_ns() + 100_000_000;
    d.idle_until(t_idle).unwrap();
    if out.is_empty() {
        d.poll(None, &mut out).unwrap();
    }
    assert_eq!(out.len(), 1);
    assert_eq!(out[0].tag, 9);
    assert!(
        out[0].complete_ns < t_idle,
        "a completion during a pause keeps its own time"
    );
}

#[test]
fn invalid_requests_are_rejected() {
    let dir = common::disk_tempdir();
    let p = create(dir.path(), "invalid.img", MIB);
    let size = MIB;
    for which in [Engine::Sync, Engine::IoUring] {
        let mut e = Eng::open(&opts(&p, true, 2, 65536), which);
        let d = e.dev();
        let bad = [
            (size, 4096, Mode::Read),
            (size - 4096, 8192, Mode::Write),
            (u64::MAX - 100, 4096, Mode::Read),
            (100, 4096, Mode::Read),
            (4096, 1000, Mode::Write),
            (0, 0, Mode::Read),
            (0, 131072, Mode::Read),
            (100, 4096, Mode::Trim),
        ];
        for (off, sz, mode) in bad {
            let r = d.submit(IoRequest {
                tag: 1,
                offset_bytes: off,
                size_bytes: sz,
                mode,
            });
            assert!(
                matches!(r, Err(DeviceError::InvalidRequest(_))),
                "{which:?} {mode} {sz}@{off}: {r:?}"
            );
        }
        let ok = IoRequest {
            tag: 1,
            offset_bytes: 0,
            size_bytes: 4096,
            mode: Mode::Read,
        };
        d.submit(ok).unwrap();
        d.submit(ok).unwrap();
        assert!(
            matches!(d.submit(ok), Err(DeviceError::InvalidRequest(_))),
            "more than max_outstanding"
        );
        let mut out = Vec::new();
        while out.len() < 2 {
            d.poll(None, &mut out).unwrap();
        }
    }
    // Writes on a device opened read-only.
    let (mut ro, _) = open_sync(&opts(&p, false, 1, 4096)).unwrap();
    let r = ro.submit(IoRequest {
        tag: 1,
        offset_bytes: 0,
        size_bytes: 4096,
        mode: Mode::Write,
    });
    assert!(matches!(r, Err(DeviceError::InvalidRequest(_))));
}

#[test]
fn trim_punches_a_hole_in_a_file() {
    let dir = common::disk_tempdir();
    let p = create(dir.path(), "trim.img", MIB);
    for (i, which) in [Engine::Sync, Engine::IoUring].into_iter().enumerate() {
        let mut e = Eng::open(&opts(&p, true, 2, 65536), which);
        let off = i as u64 * 65536;
        let done = drive(
            &mut e,
            &[IoRequest {
                tag: 3,
                offset_bytes: off,
                size_bytes: 65536,
                mode: Mode::Trim,
            }],
            |_, c| {
                assert_eq!(c.errno, None);
                assert!(c.submit_ns <= c.complete_ns);
            },
        );
        assert_eq!(done.len(), 1);
        drop(e);
        let content = fs::read(&p).unwrap();
        assert!(
            content[off as usize..(off + 65536) as usize]
                .iter()
                .all(|&b| b == 0),
            "{which:?}"
        );
        assert!(content[(off + 65536) as usize..].iter().any(|&b| b != 0));
    }
}

#[test]
fn user_errors_are_one_line_with_a_fix() {
    let dir = common::disk_tempdir();
    let missing = dir.path().join("missing.img");
    let e = open(&opts(&missing, false, 1, 4096)).err().unwrap();
    assert_eq!(e.kind(), OpenErrorKind::NotFound);
    assert_eq!(e.kind().exit_code(), 2);
    assert!(e.to_string().contains("--size"), "{e}");
    assert_eq!(
        probe(&missing).err().unwrap().kind(),
        OpenErrorKind::NotFound
    );

    let o = OpenOptions {
        create_size_bytes: Some(MIB),
        ..opts(Path::new("/dev/flashlab-no-such-disk"), true, 1, 4096)
    };
    let e = open(&o).err().unwrap();
    assert_eq!(e.kind(), OpenErrorKind::NotFound);
    assert!(!Path::new("/dev/flashlab-no-such-disk").exists());

    let small = dir.path().join("small.img");
    fs::write(&small, vec![1u8; 8192]).unwrap();
    let o = OpenOptions {
        create_size_bytes: Some(MIB),
        ..opts(&small, true, 1, 4096)
    };
    let e = open(&o).err().unwrap();
    assert_eq!(e.kind(), OpenErrorKind::InvalidInput);
    assert!(e.to_string().contains("smaller than"), "{e}");
    assert_eq!(
        fs::metadata(&small).unwrap().len(),
        8192,
        "an existing file is never grown"
    );

    for write in [false, true] {
        let e = open(&opts(dir.path(), write, 1, 4096)).err().unwrap();
        assert_eq!(e.kind(), OpenErrorKind::InvalidInput, "{e}");
        assert!(
            e.to_string()
                .contains("neither a regular file nor a block device"),
            "{e}"
        );
    }
    // A FIFO is refused at once: opening it must not wait for a writer.
    let fifo = dir.path().join("fifo");
    let c = std::ffi::CString::new(fifo.to_str().unwrap()).unwrap();
    // SAFETY: c is a NUL-terminated path.
    assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
    for write in [false, true] {
        let e = open(&opts(&fifo, write, 1, 4096)).err().unwrap();
        assert_eq!(e.kind(), OpenErrorKind::InvalidInput, "{e}");
    }

    let e = open(&opts(&small, false, 0, 4096)).err().unwrap();
    assert_eq!(e.kind(), OpenErrorKind::InvalidInput);
    let e = open(&opts(&small, false, 1, 100)).err().unwrap();
    assert_eq!(e.kind(), OpenErrorKind::InvalidInput);

    let nodir = dir.path().join("no/such/dir/x.img");
    let o = OpenOptions {
        create_size_bytes: Some(MIB),
        ..opts(&nodir, true, 1, 4096)
    };
    assert_eq!(open(&o).err().unwrap().kind(), OpenErrorKind::InvalidInput);

    let e = open(&opts(&missing, false, 1, 4096)).err().unwrap();
    assert!(!e.to_string().contains('\n'));
}

#[test]
fn buffered_mode_works_on_tmpfs() {
    let p = Path::new("/dev/shm").join(common::unique("buffered"));
    struct Rm<'a>(&'a Path);
    impl Drop for Rm<'_> {
        fn drop(&mut self) {
            let _ = fs::remove_file(self.0);
        }
    }
    let _rm = Rm(&p);
    let o = OpenOptions {
        direct: false,
        create_size_bytes: Some(MIB),
        ..opts(&p, true, 1, 4096)
    };
    let opened = open(&o).unwrap();
    assert_eq!(
        opened
            .device
            .info()
            .identity
            .get("o_direct")
            .map(String::as_str),
        Some("false")
    );
    drop(opened);
    let mut e = Eng::open(
        &OpenOptions {
            direct: false,
            ..opts(&p, true, 1, 4096)
        },
        Engine::Sync,
    );
    let done = drive(
        &mut e,
        &[IoRequest {
            tag: 1,
            offset_bytes: 8192,
            size_bytes: 4096,
            mode: Mode::Write,
        }],
        |_, c| assert_eq!(c.errno, None),
    );
    assert_eq!(done.len(), 1);
    // O_DIRECT on tmpfs: older kernels refuse it (with the message naming --buffered),
    // newer ones accept it, and the identity says tmpfs (every run then warns
    // that it measures memory: flashlab_results::warnings::target_warning).
    match open(&opts(&p, false, 1, 4096)) {
        Ok(o) => assert_eq!(
            o.device.info().identity.get("fs_type").map(String::as_str),
            Some("tmpfs"),
            "{:?}",
            o.device.info().identity
        ),
        Err(e) => {
            assert_eq!(e.kind(), OpenErrorKind::Unsupported);
            assert!(e.to_string().contains("--buffered"), "{e}");
        }
    }
}

#[test]
fn probe_and_identity_of_a_file() {
    let dir = common::disk_tempdir();
    let p = create(dir.path(), "probe.img", MIB);
    let info = probe(&p).unwrap();
    assert_eq!(info.kind, DeviceKind::File);
    assert_eq!(info.size_bytes, MIB);
    assert!(info.logical_block_bytes >= 512 && info.logical_block_bytes.is_power_of_two());
    for key in ["fs_type", "kernel", "backing_dev", "o_direct_supported"] {
        assert!(
            info.identity.contains_key(key),
            "missing {key}: {:?}",
            info.identity
        );
    }
    eprintln!("file identity: {:?}", info.identity);
    for (qd, want) in [(1, "io_uring"), (8, "io_uring")] {
        let o = open(&opts(&p, false, qd, 4096)).unwrap();
        let id = &o.device.info().identity;
        assert_eq!(id.get("engine").map(String::as_str), Some(want));
        assert_eq!(id.get("o_direct").map(String::as_str), Some("true"));
    }
    let forced = open(&OpenOptions {
        engine: Engine::IoUring,
        ..opts(&p, false, 1, 4096)
    })
    .unwrap();
    assert_eq!(
        forced
            .device
            .info()
            .identity
            .get("engine")
            .map(String::as_str),
        Some("io_uring")
    );
}

#[ignore = "needs root (loop devices, mounts): run as root with `cargo test -- --include-ignored`, as CI does"]
#[test]
fn loop_device_roundtrip_and_discard() {
    if !common::root_tests_possible("loop_device_roundtrip_and_discard") {
        return;
    }
    let lo = common::LoopDev::new("engines", 16 * MIB, false);
    let info = probe(lo.path()).unwrap();
    assert_eq!(info.kind, DeviceKind::BlockDevice);
    assert_eq!(info.size_bytes, 16 * MIB);
    eprintln!("loop identity: {:?}", info.identity);
    assert!(info.identity.contains_key("loop_backing_file"));
    for (w, r) in [
        (Engine::IoUring, Engine::Sync),
        (Engine::Sync, Engine::IoUring),
    ] {
        roundtrip_dev(lo.path(), w, r);
    }
    // Dropping an engine releases the exclusive claim at once (a ring's registered
    // file would otherwise keep it until a kernel worker closes the ring).
    for which in [Engine::IoUring, Engine::Sync] {
        let e = Eng::open(&opts(lo.path(), true, 8, 4096), which);
        drop(e);
        use std::os::unix::fs::OpenOptionsExt;
        let f = fs::OpenOptions::new()
            .read(true)
            .custom_flags(libc::O_EXCL)
            .open(lo.path());
        assert!(f.is_ok(), "{which:?}: claim still held after drop: {f:?}");
    }
    for which in [Engine::Sync, Engine::IoUring] {
        let mut e = Eng::open(&opts(lo.path(), true, 2, 65536), which);
        let done = drive(
            &mut e,
            &[IoRequest {
                tag: 4,
                offset_bytes: MIB,
                size_bytes: MIB as u32,
                mode: Mode::Trim,
            }],
            |_, c| assert_eq!(c.errno, None),
        );
        assert_eq!(done.len(), 1);
        drop(e);
        let mut e = Eng::open(&opts(lo.path(), false, 1, 65536), Engine::Sync);
        drive(
            &mut e,
            &[IoRequest {
                tag: 5,
                offset_bytes: MIB,
                size_bytes: 65536,
                mode: Mode::Read,
            }],
            |e, c| {
                assert_eq!(c.errno, None);
                assert!(
                    e.data(5).unwrap().iter().all(|&b| b == 0),
                    "discarded range of a loop over tmpfs reads zeros"
                );
            },
        );
    }
}

fn roundtrip_dev(dev: &Path, writer: Engine, reader: Engine) {
    let size = 16 * MIB;
    let wqd = if writer == Engine::Sync { 1 } else { 8 };
    let mut w = Eng::open(&opts(dev, true, wqd, 131072), writer);
    let reqs: Vec<IoRequest> = shuffled(size / 131072, 3)
        .into_iter()
        .map(|b| IoRequest {
            tag: b,
            offset_bytes: b * 131072,
            size_bytes: 131072,
            mode: Mode::Write,
        })
        .collect();
    drive(&mut w, &reqs, |_, c| assert_eq!(c.errno, None));
    w.dev().flush().unwrap();
    drop(w);
    let rqd = if reader == Engine::Sync { 1 } else { 16 };
    let mut r = Eng::open(&opts(dev, false, rqd, 4096), reader);
    let reqs: Vec<IoRequest> = shuffled(size / 4096, 5)
        .into_iter()
        .map(|b| IoRequest {
            tag: b,
            offset_bytes: b * 4096,
            size_bytes: 4096,
            mode: Mode::Read,
        })
        .collect();
    drive(&mut r, &reqs, |e, c| {
        assert_eq!(c.errno, None);
        let got = e.data(c.tag).unwrap();
        assert_eq!(
            read_stamp(&got).unwrap().0,
            c.tag * 4096,
            "block {} holds another block's data",
            c.tag
        );
    });
}

#[ignore = "needs root (loop devices, mounts): run as root with `cargo test -- --include-ignored`, as CI does"]
#[test]
fn write_cache_switch_is_refused_with_the_reason() {
    // A file has no cache of its own to switch.
    let dir = common::disk_tempdir();
    let p = create(dir.path(), "wc.img", MIB);
    let mut dev = open(&opts(&p, true, 1, 4096)).unwrap().device;
    let err = dev.set_write_cache(false).unwrap_err().to_string();
    assert!(err.contains("is a file"), "{err}");
    // A loop device has none either: hdparm fails, and the reason is passed on.
    if !common::root_tests_possible("write_cache_switch_is_refused_with_the_reason") {
        return;
    }
    let lo = common::LoopDev::new("wcache", 16 * MIB, false);
    let mut dev = open(&opts(lo.path(), true, 1, 4096)).unwrap().device;
    let err = dev.set_write_cache(false).unwrap_err().to_string();
    assert!(err.contains("hdparm"), "{err}");
}
