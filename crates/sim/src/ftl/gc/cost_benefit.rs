//! Cost-benefit (Kawaguchi, Nishioka & Motoda, USENIX 1995, after Rosenblum &
//! Ousterhout's LFS cleaner): reclaim the closed block maximising
//! `age x (1 - u) / 2u`, where `u` is the fraction of valid pages and `age` the
//! number of pages written since the block was closed. A block with no valid
//! page is taken at once. O(blocks per die) per selection.

use super::VictimPolicy;
use crate::ftl::blocks::{BlockState, BlockTable};

pub struct CostBenefit;

impl VictimPolicy for CostBenefit {
    fn name(&self) -> &'static str {
        "cost-benefit"
    }

    fn select(&mut self, unit: u32, blocks: &BlockTable, now_seq: u64) -> Option<u32> {
        if let Some(b) = blocks.min_valid_closed(unit) {
            if blocks.valid(b) == 0 {
                return Some(b);
            }
        } else {
            return None;
        }
        let ppb = blocks.pages_per_block as f64;
        let mut best: Option<(f64, u32)> = None;
        for b in blocks.unit_blocks(unit) {
            if blocks.state(b) != BlockState::Closed {
                continue;
            }
            let u = blocks.valid(b) as f64 / ppb;
            let age = (now_seq.saturating_sub(blocks.closed_seq(b)) + 1) as f64;
            let score = age * (1.0 - u) / (2.0 * u);
            if best.is_none_or(|(s, _)| score > s) {
                best = Some((score, b));
            }
        }
        best.map(|(_, b)| b)
    }
}
