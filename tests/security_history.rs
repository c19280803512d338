//! `dbperf history` against what another user or a hostile server can do:
//!
//! * a PostgreSQL history server that floods rows is cut off by a cap on what dbperf reads
//!   (bounded memory), one that trickles a row every half second by `--statement-timeout`
//!   from the statement's start;
//! * a history location where nothing listens is bad input (exit 2);
//! * `--db FILE` in a directory others can write to, or naming a link, is refused before
//!   anything is opened: a link planted there never makes dbperf write the file it points at;
//! * `history report --out R` with a FIFO planted as R/index.html is refused at once, never a
//!   hang.

use crate::common;

use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::os::unix::process::CommandExt;
use std::path::Path;
use std::process::{Output, Stdio};
use std::time::{Duration, Instant};

use common::{dbperf, text};

fn pg_msg(t: u8, body: &[u8]) -> Vec<u8> {
    let mut m = vec![t];
    m.extend_from_slice(&(body.len() as i32 + 4).to_be_bytes());
    m.extend_from_slice(body);
    m
}

/// One message from the client: (type, body); the startup message has type 0.
fn read_msg(s: &mut TcpStream, startup: bool) -> Option<(u8, Vec<u8>)> {
    let mut t = [0u8; 1];
    if !startup {
        s.read_exact(&mut t).ok()?;
    }
    let mut len = [0u8; 4];
    s.read_exact(&mut len).ok()?;
    let n = (i32::from_be_bytes(len) as usize).checked_sub(4)?;
    let mut body = vec![0u8; n.min(1 << 20)];
    s.read_exact(&mut body).ok()?;
    Some((t[0], body))
}

/// RowDescription of one text column.
fn one_column() -> Vec<u8> {
    let mut desc = 1i16.to_be_bytes().to_vec();
    desc.extend_from_slice(b"value\0");
    desc.extend_from_slice(&[0; 6]);
    desc.extend_from_slice(&25i32.to_be_bytes());
    desc.extend_from_slice(&(-1i16).to_be_bytes());
    desc.extend_from_slice(&(-1i32).to_be_bytes());
    desc.extend_from_slice(&0i16.to_be_bytes());
    pg_msg(b'T', &desc)
}

fn data_row(v: &[u8]) -> Vec<u8> {
    let mut row = 1i16.to_be_bytes().to_vec();
    row.extend_from_slice(&(v.len() as i32).to_be_bytes());
    row.extend_from_slice(v);
    pg_msg(b'D', &row)
}

/// How the fake server answers a SELECT.
#[derive(Clone, Copy)]
enum Select {
    /// Rows without end.
    Flood,
    /// One row every half second, for a minute.
    Trickle,
}

/// A fake PostgreSQL on 127.0.0.1 that logs anyone in, completes every statement but a
/// SELECT, and answers a SELECT as `how` says. Returns its port.
fn fake_history_server(how: Select) -> u16 {
    let l = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = l.local_addr().unwrap().port();
    std::thread::spawn(move || {
        for s in l.incoming().flatten() {
            std::thread::spawn(move || serve(s, how));
        }
    });
    port
}

fn serve(mut s: TcpStream, how: Select) {
    if read_msg(&mut s, true).is_none() {
        return;
    }
    let mut login = pg_msg(b'R', &0i32.to_be_bytes());
    login.extend(pg_msg(b'Z', b"I"));
    if s.write_all(&login).is_err() {
        return;
    }
    while let Some((t, body)) = read_msg(&mut s, false) {
        if t != b'Q' {
            return;
        }
        let sql = String::from_utf8_lossy(&body).to_ascii_uppercase();
        if !sql.trim_start().starts_with("SELECT") {
            let mut done = pg_msg(b'C', b"OK\0");
            done.extend(pg_msg(b'Z', b"I"));
            if s.write_all(&done).is_err() {
                return;
            }
            continue;
        }
        if s.write_all(&one_column()).is_err() {
            return;
        }
        match how {
            Select::Flood => {
                let batch: Vec<u8> = (0..1000).flat_map(|_| data_row(b"1")).collect();
                while s.write_all(&batch).is_ok() {}
            }
            Select::Trickle => {
                for _ in 0..120 {
                    std::thread::sleep(Duration::from_millis(500));
                    if s.write_all(&data_row(b"1")).is_err() {
                        return;
                    }
                }
            }
        }
        return;
    }
}

/// The most address space a dbperf under test may take: a flood that decided dbperf's memory
/// would hit it.
const ADDRESS_SPACE: u64 = 2 << 30;

fn bounded(args: &[&str]) -> Output {
    let mut c = dbperf();
    c.args(args).stdin(Stdio::null());
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
    c.output().unwrap()
}

