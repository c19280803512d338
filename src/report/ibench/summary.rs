//! The Insert Benchmark's three summary tables: each step's headline with quartile colours and
//! SLA grey, the same relative to the base with verdicts, and the background insert rates of
//! the qr/qp steps against their target.

use super::steps::{headline, is_qrqp, sla, table};
use crate::report::common::{rel_legend, state, State};
use crate::report::confidence::{self, Tally};
use crate::report::context::Ctx;
use crate::report::model::{Better, Block, Cell, Column, Kind, Mark, Row, Section, Table};
use crate::report::number;
use crate::report::rules::{quartiles, rel_cell};
use crate::report::target::StepView;

const QUARTILE_LEGEND: &str = "Per column: green = top quarter of the range (max over targets that met the SLA), red = bottom quarter (none when min >= 0.8 x max), grey = the background inserts missed their SLA (qr/qp).";

/// Each target's headline per step (None: no number), rows in `ctx.idx` order.
type Grid = Vec<Vec<Option<f64>>>;

pub fn section(ctx: &Ctx, steps: &[String]) -> Section {
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
    let (abs, grid) = absolute(ctx, steps, &cols);
    sec.blocks.push(Block::Table(abs));
    if ctx.relative {
        let (rel, tally) = relative(ctx, steps, &cols, &grid);
        sec.blocks.push(Block::Table(rel));
        if let Some(t) = tally.sentence() {
            sec.blocks.push(Block::Text(t));
        }
    }
    if let Some(sla) = background_inserts(ctx, steps) {
        sec.blocks.push(Block::Table(sla));
    }
    sec
}

/// Throughput: the headline of each step, coloured by quartile within its column.
fn absolute(ctx: &Ctx, steps: &[String], cols: &[Column]) -> (Table, Grid) {
    let mut abs = table(
        "ibench-tput".into(),
        "Throughput: the headline of each step".into(),
        Kind::Absolute,
        None,
        cols.to_vec(),
    );
    let mut grid: Grid = Vec::new();
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
                    let sla_ok = sla(v).and_then(|x| x.met) != Some(false);
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
    (abs, grid)
}

/// Throughput relative to the base, each cell judged on its interval.
fn relative(ctx: &Ctx, steps: &[String], cols: &[Column], grid: &Grid) -> (Table, Tally) {
    let mut rel = table(
        "ibench-tput-rel".into(),
        "Throughput relative to the base".into(),
        Kind::Relative,
        None,
        Column::ratios(cols),
    );
    let bi = ctx
        .idx
        .iter()
        .position(|i| *i == ctx.suite_base())
        .unwrap_or(0);
    let mut tally = Tally::default();
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
                        tally.add(confidence::judge_speed(
                            &mut cell,
                            t,
                            base_t,
                            s,
                            ctx.thresholds,
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
    (rel, tally)
}

/// The background insert rate of each qr/qp step against its target; None without qr/qp.
fn background_inserts(ctx: &Ctx, steps: &[String]) -> Option<Table> {
    let q: Vec<&String> = steps.iter().filter(|s| is_qrqp(s)).collect();
    if q.is_empty() {
        return None;
    }
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
                State::Ok(v) => achieved(v, &mut targets[c]),
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
    sla.rows.push(Row {
        label: "target".into(),
        target: None,
        cells: targets.iter().map(|v| target_cell(v)).collect(),
        note: None,
    });
    sla.legend = Some(
        "Achieved background inserts (rows/s, all clients) over the step; red: below 95% of the target, the step failed to sustain it. Last row: the target."
            .into(),
    );
    Some(sla)
}

/// A step's achieved background insert rate, red when it missed the SLA; its target goes into
/// `targets` for the last row.
fn achieved(v: &StepView, targets: &mut Vec<f64>) -> Cell {
    match sla(v) {
        Some(x) => {
            targets.push(x.target_rows_per_s);
            let cell = Cell::num(x.achieved_rows_per_s, number::rate(x.achieved_rows_per_s))
                .note(sla_note(v));
            if x.met == Some(false) {
                cell.mark(Mark::SlaMissed)
            } else {
                cell
            }
        }
        None => Cell::gap("no SLA record in the step file"),
    }
}

/// The target rate of one qr/qp column: one number, or `varies` with each target's.
fn target_cell(v: &[f64]) -> Cell {
    match v.first() {
        Some(first) if v.iter().all(|x| x == first) => Cell::num(*first, number::rate(*first)),
        Some(_) => Cell::text("varies").note(format!(
            "targets differ: {}",
            v.iter()
                .map(|x| number::rate(*x))
                .collect::<Vec<_>>()
                .join(", ")
        )),
        None => Cell::gap("no target ran this step"),
    }
}

fn sla_note(v: &StepView) -> String {
    match sla(v) {
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
