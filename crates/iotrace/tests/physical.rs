//! Physical tracing agrees with the kernel's own accounting: a known load
//! (O_DIRECT writes and reads, flushes, a discard) on a loop device over a
//! /dev/shm file, traced; the traced requests and sectors equal the deltas
//! of /sys/block/loopN/stat, the trace holds exactly the load's bytes, and
//! it parses as a block trace (what `flashlab replay` reads). Root only.

mod common;

use std::path::Path;
use std::process::Command;

use common::{sh, Loop};
use flashlab_iotrace::{start, PhysicalSpec, TraceSpec};
use flashlab_trace::{Format, TraceOp};

/// The tests of this file run one at a time, so that each can count this
/// process's tracefs instances.
static SERIAL: std::sync::Mutex<()> = std::sync::Mutex::new(());

fn serial() -> std::sync::MutexGuard<'static, ()> {
    SERIAL.lock().unwrap_or_else(|e| e.into_inner())
}

/// Block requests of device MAJOR:MINOR only, traced into `out`.
fn physical_only(out: &Path, major: u32, minor: u32) -> TraceSpec {
    TraceSpec {
        out_dir: out.to_path_buf(),
        logical: None,
        physical: Some(PhysicalSpec { major, minor }),
        reader: Default::default(),
    }
}

#[test]
fn traced_block_requests_match_the_devices_stat_counters() {
    require_root!();
    let _serial = serial();
    let dev = Loop::new(64 << 20);
    let out = tempfile::tempdir().unwrap();
    let session = start(physical_only(out.path(), dev.major, dev.minor)).unwrap();
    let before = dev.stat();
    let path = dev.dev.to_str().unwrap();
    // 512 random 4 KiB O_DIRECT writes with an fsync (a flush) every 128.
    sh(Command::new("fio").args([
        "--name=w",
        "--filename",
        path,
        "--direct=1",
        "--ioengine=psync",
        "--rw=randwrite",
        "--bs=4k",
        "--size=32M",
        "--io_size=2M",
        "--fsync=128",
        "--end_fsync=1",
        "--randseed=7",
        "--output=/dev/null",
    ]));
    // 256 random 16 KiB O_DIRECT reads.
    sh(Command::new("fio").args([
        "--name=r",
        "--filename",
        path,
        "--direct=1",
        "--ioengine=psync",
        "--rw=randread",
        "--bs=16k",
        "--size=32M",
        "--io_size=4M",
        "--randseed=8",
        "--output=/dev/null",
    ]));
    sh(Command::new("blkdiscard").args(["-o", "33554432", "-l", "1048576", path]));
    let after = dev.stat();
    let summary = session.stop().unwrap();
    let delta: Vec<u64> = after.iter().zip(before).map(|(a, b)| a - b).collect();
    let d = summary.physical_detail.as_ref().unwrap();
    let c = &d.completed;
    let traced = [
        c.reads,
        c.read_sectors,
        c.writes,
        c.write_sectors,
        c.discards,
        c.discard_sectors,
        c.flushes,
    ];
    assert_eq!(summary.lost_events, 0);
    assert_eq!(
        traced.to_vec(),
        delta,
        "traced completions [reads, read sectors, writes, write sectors, discards, discard sectors, flushes] vs /sys/block/{}/stat deltas",
        dev.name
    );
    // The issued writes are exactly the load (no merges at QD1). Reads
    // include it and may hold more: udev probes a device (blkid reads) when
    // a writer closes it; the stat deltas above count those too.
    let p = summary.physical;
    assert_eq!((p.writes, p.write_bytes), (512, 2 << 20));
    assert!(p.reads >= 256 && p.read_bytes >= 4 << 20, "{p:?}");
    assert_eq!((p.discards, p.discard_bytes), (1, 1 << 20));
    assert!(
        p.flushes >= 4,
        "fio fsyncs after writes 128, 256, 384 and at the end, each a flush: {}",
        p.flushes
    );
    assert_eq!(p.flushes, c.flushes);
    // Every data request's completion was matched to its issue.
    assert_eq!(d.outstanding_at_stop, 0);
    assert!(d.matched >= 512 + 256 + 1 + p.flushes, "{d:?}");
    // The trace file is a block trace with the same requests.
    let text = std::fs::read_to_string(summary.physical_path.as_ref().unwrap()).unwrap();
    let ios = flashlab_trace::parse(&text, Format::Flashlab, "physical.trace").unwrap();
    let writes: u64 = ios
        .iter()
        .filter(|io| io.op == TraceOp::Io(flashlab_device::Mode::Write))
        .map(|io| io.size_bytes)
        .sum();
    assert_eq!(writes, 2 << 20);
    assert_eq!(
        ios.iter().filter(|io| io.op == TraceOp::Flush).count() as u64,
        p.flushes
    );
    assert!(out.path().join("iotrace.json").exists());
}

