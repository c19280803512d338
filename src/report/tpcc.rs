//! The TPC-C report: per target and run step, New-Orders per minute (the headline, as HammerDB
//! reports it) with its ratio to the base, transactions per minute, each transaction's count
//! and latency, retries, and whether the consistency conditions held; then per run step the
//! sections every suite has: the hardware each New-Order cost (absolute and against the
//! base), the IO of each device, and each transaction's latency against the base. What is read
//! from a result is in docs/report.md ("TPC-C results").

use super::common::{
    metric_columns, metric_rows, metric_value, not_measured, rel_legend, relative_rows, rough_cpu,
    sanitize, state, Rounds, State, Values, HW_METRICS,
};
use super::confidence;
use super::context::Ctx;
use super::model::{Better, Block, Cell, Column, Kind, Row, Section, Table};
use super::number;
use super::rules::rel_cell;
use super::target::{StepView, TargetResult};
use super::{devices, latency};
use crate::results::tpcc::TRANSACTIONS;

/// The suite's name, which its tables' ids carry.
const TPCC: &str = crate::suites::Suite::Tpcc.name();

fn num(v: Option<f64>, why: &str) -> Cell {
    match v.filter(|x| x.is_finite() && *x >= 0.0) {
        Some(x) => Cell::num(x, number::sig(x)),
        None => Cell::gap(why),
    }
}

/// "12 of 12", or the conditions that did not hold.
fn consistency(s: &StepView) -> Cell {
    let Some(t) = part(s) else {
        return Cell::gap("not a TPC-C run step");
    };
    if t.consistency.is_empty() {
        return Cell::gap("not checked (--check off, or the step did not end ok)");
    }
    let failed: Vec<String> = t
        .consistency
        .iter()
        .filter(|c| !c.held)
        .map(|c| c.condition.to_string())
        .collect();
    if failed.is_empty() {
        Cell::text(format!("all {} held", t.consistency.len()))
    } else {
        Cell::text(format!("broken: {}", failed.join(", ")))
    }
}

/// Whether every New-Order dbperf counted as committed is in the database.
fn in_database(s: &StepView) -> Cell {
    match part(s).map(|t| (t.new_orders_step, t.new_orders_in_database)) {
        Some((n, Some(db))) if n == db => Cell::text("yes"),
        Some((n, Some(db))) => Cell::text(format!("no: {n} counted, {db} in the database")),
        _ => Cell::gap("not read"),
    }
}

fn columns(relative: bool) -> Vec<Column> {
    let mut c = vec![Column::new(
        "nopm",
        "NOPM",
        "New-Orders/min",
        "New-Orders committed per minute of measured time (the step's headline)",
        Better::Higher,
    )];
    if relative {
        c.push(Column::new(
            "nopm_rel",
            "NOPM / base",
            "",
            "NOPM over the base target's at the same step; called faster or slower only when \
             its 95% interval clears the threshold",
            Better::Higher,
        ));
    }
    c.push(Column::new(
        "tpm",
        "TPM",
        "trx/min",
        "transactions that ended (committed, or rolled back on purpose) per minute",
        Better::Higher,
    ));
    for k in TRANSACTIONS {
        c.push(Column::new(
            &format!("{k}_p99"),
            &format!("{k} p99"),
            "ms",
            "99th percentile latency of the transaction, from its start to its COMMIT's reply",
            Better::Lower,
        ));
    }
    c.push(Column::new(
        "retried",
        "retried",
        "trx",
        "transactions rolled back after a deadlock, serialization failure or lock wait \
         timeout and replaced by a new one",
        Better::Lower,
    ));
    c.push(Column::new(
        "consistency",
        "consistency",
        "",
        "the specification's consistency conditions after the step (clause 3.3.2)",
        Better::Neither,
    ));
    c.push(Column::new(
        "in_database",
        "New-Orders in DB",
        "",
        "whether the districts' order numbers grew by exactly the New-Orders counted as committed",
        Better::Neither,
    ));
    c
}

