//! What both suites' sections share: why a step has no number, the relative-table legend, and
//! the metric columns a step file's `metrics` object brings.

use super::input::{StepView, TargetResult};
use super::model::{Better, Cell, Column, Mark, Row, Table};
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

pub fn metric_value(s: &StepView, names: &[String]) -> Option<f64> {
    names
        .iter()
        .find_map(|n| s.metrics.get(n))
        .copied()
        .flatten()
}

/// The rows of a relative table: each target's values against the base target's (row `base`),
/// or the absolute row's cells as they are where a target has no values (a gap, a failure).
pub fn relative_rows(
    abs: &Table,
    values: &[Option<Vec<Option<f64>>>],
    base: usize,
    columns: &[Column],
    ctx: &Ctx,
) -> Vec<Row> {
    abs.rows
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
                        super::rules::rel_cell(*x, b, columns[c].better, ctx.thresholds)
                    })
                    .collect(),
                None => row.cells.clone(),
            },
            note: row.note.clone(),
        })
        .collect()
}
