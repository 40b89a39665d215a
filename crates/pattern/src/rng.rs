//! The random number generators behind every seeded choice.
//!
//! They are written here rather than taken from `rand` so that the sequence a
//! seed produces is ours to keep stable across dependency upgrades: a results
//! directory names a seed, and the same seed must regenerate the same IOs in
//! any later version of flashlab.

/// SplitMix64 (Steele, Lea, Flood 2014): used to derive independent seeds.
pub fn splitmix64(mut z: u64) -> u64 {
    z = z.wrapping_add(0x9E37_79B9_7F4A_7C15);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// Derives a child seed from a parent seed and a label (stream number,
/// sub-pattern number, pass number...), so that children never share streams.
pub fn derive_seed(parent: u64, label: u64) -> u64 {
    splitmix64(parent ^ splitmix64(label.wrapping_add(0x5851_F42D_4C95_7F2D)))
}

/// xoshiro256++ (Blackman and Vigna 2019): fast, 256 bits of state, good
/// enough statistically for choosing IO slots.
#[derive(Clone, Debug)]
pub struct Rng {
    s: [u64; 4],
}

impl Rng {
    pub fn new(seed: u64) -> Rng {
        let mut x = seed;
        let mut s = [0u64; 4];
        for word in &mut s {
            x = x.wrapping_add(0x9E37_79B9_7F4A_7C15);
            *word = splitmix64(x);
        }
        // All-zero state is the one fixed point of xoshiro; splitmix never
        // yields four zeros in a row, but keep the guarantee explicit.
        debug_assert!(s.iter().any(|&w| w != 0));
        Rng { s }
    }

    pub fn next_u64(&mut self) -> u64 {
        let result = self.s[0]
            .wrapping_add(self.s[3])
            .rotate_left(23)
            .wrapping_add(self.s[0]);
        let t = self.s[1] << 17;
        self.s[2] ^= self.s[0];
        self.s[3] ^= self.s[1];
        self.s[1] ^= self.s[2];
        self.s[0] ^= self.s[3];
        self.s[2] ^= t;
        self.s[3] = self.s[3].rotate_left(45);
        result
    }

    /// Uniform in `[0, n)` without modulo bias (Lemire 2019). `n` must be > 0.
    pub fn below(&mut self, n: u64) -> u64 {
        assert!(n > 0, "Rng::below(0)");
        let mut m = (self.next_u64() as u128) * (n as u128);
        let mut low = m as u64;
        if low < n {
            let threshold = n.wrapping_neg() % n;
            while low < threshold {
                m = (self.next_u64() as u128) * (n as u128);
                low = m as u64;
            }
        }
        (m >> 64) as u64
    }

    /// Uniform in `[0, 1)` with 53 bits of precision.
    pub fn unit_f64(&mut self) -> f64 {
        (self.next_u64() >> 11) as f64 * (1.0 / (1u64 << 53) as f64)
    }
}

/// A seeded bijection on `[0, n)`: a balanced Feistel network over the
/// smallest even power of two >= n, with cycle walking to stay inside `n`.
/// `random-once` uses it to visit every slot exactly once in O(1) memory,
/// however large the target.
#[derive(Clone, Debug)]
pub struct Permutation {
    n: u64,
    half_bits: u32,
    keys: [u64; 4],
}

impl Permutation {
    pub fn new(n: u64, seed: u64) -> Permutation {
        assert!(n > 0, "Permutation over an empty domain");
        let bits = 64 - (n - 1).leading_zeros();
        let half_bits = bits.div_ceil(2).max(1);
        let mut keys = [0u64; 4];
        for (i, k) in keys.iter_mut().enumerate() {
            *k = derive_seed(seed, i as u64);
        }
        Permutation { n, half_bits, keys }
    }

    pub fn len(&self) -> u64 {
        self.n
    }

    pub fn is_empty(&self) -> bool {
        self.n == 0
    }

    fn feistel(&self, x: u64) -> u64 {
        let mask = (1u64 << self.half_bits) - 1;
        let mut left = x >> self.half_bits;
        let mut right = x & mask;
        for &k in &self.keys {
            let f = splitmix64(right ^ k) & mask;
            let new_right = left ^ f;
            left = right;
            right = new_right;
        }
        (left << self.half_bits) | right
    }

    /// The image of `i` (< n). Cycle walking terminates because the Feistel
    /// network is a bijection on a domain at most 4x larger than `n`.
    pub fn apply(&self, i: u64) -> u64 {
        assert!(
            i < self.n,
            "Permutation::apply({i}) outside [0, {})",
            self.n
        );
        let mut x = self.feistel(i);
        while x >= self.n {
            x = self.feistel(x);
        }
        x
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn same_seed_same_sequence() {
        let a: Vec<u64> = (0..8)
            .scan(Rng::new(7), |r, _| Some(r.next_u64()))
            .collect();
        let b: Vec<u64> = (0..8)
            .scan(Rng::new(7), |r, _| Some(r.next_u64()))
            .collect();
        let c: Vec<u64> = (0..8)
            .scan(Rng::new(8), |r, _| Some(r.next_u64()))
            .collect();
        assert_eq!(a, b);
        assert_ne!(a, c);
    }

    #[test]
    fn below_stays_below_and_covers() {
        let mut rng = Rng::new(1);
        let mut seen = [0u32; 7];
        for _ in 0..7000 {
            let x = rng.below(7);
            seen[x as usize] += 1;
        }
        assert!(seen.iter().all(|&c| c > 800), "{seen:?}");
    }

    #[test]
    fn permutation_is_a_bijection() {
        for n in [1u64, 2, 3, 5, 16, 17, 1000, 4097] {
            let p = Permutation::new(n, 99);
            let mut hit = vec![false; n as usize];
            for i in 0..n {
                let j = p.apply(i);
                assert!(!hit[j as usize], "n={n}: {j} hit twice");
                hit[j as usize] = true;
            }
        }
    }

    #[test]
    fn permutation_depends_on_seed() {
        let a: Vec<u64> = (0..100)
            .map(|i| Permutation::new(100, 1).apply(i))
            .collect();
        let b: Vec<u64> = (0..100)
            .map(|i| Permutation::new(100, 2).apply(i))
            .collect();
        assert_ne!(a, b);
        assert_ne!(a, (0..100).collect::<Vec<_>>());
    }
}
