//! The grid file and its expansion into points.
//!
//! ```toml
//! name = "op-x-gc"
//! device = "ssd-m,capacity=256MiB,prefill=on"   # the base simulator (what follows sim:)
//! seeds = [1, 2]                                 # default [42]
//!
//! [parameters]                                   # simulator keys, each a list of values
//! op = [0.07, 0.15, 0.28]
//! gc = ["greedy", "cost-benefit"]
//! # io_size = ["4KiB", "64KiB"]   workload keys too: a pattern key (io_size,
//! #   queue_depth, parallel, location, ...) sets every [[run]]; a [trace]'s
//! #   queue_depth or speed; suite.OPTION a [suite]'s option
//!
//! [defaults]                                     # the workload: a pattern file's tables...
//! io_size = "4KiB"
//! [[run]]
//! pattern = "RW"
//! io_count = 20000
//! # ...or  [trace] path = "t.trace", closed_loop = true, queue_depth = 8, fit = "wrap"
//! # ...or  replicate = "results/measured"   (the pattern runs of a results directory;
//! #        replicate_runs = ["SR", "RW"] picks some of them)
//! # ...or  [suite] name = "uflip", quick = true   (a paper suite, run by the
//! #        CLI's suite runner; [suite.options] replaces fields of its
//! #        configuration, metrics = ["table3"] keeps some summary values)
//! # records = false   (pattern, trace and replicate points keep no per-IO
//! #                    records: metrics only, percentiles from the histogram)
//! # max_points = 500000   (raises the limit on the number of points, 100,000)
//! ```
//!
//! Points are the Cartesian product of the parameters (keys in alphabetical
//! order, the first key varying slowest, values in the order written) and
//! the seeds (varying fastest). A value written twice in one list (`seeds =
//! [1, 1]`, or `1` and `1.0`, which the simulator reads alike) is one value:
//! two copies of a point would run at once into one directory. The number
//! of points is counted (checked, before anything is expanded) and refused
//! above [`DEFAULT_MAX_POINTS`] unless the grid raises `max_points`.

use std::collections::BTreeMap;
use std::fmt;
use std::path::{Path, PathBuf};

use flashlab_pattern::PatternArgs;
use serde::{Deserialize, Serialize};

use crate::error::SweepError;

/// One value of a simulator parameter, as written in the grid.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum ParamValue {
    Bool(bool),
    Int(i64),
    Float(f64),
    Str(String),
}

impl fmt::Display for ParamValue {
    /// The text of a simulator override (`key=TEXT`).
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ParamValue::Bool(b) => write!(f, "{}", if *b { "on" } else { "off" }),
            ParamValue::Int(i) => write!(f, "{i}"),
            ParamValue::Float(x) => write!(f, "{x}"),
            ParamValue::Str(s) => f.write_str(s),
        }
    }
}

impl ParamValue {
    fn from_toml(key: &str, v: &toml::Value) -> Result<ParamValue, SweepError> {
        Ok(match v {
            toml::Value::Boolean(b) => ParamValue::Bool(*b),
            toml::Value::Integer(i) => ParamValue::Int(*i),
            toml::Value::Float(x) => ParamValue::Float(*x),
            toml::Value::String(s) => {
                if s.contains(',') || s.contains('=') {
                    return Err(SweepError::Grid(format!(
                        "parameter {key}: value '{s}' contains ',' or '='; give one simulator value per list entry"
                    )));
                }
                ParamValue::Str(s.clone())
            }
            other => {
                return Err(SweepError::Grid(format!(
                    "parameter {key}: {} values are not simulator settings; use numbers, strings or booleans",
                    other.type_str()
                )))
            }
        })
    }
}

