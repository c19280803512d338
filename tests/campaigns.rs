//! Campaigns: repeats in interleaved rounds, the journal, resume after SIGKILL, shards. The
//! run-loop checks use the hidden `null` target (answers in a scripted time), so they take
//! seconds; one campaign runs on real SQLite and one on managed servers.

use crate::common;

use std::path::{Path, PathBuf};
use std::process::{Child, Stdio};
use std::time::{Duration, Instant};

use common::*;
use serde_json::Value;

fn journal(out: &Path) -> Value {
    serde_json::from_str(&std::fs::read_to_string(out.join("campaign.json")).unwrap()).unwrap()
}

fn cells(out: &Path) -> Vec<(String, String, u64)> {
    journal(out)["cells"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| {
            (
                c["id"].as_str().unwrap().to_string(),
                c["state"].as_str().unwrap().to_string(),
                c["attempts"].as_u64().unwrap(),
            )
        })
        .collect()
}

fn spawn(args: &[&str], cwd: &Path) -> Child {
    dbperf()
        .args(args)
        .current_dir(cwd)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("dbperf starts")
}

/// Waits until `cond` holds, at most `secs` seconds.
fn wait_for(secs: u64, what: &str, mut cond: impl FnMut() -> bool) {
    let start = Instant::now();
    while !cond() {
        assert!(
            start.elapsed() < Duration::from_secs(secs),
            "{what} did not happen within {secs} s"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
}

fn kill9(mut child: Child) {
    // SAFETY: kill has no memory-safety preconditions.
    unsafe { libc::kill(child.id() as i32, libc::SIGKILL) };
    let _ = child.wait();
}

/// Every file under `dir`, relative to it.
fn tree(dir: &Path) -> Vec<String> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).into_iter().flatten().flatten() {
            let p = e.path();
            if p.is_dir() {
                stack.push(p.clone());
            }
            out.push(p.strip_prefix(dir).unwrap().display().to_string());
        }
    }
    out.sort();
    out
}

#[test]
fn repeats_interleave_and_a_killed_run_resumes_from_its_journal() {
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("c");
    let o = out.to_str().unwrap();
    // Each operation of the first target takes 20 ms: its l.i0 (100 statements) lasts 2 s.
    let args = [
        "run",
        "--target",
        "null:sleep-20ms",
        "--target",
        "null",
        "--repeats",
        "2",
        "--steps",
        "l.i0,l.x,l.i1",
        "--rows-l-i0",
        "10k",
        "--rows-l-i1",
        "1k",
        "--out",
        o,
        "--no-progress",
    ];
    let child = spawn(&args, tmp.path());
    let step = out.join("null.sleep-20ms/r1/steps");
    wait_for(20, "the first cell's l.i0 starting", || {
        step.join(".l.i0.series.csv.tmp").exists()
    });
    kill9(child);
    let before = cells(&out);
    assert_eq!(before[0].1, "running", "{before:?}");
    assert!(before[1..].iter().all(|c| c.1 == "planned"), "{before:?}");
    // The plan: round 1 in the given order, round 2 rotated.
    let ids: Vec<&str> = before.iter().map(|c| c.0.as_str()).collect();
    assert_eq!(
        ids,
        [
            "null.sleep-20ms/r1",
            "null.instant/r1",
            "null.instant/r2",
            "null.sleep-20ms/r2"
        ]
    );

    // A new run into the same directory is refused: it is continued with --resume.
    let o2 = run(&args);
    assert_eq!(o2.status.code(), Some(2), "{}", text(&o2));
    assert!(text(&o2).contains("--resume"), "{}", text(&o2));

    // Resumed from another directory: the journal remembers where the run was started.
    let r = dbperf()
        .args(["run", "--resume", o])
        .current_dir("/")
        .output()
        .unwrap();
    assert_eq!(r.status.code(), Some(0), "{}", text(&r));
    let after = cells(&out);
    assert!(after.iter().all(|c| c.1 == "done"), "{after:?}");
    assert_eq!(after[0].2, 2, "the killed cell ran again: {after:?}");
    assert!(after[1..].iter().all(|c| c.2 == 1), "{after:?}");
    let stderr = String::from_utf8_lossy(&r.stderr);
    assert!(stderr.contains("cell 2/4"), "{stderr}");
    assert!(stderr.contains("ETA "), "{stderr}");
    // The killed cell was redone from scratch: no partial file is left, its run.json is the
    // second attempt's, and every cell has all its steps.
    let files = tree(&out);
    assert!(
        !files.iter().any(|f| f.ends_with(".tmp")),
        "partial files left: {files:?}"
    );
    for c in &after {
        let (run, steps) = read_all(&out.join(&c.0));
        assert_eq!(run.status, "ok");
        assert_eq!(steps.len(), 3, "{}", c.0);
        let cell = run.campaign.expect("run.json names its cell");
        assert_eq!((cell.cell.as_str(), cell.rounds), (c.0.as_str(), 2));
        assert_eq!(cell.attempt as u64, c.2);
    }
    assert!(!out.join("work").exists(), "the work directory is removed");
    // Resuming a finished run runs nothing.
    let again = run(&["run", "--resume", o]);
    assert_eq!(again.status.code(), Some(0), "{}", text(&again));
    assert_eq!(cells(&out), after);
}

