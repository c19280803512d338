//! Files dbperf did not just write are untrusted input (docs/security.md): the campaign journal
//! `--resume` reads back, the result files `report`, `history add` and `writeamp` read, config
//! files, and the run directory itself. Each test plants what an attacker (or a damaged disk)
//! could, runs the real binary with a deadline and an address-space limit, and checks that the
//! answer is one sentence (exit 2 where the input is the user's) and that nothing outside was
//! touched.

use crate::common;

use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::time::{Duration, Instant};

use common::*;
use serde_json::Value;

/// Every command here must end within this (a FIFO read would hang for ever).
const DEADLINE: Duration = Duration::from_secs(30);

/// The address space each command may use: /dev/zero read whole took dbperf past 3 GB; a
/// bounded reader stays far below.
const ADDRESS_SPACE: u64 = 2 << 30;

/// Runs dbperf with `args` in `cwd`, bounded in time and memory; panics on the deadline.
fn bounded(args: &[&str], cwd: &Path) -> Output {
    let mut c = dbperf();
    c.args(args)
        .current_dir(cwd)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    // SAFETY: setrlimit is async-signal-safe and touches no memory of the parent.
    unsafe {
        c.pre_exec(|| {
            let lim = libc::rlimit {
                rlim_cur: ADDRESS_SPACE,
                rlim_max: ADDRESS_SPACE,
            };
            if libc::setrlimit(libc::RLIMIT_AS, &lim) != 0 {
                return Err(std::io::Error::last_os_error());
            }
            Ok(())
        });
    }
    let child = c.spawn().expect("dbperf starts");
    wait_bounded(child, args)
}

