//! Static page allocation by address (`ftl.allocation = "static-cwdp"`),
//! MQSim's `CWDP` plane allocation scheme (CMU-SAFARI/MQSim, the
//! `Plane_Allocation_Scheme` of its shipped ssdconfig.xml): a logical page
//! goes to channel `lpn mod C`, then way, then die, whatever was written
//! before it, so pages `dies` apart (and a page's rewrites) queue on one die.
//! The default, round-robin, sends each written page to the next die in turn.

mod common;

use common::*;
use flashlab_device::Mode;
use flashlab_sim::config::PageAllocation;
use flashlab_sim::{open_device, resolve_spec, SimDevice};

fn dev(spec: &str) -> SimDevice {
    open_device(spec, 1, 64).unwrap_or_else(|e| panic!("{spec}: {e}"))
}

/// MQSim's device without its write cache, so a write completes when its
/// page is programmed: 64 dies (8 channels x 4 chips x 2 dies), 8 KiB
/// pages, 750 us programs.
const MQSIM: &str = "mqsim-ref,capacity=8GiB,cache=off";
const PAGE: u64 = 8 * KIB;
const DIES: u64 = 64;
const PROGRAM_US: f64 = 750.0;

/// The slowest of `offsets` written together (one 8 KiB page each), in us.
fn slowest_write_us(spec: &str, offsets: &[u64]) -> f64 {
    let mut d = dev(spec);
    let c = run(
        &mut d,
        offsets.iter().map(|&o| (o, PAGE as u32, Mode::Write)),
        offsets.len(),
    );
    c.iter().map(|c| c.latency_ns()).max().unwrap() as f64 / 1e3
}

#[test]
fn pages_a_die_count_apart_queue_on_one_die_with_static_allocation() {
    // logical pages 0, 64, 128, 192: die 0 four times by address
    let same_die: Vec<u64> = (0..4).map(|i| i * DIES * PAGE).collect();
    let fixed = slowest_write_us(&format!("{MQSIM},ftl.allocation=static-cwdp"), &same_die);
    assert!(
        fixed > 4.0 * PROGRAM_US,
        "static: the fourth program waits for three: {fixed:.1} us"
    );
    // round-robin: dies 0, 1, 2, 3, one program each, side by side
    let spread = slowest_write_us(&format!("{MQSIM},ftl.allocation=round-robin"), &same_die);
    assert!(
        spread < 1.5 * PROGRAM_US,
        "round-robin: {spread:.1} us (static {fixed:.1} us)"
    );
}

#[test]
fn rewrites_of_one_page_stay_on_its_die_with_static_allocation() {
    let rewrites = [3 * PAGE; 4];
    let fixed = slowest_write_us(&format!("{MQSIM},allocation=static-cwdp"), &rewrites);
    assert!(fixed > 4.0 * PROGRAM_US, "static: {fixed:.1} us");
    let spread = slowest_write_us(&format!("{MQSIM},allocation=round-robin"), &rewrites);
    assert!(spread < 1.5 * PROGRAM_US, "round-robin: {spread:.1} us");
}

#[test]
fn consecutive_pages_take_every_die_once_with_static_allocation() {
    // channel first (lpn mod 8), then way and die: 64 consecutive pages
    // fill the 64 dies once, as round-robin does from an empty device
    let consecutive: Vec<u64> = (0..DIES).map(|i| i * PAGE).collect();
    let fixed = slowest_write_us(&format!("{MQSIM},ftl.allocation=static-cwdp"), &consecutive);
    assert!(fixed < 1.5 * PROGRAM_US, "static: {fixed:.1} us");
}

#[test]
fn only_the_mqsim_profile_allocates_statically() {
    // mqsim-ref names static-cwdp (MQSim's ssdconfig.xml) ...
    let same_die: Vec<u64> = (0..4).map(|i| i * DIES * PAGE).collect();
    assert!(slowest_write_us(MQSIM, &same_die) > 4.0 * PROGRAM_US);
    // ... every other profile allocates round-robin (the default)
    for p in flashlab_sim::profiles() {
        let cfg = resolve_spec(p.name).unwrap();
        let expected = if p.name == "mqsim-ref" {
            PageAllocation::StaticCwdp
        } else {
            PageAllocation::RoundRobin
        };
        assert_eq!(cfg.ftl.allocation, expected, "{}", p.name);
    }
}

#[test]
fn an_unknown_allocation_names_the_known_ones() {
    let e = open_device("mqsim-ref,capacity=8GiB,ftl.allocation=cwdp", 1, 64)
        .err()
        .expect("cwdp is not a value");
    let msg = e.to_string();
    assert!(
        msg.contains("round-robin") && msg.contains("static-cwdp"),
        "{msg}"
    );
}
