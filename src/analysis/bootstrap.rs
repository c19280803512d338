//! The interval of a throughput ratio from a bootstrap that respects how the numbers were made:
//! rounds of a campaign are resampled (the run-to-run variation a single run cannot show), and
//! within a round the per-second rates are resampled in blocks (a moving-block bootstrap: consecutive
//! seconds are correlated — checkpoints, compactions, stalls — so seconds are not drawn one by
//! one, which would understate the spread).

use rand_core::{Rng, SeedableRng};
use rand_xoshiro::Xoshiro256PlusPlus;

use super::interval::{mean, quantile, Interval};
use super::welch::rates_interval;

/// Resamples per interval: enough for stable 2.5% and 97.5% quantiles.
const RESAMPLES: usize = 2000;
/// Fewer full seconds than this in a round give no interval from that round's series.
pub const MIN_SECONDS: usize = 3;

/// One moving-block bootstrap replicate of the mean of `v`.
pub fn block_mean(v: &[f64], rng: &mut Xoshiro256PlusPlus) -> f64 {
    let n = v.len();
    let b = ((n as f64).cbrt().ceil() as usize).clamp(1, n);
    let starts = n - b + 1;
    let mut sum = 0.0;
    let mut taken = 0;
    while taken < n {
        let s = (rng.next_u64() % starts as u64) as usize;
        for x in &v[s..(s + b).min(s + n - taken)] {
            sum += x;
            taken += 1;
        }
    }
    sum / n as f64
}

/// One replicate of a target's mean rate: rounds drawn with replacement, each a block mean.
pub fn replicate(rs: &[Vec<f64>], rng: &mut Xoshiro256PlusPlus) -> f64 {
    let k = rs.len();
    let mut sum = 0.0;
    for _ in 0..k {
        let r = &rs[(rng.next_u64() % k as u64) as usize];
        sum += block_mean(r, rng);
    }
    sum / k as f64
}

/// A generator seeded by the step (and whatever else names the comparison), so the same
/// results always give the same report.
pub fn seeded(name: &str) -> Xoshiro256PlusPlus {
    let seed = name.bytes().fold(0x9e37_79b9_7f4a_7c15u64, |h, b| {
        (h ^ b as u64).wrapping_mul(0x100_0000_01b3)
    });
    Xoshiro256PlusPlus::seed_from_u64(seed)
}

/// The 95% interval of `ratio` (the table's target / base ratio) from the per-second rates of
/// each round, target's (`tr`) and base's (`br`); a round too short for a series of its own
/// is its headline alone. Resampled with a generator seeded by `seed`, so the same results
/// give the same interval.
pub fn ratio_interval(
    tr: &[Vec<f64>],
    br: &[Vec<f64>],
    seed: &str,
    ratio: f64,
) -> Option<Interval> {
    // Only a headline per round on both sides (l.x, steps too short for a series): three
    // values a side are too few to bootstrap, so the rounds get the t-interval the metrics do.
    if tr.iter().chain(br).all(|r| r.len() == 1) {
        let heads = |rs: &[Vec<f64>]| rs.iter().map(|r| r[0]).collect::<Vec<f64>>();
        return rates_interval(&heads(tr), &heads(br), ratio);
    }
    let point = {
        let tm = mean(&tr.iter().map(|r| mean(r)).collect::<Vec<_>>());
        let bm = mean(&br.iter().map(|r| mean(r)).collect::<Vec<_>>());
        tm / bm
    };
    if !(point.is_finite() && point > 0.0 && ratio.is_finite()) {
        return None;
    }
    let mut rng = seeded(seed);
    let mut f: Vec<f64> = (0..RESAMPLES)
        .map(|_| replicate(tr, &mut rng) / replicate(br, &mut rng) / point)
        .filter(|x| x.is_finite())
        .collect();
    if f.len() < RESAMPLES / 2 {
        return None;
    }
    f.sort_by(f64::total_cmp);
    let secs = |rs: &[Vec<f64>]| rs.iter().map(Vec::len).min().unwrap_or(0);
    let mut iv = Interval {
        lo: ratio * quantile(&f, 0.025),
        hi: ratio * quantile(&f, 0.975),
        seconds: secs(tr).min(secs(br)),
        rounds: tr.len().min(br.len()),
        ops: None,
    };
    // Drawing three rounds with replacement understates how far a fourth could land (the
    // spread of the drawn means is (k-1)/k of the rounds' and has no allowance for having
    // estimated it from k values): an A/A pair's l.i1 was called 1.30 faster, 1.09-1.81, from
    // rounds that Welch's t puts at 0.6-1.7. With rounds enough for it, the interval also
    // takes in Welch's t-interval over the rounds' mean rates.
    let level = |rs: &[Vec<f64>]| rs.iter().map(|r| mean(r)).collect::<Vec<f64>>();
    if let Some(w) = rates_interval(&level(tr), &level(br), ratio) {
        iv.lo = iv.lo.min(w.lo);
        iv.hi = iv.hi.max(w.hi);
    }
    Some(iv)
}
