//! A campaign's repeats of one target as one row: every number of a step is the median of that
//! number over the rounds in which the step succeeded, taken number by number
//! (`analysis::rounds`); the per-second series and response-time buckets are those of the round
//! whose headline is the median (a real run, not a blend).

use super::target::{StepView, TargetResult};
use crate::analysis::rounds;
use crate::results::{OpStats, RunStatus};

fn headline(s: &StepView) -> f64 {
    s.headline.value
}

/// The step over the rounds where it succeeded (`ok`, in round order, not empty).
fn step(ok: &[&StepView]) -> StepView {
    let m = rounds::median_by(ok, headline);
    // The round nearest the median lends what cannot be a median (series, buckets, texts).
    let rep = ok
        .iter()
        .min_by(|a, b| (headline(a) - m).abs().total_cmp(&(headline(b) - m).abs()))
        .copied()
        .unwrap_or(ok[0]);
    let mut out = rep.clone();
    out.duration_s = rounds::median_by(ok, |s| s.duration_s);
    out.headline.value = rounds::median_by(ok, headline);
    out.ops = rep
        .ops
        .iter()
        .map(|(k, r)| {
            let items: Vec<&OpStats> = ok.iter().filter_map(|s| s.ops.get(k)).collect();
            (k.clone(), rounds::op(r, &items))
        })
        .collect();
    out.rate_percentiles = rep
        .rate_percentiles
        .keys()
        .map(|k| {
            (
                k.clone(),
                rounds::median_of_present(ok, |s| s.rate_percentiles.get(k).copied().flatten()),
            )
        })
        .collect();
    out.metrics = rep
        .metrics
        .keys()
        .map(|k| {
            (
                k.clone(),
                rounds::median_of_present(ok, |s| s.metrics.get(k).copied().flatten()),
            )
        })
        .collect();
    out.payload = super::suite::merge_rounds(rep, ok);
    out
}

/// Rank of a run status: the merged row takes the worst of its rounds.
fn badness(status: &RunStatus) -> u8 {
    match status {
        RunStatus::Ok => 0,
        RunStatus::Interrupted => 1,
        RunStatus::Running => 2,
        RunStatus::Failed => 3,
    }
}

/// The steps any round planned or ran, in their order.
fn step_names(rounds: &[TargetResult]) -> Vec<String> {
    let mut names: Vec<String> = Vec::new();
    for t in rounds {
        for s in t
            .run
            .steps_planned
            .iter()
            .chain(t.steps.iter().map(|s| &s.name))
        {
            if !names.contains(s) {
                names.push(s.clone());
            }
        }
    }
    names
}

/// Step `name` over the rounds: the median of those where it succeeded, else the first
/// round's as it is (failed, interrupted); None when no round has it. With the warning when
/// some rounds had no result.
fn merged_step(rounds: &[TargetResult], name: &str) -> Option<(StepView, Option<String>)> {
    let all: Vec<(u32, &StepView)> = rounds
        .iter()
        .filter_map(|t| t.step(name).map(|s| (t.round().unwrap_or(0), s)))
        .collect();
    let ok: Vec<&StepView> = all.iter().filter(|(_, s)| s.ok()).map(|x| x.1).collect();
    if ok.is_empty() {
        return all.first().map(|(_, s)| ((*s).clone(), None));
    }
    let missing: Vec<String> = rounds
        .iter()
        .filter(|t| !t.step(name).is_some_and(|s| s.ok()))
        .map(|t| t.round().unwrap_or(0).to_string())
        .collect();
    let warning = (!missing.is_empty()).then(|| {
        format!(
            "{}: step {name} has no result in round {} of {}; its numbers are the median of the other {} round(s)",
            rounds[0].shown_name(),
            missing.join(", "),
            rounds.len(),
            ok.len()
        )
    });
    Some((step(&ok), warning))
}

/// The first round's run.json with the worst status of the rounds and every round's warnings.
fn merged_run(rounds: &[TargetResult]) -> crate::results::RunFile {
    let worst = rounds
        .iter()
        .max_by_key(|t| badness(&t.run.status))
        .expect("at least two rounds");
    let mut run = rounds[0].run.clone();
    if badness(&worst.run.status) > 0 {
        let r = worst.round().unwrap_or(0);
        run.status = worst.run.status;
        run.failed_step = worst.run.failed_step.clone();
        run.error = worst.run.error.as_ref().map(|e| format!("round {r}: {e}"));
    }
    run.warnings = rounds
        .iter()
        .flat_map(|t| {
            let r = t.round().unwrap_or(0);
            t.run
                .warnings
                .iter()
                .map(move |w| format!("round {r}: {w}"))
        })
        .collect();
    run
}

/// One row for the repeats of a target (`rounds` all have its name and suite, distinct rounds).
pub fn merge(mut rounds: Vec<TargetResult>) -> TargetResult {
    rounds.sort_by_key(|t| t.round());
    let mut warnings = Vec::new();
    let mut steps = Vec::new();
    for name in step_names(&rounds) {
        if let Some((s, w)) = merged_step(&rounds, &name) {
            steps.push(s);
            warnings.extend(w);
        }
    }
    let run = merged_run(&rounds);
    for t in &rounds {
        warnings.extend(t.warnings.iter().cloned());
    }
    // The target's directory: the one above its rounds' `r<k>` directories.
    let dir = rounds[0]
        .dir
        .parent()
        .map(|p| p.to_path_buf())
        .unwrap_or_else(|| rounds[0].dir.clone());
    TargetResult {
        dir,
        run,
        steps,
        warnings,
        repeats: rounds,
    }
}
