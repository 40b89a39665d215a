//! The attacks that found wrong rows marked "ok" and unbounded inputs, as
//! regression tests: two sweeps into one directory, duplicate points, a
//! damaged point on resume, grids too large to expand, `/dev/zero` inputs.

use std::path::Path;
use std::time::Instant;

use flashlab_results::ToolInfo;
use flashlab_sweep::{local, run_point, Grid, PointOutcome, PointStatus, SweepError};

/// 4 points of one 6000-IO run each (8000 issued, 2000 ignored).
const GRID: &str = r#"
name = "safety"
device = "ssd-m,capacity=128MiB,channels=2,cache=off,prefill=on"
seeds = [1, 2]

[parameters]
op = [0.15, 0.3]

[[run]]
pattern = "RW"
io_size = "4KiB"
io_count = 8000
io_ignore = 2000
"#;

const MEASURED_IOS: u64 = 6000;

fn grid(text: &str) -> Result<Grid, SweepError> {
    Grid::parse(text, "g.toml", Path::new("."), "g")
}

fn tool(commit: &str) -> ToolInfo {
    ToolInfo {
        name: "test".into(),
        version: "0".into(),
        git_commit: commit.into(),
    }
}

/// Every row marked ok has exactly the planned IOs.
fn assert_no_wrong_ok_row(outcomes: &[PointOutcome]) {
    for o in outcomes {
        if o.status == PointStatus::Ok {
            assert_eq!(o.runs.len(), 1, "point {}", o.point.id);
            assert_eq!(o.runs[0].status, "complete", "point {}", o.point.id);
            assert_eq!(o.runs[0].ios, MEASURED_IOS, "point {}", o.point.id);
        }
    }
}

#[test]
fn two_sweeps_into_one_directory_at_once_leave_no_wrong_ok_row() {
    let g = grid(GRID).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let (a, b) = std::thread::scope(|s| {
        let a = s.spawn(|| local::run_local(&g, dir.path(), 2, &tool("c1"), &|_| {}));
        let b = s.spawn(|| local::run_local(&g, dir.path(), 2, &tool("c1"), &|_| {}));
        (a.join().unwrap(), b.join().unwrap())
    });
    for outcomes in [&a, &b] {
        assert_eq!(outcomes.len(), 4);
        assert_no_wrong_ok_row(outcomes);
        assert!(outcomes.iter().all(|o| o.status == PointStatus::Ok));
    }
    // Each point ran once: the other sweep waited for it and found it done.
    let resumed = a.iter().chain(&b).filter(|o| o.resumed).count();
    assert_eq!(resumed, 4);
    // points/ holds the finished points and nothing else.
    let mut names: Vec<String> = std::fs::read_dir(dir.path().join("points"))
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .collect();
    names.sort();
    let mut ids: Vec<String> = g.points().into_iter().map(|p| p.id).collect();
    ids.sort();
    assert_eq!(names, ids);
}

#[test]
fn duplicate_seeds_and_values_are_one_point() {
    let g = grid(
        &GRID
            .replace("seeds = [1, 2]", "seeds = [1, 1]")
            .replace("op = [0.15, 0.3]", "op = [0.3, 0.30, 0.15]"),
    )
    .unwrap();
    assert_eq!(g.seeds, vec![1]);
    assert_eq!(g.len(), 2);
    let dir = tempfile::tempdir().unwrap();
    let outcomes = local::run_local(&g, dir.path(), 2, &tool("c1"), &|_| {});
    assert!(outcomes.iter().all(|o| o.status == PointStatus::Ok));
    assert_no_wrong_ok_row(&outcomes);
}

