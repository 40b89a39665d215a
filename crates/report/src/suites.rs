//! Any suite's results, rendered generically (`flashlab suite NAME`): the
//! report knows no suite. A suite declares its figures as data
//! (`figures.json`: which runs, what is on x and y, log scales, markers) and
//! writes a typed summary (`<suite>-summary.json`: tables, findings quoted
//! from the paper, notes, runs dominated by one IO); this module draws the
//! one and lays out the other, for one device or several side by side.
//!
//! Only saved results are read. The charts' statistics come from the
//! report's own runs, recomputed from every record, so they are right even
//! for a suite that was interrupted (its figures are saved when it starts).

use std::collections::BTreeMap;
use std::path::Path;

use flashlab_suite::figures::{FigureSpec, Metric, Plot, SuiteFigures, XKind, FIGURES};
use flashlab_suite::plan::Plan;
use flashlab_suite::suites::Kind;
use flashlab_suite::summary::{Compare, SuiteSummary, SummaryTable};

use crate::charts::{self, HALF, WIDE};
use crate::error::ReportError;
use crate::model::{Analysis, DeviceReport, RunReport, Section, Table};
use crate::scan::CdfPoint;
use crate::svg::{Axis, Chart, Marker, Scale, Series, Shape, Unit};
use crate::text;

/// The built-in analysis of suite results; does nothing for other directories.
pub struct SuiteAnalysis;

/// What a suite's results directory holds beyond the runs.
struct SuiteData {
    name: String,
    title: String,
    figures: SuiteFigures,
    /// `<suite>-summary.json`, when the suite finished.
    summary: Option<SuiteSummary>,
    notes: Vec<String>,
}

fn read_json<T: serde::de::DeserializeOwned>(path: &Path) -> Result<Option<T>, ReportError> {
    match crate::model::read_limited(path, flashlab_results::dir::MAX_JSON_BYTES) {
        Err(_) => Ok(None),
        Ok(t) => serde_json::from_str(&t)
            .map(Some)
            .map_err(|source| ReportError::InvalidJson {
                path: path.display().to_string(),
                what: "not valid",
                source,
            }),
    }
}

impl SuiteData {
    fn load(dir: &Path) -> Option<SuiteData> {
        let manifest: serde_json::Value = read_json(&dir.join("manifest.json")).ok()??;
        let mut notes = Vec::new();
        let plan = |notes: &mut Vec<String>| -> Option<Plan> {
            read_json(&dir.join("plan.json")).unwrap_or_else(|e| {
                notes.push(format!("{e}: the suite's charts are left out"));
                None
            })
        };
        let figures = read_json::<SuiteFigures>(&dir.join(FIGURES));
        let name = match manifest.pointer("/suite/name").and_then(|v| v.as_str()) {
            Some(n) => n.to_string(),
            None => plan(&mut notes)?.suite,
        };
        // A suite of the registry, or the OLTP matrix (no plan, no figures).
        let kind = flashlab_suite::suites::kind(&name);
        let figures = match figures {
            Ok(Some(f)) => f,
            other => {
                if let Err(e) = other {
                    notes.push(e.to_string());
                }
                // Results written before figures were saved: the registry
                // declares them again from the plan.
                match kind {
                    Some(Kind::Executor(s)) => match plan(&mut notes) {
                        Some(p) => s.figures(&p, None),
                        None => SuiteFigures::default(),
                    },
                    _ => SuiteFigures::default(),
                }
            }
        };
        let summary_name = SuiteSummary::file_name(&name);
        let summary: Option<SuiteSummary> =
            read_json(&dir.join(&summary_name)).unwrap_or_else(|e| {
                notes.push(e.to_string());
                None
            });
        if summary.is_none() {
            notes.push(match kind {
                Some(Kind::Oltp(m)) => format!("{summary_name} is missing: {}", m.unfinished_hint(dir)),
                _ => format!(
                    "{summary_name} is missing: the suite has not finished (it writes its summary at the end); `flashlab suite {name} --resume {}` completes it",
                    dir.display()
                ),
            });
        }
        let title = summary
            .as_ref()
            .map(|s| s.title.clone())
            .or_else(|| kind.map(|k| k.title().to_string()))
            .unwrap_or_else(|| name.clone());
        Some(SuiteData {
            name,
            title,
            figures,
            summary,
            notes,
        })
    }
}

