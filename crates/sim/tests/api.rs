//! The public API: specs, overrides, errors, DeviceInfo, request validation, time, stalls.
mod common;

use common::*;
use flashlab_device::{ClockKind, Device, DeviceError, DeviceKind, IoRequest, Mode};
use flashlab_sim::{open_device, profile_toml, profiles, ConfigError, SimConfig, SimError};

#[test]
fn profiles_listed_and_printable() {
    let list = profiles();
    let names: Vec<_> = list.iter().map(|p| p.name).collect();
    assert!(names.contains(&"ssd-m") && names.contains(&"ssd-h") && names.contains(&"nvme-tlc"));
    for p in &list {
        assert!(!p.description.is_empty() && !p.description.contains('\n'));
        let text = profile_toml(p.name).unwrap();
        let cfg = SimConfig::from_toml(&text, p.name).unwrap();
        cfg.validate().unwrap();
        assert!(!cfg.source.is_empty() && !cfg.behaviour.is_empty());
    }
    let e = profile_toml("nope").unwrap_err();
    assert!(matches!(e, ConfigError::UnknownProfile { .. }), "{e:?}");
    assert!(e.to_string().contains("flashlab sim profiles"));
}

#[test]
fn errors_are_one_line_with_a_fix() {
    for (spec, needle) in [
        ("ssd-x", "unknown simulator profile 'ssd-x'"),
        ("ssd-m,capacity", "no value"),
        ("ssd-m,bogus=3", "bogus"),
        ("ssd-m,op=-1", "over_provisioning"),
        ("ssd-m,capacity=12XB", "size unit"),
        ("ssd-m,gc=lru", "gc"),
        ("./does-not-exist.toml", "cannot read"),
        ("ssd-m,capacity=64MiB", "spare blocks"),
    ] {
        let e = open_device(spec, 0, 1)
            .err()
            .unwrap_or_else(|| panic!("{spec} should fail"));
        // A bad spec is the user's configuration, never a device failure.
        assert!(matches!(e, SimError::Config(_)), "{spec}: {e:?}");
        let e = e.to_string();
        assert!(e.contains(needle), "{spec}: {e}");
        assert!(!e.contains('\n'), "{spec}: multi-line error {e}");
    }
}

#[test]
fn overrides_and_info() {
    let d = open_device(
        "ssd-m,capacity=2GiB,op=0.15,cache=off,check=on,gc=fifo,qd=4",
        3,
        16,
    )
    .unwrap();
    let info = d.info();
    assert_eq!(
        info.name,
        "sim:ssd-m,capacity=2GiB,op=0.15,cache=off,check=on,gc=fifo,qd=4"
    );
    assert_eq!(info.kind, DeviceKind::Simulated);
    assert_eq!(info.clock, ClockKind::Simulated);
    assert_eq!(info.size_bytes, 2 << 30);
    assert_eq!(info.logical_block_bytes, 512);
    assert_eq!(info.identity["profile"], "ssd-m");
    assert_eq!(info.identity["cache"], "off");
    assert_eq!(info.identity["gc_policy"], "fifo");
    assert_eq!(info.identity["seed"], "3");
    assert_eq!(d.max_outstanding(), 16);
    let c = d.config();
    assert!(!c.cache.enabled && c.check.enabled && c.host.queue_depth == 4);
    assert!((c.geometry.over_provisioning - 0.15).abs() < 1e-12);
    let d = open_device("ssd-m,cache=16MiB", 3, 1).unwrap();
    assert_eq!(d.config().cache.size.0, 16 << 20);
}

#[test]
fn toml_file_profile() {
    let mut text = profile_toml("ssd-h").unwrap();
    text = text.replace("name = \"ssd-h\"", "name = \"mine\"");
    let path = std::env::temp_dir().join(format!("flashlab-sim-test-{}.toml", std::process::id()));
    std::fs::write(&path, &text).unwrap();
    let spec = format!("{},capacity=512MiB", path.display());
    let d = open_device(&spec, 0, 1).unwrap();
    assert_eq!(d.info().identity["profile"], "mine");
    std::fs::write(&path, text.replace("[host]", "[host]\nturbo = true")).unwrap();
    let e = open_device(path.to_str().unwrap(), 0, 1).err().unwrap();
    assert!(
        matches!(e, SimError::Config(ConfigError::ProfileSyntax { .. })),
        "{e:?}"
    );
    assert!(e.to_string().contains("turbo"), "{e}");
    std::fs::remove_file(&path).ok();
}

