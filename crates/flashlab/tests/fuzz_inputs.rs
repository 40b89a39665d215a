//! The fuzz targets of `fuzz/` on the stable toolchain: every input parser
//! that reads what comes from outside (trace files in six formats, the
//! tracer's raw ring-buffer pages and trace_pipe text, pattern TOML, fio
//! job files, simulator profiles) runs on its seed corpus and on random
//! mutations of it for a fixed time per target (`FLASHLAB_FUZZ_SECS`,
//! default 2). A panic fails the test and prints the input that caused it,
//! as hex, so that it can be added to the corpus. cargo-fuzz runs the same
//! entry points with coverage guidance (see fuzz/README.md).

use std::panic::{catch_unwind, AssertUnwindSafe};
use std::time::{Duration, Instant};

/// A small deterministic generator (xorshift): the same mutations each run.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n.max(1) as u64) as usize
    }
}

/// Values that break arithmetic: zeros, powers of two, the edges of 32 and
/// 64 bits, negative numbers, units and separators the parsers know.
const INTERESTING: &[&str] = &[
    "0",
    "1",
    "-1",
    "511",
    "512",
    "4096",
    "4294967295",
    "4294967296",
    "18446744073709551615",
    "18446744073709551616",
    "9223372036854775807",
    "-9223372036854775808",
    "1e309",
    "NaN",
    "inf",
    "0x",
    "KiB",
    "GB",
    "PiB",
    "ms",
    "us",
    "\"",
    "[",
    "]",
    "=",
    ",",
    ":",
    " ",
    "\t",
    "\n",
    "\u{0}",
    "é",
    "[[run]]",
    "[global]",
];

fn mutate(rng: &mut Rng, corpus: &[Vec<u8>]) -> Vec<u8> {
    let mut input = corpus[rng.below(corpus.len())].clone();
    for _ in 0..1 + rng.below(6) {
        let at = rng.below(input.len() + 1);
        let last = input.len().saturating_sub(1);
        match rng.below(7) {
            0 if !input.is_empty() => input[at.min(last)] = rng.next() as u8,
            1 if !input.is_empty() => input[at.min(last)] ^= 1 << rng.below(8),
            2 => input.truncate(at),
            3 => {
                let end = (at + rng.below(16)).min(input.len());
                input.drain(at..end);
            }
            4 => {
                let word = INTERESTING[rng.below(INTERESTING.len())].as_bytes();
                input.splice(at..at, word.iter().copied());
            }
            5 => {
                // Replace a number-like run of bytes with an interesting value.
                let end = input[at..]
                    .iter()
                    .position(|b| !b.is_ascii_alphanumeric())
                    .map_or(input.len(), |n| at + n);
                let word = INTERESTING[rng.below(INTERESTING.len())].as_bytes();
                input.splice(at..end, word.iter().copied());
            }
            _ => {
                // Splice a piece of another corpus entry in.
                let other = &corpus[rng.below(corpus.len())];
                let from = rng.below(other.len() + 1);
                let end = (from + rng.below(64)).min(other.len());
                input.splice(at..at, other[from..end].iter().copied());
            }
        }
    }
    input
}