#[test]
fn resume_runs_again_a_point_whose_records_were_cut_short() {
    let g = grid(GRID).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let p = g.point(0);
    let first = run_point(&g, &p, dir.path(), &tool("c1")).unwrap();
    assert_eq!(first.status, PointStatus::Ok);
    let records = first.results_dir.join("runs/001-RW/records.bin");
    let len = std::fs::metadata(&records).unwrap().len();
    std::fs::OpenOptions::new()
        .write(true)
        .open(&records)
        .unwrap()
        .set_len(len / 2)
        .unwrap();
    let again = run_point(&g, &p, dir.path(), &tool("c1")).unwrap();
    assert!(
        !again.resumed,
        "a point with half its records was taken as done"
    );
    assert_eq!(again.status, PointStatus::Ok);
    assert_eq!(std::fs::metadata(&records).unwrap().len(), len);
    assert_eq!(again.runs, first.runs);
}

#[test]
fn resume_reads_the_metrics_from_the_points_files_not_its_marker() {
    let g = grid(GRID).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let p = g.point(0);
    let first = run_point(&g, &p, dir.path(), &tool("c1")).unwrap();
    let marker = first.results_dir.parent().unwrap().join("point.json");
    let text = std::fs::read_to_string(&marker).unwrap();
    let forged = text.replacen(&format!("\"ios\": {MEASURED_IOS}"), "\"ios\": 81071", 1);
    assert_ne!(forged, text);
    std::fs::write(&marker, forged).unwrap();
    let again = run_point(&g, &p, dir.path(), &tool("c1")).unwrap();
    assert!(again.resumed);
    assert_eq!(again.runs[0].ios, MEASURED_IOS);
}

#[test]
fn resume_runs_again_a_point_written_by_another_version() {
    let g = grid(GRID).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let p = g.point(0);
    run_point(&g, &p, dir.path(), &tool("aaaa")).unwrap();
    assert!(
        run_point(&g, &p, dir.path(), &tool("aaaa"))
            .unwrap()
            .resumed
    );
    let other = run_point(&g, &p, dir.path(), &tool("bbbb")).unwrap();
    assert!(!other.resumed);
    assert_eq!(other.git_commit.as_deref(), Some("bbbb"));
}

#[test]
fn a_grid_of_too_many_points_is_refused_before_it_is_expanded() {
    // 10^7 points: 7 parameters of 10 values.
    let mut big = String::from("device = \"ssd-m\"\n[[run]]\npattern = \"RW\"\n[parameters]\n");
    for k in ["a", "b", "c", "d", "e", "f", "g"] {
        big.push_str(&format!("\"nand.{k}\" = [0,1,2,3,4,5,6,7,8,9]\n"));
    }
    let started = Instant::now();
    let e = grid(&big).unwrap_err().to_string();
    assert!(
        started.elapsed().as_secs() < 2,
        "took {:?}",
        started.elapsed()
    );
    assert!(
        e.contains("10000000 points, above the limit of 100000"),
        "{e}"
    );
    assert!(e.contains("max_points"), "{e}");

    // 2^64 points: 64 parameters of 2 values; the count must not wrap to 0.
    let mut huge = String::from("device = \"ssd-m\"\n[[run]]\npattern = \"RW\"\n[parameters]\n");
    for k in 0..64 {
        huge.push_str(&format!("\"p{k}\" = [0, 1]\n"));
    }
    let e = grid(&huge).unwrap_err().to_string();
    assert!(e.contains("more than 2^64 points"), "{e}");

    // The limit is the user's to raise.
    let raised = GRID.replace("seeds = [1, 2]", "seeds = [1, 2, 3]\nmax_points = 6");
    assert_eq!(grid(&raised).unwrap().len(), 6);
    let lowered = GRID.replace("seeds = [1, 2]", "seeds = [1, 2]\nmax_points = 3");
    assert!(grid(&lowered).unwrap_err().to_string().contains("4 points"));
}

