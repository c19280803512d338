//! `dbperf server start|stop`: a managed instance kept running for a person to look at, with
//! the command to connect, and stopped again, only if its pid is still held by the process
//! `server start` recorded (server/identity.rs). Both sweep the server registry for leftovers
//! first (server/registry.rs). The CLI resolves the target and renders what these return; the
//! servers themselves are reached from here, as a run reaches them.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

use serde::{Deserialize, Serialize};

use crate::error::bad_input;
use crate::server::identity::{self, Identity, Verdict};
use crate::server::{self, process, registry};
use crate::spec::target::Target;

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

/// The instance's directory: the one given, else `dbperf-servers/<target>`.
pub fn instance_dir(dir: &Option<PathBuf>, name: &str) -> PathBuf {
    dir.clone()
        .unwrap_or_else(|| PathBuf::from("dbperf-servers").join(name))
}

/// What `dbperf server start` asks for.
pub struct StartRequest<'a> {
    /// The resolved target (its build found in the cache).
    pub target: &'a Target,
    /// The target as the command line gave it, for the `server stop` it suggests.
    pub given: &'a str,
    /// `--dir`.
    pub dir: &'a Option<PathBuf>,
    /// `--server-user`.
    pub server_user: Option<&'a str>,
    pub start_timeout: Duration,
    /// Set when the user asked to stop (Ctrl-C).
    pub stop: Arc<AtomicBool>,
}

/// How `server start` ended.
pub enum Started {
    /// The server runs and is handed over: its `server.json` and its directory.
    Running {
        state: Box<ServerState>,
        dir: PathBuf,
    },
    /// The user stopped the start: nothing of it is left running.
    Interrupted,
}