fn seconds() -> u64 {
    std::env::var("FLASHLAB_FUZZ_SECS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(2)
}

/// Runs `target` on every corpus entry, then on mutations until the time is
/// up. Returns the inputs run; panics (with the input) on the first failure.
fn fuzz(name: &str, corpus: Vec<Vec<u8>>, target: fn(&[u8]) -> usize) -> (u64, usize) {
    let run = |input: &[u8]| {
        catch_unwind(AssertUnwindSafe(|| target(input))).unwrap_or_else(|_| {
            let hex: String = input.iter().map(|b| format!("{b:02x}")).collect();
            panic!(
                "{name}: the input below panicked (hex; add it to the corpus once fixed):\n{hex}"
            )
        })
    };
    let mut productive = 0;
    for seed in &corpus {
        productive += usize::from(run(seed) > 0);
    }
    let mut rng = Rng(0x5eed_f022 ^ name.len() as u64);
    let t0 = Instant::now();
    let mut inputs = corpus.len() as u64;
    while t0.elapsed() < Duration::from_secs(seconds()) {
        for _ in 0..64 {
            run(&mutate(&mut rng, &corpus));
            inputs += 1;
        }
    }
    eprintln!(
        "{name}: {inputs} inputs, {productive} of {} seeds productive",
        corpus.len()
    );
    (inputs, productive)
}

fn repo_file(path: &str) -> Vec<u8> {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    std::fs::read(root.join(path)).unwrap_or_else(|e| panic!("{path}: {e}"))
}

#[test]
fn trace_files_in_every_format_never_panic() {
    // One well-formed sample per format; each must parse (in its own format).
    let tpcc: String = String::from_utf8(repo_file("../shared/traces/tpcc-small.trace"))
        .unwrap()
        .lines()
        .take(64)
        .map(|l| format!("{l}\n"))
        .collect();
    let corpus: Vec<Vec<u8>> = [
        "# time_ns op offset_bytes size_bytes\n0 W 0 4096\n1000 R 4096 8192\n2000 T 0 4096\n3000 F 0 0\n",
        "  8,0    1        1     0.000000000  1234  D  WS 2048 + 8 [postgres]\n  8,0    1        2     0.000100000  1234  D   R 4096 + 16 [postgres]\n",
        "fio version 2 iolog\n/dev/sdb add\n/dev/sdb open\n/dev/sdb write 0 4096\n/dev/sdb read 8192 4096\n/dev/sdb close\n",
        "0 0 2048 8 1\n1000 0 4096 16 0\n",
        "0.000 0 2048 8 1\n1.500 0 4096 16 0\n",
        "128166372003061629,src1,0,Write,7014609920,24576,41286\n128166372016382155,src1,0,Read,1317441536,8192,1963\n",
        tpcc.as_str(),
    ]
    .iter()
    .map(|s| s.as_bytes().to_vec())
    .collect();
    let (_, productive) = fuzz("trace_parsers", corpus, flashlab_trace::fuzz::every_format);
    assert!(
        productive >= 6,
        "the seed traces should parse: {productive} of 7 did"
    );
}

#[test]
fn raw_trace_pages_never_panic() {
    let page = flashlab_iotrace::fuzz::sample_raw_page();
    assert!(
        flashlab_iotrace::fuzz::raw_page(&page) > 0,
        "the sample page decodes"
    );
    fuzz(
        "iotrace_raw_page",
        vec![page],
        flashlab_iotrace::fuzz::raw_page,
    );
}

#[test]
fn trace_pipe_text_never_panics() {
    let corpus = vec![flashlab_iotrace::fuzz::SAMPLE_PIPE_TEXT.as_bytes().to_vec()];
    let (_, productive) = fuzz(
        "iotrace_pipe_text",
        corpus,
        flashlab_iotrace::fuzz::pipe_text,
    );
    assert_eq!(productive, 1, "the sample lines parse");
}

#[test]
fn pattern_files_never_panic_and_plan_inside_the_device() {
    let corpus: Vec<Vec<u8>> = vec![
        b"[defaults]\nio_size = \"32KiB\"\ntarget_size = \"16MiB\"\n\n[[run]]\npattern = \"RW\"\nio_ignore = 128\nio_count = 5120\n\n[[run]]\nname = \"rw-pause\"\npattern = \"RW\"\ntime = \"pause:1ms\"\n\n[[run]]\npattern = \"SR\"\nmix = \"RW\"\nratio = \"4:1\"\n".to_vec(),
        b"[[run]]\npattern = \"SW\"\nio_size = \"4KiB\"\nio_shift = \"512B\"\nlocality = \"zipf:1.2\"\n".to_vec(),
        repo_file("crates/flashlab/tests/bad_input/pattern_huge_ratio.toml"),
        repo_file("crates/flashlab/tests/bad_input/pattern_count_past_2_64.toml"),
    ];
    let (_, productive) = fuzz("pattern_toml", corpus, flashlab_pattern::fuzz::pattern_file);
    assert!(productive >= 1, "the README's pattern file plans IOs");
}

#[test]
fn fio_job_files_never_panic_and_plan_inside_the_device() {
    let corpus = vec![
        repo_file("examples/fio/randread.fio"),
        repo_file("examples/fio/bssplit.fio"),
        repo_file("bench/fio/compare.fio"),
        // Found by this test in CI: a bssplit size of u64::MAX overflowed
        // the mean IO size (size x percent).
        b"[mixed-sizes]\nrw=randread\nsize=16m\niodepth=4\nbssplit=4k/50:18446744073709551615/50\n"
            .to_vec(),
    ];
    let (_, productive) = fuzz("fio_job", corpus, flashlab_pattern::fuzz::fio_job_file);
    assert!(productive >= 1, "the example job files plan IOs");
}

#[test]
fn simulator_profiles_never_panic() {
    // Every built-in profile, shrunk to a few MiB on two dies so that the
    // fuzzer drives it (mutations of the geometry explore the rest), with
    // the smallest over-provisioning that leaves its FTL the blocks it needs.
    let corpus: Vec<Vec<u8>> = flashlab_sim::profiles::BUILTIN
        .iter()
        .filter_map(|(name, _)| {
            ["0.25", "0.5", "1.0"].iter().find_map(|op| {
                let spec = format!(
                    "{name},capacity=8MiB,channels=2,geometry.chips_per_channel=1,geometry.dies_per_chip=1,ftl.stripe_dies=0,op={op}"
                );
                flashlab_sim::resolve_spec(&spec).ok().map(|cfg| cfg.to_toml().into_bytes())
            })
        })
        .collect();
    assert!(
        corpus.len() >= 12,
        "only {} built-in profiles shrink to 8 MiB",
        corpus.len()
    );
    let seeds = corpus.len();
    let opened = |data: &[u8]| usize::from(flashlab_sim::fuzz::profile(data));
    let (_, productive) = fuzz("sim_profile", corpus, opened);
    assert_eq!(
        productive, seeds,
        "every shrunk profile that validates opens and runs"
    );
}
