//! Filling a file flashlab creates (`--size`) reports its progress: from the
//! first chunk to the whole size, never backwards.

use flashlab_realdev::{open_with_progress, OpenOptions};

#[test]
fn filling_a_created_file_reports_progress_up_to_its_size() {
    let dir = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).unwrap();
    let path = dir.path().join("scratch.img");
    let size = 24 << 20; // six 4 MiB fill chunks
    let mut opts = OpenOptions::new(&path);
    opts.write = true;
    opts.direct = false;
    opts.create_size_bytes = Some(size);
    let mut seen: Vec<(u64, u64)> = Vec::new();
    let opened = open_with_progress(&opts, &mut |done, total| seen.push((done, total))).unwrap();
    drop(opened);
    assert!(seen.len() >= 6, "{seen:?}");
    assert!(seen.iter().all(|&(_, total)| total == size), "{seen:?}");
    assert!(seen.windows(2).all(|w| w[0].0 < w[1].0), "{seen:?}");
    assert_eq!(seen.last().unwrap().0, size);
    assert_eq!(std::fs::metadata(&path).unwrap().len(), size);
}
