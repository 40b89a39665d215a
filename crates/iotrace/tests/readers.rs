//! The binary reader (per-CPU `trace_pipe_raw` pages) and the text reader
//! (`trace_pipe`) give the same traces: two sessions trace one workload at
//! once, one with each reader, each in its own tracefs instance (so both
//! see every event). fio, started by a shell waiting on a fifo, forks two
//! jobs on an ext4 mount over a loop device: one with read/write/lseek
//! (`sync`, offsets from tracked positions) and fdatasync, one with
//! pread/pwrite (`psync`) and fsync. Both sessions' logical and physical
//! traces must hold the same requests (op, file, offset, size) at the same
//! times (the text pipe prints microseconds, the raw pages nanoseconds),
//! and the same counts. Root only.

mod common;

use std::collections::BTreeMap;
use std::path::Path;
use std::process::{Command, Stdio};

use common::{sh, Loop, Mount};
use flashlab_iotrace::{start, LogicalSpec, PhysicalSpec, Reader, TraceSpec, TraceSummary};
use flashlab_trace::{parse_file_trace, Format};

/// (file path, op letter, offset, size) to the absolute times (t0 + time_ns)
/// of the requests with those values, sorted.
type Requests = BTreeMap<(String, char, u64, u64), Vec<u64>>;

fn logical_requests(s: &TraceSummary) -> Requests {
    let text = std::fs::read_to_string(s.logical_path.as_ref().unwrap()).unwrap();
    let trace = parse_file_trace(&text).unwrap();
    let mut out = Requests::new();
    for io in &trace.ios {
        let f = trace.files.iter().find(|f| f.id == io.file).unwrap();
        out.entry((
            f.path.clone(),
            io.op.letter(),
            io.offset_bytes,
            io.size_bytes,
        ))
        .or_default()
        .push(s.t0_monotonic_ns + io.time_ns);
    }
    out.values_mut().for_each(|v| v.sort_unstable());
    out
}

fn physical_requests(s: &TraceSummary) -> Requests {
    let text = std::fs::read_to_string(s.physical_path.as_ref().unwrap()).unwrap();
    let ios = flashlab_trace::parse(&text, Format::Flashlab, "physical.trace").unwrap();
    // Block traces are read with their first request at time 0: the
    // same request in both traces, so the times compare as they are.
    let mut out = Requests::new();
    for io in &ios {
        out.entry((
            String::new(),
            io.op.letter(),
            io.offset_bytes,
            io.size_bytes,
        ))
        .or_default()
        .push(io.time_ns);
    }
    out.values_mut().for_each(|v| v.sort_unstable());
    out
}

/// Same keys and the same number of requests each, at the same times. Each
/// instance stamps its own copy of an event as the tracepoint writes it to
/// that instance's buffer, one after the other, so the copies differ by
/// about a microsecond (up to tens when the write is interrupted), plus
/// the text pipe's rounding to the microsecond (and a block trace starts
/// its clock at its first request, one such copy). So: every difference
/// within 100 µs of the median difference, and half of them within 2 µs of
/// it (a decoding error in the raw pages' time deltas would move times by
/// far more).
fn assert_same(side: &str, text: &Requests, raw: &Requests) {
    // Only the differences are printed (a whole trace is too long to read).
    let only = |a: &Requests, b: &Requests| {
        a.iter()
            .filter(|(k, v)| b.get(*k).map(Vec::len) != Some(v.len()))
            .map(|(k, v)| (k.clone(), v.clone()))
            .collect::<Vec<_>>()
    };
    let (text_only, raw_only) = (only(text, raw), only(raw, text));
    assert!(
        text_only.is_empty() && raw_only.is_empty(),
        "{side}: the readers' requests differ: text has {text_only:?}, raw has {raw_only:?}"
    );
    let mut diffs: Vec<i64> = Vec::new();
    for (k, t) in text {
        diffs.extend(t.iter().zip(&raw[k]).map(|(a, b)| *b as i64 - *a as i64));
    }
    let mut sorted = diffs.clone();
    sorted.sort_unstable();
    let median = sorted[sorted.len() / 2];
    assert!(
        median.abs() <= 100_000,
        "{side}: median difference {median} ns"
    );
    let mut spread: Vec<u64> = diffs.iter().map(|d| d.abs_diff(median)).collect();
    spread.sort_unstable();
    assert!(
        spread[spread.len() - 1] <= 100_000,
        "{side}: a time differs by {} ns from the median difference",
        spread[spread.len() - 1]
    );
    let half = spread[spread.len() / 2];
    assert!(
        half <= 2_000,
        "{side}: half the times differ by over {half} ns"
    );
}

