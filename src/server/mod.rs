//! Private server instances: find the binaries, initialise a data directory, write the named
//! config, start on a free loopback port plus a unix socket in a private 0700 directory, wait
//! until the server answers, and stop it by pid. Never the system service, never as root.

mod access;
pub mod cgroup;
mod cgroup_held;
pub mod cgroup_records;
mod cgroup_sweep;
pub mod configs;
pub mod flavor;
pub mod identity;
pub mod layout;
mod mysql_family;
mod postgres;
pub mod probe;
pub mod process;
mod published;
mod published_mysql;
mod published_postgres;
pub mod registry;
mod render;
mod scale;
pub mod secret;
pub mod version;

use std::fs;
use std::path::{Path, PathBuf};
use std::process::Child;
use std::time::{Duration, Instant};

use crate::dbms::{Endpoint, Transport};
use crate::engines::{Engine, Family, ServerFacts};
use crate::safe_fs::{self, Also, Dir};
use flavor::{Flavor, Places};
use identity::Identity;
use layout::Layout;
use process::User;
use secret::{ClientFiles, Password};

/// The flavor of a server engine's family (flavor.rs); None for an embedded engine. The one
/// place a family is turned into its server management: a new family fails to compile here.
pub fn flavor_of(engine: Engine) -> Option<&'static dyn Flavor> {
    match engine.family() {
        Family::Embedded => None,
        Family::Postgres => Some(&postgres::Postgres),
        Family::MySql => Some(&mysql_family::MySqlFamily),
    }
}

/// A server engine dbperf manages: the engine, its registry entry's server facts and its
/// family's flavor, found together once.
#[derive(Debug, Clone, Copy)]
pub struct ServerEngine {
    pub engine: Engine,
    pub facts: &'static ServerFacts,
    pub flavor: &'static dyn Flavor,
}

impl ServerEngine {
    /// The server engine `engine` is; None for an embedded one.
    pub fn of(engine: Engine) -> Option<ServerEngine> {
        Some(ServerEngine {
            engine,
            facts: engine.server()?,
            flavor: flavor_of(engine)?,
        })
    }

    pub fn name(self) -> &'static str {
        self.engine.name()
    }
}

/// Everything needed to start one target's server, checked before any step runs.
#[derive(Debug, Clone)]
pub struct Plan {
    /// The target's name, for the registry.
    pub target: String,
    pub server: ServerEngine,
    pub rocksdb: bool,
    pub layout: Layout,
    pub config_name: String,
    /// The config file text (postgresql.conf lines or my.cnf `[mysqld]` options).
    pub config_text: String,
    /// A built-in published config's source and how it was fitted (run.json).
    pub config_source: Option<crate::results::ConfigSource>,
    /// PostgreSQL: initdb options the config asked for; None = dbperf's default (checksums off
    /// on every version, see `init_options`).
    pub initdb: Option<Vec<String>>,
    pub user: Option<User>,
    pub ready_timeout: Duration,
    /// Set when the user asked to stop (Ctrl-C): start-up is abandoned and the server stopped.
    pub interrupt: Option<std::sync::Arc<std::sync::atomic::AtomicBool>>,
    /// Whether the server dies with dbperf (every run) or may outlive it (`dbperf server start`,
    /// which hands it over once it answers: `Running::hand_over`).
    pub outlives_dbperf: bool,
    /// A cap on the memory the server may hold, page cache and shared memory included
    /// (`--server-memory`, cgroup.rs); None: uncapped.
    pub memory: Option<MemoryCap>,
}

/// A server's memory cap, the controller that enforces it, and where its cgroups are recorded.
#[derive(Debug, Clone)]
pub struct MemoryCap {
    pub bytes: u64,
    pub controller: cgroup::Controller,
    pub records: cgroup_records::Records,
}

/// A server dbperf started. Stopped on drop, whatever happened in between.
pub struct Running {
    pub server: ServerEngine,
    child: Child,
    pub pid: u32,
    pub datadir: PathBuf,
    pub rundir: PathBuf,
    pub log: PathBuf,
    pub port: u16,
    pub socket: PathBuf,
    pub stopped: Option<String>,
    /// The server's process as recorded in the registry and in `server.json`.
    pub identity: Option<Identity>,
    /// Its registry file and what it says; removed when the server is stopped.
    record: Option<(PathBuf, registry::Entry)>,
    /// A private directory under /tmp made for the socket (the work directory was too deep),
    /// removed with the server.
    temp_rundir: Option<PathBuf>,
    /// The instance's own password: every login needs it (secret.rs).
    password: Password,
    /// Where a person finds it to connect by hand (0600 files in the instance's directory).
    pub client_files: ClientFiles,
    /// Its cgroup under a memory cap, removed once it has stopped.
    cap: Option<cgroup::Cap>,
}