// ---------------------------------------------------------------------------
// Figures: the data of one chart, independent of the device, so that the
// same figure of several devices can be overlaid.

#[derive(Clone, Debug)]
struct Pt {
    x: f64,
    /// The category, on categorical axes.
    cat: Option<String>,
    y: f64,
    band: Option<(f64, f64)>,
}

#[derive(Clone, Debug)]
enum Data {
    Points(Vec<Pt>),
    Cdf(Vec<CdfPoint>),
}

#[derive(Clone, Debug)]
struct Curve {
    label: String,
    /// Palette index when the curve has a colour of its own (uFLIP's
    /// baselines keep theirs across charts); else by position.
    color: Option<usize>,
    data: Data,
    /// Reference lines (the full scan) are drawn without dots or band.
    reference: bool,
}

#[derive(Clone, Debug)]
struct Fig {
    /// Stable across devices: figures with the same id are overlaid.
    id: String,
    title: String,
    x_label: String,
    x: XKind,
    metric: Metric,
    cdf: bool,
    curves: Vec<Curve>,
    /// Vertical markers (value, label): the break-even selectivity.
    markers: Vec<(f64, String)>,
    wide: bool,
}

fn quantile(cdf: &[CdfPoint], f: f64) -> Option<f64> {
    cdf.iter()
        .find(|p| p.1 >= f - 1e-12)
        .or(cdf.last())
        .map(|p| p.0 as f64)
}

fn metric_of(run: &RunReport, m: Metric) -> Option<(f64, Option<(f64, f64)>)> {
    let t = &run.stats.all;
    if t.ios == 0 {
        return None;
    }
    Some(match m {
        Metric::Latency => (
            t.latency.mean_ns,
            quantile(&run.cdf, 0.10).zip(quantile(&run.cdf, 0.90)),
        ),
        Metric::Bandwidth => (t.mb_per_s, None),
        Metric::Iops => (t.iops, None),
        Metric::Duration => (t.window_ns as f64, None),
    })
}

fn value_label(kind: XKind, v: f64) -> String {
    match kind {
        XKind::CatBytes | XKind::LogBytes => text::bytes_approx(v.max(0.0) as u64),
        _ => crate::svg::fmt_value(v, Unit::Number),
    }
}

/// A declared figure with this device's numbers; `None` for timelines
/// (drawn from the run itself).
fn fig_of(spec: &FigureSpec, by_name: &BTreeMap<&str, &RunReport>) -> Option<Fig> {
    let (x_label, x, metric, cdf) = match &spec.plot {
        Plot::Points { x_label, x, metric } => (x_label.clone(), *x, *metric, false),
        Plot::Cdf => (String::new(), XKind::Log, Metric::Latency, true),
        Plot::Timeline => return None,
    };
    let curves = spec
        .curves
        .iter()
        .filter_map(|c| {
            let data = if cdf {
                let run = by_name.get(c.points.first()?.run.as_str())?;
                if run.cdf.is_empty() {
                    return None;
                }
                Data::Cdf(run.cdf.clone())
            } else {
                let pts: Vec<Pt> = c
                    .points
                    .iter()
                    .filter_map(|p| {
                        let (y, band) = by_name
                            .get(p.run.as_str())
                            .and_then(|run| metric_of(run, metric))?;
                        let cat = p
                            .category
                            .clone()
                            .or_else(|| x.categorical().then(|| value_label(x, p.x)));
                        Some(Pt {
                            x: p.x,
                            cat,
                            y,
                            band,
                        })
                    })
                    .collect();
                if pts.is_empty() {
                    return None;
                }
                Data::Points(pts)
            };
            Some(Curve {
                label: c.label.clone(),
                color: c.color,
                data,
                reference: c.reference,
            })
        })
        .collect();
    Some(Fig {
        id: spec.id.clone(),
        title: spec.title.clone(),
        x_label,
        x,
        metric,
        cdf,
        curves,
        markers: spec
            .markers
            .iter()
            .map(|m| (m.x, m.label.clone()))
            .collect(),
        wide: spec.wide,
    })
}

