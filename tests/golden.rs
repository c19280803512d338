//! Result directories written by earlier dbperfs (schema 1, under tests/golden/) must keep
//! reading, through the results room's one reader and into a report, for as long as the schema
//! number is 1 (docs/results.md says when it changes): `release-3be8b90/` was written by the
//! last release before campaigns (its README says how), `schema1/` by the first with them.
//! Never regenerate these files to make this pass: a failure means the change breaks every
//! result users already have.

use crate::common;

use std::path::{Path, PathBuf};

use common::*;
use dbperf::results::{self, campaign::read_journal, Status};
use serde_json::Value;

fn golden() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/golden/schema1")
}

fn release() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/golden/release-3be8b90")
}

const RELEASE_IBENCH: [&str; 6] = ["l.i0", "l.x", "l.i1", "l.i2", "qr100", "qp100"];
const RELEASE_SYSBENCH: [&str; 3] = ["load", "update-index_range=100", "point-query_range=100"];

/// Every file the release wrote reads through the one reader (`results::read_run`,
/// `results::read_step`), with the steps it ran.
#[test]
fn results_of_the_release_before_campaigns_read_through_the_one_reader() {
    for (suite, steps) in [
        ("ibench", &RELEASE_IBENCH[..]),
        ("sysbench", &RELEASE_SYSBENCH[..]),
    ] {
        let run_dir = release().join(suite);
        assert!(
            !run_dir.join("campaign.json").exists(),
            "written before journals existed"
        );
        let d = run_dir.join(TARGET);
        let run = results::read_run(&d).expect("run.json reads");
        assert_eq!(run.suite.name(), suite);
        assert_eq!(run.tool.git_revision, "3be8b909470f", "{suite}");
        assert_eq!(run.campaign, None, "{suite}");
        assert_eq!(run.steps_planned, steps);
        for step in steps {
            let f = results::read_step(&d, step)
                .unwrap_or_else(|e| panic!("{suite} {step} reads: {e:#}"));
            assert_eq!(f.step, *step);
            assert_eq!(f.status, Status::Ok, "{suite} {step}");
            assert!(f.headline.value > 0.0, "{suite} {step}");
            assert!(f.hardware.is_some(), "{suite} {step}: hardware read");
        }
        // The sysbench steps carry their `sysbench` object, which the report groups by.
        if suite == "sysbench" {
            let f = results::read_step(&d, "point-query_range=100").unwrap();
            assert_eq!(f.sysbench().expect("sysbench object").group, "point");
            // Schema 1 gave the load the Insert Benchmark's empty fields: read as no part.
            assert!(results::read_step(&d, "load").unwrap().payload.is_none());
        }
        // Schema 1 kept the Insert Benchmark's part among every step's fields: read under
        // `ibench`, as schema 2 writes it.
        if suite == "ibench" {
            let f = results::read_step(&d, "qr100").unwrap();
            let part = f.ibench().expect("the Insert Benchmark's part");
            assert_eq!(part.rate_per_client, Some(100));
            assert!(part.sla.as_ref().and_then(|s| s.met).is_some(), "{part:?}");
            let l = results::read_step(&d, "l.i0").unwrap();
            assert_eq!(l.ibench().unwrap().planned_rows, 2000);
            assert_eq!(l.parameters.clients, 1);
        }
    }
}

