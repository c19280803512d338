//! The run loop: a campaign's cells (target x suite x round) in their planned order, each with a
//! fresh server and fresh data, every step measured the same way, results written as each step
//! ends, and a journal (`campaign.json`) that lets a run killed at any point be resumed. The CLI
//! builds a `Request` from flags and renders `Events`; nothing here parses flags or prints.

pub mod events;
mod fingerprint;
mod ibench;
mod lock;
mod mark;
mod measure;
pub mod plan;
mod suite;
mod sysbench;
mod target;
mod workdir;

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

pub use events::{CellBegins, Display, Events, Note, PlanView, PlannedCell, Quiet, Tick};
pub use ibench::IbenchSuite;
pub use suite::Suite;
pub use sysbench::SysbenchSuite;

use crate::dbms::{self, Fault};
use crate::error::{bad_input, BadInput};
use crate::results::campaign::{
    self, CellState, Invocation, Journal, JournalCell, ServerLease, Shard,
};
use crate::results::{self, CampaignCell, RunFile, RunStatus, Status, StepFile, Tool, SCHEMA};
use crate::spec::target::Target;
use measure::{measure, CostSources, MeasureCx};
use suite::FinishCx;
use target::{Access, Checked};

/// Everything a run needs, validated by the CLI.
pub struct Request {
    pub suites: Vec<Arc<dyn Suite>>,
    pub targets: Vec<Target>,
    /// The run directory (absolute).
    pub out: PathBuf,
    /// A work directory the user gave (kept after the run); None: `<out>/work`, removed.
    pub work_dir: Option<PathBuf>,
    pub keep_data: bool,
    /// Connect to managed servers over their unix socket instead of TCP.
    pub socket: bool,
    pub server_user: Option<String>,
    pub count_rows: bool,
    pub calibrate: bool,
    pub server_start_timeout: Duration,
    /// How long a benchmark statement may take, and a long one may wait in silence
    /// (--statement-timeout).
    pub statement_timeout: Duration,
    /// How long a statement allowed to run long may take (--ddl-timeout).
    pub ddl_timeout: Duration,
    /// The whole login's deadline (--connect-timeout).
    pub connect_timeout: Duration,
    /// Which server errors the run goes on after (--ignore-errors).
    pub ignore_errors: IgnoreErrors,
    pub pause_between: Duration,
    pub rounds: u32,
    pub shard: Option<Shard>,
    pub campaign: Option<String>,
    pub base: Option<String>,
    /// Continue the run in `out` (its journal must exist).
    pub resume: bool,
    /// On resume, run failed cells again (once).
    pub retry_failed: bool,
    pub invocation: Invocation,
    pub interrupt: Arc<AtomicBool>,
    /// CPU profiles of every step's measured time (docs/profiles.md).
    pub profile: Option<crate::profile::Settings>,
}

pub use crate::dbms::ignore::IgnoreErrors;

impl Request {
    /// Where a cell's databases live: in a given work directory, one per target (kept); else
    /// `<out>/work/<cell id>` (removed after the cell).
    fn cell_work(&self, id: &str, target: &str) -> PathBuf {
        match &self.work_dir {
            Some(w) => w.join(target),
            None => self.out.join("work").join(id),
        }
    }

    pub fn timeouts(&self) -> crate::dbms::Timeouts {
        crate::dbms::Timeouts {
            connect: self.connect_timeout,
            ddl: self.ddl_timeout,
            stop: Some(self.interrupt.clone()),
            ..crate::dbms::Timeouts::with_statement(self.statement_timeout)
        }
    }
}

/// How the run ended, for the exit code.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Exit {
    Ok,
    /// A cell failed (or a result could not be written): exit 1.
    Failed,
    Interrupted,
}

pub struct CellOutcome {
    pub id: String,
    pub target: String,
    pub steps: Vec<StepFile>,
}

pub struct Outcome {
    pub exit: Exit,
    pub out: PathBuf,
    /// The cells this invocation ran, in order.
    pub cells: Vec<CellOutcome>,
    /// Result files that could not be written.
    pub write_failures: Vec<String>,
    /// Every cell directory of the run that holds a result, in plan order.
    pub result_dirs: Vec<PathBuf>,
    pub base: Option<String>,
}

pub(crate) fn now_rfc3339() -> String {
    time::OffsetDateTime::now_utc()
        .format(&time::format_description::well_known::Rfc3339)
        .unwrap_or_default()
}

/// Last resort on a second Ctrl-C: kill every server dbperf started.
pub fn kill_servers() {
    crate::server::process::kill_all_registered();
}

