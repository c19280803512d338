//! The Insert Benchmark report (spec §4): the three summary tables (absolute throughput with
//! quartile colours and SLA grey, relative throughput, background insert rates vs target), then
//! per step the metrics table absolute and relative, per-second charts, response-time buckets,
//! latency percentiles and the variance of each rate.

use super::chart::{self, Agg, Line, LineChart, XAxis};
use super::common::{
    metric_columns, metric_value, not_measured, rel_legend, relative_rows, rough_cpu, round_values,
    sanitize, state, State, HW_METRICS,
};
use super::confidence;
use super::context::Ctx;
use super::model::{Better, Block, Cell, Chart, Column, Kind, Mark, Row, Section, Table};
use super::number;
use super::rules::{quartiles, rel_cell, shade};
use super::target::{StepView, TargetResult};
use crate::analysis::variance;

const LOADS: [&str; 4] = ["l.i0", "l.x", "l.i1", "l.i2"];

fn is_qrqp(step: &str) -> bool {
    (step.starts_with("qr") || step.starts_with("qp"))
        && step.get(2..).is_some_and(|r| r.parse::<u64>().is_ok())
}

/// Steps of all targets: the loads in benchmark order, then qr/qp in the order they ran.
pub fn step_order(ts: &[&TargetResult]) -> Vec<String> {
    let mut names: Vec<String> = Vec::new();
    for t in ts {
        let files = t.steps.iter().map(|s| &s.name);
        for n in t.run.steps_planned.iter().chain(files) {
            if !names.contains(n) {
                names.push(n.clone());
            }
        }
    }
    let rank = |n: &str| LOADS.iter().position(|l| *l == n).unwrap_or(LOADS.len());
    names.sort_by_key(|n| rank(n));
    names
}

