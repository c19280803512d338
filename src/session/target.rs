//! A target's lifecycle: checked before anything runs, then per cell opened (or its server
//! started), its run.json begun and ended, its server stopped.

use std::path::{Path, PathBuf};
use std::sync::atomic::AtomicBool;
use std::sync::Arc;
use std::time::{Duration, Instant};

use super::events::{Events, Note};
use super::suite::{round3, Suite};
use crate::dbms::{self, Dbms, Endpoint, Lost, Timeouts};
use crate::error::bad_input;
use crate::host::monitor::Monitor;
use crate::results::{CampaignCell, RunFile, RunStatus, ServerRecord, TargetInfo, Tool, SCHEMA};
use crate::server;
use crate::spec::target::Target;

/// How a target is reached, decided before the first cell runs.
pub enum Access {
    /// Embedded: opened afresh in each cell's work directory.
    Embedded,
    /// A server dbperf does not manage, already checked to answer.
    External(Arc<dyn Dbms>),
    /// A server dbperf starts for each cell.
    Managed(Box<server::Plan>),
}

pub struct Checked {
    pub target: Target,
    pub access: Access,
}

/// What checking targets needs from the run.
pub struct CheckCx<'a> {
    pub suite: &'a dyn Suite,
    pub server_user: Option<&'a str>,
    pub server_start_timeout: Duration,
    pub timeouts: Timeouts,
    pub interrupt: &'a Arc<AtomicBool>,
    /// Where the first cell of each embedded target will keep its data (to check tables that
    /// must exist already).
    pub embedded_dir: &'a dyn Fn(&Target) -> PathBuf,
}

/// Everything a user can get wrong about the targets, checked before the first step runs.
pub fn check(targets: &[Target], cx: &CheckCx) -> anyhow::Result<Vec<Checked>> {
    let mut out = Vec::new();
    let mut user = None;
    for t in targets {
        if let Some(ext) = &t.external {
            let dbms = external_dbms(t, &ext.endpoint, cx.timeouts.clone())?;
            // Fail now, with one sentence, if the server cannot be reached (bad input) or
            // misbehaves (a failure of the server, exit 1), as the error's kind says.
            dbms.connect().map_err(|e| {
                let m = format!("target {}: {e:#}", t.name);
                if dbms::lost_of(e.as_ref()) == Some(Lost::ServerFault) {
                    anyhow::anyhow!(m)
                } else {
                    crate::error::BadInput(m).into()
                }
            })?;
            cx.suite.check_tables(&dbms)?;
            out.push(Checked {
                target: t.clone(),
                access: Access::External(dbms),
            });
            continue;
        }
        if t.is_server() {
            if let Some(why) = cx.suite.needs_existing_tables() {
                return bad_input(format!(
                    "target {} is a server dbperf starts empty, so {why}",
                    t.name
                ));
            }
            if user.is_none() {
                user = Some(server::process::server_user(cx.server_user)?);
            }
            let plan = server::Plan::for_target(
                t.server_wanted(),
                user.clone().flatten(),
                cx.server_start_timeout,
                Some(cx.interrupt.clone()),
            )?;
            let most = server::configs::max_connections(plan.server, &plan.config_text);
            let needs = cx.suite.connections();
            if needs > most {
                return bad_input(format!(
                    "target {}: the {} suite needs up to {needs} connections at once, more \
                     than the max_connections {most} its config allows; give fewer clients or \
                     threads, or a config with max_connections = {needs} or more",
                    t.name,
                    cx.suite.suite()
                ));
            }
            out.push(Checked {
                target: t.clone(),
                access: Access::Managed(Box::new(plan)),
            });
            continue;
        }
        // Opening checks the config and touches nothing on disk.
        let dir = (cx.embedded_dir)(t);
        let dbms = dbms::open_embedded(&t.embedded_config(), &dir, cx.timeouts.clone())?;
        if cx.suite.needs_existing_tables().is_some() {
            // A run that starts after the load continues on an existing database; where there is
            // none, connecting makes an empty one just to say which table is missing.
            let made = !dir.exists();
            if made {
                crate::safe_fs::make_dir_all(&dir, crate::safe_fs::Also::Nobody)?;
            }
            let checked = cx.suite.check_tables(&dbms);
            if made {
                let _ = std::fs::remove_dir_all(&dir);
            }
            checked?;
        }
        out.push(Checked {
            target: t.clone(),
            access: Access::Embedded,
        });
    }
    Ok(out)
}

