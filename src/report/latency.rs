//! Latency against the base (docs/statistics.md, "Latency"): per step and operation type the
//! ratios target / base of p50 and p99, each with a 95% bootstrap interval and the verdict of
//! the throughput tables (lower latency is better), and a block permutation test on the
//! per-second p99s. The intervals and the test are `analysis`' (`latency`, `permutation`); this
//! file reads what they are computed over from the results and makes the table.

use hdrhistogram::Histogram;
use rand_xoshiro::Xoshiro256PlusPlus;

use super::common::{state, State};
use super::confidence::{self, Tally};
use super::context::Ctx;
use super::model::{Better, Cell, Column, Kind, Mark, Row, Table, Value};
use super::rules::rel_cell;
use super::target::TargetResult;
use crate::analysis::bootstrap::{self, MIN_SECONDS};
use crate::analysis::latency::{interval, too_few, Side, P50_OPS, P99_OPS};
use crate::analysis::permutation::block_permutation_p;
use crate::results::decode_histogram;

fn runs(t: &TargetResult) -> Vec<&TargetResult> {
    if t.repeats.is_empty() {
        vec![t]
    } else {
        t.repeats.iter().collect()
    }
}

/// The operations of `op` in `step` over a target's rounds, from their HDR histograms.
fn side(t: &TargetResult, step: &str, op: &str) -> Option<Side> {
    let hs: Vec<Histogram<u64>> = runs(t)
        .iter()
        .filter_map(|r| r.step(step).filter(|s| s.ok()))
        .filter_map(|s| s.ops.get(op))
        .filter(|o| o.count > 0)
        .filter_map(|o| decode_histogram(&o.hdr_latency).ok())
        .filter(|h| !h.is_empty())
        .collect();
    Side::new(&hs)
}

/// Full seconds of each round with a p99 (at least one operation of the type), ms.
fn p99_seconds(t: &TargetResult, step: &str, op: &str) -> Vec<Vec<f64>> {
    runs(t)
        .iter()
        .filter_map(|r| r.step(step).filter(|s| s.ok()))
        .filter_map(|s| s.series.as_ref())
        .filter_map(|se| {
            let k = se.kind(op)?;
            // Not sysbench's warm-up seconds, as for throughput.
            let warm = se.kind("warmup");
            let v: Vec<f64> = (0..se.t.len())
                .filter(|i| se.full[*i])
                .filter(|i| warm.is_none_or(|w| w.rate[*i].is_nan() || w.rate[*i] <= 0.0))
                .map(|i| k.p99_ms.get(i).copied().unwrap_or(f64::NAN))
                .filter(|x| x.is_finite() && *x > 0.0)
                .collect();
            (!v.is_empty()).then_some(v)
        })
        .collect()
}

fn p_cell(p: f64, len: usize, t: &[Vec<f64>], b: &[Vec<f64>]) -> Cell {
    let secs = |v: &[Vec<f64>]| v.iter().map(Vec::len).sum::<usize>();
    let text = if p < 0.001 {
        "<0.001".to_string()
    } else {
        format!("{p:.3}")
    };
    Cell::num(p, text).note(format!(
        "block permutation test of the per-second p99: {} s against {} s, blocks of {len} s",
        secs(t),
        secs(b)
    ))
}

/// An operation type's name in the plural: `query` and TPC-C's `delivery` end in -ies,
/// `order_status` in -es.
fn plural(op: &str) -> String {
    let consonant_y = op
        .strip_suffix('y')
        .filter(|stem| stem.ends_with(|c: char| !"aeiou".contains(c)));
    match (op, consonant_y) {
        ("index", _) => "index builds".into(),
        (_, Some(stem)) => format!("{stem}ies"),
        (o, None) if o.ends_with('s') => format!("{o}es"),
        (o, None) => format!("{o}s"),
    }
}