// The workload a grid's points run is the library's one typed workload
// (`flashlab-workload`): a grid's tables deserialize into it, and a point
// runs it with `flashlab_workload::run`.
pub use flashlab_workload::{SuiteSpec, TraceSpec, Workload as WorkloadSpec};

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct GridFile {
    name: Option<String>,
    device: Option<String>,
    target: Option<PathBuf>,
    allow_write_to: Option<PathBuf>,
    seeds: Option<Vec<u64>>,
    #[serde(default)]
    parameters: toml::Table,
    defaults: Option<PatternArgs>,
    #[serde(default)]
    run: Vec<PatternArgs>,
    trace: Option<TraceSpec>,
    replicate: Option<PathBuf>,
    replicate_runs: Option<Vec<String>>,
    suite: Option<SuiteSpec>,
    records: Option<bool>,
    max_points: Option<u64>,
}

const GRID_KEYS: &[&str] = &[
    "name",
    "device",
    "target",
    "allow_write_to",
    "seeds",
    "parameters",
    "defaults",
    "run",
    "trace",
    "replicate",
    "replicate_runs",
    "suite",
    "records",
    "max_points",
];

/// The most points a grid may have unless it sets `max_points`: each point
/// costs some hundreds of bytes before it runs (its expansion, its task,
/// its outcome), so a typo such as a million-value list is refused at once
/// instead of filling memory.
pub const DEFAULT_MAX_POINTS: u64 = 100_000;

fn describe(msg: &str) -> String {
    let msg = msg.replace('\n', " ");
    match msg.strip_prefix("unknown field `") {
        Some(rest) if rest.contains("expected one of `name`, `quick`") => {
            let field = rest.split('`').next().unwrap_or(rest);
            format!(
                "unknown key `{field}` in [suite]; it has name, quick, options, metrics (the suite's own settings go in [suite.options])"
            )
        }
        Some(rest) => {
            let field = rest.split('`').next().unwrap_or(rest);
            format!(
                "unknown key `{field}`; a grid has {} (pattern keys go in [[run]] or [defaults])",
                GRID_KEYS.join(", ")
            )
        }
        None => msg,
    }
}

/// A checked grid.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Grid {
    pub name: String,
    /// The base simulator spec (what follows `sim:`), without the parameters.
    pub device: String,
    /// In expansion order (alphabetical keys).
    pub parameters: Vec<(String, Vec<ParamValue>)>,
    pub seeds: Vec<u64>,
    pub workload: WorkloadSpec,
    /// Whether each point's runs keep their per-IO records (`records.bin`).
    /// Without them a point costs one thread and no disk, its percentiles
    /// come from the fine histogram (within 0.05 %), and per-IO analyses
    /// (report timelines, export) of its runs are unavailable.
    #[serde(default = "records_kept", skip_serializing_if = "is_kept")]
    pub records: bool,
    /// A real device or file instead of the simulator (`target = PATH`):
    /// the parameters are workload keys only, and the points run one at a
    /// time (`device` is then the path, as messages name it).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub target: Option<RealTarget>,
}

/// A grid's real device or file (`target = PATH`, `allow_write_to = PATH`):
/// each point opens it as `flashlab run --device PATH` does, after the same
/// write-safety check.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct RealTarget {
    pub path: PathBuf,
    /// The block device the user explicitly allowed to be overwritten
    /// (`--allow-write-to`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub allow_write_to: Option<PathBuf>,
}

pub(crate) fn records_kept() -> bool {
    true
}

pub(crate) fn is_kept(records: &bool) -> bool {
    *records
}

/// One point of a grid.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Point {
    /// Position in the expansion (0-based).
    pub index: usize,
    /// Stable id: a hash of the base device, the parameter values and the seed.
    pub id: String,
    pub params: Vec<(String, ParamValue)>,
    pub seed: u64,
    /// The full simulator spec: the base device with the simulator
    /// parameters as overrides.
    pub device: String,
    /// The parameters that set the workload instead (`io_size`,
    /// `queue_depth`, `suite.OPTION`...: `Workload::is_key`), applied to
    /// the grid's workload when the point runs ([`Point::workload`]).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub workload_params: Vec<(String, ParamValue)>,
    /// The grid's real target, when it has one (`device` is then its path).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub target: Option<RealTarget>,
}

