//! The store under injected IO failures (crates/nbd/src/faults.rs): an
//! acknowledged FLUSH is a promise, so after any failed data write,
//! fdatasync or log append no later FLUSH, FUA or write succeeds until a
//! restart, and recovery serves what the log proves; a failed checkpoint
//! loses nothing logged after it; one server per data directory.

use std::path::Path;
use std::sync::Arc;

use flashlab_nbd::faults::{Faults, IoPoint};
use flashlab_nbd::proto::{EIO, ENOSPC};
use flashlab_nbd::store::{OpenError, StoreError, WriteBackStep};
use flashlab_nbd::{Backend, Store, StoreOptions};

const SPEC: &str = "ssd-m,capacity=256MiB,channels=2";

fn open(dir: &Path, checkpoint_records: u64, faults: Option<Arc<Faults>>) -> Store {
    try_open(dir, checkpoint_records, faults).unwrap_or_else(|e| panic!("open: {e}"))
}

fn try_open(
    dir: &Path,
    checkpoint_records: u64,
    faults: Option<Arc<Faults>>,
) -> Result<Store, OpenError> {
    Store::open(&StoreOptions {
        dir: dir.to_path_buf(),
        spec: Some(SPEC.into()),
        seed: 1,
        checkpoint_records,
        trace: None,
        faults,
    })
}

fn block(i: u64) -> Vec<u8> {
    (0..4096u64)
        .map(|j| (i.wrapping_mul(131) ^ j.wrapping_mul(7)) as u8)
        .collect()
}

#[test]
fn after_a_failed_fdatasync_no_flush_succeeds_again_until_restart() {
    let d = tempfile::tempdir().unwrap();
    let dir = d.path().join("dev");
    let faults = Arc::new(Faults::new());
    let s = open(&dir, 0, Some(faults.clone()));
    s.write(0, &block(1), false).unwrap();
    s.flush().unwrap();
    s.write(4096, &block(2), false).unwrap();
    // The host file system fails the write-back once (fsyncgate): the
    // kernel reports EIO to this fdatasync and may drop the dirty pages.
    faults.fail_nth(IoPoint::DataSync, 1, libc::EIO);
    assert_eq!(s.flush(), Err(EIO));
    // The disk "recovers": a later fdatasync would succeed, but it proves
    // nothing about the pages the failed one dropped.
    faults.clear();
    assert_eq!(s.flush(), Err(EIO), "a FLUSH after a failed fdatasync");
    assert_eq!(s.write(8192, &block(3), true), Err(EIO), "a FUA write");
    assert_eq!(s.write(8192, &block(3), false), Err(EIO), "a plain write");
    assert_eq!(s.trim(0, 4096, false), Err(EIO));
    assert_eq!(s.write_zeroes(0, 4096, false, false), Err(EIO));
    assert!(s.stats().read_only);
    // Reads go on.
    let mut b = vec![0u8; 4096];
    s.read(0, &mut b).unwrap();
    assert_eq!(b, block(1));
    // No clean checkpoint over lost data; the refusal names the first error.
    let e = s.shutdown().expect_err("a checkpoint of a read-only store");
    assert!(
        matches!(&e, StoreError::ReadOnly { cause: Some(c) }
            if matches!(**c, StoreError::WriteBack { step: WriteBackStep::DataSync, .. })),
        "{e:?}"
    );
    assert!(
        e.to_string()
            .starts_with("read-only after an earlier IO error (fdatasync data.img: "),
        "{e}"
    );
    drop(s);
    // Restart: recovery replays what the log proves (the first write and
    // its flush), and the store is writable again.
    let s = open(&dir, 0, None);
    assert!(!s.stats().read_only);
    assert_eq!(
        s.recovery.log_records_replayed, 1,
        "the flushed write only: the unproven one is not in the log"
    );
    s.read(0, &mut b).unwrap();
    assert_eq!(b, block(1), "the flushed write survived");
    s.write(8192, &block(3), true).unwrap();
    s.flush().unwrap();
}

#[test]
fn a_failed_log_append_fails_every_later_flush() {
    let d = tempfile::tempdir().unwrap();
    let dir = d.path().join("dev");
    let faults = Arc::new(Faults::new());
    let s = open(&dir, 0, Some(faults.clone()));
    for i in 0..100 {
        s.write(i * 4096, &block(i), false).unwrap();
    }
    s.flush().unwrap();
    // 4000 acknowledged writes, then the log append fails for lack of space.
    for i in 0..4000 {
        s.write((i % 10_000) * 4096, &block(i), false).unwrap();
    }
    faults.fail_nth(IoPoint::LogWrite, 1, libc::ENOSPC);
    assert_eq!(s.flush(), Err(EIO));
    faults.clear();
    // Space comes back. Today's bug: this FLUSH succeeded although the 4000
    // records it covers were dropped with the failed append.
    s.write(0, &block(7), false).unwrap_err();
    assert_eq!(s.flush(), Err(EIO));
    drop(s);
    let s = open(&dir, 0, None);
    assert_eq!(
        s.recovery.log_records_replayed, 100,
        "the 100 flushed writes; none of the 4000 whose append failed"
    );
    let mut b = vec![0u8; 4096];
    s.read(99 * 4096, &mut b).unwrap();
    assert_eq!(b, block(99));
}

