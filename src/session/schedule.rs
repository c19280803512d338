//! The campaign's cells in their planned order: a pause between them when asked, each cell
//! started and ended in the journal around its run, its databases removed after it, and the run
//! stopped at Ctrl-C.

use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

use super::cell::Cell;
use super::ledger::Ledger;
use super::start::Prepared;
use super::workdir::remove_cell_work;
use super::{CellOutcome, Exit, Loop, Note};
use crate::dbms;
use crate::results::RunStatus;

impl Loop<'_> {
    /// Runs the ledger's planned cells in order; how the run ended, and what each cell ran.
    pub(super) fn run_cells(
        &mut self,
        ledger: &mut Ledger,
        p: &Prepared,
    ) -> (Exit, Vec<CellOutcome>) {
        let todo = ledger.todo();
        let mut outcomes = Vec::new();
        let mut exit = Exit::Ok;
        for (n, &i) in todo.iter().enumerate() {
            if n > 0 {
                self.pause();
            }
            if self.req.interrupt.load(Ordering::SeqCst) {
                return (Exit::Interrupted, outcomes);
            }
            let (status, outcome) = self.one_cell(ledger, p, i, &todo[n..]);
            outcomes.push(outcome);
            exit = exit.after(status);
            if exit == Exit::Interrupted {
                break;
            }
        }
        (exit, outcomes)
    }

    /// The cell run under its host setting (none without a host sweep): applied to the devices
    /// under its work directory before, put back after, whatever way it ends.
    fn run_cell_under_host_setting(
        &mut self,
        ledger: &mut Ledger,
        cell: &Cell,
        host: usize,
    ) -> super::cell::CellResult {
        let Some(setting) = self.req.hosts.get(host) else {
            return self.run_cell(ledger, cell);
        };
        let state = self.req.out.join(super::host_axes::STATE_FILE);
        let applied = crate::safe_fs::make_dir_all(cell.work, crate::safe_fs::Also::Nobody)
            .and_then(|_| {
                super::host_axes::apply(&self.req.host_roots, setting, cell.work, &state)
            });
        let applied = match applied {
            Ok(a) => a,
            Err(e) => {
                return super::cell::CellResult::ended(
                    RunStatus::Failed,
                    format!("cannot apply the host setting: {e:#}"),
                )
            }
        };
        if let Some(why) = applied.unguarded() {
            self.events.note(
                "",
                &Note::Warning(format!(
                    "{why}: if dbperf is killed in this cell, --resume or dbperf host undo \
                     --state-file {} puts the devices back",
                    state.display()
                )),
            );
        }
        let mut result = self.run_cell(ledger, cell);
        if let Err(e) = applied.restore() {
            let msg = format!(
                "the host setting was not put back: {e:#} (dbperf host undo --state-file {})",
                state.display()
            );
            self.events.note("", &Note::Warning(msg.clone()));
            if result.error.is_none() {
                result.error = Some(msg);
            }
        }
        result
    }

    /// So one target's write-back and compaction do not spill into the next one's measurements.
    fn pause(&mut self) {
        let pause = self.req.pause_between;
        if pause.is_zero() {
            return;
        }
        self.events.note(
            "",
            &Note::Pausing {
                seconds: pause.as_secs(),
            },
        );
        // From an option or a campaign file: a huge value pauses long, it does not panic.
        let until = dbms::later(Instant::now(), pause);
        while Instant::now() < until && !self.req.interrupt.load(Ordering::SeqCst) {
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    /// Cell `i` from its start in the journal to its end there; `rest`: the cells left.
    fn one_cell(
        &mut self,
        ledger: &mut Ledger,
        p: &Prepared,
        i: usize,
        rest: &[usize],
    ) -> (RunStatus, CellOutcome) {
        let req = self.req;
        let plan = &p.cells[i];
        let work = req.cell_work(&plan.id, &req.targets[plan.target].name, &plan.axes);
        // dbperf removes the databases of its own work directory, so the journal says where.
        let own = req.work_dir.is_none();
        ledger.start(i, own.then_some(work.as_path()));
        self.save(&ledger.journal);
        self.events
            .cell_begins(&ledger.begins(i, p.cells.len(), rest));
        let started = Instant::now();
        let cell = Cell {
            index: i,
            checked: &p.checked[plan.suite][plan.target],
            suite: req.suites[plan.suite].as_ref(),
            work: &work,
        };
        let result = self.run_cell_under_host_setting(ledger, &cell, plan.host);
        let removed = own && !req.keep_data;
        if removed {
            if let Err(e) = remove_cell_work(&req.out, &plan.id) {
                self.events.note(
                    "",
                    &Note::Warning(format!("{} not removed: {e}", work.display())),
                );
            }
        }
        let seconds = started.elapsed().as_secs_f64();
        ledger.end(i, result.status, result.error.clone(), seconds, removed);
        self.save(&ledger.journal);
        let outcome = CellOutcome {
            id: plan.id.clone(),
            target: ledger.journal.cells[i].target.clone(),
            steps: result.steps,
        };
        (result.status, outcome)
    }
}
