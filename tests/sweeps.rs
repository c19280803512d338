//! Sweeps: concurrency and host settings as axes of a run.
//!
//! * `--clients 1,2` runs the Insert Benchmark once per level, each a cell with a fresh load,
//!   recorded in the journal and run.json, resumed like any cell, reported level by level with a
//!   Scaling section;
//! * `--threads 1,2` runs each sysbench microbenchmark at each level after one load;
//! * `--read-ahead-kb` sets the read-ahead of the devices under each cell's data before it and
//!   puts it back exactly after: when the cell ends, when it fails, and when dbperf is killed
//!   (its guard puts it back); without root it is refused;
//! * bad lists are one sentence and exit 2.

use crate::common;

use std::path::{Path, PathBuf};
use std::process::Output;
use std::time::{Duration, Instant};

use common::{dbperf, text};

fn run(args: &[&str], out: &Path) -> Output {
    dbperf()
        .args(["run", "--no-progress", "--no-calibration", "--out"])
        .arg(out)
        .args(args)
        .output()
        .unwrap()
}

fn json(p: &Path) -> serde_json::Value {
    serde_json::from_str(&std::fs::read_to_string(p).unwrap()).unwrap()
}

#[test]
fn a_clients_sweep_is_a_cell_per_level_resumed_and_reported_by_level() {
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("r");
    let o = run(
        &[
            "--target",
            "sqlite",
            "--target",
            "sqlite:wal-full",
            "--clients",
            "2,1",
            "--steps",
            "l.i0,l.x",
            "--rows-l-i0",
            "5k",
        ],
        &out,
    );
    assert!(o.status.success(), "{}", text(&o));
    let journal = json(&out.join("campaign.json"));
    let ids: Vec<&str> = journal["cells"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["id"].as_str().unwrap())
        .collect();
    assert_eq!(
        ids,
        [
            "sqlite.wal-normal.c1",
            "sqlite.wal-normal.c2",
            "sqlite.wal-full.c1",
            "sqlite.wal-full.c2"
        ]
    );
    for (id, level) in [("sqlite.wal-normal.c1", 1), ("sqlite.wal-full.c2", 2)] {
        let r = json(&out.join(id).join("run.json"));
        assert_eq!(r["axes"]["clients"], level.to_string());
        assert_eq!(r["parameters"]["clients"], level);
        // Rows are per client: level 2 loaded twice the rows, each level its own load.
        let l = json(&out.join(id).join("steps/l.i0.json"));
        assert_eq!(l["ibench"]["planned_rows"], 5000 * level);
    }
    // The report: a section per level, and the Scaling section.
    let md = std::fs::read_to_string(out.join("report.md")).unwrap();
    assert!(md.contains("## Insert Benchmark · clients 1"), "{md}");
    assert!(md.contains("## Insert Benchmark · clients 2"), "{md}");
    assert!(
        md.contains("## Scaling: Insert Benchmark by clients"),
        "{md}"
    );
    assert!(md.contains("throughput per client, relative to the lowest level"));
    assert!(!md.contains("run with different parameters"), "{md}");
    // Resume after one level's result is lost: that cell alone runs again.
    let mut j = journal.clone();
    j["cells"][1]["state"] = "running".into();
    std::fs::write(out.join("campaign.json"), j.to_string()).unwrap();
    std::fs::remove_dir_all(out.join("sqlite.wal-normal.c2")).unwrap();
    let o = dbperf()
        .args(["run", "--no-progress", "--resume"])
        .arg(&out)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", text(&o));
    let r = json(&out.join("sqlite.wal-normal.c2/run.json"));
    assert_eq!(r["axes"]["clients"], "2");
}

#[test]
fn a_threads_sweep_runs_each_test_at_each_level_after_one_load() {
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("r");
    let o = run(
        &[
            "--suite",
            "sysbench",
            "--threads",
            "1,2",
            "--tests",
            "point-query,update-index",
            "--read-seconds",
            "1",
            "--write-seconds",
            "1",
            "--warmup-seconds",
            "0",
        ],
        &out,
    );
    assert!(o.status.success(), "{}", text(&o));
    let dir = out.join("sqlite.wal-normal");
    let planned: Vec<String> = json(&dir.join("run.json"))["steps_planned"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s.as_str().unwrap().to_string())
        .collect();
    assert_eq!(
        planned,
        [
            "load",
            "update-index_range=100_threads=1",
            "update-index_range=100_threads=2",
            "point-query_range=100_threads=1",
            "point-query_range=100_threads=2",
        ]
    );
    let s = json(&dir.join("steps/point-query_range=100_threads=2.json"));
    assert_eq!(s["parameters"]["clients"], 2);
    assert_eq!(s["sysbench"]["threads"], 2);
    let md = std::fs::read_to_string(out.join("report.md")).unwrap();
    assert!(md.contains("## Scaling: sysbench by threads"), "{md}");
}