#[test]
fn a_failed_data_write_makes_the_store_read_only() {
    let d = tempfile::tempdir().unwrap();
    let faults = Arc::new(Faults::new());
    let s = open(&d.path().join("dev"), 0, Some(faults.clone()));
    s.write(0, &block(1), false).unwrap();
    faults.fail_nth(IoPoint::DataWrite, 1, libc::ENOSPC);
    assert_eq!(s.write(4096, &block(2), false), Err(ENOSPC));
    faults.clear();
    assert_eq!(s.flush(), Err(EIO));
    assert_eq!(s.write(4096, &block(2), false), Err(EIO));
}

#[test]
fn a_checkpoint_failing_for_lack_of_space_loses_no_later_logged_request() {
    let d = tempfile::tempdir().unwrap();
    let dir = d.path().join("dev");
    let faults = Arc::new(Faults::new());
    let s = open(&dir, 100, Some(faults.clone()));
    assert_eq!(s.recovery.checkpoint_generation, 0);
    // Every checkpoint from now on fails: the disk is full.
    faults.fail_always(IoPoint::CheckpointWrite, libc::ENOSPC);
    for i in 0..99 {
        s.write(i * 4096, &block(i), false).unwrap();
    }
    // The 100th request is due for a checkpoint: it fails, the write does not.
    s.write(99 * 4096, &block(99), false).unwrap();
    // 99 more requests, then a FLUSH that covers them (the 200th request
    // tries the checkpoint again, and fails again).
    for i in 100..199 {
        s.write(i * 4096, &block(i), false).unwrap();
    }
    s.flush().unwrap();
    let st = s.stats();
    assert_eq!(st.checkpoint_failures, 1, "one attempt so far");
    assert_eq!(st.checkpoints, 1, "only the one at start-up took effect");
    assert!(
        !st.read_only,
        "a checkpoint failing before its rename is harmless"
    );
    let mapped = st.mapped_pages;
    assert!(faults.seen(IoPoint::CheckpointWrite) >= 1);
    drop(s); // a crash: no shutdown checkpoint
    let s = open(&dir, 100, None);
    assert_eq!(s.recovery.checkpoint_generation, 1);
    assert_eq!(
        s.recovery.log_records_replayed, 199,
        "every flushed request after the failed checkpoint is replayed"
    );
    assert_eq!(s.stats().mapped_pages, mapped, "the same flash state");
    let mut b = vec![0u8; 4096];
    s.read(150 * 4096, &mut b).unwrap();
    assert_eq!(b, block(150));
    assert!(
        !dir.join("ckpt-2.tmp").exists(),
        "the failed checkpoint's file was removed"
    );
}

#[test]
fn a_checkpoint_failing_after_its_rename_poisons_and_recovery_is_consistent() {
    let d = tempfile::tempdir().unwrap();
    let dir = d.path().join("dev");
    let faults = Arc::new(Faults::new());
    let s = open(&dir, 50, Some(faults.clone()));
    faults.fail_nth(IoPoint::DirSync, 1, libc::EIO);
    for i in 0..49 {
        s.write(i * 4096, &block(i), false).unwrap();
    }
    assert_eq!(s.write(49 * 4096, &block(49), false), Err(EIO));
    assert_eq!(s.flush(), Err(EIO));
    let mapped = s.stats().mapped_pages;
    drop(s);
    let s = open(&dir, 50, None);
    // Generation 2 (its checkpoint holds all 50 requests) or generation 1
    // with its complete log: either way the same flash state.
    assert_eq!(s.stats().mapped_pages, mapped);
    let mut b = vec![0u8; 4096];
    s.read(49 * 4096, &mut b).unwrap();
    assert_eq!(b, block(49));
}

