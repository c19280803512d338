//! Summary statistics of a set of values (a group's relative QPS in the sysbench report).

/// average, median, min, max, population standard deviation.
pub fn of(v: &[f64]) -> Option<[f64; 5]> {
    if v.is_empty() {
        return None;
    }
    let n = v.len() as f64;
    let mean = v.iter().sum::<f64>() / n;
    let mut s = v.to_vec();
    s.sort_by(|a, b| a.total_cmp(b));
    // Not `rounds::median`, which drops values that are not finite: every value here counts.
    let median = if s.len() % 2 == 1 {
        s[s.len() / 2]
    } else {
        (s[s.len() / 2 - 1] + s[s.len() / 2]) / 2.0
    };
    let sd = (v.iter().map(|x| (x - mean) * (x - mean)).sum::<f64>() / n).sqrt();
    Some([mean, median, s[0], s[s.len() - 1], sd])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn summary_statistics() {
        let s = of(&[1.0, 0.9, 1.2, 0.9]).unwrap();
        assert!((s[0] - 1.0).abs() < 1e-12);
        assert!((s[1] - 0.95).abs() < 1e-12);
        assert_eq!((s[2], s[3]), (0.9, 1.2));
        // population: sqrt(((0)^2 + 0.1^2 + 0.2^2 + 0.1^2) / 4)
        assert!((s[4] - (0.06f64 / 4.0).sqrt()).abs() < 1e-12);
        assert_eq!(of(&[]), None);
    }
}
