//! The original Insert Benchmark report's rules, in one place: relative values (2 decimals, `1`
//! when both are 0, `inf` when only the base is 0), the quartile colouring of absolute tables with
//! SLA grey, and the response-time shading (spec §3.3, §4.2, §4.3). Number formats: `number`.

use super::model::{Better, Cell, Mark, Value};

/// Highlight thresholds of relative tables (`--thresholds`).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Thresholds {
    /// A ratio at or below this is highlighted (worse for higher-is-better columns).
    pub low: f64,
    /// A ratio at or above this is highlighted.
    pub high: f64,
}

impl Default for Thresholds {
    fn default() -> Self {
        Thresholds {
            low: 0.95,
            high: 1.05,
        }
    }
}

/// A value relative to the base value.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Rel {
    /// value / base, rounded to 2 decimals.
    Ratio(f64),
    /// Both are 0.
    One,
    /// Only the base is 0.
    Inf,
    /// Either is missing.
    Na,
}

pub fn relative(v: Option<f64>, base: Option<f64>) -> Rel {
    match (v, base) {
        (Some(v), Some(b)) if v.is_finite() && b.is_finite() => {
            if b == 0.0 {
                if v == 0.0 {
                    Rel::One
                } else {
                    Rel::Inf
                }
            } else {
                Rel::Ratio(round2(v / b))
            }
        }
        _ => Rel::Na,
    }
}

pub fn round2(x: f64) -> f64 {
    (x * 100.0).round() / 100.0
}

/// The cell of a relative table. The displayed (rounded) ratio is what is compared with the
/// thresholds, so a cell reading 0.95 is highlighted exactly when the threshold is 0.95.
pub fn rel_cell(abs: Option<f64>, base_abs: Option<f64>, better: Better, t: Thresholds) -> Cell {
    let rel = relative(abs, base_abs);
    let (low, high) = match rel {
        Rel::Ratio(r) => (r <= t.low, r >= t.high),
        Rel::Inf => (false, true),
        _ => (false, false),
    };
    let mark = match better {
        Better::Higher if low => Mark::Worse,
        Better::Higher if high => Mark::Better,
        Better::Lower if high => Mark::Worse,
        Better::Lower if low => Mark::Better,
        _ => Mark::None,
    };
    let mut c = match rel {
        Rel::Ratio(r) => Cell::num(r, format!("{r:.2}")),
        Rel::One => Cell::num(1.0, "1".into()),
        Rel::Inf => Cell {
            value: Value::Inf,
            ..Cell::text("inf")
        },
        Rel::Na => Cell::gap(if abs.is_none() {
            "no value for this target"
        } else {
            "no value for the base"
        }),
    };
    if c.mark != Mark::Gap {
        c.mark = mark;
    }
    c.abs = abs;
    c
}

/// Quartile colouring of a column of absolute values (spec §4.2): min over all values, max over
/// the values whose SLA was met; q = 0.25 × (max − min), floored for throughput as the original
/// (whose values are integers); ≤ min + q is the bottom quarter unless min ≥ 0.8 × max, ≥ max − q
/// the top quarter. Bottom takes precedence over SLA grey, which takes precedence over top.
/// `higher_is_better` false swaps the meaning (latency: the top quarter is the worst).
pub fn quartiles(
    values: &[Option<f64>],
    sla_met: &[bool],
    floor_q: bool,
    higher_is_better: bool,
) -> Vec<Mark> {
    let present: Vec<f64> = values.iter().flatten().copied().collect();
    if present.len() < 2 {
        return vec![Mark::None; values.len()];
    }
    let min = present.iter().copied().fold(f64::INFINITY, f64::min);
    let max_ok = values
        .iter()
        .zip(sla_met)
        .filter(|(_, ok)| **ok)
        .filter_map(|(v, _)| *v)
        .fold(f64::NEG_INFINITY, f64::max);
    let (top, bottom) = if max_ok.is_finite() {
        let gap = max_ok - min;
        let q = if floor_q {
            (0.25 * gap).floor()
        } else {
            0.25 * gap
        };
        let bottom = (min < 0.8 * max_ok).then_some(min + q);
        (Some(max_ok - q), bottom)
    } else {
        (None, None)
    };
    values
        .iter()
        .zip(sla_met)
        .map(|(v, ok)| {
            let Some(v) = v else { return Mark::None };
            let (good, bad) = if higher_is_better {
                (Mark::Best, Mark::Worst)
            } else {
                (Mark::Worst, Mark::Best)
            };
            if bottom.is_some_and(|b| *v <= b) {
                bad
            } else if !ok {
                Mark::SlaMissed
            } else if top.is_some_and(|t| *v >= t) {
                good
            } else {
                Mark::None
            }
        })
        .collect()
}

/// Response-time shading: 21 grey levels, index = round(pct / 5) (spec §4.3).
pub fn shade(pct: f64) -> u8 {
    (pct / 5.0).round().clamp(0.0, 20.0) as u8
}

