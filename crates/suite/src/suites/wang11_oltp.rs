//! Wang, Goda, Nakano & Kitsuregawa (IEICE 2011), sections 3 and 4: TPC-C on
//! the three SSDs of the paper (simulated: intel-x25e, mtron-pro7500,
//! ocz-vertex-ex) x two file systems, ext2 and a copy-on-write one. The
//! paper's log-structured file system is nilfs2; this kernel has no nilfs2,
//! so btrfs stands in for copy-on-write placement.
//!
//! Unlike the executor suites, each case is a whole `flashlab oltp` run
//! (PostgreSQL, the TPC-C driver, both tracers), which the CLI performs
//! (`flashlab suite wang11-oltp`); this module owns the matrix, reads the
//! runs' `oltp.json` documents, and turns them into the typed summary with
//! the paper's findings, quoted verbatim with their section.

use flashlab_results::oltp::OltpResult;
use flashlab_results::RunSummary;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::{ConfigError, Suite, SummaryInput};
use crate::figures::SuiteFigures;
use crate::findings::{finding, Finding};
use crate::plan::Plan;
use crate::summary::{Compare, Quote, SuiteSummary, SummaryTable};

pub const NAME: &str = "wang11-oltp";
pub const TITLE: &str =
    "Wang et al. (IEICE 2011), sections 3-4: TPC-C on three SSDs x two file systems";
/// The paper's three SSDs, as simulator profiles.
pub const PROFILES: [&str; 3] = ["intel-x25e", "mtron-pro7500", "ocz-vertex-ex"];
/// ext2 as in the paper; btrfs for its nilfs2 (absent from this kernel).
pub const FILE_SYSTEMS: [&str; 2] = ["ext2", "btrfs"];

/// The paper's two DBMSs as flashlab runs them (`flashlab oltp --dbms`):
/// PostgreSQL, and MariaDB with InnoDB for its "MySQL" (section 3, Table 4).
pub const DBMSS: [&str; 2] = ["postgres", "mariadb"];

/// One run of the matrix.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Case {
    /// `postgres` or `mariadb` (plans from before `--dbms`: postgres).
    #[serde(default = "postgres")]
    pub dbms: String,
    pub profile: String,
    pub fs: String,
}

fn postgres() -> String {
    DBMSS[0].into()
}

impl Case {
    /// The run's subdirectory in the suite's results directory
    /// (PostgreSQL's keep the names they had before MariaDB joined).
    pub fn dir_name(&self) -> String {
        if self.dbms == DBMSS[0] {
            format!("{}-{}", self.profile, self.fs)
        } else {
            format!("{}-{}-{}", self.profile, self.fs, self.dbms)
        }
    }
}

/// Every DBMS x profile x file system, in the order they run (one DBMS's
/// runs together).
pub fn cases(dbmss: &[String], profiles: &[String], file_systems: &[String]) -> Vec<Case> {
    let mut out = Vec::new();
    for d in dbmss {
        for p in profiles {
            for f in file_systems {
                out.push(Case {
                    dbms: d.clone(),
                    profile: p.clone(),
                    fs: f.clone(),
                });
            }
        }
    }
    out
}

/// A finished case: its `oltp.json`.
#[derive(Clone, Debug)]
pub struct CaseResult {
    pub case: Case,
    pub result: OltpResult,
}

/// The figures the findings and the table use, from one oltp.json.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct Measures {
    pub tpmc: Option<f64>,
    pub logical_iops: Option<f64>,
    pub logical_read_mb_s: Option<f64>,
    pub logical_write_mb_s: Option<f64>,
    pub physical_read_mb_s: Option<f64>,
    pub physical_write_mb_s: Option<f64>,
    pub physical_avg_write_bytes: Option<f64>,
    pub fs_write_amplification: Option<f64>,
    pub ftl_write_amplification: Option<f64>,
    pub endurance_years: Option<f64>,
}