fn url(port: u16) -> String {
    format!("postgres://u@127.0.0.1:{port}/history")
}

#[test]
fn a_flooding_history_server_is_cut_off_by_a_cap() {
    let port = fake_history_server(Select::Flood);
    let t = Instant::now();
    let o = bounded(&[
        "history",
        "changes",
        "--db",
        &url(port),
        "--statement-timeout",
        "60",
    ]);
    assert_eq!(o.status.code(), Some(1), "{}", text(&o));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains("more than 1000000 rows"), "{}", text(&o));
    assert!(!err.contains("panicked"), "{err}");
    // Well before the statement's deadline: the cap ended it.
    assert!(t.elapsed() < Duration::from_secs(45), "{:?}", t.elapsed());
}

#[test]
fn a_trickling_history_server_is_cut_off_by_the_statement_timeout() {
    let port = fake_history_server(Select::Trickle);
    for cmd in ["changes", "add"] {
        let tmp = tempfile::tempdir().unwrap();
        let mut args = vec!["history", cmd, "--db"];
        let u = url(port);
        args.push(&u);
        args.extend(["--statement-timeout", "3"]);
        // `add` needs a result directory to import: one of the null target's, made here.
        let out = tmp.path().join("r");
        if cmd == "add" {
            let o = dbperf()
                .args(["run", "--target", "null", "--no-progress", "--out"])
                .arg(&out)
                .args(["--steps", "l.i0", "--rows-l-i0", "1k"])
                .output()
                .unwrap();
            assert!(o.status.success(), "{}", text(&o));
            args.push(out.to_str().unwrap());
        }
        let t = Instant::now();
        let o = bounded(&args);
        assert_eq!(o.status.code(), Some(1), "{cmd}: {}", text(&o));
        assert!(
            String::from_utf8_lossy(&o.stderr).contains("did not answer within 3 s"),
            "{cmd}: {}",
            text(&o)
        );
        let took = t.elapsed();
        assert!(took >= Duration::from_secs(3), "{cmd}: {took:?}");
        assert!(took < Duration::from_secs(30), "{cmd}: {took:?}");
    }
}

#[test]
fn a_history_server_that_is_not_there_is_bad_input() {
    // A port nothing listens on: bound, then closed again.
    let port = TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let o = bounded(&["history", "changes", "--db", &url(port)]);
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    assert!(
        String::from_utf8_lossy(&o.stderr).contains("history database"),
        "{}",
        text(&o)
    );
}

fn one_sentence_exit_2(o: &Output, says: &str) {
    assert_eq!(o.status.code(), Some(2), "{}", text(o));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains(says), "expected {says:?}: {}", text(o));
    assert_eq!(err.trim().lines().count(), 1, "{err}");
}

#[test]
fn a_history_file_where_others_can_plant_links_is_refused() {
    let tmp = tempfile::tempdir().unwrap();
    // A directory like /tmp: anyone may make names in it.
    let shared = tmp.path().join("shared");
    std::fs::create_dir(&shared).unwrap();
    std::fs::set_permissions(
        &shared,
        std::os::unix::fs::PermissionsExt::from_mode(0o1777),
    )
    .unwrap();
    let victim = tmp.path().join("victim");
    std::fs::write(&victim, "").unwrap();
    let missing = tmp.path().join("made-through-a-link");
    std::os::unix::fs::symlink(&victim, shared.join("h.sqlite")).unwrap();
    std::os::unix::fs::symlink(&missing, shared.join("new.sqlite")).unwrap();
    if let Some((uid, gid)) = common::attacker() {
        for l in ["h.sqlite", "new.sqlite"] {
            std::os::unix::fs::lchown(shared.join(l), Some(uid), Some(gid)).unwrap();
        }
    }
    for name in ["h.sqlite", "new.sqlite", "plain.sqlite"] {
        let db = shared.join(name);
        for cmd in ["changes", "report"] {
            let mut args = vec!["history", cmd, "--db", db.to_str().unwrap()];
            let rep = tmp.path().join("rep");
            if cmd == "report" {
                args.extend(["--out", rep.to_str().unwrap()]);
            }
            let o = bounded(&args);
            assert_eq!(o.status.code(), Some(2), "{}", text(&o));
        }
        let o = bounded(&[
            "history",
            "add",
            "--db",
            db.to_str().unwrap(),
            "/nonexistent",
        ]);
        assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    }
    // With results to import, the refusal says why.
    let out = tmp.path().join("r");
    let o = dbperf()
        .args(["run", "--target", "null", "--no-progress", "--out"])
        .arg(&out)
        .args(["--steps", "l.i0", "--rows-l-i0", "1k"])
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", text(&o));
    for name in ["h.sqlite", "new.sqlite", "plain.sqlite"] {
        let db = shared.join(name);
        let o = bounded(&[
            "history",
            "add",
            "--db",
            db.to_str().unwrap(),
            out.to_str().unwrap(),
        ]);
        one_sentence_exit_2(&o, "can be written by other users");
    }
    assert_eq!(
        std::fs::metadata(&victim).unwrap().len(),
        0,
        "the victim is untouched"
    );
    assert!(!missing.exists(), "nothing made through the link");
    assert!(!shared.join("plain.sqlite").exists());
    // A link in a directory of one's own is refused too: give the file itself.
    let own = tmp.path().join("own");
    std::fs::create_dir(&own).unwrap();
    std::os::unix::fs::symlink(&victim, own.join("h.sqlite")).unwrap();
    let db = own.join("h.sqlite");
    let o = bounded(&[
        "history",
        "add",
        "--db",
        db.to_str().unwrap(),
        out.to_str().unwrap(),
    ]);
    one_sentence_exit_2(&o, "is a symbolic link");
    assert_eq!(std::fs::metadata(&victim).unwrap().len(), 0);
    // And the plain case works.
    let db = own.join("real.sqlite");
    let o = bounded(&[
        "history",
        "add",
        "--db",
        db.to_str().unwrap(),
        out.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", text(&o));
}

fn mkfifo(p: &Path) {
    let c = std::ffi::CString::new(p.to_str().unwrap()).unwrap();
    // SAFETY: a valid C string and a mode.
    assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o644) }, 0);
}

