//! The report model: what a report says, independent of how it is shown.
//!
//! Built from results directories only (manifest.json, each run's run.json
//! and records.bin), so any report can be rebuilt later without the device.
//! Statistics are recomputed from every record ([`crate::scan`]) rather than
//! copied from run.json, so a report of an interrupted run, or of a directory
//! written by an older flashlab, is still right.
//!
//! Beyond the schema's required parts, these are read when present
//! (documented in docs/report.md):
//! - the manifest's `suite` (`{name, state_enforcement, config}`, written by
//!   `flashlab suite`), or a top-level `state_enforcement`: how the device
//!   state was enforced before the runs (uFLIP section 4.1);
//! - the suite plan `plan.json` and journal `suite.json`: the `calibrate` steps and the
//!   `calibration` they measured (`{startup, period}` per baseline) give the
//!   start-up phase and running-phase period of the calibration runs (uFLIP
//!   section 4.2), marked on their latency-over-IO-number charts;
//! - `phases` (`{startup_ios, period_ios}`) in a run's `run.json` or its
//!   manifest entry: the same for any run, for tools other than the suite.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use flashlab_device::{ClockKind, DeviceInfo, DeviceKind};
use flashlab_results::{
    HostInfo, Manifest, RunStats, RunStatus, ToolInfo, Workload, SCHEMA_VERSION,
};
use serde::Serialize;
use serde_json::Value;

use crate::error::ReportError;
use crate::scan::{scan_run_with, CdfPoint, Histogram, Timeline, CDF_POINTS, TIMELINE_BUCKETS};
use crate::svg::Chart;
use crate::text;
use crate::Options;

/// Identifies the layout of the JSON output; bumped when it changes incompatibly.
pub const REPORT_FORMAT: &str = "flashlab-report/1";

/// A whole report: one or more devices (results directories), and the runs
/// they have in common when there are several.
#[derive(Clone, Debug, Serialize)]
pub struct Report {
    pub format: &'static str,
    /// The crate that rendered it (`flashlab-report VERSION`).
    pub generator: String,
    pub title: String,
    pub devices: Vec<DeviceReport>,
    /// Runs that several devices have (same name), in order of first appearance.
    pub comparisons: Vec<Comparison>,
    /// Sections comparing the devices, added by [`Analysis::compare`]
    /// (side-by-side Table 3, overlaid per-device curves); shown first.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub sections: Vec<Section>,
}

/// One results directory.
#[derive(Clone, Debug, Serialize)]
pub struct DeviceReport {
    /// The name shown in legends; unique within a report.
    pub label: String,
    /// Colour index of this device in comparison charts.
    pub color: usize,
    /// The directory as it was given.
    pub results_dir: String,
    pub provenance: Provenance,
    /// Sections added by [`Analysis`] hooks (Table-3 row, design hints...).
    pub sections: Vec<Section>,
    pub runs: Vec<RunReport>,
}

/// Where the results come from: tool, host, device, dates, seeds.
#[derive(Clone, Debug, Serialize)]
pub struct Provenance {
    pub schema_version: u32,
    pub tool: ToolInfo,
    pub created_unix_s: u64,
    pub created_utc: String,
    pub command_line: Vec<String>,
    pub host: HostInfo,
    pub device: DeviceInfo,
    pub engine: String,
    /// The simulator profile (`identity.profile`), when simulated.
    pub profile: Option<String>,
    /// The suite that produced the directory (`flashlab suite NAME`), if any.
    pub suite: Option<String>,
    /// How the device state was enforced, if the manifest says.
    pub state_enforcement: Option<Value>,
    /// The distinct seeds of the runs' patterns, in run order.
    pub seeds: Vec<u64>,
}

/// The start-up phase and running-phase period of a run (uFLIP section 4.2), when known.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Phases {
    /// IOs of the start-up phase.
    pub startup_ios: Option<u64>,
    /// Period of the running phase's oscillation, in IOs.
    pub period_ios: Option<u64>,
}

