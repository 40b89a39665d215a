//! `flashlab validate --quick`: the scoreboard's shape, not its score (the
//! simulator's timing changes; the verdicts come from the tolerances file).

use std::process::Command;

#[test]
fn validate_quick_scores_every_table3_cell_of_the_seven_devices() {
    let dir = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).unwrap();
    let page = dir.path().join("validate.html");
    let out = Command::new(env!("CARGO_BIN_EXE_flashlab"))
        .args(["validate", "--quick", "--json", "--html"])
        .arg(&page)
        // docs/profiles.md's uFLIP tables are this build's numbers.
        .arg("--check-doc")
        .arg(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../../docs/profiles.md"
        ))
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let rows = v["rows"].as_array().unwrap();
    // uFLIP Table 3: 7 devices x 12 columns, one row each; plus the five
    // numbers of its text (start-up on Mtron and Memoright, DTI's period,
    // Mtron's lingering reads, Samsung's misalignment cost).
    let table3 = |r: &&serde_json::Value| r["source"].as_str().unwrap().contains("Table 3");
    assert_eq!(rows.iter().filter(table3).count(), 84);
    assert_eq!(rows.len(), 84 + 5);
    let mut ids = std::collections::BTreeSet::new();
    for r in rows {
        assert_eq!(r["paper"], "uflip");
        assert!(!r["tolerance"].as_str().unwrap().is_empty());
        // Each row: its published id, statistic, class and band.
        assert!(ids.insert(r["id"].as_str().unwrap().to_string()), "{r}");
        assert!(!r["statistic"].as_str().unwrap().is_empty());
        assert!(!r["class"].as_str().unwrap().is_empty());
        assert!(r["band"]["kind"].is_string(), "{r}");
        // uFLIP's rows all come from a run: none is true by construction.
        assert_eq!(r["counted"], true, "{r}");
        assert!(["pass", "fail", "not-measured"].contains(&r["verdict"].as_str().unwrap()));
        // Every number was produced by the suite (no silent gaps).
        assert_ne!(r["simulated"]["kind"], "not-measured", "{r}");
    }
    let s = &v["scores"]["papers"]["uflip"];
    assert_eq!(s["rows"], 89);
    assert_eq!(s["not_counted"], 0);
    assert!(s["passed"].as_u64().unwrap() <= 89);
    // Samsung's in-place saving (x0.6) is judged as a saving: its band is
    // +-25 % of 0.6, so a cost above 0.75 fails.
    let in_place = rows
        .iter()
        .find(|r| r["id"] == "uflip.t3.samsung.in-place")
        .unwrap();
    assert_eq!(in_place["tolerance"], "0.75x..1.25x");
    let sim = in_place["simulated"]["value"].as_f64().unwrap();
    assert_eq!(in_place["verdict"] == "pass", (0.45..=0.75).contains(&sim));
    assert_eq!(v["scores"]["profiles"].as_object().unwrap().len(), 7);
    // The validation page: the scores and the paper's rows.
    let html = std::fs::read_to_string(&page).unwrap();
    assert!(html.contains("Score: "), "no score on the page");
    assert!(html.contains("uflip: published vs simulated"));
    assert!(html.contains("strict score"));
    assert!(html.matches("<tr>").count() >= 89);
    // Every tolerance carries its reason.
    for t in v["tolerances"].as_array().unwrap() {
        assert!(t["reason"].as_str().unwrap().len() > 40);
    }
}

/// The held-out score leaves out the rows a profile's parameters were fitted
/// to (its `fitted:` tags' `; rows` ids): kingston-dthx's SR was fitted
/// (nand.read_ns, host.command_overhead_ns), its pause row never was.
#[test]
fn validate_held_out_score_leaves_out_the_rows_fitted_to() {
    let out = Command::new(env!("CARGO_BIN_EXE_flashlab"))
        .args([
            "validate",
            "--quick",
            "--profile",
            "kingston-dthx",
            "--json",
        ])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let rows = v["rows"].as_array().unwrap();
    let fitted = flashlab_suite::validate::fitted_row_ids(
        flashlab_sim::profiles::BUILTIN
            .iter()
            .find(|(n, _)| *n == "kingston-dthx")
            .unwrap()
            .1,
    );
    assert!(fitted.contains("uflip.t3.kingston-dthx.sr"));
    assert!(!fitted.contains("uflip.t3.kingston-dthx.pause-rw"));
    let row = |id: &str| rows.iter().find(|r| r["id"] == id).unwrap();
    assert_eq!(row("uflip.t3.kingston-dthx.sr")["fitted_to"], true);
    assert_eq!(row("uflip.t3.kingston-dthx.pause-rw")["fitted_to"], false);
    // Per row: fitted_to exactly when a fitted: tag names the id.
    for r in rows {
        let id = r["id"].as_str().unwrap();
        assert_eq!(r["fitted_to"], fitted.contains(id), "{r}");
    }
    // Held out: the counted rows not fitted to, and those of them passed.
    let counted: Vec<&serde_json::Value> = rows.iter().filter(|r| r["counted"] == true).collect();
    let held: Vec<&&serde_json::Value> =
        counted.iter().filter(|r| r["fitted_to"] == false).collect();
    let s = &v["scores"]["papers"]["uflip"];
    assert_eq!(s["rows"], counted.len());
    assert_eq!(s["held_out"]["counted"], held.len());
    assert!(held.len() < counted.len(), "no row left out");
    assert_eq!(
        s["held_out"]["passed"],
        held.iter().filter(|r| r["verdict"] == "pass").count()
    );
    assert_eq!(
        v["scores"]["profiles"]["kingston-dthx"]["held_out"],
        s["held_out"]
    );
}
