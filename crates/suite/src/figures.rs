//! Figures declared as data: what a suite's charts show (which runs, what is
//! on x and y, log scales, markers), saved as `figures.json` in the results
//! directory. The report draws any suite's figures from this file alone, with
//! the statistics it recomputes from each run's records; it knows no suite.

use serde::{Deserialize, Serialize};

use crate::plan::RunStep;

/// The file a suite's figures are saved in.
pub const FIGURES: &str = "figures.json";

/// How x is drawn.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum XKind {
    /// Log scale, bytes, ticks at the measured values (powers of two).
    LogBytes,
    /// Log scale, plain numbers, ticks at the measured values.
    Log,
    /// Linear fraction 0..1.
    Fraction,
    /// Categories named by the value in bytes (IOShift 0, 512B...).
    CatBytes,
    /// Categories named by the value (Incr -1, 0, 1...).
    Cat,
    /// Categories named by the runs' series (one run each).
    BySeries,
    /// Categories the figure names (Chen Figure 9: before, after, recovered).
    Named,
}

impl XKind {
    pub fn categorical(self) -> bool {
        matches!(self, XKind::Cat | XKind::CatBytes)
    }
}

/// What y shows, computed from each run's records.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Metric {
    /// Mean response time, with the p10-p90 band, log y.
    Latency,
    /// MB/s, linear y from 0.
    Bandwidth,
    /// IOs per second, linear y from 0.
    Iops,
    /// The run's whole duration (first submission to last completion).
    Duration,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "kebab-case")]
pub enum Plot {
    /// One point per run: x its parameter value (or category), y the metric.
    Points {
        x_label: String,
        x: XKind,
        metric: Metric,
    },
    /// Response-time CDFs, one curve per run.
    Cdf,
    /// Latency over IO number of one run, start-up phase shaded.
    Timeline,
}

/// One point of a curve: the run that gives its y.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct PointSpec {
    pub run: String,
    pub x: f64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub category: Option<String>,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct CurveSpec {
    pub label: String,
    /// Palette index when the curve keeps a colour across charts (uFLIP's
    /// baselines); else by position.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub color: Option<usize>,
    /// A reference line (the full scan): drawn without dots or band.
    #[serde(default)]
    pub reference: bool,
    pub points: Vec<PointSpec>,
}

/// A vertical marker (the break-even selectivity).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct MarkerSpec {
    pub x: f64,
    pub label: String,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct FigureSpec {
    /// Stable across devices: figures with the same id are overlaid.
    pub id: String,
    /// Names the paper figure it reproduces.
    pub title: String,
    pub plot: Plot,
    pub curves: Vec<CurveSpec>,
    #[serde(default)]
    pub markers: Vec<MarkerSpec>,
    #[serde(default)]
    pub wide: bool,
}

/// Figures shown together, under one heading.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct FigureGroup {
    pub id: String,
    pub title: String,
    pub paragraph: String,
    pub figures: Vec<FigureSpec>,
}

/// `figures.json`.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct SuiteFigures {
    pub suite: String,
    pub groups: Vec<FigureGroup>,
    /// Runs the report charts individually (timelines, CDFs).
    #[serde(default)]
    pub featured_runs: Vec<String>,
}

/// A points figure: one curve per series, x the runs' parameter value.
pub fn series_figure(
    id: &str,
    title: impl Into<String>,
    x_label: &str,
    x: XKind,
    metric: Metric,
    runs: &[&RunStep],
) -> FigureSpec {
    let mut curves: Vec<CurveSpec> = Vec::new();
    for r in runs {
        let pt = PointSpec {
            run: r.name.clone(),
            x: r.value,
            // The report names categorical values in its own units.
            category: None,
        };
        match curves.iter_mut().find(|c| c.label == r.series) {
            Some(c) => c.points.push(pt),
            None => curves.push(CurveSpec {
                label: r.series.clone(),
                color: None,
                reference: false,
                points: vec![pt],
            }),
        }
    }
    if !x.categorical() {
        for c in &mut curves {
            c.points.sort_by(|a, b| a.x.total_cmp(&b.x));
        }
    }
    FigureSpec {
        id: id.into(),
        title: title.into(),
        plot: Plot::Points {
            x_label: x_label.into(),
            x,
            metric,
        },
        curves,
        markers: Vec::new(),
        wide: false,
    }
}

/// A CDF figure: one curve per run, labelled by its series.
pub fn cdf_figure(id: &str, title: impl Into<String>, runs: &[&RunStep]) -> FigureSpec {
    FigureSpec {
        id: id.into(),
        title: title.into(),
        plot: Plot::Cdf,
        curves: runs
            .iter()
            .map(|r| CurveSpec {
                label: r.series.clone(),
                color: None,
                reference: false,
                points: vec![PointSpec {
                    run: r.name.clone(),
                    x: 0.0,
                    category: None,
                }],
            })
            .collect(),
        markers: Vec::new(),
        wide: false,
    }
}

/// One category per run (named by its series), a single curve.
pub fn by_series_figure(
    id: &str,
    title: impl Into<String>,
    curve_label: &str,
    metric: Metric,
    runs: &[&RunStep],
) -> FigureSpec {
    FigureSpec {
        id: id.into(),
        title: title.into(),
        plot: Plot::Points {
            x_label: "pattern".into(),
            x: XKind::BySeries,
            metric,
        },
        curves: vec![CurveSpec {
            label: curve_label.into(),
            color: None,
            reference: false,
            points: runs
                .iter()
                .enumerate()
                .map(|(i, r)| PointSpec {
                    run: r.name.clone(),
                    x: i as f64,
                    category: Some(r.series.clone()),
                })
                .collect(),
        }],
        markers: Vec::new(),
        wide: false,
    }
}
