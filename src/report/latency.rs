//! Latency against the base (docs/statistics.md, "Latency"): per step and operation type the
//! ratios target / base of p50 and p99, each with a 95% bootstrap interval and the verdict of
//! the throughput tables (lower latency is better), and a block permutation test on the
//! per-second p99s.
//!
//! The interval resamples what a percentile is made of: the rounds of a campaign with
//! replacement, then operations from the drawn rounds' HDR histograms. The q-quantile of N
//! operations drawn with replacement is their k-th smallest (k = ⌈qN⌉), which is F⁻¹(U) with
//! U ~ Beta(k, N − k + 1): one Beta draw stands exactly for N draws, so the bootstrap costs the
//! same for a thousand operations as for ten million.

use hdrhistogram::Histogram;
use rand_core::Rng;
use rand_distr::{Beta, Distribution};
use rand_xoshiro::Xoshiro256PlusPlus;

use super::common::{state, State};
use super::confidence::{self, Interval, Tally, MIN_SECONDS};
use super::context::Ctx;
use super::model::{Better, Cell, Column, Kind, Row, Table};
use super::rules::rel_cell;
use super::target::TargetResult;
use crate::results::decode_histogram;

/// Resamples per interval, as for throughput.
const RESAMPLES: usize = 2000;
/// Random relabellings of blocks for the p-value.
const PERMUTATIONS: usize = 2000;
/// Fewer operations than this on a side (all rounds) give p50 no verdict, and fewer than
/// `P99_OPS` give p99 none: a p99 of under 100 operations is the slowest one, a single
/// operation, and a bootstrap of a handful says nothing (one operation gives a zero-width
/// interval).
const P50_OPS: u64 = 10;
const P99_OPS: u64 = 100;

/// One operation type of one step over a target's rounds, on one latency axis.
struct Side {
    /// Distinct latencies (ns, the top of each HDR bucket), ascending.
    axis: Vec<u64>,
    /// Per round: operations at or below each axis value.
    cum: Vec<Vec<u64>>,
}

fn runs(t: &TargetResult) -> Vec<&TargetResult> {
    if t.repeats.is_empty() {
        vec![t]
    } else {
        t.repeats.iter().collect()
    }
}

