//! Two tracing sessions started at once (two `flashlab oltp` runs side by
//! side): on a machine where tracefs is not mounted both mount it at the
//! same moment (one gets EBUSY, which means "mounted meanwhile"), and
//! neither unmounts it under the other when it ends.

mod common;

use common::Loop;
use flashlab_iotrace::{start, PhysicalSpec, TraceSpec};

#[test]
fn two_sessions_started_at_once_both_trace_and_leave_tracefs_mounted() {
    require_root!();
    // The fresh-machine case: tracefs not mounted. It is unmounted here
    // when nothing uses it (a plain umount fails with EBUSY while any
    // instance or file in it is open: then the sessions find it mounted);
    // the sessions mount it again and leave it mounted, so the machine
    // ends as it was.
    let target = std::ffi::CString::new("/sys/kernel/tracing").unwrap();
    // SAFETY: a valid NUL-terminated path.
    let was_mounted = unsafe { libc::umount2(target.as_ptr(), 0) } != 0;
    let devices = [Loop::new(8 << 20), Loop::new(8 << 20)];
    let outs = [tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap()];
    let barrier = std::sync::Barrier::new(2);
    std::thread::scope(|scope| {
        let sessions: Vec<_> = devices
            .iter()
            .zip(&outs)
            .map(|(dev, out)| {
                let barrier = &barrier;
                scope.spawn(move || {
                    barrier.wait();
                    let session = start(TraceSpec {
                        out_dir: out.path().to_path_buf(),
                        logical: None,
                        physical: Some(PhysicalSpec {
                            major: dev.major,
                            minor: dev.minor,
                        }),
                        reader: Default::default(),
                    });
                    // The first to finish ends while the other still
                    // traces (also when one failed: no one waits forever).
                    barrier.wait();
                    session.map(|s| s.stop())
                })
            })
            .collect();
        for s in sessions {
            let summary = s
                .join()
                .expect("no panic")
                .expect("both sessions start")
                .expect("both sessions stop");
            assert!(
                !summary.notes.iter().any(|n| n.contains("unmount")),
                "{:?}",
                summary.notes
            );
        }
    });
    assert!(
        std::path::Path::new("/sys/kernel/tracing/instances").is_dir(),
        "tracefs stays mounted after both sessions (left mounted by another user before: {was_mounted})"
    );
}
