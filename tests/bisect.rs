//! `dbperf bisect` on real SQLite: six configs in order, the last three syncing every commit
//! (`synchronous = 2` in WAL mode) and so many times slower at l.i0; the bisect names the third
//! and fourth, measuring four of the six, and a bisect killed in the middle resumes without
//! running a finished round again.

use crate::common;

use std::path::Path;
use std::process::{Child, Stdio};
use std::time::{Duration, Instant};

use common::*;
use serde_json::Value;

fn json(p: &Path) -> Value {
    serde_json::from_str(&std::fs::read_to_string(p).unwrap()).unwrap()
}

/// Six SQLite configs: n1-n3 WAL with synchronous = 1, f4-f6 the same with synchronous = 2.
fn six_configs(dir: &Path) {
    let mut toml = String::new();
    for (name, sync) in [
        ("n1", 1),
        ("n2", 1),
        ("n3", 1),
        ("f4", 2),
        ("f5", 2),
        ("f6", 2),
    ] {
        toml.push_str(&format!(
            "[config.{name}]\nengine = \"sqlite\"\ntext = \"journal_mode = wal\\nsynchronous = {sync}\\n\"\n"
        ));
    }
    std::fs::write(dir.join("dbperf.toml"), toml).unwrap();
}

fn bisect_args<'a>(targets: &[&'a str], out: &'a str) -> Vec<&'a str> {
    let mut a = vec!["bisect"];
    for t in targets {
        a.extend(["--target", t]);
    }
    // Twice or half: the configs differ tenfold; rounds of equal ones on a loaded host (a
    // tenth of a second each) by up to half.
    a.extend([
        "--steps",
        "l.i0",
        "--rows-l-i0",
        "20k",
        "--threshold",
        "100",
        "--max-rounds",
        "15",
        "--no-calibration",
        "--out",
        out,
        "--no-progress",
    ]);
    a
}

fn spawn_in(dir: &Path, args: &[&str]) -> Child {
    dbperf()
        .args(args)
        .current_dir(dir)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("dbperf starts")
}

/// Every finished cell of every batch: (batch/cell, attempts, its run.json's start).
fn finished_cells(out: &Path) -> Vec<(String, u64, String)> {
    let mut v = Vec::new();
    for e in std::fs::read_dir(out).unwrap().flatten() {
        let j = e.path().join("campaign.json");
        if !j.exists() {
            continue;
        }
        let batch = e.file_name().to_string_lossy().to_string();
        for c in json(&j)["cells"].as_array().unwrap() {
            if c["state"] != "done" {
                continue;
            }
            let id = c["id"].as_str().unwrap();
            let run = json(&e.path().join(id).join("run.json"));
            v.push((
                format!("{batch}/{id}"),
                c["attempts"].as_u64().unwrap(),
                run["started_at"].as_str().unwrap().to_string(),
            ));
        }
    }
    v.sort();
    v
}

