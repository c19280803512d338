//! `dbperf run`: flags into a session request, the session's events onto the terminal, then the
//! summary table and the report. The run loop itself is `session`'s.

use std::io::IsTerminal;
use std::path::{Path, PathBuf};
use std::sync::atomic::AtomicBool;
use std::sync::Arc;
use std::time::Duration;

use super::render::Terminal;
use super::run_args::{ProfileArg, ProfileScopeArg, RunArgs, TransportArg};
use super::summary::{fmt_num, table, TargetSteps};
use super::what::{refuse_other_suites_flags, what, What};
use super::{EXIT_FAILED, EXIT_INTERRUPTED, EXIT_OK};
use crate::error::bad_input;
use crate::results::campaign::Invocation;
use crate::session::{self, Exit, IgnoreErrors, Request};
use crate::spec::{self, presets, target::Target};
use crate::suites::Suite;

/// Set by Ctrl-C or SIGTERM (cli/signals.rs); the session checks it between and within steps.
pub(super) fn interrupt_flag() -> Arc<AtomicBool> {
    super::signals::stop_flag("stopping the step and writing what was measured")
}

/// Servers and their tools run in other directories (PostgreSQL in its data directory), so
/// every path dbperf hands on is made absolute against the directory dbperf was started in.
/// --ddl-timeout, which bounds the statements that may run longer than the others.
fn ddl_timeout(a: &RunArgs) -> anyhow::Result<Duration> {
    if a.ddl_timeout < a.statement_timeout {
        return bad_input(format!(
            "--ddl-timeout {} is shorter than --statement-timeout {}: it bounds the statements \
             allowed to run longer than the others, so it must be at least as long",
            a.ddl_timeout, a.statement_timeout
        ));
    }
    Ok(Duration::from_secs(a.ddl_timeout))
}

/// Absolute, with `.` and `..` folded away as the shell's `cd` does: a run directory is
/// recorded in the journal, and a resume checks what it holds lies lexically inside it.
pub(super) fn absolute(p: &Path) -> anyhow::Result<PathBuf> {
    use std::path::Component;
    let abs = std::path::absolute(p)
        .or_else(|e| bad_input(format!("cannot resolve the path {}: {e}", p.display())))?;
    let mut out = PathBuf::new();
    for c in abs.components() {
        match c {
            Component::ParentDir => {
                out.pop();
            }
            Component::CurDir => {}
            other => out.push(other),
        }
    }
    Ok(out)
}

fn default_out(name: &str, preset: &str) -> PathBuf {
    let fmt = time::macros::format_description!("[year][month][day]-[hour][minute][second]");
    let stamp = time::OffsetDateTime::now_utc()
        .format(&fmt)
        .unwrap_or_default();
    let base = PathBuf::from("results").join(format!("{stamp}-{name}-{preset}"));
    let mut p = base.clone();
    let mut i = 2;
    while p.exists() {
        p = PathBuf::from(format!("{}-{i}", base.display()));
        i += 1;
    }
    p
}

/// `--resume DIR`: the arguments of the run being continued, parsed again in its working
/// directory, with DIR as its output.
fn resumed(a: &RunArgs) -> anyhow::Result<(RunArgs, Invocation, PathBuf)> {
    let dir = absolute(a.resume.as_deref().expect("called with --resume"))?;
    let journal = session::read_journal(&dir)?;
    let inv = journal.invocation.clone();
    if std::env::set_current_dir(&inv.cwd).is_err() {
        return bad_input(format!(
            "the run in {} was started in {}, which no longer exists",
            dir.display(),
            inv.cwd
        ));
    }
    let argv = std::iter::once("dbperf".to_string()).chain(inv.args.iter().cloned());
    match super::parse(argv) {
        Ok(super::Cli {
            command: super::Command::Run(r),
        }) if r.resume.is_none() => Ok((*r, inv, dir)),
        _ => bad_input(format!(
            "{} records arguments this dbperf cannot read: {}",
            dir.join("campaign.json").display(),
            inv.args.join(" ")
        )),
    }
}

pub fn run(args: RunArgs) -> anyhow::Result<i32> {
    if args.list_presets {
        list_presets(args.server_memory);
        return Ok(EXIT_OK);
    }
    if listed(&args)? {
        return Ok(EXIT_OK);
    }
    let show = !args.no_progress && std::io::stderr().is_terminal();
    let start = start(args)?;
    let file = spec::config_file::load(start.args.config_file.as_deref())?;
    let w = what(&start.args, &file)?;
    let targets = targets(&start.args, &file, &w)?;
    let req = request(start, w, targets)?;
    let mut term = Terminal::new(show);
    let outcome = session::run(req, &mut term)?;
    Ok(finish(&outcome))
}

