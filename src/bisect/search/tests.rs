//! The search over simulated builds: each has a true level, a judge calls two builds changed
//! when their levels differ by 5% or more (after the rounds it needs), and the simulation
//! measures what the search asks for until it ends.

use super::*;

const BUDGET: Budget = Budget {
    first: 3,
    more: 2,
    most: 9,
};

/// A judge: the verdict between two builds from their levels and the rounds measured.
type Judge = dyn Fn(&[f64], &[u32], usize, usize) -> Comparison;

/// Changed when the levels differ by 5% or more, else the same: a noiseless judge.
fn exact(levels: &[f64], _rounds: &[u32], a: usize, b: usize) -> Comparison {
    let ratio = levels[b] / levels[a];
    let verdict = if !(0.95..1.05).contains(&ratio) {
        Verdict::Changed
    } else {
        Verdict::Same
    };
    Comparison { verdict, ratio }
}

/// What a simulated bisect did.
#[derive(Debug)]
struct Run {
    ending: Ending,
    /// Builds in the order first measured.
    order: Vec<usize>,
    rounds: Vec<u32>,
    batches: Vec<(Vec<usize>, Why)>,
}

fn simulate(levels: &[f64], fails: &[usize], judge: &Judge) -> Run {
    let n = levels.len();
    let mut rounds = vec![0u32; n];
    let mut failed = vec![false; n];
    let mut order = Vec::new();
    let mut batches = Vec::new();
    for _ in 0..1000 {
        let r = rounds.clone();
        let compare = |a: usize, b: usize| {
            assert!(a < b && r[a] > 0 && r[b] > 0, "compared unmeasured {a} {b}");
            judge(levels, &r, a, b)
        };
        let known = Known {
            rounds: &r,
            failed: &failed,
            compare: &compare,
        };
        match next(n, &known, BUDGET) {
            Next::Measure {
                builds,
                rounds: k,
                why,
            } => {
                assert!(k > 0);
                for &b in &builds {
                    if !order.contains(&b) {
                        order.push(b);
                    }
                    if fails.contains(&b) {
                        failed[b] = true;
                    } else {
                        rounds[b] += k;
                    }
                }
                batches.push((builds, why));
            }
            Next::Done(ending) => {
                return Run {
                    ending,
                    order,
                    rounds,
                    batches,
                }
            }
        }
    }
    panic!("the search did not end: {batches:?}");
}

/// A step from 100 to 80 between build `at - 1` and `at`.
fn step(n: usize, at: usize) -> Vec<f64> {
    (0..n).map(|i| if i < at { 100.0 } else { 80.0 }).collect()
}

fn culprit(before: usize, after: usize) -> Ending {
    Ending::Culprit {
        before,
        after,
        second: None,
    }
}

#[test]
fn one_step_anywhere_is_found_in_log2_n_plus_2_builds() {
    for n in 2..=33usize {
        let most = (n as f64).log2().ceil() as usize + 2;
        for at in 1..n {
            let r = simulate(&step(n, at), &[], &exact);
            assert_eq!(r.ending, culprit(at - 1, at), "n {n} at {at}: {r:?}");
            assert!(r.order.len() <= most, "n {n} at {at}: {:?}", r.order);
            // The ends first, then every middle measured with the two it is between.
            assert_eq!(r.batches[0], (vec![0, n - 1], Why::Ends));
            assert!(r.batches[1..]
                .iter()
                .all(|(b, w)| b.len() == 3 && *w == Why::Middle));
        }
    }
}

#[test]
fn no_change_between_the_ends_stops_after_measuring_them() {
    let r = simulate(&[100.0, 90.0, 101.0, 102.0], &[], &exact);
    assert_eq!(r.ending, Ending::NoChange { unsure: false });
    assert_eq!((r.order, r.rounds), (vec![0, 3], vec![3, 0, 0, 3]));
}

#[test]
fn noise_that_never_confirms_spends_the_budget_and_says_no_change() {
    let never = |_: &[f64], _: &[u32], a: usize, b: usize| Comparison {
        verdict: Verdict::Unsure,
        ratio: 0.8 + 0.01 * (a + b) as f64,
    };
    let r = simulate(&step(8, 3), &[], &never);
    assert_eq!(r.ending, Ending::NoChange { unsure: true });
    // 3 first, then 2 more at a time while under 9: 3, 5, 7, 9.
    assert_eq!(r.rounds[0], 9);
    assert_eq!(r.rounds[7], 9);
    assert_eq!(r.order, vec![0, 7]);
    assert!(r.batches[1..].iter().all(|(_, w)| *w == Why::MoreRounds));
}

/// Unsure until both sides have 7 rounds, then exact.
fn slow(levels: &[f64], rounds: &[u32], a: usize, b: usize) -> Comparison {
    let c = exact(levels, rounds, a, b);
    if rounds[a].min(rounds[b]) < 7 {
        Comparison {
            verdict: Verdict::Unsure,
            ..c
        }
    } else {
        c
    }
}

