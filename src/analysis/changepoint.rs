//! Change points in a series of results over time: E-divisive means (Matteson & James, 2014)
//! with a permutation test for significance, as MongoDB's signal-processing-algorithms does
//! (docs/history.md, "Method", says why this and not Otava's t-test).
//!
//! The statistic compares whole distributions (energy distance, exponent 1), so a change in the
//! spread of a series shows as well as a change in its level. The permutation test makes no
//! assumption about the shape of the noise, which matters for p99 latency and per-second CV
//! series (skewed, heavy-tailed). Permutations are drawn from a seeded generator: the same series
//! always gives the same answer.

use rand_core::{Rng, SeedableRng};
use rand_xoshiro::Xoshiro256PlusPlus;

/// How the detector decides.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Options {
    /// A split is kept when its permutation p-value is at most this.
    pub alpha: f64,
    /// Permutations per test; the smallest p-value possible is 1 / (permutations + 1).
    pub permutations: u32,
    /// Fewest points on either side of a change (at least 2: the statistic needs pairs).
    pub min_size: usize,
    /// Seed of the permutations.
    pub seed: u64,
}

impl Default for Options {
    fn default() -> Options {
        Options {
            alpha: 0.05,
            permutations: 199,
            min_size: 3,
            seed: 0x6462_7065_7266,
        }
    }
}

/// A change: the series is different from `index` on.
#[derive(Debug, Clone, PartialEq)]
pub struct ChangePoint {
    /// First index of the new segment.
    pub index: usize,
    /// Permutation p-value of the split when it was found.
    pub p_value: f64,
    /// The E-divisive statistic of the split (scaled energy distance), on the series scaled by
    /// a power of two to at most 1 in magnitude (`unit_scaled`): comparable between the splits
    /// of one series, and finite for any finite input.
    pub q: f64,
    /// Means of the segments either side, between this change and its neighbours.
    pub mean_before: f64,
    pub mean_after: f64,
}

impl ChangePoint {
    /// Relative change of the mean (0.2 = 20% higher after); None when the mean before is 0.
    pub fn relative(&self) -> Option<f64> {
        (self.mean_before != 0.0).then(|| self.mean_after / self.mean_before - 1.0)
    }
}

/// Change points of `x` in index order. Non-finite values must be removed by the caller.
pub fn detect(x: &[f64], opts: &Options) -> Vec<ChangePoint> {
    let (x, back) = unit_scaled(x);
    let x = &x[..];
    let min_size = opts.min_size.max(2);
    let mut rng = Xoshiro256PlusPlus::seed_from_u64(opts.seed ^ (x.len() as u64));
    let mut found: Vec<(usize, f64, f64)> = Vec::new();
    // Segments still to split, [start, end); each split is tested on its own segment.
    let mut todo = vec![(0usize, x.len())];
    let mut scratch = Vec::new();
    let mut work = Work::default();
    while let Some((a, b)) = todo.pop() {
        let seg = &x[a..b];
        let Some((tau, q)) = best_split(seg, min_size, &mut work) else {
            continue;
        };
        let Some(p) = permutation_p(seg, q, min_size, opts, &mut rng, &mut scratch, &mut work)
        else {
            continue;
        };
        found.push((a + tau, p, q));
        todo.push((a, a + tau));
        todo.push((a + tau, b));
    }
    found.sort_by_key(|f| f.0);
    let mut bounds: Vec<usize> = vec![0];
    bounds.extend(found.iter().map(|f| f.0));
    bounds.push(x.len());
    found
        .iter()
        .enumerate()
        .map(|(i, &(index, p_value, q))| ChangePoint {
            index,
            p_value,
            q,
            mean_before: mean(&x[bounds[i]..bounds[i + 1]]) * back,
            mean_after: mean(&x[bounds[i + 1]..bounds[i + 2]]) * back,
        })
        .collect()
}

/// `x` divided by a power of two so that no value exceeds 2 in magnitude, and the factor that
/// undoes it. The distances and sums of the statistic then cannot overflow for any finite
/// input (a step of 1e307 once summed to infinity and split everywhere), and dividing by a
/// power of two is exact, so every comparison, and every change found, is the one on `x`
/// (but for values more than ~300 orders of magnitude below the largest, which underflow).
fn unit_scaled(x: &[f64]) -> (Vec<f64>, f64) {
    let max = x.iter().fold(0.0f64, |m, v| m.max(v.abs()));
    if max == 0.0 || !max.is_finite() {
        return (x.to_vec(), 1.0);
    }
    // 2^k >= max, kept where 2^k is a normal number (max may be up to 2^1024).
    let k = (max.log2().ceil() as i32).clamp(-1000, 1023);
    let back = 2f64.powi(k);
    (x.iter().map(|v| v / back).collect(), back)
}

