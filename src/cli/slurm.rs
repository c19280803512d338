//! `dbperf run --slurm N` and `dbperf run --resume OUT --slurm`: what to submit, checked, and
//! what was submitted, said. The submitting is `session::slurm`'s.

use std::path::{Path, PathBuf};
use std::sync::atomic::AtomicBool;

use super::run_args::RunArgs;
use super::EXIT_OK;
use crate::error::bad_input;
use crate::results::slurm::{read_submission, Submission, Submitted, SLURM_DIR, SUBMIT_FILE};
use crate::session::slurm as submit_to;

/// Options that name what the submitting does, not what each task runs: left out of the
/// tasks' command line (each adds its own --shard, --out and --no-progress).
const SUBMIT_ONLY: &[&str] = &["--slurm", "--sbatch-arg", "--out", "--no-progress"];

pub fn submit(a: &RunArgs) -> anyhow::Result<i32> {
    // First of all: nothing is looked at or asked while an option for sbatch is wrong.
    if let Err(r) = crate::session::sbatch::check(&a.sbatch_arg) {
        return bad_input(format!(
            "--sbatch-arg {}: {}",
            crate::untrusted::shown(&r.word),
            r.reason()
        ));
    }
    submit_to::check_clients()?;
    // A signal while sbatch runs stops dbperf only once what was submitted is recorded.
    let stop = super::signals::stop_flag("recording what was submitted, then stopping");
    let code = if a.resume.is_some() {
        resubmit(a, &stop)?
    } else {
        first_submit(a, &stop)?
    };
    if stop.load(std::sync::atomic::Ordering::SeqCst) {
        say!("interrupted: what was submitted is recorded in slurm/submit.json");
        return Ok(super::EXIT_INTERRUPTED);
    }
    Ok(code)
}

fn first_submit(a: &RunArgs, stop: &AtomicBool) -> anyhow::Result<i32> {
    let n = match a.slurm {
        Some(n) if n > 0 => n,
        _ => {
            return bad_input(
                "--slurm needs the number of shards when it starts a run (--slurm 4)".to_string(),
            )
        }
    };
    if a.shard.is_some() {
        return bad_input(
            "--shard cannot go with --slurm: task K of the array runs shard K/N".to_string(),
        );
    }
    let Some(out) = &a.out else {
        return bad_input(
            "--slurm needs --out DIR, a directory every node reaches: task K writes DIR/sK and \
             the report job DIR/report"
                .to_string(),
        );
    };
    let out = out_dir(out)?;
    if crate::results::present(&out.join(crate::results::campaign::JOURNAL)) {
        return bad_input(format!(
            "{} holds a run already (campaign.json); choose another --out",
            out.display()
        ));
    }
    let _lock = submit_to::lock(&out)?;
    if crate::results::present(&out.join(SLURM_DIR).join(SUBMIT_FILE)) {
        return bad_input(format!(
            "{} already holds a campaign submitted to Slurm; continue it with `dbperf run \
             --resume {} --slurm`, or choose another --out",
            out.display(),
            out.display()
        ));
    }
    super::what::check_plan(a)?;
    let args = task_args(&a.argv);
    check_task_args(&args, n)?;
    let mut sub = Submission {
        schema: crate::results::SCHEMA,
        tool: crate::results::Tool {
            name: "dbperf".into(),
            version: crate::version_string(),
            git_revision: String::new(),
        },
        campaign: a.campaign.clone(),
        shards: n,
        cwd: cwd()?,
        args,
        sbatch_args: a.sbatch_arg.clone(),
        jobs: Vec::new(),
    };
    let shards: Vec<u32> = (1..=n).collect();
    let done = submit_to::submit(&out, &mut sub, &this_binary()?, &shards, stop)?;
    said(&out, &sub, &done);
    Ok(EXIT_OK)
}

/// The directory the tasks start in, as a script can name it.
fn cwd() -> anyhow::Result<String> {
    let d = std::env::current_dir()?;
    match d.to_str() {
        Some(s) if !s.contains('\n') => Ok(s.to_string()),
        _ => bad_input(format!(
            "the working directory {} is not UTF-8 text on one line, which a job script cannot \
             name; submit from another",
            d.display()
        )),
    }
}

