//! `dbperf run --slurm` on a real one-node Slurm cluster of its own (scripts/slurm-cluster.sh:
//! its own slurm.conf, munge socket, state and ports under a temporary directory; nothing of a
//! Slurm the machine may have is used). A user who is not root submits a 4-shard SQLite
//! campaign with a relative --out, one task is cancelled while its cell runs, the report job
//! refuses the incomplete campaign, `--resume --slurm` submits that shard alone, and the report
//! job then writes the whole campaign's report. Asserts cells, shards and reports, not timings.

use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::time::{Duration, Instant};

use serde_json::Value;

use crate::common::{is_root, text};

/// Who submits: not root, as a benchmark user on a cluster is.
const USER: &str = "nobody";
const SCRIPT: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/scripts/slurm-cluster.sh");

/// The cluster, stopped (jobs cancelled, daemons by pid) however the test ends.
struct Cluster {
    dir: PathBuf,
}

impl Cluster {
    fn up(dir: &Path) -> Cluster {
        // Two ports the kernel has free now (the listeners close before the daemons bind).
        let ports: Vec<String> = (0..2)
            .map(|_| std::net::TcpListener::bind("127.0.0.1:0").unwrap())
            .collect::<Vec<_>>()
            .iter()
            .map(|l| l.local_addr().unwrap().port().to_string())
            .collect();
        let c = Cluster {
            dir: dir.to_path_buf(),
        };
        let o = Command::new("timeout")
            .args(["120", "bash", SCRIPT, "up"])
            .arg(dir)
            .args(&ports)
            .output()
            .unwrap();
        assert!(
            o.status.success(),
            "the cluster did not start: {}",
            text(&o)
        );
        c
    }

    fn conf(&self) -> PathBuf {
        self.dir.join("slurm.conf")
    }

    /// A command as `USER`, in `cwd`, with this cluster's config.
    fn as_user(&self, cwd: &Path, program: &Path, args: &[&str]) -> Output {
        Command::new("runuser")
            .args(["-u", USER, "--", "env", "-i"])
            .arg(format!("SLURM_CONF={}", self.conf().display()))
            .args([
                "PATH=/usr/local/bin:/usr/bin:/bin",
                "NO_COLOR=1",
                "LC_ALL=C",
            ])
            .arg(format!("HOME={}", cwd.display()))
            .arg(program)
            .args(args)
            .current_dir(cwd)
            .output()
            .unwrap()
    }

    /// The job ids Slurm has queued or running (`%F`: an array's own id for each of its tasks).
    fn queued(&self) -> Vec<String> {
        let o = Command::new("squeue")
            .args(["--noheader", "--format=%F"])
            .env("SLURM_CONF", self.conf())
            .output()
            .unwrap();
        assert!(o.status.success(), "squeue: {}", text(&o));
        String::from_utf8_lossy(&o.stdout)
            .lines()
            .map(|l| l.trim().to_string())
            .collect()
    }

    fn logs(&self) -> String {
        ["slurmctld.log", "slurmd.log"]
            .iter()
            .map(|f| {
                let t = std::fs::read_to_string(self.dir.join("log").join(f)).unwrap_or_default();
                let lines: Vec<&str> = t.lines().collect();
                format!(
                    "--- {f}\n{}",
                    lines[lines.len().saturating_sub(15)..].join("\n")
                )
            })
            .collect::<Vec<_>>()
            .join("\n")
    }
}

impl Drop for Cluster {
    fn drop(&mut self) {
        let _ = Command::new("timeout")
            .args(["180", "bash", SCRIPT, "down"])
            .arg(&self.dir)
            .output();
    }
}

/// Polls `done` every 200 ms for at most `limit`; panics with `why()` after it.
fn wait_until(
    limit: Duration,
    what: &str,
    mut done: impl FnMut() -> bool,
    why: impl Fn() -> String,
) {
    let start = Instant::now();
    while !done() {
        assert!(
            start.elapsed() < limit,
            "{what}: not within {limit:?}\n{}",
            why()
        );
        std::thread::sleep(Duration::from_millis(200));
    }
}

fn json(p: &Path) -> Value {
    serde_json::from_str(&std::fs::read_to_string(p).unwrap_or_default()).unwrap_or(Value::Null)
}

/// Shard k's own cells and their states (`elsewhere` cells left out).
fn own_cells(res: &Path, k: u32) -> Vec<(String, String, u64)> {
    json(&res.join(format!("s{k}")).join("campaign.json"))["cells"]
        .as_array()
        .map(|cs| {
            cs.iter()
                .filter(|c| c["state"] != "elsewhere")
                .map(|c| {
                    (
                        c["id"].as_str().unwrap_or("").to_string(),
                        c["state"].as_str().unwrap_or("").to_string(),
                        c["attempts"].as_u64().unwrap_or(0),
                    )
                })
                .collect()
        })
        .unwrap_or_default()
}

