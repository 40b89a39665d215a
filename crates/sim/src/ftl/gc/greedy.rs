//! Greedy: reclaim the closed block with the fewest valid pages.
//! O(pages_per_block) per selection using the block table's valid-count buckets.

use super::VictimPolicy;
use crate::ftl::blocks::BlockTable;

pub struct Greedy;

impl VictimPolicy for Greedy {
    fn name(&self) -> &'static str {
        "greedy"
    }

    fn select(&mut self, unit: u32, blocks: &BlockTable, _now_seq: u64) -> Option<u32> {
        blocks.min_valid_closed(unit)
    }
}
