//! The probe against simulated devices whose true geometry is known: the
//! simulator is deterministic, so each figure here is exact, not a range
//! that happens to pass.

use std::cell::RefCell;
use std::rc::Rc;

use flashlab_device::{Completion, Device, DeviceError, DeviceInfo, IoRequest, Nanos};
use flashlab_probe::{
    probe, read_qd_knee, ByteRange, FtlFamily, Knee, ProbeOptions, ProbeReport, QdLimit,
};

fn probe_sim(spec: &str) -> ProbeReport {
    let mut dev = flashlab_sim::open_device(spec, 1, 64).expect("profile");
    let size = dev.info().size_bytes;
    let opts = ProbeOptions {
        writes: Some(ByteRange {
            offset_bytes: 0,
            len_bytes: size,
        }),
        ..Default::default()
    };
    probe(&mut dev, &opts).expect("probe")
}

#[test]
fn erase_unit_of_log_block_profiles_is_recovered_exactly() {
    // stripe_dies x pages_per_block x 4 KiB, from each profile's TOML.
    for (profile, unit) in [
        ("transcend-module", 1u64 << 20), // 4 x 64 pages
        ("memoright", 1 << 20),           // 8 x 32 pages
        ("mtron", 2 << 20),               // 8 x 64 pages
        ("samsung", 4 << 20),             // 16 x 64 pages
    ] {
        let r = probe_sim(profile);
        assert_eq!(
            r.erase_unit_bytes.value,
            Some(unit as f64),
            "{profile}: {}",
            r.erase_unit_bytes.reading
        );
    }
}

#[test]
fn open_units_equal_the_log_block_count() {
    for (profile, logs) in [("transcend-module", 4.0), ("memoright", 8.0)] {
        let r = probe_sim(profile);
        assert_eq!(
            r.open_units.value,
            Some(logs),
            "{profile}: {}",
            r.open_units.reading
        );
    }
}

#[test]
fn page_mapped_profiles_hide_their_unit_and_show_no_open_unit_limit() {
    let r = probe_sim("ssd-m");
    assert_eq!(r.erase_unit_bytes.value, None);
    assert_eq!(r.open_units.value, None);
}

#[test]
fn ftl_family_is_page_mapped_or_log_block_as_the_profile_says() {
    for (profile, family) in [
        ("ssd-m", FtlFamily::PageMapped),
        ("nvme-tlc", FtlFamily::PageMapped),
        ("samsung", FtlFamily::LogBlock),      // BAST
        ("kingston-dti", FtlFamily::LogBlock), // BAST with positional logs
        ("ssd-l", FtlFamily::LogBlock),        // FAST
    ] {
        let r = probe_sim(profile);
        assert_eq!(
            r.family,
            Some(family),
            "{profile}: {}",
            r.ftl_family.reading
        );
    }
}

#[test]
fn write_cache_knee_is_within_2x_of_the_cache_size() {
    for (profile, cache) in [
        ("ssd-m", 8u64 << 20),
        ("mtron", 3584 << 10),
        ("memoright", 1 << 20),
    ] {
        let r = probe_sim(profile);
        let got = r
            .write_cache_bytes
            .value
            .expect(&r.write_cache_bytes.reading);
        let ratio = got / cache as f64;
        assert!(
            (0.5..=2.0).contains(&ratio),
            "{profile}: knee {got} vs cache {cache}"
        );
    }
}

#[test]
fn the_cache_estimate_takes_off_what_drained_during_the_burst() {
    // ssd-m: an 8 MiB cache whose flash drains sequential 64 KiB writes
    // while the burst fills it: the knee comes at 9.5 MiB, and the slow
    // writes after it tell how fast the flash drained meanwhile.
    let r = probe_sim("ssd-m");
    let got = r.write_cache_bytes.value.unwrap();
    let err = got / (8u64 << 20) as f64 - 1.0;
    assert!(err.abs() < 0.10, "{got} B: {}", r.write_cache_bytes.reading);
    assert!(r.write_cache_bytes.reading.contains("drained"));
}

#[test]
fn read_ahead_is_seen_after_chen_et_al_s_four_slow_reads_and_absent_without_it() {
    let r = probe_sim("ssd-m");
    // ssd-m: trigger 4, window 128 KiB (Chen et al. 5.2: "the first four
    // requests in sequential have latencies of around 220 us").
    let window = r.readahead_bytes.value.unwrap();
    assert!(
        (64.0 * 1024.0..=256.0 * 1024.0).contains(&window),
        "{}",
        r.readahead_bytes.reading
    );
    assert!(r.readahead_bytes.reading.contains("5th sequential read"));
    let r = probe_sim("kingston-dti");
    assert_eq!(r.readahead_bytes.value, Some(0.0));
}

#[test]
fn parallelism_grows_with_dies_behind_a_deep_queue_and_is_one_behind_a_single_tag() {
    // ssd-m: 10 dies on 10 channels, 32 tags; kingston-dti: one tag (uFLIP's synchronous IO).
    let many = probe_sim("ssd-m").parallelism.value.unwrap();
    assert!(many >= 5.0, "{many}");
    let one = probe_sim("kingston-dti").parallelism.value.unwrap();
    assert_eq!(one, 1.0);
}

