//! Every parameter of every built-in profile says where it comes from
//! (issue 29, item 6; docs/profiles.md, "Where each parameter comes from").
//!
//! Each `key = value` line of `crates/sim/profiles/*.toml` carries a
//! provenance comment, trailing on the same line or in the comment lines
//! directly above it, that begins with one of the tags below. A comment block
//! may serve several keys written one after another below it only if it names
//! each of them. `paper:` quotes must be verbatim in the papers in
//! `shared/papers/` (whitespace-normalised, as crates/suite/tests/quotes.rs
//! checks the suites' quotes) and `fitted:` must name its search and the rows it was fitted to, as
//! `crates/suite/validate/published.toml` ids of the profile's scoreboard
//! rows (not test-only entries: `PublishedNumbers::check_fitted_row`).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

mod common;

use common::paper_text;
use flashlab_suite::summary::normalize_quote_text;
use flashlab_suite::validate::{PublishedNumbers, Tolerances};

use flashlab_sim::profiles::BUILTIN;

/// The provenance tags, in the order the summary table prints them.
const TAGS: [&str; 6] = [
    "paper",
    "datasheet",
    "mechanism",
    "fitted",
    "assumed",
    "identity",
];

/// The papers a `paper:` comment may quote: the names comments use, and
/// the key `flashlab_suite::summary::PAPERS` files the paper under.
const PAPER_NAMES: [(&[&str], &str); 5] = [
    (&["uFLIP", "Bouganim"], "uflip"),
    (&["Chen"], "chen09"),
    (&["Wang"], "wang11"),
    (&["Hudlet"], "hudlet11"),
    (&["Budilovsky"], "budilovsky11"),
];

fn profiles_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../sim/profiles")
}

/// One provenance comment: its tag, its whole text (continuation lines
/// joined) and the line it starts on.
#[derive(Clone, Debug)]
struct Entry {
    tag: &'static str,
    text: String,
    line: usize,
}

/// One `key = value` line and the provenance that covers it.
#[derive(Debug)]
struct KeyLine {
    file: String,
    line: usize,
    section: String,
    key: String,
    entry: Result<Entry, String>,
}

/// The tag a comment text starts with (`paper: ...`), if any.
fn tag_of(comment: &str) -> Option<&'static str> {
    let c = comment.trim_start();
    TAGS.iter()
        .find(|t| {
            c.strip_prefix(**t)
                .is_some_and(|rest| rest.starts_with(':'))
        })
        .copied()
}

/// A line's comment part (after an unquoted `#`), if any.
fn split_comment(line: &str) -> (&str, Option<&str>) {
    let mut in_str = false;
    let mut prev = ' ';
    for (i, c) in line.char_indices() {
        match c {
            '"' if prev != '\\' => in_str = !in_str,
            '#' if !in_str => return (&line[..i], Some(&line[i + 1..])),
            _ => {}
        }
        prev = c;
    }
    (line, None)
}

/// Whether `text` names `key` as a word (`trigger`, `readahead.trigger`).
fn names_key(text: &str, key: &str) -> bool {
    let word = |c: char| c.is_ascii_alphanumeric() || c == '_';
    text.match_indices(key).any(|(i, _)| {
        let before = text[..i].chars().next_back();
        let after = text[i + key.len()..].chars().next();
        !before.is_some_and(word) && !after.is_some_and(word)
    })
}

/// The tagged entries of a block of comment lines (`(line number, text)`):
/// a tag line and the untagged lines after it.
fn entries(block: &[(usize, String)]) -> Vec<Entry> {
    let mut out: Vec<Entry> = Vec::new();
    for (n, text) in block {
        if let Some(tag) = tag_of(text) {
            out.push(Entry {
                tag,
                text: text.trim().to_string(),
                line: *n,
            });
        } else if let Some(last) = out.last_mut() {
            last.text.push(' ');
            last.text.push_str(text.trim());
        }
    }
    out
}

