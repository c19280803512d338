//! What the detector's tests read: the series on a scale of its own, single outliers clipped,
//! and a series of local spread, computed once for the whole series.

use std::collections::BTreeSet;

use super::fit::{lag_one, line_residuals, local_jump_t, LOCAL_POINTS};

/// Points either side of a point whose median it is compared with (a window of 5: a median of
/// 5 follows a step at once and clips a lone point).
const CLIP_HALF: usize = 2;
/// A point further than this many robust sds from its window's median is clipped to that far.
const CLIP_SDS: f64 = 3.0;
/// The local spread of a point is its difference from its neighbour, less the median of the
/// differences this many either side: a smooth trend's slope is taken out, a change of noise
/// is not.
const SPREAD_HALF: usize = 5;

pub struct Prepared {
    /// The input divided by a power of two (exact) so that no value exceeds 2 in magnitude:
    /// sums of it cannot overflow for any finite input.
    pub scaled: Vec<f64>,
    /// The power of two that undoes `scaled`.
    pub back: f64,
    /// The robust scale of `scaled` (median absolute deviation as an sd), the unit of `z`.
    pub scale: f64,
    /// (scaled - median) / scale with single outliers clipped: what the level is tested on.
    /// The same for x and a·x + b (a ≠ 0) up to rounding and sign, which the tests ignore.
    pub z: Vec<f64>,
    /// |z[j+1] - z[j] - local median of those differences|: what the spread is tested on;
    /// entry j lies between points j and j + 1.
    pub spread: Vec<f64>,
    /// The short-term sd of `z`: of its neighbours' differences (median absolute deviation),
    /// over sqrt 2. Blind to level, trend and wander; 0 for a noiseless series.
    pub short_sd: f64,
    /// Where the series jumps clearly between the lines fitted either side (|t| beyond
    /// CLEAR_T, the largest of its neighbourhood), in order: candidates are tested between
    /// these.
    pub clear_steps: Vec<usize>,
    /// The noise's persistence over the whole series, (1 + φ) / (1 - φ) ([`block_persistence`],
    /// 1 for a series under 80 runs): a floor for tests that choose among thousands of intervals
    /// of a segment, where a segment's own φ, from a few dozen runs, is often far too low.
    pub persistence: f64,
}

impl Prepared {
    /// None for a series with nothing to find: fewer than two points, or all equal.
    pub fn new(x: &[f64]) -> Option<Prepared> {
        if x.len() < 2 {
            return None;
        }
        let (scaled, back) = unit_scaled(x);
        let med = median(&scaled);
        let mad = median(&scaled.iter().map(|v| (v - med).abs()).collect::<Vec<_>>());
        let (lo, hi) = scaled
            .iter()
            .fold((f64::INFINITY, f64::NEG_INFINITY), |(l, h), v| {
                (l.min(*v), h.max(*v))
            });
        let range = hi - lo;
        if range <= 0.0 {
            return None;
        }
        // A series more than half of whose values are equal has a MAD of 0: a floor tied to
        // the range keeps z finite (at most 1e9) and the scale still moves with the input's.
        let scale = (1.4826 * mad).max(range * 1e-9);
        let z: Vec<f64> = scaled.iter().map(|v| (v - med) / scale).collect();
        let short_sd = short_term_sd(&z);
        let clipped = clip_outliers(&z, short_sd);
        let clear_steps = clear_steps(&clipped, short_sd);
        // Of the series before clipping: clipping to the median of 5 smooths persistent noise
        // (it clipped 14% of the runs of AR(1) noise with φ 0.9) and makes it look more so.
        let persistence = block_persistence(&[&z]).unwrap_or(1.0);
        let z = clipped;
        let spread = local_spread(&z);
        Some(Prepared {
            scaled,
            back,
            scale,
            z,
            spread,
            short_sd,
            clear_steps,
            persistence,
        })
    }

    /// The clear steps in [lo, hi] (sorted, so found by bisection: a history with thousands
    /// of changes is tested thousands of times).
    pub fn clear_steps_in(&self, lo: usize, hi: usize) -> &[usize] {
        let from = self.clear_steps.partition_point(|c| *c < lo);
        let to = self.clear_steps.partition_point(|c| *c <= hi);
        &self.clear_steps[from..to.max(from)]
    }

    /// The clear step in [lo, hi] nearest `at` and within LOCAL_POINTS of it.
    pub fn nearest_clear_step(&self, at: usize, lo: usize, hi: usize) -> Option<usize> {
        let near = self.clear_steps_in(
            lo.max(at.saturating_sub(LOCAL_POINTS - 1)),
            hi.min(at + LOCAL_POINTS - 1),
        );
        near.iter().min_by_key(|c| c.abs_diff(at)).copied()
    }