fn mean(v: &[f64]) -> f64 {
    v.iter().sum::<f64>() / v.len().max(1) as f64
}

/// The p-value of `q_obs` against the best split of shuffled copies of `seg`, or None when it
/// is above alpha (the test stops as soon as that is certain).
fn permutation_p(
    seg: &[f64],
    q_obs: f64,
    min_size: usize,
    opts: &Options,
    rng: &mut Xoshiro256PlusPlus,
    scratch: &mut Vec<f64>,
    work: &mut Work,
) -> Option<f64> {
    let r = opts.permutations.max(1) as f64;
    // p = (exceed + 1) / (r + 1) > alpha once exceed > alpha (r + 1) - 1.
    let limit = opts.alpha * (r + 1.0) - 1.0;
    if limit < 0.0 {
        return None;
    }
    scratch.clear();
    scratch.extend_from_slice(seg);
    let mut exceed = 0u32;
    for _ in 0..opts.permutations.max(1) {
        shuffle(scratch, rng);
        let q = best_split(scratch, min_size, work).map_or(0.0, |b| b.1);
        // A tolerance so that ties (a permutation equal to the original order) count as ties.
        if q >= q_obs * (1.0 - 1e-12) {
            exceed += 1;
            if exceed as f64 > limit {
                return None;
            }
        }
    }
    Some((exceed as f64 + 1.0) / (r + 1.0))
}

fn shuffle(v: &mut [f64], rng: &mut Xoshiro256PlusPlus) {
    for i in (1..v.len()).rev() {
        let j = ((rng.next_u64() as u128 * (i as u128 + 1)) >> 64) as usize;
        v.swap(i, j);
    }
}

#[derive(Default)]
struct Work {
    left: Vec<f64>,
    right: Vec<f64>,
}