fn parse(file: &str, text: &str) -> Vec<KeyLine> {
    let lines: Vec<&str> = text.lines().collect();
    let mut out = Vec::new();
    let mut section = String::new();
    for (i, raw) in lines.iter().enumerate() {
        let t = raw.trim();
        if t.starts_with('[') {
            section = t.trim_matches(|c| c == '[' || c == ']').to_string();
            continue;
        }
        if t.is_empty() || t.starts_with('#') {
            continue;
        }
        let (body, trailing) = split_comment(raw);
        let Some((key, _)) = body.split_once('=') else {
            panic!("{file}:{}: not a key line: {raw}", i + 1);
        };
        let key = key.trim().to_string();
        let entry = if let Some(tag) = trailing.and_then(tag_of) {
            Ok(Entry {
                tag,
                text: trailing.unwrap().trim().to_string(),
                line: i + 1,
            })
        } else {
            // Walk up over key lines of the same group to the comment block.
            let mut j = i;
            let mut direct = true;
            while j > 0 {
                let above = lines[j - 1].trim();
                if above.is_empty() || above.starts_with('[') || above.starts_with('#') {
                    break;
                }
                let (_, tr) = split_comment(lines[j - 1]);
                if tr.and_then(tag_of).is_some() {
                    break;
                }
                direct = false;
                j -= 1;
            }
            let mut block = Vec::new();
            let mut k = j;
            while k > 0 && lines[k - 1].trim().starts_with('#') {
                k -= 1;
                block.push((k + 1, lines[k].trim().trim_start_matches('#').to_string()));
            }
            block.reverse();
            let es = entries(&block);
            if direct && es.len() == 1 {
                Ok(es[0].clone())
            } else if let Some(e) = es.iter().find(|e| names_key(&e.text, &key)) {
                Ok(e.clone())
            } else if es.is_empty() {
                Err(format!(
                    "no provenance tag ({}) on or above it",
                    TAGS.map(|t| format!("{t}:")).join(", ")
                ))
            } else {
                Err(format!(
                    "the comment block above it ({} entries) does not name `{key}`",
                    es.len()
                ))
            }
        };
        out.push(KeyLine {
            file: file.to_string(),
            line: i + 1,
            section: section.clone(),
            key,
            entry,
        });
    }
    out
}

fn all_key_lines() -> Vec<KeyLine> {
    let dir = profiles_dir();
    let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "toml"))
        .collect();
    files.sort();
    let mut names: Vec<&str> = BUILTIN.iter().map(|(n, _)| *n).collect();
    names.sort();
    let mut stems: Vec<String> = files
        .iter()
        .map(|p| p.file_stem().unwrap().to_string_lossy().into_owned())
        .collect();
    stems.sort();
    assert_eq!(
        stems, names,
        "the profile files and the built-in profiles differ"
    );
    let mut out = Vec::new();
    for p in &files {
        let text = std::fs::read_to_string(p).unwrap();
        let shown = Path::new("crates/sim/profiles").join(p.file_name().unwrap());
        out.extend(parse(&shown.display().to_string(), &text));
    }
    out
}

/// The double-quoted passages of a `paper:` comment.
fn quotes(text: &str) -> Vec<String> {
    text.split('"')
        .enumerate()
        .filter(|(i, _)| i % 2 == 1)
        .map(|(_, q)| q.to_string())
        .collect()
}

#[test]
fn every_profile_key_has_a_provenance_tag() {
    let lines = all_key_lines();
    assert!(lines.len() > 500, "only {} key lines", lines.len());
    let missing: Vec<String> = lines
        .iter()
        .filter_map(|k| {
            k.entry.as_ref().err().map(|why| {
                let key = if k.section.is_empty() {
                    k.key.clone()
                } else {
                    format!("{}.{}", k.section, k.key)
                };
                format!("{}:{}: {key}: {why}", k.file, k.line)
            })
        })
        .collect();
    assert!(
        missing.is_empty(),
        "{} key lines without a provenance tag:\n{}",
        missing.len(),
        missing.join("\n")
    );
}

#[test]
fn paper_quotes_are_verbatim() {
    let texts: Vec<(&[&str], String)> = PAPER_NAMES
        .iter()
        .map(|(names, key)| (*names, paper_text(key)))
        .collect();
    let mut bad = Vec::new();
    let mut checked = 0;
    for k in all_key_lines() {
        let Ok(e) = &k.entry else { continue };
        if e.tag != "paper" {
            continue;
        }
        let where_ = format!("{}:{} ({})", k.file, e.line, k.key);
        // The paper is named before the first quote.
        let head = e.text.split('"').next().unwrap_or("");
        let papers: Vec<&String> = texts
            .iter()
            .filter(|(names, _)| names.iter().any(|n| head.contains(n)))
            .map(|(_, t)| t)
            .collect();
        if papers.is_empty() {
            bad.push(format!("{where_}: names none of the papers: {}", e.text));
            continue;
        }
        let qs = quotes(&e.text);
        if qs.is_empty() {
            bad.push(format!("{where_}: no double-quoted passage: {}", e.text));
        }
        for q in qs {
            checked += 1;
            let nq = normalize_quote_text(&q);
            if nq.is_empty() || !papers.iter().any(|t| t.contains(&nq)) {
                bad.push(format!("{where_}: not verbatim in the paper: \"{q}\""));
            }
        }
    }
    assert!(checked > 50, "only {checked} quotes checked");
    assert!(
        bad.is_empty(),
        "{} paper: comments fail:\n{}",
        bad.len(),
        bad.join("\n")
    );
}

/// The ids after `; rows ` in a `fitted:` comment, up to the next `;` (free
/// text after it, `; also ...`, names rows that have no id).
fn fitted_row_ids(text: &str) -> Option<Vec<String>> {
    let (_, rows) = text.split_once("; rows ")?;
    let list = rows.split(';').next().unwrap_or("");
    Some(list.split(',').map(|id| id.trim().to_string()).collect())
}

