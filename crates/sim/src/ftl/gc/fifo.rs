//! FIFO: reclaim the closed block that was closed first (a circular log).

use std::collections::VecDeque;

use super::VictimPolicy;
use crate::error::{CheckpointError, SimError};
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

    fn save_state(&self, out: &mut crate::codec::Enc) {
        out.u64(self.queues.len() as u64);
        for q in &self.queues {
            out.u64(q.len() as u64);
            for &(b, seq) in q {
                out.u32(b);
                out.u64(seq);
            }
        }
    }

    fn load_state(&mut self, inp: &mut crate::codec::Dec, blocks: u32) -> Result<(), SimError> {
        if inp.u64()? != self.queues.len() as u64 {
            return Err(CheckpointError::Malformed(
                "checkpoint: FIFO queues for a different number of dies",
            )
            .into());
        }
        for q in self.queues.iter_mut() {
            q.clear();
            let n = inp.u64()?;
            for _ in 0..n {
                let b = inp.u32()?;
                let seq = inp.u64()?;
                if b >= blocks {
                    return Err(CheckpointError::Malformed(
                        "checkpoint: FIFO queue block out of range",
                    )
                    .into());
                }
                q.push_back((b, seq));
            }
        }
        Ok(())
    }
}
