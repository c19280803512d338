//! What both suites' sections share: why a step has no number, the relative-table legend, and
//! the metric columns a step file's `metrics` object brings.

use super::confidence::{self, Subject, Tally};
use super::context::Ctx;
use super::model::{Better, Cell, Column, Mark, Row, Table};
use super::target::{StepView, TargetResult};
use crate::analysis::welch;
use crate::results::metric::{self, Metric};

/// A step of a target, or the cell that says why there is no number.
pub enum State<'a> {
    Ok(&'a StepView),
    No(Cell),
}

pub fn state<'a>(t: &'a TargetResult, step: &str) -> State<'a> {
    match t.step(step) {
        Some(s) if s.ok() => State::Ok(s),
        Some(s) if s.status == crate::results::Status::Interrupted => State::No(
            Cell::text("interrupted")
                .mark(Mark::Gap)
                .note("the step was interrupted (Ctrl-C); its partial numbers are left out"),
        ),
        Some(s) => State::No(Cell::text("failed").mark(Mark::Gap).note(format!(
            "the step failed: {}",
            first_line(s.error.as_deref().unwrap_or("no error recorded"))
        ))),
        None if t.planned(step) => State::No(Cell::gap(match &t.run.failed_step {
            Some(f) => format!("not run: the target stopped at {f}"),
            None => "not run: the target stopped before this step".to_string(),
        })),
        None => State::No(Cell::gap("not part of this target's run")),
    }
}

/// An error's first line, for a note or a warning: a step's error may go on with the lines
/// the server logged, which its step file and `<step>.server-log.txt` keep.
pub fn first_line(error: &str) -> String {
    match error.split_once('\n') {
        Some((first, _)) => format!("{} (more in the step's file)", first.trim_end_matches(':')),
        None => error.to_string(),
    }
}

pub fn sanitize(s: &str) -> String {
    s.chars()
        .map(|c| if c.is_ascii_alphanumeric() { c } else { '-' })
        .collect()
}

pub fn rel_legend(ctx: &Ctx) -> String {
    format!(
        "Value / base value, 2 decimals; `1` when both are 0, `inf` when only the base is 0. Highlighted at <= {} and >= {} when the whole 95% interval is, over {} rounds or more on each side: yellow where that is worse (lower throughput, more cost per operation), blue where it is better. Pale and hatched with a ? (▽? △? in report.md): beyond the threshold but unconfirmed, with one round on a side or no interval, so run-to-run variation is not in it (`--repeats {}`).",
        ctx.thresholds.low,
        ctx.thresholds.high,
        confidence::CONFIRM_ROUNDS,
        welch::MIN_ROUNDS
    )
}

/// Hardware and DBMS metrics of the Insert Benchmark (issue 4), in the original's column order:
/// the part of the one metric table from rps to w_await.
pub const HW_METRICS: &[Metric] = Metric::span(Metric::Rps, Metric::WAwaitMs);

/// sysbench metrics (spec §3.4), in the original's order: cpu/o to wKB/o of the metric table.
pub const SB_METRICS: &[Metric] = Metric::span(Metric::CpuPerOp, Metric::WkbPerOp);

/// Other spellings of a metric's key that a step file's own `metrics` object may use (results
/// written some other way; docs/report.md). dbperf's `hardware` is read by the Metric itself.
fn aliases(m: Metric) -> &'static [&'static str] {
    match m {
        Metric::Cpupq => &["host_cpu_us_per_op"],
        Metric::ClientCpuUsPerOp => &["ccpupq", "client_cpupq"],
        Metric::ServerCpuUsPerOp => &["scpupq", "server_cpupq", "dbms_cpu_us_per_op"],
        Metric::RssGb => &["rss"],
        Metric::CpuPerOp => &["cpu/o"],
        Metric::CsPerOp => &["cs/o", "cspq"],
        Metric::RPerOp => &["r/o", "rpq"],
        Metric::RkbPerOp => &["rKB/o", "rkbpq"],
        Metric::WkbPerOp => &["wKB/o"],
        _ => &[],
    }
}

/// The report's column of a metric a report shows (those of `HW_METRICS` and `SB_METRICS`).
fn metric_column(m: Metric) -> Option<Column> {
    let c = m.column()?;
    let better = match c.better {
        metric::Better::Higher => Better::Higher,
        metric::Better::Lower => Better::Lower,
        metric::Better::Neither => Better::Neither,
    };
    Some(Column::new(m.key(), c.label, c.unit, c.definition, better))
}

