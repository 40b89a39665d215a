//! The uFLIP IO-pattern algebra (Bouganim et al., CIDR 2009, section 3.1 and
//! Table 1), extended with the patterns of Chen et al. (stride) and Hudlet &
//! Schall (skip-sequential, random-once) and with queue depth.
//!
//! A pattern is one function per IO attribute: time ([`Timing`]), size
//! (constant IOSize), location ([`Location`], relative to TargetOffset,
//! aligned to IOSize, shifted by IOShift, inside TargetSize) and mode; two
//! basic patterns can be mixed with a Ratio, and a pattern can be replicated
//! over ParallelDegree streams, each with its own slice of the target.
//!
//! This crate only describes and generates; it never does IO and never reads
//! a clock. Generation is pure and seeded: the same [`PatternSpec`] yields the
//! same IOs on every machine and in every later version (the random number
//! generators are our own, see [`rng`], so a dependency upgrade cannot change
//! them).
//!
//! - [`args`]: parameters as users write them (flags, TOML) and their defaults;
//! - [`spec`]: the validated specification and its checks;
//! - [`generate`]: the IO sequences;
//! - [`file`]: TOML pattern files;
//! - [`fio`]: fio's names, sizes and job files as flashlab parameters;
//! - [`skew`]: the skewed location functions' draws (zipf, pareto, normal, zoned);
//! - [`units`]: sizes and durations.

#![forbid(unsafe_code)]

pub mod args;
pub mod error;
pub mod file;
pub mod fio;
#[doc(hidden)]
pub mod fuzz;
pub mod generate;
pub mod rng;
pub mod skew;
pub mod spec;
pub mod units;

pub use args::{PatternArgs, DEFAULT_SEED};
pub use error::{DeviceAlignment, PatternError, Side, UnitError};
pub use file::PatternFile;
pub use generate::{all_ios, slot_count, PlannedIo, StreamGen, Touched};
pub use spec::{
    parse_bssplit, Basic, Location, Mix, PatternSpec, SizeShare, Timing, Zone, SECTOR_BYTES,
};
