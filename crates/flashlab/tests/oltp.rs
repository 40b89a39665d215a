//! `flashlab oltp` end to end (root; CI): a short TPC-C run on a simulated
//! SSD and on a file-backed device, with both traces checked against each
//! other and against the kernel's /sys/block statistics; an interrupted run;
//! and the bad-input cases, each one line, exit 2, nothing left behind.
//!
//! Needs root, PostgreSQL (postgresql), losetup/mount (util-linux, mount),
//! mkfs.ext2/ext4 (e2fsprogs), nbdfuse (libnbd-bin), fusermount3 (fuse3) and
//! tracefs. Skipped with a message when something is missing, failed
//! instead under FLASHLAB_REQUIRE_ROOT_TESTS=1 (CI).

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::sync::{Mutex, MutexGuard};
use std::time::{Duration, Instant};

use serde_json::Value;

/// The heavy runs one at a time: two cores, and each run starts a server.
static HEAVY: Mutex<()> = Mutex::new(());

fn flashlab() -> Command {
    Command::new(env!("CARGO_BIN_EXE_flashlab"))
}

fn have(tool: &str) -> bool {
    Command::new("sh")
        .arg("-c")
        .arg(format!("command -v {tool}"))
        .stdout(Stdio::null())
        .status()
        .is_ok_and(|s| s.success())
}

fn is_root() -> bool {
    // SAFETY: getuid has no preconditions.
    unsafe { libc::getuid() == 0 }
}

/// Why this machine cannot run the root tests, if it cannot.
fn cannot_run() -> Option<String> {
    if !is_root() {
        return Some("needs root".into());
    }
    let missing: Vec<&str> = [
        "losetup",
        "mount",
        "mkfs.ext4",
        "mkfs.ext2",
        "nbdfuse",
        "fusermount3",
    ]
    .into_iter()
    .filter(|t| !have(t))
    .collect();
    if !missing.is_empty() {
        return Some(format!(
            "missing {} (apt-get install util-linux mount e2fsprogs libnbd-bin fuse3)",
            missing.join(", ")
        ));
    }
    if !Path::new("/usr/lib/postgresql").is_dir() {
        return Some("PostgreSQL is not installed (apt-get install postgresql)".into());
    }
    None
}

fn skip(test: &str) -> bool {
    let Some(why) = cannot_run() else {
        return false;
    };
    if std::env::var("FLASHLAB_REQUIRE_ROOT_TESTS").as_deref() == Ok("1") {
        panic!("{test} cannot run ({why}) but FLASHLAB_REQUIRE_ROOT_TESTS=1");
    }
    eprintln!("SKIPPED: {test}: {why}");
    true
}

/// What a heavy test starts with: its turn (one server at a time), a scratch
/// directory in /var/tmp (a file-backed device needs a disk file system, not
/// tmpfs), and in it the paths of the device image and the results.
struct Heavy {
    _turn: MutexGuard<'static, ()>,
    tmp: tempfile::TempDir,
    img: PathBuf,
    res: PathBuf,
}

/// `None` when this machine cannot run `test` (it is skipped, with the reason).
fn heavy(test: &str) -> Option<Heavy> {
    if skip(test) {
        return None;
    }
    let turn = HEAVY.lock().unwrap_or_else(|e| e.into_inner());
    let tmp = tempfile::tempdir_in("/var/tmp").unwrap();
    let (img, res) = (tmp.path().join("dev.img"), tmp.path().join("res"));
    Some(Heavy {
        _turn: turn,
        tmp,
        img,
        res,
    })
}

fn run_dir_of(pid: u32) -> PathBuf {
    PathBuf::from(format!("/var/tmp/flashlab-oltp/{pid}"))
}

/// Nothing of run `pid` is left: no mount, loop device, process or directory.
fn assert_nothing_left(pid: u32, also: &[&Path]) {
    let dir = run_dir_of(pid);
    let d = dir.to_string_lossy().into_owned();
    let mounts = std::fs::read_to_string("/proc/self/mountinfo").unwrap();
    assert!(!mounts.contains(&d), "a mount is left under {d}:\n{mounts}");
    let loops = Command::new("losetup").arg("-a").output().unwrap();
    let loops = String::from_utf8_lossy(&loops.stdout);
    assert!(
        !loops.contains(&d),
        "a loop device is left over {d}: {loops}"
    );
    for p in also {
        assert!(
            !loops.contains(&*p.to_string_lossy()),
            "a loop device is left over {}: {loops}",
            p.display()
        );
    }
    for e in std::fs::read_dir("/proc").unwrap().flatten() {
        if let Ok(cmd) = std::fs::read(e.path().join("cmdline")) {
            let cmd = String::from_utf8_lossy(&cmd).replace('\0', " ");
            assert!(
                !cmd.contains(&d),
                "process {} is left: {cmd}",
                e.file_name().to_string_lossy()
            );
        }
    }
    assert!(!dir.exists(), "{d} is left");
    // Nor their parent, unless another run still uses it.
    let parent = dir.parent().unwrap();
    assert!(
        std::fs::read_dir(parent).map_or(true, |mut d| d.next().is_some()),
        "the empty {} is left",
        parent.display()
    );
}

fn json_of(o: &Output) -> Value {
    serde_json::from_slice(&o.stdout).unwrap_or_else(|e| {
        panic!(
            "no JSON on stdout ({e}); stderr: {}",
            String::from_utf8_lossy(&o.stderr)
        )
    })
}

fn f(v: &Value, p: &str) -> f64 {
    v.pointer(p)
        .and_then(Value::as_f64)
        .unwrap_or_else(|| panic!("no number at {p}"))
}

