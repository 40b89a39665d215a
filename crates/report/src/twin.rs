//! The report of a twin (`flashlab twin`'s `PROFILE.twin.json`): what was
//! probed, with each estimate's reading and curve; the fitted parameters with
//! their provenance (which plan parts they were fitted to, means or p99s);
//! the cross-validation folds; and predicted vs measured for every plan part,
//! the held-out prediction (fitted without the part's fold) apart from the
//! final twin's fit. It reads the JSON alone (no crate dependency on the
//! probe: the file is the contract), through the size-limited reader.

use std::path::Path;

use serde_json::Value;

use crate::error::ReportError;
use crate::model::{Report, Section, Table, REPORT_FORMAT};
use crate::svg::{Axis, Chart, Scale, Series, Shape, Unit};

/// Whether `path` names a twin's JSON (`flashlab twin -o X` writes `X.twin.json`).
pub fn is_twin_json(path: &Path) -> bool {
    path.is_file()
        && path
            .file_name()
            .and_then(|n| n.to_str())
            .is_some_and(|n| n.ends_with(".twin.json"))
}

/// Reads a twin's JSON and builds its report.
pub fn load(path: &Path, generator: &str) -> Result<Report, ReportError> {
    let doc: Value = flashlab_results::dir::read_json(path).map_err(|source| ReportError::Io {
        path: path.display().to_string(),
        source,
    })?;
    if doc.pointer("/probe/device").is_none() || doc.get("parts").is_none() {
        return Err(ReportError::NotATwin {
            path: path.display().to_string(),
        });
    }
    Ok(report(&doc, generator))
}

fn s(v: &Value, p: &str) -> String {
    match v.pointer(p) {
        Some(Value::String(s)) => s.clone(),
        Some(Value::Null) | None => "-".into(),
        Some(x) => x.to_string(),
    }
}

fn f(v: &Value, p: &str) -> Option<f64> {
    v.pointer(p).and_then(Value::as_f64)
}

fn us(v: Option<f64>) -> String {
    v.map_or("-".into(), |v| format!("{:.1}", v / 1e3))
}

fn pct(a: Option<f64>, b: Option<f64>) -> String {
    match (a, b) {
        (Some(a), Some(b)) if b > 0.0 => format!("{:+.0} %", (a / b - 1.0) * 100.0),
        _ => "-".into(),
    }
}

/// The provenance comment above `key` in the profile text (`# fitted: ...`).
fn provenance(profile: &str, key: &str) -> String {
    let (section, name) = key.split_once('.').unwrap_or(("", key));
    let mut current = String::new();
    let mut last_comment = String::new();
    for line in profile.lines() {
        let t = line.trim();
        if t.starts_with('[') {
            current = t.trim_matches(|c| c == '[' || c == ']').to_string();
        } else if let Some(c) = t.strip_prefix("# ") {
            last_comment = c.to_string();
        } else if current == section && t.split_once(" = ").is_some_and(|(k, _)| k == name) {
            return last_comment;
        }
    }
    // The profile leaves out a spread of 0 (the simulator's default).
    "not in the profile: the simulator's default (0: constant service times)".into()
}

const ESTIMATES: [(&str, &str); 7] = [
    ("erase unit", "erase_unit_bytes"),
    ("open units", "open_units"),
    ("mapping granule", "map_granule_bytes"),
    ("write cache", "write_cache_bytes"),
    ("read-ahead", "readahead_bytes"),
    ("parallelism", "parallelism"),
    ("FTL family", "ftl_family"),
];

