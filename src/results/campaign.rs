//! `campaign.json`: the journal of a run directory. Every cell (a target, a suite, a round) with
//! its state, rewritten atomically at every change, so a run killed at any moment (SIGKILL, a
//! reboot) can be resumed from the file alone (docs/campaigns.md).

use std::collections::BTreeMap;
use std::path::Path;

use serde::{Deserialize, Serialize};

use super::Tool;

pub const JOURNAL: &str = "campaign.json";

/// Where a cell stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum CellState {
    Planned,
    /// Being run (by the process in `runner`); found so on resume: that process was killed.
    Running,
    Done,
    Failed,
    Interrupted,
    /// Another shard's cell: run elsewhere.
    Elsewhere,
}

impl CellState {
    pub fn as_str(self) -> &'static str {
        match self {
            CellState::Planned => "planned",
            CellState::Running => "running",
            CellState::Done => "done",
            CellState::Failed => "failed",
            CellState::Interrupted => "interrupted",
            CellState::Elsewhere => "elsewhere",
        }
    }
}

/// A process as it can be recognised later: its pid alone may have been reused, so the start
/// time (clock ticks after boot, /proc/<pid>/stat) and the boot it belongs to go with it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ProcessMark {
    pub pid: u32,
    pub start_ticks: u64,
    pub boot_id: String,
    /// Its real user id. Absent in older journals.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub uid: Option<u32>,
    /// Its command line, one string per argument. Absent in older journals.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cmdline: Option<Vec<String>>,
}

/// A managed server a cell started, to be found and stopped if its dbperf was killed.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ServerLease {
    pub process: ProcessMark,
    pub datadir: String,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct JournalCell {
    /// Also the cell's directory under the run directory.
    pub id: String,
    pub target: String,
    pub suite: crate::suites::Suite,
    /// 1-based.
    pub round: u32,
    /// Position in the whole plan, 0-based.
    pub order: usize,
    pub state: CellState,
    /// Its values of the run's swept axes (as run.json's `axes`); empty without a sweep.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub axes: BTreeMap<String, String>,
    /// How many times it was started.
    pub attempts: u32,
    /// How many of those attempts ended failed. An attempt whose dbperf was killed is redone
    /// without counting here, so it does not use up the failed cell's one retry. Absent in
    /// older journals (see `failed_attempts`).
    #[serde(default)]
    pub failures: u32,
    /// What the cell runs, as it was planned: the suite's parameters and the target's
    /// definition, `key = value` (long values as `sha256:<hex>`), so a resume can tell that
    /// dbperf.toml or the flags changed under it. Absent in older journals: not checked.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub fingerprint: BTreeMap<String, String>,
    /// The dbperf process running it (state `running`).
    #[serde(default)]
    pub runner: Option<ProcessMark>,
    /// Servers it started and has not stopped yet.
    #[serde(default)]
    pub servers: Vec<ServerLease>,
    /// The data directory dbperf made for it (removed when it is redone).
    #[serde(default)]
    pub work_dir: Option<String>,
    #[serde(default)]
    pub started_at: Option<String>,
    #[serde(default)]
    pub ended_at: Option<String>,
    #[serde(default)]
    pub duration_s: Option<f64>,
    #[serde(default)]
    pub error: Option<String>,
}

impl JournalCell {
    /// A cell of the plan in `state` that has not run yet: no attempt, runner, server or times.
    pub fn planned(
        id: &str,
        target: &str,
        suite: crate::suites::Suite,
        round: u32,
        order: usize,
        state: CellState,
    ) -> JournalCell {
        JournalCell {
            id: id.to_string(),
            target: target.to_string(),
            suite,
            round,
            order,
            state,
            axes: BTreeMap::new(),
            attempts: 0,
            failures: 0,
            fingerprint: BTreeMap::new(),
            runner: None,
            servers: Vec::new(),
            work_dir: None,
            started_at: None,
            ended_at: None,
            duration_s: None,
            error: None,
        }
    }

    /// Attempts that ended failed. An older journal did not count them apart from killed
    /// attempts: there every attempt of a failed cell counts as failed, as it did then.
    pub fn failed_attempts(&self) -> u32 {
        if self.failures == 0 && self.state == CellState::Failed {
            self.attempts
        } else {
            self.failures
        }
    }
}

