//! Rates over a step's seconds, as the Insert Benchmark's reports give them; any suite may use
//! them for its per-second headline.

/// The original's "p50/p99" of a step: percentiles of the per-second rate sorted in descending
/// order, the element at 1-based position round(p/100 * n), so p99 is a low rate that 99% of
/// seconds met or beat (spec §2.6). Needs at least 10 seconds.
pub fn interval_rate_percentiles(per_second: &[f64]) -> Vec<(u32, Option<f64>)> {
    const PS: [u32; 5] = [50, 75, 90, 95, 99];
    if per_second.len() < 10 {
        return PS.iter().map(|&p| (p, None)).collect();
    }
    let mut v = per_second.to_vec();
    v.sort_by(|a, b| b.partial_cmp(a).unwrap());
    let n = v.len();
    PS.iter()
        .map(|&p| {
            let pos = ((p as f64 / 100.0) * n as f64).round() as usize;
            (p, Some(v[pos.clamp(1, n) - 1]))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn interval_percentiles_sort_descending() {
        let v: Vec<f64> = (1..=100).map(|x| x as f64).collect();
        let p = interval_rate_percentiles(&v);
        assert_eq!(p[0], (50, Some(51.0)), "50th of 100 in descending order");
        assert_eq!(
            p[4],
            (99, Some(2.0)),
            "p99 is a low rate that 99% of seconds met"
        );
        let ten: Vec<f64> = (1..=10).map(|x| x as f64).collect();
        assert_eq!(
            interval_rate_percentiles(&ten)[4],
            (99, Some(1.0)),
            "position clamps to n"
        );
        assert!(interval_rate_percentiles(&v[..9])
            .iter()
            .all(|(_, x)| x.is_none()));
    }
}