/// The checks every measured run must pass.
fn check_run(doc: &Value, results: &Path) {
    assert_eq!(doc["status"], "complete");
    assert!(f(doc, "/tpcc/tpmc") > 0.0, "tpmC is 0");
    for t in ["logical.trace", "physical.trace"] {
        let text = std::fs::read_to_string(results.join(t)).unwrap();
        let requests = text.lines().filter(|l| !l.starts_with('#')).count();
        assert!(requests > 100, "{t} holds only {requests} requests");
    }
    assert!(f(doc, "/trace/logical/writes") > 0.0);
    assert!(f(doc, "/trace/physical/writes") > 0.0);
    // The physical trace and the kernel's own counters saw the same blocks:
    // the statistics are read while the file system is frozen at both ends
    // of the traced window, so the tracer's completed bytes agree exactly;
    // the trace file holds every one of them except write-zeroes requests
    // (no such operation in the trace format), which it counts apart.
    let c = &doc["trace_consistency"];
    assert_eq!(c["checked"], true, "{c}");
    assert_eq!(c["lost_events"], 0, "the tracer lost events: {c}");
    assert_eq!(c["completed_write_bytes"], c["stat_write_bytes"], "{c}");
    assert_eq!(c["completed_read_bytes"], c["stat_read_bytes"], "{c}");
    assert_eq!(c["trace_read_bytes"], c["stat_read_bytes"], "{c}");
    let (t, k) = (
        c["trace_write_bytes"].as_u64().unwrap(),
        c["stat_write_bytes"].as_u64().unwrap(),
    );
    assert!(t <= k, "{c}");
    if c["other_requests"] == 0 {
        assert_eq!(
            t, k,
            "no write-zeroes, so the trace file holds every byte: {c}"
        );
    }
    // Every commit's WAL is made durable: it reaches the device.
    let kinds = doc
        .pointer("/series/logical/by_kind")
        .and_then(Value::as_array)
        .expect("by_kind");
    let wal = kinds
        .iter()
        .find(|k| k[0] == "wal")
        .map(|k| k[1]["write_bytes"].as_f64().unwrap())
        .expect("WAL writes in the logical trace");
    assert!(wal > 0.0);
    let physical = f(doc, "/trace/physical/write_bytes");
    assert!(
        physical >= 0.9 * wal,
        "physical writes {physical} B < the WAL's {wal} B"
    );
    assert!(f(doc, "/fs_write_amplification") > 0.0);
    assert!(f(doc, "/endurance/physical_write_bytes_per_s") > 0.0);
    assert_eq!(
        doc["teardown"]["leftovers"].as_array().map(Vec::len),
        Some(0),
        "{}",
        doc["teardown"]
    );
    // The saved document is the printed one, and the readers' type
    // (the report's, the suite's) holds all of it: read and written back,
    // nothing changes.
    let saved: Value =
        serde_json::from_slice(&std::fs::read(results.join("oltp.json")).unwrap()).unwrap();
    assert_eq!(&saved, doc);
    let typed = flashlab_results::oltp::OltpResult::read(results).unwrap();
    assert_eq!(serde_json::to_value(&typed).unwrap(), saved);
    // Every producer's section fits its typed place (a misfit would be kept
    // under `other`, unseen by the readers).
    for key in [
        "device",
        "tpcc",
        "trace",
        "series",
        "trace_consistency",
        "tpcc_consistency",
        "endurance",
        "postgres",
        "mariadb",
        "checkpoints",
        "innodb",
        "serve",
    ] {
        assert!(
            !typed.other.contains_key(&format!("{key}_as_written")),
            "{key} did not fit its type"
        );
    }
    assert!(typed.tpcc.is_some() && typed.trace.is_some() && typed.series.is_some());
    assert!(typed.dbms_section().is_some_and(|d| !d.version.is_empty()));
    // Clause 3.3.2's consistency conditions, read from the database after the run.
    let k = &doc["tpcc_consistency"];
    assert_eq!(k["ok"], true, "{k}");
    assert_eq!(k["conditions"].as_array().map(Vec::len), Some(6), "{k}");
}

/// Starts `flashlab oltp ARGS -o RESULTS` with its output captured; the
/// pid is for [`assert_nothing_left`].
fn start_oltp(args: &[&str], results: &Path) -> (Child, u32) {
    let child = flashlab()
        .arg("oltp")
        .args(args)
        .arg("-o")
        .arg(results)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let pid = child.id();
    (child, pid)
}

/// [`start_oltp`], waited for.
fn run_oltp(args: &[&str], results: &Path) -> (Output, u32) {
    let (child, pid) = start_oltp(args, results);
    (child.wait_with_output().unwrap(), pid)
}

fn short_run(device: &[&str], results: &Path) -> (Output, u32) {
    let mut args = device.to_vec();
    args.extend([
        "--warehouses",
        "1",
        "--terminals",
        "4",
        "--duration",
        "10s",
        "--ramp-up",
        "2s",
        "--json",
    ]);
    run_oltp(&args, results)
}

