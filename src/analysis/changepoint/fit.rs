//! Straight lines, the noise's long-run variance, and the jump between lines either side of
//! a point: what both the scan for clear steps and the segment tests are made of.

/// Points either side of a candidate that the local jump test fits its lines to, at most.
pub const LOCAL_POINTS: usize = 20;
/// The largest lag-one autocorrelation the long-run variance takes: 0.98 already multiplies
/// the variance by 99, and at 1 it would be infinite.
const PHI_MAX: f64 = 0.98;
/// The smallest long-run variance, in the units of the standardised series (whose noise is
/// about 1): a noiseless step is then a change with p ~ 0, and rounding errors around a
/// noiseless line are not.
const VAR_FLOOR: f64 = 1e-12;

pub fn mean(v: &[f64]) -> f64 {
    v.iter().sum::<f64>() / v.len().max(1) as f64
}

/// The long-run variance of noise `e` (residuals, mean about 0) whose lag products do not
/// cross `split`: an AR(1) plug-in, variance × (1 + φ) / (1 - φ), with φ the lag-one
/// autocorrelation corrected for its small-sample bias, (1 + 3φ) / n, and kept in [0, PHI_MAX]
/// (negative autocorrelation would shrink the variance and call more changes).
pub fn long_run_variance(e: &[f64], split: usize) -> f64 {
    long_run_variance_cut(e, &[0, split, e.len()])
}

/// [`long_run_variance`] with lag products crossing none of `cuts`.
pub fn long_run_variance_cut(e: &[f64], cuts: &[usize]) -> f64 {
    let n = e.len();
    let var = e.iter().map(|v| v * v).sum::<f64>() / n.saturating_sub(2).max(1) as f64;
    (var * persistence(e, cuts)).max(VAR_FLOOR)
}

/// How much the noise's persistence multiplies its variance in the long run, (1 + φ) / (1 - φ),
/// φ the lag-one autocorrelation of the residuals `e` (lag products crossing none of `cuts`),
/// bias-corrected and floored as [`long_run_variance`] says.
pub fn persistence(e: &[f64], cuts: &[usize]) -> f64 {
    let mut phi = lag_one(e, cuts);
    // A random walk's residuals about a level look less persistent than they are (φ about
    // 0.85 in a hundred points, the variance ×12 where it should be unbounded), and some of
    // its large moves then pass for steps. Its differences are uncorrelated, where level noise
    // has differences correlated -(1 - φ)/2: φ = 1 + 2ρ of the differences, less one of its
    // standard errors (2/√n), is a floor that lifts a walk and rarely an AR noise (less two, a
    // walk still had an alarm in 7% of series; bench/changepoints).
    if let Some(floor) = phi_from_differences(e, cuts) {
        phi = phi.max(floor.clamp(0.0, PHI_MAX));
    }
    (1.0 + phi) / (1.0 - phi)
}

/// The lag-one autocorrelation φ of `e` (lag products crossing none of `cuts`) with its
/// small-sample bias (1 + 3φ) / n added back, in [0, PHI_MAX].
pub fn lag_one(e: &[f64], cuts: &[usize]) -> f64 {
    let n = e.len();
    let (mut num, mut den) = (0.0, 0.0);
    for i in 1..n {
        if !cuts.contains(&i) {
            num += e[i] * e[i - 1];
            den += e[i - 1] * e[i - 1];
        }
    }
    let raw = if den > 0.0 { num / den } else { 0.0 };
    (raw + (1.0 + 3.0 * raw) / n as f64).clamp(0.0, PHI_MAX)
}

/// 1 + 2ρ - 2/√n, ρ the lag-one autocorrelation of the differences of `e` (clipped at about 3
/// sds, so that a step's one large difference does not count), none crossing `cuts`.
fn phi_from_differences(e: &[f64], cuts: &[usize]) -> Option<f64> {
    let d: Vec<f64> = (1..e.len())
        .filter(|i| !cuts.contains(i))
        .map(|i| e[i] - e[i - 1])
        .collect();
    if d.len() < 4 {
        return None;
    }
    // 4 mean absolute differences, about 3.2 sds of normal differences: a mean rather than a
    // median, since this runs for every candidate and a sort was most of the detector's time.
    let limit = 4.0 * d.iter().map(|v| v.abs()).sum::<f64>() / d.len() as f64;
    let d: Vec<f64> = d.iter().map(|v| v.clamp(-limit, limit)).collect();
    let (mut num, mut den) = (0.0, 0.0);
    for i in 1..d.len() {
        num += d[i] * d[i - 1];
        den += d[i - 1] * d[i - 1];
    }
    (den > 0.0).then(|| 1.0 + 2.0 * num / den - 2.0 / (d.len() as f64).sqrt())
}

/// Least squares of `y` on a straight line: (mean, slope, centre of the x's, sum of squares
/// of the x's about it). x = 0, 1, ...
fn line(y: &[f64]) -> (f64, f64, f64, f64) {
    let w = y.len() as f64;
    let xm = (w - 1.0) / 2.0;
    let sxx: f64 = (0..y.len()).map(|i| (i as f64 - xm).powi(2)).sum();
    let ym = mean(y);
    let sxy: f64 = y
        .iter()
        .enumerate()
        .map(|(i, v)| (i as f64 - xm) * (v - ym))
        .sum();
    let slope = if sxx > 0.0 { sxy / sxx } else { 0.0 };
    (ym, slope, xm, sxx)
}

pub fn line_residuals(y: &[f64]) -> Vec<f64> {
    let (ym, slope, xm, _) = line(y);
    y.iter()
        .enumerate()
        .map(|(i, v)| v - ym - slope * (i as f64 - xm))
        .collect()
}

/// The jump at k between straight lines fitted to up to `most` points either side, each taken
/// to the boundary, over its standard error: the lines' residuals' long-run variance, at least
/// a quarter of the series' short-term variance (`short_sd`), since three points that happen
/// to lie on a line (integer or periodic values) have none and gave a t of 1e5.
pub fn local_jump_t(y: &[f64], k: usize, most: usize, short_sd: f64) -> f64 {
    let w = k.min(y.len() - k).min(most);
    if w < 3 {
        return 0.0;
    }
    let (left, right) = (&y[k - w..k], &y[k..k + w]);
    let (ly, lb, lxm, sxx) = line(left);
    let (ry, rb, rxm, _) = line(right);
    // Both lines at the boundary, half a point past the left's last and before the right's
    // first.
    let at_left = ly + lb * (w as f64 - 0.5 - lxm);
    let at_right = ry + rb * (-0.5 - rxm);
    let mut residuals = line_residuals(left);
    residuals.extend(line_residuals(right));
    let v = long_run_variance(&residuals, w).max(0.25 * short_sd * short_sd);
    // Variance of a line's value half a point past its end, per unit of noise variance.
    let end = 1.0 / w as f64 + (w as f64 / 2.0).powi(2) / sxx;
    (at_right - at_left) / (2.0 * end * v).sqrt()
}
