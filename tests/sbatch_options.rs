//! `--sbatch-arg` read as sbatch reads it (src/session/sbatch.rs). First the reading is held to
//! the installed sbatch: its option table (every name, how each takes a value, every letter)
//! and, for word lists the reading lets through, the options `sbatch -v` says it took. Then
//! the command line and a recorded submission (`--resume DIR --slurm`): an option dbperf sets
//! itself, however spelt, tasks' arguments dbperf run would not take, or a record another user
//! wrote is refused with one sentence and exit 2 before sbatch or squeue is looked for or called
//! (tattletale clients on PATH say whether they were).
//!
//! The installed sbatch runs against a slurm.conf of the test's own whose controller listens
//! nowhere (port 1), with a one-second message timeout: `sbatch -v` lists the options it took,
//! then fails to submit, so nothing is ever queued.

use std::collections::BTreeSet;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use dbperf::session::sbatch::{self, HasArg, Role, OPTIONS};

use crate::common::{dbperf, text};

/// The installed sbatch, with a configuration of its own.
struct Sbatch {
    conf: PathBuf,
    script: PathBuf,
    _dir: tempfile::TempDir,
}

impl Sbatch {
    fn find() -> Option<Sbatch> {
        if !Path::new("/usr/bin/sbatch").is_file() {
            assert!(
                std::env::var_os("CI").is_none(),
                "CI must have sbatch (scripts/install-test-deps.sh installs Slurm)"
            );
            eprintln!("skipped: sbatch is not installed");
            return None;
        }
        let dir = tempfile::tempdir().unwrap();
        let conf = dir.path().join("slurm.conf");
        std::fs::write(
            &conf,
            "ClusterName=dbperf-probe\nSlurmctldHost=localhost(127.0.0.1)\nSlurmctldPort=1\n\
             MessageTimeout=1\nNodeName=localhost CPUs=1 State=UNKNOWN\n\
             PartitionName=p Nodes=localhost Default=YES\n",
        )
        .unwrap();
        let script = dir.path().join("job.sh");
        std::fs::write(&script, "#!/bin/sh\ntrue\n").unwrap();
        Some(Sbatch {
            conf,
            script,
            _dir: dir,
        })
    }

    /// What sbatch said (stderr and stdout) to `args`.
    fn said(&self, args: &[&str]) -> String {
        let o = Command::new("timeout")
            .arg("20")
            .arg("/usr/bin/sbatch")
            .args(args)
            .env("SLURM_CONF", &self.conf)
            .stdin(Stdio::null())
            .output()
            .unwrap();
        format!(
            "{}{}",
            String::from_utf8_lossy(&o.stderr),
            String::from_utf8_lossy(&o.stdout)
        )
    }

    /// The options sbatch took from `words` (`sbatch -v` lists them, by their table names),
    /// `verbose` left out; None when sbatch stopped before listing them.
    fn took(&self, words: &[String]) -> Option<BTreeSet<String>> {
        let mut args: Vec<&str> = vec!["-v"];
        args.extend(words.iter().map(String::as_str));
        args.push(self.script.to_str().unwrap());
        let said = self.said(&args);
        let list = said.split("defined options").nth(1)?;
        let list = list.split("end of defined options").next()?;
        Some(
            list.lines()
                .filter_map(|l| l.strip_prefix("sbatch: "))
                .filter_map(|l| l.split_once(" : ").map(|(n, _)| n.trim().to_string()))
                .filter(|n| n != "verbose")
                .collect(),
        )
    }
}

/// sbatch's name for an option it lists: `--tasks-per-node` is listed as `ntasks-per-node`.
fn listed_as(name: &str) -> &str {
    match name {
        "tasks-per-node" => "ntasks-per-node",
        n => n,
    }
}

