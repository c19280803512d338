//! `dbperf history`: real SQLite runs imported into a history database (SQLite, and PostgreSQL
//! through a managed server), once per run however often they are added, and change points
//! read back from series with a known step.

use crate::common;

use std::path::{Path, PathBuf};

use common::*;
use dbperf::results::{self, write_json_atomic};

fn quick_run(out: &Path, target: &str) {
    let o = run(&[
        "run",
        "--preset",
        "quick",
        "--steps",
        "l.i0,l.x",
        "--target",
        target,
        "--out",
        out.to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
}

fn history(args: &[&str]) -> (i32, String) {
    let o = run(&[&["history"], args].concat());
    (o.status.code().unwrap_or(-1), text(&o))
}

fn runs_in(db: &Path) -> i64 {
    let c = rusqlite::Connection::open(db).unwrap();
    c.query_row("SELECT count(*) FROM dbperf_runs", [], |r| r.get(0))
        .unwrap()
}

/// `n` copies of a real target result directory, as runs of successive builds a day apart, the
/// l.i0 headline `before` until `at` and `after` from there (a little noise either side).
fn synthetic_history(
    real: &Path,
    root: &Path,
    n: usize,
    at: usize,
    before: f64,
    after: f64,
) -> Vec<PathBuf> {
    let mut dirs = Vec::new();
    for i in 0..n {
        let d = root.join(format!("run{i:02}"));
        let steps = d.join("steps");
        std::fs::create_dir_all(&steps).unwrap();
        let mut r = results::read_run(real).unwrap();
        r.started_at = format!("2026-03-{:02}T10:00:00.{}Z", i + 1, i % 7);
        r.target.version = format!("3.50.{i}");
        write_json_atomic(&d.join("run.json"), &r).unwrap();
        for step in &r.steps_planned {
            let mut s = results::read_step(real, step).unwrap();
            // Deterministic "noise" of ±1.5%.
            let wobble = 1.0 + 0.015 * (((i * 7919) % 11) as f64 / 5.0 - 1.0);
            s.headline.value = if i < at { before } else { after } * wobble;
            write_json_atomic(&steps.join(format!("{step}.json")), &s).unwrap();
            if let Some(f) = &s.series_file {
                std::fs::copy(real.join("steps").join(f), steps.join(f)).unwrap();
            }
        }
        dirs.push(d);
    }
    dirs
}

#[test]
fn real_runs_are_imported_once_however_often_they_are_added() {
    let tmp = tempfile::tempdir().unwrap();
    let out_a = tmp.path().join("a");
    let out_b = tmp.path().join("b");
    quick_run(&out_a, "sqlite");
    quick_run(&out_b, "sqlite:delete-full");
    let db = tmp.path().join("h.sqlite");
    let dbs = db.to_str().unwrap();
    // A run directory and a target directory alike.
    let (code, t) = history(&["add", out_a.to_str().unwrap(), "--db", dbs]);
    assert_eq!(code, 0, "{t}");
    assert!(t.contains("1 run(s) imported, 0 already there"), "{t}");
    let (code, t) = history(&[
        "add",
        out_a.to_str().unwrap(),
        out_b.join("sqlite.delete-full").to_str().unwrap(),
        "--db",
        dbs,
    ]);
    assert_eq!(code, 0, "{t}");
    assert!(t.contains("1 run(s) imported, 1 already there"), "{t}");
    assert_eq!(runs_in(&db), 2);

    let c = rusqlite::Connection::open(&db).unwrap();
    let (target, config, build, host): (String, String, String, String) = c
        .query_row(
            "SELECT target, config_name, build, host_fingerprint FROM dbperf_runs \
             WHERE target = 'sqlite.delete-full'",
            [],
            |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?)),
        )
        .unwrap();
    assert_eq!(
        (target.as_str(), config.as_str()),
        ("sqlite.delete-full", "delete-full")
    );
    let run_b = results::read_run(&out_b.join("sqlite.delete-full")).unwrap();
    assert_eq!(build, run_b.target.version);
    assert_eq!(host.len(), 16);
    // The headline in the history is the step file's, to the last digit.
    let step = results::read_step(&out_b.join("sqlite.delete-full"), "l.i0").unwrap();
    let v: f64 = c
        .query_row(
            "SELECT m.value FROM dbperf_measurements m JOIN dbperf_runs r USING (run_id) \
             WHERE r.target = 'sqlite.delete-full' AND m.step = 'l.i0' AND m.metric = 'headline'",
            [],
            |r| r.get(0),
        )
        .unwrap();
    assert_eq!(v, step.headline.value);
    for metric in ["ops_per_s", "p50_us", "p99_us"] {
        let n: i64 = c
            .query_row(
                "SELECT count(*) FROM dbperf_measurements WHERE step = 'l.i0' AND op = 'insert' \
                 AND metric = ?1",
                [metric],
                |r| r.get(0),
            )
            .unwrap();
        assert_eq!(n, 2, "{metric}");
    }
}

