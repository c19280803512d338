//! The PostgreSQL family's flavor: initdb with the instance's password, `postgres -D` on
//! loopback and a private socket directory, postgresql.conf's syntax.

use std::ffi::CString;
use std::path::{Path, PathBuf};
use std::process::Command;

use super::configs::{self, Fit};
use super::flavor::{Flavor, Places, Refusal};
use super::layout::{self, DebianLayout, Layout};
use super::process::{self, User};
use super::secret::{self, ClientFile, Password, Reach, Scratch};
use super::{probe, Plan, Running};
use crate::dbms::{Endpoint, Timeouts};
use crate::engines::Engine;

#[derive(Debug)]
pub struct Postgres;

/// The built-in `default` config.
const DEFAULT: &str = "\
shared_buffers = 512MB
max_connections = 200
fsync = on
synchronous_commit = on
full_page_writes = on
wal_compression = off
max_wal_size = 4GB
min_wal_size = 1GB
checkpoint_timeout = 15min
autovacuum = on
";

impl Flavor for Postgres {
    fn find_layout(&self, _engine: Engine, path: Option<&Path>) -> anyhow::Result<Layout> {
        layout::find_postgres(path)
    }

    fn debian_layout(&self, _engine: Engine, version: &str) -> DebianLayout {
        let major = version.split('.').next().unwrap_or_default();
        let basedir = format!("usr/lib/postgresql/{major}");
        DebianLayout {
            server: format!("{basedir}/bin/postgres"),
            basedir,
            version_text: format!("PostgreSQL) {version}"),
            note: Some("JIT is unavailable: the LLVM libraries it loads are not fetched"),
        }
    }

    fn version_parts(&self) -> usize {
        2
    }

    fn initialise(
        &self,
        plan: &Plan,
        datadir: &Path,
        rundir: &Path,
        pw: &Password,
    ) -> anyhow::Result<()> {
        let u = plan.user.as_ref();
        // initdb reads the superuser's password from a file the server's user can read; it is
        // gone once initdb ended. Every login, over TCP and over the socket, needs it.
        let pwfile = Scratch::write(rundir, "initdb.pw", &format!("{}\n", pw.as_str()), u)?;
        let mut c = process::command(&plan.layout.init, u);
        c.arg("-D")
            .arg(datadir)
            .args([
                "-U",
                plan.server.facts.admin_user,
                "--auth=scram-sha-256",
                "-E",
                "UTF8",
                "--no-locale",
            ])
            .arg(format!("--pwfile={}", pwfile.path().display()))
            .args(init_options(plan));
        process::run_to_end(c, &plan.short_run("initdb", 120, rundir))?;
        drop(pwfile);
        // The named config goes at the end of postgresql.conf, so it overrides initdb's lines.
        let text = format!(
            "\n# ---- dbperf config {} ----\n{}\n",
            plan.config_name, plan.config_text
        );
        append_to_server_file(&datadir.join("postgresql.conf"), u, &text)
    }

    fn retries_initialise(&self, _engine: Engine) -> bool {
        false
    }

    fn takes_init_options(&self) -> bool {
        true
    }

    fn init_record(&self, plan: &Plan) -> Option<Vec<String>> {
        Some(init_options(plan))
    }

    fn socket(&self, rundir: &Path, port: u16) -> PathBuf {
        rundir.join(format!(".s.PGSQL.{port}"))
    }

    fn first_start_file(
        &self,
        _plan: &Plan,
        _rundir: &Path,
        _pw: &Password,
    ) -> anyhow::Result<Option<Scratch>> {
        Ok(None)
    }

    fn command(&self, plan: &Plan, at: &Places, cgroup: Option<CString>) -> Command {
        let mut c = process::command_in(&plan.layout.server, plan.user.as_ref(), cgroup);
        c.arg("-D")
            .arg(at.datadir)
            .arg("-p")
            .arg(at.port.to_string())
            .arg("-k")
            .arg(at.rundir)
            .args(["-c", "listen_addresses=127.0.0.1"]);
        c
    }

    fn answers(&self, plan: &Plan, r: &Running) -> bool {
        crate::dbms::postgres::ping(&r.endpoint(true, plan.server.facts.admin_database))
    }

    fn login(&self, ep: &Endpoint, timeouts: Timeouts) -> Result<(), Refusal> {
        crate::dbms::postgres::PgConn::connect_with(ep, timeouts)
            .map(|_| ())
            .map_err(|e| Refusal::Refused(e.message))
    }

    fn client_file(&self, pw: &Password, reach: &Reach) -> ClientFile {
        secret::pgpass(pw, reach)
    }

    fn connect_command(
        &self,
        engine: Engine,
        client_file: &str,
        reach: &Reach,
        database: &str,
    ) -> String {
        format!(
            "PGPASSFILE={client_file} {} -h 127.0.0.1 -p {} -U {} {database}",
            client_program(engine),
            reach.port,
            reach.user,
        )
    }

    fn builtin_names(&self) -> &'static [&'static str] {
        &["default"]
    }

    fn builtin(&self, _engine: Engine, _rocksdb: bool, name: &str) -> Option<String> {
        (name == "default").then(|| DEFAULT.to_string())
    }

    fn fit_to_cap(&self, _engine: Engine, _rocksdb: bool, text: String, fit: &Fit) -> String {
        fit.size(text, "shared_buffers", 512 << 20, 4)
    }

    fn size_unit(&self) -> &'static str {
        "MB"
    }

    fn owned_setting(&self, text: &str) -> Option<String> {
        configs::postgres_owned(text)
    }

    fn default_max_connections(&self) -> u64 {
        100
    }

    fn setting_line(&self, name: &str, value: &str) -> String {
        format!("{name} = {value}")
    }
}

fn client_program(engine: Engine) -> &'static str {
    engine.server().map_or("", |f| f.client_program)
}

/// The initdb options a data directory gets: the config's, or else data checksums pinned off.
/// PostgreSQL 18 turned them on by default, so without the pin 17 and 18 would be compared
/// with and without the checksum work; versions before 18 have them off and no option to say
/// so.
fn init_options(plan: &Plan) -> Vec<String> {
    if let Some(o) = &plan.initdb {
        return o.clone();
    }
    let help = probe::ask(
        &plan.layout.init,
        &["--help"],
        plan.user.as_ref(),
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

/// Appends `text` to a file the server's own tool made (initdb's postgresql.conf) in a
/// directory the server user owns: never through a link or a second name, and only to a file of
/// the server user's (or, without one, of this user's).
fn append_to_server_file(path: &Path, user: Option<&User>, text: &str) -> anyhow::Result<()> {
    use std::io::Write;
    use std::os::unix::fs::{MetadataExt, OpenOptionsExt};
    let cannot =
        |e: &dyn std::fmt::Display| anyhow::anyhow!("cannot append to {}: {e}", path.display());
    let mut f = std::fs::OpenOptions::new()
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
