//! Error classes as sysbench and pgbench have them: errors the run goes on after are counted per
//! operation type as retried (a sysbench event rolled back and restarted) or ignored (an Insert
//! Benchmark operation skipped); `--ignore-errors` replaces the list, `none` fails on the first.
//! The null target's scripted lock conflict carries SQLSTATE 40001.

use crate::common;

use std::path::Path;

use common::*;
use serde_json::Value;

fn step(out: &Path, cell: &str, step: &str) -> Value {
    let p = out.join(cell).join("steps").join(format!("{step}.json"));
    serde_json::from_str(&std::fs::read_to_string(&p).unwrap_or_else(|e| panic!("{p:?}: {e}")))
        .unwrap()
}

fn ibench(out: &Path, extra: &[&str]) -> std::process::Output {
    let mut a = vec![
        "run",
        "--target",
        "null:transient-every-7",
        "--steps",
        "l.i0",
        "--rows-l-i0",
        "10k",
        "--out",
        out.to_str().unwrap(),
        "--no-progress",
    ];
    a.extend(extra);
    run(&a)
}

#[test]
fn ignorable_errors_are_counted_as_ignored_by_the_insert_benchmark() {
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("r");
    let o = ibench(&out, &[]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    let ins = &step(&out, "null.transient-every-7", "l.i0")["ops"]["insert"];
    let errors = ins["errors"].as_u64().unwrap();
    assert!(errors > 0);
    assert_eq!(ins["ignored"].as_u64(), Some(errors));
    assert_eq!(ins["retried"].as_u64(), Some(0));
    assert_eq!(ins["failed"].as_u64(), Some(0));
}

#[test]
fn ignore_errors_none_fails_on_the_first_and_a_list_replaces_the_default() {
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("none");
    let o = ibench(&out, &["--ignore-errors", "none"]);
    assert_eq!(o.status.code(), Some(1), "{}", text(&o));
    let s = step(&out, "null.transient-every-7", "l.i0");
    assert_eq!(s["status"], "failed");
    assert_eq!(s["ops"]["insert"]["failed"].as_u64(), Some(1));

    let out = tmp.path().join("listed");
    let o = ibench(&out, &["--ignore-errors", "1213,40001"]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));

    let out = tmp.path().join("other");
    let o = ibench(&out, &["--ignore-errors", "1213"]);
    assert_eq!(o.status.code(), Some(1), "{}", text(&o));
}

#[test]
fn sysbench_events_are_retried_as_sysbench_restarts_them() {
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("r");
    let o = run(&[
        "run",
        "--suite",
        "sysbench",
        "--target",
        "null:transient-every-200",
        "--preset",
        "quick",
        "--tests",
        "read-write_range=10",
        "--out",
        out.to_str().unwrap(),
        "--no-progress",
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    let ev = &step(&out, "null.transient-every-200", "read-write_range=10")["ops"]["event"];
    let errors = ev["errors"].as_u64().unwrap();
    assert!(errors > 0);
    assert_eq!(ev["retried"].as_u64(), Some(errors));
    assert_eq!(ev["ignored"].as_u64(), Some(0));
}

#[test]
fn a_malformed_list_is_bad_input() {
    let tmp = tempfile::tempdir().unwrap();
    let o = ibench(&tmp.path().join("r"), &["--ignore-errors", "12;13"]);
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.contains("--ignore-errors: '12;13' is not an error code"),
        "{err}"
    );
    assert_eq!(err.trim().lines().count(), 1, "{err}");
}
