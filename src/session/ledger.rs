//! The run's journal (`campaign.json`) and every change of a cell's state in it: one type owns
//! them, so a cell's fields change together (started, a server leased, ended) and the journal
//! a killed run leaves always tells what to redo.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use super::events::{CellBegins, PlanView, PlannedCell};
use super::{fingerprint, mark, now_rfc3339, plan, tool, Request};
use crate::error::bad_input;
use crate::results::campaign::{CellState, Journal, JournalCell, ServerLease};
use crate::results::{CampaignCell, RunStatus, SCHEMA};
use crate::suites::Suite;

/// A cell's definition as fingerprinted when it was planned (`fingerprint::of`).
pub(super) type Print = BTreeMap<String, String>;

pub(super) struct Ledger {
    pub journal: Journal,
}

impl Ledger {
    /// A new run's journal: every cell planned (or another shard's).
    pub fn fresh(req: &Request, cells: &[plan::Cell], prints: &[Print]) -> Ledger {
        let suite_names: Vec<Suite> = req.suites.iter().map(|s| s.suite()).collect();
        Ledger {
            journal: Journal {
                schema: SCHEMA,
                tool: tool(),
                campaign: req.campaign.clone(),
                created_at: now_rfc3339(),
                invocation: req.invocation.clone(),
                rounds: req.rounds.max(1),
                shard: req.shard,
                base: req.base.clone(),
                cells: cells
                    .iter()
                    .map(|c| planned(c, req, suite_names[c.suite], &prints[c.order]))
                    .collect(),
            },
        }
    }

    /// A journal from before fingerprints: from now on its cells are checked too.
    pub fn fill_fingerprints(&mut self, prints: &[Print]) {
        for (c, p) in self.journal.cells.iter_mut().zip(prints) {
            if c.fingerprint.is_empty() {
                c.fingerprint = p.clone();
            }
        }
    }

    /// `redone`: the cells a resume runs again, shown with the state they were found in.
    pub fn plan_view(&self, resumed: bool, redone: &super::recover::Redone) -> PlanView {
        let j = &self.journal;
        PlanView {
            campaign: j.campaign.clone(),
            cells: j
                .cells
                .iter()
                .map(|c| PlannedCell {
                    number: c.order + 1,
                    id: c.id.clone(),
                    target: c.target.clone(),
                    suite: c.suite,
                    axes: crate::results::axes_label(&c.axes),
                    round: c.round,
                    rounds: j.rounds,
                    here: c.state == CellState::Planned,
                    state: match redone.get(&c.id) {
                        Some(was) => format!("again (was {})", was.as_str()),
                        None => c.state.as_str().to_string(),
                    },
                })
                .collect(),
            shard: j.shard.map(|s| (s.index, s.count)),
            resumed,
        }
    }

    /// The cells this invocation runs, in plan order.
    pub fn todo(&self) -> Vec<usize> {
        (0..self.journal.cells.len())
            .filter(|&i| self.journal.cells[i].state == CellState::Planned)
            .collect()
    }

    /// Cell `i` starts an attempt, by this dbperf, with its databases in `work` when dbperf
    /// removes them afterwards (a resume removes them too).
    pub fn start(&mut self, i: usize, work: Option<&Path>) {
        let jc = &mut self.journal.cells[i];
        jc.state = CellState::Running;
        jc.attempts += 1;
        jc.runner = Some(mark::current());
        jc.started_at = Some(now_rfc3339());
        jc.ended_at = None;
        jc.duration_s = None;
        jc.error = None;
        jc.work_dir = work.map(|w| w.display().to_string());
    }

    /// What the terminal shows as cell `i` starts; `rest` are the cells left, it among them.
    pub fn begins(&self, i: usize, of: usize, rest: &[usize]) -> CellBegins {
        let jc = &self.journal.cells[i];
        CellBegins {
            index: jc.order + 1,
            of,
            target: jc.target.clone(),
            suite: jc.suite,
            axes: crate::results::axes_label(&jc.axes),
            round: jc.round,
            rounds: self.journal.rounds,
            eta_s: eta(&self.journal, rest),
            attempt: jc.attempts,
        }
    }

    /// The cell as its run.json names it.
    pub fn campaign_cell(&self, i: usize) -> CampaignCell {
        let jc = &self.journal.cells[i];
        CampaignCell {
            campaign: self.journal.campaign.clone(),
            cell: jc.id.clone(),
            round: jc.round,
            rounds: self.journal.rounds,
            attempt: jc.attempts,
            shard: self.journal.shard,
        }
    }