fn table(id: String, title: String, kind: Kind, step: Option<&str>, columns: Vec<Column>) -> Table {
    Table {
        id,
        title,
        kind,
        suite: "ibench",
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

const QUARTILE_LEGEND: &str = "Per column: green = top quarter of the range (max over targets that met the SLA), red = bottom quarter (none when min >= 0.8 x max), grey = the background inserts missed their SLA (qr/qp).";

pub fn build(ctx: &Ctx) -> Section {
    let ts: Vec<&TargetResult> = ctx.idx.iter().map(|i| &ctx.all[*i]).collect();
    let steps = step_order(&ts);
    let mut sec = Section::new("ibench", "Insert Benchmark");
    sec.blocks.push(Block::Text(describe_run(ctx)));
    sec.sub.push(summary(ctx, &steps));
    for s in &steps {
        sec.sub.push(step_section(ctx, s));
    }
    sec
}

fn describe_run(ctx: &Ctx) -> String {
    let t = &ctx.all[ctx.suite_base()];
    let p = &t.run.parameters;
    let n = |k: &str| p.get(k).and_then(|v| v.as_u64());
    let mut parts = Vec::new();
    if let Some(c) = n("clients") {
        parts.push(format!(
            "{c} client{}{}",
            if c == 1 { "" } else { "s" },
            if p.get("shared_table").and_then(|v| v.as_bool()) == Some(true) {
                " sharing one table"
            } else {
                ", one table each"
            }
        ));
    }
    let rows: Vec<String> = [
        ("l.i0", "rows_l_i0"),
        ("l.i1", "rows_l_i1"),
        ("l.i2", "rows_l_i2"),
    ]
    .iter()
    .filter_map(|(s, k)| n(k).map(|v| format!("{s} {}", number::rate(v as f64))))
    .collect();
    if !rows.is_empty() {
        parts.push(format!("rows per client: {}", rows.join(", ")));
    }
    if let Some(q) = n("query_seconds") {
        let rates: Vec<String> = p
            .get("rates")
            .and_then(|r| r.as_array())
            .map(|a| {
                a.iter()
                    .filter_map(|x| x.as_u64())
                    .map(|x| x.to_string())
                    .collect()
            })
            .unwrap_or_default();
        parts.push(format!(
            "qr/qp steps of {q} s with background inserts at {} rows/s per client",
            rates.join(", ")
        ));
    }
    if let Some(d) = p.get("deletes").and_then(|v| v.as_bool()) {
        parts.push(if d {
            "deletes keep the tables the same size".to_string()
        } else {
            "no deletes".to_string()
        });
    }
    format!(
        "Parameters of {} (preset {}): {}. Headline per step: inserts/s for l.i0, l.i1, l.i2; indexed rows/s for l.x; queries/s for qr/qp. Definitions: docs/metrics.md; how to read this report: docs/report.md.",
        t.name(),
        if t.run.preset.is_empty() { "?" } else { &t.run.preset },
        parts.join("; ")
    )
}

fn headline(s: &StepView) -> Option<f64> {
    Some(s.headline.value)
}

fn summary(ctx: &Ctx, steps: &[String]) -> Section {
    let mut sec = Section::new("ibench-summary", "Summary");
    let cols: Vec<Column> = steps
        .iter()
        .map(|s| {
            let (unit, help) = if s == "l.x" {
                ("rows/s", "indexed rows/s")
            } else if is_qrqp(s) {
                ("queries/s", "queries/s")
            } else {
                ("rows/s", "inserts/s")
            };
            Column::new(s, s, unit, help, Better::Higher)
        })
        .collect();

    // Absolute.
    let mut abs = table(
        "ibench-tput".into(),
        "Throughput: the headline of each step".into(),
        Kind::Absolute,
        None,
        cols.clone(),
    );
    let mut grid: Vec<Vec<Option<f64>>> = Vec::new();
    let mut met: Vec<Vec<bool>> = Vec::new();
    for &i in &ctx.idx {
        let t = &ctx.all[i];
        let mut cells = Vec::new();
        let mut vals = Vec::new();
        let mut oks = Vec::new();
        for s in steps {
            match state(t, s) {
                State::Ok(v) => {
                    let h = headline(v);
                    let sla_ok = v.sla.as_ref().and_then(|x| x.met) != Some(false);
                    let mut c = match h {
                        Some(h) => Cell::num(h, number::rate(h)),
                        None => Cell::gap("no headline"),
                    };
                    if !sla_ok {
                        c = c.note(sla_note(v));
                    }
                    cells.push(c);
                    vals.push(h);
                    oks.push(sla_ok);
                }
                State::No(c) => {
                    cells.push(c);
                    vals.push(None);
                    oks.push(true);
                }
            }
        }
        grid.push(vals);
        met.push(oks);
        abs.rows.push(Row {
            label: t.name().into(),
            target: Some(i),
            cells,
            note: None,
        });
    }
    for c in 0..steps.len() {
        let col: Vec<Option<f64>> = grid.iter().map(|r| r[c]).collect();
        let ok: Vec<bool> = met.iter().map(|r| r[c]).collect();
        for (r, m) in quartiles(&col, &ok, true, true).into_iter().enumerate() {
            if m != Mark::None {
                abs.rows[r].cells[c].mark = m;
            }
        }
    }
    abs.legend = Some(QUARTILE_LEGEND.into());
    sec.blocks.push(Block::Table(abs));

    // Relative.
    if ctx.relative {
        let mut rel = table(
            "ibench-tput-rel".into(),
            "Throughput relative to the base".into(),
            Kind::Relative,
            None,
            Column::ratios(&cols),
        );
        let bi = ctx
            .idx
            .iter()
            .position(|i| *i == ctx.suite_base())
            .unwrap_or(0);
        let mut tally = confidence::Tally::default();
        let base_t = &ctx.all[ctx.suite_base()];
        for (r, &i) in ctx.idx.iter().enumerate() {
            let t = &ctx.all[i];
            let cells = steps
                .iter()
                .enumerate()
                .map(|(c, s)| match state(t, s) {
                    State::Ok(_) => {
                        let mut cell =
                            rel_cell(grid[r][c], grid[bi][c], Better::Higher, ctx.thresholds);
                        if r != bi {
                            let iv = match cell.value {
                                super::model::Value::Num(x) => {
                                    confidence::ratio_interval(t, base_t, s, x)
                                }
                                _ => None,
                            };
                            tally.add(confidence::judge(
                                &mut cell,
                                iv,
                                Better::Higher,
                                ctx.thresholds,
                                confidence::Subject::Speed,
                            ));
                        }
                        cell
                    }
                    State::No(cell) => cell,
                })
                .collect();
            rel.rows.push(Row {
                label: t.name().into(),
                target: Some(i),
                cells,
                note: None,
            });
        }
        rel.legend = Some(rel_legend(ctx));
        rel.base = Some(ctx.base_name().into());
        sec.blocks.push(Block::Table(rel));
        if let Some(t) = tally.sentence() {
            sec.blocks.push(Block::Text(t));
        }
    }

    // Background insert rates.
    let q: Vec<&String> = steps.iter().filter(|s| is_qrqp(s)).collect();
    if !q.is_empty() {
        let mut sla = table(
            "ibench-sla".into(),
            "Background insert rate of the qr/qp steps (SLA: at least 95% of the target)".into(),
            Kind::Sla,
            None,
            q.iter()
                .map(|s| {
                    Column::new(
                        s,
                        s,
                        "rows/s",
                        "achieved background insert rate",
                        Better::Higher,
                    )
                })
                .collect(),
        );
        let mut targets: Vec<Vec<f64>> = vec![Vec::new(); q.len()];
        for &i in &ctx.idx {
            let t = &ctx.all[i];
            let cells = q
                .iter()
                .enumerate()
                .map(|(c, s)| match state(t, s) {
                    State::Ok(v) => match &v.sla {
                        Some(x) => {
                            targets[c].push(x.target_rows_per_s);
                            let cell = Cell::num(
                                x.achieved_rows_per_s,
                                number::rate(x.achieved_rows_per_s),
                            )
                            .note(sla_note(v));
                            if x.met == Some(false) {
                                cell.mark(Mark::SlaMissed)
                            } else {
                                cell
                            }
                        }
                        None => Cell::gap("no SLA record in the step file"),
                    },
                    State::No(cell) => cell,
                })
                .collect();
            sla.rows.push(Row {
                label: t.name().into(),
                target: Some(i),
                cells,
                note: None,
            });
        }
        let cells = targets
            .iter()
            .map(|v| match v.first() {
                Some(first) if v.iter().all(|x| x == first) => {
                    Cell::num(*first, number::rate(*first))
                }
                Some(_) => Cell::text("varies").note(format!(
                    "targets differ: {}",
                    v.iter()
                        .map(|x| number::rate(*x))
                        .collect::<Vec<_>>()
                        .join(", ")
                )),
                None => Cell::gap("no target ran this step"),
            })
            .collect();
        sla.rows.push(Row {
            label: "target".into(),
            target: None,
            cells,
            note: None,
        });
        sla.legend = Some(
            "Achieved background inserts (rows/s, all clients) over the step; red: below 95% of the target, the step failed to sustain it. Last row: the target."
                .into(),
        );
        sec.blocks.push(Block::Table(sla));
    }
    sec
}

fn sla_note(v: &StepView) -> String {
    match &v.sla {
        Some(x) => format!(
            "background inserts {} of {} rows/s ({:.1}%): SLA {}",
            number::rate(x.achieved_rows_per_s),
            number::rate(x.target_rows_per_s),
            if x.target_rows_per_s > 0.0 {
                x.achieved_rows_per_s / x.target_rows_per_s * 100.0
            } else {
                0.0
            },
            match x.met {
                Some(true) => "met",
                Some(false) => "missed",
                None => "not judged",
            }
        ),
        None => String::new(),
    }
}

/// The operation the step is about: queries for qr/qp, the index build for l.x, inserts else.
fn main_op(step: &str) -> &'static str {
    if is_qrqp(step) {
        "query"
    } else if step == "l.x" {
        "index"
    } else {
        "insert"
    }
}

fn describe_step(ctx: &Ctx, step: &str) -> String {
    let sv = ctx
        .idx
        .iter()
        .filter_map(|i| ctx.all[*i].step(step))
        .find(|s| s.ok())
        .or_else(|| ctx.idx.iter().find_map(|i| ctx.all[*i].step(step)));
    let p = sv.map(|s| &s.parameters);
    let deletes = p.is_some_and(|p| p.deletes);
    let rpc = p
        .map(|p| p.rows_per_commit)
        .map(|r| format!("{r} rows per statement"))
        .unwrap_or_else(|| "batches".into());
    match step {
        "l.i0" => format!("Load in primary-key order, {rpc}, no secondary indexes, as fast as possible. Headline: inserts/s."),
        "l.x" => "Creates the three secondary indexes. Headline: indexed rows/s (rows in the tables / step time).".into(),
        "l.i1" | "l.i2" => format!(
            "Inserts, {rpc}{}, with the three secondary indexes in place, as fast as possible. Headline: inserts/s.",
            if deletes { ", each batch followed by a delete of as many rows" } else { "" }
        ),
        s if is_qrqp(s) => format!(
            "{} queries, back to back, one thread per client, while background inserters add {} rows/s per client{}. Headline: queries/s; the background inserts must reach 95% of their target (SLA).",
            if s.starts_with("qr") { "Range" } else { "Point" },
            p.and_then(|p| p.rate_per_client).map(|r| r.to_string()).unwrap_or_else(|| s[2..].to_string()),
            if deletes { " and deleters remove as many" } else { "" }
        ),
        _ => "A step this report has no description for.".into(),
    }
}

fn step_section(ctx: &Ctx, step: &str) -> Section {
    let mut sec = Section::new(format!("ibench-{}", sanitize(step)), step);
    sec.blocks.push(Block::Text(describe_step(ctx, step)));
    let mut warn = Vec::new();
    for &i in &ctx.idx {
        if let Some(s) = ctx.all[i].step(step) {
            for w in &s.warnings {
                warn.push(format!("{}: {w}", ctx.all[i].name()));
            }
        }
    }
    if !warn.is_empty() {
        sec.blocks.push(Block::Warnings(warn));
    }
    let oks: Vec<&StepView> = ctx
        .idx
        .iter()
        .filter_map(|i| match state(&ctx.all[*i], step) {
            State::Ok(s) => Some(s),
            State::No(_) => None,
        })
        .collect();
    let (abs, rel) = metrics_tables(ctx, step, &oks);
    sec.blocks.push(Block::Table(abs));
    if let Some((r, tally)) = rel {
        sec.blocks.push(Block::Table(r));
        if let Some(t) = tally.sentence() {
            sec.blocks.push(Block::Text(t));
        }
    }
    if !oks.iter().any(|s| s.metrics.values().any(|v| v.is_some())) {
        sec.blocks.push(Block::Text(
            "No hardware metrics (CPU, IO, context switches per operation, sizes) in these results: their columns appear when step files carry them (docs/report.md).".into(),
        ));
    }
    let with_idx: Vec<(usize, &StepView)> = ctx
        .idx
        .iter()
        .filter_map(|i| match state(&ctx.all[*i], step) {
            State::Ok(s) => Some((*i, s)),
            State::No(_) => None,
        })
        .collect();
    if let Some(t) = not_measured(ctx, &with_idx) {
        sec.blocks.push(Block::Text(t));
    }
    if let Some(t) = rough_cpu(ctx, &with_idx) {
        sec.blocks.push(Block::Text(t));
    }
    if let Some(t) = super::devices::table(ctx, "ibench", step, false) {
        sec.blocks.push(Block::Table(t));
    }
    if step != "l.x" {
        let charts = charts(ctx, step);
        if !charts.is_empty() {
            sec.blocks.push(Block::Charts(charts));
        } else {
            sec.blocks.push(Block::Text(
                "No per-second charts: no target has two or more seconds of this step.".into(),
            ));
        }
        match variance_table(ctx, step) {
            Some(v) => sec.blocks.push(Block::Table(v)),
            None => sec.blocks.push(Block::Text(format!(
                "No variance figures: no target has {} or more full seconds of this step.",
                variance::MIN_SECONDS
            ))),
        }
    }
    let ops = op_kinds(&oks);
    for op in &ops {
        if step != "l.x" && op != "index" {
            sec.blocks.push(Block::Table(buckets_table(ctx, step, op)));
        }
    }
    for op in &ops {
        let pt = percentiles_table(ctx, step, op);
        let id = pt.id.clone();
        sec.blocks.push(Block::Table(pt));
        if ctx.relative {
            let (t, tally) = super::latency::table(ctx, &id, "ibench", step, op);
            sec.blocks.push(Block::Table(t));
            sec.blocks
                .push(Block::Text(super::latency::sentence(&tally)));
        }
    }
    sec
}

/// Operation types of a step, in the original's order.
fn op_kinds(steps: &[&StepView]) -> Vec<String> {
    let mut out = Vec::new();
    for k in ["insert", "delete", "query", "index"] {
        if steps.iter().any(|s| s.ops.contains_key(k)) {
            out.push(k.to_string());
        }
    }
    for s in steps {
        for k in s.ops.keys() {
            if !out.contains(k) {
                out.push(k.clone());
            }
        }
    }
    out
}

type Getter = Box<dyn Fn(&StepView) -> Option<f64>>;

fn metrics_tables(
    ctx: &Ctx,
    step: &str,
    oks: &[&StepView],
) -> (Table, Option<(Table, confidence::Tally)>) {
    let q = is_qrqp(step);
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

    let columns: Vec<Column> = cols.iter().map(|(c, _)| c.clone()).collect();
    let mut abs = table(
        format!("ibench-{}-metrics", sanitize(step)),
        format!("{step}: metrics"),
        Kind::Absolute,
        Some(step),
        columns.clone(),
    );
    let mut values: Vec<Option<Vec<Option<f64>>>> = Vec::new();
    let mut rounds: Vec<Vec<Vec<f64>>> = Vec::new();
    for &i in &ctx.idx {
        let t = &ctx.all[i];
        rounds.push(round_values(t, step, cols.len(), &|s, c| (cols[c].1)(s)));
        match state(t, step) {
            State::Ok(s) => {
                let v: Vec<Option<f64>> = cols.iter().map(|(_, g)| g(s)).collect();
                let cells = v
                    .iter()
                    .zip(&columns)
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

/// A metrics column's number in the style of what the column holds (`number`): rates as rates,
/// the largest latency and the step's seconds as latencies are, every other figure to 3
/// significant digits.
fn column_number(key: &str, v: f64) -> String {
    match key {
        "ips" | "qps" | "rps" | "wps" | "csps" => number::rate(v),
        k if k.ends_with("_interval") => number::rate(v),
        "maxop" | "secs" => number::ms(v),
        _ => number::sig(v),
    }
}

const BUCKETS: [&str; 10] = [
    "≤256µs",
    "≤1ms",
    "≤4ms",
    "≤16ms",
    "≤64ms",
    "≤256ms",
    "≤1s",
    "≤4s",
    "≤16s",
    ">16s",
];

fn op_title(op: &str) -> &str {
    match op {
        "insert" => "inserts",
        "delete" => "deletes",
        "query" => "queries",
        "index" => "index builds",
        o => o,
    }
}

fn buckets_table(ctx: &Ctx, step: &str, op: &str) -> Table {
    let mut cols: Vec<Column> = BUCKETS
        .iter()
        .map(|b| {
            Column::new(
                b,
                b,
                "%",
                "share of operations with this latency",
                Better::Neither,
            )
        })
        .collect();
    cols.push(Column::new(
        "max",
        "max",
        "ms",
        "largest latency",
        Better::Lower,
    ));
    let mut t = table(
        format!("ibench-{}-rt-{}", sanitize(step), sanitize(op)),
        format!("{step}: response time of {}", op_title(op)),
        Kind::Buckets,
        Some(step),
        cols.clone(),
    );
    t.op = Some(op.into());
    let mut maxes = Vec::new();
    for &i in &ctx.idx {
        let tr = &ctx.all[i];
        let (cells, note, max) = match state(tr, step) {
            State::Ok(s) => match s.ops.get(op) {
                Some(o) if o.count > 0 => {
                    let b = o.ibench_buckets.counts();
                    let mut cells: Vec<Cell> = b
                        .iter()
                        .map(|n| {
                            let pct = *n as f64 / o.count as f64 * 100.0;
                            Cell::num(pct, number::bucket_pct(pct)).mark(Mark::Shade(shade(pct)))
                        })
                        .collect();
                    let m = o.max_ms;
                    cells.push(Cell::num(m, number::ms(m)));
                    (cells, None, Some(m))
                }
                Some(_) => {
                    let c = Cell::gap(format!("no {} completed", op_title(op)));
                    (vec![c.clone(); cols.len()], c.note, None)
                }
                None => {
                    let c = Cell::gap(format!("this target's step has no {}", op_title(op)));
                    (vec![c.clone(); cols.len()], c.note, None)
                }
            },
            State::No(c) => (vec![c.clone(); cols.len()], c.note.clone(), None),
        };
        maxes.push(max);
        t.rows.push(Row {
            label: tr.name().into(),
            target: Some(i),
            cells,
            note,
        });
    }
    let marks = quartiles(&maxes, &vec![true; maxes.len()], false, false);
    for (r, m) in marks.into_iter().enumerate() {
        if m != Mark::None {
            t.rows[r].cells[BUCKETS.len()].mark = m;
        }
    }
    t.legend = Some(
        "Percent of operations per latency bucket (upper bounds inclusive, latency from the intended start); `nonzero`: above 0 but below 0.0005%. Darker = larger share. max: red in the top quarter of the range, green in the bottom quarter."
            .into(),
    );
    t
}

fn percentiles_table(ctx: &Ctx, step: &str, op: &str) -> Table {
    let cols = vec![
        Column::new(
            "count",
            "count",
            "ops",
            "operations completed",
            Better::Neither,
        ),
        Column::new(
            "errors",
            "errors",
            "ops",
            "operations that failed",
            Better::Lower,
        ),
        Column::new("mean", "mean", "ms", "mean latency", Better::Lower),
        Column::new(
            "p50",
            "p50",
            "ms",
            "latency percentile (HDR histogram)",
            Better::Lower,
        ),
        Column::new("p90", "p90", "ms", "latency percentile", Better::Lower),
        Column::new("p99", "p99", "ms", "latency percentile", Better::Lower),
        Column::new("p99.9", "p99.9", "ms", "latency percentile", Better::Lower),
        Column::new(
            "p99.99",
            "p99.99",
            "ms",
            "latency percentile",
            Better::Lower,
        ),
        Column::new("max", "max", "ms", "largest latency", Better::Lower),
        Column::new(
            "svc_p99",
            "service p99",
            "ms",
            "p99 of service time (from the actual start, queueing excluded)",
            Better::Lower,
        ),
    ];
    let mut t = table(
        format!("ibench-{}-lat-{}", sanitize(step), sanitize(op)),
        format!("{step}: latency percentiles of {}", op_title(op)),
        Kind::Percentiles,
        Some(step),
        cols.clone(),
    );
    t.op = Some(op.into());
    for &i in &ctx.idx {
        let tr = &ctx.all[i];
        let (cells, note) = match state(tr, step) {
            State::Ok(s) => match s.ops.get(op) {
                Some(o) => {
                    let l = &o.latency_us;
                    let ms = |f: fn(&crate::results::Percentiles) -> f64| -> Cell {
                        if o.count > 0 {
                            let v = f(l) / 1000.0;
                            Cell::num(v, number::ms(v))
                        } else {
                            Cell::gap("no latency recorded")
                        }
                    };
                    let svc = if o.count > 0 {
                        let p99 = o.service_us.p99 / 1000.0;
                        Cell::num(p99, number::ms(p99))
                    } else {
                        Cell::gap("no service time recorded")
                    };
                    (
                        vec![
                            Cell::num(o.count as f64, number::int(o.count)),
                            Cell::num(o.errors as f64, o.errors.to_string()),
                            ms(|l| l.mean),
                            ms(|l| l.p50),
                            ms(|l| l.p90),
                            ms(|l| l.p99),
                            ms(|l| l.p99_9),
                            ms(|l| l.p99_99),
                            ms(|l| l.max),
                            svc,
                        ],
                        None,
                    )
                }
                None => {
                    let c = Cell::gap(format!("this target's step has no {}", op_title(op)));
                    (vec![c.clone(); cols.len()], c.note)
                }
            },
            State::No(c) => (vec![c.clone(); cols.len()], c.note.clone()),
        };
        t.rows.push(Row {
            label: tr.name().into(),
            target: Some(i),
            cells,
            note,
        });
    }
    t.legend = Some(
        "Latency from the intended start (no coordinated omission), all clients, from HDR histograms: at most 0.1% above the true value. service p99: from the actual start."
            .into(),
    );
    t
}

/// The per-second rates a step draws, with their names.
const RATES: [(&str, &str, &str); 3] = [
    ("insert", "inserts/s", "rows/s"),
    ("delete", "deletes/s", "rows/s"),
    ("query", "queries/s", "queries/s"),
];

/// A partial last row shorter than this is left out of rate lines: a rate over a few
/// milliseconds of wind-down reads as a collapse that did not happen.
const MIN_RATE_INTERVAL_S: f64 = 0.5;

fn charts(ctx: &Ctx, step: &str) -> Vec<Chart> {
    let mut out = Vec::new();
    let max_points = chart::points_per_line(ctx.idx.len());
    for (kind, what, unit) in RATES {
        let mut rate_lines = Vec::new();
        let mut max_lines = Vec::new();
        let mut reference = None;
        for &i in &ctx.idx {
            let Some(s) = ctx.all[i].step(step) else {
                continue;
            };
            let Some(series) = &s.series else { continue };
            let Some(k) = series.kind(kind) else { continue };
            if kind == "insert" {
                if let Some(r) = series.target_rows_per_s {
                    reference = Some((r, format!("target {} rows/s", number::rate(r))));
                }
            }
            let keep: Vec<usize> = (0..series.t.len())
                .filter(|r| series.dt[*r] >= MIN_RATE_INTERVAL_S)
                .collect();
            let t: Vec<f64> = keep.iter().map(|r| series.t[*r]).collect();
            let y: Vec<f64> = keep.iter().map(|r| k.rate[*r]).collect();
            rate_lines.push(Line {
                target: i,
                points: chart::reduce(&t, &y, Agg::Mean, max_points),
            });
            max_lines.push(Line {
                target: i,
                points: chart::reduce(&series.t, &k.max_ms, Agg::Max, max_points),
            });
        }
        // A line needs two seconds; a step shorter than that everywhere gets no chart.
        if !rate_lines
            .iter()
            .any(|l| l.points.iter().filter(|p| p.1.is_finite()).count() >= 2)
        {
            continue;
        }
        let title = format!("{step}: {what}, per second");
        out.push(Chart {
            title: title.clone(),
            svg: chart::line_svg(&LineChart {
                title,
                x_axis: XAxis::Seconds,
                y_label: unit.into(),
                log_y: false,
                lines: rate_lines,
                reference,
                markers: Vec::new(),
                targets: ctx.labels,
            }),
            base_dependent: false,
        });
        let title = format!("{step}: largest {kind} latency, per second");
        out.push(Chart {
            title: title.clone(),
            svg: chart::line_svg(&LineChart {
                title,
                x_axis: XAxis::Seconds,
                y_label: "ms (log scale)".into(),
                log_y: true,
                lines: max_lines,
                reference: None,
                markers: Vec::new(),
                targets: ctx.labels,
            }),
            base_dependent: false,
        });
    }
    out
}

fn variance_table(ctx: &Ctx, step: &str) -> Option<Table> {
    let kinds: Vec<(&str, &str)> = RATES
        .iter()
        .filter(|(k, _, _)| {
            ctx.idx.iter().any(|i| {
                ctx.all[*i]
                    .step(step)
                    .and_then(|s| s.series.as_ref())
                    .is_some_and(|se| se.kind(k).is_some())
            })
        })
        .map(|(k, w, _)| (*k, *w))
        .collect();
    if kinds.is_empty() {
        return None;
    }
    let mut cols = Vec::new();
    for (k, w) in &kinds {
        cols.push(Column::new(
            &format!("{k}_mean"),
            &format!("{w} mean"),
            if *k == "query" { "queries/s" } else { "rows/s" },
            "mean of the full seconds",
            Better::Higher,
        ));
        cols.push(Column::new(
            &format!("{k}_cv"),
            &format!("{w} CV"),
            "%",
            "coefficient of variation: standard deviation / mean of the per-second rate",
            Better::Lower,
        ));
    }
    cols.push(Column::new(
        "flag",
        "flag",
        "",
        "what stands out",
        Better::Neither,
    ));
    let mut t = table(
        format!("ibench-{}-variance", sanitize(step)),
        format!("{step}: variance of the per-second rates"),
        Kind::Variance,
        Some(step),
        cols.clone(),
    );
    for &i in &ctx.idx {
        let tr = &ctx.all[i];
        let series = match state(tr, step) {
            State::Ok(s) => s.series.as_ref(),
            State::No(c) => {
                t.rows.push(Row {
                    label: tr.name().into(),
                    target: Some(i),
                    cells: vec![c.clone(); cols.len()],
                    note: c.note.clone(),
                });
                continue;
            }
        };
        let mut cells = Vec::new();
        let mut flags = Vec::new();
        for (k, w) in &kinds {
            let vals: Vec<f64> = series
                .and_then(|se| {
                    se.kind(k).map(|ks| {
                        ks.rate
                            .iter()
                            .zip(&se.full)
                            .filter(|(v, f)| **f && v.is_finite())
                            .map(|(v, _)| *v)
                            .collect()
                    })
                })
                .unwrap_or_default();
            match variance::of(&vals) {
                Some(v) => {
                    cells.push(Cell::num(v.mean, number::rate(v.mean)));
                    let f = variance::flag(w, &v, ctx.cv_flag_pct);
                    cells.push(match v.cv {
                        Some(cv) => {
                            let c =
                                Cell::num(cv * 100.0, format!("{:.1}", cv * 100.0)).note(format!(
                                    "over {} full seconds: min {}, max {}",
                                    v.seconds,
                                    number::rate(v.min),
                                    number::rate(v.max)
                                ));
                            if cv * 100.0 > ctx.cv_flag_pct {
                                c.mark(Mark::Worse)
                            } else {
                                c
                            }
                        }
                        None => Cell::gap("nothing happened"),
                    });
                    flags.extend(f);
                }
                None => {
                    let why = if series.is_none() {
                        "no per-second series".to_string()
                    } else {
                        format!(
                            "{} full seconds; at least {} are needed",
                            vals.len(),
                            variance::MIN_SECONDS
                        )
                    };
                    cells.push(Cell::gap(why.clone()));
                    cells.push(Cell::gap(why));
                }
            }
        }
        cells.push(if flags.is_empty() {
            Cell::text("")
        } else {
            Cell::text(flags.join("; "))
        });
        t.rows.push(Row {
            label: tr.name().into(),
            target: Some(i),
            cells,
            note: None,
        });
    }
    if !t.rows.iter().any(|r| {
        r.cells
            .iter()
            .any(|c| matches!(c.value, super::model::Value::Num(_)))
    }) {
        return None;
    }
    t.legend = Some(format!(
        "Over the full seconds of the step (the partial last one left out). CV: population standard deviation / mean, %; yellow and a flag above {}% (--cv-flag). A flag also names seconds below {:.0}% of the mean (stalls).",
        ctx.cv_flag_pct,
        variance::STALL_SHARE * 100.0
    ));
    Some(t)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn qrqp_names() {
        assert!(is_qrqp("qr100") && is_qrqp("qp1000"));
        assert!(!is_qrqp("qrx") && !is_qrqp("l.i0") && !is_qrqp("qp"));
    }

    #[test]
    fn buckets_cover_the_ten_of_the_original() {
        assert_eq!(BUCKETS.len(), 10);
    }
}