/// Database the benchmarks use, as in the original (`ib`). The superuser of an instance is its
/// registry entry's `admin_user`, with the instance's password (secret.rs), reachable on
/// loopback and the private socket only.
pub const DATABASE: &str = "ib";

impl Running {
    /// Connection to the benchmark database over TCP (what the original measures) or the socket.
    pub fn endpoint(&self, socket: bool, database: &str) -> Endpoint {
        let transport = if socket {
            Transport::Socket {
                path: self.socket.clone(),
            }
        } else {
            Transport::Tcp {
                host: "127.0.0.1".into(),
                port: self.port,
            }
        };
        Endpoint {
            transport,
            user: self.server.facts.admin_user.into(),
            password: Some(self.password.as_str().to_string()),
            database: database.into(),
        }
    }

    /// `text` with the instance's password blotted out (a server may echo a statement).
    pub fn redact(&self, text: &str) -> String {
        self.password.redact(text)
    }

    /// When the kernel killed a process of the server for going over its memory cap: a
    /// sentence that says so (read before `stop` removes the cgroup); None otherwise.
    pub fn oom_killed(&self) -> Option<String> {
        let cap = self.cap.as_ref()?;
        let n = cap.oom_kills();
        (n > 0).then(|| {
            format!(
                "the kernel killed {n} of the server's processes for going over its {} MiB \
                 memory cap (--server-memory): give a larger cap or a config that needs less",
                cap.bytes >> 20
            )
        })
    }

    /// Under a memory cap: the cap as the kernel holds it now (read at the end of each step).
    pub fn memory_cap_held(&self) -> Option<crate::results::StepMemoryCap> {
        self.cap.as_ref().map(|c| c.held(self.pid))
    }

    /// Whether the server still runs. The process is not reaped here (`try_wait` would): its
    /// pid, and the process group stop signals, stay its own until `stop` waits for it.
    pub fn alive(&mut self) -> bool {
        !process::has_ended(&self.child)
    }

    /// Graceful stop (PostgreSQL fast shutdown, mysqld SIGTERM), forced after 120 s.
    pub fn stop(&mut self) -> String {
        if let Some(s) = &self.stopped {
            return s.clone();
        }
        let sig = self.server.facts.stop_signal;
        let how = process::stop(&mut self.child, sig, Duration::from_secs(120));
        self.stopped = Some(how.clone());
        if let Some(d) = self.temp_rundir.take() {
            let _ = fs::remove_dir_all(d);
        }
        if let Some((path, _)) = self.record.take() {
            registry::forget(&path);
        }
        if let Some(c) = self.cap.take() {
            c.remove();
        }
        how
    }

    /// Leaves the server running after dbperf exits (`dbperf server start`, started with
    /// `outlives_dbperf`): its registry entry says so from now on, so no sweep takes it for a
    /// leftover. Until then a `server start` killed half-way leaves a leftover the next sweep
    /// stops. On error the server is still dbperf's and stopped when dropped.
    pub fn hand_over(&mut self) -> anyhow::Result<()> {
        if let Some((path, entry)) = &mut self.record {
            entry.may_outlive = true;
            *path = registry::record(entry)?;
        }
        process::unregister(self.pid);
        self.stopped = Some("handed over".into());
        Ok(())
    }

    /// The end of the server's log, for messages that go into results: without the password.
    pub fn log_tail(&self, n: usize) -> String {
        self.redact(&process::tail_file(&self.log, n))
    }

    /// Where the server's log ends now: the offset `log_since` reads from.
    pub fn log_offset(&self) -> u64 {
        safe_fs::log_len(&self.log)
    }

