//! `flashlab validate`: the published-vs-simulated scoreboard. Runs the
//! suites on the profiles modelled on the papers' devices (in this process,
//! as `flashlab suite NAME` runs them, one after the other), puts every published
//! number next to the simulated one with the tolerance of
//! `crates/suite/validate/tolerances.toml` and a verdict, and scores each
//! paper and each profile. `--update-doc docs/profiles.md` rewrites the
//! generated sections of that file (the scoreboard, uFLIP's Table 3, one
//! table per profile: `doc.rs`); `--check-doc` fails when they differ from
//! what this build measures.

mod doc;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use clap::Args;
use flashlab_suite::table3::Table3;
use flashlab_suite::validate::{self, PublishedNumbers, Row, Score, Tolerances, Verdict};

use flashlab_workload::scoreboard::{scoreboard, ScoreboardOptions};

use crate::error::{CliError, CliResult};

#[derive(Args, Debug)]
pub struct ValidateArgs {
    /// Print the rows and scores as JSON.
    #[arg(long)]
    pub json: bool,

    /// Only uFLIP's Table 3 (seven profiles, about 10 s): the CI size.
    #[arg(long)]
    pub quick: bool,

    /// Keep the suites' results directories under DIR [default: a temporary directory, removed].
    #[arg(long, short = 'o', value_name = "DIR")]
    pub results: Option<PathBuf>,

    /// Rewrite the generated sections of this Markdown file (docs/profiles.md): the scoreboard, uFLIP's Table 3 and one table per profile.
    #[arg(long, value_name = "FILE")]
    pub update_doc: Option<PathBuf>,

    /// Fail (exit 1) if the generated sections of this file differ from this run's numbers (with --quick: the uFLIP sections only).
    #[arg(long, value_name = "FILE")]
    pub check_doc: Option<PathBuf>,

    /// Also write the scoreboard as an offline HTML page (the report's layout).
    #[arg(long, value_name = "FILE")]
    pub html: Option<PathBuf>,

    /// Only the rows of this profile (e.g. hs-mtron-7525): what `fit` scores a candidate by.
    #[arg(long, value_name = "NAME")]
    pub profile: Option<String>,

    /// Simulator overrides for every run, e.g. op=0.2,nand.program_ns=700000 (a `fit` candidate).
    #[arg(long = "set", value_name = "KEY=VALUE,...")]
    pub set: Option<String>,
}

/// Check `--set`'s overrides before any suite runs, on the profile they will
/// be applied to (`--profile`), or on `ssd-m` as an example when they apply
/// to every profile (the scoreboard checks each profile again). Checking a
/// `--profile` run's overrides on another profile refused overrides that the
/// chosen profile takes (more dies than `ssd-m`'s spare area allows).
fn check_set(profile: Option<&str>, set: &str) -> CliResult<()> {
    flashlab_workload::scoreboard::check_overrides(profile, set)
        .map_err(|e| CliError::user(format!("--set: {e}")))
}

pub fn validate(args: ValidateArgs) -> CliResult<()> {
    let tol = Tolerances::builtin();
    let published = PublishedNumbers::parse(validate::PUBLISHED_TOML, &tol)
        .map_err(|e| CliError::failure(e.to_string()))?;
    for (flag, given) in [
        ("--update-doc", args.update_doc.is_some()),
        ("--check-doc", args.check_doc.is_some()),
    ] {
        if given && (args.profile.is_some() || args.set.is_some()) {
            return Err(CliError::user(format!(
                "{flag} covers the whole scoreboard: run it without --profile and --set"
            )));
        }
    }
    // Before the suites run: a file without markers is not a page of ours.
    if let Some(path) = &args.update_doc {
        check_has_markers(path)?;
    }
    // The flags' own checks first, named as flags (the library checks again).
    if let Some(p) = &args.profile {
        let known = published.profiles(None);
        if !known.contains(&p.as_str()) {
            return Err(CliError::user(format!(
                "--profile {p}: no published numbers for it; use one of {}",
                known.join(", ")
            )));
        }
    }
    if let Some(s) = args.set.as_deref().filter(|s| !s.trim().is_empty()) {
        check_set(args.profile.as_deref(), s)?;
    }
    let (root, _tmp) = match &args.results {
        Some(d) => {
            std::fs::create_dir_all(d)
                .map_err(|e| CliError::user(format!("--results {}: {e}", d.display())))?;
            (d.clone(), None)
        }
        None => {
            let t = std::env::temp_dir().join(format!("flashlab-validate-{}", std::process::id()));
            let _ = std::fs::remove_dir_all(&t);
            std::fs::create_dir_all(&t)
                .map_err(|e| CliError::failure(format!("{}: {e}", t.display())))?;
            (t.clone(), Some(RemoveOnDrop(t)))
        }
    };
    let board = scoreboard(
        &ScoreboardOptions {
            profile: args.profile.as_deref(),
            set: args.set.as_deref(),
            quick: args.quick,
            root: &root,
            tool: &crate::target::tool_info(),
        },
        &mut |what| {
            if !args.json {
                eprintln!("validate: {what}");
            }
        },
    )
    .map_err(|e| CliError::failure(e.to_string()))?;
    let (papers, profiles, total) = board.scores();
    let (rows, tables, notes) = (&board.rows, &board.tables, &board.notes);
    let sections = doc_sections(
        rows, tables, &published, &papers, &profiles, &total, args.quick,
    );
    if let Some(doc) = &args.update_doc {
        update_doc(doc, &sections)?;
    }
    if let Some(doc) = &args.check_doc {
        check_doc(doc, &sections, args.quick)?;
    }
    if let Some(path) = &args.html {
        std::fs::write(path, html_page(rows, &papers, &profiles, &total, notes))
            .map_err(|e| CliError::user(format!("--html {}: {e}", path.display())))?;
    }
    if args.json {
        let v = board.to_json();
        println!("{}", serde_json::to_string_pretty(&v).expect("serializes"));
    } else {
        print!("{}", markdown(rows, &papers, &profiles, &total));
        for n in notes {
            println!("\nNote: {n}");
        }
    }
    Ok(())
}

