//! Whether a relative throughput is a real difference: a 95% confidence interval for the
//! ratio target / base, and a verdict that calls a difference only when the whole interval is
//! beyond a threshold (criterion.rs's rule). Method and assumptions: docs/statistics.md.
//!
//! The intervals are `analysis`' (`bootstrap` for throughput, `welch` for figures measured once
//! a round); this file picks from the results what each is computed over, and marks the cells.

use super::model::{Better, Cell, Mark};
use super::rules::Thresholds;
use super::target::{StepView, TargetResult};
use crate::analysis::bootstrap::{self, MIN_SECONDS};
use crate::analysis::interval::Interval;
use crate::analysis::welch::MIN_ROUNDS;

/// The per-second rates a step's headline is made of, per round: inserts for l.i*, queries
/// for qr/qp, events for sysbench (whose queries/s is events/s × a constant per test). Full
/// seconds only, and not the sysbench warm-up's.
fn seconds(s: &StepView) -> Option<Vec<f64>> {
    let series = s.series.as_ref()?;
    let kind = if s.name.starts_with("l.i") {
        "insert"
    } else if s.name.starts_with("qr") || s.name.starts_with("qp") {
        "query"
    } else {
        "event"
    };
    let k = series.kind(kind)?;
    let warm = series.kind("warmup");
    let v: Vec<f64> = (0..series.t.len())
        .filter(|i| series.full[*i])
        .filter(|i| warm.is_none_or(|w| w.rate[*i].is_nan() || w.rate[*i] <= 0.0))
        .map(|i| k.rate[i])
        .filter(|r| r.is_finite())
        .collect();
    (v.len() >= MIN_SECONDS).then_some(v)
}

fn rounds(t: &TargetResult, step: &str) -> Option<Vec<Vec<f64>>> {
    let runs: Vec<&TargetResult> = if t.repeats.is_empty() {
        vec![t]
    } else {
        t.repeats.iter().collect()
    };
    let mut long = false;
    let v: Vec<Vec<f64>> = runs
        .iter()
        .filter_map(|r| r.step(step).filter(|s| s.ok()))
        .filter_map(|s| match seconds(s) {
            Some(v) => {
                long = true;
                Some(v)
            }
            // A step too short for its own series (l.x, small sizes) is one value per round.
            None => Some(s.headline.value)
                .filter(|x| x.is_finite())
                .map(|x| vec![x]),
        })
        .collect();
    // Enough to resample: a series of seconds, or rounds enough to stand for the run-to-run
    // spread.
    (long || v.len() >= MIN_ROUNDS).then_some(v)
}

/// The 95% interval of `ratio` (the report's target / base headline ratio) for one step; None
/// when either side has no per-second series long enough (l.x, very short steps, old results).
pub fn ratio_interval(
    t: &TargetResult,
    base: &TargetResult,
    step: &str,
    ratio: f64,
) -> Option<Interval> {
    bootstrap::ratio_interval(&rounds(t, step)?, &rounds(base, step)?, step, ratio)
}

/// What a relative table compares, for the words of its verdicts: throughput is faster or
/// slower; a figure per operation (CPU, IO) is better or worse.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum Subject {
    #[default]
    Speed,
    Figure,
}

impl Subject {
    fn words(self) -> (&'static str, &'static str) {
        match self {
            Subject::Speed => ("faster", "slower"),
            Subject::Figure => ("better", "worse"),
        }
    }
}

/// How many relative cells were compared, and what was called.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Tally {
    pub subject: Subject,
    pub compared: usize,
    pub faster: usize,
    pub slower: usize,
    /// Compared on the threshold alone: no interval could be had.
    pub no_interval: usize,
}

impl Tally {
    pub fn add(&mut self, o: Tally) {
        self.compared += o.compared;
        self.faster += o.faster;
        self.slower += o.slower;
        self.no_interval += o.no_interval;
    }

    /// The sentence under a relative table (None when nothing was compared).
    pub fn sentence(&self) -> Option<String> {
        if self.compared == 0 {
            return None;
        }
        let called = self.faster + self.slower;
        let (up, down) = self.subject.words();
        let mut s = format!(
            "Verdicts: {called} of {} comparisons with the base called a difference ({} {up}, {} {down}); the rest are no difference within noise. A difference is called only when the whole 95% interval of the ratio is beyond a threshold (docs/statistics.md); the interval is on hover in the HTML and in the cell notes of report.json.",
            self.compared, self.faster, self.slower
        );
        if self.no_interval > 0 {
            s.push_str(&match self.subject {
                Subject::Speed => format!(
                    " {} had neither a per-second series (l.x, steps under {MIN_SECONDS} s) nor {MIN_ROUNDS} rounds to give an interval and are called on the threshold alone.",
                    self.no_interval
                ),
                Subject::Figure => format!(
                    " {} had no interval (an interval needs the figure from {MIN_ROUNDS} rounds on each side, `--repeats`) and are called on the threshold alone.",
                    self.no_interval
                ),
            });
        }
        Some(s)
    }
}

