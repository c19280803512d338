//! Whether two sides' per-second figures come from one distribution, without assuming a shape
//! or independent seconds: a block permutation test (docs/statistics.md, "Latency").

use rand_core::Rng;
use rand_xoshiro::Xoshiro256PlusPlus;

use super::bootstrap::MIN_SECONDS;

/// Random relabellings of blocks for the p-value.
const PERMUTATIONS: usize = 2000;

/// A two-sided block permutation test of "the per-second p99s of target and base come from one
/// distribution": midranks of all seconds together, the difference of the mean ranks (the
/// Mann-Whitney statistic) as the statistic, and blocks of ⌈n^(1/3)⌉ consecutive seconds of a
/// round (not single seconds, which are correlated) relabelled at random. Returns the p-value
/// and the block length.
pub fn block_permutation_p(
    t: &[Vec<f64>],
    b: &[Vec<f64>],
    rng: &mut Xoshiro256PlusPlus,
) -> Option<(f64, usize)> {
    let count = |v: &[Vec<f64>]| v.iter().map(Vec::len).sum::<usize>();
    if count(t) < MIN_SECONDS || count(b) < MIN_SECONDS {
        return None;
    }
    let shortest = t.iter().chain(b).map(Vec::len).filter(|n| *n > 0).min()?;
    let len = ((shortest as f64).cbrt().ceil() as usize).max(1);
    let mut all: Vec<f64> = t.iter().chain(b).flatten().copied().collect();
    all.sort_by(f64::total_cmp);
    // Midrank of a value: the mean of the 1-based ranks its ties occupy.
    let rank = |x: f64| {
        let lo = all.partition_point(|v| *v < x);
        let hi = all.partition_point(|v| *v <= x);
        (lo + hi + 1) as f64 / 2.0
    };
    // Blocks: (sum of ranks, seconds), target's first.
    let blocks = |v: &[Vec<f64>]| -> Vec<(f64, usize)> {
        v.iter()
            .flat_map(|r| r.chunks(len))
            .map(|c| (c.iter().map(|x| rank(*x)).sum(), c.len()))
            .collect()
    };
    let mut bl = blocks(t);
    let nt = bl.len();
    bl.extend(blocks(b));
    let stat = |order: &[usize]| {
        let (mut st, mut ct, mut sb, mut cb) = (0.0, 0usize, 0.0, 0usize);
        for (pos, &i) in order.iter().enumerate() {
            if pos < nt {
                st += bl[i].0;
                ct += bl[i].1;
            } else {
                sb += bl[i].0;
                cb += bl[i].1;
            }
        }
        (st / ct as f64 - sb / cb as f64).abs()
    };
    let mut order: Vec<usize> = (0..bl.len()).collect();
    let observed = stat(&order);
    let mut extreme = 0usize;
    for _ in 0..PERMUTATIONS {
        for i in (1..order.len()).rev() {
            let j = (rng.next_u64() % (i as u64 + 1)) as usize;
            order.swap(i, j);
        }
        if stat(&order) >= observed - 1e-9 {
            extreme += 1;
        }
    }
    Some(((1 + extreme) as f64 / (1 + PERMUTATIONS) as f64, len))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analysis::bootstrap::seeded;

    #[test]
    fn too_few_seconds_give_no_p_value() {
        let mut rng = seeded("few");
        assert!(block_permutation_p(&[vec![1.0, 2.0]], &[vec![1.0; 10]], &mut rng).is_none());
    }
}