#[test]
fn a_short_tpcc_run_on_a_simulated_ssd_traces_both_layers_and_leaves_nothing() {
    let Some(h) = heavy("oltp on sim") else {
        return;
    };
    let res = &h.res;
    let (o, pid) = short_run(&["--device", "sim:intel-x25e"], res);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let doc = json_of(&o);
    check_run(&doc, res);
    // The simulated SSD's own view: host writes reached it, its WAF is known.
    // serve's statistics are read inside the same frozen bracket: the bytes
    // the simulated SSD received are the bytes the loop device wrote (a
    // write-zeroes request reaches serve as a trim, not as written bytes).
    let (served, written) = (
        f(&doc, "/serve/run/host_write_bytes"),
        f(&doc, "/block_stat/delta/write_sectors") * 512.0,
    );
    if doc["trace_consistency"]["other_requests"] == 0 {
        assert_eq!(served, written, "{}", doc["serve"]["run"]);
    } else {
        assert!(served > 0.0 && served <= written, "{}", doc["serve"]["run"]);
    }
    assert!(f(&doc, "/serve/run/ftl_write_amplification") >= 1.0);
    assert!(
        f(&doc, "/endurance/years_from_rated_writes") > 0.0,
        "the X25-E profile rates 2 PB"
    );
    assert!(res.join("device.trace").exists());
    assert_nothing_left(pid, &[]);
    // "This TPC-C run on sim:mtron-pro7500 instead of sim:intel-x25e".
    let r = flashlab()
        .arg("replay")
        .arg(res.join("physical.trace"))
        .args(["--device", "sim:mtron-pro7500", "--quiet", "--json", "-o"])
        .arg(h.tmp.path().join("replay"))
        .output()
        .unwrap();
    assert!(
        r.status.success(),
        "replay: {}",
        String::from_utf8_lossy(&r.stderr)
    );
    // The report reads the directory and draws Figures 6-9.
    let html = h.tmp.path().join("report.html");
    let r = flashlab()
        .arg("report")
        .arg(res)
        .arg("-o")
        .arg(&html)
        .arg("--quiet")
        .output()
        .unwrap();
    assert!(
        r.status.success(),
        "report: {}",
        String::from_utf8_lossy(&r.stderr)
    );
    let html = std::fs::read_to_string(&html).unwrap();
    for id in ["oltp-fig6", "oltp-fig7", "oltp-fig8", "oltp-fig9"] {
        assert!(html.contains(id), "the report has no {id}");
    }
    assert!(html.contains("file-system write amplification"));
}

#[test]
fn the_wang11_oltp_suite_puts_its_runs_beside_the_papers_findings() {
    if skip("suite wang11-oltp") || !have("mkfs.btrfs") {
        return;
    }
    let _g = HEAVY.lock().unwrap_or_else(|e| e.into_inner());
    let tmp = tempfile::tempdir().unwrap();
    let res = tmp.path().join("suite");
    let o = flashlab()
        .args([
            "suite",
            "wang11-oltp",
            "--dbms",
            "postgres,mariadb",
            "--profiles",
            "intel-x25e",
            "--fs",
            "ext2,btrfs",
            "--warehouses",
            "1",
            "--terminals",
            "4",
            "--duration",
            "5s",
            "--ramp-up",
            "1s",
            "--json",
            "--quiet",
            "-o",
        ])
        .arg(&res)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let s = json_of(&o);
    assert_eq!(s["suite"], "wang11-oltp");
    let rows = s["tables"][0]["rows"].as_array().unwrap();
    assert_eq!(rows.len(), 4, "one row per run: {rows:?}");
    let row = |i: usize| (rows[i][0].as_str().unwrap(), rows[i][2].as_str().unwrap());
    assert_eq!(
        [row(0), row(1), row(2), row(3)],
        [
            ("PostgreSQL", "ext2"),
            ("PostgreSQL", "btrfs"),
            ("MariaDB/InnoDB", "ext2"),
            ("MariaDB/InnoDB", "btrfs")
        ]
    );
    for r in rows {
        assert!(
            r[3].as_str().unwrap().parse::<f64>().unwrap() > 0.0,
            "tpmC: {r:?}"
        );
    }
    let findings = s["findings"].as_array().unwrap();
    assert!(
        findings.iter().all(|f| f["paper"]["text"].is_string()),
        "every finding quotes the paper"
    );
    // Each DBMS's findings from its own runs.
    for dbms in ["postgres", "mariadb"] {
        let id = format!("wang11-oltp.fig7-8.btrfs-write-amplification.{dbms}");
        let waf = findings.iter().find(|f| f["id"] == id.as_str()).unwrap();
        assert!(waf["measured"].as_f64().unwrap() > 0.0, "{waf}");
    }
    assert!(res.join("wang11-oltp-summary.json").exists());
    assert!(res.join("intel-x25e-btrfs/oltp.json").exists());
    assert!(res.join("intel-x25e-btrfs-mariadb/oltp.json").exists());
    let r = flashlab()
        .arg("report")
        .arg(&res)
        .args(["--format", "md", "-o", "-", "--quiet"])
        .output()
        .unwrap();
    assert!(
        r.status.success(),
        "report: {}",
        String::from_utf8_lossy(&r.stderr)
    );
    assert!(String::from_utf8_lossy(&r.stdout)
        .contains("More writes were issued at the physical layer than the logical layer."));
}

#[test]
fn the_wang11_oltp_parts_print_a_verdict_per_finding() {
    // Fig. 12's six runs (Table 3's three mixes x ext2 and btrfs), short;
    // Fig. 10 has no run and is not comparable.
    if skip("suite wang11-oltp --parts") || !have("mkfs.btrfs") {
        return;
    }
    let _g = HEAVY.lock().unwrap_or_else(|e| e.into_inner());
    let tmp = tempfile::tempdir().unwrap();
    let res = tmp.path().join("suite");
    let o = flashlab()
        .args([
            "suite",
            "wang11-oltp",
            "--dbms",
            "postgres",
            "--parts",
            "fig10,fig12",
            "--terminals",
            "2",
            "--part-duration",
            "3s",
            "--ramp-up",
            "1s",
            "--json",
            "--quiet",
            "-o",
        ])
        .arg(&res)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let s = json_of(&o);
    let parts = s["tables"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["id"] == "wang11-oltp-parts")
        .expect("the parts' table");
    assert_eq!(
        s["tables"].as_array().unwrap().len(),
        1,
        "no empty Figs 6-9 table"
    );
    assert_eq!(parts["rows"].as_array().unwrap().len(), 6, "{parts}");
    let findings = s["findings"].as_array().unwrap();
    let ids: Vec<&str> = findings.iter().map(|f| f["id"].as_str().unwrap()).collect();
    assert!(ids.contains(&"wang11-oltp.fig10.gc-degradation"), "{ids:?}");
    assert!(
        ids.contains(&"wang11-oltp.fig12.read-intensive-throughput-higher"),
        "{ids:?}"
    );
    for f in findings
        .iter()
        .filter(|f| f["id"].as_str().unwrap().contains(".fig1"))
    {
        let t = f["text"].as_str().unwrap();
        assert!(
            ["reproduced: ", "not reproduced: ", "not comparable: "]
                .iter()
                .any(|v| t.starts_with(v)),
            "a verdict in front: {t}"
        );
        assert!(f["paper"]["text"].is_string(), "{f}");
    }
    assert!(res
        .join("fig12-mtron-pro7500-btrfs-read-intensive/oltp.json")
        .exists());
}

