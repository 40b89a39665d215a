//! Running a sweep's points on local threads (`flashlab sweep --jobs N`).
//!
//! Points are independent and single-threaded: N threads take the next
//! point from a shared counter until none is left (one thread for a grid
//! on a real device, whatever N). A point that fails is
//! recorded and the others go on.

use std::path::Path;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;

use flashlab_results::ToolInfo;

use crate::grid::Grid;
use crate::point::{run_point, PointOutcome};

/// Runs every point of `grid` under `root` on `jobs` threads and returns the
/// outcomes in expansion order. `on_done` is called (from the worker
/// threads) after each point; a point whose own files cannot be written is
/// reported as failed, with that error.
pub fn run_local(
    grid: &Grid,
    root: &Path,
    jobs: usize,
    tool: &ToolInfo,
    on_done: &(dyn Fn(&PointOutcome) + Sync),
) -> Vec<PointOutcome> {
    let points = grid.points();
    // Points on one real device run one at a time: at once they would
    // share its channels and measure each other.
    let jobs = if grid.target.is_some() { 1 } else { jobs };
    let next = AtomicUsize::new(0);
    let done: Mutex<Vec<Option<PointOutcome>>> = Mutex::new(vec![None; points.len()]);
    std::thread::scope(|s| {
        for _ in 0..jobs.clamp(1, points.len().max(1)) {
            s.spawn(|| loop {
                let i = next.fetch_add(1, Ordering::Relaxed);
                let Some(point) = points.get(i) else { break };
                let outcome = run_point(grid, point, root, tool)
                    .unwrap_or_else(|e| PointOutcome::failed(point, root, &e.to_string()));
                on_done(&outcome);
                done.lock()
                    .expect("no worker panics while holding the lock")[i] = Some(outcome);
            });
        }
    });
    done.into_inner()
        .expect("workers joined")
        .into_iter()
        .map(|o| o.expect("every point ran"))
        .collect()
}
