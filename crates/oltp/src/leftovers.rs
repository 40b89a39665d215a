//! After teardown: is anything left? A child process still alive, a mount
//! under the run directory, a loop device we attached, the run directory
//! itself. Each leftover is one line for oltp.json and the exit status.

use std::path::Path;

/// What a run must have removed by the end.
#[derive(Clone, Debug, Default)]
pub struct Watch {
    /// Child processes we started (postmaster, serve, nbdfuse).
    pub pids: Vec<u32>,
    /// Loop devices we attached and their backing files (loop3,
    /// /path/dev.img): a loop device is ours only while it has that backing
    /// file (another program may attach the same number after we detach).
    pub loop_devices: Vec<(String, String)>,
}

pub fn check(run_dir: &Path, watch: &Watch) -> Vec<String> {
    let mut left = Vec::new();
    for pid in &watch.pids {
        if let Ok(stat) = std::fs::read_to_string(format!("/proc/{pid}/stat")) {
            // A zombie is gone for our purposes only once reaped; report any.
            left.push(format!(
                "process {pid} still exists ({})",
                stat.split(' ').nth(1).unwrap_or("?")
            ));
        }
    }
    for m in crate::device::mount::mounts() {
        if m.mount_point.starts_with(run_dir) {
            left.push(format!(
                "{} is still mounted on {}",
                m.source,
                m.mount_point.display()
            ));
        }
    }
    for (l, ours) in &watch.loop_devices {
        if let Ok(b) = std::fs::read_to_string(format!("/sys/block/{l}/loop/backing_file")) {
            if b.trim() == ours {
                left.push(format!("/dev/{l} is still attached to {ours}"));
            }
        }
    }
    if run_dir.exists() {
        left.push(format!("{} still exists", run_dir.display()));
    }
    left
}
