//! Whether one segment of the series holds a change, where, and how sure (docs/history.md,
//! "Method"). A change of level must pass three tests at once, each guarding against a kind
//! of series that fools the others; a change of spread has a test of its own.

use super::dip::test_pair;
use super::dist::{kolmogorov_sf, normal_two_sided};
use std::collections::HashMap;

use super::fit::{
    line_residuals, local_jump_t, long_run_variance, long_run_variance_cut, mean, LOCAL_POINTS,
};
use super::kind::ChangeKind;
use super::prepare::Prepared;
use super::scan::PairScan;

/// Fewest points in a segment worth testing: the noise's autocorrelation needs a few.
const LEAST_POINTS: usize = 8;
/// A clear step bounds the interval a candidate is tested on only when it is at least this
/// far from it (else it is the candidate itself).
const CLEAR_MARGIN: usize = 5;

/// The best split of a segment: `at` points from its start, the p-value, and the kind; `also`,
/// a second change found with it (the end of a dip), further from the start.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Candidate {
    pub at: usize,
    pub also: Option<usize>,
    pub p: f64,
    pub kind: ChangeKind,
}

/// The tests of one series' segments, remembering each candidate's level p-value by the
/// interval it was tested on: binary segmentation tests most candidates again after every
/// split elsewhere, on the same interval.
pub struct Tester<'a> {
    p: &'a Prepared,
    min_size: usize,
    known: HashMap<(usize, usize, usize), f64>,
    scan: PairScan,
}