/// Servers an earlier dbperf left running (docs/reliability.md, "Servers left behind").
fn sweep_leftovers(events: &mut dyn Events) {
    use crate::server::registry::{sweep, Swept};
    for s in sweep() {
        let note = match &s {
            Swept::Stopped { .. } => Note::LeftoverStopped(s.sentence()),
            Swept::Damaged { .. } => Note::Warning(s.sentence()),
        };
        events.note("", &note);
    }
}

/// Reads the journal of a run directory, for `--resume`.
pub fn read_journal(out: &Path) -> anyhow::Result<Journal> {
    if !out.join(campaign::JOURNAL).is_file() {
        return bad_input(format!(
            "{} has no {}: it is not a dbperf run directory that can be resumed",
            out.display(),
            campaign::JOURNAL
        ));
    }
    campaign::read_journal(out).map_err(|e| BadInput(format!("{e:#}")).into())
}

/// Makes (or checks) a directory the run writes into: never a link, nobody else's, writable by
/// nobody else, reached through directories only root or this user can change (safe_fs).
fn create_dir(p: &Path, what: &str) -> anyhow::Result<()> {
    match crate::safe_fs::make_dir_all(p, crate::safe_fs::Also::Nobody) {
        Ok(_) => {}
        Err(e) if crate::error::is_bad_input(&e) => return Err(e),
        Err(e) => return bad_input(format!("cannot create {what} {}: {e:#}", p.display())),
    }
    let probe = p.join(".dbperf-write-test");
    if let Err(e) = crate::safe_fs::create_replacing(&probe, 0o600) {
        return bad_input(format!("cannot write into {what} {}: {e}", p.display()));
    }
    let _ = std::fs::remove_file(probe);
    Ok(())
}

/// Before anything runs: a work directory (kept from an earlier run with `--work-dir`, or the
/// run's own on `--resume`), or the way to it, must be one dbperf can work in safely (safe_fs::
/// check_dir: the work root too, when it does not exist yet), and so must a managed server's
/// instance directory in it (no link in the place of `server`, `data` or `run`, nothing another
/// user owns or can write to), or the run is refused as bad input.
fn check_kept_work(work: &Path, checked: &Checked) -> anyhow::Result<()> {
    let checks = crate::safe_fs::check_dir(work).and_then(|()| match &checked.access {
        Access::Managed(plan) => {
            crate::server::check_kept(&work.join("server"), plan.user.as_ref())
        }
        _ => Ok(()),
    });
    match checks {
        // A path that cannot be a directory (a file on the way) is the user's too.
        Err(e) if !crate::error::is_bad_input(&e) => bad_input(format!(
            "cannot use the work directory {}: {e:#}",
            work.display()
        )),
        other => other,
    }
}

