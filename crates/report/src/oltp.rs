//! The OLTP section of a report (`flashlab oltp`'s results directory, with
//! its `oltp.json`): TPC-C's outcome, logical vs physical IO, the file
//! system's and the simulated FTL's write amplification, the endurance, the
//! trace consistency, and Wang et al.'s four time series: transaction
//! throughput (Fig. 6), logical (Fig. 7) and physical (Fig. 8) IO rate and
//! average IO size (Fig. 9), reads and writes apart. It reads only
//! `oltp.json`; directories without one get nothing.

use std::path::Path;

use flashlab_results::oltp::{IntervalRates, OltpResult, RepeatFigures, TpccFigures};
use flashlab_results::Interval95;

use crate::error::ReportError;
use crate::model::{Analysis, DeviceReport, Section, Table};
use crate::svg::{Axis, Chart, Scale, Series, Shape, Unit};

pub struct OltpAnalysis;

fn cell(v: Option<f64>, digits: usize) -> String {
    v.map_or("-".into(), |v| format!("{v:.digits$}"))
}

fn chart(id: &str, title: &str, y: Axis, series: Vec<(String, Vec<[f64; 2]>)>) -> Chart {
    Chart {
        id: id.into(),
        title: title.into(),
        x: Axis::new("time (s)", Scale::Linear, Unit::Number),
        y,
        series: series
            .into_iter()
            .enumerate()
            .filter(|(_, (_, p))| !p.is_empty())
            .map(|(i, (label, p))| Series {
                label,
                color: i,
                shapes: vec![Shape::Line(p)],
            })
            .collect(),
        spans: Vec::new(),
        markers: Vec::new(),
        width: 720,
        height: 300,
    }
}

/// A rates series of the IO tracer's analysis: (seconds, value) per interval.
fn rates(
    r: &OltpResult,
    physical: bool,
    field: fn(&IntervalRates) -> Option<f64>,
) -> Vec<[f64; 2]> {
    r.rates(physical)
        .iter()
        .filter_map(|x| Some([x.start_ns as f64 / 1e9, field(x)?]))
        .collect()
}

fn num_cell<T: std::fmt::Display>(v: Option<T>) -> String {
    v.map_or("-".into(), |v| v.to_string())
}

/// `--rate`: the offered load against what the terminals achieved. Only
/// the offered rate is a reference: a closed-loop TPC-C run cannot exceed
/// it, and falling short means the terminals (or the device) could not keep
/// up, which the late starts count.
fn offered_load_row(t: &TpccFigures) -> Option<Vec<String>> {
    let offered = f64::from(t.rate_per_min?);
    let achieved = t.transactions_per_s * 60.0;
    let share = if offered > 0.0 {
        format!(" ({:.0} % of it)", achieved / offered * 100.0)
    } else {
        String::new()
    };
    Some(vec![
        "offered load (--rate)".into(),
        format!(
            "{offered:.0} transactions/min offered, {achieved:.0}/min achieved{share}; {} late starts",
            t.late_starts
        ),
    ])
}

/// The relative half width above which the report says the windows
/// disagree: the same 5 % the comparison report calls noise.
const REPEAT_NOISE_RELATIVE: f64 = 0.05;

fn interval_cell(i: &Interval95, scale: f64, digits: usize) -> String {
    if i.n < 2 {
        return format!("{:.digits$} (one window: no interval)", i.mean * scale);
    }
    format!(
        "{:.digits$} (95 % interval {:.digits$} to {:.digits$}, +-{:.1} %)",
        i.mean * scale,
        i.low * scale,
        i.high * scale,
        i.relative_half_width() * 100.0
    )
}

