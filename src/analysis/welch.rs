//! Welch's t-interval for a ratio target / base from figures measured once per round, on their
//! own scale or on their logarithms (docs/statistics.md). With three rounds a side the t
//! quantile's few degrees of freedom are what keep such an interval honest; a bootstrap over
//! three values would draw from those three only.

use super::interval::{mean, Interval};

/// Rounds without series of their own give an interval from their headlines from this many.
pub const MIN_ROUNDS: usize = 3;

/// Student's t distribution's 97.5% point for 1 to 30 degrees of freedom (any statistics
/// table); beyond 30 a Cornish-Fisher expansion around the normal's 1.96 is within 0.001.
fn t975(df: f64) -> f64 {
    const T: [f64; 30] = [
        12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228, 2.201, 2.179, 2.160,
        2.145, 2.131, 2.120, 2.110, 2.101, 2.093, 2.086, 2.080, 2.074, 2.069, 2.064, 2.060, 2.056,
        2.052, 2.048, 2.045, 2.042,
    ];
    if df < 30.5 {
        // Fewer degrees of freedom, a wider interval: Welch's fractional df rounds down.
        return T[(df.floor() as usize).clamp(1, 30) - 1];
    }
    let z: f64 = 1.959964;
    z + (z.powi(3) + z) / (4.0 * df)
        + (5.0 * z.powi(5) + 16.0 * z.powi(3) + 3.0 * z) / (96.0 * df * df)
}

/// The 95% interval of `ratio` for a figure measured once per round (a metric per operation:
/// a ratio of counters over the whole step, with no per-second series to resample): Welch's
/// t-interval for the difference of the two sides' means over their rounds, as a ratio to the
/// base's mean. A bootstrap over three rounds would draw its replicates from three values only
/// and give intervals far too narrow (an A/A campaign had 14% of its metrics cells called);
/// the t quantile with the few degrees of freedom three rounds have is what keeps this one
/// honest. None below MIN_ROUNDS rounds on a side, or when the base's mean is 0 (a ratio to
/// nothing).
pub fn rounds_interval(t: &[f64], b: &[f64], ratio: f64) -> Option<Interval> {
    if !ratio.is_finite() {
        return None;
    }
    let (mt, mb, half) = welch(t, b)?;
    let point = mt / mb;
    // A base of nothing has no ratio to it.
    if !(mb != 0.0 && point.is_finite() && point >= 0.0) {
        return None;
    }
    let (lo, hi) = ((mt - mb - half) / mb + 1.0, (mt - mb + half) / mb + 1.0);
    Some(Interval {
        lo: take_in(lo, hi, ratio).0.max(0.0),
        hi: take_in(lo, hi, ratio).1,
        seconds: 1,
        rounds: t.len().min(b.len()),
        ops: None,
    })
}

/// An interval over the rounds' mean, widened to take in the table's ratio, a median over
/// the rounds (repeats are merged number by number as medians). With three rounds the two
/// can lie far apart, and moving the interval onto the median would misplace it: scaled by
/// median / mean it shrank with the ratio, and an A/A pair's writes per insert (rounds
/// 0.11, 0.13, 0.85 against 1.21, 0.64, 0.26: a median ratio of 0.20 and a mean ratio of
/// 0.52, 0-2.2) came out "better, 0-0.85". A call then needs both the rounds' mean and the
/// median beyond the threshold.
fn take_in(lo: f64, hi: f64, ratio: f64) -> (f64, f64) {
    (lo.min(ratio), hi.max(ratio))
}

/// The 95% interval of `ratio` for a figure that is a rate or a time, positive in every round
/// (throughput, a latency percentile): Welch's t-interval for the difference of the two
/// sides' mean logarithms over their rounds, as the ratio exp(d), widened to take in the
/// table's ratio as `rounds_interval` is. Logarithms since such figures vary by a factor, not by
/// an amount: on a loaded host a base's three l.i0 rounds ran 8k, 88k and 81k rows/s while the
/// slowed target's ran 0.8k in each, and on the figures' own scale the base's spread put the
/// difference anywhere from nothing to twice the base's mean (0-1.24, "no difference"); on
/// their logarithms every round of one is ten times every round of the other. None below
/// MIN_ROUNDS rounds a side, or when a round measured nothing.
pub fn log_rounds_interval(t: &[f64], b: &[f64], ratio: f64) -> Option<Interval> {
    let logs = |v: &[f64]| -> Option<Vec<f64>> {
        v.iter()
            .map(|x| (x.is_finite() && *x > 0.0).then(|| x.ln()))
            .collect()
    };
    if !ratio.is_finite() {
        return None;
    }
    let (mt, mb, half) = welch(&logs(t)?, &logs(b)?)?;
    let d = mt - mb;
    let (lo, hi) = take_in((d - half).exp(), (d + half).exp(), ratio);
    Some(Interval {
        lo,
        hi,
        seconds: 1,
        rounds: t.len().min(b.len()),
        ops: None,
    })
}