pub fn measures(r: &OltpResult) -> Measures {
    let mb = |v: Option<f64>| v.map(|b| b / 1e6);
    Measures {
        tpmc: r.tpcc.as_ref().map(|t| t.tpmc),
        logical_iops: r.iops(false),
        logical_read_mb_s: mb(r.read_bytes_per_s(false)),
        logical_write_mb_s: mb(r.write_bytes_per_s(false)),
        physical_read_mb_s: mb(r.read_bytes_per_s(true)),
        physical_write_mb_s: mb(r.write_bytes_per_s(true)),
        physical_avg_write_bytes: r.layer(true).and_then(|l| l.avg_write_bytes()),
        fs_write_amplification: r.fs_write_amplification,
        ftl_write_amplification: r.serve.as_ref().and_then(|s| s.run.ftl_write_amplification),
        endurance_years: r.endurance.as_ref().and_then(|e| e.years_from_rated_writes),
    }
}

fn q(section: &str, text: &str) -> Option<Quote> {
    Some(Quote::new("wang11", section, text))
}

fn mean(v: impl Iterator<Item = f64>) -> Option<f64> {
    let v: Vec<f64> = v.collect();
    (!v.is_empty()).then(|| v.iter().sum::<f64>() / v.len() as f64)
}

/// Pearson's r of paired values (None for fewer than 3 pairs or no spread).
pub fn correlation(pairs: &[(f64, f64)]) -> Option<f64> {
    if pairs.len() < 3 {
        return None;
    }
    let n = pairs.len() as f64;
    let (mx, my) = (
        pairs.iter().map(|p| p.0).sum::<f64>() / n,
        pairs.iter().map(|p| p.1).sum::<f64>() / n,
    );
    let (mut sxy, mut sxx, mut syy) = (0.0, 0.0, 0.0);
    for (x, y) in pairs {
        sxy += (x - mx) * (y - my);
        sxx += (x - mx) * (x - mx);
        syy += (y - my) * (y - my);
    }
    (sxx > 0.0 && syy > 0.0).then(|| sxy / (sxx * syy).sqrt())
}

/// The paper's findings of sections 3.2 and 4 next to what the runs show,
/// once per DBMS when the runs have more than one (the paper's figures are
/// per DBMS; a mean across DBMSs would describe neither). Then each
/// finding's id ends in `.DBMS` and its description names the DBMS.
pub fn findings(results: &[CaseResult]) -> Vec<Finding> {
    let mut dbmss: Vec<&str> = Vec::new();
    for r in results {
        if !dbmss.contains(&r.case.dbms.as_str()) {
            dbmss.push(&r.case.dbms);
        }
    }
    if dbmss.len() <= 1 {
        return findings_of(results);
    }
    let mut out = Vec::new();
    for d in dbmss {
        let of: Vec<CaseResult> = results
            .iter()
            .filter(|r| r.case.dbms == d)
            .cloned()
            .collect();
        for mut f in findings_of(&of) {
            f.id = format!("{}.{d}", f.id);
            f.what = format!("{}: {}", dbms_label(d), f.what);
            out.push(f);
        }
    }
    out
}

/// The DBMS as the tables name it.
pub fn dbms_label(dbms: &str) -> &'static str {
    if dbms == "mariadb" {
        "MariaDB/InnoDB"
    } else {
        "PostgreSQL"
    }
}

