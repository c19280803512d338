//! Change points in a series of results over time: binary segmentation with CUSUM tests whose
//! noise is allowed to be autocorrelated, and whose changes must be steps, not trends
//! (docs/history.md, "Method", says how and why; bench/changepoints/ measures it).
//!
//! Benchmark histories are not white noise: a host has slow weeks, caches warm over days,
//! builds drift. A test that assumes independent points (the permutation test of E-divisive,
//! which this replaced) calls most of that a change. Here each split is judged against the
//! noise's long-run variance (an AR(1) plug-in), must also be a step when a straight trend is
//! allowed and a jump between the lines fitted either side, and single outliers are clipped
//! before anything is tested. Two changes a few dozen runs apart (a dip) hide each other from
//! those tests, so every short interval is also scored as a pair of changes, and the likeliest
//! tested as one (dip.rs, scan.rs). p-values come from the tests' limiting laws, with no random
//! draws: the same series always gives the same changes, and fast. Each split is the surest
//! candidate, or of clear steps as sure the one nearest the middle (segment.rs, `choose`), so
//! the segments halve and the search is n·log n; a budget of work bounds any series ([`budget`]).

mod dip;
mod dist;
mod fit;
mod kind;
mod prepare;
mod scan;
mod segment;
mod size;
#[cfg(test)]
mod tests;

pub use kind::ChangeKind;

/// How the detector decides.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Options {
    /// A split is kept when its p-value is at most this.
    pub alpha: f64,
    /// Fewest points on either side of a change (at least 2).
    pub min_size: usize,
}

impl Default for Options {
    fn default() -> Options {
        Options {
            alpha: 0.005,
            min_size: 3,
        }
    }
}

/// A change: the series is different from `index` on.
#[derive(Debug, Clone, PartialEq)]
pub struct ChangePoint {
    /// First index of the new segment.
    pub index: usize,
    pub kind: ChangeKind,
    /// The p-value of the split when it was found: how likely a split this clear is in a
    /// segment without a change, under the method's assumptions. Smaller is surer.
    pub p_value: f64,
    /// Means of the segments either side, between this change and its neighbours.
    pub mean_before: f64,
    pub mean_after: f64,
    /// mean_after / mean_before - 1 (0.2 = 20% higher after), computed where nothing
    /// overflows; None when the mean before is 0 or the ratio is not finite.
    pub relative: Option<f64>,
    /// Its 95% interval, from each segment's long-run variance; None where `relative` is, or
    /// when the interval is not finite.
    pub relative_interval: Option<(f64, f64)>,
    /// The short-term sd of the segments either side: of the differences between neighbours,
    /// over sqrt 2 (robust, and blind to the level).
    pub sd_before: f64,
    pub sd_after: f64,
}

/// What the search of one series found.
#[derive(Debug, Clone, PartialEq)]
pub struct Detection {
    /// The change points, in index order.
    pub changes: Vec<ChangePoint>,
    /// False when the search stopped at its budget of work ([`budget`]) with segments left
    /// untested: their changes are then missing from `changes`.
    pub complete: bool,
    /// The points of the segments tested, summed: the search's work.
    pub work: u64,
}

/// Tests per point and level of halving that the search may spend: binary segmentation whose
/// splits halve the segments tests each point about once per level, log2(n / 20) + 2 times in
/// a series with a change every 20 runs (17 times in a million runs), and splits at random
/// places cost about 1.4 times that.
const WORK_PER_LEVEL: u64 = 4;
/// The budget of any series: 2^24 points of segments, more than a series of 8,000 runs can
/// take however its splits fall, so a shorter one is always searched whole.
const WORK_LEAST: u64 = 1 << 24;

/// The most work (points of segments tested) the search of a series of `n` points does:
/// 4·n·(⌊log2 n⌋ + 1), at least 2^24. Each split is the surest candidate of its segment (or,
/// of clear steps about as sure, the one nearest the middle), so a series made for it can
/// still have its splits all near one end, and each test then costs nearly the whole series:
/// unbounded, the work grows as n², some 2.5·10^10 points tested for 10^6 runs with a change
/// every 20 (over half an hour).
pub fn budget(n: usize) -> u64 {
    let levels = u64::from(usize::BITS - n.leading_zeros());
    WORK_PER_LEVEL
        .saturating_mul(n as u64)
        .saturating_mul(levels)
        .max(WORK_LEAST)
}

/// Change points of `x` in index order. A series holding a value that is not finite has none:
/// the caller leaves such values out (what a user gave as input is refused before this).
pub fn detect(x: &[f64], opts: &Options) -> Detection {
    detect_within(x, opts, budget(x.len()))
}

/// [`detect`], stopping once the segments tested hold `most` points.
fn detect_within(x: &[f64], opts: &Options, most: u64) -> Detection {
    let none = Detection {
        changes: Vec::new(),
        complete: true,
        work: 0,
    };
    if x.iter().any(|v| !v.is_finite()) {
        return none;
    }
    let min_size = opts.min_size.max(2);
    if min_size.saturating_mul(2) > x.len() {
        return none;
    }
    let Some(p) = prepare::Prepared::new(x) else {
        return none;
    };
    let mut found: Vec<(usize, f64, ChangeKind)> = Vec::new();
    // Segments still to split, [start, end); each is tested on its own. Splitting stops
    // where no segment's best split reaches alpha, so the order does not change the result
    // (short of the budget: then the segments left on the stack go untested).
    let mut todo = vec![(0usize, x.len())];
    let mut tester = segment::Tester::new(&p, min_size, opts.alpha);
    let mut complete = true;
    while let Some((a, b)) = todo.pop() {
        if tester.work >= most && tester.testable(b - a) {
            complete = false;
            break;
        }
        let Some(c) = tester.test(a, b) else {
            continue;
        };
        if c.p > opts.alpha {
            continue;
        }
        found.push((a + c.at, c.p, c.kind));
        todo.push((a, a + c.at));
        let mut from = a + c.at;
        if let Some(also) = c.also {
            found.push((a + also, c.p, c.kind));
            todo.push((from, a + also));
            from = a + also;
        }
        todo.push((from, b));
    }
    Detection {
        changes: describe(&p, found),
        complete,
        work: tester.work,
    }
}

/// The change points at `found` (index, p-value, kind), each with the segments either side.
fn describe(p: &prepare::Prepared, mut found: Vec<(usize, f64, ChangeKind)>) -> Vec<ChangePoint> {
    found.sort_by_key(|f| f.0);
    let mut bounds: Vec<usize> = vec![0];
    bounds.extend(found.iter().map(|f| f.0));
    bounds.push(p.z.len());
    found
        .iter()
        .enumerate()
        .map(|(i, &(index, p_value, kind))| {
            let (before, after) = (bounds[i]..index, index..bounds[i + 2]);
            let size = size::between(p, before, after);
            ChangePoint {
                index,
                kind,
                p_value,
                mean_before: size.mean_before,
                mean_after: size.mean_after,
                relative: size.relative,
                relative_interval: size.relative_interval,
                sd_before: size.sd_before,
                sd_after: size.sd_after,
            }
        })
        .collect()
}