/// The scoreboard as a report page: the scores, then one table per paper.
fn html_page(
    rows: &[Row],
    papers: &BTreeMap<String, Score>,
    profiles: &BTreeMap<String, Score>,
    total: &Score,
    notes: &[String],
) -> String {
    use flashlab_report::model::{Section, Table};
    let scores = |m: &BTreeMap<String, Score>| {
        m.iter()
            .map(|(k, s)| {
                vec![
                    k.clone(),
                    s.passed.to_string(),
                    s.rows.to_string(),
                    s.show(),
                    s.held_out.show(),
                    s.not_counted.to_string(),
                ]
            })
            .collect::<Vec<_>>()
    };
    let header = |first: &str| {
        [
            first,
            "passed",
            "rows counted",
            "strict score",
            "held-out score",
            "not counted",
        ]
        .map(str::to_string)
        .to_vec()
    };
    let mut sections = vec![Section {
        id: "validate-scores".into(),
        title: format!("Score: {}", total.show()),
        paragraphs: std::iter::once("Every number the papers publish about a device a simulator profile models, next to the simulated number, with its tolerance class from crates/suite/validate/tolerances.toml (each with its reason) and a verdict; rows true by construction are listed but not counted.".to_string())
            .chain(std::iter::once(HELD_OUT_LEGEND.to_string()))
            .chain(notes.iter().map(|n| format!("Note: {n}")))
            .collect(),
        tables: vec![
            Table { header: header("paper"), rows: scores(papers) },
            Table { header: header("profile"), rows: scores(profiles) },
        ],
        charts: Vec::new(),
    }];
    for paper in papers.keys() {
        sections.push(Section {
            id: format!("validate-{paper}"),
            title: format!("{paper}: published vs simulated"),
            paragraphs: Vec::new(),
            tables: vec![Table {
                header: [
                    "profile",
                    "source",
                    "number",
                    "published",
                    "simulated",
                    "class",
                    "tolerance",
                    "verdict",
                ]
                .map(str::to_string)
                .to_vec(),
                rows: rows
                    .iter()
                    .filter(|r| &r.paper == paper)
                    .map(|r| {
                        vec![
                            r.profile.clone(),
                            r.source.clone(),
                            r.what.clone(),
                            r.published.show(),
                            r.simulated.show(),
                            r.class.clone(),
                            r.tolerance.clone(),
                            if r.counted && r.fitted_to {
                                format!("{:?} (fitted)", r.verdict).to_lowercase()
                            } else if r.counted {
                                format!("{:?}", r.verdict).to_lowercase()
                            } else {
                                format!("not counted: {}", r.not_reproducible)
                            },
                        ]
                    })
                    .collect(),
            }],
            charts: Vec::new(),
        });
    }
    flashlab_report::Report {
        format: flashlab_report::model::REPORT_FORMAT,
        generator: format!("flashlab {}", env!("CARGO_PKG_VERSION")),
        title: "flashlab validate: published vs simulated".into(),
        devices: Vec::new(),
        comparisons: Vec::new(),
        sections,
    }
    .render(flashlab_report::ReportFormat::Html)
}

