//! One cell: its target made ready (an embedded database opened, an external server reached,
//! a managed server started on fresh data), its steps measured one after another with each
//! step's result written as it ends, and the target ended (its server stopped).

use std::path::{Path, PathBuf};
use std::sync::atomic::Ordering;
use std::sync::Arc;

use super::ledger::Ledger;
use super::measure::{measure, CostSources, MeasureCx};
use super::suite::{FinishCx, Steps};
use super::target::{self, Access, Checked};
use super::{events, mark, now_rfc3339, server_log, Loop, Note, Suite};
use crate::dbms::{self, Dbms, Fault};
use crate::results::campaign::ServerLease;
use crate::results::{RunFile, RunStatus, ServerRecord, Status, StepFile};
use crate::server::Running;

pub(super) struct CellResult {
    pub status: RunStatus,
    pub steps: Vec<StepFile>,
    pub error: Option<String>,
}

impl CellResult {
    pub(super) fn ended(status: RunStatus, error: String) -> CellResult {
        CellResult {
            status,
            steps: Vec::new(),
            error: Some(error),
        }
    }
}

/// What a cell runs: which of the ledger's cells, on what, where.
pub(super) struct Cell<'c> {
    pub index: usize,
    pub checked: &'c Checked,
    pub suite: &'c dyn Suite,
    /// Where its databases live.
    pub work: &'c Path,
}

/// The cell's target, ready for its steps.
struct Opened {
    dbms: Arc<dyn Dbms>,
    /// How the server was made, for run.json (None: embedded).
    record: Option<ServerRecord>,
    /// The managed server dbperf started, stopped when the cell ends.
    running: Option<Running>,
}

/// The target ended before its steps: failed, or interrupted (Ctrl-C while its server was being
/// made), which a resume runs again like any interrupted cell.
struct Early {
    error: String,
    status: RunStatus,
}

fn failed(error: String) -> Early {
    Early {
        error,
        status: RunStatus::Failed,
    }
}

