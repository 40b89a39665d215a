//! Paths stay where they belong (issue 31, item 3), each tested as the
//! attack that found it: a traversal grid name, serve's output files
//! resolving to the device's data, `oltp -o` on another command's results,
//! and `validate --update-doc` on a file without markers. Each is refused
//! in one line, exit 2, and the target is untouched.

mod common;

use std::path::Path;

use common::{flashlab, ok, scratch, stderr};

fn refused(o: &std::process::Output, expect: &str) {
    let err = stderr(o);
    assert_eq!(o.status.code(), Some(2), "{err}");
    let lines: Vec<&str> = err.lines().filter(|l| l.starts_with("error:")).collect();
    assert_eq!(lines.len(), 1, "{err}");
    assert!(lines[0].contains(expect), "expected '{expect}' in: {err}");
}

#[test]
fn a_traversal_grid_name_is_refused_and_nothing_is_written_outside() {
    let d = scratch();
    let grid = d.path().join("g.toml");
    std::fs::write(
        &grid,
        "name = \"x/../../escaped\"\ndevice = \"ssd-m,capacity=128MiB,channels=2,cache=off\"\n[[run]]\npattern = \"SR\"\nio_count = 100\n",
    )
    .unwrap();
    let work = d.path().join("work");
    std::fs::create_dir(&work).unwrap();
    let o = flashlab(&["sweep", grid.to_str().unwrap()], &work);
    refused(&o, "not one plain path component");
    assert!(!d.path().join("escaped").exists());
    assert!(!work.join("results").exists());
}

#[test]
fn serve_refuses_output_files_that_resolve_to_the_data_directory() {
    let d = scratch();
    let data = d.path().join("dev");
    let dev = data.join("data.img");
    // A dangling symlink to where the device will be, then (the device
    // exists now: the refused start created it) a symlink and a hard link.
    let link = d.path().join("stats.json");
    std::os::unix::fs::symlink(&dev, &link).unwrap();
    let args = |flag: &str, file: &Path| {
        vec![
            "serve".to_string(),
            "--profile".into(),
            "ssd-m,capacity=64MiB,channels=2,cache=off".into(),
            "--data".into(),
            data.display().to_string(),
            flag.into(),
            file.display().to_string(),
        ]
    };
    let run = |a: Vec<String>| {
        let a: Vec<&str> = a.iter().map(String::as_str).collect();
        flashlab(&a, d.path())
    };
    refused(&run(args("--stats-json", &link)), "--stats-json");
    let size = std::fs::metadata(&dev).unwrap().len();
    assert_eq!(size, 64 << 20, "data.img is the device");
    refused(&run(args("--trace", &link)), "--trace");
    let hard = d.path().join("hard.json");
    std::fs::hard_link(&dev, &hard).unwrap();
    refused(
        &run(args("--stats-json", &hard)),
        "resolves to one of its files",
    );
    assert_eq!(std::fs::metadata(&dev).unwrap().len(), size);
    let head = std::fs::read(&dev).unwrap();
    assert!(
        !head.starts_with(b"{"),
        "data.img was overwritten with JSON"
    );
}

#[test]
fn validate_update_doc_refuses_a_file_without_markers() {
    let d = scratch();
    let page = d.path().join("README.md");
    std::fs::write(&page, "# A page\n\nno markers here\n").unwrap();
    let o = flashlab(
        &[
            "validate",
            "--quick",
            "--update-doc",
            page.to_str().unwrap(),
        ],
        d.path(),
    );
    refused(&o, "holds no");
    assert_eq!(
        std::fs::read_to_string(&page).unwrap(),
        "# A page\n\nno markers here\n"
    );
}

#[test]
fn oltp_refuses_a_results_directory_that_holds_another_commands_results() {
    // SAFETY: getuid has no preconditions.
    if unsafe { libc::getuid() } != 0 || !Path::new("/usr/lib/postgresql").is_dir() {
        if std::env::var("FLASHLAB_REQUIRE_ROOT_TESTS").as_deref() == Ok("1") {
            panic!("needs root and PostgreSQL but FLASHLAB_REQUIRE_ROOT_TESTS=1");
        }
        eprintln!("SKIPPED: oltp -o: needs root and PostgreSQL");
        return;
    }
    let d = scratch();
    let res = d.path().join("res");
    ok(&flashlab(
        &[
            "run",
            "--device",
            "sim:ssd-m,capacity=64MiB,channels=2,cache=off",
            "--pattern",
            "SR",
            "--io-count",
            "10",
            "-o",
            res.to_str().unwrap(),
            "--quiet",
        ],
        d.path(),
    ));
    let manifest = std::fs::read(res.join("manifest.json")).unwrap();
    let o = flashlab(
        &[
            "oltp",
            "--device",
            "/var/tmp/never-created.img",
            "--size",
            "3GiB",
            "--setup-only",
            "-o",
            res.to_str().unwrap(),
        ],
        d.path(),
    );
    refused(&o, "already exists and is not empty");
    assert_eq!(std::fs::read(res.join("manifest.json")).unwrap(), manifest);
    assert!(!res.join("oltp.json").exists());
    assert!(!Path::new("/var/tmp/never-created.img").exists());
}
