//! A random valid device from one seed: a built-in profile as the base, then
//! FTL, GC policy, geometry, cache, over-provisioning, scheduling and
//! variance mechanisms. The swarm test (tests/swarm.rs) and the checker's
//! property test (tests/checker.rs) draw their devices from here.

use super::Rng;
use flashlab_sim::profiles::BUILTIN;

/// A simulated request may take at most this long before the seed fails as a
/// stall. The worst legitimate case in a 4-32 MiB device is a full merge of a
/// large block on the slowest profile; a minute of simulated time is far
/// beyond that and far below the 653 s stalls the fidelity audit found.
pub const STALL_NS: u64 = 60_000_000_000;

/// One randomly chosen device: the spec string (profile plus overrides) is
/// exactly what a user would pass to `--device sim:...`.
pub fn device_spec(rng: &mut Rng) -> String {
    let (base, _) = BUILTIN[rng.below(BUILTIN.len() as u64) as usize];
    let mut o: Vec<String> = vec![base.to_string()];
    let mut set = |k: &str, v: String| o.push(format!("{k}={v}"));

    let channels = [1u32, 2, 4][rng.below(3) as usize];
    let chips = 1 + rng.below(2) as u32;
    let planes = [1u32, 2, 4][rng.below(3) as usize];
    let pages_per_block = [16u32, 32, 64][rng.below(3) as usize];
    let page_bytes = [2048u64, 4096, 8192, 16384][rng.below(4) as usize];
    let block_bytes = page_bytes * pages_per_block as u64;
    let dies = (channels * chips) as u64;
    // At least 24 blocks per plane so that every FTL has room for its log
    // blocks and GC reserve; at most 32 MiB so that a seed runs in
    // milliseconds with the checker on.
    let min_blocks = 24 * dies * planes as u64;
    let max_blocks = ((32u64 << 20) / block_bytes).max(min_blocks);
    let blocks = min_blocks + rng.below(max_blocks - min_blocks + 1);
    set("geometry.channels", channels.to_string());
    set("geometry.chips_per_channel", chips.to_string());
    set("geometry.dies_per_chip", "1".into());
    set("geometry.planes_per_die", planes.to_string());
    set("geometry.pages_per_block", pages_per_block.to_string());
    set("geometry.page_bytes", page_bytes.to_string());
    set("geometry.capacity", (blocks * block_bytes).to_string());
    let ftl = ["page", "block", "bast", "fast", "dftl", "two-level"][rng.below(6) as usize];
    set("ftl.kind", ftl.into());
    if matches!(ftl, "bast" | "fast") {
        set("ftl.log_blocks", (2 + rng.below(7)).to_string());
    }
    if matches!(ftl, "block" | "bast" | "fast") {
        // 0 stripes a superblock over every die; the generated die count
        // need not be a multiple of the base profile's stripe.
        set("ftl.stripe_dies", "0".into());
    }
    if ftl == "two-level" {
        set("ftl.hints.enabled", coin(rng).into());
    } else {
        set("ftl.hints.enabled", "off".into());
    }
    set(
        "gc.policy",
        ["greedy", "cost-benefit", "fifo"][rng.below(3) as usize].into(),
    );
    set("gc.background", coin(rng).into());
    set(
        "wear.static_threshold",
        [0u32, 2, 8][rng.below(3) as usize].to_string(),
    );
    set("wear.check_interval", (1 + rng.below(8)).to_string());

    match rng.below(3) {
        0 => set("cache", "off".into()),
        1 => set("cache", "on".into()),
        _ => set("cache", format!("{}KiB", 64 << rng.below(6))),
    }
    // Multi-plane programs open a host and a GC block per plane (ftl/page.rs);
    // it once looped forever in foreground GC when those ate the spare space.
    set("nand.multi_plane", coin(rng).into());
    set("readahead.enabled", coin(rng).into());
    set("sched.read_priority", coin(rng).into());
    set(
        "sched.suspend",
        ["off", "erase", "program-erase"][rng.below(3) as usize].into(),
    );
    set("host.queue_depth", (1 + rng.below(32)).to_string());
    // Service-time variance: seeded, so determinism must survive it.
    set(
        "nand.program_spread",
        format!("{:.2}", rng.below(30) as f64 / 100.0),
    );
    set(
        "nand.read_retry_probability",
        format!("{:.3}", rng.below(50) as f64 / 1000.0),
    );
    set("check.enabled", "on".into());
    set("check.stall_ns", STALL_NS.to_string());
    // Over-provisioning last: the smallest of a random start and the values
    // above it that leaves the chosen FTL its spare, log and merge blocks.
    // (The generator asks the simulator's own validation rather than
    // re-deriving every FTL's space rule; `every_generated_device_is_a_valid_profile`
    // checks that a valid choice always exists.)
    let ops = [0.07, 0.12, 0.25, 0.4, 0.7, 1.0];
    let start = rng.below(4) as usize;
    let spec = o.join(",");
    for op in &ops[start..] {
        let candidate = format!("{spec},geometry.over_provisioning={op}");
        if flashlab_sim::resolve_spec(&candidate).is_ok() {
            return candidate;
        }
    }
    format!("{spec},geometry.over_provisioning={}", ops[ops.len() - 1])
}

pub fn coin(rng: &mut Rng) -> &'static str {
    if rng.below(2) == 0 {
        "off"
    } else {
        "on"
    }
}
