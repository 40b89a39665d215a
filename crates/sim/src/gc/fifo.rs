//! FIFO: reclaim the closed block that was closed first (a circular log).

use std::collections::VecDeque;

use super::VictimPolicy;
use crate::ftl::blocks::{BlockState, BlockTable};

pub struct Fifo {
    queues: Vec<VecDeque<(u32, u64)>>,
}

impl Fifo {
    pub fn new(units: u32) -> Fifo {
        Fifo {
            queues: (0..units).map(|_| VecDeque::new()).collect(),
        }
    }
}

impl VictimPolicy for Fifo {
    fn name(&self) -> &'static str {
        "fifo"
    }

    fn on_close(&mut self, unit: u32, block: u32, seq: u64) {
        self.queues[unit as usize].push_back((block, seq));
    }

    fn select(&mut self, unit: u32, blocks: &BlockTable, _now_seq: u64) -> Option<u32> {
        let q = &mut self.queues[unit as usize];
        // Entries go stale when another path (wear levelling) reclaimed the block.
        while let Some(&(b, seq)) = q.front() {
            q.pop_front();
            if blocks.state(b) == BlockState::Closed && blocks.closed_seq(b) == seq {
                return Some(b);
            }
        }
        None
    }
}