#[test]
fn request_validation_and_outstanding_limit() {
    let mut d = open_device("ssd-h,capacity=256MiB", 0, 2).unwrap();
    let size = d.info().size_bytes;
    let bad = [(1, 512), (0, 100), (0, 0), (size - 512, 1024)];
    for (offset, len) in bad {
        let r = d.submit(IoRequest {
            tag: 0,
            offset_bytes: offset,
            size_bytes: len,
            mode: Mode::Read,
        });
        assert!(
            matches!(r, Err(DeviceError::InvalidRequest(_))),
            "{offset}+{len}"
        );
    }
    d.submit(IoRequest {
        tag: 1,
        offset_bytes: 0,
        size_bytes: 512,
        mode: Mode::Write,
    })
    .unwrap();
    d.submit(IoRequest {
        tag: 2,
        offset_bytes: 0,
        size_bytes: 512,
        mode: Mode::Write,
    })
    .unwrap();
    assert!(d
        .submit(IoRequest {
            tag: 3,
            offset_bytes: 0,
            size_bytes: 512,
            mode: Mode::Write
        })
        .is_err());
}

#[test]
fn time_is_simulated_and_owned_by_the_device() {
    let mut d = open_device("ssd-h,capacity=256MiB,cache=off", 0, 4).unwrap();
    assert_eq!(d.now_ns(), 0);
    let mut out = Vec::new();
    // nothing outstanding: poll waits for the deadline
    d.poll(Some(1_000), &mut out).unwrap();
    assert!(out.is_empty());
    assert_eq!(d.now_ns(), 1_000);
    d.submit(IoRequest {
        tag: 7,
        offset_bytes: 4096,
        size_bytes: 4096,
        mode: Mode::Write,
    })
    .unwrap();
    // the deadline comes before the completion: returns empty at the deadline
    d.poll(Some(2_000), &mut out).unwrap();
    assert!(out.is_empty());
    assert_eq!(d.now_ns(), 2_000);
    d.poll(None, &mut out).unwrap();
    assert_eq!(out.len(), 1);
    assert_eq!(out[0].tag, 7);
    assert_eq!(out[0].submit_ns, 1_000);
    assert_eq!(d.now_ns(), out[0].complete_ns);
    // 60 us overhead + 4 KiB at 300 MB/s + 4 KiB over the 25 ns/B bus + 250 us program
    let lat = out[0].latency_ns();
    assert!((400_000..500_000).contains(&lat), "{lat}");
    d.idle_until(d.now_ns() + 5_000).unwrap();
    assert_eq!(d.now_ns(), out[0].complete_ns + 5_000);
    // sub-page writes are read-modify-write of the flash page
    run(&mut d, [(4096 + 512, 512, Mode::Write)], 1);
    assert_eq!(d.accounting().rmw_reads, 1);
    let s = d.stats_json().unwrap();
    assert_eq!(s["flash"]["programs"]["mapping"], 0);
    assert_eq!(s["host"]["writes"], 2);
    assert!(
        s["chip_time_per_host_request_ns"]["data_write"]
            .as_f64()
            .unwrap()
            > 0.0
    );
    // The Device seam carries the same statistics typed.
    let typed = match Device::stats(&d) {
        flashlab_device::DeviceStats::Sim(t) => t,
        other => panic!("the simulator reported {other:?}"),
    };
    assert_eq!(typed.host.writes, 2);
    assert_eq!(typed.rmw_reads, 1);
    assert_eq!(typed.ftl, s["ftl"].as_str().unwrap());
    assert_eq!(serde_json::to_value(&*typed).unwrap(), s);
    d.reset_stats();
    assert_eq!(d.accounting().host_writes, 0);
    assert_eq!(Device::stats(&d).sim().unwrap().host.writes, 0);
}

#[test]
fn stall_fails_loudly_never_hangs() {
    // A request that cannot finish within check.stall_ns is a stall.
    let mut d = open_device("ssd-m,capacity=1GiB,cache=off,stall_ns=500000", 0, 4).unwrap();
    d.submit(IoRequest {
        tag: 1,
        offset_bytes: 0,
        size_bytes: 4096,
        mode: Mode::Write,
    })
    .unwrap();
    let mut out = Vec::new();
    let e = d.poll(None, &mut out).unwrap_err();
    match &e {
        DeviceError::Invariant(m) => assert!(m.contains("stall"), "{m}"),
        other => panic!("expected an invariant error, got {other}"),
    }
    // the device stays failed
    assert!(matches!(
        d.poll(None, &mut out),
        Err(DeviceError::Invariant(_))
    ));
    assert!(matches!(d.idle_until(10), Err(DeviceError::Invariant(_))));
    assert!(d
        .submit(IoRequest {
            tag: 2,
            offset_bytes: 0,
            size_bytes: 4096,
            mode: Mode::Read
        })
        .is_err());
}

#[test]
fn saturated_queue_with_a_full_cache_still_progresses() {
    // 32 outstanding random writes on a fragmented small device: slow, but every request completes.
    let mut d = open_device("ssd-m,capacity=1GiB", 0, 32).unwrap();
    seq_fill(&mut d, 256 * KIB);
    let size = d.info().size_bytes;
    let c = run(&mut d, random(3, size, 4 * KIB, 50_000, Mode::Write), 32);
    assert_eq!(c.len(), 50_000);
    assert!(
        c.windows(2).all(|w| w[0].complete_ns <= w[1].complete_ns),
        "completions out of time order"
    );
    d.check().unwrap();
}
