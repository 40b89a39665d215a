//! A suite's summary, typed: the tables, findings and notes every suite
//! produces, plus the suite's own detail (uFLIP's Table 3 row, a paper's
//! per-run rows). Saved as `<suite>-summary.json` and `.md`; the report
//! renders the common part of any suite's summary without knowing the suite.

use flashlab_pattern::units::format_duration_ns;
use flashlab_results::stats::LatencyStats;
use flashlab_results::RunSummary;
use serde::{Deserialize, Serialize};

/// What a paper says, verbatim, and where. A test checks that every quote
/// appears in the paper's text (`../shared/papers/`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Quote {
    /// The paper's file stem in `shared/papers/` (e.g. "chen09").
    pub paper: String,
    /// Section, figure or table, as the paper numbers it.
    pub section: String,
    /// Verbatim, modulo whitespace.
    pub text: String,
}

impl Quote {
    pub fn new(paper: &str, section: &str, text: &str) -> Quote {
        Quote {
            paper: paper.into(),
            section: section.into(),
            text: text.into(),
        }
    }

    /// `"..." (section 6)`.
    pub fn cite(&self) -> String {
        format!("\"{}\" ({})", self.text, self.section)
    }
}

/// A finding of the paper, measured here.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Finding {
    /// Stable id (`paper.figure.what`): what a published number in
    /// `validate/published.toml` names to be compared with this finding.
    #[serde(default)]
    pub id: String,
    /// The figure or table it comes from.
    pub source: String,
    pub what: String,
    pub measured: Option<f64>,
    /// The measurement in words ("not measured" when a run is missing).
    pub text: String,
    /// What the paper says about it, verbatim; `None` for a measurement the
    /// paper does not make (then `what` says so).
    pub paper: Option<Quote>,
}

impl Finding {
    /// The finding with this id in `findings`.
    pub fn by_id<'a>(findings: &'a [Finding], id: &str) -> Option<&'a Finding> {
        findings.iter().find(|f| f.id == id)
    }

    pub fn paper_text(&self) -> String {
        self.paper
            .as_ref()
            .map(Quote::cite)
            .unwrap_or_else(|| "(not in the paper)".into())
    }
}

/// How a table is shown for several devices side by side.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "kebab-case")]
pub enum Compare {
    /// One row per device (the device's label in front).
    Rows,
    /// Rows matched by their `keys` columns; one column per device showing
    /// the `value` column.
    Column { keys: Vec<usize>, value: usize },
    /// Not shown side by side.
    None,
}

/// A table of the summary, rendered as is.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct SummaryTable {
    /// Section id in the report (stable across devices).
    pub id: String,
    pub title: String,
    #[serde(default)]
    pub paragraphs: Vec<String>,
    /// Without the device column: `Compare::Rows` tables get the device's
    /// label in front of each row.
    pub header: Vec<String>,
    pub rows: Vec<Vec<String>>,
    pub compare: Compare,
    /// The side-by-side section's title [default: "TITLE, side by side"].
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub compare_title: Option<String>,
    /// Per-run detail: in the Markdown summary, not in the report (whose
    /// figures show the same runs).
    #[serde(default)]
    pub detail_only: bool,
}

/// A run whose mean is dominated by a few IOs: its mean says more about one
/// stall than about the pattern. Never silently averaged.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct RunFlag {
    pub run: String,
    /// The slowest IO's share of the sum of the run's response times.
    pub max_share: f64,
    pub max_ns: u64,
    pub mean_ns: f64,
    pub ios: u64,
}

/// A run is dominated when its slowest IO takes more than this share of the
/// run's summed response time.
pub const DOMINATED_SHARE: f64 = 0.5;

/// The runs whose slowest IO takes more than half of their time.
pub fn dominated_runs(runs: &[RunSummary]) -> Vec<RunFlag> {
    runs.iter()
        .filter_map(|r| dominated(&r.name, &r.stats.all.latency))
        .collect()
}

/// The flag of one run, when its slowest IO takes more than
/// [`DOMINATED_SHARE`] of the sum of its response times.
pub fn dominated(run: &str, l: &LatencyStats) -> Option<RunFlag> {
    let total = l.mean_ns * l.count as f64;
    if l.count < 2 || total <= 0.0 {
        return None;
    }
    let share = l.max_ns as f64 / total;
    (share > DOMINATED_SHARE).then(|| RunFlag {
        run: run.into(),
        max_share: share,
        max_ns: l.max_ns,
        mean_ns: l.mean_ns,
        ios: l.count,
    })
}

/// `<suite>-summary.json`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct SuiteSummary {
    pub suite: String,
    /// The paper, as cited ("Chen, Koufaty & Zhang (SIGMETRICS 2009)").
    pub title: String,
    pub device: String,
    #[serde(default)]
    pub tables: Vec<SummaryTable>,
    #[serde(default)]
    pub findings: Vec<Finding>,
    #[serde(default)]
    pub notes: Vec<String>,
    #[serde(default)]
    pub flagged_runs: Vec<RunFlag>,
    /// The suite's own typed detail, flattened (uFLIP: `table3`, `hints`,
    /// `calibration`, `runs`; the papers: `runs`).
    #[serde(flatten)]
    pub detail: serde_json::Map<String, serde_json::Value>,
}

impl SuiteSummary {
    /// The file name in the results directory.
    pub fn file_name(suite: &str) -> String {
        format!("{suite}-summary.json")
    }

