//! The MySQL family's flavor (MariaDB, Oracle MySQL): a data directory made by the engine's
//! install step, `mysqld --no-defaults` with every option on its command line, my.cnf's syntax.
//! What sets one engine of the family apart is its registry entry's `MySqlFacts`, read here:
//! a new engine of the family is one registry entry.

use std::ffi::CString;
use std::path::{Path, PathBuf};
use std::process::Command;

use super::configs::{self, Fit};
use super::flavor::{Flavor, Places, Refusal};
use super::layout::{self, DebianLayout, Layout};
use super::process;
use super::secret::{self, ClientFile, Password, Reach, Scratch};
use super::{Plan, Running};
use crate::dbms::mysql_auth;
use crate::dbms::mysql_wire::WireError;
use crate::dbms::{Endpoint, Timeouts};
use crate::engines::{Engine, MySqlFacts, MySqlInit};
use crate::safe_fs;

#[derive(Debug)]
pub struct MySqlFamily;

/// The registry's facts of a MySQL-family engine (every one has them: engines.rs tests it).
pub fn facts(engine: Engine) -> &'static MySqlFacts {
    match engine.mysql() {
        Some(f) => f,
        None => unreachable!("{engine} is of the MySQL family and has its facts (tested)"),
    }
}

const INNODB_DEFAULT: &str = "\
innodb_buffer_pool_size = 1G
innodb_log_file_size = 512M
innodb_flush_log_at_trx_commit = 1
innodb_doublewrite = 1
skip_log_bin
max_connections = 500
";

const ROCKSDB_DEFAULT: &str = "\
rocksdb_block_cache_size = 1G
rocksdb_flush_log_at_trx_commit = 1
innodb_buffer_pool_size = 64M
skip_log_bin
max_connections = 500
";

fn default(engine: Engine, rocksdb: bool) -> String {
    if rocksdb {
        return ROCKSDB_DEFAULT.to_string();
    }
    // The same 512 MB of redo on every engine, under the setting its version sizes it by.
    INNODB_DEFAULT.replace("innodb_log_file_size", facts(engine).redo_setting)
}

impl Flavor for MySqlFamily {
    fn find_layout(&self, engine: Engine, path: Option<&Path>) -> anyhow::Result<Layout> {
        layout::find_mysql(engine, path)
    }

    fn debian_layout(&self, engine: Engine, version: &str) -> DebianLayout {
        let f = facts(engine);
        DebianLayout {
            basedir: "usr".to_string(),
            server: format!("usr/sbin/{}", f.server_program),
            version_text: f.version_text.replace("{}", version),
            note: None,
        }
    }

    fn version_parts(&self) -> usize {
        3
    }

    fn initialise(
        &self,
        plan: &Plan,
        datadir: &Path,
        rundir: &Path,
        pw: &Password,
    ) -> anyhow::Result<()> {
        let init = facts(plan.server.engine).init;
        let (c, init_file) = init_command(plan, init, datadir, rundir, pw)?;
        let what = plan
            .layout
            .init
            .file_name()
            .map(|f| f.to_string_lossy().to_string());
        let what = what.unwrap_or_default();
        let r = process::run_to_end(c, &plan.short_run(&what, 300, rundir));
        drop(init_file);
        let logged = match init {
            MySqlInit::Initialize => true,
            MySqlInit::InstallScript => false,
        };
        if let (Err(e), true, false) = (&r, logged, r.as_ref().is_err_and(process::is_interrupted))
        {
            let log = process::tail_file(&rundir.join("init.log"), 20);
            anyhow::bail!("{}\n{}", pw.redact(&e.to_string()), pw.redact(&log));
        }
        r?;
        // Kept beside the data for the record; the server itself gets the same options on its
        // command line because every mysqld runs with --no-defaults.
        safe_fs::write_new(
            &datadir.join("dbperf.cnf"),
            format!("[mysqld]\n{}\n", plan.config_text).as_bytes(),
        )?;
        Ok(())
    }

    /// mariadb-install-db now and then fails when several run at once on a loaded two-core
    /// machine (its bootstrap server exits early, and its message is only its help text); one
    /// more try on a fresh data directory gets through.
    fn retries_initialise(&self, engine: Engine) -> bool {
        match facts(engine).init {
            MySqlInit::InstallScript => true,
            MySqlInit::Initialize => false,
        }
    }

    fn takes_init_options(&self) -> bool {
        false
    }

    fn init_record(&self, _plan: &Plan) -> Option<Vec<String>> {
        None
    }

    fn socket(&self, rundir: &Path, _port: u16) -> PathBuf {
        rundir.join("mysqld.sock")
    }

    /// The install script has no way to set a password on every version: the first start's
    /// init file does, before the server greets its first connection.
    fn first_start_file(
        &self,
        plan: &Plan,
        rundir: &Path,
        pw: &Password,
    ) -> anyhow::Result<Option<Scratch>> {
        match facts(plan.server.engine).init {
            MySqlInit::InstallScript => Ok(Some(Scratch::write(
                rundir,
                "init.sql",
                &secret::mysql_init_sql(pw),
                plan.user.as_ref(),
            )?)),
            MySqlInit::Initialize => Ok(None),
        }
    }

