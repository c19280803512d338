//! `dbperf server start|stop`: a managed instance kept running for a person to look at, with
//! the command to connect, and stopped again by pid.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use clap::{Args, Subcommand};
use serde::{Deserialize, Serialize};

use crate::error::bad_input;
use crate::server::{self, process};
use crate::spec;

#[derive(Subcommand, Debug)]
pub enum ServerCommand {
    /// Initialise and start a private instance of a target, print how to connect, leave it running.
    Start(ServerArgs),
    /// Stop an instance started with `dbperf server start` (by its pid), and remove it with --remove.
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
    /// OS user to run the server as when dbperf runs as root [default: dbperf].
    #[arg(long, value_name = "USER")]
    pub server_user: Option<String>,
    /// Seconds the server may take to start answering.
    #[arg(long, default_value_t = 120, value_name = "SECONDS")]
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
    pub connect: String,
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
    let t = file.resolve(&a.target, &[])?;
    if !t.is_server() || t.external.is_some() {
        return bad_input(format!(
            "{} is not a server dbperf manages (sqlite is embedded; external servers run already)",
            t.name
        ));
    }
    let dir = instance_dir(&a.dir, &t.name);
    if dir.join(STATE).exists() {
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
    let plan = server::Plan::for_target(
        &t,
        process::server_user(a.server_user.as_deref())?,
        Duration::from_secs(a.server_start_timeout),
        None,
    )?;
    let kind = plan.kind;
    if std::fs::create_dir_all(&dir).is_err() {
        return bad_input(format!("cannot create {}", dir.display()));
    }
    let dir = dir.canonicalize()?;
    let running = plan.start(&dir)?;
    let ep = running.endpoint(false, server::DATABASE);
    match kind {
        server::Kind::Postgres => crate::dbms::postgres::ensure_database(
            &running.endpoint(false, "postgres"),
            server::DATABASE,
        )?,
        _ => {
            let admin = crate::dbms::mysql::Mysql::new(
                running.endpoint(false, "mysql"),
                if kind == server::Kind::MySql {
                    crate::dbms::mysql::Flavor::MySql
                } else {
                    crate::dbms::mysql::Flavor::MariaDb
                },
                crate::dbms::mysql::Storage::InnoDb,
                "",
                "",
            );
            use crate::dbms::Dbms;
            admin.connect()?.execute_batch(&format!(
                "CREATE DATABASE IF NOT EXISTS {}",
                server::DATABASE
            ))?;
        }
    }
    let connect = match kind {
        server::Kind::Postgres => format!(
            "psql -h 127.0.0.1 -p {} -U {} {}",
            running.port,
            ep.user,
            server::DATABASE
        ),
        _ => format!(
            "mariadb --no-defaults -h 127.0.0.1 -P {} -u root {}",
            running.port,
            server::DATABASE
        ),
    };
    let state = ServerState {
        schema: crate::results::SCHEMA,
        target: t.name.clone(),
        engine: kind.name().into(),
        pid: running.pid,
        port: running.port,
        socket: running.socket.display().to_string(),
        datadir: running.datadir.display().to_string(),
        log: running.log.display().to_string(),
        connect: connect.clone(),
    };
    crate::results::write_json_atomic(&dir.join(STATE), &state)?;
    out!(
        "{} is running: pid {}, port {} on 127.0.0.1, socket {}",
        t.name,
        running.pid,
        running.port,
        state.socket
    );
    out!("connect:  {connect}");
    out!("log:      {}", state.log);
    out!(
        "stop:     dbperf server stop {} --dir {}",
        a.target,
        dir.display()
    );
    running.detach();
    Ok(0)
}

fn alive(pid: u32) -> bool {
    // SAFETY: signal 0 only checks that the process exists.
    unsafe { libc::kill(pid as i32, 0) == 0 }
}

fn stop(a: ServerStopArgs) -> anyhow::Result<i32> {
    let file = spec::config_file::load(a.config_file.as_deref())?;
    let name = file
        .resolve(&a.target, &[])
        .map(|t| t.name)
        .unwrap_or_else(|_| a.target.clone());
    let dir = instance_dir(&a.dir, &name);
    let path = dir.join(STATE);
    let state: ServerState = match std::fs::read_to_string(&path) {
        Ok(t) => serde_json::from_str(&t)
            .map_err(|e| anyhow::anyhow!("{} is damaged: {e}", path.display()))?,
        Err(_) => {
            return bad_input(format!(
                "no instance in {} (no {STATE}); was it started with dbperf server start?",
                dir.display()
            ))
        }
    };
    let graceful = if state.engine == "postgres" {
        libc::SIGINT
    } else {
        libc::SIGTERM
    };
    let start = Instant::now();
    if alive(state.pid) {
        process::signal(state.pid, graceful);
        while alive(state.pid) && start.elapsed() < Duration::from_secs(120) {
            std::thread::sleep(Duration::from_millis(50));
        }
        if alive(state.pid) {
            process::signal_group(state.pid, libc::SIGKILL);
        }
        process::signal_group(state.pid, libc::SIGKILL);
        out!(
            "stopped {} (pid {}) in {:.1} s",
            state.target,
            state.pid,
            start.elapsed().as_secs_f64()
        );
    } else {
        out!("{} (pid {}) was not running", state.target, state.pid);
    }
    let _ = std::fs::remove_file(&path);
    if a.remove {
        remove(&dir)?;
    }
    Ok(0)
}

fn remove(dir: &Path) -> anyhow::Result<()> {
    std::fs::remove_dir_all(dir)
        .map_err(|e| anyhow::anyhow!("cannot remove {}: {e}", dir.display()))
}
