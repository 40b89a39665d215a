//! The report's standard charts, built from the model as [`svg::Chart`]s.
//!
//! Each chart's title says what it shows and which paper figure it
//! reproduces, so a chart copied out of the report still makes sense.

use crate::model::{Phases, RunReport};
use crate::scan::{CdfPoint, Histogram, Timeline};
use crate::svg::{Axis, Chart, Marker, Scale, Series, Shape, Span, Unit};
use crate::text;

pub const WIDE: (u32, u32) = (1140, 330);
pub const HALF: (u32, u32) = (560, 320);

/// More period markers than this clutter the chart: show every k-th instead.
const MAX_PERIOD_MARKERS: u64 = 40;

/// The min and max plotted latency of a time series (for shared axes).
pub fn timeline_extent(t: &Timeline) -> Option<(f64, f64)> {
    let lo = t
        .buckets
        .iter()
        .map(|b| b.min_ns())
        .filter(|&v| v > 0)
        .min()?;
    let hi = t.buckets.iter().map(|b| b.max_ns()).max()?;
    Some((lo as f64, hi as f64))
}

/// Latency over IO number of one run, uFLIP Figures 3-5 style: log latency
/// axis, warm-up (IOIgnore) and the start-up phase shaded, periods marked.
/// Long runs are shown as the min-max envelope and the mean of each bucket of
/// IOs, so that outliers stay visible however long the run.
pub fn timeline(
    id: &str,
    title: &str,
    run: &RunReport,
    color: usize,
    label: Option<&str>,
    y_range: Option<(f64, f64)>,
    size: (u32, u32),
) -> Chart {
    let t = &run.timeline;
    let mut series = Vec::new();
    if t.bucket_ios <= 1 {
        let pts = t
            .buckets
            .iter()
            .map(|b| [b.first() as f64, b.mean_ns()])
            .collect();
        series.push(Series {
            label: label.map_or("latency of each IO".to_string(), str::to_string),
            color,
            shapes: vec![Shape::Line(pts)],
        });
    } else {
        let half = t.bucket_ios as f64 / 2.0;
        // Buckets are aligned to multiples of bucket_ios; center each on its range.
        let center = |b: &crate::scan::Bucket| {
            ((b.first() / t.bucket_ios * t.bucket_ios) as f64 + half).min(t.ios as f64)
        };
        let env = t
            .buckets
            .iter()
            .map(|b| [center(b), b.min_ns() as f64, b.max_ns() as f64])
            .collect();
        let mean = t.buckets.iter().map(|b| [center(b), b.mean_ns()]).collect();
        let per = text::count(t.bucket_ios);
        let (l_env, l_mean) = match label {
            Some(l) => (
                format!("{l}: min-max of each {per} IOs"),
                format!("{l}: mean of each {per} IOs"),
            ),
            None => (
                format!("min-max of each {per} IOs"),
                format!("mean of each {per} IOs"),
            ),
        };
        series.push(Series {
            label: l_env,
            color,
            shapes: vec![Shape::Envelope(env)],
        });
        series.push(Series {
            label: l_mean,
            color,
            shapes: vec![Shape::Line(mean)],
        });
    }
    let mut spans = Vec::new();
    let mut markers = Vec::new();
    if let Some(end) = t.warmup_end {
        spans.push(Span {
            x0: 0.0,
            x1: end as f64,
            label: "warm-up (IOIgnore)".into(),
        });
    }
    if let Some(Phases {
        startup_ios,
        period_ios,
    }) = &run.phases
    {
        let start = startup_ios.unwrap_or(0);
        if start > 0 {
            spans.push(Span {
                x0: 0.0,
                x1: start as f64,
                label: format!("start-up phase ({} IOs)", text::count(start)),
            });
        }
        if let Some(p) = *period_ios {
            let periods = t.ios.saturating_sub(start) / p;
            let every = periods.div_ceil(MAX_PERIOD_MARKERS).max(1);
            let mut k = 1;
            while start + k * p <= t.ios {
                let lbl = (k == 1).then(|| {
                    if every > 1 {
                        format!("period {} IOs (every {every}th marked)", text::count(p))
                    } else {
                        format!("period {} IOs", text::count(p))
                    }
                });
                markers.push(Marker {
                    x: (start + k * p) as f64,
                    label: lbl,
                });
                k += every;
            }
        }
    }
    let mut y = Axis::new("response time (log)", Scale::Log, Unit::Nanos);
    if let Some((lo, hi)) = y_range {
        let pad = 10f64.powf(0.05 * (hi / lo).log10().max(0.3));
        y = y.with_range(lo / pad, hi * pad);
    }
    Chart {
        id: id.to_string(),
        title: title.to_string(),
        x: Axis::new("IO number (completion order)", Scale::Linear, Unit::Count)
            .with_range(0.0, t.ios.max(1) as f64),
        y,
        series,
        spans,
        markers,
        width: size.0,
        height: size.1,
    }
}

/// Overlaid latency CDFs (Chen et al. Figures 2-3, Wang et al. Figure 4): log
/// latency on x, fraction of IOs at or below it on y.
pub fn cdf(
    id: &str,
    title: &str,
    curves: &[(String, usize, &[CdfPoint])],
    size: (u32, u32),
) -> Chart {
    let series = curves
        .iter()
        .map(|(label, color, pts)| Series {
            label: label.clone(),
            color: *color,
            // The empirical CDF rises from 0 at the smallest latency: start
            // there, which also keeps a constant-latency run visible (one
            // point alone would draw nothing).
            shapes: vec![Shape::Steps(
                pts.first()
                    .map(|p| [p.0 as f64, 0.0])
                    .into_iter()
                    .chain(pts.iter().map(|p| [p.0 as f64, p.1]))
                    .collect(),
            )],
        })
        .collect();
    Chart {
        id: id.to_string(),
        title: title.to_string(),
        x: Axis::new("response time (log)", Scale::Log, Unit::Nanos),
        y: Axis::new("fraction of IOs", Scale::Linear, Unit::Fraction).with_range(0.0, 1.0),
        series,
        spans: Vec::new(),
        markers: Vec::new(),
        width: size.0,
        height: size.1,
    }
}

/// Latency histogram on log-spaced bins.
pub fn histogram(
    id: &str,
    title: &str,
    label: &str,
    h: &Histogram,
    color: usize,
    size: (u32, u32),
) -> Chart {
    let bars = h
        .counts
        .iter()
        .enumerate()
        .map(|(i, &c)| {
            [
                h.edges_ns[i].max(1) as f64,
                h.edges_ns[i + 1] as f64,
                c as f64,
            ]
        })
        .collect();
    Chart {
        id: id.to_string(),
        title: title.to_string(),
        x: Axis::new(
            "response time (log bins, 10 per decade)",
            Scale::Log,
            Unit::Nanos,
        ),
        y: Axis::new("IOs", Scale::Linear, Unit::Count),
        series: vec![Series {
            label: label.to_string(),
            color,
            shapes: vec![Shape::Bars(bars)],
        }],
        spans: Vec::new(),
        markers: Vec::new(),
        width: size.0,
        height: size.1,
    }
}