#[test]
fn bad_sweep_lists_are_one_sentence_and_exit_2() {
    let tmp = tempfile::tempdir().unwrap();
    for (args, says) in [
        (&["--clients", ""][..], "empty level"),
        (&["--clients", "0,2"], "at least 1"),
        (&["--clients", "2,2"], "twice"),
        (
            &["--suite", "sysbench", "--threads", "1,x"],
            "not a whole number",
        ),
        (
            &["--suite", "sysbench", "--rows", "100", "--threads", "1,200"],
            "more threads than",
        ),
        (&["--suite", "sysbench", "--threads", "1,2000"], "1..1024"),
        (&["--read-ahead-kb", "128,128"], "twice"),
        (&["--read-ahead-kb", "99999999999"], "more than 1 GiB"),
        (&["--io-scheduler", "none,../x"], "not an I/O scheduler"),
        // Values that differ only where a directory name cannot: one directory, refused.
        (
            &["--vary", "cache_size=a:b,a/b"],
            "share the directory sqlite.wal-normal.cache_size=a_b",
        ),
        (&["--read-ahead-kb", "6,8"], "not a whole number of pages"),
        (
            &["--target", "postgres", "--vary", "listen_addresses=a,b"],
            "a sweep cannot set listen_addresses",
        ),
        (
            &["--target", "mariadb", "--vary", "skip-networking=0,1"],
            "a sweep cannot set skip_networking",
        ),
    ] {
        let o = run(args, &tmp.path().join("r"));
        assert_eq!(o.status.code(), Some(2), "{args:?}: {}", text(&o));
        let err = String::from_utf8_lossy(&o.stderr);
        assert!(err.contains(says), "{args:?}: {err}");
        assert!(!err.contains("panicked"), "{err}");
        // Refused before anything ran: no directory left behind.
        assert!(!tmp.path().join("r").exists(), "{args:?} left --out");
    }
}

/// A key of the other suite in a campaign's suite table is answered in the campaign's terms;
/// so are a campaign's own key and a flag of `dbperf run` that is no flag of the suite, which
/// would otherwise be parsed and then ignored.
#[test]
fn a_campaign_key_of_the_other_suite_names_the_table() {
    for (key, says) in [
        (
            "threads = [1, 2]",
            "threads belongs to the sysbench suite, not in [campaign.x.ibench]",
        ),
        (
            "repeats = 3",
            "repeats is set for the whole campaign, not in [campaign.x.ibench]",
        ),
        (
            "pragma = \"cache_size=-1000\"",
            "pragma is not a flag of the ibench suite, not in [campaign.x.ibench]",
        ),
    ] {
        let tmp = tempfile::tempdir().unwrap();
        std::fs::write(
            tmp.path().join("dbperf.toml"),
            format!("[campaign.x]\ntargets = [\"null\"]\n[campaign.x.ibench]\n{key}\n"),
        )
        .unwrap();
        let o = dbperf()
            .current_dir(tmp.path())
            .args(["run", "--campaign", "x", "--no-progress", "--out", "o"])
            .output()
            .unwrap();
        assert_eq!(o.status.code(), Some(2), "{}", text(&o));
        let err = String::from_utf8_lossy(&o.stderr);
        assert!(err.contains(says), "{err}");
        assert!(!tmp.path().join("o").exists(), "{key}");
    }
}

/// `--out ../DIR` is recorded without `..`, so a resume's checks of what the journal names
/// hold (a killed run with such an --out could never be resumed).
#[test]
fn a_relative_out_with_dot_dot_is_recorded_plainly() {
    let tmp = tempfile::tempdir().unwrap();
    let sub = tmp.path().join("sub");
    std::fs::create_dir(&sub).unwrap();
    let o = dbperf()
        .current_dir(&sub)
        .args(["run", "--no-progress", "--no-calibration", "--out", "../o"])
        .args(["--target", "null", "--steps", "l.i0", "--rows-l-i0", "1k"])
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", text(&o));
    let journal = std::fs::read_to_string(tmp.path().join("o/campaign.json")).unwrap();
    assert!(!journal.contains("/../"), "{journal}");
    assert!(journal.contains("work"), "{journal}");
}