/// One run: its definition, statistics from all records, and chart data.
#[derive(Clone, Debug, Serialize)]
pub struct RunReport {
    pub name: String,
    /// Directory relative to the results directory.
    pub dir: String,
    pub description: String,
    pub status: RunStatus,
    pub error: Option<String>,
    pub workload: Workload,
    /// Records found in records.bin.
    pub records: u64,
    /// Why some or all data is missing (no records yet, damaged file...).
    pub notes: Vec<String>,
    pub stats: RunStats,
    pub phases: Option<Phases>,
    /// Device-specific accounting from run.json (the simulator's flash operations...).
    pub device_stats: Option<Value>,
    pub timeline: Timeline,
    pub cdf: Vec<CdfPoint>,
    pub histogram: Histogram,
}

impl DeviceReport {
    /// Provenance as (key, plain-text value) rows, shared by the renderers.
    pub fn provenance_rows(&self) -> Vec<(&'static str, String)> {
        let d = self;
        let p = &d.provenance;
        let dev = &p.device;
        let kind = match dev.kind {
            DeviceKind::File => "file",
            DeviceKind::BlockDevice => "block device",
            DeviceKind::Simulated => "simulated SSD",
        };
        let clock = match dev.clock {
            ClockKind::Wall => "wall clock",
            ClockKind::Simulated => "simulated time",
        };
        let mut rows = vec![
            (
                "device",
                format!(
                    "{} ({kind}, {}, logical block {} B)",
                    dev.name,
                    text::bytes_approx(dev.size_bytes),
                    dev.logical_block_bytes
                ),
            ),
            ("engine and clock", format!("{}, {clock}", p.engine)),
        ];
        if let Some(profile) = &p.profile {
            rows.push(("simulator profile", profile.clone()));
        }
        if let Some(suite) = &p.suite {
            rows.push(("suite", suite.clone()));
        }
        for key in ["model", "vendor", "serial", "firmware"] {
            if let Some(v) = dev.identity.get(key) {
                rows.push(match key {
                    "model" => ("model", v.clone()),
                    "vendor" => ("vendor", v.clone()),
                    "serial" => ("serial", v.clone()),
                    _ => ("firmware", v.clone()),
                });
            }
        }
        rows.push((
            "state enforcement",
            match &p.state_enforcement {
                None => "not recorded (no state enforcement was logged for these runs)".to_string(),
                Some(Value::String(s)) => s.clone(),
                Some(Value::Object(m)) => m
                    .iter()
                    .map(|(k, v)| {
                        format!(
                            "{k}: {}",
                            v.as_str().map_or_else(|| v.to_string(), str::to_string)
                        )
                    })
                    .collect::<Vec<_>>()
                    .join(", "),
                Some(v) => v.to_string(),
            },
        ));
        rows.push((
            "seed",
            if p.seeds.is_empty() {
                "none (no pattern runs)".into()
            } else if p.seeds.len() > 6 {
                // Suites derive one seed per run: list a few, the rest are in each run's workload.
                format!(
                    "{}, ... ({} distinct seeds, one per run; each run's workload has its own)",
                    p.seeds[..3]
                        .iter()
                        .map(u64::to_string)
                        .collect::<Vec<_>>()
                        .join(", "),
                    p.seeds.len()
                )
            } else {
                p.seeds
                    .iter()
                    .map(u64::to_string)
                    .collect::<Vec<_>>()
                    .join(", ")
            },
        ));
        rows.push((
            "tool",
            format!(
                "{} {} (commit {})",
                p.tool.name, p.tool.version, p.tool.git_commit
            ),
        ));
        rows.push(("created", p.created_utc.clone()));
        rows.push((
            "host",
            format!(
                "{}, kernel {}, {} CPUs",
                p.host.hostname, p.host.kernel, p.host.cpus
            ),
        ));
        rows.push(("command line", text::shell_join(&p.command_line)));
        rows.push(("results directory", d.results_dir.clone()));
        rows.push(("schema", format!("results schema {}", p.schema_version)));
        rows
    }
}

impl RunReport {
    /// Whether there is anything to plot.
    pub fn has_data(&self) -> bool {
        !self.timeline.buckets.is_empty()
    }
}

/// A run name shared by several devices: `(device index, run index)` pairs.
#[derive(Clone, Debug, Serialize)]
pub struct Comparison {
    pub run: String,
    pub entries: Vec<(usize, usize)>,
    /// Whether the HTML draws this run's charts side by side (every shared
    /// run up to [`MAX_CHARTED_COMPARISONS`], beyond that the runs the
    /// analyses feature); the table lists every shared run regardless.
    pub charted: bool,
}

