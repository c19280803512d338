//! No server outlives dbperf unless the user asked for it. Real PostgreSQL and MariaDB through
//! dbperf's own server management (as root they run as user `dbperf`, so every directory is
//! under /tmp), each test with a server registry of its own (`DBPERF_STATE_DIR`):
//!
//! * a killed `dbperf run` takes its servers along (the parent-death signal), and the next run
//!   removes their registry entries without signalling anything;
//! * `dbperf server start` hands its server over: it answers after the command exited, a
//!   `dbperf run` leaves it alone, `dbperf server stop` stops it and removes every record;
//! * a real leftover (a `server start` killed before the hand-over: its server has no death
//!   signal) is found in the registry and stopped by the next `dbperf run`, which deletes no
//!   data; a run's server that was stopped (SIGSTOP) when dbperf died still goes with it;
//! * a record whose pid is now another process (a live `sleep` with another start time) is
//!   never signalled, by the sweep or by `server stop`;
//! * Ctrl-C and SIGTERM during `server start` (initdb, mariadb-install-db, the start-up wait)
//!   exit 130 and leave no process, no `server.json`, no registry entry;
//! * SIGTERM of `dbperf run` acts like a first Ctrl-C: finished steps kept, no server left.

use crate::common;

use std::path::{Path, PathBuf};
use std::process::{Child, Output, Stdio};
use std::time::{Duration, Instant};

use common::*;
use dbperf::server::identity::Identity;
use dbperf::server::registry::{self, Entry};

/// A registry of its own per test, so tests running side by side never see each other's
/// servers (dbperf would not stop them anyway: their owners are alive).
fn isolated(state: &Path) -> std::process::Command {
    let mut c = dbperf();
    c.env("DBPERF_STATE_DIR", state);
    c
}

fn spawn_in(state: &Path, args: &[&str]) -> Child {
    isolated(state)
        .args(args)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
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
        std::thread::sleep(Duration::from_millis(10));
    }
}

fn signal(child: &Child, sig: i32) {
    // SAFETY: kill has no memory-safety preconditions.
    unsafe { libc::kill(child.id() as i32, sig) };
}

fn kill9(mut child: Child) {
    signal(&child, libc::SIGKILL);
    let _ = child.wait();
}

/// Kills whatever still runs under a test's directory when the test ends, failed or not, so a
/// failing test leaves no server behind for the next one.
struct Sweep(PathBuf);

impl Drop for Sweep {
    fn drop(&mut self) {
        for p in processes_using(&self.0) {
            if let Some(pid) = p.split(':').next().and_then(|n| n.parse::<i32>().ok()) {
                // SAFETY: as above.
                unsafe { libc::kill(pid, libc::SIGKILL) };
            }
        }
    }
}

/// Servers (not dbperf itself, whose arguments also name the directory) using `dir`.
fn servers_using(dir: &Path) -> Vec<String> {
    processes_using(dir)
        .into_iter()
        .filter(|p| !p.contains(env!("CARGO_BIN_EXE_dbperf")))
        .collect()
}

fn run_in(state: &Path, args: &[&str]) -> Output {
    isolated(state).args(args).output().expect("dbperf runs")
}

