//! Prints the probe's estimates and curves for simulated profiles:
//! `cargo run --release -p flashlab-probe --example probe_sim -- ssd-m kingston-dti`.
fn main() {
    for spec in std::env::args().skip(1) {
        let mut dev = flashlab_sim::open_device(&spec, 1, 64).expect("profile");
        let size = flashlab_device::Device::info(&dev).size_bytes;
        let opts = flashlab_probe::ProbeOptions {
            writes: Some(flashlab_probe::ByteRange {
                offset_bytes: 0,
                len_bytes: size,
            }),
            ..Default::default()
        };
        let t = std::time::Instant::now();
        let r = flashlab_probe::probe(&mut dev, &opts).expect("probe");
        println!(
            "== {spec}: {:.1} s wall, {:.1} s device",
            t.elapsed().as_secs_f64(),
            r.elapsed_ns as f64 / 1e9
        );
        for (name, e) in r.estimates() {
            println!("  {name}: {:?} {} — {}", e.value, e.unit, e.reading);
            if std::env::var("CURVES").is_ok() {
                for c in &e.evidence {
                    print!("{}", flashlab_probe::render_curve(c));
                }
            }
        }
    }
}
