//! Report tests: golden Markdown and JSON, statistics against the results
//! crate, HTML self-containment, errors, downsampling, hooks.
//!
//! Regenerate the golden files with `UPDATE_GOLDEN=1 cargo test -p flashlab-report`.

mod common;

use std::path::{Path, PathBuf};

use flashlab_device::Mode;
use flashlab_report::model::{Analysis, DeviceReport, Section, Table};
use flashlab_report::svg::{Axis, Chart, Scale, Series, Shape, Unit};
use flashlab_report::{render, render_with, Options, Report, ReportError, ReportFormat};
use flashlab_results::records::read_records;
use flashlab_results::{ResultsDir, RunStats, FLAG_WARMUP};

fn golden(name: &str, actual: &str) {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/golden")
        .join(name);
    if std::env::var_os("UPDATE_GOLDEN").is_some() {
        std::fs::write(&path, actual).unwrap();
        return;
    }
    let expected = std::fs::read_to_string(&path).unwrap_or_else(|_| {
        panic!(
            "{} is missing; run with UPDATE_GOLDEN=1 to create it",
            path.display()
        )
    });
    if expected != actual {
        let line = expected
            .lines()
            .zip(actual.lines())
            .position(|(a, b)| a != b)
            .unwrap_or(0);
        panic!(
            "{name} differs from the golden file at line {} (expected {:?}, got {:?}); if the change is intended, run with UPDATE_GOLDEN=1",
            line + 1,
            expected.lines().nth(line),
            actual.lines().nth(line)
        );
    }
}

struct Fixture {
    tmp: tempfile::TempDir,
    sim: PathBuf,
    block: PathBuf,
}

fn fixture() -> Fixture {
    let tmp = tempfile::tempdir().unwrap();
    let sim = common::sim_dir(&tmp.path().join("sim"));
    let block = common::block_dir(&tmp.path().join("block"));
    Fixture { tmp, sim, block }
}

#[test]
fn golden_markdown_single_device() {
    let f = fixture();
    let md = render(std::slice::from_ref(&f.sim), ReportFormat::Markdown).unwrap();
    golden("single.md", &common::normalize(&md, f.tmp.path()));
}

#[test]
fn golden_json_single_device() {
    let f = fixture();
    let json = render(std::slice::from_ref(&f.sim), ReportFormat::Json).unwrap();
    let v: serde_json::Value = serde_json::from_str(&json).expect("valid JSON");
    assert_eq!(v["format"], "flashlab-report/1");
    golden("single.json", &common::normalize(&json, f.tmp.path()));
}

#[test]
fn golden_markdown_comparison() {
    let f = fixture();
    let md = render(&[f.sim.clone(), f.block.clone()], ReportFormat::Markdown).unwrap();
    golden("compare.md", &common::normalize(&md, f.tmp.path()));
}

#[test]
fn rendering_is_deterministic() {
    let f = fixture();
    let dirs = [f.sim.clone(), f.block.clone()];
    for format in [
        ReportFormat::Html,
        ReportFormat::Markdown,
        ReportFormat::Json,
    ] {
        assert_eq!(
            render(&dirs, format).unwrap(),
            render(&dirs, format).unwrap()
        );
    }
}

/// The report recomputes statistics from the records by streaming them; they
/// must be exactly what the results crate computes (and saved in run.json).
#[test]
fn statistics_match_the_results_crate() {
    let f = fixture();
    let report = Report::build(std::slice::from_ref(&f.sim), &Options::default()).unwrap();
    let dir = ResultsDir::open(&f.sim).unwrap();
    for (i, run) in report.devices[0].runs.iter().enumerate() {
        let recs = read_records(&f.sim.join(&run.dir).join("records.bin")).unwrap();
        assert_eq!(run.stats, RunStats::from_records(&recs), "run {}", run.name);
        // run.json went through JSON, whose float parsing may be off by an ulp.
        let saved = &dir.summaries()[i].stats;
        let (a, b) = (&run.stats.all.latency, &saved.all.latency);
        assert_eq!(
            (a.count, a.min_ns, a.p50_ns, a.p99_ns, a.max_ns),
            (b.count, b.min_ns, b.p50_ns, b.p99_ns, b.max_ns)
        );
        assert!(
            (a.mean_ns - b.mean_ns).abs() <= 1e-9 * b.mean_ns
                && (a.stddev_ns - b.stddev_ns).abs() <= 1e-9 * b.stddev_ns
        );
        assert_eq!(
            (
                run.stats.ios_ignored,
                run.stats.ios_failed,
                run.stats.all.bytes
            ),
            (saved.ios_ignored, saved.ios_failed, saved.all.bytes)
        );
        assert_eq!(run.records, recs.len() as u64);
    }
    let mix = &report.devices[0].runs[2];
    assert_eq!(mix.stats.ios_failed, 1);
    assert_eq!(mix.stats.by_mode.len(), 2);
    let rw = &report.devices[0].runs[0];
    assert_eq!(rw.stats.ios_ignored, 8);
    assert_eq!(rw.timeline.warmup_end, Some(8));
    assert_eq!(
        rw.phases.as_ref().map(|p| (p.startup_ios, p.period_ios)),
        Some((Some(24), Some(16)))
    );
}

