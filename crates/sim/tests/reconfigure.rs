//! `Device::reconfigure`: a suite compares device designs on one executor by
//! rebuilding the simulator from its own spec plus overrides.

use flashlab_device::{Device, DeviceError, IoRequest, Mode};

fn write_one(dev: &mut flashlab_sim::SimDevice) {
    dev.submit(IoRequest {
        tag: 1,
        offset_bytes: 0,
        size_bytes: 4096,
        mode: Mode::Write,
    })
    .unwrap();
    let mut out = Vec::new();
    while out.is_empty() {
        dev.poll(None, &mut out).unwrap();
    }
}

#[test]
fn reconfigure_gives_a_fresh_device_of_the_new_design_and_keeps_its_name() {
    let mut dev = flashlab_sim::open_device("budilovsky11,capacity=128MiB", 7, 4).unwrap();
    write_one(&mut dev);
    assert!(dev.now_ns() > 0);
    let name = dev.info().name.clone();
    dev.reconfigure("chunk_entries=0,hints=off,prefill=on")
        .unwrap();
    assert_eq!(dev.info().name, name);
    assert_eq!(dev.now_ns(), 0, "a fresh device starts at time 0");
    assert_eq!(dev.config().ftl.chunk_entries, 0);
    assert!(!dev.config().ftl.hints.enabled);
    assert!(dev.config().ftl.prefill);
    assert_eq!(dev.accounting().host_requests(), 0);
    // The chip-time breakdown is in the two-level FTL's statistics.
    write_one(&mut dev);
    let stats = dev.stats_json().unwrap();
    assert!(stats["two_level_chip_time"]["total_ns"].as_f64().unwrap() > 0.0);
}

#[test]
fn reconfigure_refuses_a_new_capacity_and_a_bad_key() {
    let mut dev = flashlab_sim::open_device("budilovsky11,capacity=128MiB", 7, 4).unwrap();
    assert!(matches!(
        dev.reconfigure("capacity=256MiB"),
        Err(DeviceError::InvalidRequest(_))
    ));
    let e = dev.reconfigure("bogus=1").unwrap_err().to_string();
    assert!(e.contains("bogus"), "{e}");
    // A failed reconfigure leaves the device as it was.
    assert_eq!(dev.config().ftl.chunk_entries, 64);
}
