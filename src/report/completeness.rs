//! Whether the inputs are a whole campaign: every shard's directory given, every cell ended, and
//! every ended cell's results there and readable. Each shard's journal knows it is shard K/N and
//! lists the other shards' cells (`elsewhere`), so a report over some of the shards, or over a
//! run that is still going (or whose dbperf was killed), says what it lacks instead of looking
//! final. The journal only says what a cell's run did; what the report can show is what its
//! directory still holds, so an ended cell is judged by its files too (a result directory
//! deleted or damaged after the run is a gap, not a whole campaign).

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use crate::results::campaign::{read_journal, CellState, Journal, JournalCell, JOURNAL};
use crate::results::{self, RunStatus};

/// Cells named in a sentence before the rest is counted.
const NAMED: usize = 6;

/// One campaign (or one run of `--target`s) among the inputs: the journals of its shards given.
struct Group {
    campaign: Option<String>,
    count: u32,
    /// The plan's cell ids, which every shard's journal lists alike.
    ids: Vec<String>,
    /// Shard index (1 without shards) with its directory and journal.
    shards: Vec<(u32, PathBuf, Journal)>,
}

/// What the inputs lack, one sentence per missing shard or shard with unfinished cells; empty
/// when every campaign among them is whole. Inputs that are one target's directory, or a run
/// directory without a journal, say nothing (no plan to compare with). A journal that does not
/// read is left to the loading, which says why.
pub fn gaps(inputs: &[PathBuf]) -> Vec<String> {
    let mut groups: Vec<Group> = Vec::new();
    for p in inputs {
        if !crate::results::present(&p.join(JOURNAL))
            || crate::results::present(&p.join("run.json"))
        {
            continue;
        }
        let Ok(j) = read_journal(p) else { continue };
        let count = j.shard.map_or(1, |s| s.count);
        let index = j.shard.map_or(1, |s| s.index);
        // What a shard's journal says is counted over, so held to what a run writes: an index
        // within its count, no more shards than `--slurm` takes or the plan has cells.
        let most = (crate::results::slurm::MAX_SHARDS as usize).max(j.cells.len());
        if index == 0 || index > count || count as usize > most {
            continue;
        }
        let ids: Vec<String> = j.cells.iter().map(|c| c.id.clone()).collect();
        let g = groups
            .iter_mut()
            .find(|g| g.campaign == j.campaign && g.count == count && g.ids == ids);
        match g {
            Some(g) => g.shards.push((index, p.clone(), j)),
            None => groups.push(Group {
                campaign: j.campaign.clone(),
                count,
                ids,
                shards: vec![(index, p.clone(), j)],
            }),
        }
    }
    groups.iter().flat_map(group_gaps).collect()
}

fn group_gaps(g: &Group) -> Vec<String> {
    let name = match &g.campaign {
        Some(c) => format!("campaign {c}"),
        None => "the run".to_string(),
    };
    let mut out = Vec::new();
    let present: BTreeSet<u32> = g.shards.iter().map(|(k, _, _)| *k).collect();
    let plan = &g.shards[0].2.cells;
    for k in (1..=g.count).filter(|k| !present.contains(k)) {
        let cells: Vec<&str> = plan
            .iter()
            .filter(|c| owner(c, g.count) == k)
            .map(|c| c.id.as_str())
            .collect();
        // More shards than cells: this one had nothing to run.
        if cells.is_empty() {
            continue;
        }
        out.push(format!(
            "{name} is not complete: shard {k}/{} is not among the inputs, so its {} not in this report: {}",
            g.count,
            cells_are(cells.len()),
            listed(&cells)
        ));
    }
    // Each shard once, even when its directory was given twice.
    let mut seen = BTreeSet::new();
    for (k, dir, j) in &g.shards {
        if !seen.insert(*k) {
            continue;
        }
        let open: Vec<String> = j
            .cells
            .iter()
            .filter(|c| owner(c, g.count) == *k && unfinished(c.state))
            .map(|c| format!("{} ({})", c.id, state_words(c.state)))
            .collect();
        if open.is_empty() {
            continue;
        }
        let whose = if g.count > 1 {
            format!("{name}, shard {k}/{}", g.count)
        } else {
            name.clone()
        };
        out.push(format!(
            "{whose} is not complete: {} of {} in {} did not finish: {}; `dbperf run --resume {}` continues it",
            open.len(),
            cells_of(j, *k, g.count),
            dir.display(),
            listed(&open),
            dir.display()
        ));
    }
    out.extend(lost_results(g, &name));
    out
}