/// Line colours: Tableau 10 for up to ten targets, then evenly spread hues with dash patterns so
/// fifty targets stay tellable apart.
pub fn palette(i: usize, n: usize) -> (String, String) {
    const T10: [&str; 10] = [
        "#4e79a7", "#f28e2b", "#e15759", "#76b7b2", "#59a14f", "#edc948", "#b07aa1", "#ff9da7",
        "#9c755f", "#bab0ac",
    ];
    if n <= T10.len() {
        return (T10[i].into(), String::new());
    }
    let hue = (i as f64 * 137.508) % 360.0;
    const DASHES: [&str; 4] = ["", "6 3", "2 2", "8 3 2 3"];
    (
        format!("hsl({hue:.0},65%,42%)"),
        DASHES[(i / 10) % DASHES.len()].into(),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    const T: Thresholds = Thresholds {
        low: 0.95,
        high: 1.05,
    };

    #[test]
    fn relative_rules_of_the_original() {
        assert_eq!(relative(Some(0.0), Some(0.0)), Rel::One);
        assert_eq!(relative(Some(3.0), Some(0.0)), Rel::Inf);
        assert_eq!(relative(None, Some(1.0)), Rel::Na);
        assert_eq!(relative(Some(1.0), None), Rel::Na);
        assert_eq!(relative(Some(2.0), Some(3.0)), Rel::Ratio(0.67));
        assert_eq!(rel_cell(Some(0.0), Some(0.0), Better::Higher, T).text, "1");
        assert_eq!(
            rel_cell(Some(5.0), Some(0.0), Better::Higher, T).text,
            "inf"
        );
        assert_eq!(
            rel_cell(Some(5.0), Some(5.0), Better::Higher, T).text,
            "1.00"
        );
        let gap = rel_cell(None, Some(5.0), Better::Higher, T);
        assert_eq!((gap.text.as_str(), gap.mark), ("—", Mark::Gap));
    }

    #[test]
    fn relative_highlight_uses_the_shown_ratio_and_the_column_direction() {
        // 0.954 shows as 0.95: highlighted, as a reader would expect from the threshold.
        let c = rel_cell(Some(95.4), Some(100.0), Better::Higher, T);
        assert_eq!((c.text.as_str(), c.mark), ("0.95", Mark::Worse));
        let c = rel_cell(Some(95.6), Some(100.0), Better::Higher, T);
        assert_eq!((c.text.as_str(), c.mark), ("0.96", Mark::None));
        let c = rel_cell(Some(105.0), Some(100.0), Better::Higher, T);
        assert_eq!(c.mark, Mark::Better);
        // CPU per operation: more is worse.
        let c = rel_cell(Some(105.0), Some(100.0), Better::Lower, T);
        assert_eq!(c.mark, Mark::Worse);
        let c = rel_cell(Some(90.0), Some(100.0), Better::Lower, T);
        assert_eq!(c.mark, Mark::Better);
        let c = rel_cell(Some(90.0), Some(100.0), Better::Neither, T);
        assert_eq!(c.mark, Mark::None);
        assert_eq!(c.abs, Some(90.0));
        let wide = Thresholds {
            low: 0.8,
            high: 1.2,
        };
        assert_eq!(
            rel_cell(Some(90.0), Some(100.0), Better::Higher, wide).mark,
            Mark::None
        );
    }

    #[test]
    fn quartiles_follow_chart_all_sh() {
        // min 100, max 200: q = 25, top 175, bottom 125.
        let v = [Some(100.0), Some(150.0), Some(180.0), Some(200.0), None];
        let m = quartiles(&v, &[true; 5], true, true);
        assert_eq!(
            m,
            [Mark::Worst, Mark::None, Mark::Best, Mark::Best, Mark::None]
        );
        // The SLA-missing 200 is excluded from the max (top becomes 180 - 20 = 160) and grey.
        let m = quartiles(&v, &[true, true, true, false, true], true, true);
        assert_eq!(
            m,
            [
                Mark::Worst,
                Mark::None,
                Mark::Best,
                Mark::SlaMissed,
                Mark::None
            ]
        );
        // Red takes precedence over grey.
        let m = quartiles(&v, &[false, true, true, true, true], true, true);
        assert_eq!(m[0], Mark::Worst);
        // min >= 0.8 max: no bottom quarter.
        let m = quartiles(&[Some(90.0), Some(100.0)], &[true, true], true, true);
        assert_eq!(m, [Mark::None, Mark::Best]);
        // One value: nothing to compare.
        assert_eq!(quartiles(&[Some(1.0)], &[true], true, true), [Mark::None]);
        // Latency: high is worst.
        let m = quartiles(&[Some(1.0), Some(10.0)], &[true, true], false, false);
        assert_eq!(m, [Mark::Best, Mark::Worst]);
    }

    #[test]
    fn shades_and_colours() {
        assert_eq!(shade(0.0), 0);
        assert_eq!(shade(2.6), 1);
        assert_eq!(shade(100.0), 20);
        assert_eq!(palette(3, 4).0, "#76b7b2");
        assert!(palette(12, 50).0.starts_with("hsl("));
        assert_eq!(palette(12, 50).1, "6 3");
    }
}