impl Point {
    /// The workload this point runs: `base` (the grid's) with the point's
    /// workload parameters in place.
    pub fn workload(&self, base: &WorkloadSpec) -> Result<WorkloadSpec, SweepError> {
        Ok(base.with_params(&json_params(&self.workload_params))?)
    }
}

fn json_params(params: &[(String, ParamValue)]) -> Vec<(String, serde_json::Value)> {
    params
        .iter()
        .map(|(k, v)| {
            (
                k.clone(),
                serde_json::to_value(v).expect("a value serializes"),
            )
        })
        .collect()
}

impl Grid {
    /// Reads a grid file; relative paths in it are taken from the file's directory.
    pub fn load(path: &Path) -> Result<Grid, SweepError> {
        let text = read_grid_text(path)?;
        let base = path.parent().unwrap_or(Path::new(""));
        let default_name = path
            .file_stem()
            .map(|s| s.to_string_lossy().into_owned())
            .unwrap_or_else(|| "sweep".into());
        Grid::parse(&text, &path.display().to_string(), base, &default_name)
    }

    /// Parses a grid's text; `origin` names it in messages, `base_dir` anchors relative paths.
    pub fn parse(
        text: &str,
        origin: &str,
        base_dir: &Path,
        default_name: &str,
    ) -> Result<Grid, SweepError> {
        let file: GridFile = toml::from_str(text).map_err(|e| {
            let line = e
                .span()
                .map(|s| text[..s.start.min(text.len())].matches('\n').count() + 1)
                .map(|l| format!(" line {l}"))
                .unwrap_or_default();
            SweepError::Grid(format!("{origin}{line}: {}", describe(e.message())))
        })?;
        Grid::from_file(file, origin, base_dir, default_name)
    }

    /// The same grid written as JSON (what Python's `flashlab.sweep` passes for a dict).
    pub fn parse_json(
        text: &str,
        origin: &str,
        base_dir: &Path,
        default_name: &str,
    ) -> Result<Grid, SweepError> {
        let file: GridFile = serde_json::from_str(text)
            .map_err(|e| SweepError::Grid(format!("{origin}: {}", describe(&e.to_string()))))?;
        Grid::from_file(file, origin, base_dir, default_name)
    }