#[test]
fn six_sqlite_configs_name_the_third_and_fourth_and_a_killed_bisect_resumes() {
    let tmp = tempfile::tempdir().unwrap();
    six_configs(tmp.path());
    let out = tmp.path().join("b");
    let o = out.to_str().unwrap();
    let targets = [
        "sqlite:n1",
        "sqlite:n2",
        "sqlite:n3",
        "sqlite:f4",
        "sqlite:f5",
        "sqlite:f6",
    ];
    let args = bisect_args(&targets, o);
    let mut child = spawn_in(tmp.path(), &args);
    // Killed once the middle's batch has finished a cell: the ends' batch is done by then.
    let middle = out.join("m02").join("campaign.json");
    let start = Instant::now();
    loop {
        let done = middle.exists()
            && std::fs::read_to_string(&middle)
                .ok()
                .and_then(|t| serde_json::from_str::<Value>(&t).ok())
                .is_some_and(|j| {
                    j["cells"]
                        .as_array()
                        .unwrap()
                        .iter()
                        .any(|c| c["state"] == "done")
                });
        if done || child.try_wait().unwrap().is_some() {
            break;
        }
        assert!(
            start.elapsed() < Duration::from_secs(120),
            "no middle batch"
        );
        std::thread::sleep(Duration::from_millis(10));
    }
    // SAFETY: kill has no memory-safety preconditions.
    unsafe { libc::kill(child.id() as i32, libc::SIGKILL) };
    let _ = child.wait();
    let before = finished_cells(&out);
    assert!(before.iter().any(|c| c.0.starts_with("m01/")), "{before:?}");

    let r = dbperf()
        .args(["bisect", "--resume", o])
        .current_dir("/")
        .output()
        .unwrap();
    assert_eq!(r.status.code(), Some(0), "{}", text(&r));
    let f = json(&out.join("bisect.json"));
    assert_eq!(f["outcome"], "culprit", "{f:#}");
    assert_eq!(f["culprit"]["before"], "sqlite.n3", "{f:#}");
    assert_eq!(f["culprit"]["after"], "sqlite.f4", "{f:#}");
    let measured: Vec<&str> = f["measured"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["target"].as_str().unwrap())
        .collect();
    assert_eq!(&measured[..2], ["sqlite.n1", "sqlite.f6"], "the ends first");
    assert!(measured.len() <= 4, "{measured:?}");
    // No round finished before the kill ran again: same attempt, same start.
    let after = finished_cells(&out);
    for c in &before {
        assert!(after.contains(c), "{c:?} ran again: {after:?}");
    }
    let stdout = String::from_utf8_lossy(&r.stdout);
    assert!(
        stdout.contains("changed between sqlite.n3 and sqlite.f4"),
        "{stdout}"
    );
    let md = std::fs::read_to_string(out.join("report.md")).unwrap();
    assert!(md.contains("**Outcome: culprit.**"), "{md}");
    assert!(md.contains("| sqlite.n2 | not measured |"), "{md}");
    assert!(out.join("report.html").exists());
    // The culprit pair compared as `dbperf run` reports two targets.
    let pair = std::fs::read_to_string(out.join("pair").join("report.md")).unwrap();
    assert!(pair.contains("sqlite.f4"), "{pair}");
    // A finished bisect resumed measures nothing more.
    let again = dbperf().args(["bisect", "--resume", o]).output().unwrap();
    assert_eq!(again.status.code(), Some(0), "{}", text(&again));
    assert_eq!(finished_cells(&out), after);
}

#[test]
fn equal_ends_are_no_change_to_bisect() {
    let tmp = tempfile::tempdir().unwrap();
    six_configs(tmp.path());
    let out = tmp.path().join("b");
    let args = bisect_args(
        &["sqlite:n1", "sqlite:n2", "sqlite:n3"],
        out.to_str().unwrap(),
    );
    let r = dbperf()
        .args(&args)
        .current_dir(tmp.path())
        .output()
        .unwrap();
    assert_eq!(r.status.code(), Some(0), "{}", text(&r));
    let stdout = String::from_utf8_lossy(&r.stdout);
    assert!(
        stdout.contains("no change between sqlite.n1 and sqlite.n3 to bisect"),
        "{stdout}"
    );
    let f = json(&out.join("bisect.json"));
    assert_eq!(f["outcome"], "no_change");
    assert_eq!(f["measured"].as_array().unwrap().len(), 2);
}

#[test]
fn bad_bisects_are_refused_in_one_sentence() {
    let tmp = tempfile::tempdir().unwrap();
    six_configs(tmp.path());
    let out = tmp.path().join("b");
    let o = out.to_str().unwrap();
    let cases: [(Vec<&str>, &str); 5] = [
        (
            bisect_args(&["sqlite:n1"], o),
            "a bisect needs two targets at least",
        ),
        (
            bisect_args(&["sqlite:n1", "null"], o),
            "builds of one engine",
        ),
        (
            [
                bisect_args(&["sqlite:n1", "sqlite:f4"], o),
                vec!["--metric", "speed"],
            ]
            .concat(),
            "--metric speed is not a figure a bisect can judge",
        ),
        (
            [
                bisect_args(&["sqlite:n1", "sqlite:f4"], o),
                vec!["--judge", "qr100"],
            ]
            .concat(),
            "--judge qr100 is not a step of this run",
        ),
        (
            [
                bisect_args(&["sqlite:n1", "sqlite:f4"], o),
                vec!["--repeats", "2", "--campaign", "x"],
            ]
            .concat(),
            "--campaign does not go with dbperf bisect",
        ),
    ];
    for (args, says) in cases {
        let r = dbperf()
            .args(&args)
            .current_dir(tmp.path())
            .output()
            .unwrap();
        assert_eq!(r.status.code(), Some(2), "{args:?}: {}", text(&r));
        let err = String::from_utf8_lossy(&r.stderr);
        assert!(err.contains(says), "{args:?}: {err}");
        assert_eq!(err.trim().lines().count(), 1, "{err}");
    }
    assert!(!out.join("bisect.json").exists(), "nothing ran");
}