    /// What the server wrote to its log from `offset` (`log_offset`) on, without the password
    /// (at most [`process::LOG_READ_MAX`] bytes); None when the log cannot be read.
    pub fn log_since(&self, offset: u64) -> Option<process::LogPart> {
        let (text, bytes) = safe_fs::read_log_from(&self.log, offset, process::LOG_READ_MAX)?;
        Some(process::LogPart {
            text: self.redact(&text),
            bytes,
        })
    }
}

impl Drop for Running {
    fn drop(&mut self) {
        self.stop();
    }
}

/// The instance directory `dir`, made or reused (safe_fs's rules: no link, nobody else's, not
/// writable by others). It stays the invoking user's, only searchable by others (0711) when
/// servers run as another user: the server user owns `data/` and `run/` below it and nothing
/// where dbperf itself creates, removes or changes things, so it cannot plant a link there. An
/// instance directory an older dbperf gave the server user is taken back.
pub fn instance_dir(dir: &Path, user: Option<&User>) -> anyhow::Result<Dir> {
    let d = safe_fs::make_dir_all(dir, server_owner(user))?;
    let m = d.metadata()?;
    if user.is_some_and(|u| u.uid == std::os::unix::fs::MetadataExt::uid(&m)) {
        // SAFETY: geteuid and getegid have no preconditions.
        let (uid, gid) = unsafe { (libc::geteuid(), libc::getegid()) };
        d.set_owner(uid, gid)
            .map_err(|e| anyhow::anyhow!("cannot take back {}: {e}", dir.display()))?;
    }
    d.set_mode(if user.is_some() { 0o711 } else { 0o700 })
        .map_err(|e| anyhow::anyhow!("cannot set the mode of {}: {e}", dir.display()))?;
    Ok(d)
}

/// Who besides root and the invoking user may own a server's directories.
fn server_owner(user: Option<&User>) -> Also {
    user.map_or(Also::Nobody, |u| Also::Uid(u.uid))
}

/// The server's own directory `name` (data, run) in the instance directory: made or reused,
/// never a link, then the server user's and private.
fn server_dir(instance: &Dir, name: &str, user: Option<&User>) -> anyhow::Result<PathBuf> {
    let d = instance.subdir(name, server_owner(user))?;
    process::give_dir(&d, user)?;
    Ok(d.path().to_path_buf())
}

/// Checks a kept instance directory (a `--work-dir` of an earlier run) before anything runs:
/// nothing happens when there is none; a link in the place of it or of `run` (which the next
/// server reuses), or a directory another user owns or can write to, is refused as bad input.
/// Its `data` is not checked: each cell replaces it ([`clear_previous`] unlinks a link there,
/// never following it).
pub fn check_kept(dir: &Path, user: Option<&User>) -> anyhow::Result<()> {
    if fs::symlink_metadata(dir).is_err() {
        return Ok(());
    }
    let d = safe_fs::open_dir(dir, server_owner(user))?;
    d.existing_subdir("run", server_owner(user))?;
    Ok(())
}

/// Unix socket paths are limited to 107 bytes; a deep work directory gets its socket directory
/// under the system temp directory instead, made new with a name nobody can guess (the bool).
fn run_dir(instance: &Dir, user: Option<&User>) -> anyhow::Result<(PathBuf, bool)> {
    if instance.path().join("run").as_os_str().len() + 24 < 100 {
        return Ok((server_dir(instance, "run", user)?, false));
    }
    let d = process::private_temp_dir("dbperf-run-")?;
    let given = safe_fs::open_dir(&d, Also::Nobody).and_then(|h| process::give_dir(&h, user));
    if let Err(e) = given {
        let _ = fs::remove_dir_all(&d);
        return Err(e);
    }
    Ok((d, true))
}

/// The signal the kernel sends a server when dbperf dies: the engine's stop that does not wait
/// (PostgreSQL's immediate shutdown: SIGQUIT, the postmaster ends every backend, even one in a
/// long statement, and removes its shared memory; the MySQL family is one process, and its
/// data is of no use any more: SIGKILL).
fn death_signal(server: ServerEngine) -> i32 {
    server.facts.kill_signal
}

