//! Ctrl-C and SIGTERM stop a run cleanly: the executor stops submitting,
//! drains the IOs in flight, and the run is saved as "interrupted". A second
//! Ctrl-C exits at once (records already flushed are kept).

use std::sync::atomic::{AtomicBool, Ordering};

pub static STOP: AtomicBool = AtomicBool::new(false);

/// Set by commands whose teardown must run whatever happens (`flashlab
/// oltp`: a mounted file system over a stopped device would hang): a second
/// Ctrl-C does not exit at once.
pub static PATIENT: AtomicBool = AtomicBool::new(false);

extern "C" fn on_signal(_sig: libc::c_int) {
    if STOP.swap(true, Ordering::SeqCst) && !PATIENT.load(Ordering::SeqCst) {
        // SAFETY: _exit is async-signal-safe.
        unsafe { libc::_exit(130) };
    }
}

pub fn install() {
    for sig in [libc::SIGINT, libc::SIGTERM] {
        // SAFETY: installing a handler that only touches an atomic and calls _exit.
        unsafe {
            let mut action: libc::sigaction = std::mem::zeroed();
            action.sa_sigaction = on_signal as *const () as usize;
            libc::sigemptyset(&mut action.sa_mask);
            libc::sigaction(sig, &action, std::ptr::null_mut());
        }
    }
}