fn columns() -> Vec<Column> {
    vec![
        Column::new(
            "p50",
            "p50",
            "",
            "median latency, target / base",
            Better::Lower,
        ),
        Column::new(
            "p99",
            "p99",
            "",
            "99th percentile latency, target / base",
            Better::Lower,
        ),
        Column::new(
            "p",
            "p (per-second p99)",
            "",
            "two-sided p-value of a block permutation test: do the target's per-second p99s run higher or lower than the base's (ranks of all seconds, blocks of consecutive seconds relabelled at random, as consecutive seconds are correlated); one test per cell, not corrected for the many in a report, and with few blocks it cannot get small",
            Better::Neither,
        ),
    ]
}

fn legend(ctx: &Ctx) -> String {
    format!(
        "Latency percentile of the target / the base's (HDR histograms), 2 decimals: above 1 is slower. Highlighted only when the whole 95% interval is at or beyond {} (faster) or {} (slower), over {} rounds or more on each side; the interval is on hover and in the cell notes. Pale and hatched with a ? (▽? △? in report.md): beyond the threshold but unconfirmed, with one round on a side or no interval, so run-to-run variation is not in it (`--repeats {}`).",
        ctx.thresholds.low,
        ctx.thresholds.high,
        confidence::CONFIRM_ROUNDS,
        crate::analysis::welch::MIN_ROUNDS
    )
}

/// The p50 and p99 of `op` in a target's ok `step`, µs.
fn percentiles(tr: &TargetResult, step: &str, op: &str) -> Option<(f64, f64)> {
    match state(tr, step) {
        State::Ok(s) => s
            .ops
            .get(op)
            .filter(|o| o.count > 0)
            .map(|o| (o.latency_us.p50, o.latency_us.p99)),
        State::No(_) => None,
    }
}

/// What one side of a comparison rests on: its operations and its per-second p99s.
struct Sample {
    side: Option<Side>,
    secs: Vec<Vec<f64>>,
}

impl Sample {
    fn of(t: &TargetResult, step: &str, op: &str) -> Sample {
        Sample {
            side: side(t, step, op),
            secs: p99_seconds(t, step, op),
        }
    }
}

/// The verdict on a p50 (`q` 0.5) or p99 ratio cell from its interval; none when a side has
/// fewer than `least` operations, as the cell's note then says.
fn judge_quantile(
    ctx: &Ctx,
    cell: &mut Cell,
    q: f64,
    least: u64,
    t: &Sample,
    b: &Sample,
    rng: &mut Xoshiro256PlusPlus,
) -> Tally {
    let few = too_few(t.side.as_ref(), b.side.as_ref(), least);
    if let (Some(n), Value::Num(_)) = (few, cell.value) {
        cell.mark = Mark::None;
        cell.note = Some(format!(
            "not judged: {n} operations on a side; p{} needs at least {least}",
            if q > 0.9 { "99" } else { "50" }
        ));
        return Tally::default();
    }
    let iv = match (cell.value, &t.side, &b.side) {
        (Value::Num(x), Some(ts), Some(bs)) => {
            let secs = (q > 0.9).then_some((&t.secs[..], &b.secs[..]));
            interval(ts, bs, q, x, secs, rng)
        }
        _ => None,
    };
    confidence::judge(
        cell,
        iv,
        Better::Lower,
        ctx.thresholds,
        confidence::Subject::Speed,
    )
}

/// Target `i`'s p50 and p99 ratios, judged, and the p-value of its per-second p99s against
/// the base's (`b`, with percentiles `bp`).
fn ratio_cells(
    ctx: &Ctx,
    step: &str,
    op: &str,
    i: usize,
    b: &Sample,
    bp: Option<(f64, f64)>,
    tally: &mut Tally,
) -> Vec<Cell> {
    let tr = &ctx.all[i];
    let tp = percentiles(tr, step, op);
    let rel =
        |f: fn((f64, f64)) -> f64| rel_cell(tp.map(f), bp.map(f), Better::Lower, ctx.thresholds);
    let (mut p50, mut p99) = (rel(|x| x.0), rel(|x| x.1));
    if i == ctx.suite_base() {
        return vec![p50, p99, Cell::gap("the base")];
    }
    let mut rng = bootstrap::seeded(&format!("{step}/{op}/{}", tr.name()));
    let t = Sample::of(tr, step, op);
    for (cell, q, least) in [(&mut p50, 0.5, P50_OPS), (&mut p99, 0.99, P99_OPS)] {
        tally.add(judge_quantile(ctx, cell, q, least, &t, b, &mut rng));
    }
    let p = match block_permutation_p(&t.secs, &b.secs, &mut rng) {
        Some((p, len)) => p_cell(p, len, &t.secs, &b.secs),
        None => Cell::gap(format!(
            "fewer than {MIN_SECONDS} full seconds with a p99 on a side (l.x, short steps, no per-second series)"
        )),
    };
    vec![p50, p99, p]
}