#[test]
fn a_second_store_on_the_same_directory_is_refused_and_deletes_nothing() {
    let d = tempfile::tempdir().unwrap();
    let dir = d.path().join("dev");
    let s = open(&dir, 0, None);
    s.write(0, &block(1), false).unwrap();
    s.flush().unwrap();
    let before: Vec<_> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    let e = match try_open(&dir, 0, None) {
        Ok(_) => panic!("a second store opened a live directory"),
        Err(e) => e,
    };
    assert!(e.is_user(), "{e}");
    assert!(
        matches!(&e, OpenError::InUse { pid: Some(pid), .. } if *pid == std::process::id()),
        "{e:?}"
    );
    assert_eq!(
        e.to_string(),
        format!(
            "{} is in use by another flashlab serve (pid {}); stop that server first, or use another --data directory",
            dir.display(),
            std::process::id()
        )
    );
    let after: Vec<_> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert_eq!(before, after, "the refused store touched the directory");
    // The live store still works, and its flush still covers its write.
    s.write(4096, &block(2), true).unwrap();
    s.flush().unwrap();
    drop(s);
    let s = open(&dir, 0, None);
    let mut b = vec![0u8; 4096];
    s.read(4096, &mut b).unwrap();
    assert_eq!(b, block(2));
}

#[test]
fn a_trace_inside_the_data_directory_is_refused() {
    let d = tempfile::tempdir().unwrap();
    let dir = d.path().join("dev");
    drop(open(&dir, 0, None));
    // Outside the directory but resolving into it: a symlink to the device
    // file, a dangling symlink to a new file in it, a hard link.
    let data = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .find(|p| p.extension().is_some_and(|x| x == "img"))
        .expect("the store's data file");
    let link = d.path().join("link.trace");
    std::os::unix::fs::symlink(&data, &link).unwrap();
    let dangling = d.path().join("dangling.trace");
    std::os::unix::fs::symlink(dir.join("new.trace"), &dangling).unwrap();
    let hard = d.path().join("hard.trace");
    std::fs::hard_link(&data, &hard).unwrap();
    for inside in [
        dir.join("wal-1.log"),
        dir.join("trace.txt"),
        link,
        dangling,
        hard,
    ] {
        let e = match Store::open(&StoreOptions {
            dir: dir.clone(),
            spec: None,
            seed: 1,
            checkpoint_records: 0,
            trace: Some(inside.clone()),
            faults: None,
        }) {
            Ok(_) => panic!("--trace {} was accepted", inside.display()),
            Err(e) => e,
        };
        assert!(
            e.is_user() && matches!(e, OpenError::OutputInsideData { .. }),
            "{e:?}"
        );
        assert!(e.to_string().contains("inside the data directory"), "{e}");
    }
    // The store is intact.
    let s = open(&dir, 0, None);
    assert!(!s.stats().read_only);
}

#[test]
fn recovery_replays_only_the_checksummed_prefix_of_the_log() {
    let d = tempfile::tempdir().unwrap();
    let dir = d.path().join("dev");
    let s = open(&dir, 0, None);
    for i in 0..10 {
        s.write(i * 4096, &block(i), false).unwrap();
    }
    s.flush().unwrap();
    let gen = s.recovery.checkpoint_generation + 1; // the checkpoint at start-up
    drop(s);
    let wal = dir.join(format!("wal-{gen}.log"));
    let mut bytes = std::fs::read(&wal).unwrap();
    assert_eq!(bytes.len(), 10 * flashlab_nbd::store::RECORD_BYTES);
    // A torn append: one whole record whose checksum does not match, then half a record.
    let mut bad = bytes[..32].to_vec();
    bad[10] ^= 0xff;
    bytes.extend_from_slice(&bad);
    bytes.extend_from_slice(&bad[..16]);
    std::fs::write(&wal, &bytes).unwrap();
    let s = open(&dir, 0, None);
    assert_eq!(s.recovery.log_records_replayed, 10);
    assert_eq!(s.recovery.log_tail_bytes_dropped, 48);
    let mut b = vec![0u8; 4096];
    s.read(9 * 4096, &mut b).unwrap();
    assert_eq!(b, block(9));
}

#[test]
fn a_corrupt_record_inside_the_log_is_reported_and_the_records_after_it_replayed() {
    let d = tempfile::tempdir().unwrap();
    let dir = d.path().join("dev");
    let s = open(&dir, 0, None);
    for i in 0..10 {
        s.write(i * 4096, &block(i), false).unwrap();
    }
    s.flush().unwrap();
    let gen = s.recovery.checkpoint_generation + 1;
    drop(s);
    let wal = dir.join(format!("wal-{gen}.log"));
    let mut bytes = std::fs::read(&wal).unwrap();
    let rb = flashlab_nbd::store::RECORD_BYTES;
    // Bit rot in the fifth record, and a torn half record at the end.
    bytes[4 * rb + 10] ^= 0xff;
    let damaged = bytes.clone();
    bytes.extend_from_slice(&damaged[..16]);
    std::fs::write(&wal, &bytes).unwrap();
    let s = open(&dir, 0, None);
    assert_eq!(s.recovery.corrupt_log_records, vec![(gen, 4 * rb as u64)]);
    assert_eq!(
        s.recovery.log_records_replayed, 9,
        "the five records after it are replayed"
    );
    assert_eq!(s.recovery.log_tail_bytes_dropped, 16);
    let kept = dir.join(format!("wal-{gen}.log.damaged"));
    assert_eq!(
        std::fs::read(&kept).unwrap(),
        bytes,
        "the damaged log is kept as evidence"
    );
    drop(s);
    // Recovery checkpointed the rebuilt state: the next start finds no
    // damage, the evidence stays, and the data is intact.
    let s = open(&dir, 0, None);
    assert!(s.recovery.corrupt_log_records.is_empty());
    assert!(kept.exists());
    let mut b = vec![0u8; 4096];
    s.read(9 * 4096, &mut b).unwrap();
    assert_eq!(b, block(9));
}

