//! Private server instances: find the binaries, initialise a data directory, write the named
//! config, start on a free loopback port plus a unix socket in a private 0700 directory, wait
//! until the server answers, and stop it by pid. Never the system service, never as root.

mod access;
pub mod cgroup;
pub mod configs;
pub mod identity;
pub mod layout;
pub mod probe;
pub mod process;
mod published;
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
use crate::engines::{Engine, ServerFacts};
use crate::safe_fs::{self, Also, Dir};
use identity::Identity;
use layout::Layout;
use process::User;
use secret::{ClientFiles, Password};

/// The engines dbperf manages as servers: what differs in how each is initialised and started.
/// The rest of what the crate knows of them (users, ports, signals) is their registry entry's.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    Postgres,
    MariaDb,
    MySql,
}

impl Kind {
    /// The kind of a server engine; None for an embedded one.
    pub fn of(engine: Engine) -> Option<Kind> {
        match engine {
            Engine::Postgres => Some(Kind::Postgres),
            Engine::MariaDb => Some(Kind::MariaDb),
            Engine::MySql => Some(Kind::MySql),
            Engine::Sqlite | Engine::Null => None,
        }
    }

    pub fn engine(self) -> Engine {
        match self {
            Kind::Postgres => Engine::Postgres,
            Kind::MariaDb => Engine::MariaDb,
            Kind::MySql => Engine::MySql,
        }
    }

    pub fn name(self) -> &'static str {
        self.engine().name()
    }

    /// The command-line client each build ships, for a person to connect by hand.
    pub fn client_program(self) -> &'static str {
        match self {
            Kind::Postgres => "psql",
            Kind::MariaDb => "mariadb", // a program's name, not an engine's
            Kind::MySql => "mysql",     // a program's name, not an engine's
        }
    }

    /// Its registry entry's server facts (every kind is a server engine: `of`).
    pub fn facts(self) -> &'static ServerFacts {
        match self.engine().server() {
            Some(f) => f,
            None => unreachable!("Kind::of gives a kind only to server engines"),
        }
    }
}