/// `--repeat N`: the means over the windows with their 95 % intervals,
/// and a verdict on whether one window would have been enough.
fn repeat_summary_rows(rep: &RepeatFigures) -> Vec<Vec<String>> {
    let n = rep.windows.len();
    let windows = if n == 1 {
        "1 window".to_string()
    } else {
        format!("{n} windows")
    };
    let mut rows = vec![
        vec![
            format!("tpmC over {windows}"),
            interval_cell(&rep.tpmc, 1.0, 0),
        ],
        vec![
            format!("New-Order p90 over {windows} (ms)"),
            interval_cell(&rep.new_order_p90_us, 1e-3, 2),
        ],
    ];
    if n >= 2 {
        let rel = rep.tpmc.relative_half_width();
        rows.push(vec![
            "repeatability (--repeat)".into(),
            if rel > REPEAT_NOISE_RELATIVE {
                format!(
                    "the windows disagree (tpmC +-{:.1} % at 95 %): a single window's figures are not repeatable; run more or longer windows",
                    rel * 100.0
                )
            } else {
                format!(
                    "tpmC repeats within +-{:.1} % at 95 % across {n} windows",
                    rel * 100.0
                )
            },
        ]);
    }
    rows
}

/// One row per `--repeat` window: the first is the traced one.
fn repeat_table(rep: &RepeatFigures) -> Table {
    let mut t = Table {
        header: [
            "window",
            "seed",
            "measured (s)",
            "tpmC",
            "transactions/s",
            "New-Order p90 (ms)",
            "mix within spec",
            "late starts",
        ]
        .map(str::to_string)
        .to_vec(),
        rows: Vec::new(),
    };
    for w in &rep.windows {
        t.rows.push(vec![
            if w.window == 1 {
                "1 (traced)".into()
            } else {
                w.window.to_string()
            },
            w.seed.to_string(),
            format!("{:.1}", w.measured_s),
            format!("{:.0}", w.tpmc),
            format!("{:.1}", w.transactions_per_s),
            format!("{:.2}", w.new_order_p90_us as f64 / 1e3),
            if w.mix_within_spec { "yes" } else { "no" }.into(),
            w.late_starts.to_string(),
        ]);
    }
    t
}

