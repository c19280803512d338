//! Where a segment's likeliest pair of changes is: the interval [s, e), up to DIP_MOST runs
//! long, whose mean differs most from the runs either side of it (docs/history.md, "Method").
//! Every interval is scored, so a short dip is always isolated by one of them.

use super::fit::LOCAL_POINTS;

/// The longest interval searched for a pair of changes. Pairs further apart are each found by
/// the one-change tests (two steps 60 runs apart each have 20 clean runs either side).
pub const DIP_MOST: usize = 64;
/// The fewest runs either side of a pair, within its segment: the edges' means are taken over
/// them, and a pair 4 runs from a segment's end passed on 4 runs.
pub const FLANK_LEAST: usize = LOCAL_POINTS / 2;
/// One more than the most runs either side of an interval together.
const OUTSIDE_MOST: usize = 2 * LOCAL_POINTS + 1;

/// The scores of the intervals of one series. Binary segmentation searches each segment
/// again after every split, and a history of 10,000 runs has 640,000 intervals: each start's
/// best interval is found once for the whole series, and a segment recomputes only the starts
/// whose intervals or flanks its ends cut.
pub struct PairScan {
    /// Prefix sums of the series.
    sum: Vec<f64>,
    /// 1 / (i·o·(i + o)) for i runs inside and o outside, at i·OUTSIDE_MOST + o.
    weight: Vec<f64>,
    least: usize,
    flank: usize,
    /// For each start s, its best end and score over the whole series (None where no interval
    /// starts there).
    best: Vec<Option<(usize, f64)>>,
}

impl PairScan {
    pub fn new(z: &[f64], min_size: usize) -> PairScan {
        let n = z.len();
        let mut sum = Vec::with_capacity(n + 1);
        sum.push(0.0);
        for (i, v) in z.iter().enumerate() {
            sum.push(sum[i] + v);
        }
        // The score of an interval with `i` runs inside and `o` outside is
        // (Σin·o − Σout·i)² / (i·o·(i + o)), the squared difference of the means over its
        // variance under white noise; the last factor from a table, so the loop divides
        // nothing.
        let weight = (0..=DIP_MOST)
            .flat_map(|i| (0..OUTSIDE_MOST).map(move |o| 1.0 / ((i * o * (i + o)).max(1) as f64)))
            .collect();
        let least = min_size.max(2);
        let mut scan = PairScan {
            sum,
            weight,
            least,
            flank: least.max(FLANK_LEAST),
            best: Vec::new(),
        };
        scan.best = (0..n).map(|s| scan.best_from(s, 0, n)).collect();
        scan
    }

    /// The best interval of the segment [a, b) starting at s (global indices), and its score.
    fn best_from(&self, s: usize, a: usize, b: usize) -> Option<(usize, f64)> {
        if s < a + self.flank || s + self.least + self.flank > b {
            return None;
        }
        let sum = &self.sum;
        let l = a.max(s.saturating_sub(LOCAL_POINTS));
        let (sum_left, count_left) = (sum[s] - sum[l], s - l);
        // Scores are never negative: the first interval always replaces -1.
        let (mut best, mut best_score) = (s, -1.0);
        for e in (s + self.least)..=(s + DIP_MOST).min(b - self.flank) {
            let r = (e + LOCAL_POINTS).min(b);
            let (i, o) = (e - s, count_left + r - e);
            let d = (sum[e] - sum[s]) * o as f64 - (sum_left + sum[r] - sum[e]) * i as f64;
            let score = d * d * self.weight[i * OUTSIDE_MOST + o];
            if score > best_score {
                (best, best_score) = (e, score);
            }
        }
        (best_score >= 0.0).then_some((best, best_score))
    }

    /// The best interval [s, e) of the segment [a, b), both from a, and the number of
    /// intervals compared; None when the segment has none.
    pub fn best(&self, a: usize, b: usize) -> Option<(usize, usize, usize)> {
        let mut best: Option<(usize, usize, f64)> = None;
        let mut scanned = 0;
        for s in (a + self.flank)..b.saturating_sub(self.least + self.flank - 1) {
            // The whole series' answer holds where the segment cuts neither the left flank
            // nor any interval from s with its right flank.
            let inner = s >= a + LOCAL_POINTS && s + DIP_MOST + LOCAL_POINTS <= b;
            let found = if inner {
                self.best[s]
            } else {
                self.best_from(s, a, b)
            };
            scanned += (s + DIP_MOST).min(b - self.flank) + 1 - (s + self.least);
            if let Some((e, score)) = found {
                if best.is_none_or(|x| score > x.2) {
                    best = Some((s, e, score));
                }
            }
        }
        best.map(|(s, e, _)| (s - a, e - a, scanned))
    }
}
