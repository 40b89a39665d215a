//! Logical tracing follows a process tree and its files: a parent process
//! (started before tracing, holding an fd it opened then) forks two writers
//! after tracing starts; each pwrites, seeks and writes, fdatasyncs, preads
//! and fsyncs its own file in an ext4 mount on a loop device, and one also
//! writes through the fd inherited from the parent. The logical trace holds
//! exactly those requests (offsets, sizes, files), nothing else; the
//! physical trace of the same run writes every block the files occupy.
//! Root only.
//!
//! The processes are this test binary re-run in a role
//! (`FLASHLAB_IOTRACE_ROLE`), through the `role` test below.

mod common;

use std::collections::BTreeMap;
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Duration;

use common::{sh, Loop, Mount};
use flashlab_iotrace::{start, LogicalSpec, PhysicalSpec, TraceSpec};
use flashlab_trace::{parse_file_trace, FileKind, Format, TraceOp};

const ROLE: &str = "FLASHLAB_IOTRACE_ROLE";

fn cstr(p: &Path) -> std::ffi::CString {
    std::ffi::CString::new(p.as_os_str().as_bytes()).unwrap()
}

fn check(rc: isize, what: &str) -> usize {
    assert!(rc >= 0, "{what}: {}", std::io::Error::last_os_error());
    rc as usize
}

/// What a writer does to its file (and what the trace must show).
fn writer(path: &Path, inherited_fd: Option<i32>) {
    let buf = vec![0x5au8; 8192];
    // SAFETY: plain syscalls on a valid path and buffer.
    unsafe {
        let fd = libc::open(
            cstr(path).as_ptr(),
            libc::O_CREAT | libc::O_RDWR | libc::O_CLOEXEC,
            0o644,
        );
        check(fd as isize, "open");
        for i in 0..8i64 {
            check(
                libc::pwrite(fd, buf.as_ptr().cast(), 8192, (7 - i) * 8192),
                "pwrite",
            );
        }
        check(libc::lseek(fd, 65536, libc::SEEK_SET) as isize, "lseek");
        check(libc::write(fd, buf.as_ptr().cast(), 4096), "write");
        check(libc::write(fd, buf.as_ptr().cast(), 4096), "write");
        check(libc::fdatasync(fd) as isize, "fdatasync");
        let mut rbuf = vec![0u8; 8192];
        check(libc::pread(fd, rbuf.as_mut_ptr().cast(), 8192, 0), "pread");
        check(libc::fsync(fd) as isize, "fsync");
        // Keep the file open a while, as a DBMS keeps its files: a path is
        // read from /proc after the openat event, and an fd closed before
        // the reader gets there cannot be named (its requests are counted
        // as unresolved, never misattributed: the loader's reads below
        // show that case). A loaded machine can delay the reader by tens
        // of milliseconds.
        std::thread::sleep(std::time::Duration::from_millis(500));
        check(libc::close(fd) as isize, "close");
        if let Some(fd) = inherited_fd {
            check(
                libc::pwrite(fd, buf.as_ptr().cast(), 4096, 4096),
                "pwrite inherited",
            );
            check(libc::fsync(fd) as isize, "fsync inherited");
        }
    }
}

/// Runs a role when the env var says so; a no-op in a normal test run.
#[test]
fn role() {
    let Ok(role) = std::env::var(ROLE) else {
        return;
    };
    let dir = PathBuf::from(std::env::var("FLASHLAB_IOTRACE_DIR").unwrap());
    match role.as_str() {
        "parent" => {
            // An fd opened before tracing starts, inheritable (no CLOEXEC).
            // SAFETY: a valid path.
            let fd = unsafe {
                libc::open(
                    cstr(&dir.join("inherited.dat")).as_ptr(),
                    libc::O_CREAT | libc::O_RDWR,
                    0o644,
                )
            };
            check(fd as isize, "open inherited");
            std::fs::write(dir.join("../parent-ready"), b"").unwrap();
            while !dir.join("../go").exists() {
                std::thread::sleep(Duration::from_millis(20));
            }
            // SAFETY: a valid fd and buffer.
            unsafe {
                let buf = [1u8; 4096];
                check(
                    libc::pwrite(fd, buf.as_ptr().cast(), 4096, 0),
                    "pwrite parent",
                );
            }
            let exe = std::env::current_exe().unwrap();
            let kids: Vec<_> = ["a.dat", "b.dat"]
                .iter()
                .map(|name| {
                    Command::new(&exe)
                        .args(["--exact", "role", "--nocapture", "--test-threads=1"])
                        .env(ROLE, "writer")
                        .env("FLASHLAB_IOTRACE_FILE", name)
                        .env(
                            "FLASHLAB_IOTRACE_FD",
                            if *name == "a.dat" {
                                fd.to_string()
                            } else {
                                String::new()
                            },
                        )
                        .stdout(Stdio::null())
                        .spawn()
                        .unwrap()
                })
                .collect();
            for mut k in kids {
                assert!(k.wait().unwrap().success());
            }
        }
        "writer" => {
            let name = std::env::var("FLASHLAB_IOTRACE_FILE").unwrap();
            let fd = std::env::var("FLASHLAB_IOTRACE_FD")
                .ok()
                .and_then(|v| v.parse().ok());
            writer(&dir.join(name), fd);
            // Paths are read from /proc/PID/fd after the events: a process
            // that is gone by then leaves its requests unattributed (counted
            // in unresolved_ios; docs/oltp-tracing.md). Live long enough
            // for a reader lagging on a loaded machine.
            std::thread::sleep(Duration::from_millis(500));
        }
        "checkpointer" => {
            // PostgreSQL's checkpointer at the end of a checkpoint: each
            // segment opened, fsynced and closed within microseconds, far
            // faster than a look in /proc can name the fd; then gone.
            while !dir.join("../go").exists() {
                std::thread::sleep(Duration::from_millis(5));
            }
            for i in 0..SYNCS {
                let path = dir.join(format!("seg{}", i % 5));
                // SAFETY: a valid path; the fd is closed right after.
                unsafe {
                    let fd = libc::open(cstr(&path).as_ptr(), libc::O_RDWR);
                    check(fd as isize, "open segment");
                    check(libc::fsync(fd) as isize, "fsync segment");
                    libc::close(fd);
                }
            }
        }
        other => panic!("unknown role {other}"),
    }
}