#[test]
fn an_instance_is_private_and_removed_at_stop_and_on_drop() {
    require_root!();
    let _serial = serial();
    let dev = Loop::new(8 << 20);
    let out = tempfile::tempdir().unwrap();
    let spec = physical_only(out.path(), dev.major, dev.minor);
    let session = start(spec.clone()).unwrap();
    let dirs = session.instance_dirs();
    assert_eq!(dirs.len(), 1);
    let name = dirs[0].file_name().unwrap().to_str().unwrap();
    assert!(
        name.starts_with(&format!("flashlab-{}-", std::process::id())),
        "{name}"
    );
    assert!(dirs[0].join("trace_pipe").exists());
    // The global instance's events are untouched.
    let global =
        std::fs::read_to_string("/sys/kernel/tracing/events/block/block_rq_issue/enable").unwrap();
    drop(session);
    assert!(!dirs[0].exists(), "drop removes the instance");
    let session = start(spec).unwrap();
    let dirs = session.instance_dirs();
    session.stop().unwrap();
    assert!(!dirs[0].exists(), "stop removes the instance");
    let after =
        std::fs::read_to_string("/sys/kernel/tracing/events/block/block_rq_issue/enable").unwrap();
    assert_eq!(global, after);
}

#[test]
fn a_failed_start_is_one_line_and_leaves_no_instance() {
    require_root!();
    let _serial = serial();
    let dev = Loop::new(8 << 20);
    let out = tempfile::tempdir().unwrap();
    let mine = || -> usize {
        std::fs::read_dir("/sys/kernel/tracing/instances")
            .unwrap()
            .flatten()
            .filter(|e| {
                e.file_name()
                    .to_string_lossy()
                    .starts_with(&format!("flashlab-{}-", std::process::id()))
            })
            .count()
    };
    // The physical side starts, then the logical side finds no such process.
    let e = start(TraceSpec {
        out_dir: out.path().to_path_buf(),
        logical: Some(flashlab_iotrace::LogicalSpec {
            root_pid: u32::MAX - 1,
            under_dir: out.path().to_path_buf(),
        }),
        physical: Some(PhysicalSpec {
            major: dev.major,
            minor: dev.minor,
        }),
        reader: Default::default(),
    })
    .err()
    .expect("no such process");
    let msg = e.to_string();
    assert!(msg.contains("no process") && !msg.contains('\n'), "{msg}");
    assert_eq!(mine(), 0, "the physical instance was removed");
    // A device that does not exist is refused before anything starts.
    let e = start(physical_only(out.path(), 4095, 1048575))
        .err()
        .expect("no such device");
    assert!(
        e.to_string().contains("no block device 4095:1048575"),
        "{e}"
    );
    assert_eq!(mine(), 0);
}

/// Under a load faster than the text pipe is read (tens of thousands of IOs
/// per second here), events may be lost; then every completion the device
/// counted but the trace lacks is accounted for by `lost_events`, and the
/// summary says the trace is incomplete. Never a silent shortfall.
#[test]
fn requests_missing_from_the_trace_are_counted_as_lost() {
    require_root!();
    let _serial = serial();
    let dev = Loop::new(256 << 20);
    let out = tempfile::tempdir().unwrap();
    let session = start(physical_only(out.path(), dev.major, dev.minor)).unwrap();
    let before = dev.stat();
    sh(Command::new("fio").args([
        "--name=flood",
        "--filename",
        dev.dev.to_str().unwrap(),
        "--direct=1",
        "--ioengine=libaio",
        "--iodepth=32",
        "--rw=randread",
        "--bs=4k",
        "--runtime=3",
        "--time_based",
        "--output=/dev/null",
    ]));
    let after = dev.stat();
    let summary = session.stop().unwrap();
    let device_reads = after[0] - before[0];
    let traced_reads = summary.physical_detail.as_ref().unwrap().completed.reads;
    eprintln!(
        "device reads {device_reads}, traced completions {traced_reads}, lost events {}",
        summary.lost_events
    );
    assert!(traced_reads <= device_reads);
    assert!(
        device_reads - traced_reads <= summary.lost_events,
        "{} completions missing but only {} events reported lost",
        device_reads - traced_reads,
        summary.lost_events
    );
    if summary.lost_events > 0 {
        assert!(
            summary.notes.iter().any(|n| n.contains("lost")),
            "{:?}",
            summary.notes
        );
    }
}
