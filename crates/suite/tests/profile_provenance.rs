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
//! `crates/suite/validate/published.toml` ids of the profile's rows.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

mod common;

use common::paper_text;
use flashlab_suite::summary::normalize_quote_text;

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

/// `crates/suite/validate/published.toml`'s row ids and the profile of each,
/// read raw (`[[number]]` tables' `id` and `profile` lines): flashlab-sim does
/// not depend on flashlab-suite.
fn published_ids() -> BTreeMap<String, String> {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../suite/validate/published.toml");
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let value = |line: &str, key: &str| -> Option<String> {
        let (k, v) = line.split_once('=')?;
        (k.trim() == key).then(|| v.trim().trim_matches('"').to_string())
    };
    let mut out = BTreeMap::new();
    let mut id: Option<String> = None;
    for line in text.lines() {
        let t = line.trim();
        if t == "[[number]]" {
            id = None;
        } else if let Some(v) = value(t, "id") {
            id = Some(v);
        } else if let Some(p) = value(t, "profile") {
            if let Some(i) = id.take() {
                out.insert(i, p);
            }
        }
    }
    assert!(
        out.len() > 100,
        "only {} ids in {}",
        out.len(),
        path.display()
    );
    out
}

/// The ids after `; rows ` in a `fitted:` comment, up to the next `;` (free
/// text after it, `; also ...`, names rows that have no id).
fn fitted_row_ids(text: &str) -> Option<Vec<String>> {
    let (_, rows) = text.split_once("; rows ")?;
    let list = rows.split(';').next().unwrap_or("");
    Some(list.split(',').map(|id| id.trim().to_string()).collect())
}

#[test]
fn fitted_parameters_name_their_search_and_rows() {
    let published = published_ids();
    let mut bad = Vec::new();
    let mut checked = 0;
    for k in all_key_lines() {
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
            match published.get(&id) {
                None => bad.push(format!(
                    "{where_}: row `{id}` is not an id in crates/suite/validate/published.toml"
                )),
                Some(p) if *p != profile => bad.push(format!(
                    "{where_}: row `{id}` is profile {p}'s, not {profile}'s"
                )),
                Some(_) => {}
            }
        }
    }
    assert!(checked > 100, "only {checked} fitted row ids checked");
    assert!(bad.is_empty(), "{}", bad.join("\n"));
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
