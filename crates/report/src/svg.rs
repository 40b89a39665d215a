//! Our own SVG charts: line, step (CDF), min/max envelope and bar shapes on
//! linear or log axes, with nice ticks in latency units, a legend, shaded
//! spans and vertical markers.
//!
//! Why our own: the charts we need are few and simple, and writing them
//! directly keeps the output small (one path per envelope, coordinates with
//! one decimal), deterministic, free of fonts and of any URL (the SVG is
//! inlined in HTML, so it needs no `xmlns`), and gives the page's script
//! what it needs through a few `data-` attributes: the axis mapping (to turn
//! a mouse position back into values) and series numbers (legend toggling).
//!
//! A chart is described by [`Chart`] (plain data, serializable, so that
//! analyses can add charts to the report model) and drawn by [`render`].

use std::fmt::Write;

use serde::Serialize;

use crate::text;

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Scale {
    Linear,
    Log,
}

/// What axis values mean, for tick labels and the hover read-out.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Unit {
    /// Nanoseconds, shown as ns/us/ms/s.
    Nanos,
    /// A count, shown as 1.5k, 2M...
    Count,
    /// A fraction 0..1, shown as a percentage.
    Fraction,
    /// A plain number.
    Number,
    /// Bytes, shown in binary units (512B, 4KiB, 1.5MiB).
    Bytes,
}

#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Axis {
    pub label: String,
    pub scale: Scale,
    pub unit: Unit,
    /// Fixed range; `None` fits the data (log axes ignore values <= 0).
    pub range: Option<(f64, f64)>,
    /// Explicit tick values (e.g. the measured parameter values, powers of
    /// two): labelled in the axis unit, thinned when they would collide.
    /// Empty: ticks chosen from the range.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub ticks: Vec<f64>,
    /// A categorical axis: values are positions 0..n-1, labelled with these
    /// names (IOShift 0/512B/16KiB, Incr -1/0/1...: values a log scale cannot
    /// hold). Forces a linear scale from -0.5 to n-0.5.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub categories: Vec<String>,
}

impl Axis {
    pub fn new(label: &str, scale: Scale, unit: Unit) -> Axis {
        Axis {
            label: label.to_string(),
            scale,
            unit,
            range: None,
            ticks: Vec::new(),
            categories: Vec::new(),
        }
    }

    /// Ticks at these values (see [`Axis::ticks`]).
    pub fn with_ticks(mut self, ticks: Vec<f64>) -> Axis {
        self.ticks = ticks;
        self
    }

    /// A categorical axis (see [`Axis::categories`]).
    pub fn categorical(label: &str, categories: Vec<String>) -> Axis {
        let n = categories.len().max(1) as f64;
        Axis {
            label: label.to_string(),
            scale: Scale::Linear,
            unit: Unit::Number,
            range: Some((-0.5, n - 0.5)),
            ticks: Vec::new(),
            categories,
        }
    }

    pub fn with_range(mut self, lo: f64, hi: f64) -> Axis {
        self.range = Some((lo, hi));
        self
    }
}

/// One way of drawing data; a series may combine several (an envelope and its mean line).
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(tag = "kind", content = "points", rename_all = "snake_case")]
pub enum Shape {
    /// `[x, y]` joined by straight lines.
    Line(Vec<[f64; 2]>),
    /// `[x, y]` of an empirical CDF: horizontal to the next x, then vertical.
    Steps(Vec<[f64; 2]>),
    /// `[x, lo, hi]`: a vertical min-max segment per x (downsampled series).
    Envelope(Vec<[f64; 3]>),
    /// `[x0, x1, y]`: bars from the bottom of the axis.
    Bars(Vec<[f64; 3]>),
    /// `[x, lo, hi]`: a shaded band from lo to hi, joined along x (a
    /// percentile band around a mean line).
    Band(Vec<[f64; 3]>),
    /// `[x, y]`: a dot per point (measured values on a sparse axis).
    Points(Vec<[f64; 2]>),
}

#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Series {
    pub label: String,
    /// Index into the palette.
    pub color: usize,
    pub shapes: Vec<Shape>,
}

/// A shaded range of x (the warm-up IOs, the start-up phase).
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Span {
    pub x0: f64,
    pub x1: f64,
    pub label: String,
}

