//! The documentation is tested: every command example in the files of
//! [`DOCS`] runs as written, and its output is checked where the page shows
//! output.
//!
//! How a page marks its examples:
//! - ```` ```console ````: lines starting with `$ ` are commands, run by
//!   trycmd (<https://docs.rs/trycmd>) in a scratch directory; the lines up to
//!   the next `$ ` or the fence are the expected output (stdout and stderr
//!   together), where `...` alone on a line stands for any lines and `[..]`
//!   for any text within a line. A command that must fail shows `? failed`
//!   (or `? 2`) on the line after it.
//! - ```` ```console,ignore ````: shown but not run; the sentence before the
//!   block says why (a real raw device, a very long run). Keep these few.
//! - ```` ```sh ```` preceded by `<!-- doc-test: root-script -->`: a shell
//!   walk-through (pipes, `&`, waits), run by bash as root in CI by
//!   [`root_walkthroughs_run_as_written`] (marked ignored: `cargo test -- --include-ignored` as root, as CI does).
//! - ```` ```sh ```` preceded by `<!-- doc-test: not run (REASON) -->`: a
//!   shell session that cannot run in CI, the reason in the marker.
//! - ```` ```text ````, ```` ```toml ````, ```` ```python ````, ...: not commands.
//!
//! [`every_command_example_is_run_or_says_why_not`] fails when a page holds a
//! command block that none of the above runs (a bare fence or ```` ```sh ````
//! without the marker), so a new example cannot silently go untested.
//!
//! To test a new page, add its path (relative to the repository root) to
//! [`DOCS`].
//!
//! Each page runs in its own scratch directory `NAME.in/` holding links to
//! the repository's `examples/`, `crates/` and `docs/`, and a `../shared`
//! with the shared traces (the real `../shared/traces` next to the clone when
//! present, else a small stand-in trace in MQSim's format).

use std::path::{Path, PathBuf};
use std::process::Command;

/// The pages whose examples run. Add a page here to test its examples.
const DOCS: &[&str] = &[
    "README.md",
    "docs/budilovsky11.md",
    "docs/fio.md",
    "docs/oltp-tracing.md",
    "docs/oltp.md",
    "docs/probe.md",
    "docs/profiles.md",
    "docs/python.md",
    "docs/report.md",
    "docs/results-format.md",
    "docs/safety.md",
    "docs/serve.md",
    "docs/sim-ftl.md",
    "docs/sim.md",
    "docs/tpcc.md",
];

/// The marker before a ```` ```sh ```` block run by [`root_walkthroughs_run_as_written`].
const ROOT_SCRIPT_MARKER: &str = "<!-- doc-test: root-script -->";
/// The start of the marker before a ```` ```sh ```` block that is not run, with its reason.
const NOT_RUN_MARKER: &str = "<!-- doc-test: not run (";

fn repo_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../..")
        .canonicalize()
        .unwrap()
}

/// A page's file name in the scratch directory: `docs/report.md` -> `docs-report.md`.
fn flat_name(doc: &str) -> String {
    doc.replace('/', "-")
}

/// A scratch directory with a copy of every page and its working directory.
fn scratch() -> tempfile::TempDir {
    let root = repo_root();
    let tmp = tempfile::Builder::new()
        .prefix("doc-examples-")
        .tempdir_in(env!("CARGO_TARGET_TMPDIR"))
        .unwrap();
    for doc in DOCS {
        let name = flat_name(doc);
        std::fs::copy(root.join(doc), tmp.path().join(&name)).unwrap();
        let cwd = tmp.path().join(name.replace(".md", ".in"));
        std::fs::create_dir(&cwd).unwrap();
        for dir in ["examples", "crates", "docs"] {
            std::os::unix::fs::symlink(root.join(dir), cwd.join(dir)).unwrap();
        }
    }
    let shared = root.join("../shared");
    if shared.join("traces/tpcc-small.trace").is_file() {
        std::os::unix::fs::symlink(shared.canonicalize().unwrap(), tmp.path().join("shared"))
            .unwrap();
    } else {
        write_stand_in_trace(&tmp.path().join("shared/traces/tpcc-small.trace"));
    }
    tmp
}

/// A small trace in MQSim's format (arrival ns, device, start sector, sectors,
/// 0 = write / 1 = read) for a clone without the shared traces: 2000 requests
/// reaching past 64 GiB, so that, like the real one, it needs `--fit wrap`.
fn write_stand_in_trace(path: &Path) {
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    let mut text = String::new();
    let mut x: u64 = 0x9e37_79b9_7f4a_7c15;
    for i in 0..2000u64 {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        let sector = (x % (128 << 21)) & !7; // below 128 GiB, 4 KiB aligned
        let kind = u64::from(i % 3 != 0);
        text.push_str(&format!("{} 0 {sector} 8 {kind}\n", i * 20_000));
    }
    std::fs::write(path, text).unwrap();
}

#[test]
fn documented_commands_run_as_written() {
    let tmp = scratch();
    let cases = trycmd::TestCases::new();
    cases
        .register_bin("flashlab", PathBuf::from(env!("CARGO_BIN_EXE_flashlab")))
        .env("COLUMNS", "200")
        .timeout(std::time::Duration::from_secs(600));
    for doc in DOCS {
        cases.case(tmp.path().join(flat_name(doc)));
    }
    cases.run();
}

/// A fenced block: its info string, first line number and lines.
struct Block {
    info: String,
    line: usize,
    /// The HTML comment on the last non-blank line before the fence.
    marker_before: String,
    body: Vec<String>,
}

