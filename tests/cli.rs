//! The command line's contract: help, version, presets, and one clear sentence + exit 2 for
//! every kind of bad input.

mod common;

use common::*;

#[test]
fn version_names_the_git_revision() {
    let o = run(&["--version"]);
    assert_eq!(o.status.code(), Some(0));
    let v = String::from_utf8_lossy(&o.stdout);
    assert!(
        v.starts_with(&format!("dbperf {} (git ", env!("CARGO_PKG_VERSION"))),
        "{v}"
    );
}

#[test]
fn run_help_documents_every_option() {
    let o = run(&["run", "--help"]);
    assert_eq!(o.status.code(), Some(0));
    let h = String::from_utf8_lossy(&o.stdout);
    for flag in [
        "--suite",
        "--preset",
        "--list-presets",
        "--target",
        "--pragma",
        "--steps",
        "--clients",
        "--shared-table",
        "--deletes",
        "--delete-form",
        "--rows-l-i0",
        "--rows-l-i1",
        "--rows-l-i2",
        "--query-seconds",
        "--rates",
        "--wait-seconds",
        "--seed",
        "--data-length-min",
        "--data-length-max",
        "--data-random-pct",
        "--resync-get-min",
        "--rows-per-query",
        "--out",
        "--work-dir",
        "--keep-data",
        "--no-progress",
        "--transport",
        "--server-user",
        "--server-start-timeout",
        "--config-file",
        "--count-rows",
        "--pause-between",
        "--tests",
        "--list",
        "--run-order",
        "--threads",
        "--tables",
        "--rows",
        "--read-seconds",
        "--write-seconds",
        "--warm-seconds",
        "--warmup-seconds",
        "--postwrite-seconds",
        "--prepared",
        "--k-values",
        "--skip-load",
    ] {
        assert!(h.contains(flag), "help lacks {flag}");
    }
    for cfg in dbperf::dbms::sqlite::CONFIGS {
        assert!(
            h.contains(cfg.name),
            "--target help lacks SQLite config {}",
            cfg.name
        );
    }
    // Every option line is followed by its description (an undocumented option would be
    // followed by a blank line or directly by the next option).
    let lines: Vec<&str> = h.lines().collect();
    for (i, l) in lines.iter().enumerate() {
        let t = l.trim_start();
        if t.starts_with("--") || t.starts_with("-h,") || t.starts_with("-V,") {
            let next = lines.get(i + 1).map(|n| n.trim()).unwrap_or("");
            assert!(
                !next.is_empty() && !next.starts_with('-'),
                "undocumented option: {l}"
            );
        }
    }
}

#[test]
fn presets_are_listed() {
    let o = run(&["run", "--list-presets"]);
    assert_eq!(o.status.code(), Some(0));
    let s = String::from_utf8_lossy(&o.stdout);
    for p in [
        "quick",
        "short",
        "cached-small",
        "cached-repro",
        "io-bound-small",
        "30,000,000",
        "1u.1t",
        "4u.1t",
        "4u.4t",
    ] {
        assert!(s.contains(p), "{p} missing from:\n{s}");
    }
}

fn assert_bad_input(args: &[&str], expect: &str) {
    let o = run(args);
    assert_eq!(o.status.code(), Some(2), "{args:?}\n{}", text(&o));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.contains(expect),
        "{args:?}: expected '{expect}' in:\n{err}"
    );
    assert!(
        !err.contains("panicked") && !err.contains("RUST_BACKTRACE"),
        "{err}"
    );
    let first = err.lines().next().unwrap_or("");
    assert!(first.starts_with("error:"), "{first}");
}

