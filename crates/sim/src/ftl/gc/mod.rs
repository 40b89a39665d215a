//! Garbage-collection victim selection, one policy per module (like fio's engines).
//!
//! A policy picks, on one die, the closed block to reclaim next. The FTL owns
//! the block table (valid counts, states, erase counts, close times and the
//! greedy buckets) and tells the policy when a block closes.

use super::blocks::BlockTable;
use crate::config::GcPolicy;
use crate::error::SimError;

pub mod cost_benefit;
pub mod fifo;
pub mod greedy;

/// Victim selection policy.
pub trait VictimPolicy: Send {
    fn name(&self) -> &'static str;

    /// Block `block` on die `unit` became full (closed) at write sequence `seq`.
    fn on_close(&mut self, _unit: u32, _block: u32, _seq: u64) {}

    /// The closed block of die `unit` to reclaim, or `None` when the die has no closed block.
    /// `now_seq` is the FTL's write sequence number (a clock that advances with every page programmed).
    fn select(&mut self, unit: u32, blocks: &BlockTable, now_seq: u64) -> Option<u32>;

    /// Device mode: the policy's own state for a checkpoint (stateless policies write nothing).
    fn save_state(&self, _out: &mut crate::codec::Enc) {}

    /// Load what `save_state` wrote; `blocks` is the number of blocks (for range checks).
    fn load_state(&mut self, _inp: &mut crate::codec::Dec, _blocks: u32) -> Result<(), SimError> {
        Ok(())
    }
}

/// Build the policy named in the configuration.
pub fn make(policy: GcPolicy, units: u32) -> Box<dyn VictimPolicy> {
    match policy {
        GcPolicy::Greedy => Box::new(greedy::Greedy),
        GcPolicy::CostBenefit => Box::new(cost_benefit::CostBenefit),
        GcPolicy::Fifo => Box::new(fifo::Fifo::new(units)),
    }
}
