//! The paper suites: each reproduces one paper's experiments on a Device
//! and saves its results in the common results format.
//!
//! - [`budilovsky11`]: Budilovsky, Toledo & Zuck's experiments on the
//!   simulator (DFTL-like vs small chunks vs small chunks with host hints).

pub mod budilovsky11;
