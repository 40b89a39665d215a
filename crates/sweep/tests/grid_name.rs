//! A grid's name names its directory (`results/sweep-NAME`): a traversal
//! name (issue 31, item 3: `x/../../../../D` wrote the sweep outside
//! `results/`, from the CLI and from Python, which both parse grids here)
//! is refused, one line naming the fix.

use std::path::Path;

use flashlab_sweep::{Grid, SweepError};

fn with_name(name: &str) -> Result<Grid, SweepError> {
    let text = format!(
        "name = {name:?}\ndevice = \"ssd-m,capacity=128MiB,channels=2,cache=off\"\n[[run]]\npattern = \"SR\"\nio_count = 100\n"
    );
    Grid::parse(&text, "g.toml", Path::new("."), "g")
}

#[test]
fn a_name_that_is_not_one_plain_path_component_is_refused() {
    for bad in [
        "x/../../../../D",
        "../up",
        "..",
        ".",
        "/abs",
        "a/b",
        "a\\b",
        "",
        "tab\there",
    ] {
        let e = with_name(bad).expect_err(bad);
        assert!(e.is_user_error(), "{bad:?}: {e}");
        let msg = e.to_string();
        assert!(
            msg.contains("not one plain path component") && !msg.contains('\n'),
            "{bad:?}: {msg}"
        );
    }
}

#[test]
fn plain_names_are_kept() {
    for good in ["op-x-gc", "run_1.v2", "Ünïcode"] {
        assert_eq!(with_name(good).unwrap().name, good);
    }
}