/// "Latency relative to the base" of one step and operation type: p50 and p99 ratios with
/// their verdicts, and the p-value of the per-second p99s. `id` names the table (the
/// percentiles table's id, which this one follows).
pub fn table(ctx: &Ctx, id: &str, suite: &'static str, step: &str, op: &str) -> (Table, Tally) {
    let cols = columns();
    let mut t = Table {
        id: format!("{id}-rel"),
        title: format!("{step}: latency of {} relative to the base", plural(op)),
        kind: Kind::Relative,
        suite,
        step: Some(step.into()),
        op: Some(op.into()),
        row_header: "target".into(),
        columns: cols.clone(),
        rows: Vec::new(),
        legend: None,
        source: None,
        base: Some(ctx.base_name().into()),
    };
    let base = &ctx.all[ctx.suite_base()];
    let bp = percentiles(base, step, op);
    let b = Sample::of(base, step, op);
    let mut tally = Tally::default();
    for &i in &ctx.idx {
        let tr = &ctx.all[i];
        let (cells, note) = match state(tr, step) {
            State::No(c) => (vec![c.clone(); cols.len()], c.note.clone()),
            State::Ok(s) if !s.ops.contains_key(op) => {
                let c = Cell::gap(format!("this target's step has no {op}"));
                (vec![c.clone(); cols.len()], c.note)
            }
            State::Ok(_) => (ratio_cells(ctx, step, op, i, &b, bp, &mut tally), None),
        };
        t.rows.push(Row {
            label: tr.name().into(),
            target: Some(i),
            cells,
            note,
        });
    }
    t.legend = Some(legend(ctx));
    (t, tally)
}

