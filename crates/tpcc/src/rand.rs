//! Seeded random numbers and the TPC-C value generators (clause 2.1.4-2.1.6,
//! 4.3.2).
//!
//! Our own generator (SplitMix64), not the `rand` crate, so a seed loads the
//! same rows in every later version of the crate.

/// SplitMix64: tiny, fast, and good enough for workload generation.
#[derive(Debug, Clone)]
pub struct Rng {
    state: u64,
}

/// Mixes one 64-bit value (the SplitMix64 output function).
fn mix(mut z: u64) -> u64 {
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

impl Rng {
    pub fn new(seed: u64) -> Rng {
        Rng {
            state: mix(seed ^ 0x5443_5043_2d43_0001),
        }
    }

    /// An independent stream for one part of the work (a warehouse's table, a
    /// terminal), so the rows do not depend on which worker made them.
    pub fn stream(seed: u64, parts: &[u64]) -> Rng {
        let mut s = mix(seed);
        for &p in parts {
            s = mix(s ^ mix(p.wrapping_add(0x9e37_79b9_7f4a_7c15)));
        }
        Rng::new(s)
    }

    pub fn next_u64(&mut self) -> u64 {
        self.state = self.state.wrapping_add(0x9e37_79b9_7f4a_7c15);
        mix(self.state)
    }

    /// Uniform integer in [lo, hi] (clause 2.1.4's random(x..y)).
    pub fn uniform(&mut self, lo: i64, hi: i64) -> i64 {
        debug_assert!(lo <= hi);
        let span = (hi - lo) as u128 + 1;
        lo + ((self.next_u64() as u128 * span) >> 64) as i64
    }

    /// Uniform float in [0, 1).
    pub fn unit(&mut self) -> f64 {
        (self.next_u64() >> 11) as f64 / (1u64 << 53) as f64
    }

    /// NURand(A, x, y) of clause 2.1.6 with the run's constant C.
    pub fn nurand(&mut self, a: i64, c: i64, x: i64, y: i64) -> i64 {
        (((self.uniform(0, a) | self.uniform(x, y)) + c) % (y - x + 1)) + x
    }

    /// Random a-string of clause 4.3.2.2: letters and digits, length in [lo, hi].
    pub fn astring(&mut self, lo: usize, hi: usize, out: &mut String) {
        const CHARS: &[u8] = b"abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789";
        let len = self.uniform(lo as i64, hi as i64) as usize;
        for _ in 0..len {
            out.push(CHARS[self.uniform(0, CHARS.len() as i64 - 1) as usize] as char);
        }
    }

    /// Random n-string: digits only.
    pub fn nstring(&mut self, lo: usize, hi: usize, out: &mut String) {
        let len = self.uniform(lo as i64, hi as i64) as usize;
        for _ in 0..len {
            out.push((b'0' + self.uniform(0, 9) as u8) as char);
        }
    }

    /// I_DATA and S_DATA: an a-string of 26-50 characters; in 10 % of rows
    /// "ORIGINAL" replaces eight characters at a random position (4.3.3.1).
    pub fn data_with_original(&mut self, out: &mut String) {
        let start = out.len();
        self.astring(26, 50, out);
        if self.uniform(1, 10) == 1 {
            let len = out.len() - start;
            let pos = start + self.uniform(0, (len - 8) as i64) as usize;
            out.replace_range(pos..pos + 8, "ORIGINAL");
        }
    }

    /// A zip code: four random digits then "11111" (4.3.2.7).
    pub fn zip(&mut self, out: &mut String) {
        self.nstring(4, 4, out);
        out.push_str("11111");
    }
}

const SYLLABLES: [&str; 10] = [
    "BAR", "OUGHT", "ABLE", "PRI", "PRES", "ESE", "ANTI", "CALLY", "ATION", "EING",
];

/// C_LAST from a number in [0, 999]: its three digits as syllables (4.3.2.3).
pub fn last_name(n: i64, out: &mut String) {
    debug_assert!((0..=999).contains(&n));
    out.push_str(SYLLABLES[(n / 100) as usize]);
    out.push_str(SYLLABLES[(n / 10 % 10) as usize]);
    out.push_str(SYLLABLES[(n % 10) as usize]);
}

/// The NURand constants C of one phase (load or run), clause 2.1.6.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct NuConstants {
    pub c_last: i64,
    pub c_id: i64,
    pub ol_i_id: i64,
}

impl NuConstants {
    pub fn random(rng: &mut Rng) -> NuConstants {
        NuConstants {
            c_last: rng.uniform(0, 255),
            c_id: rng.uniform(0, 1023),
            ol_i_id: rng.uniform(0, 8191),
        }
    }

    /// Run-time constants for a database loaded with `load`: C_LAST differs
    /// from the load's by a delta in [65, 119], never 96 or 112
    /// (clause 2.1.6.1), so the run's last-name skew is not the load's.
    pub fn for_run(load: &NuConstants, rng: &mut Rng) -> NuConstants {
        let mut run = NuConstants::random(rng);
        loop {
            let delta = (run.c_last - load.c_last).abs();
            if (65..=119).contains(&delta) && delta != 96 && delta != 112 {
                return run;
            }
            run.c_last = rng.uniform(0, 255);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn uniform_stays_in_range_and_hits_both_ends() {
        let mut rng = Rng::new(7);
        let (mut lo, mut hi) = (false, false);
        for _ in 0..10_000 {
            let v = rng.uniform(5, 15);
            assert!((5..=15).contains(&v));
            lo |= v == 5;
            hi |= v == 15;
        }
        assert!(lo && hi);
    }

    #[test]
    fn same_seed_same_stream_other_seed_other_stream() {
        let a: Vec<u64> = (0..8).map(|_| Rng::stream(1, &[3, 4]).next_u64()).collect();
        let mut r = Rng::stream(1, &[3, 4]);
        let b: Vec<u64> = (0..8).map(|_| r.next_u64()).collect();
        assert_eq!(a[0], b[0]);
        assert_ne!(Rng::stream(2, &[3, 4]).next_u64(), b[0]);
        assert_ne!(Rng::stream(1, &[4, 3]).next_u64(), b[0]);
    }

    #[test]
    fn last_names_follow_the_syllable_table() {
        let mut s = String::new();
        last_name(371, &mut s);
        assert_eq!(s, "PRICALLYOUGHT");
        s.clear();
        last_name(0, &mut s);
        assert_eq!(s, "BARBARBAR");
    }

    #[test]
    fn run_c_last_keeps_the_delta_rule_of_2_1_6_1() {
        let mut rng = Rng::new(1);
        for _ in 0..1000 {
            let load = NuConstants::random(&mut rng);
            let run = NuConstants::for_run(&load, &mut rng);
            let d = (run.c_last - load.c_last).abs();
            assert!((65..=119).contains(&d) && d != 96 && d != 112, "delta {d}");
        }
    }

    #[test]
    fn nurand_stays_in_range() {
        let mut rng = Rng::new(3);
        for _ in 0..10_000 {
            let v = rng.nurand(8191, 1234, 1, 100_000);
            assert!((1..=100_000).contains(&v));
        }
    }

    #[test]
    fn one_in_ten_data_fields_says_original() {
        let mut rng = Rng::new(11);
        let mut n = 0;
        for _ in 0..10_000 {
            let mut s = String::new();
            rng.data_with_original(&mut s);
            assert!((26..=50).contains(&s.len()));
            n += s.contains("ORIGINAL") as u32;
        }
        assert!((800..1200).contains(&n), "{n} of 10000");
    }
}