fn findings_of(results: &[CaseResult]) -> Vec<Finding> {
    let m: Vec<(&Case, Measures)> = results
        .iter()
        .map(|r| (&r.case, measures(&r.result)))
        .collect();
    let of_fs = |fs: &str, f: fn(&Measures) -> Option<f64>| {
        mean(
            m.iter()
                .filter(|(c, _)| c.fs == fs)
                .filter_map(|(_, x)| f(x)),
        )
    };
    let pairs: Vec<(f64, f64)> = m
        .iter()
        .filter_map(|(_, x)| Some((x.logical_iops?, x.tpmc?)))
        .collect();
    let ratio_by_profile = |f: fn(&Measures) -> Option<f64>| {
        mean(PROFILES.iter().filter_map(|p| {
            let get = |fs: &str| {
                m.iter()
                    .find(|(c, _)| c.profile == *p && c.fs == fs)
                    .and_then(|(_, x)| f(x))
            };
            Some(get("btrfs")? / get("ext2")?)
        }))
    };
    let mtron = |fs: &str| {
        m.iter()
            .find(|(c, _)| c.profile == "mtron-pro7500" && c.fs == fs)
            .and_then(|(_, x)| x.tpmc)
    };
    let intel_years = m
        .iter()
        .filter(|(c, _)| c.profile == "intel-x25e")
        .filter_map(|(_, x)| x.endurance_years)
        .fold(None, |a: Option<f64>, y| Some(a.map_or(y, |a| a.min(y))));
    let read_reach = mean(m.iter().filter_map(|(_, x)| {
        Some(x.physical_read_mb_s? / x.logical_read_mb_s.filter(|v| *v > 0.0)?)
    }));
    vec![
        finding("wang11-oltp.fig6-7.tpmc-vs-logical-io-rate-r", "Figures 6 and 7", "tpmC vs logical IO rate across the runs (Pearson r)", correlation(&pairs),
            |r| format!("across {} runs, tpmC and the logical IO rate correlate at r = {r:.2}", pairs.len()),
            q("section 3.2.2", "Seeing Fig. 6 and Fig. 7, we could verify that the transaction throughputs actually followed the logical IO throughputs.")),
        finding("wang11-oltp.fig7-8.btrfs-write-amplification", "Figures 7 and 8", "copy-on-write file system (btrfs for nilfs2): physical / logical bytes written", of_fs("btrfs", |x| x.fs_write_amplification),
            |w| format!("btrfs writes {w:.2}x the logical bytes at the block layer (mean over profiles)"),
            q("section 3.2.2", "First, log-structured strategy has the possibilities of producing more writes. This was confirmed by Fig. 7 and Fig. 8. More writes were issued at the physical layer than the logical layer.")),
        finding("wang11-oltp.fig7-8.ext2-write-amplification", "Figures 7 and 8", "ext2: physical / logical bytes written", of_fs("ext2", |x| x.fs_write_amplification),
            |w| format!("ext2 writes {w:.2}x the logical bytes at the block layer (mean over profiles)"),
            q("section 3.2.2", "When ext2fs is used, write throughputs are almost the same between logical throughput and physical throughput.")),
        finding("wang11-oltp.fig7-8.physical-over-logical-read", "Figures 7 and 8", "physical / logical bytes read (reads absorbed by the page cache)", read_reach,
            |r| format!("{:.0} % of the bytes PostgreSQL read reached the device (mean over runs)", r * 100.0),
            q("section 3.2.2", "Read throughputs were always higher than write throughputs in Fig. 7, whereas write throughputs were higher in Fig. 8. This means that the file system absorbed many read requests in its buffer.")),
        finding("wang11-oltp.fig9.write-size-btrfs-over-ext2", "Figure 9", "average physical write size, btrfs / ext2", ratio_by_profile(|x| x.physical_avg_write_bytes),
            |r| format!("btrfs's physical writes are {r:.2}x the size of ext2's (mean over profiles)"),
            q("section 3.2.2", "It is clear in Fig. 9 that the write size of nilfs2 is larger than that of ext2fs because nilfs2 has coalesced the random writes into large sequential writes.")),
        finding("wang11-oltp.fig6.mtron-tpmc-btrfs-over-ext2", "Figure 6", "mtron-pro7500: tpmC with btrfs / with ext2", match (mtron("btrfs"), mtron("ext2")) { (Some(b), Some(e)) if e > 0.0 => Some(b / e), _ => None },
            |r| format!("on the Mtron profile, btrfs gives {r:.2}x ext2's tpmC"),
            q("section 3.2.1", "For Mtron SSD, a noticeable improvement of nilfs2 over ext2fs on commercial DBMS was observed.")),
        finding("wang11-oltp.table6.intel-endurance-years", "Table 6", "intel-x25e: shortest endurance from 2 PB rated lifetime writes (years)", intel_years,
            |y| format!("the X25-E would last {y:.2} years at the measured physical write rate (shortest case)"),
            q("section 4", "We can see that Intel's 64GB SSD could only last 1.43 years in the shortest case.")),
    ]
}

fn cell(v: Option<f64>, digits: usize) -> String {
    v.map_or("-".into(), |v| format!("{v:.digits$}"))
}