#[test]
fn a_short_tpcc_run_on_a_file_backed_device_traces_both_layers_and_leaves_nothing() {
    let Some(h) = heavy("oltp on a file") else {
        return;
    };
    let (img, res) = (&h.img, &h.res);
    let (o, pid) = short_run(
        &[
            "--device",
            img.to_str().unwrap(),
            "--size",
            "2GiB",
            "--fs",
            "ext2",
            "--scheduler",
            "mq-deadline",
            // Each WAL write synchronous (O_DSYNC), not followed by fdatasync.
            "--wal-sync-method",
            "open_datasync",
        ],
        res,
    );
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let doc = json_of(&o);
    check_run(&doc, res);
    // The setting reached PostgreSQL: the WAL's writes come without their
    // fdatasyncs (a new segment is still fsynced once when it is made).
    assert_eq!(
        doc["postgres"]["settings"]["wal_sync_method"],
        "open_datasync"
    );
    let kinds = doc["series"]["logical"]["by_kind"].as_array().unwrap();
    let wal = &kinds.iter().find(|k| k[0] == "wal").unwrap()[1];
    eprintln!("WAL with open_datasync: {wal}");
    let (writes, flushes) = (
        wal["writes"].as_u64().unwrap(),
        wal["flushes"].as_u64().unwrap(),
    );
    assert!(writes > 100 && flushes * 10 < writes, "{wal}");
    assert_eq!(doc["scheduler"]["set"], "mq-deadline");
    assert_eq!(doc["scheduler_in_use"]["current"], "mq-deadline");
    assert_nothing_left(pid, &[img]);
    assert!(!img.exists(), "the file flashlab created is removed");
}

/// The default window (60 s after a warm-up and a CHECKPOINT, PostgreSQL's
/// checkpoint interval at 30 s) holds a whole checkpoint, as a long run
/// would: counted, with the bytes it wrote; and the logical trace has the
/// checkpointer's fsyncs of the data files, which it opens, fsyncs and
/// closes faster than /proc can name them (the file system's fsync event
/// names their inodes).
#[test]
fn the_default_window_holds_a_checkpoint_and_its_fsyncs() {
    let Some(h) = heavy("oltp checkpoint") else {
        return;
    };
    let (img, res) = (&h.img, &h.res);
    let (o, pid) = run_oltp(
        &[
            "--device",
            img.to_str().unwrap(),
            "--size",
            "2GiB",
            "--warehouses",
            "1",
            "--terminals",
            "4",
            "--ramp-up",
            "2s",
            "--json",
        ],
        res,
    );
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let doc = json_of(&o);
    check_run(&doc, res);
    let c = &doc["checkpoints"];
    eprintln!("checkpoints in the default window: {c}");
    assert_eq!(f(&doc, "/tpcc/measured_s"), 60.0);
    assert!(f(&doc, "/checkpoints/completed") > 0.0, "{c}");
    assert!(f(&doc, "/checkpoints/started") > 0.0, "{c}");
    assert!(f(&doc, "/checkpoints/bytes_written") > 0.0, "{c}");
    assert_eq!(f(&doc, "/checkpoints/interval_s"), 30.0, "{c}");
    // The warm-up ran before the window, its figures apart.
    assert!(f(&doc, "/warm_up/tpmc") > 0.0);
    let data_fsyncs = doc
        .pointer("/series/logical/by_kind")
        .and_then(Value::as_array)
        .and_then(|k| k.iter().find(|k| k[0] == "data"))
        .and_then(|k| k[1]["flushes"].as_u64())
        .unwrap_or(0);
    let tc = &doc["trace_consistency"];
    eprintln!("data-file fsyncs in the logical trace: {data_fsyncs}; {tc}");
    assert!(
        data_fsyncs > 0,
        "no data-file fsync in the logical trace: {tc}"
    );
    assert!(
        f(&doc, "/trace_consistency/logical_syncs_by_inode") > 0.0,
        "{tc}"
    );
    assert_nothing_left(pid, &[img]);
}

