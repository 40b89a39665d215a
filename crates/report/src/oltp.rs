//! The OLTP section of a report (`flashlab oltp`'s results directory, with
//! its `oltp.json`): TPC-C's outcome, logical vs physical IO, the file
//! system's and the simulated FTL's write amplification, the endurance, the
//! trace consistency, and Wang et al.'s four time series: transaction
//! throughput (Fig. 6), logical (Fig. 7) and physical (Fig. 8) IO rate and
//! average IO size (Fig. 9), reads and writes apart. It reads only
//! `oltp.json`; directories without one get nothing.

use std::path::Path;

use serde_json::Value;

use crate::error::ReportError;
use crate::model::{Analysis, DeviceReport, Section, Table};
use crate::svg::{Axis, Chart, Scale, Series, Shape, Unit};

pub struct OltpAnalysis;

fn num(v: &Value, p: &str) -> Option<f64> {
    v.pointer(p).and_then(Value::as_f64)
}

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
fn rates(doc: &Value, layer: &str, field: &str) -> Vec<[f64; 2]> {
    let Some(rs) = doc
        .pointer(&format!("/series/{layer}/rates"))
        .and_then(Value::as_array)
    else {
        return Vec::new();
    };
    rs.iter()
        .filter_map(|r| Some([r.get("start_ns")?.as_f64()? / 1e9, r.get(field)?.as_f64()?]))
        .collect()
}