/// A suite's own listing instead of a run (sysbench's `--list`); false when the run goes on.
/// A match, so a new suite says whether it has one.
fn listed(args: &RunArgs) -> anyhow::Result<bool> {
    match args.suite {
        Suite::Sysbench if args.sysbench.list => {
            refuse_other_suites_flags(args, Suite::Sysbench)?;
            let p = args
                .sysbench
                .params(&args.preset, args.seed, args.server_memory)?;
            super::sysbench::print_list(&p);
            Ok(true)
        }
        Suite::Ibench | Suite::Sysbench | Suite::Tpcc | Suite::Pgbench => Ok(false),
    }
}

/// How the run starts: afresh from the command line, or continued from its journal.
struct Start {
    /// The run's arguments: the command line's, or on --resume the journal's.
    args: RunArgs,
    invocation: Invocation,
    resume_dir: Option<PathBuf>,
    retry_failed: bool,
}

fn start(args: RunArgs) -> anyhow::Result<Start> {
    // --no-retry is the resuming command's, not the resumed run's.
    let retry_failed = !args.no_retry;
    if args.resume.is_none() {
        let invocation = Invocation {
            args: args.argv.clone(),
            cwd: std::env::current_dir()
                .map(|d| d.display().to_string())
                .unwrap_or_default(),
        };
        return Ok(Start {
            args,
            invocation,
            resume_dir: None,
            retry_failed,
        });
    }
    // The run's own arguments are in its journal; others would be silently ignored.
    if let Some(extra) = args
        .given
        .first_other_than(&["resume", "no_retry", "no_progress"])
    {
        return bad_input(format!(
            "{extra} cannot go with --resume: a resumed run keeps the arguments it was \
             started with (only --no-retry and --no-progress may be added)"
        ));
    }
    let (args, invocation, dir) = resumed(&args)?;
    Ok(Start {
        args,
        invocation,
        resume_dir: Some(dir),
        retry_failed,
    })
}

/// The run's targets, resolved (builds fetched where asked), each accepted by every suite.
pub(super) fn targets(
    a: &RunArgs,
    file: &spec::config_file::ConfigFile,
    w: &What,
) -> anyhow::Result<Vec<Target>> {
    let mut targets: Vec<Target> = Vec::new();
    let cache = crate::fetch::Cache::locate(a.cache_dir.as_deref())?;
    let builds = crate::fetch::ResolveOptions {
        cache: &cache,
        fetch: a.fetch,
    };
    for s in &w.target_specs {
        let mut t = file.resolve(s, &a.pragmas)?;
        if let Some(bytes) = w.server_memory {
            spec::target::cap_memory(&mut t, bytes, "--server-memory")?;
        }
        crate::fetch::resolve_target(&mut t, &builds, &mut |l: &str| say!("{l}"))?;
        if targets.iter().any(|x| x.name == t.name) {
            return bad_input(format!("target {} is given twice", t.name));
        }
        targets.push(t);
    }
    for s in &w.suites {
        if let Some(e) = s.refuses(&targets) {
            return bad_input(e);
        }
    }
    // Refused before anything is made: a cap that cannot be set must not become an uncapped run.
    session::check_memory_caps(&targets)?;
    if let Some(v) = &w.vary {
        let mut each = Vec::new();
        for t in &targets {
            for value in &v.values {
                each.push(t.with_setting(&v.setting, value)?);
            }
        }
        targets = each;
    }
    if let Some(b) = &w.base {
        if !targets.iter().any(|t| &t.name == b) {
            return bad_input(format!(
                "base target {b} is not one of the run's targets ({})",
                targets
                    .iter()
                    .map(|t| t.name.as_str())
                    .collect::<Vec<_>>()
                    .join(", ")
            ));
        }
    }
    Ok(targets)
}

fn request(start: Start, w: What, targets: Vec<Target>) -> anyhow::Result<Request> {
    let a = &start.args;
    let out = match (&start.resume_dir, &a.out) {
        (Some(d), _) => d.clone(),
        (None, Some(p)) => absolute(p)?,
        (None, None) => absolute(&default_out(&w.name, &a.preset))?,
    };
    let req = run_request(a, &w, targets, out)?;
    Ok(Request {
        resume: start.resume_dir.is_some(),
        retry_failed: start.retry_failed,
        invocation: start.invocation,
        ..req
    })
}