    /// The flag notes, one line per dominated run.
    pub fn flag_notes(&self) -> Vec<String> {
        self.flagged_runs
            .iter()
            .map(|f| {
                format!(
                    "run {} is dominated by one IO: {} of its {} IOs' total time ({:.0} %); its mean ({}) describes that stall, not the pattern",
                    f.run,
                    format_duration_ns(f.max_ns),
                    f.ios,
                    f.max_share * 100.0,
                    format_duration_ns(f.mean_ns.round() as u64)
                )
            })
            .collect()
    }

    /// The summary as Markdown: tables, findings, notes, flags.
    pub fn markdown(&self) -> String {
        let mut s = format!("## {} on {} ({})\n", self.suite, self.device, self.title);
        let table = |t: &SummaryTable| {
            let mut s = format!("\n### {}\n\n", t.title);
            for p in &t.paragraphs {
                s += &format!("{p}\n\n");
            }
            if t.compare == Compare::Rows {
                // One row per device: name it, as the side-by-side tables do.
                let header: Vec<String> = std::iter::once("Device".to_string())
                    .chain(t.header.iter().cloned())
                    .collect();
                let rows: Vec<Vec<String>> = t
                    .rows
                    .iter()
                    .map(|r| {
                        std::iter::once(self.device.clone())
                            .chain(r.iter().cloned())
                            .collect()
                    })
                    .collect();
                return s + &markdown_table(&header, &rows);
            }
            s + &markdown_table(&t.header, &t.rows)
        };
        for t in self.tables.iter().filter(|t| !t.detail_only) {
            s += &table(t);
        }
        if !self.findings.is_empty() {
            s += "\n### Findings\n\n";
            let rows: Vec<Vec<String>> = self
                .findings
                .iter()
                .map(|f| {
                    vec![
                        f.source.clone(),
                        f.what.clone(),
                        f.text.clone(),
                        f.paper_text(),
                    ]
                })
                .collect();
            s += &markdown_table(
                &["source", "finding", "measured here", "paper says"].map(String::from),
                &rows,
            );
        }
        for n in self.notes.iter().chain(&self.flag_notes()) {
            s += &format!("\nNote: {n}\n");
        }
        for t in self.tables.iter().filter(|t| t.detail_only) {
            s += &table(t);
        }
        s
    }
}

pub fn markdown_table(header: &[String], rows: &[Vec<String>]) -> String {
    let esc = |c: &String| c.replace('|', "\\|");
    let mut s = format!(
        "| {} |\n|{}\n",
        header.iter().map(esc).collect::<Vec<_>>().join(" | "),
        "---|".repeat(header.len())
    );
    for r in rows {
        s += &format!(
            "| {} |\n",
            r.iter().map(esc).collect::<Vec<_>>().join(" | ")
        );
    }
    s
}

/// The papers in `shared/papers/`, by the key quotes use.
pub const PAPERS: [(&str, &str); 5] = [
    ("uflip", "bouganim-jonsson-bonnet-cidr09-uflip.md"),
    (
        "chen09",
        "chen-koufaty-zhang-sigmetrics09-ssd-intrinsic-characteristics.md",
    ),
    ("wang11", "wang-goda-nakano-kitsuregawa-ieice11-ssd-tpcc.md"),
    ("hudlet11", "hudlet-schall-btw11-ssd-neq-ssd.md"),
    (
        "budilovsky11",
        "budilovsky-toledo-zuck-systor11-low-cost-ssd-prototype.md",
    ),
];

/// Text as a quote compares with the paper's Markdown: emphasis and math
/// delimiters dropped (`$\mu$ s` reads "us", `$\sim 90\%$` reads "~90%"),
/// whitespace collapsed.
pub fn normalize_quote_text(text: &str) -> String {
    let t = text
        .replace(['*', '$'], "")
        .replace("\\mu ", "u")
        .replace("\\mu", "u")
        .replace("\\sim ", "~")
        .replace("\\sim", "~")
        .replace("\\%", "%")
        .replace("\\epsilon", "epsilon");
    t.split_whitespace().collect::<Vec<_>>().join(" ")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn stats(latencies_ns: &[u64]) -> LatencyStats {
        LatencyStats {
            count: latencies_ns.len() as u64,
            max_ns: *latencies_ns.iter().max().unwrap(),
            mean_ns: latencies_ns.iter().sum::<u64>() as f64 / latencies_ns.len() as f64,
            ..LatencyStats::default()
        }
    }

    #[test]
    fn one_stall_over_half_the_run_is_flagged() {
        // 1023 reads of 100 us and one 253 ms merge: the merge is 71 % of the time.
        let mut l = vec![100_000u64; 1023];
        l.push(253_000_000);
        let f = dominated("SW", &stats(&l)).expect("flagged");
        assert!((f.max_share - 0.712).abs() < 0.01, "{}", f.max_share);
        // Spread-out cost is not a stall.
        assert!(dominated("RW", &stats(&[5_000_000; 64])).is_none());
        let s = SuiteSummary {
            suite: "x".into(),
            title: "x".into(),
            device: "d".into(),
            tables: vec![],
            findings: vec![],
            notes: vec![],
            flagged_runs: vec![f],
            detail: Default::default(),
        };
        assert!(
            s.markdown().contains("run SW is dominated by one IO"),
            "{}",
            s.markdown()
        );
    }
}