    /// The interval [l, r) within [a, b) around `at` bounded by the nearest clear steps at
    /// least `margin` away from it.
    pub fn between_clear_steps(
        &self,
        at: usize,
        a: usize,
        b: usize,
        margin: usize,
    ) -> (usize, usize) {
        let l = match at.checked_sub(margin) {
            Some(hi) if hi > a => self.clear_steps_in(a + 1, hi).last().copied().unwrap_or(a),
            _ => a,
        };
        let r = if at + margin < b {
            self.clear_steps_in(at + margin, b - 1)
                .first()
                .copied()
                .unwrap_or(b)
        } else {
            b
        };
        (l, r)
    }
}

/// (1 + φ) / (1 - φ), φ the median of the lag-one autocorrelations of the blocks of BLOCK runs
/// of `pieces`, each block about its own line (and bias-corrected for its length): a median,
/// since the few blocks a change falls in have φ near 1, and one lag product across a change
/// that a clear step misplaced by a run or two took a whole series' φ to 0.98. None with fewer
/// than two blocks.
pub fn block_persistence(pieces: &[&[f64]]) -> Option<f64> {
    let phis: Vec<f64> = pieces
        .iter()
        .flat_map(|p| p.chunks_exact(BLOCK))
        .map(|b| lag_one(&line_residuals(b), &[0, BLOCK]))
        .collect();
    (phis.len() >= 2).then(|| {
        let phi = median(&phis);
        (1.0 + phi) / (1.0 - phi)
    })
}

/// Runs per block of [`block_persistence`].
const BLOCK: usize = 2 * LOCAL_POINTS;

/// A local jump's |t| beyond this is a clear step (p < 0.0001 where there is none).
const CLEAR_T: f64 = 4.0;

/// Local maxima of the local jump's |t| beyond CLEAR_T, at least LOCAL_POINTS apart (the
/// larger kept), in order.
fn clear_steps(z: &[f64], short_sd: f64) -> Vec<usize> {
    let quick = QuickJump::new(z, short_sd);
    let t: Vec<(usize, f64)> = (3..z.len().saturating_sub(2))
        // The full test (its own long-run variance) only where the quick one says it may pass.
        .filter(|k| quick.t(*k) > CLEAR_T / 2.0)
        .map(|k| (k, local_jump_t(z, k, LOCAL_POINTS, short_sd).abs()))
        .filter(|(_, t)| *t > CLEAR_T)
        .collect();
    let mut by_size = t;
    by_size.sort_by(|x, y| y.1.total_cmp(&x.1).then(x.0.cmp(&y.0)));
    // Ordered, so that whether one is kept near k is a range query: a scan of all those kept
    // was quadratic in the number of steps (most of the time on a million runs).
    let mut kept = BTreeSet::new();
    for (k, _) in by_size {
        let near = k.saturating_sub(LOCAL_POINTS - 1)..=k + (LOCAL_POINTS - 1);
        if kept.range(near).next().is_none() {
            kept.insert(k);
        }
    }
    kept.into_iter().collect()
}

/// The local jump's |t| in constant time, from prefix sums, over the short-term sd of the whole
/// series (of neighbours' differences, over sqrt 2). That sd is at most the noise's, and its
/// long-run sd larger still where the noise is positively autocorrelated, so this is above the
/// full test's t but where the local noise is quieter than the series': a filter, not a test.
struct QuickJump {
    /// Prefix sums of z and of i·z.
    sum: Vec<f64>,
    isum: Vec<f64>,
    sd: f64,
}

impl QuickJump {
    fn new(z: &[f64], sd: f64) -> QuickJump {
        let (mut sum, mut isum) = (vec![0.0], vec![0.0]);
        for (i, v) in z.iter().enumerate() {
            sum.push(sum[i] + v);
            isum.push(isum[i] + i as f64 * v);
        }
        QuickJump { sum, isum, sd }
    }

    /// The value at `x` (a global position) of the line fitted to [u, u + w).
    fn line_at(&self, u: usize, w: usize, x: f64) -> f64 {
        let wf = w as f64;
        let s1 = self.sum[u + w] - self.sum[u];
        let sx = self.isum[u + w] - self.isum[u];
        let ym = s1 / wf;
        let xm = u as f64 + (wf - 1.0) / 2.0;
        let sxx = wf * (wf * wf - 1.0) / 12.0;
        let slope = (sx - xm * s1) / sxx;
        ym + slope * (x - xm)
    }

    fn t(&self, k: usize) -> f64 {
        let n = self.sum.len() - 1;
        let w = k.min(n - k).min(LOCAL_POINTS);
        if w < 3 {
            return 0.0;
        }
        if self.sd <= 0.0 {
            return f64::INFINITY;
        }
        let at = k as f64 - 0.5;
        let jump = self.line_at(k, w, at) - self.line_at(k - w, w, at);
        let wf = w as f64;
        let end = 1.0 / wf + (wf / 2.0).powi(2) / (wf * (wf * wf - 1.0) / 12.0);
        jump.abs() / (self.sd * (2.0 * end).sqrt())
    }
}