/// The metric columns the steps carry: the known ones in their order, then any other
/// top-level number of a `metrics` object by name. A column appears when at least one step has
/// a number for it; a step without one gets a gap. Each with the keys to read in each step.
pub fn metric_columns(steps: &[&StepView], known: &[Metric]) -> Vec<(Column, Vec<String>)> {
    let has_number = |names: &[String]| {
        steps.iter().any(|s| {
            names
                .iter()
                .any(|n| matches!(s.metrics.get(n), Some(Some(_))))
        })
    };
    let mut out = Vec::new();
    for &m in known {
        let names: Vec<String> = std::iter::once(m.key())
            .chain(aliases(m).iter().copied())
            .map(String::from)
            .collect();
        if let Some(col) = metric_column(m).filter(|_| has_number(&names)) {
            out.push((col, names));
        }
    }
    // Keys of either suite's table are never "other" columns of the other suite's.
    let known_anywhere = |k: &str| {
        HW_METRICS
            .iter()
            .chain(SB_METRICS)
            .any(|&m| m.key() == k || aliases(m).contains(&k))
    };
    let mut extra: Vec<&String> = steps
        .iter()
        .flat_map(|s| s.metrics.keys())
        .filter(|k| !known_anywhere(k))
        .collect();
    extra.sort();
    extra.dedup();
    for k in extra {
        let names = vec![k.clone()];
        if has_number(&names) {
            out.push((
                Column::new(
                    k,
                    k,
                    "",
                    "as the result names it (docs/metrics.md)",
                    Better::Neither,
                ),
                names,
            ));
        }
    }
    out
}

/// "Not measured: IO: no block device found … (a, b); server CPU: … (a)": why hardware figures
/// are missing, each reason once with the targets it applies to.
pub fn not_measured(ctx: &Ctx, steps: &[(usize, &StepView)]) -> Option<String> {
    let mut reasons: Vec<(String, Vec<&str>)> = Vec::new();
    for (i, s) in steps {
        for m in &s.not_measured {
            let name = ctx.all[*i].name();
            match reasons.iter_mut().find(|r| r.0 == *m) {
                Some(r) if !r.1.contains(&name) => r.1.push(name),
                Some(_) => {}
                None => reasons.push((m.clone(), vec![name])),
            }
        }
    }
    (!reasons.is_empty()).then(|| {
        let parts: Vec<String> = reasons
            .iter()
            .map(|(m, ts)| format!("{m} ({})", ts.join(", ")))
            .collect();
        format!("Not measured: {}.", parts.join("; "))
    })
}

/// Which CPU figures rest on fewer than 100 clock ticks of 10 ms, with the targets and steps:
/// one tick more or less moves them by a percent or more.
pub fn rough_cpu(ctx: &Ctx, steps: &[(usize, &StepView)]) -> Option<String> {
    let mut found: Vec<(&str, Vec<String>)> = Vec::new();
    for (i, s) in steps {
        for what in &s.rough_cpu {
            let at = format!("{} {}", ctx.all[*i].name(), s.name);
            match found.iter_mut().find(|r| r.0 == *what) {
                Some(r) => r.1.push(at),
                None => found.push((what, vec![at])),
            }
        }
    }
    (!found.is_empty()).then(|| {
        let parts: Vec<String> = found
            .iter()
            .map(|(w, at)| {
                let more = at.len().saturating_sub(4);
                let mut list = at.iter().take(4).cloned().collect::<Vec<_>>().join(", ");
                if more > 0 {
                    list.push_str(&format!(" and {more} more"));
                }
                format!("{w} CPU ({list})")
            })
            .collect();
        format!(
            "Rough: {} rest on fewer than 100 clock ticks (1 s of CPU), so a tick more or less moves them by 1% or more; longer steps give firmer figures.",
            parts.join("; ")
        )
    })
}

pub fn metric_value(s: &StepView, names: &[String]) -> Option<f64> {
    names
        .iter()
        .find_map(|n| s.metrics.get(n))
        .copied()
        .flatten()
}

/// Each round's values of a metrics table's columns, for one target: `[column][round]`, only
/// rounds whose step ended ok and had the value. Empty outside a campaign (one run).
pub fn round_values(
    t: &TargetResult,
    step: &str,
    columns: usize,
    value: &dyn Fn(&StepView, usize) -> Option<f64>,
) -> Vec<Vec<f64>> {
    let mut out = vec![Vec::new(); columns];
    for r in &t.repeats {
        if let Some(s) = r.step(step).filter(|s| s.ok()) {
            for (c, o) in out.iter_mut().enumerate() {
                if let Some(x) = value(s, c).filter(|x| x.is_finite()) {
                    o.push(x);
                }
            }
        }
    }
    out
}

/// Per target (row), its value of each column; None for a target whose step has no numbers.
pub type Values = Vec<Option<Vec<Option<f64>>>>;
/// Per target, per column, the value in each round (`round_values`).
pub type Rounds = Vec<Vec<Vec<f64>>>;