/// Runs the request to its end (or to Ctrl-C). Err only for bad input found before anything ran.
pub fn run(req: Request, events: &mut dyn Events) -> anyhow::Result<Outcome> {
    sweep_leftovers(events);
    let target_names: Vec<String> = req.targets.iter().map(|t| t.name.clone()).collect();
    let suite_names: Vec<&str> = req.suites.iter().map(|s| s.name()).collect();
    let cells = plan::cells(&target_names, &suite_names, req.rounds.max(1));
    let prints = cells
        .iter()
        .map(|c| fingerprint::of(&req.targets[c.target], req.suites[c.suite].as_ref()))
        .collect::<anyhow::Result<Vec<_>>>()?;
    let out = &req.out;
    let out_existed = out.exists();
    // Probed once, before anything runs: a run that must profile and cannot is bad input.
    let profiler = match &req.profile {
        None => None,
        Some(s) => match crate::profile::probe(s) {
            Ok(p) => Some(p),
            Err(e) if s.require => return bad_input(format!("--require-profile: {e}")),
            Err(e) => {
                events.note("", &Note::Warning(e));
                None
            }
        },
    };
    if let Some(w) = req.work_dir.as_ref().filter(|w| w.exists() && !w.is_dir()) {
        return bad_input(format!(
            "--work-dir {} is not a directory; give a directory (it is made when missing)",
            w.display()
        ));
    }
    create_dir(out, "result directory")?;
    // Held until the run ends: a second dbperf on this --out is refused here, before it reads
    // or changes anything of this one's.
    let run_lock = match lock::take(out) {
        Ok(l) => l,
        Err(e) => {
            if !out_existed {
                let _ = std::fs::remove_dir(out);
            }
            return Err(e);
        }
    };
    // The run's own work directory is made and removed by dbperf: a link in its place (planted,
    // or left by hand) would send both elsewhere.
    let own_work = out.join("work");
    if req.work_dir.is_none() && std::fs::symlink_metadata(&own_work).is_ok_and(|m| !m.is_dir()) {
        return bad_input(format!(
            "{} is a symbolic link or not a directory; dbperf makes its work directory itself \
             (remove it, or give --work-dir)",
            own_work.display()
        ));
    }
    let prior = if req.resume {
        let j = read_journal(out)?;
        check_same_plan(&j, &cells, &prints)?;
        Some(j)
    } else {
        if out.join(campaign::JOURNAL).exists() {
            return bad_input(format!(
                "{} holds an earlier run; continue it with --resume {} or choose another --out",
                out.display(),
                out.display()
            ));
        }
        for c in &cells {
            if out.join(&c.id).join("run.json").exists() {
                return bad_input(format!(
                    "{} already holds a result for target {}; choose another --out",
                    out.display(),
                    req.targets[c.target].name
                ));
            }
        }
        None
    };
    let work_root = req.work_dir.clone().unwrap_or_else(|| out.join("work"));
    let work_root_existed = work_root.exists();
    let cell_work =
        |c: &plan::Cell| -> PathBuf { req.cell_work(&c.id, &req.targets[c.target].name) };
    let first_work = |t: &Target| -> PathBuf {
        cells
            .iter()
            .find(|c| req.targets[c.target].name == t.name)
            .map(&cell_work)
            .unwrap_or_else(|| work_root.join(&t.name))
    };
    let checked = {
        let mut all = Vec::new();
        let mut failed = None;
        for s in &req.suites {
            let cx = target::CheckCx {
                suite: s.as_ref(),
                server_user: req.server_user.as_deref(),
                server_start_timeout: req.server_start_timeout,
                timeouts: req.timeouts(),
                interrupt: &req.interrupt,
                embedded_dir: &first_work,
            };
            match target::check(&req.targets, &cx) {
                Ok(c) => all.push(c),
                Err(e) => {
                    failed = Some(e);
                    break;
                }
            }
        }
        if failed.is_none() {
            failed = cells
                .iter()
                .find_map(|c| check_kept_work(&cell_work(c), &all[c.suite][c.target]).err());
        }
        if let Some(e) = failed {
            // Nothing ran: leave no directory this run made.
            if !work_root_existed && req.work_dir.is_none() {
                let _ = std::fs::remove_dir_all(&work_root);
            }
            if !out_existed {
                run_lock.remove();
                let _ = std::fs::remove_dir(out);
            }
            return Err(e);
        }
        all
    };

    let mut journal = match prior {
        Some(j) => j,
        None => Journal {
            schema: SCHEMA,
            tool: tool(),
            campaign: req.campaign.clone(),
            created_at: now_rfc3339(),
            invocation: req.invocation.clone(),
            rounds: req.rounds.max(1),
            shard: req.shard,
            base: req.base.clone(),
            cells: cells
                .iter()
                .map(|c| JournalCell {
                    id: c.id.clone(),
                    target: req.targets[c.target].name.clone(),
                    suite: suite_names[c.suite].to_string(),
                    round: c.round,
                    order: c.order,
                    state: if c.in_shard(req.shard) {
                        CellState::Planned
                    } else {
                        CellState::Elsewhere
                    },
                    attempts: 0,
                    failures: 0,
                    fingerprint: prints[c.order].clone(),
                    runner: None,
                    servers: Vec::new(),
                    work_dir: None,
                    started_at: None,
                    ended_at: None,
                    duration_s: None,
                    error: None,
                })
                .collect(),
        },
    };
    let mut loop_ = Loop {
        req: &req,
        events,
        write_failures: Vec::new(),
        profiler,
    };
    if req.resume {
        loop_.recover(&mut journal)?;
        // A journal from before fingerprints: from now on its cells are checked too.
        for (c, p) in journal.cells.iter_mut().zip(&prints) {
            if c.fingerprint.is_empty() {
                c.fingerprint = p.clone();
            }
        }
    }
    loop_.save(&journal);
    loop_.events.plan(&PlanView {
        campaign: journal.campaign.clone(),
        cells: journal
            .cells
            .iter()
            .map(|c| PlannedCell {
                number: c.order + 1,
                id: c.id.clone(),
                target: c.target.clone(),
                suite: c.suite.clone(),
                round: c.round,
                rounds: journal.rounds,
                here: c.state == CellState::Planned,
                state: c.state.as_str().to_string(),
            })
            .collect(),
        shard: journal.shard.map(|s| (s.index, s.count)),
        resumed: req.resume,
    });

    let todo: Vec<usize> = (0..cells.len())
        .filter(|&i| journal.cells[i].state == CellState::Planned)
        .collect();
    let mut outcomes = Vec::new();
    let mut exit = Exit::Ok;
    let started = Instant::now();
    for (n, &i) in todo.iter().enumerate() {
        let cell = &cells[i];
        if n > 0 && !req.pause_between.is_zero() {
            loop_.events.note(
                "",
                &Note::Pausing {
                    seconds: req.pause_between.as_secs(),
                },
            );
            // From an option or a campaign file: a huge value pauses long, it does not panic.
            let until = dbms::later(Instant::now(), req.pause_between);
            while Instant::now() < until && !req.interrupt.load(Ordering::SeqCst) {
                std::thread::sleep(Duration::from_millis(50));
            }
        }
        if req.interrupt.load(Ordering::SeqCst) {
            exit = Exit::Interrupted;
            break;
        }
        let work = cell_work(cell);
        {
            let jc = &mut journal.cells[i];
            jc.state = CellState::Running;
            jc.attempts += 1;
            jc.runner = Some(mark::current());
            jc.started_at = Some(now_rfc3339());
            jc.ended_at = None;
            jc.duration_s = None;
            jc.error = None;
            jc.work_dir = req.work_dir.is_none().then(|| work.display().to_string());
        }
        loop_.save(&journal);
        loop_.events.cell_begins(&CellBegins {
            index: cell.order + 1,
            of: cells.len(),
            target: journal.cells[i].target.clone(),
            suite: journal.cells[i].suite.clone(),
            round: cell.round,
            rounds: journal.rounds,
            eta_s: eta(&journal, &todo[n..]),
            attempt: journal.cells[i].attempts,
        });
        let cell_started = Instant::now();
        let checked_target = &checked[cell.suite][cell.target];
        let campaign_cell = CampaignCell {
            campaign: journal.campaign.clone(),
            cell: cell.id.clone(),
            round: cell.round,
            rounds: journal.rounds,
            attempt: journal.cells[i].attempts,
            shard: journal.shard,
        };
        let result = loop_.run_cell(
            &mut journal,
            i,
            checked_target,
            req.suites[cell.suite].as_ref(),
            &work,
            campaign_cell,
        );
        if req.work_dir.is_none() && !req.keep_data {
            if let Err(e) = remove_cell_work(out, &cell.id) {
                loop_.events.note(
                    "",
                    &Note::Warning(format!("{} not removed: {e}", work.display())),
                );
            }
        }
        {
            let jc = &mut journal.cells[i];
            jc.state = match result.status {
                RunStatus::Ok => CellState::Done,
                RunStatus::Failed | RunStatus::Running => CellState::Failed,
                RunStatus::Interrupted => CellState::Interrupted,
            };
            if jc.state == CellState::Failed {
                jc.failures += 1;
            }
            jc.runner = None;
            jc.servers.clear();
            jc.ended_at = Some(now_rfc3339());
            jc.duration_s = Some(cell_started.elapsed().as_secs_f64());
            jc.error = result.error.clone();
            if req.work_dir.is_none() && !req.keep_data {
                jc.work_dir = None;
            }
        }
        loop_.save(&journal);
        match result.status {
            RunStatus::Failed | RunStatus::Running => {
                if exit == Exit::Ok {
                    exit = Exit::Failed;
                }
            }
            RunStatus::Interrupted => exit = Exit::Interrupted,
            RunStatus::Ok => {}
        }
        outcomes.push(CellOutcome {
            id: cell.id.clone(),
            target: journal.cells[i].target.clone(),
            steps: result.steps,
        });
        if exit == Exit::Interrupted {
            break;
        }
    }
    let _ = started;
    if req.interrupt.load(Ordering::SeqCst) {
        exit = Exit::Interrupted;
    }
    if req.work_dir.is_none() && !req.keep_data {
        // `<out>/work` is the run's own; removed only when nothing is left in it.
        let _ = std::fs::remove_dir(&work_root);
    } else if req.keep_data || req.work_dir.is_some() {
        loop_
            .events
            .note("", &Note::DataKept(work_root.display().to_string()));
    }
    if !loop_.write_failures.is_empty() && exit == Exit::Ok {
        exit = Exit::Failed;
    }
    let result_dirs = journal
        .cells
        .iter()
        .map(|c| out.join(&c.id))
        .filter(|d| d.join("run.json").is_file())
        .collect();
    Ok(Outcome {
        exit,
        out: out.clone(),
        cells: outcomes,
        write_failures: loop_.write_failures,
        result_dirs,
        base: journal.base.clone(),
    })
}