// ---------------------------------------------------------------------------
// Drawing figures.

/// One drawn curve: the figure's curve of one device.
struct Drawn<'a> {
    label: String,
    color: usize,
    curve: &'a Curve,
}

fn y_axis(m: Metric) -> Axis {
    match m {
        Metric::Latency => Axis::new("mean response time (log)", Scale::Log, Unit::Nanos),
        Metric::Bandwidth => Axis::new("throughput (MB/s)", Scale::Linear, Unit::Number),
        Metric::Iops => Axis::new("IOs per second", Scale::Linear, Unit::Count),
        Metric::Duration => Axis::new("time to read the pages", Scale::Linear, Unit::Nanos),
    }
}

fn draw(f: &Fig, id: &str, title: &str, curves: &[Drawn], markers: &[(f64, String)]) -> Chart {
    let size = if f.wide { WIDE } else { HALF };
    if f.cdf {
        let c: Vec<(String, usize, &[CdfPoint])> = curves
            .iter()
            .filter_map(|d| match &d.curve.data {
                Data::Cdf(p) => Some((d.label.clone(), d.color, p.as_slice())),
                Data::Points(_) => None,
            })
            .collect();
        return charts::cdf(id, title, &c, size);
    }
    // Categories in order of first appearance over every curve, then (for
    // categories that stand for numbers: IOShift, Incr) in numeric order:
    // devices measured with different parameter sets (a --quick run against
    // a full one) each contribute values, and first appearance would put a
    // value only the second has after all of the first's.
    let mut cats: Vec<String> = Vec::new();
    let mut cat_x: Vec<f64> = Vec::new();
    let mut xs: Vec<f64> = Vec::new();
    for d in curves {
        if let Data::Points(p) = &d.curve.data {
            for q in p {
                if let Some(c) = &q.cat {
                    if !cats.contains(c) {
                        cats.push(c.clone());
                        cat_x.push(q.x);
                    }
                }
                if !d.curve.reference && !xs.contains(&q.x) {
                    xs.push(q.x);
                }
            }
        }
    }
    if f.x == XKind::Named {
        // Chen Figure 9: phases in their order, whatever appeared first.
        cats.sort_by_key(|c| {
            ["before", "fragmented", "recovered"]
                .iter()
                .position(|p| p == c)
                .unwrap_or(9)
        });
    }
    if matches!(f.x, XKind::Cat | XKind::CatBytes) && cat_x.iter().all(|x| x.is_finite()) {
        let mut order: Vec<usize> = (0..cats.len()).collect();
        order.sort_by(|&a, &b| cat_x[a].total_cmp(&cat_x[b]));
        cats = order.into_iter().map(|i| cats[i].clone()).collect();
    }
    xs.sort_by(f64::total_cmp);
    let categorical = matches!(
        f.x,
        XKind::Cat | XKind::CatBytes | XKind::BySeries | XKind::Named
    );
    let xpos = |q: &Pt| -> f64 {
        match (&q.cat, categorical) {
            (Some(c), true) => cats.iter().position(|x| x == c).unwrap_or(0) as f64,
            _ => q.x,
        }
    };
    let series = curves
        .iter()
        .filter_map(|d| {
            let Data::Points(p) = &d.curve.data else {
                return None;
            };
            let line: Vec<[f64; 2]> = p.iter().map(|q| [xpos(q), q.y]).collect();
            let band: Vec<[f64; 3]> = p
                .iter()
                .filter_map(|q| q.band.map(|(lo, hi)| [xpos(q), lo, hi]))
                .collect();
            let mut shapes = Vec::new();
            if !band.is_empty() && !d.curve.reference {
                shapes.push(Shape::Band(band));
            }
            if line.len() > 1 {
                shapes.push(Shape::Line(line.clone()));
            }
            if !d.curve.reference {
                shapes.push(Shape::Points(line));
            }
            Some(Series {
                label: d.label.clone(),
                color: d.color,
                shapes,
            })
        })
        .collect();
    let x = if categorical {
        Axis::categorical(&f.x_label, cats)
    } else {
        match f.x {
            XKind::LogBytes => {
                Axis::new(&format!("{} (log)", f.x_label), Scale::Log, Unit::Bytes).with_ticks(xs)
            }
            XKind::Fraction => {
                Axis::new(&f.x_label, Scale::Linear, Unit::Fraction).with_range(0.0, 1.0)
            }
            _ => {
                Axis::new(&format!("{} (log)", f.x_label), Scale::Log, Unit::Number).with_ticks(xs)
            }
        }
    };
    Chart {
        id: id.to_string(),
        title: title.to_string(),
        x,
        y: y_axis(f.metric),
        series,
        spans: Vec::new(),
        markers: markers
            .iter()
            .map(|(x, l)| Marker {
                x: *x,
                label: Some(l.clone()),
            })
            .collect(),
        width: size.0,
        height: size.1,
    }
}

