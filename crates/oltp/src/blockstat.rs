//! /sys/block/DEV/stat snapshots: the kernel's own count of the requests
//! and sectors a block device completed, which the physical trace must
//! agree with (the consistency figure in oltp.json).

use serde::{Deserialize, Serialize};

#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct BlockStat {
    pub read_ios: u64,
    pub read_merges: u64,
    pub read_sectors: u64,
    pub read_ticks_ms: u64,
    pub write_ios: u64,
    pub write_merges: u64,
    pub write_sectors: u64,
    pub write_ticks_ms: u64,
    pub discard_ios: u64,
    pub discard_sectors: u64,
    pub flush_ios: u64,
}

impl BlockStat {
    /// Parses the fields of Documentation/block/stat.rst (the discard and
    /// flush fields are missing on old kernels: zero).
    pub fn parse(text: &str) -> Option<BlockStat> {
        let v: Vec<u64> = text
            .split_whitespace()
            .map(|w| w.parse().ok())
            .collect::<Option<_>>()?;
        if v.len() < 11 {
            return None;
        }
        let at = |i: usize| v.get(i).copied().unwrap_or(0);
        Some(BlockStat {
            read_ios: at(0),
            read_merges: at(1),
            read_sectors: at(2),
            read_ticks_ms: at(3),
            write_ios: at(4),
            write_merges: at(5),
            write_sectors: at(6),
            write_ticks_ms: at(7),
            discard_ios: at(11),
            discard_sectors: at(13),
            flush_ios: at(15),
        })
    }

    pub fn read(sysfs_name: &str) -> Option<BlockStat> {
        let text = std::fs::read_to_string(format!("/sys/class/block/{sysfs_name}/stat")).ok()?;
        BlockStat::parse(&text)
    }

    /// after - self, field by field.
    pub fn delta(&self, after: &BlockStat) -> BlockStat {
        BlockStat {
            read_ios: after.read_ios.saturating_sub(self.read_ios),
            read_merges: after.read_merges.saturating_sub(self.read_merges),
            read_sectors: after.read_sectors.saturating_sub(self.read_sectors),
            read_ticks_ms: after.read_ticks_ms.saturating_sub(self.read_ticks_ms),
            write_ios: after.write_ios.saturating_sub(self.write_ios),
            write_merges: after.write_merges.saturating_sub(self.write_merges),
            write_sectors: after.write_sectors.saturating_sub(self.write_sectors),
            write_ticks_ms: after.write_ticks_ms.saturating_sub(self.write_ticks_ms),
            discard_ios: after.discard_ios.saturating_sub(self.discard_ios),
            discard_sectors: after.discard_sectors.saturating_sub(self.discard_sectors),
            flush_ios: after.flush_ios.saturating_sub(self.flush_ios),
        }
    }

    pub fn read_bytes(&self) -> u64 {
        self.read_sectors * 512
    }

    pub fn write_bytes(&self) -> u64 {
        self.write_sectors * 512
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_kernel_stat_line_parses_and_deltas_subtract() {
        let a = BlockStat::parse("  100 5 800 10 200 7 1600 20 0 30 30 3 0 24 0 9 1").unwrap();
        assert_eq!(
            (a.read_ios, a.read_sectors, a.write_ios, a.write_sectors),
            (100, 800, 200, 1600)
        );
        assert_eq!((a.discard_ios, a.discard_sectors, a.flush_ios), (3, 24, 9));
        let b = BlockStat::parse("150 5 1200 10 260 7 2400 20 0 30 30 3 0 24 0 12 1").unwrap();
        let d = a.delta(&b);
        assert_eq!(
            (d.read_ios, d.write_ios, d.write_bytes(), d.flush_ios),
            (50, 60, 800 * 512, 3)
        );
    }

    #[test]
    fn an_old_eleven_field_line_has_no_discards() {
        let a = BlockStat::parse("1 2 3 4 5 6 7 8 9 10 11").unwrap();
        assert_eq!((a.write_sectors, a.discard_ios, a.flush_ios), (7, 0, 0));
        assert!(BlockStat::parse("1 2 x").is_none());
    }
}