fn html_of(dirs: &[PathBuf]) -> String {
    render(dirs, ReportFormat::Html).unwrap()
}

/// Every chart the model calls for is in the page, titled, with data.
#[test]
fn html_has_every_chart_titled_and_non_empty() {
    let f = fixture();
    let html = html_of(&[f.sim.clone(), f.block.clone()]);
    // Per run: time series, CDF, histogram (3 + 2 runs); one all-runs CDF per
    // device with several runs (2); per shared run (RW, SR): one CDF and one
    // time series per device.
    let expected = 3 * 5 + 2 + 2 * (1 + 2);
    let charts: Vec<&str> = html.split("<svg class=\"chart\"").skip(1).collect();
    assert_eq!(charts.len(), expected);
    for c in &charts {
        let svg = &c[..c.find("</svg>").unwrap()];
        assert!(svg.contains("<title id="), "chart without title");
        assert!(svg.contains("class=\"series\""), "chart without series");
        assert!(!svg.contains(">no data<"), "empty chart");
        for series in svg.split("<g class=\"series\"").skip(1) {
            let series = &series[..series.find("</g>").unwrap()];
            let drawn = ["points=\"", " d=\"M"].iter().any(|k| {
                series.find(k).is_some_and(|i| {
                    series[i + k.len()..].starts_with(|c: char| c.is_ascii_digit())
                })
            });
            assert!(
                drawn,
                "series without points: {}",
                &series[..series.len().min(200)]
            );
        }
    }
    // The paper figures a chart reproduces are under it, so that its title
    // fits on one line; and every chart can be saved.
    assert!(html.contains("<figcaption class=\"muted\">as uFLIP Figures 3-5 &middot; save"));
    assert!(html.contains(
        "<figcaption class=\"muted\">as Chen et al. Figures 2-3, Wang et al. Figure 4 &middot; save"
    ));
    assert_eq!(
        html.matches("<svg class=\"chart\"").count() * 2,
        html.matches("class=\"save\"").count(),
        "an SVG and a PNG link under every chart"
    );
    // The phases of run RW are marked: start-up shaded, periods as markers.
    assert!(html.contains("start-up phase (24 IOs)"));
    assert!(html.contains("period 16 IOs"));
    assert!(html.contains("warm-up (IOIgnore)"));
    // Provenance.
    for s in [
        "sim:ssd-m",
        "ssd-m",
        "0123abcdef",
        "2026-11-18 11:06:40 UTC",
        "<th>suite</th><td>uflip</td>",
        "<th>state enforcement</th><td>random</td>",
        "testhost",
        "&#39;my runs.toml&#39;",
    ] {
        assert!(html.contains(s), "provenance lacks {s}");
    }
}

/// Nothing in the page can reach the network: no URL, no external resource.
#[test]
fn html_is_self_contained() {
    let tmp = tempfile::tempdir().unwrap();
    // A device name with markup and a URL must come out inert.
    let dev = common::device(
        "<script>alert(1)</script> http://evil.example/x",
        flashlab_device::DeviceKind::File,
    );
    let dir = common::write_dir(
        &tmp.path().join("d"),
        dev,
        common::default_runs(1000),
        None,
        None,
    );
    let html = html_of(&[dir]);
    let lower = html.to_ascii_lowercase();
    for bad in [
        "http:", "https:", "//evil", "<link", "@import", "url(", " src=", "<iframe", "<img",
        "<object", "<embed",
    ] {
        assert!(!lower.contains(bad), "the HTML contains {bad:?}");
    }
    assert_eq!(
        lower.matches("<script").count(),
        1,
        "only our own inline script"
    );
    assert!(html.contains("&lt;script&gt;alert(1)&lt;/script&gt;"));
    // Links are in-page anchors only.
    for part in html.split("href=\"").skip(1) {
        assert!(
            part.starts_with('#'),
            "non-anchor link: {}",
            &part[..part.len().min(40)]
        );
    }
}

