//! The probe against simulated devices whose true geometry is known: the
//! simulator is deterministic, so each figure here is exact, not a range
//! that happens to pass.

use std::cell::RefCell;
use std::rc::Rc;

use flashlab_device::{Completion, Device, DeviceError, DeviceInfo, IoRequest, Nanos};
use flashlab_probe::{probe, ByteRange, FtlFamily, ProbeOptions, ProbeReport};

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
