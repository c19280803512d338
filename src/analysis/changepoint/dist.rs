//! The two null distributions the detector's p-values come from.

/// P(K > t) for the Kolmogorov distribution, the law of the largest |Brownian bridge|: what the
/// largest CUSUM of a segment without a change tends to, once divided by sqrt(length × long-run
/// variance). Two series, each fast where the other is slow (both to 1e-16 or better).
pub fn kolmogorov_sf(t: f64) -> f64 {
    if t.is_nan() || t <= 0.0 {
        return 1.0;
    }
    let p = if t < 1.0 {
        // P(K <= t) = sqrt(2 pi) / t * sum over odd j of exp(-j^2 pi^2 / (8 t^2)).
        let s: f64 = (1..=7)
            .map(|j| {
                let o = (2 * j - 1) as f64;
                (-o * o * std::f64::consts::PI.powi(2) / (8.0 * t * t)).exp()
            })
            .sum();
        1.0 - (2.0 * std::f64::consts::PI).sqrt() / t * s
    } else {
        // 2 * sum over j of (-1)^(j-1) exp(-2 j^2 t^2).
        2.0 * (1..=100)
            .map(|j| {
                let j = j as f64;
                let sign = if j as u32 % 2 == 1 { 1.0 } else { -1.0 };
                sign * (-2.0 * j * j * t * t).exp()
            })
            .sum::<f64>()
    };
    p.clamp(0.0, 1.0)
}

/// Two-sided p-value of a standard normal statistic.
pub fn normal_two_sided(t: f64) -> f64 {
    if t.is_nan() {
        return 1.0;
    }
    libm::erfc(t.abs() / std::f64::consts::SQRT_2).clamp(0.0, 1.0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn known_quantiles() {
        // Published critical values of the Kolmogorov distribution.
        for (t, p) in [
            (1.2238, 0.10),
            (1.3581, 0.05),
            (1.6276, 0.01),
            (0.8276, 0.50),
        ] {
            assert!(
                (kolmogorov_sf(t) - p).abs() < 1e-3,
                "{t}: {}",
                kolmogorov_sf(t)
            );
        }
        // Both series agree where they meet.
        assert!((kolmogorov_sf(0.999_999) - kolmogorov_sf(1.000_001)).abs() < 1e-5);
        assert_eq!(kolmogorov_sf(0.0), 1.0);
        assert_eq!(kolmogorov_sf(50.0), 0.0);
        assert!((normal_two_sided(1.959_964) - 0.05).abs() < 1e-6);
        assert!((normal_two_sided(-2.575_829) - 0.01).abs() < 1e-6);
    }
}
