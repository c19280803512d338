//! A step's metrics table, absolute and relative to the base: the original's summary columns
//! (ips, qps, the hardware figures, maxop, the per-second rate percentiles, secs).

use super::steps::{headline, is_qrqp, main_op, table};
use crate::report::common::{
    metric_columns, metric_value, rel_legend, relative_rows, round_values, sanitize, state, State,
    HW_METRICS,
};
use crate::report::confidence::Tally;
use crate::report::context::Ctx;
use crate::report::model::{Better, Cell, Column, Kind, Row, Table};
use crate::report::number;
use crate::report::target::StepView;
use crate::results::metric::{Metric, Style};

type Getter = Box<dyn Fn(&StepView) -> Option<f64>>;
/// Per target (row), its value of each column; None for a target whose step has no numbers.
type Values = Vec<Option<Vec<Option<f64>>>>;
/// Per target, per column, the value in each round (`round_values`).
type Rounds = Vec<Vec<Vec<f64>>>;

/// The absolute table, and the relative one with what its verdicts called when there is more
/// than one target.
pub fn tables(ctx: &Ctx, step: &str, oks: &[&StepView]) -> (Table, Option<(Table, Tally)>) {
    let cols = columns(step, oks);
    let columns: Vec<Column> = cols.iter().map(|(c, _)| c.clone()).collect();
    let (abs, values, rounds) = absolute(ctx, step, &cols, &columns);
    let rel = ctx.relative.then(|| {
        let mut rel = table(
            format!("ibench-{}-metrics-rel", sanitize(step)),
            format!("{step}: metrics relative to the base"),
            Kind::Relative,
            Some(step),
            Column::ratios(&columns),
        );
        let bi = ctx
            .idx
            .iter()
            .position(|i| *i == ctx.suite_base())
            .unwrap_or(0);
        let (rows, tally) = relative_rows(&abs, &values, &rounds, bi, &columns, ctx);
        rel.rows = rows;
        rel.legend = Some(rel_legend(ctx));
        rel.base = Some(ctx.base_name().into());
        (rel, tally)
    });
    (abs, rel)
}

/// The columns of the step's table in the original's order, each with how a step gives it.
fn columns(step: &str, oks: &[&StepView]) -> Vec<(Column, Getter)> {
    let q = is_qrqp(step);
    let mut cols = rate_columns(step, oks);
    for (col, names) in metric_columns(oks, HW_METRICS) {
        cols.push((col, Box::new(move |s: &StepView| metric_value(s, &names))));
    }
    let op = main_op(step);
    cols.push((
        Column::new(
            "maxop",
            "maxop",
            "ms",
            &format!("largest {op} latency (the original's maxop, in ms)"),
            Better::Lower,
        ),
        Box::new(move |s: &StepView| s.ops.get(op).map(|o| o.max_ms)),
    ));
    if step != "l.x" {
        let r = if q { "qps" } else { "ips" };
        for p in ["p50", "p99"] {
            let key = format!("{r}_{p}_interval");
            let k2 = key.clone();
            cols.push((
                Column::new(
                    &key,
                    &key,
                    if q { "queries/s" } else { "rows/s" },
                    &format!(
                        "the per-second rate that {}% of the seconds met or beat (the original's {p}); none below 10 s",
                        &p[1..]
                    ),
                    Better::Higher,
                ),
                Box::new(move |s: &StepView| s.rate_percentiles.get(&k2).copied().flatten()),
            ));
        }
    }
    cols.push((
        Column::new("secs", "secs", "s", "measured step time", Better::Lower),
        Box::new(|s: &StepView| Some(s.duration_s)),
    ));
    cols
}

/// ips (l.x: indexed rows/s, its headline), and qps when any target's step ran queries.
fn rate_columns(step: &str, oks: &[&StepView]) -> Vec<(Column, Getter)> {
    let mut cols: Vec<(Column, Getter)> = Vec::new();
    if step == "l.x" {
        cols.push((
            Column::new(
                "ips",
                "ips",
                "rows/s",
                "indexed rows per second (the headline)",
                Better::Higher,
            ),
            Box::new(headline),
        ));
    } else {
        cols.push((
            Column::new(
                "ips",
                "ips",
                "rows/s",
                "rows inserted per second",
                Better::Higher,
            ),
            Box::new(|s: &StepView| s.ops.get("insert").map(|o| o.rows_per_s)),
        ));
    }
    if oks.iter().any(|s| s.ops.contains_key("query")) {
        cols.push((
            Column::new(
                "qps",
                "qps",
                "queries/s",
                "queries per second",
                Better::Higher,
            ),
            Box::new(|s: &StepView| s.ops.get("query").map(|o| o.ops_per_s)),
        ));
    }
    cols
}

/// The absolute table, with each target's values and their rounds for the relative one.
fn absolute(
    ctx: &Ctx,
    step: &str,
    cols: &[(Column, Getter)],
    columns: &[Column],
) -> (Table, Values, Rounds) {
    let mut abs = table(
        format!("ibench-{}-metrics", sanitize(step)),
        format!("{step}: metrics"),
        Kind::Absolute,
        Some(step),
        columns.to_vec(),
    );
    let mut values: Values = Vec::new();
    let mut rounds: Rounds = Vec::new();
    for &i in &ctx.idx {
        let t = &ctx.all[i];
        rounds.push(round_values(t, step, cols.len(), &|s, c| (cols[c].1)(s)));
        match state(t, step) {
            State::Ok(s) => {
                let v: Vec<Option<f64>> = cols.iter().map(|(_, g)| g(s)).collect();
                let cells = v
                    .iter()
                    .zip(columns)
                    .map(|(x, c)| match x {
                        Some(x) => Cell::num(*x, column_number(&c.key, *x)),
                        None => Cell::gap("not in this target's result"),
                    })
                    .collect();
                abs.rows.push(Row {
                    label: t.name().into(),
                    target: Some(i),
                    cells,
                    note: None,
                });
                values.push(Some(v));
            }
            State::No(c) => {
                abs.rows.push(Row {
                    label: t.name().into(),
                    target: Some(i),
                    cells: columns.iter().map(|_| c.clone()).collect(),
                    note: c.note.clone(),
                });
                values.push(None);
            }
        }
    }
    abs.legend = Some(
        "ips: rows inserted/s (l.x: indexed rows/s); qps: queries/s; maxop: largest latency of the step's main operation, ms; <r>_p50/p99_interval: percentiles of the per-second rate, sorted descending; secs: measured step time. Hardware columns as docs/metrics.md defines them."
            .into(),
    );
    (abs, values, rounds)
}

/// A metrics column's number in the style of what the column holds (`number`): a hardware
/// metric in its own style (per-second IO and context switches as rates), the rates as rates,
/// the largest latency and the step's seconds as latencies are, every other figure to 3
/// significant digits.
fn column_number(key: &str, v: f64) -> String {
    if let Some(m) = Metric::from_key(key) {
        return match m.style() {
            Style::Rate => number::rate(v),
            Style::Sig => number::sig(v),
        };
    }
    match key {
        "ips" | "qps" => number::rate(v),
        k if k.ends_with("_interval") => number::rate(v),
        "maxop" | "secs" => number::ms(v),
        _ => number::sig(v),
    }
}
