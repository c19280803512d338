//! What a failed step records, on real managed servers: a step made to stall on purpose (another
//! session holds a lock the step's inserts wait on, past --statement-timeout) fails with a cause
//! naming the lock and the holding session, and still gets its DBMS counters and the engine's
//! status reports; the server's state at the stall is written beside it; the log it quotes is
//! only what the server wrote during the step, never its start-up lines.

use crate::common;

use std::path::{Path, PathBuf};
use std::process::{Child, Stdio};
use std::time::{Duration, Instant};

use common::*;
use dbperf::dbms::{Conn, Dbms, Endpoint, Transport};

fn json(p: &Path) -> serde_json::Value {
    serde_json::from_str(&std::fs::read_to_string(p).unwrap_or_else(|e| panic!("{p:?}: {e}")))
        .unwrap()
}

fn wait_for(secs: u64, what: &str, child: &mut Child, mut cond: impl FnMut() -> bool) {
    let start = Instant::now();
    while !cond() {
        if let Ok(Some(st)) = child.try_wait() {
            panic!("dbperf ended ({st}) before {what}");
        }
        assert!(
            start.elapsed() < Duration::from_secs(secs),
            "{what} did not happen within {secs} s"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// Kills dbperf if the test ends early; dbperf stops its own server when killed this way only
/// through its leftover sweep, so a failing test may leave one for the next run's sweep.
struct Kill(Option<Child>);

impl Drop for Kill {
    fn drop(&mut self) {
        if let Some(c) = self.0.as_mut() {
            let _ = c.kill();
            let _ = c.wait();
        }
    }
}

/// The file named `name` somewhere below `dir`.
fn find(dir: &Path, name: &str) -> Option<PathBuf> {
    for e in std::fs::read_dir(dir).ok()?.flatten() {
        let p = e.path();
        if p.file_name().is_some_and(|n| n == name) && p.is_file() {
            return Some(p);
        }
        if p.is_dir() && !p.is_symlink() {
            if let Some(f) = find(&p, name) {
                return Some(f);
            }
        }
    }
    None
}

/// The managed server of a running cell as a client reaches it: its TCP port from run.json and
/// its password from the instance directory in the kept work directory.
fn endpoint(cell: &Path, work: &Path, user: &str) -> Endpoint {
    let run = json(&cell.join("run.json"));
    let conn = run["target"]["server"]["connection"].as_str().unwrap();
    let port: u16 = conn
        .split_whitespace()
        .nth(1)
        .and_then(|a| a.rsplit_once(':'))
        .and_then(|(_, p)| p.parse().ok())
        .unwrap_or_else(|| panic!("no port in {conn}"));
    let password = std::fs::read_to_string(find(work, "password").expect("a password file"))
        .unwrap()
        .trim()
        .to_string();
    Endpoint {
        transport: Transport::Tcp {
            host: "127.0.0.1".into(),
            port,
        },
        user: user.into(),
        password: Some(password),
        database: "ib".into(),
    }
}

/// How one engine is made to stall: the session holding the lock and its id.
struct Engine<'a> {
    target: &'a str,
    config: &'a str,
    user: &'a str,
    open: fn(Endpoint) -> Box<dyn Dbms>,
    /// Takes the lock l.i1's inserts and deletes wait for; returns the session's id.
    hold: fn(&mut dyn Conn) -> i64,
    /// A line of the server's start-up, which no quoted excerpt may hold.
    start_up_line: &'a str,
}

fn stalls_on_a_held_lock(e: Engine) {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    std::fs::write(dir.join("stall.conf"), e.config).unwrap();
    let (engine, _) = e.target.split_once(':').unwrap();
    std::fs::write(
        dir.join("dbperf.toml"),
        format!("[config.stall]\nengine = \"{engine}\"\nfile = \"stall.conf\"\n"),
    )
    .unwrap();
    let child = dbperf()
        .current_dir(dir)
        .args([
            "run",
            "--target",
            e.target,
            "--steps",
            "l.i0,l.x,l.i1",
            "--rows-l-i0",
            "10k",
            "--rows-l-i1",
            "50M",
            "--statement-timeout",
            "3",
            "--work-dir",
            "w",
            "--out",
            "r",
            "--no-progress",
        ])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut child = Kill(Some(child));
    let cell = dir.join("r").join(e.target.replace(':', "."));
    let c = child.0.as_mut().unwrap();
    wait_for(180, "l.x ended", c, || cell.join("steps/l.x.json").exists());
    let target = (e.open)(endpoint(&cell, &dir.join("w"), e.user));
    let mut holder = target.connect().expect("a session of the test's own");
    let holder_id = (e.hold)(&mut *holder);
    wait_for(120, "l.i1 failed", c, || {
        cell.join("steps/l.i1.json").exists()
    });
    drop(holder);
    let o = child.0.take().unwrap().wait_with_output().unwrap();
    assert_eq!(o.status.code(), Some(1), "{}", text(&o));

    let step = json(&cell.join("steps/l.i1.json"));
    assert_eq!(step["status"], "failed");
    let error = step["error"].as_str().unwrap();
    assert!(error.contains("(--statement-timeout)"), "{error}");
    // The cause names the lock and the session holding it.
    assert!(
        error.contains("likely cause: a lock wait: session "),
        "{error}"
    );
    assert!(
        error.contains(&format!("that session {holder_id} (")),
        "{error}"
    );
    assert!(error.contains("l.i1.stall.txt"), "{error}");
    let stall = std::fs::read_to_string(cell.join("steps/l.i1.stall.txt")).unwrap();
    assert!(stall.contains("== lock_waits"), "{stall}");
    // The log quoted is the step's part: never the start-up.
    assert!(!error.contains(e.start_up_line), "{error}");
    assert!(
        error.contains("the server wrote nothing to its log during the step")
            || error.contains("the server's log during the step ("),
        "{error}"
    );
    // The failed step has its counters and the engine's status reports.
    let dbms = &step["dbms"];
    assert!(dbms.get("missing").is_none(), "{dbms}");
    assert!(
        dbms["end"].as_object().is_some_and(|m| !m.is_empty()),
        "{dbms}"
    );
    assert!(
        dbms["delta"].as_object().is_some_and(|m| !m.is_empty()),
        "{dbms}"
    );
    let files: Vec<String> = step["diagnostics"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f.as_str().unwrap().to_string())
        .collect();
    assert!(files.contains(&"l.i1.stall.txt".to_string()), "{files:?}");
    for f in &files {
        assert!(cell.join("steps").join(f).is_file(), "{f}");
    }
    let run = json(&cell.join("run.json"));
    assert_eq!(run["failed_step"], "l.i1");
    assert!(!run["error"].as_str().unwrap().contains(e.start_up_line));
    assert!(
        files
            .iter()
            .any(|f| f.ends_with("global_status.txt") || f.ends_with("pg_stat_database.txt")),
        "the engine's status reports: {files:?}"
    );
}

#[test]
fn a_postgres_step_stalled_on_a_lock_names_the_holder_and_keeps_its_counters() {
    if !postgres() {
        return;
    }
    stalls_on_a_held_lock(Engine {
        target: "postgres:stall",
        // The server logs the wait itself, so the step's part of the log says something.
        config: "log_lock_waits = on\ndeadlock_timeout = 200ms\n",
        user: "dbperf",
        open: |ep| {
            Box::new(dbperf::dbms::postgres::Postgres::new(
                ep,
                dbperf::engines::Engine::Postgres,
                "stall",
                "",
            ))
        },
        hold: |c| {
            c.execute_batch("BEGIN").unwrap();
            c.execute_batch("LOCK TABLE pi1 IN ACCESS EXCLUSIVE MODE")
                .unwrap();
            c.query_i64("SELECT pg_backend_pid()").unwrap().unwrap()
        },
        start_up_line: "ready to accept connections",
    });
}

#[test]
fn a_mariadb_step_stalled_on_a_lock_names_the_holder_and_keeps_its_counters() {
    if !mariadb(false) {
        return;
    }
    stalls_on_a_held_lock(Engine {
        target: "mariadb:stall",
        config: "innodb_lock_wait_timeout = 100\n",
        user: "root",
        open: |ep| {
            Box::new(dbperf::dbms::mysql::Mysql::new(
                ep,
                dbperf::engines::Engine::MariaDb,
                dbperf::dbms::mysql::Storage::InnoDb,
                "stall",
                "",
            ))
        },
        hold: |c| {
            c.execute_batch("BEGIN").unwrap();
            // Every row and the gap above the last: the inserts and deletes of l.i1 wait.
            c.execute_batch("SELECT count(*) FROM (SELECT * FROM pi1 FOR UPDATE) t")
                .unwrap();
            c.query_i64("SELECT CONNECTION_ID()").unwrap().unwrap()
        },
        start_up_line: "ready for connections",
    });
}
