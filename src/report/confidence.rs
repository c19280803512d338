//! Whether a relative throughput is a real difference: a 95% confidence interval for the
//! ratio target / base, and a verdict that calls a difference only when the whole interval is
//! beyond a threshold (criterion.rs's rule). Method and assumptions: docs/statistics.md.
//!
//! The interval comes from a bootstrap that respects how the numbers were made: rounds of a
//! campaign are resampled (the run-to-run variation a single run cannot show), and within a
//! round the per-second rates are resampled in blocks (a moving-block bootstrap: consecutive
//! seconds are correlated — checkpoints, compactions, stalls — so seconds are not drawn one by
//! one, which would understate the spread).

use rand_core::{Rng, SeedableRng};
use rand_xoshiro::Xoshiro256PlusPlus;

use super::model::{Better, Cell, Mark};
use super::rules::Thresholds;
use super::target::{StepView, TargetResult};

/// Resamples per interval: enough for stable 2.5% and 97.5% quantiles.
const RESAMPLES: usize = 2000;
/// Fewer full seconds than this in a round give no interval from that round's series.
pub(super) const MIN_SECONDS: usize = 3;
/// Rounds without series of their own give an interval from their headlines from this many.
const MIN_ROUNDS: usize = 3;

#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Interval {
    pub lo: f64,
    pub hi: f64,
    /// Seconds and rounds per side it rests on (the smaller of target and base).
    pub seconds: usize,
    pub rounds: usize,
    /// Latency intervals: operations per round it rests on (the smaller side); None for rates.
    pub ops: Option<u64>,
}

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

fn mean(v: &[f64]) -> f64 {
    v.iter().sum::<f64>() / v.len() as f64
}

/// One moving-block bootstrap replicate of the mean of `v`.
pub(super) fn block_mean(v: &[f64], rng: &mut Xoshiro256PlusPlus) -> f64 {
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
pub(super) fn replicate(rs: &[Vec<f64>], rng: &mut Xoshiro256PlusPlus) -> f64 {
    let k = rs.len();
    let mut sum = 0.0;
    for _ in 0..k {
        let r = &rs[(rng.next_u64() % k as u64) as usize];
        sum += block_mean(r, rng);
    }
    sum / k as f64
}

pub(super) fn quantile(sorted: &[f64], q: f64) -> f64 {
    let pos = q * (sorted.len() - 1) as f64;
    let (i, f) = (pos.floor() as usize, pos.fract());
    if i + 1 < sorted.len() {
        sorted[i] * (1.0 - f) + sorted[i + 1] * f
    } else {
        sorted[i]
    }
}

/// A generator seeded by the step (and whatever else names the comparison), so the same
/// results always give the same report.
pub(super) fn seeded(name: &str) -> Xoshiro256PlusPlus {
    let seed = name.bytes().fold(0x9e37_79b9_7f4a_7c15u64, |h, b| {
        (h ^ b as u64).wrapping_mul(0x100_0000_01b3)
    });
    Xoshiro256PlusPlus::seed_from_u64(seed)
}

/// The 95% interval of `ratio` (the report's target / base headline ratio) for one step; None
/// when either side has no per-second series long enough (l.x, very short steps, old results).
pub fn ratio_interval(
    t: &TargetResult,
    base: &TargetResult,
    step: &str,
    ratio: f64,
) -> Option<Interval> {
    let (tr, br) = (rounds(t, step)?, rounds(base, step)?);
    // Only a headline per round on both sides (l.x, steps too short for a series): three
    // values a side are too few to bootstrap, so the rounds get the t-interval the metrics do.
    if tr.iter().chain(&br).all(|r| r.len() == 1) {
        let heads = |rs: &[Vec<f64>]| rs.iter().map(|r| r[0]).collect::<Vec<f64>>();
        return rates_interval(&heads(&tr), &heads(&br), ratio);
    }
    let point = {
        let tm = mean(&tr.iter().map(|r| mean(r)).collect::<Vec<_>>());
        let bm = mean(&br.iter().map(|r| mean(r)).collect::<Vec<_>>());
        tm / bm
    };
    if !(point.is_finite() && point > 0.0 && ratio.is_finite()) {
        return None;
    }
    let mut rng = seeded(step);
    let mut f: Vec<f64> = (0..RESAMPLES)
        .map(|_| replicate(&tr, &mut rng) / replicate(&br, &mut rng) / point)
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
        seconds: secs(&tr).min(secs(&br)),
        rounds: tr.len().min(br.len()),
        ops: None,
    };
    // Drawing three rounds with replacement understates how far a fourth could land (the
    // spread of the drawn means is (k-1)/k of the rounds' and has no allowance for having
    // estimated it from k values): an A/A pair's l.i1 was called 1.30 faster, 1.09-1.81, from
    // rounds that Welch's t puts at 0.6-1.7. With rounds enough for it, the interval also
    // takes in Welch's t-interval over the rounds' mean rates.
    let level = |rs: &[Vec<f64>]| rs.iter().map(|r| mean(r)).collect::<Vec<f64>>();
    if let Some(w) = rates_interval(&level(&tr), &level(&br), ratio) {
        iv.lo = iv.lo.min(w.lo);
        iv.hi = iv.hi.max(w.hi);
    }
    Some(iv)
}

