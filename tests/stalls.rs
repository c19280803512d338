//! A server that stops answering, a connection thread that panics: dbperf fails the step with
//! one sentence in bounded time, keeps the finished steps, exits 1 and stops its server. The
//! run-loop cases use the hidden `null` target; one case stops a real managed PostgreSQL.

use crate::common;

use std::path::Path;
use std::process::{Child, Output, Stdio};
use std::time::{Duration, Instant};

use common::*;

/// Runs dbperf, killing it after `secs` (a hang fails the test instead of hanging it).
fn run_within(args: &[&str], secs: u64) -> (Output, Duration) {
    let start = Instant::now();
    let child = dbperf()
        .args(args)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("dbperf starts");
    let out = wait_within(child, secs);
    (out, start.elapsed())
}

fn wait_within(mut child: Child, secs: u64) -> Output {
    let start = Instant::now();
    while child.try_wait().unwrap().is_none() {
        if start.elapsed() > Duration::from_secs(secs) {
            let _ = child.kill();
            let o = child.wait_with_output().unwrap();
            panic!("dbperf did not end within {secs} s\n{}", text(&o));
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    child.wait_with_output().unwrap()
}

fn step_json(cell: &Path, step: &str) -> serde_json::Value {
    let p = cell.join("steps").join(format!("{step}.json"));
    serde_json::from_str(&std::fs::read_to_string(&p).unwrap_or_else(|e| panic!("{p:?}: {e}")))
        .unwrap()
}

#[test]
fn a_stalled_statement_fails_its_step_after_the_statement_timeout() {
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("r");
    // 100 inserts in l.i0, l.x's index builds, then the 105th operation gets no answer.
    let (o, took) = run_within(
        &[
            "run",
            "--target",
            "null:stall-at-105",
            "--steps",
            "l.i0,l.x,l.i1",
            "--rows-l-i0",
            "10k",
            "--rows-l-i1",
            "10k",
            "--statement-timeout",
            "2",
            "--out",
            out.to_str().unwrap(),
            "--no-progress",
        ],
        60,
    );
    assert_eq!(o.status.code(), Some(1), "{}", text(&o));
    assert!(took < Duration::from_secs(30), "took {took:?}");
    let cell = out.join("null.stall-at-105");
    assert_eq!(step_json(&cell, "l.i0")["status"], "ok");
    assert_eq!(step_json(&cell, "l.x")["status"], "ok");
    let failed = step_json(&cell, "l.i1");
    assert_eq!(failed["status"], "failed");
    let e = failed["error"].as_str().unwrap();
    assert!(
        e.contains("the server did not answer within 2 s (--statement-timeout)"),
        "{e}"
    );
}

#[test]
fn a_step_stuck_where_no_deadline_reaches_is_failed_by_the_watchdog() {
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("r");
    // The 105th operation blocks for an hour and the target stops answering.
    let (o, took) = run_within(
        &[
            "run",
            "--target",
            "null:hang-at-105",
            "--steps",
            "l.i0,l.x,l.i1",
            "--rows-l-i0",
            "10k",
            "--rows-l-i1",
            "10k",
            "--statement-timeout",
            "2",
            "--out",
            out.to_str().unwrap(),
            "--no-progress",
        ],
        60,
    );
    assert_eq!(o.status.code(), Some(1), "{}", text(&o));
    assert!(took < Duration::from_secs(30), "took {took:?}");
    let cell = out.join("null.hang-at-105");
    assert_eq!(step_json(&cell, "l.x")["status"], "ok");
    let failed = step_json(&cell, "l.i1");
    assert_eq!(failed["status"], "failed");
    let e = failed["error"].as_str().unwrap();
    assert!(e.starts_with("the server stopped answering"), "{e}");
}

#[test]
fn an_operation_stuck_while_the_target_answers_is_failed_by_the_watchdog() {
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("r");
    // The 105th operation blocks for an hour, and the target keeps answering new connections
    // (as a server whose fresh backends answer while the step's are stuck).
    let (o, took) = run_within(
        &[
            "run",
            "--target",
            "null:wedge-at-105",
            "--steps",
            "l.i0,l.x,l.i1",
            "--rows-l-i0",
            "10k",
            "--rows-l-i1",
            "10k",
            "--statement-timeout",
            "2",
            "--out",
            out.to_str().unwrap(),
            "--no-progress",
        ],
        60,
    );
    assert_eq!(o.status.code(), Some(1), "{}", text(&o));
    // The limit (2 s + 5 s) and the wait for the stuck connection (2 s): far from an hour.
    assert!(took < Duration::from_secs(40), "took {took:?}");
    let cell = out.join("null.wedge-at-105");
    assert_eq!(step_json(&cell, "l.i0")["status"], "ok");
    assert_eq!(step_json(&cell, "l.x")["status"], "ok");
    let failed = step_json(&cell, "l.i1");
    assert_eq!(failed["status"], "failed");
    let e = failed["error"].as_str().unwrap();
    assert!(
        e.starts_with(
            "the step made no progress: an operation has been under way for 7 s without \
             finishing (--statement-timeout, plus 5 s)"
        ),
        "{e}"
    );
}

#[test]
fn a_panic_in_a_connection_thread_fails_the_step_like_an_error() {
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("r");
    let (o, took) = run_within(
        &[
            "run",
            "--target",
            "null:panic-at-105",
            "--steps",
            "l.i0,l.x,l.i1",
            "--rows-l-i0",
            "10k",
            "--rows-l-i1",
            "10k",
            "--out",
            out.to_str().unwrap(),
            "--no-progress",
        ],
        60,
    );
    assert_eq!(o.status.code(), Some(1), "{}", text(&o));
    assert!(took < Duration::from_secs(30), "took {took:?}");
    let cell = out.join("null.panic-at-105");
    assert_eq!(step_json(&cell, "l.i0")["status"], "ok");
    assert_eq!(step_json(&cell, "l.x")["status"], "ok");
    let failed = step_json(&cell, "l.i1");
    assert_eq!(failed["status"], "failed");
    let e = failed["error"].as_str().unwrap();
    assert!(
        e.contains("panicked: null target: scripted panic at operation 105"),
        "{e}"
    );
    let run: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(cell.join("run.json")).unwrap()).unwrap();
    assert_eq!(run["status"], "failed");
}

/// The pid of the managed server of a running cell, once its run.json names it.
fn server_pid(cell: &Path) -> Option<i32> {
    let run: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(cell.join("run.json")).ok()?).ok()?;
    run["target"]["server"]["pid"].as_i64().map(|p| p as i32)
}

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