#[test]
fn bad_input_is_one_sentence_and_exit_2() {
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("r");
    let o = out.to_str().unwrap();
    assert_bad_input(
        &["run", "--preset", "huge", "--out", o],
        "unknown preset 'huge'",
    );
    assert_bad_input(
        &["run", "--steps", "l.i0,qr50", "--out", o],
        "unknown step 'qr50'",
    );
    assert_bad_input(
        &["run", "--clients", "0", "--out", o],
        "--clients must be at least 1",
    );
    assert_bad_input(&["run", "--rates", "-5", "--out", o], "-5");
    assert_bad_input(&["run", "--rates", "0", "--out", o], "--rates needs");
    assert_bad_input(
        &["run", "--query-seconds", "0", "--out", o],
        "--query-seconds",
    );
    assert_bad_input(
        &["run", "--target", "oracle", "--out", o],
        "unknown target engine 'oracle'",
    );
    assert_bad_input(
        &["run", "--target", "sqlite:turbo", "--out", o],
        "unknown SQLite config 'turbo'",
    );
    assert_bad_input(
        &["run", "--pragma", "jurnal_mode=wal", "--out", o],
        "unknown SQLite pragma 'jurnal_mode'",
    );
    assert_bad_input(
        &["run", "--pragma", "cache_size=1;drop", "--out", o],
        "plain value",
    );
    assert_bad_input(
        &[
            "run", "--target", "sqlite", "--target", "sqlite", "--out", o,
        ],
        "given twice",
    );
    assert_bad_input(
        &["run", "--shared-table", "--deletes", "on", "--out", o],
        "--shared-table",
    );
    assert_bad_input(&["run", "--frobnicate"], "--frobnicate");
    // An output directory that cannot exist (a path below a regular file: fails even as root).
    let file = tmp.path().join("plain-file");
    std::fs::write(&file, b"x").unwrap();
    let below = file.join("out");
    assert_bad_input(
        &["run", "--out", below.to_str().unwrap()],
        "cannot create result directory",
    );
    // A step that needs tables a fresh database does not have.
    assert_bad_input(&["run", "--steps", "qr100", "--out", o], "needs table pi1");
    assert!(
        !out.exists(),
        "nothing half-written: the result directory is removed again"
    );
}

#[test]
fn writeamp_explains_counters_given_by_hand_and_refuses_bad_files() {
    let tmp = tempfile::tempdir().unwrap();
    let f = tmp.path().join("c.json");
    std::fs::write(
        &f,
        r#"{"engine": "mysql",
            "start": {"Innodb_os_log_written": 1000, "Innodb_os_log_fsyncs": 10, "Innodb_pages_written": 5},
            "end": {"Innodb_os_log_written": 513000, "Innodb_os_log_fsyncs": 1010, "Innodb_pages_written": 605},
            "device_write_bytes": 24000000}"#,
    )
    .unwrap();
    let o = run(&["writeamp", f.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    let out = String::from_utf8_lossy(&o.stdout);
    // 1000 syncs of 512 bytes each pad to 4 KiB: 8x the log counter.
    assert!(out.contains("1000, 512 bytes each"), "{out}");
    assert!(out.contains("8.00x the log counter"), "{out}");
    assert!(out.contains("2.32x"), "{out}");

    std::fs::write(&f, r#"{"engine": "mysql", "start": {}}"#).unwrap();
    let o = run(&["writeamp", f.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(err.trim().lines().count(), 1, "{err}");
    let o = run(&["writeamp", tmp.path().to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
}

/// `dbperf ... | head` closes stdout early. Rust ignores SIGPIPE, so a write fails with EPIPE:
/// the output must end quietly (no panic, no backtrace) and a run must finish and keep its
/// results.
#[test]
fn a_closed_stdout_is_not_a_panic() {
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("r");
    let cases: Vec<Vec<&str>> = vec![
        vec!["run", "--list-presets"],
        vec!["run", "--suite", "sysbench", "--list"],
        vec!["host", "show"],
        vec![
            "run",
            "--suite",
            "sysbench",
            "--tests",
            "point-query",
            "--rows",
            "1000",
            "--read-seconds",
            "1",
            "--no-progress",
            "--no-calibration",
            "--out",
            out.to_str().unwrap(),
        ],
    ];
    for args in cases {
        let (reader, writer) = std::io::pipe().unwrap();
        drop(reader);
        let o = dbperf()
            .args(&args)
            .stdout(writer)
            .stderr(std::process::Stdio::piped())
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&o.stderr);
        assert!(!err.contains("panicked"), "{args:?}: {err}");
        assert_eq!(o.status.code(), Some(0), "{args:?}: {err}");
    }
    let (run, steps) = read_all(&target_dir(&out, "sqlite.wal-normal"));
    assert_eq!(run.status, "ok");
    assert_eq!(steps.len(), 2, "load and point-query");
}