fn tool() -> Tool {
    Tool {
        name: "dbperf".into(),
        version: env!("CARGO_PKG_VERSION").into(),
        git_revision: crate::git_revision().into(),
    }
}

/// A resumed run must plan the same cells in the same order as the run it continues, each
/// defined as it was then (dbperf.toml and the flags are read again on resume).
fn check_same_plan(
    j: &Journal,
    cells: &[plan::Cell],
    prints: &[std::collections::BTreeMap<String, String>],
) -> anyhow::Result<()> {
    let before: Vec<&str> = j.cells.iter().map(|c| c.id.as_str()).collect();
    let now: Vec<&str> = cells.iter().map(|c| c.id.as_str()).collect();
    if before != now {
        return bad_input(format!(
            "the run's definition changed since it started (cells then: {}; now: {}); start a new \
             run with another --out",
            before.join(" "),
            now.join(" ")
        ));
    }
    for (c, now) in j.cells.iter().zip(prints) {
        // Journals written before fingerprints have none: accepted as they are.
        if c.fingerprint.is_empty() {
            continue;
        }
        if let Some(d) = fingerprint::difference(&c.fingerprint, now) {
            return bad_input(format!(
                "cell {} is defined differently than when the run started ({d}), so dbperf.toml \
                 or the flags changed; put them back or start a new run with another --out",
                c.id
            ));
        }
    }
    Ok(())
}