/// The server and its children (PostgreSQL's backends each start their own session, so the
/// postmaster's process group is the postmaster alone).
fn server_tree(pid: i32) -> Vec<i32> {
    let mut out = vec![pid];
    for e in std::fs::read_dir("/proc").unwrap().flatten() {
        let Ok(child) = e.file_name().to_string_lossy().parse::<i32>() else {
            continue;
        };
        let stat = std::fs::read_to_string(e.path().join("stat")).unwrap_or_default();
        // The ppid is the second field after the command's closing parenthesis.
        let ppid = stat
            .rsplit_once(')')
            .and_then(|(_, rest)| rest.split_whitespace().nth(1))
            .and_then(|p| p.parse::<i32>().ok());
        if ppid == Some(pid) {
            out.push(child);
        }
    }
    out
}

fn signal_all(pids: &[i32], sig: i32) {
    for &p in pids {
        // SAFETY: kill has no memory-safety preconditions.
        unsafe { libc::kill(p, sig) };
    }
}

/// Kills dbperf and its server's process group if the test ends early, so a failing test leaves
/// nothing running.
struct Guard {
    child: Option<Child>,
    server: Vec<i32>,
}

impl Drop for Guard {
    fn drop(&mut self) {
        signal_all(&self.server, libc::SIGCONT);
        signal_all(&self.server, libc::SIGKILL);
        if let Some(c) = self.child.as_mut() {
            let _ = c.kill();
            let _ = c.wait();
        }
    }
}

