//! The paper suites: each reproduces one paper's experiments on any
//! [`flashlab_device::Device`] and saves its runs in the common results
//! format, plus a journal (`suite.json`) that makes it resumable.
//!
//! - [`uflip`]: the nine micro-benchmarks of uFLIP Table 1, planned with the
//!   methodology of uFLIP section 4: [`state`] enforcement, start-up and
//!   period detection and automatic IOIgnore/IOCount ([`phases`]), the pause
//!   between runs, disjoint space for sequential writes ([`plan`]);
//!   [`table3`] turns the results into the device's Table 3 row and hints.
//! - [`runner`]: executes any plan, resumably; [`eta`] estimates the time
//!   it has left; [`session`] starts a suite
//!   in a results directory and summarises it (the CLI's and sweeps' path).
//! - [`papers`]: chen09, wang11 and hudlet11, each run named after the
//!   figure it reproduces; [`findings`] summarises them.
//! - [`suites`]: the registry: each suite one module implementing
//!   [`suites::Suite`] (plan, typed [`summary`], [`figures`] as data).
//!   [`suites::budilovsky11`] reproduces Budilovsky, Toledo & Zuck's
//!   experiments on the simulator (DFTL-like vs small chunks vs small
//!   chunks with host hints), each design on a fresh simulated device.
//!   [`suites::wang11_oltp`] is the OLTP matrix, a kind of its own outside
//!   the registry: whole `flashlab oltp` runs, summarised from `oltp.json`.

#![forbid(unsafe_code)]

pub mod eta;
pub mod figures;
pub mod findings;
pub mod papers;
pub mod phases;
pub mod plan;
pub mod runner;
pub mod session;
pub mod state;
pub mod suites;
pub mod summary;
pub mod table3;
pub mod uflip;
pub mod validate;
