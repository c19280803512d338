//! Whether one segment of the series holds a change, where, and how sure (docs/history.md,
//! "Method"). A change of level must pass three tests at once, each guarding against a kind
//! of series that fools the others; a change of spread has a test of its own.

use super::dip::{test_pair, PAIR_LEAST};
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
    /// A clear step of the series (prepare.rs), tested between the clear steps either side:
    /// its test is local, much the same in whatever segment holds it.
    pub clear: bool,
}

/// The tests of one series' segments, remembering each candidate's level p-value by the
/// interval it was tested on: binary segmentation tests most candidates again after every
/// split elsewhere, on the same interval.
pub struct Tester<'a> {
    p: &'a Prepared,
    min_size: usize,
    known: HashMap<(usize, usize, usize), f64>,
    scan: PairScan,
    /// The search keeps a split whose p-value is at most this.
    alpha: f64,
    /// Points of the segments tested so far: the search's work, which tests count to catch a
    /// search that grew quadratic again.
    pub work: u64,
}

/// A p-value this small is beyond doubt: among such clear steps the split is chosen to halve
/// the segment (`choose`), not by which is surer still.
const SURE: f64 = 1e-12;
/// Clear steps whose p-values are within this factor of the surest candidate's count as
/// equally sure (`choose`).
const AS_SURE: f64 = 10.0;