/// `x` divided by a power of two so that no value exceeds 2 in magnitude, and the factor that
/// undoes it. Dividing by a power of two is exact, so nothing is lost but values more than
/// ~300 orders of magnitude below the largest, which underflow.
fn unit_scaled(x: &[f64]) -> (Vec<f64>, f64) {
    let max = x.iter().fold(0.0f64, |m, v| m.max(v.abs()));
    if max == 0.0 || !max.is_finite() {
        return (x.to_vec(), 1.0);
    }
    let k = (max.log2().ceil() as i32).clamp(-1000, 1023);
    let back = 2f64.powi(k);
    (x.iter().map(|v| v / back).collect(), back)
}

pub fn median(v: &[f64]) -> f64 {
    if v.is_empty() {
        return 0.0;
    }
    // The windows of every run (5 and 11 values) are sorted on the stack: a copy on the heap
    // for each was a third of the detector's time on long series.
    if v.len() <= SMALL {
        let mut a = [0.0f64; SMALL];
        let a = &mut a[..v.len()];
        a.copy_from_slice(v);
        a.sort_unstable_by(f64::total_cmp);
        let n = a.len();
        return if n % 2 == 1 {
            a[n / 2]
        } else {
            0.5 * (a[n / 2 - 1] + a[n / 2])
        };
    }
    let mut s = v.to_vec();
    let n = s.len();
    let (below, mid, _) = s.select_nth_unstable_by(n / 2, f64::total_cmp);
    let mid = *mid;
    if n % 2 == 1 {
        mid
    } else {
        // The largest of the lower half is the other middle value.
        let lower = below.iter().copied().fold(f64::NEG_INFINITY, f64::max);
        0.5 * (lower + mid)
    }
}

/// Windows up to this long are sorted on the stack.
const SMALL: usize = 16;

fn window(v: &[f64], i: usize, half: usize) -> &[f64] {
    &v[i.saturating_sub(half)..(i + half + 1).min(v.len())]
}

/// Each point clipped into its window's median ± CLIP_SDS robust sds of the points' distances
/// from their windows' medians (the short-term sd where that is 0). A lone outlier is then
/// no larger than the noise's tail, so it is never a change; a step moves the medians with it
/// and is left alone. A noiseless series is not clipped: at its ends the windows are cut short
/// and their medians lag a trend, which clipping to a zero sd turned into two steps.
fn clip_outliers(z: &[f64], short_sd: f64) -> Vec<f64> {
    let centre: Vec<f64> = (0..z.len())
        .map(|i| median(window(z, i, CLIP_HALF)))
        .collect();
    let dist: Vec<f64> = z.iter().zip(&centre).map(|(v, c)| (v - c).abs()).collect();
    let mut sd = 1.4826 * median(&dist);
    if sd == 0.0 {
        sd = short_sd;
    }
    if sd == 0.0 {
        return z.to_vec();
    }
    z.iter()
        .zip(&centre)
        .map(|(v, c)| v.clamp(c - CLIP_SDS * sd, c + CLIP_SDS * sd))
        .collect()
}

fn short_term_sd(z: &[f64]) -> f64 {
    let d: Vec<f64> = z.windows(2).map(|w| w[1] - w[0]).collect();
    let centre = median(&d);
    let dev: Vec<f64> = d.iter().map(|v| (v - centre).abs()).collect();
    1.4826 * median(&dev) / std::f64::consts::SQRT_2
}

fn local_spread(z: &[f64]) -> Vec<f64> {
    let d: Vec<f64> = z.windows(2).map(|w| w[1] - w[0]).collect();
    (0..d.len())
        .map(|j| (d[j] - median(window(&d, j, SPREAD_HALF))).abs())
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_lone_outlier_is_clipped_and_a_step_is_not() {
        let mut x: Vec<f64> = (0..40).map(|i| 100.0 + (i % 3) as f64).collect();
        x[10] = 180.0;
        for v in &mut x[25..] {
            *v += 30.0;
        }
        let p = Prepared::new(&x).unwrap();
        let at = |i: usize| p.z[i] * p.scale + median(&p.scaled);
        assert!(at(10) * p.back < 110.0, "{}", at(10) * p.back);
        assert!((at(30) * p.back - x[30]).abs() < 1e-9);
        assert!((at(24) * p.back - x[24]).abs() < 1e-9);
    }

    #[test]
    fn a_constant_or_too_short_series_has_nothing_to_find() {
        assert!(Prepared::new(&[]).is_none());
        assert!(Prepared::new(&[1.0]).is_none());
        assert!(Prepared::new(&[3.0; 20]).is_none());
    }
}