/// Issue 31, item 7: rendered by Python-Markdown, markup in a device name
/// ran. Every Markdown renderer shows entities as text.
#[test]
fn markdown_shows_markup_as_text() {
    let tmp = tempfile::tempdir().unwrap();
    let dev = common::device(
        "<script>alert(1)</script><img src=x onerror=alert(2)> & co",
        flashlab_device::DeviceKind::File,
    );
    let dir = common::write_dir(
        &tmp.path().join("d"),
        dev,
        common::default_runs(1000),
        None,
        None,
    );
    let md = render(&[dir], ReportFormat::Markdown).unwrap();
    let lower = md.to_ascii_lowercase();
    for bad in ["<script", "<img", "onerror=alert(2)>"] {
        assert!(
            !lower.contains(bad),
            "the Markdown passes {bad:?} through:\n{md}"
        );
    }
    assert!(md.contains("&lt;script&gt;alert(1)&lt;/script&gt;"), "{md}");
}

#[test]
fn md_and_json_name_the_papers_charts_data() {
    let f = fixture();
    let json = render(std::slice::from_ref(&f.sim), ReportFormat::Json).unwrap();
    let v: serde_json::Value = serde_json::from_str(&json).unwrap();
    let run = &v["devices"][0]["runs"][0];
    assert_eq!(run["name"], "RW");
    assert_eq!(run["timeline"]["buckets"].as_array().unwrap().len(), 96);
    assert_eq!(run["cdf"].as_array().unwrap().last().unwrap()[1], 1.0);
    assert_eq!(
        run["histogram"]["counts"]
            .as_array()
            .unwrap()
            .iter()
            .map(|c| c.as_u64().unwrap())
            .sum::<u64>(),
        88
    );
}

fn err_of(dirs: &[PathBuf]) -> String {
    let e = render(dirs, ReportFormat::Html)
        .expect_err("should fail")
        .to_string();
    assert!(!e.contains('\n'), "error is not one line: {e}");
    e
}

#[test]
fn bad_input_gives_one_line_errors() {
    let tmp = tempfile::tempdir().unwrap();
    let t = tmp.path();
    assert!(err_of(&[]).contains("no results directory given"));
    assert!(err_of(&[t.join("nope")]).contains("does not exist"));
    std::fs::write(t.join("file.txt"), "x").unwrap();
    assert!(err_of(&[t.join("file.txt")]).contains("is a file, not a results directory"));
    std::fs::create_dir(t.join("empty")).unwrap();
    let e = err_of(&[t.join("empty")]);
    assert!(
        e.contains("not a flashlab results directory (no manifest.json)")
            && e.contains("flashlab run"),
        "{e}"
    );
    // A parent of results directories: the error names them.
    let parent = t.join("results");
    common::sim_dir(&parent.join("20261121-RW"));
    assert!(err_of(std::slice::from_ref(&parent)).contains("20261121-RW"));
    assert!(
        err_of(&[parent.join("20261121-RW/manifest.json")]).contains("pass its directory instead")
    );
    // Damaged manifests.
    std::fs::create_dir(t.join("bad")).unwrap();
    std::fs::write(t.join("bad/manifest.json"), "{ not json\n\n").unwrap();
    assert!(err_of(&[t.join("bad")]).contains("not valid JSON"));
    std::fs::write(t.join("bad/manifest.json"), r#"{"schema_version": 7}"#).unwrap();
    assert!(err_of(&[t.join("bad")]).contains("schema 7"));
    std::fs::write(
        t.join("bad/manifest.json"),
        r#"{"schema_version": 1, "runs": 3}"#,
    )
    .unwrap();
    assert!(err_of(&[t.join("bad")]).contains("not a flashlab manifest"));
    // One good and one bad directory: the bad one is named.
    let good = parent.join("20261121-RW");
    assert!(err_of(&[good, t.join("empty")]).contains("empty"));
}

#[test]
fn damaged_or_missing_records_are_notes_not_failures() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = common::sim_dir(&tmp.path().join("d"));
    // Run 1: torn tail and a bad mode byte; run 2: garbage; run 3: missing.
    let p1 = dir.join("runs/001-RW/records.bin");
    let mut b = std::fs::read(&p1).unwrap();
    b[32 + 40 * 50 + 38] = 9;
    b.extend_from_slice(&[1, 2, 3]);
    std::fs::write(&p1, b).unwrap();
    std::fs::write(dir.join("runs/002-SR/records.bin"), b"garbage").unwrap();
    std::fs::remove_file(dir.join("runs/003-mix/records.bin")).unwrap();
    let report = Report::build(std::slice::from_ref(&dir), &Options::default()).unwrap();
    let runs = &report.devices[0].runs;
    assert_eq!(runs[0].stats.all.ios, 87);
    assert!(runs[0]
        .notes
        .iter()
        .any(|n| n.contains("1 damaged records")));
    assert!(runs[0].notes.iter().any(|n| n.contains("torn record")));
    assert!(runs[1].notes.iter().any(|n| n.contains("bad magic")));
    assert!(runs[2].notes.iter().any(|n| n.contains("missing")));
    for format in [
        ReportFormat::Html,
        ReportFormat::Markdown,
        ReportFormat::Json,
    ] {
        render(std::slice::from_ref(&dir), format).unwrap();
    }
}