/// The adapter for a server dbperf does not manage (its config file is unknown to dbperf; the
/// effective settings are still read from the server).
fn external_dbms(t: &Target, ep: &Endpoint, timeouts: Timeouts) -> anyhow::Result<Arc<dyn Dbms>> {
    dbms::ServerAdapter {
        engine: t.engine,
        rocksdb: t.rocksdb(),
        config_name: &t.config,
        config_text: "",
        timeouts,
    }
    .open(ep)
}

/// A managed server that is up, with the benchmark database created and the adapter open.
pub struct Started {
    pub running: server::Running,
    pub dbms: Arc<dyn Dbms>,
    pub record: ServerRecord,
}

/// How a managed server is started and reached.
pub struct StartCx<'a> {
    pub socket: bool,
    pub timeouts: Timeouts,
    pub events: &'a mut dyn Events,
    pub target: &'a str,
}

/// Starts a managed server in `dir`, creates the benchmark database and opens the adapter.
pub fn start_server(plan: &server::Plan, dir: &Path, cx: StartCx) -> anyhow::Result<Started> {
    let StartCx {
        socket,
        timeouts,
        events,
        target,
    } = cx;
    let started = Instant::now();
    let running = plan.start(dir)?;
    let start_s = started.elapsed().as_secs_f64();
    let ep = running.endpoint(socket, server::DATABASE);
    let adapter = dbms::ServerAdapter {
        engine: plan.server.engine,
        rocksdb: plan.rocksdb,
        config_name: &plan.config_name,
        config_text: &plan.config_text,
        timeouts,
    };
    let admin = running.endpoint(socket, plan.server.facts.admin_database);
    // A server the kernel killed for going over its cap answered once and then closed the
    // connection: the cap is the first cause, read before the drop removes its cgroup.
    let oom = |e: anyhow::Error| match running.oom_killed() {
        Some(o) => e.context(o),
        None => e,
    };
    dbms::create_database(
        adapter.engine,
        &admin,
        server::DATABASE,
        adapter.timeouts.clone(),
    )
    .map_err(oom)?;
    let dbms = adapter.open(&ep).map_err(oom)?;
    events.note(
        target,
        &Note::ServerStarted {
            binary: plan.layout.server.display().to_string(),
            pid: running.pid,
            start_s,
            connection: ep.describe(),
        },
    );
    let record = ServerRecord {
        managed: true,
        binary: Some(plan.layout.server.display().to_string()),
        datadir: Some(running.datadir.display().to_string()),
        os_user: plan.user.as_ref().map(|u| u.name.clone()),
        pid: Some(running.pid),
        connection: ep.describe(),
        start_s: Some(round3(start_s)),
        stopped: None,
        initdb: plan.init_record(),
        memory_cap: plan
            .memory
            .as_ref()
            .map(|m| crate::results::MemoryCapRecord {
                bytes: m.bytes,
                enforced_by: m.controller.describe(),
            }),
    };
    Ok(Started {
        running,
        dbms,
        record,
    })
}

/// Whether a server ends within a second. A crashed server's sockets close while it exits, a
/// moment before it is a zombie: the step sees the lost connection first (found beside two
/// busy processes, where "exited during the run" was recorded as a clean stop).
fn ends_soon(running: &mut server::Running) -> bool {
    let until = Instant::now() + std::time::Duration::from_secs(1);
    while Instant::now() < until {
        if !running.alive() {
            return true;
        }
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    false
}

/// The record of an external server: how it was reached.
pub fn external_record(t: &Target) -> Option<ServerRecord> {
    t.external.as_ref().map(|e| ServerRecord {
        managed: false,
        binary: None,
        datadir: None,
        os_user: None,
        pid: None,
        connection: e.endpoint.describe(),
        start_s: None,
        stopped: None,
        initdb: None,
        memory_cap: None,
    })
}

/// What a target's run.json starts from.
pub struct RunFileCx<'a> {
    pub suite: &'a dyn Suite,
    pub command_line: &'a [String],
    pub campaign: Option<CampaignCell>,
    /// The cell's values of the run's swept axes.
    pub axes: std::collections::BTreeMap<String, String>,
}