/// Applies the verdict to a relative throughput cell (already marked by the threshold alone).
pub fn judge(
    cell: &mut Cell,
    iv: Option<Interval>,
    better: Better,
    th: Thresholds,
    subject: Subject,
) -> Tally {
    let mut tally = Tally {
        subject,
        ..Tally::default()
    };
    let super::model::Value::Num(_) = cell.value else {
        return tally;
    };
    tally.compared = 1;
    let Some(iv) = iv else {
        tally.no_interval = 1;
        match cell.mark {
            Mark::Better => tally.faster = 1,
            Mark::Worse => tally.slower = 1,
            _ => {}
        }
        cell.note = Some("no interval: called on the threshold alone".into());
        return tally;
    };
    let (below, above) = (iv.hi <= th.low, iv.lo >= th.high);
    let mark = match better {
        Better::Higher if below => Mark::Worse,
        Better::Higher if above => Mark::Better,
        Better::Lower if above => Mark::Worse,
        Better::Lower if below => Mark::Better,
        _ => Mark::None,
    };
    match mark {
        Mark::Better => tally.faster = 1,
        Mark::Worse => tally.slower = 1,
        _ => {}
    }
    let (up, down) = subject.words();
    let verdict = match mark {
        Mark::Better => up,
        Mark::Worse => down,
        _ => "no difference within noise",
    };
    cell.mark = mark;
    let plural = if iv.rounds == 1 { "" } else { "s" };
    let basis = if let Some(n) = iv.ops {
        format!("{n} operations × {} round{plural}", iv.rounds)
    } else if iv.seconds < MIN_SECONDS {
        format!(
            "{} rounds' {}",
            iv.rounds,
            match subject {
                Subject::Speed => "headlines",
                Subject::Figure => "figures",
            }
        )
    } else {
        format!("{} s × {} round{plural}", iv.seconds, iv.rounds)
    };
    cell.note = Some(format!(
        "{verdict}: 95% interval {:.3}–{:.3} ({basis})",
        iv.lo, iv.hi
    ));
    tally
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analysis::welch::{log_rounds_interval, rounds_interval};
    use crate::results::series::{KindSeries, Series};
    use rand_core::{Rng, SeedableRng};
    use rand_xoshiro::Xoshiro256PlusPlus;

    fn target(name: &str, rounds: &[Vec<f64>]) -> TargetResult {
        let step = |r: &Vec<f64>| StepView {
            name: "l.i1".into(),
            status: crate::results::Status::Ok,
            error: None,
            warnings: vec![],
            duration_s: r.len() as f64,
            headline: crate::results::Headline {
                metric: "inserts_per_s".into(),
                value: crate::analysis::rounds::median(r.clone()),
                unit: "rows/s".into(),
            },
            parameters: crate::results::StepParameters {
                clients: 1,
                tables: vec!["pi1".into()],
                rows_per_commit: 50,
                planned_rows: 1000,
                rate_per_client: None,
                deletes: false,
                queries: None,
            },
            ops: Default::default(),
            rate_percentiles: Default::default(),
            sla: None,
            metrics: Default::default(),
            not_measured: vec![],
            rough_cpu: vec![],
            devices: vec![],
            group: None,
            reported: true,
            profiled: false,
            series: Some(Series {
                t: (1..=r.len()).map(|x| x as f64).collect(),
                dt: vec![1.0; r.len()],
                full: vec![true; r.len()],
                kinds: vec![KindSeries {
                    kind: "insert".into(),
                    rate: r.clone(),
                    max_ms: vec![1.0; r.len()],
                    p99_ms: vec![1.0; r.len()],
                }],
                target_rows_per_s: None,
            }),
        };
        let run = crate::report::input::fixtures::run_file(name);
        let one = |r: &Vec<f64>, round: Option<u32>| {
            let mut run = run.clone();
            run.campaign = round.map(|k| crate::results::CampaignCell {
                campaign: None,
                cell: format!("{name}/r{k}"),
                round: k,
                rounds: rounds.len() as u32,
                attempt: 1,
                shard: None,
            });
            TargetResult {
                dir: name.into(),
                run,
                steps: vec![step(r)],
                warnings: vec![],
                repeats: vec![],
            }
        };
        let mut t = one(&rounds[0], None);
        if rounds.len() > 1 {
            t.repeats = rounds
                .iter()
                .enumerate()
                .map(|(i, r)| one(r, Some(i as u32 + 1)))
                .collect();
        }
        t
    }

    /// Noise of about `pct` percent around `level`, from a fixed generator.
    fn noisy(level: f64, pct: f64, n: usize, seed: u64) -> Vec<f64> {
        let mut rng = Xoshiro256PlusPlus::seed_from_u64(seed);
        (0..n)
            .map(|_| {
                let u = (rng.next_u64() % 10_000) as f64 / 10_000.0 - 0.5;
                level * (1.0 + 2.0 * pct / 100.0 * u)
            })
            .collect()
    }

    #[test]
    fn a_real_difference_is_called_and_noise_is_not() {
        let th = Thresholds::default();
        let base = target("b", &[noisy(1000.0, 5.0, 60, 1)]);
        // 20% slower: the whole interval is below 0.95.
        let slow = target("s", &[noisy(800.0, 5.0, 60, 2)]);
        let iv = ratio_interval(&slow, &base, "l.i1", 0.8).unwrap();
        assert!(iv.lo < 0.8 && 0.8 < iv.hi && iv.hi < 0.95, "{iv:?}");
        let mut c = Cell::num(0.8, "0.80".into()).mark(Mark::Worse);
        let t = judge(&mut c, Some(iv), Better::Higher, th, Subject::Speed);
        assert_eq!((c.mark, t.slower), (Mark::Worse, 1));
        // The same level with heavy noise and few seconds: 0.94 is not called.
        let a = target("a", &[noisy(940.0, 40.0, 6, 3)]);
        let b = target("b", &[noisy(1000.0, 40.0, 6, 4)]);
        let iv = ratio_interval(&a, &b, "l.i1", 0.94).unwrap();
        assert!(iv.lo < 0.95, "{iv:?}");
        let mut c = Cell::num(0.94, "0.94".into()).mark(Mark::Worse);
        let t = judge(&mut c, Some(iv), Better::Higher, th, Subject::Speed);
        assert_eq!((c.mark, t.slower, t.compared), (Mark::None, 0, 1));
        assert!(c.note.unwrap().starts_with("no difference within noise"));
    }

    #[test]
    fn rounds_that_disagree_widen_the_interval() {
        let base = target("b", &[noisy(1000.0, 1.0, 30, 5)]);
        let steady = target("s", &[noisy(900.0, 1.0, 30, 6), noisy(900.0, 1.0, 30, 7)]);
        let apart = target("p", &[noisy(800.0, 1.0, 30, 8), noisy(1000.0, 1.0, 30, 9)]);
        let w = |t: &TargetResult| {
            let iv = ratio_interval(t, &base, "l.i1", 0.9).unwrap();
            assert_eq!(iv.rounds, 1, "the smaller side: the base has one round");
            iv.hi - iv.lo
        };
        assert!(w(&apart) > 5.0 * w(&steady), "{} {}", w(&apart), w(&steady));
    }

    /// The rounds of an A/A pair's l.i1 on the 2-core VM (per-second series around each
    /// round's rate): three rounds drawn with replacement called them 1.09-1.81 apart; with
    /// Welch's t over the rounds taken in, not.
    #[test]
    fn three_rounds_apart_by_chance_are_not_called() {
        let rounds = |levels: [f64; 3], seed: u64| -> Vec<Vec<f64>> {
            levels
                .iter()
                .enumerate()
                .map(|(i, l)| noisy(*l, 10.0, 6, seed + i as u64))
                .collect()
        };
        let base = target("a", &rounds([14826.0, 17872.0, 20946.0], 10));
        let same = target("c", &rounds([21687.0, 27145.0, 23301.0], 20));
        let ratio = 23301.0 / 17872.0;
        let iv = ratio_interval(&same, &base, "l.i1", ratio).unwrap();
        assert!(iv.lo < 1.0 && iv.hi > ratio, "{iv:?}");
        assert_eq!((iv.rounds, iv.seconds), (3, 6));
        // Half the rate in every round is still called.
        let slow = target("s", &rounds([7142.0, 6922.0, 6325.0], 30));
        let iv = ratio_interval(&slow, &base, "l.i1", 6922.0 / 17872.0).unwrap();
        assert!(iv.hi < 0.95, "{iv:?}");
    }

    /// A loaded host's PostgreSQL l.i0 (bench/calibration.sh): every round of the slowed
    /// target ten times slower than every round of the base, whose rounds spread tenfold.
    #[test]
    fn headlines_that_differ_by_a_factor_in_every_round_are_called() {
        let heads = |v: [f64; 3]| v.iter().map(|x| vec![*x]).collect::<Vec<_>>();
        let base = target("a", &heads([8110.0, 88255.0, 81000.0]));
        let slow = target("s", &heads([800.0, 850.0, 820.0]));
        let ratio = 820.0 / 81000.0;
        let iv = ratio_interval(&slow, &base, "l.i1", ratio).unwrap();
        assert!(iv.hi < 0.95 && iv.lo <= ratio, "{iv:?}");
        // On the figures' own scale the base's spread hides it.
        let raw = rounds_interval(&[800.0, 850.0, 820.0], &[8110.0, 88255.0, 81000.0], ratio);
        assert!(raw.unwrap().hi > 1.0, "{raw:?}");
        // A round that measured nothing: the figures' own scale.
        let iv = log_rounds_interval(&[0.0, 1.0, 2.0], &[1.0, 1.0, 1.0], 1.0);
        assert!(iv.is_none());
    }

    #[test]
    fn no_series_no_interval() {
        let mut a = target("a", &[vec![1.0; 10]]);
        a.steps[0].series = None;
        let b = target("b", &[vec![1.0; 10]]);
        assert!(ratio_interval(&a, &b, "l.i1", 1.0).is_none());
        let short = target("c", &[vec![1.0; 2]]);
        assert!(ratio_interval(&short, &b, "l.i1", 1.0).is_none());
    }
}
