//! A 95% interval of a ratio target / base, and the arithmetic every way of finding one shares.

#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Interval {
    pub lo: f64,
    pub hi: f64,
    /// Seconds and rounds per side it rests on (the smaller of target and base).
    pub seconds: usize,
    pub rounds: usize,
    /// Latency intervals: operations per round it rests on (the smaller side); None for rates.
    pub ops: Option<u64>,
}

/// The mean of `v`; NaN when it is empty.
pub fn mean(v: &[f64]) -> f64 {
    v.iter().sum::<f64>() / v.len() as f64
}

/// The `q`-quantile of `sorted` (ascending), interpolated between its two nearest values.
pub fn quantile(sorted: &[f64], q: f64) -> f64 {
    let pos = q * (sorted.len() - 1) as f64;
    let (i, f) = (pos.floor() as usize, pos.fract());
    if i + 1 < sorted.len() {
        sorted[i] * (1.0 - f) + sorted[i + 1] * f
    } else {
        sorted[i]
    }
}
