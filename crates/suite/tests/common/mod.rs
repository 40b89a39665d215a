//! What the suite crate's paper-checking tests share: where the papers are
//! and how a paper's text reads once normalised for quote matching.

use std::path::PathBuf;

use flashlab_suite::summary::{normalize_quote_text, PAPERS};

/// `shared/papers/` beside the repository, as CI lays it out.
pub fn papers_dir() -> PathBuf {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../../shared/papers");
    assert!(
        dir.is_dir(),
        "{} is missing: the paper-checking tests need the papers beside the repository (shared/papers)",
        dir.display()
    );
    dir
}

/// The normalised text of the paper a quote key names (`uflip`, `chen09`, ...).
pub fn paper_text(key: &str) -> String {
    let file = PAPERS
        .iter()
        .find(|(k, _)| *k == key)
        .unwrap_or_else(|| panic!("no paper for key {key}"))
        .1;
    let path = papers_dir().join(file);
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    normalize_quote_text(&text)
}