/// The session request of `a`'s run flags over `targets` into `out`: a fresh run, retrying
/// failed cells on a resume, with no invocation recorded (the caller sets those). `dbperf
/// bisect` makes one per measurement.
pub(super) fn run_request(
    a: &RunArgs,
    w: &What,
    targets: Vec<Target>,
    out: PathBuf,
) -> anyhow::Result<Request> {
    Ok(Request {
        work_dir: a.work_dir.as_deref().map(absolute).transpose()?,
        keep_data: a.keep_data,
        socket: a.transport == TransportArg::Socket,
        server_user: a.server_user.clone(),
        count_rows: a.count_rows,
        calibrate: !a.no_calibration,
        server_start_timeout: Duration::from_secs(a.server_start_timeout),
        statement_timeout: Duration::from_secs(a.statement_timeout),
        ddl_timeout: ddl_timeout(a)?,
        connect_timeout: Duration::from_secs(a.connect_timeout),
        ignore_errors: match &a.ignore_errors {
            Some(s) => IgnoreErrors::parse(s)?,
            None => IgnoreErrors::Default,
        },
        pause_between: Duration::from_secs(w.pause_between),
        rounds: w.rounds,
        shard: a.shard,
        campaign: w.campaign.clone(),
        base: w.base.clone(),
        interrupt: interrupt_flag(),
        profile: profile_settings(a),
        hosts: w.hosts.clone(),
        ..Request::new(w.suites.clone(), targets, out)
    })
}

fn profile_settings(a: &RunArgs) -> Option<crate::profile::Settings> {
    a.profile.map(|w| crate::profile::Settings {
        who: match w {
            ProfileArg::Server => crate::profile::Who::Server,
            ProfileArg::Client => crate::profile::Who::Client,
            ProfileArg::Both => crate::profile::Who::Both,
        },
        hz: a.profile_hz,
        max_bytes: a.profile_max_size,
        require: a.require_profile,
        scope: a.profile_scope.map(|s| match s {
            ProfileScopeArg::System => crate::profile::Scope::System,
            ProfileScopeArg::Processes => crate::profile::Scope::Processes,
        }),
    })
}

/// The summary table, what could not be written, the report; the exit code.
fn finish(outcome: &session::Outcome) -> i32 {
    let summaries: Vec<TargetSteps> = outcome
        .cells
        .iter()
        .map(|c| TargetSteps {
            target: &c.id,
            steps: &c.steps,
        })
        .collect();
    if summaries.iter().any(|s| !s.steps.is_empty()) {
        out!("{}", table(&summaries));
    }
    for f in &outcome.write_failures {
        out!("NOT WRITTEN: {f}");
    }
    out!("Results: {}", outcome.out.display());
    super::report::after_run(&outcome.out, &outcome.result_dirs, outcome.base.as_deref());
    match outcome.exit {
        Exit::Ok => EXIT_OK,
        Exit::Failed => EXIT_FAILED,
        Exit::Interrupted => EXIT_INTERRUPTED,
    }
}

/// Every suite's presets, then the built-in configs; a preset sized from the memory cap shows
/// its rows for `cap`, or says "from cap".
fn list_presets(cap: Option<u64>) {
    for suite in Suite::all() {
        let l = spec::listing::of(suite, cap);
        let mut t = comfy_table::Table::new();
        t.load_style(comfy_table::presets::UTF8_FULL_CONDENSED);
        t.set_header(l.header);
        for row in l.rows {
            t.add_row(row.into_iter().map(|c| match c {
                presets::Listed::Text(s) => s,
                presets::Listed::Rows(Some(n)) => fmt_num(n as f64),
                presets::Listed::Rows(None) => "from cap".to_string(),
            }));
        }
        out!("{t}");
        out!("{}", l.note);
    }
    let mut c = comfy_table::Table::new();
    c.load_style(comfy_table::presets::UTF8_FULL_CONDENSED);
    c.set_header([
        "SQLite config (--target sqlite:NAME)",
        "pragmas",
        "what it is",
    ]);
    for cfg in presets::SQLITE_CONFIGS {
        let pragmas: Vec<String> = cfg
            .pragmas
            .iter()
            .map(|(k, v)| format!("{k}={v}"))
            .collect();
        c.add_row([
            cfg.name.to_string(),
            pragmas.join(" "),
            cfg.about.to_string(),
        ]);
    }
    out!("{c}");
    let mut p = comfy_table::Table::new();
    p.load_style(comfy_table::presets::UTF8_FULL_CONDENSED);
    p.set_header([
        "published config (--target ENGINE@VERSION:NAME)",
        "engine",
        "versions",
        "newest source in github.com/mdcallag/mytools",
    ]);
    for row in presets::server_configs() {
        p.add_row(row);
    }
    out!("{p}");
    out!("Written for the server's version, memory scaled to this host's RAM (docs/configs.md).");
}