/// The flash state a store is in: enough counters that a different history
/// shows up in one of them.
fn flash_state(s: &Store) -> (u64, u64, u64, u64) {
    let st = s.stats();
    (
        st.mapped_pages,
        st.erases,
        st.gc_relocated_pages,
        st.sim_now_ns,
    )
}

fn flip_a_byte(path: &Path) {
    let mut bytes = std::fs::read(path).unwrap();
    let mid = bytes.len() / 2;
    bytes[mid] ^= 0x5a;
    std::fs::write(path, &bytes).unwrap();
}

#[test]
fn a_damaged_newest_checkpoint_is_rebuilt_from_the_one_before_it() {
    let d = tempfile::tempdir().unwrap();
    let dir = d.path().join("dev");
    // Checkpoints at start-up (generation 1) and every 20 requests after.
    let s = open(&dir, 20, None);
    for i in 0..50 {
        s.write(i * 4096, &block(i), false).unwrap();
    }
    s.flush().unwrap();
    let gen = s.stats().checkpoints; // generations 1..=gen were written
    drop(s); // a crash
             // What an intact directory recovers to.
    let intact = d.path().join("intact");
    std::fs::create_dir(&intact).unwrap();
    for e in std::fs::read_dir(&dir).unwrap().flatten() {
        if e.file_name() != "serve.lock" {
            std::fs::copy(e.path(), intact.join(e.file_name())).unwrap();
        }
    }
    let want = flash_state(&open(&intact, 20, None));
    // Bit rot in the newest checkpoint.
    flip_a_byte(&dir.join(format!("ckpt-{gen}.bin")));
    let s = open(&dir, 20, None);
    assert_eq!(s.recovery.checkpoint_generation, gen);
    assert_eq!(s.recovery.rebuilt_from_generation, Some(gen - 1));
    assert_eq!(
        flash_state(&s),
        want,
        "the same flash state as from the intact checkpoint"
    );
    let mut b = vec![0u8; 4096];
    s.read(45 * 4096, &mut b).unwrap();
    assert_eq!(b, block(45));
    assert!(
        dir.join(format!("ckpt-{gen}.bin.damaged")).exists(),
        "the damaged checkpoint is kept as evidence"
    );
}

#[test]
fn with_every_checkpoint_damaged_the_error_gives_the_way_back_to_the_data() {
    let d = tempfile::tempdir().unwrap();
    let dir = d.path().join("dev");
    let s = open(&dir, 20, None);
    for i in 0..50 {
        s.write(i * 4096, &block(i), false).unwrap();
    }
    s.flush().unwrap();
    drop(s);
    for e in std::fs::read_dir(&dir).unwrap().flatten() {
        let n = e.file_name().to_string_lossy().to_string();
        if n.starts_with("ckpt-") {
            flip_a_byte(&e.path());
        }
    }
    let msg = match try_open(&dir, 20, None) {
        Err(e) => e.to_string(),
        Ok(_) => panic!("opened with every checkpoint damaged"),
    };
    assert!(
        msg.contains("no usable checkpoint") && msg.contains("data.img is intact"),
        "{msg}"
    );
    assert!(!msg.contains('\n'), "one line: {msg}");
    // The way the message gives: move the checkpoints and logs aside.
    let aside = d.path().join("aside");
    std::fs::create_dir(&aside).unwrap();
    for e in std::fs::read_dir(&dir).unwrap().flatten() {
        let n = e.file_name().to_string_lossy().to_string();
        if n.starts_with("ckpt-") || n.starts_with("wal-") {
            std::fs::rename(e.path(), aside.join(&n)).unwrap();
        }
    }
    let s = open(&dir, 20, None);
    let mut b = vec![0u8; 4096];
    s.read(45 * 4096, &mut b).unwrap();
    assert_eq!(b, block(45), "the data survives a fresh flash state");
}