impl<'a> Tester<'a> {
    /// The tests of `p`'s segments, for a search that keeps splits with p at most `alpha`.
    pub fn new(p: &'a Prepared, min_size: usize, alpha: f64) -> Tester<'a> {
        Tester {
            p,
            min_size,
            known: HashMap::new(),
            scan: PairScan::new(&p.z, min_size),
            alpha,
            work: 0,
        }
    }

    /// The segment [a, b), or None when it is too short to test.
    pub fn test(&mut self, a: usize, b: usize) -> Option<Candidate> {
        test(self, a, b)
    }

    /// Whether a segment of `m` points is tested at all (shorter ones cost nothing).
    pub fn testable(&self, m: usize) -> bool {
        m >= self.min_size.saturating_mul(2).max(LEAST_POINTS)
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
    if !t.testable(m) {
        return None;
    }
    t.work += m as u64;
    let mut all = level_candidates(t, a, b);
    // The spread entries between the segment's points; entry j is between points j and j + 1,
    // so a split of them at k puts the change at point k + 1.
    let spread = cusum_test(&p.spread[a..b - 1], min_size)
        .map(|(k, q)| ((k + 1).clamp(min_size, m - min_size), q));
    if let Some((at, q)) = spread {
        all.push(Candidate {
            at,
            also: None,
            p: (q / ONE_CHANGE_SHARE).min(1.0),
            kind: ChangeKind::Spread,
            clear: false,
        });
    }
    // The scan only where the pair can be tested: most segments of a long history are short.
    let pair = (m >= PAIR_LEAST)
        .then(|| t.scan.best(a, b))
        .flatten()
        .and_then(|(s, e, scanned)| {
            test_pair(&p.z[a..b], s, e, scanned, p.short_sd, p.persistence)
        });
    if let Some(d) = pair {
        all.push(Candidate {
            at: d.s,
            also: Some(d.e),
            p: (d.p / PAIR_SHARE).min(1.0),
            kind: ChangeKind::Level,
            clear: false,
        });
    }
    choose(&all, m, t.alpha)
}

/// The split of a segment of `m` points among its candidates: the surest, unless clear steps
/// are about as sure (within a factor AS_SURE of its p-value, or beyond doubt, at or below
/// SURE, and passing alpha). Then, of the surest and those steps, the one that leaves the
/// shortest longest piece, and the surest within LOCAL_POINTS of it (the candidates of one
/// change lie that close, and the surest of them is where it is).
///
/// Why not the surest always: changes far beyond the noise all have p 0 (the normal and
/// Kolmogorov tails underflow), and the first of equals, the leftmost, was taken; each split
/// then cut one change off the left, and the search was quadratic in the series' length (a
/// change every 20 runs: 11.8 s for 100,000 runs). Steps growing along the series did the same
/// from the right. Split near the middle, the segments halve and the search is n·log n; to
/// cut one end off every time, each split's p-value must be AS_SURE times smaller than every
/// other clear step's, which p-values between SURE and alpha allow only a dozen times in a
/// row (a series made to do it some other way meets the search's budget, mod.rs). Only clear
/// steps: their tests are local, so which goes first changes little, where a change of spread
/// or a pair is judged over the whole segment, and one that was about as sure as a change
/// elsewhere in it (the spread's CUSUM peaking away from a noisy dip) was a false alarm when
/// taken first.
fn choose(all: &[Candidate], m: usize, alpha: f64) -> Option<Candidate> {
    let surest = |cs: &mut dyn Iterator<Item = &Candidate>| {
        cs.fold(None, |best: Option<Candidate>, c| {
            if best.is_none_or(|b| c.p < b.p) {
                Some(*c)
            } else {
                best
            }
        })
    };
    let first = surest(&mut all.iter())?;
    // Never above alpha: an equal of the surest must be a split the search keeps.
    let bar = (first.p * AS_SURE).max(SURE).min(alpha);
    if first.p > bar {
        return Some(first);
    }
    let centre = all
        .iter()
        .filter(|c| c.clear && c.p <= bar)
        .chain([&first])
        .min_by_key(|c| c.longest_piece(m))?;
    surest(&mut all.iter().filter(|c| c.near(centre)))
}

impl Candidate {
    /// The longest of the pieces this split leaves of a segment of `m` points.
    fn longest_piece(&self, m: usize) -> usize {
        match self.also {
            None => self.at.max(m - self.at),
            Some(e) => self.at.max(e - self.at).max(m - e),
        }
    }

    /// Whether an edge of this candidate is within LOCAL_POINTS of one of `other`'s.
    fn near(&self, other: &Candidate) -> bool {
        let edges = |c: &Candidate| [Some(c.at), c.also];
        edges(self).iter().flatten().any(|x| {
            edges(other)
                .iter()
                .flatten()
                .any(|y| x.abs_diff(*y) < LOCAL_POINTS)
        })
    }
}

/// A weighted Bonferroni over the three kinds of test a segment gets: a change of level and
/// of spread are each tested at this share of the level, a pair of changes at PAIR_SHARE (the
/// shares sum to 1). The pair's p-value is already a Bonferroni over thousands of intervals,
/// so a real pair's is far below alpha or not near it; a third each cost single steps some of
/// their recall (a 10% step in AR(1) noise with φ 0.6: 85 -> 84 of 100).
const ONE_CHANGE_SHARE: f64 = 0.475;
const PAIR_SHARE: f64 = 1.0 - 2.0 * ONE_CHANGE_SHARE;

/// The candidates for a change of level, in index order, each with the largest of three
/// p-values: the CUSUM against the Kolmogorov law (the level differs at all, allowing for
/// autocorrelated noise), the step's t with a straight trend in the model (a trend is not a
/// step), and the jump between straight lines fitted to the points either side (a smooth curve
/// does not jump). A change must pass all three, so the test is as strict as the strictest.
fn level_candidates(t: &mut Tester, a: usize, b: usize) -> Vec<Candidate> {
    let (p, min_size) = (t.p, t.min_size);
    let Some((k, _)) = largest_cusum(&p.z[a..b], min_size) else {
        return Vec::new();
    };
    // In a long segment with several changes the largest CUSUM can land points away from any
    // of them, or between them: the clear steps inside are candidates too (`choose` says
    // which wins).
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
            (c - l >= min_size && r - c >= min_size).then(|| Candidate {
                at: c - a,
                also: None,
                // Bonferroni over the candidates: the surest of n is n times as likely by
                // chance.
                p: ((t.level_p(l, r, c) * n).min(1.0) / ONE_CHANGE_SHARE).min(1.0),
                kind: ChangeKind::Level,
                clear: p.clear_steps.binary_search(&c).is_ok(),
            })
        })
        .collect()
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