/// Long runs are reduced to a bounded number of buckets whatever their
/// length, and an isolated outlier stays visible (it is some bucket's max).
#[test]
fn long_series_are_downsampled_keeping_outliers() {
    let tmp = tempfile::tempdir().unwrap();
    let n = 200_003u64;
    let mut lat: Vec<u64> = (0..n).map(|i| 50_000 + (i * 7) % 1000).collect();
    lat[123_457] = 80_000_000;
    let recs = common::records(
        &lat,
        |_| Mode::Read,
        |i| if i < 1000 { FLAG_WARMUP } else { 0 },
    );
    let runs = vec![common::RunDef {
        name: "long",
        pattern: common::pattern("long", "random", "read", n, 1000, false),
        records: recs,
    }];
    let dir = common::write_dir(
        &tmp.path().join("d"),
        common::device("sim:ssd-m", flashlab_device::DeviceKind::Simulated),
        runs,
        None,
        None,
    );
    let report = Report::build(std::slice::from_ref(&dir), &Options::default()).unwrap();
    let run = &report.devices[0].runs[0];
    let t = &run.timeline;
    assert!(
        t.buckets.len() <= flashlab_report::scan::TIMELINE_BUCKETS,
        "{} buckets",
        t.buckets.len()
    );
    assert_eq!(t.buckets.iter().map(|b| b.count()).sum::<u64>(), n);
    assert_eq!(t.buckets.iter().map(|b| b.max_ns()).max(), Some(80_000_000));
    assert!(run.cdf.len() <= flashlab_report::scan::CDF_POINTS + 1);
    assert_eq!(run.cdf.last().unwrap().0, 80_000_000);
    assert_eq!(run.stats.all.ios, n - 1000);
    let html = html_of(&[dir]);
    assert!(
        html.len() < 200_000,
        "HTML of one long run is {} bytes",
        html.len()
    );
    assert!(html.contains("80ms"), "the outlier's decade is on the axis");
}

#[test]
fn selected_runs_only() {
    let f = fixture();
    let opts = Options {
        runs: vec!["SR".into()],
        ..Options::default()
    };
    let md = render_with(std::slice::from_ref(&f.sim), ReportFormat::Markdown, &opts).unwrap();
    assert!(md.contains("| SR |") && !md.contains("| RW |"));
    let opts = Options {
        runs: vec!["nope".into()],
        ..Options::default()
    };
    let e = render_with(std::slice::from_ref(&f.sim), ReportFormat::Markdown, &opts)
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("no run named nope") && e.contains("RW, SR, mix"),
        "{e}"
    );
}

struct Table3;

