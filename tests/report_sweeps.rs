//! Reports of sweeps, from results of the hidden null target (milliseconds a run), edited where
//! a test needs what the null target cannot do (a CPU profile, a failed lowest level):
//!
//! * CPU profiles are compared only between results at the same level, named with it;
//! * per-client figures of Scaling start at each target's own lowest level with a value;
//! * warnings name the level of the result they are about, and say each thing once;
//! * axes a sweep never writes (a level of 0, a word, 200 KB) are refused, one sentence, exit 2.
//!
//! Found by an outside review of issue 33.

use crate::common;

use std::path::{Path, PathBuf};

use common::{dbperf, text};
use serde_json::Value;

/// A finished null run of l.i0 over `targets` at each of `clients`: its run directory.
fn null_sweep(root: &Path, name: &str, targets: &[&str], clients: &str, more: &[&str]) -> PathBuf {
    let out = root.join(name);
    let mut args = vec!["run", "--no-progress", "--no-calibration"];
    for t in targets {
        args.extend(["--target", t]);
    }
    args.extend(["--clients", clients, "--steps", "l.i0", "--rows-l-i0", "1k"]);
    args.extend_from_slice(more);
    args.extend(["--out", out.to_str().unwrap()]);
    let o = dbperf().args(&args).output().unwrap();
    assert!(o.status.code().is_some_and(|c| c <= 1), "{}", text(&o));
    out
}

fn read(p: &Path) -> Value {
    serde_json::from_str(&std::fs::read_to_string(p).unwrap()).unwrap()
}

fn edit(p: &Path, f: impl FnOnce(&mut Value)) {
    let mut v = read(p);
    f(&mut v);
    std::fs::write(p, v.to_string()).unwrap();
}

/// report.json of `inputs` (report.html and report.md beside it, in `root/rep`).
fn report(root: &Path, inputs: &[&Path]) -> Value {
    let rep = root.join("rep");
    let o = dbperf()
        .arg("report")
        .args(inputs)
        .args(["--format", "json,md,html", "--out"])
        .arg(&rep)
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    read(&rep.join("report.json"))
}

fn tables<'a>(j: &'a Value, id_prefix: &str) -> Vec<&'a Value> {
    j["tables"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|t| t["id"].as_str().unwrap().starts_with(id_prefix))
        .collect()
}

/// The numbers of the row labelled `label` (None for a gap).
fn row(t: &Value, label: &str) -> Vec<Option<f64>> {
    t["rows"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["label"] == label)
        .unwrap_or_else(|| panic!("no row {label} in {t}"))["cells"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["value"].as_f64())
        .collect()
}

/// Gives a cell's l.i0 a CPU profile of its own (perf cannot sample here): `work` takes
/// `weight` samples, `idle` 10.
fn profile(cell: &Path, weight: u64) {
    let steps = cell.join("steps");
    std::fs::write(
        steps.join("l.i0.profile.folded"),
        format!("main;work {weight}\nmain;idle 10\n"),
    )
    .unwrap();
    edit(&steps.join("l.i0.json"), |s| {
        s["profile"] = serde_json::json!({
            "processes": "client", "event": "cpu-clock", "hz": 99, "command": "perf record",
            "pids": [1], "folded_file": "l.i0.profile.folded", "samples": weight + 10,
        });
    });
}

#[test]
fn profiles_are_compared_only_at_the_same_level_and_named_with_it() {
    let tmp = tempfile::tempdir().unwrap();
    let out = null_sweep(tmp.path(), "r", &["null", "null:sleep-1us"], "1,2", &[]);
    for (cell, w) in [
        ("null.instant.c1", 10),
        ("null.instant.c2", 20),
        ("null.sleep-1us.c1", 30),
        ("null.sleep-1us.c2", 40),
    ] {
        profile(&out.join(cell), w);
    }
    let j = report(tmp.path(), &[&out]);
    let mut titles: Vec<&str> = tables(&j, "profile-")
        .iter()
        .map(|t| t["title"].as_str().unwrap())
        .collect();
    titles.sort();
    // Each level's base is the base target at that level; a level is never diffed against
    // another, and the base itself against nothing.
    assert_eq!(
        titles,
        [
            "null.sleep-1us · c1 vs null.instant · c1, l.i0: functions whose CPU per operation \
             changed most",
            "null.sleep-1us · c2 vs null.instant · c2, l.i0: functions whose CPU per operation \
             changed most",
        ]
    );
    let ids: Vec<&str> = tables(&j, "profile-")
        .iter()
        .map(|t| t["id"].as_str().unwrap())
        .collect();
    assert_eq!(
        ids,
        [
            "profile-l.i0-null.sleep-1us.c1",
            "profile-l.i0-null.sleep-1us.c2"
        ]
    );
    let md = std::fs::read_to_string(tmp.path().join("rep/report.md")).unwrap();
    assert!(
        md.contains("| function | null.instant · c2 self (CPU"),
        "{md}"
    );
    // The flame graphs and the differential ones name the level too.
    let html = std::fs::read_to_string(tmp.path().join("rep/report.html")).unwrap();
    for title in [
        "null.instant · c2 l.i0 flame graph",
        "null.sleep-1us · c2 vs null.instant · c2 l.i0 differential flame graph",
    ] {
        assert!(html.contains(title), "{title}");
    }
    assert!(!html.contains("null.instant vs null.instant"));
    assert!(!html.contains("c2 vs null.instant · c1"));
}

