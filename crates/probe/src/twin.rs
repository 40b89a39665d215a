//! The twin: see twin.rs (filled in below).
