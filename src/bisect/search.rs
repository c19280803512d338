//! The search of a bisect, as a pure function: given what is measured so far (rounds per build,
//! which builds failed) and the verdict between any two measured builds, what to measure next,
//! or how it ends. It keeps no state: each call replays the search from the two ends, so a
//! resumed bisect, given the same measurements, takes the same path (docs/bisect.md).
//!
//! As Chromium's Pinpoint does, a comparison is one of three (changed, same, unsure), and an
//! unsure one gets more rounds, of the build and its neighbours together, until it is decided
//! or the round budget is spent.

pub use crate::results::bisect::Verdict;

/// A verdict and the ratio it is of (after / before), which says the change's direction and
/// size when two halves both changed.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Comparison {
    pub verdict: Verdict,
    pub ratio: f64,
}

/// How many rounds a build gets: at first, added each time a verdict is unsure, at most.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Budget {
    pub first: u32,
    pub more: u32,
    pub most: u32,
}

/// What is measured so far, and the verdicts between measured builds.
pub struct Known<'a> {
    /// Rounds measured per build, in the list's order (0: not measured yet).
    pub rounds: &'a [u32],
    /// Builds that failed to start or to run the step: skipped.
    pub failed: &'a [bool],
    /// The verdict between two measured builds (`before` < `after` in the list).
    pub compare: &'a dyn Fn(usize, usize) -> Comparison,
}

/// The search's next move.
#[derive(Debug, Clone, PartialEq)]
pub enum Next {
    /// Measure these builds together (interleaved rounds), `rounds` more rounds each.
    Measure {
        builds: Vec<usize>,
        rounds: u32,
        why: Why,
    },
    Done(Ending),
}

/// Why a measurement is asked for, for the record and the person watching.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Why {
    Ends,
    Middle,
    MoreRounds,
}

#[derive(Debug, Clone, PartialEq)]
pub enum Ending {
    /// The ends are not a confirmed change: `unsure` when the budget ran out unsure.
    NoChange { unsure: bool },
    /// Changed between `before` and `after`, adjacent once failed builds are skipped.
    /// `second`: the other half of a range whose halves both changed.
    Culprit {
        before: usize,
        after: usize,
        second: Option<(usize, usize)>,
    },
    /// `lo` and `hi` differ, but each half of them is the same as its ends.
    Gradual {
        lo: usize,
        hi: usize,
        second: Option<(usize, usize)>,
    },
    /// The budget ran out with the pair `open` unsure, inside the bracket `lo`..`hi`.
    Undecided {
        lo: usize,
        hi: usize,
        open: (usize, usize),
        second: Option<(usize, usize)>,
    },
    /// An end of the list could not be measured.
    EndFailed { build: usize },
}

/// The next move of the search over `n` builds.
pub fn next(n: usize, known: &Known, budget: Budget) -> Next {
    assert!(n >= 2, "a bisect has two builds at least");
    let (mut lo, mut hi) = (0, n - 1);
    for end in [lo, hi] {
        if known.failed[end] {
            return Next::Done(Ending::EndFailed { build: end });
        }
    }
    if known.rounds[lo] == 0 || known.rounds[hi] == 0 {
        return measure(vec![lo, hi], budget.first, Why::Ends);
    }
    match (known.compare)(lo, hi).verdict {
        Verdict::Changed => {}
        Verdict::Same => return Next::Done(Ending::NoChange { unsure: false }),
        Verdict::Unsure if room(known, &[lo, hi], budget) => {
            return measure(vec![lo, hi], budget.more, Why::MoreRounds)
        }
        Verdict::Unsure => return Next::Done(Ending::NoChange { unsure: true }),
    }
    let ends = (known.compare)(lo, hi).ratio;
    let mut second = None;
    loop {
        let Some(mid) = middle(lo, hi, known.failed) else {
            return Next::Done(Ending::Culprit {
                before: lo,
                after: hi,
                second,
            });
        };
        if known.rounds[mid] == 0 {
            return measure(vec![lo, mid, hi], budget.first, Why::Middle);
        }
        let (a, b) = ((known.compare)(lo, mid), (known.compare)(mid, hi));
        match (a.verdict, b.verdict) {
            (Verdict::Changed, Verdict::Same) => hi = mid,
            (Verdict::Same, Verdict::Changed) => lo = mid,
            (Verdict::Same, Verdict::Same) => {
                return Next::Done(Ending::Gradual { lo, hi, second })
            }
            (Verdict::Changed, Verdict::Changed) => {
                // Both halves changed: bisect the one going the way the ends went (the larger
                // of the two when both do), and say the other.
                if lower_first(a.ratio, b.ratio, ends) {
                    second.get_or_insert((mid, hi));
                    hi = mid;
                } else {
                    second.get_or_insert((lo, mid));
                    lo = mid;
                }
            }
            _ if room(known, &[lo, mid, hi], budget) => {
                return measure(vec![lo, mid, hi], budget.more, Why::MoreRounds)
            }
            _ => {
                let open = if a.verdict == Verdict::Unsure {
                    (lo, mid)
                } else {
                    (mid, hi)
                };
                return Next::Done(Ending::Undecided {
                    lo,
                    hi,
                    open,
                    second,
                });
            }
        }
    }
}

fn measure(builds: Vec<usize>, rounds: u32, why: Why) -> Next {
    Next::Measure {
        builds,
        rounds,
        why,
    }
}

/// Whether the budget allows more rounds of these builds: the least measured of them is below
/// the most a build gets (the ends, measured with every middle, have more than the others).
fn room(known: &Known, builds: &[usize], budget: Budget) -> bool {
    let least = builds.iter().map(|&b| known.rounds[b]).min().unwrap_or(0);
    budget.more > 0 && least < budget.most
}

/// The build to measure between `lo` and `hi`: the one nearest the middle that has not failed
/// (the lower on a tie); None when every build between failed or none is between.
fn middle(lo: usize, hi: usize, failed: &[bool]) -> Option<usize> {
    let centre = (lo + hi) / 2;
    (lo + 1..hi)
        .filter(|&i| !failed[i])
        .min_by_key(|&i| (i.abs_diff(centre), i))
}

/// Of two halves that both changed, whether to follow the lower: the one going the way of the
/// ends' change (ratio `ends`), and of two that both do, the larger.
fn lower_first(a: f64, b: f64, ends: f64) -> bool {
    let size = |r: f64| r.ln();
    let way = size(ends).signum();
    let (da, db) = (size(a) * way, size(b) * way);
    match (da > 0.0, db > 0.0) {
        (true, false) => true,
        (false, true) => false,
        _ => da.abs() >= db.abs(),
    }
}

#[cfg(test)]
mod tests;