/// The release's directories make a report in every format, with every step in it and its
/// numbers the files' numbers, and nothing left out.
#[test]
fn the_release_before_campaigns_reports() {
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("rep");
    let ib = release().join("ibench");
    let sb = release().join("sysbench");
    let o = run(&[
        "report",
        ib.to_str().unwrap(),
        sb.to_str().unwrap(),
        "--format",
        "html,md,json",
        "--out",
        out.to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    assert!(!text(&o).contains("left out"), "{}", text(&o));
    let rep: Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("report.json")).unwrap()).unwrap();
    let tput = table(&rep, "ibench-tput");
    let cols: Vec<&str> = tput["columns"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["key"].as_str().unwrap())
        .collect();
    for step in RELEASE_IBENCH {
        let f = results::read_step(&ib.join(TARGET), step).unwrap();
        let i = cols
            .iter()
            .position(|k| *k == step)
            .unwrap_or_else(|| panic!("{step} in {cols:?}"));
        let v = tput["rows"][0]["cells"][i]["value"].as_f64();
        assert_eq!(v, Some(f.headline.value), "{step}");
    }
    let md = std::fs::read_to_string(out.join("report.md")).unwrap();
    let html = std::fs::read_to_string(out.join("report.html")).unwrap();
    for step in RELEASE_IBENCH.iter().chain(&RELEASE_SYSBENCH[1..]) {
        assert!(md.contains(step), "{step} in the Markdown report");
        assert!(html.contains(step), "{step} in the HTML report");
    }
    // The sysbench QPS table has the two microbenchmarks with their step files' QPS.
    let all: Vec<&Value> = rep["tables"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|t| {
            t["id"].as_str().unwrap().starts_with("sysbench-")
                && t["id"].as_str().unwrap().ends_with("-qps")
        })
        .collect();
    let mut seen = Vec::new();
    for t in all {
        for (i, c) in t["columns"].as_array().unwrap().iter().enumerate() {
            let key = c["key"].as_str().unwrap();
            if let Ok(f) = results::read_step(&sb.join(TARGET), key) {
                assert_eq!(
                    t["rows"][0]["cells"][i]["value"].as_f64(),
                    Some(f.headline.value),
                    "{key}"
                );
                seen.push(key.to_string());
            }
        }
    }
    seen.sort();
    assert_eq!(seen, ["point-query_range=100", "update-index_range=100"]);
}

fn table<'a>(rep: &'a Value, id: &str) -> &'a Value {
    rep["tables"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["id"] == id)
        .unwrap_or_else(|| panic!("table {id}"))
}

const TARGET: &str = "sqlite.wal-normal";

#[test]
fn results_of_an_earlier_release_still_read() {
    for (suite, steps) in [
        ("ibench", vec!["l.i0", "l.x", "l.i1", "qr100"]),
        (
            "sysbench",
            vec!["load", "update-index_range=100", "point-query_range=100"],
        ),
    ] {
        let run_dir = golden().join(suite);
        let j = read_journal(&run_dir).expect("campaign.json reads");
        assert_eq!(j.cells.len(), 1);
        let (run, files) = read_all(&run_dir.join(TARGET));
        assert_eq!(run.suite.name(), suite);
        assert_eq!(run.steps_planned, steps);
        assert_eq!(files.len(), steps.len(), "{suite}: every step file reads");
        for f in &files {
            assert_eq!(f.status, Status::Ok, "{suite} {}", f.step);
            assert!(f.headline.value > 0.0, "{suite} {}", f.step);
        }
    }
}

/// Fields a later dbperf adds within schema 1 are read past, not refused.
#[test]
fn fields_added_later_are_ignored() {
    let tmp = tempfile::tempdir().unwrap();
    let d = tmp.path().join(TARGET);
    copy_dir(&golden().join("ibench").join(TARGET), &d);
    let edit = |p: &Path| {
        let mut v: Value = serde_json::from_str(&std::fs::read_to_string(p).unwrap()).unwrap();
        v["a_field_from_the_future"] = serde_json::json!({"x": [1, 2]});
        std::fs::write(p, v.to_string()).unwrap();
    };
    edit(&d.join("run.json"));
    edit(&d.join("steps/l.i0.json"));
    let run = results::read_run(&d).expect("an added field is ignored");
    assert_eq!(run.target.name, TARGET);
    results::read_step(&d, "l.i0").expect("an added field is ignored");
}