/// What a target asks of a managed server (`spec::target::Target::server_wanted`). The server
/// room reads no target itself, so spec, which checks targets and their servers, uses it
/// without a circle.
#[derive(Debug)]
pub struct Wanted<'a> {
    pub target_name: &'a str,
    pub engine: Engine,
    pub rocksdb: bool,
    /// A PostgreSQL bin directory or a MySQL/MariaDB basedir; None: the installed binaries.
    pub binaries: Option<&'a Path>,
    pub config_name: &'a str,
    /// From dbperf.toml; None: the built-in config of that name.
    pub config_text: Option<&'a str>,
    /// A built-in published config `config_text` extends (dbperf.toml's `extends`), written
    /// for the server's version before it.
    pub config_base: Option<&'a str>,
    /// The build's exact version when it is known (a fetched build's build.json); None: the
    /// server binary is asked, if a published config needs it.
    pub version: Option<&'a str>,
    /// PostgreSQL: the config's initdb options; None: dbperf's.
    pub initdb: Option<&'a [String]>,
    /// `--server-memory`: the most memory the server may hold, in bytes.
    pub memory: Option<u64>,
}

/// The server's version: the build's recorded one, else what its binary says (run as the
/// server's user, like every probe).
fn server_version(
    server: ServerEngine,
    known: Option<&str>,
    layout: &Layout,
    user: Option<&User>,
) -> anyhow::Result<version::Version> {
    // A build named by a prefix (`--from` with `8.0`) records only that much; the binary
    // knows the rest, and a published config's settings can turn on the patch (8.0.30).
    // PostgreSQL's releases have two numbers since 10, the MySQL family's three.
    let parts = server.flavor.version_parts();
    let precise = |v: &&str| v.split('.').filter(|p| !p.is_empty()).count() >= parts;
    let known = known.filter(precise);
    if let Some(v) = known.and_then(version::Version::find) {
        return Ok(v);
    }
    let a = probe::ask(&layout.server, &["--version"], user, probe::DEADLINE)?;
    match (a.success, version::Version::find(&a.text)) {
        (true, Some(v)) => Ok(v),
        _ => crate::error::bad_input(format!(
            "cannot tell the version of {} (its --version says {}), which a built-in published config depends on",
            layout.server.display(),
            crate::untrusted::shown(a.text.trim())
        )),
    }
}

impl Plan {
    /// The plan for a managed server target: its binaries and its config text (from dbperf.toml
    /// or built in), checked before anything starts.
    pub fn for_target(
        t: Wanted,
        user: Option<User>,
        ready_timeout: Duration,
        interrupt: Option<std::sync::Arc<std::sync::atomic::AtomicBool>>,
    ) -> anyhow::Result<Plan> {
        let Some(server) = ServerEngine::of(t.engine) else {
            return crate::error::bad_input(format!(
                "{} is embedded: dbperf starts no server for it",
                t.engine
            ));
        };
        let layout = layout::find(server, t.binaries, t.rocksdb)?;
        let config = t.config_name;
        let asked = configs::Asked {
            server,
            rocksdb: t.rocksdb,
            name: config,
            text: t.config_text,
            base: t.config_base,
            cap: t.memory,
        };
        if let Some(bytes) = t.memory {
            let least = server.facts.least_memory_cap;
            if bytes < least {
                return crate::error::bad_input(format!(
                    "--server-memory {} MiB is too little for {}: its server needs at least {} \
                     MiB under a cap (below that the kernel killed it while it started or \
                     loaded; docs/io-bound.md)",
                    bytes >> 20,
                    t.engine,
                    least >> 20
                ));
            }
        }
        let memory = match t.memory {
            Some(bytes) => {
                let records = registry::cgroup_records()?;
                let controller = cgroup::check(Path::new("/sys"), &records)?;
                Some(MemoryCap {
                    bytes,
                    controller,
                    records,
                })
            }
            None => None,
        };
        // Under a cap a config is sized for the cap, not for the host.
        let chosen = configs::choose(
            &asked,
            || server_version(server, t.version, &layout, user.as_ref()),
            || match t.memory {
                Some(bytes) => bytes >> 10,
                None => crate::host::memory_kb(&Default::default()),
            },
        )?;
        let config_text = chosen.text;
        if let Some(name) = configs::owned_setting(server, &config_text) {
            return crate::error::bad_input(format!(
                "{} config '{}' sets {name}: a managed server's addresses, port, socket, logins \
                 and init file are dbperf's own (loopback only, a password on every login), so \
                 leave it out",
                t.engine, config
            ));
        }
        Ok(Plan {
            target: t.target_name.to_string(),
            server,
            rocksdb: t.rocksdb,
            layout,
            config_name: config.to_string(),
            config_text,
            config_source: chosen.source,
            initdb: t.initdb.map(<[String]>::to_vec),
            user,
            ready_timeout,
            interrupt,
            outlives_dbperf: false,
            memory,
        })
    }

