//! Device mode: checkpoint + log replay reproduces the device exactly.

use flashlab_device::{IoRequest, Mode};
use flashlab_sim::{resolve_spec, SimDevice};

struct Lcg(u64);
impl Lcg {
    fn next(&mut self) -> u64 {
        self.0 = self
            .0
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        self.0 >> 33
    }
}

fn run(spec: &str) {
    let cfg = resolve_spec(spec).unwrap();
    let mk = |data: Option<&[u8]>| match data {
        None => SimDevice::new(cfg.clone(), "t".into(), 7, 64).unwrap(),
        Some(d) => SimDevice::restore(cfg.clone(), "t".into(), 7, 64, d).unwrap(),
    };
    let mut live = mk(None);
    let size = live.geometry().logical_pages * live.geometry().page_bytes;
    let mut rng = Lcg(42);
    let mut t = 0u64;
    let mut last_ckpt: Option<Vec<u8>> = None;
    let mut log: Vec<(IoRequest, u64)> = Vec::new();
    for i in 0..60_000u64 {
        // mostly back-to-back, sometimes an idle gap (background GC)
        t += if rng.next().is_multiple_of(500) {
            200_000_000
        } else {
            rng.next() % 50_000
        };
        let r = rng.next() % 100;
        let mode = if r < 60 {
            Mode::Write
        } else if r < 95 {
            Mode::Read
        } else {
            Mode::Trim
        };
        let sectors = 1 + rng.next() % 64;
        let size_bytes = (sectors * 512) as u32;
        let off = (rng.next() % (size / 512 - sectors)) * 512;
        let req = IoRequest {
            tag: i,
            offset_bytes: off,
            size_bytes,
            mode,
        };
        live.issue_at(req, t).unwrap();
        log.push((req, t));
        if i % 9_000 == 8_999 {
            let snap = live.checkpoint().unwrap();
            live = mk(Some(&snap));
            last_ckpt = Some(snap);
            log.clear();
        }
    }
    let mut rec = mk(last_ckpt.as_deref());
    for (req, t) in &log {
        rec.issue_at(*req, *t).unwrap();
    }
    let a = live.checkpoint().unwrap();
    let b = rec.checkpoint().unwrap();
    assert!(a == b, "recovered device differs from the live one");
    assert!(
        live.accounting().gc_foreground + live.accounting().gc_background > 0,
        "test must exercise GC"
    );
    live.check().unwrap();
}

#[test]
fn checkpoint_and_log_replay_reproduce_the_device_greedy() {
    run("ssd-m,capacity=256MiB,channels=2,check=off");
}

#[test]
fn checkpoint_and_log_replay_reproduce_the_device_fifo_wl_bg() {
    run("ssd-h,capacity=64MiB,channels=2,gc=fifo,wl=4,bg_gc=on");
}

#[test]
fn checkpoint_and_log_replay_reproduce_the_device_multi_plane() {
    run("ssd-m,capacity=256MiB,channels=2,geometry.planes_per_die=4,multi_plane=on,check=off");
}

#[test]
fn damaged_checkpoint_is_refused() {
    let cfg = resolve_spec("ssd-m,capacity=256MiB,channels=2").unwrap();
    let dev = SimDevice::new(cfg.clone(), "t".into(), 1, 4).unwrap();
    let mut snap = dev.checkpoint().unwrap();
    let n = snap.len();
    snap[n / 2] ^= 1;
    assert!(SimDevice::restore(cfg.clone(), "t".into(), 1, 4, &snap).is_err());
    assert!(
        SimDevice::restore(cfg.clone(), "t".into(), 2, 4, &dev.checkpoint().unwrap()).is_err(),
        "other seed"
    );
    assert!(SimDevice::restore(cfg, "t".into(), 1, 4, &snap[..100]).is_err());
}

