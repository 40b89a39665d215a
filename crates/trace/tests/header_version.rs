//! A flashlab trace of a later format version is refused (issue 31, item
//! 7: `# flashlab-trace v99` was read as v1), naming the line.

#[test]
fn only_version_1_of_the_trace_format_is_read() {
    let v1 = "# flashlab-trace v1\n# time_ns op offset_bytes size_bytes\n0 W 0 4096\n";
    assert_eq!(
        flashlab_trace::formats::flashlab::parse(v1).unwrap().len(),
        1
    );
    let v99 = v1.replace("v1", "v99");
    let (line, msg) = flashlab_trace::formats::flashlab::parse(&v99).unwrap_err();
    assert_eq!(line, 1);
    assert!(msg.contains("'v99' is not v1"), "{msg}");
}
