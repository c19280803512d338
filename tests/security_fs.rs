//! dbperf run as root on a shared host: nothing is created, chmodded, chowned or written through
//! a link another user planted, no directory another user can change is worked in, and a
//! `server.json` is trusted only when it is the invoking user's own and records a full identity:
//!
//! * a link planted as `run` or `data` in `server start --dir X`, as the instance directory
//!   itself, or in a kept work directory's `server/` (which older dbperfs gave the server user)
//!   is refused as bad input, and the directory it leads to keeps its mode, owner and contents;
//! * links planted at `steps/<step>.host.csv` and `steps/.<step>.series.csv.tmp` are replaced,
//!   never written through;
//! * a directory other users can write to (mode 0777, or through one on the way) or that
//!   another user owns is refused as bad input, and nothing is made in it;
//! * `server stop` signals nothing for a `server.json` without an identity (an older dbperf's)
//!   even when a live process names its data directory, nothing for one naming a process of
//!   root, and refuses a damaged, oversized, linked or foreign `server.json` as bad input;
//! * a managed server runs as the server user in `data/` and `run/` of its own, below an
//!   instance directory that stays root's.
//!
//! Tests that need root (a second local user, the server user) print a note and pass without it.

use crate::common;

use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::path::{Path, PathBuf};
use std::process::{Child, Output};
use std::time::{Duration, Instant};

use common::*;
use dbperf::server::identity::Identity;

/// dbperf with a server registry of this test's own.
fn run_in(state: &Path, args: &[&str]) -> Output {
    dbperf()
        .env("DBPERF_STATE_DIR", state)
        .args(args)
        .output()
        .expect("dbperf runs")
}

fn assert_bad_input(o: &Output, says: &str) {
    assert_eq!(o.status.code(), Some(2), "{}", text(o));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains(says), "expected {says:?}: {}", text(o));
    assert!(!err.contains("panicked"), "{}", text(o));
}

/// A directory of the test's own that a planted link leads to, with a mode to watch.
fn victim(tmp: &Path, name: &str) -> PathBuf {
    let v = tmp.join(name);
    std::fs::create_dir(&v).unwrap();
    std::fs::write(v.join("keep"), "precious").unwrap();
    std::fs::set_permissions(&v, std::fs::Permissions::from_mode(0o750)).unwrap();
    v
}

fn assert_untouched(v: &Path) {
    let m = std::fs::metadata(v).unwrap();
    assert_eq!(m.mode() & 0o7777, 0o750, "{} was chmodded", v.display());
    // SAFETY: geteuid has no preconditions.
    assert_eq!(
        m.uid(),
        unsafe { libc::geteuid() },
        "{} was chowned",
        v.display()
    );
    let names: Vec<_> = std::fs::read_dir(v)
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert_eq!(names, ["keep"], "something was made in {}", v.display());
    assert_eq!(std::fs::read_to_string(v.join("keep")).unwrap(), "precious");
}

