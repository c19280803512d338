//! A campaign handed to Slurm (`dbperf run --slurm N`): one job array whose task K runs shard
//! K/N into `<out>/s<K>` (or continues it with `--resume` when it was started before), and a
//! report job that waits for every task of the array and writes `<out>/report` only when the
//! campaign is whole (`dbperf report --complete`). dbperf has no scheduler of its own; it writes
//! the two batch scripts into `<out>/slurm`, where a user can read what each task runs, and
//! submits them with sbatch (docs/campaigns.md, "Slurm").

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Duration;

use crate::error::{bad_input, BadInput};
use crate::results::campaign::{read_own_journal, CellState, JOURNAL};
use crate::results::slurm::{job_id_ok, Submission, Submitted, SLURM_DIR, SUBMIT_FILE};

/// How long sbatch or squeue may take: they retry an unreachable controller for a while, and a
/// dead one must not hold dbperf.
const DEADLINE: Duration = Duration::from_secs(60);

const SHARD_SCRIPT: &str = "shard.sbatch";
const REPORT_SCRIPT: &str = "report.sbatch";

/// Held while a campaign is submitted: two submissions to one directory at once would each
/// queue every shard, and one record would be lost.
pub fn lock(out: &Path) -> anyhow::Result<super::lock::RunLock> {
    crate::safe_fs::make_dir_all(&out.join(SLURM_DIR), crate::safe_fs::Also::Nobody)?;
    super::lock::take_named(&out.join(SLURM_DIR), ".submit.lock", &|who| {
        format!(
            "{who} is submitting the campaign in {} right now; wait for it to end",
            out.display()
        )
    })
}

/// Refuses before anything is written when Slurm's client commands are not here.
pub fn check_clients() -> anyhow::Result<()> {
    slurm_command("sbatch")?;
    slurm_command("squeue")?;
    Ok(())
}

/// The directory of shard `k`.
pub fn shard_dir(out: &Path, k: u32) -> PathBuf {
    out.join(format!("s{k}"))
}

/// The shards of `out` that are not done: never started, or with a cell planned, running (its
/// task was killed), interrupted, or failed with its one retry left, which a resumed task
/// runs. A journal that does not read, or that another user wrote (it decides what is
/// submitted), is refused here, before anything is submitted.
pub fn shards_to_run(out: &Path, count: u32) -> anyhow::Result<Vec<u32>> {
    let mut todo = Vec::new();
    for k in 1..=count {
        let dir = shard_dir(out, k);
        if !crate::results::present(&dir.join(JOURNAL)) {
            todo.push(k);
            continue;
        }
        let j = read_own_journal(&dir)?;
        let open = j.cells.iter().any(|c| match c.state {
            CellState::Done | CellState::Elsewhere => false,
            CellState::Failed => c.failed_attempts() < 2,
            CellState::Planned | CellState::Running | CellState::Interrupted => true,
        });
        if open {
            todo.push(k);
        }
    }
    Ok(todo)
}

/// Jobs of `sub` that Slurm still has queued or running (a task of a resubmitted shard must not
/// run beside the one it replaces).
pub fn still_queued(sub: &Submission) -> anyhow::Result<Vec<String>> {
    let mut c = slurm_command("squeue")?;
    // %F: the array job's id for every task of an array, a job's own id otherwise.
    c.args(["--noheader", "--format=%F"]);
    let a = crate::server::probe::ask_command(c, "squeue", DEADLINE)?;
    if !a.success {
        return bad_input(format!(
            "squeue failed, so whether this campaign's jobs still run is unknown: {}",
            said(&a.text)
        ));
    }
    let queued: Vec<&str> = a.stdout.lines().map(str::trim).collect();
    let mut ours: Vec<String> = Vec::new();
    for j in &sub.jobs {
        for id in [&j.array, &j.report] {
            if queued.contains(&id.as_str()) && !ours.contains(id) {
                ours.push(id.clone());
            }
        }
    }
    Ok(ours)
}