/// The step's NOPM against the base target's at the same step, called faster or slower only
/// when its confidence interval clears the threshold (docs/statistics.md).
fn against_base(t: &TargetResult, s: &StepView, ctx: &Ctx, tally: &mut confidence::Tally) -> Cell {
    let value = |v: &StepView| v.ok().then_some(v.headline.value);
    let Some(b) = ctx.all.get(ctx.suite_base()) else {
        return Cell::gap("no base target");
    };
    let Some(bs) = b.step(&s.name) else {
        return Cell::gap("the base has no such step");
    };
    let mut cell = rel_cell(value(s), value(bs), Better::Higher, ctx.thresholds);
    if !std::ptr::eq(t, b) {
        tally.add(confidence::judge_speed(
            &mut cell,
            t,
            b,
            &s.name,
            ctx.thresholds,
        ));
    }
    cell
}

fn row(t: &TargetResult, i: usize, s: &StepView, ctx: &Ctx, tally: &mut confidence::Tally) -> Row {
    let ok = s.ok();
    let mut cells = vec![num(
        ok.then_some(s.headline.value),
        "the step did not end ok",
    )];
    if ctx.relative {
        cells.push(against_base(t, s, ctx, tally));
    }
    cells.push(num(part(s).map(|x| x.tpm).filter(|_| ok), "not measured"));
    for k in TRANSACTIONS {
        let p99 = s
            .ops
            .get(k)
            .filter(|o| o.count > 0)
            .map(|o| o.latency_us.p99 / 1000.0);
        cells.push(num(p99, "none ran"));
    }
    cells.push(num(part(s).map(|x| x.retried as f64), "not measured"));
    cells.push(consistency(s));
    cells.push(in_database(s));
    Row {
        label: format!("{} · {}", t.shown_name(), s.name),
        target: Some(i),
        cells,
        note: s.error.clone(),
    }
}

/// TPC-C's part of a step file; None for its load.
fn part(s: &StepView) -> Option<&crate::results::tpcc::TpccStep> {
    match &s.payload {
        Some(crate::results::Payload::Tpcc(p)) => Some(p),
        _ => None,
    }
}

/// A table of the section: `id` and `title`, its rows to come.
fn new_table(
    id: String,
    title: String,
    kind: Kind,
    step: Option<&str>,
    columns: Vec<Column>,
) -> Table {
    Table {
        id,
        title,
        kind,
        suite: TPCC,
        step: step.map(String::from),
        op: None,
        row_header: "target".into(),
        columns,
        rows: Vec::new(),
        legend: None,
        source: None,
        base: None,
    }
}

/// The hardware a New-Order of `step` cost (the step files' figures per operation, which a
/// TPC-C run step counts in New-Orders), absolute and against the base; and what is missing
/// from them or rough.
fn hardware_blocks(ctx: &Ctx, step: &str) -> Vec<Block> {
    let oks: Vec<(usize, &StepView)> = ctx
        .idx
        .iter()
        .filter_map(|i| match state(&ctx.all[*i], step) {
            State::Ok(s) => Some((*i, s)),
            State::No(_) => None,
        })
        .collect();
    let steps: Vec<&StepView> = oks.iter().map(|(_, s)| *s).collect();
    let cols = metric_columns(&steps, HW_METRICS);
    let mut blocks = Vec::new();
    if cols.is_empty() {
        blocks.push(Block::Text(
            "No hardware metrics (CPU, IO, context switches per New-Order, sizes) in these results: their columns appear when step files carry them (docs/report.md).".into(),
        ));
    } else {
        let columns: Vec<Column> = cols.iter().map(|c| c.0.clone()).collect();
        let id = format!("{TPCC}-{}-metrics", sanitize(step));
        let mut abs = new_table(
            id.clone(),
            format!("{step}: hardware per New-Order"),
            Kind::Absolute,
            Some(step),
            columns.clone(),
        );
        let (rows, values, rounds) =
            metric_rows(ctx, step, cols.len(), &|s, c| metric_value(s, &cols[c].1));
        abs.rows = rows;
        abs.legend = Some(
            "Per New-Order committed in the measured time: the work of every transaction of the mix divided by the New-Orders, as NOPM counts them; the per-second columns over the measured time. Columns as docs/metrics.md defines them.".into(),
        );
        blocks.push(Block::Table(abs.clone()));
        if ctx.relative {
            blocks.extend(relative_hardware(ctx, step, &abs, &values, &rounds));
        }
    }
    blocks.extend(not_measured(ctx, &oks).map(Block::Text));
    blocks.extend(rough_cpu(ctx, &oks).map(Block::Text));
    blocks
}