/// Welch's t over the rounds' rates: on their logarithms, or on their own scale where a round
/// measured nothing.
pub fn rates_interval(t: &[f64], b: &[f64], ratio: f64) -> Option<Interval> {
    log_rounds_interval(t, b, ratio).or_else(|| rounds_interval(t, b, ratio))
}

/// Welch's t for two sides' figures per round: (target mean, base mean, half-width of the 95%
/// interval of their difference). None below MIN_ROUNDS rounds on a side.
fn welch(t: &[f64], b: &[f64]) -> Option<(f64, f64, f64)> {
    if t.len() < MIN_ROUNDS || b.len() < MIN_ROUNDS {
        return None;
    }
    let var = |v: &[f64]| {
        let m = mean(v);
        v.iter().map(|x| (x - m) * (x - m)).sum::<f64>() / (v.len() - 1) as f64
    };
    let (mt, mb) = (mean(t), mean(b));
    if !(mt.is_finite() && mb.is_finite()) {
        return None;
    }
    let (vt, vb) = (var(t) / t.len() as f64, var(b) / b.len() as f64);
    let se = (vt + vb).sqrt();
    if se == 0.0 {
        return Some((mt, mb, 0.0));
    }
    // Welch-Satterthwaite degrees of freedom.
    let df = (vt + vb).powi(2) / (vt * vt / (t.len() - 1) as f64 + vb * vb / (b.len() - 1) as f64);
    Some((mt, mb, t975(df) * se))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn per_round_figures_get_a_welch_interval_wide_with_three_rounds() {
        // Three rounds each, same figure in noise: the interval covers 1.
        let a = [100.0, 108.0, 95.0];
        let b = [104.0, 97.0, 110.0];
        let r = mean(&a) / mean(&b);
        let iv = rounds_interval(&a, &b, r).unwrap();
        assert!(iv.lo < 1.0 && iv.hi > 1.0, "{iv:?}");
        // Three rounds hold 2 degrees of freedom per side: far wider than the spread of the
        // rounds alone (the bootstrap's trouble).
        assert!(iv.hi - iv.lo > 0.15, "{iv:?}");
        // Twice the writes per row, consistently: the whole interval is above 1.05.
        let slow = [200.0, 212.0, 195.0];
        let iv = rounds_interval(&slow, &b, mean(&slow) / mean(&b)).unwrap();
        assert!(iv.lo > 1.05, "{iv:?}");
        // Identical figures (sizes): a point.
        let iv = rounds_interval(&[5.0; 3], &[5.0; 3], 1.0).unwrap();
        assert_eq!((iv.lo, iv.hi), (1.0, 1.0));
        // A target that read nothing in every round against a base that read a little in one.
        let iv = rounds_interval(&[0.0; 3], &[0.0, 0.0, 0.3], 0.0).unwrap();
        assert!(iv.lo == 0.0 && iv.hi > 1.0, "{iv:?}");
        // The median of the rounds (the table's ratio) far from their mean: the interval
        // takes in both rather than shrinking onto the median (an A/A pair's writes per insert).
        let (t, b) = ([0.106, 0.130, 0.847], [1.207, 0.641, 0.255]);
        let iv = rounds_interval(&t, &b, 0.130 / 0.641).unwrap();
        assert!(iv.lo <= 0.2 && iv.hi > 1.05, "{iv:?}");
        // A median of nothing against a base that read a little: no point-sized interval.
        let iv = rounds_interval(&[0.0, 0.0, 0.2], &[0.1, 0.2, 0.15], 0.0).unwrap();
        assert!(iv.lo == 0.0 && iv.hi > 1.0, "{iv:?}");
        // Too few rounds, or a base of nothing.
        assert!(rounds_interval(&a[..2], &b, r).is_none());
        assert!(rounds_interval(&a, &[0.0; 3], r).is_none());
        assert!((t975(2.0) - 4.303).abs() < 1e-9 && (t975(1000.0) - 1.962).abs() < 1e-3);
    }
}