#[test]
fn per_client_figures_start_at_each_targets_own_lowest_level() {
    let tmp = tempfile::tempdir().unwrap();
    let low = null_sweep(tmp.path(), "low", &["null"], "1,2", &[]);
    let high = null_sweep(tmp.path(), "high", &["null:sleep-1us"], "2,4", &[]);
    let per_client = |j: &Value| (*tables(j, "scaling.ibench.per-client")[0]).clone();
    let j = report(tmp.path(), &[&low, &high]);
    let t = per_client(&j);
    let cols: Vec<&str> = t["columns"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["key"].as_str().unwrap())
        .collect();
    assert_eq!(cols, ["1", "2", "4"]);
    let first = row(&t, "l.i0 · null.instant");
    assert_eq!(first[0], Some(1.0));
    assert!(first[1].is_some_and(|x| x > 0.0), "{first:?}");
    assert_eq!(first[2], None);
    // The second target starts at 2 clients: its figures are relative to its own level 2.
    let second = row(&t, "l.i0 · null.sleep-1us");
    assert_eq!(second[0], None);
    assert_eq!(second[1], Some(1.0));
    assert!(second[2].is_some_and(|x| x > 0.0), "{second:?}");

    // A lowest level that failed: the curve starts at the next.
    edit(&low.join("null.instant.c1/steps/l.i0.json"), |s| {
        s["status"] = "failed".into();
        s["error"] = "made to fail".into();
    });
    let j = report(tmp.path(), &[&low]);
    let first = row(&per_client(&j), "l.i0");
    assert_eq!(first, [None, Some(1.0)]);
}

#[test]
fn warnings_name_the_level_and_say_each_thing_once() {
    let tmp = tempfile::tempdir().unwrap();
    let out = null_sweep(
        tmp.path(),
        "r",
        &["null:fail-at-5"],
        "1,2",
        &["--repeats", "2"],
    );
    edit(&out.join("null.fail-at-5.c2/r1/run.json"), |r| {
        r["warnings"] = serde_json::json!(["the CPU clock sagged", "the CPU clock sagged"]);
    });
    let j = report(tmp.path(), &[&out]);
    let w: Vec<&str> = j["warnings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|w| w.as_str().unwrap())
        .collect();
    let mut once = w.clone();
    once.sort();
    once.dedup();
    assert_eq!(once.len(), w.len(), "a warning twice: {w:#?}");
    for level in ["c1", "c2"] {
        assert!(
            w.iter()
                .any(|x| x.starts_with(&format!("null.fail-at-5 · {level}: step l.i0 failed"))),
            "{w:#?}"
        );
    }
    assert!(
        w.contains(&"null.fail-at-5 · c2: round 1: the CPU clock sagged"),
        "{w:#?}"
    );
    let repeated = w
        .iter()
        .find(|x| x.starts_with("Repeated targets"))
        .unwrap();
    assert!(
        repeated.ends_with("null.fail-at-5 · c1 (2 rounds); null.fail-at-5 · c2 (2 rounds)."),
        "{repeated}"
    );
    assert!(
        w.iter().all(|x| !x.starts_with("null.fail-at-5:")),
        "a warning without its level: {w:#?}"
    );
}

/// `dbperf report` of `inputs` ends with exit 2 and one sentence holding each of `says`.
fn refused(inputs: &[&Path], says: &[&str]) {
    let tmp = tempfile::tempdir().unwrap();
    let o = dbperf()
        .arg("report")
        .args(inputs)
        .arg("--out")
        .arg(tmp.path())
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(err.trim_end().lines().count(), 1, "one sentence: {err}");
    for s in says {
        assert!(err.contains(s), "expected {s:?} in {err}");
    }
    assert!(err.len() < 400, "{err}");
}

#[test]
fn axes_a_sweep_never_writes_are_refused_in_one_sentence() {
    let tmp = tempfile::tempdir().unwrap();
    let out = null_sweep(tmp.path(), "r", &["null"], "1,2", &[]);
    let cell = out.join("null.instant.c2");
    let run = cell.join("run.json");
    let file = format!("{} does not match the result schema: ", run.display());
    let long = "x".repeat(200_000);
    for (key, value, says) in [
        (
            "clients",
            "0",
            "axis clients has the value \"0\", not a whole number from 1",
        ),
        (
            "clients",
            "18446744073709551615",
            "not a whole number from 1 to 1000000",
        ),
        ("clients", "two", "not a whole number"),
        ("read_ahead_kb", "-1", "not a whole number from 0"),
        ("setting.x", long.as_str(), "not a plain value"),
        ("setting.x", "<script>", "not a plain value"),
        ("bad key", "1", "is not an axis name"),
    ] {
        edit(&run, |r| r["axes"] = serde_json::json!({ key: value }));
        // Given as the cell, or as the run directory holding it.
        refused(&[&cell], &[&file, says]);
        refused(&[&out], &[&file, says]);
    }
    edit(&run, |r| r["axes"] = serde_json::json!({"clients": "2"}));
    // The journal's cells carry the axes too: an edited one is refused as well.
    edit(&out.join("campaign.json"), |j| {
        j["cells"][1]["axes"] = serde_json::json!({"clients": "1e9"});
    });
    refused(
        &[&out],
        &["cell null.instant.c2: axis clients has the value \"1e9\""],
    );
}