#[test]
fn dev_zero_as_a_grid_file_or_a_trace_is_refused_at_once() {
    let started = Instant::now();
    let e = Grid::load(Path::new("/dev/zero")).unwrap_err().to_string();
    assert!(e.contains("/dev/zero"), "{e}");
    assert!(started.elapsed().as_secs() < 5);

    let g = grid(
        &GRID
            .replace("seeds = [1, 2]", "seeds = [1]")
            .replace("op = [0.15, 0.3]", "op = [0.3]")
            .split("[[run]]")
            .next()
            .unwrap()
            .replace(
                "[parameters]",
                "[trace]\npath = \"/dev/zero\"\nformat = \"msr\"\n[parameters]",
            ),
    )
    .unwrap();
    let dir = tempfile::tempdir().unwrap();
    let started = Instant::now();
    let o = run_point(&g, &g.point(0), dir.path(), &tool("c1")).unwrap();
    assert_eq!(o.status, PointStatus::Failed);
    assert!(
        o.error.as_deref().unwrap().contains("/dev/zero"),
        "{:?}",
        o.error
    );
    assert!(started.elapsed().as_secs() < 5);
}

/// A tmpfs of `kib` KiB mounted on a temporary directory, unmounted on drop.
struct SmallDisk {
    dir: tempfile::TempDir,
}

impl SmallDisk {
    fn mount(kib: u64) -> Option<SmallDisk> {
        // SAFETY: getuid has no preconditions.
        if unsafe { libc::getuid() } != 0 {
            return None;
        }
        let dir = tempfile::tempdir().unwrap();
        let ok = std::process::Command::new("mount")
            .args([
                "-t",
                "tmpfs",
                "-o",
                &format!("size={kib}k"),
                "flashlab-test",
            ])
            .arg(dir.path())
            .status()
            .is_ok_and(|s| s.success());
        ok.then_some(SmallDisk { dir })
    }
}

impl Drop for SmallDisk {
    fn drop(&mut self) {
        let _ = std::process::Command::new("umount")
            .arg("-l")
            .arg(self.dir.path())
            .status();
    }
}

#[test]
fn a_full_results_disk_is_named_and_the_run_is_marked_failed() {
    let Some(disk) = SmallDisk::mount(256) else {
        eprintln!("skipped: mounting a small tmpfs needs root");
        return;
    };
    let out = disk.dir.path().join("results");
    let workload: flashlab_sweep::WorkloadSpec = serde_json::from_str(
        r#"{"kind": "patterns", "runs": [{"pattern": "RW", "io_size": "4KiB", "io_count": 100000}]}"#,
    )
    .unwrap();
    let e = flashlab_sweep::simulate(
        "ssd-m,capacity=128MiB,channels=2,cache=off",
        1,
        &workload,
        &out,
        &tool("c1"),
    )
    .unwrap_err()
    .to_string();
    assert!(e.contains("ENOSPC"), "{e}");
    let (manifest, _) = flashlab_results::read_manifest(&out).unwrap();
    assert_eq!(manifest.runs[0].status, flashlab_results::RunStatus::Failed);
    assert!(manifest.runs[0]
        .error
        .as_deref()
        .unwrap()
        .contains("ENOSPC"));
}

#[test]
fn a_trace_point_is_checked_against_its_requests_not_its_flushes() {
    let dir = tempfile::tempdir().unwrap();
    let trace = dir.path().join("t.trace");
    let mut text = String::from("# flashlab-trace v1\n");
    for i in 0..200u64 {
        text.push_str(&format!("{} W {} 4096\n", i * 100_000, i * 8192));
    }
    text.push_str("20000000 F 0 0\n");
    std::fs::write(&trace, text).unwrap();
    let g = grid(&format!(
        "device = \"ssd-m,capacity=128MiB,channels=2\"\n[trace]\npath = \"{}\"\n",
        trace.display()
    ))
    .unwrap();
    let o = run_point(&g, &g.point(0), dir.path(), &tool("c1")).unwrap();
    assert_eq!(o.status, PointStatus::Ok, "{:?}", o.error);
    assert_eq!(o.runs[0].ios, 200);
    assert!(
        run_point(&g, &g.point(0), dir.path(), &tool("c1"))
            .unwrap()
            .resumed
    );
}
