//! Helpers shared by the integration tests: run the real binary, read its results.
#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use dbperf::results::pgbench::PgbenchStep;
use dbperf::results::{self, RunFile, StepFile};
use dbperf::results::{tpcc::TpccStep, IbenchStep, Payload, Sla, SysbenchStep};

/// A step file's suite part, for tests that read one suite's figures.
pub trait Parts {
    fn ibench(&self) -> Option<&IbenchStep>;
    fn sysbench(&self) -> Option<&SysbenchStep>;
    fn tpcc(&self) -> Option<&TpccStep>;
    fn pgbench(&self) -> Option<&PgbenchStep>;
    /// The SLA of an Insert Benchmark qr/qp step.
    fn sla(&self) -> Option<&Sla> {
        self.ibench().and_then(|p| p.sla.as_ref())
    }
}

impl Parts for StepFile {
    fn ibench(&self) -> Option<&IbenchStep> {
        match &self.payload {
            Some(Payload::Ibench(p)) => Some(p),
            _ => None,
        }
    }
    fn sysbench(&self) -> Option<&SysbenchStep> {
        match &self.payload {
            Some(Payload::Sysbench(p)) => Some(p),
            _ => None,
        }
    }
    fn tpcc(&self) -> Option<&TpccStep> {
        match &self.payload {
            Some(Payload::Tpcc(p)) => Some(p),
            _ => None,
        }
    }
    fn pgbench(&self) -> Option<&PgbenchStep> {
        match &self.payload {
            Some(Payload::Pgbench(p)) => Some(p),
            _ => None,
        }
    }
}

pub mod chromium;

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

/// The password of the instance `dbperf server start` made in `dir` (its 0600 `password` file).
pub fn instance_password(dir: &Path) -> String {
    std::fs::read_to_string(dir.join("password"))
        .expect("the instance's password file")
        .trim()
        .to_string()
}

/// The variable an external target reaching a `dbperf server start` instance names as its
/// `password_env`.
pub const PASSWORD_ENV: &str = "DBPERF_TEST_SERVER_PASSWORD";

/// Runs dbperf with the password of the instance in `instance` in [`PASSWORD_ENV`].
pub fn run_reaching(instance: &Path, args: &[&str]) -> Output {
    dbperf()
        .env(PASSWORD_ENV, instance_password(instance))
        .args(args)
        .output()
        .expect("dbperf runs")
}

/// Processes whose command line mentions `path` (a server's data directory).
pub fn processes_using(path: &Path) -> Vec<String> {
    let needle = path.to_string_lossy().to_string();
    let mut found = Vec::new();
    for e in std::fs::read_dir("/proc").unwrap().flatten() {
        if let Ok(cmd) = std::fs::read(e.path().join("cmdline")) {
            let cmd = String::from_utf8_lossy(&cmd).replace('\0', " ");
            if cmd.contains(&needle) {
                found.push(format!("{}: {cmd}", e.file_name().to_string_lossy()));
            }
        }
    }
    found
}

/// The hardware figures of every step are taken over exactly its measured time: the /proc
/// interval within 2% (+ 100 ms for the snapshots themselves, taken by a thread that a busy
/// host may run late) of `duration_s`, far from the whole seconds of setup or teardown that an
/// interval taken at the wrong place would add; and the operations they are divided by are the
/// engine's integer counts.
pub fn check_cost_interval(steps: &[StepFile]) {
    for s in steps {
        if s.status != "ok" {
            continue;
        }
        let h = s.hardware.as_ref().expect("hardware");
        let gap = (h.interval_s - s.duration_s).abs();
        assert!(
            gap <= 0.02 * s.duration_s + 0.100,
            "{}: interval {} s vs measured {} s",
            s.step,
            h.interval_s,
            s.duration_s
        );
        assert_eq!(
            h.op_count.fract(),
            0.0,
            "{}: op_count {}",
            s.step,
            h.op_count
        );
        let expected = match (h.op.as_str(), s.sysbench()) {
            (_, Some(sb)) => Some(sb.queries),
            ("insert", None) => Some(s.ops["insert"].rows),
            ("query", None) => Some(s.ops["query"].count),
            _ => None,
        };
        if let Some(e) = expected {
            assert_eq!(h.op_count, e as f64, "{}: op_count", s.step);
        }
    }
}

/// The build cache shared by every test binary of one build tree (their directory names it), so
/// one `cargo test` downloads each build once and later runs of the same tree reuse it; under
/// /tmp, reachable by the server user when the tests run as root.
pub fn fetch_cache() -> PathBuf {
    let exe = std::env::current_exe().unwrap();
    let tree = exe.parent().unwrap_or(&exe);
    let mut h: u64 = 1469598103934665603;
    for b in tree.to_string_lossy().bytes() {
        h = (h ^ u64::from(b)).wrapping_mul(1099511628211);
    }
    let d = PathBuf::from(format!("/tmp/dbperf-test-fetch-{h:x}"));
    std::fs::create_dir_all(&d).unwrap();
    d
}

/// One fetch at a time in this test binary: parallel `apt-get update`s of one private list
/// directory would fight over its lock.
pub static FETCHING: std::sync::Mutex<()> = std::sync::Mutex::new(());

/// `dbperf fetch ARGS --cache-dir CACHE`, one at a time.
pub fn fetch_into(args: &[&str], cache: &Path) -> Output {
    let _one = FETCHING.lock().unwrap_or_else(|e| e.into_inner());
    dbperf()
        .arg("fetch")
        .args(args)
        .arg("--cache-dir")
        .arg(cache)
        .output()
        .unwrap()
}

/// Oracle MySQL 9 from Debian sid (9.7 LTS when this was written; sid moves, and the tests
/// follow whichever 9.x it has) in the shared build cache (`fetch_cache`), fetched once: true
/// when it is there. Without apt (not Debian) or a reachable archive the test is skipped
/// locally; in CI both are required.
pub fn mysql_9() -> bool {
    let o = fetch_into(&["mysql", "9"], &fetch_cache());
    if o.status.success() {
        return true;
    }
    assert!(
        std::env::var_os("CI").is_none(),
        "CI must be able to fetch MySQL 9 from Debian sid: {}",
        text(&o)
    );
    eprintln!("skipping: MySQL 9 could not be fetched: {}", text(&o));
    false
}

pub fn is_root() -> bool {
    // SAFETY: geteuid has no preconditions.
    unsafe { libc::geteuid() == 0 }
}

/// A second local user to stand for an attacker (created once when absent); None when the
/// tests do not run as root.
pub fn attacker() -> Option<(u32, u32)> {
    if !is_root() {
        eprintln!("note: not root, so no second user to act as another user; skipped");
        return None;
    }
    const NAME: &str = "dbperf-attacker";
    if dbperf::server::process::lookup_user(NAME).is_none() {
        // Tests running side by side may both try: the second useradd fails, the user is there.
        let _ = std::process::Command::new("useradd")
            .args([
                "--system",
                "--no-create-home",
                "--shell",
                "/usr/sbin/nologin",
                NAME,
            ])
            .output();
    }
    let u = dbperf::server::process::lookup_user(NAME).expect("useradd made the user");
    Some((u.uid, u.gid))
}