fn installed() -> bool {
    let found = ["slurmctld", "slurmd", "sbatch", "munged", "mungekey"]
        .iter()
        .all(|p| {
            ["/usr/sbin", "/usr/bin"]
                .iter()
                .any(|d| Path::new(d).join(p).is_file())
        });
    if !found {
        assert!(
            std::env::var_os("CI").is_none(),
            "CI must have Slurm and munge (scripts/install-test-deps.sh installs them)"
        );
        eprintln!(
            "skipped: Slurm or munge is not installed (scripts/install-test-deps.sh installs them)"
        );
    }
    found
}

#[test]
fn a_campaign_submitted_to_slurm_runs_every_shard_and_a_cancelled_one_is_submitted_again() {
    if !is_root() {
        eprintln!("skipped: a Slurm cluster of the test's own needs root to start slurmd");
        return;
    }
    if !installed() {
        return;
    }
    let tmp = tempfile::Builder::new()
        .prefix("dbperf-slurm-")
        .tempdir_in("/tmp")
        .unwrap();
    let root = tmp.path();
    std::fs::set_permissions(root, std::fs::Permissions::from_mode(0o755)).unwrap();
    // The user's own copy of dbperf and their work directory, where dbperf.toml is.
    let bin = root.join("bin");
    std::fs::create_dir(&bin).unwrap();
    let dbperf = bin.join("dbperf");
    std::fs::copy(env!("CARGO_BIN_EXE_dbperf"), &dbperf).unwrap();
    std::fs::set_permissions(&dbperf, std::fs::Permissions::from_mode(0o755)).unwrap();
    let work = root.join("work");
    std::fs::create_dir(&work).unwrap();
    let nobody = dbperf::server::process::lookup_user(USER).expect("a user nobody");
    std::os::unix::fs::chown(&work, Some(nobody.uid), Some(nobody.gid)).unwrap();
    std::fs::write(
        work.join("dbperf.toml"),
        "[campaign.modes]\n\
         targets = [\"sqlite\", \"sqlite:wal-full\", \"sqlite:delete-full\", \"sqlite:wal-off\"]\n\
         [campaign.modes.ibench]\n\
         steps = \"l.i0,qr100\"\n\
         rows_l_i0 = \"20k\"\n\
         query_seconds = 3\n",
    )
    .unwrap();
    let cluster = Cluster::up(&root.join("cluster"));
    let res = work.join("res");
    let queued_or_logs = || format!("queued: {:?}\n{}", cluster.queued(), cluster.logs());

    // sbatch refusing (no such partition), and an option dbperf sets itself (the array),
    // however spelt, refused before sbatch is asked: one sentence, exit 2, nothing recorded.
    for (arg, said) in [
        (
            "--sbatch-arg=--partition=no-such-partition",
            "sbatch refused the job",
        ),
        ("--sbatch-arg=--array=1", "dbperf sets that option"),
        (
            "--sbatch-arg=--arr=1",
            "sbatch's --array, and dbperf sets that option",
        ),
        (
            "--sbatch-arg=-Ha1",
            "sbatch's --array, and dbperf sets that option",
        ),
    ] {
        let args = [
            "run",
            "--campaign",
            "modes",
            "--slurm",
            "4",
            "--out",
            "bad",
            arg,
        ];
        let o = cluster.as_user(&work, &dbperf, &args);
        assert_eq!(o.status.code(), Some(2), "{}", text(&o));
        assert!(text(&o).contains(said), "{}", text(&o));
        assert!(!work.join("bad/slurm/submit.json").exists());
    }

    // Submitted as a new user types it: a relative --out.
    let o = cluster.as_user(
        &work,
        &dbperf,
        &["run", "--campaign", "modes", "--slurm", "4", "--out", "res"],
    );
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    assert_eq!(
        String::from_utf8_lossy(&o.stdout).trim(),
        res.join("report/report.html").display().to_string()
    );
    let sub = json(&res.join("slurm/submit.json"));
    let array = sub["jobs"][0]["array"].as_str().unwrap().to_string();
    let report = sub["jobs"][0]["report"].as_str().unwrap().to_string();
    assert_eq!(sub["shards"], 4, "{sub}");

    // Task 2 cancelled once its journal says its cell runs (scancel: SIGTERM to dbperf).
    wait_until(
        Duration::from_secs(240),
        "shard 2's cell running",
        || own_cells(&res, 2).iter().any(|c| c.1 == "running"),
        queued_or_logs,
    );
    let o = cluster.as_user(
        &work,
        Path::new("/usr/bin/scancel"),
        &[&format!("{array}_2")],
    );
    assert!(o.status.success(), "{}", text(&o));
    wait_until(
        Duration::from_secs(300),
        "the array and the report job to end",
        || {
            let q = cluster.queued();
            !q.contains(&array) && !q.contains(&report)
        },
        queued_or_logs,
    );
    for k in [1, 3, 4] {
        let cells = own_cells(&res, k);
        assert_eq!(cells.len(), 1, "shard {k}: {cells:?}");
        assert_eq!(cells[0].1, "done", "shard {k}: {cells:?}");
    }
    assert_eq!(
        own_cells(&res, 2)[0].1,
        "interrupted",
        "{:?}",
        own_cells(&res, 2)
    );
    // Every file of the campaign is the user's: the tasks ran as the user who submitted.
    let owner = std::fs::metadata(res.join("s1/campaign.json"))
        .unwrap()
        .uid();
    assert_eq!(owner, nobody.uid);
    // The report job saw an incomplete campaign and wrote nothing.
    let log = std::fs::read_to_string(res.join("slurm/report.log")).unwrap_or_default();
    assert!(
        log.contains("incomplete: campaign modes, shard 2/4 is not complete"),
        "{log}"
    );
    assert!(!res.join("report/report.html").exists(), "{log}");
    // So does a report over three of the four shards, by their names.
    let three: Vec<String> = [1, 3, 4]
        .iter()
        .map(|k| res.join(format!("s{k}")).display().to_string())
        .collect();
    let mut args = vec!["report", "--complete", "--out"];
    let elsewhere = root.join("r3").display().to_string();
    args.push(&elsewhere);
    args.extend(three.iter().map(String::as_str));
    let o = crate::common::run(&args);
    assert_eq!(o.status.code(), Some(1), "{}", text(&o));
    assert!(
        text(&o).contains("shard 2/4 is not among the inputs"),
        "{}",
        text(&o)
    );

    // A tampered record, and one of another user's (root's, to the user submitting), are
    // refused before squeue is asked; the record as it was then submits shard 2.
    let record = res.join("slurm/submit.json");
    let kept = std::fs::read_to_string(&record).unwrap();
    let mut tampered = json(&record);
    tampered["sbatch_args"] = serde_json::json!(["--wra=true"]);
    std::fs::write(&record, tampered.to_string()).unwrap();
    let o = cluster.as_user(&work, &dbperf, &["run", "--resume", "res", "--slurm"]);
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    assert!(text(&o).contains("sbatch's --wrap"), "{}", text(&o));
    std::fs::write(&record, &kept).unwrap();
    std::os::unix::fs::chown(&record, Some(0), Some(0)).unwrap();
    let o = cluster.as_user(&work, &dbperf, &["run", "--resume", "res", "--slurm"]);
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    assert!(
        text(&o).contains("belongs to root, not to nobody"),
        "{}",
        text(&o)
    );
    std::os::unix::fs::chown(&record, Some(nobody.uid), Some(nobody.gid)).unwrap();
    assert_eq!(
        json(&res.join("slurm/submit.json"))["jobs"]
            .as_array()
            .map(Vec::len),
        Some(1)
    );

    // Submitted again: shard 2 alone; a second resubmit while it is queued is refused.
    let o = cluster.as_user(&work, &dbperf, &["run", "--resume", "res", "--slurm"]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    let sub = json(&res.join("slurm/submit.json"));
    assert_eq!(sub["jobs"][1]["shards"], serde_json::json!([2]), "{sub}");
    let again = sub["jobs"][1]["array"].as_str().unwrap().to_string();
    let report2 = sub["jobs"][1]["report"].as_str().unwrap().to_string();
    let o = cluster.as_user(&work, &dbperf, &["run", "--resume", "res", "--slurm"]);
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    assert!(text(&o).contains("still queued or running"), "{}", text(&o));
    wait_until(
        Duration::from_secs(300),
        "the resubmitted shard and its report job to end",
        || {
            let q = cluster.queued();
            !q.contains(&again) && !q.contains(&report2)
        },
        queued_or_logs,
    );
    let cells = own_cells(&res, 2);
    assert_eq!((cells[0].1.as_str(), cells[0].2), ("done", 2), "{cells:?}");
    // The whole campaign's report, every target in it, nothing said missing.
    let md = std::fs::read_to_string(res.join("report/report.md")).unwrap_or_else(|_| {
        std::fs::read_to_string(res.join("slurm/report.log")).unwrap_or_default()
    });
    assert!(!md.contains("Incomplete"), "{md}");
    for t in [
        "sqlite.wal-normal",
        "sqlite.wal-full",
        "sqlite.delete-full",
        "sqlite.wal-off",
    ] {
        assert!(md.contains(t), "{t} in the report: {md}");
    }
    // A shard's log keeps both of its tasks (appended, not overwritten).
    let log2 = std::fs::read_to_string(res.join("slurm/shard-2.log")).unwrap_or_default();
    assert_eq!(log2.matches("shard 2/4 on").count(), 2, "{log2}");
    // Nothing left to submit.
    let o = cluster.as_user(&work, &dbperf, &["run", "--resume", "res", "--slurm"]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    assert!(text(&o).contains("nothing submitted"), "{}", text(&o));
    drop(cluster);
}
