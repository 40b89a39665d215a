//! Each trace format parsed from a small example, and detection.

use flashlab_device::Mode;
use flashlab_trace::{parse, Format, TraceIo, TraceOp, TraceWriter};

fn io(time_ns: u64, op: char, offset_bytes: u64, size_bytes: u64) -> TraceIo {
    let op = match op {
        'R' => TraceOp::Io(Mode::Read),
        'W' => TraceOp::Io(Mode::Write),
        'T' => TraceOp::Io(Mode::Trim),
        _ => TraceOp::Flush,
    };
    TraceIo {
        time_ns,
        op,
        offset_bytes,
        size_bytes,
    }
}

fn check(text: &str, format: Format, expected: &[TraceIo]) {
    assert_eq!(Format::detect(text), Some(format), "detects {format}");
    assert_eq!(parse(text, format, "t").unwrap(), expected);
}

#[test]
fn mqsim() {
    check(
        "938513000 4 264719034 16 0\n938828000 3 197570570 16 1\n",
        Format::Mqsim,
        &[
            io(0, 'W', 264719034 * 512, 8192),
            io(315000, 'R', 197570570 * 512, 8192),
        ],
    );
}

#[test]
fn disksim() {
    check(
        "0.000000 0 100 8 1\n1.500000 0 200 16 0\n",
        Format::Disksim,
        &[io(0, 'R', 51200, 4096), io(1_500_000, 'W', 102400, 8192)],
    );
}

#[test]
fn blkparse_keeps_the_issue_action() {
    let text = "\
  8,0    3        1     0.000000000   697  Q   W 223490 + 8 [kjournald]
  8,0    3        2     0.000001000   697  D   W 223490 + 8 [kjournald]
  8,0    3        3     0.000500000   697  C   W 223490 + 8 [0]
  8,0    0        4     0.001000000   700  D   R 100 + 64 [cat]
  8,0    0        5     0.002000000   700  D  DS 4096 + 2048 [fstrim]
  8,0    0        6     0.003000000   700  D  FN [jbd2]
CPU0 (8,0):
 Reads Queued:           0,        0KiB\t Writes Queued:           0,        0KiB
";
    check(
        text,
        Format::Blkparse,
        &[
            io(0, 'W', 223490 * 512, 4096),
            io(999_000, 'R', 51200, 32768),
            io(1_999_000, 'T', 4096 * 512, 1 << 20),
            io(2_999_000, 'F', 0, 0),
        ],
    );
}

#[test]
fn fio_v2_and_v3() {
    let v2 = "fio version 2 iolog\n/dev/sdb add\n/dev/sdb open\n/dev/sdb write 0 4096\n/dev/sdb wait 250\n/dev/sdb read 8192 4096\n/dev/sdb sync\n/dev/sdb close\n";
    check(
        v2,
        Format::Fio,
        &[
            io(0, 'W', 0, 4096),
            io(250_000, 'R', 8192, 4096),
            io(250_000, 'F', 0, 0),
        ],
    );
    let v3 = "fio version 3 iolog\n0 /dev/sdb add\n0 /dev/sdb open\n12 /dev/sdb write 0 4096\n15 /dev/sdb trim 8192 65536\n20 /dev/sdb close\n";
    check(
        v3,
        Format::Fio,
        &[io(0, 'W', 0, 4096), io(3_000_000, 'T', 8192, 65536)],
    );
}

#[test]
fn msr() {
    check(
        "128166372003061629,hm,1,Read,383496192,32768,1331\n128166372016382155,hm,1,Write,3617587200,4096,26163\n",
        Format::Msr,
        &[io(0, 'R', 383496192, 32768), io(1_332_052_600, 'W', 3617587200, 4096)],
    );
}

#[test]
fn own_format_round_trips() {
    let ios = vec![
        io(0, 'W', 1 << 20, 4096),
        io(1200, 'R', 0, 32768),
        io(5000, 'F', 0, 0),
        io(9000, 'T', 4096, 4096),
    ];
    let mut w = TraceWriter::new(Vec::new()).unwrap();
    for i in &ios {
        w.write(i).unwrap();
    }
    let text = String::from_utf8(w.into_inner()).unwrap();
    check(&text, Format::Flashlab, &ios);
}

