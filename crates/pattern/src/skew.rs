//! Skewed location functions: zipf, pareto, normal and zoned draws over a
//! target's slots.
//!
//! Every draw takes its uniforms from our own [`Rng`] and does its floating
//! point with `libm` (a software implementation, the same bits on every
//! platform; the system libm may differ by an ulp, which could move a draw
//! across a slot boundary), so a seed gives the same slots everywhere, as
//! the rest of the algebra does (ARCHITECTURE.md, "Pattern generation is
//! pure and seeded").

use crate::rng::Rng;
use crate::spec::Zone;

/// A bound on rejection loops; the acceptance rate of each is above one
/// half, so reaching it has probability below 2^-64.
const MAX_TRIES: u32 = 64;

/// Zipf ranks `0..n` with P(k) proportional to (k+1)^-theta, by
/// rejection-inversion (Hörmann & Derflinger, "Rejection-inversion to
/// generate variates from monotone discrete distributions", 1996): O(1)
/// memory and time per draw whatever `n`.
#[derive(Clone, Debug)]
pub struct ZipfRanks {
    n: u64,
    theta: f64,
    /// `H(1.5) - h(1)`: the integral bound of rank 1's hat.
    h_first: f64,
    /// `H(n + 0.5)`.
    h_last: f64,
    /// Ranks drawn with `k - x` below this are accepted without the test.
    squeeze: f64,
}

impl ZipfRanks {
    pub fn new(n: u64, theta: f64) -> ZipfRanks {
        assert!(n > 0 && theta > 0.0);
        let mut z = ZipfRanks {
            n,
            theta,
            h_first: 0.0,
            h_last: 0.0,
            squeeze: 0.0,
        };
        z.h_first = z.big_h(1.5) - 1.0;
        z.h_last = z.big_h(n as f64 + 0.5);
        z.squeeze = 2.0 - z.big_h_inv(z.big_h(2.5) - z.h(2.0));
        z
    }

    /// The unnormalised probability of rank x: x^-theta.
    fn h(&self, x: f64) -> f64 {
        libm::exp(-self.theta * libm::log(x))
    }

    /// An antiderivative of `h`: (x^(1-theta) - 1) / (1-theta), ln x at theta = 1.
    fn big_h(&self, x: f64) -> f64 {
        let ln = libm::log(x);
        let t = (1.0 - self.theta) * ln;
        // (e^t - 1)/t -> 1 as t -> 0: no division by a vanishing 1-theta.
        let ratio = if t.abs() > 1e-8 {
            libm::expm1(t) / t
        } else {
            1.0 + t / 2.0
        };
        ratio * ln
    }

    fn big_h_inv(&self, y: f64) -> f64 {
        let t = y * (1.0 - self.theta);
        let ratio = if t.abs() > 1e-8 {
            libm::log1p(t) / t
        } else {
            1.0 - t / 2.0
        };
        libm::exp(ratio * y)
    }

    /// A rank in `0..n` (0 the most popular).
    pub fn draw(&self, rng: &mut Rng) -> u64 {
        let mut k = 1.0;
        for _ in 0..MAX_TRIES {
            let u = self.h_last + rng.unit_f64() * (self.h_first - self.h_last);
            let x = self.big_h_inv(u);
            k = libm::floor(x + 0.5).clamp(1.0, self.n as f64);
            if k - x <= self.squeeze || u >= self.big_h(k + 0.5) - self.h(k) {
                break;
            }
        }
        (k as u64 - 1).min(self.n - 1)
    }
}

/// Gray et al.'s self-similar ranks ("Quickly generating billion-record
/// synthetic databases", SIGMOD 1994): a fraction 1-h of the draws fall in
/// the first fraction h of `0..n`, and so on inside it.
pub fn pareto_rank(n: u64, h: f64, rng: &mut Rng) -> u64 {
    let exponent = libm::log(h) / libm::log(1.0 - h);
    let r = libm::floor(n as f64 * libm::pow(rng.unit_f64(), exponent));
    (r as u64).min(n - 1)
}

/// A slot around the middle of `0..n`, standard deviation `sigma_percent`
/// of n (Box-Muller), wrapped into the range.
pub fn normal_slot(n: u64, sigma_percent: f64, rng: &mut Rng) -> u64 {
    // 1 - unit is in (0, 1]: the logarithm is finite.
    let u1 = 1.0 - rng.unit_f64();
    let u2 = rng.unit_f64();
    let z = libm::sqrt(-2.0 * libm::log(u1)) * libm::cos(2.0 * std::f64::consts::PI * u2);
    let n_f = n as f64;
    let x = n_f / 2.0 + z * sigma_percent / 100.0 * n_f;
    let wrapped = x - n_f * libm::floor(x / n_f);
    (wrapped as u64).min(n - 1)
}

/// Zones resolved to slots: cumulative access shares (in 2^-32 units, so
/// that the draw is integer arithmetic) and each zone's first slot and size.
#[derive(Clone, Debug)]
pub struct ZonedSlots {
    /// (cumulative access threshold, first slot, slots)
    zones: Vec<(u64, u64, u64)>,
}