/// A figure of one device: a colour per curve.
fn draw_device(f: &Fig) -> Option<Chart> {
    let drawn: Vec<Drawn> = f
        .curves
        .iter()
        .enumerate()
        .map(|(i, c)| Drawn {
            label: c.label.clone(),
            color: c.color.unwrap_or(i),
            curve: c,
        })
        .collect();
    let chart = draw(f, &f.id, &f.title, &drawn, &f.markers);
    chart.has_data().then_some(chart)
}

/// The same figure of several devices: one chart per curve name (or one
/// chart when the figure has a single curve), a colour per device.
fn draw_compare(figs: &[(&DeviceReport, &Fig)]) -> Vec<Chart> {
    let Some((_, first)) = figs.first() else {
        return Vec::new();
    };
    let mut names: Vec<&str> = Vec::new();
    for (_, f) in figs {
        for c in &f.curves {
            if !c.reference && !names.contains(&c.label.as_str()) {
                names.push(&c.label);
            }
        }
    }
    let single = figs
        .iter()
        .all(|(_, f)| f.curves.iter().filter(|c| !c.reference).count() <= 1);
    let mut out = Vec::new();
    for name in &names {
        let mut drawn = Vec::new();
        let mut markers = Vec::new();
        for (d, f) in figs {
            for c in &f.curves {
                if c.label == *name || (single && !c.reference) {
                    drawn.push(Drawn {
                        label: d.label.clone(),
                        color: d.color,
                        curve: c,
                    });
                }
                if c.reference {
                    drawn.push(Drawn {
                        label: format!("{}: {}", d.label, c.label),
                        color: d.color,
                        curve: c,
                    });
                }
            }
            for (x, l) in &f.markers {
                if l.starts_with(name) {
                    markers.push((*x, format!("{}: {l}", d.label)));
                }
            }
        }
        let (id, title) = if single {
            (
                first.id.clone(),
                format!("{}, device by device", first.title),
            )
        } else {
            (
                format!("{}-{name}", first.id),
                format!("{}: {name}, device by device", first.title),
            )
        };
        let chart = draw(first, &id, &title, &drawn, &markers);
        if chart.has_data() {
            out.push(chart);
        }
        if single {
            break;
        }
    }
    out
}

// ---------------------------------------------------------------------------
// Sections.

fn by_name(d: &DeviceReport) -> BTreeMap<&str, &RunReport> {
    d.runs.iter().map(|r| (r.name.as_str(), r)).collect()
}

/// Every point, CDF and category figure of the suite with this device's
/// numbers (timelines are per device and not overlaid).
fn figs_of(s: &SuiteData, d: &DeviceReport) -> Vec<Fig> {
    let runs = by_name(d);
    s.figures
        .groups
        .iter()
        .flat_map(|g| &g.figures)
        .filter_map(|f| fig_of(f, &runs))
        .collect()
}

fn findings_table(sum: &SuiteSummary) -> Table {
    Table {
        header: ["source", "finding", "measured here", "paper says"]
            .map(str::to_string)
            .to_vec(),
        rows: sum
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
            .collect(),
    }
}

