//! A grid on a real device or file (`target = PATH`): fio-plot's "vary the
//! block size / queue depth" charts, measured by flashlab itself.

use std::collections::HashSet;
use std::path::Path;
use std::sync::Mutex;

use flashlab_results::{ResultsDir, ToolInfo};
use flashlab_sweep::{local, Grid, PointStatus, SweepError};

fn tool() -> ToolInfo {
    ToolInfo {
        name: "test".into(),
        version: "0".into(),
        git_commit: "unknown".into(),
    }
}

fn grid(text: &str, dir: &Path) -> Result<Grid, SweepError> {
    Grid::parse(text, "g.toml", dir, "g")
}

/// A 16 MiB file of data on a file system with O_DIRECT (not tmpfs).
fn scratch_file() -> (tempfile::TempDir, std::path::PathBuf) {
    let dir = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).unwrap();
    let path = dir.path().join("scratch.img");
    std::fs::write(&path, vec![0x5au8; 16 << 20]).unwrap();
    (dir, path)
}

const FILE_GRID: &str = r#"
name = "sizes"
target = "scratch.img"
seeds = [1, 2]

[parameters]
io_size = ["4KiB", "64KiB"]

[[run]]
pattern = "RR"
io_count = 64

[[run]]
pattern = "SW"
io_count = 64
"#;

#[test]
fn a_grid_on_a_file_sweeps_the_io_size_one_point_at_a_time() {
    let (dir, _file) = scratch_file();
    let g = grid(FILE_GRID, dir.path()).unwrap();
    assert_eq!(g.len(), 4);
    let out = dir.path().join("sweep");
    let threads = Mutex::new(HashSet::new());
    // Two jobs asked for: the points still run on one thread, one at a time.
    let outcomes = local::run_local(&g, &out, 2, &tool(), &|_| {
        threads
            .lock()
            .unwrap()
            .insert(format!("{:?}", std::thread::current().id()));
    });
    assert_eq!(threads.into_inner().unwrap().len(), 1);
    for o in &outcomes {
        assert_eq!(o.status, PointStatus::Ok, "{:?}", o.error);
        assert_eq!(o.runs.len(), 2);
        let results = ResultsDir::open(&o.results_dir).unwrap();
        let manifest = results.manifest();
        assert_ne!(manifest.engine, "simulator");
        assert!(manifest.device.name.ends_with("scratch.img"));
        let io_size = &o.point.workload_params[0].1.to_string();
        let bytes_per_io = match io_size.as_str() {
            "4KiB" => 4096,
            "64KiB" => 65536,
            other => panic!("unexpected io_size {other}"),
        };
        for run in &results.summary().runs {
            let all = &run.stats.all;
            assert_eq!(all.ios + run.stats.ios_ignored, 64, "{}", run.name);
            assert_eq!(all.bytes, all.ios * bytes_per_io, "{}", run.name);
        }
    }
}

#[test]
fn a_simulator_setting_on_a_real_target_is_refused_naming_it() {
    let (dir, _file) = scratch_file();
    let text = FILE_GRID.replace("io_size = [", "op = [0.1, 0.2]\nio_size = [");
    let e = grid(&text, dir.path()).unwrap_err().to_string();
    assert!(e.contains("parameter op is a simulator setting"), "{e}");
    assert!(e.contains("io_size, queue_depth"), "{e}");
}

#[test]
fn a_grid_names_its_target_problems_in_one_line() {
    let (dir, _file) = scratch_file();
    let both = FILE_GRID.replace("seeds", "device = \"ssd-m\"\nseeds");
    let e = grid(&both, dir.path()).unwrap_err().to_string();
    assert!(e.contains("both `device`") && e.contains("keep one"), "{e}");

    let missing = FILE_GRID.replace("scratch.img", "absent.img");
    let e = grid(&missing, dir.path()).unwrap_err().to_string();
    assert!(e.contains("target") && e.contains("absent.img"), "{e}");
    assert_eq!(e.lines().count(), 1, "{e}");

    let suite = r#"
target = "scratch.img"
[suite]
name = "uflip"
quick = true
"#;
    let e = grid(suite, dir.path()).unwrap_err().to_string();
    assert!(
        e.contains("flashlab suite uflip --device") && e.contains("scratch.img"),
        "{e}"
    );

    let allow = "device = \"ssd-m\"\nallow_write_to = \"/dev/sdz\"\n[[run]]\npattern = \"SW\"\n";
    let e = grid(allow, dir.path()).unwrap_err().to_string();
    assert!(e.contains("allow_write_to applies to a real target"), "{e}");
}