pub fn new_run_file(
    target: &Target,
    cx: &RunFileCx,
    host: serde_json::Value,
) -> anyhow::Result<RunFile> {
    Ok(RunFile {
        schema: SCHEMA,
        tool: Tool {
            name: "dbperf".into(),
            version: env!("CARGO_PKG_VERSION").into(),
            git_revision: crate::git_revision().into(),
        },
        command_line: cx.command_line.to_vec(),
        target: TargetInfo {
            name: target.name.clone(),
            engine: target.engine.name().into(),
            version: "unknown (not started)".into(),
            config_name: target.config.clone(),
            config_text: String::new(),
            config_source: None,
            server: None,
            build: target.build.clone(),
        },
        suite: cx.suite.suite(),
        preset: cx.suite.preset().into(),
        parameters: cx.suite.parameters()?,
        steps_planned: cx.suite.step_names(),
        host,
        started_at: super::now_rfc3339(),
        ended_at: None,
        status: RunStatus::Running,
        failed_step: None,
        error: None,
        client_peak_rss_kb: None,
        warnings: Vec::new(),
        campaign: cx.campaign.clone(),
        axes: cx.axes.clone(),
    })
}

/// A target in progress: its run file and the host monitor.
pub struct Begun {
    pub run: RunFile,
    pub monitor: Monitor,
    /// Where the managed server's log ended when the last step began: a server that exits
    /// during a step is explained by what it wrote since.
    pub log_from: Option<u64>,
}

/// Starts watching the host and fills the run file from the open target.
pub fn begin(
    target: &Target,
    dbms: &Arc<dyn Dbms>,
    record: Option<ServerRecord>,
    data_dirs: Vec<PathBuf>,
    calibrate: bool,
    cx: &RunFileCx,
    events: &mut dyn Events,
) -> anyhow::Result<Begun> {
    crate::host::reset_own_peak_rss(&Default::default());
    let monitor = Monitor::start(Default::default(), data_dirs, calibrate);
    events.note(&target.name, &Note::Host(monitor.summary()));
    let host = serde_json::to_value(monitor.fingerprint())?;
    let mut run = new_run_file(target, cx, host)?;
    run.target.version = dbms.version()?;
    run.target.config_name = dbms.config_name().into();
    run.target.config_text = dbms.config_text()?;
    run.target.server = record;
    Ok(Begun {
        run,
        monitor,
        log_from: None,
    })
}

/// Stops a managed server, records how it ended and what the host did during the run.
pub fn end(
    begun: Begun,
    status: RunStatus,
    running: Option<&mut server::Running>,
    events: &mut dyn Events,
) -> anyhow::Result<RunFile> {
    let Begun {
        mut run,
        monitor,
        log_from,
    } = begun;
    if let Some(running) = running {
        let died = !running.alive() || (status == RunStatus::Failed && ends_soon(running));
        // Read before the stop removes the cap's cgroup: a failure's first cause.
        if let Some(oom) = running.oom_killed() {
            match run.error.as_mut() {
                Some(e) if status == RunStatus::Failed => *e = format!("{oom}; {e}"),
                _ => run.warnings.push(oom),
            }
        }
        let how = running.stop();
        if died && status == RunStatus::Failed {
            // What it wrote during the step it died in, not its start-up lines.
            let tail = match log_from.and_then(|o| running.log_since(o)) {
                Some(p) if !p.text.trim().is_empty() => super::server_log::quote(&p),
                Some(_) => "(it wrote nothing to its log during the step)".to_string(),
                None => running.log_tail(15),
            };
            events.note(
                &run.target.name,
                &Note::ServerExited {
                    log_tail: tail.clone(),
                },
            );
            if let Some(e) = run.error.as_mut() {
                e.push_str(&format!(" (the server had exited; its log ends:\n{tail})"));
            }
        }
        if let Some(r) = run.target.server.as_mut() {
            r.stopped = Some(if died {
                format!("exited during the run; {how}")
            } else {
                how
            });
        }
    }
    let (host_record, host_warnings) = monitor.finish();
    if let Some(c) = &host_record.calibration {
        events.note(
            &run.target.name,
            &Note::Calibration {
                before_ms: c.before_ms,
                after_ms: c.after_ms,
                drift_pct: c.drift_pct,
            },
        );
    }
    for w in &host_warnings {
        events.note(&run.target.name, &Note::HostWarning(w.clone()));
    }
    if let Some(h) = run.host.as_object_mut() {
        h.insert("during_run".into(), serde_json::to_value(&host_record)?);
    }
    run.warnings = host_warnings;
    run.status = status;
    run.ended_at = Some(super::now_rfc3339());
    run.client_peak_rss_kb = crate::host::own_peak_rss_kb(&Default::default());
    Ok(run)
}