#[test]
fn failed_cells_are_retried_once_on_resume_unless_told_not_to() {
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("c");
    let o = out.to_str().unwrap();
    let o1 = run(&[
        "run",
        "--target",
        "null:fail-at-50",
        "--target",
        "null",
        "--steps",
        "l.i0,l.x",
        "--rows-l-i0",
        "10k",
        "--out",
        o,
        "--no-progress",
    ]);
    assert_eq!(o1.status.code(), Some(1), "{}", text(&o1));
    let c = cells(&out);
    assert_eq!((c[0].1.as_str(), c[1].1.as_str()), ("failed", "done"));
    // --no-retry: nothing to do, the failure stands.
    let o2 = run(&["run", "--resume", o, "--no-retry"]);
    assert_eq!(o2.status.code(), Some(0), "{}", text(&o2));
    assert_eq!(cells(&out)[0].1, "failed");
    // A retry (the script fails again): the first attempt's results are kept aside.
    let o3 = run(&["run", "--resume", o]);
    assert_eq!(o3.status.code(), Some(1), "{}", text(&o3));
    let c = cells(&out);
    assert_eq!((c[0].1.as_str(), c[0].2), ("failed", 2));
    assert!(out.join(".attempts/null.fail-at-50.1/run.json").is_file());
    // Only once.
    let o4 = run(&["run", "--resume", o]);
    assert_eq!(o4.status.code(), Some(0), "{}", text(&o4));
    assert_eq!(cells(&out)[0].2, 2);
}