/// Writes the scripts for `sub` into `<out>/slurm` and submits shards `shards` as one array,
/// then the report job after it; `dbperf` is the binary the jobs run. The submission is
/// recorded in `<out>/slurm/submit.json` as soon as the array is in, so a report job that
/// sbatch then refused does not lose the array's id.
/// `stop` (Ctrl-C, SIGTERM) after the array is in: the report job is not submitted, and the
/// array is recorded all the same.
pub fn submit(
    out: &Path,
    sub: &mut Submission,
    dbperf: &Path,
    shards: &[u32],
    stop: &std::sync::atomic::AtomicBool,
) -> anyhow::Result<Submitted> {
    let dir = crate::safe_fs::make_dir_all(&out.join(SLURM_DIR), crate::safe_fs::Also::Nobody)?;
    let scripts = Scripts::new(out, sub, dbperf)?;
    for (name, text) in [
        (SHARD_SCRIPT, &scripts.shard),
        (REPORT_SCRIPT, &scripts.report),
    ] {
        dir.write_atomic(name, text.as_bytes())
            .map_err(|e| crate::safe_fs::write_error(&out.join(SLURM_DIR).join(name), e))?;
    }
    let slurm = out.join(SLURM_DIR);
    let array = sbatch(
        &[
            format!("--array={}", array_list(shards)),
            format!("--job-name={}", job_name(sub)),
            format!("--output={}", slurm.join("shard-%a.log").display()),
            "--open-mode=append".into(),
            "--exclusive".into(),
        ],
        &sub.sbatch_args,
        &slurm.join(SHARD_SCRIPT),
    )?;
    let mut done = Submitted {
        at: super::now_rfc3339(),
        array: array.clone(),
        shards: shards.to_vec(),
        report: String::new(),
    };
    if stop.load(std::sync::atomic::Ordering::SeqCst) {
        done.report = "0".into();
        sub.jobs.push(done.clone());
        crate::results::slurm::write_submission(out, sub)?;
        return Ok(done);
    }
    let report = sbatch(
        &[
            format!("--dependency=afterany:{array}"),
            format!("--job-name={}-report", job_name(sub)),
            format!("--output={}", slurm.join("report.log").display()),
            "--open-mode=append".into(),
        ],
        &sub.sbatch_args,
        &slurm.join(REPORT_SCRIPT),
    );
    match report {
        Ok(id) => done.report = id,
        Err(e) => {
            // The array runs; what sbatch refused is the report job alone.
            done.report = "0".into();
            sub.jobs.push(done);
            let _ = crate::results::slurm::write_submission(out, sub);
            return Err(e.context(format!(
                "the shards were submitted as job {array}, the report job was not; once they \
                 end: dbperf report {}/s* --out {}/report",
                out.display(),
                out.display()
            )));
        }
    }
    sub.jobs.push(done.clone());
    crate::results::slurm::write_submission(out, sub).map_err(|e| {
        anyhow::anyhow!(
            "jobs {array} and {} were submitted but {} could not be written: {e}",
            done.report,
            slurm.join(SUBMIT_FILE).display()
        )
    })?;
    Ok(done)
}

/// `sbatch --parsable` with dbperf's options, then the user's (which sbatch lets win), then the
/// script; the job id it printed.
fn sbatch(ours: &[String], theirs: &[String], script: &Path) -> anyhow::Result<String> {
    let mut c = slurm_command("sbatch")?;
    c.arg("--parsable").args(ours).args(theirs).arg(script);
    let a = crate::server::probe::ask_command(c, "sbatch", DEADLINE)?;
    if !a.success {
        return bad_input(format!("sbatch refused the job: {}", said(&a.text)));
    }
    // `123` or `123;cluster`; warnings go to stderr.
    let first = a.stdout.lines().next().unwrap_or("").trim();
    let id = first.split(';').next().unwrap_or("");
    if !job_id_ok(id) {
        return bad_input(format!(
            "sbatch succeeded but its first line is not a job id, so the job may be queued \
             without dbperf knowing it (see squeue): {}",
            said(&a.stdout)
        ));
    }
    Ok(id.to_string())
}

/// A Slurm client command, found on PATH, with dbperf's environment (SLURM_CONF, and what sbatch
/// passes on to the job), in its own process group so a Ctrl-C reaches dbperf only.
fn slurm_command(program: &str) -> anyhow::Result<Command> {
    let found = std::env::var_os("PATH")
        .map(|p| std::env::split_paths(&p).any(|d| d.join(program).is_file()))
        .unwrap_or(false);
    if !found {
        return Err(BadInput(format!(
            "{program} is not on PATH: --slurm submits with Slurm's client commands (on Debian: \
             apt-get install slurm-client); run dbperf where sbatch works"
        ))
        .into());
    }
    let mut c = Command::new(program);
    c.stdin(Stdio::null());
    std::os::unix::process::CommandExt::process_group(&mut c, 0);
    Ok(c)
}