#[test]
fn a_fifo_planted_in_the_report_directory_is_no_hang() {
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("r");
    let o = dbperf()
        .args(["run", "--target", "null", "--no-progress", "--out"])
        .arg(&out)
        .args(["--steps", "l.i0", "--rows-l-i0", "1k"])
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", text(&o));
    let db = tmp.path().join("h.sqlite");
    let o = bounded(&[
        "history",
        "add",
        "--db",
        db.to_str().unwrap(),
        out.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", text(&o));
    let rep = tmp.path().join("rep");
    std::fs::create_dir(&rep).unwrap();
    mkfifo(&rep.join("index.html"));
    let t = Instant::now();
    let o = bounded(&[
        "history",
        "report",
        "--db",
        db.to_str().unwrap(),
        "--out",
        rep.to_str().unwrap(),
    ]);
    one_sentence_exit_2(&o, "holds no earlier");
    assert!(t.elapsed() < Duration::from_secs(30), "{:?}", t.elapsed());
    // A link planted as the report directory itself.
    let elsewhere = tmp.path().join("elsewhere");
    std::fs::create_dir(&elsewhere).unwrap();
    let linked = tmp.path().join("linked");
    std::os::unix::fs::symlink(&elsewhere, &linked).unwrap();
    let o = bounded(&[
        "history",
        "report",
        "--db",
        db.to_str().unwrap(),
        "--out",
        linked.to_str().unwrap(),
    ]);
    one_sentence_exit_2(&o, "symbolic link");
    assert_eq!(std::fs::read_dir(&elsewhere).unwrap().count(), 0);
}

/// A SQLite history is a file like any other: one whose table is an endless view ends at the
/// statement's deadline, and one another user owns or others may write is refused.
#[test]
fn a_sqlite_history_is_bounded_and_its_own_users() {
    let tmp = tempfile::tempdir().unwrap();
    let db = tmp.path().join("h.sqlite");
    {
        let c = rusqlite::Connection::open(&db).unwrap();
        c.execute_batch(
            "CREATE VIEW dbperf_runs AS \
               WITH RECURSIVE n(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM n) \
               SELECT 'r' || x AS run_id, 't' AS target, 'e' AS engine, 'v' AS version, \
                      'b' AS build, 'c' AS config_name, 'h' AS host_fingerprint, \
                      'x' AS started_at FROM n;",
        )
        .unwrap();
    }
    let t = Instant::now();
    let o = bounded(&[
        "history",
        "changes",
        "--db",
        db.to_str().unwrap(),
        "--statement-timeout",
        "2",
    ]);
    assert_eq!(o.status.code(), Some(1), "{}", text(&o));
    assert!(
        String::from_utf8_lossy(&o.stderr).contains("did not finish within 2 s"),
        "{}",
        text(&o)
    );
    assert!(t.elapsed() < Duration::from_secs(30), "{:?}", t.elapsed());
    std::fs::set_permissions(&db, std::os::unix::fs::PermissionsExt::from_mode(0o666)).unwrap();
    let o = bounded(&["history", "changes", "--db", db.to_str().unwrap()]);
    one_sentence_exit_2(&o, "others can write to it");
}