impl Side {
    fn read(t: &TargetResult, step: &str, op: &str) -> Option<Side> {
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

    fn new(hs: &[Histogram<u64>]) -> Option<Side> {
        let mut axis: Vec<u64> = hs
            .iter()
            .flat_map(|h| h.iter_recorded().map(|v| v.value_iterated_to()))
            .collect();
        axis.sort_unstable();
        axis.dedup();
        if axis.is_empty() {
            return None;
        }
        let cum = hs
            .iter()
            .map(|h| {
                let mut c = vec![0u64; axis.len()];
                for v in h.iter_recorded() {
                    if let Ok(i) = axis.binary_search(&v.value_iterated_to()) {
                        c[i] += v.count_at_value();
                    }
                }
                let mut run = 0;
                for x in &mut c {
                    run += *x;
                    *x = run;
                }
                c
            })
            .collect();
        Some(Side { axis, cum })
    }

    fn rounds(&self) -> usize {
        self.cum.len()
    }

    /// Operations of the smallest round.
    fn ops(&self) -> u64 {
        self.cum.iter().map(|c| c[c.len() - 1]).min().unwrap_or(0)
    }

    /// Operations of all rounds.
    fn all_ops(&self) -> u64 {
        self.cum.iter().map(|c| c[c.len() - 1]).sum()
    }

    /// Operations at or below axis value `j` in the drawn rounds (`times[r]`: draws of round r).
    fn below(&self, times: &[u64], j: usize) -> u64 {
        self.cum.iter().zip(times).map(|(c, n)| c[j] * n).sum()
    }

    /// The smallest latency with at least `rank` of the drawn operations at or below it.
    fn at_rank(&self, times: &[u64], rank: f64) -> f64 {
        // Binary search: `below` rises with j.
        let (mut lo, mut hi) = (0, self.axis.len() - 1);
        while lo < hi {
            let mid = (lo + hi) / 2;
            if (self.below(times, mid) as f64) < rank {
                lo = mid + 1;
            } else {
                hi = mid;
            }
        }
        self.axis[lo] as f64
    }

    fn total(&self, times: &[u64]) -> u64 {
        self.below(times, self.axis.len() - 1)
    }

    /// The q-quantile of the drawn rounds' operations together (HDR's definition: the value
    /// at rank ⌈qN⌉).
    fn quantile(&self, times: &[u64], q: f64) -> f64 {
        let n = self.total(times) as f64;
        self.at_rank(times, (q * n).ceil().max(1.0))
    }

    /// The q-quantile of N operations drawn with replacement from the drawn rounds' operations:
    /// their k-th smallest, F⁻¹(U) with U ~ Beta(k, N − k + 1).
    fn resampled(&self, times: &[u64], q: f64, rng: &mut Xoshiro256PlusPlus) -> f64 {
        let n = self.total(times);
        let k = ((q * n as f64).ceil() as u64).clamp(1, n.max(1));
        let u = Beta::new(k as f64, (n - k + 1) as f64)
            .map(|b| b.sample(rng))
            .unwrap_or(k as f64 / n as f64);
        self.at_rank(times, u * n as f64)
    }

    fn only(&self, r: usize) -> Vec<u64> {
        let mut times = vec![0u64; self.rounds()];
        times[r] = 1;
        times
    }

    /// The median over the rounds of each round's q-quantile: the number the table shows
    /// (repeats are merged number by number, as medians).
    fn median_of_rounds(&self, q: f64) -> f64 {
        let v = (0..self.rounds())
            .map(|r| self.quantile(&self.only(r), q))
            .collect();
        crate::analysis::rounds::median(v)
    }

    /// One replicate of `median_of_rounds`: rounds drawn with replacement, each drawn copy's
    /// operations resampled on their own.
    fn replicate(&self, q: f64, rng: &mut Xoshiro256PlusPlus) -> f64 {
        let times = self.draw(rng);
        let mut v = Vec::with_capacity(self.rounds());
        for (r, n) in times.iter().enumerate() {
            let one = self.only(r);
            for _ in 0..*n {
                v.push(self.resampled(&one, q, rng));
            }
        }
        crate::analysis::rounds::median(v)
    }

    /// Rounds drawn with replacement, as counts per round.
    fn draw(&self, rng: &mut Xoshiro256PlusPlus) -> Vec<u64> {
        let k = self.rounds();
        let mut times = vec![0u64; k];
        for _ in 0..k {
            times[(rng.next_u64() % k as u64) as usize] += 1;
        }
        times
    }
}

/// Per-second p99s of target and base, per round.
type Seconds<'a> = (&'a [Vec<f64>], &'a [Vec<f64>]);

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

/// The 95% interval of `ratio` (target / base of the q-quantile, each the median over rounds)
/// from the histograms: rounds drawn, then each drawn round's operations. Operations are
/// resampled as if independent, which is narrow: for p99 the interval also takes in a
/// moving-block bootstrap of the mean per-second p99 (`secs`, target and base), which carries
/// the correlation between seconds.
fn interval(
    t: &Side,
    b: &Side,
    q: f64,
    ratio: f64,
    secs: Option<Seconds>,
    rng: &mut Xoshiro256PlusPlus,
) -> Option<Interval> {
    let point = t.median_of_rounds(q) / b.median_of_rounds(q);
    if !(point.is_finite() && point > 0.0 && ratio.is_finite()) {
        return None;
    }
    let mut f: Vec<f64> = (0..RESAMPLES)
        .map(|_| t.replicate(q, rng) / b.replicate(q, rng) / point)
        .filter(|x| x.is_finite())
        .collect();
    if f.len() < RESAMPLES / 2 {
        return None;
    }
    f.sort_by(f64::total_cmp);
    let rounds = t.rounds().min(b.rounds());
    let mut iv = Interval {
        lo: ratio * confidence::quantile(&f, 0.025),
        hi: ratio * confidence::quantile(&f, 0.975),
        seconds: 0,
        rounds,
        ops: Some(t.ops().min(b.ops())),
    };
    if let Some((lo, hi)) = secs.and_then(|(ts, bs)| seconds_interval(ts, bs, ratio, rng)) {
        iv.lo = iv.lo.min(lo);
        iv.hi = iv.hi.max(hi);
    }
    if let Some((lo, hi)) = rounds_log_interval(t, b, q, ratio) {
        iv.lo = iv.lo.min(lo);
        iv.hi = iv.hi.max(hi);
    }
    Some(iv)
}

/// With rounds enough on both sides, Welch's t-interval over the rounds' log percentiles
/// (`confidence::log_rounds_interval`). Three rounds drawn with replacement understate how far
/// another round could land, and a percentile can jump between rounds: SQLite's l.i2 deletes
/// are either quick or wait for the inserter's lock, and a round's p50 falls in one mode or
/// the other, 0.4 ms or 10 ms.
fn rounds_log_interval(t: &Side, b: &Side, q: f64, ratio: f64) -> Option<(f64, f64)> {
    let per_round =
        |s: &Side| -> Vec<f64> { (0..s.rounds()).map(|r| s.quantile(&s.only(r), q)).collect() };
    confidence::log_rounds_interval(&per_round(t), &per_round(b), ratio).map(|iv| (iv.lo, iv.hi))
}

/// The interval of `ratio` from a moving-block bootstrap of the mean per-second p99 (rounds
/// drawn, then blocks of seconds, as for throughput).
fn seconds_interval(
    t: &[Vec<f64>],
    b: &[Vec<f64>],
    ratio: f64,
    rng: &mut Xoshiro256PlusPlus,
) -> Option<(f64, f64)> {
    let long = |v: &[Vec<f64>]| !v.is_empty() && v.iter().all(|r| r.len() >= MIN_SECONDS);
    if !(long(t) && long(b)) {
        return None;
    }
    let mean = |v: &[Vec<f64>]| {
        v.iter()
            .map(|r| r.iter().sum::<f64>() / r.len() as f64)
            .sum::<f64>()
            / v.len() as f64
    };
    let point = mean(t) / mean(b);
    let mut f: Vec<f64> = (0..RESAMPLES)
        .map(|_| confidence::replicate(t, rng) / confidence::replicate(b, rng) / point)
        .filter(|x| x.is_finite())
        .collect();
    if f.len() < RESAMPLES / 2 {
        return None;
    }
    f.sort_by(f64::total_cmp);
    Some((
        ratio * confidence::quantile(&f, 0.025),
        ratio * confidence::quantile(&f, 0.975),
    ))
}

/// A two-sided block permutation test of "the per-second p99s of target and base come from one
/// distribution": midranks of all seconds together, the difference of the mean ranks (the
/// Mann-Whitney statistic) as the statistic, and blocks of ⌈n^(1/3)⌉ consecutive seconds of a
/// round (not single seconds, which are correlated) relabelled at random. Returns the p-value
/// and the block length.
fn block_permutation_p(
    t: &[Vec<f64>],
    b: &[Vec<f64>],
    rng: &mut Xoshiro256PlusPlus,
) -> Option<(f64, usize)> {
    let count = |v: &[Vec<f64>]| v.iter().map(Vec::len).sum::<usize>();
    if count(t) < MIN_SECONDS || count(b) < MIN_SECONDS {
        return None;
    }
    let shortest = t.iter().chain(b).map(Vec::len).filter(|n| *n > 0).min()?;
    let len = ((shortest as f64).cbrt().ceil() as usize).max(1);
    let mut all: Vec<f64> = t.iter().chain(b).flatten().copied().collect();
    all.sort_by(f64::total_cmp);
    // Midrank of a value: the mean of the 1-based ranks its ties occupy.
    let rank = |x: f64| {
        let lo = all.partition_point(|v| *v < x);
        let hi = all.partition_point(|v| *v <= x);
        (lo + hi + 1) as f64 / 2.0
    };
    // Blocks: (sum of ranks, seconds), target's first.
    let blocks = |v: &[Vec<f64>]| -> Vec<(f64, usize)> {
        v.iter()
            .flat_map(|r| r.chunks(len))
            .map(|c| (c.iter().map(|x| rank(*x)).sum(), c.len()))
            .collect()
    };
    let mut bl = blocks(t);
    let nt = bl.len();
    bl.extend(blocks(b));
    let stat = |order: &[usize]| {
        let (mut st, mut ct, mut sb, mut cb) = (0.0, 0usize, 0.0, 0usize);
        for (pos, &i) in order.iter().enumerate() {
            if pos < nt {
                st += bl[i].0;
                ct += bl[i].1;
            } else {
                sb += bl[i].0;
                cb += bl[i].1;
            }
        }
        (st / ct as f64 - sb / cb as f64).abs()
    };
    let mut order: Vec<usize> = (0..bl.len()).collect();
    let observed = stat(&order);
    let mut extreme = 0usize;
    for _ in 0..PERMUTATIONS {
        for i in (1..order.len()).rev() {
            let j = (rng.next_u64() % (i as u64 + 1)) as usize;
            order.swap(i, j);
        }
        if stat(&order) >= observed - 1e-9 {
            extreme += 1;
        }
    }
    Some(((1 + extreme) as f64 / (1 + PERMUTATIONS) as f64, len))
}

/// The operations of the smaller side when fewer than `least`: too few to judge.
fn too_few(t: Option<&Side>, b: Option<&Side>, least: u64) -> Option<u64> {
    [t, b]
        .into_iter()
        .flatten()
        .map(Side::all_ops)
        .min()
        .filter(|n| *n < least)
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

fn plural(op: &str) -> String {
    match op {
        "query" => "queries".into(),
        "index" => "index builds".into(),
        o => format!("{o}s"),
    }
}

/// "Latency relative to the base" of one step and operation type: p50 and p99 ratios with
/// their verdicts, and the p-value of the per-second p99s. `id` names the table (the
/// percentiles table's id, which this one follows).
pub fn table(ctx: &Ctx, id: &str, suite: &'static str, step: &str, op: &str) -> (Table, Tally) {
    let cols = vec![
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
    ];
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
    let bi = ctx.suite_base();
    let base = &ctx.all[bi];
    let pct = |tr: &TargetResult| -> Option<(f64, f64)> {
        match state(tr, step) {
            State::Ok(s) => s
                .ops
                .get(op)
                .filter(|o| o.count > 0)
                .map(|o| (o.latency_us.p50, o.latency_us.p99)),
            State::No(_) => None,
        }
    };
    let bp = pct(base);
    let bside = Side::read(base, step, op);
    let bsecs = p99_seconds(base, step, op);
    let mut tally = Tally::default();
    for &i in &ctx.idx {
        let tr = &ctx.all[i];
        let (cells, note) = match state(tr, step) {
            State::No(c) => (vec![c.clone(); cols.len()], c.note.clone()),
            State::Ok(s) if !s.ops.contains_key(op) => {
                let c = Cell::gap(format!("this target's step has no {op}"));
                (vec![c.clone(); cols.len()], c.note)
            }
            State::Ok(_) => {
                let tp = pct(tr);
                let mut p50 = rel_cell(
                    tp.map(|x| x.0),
                    bp.map(|x| x.0),
                    Better::Lower,
                    ctx.thresholds,
                );
                let mut p99 = rel_cell(
                    tp.map(|x| x.1),
                    bp.map(|x| x.1),
                    Better::Lower,
                    ctx.thresholds,
                );
                if i == bi {
                    (vec![p50, p99, Cell::gap("the base")], None)
                } else {
                    let mut rng = confidence::seeded(&format!("{step}/{op}/{}", tr.name()));
                    let tside = Side::read(tr, step, op);
                    let tsecs = p99_seconds(tr, step, op);
                    for (cell, q, least) in [(&mut p50, 0.5, P50_OPS), (&mut p99, 0.99, P99_OPS)] {
                        let few = too_few(tside.as_ref(), bside.as_ref(), least);
                        if let (Some(n), super::model::Value::Num(_)) = (few, cell.value) {
                            cell.mark = super::model::Mark::None;
                            cell.note = Some(format!(
                                "not judged: {n} operations on a side; p{} needs at least {least}",
                                if q > 0.9 { "99" } else { "50" }
                            ));
                            continue;
                        }
                        let iv = match (cell.value, &tside, &bside) {
                            (super::model::Value::Num(x), Some(ts), Some(bs)) => {
                                let secs = (q > 0.9).then_some((&tsecs[..], &bsecs[..]));
                                interval(ts, bs, q, x, secs, &mut rng)
                            }
                            _ => None,
                        };
                        tally.add(confidence::judge(
                            cell,
                            iv,
                            Better::Lower,
                            ctx.thresholds,
                            confidence::Subject::Speed,
                        ));
                    }
                    let p = match block_permutation_p(&tsecs, &bsecs, &mut rng) {
                        Some((p, len)) => p_cell(p, len, &tsecs, &bsecs),
                        None => Cell::gap(format!(
                            "fewer than {MIN_SECONDS} full seconds with a p99 on a side (l.x, short steps, no per-second series)"
                        )),
                    };
                    (vec![p50, p99, p], None)
                }
            }
        };
        t.rows.push(Row {
            label: tr.name().into(),
            target: Some(i),
            cells,
            note,
        });
    }
    t.legend = Some(format!(
        "Latency percentile of the target / the base's (HDR histograms), 2 decimals: above 1 is slower. Highlighted only when the whole 95% interval is at or beyond {} (faster) or {} (slower); the interval is on hover and in the cell notes.",
        ctx.thresholds.low, ctx.thresholds.high
    ));
    (t, tally)
}

/// The lines under a latency table: the verdicts, and what the p-value means.
pub fn sentence(tally: &Tally) -> String {
    let mut s = format!(
        "Verdicts: {} of {} latency comparisons with the base called a difference ({} faster, {} slower: lower latency is faster). ",
        tally.faster + tally.slower,
        tally.compared,
        tally.faster,
        tally.slower
    );
    if tally.no_interval > 0 {
        s.push_str(&format!(
            "{} had no latency histogram to resample and are called on the threshold alone. ",
            tally.no_interval
        ));
    }
    s.push_str(&format!("Cells over fewer than {P50_OPS} operations (p50) or {P99_OPS} (p99) on a side are not judged. p: a block permutation test of the per-second p99s, one per cell and not corrected for the many (hover its header in the HTML). Method and limits: docs/statistics.md, \"Latency\"."));
    s
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::model::{Mark, Value};
    use crate::report::rules::Thresholds;
    use rand_core::SeedableRng;

    /// A histogram of `n` latencies: a body around `body_us` and the slowest 2% around
    /// `tail_us`, with a little spread from a fixed generator.
    fn hist(n: usize, body_us: f64, tail_us: f64, seed: u64) -> Histogram<u64> {
        let mut h = Histogram::<u64>::new_with_bounds(1, 3_600_000_000_000, 3).unwrap();
        let mut rng = Xoshiro256PlusPlus::seed_from_u64(seed);
        for i in 0..n {
            let u = (rng.next_u64() % 10_000) as f64 / 10_000.0;
            let level = if i % 50 == 0 { tail_us } else { body_us };
            h.record((level * (0.8 + 0.4 * u) * 1000.0) as u64).unwrap();
        }
        h
    }

    fn seconds(level: f64, n: usize, seed: u64) -> Vec<Vec<f64>> {
        let mut rng = Xoshiro256PlusPlus::seed_from_u64(seed);
        vec![(0..n)
            .map(|_| level * (0.9 + 0.2 * (rng.next_u64() % 1000) as f64 / 1000.0))
            .collect()]
    }

    fn verdict(t: &Side, b: &Side, q: f64, secs: Seconds) -> (Mark, String) {
        let all = |s: &Side| vec![1u64; s.rounds()];
        let r = t.quantile(&all(t), q) / b.quantile(&all(b), q);
        let mut rng = confidence::seeded("test");
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
        let base = Side::new(&[hist(20_000, 100.0, 1000.0, 1)]).unwrap();
        let slow = Side::new(&[hist(20_000, 130.0, 1300.0, 2)]).unwrap();
        let same = Side::new(&[hist(20_000, 100.0, 1000.0, 3)]).unwrap();
        let (bs, ss, os) = (
            seconds(1.0, 60, 4),
            seconds(1.3, 60, 5),
            seconds(1.0, 60, 6),
        );
        let (m, note) = verdict(&slow, &base, 0.99, (&ss, &bs));
        assert_eq!(m, Mark::Worse, "{note}");
        assert!(note.starts_with("slower: 95% interval"), "{note}");
        for q in [0.5, 0.99] {
            let (m, note) = verdict(&same, &base, q, (&os, &bs));
            assert_eq!(m, Mark::None, "q {q}: {note}");
        }
        let mut rng = confidence::seeded("p");
        let (p, _) = block_permutation_p(&ss, &bs, &mut rng).unwrap();
        assert!(p < 0.01, "{p}");
        let (p, _) = block_permutation_p(&os, &bs, &mut rng).unwrap();
        assert!(p > 0.05, "{p}");
    }

    #[test]
    fn a_slower_tail_with_the_same_median_shows_in_p99_only() {
        let base = Side::new(&[hist(20_000, 100.0, 1000.0, 1)]).unwrap();
        let tail = Side::new(&[hist(20_000, 100.0, 1400.0, 7)]).unwrap();
        let (bs, ts) = (seconds(1.0, 60, 4), seconds(1.4, 60, 8));
        assert_eq!(verdict(&tail, &base, 0.5, (&ts, &bs)).0, Mark::None);
        assert_eq!(verdict(&tail, &base, 0.99, (&ts, &bs)).0, Mark::Worse);
    }

    #[test]
    fn rounds_that_disagree_widen_the_interval() {
        let base =
            Side::new(&[hist(5000, 100.0, 1000.0, 1), hist(5000, 100.0, 1000.0, 2)]).unwrap();
        let steady =
            Side::new(&[hist(5000, 100.0, 1000.0, 3), hist(5000, 100.0, 1000.0, 4)]).unwrap();
        let apart = Side::new(&[hist(5000, 80.0, 800.0, 5), hist(5000, 125.0, 1250.0, 6)]).unwrap();
        let width = |t: &Side| {
            let mut rng = confidence::seeded("w");
            let iv = interval(t, &base, 0.5, 1.0, None, &mut rng).unwrap();
            assert_eq!((iv.rounds, iv.ops), (2, Some(5000)));
            iv.hi - iv.lo
        };
        assert!(width(&apart) > 3.0 * width(&steady));
    }

    /// Three rounds a side whose p50s spread widely (as SQLite's l.i1 inserts did: 1.8-2.7 ms
    /// for one target): drawing the rounds with replacement called a 1.6x median ratio slower
    /// (1.07-2.29); Welch's t over the rounds' logs, with two to four degrees of freedom, does
    /// not. A consistent 2x in every round still is.
    #[test]
    fn percentiles_spread_over_three_rounds_are_not_called_on_the_round_draw() {
        let at = |us: f64, seed| hist(3000, us, 3.0 * us, seed);
        let base = Side::new(&[at(1000.0, 1), at(1250.0, 2), at(1550.0, 3)]).unwrap();
        let apart = Side::new(&[at(1650.0, 4), at(2000.0, 5), at(2300.0, 6)]).unwrap();
        let r = apart.median_of_rounds(0.5) / base.median_of_rounds(0.5);
        assert!(r > 1.55, "{r}");
        let mut rng = confidence::seeded("spread");
        let iv = interval(&apart, &base, 0.5, r, None, &mut rng).unwrap();
        assert!(iv.lo < 1.05 && iv.hi >= r, "{iv:?}");
        let twice = Side::new(&[at(2500.0, 7), at(2550.0, 8), at(2600.0, 9)]).unwrap();
        let steady = Side::new(&[at(1250.0, 10), at(1260.0, 11), at(1300.0, 12)]).unwrap();
        let r = twice.median_of_rounds(0.5) / steady.median_of_rounds(0.5);
        let iv = interval(&twice, &steady, 0.5, r, None, &mut rng).unwrap();
        assert!(iv.lo > 1.05, "{iv:?}");
    }

    /// The Beta shortcut is the bootstrap it stands for: the spread of the resampled median of
    /// 101 values matches drawing the 101 values one by one.
    #[test]
    fn one_beta_draw_stands_for_drawing_every_operation() {
        let mut h = Histogram::<u64>::new_with_bounds(1, 1_000_000, 3).unwrap();
        for v in 1..=101u64 {
            h.record(v * 10).unwrap();
        }
        let s = Side::new(&[h]).unwrap();
        let mut rng = confidence::seeded("beta");
        let mut fast: Vec<f64> = (0..4000)
            .map(|_| s.resampled(&[1], 0.5, &mut rng))
            .collect();
        let mut slow: Vec<f64> = (0..4000)
            .map(|_| {
                let mut v: Vec<u64> = (0..101).map(|_| (rng.next_u64() % 101 + 1) * 10).collect();
                v.sort_unstable();
                v[50] as f64
            })
            .collect();
        fast.sort_by(f64::total_cmp);
        slow.sort_by(f64::total_cmp);
        for q in [0.025, 0.5, 0.975] {
            let (a, b) = (
                confidence::quantile(&fast, q),
                confidence::quantile(&slow, q),
            );
            assert!((a - b).abs() <= 30.0, "q {q}: {a} vs {b}");
        }
    }

    #[test]
    fn too_few_operations_are_not_judged() {
        let one = Side::new(&[hist(1, 100.0, 100.0, 1)]).unwrap();
        let many = Side::new(&[hist(60, 100.0, 100.0, 2), hist(60, 100.0, 100.0, 3)]).unwrap();
        assert_eq!(too_few(Some(&one), Some(&many), P50_OPS), Some(1));
        assert_eq!(too_few(Some(&many), Some(&many), P50_OPS), None);
        assert_eq!(
            too_few(Some(&many), Some(&many), P99_OPS),
            None,
            "120 over two rounds"
        );
        let few = Side::new(&[hist(60, 100.0, 100.0, 2)]).unwrap();
        assert_eq!(too_few(Some(&few), Some(&many), P99_OPS), Some(60));
    }

    #[test]
    fn too_few_seconds_give_no_p_value() {
        let mut rng = confidence::seeded("few");
        assert!(block_permutation_p(&[vec![1.0, 2.0]], &[vec![1.0; 10]], &mut rng).is_none());
        let c = p_cell(0.0004, 2, &[vec![1.0; 4]], &[vec![1.0; 5]]);
        assert_eq!((c.text.as_str(), c.value), ("<0.001", Value::Num(0.0004)));
    }
}
