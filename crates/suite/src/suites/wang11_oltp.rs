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
use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::findings::{finding, Finding};
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

/// The suite's parts, each a set of runs and the findings of the
/// paper's figure it reproduces (`flashlab suite wang11-oltp --parts`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub enum Part {
    /// Figures 6-9 and Table 6: every DBMS x profile x file system.
    #[default]
    #[serde(rename = "fig6-9")]
    Fig6To9,
    /// Fig. 10, throughput with nilfs2's garbage collection: no runs (its
    /// finding says why it is not comparable here).
    #[serde(rename = "fig10")]
    Fig10,
    /// Fig. 11, the database buffer size, on the Mtron profile.
    #[serde(rename = "fig11")]
    Fig11,
    /// Fig. 12, Table 3's workload variations, on the Mtron profile.
    #[serde(rename = "fig12")]
    Fig12,
    /// Fig. 13, the IO schedulers the kernel offers.
    #[serde(rename = "fig13")]
    Fig13,
}

impl Part {
    pub const ALL: [Part; 5] = [
        Part::Fig6To9,
        Part::Fig10,
        Part::Fig11,
        Part::Fig12,
        Part::Fig13,
    ];

    pub fn name(self) -> &'static str {
        match self {
            Part::Fig6To9 => "fig6-9",
            Part::Fig10 => "fig10",
            Part::Fig11 => "fig11",
            Part::Fig12 => "fig12",
            Part::Fig13 => "fig13",
        }
    }

    /// A part by its name (`fig6-9`, `fig10`, ..., `fig13`).
    pub fn parse(text: &str) -> Option<Part> {
        Part::ALL.into_iter().find(|p| p.name() == text)
    }
}

/// Fig. 11's DBMS buffers (PostgreSQL's shared_buffers, InnoDB's buffer
/// pool), PostgreSQL's units. The paper's figure does not print its sizes;
/// its Table 4 runs 8 MB ("Data buffer size 8MB 4MB"), so the smallest here
/// is 8 MB (InnoDB's pool has a 5 MB minimum), then 4x and 16x it, the
/// largest above the 1-warehouse database (about 115 MB).
// assumed: three sizes from Table 4's 8 MB up, by factors of 4.
pub const FIG11_BUFFERS: [&str; 3] = ["8MB", "32MB", "128MB"];

/// Fig. 12's workloads: Table 3's three mixes (`flashlab oltp --mix`).
pub const FIG12_MIXES: [&str; 3] = ["standard", "read-intensive", "write-intensive"];

/// Fig. 13's schedulers, as Linux's blk-mq offers them: `none` for the
/// paper's Noop (FIFO with merging), and for its Anticipatory (removed from
/// Linux in 2.6.33) the two nearest: `mq-deadline` (the deadline elevator
/// Anticipatory was built on, without the anticipation) and `bfq` (which
/// idles to anticipate a process's next request).
pub const FIG13_SCHEDULERS: [&str; 3] = ["none", "mq-deadline", "bfq"];

/// The profiles Fig. 13's finding names ("nilfs2 on Mtron SSD and ext2fs on
/// Intel SSD").
pub const FIG13_PROFILES: [&str; 2] = ["mtron-pro7500", "intel-x25e"];

/// One run of the matrix.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Case {
    /// `postgres` or `mariadb` (plans from before `--dbms`: postgres).
    #[serde(default = "postgres")]
    pub dbms: String,
    pub profile: String,
    pub fs: String,
    /// The part it belongs to (plans from before parts: Figures 6-9).
    #[serde(default)]
    pub part: Part,
    /// Fig. 11: the DBMS buffer, if not the suite's `--shared-buffers`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub buffer: Option<String>,
    /// Fig. 12: the mix (`flashlab oltp --mix`), if not the standard one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mix: Option<String>,
    /// Fig. 13: the IO scheduler set on the run's loop device.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub scheduler: Option<String>,
}

fn postgres() -> String {
    DBMSS[0].into()
}

impl Case {
    /// The run's subdirectory in the suite's results directory
    /// (PostgreSQL's keep the names they had before MariaDB joined).
    pub fn dir_name(&self) -> String {
        let base = if self.dbms == DBMSS[0] {
            format!("{}-{}", self.profile, self.fs)
        } else {
            format!("{}-{}-{}", self.profile, self.fs, self.dbms)
        };
        if self.part == Part::Fig6To9 {
            return base;
        }
        format!("{}-{base}-{}", self.part.name(), self.variant())
    }

    /// What the part varies, in words (empty for Figures 6-9).
    pub fn variant(&self) -> String {
        let mut v = Vec::new();
        if let Some(b) = &self.buffer {
            v.push(format!("buffer-{b}"));
        }
        if let Some(m) = &self.mix {
            v.push(m.clone());
        }
        if let Some(s) = &self.scheduler {
            v.push(format!("sched-{s}"));
        }
        v.join("-")
    }

    fn plain(dbms: &str, profile: &str, fs: &str, part: Part) -> Case {
        Case {
            dbms: dbms.into(),
            profile: profile.into(),
            fs: fs.into(),
            part,
            buffer: None,
            mix: None,
            scheduler: None,
        }
    }
}