/// Everything needed to start one target's server, checked before any step runs.
#[derive(Debug, Clone)]
pub struct Plan {
    /// The target's name, for the registry.
    pub target: String,
    pub kind: Kind,
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

/// A server's memory cap and the controller that enforces it.
#[derive(Debug, Clone)]
pub struct MemoryCap {
    pub bytes: u64,
    pub controller: cgroup::Controller,
}

/// A server dbperf started. Stopped on drop, whatever happened in between.
pub struct Running {
    pub kind: Kind,
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

/// A server's cgroup name: its target and port (unique among the servers running), as a plain
/// name.
/// The smallest cap a server of `kind` runs under: PostgreSQL started and went IO-bound at
/// 64 MiB; MariaDB, whose InnoDB takes about 33 MiB beside its buffer pool and the dirty pages
/// of its redo log, was killed by the kernel at 64, 96 and 128 MiB and ran at 256; MySQL 9.7
/// held 770 MiB with a 256 MiB pool (its performance schema and other buffers) and was killed
/// at 384 and 512 MiB.
fn least_cap(kind: Kind) -> u64 {
    match kind {
        Kind::Postgres => 64 << 20,
        Kind::MariaDb => 256 << 20,
        Kind::MySql => 1 << 30,
    }
}

fn cap_name(target: &str, port: u16) -> String {
    let t: String = target
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || "._-".contains(c) {
                c
            } else {
                '_'
            }
        })
        .collect();
    // A cgroup's name is at most 255 bytes: a long target name is cut (the port tells apart).
    let t: String = t.trim_start_matches('.').chars().take(200).collect();
    format!("{t}-{port}")
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
            user: self.kind.facts().admin_user.into(),
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
        let sig = self.kind.facts().stop_signal;
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
fn death_signal(kind: Kind) -> i32 {
    kind.facts().kill_signal
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
    kind: Kind,
    known: Option<&str>,
    layout: &Layout,
    user: Option<&User>,
) -> anyhow::Result<version::Version> {
    // A build named by a prefix (`--from` with `8.0`) records only that much; the binary
    // knows the rest, and a published config's settings can turn on the patch (8.0.30).
    // PostgreSQL's releases have two numbers since 10, the MySQL family's three.
    let parts = match kind {
        Kind::Postgres => 2,
        Kind::MariaDb | Kind::MySql => 3,
    };
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
        let Some(kind) = Kind::of(t.engine) else {
            return crate::error::bad_input(format!(
                "{} is embedded: dbperf starts no server for it",
                t.engine
            ));
        };
        let layout = layout::find(kind, t.binaries, t.rocksdb)?;
        let config = t.config_name;
        let asked = configs::Asked {
            kind,
            rocksdb: t.rocksdb,
            name: config,
            text: t.config_text,
            base: t.config_base,
            cap: t.memory,
        };
        if let Some(bytes) = t.memory {
            let least = least_cap(kind);
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
            Some(bytes) => Some(MemoryCap {
                bytes,
                controller: cgroup::check(Path::new("/sys"))?,
            }),
            None => None,
        };
        // Under a cap a config is sized for the cap, not for the host.
        let chosen = configs::choose(
            &asked,
            || server_version(kind, t.version, &layout, user.as_ref()),
            || match t.memory {
                Some(bytes) => bytes >> 10,
                None => crate::host::memory_kb(&Default::default()),
            },
        )?;
        let config_text = chosen.text;
        if let Some(name) = configs::owned_setting(kind, &config_text) {
            return crate::error::bad_input(format!(
                "{} config '{}' sets {name}: a managed server's addresses, port, socket, logins \
                 and init file are dbperf's own (loopback only, a password on every login), so \
                 leave it out",
                t.engine, config
            ));
        }
        Ok(Plan {
            target: t.target_name.to_string(),
            kind,
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
                signal: death_signal(self.kind),
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
        let init = self.initialise(&datadir, &rundir, &password);
        // mariadb-install-db now and then fails when several run at once on a loaded two-core
        // machine (its bootstrap server exits early, and its message is only its help text); one
        // more try on a fresh data directory gets through. Bounded: once, and both failures are
        // reported when the second fails too.
        let init = match init {
            Err(e)
                if fresh && matches!(self.kind, Kind::MariaDb) && !process::is_interrupted(&e) =>
            {
                let _ = fs::remove_dir_all(&datadir);
                server_dir(&instance, "data", u)
                    .and_then(|_| self.initialise(&datadir, &rundir, &password))
                    .map_err(|again| {
                        anyhow::anyhow!("{again:#}\n(a first attempt had failed too: {e:#})")
                    })
            }
            other => other,
        };
        if let Err(e) = init {
            return Err(forget_rundir(e));
        }
        let socket = match self.kind {
            Kind::Postgres => rundir.join(format!(".s.PGSQL.{port}")),
            Kind::MariaDb | Kind::MySql => rundir.join("mysqld.sock"),
        };
        let reach = secret::Reach {
            postgres: self.kind == Kind::Postgres,
            user: self.kind.facts().admin_user,
            port,
            socket: &socket,
        };
        let client_files =
            secret::write_client_files(dir, &password, &reach).map_err(forget_rundir)?;
        // MariaDB's install step has no way to set a password on every version: the first
        // start's init file does, before the server greets its first connection.
        let init_file = match self.kind {
            Kind::MariaDb => Some(
                secret::Scratch::write(&rundir, "init.sql", &secret::mysql_init_sql(&password), u)
                    .map_err(forget_rundir)?,
            ),
            Kind::Postgres | Kind::MySql => None,
        };
        // The log outlives a socket directory made under /tmp (removed with the server).
        let log_dir = if temp_rundir.is_some() { dir } else { &rundir };
        // An old log of this directory's earlier server goes (unlinking never follows a link);
        // the new one is made afresh, so nothing planted there is written through.
        let _ = fs::remove_file(log_dir.join("server.log"));
        let (log, out) = process::private_file(log_dir, "server.log").map_err(forget_rundir)?;
        // Made before the server starts, which joins it before its first instruction.
        let cap = match &self.memory {
            Some(m) => Some(
                cgroup::Cap::create(&m.controller, &cap_name(&self.target, port), m.bytes)
                    .map_err(forget_rundir)?,
            ),
            None => None,
        };
        let join = cap.as_ref().map(cgroup::Cap::procs_file).transpose()?;
        let mut cmd = match self.kind {
            Kind::Postgres => self.postgres_command(&datadir, &rundir, port, join),
            Kind::MariaDb | Kind::MySql => self.mysqld_command(&datadir, &rundir, &log, port, join),
        };
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
            kind: self.kind,
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
    fn initialise(&self, datadir: &Path, rundir: &Path, pw: &Password) -> anyhow::Result<()> {
        match self.kind {
            Kind::Postgres => self.init_postgres(datadir, rundir, pw),
            Kind::MariaDb | Kind::MySql => self.init_mysql(datadir, rundir, pw),
        }
    }

    /// The initdb options a data directory gets: the config's, or else data checksums pinned
    /// off. PostgreSQL 18 turned them on by default, so without the pin 17 and 18 would be
    /// compared with and without the checksum work; versions before 18 have them off and no
    /// option to say so.
    pub fn init_options(&self) -> Vec<String> {
        if let Some(o) = &self.initdb {
            return o.clone();
        }
        let help = probe::ask(
            &self.layout.init,
            &["--help"],
            self.user.as_ref(),
            probe::DEADLINE,
        )
        .map(|a| a.text)
        .unwrap_or_default();
        if help.contains("--no-data-checksums") {
            vec!["--no-data-checksums".into()]
        } else {
            Vec::new()
        }
    }

    fn init_postgres(&self, datadir: &Path, rundir: &Path, pw: &Password) -> anyhow::Result<()> {
        let u = self.user.as_ref();
        // initdb reads the superuser's password from a file the server's user can read; it is
        // gone once initdb ended. Every login, over TCP and over the socket, needs it.
        let pwfile = secret::Scratch::write(rundir, "initdb.pw", &format!("{}\n", pw.as_str()), u)?;
        let mut c = process::command(&self.layout.init, u);
        c.arg("-D")
            .arg(datadir)
            .args([
                "-U",
                self.kind.facts().admin_user,
                "--auth=scram-sha-256",
                "-E",
                "UTF8",
                "--no-locale",
            ])
            .arg(format!("--pwfile={}", pwfile.path().display()))
            .args(self.init_options());
        process::run_to_end(c, &self.short_run("initdb", 120, rundir))?;
        drop(pwfile);
        // The named config goes at the end of postgresql.conf, so it overrides initdb's lines.
        let text = format!(
            "\n# ---- dbperf config {} ----\n{}\n",
            self.config_name, self.config_text
        );
        append_to_server_file(&datadir.join("postgresql.conf"), self.user.as_ref(), &text)
    }

    fn postgres_command(
        &self,
        datadir: &Path,
        rundir: &Path,
        port: u16,
        cgroup: Option<std::ffi::CString>,
    ) -> std::process::Command {
        let mut c = process::command_in(&self.layout.server, self.user.as_ref(), cgroup);
        c.arg("-D")
            .arg(datadir)
            .arg("-p")
            .arg(port.to_string())
            .arg("-k")
            .arg(rundir)
            .args(["-c", "listen_addresses=127.0.0.1"]);
        c
    }

    fn init_mysql(&self, datadir: &Path, rundir: &Path, pw: &Password) -> anyhow::Result<()> {
        let u = self.user.as_ref();
        let mut c = process::command(&self.layout.init, u);
        // MySQL: the init file gives root its password before the data directory ever takes a
        // connection (MariaDB's comes with the first start, see `start`).
        let mut init_file = None;
        match self.kind {
            Kind::MySql => {
                let f = secret::Scratch::write(
                    rundir,
                    "init.sql",
                    &secret::mysql_initialize_sql(pw),
                    u,
                )?;
                c.args(["--no-defaults", "--initialize-insecure"]);
                c.arg(format!("--init-file={}", f.path().display()));
                init_file = Some(f);
                c.arg(format!("--basedir={}", self.layout.basedir.display()));
                c.arg(format!("--datadir={}", datadir.display()));
                c.arg(format!("--log-error={}", rundir.join("init.log").display()));
                c.args(configs::mycnf_init_options(&self.config_text));
            }
            _ => {
                c.arg("--no-defaults");
                c.arg(format!("--basedir={}", self.layout.basedir.display()));
                c.arg(format!("--datadir={}", datadir.display()));
                c.args(["--auth-root-authentication-method=normal", "--skip-test-db"]);
                // mariadb-install-db hands options it does not know to its bootstrap server.
                c.args(configs::mycnf_init_options(&self.config_text));
                if let Some(d) = &self.layout.working_dir {
                    c.current_dir(d);
                }
            }
        }
        let what = self
            .layout
            .init
            .file_name()
            .map(|f| f.to_string_lossy().to_string());
        let what = what.unwrap_or_default();
        let r = process::run_to_end(c, &self.short_run(&what, 300, rundir));
        drop(init_file);
        if let (Err(e), Kind::MySql, false) = (
            &r,
            self.kind,
            r.as_ref().is_err_and(process::is_interrupted),
        ) {
            let log = process::tail_file(&rundir.join("init.log"), 20);
            anyhow::bail!("{}\n{}", pw.redact(&e.to_string()), pw.redact(&log));
        }
        r?;
        // Kept beside the data for the record; the server itself gets the same options on its
        // command line because every mysqld runs with --no-defaults.
        safe_fs::write_new(
            &datadir.join("dbperf.cnf"),
            format!("[mysqld]\n{}\n", self.config_text).as_bytes(),
        )?;
        Ok(())
    }

    fn mysqld_command(
        &self,
        datadir: &Path,
        rundir: &Path,
        log: &Path,
        port: u16,
        cgroup: Option<std::ffi::CString>,
    ) -> std::process::Command {
        let l = &self.layout;
        let mut c = process::command_in(&l.server, self.user.as_ref(), cgroup);
        // --no-defaults must come first: Debian's /etc/mysql files would otherwise load MyRocks,
        // Galera and compression providers into every server.
        c.arg("--no-defaults");
        c.arg(format!("--basedir={}", l.basedir.display()));
        if let Some(p) = &l.plugin_dir {
            c.arg(format!("--plugin-dir={}", p.display()));
        }
        if let Some(d) = &l.lc_messages_dir {
            c.arg(format!("--lc-messages-dir={}", d.display()));
        }
        c.arg(format!("--datadir={}", datadir.display()));
        c.arg(format!("--port={port}"));
        c.arg("--bind-address=127.0.0.1");
        c.arg(format!("--socket={}", rundir.join("mysqld.sock").display()));
        c.arg(format!(
            "--pid-file={}",
            rundir.join("mysqld.pid").display()
        ));
        c.arg(format!("--log-error={}", log.display()));
        match self.kind {
            // MySQL 8's X plugin opens a second port (33060) shared by every instance.
            // Its compiled-in import directory (/var/lib/mysql-files) must exist or the start
            // aborts; no benchmark reads or writes server-side files, so none is allowed.
            Kind::MySql => {
                c.args(["--mysqlx=OFF", "--secure-file-priv=NULL"]);
            }
            // MariaDB 11.4 bintars spend ~10 s generating a TLS certificate otherwise.
            _ => {
                c.arg("--skip-ssl");
            }
        }
        if self.rocksdb {
            // Loaded at start-up: INSTALL SONAME at run time crashes MariaDB 10.11.
            c.arg("--plugin-load-add=ha_rocksdb.so");
        }
        for opt in configs::mycnf_options(&self.config_text) {
            c.arg(opt);
        }
        if let Some(d) = &l.working_dir {
            c.current_dir(d);
        }
        c
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
            engine: self.kind.name().into(),
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
                    self.kind.name(),
                    r.log.display()
                );
            }
            let up = match self.kind {
                Kind::Postgres => {
                    crate::dbms::postgres::ping(&r.endpoint(true, self.kind.facts().admin_database))
                }
                Kind::MariaDb | Kind::MySql => {
                    r.socket.exists() && std::net::TcpStream::connect(("127.0.0.1", r.port)).is_ok()
                }
            };
            if up {
                return Ok(());
            }
            if self
                .interrupt
                .as_ref()
                .is_some_and(|f| f.load(std::sync::atomic::Ordering::SeqCst))
            {
                r.stop();
                return Err(process::Interrupted(format!("{} start-up", self.kind.name())).into());
            }
            if start.elapsed() > self.ready_timeout {
                let tail = r.log_tail(25);
                r.stop();
                anyhow::bail!(
                    "{} did not answer within {} s; the end of its log ({}):\n{tail}",
                    self.kind.name(),
                    self.ready_timeout.as_secs(),
                    r.log.display()
                );
            }
            std::thread::sleep(Duration::from_millis(50));
        }
    }
}