/// Long: one report section per part of the OLTP result, in the order shown.
pub fn sections(r: &OltpResult, id_prefix: &str) -> Vec<Section> {
    let mut out = Vec::new();
    let c = &r.config;
    let tpcc = r.tpcc.as_ref();
    let mut summary = vec![
        vec!["status".to_string(), r.status.name().to_string()],
        vec![
            "device".into(),
            c.device
                .clone()
                .or_else(|| c.mount.as_ref().map(|m| format!("--mount {}", m.display())))
                .unwrap_or_default(),
        ],
        vec!["file system".into(), c.fs.clone()],
        // The DBMS's own section names it (`--dbms`): postgres or mariadb.
        vec![
            "DBMS".into(),
            format!(
                "{}: {}",
                r.dbms_name(),
                r.dbms_section().map_or("", |d| d.version.as_str())
            ),
        ],
        vec![
            "warehouses / terminals".into(),
            format!("{} / {}", c.warehouses, c.terminals),
        ],
        vec!["tpmC".into(), cell(tpcc.map(|t| t.tpmc), 0)],
        vec![
            "transactions/s".into(),
            cell(tpcc.map(|t| t.transactions_per_s), 1),
        ],
        vec![
            "file-system write amplification (physical / logical bytes written)".into(),
            cell(r.fs_write_amplification, 3),
        ],
    ];
    if let Some(t) = tpcc.filter(|t| !t.mix.verdict.is_empty()) {
        summary.push(vec![
            "TPC-C mix (clause 9.2.2.5)".into(),
            t.mix.verdict.clone(),
        ]);
    }
    if let Some(k) = &r.tpcc_consistency {
        let broken: Vec<String> = k
            .conditions
            .iter()
            .filter(|c| c.violations > 0)
            .map(|c| format!("condition {}: {} violations", c.number, c.violations))
            .collect();
        summary.push(vec![
            "consistency (clause 3.3.2, from the database)".into(),
            if k.ok {
                format!("conditions 1-{} hold", k.conditions.len())
            } else {
                broken.join(", ")
            },
        ]);
    }
    if let Some(s) = r
        .serve
        .as_ref()
        .filter(|s| s.run.ftl_write_amplification.is_some())
    {
        summary.push(vec![
            "simulated FTL write amplification (during the run)".into(),
            cell(s.run.ftl_write_amplification, 3),
        ]);
        summary.push(vec![
            "simulated erases (during the run)".into(),
            cell(s.run.erases, 0),
        ]);
        if let Some(t) = &s.whole_device.chip_time_per_host_request_ns {
            summary.push(vec![
                "flash time per host request (whole device)".into(),
                format!("{:.1} us", t.total / 1e3),
            ]);
        }
    }
    if let Some(t) = tpcc {
        if let Some(row) = offered_load_row(t) {
            summary.push(row);
        }
    }
    if let Some(rep) = &r.repeats {
        summary.extend(repeat_summary_rows(rep));
    }
    if let Some(e) = &r.error {
        summary.push(vec!["error".into(), e.clone()]);
    }
    let mut types = Table {
        header: [
            "transaction",
            "commits",
            "mix %",
            "mean (ms)",
            "p90 (ms)",
            "p99 (ms)",
            "max (ms)",
        ]
        .map(str::to_string)
        .to_vec(),
        rows: Vec::new(),
    };
    let names = [
        "new-order",
        "payment",
        "order-status",
        "delivery",
        "stock-level",
    ];
    for (name, t) in names
        .iter()
        .zip(tpcc.map(|t| t.types()).into_iter().flatten())
    {
        let p = &t.response_time;
        let ms = |us: f64| Some(us / 1e3);
        types.rows.push(vec![
            name.to_string(),
            t.commits.to_string(),
            cell(Some(t.mix_percent), 2),
            cell(ms(p.mean_us), 2),
            cell(ms(p.p90_us as f64), 2),
            cell(ms(p.p99_us as f64), 2),
            cell(ms(p.max_us as f64), 2),
        ]);
    }
    let mut io = Table {
        header: [
            "layer",
            "read IO/s",
            "read MB/s",
            "write IO/s",
            "write MB/s",
            "avg read KiB",
            "avg write KiB",
            "flushes/s",
        ]
        .map(str::to_string)
        .to_vec(),
        rows: Vec::new(),
    };
    for (name, physical) in [("logical (file system)", false), ("physical (block)", true)] {
        if let Some(l) = r.layer(physical) {
            io.rows.push(vec![
                name.into(),
                cell(r.reads_per_s(physical), 0),
                cell(r.read_bytes_per_s(physical).map(|b| b / 1e6), 2),
                cell(r.writes_per_s(physical), 0),
                cell(r.write_bytes_per_s(physical).map(|b| b / 1e6), 2),
                cell(l.avg_read_bytes().map(|b| b / 1024.0), 1),
                cell(l.avg_write_bytes().map(|b| b / 1024.0), 1),
                cell(r.flushes_per_s(physical), 0),
            ]);
        }
    }
    let e = r.endurance.clone().unwrap_or_default();
    let mut endurance = Table {
        header: vec!["estimate".into(), "value".into()],
        rows: vec![vec![
            "physical write rate".into(),
            cell(
                r.endurance
                    .as_ref()
                    .map(|e| e.physical_write_bytes_per_s / 1e6),
                2,
            ) + " MB/s",
        ]],
    };
    if let Some(y) = e.years_from_rated_writes {
        endurance.rows.push(vec![
            format!(
                "rated lifetime writes / write rate (Table 6; {})",
                e.rated_lifetime_writes_source.as_deref().unwrap_or("")
            ),
            format!("{y:.2} years"),
        ]);
    }
    if let Some(y) = e.years_from_erase_counts {
        endurance.rows.push(vec![
            format!(
                "rated P/E cycles x blocks / erase rate ({} cycles)",
                num_cell(e.rated_pe_cycles)
            ),
            format!("{y:.2} years"),
        ]);
    }
    let mut tables = vec![
        Table {
            header: vec!["".into(), "".into()],
            rows: summary,
        },
        types,
        io,
        endurance,
    ];
    if let Some(rep) = r.repeats.as_ref().filter(|rep| !rep.windows.is_empty()) {
        tables.push(repeat_table(rep));
    }
    if let Some(c) = r.trace_consistency.as_ref().filter(|c| c.checked) {
        tables.push(Table {
            header: ["", "physical trace", "/sys/block stat delta"]
                .map(str::to_string)
                .to_vec(),
            rows: vec![
                vec![
                    "read bytes".into(),
                    num_cell(c.trace_read_bytes),
                    num_cell(c.stat_read_bytes),
                ],
                vec![
                    "write bytes".into(),
                    num_cell(c.trace_write_bytes),
                    num_cell(c.stat_write_bytes),
                ],
                vec![
                    "write bytes completed (tracer's completion events)".into(),
                    num_cell(c.completed_write_bytes),
                    num_cell(c.stat_write_bytes),
                ],
                vec![
                    "write-zeroes and other requests (not in the trace file)".into(),
                    num_cell(c.other_requests),
                    "-".into(),
                ],
                vec![
                    "read requests".into(),
                    num_cell(c.trace_read_ios),
                    num_cell(c.stat_read_ios),
                ],
                vec![
                    "write requests".into(),
                    num_cell(c.trace_write_ios),
                    num_cell(c.stat_write_ios),
                ],
            ],
        });
    }
    out.push(Section {
        id: format!("{id_prefix}oltp"),
        title: format!(
            "OLTP: TPC-C on {} (Wang et al. sections 3-4)",
            r.dbms_name()
        ),
        paragraphs: vec![
            format!("Logical IO: {}'s file-system requests on its data directory; physical IO: the block requests of the device under test, traced in the same run. Rates over the traced time. The kernel counts requests differently from the trace (a flush with data is one trace request), so compare bytes.", r.dbms_name()),
        ],
        tables,
        charts: Vec::new(),
    });
    // Figures 6-9.
    let seconds: Vec<[f64; 2]> = tpcc
        .map(|t| {
            t.seconds
                .iter()
                .map(|x| [x.second as f64 + 1.0, x.transactions_per_s])
                .collect()
        })
        .unwrap_or_default();
    let charts = vec![
        chart(
            &format!("{id_prefix}oltp-fig6"),
            "Fig. 6: transaction throughput over time (transactions/s)",
            Axis::new("transactions/s", Scale::Linear, Unit::Count),
            vec![("all types".into(), seconds)],
        ),
        chart(
            &format!("{id_prefix}oltp-fig7"),
            "Fig. 7: logical IO rate (file system, IO/s)",
            Axis::new("IO/s", Scale::Linear, Unit::Count),
            vec![
                ("read".into(), rates(r, false, |x| Some(x.read_iops))),
                ("write".into(), rates(r, false, |x| Some(x.write_iops))),
            ],
        ),
        chart(
            &format!("{id_prefix}oltp-fig8"),
            "Fig. 8: physical IO rate (block device, IO/s)",
            Axis::new("IO/s", Scale::Linear, Unit::Count),
            vec![
                ("read".into(), rates(r, true, |x| Some(x.read_iops))),
                ("write".into(), rates(r, true, |x| Some(x.write_iops))),
            ],
        ),
        chart(
            &format!("{id_prefix}oltp-fig9"),
            "Fig. 9: average IO size",
            Axis::new("bytes", Scale::Linear, Unit::Bytes),
            vec![
                (
                    "logical read".into(),
                    rates(r, false, |x| x.avg_read_size_bytes),
                ),
                (
                    "logical write".into(),
                    rates(r, false, |x| x.avg_write_size_bytes),
                ),
                (
                    "physical read".into(),
                    rates(r, true, |x| x.avg_read_size_bytes),
                ),
                (
                    "physical write".into(),
                    rates(r, true, |x| x.avg_write_size_bytes),
                ),
            ],
        ),
    ];
    out.push(Section {
        id: format!("{id_prefix}oltp-figures"),
        title: "OLTP over time: Wang et al. Figures 6-9 (reads and writes apart)".into(),
        paragraphs: vec!["Per interval of the traces (oltp.json's series); transactions per second from the driver's per-second samples.".into()],
        tables: Vec::new(),
        charts: charts.into_iter().filter(Chart::has_data).collect(),
    });
    out
}

