//! Private server instances: find the binaries, initialise a data directory, write the named
//! config, start on a free loopback port plus a unix socket in a private 0700 directory, wait
//! until the server answers, and stop it by pid. Never the system service, never as root.

pub mod configs;
pub mod layout;
pub mod process;

use std::fs;
use std::path::{Path, PathBuf};
use std::process::Child;
use std::time::{Duration, Instant};

use crate::dbms::{Endpoint, Transport};
use layout::Layout;
use process::User;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    Postgres,
    MariaDb,
    MySql,
}

impl Kind {
    pub fn name(self) -> &'static str {
        match self {
            Kind::Postgres => "postgres",
            Kind::MariaDb => "mariadb",
            Kind::MySql => "mysql",
        }
    }
}

/// Everything needed to start one target's server, checked before any step runs.
#[derive(Debug, Clone)]
pub struct Plan {
    pub kind: Kind,
    pub rocksdb: bool,
    pub layout: Layout,
    pub config_name: String,
    /// The config file text (postgresql.conf lines or my.cnf `[mysqld]` options).
    pub config_text: String,
    pub user: Option<User>,
    pub ready_timeout: Duration,
    /// Set when the user asked to stop (Ctrl-C): start-up is abandoned and the server stopped.
    pub interrupt: Option<std::sync::Arc<std::sync::atomic::AtomicBool>>,
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
}

/// Database the benchmarks use, as in the original (`ib`).
pub const DATABASE: &str = "ib";
/// Superuser dbperf creates in PostgreSQL (MySQL family: root with an empty password, loopback only).
pub const PG_USER: &str = "dbperf";

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
        let user = match self.kind {
            Kind::Postgres => PG_USER,
            _ => "root",
        };
        Endpoint {
            transport,
            user: user.into(),
            password: None,
            database: database.into(),
        }
    }

    pub fn alive(&mut self) -> bool {
        matches!(self.child.try_wait(), Ok(None))
    }

    /// Graceful stop (PostgreSQL fast shutdown, mysqld SIGTERM), forced after 120 s.
    pub fn stop(&mut self) -> String {
        if let Some(s) = &self.stopped {
            return s.clone();
        }
        let sig = match self.kind {
            Kind::Postgres => libc::SIGINT,
            _ => libc::SIGTERM,
        };
        let how = process::stop(&mut self.child, sig, Duration::from_secs(120));
        self.stopped = Some(how.clone());
        how
    }

    /// Leaves the server running after dbperf exits (`dbperf server start`).
    pub fn detach(mut self) {
        process::unregister(self.pid);
        self.stopped = Some("detached".into());
    }

    pub fn log_tail(&self, n: usize) -> String {
        process::tail_file(&self.log, n)
    }
}

impl Drop for Running {
    fn drop(&mut self) {
        self.stop();
    }
}

/// Unix socket paths are limited to 107 bytes; a deep work directory gets its socket directory
/// under the system temp directory instead.
fn run_dir(base: &Path) -> PathBuf {
    let d = base.join("run");
    if d.as_os_str().len() + 24 < 100 {
        d
    } else {
        std::env::temp_dir().join(format!(
            "dbperf-{}-{}",
            std::process::id(),
            process::free_port().unwrap_or(0)
        ))
    }
}

impl Plan {
    /// The plan for a managed server target: its binaries and its config text (from dbperf.toml
    /// or built in), checked before anything starts.
    pub fn for_target(
        t: &crate::spec::target::Target,
        user: Option<User>,
        ready_timeout: Duration,
        interrupt: Option<std::sync::Arc<std::sync::atomic::AtomicBool>>,
    ) -> anyhow::Result<Plan> {
        let kind = match t.engine.as_str() {
            "postgres" => Kind::Postgres,
            "mysql" => Kind::MySql,
            _ => Kind::MariaDb,
        };
        let layout = layout::find(kind, t.path.as_deref(), t.rocksdb())?;
        let config_text = match (&t.config_text, configs::builtin(kind, t.rocksdb(), &t.config)) {
            (Some(text), _) => text.clone(),
            (None, Some(text)) => text,
            (None, None) => {
                return crate::error::bad_input(format!(
                    "unknown {} config '{}': declare it as [config.{}] in dbperf.toml (the built-in one is 'default')",
                    t.engine, t.config, t.config
                ))
            }
        };
        Ok(Plan {
            kind,
            rocksdb: t.rocksdb(),
            layout,
            config_name: t.config.clone(),
            config_text,
            user,
            ready_timeout,
            interrupt,
        })
    }