#[test]
fn rounds_added_until_confirmed_still_find_the_culprit() {
    for at in 1..10 {
        let r = simulate(&step(10, at), &[], &slow);
        assert_eq!(r.ending, culprit(at - 1, at), "at {at}: {r:?}");
        // Each new middle is given rounds until decided, never past the budget: at most
        // (9 - 3) / 2 more-rounds batches after it (the brackets' ends, measured with every
        // middle, collect more).
        let mut more = 0;
        for (_, why) in &r.batches {
            more = if *why == Why::MoreRounds { more + 1 } else { 0 };
            assert!(more <= (BUDGET.most - BUDGET.first) / BUDGET.more, "{r:?}");
        }
        // Every middle got its rounds with its neighbours, never alone.
        assert!(r.batches.iter().all(|(b, _)| b.len() >= 2));
    }
}

#[test]
fn a_middle_that_never_confirms_is_left_open() {
    // Build 4 of 8 (the first middle) never compares sure with anything.
    let judge = |l: &[f64], r: &[u32], a: usize, b: usize| {
        let c = exact(l, r, a, b);
        if a == 3 || b == 3 {
            Comparison {
                verdict: Verdict::Unsure,
                ..c
            }
        } else {
            c
        }
    };
    let r = simulate(&step(8, 5), &[], &judge);
    assert_eq!(
        r.ending,
        Ending::Undecided {
            lo: 0,
            hi: 7,
            open: (0, 3),
            second: None
        },
        "{r:?}"
    );
    assert!(r.rounds[3] >= BUDGET.most && r.rounds[3] < BUDGET.most + BUDGET.more);
}

#[test]
fn a_change_at_either_end_is_the_first_or_last_pair() {
    for n in [2, 3, 7, 16] {
        assert_eq!(simulate(&step(n, 1), &[], &exact).ending, culprit(0, 1));
        assert_eq!(
            simulate(&step(n, n - 1), &[], &exact).ending,
            culprit(n - 2, n - 1)
        );
    }
}

#[test]
fn a_non_monotone_middle_follows_the_ends_direction_and_says_the_other_change() {
    // 100 ... 50 ... 80: the middle fell far and came back part way; the ends fell 20%.
    let levels = [100.0, 100.0, 100.0, 50.0, 50.0, 80.0, 80.0];
    let r = simulate(&levels, &[], &exact);
    assert_eq!(
        r.ending,
        Ending::Culprit {
            before: 2,
            after: 3,
            second: Some((3, 6))
        },
        "{r:?}"
    );
    // Two steps the same way: the larger is bisected, the other is said.
    let levels = [100.0, 100.0, 90.0, 90.0, 90.0, 50.0, 50.0];
    let r = simulate(&levels, &[], &exact);
    assert_eq!(
        r.ending,
        Ending::Culprit {
            before: 4,
            after: 5,
            second: Some((0, 3))
        },
        "{r:?}"
    );
}

#[test]
fn a_change_spread_over_builds_is_gradual() {
    // 2% a build over 12 builds: the ends differ by 24%, neighbours by nothing called.
    let levels: Vec<f64> = (0..12).map(|i| 100.0 * 0.98f64.powi(i)).collect();
    let r = simulate(&levels, &[], &exact);
    // Halves of a wide range both change (the way the ends did); a narrow one's do not.
    let Ending::Gradual { lo, hi, .. } = r.ending else {
        panic!("{r:?}")
    };
    assert!(hi - lo >= 2, "{lo} {hi}");
    assert_eq!(exact(&levels, &[], lo, hi).verdict, Verdict::Changed);
}

#[test]
fn failed_builds_are_skipped_and_bracket_the_change() {
    // The change is at 5; 4 and 5 fail: the culprit is the range 3..6.
    let r = simulate(&step(10, 5), &[4, 5], &exact);
    assert_eq!(r.ending, culprit(3, 6), "{r:?}");
    // A failed middle is passed over for its neighbour.
    let r = simulate(&step(10, 7), &[4], &exact);
    assert_eq!(r.ending, culprit(6, 7), "{r:?}");
    assert_eq!(r.rounds[4], 0);
    // An end that fails ends the bisect.
    let r = simulate(&step(5, 2), &[0], &exact);
    assert_eq!(r.ending, Ending::EndFailed { build: 0 });
}

#[test]
fn the_same_measurements_give_the_same_path() {
    // Replayed from scratch at every call: a resumed bisect asks for what it asked before.
    let a = simulate(&step(20, 13), &[], &slow);
    let b = simulate(&step(20, 13), &[], &slow);
    assert_eq!(a.batches, b.batches);
}