    fn lifetime(&self) -> process::Lifetime {
        if self.outlives_dbperf {
            process::Lifetime::MayOutlive
        } else {
            process::Lifetime::DiesWithDbperf {
                signal: death_signal(self.server),
            }
        }
    }

    fn short_run<'a>(
        &'a self,
        what: &'a str,
        timeout: u64,
        log_dir: &'a Path,
    ) -> process::ShortRun<'a> {
        process::ShortRun {
            what,
            timeout: Duration::from_secs(timeout),
            log_dir,
            interrupt: self.interrupt.as_deref(),
        }
    }

    /// Initialises a fresh data directory under `dir` and starts the server, which lets in
    /// only logins with the instance's own password (secret.rs, access.rs).
    pub fn start(&self, dir: &Path) -> anyhow::Result<Running> {
        // Every path handed to a server is absolute (PostgreSQL runs in its data directory and
        // the MySQL family's install scripts in their basedir) and free of links.
        let u = self.user.as_ref();
        let instance = instance_dir(dir, u)?;
        let dir = instance.path();
        // Only a data directory this start made is removed when initialising it fails or is
        // interrupted, so nothing half-made is left that looks like a server's data.
        let fresh = !instance.has("data");
        let (rundir, temp_rundir) = run_dir(&instance, u)?;
        let temp_rundir = temp_rundir.then(|| rundir.clone());
        let datadir = dir.join("data");
        let forget_rundir = |e: anyhow::Error| {
            if let Some(d) = &temp_rundir {
                let _ = fs::remove_dir_all(d);
            }
            if fresh {
                let _ = fs::remove_dir_all(&datadir);
            }
            e
        };
        // Made here, not by initdb: the instance directory is not the server user's to write.
        server_dir(&instance, "data", u).map_err(forget_rundir)?;
        check_reachable(&datadir, u).map_err(forget_rundir)?;
        let port = process::free_port().map_err(forget_rundir)?;
        let password = Password::generate().map_err(forget_rundir)?;
        self.initialise_fresh(&instance, fresh, &rundir, &password)
            .map_err(forget_rundir)?;
        let flavor = self.server.flavor;
        let socket = flavor.socket(&rundir, port);
        let reach = secret::Reach {
            user: self.server.facts.admin_user,
            port,
            socket: &socket,
        };
        let client = flavor.client_file(&password, &reach);
        let client_files =
            secret::write_client_files(dir, &password, &client).map_err(forget_rundir)?;
        let init_file = flavor
            .first_start_file(self, &rundir, &password)
            .map_err(forget_rundir)?;
        // The log outlives a socket directory made under /tmp (removed with the server).
        let log_dir = if temp_rundir.is_some() { dir } else { &rundir };
        // An old log of this directory's earlier server goes (unlinking never follows a link);
        // the new one is made afresh, so nothing planted there is written through.
        let _ = fs::remove_file(log_dir.join("server.log"));
        let (log, out) = process::private_file(log_dir, "server.log").map_err(forget_rundir)?;
        // Made before the server starts, which joins it before its first instruction.
        let cap = match &self.memory {
            Some(m) => Some(
                cgroup::Cap::create(
                    &m.controller,
                    &cgroup_records::base(&self.target, port),
                    m.bytes,
                    &m.records,
                )
                .map_err(forget_rundir)?,
            ),
            None => None,
        };
        let join = cap.as_ref().map(cgroup::Cap::procs_file).transpose()?;
        let at = Places {
            datadir: &datadir,
            rundir: &rundir,
            log: &log,
            port,
        };
        let mut cmd = flavor.command(self, &at, join);
        if let Some(f) = &init_file {
            // Last, so it is the one mysqld reads (the config's own is refused in for_target).
            cmd.arg(format!("--init-file={}", f.path().display()));
        }
        if let Some(u) = u {
            let _ = std::os::unix::fs::fchown(&out, Some(u.uid), Some(u.gid));
        }
        cmd.stdout(out.try_clone()?).stderr(out);
        let child = process::spawn(cmd, self.lifetime()).map_err(|e| {
            if let Some(c) = &cap {
                c.remove();
            }
            forget_rundir(anyhow::anyhow!(
                "cannot start {}: {e}",
                self.layout.server.display()
            ))
        })?;
        let pid = child.id();
        process::register(pid);
        let mut running = Running {
            server: self.server,
            child,
            pid,
            datadir,
            rundir,
            log,
            port,
            socket,
            stopped: None,
            identity: None,
            record: None,
            temp_rundir,
            password,
            client_files,
            cap,
        };
        // Recorded before anything can go wrong, so a dbperf killed from here on leaves a
        // record the next sweep acts on (dropping `running` on error stops the server).
        self.record(&mut running)?;
        self.wait_ready(&mut running)?;
        access::check(&mut running, Instant::now() + self.ready_timeout)?;
        drop(init_file);
        Ok(running)
    }

    /// Makes the data directory with the instance's password. Only a data directory this start
    /// made is removed when that fails or is interrupted, so nothing half-made is left that
    /// looks like a server's data.
    /// Initialises `data` in `instance`. An install step that now and then fails under load
    /// (`Flavor::retries_initialise`) gets one more try on a fresh data directory. Bounded:
    /// once, and both failures are reported when the second fails too.
    fn initialise_fresh(
        &self,
        instance: &Dir,
        fresh: bool,
        rundir: &Path,
        pw: &Password,
    ) -> anyhow::Result<()> {
        let datadir = instance.path().join("data");
        let init = self.initialise(&datadir, rundir, pw);
        let retries = self.server.flavor.retries_initialise(self.server.engine);
        match init {
            Err(e) if fresh && retries && !process::is_interrupted(&e) => {
                let _ = fs::remove_dir_all(&datadir);
                server_dir(instance, "data", self.user.as_ref())
                    .and_then(|_| self.initialise(&datadir, rundir, pw))
                    .map_err(|again| {
                        anyhow::anyhow!("{again:#}\n(a first attempt had failed too: {e:#})")
                    })
            }
            other => other,
        }
    }

    fn initialise(&self, datadir: &Path, rundir: &Path, pw: &Password) -> anyhow::Result<()> {
        self.server.flavor.initialise(self, datadir, rundir, pw)
    }

    /// The initialisation options the data directory got (PostgreSQL's initdb), for run.json;
    /// None for a family whose configs give none.
    pub fn init_record(&self) -> Option<Vec<String>> {
        self.server.flavor.init_record(self)
    }

    /// Writes the server's registry entry once it runs the server's program (a process just
    /// forked still shows dbperf's command line). A server that exited at once gets none:
    /// `wait_ready` says why it exited.
    fn record(&self, r: &mut Running) -> anyhow::Result<()> {
        let Some(server) = process::identity_after_exec(&r.child, &self.layout.server)? else {
            return Ok(());
        };
        let owner = Identity::this_process()
            .ok_or_else(|| anyhow::anyhow!("cannot read dbperf's own process in /proc"))?;
        let entry = registry::Entry {
            schema: 1,
            target: self.target.clone(),
            engine: self.server.name().into(),
            datadir: r.datadir.display().to_string(),
            port: r.port,
            socket: r.socket.display().to_string(),
            log: r.log.display().to_string(),
            started_at: time::OffsetDateTime::now_utc()
                .format(&time::format_description::well_known::Rfc3339)
                .unwrap_or_default(),
            server: server.clone(),
            owner,
            may_outlive: false,
            cgroup: r.cap.as_ref().map(|c| c.dir.display().to_string()),
        };
        let path = registry::record(&entry)?;
        r.identity = Some(server);
        r.record = Some((path, entry));
        Ok(())
    }

    fn wait_ready(&self, r: &mut Running) -> anyhow::Result<()> {
        let start = Instant::now();
        loop {
            if !r.alive() {
                let tail = r.log_tail(25);
                let oom = r.oom_killed().map(|o| format!(": {o}")).unwrap_or_default();
                r.stop();
                anyhow::bail!(
                    "{} exited during start-up{oom}; the end of its log ({}):\n{tail}",
                    self.server.name(),
                    r.log.display()
                );
            }
            if self.server.flavor.answers(self, r) {
                return Ok(());
            }
            if self
                .interrupt
                .as_ref()
                .is_some_and(|f| f.load(std::sync::atomic::Ordering::SeqCst))
            {
                r.stop();
                return Err(
                    process::Interrupted(format!("{} start-up", self.server.name())).into(),
                );
            }
            if start.elapsed() > self.ready_timeout {
                let tail = r.log_tail(25);
                r.stop();
                anyhow::bail!(
                    "{} did not answer within {} s; the end of its log ({}):\n{tail}",
                    self.server.name(),
                    self.ready_timeout.as_secs(),
                    r.log.display()
                );
            }
            std::thread::sleep(Duration::from_millis(50));
        }
    }
}