impl Loop<'_> {
    pub(super) fn run_cell(&mut self, ledger: &mut Ledger, cell: &Cell) -> CellResult {
        let t = &cell.checked.target;
        let cx = target::RunFileCx {
            suite: cell.suite,
            command_line: &self.req.invocation.args,
            campaign: Some(ledger.campaign_cell(cell.index)),
            axes: ledger.journal.cells[cell.index].axes.clone(),
        };
        let tdir = self.req.out.join(&ledger.journal.cells[cell.index].id);
        let steps_dir = tdir.join("steps");
        self.events.note(
            &t.name,
            &Note::TargetBegins {
                steps: cell.suite.step_names(),
            },
        );
        if let Err(e) = crate::safe_fs::make_dir_all(&steps_dir, crate::safe_fs::Also::Nobody) {
            self.write_failed(format!("{}: {e}", steps_dir.display()));
            let error = format!("cannot create {}: {e:#}", steps_dir.display());
            return CellResult::ended(RunStatus::Failed, error);
        }
        let opened = match self.open(ledger, cell) {
            Ok(o) => o,
            Err(early) => return self.end_early(cell, &cx, &tdir, early),
        };
        let mut running = opened.running;
        let dbms = self.req.ignore_errors.apply(opened.dbms);
        let begun = target::begin(
            t,
            &dbms,
            opened.record,
            vec![cell.work.to_path_buf()],
            self.req.calibrate,
            &cx,
            self.events,
        );
        let mut begun = match begun {
            Ok(b) => b,
            Err(e) => {
                if let Some(r) = running.as_mut() {
                    r.stop();
                }
                let early = failed(format!("{e:#}"));
                return self.end_early(cell, &cx, &tdir, early);
            }
        };
        if let Access::Managed(plan) = &cell.checked.access {
            begun.run.target.config_source = plan.config_source.clone();
        }
        self.write(&tdir.join("run.json"), &begun.run);
        let cost = cost_sources(&dbms, running.as_ref(), cell);
        let mut steps = cell.suite.on(dbms.clone());
        let mut on = OnSteps {
            target: &t.name,
            steps_dir: &steps_dir,
            cost: &cost,
            running: running.as_ref(),
        };
        let (status, files) = self.run_steps(&mut *steps, &mut begun, &mut on);
        drop(steps);
        let run: Option<RunFile> = match target::end(begun, status, running.as_mut(), self.events) {
            Ok(r) => Some(r),
            Err(e) => {
                self.events
                    .note(&t.name, &Note::Warning(format!("ending the target: {e:#}")));
                None
            }
        };
        drop(running);
        ledger.release(cell.index);
        if let Some(run) = &run {
            self.write(&tdir.join("run.json"), run);
        }
        self.events.target_ends(&events::TargetEnds {
            target: t.name.clone(),
            status,
        });
        CellResult {
            status,
            steps: files,
            error: run.and_then(|r| r.error),
        }
    }

    /// The cell's target made ready: its work directory, then the database or server.
    fn open(&mut self, ledger: &mut Ledger, cell: &Cell) -> Result<Opened, Early> {
        let t = &cell.checked.target;
        if let Err(e) = crate::safe_fs::make_dir_all(cell.work, crate::safe_fs::Also::Nobody) {
            let error = format!("cannot create {}: {e:#}", cell.work.display());
            return Err(failed(error));
        }
        match &cell.checked.access {
            Access::Embedded => {
                match dbms::open_embedded(&t.embedded_config(), cell.work, self.req.timeouts()) {
                    Ok(dbms) => Ok(Opened {
                        dbms,
                        record: None,
                        running: None,
                    }),
                    Err(e) => Err(failed(format!("{e:#}"))),
                }
            }
            Access::External(d) => Ok(Opened {
                dbms: d.clone(),
                record: target::external_record(t),
                running: None,
            }),
            Access::Managed(plan) => self.start_server(ledger, cell, plan),
        }
    }

    /// A managed server started on fresh data: what an earlier cell left in a kept work
    /// directory (--work-dir, or a killed attempt's) is replaced. The journal records it at
    /// once, so a resume after dbperf is killed stops it.
    fn start_server(
        &mut self,
        ledger: &mut Ledger,
        cell: &Cell,
        plan: &crate::server::Plan,
    ) -> Result<Opened, Early> {
        let instance = cell.work.join("server");
        if let Err(e) = crate::server::clear_previous(&instance) {
            return Err(failed(format!("{e:#}")));
        }
        let started = target::start_server(
            plan,
            &instance,
            target::StartCx {
                socket: self.req.socket,
                timeouts: self.req.timeouts(),
                events: self.events,
                target: &cell.checked.target.name,
            },
        );
        match started {
            Ok(s) => {
                if let Some(process) = mark::of(s.running.pid) {
                    let datadir = s.running.datadir.display().to_string();
                    ledger.lease(cell.index, ServerLease { process, datadir });
                    self.save(&ledger.journal);
                }
                Ok(Opened {
                    dbms: s.dbms,
                    record: Some(s.record),
                    running: Some(s.running),
                })
            }
            // A wait cut short by the stop flag fails with the server's words, not as
            // `Interrupted`: the flag decides too.
            Err(e)
                if crate::server::process::is_interrupted(&e)
                    || self.req.interrupt.load(Ordering::SeqCst) =>
            {
                Err(Early {
                    error: format!("server start-up interrupted: {e:#}"),
                    status: RunStatus::Interrupted,
                })
            }
            Err(e) => Err(failed(format!("server did not start: {e:#}"))),
        }
    }

    /// A target that ended before its steps still gets a run.json saying why.
    fn end_early(
        &mut self,
        cell: &Cell,
        cx: &target::RunFileCx,
        tdir: &Path,
        early: Early,
    ) -> CellResult {
        let t = &cell.checked.target;
        self.events
            .note(&t.name, &Note::TargetFailed(early.error.clone()));
        let host = crate::host::fingerprint(&Default::default(), &[cell.work.to_path_buf()]);
        let host = serde_json::to_value(host).unwrap_or_default();
        if let Ok(mut run) = target::new_run_file(t, cx, host) {
            run.status = early.status;
            run.error = Some(early.error.clone());
            run.ended_at = Some(now_rfc3339());
            if let Access::Managed(plan) = &cell.checked.access {
                run.target.config_text = plan.config_text.clone();
                run.target.config_source = plan.config_source.clone();
            }
            self.write(&tdir.join("run.json"), &run);
        }
        CellResult::ended(early.status, early.error)
    }

    /// Every step in order until one fails, is interrupted or cannot be written.
    fn run_steps(
        &mut self,
        steps: &mut dyn Steps,
        begun: &mut target::Begun,
        on: &mut OnSteps,
    ) -> (RunStatus, Vec<StepFile>) {
        let mut files = Vec::new();
        for i in 0..steps.count() {
            if self.req.interrupt.load(Ordering::SeqCst) {
                return (RunStatus::Interrupted, files);
            }
            let sf = self.one_step(steps, i, begun, on);
            let written = self.write(&on.steps_dir.join(format!("{}.json", sf.step)), &sf);
            self.events.step_ends(on.target, &sf);
            let step_status = sf.status;
            if step_status == Status::Failed {
                begun.run.failed_step = Some(sf.step.clone());
                begun.run.error = sf.error.clone();
            }
            files.push(sf);
            match step_status {
                Status::Failed => return (RunStatus::Failed, files),
                Status::Interrupted => return (RunStatus::Interrupted, files),
                Status::Ok if !written => {
                    // Results that cannot be written are not worth measuring further.
                    begun.run.error = Some("a step's result could not be written".into());
                    return (RunStatus::Failed, files);
                }
                Status::Ok => {}
            }
        }
        (RunStatus::Ok, files)
    }

    /// Step `i` set up, measured and finished into its step file.
    fn one_step(
        &mut self,
        steps: &mut dyn Steps,
        i: usize,
        begun: &mut target::Begun,
        on: &mut OnSteps,
    ) -> StepFile {
        let req = self.req;
        let started_at = now_rfc3339();
        // The step's part of the server's log begins here, its setup included.
        let log_from = on.running.map(Running::log_offset);
        begun.log_from = log_from;
        // Whether the step failed because the server stalled, by its failure's type: the
        // measured failure's (`Measured::stalled`), or a server that did not answer before the
        // step or in the cleanup after it. Its log tail then says why.
        let (mut sf, stalled) = match steps.begin(i) {
            Err(e) => (
                steps.failed_before(i, format!("before the step: {e:#}"), started_at),
                dbms::fault_of(e.as_ref()) == Some(Fault::NoAnswer),
            ),
            Ok(setup) => {
                let mut measured = measure(
                    setup,
                    &mut MeasureCx {
                        target: on.target,
                        steps_dir: on.steps_dir,
                        monitor: &mut begun.monitor,
                        cost: on.cost,
                        events: &mut *self.events,
                        interrupt: &req.interrupt,
                        quiet: req.statement_timeout,
                        ddl: req.ddl_timeout,
                        profiler: self.profiler.as_ref(),
                    },
                );
                let measured_stall = measured.stalled();
                let profile = measured.profile.take();
                let diagnostics = std::mem::take(&mut measured.diagnostics);
                let mut finish_cx = FinishCx {
                    target: on.target,
                    cost: on.cost,
                    interrupt: &req.interrupt,
                    count_rows: req.count_rows,
                    events: &mut *self.events,
                    cleanup_fault: None,
                };
                let mut sf = steps.finish(i, measured, started_at, &mut finish_cx);
                sf.profile = profile;
                sf.diagnostics = diagnostics;
                let cleanup_stall = finish_cx.cleanup_fault == Some(Fault::NoAnswer);
                (sf, measured_stall || cleanup_stall)
            }
        };
        if let (Some(r), Some(from), Status::Failed) = (on.running, log_from, sf.status) {
            let log = server_log::during_step(r, from, on.steps_dir, &sf.step);
            // A stall's error says what the server wrote meanwhile; the file is kept for
            // every failure.
            if let (Some(e), true) = (sf.error.as_mut(), stalled) {
                e.push_str(&log.sentence);
            }
            sf.diagnostics.extend(log.file);
            if let Some(w) = log.not_written {
                self.write_failed(format!("{}: {w}", on.steps_dir.display()));
                sf.warnings.push(format!("not written: {w}"));
            }
        }
        self.read_back_cap(&mut sf, on);
        sf
    }

    /// Under a memory cap, the cap as the kernel held it at the end of the step: a step whose
    /// server was not held to it says so among its warnings, on stderr and in the report.
    fn read_back_cap(&mut self, sf: &mut StepFile, on: &OnSteps) {
        let Some(cap) = on.running.and_then(Running::memory_cap_held) else {
            return;
        };
        if let Some(w) = cap.warning() {
            let note = Note::Warning(format!("step {}: {w}", sf.step));
            self.events.note(on.target, &note);
            sf.warnings.push(w);
        }
        sf.memory_cap = Some(cap);
    }
}

/// What every step of a cell shares.
struct OnSteps<'a> {
    target: &'a str,
    steps_dir: &'a Path,
    cost: &'a CostSources,
    running: Option<&'a Running>,
}

/// Where a step's costs are read: the DBMS's counters, and the host's for the data directory
/// (a managed server's logs may be configured onto other devices) and the server's process.
fn cost_sources(dbms: &Arc<dyn Dbms>, running: Option<&Running>, cell: &Cell) -> CostSources {
    let data_dir: Option<PathBuf> = match (running, &cell.checked.access) {
        (Some(r), _) => Some(r.datadir.clone()),
        (None, Access::External(_)) => None,
        _ => Some(cell.work.to_path_buf()),
    };
    CostSources {
        dbms: dbms.clone(),
        sources: crate::metrics::Sources::new(
            data_dir.as_deref(),
            &running.map(|_| dbms.log_dirs()).unwrap_or_default(),
            running.map(|r| r.pid),
        ),
        data_dir,
    }
}
