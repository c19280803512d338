//! The TPC-C report: per target and run step, New-Orders per minute (the headline, as HammerDB
//! reports it) with its ratio to the base, transactions per minute, each transaction's count
//! and latency, retries, and whether the consistency conditions held. What is read from a
//! result is in docs/report.md ("TPC-C results").

use super::confidence;
use super::context::Ctx;
use super::model::{Better, Block, Cell, Column, Kind, Row, Section, Table};
use super::number;
use super::rules::rel_cell;
use super::target::{StepView, TargetResult};
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
    sec.blocks.push(Block::Table(Table {
        id: format!("{TPCC}-nopm"),
        title: "New-Orders per minute".into(),
        kind: Kind::Info,
        suite: TPCC,
        step: None,
        op: None,
        row_header: "target · step".into(),
        columns: columns(ctx.relative),
        rows,
        legend: None,
        source: None,
        base: None,
    }));
    if let Some(t) = verdicts {
        sec.blocks.push(Block::Text(t));
    }
    sec
}
