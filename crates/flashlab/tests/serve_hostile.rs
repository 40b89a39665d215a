//! `flashlab serve` under hostile clients (crates/nbd/src/attacks.rs): many
//! connections declaring 32 MiB writes, whole 32 MiB writes with replies
//! unread, pipelining under --pace, silent and idle connections, writers
//! that declare payloads they never send while a reader reads. Prints the
//! server's peak RSS under each attack and checks that memory stays within
//! the buffer limit and that an honest client always gets through.

mod serve_util;

use flashlab_nbd::attacks;
use flashlab_nbd::server::DEFAULT_BUFFER_BYTES;
use serve_util::bin;

const MIB: u64 = 1 << 20;

#[test]
fn hostile_clients_cannot_exhaust_memory_or_lock_out_honest_ones() {
    let d = tempfile::tempdir().unwrap();
    let server = vec![
        bin().to_string(),
        "serve".into(),
        "--profile".into(),
        "ssd-m,capacity=1GiB".into(),
    ];
    let reports = attacks::run_all(&server, d.path()).unwrap_or_else(|e| panic!("{e}"));
    eprintln!("{}", attacks::table(&reports));
    let baseline = reports[0].peak_rss_bytes;
    assert!(baseline > 0, "VmHWM not readable");
    // Threads, their socket buffers and the pacer's queue: a generous but
    // finite allowance on top of the buffer limit.
    let slack = 96 * MIB;
    for r in &reports[1..] {
        assert!(
            r.peak_rss_bytes <= baseline + DEFAULT_BUFFER_BYTES + slack,
            "{}: peak RSS {} MiB (baseline {} MiB, buffer limit {} MiB)",
            r.name,
            r.peak_rss_bytes / MIB,
            baseline / MIB,
            DEFAULT_BUFFER_BYTES / MIB
        );
    }
    let declared = &reports[1];
    assert!(
        declared.peak_rss_bytes <= baseline + slack,
        "declared but unsent payloads cost memory: {} MiB",
        declared.peak_rss_bytes / MIB
    );
    // Each newcomer evicts the connection idle the longest, so all 200 get
    // through the handshake, but the server never holds more than
    // --max-connections (default 64) at once.
    assert_eq!(
        declared.attacker_connections + declared.attacker_refused,
        200
    );
    assert_eq!(
        declared.attacker_open,
        Some(64),
        "--max-connections defaults to 64"
    );
    for r in &reports {
        if let Some(ms) = r.honest_client_ms {
            assert!(ms < 10_000, "{}: {ms} ms", r.name);
        }
    }
    // Reads are never held up by writers holding the write buffers (before
    // reads had their own pool, they waited out the 30 s stall timeout), and
    // a newcomer takes an idle connection's slot at once (it used to wait
    // for one to be idle for the handshake timeout, 10 s).
    for (prefix, within_ms) in [
        ("9 connections declare", 1_000),
        ("200 connections finish", 1_000),
    ] {
        let r = reports
            .iter()
            .find(|r| r.name.starts_with(prefix))
            .unwrap_or_else(|| panic!("no attack {prefix:?}"));
        let ms = r.honest_client_ms.expect("timed");
        assert!(ms < within_ms, "{}: {ms} ms", r.name);
    }
}
