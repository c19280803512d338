//! `dbperf server start|stop`: a managed instance kept running for a person to look at, with
//! the command to connect, and stopped again, only if its pid is still held by the process
//! `server start` recorded (server/identity.rs). Both sweep the server registry for leftovers
//! first (server/registry.rs).

use std::path::{Path, PathBuf};
use std::time::Duration;

use clap::{Args, Subcommand};
use serde::{Deserialize, Serialize};

use super::signals;
use super::{EXIT_FAILED, EXIT_INTERRUPTED};
use crate::error::bad_input;
use crate::server::identity::{self, Identity, Verdict};
use crate::server::{self, process, registry};
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

/// What `server start` leaves behind for `server stop` and for people.
#[derive(Serialize, Deserialize)]
pub struct ServerState {
    pub schema: u32,
    pub target: String,
    pub engine: String,
    pub pid: u32,
    pub port: u16,
    pub socket: String,
    pub datadir: String,
    pub log: String,
    /// How to connect by hand: the client reads the password from a file (never from the
    /// command line, which other users can read in /proc).
    pub connect: String,
    /// The instance's password, alone in a 0600 file of whoever ran `server start` (absent in
    /// files of older dbperfs, whose servers had none).
    #[serde(default)]
    pub password_file: Option<String>,
    /// The server's process, checked before it is signalled (absent in files of older dbperfs).
    #[serde(default)]
    pub server: Option<Identity>,
}

const STATE: &str = "server.json";

