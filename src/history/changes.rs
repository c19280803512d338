//! Change points of history series, with the runs either side of each (docs/history.md).

use serde::Serialize;

use super::Series;
use crate::analysis::changepoint::{self, ChangeKind, Options};

/// One change in one series.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Change {
    pub target: String,
    pub step: String,
    /// "" for a figure of the whole step.
    pub op: String,
    pub metric: String,
    pub unit: String,
    /// 0-based position in the series of the first run after the change.
    pub index: usize,
    /// Runs in the series.
    pub runs: usize,
    pub run_before: String,
    pub build_before: String,
    pub started_before: String,
    pub run_after: String,
    pub build_after: String,
    pub started_after: String,
    /// What changed: the level (mean) or the spread (noise).
    pub kind: ChangeKind,
    /// Means of the segments either side (up to the neighbouring changes).
    pub mean_before: f64,
    pub mean_after: f64,
    /// mean_after / mean_before - 1; null when the mean before is 0 (or the ratio overflows).
    pub relative: Option<f64>,
    /// The 95% interval of `relative`; null where `relative` is, or when it is not finite.
    pub relative_low: Option<f64>,
    pub relative_high: Option<f64>,
    /// Short-term sd of the segments either side (docs/history.md).
    pub sd_before: f64,
    pub sd_after: f64,
    /// How likely a split this clear is where nothing changed, under the method's
    /// assumptions: the smaller, the surer.
    pub p_value: f64,
    /// The host fingerprint differs between the runs either side: the change may be the
    /// machine's, not the build's.
    pub host_changed: bool,
    /// The config name differs between the runs either side.
    pub config_changed: bool,
}

/// The changes of the series searched, and the series whose search stopped at its budget.
#[derive(Debug, Default)]
pub struct Found {
    pub changes: Vec<Change>,
    /// The names ([`name`]) of the series whose search stopped at its budget of work
    /// (`changepoint::budget`): changes in the segments it did not reach are missing.
    pub cut_short: Vec<String>,
}

/// Change points of every series, dropping those whose relative change is below `min_change`
/// (a fraction; 0 keeps all).
pub fn find(series: &[Series], opts: &Options, min_change: f64) -> Found {
    let mut out = Vec::new();
    let mut cut_short = Vec::new();
    for s in series {
        let values: Vec<f64> = s.points.iter().map(|p| p.value).collect();
        let found = changepoint::detect(&values, opts);
        if !found.complete {
            cut_short.push(name(&s.target, &s.step, &s.op, &s.metric));
        }
        for cp in found.changes {
            let rel = cp.relative;
            // A change of spread is as large as the spread's change, not the level's.
            let size = match cp.kind {
                ChangeKind::Level => rel,
                ChangeKind::Spread => {
                    (cp.sd_before > 0.0).then(|| cp.sd_after / cp.sd_before - 1.0)
                }
            };
            if min_change > 0.0 && size.is_some_and(|r| r.abs() < min_change) {
                continue;
            }
            let (b, a) = (&s.points[cp.index - 1], &s.points[cp.index]);
            out.push(Change {
                target: s.target.clone(),
                step: s.step.clone(),
                op: s.op.clone(),
                metric: s.metric.clone(),
                unit: s.unit.clone(),
                index: cp.index,
                runs: s.points.len(),
                run_before: b.run_id.clone(),
                build_before: b.build.clone(),
                started_before: b.started_at.clone(),
                run_after: a.run_id.clone(),
                build_after: a.build.clone(),
                started_after: a.started_at.clone(),
                kind: cp.kind,
                mean_before: cp.mean_before,
                mean_after: cp.mean_after,
                relative: rel,
                relative_low: cp.relative_interval.map(|i| i.0),
                relative_high: cp.relative_interval.map(|i| i.1),
                sd_before: cp.sd_before,
                sd_after: cp.sd_after,
                p_value: cp.p_value,
                host_changed: b.host_fingerprint != a.host_fingerprint,
                config_changed: b.config_name != a.config_name,
            });
        }
    }
    Found {
        changes: out,
        cut_short,
    }
}

/// The size of a change as the outputs print it: "-20.1% (95%: -22.0% to -18.2%)" for a
/// level; for a spread, "spread ×3.1 (sd 2 → 6.2)" with the level's change after it.
pub fn size_text(c: &Change) -> String {
    let pct = |r: f64| format!("{:+.1}%", r * 100.0);
    let level = match (c.relative, c.relative_low, c.relative_high) {
        (Some(r), Some(lo), Some(hi)) => format!("{} (95%: {} to {})", pct(r), pct(lo), pct(hi)),
        (Some(r), ..) => pct(r),
        _ => "n/a".into(),
    };
    match c.kind {
        ChangeKind::Level => level,
        ChangeKind::Spread => {
            let times = if c.sd_before > 0.0 {
                format!("×{:.2}", c.sd_after / c.sd_before)
            } else {
                "from 0".into()
            };
            format!(
                "spread {times} (sd {} → {}), level {level}",
                crate::report::number::series_value(c.sd_before),
                crate::report::number::series_value(c.sd_after)
            )
        }
    }
}

