//! Hostile or damaged results directories, as the attacks that found them:
//! a FIFO in place of `records.bin` or `manifest.json` (readers hung
//! forever), a 300 MB device name (reports copied it into gigabytes).

use std::collections::BTreeMap;
use std::path::Path;
use std::time::{Duration, Instant};

use flashlab_device::{ClockKind, DeviceInfo, DeviceKind};
use flashlab_results::records::RecordFile;
use flashlab_results::{
    read_manifest, HostInfo, Manifest, ManifestError, ResultsDir, ToolInfo, SCHEMA_VERSION,
};

fn manifest(device_name: String) -> Manifest {
    Manifest {
        schema_version: SCHEMA_VERSION,
        tool: ToolInfo {
            name: "flashlab".into(),
            version: "0.1.0".into(),
            git_commit: "test".into(),
        },
        created_unix_s: 1_795_000_000,
        command_line: vec!["flashlab".into()],
        host: HostInfo {
            hostname: "testhost".into(),
            kernel: "6.1.0".into(),
            cpus: 2,
        },
        device: DeviceInfo {
            name: device_name,
            kind: DeviceKind::Simulated,
            clock: ClockKind::Simulated,
            size_bytes: 1 << 30,
            logical_block_bytes: 512,
            identity: BTreeMap::new(),
        },
        engine: "simulator".into(),
        suite: None,
        runs: Vec::new(),
    }
}

fn mkfifo(path: &Path) {
    let c = std::ffi::CString::new(path.as_os_str().as_encoded_bytes()).unwrap();
    // SAFETY: a valid NUL-terminated path.
    assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o644) }, 0);
}

/// Runs `f` on a thread and fails the test if it has not returned within 5 s.
fn promptly<T: Send + 'static>(f: impl FnOnce() -> T + Send + 'static) -> T {
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let _ = tx.send(f());
    });
    rx.recv_timeout(Duration::from_secs(5))
        .expect("the reader hung on a FIFO")
}

#[test]
fn a_fifo_records_file_is_refused_at_once() {
    let dir = tempfile::tempdir().unwrap();
    let fifo = dir.path().join("records.bin");
    mkfifo(&fifo);
    let e = promptly(move || RecordFile::open(&fifo).unwrap_err().to_string());
    assert!(e.contains("not a regular file"), "{e}");
}

#[test]
fn a_fifo_manifest_or_journal_is_refused_at_once() {
    let dir = tempfile::tempdir().unwrap();
    mkfifo(&dir.path().join("manifest.json"));
    let root = dir.path().to_path_buf();
    let e = promptly(move || read_manifest(&root).unwrap_err().to_string());
    assert!(e.contains("not a regular file"), "{e}");

    let dir = tempfile::tempdir().unwrap();
    drop(ResultsDir::create(&dir.path().join("r"), manifest("sim:x".into())).unwrap());
    mkfifo(&dir.path().join("r").join(flashlab_results::JOURNAL_FILE));
    let root = dir.path().join("r");
    let e = promptly(move || read_manifest(&root).unwrap_err().to_string());
    assert!(e.contains("not a regular file"), "{e}");
}

#[test]
fn an_overlong_device_name_is_refused_when_the_manifest_is_read() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("r");
    drop(ResultsDir::create(&root, manifest("x".repeat(1 << 20))).unwrap());
    let started = Instant::now();
    let e = read_manifest(&root).unwrap_err();
    assert!(matches!(e, ManifestError::TooLarge { .. }), "{e}");
    assert!(
        e.to_string()
            .contains("the device's name is longer than 64 KiB"),
        "{e}"
    );
    assert!(started.elapsed() < Duration::from_secs(2));
    // A name of ordinary length reads.
    let ok = dir.path().join("ok");
    drop(ResultsDir::create(&ok, manifest("sim:ssd-m".into())).unwrap());
    assert_eq!(read_manifest(&ok).unwrap().0.device.name, "sim:ssd-m");
}