/// Side-by-side charts of more shared runs than this would make a
/// comparison of two full suites tens of megabytes: beyond it only the runs
/// an [`Analysis`] features (the uFLIP calibration runs...) get charts.
pub const MAX_CHARTED_COMPARISONS: usize = 24;

/// A titled block of text, tables and charts added by an [`Analysis`].
#[derive(Clone, Debug, Default, Serialize)]
pub struct Section {
    /// Unique within the device; used for anchors.
    pub id: String,
    pub title: String,
    pub paragraphs: Vec<String>,
    pub tables: Vec<Table>,
    pub charts: Vec<Chart>,
}

/// A simple table: cells are plain text.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct Table {
    pub header: Vec<String>,
    pub rows: Vec<Vec<String>>,
}

/// The hook for later analyses (uFLIP Table-3 row, device-specific design
/// hints, micro-benchmark charts): given a device's report and its results
/// directory, return sections to show after its provenance.
pub trait Analysis {
    fn sections(
        &self,
        device: &DeviceReport,
        results_dir: &Path,
    ) -> Result<Vec<Section>, ReportError>;

    /// Sections comparing several devices (each with its results directory),
    /// shown at the top of a comparison. None by default.
    fn compare(&self, _devices: &[(&DeviceReport, &Path)]) -> Result<Vec<Section>, ReportError> {
        Ok(Vec::new())
    }

    /// Runs of this device worth charting side by side when a comparison
    /// has too many shared runs to chart them all.
    fn featured_runs(&self, _device: &DeviceReport, _results_dir: &Path) -> Vec<String> {
        Vec::new()
    }
}

/// A latency to three significant digits ("555us", "3.1ms"): a verdict
/// line is read, not computed with.
fn three_digits(ns: f64) -> String {
    if !(ns.is_finite() && ns >= 1.0) {
        return text::dur_f(ns);
    }
    let step = 10f64.powi(ns.log10().floor() as i32 - 2).max(1.0);
    text::dur_f((ns / step).round() * step)
}

/// The baseline patterns a comparison's verdict lines favour (uFLIP's).
const VERDICT_RUNS: [&str; 4] = ["SR", "RR", "SW", "RW"];
/// Verdict lines for at most this many shared runs when none is a baseline.
const MAX_VERDICTS: usize = 8;
/// Mean latencies closer than this ratio are not called a difference: one
/// run per device says nothing about its run-to-run noise.
const NOISE_RATIO: f64 = 1.05;

impl Report {
    /// One line per shared run and other device, result first: "RW: A is
    /// 4.2x slower than B (mean 3.1 ms against 740 us)", on the mean
    /// latency of the same workload. The baseline patterns when the devices
    /// share any, else the first shared runs. A difference under 5 % is
    /// said to be within noise, not called a winner.
    pub fn verdicts(&self) -> Vec<String> {
        let baseline: Vec<&Comparison> = self
            .comparisons
            .iter()
            .filter(|c| VERDICT_RUNS.contains(&c.run.as_str()))
            .collect();
        let chosen: Vec<&Comparison> = if baseline.is_empty() {
            self.comparisons.iter().take(MAX_VERDICTS).collect()
        } else {
            baseline
        };
        let mut lines = Vec::new();
        for c in chosen {
            let Some(&(d0, r0)) = c.entries.first() else {
                continue;
            };
            let (a, run_a) = (&self.devices[d0], &self.devices[d0].runs[r0]);
            for &(di, ri) in &c.entries[1..] {
                let (b, run_b) = (&self.devices[di], &self.devices[di].runs[ri]);
                let (ma, mb) = (
                    run_a.stats.all.latency.mean_ns,
                    run_b.stats.all.latency.mean_ns,
                );
                if run_a.stats.all.ios == 0 || run_b.stats.all.ios == 0 || ma <= 0.0 || mb <= 0.0 {
                    continue;
                }
                let ratio = ma / mb;
                let means = format!("mean {} against {}", three_digits(ma), three_digits(mb));
                let line = if ratio < NOISE_RATIO && ratio > 1.0 / NOISE_RATIO {
                    format!(
                        "{}: {} and {} are within 5 % ({means}): one run each cannot tell that from noise; repeat the runs to measure it",
                        c.run, a.label, b.label
                    )
                } else if ratio > 1.0 {
                    format!(
                        "{}: {} is {ratio:.1}x slower than {} ({means})",
                        c.run, a.label, b.label
                    )
                } else {
                    format!(
                        "{}: {} is {:.1}x faster than {} ({means})",
                        c.run,
                        a.label,
                        1.0 / ratio,
                        b.label
                    )
                };
                lines.push(line);
            }
        }
        lines
    }

