//! What a write acknowledged from the controller's DRAM cache costs (issue 30,
//! item 11). Besides the host-link transfer (`host.mb_per_s`), two mechanisms
//! of MQSim's cache manager (CMU-SAFARI/MQSim, `Data_Cache_Manager_Flash_Advanced`):
//! write-back back-pressure before the cache is full (`cache.writeback_window`:
//! at most that much data being written back at once, one page per plane of
//! the device in MQSim) and the DRAM copy (`cache.dram_mb_per_s`,
//! `cache.dram_access_ns`: one copy at a time, after the link).

mod common;

use common::*;
use flashlab_device::{Completion, Mode};
use flashlab_sim::{open_device, SimDevice};

fn dev(spec: &str) -> SimDevice {
    open_device(spec, 1, 64).unwrap_or_else(|e| panic!("{spec}: {e}"))
}

/// MQSim's device, small enough for a test: 256 MiB cache, 64 dies, 750 us programs.
const MQSIM: &str = "mqsim-ref,capacity=8GiB";

fn burst_of_random_writes(spec: &str) -> (SimDevice, Vec<Completion>) {
    let mut d = dev(spec);
    // 2048 random 8 KiB writes at QD 64 arrive at link speed (about 2 us
    // each), far faster than 64 dies program them (750 us a page), yet fill
    // only 16 MiB of the 256 MiB cache
    let done = run(
        &mut d,
        random(7, 8 * 1024 * MIB, 8 * KIB, 2048, Mode::Write),
        64,
    );
    (d, done)
}

#[test]
fn writes_slow_down_when_the_write_backs_in_flight_fill_the_window_before_the_cache_is_full() {
    // the profile's window: 1 MiB = 128 pages of 8 KiB in flight
    let (windowed, with_window) = burst_of_random_writes(MQSIM);
    let a = windowed.accounting();
    assert_eq!(a.cache_full_waits, 0, "the 256 MiB cache never fills");
    assert!(
        a.cache_window_waits > 1000,
        "window waits: {}",
        a.cache_window_waits
    );
    let slow = mean_latency_us(&with_window);
    // the flash sets the pace: 64 dies program a page per 750 us, about 12 us
    // per write, and each write waits behind the 64 outstanding: ~750 us
    assert!(slow > 600.0, "mean write with the window: {slow:.1} us");

    let (free, without) = burst_of_random_writes(&format!("{MQSIM},cache.writeback_window=0"));
    assert_eq!(free.accounting().cache_window_waits, 0);
    let fast = mean_latency_us(&without);
    // the link sets the pace: 8 KiB at 4000 MB/s is about 2 us, times 64 outstanding
    assert!(
        fast < 150.0,
        "mean write without the window: {fast:.1} us, with {slow:.1} us"
    );
}

#[test]
fn a_write_is_acknowledged_once_its_data_is_copied_into_dram() {
    // one 8 KiB write: 26 ns access + 8192 B at 51 200 MB/s (160 ns) after the link
    let one = |spec: &str| {
        let mut d = dev(spec);
        run(&mut d, sequential(0, 8 * KIB, 1, Mode::Write), 1)[0].latency_ns()
    };
    let with_copy = one(MQSIM);
    let without = one(&format!("{MQSIM},cache.dram_mb_per_s=0"));
    assert_eq!(with_copy - without, 26 + 160);
}

#[test]
fn copies_into_dram_queue_one_at_a_time() {
    // a DRAM of 100 MB/s caps cached 64 KiB writes at 100 MB/s though the
    // link moves 4000 MB/s and the flash keeps up
    let mut d = dev(&format!("{MQSIM},cache.dram_mb_per_s=100"));
    let done = run(&mut d, sequential(0, 64 * KIB, 512, Mode::Write), 32);
    let bw = bandwidth_mb_s(&done, 64 * KIB);
    assert!(
        (95.0..=100.0).contains(&bw),
        "cached writes at {bw:.1} MB/s"
    );
}
