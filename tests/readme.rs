//! The README's "Common runs" block, run verbatim: each line through `bash -c` with `dbperf` on
//! the PATH, from a fresh, empty working directory, so relative default paths (`results/...`,
//! `--work-dir db`) are exercised the way a user types them. Every line must be classified
//! below: a new example in the README fails this test until someone decides how it is checked.
//!
//! Long runs (hours at full size) are started verbatim, given a few seconds, then stopped with
//! SIGINT as a user would: they must stop cleanly (exit 130) with what they measured written.
//! Each line runs in a working directory of its own, side by side with the others, except a
//! line that continues the one before it (`--work-dir db`), which runs after it in the same one.

use crate::common;

use std::os::unix::process::ExitStatusExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use common::*;

#[derive(Clone, Copy, Debug)]
enum Check {
    /// Runs to the end; must exit 0.
    Full,
    /// Runs this many seconds, then gets SIGINT (unless it ended first): exit 0 or 130.
    Interrupt(u64),
    /// Needs something the README line assumes exists; the reason says what.
    Skip(&'static str),
}

/// What each line needs: nothing, PostgreSQL, MariaDB (with MyRocks).
#[derive(Clone, Copy, PartialEq)]
enum Needs {
    Nothing,
    Servers,
}

/// Every line of the block, by its start. Order matters: the lines run in README order, and
/// `--steps qr100,qp100 --work-dir db` continues on the load of the line before it.
const LINES: &[(&str, Check, Needs)] = &[
    // The quick preset on each engine to its end is tests/servers.rs's: here the line starts
    // its servers one at a time and stops them all on Ctrl-C.
    (
        "dbperf run --target postgres --target mariadb --target mariadb+rocksdb",
        Check::Interrupt(20),
        Needs::Servers,
    ),
    (
        "dbperf run --target postgres@/opt/pg/",
        Check::Skip("needs PostgreSQL builds unpacked at /opt/pg"),
        Needs::Nothing,
    ),
    (
        "dbperf run --target pg163_def",
        Check::Skip("needs those targets declared in a dbperf.toml"),
        Needs::Nothing,
    ),
    (
        "dbperf server start mariadb+rocksdb --dir /tmp/ma",
        Check::Full,
        Needs::Servers,
    ),
    ("dbperf run --list-presets", Check::Full, Needs::Nothing),
    (
        "dbperf run --preset cached-small",
        Check::Interrupt(8),
        Needs::Nothing,
    ),
    (
        "dbperf run --target sqlite --target sqlite:delete-full",
        Check::Interrupt(8),
        Needs::Nothing,
    ),
    (
        "dbperf run --target sqlite --target sqlite:wal-full --repeats 3",
        Check::Interrupt(8),
        Needs::Nothing,
    ),
    (
        "dbperf run --campaign pg-versions",
        Check::Skip("needs the campaign declared in a dbperf.toml"),
        Needs::Nothing,
    ),
    (
        "dbperf run --resume results/",
        Check::Skip("needs that earlier run's directory"),
        Needs::Nothing,
    ),
    (
        "dbperf run --clients 4 --rows-l-i0 1M",
        Check::Interrupt(8),
        Needs::Nothing,
    ),
    (
        "dbperf run --clients 1,2,4 --target postgres --target mariadb",
        Check::Interrupt(20),
        Needs::Servers,
    ),
    (
        "dbperf run --suite sysbench --threads 1,2,8",
        Check::Interrupt(10),
        Needs::Nothing,
    ),
    (
        "dbperf run --target mariadb --vary innodb_page_size=8k,16k",
        Check::Interrupt(20),
        Needs::Servers,
    ),
    (
        "sudo dbperf run --target postgres --read-ahead-kb",
        Check::Skip("changes a block device's read-ahead (tests/sweeps.rs sweeps one, as root)"),
        Needs::Nothing,
    ),
    (
        "dbperf run --steps l.i0,l.x --work-dir db --rows-l-i0 10M",
        Check::Interrupt(8),
        Needs::Nothing,
    ),
    (
        "dbperf run --steps qr100,qp100 --work-dir db",
        Check::Full,
        Needs::Nothing,
    ),
    (
        "dbperf run --pragma cache_size",
        Check::Interrupt(8),
        Needs::Nothing,
    ),
    (
        "dbperf run --suite sysbench  ",
        Check::Interrupt(8),
        Needs::Nothing,
    ),
    (
        "dbperf run --suite sysbench --preset 4u.4t --target postgres --target mariadb",
        Check::Interrupt(15),
        Needs::Servers,
    ),
    (
        "dbperf run --suite sysbench --list --run-order 2024",
        Check::Full,
        Needs::Nothing,
    ),
    (
        "dbperf run --suite sysbench --tests 'read-only*,point-query'",
        Check::Full,
        Needs::Nothing,
    ),
    (
        "dbperf run --suite tpcc --preset smoke",
        Check::Full,
        Needs::Nothing,
    ),
    (
        "dbperf run --suite tpcc --target postgres --connections 1,2,4",
        Check::Interrupt(15),
        Needs::Servers,
    ),
    (
        "dbperf run --suite pgbench --preset smoke",
        Check::Full,
        Needs::Nothing,
    ),
    (
        "dbperf run --suite pgbench --target postgres --client 1,2,4",
        Check::Interrupt(15),
        Needs::Servers,
    ),
    (
        "dbperf report old/ new/",
        Check::Skip("needs result directories old/ and new/"),
        Needs::Nothing,
    ),
    (
        "dbperf report r --format",
        Check::Skip("needs a result directory r"),
        Needs::Nothing,
    ),
    ("dbperf host show", Check::Full, Needs::Nothing),
    (
        "sudo dbperf host tune",
        Check::Skip("changes the host's CPU settings"),
        Needs::Nothing,
    ),
    (
        "dbperf writeamp results/postgres.default",
        Check::Skip("needs a result directory results/postgres.default"),
        Needs::Nothing,
    ),
];

/// The lines of the fenced block under "## Common runs".
fn common_runs() -> Vec<String> {
    let readme = std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("README.md"))
        .expect("README.md");
    let section = readme
        .split("\n## Common runs")
        .nth(1)
        .expect("README has a Common runs section");
    let block = section.split("```").nth(1).expect("a fenced block");
    block
        .lines()
        .skip(1) // the fence's language tag
        .filter(|l| !l.trim().is_empty())
        .map(str::to_string)
        .collect()
}

