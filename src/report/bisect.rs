//! What `dbperf bisect` judges builds by, read from its batches' result directories, and its
//! page: the verdict between two builds on one step's figure (the headline's interval as the
//! report's relative tables compute it, or a metric's over rounds), and report.md/html of the
//! search's path (docs/bisect.md).

use std::collections::BTreeMap;
use std::path::Path;

use super::escape::{esc, md};
use super::number::sig;
use super::rules::Thresholds;
use crate::analysis::interval::Interval;
use crate::analysis::rounds::median;
use crate::analysis::welch::{self, MIN_ROUNDS};
use crate::error::bad_input;
use crate::results::bisect::{BisectFile, Verdict};
use crate::results::metric::{Better, Metric};

/// The figure of a step a bisect judges.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Figure {
    /// The step's headline (its throughput).
    Headline,
    /// A metric of the step's hardware cost that a report compares (`cpu_per_op`, ...).
    Metric(Metric),
}

impl Figure {
    /// `headline`, or a metric key a relative table judges; anything else is refused.
    pub fn parse(key: &str) -> anyhow::Result<Figure> {
        if key == "headline" {
            return Ok(Figure::Headline);
        }
        let judged = |m: &Metric| m.column().is_some_and(|c| c.better != Better::Neither);
        match Metric::from_key(key).filter(judged) {
            Some(m) => Ok(Figure::Metric(m)),
            None => {
                let keys: Vec<&str> = Metric::ALL
                    .iter()
                    .filter(|m| judged(m))
                    .map(|m| m.key())
                    .collect();
                bad_input(format!(
                    "--metric {key} is not a figure a bisect can judge; use headline or one of {}",
                    keys.join(", ")
                ))
            }
        }
    }

    pub fn key(self) -> &'static str {
        match self {
            Figure::Headline => "headline",
            Figure::Metric(m) => m.key(),
        }
    }
}

/// One build's rounds of the judged step, pooled over the batches that measured it.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Rounds {
    /// The figure of each round.
    pub values: Vec<f64>,
    /// The headline's per-second rates of each round (the headline alone for a short step).
    pub rates: Vec<Vec<f64>>,
    /// Whether any round had a series of its own to resample.
    pub long: bool,
}

impl Rounds {
    pub fn add(&mut self, o: Rounds) {
        self.values.extend(o.values);
        self.rates.extend(o.rates);
        self.long |= o.long;
    }

    pub fn median(&self) -> Option<f64> {
        (!self.values.is_empty()).then(|| median(self.values.clone()))
    }
}

/// Per target name, its rounds of `step` in the batch directory `dir` (a run directory with a
/// journal). A target whose every round failed the step has empty rounds.
pub fn read_batch(
    dir: &Path,
    step: &str,
    figure: Figure,
) -> anyhow::Result<BTreeMap<String, Rounds>> {
    let mut out: BTreeMap<String, Rounds> = BTreeMap::new();
    // A batch none of whose cells left a result (every build in it failed to start) has
    // nothing to read; the loader would call that bad input.
    let journal = crate::results::campaign::read_journal(dir)?;
    if !journal
        .cells
        .iter()
        .any(|c| crate::results::present(&dir.join(&c.id).join("run.json")))
    {
        return Ok(out);
    }
    let all = super::input::load(&[dir.to_path_buf()])?;
    for t in &all {
        let rounds: Vec<&super::target::TargetResult> = if t.repeats.is_empty() {
            vec![t]
        } else {
            t.repeats.iter().collect()
        };
        let r = out.entry(t.name().to_string()).or_default();
        for s in rounds
            .iter()
            .filter_map(|x| x.step(step).filter(|s| s.ok()))
        {
            let value = match figure {
                Figure::Headline => Some(s.headline.value),
                Figure::Metric(m) => s.metrics.get(m.key()).copied().flatten(),
            };
            let (Some(v), Some((rates, long))) = (
                value.filter(|v| v.is_finite()),
                super::confidence::step_rates(s),
            ) else {
                continue;
            };
            r.values.push(v);
            r.rates.push(rates);
            r.long |= long;
        }
    }
    Ok(out)
}

/// The verdict between two builds, with the ratio after / before and its interval.
#[derive(Debug, Clone, PartialEq)]
pub struct Judgement {
    pub verdict: Verdict,
    pub ratio: f64,
    pub interval: Option<Interval>,
    pub note: String,
}

/// Rounds each side needs before a verdict is more than unsure: those that carry run-to-run
/// variation into the interval (the report's rule, `confidence::CONFIRM_ROUNDS`).
const CONFIRM: usize = super::confidence::CONFIRM_ROUNDS;