    /// Long: reads the grid's sections in turn, each checked with its TOML path in the error.
    fn from_file(
        file: GridFile,
        origin: &str,
        base_dir: &Path,
        default_name: &str,
    ) -> Result<Grid, SweepError> {
        // Absolute paths: points may run in other processes, from another directory.
        let base_dir = std::path::absolute(base_dir).unwrap_or_else(|_| base_dir.to_path_buf());
        let base_dir = base_dir.as_path();
        let (device, target) = match (file.device, file.target) {
            (Some(_), Some(_)) => {
                return Err(SweepError::Grid(format!(
                    "{origin}: both `device` (a simulator) and `target` (a real device or file); keep one"
                )))
            }
            (None, None) => {
                return Err(SweepError::Grid(format!(
                    "{origin}: no `device`; add the base simulator, e.g. device = \"ssd-m,capacity=1GiB\", or target = \"PATH\" for a real device or file"
                )))
            }
            (Some(device), None) => {
                if file.allow_write_to.is_some() {
                    return Err(SweepError::Grid(format!(
                        "{origin}: allow_write_to applies to a real target (target = \"PATH\"); remove it for a simulated device"
                    )));
                }
                (device.strip_prefix("sim:").unwrap_or(&device).to_string(), None)
            }
            (None, Some(path)) => {
                let path = base_dir.join(path);
                // Its size and alignment now: a missing or unreadable
                // target would fail every point.
                flashlab_realdev::probe(&path).map_err(|e| {
                    SweepError::Grid(format!("{origin}: target {}: {e}", path.display()))
                })?;
                (
                    path.display().to_string(),
                    Some(RealTarget {
                        path,
                        allow_write_to: file.allow_write_to,
                    }),
                )
            }
        };
        let mut parameters = Vec::new();
        // toml::Table iterates in key order: alphabetical, hence stable.
        // `suite.max_ios = [...]` is TOML for a `suite` table: its keys
        // are the suite's options, `suite.KEY` each.
        let mut flat: Vec<(String, &toml::Value)> = Vec::new();
        for (key, value) in &file.parameters {
            match value {
                toml::Value::Table(t) if key == "suite" => {
                    flat.extend(t.iter().map(|(k, v)| (format!("suite.{k}"), v)));
                }
                v => flat.push((key.clone(), v)),
            }
        }
        for (key, value) in &flat {
            let key = key.as_str();
            let values = match value {
                toml::Value::Array(a) => a
                    .iter()
                    .map(|v| ParamValue::from_toml(key, v))
                    .collect::<Result<Vec<_>, _>>()?,
                v => vec![ParamValue::from_toml(key, v)?],
            };
            if values.is_empty() {
                return Err(SweepError::Grid(format!(
                    "{origin}: parameter {key} has no values; give a list such as {key} = [1, 2] or remove it"
                )));
            }
            // Values the simulator reads alike (the same override text) are one value.
            let mut seen = std::collections::HashSet::new();
            let values: Vec<ParamValue> = values
                .into_iter()
                .filter(|v| seen.insert(v.to_string()))
                .collect();
            parameters.push((key.to_string(), values));
        }
        let mut seeds = file
            .seeds
            .unwrap_or_else(|| vec![flashlab_pattern::DEFAULT_SEED]);
        if seeds.is_empty() {
            return Err(SweepError::Grid(format!(
                "{origin}: seeds is empty; give at least one, e.g. seeds = [1]"
            )));
        }
        let mut seen = std::collections::HashSet::new();
        seeds.retain(|s| seen.insert(*s));
        let max_points = file.max_points.unwrap_or(DEFAULT_MAX_POINTS);
        match count_points(&parameters, seeds.len()) {
            Some(n) if n <= max_points => {}
            count => {
                let count = count.map_or_else(|| "more than 2^64".to_string(), |n| n.to_string());
                return Err(SweepError::Grid(format!(
                    "{origin}: the grid has {count} points, above the limit of {max_points}; shorten the parameter lists, or raise the limit with max_points = N if you mean it"
                )));
            }
        }
        let given = [
            !file.run.is_empty(),
            file.trace.is_some(),
            file.replicate.is_some(),
            file.suite.is_some(),
        ];
        match given.iter().filter(|g| **g).count() {
            0 => {
                return Err(SweepError::Grid(format!(
                "{origin}: no workload; add [[run]] tables (pattern keys), a [trace] table, replicate = \"RESULTS_DIR\" or a [suite] table"
            )))
            }
            1 => {}
            _ => {
                return Err(SweepError::Grid(format!(
                    "{origin}: more than one workload; keep one of [[run]], [trace], replicate and [suite]"
                )))
            }
        }
        if file.replicate_runs.is_some() && file.replicate.is_none() {
            return Err(SweepError::Grid(format!(
                "{origin}: replicate_runs chooses runs of replicate = \"RESULTS_DIR\", and there is none"
            )));
        }
        if file.defaults.is_some() && file.run.is_empty() {
            return Err(SweepError::Grid(format!(
                "{origin}: [defaults] applies to [[run]] tables, and there are none"
            )));
        }
        let records = file.records.unwrap_or(true);
        if !records && file.suite.is_some() {
            return Err(SweepError::Grid(format!(
                "{origin}: records = false is for [[run]], [trace] and replicate workloads; a [suite]'s analyses read its runs' records, so remove records = false"
            )));
        }
        let workload = if let Some(s) = file.suite {
            check_suite(&s, seeds[0])
                .map_err(|e| SweepError::Grid(format!("{origin}: [suite] {e}")))?;
            WorkloadSpec::Suite(s)
        } else if let Some(mut t) = file.trace {
            // Checked once, here: a refused setting would fail every point.
            t.check()
                .map_err(|e| SweepError::Grid(format!("{origin}: {e}")))?;
            t.path = base_dir.join(&t.path);
            WorkloadSpec::Trace(t)
        } else if let Some(dir) = file.replicate {
            WorkloadSpec::Replicate {
                dir: base_dir.join(dir),
                runs: file.replicate_runs,
            }
        } else {
            let defaults = file.defaults.unwrap_or_default();
            WorkloadSpec::Patterns {
                runs: file.run.into_iter().map(|r| r.or(&defaults)).collect(),
            }
        };
        let grid = Grid {
            name: check_name(
                file.name.unwrap_or_else(|| default_name.to_string()),
                origin,
            )?,
            device,
            parameters,
            seeds,
            workload,
            records,
            target,
        };
        if grid.target.is_some() {
            grid.check_real_target(origin)?;
        }
        grid.check_keys(origin)?;
        grid.check_workload_params(origin)?;
        Ok(grid)
    }