struct RemoveOnDrop(PathBuf);

impl Drop for RemoveOnDrop {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

fn markdown(
    rows: &[Row],
    papers: &BTreeMap<String, Score>,
    profiles: &BTreeMap<String, Score>,
    total: &Score,
) -> String {
    let mut s = String::from(
        "| paper | profile | source | number | published | simulated | class | tolerance | verdict |\n|---|---|---|---|---|---|---|---|---|\n",
    );
    for r in rows.iter().filter(|r| r.counted) {
        s += &format!(
            "| {} | {} | {} | {} | {} | {} | {} | {} | {} |\n",
            r.paper,
            r.profile,
            r.source,
            r.what,
            r.published.show(),
            r.simulated.show(),
            r.class,
            r.tolerance,
            if r.fitted_to {
                format!("{} (fitted)", doc::verdict_cell(r.verdict))
            } else {
                doc::verdict_cell(r.verdict).to_string()
            }
        );
    }
    let uncounted: Vec<&Row> = rows.iter().filter(|r| !r.counted).collect();
    if !uncounted.is_empty() {
        s += "\nNot reproducible by simulation (not counted): the simulated value is a profile parameter echoed back or arithmetic on the profile (crates/suite/validate/published.toml, `not_reproducible`):\n\n";
        for r in uncounted {
            s += &format!(
                "- {} {}, {} (published {}, simulated {}): {}\n",
                r.paper,
                r.profile,
                r.what,
                r.published.show(),
                r.simulated.show(),
                r.not_reproducible
            );
        }
    }
    let gaps: Vec<&Row> = rows
        .iter()
        .filter(|r| r.counted && !r.note.is_empty() && r.verdict != Verdict::Pass)
        .collect();
    if !gaps.is_empty() {
        s += "\nWhy these rows fail (crates/suite/src/validate.rs, `KNOWN_GAPS`):\n\n";
        for r in gaps {
            s += &format!("- {} {}, {}: {}\n", r.paper, r.profile, r.what, r.note);
        }
    }
    s += "\n| paper | rows counted | passed | strict score | held out: passed / counted | held-out score | not counted (not reproducible) |\n|---|---|---|---|---|---|---|\n";
    let line = |name: &str, sc: &Score| {
        format!(
            "| {name} | {} | {} | {:.0} % | {}/{} | {:.0} % | {} |\n",
            sc.rows,
            sc.passed,
            sc.percent(),
            sc.held_out.passed,
            sc.held_out.counted,
            sc.held_out.percent(),
            sc.not_counted
        )
    };
    for (p, sc) in papers {
        s += &line(p, sc);
    }
    s += &line("all", total);
    s += &format!("\n{HELD_OUT_LEGEND}\n");
    s += "\nScore per paper (in-sample strict; held out):\n\n";
    for (p, sc) in papers {
        s += &format!("- {p} {}; held out {}\n", sc.show(), sc.held_out.show());
    }
    s += "\nScore per profile: ";
    s += &profiles
        .iter()
        .map(|(p, sc)| {
            format!(
                "{p} {}/{} ({:.0} %, held out {}/{})",
                sc.passed,
                sc.rows,
                sc.percent(),
                sc.held_out.passed,
                sc.held_out.counted
            )
        })
        .collect::<Vec<_>>()
        .join(", ");
    s += &format!(
        "\nTotal: {}; held out {}\n",
        total.show(),
        total.held_out.show()
    );
    s
}

/// What the held-out score is, and what it is not (printed under the
/// scores and in docs/profiles.md's scoreboard).
const HELD_OUT_LEGEND: &str = "Held out: the strict score over the counted rows that no parameter of the row's profile was fitted to, i.e. rows no `fitted:` tag of `crates/sim/profiles/PROFILE.toml` names after `; rows` (the rows the profiles' searches and hand fits never saw; rows fitted to are marked `(fitted)` beside their verdict). The strict score counts both. Held out is not a cross-validation: the parameters were fitted once, to the other rows, and a held-out row may still depend on them. True k-fold cross-validation, refitting with each figure held out in turn, is `flashlab.fit(\"validate:PROFILE\", ..., cross_validate=True)` (`FitResult.cv`, `cv_loss`) and `bench/fit/validate_fit.py`, which prints the leave-one-figure-out error of its grid.";

/// Every section of the doc this run can fill: the scoreboard, uFLIP's
/// Table 3 and one table per profile.
fn doc_sections(
    rows: &[Row],
    tables: &[(String, Option<Table3>)],
    published: &PublishedNumbers,
    papers: &BTreeMap<String, Score>,
    profiles: &BTreeMap<String, Score>,
    total: &Score,
    quick: bool,
) -> Vec<doc::Section> {
    let mut out = vec![doc::Section {
        name: doc::SCOREBOARD.into(),
        body: format!(
            "`flashlab validate{}` on the simulator: every published number (crates/suite/validate/published.toml) next to the simulated one, its tolerance class (crates/suite/validate/tolerances.toml, with the reason for each) and the verdict. The strict score counts every row but those true by construction, listed apart; the held-out score only the counted rows no profile parameter was fitted to (below the scores).\n\n{}",
            if quick { " --quick" } else { "" },
            markdown(rows, papers, profiles, total)
        ),
    }];
    out.extend(doc::uflip_table3(rows, tables, published));
    out.extend(profiles.keys().map(|p| doc::profile(rows, p)));
    out
}

/// `--update-doc` rewrites only what sits between its markers: a file
/// holding none of them (a README, any other file) is refused, not appended to.
fn check_has_markers(path: &Path) -> CliResult<String> {
    let text = std::fs::read_to_string(path)
        .map_err(|e| CliError::user(format!("--update-doc {}: {e}", path.display())))?;
    if !text.contains(doc::MARKER_HEAD) {
        return Err(CliError::user(format!(
            "--update-doc {}: it holds no `{}...-->` markers, so it is not a page of generated sections; add the markers where the sections go (as docs/profiles.md has them), or name docs/profiles.md",
            path.display(),
            doc::MARKER_HEAD
        )));
    }
    Ok(text)
}

fn update_doc(path: &Path, sections: &[doc::Section]) -> CliResult<()> {
    let text = check_has_markers(path)?;
    let (mut new, done) = doc::apply(&text, sections);
    if !done.iter().any(|d| d == doc::SCOREBOARD) {
        new = format!(
            "{}\n## Scoreboard: published vs simulated\n\n{}\n\n{}\n{}\n",
            new.trim_end(),
            doc::SCOREBOARD_BEGIN,
            sections[0].body.trim_end(),
            doc::SCOREBOARD_END
        );
    }
    std::fs::write(path, new).map_err(|e| CliError::failure(format!("{}: {e}", path.display())))
}

/// The doc's generated sections against this run's: stale or missing ones
/// fail with the command that fixes them. `--quick` measures only uFLIP's
/// devices, so it checks their sections and leaves the rest (the
/// scoreboard too: it scores every paper).
fn check_doc(path: &Path, sections: &[doc::Section], quick: bool) -> CliResult<()> {
    let text = std::fs::read_to_string(path)
        .map_err(|e| CliError::user(format!("--check-doc {}: {e}", path.display())))?;
    let checked: Vec<doc::Section> = sections
        .iter()
        .filter(|s| !(quick && s.name == doc::SCOREBOARD))
        .cloned()
        .collect();
    let (stale, mut missing) = doc::stale(&text, &checked);
    // A profile's own table is where the page has room for it (uFLIP's
    // devices are in the Table 3 section); the others must be there.
    missing.retain(|m| !m.starts_with("profile "));
    let unknown: Vec<String> = if quick {
        Vec::new()
    } else {
        doc::named_sections(&text)
            .into_iter()
            .filter(|n| !sections.iter().any(|s| &s.name == n))
            .collect()
    };
    let fix = format!("run `flashlab validate --update-doc {}`", path.display());
    if !missing.is_empty() {
        return Err(CliError::failure(format!(
            "{} has no generated section for {}: add its begin/end markers (crates/flashlab/src/validate/doc.rs), then {fix}",
            path.display(),
            missing.join(", ")
        )));
    }
    if !unknown.is_empty() {
        return Err(CliError::failure(format!(
            "{}: this run measures nothing for the section(s) {}: remove their markers",
            path.display(),
            unknown.join(", ")
        )));
    }
    if !stale.is_empty() {
        return Err(CliError::failure(format!(
            "{} is out of date with this build in {}: {fix}",
            path.display(),
            stale.join(", ")
        )));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::check_set;

    #[test]
    fn set_is_checked_on_the_profile_it_is_for() {
        // 32 chips on one channel: the Mtron's 32 GB keeps spare blocks on
        // each, ssd-m's smaller area does not
        let set = "geometry.chips_per_channel=32,ftl.stripe_dies=8";
        assert!(check_set(Some("mtron-pro7500"), set).is_ok());
        assert!(check_set(None, set).is_err());
    }
}