/// Seconds until the last of `remaining` cells ends: each cell's estimate is the mean duration
/// of the same target and suite's finished cells, else of every finished cell.
fn eta(j: &Journal, remaining: &[usize]) -> Option<f64> {
    let done: Vec<&JournalCell> = j
        .cells
        .iter()
        .filter(|c| {
            matches!(c.state, CellState::Done | CellState::Failed) && c.duration_s.is_some()
        })
        .collect();
    if done.is_empty() {
        return None;
    }
    let mean = |cs: &[&&JournalCell]| -> Option<f64> {
        (!cs.is_empty())
            .then(|| cs.iter().filter_map(|c| c.duration_s).sum::<f64>() / cs.len() as f64)
    };
    let all: Vec<&&JournalCell> = done.iter().collect();
    let overall = mean(&all)?;
    Some(
        remaining
            .iter()
            .map(|&i| {
                let c = &j.cells[i];
                let same: Vec<&&JournalCell> = done
                    .iter()
                    .filter(|d| d.target == c.target && d.suite == c.suite)
                    .collect();
                mean(&same).unwrap_or(overall)
            })
            .sum(),
    )
}

/// Whether `p` is `dir` or below it, compared component by component: `p` must be absolute and
/// hold no `.` or `..` (which could climb out after a string comparison said inside).
fn lexically_inside(p: &Path, dir: &Path) -> bool {
    use std::path::Component;
    p.is_absolute()
        && p.components()
            .all(|c| matches!(c, Component::RootDir | Component::Normal(_)))
        && p.starts_with(dir)
}

/// A journal's `work_dir` for cell `c` must be the cell's own, `<out>/work/<cell id>`. The run
/// directory may have moved since the journal was written, so any absolute path ending in
/// `work/<cell id>` is accepted; what is removed is always the one under `out`, whatever the
/// journal says.
fn check_work_dir(out: &Path, c: &JournalCell, w: &str) -> anyhow::Result<()> {
    let suffix = Path::new("work").join(&c.id);
    let p = Path::new(w);
    if lexically_inside(p, Path::new("/")) && p.ends_with(&suffix) {
        return Ok(());
    }
    bad_input(format!(
        "{} names {} as the work directory of cell {}, which is not {}; the journal was edited, so dbperf removes nothing and resumes nothing",
        out.join(campaign::JOURNAL).display(),
        crate::untrusted::shown(w),
        c.id,
        out.join(&suffix).display()
    ))
}

/// A directory of the run that could not be removed on resume (a link or a file planted in its
/// way): the run does not go on over it.
fn not_removed(p: &Path, e: std::io::Error) -> anyhow::Result<()> {
    bad_input(format!(
        "cannot remove {} before redoing its cell: {e}",
        p.display()
    ))
}

/// The parts of a cell id (`<target>` or `<target>/r<k>`): the directories above its last part,
/// and its last part.
fn id_parts(id: &str) -> (Vec<&str>, &str) {
    let mut parts: Vec<&str> = id.split('/').collect();
    let last = parts.pop().unwrap_or_default();
    (parts, last)
}

/// Removes `<out>/work/<cell id>` and the directories of the id it leaves empty, through
/// handles (session/workdir.rs): no link in the way is followed.
fn remove_cell_work(out: &Path, id: &str) -> std::io::Result<()> {
    let (mut dirs, last) = id_parts(id);
    dirs.insert(0, "work");
    workdir::remove_tree(out, &dirs, last)
}

struct CellResult {
    status: RunStatus,
    steps: Vec<StepFile>,
    error: Option<String>,
}

struct Loop<'a> {
    req: &'a Request,
    events: &'a mut dyn Events,
    write_failures: Vec<String>,
    profiler: Option<crate::profile::Profiler>,
}