#[test]
fn the_option_table_is_the_installed_sbatchs() {
    let Some(sb) = Sbatch::find() else { return };
    // Every name: absent from this release (newer), or there and taking a value as the table
    // says (a required value taken from the next word in both, or in neither). getopt names
    // the option a word resolved to when it complains; a name it does not know may still
    // resolve, as an abbreviation of a longer one (`--extra` of `--extra-node-info`).
    let mut here = BTreeSet::new();
    for o in OPTIONS {
        let bare = sb.said(&[&format!("--{}", o.name)]);
        let named = |said: &str, complaint: &str| {
            said.contains(&format!("option '--{}' {complaint}", o.name))
        };
        let has_arg = if named(&bare, "requires an argument") {
            HasArg::Required
        } else if bare.contains("requires an argument")
            || bare.contains("unrecognized option")
            || bare.contains("is ambiguous")
        {
            continue;
        } else {
            let valued = sb.said(&[&format!("--{}=x", o.name)]);
            if named(&valued, "doesn't allow an argument") {
                HasArg::No
            } else if valued.contains("doesn't allow an argument") {
                continue;
            } else {
                let took = sb.took(&[format!("--{}", o.name)]);
                if !took.is_some_and(|t| t.contains(listed_as(o.name))) {
                    continue;
                }
                HasArg::Optional
            }
        };
        here.insert(o.name);
        // Read as optional where releases differ between none and optional (never required).
        let same = has_arg == o.has_arg || (o.has_arg == HasArg::Optional && has_arg == HasArg::No);
        assert!(
            same,
            "--{}: {has_arg:?} here, {:?} in the table",
            o.name, o.has_arg
        );
    }
    assert!(here.len() > 100, "{} names only: {here:?}", here.len());
    // No name the table lacks: `--<letter>` lists every name it begins, or takes the one.
    for letter in 'a'..='z' {
        let said = sb.said(&[&format!("--{letter}")]);
        let ours: BTreeSet<&str> = here
            .iter()
            .copied()
            .filter(|n| n.starts_with(letter))
            .collect();
        if let Some(list) = said.split("possibilities:").nth(1) {
            let theirs: BTreeSet<&str> = list
                .lines()
                .next()
                .unwrap_or("")
                .split_whitespace()
                .map(|w| w.trim_matches('\'').trim_start_matches("--"))
                .collect();
            assert_eq!(ours, theirs, "--{letter}: {said}");
        } else if said.contains("unrecognized option") {
            assert!(ours.is_empty(), "--{letter}: {said}");
        } else {
            assert_eq!(ours.len(), 1, "--{letter}: {ours:?} {said}");
        }
    }
    // Every letter: no option, or the table's, taking a value as the table says.
    for c in ('a'..='z').chain('A'..='Z').chain('0'..='9') {
        let opt = OPTIONS.iter().find(|o| o.short == Some(c));
        // -h and -V print and exit before anything else is read.
        if matches!(c, 'h' | 'V') {
            assert!(opt.is_some());
            continue;
        }
        let bare = sb.said(&[&format!("-{c}")]);
        let Some(o) = opt else {
            assert!(bare.contains("invalid option"), "-{c}: {bare}");
            continue;
        };
        assert!(!bare.contains("invalid option"), "-{c}: {bare}");
        let required = bare.contains("requires an argument");
        assert_eq!(required, o.has_arg == HasArg::Required, "-{c}: {bare}");
        if o.has_arg != HasArg::Required {
            // The rest of the word: the next letter when it takes no value, its value else.
            let rest = sb.said(&[&format!("-{c}@")]);
            let next_letter = rest.contains("invalid option -- '@'");
            assert_eq!(next_letter, o.has_arg == HasArg::No, "-{c}@: {rest}");
        }
        // The letter is the option of that name (`took` leaves out verbose, which it adds).
        if (o.role == Role::Free || o.role == Role::Dbperfs) && o.name != "verbose" {
            let value = if o.has_arg == HasArg::Required {
                "1"
            } else {
                ""
            };
            if let Some(took) = sb.took(&[format!("-{c}{value}")]) {
                assert!(took.contains(listed_as(o.name)), "-{c}: {took:?}");
            }
        }
    }
}

