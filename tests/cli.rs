//! The command line's contract: help, version, presets, and one clear sentence + exit 2 for
//! every kind of bad input.

use crate::common;

use common::*;
use std::path::Path;
use std::process::Output;

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
        "cx9a2",
        "cz11a",
        "cza1",
        "my.cnf.cz12a_c8r32",
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
fn timeouts_out_of_range_are_bad_input() {
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("r");
    let o = out.to_str().unwrap();
    assert_bad_input(
        &[
            "run",
            "--ddl-timeout",
            "5",
            "--statement-timeout",
            "10",
            "--out",
            o,
        ],
        "--ddl-timeout 5 is shorter than --statement-timeout 10",
    );
    for bad in ["0", "2592001", "18446744073709551616"] {
        assert_bad_input(&["run", "--ddl-timeout", bad, "--out", o], "--ddl-timeout");
    }
    assert!(!out.exists(), "nothing ran");
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
        "a level must be at least 1",
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

    // The same counters as the text of SHOW GLOBAL STATUS, boxed and tab-separated, with
    // the binary log.
    let (a, b) = (tmp.path().join("before.txt"), tmp.path().join("after.txt"));
    std::fs::write(
        &a,
        "+-----------------------+-------+\n| Variable_name | Value |\n\
         | Innodb_os_log_written | 1000 |\n| Innodb_os_log_fsyncs | 10 |\n\
         | Innodb_pages_written | 5 |\n| Binlog_bytes_written | 100 |\n\
         | Binlog_group_commits | 1 |\n| Innodb_page_size | 16384 |\n",
    )
    .unwrap();
    std::fs::write(
        &b,
        "Variable_name\tValue\nInnodb_os_log_written\t513000\nInnodb_os_log_fsyncs\t1010\n\
         Innodb_pages_written\t605\nBinlog_bytes_written\t200100\nBinlog_group_commits\t401\n\
         Innodb_page_size\t16384\n",
    )
    .unwrap();
    let args = |x: &Path, y: &Path| -> Output {
        run(&[
            "writeamp",
            "--engine",
            "mariadb",
            "--start",
            x.to_str().unwrap(),
            "--end",
            y.to_str().unwrap(),
            "--device-write-bytes",
            "24000000",
        ])
    };
    let o = args(&a, &b);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(out.contains("1000, 512 bytes each"), "{out}");
    assert!(
        out.contains("binlog written       0.2 MiB, 400 group commits, 500 bytes each"),
        "{out}"
    );
    // 24e6 / (512000 + 600 x 16384 + 200000)
    assert!(out.contains("2.28x"), "{out}");
    let o = args(&b, &a);
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    assert!(
        String::from_utf8_lossy(&o.stderr).contains("went down"),
        "{}",
        text(&o)
    );
}

/// Garbage where dbperf.toml or writeamp's counters belong (bytes that are no text at all, and
/// text that is almost TOML/JSON): one sentence and exit 2, never a panic.
#[test]
fn garbage_config_and_counters_are_one_sentence() {
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("r");
    let f = tmp.path().join("garbage");
    for garbage in [
        &b"\xff\xfe\x00[[[target\x01"[..],
        b"[target.x]\nengine = 'postgres'\nport = 99999999\n",
        b"[campaign.c]\nengines = [1, 2]\n",
        b"{\"engine\": \"mysql\", \"delta\": {\"x\": \"NaN\"}}",
    ] {
        std::fs::write(&f, garbage).unwrap();
        let path = f.to_str().unwrap();
        assert_bad_input(
            &[
                "run",
                "--config-file",
                path,
                "--target",
                "x",
                "--out",
                out.to_str().unwrap(),
            ],
            path,
        );
        let o = run(&["writeamp", path]);
        assert_eq!(o.status.code(), Some(2), "{}", text(&o));
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(err.trim().lines().count(), 1, "{err}");
        assert!(!err.contains("panicked"), "{err}");
        let o = run(&[
            "writeamp", "--engine", "mysql", "--start", path, "--end", path,
        ]);
        assert_eq!(o.status.code(), Some(2), "{}", text(&o));
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(err.trim().lines().count(), 1, "{err}");
    }
    assert!(!out.exists());
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

/// An endless counters input (/dev/zero says its size is 0) is refused at the bound, with one
/// sentence, instead of being read until memory runs out.
#[test]
fn endless_counters_input_is_refused_at_its_bound() {
    for args in [
        &["writeamp", "/dev/zero"][..],
        &[
            "writeamp",
            "--engine",
            "mariadb",
            "--start",
            "/dev/zero",
            "--end",
            "/dev/zero",
        ][..],
    ] {
        let o = run(args);
        assert_eq!(o.status.code(), Some(2), "{}", text(&o));
        let err = String::from_utf8_lossy(&o.stderr);
        assert!(err.contains("/dev/zero is a device"), "{err}");
        assert_eq!(err.trim_end().lines().count(), 1, "{err}");
    }
}

/// Reusing an --out is refused before anything runs, so the data an earlier `--keep-data` run
/// kept there is never deleted by a later run.
#[test]
fn a_reused_out_keeps_the_data_an_earlier_run_kept() {
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("r");
    let args = [
        "run",
        "--steps",
        "l.i0",
        "--rows-l-i0",
        "2k",
        "--no-progress",
        "--no-calibration",
        "--out",
        out.to_str().unwrap(),
    ];
    let mut first = args.to_vec();
    first.push("--keep-data");
    let o = run(&first);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    let kept = out.join("work/sqlite.wal-normal/ib.sqlite");
    let before = std::fs::metadata(&kept).expect("the kept database").len();
    let o = run(&args);
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.contains("holds an earlier run") && err.contains("--resume"),
        "{err}"
    );
    assert_eq!(
        std::fs::metadata(&kept).unwrap().len(),
        before,
        "the kept data is untouched"
    );
}

/// The journal keeps a run's command line as text, to resume it: a word that is not UTF-8 is
/// refused in one sentence before anything is made.
#[test]
fn a_run_argument_that_is_not_utf8_is_one_sentence() {
    use std::os::unix::ffi::OsStrExt;
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join(std::ffi::OsStr::from_bytes(b"r\xff"));
    let o = dbperf()
        .args(["run", "--target", "null", "--out"])
        .arg(&out)
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains("must be UTF-8 text"), "{err}");
    assert_eq!(err.trim().lines().count(), 1, "one sentence: {err}");
    assert!(!out.exists());
}

/// A closed stderr (`2>&1 | head -0`) loses the message, not the exit code: no panic (101).
#[test]
fn a_closed_stderr_keeps_the_exit_code() {
    let script = format!(
        "(sleep 1; {} report /nonexistent-dbperf-input --out /nonexistent-out; echo $? > \"$0\") 2>&1 | true",
        env!("CARGO_BIN_EXE_dbperf")
    );
    let tmp = tempfile::tempdir().unwrap();
    let code = tmp.path().join("code");
    let o = std::process::Command::new("sh")
        .args(["-c", &script])
        .arg(&code)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", text(&o));
    assert_eq!(std::fs::read_to_string(&code).unwrap().trim(), "2");
}