/// The rows of a metrics table of `step`, one per target of the section: column `c`'s value
/// `value(step, c)` to significant digits, a gap where the result lacks it, and the state's
/// cell where the step did not end ok. With the values and their rounds, for the relative
/// table (`relative_rows`).
pub fn metric_rows(
    ctx: &Ctx,
    step: &str,
    columns: usize,
    value: &dyn Fn(&StepView, usize) -> Option<f64>,
) -> (Vec<Row>, Values, Rounds) {
    let (mut rows, mut values, mut rounds) = (Vec::new(), Vec::new(), Vec::new());
    for &i in &ctx.idx {
        let t = &ctx.all[i];
        rounds.push(round_values(t, step, columns, value));
        let (cells, note, v) = match state(t, step) {
            State::Ok(s) => {
                let v: Vec<Option<f64>> = (0..columns).map(|c| value(s, c)).collect();
                let cells = v
                    .iter()
                    .map(|x| match x {
                        Some(x) => Cell::num(*x, super::number::sig(*x)),
                        None => Cell::gap("not in this target's result"),
                    })
                    .collect();
                (cells, None, Some(v))
            }
            State::No(c) => (vec![c.clone(); columns], c.note.clone(), None),
        };
        rows.push(Row {
            label: t.name().into(),
            target: Some(i),
            cells,
            note,
        });
        values.push(v);
    }
    (rows, values, rounds)
}

/// Why column `c` of a campaign's relative metrics cell is not judged: the figure is missing
/// from some rounds of a side (the original's rate percentiles need 10 full seconds, which a
/// step near that length has in one round and not the next), so its median stands for a
/// round or two that the other side's does not, and neither an interval nor the threshold
/// alone says anything (an A/A pair's l.i1 p50 rate was called 0.89 on one round against one).
fn partial_rounds(
    t: Option<&Vec<Vec<f64>>>,
    b: Option<&Vec<Vec<f64>>>,
    c: usize,
) -> Option<String> {
    let (t, b) = (t?, b?);
    let ran = |v: &Vec<Vec<f64>>| v.iter().map(Vec::len).max().unwrap_or(0);
    let (tn, bn) = (t.get(c).map_or(0, Vec::len), b.get(c).map_or(0, Vec::len));
    (tn < ran(t) || bn < ran(b)).then(|| {
        format!(
            "not judged: the figure is in {tn} of {} rounds of this target and {bn} of {} of the base's",
            ran(t),
            ran(b)
        )
    })
}

/// The rows of a relative table: each target's values against the base target's (row `base`),
/// or the absolute row's cells as they are where a target has no values (a gap, a failure).
/// A cell is called better or worse only when its 95% interval over the rounds (`rounds`,
/// `[row][column][round]`) clears a threshold; with fewer than 3 rounds there is no interval
/// and a cell beyond the threshold is unconfirmed, as its note says. Returns the rows and what
/// was called.
pub fn relative_rows(
    abs: &Table,
    values: &[Option<Vec<Option<f64>>>],
    rounds: &[Vec<Vec<f64>>],
    base: usize,
    columns: &[Column],
    ctx: &Ctx,
) -> (Vec<Row>, Tally) {
    let mut tally = Tally {
        subject: Subject::Figure,
        ..Tally::default()
    };
    let rows = abs
        .rows
        .iter()
        .enumerate()
        .map(|(r, row)| Row {
            label: row.label.clone(),
            target: row.target,
            cells: match &values[r] {
                Some(v) => v
                    .iter()
                    .enumerate()
                    .map(|(c, x)| {
                        let b = values[base].as_ref().and_then(|bv| bv[c]);
                        let better = columns[c].better;
                        let mut cell = super::rules::rel_cell(*x, b, better, ctx.thresholds);
                        if r != base && better != Better::Neither {
                            if let Some(note) = partial_rounds(rounds.get(r), rounds.get(base), c) {
                                if let super::model::Value::Num(_) = cell.value {
                                    cell.mark = super::model::Mark::None;
                                    cell.note = Some(note);
                                }
                                return cell;
                            }
                            let iv = match (cell.value, rounds.get(r), rounds.get(base)) {
                                (super::model::Value::Num(ratio), Some(t), Some(b)) => {
                                    welch::rounds_interval(&t[c], &b[c], ratio)
                                }
                                _ => None,
                            };
                            tally.add(confidence::judge(
                                &mut cell,
                                iv,
                                better,
                                ctx.thresholds,
                                Subject::Figure,
                            ));
                        }
                        cell
                    })
                    .collect(),
                None => row.cells.clone(),
            },
            note: row.note.clone(),
        })
        .collect();
    (rows, tally)
}

#[cfg(test)]
mod tests {
    use super::partial_rounds;

    #[test]
    fn a_figure_missing_from_some_rounds_is_not_judged() {
        // [column][round]: column 1 is in one round of the base's three.
        let t = vec![vec![1.0, 2.0, 3.0], vec![5.0, 6.0, 7.0]];
        let b = vec![vec![1.0, 2.0, 3.0], vec![5.0]];
        assert_eq!(partial_rounds(Some(&t), Some(&b), 0), None);
        let n = partial_rounds(Some(&t), Some(&b), 1).unwrap();
        assert_eq!(
            n,
            "not judged: the figure is in 3 of 3 rounds of this target and 1 of 3 of the base's"
        );
        // One run a side (no rounds): nothing to say.
        assert_eq!(
            partial_rounds(Some(&vec![vec![]; 2]), Some(&vec![vec![]; 2]), 1),
            None
        );
    }
}