/// Word lists from pieces, some taking the next piece as their value: whatever the reading
/// lets through, sbatch took those very options and none dbperf refuses.
#[test]
fn what_the_reading_lets_through_is_what_sbatch_takes() {
    let Some(sb) = Sbatch::find() else { return };
    const PIECES: &[&str] = &[
        "--partition=x",
        "--part x",
        "-px",
        "-p",
        "--partition",
        "--comment",
        "--com=c",
        "-t10",
        "--time=10",
        "--tim=10",
        "-Aacct",
        "--acco=a",
        "--acc=a",
        "-H",
        "--ho",
        "-Hk",
        "-k",
        "--nice",
        "--nice=10",
        "--mail-t=END",
        "--req",
        "-C ssd",
        "-e /tmp/e",
        "--tasks-per-node=2",
        "--arr=1",
        "-a1",
        "-Ha1",
        "-Hpa1",
        "--dep afterok:1",
        "--outp=/tmp/o",
        "--job x",
        "-Jx",
        "--parsab",
        "--open=append",
        "--exclusive",
        "-s",
        "--=x",
        ":",
    ];
    let mut state: u64 = 0x9e37_79b9_7f4a_7c15;
    let mut next = |n: usize| {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        (state % n as u64) as usize
    };
    let (mut let_through, mut refused) = (0, 0);
    for _ in 0..160 {
        let mut words: Vec<String> = Vec::new();
        for _ in 0..1 + next(4) {
            words.extend(PIECES[next(PIECES.len())].split(' ').map(String::from));
        }
        match sbatch::check(&words) {
            Ok(()) => {
                let ours: BTreeSet<String> = sbatch::read(&words)
                    .unwrap()
                    .iter()
                    .map(|t| listed_as(t.opt.name).to_string())
                    .collect();
                let Some(took) = sb.took(&words) else {
                    continue;
                };
                let_through += 1;
                assert!(
                    ours.is_subset(&took),
                    "{words:?}: ours {ours:?}, sbatch {took:?}"
                );
                for name in &took {
                    let role = OPTIONS.iter().find(|o| o.name == name).map(|o| o.role);
                    assert_eq!(role, Some(Role::Free), "{words:?}: sbatch took {name}");
                }
            }
            Err(r) => {
                refused += 1;
                // A refusal for an option of dbperf's: sbatch takes that option from them.
                if let sbatch::Why::Dbperfs(name) = r.why {
                    if let Some(took) = sb.took(&words) {
                        assert!(took.contains(name), "{words:?}: {name} not in {took:?}");
                    }
                }
            }
        }
    }
    assert!(
        let_through > 20 && refused > 20,
        "{let_through} let through, {refused} refused"
    );
}

/// A directory on PATH whose sbatch and squeue only record that they were called.
fn tattletale_clients(dir: &Path) -> (PathBuf, PathBuf) {
    let bin = dir.join("bin");
    std::fs::create_dir(&bin).unwrap();
    let log = dir.join("called");
    for p in ["sbatch", "squeue"] {
        let f = bin.join(p);
        std::fs::write(
            &f,
            format!("#!/bin/sh\necho {p} >> '{}'\nexit 1\n", log.display()),
        )
        .unwrap();
        std::fs::set_permissions(&f, std::fs::Permissions::from_mode(0o755)).unwrap();
    }
    (bin, log)
}

fn with_path(bin: &Path, cwd: &Path, args: &[&str]) -> std::process::Output {
    dbperf()
        .args(args)
        .current_dir(cwd)
        .env("PATH", bin)
        .env(dbperf::server::registry::STATE_DIR_ENV, cwd.join("state"))
        .output()
        .unwrap()
}

fn one_sentence(o: &std::process::Output, expect: &str) {
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{}", text(o));
    assert_eq!(err.trim_end().lines().count(), 1, "one sentence: {err}");
    assert!(err.contains(expect), "expected {expect:?}: {err}");
}

