//! The Markdown summary: the report's tables, for a README, an issue or a
//! terminal. Charts are not drawn; each run lists the quantiles of its CDF
//! instead, so the distribution is still there in numbers.

use std::fmt::Write;

use flashlab_results::Throughput;

use crate::model::{DeviceReport, Report, RunReport};
use crate::text::{count, dur_f, format_duration_ns, md_cell, md_text};

/// Fractions at which each run's CDF is tabulated.
const QUANTILES: [(f64, &str); 9] = [
    (0.01, "p1"),
    (0.10, "p10"),
    (0.25, "p25"),
    (0.50, "p50"),
    (0.75, "p75"),
    (0.90, "p90"),
    (0.99, "p99"),
    (0.999, "p99.9"),
    (1.0, "max"),
];

pub fn render(r: &Report) -> String {
    let mut o = String::new();
    let _ = writeln!(o, "# {}\n", md_cell(&r.title));
    let runs: usize = r.devices.iter().map(|d| d.runs.len()).sum();
    if r.devices.is_empty() {
        let _ = writeln!(o, "Rendered by {} from saved results only.\n", r.generator);
    } else {
        let _ = writeln!(
            o,
            "{} device{}, {} run{}. Rendered by {} from saved results only; statistics use every record.\n",
            r.devices.len(),
            if r.devices.len() == 1 { "" } else { "s" },
            runs,
            if runs == 1 { "" } else { "s" },
            r.generator
        );
    }
    if r.devices.len() > 1 {
        comparison(&mut o, r);
    }
    for d in &r.devices {
        device(&mut o, d);
    }
    // A report of no device (a twin's, the validate scoreboard): its
    // sections alone, as the HTML renderer does.
    if r.devices.is_empty() {
        for s in &r.sections {
            section(&mut o, s);
        }
    }
    o
}

fn table(o: &mut String, header: &[&str], right_from: usize, rows: &[Vec<String>]) {
    let _ = writeln!(o, "| {} |", header.join(" | "));
    let seps: Vec<&str> = (0..header.len())
        .map(|i| if i >= right_from { "---:" } else { "---" })
        .collect();
    let _ = writeln!(o, "|{}|", seps.join("|"));
    for row in rows {
        let cells: Vec<String> = row.iter().map(|c| md_cell(c)).collect();
        let _ = writeln!(o, "| {} |", cells.join(" | "));
    }
    o.push('\n');
}

fn lat(t: &Throughput) -> Vec<String> {
    if t.ios == 0 {
        return vec!["-".into(); 9];
    }
    let l = &t.latency;
    vec![
        dur_f(l.mean_ns),
        format_duration_ns(l.min_ns),
        format_duration_ns(l.p50_ns),
        format_duration_ns(l.p90_ns),
        format_duration_ns(l.p99_ns),
        format_duration_ns(l.p999_ns),
        format_duration_ns(l.max_ns),
        format!("{:.0}", t.iops),
        format!("{:.1}", t.mb_per_s),
    ]
}

fn comparison(o: &mut String, r: &Report) {
    o.push_str("## Device comparison\n\n");
    let verdicts = r.verdicts();
    for v in &verdicts {
        let _ = writeln!(o, "- **{}**", md_cell(v));
    }
    if !verdicts.is_empty() {
        o.push('\n');
    }
    for s in &r.sections {
        section(o, s);
    }
    if r.comparisons.is_empty() {
        o.push_str("These results directories have no run name in common.\n\n");
        return;
    }
    if !r.sections.is_empty() {
        o.push_str("### Runs, side by side\n\n");
    }
    let mut rows = Vec::new();
    for c in &r.comparisons {
        for (k, &(di, ri)) in c.entries.iter().enumerate() {
            let d = &r.devices[di];
            let run = &d.runs[ri];
            let mut row = vec![
                if k == 0 { c.run.clone() } else { String::new() },
                d.label.clone(),
                count(run.stats.all.ios),
            ];
            row.extend(lat(&run.stats.all));
            rows.push(row);
        }
    }
    table(
        o,
        &[
            "run", "device", "IOs", "mean", "min", "p50", "p90", "p99", "p99.9", "max", "IOPS",
            "MB/s",
        ],
        2,
        &rows,
    );
}