impl Analysis for Table3 {
    fn sections(&self, device: &DeviceReport, _dir: &Path) -> Result<Vec<Section>, ReportError> {
        let chart = Chart {
            id: "granularity".into(),
            title: "Granularity: mean response time vs IOSize (as uFLIP Figure 6)".into(),
            x: Axis::new("IOSize", Scale::Log, Unit::Number),
            y: Axis::new("mean response time", Scale::Log, Unit::Nanos),
            series: vec![Series {
                label: "RW".into(),
                color: 0,
                shapes: vec![Shape::Line(vec![[4.0, 1e5], [32.0, 4e5]])],
            }],
            spans: vec![],
            markers: vec![],
            width: 560,
            height: 300,
        };
        Ok(vec![Section {
            id: "table3".into(),
            title: "Summary (uFLIP Table 3)".into(),
            paragraphs: vec![format!("{} runs analysed", device.runs.len())],
            tables: vec![Table {
                header: vec!["SR".into(), "RW".into()],
                rows: vec![vec!["0.1".into(), "4.0".into()]],
            }],
            charts: vec![chart],
        }])
    }
}

#[test]
fn analysis_hook_adds_sections_to_every_format() {
    let f = fixture();
    let opts = Options {
        analyses: vec![Box::new(Table3)],
        ..Options::default()
    };
    let html = render_with(std::slice::from_ref(&f.sim), ReportFormat::Html, &opts).unwrap();
    assert!(html.contains("Summary (uFLIP Table 3)") && html.contains("3 runs analysed"));
    assert!(html.contains("id=\"d1-table3-c1-granularity\""));
    let md = render_with(std::slice::from_ref(&f.sim), ReportFormat::Markdown, &opts).unwrap();
    assert!(md.contains("### Summary (uFLIP Table 3)") && md.contains("| 0.1 | 4.0 |"));
    let json = render_with(std::slice::from_ref(&f.sim), ReportFormat::Json, &opts).unwrap();
    assert!(json.contains("\"title\": \"Summary (uFLIP Table 3)\""));
}

#[test]
fn same_device_twice_gets_distinct_labels() {
    let tmp = tempfile::tempdir().unwrap();
    let a = common::sim_dir(&tmp.path().join("before"));
    let b = common::sim_dir(&tmp.path().join("after"));
    let r = Report::build(&[a, b], &Options::default()).unwrap();
    assert_eq!(r.devices[0].label, "sim:ssd-m (before)");
    assert_eq!(r.devices[1].label, "sim:ssd-m (after)");
    assert_eq!(r.comparisons.len(), 3);
}

/// A run whose IOs all take the same time (common on the simulator) still
/// draws a CDF: a vertical step at that latency.
#[test]
fn constant_latency_still_draws() {
    let tmp = tempfile::tempdir().unwrap();
    let runs = vec![common::RunDef {
        name: "flat",
        pattern: common::pattern("flat", "sequential", "read", 50, 0, false),
        records: common::records(&[169_215; 50], |_| Mode::Read, |_| 0),
    }];
    let dir = common::write_dir(
        &tmp.path().join("d"),
        common::device("sim:ssd-m", flashlab_device::DeviceKind::Simulated),
        runs,
        None,
        None,
    );
    let html = html_of(&[dir]);
    let cdf = html.split("id=\"d1-r1-cdf\"").nth(1).unwrap();
    let pts = cdf.split("class=\"steps\"").nth(1).unwrap();
    let pts = &pts[pts.find("points=\"").unwrap() + 8..];
    let pts = &pts[..pts.find('"').unwrap()];
    assert_eq!(pts.split(' ').count(), 2, "a vertical step: {pts}");
}