#[test]
fn sbatch_options_dbperf_sets_are_refused_however_spelt_before_anything_is_called() {
    let t = tempfile::tempdir().unwrap();
    let (bin, called) = tattletale_clients(t.path());
    // No sbatch at all on PATH for the second half: the refusal still comes first.
    let empty = t.path().join("empty");
    std::fs::create_dir(&empty).unwrap();
    for (arg, said) in [
        (
            "--sbatch-arg=--arr=1",
            "sbatch's --array, and dbperf sets that option",
        ),
        ("--sbatch-arg=-a1", "sbatch's --array"),
        ("--sbatch-arg=-Ha1", "sbatch's --array"),
        ("--sbatch-arg=--dep=afterok:1", "sbatch's --dependency"),
        ("--sbatch-arg=--depend=afterok:1", "sbatch's --dependency"),
        ("--sbatch-arg=--wra=true", "sbatch's --wrap"),
        ("--sbatch-arg=--outp=/tmp/x", "sbatch's --output"),
        ("--sbatch-arg=--job=x", "sbatch's --job-name"),
        ("--sbatch-arg=--parsab", "sbatch's --parsable"),
        ("--sbatch-arg=--open=append", "sbatch's --open-mode"),
        ("--sbatch-arg=--exclusive=user", "sbatch's --exclusive"),
        ("--sbatch-arg=-Q", "sbatch's --quiet"),
        ("--sbatch-arg=--par=x", "sbatch cannot tell which option"),
        ("--sbatch-arg=--partition", "needs a value"),
        ("--sbatch-arg=job.sh", "it is no option"),
    ] {
        for path in [&bin, &empty] {
            let o = with_path(
                path,
                t.path(),
                &["run", "--slurm", "2", "--out", "res", arg],
            );
            one_sentence(&o, said);
            assert!(!called.exists(), "{arg}: sbatch or squeue was called");
            assert!(!t.path().join("res").exists(), "{arg}: res was made");
        }
    }
    // Allowed options pass the check, and what refuses them next is not it.
    for good in [
        &["--sbatch-arg=--partition=x"][..],
        &["--sbatch-arg=-p", "--sbatch-arg=x"],
        &["--sbatch-arg=--time=10"],
        &["--sbatch-arg=-t10", "--sbatch-arg=--acco=a"],
    ] {
        let mut args = vec!["run", "--slurm", "2", "--out", "res2"];
        args.extend(good.iter().copied());
        let o = with_path(&empty, t.path(), &args);
        one_sentence(&o, "sbatch is not on PATH");
    }
}

/// `DIR/slurm/submit.json` as `dbperf run --slurm 2` writes it, with `edit` applied.
fn submission(dir: &Path, edit: impl FnOnce(&mut serde_json::Value)) -> PathBuf {
    let slurm = dir.join("slurm");
    std::fs::create_dir_all(&slurm).unwrap();
    let mut s = serde_json::json!({
        "schema": dbperf::results::SCHEMA,
        "tool": {"name": "dbperf", "version": "0", "git_revision": ""},
        "campaign": null,
        "shards": 2,
        "cwd": dir.display().to_string(),
        "args": ["run", "--target", "sqlite", "--steps", "l.i0"],
        "sbatch_args": ["--partition=x", "-t", "10"],
        "jobs": [{"at": "", "array": "7", "shards": [1, 2], "report": "8"}],
    });
    edit(&mut s);
    let path = slurm.join("submit.json");
    let _ = std::fs::remove_file(&path);
    std::fs::write(&path, s.to_string()).unwrap();
    path
}