/// `server start --dir X` with `run` or `data` planted in X as a link, or with X a link itself:
/// bad input, and the directory the link leads to is not chmodded, chowned or written into.
#[test]
fn links_planted_in_a_server_directory_are_refused_and_not_followed() {
    if !postgres() {
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    let state = tmp.path().join("state");
    for name in ["run", "data"] {
        let x = tmp.path().join(format!("inst-{name}"));
        std::fs::create_dir(&x).unwrap();
        let v = victim(tmp.path(), &format!("victim-{name}"));
        std::os::unix::fs::symlink(&v, x.join(name)).unwrap();
        let o = run_in(
            &state,
            &["server", "start", "postgres", "--dir", x.to_str().unwrap()],
        );
        assert_bad_input(&o, "is a symbolic link");
        assert_untouched(&v);
        assert!(!x.join("server.json").exists());
    }
    let v = victim(tmp.path(), "victim-dir");
    let link = tmp.path().join("inst-link");
    std::os::unix::fs::symlink(&v, &link).unwrap();
    let o = run_in(
        &state,
        &[
            "server",
            "start",
            "postgres",
            "--dir",
            link.to_str().unwrap(),
        ],
    );
    assert_bad_input(&o, "is a symbolic link");
    assert_untouched(&v);
}

/// A work directory kept from an earlier run whose `server/` an older dbperf gave the server
/// user, who planted `run -> victim` there: the next root run refuses before anything runs.
#[test]
fn a_link_planted_in_a_kept_work_directory_is_refused_before_anything_runs() {
    if !postgres() || attacker().is_none() {
        return;
    }
    let server_user = dbperf::server::process::server_user(None)
        .unwrap()
        .expect("root runs servers as another user");
    let tmp = tempfile::tempdir().unwrap();
    let work = tmp.path().join("w");
    let server = work.join("postgres.default/server");
    std::fs::create_dir_all(&server).unwrap();
    std::os::unix::fs::chown(&server, Some(server_user.uid), Some(server_user.gid)).unwrap();
    std::fs::set_permissions(&server, std::fs::Permissions::from_mode(0o700)).unwrap();
    let v = victim(tmp.path(), "victim");
    std::os::unix::fs::symlink(&v, server.join("run")).unwrap();
    let out = tmp.path().join("r");
    let o = run_in(
        &tmp.path().join("state"),
        &[
            "run",
            "--target",
            "postgres",
            "--steps",
            "l.i0",
            "--rows-l-i0",
            "1k",
            "--work-dir",
            work.to_str().unwrap(),
            "--out",
            out.to_str().unwrap(),
            "--no-progress",
        ],
    );
    assert_bad_input(&o, "is a symbolic link");
    assert_untouched(&v);
    assert!(
        !out.join("postgres.default/run.json").exists(),
        "nothing ran"
    );
}

/// Links planted at the names of a step's host series and of its series' temporary file are
/// unlinked and the files made afresh: what they led to is unchanged, the run is fine.
#[test]
fn links_planted_at_a_steps_files_are_not_written_through() {
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("r");
    let steps = out.join("sqlite.wal-normal/steps");
    std::fs::create_dir_all(&steps).unwrap();
    let host_victim = tmp.path().join("host-victim");
    let tmp_victim = tmp.path().join("tmp-victim");
    for v in [&host_victim, &tmp_victim] {
        std::fs::write(v, "precious").unwrap();
    }
    std::os::unix::fs::symlink(&host_victim, steps.join("l.i0.host.csv")).unwrap();
    std::os::unix::fs::symlink(&tmp_victim, steps.join(".l.i0.series.csv.tmp")).unwrap();
    let o = run_in(
        &tmp.path().join("state"),
        &[
            "run",
            "--steps",
            "l.i0",
            "--rows-l-i0",
            "1k",
            "--out",
            out.to_str().unwrap(),
            "--no-progress",
        ],
    );
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    for v in [&host_victim, &tmp_victim] {
        assert_eq!(
            std::fs::read_to_string(v).unwrap(),
            "precious",
            "{}",
            v.display()
        );
    }
    let host = steps.join("l.i0.host.csv");
    assert!(!std::fs::symlink_metadata(&host)
        .unwrap()
        .file_type()
        .is_symlink());
    assert!(std::fs::read_to_string(&host)
        .unwrap()
        .starts_with("unix_s,"));
    assert!(steps.join("l.i0.series.csv").is_file());
    assert!(
        !steps.join(".l.i0.series.csv.tmp").exists(),
        "renamed into place"
    );
}

/// Directories other users can write to, or reached through one, or owned by another user:
/// refused as bad input in one sentence, nothing made in them.
#[test]
fn directories_other_users_can_change_are_refused() {
    let tmp = tempfile::tempdir().unwrap();
    let state = tmp.path().join("state");
    let quick = |out: &Path, extra: &[&str]| {
        let mut args = vec![
            "run",
            "--steps",
            "l.i0",
            "--rows-l-i0",
            "1k",
            "--no-progress",
        ];
        args.extend_from_slice(&["--out", out.to_str().unwrap()]);
        args.extend_from_slice(extra);
        run_in(&state, &args)
    };
    let open = tmp.path().join("open");
    std::fs::create_dir(&open).unwrap();
    std::fs::set_permissions(&open, std::fs::Permissions::from_mode(0o777)).unwrap();
    let o = quick(&open, &[]);
    assert_bad_input(&o, "can be written by other users");
    assert_eq!(std::fs::read_dir(&open).unwrap().count(), 0, "{}", text(&o));
    // On the way to the result directory: someone could move it and put a link there.
    let o = quick(&open.join("r"), &[]);
    assert_bad_input(&o, "can be written by other users");
    assert!(!open.join("r").exists());
    // A work directory likewise.
    let out = tmp.path().join("r");
    let o = quick(&out, &["--work-dir", open.to_str().unwrap()]);
    assert_bad_input(&o, "can be written by other users");
    assert_eq!(std::fs::read_dir(&open).unwrap().count(), 0);
    if postgres() {
        let o = run_in(
            &state,
            &[
                "server",
                "start",
                "postgres",
                "--dir",
                open.to_str().unwrap(),
            ],
        );
        assert_bad_input(&o, "can be written by other users");
        assert_eq!(std::fs::read_dir(&open).unwrap().count(), 0);
    }
    let Some((uid, gid)) = attacker() else { return };
    let theirs = tmp.path().join("theirs");
    std::fs::create_dir(&theirs).unwrap();
    std::os::unix::fs::chown(&theirs, Some(uid), Some(gid)).unwrap();
    let o = quick(&theirs, &[]);
    assert_bad_input(&o, "belongs to another user");
    assert_eq!(std::fs::read_dir(&theirs).unwrap().count(), 0);
    let o = quick(&theirs.join("r"), &[]);
    assert_bad_input(&o, "belongs to another user");
    assert!(!theirs.join("r").exists());
}

/// A `sleep` standing for a process a record names, killed when dropped.
struct Sleeper(Child, Identity);

impl Sleeper {
    /// Its command line names `datadir`, as a server's would.
    fn naming(datadir: &Path) -> Sleeper {
        use std::os::unix::process::CommandExt;
        let arg0 = format!("sleep --datadir={}", datadir.display());
        let child = std::process::Command::new("sleep")
            .arg0(&arg0)
            .arg("1000")
            .spawn()
            .unwrap();
        let start = Instant::now();
        let id = loop {
            if let Some(id) = Identity::of(child.id()).filter(|i| i.cmdline[0] == arg0) {
                break id;
            }
            assert!(start.elapsed() < Duration::from_secs(5), "sleep runs");
            std::thread::sleep(Duration::from_millis(1));
        };
        Sleeper(child, id)
    }
}

impl Drop for Sleeper {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

fn server_json(dir: &Path, pid: u32, server: Option<&Identity>) -> String {
    let mut state = serde_json::json!({
        "schema": 1, "target": "postgres.default", "engine": "postgres", "pid": pid,
        "port": 1, "socket": "", "datadir": dir.join("data"), "log": "", "connect": "",
    });
    if let Some(s) = server {
        state["server"] = serde_json::to_value(s).unwrap();
    }
    state.to_string()
}

fn stop(state: &Path, dir: &Path) -> Output {
    run_in(
        state,
        &["server", "stop", "postgres", "--dir", dir.to_str().unwrap()],
    )
}

/// An older dbperf's `server.json` has no identity: however well a live process matches its
/// data directory, nothing is signalled, and the sentence says how to stop the server by hand.
#[test]
fn a_server_json_without_an_identity_signals_nothing() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("pg");
    std::fs::create_dir(&dir).unwrap();
    let sleep = Sleeper::naming(&dir.join("data"));
    assert!(sleep.1.mentions(&dir.join("data")));
    std::fs::write(
        dir.join("server.json"),
        server_json(&dir, sleep.1.pid, None),
    )
    .unwrap();
    let o = stop(&tmp.path().join("state"), &dir);
    assert_bad_input(&o, "does not record which process the server is");
    assert!(text(&o).contains("pgrep -af"), "{}", text(&o));
    assert!(sleep.1.is_alive_same(), "a legacy record was signalled");
    assert!(
        dir.join("server.json").exists(),
        "the record is left for the user"
    );
}

/// A `server.json` recording the full identity of a live process of root that names the data
/// directory: dbperf never runs a server as root, so it is not signalled.
#[test]
fn a_server_json_naming_a_process_of_root_signals_nothing() {
    if !is_root() {
        eprintln!("note: not root, so no process of root to name; skipped");
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("pg");
    std::fs::create_dir(&dir).unwrap();
    let sleep = Sleeper::naming(&dir.join("data"));
    let json = server_json(&dir, sleep.1.pid, Some(&sleep.1));
    std::fs::write(dir.join("server.json"), json).unwrap();
    let o = stop(&tmp.path().join("state"), &dir);
    assert_bad_input(&o, "names a process of root");
    assert!(sleep.1.is_alive_same(), "a process of root was signalled");
}

/// `server.json` is untrusted input: damaged, oversized, a link, or another user's (who could
/// have written any process into it) is one sentence of bad input, and nothing is signalled.
#[test]
fn an_untrustworthy_server_json_is_bad_input() {
    let tmp = tempfile::tempdir().unwrap();
    let state = tmp.path().join("state");
    let dir = tmp.path().join("pg");
    std::fs::create_dir(&dir).unwrap();
    let file = dir.join("server.json");
    std::fs::write(&file, "{\"schema\": 1, \"target\":").unwrap();
    assert_bad_input(&stop(&state, &dir), "is damaged");
    std::fs::write(&file, " ".repeat(100 * 1024)).unwrap();
    assert_bad_input(&stop(&state, &dir), "larger than 65536 bytes");
    let sleep = Sleeper::naming(&dir.join("data"));
    let elsewhere = tmp.path().join("elsewhere.json");
    std::fs::write(&elsewhere, server_json(&dir, sleep.1.pid, Some(&sleep.1))).unwrap();
    std::fs::remove_file(&file).unwrap();
    std::os::unix::fs::symlink(&elsewhere, &file).unwrap();
    assert_bad_input(&stop(&state, &dir), "is a symbolic link");
    assert!(sleep.1.is_alive_same());
    let Some((uid, gid)) = attacker() else { return };
    std::fs::remove_file(&file).unwrap();
    std::fs::copy(&elsewhere, &file).unwrap();
    std::os::unix::fs::chown(&file, Some(uid), Some(gid)).unwrap();
    assert_bad_input(
        &stop(&state, &dir),
        "an instance's server.json decides what dbperf does",
    );
    assert!(sleep.1.is_alive_same());
}

/// As root, a managed PostgreSQL runs as the server user in `data/` and `run/` that are its
/// own (0700), below an instance directory that stays root's and is only searchable (0711);
/// `server stop --remove` stops it and removes the directory.
#[test]
fn a_managed_server_owns_its_data_and_run_directories_only() {
    if !postgres() || !is_root() {
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    let state = tmp.path().join("state");
    let dir = tmp.path().join("pg");
    let d = dir.to_str().unwrap();
    let o = run_in(&state, &["server", "start", "postgres", "--dir", d]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    let user = dbperf::server::process::lookup_user("dbperf").expect("the server user");
    let owner_mode = |p: &Path| {
        let m = std::fs::symlink_metadata(p).unwrap();
        (m.uid(), m.mode() & 0o7777)
    };
    let layout = (
        owner_mode(&dir),
        owner_mode(&dir.join("data")),
        owner_mode(&dir.join("run")),
        owner_mode(&dir.join("server.json")).0,
    );
    let json: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("server.json")).unwrap()).unwrap();
    let o = run_in(
        &state,
        &["server", "stop", "postgres", "--dir", d, "--remove"],
    );
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    assert!(!dir.exists(), "removed");
    assert_eq!(
        layout,
        ((0, 0o711), (user.uid, 0o700), (user.uid, 0o700), 0),
        "instance, data, run, server.json: (owner, mode)"
    );
    assert_eq!(json["server"]["uid"], user.uid, "{json}");
}