/// A restored device continues exactly like the original (checked where the
/// timing state a checkpoint drops cannot matter: arrivals after the device
/// has quiesced, no read-ahead, no idle-time GC). Catches any FTL or policy
/// state that the checkpoint forgets.
#[test]
fn restored_device_continues_like_the_original() {
    for spec in [
        "ssd-h,capacity=64MiB,channels=2,gc=fifo,wl=4,bg_gc=off,ra=off",
        "ssd-m,capacity=128MiB,channels=2,op=0.3,gc=cost-benefit,bg_gc=off,ra=off",
        // the plane cursors are rebuilt from the open blocks
        "ssd-m,capacity=128MiB,channels=2,op=0.3,bg_gc=off,ra=off,geometry.planes_per_die=4,multi_plane=on",
        // the map-synchronisation buffer: a restored device flushes its dirty
        // map pages at the same write as the original
        "ssd-m,capacity=128MiB,channels=2,op=0.3,bg_gc=off,ra=off,ftl.sync.enabled=true,ftl.sync.dirty_limit=40",
        // lazy cleaning: the victim each die is part way through
        // (the step in the write-back: this open-loop load overruns a device
        // whose writes wait for their steps, gc.incremental_synchronous)
        "ssd-m,capacity=128MiB,channels=2,op=0.1,gc=fifo,bg_gc=off,ra=off,gc.incremental=true,gc.incremental_synchronous=false",
    ] {
        // constant service times: a device that goes on without a restore
        // draws other times than a restored one (the checkpoint keeps no
        // generator state; `two_restores_of_one_checkpoint_draw_the_same_times`)
        let spec = format!("{spec},nand.program_ns_by_page_kind=");
        let spec = spec.as_str();
        let cfg = resolve_spec(spec).unwrap();
        let mut orig = SimDevice::new(cfg.clone(), "t".into(), 3, 4).unwrap();
        let size = orig.geometry().logical_pages * orig.geometry().page_bytes;
        let mut rng = Lcg(9);
        let mut t = 0u64;
        let step = |dev: &mut SimDevice, rng: &mut Lcg, t: &mut u64, i: u64| {
            *t += rng.next() % 10_000_000;
            let r = rng.next() % 100;
            let mode = if r < 70 {
                Mode::Write
            } else if r < 95 {
                Mode::Read
            } else {
                Mode::Trim
            };
            let sectors = 8 * (1 + rng.next() % 8);
            let off = (rng.next() % (size / 4096 - 8)) * 4096;
            let req = IoRequest {
                tag: i,
                offset_bytes: off,
                size_bytes: (sectors * 512) as u32,
                mode,
            };
            dev.issue_at(req, *t).unwrap();
        };
        for i in 0..40_000 {
            step(&mut orig, &mut rng, &mut t, i);
        }
        let mut copy =
            SimDevice::restore(cfg.clone(), "t".into(), 3, 4, &orig.checkpoint().unwrap()).unwrap();
        t = orig.quiesce_at() + 1;
        let (mut rng_a, mut rng_b) = (Lcg(77), Lcg(77));
        let (mut ta, mut tb) = (t, t);
        for i in 0..40_000 {
            step(&mut orig, &mut rng_a, &mut ta, i);
            step(&mut copy, &mut rng_b, &mut tb, i);
        }
        assert!(orig.accounting().flash_erases.iter().sum::<u64>() > 0);
        assert!(
            orig.checkpoint().unwrap() == copy.checkpoint().unwrap(),
            "{spec}: restored device diverged"
        );
    }
}

/// With service-time variance (`[nand]` page kinds, spreads, read retries) a
/// restored device reseeds its dies' streams from the seed and the restored
/// time: what `flashlab serve` relies on (it replaces its live device by
/// `restore(checkpoint())`, so a recovery from that checkpoint draws the same).
#[test]
fn two_restores_of_one_checkpoint_draw_the_same_times() {
    let spec = "ssd-m,capacity=128MiB,channels=2,op=0.3,bg_gc=off,ra=off,ftl.sync.enabled=true,nand.program_spread=0.1,nand.erase_spread=0.1,nand.read_retry_probability=0.1";
    let cfg = resolve_spec(spec).unwrap();
    let mut orig = SimDevice::new(cfg.clone(), "t".into(), 3, 4).unwrap();
    let size = orig.geometry().logical_pages * orig.geometry().page_bytes;
    let run = |dev: &mut SimDevice, seed: u64, from: u64| -> Vec<u64> {
        let mut rng = Lcg(seed);
        let mut t = from;
        (0..20_000)
            .map(|i| {
                t += rng.next() % 2_000_000;
                let mode = if rng.next() % 10 < 7 {
                    Mode::Write
                } else {
                    Mode::Read
                };
                let off = (rng.next() % (size / 4096)) * 4096;
                let req = IoRequest {
                    tag: i,
                    offset_bytes: off,
                    size_bytes: 4096,
                    mode,
                };
                dev.issue_at(req, t).unwrap()
            })
            .collect()
    };
    run(&mut orig, 5, 0);
    let cp = orig.checkpoint().unwrap();
    let from = orig.quiesce_at() + 1;
    let mut a = SimDevice::restore(cfg.clone(), "t".into(), 3, 4, &cp).unwrap();
    let mut b = SimDevice::restore(cfg.clone(), "t".into(), 3, 4, &cp).unwrap();
    assert_eq!(run(&mut a, 6, from), run(&mut b, 6, from));
    assert!(a.checkpoint().unwrap() == b.checkpoint().unwrap());
}