/// The lines under a latency table: the verdicts, and what the p-value means.
pub fn sentence(tally: &Tally) -> String {
    let mut s = format!(
        "Verdicts: {} of {} latency comparisons with the base called a difference ({} faster, {} slower: lower latency is faster){}.",
        tally.faster + tally.slower,
        tally.compared,
        tally.faster,
        tally.slower,
        tally.unconfirmed_clause()
    );
    if let Some(o) = tally.one_round_sentence() {
        s.push_str(&o);
    }
    s.push(' ');
    if tally.no_interval > 0 {
        s.push_str(&format!(
            "{} had no latency histogram to resample: beyond a threshold they are unconfirmed, not called. ",
            tally.no_interval
        ));
    }
    s.push_str(&format!("Cells over fewer than {P50_OPS} operations (p50) or {P99_OPS} (p99) on a side are not judged. p: a block permutation test of the per-second p99s, one per cell and not corrected for the many (hover its header in the HTML). Method and limits: docs/statistics.md, \"Latency\"."));
    s
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analysis::latency::fixtures::hist;
    use crate::analysis::latency::Seconds;
    use crate::report::model::{Mark, Value};
    use crate::report::rules::Thresholds;
    use rand_core::{Rng, SeedableRng};
    use rand_xoshiro::Xoshiro256PlusPlus;

    #[test]
    fn operation_types_read_in_the_plural() {
        for (op, many) in [
            ("insert", "inserts"),
            ("query", "queries"),
            ("index", "index builds"),
            ("event", "events"),
            ("delivery", "deliveries"),
            ("order_status", "order_statuses"),
            ("new_order", "new_orders"),
            ("key", "keys"),
        ] {
            assert_eq!(plural(op), many);
        }
    }

    /// `rounds` rounds of `n` per-second p99s around `level`.
    fn seconds(level: f64, n: usize, seed: u64, rounds: u64) -> Vec<Vec<f64>> {
        let mut rng = Xoshiro256PlusPlus::seed_from_u64(seed);
        (0..rounds)
            .map(|_| {
                (0..n)
                    .map(|_| level * (0.9 + 0.2 * (rng.next_u64() % 1000) as f64 / 1000.0))
                    .collect()
            })
            .collect()
    }

    /// A side of `rounds` rounds of 20,000 operations, each from its own seed.
    fn side(body: f64, tail: f64, seed: u64, rounds: u64) -> Side {
        let hs: Vec<_> = (0..rounds)
            .map(|r| hist(20_000, body, tail, seed * 10 + r))
            .collect();
        Side::new(&hs).unwrap()
    }

    fn verdict(t: &Side, b: &Side, q: f64, secs: Seconds) -> (Mark, String) {
        let all = |s: &Side| vec![1u64; s.rounds()];
        let r = t.quantile(&all(t), q) / b.quantile(&all(b), q);
        let mut rng = bootstrap::seeded("test");
        let iv = interval(t, b, q, r, Some(secs), &mut rng);
        assert!(iv.is_some());
        let mut c = rel_cell(Some(r), Some(1.0), Better::Lower, Thresholds::default());
        confidence::judge(
            &mut c,
            iv,
            Better::Lower,
            Thresholds::default(),
            confidence::Subject::Speed,
        );
        (c.mark, c.note.unwrap())
    }

    #[test]
    fn a_p99_30_percent_higher_is_slower_and_the_same_distribution_is_not() {
        let base = side(100.0, 1000.0, 1, 2);
        let slow = side(130.0, 1300.0, 2, 2);
        let same = side(100.0, 1000.0, 3, 2);
        let (bs, ss, os) = (
            seconds(1.0, 60, 4, 2),
            seconds(1.3, 60, 5, 2),
            seconds(1.0, 60, 6, 2),
        );
        let (m, note) = verdict(&slow, &base, 0.99, (&ss, &bs));
        assert_eq!(m, Mark::Worse, "{note}");
        assert!(note.starts_with("slower: 95% interval"), "{note}");
        for q in [0.5, 0.99] {
            let (m, note) = verdict(&same, &base, q, (&os, &bs));
            assert_eq!(m, Mark::None, "q {q}: {note}");
        }
        let mut rng = bootstrap::seeded("p");
        let (p, _) = block_permutation_p(&ss, &bs, &mut rng).unwrap();
        assert!(p < 0.01, "{p}");
        let (p, _) = block_permutation_p(&os, &bs, &mut rng).unwrap();
        assert!(p > 0.05, "{p}");
    }

    /// One round a side: the interval is of that run's operations and seconds only, so the
    /// same 30% is beyond the threshold within the run but not called.
    #[test]
    fn one_round_a_side_is_unconfirmed_not_slower() {
        let base = side(100.0, 1000.0, 1, 1);
        let slow = side(130.0, 1300.0, 2, 1);
        let (bs, ss) = (seconds(1.0, 60, 4, 1), seconds(1.3, 60, 5, 1));
        let (m, note) = verdict(&slow, &base, 0.99, (&ss, &bs));
        assert_eq!(m, Mark::UnconfirmedWorse, "{note}");
        assert!(
            note.starts_with("unconfirmed, slower within this run: 95% interval")
                && note.contains("× 1 round)")
                && note.contains("--repeats 3"),
            "{note}"
        );
    }

    #[test]
    fn a_slower_tail_with_the_same_median_shows_in_p99_only() {
        let base = side(100.0, 1000.0, 1, 2);
        let tail = side(100.0, 1400.0, 7, 2);
        let (bs, ts) = (seconds(1.0, 60, 4, 2), seconds(1.4, 60, 8, 2));
        assert_eq!(verdict(&tail, &base, 0.5, (&ts, &bs)).0, Mark::None);
        assert_eq!(verdict(&tail, &base, 0.99, (&ts, &bs)).0, Mark::Worse);
    }

    #[test]
    fn a_p_value_below_a_thousandth_reads_as_such() {
        let c = p_cell(0.0004, 2, &[vec![1.0; 4]], &[vec![1.0; 5]]);
        assert_eq!((c.text.as_str(), c.value), ("<0.001", Value::Num(0.0004)));
    }
}