/// Long: one report section per part of the twin document, in the order shown.
pub fn report(doc: &Value, generator: &str) -> Report {
    let device = s(doc, "/probe/device");
    let mut sections = Vec::new();

    // What was probed.
    let mut rows = Vec::new();
    let mut charts = Vec::new();
    for (label, key) in ESTIMATES {
        let e = &doc["probe"][key];
        let value = if key == "ftl_family" {
            s(doc, "/probe/family")
        } else {
            match (f(e, "/value"), e["unit"].as_str()) {
                (None, _) => "-".into(),
                (Some(v), Some("B")) => flashlab_pattern::units::format_size(v as u64),
                (Some(v), u) => format!("{v} {}", u.unwrap_or("")).trim().to_string(),
            }
        };
        rows.push(vec![label.to_string(), value, s(e, "/reading")]);
        for (ci, c) in e["evidence"].as_array().into_iter().flatten().enumerate() {
            let points: Vec<[f64; 2]> = c["points"]
                .as_array()
                .into_iter()
                .flatten()
                .filter_map(|p| Some([p.get(0)?.as_f64()?, p.get(1)?.as_f64()?]))
                .collect();
            if points.is_empty() {
                continue;
            }
            charts.push(Chart {
                id: format!("twin-probe-{key}-{ci}"),
                title: format!("{label}: {}", s(c, "/title")),
                x: Axis::new(&s(c, "/x_label"), Scale::Linear, Unit::Number),
                y: Axis::new(&s(c, "/y_label"), Scale::Linear, Unit::Number),
                series: vec![Series {
                    label: label.to_string(),
                    color: 0,
                    shapes: vec![Shape::Line(points)],
                }],
                spans: Vec::new(),
                markers: Vec::new(),
                width: 560,
                height: 240,
            });
        }
    }
    let writes = match doc.pointer("/probe/writes_allowed") {
        Some(w) if !w.is_null() => format!(
            "writes allowed in {}+{}",
            flashlab_pattern::units::format_size(f(w, "/offset_bytes").unwrap_or(0.0) as u64),
            flashlab_pattern::units::format_size(f(w, "/len_bytes").unwrap_or(0.0) as u64)
        ),
        _ => "read-only".into(),
    };
    sections.push(Section {
        id: "twin-probe".into(),
        title: format!("Probe of {device}"),
        paragraphs: vec![format!(
            "{} ({}), {writes}; {} written; {:.3} s on the device's clock. Each estimate with its reading; the curves it was read from are below.",
            device,
            flashlab_pattern::units::format_size(f(doc, "/probe/size_bytes").unwrap_or(0.0) as u64),
            flashlab_pattern::units::format_size(f(doc, "/probe/written_bytes").unwrap_or(0.0) as u64),
            f(doc, "/probe/elapsed_ns").unwrap_or(0.0) / 1e9
        )],
        tables: vec![Table {
            header: vec!["estimate".into(), "value".into(), "reading".into()],
            rows,
        }],
        charts,
    });

    // The fitted parameters and their provenance.
    let profile = doc["profile_toml"].as_str().unwrap_or("");
    let params: Vec<Vec<String>> = doc["params"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|p| {
            let key = s(p, "/key");
            vec![
                key.clone(),
                format!(
                    "{}",
                    (f(p, "/value").unwrap_or(0.0) * 1000.0).round() / 1000.0
                ),
                format!("[{}, {}]", s(p, "/lo"), s(p, "/hi")),
                s(p, "/status"),
                s(p, "/fitted_to"),
                format!("{:.3}", f(p, "/effect").unwrap_or(0.0)),
                provenance(profile, &key),
            ]
        })
        .collect();
    let tried: Vec<String> = doc["kinds_tried"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|k| {
            Some(format!(
                "{} {:.3}",
                k.get(0)?.as_str()?,
                k.get(1)?.as_f64()?
            ))
        })
        .collect();
    sections.push(Section {
        id: "twin-params".into(),
        title: "Fitted parameters".into(),
        paragraphs: vec![
            format!(
                "FTL {} (candidates and their training loss: {}). Stage 1 fits the timing to the plan parts' means, stage 2 the service-time spreads to their p99s; {} simulations in all.",
                s(doc, "/ftl_kind"),
                tried.join(", "),
                s(doc, "/evaluations")
            ),
            "Provenance is the profile's own comment above each key: `fitted:` names the plan parts the key was fitted to; `assumed:` a key the plan cannot see.".into(),
        ],
        tables: vec![Table {
            header: ["key", "value", "range", "status", "fitted to", "effect", "provenance"]
                .map(String::from)
                .to_vec(),
            rows: params,
        }],
        charts: Vec::new(),
    });

    // Predicted vs measured, held-out apart.
    let folds: Vec<Vec<String>> = doc["folds"]
        .as_array()
        .into_iter()
        .flatten()
        .enumerate()
        .map(|(i, fo)| {
            let names = |k: &str| -> String {
                fo[k]
                    .as_array()
                    .into_iter()
                    .flatten()
                    .filter_map(Value::as_str)
                    .collect::<Vec<_>>()
                    .join(", ")
            };
            vec![
                i.to_string(),
                names("held_out"),
                names("trained_on"),
                s(fo, "/ftl_kind"),
            ]
        })
        .collect();
    let parts: Vec<Vec<String>> = doc["parts"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|p| {
            let (mm, m99) = (f(p, "/measured/mean_ns"), f(p, "/measured/p99_ns"));
            let (hm, h99) = (f(p, "/held_out/mean_ns"), f(p, "/held_out/p99_ns"));
            let fm = f(p, "/predicted/mean_ns");
            vec![
                s(p, "/name"),
                s(p, "/group"),
                s(p, "/fold"),
                us(mm),
                us(m99),
                us(hm),
                pct(hm, mm),
                us(h99),
                pct(h99, m99),
                format!("{} ({})", us(fm), pct(fm, mm)),
            ]
        })
        .collect();
    let verdict = match doc["not_good"].as_array() {
        Some(v) if !v.is_empty() => format!(
            "Verdict: NOT GOOD: {}.",
            v.iter().filter_map(Value::as_str).collect::<Vec<_>>().join("; ")
        ),
        _ => "Verdict: good: no fitted parameter on its bound, held-out means within 20 % on at least 80 % of the parts and p99s within 35 % on at least 70 %.".into(),
    };
    sections.push(Section {
        id: "twin-scores".into(),
        title: "Predicted vs measured".into(),
        paragraphs: vec![
            format!(
                "Held-out: each part is predicted by a fit (FTL kind, cache, both stages) on the other folds' parts only, so its own measurement never reaches its prediction. rms log error of the means: training {:.3}, held-out {:.3}; of the p99s: training {:.3}, held-out {:.3}.",
                f(doc, "/loss_rms").unwrap_or(f64::NAN),
                f(doc, "/cv_loss_rms").unwrap_or(f64::NAN),
                f(doc, "/p99_loss_rms").unwrap_or(f64::NAN),
                f(doc, "/cv_p99_loss_rms").unwrap_or(f64::NAN),
            ),
            "The last column is the final twin, fitted on every part: not a score.".into(),
            verdict,
        ],
        tables: vec![
            Table {
                header: ["fold", "held out", "trained on", "FTL chosen"]
                    .map(String::from)
                    .to_vec(),
                rows: folds,
            },
            Table {
                header: [
                    "part",
                    "group",
                    "fold",
                    "measured mean (us)",
                    "measured p99 (us)",
                    "held-out mean (us)",
                    "mean error",
                    "held-out p99 (us)",
                    "p99 error",
                    "fitted on all: mean (us)",
                ]
                .map(String::from)
                .to_vec(),
                rows: parts,
            },
        ],
        charts: Vec::new(),
    });

    Report {
        format: REPORT_FORMAT,
        generator: generator.to_string(),
        title: format!("flashlab twin of {device}"),
        devices: Vec::new(),
        comparisons: Vec::new(),
        sections,
    }
}