/// The block device under `dir` and its read-ahead, as `dbperf host show` sees them.
fn device_under(dir: &Path) -> Option<(String, PathBuf)> {
    let o = dbperf()
        .args(["host", "show", "--json", "--path"])
        .arg(dir)
        .output()
        .unwrap();
    let j: serde_json::Value = serde_json::from_slice(&o.stdout).ok()?;
    let d = &j["storage"][0]["devices"][0];
    let name = d["name"].as_str()?.to_string();
    let sys = PathBuf::from(format!("/sys/class/block/{name}/queue/read_ahead_kb"));
    sys.exists().then_some((name, sys))
}

fn read_ahead(p: &Path) -> String {
    std::fs::read_to_string(p).unwrap().trim().to_string()
}

#[test]
fn a_read_ahead_sweep_puts_every_device_back_whatever_happens() {
    let tmp = tempfile::tempdir().unwrap();
    if !common::is_root() {
        // Without root the sweep is refused before anything runs.
        let o = run(
            &["--target", "sqlite", "--read-ahead-kb", "64"],
            &tmp.path().join("r"),
        );
        assert_eq!(o.status.code(), Some(2), "{}", text(&o));
        assert!(String::from_utf8_lossy(&o.stderr).contains("needs root"));
        eprintln!("note: not root, so the read-ahead of a real device is not swept here");
        return;
    }
    let Some((name, sys)) = device_under(tmp.path()) else {
        eprintln!(
            "skipped: no block device with a read-ahead under {}",
            tmp.path().display()
        );
        return;
    };
    let before = read_ahead(&sys);
    let values = if before == "64" { "96,256" } else { "64,256" };
    // Whole: each cell at its value (run.json's host says so), then back.
    let out = tmp.path().join("whole");
    let o = run(
        &[
            "--target",
            "sqlite",
            "--read-ahead-kb",
            values,
            "--steps",
            "l.i0",
            "--rows-l-i0",
            "5k",
        ],
        &out,
    );
    assert!(o.status.success(), "{}", text(&o));
    assert_eq!(read_ahead(&sys), before, "{name} put back");
    for v in values.split(',') {
        let r = json(&out.join(format!("sqlite.wal-normal.ra{v}/run.json")));
        assert_eq!(r["axes"]["read_ahead_kb"], v);
        let seen = r["host"]["storage"][0]["devices"]
            .as_array()
            .unwrap()
            .iter()
            .find(|d| d["name"] == name.as_str())
            .map(|d| d["read_ahead_kb"].to_string());
        assert_eq!(seen.as_deref(), Some(v), "{name} during the cell");
    }
    // A cell that fails: put back too.
    let o = run(
        &["--target", "null:fail-at-5", "--read-ahead-kb", "64"],
        &tmp.path().join("failing"),
    );
    assert_eq!(o.status.code(), Some(1), "{}", text(&o));
    assert_eq!(
        read_ahead(&sys),
        before,
        "{name} put back after a failed cell"
    );
    // Two runs sweeping one device: the second is refused while the first holds it.
    let mut first = dbperf()
        .args(["run", "--no-progress", "--no-calibration", "--out"])
        .arg(tmp.path().join("first"))
        .args(["--target", "sqlite", "--read-ahead-kb", "64"])
        .args(["--steps", "l.i0", "--rows-l-i0", "50M"])
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let t = Instant::now();
    while read_ahead(&sys) != "64" && t.elapsed() < Duration::from_secs(60) {
        std::thread::sleep(Duration::from_millis(50));
    }
    let o = run(
        &["--target", "sqlite", "--read-ahead-kb", "128"],
        &tmp.path().join("second"),
    );
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    assert!(
        String::from_utf8_lossy(&o.stderr).contains(&format!(
            "sweeping read-ahead or the I/O scheduler of {name}"
        )),
        "{}",
        text(&o)
    );
    assert_eq!(read_ahead(&sys), "64", "the second run changed nothing");
    first.kill().unwrap();
    first.wait().unwrap();
    let t = Instant::now();
    while read_ahead(&sys) != before && t.elapsed() < Duration::from_secs(30) {
        std::thread::sleep(Duration::from_millis(50));
    }
    assert_eq!(read_ahead(&sys), before);
    // dbperf killed mid-cell (SIGKILL): its guard puts the device back.
    let mut child = dbperf()
        .args(["run", "--no-progress", "--no-calibration", "--out"])
        .arg(tmp.path().join("killed"))
        .args(["--target", "sqlite", "--read-ahead-kb", "64"])
        .args(["--steps", "l.i0", "--rows-l-i0", "50M"])
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let t = Instant::now();
    while read_ahead(&sys) != "64" && t.elapsed() < Duration::from_secs(60) {
        std::thread::sleep(Duration::from_millis(50));
    }
    assert_eq!(read_ahead(&sys), "64", "set during the cell");
    child.kill().unwrap();
    child.wait().unwrap();
    let t = Instant::now();
    while read_ahead(&sys) != before && t.elapsed() < Duration::from_secs(30) {
        std::thread::sleep(Duration::from_millis(50));
    }
    assert_eq!(read_ahead(&sys), before, "{name} put back after SIGKILL");
}

