//! How large a change is, with its uncertainty, from the segments either side of it.

use std::ops::Range;

use super::fit::long_run_variance;
use super::prepare::{median, Prepared};

/// The normal quantile of a two-sided 95% interval.
const Z95: f64 = 1.959_963_984_540_054;

pub struct Size {
    pub mean_before: f64,
    pub mean_after: f64,
    pub relative: Option<f64>,
    pub relative_interval: Option<(f64, f64)>,
    pub sd_before: f64,
    pub sd_after: f64,
}

/// The means either side on the input's scale, the 95% interval of their ratio less one (the
/// delta method on each mean's variance: the segment's long-run variance over its length), and
/// each side's short-term sd.
pub fn between(p: &Prepared, before: Range<usize>, after: Range<usize>) -> Size {
    let side = |r: &Range<usize>| {
        let s = &p.scaled[r.clone()];
        let m = s.iter().sum::<f64>() / s.len() as f64;
        let z = &p.z[r.clone()];
        let zm = z.iter().sum::<f64>() / z.len() as f64;
        let e: Vec<f64> = z.iter().map(|v| v - zm).collect();
        // The variance of the mean on the scaled series (z's unit is `scale`).
        let var_mean = long_run_variance(&e, e.len()) * p.scale * p.scale / s.len() as f64;
        (m, var_mean, short_term_sd(s))
    };
    let (mb, vb, sb) = side(&before);
    let (ma, va, sa) = side(&after);
    // Both in the scaled series' units, where nothing overflows: the ratio is the same.
    let ratio = Some(ma / mb).filter(|r| mb != 0.0 && r.is_finite());
    let relative_interval = ratio.and_then(|r| {
        let half = Z95 * ((va + r * r * vb) / (mb * mb)).sqrt();
        Some((r - half - 1.0, r + half - 1.0)).filter(|i| i.0.is_finite() && i.1.is_finite())
    });
    Size {
        mean_before: mb * p.back,
        mean_after: ma * p.back,
        relative: ratio.map(|r| r - 1.0),
        relative_interval,
        sd_before: sb * p.back,
        sd_after: sa * p.back,
    }
}

fn short_term_sd(s: &[f64]) -> f64 {
    let d: Vec<f64> = s.windows(2).map(|w| w[1] - w[0]).collect();
    let centre = median(&d);
    let dev: Vec<f64> = d.iter().map(|v| (v - centre).abs()).collect();
    1.4826 * median(&dev) / std::f64::consts::SQRT_2
}