#[test]
fn bad_lines_are_reported_with_their_number() {
    assert_eq!(
        parse("1 0 0 8 0\n2 0 0 8 7\n", Format::Mqsim, "t.trace")
            .unwrap_err()
            .to_string(),
        "t.trace line 2: type 7 is not 0 (write) or 1 (read)"
    );
    assert!(parse("1 0 0 8\n", Format::Mqsim, "t")
        .unwrap_err()
        .to_string()
        .contains("expected 5 fields"));
    assert!(parse("", Format::Mqsim, "t")
        .unwrap_err()
        .to_string()
        .contains("holds no requests"));
    assert!(parse("fio version 9 iolog\n", Format::Fio, "t")
        .unwrap_err()
        .to_string()
        .contains("line 1"));
}

#[test]
fn times_are_relative_and_sorted() {
    let ios = parse(
        "# flashlab-trace v1\n500 R 0 512\n100 W 512 512\n",
        Format::Flashlab,
        "t",
    )
    .unwrap();
    assert_eq!(ios, vec![io(0, 'W', 512, 512), io(400, 'R', 0, 512)]);
}

#[test]
fn the_shared_tpcc_trace_parses() {
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../../shared/traces/tpcc-small.trace"
    );
    let Ok(text) = std::fs::read_to_string(path) else {
        eprintln!("SKIPPED: {path} not present");
        return;
    };
    assert_eq!(Format::detect(&text), Some(Format::Mqsim));
    let ios = parse(&text, Format::Mqsim, path).unwrap();
    assert_eq!(ios.len(), 6999);
    assert!(ios.windows(2).all(|w| w[0].time_ns <= w[1].time_ns));
}

#[test]
fn fitting_a_trace_onto_a_small_device() {
    use flashlab_trace::{fit_to_device, Fit};
    let trace = vec![
        io(0, 'W', 0, 4096),
        io(1, 'R', 10 << 20, 8192),
        io(2, 'W', 100 << 20, 4096),
    ];
    let mut t = trace.clone();
    assert!(fit_to_device(&mut t, 16 << 20, 512, Fit::Error)
        .unwrap_err()
        .to_string()
        .contains("--fit wrap"));
    let mut t = trace.clone();
    fit_to_device(&mut t, 16 << 20, 512, Fit::Wrap).unwrap();
    assert_eq!(
        t.iter().map(|i| i.offset_bytes).collect::<Vec<_>>(),
        vec![0, 10 << 20, (100 << 20) % (16 << 20)]
    );
    let mut t = trace.clone();
    fit_to_device(&mut t, 16 << 20, 4096, Fit::Scale).unwrap();
    assert!(t
        .iter()
        .all(|i| i.offset_bytes + i.size_bytes <= 16 << 20 && i.offset_bytes % 4096 == 0));
    assert!(t[1].offset_bytes < t[2].offset_bytes, "order kept");
    let mut t = vec![io(0, 'W', 0, 1024)];
    assert!(fit_to_device(&mut t, 16 << 20, 4096, Fit::Wrap)
        .unwrap_err()
        .to_string()
        .contains("multiple"));
}

/// Checked arithmetic: nothing wraps, nothing is truncated, every refusal
/// names its line.
#[test]
fn out_of_range_numbers_are_refused_not_wrapped() {
    let err = |text: &str, format: Format| parse(text, format, "t").unwrap_err().to_string();
    // 2^55 sectors is 2^64 bytes: it used to wrap to offset 0.
    let e = err("0 0 36028797018963968 8 0\n", Format::Mqsim);
    assert!(
        e.starts_with("t line 1: start_sector") && e.contains("too large"),
        "{e}"
    );
    // A 4 GiB request used to be truncated to 32 bits (0 B).
    let e = err("# flashlab-trace v1\n0 W 0 4294967296\n", Format::Flashlab);
    assert!(
        e.contains("line 2") && e.contains("larger than the largest IO"),
        "{e}"
    );
    let e = err(
        "# flashlab-trace v1\n0 W 18446744073709551615 4096\n",
        Format::Flashlab,
    );
    assert!(e.contains("ends past 2^64"), "{e}");
    let e = err("0.5 0 36028797018963968 8 1\n", Format::Disksim);
    assert!(e.contains("too large"), "{e}");
    let e = err("-1.0 0 8 8 1\n", Format::Disksim);
    assert!(e.contains("line 1"), "{e}");
    let e = err(
        "fio version 3 iolog\n18446744073709551 /dev/sdb write 0 4096\n",
        Format::Fio,
    );
    assert!(e.contains("line 2") && e.contains("timestamp_ms"), "{e}");
    let e = err(
        "fio version 2 iolog\n/dev/sdb wait 18446744073709552\n",
        Format::Fio,
    );
    assert!(e.contains("wait_us"), "{e}");
    let e = err("184467440737095517,h,0,Write,0,4096,10\n", Format::Msr);
    assert!(e.contains("timestamp") && e.contains("too large"), "{e}");
    let e = err("8,0 0 1 1e300 1 D W 0 + 8 [p]\n", Format::Blkparse);
    assert!(e.contains("not a time"), "{e}");
}