impl ZonedSlots {
    pub fn new(n: u64, zones: &[Zone]) -> ZonedSlots {
        let access_total: f64 = zones.iter().map(|z| z.access_percent).sum();
        let size_total: f64 = zones.iter().map(|z| z.size_percent).sum();
        let mut out = Vec::with_capacity(zones.len());
        let (mut acc, mut size) = (0.0, 0.0);
        let mut first = 0u64;
        for (i, z) in zones.iter().enumerate() {
            acc += z.access_percent;
            size += z.size_percent;
            let last = i + 1 == zones.len();
            let threshold = if last {
                u64::MAX
            } else {
                (acc / access_total * 4_294_967_296.0) as u64
            };
            let end = if last {
                n
            } else {
                ((size / size_total * n as f64) as u64).clamp(first, n)
            };
            out.push((threshold, first, end - first));
            first = end;
        }
        ZonedSlots { zones: out }
    }

    pub fn draw(&self, rng: &mut Rng) -> u64 {
        let u = rng.next_u64() >> 32;
        // The first zone whose threshold is above the draw and which has
        // slots (a zone too small for one slot gives its share to the next).
        let mut pick = None;
        for &(threshold, first, len) in &self.zones {
            if len > 0 {
                pick = Some((first, len));
                if u < threshold {
                    break;
                }
            } else if u < threshold && pick.is_some() {
                break;
            }
        }
        let (first, len) = pick.expect("a zoned target has at least one slot");
        first + rng.below(len)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn histogram(n: u64, draws: u64, mut f: impl FnMut(&mut Rng) -> u64) -> Vec<u64> {
        let mut rng = Rng::new(7);
        let mut h = vec![0u64; n as usize];
        for _ in 0..draws {
            h[f(&mut rng) as usize] += 1;
        }
        h
    }

    #[test]
    fn zipf_frequencies_follow_the_power_law() {
        // theta 1.2 over 1000 ranks: P(1)/P(2) = 2^1.2 = 2.30, P(1)/P(10) = 15.8.
        let z = ZipfRanks::new(1000, 1.2);
        let h = histogram(1000, 400_000, |r| z.draw(r));
        let r12 = h[0] as f64 / h[1] as f64;
        let r1_10 = h[0] as f64 / h[9] as f64;
        assert!((r12 - 2.30).abs() < 0.1, "P1/P2 = {r12}");
        assert!((r1_10 - 15.85).abs() < 1.5, "P1/P10 = {r1_10}");
        // and P(1) itself: 1 / sum_k k^-1.2 over 1000 ranks = 0.2306
        let p1 = h[0] as f64 / 400_000.0;
        assert!((p1 - 0.2306).abs() < 0.005, "P1 = {p1}");
    }

    #[test]
    fn zipf_at_theta_one_is_the_harmonic_law() {
        let z = ZipfRanks::new(100, 1.0);
        let h = histogram(100, 200_000, |r| z.draw(r));
        // 1/H_100 = 0.1928
        let p1 = h[0] as f64 / 200_000.0;
        assert!((p1 - 0.1928).abs() < 0.005, "P1 = {p1}");
    }

    #[test]
    fn pareto_point_two_is_the_80_20_rule() {
        let h = histogram(1000, 200_000, |r| pareto_rank(1000, 0.2, r));
        let head: u64 = h[..200].iter().sum();
        let share = head as f64 / 200_000.0;
        assert!((share - 0.8).abs() < 0.01, "first 20 % got {share}");
    }

    #[test]
    fn normal_draws_centre_on_the_middle_with_the_asked_spread() {
        let h = histogram(1000, 200_000, |r| normal_slot(1000, 10.0, r));
        // within one sigma (100 slots) of the middle: 68.3 %
        let inside: u64 = h[400..600].iter().sum();
        let share = inside as f64 / 200_000.0;
        assert!((share - 0.683).abs() < 0.01, "within 1 sigma: {share}");
    }

    #[test]
    fn zoned_shares_go_to_their_zones() {
        let zones = [
            Zone {
                access_percent: 60.0,
                size_percent: 10.0,
            },
            Zone {
                access_percent: 30.0,
                size_percent: 20.0,
            },
            Zone {
                access_percent: 10.0,
                size_percent: 70.0,
            },
        ];
        let z = ZonedSlots::new(1000, &zones);
        let h = histogram(1000, 100_000, |r| z.draw(r));
        let share = |a: usize, b: usize| h[a..b].iter().sum::<u64>() as f64 / 100_000.0;
        assert!((share(0, 100) - 0.6).abs() < 0.01);
        assert!((share(100, 300) - 0.3).abs() < 0.01);
        assert!((share(300, 1000) - 0.1).abs() < 0.01);
    }

    #[test]
    fn a_zone_smaller_than_a_slot_never_yields_an_out_of_range_slot() {
        let zones = [
            Zone {
                access_percent: 50.0,
                size_percent: 99.9,
            },
            Zone {
                access_percent: 50.0,
                size_percent: 0.1,
            },
        ];
        let z = ZonedSlots::new(10, &zones);
        let mut rng = Rng::new(1);
        for _ in 0..10_000 {
            assert!(z.draw(&mut rng) < 10);
        }
    }
}