impl<'a> Tester<'a> {
    pub fn new(p: &'a Prepared, min_size: usize) -> Tester<'a> {
        Tester {
            p,
            min_size,
            known: HashMap::new(),
            scan: PairScan::new(&p.z, min_size),
        }
    }

    /// The segment [a, b), or None when it is too short to test.
    pub fn test(&mut self, a: usize, b: usize) -> Option<Candidate> {
        test(self, a, b)
    }

    fn level_p(&mut self, l: usize, r: usize, c: usize) -> f64 {
        let p = self.p;
        *self
            .known
            .entry((l, r, c))
            .or_insert_with(|| level_p(&p.z[l..r], c - l, p.short_sd))
    }
}

fn test(t: &mut Tester, a: usize, b: usize) -> Option<Candidate> {
    let (p, min_size) = (t.p, t.min_size);
    let m = b - a;
    if m < min_size.saturating_mul(2).max(LEAST_POINTS) {
        return None;
    }
    let level = level_test(t, a, b);
    // The spread entries between the segment's points; entry j is between points j and j + 1,
    // so a split of them at k puts the change at point k + 1.
    let spread = cusum_test(&p.spread[a..b - 1], min_size)
        .map(|(k, q)| ((k + 1).clamp(min_size, m - min_size), q));
    let pair = t.scan.best(a, b).and_then(|(s, e, scanned)| {
        test_pair(&p.z[a..b], s, e, scanned, p.short_sd, p.persistence)
    });
    let mut best: Option<Candidate> = None;
    let mut consider = |c: Candidate| {
        if best.is_none_or(|b| c.p < b.p) {
            best = Some(c);
        }
    };
    if let Some((at, q)) = level {
        consider(Candidate {
            at,
            also: None,
            p: (q / ONE_CHANGE_SHARE).min(1.0),
            kind: ChangeKind::Level,
        });
    }
    if let Some((at, q)) = spread {
        consider(Candidate {
            at,
            also: None,
            p: (q / ONE_CHANGE_SHARE).min(1.0),
            kind: ChangeKind::Spread,
        });
    }
    if let Some(d) = pair {
        consider(Candidate {
            at: d.s,
            also: Some(d.e),
            p: (d.p / PAIR_SHARE).min(1.0),
            kind: ChangeKind::Level,
        });
    }
    best
}

/// A weighted Bonferroni over the three kinds of test a segment gets: a change of level and
/// of spread are each tested at this share of the level, a pair of changes at PAIR_SHARE (the
/// shares sum to 1). The pair's p-value is already a Bonferroni over thousands of intervals,
/// so a real pair's is far below alpha or not near it; a third each cost single steps some of
/// their recall (a 10% step in AR(1) noise with φ 0.6: 85 -> 84 of 100).
const ONE_CHANGE_SHARE: f64 = 0.475;
const PAIR_SHARE: f64 = 1.0 - 2.0 * ONE_CHANGE_SHARE;

/// A change of level at the largest CUSUM, with the largest of three p-values: the CUSUM
/// against the Kolmogorov law (the level differs at all, allowing for autocorrelated noise),
/// the step's t with a straight trend in the model (a trend is not a step), and the jump
/// between straight lines fitted to the points either side (a smooth curve does not jump).
/// A change must pass all three, so the test is as strict as the strictest.
fn level_test(t: &mut Tester, a: usize, b: usize) -> Option<(usize, f64)> {
    let (p, min_size) = (t.p, t.min_size);
    let (k, _) = largest_cusum(&p.z[a..b], min_size)?;
    // In a long segment with several changes the largest CUSUM can land points away from any
    // of them, or between them: the clear steps inside are candidates too, and the surest
    // candidate wins.
    let (lo, hi) = (a + min_size, b - min_size);
    let mut candidates = vec![a + k];
    candidates.extend(p.nearest_clear_step(a + k, lo, hi));
    candidates.extend(p.clear_steps_in(lo, hi));
    candidates.sort_unstable();
    candidates.dedup();
    let n = candidates.len() as f64;
    candidates
        .into_iter()
        .filter_map(|c| {
            // Each between the clear steps nearest either side (or the segment's ends):
            // another change left in the residuals would look like slow noise and hide it.
            let (l, r) = p.between_clear_steps(c, a, b, min_size.max(CLEAR_MARGIN));
            (c - l >= min_size && r - c >= min_size).then(|| (c - a, t.level_p(l, r, c)))
        })
        .min_by(|x, y| x.1.total_cmp(&y.1))
        // Bonferroni over the candidates: the surest of n is n times as likely by chance.
        .map(|(at, q)| (at, (q * n).min(1.0)))
}

/// The p-value of a change of level at j in y: the largest of the three tests'.
fn level_p(y: &[f64], j: usize, short_sd: f64) -> f64 {
    let c: f64 = y[..j].iter().sum::<f64>() - j as f64 * mean(y);
    let cuts = [0, j, y.len()];
    let v = long_run_variance_cut(&around_lines(y, &cuts), &cuts);
    let p_cusum = kolmogorov_sf(c.abs() / (y.len() as f64 * v).sqrt());
    let p_trend = normal_two_sided(step_with_trend_t(y, j));
    let p_jump = normal_two_sided(local_jump_t(y, j, LOCAL_POINTS, short_sd));
    p_cusum.max(p_trend).max(p_jump)
}

/// The split k in [min_size, len - min_size] of the largest |CUSUM| of `y`, and its p-value:
/// max |S_k - k·mean| / sqrt(len · long-run variance) against the Kolmogorov law, the variance
/// from the residuals around the two sides' means.
fn cusum_test(y: &[f64], min_size: usize) -> Option<(usize, f64)> {
    let (k, c) = largest_cusum(y, min_size)?;
    let cuts = [0, k, y.len()];
    let v = long_run_variance_cut(&around_means(y, &cuts), &cuts);
    Some((k, kolmogorov_sf(c / (y.len() as f64 * v).sqrt())))
}

/// The split k in [min_size, len - min_size] of the largest |S_k - k·mean| of `y`, and that.
fn largest_cusum(y: &[f64], min_size: usize) -> Option<(usize, f64)> {
    let m = y.len();
    if m < min_size.max(1).saturating_mul(2) {
        return None;
    }
    let mean = y.iter().sum::<f64>() / m as f64;
    let mut s = 0.0;
    let mut best: Option<(usize, f64)> = None;
    for k in 1..=(m - min_size) {
        s += y[k - 1] - mean;
        if k >= min_size && best.is_none_or(|b| s.abs() > b.1) {
            best = Some((k, s.abs()));
        }
    }
    best
}

/// `y` less the straight line fitted to its piece, the pieces between consecutive `cuts`.
fn around_lines(y: &[f64], cuts: &[usize]) -> Vec<f64> {
    let mut out = Vec::with_capacity(y.len());
    for w in cuts.windows(2) {
        out.extend(line_residuals(&y[w[0]..w[1]]));
    }
    out
}

/// `y` less the mean of its piece, the pieces between consecutive `cuts` (0 first, len last).
fn around_means(y: &[f64], cuts: &[usize]) -> Vec<f64> {
    let mut out = Vec::with_capacity(y.len());
    for w in cuts.windows(2) {
        let piece = &y[w[0]..w[1]];
        let m = mean(piece);
        out.extend(piece.iter().map(|v| v - m));
    }
    out
}

/// The t of a step at k in y = a + b·i + δ·[i >= k] + noise, the noise's long-run variance
/// from the fit's residuals: by Frisch–Waugh, δ is the regression of y's residuals about a
/// line on the step's.
fn step_with_trend_t(y: &[f64], k: usize) -> f64 {
    let ry = line_residuals(y);
    let step: Vec<f64> = (0..y.len())
        .map(|i| if i >= k { 1.0 } else { 0.0 })
        .collect();
    let rd = line_residuals(&step);
    let rdd: f64 = rd.iter().map(|v| v * v).sum();
    if rdd <= 0.0 {
        return 0.0;
    }
    let delta = ry.iter().zip(&rd).map(|(a, b)| a * b).sum::<f64>() / rdd;
    let residuals: Vec<f64> = ry.iter().zip(&rd).map(|(a, b)| a - delta * b).collect();
    let v = long_run_variance(&residuals, k);
    delta * rdd.sqrt() / v.sqrt()
}