/// A child killed if the test fails before it ends (it would wait on its
/// fifo for ever).
struct Killed(std::process::Child);

impl Drop for Killed {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

#[test]
fn binary_and_text_readers_trace_the_same_requests() {
    require_root!();
    let dev = Loop::new(256 << 20);
    let mount = Mount::ext4(&dev.dev);
    let data = mount.dir.path().join("data");
    std::fs::create_dir(&data).unwrap();
    let fifo = mount.dir.path().join("go");
    sh(Command::new("mkfifo").arg(&fifo));
    let fio = format!(
        "exec fio --directory={d} --size=8M --bs=4k --randseed=3 --output=/dev/null \
         --name=sync --ioengine=sync --rw=randrw --io_size=4M --fdatasync=16 \
         --name=psync --ioengine=psync --rw=randrw --bs=16k --io_size=8M --fsync=8",
        d = data.display()
    );
    let mut shell = Killed(
        Command::new("sh")
            .arg("-c")
            .arg(format!("read x < {}; {fio}", fifo.display()))
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .spawn()
            .unwrap(),
    );
    // Nothing of the file system's own set-up in the traces.
    sh(&mut Command::new("sync"));
    dev.settle();
    let outs = [tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap()];
    let spec = |out: &Path, reader| TraceSpec {
        out_dir: out.to_path_buf(),
        logical: Some(LogicalSpec {
            root_pid: shell.0.id(),
            under_dir: data.clone(),
        }),
        physical: Some(PhysicalSpec {
            major: dev.major,
            minor: dev.minor,
        }),
        reader,
    };
    let text = start(spec(outs[0].path(), Reader::Text)).unwrap();
    let raw = start(spec(outs[1].path(), Reader::Raw)).unwrap();
    assert_eq!((text.reader(), raw.reader()), (Reader::Text, Reader::Raw));
    std::fs::write(&fifo, b"go\n").unwrap();
    assert!(shell.0.wait().unwrap().success(), "fio failed");
    sh(&mut Command::new("sync"));
    std::thread::sleep(std::time::Duration::from_millis(200));
    let raw = raw.stop().unwrap();
    let text = text.stop().unwrap();
    assert_eq!((text.lost_events, raw.lost_events), (0, 0));
    assert_eq!(raw.reader, Reader::Raw);

    let (lt, lr) = (logical_requests(&text), logical_requests(&raw));
    let n: usize = lt.values().map(Vec::len).sum();
    // 1024 + 512 transfers and their syncs (fio also lays the files out).
    assert!(n > 1_500, "only {n} logical requests traced");
    assert_same("logical", &lt, &lr);
    assert_eq!(text.logical, raw.logical);
    let (dt, dr) = (
        text.logical_detail.as_ref().unwrap(),
        raw.logical_detail.as_ref().unwrap(),
    );
    // (Not `unresolved_ios`: which short-lived fds /proc still names
    // depends on each reader's lag, and those requests are in neither
    // trace.)
    assert_eq!(
        (dt.file_requests, &dt.by_syscall),
        (dr.file_requests, &dr.by_syscall)
    );
    assert_eq!((dt.unparsed_lines, dr.unparsed_lines), (0, 0));
    for call in ["read", "write", "pread64", "pwrite64", "fsync", "fdatasync"] {
        assert!(dr.by_syscall.contains_key(call), "no {call} traced");
    }

    let (pt, pr) = (physical_requests(&text), physical_requests(&raw));
    assert!(pr.values().map(Vec::len).sum::<usize>() > 100);
    assert_same("physical", &pt, &pr);
    assert_eq!(text.physical, raw.physical);
    let (dt, dr) = (
        text.physical_detail.as_ref().unwrap(),
        raw.physical_detail.as_ref().unwrap(),
    );
    assert_eq!(dt.completed, dr.completed);
    assert_eq!((dt.unparsed_lines, dr.unparsed_lines), (0, 0));
}