/// The hardware per New-Order against the base's, each figure called better or worse only on
/// its interval over the rounds; and the line saying what was called.
fn relative_hardware(
    ctx: &Ctx,
    step: &str,
    abs: &Table,
    values: &Values,
    rounds: &Rounds,
) -> Vec<Block> {
    let bi = ctx
        .idx
        .iter()
        .position(|i| *i == ctx.suite_base())
        .unwrap_or(0);
    let mut rel = new_table(
        format!("{}-rel", abs.id),
        format!("{step}: hardware per New-Order relative to the base"),
        Kind::Relative,
        Some(step),
        Column::ratios(&abs.columns),
    );
    let (rows, tally) = relative_rows(abs, values, rounds, bi, &abs.columns, ctx);
    rel.rows = rows;
    rel.legend = Some(rel_legend(ctx));
    rel.base = Some(ctx.base_name().into());
    let mut blocks = vec![Block::Table(rel)];
    blocks.extend(tally.sentence().map(Block::Text));
    blocks
}

/// Each transaction's latency of `step` against the base's, a table each and one line for
/// them all (docs/statistics.md, "Latency").
fn latency_blocks(ctx: &Ctx, step: &str) -> Vec<Block> {
    let mut blocks = Vec::new();
    let mut tally = confidence::Tally::default();
    for op in TRANSACTIONS {
        let id = format!("{TPCC}-{}-lat-{}", sanitize(step), sanitize(op));
        let (t, x) = latency::table(ctx, &id, TPCC, step, op);
        tally.add(x);
        blocks.push(Block::Table(t));
    }
    if tally.compared > 0 {
        blocks.push(Block::Text(latency::sentence(&tally)));
    }
    blocks
}

/// The sections every suite has, for one run step: hardware per New-Order, IO per device,
/// and against a base each transaction's latency.
fn step_section(ctx: &Ctx, step: &str) -> Section {
    let mut sec = Section::new(format!("{TPCC}-{}", sanitize(step)), step);
    sec.blocks.extend(hardware_blocks(ctx, step));
    if let Some(t) = devices::table(ctx, TPCC, step, false) {
        sec.blocks.push(Block::Table(t));
    }
    if ctx.relative {
        sec.blocks.extend(latency_blocks(ctx, step));
    }
    sec
}

/// The run steps of the section's targets (those with a TPC-C part), in their order.
fn run_steps<'a>(ctx: &Ctx<'a>) -> Vec<&'a str> {
    let mut names: Vec<&str> = Vec::new();
    for &i in &ctx.idx {
        for s in ctx.all[i].steps.iter().filter(|s| part(s).is_some()) {
            if !names.contains(&s.name.as_str()) {
                names.push(&s.name);
            }
        }
    }
    names
}

pub fn build(ctx: &Ctx) -> Section {
    let mut sec = Section::new(TPCC, "TPC-C");
    sec.blocks.push(Block::Text(
        "New-Orders per minute (NOPM) of each run step, with transactions per minute, each \
         transaction's 99th percentile latency, retries and the consistency checks. TPC-C-like: \
         no keying or think time, so the figures compare with HammerDB's and sysbench-tpcc's, \
         not with audited results (docs/tpcc.md)."
            .into(),
    ));
    let mut rows = Vec::new();
    let mut tally = confidence::Tally::default();
    for &i in &ctx.idx {
        let t = &ctx.all[i];
        for s in t.steps.iter().filter(|s| part(s).is_some()) {
            rows.push(row(t, i, s, ctx, &mut tally));
        }
    }
    let verdicts = tally.sentence();
    let mut nopm = new_table(
        format!("{TPCC}-nopm"),
        "New-Orders per minute".into(),
        Kind::Info,
        None,
        columns(ctx.relative),
    );
    nopm.row_header = "target · step".into();
    nopm.rows = rows;
    sec.blocks.push(Block::Table(nopm));
    if let Some(t) = verdicts {
        sec.blocks.push(Block::Text(t));
    }
    for step in run_steps(ctx) {
        sec.sub.push(step_section(ctx, step));
    }
    sec
}