/// `--resume OUT --slurm`: the shards that are not done, submitted again with a new report job.
fn resubmit(a: &RunArgs, stop: &AtomicBool) -> anyhow::Result<i32> {
    if let Some(extra) = a
        .given
        .first_other_than(&["resume", "slurm", "sbatch_arg", "no_progress"])
    {
        return bad_input(format!(
            "{extra} cannot go with --resume --slurm: the campaign keeps the arguments it was \
             submitted with (only --sbatch-arg may be added)"
        ));
    }
    let out = out_dir(a.resume.as_deref().expect("called with --resume"))?;
    // Whose directory it is first: nothing in one another user could write is read.
    crate::safe_fs::check_dir(&out)?;
    if !crate::results::present(&out.join(SLURM_DIR).join(SUBMIT_FILE)) {
        let why = if crate::results::present(&out.join(crate::results::campaign::JOURNAL)) {
            "it is one shard's directory; give the campaign's, the one holding slurm/"
        } else {
            "it has no slurm/submit.json, so it was not submitted with --slurm"
        };
        return bad_input(format!(
            "{} is not a campaign submitted to Slurm: {why}",
            out.display()
        ));
    }
    let _lock = submit_to::lock(&out)?;
    // Only this user's record is read; what it says is checked as the command line is.
    let mut sub = read_submission(&out)?;
    check_recorded(&out, &sub)?;
    if let Some(n) = a.slurm.filter(|n| *n != 0 && *n != sub.shards) {
        return bad_input(format!(
            "--slurm {n}: the campaign in {} has {} shards, which a resume keeps (give --slurm \
             alone)",
            out.display(),
            sub.shards
        ));
    }
    let queued = submit_to::still_queued(&sub)?;
    if !queued.is_empty() {
        return bad_input(format!(
            "job {} of this campaign is still queued or running (squeue); wait for it or scancel \
             it, then submit again",
            queued.join(", ")
        ));
    }
    let todo = submit_to::shards_to_run(&out, sub.shards)?;
    if todo.is_empty() {
        say!(
            "every shard of {} is done: nothing submitted. Its report: dbperf report {}/s* --out {}/report",
            out.display(),
            out.display(),
            out.display()
        );
        return Ok(EXIT_OK);
    }
    sub.sbatch_args.extend(a.sbatch_arg.iter().cloned());
    let done = submit_to::submit(&out, &mut sub, &this_binary()?, &todo, stop)?;
    said(&out, &sub, &done);
    Ok(EXIT_OK)
}

/// A recorded submission's arguments, read again as they were on the command line before they
/// go into job scripts: sbatch's through the same reading of sbatch's options, the tasks' through
/// the CLI's own parser. A record that fails either was not written by `dbperf run --slurm`.
fn check_recorded(out: &Path, sub: &Submission) -> anyhow::Result<()> {
    let path = out.join(SLURM_DIR).join(SUBMIT_FILE);
    if let Err(r) = crate::session::sbatch::check(&sub.sbatch_args) {
        return bad_input(format!(
            "{} records the sbatch argument {}, which dbperf run --slurm would not have taken: {}",
            path.display(),
            crate::untrusted::shown(&r.word),
            r.reason()
        ));
    }
    check_task_args(&sub.args, sub.shards).map_err(|_| {
        crate::error::BadInput(format!(
            "{} records arguments for the tasks that dbperf run does not take as a shard's: {}",
            path.display(),
            crate::untrusted::shown(&sub.args.join(" "))
        ))
        .into()
    })
}

/// `--out` made absolute (tasks start elsewhere), without what sbatch would read as a pattern
/// in its log file names (`%j`) or the scripts could not name.
fn out_dir(p: &Path) -> anyhow::Result<PathBuf> {
    let out = super::run::absolute(p)?;
    match out.to_str() {
        Some(s) if !s.contains(['%', '\\', '\n']) => Ok(out),
        _ => bad_input(format!(
            "{} cannot be a Slurm campaign's directory: sbatch reads % and \\ in it as patterns \
             (and it must be UTF-8 on one line)",
            out.display()
        )),
    }
}