    /// Initialises a fresh data directory under `dir` and starts the server.
    pub fn start(&self, dir: &Path) -> anyhow::Result<Running> {
        let u = self.user.as_ref();
        process::private_dir(dir, u)?;
        let datadir = dir.join("data");
        let rundir = run_dir(dir);
        process::private_dir(&rundir, u)?;
        check_reachable(dir, u)?;
        let log = rundir.join("server.log");
        let port = process::free_port()?;
        match self.kind {
            Kind::Postgres => self.init_postgres(&datadir)?,
            Kind::MariaDb | Kind::MySql => self.init_mysql(&datadir, &rundir)?,
        }
        let mut cmd = match self.kind {
            Kind::Postgres => self.postgres_command(&datadir, &rundir, port),
            _ => self.mysqld_command(&datadir, &rundir, port),
        };
        let out = fs::File::create(&log)?;
        if let Some(u) = u {
            let _ = std::os::unix::fs::chown(&log, Some(u.uid), Some(u.gid));
        }
        cmd.stdout(out.try_clone()?).stderr(out);
        let child = cmd
            .spawn()
            .map_err(|e| anyhow::anyhow!("cannot start {}: {e}", self.layout.server.display()))?;
        let pid = child.id();
        process::register(pid);
        let socket = match self.kind {
            Kind::Postgres => rundir.join(format!(".s.PGSQL.{port}")),
            _ => rundir.join("mysqld.sock"),
        };
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
        };
        self.wait_ready(&mut running)?;
        Ok(running)
    }

    fn init_postgres(&self, datadir: &Path) -> anyhow::Result<()> {
        let mut c = process::command(&self.layout.init, self.user.as_ref());
        c.arg("-D")
            .arg(datadir)
            .args(["-U", PG_USER, "--auth=trust", "-E", "UTF8", "--no-locale"]);
        process::run_to_end(c, "initdb", Duration::from_secs(120))?;
        // The named config goes at the end of postgresql.conf, so it overrides initdb's lines.
        let conf = datadir.join("postgresql.conf");
        let mut text = fs::read_to_string(&conf)?;
        text.push_str(&format!(
            "\n# ---- dbperf config {} ----\n{}\n",
            self.config_name, self.config_text
        ));
        fs::write(&conf, text)?;
        Ok(())
    }

    fn postgres_command(&self, datadir: &Path, rundir: &Path, port: u16) -> std::process::Command {
        let mut c = process::command(&self.layout.server, self.user.as_ref());
        c.arg("-D")
            .arg(datadir)
            .arg("-p")
            .arg(port.to_string())
            .arg("-k")
            .arg(rundir)
            .args(["-c", "listen_addresses=127.0.0.1"]);
        c
    }

    fn init_mysql(&self, datadir: &Path, rundir: &Path) -> anyhow::Result<()> {
        let u = self.user.as_ref();
        let mut c = process::command(&self.layout.init, u);
        match self.kind {
            Kind::MySql => {
                c.args(["--no-defaults", "--initialize-insecure"]);
                c.arg(format!("--basedir={}", self.layout.basedir.display()));
                c.arg(format!("--datadir={}", datadir.display()));
                c.arg(format!("--log-error={}", rundir.join("init.log").display()));
            }
            _ => {
                c.arg("--no-defaults");
                c.arg(format!("--basedir={}", self.layout.basedir.display()));
                c.arg(format!("--datadir={}", datadir.display()));
                c.args(["--auth-root-authentication-method=normal", "--skip-test-db"]);
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
        let r = process::run_to_end(c, &what.unwrap_or_default(), Duration::from_secs(300));
        if let (Err(e), Kind::MySql) = (&r, self.kind) {
            anyhow::bail!("{e}\n{}", process::tail_file(&rundir.join("init.log"), 20));
        }
        r?;
        // Kept beside the data for the record; the server itself gets the same options on its
        // command line because every mysqld runs with --no-defaults.
        fs::write(
            datadir.join("dbperf.cnf"),
            format!("[mysqld]\n{}\n", self.config_text),
        )?;
        Ok(())
    }

    fn mysqld_command(&self, datadir: &Path, rundir: &Path, port: u16) -> std::process::Command {
        let l = &self.layout;
        let mut c = process::command(&l.server, self.user.as_ref());
        // --no-defaults must come first: Debian's /etc/mysql files would otherwise load MyRocks,
        // Galera and compression providers into every server.
        c.arg("--no-defaults");
        c.arg(format!("--basedir={}", l.basedir.display()));
        if let Some(p) = &l.plugin_dir {
            c.arg(format!("--plugin-dir={}", p.display()));
        }
        c.arg(format!("--datadir={}", datadir.display()));
        c.arg(format!("--port={port}"));
        c.arg("--bind-address=127.0.0.1");
        c.arg(format!("--socket={}", rundir.join("mysqld.sock").display()));
        c.arg(format!(
            "--pid-file={}",
            rundir.join("mysqld.pid").display()
        ));
        c.arg(format!(
            "--log-error={}",
            rundir.join("server.log").display()
        ));
        match self.kind {
            // MySQL 8's X plugin opens a second port (33060) shared by every instance.
            Kind::MySql => {
                c.arg("--mysqlx=OFF");
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

    fn wait_ready(&self, r: &mut Running) -> anyhow::Result<()> {
        let start = Instant::now();
        loop {
            if !r.alive() {
                let tail = r.log_tail(25);
                r.stop();
                anyhow::bail!(
                    "{} exited during start-up; the end of its log ({}):\n{tail}",
                    self.kind.name(),
                    r.log.display()
                );
            }
            let up = match self.kind {
                Kind::Postgres => crate::dbms::postgres::ping(&r.endpoint(true, "postgres")),
                _ => {
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
                anyhow::bail!("{} start-up interrupted", self.kind.name());
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
