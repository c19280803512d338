//! `dbperf server start|stop`: a managed instance kept running for a person to look at, with
//! the command to connect, and stopped again (session/instance.rs does both; this file reads
//! the command line, resolves the target and says what happened).

use std::path::PathBuf;
use std::time::Duration;

use clap::{Args, Subcommand};

use super::signals;
use super::{EXIT_FAILED, EXIT_INTERRUPTED};
use crate::session::instance::{self, StartRequest, Started, StopOutcome};
use crate::spec;

#[derive(Subcommand, Debug)]
pub enum ServerCommand {
    /// Initialise and start a private instance of a target, print how to connect, leave it running.
    Start(ServerArgs),
    /// Stop an instance started with `dbperf server start` (its recorded process only), and
    /// remove it with --remove.
    Stop(ServerStopArgs),
}

#[derive(Args, Debug)]
pub struct ServerArgs {
    /// A target, inline (postgres, mariadb+rocksdb:NAME, mysql@/basedir) or from dbperf.toml.
    pub target: String,
    /// Directory for the instance [default: dbperf-servers/<target>].
    #[arg(long, value_name = "DIR")]
    pub dir: Option<PathBuf>,
    /// Targets and configs file [default: ./dbperf.toml when it exists].
    #[arg(long, value_name = "FILE")]
    pub config_file: Option<PathBuf>,
    /// The build cache an `ENGINE@VERSION` target comes from (docs/fetch.md).
    #[arg(long, value_name = "DIR")]
    pub cache_dir: Option<PathBuf>,
    /// OS user to run the server as when dbperf runs as root [default: dbperf].
    #[arg(long, value_name = "USER")]
    pub server_user: Option<String>,
    /// Seconds the server may take to start answering.
    #[arg(long, default_value_t = 120, value_name = "SECONDS",
          value_parser = clap::value_parser!(u64).range(1..=86_400))]
    pub server_start_timeout: u64,
}

#[derive(Args, Debug)]
pub struct ServerStopArgs {
    /// The target given to `dbperf server start`.
    pub target: String,
    /// Directory given to `dbperf server start`.
    #[arg(long, value_name = "DIR")]
    pub dir: Option<PathBuf>,
    /// Targets and configs file, to resolve the target's name.
    #[arg(long, value_name = "FILE")]
    pub config_file: Option<PathBuf>,
    /// Delete the instance's directory after it stopped.
    #[arg(long)]
    pub remove: bool,
}

pub fn run(cmd: ServerCommand) -> anyhow::Result<i32> {
    match cmd {
        ServerCommand::Start(a) => start(a),
        ServerCommand::Stop(a) => stop(a),
    }
}

fn start(a: ServerArgs) -> anyhow::Result<i32> {
    let file = spec::config_file::load(a.config_file.as_deref())?;
    let mut t = file.resolve(&a.target, &[])?;
    let cache = crate::fetch::Cache::locate(a.cache_dir.as_deref())?;
    let builds = crate::fetch::ResolveOptions {
        cache: &cache,
        fetch: false,
    };
    crate::fetch::resolve_target(&mut t, &builds, &mut |l: &str| say!("{l}"))?;
    let started = instance::start(StartRequest {
        target: &t,
        given: &a.target,
        dir: &a.dir,
        server_user: a.server_user.as_deref(),
        start_timeout: Duration::from_secs(a.server_start_timeout),
        stop: signals::stop_flag("stopping what was started"),
    })?;
    let (state, dir) = match started {
        Started::Running { state, dir } => (state, dir),
        Started::Interrupted => {
            say!(
                "interrupted: the start of {} was abandoned; nothing of it is left running",
                t.name
            );
            return Ok(EXIT_INTERRUPTED);
        }
    };
    out!(
        "{} is running: pid {}, port {} on 127.0.0.1, socket {}",
        t.name,
        state.pid,
        state.port,
        state.socket
    );
    out!("connect:  {}", state.connect);
    if let Some(p) = &state.password_file {
        out!("password: {p} (readable by you only)");
    }
    out!("log:      {}", state.log);
    out!(
        "stop:     dbperf server stop {} --dir {}",
        a.target,
        dir.display()
    );
    Ok(0)
}

fn stop(a: ServerStopArgs) -> anyhow::Result<i32> {
    for l in instance::sweep_leftovers() {
        if l.stopped {
            out!("stopped a leftover server: {}", l.sentence);
        } else {
            say!("warning: {}", l.sentence);
        }
    }
    let file = spec::config_file::load(a.config_file.as_deref())?;
    let name = file
        .resolve(&a.target, &[])
        .map(|t| t.name)
        .unwrap_or_else(|_| a.target.clone());
    let stop = instance::stop(&name, &a.dir)?;
    let (target, pid) = (&stop.state.target, stop.state.pid);
    const STATE: &str = "server.json";
    match &stop.outcome {
        StopOutcome::StillRunning => {
            out!("{target} (pid {pid}) is still running after SIGKILL; {STATE} is kept");
            return Ok(EXIT_FAILED);
        }
        StopOutcome::Stopped(how) => out!("{target} (pid {pid}) {how}"),
        StopOutcome::NotRunning => out!("{target} (pid {pid}) was not running"),
        StopOutcome::Another(what) => {
            out!("{target} was not running: {what}, which was left alone")
        }
        StopOutcome::Changed(what) => {
            out!(
                "{target} was not signalled: pid {pid} started when the server did but its owner \
                 or command line changed (now `{what}`); stop it yourself if it is the server; \
                 {STATE} is kept"
            );
            return Ok(EXIT_FAILED);
        }
    }
    stop.finish(a.remove)?;
    Ok(0)
}
