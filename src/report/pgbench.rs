//! The pgbench report: per target and run step, TPS (the headline, as pgbench 15 prints it)
//! with its ratio to the base and the confidence verdict, the initial connection time, each
//! script's transactions, statements per transaction and 99th percentile latency, failures and
//! retries; then each command's mean latency (pgbench -r). What is read from a result is in
//! docs/pgbench.md ("Results").

use super::confidence;
use super::context::Ctx;
use super::model::{Better, Block, Cell, Column, Kind, Row, Section, Table};
use super::number;
use super::rules::rel_cell;
use super::target::{StepView, TargetResult};
use crate::results::pgbench::PgbenchRun;

/// The suite's name, which its tables' ids carry.
const PGBENCH: &str = crate::suites::Suite::Pgbench.name();

fn num(v: Option<f64>, why: &str) -> Cell {
    match v.filter(|x| x.is_finite() && *x >= 0.0) {
        Some(x) => Cell::num(x, number::sig(x)),
        None => Cell::gap(why),
    }
}

/// pgbench's part of a run step; None for the init.
fn part(s: &StepView) -> Option<&PgbenchRun> {
    match &s.payload {
        Some(crate::results::Payload::Pgbench(p)) => p.run.as_ref(),
        _ => None,
    }
}

fn columns(relative: bool) -> Vec<Column> {
    let mut c = vec![Column::new(
        "tps",
        "TPS",
        "trx/s",
        "transactions that ended without an error per second, without the initial connection \
         time (the step's headline)",
        Better::Higher,
    )];
    if relative {
        c.push(Column::new(
            "tps_rel",
            "TPS / base",
            "",
            "TPS over the base target's at the same step; called faster or slower only when its \
             95% interval clears the threshold",
            Better::Higher,
        ));
    }
    c.extend([
        Column::new(
            "connect_ms",
            "initial connection",
            "ms",
            "the mean time a client took to connect before the step",
            Better::Lower,
        ),
        Column::new(
            "p99",
            "p99 latency",
            "ms",
            "99th percentile latency of a transaction (the slowest script's), from its intended \
             start to its last command's reply",
            Better::Lower,
        ),
        Column::new(
            "statements",
            "statements/trx",
            "",
            "SQL commands sent per transaction, over all scripts",
            Better::Neither,
        ),
        Column::new(
            "failed",
            "failed",
            "trx",
            "transactions that failed after their last try (serialization failures, deadlocks, \
             errors --ignore-errors lets pass)",
            Better::Lower,
        ),
        Column::new(
            "retries",
            "retries",
            "",
            "tries after the first, over all transactions (--max-tries)",
            Better::Lower,
        ),
    ]);
    c
}

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
    let r = part(s);
    let mut cells = vec![num(
        ok.then_some(s.headline.value),
        "the step did not end ok",
    )];
    if ctx.relative {
        cells.push(against_base(t, s, ctx, tally));
    }
    cells.push(num(r.map(|x| x.initial_connection_ms), "not measured"));
    let p99 = r.and_then(|x| {
        x.scripts
            .iter()
            .filter_map(|sc| s.ops.get(&sc.name).filter(|o| o.count > 0))
            .map(|o| o.latency_us.p99 / 1000.0)
            .reduce(f64::max)
    });
    cells.push(num(p99, "none ran"));
    let statements = r.and_then(|x| {
        let n: u64 = x.scripts.iter().map(|s| s.transactions).sum();
        let sent: f64 = x
            .scripts
            .iter()
            .filter_map(|s| {
                s.statements_per_transaction
                    .map(|v| v * s.transactions as f64)
            })
            .sum();
        (n > 0).then(|| sent / n as f64)
    });
    cells.push(num(statements, "none ran"));
    cells.push(num(r.map(|x| x.failed as f64), "not measured"));
    cells.push(num(r.map(|x| x.retries as f64), "not measured"));
    Row {
        label: format!("{} · {}", t.shown_name(), s.name),
        target: Some(i),
        cells,
        note: s.error.clone(),
    }
}

/// Each command's mean latency, per target, step and script (pgbench -r).
fn commands(ctx: &Ctx) -> Table {
    let mut rows = Vec::new();
    for &i in &ctx.idx {
        let t = &ctx.all[i];
        for s in &t.steps {
            let Some(r) = part(s) else { continue };
            for sc in &r.scripts {
                for c in &sc.commands {
                    rows.push(Row {
                        label: format!("{} · {} · {}:{}", t.shown_name(), s.name, sc.name, c.line),
                        target: Some(i),
                        cells: vec![
                            Cell::text(c.text.clone()),
                            num(Some(c.count as f64), ""),
                            num(c.latency_ms, "never ran"),
                        ],
                        note: None,
                    });
                }
            }
        }
    }
    Table {
        id: format!("{PGBENCH}-commands"),
        title: "Latency per command (pgbench -r)".into(),
        kind: Kind::Info,
        suite: PGBENCH,
        step: None,
        op: None,
        row_header: "target · step · script:line".into(),
        columns: vec![
            Column::new(
                "command",
                "command",
                "",
                "the command's first line",
                Better::Neither,
            ),
            Column::new("count", "count", "", "times it ran", Better::Neither),
            Column::new(
                "latency",
                "mean latency",
                "ms",
                "its mean time from sending it to its result",
                Better::Lower,
            ),
        ],
        rows,
        legend: None,
        source: None,
        base: None,
    }
}

pub fn build(ctx: &Ctx) -> Section {
    let mut sec = Section::new(PGBENCH, crate::suites::Suite::Pgbench.entry().title);
    sec.blocks.push(Block::Text(
        "Transactions per second of each run step as pgbench 15 counts them (without the \
         initial connection time), with the initial connection time, the slowest script's 99th \
         percentile latency, statements per transaction, failures and retries; then each \
         command's mean latency, as pgbench -r prints it (docs/pgbench.md)."
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
        id: format!("{PGBENCH}-tps"),
        title: "Transactions per second".into(),
        kind: Kind::Info,
        suite: PGBENCH,
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
    sec.blocks.push(Block::Table(commands(ctx)));
    sec
}
