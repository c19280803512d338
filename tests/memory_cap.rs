//! `--server-memory`: a memory cgroup per managed server (docs/io-bound.md).
//!
//! * a capped PostgreSQL with about twice the cap in data reads from disk on point queries (at
//!   least 0.2 reads per query, measured), run.json records the cap, the config is sized for it,
//!   the report calls the step IO-bound, and no cgroup is left;
//! * a dbperf killed mid-step leaves the cgroup of its (dead) server, and the next run's sweep
//!   removes it;
//! * SQLite, external servers, caps too small, and the io-bound presets without a cap are one
//!   sentence and exit 2;
//! * a cgroup of the name dbperf would give its cap (with a child cgroup holding a process) is
//!   never used nor changed, and neither it nor a hand-made empty `dbperf-admin-keep-*` over a
//!   minute old is swept by a capped run, whose steps say the cap held;
//! * a cap changed behind dbperf's back mid-step marks the step as not held to it (its
//!   `memory_cap`, its warnings, stderr and the report).

use crate::common;

use std::path::{Path, PathBuf};
use std::process::{Output, Stdio};
use std::time::{Duration, Instant};

use common::{dbperf, text};

const CONTROLLER_V1: &str = "/sys/fs/cgroup/memory";

fn run(state: &Path, args: &[&str]) -> Output {
    dbperf()
        .env("DBPERF_STATE_DIR", state)
        .args(["run", "--no-progress", "--no-calibration"])
        .args(args)
        .output()
        .unwrap()
}

fn json(p: &Path) -> serde_json::Value {
    serde_json::from_str(&std::fs::read_to_string(p).unwrap()).unwrap()
}

/// The `dbperf-*` cgroups under this host's memory controller.
fn dbperf_cgroups() -> Vec<PathBuf> {
    let root = dbperf::server::cgroup::Controller::find(Path::new("/sys"));
    let Some(root) = root.map(|c| match c {
        dbperf::server::cgroup::Controller::V1(p) | dbperf::server::cgroup::Controller::V2(p) => p,
    }) else {
        return Vec::new();
    };
    std::fs::read_dir(root)
        .unwrap()
        .flatten()
        .filter(|e| e.file_name().to_string_lossy().starts_with("dbperf-"))
        .map(|e| e.path())
        .collect()
}

/// Whether this host can cap a server here; when it cannot, the flag must be refused.
fn can_cap(state: &Path) -> bool {
    let controller = Path::new(CONTROLLER_V1)
        .join("memory.limit_in_bytes")
        .exists()
        || has_v2();
    if common::is_root() && controller {
        return true;
    }
    let out = state.with_file_name("refused");
    let o = run(
        state,
        &[
            "--target",
            "postgres",
            "--server-memory",
            "256M",
            "--out",
            out.to_str().unwrap(),
        ],
    );
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    assert!(!out.exists());
    eprintln!("note: no root or no memory controller, so no server is capped here");
    false
}

fn has_v2() -> bool {
    std::fs::read_to_string("/sys/fs/cgroup/cgroup.controllers")
        .is_ok_and(|c| c.split_whitespace().any(|x| x == "memory"))
}