/// A dashed vertical line (a period boundary).
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Marker {
    pub x: f64,
    pub label: Option<String>,
}

#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Chart {
    /// Unique in the page (HTML id).
    pub id: String,
    pub title: String,
    pub x: Axis,
    pub y: Axis,
    pub series: Vec<Series>,
    pub spans: Vec<Span>,
    pub markers: Vec<Marker>,
    pub width: u32,
    pub height: u32,
}

impl Chart {
    /// Whether any series has points.
    pub fn has_data(&self) -> bool {
        self.series
            .iter()
            .flat_map(|s| &s.shapes)
            .any(|sh| match sh {
                Shape::Line(p) | Shape::Steps(p) | Shape::Points(p) => !p.is_empty(),
                Shape::Envelope(p) | Shape::Bars(p) | Shape::Band(p) => !p.is_empty(),
            })
    }
}

/// Ten distinguishable colours (Tableau 10), cycled.
pub const PALETTE: [&str; 10] = [
    "#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2", "#7f7f7f",
    "#bcbd22", "#17becf",
];

pub fn color(i: usize) -> &'static str {
    PALETTE[i % PALETTE.len()]
}

const FONT: &str = "system-ui, -apple-system, 'Segoe UI', Roboto, 'DejaVu Sans', sans-serif";
/// Average glyph widths at the sizes used, to lay out text without fonts.
const CHAR_W: f64 = 6.4;
const TITLE_CHAR_W: f64 = 7.6;
const LEFT: f64 = 64.0;
const RIGHT: f64 = 16.0;
const BOTTOM: f64 = 40.0;

/// Maps values of one axis to pixels.
#[derive(Clone, Copy, Debug)]
struct Map {
    log: bool,
    lo: f64,
    hi: f64,
    p0: f64,
    p1: f64,
}

impl Map {
    fn t(&self, v: f64) -> f64 {
        if self.log {
            (v.max(self.lo).log10() - self.lo.log10()) / (self.hi.log10() - self.lo.log10())
        } else {
            (v - self.lo) / (self.hi - self.lo)
        }
    }
    fn px(&self, v: f64) -> f64 {
        let t = self.t(v).clamp(-0.01, 1.01);
        self.p0 + t * (self.p1 - self.p0)
    }
    fn attr(&self) -> String {
        format!(
            "{} {} {} {} {}",
            if self.log { "log" } else { "lin" },
            num(self.lo),
            num(self.hi),
            n1(self.p0),
            n1(self.p1)
        )
    }
}

