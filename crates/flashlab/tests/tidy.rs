//! Greppable invariants of the code base (ARCHITECTURE.md, "Invariants"),
//! checked on every test run so that they stay true:
//!
//! - the executor never reads the wall clock (no `Instant`/`SystemTime` in
//!   crates/exec): time comes from the device, so the simulator is
//!   deterministic in benchmark mode;
//! - the simulator touches no files except `open_device` reading a profile;
//! - every `unsafe` has a `SAFETY:` comment just above it (or on its line);
//! - user files are read only through limited readers: every whole-file
//!   `fs::read_to_string` is on the allow-list below with its reason, or
//!   reads a kernel file under /proc or /sys;
//! - a crate without `unsafe` says so with `#![forbid(unsafe_code)]`;
//! - no function is over 150 lines without a reason in its doc comment
//!   (a `/// Long: ...` line), so that long ones are a decision.

use std::path::{Path, PathBuf};

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// Every `.rs` file under `dir`, recursively, sorted.
fn rust_files(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for entry in std::fs::read_dir(&d).unwrap_or_else(|e| panic!("{}: {e}", d.display())) {
            let path = entry.unwrap().path();
            if path.is_dir() {
                stack.push(path);
            } else if path.extension().is_some_and(|e| e == "rs") {
                out.push(path);
            }
        }
    }
    out.sort();
    out
}