fn classify(line: &str) -> (Check, Needs) {
    let matches: Vec<_> = LINES
        .iter()
        .filter(|(start, _, _)| line.starts_with(start))
        .collect();
    assert_eq!(
        matches.len(),
        1,
        "README line `{line}` must match exactly one entry of LINES in tests/readme.rs"
    );
    (matches[0].1, matches[0].2)
}

/// A directory on PATH holding only `dbperf` (a link to the binary under test).
fn bin_dir(tmp: &Path) -> PathBuf {
    let bin = tmp.join("bin");
    std::fs::create_dir_all(&bin).unwrap();
    std::os::unix::fs::symlink(env!("CARGO_BIN_EXE_dbperf"), bin.join("dbperf")).unwrap();
    bin
}

struct Ran {
    code: Option<i32>,
    interrupted: bool,
    output: String,
}

/// Runs `line` through bash in `cwd`; with a budget, sends SIGINT to dbperf when it is spent.
/// Any run is killed (and the test failed) after `hang` seconds.
fn run_line(line: &str, cwd: &Path, bin: &Path, budget: Option<u64>) -> Ran {
    let path = format!(
        "{}:{}",
        bin.display(),
        std::env::var("PATH").unwrap_or_default()
    );
    // exec: the shell becomes dbperf, so the signal reaches dbperf itself. The line's own
    // comment ends at its newline.
    let mut child = Command::new("bash")
        .arg("-c")
        .arg(format!("exec 2>&1\nexec {line}\n"))
        .current_dir(cwd)
        .env("PATH", path)
        .env("NO_COLOR", "1")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .spawn()
        .expect("bash runs");
    let stdout = child.stdout.take().unwrap();
    let reader = std::thread::spawn(move || {
        let mut s = String::new();
        let mut r = stdout;
        let _ = std::io::Read::read_to_string(&mut r, &mut s);
        s
    });
    let start = Instant::now();
    let hang = Duration::from_secs(600);
    let mut interrupted = false;
    let status = loop {
        if let Some(s) = child.try_wait().unwrap() {
            break s;
        }
        if let Some(b) = budget {
            if !interrupted && start.elapsed() > Duration::from_secs(b) {
                // SAFETY: kill has no memory-safety preconditions.
                unsafe { libc::kill(child.id() as i32, libc::SIGINT) };
                interrupted = true;
            }
        }
        if start.elapsed() > hang {
            let _ = child.kill();
            let _ = child.wait();
            panic!("`{line}` did not end within {} s", hang.as_secs());
        }
        std::thread::sleep(Duration::from_millis(50));
    };
    let output = reader.join().unwrap();
    Ran {
        code: status.code().or(status.signal().map(|s| 128 + s)),
        interrupted,
        output,
    }
}

