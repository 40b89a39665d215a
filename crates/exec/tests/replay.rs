//! Trace replay on the fake device: open loop follows recorded times, closed
//! loop keeps the queue full, flushes drain first.

mod common;

use common::FakeDevice;
use flashlab_device::Mode;
use flashlab_exec::{replay, Hooks, Outcome, ReplayMode};
use flashlab_results::IoRecord;
use flashlab_trace::{TraceIo, TraceOp};

fn w(time_ns: u64, offset: u64) -> TraceIo {
    TraceIo {
        time_ns,
        op: TraceOp::Io(Mode::Write),
        offset_bytes: offset,
        size_bytes: 4096,
    }
}

fn run(
    trace: &[TraceIo],
    mode: ReplayMode,
    max: usize,
) -> (Vec<IoRecord>, FakeDevice, flashlab_exec::ReplayReport) {
    let mut dev = FakeDevice::new(max);
    let mut recs = Vec::new();
    let (outcome, report) = replay(&mut dev, trace, mode, &mut recs, Hooks::default()).unwrap();
    assert_eq!(outcome, Outcome::Complete);
    (recs, dev, report)
}

#[test]
fn open_loop_submits_at_recorded_times() {
    let trace = [
        w(0, 0),
        w(1_000_000, 4096),
        w(1_010_000, 8192),
        w(5_000_000, 0),
    ];
    let (recs, _, report) = run(
        &trace,
        ReplayMode::OpenLoop {
            speed: 1.0,
            max_outstanding: 64,
        },
        64,
    );
    let submits: Vec<u64> = recs.iter().map(|r| r.submit_ns).collect();
    // The third request arrives while the second is in flight (100 us each): it does not wait.
    assert_eq!(submits, vec![0, 1_000_000, 1_010_000, 5_000_000]);
    assert_eq!(report.late, 0);
    assert_eq!(
        recs.iter().map(|r| r.index).collect::<Vec<_>>(),
        vec![0, 1, 2, 3]
    );
}

#[test]
fn the_schedule_starts_after_the_device_settles() {
    let trace = [w(0, 0), w(1_000_000, 4096)];
    let mut dev = FakeDevice::new(8);
    dev.settle_ns = 150_000_000;
    let mut recs = Vec::new();
    let (_, report) = replay(
        &mut dev,
        &trace,
        ReplayMode::OpenLoop {
            speed: 1.0,
            max_outstanding: 8,
        },
        &mut recs,
        Hooks::default(),
    )
    .unwrap();
    assert_eq!(dev.runs_begun, vec![0]);
    let submits: Vec<u64> = recs.iter().map(|r| r.submit_ns).collect();
    assert_eq!(
        submits,
        vec![150_000_000, 151_000_000],
        "times count from the end of the settle"
    );
    assert_eq!(report.late, 0);
}

#[test]
fn open_loop_speed_compresses_time() {
    let trace = [w(0, 0), w(1_000_000, 4096)];
    let (recs, _, _) = run(
        &trace,
        ReplayMode::OpenLoop {
            speed: 4.0,
            max_outstanding: 8,
        },
        8,
    );
    assert_eq!(recs[1].submit_ns, 250_000);
}

#[test]
fn open_loop_counts_late_requests_when_the_limit_is_reached() {
    let trace: Vec<TraceIo> = (0..10).map(|i| w(0, i * 4096)).collect();
    let (recs, dev, report) = run(
        &trace,
        ReplayMode::OpenLoop {
            speed: 1.0,
            max_outstanding: 2,
        },
        2,
    );
    assert_eq!(recs.len(), 10);
    assert_eq!(dev.max_seen, 2);
    assert_eq!(report.late, 8);
}

#[test]
fn closed_loop_ignores_times_and_keeps_the_queue_full() {
    let trace: Vec<TraceIo> = (0..16).map(|i| w(i * 1_000_000_000, i * 4096)).collect();
    let (recs, dev, _) = run(&trace, ReplayMode::ClosedLoop { queue_depth: 4 }, 4);
    assert_eq!(dev.max_seen, 4);
    assert_eq!(
        recs.last().unwrap().complete_ns,
        400_000,
        "16 IOs, 4 at a time, 100 us each"
    );
}

#[test]
fn flush_waits_for_earlier_requests() {
    let trace = [
        w(0, 0),
        w(0, 4096),
        TraceIo {
            time_ns: 0,
            op: TraceOp::Flush,
            offset_bytes: 0,
            size_bytes: 0,
        },
        w(0, 8192),
    ];
    let (recs, dev, report) = run(&trace, ReplayMode::ClosedLoop { queue_depth: 8 }, 8);
    assert_eq!(report.flushes, 1);
    assert_eq!(
        dev.flushes,
        vec![(100_000, 0)],
        "flushed with nothing in flight"
    );
    assert_eq!(recs.len(), 3);
    assert_eq!(recs[2].submit_ns, 100_000);
}