    /// Reads every directory and builds the report. Errors are one line
    /// naming the problem and the fix.
    pub fn build(dirs: &[PathBuf], options: &Options) -> Result<Report, ReportError> {
        if dirs.is_empty() {
            return Err(ReportError::NoDirectories);
        }
        let buckets = timeline_buckets(dirs.iter().map(|d| count_runs(d, options)).sum());
        let mut devices = Vec::with_capacity(dirs.len());
        for (i, dir) in dirs.iter().enumerate() {
            let mut dev = load_device(dir, i, options, buckets)?;
            for a in &options.analyses {
                dev.sections.extend(a.sections(&dev, dir)?);
            }
            devices.push(dev);
        }
        // `--run a,nosuch`: a name no directory has is a typo, not a filter.
        let unknown: Vec<&str> = options
            .runs
            .iter()
            .filter(|name| {
                !devices
                    .iter()
                    .any(|d| d.runs.iter().any(|r| r.name == **name))
            })
            .map(String::as_str)
            .collect();
        if !unknown.is_empty() {
            return Err(ReportError::UnknownRuns {
                runs: unknown.iter().map(|r| r.to_string()).collect(),
                dirs: dirs.iter().map(|d| d.display().to_string()).collect(),
            });
        }
        unique_labels(&mut devices, dirs);
        let mut comparisons = if devices.len() > 1 {
            comparisons(&devices)
        } else {
            Vec::new()
        };
        let mut sections = Vec::new();
        if devices.len() > 1 {
            let pairs: Vec<(&DeviceReport, &Path)> = devices
                .iter()
                .zip(dirs)
                .map(|(d, p)| (d, p.as_path()))
                .collect();
            for a in &options.analyses {
                sections.extend(a.compare(&pairs)?);
            }
            if comparisons.len() > MAX_CHARTED_COMPARISONS {
                let featured: BTreeSet<String> = options
                    .analyses
                    .iter()
                    .flat_map(|a| {
                        pairs
                            .iter()
                            .flat_map(|(d, p)| a.featured_runs(d, p))
                            .collect::<Vec<_>>()
                    })
                    .collect();
                for c in &mut comparisons {
                    c.charted = featured.contains(&c.run);
                }
            }
        }
        let title = match devices.len() {
            1 => format!("flashlab report: {}", devices[0].label),
            _ => format!(
                "flashlab report: {}",
                devices
                    .iter()
                    .map(|d| d.label.as_str())
                    .collect::<Vec<_>>()
                    .join(" vs ")
            ),
        };
        Ok(Report {
            format: REPORT_FORMAT,
            generator: format!("flashlab-report {}", env!("CARGO_PKG_VERSION")),
            title,
            devices,
            comparisons,
            sections,
        })
    }
}

/// Time-series resolution for a report of `runs` runs: full resolution up to
/// 300 runs, then fewer buckets per run so that the HTML of a big suite stays
/// well under 20 MB (about 33 KB per run at full resolution).
pub fn timeline_buckets(runs: usize) -> usize {
    (TIMELINE_BUCKETS * 300 / runs.max(1)).clamp(200, TIMELINE_BUCKETS)
}

/// Runs a directory will contribute (0 if its manifest cannot be read: the
/// real error comes from `load_device`).
fn count_runs(dir: &Path, options: &Options) -> usize {
    let Ok((manifest, _)) = flashlab_results::read_manifest(dir) else {
        return 0;
    };
    manifest
        .runs
        .iter()
        .filter(|r| options.runs.is_empty() || options.runs.contains(&r.name))
        .count()
}