fn wait_bounded(mut child: Child, args: &[&str]) -> Output {
    let start = Instant::now();
    loop {
        if child.try_wait().unwrap().is_some() {
            return child.wait_with_output().unwrap();
        }
        if start.elapsed() > DEADLINE {
            let _ = child.kill();
            let o = child.wait_with_output().unwrap();
            panic!(
                "dbperf {args:?} did not end within {DEADLINE:?}\n{}",
                text(&o)
            );
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// Exit 2 and one sentence on stderr, no panic.
fn one_sentence(o: &Output, expect: &str) -> String {
    let err = String::from_utf8_lossy(&o.stderr).to_string();
    assert_eq!(o.status.code(), Some(2), "{}", text(o));
    assert!(!err.contains("panicked"), "{err}");
    assert_eq!(err.trim_end().lines().count(), 1, "one sentence: {err}");
    assert!(err.contains(expect), "expected {expect:?} in {err}");
    err
}

fn mkfifo(p: &Path) {
    let c = std::ffi::CString::new(p.to_str().unwrap()).unwrap();
    // SAFETY: a valid C string and a mode.
    assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
}

/// A finished run of the hidden null target (milliseconds): its run directory.
fn null_run(tmp: &Path, name: &str) -> PathBuf {
    let out = tmp.join(name);
    let o = bounded(
        &[
            "run",
            "--target",
            "null",
            "--steps",
            "l.i0,l.x",
            "--rows-l-i0",
            "1k",
            "--out",
            out.to_str().unwrap(),
            "--no-progress",
        ],
        tmp,
    );
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    out
}

fn journal(out: &Path) -> Value {
    serde_json::from_str(&std::fs::read_to_string(out.join("campaign.json")).unwrap()).unwrap()
}

fn set_journal(out: &Path, j: &Value) {
    std::fs::write(out.join("campaign.json"), j.to_string()).unwrap();
}

/// The journal as a run killed in its only cell leaves it, with `edit` applied to that cell.
fn killed_in_cell(out: &Path, edit: impl FnOnce(&mut Value)) {
    let mut j = journal(out);
    let c = &mut j["cells"][0];
    c["state"] = "running".into();
    c["runner"] = Value::Null;
    edit(c);
    set_journal(out, &j);
}

fn resume(out: &Path, cwd: &Path) -> Output {
    bounded(
        &["run", "--resume", out.to_str().unwrap(), "--no-progress"],
        cwd,
    )
}

#[test]
fn resume_removes_nothing_a_tampered_journal_names_outside_the_run() {
    let tmp = tempfile::tempdir().unwrap();
    let out = null_run(tmp.path(), "r");
    let victim = tmp.path().join("victim");
    std::fs::create_dir_all(victim.join("work/null.instant")).unwrap();
    std::fs::write(victim.join("keep"), "x").unwrap();
    std::fs::write(victim.join("work/null.instant/keep"), "x").unwrap();
    let outside = victim.to_str().unwrap().to_string();
    let climbing = format!("{}/work/../../victim/work/null.instant", out.display());
    for work_dir in [
        outside.clone(),
        climbing,
        "relative/work/null.instant".into(),
    ] {
        killed_in_cell(&out, |c| c["work_dir"] = work_dir.clone().into());
        let o = resume(&out, tmp.path());
        one_sentence(&o, "the journal was edited");
        assert!(victim.join("keep").exists() && victim.join("work/null.instant/keep").exists());
    }
    // A cell id or target that climbs out is refused as a whole journal, by `report` too.
    for (field, bad) in [("id", "../victim"), ("target", "a/b"), ("id", "/etc")] {
        killed_in_cell(&out, |c| {
            c["work_dir"] = Value::Null;
            c["id"] = "null.instant".into();
            c["target"] = "null.instant".into();
            c[field] = bad.into();
        });
        one_sentence(&resume(&out, tmp.path()), "is not a plain directory name");
        let o = bounded(
            &["report", out.to_str().unwrap(), "--out", "rep"],
            tmp.path(),
        );
        one_sentence(&o, "is not a plain directory name");
        assert!(victim.join("keep").exists());
    }
    // The run's own work directory replaced by a link to the victim: nothing behind it is
    // removed, and the run does not go on over it.
    killed_in_cell(&out, |c| {
        c["id"] = "null.instant".into();
        c["target"] = "null.instant".into();
        c["work_dir"] = format!("{}/work/null.instant", out.display()).into();
    });
    let _ = std::fs::remove_dir_all(out.join("work"));
    std::os::unix::fs::symlink(victim.join("work"), out.join("work")).unwrap();
    one_sentence(&resume(&out, tmp.path()), "symbolic link");
    assert!(victim.join("work/null.instant/keep").exists());
}

/// The identity of a live process as the journal records one.
fn mark_of(pid: u32) -> Value {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap();
    let after = &stat[stat.rfind(')').unwrap() + 1..];
    let start: u64 = after.split_whitespace().nth(19).unwrap().parse().unwrap();
    let boot = std::fs::read_to_string("/proc/sys/kernel/random/boot_id").unwrap();
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap();
    let uid: u32 = status
        .lines()
        .find_map(|l| l.strip_prefix("Uid:"))
        .unwrap()
        .split_whitespace()
        .next()
        .unwrap()
        .parse()
        .unwrap();
    let cmdline: Vec<String> = std::fs::read(format!("/proc/{pid}/cmdline"))
        .unwrap()
        .split(|b| *b == 0)
        .filter(|a| !a.is_empty())
        .map(|a| String::from_utf8_lossy(a).into_owned())
        .collect();
    serde_json::json!({"pid": pid, "start_ticks": start, "boot_id": boot.trim(),
        "uid": uid, "cmdline": cmdline})
}

#[test]
fn resume_signals_no_process_a_tampered_journal_names() {
    let tmp = tempfile::tempdir().unwrap();
    let out = null_run(tmp.path(), "r");
    // An unrelated process in its own process group, as a server would be.
    let mut sleeper = Command::new("sleep")
        .arg("300")
        .process_group(0)
        .spawn()
        .unwrap();
    let pid = sleeper.id();
    let inside = format!("{}/work/null.instant/server/data", out.display());
    for (datadir, expect) in [
        (
            "/var/lib/postgresql".to_string(),
            "not inside the cell's work directory",
        ),
        // Inside the cell's work directory, but the process was not started on it (and runs
        // as root, where the tests run as root).
        (inside, "the journal was edited"),
    ] {
        for with_identity in [true, false] {
            let mut m = mark_of(pid);
            if !with_identity {
                // A journal from before owners and command lines were recorded.
                let o = m.as_object_mut().unwrap();
                o.remove("uid");
                o.remove("cmdline");
            }
            killed_in_cell(&out, |c| {
                c["servers"] = serde_json::json!([{"process": m, "datadir": datadir}]);
            });
            one_sentence(&resume(&out, tmp.path()), expect);
            assert!(
                sleeper.try_wait().unwrap().is_none(),
                "the unrelated process was signalled"
            );
        }
    }
    let _ = sleeper.kill();
    let _ = sleeper.wait();
}

/// Rewrites `<dir>/steps/l.i0.json`'s series_file.
fn point_series_at(dir: &Path, name: &str) {
    let p = dir.join("steps/l.i0.json");
    let mut v: Value = serde_json::from_str(&std::fs::read_to_string(&p).unwrap()).unwrap();
    v["series_file"] = name.into();
    std::fs::write(&p, v.to_string()).unwrap();
}

#[test]
fn a_series_file_that_is_not_a_plain_regular_file_is_left_out_in_bounded_time() {
    let tmp = tempfile::tempdir().unwrap();
    let out = null_run(tmp.path(), "r");
    let dir = out.join("null.instant");
    let steps = dir.join("steps");
    // A file outside the result directory, and what a planted name could stand for.
    std::fs::write(tmp.path().join("x.csv"), "second,interval_s\n1,1\n").unwrap();
    mkfifo(&steps.join("fifo.csv"));
    std::os::unix::fs::symlink("/dev/zero", steps.join("zero.csv")).unwrap();
    std::os::unix::fs::symlink(tmp.path().join("x.csv"), steps.join("link.csv")).unwrap();
    let cases = [
        ("/dev/zero", "not a plain file name"),
        ("../../../x.csv", "not a plain file name"),
        ("fifo.csv", "is a FIFO"),
        ("zero.csv", "symbolic link"),
        ("link.csv", "symbolic link"),
    ];
    for (i, (name, why)) in cases.iter().enumerate() {
        point_series_at(&dir, name);
        let rep = tmp.path().join(format!("rep{i}"));
        let o = bounded(
            &[
                "report",
                dir.to_str().unwrap(),
                "--out",
                rep.to_str().unwrap(),
                "--format",
                "md",
            ],
            tmp.path(),
        );
        assert_eq!(o.status.code(), Some(0), "{name}: {}", text(&o));
        let md = std::fs::read_to_string(rep.join("report.md")).unwrap();
        let line = md
            .lines()
            .find(|l| l.contains("no per-second series for step l.i0"))
            .unwrap_or_else(|| panic!("{name}: no warning in\n{md}"));
        assert!(line.contains(why), "{name}: {line}");
        let db = tmp.path().join(format!("h{i}.db"));
        let o = bounded(
            &[
                "history",
                "add",
                "--db",
                db.to_str().unwrap(),
                dir.to_str().unwrap(),
            ],
            tmp.path(),
        );
        assert_eq!(o.status.code(), Some(0), "{name}: {}", text(&o));
        let said = String::from_utf8_lossy(&o.stdout);
        let line = said
            .lines()
            .find(|l| l.contains("l.i0: per-second series left out"))
            .unwrap_or_else(|| panic!("{name}: {said}"));
        assert!(line.contains(why), "{name}: {line}");
    }
}

#[test]
fn result_files_that_are_fifos_devices_or_links_are_refused_in_bounded_time() {
    let tmp = tempfile::tempdir().unwrap();
    let out = null_run(tmp.path(), "r");
    let dir = out.join("null.instant");
    // writeamp on a FIFO given as a step file.
    let fifo = tmp.path().join("step.json");
    mkfifo(&fifo);
    one_sentence(
        &bounded(&["writeamp", fifo.to_str().unwrap()], tmp.path()),
        "is a FIFO",
    );
    // A step file replaced by a FIFO: report and history leave the step out or refuse it.
    std::fs::remove_file(dir.join("steps/l.x.json")).unwrap();
    mkfifo(&dir.join("steps/l.x.json"));
    let o = bounded(
        &[
            "report",
            dir.to_str().unwrap(),
            "--out",
            "rep",
            "--format",
            "md",
        ],
        tmp.path(),
    );
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    let md = std::fs::read_to_string(tmp.path().join("rep/report.md")).unwrap();
    assert!(
        md.contains("step l.x left out") && md.contains("is a FIFO"),
        "{md}"
    );
    one_sentence(
        &bounded(
            &["history", "add", "--db", "h.db", dir.to_str().unwrap()],
            tmp.path(),
        ),
        "is a FIFO",
    );
    // run.json a link to /dev/zero: writeamp, report and history refuse it.
    std::fs::rename(dir.join("run.json"), dir.join("run.json.real")).unwrap();
    std::os::unix::fs::symlink("/dev/zero", dir.join("run.json")).unwrap();
    for args in [
        vec!["writeamp", dir.to_str().unwrap()],
        vec!["report", dir.to_str().unwrap(), "--out", "rep2"],
        vec!["history", "add", "--db", "h2.db", dir.to_str().unwrap()],
    ] {
        one_sentence(&bounded(&args, tmp.path()), "symbolic link");
    }
    // A step name in run.json that climbs out of the directory.
    std::fs::remove_file(dir.join("run.json")).unwrap();
    let mut run: Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("run.json.real")).unwrap()).unwrap();
    run["steps_planned"] = serde_json::json!(["../../../../etc/passwd"]);
    std::fs::write(dir.join("run.json"), run.to_string()).unwrap();
    one_sentence(
        &bounded(
            &["report", dir.to_str().unwrap(), "--out", "rep3"],
            tmp.path(),
        ),
        "is not a plain file name",
    );
}

#[test]
fn a_config_file_that_is_not_a_config_is_refused_without_quoting_it() {
    let tmp = tempfile::tempdir().unwrap();
    let t = tmp.path();
    let secret = "SECRETVALUE-7f3a";
    std::fs::write(
        t.join("shadow"),
        format!("root:{secret}:19000:0:99999:7:::\nbin:*:19000:0:99999:7:::\n"),
    )
    .unwrap();
    // Shaped like settings, but not SQLite's: the line is named, not quoted.
    std::fs::write(t.join("tokens"), format!("{secret}\n")).unwrap();
    std::fs::write(t.join("keyvalue"), format!("journal_mode = {secret}!\n")).unwrap();
    mkfifo(&t.join("fifo"));
    for (file, expect) in [
        ("shadow", "line 1 of"),
        ("tokens", "line 1: not a SQLite pragma"),
        (
            "keyvalue",
            "line 1: pragma journal_mode needs a plain value",
        ),
        ("/dev/zero", "is a device"),
        ("fifo", "is a FIFO"),
    ] {
        std::fs::write(
            t.join("dbperf.toml"),
            format!("[config.x]\nengine = \"sqlite\"\nfile = \"{file}\"\n"),
        )
        .unwrap();
        let o = bounded(
            &["run", "--target", "sqlite:x", "--out", "o", "--no-progress"],
            t,
        );
        let err = one_sentence(&o, expect);
        assert!(!err.contains(secret), "{err}");
        assert!(!t.join("o").exists(), "nothing ran");
    }
    for file in ["/dev/zero", "fifo", "shadow"] {
        let o = bounded(&["run", "--config-file", file, "--out", "o"], t);
        let err = one_sentence(&o, file);
        assert!(!err.contains(secret), "{err}");
    }
    // TOML that parses, with a value where a table should be: the value is not quoted.
    std::fs::write(t.join("v.toml"), format!("config = \"{secret}\"\n")).unwrap();
    let err = one_sentence(
        &bounded(&["run", "--config-file", "v.toml", "--out", "o"], t),
        "not a valid dbperf config file",
    );
    assert!(!err.contains(secret), "{err}");
}

/// `file = "/proc/self/environ"` once passed the config reader (procfs files count as regular,
/// and its one line of NUL-separated NAME=value pairs looked like a setting): root's
/// environment landed in run.json and the reports.
#[test]
fn a_kernel_file_or_a_control_character_is_no_config() {
    let tmp = tempfile::tempdir().unwrap();
    let t = tmp.path();
    let secret = "SECRETVALUE-env-91c2";
    std::fs::write(t.join("nul.cnf"), "shared_buffers = 1\0GB\n").unwrap();
    std::fs::write(t.join("esc.cnf"), "log_line_prefix = '\x1b[2J'\n").unwrap();
    for (engine, file, expect) in [
        ("postgres", "/proc/self/environ", "kernel interface"),
        ("mariadb", "/proc/self/environ", "kernel interface"),
        ("sqlite", "/proc/self/environ", "kernel interface"),
        (
            "postgres",
            "/sys/kernel/mm/transparent_hugepage/enabled",
            "kernel interface",
        ),
        ("postgres", "nul.cnf", "line 1 of"),
        ("mariadb", "esc.cnf", "line 1 of"),
    ] {
        if !Path::new(file).exists() && file.starts_with('/') {
            continue;
        }
        std::fs::write(
            t.join("dbperf.toml"),
            format!("[config.x]\nengine = \"{engine}\"\nfile = \"{file}\"\n"),
        )
        .unwrap();
        let o = dbperf()
            .args([
                "run",
                "--target",
                &format!("{engine}:x"),
                "--out",
                "o",
                "--no-progress",
            ])
            .current_dir(t)
            .env("DBPERF_TEST_SECRET", secret)
            .output()
            .unwrap();
        let err = one_sentence(&o, expect);
        assert!(!err.contains(secret), "{err}");
        assert!(!t.join("o").exists(), "nothing ran");
    }
    // Inline text with a control character.
    std::fs::write(
        t.join("dbperf.toml"),
        "[config.x]\nengine = \"postgres\"\ntext = \"work_mem = '\\u001b[31m'\"\n",
    )
    .unwrap();
    let o = bounded(
        &[
            "run",
            "--target",
            "postgres:x",
            "--out",
            "o",
            "--no-progress",
        ],
        t,
    );
    one_sentence(&o, "control character");
}

#[test]
fn durations_past_their_bound_are_one_sentence_not_a_panic() {
    let tmp = tempfile::tempdir().unwrap();
    let t = tmp.path();
    let huge = "18446744073709551615";
    for flag in ["--pause-between", "--server-start-timeout"] {
        let o = bounded(&["run", "--target", "null", flag, huge, "--out", "o"], t);
        assert_eq!(o.status.code(), Some(2), "{}", text(&o));
        assert!(!String::from_utf8_lossy(&o.stderr).contains("panicked"));
    }
    for flag in ["--wait-seconds", "--query-seconds"] {
        one_sentence(
            &bounded(&["run", "--target", "null", flag, huge, "--out", "o"], t),
            "the most dbperf takes",
        );
    }
    one_sentence(
        &bounded(
            &[
                "run",
                "--suite",
                "sysbench",
                "--target",
                "null",
                "--warmup-seconds",
                huge,
                "--out",
                "o",
            ],
            t,
        ),
        "--warmup-seconds",
    );
    std::fs::write(
        t.join("dbperf.toml"),
        format!("[campaign.c]\ntargets = [\"null\", \"null:sleep-1us\"]\npause_between = {huge}\n"),
    )
    .unwrap();
    one_sentence(
        &bounded(&["run", "--campaign", "c", "--out", "o"], t),
        "pause_between",
    );
    assert!(!t.join("o").exists());
}

#[test]
fn a_second_run_on_the_same_out_is_refused_and_the_first_completes_intact() {
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("r");
    let o = out.to_str().unwrap();
    // Two seconds of l.i0 (100 statements of 20 ms).
    let first = dbperf()
        .args([
            "run",
            "--target",
            "null:sleep-20ms",
            "--steps",
            "l.i0",
            "--rows-l-i0",
            "10k",
            "--out",
            o,
            "--no-progress",
        ])
        .current_dir(tmp.path())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let start = Instant::now();
    while !out.join("campaign.json").exists() {
        assert!(start.elapsed() < DEADLINE, "the first run never began");
        std::thread::sleep(Duration::from_millis(10));
    }
    for args in [
        vec!["run", "--target", "null", "--out", o, "--no-progress"],
        vec!["run", "--resume", o, "--no-progress"],
    ] {
        let second = bounded(&args, tmp.path());
        one_sentence(&second, "is running in");
    }
    let done = wait_bounded(first, &["first run"]);
    assert_eq!(done.status.code(), Some(0), "{}", text(&done));
    let (run, steps) = read_all(&out.join("null.sleep-20ms"));
    assert_eq!(run.status, "ok");
    assert_eq!(steps.len(), 1);
    assert!(out.join("null.sleep-20ms/steps/l.i0.series.csv").is_file());
    assert_eq!(journal(&out)["cells"][0]["state"], "done");
}

#[test]
fn a_history_db_that_is_not_sqlite_and_a_work_dir_that_is_a_file_are_bad_input() {
    let tmp = tempfile::tempdir().unwrap();
    let t = tmp.path();
    std::fs::write(
        t.join("notsqlite"),
        "this is not a database, just some text\n".repeat(200),
    )
    .unwrap();
    let out = null_run(t, "r");
    one_sentence(
        &bounded(
            &["history", "add", "--db", "notsqlite", out.to_str().unwrap()],
            t,
        ),
        "is not an SQLite database",
    );
    one_sentence(
        &bounded(&["history", "changes", "--db", "notsqlite"], t),
        "is not an SQLite database",
    );
    mkfifo(&t.join("fifo.db"));
    one_sentence(
        &bounded(
            &["history", "add", "--db", "fifo.db", out.to_str().unwrap()],
            t,
        ),
        "not a regular file",
    );
    std::fs::write(t.join("afile"), "x").unwrap();
    one_sentence(
        &bounded(
            &[
                "run",
                "--target",
                "sqlite",
                "--work-dir",
                "afile",
                "--out",
                "w",
                "--no-progress",
            ],
            t,
        ),
        "is not a directory",
    );
    assert_eq!(std::fs::read_to_string(t.join("afile")).unwrap(), "x");
}

/// Records that drive an action are obeyed only when the user running dbperf wrote them
/// (docs/security.md, "Records that drive an action"): the journal `--resume` would run again,
/// and the host settings state it would put back, owned by `nobody` (who could have written
/// anything in them) or writable by others, are one sentence and exit 2, and nothing of them is
/// acted on; a report still reads the same journal, as the untrusted input results are.
#[test]
fn resume_obeys_only_records_the_user_running_it_wrote() {
    if !is_root() {
        eprintln!("skipped: giving a file to another user needs root");
        return;
    }
    let nobody = dbperf::server::process::lookup_user("nobody").expect("a user nobody");
    let give = |p: &Path, uid: u32| std::os::unix::fs::chown(p, Some(uid), None).unwrap();
    let tmp = tempfile::tempdir().unwrap();
    let out = null_run(tmp.path(), "r");
    let journal_file = out.join("campaign.json");
    // Killed in its cell: a resume would run it again.
    killed_in_cell(&out, |_| {});
    let before = std::fs::read_to_string(&journal_file).unwrap();
    give(&journal_file, nobody.uid);
    let err = one_sentence(&resume(&out, tmp.path()), "belongs to nobody, not to root");
    assert!(
        err.contains("a campaign's journal decides what dbperf does"),
        "{err}"
    );
    assert_eq!(std::fs::read_to_string(&journal_file).unwrap(), before);
    let o = bounded(
        &["report", out.to_str().unwrap(), "--out", "rep"],
        tmp.path(),
    );
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    give(&journal_file, 0);
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&journal_file, std::fs::Permissions::from_mode(0o646)).unwrap();
    one_sentence(&resume(&out, tmp.path()), "can be written by other users");
    std::fs::set_permissions(&journal_file, std::fs::Permissions::from_mode(0o644)).unwrap();
    // The state of host settings a killed run left, which a resume puts back as root.
    let state = out.join(".host-axes.json");
    std::fs::write(&state, "{\"schema\": 1, \"entries\": []}").unwrap();
    give(&state, nobody.uid);
    let err = one_sentence(&resume(&out, tmp.path()), "belongs to nobody, not to root");
    assert!(
        err.contains("the saved host settings decides what dbperf does"),
        "{err}"
    );
    assert!(state.exists());
    assert_eq!(std::fs::read_to_string(&journal_file).unwrap(), before);
}