/// Starts the target's server in its instance directory, makes the benchmark database, writes
/// `server.json` and leaves the server running.
pub fn start(req: StartRequest) -> anyhow::Result<Started> {
    let t = req.target;
    if !t.is_server() || t.external.is_some() {
        return bad_input(format!(
            "{} is not a server dbperf manages (sqlite is embedded; external servers run already)",
            t.name
        ));
    }
    let dir = instance_dir(req.dir, &t.name);
    if std::fs::symlink_metadata(dir.join(STATE)).is_ok() {
        return bad_input(format!(
            "{} already holds an instance; stop it with `dbperf server stop {}{}` first",
            dir.display(),
            req.given,
            req.dir
                .as_ref()
                .map(|d| format!(" --dir {}", d.display()))
                .unwrap_or_default()
        ));
    }
    // A link or a file planted as `data` is not one: server management refuses it below.
    if std::fs::symlink_metadata(dir.join("data")).is_ok_and(|m| m.is_dir()) {
        // A stopped instance's data (`server stop` without `--remove` keeps it): a server is
        // never started on it again, since its superuser's password was the stopped one's,
        // and initialising over it fails.
        return bad_input(format!(
            "{} holds the data of a stopped instance; remove the directory or give another \
             --dir",
            dir.display()
        ));
    }
    let mut plan = server::Plan::for_target(
        t.server_wanted(),
        process::server_user(req.server_user)?,
        req.start_timeout,
        Some(req.stop.clone()),
    )?;
    plan.outlives_dbperf = true;
    // Made (or checked) here so a directory that cannot be used is bad input; `plan.start`
    // opens it the same way again.
    let opened = match server::instance_dir(&dir, plan.user.as_ref()) {
        Ok(d) => d,
        Err(e) if crate::error::is_bad_input(&e) => return Err(e),
        Err(e) => return bad_input(format!("cannot create {}: {e:#}", dir.display())),
    };
    let dir = opened.path().to_path_buf();
    let started = plan.start(&dir).and_then(|mut running| {
        ready(&t.name, &dir, &mut running, &req.stop).map(|s| (s, running))
    });
    match started {
        Ok((state, _running)) => Ok(Started::Running {
            state: Box::new(state),
            dir,
        }),
        Err(e) => {
            // The server (if any) was stopped when its `Running` was dropped; the data
            // directory this command made (there was none: above) goes too, so the next
            // `server start` here begins afresh.
            // Through the opened directory, never following a link the server's user may
            // have put in its place.
            let _ = opened.remove("data".as_ref());
            let _ = opened.remove(STATE.as_ref());
            if req.stop.load(Ordering::SeqCst) {
                return Ok(Started::Interrupted);
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
    stop: &AtomicBool,
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
    if stop.load(Ordering::SeqCst) {
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

/// A leftover server the sweep found: stopped, or recorded in a damaged entry (a warning).
pub struct Leftover {
    pub stopped: bool,
    pub sentence: String,
}

/// Stops the servers of dbperfs that died (server/registry.rs) and says what it found.
pub fn sweep_leftovers() -> Vec<Leftover> {
    registry::sweep()
        .into_iter()
        .map(|s| Leftover {
            stopped: matches!(s, registry::Swept::Stopped { .. }),
            sentence: s.sentence(),
        })
        .collect()
}

/// What `server stop` found of the recorded server, and did.
pub enum StopOutcome {
    /// Signalled and stopped: how it stopped.
    Stopped(String),
    /// Still running after SIGKILL: `server.json` is kept.
    StillRunning,
    NotRunning,
    /// Its pid is another process now (what it is), left alone.
    Another(String),
    /// Its pid's owner or command line changed (now this): not signalled, `server.json` kept.
    Changed(String),
}

/// A `server stop` that has signalled (or not) the recorded server; `finish` removes what is
/// left of the instance.
pub struct Stop {
    pub state: ServerState,
    pub outcome: StopOutcome,
    dir: PathBuf,
    server: Identity,
}

/// Stops the instance of target `name` in its instance directory (`dir`, or the default).
pub fn stop(name: &str, dir: &Option<PathBuf>) -> anyhow::Result<Stop> {
    let dir = instance_dir(dir, name);
    let path = dir.join(STATE);
    let state = read_state(&dir)?;
    if state.target != name {
        // Another target's instance (`server stop mariadb --dir <postgres's>`): stopping it
        // would stop what the user did not name.
        return bad_input(format!(
            "{} is the instance of target {}, not of {}; stop it by its name: dbperf server \
             stop {} --dir {}",
            path.display(),
            crate::untrusted::shown(&state.target),
            crate::untrusted::shown(name),
            crate::untrusted::shown(&state.target),
            dir.display()
        ));
    }
    let server = recorded_server(&state, &path)?;
    // The engine's graceful stop; SIGTERM (every server's polite request) for a name the
    // file gets wrong.
    let graceful = crate::engines::Engine::parse(&state.engine)
        .and_then(crate::engines::Engine::server)
        .map_or(libc::SIGTERM, |f| f.stop_signal);
    let outcome = match identity::verify(&server) {
        Verdict::Same => {
            check_signallable(&state, &server, &path)?;
            let how = registry::stop_recorded(&server, graceful, Duration::from_secs(120));
            if how == registry::Stop::StillRunning {
                StopOutcome::StillRunning
            } else {
                registry::forget_server(&server);
                StopOutcome::Stopped(how.describe().to_string())
            }
        }
        Verdict::Gone => {
            registry::forget_server(&server);
            StopOutcome::NotRunning
        }
        Verdict::Another(what) => {
            registry::forget_server(&server);
            StopOutcome::Another(what)
        }
        Verdict::Changed(what) => StopOutcome::Changed(what),
    };
    Ok(Stop {
        state,
        outcome,
        dir,
        server,
    })
}

impl Stop {
    /// Whether the server is gone, so its `server.json` (and with `--remove` its directory) go.
    pub fn ended(&self) -> bool {
        match self.outcome {
            StopOutcome::Stopped(_) | StopOutcome::NotRunning | StopOutcome::Another(_) => true,
            StopOutcome::StillRunning | StopOutcome::Changed(_) => false,
        }
    }

    /// Removes `server.json` of an ended server, and with `remove` the instance's directory.
    pub fn finish(self, remove: bool) -> anyhow::Result<()> {
        if !self.ended() {
            return Ok(());
        }
        let _ = std::fs::remove_file(self.dir.join(STATE));
        if remove {
            remove_instance(&self.dir, &self.server)?;
        }
        Ok(())
    }
}

/// The most of a `server.json` dbperf reads: a few hundred bytes when dbperf wrote it.
const STATE_MAX: u64 = 64 * 1024;

/// `server.json`, read as untrusted input and as a record that drives an action (the process it
/// names is signalled): its own user's (the only one who can have written it, so a record
/// naming another process cannot be slipped in), never through a link or a second name
/// (`safe_fs::acting_record`), at most [`STATE_MAX`] bytes, JSON of the right shape. Any failure
/// is one sentence of bad input.
fn read_state(dir: &Path) -> anyhow::Result<ServerState> {
    let path = dir.join(STATE);
    let no_instance = || {
        crate::error::BadInput(format!(
            "no instance in {} (no {STATE}); was it started with dbperf server start?",
            dir.display()
        ))
    };
    if std::fs::symlink_metadata(&path).is_err() {
        return Err(no_instance().into());
    }
    // Every directory on the way checked, and no link in the place of the instance directory.
    crate::safe_fs::open_dir(dir, crate::safe_fs::Also::Anyone)?;
    let bytes = crate::safe_fs::acting_record::read(&path, STATE_MAX, "an instance's server.json")?
        .ok_or_else(no_instance)?;
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

/// Removes a stopped instance's directory: only a real directory (never what a link leads
/// to), reached through directories only root or this user can change, owned by this user or
/// by the server user (an older dbperf's layout). std's remove_dir_all does not follow the
/// links it finds inside.
fn remove_instance(dir: &Path, server: &Identity) -> anyhow::Result<()> {
    let d = crate::safe_fs::open_dir(dir, crate::safe_fs::Also::Uid(server.uid))?;
    std::fs::remove_dir_all(d.path())
        .map_err(|e| anyhow::anyhow!("cannot remove {}: {e}", dir.display()))
}