#[test]
fn shards_split_the_cells_and_together_run_each_once() {
    let tmp = tempfile::tempdir().unwrap();
    let toml = tmp.path().join("dbperf.toml");
    std::fs::write(
        &toml,
        r#"
[campaign.grid]
engines = ["null"]
configs = ["instant", "sleep-1us", "sleep-2us"]
repeats = 2
[campaign.grid.ibench]
steps = "l.i0,l.x"
rows_l_i0 = "1k"
"#,
    )
    .unwrap();
    let mut ran: Vec<String> = Vec::new();
    let mut plans = Vec::new();
    for k in 1..=2 {
        let out = tmp.path().join(format!("s{k}"));
        let o = run(&[
            "run",
            "--config-file",
            toml.to_str().unwrap(),
            "--campaign",
            "grid",
            "--shard",
            &format!("{k}/2"),
            "--out",
            out.to_str().unwrap(),
            "--no-progress",
        ]);
        assert_eq!(o.status.code(), Some(0), "{}", text(&o));
        // Each cell is numbered by its place in the whole plan: shard k runs cells k, k+2, k+4.
        let stderr = String::from_utf8_lossy(&o.stderr);
        let numbers: Vec<&str> = stderr
            .lines()
            .filter_map(|l| l.strip_prefix("cell "))
            .filter_map(|l| l.split_whitespace().next())
            .collect();
        let want: Vec<String> = (0..3).map(|i| format!("{}/6", k + 2 * i)).collect();
        assert_eq!(numbers, want, "{stderr}");
        let c = cells(&out);
        assert_eq!(c.len(), 6);
        plans.push(c.iter().map(|x| x.0.clone()).collect::<Vec<_>>());
        for (id, state, _) in c {
            match state.as_str() {
                "done" => {
                    assert!(out.join(&id).join("run.json").is_file());
                    ran.push(id)
                }
                "elsewhere" => assert!(!out.join(&id).exists()),
                s => panic!("{id}: {s}"),
            }
        }
        assert_eq!(journal(&out)["shard"]["index"], k);
    }
    assert_eq!(plans[0], plans[1], "both shards plan the same cells");
    ran.sort();
    let mut all = plans[0].clone();
    all.sort();
    assert_eq!(ran, all, "every cell ran exactly once");
    // The shards' directories together report as the unsharded campaign: same tables, same
    // rows, every round of every target in the Repeats table.
    let whole = tmp.path().join("whole");
    let o = run(&[
        "run",
        "--config-file",
        toml.to_str().unwrap(),
        "--campaign",
        "grid",
        "--out",
        whole.to_str().unwrap(),
        "--no-progress",
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    let report = |inputs: &[&Path], out: &Path| -> Value {
        let mut a: Vec<&str> = vec!["report", "--format", "json", "--out", out.to_str().unwrap()];
        a.extend(inputs.iter().map(|p| p.to_str().unwrap()));
        let o = run(&a);
        assert_eq!(o.status.code(), Some(0), "{}", text(&o));
        serde_json::from_str(&std::fs::read_to_string(out.join("report.json")).unwrap()).unwrap()
    };
    let shape = |r: &Value| -> Vec<(String, Vec<String>, usize)> {
        r["tables"]
            .as_array()
            .unwrap()
            .iter()
            .map(|t| {
                let rows = t["rows"].as_array().unwrap();
                let labels = rows
                    .iter()
                    .map(|x| x["label"].as_str().unwrap().to_string())
                    .collect();
                // Hardware figures measured as zero (no device reads in a run, say) leave
                // gaps that differ from run to run, in the metrics and the per-device tables;
                // every other table's gaps must agree.
                let id = t["id"].as_str().unwrap();
                let measured = id.contains("-metrics") || id.contains("-devices");
                let gaps = rows
                    .iter()
                    .flat_map(|x| x["cells"].as_array().unwrap())
                    .filter(|c| c["mark"] == "gap")
                    .count()
                    * usize::from(!measured);
                (t["id"].as_str().unwrap().to_string(), labels, gaps)
            })
            .collect()
    };
    let merged = report(
        &[&tmp.path().join("s1"), &tmp.path().join("s2")],
        &tmp.path().join("rm"),
    );
    let single = report(&[&whole], &tmp.path().join("rw"));
    assert_eq!(shape(&merged), shape(&single));
    assert!(
        merged.get("incomplete").is_none(),
        "{}",
        merged["incomplete"]
    );
    // One shard alone is half the campaign: said in every format, and with --complete nothing
    // is written and the exit is 1.
    let half = report(&[&tmp.path().join("s1")], &tmp.path().join("rh"));
    let said = half["incomplete"].to_string();
    assert!(said.contains("shard 2/2 is not among the inputs"), "{said}");
    let o = run(&[
        "report",
        "--complete",
        "--out",
        tmp.path().join("rc").to_str().unwrap(),
        tmp.path().join("s1").to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(1), "{}", text(&o));
    assert!(
        text(&o).contains("incomplete: campaign grid is not complete: shard 2/2"),
        "{}",
        text(&o)
    );
    assert!(!tmp.path().join("rc").join("report.html").exists());
    let o = run(&[
        "report",
        "--complete",
        "--out",
        tmp.path().join("rc").to_str().unwrap(),
        tmp.path().join("s1").to_str().unwrap(),
        tmp.path().join("s2").to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    let md = std::fs::read_to_string(tmp.path().join("rc").join("report.md")).unwrap();
    assert!(!md.contains("Incomplete"), "{md}");
    let rep = merged["tables"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["id"] == "repeats")
        .expect("a Repeats table");
    let rows = rep["rows"].as_array().unwrap();
    assert_eq!(rows.len(), 6, "3 targets x 2 steps: {rep}");
    for r in rows {
        for c in &r["cells"].as_array().unwrap()[..2] {
            assert!(c["value"].is_number(), "both rounds in every row: {r}");
        }
    }
    // A cell its journal says is done but whose results were removed afterwards: named, and
    // --complete writes nothing (the journal alone vouched for it before).
    let journal: Value = serde_json::from_str(
        &std::fs::read_to_string(tmp.path().join("s2/campaign.json")).unwrap(),
    )
    .unwrap();
    let gone = journal["cells"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["state"] == "done")
        .expect("shard 2 has a done cell")["id"]
        .as_str()
        .unwrap()
        .to_string();
    std::fs::remove_dir_all(tmp.path().join("s2").join(&gone)).unwrap();
    let lost = tmp.path().join("rl");
    let o = run(&[
        "report",
        "--complete",
        "--out",
        lost.to_str().unwrap(),
        tmp.path().join("s1").to_str().unwrap(),
        tmp.path().join("s2").to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(1), "{}", text(&o));
    assert!(
        text(&o).contains(&format!("{gone} (its result directory has no run.json)")),
        "{}",
        text(&o)
    );
    assert!(!lost.join("report.html").exists());
}

#[test]
fn a_campaign_is_declared_once_and_refuses_what_it_decides() {
    let tmp = tempfile::tempdir().unwrap();
    let toml = tmp.path().join("dbperf.toml");
    std::fs::write(
        &toml,
        "[campaign.c]\ntargets = [\"null\", \"null:sleep-1us\"]\nbase = \"null.sleep-1us\"\n\
         [campaign.c.ibench]\nsteps = \"l.i0\"\nrows_l_i0 = \"1k\"\n",
    )
    .unwrap();
    let t = toml.to_str().unwrap();
    let out = tmp.path().join("r");
    let o = run(&[
        "run",
        "--config-file",
        t,
        "--campaign",
        "c",
        "--out",
        out.to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    let j = journal(&out);
    assert_eq!(j["campaign"], "c");
    assert_eq!(j["base"], "null.sleep-1us");
    for (args, expect) in [
        (vec!["--campaign", "nope"], "no campaign nope"),
        (
            vec!["--campaign", "c", "--target", "null"],
            "--target is decided by campaign c",
        ),
        (
            vec!["--campaign", "c", "--rows-l-i0", "5"],
            "--rows-l-i0 is decided",
        ),
        (vec!["--shard", "3/2"], "--shard 3/2"),
        (vec!["--resume", "/nonexistent-dir"], "no campaign.json"),
        (
            vec!["--resume", out.to_str().unwrap(), "--preset", "short"],
            "--preset cannot go with --resume",
        ),
    ] {
        let mut a = vec!["run"];
        if args[0] != "--resume" {
            a.extend(["--config-file", t]);
        }
        a.extend(args);
        let o = run(&a);
        assert_eq!(o.status.code(), Some(2), "{a:?}: {}", text(&o));
        assert!(
            String::from_utf8_lossy(&o.stderr).contains(expect),
            "{a:?}: {}",
            text(&o)
        );
    }
}

/// Quick Insert Benchmark steps of two SQLite configs, twice each; killed in the middle of a
/// step and resumed.
#[test]
fn a_sqlite_campaign_killed_mid_step_finishes_on_resume() {
    let tmp = tempfile::tempdir().unwrap();
    let toml = tmp.path().join("dbperf.toml");
    std::fs::write(
        &toml,
        r#"
[campaign.sqlite-configs]
targets = ["sqlite", "sqlite:wal-full"]
repeats = 2
preset = "quick"
[campaign.sqlite-configs.ibench]
steps = "l.i0,l.x,l.i1,l.i2"
rows_l_i0 = "30k"
rows_l_i1 = "20k"
rows_l_i2 = "5k"
"#,
    )
    .unwrap();
    let out = tmp.path().join("r");
    let child = spawn(
        &[
            "run",
            "--config-file",
            toml.to_str().unwrap(),
            "--campaign",
            "sqlite-configs",
            "--out",
            out.to_str().unwrap(),
        ],
        tmp.path(),
    );
    // Killed while the second cell's l.i1 runs.
    let steps = out.join("sqlite.wal-full/r1/steps");
    wait_for(120, "the second cell's l.i1", || {
        steps.join(".l.i1.series.csv.tmp").exists()
    });
    kill9(child);
    assert_eq!(cells(&out)[1].1, "running");
    let r = run(&["run", "--resume", out.to_str().unwrap()]);
    assert_eq!(r.status.code(), Some(0), "{}", text(&r));
    let c = cells(&out);
    assert!(c.iter().all(|x| x.1 == "done"), "{c:?}");
    for (id, _, _) in &c {
        let (run, steps) = read_all(&out.join(id));
        assert_eq!(run.status, "ok", "{id}");
        assert_eq!(steps.len(), 4, "{id}");
        for s in &steps {
            assert_eq!(s.status, "ok", "{id} {}", s.step);
        }
    }
    let files = tree(&out);
    assert!(!files.iter().any(|f| f.ends_with(".tmp")), "{files:?}");
    // One report over every cell, both repeats in it.
    let md = std::fs::read_to_string(out.join("report.md")).unwrap();
    assert!(md.contains("| round 1 | round 2 | median |"), "{md}");
    for t in ["sqlite.wal-normal", "sqlite.wal-full"] {
        for s in ["l.i0", "l.x", "l.i1", "l.i2"] {
            assert!(md.contains(&format!("| {t} · {s} | ")), "{t} {s}: {md}");
        }
    }
}

/// A campaign over managed servers, dbperf SIGKILLed while a server runs a step: the journal
/// names the running server, and the resume leaves no server behind and finishes every cell.
/// (The server dies with dbperf, by the parent-death signal; the resume's stop of a server that
/// outlived its dbperf is tested on its own below, with a process the test keeps alive.)
#[test]
fn a_server_campaign_killed_mid_step_leaves_no_server_after_resume() {
    if !(postgres() && mariadb(false)) {
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("r");
    let o = out.to_str().unwrap();
    let child = spawn(
        &[
            "run",
            "--target",
            "postgres",
            "--target",
            "mariadb",
            "--steps",
            "l.i0,l.x,l.i1",
            // Seconds of l.i0 on PostgreSQL: the kill lands in it, or in l.x or l.i1 on a fast
            // machine; any of them is mid-step with the server running.
            "--rows-l-i0",
            "200k",
            "--rows-l-i1",
            "10k",
            "--out",
            o,
        ],
        tmp.path(),
    );
    let steps = out.join("postgres.default/steps");
    wait_for(120, "postgres's l.i0", || {
        steps.join(".l.i0.series.csv.tmp").exists()
    });
    std::thread::sleep(Duration::from_millis(200));
    kill9(child);
    let j = journal(&out);
    let cell = &j["cells"][0];
    assert_eq!(cell["state"], "running", "{j}");
    let lease = &cell["servers"][0];
    assert!(
        lease["process"]["pid"].as_u64().is_some_and(|p| p > 0)
            && lease["process"]["start_ticks"]
                .as_u64()
                .is_some_and(|t| t > 0)
            && lease["datadir"]
                .as_str()
                .is_some_and(|d| d.contains("postgres.default")),
        "the journal names the running server by pid and start time: {j}"
    );
    let r = run(&["run", "--resume", o]);
    assert_eq!(r.status.code(), Some(0), "{}", text(&r));
    let c = cells(&out);
    assert!(c.iter().all(|x| x.1 == "done"), "{c:?}");
    let left = processes_using(tmp.path());
    assert!(left.is_empty(), "servers left running: {left:?}");
}

/// A finished null-target run whose first cell is made to look as a killed dbperf leaves it:
/// `running`, its runner gone, and `lease` as the server it had started.
fn killed_run_with_lease(out: &Path, lease: Value) {
    let o = run(&[
        "run",
        "--target",
        "null",
        "--steps",
        "l.i0",
        "--rows-l-i0",
        "1k",
        "--out",
        out.to_str().unwrap(),
        "--no-progress",
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    let mut j = journal(out);
    let c = &mut j["cells"][0];
    c["state"] = "running".into();
    // A runner that is not alive: the pid is beyond any pid_max.
    c["runner"] = serde_json::json!({"pid": 999_999_999u32, "start_ticks": 1, "boot_id": "x"});
    c["servers"] = serde_json::json!([lease]);
    std::fs::write(out.join("campaign.json"), j.to_string()).unwrap();
}

/// A process standing in for a server a killed dbperf left: the leader of its own process
/// group, as dbperf starts its servers, with the data directory `datadir` on its command line,
/// and not root (dbperf runs its servers as another user when it is root).
fn stand_in(datadir: &Path) -> Child {
    use std::os::unix::process::CommandExt;
    let mut c = std::process::Command::new("sh");
    c.args(["-c", "sleep 300; :", "sh"])
        .arg(datadir)
        .process_group(0);
    // SAFETY: getuid has no preconditions.
    if unsafe { libc::getuid() } == 0 {
        c.uid(65534);
    }
    c.spawn().expect("the stand-in starts")
}

/// The data directory a managed server of the null run's cell would have had.
fn cell_datadir(out: &Path) -> PathBuf {
    out.join("work/null.instant/server/data")
}

fn lease_of(child: &Child, start_ticks_offset: u64, datadir: &Path) -> Value {
    // Right after spawn the child may not have exec'd sh yet: wait until it has.
    let mut id = None;
    wait_for(5, "the stand-in running", || {
        id = dbperf::server::identity::Identity::of(child.id())
            .filter(|i| i.cmdline.first().is_some_and(|c| c.ends_with("sh")));
        id.is_some()
    });
    let id = id.unwrap();
    serde_json::json!({
        "process": {"pid": id.pid, "start_ticks": id.start_time_ticks + start_ticks_offset,
                    "boot_id": id.boot_id, "uid": id.uid, "cmdline": id.cmdline},
        "datadir": datadir
    })
}

/// Resume stops a server the journal names when it is still the same process (pid, start
/// time, boot, owner, command line) and was started on the cell's data directory, and redoes
/// the cell.
#[test]
fn resume_stops_the_server_a_killed_dbperf_left() {
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("r");
    let datadir = cell_datadir(&out);
    let mut server = stand_in(&datadir);
    killed_run_with_lease(&out, lease_of(&server, 0, &datadir));
    let r = run(&["run", "--resume", out.to_str().unwrap()]);
    let ended = (0..250).find_map(|_| {
        let w = server.try_wait().unwrap();
        if w.is_none() {
            std::thread::sleep(Duration::from_millis(20));
        }
        w
    });
    if ended.is_none() {
        let _ = server.kill();
        let _ = server.wait();
    }
    assert_eq!(r.status.code(), Some(0), "{}", text(&r));
    use std::os::unix::process::ExitStatusExt;
    assert_eq!(
        ended.and_then(|s| s.signal()),
        Some(libc::SIGKILL),
        "the leftover server was killed: {}",
        text(&r)
    );
    assert!(
        String::from_utf8_lossy(&r.stderr).contains("stopped a leftover server"),
        "{}",
        text(&r)
    );
    let c = cells(&out);
    assert_eq!((c[0].1.as_str(), c[0].2), ("done", 2), "{c:?}");
    assert!(journal(&out)["cells"][0]["servers"]
        .as_array()
        .unwrap()
        .is_empty());
}

/// A pid that now belongs to another process (another start time) is never signalled.
#[test]
fn resume_leaves_a_reused_pid_alone() {
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("r");
    let datadir = cell_datadir(&out);
    let mut other = stand_in(&datadir);
    killed_run_with_lease(&out, lease_of(&other, 1, &datadir));
    let r = run(&["run", "--resume", out.to_str().unwrap()]);
    let alive = other.try_wait().unwrap().is_none();
    let _ = other.kill();
    let _ = other.wait();
    assert_eq!(r.status.code(), Some(0), "{}", text(&r));
    assert!(alive, "a process that is not the server was signalled");
    assert!(
        !String::from_utf8_lossy(&r.stderr).contains("stopped a leftover server"),
        "{}",
        text(&r)
    );
    assert_eq!(cells(&out)[0].1, "done");
}

/// The cell numbers of the progress line are places in the whole plan, also when a resume
/// runs only some cells: here the two failed cells of four (2 targets x 2 repeats).
#[test]
fn a_resume_numbers_its_cells_by_their_place_in_the_plan() {
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("c");
    let o = out.to_str().unwrap();
    let first = run(&[
        "run",
        "--target",
        "null",
        "--target",
        "null:fail-at-50",
        "--repeats",
        "2",
        "--steps",
        "l.i0",
        "--rows-l-i0",
        "10k",
        "--out",
        o,
        "--no-progress",
    ]);
    assert_eq!(first.status.code(), Some(1), "{}", text(&first));
    let states: Vec<String> = cells(&out).into_iter().map(|c| c.1).collect();
    assert_eq!(states, ["done", "failed", "failed", "done"]);
    let r = run(&["run", "--resume", o]);
    assert_eq!(r.status.code(), Some(1), "{}", text(&r));
    let stderr = String::from_utf8_lossy(&r.stderr);
    let lines: Vec<&str> = stderr.lines().filter(|l| l.starts_with("cell ")).collect();
    assert_eq!(lines.len(), 2, "{stderr}");
    assert!(
        lines[0].starts_with("cell 2/4  null.fail-at-50 ibench  round 1/2"),
        "{stderr}"
    );
    assert!(
        lines[1].starts_with("cell 3/4  null.fail-at-50 ibench  round 2/2"),
        "{stderr}"
    );
}

/// A journal whose cell names a suite this dbperf does not know (a newer dbperf's) is refused
/// by the resume and the report with the reason, not as a schema error at a column.
#[test]
fn a_journal_of_an_unknown_suite_says_to_upgrade() {
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("c");
    let o = out.to_str().unwrap();
    let first = run(&[
        "run",
        "--target",
        "null",
        "--steps",
        "l.i0",
        "--rows-l-i0",
        "1k",
        "--out",
        o,
        "--no-progress",
    ]);
    assert_eq!(first.status.code(), Some(0), "{}", text(&first));
    let mut j = journal(&out);
    j["cells"][0]["suite"] = "tpcc\u{1b}[31m".into();
    std::fs::write(out.join("campaign.json"), j.to_string()).unwrap();
    for args in [vec!["run", "--resume", o], vec!["report", o]] {
        let r = run(&args);
        let err = String::from_utf8_lossy(&r.stderr);
        assert_eq!(r.status.code(), Some(2), "{args:?}: {err}");
        assert!(
            err.contains("names suite \"tpcc\\u{1b}[31m\", which this dbperf does not know"),
            "{args:?}: {err}"
        );
        assert!(err.contains("upgrade dbperf"), "{err}");
    }
}

/// A cell whose dbperf was killed and whose redo then failed still has its one retry.
#[test]
fn a_killed_attempt_does_not_use_up_the_retry_of_a_failure() {
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("c");
    let o = out.to_str().unwrap();
    // 20 ms per statement (100 rows each), failing at the 150th: each attempt fails about 3 s
    // in, long after the kill below.
    let child = spawn(
        &[
            "run",
            "--target",
            "null:sleep-20ms.fail-at-150",
            "--steps",
            "l.i0",
            "--rows-l-i0",
            "20k",
            "--out",
            o,
            "--no-progress",
        ],
        tmp.path(),
    );
    let step = out.join("null.sleep-20ms.fail-at-150/steps");
    wait_for(20, "l.i0 starting", || {
        step.join(".l.i0.series.csv.tmp").exists()
    });
    kill9(child);
    assert_eq!(cells(&out)[0].1, "running");
    // Redone from scratch: it fails.
    let r1 = run(&["run", "--resume", o]);
    assert_eq!(r1.status.code(), Some(1), "{}", text(&r1));
    assert_eq!(
        cells(&out)[0],
        ("null.sleep-20ms.fail-at-150".into(), "failed".into(), 2)
    );
    assert_eq!(journal(&out)["cells"][0]["failures"], 1);
    // Its one retry: the killed attempt did not count as a failure.
    let r2 = run(&["run", "--resume", o]);
    assert_eq!(r2.status.code(), Some(1), "{}", text(&r2));
    assert_eq!(cells(&out)[0].2, 3, "retried once");
    assert_eq!(journal(&out)["cells"][0]["failures"], 2);
    // And no more.
    let r3 = run(&["run", "--resume", o]);
    assert_eq!(r3.status.code(), Some(0), "{}", text(&r3));
    assert_eq!(cells(&out)[0].2, 3);
}

/// Resume reads dbperf.toml again: a cell defined differently than when the run started is
/// refused with one sentence naming the cell and what changed. A journal from before
/// fingerprints is accepted.
#[test]
fn a_resume_refuses_a_changed_definition() {
    let tmp = tempfile::tempdir().unwrap();
    let toml = tmp.path().join("dbperf.toml");
    let define = |rows: &str| {
        std::fs::write(
            &toml,
            format!(
                "[campaign.c]\ntargets = [\"null\", \"null:sleep-1us\"]\n\
                 [campaign.c.ibench]\nsteps = \"l.i0\"\nrows_l_i0 = \"{rows}\"\n"
            ),
        )
        .unwrap();
    };
    define("1k");
    let out = tmp.path().join("r");
    let o = out.to_str().unwrap();
    let first = run(&[
        "run",
        "--config-file",
        toml.to_str().unwrap(),
        "--campaign",
        "c",
        "--out",
        o,
    ]);
    assert_eq!(first.status.code(), Some(0), "{}", text(&first));
    let fp = &journal(&out)["cells"][0]["fingerprint"];
    assert_eq!(fp["ibench.rows_l_i0"], "1000", "{fp}");
    assert_eq!(fp["target.engine"], "null", "{fp}");
    // Unchanged: nothing to do.
    let same = run(&["run", "--resume", o]);
    assert_eq!(same.status.code(), Some(0), "{}", text(&same));
    define("2k");
    let changed = run(&["run", "--resume", o]);
    assert_eq!(changed.status.code(), Some(2), "{}", text(&changed));
    let err = String::from_utf8_lossy(&changed.stderr);
    assert!(
        err.contains("cell null.instant is defined differently")
            && err.contains("ibench.rows_l_i0 was 1000, now 2000"),
        "{err}"
    );
    assert_eq!(err.trim().lines().count(), 1, "one sentence: {err}");
    // An older journal, without fingerprints: accepted, and fingerprinted from now on.
    let mut j = journal(&out);
    for c in j["cells"].as_array_mut().unwrap() {
        c.as_object_mut().unwrap().remove("fingerprint");
    }
    std::fs::write(out.join("campaign.json"), j.to_string()).unwrap();
    let old = run(&["run", "--resume", o]);
    assert_eq!(old.status.code(), Some(0), "{}", text(&old));
    assert_eq!(
        journal(&out)["cells"][0]["fingerprint"]["ibench.rows_l_i0"],
        "2000"
    );
}

/// Starts `args` in `dir`, kills it once the first cell's l.i0 is under way, resumes it from `/`
/// and returns the finished journal.
fn killed_and_resumed(args: &[&str], dir: &Path, out: &Path) -> Value {
    let child = spawn(args, dir);
    let step = out.join("null.sleep-20ms/steps");
    wait_for(20, "the first cell's l.i0 starting", || {
        step.join(".l.i0.series.csv.tmp").exists()
    });
    kill9(child);
    assert_eq!(cells(out)[0].1, "running", "{:?}", cells(out));
    let r = dbperf()
        .args(["run", "--resume", out.to_str().unwrap()])
        .current_dir("/")
        .output()
        .unwrap();
    assert_eq!(r.status.code(), Some(0), "{args:?}: {}", text(&r));
    let after = cells(out);
    assert!(after.iter().all(|c| c.1 == "done"), "{after:?}");
    journal(out)
}

/// What the run was started with (--preset, --base, suite flags, a campaign) is what it is
/// resumed with, whatever the resuming command line says.
#[test]
fn a_run_started_with_preset_base_and_suite_flags_resumes_as_it_started() {
    let tmp = tempfile::tempdir().unwrap();
    let toml = tmp.path().join("dbperf.toml");
    // Each operation of the first target takes 20 ms: its l.i0 (100 statements) lasts 2 s.
    std::fs::write(
        &toml,
        "[campaign.c]\ntargets = [\"null:sleep-20ms\", \"null\"]\n\
         [campaign.c.ibench]\nsteps = \"l.i0,l.x\"\nrows_l_i0 = \"10k\"\n",
    )
    .unwrap();
    let out = tmp.path().join("campaign");
    let j = killed_and_resumed(
        &[
            "run",
            "--campaign",
            "c",
            "--preset",
            "short",
            "--base",
            "null.instant",
            "--out",
            out.to_str().unwrap(),
            "--no-progress",
        ],
        tmp.path(),
        &out,
    );
    assert_eq!(j["base"], "null.instant");
    for c in j["cells"].as_array().unwrap() {
        let fp = &c["fingerprint"];
        assert_eq!(fp["ibench.preset"], "short", "{fp}");
        assert_eq!(fp["ibench.rows_l_i0"], "10000", "{fp}");
    }

    let out = tmp.path().join("flags");
    let j = killed_and_resumed(
        &[
            "run",
            "--target",
            "null:sleep-20ms",
            "--target",
            "null",
            "--preset",
            "short",
            "--steps",
            "l.i0,l.x",
            "--rows-l-i0",
            "10k",
            "--base",
            "null.instant",
            "--out",
            "flags",
            "--no-progress",
        ],
        tmp.path(),
        &out,
    );
    assert_eq!(j["base"], "null.instant");
    for c in j["cells"].as_array().unwrap() {
        let fp = &c["fingerprint"];
        assert_eq!(fp["ibench.preset"], "short", "{fp}");
        assert_eq!(fp["ibench.rows_l_i0"], "10000", "{fp}");
        assert_eq!(fp["ibench.steps"], r#"["l.i0","l.x"]"#, "{fp}");
    }
}

/// Every campaign of the example files parses, its suite flags included, as far as the first
/// target's build, which an empty cache does not have: refused in one sentence that names it.
#[test]
fn the_example_campaigns_parse_up_to_their_builds() {
    let examples = Path::new(env!("CARGO_MANIFEST_DIR")).join("examples");
    let cases = [
        ("campaign-versions.toml", "pg-versions", "postgres 12"),
        ("campaign-versions.toml", "maria-versions", "mariadb 10.5"),
        (
            "campaign-mariadb-vs-mysql.toml",
            "mariadb-vs-mysql",
            "mariadb 10.5",
        ),
    ];
    let tmp = tempfile::tempdir().unwrap();
    for (file, campaign, first) in cases {
        let out = tmp.path().join(campaign);
        let o = run(&[
            "run",
            "--config-file",
            examples.join(file).to_str().unwrap(),
            "--campaign",
            campaign,
            "--cache-dir",
            tmp.path().join("empty").to_str().unwrap(),
            "--out",
            out.to_str().unwrap(),
        ]);
        assert_eq!(o.status.code(), Some(2), "{file} {campaign}: {}", text(&o));
        let err = String::from_utf8_lossy(&o.stderr);
        assert!(
            err.contains(&format!("{first} is not in the build cache")),
            "{file} {campaign}: {err}"
        );
        assert!(!out.exists(), "{file} {campaign}: nothing runs");
    }
}