#[test]
fn a_step_in_the_history_is_found_between_the_right_builds() {
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("real");
    quick_run(&out, "sqlite");
    let dirs = synthetic_history(
        &out.join("sqlite.wal-normal"),
        &tmp.path().join("hist"),
        24,
        14,
        100_000.0,
        80_000.0,
    );
    let db = tmp.path().join("h.sqlite");
    let dbs = db.to_str().unwrap();
    let mut args = vec!["add".to_string()];
    args.extend(dirs.iter().map(|d| d.to_str().unwrap().to_string()));
    args.extend(["--db".into(), dbs.into()]);
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let (code, t) = history(&args);
    assert_eq!(code, 0, "{t}");
    assert_eq!(runs_in(&db), 24);

    let o = run(&[
        "history", "changes", "--db", dbs, "--step", "l.i0", "--metric", "headline", "--format",
        "json",
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    let found: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    let found = found.as_array().unwrap();
    assert_eq!(found.len(), 1, "{found:?}");
    let c = &found[0];
    assert_eq!(c["index"], 14);
    assert_eq!(c["runs"], 24);
    assert_eq!(c["build_before"], "3.50.13");
    assert_eq!(c["build_after"], "3.50.14");
    let rel = c["relative"].as_f64().unwrap();
    assert!((rel + 0.2).abs() < 0.02, "{rel}");
    // Its size comes with an interval around it, and how sure the method is.
    let (lo, hi) = (
        c["relative_low"].as_f64().unwrap(),
        c["relative_high"].as_f64().unwrap(),
    );
    // The synthetic runs' wobble is a sawtooth (period 11), as persistent as noise gets, so
    // the interval is wide; it still holds the size and leaves out anything under 10%.
    assert!(
        lo < rel && rel < hi && hi < -0.1 && lo > -0.3,
        "{lo} {rel} {hi}"
    );
    assert_eq!(c["kind"], "level");
    assert!(c["p_value"].as_f64().unwrap() <= 0.01);
    assert_eq!(c["host_changed"], false);

    // The same in text and CSV.
    let (code, t) = history(&[
        "changes", "--db", dbs, "--step", "l.i0", "--metric", "headline",
    ]);
    assert_eq!(code, 0, "{t}");
    assert!(
        t.contains("at run 15 of 24")
            && t.contains("3.50.13")
            && t.contains("-20.")
            && t.contains("(95%: -2"),
        "{t}"
    );
    let (code, t) = history(&[
        "changes", "--db", dbs, "--step", "l.i0", "--metric", "headline", "--format", "csv",
    ]);
    assert_eq!(code, 0, "{t}");
    assert!(
        t.contains("\nsqlite.wal-normal,l.i0,,headline,rows/s,14,24,"),
        "{t}"
    );
    // Steps whose values did not move have no change.
    let o = run(&[
        "history", "changes", "--db", dbs, "--step", "l.x", "--metric", "headline", "--format",
        "json",
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    let none: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    // l.x's headline was set to the same step as l.i0's; its p99 was copied unchanged.
    assert_eq!(none.as_array().unwrap().len(), 1);
    let o = run(&[
        "history", "changes", "--db", dbs, "--step", "l.x", "--metric", "p99_us", "--format",
        "json",
    ]);
    let none: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert!(none.as_array().unwrap().is_empty(), "{none}");

    // The same history as a page (sharing the runs above keeps the suite short).
    the_report_marks_the_change_at_its_run(&db, tmp.path());
}

/// `history report` on the 24-run history with its step at run 15 (index 14).
fn the_report_marks_the_change_at_its_run(db: &Path, tmp: &Path) {
    let dbs = db.to_str().unwrap();
    let rep = tmp.join("rep");
    let reps = rep.to_str().unwrap();
    let (code, t) = history(&["report", "--db", dbs, "--step", "l.i0", "--out", reps]);
    assert_eq!(code, 0, "{t}");
    assert!(t.contains("1 change(s) in"), "{t}");
    let html = std::fs::read_to_string(rep.join("index.html")).unwrap();
    // One chart per series of l.i0 (target x op x metric), as many as the database holds.
    let c = rusqlite::Connection::open(db).unwrap();
    let series: i64 = c
        .query_row(
            "SELECT count(*) FROM (SELECT DISTINCT target, op, metric FROM dbperf_measurements \
             WHERE step = 'l.i0')",
            [],
            |r| r.get(0),
        )
        .unwrap();
    assert!(series > 5, "{series}");
    let series = series as usize;
    assert_eq!(html.matches("<svg").count(), series);
    assert!(html.contains(&format!("{series} series and 1 change(s)")));
    // The one change: its series first, its marker at run 15 naming the builds either side.
    assert_eq!(html.matches(r#"<g class="mark""#).count(), 1);
    let first = html.split(r#"<section id="s1">"#).nth(1).unwrap();
    let first = first.split("</section>").next().unwrap();
    assert!(
        first.starts_with("<h3>sqlite.wal-normal l.i0 headline</h3>"),
        "{first}"
    );
    let mark = first.split(r#"<g class="mark" data-x=""#).nth(1).unwrap();
    assert!(
        mark.starts_with("15\"><title>change at run 15: -"),
        "{mark}"
    );
    assert!(mark.contains("build 3.50.13 → 3.50.14"), "{mark}");
    assert!(first.contains("<th>15 of 24</th>"), "{first}");
    assert!(!html.contains("src=") && !html.contains(r#"href="http"#));
    // changes.json is `changes --format json`, byte for byte.
    let o = run(&[
        "history", "changes", "--db", dbs, "--step", "l.i0", "--format", "json",
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    assert_eq!(std::fs::read(rep.join("changes.json")).unwrap(), o.stdout);

    if let Some(r) = common::chromium::render(&rep.join("index.html"), "") {
        assert!(r.console.is_empty(), "console messages: {:#?}", r.console);
        assert_eq!(r.dom.matches("<svg").count(), series);
        assert!(r.png.len() > 20_000, "a screenshot with content");
    }

    // Written again into its own report: replaced. Into a directory holding anything else:
    // refused, nothing written.
    let (code, t) = history(&["report", "--db", dbs, "--step", "l.i0", "--out", reps]);
    assert_eq!(code, 0, "{t}");
    let mine = tmp.join("mine");
    std::fs::create_dir(&mine).unwrap();
    std::fs::write(mine.join("notes.txt"), "keep").unwrap();
    let (code, t) = history(&["report", "--db", dbs, "--out", mine.to_str().unwrap()]);
    assert_eq!(code, 2, "{t}");
    assert!(t.contains("is not empty"), "{t}");
    let left: Vec<_> = std::fs::read_dir(&mine).unwrap().collect();
    assert_eq!(left.len(), 1, "nothing written beside the user's file");

    // No series passes the filter: a page that says so, and an empty changes.json.
    let none = tmp.join("none");
    let (code, t) = history(&[
        "report",
        "--db",
        dbs,
        "--target",
        "nope",
        "--out",
        none.to_str().unwrap(),
    ]);
    assert_eq!(code, 0, "{t}");
    assert!(t.contains("no series match"), "{t}");
    let page = std::fs::read_to_string(none.join("index.html")).unwrap();
    assert!(page.contains("No series in the history passes the filters"));
    assert!(page.contains("--target nope"));
    assert_eq!(
        std::fs::read_to_string(none.join("changes.json")).unwrap(),
        "[]\n"
    );
}

#[test]
fn bad_history_input_is_one_sentence_and_exit_2() {
    let tmp = tempfile::tempdir().unwrap();
    let missing = tmp.path().join("none.sqlite");
    let empty = tmp.path().join("empty");
    std::fs::create_dir(&empty).unwrap();
    for (args, says) in [
        (
            vec!["changes", "--db", missing.to_str().unwrap()],
            "no history database",
        ),
        (vec!["add", "/nonexistent/dir"], "is not a directory"),
        (
            vec![
                "add",
                empty.to_str().unwrap(),
                "--db",
                missing.to_str().unwrap(),
            ],
            "holds no dbperf result",
        ),
        (vec!["changes", "--db", "mysql://x/y"], "postgres:// URL"),
        (vec!["changes", "--db", "postgres://h:port/x"], "not usable"),
        (
            vec!["changes", "--db", missing.to_str().unwrap(), "--alpha", "2"],
            "--alpha",
        ),
        (
            vec![
                "report",
                "--db",
                missing.to_str().unwrap(),
                "--out",
                empty.to_str().unwrap(),
            ],
            "no history database",
        ),
        (
            vec!["report", "--min-change=-1", "--out", "x"],
            "--min-change",
        ),
    ] {
        let (code, t) = history(&args);
        assert_eq!(code, 2, "{args:?}: {t}");
        assert!(t.contains(says), "{args:?}: {t}");
        assert!(!t.contains("panicked"), "{t}");
    }
    assert!(
        !missing.exists(),
        "a failed `changes` must not create the database"
    );
}

#[test]
fn the_detector_reads_series_from_stdin() {
    use std::io::Write;
    let mut c = dbperf()
        .args(["history", "detect", "--stdin"])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let step: Vec<String> = (0..40)
        .map(|i| format!("{}", if i < 25 { 100 } else { 130 } + (i * 37) % 5))
        .collect();
    let flat: Vec<String> = (0..40).map(|i| format!("{}", 100 + (i * 37) % 5)).collect();
    writeln!(
        c.stdin.take().unwrap(),
        "{}\n{}",
        step.join(","),
        flat.join(" ")
    )
    .unwrap();
    let o = c.wait_with_output().unwrap();
    assert_eq!(o.status.code(), Some(0));
    assert_eq!(String::from_utf8_lossy(&o.stdout), "25\n\n");
}

/// `history detect --stdin` with `args`, fed `input`: exit code, stdout, stderr.
fn detect(args: &[&str], input: &str) -> (Option<i32>, String, String) {
    use std::io::Write;
    let mut c = dbperf()
        .args(["history", "detect", "--stdin"])
        .args(args)
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    // Options refused before standard input is read close it: the write may then find no
    // reader, and that is the refusal's doing, not the test's.
    if let Err(e) = c.stdin.take().unwrap().write_all(input.as_bytes()) {
        assert_eq!(e.kind(), std::io::ErrorKind::BrokenPipe, "{e}");
    }
    let o = c.wait_with_output().unwrap();
    let text = |b: &[u8]| String::from_utf8_lossy(b).into_owned();
    (o.status.code(), text(&o.stdout), text(&o.stderr))
}

#[test]
fn a_bad_line_refuses_the_whole_batch_before_any_answer() {
    let good: Vec<String> = (0..40).map(|i| (100 + i % 3).to_string()).collect();
    let input = format!("{}\n1,2,x\ny\n", good.join(","));
    let (code, out, err) = detect(&[], &input);
    assert_eq!(code, Some(2), "{err}");
    assert_eq!(out, "", "nothing printed before the refusal");
    assert!(err.contains("line 2: \"x\" is not a number"), "{err}");
    assert_eq!(err.trim().lines().count(), 1, "{err}");
    // A token with a line break in it stays one line.
    let (code, _, err) = detect(&[], "1,2,\u{1b}[31m\r3\n");
    assert_eq!(code, Some(2));
    assert_eq!(err.trim().lines().count(), 1, "{err}");
}

#[test]
fn options_the_detector_cannot_honour_are_refused() {
    // The detector no longer draws permutations: the option is refused, not ignored.
    let (code, out, err) = detect(&["--permutations", "199"], "1,2,3\n");
    assert_eq!(code, Some(2), "{err}");
    assert_eq!(out, "");
    assert!(err.contains("no longer draws permutations"), "{err}");
    assert_eq!(err.trim().lines().count(), 1, "{err}");
    for alpha in ["0", "1", "-0.5", "NaN"] {
        let (code, _, err) = detect(&["--alpha", alpha], "1,2,3\n");
        assert_eq!(code, Some(2), "--alpha {alpha}: {err}");
    }
    let (code, _, err) = detect(&["--min-runs", "1"], "1,2,3\n");
    assert_eq!(code, Some(2), "{err}");
    assert_eq!(detect(&["--alpha", "0.05"], "1,2,3\n").0, Some(0));
}

#[test]
fn a_shared_postgresql_history_holds_runs_once_and_gives_their_changes_back() {
    if !postgres() {
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("real");
    quick_run(&out, "sqlite");
    let dirs = synthetic_history(
        &out.join("sqlite.wal-normal"),
        &tmp.path().join("hist"),
        12,
        6,
        50_000.0,
        65_000.0,
    );
    let sdir = tmp.path().join("pg");
    let o = run(&[
        "server",
        "start",
        "postgres",
        "--dir",
        sdir.to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    let _instance = Instance {
        target: "postgres",
        dir: &sdir,
    };
    let state: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(sdir.join("server.json")).unwrap()).unwrap();
    let url = format!("postgres://dbperf@127.0.0.1:{}/ib", state["port"]);
    // The instance's password, as PGPASSWORD (never in the URL, on the command line).
    let pw = instance_password(&sdir);
    let with_pw = |args: &[&str]| {
        dbperf()
            .env("PGPASSWORD", &pw)
            .args(args)
            .output()
            .expect("dbperf runs")
    };
    // Two imports of the first half (the second finds them there), then all of it.
    for (upto, imported, already) in [(6, 6, 0), (6, 0, 6), (12, 6, 6)] {
        let mut args = vec!["history".to_string(), "add".to_string()];
        args.extend(dirs[..upto].iter().map(|d| d.to_str().unwrap().to_string()));
        args.extend(["--db".into(), url.clone()]);
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        let o = with_pw(&args);
        let (code, t) = (o.status.code().unwrap_or(-1), text(&o));
        assert_eq!(code, 0, "{t}");
        assert!(
            t.contains(&format!(
                "{imported} run(s) imported, {already} already there; {upto} run(s) in PostgreSQL"
            )),
            "{t}"
        );
    }
    let o = with_pw(&[
        "history", "changes", "--db", &url, "--step", "l.i0", "--metric", "headline", "--format",
        "json",
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    let found: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    let found = found.as_array().unwrap();
    assert_eq!(found.len(), 1, "{found:?}");
    assert_eq!(found[0]["index"], 6);
    assert_eq!(found[0]["build_after"], "3.50.6");
    let rel = found[0]["relative"].as_f64().unwrap();
    assert!((rel - 0.3).abs() < 0.03, "{rel}");
}
