//! Pattern files: TOML with optional `[defaults]` and one `[[run]]` table per run.
//!
//! ```toml
//! [defaults]
//! io_size = "32KiB"
//! target_size = "1GiB"
//! io_count = 1024
//!
//! [[run]]
//! pattern = "SR"
//!
//! [[run]]
//! name = "rw-after-pause"
//! pattern = "RW"
//! time = "pause:1ms"
//! io_ignore = 128
//!
//! [[run]]
//! location = "partitioned:4"
//! mode = "write"
//! mix = "RR"
//! ratio = "4:1"
//! ```
//!
//! Unknown keys are errors (a typo must never silently fall back to a
//! default), reported on one line with the line number and the closest key.

use serde::Deserialize;

use crate::args::{PatternArgs, FIELD_NAMES};
use crate::error::PatternError;

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PatternFile {
    #[serde(default)]
    pub defaults: PatternArgs,
    #[serde(default)]
    pub run: Vec<PatternArgs>,
}

impl PatternFile {
    /// Parses a pattern file's text; `origin` names the file in messages.
    pub fn parse(text: &str, origin: &str) -> Result<PatternFile, PatternError> {
        let file: PatternFile =
            toml::from_str(text).map_err(|e| describe_toml_error(&e, text, origin))?;
        if file.run.is_empty() {
            return Err(PatternError::NoRuns {
                origin: origin.to_string(),
            });
        }
        Ok(file)
    }

    /// The runs with the defaults applied.
    pub fn runs(&self) -> Vec<PatternArgs> {
        self.run
            .iter()
            .map(|r| r.clone().or(&self.defaults))
            .collect()
    }
}

fn describe_toml_error(e: &toml::de::Error, text: &str, origin: &str) -> PatternError {
    let origin = origin.to_string();
    let line = e
        .span()
        .map(|s| text[..s.start.min(text.len())].matches('\n').count() + 1);
    let message = e.message().replace('\n', " ");
    // serde's unknown-field message lists every key; replace it with the closest one.
    if let Some(rest) = message.strip_prefix("unknown field `") {
        if let Some(end) = rest.find('`') {
            let key = &rest[..end];
            return PatternError::UnknownKey {
                origin,
                line,
                key: key.to_string(),
                suggestion: closest(key, FIELD_NAMES.iter().chain(["defaults", "run"].iter())),
            };
        }
    }
    PatternError::FileSyntax {
        origin,
        line,
        message,
    }
}

/// The candidate within edit distance 3 of `word` (and less than its length), if any.
pub fn closest<'a>(word: &str, candidates: impl Iterator<Item = &'a &'a str>) -> Option<&'a str> {
    candidates
        .map(|c| (edit_distance(word, c), *c))
        .filter(|(d, _)| *d <= 3 && *d < word.len())
        .min()
        .map(|(_, c)| c)
}

/// Edits between two words, an adjacent transposition counting as one
/// (optimal string alignment, strsim's).
fn edit_distance(a: &str, b: &str) -> usize {
    strsim::osa_distance(a, b)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn typo_names_line_and_suggestion() {
        let text = "[[run]]\npattern = \"RW\"\nio_szie = \"4KiB\"\n";
        let err = PatternFile::parse(text, "p.toml").unwrap_err().to_string();
        assert_eq!(
            err,
            "p.toml line 3: unknown key `io_szie`; did you mean `io_size`?"
        );
        assert!(!err.contains('\n'));
    }

    #[test]
    fn defaults_apply_and_runs_override() {
        let text = "[defaults]\nio_size = \"4KiB\"\npattern = \"SR\"\n[[run]]\n[[run]]\nio_size = 8192\nlocation = \"random\"\nmode = \"write\"\n";
        let f = PatternFile::parse(text, "p.toml").unwrap();
        let runs = f.runs();
        let a = runs[0].resolve(1 << 30).unwrap();
        let b = runs[1].resolve(1 << 30).unwrap();
        assert_eq!(a.primary.baseline_name(), Some("SR"));
        assert_eq!(a.primary.io_size_bytes, 4096);
        assert_eq!(b.primary.baseline_name(), Some("RW"));
        assert_eq!(b.primary.io_size_bytes, 8192);
    }

    #[test]
    fn empty_file_is_refused() {
        assert!(PatternFile::parse("", "p.toml")
            .unwrap_err()
            .to_string()
            .contains("no [[run]]"));
    }

    #[test]
    fn bad_value_is_one_line() {
        let err = PatternFile::parse("[[run]]\nio_count = \"many\"\n", "p.toml")
            .unwrap_err()
            .to_string();
        assert!(err.starts_with("p.toml line 2:"), "{err}");
        assert!(!err.contains('\n'));
    }
}