#[test]
fn a_stream_without_newlines_or_text_is_refused_at_once() {
    // /dev/zero: an endless line of NUL bytes. Reading stops after one
    // line's limit instead of filling memory.
    let zeros = std::io::repeat(0);
    let e = flashlab_trace::read_text_from(zeros, "/dev/zero")
        .unwrap_err()
        .to_string();
    assert!(e.contains("line 1 is longer than 64 KiB"), "{e}");
    let e = flashlab_trace::read_text_from(&b"0 W 0 4096\n\0\0\n"[..], "z")
        .unwrap_err()
        .to_string();
    assert!(e.contains("line 2 is not text"), "{e}");
    let e = flashlab_trace::read_text_from(&b"0 W 0 4096\n\xff\xfe\n"[..], "z")
        .unwrap_err()
        .to_string();
    assert!(e.contains("line 2 is not text"), "{e}");
    let ok = flashlab_trace::read_text_from(&b"# flashlab-trace v1\n0 W 0 4096"[..], "z").unwrap();
    assert_eq!(ok, "# flashlab-trace v1\n0 W 0 4096");
}

#[test]
fn long_fields_are_quoted_not_echoed() {
    let long = "x".repeat(50_000);
    let e = parse(
        &format!("# flashlab-trace v1\n0 {long} 0 4096\n"),
        Format::Flashlab,
        "t",
    )
    .unwrap_err()
    .to_string();
    assert!(e.len() < 200, "{} bytes", e.len());
}

#[test]
fn a_per_file_trace_round_trips_and_names_its_files() {
    use flashlab_trace::{parse_file_trace, FileIo, FileKind, FileOp, FileTraceWriter};
    let mut w = FileTraceWriter::new(Vec::new()).unwrap();
    w.declare(0, FileKind::Wal, "pg_wal/000000010000000000000001")
        .unwrap();
    let wal_write = FileIo {
        time_ns: 10,
        op: FileOp::Write,
        offset_bytes: 8192,
        size_bytes: 8192,
        file: 0,
    };
    w.write(&wal_write).unwrap();
    w.declare(1, FileKind::Data, "base/5/16384 with space\n")
        .unwrap();
    let fsync = FileIo {
        time_ns: 20,
        op: FileOp::Fdatasync,
        offset_bytes: 0,
        size_bytes: 0,
        file: 1,
    };
    w.write(&fsync).unwrap();
    let text = String::from_utf8(w.into_inner()).unwrap();
    let trace = parse_file_trace(&text).unwrap();
    assert_eq!(trace.ios, vec![wal_write, fsync]);
    assert_eq!(trace.files.len(), 2);
    assert_eq!(trace.files[0].kind, FileKind::Wal);
    assert_eq!(trace.files[1].path, "base/5/16384 with space");
    // Still a flashlab trace to detection, but never misread as block IO.
    assert_eq!(Format::detect(&text), Some(Format::Flashlab));
    let e = parse(&text, Format::Flashlab, "logical.trace")
        .unwrap_err()
        .to_string();
    assert!(e.contains("line 3") && e.contains("per-file"), "{e}");
}

#[test]
fn a_per_file_trace_refuses_undeclared_files_and_block_lines() {
    use flashlab_trace::parse_file_trace;
    let e = parse_file_trace("# flashlab-trace v1\n0 W 0 8192 3\n").unwrap_err();
    assert_eq!(e.0, 2);
    assert!(e.1.contains("file 3 is used before"), "{}", e.1);
    let e = parse_file_trace("# file 0 data a\n0 W 0 8192 0\n5 W 0 8192\n").unwrap_err();
    assert_eq!(e.0, 3);
    let e = parse_file_trace("# file 0 data a\n# file 0 wal b\n").unwrap_err();
    assert!(e.1.contains("declared twice"), "{}", e.1);
    let e = parse_file_trace("# file 0 index a\n").unwrap_err();
    assert!(e.1.contains("not data, wal or other"), "{}", e.1);
    let e = parse_file_trace("# file 0 data a\n0 T 0 8192 0\n").unwrap_err();
    assert!(e.1.contains("R, W, F, D or S"), "{}", e.1);
}