/// `after` against `before`: changed when the whole 95% interval of the ratio is beyond a
/// threshold, the same when it is wholly within them, unsure otherwise or on too few rounds.
pub fn judge(
    before: &Rounds,
    after: &Rounds,
    figure: Figure,
    step: &str,
    th: Thresholds,
) -> Judgement {
    let ratio = match (before.median(), after.median()) {
        (Some(b), Some(a)) if b > 0.0 => a / b,
        _ => f64::NAN,
    };
    let unsure = |note: String| Judgement {
        verdict: Verdict::Unsure,
        ratio,
        interval: None,
        note,
    };
    if !ratio.is_finite() {
        return unsure("no ratio: a side has no value, or the earlier one is 0".into());
    }
    let iv = match figure {
        Figure::Headline
            if !before.long
                && !after.long
                && before.values.len().min(after.values.len()) < MIN_ROUNDS =>
        {
            None
        }
        Figure::Headline => {
            crate::analysis::bootstrap::ratio_interval(&after.rates, &before.rates, step, ratio)
        }
        Figure::Metric(_) => welch::rounds_interval(&after.values, &before.values, ratio),
    };
    let Some(iv) = iv else {
        return unsure(format!(
            "no interval yet: {} and {} rounds ({MIN_ROUNDS} a side give one to a figure measured once a round)",
            before.values.len(),
            after.values.len()
        ));
    };
    let rounds = before.values.len().min(after.values.len());
    let beyond = iv.hi <= th.low || iv.lo >= th.high;
    let within = iv.lo > th.low && iv.hi < th.high;
    let verdict = match (beyond, within) {
        _ if rounds < CONFIRM => Verdict::Unsure,
        (true, _) => Verdict::Changed,
        (_, true) => Verdict::Same,
        _ => Verdict::Unsure,
    };
    Judgement {
        verdict,
        ratio,
        note: format!(
            "95% interval {:.3}–{:.3} on {rounds} round{} a side",
            iv.lo,
            iv.hi,
            if rounds == 1 { "" } else { "s" }
        ),
        interval: Some(iv),
    }
}

/// Thresholds `pct` percent either way on the ratio's own scale: above 1 + pct/100, or below its
/// inverse (so 100 is "twice as fast or half as fast"); None: the report's verdict's, 0.95 and
/// 1.05.
pub fn thresholds(pct: Option<f64>) -> Thresholds {
    match pct {
        None => Thresholds::default(),
        Some(p) => Thresholds {
            low: 1.0 / (1.0 + p / 100.0),
            high: 1.0 + p / 100.0,
        },
    }
}

fn num(v: Option<f64>) -> String {
    v.filter(|x| x.is_finite()).map_or("–".into(), sig)
}

/// report.md: the ending, the builds measured, the path of verdicts, the batches.
pub fn markdown(f: &BisectFile, pair_report: Option<&str>) -> String {
    let mut o = String::new();
    o.push_str(&format!(
        "# dbperf bisect: {} … {}\n\n",
        md(f.targets.first().map_or("", String::as_str)),
        md(f.targets.last().map_or("", String::as_str))
    ));
    let outcome = f.outcome.map_or("running", |x| x.word());
    o.push_str(&format!("**Outcome: {outcome}.** {}\n\n", md(&f.sentence)));
    o.push_str(&format!(
        "Judged: step {}, figure {}; a ratio at or below {} or at or above {} is a change. \
         {} of {} builds measured, {} rounds in all.\n\n",
        md(&f.step),
        md(&f.metric),
        f.low,
        f.high,
        f.measured.len(),
        f.targets.len(),
        f.measured.iter().map(|m| m.rounds).sum::<u32>()
    ));
    if let Some(p) = pair_report {
        o.push_str(&format!(
            "The culprit pair compared step by step (relative table, hardware per operation, \
             counters, profiles when taken): [{p}/report.md]({p}/report.md).\n\n"
        ));
    }
    o.push_str("## Builds, in the list's order\n\n| build | rounds | median | min | max |\n|---|---|---|---|---|\n");
    for t in &f.targets {
        match f.measured.iter().find(|m| &m.target == t) {
            Some(m) if m.failed => o.push_str(&format!("| {} | failed, skipped | | | |\n", md(t))),
            Some(m) => o.push_str(&format!(
                "| {} | {} | {} | {} | {} |\n",
                md(t),
                m.rounds,
                num(m.value),
                num(m.min),
                num(m.max)
            )),
            None => o.push_str(&format!("| {} | not measured | | | |\n", md(t))),
        }
    }
    o.push_str("\n## The search's verdicts, in order\n\n| before | after | ratio | 95% interval | verdict | on |\n|---|---|---|---|---|---|\n");
    for j in &f.path {
        let iv = match (j.lo, j.hi) {
            (Some(l), Some(h)) => format!("{l:.3}–{h:.3}"),
            _ => "–".into(),
        };
        o.push_str(&format!(
            "| {} | {} | {} | {iv} | {} | {} |\n",
            md(&j.before),
            md(&j.after),
            j.ratio
                .filter(|r| r.is_finite())
                .map_or("–".into(), |r| format!("{r:.3}")),
            j.verdict.word(),
            md(&j.note)
        ));
    }
    o.push_str("\n## Measurements\n\n| batch | builds | rounds | why |\n|---|---|---|---|\n");
    for b in &f.batches {
        o.push_str(&format!(
            "| {} | {} | {} | {} |\n",
            md(&b.dir),
            md(&b.targets.join(", ")),
            b.rounds,
            md(&b.why)
        ));
    }
    o
}

