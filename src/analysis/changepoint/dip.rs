//! Two changes close together, tested as one candidate: the level moves at `s` and again at `e`
//! (a dip, a bump, or two steps of a staircase). Binary segmentation looks for one change per
//! segment; where two lie within a few dozen runs each sits in the other's fitted lines and
//! residuals, and neither passes (docs/history.md, "Method"). scan.rs picks the interval
//! [s, e) whose mean stands out most from the runs either side; here it is tested as an
//! epidemic change (a box) with a straight trend allowed, its noise's spread and persistence
//! taken with the box fitted (not across it), and each end must be a step on its own.

use super::dist::normal_two_sided;
use super::fit::{lag_one, line_residuals, mean, LOCAL_POINTS};
use super::prepare::median;

/// The fewest runs of a segment tested for a pair of changes: the noise's persistence is
/// estimated from the segment with the pair taken out, and in fewer runs that estimate was
/// far too low (pairs were found in 15 runs of AR(1) noise with φ 0.6 after a step).
pub const PAIR_LEAST: usize = 2 * LOCAL_POINTS;
/// The smallest variance, as in fit.rs: a noiseless dip is a pair with p ~ 0.
const VAR_FLOOR: f64 = 1e-12;

/// A pair of changes of a segment, at `s` and `e` from its start, with its p-value.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Pair {
    pub s: usize,
    pub e: usize,
    pub p: f64,
}

/// The pair of changes at s and e of `y` (a segment), chosen among `scanned` intervals, with
/// its p-value; None when the segment is too short to test one. `short_sd` is the series'
/// short-term sd, `floor` its persistence factor (prepare::block_persistence).
pub fn test_pair(
    y: &[f64],
    s: usize,
    e: usize,
    scanned: usize,
    short_sd: f64,
    floor: f64,
) -> Option<Pair> {
    if y.len() < PAIR_LEAST {
        return None;
    }
    let (delta, se_unit, residuals) = box_fit(y, s, e);
    // The noise's variance: of the segment, robustly (another change in it is in these
    // residuals, and a plain variance let two dips hide each other), or of the runs around
    // the pair where they are noisier (a spread estimated over the segment only passed pairs
    // in the noisier half of a series whose noise tripled). Its persistence: of the segment
    // outside the pair, at least the series' (a segment's own, from a few dozen runs, was
    // often far too low and passed false pairs after steps).
    let whole = (1.4826 * median(&residuals.iter().map(|r| r.abs()).collect::<Vec<_>>())).powi(2);
    let fac = outside_persistence(&residuals, s, e).max(floor);
    let v = (local_variance(&residuals, s, e).max(whole) * fac)
        .max(0.25 * short_sd * short_sd)
        .max(VAR_FLOOR);
    let p_box = normal_two_sided(delta / (se_unit * v.sqrt()));
    // The segment less its line: the pair's runs at δ, the rest at 0, plus noise.
    let level: Vec<f64> = residuals
        .iter()
        .enumerate()
        .map(|(i, r)| if (s..e).contains(&i) { r + delta } else { *r })
        .collect();
    let (t_s, t_e) = edge_ts(&level, s, e, v);
    // Bonferroni over every interval that could have been chosen: the choice is by a cheaper
    // statistic, but the union over all of them bounds the chance of any passing by chance.
    let p = (p_box * scanned as f64)
        .min(1.0)
        .max(normal_two_sided(t_s))
        .max(normal_two_sided(t_e));
    Some(Pair { s, e, p })
}

/// The least-squares δ of y = a + b·i + δ·[s <= i < e] + noise, its standard error per unit
/// of the noise's sd, and the fit's residuals. By Frisch–Waugh δ is the regression of y's
/// residuals about a line on the interval indicator's.
fn box_fit(y: &[f64], s: usize, e: usize) -> (f64, f64, Vec<f64>) {
    let ry = line_residuals(y);
    let boxed: Vec<f64> = (0..y.len())
        .map(|i| if (s..e).contains(&i) { 1.0 } else { 0.0 })
        .collect();
    let rd = line_residuals(&boxed);
    let rdd: f64 = rd.iter().map(|v| v * v).sum();
    if rdd <= 0.0 {
        return (0.0, 1.0, ry);
    }
    let delta = ry.iter().zip(&rd).map(|(a, b)| a * b).sum::<f64>() / rdd;
    let residuals: Vec<f64> = ry.iter().zip(&rd).map(|(a, b)| a - delta * b).collect();
    (delta, 1.0 / rdd.sqrt(), residuals)
}

