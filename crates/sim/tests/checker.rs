//! The checker under random workloads (including TRIM): after every GC the maps
//! must agree and valid counts must equal live logical pages; at the end, the
//! device's mapped pages must be exactly those written and not trimmed since.
mod common;

use flashlab_device::{Device, IoRequest, Mode};
use flashlab_sim::open_device;
use proptest::prelude::*;

const PAGE: u64 = 4096;

#[derive(Clone, Debug)]
enum Op {
    Io {
        mode: Mode,
        page: u64,
        sectors: u32,
        shift: u32,
    },
    Pause(u64),
}

fn op_strategy(pages: u64) -> impl Strategy<Value = Op> {
    prop_oneof![
        6 => (0..pages, 1u32..24, 0u32..8).prop_map(|(page, sectors, shift)| Op::Io { mode: Mode::Write, page, sectors, shift }),
        2 => (0..pages, 1u32..24, 0u32..8).prop_map(|(page, sectors, shift)| Op::Io { mode: Mode::Read, page, sectors, shift }),
        2 => (0..pages, 1u32..64, 0u32..8).prop_map(|(page, sectors, shift)| Op::Io { mode: Mode::Trim, page, sectors, shift }),
        1 => (0u64..20_000_000).prop_map(Op::Pause),
    ]
}

fn drive(spec: &str, ops: &[Op], qd: usize) -> flashlab_sim::SimDevice {
    let mut d = open_device(spec, 5, qd).unwrap();
    let size = d.info().size_bytes;
    let pages = size / PAGE;
    let mut shadow = vec![false; pages as usize];
    let mut buf = Vec::new();
    let mut outstanding = 0usize;
    // Pre-fill so that GC runs from the start.
    for (tag, p) in (0..pages).step_by(64).enumerate() {
        while outstanding >= qd {
            buf.clear();
            d.poll(None, &mut buf).unwrap();
            outstanding -= buf.len();
        }
        let n = 64.min(pages - p);
        d.submit(IoRequest {
            tag: tag as u64,
            offset_bytes: p * PAGE,
            size_bytes: (n * PAGE) as u32,
            mode: Mode::Write,
        })
        .unwrap();
        outstanding += 1;
        shadow[p as usize..(p + n) as usize]
            .iter_mut()
            .for_each(|s| *s = true);
    }
    for (i, op) in ops.iter().enumerate() {
        while outstanding >= qd {
            buf.clear();
            d.poll(None, &mut buf).unwrap();
            outstanding -= buf.len();
        }
        match *op {
            Op::Pause(ns) => {
                let t = d.now_ns() + ns;
                d.idle_until(t).unwrap();
            }
            Op::Io {
                mode,
                page,
                sectors,
                shift,
            } => {
                // Wrap onto the device: random devices are smaller than the op space.
                let offset = (page % pages) * PAGE + shift as u64 * 512;
                let len = (sectors as u64 * 512).min(size - offset);
                if len == 0 {
                    continue;
                }
                d.submit(IoRequest {
                    tag: 1_000_000 + i as u64,
                    offset_bytes: offset,
                    size_bytes: len as u32,
                    mode,
                })
                .unwrap();
                outstanding += 1;
                match mode {
                    Mode::Write => {
                        for p in offset / PAGE..=(offset + len - 1) / PAGE {
                            shadow[p as usize] = true;
                        }
                    }
                    Mode::Trim => {
                        for p in offset.div_ceil(PAGE)..(offset + len) / PAGE {
                            shadow[p as usize] = false;
                        }
                    }
                    Mode::Read => {}
                }
            }
        }
    }
    while outstanding > 0 {
        buf.clear();
        d.poll(None, &mut buf).unwrap();
        outstanding -= buf.len();
    }
    d.check().unwrap();
    for (p, &live) in shadow.iter().enumerate() {
        assert_eq!(d.is_mapped(p as u64), live, "page {p}");
    }
    assert_eq!(
        d.mapped_pages(),
        shadow.iter().filter(|&&s| s).count() as u64
    );
    d
}

const BASE: &str = "ssd-h,capacity=8MiB,channels=2,geometry.chips_per_channel=1,geometry.planes_per_die=1,pages_per_block=16,check=on";

proptest! {
    #![proptest_config(ProptestConfig { cases: 24, .. ProptestConfig::default() })]

    #[test]
    fn random_workloads_keep_maps_consistent(
        ops in prop::collection::vec(op_strategy(2048), 1..1500),
        policy in prop_oneof![Just("greedy"), Just("cost-benefit"), Just("fifo")],
        op in prop_oneof![Just(0.12), Just(0.25)],
        cache in prop_oneof![Just("on"), Just("off")],
        qd in 1usize..9,
    ) {
        let spec = format!("{BASE},gc={policy},op={op},cache={cache},wl=3,wear.check_interval=4,bg_gc=on");
        drive(&spec, &ops, qd);
    }

    /// The same checks on a random valid device from the swarm's generator
    /// (any built-in profile as the base, any FTL, geometry, cache and
    /// mechanisms), with 4 KiB flash pages so that the shadow's page is the
    /// device's.
    #[test]
    fn random_devices_keep_maps_consistent(
        seed in any::<u64>(),
        ops in prop::collection::vec(op_strategy(2048), 1..800),
        qd in 1usize..9,
    ) {
        let spec = common::random_device::device_spec(&mut common::Rng(seed));
        let spec = format!("{spec},geometry.page_bytes=4096,ftl.prefill=off");
        prop_assume!(flashlab_sim::resolve_spec(&spec).is_ok());
        drive(&spec, &ops, qd);
    }
}

/// A long fixed workload with every policy, including static wear levelling moves.
#[test]
fn long_random_workload_all_policies() {
    let mut rng = common::Rng(77);
    let ops: Vec<Op> = (0..6000)
        .map(|_| match rng.below(10) {
            0..=6 => Op::Io {
                mode: Mode::Write,
                page: rng.below(2048),
                sectors: 8,
                shift: 0,
            },
            7 => Op::Io {
                mode: Mode::Read,
                page: rng.below(2048),
                sectors: 8,
                shift: 0,
            },
            8 => Op::Io {
                mode: Mode::Trim,
                page: rng.below(2048),
                sectors: 64,
                shift: 0,
            },
            _ => Op::Io {
                mode: Mode::Write,
                page: rng.below(64),
                sectors: 8,
                shift: 0,
            },
        })
        .collect();
    for policy in ["greedy", "cost-benefit", "fifo"] {
        let d = drive(
            &format!("{BASE},gc={policy},op=0.12,wl=2,wear.check_interval=2"),
            &ops,
            4,
        );
        assert!(
            d.accounting().gc_foreground > 100,
            "{policy}: GC hardly ran"
        );
    }
    let mut d = open_device(&format!("{BASE},op=0.12,wl=2,wear.check_interval=2"), 1, 1).unwrap();
    for i in 0..20_000u64 {
        let page = if i % 4 == 0 { i % 2048 } else { i % 32 };
        d.submit(IoRequest {
            tag: i,
            offset_bytes: page * PAGE,
            size_bytes: 4096,
            mode: Mode::Write,
        })
        .unwrap();
        let mut v = Vec::new();
        d.poll(None, &mut v).unwrap();
    }
    assert!(
        d.accounting().wl_moves > 0,
        "skewed writes should trigger static wear levelling"
    );
    d.check().unwrap();
}
