//! A campaign's repeats of one target as one row: every number of a step is the median of that
//! number over the rounds in which the step succeeded, taken number by number; the per-second
//! series and response-time buckets are those of the round whose headline is the median (a
//! real run, not a blend). The Repeats table shows each round's headline beside the median and
//! the spread, so a reader sees how far one run can be trusted.

use std::collections::BTreeMap;

use super::input::{StepView, TargetResult};
use super::model::{Better, Block, Cell, Column, Kind, Row, Section, Table};
use crate::results::{OpStats, Percentiles, RunStatus, Sla};

/// The median of the finite values; NaN when there are none.
pub fn median(mut v: Vec<f64>) -> f64 {
    v.retain(|x| x.is_finite());
    if v.is_empty() {
        return f64::NAN;
    }
    v.sort_by(f64::total_cmp);
    let n = v.len();
    if n % 2 == 1 {
        v[n / 2]
    } else {
        (v[n / 2 - 1] + v[n / 2]) / 2.0
    }
}

fn med_by<T>(items: &[&T], f: impl Fn(&T) -> f64) -> f64 {
    median(items.iter().map(|x| f(x)).collect())
}

fn med_opt<T>(items: &[&T], f: impl Fn(&T) -> Option<f64>) -> Option<f64> {
    let m = median(items.iter().filter_map(|x| f(x)).collect());
    m.is_finite().then_some(m)
}

fn latency(items: &[&Percentiles]) -> Percentiles {
    Percentiles {
        mean: med_by(items, |l| l.mean),
        p50: med_by(items, |l| l.p50),
        p90: med_by(items, |l| l.p90),
        p99: med_by(items, |l| l.p99),
        p99_9: med_by(items, |l| l.p99_9),
        p99_99: med_by(items, |l| l.p99_99),
        max: med_by(items, |l| l.max),
    }
}

/// Counts and rates are medians; what cannot be a median (buckets, error samples, the
/// histogram) is the representative round's.
fn op(rep: &OpStats, items: &[&OpStats]) -> OpStats {
    let count = |f: fn(&OpStats) -> u64| med_by(items, |o| f(o) as f64).round() as u64;
    let lat: Vec<&Percentiles> = items.iter().map(|o| &o.latency_us).collect();
    let svc: Vec<&Percentiles> = items.iter().map(|o| &o.service_us).collect();
    OpStats {
        count: count(|o| o.count),
        rows: count(|o| o.rows),
        errors: count(|o| o.errors),
        retried: count(|o| o.retried),
        ignored: count(|o| o.ignored),
        failed: count(|o| o.failed),
        ops_per_s: med_by(items, |o| o.ops_per_s),
        rows_per_s: med_by(items, |o| o.rows_per_s),
        latency_us: latency(&lat),
        service_us: latency(&svc),
        max_ms: med_by(items, |o| o.max_ms),
        ..rep.clone()
    }
}

fn sla(rep: &Sla, items: &[&Sla]) -> Sla {
    let achieved = med_by(items, |s| s.achieved_rows_per_s);
    let ratio = if rep.target_rows_per_s > 0.0 {
        achieved / rep.target_rows_per_s
    } else {
        0.0
    };
    Sla {
        target_rows_per_s: rep.target_rows_per_s,
        achieved_rows_per_s: achieved,
        ratio,
        required_ratio: rep.required_ratio,
        met: rep.met.map(|_| ratio >= rep.required_ratio),
    }
}

fn headline(s: &StepView) -> f64 {
    s.headline.value
}