pub fn sections(doc: &Value, id_prefix: &str) -> Vec<Section> {
    let mut out = Vec::new();
    let secs = num(doc, "/traced_s").filter(|s| *s > 0.0);
    let per_s = |p: &str| Some(num(doc, p)? / secs?);
    let status = doc.get("status").and_then(Value::as_str).unwrap_or("?");
    let mut summary = vec![
        vec!["status".to_string(), status.to_string()],
        vec![
            "device".into(),
            doc.pointer("/config/device")
                .and_then(Value::as_str)
                .map(str::to_string)
                .or_else(|| {
                    doc.pointer("/config/mount")
                        .and_then(Value::as_str)
                        .map(|m| format!("--mount {m}"))
                })
                .unwrap_or_default(),
        ],
        vec![
            "file system".into(),
            doc.pointer("/config/fs")
                .and_then(Value::as_str)
                .unwrap_or("")
                .to_string(),
        ],
        // The DBMS's own section names it (`--dbms`): postgres or mariadb.
        match doc.pointer("/mariadb/version").and_then(Value::as_str) {
            Some(v) => vec!["DBMS".into(), format!("MariaDB/InnoDB: {v}")],
            None => vec![
                "PostgreSQL".into(),
                doc.pointer("/postgres/version")
                    .and_then(Value::as_str)
                    .unwrap_or("")
                    .to_string(),
            ],
        },
        vec![
            "warehouses / terminals".into(),
            format!(
                "{} / {}",
                doc.pointer("/config/warehouses").unwrap_or(&Value::Null),
                doc.pointer("/config/terminals").unwrap_or(&Value::Null)
            ),
        ],
        vec!["tpmC".into(), cell(num(doc, "/tpcc/tpmc"), 0)],
        vec![
            "transactions/s".into(),
            cell(num(doc, "/tpcc/transactions_per_s"), 1),
        ],
        vec![
            "file-system write amplification (physical / logical bytes written)".into(),
            cell(num(doc, "/fs_write_amplification"), 3),
        ],
    ];
    if let Some(w) = num(doc, "/serve/run/ftl_write_amplification") {
        summary.push(vec![
            "simulated FTL write amplification (during the run)".into(),
            format!("{w:.3}"),
        ]);
        summary.push(vec![
            "simulated erases (during the run)".into(),
            cell(num(doc, "/serve/run/erases"), 0),
        ]);
        if let Some(t) = num(
            doc,
            "/serve/whole_device/chip_time_per_host_request_ns/total",
        ) {
            summary.push(vec![
                "flash time per host request (whole device)".into(),
                format!("{:.1} us", t / 1e3),
            ]);
        }
    }
    if let Some(e) = doc.get("error").and_then(Value::as_str) {
        summary.push(vec!["error".into(), e.to_string()]);
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
    for t in [
        "new_order",
        "payment",
        "order_status",
        "delivery",
        "stock_level",
    ] {
        if let Some(r) = doc.pointer(&format!("/tpcc/{t}")) {
            let ms = |k: &str| {
                r.pointer(&format!("/response_time/{k}"))
                    .and_then(Value::as_f64)
                    .map(|us| us / 1e3)
            };
            types.rows.push(vec![
                t.replace('_', "-"),
                cell(num(r, "/commits"), 0),
                cell(num(r, "/mix_percent"), 2),
                cell(ms("mean_us"), 2),
                cell(ms("p90_us"), 2),
                cell(ms("p99_us"), 2),
                cell(ms("max_us"), 2),
            ]);
        }
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
    for (name, l) in [
        ("logical (file system)", "logical"),
        ("physical (block)", "physical"),
    ] {
        let avg = |b: &str, n: &str| match (
            num(doc, &format!("/trace/{l}/{b}")),
            num(doc, &format!("/trace/{l}/{n}")),
        ) {
            (Some(b), Some(n)) if n > 0.0 => Some(b / n / 1024.0),
            _ => None,
        };
        if doc.pointer(&format!("/trace/{l}")).is_some() {
            io.rows.push(vec![
                name.into(),
                cell(per_s(&format!("/trace/{l}/reads")), 0),
                cell(per_s(&format!("/trace/{l}/read_bytes")).map(|b| b / 1e6), 2),
                cell(per_s(&format!("/trace/{l}/writes")), 0),
                cell(
                    per_s(&format!("/trace/{l}/write_bytes")).map(|b| b / 1e6),
                    2,
                ),
                cell(avg("read_bytes", "reads"), 1),
                cell(avg("write_bytes", "writes"), 1),
                cell(per_s(&format!("/trace/{l}/flushes")), 0),
            ]);
        }
    }
    let mut endurance = Table {
        header: vec!["estimate".into(), "value".into()],
        rows: vec![vec![
            "physical write rate".into(),
            cell(
                num(doc, "/endurance/physical_write_bytes_per_s").map(|b| b / 1e6),
                2,
            ) + " MB/s",
        ]],
    };
    if let Some(y) = num(doc, "/endurance/years_from_rated_writes") {
        endurance.rows.push(vec![
            format!(
                "rated lifetime writes / write rate (Table 6; {})",
                doc.pointer("/endurance/rated_lifetime_writes_source")
                    .and_then(Value::as_str)
                    .unwrap_or("")
            ),
            format!("{y:.2} years"),
        ]);
    }
    if let Some(y) = num(doc, "/endurance/years_from_erase_counts") {
        endurance.rows.push(vec![
            format!(
                "rated P/E cycles x blocks / erase rate ({} cycles)",
                cell(num(doc, "/endurance/rated_pe_cycles"), 0)
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
    if let Some(c) = doc
        .get("trace_consistency")
        .filter(|c| c["checked"] == true)
    {
        tables.push(Table {
            header: ["", "physical trace", "/sys/block stat delta"]
                .map(str::to_string)
                .to_vec(),
            rows: vec![
                vec![
                    "read bytes".into(),
                    c["trace_read_bytes"].to_string(),
                    c["stat_read_bytes"].to_string(),
                ],
                vec![
                    "write bytes".into(),
                    c["trace_write_bytes"].to_string(),
                    c["stat_write_bytes"].to_string(),
                ],
                vec![
                    "write bytes completed (tracer's completion events)".into(),
                    c["completed_write_bytes"].to_string(),
                    c["stat_write_bytes"].to_string(),
                ],
                vec![
                    "write-zeroes and other requests (not in the trace file)".into(),
                    c["other_requests"].to_string(),
                    "-".into(),
                ],
                vec![
                    "read requests".into(),
                    c["trace_read_ios"].to_string(),
                    c["stat_read_ios"].to_string(),
                ],
                vec![
                    "write requests".into(),
                    c["trace_write_ios"].to_string(),
                    c["stat_write_ios"].to_string(),
                ],
            ],
        });
    }
    out.push(Section {
        id: format!("{id_prefix}oltp"),
        title: "OLTP: TPC-C on PostgreSQL (Wang et al. sections 3-4)".into(),
        paragraphs: vec![
            "Logical IO: PostgreSQL's file-system requests on its data directory; physical IO: the block requests of the device under test, traced in the same run. Rates over the traced time (ramp-up and measured run). The kernel counts requests differently from the trace (a flush with data is one trace request), so compare bytes.".into(),
        ],
        tables,
        charts: Vec::new(),
    });
    // Figures 6-9.
    let seconds: Vec<[f64; 2]> = doc
        .pointer("/tpcc/seconds")
        .and_then(Value::as_array)
        .map(|s| {
            s.iter()
                .filter_map(|x| {
                    Some([
                        x.get("second")?.as_f64()? + 1.0,
                        x.get("transactions_per_s")?.as_f64()?,
                    ])
                })
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
                ("read".into(), rates(doc, "logical", "read_iops")),
                ("write".into(), rates(doc, "logical", "write_iops")),
            ],
        ),
        chart(
            &format!("{id_prefix}oltp-fig8"),
            "Fig. 8: physical IO rate (block device, IO/s)",
            Axis::new("IO/s", Scale::Linear, Unit::Count),
            vec![
                ("read".into(), rates(doc, "physical", "read_iops")),
                ("write".into(), rates(doc, "physical", "write_iops")),
            ],
        ),
        chart(
            &format!("{id_prefix}oltp-fig9"),
            "Fig. 9: average IO size",
            Axis::new("bytes", Scale::Linear, Unit::Bytes),
            vec![
                (
                    "logical read".into(),
                    rates(doc, "logical", "avg_read_size_bytes"),
                ),
                (
                    "logical write".into(),
                    rates(doc, "logical", "avg_write_size_bytes"),
                ),
                (
                    "physical read".into(),
                    rates(doc, "physical", "avg_read_size_bytes"),
                ),
                (
                    "physical write".into(),
                    rates(doc, "physical", "avg_write_size_bytes"),
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
        let doc: Value =
            serde_json::from_str(&text).map_err(|source| ReportError::InvalidJson {
                path: path.display().to_string(),
                what: "not valid JSON",
                source,
            })?;
        Ok(sections(&doc, ""))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_oltp_document_gives_its_tables_and_the_four_figures() {
        let doc = serde_json::json!({
            "status": "complete", "traced_s": 2.0,
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
            "trace_consistency": {"checked": true, "trace_read_bytes": 0, "stat_read_bytes": 0, "trace_write_bytes": 450000, "stat_write_bytes": 450000, "trace_read_ios": 0, "stat_read_ios": 0, "trace_write_ios": 40, "stat_write_ios": 50, "completed_write_bytes": 450000, "other_requests": 0}
        });
        let s = sections(&doc, "");
        assert_eq!(s.len(), 2);
        let io = &s[0].tables[2];
        assert_eq!(io.rows[0][1], "50", "logical reads per second");
        assert_eq!(io.rows[1][4], "0.23", "physical MB/s written");
        assert_eq!(s[0].tables.len(), 5, "with the consistency table");
        let ids: Vec<&str> = s[1].charts.iter().map(|c| c.id.as_str()).collect();
        assert_eq!(ids, ["oltp-fig6", "oltp-fig7", "oltp-fig8", "oltp-fig9"]);
        // A physical read series of zeros is still drawn; a null size is left out.
        assert_eq!(s[1].charts[3].series.len(), 3);
    }
}
