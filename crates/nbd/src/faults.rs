//! Deterministic fault injection for the store's IO: every write, `fdatasync`
//! and log append the store makes passes an [`IoPoint`] through a [`Faults`]
//! plan first, which may answer with an error (EIO, ENOSPC...) instead of
//! letting the real call run. Tests use it to reproduce host-file-system
//! failures (the "fsyncgate" pattern, a full disk during a checkpoint, a
//! failed log append) at chosen operations; production passes no plan.

use std::collections::HashMap;
use std::io;
use std::sync::Mutex;

/// An IO operation of the store that can fail.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum IoPoint {
    /// `pwrite` (or hole punching / zero writing) on `data.img`.
    DataWrite,
    /// `fdatasync(data.img)`.
    DataSync,
    /// Appending records to `wal-G.log`.
    LogWrite,
    /// `fdatasync(wal-G.log)`.
    LogSync,
    /// Writing `ckpt-G.tmp` (including its creation).
    CheckpointWrite,
    /// `fsync(ckpt-G.tmp)`.
    CheckpointSync,
    /// Creating and syncing the next generation's empty log.
    LogCreate,
    /// `fsync` of the data directory.
    DirSync,
}

#[derive(Debug)]
struct Rule {
    point: IoPoint,
    /// Operations at `point` still to let through before failing.
    skip: u64,
    /// Failures left; `None`: every later operation fails.
    times: Option<u64>,
    errno: i32,
}

/// A fault plan shared between a test and the store it drives.
#[derive(Debug, Default)]
pub struct Faults {
    rules: Mutex<Vec<Rule>>,
    seen: Mutex<HashMap<IoPoint, u64>>,
}

impl Faults {
    pub fn new() -> Faults {
        Faults::default()
    }

    /// Every later operation at `point` fails with `errno` (until [`Faults::clear`]).
    pub fn fail_always(&self, point: IoPoint, errno: i32) {
        self.add(point, 0, None, errno);
    }

    /// The `n`-th later operation at `point` (1-based) fails once with `errno`.
    pub fn fail_nth(&self, point: IoPoint, n: u64, errno: i32) {
        self.add(point, n.saturating_sub(1), Some(1), errno);
    }

    fn add(&self, point: IoPoint, skip: u64, times: Option<u64>, errno: i32) {
        self.rules.lock().unwrap().push(Rule {
            point,
            skip,
            times,
            errno,
        });
    }

    /// The disk "recovers": no more failures.
    pub fn clear(&self) {
        self.rules.lock().unwrap().clear();
    }

    /// How many operations at `point` were attempted.
    pub fn seen(&self, point: IoPoint) -> u64 {
        self.seen.lock().unwrap().get(&point).copied().unwrap_or(0)
    }

    /// Called by the store before the real operation.
    pub fn check(&self, point: IoPoint) -> io::Result<()> {
        *self.seen.lock().unwrap().entry(point).or_default() += 1;
        let mut rules = self.rules.lock().unwrap();
        let mut fail = None;
        for r in rules.iter_mut().filter(|r| r.point == point) {
            if r.skip > 0 {
                r.skip -= 1;
                continue;
            }
            if fail.is_none() {
                match r.times.as_mut() {
                    Some(0) => continue,
                    Some(t) => *t -= 1,
                    None => {}
                }
                fail = Some(r.errno);
            }
        }
        rules.retain(|r| r.times != Some(0));
        match fail {
            Some(errno) => Err(io::Error::from_raw_os_error(errno)),
            None => Ok(()),
        }
    }
}
