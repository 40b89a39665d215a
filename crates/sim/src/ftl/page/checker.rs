//! The checker: full consistency checks of an FTL's maps and counters.
//!
//! With `check.enabled` the page FTL runs [`check_page_ftl`] after every
//! reclaimed block (GC or wear levelling); tests also call it directly. It
//! verifies that
//! - the forward and reverse maps agree (`p2l[l2p[l]] == l` for every mapped
//!   logical page; a physical page is valid when `l2p[p2l[p]] == p`, and the
//!   other reverse entries, left by lazy invalidation, name logical pages);
//! - every block's valid-page count equals the number of valid pages in it, and
//!   the total equals the number of live (mapped) logical pages;
//! - free blocks hold nothing, open blocks hold nothing past their write pointer;
//! - the free pools hold exactly the free blocks of their die, and the greedy
//!   buckets hold exactly the closed blocks, each under its valid count.

use super::PageFtl;
use crate::error::SimError;
use crate::ftl::blocks::{BlockState, NONE};

pub fn check_page_ftl(f: &PageFtl) -> Result<(), SimError> {
    let geo = &f.geo;
    let ppb = geo.pages_per_block;
    let mut mapped = 0u64;
    for (lpn, &ppn) in f.l2p.iter().enumerate() {
        if ppn == NONE {
            continue;
        }
        mapped += 1;
        if ppn as u64 >= geo.physical_pages {
            return Err(SimError::Invariant(format!(
                "lpn {lpn} maps to out-of-range ppn {ppn}"
            )));
        }
        if f.p2l[ppn as usize] != lpn as u32 {
            return Err(SimError::Invariant(format!(
                "forward map lpn {lpn} -> ppn {ppn}, but reverse map ppn {ppn} -> {}",
                f.p2l[ppn as usize] as i64
            )));
        }
    }
    if mapped != f.mapped {
        return Err(SimError::Invariant(format!(
            "{mapped} logical pages mapped, counter says {}",
            f.mapped
        )));
    }
    let mut valid_total = 0u64;
    for b in 0..geo.total_blocks() {
        let base = (b * ppb) as usize;
        let pages = &f.p2l[base..base + ppb as usize];
        let mut valid = 0u32;
        for (i, &lpn) in pages.iter().enumerate() {
            if lpn == NONE {
                continue;
            }
            if lpn as u64 >= geo.logical_pages {
                return Err(SimError::Invariant(format!(
                    "reverse map ppn {} -> out-of-range lpn {lpn}",
                    base + i
                )));
            }
            if f.lpn_at((base + i) as u32).is_some() {
                valid += 1;
            }
        }
        if valid != f.blocks.valid(b) {
            return Err(SimError::Invariant(format!(
                "block {b}: {valid} valid pages, counter says {}",
                f.blocks.valid(b)
            )));
        }
        valid_total += valid as u64;
        let unit = geo.unit_of_block(b) as usize;
        let state = f.blocks.state(b);
        let write_ptr = match state {
            BlockState::Free => 0,
            BlockState::OpenHost => {
                let Some(fr) = die_frontiers(&f.host_open, unit, f.planes).find(|fr| fr.block == b)
                else {
                    return Err(SimError::Invariant(format!(
                        "block {b} is open for host writes but not one of die {unit}'s host frontiers"
                    )));
                };
                fr.next
            }
            BlockState::OpenGc => {
                let Some(fr) = die_frontiers(&f.gc_open, unit, f.planes).find(|fr| fr.block == b)
                else {
                    return Err(SimError::Invariant(format!(
                        "block {b} is open for GC but not one of die {unit}'s GC frontiers"
                    )));
                };
                fr.next
            }
            BlockState::Closed => ppb,
            BlockState::Victim => {
                return Err(SimError::Invariant(format!(
                    "block {b} left in victim state"
                )))
            }
        };
        if let Some(i) = pages[write_ptr as usize..].iter().position(|&l| l != NONE) {
            return Err(SimError::Invariant(format!(
                "block {b} ({state:?}) holds written page {} past its write pointer {write_ptr}",
                write_ptr as usize + i
            )));
        }
    }
    if valid_total != mapped {
        return Err(SimError::Invariant(format!(
            "{valid_total} valid physical pages but {mapped} live logical pages"
        )));
    }
    for (unit, heap) in f.free.iter().enumerate() {
        let mut n = 0usize;
        for std::cmp::Reverse((_, b)) in heap.iter() {
            if geo.unit_of_block(*b) as usize != unit || f.blocks.state(*b) != BlockState::Free {
                return Err(SimError::Invariant(format!(
                    "free pool of die {unit} holds block {b} in state {:?}",
                    f.blocks.state(*b)
                )));
            }
            n += 1;
        }
        let free_blocks = f
            .blocks
            .unit_blocks(unit as u32)
            .filter(|&b| f.blocks.state(b) == BlockState::Free)
            .count();
        if n != free_blocks {
            return Err(SimError::Invariant(format!(
                "die {unit}: {free_blocks} free blocks but {n} in the free pool"
            )));
        }
    }
    f.blocks.check_buckets(geo.units)
}

/// Die `unit`'s open blocks, one per plane the allocation rotates over.
fn die_frontiers(
    open: &[super::Frontier],
    unit: usize,
    planes: u32,
) -> impl Iterator<Item = &super::Frontier> {
    let p = planes as usize;
    open[unit * p..(unit + 1) * p].iter()
}