/// Waits for a spawned dbperf to exit, at most `secs` seconds, and returns what it said.
fn finish(mut child: Child, secs: u64) -> Output {
    let start = Instant::now();
    while child.try_wait().unwrap().is_none() {
        if start.elapsed() > Duration::from_secs(secs) {
            let _ = child.kill();
            panic!("dbperf did not exit within {secs} s");
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    child.wait_with_output().unwrap()
}

/// The entries of a test's server registry.
fn registry_entries(state: &Path) -> Vec<Entry> {
    let Ok(list) = std::fs::read_dir(state.join("servers")) else {
        return Vec::new();
    };
    list.flatten()
        .filter(|e| {
            let n = e.file_name().to_string_lossy().to_string();
            !n.starts_with('.') && n.ends_with(".json")
        })
        .map(|e| serde_json::from_str(&std::fs::read_to_string(e.path()).unwrap()).unwrap())
        .collect()
}

/// A tiny SQLite run: every `dbperf run` sweeps the registry before anything else.
fn quick_sqlite_run(state: &Path, out: &Path) -> Output {
    let o = run_in(
        state,
        &[
            "run",
            "--steps",
            "l.i0",
            "--rows-l-i0",
            "1k",
            "--out",
            out.to_str().unwrap(),
        ],
    );
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    o
}

/// A `sleep` to stand for a process whose pid a record names, killed when dropped.
struct Sleeper(Child, Identity);

impl Sleeper {
    fn new() -> Sleeper {
        let child = std::process::Command::new("sleep")
            .arg("1000")
            .spawn()
            .unwrap();
        let id = exec_done(child.id());
        Sleeper(child, id)
    }
}

/// Its identity once it runs `sleep`: the command line is set a moment after spawn returns.
fn exec_done(pid: u32) -> Identity {
    let start = Instant::now();
    loop {
        if let Some(id) = Identity::of(pid).filter(|i| i.cmdline[0] == "sleep") {
            return id;
        }
        assert!(start.elapsed() < Duration::from_secs(5), "sleep runs");
        std::thread::sleep(Duration::from_millis(1));
    }
}

impl Drop for Sleeper {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// The identity of a process that has ended.
fn ended() -> Identity {
    let s = Sleeper::new();
    s.1.clone()
}

/// An entry as dbperf writes it, pointing at `server`, owned by a dbperf that is gone.
fn forge_entry(state: &Path, server: &Identity) {
    let dir = state.join("servers");
    std::fs::create_dir_all(&dir).unwrap();
    let e = Entry {
        schema: 1,
        target: "postgres.default".into(),
        engine: "postgres".into(),
        datadir: state.join("data").display().to_string(),
        port: 1,
        socket: String::new(),
        log: String::new(),
        started_at: String::new(),
        server: server.clone(),
        owner: ended(),
        may_outlive: false,
        cgroup: None,
    };
    std::fs::write(
        registry::path_of(&dir, server),
        serde_json::to_string(&e).unwrap(),
    )
    .unwrap();
}

/// A `server.json` as `dbperf server start` writes it, for a process `server`.
fn forge_instance(dir: &Path, server: &Identity) {
    std::fs::create_dir_all(dir).unwrap();
    let state = serde_json::json!({
        "schema": 1, "target": "postgres.default", "engine": "postgres", "pid": server.pid,
        "port": 1, "socket": "", "datadir": dir.join("data"), "log": "", "connect": "",
        "server": server,
    });
    std::fs::write(dir.join("server.json"), state.to_string()).unwrap();
}

/// dbperf SIGKILLed while a managed PostgreSQL and a managed MariaDB each run a step: both
/// servers are gone within seconds, with no resume and no other dbperf to clean up.
#[test]
fn a_killed_dbperf_takes_its_servers_with_it() {
    if !(postgres() && mariadb(false)) {
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    let _sweep = Sweep(tmp.path().to_path_buf());
    let state = tmp.path().join("state");
    let mut runs = Vec::new();
    for target in ["postgres", "mariadb"] {
        let out = tmp.path().join(target);
        let child = spawn_in(
            &state,
            &[
                "run",
                "--target",
                target,
                "--steps",
                "l.i0",
                "--rows-l-i0",
                "5M",
                "--out",
                out.to_str().unwrap(),
            ],
        );
        runs.push((child, out.join(format!("{target}.default/steps"))));
    }
    for (_, steps) in &runs {
        wait_for(120, "a server's l.i0", || {
            steps.join(".l.i0.series.csv.tmp").exists()
        });
    }
    std::thread::sleep(Duration::from_secs(1));
    assert!(!servers_using(tmp.path()).is_empty(), "no server ran");
    for (child, _) in runs {
        kill9(child);
    }
    let start = Instant::now();
    while !servers_using(tmp.path()).is_empty() && start.elapsed() < Duration::from_secs(10) {
        std::thread::sleep(Duration::from_millis(50));
    }
    let left = servers_using(tmp.path());
    assert!(
        left.is_empty(),
        "servers outlived the dbperf that started them by {:.0?}: {left:#?}",
        start.elapsed()
    );
    // Their records outlived them; the next run removes them and signals nothing.
    let records = registry_entries(&state);
    assert_eq!(records.len(), 2, "{records:#?}");
    assert!(records
        .iter()
        .all(|e| !e.may_outlive && !e.server.is_alive_same()));
    let o = quick_sqlite_run(&state, &tmp.path().join("next"));
    assert!(!text(&o).contains("leftover"), "{}", text(&o));
    assert!(registry_entries(&state).is_empty());
}

/// Stops a `dbperf server start` instance of a test's own registry, also when the test fails.
struct Instance<'a>(&'a Path, &'a Path);

impl Drop for Instance<'_> {
    fn drop(&mut self) {
        let dir = self.1.to_str().unwrap();
        let _ = run_in(self.0, &["server", "stop", "postgres", "--dir", dir]);
    }
}

/// `dbperf server start` leaves its server running (no death signal once handed over): it
/// answers a `dbperf run` after the command exited, that run's sweep leaves it alone, and
/// `dbperf server stop` stops the very process recorded and removes every record of it.
#[test]
fn server_start_hands_its_server_over_and_server_stop_takes_it_back() {
    if !postgres() {
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    let _sweep = Sweep(tmp.path().to_path_buf());
    let state = tmp.path().join("state");
    let dir = tmp.path().join("pg");
    let d = dir.to_str().unwrap();
    let o = run_in(&state, &["server", "start", "postgres", "--dir", d]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    let _instance = Instance(&state, &dir);
    let json: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("server.json")).unwrap()).unwrap();
    let server: Identity = serde_json::from_value(json["server"].clone()).unwrap();
    assert_eq!(u64::from(server.pid), json["pid"].as_u64().unwrap());
    assert!(server.is_alive_same(), "the server outlives `server start`");
    let records = registry_entries(&state);
    assert_eq!(records.len(), 1, "{records:#?}");
    assert!(records[0].may_outlive && records[0].server == server);
    assert_eq!(records[0].datadir, json["datadir"].as_str().unwrap());

    let toml = tmp.path().join("dbperf.toml");
    std::fs::write(
        &toml,
        format!(
            "[target.ext]\nengine = \"postgres\"\nhost = \"127.0.0.1\"\nport = {}\n\
             user = \"dbperf\"\ndatabase = \"ib\"\npassword_env = \"DBPERF_TEST_SERVER_PASSWORD\"\n",
            json["port"]
        ),
    )
    .unwrap();
    let out = tmp.path().join("r");
    let o = isolated(&state)
        .env("DBPERF_TEST_SERVER_PASSWORD", instance_password(&dir))
        .args([
            "run",
            "--config-file",
            toml.to_str().unwrap(),
            "--target",
            "ext",
            "--steps",
            "l.i0",
            "--rows-l-i0",
            "10k",
            "--out",
            out.to_str().unwrap(),
        ])
        .output()
        .expect("dbperf runs");
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    assert!(!text(&o).contains("leftover"), "{}", text(&o));
    assert!(
        server.is_alive_same(),
        "a run's sweep left the user's server"
    );

    let o = run_in(&state, &["server", "stop", "postgres", "--dir", d]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    let said = String::from_utf8_lossy(&o.stdout);
    assert!(
        said.contains(&format!("postgres.default (pid {}) stopped in", server.pid)),
        "{said}"
    );
    assert!(!server.is_alive_same());
    assert!(servers_using(&dir).is_empty(), "{:?}", servers_using(&dir));
    assert!(!dir.join("server.json").exists());
    assert!(registry_entries(&state).is_empty());
    assert!(dir.join("data/PG_VERSION").exists(), "stop deletes nothing");
    let o = run_in(&state, &["server", "stop", "postgres", "--dir", d]);
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
}

/// A `dbperf server start` killed before it handed its server over leaves a server with no
/// death signal (it was started to outlive dbperf): a real leftover, which the registry records
/// as not handed over, and which the next `dbperf run` stops. Its data stays.
#[test]
fn a_server_start_killed_before_the_hand_over_is_stopped_by_the_next_run() {
    if !postgres() {
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    let _sweep = Sweep(tmp.path().to_path_buf());
    let state = tmp.path().join("state");
    let dir = tmp.path().join("pg");
    let child = spawn_in(
        &state,
        &[
            "server",
            "start",
            "postgres",
            "--dir",
            dir.to_str().unwrap(),
        ],
    );
    wait_for(120, "the server's registry entry", || {
        registry_entries(&state).len() == 1
    });
    kill9(child);
    let e = registry_entries(&state).remove(0);
    assert!(!e.may_outlive);
    std::thread::sleep(Duration::from_millis(500));
    assert!(e.server.is_alive_same(), "the leftover runs");
    assert!(!dir.join("server.json").exists());
    // The whole leftover stops, as on a hung host: the postmaster and its children, which each
    // lead their own session (outside the postmaster's group). The sweep must continue them
    // all, or the postmaster waits for children that never act on its signal.
    let tree: Vec<u32> = dbperf::metrics::proc::tree(Path::new("/proc"), e.server.pid)
        .per_pid
        .into_keys()
        .collect();
    assert!(tree.len() > 2, "the postmaster and its children: {tree:?}");
    for p in &tree {
        // SAFETY: kill has no memory-safety preconditions.
        unsafe { libc::kill(*p as i32, libc::SIGSTOP) };
    }

    let o = quick_sqlite_run(&state, &tmp.path().join("next"));
    let said = text(&o);
    assert!(
        said.contains(&format!(
            "stopped a leftover server: postgres.default (postgres, pid {}, data directory {}), \
             started by dbperf pid {} which is gone: stopped in",
            e.server.pid, e.datadir, e.owner.pid
        )),
        "{said}"
    );
    // Continued, the children act on the postmaster's shutdown at once; left stopped, it would
    // have waited 5 s to SIGKILL them (immediate shutdown) or dbperf 30 s to kill it.
    let secs: f64 = said
        .split("which is gone: stopped in ")
        .nth(1)
        .and_then(|r| r.split(' ').next())
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("{said}"));
    // Under the 5 s after which a stopped postmaster's children would have been killed.
    assert!(secs < 4.9, "the stopped leftover took {secs} s: {said}");
    assert!(!e.server.is_alive_same());
    assert!(servers_using(&dir).is_empty(), "{:?}", servers_using(&dir));
    for p in &tree {
        assert!(
            !Path::new(&format!("/proc/{p}")).exists()
                || std::fs::read_to_string(format!("/proc/{p}/stat"))
                    .is_ok_and(|st| st.contains(") Z ")),
            "pid {p} of the leftover's tree still runs"
        );
    }
    assert!(registry_entries(&state).is_empty());
    assert!(
        dir.join("data/PG_VERSION").exists(),
        "the sweep deletes no data"
    );
}

/// A run's server stopped with SIGSTOP when dbperf is SIGKILLed still goes: its death signal
/// waits, but the kernel continues (SIGHUP, SIGCONT) a process group that is left orphaned with
/// a stopped member, so the postmaster acts on it. The next run only removes the record.
#[test]
fn a_run_killed_while_its_server_was_stopped_still_takes_it_along() {
    if !postgres() {
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    let _sweep = Sweep(tmp.path().to_path_buf());
    let state = tmp.path().join("state");
    let out = tmp.path().join("r");
    let child = spawn_in(
        &state,
        &[
            "run",
            "--target",
            "postgres",
            "--steps",
            "l.i0",
            "--rows-l-i0",
            "5M",
            "--out",
            out.to_str().unwrap(),
        ],
    );
    let steps = out.join("postgres.default/steps");
    wait_for(120, "l.i0", || steps.join(".l.i0.series.csv.tmp").exists());
    let e = registry_entries(&state).remove(0);
    assert!(e.server.is_alive_same() && !e.may_outlive);
    // SAFETY: kill has no memory-safety preconditions.
    unsafe { libc::kill(e.server.pid as i32, libc::SIGSTOP) };
    // The kernel continues only a group that has a stopped member when the group is orphaned;
    // a server stopping a moment after dbperf died would stay stopped (a leftover for the
    // registry, as in the test above), so dbperf is killed once the server has stopped.
    wait_for(10, "the server to stop", || {
        let stat = std::fs::read_to_string(format!("/proc/{}/stat", e.server.pid)).unwrap();
        stat[stat.rfind(')').unwrap() + 1..]
            .trim_start()
            .starts_with('T')
    });
    kill9(child);
    wait_for(10, "the stopped server to end with its dbperf", || {
        !e.server.is_alive_same()
    });
    assert!(servers_using(&out).is_empty(), "{:?}", servers_using(&out));
    let o = quick_sqlite_run(&state, &tmp.path().join("next"));
    assert!(!text(&o).contains("leftover"), "{}", text(&o));
    assert!(registry_entries(&state).is_empty());
}

/// A record whose pid now belongs to another process (a live `sleep` with another start time)
/// is never signalled: not by a run's sweep, not by `server stop`, which says so in one
/// sentence and drops the stale records. A record of a process that is gone: "was not running".
#[test]
fn a_pid_held_by_another_process_is_never_signalled() {
    let tmp = tempfile::tempdir().unwrap();
    let state = tmp.path().join("state");
    let sleep = Sleeper::new();
    let mut reused = sleep.1.clone();
    reused.start_time_ticks -= 1;

    forge_entry(&state, &reused);
    let o = quick_sqlite_run(&state, &tmp.path().join("r1"));
    assert!(!text(&o).contains("leftover"), "{}", text(&o));
    assert!(sleep.1.is_alive_same(), "the sweep signalled a reused pid");
    assert!(registry_entries(&state).is_empty(), "the stale entry goes");

    forge_entry(&state, &reused);
    let dir = tmp.path().join("pg");
    forge_instance(&dir, &reused);
    let o = run_in(
        &state,
        &["server", "stop", "postgres", "--dir", dir.to_str().unwrap()],
    );
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    let said = String::from_utf8_lossy(&o.stdout);
    assert!(
        said.contains(&format!(
            "postgres.default was not running: pid {} is now another process: sleep 1000, \
             which was left alone",
            sleep.1.pid
        )),
        "{said}"
    );
    assert!(
        sleep.1.is_alive_same(),
        "server stop signalled a reused pid"
    );
    assert!(!dir.join("server.json").exists());
    assert!(registry_entries(&state).is_empty());

    let gone = ended();
    forge_instance(&dir, &gone);
    let o = run_in(
        &state,
        &["server", "stop", "postgres", "--dir", dir.to_str().unwrap()],
    );
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    let said = String::from_utf8_lossy(&o.stdout);
    if Identity::of(gone.pid).is_none() {
        assert!(
            said.contains(&format!(
                "postgres.default (pid {}) was not running",
                gone.pid
            )),
            "{said}"
        );
    }
    assert!(!dir.join("server.json").exists());
    assert!(dir.is_dir(), "nothing but the record is deleted");
}

/// `server stop mariadb --dir D` where D holds postgres's instance: refused naming the target
/// the directory is for, and nothing signalled or forgotten (it stopped postgres before).
#[test]
fn server_stop_refuses_another_targets_instance() {
    let tmp = tempfile::tempdir().unwrap();
    let state = tmp.path().join("state");
    let sleep = Sleeper::new();
    let dir = tmp.path().join("pg");
    forge_instance(&dir, &sleep.1);
    let o = run_in(
        &state,
        &["server", "stop", "mariadb", "--dir", dir.to_str().unwrap()],
    );
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.contains("is the instance of target \"postgres.default\", not of \"mariadb.default\""),
        "{err}"
    );
    assert!(
        sleep.1.is_alive_same(),
        "server stop signalled another target's server"
    );
    assert!(dir.join("server.json").exists(), "the record is kept");
}

/// `server start` into a directory holding a stopped instance's data (`server stop` without
/// `--remove`) is refused in a sentence before anything runs; initdb over it failed with an
/// empty reason, exit 1.
#[test]
fn server_start_refuses_a_stopped_instances_data() {
    if !postgres() {
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    let state = tmp.path().join("state");
    let dir = tmp.path().join("pg");
    std::fs::create_dir_all(dir.join("data")).unwrap();
    std::fs::write(dir.join("data/PG_VERSION"), "16\n").unwrap();
    let o = run_in(
        &state,
        &[
            "server",
            "start",
            "postgres",
            "--dir",
            dir.to_str().unwrap(),
        ],
    );
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.contains("holds the data of a stopped instance"),
        "{err}"
    );
    assert!(
        dir.join("data/PG_VERSION").exists(),
        "the data is left as it was"
    );
    assert!(!dir.join("server.json").exists());
}

/// Sends `sig` to a `dbperf server start` once `ready` holds; it must exit 130 and leave no
/// process, no `server.json`, no data directory and no registry entry.
fn signal_server_start(
    target: &str,
    config: Option<&str>,
    sig: i32,
    ready: &dyn Fn(&Path, &Path) -> bool,
) {
    let tmp = tempfile::tempdir().unwrap();
    let _sweep = Sweep(tmp.path().to_path_buf());
    let state = tmp.path().join("state");
    let dir = tmp.path().join("srv");
    let mut args = vec!["server", "start", target, "--dir", dir.to_str().unwrap()];
    let toml = tmp.path().join("dbperf.toml");
    if let Some(c) = config {
        std::fs::write(&toml, c).unwrap();
        args.extend(["--config-file", toml.to_str().unwrap()]);
    }
    let child = spawn_in(&state, &args);
    let start = Instant::now();
    while !ready(&dir, &state) {
        assert!(
            start.elapsed() < Duration::from_secs(120),
            "{target}: the moment to signal never came"
        );
        std::thread::sleep(Duration::from_millis(5));
    }
    signal(&child, sig);
    let o = finish(child, 60);
    assert_eq!(
        o.status.code(),
        Some(130),
        "{target}, signal {sig}: {}",
        text(&o)
    );
    assert!(
        String::from_utf8_lossy(&o.stderr).contains("was abandoned; nothing of it is left running"),
        "{}",
        text(&o)
    );
    wait_for(10, "every process of the start to end", || {
        processes_using(&dir).is_empty()
    });
    assert!(!dir.join("server.json").exists());
    assert!(
        !dir.join("data").exists(),
        "the half-made data directory stays"
    );
    assert!(
        registry_entries(&state).is_empty(),
        "{:#?}",
        registry_entries(&state)
    );
}

fn running(dir: &Path, what: &str) -> bool {
    processes_using(dir).iter().any(|p| p.contains(what))
}

#[test]
fn ctrl_c_during_initdb_leaves_nothing() {
    if postgres() {
        signal_server_start("postgres", None, libc::SIGINT, &|dir, _| {
            running(dir, "initdb")
        });
    }
}

/// SIGTERM while dbperf waits for the server to answer (every login delayed by the config, so
/// the moment is certain): the server was already running and is stopped.
#[test]
fn sigterm_during_the_start_up_wait_leaves_nothing() {
    if postgres() {
        let config = "[config.slow]\nengine = \"postgres\"\ntext = \"post_auth_delay = 2\\n\"\n";
        signal_server_start("postgres:slow", Some(config), libc::SIGTERM, &|_, state| {
            registry_entries(state).len() == 1
        });
    }
}

/// mariadb-install-db runs a bootstrap server of its own: both go.
#[test]
fn sigterm_during_mariadb_install_db_leaves_nothing() {
    if mariadb(false) {
        signal_server_start("mariadb", None, libc::SIGTERM, &|dir, _| {
            running(dir, "--bootstrap")
        });
    }
}

/// SIGTERM of `dbperf run` acts like a first Ctrl-C: the step in progress is stopped and
/// written as interrupted, finished steps stay as they were, the server is stopped, exit 130.
#[test]
fn sigterm_of_a_run_keeps_finished_steps_and_leaves_no_server() {
    if !postgres() {
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    let _sweep = Sweep(tmp.path().to_path_buf());
    let state = tmp.path().join("state");
    let out = tmp.path().join("r");
    let child = spawn_in(
        &state,
        &[
            "run",
            "--target",
            "postgres",
            "--steps",
            "l.i0,l.x,qr100",
            "--rows-l-i0",
            "10k",
            "--query-seconds",
            "300",
            "--out",
            out.to_str().unwrap(),
        ],
    );
    let target = out.join("postgres.default");
    wait_for(120, "qr100 to run", || {
        target.join("steps/.qr100.series.csv.tmp").exists()
    });
    signal(&child, libc::SIGTERM);
    let o = finish(child, 60);
    assert_eq!(o.status.code(), Some(130), "{}", text(&o));
    let (run, steps) = read_all(&target);
    assert_eq!(run.status, "interrupted");
    let status: Vec<_> = steps.iter().map(|s| (s.step.as_str(), s.status)).collect();
    assert_eq!(steps.len(), 3, "{status:?}");
    assert!(
        steps[0].status == "ok" && steps[1].status == "ok",
        "{status:?}"
    );
    assert!(steps[2].status != "ok", "{status:?}");
    assert!(servers_using(&out).is_empty(), "{:?}", servers_using(&out));
    assert!(registry_entries(&state).is_empty());
}