/// The last lines a Slurm command said, in one line.
fn said(text: &str) -> String {
    let lines: Vec<&str> = text.lines().filter(|l| !l.trim().is_empty()).collect();
    let tail = lines[lines.len().saturating_sub(3)..].join(" / ");
    crate::untrusted::printable(&crate::untrusted::one_line(&tail)).into_owned()
}

/// `1,2,4`: sbatch's --array takes a list.
fn array_list(shards: &[u32]) -> String {
    shards
        .iter()
        .map(u32::to_string)
        .collect::<Vec<_>>()
        .join(",")
}

/// `dbperf-<campaign>`, in the characters a job name shows plainly.
fn job_name(sub: &Submission) -> String {
    let name = sub.campaign.as_deref().unwrap_or("run");
    let clean: String = name
        .chars()
        .take(40)
        .map(|c| {
            if c.is_ascii_alphanumeric() || "._-".contains(c) {
                c
            } else {
                '_'
            }
        })
        .collect();
    format!("dbperf-{clean}")
}

/// The two batch scripts, every path and argument quoted for sh.
struct Scripts {
    shard: String,
    report: String,
}

impl Scripts {
    fn new(out: &Path, sub: &Submission, dbperf: &Path) -> anyhow::Result<Scripts> {
        let q = |s: &str| -> anyhow::Result<String> {
            shlex::try_quote(s).map(|c| c.into_owned()).map_err(|_| {
                anyhow::Error::new(BadInput(format!("{s:?} cannot be passed to a job")))
            })
        };
        let text = |p: &Path| -> anyhow::Result<String> {
            match p.to_str() {
                Some(s) => q(s),
                None => bad_input(format!(
                    "{} is not UTF-8: a job script cannot name it",
                    p.display()
                )),
            }
        };
        let dbperf = text(dbperf)?;
        let outq = text(out)?;
        let cwd = q(&sub.cwd)?;
        let args = sub
            .args
            .iter()
            .map(|a| q(a))
            .collect::<anyhow::Result<Vec<_>>>()?
            .join(" ");
        let n = sub.shards;
        let shard = format!(
            "#!/bin/sh\n\
             # Written by `dbperf run --slurm`: task K of the array runs shard K/{n} of the\n\
             # campaign into {out}/sK, or continues it when it was started before (a cancelled,\n\
             # requeued or failed task submitted again).\n\
             set -eu\n\
             k=\"${{SLURM_ARRAY_TASK_ID:?submitted by dbperf run --slurm as an array job}}\"\n\
             out={outq}/s\"$k\"\n\
             echo \"== $(date -u +%Y-%m-%dT%H:%M:%SZ) job ${{SLURM_JOB_ID:-?}} shard $k/{n} on $(hostname)\"\n\
             cd {cwd}\n\
             if [ -f \"$out/campaign.json\" ]; then\n\
             \x20   exec {dbperf} run --resume \"$out\" --no-progress\n\
             fi\n\
             exec {dbperf} {args} --shard \"$k/{n}\" --out \"$out\" --no-progress\n",
            out = out.display(),
        );
        let report = format!(
            "#!/bin/sh\n\
             # Written by `dbperf run --slurm`: after every task of the array, the campaign's\n\
             # report into {out}/report, only when every shard is done (--complete).\n\
             set -eu\n\
             echo \"== $(date -u +%Y-%m-%dT%H:%M:%SZ) job ${{SLURM_JOB_ID:-?}} report\"\n\
             cd {outq}\n\
             set --\n\
             k=1\n\
             while [ \"$k\" -le {n} ]; do\n\
             \x20   if [ -d \"s$k\" ]; then set -- \"$@\" \"s$k\"; else echo \"shard $k/{n} never started\"; fi\n\
             \x20   k=$((k + 1))\n\
             done\n\
             if [ \"$#\" -eq 0 ]; then echo \"no shard has started: no report\"; exit 1; fi\n\
             exec {dbperf} report --complete --out {outq}/report \"$@\"\n",
            out = out.display(),
        );
        Ok(Scripts { shard, report })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sub(args: &[&str]) -> Submission {
        Submission {
            schema: crate::results::SCHEMA,
            tool: crate::results::Tool {
                name: "dbperf".into(),
                version: "0".into(),
                git_revision: String::new(),
            },
            campaign: Some("pg versions".into()),
            shards: 4,
            cwd: "/home/a/it's here".into(),
            args: args.iter().map(|s| s.to_string()).collect(),
            sbatch_args: Vec::new(),
            jobs: Vec::new(),
        }
    }

    #[test]
    fn scripts_quote_every_word_and_run_or_resume_their_shard() {
        let s = Scripts::new(
            Path::new("/r/out dir"),
            &sub(&["run", "--campaign", "x;rm -rf /", "--repeats", "$(id)"]),
            Path::new("/opt/dbperf"),
        )
        .unwrap();
        assert!(s.shard.contains("cd \"/home/a/it's here\""), "{}", s.shard);
        assert!(s.shard.contains("out='/r/out dir'/s\"$k\""), "{}", s.shard);
        assert!(
            s.shard.contains(
                "exec /opt/dbperf run --campaign 'x;rm -rf /' --repeats '$(id)' --shard \"$k/4\""
            ),
            "{}",
            s.shard
        );
        assert!(
            s.shard.contains("exec /opt/dbperf run --resume \"$out\""),
            "{}",
            s.shard
        );
        assert!(
            s.report
                .contains("report --complete --out '/r/out dir'/report"),
            "{}",
            s.report
        );
        // The scripts are valid sh.
        for t in [&s.shard, &s.report] {
            let o = Command::new("sh").args(["-n", "-c", t]).output().unwrap();
            assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        }
    }

    #[test]
    fn names_and_lists_are_what_sbatch_takes() {
        assert_eq!(array_list(&[1, 3, 4]), "1,3,4");
        assert_eq!(job_name(&sub(&[])), "dbperf-pg_versions");
        assert!(job_id_ok("123") && !job_id_ok("12;x") && !job_id_ok(""));
    }

    /// Shard k of 3 with its one cell in `state`, failed `failures` times.
    fn shard(out: &Path, k: u32, state: CellState, failures: u32) {
        use crate::results::campaign::{write_journal, Invocation, Journal, JournalCell, Shard};
        let dir = shard_dir(out, k);
        std::fs::create_dir_all(&dir).unwrap();
        let cells = (1..=3)
            .map(|i| {
                let state = if i == k { state } else { CellState::Elsewhere };
                let id = format!("t{i}");
                JournalCell {
                    attempts: 1,
                    failures,
                    ..JournalCell::planned(
                        &id,
                        &id,
                        crate::suites::Suite::Ibench,
                        1,
                        (i - 1) as usize,
                        state,
                    )
                }
            })
            .collect();
        let j = Journal {
            schema: crate::results::SCHEMA,
            tool: sub(&[]).tool,
            campaign: Some("c".into()),
            created_at: String::new(),
            invocation: Invocation {
                args: Vec::new(),
                cwd: "/".into(),
            },
            rounds: 1,
            shard: Some(Shard { index: k, count: 3 }),
            base: None,
            cells,
        };
        write_journal(&dir, &j).unwrap();
    }

    #[test]
    fn shards_not_done_are_the_ones_to_submit() {
        let t = tempfile::tempdir().unwrap();
        // No shard started: all of them.
        assert_eq!(shards_to_run(t.path(), 3).unwrap(), [1, 2, 3]);
        shard(t.path(), 1, CellState::Done, 0);
        shard(t.path(), 2, CellState::Interrupted, 0);
        shard(t.path(), 3, CellState::Failed, 1);
        // Interrupted, and failed with its one retry left.
        assert_eq!(shards_to_run(t.path(), 3).unwrap(), [2, 3]);
        shard(t.path(), 2, CellState::Running, 0);
        shard(t.path(), 3, CellState::Failed, 2);
        // Running when its dbperf was killed; a failure retried once is done.
        assert_eq!(shards_to_run(t.path(), 3).unwrap(), [2]);
        std::fs::write(shard_dir(t.path(), 2).join(JOURNAL), "{").unwrap();
        assert!(shards_to_run(t.path(), 3).is_err());
    }
}