/// Appends `text` to a file the server's own tool made (initdb's postgresql.conf) in a
/// directory the server user owns: never through a link or a second name, and only to a file of
/// the server user's (or, without one, of this user's).
fn append_to_server_file(path: &Path, user: Option<&User>, text: &str) -> anyhow::Result<()> {
    use std::io::Write;
    use std::os::unix::fs::{MetadataExt, OpenOptionsExt};
    let cannot =
        |e: &dyn std::fmt::Display| anyhow::anyhow!("cannot append to {}: {e}", path.display());
    let mut f = fs::OpenOptions::new()
        .append(true)
        .custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK)
        .open(path)
        .map_err(|e| cannot(&e))?;
    let m = f.metadata().map_err(|e| cannot(&e))?;
    // SAFETY: geteuid has no preconditions.
    let owner = user.map_or_else(|| unsafe { libc::geteuid() }, |u| u.uid);
    if !m.is_file() || m.nlink() != 1 || m.uid() != owner {
        return Err(cannot(
            &"it is not the file the server's initialisation made",
        ));
    }
    f.write_all(text.as_bytes()).map_err(|e| cannot(&e))
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
mod kind_tests {
    use super::*;

    #[test]
    fn every_kind_is_a_server_engine_with_its_facts() {
        for k in [Kind::Postgres, Kind::MariaDb, Kind::MySql] {
            assert_eq!(Kind::of(k.engine()), Some(k));
            assert!(!k.facts().admin_user.is_empty(), "{}", k.name());
        }
        assert_eq!(Kind::of(Engine::Sqlite), None);
        assert_eq!(Kind::of(Engine::Null), None);
    }
}
