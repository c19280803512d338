//! The run loop: a campaign's cells (target x suite x round) in their planned order, each with a
//! fresh server and fresh data, every step measured the same way, results written as each step
//! ends, and a journal (`campaign.json`) that lets a run killed at any point be resumed. The CLI
//! builds a `Request` from flags and renders `Events`; nothing here parses flags or prints.

mod cell;
pub mod events;
mod fingerprint;
pub mod host_axes;
mod ibench;
pub mod instance;
mod ledger;
mod lock;
mod mark;
mod measure;
mod pgbench;
pub mod plan;
mod recover;
pub mod sbatch;
mod schedule;
mod server_log;
pub mod slurm;
mod stall;
mod start;
mod suite;
mod sysbench;
mod target;
mod tpcc;
mod workdir;

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

pub use events::{CellBegins, Display, Events, Note, PlanView, PlannedCell, Quiet, Tick};
pub use ibench::IbenchSuite;
pub use pgbench::PgbenchSuite;
pub use suite::Suite;
pub use sysbench::SysbenchSuite;
pub use tpcc::TpccSuite;

use crate::error::{bad_input, BadInput};
use crate::results::campaign::{self, Invocation, Journal, Shard};
use crate::results::{self, RunStatus, StepFile, Tool};
use crate::spec::target::Target;

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
    /// Host settings swept over (read-ahead, I/O scheduler): each cell runs under each.
    pub hosts: Vec<host_axes::HostSetting>,
    /// Where sysfs and procfs are, for the host settings.
    pub host_roots: crate::host::Roots,
}

pub use crate::dbms::ignore::IgnoreErrors;

impl Request {
    /// A request with `dbperf run`'s defaults for everything but what is run, on what, into
    /// where; the rest is set with struct update syntax (`Request { rounds: 2, ..new }`).
    pub fn new(suites: Vec<Arc<dyn Suite>>, targets: Vec<Target>, out: PathBuf) -> Request {
        Request {
            suites,
            targets,
            out,
            work_dir: None,
            keep_data: false,
            socket: false,
            server_user: None,
            count_rows: false,
            calibrate: true,
            server_start_timeout: Duration::from_secs(120),
            statement_timeout: Duration::from_secs(60),
            ddl_timeout: Duration::from_secs(86_400),
            connect_timeout: Duration::from_secs(30),
            ignore_errors: IgnoreErrors::Default,
            pause_between: Duration::ZERO,
            rounds: 1,
            shard: None,
            campaign: None,
            base: None,
            resume: false,
            retry_failed: true,
            invocation: Invocation {
                args: Vec::new(),
                cwd: "/".into(),
            },
            interrupt: Arc::new(AtomicBool::new(false)),
            profile: None,
            hosts: Vec::new(),
            host_roots: crate::host::Roots::default(),
        }
    }

    /// Where a cell's databases live: in a given work directory, one per target and level of
    /// a sweep (kept); else `<out>/work/<cell id>` (removed after the cell).
    fn cell_work(&self, id: &str, target: &str, axes: &plan::Axes) -> PathBuf {
        match &self.work_dir {
            Some(w) if axes.is_empty() => w.join(target),
            Some(w) => w.join(format!("{target}.{}", crate::results::axes_label(axes))),
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

impl Exit {
    /// The run's ending once a cell ended with `status`: an interruption ends it, a failure
    /// stands unless one follows.
    fn after(self, status: RunStatus) -> Exit {
        match status {
            RunStatus::Interrupted => Exit::Interrupted,
            RunStatus::Failed | RunStatus::Running if self == Exit::Ok => Exit::Failed,
            _ => self,
        }
    }
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
    // Their memory caps' cgroups, empty once the kernel has reaped the killed processes.
    crate::server::cgroup::remove_live();
}

/// Before anything is made: a memory cap a target asks for (`--server-memory`) can be set here
/// (a memory controller, root), or the run is refused with one sentence.
pub fn check_memory_caps(targets: &[crate::spec::target::Target]) -> anyhow::Result<()> {
    let Some(most) = targets.iter().filter_map(|t| t.server_memory).max() else {
        return Ok(());
    };
    // A cap above the RAM makes nothing IO-bound and sizes configs for memory that is not there.
    let ram_kb = crate::host::memory_kb(&Default::default());
    if ram_kb > 0 && most > ram_kb << 10 {
        return bad_input(format!(
            "--server-memory {} MiB is more than this host's {} MiB of RAM: a cap that large \
             makes nothing IO-bound",
            most >> 20,
            ram_kb >> 10
        ));
    }
    let records = crate::server::registry::cgroup_records()?;
    crate::server::cgroup::check(Path::new("/sys"), &records)?;
    Ok(())
}

/// Servers an earlier dbperf left running (docs/reliability.md, "Servers left behind").
fn sweep_leftovers(events: &mut dyn Events) {
    use crate::server::registry::{sweep, Swept};
    for s in sweep() {
        let note = match &s {
            Swept::Stopped { .. } => Note::LeftoverStopped(s.sentence()),
            Swept::Damaged { .. } | Swept::NotOwn { .. } => Note::Warning(s.sentence()),
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
    // It decides what the resumed run does: only one this user wrote is obeyed.
    campaign::read_own_journal(out).map_err(|e| BadInput(format!("{e:#}")).into())
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

/// Runs the request to its end (or to Ctrl-C). Err only for bad input found before anything ran.
pub fn run(req: Request, events: &mut dyn Events) -> anyhow::Result<Outcome> {
    sweep_leftovers(events);
    let (mut p, mut ledger) = start::prepare(&req, events)?;
    let mut loop_ = Loop {
        req: &req,
        events,
        write_failures: Vec::new(),
        profiler: p.profiler.take(),
    };
    let mut redone = recover::Redone::new();
    if req.resume {
        redone = loop_.recover(&mut ledger.journal)?;
        ledger.fill_fingerprints(&p.prints);
    }
    loop_.save(&ledger.journal);
    loop_.events.plan(&ledger.plan_view(req.resume, &redone));
    let (mut exit, cells) = loop_.run_cells(&mut ledger, &p);
    if req.interrupt.load(Ordering::SeqCst) {
        exit = Exit::Interrupted;
    }
    if req.work_dir.is_none() && !req.keep_data {
        // `<out>/work` is the run's own; removed only when nothing is left in it.
        let _ = std::fs::remove_dir(&p.work_root);
    } else {
        let kept = p.work_root.display().to_string();
        loop_.events.note("", &Note::DataKept(kept));
    }
    if !loop_.write_failures.is_empty() && exit == Exit::Ok {
        exit = Exit::Failed;
    }
    Ok(Outcome {
        exit,
        out: req.out.clone(),
        cells,
        result_dirs: ledger.result_dirs(&req.out),
        write_failures: loop_.write_failures,
        base: ledger.journal.base.clone(),
    })
}

fn tool() -> Tool {
    Tool {
        name: "dbperf".into(),
        version: env!("CARGO_PKG_VERSION").into(),
        git_revision: crate::git_revision().into(),
    }
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
}

#[cfg(test)]
mod tests;
