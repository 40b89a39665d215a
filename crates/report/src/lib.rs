//! Reports of flashlab results directories: one self-contained HTML file that
//! works offline, plus Markdown and JSON renderings of the same content.
//!
//! The report is built in two steps, as hyperfine does it:
//!
//! 1. [`model`] reads one or more results directories (manifest, per-run
//!    `run.json`, and every per-IO record) into a [`Report`]: provenance,
//!    per-run statistics recomputed from *all* records, and the reduced data
//!    the charts need (a downsampled latency time series, ~500 CDF quantile
//!    points, a log-binned histogram). Several directories mean a device
//!    comparison: runs with the same name are paired up.
//! 2. One renderer per output format turns the model into text:
//!    [`html`] (inline CSS, inline SVG charts from our own [`svg`] module, a
//!    little inline JavaScript of our own for toggling series and hovering
//!    values; the page reads nothing from the network and works without
//!    JavaScript), [`markdown`] (tables) and [`json`] (the model itself).
//!
//! Why this shape: statistics must use every record, but a page cannot show
//! tens of millions of points. Records are therefore *streamed* once per run
//! (never held as `IoRecord`s): each one updates a min/max/mean bucket of the
//! time series and its latency is kept as a bare `u64` so that percentiles and
//! the CDF are exact. The HTML size is then bounded by the number of runs, not
//! of IOs (see `examples/render_bench.rs`).
//!
//! Rendering is deterministic: the same results directories give the same
//! bytes (no "generated at" time), which keeps golden-file tests meaningful
//! and lets reports be diffed.
//!
//! Analyses plug in through [`model::Analysis`], which adds
//! [`model::Section`]s to a device (and to a comparison of devices); every
//! renderer shows sections. The built-in one, [`suites::SuiteAnalysis`],
//! reads what `flashlab suite` saved: the uFLIP Table-3 row, design hints,
//! one chart per micro-benchmark and the calibration runs' phases; the paper
//! suites' findings and one chart per paper figure; side by side for several
//! devices.
//!
//! ```no_run
//! use flashlab_report::{render, ReportFormat};
//! let html = render(&["results/20261121-195914-RW".into()], ReportFormat::Html).unwrap();
//! std::fs::write("report.html", html).unwrap();
//! ```

#![forbid(unsafe_code)]

use std::path::PathBuf;

pub mod charts;
pub mod error;
pub mod html;
pub mod json;
pub mod markdown;
pub mod model;
pub mod oltp;
pub mod scan;
pub mod suites;
pub mod svg;
pub mod sweep;
mod text;
pub mod twin;

pub use error::ReportError;
pub use model::{Analysis, Report, Section, Table};

/// The output formats of a report.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ReportFormat {
    /// One self-contained HTML file with inline SVG charts.
    Html,
    /// A Markdown summary: tables only.
    Markdown,
    /// The report model as JSON.
    Json,
}

impl ReportFormat {
    /// Parses a `--format` value (`html`, `md`/`markdown`, `json`).
    pub fn parse(text: &str) -> Result<ReportFormat, ReportError> {
        match text.to_ascii_lowercase().as_str() {
            "html" => Ok(ReportFormat::Html),
            "md" | "markdown" => Ok(ReportFormat::Markdown),
            "json" => Ok(ReportFormat::Json),
            _ => Err(ReportError::UnknownFormat {
                text: text.to_string(),
            }),
        }
    }

    /// The usual file extension of the format.
    pub fn extension(self) -> &'static str {
        match self {
            ReportFormat::Html => "html",
            ReportFormat::Markdown => "md",
            ReportFormat::Json => "json",
        }
    }
}

/// What to put in a report beyond the defaults.
pub struct Options {
    /// Only these runs (by name); empty means every run.
    pub runs: Vec<String>,
    /// Analyses that add sections to each device (Table-3 row, hints...) and
    /// to a comparison. The default has the built-in
    /// [`suites::SuiteAnalysis`], which does nothing for directories not
    /// written by `flashlab suite`; [`Options::bare`] has none.
    pub analyses: Vec<Box<dyn Analysis>>,
}

impl Default for Options {
    fn default() -> Options {
        Options {
            runs: Vec::new(),
            analyses: vec![
                Box::new(suites::SuiteAnalysis),
                Box::new(oltp::OltpAnalysis),
            ],
        }
    }
}

impl Options {
    /// No analyses: provenance and runs only.
    pub fn bare() -> Options {
        Options {
            runs: Vec::new(),
            analyses: Vec::new(),
        }
    }
}

/// Renders a report of one or more results directories (several => a device
/// comparison). Errors are one line naming the problem and the fix.
pub fn render(dirs: &[PathBuf], format: ReportFormat) -> Result<String, ReportError> {
    render_with(dirs, format, &Options::default())
}

/// [`render`] with [`Options`]: e.g. only the run just made, for `flashlab run --report`.
pub fn render_with(
    dirs: &[PathBuf],
    format: ReportFormat,
    options: &Options,
) -> Result<String, ReportError> {
    let report = Report::build(dirs, options)?;
    Ok(report.render(format))
}

impl Report {
    /// Renders an already built report.
    pub fn render(&self, format: ReportFormat) -> String {
        match format {
            ReportFormat::Html => html::render(self),
            ReportFormat::Markdown => markdown::render(self),
            ReportFormat::Json => json::render(self),
        }
    }
}
