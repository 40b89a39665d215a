//! `flashlab suite wang11-oltp`: one `flashlab oltp` run per simulated SSD of
//! Wang et al. and file system (ext2, btrfs for nilfs2), each in its own
//! subdirectory, then the matrix's summary (`OltpMatrix`, not a suite of the
//! registry: crates/suite/src/suites/wang11_oltp.rs)
//! with the paper's findings side by side, saved like every suite's so that
//! `flashlab report DIR` shows it.

use std::path::PathBuf;
use std::sync::atomic::Ordering;

use clap::Args;
use flashlab_oltp::{fs::FsKind, postgres::PgSettings, OltpConfig};
use flashlab_pattern::units::parse_duration_ns;
use flashlab_suite::suites::wang11_oltp::{self, CaseResult, OltpMatrix, Part};
use flashlab_suite::summary::SuiteSummary;

use crate::error::{CliError, CliResult};
use crate::signals;

#[derive(Args, Debug)]
pub struct Wang11OltpArgs {
    /// DBMSs (comma-separated): postgres, and mariadb (InnoDB) for the
    /// paper's "MySQL"; each runs the whole profile x file-system matrix.
    #[arg(long, value_delimiter = ',', default_value = "postgres,mariadb")]
    pub dbms: Vec<String>,
    /// Simulator profiles (comma-separated).
    #[arg(
        long,
        value_delimiter = ',',
        default_value = "intel-x25e,mtron-pro7500,ocz-vertex-ex"
    )]
    pub profiles: Vec<String>,
    /// File systems (comma-separated): ext2 as in the paper, btrfs for its nilfs2 (not in this kernel).
    #[arg(long = "fs", value_delimiter = ',', default_value = "ext2,btrfs")]
    pub file_systems: Vec<String>,
    /// TPC-C warehouses per run (the paper: 30; small by default).
    #[arg(long, default_value_t = 1)]
    pub warehouses: u32,
    /// Terminals per run (the paper: 30).
    #[arg(long, default_value_t = 8)]
    pub terminals: u32,
    /// Measured time per run (60 s holds a whole checkpoint at PostgreSQL's
    /// 30 s checkpoint interval).
    #[arg(long, value_name = "DURATION", default_value = "60s")]
    pub duration: String,
    /// Warm-up per run.
    #[arg(long, value_name = "DURATION", default_value = "5s")]
    pub ramp_up: String,
    /// The DBMS buffer: PostgreSQL's shared_buffers, InnoDB's buffer pool
    /// (the paper's Table 4: small DBMS buffers). PostgreSQL's units.
    #[arg(long, value_name = "SIZE", default_value = "16MB")]
    pub shared_buffers: String,
    #[arg(long, default_value_t = 42)]
    pub seed: u64,
    /// The suite's parts (comma-separated), or `all`: fig6-9 (Figures 6-9
    /// and Table 6: the matrix above), fig10 (nilfs2's garbage collection:
    /// no runs, its finding says why not comparable), fig11 (buffer size:
    /// 3 sizes x 2 fs x each DBMS on the Mtron profile), fig12 (Table 3's
    /// mixes: 3 x 2 fs, first DBMS, Mtron), fig13 (IO schedulers none,
    /// mq-deadline, bfq: x 2 fs x Mtron and Intel, first DBMS).
    #[arg(long, value_delimiter = ',', default_value = "fig6-9,fig10")]
    pub parts: Vec<String>,
    /// Measured time per run of fig11, fig12 and fig13 (fig6-9's is --duration).
    #[arg(long, value_name = "DURATION", default_value = "30s")]
    pub part_duration: String,
    /// Results directory to create [default: results/DATE-TIME-wang11-oltp].
    #[arg(long, short = 'o', value_name = "DIR")]
    pub results: Option<PathBuf>,
    /// Print the summary as JSON.
    #[arg(long)]
    pub json: bool,
    #[arg(long, short)]
    pub quiet: bool,
}

/// The matrix this command runs.
const MATRIX: OltpMatrix = OltpMatrix;

fn secs(flag: &str, t: &str) -> CliResult<f64> {
    Ok(parse_duration_ns(t).map_err(|e| CliError::user(format!("--{flag}: {e}")))? as f64 / 1e9)
}

