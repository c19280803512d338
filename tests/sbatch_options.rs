//! `--sbatch-arg` read as sbatch reads it (src/session/sbatch.rs). First the reading is held to
//! the installed sbatch: its option table (every name, how each takes a value, every letter)
//! and, for word lists the reading lets through, the options `sbatch -v` says it took. Then
//! the command line and a recorded submission: an option dbperf sets itself, however spelt, is
//! refused with one sentence and exit 2 before sbatch or squeue is looked for or called.
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
