//! Response time of each operation type of a step: the original's latency buckets, and the
//! latency percentiles from the HDR histograms.

use super::steps::{op_title, table};
use crate::report::common::{sanitize, state, State};
use crate::report::context::Ctx;
use crate::report::model::{Better, Cell, Column, Kind, Mark, Row, Table};
use crate::report::number;
use crate::report::rules::{quartiles, shade};
use crate::results::{OpStats, Percentiles};

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

/// The share of operations in each latency bucket, and the largest latency.
pub fn buckets(ctx: &Ctx, step: &str, op: &str) -> Table {
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
                Some(o) if o.count > 0 => (bucket_cells(o), None, Some(o.max_ms)),
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

/// Each bucket's share of the operations, shaded by it, then the largest latency.
fn bucket_cells(o: &OpStats) -> Vec<Cell> {
    let mut cells: Vec<Cell> = o
        .ibench_buckets
        .counts()
        .iter()
        .map(|n| {
            let pct = *n as f64 / o.count as f64 * 100.0;
            Cell::num(pct, number::bucket_pct(pct)).mark(Mark::Shade(shade(pct)))
        })
        .collect();
    let m = o.max_ms;
    cells.push(Cell::num(m, number::ms(m)));
    cells
}

/// Count, errors and the latency percentiles of one operation type.
pub fn percentiles(ctx: &Ctx, step: &str, op: &str) -> Table {
    let cols = percentile_columns();
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
                Some(o) => (percentile_cells(o), None),
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

fn percentile_columns() -> Vec<Column> {
    vec![
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
    ]
}

/// One operation type's row of `percentile_columns`; latencies in ms.
fn percentile_cells(o: &OpStats) -> Vec<Cell> {
    let l = &o.latency_us;
    let ms = |f: fn(&Percentiles) -> f64| -> Cell {
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
    ]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn buckets_cover_the_ten_of_the_original() {
        assert_eq!(BUCKETS.len(), 10);
    }
}