/// Student's t distribution's 97.5% point for 1 to 30 degrees of freedom (any statistics
/// table); beyond 30 a Cornish-Fisher expansion around the normal's 1.96 is within 0.001.
fn t975(df: f64) -> f64 {
    const T: [f64; 30] = [
        12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228, 2.201, 2.179, 2.160,
        2.145, 2.131, 2.120, 2.110, 2.101, 2.093, 2.086, 2.080, 2.074, 2.069, 2.064, 2.060, 2.056,
        2.052, 2.048, 2.045, 2.042,
    ];
    if df < 30.5 {
        // Fewer degrees of freedom, a wider interval: Welch's fractional df rounds down.
        return T[(df.floor() as usize).clamp(1, 30) - 1];
    }
    let z: f64 = 1.959964;
    z + (z.powi(3) + z) / (4.0 * df)
        + (5.0 * z.powi(5) + 16.0 * z.powi(3) + 3.0 * z) / (96.0 * df * df)
}

/// The 95% interval of `ratio` for a figure measured once per round (a metric per operation:
/// a ratio of counters over the whole step, with no per-second series to resample): Welch's
/// t-interval for the difference of the two sides' means over their rounds, as a ratio to the
/// base's mean. A bootstrap over three rounds would draw its replicates from three values only
/// and give intervals far too narrow (an A/A campaign had 14% of its metrics cells called);
/// the t quantile with the few degrees of freedom three rounds have is what keeps this one
/// honest. None below MIN_ROUNDS rounds on a side, or when the base's mean is 0 (a ratio to
/// nothing).
pub fn rounds_interval(t: &[f64], b: &[f64], ratio: f64) -> Option<Interval> {
    if !ratio.is_finite() {
        return None;
    }
    let (mt, mb, half) = welch(t, b)?;
    let point = mt / mb;
    // A base of nothing has no ratio to it.
    if !(mb != 0.0 && point.is_finite() && point >= 0.0) {
        return None;
    }
    let (lo, hi) = ((mt - mb - half) / mb + 1.0, (mt - mb + half) / mb + 1.0);
    Some(Interval {
        lo: take_in(lo, hi, ratio).0.max(0.0),
        hi: take_in(lo, hi, ratio).1,
        seconds: 1,
        rounds: t.len().min(b.len()),
        ops: None,
    })
}

/// An interval over the rounds' mean, widened to take in the table's ratio, a median over
/// the rounds (repeats are merged number by number as medians). With three rounds the two
/// can lie far apart, and moving the interval onto the median would misplace it: scaled by
/// median / mean it shrank with the ratio, and an A/A pair's writes per insert (rounds
/// 0.11, 0.13, 0.85 against 1.21, 0.64, 0.26: a median ratio of 0.20 and a mean ratio of
/// 0.52, 0-2.2) came out "better, 0-0.85". A call then needs both the rounds' mean and the
/// median beyond the threshold.
pub(super) fn take_in(lo: f64, hi: f64, ratio: f64) -> (f64, f64) {
    (lo.min(ratio), hi.max(ratio))
}

/// The 95% interval of `ratio` for a figure that is a rate or a time, positive in every round
/// (throughput, a latency percentile): Welch's t-interval for the difference of the two
/// sides' mean logarithms over their rounds, as the ratio exp(d), widened to take in the
/// table's ratio as `rounds_interval` is. Logarithms since such figures vary by a factor, not by
/// an amount: on a loaded host a base's three l.i0 rounds ran 8k, 88k and 81k rows/s while the
/// slowed target's ran 0.8k in each, and on the figures' own scale the base's spread put the
/// difference anywhere from nothing to twice the base's mean (0-1.24, "no difference"); on
/// their logarithms every round of one is ten times every round of the other. None below
/// MIN_ROUNDS rounds a side, or when a round measured nothing.
pub fn log_rounds_interval(t: &[f64], b: &[f64], ratio: f64) -> Option<Interval> {
    let logs = |v: &[f64]| -> Option<Vec<f64>> {
        v.iter()
            .map(|x| (x.is_finite() && *x > 0.0).then(|| x.ln()))
            .collect()
    };
    if !ratio.is_finite() {
        return None;
    }
    let (mt, mb, half) = welch(&logs(t)?, &logs(b)?)?;
    let d = mt - mb;
    let (lo, hi) = take_in((d - half).exp(), (d + half).exp(), ratio);
    Some(Interval {
        lo,
        hi,
        seconds: 1,
        rounds: t.len().min(b.len()),
        ops: None,
    })
}

