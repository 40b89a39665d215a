//! Endurance as in Wang et al. Table 6: the rated lifetime writes divided by
//! the physical write rate, in years; on a simulated device also from its
//! erase counts against the rated program/erase cycles of its blocks.

pub const SECONDS_PER_YEAR: f64 = 365.25 * 86400.0;

/// The figures, typed in the results crate's `oltp.json` schema.
pub use flashlab_results::oltp::Endurance;

/// Table 6: lifetime writes / write rate.
pub fn years_from_writes(rated_lifetime_writes_bytes: u64, write_bytes_per_s: f64) -> Option<f64> {
    (write_bytes_per_s > 0.0)
        .then(|| rated_lifetime_writes_bytes as f64 / write_bytes_per_s / SECONDS_PER_YEAR)
}

/// Every block erased `rated_pe_cycles` times at the measured erase rate.
pub fn years_from_erases(
    rated_pe_cycles: u64,
    flash_blocks: u64,
    erases_per_s: f64,
) -> Option<f64> {
    (erases_per_s > 0.0)
        .then(|| rated_pe_cycles as f64 * flash_blocks as f64 / erases_per_s / SECONDS_PER_YEAR)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn two_petabytes_at_the_rate_behind_table_6s_5_47_years() {
        // Wang et al. Table 6: 5.47 years for the commercial DBMS on ext2fs
        // from the X25-E's 2 PB rating; that is about 11.6 MB/s written.
        let rate = 2e15 / (5.47 * SECONDS_PER_YEAR);
        let y = years_from_writes(2_000_000_000_000_000, rate).unwrap();
        assert!((y - 5.47).abs() < 1e-9, "{y}");
        assert!((rate / 1e6 - 11.59).abs() < 0.01, "{rate}");
        assert_eq!(years_from_writes(1, 0.0), None);
    }

    #[test]
    fn erase_counts_give_years_of_perfectly_levelled_wear() {
        // 1000 blocks of 100 000 cycles, one erase per second: 1e8 s.
        let y = years_from_erases(100_000, 1000, 1.0).unwrap();
        assert!((y * SECONDS_PER_YEAR - 1e8).abs() < 1.0);
        assert_eq!(years_from_erases(100_000, 1000, 0.0), None);
    }
}