/// `-o DIR` holding an earlier run: refused (or failing its checks) with
/// nothing in DIR rewritten, its manifest included.
#[test]
fn a_refused_run_rewrites_nothing_in_an_existing_results_directory() {
    if skip("oltp -o existing") {
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    let res = tmp.path().join("res");
    std::fs::create_dir(&res).unwrap();
    let earlier = [
        (
            "oltp.json",
            "{\"status\": \"complete\", \"started_unix_s\": 1}\n",
        ),
        ("manifest.json", "an earlier run's manifest\n"),
    ];
    for (name, text) in earlier {
        std::fs::write(res.join(name), text).unwrap();
    }
    for args in [
        &["--device", "sim:intel-x25e"][..],
        &["--device", "sim:no-such-ssd"][..],
        &["--device", "sim:intel-x25e", "--terminals", "0"][..],
    ] {
        let o = flashlab()
            .arg("oltp")
            .args(args)
            .arg("-o")
            .arg(&res)
            .output()
            .unwrap();
        assert_eq!(
            o.status.code(),
            Some(2),
            "{args:?}: {}",
            String::from_utf8_lossy(&o.stderr)
        );
        let mut names: Vec<String> = std::fs::read_dir(&res)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        names.sort();
        assert_eq!(names, ["manifest.json", "oltp.json"], "{args:?}");
        for (name, text) in earlier {
            assert_eq!(
                std::fs::read_to_string(res.join(name)).unwrap(),
                text,
                "{args:?} rewrote {name}"
            );
        }
    }
}

/// A setting PostgreSQL refuses: its own error line (not the HINT that
/// follows it in the log), everything torn down.
#[test]
fn a_setting_postgresql_refuses_shows_postgresql_s_error() {
    let Some(h) = heavy("oltp bad shared_buffers") else {
        return;
    };
    let (img, res) = (&h.img, &h.res);
    let (o, pid) = run_oltp(
        &[
            "--device",
            img.to_str().unwrap(),
            "--size",
            "2GiB",
            "--setup-only",
            "--shared-buffers",
            "lots",
        ],
        res,
    );
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(!o.status.success());
    let line = err.lines().find(|l| l.starts_with("error:")).unwrap_or("");
    assert!(
        line.contains("invalid value for parameter \"shared_buffers\""),
        "{err}"
    );
    assert!(!line.contains("HINT"), "{line}");
    let doc: Value =
        serde_json::from_slice(&std::fs::read(res.join("oltp.json")).unwrap()).unwrap();
    assert_eq!(doc["status"], "failed");
    assert_nothing_left(pid, &[img]);
}

#[test]
fn an_interrupted_run_tears_everything_down() {
    let Some(h) = heavy("oltp interrupted") else {
        return;
    };
    let res = &h.res;
    let (child, pid) = start_oltp(
        &[
            "--device",
            "sim:intel-x25e",
            "--warehouses",
            "1",
            "--terminals",
            "4",
            "--duration",
            "120s",
            "--quiet",
        ],
        res,
    );
    let end = Instant::now() + Duration::from_secs(180);
    loop {
        let status = std::fs::read(res.join("oltp.json"))
            .ok()
            .and_then(|b| serde_json::from_slice::<Value>(&b).ok())
            .map(|d| d["status"].as_str().unwrap_or("").to_string());
        if status.as_deref() == Some("running") {
            break;
        }
        assert!(Instant::now() < end, "the run never started");
        std::thread::sleep(Duration::from_millis(200));
    }
    std::thread::sleep(Duration::from_secs(3));
    // SAFETY: kill(2) on the child we started.
    unsafe { libc::kill(pid as libc::pid_t, libc::SIGINT) };
    let o = child.wait_with_output().unwrap();
    assert_eq!(
        o.status.code(),
        Some(130),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    let doc: Value =
        serde_json::from_slice(&std::fs::read(res.join("oltp.json")).unwrap()).unwrap();
    assert_eq!(doc["status"], "interrupted");
    assert_nothing_left(pid, &[]);
}

/// A bad-input case: one line naming `expect`, exit 2, nothing left.
fn refused(args: &[&str], path: Option<&str>, expect: &str) -> Output {
    let mut c = flashlab();
    c.arg("oltp").args(args);
    if let Some(p) = path {
        c.env("PATH", p);
    }
    let child = c
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let pid = child.id();
    let o = child.wait_with_output().unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{args:?}: {err}");
    let lines: Vec<&str> = err.lines().filter(|l| l.starts_with("error:")).collect();
    assert_eq!(lines.len(), 1, "{args:?}: {err}");
    assert!(
        lines[0].contains(expect),
        "{args:?}: expected '{expect}' in: {err}"
    );
    assert_nothing_left(pid, &[]);
    o
}

#[test]
fn missing_parts_and_bad_input_are_one_line_and_exit_2() {
    if skip("oltp bad input") {
        return;
    }
    let tmp = tempfile::tempdir_in("/var/tmp").unwrap();
    let res = |n: &str| tmp.path().join(n).to_string_lossy().into_owned();
    // PostgreSQL not installed (where --pg-bin points).
    refused(
        &[
            "--device",
            "sim:intel-x25e",
            "--pg-bin",
            "/nonexistent/bin",
            "-o",
            &res("a"),
        ],
        None,
        "apt-get install postgresql",
    );
    // A file-system tool missing: a PATH with everything but mkfs.xfs.
    let bin = tmp.path().join("bin");
    std::fs::create_dir(&bin).unwrap();
    for t in [
        "losetup",
        "mount",
        "umount",
        "nbdfuse",
        "fusermount3",
        "mkfs.ext4",
    ] {
        let out = Command::new("sh")
            .arg("-c")
            .arg(format!("command -v {t}"))
            .output()
            .unwrap();
        let p = String::from_utf8_lossy(&out.stdout).trim().to_string();
        std::os::unix::fs::symlink(p, bin.join(t)).unwrap();
    }
    let path = bin.to_string_lossy().into_owned();
    refused(
        &["--device", "sim:intel-x25e", "--fs", "xfs", "-o", &res("b")],
        Some(&path),
        "apt-get install xfsprogs",
    );
    // nilfs2: not in this kernel; btrfs is the stand-in.
    refused(
        &["--device", "sim:intel-x25e", "--fs", "nilfs2"],
        None,
        "--fs btrfs",
    );
    // A device too small for the warehouses: nothing is created.
    let img = tmp.path().join("small.img");
    refused(
        &[
            "--device",
            img.to_str().unwrap(),
            "--size",
            "256MiB",
            "--warehouses",
            "2",
            "-o",
            &res("c"),
        ],
        None,
        "too small",
    );
    assert!(!img.exists());
    // An existing file is not flashlab's to format.
    let mine = tmp.path().join("mine.img");
    std::fs::write(&mine, b"precious").unwrap();
    refused(
        &["--device", mine.to_str().unwrap(), "-o", &res("d")],
        None,
        "--allow-write-to",
    );
    assert_eq!(std::fs::read(&mine).unwrap(), b"precious");
    // A cluster flashlab did not create, under --mount: untouched.
    let m = tmp.path().join("mnt");
    let foreign = m.join("flashlab-oltp-pgdata");
    std::fs::create_dir_all(&foreign).unwrap();
    std::fs::write(foreign.join("PG_VERSION"), "15\n").unwrap();
    refused(
        &[
            "--mount",
            m.to_str().unwrap(),
            "--setup-only",
            "-o",
            &res("e"),
        ],
        None,
        "did not create",
    );
    assert_eq!(
        std::fs::read_to_string(foreign.join("PG_VERSION")).unwrap(),
        "15\n"
    );
    // --device and --mount together.
    refused(
        &["--device", "sim:intel-x25e", "--mount", "/tmp"],
        None,
        "exclude each other",
    );
}

#[test]
fn not_root_is_one_line_and_exit_2() {
    if !is_root() || !have("setpriv") {
        eprintln!("SKIPPED: not root: needs root and setpriv to drop to nobody");
        return;
    }
    let exe = env!("CARGO_BIN_EXE_flashlab");
    let o = Command::new("setpriv")
        .args([
            "--reuid=nobody",
            "--regid=nogroup",
            "--clear-groups",
            exe,
            "oltp",
            "--device",
            "sim:intel-x25e",
            "-o",
            "/nonexistent/x",
        ])
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    if err.contains("Permission denied") && o.status.code() != Some(2) {
        eprintln!("SKIPPED: not root: nobody cannot execute {exe}");
        return;
    }
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(err.contains("needs root") && err.contains("sudo"), "{err}");
}

#[test]
fn setup_only_on_a_mount_runs_postgres_there_and_removes_only_its_own_cluster() {
    if skip("oltp --mount") {
        return;
    }
    let _g = HEAVY.lock().unwrap_or_else(|e| e.into_inner());
    let tmp = tempfile::tempdir_in("/var/tmp").unwrap();
    // The postgres user must reach the directory (tempdirs are 0700).
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(tmp.path(), std::fs::Permissions::from_mode(0o755)).unwrap();
    let m = tmp.path().join("mnt");
    std::fs::create_dir(&m).unwrap();
    std::fs::write(m.join("keep.txt"), "mine").unwrap();
    let (o, pid) = run_oltp(
        &["--mount", m.to_str().unwrap(), "--setup-only", "--quiet"],
        &tmp.path().join("res"),
    );
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    assert!(
        !m.join("flashlab-oltp-pgdata").exists(),
        "its own cluster is removed"
    );
    assert_eq!(std::fs::read_to_string(m.join("keep.txt")).unwrap(), "mine");
    assert_nothing_left(pid, &[]);
}

#[test]
fn a_block_device_passes_the_safety_check_and_gets_its_file_system_through_the_checked_descriptor()
{
    if skip("oltp on a block device") {
        return;
    }
    let _g = HEAVY.lock().unwrap_or_else(|e| e.into_inner());
    // A loop device over a /dev/shm file: no signature, no mounted file
    // system under it, so the write-safety check lets mkfs write.
    let shm = tempfile::tempdir_in("/dev/shm").unwrap();
    let img = shm.path().join("blk.img");
    std::fs::File::create(&img)
        .unwrap()
        .set_len(3 << 30)
        .unwrap();
    let out = Command::new("losetup")
        .args(["-f", "--show"])
        .arg(&img)
        .output()
        .unwrap();
    assert!(out.status.success());
    let dev = String::from_utf8_lossy(&out.stdout).trim().to_string();
    struct Detach(String);
    impl Drop for Detach {
        fn drop(&mut self) {
            let _ = Command::new("losetup").arg("-d").arg(&self.0).status();
        }
    }
    let _detach = Detach(dev.clone());
    let tmp = tempfile::tempdir().unwrap();
    let (o, pid) = run_oltp(
        &["--device", &dev, "--setup-only", "--quiet"],
        &tmp.path().join("res"),
    );
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let blkid = Command::new("blkid")
        .args(["-p", "-o", "value", "-s", "TYPE", &dev])
        .output()
        .unwrap();
    assert_eq!(
        String::from_utf8_lossy(&blkid.stdout).trim(),
        "ext4",
        "mkfs reached {dev}"
    );
    assert_nothing_left(pid, &[]);
    // Now it holds a file system: the same command is refused, naming the flag.
    refused(
        &[
            "--device",
            &dev,
            "--setup-only",
            "-o",
            &tmp.path().join("res2").to_string_lossy(),
        ],
        None,
        "--allow-write-to",
    );
}

/// Issue 31, item 6: kill -9 of `oltp` left PostgreSQL, serve, nbdfuse, the
/// mounts and the loop device; `flashlab oltp --cleanup` (which every run
/// also does first) undoes them from the killed run's record.
#[test]
fn a_killed_run_is_cleaned_up_by_the_next_one() {
    let Some(h) = heavy("oltp killed") else {
        return;
    };
    let res = &h.res;
    let (mut child, pid) = start_oltp(
        &[
            "--device",
            "sim:intel-x25e",
            "--warehouses",
            "1",
            "--terminals",
            "2",
            "--duration",
            "120s",
            "--quiet",
        ],
        res,
    );
    // Killed once PostgreSQL runs: everything is set up by then.
    let end = Instant::now() + Duration::from_secs(180);
    let pg_pid = loop {
        let doc = std::fs::read(res.join("oltp.json"))
            .ok()
            .and_then(|b| serde_json::from_slice::<Value>(&b).ok());
        if let Some(p) = doc
            .as_ref()
            .and_then(|d| d.pointer("/postgres/pid")?.as_u64())
        {
            break p as u32;
        }
        assert!(Instant::now() < end, "PostgreSQL never started");
        std::thread::sleep(Duration::from_millis(200));
    };
    // SAFETY: kill(2) on the child we started.
    unsafe { libc::kill(pid as libc::pid_t, libc::SIGKILL) };
    child.wait().unwrap();
    assert!(
        Path::new(&format!("/proc/{pg_pid}")).exists(),
        "PostgreSQL died with flashlab: nothing to clean up"
    );
    assert!(run_dir_of(pid).exists());
    let o = flashlab().args(["oltp", "--cleanup"]).output().unwrap();
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    eprintln!("flashlab oltp --cleanup:\n{out}");
    for said in [
        format!("killed run {pid}: stopped PostgreSQL (pid {pg_pid})"),
        format!(
            "killed run {pid}: unmounted {}/mnt",
            run_dir_of(pid).display()
        ),
        format!(
            "killed run {pid}: unmounted {}/nbd",
            run_dir_of(pid).display()
        ),
        format!("killed run {pid}: stopped flashlab serve"),
        format!("killed run {pid}: removed {}", run_dir_of(pid).display()),
    ] {
        assert!(out.contains(&said), "'{said}' not in:\n{out}");
    }
    // Gone, or a zombie until init reaps it (its parent was killed).
    let running = std::fs::read_to_string(format!("/proc/{pg_pid}/stat")).is_ok_and(|s| {
        !s.rsplit(')')
            .next()
            .unwrap_or("")
            .trim_start()
            .starts_with('Z')
    });
    assert!(!running, "PostgreSQL still runs");
    assert_nothing_left(pid, &[]);
    // Nothing is left for the next cleanup.
    let again = flashlab().args(["oltp", "--cleanup"]).output().unwrap();
    assert!(!String::from_utf8_lossy(&again.stdout).contains(&format!("killed run {pid}")));
}

/// `--dbms mariadb` on a file-backed device: the same checks as PostgreSQL's
/// run (tpmC, both traces, the physical trace equal to /sys/block, nothing
/// left), the InnoDB settings that make its IO synchronous, and InnoDB's
/// own byte counters against the logical trace of the same window.
#[test]
fn a_short_mariadb_run_traces_both_layers_and_innodb_counts_what_the_trace_saw() {
    if !Path::new("/usr/sbin/mariadbd").exists() {
        if std::env::var("FLASHLAB_REQUIRE_ROOT_TESTS").as_deref() == Ok("1") {
            panic!("MariaDB is not installed but FLASHLAB_REQUIRE_ROOT_TESTS=1");
        }
        eprintln!("SKIPPED: oltp on MariaDB: apt-get install mariadb-server");
        return;
    }
    let Some(h) = heavy("oltp on MariaDB") else {
        return;
    };
    let (img, res) = (&h.img, &h.res);
    let (o, pid) = short_run(
        &[
            "--dbms",
            "mariadb",
            "--device",
            img.to_str().unwrap(),
            "--size",
            "2GiB",
            "--fs",
            "ext4",
            // Not the defaults, to see them reach the server.
            "--innodb-buffer-pool-size",
            "96MiB",
            "--innodb-log-file-size",
            "48MiB",
        ],
        res,
    );
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let doc = json_of(&o);
    check_run(&doc, res);
    let innodb = &doc["mariadb"]["innodb"];
    assert_eq!(innodb["flush_method"], "O_DIRECT", "{innodb}");
    assert_eq!(innodb["use_native_aio"], false, "{innodb}");
    assert_eq!(innodb["flush_log_at_trx_commit"], 1, "{innodb}");
    // The --innodb-* flags are recorded, and the server runs with them.
    assert_eq!(innodb["buffer_pool_size_bytes"], 96 << 20, "{innodb}");
    assert_eq!(doc["config"]["innodb"], *innodb);
    let server = &doc["mariadb"]["server_variables"];
    for (name, value) in [
        ("innodb_buffer_pool_size", "100663296"),
        ("innodb_log_file_size", "50331648"),
        ("innodb_flush_method", "O_DIRECT"),
        ("innodb_doublewrite", "ON"),
        ("innodb_use_native_aio", "OFF"),
        ("innodb_flush_log_at_trx_commit", "1"),
    ] {
        assert_eq!(server[name], value, "{server}");
    }
    assert!(doc["postgres"].is_null(), "no PostgreSQL section");
    assert_eq!(
        doc["tpcc"]["mix"]["within_spec"], true,
        "{}",
        doc["tpcc"]["mix"]
    );
    // InnoDB's own counters for the window (read just before the tracers
    // start and just after they stop) against the logical trace, file kind
    // by file kind: what InnoDB says it wrote to its data files, and how
    // often it synced, the trace saw as system calls on those files. The
    // redo log is written in whole 512-byte blocks (the last, partial block
    // again with the next write), so the trace holds up to one block per
    // write more than InnoDB's payload count.
    let rows = doc["innodb"]["counter_vs_trace"]
        .as_array()
        .expect("counter_vs_trace");
    eprintln!("InnoDB vs trace: {}", doc["innodb"]);
    let row = |name: &str| {
        let r = rows.iter().find(|r| r[0] == name).expect(name);
        (r[1].as_f64().unwrap(), r[2].as_f64().expect("traced"))
    };
    // (A 10 s window right after the flush may see no page written: then
    // both are 0. The 30 s runs of docs/oltp-tracing.md agree to the byte.)
    let (innodb, traced) = row("data files: bytes written");
    assert!(traced <= innodb && traced >= 0.97 * innodb, "{rows:?}");
    let (innodb, traced) = row("redo log: bytes written");
    // The trace's few extra redo writes are the checkpoints' header
    // writes (4 KiB each), which InnoDB's redo counters leave out.
    let (innodb_writes, redo_writes) = row("redo log: writes");
    let extra_writes = (redo_writes - innodb_writes).max(0.0);
    assert!(innodb > 0.0, "{rows:?}");
    assert!(
        traced >= 0.99 * innodb
            && traced <= innodb + 512.0 * redo_writes + 4096.0 * extra_writes + 65536.0,
        "{rows:?}"
    );
    let (innodb, traced) = row("fsyncs");
    assert!((innodb - traced).abs() <= 0.01 * innodb + 5.0, "{rows:?}");
    assert_nothing_left(pid, &[img]);
    assert!(!img.exists(), "the file flashlab created is removed");
}

#[test]
fn an_unknown_suite_part_is_one_line_naming_the_parts() {
    let o = flashlab()
        .args(["suite", "wang11-oltp", "--parts", "fig6-9,fig14"])
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert_eq!(err.trim().lines().count(), 1, "{err}");
    assert!(
        err.contains("--parts fig14") && err.contains("fig13 or all"),
        "{err}"
    );
}

#[test]
fn an_unknown_dbms_is_one_line_naming_the_choices() {
    let o = flashlab()
        .args(["oltp", "--dbms", "mysql", "--device", "x"])
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{err}");
    let lines: Vec<&str> = err.lines().filter(|l| !l.trim().is_empty()).collect();
    assert_eq!(lines.len(), 1, "{err}");
    assert!(
        lines[0].contains("mysql") && lines[0].contains("postgres") && lines[0].contains("mariadb"),
        "{err}"
    );
    assert!(!lines[0].contains("did you mean"), "{err}");
    // InnoDB's flags belong to MariaDB runs; bad values name the choices.
    for (args, expect) in [
        (&["--innodb-doublewrite", "off"][..], "--dbms mariadb"),
        (
            &["--dbms", "mariadb", "--innodb-flush-method", "direct"][..],
            "O_DIRECT_NO_FSYNC",
        ),
        (
            &["--dbms", "mariadb", "--innodb-log-file-size", "512KiB"][..],
            "at least 1 MiB",
        ),
        (&["--wal-sync-method", "direct"][..], "open_datasync"),
        (&["--mix", "heavy"][..], "read-intensive or write-intensive"),
    ] {
        let o = flashlab()
            .args(["oltp", "--device", "x"])
            .args(args)
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(2), "{args:?}: {err}");
        assert!(
            err.trim().lines().count() == 1 && err.contains(expect),
            "{args:?}: {err}"
        );
    }
    // A slip gets the nearest name, in the suite too.
    for args in [
        &["oltp", "--dbms", "mariabd", "--device", "x"][..],
        &["suite", "wang11-oltp", "--dbms", "postgres,postgress"][..],
    ] {
        let o = flashlab().args(args).output().unwrap();
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(2), "{args:?}: {err}");
        let want = if args[0] == "oltp" {
            "mariadb"
        } else {
            "postgres"
        };
        assert!(
            err.trim().lines().count() == 1 && err.contains(&format!("did you mean {want}?")),
            "{args:?}: {err}"
        );
    }
}