/// Welch's t over the rounds' rates: on their logarithms, or on their own scale where a round
/// measured nothing.
fn rates_interval(t: &[f64], b: &[f64], ratio: f64) -> Option<Interval> {
    log_rounds_interval(t, b, ratio).or_else(|| rounds_interval(t, b, ratio))
}

/// Welch's t for two sides' figures per round: (target mean, base mean, half-width of the 95%
/// interval of their difference). None below MIN_ROUNDS rounds on a side.
fn welch(t: &[f64], b: &[f64]) -> Option<(f64, f64, f64)> {
    if t.len() < MIN_ROUNDS || b.len() < MIN_ROUNDS {
        return None;
    }
    let var = |v: &[f64]| {
        let m = mean(v);
        v.iter().map(|x| (x - m) * (x - m)).sum::<f64>() / (v.len() - 1) as f64
    };
    let (mt, mb) = (mean(t), mean(b));
    if !(mt.is_finite() && mb.is_finite()) {
        return None;
    }
    let (vt, vb) = (var(t) / t.len() as f64, var(b) / b.len() as f64);
    let se = (vt + vb).sqrt();
    if se == 0.0 {
        return Some((mt, mb, 0.0));
    }
    // Welch-Satterthwaite degrees of freedom.
    let df = (vt + vb).powi(2) / (vt * vt / (t.len() - 1) as f64 + vb * vb / (b.len() - 1) as f64);
    Some((mt, mb, t975(df) * se))
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
    use crate::results::series::{KindSeries, Series};

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

    #[test]
    fn per_round_figures_get_a_welch_interval_wide_with_three_rounds() {
        // Three rounds each, same figure in noise: the interval covers 1.
        let a = [100.0, 108.0, 95.0];
        let b = [104.0, 97.0, 110.0];
        let r = mean(&a) / mean(&b);
        let iv = rounds_interval(&a, &b, r).unwrap();
        assert!(iv.lo < 1.0 && iv.hi > 1.0, "{iv:?}");
        // Three rounds hold 2 degrees of freedom per side: far wider than the spread of the
        // rounds alone (the bootstrap's trouble).
        assert!(iv.hi - iv.lo > 0.15, "{iv:?}");
        // Twice the writes per row, consistently: the whole interval is above 1.05.
        let slow = [200.0, 212.0, 195.0];
        let iv = rounds_interval(&slow, &b, mean(&slow) / mean(&b)).unwrap();
        assert!(iv.lo > 1.05, "{iv:?}");
        // Identical figures (sizes): a point.
        let iv = rounds_interval(&[5.0; 3], &[5.0; 3], 1.0).unwrap();
        assert_eq!((iv.lo, iv.hi), (1.0, 1.0));
        // A target that read nothing in every round against a base that read a little in one.
        let iv = rounds_interval(&[0.0; 3], &[0.0, 0.0, 0.3], 0.0).unwrap();
        assert!(iv.lo == 0.0 && iv.hi > 1.0, "{iv:?}");
        // The median of the rounds (the table's ratio) far from their mean: the interval
        // takes in both rather than shrinking onto the median (an A/A pair's writes per insert).
        let (t, b) = ([0.106, 0.130, 0.847], [1.207, 0.641, 0.255]);
        let iv = rounds_interval(&t, &b, 0.130 / 0.641).unwrap();
        assert!(iv.lo <= 0.2 && iv.hi > 1.05, "{iv:?}");
        // A median of nothing against a base that read a little: no point-sized interval.
        let iv = rounds_interval(&[0.0, 0.0, 0.2], &[0.1, 0.2, 0.15], 0.0).unwrap();
        assert!(iv.lo == 0.0 && iv.hi > 1.0, "{iv:?}");
        // Too few rounds, or a base of nothing.
        assert!(rounds_interval(&a[..2], &b, r).is_none());
        assert!(rounds_interval(&a, &[0.0; 3], r).is_none());
        assert!((t975(2.0) - 4.303).abs() < 1e-9 && (t975(1000.0) - 1.962).abs() < 1e-3);
    }
}