fn instance_dir(dir: &Option<PathBuf>, name: &str) -> PathBuf {
    dir.clone()
        .unwrap_or_else(|| PathBuf::from("dbperf-servers").join(name))
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
    if !t.is_server() || t.external.is_some() {
        return bad_input(format!(
            "{} is not a server dbperf manages (sqlite is embedded; external servers run already)",
            t.name
        ));
    }
    let dir = instance_dir(&a.dir, &t.name);
    if std::fs::symlink_metadata(dir.join(STATE)).is_ok() {
        return bad_input(format!(
            "{} already holds an instance; stop it with `dbperf server stop {}{}` first",
            dir.display(),
            a.target,
            a.dir
                .as_ref()
                .map(|d| format!(" --dir {}", d.display()))
                .unwrap_or_default()
        ));
    }
    let stop = signals::stop_flag("stopping what was started");
    let mut plan = server::Plan::for_target(
        t.server_wanted(),
        process::server_user(a.server_user.as_deref())?,
        Duration::from_secs(a.server_start_timeout),
        Some(stop.clone()),
    )?;
    plan.outlives_dbperf = true;
    // Made (or checked) here so a directory that cannot be used is bad input; `plan.start`
    // opens it the same way again.
    let dir = match server::instance_dir(&dir, plan.user.as_ref()) {
        Ok(d) => d.path().to_path_buf(),
        Err(e) if crate::error::is_bad_input(&e) => return Err(e),
        Err(e) => return bad_input(format!("cannot create {}: {e:#}", dir.display())),
    };
    let fresh = std::fs::symlink_metadata(dir.join("data")).is_err();
    let started = plan
        .start(&dir)
        .and_then(|mut running| ready(&t.name, &dir, &mut running, &stop).map(|s| (s, running)));
    match started {
        Ok((state, _running)) => {
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
        Err(e) => {
            // The server (if any) was stopped when its `Running` was dropped; a data directory
            // this command made goes too, so the next `server start` here begins afresh.
            if fresh {
                let _ = std::fs::remove_dir_all(dir.join("data"));
            }
            let _ = std::fs::remove_file(dir.join(STATE));
            if signals::stopped(&stop) {
                say!(
                    "interrupted: the start of {} was abandoned; nothing of it is left running",
                    t.name
                );
                return Ok(EXIT_INTERRUPTED);
            }
            Err(e)
        }
    }
}

/// Makes the benchmark database, writes `server.json` and hands the server over. An error (or a
/// stop request) before the hand-over leaves the server to be stopped when `running` is dropped.
fn ready(
    name: &str,
    dir: &Path,
    running: &mut server::Running,
    stop: &std::sync::atomic::AtomicBool,
) -> anyhow::Result<ServerState> {
    let kind = running.server;
    let ep = running.endpoint(false, server::DATABASE);
    crate::dbms::create_database(
        kind.engine,
        &running.endpoint(false, kind.facts.admin_database),
        server::DATABASE,
        crate::dbms::Timeouts::default(),
    )?;
    let files = &running.client_files;
    let reach = server::secret::Reach {
        user: &ep.user,
        port: running.port,
        socket: &running.socket,
    };
    let connect = kind.flavor.connect_command(
        kind.engine,
        &shell_word(&files.client),
        &reach,
        server::DATABASE,
    );
    let state = ServerState {
        schema: crate::results::SCHEMA,
        target: name.to_string(),
        engine: kind.name().into(),
        pid: running.pid,
        port: running.port,
        socket: running.socket.display().to_string(),
        datadir: running.datadir.display().to_string(),
        log: running.log.display().to_string(),
        connect,
        password_file: Some(files.password.display().to_string()),
        server: running.identity.clone(),
    };
    if signals::stopped(stop) {
        anyhow::bail!("interrupted");
    }
    crate::results::write_json_atomic(&dir.join(STATE), &state)?;
    // A stop request from here on comes after the server was promised to the user: it stays.
    running.hand_over()?;
    Ok(state)
}

/// A path as one word for a shell command a person copies: quoted when it has anything but
/// plain characters.
fn shell_word(p: &Path) -> String {
    let s = p.display().to_string();
    let plain = |c: char| c.is_ascii_alphanumeric() || "/._-+@".contains(c);
    if s.chars().all(plain) {
        s
    } else {
        format!("'{}'", s.replace('\'', "'\\''"))
    }
}

/// The most of a `server.json` dbperf reads: a few hundred bytes when dbperf wrote it.
const STATE_MAX: u64 = 64 * 1024;

/// `server.json`, read as untrusted input: its own user's (the only one who can have written
/// it, so a record naming another process cannot be slipped in), never through a link or a
/// second name, at most [`STATE_MAX`] bytes, JSON of the right shape. Any failure is one
/// sentence of bad input.
fn read_state(dir: &Path) -> anyhow::Result<ServerState> {
    use std::os::unix::fs::MetadataExt;
    let path = dir.join(STATE);
    if std::fs::symlink_metadata(&path).is_err() {
        return bad_input(format!(
            "no instance in {} (no {STATE}); was it started with dbperf server start?",
            dir.display()
        ));
    }
    // Every directory on the way checked, and no link in the place of the instance directory.
    crate::safe_fs::open_dir(dir, crate::safe_fs::Also::Anyone)?;
    let unsafe_file = |why: &dyn std::fmt::Display| {
        crate::error::BadInput(format!("{} cannot be trusted: {why}", path.display()))
    };
    let f = crate::safe_fs::open_regular(&path).map_err(|e| unsafe_file(&e))?;
    let m = f.metadata().map_err(|e| unsafe_file(&e))?;
    // SAFETY: geteuid has no preconditions.
    if m.uid() != unsafe { libc::geteuid() } {
        return Err(unsafe_file(&format!(
            "it belongs to {}, not to the user that runs dbperf",
            crate::safe_fs::user_name(m.uid())
        ))
        .into());
    }
    if crate::safe_fs::others_may_write(&m) {
        return Err(unsafe_file(&"other users can write to it").into());
    }
    let bytes = crate::safe_fs::read_file_capped(f, STATE_MAX).map_err(|e| unsafe_file(&e))?;
    serde_json::from_slice(&bytes).map_err(|e| {
        crate::error::BadInput(format!(
            "{} is damaged: {}",
            path.display(),
            crate::untrusted::json_error(&e)
        ))
        .into()
    })
}

/// The server `state` records: a full identity, or nothing is signalled (files of dbperfs
/// before identities were recorded are refused, with how to stop the server by hand).
fn recorded_server(state: &ServerState, path: &Path) -> anyhow::Result<Identity> {
    match &state.server {
        Some(id) => Ok(id.clone()),
        None => bad_input(format!(
            "{} was written by an older dbperf and does not record which process the server \
             is, so nothing was signalled: stop it yourself (`pgrep -af {}` shows its pid; \
             kill that pid) and then delete {}",
            path.display(),
            state.datadir,
            path.display()
        )),
    }
}

/// Before the recorded process, found alive, is signalled: it must be a server as dbperf
/// starts them, never a process of root (dbperf never runs a server as root), one whose
/// command line names the recorded data directory.
fn check_signallable(state: &ServerState, id: &Identity, path: &Path) -> anyhow::Result<()> {
    if id.uid == 0 {
        return bad_input(format!(
            "{} names a process of root (pid {}), and dbperf never runs a server as root, so \
             nothing was signalled",
            path.display(),
            id.pid
        ));
    }
    if id.pid != state.pid || !id.mentions(Path::new(&state.datadir)) {
        return bad_input(format!(
            "{} is damaged: the process it records (pid {}) is not the server of {}, so \
             nothing was signalled",
            path.display(),
            id.pid,
            state.datadir
        ));
    }
    Ok(())
}

fn stop(a: ServerStopArgs) -> anyhow::Result<i32> {
    for s in registry::sweep() {
        match s {
            registry::Swept::Stopped { .. } => out!("stopped a leftover server: {}", s.sentence()),
            registry::Swept::Damaged { .. } => say!("warning: {}", s.sentence()),
        }
    }
    let file = spec::config_file::load(a.config_file.as_deref())?;
    let name = file
        .resolve(&a.target, &[])
        .map(|t| t.name)
        .unwrap_or_else(|_| a.target.clone());
    let dir = instance_dir(&a.dir, &name);
    let path = dir.join(STATE);
    let state = read_state(&dir)?;
    let server = recorded_server(&state, &path)?;
    // The engine's graceful stop; SIGTERM (every server's polite request) for a name the
    // file gets wrong.
    let graceful = crate::engines::Engine::parse(&state.engine)
        .and_then(crate::engines::Engine::server)
        .map_or(libc::SIGTERM, |f| f.stop_signal);
    match identity::verify(&server) {
        Verdict::Same => {
            check_signallable(&state, &server, &path)?;
            let how = registry::stop_recorded(&server, graceful, Duration::from_secs(120));
            if how == registry::Stop::StillRunning {
                out!(
                    "{} (pid {}) is still running after SIGKILL; {STATE} is kept",
                    state.target,
                    state.pid
                );
                return Ok(EXIT_FAILED);
            }
            out!("{} (pid {}) {}", state.target, state.pid, how.describe());
            registry::forget_server(&server);
        }
        Verdict::Gone => {
            out!("{} (pid {}) was not running", state.target, state.pid);
            registry::forget_server(&server);
        }
        Verdict::Another(what) => {
            out!(
                "{} was not running: {what}, which was left alone",
                state.target
            );
            registry::forget_server(&server);
        }
        Verdict::Changed(what) => {
            out!(
                "{} was not signalled: pid {} started when the server did but its owner or \
                 command line changed (now `{what}`); stop it yourself if it is the server; \
                 {STATE} is kept",
                state.target,
                state.pid
            );
            return Ok(EXIT_FAILED);
        }
    }
    let _ = std::fs::remove_file(&path);
    if a.remove {
        remove(&dir, &server)?;
    }
    Ok(0)
}

/// Removes a stopped instance's directory: only a real directory (never what a link leads
/// to), reached through directories only root or this user can change, owned by this user or
/// by the server user (an older dbperf's layout). std's remove_dir_all does not follow the
/// links it finds inside.
fn remove(dir: &Path, server: &Identity) -> anyhow::Result<()> {
    let d = crate::safe_fs::open_dir(dir, crate::safe_fs::Also::Uid(server.uid))?;
    std::fs::remove_dir_all(d.path())
        .map_err(|e| anyhow::anyhow!("cannot remove {}: {e}", dir.display()))
}