/// A suite's results: the uFLIP Table-3 row, hints, micro-benchmark charts
/// and calibration phases; two devices: Table 3 side by side.
#[test]
fn golden_uflip_suite() {
    let tmp = tempfile::tempdir().unwrap();
    let a = common::uflip_dir(&tmp.path().join("a"), "sim:fast", 1_000);
    let b = common::uflip_dir(&tmp.path().join("b"), "sim:slow", 3_000);
    let md = render(std::slice::from_ref(&a), ReportFormat::Markdown).unwrap();
    golden("uflip.md", &common::normalize(&md, tmp.path()));
    let json = render(std::slice::from_ref(&a), ReportFormat::Json).unwrap();
    golden("uflip.json", &common::normalize(&json, tmp.path()));
    let md = render(&[a.clone(), b.clone()], ReportFormat::Markdown).unwrap();
    golden("uflip-compare.md", &common::normalize(&md, tmp.path()));
    assert!(
        md.contains(
            "| sim:fast | 0.0700 ms | n/m | n/m | 1.20 ms |  | 4MiB (=) | 4 (x2.5) | n/m | n/m | n/m |"
        ),
        "{md}"
    );
    assert!(
        md.contains("| sim:slow | 0.210 ms | n/m | n/m | 3.60 ms |"),
        "{md}"
    );

    let html = render(&[a, b], ReportFormat::Html).unwrap();
    for t in [
        "uFLIP Table 3, side by side",
        "uFLIP micro-benchmark 1 (Granularity): mean response time by IOSize",
        "uFLIP micro-benchmark 2 (Alignment)",
        "uFLIP Figures 3-5: latency over IO number, RW baseline calibration run on sim:fast",
        "SR, device by device",
    ] {
        assert!(html.contains(t), "{t}");
    }
    // Alignment is categorical (0 cannot sit on a log axis); the hover names the category.
    assert!(html.contains(r#"data-xcat="0B|512B""#));
    // Every chart has data.
    assert!(!html.contains(">no data</text>"));
}

/// Issue 33, item 6: a comparison opens with one verdict line per baseline
/// run, and a difference one run each cannot tell from noise is not called
/// a winner.
#[test]
fn a_comparison_opens_with_verdicts_and_calls_a_small_difference_noise() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = |name: &str, scale: u64| {
        common::write_dir(
            &tmp.path().join(name),
            common::device(name, flashlab_device::DeviceKind::File),
            common::default_runs(scale),
            None,
            None,
        )
    };
    let (a, b, twin) = (dir("a", 1000), dir("b", 3000), dir("twin", 1000));
    let verdicts = |dirs: &[PathBuf]| -> Vec<String> {
        let md = render(dirs, ReportFormat::Markdown).unwrap();
        md.lines()
            .skip_while(|l| *l != "## Device comparison")
            .skip(2)
            .take_while(|l| l.starts_with("- **"))
            .map(str::to_string)
            .collect()
    };
    let differ = verdicts(&[a.clone(), b]);
    assert!(!differ.is_empty());
    assert!(
        differ.iter().all(|l| l.contains(" faster than ")),
        "{differ:?}"
    );
    let same = verdicts(&[a.clone(), twin]);
    assert!(!same.is_empty());
    assert!(
        same.iter()
            .all(|l| l.contains("within 5 %") && l.contains("noise")),
        "{same:?}"
    );
    // In the HTML, the verdicts come before the comparison table.
    let html = html_of(&[a, dir("c", 3000)]);
    let verdict = html.find("<ul class=\"verdict\">").expect("verdicts");
    assert!(verdict < html.find("<th class=\"l\">run</th>").unwrap());
}

/// `flashlab suite wang11-oltp`'s results directory: the OLTP matrix is not
/// a suite of the registry, but the report finds it by the manifest's suite
/// name and shows its summary; without the summary it names the matrix by
/// its title and says how to run it again (it has no `--resume`).
#[test]
fn the_oltp_matrix_is_found_by_its_manifests_suite_name() {
    use flashlab_suite::suites::wang11_oltp::{OltpMatrix, Part, TITLE};
    let tmp = tempfile::tempdir().unwrap();
    let dir = common::write_dir(
        &tmp.path().join("wang11-oltp"),
        common::device("sim:intel-x25e", flashlab_device::DeviceKind::Simulated),
        Vec::new(),
        Some(
            serde_json::json!({"suite": {"name": "wang11-oltp", "state_enforcement": "none", "config": {"cases": []}}}),
        ),
        None,
    );
    let summary = OltpMatrix.summarise(&[], &[Part::Fig10], "sim: intel-x25e", Vec::new());
    let summary_path = dir.join("wang11-oltp-summary.json");
    std::fs::write(&summary_path, serde_json::to_string(&summary).unwrap()).unwrap();
    let md = render(std::slice::from_ref(&dir), ReportFormat::Markdown).unwrap();
    assert!(md.contains(TITLE), "{md}");
    assert!(md.contains("no nilfs2"), "Fig. 10's finding: {md}");
    assert!(!md.contains("is missing"), "{md}");

    std::fs::remove_file(&summary_path).unwrap();
    let md = render(std::slice::from_ref(&dir), ReportFormat::Markdown).unwrap();
    assert!(md.contains(TITLE), "the title from the matrix itself: {md}");
    assert!(
        md.contains("wang11-oltp-summary.json is missing: the matrix did not finish"),
        "{md}"
    );
    assert!(
        md.contains("`flashlab suite wang11-oltp -o NEW-DIR` runs it again"),
        "{md}"
    );
    assert!(
        !md.contains("--resume"),
        "the matrix cannot be resumed: {md}"
    );
}
