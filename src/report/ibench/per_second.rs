//! What a step's per-second series shows: each rate and each largest latency per second as
//! charts, and the variance of the rates (their coefficient of variation, stalls).

use super::steps::{table, RATES};
use crate::analysis::variance;
use crate::report::chart::{self, Agg, Line, LineChart, XAxis};
use crate::report::common::{sanitize, state, State};
use crate::report::context::Ctx;
use crate::report::model::{Better, Cell, Chart, Column, Kind, Mark, Row, Table, Value};
use crate::report::number;
use crate::results::series::Series;

/// A partial last row shorter than this is left out of rate lines: a rate over a few
/// milliseconds of wind-down reads as a collapse that did not happen.
const MIN_RATE_INTERVAL_S: f64 = 0.5;

/// Per operation type with a series: its rate per second, and its largest latency per second.
pub fn charts(ctx: &Ctx, step: &str) -> Vec<Chart> {
    let mut out = Vec::new();
    let max_points = chart::points_per_line(ctx.idx.len());
    for (kind, what, unit) in RATES {
        let (rate_lines, max_lines, reference) = lines(ctx, step, kind, max_points);
        // A line needs two seconds; a step shorter than that everywhere gets no chart.
        if !rate_lines
            .iter()
            .any(|l| l.points.iter().filter(|p| p.1.is_finite()).count() >= 2)
        {
            continue;
        }
        let title = format!("{step}: {what}, per second");
        out.push(Chart {
            title: title.clone(),
            svg: chart::line_svg(&LineChart {
                title,
                x_axis: XAxis::Seconds,
                y_label: unit.into(),
                log_y: false,
                lines: rate_lines,
                reference,
                markers: Vec::new(),
                targets: ctx.labels,
            }),
            base_dependent: false,
        });
        let title = format!("{step}: largest {kind} latency, per second");
        out.push(Chart {
            title: title.clone(),
            svg: chart::line_svg(&LineChart {
                title,
                x_axis: XAxis::Seconds,
                y_label: "ms (log scale)".into(),
                log_y: true,
                lines: max_lines,
                reference: None,
                markers: Vec::new(),
                targets: ctx.labels,
            }),
            base_dependent: false,
        });
    }
    out
}

/// Each target's line of `kind`'s rate and of its largest latency, and the background insert
/// target to draw across the insert rate (qr/qp).
fn lines(
    ctx: &Ctx,
    step: &str,
    kind: &str,
    max_points: usize,
) -> (Vec<Line>, Vec<Line>, Option<(f64, String)>) {
    let mut rate_lines = Vec::new();
    let mut max_lines = Vec::new();
    let mut reference = None;
    for &i in &ctx.idx {
        let Some(s) = ctx.all[i].step(step) else {
            continue;
        };
        let Some(series) = &s.series else { continue };
        let Some(k) = series.kind(kind) else { continue };
        if kind == "insert" {
            if let Some(r) = series.target_rows_per_s {
                reference = Some((r, format!("target {} rows/s", number::rate(r))));
            }
        }
        let keep: Vec<usize> = (0..series.t.len())
            .filter(|r| series.dt[*r] >= MIN_RATE_INTERVAL_S)
            .collect();
        let t: Vec<f64> = keep.iter().map(|r| series.t[*r]).collect();
        let y: Vec<f64> = keep.iter().map(|r| k.rate[*r]).collect();
        rate_lines.push(Line {
            target: i,
            points: chart::reduce(&t, &y, Agg::Mean, max_points),
        });
        max_lines.push(Line {
            target: i,
            points: chart::reduce(&series.t, &k.max_ms, Agg::Max, max_points),
        });
    }
    (rate_lines, max_lines, reference)
}