fn device_sections(s: &SuiteData, d: &DeviceReport) -> Vec<Section> {
    let mut out = Vec::new();
    let mut notes = s.notes.clone();
    match &s.summary {
        None => out.push(Section {
            id: format!("{}-summary", s.name),
            title: format!("{}: summary", s.title),
            paragraphs: notes,
            ..Section::default()
        }),
        Some(sum) => {
            for t in sum.tables.iter().filter(|t| !t.detail_only) {
                let mut paragraphs = std::mem::take(&mut notes);
                paragraphs.extend(t.paragraphs.iter().cloned());
                let table = match t.compare {
                    Compare::Rows => Table {
                        header: std::iter::once("Device".to_string())
                            .chain(t.header.iter().cloned())
                            .collect(),
                        rows: t
                            .rows
                            .iter()
                            .map(|r| {
                                std::iter::once(d.label.clone())
                                    .chain(r.iter().cloned())
                                    .collect()
                            })
                            .collect(),
                    },
                    _ => Table {
                        header: t.header.clone(),
                        rows: t.rows.clone(),
                    },
                };
                out.push(Section {
                    id: t.id.clone(),
                    title: t.title.clone(),
                    paragraphs,
                    tables: vec![table],
                    ..Section::default()
                });
            }
            let mut later: Vec<String> = sum
                .notes
                .iter()
                .chain(&sum.flag_notes())
                .map(|n| format!("Note: {n}"))
                .collect();
            if !sum.findings.is_empty() || !notes.is_empty() || !later.is_empty() {
                let mut f = Section {
                    id: format!("{}-findings", s.name),
                    title: format!("{}: findings", s.title),
                    paragraphs: std::mem::take(&mut notes),
                    ..Section::default()
                };
                if !sum.findings.is_empty() {
                    f.paragraphs.push(format!(
                        "What the paper reports, measured on {} (from {}); the paper's words quoted with their section:",
                        d.label,
                        SuiteSummary::file_name(&s.name)
                    ));
                    f.tables.push(findings_table(sum));
                }
                f.paragraphs.append(&mut later);
                out.push(f);
            }
        }
    }
    let runs = by_name(d);
    for g in &s.figures.groups {
        let mut charts = Vec::new();
        for f in &g.figures {
            match f.plot {
                Plot::Timeline => {
                    let Some(run) = f
                        .curves
                        .first()
                        .and_then(|c| c.points.first())
                        .and_then(|p| runs.get(p.run.as_str()))
                        .filter(|r| r.has_data())
                    else {
                        continue;
                    };
                    charts.push(charts::timeline(
                        &f.id,
                        &format!("{} on {}", f.title, d.label),
                        run,
                        d.color,
                        None,
                        None,
                        WIDE,
                    ));
                }
                _ => charts.extend(fig_of(f, &runs).as_ref().and_then(draw_device)),
            }
        }
        if !charts.is_empty() {
            out.push(Section {
                id: g.id.clone(),
                title: g.title.clone(),
                paragraphs: vec![g.paragraph.clone()],
                charts,
                ..Section::default()
            });
        }
    }
    out
}