/// A p-value as the outputs print it: three decimals, or "< 0.001".
pub fn p_text(p: f64) -> String {
    if p < 0.001 {
        "p < 0.001".into()
    } else {
        format!("p = {p:.3}")
    }
}

/// The series' name as the outputs print it: `target step op metric`, the op left out for a
/// figure of the whole step.
pub fn series_name(c: &Change) -> String {
    name(&c.target, &c.step, &c.op, &c.metric)
}

/// See [`series_name`].
pub fn name(target: &str, step: &str, op: &str, metric: &str) -> String {
    if op.is_empty() {
        format!("{target} {step} {metric}")
    } else {
        format!("{target} {step} {op} {metric}")
    }
}

/// The JSON of `changes --format json` and of a history report's changes.json: an array, with
/// a final newline.
pub fn to_json(changes: &[Change]) -> String {
    let mut s = serde_json::to_string_pretty(changes).expect("changes serialise");
    s.push('\n');
    s
}

/// CSV with a header; fields quoted where they need it.
pub fn to_csv(changes: &[Change]) -> String {
    let mut out = String::from(
        "target,step,op,metric,unit,index,runs,run_before,build_before,started_before,\
         run_after,build_after,started_after,kind,mean_before,mean_after,relative,\
         relative_low,relative_high,sd_before,sd_after,p_value,host_changed,config_changed\n",
    );
    for c in changes {
        let f = [
            c.target.clone(),
            c.step.clone(),
            c.op.clone(),
            c.metric.clone(),
            c.unit.clone(),
            c.index.to_string(),
            c.runs.to_string(),
            c.run_before.clone(),
            c.build_before.clone(),
            c.started_before.clone(),
            c.run_after.clone(),
            c.build_after.clone(),
            c.started_after.clone(),
            c.kind.as_str().to_string(),
            c.mean_before.to_string(),
            c.mean_after.to_string(),
            opt(c.relative),
            opt(c.relative_low),
            opt(c.relative_high),
            c.sd_before.to_string(),
            c.sd_after.to_string(),
            c.p_value.to_string(),
            c.host_changed.to_string(),
            c.config_changed.to_string(),
        ];
        let line: Vec<String> = f.iter().map(|x| csv_field(x)).collect();
        out.push_str(&line.join(","));
        out.push('\n');
    }
    out
}

fn opt(v: Option<f64>) -> String {
    v.map(|r| r.to_string()).unwrap_or_default()
}

use crate::untrusted::csv_field;

#[cfg(test)]
mod tests {
    use super::super::Point;
    use super::*;

    fn series(values: &[f64], builds: &[&str]) -> Series {
        Series {
            target: "t".into(),
            step: "l.i0".into(),
            op: "".into(),
            metric: "headline".into(),
            unit: "rows/s".into(),
            points: values
                .iter()
                .zip(builds)
                .enumerate()
                .map(|(i, (v, b))| Point {
                    run_id: format!("r{i}"),
                    build: b.to_string(),
                    config_name: "c".into(),
                    started_at: format!("2026-01-{:02}T00:00:00.000000000Z", i + 1),
                    host_fingerprint: "h".into(),
                    value: *v,
                })
                .collect(),
        }
    }

    #[test]
    fn a_change_names_the_builds_either_side() {
        let v: Vec<f64> = (0..20)
            .map(|i| if i < 10 { 100.0 } else { 80.0 } + (i % 3) as f64)
            .collect();
        let b: Vec<String> = (0..20).map(|i| format!("3.{i}")).collect();
        let b: Vec<&str> = b.iter().map(String::as_str).collect();
        let c = find(&[series(&v, &b)], &Options::default(), 0.0).changes;
        assert_eq!(c.len(), 1, "{c:?}");
        assert_eq!(c[0].index, 10);
        assert_eq!(
            (c[0].build_before.as_str(), c[0].build_after.as_str()),
            ("3.9", "3.10")
        );
        assert!(
            (c[0].relative.unwrap() + 0.198).abs() < 0.01,
            "{:?}",
            c[0].relative
        );
        assert!(!c[0].host_changed);
        // Below the smallest change asked for, it is dropped.
        assert!(find(&[series(&v, &b)], &Options::default(), 0.25)
            .changes
            .is_empty());
        let csv = to_csv(&c);
        assert_eq!(csv.lines().count(), 2);
        assert!(csv
            .lines()
            .nth(1)
            .unwrap()
            .starts_with("t,l.i0,,headline,rows/s,10,20,r9,3.9"));
    }
}