/// The variance of each per-second rate; None when no target has enough full seconds.
pub fn variance_table(ctx: &Ctx, step: &str) -> Option<Table> {
    let kinds: Vec<(&str, &str)> = RATES
        .iter()
        .filter(|(k, _, _)| {
            ctx.idx.iter().any(|i| {
                ctx.all[*i]
                    .step(step)
                    .and_then(|s| s.series.as_ref())
                    .is_some_and(|se| se.kind(k).is_some())
            })
        })
        .map(|(k, w, _)| (*k, *w))
        .collect();
    if kinds.is_empty() {
        return None;
    }
    let cols = variance_columns(&kinds);
    let mut t = table(
        format!("ibench-{}-variance", sanitize(step)),
        format!("{step}: variance of the per-second rates"),
        Kind::Variance,
        Some(step),
        cols.clone(),
    );
    for &i in &ctx.idx {
        let tr = &ctx.all[i];
        let series = match state(tr, step) {
            State::Ok(s) => s.series.as_ref(),
            State::No(c) => {
                t.rows.push(Row {
                    label: tr.name().into(),
                    target: Some(i),
                    cells: vec![c.clone(); cols.len()],
                    note: c.note.clone(),
                });
                continue;
            }
        };
        let mut cells = Vec::new();
        let mut flags = Vec::new();
        for (k, w) in &kinds {
            cells.extend(rate_cells(ctx, series, k, w, &mut flags));
        }
        cells.push(if flags.is_empty() {
            Cell::text("")
        } else {
            Cell::text(flags.join("; "))
        });
        t.rows.push(Row {
            label: tr.name().into(),
            target: Some(i),
            cells,
            note: None,
        });
    }
    if !t
        .rows
        .iter()
        .any(|r| r.cells.iter().any(|c| matches!(c.value, Value::Num(_))))
    {
        return None;
    }
    t.legend = Some(format!(
        "Over the full seconds of the step (the partial last one left out). CV: population standard deviation / mean, %; yellow and a flag above {}% (--cv-flag). A flag also names seconds below {:.0}% of the mean (stalls).",
        ctx.cv_flag_pct,
        variance::STALL_SHARE * 100.0
    ));
    Some(t)
}

/// Per rate its mean and CV, then a column of what stands out.
fn variance_columns(kinds: &[(&str, &str)]) -> Vec<Column> {
    let mut cols = Vec::new();
    for (k, w) in kinds {
        cols.push(Column::new(
            &format!("{k}_mean"),
            &format!("{w} mean"),
            if *k == "query" { "queries/s" } else { "rows/s" },
            "mean of the full seconds",
            Better::Higher,
        ));
        cols.push(Column::new(
            &format!("{k}_cv"),
            &format!("{w} CV"),
            "%",
            "coefficient of variation: standard deviation / mean of the per-second rate",
            Better::Lower,
        ));
    }
    cols.push(Column::new(
        "flag",
        "flag",
        "",
        "what stands out",
        Better::Neither,
    ));
    cols
}

/// The mean and CV cells of rate `k` (`w`, its words) of one target's series; what stands out
/// goes into `flags`.
fn rate_cells(
    ctx: &Ctx,
    series: Option<&Series>,
    k: &str,
    w: &str,
    flags: &mut Vec<String>,
) -> [Cell; 2] {
    let vals: Vec<f64> = series
        .and_then(|se| {
            se.kind(k).map(|ks| {
                ks.rate
                    .iter()
                    .zip(&se.full)
                    .filter(|(v, f)| **f && v.is_finite())
                    .map(|(v, _)| *v)
                    .collect()
            })
        })
        .unwrap_or_default();
    let Some(v) = variance::of(&vals) else {
        let why = if series.is_none() {
            "no per-second series".to_string()
        } else {
            format!(
                "{} full seconds; at least {} are needed",
                vals.len(),
                variance::MIN_SECONDS
            )
        };
        return [Cell::gap(why.clone()), Cell::gap(why)];
    };
    let mean = Cell::num(v.mean, number::rate(v.mean));
    let f = variance::flag(w, &v, ctx.cv_flag_pct);
    let cv = match v.cv {
        Some(cv) => {
            let c = Cell::num(cv * 100.0, format!("{:.1}", cv * 100.0)).note(format!(
                "over {} full seconds: min {}, max {}",
                v.seconds,
                number::rate(v.min),
                number::rate(v.max)
            ));
            if cv * 100.0 > ctx.cv_flag_pct {
                c.mark(Mark::Worse)
            } else {
                c
            }
        }
        None => Cell::gap("nothing happened"),
    };
    flags.extend(f);
    [mean, cv]
}