/// A part's runs. Figures 6-9 take the suite's profiles and file systems;
/// the other parts run the paper's own setting: Fig. 11 on the Mtron
/// profile for every DBMS ("varying the buffer size on Mtron's SSD", "two
/// DBMSs"), Figs 12 and 13 for the first DBMS only (the paper ran them "on
/// commercial DBMS"), Fig. 12 on the Mtron profile, Fig. 13 on the Mtron
/// and Intel profiles; all on ext2 and btrfs (for nilfs2). Fig. 10 has none.
pub fn part_cases(
    part: Part,
    dbmss: &[String],
    profiles: &[String],
    file_systems: &[String],
) -> Vec<Case> {
    let mtron = "mtron-pro7500";
    let first = dbmss.first().map_or(DBMSS[0], |d| d.as_str());
    let mut out = Vec::new();
    match part {
        Part::Fig6To9 => return cases(dbmss, profiles, file_systems),
        Part::Fig10 => {}
        Part::Fig11 => {
            for d in dbmss {
                for f in FILE_SYSTEMS {
                    for b in FIG11_BUFFERS {
                        out.push(Case {
                            buffer: Some(b.into()),
                            ..Case::plain(d, mtron, f, part)
                        });
                    }
                }
            }
        }
        Part::Fig12 => {
            for f in FILE_SYSTEMS {
                for m in FIG12_MIXES {
                    out.push(Case {
                        mix: Some(m.into()),
                        ..Case::plain(first, mtron, f, part)
                    });
                }
            }
        }
        Part::Fig13 => {
            for p in FIG13_PROFILES {
                for f in FILE_SYSTEMS {
                    for sch in FIG13_SCHEDULERS {
                        out.push(Case {
                            scheduler: Some(sch.into()),
                            ..Case::plain(first, p, f, part)
                        });
                    }
                }
            }
        }
    }
    out
}