/// Makes room for a fresh server in the instance directory `dir`: the data directory an earlier
/// server left there (a kept work directory's, or a killed attempt's) is removed, so the new one
/// starts from an empty data directory as every managed server does. Refused while a process
/// names that data directory (a server still runs on it) or while it is a `dbperf server start`
/// instance. Never through a symbolic link: `dir` and its parent must be real directories, a
/// `data` that is a link is only unlinked, and the removal below it never follows one.
pub fn clear_previous(dir: &Path) -> anyhow::Result<()> {
    let dir = std::path::absolute(dir)
        .map_err(|e| anyhow::anyhow!("cannot resolve {}: {e}", dir.display()))?;
    let data = dir.join("data");
    let Ok(m) = fs::symlink_metadata(&data) else {
        return Ok(());
    };
    for d in [Some(dir.as_path()), dir.parent()].into_iter().flatten() {
        if !fs::symlink_metadata(d).is_ok_and(|m| m.is_dir()) {
            return crate::error::bad_input(format!(
                "{} is not a directory (a symbolic link?): dbperf removes no data through it",
                d.display()
            ));
        }
    }
    if dir.join("server.json").exists() {
        return crate::error::bad_input(format!(
            "{} holds an instance of `dbperf server start`; stop it with `dbperf server stop` \
             (--remove) or choose another --work-dir",
            dir.display()
        ));
    }
    if let Some(p) = process_naming(&data) {
        return crate::error::bad_input(format!(
            "{} is in use: pid {} runs on it ({}); stop it or choose another --work-dir",
            data.display(),
            p.pid,
            p.short()
        ));
    }
    let removed = if m.is_dir() {
        // Since Rust 1.58.1 this opens every level below `data` without following links.
        fs::remove_dir_all(&data)
    } else {
        fs::remove_file(&data)
    };
    removed.map_err(|e| anyhow::anyhow!("cannot remove the earlier {}: {e}", data.display()))
}