/// Long: reads the matrix flags, then runs and records each (profile, DBMS, file system) cell
/// in order.
pub fn run(args: Wang11OltpArgs) -> CliResult<()> {
    for p in &args.profiles {
        flashlab_sim::resolve_spec(p).map_err(|e| CliError::user(format!("--profiles: {e}")))?;
    }
    let mut dbmss = Vec::new();
    for d in &args.dbms {
        let kind = crate::oltp::parse_dbms(d)?;
        if !dbmss.contains(&kind) {
            dbmss.push(kind);
        }
    }
    let mut parts: Vec<Part> = Vec::new();
    for p in &args.parts {
        let named: Vec<Part> = if p == "all" {
            Part::ALL.to_vec()
        } else {
            vec![Part::parse(p).ok_or_else(|| {
                CliError::user(format!(
                    "--parts {p}: not a part; use fig6-9, fig10, fig11, fig12, fig13 or all"
                ))
            })?]
        };
        for n in named {
            if !parts.contains(&n) {
                parts.push(n);
            }
        }
    }
    let mut fss = Vec::new();
    for f in &args.file_systems {
        fss.push(FsKind::parse(f).map_err(|e| CliError::user(e.to_string()))?);
    }
    let dir = args.results.clone().unwrap_or_else(|| {
        PathBuf::from(format!(
            "results/{}-{}",
            flashlab_results::time::compact_utc(flashlab_results::time::now_unix_s()),
            MATRIX.name()
        ))
    });
    let (duration_s, ramp_up_s, part_duration_s) = (
        secs("duration", &args.duration)?,
        secs("ramp-up", &args.ramp_up)?,
        secs("part-duration", &args.part_duration)?,
    );
    let exe = std::env::current_exe()
        .map_err(|e| CliError::failure(format!("cannot find the flashlab executable: {e}")))?;
    // A results directory like every suite's (its manifest names the suite),
    // so that `flashlab report` shows it; the runs are in subdirectories.
    // Its device is the first run's, at the capacity the runs get.
    let max_wal =
        flashlab_oltp::pg_size_bytes(&PgSettings::default().max_wal_size).unwrap_or(1 << 30);
    let capacity = flashlab_oltp::default_sim_capacity_bytes(flashlab_oltp::bytes_needed(
        args.warehouses,
        max_wal,
    ));
    let device = flashlab_sim::open_device(
        &format!(
            "{},capacity={}",
            args.profiles[0],
            flashlab_pattern::units::format_size(capacity)
        ),
        args.seed,
        1,
    )
    .map_err(CliError::user)?;
    let mut results = crate::target::create_results(Some(&dir), MATRIX.name(), &device, "sim")?;
    let dbms_names: Vec<String> = dbmss.iter().map(|d| d.name().to_string()).collect();
    let cases = MATRIX.cases(&parts, &dbms_names, &args.profiles, &args.file_systems);
    results
        .set_suite(serde_json::json!({
            "name": MATRIX.name(),
            "state_enforcement": "none",
            "config": {"cases": cases, "warehouses": args.warehouses, "terminals": args.terminals,
                       "duration_s": duration_s, "ramp_up_s": ramp_up_s,
                       "parts": parts, "part_duration_s": part_duration_s, "shared_buffers": args.shared_buffers, "seed": args.seed},
        }))
        .map_err(|e| CliError::failure(format!("cannot write the manifest: {e}")))?;
    signals::PATIENT.store(true, Ordering::SeqCst);
    signals::install();
    let quiet = args.quiet || args.json;
    let mut done = Vec::new();
    let mut notes = vec![
        "nilfs2: this kernel has no nilfs2 module; btrfs stands in for the paper's log-structured file system (copy-on-write placement, its own checksummed metadata), so its write amplification is btrfs's, not nilfs2's.".to_string(),
        format!(
            "Scale: {} warehouse(s), {} terminals, DBMS buffer {} unless a part varies it (shared_buffers, InnoDB's buffer pool; the paper: 30 warehouses, 30 users, an 8 MB or 4 MB buffer); simulated devices paced (PostgreSQL waits for the simulated latencies).",
            args.warehouses, args.terminals, args.shared_buffers
        ),
    ];
    // Each part's run length is its own: only Figures 6-9 use --duration.
    if parts.contains(&Part::Fig6To9) {
        notes.push(format!(
            "Figures 6-9 and Table 6: {duration_s:.0} s measured after {ramp_up_s:.0} s ramp-up per run."
        ));
    }
    for (i, case) in cases.iter().enumerate() {
        if signals::STOP.load(Ordering::SeqCst) {
            break;
        }
        if !quiet {
            eprintln!(
                "wang11-oltp: run {}/{}: {} {} on sim:{} with {}{}",
                i + 1,
                cases.len(),
                case.part.name(),
                wang11_oltp::dbms_label(&case.dbms),
                case.profile,
                case.fs,
                match case.variant().as_str() {
                    "" => String::new(),
                    v => format!(", {v}"),
                }
            );
        }
        let buffer = case
            .buffer
            .clone()
            .unwrap_or_else(|| args.shared_buffers.clone());
        let cfg = OltpConfig {
            device: Some(format!("sim:{}", case.profile)),
            mount: None,
            size_bytes: None,
            allow_write_to: None,
            fs: FsKind::parse(&case.fs).map_err(|e| CliError::user(e.to_string()))?,
            scheduler: case.scheduler.clone(),
            dbms: flashlab_oltp::dbms::DbmsKind::parse(&case.dbms).unwrap_or_default(),
            pg_bin: None,
            // The same DBMS buffer for both DBMSs; InnoDB's IO settings the
            // paper's (Table 4: "Synchronous IO: Yes"), flashlab's defaults.
            innodb: flashlab_oltp::dbms::mariadb::InnodbSettings::new(
                flashlab_oltp::pg_size_bytes(&buffer).unwrap_or(16 << 20),
            ),
            pg: PgSettings {
                shared_buffers: buffer.clone(),
                ..PgSettings::default()
            },
            warehouses: args.warehouses,
            load_workers: 2,
            terminals: args.terminals,
            ramp_up_s,
            duration_s: if case.part == Part::Fig6To9 {
                duration_s
            } else {
                part_duration_s
            },
            keying_and_think: false,
            seed: args.seed,
            repeat: 1,
            rate_per_min: None,
            mix: case.mix.clone(),
            trace: true,
            pace: true,
            rated_lifetime_writes_bytes: None,
            interval_s: 1.0,
            setup_only: false,
            results: dir.join(case.dir_name()),
            exe: exe.clone(),
        };
        let mut progress = |line: &str| {
            if !quiet {
                eprintln!("  {line}");
            }
        };
        let outcome = flashlab_oltp::run(&cfg, &signals::STOP, &mut progress);
        crate::oltp::write_manifest(&cfg);
        match outcome {
            Ok(o) => done.push(CaseResult {
                case: case.clone(),
                result: o.result,
            }),
            Err(flashlab_oltp::OltpError::Interrupted) => break,
            Err(e) if e.is_user() && done.is_empty() => return Err(CliError::user(e.to_string())),
            Err(e) => notes.push(format!("{}: failed: {e}", case.dir_name())),
        }
    }
    let interrupted = signals::STOP.load(Ordering::SeqCst);
    if interrupted {
        notes.push(format!(
            "interrupted after {} of {} runs",
            done.len(),
            cases.len()
        ));
    }
    let device_label = format!("sim: {}", args.profiles.join(", "));
    if parts
        .iter()
        .any(|p| *p != Part::Fig6To9 && *p != Part::Fig10)
    {
        notes.push(format!(
            "Parts fig11-13: {part_duration_s:.0} s measured per run; each point is one run (differences under {:.0} % are not counted as an effect in their verdicts).",
            wang11_oltp::MIN_EFFECT * 100.0
        ));
    }
    let summary = MATRIX.summarise(&done, &parts, &device_label, notes);
    let write = |name: &str, text: &str| {
        std::fs::write(dir.join(name), text).map_err(|e| {
            CliError::failure(format!("cannot write {}: {e}", dir.join(name).display()))
        })
    };
    write(
        &SuiteSummary::file_name(MATRIX.name()),
        &serde_json::to_string_pretty(&summary).expect("serializes"),
    )?;
    let md = summary.markdown();
    write(&format!("{}-summary.md", MATRIX.name()), &md)?;
    if args.json {
        println!(
            "{}",
            serde_json::to_string_pretty(&summary).expect("serializes")
        );
    } else {
        print!("{md}");
        println!("\nresults: {}", dir.display());
    }
    if interrupted {
        return Err(CliError {
            message: format!(
                "interrupted; the finished runs are summarised in {}",
                dir.display()
            ),
            exit_code: 130,
        });
    }
    Ok(())
}