/// An analysis section: its text and tables; charts are listed by title
/// (one line for all of them, they are in the HTML report).
fn section(o: &mut String, s: &crate::model::Section) {
    let _ = writeln!(o, "### {}\n", md_cell(&s.title));
    for p in &s.paragraphs {
        let _ = writeln!(o, "{}\n", md_text(p));
    }
    for t in &s.tables {
        let header: Vec<&str> = t.header.iter().map(String::as_str).collect();
        table(o, &header, 99, &t.rows);
    }
    match s.charts.len() {
        0 => {}
        1 => {
            let _ = writeln!(
                o,
                "Chart (in the HTML report): {}\n",
                md_text(&s.charts[0].title)
            );
        }
        n => {
            let _ = writeln!(o, "Charts (in the HTML report), {n}:\n");
            for c in &s.charts {
                let _ = writeln!(o, "- {}", md_text(&c.title));
            }
            o.push('\n');
        }
    }
}

fn device(o: &mut String, d: &DeviceReport) {
    let _ = writeln!(o, "## Device: {}\n", md_cell(&d.label));
    for s in &d.sections {
        section(o, s);
    }

    o.push_str("### Runs\n\n");
    let mut rows = Vec::new();
    for run in &d.runs {
        let s = &run.stats;
        let mut row = vec![
            run.name.clone(),
            run.description.clone(),
            run.status.name().to_string(),
            count(s.all.ios),
            count(s.ios_ignored),
            count(s.ios_failed),
        ];
        row.extend(lat(&s.all));
        rows.push(row);
        for (mode, t) in &s.by_mode {
            let mut row = vec![
                format!("{} / {mode}", run.name),
                format!("{mode} IOs only"),
                String::new(),
                count(t.ios),
                String::new(),
                String::new(),
            ];
            row.extend(lat(t));
            rows.push(row);
        }
    }
    table(
        o,
        &[
            "run", "workload", "status", "IOs", "ignored", "failed", "mean", "min", "p50", "p90",
            "p99", "p99.9", "max", "IOPS", "MB/s",
        ],
        3,
        &rows,
    );

    let with_cdf: Vec<&RunReport> = d.runs.iter().filter(|r| !r.cdf.is_empty()).collect();
    if !with_cdf.is_empty() {
        o.push_str("### Latency distribution\n\nResponse time at each fraction of measured IOs (the CDF, in numbers).\n\n");
        let mut header = vec!["run"];
        header.extend(QUANTILES.iter().map(|q| q.1));
        let rows: Vec<Vec<String>> = with_cdf
            .iter()
            .map(|run| {
                let mut row = vec![run.name.clone()];
                row.extend(QUANTILES.iter().map(|&(f, _)| quantile(run, f)));
                row
            })
            .collect();
        table(o, &header, 1, &rows);
    }

    let notes: Vec<String> = d
        .runs
        .iter()
        .flat_map(|r| {
            r.error
                .iter()
                .map(move |e| format!("{}: error: {e}", r.name))
                .chain(r.notes.iter().map(move |n| format!("{}: {n}", r.name)))
        })
        .collect();
    if !notes.is_empty() {
        o.push_str("Notes:\n\n");
        for n in notes {
            let _ = writeln!(o, "- {}", md_text(&n));
        }
        o.push('\n');
    }
    // Where the result came from, after it.
    o.push_str("### Provenance\n\n");
    let rows: Vec<Vec<String>> = d
        .provenance_rows()
        .into_iter()
        .map(|(k, v)| {
            // A code span would show entities literally, and some renderers
            // are lax about what a span holds: text with angle brackets is
            // escaped prose instead.
            let v = if (k == "command line" || k == "results directory") && !v.contains(['<', '>'])
            {
                format!("`{}`", v.replace('`', "'"))
            } else {
                v
            };
            vec![k.to_string(), v]
        })
        .collect();
    table(o, &["", ""], 99, &rows);
    if !d.provenance.device.identity.is_empty() {
        o.push_str("Device identity, as recorded in the manifest:\n\n");
        let rows: Vec<Vec<String>> = d
            .provenance
            .device
            .identity
            .iter()
            .map(|(k, v)| vec![k.clone(), v.clone()])
            .collect();
        table(o, &["key", "value"], 99, &rows);
    }
}

/// The smallest latency whose CDF fraction reaches `f`, read from the CDF
/// points (exact when the run has fewer IOs than CDF points, else within
/// 1/500 of the fraction).
fn quantile(run: &RunReport, f: f64) -> String {
    run.cdf
        .iter()
        .find(|p| p.1 >= f - 1e-12)
        .or(run.cdf.last())
        .map_or("-".into(), |p| format_duration_ns(p.0))
}