fn blocks(text: &str) -> Vec<Block> {
    let mut out = Vec::new();
    let mut lines = text.lines().enumerate().peekable();
    let mut previous_non_blank = "";
    while let Some((i, line)) = lines.next() {
        if let Some(info) = line.strip_prefix("```") {
            let mut body = Vec::new();
            for (_, l) in lines.by_ref() {
                if l.starts_with("```") {
                    break;
                }
                body.push(l.to_string());
            }
            out.push(Block {
                info: info.trim().to_string(),
                line: i + 1,
                marker_before: previous_non_blank.trim().to_string(),
                body,
            });
            previous_non_blank = "";
        } else if !line.trim().is_empty() {
            previous_non_blank = line;
        }
    }
    out
}

#[test]
fn every_command_example_is_run_or_says_why_not() {
    let root = repo_root();
    let mut untested = Vec::new();
    for doc in DOCS {
        let text = std::fs::read_to_string(root.join(doc)).unwrap();
        for block in blocks(&text) {
            let lang = block.info.split(',').next().unwrap_or("");
            let runs = match lang {
                "console" => true,
                "sh" | "bash" | "shell" => {
                    block.marker_before == ROOT_SCRIPT_MARKER
                        || (block.marker_before.starts_with(NOT_RUN_MARKER)
                            && block.marker_before.ends_with(") -->")
                            && block.marker_before.len() > NOT_RUN_MARKER.len() + 5)
                }
                // trycmd would try to run a bare fence as commands.
                "" => false,
                _ => true,
            };
            if !runs {
                untested.push(format!(
                    "{doc}:{}: a ```{} block is not run: make it ```console (commands after `$ `), \
                     ```console,ignore with the reason in the sentence before, ```text, or put \
                     {ROOT_SCRIPT_MARKER} or {NOT_RUN_MARKER}REASON) --> before a ```sh block",
                    block.line, block.info
                ));
            }
        }
    }
    assert!(untested.is_empty(), "{}", untested.join("\n"));
}

fn have(tool: &str) -> bool {
    Command::new("sh")
        .args(["-c", &format!("command -v {tool}")])
        .output()
        .is_ok_and(|o| o.status.success())
}

/// The shell walk-throughs (serve over nbdfuse, a loop device, ext4) as
/// written, by bash, with `flashlab` on PATH. Needs root, nbdfuse, losetup,
/// mkfs.ext4; skipped otherwise, failed instead under
/// FLASHLAB_REQUIRE_ROOT_TESTS=1 (CI).
#[ignore = "needs root (loop devices, mounts): run as root with `cargo test -- --include-ignored`, as CI does"]
#[test]
fn root_walkthroughs_run_as_written() {
    // SAFETY: geteuid has no preconditions.
    let root_user = unsafe { libc::geteuid() } == 0;
    let missing: Vec<&str> = [
        "nbdfuse",
        "losetup",
        "mkfs.ext4",
        "fusermount3",
        "fsck.ext4",
        "unshare",
    ]
    .into_iter()
    .filter(|t| !have(t))
    .collect();
    if !root_user || !missing.is_empty() {
        let why = if root_user {
            format!("missing {}", missing.join(", "))
        } else {
            "not root".to_string()
        };
        if std::env::var("FLASHLAB_REQUIRE_ROOT_TESTS").as_deref() == Ok("1") {
            panic!("root walk-throughs cannot run ({why}) but FLASHLAB_REQUIRE_ROOT_TESTS=1");
        }
        eprintln!("SKIPPED: root walk-throughs need root and nbdfuse/losetup/e2fsprogs ({why})");
        return;
    }
    let tmp = scratch();
    let bin_dir = tmp.path().join("bin");
    std::fs::create_dir(&bin_dir).unwrap();
    std::os::unix::fs::symlink(env!("CARGO_BIN_EXE_flashlab"), bin_dir.join("flashlab")).unwrap();
    let path = format!("{}:{}", bin_dir.display(), std::env::var("PATH").unwrap());
    let mut ran = 0;
    for doc in DOCS {
        let text = std::fs::read_to_string(repo_root().join(doc)).unwrap();
        for block in blocks(&text)
            .into_iter()
            .filter(|b| b.marker_before == ROOT_SCRIPT_MARKER)
        {
            let cwd = tmp.path().join(flat_name(doc).replace(".md", ".in"));
            // The walk-throughs copy crates/ onto the file system they make.
            if cwd.join("crates").is_symlink() {
                std::fs::remove_file(cwd.join("crates")).unwrap();
                let cp = Command::new("cp")
                    .args(["-r", &repo_root().join("crates").display().to_string()])
                    .arg(&cwd)
                    .status()
                    .unwrap();
                assert!(cp.success());
            }
            // The pages name fixed paths (/var/tmp/ssd, /tmp/nbd, /mnt/ssd):
            // they run in a private mount namespace with fresh tmpfs there, so
            // nothing of the host's is read or left behind. -e: a failing
            // step fails the walk-through; jobs left running are killed.
            let script = format!(
                "set -e\nfor d in /var/tmp /tmp /mnt; do mount -t tmpfs doc-test \"$d\"; done\n\
                 cleanup() {{ jobs -p | xargs -r kill -9 2>/dev/null || true; }}\ntrap cleanup EXIT\n{}\n",
                block.body.join("\n")
            );
            let out = Command::new("unshare")
                .args(["--mount", "--propagation", "private", "bash", "-c", &script])
                .current_dir(&cwd)
                .env("PATH", &path)
                .output()
                .unwrap();
            assert!(
                out.status.success(),
                "{doc}:{}: the walk-through failed ({}):\n--- stdout\n{}\n--- stderr\n{}",
                block.line,
                out.status,
                String::from_utf8_lossy(&out.stdout),
                String::from_utf8_lossy(&out.stderr)
            );
            ran += 1;
        }
    }
    assert!(ran > 0, "no page holds a {ROOT_SCRIPT_MARKER} block");
}