/// The step over the rounds where it succeeded (`ok`, in round order, not empty).
fn step(ok: &[&StepView]) -> StepView {
    let m = med_by(ok, headline);
    // The round nearest the median lends what cannot be a median (series, buckets, texts).
    let rep = ok
        .iter()
        .min_by(|a, b| (headline(a) - m).abs().total_cmp(&(headline(b) - m).abs()))
        .copied()
        .unwrap_or(ok[0]);
    let mut out = rep.clone();
    out.duration_s = med_by(ok, |s| s.duration_s);
    out.headline.value = med_by(ok, headline);
    out.ops = rep
        .ops
        .iter()
        .map(|(k, r)| {
            let items: Vec<&OpStats> = ok.iter().filter_map(|s| s.ops.get(k)).collect();
            (k.clone(), op(r, &items))
        })
        .collect();
    out.rate_percentiles = rep
        .rate_percentiles
        .keys()
        .map(|k| {
            (
                k.clone(),
                med_opt(ok, |s| s.rate_percentiles.get(k).copied().flatten()),
            )
        })
        .collect();
    out.metrics = rep
        .metrics
        .keys()
        .map(|k| {
            (
                k.clone(),
                med_opt(ok, |s| s.metrics.get(k).copied().flatten()),
            )
        })
        .collect();
    out.sla = rep.sla.as_ref().map(|r| {
        let items: Vec<&Sla> = ok.iter().filter_map(|s| s.sla.as_ref()).collect();
        sla(r, &items)
    });
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

/// One row for the repeats of a target (`rounds` all have its name and suite, distinct rounds).
pub fn merge(mut rounds: Vec<TargetResult>) -> TargetResult {
    rounds.sort_by_key(|t| t.round());
    let mut names: Vec<String> = Vec::new();
    for t in &rounds {
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
    let mut warnings = Vec::new();
    let mut steps = Vec::new();
    for name in &names {
        let all: Vec<(u32, &StepView)> = rounds
            .iter()
            .filter_map(|t| t.step(name).map(|s| (t.round().unwrap_or(0), s)))
            .collect();
        let ok: Vec<&StepView> = all.iter().filter(|(_, s)| s.ok()).map(|x| x.1).collect();
        if ok.is_empty() {
            if let Some((_, s)) = all.first() {
                steps.push((*s).clone());
            }
            continue;
        }
        let missing: Vec<String> = rounds
            .iter()
            .filter(|t| !t.step(name).is_some_and(|s| s.ok()))
            .map(|t| t.round().unwrap_or(0).to_string())
            .collect();
        if !missing.is_empty() {
            warnings.push(format!(
                "{}: step {name} has no result in round {} of {}; its numbers are the median of the other {} round(s)",
                rounds[0].name(),
                missing.join(", "),
                rounds.len(),
                ok.len()
            ));
        }
        steps.push(step(&ok));
    }
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

fn fmt(v: f64) -> String {
    if !v.is_finite() {
        "—".into()
    } else if v.abs() >= 100.0 {
        format!("{v:.0}")
    } else {
        format!("{v:.2}")
    }
}

/// The Repeats section: per target and step, each round's headline, the median the tables
/// show, and the spread (max − min) / median. None when no target was repeated.
pub fn section(all: &[TargetResult]) -> Option<Section> {
    let repeated: Vec<(usize, &TargetResult)> = all
        .iter()
        .enumerate()
        .filter(|(_, t)| !t.repeats.is_empty())
        .collect();
    if repeated.is_empty() {
        return None;
    }
    let n = repeated
        .iter()
        .map(|(_, t)| t.repeats.len())
        .max()
        .unwrap_or(0);
    let mut columns: Vec<Column> = (1..=n)
        .map(|r| {
            Column::new(
                &format!("round{r}"),
                &format!("round {r}"),
                "",
                "the step's headline in this round (throughput, as the step's own tables)",
                Better::Neither,
            )
        })
        .collect();
    columns.push(Column::new(
        "median",
        "median",
        "",
        "what the report's other tables show",
        Better::Neither,
    ));
    columns.push(Column::new(
        "min",
        "min",
        "",
        "lowest round",
        Better::Neither,
    ));
    columns.push(Column::new(
        "max",
        "max",
        "",
        "highest round",
        Better::Neither,
    ));
    columns.push(Column::new(
        "spread",
        "spread",
        "%",
        "(max − min) / median: a relative difference smaller than this is within the noise of a single run",
        Better::Lower,
    ));
    let mut rows = Vec::new();
    for (i, t) in &repeated {
        for s in &t.steps {
            let mut per: BTreeMap<u32, f64> = BTreeMap::new();
            for r in &t.repeats {
                if let Some(x) = r.step(&s.name).filter(|x| x.ok()) {
                    per.insert(r.round().unwrap_or(0), headline(x));
                }
            }
            if per.is_empty() {
                continue;
            }
            let vals: Vec<f64> = per.values().copied().filter(|v| v.is_finite()).collect();
            let med = median(vals.clone());
            let lo = vals.iter().copied().fold(f64::INFINITY, f64::min);
            let hi = vals.iter().copied().fold(f64::NEG_INFINITY, f64::max);
            let mut cells: Vec<Cell> = t
                .repeats
                .iter()
                .map(|r| match per.get(&r.round().unwrap_or(0)) {
                    Some(v) => Cell::num(*v, fmt(*v)),
                    None => Cell::gap("the step has no result in this round"),
                })
                .collect();
            while cells.len() < n {
                cells.push(Cell::gap("the target has fewer rounds"));
            }
            let spread = if med > 0.0 && vals.len() > 1 {
                (hi - lo) / med * 100.0
            } else {
                f64::NAN
            };
            for v in [med, lo, hi, spread] {
                cells.push(if v.is_finite() {
                    Cell::num(v, fmt(v))
                } else {
                    Cell::gap("not enough rounds")
                });
            }
            rows.push(Row {
                label: format!("{} · {}", t.name(), s.name),
                target: Some(*i),
                cells,
                note: None,
            });
        }
    }
    let mut sec = Section::new("repeats", "Repeats");
    sec.blocks.push(Block::Text(
        "Repeated targets are reported as the median of their rounds, number by number; \
         per-second charts and response-time buckets are those of the round whose headline is the \
         median. The spread is how far one run of the step moved between rounds: a relative \
         difference between targets smaller than it should not be read as a change."
            .into(),
    ));
    sec.blocks.push(Block::Table(Table {
        id: "repeats".into(),
        title: "Headline per round".into(),
        kind: Kind::Info,
        suite: "",
        step: None,
        op: None,
        row_header: "target · step".into(),
        columns,
        rows,
        legend: None,
        source: None,
        base: None,
    }));
    Some(sec)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn median_of_odd_even_and_non_finite() {
        assert_eq!(median(vec![3.0, 1.0, 2.0]), 2.0);
        assert_eq!(median(vec![4.0, 1.0, 2.0, 3.0]), 2.5);
        assert_eq!(median(vec![f64::NAN, 5.0]), 5.0);
        assert!(median(vec![]).is_nan());
    }
}