#[test]
fn a_knee_reached_linearly_is_sharp_and_one_reached_by_bending_is_gradual() {
    // (depth, IOs per second). One serial stage: linear to depth 4, then flat.
    let one_stage = [
        (1, 9000.0),
        (2, 17900.0),
        (4, 33000.0),
        (8, 35000.0),
        (16, 35000.0),
    ];
    assert!(matches!(read_qd_knee(&one_stage), Knee::Sharp(_)));
    // Ten dies: every doubling gains less than the one before.
    let dies = [
        (1, 4000.0),
        (2, 7600.0),
        (4, 13800.0),
        (8, 23000.0),
        (16, 33000.0),
        (32, 38000.0),
        (64, 38500.0),
    ];
    assert!(matches!(read_qd_knee(&dies), Knee::Gradual(_)));
    // Still climbing at the deepest depth: no plateau, so not sharp.
    let climbing = [(1, 1000.0), (2, 2000.0), (4, 4000.0)];
    assert!(!matches!(read_qd_knee(&climbing), Knee::Sharp(_)));
    // One command at a time: nothing to read.
    assert_eq!(read_qd_knee(&[(1, 1000.0)]), Knee::Flat);
}

#[test]
fn a_queue_depth_curve_capped_by_one_controller_core_is_not_read_as_dies() {
    // intel-x25e: 20 dies behind one controller core that processes one
    // command at a time (controller_cores = 1): the speed-up stops near x4.
    let r = probe_sim("intel-x25e");
    assert_eq!(
        r.qd_limit,
        Some(QdLimit::PerCommand),
        "{}",
        r.parallelism.reading
    );
    assert_eq!(r.parallelism.evidence.len(), 2, "the two request sizes");
    // ssd-m: 10 dies, no controller limit: the curve bends as dies collide.
    let r = probe_sim("ssd-m");
    assert_eq!(r.qd_limit, Some(QdLimit::Dies), "{}", r.parallelism.reading);
}

#[test]
fn a_queue_depth_curve_capped_by_a_slow_link_is_read_as_per_byte() {
    // ssd-m's 10 dies behind a 20 MB/s link: 4 KiB take 205 us on the link,
    // more than a die's read; 1 KiB reads cross it four times as fast.
    let mut cfg = flashlab_sim::profiles::builtin("ssd-m").unwrap();
    cfg.host.mb_per_s = 20.0;
    cfg.host.controller_cores = 0;
    let mut dev = flashlab_sim::SimDevice::new(cfg, "sim:slow-link".into(), 1, 64).unwrap();
    let size = dev.info().size_bytes;
    let r = probe(
        &mut dev,
        &ProbeOptions {
            writes: Some(ByteRange {
                offset_bytes: 0,
                len_bytes: size,
            }),
            region_bytes: 16 << 20,
            ..Default::default()
        },
    )
    .unwrap();
    assert_eq!(
        r.qd_limit,
        Some(QdLimit::PerByte),
        "{}",
        r.parallelism.reading
    );
}

/// A device that records every write, to check where they went.
struct Recording<D> {
    inner: D,
    writes: Rc<RefCell<Vec<(u64, u32)>>>,
}

impl<D: Device> Device for Recording<D> {
    fn info(&self) -> &DeviceInfo {
        self.inner.info()
    }
    fn now_ns(&self) -> Nanos {
        self.inner.now_ns()
    }
    fn max_outstanding(&self) -> usize {
        self.inner.max_outstanding()
    }
    fn submit(&mut self, req: IoRequest) -> Result<(), DeviceError> {
        if req.mode.modifies() {
            self.writes
                .borrow_mut()
                .push((req.offset_bytes, req.size_bytes));
        }
        self.inner.submit(req)
    }
    fn poll(&mut self, d: Option<Nanos>, out: &mut Vec<Completion>) -> Result<(), DeviceError> {
        self.inner.poll(d, out)
    }
    fn idle_until(&mut self, d: Nanos) -> Result<(), DeviceError> {
        self.inner.idle_until(d)
    }
    fn quiesce_at_ns(&self) -> Option<Nanos> {
        self.inner.quiesce_at_ns()
    }
    fn set_write_cache(&mut self, enabled: bool) -> Result<(), DeviceError> {
        self.inner.set_write_cache(enabled)
    }
}

#[test]
fn writes_stay_inside_the_allowed_range_and_read_only_writes_nothing() {
    let writes = Rc::new(RefCell::new(Vec::new()));
    let mut dev = Recording {
        inner: flashlab_sim::open_device("ssd-m", 1, 64).unwrap(),
        writes: writes.clone(),
    };
    let range = ByteRange {
        offset_bytes: 100 << 20,
        len_bytes: 64 << 20,
    };
    let r = probe(
        &mut dev,
        &ProbeOptions {
            writes: Some(range),
            ..Default::default()
        },
    )
    .unwrap();
    assert!(!writes.borrow().is_empty());
    for &(o, s) in writes.borrow().iter() {
        assert!(
            range.contains(o, s as u64),
            "write at {o}+{s} outside {range:?}"
        );
    }
    assert_eq!(
        r.written_bytes,
        writes.borrow().iter().map(|w| w.1 as u64).sum::<u64>()
    );

    writes.borrow_mut().clear();
    let r = probe(&mut dev, &ProbeOptions::default()).unwrap();
    assert!(writes.borrow().is_empty());
    assert!(r
        .erase_unit_bytes
        .reading
        .starts_with("not measured: read-only"));
    assert!(
        r.parallelism.value.is_some(),
        "reads are measured read-only"
    );
}

#[test]
fn a_budget_that_runs_out_leaves_the_rest_not_measured() {
    let mut dev = flashlab_sim::open_device("kingston-dti", 1, 64).unwrap();
    let r = probe(
        &mut dev,
        &ProbeOptions {
            writes: Some(ByteRange {
                offset_bytes: 0,
                len_bytes: 1 << 30,
            }),
            // Simulated time: the fill alone takes about 30 s on this USB stick.
            budget_ns: 5_000_000_000,
            ..Default::default()
        },
    )
    .unwrap();
    assert!(r.elapsed_ns < 10_000_000_000, "{}", r.elapsed_ns);
    assert_eq!(r.ftl_family.reading, "not measured: the budget ran out");
}