/// The crates under crates/, by name.
fn crates() -> Vec<(String, PathBuf)> {
    let mut out: Vec<(String, PathBuf)> = std::fs::read_dir(root().join("crates"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.join("Cargo.toml").exists())
        .map(|p| (p.file_name().unwrap().to_string_lossy().into_owned(), p))
        .collect();
    out.sort();
    out
}

/// (file relative to the repository, 1-based line, text) of every code line
/// in a crate's `src/` (comment lines dropped), `#[cfg(test)]` modules included.
fn code_lines(krate: &Path) -> Vec<(String, usize, String)> {
    let mut out = Vec::new();
    for file in rust_files(&krate.join("src")) {
        let rel = file
            .strip_prefix(root())
            .unwrap_or(&file)
            .display()
            .to_string();
        let text = std::fs::read_to_string(&file).unwrap();
        for (i, line) in text.lines().enumerate() {
            let code = line.trim_start();
            if code.starts_with("//") {
                continue;
            }
            out.push((rel.clone(), i + 1, line.to_string()));
        }
    }
    out
}

#[test]
fn the_executor_never_reads_the_wall_clock() {
    let hits: Vec<String> = code_lines(&root().join("crates/exec"))
        .into_iter()
        .filter(|(_, _, l)| l.contains("Instant") || l.contains("SystemTime"))
        .map(|(f, n, l)| format!("{f}:{n}: {}", l.trim()))
        .collect();
    assert!(
        hits.is_empty(),
        "crates/exec takes time from the device only:\n{}",
        hits.join("\n")
    );
}

#[test]
fn the_simulator_opens_no_files_but_its_profile() {
    let hits: Vec<String> = code_lines(&root().join("crates/sim"))
        .into_iter()
        .filter(|(_, _, l)| {
            l.contains("std::fs") || l.contains("fs::File") || l.contains("File::open")
        })
        .filter(|(f, _, l)| {
            !(f.ends_with("crates/sim/src/lib.rs") && l.contains("std::fs::File::open(path)"))
        })
        .map(|(f, n, l)| format!("{f}:{n}: {}", l.trim()))
        .collect();
    assert!(
        hits.is_empty(),
        "crates/sim reads only a profile (lib.rs read_profile); found:\n{}",
        hits.join("\n")
    );
}

#[test]
fn every_unsafe_has_a_safety_comment() {
    let mut missing = Vec::new();
    for (_, krate) in crates() {
        for file in rust_files(&krate.join("src")) {
            let text = std::fs::read_to_string(&file).unwrap();
            let lines: Vec<&str> = text.lines().collect();
            for (i, line) in lines.iter().enumerate() {
                let code = line.trim_start();
                if code.starts_with("//") || !has_unsafe(code) {
                    continue;
                }
                // The comment sits on the line or in a comment within the
                // four lines above (`// SAFETY: ...` then `Some(` then the block).
                let found = lines[i.saturating_sub(4)..=i].iter().any(|l| {
                    let l = l.trim_start();
                    (l.starts_with("//") || l.contains("// SAFETY")) && l.contains("SAFETY")
                });
                if !found {
                    let rel = file
                        .strip_prefix(root())
                        .unwrap_or(&file)
                        .display()
                        .to_string();
                    missing.push(format!("{rel}:{}: {}", i + 1, line.trim()));
                }
            }
        }
    }
    assert!(
        missing.is_empty(),
        "unsafe without a SAFETY: comment:\n{}",
        missing.join("\n")
    );
}

/// `unsafe {`, `unsafe fn`, `unsafe impl`, `unsafe extern`, outside strings.
fn has_unsafe(code: &str) -> bool {
    let code = code.split("//").next().unwrap_or("");
    let mut in_string = false;
    let bytes = code.as_bytes();
    for (i, &b) in bytes.iter().enumerate() {
        if b == b'"' && (i == 0 || bytes[i - 1] != b'\\') {
            in_string = !in_string;
        }
        if !in_string
            && code[i..].starts_with("unsafe")
            && (i == 0 || !(bytes[i - 1].is_ascii_alphanumeric() || bytes[i - 1] == b'_'))
        {
            // Blocks, declarations and impls; not `unsafe extern "C" fn(..)`
            // function-pointer types, which are not themselves unsafe code.
            let rest = code[i + 6..].trim_start();
            if rest.starts_with('{')
                || rest.starts_with("impl")
                || (rest.starts_with("fn ") && !rest.starts_with("fn("))
                || rest.starts_with("extern \"C\" {")
            {
                return true;
            }
        }
    }
    false
}

/// Files allowed to `read_to_string` something that is not a kernel file,
/// and why that is safe.
const READ_TO_STRING_ALLOWED: &[(&str, &str)] = &[
    (
        "crates/flashlab/src/validate.rs",
        "--update-doc/--check-doc read the project's own docs/profiles.md, named by the developer",
    ),
    (
        "crates/oltp/src/results.rs",
        "tpcc-seconds.jsonl, written by flashlab itself during the failed run",
    ),
    (
        "crates/oltp/src/stale.rs",
        "reads flashlab's own stale-run records in the run directory",
    ),
    (
        "crates/oltp/src/postgres.rs",
        "postmaster.pid inside the private cluster flashlab created",
    ),
    (
        "crates/nbd/src/attacks.rs",
        "the log of a server the attack harness started",
    ),
    (
        "crates/workload/src/lib.rs",
        "host_info reads fixed /proc files (cpuinfo, os-release)",
    ),
    (
        "crates/iotrace/src/tracefs.rs",
        "tracefs's per-CPU stats files, kernel text",
    ),
    (
        "crates/oltp/src/proc.rs",
        "the log file of a server flashlab started",
    ),
    (
        "crates/realdev/src/identity.rs",
        "sysfs attributes of a block device (read_trimmed)",
    ),
    (
        "crates/nbd/src/store.rs",
        "the store's own lock and meta files, created by flashlab serve",
    ),
];

#[test]
fn user_files_are_read_only_through_limited_readers() {
    let mut hits = Vec::new();
    for (_, krate) in crates() {
        for (file, n, line) in code_lines(&krate) {
            // A whole-file read; `.take(n).read_to_string` is a limited reader.
            if !line.contains("fs::read_to_string") {
                continue;
            }
            let kernel = [
                "\"/proc/",
                "\"/sys/",
                "/proc/{",
                "/sys/class",
                "/sys/block",
                "/sys/dev",
            ]
            .iter()
            .any(|k| line.contains(k));
            let allowed = READ_TO_STRING_ALLOWED.iter().any(|(f, _)| file == *f);
            if !(kernel || allowed) {
                hits.push(format!("{file}:{n}: {}", line.trim()));
            }
        }
    }
    // The allow-list stays exact: an entry whose file no longer reads whole
    // files is removed, so that it cannot excuse a later one.
    for (file, _) in READ_TO_STRING_ALLOWED {
        let text = std::fs::read_to_string(root().join(file)).unwrap_or_default();
        assert!(
            text.contains("fs::read_to_string"),
            "{file} is on READ_TO_STRING_ALLOWED but reads no whole file any more: remove it"
        );
    }
    assert!(
        hits.is_empty(),
        "read_to_string of a file that may come from a user (use a limited reader such as flashlab_trace::read_text, or add the file to READ_TO_STRING_ALLOWED with its reason):\n{}",
        hits.join("\n")
    );
}

#[test]
fn crates_without_unsafe_forbid_it() {
    let mut missing = Vec::new();
    for (name, krate) in crates() {
        let uses_unsafe = code_lines(&krate)
            .iter()
            .any(|(_, _, l)| has_unsafe(l.trim_start()));
        let lib = ["src/lib.rs", "src/main.rs"]
            .iter()
            .map(|f| krate.join(f))
            .find(|p| p.exists())
            .unwrap();
        let forbids = std::fs::read_to_string(&lib)
            .unwrap()
            .contains("#![forbid(unsafe_code)]");
        if !uses_unsafe && !forbids {
            missing.push(name);
        }
    }
    assert!(
        missing.is_empty(),
        "these crates have no unsafe code; add #![forbid(unsafe_code)] to their lib.rs: {missing:?}"
    );
}

/// The Device contract is typed: a device's statistics are
/// `flashlab_device::DeviceStats`, not JSON, so the contract crate depends
/// on no JSON library (run summaries turn them into JSON in flashlab-results).
#[test]
fn the_device_contract_carries_no_json() {
    let manifest = std::fs::read_to_string(root().join("crates/device/Cargo.toml")).unwrap();
    assert!(
        !manifest.contains("serde_json"),
        "crates/device/Cargo.toml depends on serde_json"
    );
    for (file, line, code) in code_lines(&root().join("crates/device")) {
        assert!(
            !code.contains("serde_json"),
            "{file}:{line}: serde_json in the Device contract: {code}"
        );
    }
}

/// The longest a function may be without a `/// Long:` reason (issue 34).
const MAX_FUNCTION_LINES: usize = 150;

/// A line with its string and char literals blanked and its `//` comment
/// cut, so that braces are counted only in code.
fn braces_only(line: &str) -> String {
    let mut out = String::new();
    let mut chars = line.chars().peekable();
    let mut in_str = false;
    while let Some(c) = chars.next() {
        if in_str {
            match c {
                '\\' => {
                    chars.next();
                }
                '"' => in_str = false,
                _ => {}
            }
            continue;
        }
        match c {
            '"' => in_str = true,
            '/' if chars.peek() == Some(&'/') => break,
            // A char literal ('{', '\'', '\\'); a lifetime ('a) has no closing quote.
            '\'' => {
                let rest: String = chars.clone().take(3).collect();
                if rest.starts_with('\\') && rest.chars().nth(2) == Some('\'') {
                    chars.nth(2);
                } else if rest.chars().nth(1) == Some('\'') {
                    chars.nth(1);
                } else {
                    out.push(c);
                }
            }
            _ => out.push(c),
        }
    }
    out
}

/// (name, first line, length in lines, doc comment) of every function with
/// a body in `text`.
fn functions(text: &str) -> Vec<(String, usize, usize, Vec<String>)> {
    let lines: Vec<&str> = text.lines().collect();
    let mut out = Vec::new();
    for (i, line) in lines.iter().enumerate() {
        let code = line.trim_start();
        let after_vis = code
            .strip_prefix("pub(crate) ")
            .or_else(|| code.strip_prefix("pub(super) "))
            .or_else(|| code.strip_prefix("pub "))
            .unwrap_or(code);
        let after_quals = ["const ", "async ", "unsafe ", "extern \"C\" "]
            .iter()
            .fold(after_vis, |s, q| s.strip_prefix(q).unwrap_or(s));
        let Some(rest) = after_quals.strip_prefix("fn ") else {
            continue;
        };
        let name: String = rest
            .chars()
            .take_while(|c| c.is_alphanumeric() || *c == '_')
            .collect();
        let (mut depth, mut started, mut end) = (0i64, false, None);
        for (j, l) in lines.iter().enumerate().skip(i) {
            let b = braces_only(l);
            if !started && b.contains(';') && !b.contains('{') {
                break; // a declaration without a body
            }
            for c in b.chars() {
                match c {
                    '{' => {
                        depth += 1;
                        started = true;
                    }
                    '}' => depth -= 1,
                    _ => {}
                }
            }
            if started && depth == 0 {
                end = Some(j);
                break;
            }
        }
        let Some(end) = end else { continue };
        let mut doc = Vec::new();
        let mut k = i;
        while k > 0 {
            let above = lines[k - 1].trim_start();
            if above.starts_with("///") || above.starts_with("#[") {
                doc.push(above.to_string());
                k -= 1;
            } else {
                break;
            }
        }
        out.push((name, i + 1, end - i + 1, doc));
    }
    out
}

#[test]
fn long_functions_say_why() {
    let mut dirs: Vec<PathBuf> = crates().into_iter().map(|(_, p)| p.join("src")).collect();
    dirs.push(root().join("python/src"));
    let mut bad = Vec::new();
    for dir in dirs.iter().filter(|d| d.exists()) {
        for file in rust_files(dir) {
            let text = std::fs::read_to_string(&file).unwrap();
            for (name, line, len, doc) in functions(&text) {
                if len > MAX_FUNCTION_LINES && !doc.iter().any(|d| d.starts_with("/// Long:")) {
                    let rel = file
                        .strip_prefix(root())
                        .unwrap_or(&file)
                        .display()
                        .to_string();
                    bad.push(format!("{rel}:{line} fn {name}: {len} lines"));
                }
            }
        }
    }
    assert!(
        bad.is_empty(),
        "functions over {MAX_FUNCTION_LINES} lines without a `/// Long: <reason>` doc line \
         (split them, or say why they are whole):\n{}",
        bad.join("\n")
    );
}

#[test]
fn the_function_length_check_sees_bodies_and_reasons() {
    let body = "    x();\n".repeat(MAX_FUNCTION_LINES);
    let text = format!(
        "/// Doc.\n/// Long: one arm per variant.\nfn long_ok() {{\n{body}}}\n\
         fn long_bad() {{\n    let s = \"}}\";\n{body}}}\nfn decl();\nfn short() {{ '{{'; }}\n"
    );
    let f = functions(&text);
    let names: Vec<(&str, usize)> = f.iter().map(|(n, _, l, _)| (n.as_str(), *l)).collect();
    assert_eq!(
        names,
        [
            ("long_ok", MAX_FUNCTION_LINES + 2),
            ("long_bad", MAX_FUNCTION_LINES + 3),
            ("short", 1)
        ]
    );
    assert!(f[0].3.iter().any(|d| d.starts_with("/// Long:")));
    assert!(!f[1].3.iter().any(|d| d.starts_with("/// Long:")));
}