/// The binary every task runs: this one, by its absolute path (a job's PATH is not the shell's).
fn this_binary() -> anyhow::Result<PathBuf> {
    let exe = std::env::current_exe()?;
    if !exe.is_file() {
        return bad_input(format!(
            "this dbperf ({}) was replaced or removed while it ran; run the new one",
            exe.display()
        ));
    }
    Ok(exe)
}

/// `dbperf run`'s words without those of `SUBMIT_ONLY` (`--out DIR`, `--out=DIR`, `--slurm`,
/// `--slurm 4`, ...).
fn task_args(argv: &[String]) -> Vec<String> {
    let mut kept = Vec::new();
    let mut words = argv.iter().peekable();
    while let Some(w) = words.next() {
        let (flag, inline) = match w.split_once('=') {
            Some((f, _)) => (f, true),
            None => (w.as_str(), false),
        };
        if !SUBMIT_ONLY.contains(&flag) {
            kept.push(w.clone());
            continue;
        }
        if inline || flag == "--no-progress" {
            continue;
        }
        // --slurm's number is optional: only digits are its.
        let takes_next = match flag {
            "--slurm" => words
                .peek()
                .is_some_and(|n| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit())),
            _ => true,
        };
        if takes_next {
            words.next();
        }
    }
    kept
}

/// The tasks' command line parses as a run of shard 1/N, and nothing of the submitting is left
/// in it.
fn check_task_args(args: &[String], n: u32) -> anyhow::Result<()> {
    let mut argv = vec!["dbperf".to_string()];
    argv.extend(args.iter().cloned());
    argv.extend([
        "--shard".into(),
        format!("1/{n}"),
        "--out".into(),
        "/".into(),
        "--no-progress".into(),
    ]);
    match super::parse(&argv) {
        Ok(super::Cli {
            command: super::Command::Run(r),
        }) if r.slurm.is_none() && r.sbatch_arg.is_empty() && r.resume.is_none() => Ok(()),
        _ => bad_input(format!(
            "the command line could not be split into what each Slurm task runs: {}",
            args.join(" ")
        )),
    }
}

fn said(out: &Path, sub: &Submission, done: &Submitted) {
    let what = sub
        .campaign
        .as_deref()
        .map_or("the run".to_string(), |c| format!("campaign {c}"));
    let tasks: Vec<String> = done.shards.iter().map(u32::to_string).collect();
    let report = if done.report == "0" {
        String::new()
    } else {
        format!(", job {} writes the report after them", done.report)
    };
    say!(
        "{} submitted to Slurm: job {} runs shard{} {} of {} (each into {}/s<K>){report}",
        crate::untrusted::printable(&what),
        done.array,
        if done.shards.len() == 1 { "" } else { "s" },
        tasks.join(","),
        sub.shards,
        out.display(),
    );
    if done.report == "0" {
        say!(
            "the report job was not submitted; once the shards have ended: dbperf report {}/s* \
             --complete --out {}/report",
            out.display(),
            out.display()
        );
    }
    say!(
        "logs: {}/{SLURM_DIR}/shard-<K>.log and report.log; watch: squeue -j {}",
        out.display(),
        [done.array.as_str(), done.report.as_str()]
            .iter()
            .filter(|j| **j != "0")
            .copied()
            .collect::<Vec<_>>()
            .join(",")
    );
    if done.report != "0" {
        out!("{}/report/report.html", out.display());
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn words(s: &str) -> Vec<String> {
        s.split_whitespace().map(String::from).collect()
    }

    #[test]
    fn the_tasks_run_what_was_asked_without_the_submitting() {
        let cases = [
            (
                "run --campaign c --slurm 4 --out /r --sbatch-arg --time=1:00 --repeats 2",
                "run --campaign c --repeats 2",
            ),
            (
                "run --slurm=4 --out=/r --sbatch-arg=--partition=x --campaign c --no-progress",
                "run --campaign c",
            ),
            // --slurm alone before another option.
            ("run --campaign c --slurm --out /r", "run --campaign c"),
        ];
        for (given, kept) in cases {
            assert_eq!(task_args(&words(given)), words(kept), "{given}");
        }
        assert!(check_task_args(&words("run --campaign c --repeats 2"), 4).is_ok());
        assert!(check_task_args(&words("run --campaign c --slurm"), 4).is_err());
    }
}