impl Loop<'_> {
    /// Writes the journal; a failure is reported and counted, the run goes on.
    fn save(&mut self, j: &Journal) {
        if let Err(e) = campaign::write_journal(&self.req.out, j) {
            self.write_failed(format!(
                "{}: {e}",
                self.req.out.join(campaign::JOURNAL).display()
            ));
        }
    }

    fn write_failed(&mut self, what: String) {
        self.events.note("", &Note::WriteFailed(what.clone()));
        if !self.write_failures.contains(&what) {
            self.write_failures.push(what);
        }
    }

    /// Writes a result file; false (and a note) when it could not be written.
    fn write<T: serde::Serialize>(&mut self, path: &Path, value: &T) -> bool {
        match results::write_json_atomic(path, value) {
            Ok(()) => true,
            Err(e) => {
                self.write_failed(format!("{}: {e}", path.display()));
                false
            }
        }
    }

    /// Before a resumed run continues: cells whose dbperf was killed are cleaned up and planned
    /// again, interrupted ones (and failed ones, once, unless told not to) too; what they wrote
    /// is moved aside (killed: removed, it is incomplete).
    fn recover(&mut self, j: &mut Journal) -> anyhow::Result<()> {
        for c in j.cells.iter_mut() {
            match c.state {
                CellState::Running => {
                    if let Some(r) = &c.runner {
                        if mark::alive(r) && r.pid != std::process::id() {
                            return bad_input(format!(
                                "cell {} is being run by dbperf pid {} right now; wait for it or \
                                 stop it first",
                                c.id, r.pid
                            ));
                        }
                    }
                    self.stop_left_servers(c)?;
                    let (dirs, last) = id_parts(&c.id);
                    workdir::remove_tree(&self.req.out, &dirs, last)
                        .or_else(|e| not_removed(&self.req.out.join(&c.id), e))?;
                    if let Some(w) = c.work_dir.take() {
                        check_work_dir(&self.req.out, c, &w)?;
                        remove_cell_work(&self.req.out, &c.id)
                            .or_else(|e| not_removed(&self.req.out.join("work").join(&c.id), e))?;
                    }
                    c.state = CellState::Planned;
                    c.runner = None;
                }
                CellState::Interrupted => {
                    self.set_aside(c);
                    c.state = CellState::Planned;
                }
                // One retry of a failure; a killed attempt before or after it does not count.
                CellState::Failed if self.req.retry_failed && c.failed_attempts() < 2 => {
                    self.set_aside(c);
                    c.state = CellState::Planned;
                }
                _ => {}
            }
        }
        Ok(())
    }

    /// Moves an earlier attempt's results to `<out>/.attempts/<cell>.<n>`, where reports do not
    /// look but nothing is lost.
    fn set_aside(&mut self, c: &JournalCell) {
        let from = self.req.out.join(&c.id);
        if !from.exists() {
            return;
        }
        let (dirs, last) = id_parts(&c.id);
        let to = format!("{}.{}", c.id.replace('/', "."), c.attempts);
        if let Err(e) = workdir::move_aside(&self.req.out, &dirs, last, ".attempts", &to) {
            self.write_failed(format!("moving {} aside: {e}", from.display()));
        }
    }

    /// The servers a killed dbperf left running for cell `c`: each is stopped (SIGKILL to its
    /// process group) only when it is the very process the journal recorded (pid, boot, start
    /// time, owner and command line, checked again at the signal through
    /// `Identity::signal_group`), runs as a user other than root (dbperf never runs a server as
    /// root), and was started on a data directory inside the cell's work directory, which its
    /// command line names. The journal is a file anyone who can write the run directory can
    /// edit: an entry naming another process, or a directory elsewhere, is refused.
    fn stop_left_servers(&mut self, c: &mut JournalCell) -> anyhow::Result<()> {
        let work = self.req.cell_work(&c.id, &c.target);
        for s in std::mem::take(&mut c.servers) {
            let datadir = Path::new(&s.datadir);
            if !lexically_inside(datadir, &work) {
                return bad_input(format!(
                    "{} names {} as the data directory of a server of cell {}, which is not inside the cell's work directory {}; the journal was edited, so dbperf stops nothing and resumes nothing",
                    self.req.out.join(campaign::JOURNAL).display(),
                    crate::untrusted::shown(&s.datadir),
                    c.id,
                    work.display()
                ));
            }
            // Gone, or its pid now holds another process: nothing to stop.
            let Some(now) = mark::now(&s.process) else {
                continue;
            };
            if now.uid == 0 || !now.mentions(datadir) {
                return bad_input(format!(
                    "{} names pid {} as the server of cell {} on {}, but that process {}; the journal was edited, so dbperf stops nothing and resumes nothing",
                    self.req.out.join(campaign::JOURNAL).display(),
                    now.pid,
                    c.id,
                    datadir.display(),
                    if now.uid == 0 {
                        "runs as root"
                    } else {
                        "was not started on that directory"
                    }
                ));
            }
            if now.signal_group(libc::SIGKILL) {
                self.events.note(
                    &c.target,
                    &Note::LeftoverStopped(format!(
                        "pid {} (data directory {}), left by a dbperf that was killed",
                        now.pid, s.datadir
                    )),
                );
            }
        }
        Ok(())
    }

    fn run_cell(
        &mut self,
        journal: &mut Journal,
        index: usize,
        checked: &Checked,
        suite: &dyn Suite,
        work: &Path,
        campaign_cell: CampaignCell,
    ) -> CellResult {
        let req = self.req;
        let t = &checked.target;
        let tdir = req.out.join(&campaign_cell.cell);
        let steps_dir = tdir.join("steps");
        let rcx = target::RunFileCx {
            suite,
            command_line: &req.invocation.args,
            campaign: Some(campaign_cell),
        };
        self.events.note(
            &t.name,
            &Note::TargetBegins {
                steps: suite.step_names(),
            },
        );
        // The target ended before its steps: failed, or interrupted (Ctrl-C while its server
        // was being made), which a resume runs again like any interrupted cell.
        let ended =
            |this: &mut Self, engine: &str, error: String, status: RunStatus| -> CellResult {
                this.events
                    .note(&t.name, &Note::TargetFailed(error.clone()));
                let host = crate::host::fingerprint(&Default::default(), &[work.to_path_buf()]);
                if let Ok(mut run) = target::new_run_file(
                    t,
                    engine,
                    &rcx,
                    serde_json::to_value(host).unwrap_or_default(),
                ) {
                    run.status = status;
                    run.error = Some(error.clone());
                    run.ended_at = Some(now_rfc3339());
                    if let Checked {
                        access: Access::Managed(plan),
                        ..
                    } = checked
                    {
                        run.target.config_text = plan.config_text.clone();
                    }
                    this.write(&tdir.join("run.json"), &run);
                }
                CellResult {
                    status,
                    steps: Vec::new(),
                    error: Some(error),
                }
            };
        let failed = |this: &mut Self, engine: &str, error: String| -> CellResult {
            ended(this, engine, error, RunStatus::Failed)
        };
        if let Err(e) = crate::safe_fs::make_dir_all(&steps_dir, crate::safe_fs::Also::Nobody) {
            self.write_failed(format!("{}: {e}", steps_dir.display()));
            return CellResult {
                status: RunStatus::Failed,
                steps: Vec::new(),
                error: Some(format!("cannot create {}: {e:#}", steps_dir.display())),
            };
        }
        if let Err(e) = crate::safe_fs::make_dir_all(work, crate::safe_fs::Also::Nobody) {
            return failed(
                self,
                &t.engine,
                format!("cannot create {}: {e:#}", work.display()),
            );
        }
        let mut running = None;
        let (dbms, record) = match &checked.access {
            Access::Embedded => match dbms::open_embedded(t, work, req.timeouts()) {
                Ok(d) => (d, None),
                Err(e) => return failed(self, &t.engine, format!("{e:#}")),
            },
            Access::External(d) => (d.clone(), target::external_record(t)),
            Access::Managed(plan) => {
                // A managed server starts on fresh data: what an earlier cell left in a kept
                // work directory (--work-dir, or a killed attempt's) is replaced.
                if let Err(e) = crate::server::clear_previous(&work.join("server")) {
                    return failed(self, plan.kind.name(), format!("{e:#}"));
                }
                match target::start_server(
                    plan,
                    &work.join("server"),
                    target::StartCx {
                        socket: req.socket,
                        timeouts: req.timeouts(),
                        events: self.events,
                        target: &t.name,
                    },
                ) {
                    Ok(s) => {
                        if let Some(m) = mark::of(s.running.pid) {
                            journal.cells[index].servers.push(ServerLease {
                                process: m,
                                datadir: s.running.datadir.display().to_string(),
                            });
                            self.save(journal);
                        }
                        running = Some(s.running);
                        (s.dbms, Some(s.record))
                    }
                    // A wait cut short by the stop flag fails with the server's words, not
                    // as `Interrupted`: the flag decides too.
                    Err(e)
                        if crate::server::process::is_interrupted(&e)
                            || req.interrupt.load(Ordering::SeqCst) =>
                    {
                        return ended(
                            self,
                            plan.kind.name(),
                            format!("server start-up interrupted: {e:#}"),
                            RunStatus::Interrupted,
                        )
                    }
                    Err(e) => {
                        return failed(
                            self,
                            plan.kind.name(),
                            format!("server did not start: {e:#}"),
                        )
                    }
                }
            }
        };
        let dbms = req.ignore_errors.apply(dbms);
        let data_dir = match (&running, &checked.access) {
            (Some(r), _) => Some(r.datadir.clone()),
            (None, Access::External(_)) => None,
            _ => Some(work.to_path_buf()),
        };
        let begun = match target::begin(
            t,
            &dbms,
            record,
            vec![work.to_path_buf()],
            req.calibrate,
            &rcx,
            self.events,
        ) {
            Ok(b) => b,
            Err(e) => {
                if let Some(r) = running.as_mut() {
                    r.stop();
                }
                return failed(self, dbms.engine(), format!("{e:#}"));
            }
        };
        let mut begun = begun;
        self.write(&tdir.join("run.json"), &begun.run);
        let cost = CostSources {
            dbms: dbms.clone(),
            sources: crate::metrics::Sources::new(
                data_dir.as_deref(),
                // A managed server's logs may be configured onto other devices.
                &running
                    .as_ref()
                    .map(|_| dbms.log_dirs())
                    .unwrap_or_default(),
                running.as_ref().map(|r| r.pid),
            ),
            data_dir,
        };
        let mut steps = suite.on(dbms.clone());
        let mut files = Vec::new();
        let mut status = RunStatus::Ok;
        for i in 0..steps.count() {
            if req.interrupt.load(Ordering::SeqCst) {
                status = RunStatus::Interrupted;
                break;
            }
            let started_at = now_rfc3339();
            // Whether the step failed because the server stalled, by its failure's type: the
            // measured failure's (`Measured::stalled`), or a server that did not answer before
            // the step or in the cleanup after it. Its log tail then says why.
            let (mut sf, stalled) = match steps.begin(i) {
                Err(e) => (
                    steps.failed_before(i, format!("before the step: {e:#}"), started_at),
                    dbms::fault_of(e.as_ref()) == Some(Fault::NoAnswer),
                ),
                Ok(setup) => {
                    let mut measured = measure(
                        setup,
                        &mut MeasureCx {
                            target: &t.name,
                            steps_dir: &steps_dir,
                            monitor: &mut begun.monitor,
                            cost: &cost,
                            events: &mut *self.events,
                            interrupt: &req.interrupt,
                            quiet: req.statement_timeout,
                            ddl: req.ddl_timeout,
                            profiler: self.profiler.as_ref(),
                        },
                    );
                    let measured_stall = measured.stalled();
                    let profile = measured.profile.take();
                    let diagnostics = std::mem::take(&mut measured.diagnostics);
                    let mut finish_cx = FinishCx {
                        target: &t.name,
                        cost: &cost,
                        interrupt: &req.interrupt,
                        count_rows: req.count_rows,
                        events: &mut *self.events,
                        cleanup_fault: None,
                    };
                    let mut sf = steps.finish(i, measured, started_at, &mut finish_cx);
                    sf.profile = profile;
                    sf.diagnostics = diagnostics;
                    let cleanup_stall = finish_cx.cleanup_fault == Some(Fault::NoAnswer);
                    (sf, measured_stall || cleanup_stall)
                }
            };
            if let (Some(e), Some(r)) = (sf.error.as_mut(), running.as_ref()) {
                if stalled {
                    e.push_str(&format!("; the server's log ends:\n{}", r.log_tail(15)));
                }
            }
            let written = self.write(&steps_dir.join(format!("{}.json", sf.step)), &sf);
            self.events.step_ends(&t.name, &sf);
            let step_status = sf.status;
            if step_status == Status::Failed {
                begun.run.failed_step = Some(sf.step.clone());
                begun.run.error = sf.error.clone();
            }
            files.push(sf);
            match step_status {
                Status::Failed => {
                    status = RunStatus::Failed;
                    break;
                }
                Status::Interrupted => {
                    status = RunStatus::Interrupted;
                    break;
                }
                Status::Ok if !written => {
                    // Results that cannot be written are not worth measuring further.
                    status = RunStatus::Failed;
                    begun.run.error = Some("a step's result could not be written".into());
                    break;
                }
                Status::Ok => {}
            }
        }
        drop(steps);
        let run: Option<RunFile> = match target::end(begun, status, running.as_mut(), self.events) {
            Ok(r) => Some(r),
            Err(e) => {
                self.events
                    .note(&t.name, &Note::Warning(format!("ending the target: {e:#}")));
                None
            }
        };
        drop(running);
        journal.cells[index].servers.clear();
        let error = run.as_ref().and_then(|r| r.error.clone());
        if let Some(run) = &run {
            self.write(&tdir.join("run.json"), run);
        }
        self.events.target_ends(&events::TargetEnds {
            target: t.name.clone(),
            status,
        });
        CellResult {
            status,
            steps: files,
            error,
        }
    }
}

#[cfg(test)]
mod tests;
