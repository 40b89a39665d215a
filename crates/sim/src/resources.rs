//! Dies and channel buses as resources with a busy-until time, and the flash
//! operations that occupy them.
//!
//! There is no per-page event queue: each operation is placed analytically at
//! the earliest time its resources are free (`start = max(at, die_free,
//! channel_free)`), and the resources' busy-until times advance. A request's
//! pages on different dies therefore proceed in parallel, pages on one die or
//! one channel serialise. Resources never backfill: an operation placed later
//! in the run cannot use an idle gap before an operation placed earlier.
//!
//! - read: command + array read on the die, then the page crosses the channel
//!   (the die's register stays busy until it has);
//! - program: the page crosses the channel into the die's register (die must be
//!   free), then command + array program;
//! - erase: command + erase on the die;
//! - copy (GC relocation): with copy-back, read + program inside the die; without,
//!   read, transfer out, transfer in, program.

use crate::accounting::{Accounting, Cause};
use crate::geometry::Geometry;
use crate::nand::NandTiming;
use crate::Nanos;

/// The flash array: timing, per-die and per-channel busy-until times, and the accounting.
#[derive(Clone, Debug)]
pub struct Flash {
    pub t: NandTiming,
    channels: u32,
    die_free: Vec<Nanos>,
    ch_free: Vec<Nanos>,
    pub acct: Accounting,
}

impl Flash {
    pub fn new(t: NandTiming, geo: &Geometry) -> Flash {
        Flash {
            t,
            channels: geo.channels,
            die_free: vec![0; geo.units as usize],
            ch_free: vec![0; geo.channels as usize],
            acct: Accounting::default(),
        }
    }

    #[inline]
    fn ch(&self, unit: u32) -> usize {
        (unit % self.channels) as usize
    }

    /// When die `unit` is next free.
    #[inline]
    pub fn die_free(&self, unit: u32) -> Nanos {
        self.die_free[unit as usize]
    }

    /// The latest busy-until time over all dies.
    pub fn all_dies_free(&self) -> Nanos {
        self.die_free.iter().copied().max().unwrap_or(0)
    }

    /// Read one page (or `bytes` of it) from die `unit`; returns when the data is in the controller.
    #[inline]
    pub fn read(&mut self, unit: u32, cause: Cause, at: Nanos) -> Nanos {
        self.read_bytes(unit, cause, at, self.t.page_bytes)
    }

    pub fn read_bytes(&mut self, unit: u32, cause: Cause, at: Nanos, bytes: u64) -> Nanos {
        let u = unit as usize;
        let c = self.ch(unit);
        let array = self.t.command_ns + self.t.read_ns;
        let xfer = if bytes == self.t.page_bytes {
            self.t.page_transfer_ns
        } else {
            self.t.transfer_ns(bytes)
        };
        let start = at.max(self.die_free[u]);
        let array_end = start + array;
        let xfer_start = array_end.max(self.ch_free[c]);
        let end = xfer_start + xfer;
        self.die_free[u] = end;
        self.ch_free[c] = end;
        let i = cause as usize;
        self.acct.flash_reads[i] += 1;
        self.acct.read_ns[i] += self.t.read_ns;
        self.acct.bus_ns[i] += xfer;
        end
    }

    /// Program one page on die `unit`; returns when the program has finished.
    #[inline]
    pub fn program(&mut self, unit: u32, cause: Cause, at: Nanos) -> Nanos {
        let u = unit as usize;
        let c = self.ch(unit);
        let xfer = self.t.page_transfer_ns;
        let xfer_start = at.max(self.die_free[u]).max(self.ch_free[c]);
        let xfer_end = xfer_start + xfer;
        self.ch_free[c] = xfer_end;
        let end = xfer_end + self.t.command_ns + self.t.program_ns;
        self.die_free[u] = end;
        let i = cause as usize;
        self.acct.flash_programs[i] += 1;
        self.acct.program_ns[i] += self.t.program_ns;
        self.acct.bus_ns[i] += xfer;
        end
    }

    /// Erase one block on die `unit`.
    #[inline]
    pub fn erase(&mut self, unit: u32, cause: Cause, at: Nanos) -> Nanos {
        let u = unit as usize;
        let start = at.max(self.die_free[u]);
        let end = start + self.t.command_ns + self.t.erase_ns;
        self.die_free[u] = end;
        let i = cause as usize;
        self.acct.flash_erases[i] += 1;
        self.acct.erase_ns[i] += self.t.erase_ns;
        end
    }

    /// Relocate one page inside die `unit` (GC, wear levelling).
    #[inline]
    pub fn copy(&mut self, unit: u32, cause: Cause, at: Nanos) -> Nanos {
        if self.t.copyback {
            let u = unit as usize;
            let start = at.max(self.die_free[u]);
            let end = start + 2 * self.t.command_ns + self.t.read_ns + self.t.program_ns;
            self.die_free[u] = end;
            let i = cause as usize;
            self.acct.flash_reads[i] += 1;
            self.acct.flash_programs[i] += 1;
            self.acct.read_ns[i] += self.t.read_ns;
            self.acct.program_ns[i] += self.t.program_ns;
            end
        } else {
            let r = self.read(unit, cause, at);
            self.program(unit, cause, r)
        }
    }

    /// Account `n` copies at once (used by the GC's bulk path); same timing as `n` calls to `copy`.
    pub fn copy_n(&mut self, unit: u32, cause: Cause, at: Nanos, n: u64) -> Nanos {
        if n == 0 {
            return at.max(self.die_free[unit as usize]);
        }
        if self.t.copyback {
            let u = unit as usize;
            let start = at.max(self.die_free[u]);
            let end = start + n * (2 * self.t.command_ns + self.t.read_ns + self.t.program_ns);
            self.die_free[u] = end;
            let i = cause as usize;
            self.acct.flash_reads[i] += n;
            self.acct.flash_programs[i] += n;
            self.acct.read_ns[i] += n * self.t.read_ns;
            self.acct.program_ns[i] += n * self.t.program_ns;
            end
        } else {
            let mut t = at;
            for _ in 0..n {
                t = self.copy(unit, cause, t);
            }
            t
        }
    }
}