/// A recorded submission is read back as the command line is: its sbatch arguments through the
/// same reading of sbatch's options, the tasks' arguments through the CLI's parser, and only
/// when the user running dbperf wrote it; a refusal comes before squeue is asked.
#[test]
fn a_tampered_or_foreign_submission_is_refused_before_squeue_is_asked() {
    let t = tempfile::tempdir().unwrap();
    let (bin, called) = tattletale_clients(t.path());
    let dir = t.path().join("camp");
    let resume = |extra: &[&str]| {
        let mut args = vec!["run", "--resume", "camp", "--slurm"];
        args.extend(extra);
        with_path(&bin, t.path(), &args)
    };
    let said_of_sbatch = "records the sbatch argument";
    for (sbatch_args, said) in [
        (serde_json::json!(["--wra=true"]), "sbatch's --wrap"),
        (serde_json::json!(["-Ha1"]), "sbatch's --array"),
        (serde_json::json!(["--arr=1"]), "sbatch's --array"),
        (
            serde_json::json!(["--dep", "afterok:1"]),
            "sbatch's --dependency",
        ),
        (serde_json::json!(["--outp=/tmp/o"]), "sbatch's --output"),
        (serde_json::json!(["--time=10", "-p"]), "needs a value"),
        (
            serde_json::json!(["--de=x"]),
            "sbatch cannot tell which option",
        ),
        (serde_json::json!([":", "-a1"]), "it is no option"),
    ] {
        submission(&dir, |s| s["sbatch_args"] = sbatch_args.clone());
        let o = resume(&[]);
        one_sentence(&o, said_of_sbatch);
        one_sentence(&o, said);
        assert!(
            !called.exists(),
            "{sbatch_args}: squeue or sbatch was called"
        );
    }
    // The tasks' arguments: what dbperf run takes for a shard, and nothing else.
    for args in [
        serde_json::json!(["run", "--no-such-flag"]),
        serde_json::json!(["run", "--resume", "/elsewhere"]),
        serde_json::json!(["run", "--slurm", "3"]),
        serde_json::json!(["history", "list"]),
    ] {
        submission(&dir, |s| s["args"] = args.clone());
        one_sentence(&resume(&[]), "records arguments for the tasks");
        assert!(!called.exists(), "{args}: squeue or sbatch was called");
    }
    // A --sbatch-arg added on resume is refused before the record is even read.
    submission(&dir, |s| s["shards"] = 0.into());
    one_sentence(&resume(&["--sbatch-arg=--dep=afterok:1"]), "--sbatch-arg");
    assert!(!called.exists());
    // One other users can write, or another user's: not obeyed, whatever it says.
    let path = submission(&dir, |_| {});
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o666)).unwrap();
    one_sentence(&resume(&[]), "can be written by other users");
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o644)).unwrap();
    if crate::common::is_root() {
        let nobody = dbperf::server::process::lookup_user("nobody").expect("a user nobody");
        std::os::unix::fs::chown(&path, Some(nobody.uid), Some(nobody.gid)).unwrap();
        let o = resume(&[]);
        one_sentence(&o, "belongs to nobody, not to root");
        one_sentence(&o, "the Slurm submission decides what dbperf does");
        assert!(!called.exists());
        std::os::unix::fs::chown(&path, Some(0), Some(0)).unwrap();
    }
    // The record as dbperf writes it passes: squeue is asked next.
    let o = resume(&[]);
    one_sentence(&o, "squeue failed");
    assert_eq!(std::fs::read_to_string(&called).unwrap(), "squeue\n");
    // A shard's journal decides which shards are submitted again: another user's is refused
    // before sbatch is called (squeue here says nothing of the campaign runs).
    if crate::common::is_root() {
        std::fs::write(bin.join("squeue"), "#!/bin/sh\nexit 0\n").unwrap();
        std::fs::remove_file(&called).unwrap();
        let s1 = dir.join("s1");
        std::fs::create_dir(&s1).unwrap();
        std::fs::write(s1.join("campaign.json"), "{}").unwrap();
        let nobody = dbperf::server::process::lookup_user("nobody").expect("a user nobody");
        std::os::unix::fs::chown(s1.join("campaign.json"), Some(nobody.uid), None).unwrap();
        one_sentence(
            &resume(&[]),
            "a campaign's journal decides what dbperf does",
        );
        assert!(!called.exists(), "sbatch was called");
    }
}
