//! flashlab's NBD server (`flashlab serve`): the simulator in device mode
//! behind the Network Block Device protocol, so that real software (mkfs,
//! file systems, databases, nbdcopy, qemu-img) runs on a simulated SSD.
//!
//! - [`proto`]: the wire protocol, pure parsers and encoders (fuzzed).
//! - [`server`]: listener, one thread per connection, the session state
//!   machine generic over any reader/writer, pacing.
//! - [`store`]: the durable store (data file, write-ahead log of requests,
//!   checkpoints of the simulator's flash state, crash recovery).
//! - [`faults`]: deterministic fault injection for the store's IO (tests).
//! - [`client`]: a small client for tests and the crash harness.
//! - [`attacks`]: hostile-client attacks with the server's peak memory.
//! - [`harness`]: the crash-test harness (write, flush, SIGKILL, restart, verify).
//! - [`mem`]: an in-memory backend for protocol tests and fuzzing.
//!
//! docs/serve.md explains the design and why recovery is correct.

pub mod attacks;
pub mod client;
pub mod faults;
pub mod harness;
pub mod mem;
pub mod proto;
pub mod server;
pub mod store;

pub use server::{Backend, Listen, Server, SessionConfig, SessionEnd};
pub use store::{Store, StoreOptions, StoreStats};

/// Fuzz entry point: run one whole session (handshake, transmission) with
/// `data` as everything the client sends, against a small in-memory export.
/// Must never panic, hang or allocate without bound.
pub fn fuzz_session(data: &[u8]) {
    let backend = mem::MemBackend::new(64 * 1024);
    let counters = server::ServerCounters::default();
    let cfg = SessionConfig::default();
    let _ = server::session(
        std::io::Cursor::new(data),
        std::io::sink(),
        &backend,
        &cfg,
        &counters,
    );
}
