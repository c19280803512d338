//! Whether a relative throughput is a real difference: a 95% confidence interval for the
//! ratio target / base, and a verdict that calls a difference only when the whole interval is
//! beyond a threshold (criterion.rs's rule) and the interval carries run-to-run variation (two
//! rounds or more a side); beyond a threshold without that it is unconfirmed, not a finding.
//! Method and assumptions: docs/statistics.md.
//!
//! The intervals are `analysis`' (`bootstrap` for throughput, `welch` for figures measured once
//! a round); this file picks from the results what each is computed over, and marks the cells.

use super::model::{Better, Cell, Mark, Value};
use super::rules::Thresholds;
use super::target::{StepView, TargetResult};
use crate::analysis::bootstrap::{self, MIN_SECONDS};
use crate::analysis::interval::Interval;
use crate::analysis::welch::MIN_ROUNDS;

/// The per-second rates a step's headline is made of, per round: inserts for l.i*, queries
/// for qr/qp, committed New-Orders for a TPC-C run step (its NOPM is their rate × 60), events
/// for sysbench (whose queries/s is events/s × a constant per test). Full seconds only, and not
/// the warm-up's.
fn seconds(s: &StepView) -> Option<Vec<f64>> {
    let series = s.series.as_ref()?;
    let kind = super::suite::headline_kind(s)?;
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

/// What one round of a step gives the interval of its headline: its full seconds' rates (and
/// true), or for a step too short for its own series (l.x, small sizes) its headline alone.
pub(super) fn step_rates(s: &StepView) -> Option<(Vec<f64>, bool)> {
    match seconds(s) {
        Some(v) => Some((v, true)),
        None => Some(s.headline.value)
            .filter(|x| x.is_finite())
            .map(|x| (vec![x], false)),
    }
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
        .filter_map(|s| {
            let (v, of_seconds) = step_rates(s)?;
            long |= of_seconds;
            Some(v)
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

/// Rounds on each side an interval must rest on for its verdict to be a finding. From two the
/// rounds are drawn too, so the run-to-run spread is in the interval (understated with two, see
/// docs/statistics.md); with one it is the spread of one run's seconds or operations, which
/// leaves that out: on a VM two runs of one build differ by ±10%, far beyond such an interval.
pub const CONFIRM_ROUNDS: usize = 2;

/// How many relative cells were compared, and what was called.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Tally {
    pub subject: Subject,
    pub compared: usize,
    pub faster: usize,
    pub slower: usize,
    /// Beyond a threshold but not called: the interval rests on one round on a side, or there
    /// is none, so nothing measured how far another run could land.
    pub unconfirmed_faster: usize,
    pub unconfirmed_slower: usize,
    /// Compared on an interval of one round on a side: the seconds within one run.
    pub one_round: usize,
    /// Compared without an interval: on the threshold alone.
    pub no_interval: usize,
}

impl Tally {
    pub fn add(&mut self, o: Tally) {
        self.compared += o.compared;
        self.faster += o.faster;
        self.slower += o.slower;
        self.unconfirmed_faster += o.unconfirmed_faster;
        self.unconfirmed_slower += o.unconfirmed_slower;
        self.one_round += o.one_round;
        self.no_interval += o.no_interval;
    }

    fn count(&mut self, m: Mark) {
        match m {
            Mark::Better => self.faster += 1,
            Mark::Worse => self.slower += 1,
            Mark::UnconfirmedBetter => self.unconfirmed_faster += 1,
            Mark::UnconfirmedWorse => self.unconfirmed_slower += 1,
            _ => {}
        }
    }

    /// "; 9 unconfirmed (2 faster, 7 slower)", or nothing when there are none.
    pub fn unconfirmed_clause(&self) -> String {
        let n = self.unconfirmed_faster + self.unconfirmed_slower;
        if n == 0 {
            return String::new();
        }
        let (up, down) = self.subject.words();
        format!(
            "; {n} unconfirmed ({} {up}, {} {down})",
            self.unconfirmed_faster, self.unconfirmed_slower
        )
    }

    /// What one round on a side means for the verdicts (None when no cell rests on one).
    pub fn one_round_sentence(&self) -> Option<String> {
        (self.one_round > 0).then(|| format!(
            " {} rest on one round on a side: their interval is of the spread within that one run and leaves out run-to-run variation, so beyond a threshold they are unconfirmed, not called; run with `--repeats {MIN_ROUNDS}` to confirm or dismiss them.",
            self.one_round
        ))
    }

    /// The sentence under a relative table (None when nothing was compared).
    pub fn sentence(&self) -> Option<String> {
        if self.compared == 0 {
            return None;
        }
        let called = self.faster + self.slower;
        let (up, down) = self.subject.words();
        let mut s = format!(
            "Verdicts: {called} of {} comparisons with the base called a difference ({} {up}, {} {down}){}; the rest are no difference within noise. A difference is called only when the whole 95% interval of the ratio is beyond a threshold and rests on {CONFIRM_ROUNDS} rounds or more on each side (docs/statistics.md); the interval is on hover in the HTML and in the cell notes of report.json.",
            self.compared,
            self.faster,
            self.slower,
            self.unconfirmed_clause()
        );
        if let Some(o) = self.one_round_sentence() {
            s.push_str(&o);
        }
        if self.no_interval > 0 {
            s.push_str(&match self.subject {
                Subject::Speed => format!(
                    " {} had neither a per-second series (l.x, steps under {MIN_SECONDS} s) nor {MIN_ROUNDS} rounds to give an interval: beyond a threshold they are unconfirmed, not called.",
                    self.no_interval
                ),
                Subject::Figure => format!(
                    " {} had no interval (one needs the figure from {MIN_ROUNDS} rounds on each side, `--repeats {MIN_ROUNDS}`, and a base that is not 0): beyond a threshold they are unconfirmed, not called.",
                    self.no_interval
                ),
            });
        }
        Some(s)
    }
}

/// The mark the whole interval earns: beyond a threshold, or none.
fn mark_of(iv: &Interval, better: Better, th: Thresholds) -> Mark {
    let (below, above) = (iv.hi <= th.low, iv.lo >= th.high);
    match better {
        Better::Higher if below => Mark::Worse,
        Better::Higher if above => Mark::Better,
        Better::Lower if above => Mark::Worse,
        Better::Lower if below => Mark::Better,
        _ => Mark::None,
    }
}

/// The same direction, not called: nothing measured the run-to-run spread behind it.
fn unconfirmed(m: Mark) -> Mark {
    match m {
        Mark::Worse => Mark::UnconfirmedWorse,
        Mark::Better => Mark::UnconfirmedBetter,
        other => other,
    }
}

/// The word for a mark's direction ("slower", "better", ...).
fn direction(m: Mark, subject: Subject) -> &'static str {
    let (up, down) = subject.words();
    match m {
        Mark::Better | Mark::UnconfirmedBetter => up,
        _ => down,
    }
}

/// What an interval rests on, for its note: "30 s × 1 round", "3 rounds' headlines", ...
fn basis(iv: &Interval, subject: Subject) -> String {
    let plural = if iv.rounds == 1 { "" } else { "s" };
    if let Some(n) = iv.ops {
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
    }
}

/// A cell with no interval: beyond the threshold it is unconfirmed, whatever the rounds.
fn judge_alone(cell: &mut Cell, subject: Subject) -> Mark {
    let mark = unconfirmed(cell.mark);
    cell.note = Some(match mark {
        Mark::UnconfirmedWorse | Mark::UnconfirmedBetter => format!(
            "no interval: {} on the threshold alone, unconfirmed",
            direction(mark, subject)
        ),
        _ => "no interval: called on the threshold alone".into(),
    });
    mark
}

/// A cell with an interval: called when it is beyond a threshold and rests on rounds enough;
/// beyond a threshold within one round, unconfirmed.
fn judge_interval(
    cell: &mut Cell,
    iv: &Interval,
    better: Better,
    th: Thresholds,
    subject: Subject,
) -> Mark {
    let mark = mark_of(iv, better, th);
    let range = format!(
        "95% interval {:.3}–{:.3} ({})",
        iv.lo,
        iv.hi,
        basis(iv, subject)
    );
    if mark == Mark::None {
        cell.note = Some(format!("no difference within noise: {range}"));
        return mark;
    }
    if iv.rounds < CONFIRM_ROUNDS {
        cell.note = Some(format!(
            "unconfirmed, {} within this run: {range}; one round on a side leaves out run-to-run variation: run with --repeats {MIN_ROUNDS} to confirm",
            direction(mark, subject)
        ));
        return unconfirmed(mark);
    }
    cell.note = Some(format!("{}: {range}", direction(mark, subject)));
    mark
}

/// The verdict on a relative throughput cell of `t` against `base` at `step`: `judge` on the
/// interval of its ratio.
pub fn judge_speed(
    cell: &mut Cell,
    t: &TargetResult,
    base: &TargetResult,
    step: &str,
    th: Thresholds,
) -> Tally {
    let iv = match cell.value {
        Value::Num(x) => ratio_interval(t, base, step, x),
        _ => None,
    };
    judge(cell, iv, Better::Higher, th, Subject::Speed)
}

/// Applies the verdict to a relative cell (already marked by the threshold alone): a
/// difference is called only when an interval that carries run-to-run variation clears the
/// threshold; otherwise a cell beyond it is unconfirmed.
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
    // `inf` (only the base is 0) is a ratio to nothing: no interval, but compared.
    let number = match cell.value {
        Value::Num(_) => true,
        Value::Inf => false,
        Value::Missing => return tally,
    };
    tally.compared = 1;
    let mark = match iv.filter(|_| number) {
        Some(iv) => {
            tally.one_round = usize::from(iv.rounds < CONFIRM_ROUNDS);
            judge_interval(cell, &iv, better, th, subject)
        }
        None => {
            tally.no_interval = 1;
            judge_alone(cell, subject)
        }
    };
    cell.mark = mark;
    tally.count(mark);
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
            suite: crate::suites::Suite::Ibench,
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
            },
            ops: Default::default(),
            rate_percentiles: Default::default(),
            metrics: Default::default(),
            not_measured: vec![],
            rough_cpu: vec![],
            devices: vec![],
            group: None,
            profiled: false,
            payload: None,
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
            residency: Default::default(),
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

    /// `k` rounds of `n` seconds of noise around `level`, each from its own seed.
    fn rounds_of(level: f64, pct: f64, n: usize, seed: u64, k: u64) -> Vec<Vec<f64>> {
        (0..k)
            .map(|r| noisy(level, pct, n, seed * 10 + r))
            .collect()
    }

    #[test]
    fn a_real_difference_is_called_and_noise_is_not() {
        let th = Thresholds::default();
        let base = target("b", &rounds_of(1000.0, 5.0, 60, 1, 3));
        // 20% slower in every round: the whole interval is below 0.95.
        let slow = target("s", &rounds_of(800.0, 5.0, 60, 2, 3));
        let iv = ratio_interval(&slow, &base, "l.i1", 0.8).unwrap();
        assert!(iv.lo < 0.8 && 0.8 < iv.hi && iv.hi < 0.95, "{iv:?}");
        let mut c = Cell::num(0.8, "0.80".into()).mark(Mark::Worse);
        let t = judge(&mut c, Some(iv), Better::Higher, th, Subject::Speed);
        assert_eq!((c.mark, t.slower, t.one_round), (Mark::Worse, 1, 0));
        assert!(c.note.unwrap().starts_with("slower: 95% interval"));
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

    /// The campaign: one round each, 30 s steps. The seconds of one run put 0.8 well
    /// clear of 0.95, but two runs of one build on a VM differ by ±10%: beyond the threshold
    /// within the run, unconfirmed, and the sentence says to run repeats.
    #[test]
    fn one_round_beyond_the_threshold_is_unconfirmed_and_three_are_called() {
        let th = Thresholds::default();
        let base = target("b", &[noisy(1000.0, 5.0, 30, 1)]);
        let slow = target("s", &[noisy(800.0, 5.0, 30, 2)]);
        let iv = ratio_interval(&slow, &base, "l.i1", 0.8).unwrap();
        assert!(iv.hi < 0.95 && iv.rounds == 1, "{iv:?}");
        let mut c = Cell::num(0.8, "0.80".into()).mark(Mark::Worse);
        let t = judge(&mut c, Some(iv), Better::Higher, th, Subject::Speed);
        assert_eq!(c.mark, Mark::UnconfirmedWorse);
        assert_eq!(
            (t.slower, t.unconfirmed_slower, t.one_round, t.compared),
            (0, 1, 1, 1)
        );
        let note = c.note.unwrap();
        assert!(
            note.starts_with("unconfirmed, slower within this run: 95% interval")
                && note.contains("(30 s × 1 round)")
                && note.ends_with("run with --repeats 3 to confirm"),
            "{note}"
        );
        let s = t.sentence().unwrap();
        assert!(
            s.starts_with("Verdicts: 0 of 1 comparisons with the base called a difference (0 faster, 0 slower); 1 unconfirmed (0 faster, 1 slower); the rest")
                && s.contains("1 rest on one round on a side")
                && s.contains("`--repeats 3`"),
            "{s}"
        );
        // Faster within one round: unconfirmed the other way.
        let fast = target("f", &[noisy(1200.0, 5.0, 30, 3)]);
        let iv = ratio_interval(&fast, &base, "l.i1", 1.2).unwrap();
        let mut c = Cell::num(1.2, "1.20".into()).mark(Mark::Better);
        let t = judge(&mut c, Some(iv), Better::Higher, th, Subject::Speed);
        assert_eq!((c.mark, t.unconfirmed_faster), (Mark::UnconfirmedBetter, 1));
        // The same difference in each of three rounds a side is a finding.
        let base = target("b", &rounds_of(1000.0, 5.0, 30, 1, 3));
        let slow = target("s", &rounds_of(800.0, 5.0, 30, 2, 3));
        let iv = ratio_interval(&slow, &base, "l.i1", 0.8).unwrap();
        let mut c = Cell::num(0.8, "0.80".into()).mark(Mark::Worse);
        let t = judge(&mut c, Some(iv), Better::Higher, th, Subject::Speed);
        assert_eq!(
            (c.mark, t.slower, t.unconfirmed_slower),
            (Mark::Worse, 1, 0)
        );
    }

    /// Without an interval (l.x in one round, a figure per operation with fewer than three
    /// rounds, `inf`) a cell beyond the threshold is unconfirmed too; within it, plain.
    #[test]
    fn beyond_the_threshold_without_an_interval_is_unconfirmed() {
        let th = Thresholds::default();
        let mut c = Cell::num(1.30, "1.30".into()).mark(Mark::Worse);
        let t = judge(&mut c, None, Better::Lower, th, Subject::Figure);
        assert_eq!(c.mark, Mark::UnconfirmedWorse);
        assert_eq!(
            c.note.as_deref(),
            Some("no interval: worse on the threshold alone, unconfirmed")
        );
        assert_eq!((t.no_interval, t.unconfirmed_slower, t.slower), (1, 1, 0));
        assert!(t
            .sentence()
            .unwrap()
            .contains("beyond a threshold they are unconfirmed"));
        let mut c = Cell::num(1.01, "1.01".into());
        judge(&mut c, None, Better::Lower, th, Subject::Figure);
        assert_eq!(c.mark, Mark::None);
        let mut c = crate::report::rules::rel_cell(Some(2.0), Some(0.0), Better::Lower, th);
        assert_eq!((c.value, c.mark), (Value::Inf, Mark::Worse));
        let t = judge(&mut c, None, Better::Lower, th, Subject::Figure);
        assert_eq!((c.mark, t.compared), (Mark::UnconfirmedWorse, 1));
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