/// The split of `y` with the largest E-divisive statistic, (first index after the split, q);
/// None when `y` is too short to split or constant.
fn best_split(y: &[f64], min_size: usize, work: &mut Work) -> Option<(usize, f64)> {
    let m = y.len();
    if m < 2 * min_size {
        return None;
    }
    // left[t] = sum over i < t of |y_i - y_t|, right[t] = sum over j > t of |y_t - y_j|:
    // moving the split by one moves one point's distances between the three sums below.
    work.left.clear();
    work.left.resize(m, 0.0);
    work.right.clear();
    work.right.resize(m, 0.0);
    for t in 1..m {
        let yt = y[t];
        let mut s = 0.0;
        for (i, &yi) in y[..t].iter().enumerate() {
            let d = (yi - yt).abs();
            s += d;
            work.right[i] += d;
        }
        work.left[t] = s;
    }
    let total: f64 = work.left.iter().sum();
    if total == 0.0 {
        return None;
    }
    // within_left = pairs both before tau, within_right = pairs both from tau on.
    let mut within_left = 0.0;
    let mut within_right = total;
    let mut best: Option<(usize, f64)> = None;
    let mf = m as f64;
    for tau in 1..m {
        within_left += work.left[tau - 1];
        within_right -= work.right[tau - 1];
        if tau < min_size || m - tau < min_size {
            continue;
        }
        let between = total - within_left - within_right;
        let (l, r) = (tau as f64, (m - tau) as f64);
        let e = 2.0 * between / (l * r)
            - within_left / (l * (l - 1.0) / 2.0)
            - within_right / (r * (r - 1.0) / 2.0);
        let q = l * r / mf * e;
        if best.is_none_or(|b| q > b.1) {
            best = Some((tau, q));
        }
    }
    best
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Deterministic normal noise (Box-Muller on xoshiro).
    pub fn noise(seed: u64, n: usize, sd: f64) -> Vec<f64> {
        let mut r = Xoshiro256PlusPlus::seed_from_u64(seed);
        let mut u = || ((r.next_u64() >> 11) as f64 + 0.5) / (1u64 << 53) as f64;
        (0..n)
            .map(|_| (-2.0 * u().ln()).sqrt() * (std::f64::consts::TAU * u()).cos() * sd)
            .collect()
    }

    #[test]
    fn a_clear_step_is_found_where_it_is() {
        // 20% up at index 30, in 3% noise.
        let x: Vec<f64> = noise(7, 60, 3.0)
            .iter()
            .enumerate()
            .map(|(i, e)| if i < 30 { 100.0 } else { 120.0 } + e)
            .collect();
        let cps = detect(&x, &Options::default());
        assert_eq!(cps.len(), 1, "{cps:?}");
        assert_eq!(cps[0].index, 30);
        assert!(cps[0].p_value <= 0.05);
        let rel = cps[0].relative().unwrap();
        assert!((rel - 0.2).abs() < 0.03, "{rel}");
    }

    #[test]
    fn two_steps_are_both_found() {
        let x: Vec<f64> = noise(3, 90, 2.0)
            .iter()
            .enumerate()
            .map(|(i, e)| match i {
                0..30 => 100.0,
                30..60 => 85.0,
                _ => 105.0,
            } + e)
            .collect();
        let idx: Vec<usize> = detect(&x, &Options::default())
            .iter()
            .map(|c| c.index)
            .collect();
        assert_eq!(idx, vec![30, 60]);
    }

    #[test]
    fn pure_noise_gives_no_change_in_most_seeds() {
        let mut with_changes = 0;
        for seed in 0..40 {
            let x: Vec<f64> = noise(seed, 50, 5.0).iter().map(|e| 100.0 + e).collect();
            if !detect(&x, &Options::default()).is_empty() {
                with_changes += 1;
            }
        }
        // alpha 0.05 per test: about 2 of 40 by chance; 6 would be far off.
        assert!(
            with_changes <= 5,
            "{with_changes} of 40 noise series had changes"
        );
    }

    #[test]
    fn a_change_in_spread_alone_is_found() {
        let mut x: Vec<f64> = noise(11, 80, 1.0).iter().map(|e| 100.0 + e).collect();
        for v in &mut x[40..] {
            *v = 100.0 + (*v - 100.0) * 8.0;
        }
        let cps = detect(&x, &Options::default());
        assert!(cps.iter().any(|c| c.index.abs_diff(40) <= 3), "{cps:?}");
    }

    #[test]
    fn short_and_constant_series_have_no_changes() {
        assert!(detect(&[], &Options::default()).is_empty());
        assert!(detect(&[1.0, 2.0, 3.0], &Options::default()).is_empty());
        assert!(detect(&[5.0; 40], &Options::default()).is_empty());
    }

    #[test]
    fn huge_and_tiny_series_find_the_same_changes_without_overflow() {
        let mut x = noise(7, 60, 1.0);
        for v in &mut x[30..] {
            *v += 10.0;
        }
        let found: Vec<usize> = detect(&x, &Options::default())
            .iter()
            .map(|c| c.index)
            .collect();
        assert_eq!(found, [30]);
        // The same series times powers of two, up to where the sums once overflowed.
        for scale in [2f64.powi(1000), 2f64.powi(-1000), 2f64.powi(-60)] {
            let y: Vec<f64> = x.iter().map(|v| v * scale).collect();
            let c = detect(&y, &Options::default());
            assert_eq!(
                c.iter().map(|c| c.index).collect::<Vec<_>>(),
                found,
                "{scale}"
            );
            assert!(c
                .iter()
                .all(|c| c.q.is_finite() && c.mean_after.is_finite()));
        }
        // A step from -1e307 to 1e307: one change, not one every few points.
        let mut z = vec![-1e307; 20];
        z.extend(vec![1e307; 20]);
        let c = detect(&z, &Options::default());
        assert_eq!(c.iter().map(|c| c.index).collect::<Vec<_>>(), [20]);
        assert!((c[0].mean_after - 1e307).abs() < 1e293);
    }

    #[test]
    fn the_same_series_gives_the_same_answer() {
        let x: Vec<f64> = noise(5, 40, 4.0)
            .iter()
            .enumerate()
            .map(|(i, e)| if i < 25 { 100.0 } else { 106.0 } + e)
            .collect();
        assert_eq!(
            detect(&x, &Options::default()),
            detect(&x, &Options::default())
        );
    }
}