/// report.html: the same as report.md, as a page.
pub fn html(f: &BisectFile, pair_report: Option<&str>) -> String {
    let mut body = String::new();
    for line in markdown(f, pair_report).lines() {
        let l = line.trim();
        if let Some(h) = l.strip_prefix("# ") {
            body.push_str(&format!("<h1>{}</h1>\n", esc(h)));
        } else if let Some(h) = l.strip_prefix("## ") {
            body.push_str(&format!("<h2>{}</h2>\n", esc(h)));
        } else if l.starts_with("|---") {
        } else if let Some(row) = l.strip_prefix('|') {
            let cells: Vec<String> = row
                .trim_end_matches('|')
                .split(" | ")
                .map(|c| format!("<td>{}</td>", esc(&unescape_md(c.trim()))))
                .collect();
            body.push_str(&format!("<tr>{}</tr>\n", cells.join("")));
        } else if !l.is_empty() {
            body.push_str(&format!("<p>{}</p>\n", esc(&unescape_md(l))));
        }
    }
    format!(
        "<!doctype html>\n<html><head><meta charset=\"utf-8\"><title>dbperf bisect</title>\n\
         <style>body{{font-family:sans-serif;max-width:70em;margin:1em auto}}td{{padding:2px 8px;\
         border-bottom:1px solid #ddd}}</style></head><body>\n{}</body></html>\n",
        wrap_tables(&body)
    )
}

/// Markdown's escapes and entities taken back, for text escaped again as HTML.
fn unescape_md(s: &str) -> String {
    s.replace("\\|", "|")
        .replace("**", "")
        .replace("&lt;", "<")
        .replace("&gt;", ">")
        .replace("&amp;", "&")
}

/// Runs of table rows wrapped in a table.
fn wrap_tables(body: &str) -> String {
    let mut o = String::new();
    let mut open = false;
    for line in body.lines() {
        let row = line.starts_with("<tr>");
        if row && !open {
            o.push_str("<table>\n");
        } else if !row && open {
            o.push_str("</table>\n");
        }
        open = row;
        o.push_str(line);
        o.push('\n');
    }
    if open {
        o.push_str("</table>\n");
    }
    o
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rounds(v: &[f64]) -> Rounds {
        Rounds {
            values: v.to_vec(),
            rates: v.iter().map(|x| vec![*x]).collect(),
            long: false,
        }
    }

    #[test]
    fn a_change_the_same_and_too_few_rounds() {
        let th = Thresholds::default();
        let a = rounds(&[1000.0, 1010.0, 990.0]);
        let slow = rounds(&[500.0, 505.0, 495.0]);
        let j = judge(&a, &slow, Figure::Headline, "l.i0", th);
        assert_eq!(j.verdict, Verdict::Changed, "{j:?}");
        assert!((j.ratio - 0.5).abs() < 0.01);
        let same = rounds(&[1001.0, 1009.0, 995.0]);
        assert_eq!(
            judge(&a, &same, Figure::Headline, "l.i0", th).verdict,
            Verdict::Same
        );
        // Two rounds of one value each: no interval, unsure however far apart.
        let j = judge(
            &rounds(&[1000.0, 1000.0]),
            &rounds(&[10.0, 10.0]),
            Figure::Headline,
            "s",
            th,
        );
        assert_eq!(j.verdict, Verdict::Unsure);
        assert!(j.note.starts_with("no interval yet"), "{}", j.note);
        // Rounds that spread across the threshold: unsure, not the same.
        let wide = rounds(&[800.0, 1200.0, 1000.0]);
        assert_eq!(
            judge(&a, &wide, Figure::Headline, "l.i0", th).verdict,
            Verdict::Unsure
        );
    }

    #[test]
    fn a_metric_is_judged_over_its_rounds_and_an_unknown_one_refused() {
        let f = Figure::parse("cpu_per_op").unwrap();
        let j = judge(
            &rounds(&[10.0, 10.2, 9.9]),
            &rounds(&[20.0, 20.5, 19.8]),
            f,
            "l.i0",
            Thresholds::default(),
        );
        assert_eq!(j.verdict, Verdict::Changed);
        for bad in ["nope", "cpups"] {
            let e = Figure::parse(bad).unwrap_err().to_string();
            assert!(e.contains("not a figure a bisect can judge"), "{e}");
        }
    }
}