/// (op, offset, size) per file path, in time order.
type Requests = BTreeMap<String, Vec<(char, u64, u64)>>;

#[test]
fn a_process_tree_s_file_requests_are_traced_exactly_and_reach_the_device() {
    require_root!();
    let dev = Loop::new(128 << 20);
    let mnt = Mount::ext4(&dev.dev);
    let data = mnt.dir.path().join("data");
    std::fs::create_dir(&data).unwrap();
    let scratch = tempfile::tempdir().unwrap();
    let work = scratch.path().join("w");
    std::fs::create_dir(&work).unwrap();
    // The go and ready files live outside the traced directory.
    let mut parent = Command::new(std::env::current_exe().unwrap())
        .args(["--exact", "role", "--nocapture", "--test-threads=1"])
        .env(ROLE, "parent")
        .env("FLASHLAB_IOTRACE_DIR", &data)
        .stdout(Stdio::null())
        .spawn()
        .unwrap();
    // Until the parent is ready, "../go" means data/../go = the mount root.
    let ready = mnt.dir.path().join("parent-ready");
    let go = mnt.dir.path().join("go");
    for _ in 0..500 {
        if ready.exists() {
            break;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    assert!(ready.exists(), "the parent never got ready");
    dev.settle();
    let out = tempfile::tempdir().unwrap();
    let session = start(TraceSpec {
        out_dir: out.path().to_path_buf(),
        logical: Some(LogicalSpec {
            root_pid: parent.id(),
            under_dir: data.clone(),
        }),
        physical: Some(PhysicalSpec {
            major: dev.major,
            minor: dev.minor,
        }),
        reader: Default::default(),
    })
    .unwrap();
    std::fs::write(&go, b"").unwrap();
    assert!(parent.wait().unwrap().success());
    // Let ext4's journal commit settle into the trace too.
    std::thread::sleep(Duration::from_millis(200));
    let summary = session.stop().unwrap();
    assert_eq!(summary.lost_events, 0);

    let text = std::fs::read_to_string(summary.logical_path.as_ref().unwrap()).unwrap();
    let trace = parse_file_trace(&text).unwrap();
    let mut got: Requests = BTreeMap::new();
    let mut ios = trace.ios.clone();
    ios.sort_by_key(|io| io.time_ns);
    for io in &ios {
        let f = trace.files.iter().find(|f| f.id == io.file).unwrap();
        assert_eq!(f.kind, FileKind::Other);
        got.entry(f.path.clone()).or_default().push((
            io.op.letter(),
            io.offset_bytes,
            io.size_bytes,
        ));
    }
    let mut writer_requests: Vec<(char, u64, u64)> =
        (0..8).map(|i| ('W', (7 - i) * 8192, 8192)).collect();
    writer_requests.extend([
        ('W', 65536, 4096),
        ('W', 69632, 4096),
        ('D', 0, 0),
        ('R', 0, 8192),
        ('F', 0, 0),
    ]);
    let mut expected: Requests = BTreeMap::new();
    expected.insert("a.dat".into(), writer_requests.clone());
    expected.insert("b.dat".into(), writer_requests);
    // The parent's write through the fd it opened before tracing, then a's
    // writes through the copy it inherited.
    expected.insert(
        "inherited.dat".into(),
        vec![('W', 0, 4096), ('W', 4096, 4096), ('F', 0, 0)],
    );
    assert_eq!(got, expected, "the logical trace:\n{text}");
    let l = summary.logical;
    assert_eq!(
        (l.writes, l.write_bytes),
        (22, 2 * (8 * 8192 + 8192) + 8192)
    );
    assert_eq!((l.reads, l.flushes), (2, 5));
    // The writers' dynamic loader opens, reads and closes its libraries
    // faster than the reader can look their fds up in /proc; the looks then
    // name the next file on the same fd (a.dat), and are caught as such:
    // the trace above holds none of those reads.
    let d = summary.logical_detail.as_ref().unwrap();
    eprintln!(
        "unresolved IOs: {}, misresolved fds: {}",
        d.unresolved_ios, d.misresolved_fds
    );

    // Every block the files occupy was written by the device during the run.
    let ptext = std::fs::read_to_string(summary.physical_path.as_ref().unwrap()).unwrap();
    let pios = flashlab_trace::parse(&ptext, Format::Flashlab, "physical.trace").unwrap();
    let written: Vec<(u64, u64)> = pios
        .iter()
        .filter(|io| io.op == TraceOp::Io(flashlab_device::Mode::Write))
        .map(|io| (io.offset_bytes, io.offset_bytes + io.size_bytes))
        .collect();
    for name in ["a.dat", "b.dat", "inherited.dat"] {
        let blocks = extents(&data.join(name));
        assert!(!blocks.is_empty(), "{name} has blocks");
        for (start, end) in blocks {
            let mut at = start;
            while at < end {
                assert!(
                    written.iter().any(|(s, e)| *s <= at && at < *e),
                    "{name}: block at byte {at} of the device was never written in the physical trace"
                );
                at += 4096;
            }
        }
    }
    assert!(summary.physical.write_bytes >= l.write_bytes);
}

/// The checkpointer role's fsyncs (10 on each of 5 segments).
const SYNCS: usize = 50;

/// Every fsync is traced on its file, however short-lived its fd: the
/// kernel names the inode it syncs, which stays true after the close that
/// leaves /proc nothing to read.
#[test]
fn fsyncs_on_fds_closed_at_once_are_traced_on_their_files() {
    require_root!();
    let dev = Loop::new(64 << 20);
    let mnt = Mount::ext4(&dev.dev);
    let data = mnt.dir.path().join("data");
    std::fs::create_dir(&data).unwrap();
    for s in 0..5 {
        std::fs::write(data.join(format!("seg{s}")), vec![7u8; 8192]).unwrap();
    }
    let mut cp = Command::new(std::env::current_exe().unwrap())
        .args(["--exact", "role", "--nocapture", "--test-threads=1"])
        .env(ROLE, "checkpointer")
        .env("FLASHLAB_IOTRACE_DIR", &data)
        .stdout(Stdio::null())
        .spawn()
        .unwrap();
    let out = tempfile::tempdir().unwrap();
    let session = start(TraceSpec {
        out_dir: out.path().to_path_buf(),
        logical: Some(LogicalSpec {
            root_pid: cp.id(),
            under_dir: data.clone(),
        }),
        physical: None,
        reader: Default::default(),
    })
    .unwrap();
    std::fs::write(mnt.dir.path().join("go"), b"").unwrap();
    assert!(cp.wait().unwrap().success());
    let summary = session.stop().unwrap();
    assert_eq!(summary.lost_events, 0);
    let text = std::fs::read_to_string(summary.logical_path.as_ref().unwrap()).unwrap();
    let trace = parse_file_trace(&text).unwrap();
    let mut per_file: BTreeMap<String, usize> = BTreeMap::new();
    for io in &trace.ios {
        let f = trace.files.iter().find(|f| f.id == io.file).unwrap();
        assert_eq!(io.op.letter(), 'F', "{text}");
        *per_file.entry(f.path.clone()).or_default() += 1;
    }
    let expected: BTreeMap<String, usize> =
        (0..5).map(|s| (format!("seg{s}"), SYNCS / 5)).collect();
    let d = summary.logical_detail.as_ref().unwrap();
    assert_eq!(
        per_file, expected,
        "fsyncs per file (unresolved IOs {}, by inode {})",
        d.unresolved_ios, d.syncs_by_inode
    );
    assert_eq!(d.syncs_by_inode, SYNCS as u64);
    assert_eq!(d.unresolved_ios, 0);
}

/// A file's extents on the device, in bytes, from `filefrag -v` (4 KiB blocks).
fn extents(path: &Path) -> Vec<(u64, u64)> {
    let out = sh(Command::new("filefrag").args(["-v", "-b4096"]).arg(path));
    let mut v = Vec::new();
    for line in out.lines() {
        // "   0:        0..       3:      34816..     34819:      4:   last,eof"
        let cols: Vec<&str> = line.split(':').map(str::trim).collect();
        if cols.len() < 4 || cols[0].parse::<u64>().is_err() {
            continue;
        }
        let (start, end) = cols[2].split_once("..").unwrap();
        let start: u64 = start.trim().parse().unwrap();
        let end: u64 = end.trim().parse().unwrap();
        v.push((start * 4096, (end + 1) * 4096));
    }
    v
}
