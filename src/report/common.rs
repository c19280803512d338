//! What both suites' sections share: why a step has no number, the relative-table legend, and
//! the metric columns a step file's `metrics` object brings.

use super::input::{StepView, TargetResult};
use super::model::{Better, Cell, Column, Mark};
use super::Ctx;

/// A step of a target, or the cell that says why there is no number.
pub enum State<'a> {
    Ok(&'a StepView),
    No(Cell),
}

pub fn state<'a>(t: &'a TargetResult, step: &str) -> State<'a> {
    match t.step(step) {
        Some(s) if s.ok() => State::Ok(s),
        Some(s) if s.status == "interrupted" => State::No(
            Cell::text("interrupted")
                .mark(Mark::Gap)
                .note("the step was interrupted (Ctrl-C); its partial numbers are left out"),
        ),
        Some(s) => State::No(Cell::text("failed").mark(Mark::Gap).note(format!(
            "the step failed: {}",
            s.error.as_deref().unwrap_or("no error recorded")
        ))),
        None if t.planned(step) => State::No(Cell::gap(match &t.run.failed_step {
            Some(f) => format!("not run: the target stopped at {f}"),
            None => "not run: the target stopped before this step".to_string(),
        })),
        None => State::No(Cell::gap("not part of this target's run")),
    }
}

pub fn sanitize(s: &str) -> String {
    s.chars()
        .map(|c| if c.is_ascii_alphanumeric() { c } else { '-' })
        .collect()
}

pub fn rel_legend(ctx: &Ctx) -> String {
    format!(
        "Value / base value, 2 decimals; `1` when both are 0, `inf` when only the base is 0. Highlighted at <= {} and >= {}: yellow where that is worse (lower throughput, more cost per operation), blue where it is better.",
        ctx.thresholds.low, ctx.thresholds.high
    )
}

/// A metric a step file may carry in its `metrics` object: the key, other spellings accepted for
/// it, the column label, unit, definition and direction.
pub struct MetricDef(
    pub &'static str,
    pub &'static [&'static str],
    pub &'static str,
    pub &'static str,
    pub &'static str,
    pub Better,
);

/// The metric columns the steps carry: known ones in the original's order, then any other
/// top-level number of `metrics` by name. Each with the key to read in each step.
pub fn metric_columns(steps: &[&StepView], known: &[MetricDef]) -> Vec<(Column, Vec<String>)> {
    let mut out = Vec::new();
    let mut used: Vec<&str> = Vec::new();
    for MetricDef(key, aliases, label, unit, help, better) in known {
        let names: Vec<String> = std::iter::once(*key)
            .chain(aliases.iter().copied())
            .map(String::from)
            .collect();
        used.extend(std::iter::once(*key).chain(aliases.iter().copied()));
        if steps
            .iter()
            .any(|s| names.iter().any(|n| s.metrics.contains_key(n)))
        {
            out.push((Column::new(key, label, unit, help, *better), names));
        }
    }
    let mut extra: Vec<&String> = steps
        .iter()
        .flat_map(|s| s.metrics.keys())
        .filter(|k| !used.contains(&k.as_str()))
        .collect();
    extra.sort();
    extra.dedup();
    for k in extra {
        out.push((
            Column::new(
                k,
                k,
                "",
                "as the result names it (docs/metrics.md)",
                Better::Neither,
            ),
            vec![k.clone()],
        ));
    }
    out
}

pub fn metric_value(s: &StepView, names: &[String]) -> Option<f64> {
    names
        .iter()
        .find_map(|n| s.metrics.get(n))
        .copied()
        .flatten()
}