/// Every run.json under `dir` (recursively), with its path.
fn run_files(dir: &Path) -> Vec<(PathBuf, serde_json::Value)> {
    let mut found = Vec::new();
    let Ok(rd) = std::fs::read_dir(dir) else {
        return found;
    };
    for e in rd.flatten() {
        let p = e.path();
        if p.is_dir() {
            found.extend(run_files(&p));
        } else if p.file_name().is_some_and(|n| n == "run.json") {
            let v = serde_json::from_str(&std::fs::read_to_string(&p).unwrap()).unwrap();
            found.push((p, v));
        }
    }
    found
}

/// The line continues the line before it, in its working directory.
fn continues(line: &str) -> bool {
    line.starts_with("dbperf run --steps qr100,qp100 --work-dir db")
}

/// Runs the lines that need `needs`: each chain of lines (a line and those that continue it) in
/// a fresh working directory of its own, the chains side by side.
fn run_block(needs: Needs) {
    let mut chains: Vec<Vec<(String, Check)>> = Vec::new();
    for line in common_runs() {
        let (check, n) = classify(&line);
        if n != needs {
            continue;
        }
        if let Check::Skip(why) = check {
            eprintln!("not run: `{line}`: {why}");
            continue;
        }
        match chains.last_mut() {
            Some(chain) if continues(&line) => chain.push((line, check)),
            _ => chains.push(vec![(line, check)]),
        }
    }
    assert!(!chains.is_empty(), "no README line to run");
    let runs: Vec<_> = chains
        .into_iter()
        .map(|chain| std::thread::spawn(move || run_chain(&chain)))
        .collect();
    let failures: Vec<String> = runs
        .into_iter()
        .filter_map(|r| r.join().err())
        .map(|p| {
            p.downcast_ref::<String>()
                .cloned()
                .or_else(|| p.downcast_ref::<&str>().map(|s| s.to_string()))
                .unwrap_or_default()
        })
        .collect();
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
}

/// Runs one chain of lines, in order, in one fresh working directory.
fn run_chain(chain: &[(String, Check)]) {
    let tmp = tempfile::tempdir().unwrap();
    let bin = bin_dir(tmp.path());
    let cwd = tmp.path().join("cwd");
    std::fs::create_dir(&cwd).unwrap();
    for (line, check) in chain {
        let budget = match check {
            Check::Full => None,
            Check::Interrupt(s) => Some(*s),
            Check::Skip(_) => unreachable!("skipped lines are left out of chains"),
        };
        let server_dir = Path::new("/tmp/ma");
        let starts_server = line.contains("server start");
        if starts_server && server_dir.exists() {
            eprintln!("not run: `{line}`: /tmp/ma exists and is not this test's");
            continue;
        }
        let before = run_files(&cwd).len();
        let r = run_line(line, &cwd, &bin, budget);
        let report = format!("`{line}` (exit {:?}):\n{}", r.code, r.output);
        assert!(!r.output.contains("panicked"), "a panic in {report}");
        if r.interrupted && r.code == Some(130) {
            // Stopped as a user would: the target in progress is written as interrupted.
            let files = run_files(&cwd);
            assert!(files.len() > before, "no result written by {report}");
            let (p, last) = files
                .iter()
                .max_by_key(|(p, _)| std::fs::metadata(p).unwrap().modified().unwrap())
                .unwrap();
            let status = last["status"].as_str().unwrap_or_default();
            assert!(
                status == "interrupted" || status == "ok",
                "{}: status {status} after {report}",
                p.display()
            );
        } else {
            assert_eq!(r.code, Some(0), "{report}");
        }
        if starts_server {
            let o = run_line(
                "dbperf server stop mariadb+rocksdb --dir /tmp/ma --remove",
                &cwd,
                &bin,
                None,
            );
            assert_eq!(o.code, Some(0), "server stop: {}", o.output);
            assert!(
                processes_using(server_dir).is_empty(),
                "server left running"
            );
        }
        assert!(
            processes_using(tmp.path()).is_empty(),
            "processes left after {report}: {:?}",
            processes_using(tmp.path())
        );
    }
}

#[test]
fn every_common_run_is_classified() {
    for line in common_runs() {
        classify(&line);
    }
}

#[test]
fn common_runs_on_sqlite_work_verbatim_from_a_relative_directory() {
    run_block(Needs::Nothing);
}

#[test]
fn common_runs_on_servers_work_verbatim_from_a_relative_directory() {
    if postgres() && mariadb(true) {
        run_block(Needs::Servers);
    }
}