/// Renders a chart as an inline `<svg>` element.
/// Long: draws one chart top to bottom (title, legend, axes, series, labels) in the layout's
/// shared coordinates.
pub fn render(c: &Chart) -> String {
    let w = c.width as f64;
    let h = c.height as f64;
    let mut out = String::with_capacity(4096);

    // Title lines, then legend rows, then the plot.
    let title_lines = wrap(&c.title, ((w - 20.0) / TITLE_CHAR_W) as usize);
    let mut y_cursor = 6.0 + 16.0 * title_lines.len() as f64;
    let legend = legend_layout(&c.series, w);
    let legend_top = y_cursor + 4.0;
    y_cursor = legend_top + 18.0 * legend.rows as f64;
    let top = y_cursor + 10.0;
    let bottom = h - BOTTOM;
    let (left, right) = (LEFT, w - RIGHT);

    let (xlo, xhi) = range(&c.x, c, true);
    let (ylo, yhi) = range(&c.y, c, false);
    let mx = Map {
        log: c.x.scale == Scale::Log,
        lo: xlo,
        hi: xhi,
        p0: left,
        p1: right,
    };
    let my = Map {
        log: c.y.scale == Scale::Log,
        lo: ylo,
        hi: yhi,
        p0: bottom,
        p1: top,
    };

    let xcat = if c.x.categories.is_empty() {
        String::new()
    } else {
        format!(r#" data-xcat="{}""#, text::html(&c.x.categories.join("|")))
    };
    let _ = write!(
        out,
        r#"<svg class="chart" id="{id}" viewBox="0 0 {w} {h}" width="{w}" height="{h}" role="img" aria-labelledby="{id}-t" font-family="{FONT}" font-size="11" data-x="{dx}" data-y="{dy}" data-xu="{xu}" data-yu="{yu}"{xcat}>"#,
        id = text::html(&c.id),
        w = c.width,
        h = c.height,
        dx = mx.attr(),
        dy = my.attr(),
        xu = unit_code(c.x.unit),
        yu = unit_code(c.y.unit),
    );
    let _ = write!(
        out,
        r#"<title id="{}-t">{}</title>"#,
        text::html(&c.id),
        text::html(&c.title)
    );
    let _ = write!(
        out,
        r##"<rect width="{}" height="{}" fill="#fff"/>"##,
        c.width, c.height
    );
    for (i, line) in title_lines.iter().enumerate() {
        let _ = write!(
            out,
            r##"<text class="ctitle" x="10" y="{}" font-size="13" font-weight="600" fill="#222">{}</text>"##,
            20.0 + 16.0 * i as f64,
            text::html(line)
        );
    }
    for item in &legend.items {
        let s = &c.series[item.series];
        let (x, y) = (item.x, legend_top + 18.0 * item.row as f64);
        // An envelope is drawn pale: so is its swatch, to tell it from the mean line.
        let pale = !s.shapes.is_empty()
            && s.shapes
                .iter()
                .all(|sh| matches!(sh, Shape::Envelope(_) | Shape::Band(_)));
        let _ = write!(
            out,
            r##"<g class="lg" data-s="{i}" tabindex="0" role="button" aria-pressed="true"><rect x="{x}" y="{ry}" width="12" height="12" rx="2" fill="{col}"{op}/><text x="{tx}" y="{ty}" fill="#333">{label}</text></g>"##,
            i = item.series,
            x = n1(x),
            ry = n1(y + 1.0),
            col = color(s.color),
            op = if pale { r#" fill-opacity="0.4""# } else { "" },
            tx = n1(x + 16.0),
            ty = n1(y + 11.0),
            label = text::html(&s.label),
        );
    }

    // Plot frame and grid.
    let _ = write!(
        out,
        r##"<rect class="plot" x="{}" y="{}" width="{}" height="{}" fill="#fcfcfc" stroke="#bbb"/>"##,
        n1(left),
        n1(top),
        n1(right - left),
        n1(bottom - top)
    );
    // Grid lines and tick marks as one path each: a log axis has many minor
    // ticks, and one element per tick would be a good part of the page.
    let mut grid = String::new();
    let mut marks = String::new();
    let mut labels = String::new();
    for t in axis_ticks(&c.x, xlo, xhi, right - left, 60.0) {
        let x = n1(mx.px(t.value));
        if t.label.is_some() {
            let _ = write!(grid, "M{x} {}V{}", n1(top), n1(bottom));
        }
        let len = if t.label.is_some() { 5.0 } else { 3.0 };
        let _ = write!(marks, "M{x} {}V{}", n1(bottom), n1(bottom + len));
        if let Some(l) = t.label {
            let _ = write!(
                labels,
                r##"<text x="{x}" y="{}" text-anchor="middle">{}</text>"##,
                n1(bottom + 16.0),
                text::html(&l)
            );
        }
    }
    for t in axis_ticks(&c.y, ylo, yhi, bottom - top, 26.0) {
        let y = n1(my.px(t.value));
        if t.label.is_some() {
            let _ = write!(grid, "M{} {y}H{}", n1(left), n1(right));
        }
        let len = if t.label.is_some() { 5.0 } else { 3.0 };
        let _ = write!(marks, "M{} {y}H{}", n1(left - len), n1(left));
        if let Some(l) = t.label {
            let _ = write!(
                labels,
                r##"<text x="{}" y="{}" text-anchor="end">{}</text>"##,
                n1(left - 7.0),
                n1(my.px(t.value) + 4.0),
                text::html(&l)
            );
        }
    }
    let _ = write!(
        out,
        r##"<path class="grid" d="{grid}" stroke="#e4e4e4"/><path d="{marks}" stroke="#888"/><g fill="#444">{labels}</g>"##
    );
    let _ = write!(
        out,
        r##"<text x="{}" y="{}" text-anchor="middle" fill="#222">{}</text>"##,
        n1((left + right) / 2.0),
        n1(h - 6.0),
        text::html(&c.x.label)
    );
    let _ = write!(
        out,
        r##"<text transform="translate(13 {}) rotate(-90)" text-anchor="middle" fill="#222">{}</text>"##,
        n1((top + bottom) / 2.0),
        text::html(&c.y.label)
    );

    // Spans and markers under the data.
    for s in &c.spans {
        let (x0, x1) = (mx.px(s.x0).max(left), mx.px(s.x1).min(right));
        if x1 <= x0 {
            continue;
        }
        let _ = write!(
            out,
            r##"<g class="span"><rect x="{}" y="{}" width="{}" height="{}" fill="#999" fill-opacity="0.16"/><text x="{}" y="{}" font-size="10" fill="#555">{}</text></g>"##,
            n1(x0),
            n1(top),
            n1(x1 - x0),
            n1(bottom - top),
            n1(x0 + 3.0),
            n1(top + 12.0),
            text::html(&s.label)
        );
    }
    for m in &c.markers {
        let x = mx.px(m.x);
        if x < left || x > right {
            continue;
        }
        let _ = write!(
            out,
            r##"<line class="marker" x1="{x}" x2="{x}" y1="{}" y2="{}" stroke="#555" stroke-dasharray="4 3"/>"##,
            n1(top),
            n1(bottom),
            x = n1(x)
        );
        if let Some(l) = &m.label {
            let _ = write!(
                out,
                r##"<text x="{}" y="{}" font-size="10" fill="#555">{}</text>"##,
                n1(x + 3.0),
                n1(top + 24.0),
                text::html(l)
            );
        }
    }

    if !c.has_data() {
        let _ = write!(
            out,
            r##"<text x="{}" y="{}" text-anchor="middle" fill="#888">no data</text>"##,
            n1((left + right) / 2.0),
            n1((top + bottom) / 2.0)
        );
    }
    for (i, s) in c.series.iter().enumerate() {
        let col = color(s.color);
        let _ = write!(
            out,
            r#"<g class="series" data-s="{i}" data-label="{}">"#,
            text::html(&s.label)
        );
        for shape in &s.shapes {
            draw_shape(&mut out, shape, &mx, &my, col);
        }
        out.push_str("</g>");
    }
    // Hover read-out: a crosshair the script moves (hidden without script).
    let _ = write!(
        out,
        r##"<line class="xh" x1="0" x2="0" y1="{}" y2="{}" stroke="#333" stroke-width="0.7" visibility="hidden"/>"##,
        n1(top),
        n1(bottom)
    );
    out.push_str("</svg>");
    out
}

fn draw_shape(out: &mut String, shape: &Shape, mx: &Map, my: &Map, col: &str) {
    match shape {
        Shape::Line(p) => {
            let _ = write!(
                out,
                r#"<polyline fill="none" stroke="{col}" stroke-width="1.4" stroke-linejoin="round" points=""#
            );
            let mut pts = Points::default();
            for [x, y] in p {
                pts.push(out, mx.px(*x), my.px(*y));
            }
            out.push_str("\"/>");
        }
        Shape::Steps(p) => {
            let _ = write!(
                out,
                r#"<polyline class="steps" fill="none" stroke="{col}" stroke-width="1.6" points=""#
            );
            let mut pts = Points::default();
            // Steps show single IOs; hundreds of quantile points are drawn
            // joined, which looks the same and takes half the bytes.
            let steps = p.len() <= MAX_STEP_POINTS;
            let mut prev_y: Option<f64> = None;
            for [x, y] in p {
                let px = mx.px(*x);
                if let (Some(py), true) = (prev_y, steps) {
                    pts.push(out, px, py);
                }
                let py = my.px(*y);
                pts.push(out, px, py);
                prev_y = Some(py);
            }
            out.push_str("\"/>");
        }
        Shape::Envelope(p) => {
            let _ = write!(
                out,
                r#"<path class="env" fill="none" stroke="{col}" stroke-opacity="0.35" stroke-width="1.3" d=""#
            );
            for [x, lo, hi] in p {
                let (ylo, yhi) = (my.px(*lo), my.px(*hi));
                // Keep single values visible: at least one pixel tall.
                let (a, b) = if (ylo - yhi).abs() < 1.0 {
                    (ylo + 0.5, ylo - 0.5)
                } else {
                    (ylo, yhi)
                };
                let _ = write!(out, "M{} {}V{}", n1(mx.px(*x)), n1(a), n1(b));
            }
            out.push_str("\"/>");
        }
        Shape::Band(p) => {
            if p.is_empty() {
                return;
            }
            let _ = write!(
                out,
                r#"<polygon class="band" fill="{col}" fill-opacity="0.15" stroke="{col}" stroke-opacity="0.3" stroke-width="0.6" points=""#
            );
            let mut pts = Points::default();
            for [x, _, hi] in p {
                pts.push(out, mx.px(*x), my.px(*hi));
            }
            for [x, lo, _] in p.iter().rev() {
                pts.push(out, mx.px(*x), my.px(*lo));
            }
            // A band of one x is a vertical bar: give it some width.
            if p.len() == 1 {
                let [x, lo, hi] = p[0];
                let _ = write!(
                    out,
                    " {},{} {},{}",
                    n1(mx.px(x) + 3.0),
                    n1(my.px(lo)),
                    n1(mx.px(x) + 3.0),
                    n1(my.px(hi))
                );
            }
            out.push_str("\"/>");
        }
        Shape::Points(p) => {
            let _ = write!(out, r#"<path class="pts" fill="{col}" d=""#);
            for [x, y] in p {
                let (px, py) = (mx.px(*x), my.px(*y));
                let _ = write!(
                    out,
                    "M{} {}a3 3 0 1 0 6 0a3 3 0 1 0 -6 0",
                    n1(px - 3.0),
                    n1(py)
                );
            }
            out.push_str("\"/>");
        }
        Shape::Bars(p) => {
            // One path for all bars, each narrowed by a hairline so that
            // neighbours stay apart.
            let base = my.p0;
            let _ = write!(
                out,
                r#"<path class="bars" fill="{col}" fill-opacity="0.75" d=""#
            );
            for [x0, x1, y] in p {
                if *y <= 0.0 {
                    continue;
                }
                let (a, b) = (mx.px(*x0).min(mx.px(*x1)), mx.px(*x0).max(mx.px(*x1)));
                let (a, b) = if b - a > 1.5 {
                    (a + 0.3, b - 0.3)
                } else {
                    (a, b.max(a + 0.5))
                };
                let _ = write!(
                    out,
                    "M{} {}V{}H{}V{}Z",
                    n1(a),
                    n1(base),
                    n1(my.px(*y)),
                    n1(b),
                    n1(base)
                );
            }
            out.push_str("\"/>");
        }
    }
}

/// CDFs with more points than this are drawn as joined points, not steps.
const MAX_STEP_POINTS: usize = 200;

/// Writes polyline points, skipping any that lands on the previous one's
/// rounded pixel (dense series repeat pixels a lot).
#[derive(Default)]
struct Points {
    last: Option<(i64, i64)>,
}

impl Points {
    fn push(&mut self, out: &mut String, x: f64, y: f64) {
        let key = ((x * 10.0).round() as i64, (y * 10.0).round() as i64);
        if self.last == Some(key) {
            return;
        }
        if self.last.is_some() {
            out.push(' ');
        }
        self.last = Some(key);
        let _ = write!(out, "{},{}", n1(x), n1(y));
    }
}

struct LegendItem {
    series: usize,
    row: usize,
    x: f64,
}

struct Legend {
    items: Vec<LegendItem>,
    rows: usize,
}

/// Lays legend entries out left to right, wrapping at the chart's width.
/// A chart with one unlabeled series has no legend.
fn legend_layout(series: &[Series], width: f64) -> Legend {
    let mut items = Vec::new();
    if series.len() == 1 && series[0].label.is_empty() {
        return Legend { items, rows: 0 };
    }
    let (mut x, mut row) = (10.0, 0);
    for (i, s) in series.iter().enumerate() {
        let item_w = 16.0 + s.label.chars().count() as f64 * CHAR_W + 14.0;
        if x > 10.0 && x + item_w > width - 10.0 {
            row += 1;
            x = 10.0;
        }
        items.push(LegendItem { series: i, row, x });
        x += item_w;
    }
    let rows = if items.is_empty() { 0 } else { row + 1 };
    Legend { items, rows }
}

fn wrap(s: &str, width: usize) -> Vec<String> {
    let mut lines = vec![String::new()];
    for word in s.split(' ') {
        let last = lines.last_mut().expect("one line");
        if !last.is_empty() && last.chars().count() + 1 + word.chars().count() > width.max(10) {
            lines.push(word.to_string());
        } else {
            if !last.is_empty() {
                last.push(' ');
            }
            last.push_str(word);
        }
    }
    lines
}

/// The value range of an axis: fixed, or fitted to the data.
fn range(axis: &Axis, c: &Chart, is_x: bool) -> (f64, f64) {
    let log = axis.scale == Scale::Log;
    if let Some((lo, hi)) = axis.range {
        if lo.is_finite() && hi.is_finite() && hi > lo && (!log || lo > 0.0) {
            return (lo, hi);
        }
    }
    let (mut lo, mut hi) = (f64::INFINITY, f64::NEG_INFINITY);
    let mut add = |v: f64| {
        if v.is_finite() && (!log || v > 0.0) {
            lo = lo.min(v);
            hi = hi.max(v);
        }
    };
    let mut bars = false;
    for sh in c.series.iter().flat_map(|s| &s.shapes) {
        match sh {
            Shape::Line(p) | Shape::Steps(p) | Shape::Points(p) => {
                p.iter().for_each(|q| add(if is_x { q[0] } else { q[1] }))
            }
            Shape::Envelope(p) | Shape::Band(p) => p.iter().for_each(|q| {
                if is_x {
                    add(q[0])
                } else {
                    add(q[1]);
                    add(q[2])
                }
            }),
            Shape::Bars(p) => {
                bars = true;
                p.iter().for_each(|q| {
                    if is_x {
                        add(q[0]);
                        add(q[1])
                    } else {
                        add(q[2])
                    }
                })
            }
        }
    }
    if lo > hi {
        return if log { (1.0, 10.0) } else { (0.0, 1.0) };
    }
    if log {
        if hi / lo < 1.5 {
            // One value or a narrow band: show it with some room around.
            let mid = (lo * hi).sqrt();
            return (mid / 2.0, mid * 2.0);
        }
        let pad = if is_x { 0.02 } else { 0.05 } * (hi.log10() - lo.log10());
        return (lo / 10f64.powf(pad), hi * 10f64.powf(pad));
    }
    if is_x {
        if hi == lo {
            return (lo - 1.0, hi + 1.0);
        }
        return (lo, hi);
    }
    // Linear y: from zero (bars, counts) or the data, up to a nice value.
    let lo = if bars || lo >= 0.0 { lo.min(0.0) } else { lo };
    let hi = if hi == lo { lo + 1.0 } else { hi };
    let step = nice_step((hi - lo) / 5.0);
    (lo, (hi / step).ceil() * step)
}

fn nice_step(raw: f64) -> f64 {
    if raw <= 0.0 || !raw.is_finite() {
        return 1.0;
    }
    let mag = 10f64.powf(raw.log10().floor());
    let f = raw / mag;
    let m = if f <= 1.0 {
        1.0
    } else if f <= 2.0 {
        2.0
    } else if f <= 2.5 {
        2.5
    } else if f <= 5.0 {
        5.0
    } else {
        10.0
    };
    m * mag
}

/// Ticks of one axis: its categories, its explicit ticks (thinned so that
/// labels keep `min_gap` pixels apart; the others stay as minor ticks), or
/// ticks chosen from the range.
fn axis_ticks(a: &Axis, lo: f64, hi: f64, px_len: f64, min_gap: f64) -> Vec<Tick> {
    let explicit: Vec<(f64, String)> = if !a.categories.is_empty() {
        a.categories
            .iter()
            .enumerate()
            .map(|(i, c)| (i as f64, c.clone()))
            .collect()
    } else {
        a.ticks
            .iter()
            .filter(|v| v.is_finite() && (a.scale == Scale::Linear || **v > 0.0))
            .map(|&v| (v, fmt_value(v, a.unit)))
            .collect()
    };
    if explicit.is_empty() {
        return ticks(a.scale, lo, hi, a.unit, px_len, min_gap);
    }
    let map = Map {
        log: a.scale == Scale::Log && lo > 0.0,
        lo,
        hi,
        p0: 0.0,
        p1: px_len,
    };
    let mut out = Vec::new();
    let mut last: Option<f64> = None;
    for (v, label) in explicit {
        if v < lo - 1e-9 * lo.abs() || v > hi + 1e-9 * hi.abs() {
            continue;
        }
        let p = map.px(v);
        // Labels are centred: keep them apart by their width, at least min_gap.
        let need = (label.chars().count() as f64 * CHAR_W + 8.0).max(min_gap.min(40.0));
        let labelled = last.is_none_or(|l| (p - l).abs() >= need);
        if labelled {
            last = Some(p);
        }
        out.push(Tick {
            value: v,
            label: labelled.then_some(label),
        });
    }
    out
}

struct Tick {
    value: f64,
    /// `None`: a minor tick without label or grid line.
    label: Option<String>,
}

/// Ticks of an axis `px_len` pixels long whose labels need `min_gap` pixels
/// between them: on a log axis, decades, then 1-2-5, then every digit as
/// room allows; a linear axis gets about six "nice" steps.
fn ticks(scale: Scale, lo: f64, hi: f64, unit: Unit, px_len: f64, min_gap: f64) -> Vec<Tick> {
    if scale == Scale::Log && lo > 0.0 {
        let (a, b) = (lo.log10(), hi.log10());
        let span = (b - a).max(1e-9);
        let px_per_decade = px_len / span;
        // Smallest distance between labels, in decades: 9 -> 10 for every
        // digit, 2 -> 3 for 1-2-3-5, 1 -> 2 and 5 -> 10 for 1-2-5.
        let labelled: &[f64] = if px_per_decade * 0.046 >= min_gap {
            &[1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0, 9.0]
        } else if px_per_decade * 0.176 >= min_gap {
            &[1.0, 2.0, 3.0, 5.0]
        } else if px_per_decade * 0.30 >= min_gap {
            &[1.0, 2.0, 5.0]
        } else {
            &[1.0]
        };
        // Very wide ranges: label every k-th decade so labels do not collide.
        let every = ((min_gap / px_per_decade).ceil() as i32).max(1);
        let mut out = Vec::new();
        for k in (a.floor() as i32)..=(b.ceil() as i32) {
            for m in 1..10 {
                let v = m as f64 * 10f64.powi(k);
                if v < lo * (1.0 - 1e-9) || v > hi * (1.0 + 1e-9) {
                    continue;
                }
                let is_label =
                    labelled.contains(&(m as f64)) && (m != 1 || k.rem_euclid(every) == 0);
                out.push(Tick {
                    value: v,
                    label: is_label.then(|| fmt_value(v, unit)),
                });
            }
        }
        if out.iter().filter(|t| t.label.is_some()).count() >= 2 {
            return out;
        }
        // Less than a factor 2: plain linear steps, still placed on the log scale.
    }
    let steps = (px_len / (min_gap * 1.6)).clamp(2.0, 6.0);
    let step = nice_step((hi - lo) / steps);
    let mut out = Vec::new();
    let mut v = (lo / step).ceil() * step;
    while v <= hi + step * 1e-9 {
        let val = if v.abs() < step * 1e-9 { 0.0 } else { v };
        if scale == Scale::Linear || val > 0.0 {
            out.push(Tick {
                value: val,
                label: Some(fmt_value(val, unit)),
            });
        }
        v += step;
    }
    out
}

/// A value as a tick label in its unit.
pub fn fmt_value(v: f64, unit: Unit) -> String {
    match unit {
        Unit::Nanos => {
            if v < 0.0 {
                format!("-{}", fmt_value(-v, unit))
            } else if v < 1.0 && v > 0.0 {
                format!("{}ns", trim(format!("{v:.2}")))
            } else {
                text::format_duration_ns(v.round() as u64)
            }
        }
        Unit::Count => {
            let a = v.abs();
            if a >= 1e9 {
                trim(format!("{:.2}", v / 1e9)) + "G"
            } else if a >= 1e6 {
                trim(format!("{:.2}", v / 1e6)) + "M"
            } else if a >= 1e4 {
                trim(format!("{:.1}", v / 1e3)) + "k"
            } else {
                trim(format!("{v:.2}"))
            }
        }
        Unit::Fraction => trim(format!("{:.2}", v * 100.0)) + "%",
        Unit::Number => trim(format!("{v:.3}")),
        Unit::Bytes => {
            if v < 0.0 {
                format!("-{}", fmt_value(-v, unit))
            } else {
                text::bytes_approx(v.round() as u64)
            }
        }
    }
}

fn trim(s: String) -> String {
    if s.contains('.') {
        s.trim_end_matches('0').trim_end_matches('.').to_string()
    } else {
        s
    }
}

fn unit_code(u: Unit) -> &'static str {
    match u {
        Unit::Nanos => "ns",
        Unit::Count => "count",
        Unit::Fraction => "frac",
        Unit::Number => "num",
        Unit::Bytes => "bytes",
    }
}

/// A pixel coordinate with at most one decimal, without allocating twice.
fn n1(v: f64) -> String {
    let r = (v * 10.0).round() as i64;
    if r % 10 == 0 {
        format!("{}", r / 10)
    } else {
        format!(
            "{}{}.{}",
            if r < 0 { "-" } else { "" },
            (r / 10).abs(),
            (r % 10).abs()
        )
    }
}

/// A data value for data- attributes: enough digits to invert the mapping.
fn num(v: f64) -> String {
    format!("{v:.6e}")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn labels(scale: Scale, lo: f64, hi: f64, unit: Unit) -> Vec<String> {
        ticks(scale, lo, hi, unit, 300.0, 26.0)
            .into_iter()
            .filter_map(|t| t.label)
            .collect()
    }

    #[test]
    fn log_ticks_in_latency_units() {
        assert_eq!(
            labels(Scale::Log, 5_000.0, 20_000_000.0, Unit::Nanos),
            ["10us", "100us", "1ms", "10ms"]
        );
        assert_eq!(
            labels(Scale::Log, 5_000.0, 2_000_000.0, Unit::Nanos),
            ["5us", "10us", "20us", "50us", "100us", "200us", "500us", "1ms", "2ms"]
        );
        assert_eq!(
            labels(Scale::Log, 30_000.0, 150_000.0, Unit::Nanos),
            ["30us", "50us", "100us"]
        );
        // Twelve decades on 300 px: every other decade.
        assert_eq!(labels(Scale::Log, 1.0, 1e12, Unit::Count).len(), 7);
        // Under a factor 2: linear steps.
        let l = labels(Scale::Log, 100_000.0, 150_000.0, Unit::Nanos);
        assert!(l.len() >= 3, "{l:?}");
    }

    #[test]
    fn linear_ticks() {
        assert_eq!(
            labels(Scale::Linear, 0.0, 1.0, Unit::Fraction),
            ["0%", "20%", "40%", "60%", "80%", "100%"]
        );
        assert_eq!(
            labels(Scale::Linear, 0.0, 5000.0, Unit::Count),
            ["0", "1000", "2000", "3000", "4000", "5000"]
        );
        assert_eq!(fmt_value(2_500_000.0, Unit::Count), "2.5M");
    }

    #[test]
    fn coordinates() {
        assert_eq!(n1(12.0), "12");
        assert_eq!(n1(12.34), "12.3");
        assert_eq!(n1(-0.26), "-0.3");
    }

    #[test]
    fn renders_without_urls_and_with_series() {
        let c = Chart {
            id: "c1".into(),
            title: "Latency CDF".into(),
            x: Axis::new("latency", Scale::Log, Unit::Nanos),
            y: Axis::new("fraction", Scale::Linear, Unit::Fraction).with_range(0.0, 1.0),
            series: vec![Series {
                label: "a".into(),
                color: 0,
                shapes: vec![Shape::Steps(vec![[1000.0, 0.5], [2000.0, 1.0]])],
            }],
            spans: vec![],
            markers: vec![],
            width: 400,
            height: 300,
        };
        let s = render(&c);
        assert!(!s.contains("http"));
        assert!(s.contains(r#"class="series" data-s="0""#));
        assert!(s.starts_with("<svg") && s.ends_with("</svg>"));
    }
}