fn load_device(
    dir: &Path,
    index: usize,
    options: &Options,
    buckets: usize,
) -> Result<DeviceReport, ReportError> {
    let shown = dir.display();
    if !dir.exists() {
        return Err(ReportError::Missing {
            path: shown.to_string(),
        });
    }
    if !dir.is_dir() {
        if dir.file_name().is_some_and(|n| n == "manifest.json") {
            let parent = dir
                .parent()
                .map(|p| p.display().to_string())
                .unwrap_or_default();
            return Err(ReportError::ManifestGiven {
                path: shown.to_string(),
                parent,
            });
        }
        return Err(ReportError::NotADirectory {
            path: shown.to_string(),
        });
    }
    let manifest_path = dir.join("manifest.json");
    if !manifest_path.is_file() {
        let mut contains = candidate_subdirs(dir);
        contains.truncate(3);
        return Err(ReportError::NotResults {
            dir: shown.to_string(),
            contains,
        });
    }
    let manifest_shown = || manifest_path.display().to_string();
    let text = read_limited(&manifest_path, flashlab_results::dir::MAX_MANIFEST_BYTES).map_err(
        |source| ReportError::Io {
            path: manifest_shown(),
            source,
        },
    )?;
    let raw: Value =
        serde_json::from_str(&text).map_err(|source| ReportError::DamagedManifest {
            path: manifest_shown(),
            not_a_manifest: false,
            source,
        })?;
    let schema = raw.get("schema_version").and_then(Value::as_u64);
    if schema != Some(SCHEMA_VERSION as u64) {
        return Err(ReportError::Schema {
            path: manifest_shown(),
            found: schema,
        });
    }
    let mut manifest: Manifest =
        serde_json::from_value(raw.clone()).map_err(|source| ReportError::DamagedManifest {
            path: manifest_shown(),
            not_a_manifest: true,
            source,
        })?;
    // The runs' latest status may be only in the manifest's journal (a
    // command still going, or killed); a torn last line is ignored.
    flashlab_results::journal::replay(dir, &mut manifest).map_err(ReportError::Journal)?;

    let selected: Vec<usize> = (0..manifest.runs.len())
        .filter(|&i| {
            options.runs.is_empty() || options.runs.iter().any(|r| *r == manifest.runs[i].name)
        })
        .collect();
    if !options.runs.is_empty() && selected.is_empty() {
        // A suite has hundreds of runs: name a few, not all.
        const NAMED: usize = 8;
        let names: Vec<&str> = manifest.runs.iter().map(|r| r.name.as_str()).collect();
        let listed = match names.len() {
            0 => "(none)".to_string(),
            n if n <= NAMED => names.join(", "),
            n => format!(
                "{}, ... ({n} in all; `flashlab show {shown}` lists them)",
                names[..NAMED].join(", ")
            ),
        };
        return Err(ReportError::NoSuchRun {
            dir: shown.to_string(),
            wanted: options.runs.clone(),
            runs: listed,
        });
    }

    let calibrated = suite_phases(dir);
    let mut runs = Vec::with_capacity(selected.len());
    for i in selected {
        let mut run = load_run(dir, &manifest, &raw, i, buckets);
        if run.phases.is_none() {
            run.phases = calibrated
                .iter()
                .find(|(name, _)| *name == run.name)
                .map(|(_, p)| p.clone());
        }
        runs.push(run);
    }

    let mut seeds = Vec::new();
    for r in &manifest.runs {
        if let Some(p) = r.workload.pattern() {
            if !seeds.contains(&p.seed) {
                seeds.push(p.seed);
            }
        }
    }
    let provenance = Provenance {
        schema_version: manifest.schema_version,
        created_utc: text::utc(manifest.created_unix_s),
        created_unix_s: manifest.created_unix_s,
        profile: manifest.device.identity.get("profile").cloned(),
        suite: raw
            .pointer("/suite/name")
            .and_then(Value::as_str)
            .map(str::to_string),
        state_enforcement: raw
            .pointer("/suite/state_enforcement")
            .or_else(|| raw.get("state_enforcement"))
            .filter(|v| !v.is_null())
            .cloned(),
        seeds,
        tool: manifest.tool,
        command_line: manifest.command_line,
        host: manifest.host,
        device: manifest.device,
        engine: manifest.engine,
    };
    Ok(DeviceReport {
        label: provenance.device.name.clone(),
        color: index,
        results_dir: dir.display().to_string(),
        provenance,
        sections: Vec::new(),
        runs,
    })
}