/// The suite's summary tables, device by device.
fn compare_tables(group: &[&(&DeviceReport, SuiteData)]) -> Vec<Section> {
    let mut out = Vec::new();
    // The first device's version of each table: its id, title and columns.
    let mut firsts: Vec<&SummaryTable> = Vec::new();
    for (_, s) in group {
        for t in s.summary.iter().flat_map(|x| &x.tables) {
            if t.compare != Compare::None && !firsts.iter().any(|f| f.id == t.id) {
                firsts.push(t);
            }
        }
    }
    for first in firsts {
        let (id, title, compare, header) = (&first.id, &first.title, &first.compare, &first.header);
        let table_of = |s: &SuiteData| {
            s.summary
                .as_ref()
                .and_then(|x| x.tables.iter().find(|t| &t.id == id))
                .cloned()
        };
        let table = match compare {
            Compare::Rows => Table {
                header: std::iter::once("Device".to_string())
                    .chain(header.iter().cloned())
                    .collect(),
                rows: group
                    .iter()
                    .flat_map(|(d, s)| {
                        let rows = table_of(s)
                            .map(|t| t.rows)
                            .unwrap_or_else(|| vec![vec!["-".to_string(); header.len()]]);
                        rows.into_iter()
                            .map(|r| std::iter::once(d.label.clone()).chain(r).collect())
                            .collect::<Vec<Vec<String>>>()
                    })
                    .collect(),
            },
            Compare::Column { keys, value } => {
                let mut order: Vec<Vec<String>> = Vec::new();
                let mut cells: BTreeMap<Vec<String>, Vec<String>> = BTreeMap::new();
                for (i, (_, s)) in group.iter().enumerate() {
                    for r in table_of(s).map(|t| t.rows).unwrap_or_default() {
                        let k: Vec<String> = keys
                            .iter()
                            .map(|&k| r.get(k).cloned().unwrap_or_default())
                            .collect();
                        if !order.contains(&k) {
                            order.push(k.clone());
                        }
                        cells
                            .entry(k)
                            .or_insert_with(|| vec!["-".into(); group.len()])[i] =
                            r.get(*value).cloned().unwrap_or_default();
                    }
                }
                Table {
                    header: keys
                        .iter()
                        .map(|&k| header.get(k).cloned().unwrap_or_default())
                        .chain(group.iter().map(|(d, _)| d.label.clone()))
                        .collect(),
                    rows: order
                        .into_iter()
                        .map(|k| {
                            let v = cells.remove(&k).unwrap_or_default();
                            k.into_iter().chain(v).collect()
                        })
                        .collect(),
                }
            }
            Compare::None => continue,
        };
        out.push(Section {
            id: id.clone(),
            title: first
                .compare_title
                .clone()
                .unwrap_or_else(|| format!("{title}, side by side")),
            paragraphs: vec![format!(
                "{title} of each device ({}):",
                match compare {
                    Compare::Rows => "one row per device",
                    _ => "one column per device",
                }
            )],
            tables: vec![table],
            ..Section::default()
        });
    }
    out
}

/// The findings, one column per device.
fn compare_findings(
    name: &str,
    title: &str,
    group: &[&(&DeviceReport, SuiteData)],
) -> Option<Section> {
    let mut keys: Vec<(String, String)> = Vec::new();
    let mut cells: BTreeMap<(String, String), Vec<String>> = BTreeMap::new();
    for (i, (_, s)) in group.iter().enumerate() {
        for f in s.summary.iter().flat_map(|x| &x.findings) {
            let k = (f.source.clone(), f.what.clone());
            if !keys.contains(&k) {
                keys.push(k.clone());
            }
            cells
                .entry(k)
                .or_insert_with(|| vec!["-".into(); group.len()])[i] = f.text.clone();
        }
    }
    if keys.is_empty() {
        return None;
    }
    let mut header = vec!["source".to_string(), "finding".to_string()];
    header.extend(group.iter().map(|(d, _)| d.label.clone()));
    let rows = keys
        .iter()
        .map(|k| {
            let mut r = vec![k.0.clone(), k.1.clone()];
            r.extend(cells.remove(k).unwrap_or_default());
            r
        })
        .collect();
    Some(Section {
        id: format!("{name}-findings"),
        title: format!("{title}: findings, side by side"),
        tables: vec![Table { header, rows }],
        ..Section::default()
    })
}

impl Analysis for SuiteAnalysis {
    fn sections(
        &self,
        device: &DeviceReport,
        results_dir: &Path,
    ) -> Result<Vec<Section>, ReportError> {
        Ok(SuiteData::load(results_dir)
            .map(|s| device_sections(&s, device))
            .unwrap_or_default())
    }