    /// A server started for cell `i`: a resume after dbperf was killed stops it.
    pub fn lease(&mut self, i: usize, server: ServerLease) {
        self.journal.cells[i].servers.push(server);
    }

    /// Cell `i`'s servers are stopped.
    pub fn release(&mut self, i: usize) {
        self.journal.cells[i].servers.clear();
    }

    /// Cell `i` ended with `status` after `seconds`; `work_removed`: its databases are gone.
    pub fn end(
        &mut self,
        i: usize,
        status: RunStatus,
        error: Option<String>,
        seconds: f64,
        work_removed: bool,
    ) {
        let jc = &mut self.journal.cells[i];
        jc.state = match status {
            RunStatus::Ok => CellState::Done,
            RunStatus::Failed | RunStatus::Running => CellState::Failed,
            RunStatus::Interrupted => CellState::Interrupted,
        };
        if jc.state == CellState::Failed {
            jc.failures += 1;
        }
        jc.runner = None;
        jc.servers.clear();
        jc.ended_at = Some(now_rfc3339());
        jc.duration_s = Some(seconds);
        jc.error = error;
        if work_removed {
            jc.work_dir = None;
        }
    }

    /// Every cell directory of the run that holds a result, in plan order.
    pub fn result_dirs(&self, out: &Path) -> Vec<PathBuf> {
        self.journal
            .cells
            .iter()
            .map(|c| out.join(&c.id))
            .filter(|d| d.join("run.json").is_file())
            .collect()
    }
}

fn planned(c: &plan::Cell, req: &Request, suite: Suite, print: &Print) -> JournalCell {
    let state = if c.in_shard(req.shard) {
        CellState::Planned
    } else {
        CellState::Elsewhere
    };
    let name = &req.targets[c.target].name;
    JournalCell {
        axes: c.axes.clone(),
        fingerprint: print.clone(),
        ..JournalCell::planned(&c.id, name, suite, c.round, c.order, state)
    }
}

/// A resumed run must plan the same cells in the same order as the run it continues, each
/// defined as it was then (dbperf.toml and the flags are read again on resume).
pub(super) fn check_same_plan(
    j: &Journal,
    cells: &[plan::Cell],
    prints: &[Print],
) -> anyhow::Result<()> {
    let before: Vec<&str> = j.cells.iter().map(|c| c.id.as_str()).collect();
    let now: Vec<&str> = cells.iter().map(|c| c.id.as_str()).collect();
    if before != now {
        return bad_input(format!(
            "the run's definition changed since it started (cells then: {}; now: {}); start a new \
             run with another --out",
            before.join(" "),
            now.join(" ")
        ));
    }
    for (c, now) in j.cells.iter().zip(prints) {
        // Journals written before fingerprints have none: accepted as they are.
        if c.fingerprint.is_empty() {
            continue;
        }
        if let Some(d) = fingerprint::difference(&c.fingerprint, now) {
            return bad_input(format!(
                "cell {} is defined differently than when the run started ({d}), so dbperf.toml \
                 or the flags changed; put them back or start a new run with another --out",
                c.id
            ));
        }
    }
    Ok(())
}

/// Seconds until the last of `remaining` cells ends: each cell's estimate is the mean duration
/// of the same target and suite's finished cells, else of every finished cell.
fn eta(j: &Journal, remaining: &[usize]) -> Option<f64> {
    let done: Vec<&JournalCell> = j
        .cells
        .iter()
        .filter(|c| {
            matches!(c.state, CellState::Done | CellState::Failed) && c.duration_s.is_some()
        })
        .collect();
    if done.is_empty() {
        return None;
    }
    let mean = |cs: &[&&JournalCell]| -> Option<f64> {
        (!cs.is_empty())
            .then(|| cs.iter().filter_map(|c| c.duration_s).sum::<f64>() / cs.len() as f64)
    };
    let all: Vec<&&JournalCell> = done.iter().collect();
    let overall = mean(&all)?;
    Some(
        remaining
            .iter()
            .map(|&i| {
                let c = &j.cells[i];
                let same: Vec<&&JournalCell> = done
                    .iter()
                    .filter(|d| d.target == c.target && d.suite == c.suite)
                    .collect();
                mean(&same).unwrap_or(overall)
            })
            .sum(),
    )
}