    fn command(&self, plan: &Plan, at: &Places, cgroup: Option<CString>) -> Command {
        let l = &plan.layout;
        let mut c = process::command_in(&l.server, plan.user.as_ref(), cgroup);
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
        c.arg(format!("--datadir={}", at.datadir.display()));
        c.arg(format!("--port={}", at.port));
        c.arg("--bind-address=127.0.0.1");
        c.arg(format!(
            "--socket={}",
            at.rundir.join("mysqld.sock").display()
        ));
        c.arg(format!(
            "--pid-file={}",
            at.rundir.join("mysqld.pid").display()
        ));
        c.arg(format!("--log-error={}", at.log.display()));
        c.args(facts(plan.server.engine).server_options);
        if plan.rocksdb {
            // Loaded at start-up: INSTALL SONAME at run time crashes MariaDB 10.11.
            c.arg("--plugin-load-add=ha_rocksdb.so");
        }
        for opt in configs::mycnf_options(&plan.config_text) {
            c.arg(opt);
        }
        if let Some(d) = &l.working_dir {
            c.current_dir(d);
        }
        c
    }

    fn answers(&self, _plan: &Plan, r: &Running) -> bool {
        r.socket.exists() && std::net::TcpStream::connect(("127.0.0.1", r.port)).is_ok()
    }

    /// The error tells a refusal (the server's ERR packet) from a server that is not answering
    /// yet.
    fn login(&self, ep: &Endpoint, timeouts: Timeouts) -> Result<(), Refusal> {
        match mysql_auth::connect(ep, timeouts) {
            Ok(_) => Ok(()),
            Err(e @ WireError::Server(_)) => Err(Refusal::Refused(e.to_string())),
            Err(e) => Err(Refusal::NotYet(e.to_string())),
        }
    }

    fn client_file(&self, pw: &Password, reach: &Reach) -> ClientFile {
        secret::client_cnf(pw, reach)
    }

    /// The option file holds the user, password, address and port; read alone, so no
    /// /etc/mysql file is mixed in. Each build ships its own client under its own name.
    fn connect_command(
        &self,
        engine: Engine,
        client_file: &str,
        _reach: &Reach,
        database: &str,
    ) -> String {
        format!(
            "{} --defaults-file={client_file} {database}",
            engine.server().map_or("", |f| f.client_program),
        )
    }

    fn builtin_names(&self) -> &'static [&'static str] {
        &["default", "binlog"]
    }

    fn builtin(&self, engine: Engine, rocksdb: bool, name: &str) -> Option<String> {
        match name {
            "default" => Some(default(engine, rocksdb)),
            // MySQL's own default: the binary log on and synced at every commit, as a replica
            // source runs; `default` turns it off so MySQL and MariaDB are compared alike.
            "binlog" => Some(
                default(engine, rocksdb).replace("skip_log_bin\n", "log_bin\nsync_binlog = 1\n"),
            ),
            _ => None,
        }
    }

    fn fit_to_cap(&self, engine: Engine, rocksdb: bool, text: String, fit: &Fit) -> String {
        if rocksdb {
            let text = fit.size(text, "rocksdb_block_cache_size", 1 << 30, 4);
            return fit.size(text, "innodb_buffer_pool_size", 64 << 20, 8);
        }
        let f = facts(engine);
        let text = fit.size(
            text,
            "innodb_buffer_pool_size",
            1 << 30,
            f.pool_share_under_cap,
        );
        match f.max_connections_under_cap {
            Some(n) => fit.count(text, "max_connections", n),
            None => text,
        }
    }

    fn size_unit(&self) -> &'static str {
        "M"
    }

    fn owned_setting(&self, text: &str) -> Option<String> {
        configs::mycnf_owned(text)
    }

    fn default_max_connections(&self) -> u64 {
        151
    }

    /// A bare switch (`skip-innodb`) or `name=value`.
    fn setting_line(&self, name: &str, value: &str) -> String {
        if value.is_empty() {
            name.to_string()
        } else {
            format!("{name}={value}")
        }
    }
}

/// The install step's command line, and the init file it reads (kept until it has ended).
fn init_command(
    plan: &Plan,
    init: MySqlInit,
    datadir: &Path,
    rundir: &Path,
    pw: &Password,
) -> anyhow::Result<(Command, Option<Scratch>)> {
    let u = plan.user.as_ref();
    let mut c = process::command(&plan.layout.init, u);
    match init {
        // The init file gives root its password before the data directory ever takes a
        // connection (the install script's comes with the first start: `first_start_file`).
        MySqlInit::Initialize => {
            let f = Scratch::write(rundir, "init.sql", &secret::mysql_initialize_sql(pw), u)?;
            c.args(["--no-defaults", "--initialize-insecure"]);
            c.arg(format!("--init-file={}", f.path().display()));
            c.arg(format!("--basedir={}", plan.layout.basedir.display()));
            c.arg(format!("--datadir={}", datadir.display()));
            c.arg(format!("--log-error={}", rundir.join("init.log").display()));
            c.args(configs::mycnf_init_options(&plan.config_text));
            Ok((c, Some(f)))
        }
        MySqlInit::InstallScript => {
            c.arg("--no-defaults");
            c.arg(format!("--basedir={}", plan.layout.basedir.display()));
            c.arg(format!("--datadir={}", datadir.display()));
            c.args(["--auth-root-authentication-method=normal", "--skip-test-db"]);
            // mariadb-install-db hands options it does not know to its bootstrap server.
            c.args(configs::mycnf_init_options(&plan.config_text));
            if let Some(d) = &plan.layout.working_dir {
                c.current_dir(d);
            }
            Ok((c, None))
        }
    }
}
