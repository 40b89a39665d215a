//! Every "paper says" text the suites print is a verbatim quote: each one is
//! found in the paper's text in `shared/papers/` (beside the repository, as
//! CI lays it out). A paraphrase or a misquote fails here.

mod common;

use common::paper_text;
use flashlab_suite::suites::{chen09, hudlet11, wang11, wang11_oltp};
use flashlab_suite::summary::{normalize_quote_text, Quote};
use flashlab_suite::table3::HINT_QUOTES;

/// Every quote of every suite: findings (with no runs they are all still
/// listed), uFLIP's hints and budilovsky11's epsilon.
fn all_quotes() -> Vec<Quote> {
    let mut out: Vec<Quote> = [
        chen09::findings(&[]),
        wang11::findings(&[]),
        hudlet11::findings(&[]),
        wang11_oltp::findings_for(&[], &wang11_oltp::Part::ALL),
    ]
    .into_iter()
    .flatten()
    .filter_map(|f| f.paper)
    .collect();
    for (i, h) in HINT_QUOTES.iter().enumerate() {
        out.push(Quote::new(
            "uflip",
            &format!("section 5.3, Hint {}", i + 1),
            h,
        ));
    }
    out.extend(
        chen09::FRACTIONS
            .iter()
            .map(|c| Quote::new("chen09", c.section, c.quote)),
    );
    // Every published number's quote (validate/published.toml), the
    // scoreboard's and those only tests read.
    let tol = flashlab_suite::validate::Tolerances::builtin();
    let published = flashlab_suite::validate::PublishedNumbers::builtin(&tol);
    out.extend(
        published
            .all()
            .iter()
            .chain(published.test_only())
            .map(|p| p.quote()),
    );
    out.extend(
        flashlab_suite::suites::budilovsky11::QUOTES
            .iter()
            .chain(flashlab_suite::suites::budilovsky11::CLAIMS.iter())
            .map(|(s, t)| Quote::new("budilovsky11", s, t)),
    );
    out
}

#[test]
fn every_quote_appears_in_its_paper() {
    let quotes = all_quotes();
    assert!(quotes.len() >= 20, "only {} quotes", quotes.len());
    let mut missing = Vec::new();
    for q in &quotes {
        assert!(
            !q.section.is_empty(),
            "a quote without its section: {}",
            q.text
        );
        if !paper_text(&q.paper).contains(&normalize_quote_text(&q.text)) {
            missing.push(format!("{} ({}): {}", q.paper, q.section, q.text));
        }
    }
    assert!(
        missing.is_empty(),
        "not verbatim in the paper:\n{}",
        missing.join("\n")
    );
}

#[test]
fn a_misquote_is_caught() {
    let paper = paper_text("hudlet11");
    // The old finding's words: the paper (section 6) says the opposite.
    assert!(!paper.contains("write performance degrades on a full drive"));
    assert!(paper.contains(&normalize_quote_text(
        "No significant differences were measurable."
    )));
}