/// The persistence factor of the residuals outside [s, e) (lag products not crossing it): the
/// inside of a dip is short, and where its noise is larger the clipping of outliers (to the
/// series' own spread) smooths it into a wander that made every dip's edges look like noise.
fn outside_persistence(residuals: &[f64], s: usize, e: usize) -> f64 {
    let mut outside = residuals[..s].to_vec();
    outside.extend_from_slice(&residuals[e..]);
    let phi = lag_one(&outside, &[0, s, outside.len()]);
    (1.0 + phi) / (1.0 - phi)
}

/// The noise's variance around the pair: of the fit's residuals inside and up to LOCAL_POINTS
/// runs either side. Of the same fit as the persistence, so that their product is a long-run
/// variance (residuals about short local lines fitted to each piece had lost the noise's slow
/// part, and passed false pairs).
fn local_variance(residuals: &[f64], s: usize, e: usize) -> f64 {
    let near = &residuals[s.saturating_sub(LOCAL_POINTS)..(e + LOCAL_POINTS).min(residuals.len())];
    near.iter().map(|v| v * v).sum::<f64>() / near.len().saturating_sub(1).max(1) as f64
}

/// The t's of the jumps at s and at e of `level` (the segment less its line): between the mean
/// of up to LOCAL_POINTS runs outside and of up to LOCAL_POINTS runs inside [s, e), over their
/// standard error with long-run variance `v`. An interval cut out of a single step has one end
/// where nothing moves.
fn edge_ts(level: &[f64], s: usize, e: usize, v: f64) -> (f64, f64) {
    let inside = (e - s).min(LOCAL_POINTS);
    let left = &level[s.saturating_sub(LOCAL_POINTS)..s];
    let right = &level[e..(e + LOCAL_POINTS).min(level.len())];
    let t = |outer: &[f64], inner: &[f64]| {
        let se = (v * (1.0 / outer.len() as f64 + 1.0 / inner.len() as f64)).sqrt();
        (mean(inner) - mean(outer)) / se
    };
    (
        t(left, &level[s..s + inside]),
        t(right, &level[e - inside..e]),
    )
}

#[cfg(test)]
mod tests {
    use super::super::{tests::detect, Options};

    /// Deterministic noise of sd about 1: a sum of 12 uniforms (xorshift), less 6.
    fn noise(seed: u64, n: usize) -> Vec<f64> {
        let mut x = seed | 1;
        let mut uniform = move || {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            (x >> 11) as f64 / (1u64 << 53) as f64
        };
        (0..n)
            .map(|_| (0..12).map(|_| uniform()).sum::<f64>() - 6.0)
            .collect()
    }

    #[test]
    fn both_edges_of_a_short_dip_are_found() {
        // A 10% dip of 12 runs in 2% noise: 5 sds, but each edge has the other within its
        // lines and the one-change tests found both in about a fifth of such series.
        for seed in 1..=10 {
            let mut x: Vec<f64> = noise(seed, 240).iter().map(|e| 100.0 + 2.0 * e).collect();
            for v in &mut x[120..132] {
                *v -= 10.0;
            }
            let at: Vec<usize> = detect(&x, &Options::default())
                .iter()
                .map(|c| c.index)
                .collect();
            for edge in [120, 132] {
                assert!(
                    at.iter().any(|i| i.abs_diff(edge) <= 2),
                    "seed {seed}: {at:?}"
                );
            }
        }
    }

    #[test]
    fn a_cycle_is_not_a_dip() {
        // Each trough of a sine is dip-shaped; its persistence is the sine's, and large.
        for (seed, period) in [(1, 9.0), (2, 14.0), (3, 23.0)] {
            let x: Vec<f64> = noise(seed, 300)
                .iter()
                .enumerate()
                .map(|(i, e)| {
                    100.0 + 6.0 * (std::f64::consts::TAU * i as f64 / period).sin() + 1.5 * e
                })
                .collect();
            let cps = detect(&x, &Options::default());
            assert!(cps.is_empty(), "period {period}: {cps:?}");
        }
    }
}