/// Subdirectories holding a manifest (the user passed `results/` instead of one run of it).
fn candidate_subdirs(dir: &Path) -> Vec<String> {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return Vec::new();
    };
    let mut out: Vec<String> = entries
        .filter_map(Result::ok)
        .map(|e| e.path())
        .filter(|p| p.join("manifest.json").is_file())
        .map(|p| p.display().to_string())
        .collect();
    out.sort();
    out
}

fn load_run(
    root: &Path,
    manifest: &Manifest,
    raw_manifest: &Value,
    i: usize,
    buckets: usize,
) -> RunReport {
    let entry = &manifest.runs[i];
    let run_dir = root.join(&entry.dir);
    let run_json: Option<Value> = flashlab_results::dir::read_json(&run_dir.join("run.json")).ok();
    let raw_entry = raw_manifest.get("runs").and_then(|r| r.get(i));
    let phases = run_json
        .as_ref()
        .and_then(|v| v.get("phases"))
        .or_else(|| raw_entry.and_then(|v| v.get("phases")))
        .and_then(parse_phases);
    let device_stats = run_json
        .as_ref()
        .and_then(|v| v.get("device_stats"))
        .filter(|v| !v.is_null())
        .cloned();

    let mut report = RunReport {
        name: entry.name.clone(),
        dir: entry.dir.clone(),
        description: entry.workload.describe(),
        status: entry.status,
        error: entry.error.clone(),
        workload: entry.workload.clone(),
        records: 0,
        notes: Vec::new(),
        stats: RunStats::default(),
        phases,
        device_stats,
        timeline: Timeline::default(),
        cdf: Vec::new(),
        histogram: Histogram::default(),
    };
    // The run's own warnings (results::warnings), first: they say whether
    // the figures below describe what the user meant to measure.
    if let Some(ws) = run_json
        .as_ref()
        .and_then(|v| v.get("warnings"))
        .and_then(|v| v.as_array())
    {
        for w in ws.iter().filter_map(|w| w.as_str()) {
            report.notes.push(format!("warning: {w}"));
        }
    }
    let records = run_dir.join("records.bin");
    if !entry.records {
        // A sweep point's run that kept no records: its saved statistics
        // (percentiles from the histogram) are all there is.
        if let Some(stats) = run_json
            .as_ref()
            .and_then(|v| v.get("stats"))
            .and_then(|v| serde_json::from_value(v.clone()).ok())
        {
            report.stats = stats;
        }
        report.notes.push(
            "kept no per-IO records (records = false in its sweep grid): statistics from run.json, percentiles from the histogram (within 0.05 %); no timeline or CDF".to_string(),
        );
        return report;
    }
    if !records.is_file() {
        report.notes.push(match entry.status {
            RunStatus::Planned => "planned, not run yet: no records".to_string(),
            _ => format!("no records file ({}/records.bin is missing)", entry.dir),
        });
        return report;
    }
    match scan_run_with(&records, buckets, CDF_POINTS) {
        Ok(data) => {
            report.records = data.records;
            report.stats = data.stats;
            report.timeline = data.timeline;
            report.cdf = data.cdf;
            report.histogram = data.histogram;
            if data.damaged > 0 {
                report.notes.push(format!(
                    "{} damaged records (invalid mode) were skipped",
                    data.damaged
                ));
            }
            if data.torn_bytes > 0 {
                report
                    .notes
                    .push("a torn record at the end of records.bin was dropped".into());
            }
            if data.records == 0 {
                report.notes.push("records.bin holds no records".into());
            } else if report.stats.all.ios == 0 {
                report
                    .notes
                    .push("no measured IOs (all warm-up or failed)".into());
            }
        }
        Err(e) => report.notes.push(e.to_string()),
    }
    if entry.status == RunStatus::Running {
        report.notes.push(
            "still running (or killed without being marked): records may be incomplete".into(),
        );
    }
    report
}