/// The sysbench sweep against real servers dbperf starts: each test at 1 and 2 threads, ok.
#[test]
fn postgres_and_mariadb_at_1_and_2_threads() {
    if !common::postgres() || !common::mariadb(false) {
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("r");
    let o = run(
        &[
            "--suite",
            "sysbench",
            "--target",
            "postgres",
            "--target",
            "mariadb",
            "--threads",
            "1,2",
            "--tests",
            "point-query,read-only_range=10",
            "--rows",
            "2000",
            "--read-seconds",
            "1",
            "--warmup-seconds",
            "0",
        ],
        &out,
    );
    assert!(o.status.success(), "{}", text(&o));
    for t in ["postgres.default", "mariadb.default"] {
        for step in [
            "point-query_range=100_threads=1",
            "point-query_range=100_threads=2",
            "read-only_range=10_threads=2",
        ] {
            let s = json(&out.join(t).join("steps").join(format!("{step}.json")));
            assert_eq!(s["status"], "ok", "{t} {step}: {}", s["error"]);
            assert!(s["headline"]["value"].as_f64().unwrap() > 0.0, "{t} {step}");
        }
    }
    let md = std::fs::read_to_string(out.join("report.md")).unwrap();
    assert!(
        md.contains("point-query_range=100 · mariadb.default"),
        "{md}"
    );
}

/// A server setting swept over: each value is in the cell's config, and an install-time one
/// (InnoDB's page size) reaches the install step: the server reports it.
#[test]
fn a_server_setting_sweep_reaches_the_install_step() {
    if !common::mariadb(false) {
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("r");
    let o = run(
        &[
            "--target",
            "mariadb",
            "--vary",
            "innodb_page_size=8k,16k",
            "--steps",
            "l.i0",
            "--rows-l-i0",
            "2k",
        ],
        &out,
    );
    assert!(o.status.success(), "{}", text(&o));
    for (v, bytes) in [("8k", "8192"), ("16k", "16384")] {
        let r = json(&out.join(format!("mariadb.default.innodb_page_size={v}/run.json")));
        assert_eq!(r["axes"]["setting.innodb_page_size"], v);
        let text = r["target"]["config_text"].as_str().unwrap();
        assert!(
            text.lines()
                .any(|l| l == format!("innodb_page_size = {bytes}")),
            "{v}: {text}"
        );
    }
    let md = std::fs::read_to_string(out.join("report.md")).unwrap();
    assert!(
        md.contains("## Insert Benchmark by innodb_page_size"),
        "{md}"
    );
}

/// More connections than a managed server's config allows are refused before anything runs.
#[test]
fn a_sweep_past_the_servers_connection_limit_is_refused() {
    if !common::postgres() {
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("r");
    let o = run(&["--target", "postgres", "--clients", "1,200"], &out);
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains("more than the max_connections 200"), "{err}");
    assert!(!out.exists(), "nothing ran");
    let o = run(&["--vary", "cache_size"], &out);
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    let o = run(&["--vary", "cache_size=1"], &out);
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
}