/// The suite's summary: the findings and one row per case.
pub fn summary(results: &[CaseResult], device: &str, notes: Vec<String>) -> SuiteSummary {
    let rows = results
        .iter()
        .map(|r| {
            let x = measures(&r.result);
            vec![
                dbms_label(&r.case.dbms).to_string(),
                r.case.profile.clone(),
                r.case.fs.clone(),
                cell(x.tpmc, 0),
                cell(x.logical_read_mb_s, 2),
                cell(x.logical_write_mb_s, 2),
                cell(x.physical_read_mb_s, 2),
                cell(x.physical_write_mb_s, 2),
                cell(x.physical_avg_write_bytes.map(|b| b / 1024.0), 1),
                cell(x.fs_write_amplification, 2),
                cell(x.ftl_write_amplification, 2),
                cell(x.endurance_years, 2),
            ]
        })
        .collect();
    let mut detail = serde_json::Map::new();
    detail.insert(
        "cases".into(),
        Value::Array(
            results
                .iter()
                .map(|r| serde_json::json!({"case": r.case, "measures": measures(&r.result)}))
                .collect(),
        ),
    );
    SuiteSummary {
        suite: NAME.into(),
        title: TITLE.into(),
        device: device.into(),
        tables: vec![SummaryTable {
            id: "wang11-oltp-runs".into(),
            title: "TPC-C runs: Figures 6-9 and Table 6 in numbers".into(),
            paragraphs: vec![
                "One flashlab oltp run per DBMS, simulated SSD and file system; rates over the traced time. Logical: the DBMS's file-system requests; physical: the loop device's block requests. btrfs stands in for nilfs2, which this kernel lacks.".into(),
            ],
            header: [
                "DBMS", "profile", "fs", "tpmC", "logical read MB/s", "logical write MB/s", "physical read MB/s",
                "physical write MB/s", "avg physical write KiB", "fs WAF", "FTL WAF", "endurance (years)",
            ]
            .map(str::to_string)
            .to_vec(),
            rows,
            compare: Compare::None,
            compare_title: None,
            detail_only: false,
        }],
        findings: findings(results),
        notes,
        flagged_runs: Vec::new(),
        detail,
    }
}

/// In the registry for its name and title (the report finds it by the
/// manifest's suite name); it does not run on the executor.
pub struct Wang11Oltp;

/// wang11-oltp has no executor configuration (its runs are whole TPC-C
/// runs, configured by `flashlab suite wang11-oltp`'s flags): no value of
/// this type exists, so no plan can be asked of it.
#[derive(Clone, Copy, Debug, Serialize, Deserialize)]
pub enum NotOnExecutor {}

impl Suite for Wang11Oltp {
    type Config = NotOnExecutor;