/// The phases the suite measured, per calibration run: the plan (`plan.json`)
/// lists `calibrate` steps (`{baseline, run: {name}}`) and the journal
/// (`suite.json`) what each measured in `calibration[baseline]`
/// (`{startup, period}`).
fn suite_phases(dir: &Path) -> Vec<(String, Phases)> {
    let Ok(journal) = flashlab_results::dir::read_json::<Value>(&dir.join("suite.json")) else {
        return Vec::new();
    };
    let plan = flashlab_results::dir::read_json::<Value>(&dir.join("plan.json")).ok();
    let steps = plan
        .as_ref()
        .and_then(|p| p.pointer("/steps"))
        .or_else(|| journal.pointer("/plan/steps"))
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default();
    steps
        .iter()
        .filter(|s| s.get("kind").and_then(Value::as_str) == Some("calibrate"))
        .filter_map(|s| {
            let baseline = s.get("baseline")?.as_str()?;
            let run = s.pointer("/run/name")?.as_str()?;
            let c = journal.get("calibration")?.get(baseline)?;
            let p = Phases {
                startup_ios: c.get("startup").and_then(Value::as_u64),
                // A period of one IO means no oscillation: nothing to mark.
                period_ios: c.get("period").and_then(Value::as_u64).filter(|&p| p > 1),
            };
            Some((run.to_string(), p))
        })
        .collect()
}

fn parse_phases(v: &Value) -> Option<Phases> {
    let p = Phases {
        startup_ios: v.get("startup_ios").and_then(Value::as_u64),
        period_ios: v
            .get("period_ios")
            .and_then(Value::as_u64)
            .filter(|&p| p > 0),
    };
    (p.startup_ios.is_some() || p.period_ios.is_some()).then_some(p)
}

/// Device names are the natural legend labels, but two directories may come
/// from the same device (before/after, two dates): add the directory name.
fn unique_labels(devices: &mut [DeviceReport], dirs: &[PathBuf]) {
    let names: Vec<String> = devices.iter().map(|d| d.label.clone()).collect();
    for (i, d) in devices.iter_mut().enumerate() {
        if names.iter().filter(|n| **n == d.label).count() > 1 {
            let base = dirs[i]
                .file_name()
                .map(|f| f.to_string_lossy().into_owned())
                .unwrap_or_default();
            d.label = format!("{} ({base})", d.label);
        }
    }
    let mut seen = BTreeSet::new();
    for (i, d) in devices.iter_mut().enumerate() {
        if !seen.insert(d.label.clone()) {
            d.label = format!("{} #{}", d.label, i + 1);
            seen.insert(d.label.clone());
        }
    }
}

fn comparisons(devices: &[DeviceReport]) -> Vec<Comparison> {
    let mut names: Vec<&str> = Vec::new();
    for d in devices {
        for r in &d.runs {
            if !names.contains(&r.name.as_str()) {
                names.push(&r.name);
            }
        }
    }
    names
        .into_iter()
        .filter_map(|name| {
            let entries: Vec<(usize, usize)> = devices
                .iter()
                .enumerate()
                .filter_map(|(di, d)| {
                    d.runs
                        .iter()
                        .position(|r| r.name == name)
                        .map(|ri| (di, ri))
                })
                .collect();
            (entries.len() > 1).then(|| Comparison {
                run: name.to_string(),
                entries,
                charted: true,
            })
        })
        .collect()
}

/// A results directory's text file: only a regular file (a FIFO would block
/// forever) of at most `max_bytes` (a directory is named by the user, and a
/// huge file there must not fill memory).
pub(crate) fn read_limited(path: &Path, max_bytes: u64) -> std::io::Result<String> {
    use std::io::Read;
    let file = flashlab_results::records::open_regular(path)?;
    if file.metadata()?.len() > max_bytes {
        return Err(std::io::Error::new(
            std::io::ErrorKind::InvalidData,
            format!(
                "larger than {} MiB; it is not a file flashlab wrote",
                max_bytes >> 20
            ),
        ));
    }
    let mut text = String::new();
    file.take(max_bytes).read_to_string(&mut text)?;
    Ok(text)
}
