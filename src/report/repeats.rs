//! The Repeats section: each round's headline beside the median the other tables show (the
//! rounds are merged into one row by `rounds`), and the spread, so a reader sees how far one run
//! can be trusted.

use std::collections::BTreeMap;

use super::model::{Better, Block, Cell, Column, Kind, Row, Section, Table};
use super::number;
use super::target::TargetResult;
use crate::analysis::rounds::median;

/// A column per round up to the most any target has, then the median, min, max and spread.
fn columns(rounds: usize) -> Vec<Column> {
    let mut columns: Vec<Column> = (1..=rounds)
        .map(|r| {
            Column::new(
                &format!("round{r}"),
                &format!("round {r}"),
                "",
                "the step's headline in this round (throughput, as the step's own tables)",
                Better::Neither,
            )
        })
        .collect();
    columns.push(Column::new(
        "median",
        "median",
        "",
        "what the report's other tables show",
        Better::Neither,
    ));
    columns.push(Column::new(
        "min",
        "min",
        "",
        "lowest round",
        Better::Neither,
    ));
    columns.push(Column::new(
        "max",
        "max",
        "",
        "highest round",
        Better::Neither,
    ));
    columns.push(Column::new(
        "spread",
        "spread",
        "%",
        "(max − min) / median: a relative difference smaller than this is within the noise of a single run",
        Better::Lower,
    ));
    columns
}

/// Target `i`'s row for `step`: each round's headline, padded to `rounds` columns, and the
/// median, min, max and spread over them. None when no round of the step ended ok.
fn row(i: usize, t: &TargetResult, step: &str, rounds: usize) -> Option<Row> {
    let mut per: BTreeMap<u32, f64> = BTreeMap::new();
    for r in &t.repeats {
        if let Some(x) = r.step(step).filter(|x| x.ok()) {
            per.insert(r.round().unwrap_or(0), x.headline.value);
        }
    }
    if per.is_empty() {
        return None;
    }
    let vals: Vec<f64> = per.values().copied().filter(|v| v.is_finite()).collect();
    let med = median(vals.clone());
    let lo = vals.iter().copied().fold(f64::INFINITY, f64::min);
    let hi = vals.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    let mut cells: Vec<Cell> = t
        .repeats
        .iter()
        .map(|r| match per.get(&r.round().unwrap_or(0)) {
            Some(v) => Cell::num(*v, number::whole_or_2(*v)),
            None => Cell::gap("the step has no result in this round"),
        })
        .collect();
    while cells.len() < rounds {
        cells.push(Cell::gap("the target has fewer rounds"));
    }
    let spread = if med > 0.0 && vals.len() > 1 {
        (hi - lo) / med * 100.0
    } else {
        f64::NAN
    };
    for v in [med, lo, hi, spread] {
        cells.push(if v.is_finite() {
            Cell::num(v, number::whole_or_2(v))
        } else {
            Cell::gap("not enough rounds")
        });
    }
    Some(Row {
        label: format!("{} · {}", t.name(), step),
        target: Some(i),
        cells,
        note: None,
    })
}

/// The Repeats section: per target and step, each round's headline, the median the tables
/// show, and the spread (max − min) / median. None when no target was repeated.
pub fn section(all: &[TargetResult]) -> Option<Section> {
    let repeated: Vec<(usize, &TargetResult)> = all
        .iter()
        .enumerate()
        .filter(|(_, t)| !t.repeats.is_empty())
        .collect();
    if repeated.is_empty() {
        return None;
    }
    let n = repeated
        .iter()
        .map(|(_, t)| t.repeats.len())
        .max()
        .unwrap_or(0);
    let rows = repeated
        .iter()
        .flat_map(|(i, t)| t.steps.iter().filter_map(|s| row(*i, t, &s.name, n)))
        .collect();
    let mut sec = Section::new("repeats", "Repeats");
    sec.blocks.push(Block::Text(
        "Repeated targets are reported as the median of their rounds, number by number; \
         per-second charts and response-time buckets are those of the round whose headline is the \
         median. The spread is how far one run of the step moved between rounds: a relative \
         difference between targets smaller than it should not be read as a change."
            .into(),
    ));
    sec.blocks.push(Block::Table(Table {
        id: "repeats".into(),
        title: "Headline per round".into(),
        kind: Kind::Info,
        suite: "",
        step: None,
        op: None,
        row_header: "target · step".into(),
        columns: columns(n),
        rows,
        legend: None,
        source: None,
        base: None,
    }));
    Some(sec)
}
