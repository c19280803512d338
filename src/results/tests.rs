//! Tests of the result files' reader and writer.

use super::*;

#[test]
fn histograms_round_trip() {
    let mut h = hdrhistogram::Histogram::<u64>::new_with_bounds(1, 3_600_000_000_000, 3).unwrap();
    for v in [1_500u64, 20_000, 3_000_000, 9_000_000_000] {
        h.record(v).unwrap();
    }
    let back = decode_histogram(&encode_histogram(&h)).unwrap();
    assert_eq!(back.len(), 4);
    assert_eq!(back.value_at_quantile(0.5), h.value_at_quantile(0.5));
}

/// Found by tests/fuzz.rs: 40 bytes whose header announced a 16 MiB (or 4 GiB) payload made
/// hdrhistogram allocate that much before finding the bytes missing.
#[test]
fn a_histogram_header_cannot_ask_for_memory() {
    let e = decode_histogram("HISTEwEAAAEAAAAAAAAAAAAAAAAAAAABAAADRjC4oAA/8AAAAAAAAA==")
        .unwrap_err()
        .to_string();
    assert!(e.contains("more counts than it holds"), "{e}");
    assert!(decode_histogram("aGVsbG8=").is_err());
    // 5 significant digits over an hour: a 27 MiB counts array.
    let e = decode_histogram(
        "HISTEwAAAAAAAAAAAAAABQAAAAAAAAABAAADRjC4oAA/8AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA",
    )
    .unwrap_err()
    .to_string();
    assert!(e.contains("5 significant digits"), "{e}");
}

#[test]
fn future_schema_is_refused_with_a_sentence() {
    let dir = tempfile::tempdir().unwrap();
    fs::write(dir.path().join("run.json"), r#"{"schema": 99}"#).unwrap();
    let e = read_run(dir.path()).unwrap_err();
    assert!(crate::error::is_schema_too_new(&e), "{e}");
    assert!(crate::error::is_bad_input(&e), "{e}");
    assert_eq!(
        e.to_string(),
        format!(
            "{} has result schema 99, newer than this dbperf understands ({SCHEMA}); \
             upgrade dbperf to read it",
            dir.path().join("run.json").display()
        )
    );
}

fn axes(pairs: &[(&str, &str)]) -> BTreeMap<String, String> {
    pairs
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect()
}

#[test]
fn axes_a_sweep_writes_are_accepted() {
    for ok in [
        axes(&[("clients", "4")]),
        axes(&[("threads", "1000000"), ("read_ahead_kb", "0")]),
        axes(&[
            ("read_ahead_kb", "1048576"),
            ("io_scheduler", "mq-deadline"),
        ]),
        axes(&[("setting.innodb_page_size", "8k")]),
        axes(&[
            ("setting.shared_buffers", "1GB"),
            ("setting.x.y-z", "a+b:c/d_e.f-1"),
        ]),
        BTreeMap::new(),
    ] {
        assert_eq!(axes_problem(&ok), None, "{ok:?}");
    }
}

/// Found by an outside review (issue 33): a level of 0 made per-client figures infinite,
/// u64::MAX printed as 0.000000000000, a word was dropped from Scaling, a 200 KB value made
/// a 47 MB CSV.
#[test]
fn axes_a_sweep_never_writes_are_refused() {
    let long = "x".repeat(200_000);
    for (bad, want) in [
        (axes(&[("clients", "0")]), "from 1 to 1000000"),
        (axes(&[("clients", "18446744073709551615")]), "from 1 to"),
        (axes(&[("clients", "four")]), "not a whole number"),
        (axes(&[("clients", "04")]), "not a whole number"),
        (axes(&[("clients", "+4")]), "not a whole number"),
        (axes(&[("threads", "-1")]), "not a whole number"),
        (axes(&[("read_ahead_kb", "1048577")]), "from 0 to 1048576"),
        (axes(&[("setting.x", &long)]), "not a plain value"),
        (axes(&[("setting.x", "")]), "not a plain value"),
        (axes(&[("setting.x", "a b")]), "not a plain value"),
        (axes(&[("setting.x", "<b>")]), "not a plain value"),
        (axes(&[("setting.", "1")]), "not an axis name"),
        (axes(&[("a b", "1")]), "not an axis name"),
        (axes(&[("", "1")]), "not an axis name"),
        (axes(&[(&long, "1")]), "not an axis name"),
    ] {
        let why = axes_problem(&bad)
            .unwrap_or_else(|| panic!("{} accepted", crate::untrusted::shown(&format!("{bad:?}"))));
        assert!(why.contains(want), "{why}");
        assert!(why.len() < 200, "{why}");
    }
    let many: BTreeMap<String, String> = (0..9)
        .map(|i| (format!("setting.s{i}"), "1".into()))
        .collect();
    assert!(axes_problem(&many).unwrap().contains("9 axes"));
}

#[test]
fn a_run_with_bad_axes_is_refused_as_bad_input() {
    let dir = tempfile::tempdir().unwrap();
    // A run.json the last release before campaigns wrote, with axes added.
    let mut run: serde_json::Value = serde_json::from_str(include_str!(
        "../../tests/golden/release-3be8b90/ibench/sqlite.wal-normal/run.json"
    ))
    .unwrap();
    run["axes"] = serde_json::json!({"clients": "0"});
    fs::write(dir.path().join("run.json"), run.to_string()).unwrap();
    let e = read_run(dir.path()).unwrap_err();
    assert!(crate::error::is_bad_input(&e), "{e}");
    assert!(!crate::error::is_schema_too_new(&e), "{e}");
    assert_eq!(
        e.to_string(),
        format!(
            "{} does not match the result schema: axis clients has the value \"0\", not a \
             whole number from 1 to 1000000",
            dir.path().join("run.json").display()
        )
    );
    run["axes"] = serde_json::json!({"clients": "2"});
    fs::write(dir.path().join("run.json"), run.to_string()).unwrap();
    assert_eq!(read_run(dir.path()).unwrap().axes["clients"], "2");
}

#[test]
fn atomic_write_leaves_no_temporary_file() {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("x.json");
    write_json_atomic(&p, &serde_json::json!({"schema": 1})).unwrap();
    let names: Vec<_> = fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert_eq!(names, vec![std::ffi::OsString::from("x.json")]);
}