impl Analysis for OltpAnalysis {
    fn sections(
        &self,
        _device: &DeviceReport,
        results_dir: &Path,
    ) -> Result<Vec<Section>, ReportError> {
        let path = results_dir.join("oltp.json");
        let Ok(text) = crate::model::read_limited(&path, flashlab_results::dir::MAX_JSON_BYTES)
        else {
            return Ok(Vec::new());
        };
        let result: OltpResult =
            serde_json::from_str(&text).map_err(|source| ReportError::InvalidJson {
                path: path.display().to_string(),
                what: "not a flashlab oltp result",
                source,
            })?;
        Ok(sections(&result, ""))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_oltp_document_gives_its_tables_and_the_four_figures() {
        let doc = serde_json::json!({
            "format": "flashlab-oltp/1", "status": "complete", "traced_s": 2.0,
            "config": {"device": "sim:intel-x25e", "fs": "ext4", "warehouses": 1, "terminals": 4},
            "tpcc": {"tpmc": 1200.0, "transactions_per_s": 44.0,
                     "new_order": {"commits": 10, "mix_percent": 45.0, "response_time": {"mean_us": 1500.0, "p90_us": 2000, "p99_us": 3000, "max_us": 4000}},
                     "seconds": [{"second": 0, "transactions_per_s": 40.0}, {"second": 1, "transactions_per_s": 48.0}]},
            "trace": {"logical": {"reads": 100, "read_bytes": 819200, "writes": 50, "write_bytes": 409600, "flushes": 10},
                      "physical": {"reads": 0, "read_bytes": 0, "writes": 40, "write_bytes": 450000, "flushes": 10}},
            "series": {"logical": {"rates": [{"start_ns": 0, "read_iops": 50.0, "write_iops": 25.0, "avg_read_size_bytes": 8192.0, "avg_write_size_bytes": 8192.0}]},
                       "physical": {"rates": [{"start_ns": 0, "read_iops": 0.0, "write_iops": 20.0, "avg_read_size_bytes": null, "avg_write_size_bytes": 11250.0}]}},
            "fs_write_amplification": 1.0986,
            "endurance": {"physical_write_bytes_per_s": 225000.0, "years_from_rated_writes": 281.7, "rated_lifetime_writes_source": "profile"},
            "tpcc_consistency": {"ok": false, "conditions": [{"number": 1, "description": "W_YTD", "violations": 1}]},
            "trace_consistency": {"checked": true, "trace_read_bytes": 0, "stat_read_bytes": 0, "trace_write_bytes": 450000, "stat_write_bytes": 450000, "trace_read_ios": 0, "stat_read_ios": 0, "trace_write_ios": 40, "stat_write_ios": 50, "completed_write_bytes": 450000, "other_requests": 0}
        });
        let r: OltpResult = serde_json::from_value(doc).unwrap();
        let s = sections(&r, "");
        assert_eq!(s.len(), 2);
        let io = &s[0].tables[2];
        assert_eq!(io.rows[0][1], "50", "logical reads per second");
        assert_eq!(io.rows[1][4], "0.23", "physical MB/s written");
        assert_eq!(s[0].tables.len(), 5, "with the consistency table");
        let ids: Vec<&str> = s[1].charts.iter().map(|c| c.id.as_str()).collect();
        assert_eq!(ids, ["oltp-fig6", "oltp-fig7", "oltp-fig8", "oltp-fig9"]);
        // A physical read series of zeros is still drawn; a null size is left out.
        assert_eq!(s[1].charts[3].series.len(), 3);
        // The consistency verdict names the broken condition.
        assert!(s[0].tables[0]
            .rows
            .iter()
            .any(|row| row[1] == "condition 1: 1 violations"));
    }

    fn window(window: u32, tpmc: f64) -> serde_json::Value {
        serde_json::json!({"window": window, "seed": 40 + window, "measured_s": 20.0,
            "tpmc": tpmc, "transactions_per_s": tpmc / 27.0, "new_order_p90_us": 2500,
            "mix_within_spec": true, "late_starts": window - 1})
    }

    fn repeated(tpmcs: &[f64]) -> OltpResult {
        let windows: Vec<serde_json::Value> = tpmcs
            .iter()
            .enumerate()
            .map(|(i, &t)| window(i as u32 + 1, t))
            .collect();
        let figures: Vec<flashlab_results::oltp::WindowFigures> =
            serde_json::from_value(serde_json::Value::Array(windows)).unwrap();
        let doc = serde_json::json!({
            "format": "flashlab-oltp/1", "status": "complete",
            "config": {"device": "sim:intel-x25e", "fs": "ext4", "warehouses": 1, "terminals": 4},
            "tpcc": {"tpmc": tpmcs[0], "transactions_per_s": 50.0, "rate_per_min": 6000, "late_starts": 7},
            "repeats": RepeatFigures::of(figures),
        });
        serde_json::from_value(doc).unwrap()
    }

    fn summary_value(r: &OltpResult, label: &str) -> String {
        let s = sections(r, "");
        let row = s[0].tables[0].rows.iter().find(|row| row[0] == label);
        row.unwrap_or_else(|| panic!("no summary row {label}"))[1].clone()
    }

    #[test]
    fn repeated_windows_show_their_interval_a_table_and_a_verdict() {
        let r = repeated(&[1000.0, 1010.0, 990.0, 1000.0]);
        let tpmc = summary_value(&r, "tpmC over 4 windows");
        assert!(tpmc.starts_with("1000 (95 % interval "), "{tpmc}");
        let verdict = summary_value(&r, "repeatability (--repeat)");
        assert!(
            verdict.starts_with("tpmC repeats within +-1.3 %"),
            "{verdict}"
        );
        let s = sections(&r, "");
        let table = s[0]
            .tables
            .iter()
            .find(|t| t.header[0] == "window")
            .expect("the windows table");
        assert_eq!(table.rows.len(), 4);
        assert_eq!(table.rows[0][0], "1 (traced)");
        assert_eq!(table.rows[3][3], "1000");
        assert_eq!(table.rows[3][7], "3", "late starts of window 4");
    }

    #[test]
    fn windows_that_disagree_are_called_not_repeatable() {
        let r = repeated(&[1000.0, 1400.0, 700.0]);
        let verdict = summary_value(&r, "repeatability (--repeat)");
        assert!(verdict.starts_with("the windows disagree"), "{verdict}");
    }

    #[test]
    fn the_offered_rate_is_set_against_what_was_achieved() {
        let r = repeated(&[1000.0]);
        assert_eq!(
            summary_value(&r, "offered load (--rate)"),
            "6000 transactions/min offered, 3000/min achieved (50 % of it); 7 late starts"
        );
        // One window has no interval, and no verdict on repeatability.
        assert_eq!(
            summary_value(&r, "tpmC over 1 window"),
            "1000 (one window: no interval)"
        );
        let s = sections(&r, "");
        assert!(!s[0].tables[0]
            .rows
            .iter()
            .any(|row| row[0] == "repeatability (--repeat)"));
    }
}