/// What is wrong with the `fitted:` comments of `lines`, and how many row
/// ids they name: each names its search and its rows, which are
/// scoreboard rows of the comment's own profile in
/// `crates/suite/validate/published.toml` (read by the typed reader, so a
/// test-only entry is refused as well as an unknown id).
fn fitted_problems(lines: &[KeyLine], published: &PublishedNumbers) -> (Vec<String>, usize) {
    let mut bad = Vec::new();
    let mut checked = 0;
    for k in lines {
        let Ok(e) = &k.entry else { continue };
        if e.tag != "fitted" {
            continue;
        }
        let profile = Path::new(&k.file)
            .file_stem()
            .unwrap()
            .to_string_lossy()
            .into_owned();
        let where_ = format!("{}:{} ({})", k.file, e.line, k.key);
        if !(e.text.contains("bench/fit/") || e.text.contains("by hand")) {
            bad.push(format!(
                "{where_}: a fitted: comment names its search (bench/fit/... or \"by hand\"): {}",
                e.text
            ));
        }
        // "; rows <id>, <id>": crates/suite/validate/published.toml ids of
        // this profile's rows (flashlab validate leaves them out of its
        // held-out score).
        let Some(ids) = fitted_row_ids(&e.text) else {
            bad.push(format!(
                "{where_}: a fitted: comment ends \"; rows <published.toml id>, ...\": {}",
                e.text
            ));
            continue;
        };
        for id in ids {
            checked += 1;
            if let Err(why) = published.check_fitted_row(&profile, &id) {
                bad.push(format!("{where_}: {why}"));
            }
        }
    }
    (bad, checked)
}

fn builtin_published() -> PublishedNumbers {
    PublishedNumbers::builtin(&Tolerances::builtin())
}

#[test]
fn fitted_parameters_name_their_search_and_rows() {
    let (bad, checked) = fitted_problems(&all_key_lines(), &builtin_published());
    assert!(checked > 100, "only {checked} fitted row ids checked");
    assert!(bad.is_empty(), "{}", bad.join("\n"));
}

/// A `fitted:` tag may only name scoreboard rows of its own profile: a
/// test-only entry, an unknown id and another profile's row each fail,
/// saying which.
#[test]
fn a_fitted_tag_naming_a_test_only_unknown_or_foreign_row_fails() {
    let published = builtin_published();
    let test_only = &published.test_only()[0];
    let own = published
        .all()
        .iter()
        .find(|n| n.profile == test_only.profile)
        .expect("the test-only entry's profile has scoreboard rows");
    let foreign = published
        .all()
        .iter()
        .find(|n| n.profile != test_only.profile)
        .unwrap();
    let file = format!("crates/sim/profiles/{}.toml", test_only.profile);
    let tagged = |id: &str| {
        format!("[ftl]\nlog_pages = 64 # fitted: bench/fit/uflip_fit.py grid; rows {id}\n")
    };
    let problems = |id: &str| fitted_problems(&parse(&file, &tagged(id)), &published).0;

    assert_eq!(problems(&own.id), Vec::<String>::new());
    let at = format!("{file}:2 (log_pages): ");
    assert_eq!(
        problems(&test_only.id),
        [format!(
            "{at}row `{}` is a test-only entry of crates/suite/validate/published.toml (role = \"test-only\"), not a scoreboard row: name the scoreboard rows the parameter was fitted to",
            test_only.id
        )]
    );
    assert_eq!(
        problems("uflip.t3.no-such-profile.sr"),
        [format!(
            "{at}row `uflip.t3.no-such-profile.sr` is not an id in crates/suite/validate/published.toml"
        )]
    );
    assert_eq!(
        problems(&foreign.id),
        [format!(
            "{at}row `{}` is profile {}'s, not {}'s",
            foreign.id, foreign.profile, test_only.profile
        )]
    );
}

/// Counts of parameters by provenance per profile (printed with
/// `--nocapture`; docs/profiles.md's table is this output).
#[test]
fn provenance_counts() {
    let mut counts: BTreeMap<String, [usize; 6]> = BTreeMap::new();
    for k in all_key_lines() {
        let Ok(e) = &k.entry else { continue };
        let profile = Path::new(&k.file)
            .file_stem()
            .unwrap()
            .to_string_lossy()
            .into_owned();
        let i = TAGS.iter().position(|t| *t == e.tag).unwrap();
        counts.entry(profile).or_default()[i] += 1;
    }
    println!("| profile | {} | total |", TAGS.join(" | "));
    println!("|---|{}---|", "---|".repeat(TAGS.len()));
    for (p, c) in &counts {
        let cells: Vec<String> = c.iter().map(|n| n.to_string()).collect();
        println!(
            "| `{p}` | {} | {} |",
            cells.join(" | "),
            c.iter().sum::<usize>()
        );
    }
    assert_eq!(counts.len(), BUILTIN.len());
}