#[test]
fn a_stopped_postgres_fails_the_step_and_is_then_shut_down() {
    if !postgres() {
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("r");
    let child = dbperf()
        .args([
            "run",
            "--target",
            "postgres",
            "--steps",
            "l.i0,l.x,l.i1",
            "--rows-l-i0",
            "10k",
            "--rows-l-i1",
            "50M",
            "--statement-timeout",
            "3",
            "--out",
            out.to_str().unwrap(),
            "--no-progress",
        ])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut guard = Guard {
        child: Some(child),
        server: Vec::new(),
    };
    let cell = out.join("postgres.default");
    wait_for(120, "l.x ended", || cell.join("steps/l.x.json").exists());
    let pid = server_pid(&cell).expect("run.json names the server's pid");
    guard.server = server_tree(pid);
    let datadir = {
        let run: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(cell.join("run.json")).unwrap()).unwrap();
        run["target"]["server"]["datadir"]
            .as_str()
            .unwrap()
            .to_string()
    };
    std::thread::sleep(Duration::from_millis(500));
    // The whole server (postmaster and backends) stops, as a hung host would.
    let tree = server_tree(pid);
    assert!(tree.len() > 2, "{tree:?}");
    signal_all(&tree, libc::SIGSTOP);
    let stopped = Instant::now();
    wait_for(60, "l.i1 failed", || cell.join("steps/l.i1.json").exists());
    let to_fail = stopped.elapsed();
    // Left stopped: dbperf continues the server when it stops it, so the run ends well before
    // the 120 s stop timeout.
    let o = wait_within(guard.child.take().unwrap(), 180);
    let to_end = stopped.elapsed() - to_fail;
    guard.server.clear();
    assert_eq!(o.status.code(), Some(1), "{}", text(&o));
    assert!(to_fail < Duration::from_secs(30), "{to_fail:?}");
    assert!(
        to_end < Duration::from_secs(60),
        "the stopped server took {to_end:?} to stop"
    );
    assert_eq!(step_json(&cell, "l.i0")["status"], "ok");
    assert_eq!(step_json(&cell, "l.x")["status"], "ok");
    let failed = step_json(&cell, "l.i1");
    assert_eq!(failed["status"], "failed");
    let e = failed["error"].as_str().unwrap();
    assert!(
        e.contains("the server did not answer within 3 s (--statement-timeout)"),
        "{e}"
    );
    // A stopped server writes nothing: the step's part of its log is empty, and its start-up
    // lines are not quoted for it.
    assert!(
        e.contains("the server wrote nothing to its log during the step"),
        "{e}"
    );
    assert!(!e.contains("ready to accept connections"), "{e}");
    assert!(
        e.contains("the server's state at the stall was not read: it did not answer"),
        "{e}"
    );
    // What could not be taken says why, by type: the end snapshot, not a counter.
    let dbms = &failed["dbms"];
    assert_eq!(dbms["missing"]["at"], "end", "{dbms}");
    assert_eq!(dbms["missing"]["why"], "no_answer", "{dbms}");
    let notes = dbms["write_amplification"]["notes"].to_string();
    assert!(notes.contains("not read at the step's end"), "{notes}");
    assert!(!notes.contains("does not exist"), "{notes}");
    assert!(
        failed["warnings"]
            .to_string()
            .contains("status reports were not read"),
        "{}",
        failed["warnings"]
    );
    assert!(
        processes_using(Path::new(&datadir)).is_empty(),
        "{:?}",
        processes_using(Path::new(&datadir))
    );
}