/// The report over both golden directories: its numbers are the files' numbers.
#[test]
fn an_earlier_release_reports() {
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("rep");
    let ib = golden().join("ibench");
    let sb = golden().join("sysbench");
    let o = run(&[
        "report",
        ib.to_str().unwrap(),
        sb.to_str().unwrap(),
        "--format",
        "json,md",
        "--out",
        out.to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    let rep: Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("report.json")).unwrap()).unwrap();
    let table = |id: &str| -> Value {
        rep["tables"]
            .as_array()
            .unwrap()
            .iter()
            .find(|t| t["id"] == id)
            .unwrap_or_else(|| panic!("table {id}"))
            .clone()
    };
    let (_, steps) = read_all(&ib.join(TARGET));
    let tput = table("ibench-tput");
    let cols: Vec<&str> = tput["columns"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["key"].as_str().unwrap())
        .collect();
    for s in &steps {
        let i = cols
            .iter()
            .position(|k| *k == s.step)
            .unwrap_or_else(|| panic!("{} in {cols:?}", s.step));
        let v = tput["rows"][0]["cells"][i]["value"].as_f64().unwrap();
        assert_eq!(v, s.headline.value, "{}", s.step);
    }
    let md = std::fs::read_to_string(out.join("report.md")).unwrap();
    assert!(md.contains("point-query_range=100"), "{md}");
}

fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for e in std::fs::read_dir(from).unwrap().flatten() {
        let p = e.path();
        if p.is_dir() {
            copy_dir(&p, &to.join(e.file_name()));
        } else {
            std::fs::copy(&p, to.join(e.file_name())).unwrap();
        }
    }
}

/// The report sets whose every byte is pinned: (name, input directories, report options).
const PINNED: [(&str, &[&str], &[&str]); 4] = [
    (
        "ibench",
        &["release-3be8b90/ibench", "schema1/ibench"],
        &["--allow-mixed-hosts"],
    ),
    (
        "sysbench",
        &["release-3be8b90/sysbench", "schema1/sysbench"],
        &["--allow-mixed-hosts"],
    ),
    ("repeats", &["repeats-null"], &[]),
    // Written at 1f86869 (the commit before the step file's suite payload) with
    // `dbperf run --suite tpcc --preset smoke --target sqlite --target sqlite:wal-full
    // --connections 1,2 --run-seconds 3`, so the TPC-C section is pinned before it moves.
    ("tpcc", &["schema1/tpcc"], &[]),
];

/// The reports of a fixed set of result directories, in every format, are byte for byte the
/// ones recorded under tests/golden/reports/ (but for the git revision that wrote them): a
/// change to how reports are made must not change what they say. A deliberate change to the
/// report regenerates them with DBPERF_BLESS=1 and says why in its commit.
#[test]
fn reports_of_the_golden_directories_are_unchanged_to_the_byte() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/golden");
    let version = text(&run(&["--version"]));
    let rev = version
        .split("(git ")
        .nth(1)
        .and_then(|r| r.split(')').next())
        .expect("--version names the git revision")
        .to_string();
    let bless = std::env::var_os("DBPERF_BLESS").is_some();
    let mut changed = Vec::new();
    for (name, inputs, options) in PINNED {
        // Relative inputs, as a person types them: the report names them.
        let tmp = tempfile::tempdir().unwrap();
        let mut args = vec!["report".to_string()];
        for (i, input) in inputs.iter().enumerate() {
            let here = format!("in{i}");
            copy_dir(&root.join(input), &tmp.path().join(&here));
            args.push(here);
        }
        args.extend(["--format", "html,md,json,csv", "--out", "rep"].map(String::from));
        args.extend(options.iter().map(|o| o.to_string()));
        let o = dbperf()
            .args(&args)
            .current_dir(tmp.path())
            .output()
            .unwrap();
        assert_eq!(o.status.code(), Some(0), "{name}: {}", text(&o));
        for format in ["html", "md", "json", "csv"] {
            let made = std::fs::read_to_string(tmp.path().join(format!("rep/report.{format}")))
                .unwrap()
                .replace(&rev, "REV");
            let pinned = root.join(format!("reports/{name}.{format}"));
            if bless {
                std::fs::create_dir_all(pinned.parent().unwrap()).unwrap();
                std::fs::write(&pinned, &made).unwrap();
            } else if std::fs::read_to_string(&pinned).ok().as_deref() != Some(made.as_str()) {
                let kept = std::env::temp_dir().join(format!("dbperf-golden-{name}.{format}"));
                std::fs::write(&kept, &made).unwrap();
                changed.push(format!("{} (made: {})", pinned.display(), kept.display()));
            }
        }
    }
    assert!(
        changed.is_empty(),
        "reports differ from the pinned ones:\n{}",
        changed.join("\n")
    );
}
