//! What both suites' sections share: why a step has no number, the relative-table legend, and
//! the metric columns a step file's `metrics` object brings.

use super::confidence::{self, Subject, Tally};
use super::context::Ctx;
use super::model::{Better, Cell, Column, Mark, Row, Table};
use super::target::{StepView, TargetResult};
use crate::analysis::welch;

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

/// Hardware and DBMS metrics of the Insert Benchmark (issue 4). Order = the original's columns.
pub const HW_METRICS: &[MetricDef] = &[
    MetricDef(
        "rps",
        &[],
        "rps",
        "/s",
        "device reads per second",
        Better::Neither,
    ),
    MetricDef(
        "rmbps",
        &[],
        "rmbps",
        "MB/s",
        "device MB read per second",
        Better::Neither,
    ),
    MetricDef(
        "wps",
        &[],
        "wps",
        "/s",
        "device writes per second",
        Better::Neither,
    ),
    MetricDef(
        "wmbps",
        &[],
        "wmbps",
        "MB/s",
        "device MB written per second",
        Better::Neither,
    ),
    MetricDef(
        "rpq",
        &[],
        "rpq",
        "reads/op",
        "device reads per operation",
        Better::Lower,
    ),
    MetricDef(
        "rkbpq",
        &[],
        "rkbpq",
        "KB/op",
        "KB read per operation",
        Better::Lower,
    ),
    MetricDef(
        "wpi",
        &[],
        "wpi",
        "writes/insert",
        "device writes per inserted row",
        Better::Lower,
    ),
    MetricDef(
        "wkbpi",
        &[],
        "wkbpi",
        "KB/insert",
        "KB written per inserted row",
        Better::Lower,
    ),
    MetricDef(
        "csps",
        &[],
        "csps",
        "/s",
        "context switches per second (host)",
        Better::Neither,
    ),
    MetricDef(
        "cpups",
        &[],
        "cpups",
        "%",
        "host CPU busy, user + system, % of all CPUs",
        Better::Neither,
    ),
    MetricDef(
        "cspq",
        &[],
        "cspq",
        "cs/op",
        "context switches per operation",
        Better::Lower,
    ),
    MetricDef(
        "cpupq",
        &["host_cpu_us_per_op"],
        "cpupq",
        "µs/op",
        "host CPU µs per operation, all processes",
        Better::Lower,
    ),
    MetricDef(
        "client_cpu_us_per_op",
        &["ccpupq", "client_cpupq"],
        "client cpu",
        "µs/op",
        "CPU of the dbperf client per operation",
        Better::Lower,
    ),
    MetricDef(
        "server_cpu_us_per_op",
        &["scpupq", "server_cpupq", "dbms_cpu_us_per_op"],
        "server cpu",
        "µs/op",
        "CPU of the DBMS processes per operation",
        Better::Lower,
    ),
    MetricDef(
        "dbgb1",
        &[],
        "dbgb1",
        "GB",
        "database size as the DBMS reports it",
        Better::Lower,
    ),
    MetricDef(
        "dbgb2",
        &[],
        "dbgb2",
        "GB",
        "size of the database directory on disk",
        Better::Lower,
    ),
    MetricDef(
        "rss_gb",
        &["rss"],
        "rss",
        "GB",
        "resident memory of the DBMS",
        Better::Lower,
    ),
    // iostat's extended columns (the original saves them per step; dbperf shows them). They
    // describe the device over the step, which every other process on it shares (and await
    // counts in whole milliseconds), not what the DBMS asked of it per operation: shown, not
    // ranked better or worse, so no verdict is called on them.
    MetricDef(
        "util_pct",
        &[],
        "%util",
        "%",
        "share of the time the data devices had a request in flight (iostat %util)",
        Better::Neither,
    ),
    MetricDef(
        "aqu_sz",
        &[],
        "aqu-sz",
        "",
        "mean requests in flight on the data devices (iostat aqu-sz)",
        Better::Neither,
    ),
    MetricDef(
        "r_await_ms",
        &[],
        "r_await",
        "ms",
        "mean time per completed read, queue included (iostat r_await)",
        Better::Neither,
    ),
    MetricDef(
        "w_await_ms",
        &[],
        "w_await",
        "ms",
        "mean time per completed write, queue included (iostat w_await)",
        Better::Neither,
    ),
];

/// sysbench metrics (spec §3.4): key, other spellings, label, unit, definition, direction.
pub const SB_METRICS: &[MetricDef] = &[
    MetricDef(
        "cpu_per_op",
        &["cpu/o"],
        "cpu/o",
        "",
        "CPU per operation: (user + system %) / o/s",
        Better::Lower,
    ),
    MetricDef(
        "cs_per_op",
        &["cs/o", "cspq"],
        "cs/o",
        "",
        "context switches per operation",
        Better::Lower,
    ),
    MetricDef(
        "r_per_op",
        &["r/o", "rpq"],
        "r/o",
        "",
        "device reads per operation",
        Better::Lower,
    ),
    MetricDef(
        "rkb_per_op",
        &["rKB/o", "rkbpq"],
        "rKB/o",
        "KB",
        "KB read per operation",
        Better::Lower,
    ),
    MetricDef(
        "wkb_per_op",
        &["wKB/o"],
        "wKB/o",
        "KB",
        "KB written per operation",
        Better::Lower,
    ),
];

/// The metric columns the steps carry: the known ones in their order, then any other
/// top-level number of a `metrics` object by name. A column appears when at least one step has
/// a number for it; a step without one gets a gap. Each with the keys to read in each step.
pub fn metric_columns(steps: &[&StepView], known: &[MetricDef]) -> Vec<(Column, Vec<String>)> {
    let has_number = |names: &[String]| {
        steps.iter().any(|s| {
            names
                .iter()
                .any(|n| matches!(s.metrics.get(n), Some(Some(_))))
        })
    };
    let mut out = Vec::new();
    for MetricDef(key, aliases, label, unit, help, better) in known {
        let names: Vec<String> = std::iter::once(*key)
            .chain(aliases.iter().copied())
            .map(String::from)
            .collect();
        if has_number(&names) {
            out.push((Column::new(key, label, unit, help, *better), names));
        }
    }
    // Keys of either suite's table are never "other" columns of the other suite's.
    let known_anywhere = |k: &str| {
        HW_METRICS
            .iter()
            .chain(SB_METRICS)
            .any(|m| m.0 == k || m.1.contains(&k))
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
/// `[row][column][round]`) clears a threshold; with fewer than 3 rounds on the threshold alone,
/// and its note says so. Returns the rows and what was called.
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
