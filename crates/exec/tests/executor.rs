//! The executor against a scripted fake device with a virtual clock: queue
//! depth, streams, pauses, bursts and IOIgnore behave as the algebra says.

mod common;

use common::FakeDevice;
use flashlab_device::Mode;
use flashlab_exec::{execute, Hooks, Outcome};
use flashlab_pattern::{PatternArgs, PatternSpec};
use flashlab_results::IoRecord;

fn spec(table: &str) -> PatternSpec {
    toml::from_str::<PatternArgs>(table)
        .unwrap()
        .resolve(1 << 30)
        .unwrap()
}

fn run(table: &str) -> (Vec<IoRecord>, FakeDevice) {
    let s = spec(table);
    let mut dev = FakeDevice::new(s.max_outstanding());
    let mut recs = Vec::new();
    let outcome = execute(&mut dev, &s, &mut recs, Hooks::default()).unwrap();
    assert_eq!(outcome, Outcome::Complete);
    (recs, dev)
}

#[test]
fn consecutive_qd1_runs_back_to_back() {
    let (recs, dev) = run("pattern='SR'\nio_count=10");
    assert_eq!(recs.len(), 10);
    assert_eq!(dev.max_seen, 1);
    for (i, r) in recs.iter().enumerate() {
        assert_eq!(r.submit_ns, i as u64 * 100_000);
        assert_eq!(r.latency_ns(), 100_000);
    }
}

#[test]
fn each_run_begins_by_letting_the_device_settle() {
    let s = spec("pattern='SR'\nio_count=3\ntime='pause:1ms'");
    let mut dev = FakeDevice::new(1);
    dev.settle_ns = 150_000_000;
    let mut recs = Vec::new();
    execute(&mut dev, &s, &mut recs, Hooks::default()).unwrap();
    execute(&mut dev, &s, &mut recs, Hooks::default()).unwrap();
    assert_eq!(dev.runs_begun.len(), 2, "once per run");
    assert_eq!(
        recs[0].submit_ns, 150_000_000,
        "the first IO follows the settle"
    );
    assert_eq!(
        recs[1].submit_ns - recs[0].complete_ns,
        1_000_000,
        "pauses are unchanged"
    );
}

#[test]
fn queue_depth_keeps_that_many_outstanding() {
    let (recs, dev) = run("pattern='RR'\nio_count=64\nqueue_depth=8");
    assert_eq!(recs.len(), 64);
    assert_eq!(dev.max_seen, 8);
    // 64 IOs, 8 at a time, 100 us each: 800 us.
    assert_eq!(recs.last().unwrap().complete_ns, 800_000);
}

#[test]
fn parallel_streams_each_do_io_count() {
    let (recs, dev) = run("pattern='SW'\nio_count=10\nparallel=4\ntarget_size='4MiB'");
    assert_eq!(recs.len(), 40);
    assert_eq!(dev.max_seen, 4);
    for p in 0..4u16 {
        let mine: Vec<_> = recs.iter().filter(|r| r.stream == p).collect();
        assert_eq!(mine.len(), 10);
        assert!(mine.iter().all(|r| r.offset_bytes >= p as u64 * (1 << 20)
            && r.offset_bytes < (p as u64 + 1) * (1 << 20)));
    }
}

#[test]
fn pause_waits_after_each_completion() {
    let (recs, _) = run("pattern='RW'\nio_count=5\ntime='pause:1ms'");
    let submits: Vec<u64> = recs.iter().map(|r| r.submit_ns).collect();
    // Each IO: 100 us service + 1 ms pause.
    assert_eq!(submits, vec![0, 1_100_000, 2_200_000, 3_300_000, 4_400_000]);
}

#[test]
fn burst_pauses_after_every_burst() {
    let (recs, _) = run("pattern='SW'\nio_count=6\ntime='burst:10ms:3'");
    let submits: Vec<u64> = recs.iter().map(|r| r.submit_ns).collect();
    assert_eq!(
        submits,
        vec![0, 100_000, 200_000, 10_300_000, 10_400_000, 10_500_000]
    );
}

#[test]
fn io_ignore_flags_warmup_per_stream() {
    let (recs, _) = run("pattern='SR'\nio_count=10\nio_ignore=3\nparallel=2\ntarget_size='1MiB'");
    let warm = recs.iter().filter(|r| r.is_warmup()).count();
    assert_eq!(warm, 6);
    assert!(recs.iter().all(|r| r.is_warmup() == (r.index < 3)));
}