#[test]
fn a_capped_postgres_reads_point_queries_from_disk_and_leaves_no_cgroup() {
    if !common::postgres() {
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    let state = tmp.path().join("state");
    if !can_cap(&state) {
        return;
    }
    let out = tmp.path().join("r");
    let before = dbperf_cgroups();
    let o = run(
        &state,
        &[
            "--suite",
            "sysbench",
            "--target",
            "postgres",
            "--server-memory",
            "256M",
            "--tests",
            "point-query",
            "--rows",
            "2M",
            "--read-seconds",
            "5",
            "--warmup-seconds",
            "0",
            "--out",
            out.to_str().unwrap(),
        ],
    );
    assert!(o.status.success(), "{}", text(&o));
    let dir = out.join("postgres.default");
    let runf = json(&dir.join("run.json"));
    let cap = &runf["target"]["server"]["memory_cap"];
    assert_eq!(cap["bytes"], 256u64 << 20, "{runf}");
    assert!(
        cap["enforced_by"].as_str().unwrap().starts_with("cgroup v"),
        "{cap}"
    );
    // The default config's 512MB of shared_buffers would not fit: a quarter of the cap.
    let config = runf["target"]["config_text"].as_str().unwrap();
    assert!(config.contains("shared_buffers = 64MB"), "{config}");
    let step = json(&dir.join("steps/point-query_range=100.json"));
    assert_eq!(step["status"], "ok", "{}", step["error"]);
    let per_op = &step["hardware"]["per_op"];
    let reads = per_op["reads"].as_f64().unwrap();
    assert!(
        reads >= 0.2,
        "{reads} disk reads per query under a 256 MiB cap with about 500 MB of data: {per_op}"
    );
    let md = std::fs::read_to_string(out.join("report.md")).unwrap();
    let row = md
        .lines()
        .find(|l| l.starts_with("| postgres.default · point-query_range=100 | "))
        .unwrap_or_else(|| panic!("no residency row: {md}"));
    assert!(row.contains("| IO-bound |"), "{row}");
    assert!(md.contains("sized for a 256 MiB cap"), "{md}");
    let left: Vec<PathBuf> = dbperf_cgroups()
        .into_iter()
        .filter(|c| !before.contains(c))
        .collect();
    assert!(left.is_empty(), "cgroups left behind: {left:?}");
}

/// A dbperf SIGKILLed mid-step: its server dies with it (the parent-death signal) and leaves an
/// empty cgroup its registry entry names; the next dbperf's sweep removes it.
#[test]
fn the_cgroup_of_a_killed_dbperfs_server_is_swept_by_the_next_run() {
    if !common::postgres() {
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    let state = tmp.path().join("state");
    if !can_cap(&state) {
        return;
    }
    let out = tmp.path().join("r");
    let mut child = dbperf()
        .env("DBPERF_STATE_DIR", &state)
        .args([
            "run",
            "--no-progress",
            "--target",
            "postgres",
            "--server-memory",
            "128M",
            "--steps",
            "l.i0",
            "--rows-l-i0",
            "5M",
            "--out",
            out.to_str().unwrap(),
        ])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let series = out.join("postgres.default/steps/.l.i0.series.csv.tmp");
    let start = Instant::now();
    while !series.exists() {
        assert!(
            start.elapsed() < Duration::from_secs(120),
            "l.i0 did not start"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
    let entries = registry_cgroups(&state);
    assert_eq!(entries.len(), 1, "{entries:?}");
    let cg = PathBuf::from(&entries[0]);
    assert!(cg.is_dir(), "{cg:?}");
    child.kill().unwrap();
    child.wait().unwrap();
    // The server follows its dbperf; its cgroup stays, empty.
    let start = Instant::now();
    while !std::fs::read_to_string(cg.join("cgroup.procs"))
        .unwrap_or_default()
        .trim()
        .is_empty()
    {
        assert!(
            start.elapsed() < Duration::from_secs(30),
            "the server outlived its dbperf"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
    assert!(cg.is_dir());
    let o = run(
        &state,
        &[
            "--steps",
            "l.i0",
            "--rows-l-i0",
            "1000",
            "--out",
            tmp.path().join("next").to_str().unwrap(),
        ],
    );
    assert!(o.status.success(), "{}", text(&o));
    assert!(!cg.exists(), "{cg:?} was not swept");
}

/// The cgroups the registry under `state` records.
fn registry_cgroups(state: &Path) -> Vec<String> {
    let mut out = Vec::new();
    for e in walk(state) {
        if e.extension().is_some_and(|x| x == "json") {
            if let Ok(v) = serde_json::from_str::<serde_json::Value>(
                &std::fs::read_to_string(&e).unwrap_or_default(),
            ) {
                if let Some(c) = v["cgroup"].as_str() {
                    out.push(c.to_string());
                }
            }
        }
    }
    out
}

fn walk(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    for e in std::fs::read_dir(dir).into_iter().flatten().flatten() {
        let p = e.path();
        if p.is_dir() {
            out.extend(walk(&p));
        } else {
            out.push(p);
        }
    }
    out
}

#[test]
fn caps_dbperf_cannot_set_are_one_sentence_and_exit_2() {
    let tmp = tempfile::tempdir().unwrap();
    let state = tmp.path().join("state");
    let toml = tmp.path().join("dbperf.toml");
    std::fs::write(
        &toml,
        r#"
[target.ext]
engine = "postgres"
host = "127.0.0.1"
port = 1
server_memory = "512M"

[target.lite]
engine = "sqlite"
server_memory = "512M"

[campaign.small]
targets = ["postgres"]
server_memory = "1M"
"#,
    )
    .unwrap();
    let cfg = toml.to_str().unwrap();
    let out = tmp.path().join("never");
    let o_ = out.to_str().unwrap();
    for (args, want) in [
        (vec!["--server-memory", "512M", "--out", o_], "cache_size"),
        (
            vec![
                "--target",
                "postgres",
                "--server-memory",
                "10M",
                "--out",
                o_,
            ],
            "64 MiB",
        ),
        (
            vec!["--target", "postgres", "--preset", "io-bound", "--out", o_],
            "--server-memory",
        ),
        (
            vec![
                "--target",
                "postgres",
                "--server-memory",
                "100000G",
                "--out",
                o_,
            ],
            "RAM",
        ),
        (
            vec![
                "--suite", "sysbench", "--target", "postgres", "--preset", "io-bound", "--out", o_,
            ],
            "--server-memory",
        ),
        (
            vec!["--config-file", cfg, "--target", "ext", "--out", o_],
            "does not start",
        ),
        (
            vec!["--config-file", cfg, "--target", "lite", "--out", o_],
            "cache_size",
        ),
        (
            vec!["--config-file", cfg, "--campaign", "small", "--out", o_],
            "server_memory",
        ),
    ] {
        let o = run(&state, &args);
        let e = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(2), "{args:?}: {}", text(&o));
        // One sentence (clap adds its pointer to --help after a bad value).
        let first = e.lines().next().unwrap_or_default();
        assert!(first.contains(want), "{args:?}: {e}");
        assert!(
            e.trim().lines().count() == 1 || e.contains("try '--help'"),
            "{args:?}: {e}"
        );
        assert!(!out.exists(), "{args:?} made {out:?}");
    }
}

/// A server the kernel kills for going over its cap fails with that as the first cause, not
/// only "lost connection"; and a cap too small for the engine is refused before anything runs.
#[test]
fn a_server_killed_for_going_over_its_cap_is_said_to_be() {
    if !common::postgres() {
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    let state = tmp.path().join("state");
    if !can_cap(&state) {
        return;
    }
    let out = tmp.path().join("r");
    // shared_buffers of 1GB under a 64 MiB cap: killed as it starts to use them.
    let o = run(
        &state,
        &[
            "--suite",
            "sysbench",
            "--target",
            "postgres",
            "--server-memory",
            "64M",
            "--vary",
            "shared_buffers=1GB,16MB",
            "--tests",
            "point-query",
            "--rows",
            "1000",
            "--read-seconds",
            "1",
            "--warmup-seconds",
            "0",
            "--out",
            out.to_str().unwrap(),
        ],
    );
    assert_eq!(o.status.code(), Some(1), "{}", text(&o));
    let dirs: Vec<_> = std::fs::read_dir(&out)
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.join("run.json").is_file())
        .collect();
    let errors: Vec<String> = dirs
        .iter()
        .map(|d| json(&d.join("run.json"))["error"].to_string())
        .collect();
    assert!(
        errors.iter().any(|e| e.contains("the kernel killed")
            && e.contains("64 MiB memory cap (--server-memory)")),
        "{errors:?}"
    );
    // The 16MB level ran.
    assert!(errors.iter().any(|e| e == "null"), "{errors:?}");
    if !common::mariadb(false) {
        return;
    }
    let o = run(
        &state,
        &[
            "--target",
            "mariadb",
            "--server-memory",
            "128M",
            "--out",
            tmp.path().join("never").to_str().unwrap(),
        ],
    );
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    assert!(text(&o).contains("at least 256 MiB"), "{}", text(&o));
}

/// The memory controller's root on this host.
fn controller_root() -> Option<PathBuf> {
    dbperf::server::cgroup::Controller::find(Path::new("/sys")).map(|c| match c {
        dbperf::server::cgroup::Controller::V1(p) | dbperf::server::cgroup::Controller::V2(p) => p,
    })
}

/// A cgroup someone made by hand, removed (with its child and the process in it) when the test
/// ends however it ends.
struct HandMade {
    dir: PathBuf,
    sleeper: Option<std::process::Child>,
}

impl HandMade {
    /// `name` under the controller's root, over a minute old; with `child`, a child cgroup
    /// holding a process of its own.
    fn new(root: &Path, name: &str, child: bool) -> HandMade {
        let dir = root.join(name);
        std::fs::create_dir(&dir).unwrap();
        let mut h = HandMade { dir, sleeper: None };
        if child {
            std::fs::create_dir(h.dir.join("child")).unwrap();
            let s = std::process::Command::new("sleep")
                .arg("600")
                .spawn()
                .unwrap();
            std::fs::write(h.dir.join("child/cgroup.procs"), s.id().to_string()).unwrap();
            h.sleeper = Some(s);
        }
        let old = std::time::SystemTime::now() - Duration::from_secs(120);
        let f = std::fs::File::open(&h.dir).unwrap();
        f.set_times(
            std::fs::FileTimes::new()
                .set_modified(old)
                .set_accessed(old),
        )
        .unwrap();
        h
    }

    /// What tells this directory apart: its inode, its modification time, the limit it has and
    /// the processes of its child.
    fn state(&self) -> (u64, std::time::SystemTime, String, String) {
        use std::os::unix::fs::MetadataExt;
        let m = std::fs::metadata(&self.dir).unwrap();
        let read = |f: &str| std::fs::read_to_string(self.dir.join(f)).unwrap_or_default();
        let limit = ["memory.limit_in_bytes", "memory.max"].map(read).concat();
        (
            m.ino(),
            m.modified().unwrap(),
            limit,
            read("child/cgroup.procs"),
        )
    }
}

impl Drop for HandMade {
    fn drop(&mut self) {
        if let Some(mut s) = self.sleeper.take() {
            let _ = s.kill();
            let _ = s.wait();
        }
        let until = Instant::now() + Duration::from_secs(10);
        while std::fs::remove_dir(self.dir.join("child")).is_err()
            && self.dir.join("child").exists()
            && Instant::now() < until
        {
            std::thread::sleep(Duration::from_millis(50));
        }
        let _ = std::fs::remove_dir(&self.dir);
    }
}

/// Issue 45, cases 4 and 5, on the real kernel: a cgroup of the name dbperf would give its next
/// cap (empty itself, with a child cgroup holding a process) is never used nor changed, the next
/// name is; and a capped run's sweep removes neither it nor a hand-made empty
/// `dbperf-admin-keep-*` over a minute old. The run's steps say the cap held.
#[test]
fn a_capped_run_takes_over_no_cgroup_and_sweeps_none_it_did_not_record() {
    if !common::postgres() {
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    let state = tmp.path().join("state");
    if !can_cap(&state) {
        return;
    }
    let root = controller_root().unwrap();
    let me = std::process::id();
    let keep = HandMade::new(&root, &format!("dbperf-admin-keep-{me}"), false);
    let taken = HandMade::new(&root, &format!("dbperf-taken-{me}"), true);
    let before = (keep.state(), taken.state());
    // The cap dbperf makes for a server named `taken-<pid>`: the name after.
    let c = dbperf::server::cgroup::Controller::find(Path::new("/sys")).unwrap();
    let records =
        dbperf::server::cgroup_records::Records::open(&tmp.path().join("records")).unwrap();
    let cap = dbperf::server::cgroup::Cap::create(&c, &format!("taken-{me}"), 256 << 20, &records)
        .unwrap();
    assert_eq!(cap.dir, root.join(format!("dbperf-taken-{me}-2")));
    let limit = std::fs::read_to_string(cap.dir.join("memory.limit_in_bytes"))
        .or_else(|_| std::fs::read_to_string(cap.dir.join("memory.max")))
        .unwrap();
    assert_eq!(limit.trim(), (256u64 << 20).to_string());
    assert_eq!(records.list().len(), 1);
    assert!(cap.remove() && !cap.dir.exists());
    assert!(records.list().is_empty(), "its record went with it");

    let out = tmp.path().join("r");
    let o = run(
        &state,
        &[
            "--suite",
            "sysbench",
            "--target",
            "postgres",
            "--server-memory",
            "256M",
            "--tests",
            "point-query",
            "--rows",
            "10000",
            "--read-seconds",
            "1",
            "--warmup-seconds",
            "0",
            "--out",
            out.to_str().unwrap(),
        ],
    );
    assert!(o.status.success(), "{}", text(&o));
    assert_eq!(
        (keep.state(), taken.state()),
        before,
        "a hand-made cgroup changed"
    );
    let step = json(&out.join("postgres.default/steps/point-query_range=100.json"));
    let held = &step["memory_cap"];
    assert_eq!(held["held"], true, "{held}");
    assert_eq!(held["bytes"], 256u64 << 20, "{held}");
    assert_eq!(held["limit_bytes"], 256u64 << 20, "{held}");
    assert!(held["peak_bytes"].as_u64().is_some_and(|p| p > 0), "{held}");
    assert!(held["why_not"].is_null(), "{held}");
    assert!(step["warnings"].as_array().unwrap().is_empty(), "{step}");
}

/// Case 4's other half: the cap lowered behind dbperf's back mid-step (a raise works the same)
/// is read back at the end of the step, which says it was not held: in its `memory_cap`, its
/// warnings and the report; the step before, read back before the change, held.
#[test]
fn a_step_whose_cap_was_changed_is_marked_not_held() {
    if !common::postgres() {
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    let state = tmp.path().join("state");
    if !can_cap(&state) {
        return;
    }
    let out = tmp.path().join("r");
    let child = dbperf()
        .env("DBPERF_STATE_DIR", &state)
        .args([
            "run",
            "--no-progress",
            "--no-calibration",
            "--suite",
            "sysbench",
        ])
        .args(["--target", "postgres", "--server-memory", "256M"])
        .args(["--tests", "point-query", "--rows", "10000"])
        .args(["--read-seconds", "5", "--warmup-seconds", "0"])
        .arg("--out")
        .arg(&out)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let steps = out.join("postgres.default/steps");
    let series = steps.join(".point-query_range=100.series.csv.tmp");
    let start = Instant::now();
    while !series.exists() {
        assert!(
            start.elapsed() < Duration::from_secs(120),
            "point-query did not start"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
    let cgroups = registry_cgroups(&state);
    assert_eq!(cgroups.len(), 1, "{cgroups:?}");
    let cg = PathBuf::from(&cgroups[0]);
    let file = ["memory.limit_in_bytes", "memory.max"]
        .map(|f| cg.join(f))
        .into_iter()
        .find(|f| f.exists())
        .unwrap();
    std::fs::write(&file, (255u64 << 20).to_string()).unwrap();
    let o = child.wait_with_output().unwrap();
    assert!(o.status.success(), "{}", text(&o));
    let load = json(&steps.join("load.json"));
    assert_eq!(load["memory_cap"]["held"], true, "{load}");
    let step = json(&steps.join("point-query_range=100.json"));
    let cap = &step["memory_cap"];
    assert_eq!(cap["held"], false, "{cap}");
    assert_eq!(cap["limit_bytes"], 255u64 << 20, "{cap}");
    let why = cap["why_not"].as_str().unwrap();
    assert!(
        why.contains(&format!(
            "{} bytes, not the {} asked",
            255u64 << 20,
            256u64 << 20
        )),
        "{why}"
    );
    let warned = step["warnings"].as_array().unwrap();
    assert!(
        warned
            .iter()
            .any(|w| w.as_str().unwrap().contains("not held to its 256 MiB")),
        "{step}"
    );
    assert!(text(&o).contains("not held to its 256 MiB"), "{}", text(&o));
    let md = std::fs::read_to_string(out.join("report.md")).unwrap();
    assert!(
        md.contains("step point-query_range=100: the server was not held to its 256 MiB"),
        "{md}"
    );
    assert!(!cg.exists(), "{cg:?} left behind");
}