    /// A misspelt simulator key or profile would fail every point: refuse
    /// the grid instead. A single point whose combination of values the
    /// simulator refuses (say, too little over-provisioning for its die
    /// count) is not a grid error: it fails alone and the others run.
    fn check_keys(&self, origin: &str) -> Result<(), SweepError> {
        if self.target.is_some() {
            return Ok(());
        }
        let mut first_error = None;
        for i in 0..self.len() {
            match flashlab_sim::resolve_spec(&self.point(i).device) {
                Ok(_) => return Ok(()),
                Err(e) => {
                    first_error.get_or_insert(e.to_string());
                }
            }
        }
        Err(SweepError::Grid(format!(
            "{origin}: no point has a valid simulator: {}",
            first_error.unwrap_or_default()
        )))
    }

    /// Each value of a workload parameter sets the workload as its table
    /// would (its type, a suite's option): refused here, not by every point.
    /// A grid on a real device sweeps the workload only: there is no
    /// simulator to set, and a suite there is `flashlab suite NAME --device
    /// PATH` (its state enforcement and plan are the CLI's).
    fn check_real_target(&self, origin: &str) -> Result<(), SweepError> {
        if let WorkloadSpec::Suite(s) = &self.workload {
            return Err(SweepError::Grid(format!(
                "{origin}: a grid on a real device runs [[run]], [trace] or replicate workloads; run the suite there with flashlab suite {} --device {}",
                s.name, self.device
            )));
        }
        if let Some((key, _)) = self
            .parameters
            .iter()
            .find(|(k, _)| !self.workload.is_key(k))
        {
            return Err(SweepError::Grid(format!(
                "{origin}: parameter {key} is a simulator setting, and target = \"{}\" is a real device; sweep workload keys there (io_size, queue_depth, parallel, location, ... in [[run]]; queue_depth or speed for a [trace])",
                self.device
            )));
        }
        Ok(())
    }

