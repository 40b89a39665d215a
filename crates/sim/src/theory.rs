//! Analytic write amplification of greedy cleaning under uniform random writes.
//!
//! Desnoyers, "Analytic modeling of SSD write performance", SYSTOR 2012
//! (extended in ACM TOS 10(2), 2014): with `alpha = T/U` the ratio of physical
//! to logical pages (here `1 + op`) and `Np` pages per block, the number of valid
//! pages in the block greedy cleaning selects, in steady state, is
//!
//! ```text
//! X0 = 1/2 - (Np / alpha) * W( -(1 + 1/(2 Np)) * alpha * exp(-(1 + 1/(2 Np)) * alpha) )
//! A  = Np / (Np - X0)
//! ```
//!
//! where `W` is the principal branch of the Lambert W function and `A` the write
//! amplification (flash programs per host page written). For `Np -> infinity`
//! this is `A = alpha / (alpha + W(-alpha e^-alpha))`, the expression also
//! derived by Xiang & Kurkoski (arXiv:1110.4245, 2011); e.g. `A(alpha = 1.3) = 2.36`.

/// Principal branch W0 of the Lambert W function on [-1/e, +inf).
pub fn lambert_w0(x: f64) -> f64 {
    let branch = -(-1.0f64).exp();
    assert!(x >= branch - 1e-15, "lambert_w0 argument {x} below -1/e");
    if x == 0.0 {
        return 0.0;
    }
    // Initial guess: branch-point series near -1/e, log otherwise.
    let mut w = if x < -0.25 {
        let p = (2.0 * (1.0 + std::f64::consts::E * x)).max(0.0).sqrt();
        -1.0 + p - p * p / 3.0 + 11.0 / 72.0 * p * p * p
    } else if x < 3.0 {
        (1.0 + x).ln() * 0.8
    } else {
        let l = x.ln();
        l - l.ln()
    };
    for _ in 0..64 {
        let ew = w.exp();
        let f = w * ew - x;
        if f == 0.0 {
            break;
        }
        let wp1 = w + 1.0;
        if wp1.abs() < 1e-12 {
            break;
        }
        let denom = ew * wp1 - (w + 2.0) * f / (2.0 * wp1);
        let next = w - f / denom;
        if (next - w).abs() <= 1e-15 * (1.0 + next.abs()) {
            w = next;
            break;
        }
        w = next;
    }
    w
}

/// Desnoyers' greedy write amplification for over-provisioning `op`
/// (physical = logical x (1 + op)) and `pages_per_block` pages per block.
pub fn desnoyers_greedy_waf(op: f64, pages_per_block: u32) -> f64 {
    let alpha = 1.0 + op;
    let np = pages_per_block as f64;
    let k = (1.0 + 1.0 / (2.0 * np)) * alpha;
    let x0 = 0.5 - (np / alpha) * lambert_w0(-k * (-k).exp());
    np / (np - x0)
}

/// The same model in the limit of large blocks.
pub fn greedy_waf_limit(op: f64) -> f64 {
    let alpha = 1.0 + op;
    alpha / (alpha + lambert_w0(-alpha * (-alpha).exp()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lambert_w_values() {
        assert!((lambert_w0(1.0) - 0.567_143_290_409_783_8).abs() < 1e-12);
        assert!((lambert_w0(-0.25) + 0.357_402_956_181_388_9).abs() < 1e-12);
        assert!((lambert_w0(-(-1.0f64).exp()) + 1.0).abs() < 1e-6);
        for &x in &[-0.36, -0.3, -0.1, 0.5, 2.0, 10.0] {
            let w = lambert_w0(x);
            assert!((w * w.exp() - x).abs() < 1e-12, "W({x}) = {w}");
        }
    }

    #[test]
    fn published_point() {
        // Xiang & Kurkoski: over-provisioning 0.3 gives 2.36.
        assert!(
            (greedy_waf_limit(0.3) - 2.36).abs() < 0.01,
            "{}",
            greedy_waf_limit(0.3)
        );
        // finite blocks approach the limit
        let a = desnoyers_greedy_waf(0.07, 64);
        let b = desnoyers_greedy_waf(0.07, 1 << 20);
        assert!((b - greedy_waf_limit(0.07)).abs() < 0.01);
        assert!(a > 1.0 && (a - b).abs() / b < 0.05, "{a} vs {b}");
    }
}
