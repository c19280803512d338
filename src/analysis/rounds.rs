//! A campaign's repeats of one measurement as one number: the median over the rounds, taken
//! number by number (counts, rates, each latency percentile, the SLA's achieved rate). What
//! cannot be a median (histogram buckets, error samples) comes from a representative round
//! the caller picks (`rep`).

use crate::results::{OpStats, Percentiles, Sla};

/// The median of the finite values; NaN when there are none.
pub fn median(mut v: Vec<f64>) -> f64 {
    v.retain(|x| x.is_finite());
    if v.is_empty() {
        return f64::NAN;
    }
    v.sort_by(f64::total_cmp);
    let n = v.len();
    if n % 2 == 1 {
        v[n / 2]
    } else {
        (v[n / 2 - 1] + v[n / 2]) / 2.0
    }
}

/// The median of `f` over the rounds' `items`.
pub fn median_by<T>(items: &[&T], f: impl Fn(&T) -> f64) -> f64 {
    median(items.iter().map(|x| f(x)).collect())
}

/// The median of `f` over the rounds that have it; None when none has.
pub fn median_of_present<T>(items: &[&T], f: impl Fn(&T) -> Option<f64>) -> Option<f64> {
    let m = median(items.iter().filter_map(|x| f(x)).collect());
    m.is_finite().then_some(m)
}

/// Each percentile the median of that percentile over the rounds.
pub fn percentiles(items: &[&Percentiles]) -> Percentiles {
    Percentiles {
        mean: median_by(items, |l| l.mean),
        p50: median_by(items, |l| l.p50),
        p90: median_by(items, |l| l.p90),
        p99: median_by(items, |l| l.p99),
        p99_9: median_by(items, |l| l.p99_9),
        p99_99: median_by(items, |l| l.p99_99),
        max: median_by(items, |l| l.max),
    }
}

/// Counts and rates are medians; what cannot be a median (buckets, error samples, the
/// histogram) is the representative round's.
pub fn op(rep: &OpStats, items: &[&OpStats]) -> OpStats {
    let count = |f: fn(&OpStats) -> u64| median_by(items, |o| f(o) as f64).round() as u64;
    let lat: Vec<&Percentiles> = items.iter().map(|o| &o.latency_us).collect();
    let svc: Vec<&Percentiles> = items.iter().map(|o| &o.service_us).collect();
    OpStats {
        count: count(|o| o.count),
        rows: count(|o| o.rows),
        errors: count(|o| o.errors),
        retried: count(|o| o.retried),
        ignored: count(|o| o.ignored),
        failed: count(|o| o.failed),
        ops_per_s: median_by(items, |o| o.ops_per_s),
        rows_per_s: median_by(items, |o| o.rows_per_s),
        latency_us: percentiles(&lat),
        service_us: percentiles(&svc),
        max_ms: median_by(items, |o| o.max_ms),
        ..rep.clone()
    }
}

/// The achieved rate is the rounds' median, and the ratio and verdict follow from it against
/// the representative round's target.
pub fn sla(rep: &Sla, items: &[&Sla]) -> Sla {
    let achieved = median_by(items, |s| s.achieved_rows_per_s);
    let ratio = if rep.target_rows_per_s > 0.0 {
        achieved / rep.target_rows_per_s
    } else {
        0.0
    };
    Sla {
        target_rows_per_s: rep.target_rows_per_s,
        achieved_rows_per_s: achieved,
        ratio,
        required_ratio: rep.required_ratio,
        met: rep.met.map(|_| ratio >= rep.required_ratio),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn median_of_odd_even_and_non_finite() {
        assert_eq!(median(vec![3.0, 1.0, 2.0]), 2.0);
        assert_eq!(median(vec![4.0, 1.0, 2.0, 3.0]), 2.5);
        assert_eq!(median(vec![f64::NAN, 5.0]), 5.0);
        assert!(median(vec![]).is_nan());
    }
}