    /// Long: the base workload, then each workload parameter's values one
    /// at a time, as a point would apply them.
    fn check_workload_params(&self, origin: &str) -> Result<(), SweepError> {
        // A pattern that no point could run is refused when the grid loads,
        // not once per point (its parameters named as the grid writes them).
        let check_runs = |w: &WorkloadSpec, at: &str| -> Result<(), SweepError> {
            if let WorkloadSpec::Patterns { runs } = w {
                flashlab_workload::check_patterns(runs).map_err(|e| {
                    SweepError::Grid(format!(
                        "{origin}: {at}{}",
                        e.render(flashlab_workload::FrontEnd::Grid)
                    ))
                })?;
            }
            Ok(())
        };
        check_runs(&self.workload, "")?;
        for (key, values) in &self.parameters {
            if !self.workload.is_key(key) {
                continue;
            }
            for v in values {
                let one = [(key.clone(), v.clone())];
                let applied = self
                    .workload
                    .with_params(&json_params(&one))
                    .map_err(|e| SweepError::Grid(format!("{origin}: {e}")))?;
                let value = serde_json::to_string(v).unwrap_or_default();
                check_runs(&applied, &format!("parameter {key} = {value}: "))?;
                if let WorkloadSpec::Suite(s) = &applied {
                    check_suite(s, self.seeds[0])
                        .map_err(|e| SweepError::Grid(format!("{origin}: parameter {key}: {e}")))?;
                }
            }
        }
        Ok(())
    }