/// Every DBMS x profile x file system, in the order they run (one DBMS's
/// runs together).
pub fn cases(dbmss: &[String], profiles: &[String], file_systems: &[String]) -> Vec<Case> {
    let mut out = Vec::new();
    for d in dbmss {
        for p in profiles {
            for f in file_systems {
                out.push(Case::plain(d, p, f, Part::Fig6To9));
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
    /// Transactions of all five types per minute (the paper's "tpm", which
    /// Figs 12 and 13 plot; tpmC counts New-Orders only).
    pub transactions_per_min: Option<f64>,
    /// Bytes per transaction (all types): the DBMS's file-system writes,
    /// the device's writes and reads.
    pub logical_write_bytes_per_txn: Option<f64>,
    pub physical_write_bytes_per_txn: Option<f64>,
    pub physical_read_bytes_per_txn: Option<f64>,
}

pub fn measures(r: &OltpResult) -> Measures {
    let mb = |v: Option<f64>| v.map(|b| b / 1e6);
    let tps = r
        .tpcc
        .as_ref()
        .map(|t| t.transactions_per_s)
        .filter(|t| *t > 0.0);
    let per_txn = |v: Option<f64>| Some(v? / tps?);
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
        transactions_per_min: tps.map(|t| t * 60.0),
        logical_write_bytes_per_txn: per_txn(r.write_bytes_per_s(false)),
        physical_write_bytes_per_txn: per_txn(r.write_bytes_per_s(true)),
        physical_read_bytes_per_txn: per_txn(r.read_bytes_per_s(true)),
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

/// How a finding of the parts compares with the paper's sentence.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Verdict {
    /// The runs show what the sentence says.
    Reproduced,
    /// They do not (the text gives the measured numbers).
    NotReproduced,
    /// The runs cannot test the sentence (the text gives the reason).
    NotComparable,
}

impl Verdict {
    pub fn word(self) -> &'static str {
        match self {
            Verdict::Reproduced => "reproduced",
            Verdict::NotReproduced => "not reproduced",
            Verdict::NotComparable => "not comparable",
        }
    }

    fn of(holds: bool) -> Verdict {
        if holds {
            Verdict::Reproduced
        } else {
            Verdict::NotReproduced
        }
    }
}

/// The smallest relative difference the parts count as an effect: each
/// point is one run on a shared, loaded VM, where the same command has
/// given tpmC figures far apart (docs/oltp.md), so a difference of a few
/// percent is no evidence either way.
// assumed: a noise floor for single runs, not fitted to any result.
pub const MIN_EFFECT: f64 = 0.05;

/// `b` is higher than `a` by more than [`MIN_EFFECT`].
fn rises(a: f64, b: f64) -> bool {
    b > a * (1.0 + MIN_EFFECT)
}

/// `b` is lower than `a` by more than [`MIN_EFFECT`].
fn falls(a: f64, b: f64) -> bool {
    b * (1.0 + MIN_EFFECT) < a
}

/// A finding with its verdict in front of its text ("reproduced: ...");
/// "not measured" when the runs it needs are missing.
fn judged(
    id: &str,
    source: &str,
    what: &str,
    measured: Option<f64>,
    judgement: Option<(Verdict, String)>,
    paper: Option<Quote>,
) -> Finding {
    Finding {
        id: id.into(),
        source: source.into(),
        what: what.into(),
        measured,
        text: judgement.map_or_else(
            || "not measured".into(),
            |(v, t)| format!("{}: {t}", v.word()),
        ),
        paper,
    }
}

/// The paper's findings of sections 3-4 next to what the runs show, part
/// by part, once per DBMS when the runs have more than one (the paper's
/// figures are per DBMS; a mean across DBMSs would describe neither). Then
/// each finding's id ends in `.DBMS` and its description names the DBMS.
/// The parts are Figures 6-9 and those the runs belong to.
pub fn findings(results: &[CaseResult]) -> Vec<Finding> {
    let mut parts = vec![Part::Fig6To9];
    for r in results {
        if !parts.contains(&r.case.part) {
            parts.push(r.case.part);
        }
    }
    findings_for(results, &parts)
}

/// The findings of `parts` (a part without runs: its findings "not
/// measured"; Fig. 10 needs none).
pub fn findings_for(results: &[CaseResult], parts: &[Part]) -> Vec<Finding> {
    let mut dbmss: Vec<&str> = Vec::new();
    for r in results {
        if !dbmss.contains(&r.case.dbms.as_str()) {
            dbmss.push(&r.case.dbms);
        }
    }
    let split = dbmss.len() > 1;
    let mut out = Vec::new();
    for part in Part::ALL.into_iter().filter(|p| parts.contains(p)) {
        let of_part: Vec<&CaseResult> = results.iter().filter(|r| r.case.part == part).collect();
        let ds: Vec<&str> = dbmss
            .iter()
            .copied()
            .filter(|d| of_part.iter().any(|r| r.case.dbms == *d))
            .collect();
        if part == Part::Fig10 || ds.is_empty() {
            out.extend(part_findings(part, &[], None));
            continue;
        }
        for d in ds {
            let of: Vec<CaseResult> = of_part
                .iter()
                .filter(|r| r.case.dbms == d)
                .map(|r| (*r).clone())
                .collect();
            for mut f in part_findings(part, &of, Some(d)) {
                if split {
                    f.id = format!("{}.{d}", f.id);
                    f.what = format!("{}: {}", dbms_label(d), f.what);
                }
                out.push(f);
            }
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

fn part_findings(part: Part, results: &[CaseResult], dbms: Option<&str>) -> Vec<Finding> {
    match part {
        Part::Fig6To9 => findings_of(results, dbms),
        Part::Fig10 => vec![fig10_finding()],
        Part::Fig11 => fig11_findings(results),
        Part::Fig12 => fig12_findings(results),
        Part::Fig13 => fig13_findings(results),
    }
}

/// Fig. 10: nilfs2's cleaner at a 10 s and a 1 s interval. Nothing here
/// corresponds to it, so its finding is "not comparable" with the reason.
fn fig10_finding() -> Finding {
    judged(
        "wang11-oltp.fig10.gc-degradation",
        "Figure 10",
        "transaction throughput with the log-structured file system's garbage collection at a moderate (10 s) and a severe (1 s) cleaning interval",
        None,
        Some((
            Verdict::NotComparable,
            "the paper's garbage collection is nilfs2's segment cleaner run at a cleaning interval; this kernel has no nilfs2, and btrfs, which stands in for it, has no segment cleaner with an interval to set (it frees whole extents as they empty, and compacts only on an explicit balance), so no run here has the paper's moderate or severe setting. The SSD's own garbage collection (the simulated FTL's, which a fuller device or less over-provisioning makes more frequent) is another mechanism, not the one Fig. 10 varies".into(),
        )),
        q("section 3.2.3", "The degradation ratios were varied around 0.77% – 10.44% with a moderate configuration (10 seconds) and 17.51% – 38.83% even with a severe configuration (1 second)."),
    )
}

/// One measure of the run with this profile, file system and variant.
fn pick(
    results: &[CaseResult],
    profile: &str,
    fs: &str,
    variant: impl Fn(&Case) -> bool,
) -> Option<Measures> {
    results
        .iter()
        .find(|r| r.case.profile == profile && r.case.fs == fs && variant(&r.case))
        .map(|r| measures(&r.result))
}

fn list(points: &[(String, Option<f64>)], digits: usize) -> String {
    points
        .iter()
        .map(|(k, v)| format!("{k} {}", cell(*v, digits)))
        .collect::<Vec<_>>()
        .join(", ")
}

/// Fig. 11: tpmC and bytes per transaction at each buffer size, per file
/// system, on the Mtron profile.
fn fig11_findings(results: &[CaseResult]) -> Vec<Finding> {
    let mtron = "mtron-pro7500";
    let series = |fs: &str, f: fn(&Measures) -> Option<f64>| -> Vec<(String, Option<f64>)> {
        FIG11_BUFFERS
            .iter()
            .map(|b| {
                let m = pick(results, mtron, fs, |c| c.buffer.as_deref() == Some(*b));
                (b.to_string(), m.as_ref().and_then(f))
            })
            .collect()
    };
    let complete =
        |v: &[(String, Option<f64>)]| -> Option<Vec<f64>> { v.iter().map(|p| p.1).collect() };
    // tpmC rises with the buffer on both file systems.
    let tpmc: Vec<_> = FILE_SYSTEMS
        .iter()
        .map(|fs| series(fs, |m| m.tpmc))
        .collect();
    let rise = (|| -> Option<(bool, f64)> {
        let mut holds = true;
        let mut gain = Vec::new();
        for v in &tpmc {
            let v = complete(v)?;
            holds &= v.windows(2).all(|w| rises(w[0], w[1]));
            gain.push(v[v.len() - 1] / v[0]);
        }
        Some((holds, gain.iter().sum::<f64>() / gain.len() as f64))
    })();
    let tpmc_text = FILE_SYSTEMS
        .iter()
        .zip(&tpmc)
        .map(|(fs, v)| format!("{fs}: {}", list(v, 0)))
        .collect::<Vec<_>>()
        .join("; ");
    // The btrfs/ext2 speed-up falls as the buffer grows.
    let speedup: Vec<(String, Option<f64>)> = FIG11_BUFFERS
        .iter()
        .enumerate()
        .map(|(i, b)| {
            let s = match (tpmc[1][i].1, tpmc[0][i].1) {
                (Some(bt), Some(e)) if e > 0.0 => Some(bt / e),
                _ => None,
            };
            (b.to_string(), s)
        })
        .collect();
    let fall = complete(&speedup).map(|v| {
        (
            v.windows(2).all(|w| falls(w[0], w[1])),
            v[v.len() - 1] / v[0],
        )
    });
    // Fewer writes reach the file system per transaction with a larger buffer.
    let writes: Vec<_> = FILE_SYSTEMS
        .iter()
        .map(|fs| series(fs, |m| m.logical_write_bytes_per_txn.map(|b| b / 1024.0)))
        .collect();
    let physical: Vec<_> = FILE_SYSTEMS
        .iter()
        .map(|fs| series(fs, |m| m.physical_write_bytes_per_txn.map(|b| b / 1024.0)))
        .collect();
    let reduced = (|| -> Option<(bool, f64)> {
        let mut holds = true;
        let mut ratio = Vec::new();
        for v in &writes {
            let v = complete(v)?;
            holds &= falls(v[0], v[v.len() - 1]);
            ratio.push(v[v.len() - 1] / v[0]);
        }
        Some((holds, ratio.iter().sum::<f64>() / ratio.len() as f64))
    })();
    let kib_text = |v: &[Vec<(String, Option<f64>)>]| {
        FILE_SYSTEMS
            .iter()
            .zip(v)
            .map(|(fs, v)| format!("{fs}: {}", list(v, 1)))
            .collect::<Vec<_>>()
            .join("; ")
    };
    vec![
        judged("wang11-oltp.fig11.tpmc-rises-with-buffer", "Figure 11", "mtron-pro7500: tpmC at each DBMS buffer size, per file system (measured: largest / smallest buffer, mean over file systems)",
            rise.map(|r| r.1),
            rise.map(|(holds, gain)| (Verdict::of(holds), format!("tpmC by buffer, {tpmc_text}; largest / smallest {gain:.2}x (mean over ext2 and btrfs){}", if holds { "" } else { "; not every step rises by more than 5 %" }))),
            q("section 3.3.1", "The absolute performance increased as we increased the buffer size of two DBMSs on both file systems.")),
        judged("wang11-oltp.fig11.btrfs-speedup-falls-with-buffer", "Figure 11", "mtron-pro7500: tpmC with btrfs (for nilfs2) / with ext2 at each buffer size (measured: at the largest / at the smallest)",
            fall.map(|f| f.1),
            fall.map(|(holds, r)| (Verdict::of(holds), format!("btrfs / ext2 tpmC by buffer: {} (btrfs standing in for nilfs2); largest-buffer / smallest-buffer speed-up {r:.2}{}", list(&speedup, 2), if holds { "" } else { "; the speed-up does not fall by more than 5 % at every step" }))),
            q("section 3.3.1", "However, the performance speedup of nilfs2 to ext2fs decreased.")),
        judged("wang11-oltp.fig11.writes-reaching-fs-per-transaction", "Figure 11", "mtron-pro7500: KiB written to the file system per transaction, largest / smallest buffer (mean over file systems)",
            reduced.map(|r| r.1),
            reduced.map(|(holds, r)| (Verdict::of(holds), format!("logical KiB written per transaction by buffer, {}; physical, {}; largest / smallest {r:.2}x{}", kib_text(&writes), kib_text(&physical), if holds { " (the paper's \"greatly\" is not scored)" } else { "; not reduced by more than 5 % on both file systems" }))),
            q("section 3.3.1", "With large database buffer size, a lot of random writes can be cached in the database buffer, the amount of random writes reaching to the file system was greatly reduced.")),
    ]
}

/// Fig. 12: transactions per minute (all types) under Table 3's three mixes,
/// per file system, on the Mtron profile.
fn fig12_findings(results: &[CaseResult]) -> Vec<Finding> {
    let mtron = "mtron-pro7500";
    let tpm = |fs: &str, mix: &str| {
        pick(results, mtron, fs, |c| c.mix.as_deref() == Some(mix))
            .and_then(|m| m.transactions_per_min)
    };
    let by_mix = |fs: &str| -> Option<[f64; 3]> {
        Some([
            tpm(fs, FIG12_MIXES[0])?,
            tpm(fs, FIG12_MIXES[1])?,
            tpm(fs, FIG12_MIXES[2])?,
        ])
    };
    let text_of = |fs: &str| {
        let v: Vec<(String, Option<f64>)> = FIG12_MIXES
            .iter()
            .map(|m| (m.to_string(), tpm(fs, m)))
            .collect();
        format!("{fs}: {}", list(&v, 0))
    };
    let tpm_text = FILE_SYSTEMS.map(text_of).join("; ");
    let read_higher = (|| -> Option<(bool, f64)> {
        let mut holds = true;
        let mut ratio = Vec::new();
        for fs in FILE_SYSTEMS {
            let [standard, read, write] = by_mix(fs)?;
            holds &= rises(standard, read) && rises(write, read);
            ratio.push(read / standard);
        }
        Some((holds, ratio.iter().sum::<f64>() / ratio.len() as f64))
    })();
    let speedups = (|| -> Option<[f64; 3]> {
        let (e, b) = (by_mix("ext2")?, by_mix("btrfs")?);
        Some([b[0] / e[0], b[1] / e[1], b[2] / e[2]])
    })();
    vec![
        judged("wang11-oltp.fig12.read-intensive-throughput-higher", "Figure 12", "mtron-pro7500: transactions per minute (all types) under Table 3's mixes (measured: read-intensive / standard, mean over file systems)",
            read_higher.map(|r| r.1),
            read_higher.map(|(holds, r)| (Verdict::of(holds), format!("transactions/min by mix, {tpm_text}; read-intensive / standard {r:.2}x{}", if holds { "" } else { "; read-intensive is not above both other mixes by more than 5 % on both file systems" }))),
            q("section 3.3.2", "As shown in Fig. 12, absolute transaction throughputs were higher for read-intensive workloads.")),
        judged("wang11-oltp.fig12.btrfs-speedup-higher-write-intensive", "Figure 12", "mtron-pro7500: transactions per minute with btrfs (for nilfs2) / with ext2, per mix (measured: the write-intensive mix's)",
            speedups.map(|s| s[2]),
            speedups.map(|s| {
                let holds = rises(s[0], s[2]) && rises(s[1], s[2]);
                (Verdict::of(holds), format!("btrfs / ext2 speed-up (btrfs standing in for nilfs2): standard {:.2}, read-intensive {:.2}, write-intensive {:.2}{}", s[0], s[1], s[2], if holds { "" } else { "; write-intensive's is not above both others by more than 5 %" }))
            }),
            q("section 3.3.2", "The speedups from ext2fs to nilfs2 were conversely higher for write-intensive workloads.")),
    ]
}

/// Fig. 13: transactions per minute with `none` (Noop) and the two
/// stand-ins for Anticipatory, on the cases the paper names and the rest.
fn fig13_findings(results: &[CaseResult]) -> Vec<Finding> {
    let tpm = |p: &str, fs: &str, sch: &str| {
        pick(results, p, fs, |c| c.scheduler.as_deref() == Some(sch))
            .and_then(|m| m.transactions_per_min)
    };
    let stand_ins = &FIG13_SCHEDULERS[1..];
    let line = |p: &str, fs: &str| {
        let v: Vec<(String, Option<f64>)> = FIG13_SCHEDULERS
            .iter()
            .map(|s| (s.to_string(), tpm(p, fs, s)))
            .collect();
        format!("{p} {fs}: {}", list(&v, 0))
    };
    let missing = |p: &str, fs: &str| -> Vec<&str> {
        FIG13_SCHEDULERS
            .iter()
            .copied()
            .filter(|s| tpm(p, fs, s).is_none())
            .collect()
    };
    let named = |p: &str, fs: &str, id: &str, what: &str| {
        let judgement = if results.is_empty() {
            None
        } else if !missing(p, fs).is_empty() {
            Some((Verdict::NotComparable, format!("no run with {} on {p} {fs} (the notes say why: a device may offer no scheduler choice); {}", missing(p, fs).join(", "), line(p, fs))))
        } else {
            let none = tpm(p, fs, "none").unwrap_or(0.0);
            let holds = stand_ins
                .iter()
                .all(|s| rises(tpm(p, fs, s).unwrap_or(f64::INFINITY), none));
            Some((Verdict::of(holds), format!("transactions/min, {} (none for Noop; mq-deadline and bfq for Anticipatory, which Linux no longer has){}", line(p, fs), if holds { "" } else { "; none is not above both by more than 5 %" })))
        };
        let measured = match (tpm(p, fs, "none"), tpm(p, fs, "mq-deadline")) {
            (Some(n), Some(d)) if d > 0.0 => Some(n / d),
            _ => None,
        };
        judged(id, "Figure 13", what, measured, judgement,
            q("section 3.3.3", "The Noop scheduler can help to have further improvement in the case of nilfs2 on Mtron SSD and ext2fs on Intel SSD."))
    };
    // The rest: mtron with ext2, intel with btrfs; "even worse in some cases".
    let rest = [("mtron-pro7500", "ext2"), ("intel-x25e", "btrfs")];
    let rest_worse = (|| -> Option<u32> {
        let mut worse = 0u32;
        for (p, fs) in rest {
            let none = tpm(p, fs, "none")?;
            for s in stand_ins {
                if falls(tpm(p, fs, s)?, none) {
                    worse += 1;
                }
            }
        }
        Some(worse)
    })();
    let rest_text = rest
        .iter()
        .map(|(p, fs)| line(p, fs))
        .collect::<Vec<_>>()
        .join("; ");
    vec![
        named("mtron-pro7500", "btrfs", "wang11-oltp.fig13.none-helps-mtron-btrfs", "mtron-pro7500, btrfs (for nilfs2): transactions per minute with none (Noop) / with mq-deadline"),
        named("intel-x25e", "ext2", "wang11-oltp.fig13.none-helps-intel-ext2", "intel-x25e, ext2: transactions per minute with none (Noop) / with mq-deadline"),
        judged("wang11-oltp.fig13.none-worse-in-some-rest-cases", "Figure 13", "mtron-pro7500 ext2 and intel-x25e btrfs: (case, stand-in) pairs where none is slower than mq-deadline or bfq by more than 5 %",
            rest_worse.map(f64::from),
            rest_worse.map(|w| (Verdict::of(w > 0), format!("none slower in {w} of 4 pairs; transactions/min, {rest_text}"))),
            q("section 3.3.3", "But it is not clear about superiority over the Anticipatory scheduler in the rest cases, and the Noop scheduler is even worse in some cases.")),
    ]
}

fn findings_of(results: &[CaseResult], dbms: Option<&str>) -> Vec<Finding> {
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
    let intel_years_of = |fs: &str| {
        m.iter()
            .find(|(c, _)| c.profile == "intel-x25e" && c.fs == fs)
            .and_then(|(_, x)| x.endurance_years)
    };
    // Table 6's rows for the paper's DBMS that this one stands for: MySQL
    // for MariaDB; PostgreSQL stands in for the commercial DBMS.
    let (paper_ext2, paper_nilfs2, paper_dbms) = if dbms == Some("mariadb") {
        (2.19, 1.43, "MySQL")
    } else {
        (5.47, 2.32, "Commercial DBMS")
    };
    let table6 = q("Table 6", "Intel (years) Commercial DBMS with ext2fs 5.47 MySQL with ext2fs 2.19 Commercial DBMS with nilfs2 2.32 MySQL with nilfs2 1.43");
    let scale = "the paper ran 30 warehouses and 30 users on a real X25-E, these runs a few warehouses and terminals on the simulated one, and the years scale with the physical write rate, which scales with the load";
    let per_fs_years = |fs: &str, paper_fs: &str, paper: f64| {
        let y = intel_years_of(fs);
        judged(
            &format!("wang11-oltp.table6.intel-endurance-years-{fs}"),
            "Table 6",
            &format!("intel-x25e with {fs}: endurance from 2 PB rated lifetime writes (years); the paper's row: {paper_dbms} with {paper_fs}, {paper} years"),
            y,
            y.map(|y| (Verdict::NotComparable, format!("{y:.2} years here against the paper's {paper:.2} ({paper_dbms} with {paper_fs}); {scale}{}", if fs == "btrfs" { "; btrfs stands in for nilfs2, absent from this kernel" } else { "" }))),
            table6.clone(),
        )
    };
    let years_ratio = match (intel_years_of("btrfs"), intel_years_of("ext2")) {
        (Some(b), Some(e)) if e > 0.0 => Some(b / e),
        _ => None,
    };
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
        per_fs_years("ext2", "ext2fs", paper_ext2),
        per_fs_years("btrfs", "nilfs2", paper_nilfs2),
        judged("wang11-oltp.table6.intel-endurance-btrfs-over-ext2", "Table 6",
            &format!("intel-x25e: endurance with btrfs (for nilfs2) / with ext2; the paper's {paper_dbms} rows: {:.2}", paper_nilfs2 / paper_ext2),
            years_ratio,
            years_ratio.map(|r| (Verdict::of(falls(1.0, r)), format!("btrfs's endurance is {r:.2}x ext2's here, the paper's nilfs2 {:.2}x ext2fs's ({paper_dbms}); the log-structured file system {} the shorter life", paper_nilfs2 / paper_ext2, if falls(1.0, r) { "gives" } else { "does not give" }))),
            table6.clone()),
    ]
}

fn cell(v: Option<f64>, digits: usize) -> String {
    v.map_or("-".into(), |v| format!("{v:.digits$}"))
}

/// The suite's summary: the findings and one row per case (the parts'
/// findings: those of the parts the runs belong to).
pub fn summary(results: &[CaseResult], device: &str, notes: Vec<String>) -> SuiteSummary {
    let mut parts = vec![Part::Fig6To9];
    for r in results {
        if !parts.contains(&r.case.part) {
            parts.push(r.case.part);
        }
    }
    summary_for(results, &parts, device, notes)
}

/// The summary of the runs of `parts`: Figures 6-9's table, the other
/// parts' table (when they ran), and the findings of `parts`.
pub fn summary_for(
    results: &[CaseResult],
    parts: &[Part],
    device: &str,
    notes: Vec<String>,
) -> SuiteSummary {
    let rows = results
        .iter()
        .filter(|r| r.case.part == Part::Fig6To9)
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
    let part_rows: Vec<Vec<String>> = results
        .iter()
        .filter(|r| r.case.part != Part::Fig6To9)
        .map(|r| {
            let x = measures(&r.result);
            let kib = |v: Option<f64>| cell(v.map(|b| b / 1024.0), 1);
            vec![
                r.case.part.name().to_string(),
                dbms_label(&r.case.dbms).to_string(),
                r.case.profile.clone(),
                r.case.fs.clone(),
                r.case.variant(),
                cell(x.tpmc, 0),
                cell(x.transactions_per_min, 0),
                kib(x.logical_write_bytes_per_txn),
                kib(x.physical_write_bytes_per_txn),
                kib(x.physical_read_bytes_per_txn),
                cell(x.ftl_write_amplification, 2),
            ]
        })
        .collect();
    let mut s = SuiteSummary {
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
        findings: findings_for(results, parts),
        notes,
        flagged_runs: Vec::new(),
        detail,
    };
    // Figures 6-9's table only when that part was asked for or ran (a
    // `--parts fig11` run would otherwise show it empty).
    if !parts.contains(&Part::Fig6To9) && s.tables[0].rows.is_empty() {
        s.tables.clear();
    }
    if !part_rows.is_empty() {
        s.tables.push(SummaryTable {
            id: "wang11-oltp-parts".into(),
            title: "TPC-C runs: Figures 11-13 (buffer size, workload, IO scheduler)".into(),
            paragraphs: vec![
                "One flashlab oltp run per point; tpm counts all five transaction types (the paper's Figs 12 and 13 plot tpm), tpmC New-Orders only. Per transaction: KiB the DBMS wrote to the file system (logical), and KiB written to and read from the device (physical).".into(),
            ],
            header: [
                "part", "DBMS", "profile", "fs", "variant", "tpmC", "tpm", "logical write KiB/txn",
                "physical write KiB/txn", "physical read KiB/txn", "FTL WAF",
            ]
            .map(str::to_string)
            .to_vec(),
            rows: part_rows,
            compare: Compare::None,
            compare_title: None,
            detail_only: false,
        });
    }
    s
}

/// Wang et al.'s TPC-C matrix as a kind of its own, beside the registry's
/// suites: each case is a whole `flashlab oltp` run (the CLI's `flashlab
/// suite wang11-oltp` performs them), so it has no plan of executor steps,
/// no journal and no figures; its summary is of the runs' `oltp.json`. The
/// report finds it by its results directory's manifest
/// ([`super::kind`]).
pub struct OltpMatrix;

impl OltpMatrix {
    /// The name on the command line and in the results directory's manifest.
    pub fn name(&self) -> &'static str {
        NAME
    }

    /// The paper, as cited.
    pub fn title(&self) -> &'static str {
        TITLE
    }

    /// The runs of `parts`, in the order of [`Part::ALL`]
    /// ([`part_cases`] of each).
    pub fn cases(
        &self,
        parts: &[Part],
        dbmss: &[String],
        profiles: &[String],
        file_systems: &[String],
    ) -> Vec<Case> {
        Part::ALL
            .into_iter()
            .filter(|p| parts.contains(p))
            .flat_map(|p| part_cases(p, dbmss, profiles, file_systems))
            .collect()
    }

    /// The typed summary of the finished runs of `parts` ([`summary_for`]).
    pub fn summarise(
        &self,
        results: &[CaseResult],
        parts: &[Part],
        device: &str,
        notes: Vec<String>,
    ) -> SuiteSummary {
        summary_for(results, parts, device, notes)
    }

    /// What the report says of a results directory without the summary:
    /// the matrix has no journal to resume, so its runs start again.
    pub fn unfinished_hint(&self, dir: &std::path::Path) -> String {
        format!(
            "the matrix did not finish (it writes its summary after its last run); `flashlab suite {NAME} -o NEW-DIR` runs it again ({} keeps the finished runs' oltp.json)",
            dir.display()
        )
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

    /// The runs of `part` with tpmC (and all transactions) from `tpmc` and
    /// logical and physical writes from `write`, both of the case.
    fn part_results(
        part: Part,
        tpmc: impl Fn(&Case) -> f64,
        write: impl Fn(&Case) -> f64,
    ) -> Vec<CaseResult> {
        part_cases(part, &["postgres".to_string()], &[], &[])
            .into_iter()
            .map(|c| {
                let (t, w) = (tpmc(&c), write(&c));
                CaseResult {
                    result: doc(t, 8e6, w, 1e6, w, 100.0),
                    case: c,
                }
            })
            .collect()
    }

    fn text_of<'a>(f: &'a [Finding], id: &str) -> &'a str {
        &Finding::by_id(f, id)
            .unwrap_or_else(|| panic!("no {id}"))
            .text
    }

    #[test]
    fn each_part_has_its_runs_under_their_own_names() {
        let dbmss = DBMSS.map(String::from);
        let count = |p| part_cases(p, &dbmss, &[], &[]).len();
        assert_eq!(count(Part::Fig10), 0);
        assert_eq!(count(Part::Fig11), 2 * 2 * FIG11_BUFFERS.len());
        assert_eq!(count(Part::Fig12), 2 * FIG12_MIXES.len(), "first DBMS only");
        assert_eq!(
            count(Part::Fig13),
            2 * 2 * FIG13_SCHEDULERS.len(),
            "first DBMS only"
        );
        let mut names: Vec<String> = Part::ALL
            .into_iter()
            .flat_map(|p| {
                part_cases(
                    p,
                    &dbmss,
                    &PROFILES.map(String::from),
                    &FILE_SYSTEMS.map(String::from),
                )
            })
            .map(|c| c.dir_name())
            .collect();
        let n = names.len();
        names.sort();
        names.dedup();
        assert_eq!(names.len(), n, "every run has its own directory");
        assert!(names.contains(&"fig11-mtron-pro7500-ext2-mariadb-buffer-8MB".to_string()));
        assert!(names.contains(&"fig13-intel-x25e-ext2-sched-none".to_string()));
        for p in Part::ALL {
            assert_eq!(Part::parse(p.name()), Some(p));
        }
        // A plan from before the parts reads back as Figures 6-9.
        let old: Case =
            serde_json::from_str(r#"{"dbms":"postgres","profile":"intel-x25e","fs":"ext2"}"#)
                .unwrap();
        assert_eq!(old.part, Part::Fig6To9);
        assert_eq!(old.dir_name(), "intel-x25e-ext2");
    }

    #[test]
    fn fig11_reproduced_when_tpmc_rises_and_the_speedup_falls() {
        let idx = |c: &Case| {
            FIG11_BUFFERS
                .iter()
                .position(|b| c.buffer.as_deref() == Some(*b))
                .unwrap() as f64
        };
        // ext2 doubles per step, btrfs grows by half: the speed-up falls;
        // writes per transaction fall as the buffer grows.
        let good = part_results(
            Part::Fig11,
            |c| {
                if c.fs == "ext2" {
                    500.0 * 2f64.powf(idx(c))
                } else {
                    1500.0 * 1.5f64.powf(idx(c))
                }
            },
            |c| 4e6 / (1.0 + idx(c)),
        );
        let f = findings(&good);
        assert!(text_of(&f, "wang11-oltp.fig11.tpmc-rises-with-buffer").starts_with("reproduced: "));
        assert!(
            text_of(&f, "wang11-oltp.fig11.btrfs-speedup-falls-with-buffer")
                .starts_with("reproduced: ")
        );
        assert!(
            text_of(&f, "wang11-oltp.fig11.writes-reaching-fs-per-transaction")
                .starts_with("reproduced: ")
        );
        // A flat tpmC (within the noise floor) is not the paper's rise.
        let flat = part_results(Part::Fig11, |c| 1000.0 * (1.0 + 0.01 * idx(c)), |_| 4e6);
        let f = findings(&flat);
        let t = text_of(&f, "wang11-oltp.fig11.tpmc-rises-with-buffer");
        assert!(
            t.starts_with("not reproduced: ") && t.contains("8MB 1000"),
            "{t}"
        );
        assert!(
            text_of(&f, "wang11-oltp.fig11.writes-reaching-fs-per-transaction")
                .starts_with("not reproduced: ")
        );
        assert!(f.iter().all(|f| f.paper.is_some()));
    }

    #[test]
    fn fig12_and_fig13_judge_the_papers_sentences() {
        let mix = |c: &Case| c.mix.clone().unwrap();
        let f = findings(&part_results(
            Part::Fig12,
            |c| match (mix(c).as_str(), c.fs.as_str()) {
                ("read-intensive", _) => 3000.0,
                ("write-intensive", "btrfs") => 2000.0,
                (_, _) => 1000.0,
            },
            |_| 4e6,
        ));
        assert!(
            text_of(&f, "wang11-oltp.fig12.read-intensive-throughput-higher")
                .starts_with("reproduced: ")
        );
        let t = text_of(&f, "wang11-oltp.fig12.btrfs-speedup-higher-write-intensive");
        assert!(
            t.starts_with("reproduced: ") && t.contains("write-intensive 2.00"),
            "{t}"
        );

        let sched = |c: &Case| c.scheduler.clone().unwrap();
        let results = part_results(
            Part::Fig13,
            |c| {
                if sched(c) == "none" && (c.fs == "btrfs") == (c.profile == "mtron-pro7500") {
                    1200.0
                } else {
                    1000.0
                }
            },
            |_| 4e6,
        );
        let f = findings(&results);
        assert!(text_of(&f, "wang11-oltp.fig13.none-helps-mtron-btrfs").starts_with("reproduced: "));
        assert!(text_of(&f, "wang11-oltp.fig13.none-helps-intel-ext2").starts_with("reproduced: "));
        assert!(
            text_of(&f, "wang11-oltp.fig13.none-worse-in-some-rest-cases")
                .starts_with("not reproduced: none slower in 0 of 4")
        );
        // Without its bfq run, the Intel case cannot be judged.
        let partial: Vec<CaseResult> = results
            .into_iter()
            .filter(|r| {
                !(r.case.profile == "intel-x25e" && r.case.scheduler.as_deref() == Some("bfq"))
            })
            .collect();
        let t = text_of(
            &findings(&partial),
            "wang11-oltp.fig13.none-helps-intel-ext2",
        )
        .to_string();
        assert!(t.starts_with("not comparable: no run with bfq"), "{t}");
    }

    #[test]
    fn fig10_is_not_comparable_and_says_why() {
        let f = findings_for(&[], &[Part::Fig10]);
        assert_eq!(f.len(), 1);
        assert!(f[0].measured.is_none());
        assert!(f[0].text.starts_with("not comparable: ") && f[0].text.contains("no nilfs2"));
        assert!(f[0].paper.as_ref().unwrap().text.contains("(1 second)"));
        // Requested parts without runs are not measured, not guessed.
        let f = findings_for(&[], &Part::ALL);
        assert!(f
            .iter()
            .filter(|f| f.id != "wang11-oltp.fig10.gc-degradation")
            .all(|f| f.text == "not measured"));
    }

    #[test]
    fn table6_per_file_system_quotes_the_dbmss_row() {
        let cs = cases(
            &DBMSS.map(String::from),
            &["intel-x25e".to_string()],
            &FILE_SYSTEMS.map(String::from),
        );
        // btrfs writes twice the bytes: half the years.
        let results: Vec<CaseResult> = cs
            .iter()
            .map(|c| CaseResult {
                case: c.clone(),
                result: doc(
                    1000.0,
                    8e6,
                    4e6,
                    1e6,
                    if c.fs == "btrfs" { 8e6 } else { 4e6 },
                    100.0,
                ),
            })
            .collect();
        let f = findings(&results);
        let t = text_of(&f, "wang11-oltp.table6.intel-endurance-years-ext2.mariadb");
        assert!(
            t.starts_with("not comparable: ") && t.contains("the paper's 2.19 (MySQL with ext2fs)"),
            "{t}"
        );
        let t = text_of(
            &f,
            "wang11-oltp.table6.intel-endurance-years-btrfs.postgres",
        );
        assert!(
            t.contains("the paper's 2.32 (Commercial DBMS with nilfs2)"),
            "{t}"
        );
        let r = Finding::by_id(
            &f,
            "wang11-oltp.table6.intel-endurance-btrfs-over-ext2.postgres",
        )
        .unwrap();
        assert!((r.measured.unwrap() - 0.5).abs() < 1e-9);
        assert!(r.text.starts_with("reproduced: "));
    }
}