/// A live process whose command line names `path` (a server started on that data directory).
fn process_naming(path: &Path) -> Option<Identity> {
    let own = std::process::id();
    fs::read_dir("/proc")
        .ok()?
        .flatten()
        .filter_map(|e| e.file_name().to_str()?.parse::<u32>().ok())
        .filter(|&pid| pid != own)
        .filter_map(Identity::of)
        .find(|id| id.mentions(path))
}

/// The server user must be able to reach its directory: a work directory under a private home
/// (e.g. /root) is not searchable by anyone else.
fn check_reachable(dir: &Path, user: Option<&User>) -> anyhow::Result<()> {
    let Some(u) = user else { return Ok(()) };
    let mut c = process::command(Path::new("/bin/sh"), Some(u));
    c.arg("-c").arg("test -w \"$0\"").arg(dir);
    let ok = c.status().map(|s| s.success()).unwrap_or(false);
    if !ok {
        return crate::error::bad_input(format!(
            "the server user {} cannot reach {}: a parent directory is private; put --work-dir \
             under /tmp or /var/tmp, or use --server-user",
            u.name,
            dir.display()
        ));
    }
    Ok(())
}

#[cfg(test)]
mod server_engine_tests {
    use super::*;

    #[test]
    fn every_server_engine_has_its_facts_and_a_flavor() {
        for e in [Engine::Postgres, Engine::MariaDb, Engine::MySql] {
            let s = ServerEngine::of(e).unwrap();
            assert_eq!(s.engine, e);
            assert!(!s.facts.admin_user.is_empty(), "{e}");
        }
        assert!(ServerEngine::of(Engine::Sqlite).is_none());
        assert!(ServerEngine::of(Engine::Null).is_none());
    }
}