#[test]
fn repeat_and_rate_are_checked_before_anything_is_set_up() {
    // Needs neither root nor a DBMS: refused while reading the flags.
    for (args, expect) in [
        (&["--repeat", "0"][..], "at least 1 measured window"),
        (&["--rate", "0"][..], "transactions per minute"),
        (
            &["--rate", "600", "--keying-and-think"][..],
            "both pace the terminals",
        ),
    ] {
        let o = flashlab()
            .args(["oltp", "--device", "sim:intel-x25e"])
            .args(args)
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(2), "{args:?}: {err}");
        let lines: Vec<&str> = err.lines().filter(|l| !l.trim().is_empty()).collect();
        assert_eq!(lines.len(), 1, "{args:?}: {err}");
        assert!(lines[0].contains(expect), "{args:?}: {err}");
    }
}

#[test]
fn repeated_windows_at_a_target_rate_give_each_window_and_a_95_percent_interval() {
    let Some(h) = heavy("oltp --repeat --rate") else {
        return;
    };
    let res = &h.res;
    // 300 transactions a minute (5/s) is far below what 2 terminals reach
    // on the simulated X25-E, so every window runs at the offered load.
    let (o, pid) = run_oltp(
        &[
            "--device",
            "sim:intel-x25e",
            "--warehouses",
            "1",
            "--terminals",
            "2",
            "--duration",
            "6s",
            "--ramp-up",
            "1s",
            "--repeat",
            "3",
            "--rate",
            "300",
            "--json",
        ],
        res,
    );
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let doc = json_of(&o);
    assert_eq!(doc["status"], "complete");
    assert_eq!(doc["config"]["repeat"], 3);
    assert_eq!(doc["tpcc"]["rate_per_min"], 300);
    let windows = doc["repeats"]["windows"]
        .as_array()
        .expect("repeats.windows");
    assert_eq!(windows.len(), 3, "{}", doc["repeats"]);
    let mut seeds = Vec::new();
    for (i, w) in windows.iter().enumerate() {
        assert_eq!(w["window"], i as u64 + 1);
        // The offered 5 transactions/s, held: within 20 % in each window.
        let tps = f(w, "/transactions_per_s");
        assert!((tps - 5.0).abs() <= 1.0, "window {}: {tps}/s", i + 1);
        assert!(f(w, "/tpmc") > 0.0);
        seeds.push(w["seed"].as_u64().unwrap());
        // Windows 2 and 3 keep their own per-second series.
        if i > 0 {
            assert!(res.join(format!("tpcc-seconds-{}.jsonl", i + 1)).exists());
        }
    }
    seeds.dedup();
    assert_eq!(seeds.len(), 3, "each window draws its own inputs");
    // The interval is the windows' mean with Student's t around it.
    let tpmc: Vec<f64> = windows.iter().map(|w| f(w, "/tpmc")).collect();
    let mean = tpmc.iter().sum::<f64>() / 3.0;
    assert!((f(&doc, "/repeats/tpmc/mean") - mean).abs() < 1e-6);
    assert_eq!(doc["repeats"]["tpmc"]["n"], 3);
    assert!(f(&doc, "/repeats/tpmc/low") <= mean && mean <= f(&doc, "/repeats/tpmc/high"));
    // Window 1 is the traced one, as without --repeat.
    assert!(
        f(&doc, "/trace/physical/write_bytes") > 0.0,
        "{}",
        doc["trace"]
    );
    assert_nothing_left(pid, &[]);
}