#[test]
fn records_match_the_generator() {
    let s = spec("pattern='RW'\nio_count=50\nqueue_depth=4\nparallel=2\ntarget_size='8MiB'");
    let mut dev = FakeDevice::new(s.max_outstanding());
    let mut recs = Vec::new();
    execute(&mut dev, &s, &mut recs, Hooks::default()).unwrap();
    let mut got: Vec<(u16, u64, u64)> = recs
        .iter()
        .map(|r| (r.stream, r.index, r.offset_bytes))
        .collect();
    got.sort_unstable();
    let mut want: Vec<(u16, u64, u64)> = flashlab_pattern::all_ios(&s)
        .map(|io| (io.stream as u16, io.index, io.offset_bytes))
        .collect();
    want.sort_unstable();
    assert_eq!(got, want);
    assert!(recs.iter().all(|r| r.mode == Mode::Write));
}

#[test]
fn a_failed_io_stops_the_run_and_is_reported() {
    let s = spec("pattern='SW'\nio_count=100\nio_size='4KiB'");
    let mut dev = FakeDevice::new(1);
    dev.fail_at_offset = Some(10 * 4096);
    let mut recs = Vec::new();
    let err = execute(&mut dev, &s, &mut recs, Hooks::default()).unwrap_err();
    assert!(
        err.to_string()
            .contains("write of 4096 B at offset 40960 failed"),
        "{err}"
    );
    assert_eq!(recs.len(), 11);
    assert!(recs[10].is_error());
}

#[test]
fn stop_flag_drains_and_reports_interrupted() {
    let s = spec("pattern='RR'\nio_count=1000\nqueue_depth=4");
    let mut dev = FakeDevice::new(4);
    let stop = std::sync::atomic::AtomicBool::new(false);
    let mut recs = Vec::new();
    let mut calls = 0;
    let mut progress = |done: u64, _total: u64| {
        calls += 1;
        if done >= 100 {
            stop.store(true, std::sync::atomic::Ordering::Relaxed);
        }
    };
    let outcome = execute(
        &mut dev,
        &s,
        &mut recs,
        Hooks {
            stop: Some(&stop),
            progress: Some(&mut progress),
        },
    )
    .unwrap();
    assert_eq!(outcome, Outcome::Interrupted);
    assert!(recs.len() >= 100 && recs.len() < 120, "{}", recs.len());
    assert!(dev.in_flight.is_empty());
}

/// fio's time_based: the pattern goes on past IOCount until the runtime,
/// in device time; the IO in flight at the deadline completes and counts.
#[test]
fn a_time_based_run_repeats_the_pattern_until_its_runtime() {
    // QD1 at 100 us per IO: IOs start at 0, 100 us, ..., 4.9 ms.
    let (recs, _) = run("pattern='SW'\nio_size='4KiB'\ntarget_size='16KiB'\nio_count=4\nruntime='5ms'\ntime_based=true");
    assert_eq!(recs.len(), 50, "5 ms / 100 us, not IOCount 4");
    assert!(recs.iter().all(|r| r.submit_ns < 5_000_000));
    // sequential wraps over the 4 slots of the target, pass after pass
    let offsets: Vec<u64> = recs.iter().take(6).map(|r| r.offset_bytes).collect();
    assert_eq!(offsets, [0, 4096, 8192, 12288, 0, 4096]);
}

/// fio's runtime without time_based caps a run: whichever of IOCount and
/// the runtime comes first ends it, and either way the run is complete.
#[test]
fn a_runtime_caps_a_run_of_io_count_ios() {
    let (recs, _) = run("pattern='SR'\nio_count=10\nruntime='10ms'");
    assert_eq!(recs.len(), 10, "IOCount first");
    let (recs, _) = run("pattern='SR'\nio_count=100\nruntime='1ms'");
    assert_eq!(recs.len(), 10, "runtime first: 1 ms / 100 us");
}

/// fio's rate_iops: IO i is submitted at i / rate, whatever the completions
/// (open loop), as long as a queue slot is free.
#[test]
fn rate_iops_submits_on_a_fixed_schedule() {
    // 1000 IO/s on a 100 us device: one IO every millisecond exactly.
    let (recs, _) = run("pattern='RR'\nio_count=20\nqueue_depth=4\nrate_iops=1000");
    for (i, r) in recs.iter().enumerate() {
        assert_eq!(r.submit_ns, i as u64 * 1_000_000, "IO {i}");
    }
    // 20,000 IO/s (every 50 us) at QD4 on the same device: the schedule,
    // not the completions, sets when the first four go.
    let (recs, _) = run("pattern='RR'\nio_count=8\nqueue_depth=4\nrate_iops=20000");
    let submits: Vec<u64> = recs.iter().map(|r| r.submit_ns).collect::<Vec<_>>();
    let mut sorted = submits.clone();
    sorted.sort_unstable();
    assert_eq!(&sorted[..4], [0, 50_000, 100_000, 150_000]);
    // and two streams each keep the rate (fio's rate is per job)
    let (recs, _) = run("pattern='RR'\nio_count=5\nparallel=2\nrate_iops=1000");
    let last = recs.iter().map(|r| r.submit_ns).max().unwrap();
    assert_eq!(last, 4_000_000, "5 IOs per stream at 1 ms each");
}