/// Cells whose journal says they ended but whose results are missing or do not read, one
/// sentence per shard.
fn lost_results(g: &Group, name: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut seen = BTreeSet::new();
    for (k, dir, j) in &g.shards {
        if !seen.insert(*k) {
            continue;
        }
        let lost: Vec<String> = j
            .cells
            .iter()
            .filter(|c| owner(c, g.count) == *k)
            .filter_map(|c| results_problem(dir, c).map(|why| format!("{} ({why})", c.id)))
            .collect();
        if lost.is_empty() {
            continue;
        }
        let whose = if g.count > 1 {
            format!("{name}, shard {k}/{}", g.count)
        } else {
            name.to_string()
        };
        out.push(format!(
            "{whose} is not complete: {} of {} in {} ended by its journal, but the results are not there to report: {}",
            lost.len(),
            cells_of(j, *k, g.count),
            dir.display(),
            listed(&lost)
        ));
    }
    out
}

/// What is wrong with an ended cell's results in `run_dir`, or `None` when they are there and
/// read: a done cell has every planned step's file, a failed one those of the steps before the
/// one that failed. Cells that have not ended are named by `group_gaps` already.
fn results_problem(run_dir: &Path, c: &JournalCell) -> Option<String> {
    if !matches!(c.state, CellState::Done | CellState::Failed) {
        return None;
    }
    let dir = run_dir.join(&c.id);
    if !results::present(&dir.join("run.json")) {
        return Some("its result directory has no run.json".into());
    }
    let run = match results::read_run(&dir) {
        Ok(r) => r,
        Err(e) => return Some(format!("its run.json does not read: {e:#}")),
    };
    if c.state == CellState::Done && run.status != RunStatus::Ok {
        return Some(format!(
            "the journal says done, its run.json says {}",
            run_status_words(run.status)
        ));
    }
    let wanted: &[String] = match (c.state, &run.failed_step) {
        (CellState::Done, _) => &run.steps_planned,
        (_, Some(f)) => {
            let at = run.steps_planned.iter().position(|s| s == f);
            &run.steps_planned[..at.unwrap_or(0)]
        }
        // Failed before its first step (the server did not start): no step to have.
        (_, None) => &[],
    };
    for step in wanted {
        if !results::present(&dir.join("steps").join(format!("{step}.json"))) {
            return Some(format!("step {step} has no step file"));
        }
        if let Err(e) = results::read_step(&dir, step) {
            return Some(format!("step {step} does not read: {e:#}"));
        }
    }
    None
}

fn run_status_words(s: RunStatus) -> &'static str {
    match s {
        RunStatus::Running => "running",
        RunStatus::Ok => "ok",
        RunStatus::Failed => "failed",
        RunStatus::Interrupted => "interrupted",
    }
}

/// The shard (1-based) that runs a cell: every Nth cell of the plan from the Kth, as
/// `session::plan` splits it.
fn owner(c: &JournalCell, count: u32) -> u32 {
    (c.order % count.max(1) as usize) as u32 + 1
}

/// Done and failed cells have ended (a failed one is reported as failed); the rest have not.
fn unfinished(s: CellState) -> bool {
    matches!(
        s,
        CellState::Planned | CellState::Running | CellState::Interrupted
    )
}

fn state_words(s: CellState) -> &'static str {
    match s {
        CellState::Planned => "not started",
        CellState::Running => "running, or its dbperf was killed",
        CellState::Interrupted => "interrupted",
        CellState::Done => "done",
        CellState::Failed => "failed",
        CellState::Elsewhere => "another shard's",
    }
}

fn cells_of(j: &Journal, k: u32, count: u32) -> String {
    let n = j.cells.iter().filter(|c| owner(c, count) == k).count();
    if n == 1 {
        "its 1 cell".into()
    } else {
        format!("its {n} cells")
    }
}

fn cells_are(n: usize) -> String {
    if n == 1 {
        "1 cell is".into()
    } else {
        format!("{n} cells are")
    }
}

