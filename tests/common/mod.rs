//! Helpers shared by the integration tests: run the real binary, read its results.
#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use dbperf::results::{self, RunFile, StepFile};

pub fn dbperf() -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_dbperf"));
    c.env("NO_COLOR", "1");
    c
}

pub fn run(args: &[&str]) -> Output {
    dbperf().args(args).output().expect("dbperf runs")
}

pub fn text(o: &Output) -> String {
    format!(
        "exit {:?}\n--- stdout\n{}\n--- stderr\n{}",
        o.status.code(),
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    )
}

pub fn target_dir(out: &Path, target: &str) -> PathBuf {
    out.join(target)
}

pub fn read_all(dir: &Path) -> (RunFile, Vec<StepFile>) {
    let run = results::read_run(dir).expect("run.json matches the schema");
    let mut steps = Vec::new();
    for s in &run.steps_planned {
        if dir.join("steps").join(format!("{s}.json")).exists() {
            steps.push(results::read_step(dir, s).expect("step file matches the schema"));
        }
    }
    (run, steps)
}

pub fn db(out_work: &Path, target: &str) -> rusqlite::Connection {
    rusqlite::Connection::open(out_work.join(target).join("ib.sqlite")).expect("database opens")
}

pub fn count(conn: &rusqlite::Connection, table: &str) -> i64 {
    conn.query_row(&format!("SELECT count(*) FROM {table}"), [], |r| r.get(0))
        .unwrap()
}

/// Rows inserted minus rows deleted according to the step files.
pub fn net_rows(steps: &[StepFile]) -> i64 {
    steps
        .iter()
        .map(|s| {
            let ins = s.ops.get("insert").map(|o| o.rows).unwrap_or(0) as i64;
            let del = s.ops.get("delete").map(|o| o.rows).unwrap_or(0) as i64;
            ins - del
        })
        .sum()
}

/// Whether a Debian package the server tests need is installed: skipped locally, a failure in CI.
pub fn available(what: &str, path: &str) -> bool {
    if Path::new(path).exists() {
        return true;
    }
    assert!(
        std::env::var_os("CI").is_none(),
        "{path} is missing: CI must install {what} (scripts/install-test-deps.sh)"
    );
    eprintln!("skipping: {path} is not installed");
    false
}

pub fn postgres() -> bool {
    available("postgresql", "/usr/lib/postgresql")
}

pub fn mariadb(rocksdb: bool) -> bool {
    available("mariadb-server", "/usr/sbin/mariadbd")
        && (!rocksdb
            || available(
                "mariadb-plugin-rocksdb",
                "/usr/lib/mysql/plugin/ha_rocksdb.so",
            ))
}

/// Stops a `dbperf server start` instance when dropped, also when a test fails.
pub struct Instance<'a> {
    pub target: &'a str,
    pub dir: &'a Path,
}

impl Drop for Instance<'_> {
    fn drop(&mut self) {
        let _ = run(&[
            "server",
            "stop",
            self.target,
            "--dir",
            self.dir.to_str().unwrap(),
        ]);
    }
}
