//! `flashlab serve` with real NBD clients from Debian: nbdinfo and nbdcopy
//! (libnbd-bin), qemu-img (qemu-utils). Skipped with a message when a client
//! is missing, failed instead under FLASHLAB_REQUIRE_ROOT_TESTS=1 (CI).

mod serve_util;

use std::process::Command;

use serve_util::{missing_tools, skip, Serve};

fn run(cmd: &str, args: &[&str]) -> String {
    let o = Command::new(cmd).args(args).output().unwrap();
    assert!(
        o.status.success(),
        "{cmd} {args:?}: {}{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    );
    String::from_utf8_lossy(&o.stdout).to_string()
}

#[ignore = "needs root (loop devices, mounts): run as root with `cargo test -- --include-ignored`, as CI does"]
#[test]
fn nbdinfo_nbdcopy_and_qemu_img() {
    if skip(
        "serve_clients",
        missing_tools(&["nbdinfo", "nbdcopy", "qemu-img"]),
    ) {
        return;
    }
    let d = tempfile::tempdir().unwrap();
    let s = Serve::start(
        &d.path().join("dev"),
        &["--profile", "ssd-m,capacity=256MiB,channels=2"],
    );
    let uri = s.uri();

    // nbdinfo: size, flags and block sizes as advertised.
    let info = run("nbdinfo", &["--json", &uri]);
    let v: serde_json::Value = serde_json::from_str(&info).unwrap();
    let e = &v["exports"][0];
    assert_eq!(e["export-size"], 256u64 << 20, "{info}");
    for k in [
        "can_flush",
        "can_fua",
        "can_trim",
        "can_zero",
        "can_multi_conn",
    ] {
        assert_eq!(e[k], true, "{k}: {info}");
    }
    assert_eq!(e["block_size_minimum"], 512, "{info}");
    let list = run("nbdinfo", &["--list", &uri]);
    assert!(list.contains("flashlab"), "{list}");

    // qemu-img: write an image into the export, compare, read it back.
    let src = d.path().join("src.img");
    let mut data = vec![0u8; 24 << 20];
    let mut x = 0x9e37_79b9_7f4a_7c15u64;
    for (i, b) in data.iter_mut().enumerate() {
        if i % 8 == 0 {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
        }
        *b = (x >> ((i % 8) * 8)) as u8;
    }
    // a hole in the middle (qemu-img and nbdcopy turn it into zero requests)
    data[8 << 20..12 << 20].fill(0);
    std::fs::write(&src, &data).unwrap();
    let src_s = src.to_str().unwrap();
    run(
        "qemu-img",
        &["convert", "-n", "-f", "raw", "-O", "raw", src_s, &uri],
    );
    let out = run(
        "qemu-img",
        &["compare", "-f", "raw", "-F", "raw", src_s, &uri],
    );
    assert!(out.contains("identical"), "{out}");
    let qinfo = run("qemu-img", &["info", "--output=json", &uri]);
    assert!(qinfo.contains("268435456"), "{qinfo}");

    // nbdcopy: export -> file over several connections, then file -> export at another offset? (whole-disk only): copy back and compare.
    let back = d.path().join("back.img");
    run("nbdcopy", &["--flush", &uri, back.to_str().unwrap()]);
    let got = std::fs::read(&back).unwrap();
    assert_eq!(got.len(), 256 << 20);
    assert!(
        got[..data.len()] == data[..],
        "nbdcopy read back different data"
    );
    assert!(got[data.len()..].iter().all(|&b| b == 0));
    // file -> export (writes, zeroes, flush) and a final check with nbdcopy to a pipe's checksum equivalent.
    let mut twice = got;
    twice[100 << 20..(100 << 20) + data.len()].copy_from_slice(&data);
    std::fs::write(&back, &twice).unwrap();
    run("nbdcopy", &["--flush", back.to_str().unwrap(), &uri]);
    let out = run(
        "qemu-img",
        &[
            "compare",
            "-f",
            "raw",
            "-F",
            "raw",
            back.to_str().unwrap(),
            &uri,
        ],
    );
    assert!(out.contains("identical"), "{out}");
    let st = s.terminate();
    assert!(st.success());
}