    /// How many points the grid has.
    pub fn len(&self) -> usize {
        self.parameters
            .iter()
            .map(|(_, v)| v.len())
            .product::<usize>()
            * self.seeds.len()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Every point, in expansion order.
    pub fn points(&self) -> Vec<Point> {
        (0..self.len()).map(|i| self.point(i)).collect()
    }

    /// Point `index` of the expansion (mixed-radix: the last key and then the seed vary fastest).
    pub fn point(&self, index: usize) -> Point {
        let mut rest = index;
        let seed = self.seeds[rest % self.seeds.len()];
        rest /= self.seeds.len();
        let mut params = Vec::with_capacity(self.parameters.len());
        for (key, values) in self.parameters.iter().rev() {
            params.push((key.clone(), values[rest % values.len()].clone()));
            rest /= values.len();
        }
        params.reverse();
        let mut device = self.device.clone();
        let mut workload_params = Vec::new();
        for (k, v) in &params {
            if self.workload.is_key(k) {
                workload_params.push((k.clone(), v.clone()));
            } else {
                device.push_str(&format!(",{k}={v}"));
            }
        }
        let id = point_id(&device, seed, &workload_params);
        Point {
            index,
            id,
            params,
            seed,
            device,
            workload_params,
            target: self.target.clone(),
        }
    }
}

/// The largest grid file read: 16 MiB, as the CLI's pattern files.
pub const MAX_GRID_FILE_BYTES: u64 = 16 << 20;

/// Reads a grid file with a size limit, so that `/dev/zero`, a FIFO left
/// open or a disk image given by mistake is refused at once instead of
/// filling memory.
fn read_grid_text(path: &Path) -> Result<String, SweepError> {
    use std::io::Read;
    let shown = path.display();
    let cannot = |e: std::io::Error| {
        SweepError::Grid(format!(
            "cannot read grid file {shown}: {e}; check the path"
        ))
    };
    let file = std::fs::File::open(path).map_err(cannot)?;
    let mut bytes = Vec::new();
    file.take(MAX_GRID_FILE_BYTES + 1)
        .read_to_end(&mut bytes)
        .map_err(cannot)?;
    if bytes.len() as u64 > MAX_GRID_FILE_BYTES {
        return Err(SweepError::Grid(format!(
            "grid file {shown} is larger than {} MiB; is it the right file?",
            MAX_GRID_FILE_BYTES >> 20
        )));
    }
    String::from_utf8(bytes).map_err(|_| {
        SweepError::Grid(format!(
            "grid file {shown} is not UTF-8 text; give a TOML grid file"
        ))
    })
}

/// The number of points of `parameters` x `seeds`, or `None` when it does
/// not fit in 64 bits (nor, then, in memory).
fn count_points(parameters: &[(String, Vec<ParamValue>)], seeds: usize) -> Option<u64> {
    parameters
        .iter()
        .try_fold(seeds as u64, |n, (_, v)| n.checked_mul(v.len() as u64))
        .filter(|n| usize::try_from(*n).is_ok())
}

/// A grid's name becomes a directory name (`results/sweep-NAME`, from the
/// CLI and from Python): it must be one plain path component, so that no
/// name (`x/../../D`, `..`, an absolute path) places the sweep elsewhere.
pub fn check_name(name: String, origin: &str) -> Result<String, SweepError> {
    let plain = !name.is_empty()
        && name.len() <= 200
        && name != "."
        && name != ".."
        && !name.contains(['/', '\\', '\0'])
        && !name.chars().any(char::is_control);
    if plain {
        Ok(name)
    } else {
        Err(SweepError::Grid(format!(
            "{origin}: name {name:?} is not one plain path component (it names the sweep's directory); use letters, digits, '-', '_' or '.', without '/'"
        )))
    }
}

/// A suite workload's name, options and metric paths, before any point
/// runs: a typo would fail every point. (Whether the plan fits a point's
/// device is that point's business.)
fn check_suite(s: &SuiteSpec, seed: u64) -> Result<(), String> {
    let suite = flashlab_suite::session::runnable(&s.name).map_err(|e| format!("{e}"))?;
    let config = flashlab_suite::session::configure(suite, s.quick, &s.options, seed)
        .map_err(|e| format!("{e}; see [suite.options] in docs/python.md"))?;
    // The options' types: the suite parses its configuration when planning
    // (on a nominal 1 GiB; the point's own device is checked when it runs).
    const NOMINAL_BYTES: u64 = 1 << 30;
    let plan = suite.plan(&config, NOMINAL_BYTES);
    if let Ok(plan) = &plan {
        let mut plan = plan.clone();
        // fio's runtime for every run, as `flashlab suite --runtime`.
        let runtime = |e: flashlab_suite::plan::RuntimeError| {
            e.render("[suite] runtime", "[suite] time_based", "runtime = \"10s\"")
        };
        if let Some(runtime_ns) =
            flashlab_suite::plan::parse_runtime(s.runtime.as_deref(), s.time_based)
                .map_err(runtime)?
        {
            plan.with_runtime(runtime_ns, s.time_based)
                .map_err(runtime)?;
        }
    }
    if let Err(e) = plan {
        // Name the option at fault: the first that fails on its own.
        for (key, value) in &s.options {
            let one = serde_json::Map::from_iter([(key.clone(), value.clone())]);
            let alone = flashlab_suite::session::configure(suite, s.quick, &one, seed)
                .map_err(|e| e.to_string())?;
            if let Err(e) = suite.plan(&alone, NOMINAL_BYTES) {
                return Err(format!("option `{key}`: {e}; fix it in [suite.options]"));
            }
        }
        return Err(format!("{e}; fix [suite.options]"));
    }
    if let Some(m) = &s.metrics {
        if m.is_empty() || m.iter().any(|p| p.trim().is_empty()) {
            return Err("metrics lists summary paths, e.g. metrics = [\"table3\"]; remove it to keep every value".into());
        }
    }
    Ok(())
}

/// FNV-1a of the point's full device spec and seed: the same values give the
/// same id in every version and on every machine (no std hasher, whose
/// algorithm is not promised).
///
/// Workload parameters follow, `|KEY=VALUE` each, only when the grid has
/// some: the ids of grids without them are those of earlier versions.
fn point_id(device: &str, seed: u64, workload_params: &[(String, ParamValue)]) -> String {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    let workload: String = workload_params
        .iter()
        .map(|(k, v)| format!("|{k}={v}"))
        .collect();
    for b in device
        .bytes()
        .chain(b"|seed=".iter().copied())
        .chain(seed.to_string().bytes())
        .chain(workload.bytes())
    {
        h ^= b as u64;
        h = h.wrapping_mul(0x0100_0000_01b3);
    }
    format!("{h:016x}")
}

/// Parameter values by key, for lookups by name.
pub fn params_map(point: &Point) -> BTreeMap<&str, &ParamValue> {
    point.params.iter().map(|(k, v)| (k.as_str(), v)).collect()
}