    fn name(&self) -> &'static str {
        NAME
    }

    fn title(&self) -> &'static str {
        TITLE
    }

    fn plan(&self, config: &NotOnExecutor, _device_bytes: u64) -> Result<Plan, ConfigError> {
        match *config {}
    }

    fn figures(&self, _plan: &Plan, _runs: Option<&[RunSummary]>) -> SuiteFigures {
        SuiteFigures {
            suite: NAME.into(),
            groups: Vec::new(),
            featured_runs: Vec::new(),
        }
    }

    fn summarise(&self, input: &SummaryInput) -> SuiteSummary {
        let mut s = summary(&[], input.device, input.journal.notes.clone());
        s.notes.push(
            "wang11-oltp is summarised from its runs' oltp.json by `flashlab suite wang11-oltp`"
                .into(),
        );
        s
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn doc(tpmc: f64, lr: f64, lw: f64, pr: f64, pw: f64, pw_n: f64) -> OltpResult {
        // Counts and bytes are whole numbers in oltp.json.
        let n = |v: f64| v.round() as u64;
        serde_json::from_value(serde_json::json!({
            "format": "flashlab-oltp/1", "status": "complete", "config": {},
            "traced_s": 10.0,
            "tpcc": {"tpmc": tpmc, "transactions_per_s": tpmc / 25.0},
            "trace": {
                "logical": {"reads": n(lr / 8000.0), "writes": n(lw / 8000.0), "read_bytes": n(lr), "write_bytes": n(lw)},
                "physical": {"reads": n(pr / 4096.0), "writes": n(pw_n), "read_bytes": n(pr), "write_bytes": n(pw)},
            },
            "fs_write_amplification": pw / lw,
            "endurance": {"physical_write_bytes_per_s": pw / 10.0,
                          "years_from_rated_writes": 2e15 / (pw / 10.0) / (365.25 * 86400.0)},
        }))
        .unwrap()
    }

    #[test]
    fn findings_read_the_runs_and_quote_the_paper() {
        let cs = cases(
            &["postgres".to_string()],
            &PROFILES.map(String::from),
            &FILE_SYSTEMS.map(String::from),
        );
        assert_eq!(cs.len(), 6);
        assert_eq!(cs[1].dir_name(), "intel-x25e-btrfs");
        let results: Vec<CaseResult> = cs
            .iter()
            .enumerate()
            .map(|(i, c)| {
                let k = 1.0 + i as f64;
                let btrfs = c.fs == "btrfs";
                CaseResult {
                    case: c.clone(),
                    // tpmC proportional to the logical IO rate; btrfs writes
                    // 1.5x the logical bytes in half as many, larger requests.
                    result: doc(
                        1000.0 * k,
                        8e6 * k,
                        4e6 * k,
                        1e6,
                        if btrfs { 6e6 * k } else { 4e6 * k },
                        if btrfs { 100.0 } else { 300.0 },
                    ),
                }
            })
            .collect();
        let f = findings(&results);
        assert!(f.iter().all(|f| f.paper.is_some()));
        assert!(
            (f[0].measured.unwrap() - 1.0).abs() < 1e-9,
            "tpmC follows the logical rate"
        );
        assert!(
            (f[1].measured.unwrap() - 1.5).abs() < 1e-9,
            "btrfs writes more physically"
        );
        assert!(
            (f[2].measured.unwrap() - 1.0).abs() < 1e-9,
            "ext2 writes the same"
        );
        assert!(f[4].measured.unwrap() > 1.0, "btrfs's writes are larger");
        let s = summary(&results, "sim", Vec::new());
        assert_eq!(s.tables[0].rows.len(), 6);
        assert_eq!(
            s.tables[0].rows[0][..3],
            ["PostgreSQL", "intel-x25e", "ext2"]
        );
        assert!(s
            .markdown()
            .contains("More writes were issued at the physical layer than the logical layer."));
    }

    #[test]
    fn two_dbmss_get_their_findings_apart() {
        let cs = cases(
            &DBMSS.map(String::from),
            &["intel-x25e".to_string()],
            &FILE_SYSTEMS.map(String::from),
        );
        assert_eq!(cs[2].dir_name(), "intel-x25e-ext2-mariadb");
        // InnoDB's btrfs doubles the bytes, PostgreSQL's adds half.
        let results: Vec<CaseResult> = cs
            .iter()
            .map(|c| {
                let pw = match (c.dbms.as_str(), c.fs.as_str()) {
                    (_, "ext2") => 4e6,
                    ("postgres", _) => 6e6,
                    _ => 8e6,
                };
                CaseResult {
                    case: c.clone(),
                    result: doc(1000.0, 8e6, 4e6, 1e6, pw, 100.0),
                }
            })
            .collect();
        let f = findings(&results);
        assert_eq!(f.len(), 2 * findings(&[]).len());
        let waf = |id: &str| f.iter().find(|f| f.id == id).unwrap().measured.unwrap();
        assert!((waf("wang11-oltp.fig7-8.btrfs-write-amplification.postgres") - 1.5).abs() < 1e-9);
        assert!((waf("wang11-oltp.fig7-8.btrfs-write-amplification.mariadb") - 2.0).abs() < 1e-9);
        assert!(f.iter().any(|f| f.what.starts_with("MariaDB/InnoDB: ")));
    }

    #[test]
    fn missing_runs_are_not_measured_rather_than_guessed() {
        let f = findings(&[]);
        assert!(f
            .iter()
            .all(|f| f.measured.is_none() && f.text == "not measured"));
        assert_eq!(correlation(&[(1.0, 2.0), (2.0, 4.0)]), None);
    }
}