/// How the run was asked for, so `--resume` can ask for it again.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Invocation {
    /// dbperf's arguments (the program name left out).
    pub args: Vec<String>,
    /// The working directory they are relative to.
    pub cwd: String,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Shard {
    /// 1-based.
    pub index: u32,
    pub count: u32,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Journal {
    pub schema: u32,
    pub tool: Tool,
    /// `[campaign.<name>]` of dbperf.toml; null for a run of `--target`s.
    pub campaign: Option<String>,
    pub created_at: String,
    pub invocation: Invocation,
    pub rounds: u32,
    pub shard: Option<Shard>,
    /// The target relative numbers are against in the campaign's report.
    pub base: Option<String>,
    pub cells: Vec<JournalCell>,
}

/// What run.json says about the cell it belongs to.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CampaignCell {
    pub campaign: Option<String>,
    pub cell: String,
    pub round: u32,
    pub rounds: u32,
    pub attempt: u32,
    #[serde(default)]
    pub shard: Option<Shard>,
}

/// A journal that did not read because a cell names a suite this dbperf does not know.
fn unknown_suite(path: &Path, text: &str) -> Option<anyhow::Error> {
    #[derive(Deserialize)]
    struct Cells {
        cells: Vec<SuiteOnly>,
    }
    #[derive(Deserialize)]
    struct SuiteOnly {
        suite: String,
    }
    let named: Cells = serde_json::from_str(text).ok()?;
    super::unknown_suite_named(path, named.cells.iter().map(|c| c.suite.as_str()), "names")
}

/// The journal of `dir`, read for a report: whoever wrote it (see `read_own_journal`).
pub fn read_journal(dir: &Path) -> anyhow::Result<Journal> {
    let path = dir.join(JOURNAL);
    parse_journal(&path, &super::read_gated(&path)?)
}

/// The journal of `dir` as a record that drives an action (`--resume` runs its command line
/// again, removes the work directories and stops the servers it names; `--resume --slurm`
/// submits the shards it says are not done): refused unless the user running dbperf wrote it.
pub fn read_own_journal(dir: &Path) -> anyhow::Result<Journal> {
    let path = dir.join(JOURNAL);
    let text = super::read_gated_record(&path, "a campaign's journal")?;
    parse_journal(&path, &text)
}

/// A journal's text, checked: cell ids and target names become directory names under its run
/// directory (`<target>` or `<target>/r<k>`): each part must be a plain name, or the journal is
/// refused whole (an edited journal could name a directory elsewhere); so is one whose cell axes
/// are not what a sweep writes (`super::axes_problem`).
fn parse_journal(path: &Path, text: &str) -> anyhow::Result<Journal> {
    let j: Journal = match super::parse_versioned(path, text) {
        Ok(j) => j,
        Err(e) => return Err(unknown_suite(path, text).unwrap_or(e)),
    };
    for c in &j.cells {
        let bad = if !cell_id_ok(&c.id) {
            Some(("cell id", &c.id))
        } else if !crate::untrusted::plain_name(&c.target) {
            Some(("target name", &c.target))
        } else {
            None
        };
        if let Some((what, name)) = bad {
            return Err(crate::error::BadInput(format!(
                "{} does not match the result schema: {what} {} is not a plain directory name",
                path.display(),
                crate::untrusted::shown(name)
            ))
            .into());
        }
        // A resumed cell writes its journal axes into run.json: the same check as there.
        if let Some(why) = super::axes_problem(&c.axes) {
            return Err(crate::error::BadInput(format!(
                "{} does not match the result schema: cell {}: {why}",
                path.display(),
                c.id
            ))
            .into());
        }
    }
    Ok(j)
}

/// `<target>` or `<target>/r<k>`, each part a plain name.
pub fn cell_id_ok(id: &str) -> bool {
    let mut parts = id.split('/');
    let first = parts.next().is_some_and(crate::untrusted::plain_name);
    let round = parts.next().is_none_or(|r| {
        r.strip_prefix('r')
            .is_some_and(|k| !k.is_empty() && k.bytes().all(|b| b.is_ascii_digit()))
    });
    first && round && parts.next().is_none()
}

pub fn write_journal(dir: &Path, j: &Journal) -> std::io::Result<()> {
    super::write_json_atomic(&dir.join(JOURNAL), j)
}