fn listed<S: AsRef<str>>(items: &[S]) -> String {
    let mut s: Vec<&str> = items.iter().take(NAMED).map(|x| x.as_ref()).collect();
    let more = items.len().saturating_sub(NAMED);
    let more = format!("and {more} more");
    if items.len() > NAMED {
        s.push(&more);
    }
    s.join(", ")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::results::campaign::{write_journal, Invocation, Shard};
    use std::path::Path;

    fn cell(id: &str, order: usize, state: CellState) -> JournalCell {
        JournalCell {
            attempts: 1,
            ..JournalCell::planned(id, id, crate::suites::Suite::Sysbench, 1, order, state)
        }
    }

    /// Shard k of n of a 4-cell campaign, its own cells in `own`, the others elsewhere.
    fn shard(root: &Path, k: u32, n: u32, own: CellState) -> PathBuf {
        let d = root.join(format!("s{k}"));
        std::fs::create_dir_all(&d).unwrap();
        let cells = ["a", "b", "c", "d"]
            .iter()
            .enumerate()
            .map(|(i, id)| {
                let mine = i % n as usize == (k - 1) as usize;
                cell(id, i, if mine { own } else { CellState::Elsewhere })
            })
            .collect();
        let j = Journal {
            schema: crate::results::SCHEMA,
            tool: crate::results::Tool {
                name: "dbperf".into(),
                version: "0".into(),
                git_revision: String::new(),
            },
            campaign: Some("modes".into()),
            created_at: "2026-11-28T00:00:00Z".into(),
            invocation: Invocation {
                args: Vec::new(),
                cwd: "/".into(),
            },
            rounds: 1,
            shard: (n > 1).then_some(Shard { index: k, count: n }),
            base: None,
            cells,
        };
        write_journal(&d, &j).unwrap();
        for c in j.cells.iter().filter(|c| c.state == CellState::Done) {
            write_results(&d.join(&c.id), &c.id, "ok", None);
        }
        for c in j.cells.iter().filter(|c| c.state == CellState::Failed) {
            write_results(&d.join(&c.id), &c.id, "failed", Some("l.i0"));
        }
        d
    }

    /// A cell's run.json planning l.i0, and l.i0's step file unless the cell failed in it.
    fn write_results(dir: &Path, name: &str, status: &str, failed: Option<&str>) {
        use crate::report::input::fixtures::{run_json, step_json};
        std::fs::create_dir_all(dir.join("steps")).unwrap();
        let mut run = run_json(name, "2026-11-28T00:00:00Z");
        run["status"] = status.into();
        run["failed_step"] = failed.into();
        std::fs::write(dir.join("run.json"), run.to_string()).unwrap();
        if failed.is_none() {
            let step = step_json(1.0).to_string();
            std::fs::write(dir.join("steps/l.i0.json"), step).unwrap();
        }
    }

    #[test]
    fn a_done_cell_whose_results_are_gone_is_named() {
        let t = tempfile::tempdir().unwrap();
        let all: Vec<PathBuf> = (1..=2)
            .map(|k| shard(t.path(), k, 2, CellState::Done))
            .collect();
        assert!(gaps(&all).is_empty(), "{:?}", gaps(&all));
        // Shard 2 runs cells b and d: b's directory removed, d's step file damaged.
        std::fs::remove_dir_all(all[1].join("b")).unwrap();
        std::fs::write(all[1].join("d/steps/l.i0.json"), "{").unwrap();
        let g = gaps(&all);
        assert_eq!(g.len(), 1, "{g:?}");
        assert!(
            g[0].starts_with("campaign modes, shard 2/2 is not complete: 2 of its 2 cells"),
            "{}",
            g[0]
        );
        assert!(
            g[0].contains("b (its result directory has no run.json)"),
            "{}",
            g[0]
        );
        assert!(g[0].contains("d (step l.i0 does not read"), "{}", g[0]);
        // A step file gone, and a run.json that says the run failed under a done journal.
        std::fs::remove_file(all[0].join("a/steps/l.i0.json")).unwrap();
        let mut run: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(all[0].join("c/run.json")).unwrap())
                .unwrap();
        run["status"] = "failed".into();
        std::fs::write(all[0].join("c/run.json"), run.to_string()).unwrap();
        let g = gaps(&all);
        assert_eq!(g.len(), 2, "{g:?}");
        assert!(g[0].contains("a (step l.i0 has no step file)"), "{}", g[0]);
        assert!(
            g[0].contains("c (the journal says done, its run.json says failed)"),
            "{}",
            g[0]
        );
    }

    #[test]
    fn a_failed_cell_needs_only_the_steps_before_its_failure() {
        let t = tempfile::tempdir().unwrap();
        let d = shard(t.path(), 1, 1, CellState::Failed);
        // Failed in l.i0, the only step: nothing to have but run.json.
        let g = gaps(std::slice::from_ref(&d));
        assert!(g.is_empty(), "{g:?}");
        std::fs::remove_file(d.join("a/run.json")).unwrap();
        let g = gaps(&[d]);
        assert_eq!(g.len(), 1, "{g:?}");
        assert!(
            g[0].contains("a (its result directory has no run.json)"),
            "{}",
            g[0]
        );
    }

    #[test]
    fn every_shard_given_and_done_is_complete() {
        let t = tempfile::tempdir().unwrap();
        let all: Vec<PathBuf> = (1..=4)
            .map(|k| shard(t.path(), k, 4, CellState::Done))
            .collect();
        assert!(gaps(&all).is_empty(), "{:?}", gaps(&all));
        // A failed cell has ended: the report says it failed, the campaign is not waiting on it.
        let mut some = all.clone();
        some[1] = shard(t.path(), 2, 4, CellState::Failed);
        assert!(gaps(&some).is_empty());
    }

    #[test]
    fn a_missing_shard_is_named_with_its_cells() {
        let t = tempfile::tempdir().unwrap();
        let given: Vec<PathBuf> = [1, 2, 4]
            .iter()
            .map(|k| shard(t.path(), *k, 4, CellState::Done))
            .collect();
        let g = gaps(&given);
        assert_eq!(g.len(), 1, "{g:?}");
        assert!(g[0].contains("campaign modes"), "{}", g[0]);
        assert!(
            g[0].contains("shard 3/4 is not among the inputs"),
            "{}",
            g[0]
        );
        assert!(g[0].ends_with(": c"), "{}", g[0]);
        // Given twice is still one shard.
        let twice = [given.clone(), given].concat();
        assert_eq!(gaps(&twice).len(), 1);
    }

    #[test]
    fn unfinished_cells_are_named_per_shard() {
        let t = tempfile::tempdir().unwrap();
        let given = vec![
            shard(t.path(), 1, 2, CellState::Done),
            shard(t.path(), 2, 2, CellState::Interrupted),
        ];
        let g = gaps(&given);
        assert_eq!(g.len(), 1, "{g:?}");
        assert!(g[0].starts_with("campaign modes, shard 2/2 is not complete: 2 of its 2 cells"));
        assert!(
            g[0].contains("b (interrupted), d (interrupted)"),
            "{}",
            g[0]
        );
        assert!(g[0].contains("--resume"), "{}", g[0]);
        // A run without shards: its own cells.
        let whole = vec![shard(&t.path().join("w"), 1, 1, CellState::Running)];
        let g = gaps(&whole);
        assert_eq!(g.len(), 1, "{g:?}");
        assert!(
            g[0].starts_with("campaign modes is not complete: 4 of its 4 cells"),
            "{}",
            g[0]
        );
        assert!(
            g[0].contains("a (running, or its dbperf was killed)"),
            "{}",
            g[0]
        );
    }

    #[test]
    fn a_shard_without_cells_is_not_missed() {
        let t = tempfile::tempdir().unwrap();
        // 4 cells in 6 shards: shards 5 and 6 have none to run, nor to report.
        let given: Vec<PathBuf> = (1..=4)
            .map(|k| shard(t.path(), k, 6, CellState::Done))
            .collect();
        assert!(gaps(&given).is_empty(), "{:?}", gaps(&given));
    }

    #[test]
    fn shards_of_unlike_plans_are_not_mixed() {
        let t = tempfile::tempdir().unwrap();
        let a = shard(&t.path().join("x"), 1, 2, CellState::Done);
        let b = shard(&t.path().join("y"), 2, 4, CellState::Done);
        // Two groups (counts differ): each lacks its other shards.
        let g = gaps(&[a, b]);
        assert_eq!(g.len(), 1 + 3, "{g:?}");
    }
}
