//! Map pages on flash (DFTL translation pages, two-level chunk pages,
//! metadata-sync pages): where they are written and what they cost.
//!
//! Map pages live in their own pool of map blocks, written round-robin over
//! the dies, one page at a time, as [`Cause::Mapping`] programs. Their
//! cleaning is modelled as one erase (cause `mapping`) per `pages_per_block`
//! map pages written to a die: map pages are rewritten so often that a map
//! block is all stale when it is reclaimed, so cleaning it copies nothing. The
//! map pool's capacity is not taken from the data space (the map is a fraction
//! of a percent of the device).

use crate::accounting::Cause;
use crate::resources::Flash;
use crate::Nanos;

pub struct MapStore {
    units: u32,
    ppb: u32,
    rr: u32,
    written_on_die: Vec<u32>,
}

impl MapStore {
    pub fn new(units: u32, ppb: u32) -> MapStore {
        MapStore {
            units,
            ppb,
            rr: 0,
            written_on_die: vec![0; units as usize],
        }
    }

    /// Device mode: the round-robin die and each die's fill, the state that
    /// decides when a later map write pays an erase.
    pub(crate) fn save_state(&self, e: &mut crate::codec::Enc) {
        e.u32(self.rr);
        e.vec_u32(&self.written_on_die);
    }

    pub(crate) fn load_state(
        &mut self,
        d: &mut crate::codec::Dec,
    ) -> Result<(), crate::error::SimError> {
        let rr = d.u32()?;
        let written = d.vec_u32_len(self.units as usize, "map store fill")?;
        if rr >= self.units || written.iter().any(|&w| w >= self.ppb) {
            return Err(crate::error::CheckpointError::Malformed(
                "checkpoint map store: die or fill out of range",
            )
            .into());
        }
        self.rr = rr;
        self.written_on_die = written;
        Ok(())
    }

    /// Write one map page starting at `at`; returns (die, end of program).
    pub fn write(&mut self, at: Nanos, flash: &mut Flash) -> (u32, Nanos) {
        let die = self.rr;
        self.rr = if self.rr + 1 == self.units {
            0
        } else {
            self.rr + 1
        };
        self.write_on(die, at, flash)
    }

    /// Write one map page on `die`.
    pub fn write_on(&mut self, die: u32, at: Nanos, flash: &mut Flash) -> (u32, Nanos) {
        let mut end = flash.program(die, Cause::Mapping, at);
        flash.acct.map_page_writes += 1;
        let w = &mut self.written_on_die[die as usize];
        *w += 1;
        if *w == self.ppb {
            *w = 0;
            end = flash.erase(die, Cause::Mapping, end);
        }
        (die, end)
    }
}
