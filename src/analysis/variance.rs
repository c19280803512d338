//! How steady a per-second rate was: the coefficient of variation (population standard deviation
//! / mean) over the full seconds of a step, and a flag in plain words when it is high
//! (docs/report.md, "Variance").

/// Fewer full seconds than this say nothing about second-to-second variation.
pub const MIN_SECONDS: usize = 5;

/// A second below this share of the mean counts as a stall.
pub const STALL_SHARE: f64 = 0.10;

#[derive(Debug, Clone, PartialEq)]
pub struct Variance {
    /// Full seconds the figures are over.
    pub seconds: usize,
    pub mean: f64,
    /// Population standard deviation.
    pub sd: f64,
    /// sd / mean; None when the mean is 0 (nothing happened).
    pub cv: Option<f64>,
    pub min: f64,
    pub max: f64,
    /// Seconds below STALL_SHARE of the mean.
    pub stalls: usize,
}

/// Variance of the per-second values; None below MIN_SECONDS values.
pub fn of(values: &[f64]) -> Option<Variance> {
    let n = values.len();
    if n < MIN_SECONDS {
        return None;
    }
    let mean = values.iter().sum::<f64>() / n as f64;
    let var = values.iter().map(|v| (v - mean) * (v - mean)).sum::<f64>() / n as f64;
    let sd = var.sqrt();
    let min = values.iter().copied().fold(f64::INFINITY, f64::min);
    let max = values.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    let stalls = if mean > 0.0 {
        values.iter().filter(|v| **v < STALL_SHARE * mean).count()
    } else {
        0
    };
    Some(Variance {
        seconds: n,
        mean,
        sd,
        cv: (mean > 0.0).then(|| sd / mean),
        min,
        max,
        stalls,
    })
}

/// "inserts/s varies ±40% second to second; 3 of 120 seconds below 10% of the mean" when the CV
/// exceeds `limit_pct`, or when any second stalled; None for a steady rate.
pub fn flag(what: &str, v: &Variance, limit_pct: f64) -> Option<String> {
    let cv_pct = v.cv? * 100.0;
    let mut parts = Vec::new();
    if cv_pct > limit_pct {
        parts.push(format!("{what} varies ±{cv_pct:.0}% second to second"));
    }
    if v.stalls > 0 {
        parts.push(format!(
            "{what} fell below {:.0}% of its mean in {} of {} seconds",
            STALL_SHARE * 100.0,
            v.stalls,
            v.seconds
        ));
    }
    (!parts.is_empty()).then(|| parts.join("; "))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn steady_rate_has_no_flag() {
        let v = of(&[100.0, 101.0, 99.0, 100.0, 100.0, 100.0]).unwrap();
        assert!(v.cv.unwrap() < 0.01);
        assert_eq!(flag("inserts/s", &v, 10.0), None);
    }

    #[test]
    fn cv_is_population_sd_over_mean() {
        // mean 100, deviations ±40 -> sd 40 -> CV 40%
        let v = of(&[60.0, 140.0, 60.0, 140.0, 60.0, 140.0]).unwrap();
        assert!((v.mean - 100.0).abs() < 1e-9);
        assert!((v.sd - 40.0).abs() < 1e-9);
        assert!((v.cv.unwrap() - 0.4).abs() < 1e-9);
        assert_eq!(
            flag("inserts/s", &v, 10.0).unwrap(),
            "inserts/s varies ±40% second to second"
        );
        assert_eq!(flag("inserts/s", &v, 50.0), None);
    }

    #[test]
    fn stalls_are_named_even_when_the_cv_is_moderate() {
        let mut vals = vec![100.0; 40];
        vals[7] = 5.0;
        let v = of(&vals).unwrap();
        assert_eq!(v.stalls, 1);
        let f = flag("queries/s", &v, 50.0).unwrap();
        assert!(f.contains("1 of 40 seconds"), "{f}");
    }

    #[test]
    fn too_few_seconds_or_nothing_done() {
        assert_eq!(of(&[1.0, 2.0, 3.0, 4.0]), None);
        let idle = of(&[0.0; 8]).unwrap();
        assert_eq!(idle.cv, None);
        assert_eq!(flag("deletes/s", &idle, 10.0), None);
    }
}
