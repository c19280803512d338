//! The Insert Benchmark report (spec §4): the three summary tables (absolute throughput with
//! quartile colours and SLA grey, relative throughput, background insert rates vs target), then
//! per step the metrics table absolute and relative, per-second charts, response-time buckets,
//! latency percentiles and the variance of each rate.
//!
//! `summary` makes the first three, `metrics`, `per_second` and `response` a step's; `steps`
//! and `describe` are what they share. None of them imports this file.

mod describe;
mod metrics;
mod per_second;
mod response;
mod steps;
mod summary;

use crate::analysis::variance;
use crate::report::common::{not_measured, rough_cpu, sanitize, state, State};
use crate::report::context::Ctx;
use crate::report::model::{Block, Section};
use crate::report::target::{StepView, TargetResult};
use crate::report::{devices, latency};

/// The suite's name, which its tables' ids and the export's `suite` column carry.
const IBENCH: &str = crate::suites::Suite::Ibench.name();

pub fn build(ctx: &Ctx) -> Section {
    let ts: Vec<&TargetResult> = ctx.idx.iter().map(|i| &ctx.all[*i]).collect();
    let steps = steps::step_order(&ts);
    let mut sec = Section::new(IBENCH, "Insert Benchmark");
    sec.blocks.push(Block::Text(describe::describe_run(ctx)));
    sec.sub.push(summary::section(ctx, &steps));
    for s in &steps {
        sec.sub.push(step_section(ctx, s));
    }
    sec
}

fn step_section(ctx: &Ctx, step: &str) -> Section {
    let mut sec = Section::new(format!("ibench-{}", sanitize(step)), step);
    sec.blocks
        .push(Block::Text(describe::describe_step(ctx, step)));
    let mut warn = Vec::new();
    for &i in &ctx.idx {
        if let Some(s) = ctx.all[i].step(step) {
            for w in &s.warnings {
                warn.push(format!("{}: {w}", ctx.all[i].shown_name()));
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
    metrics_blocks(ctx, step, &oks, &mut sec.blocks);
    if let Some(t) = devices::table(ctx, IBENCH, step, false) {
        sec.blocks.push(Block::Table(t));
    }
    if step != "l.x" {
        per_second_blocks(ctx, step, &mut sec.blocks);
    }
    response_blocks(ctx, step, &oks, &mut sec.blocks);
    sec
}

/// The metrics tables, and what is missing from them or rough.
fn metrics_blocks(ctx: &Ctx, step: &str, oks: &[&StepView], blocks: &mut Vec<Block>) {
    let (abs, rel) = metrics::tables(ctx, step, oks);
    blocks.push(Block::Table(abs));
    if let Some((r, tally)) = rel {
        blocks.push(Block::Table(r));
        if let Some(t) = tally.sentence() {
            blocks.push(Block::Text(t));
        }
    }
    if !oks.iter().any(|s| s.metrics.values().any(|v| v.is_some())) {
        blocks.push(Block::Text(
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
        blocks.push(Block::Text(t));
    }
    if let Some(t) = rough_cpu(ctx, &with_idx) {
        blocks.push(Block::Text(t));
    }
}

/// The per-second charts and the variance table, or why there are none.
fn per_second_blocks(ctx: &Ctx, step: &str, blocks: &mut Vec<Block>) {
    let charts = per_second::charts(ctx, step);
    if !charts.is_empty() {
        blocks.push(Block::Charts(charts));
    } else {
        blocks.push(Block::Text(
            "No per-second charts: no target has two or more seconds of this step.".into(),
        ));
    }
    match per_second::variance_table(ctx, step) {
        Some(v) => blocks.push(Block::Table(v)),
        None => blocks.push(Block::Text(format!(
            "No variance figures: no target has {} or more full seconds of this step.",
            variance::MIN_SECONDS
        ))),
    }
}

/// Per operation type its response-time buckets, then its percentiles with, against the base,
/// their ratios.
fn response_blocks(ctx: &Ctx, step: &str, oks: &[&StepView], blocks: &mut Vec<Block>) {
    let ops = steps::op_kinds(oks);
    for op in &ops {
        if step != "l.x" && op != "index" {
            blocks.push(Block::Table(response::buckets(ctx, step, op)));
        }
    }
    for op in &ops {
        let pt = response::percentiles(ctx, step, op);
        let id = pt.id.clone();
        blocks.push(Block::Table(pt));
        if ctx.relative {
            let (t, tally) = latency::table(ctx, &id, IBENCH, step, op);
            blocks.push(Block::Table(t));
            blocks.push(Block::Text(latency::sentence(&tally)));
        }
    }
}