    fn compare(&self, devices: &[(&DeviceReport, &Path)]) -> Result<Vec<Section>, ReportError> {
        let loaded: Vec<(&DeviceReport, SuiteData)> = devices
            .iter()
            .filter_map(|(d, p)| SuiteData::load(p).map(|s| (*d, s)))
            .collect();
        let mut suites: Vec<&str> = Vec::new();
        for (_, s) in &loaded {
            if !suites.contains(&s.name.as_str()) {
                suites.push(&s.name);
            }
        }
        let mut out = Vec::new();
        for name in suites {
            let group: Vec<&(&DeviceReport, SuiteData)> =
                loaded.iter().filter(|(_, s)| s.name == name).collect();
            if group.len() < 2 {
                continue;
            }
            let title = group[0].1.title.clone();
            out.extend(compare_tables(&group));
            out.extend(compare_findings(name, &title, &group));
            // Overlaid curves: each figure, a colour per device.
            let figs: Vec<(&DeviceReport, Vec<Fig>)> =
                group.iter().map(|(d, s)| (*d, figs_of(s, d))).collect();
            let mut ids: Vec<String> = Vec::new();
            for (_, fs) in &figs {
                for f in fs {
                    if !ids.contains(&f.id) {
                        ids.push(f.id.clone());
                    }
                }
            }
            let mut charts = Vec::new();
            for id in ids {
                let same: Vec<(&DeviceReport, &Fig)> = figs
                    .iter()
                    .filter_map(|(d, fs)| fs.iter().find(|f| f.id == id).map(|f| (*d, f)))
                    .collect();
                charts.extend(draw_compare(&same));
            }
            if !charts.is_empty() {
                out.push(Section {
                    id: format!("{name}-overlay"),
                    title: format!("{title}: each figure, device by device"),
                    paragraphs: vec![format!(
                        "The same curves as in each device's section, overlaid with one colour per device ({}); a figure with several curves gets one chart per curve.",
                        group.iter().map(|(d, _)| d.label.as_str()).collect::<Vec<_>>().join(", ")
                    )],
                    charts,
                    ..Section::default()
                });
            }
        }
        Ok(out)
    }

    fn featured_runs(&self, _device: &DeviceReport, results_dir: &Path) -> Vec<String> {
        SuiteData::load(results_dir)
            .map(|s| {
                s.figures
                    .featured_runs
                    .into_iter()
                    .take(crate::model::MAX_CHARTED_COMPARISONS)
                    .collect()
            })
            .unwrap_or_default()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn points(xs: &[f64], kind: XKind) -> Curve {
        Curve {
            label: "RW".into(),
            color: None,
            data: Data::Points(
                xs.iter()
                    .map(|&x| Pt {
                        x,
                        cat: Some(value_label(kind, x)),
                        y: 1.0 + x.abs(),
                        band: None,
                    })
                    .collect(),
            ),
            reference: false,
        }
    }

    fn fig(kind: XKind) -> Fig {
        Fig {
            id: "f".into(),
            title: "f".into(),
            x_label: "x".into(),
            x: kind,
            metric: Metric::Latency,
            cdf: false,
            curves: Vec::new(),
            markers: Vec::new(),
            wide: false,
        }
    }

    /// A --quick run (fewer values) compared with a full one: the union of
    /// the values is in numeric order, and every line goes left to right.
    #[test]
    fn compared_categories_are_in_numeric_order() {
        for (kind, quick, full) in [
            (
                XKind::Cat,
                vec![-1.0, 0.0, 1.0, 64.0],
                vec![-1.0, 0.0, 1.0, 2.0, 4.0, 8.0, 16.0, 32.0, 64.0],
            ),
            (
                XKind::CatBytes,
                vec![0.0, 512.0, 16384.0],
                vec![0.0, 512.0, 1024.0, 2048.0, 4096.0, 8192.0, 16384.0],
            ),
        ] {
            let (a, b) = (points(&quick, kind), points(&full, kind));
            let drawn = [
                Drawn {
                    label: "quick".into(),
                    color: 0,
                    curve: &a,
                },
                Drawn {
                    label: "full".into(),
                    color: 1,
                    curve: &b,
                },
            ];
            let chart = draw(&fig(kind), "f", "f", &drawn, &[]);
            let expected: Vec<String> = full.iter().map(|&x| value_label(kind, x)).collect();
            assert_eq!(chart.x.categories, expected, "{kind:?}");
            for s in &chart.series {
                for shape in &s.shapes {
                    if let Shape::Line(line) = shape {
                        assert!(
                            line.windows(2).all(|w| w[0][0] < w[1][0]),
                            "{kind:?} {}: the line doubles back: {line:?}",
                            s.label
                        );
                    }
                }
            }
        }
    }
}
