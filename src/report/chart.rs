//! Inline SVG charts, drawn here so a report needs no script library and no network: per-second
//! line charts with every target on one chart, and horizontal bar charts of relative values whose
//! axis does not start at zero and whose labels are always written in full.

use std::fmt::Write;

use super::escape::esc;
use super::model::TargetLabel;
use super::number;

/// Longer series are reduced to this many points per line (one per pixel column or so) ...
pub const MAX_POINTS: usize = 600;
/// ... and to this many points per chart over all its lines, so fifty targets on one chart
/// keep the page a few MB, not tens.
pub const CHART_POINTS: usize = 12_000;
/// Never fewer than this per line.
pub const MIN_POINTS: usize = 120;

/// Points per line for a chart with `lines` lines.
pub fn points_per_line(lines: usize) -> usize {
    (CHART_POINTS / lines.max(1)).clamp(MIN_POINTS, MAX_POINTS)
}

#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Agg {
    /// Rates: the mean of the seconds in a bucket.
    Mean,
    /// Largest latency: the max of the bucket, so a spike is never averaged away.
    Max,
}

/// Points (t, y) for a line, at most `max`; NaN values (no operation that second) are
/// skipped by Max buckets and break the line when a whole bucket has none.
pub fn reduce(t: &[f64], y: &[f64], agg: Agg, max: usize) -> Vec<(f64, f64)> {
    let n = t.len().min(y.len());
    let k = n.div_ceil(max.max(1)).max(1);
    let mut out = Vec::with_capacity(n / k + 1);
    let mut i = 0;
    while i < n {
        let j = (i + k).min(n);
        let vals = y[i..j].iter().copied().filter(|v| v.is_finite());
        let v = match agg {
            Agg::Mean => {
                let (s, c) = vals.fold((0.0, 0usize), |(s, c), v| (s + v, c + 1));
                if c == 0 {
                    f64::NAN
                } else {
                    s / c as f64
                }
            }
            Agg::Max => vals.fold(f64::NAN, f64::max),
        };
        out.push((t[j - 1], v));
        i = j;
    }
    out
}

pub struct Line {
    pub target: usize,
    pub points: Vec<(f64, f64)>,
}

/// What the x axis counts.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum XAxis {
    /// Seconds into a step.
    Seconds,
    /// Runs of a history series, 1 = the oldest: ticks on whole runs only.
    Runs,
    /// Levels of a suite's concurrency sweep, named by its unit ("clients"): ticks on whole
    /// levels.
    Levels(&'static str),
}

impl XAxis {
    fn label(self) -> &'static str {
        match self {
            XAxis::Seconds => "seconds",
            XAxis::Runs => "run",
            XAxis::Levels(nouns) => nouns,
        }
    }
}

/// A vertical line at `x` across the plot, e.g. a change point; `title` shows on hover.
pub struct Marker {
    pub x: f64,
    pub title: String,
}

pub struct LineChart<'a> {
    pub title: String,
    pub x_axis: XAxis,
    pub y_label: String,
    pub log_y: bool,
    pub lines: Vec<Line>,
    /// A dashed horizontal line, e.g. the background insert target.
    pub reference: Option<(f64, String)>,
    pub markers: Vec<Marker>,
    pub targets: &'a [TargetLabel],
}

const W: f64 = 640.0;
const H: f64 = 280.0;
const ML: f64 = 70.0;
const MR: f64 = 14.0;
const MT: f64 = 26.0;
const MB: f64 = 38.0;

/// The most ticks an axis draws, whatever the values: values come from result files, and a tick
/// loop must not be theirs to decide.
const MAX_TICKS: usize = 64;

/// `lo`, `lo + step`, ... up to `hi`, at most `MAX_TICKS` of them; just the ends when the step
/// does not fit the span (not finite, not positive, or too small for it).
fn ticks(lo: f64, hi: f64, step: f64) -> Vec<f64> {
    if !(lo.is_finite() && hi.is_finite()) || hi < lo {
        return Vec::new();
    }
    let n = (hi - lo) / step;
    if !(step.is_finite() && step > 0.0 && n.is_finite()) || n > MAX_TICKS as f64 {
        return vec![lo, hi];
    }
    (0..=n.floor() as usize + 1)
        .map(|i| lo + i as f64 * step)
        .filter(|v| *v <= hi + step * 1e-6)
        .collect()
}

/// Values far beyond any measurement (up to 1e300) keep an axis's arithmetic finite.
const AXIS_LIMIT: f64 = 1e300;

/// 1-2-5 steps giving about `n` intervals over [0, span].
fn nice_step(span: f64, n: f64) -> f64 {
    if span <= 0.0 || !span.is_finite() {
        return 1.0;
    }
    let raw = span / n;
    let mag = 10f64.powf(raw.log10().floor());
    let f = raw / mag;
    let m = if f <= 1.0 {
        1.0
    } else if f <= 2.0 {
        2.0
    } else if f <= 5.0 {
        5.0
    } else {
        10.0
    };
    m * mag
}

fn svg_open(out: &mut String, w: f64, h: f64, title: &str) {
    let _ = write!(
        out,
        r#"<svg xmlns="http://www.w3.org/2000/svg" class="chart" viewBox="0 0 {w:.0} {h:.0}" width="{w:.0}" height="{h:.0}" role="img" aria-label="{t}"><title>{t}</title>"#,
        t = esc(title)
    );
}

/// The y axis of a line chart: its range and ticks, linear from 0 or logarithmic over whole
/// decades.
struct YAxis {
    lo: f64,
    hi: f64,
    ticks: Vec<f64>,
    log: bool,
}

impl YAxis {
    fn of(c: &LineChart) -> YAxis {
        let ys = c
            .lines
            .iter()
            .flat_map(|l| l.points.iter().map(|p| p.1))
            .filter(|v| v.is_finite() && (!c.log_y || *v > 0.0))
            .map(|v| v.clamp(-AXIS_LIMIT, AXIS_LIMIT))
            .map(|v| if c.log_y { v.max(1.0 / AXIS_LIMIT) } else { v });
        let (ymin, ymax) = ys.fold((f64::INFINITY, f64::NEG_INFINITY), |(a, b), v| {
            (a.min(v), b.max(v))
        });
        // No value to scale on (a step whose operations never completed): an empty axis, from 0
        // to 1, or one decade when logarithmic (a log axis from 0 has no first tick: the ticks'
        // loop would never end).
        let (ymin, ymax) = match (ymin.is_finite(), c.log_y) {
            (true, _) => (ymin, ymax),
            (false, false) => (0.0, 1.0),
            (false, true) => (1.0, 10.0),
        };
        let ymax = match &c.reference {
            Some((r, _)) if !c.log_y => ymax.max(*r),
            _ => ymax,
        };
        if c.log_y {
            YAxis::decades(ymin, ymax)
        } else {
            let step = nice_step(ymax * 1.05, 5.0);
            let hi = (ymax * 1.05 / step).ceil().max(1.0) * step;
            YAxis {
                lo: 0.0,
                hi,
                ticks: ticks(0.0, hi, step),
                log: false,
            }
        }
    }

    fn decades(ymin: f64, ymax: f64) -> YAxis {
        let lo = 10f64.powf(ymin.log10().floor());
        let mut hi = 10f64.powf(ymax.log10().ceil());
        if hi <= lo {
            hi = lo * 10.0;
        }
        // A tick per decade, or per few decades over a wide span (at most 600 decades here).
        let decades = (hi.log10() - lo.log10()).round().max(1.0);
        let every = (decades / 12.0).ceil();
        let t = ticks(lo.log10(), hi.log10(), every)
            .into_iter()
            .map(|e| 10f64.powf(e.round()))
            .collect();
        YAxis {
            lo,
            hi,
            ticks: t,
            log: true,
        }
    }

    /// The pixel row of `y`.
    fn px(&self, y: f64) -> f64 {
        let f = if self.log {
            (y.log10() - self.lo.log10()) / (self.hi.log10() - self.lo.log10())
        } else {
            (y - self.lo) / (self.hi - self.lo)
        };
        MT + (H - MT - MB) * (1.0 - f)
    }
}

/// The largest x of any line's points, at least 1.
fn x_max(c: &LineChart) -> f64 {
    c.lines
        .iter()
        .flat_map(|l| l.points.iter().map(|p| p.0))
        .filter(|x| x.is_finite())
        .fold(0.0f64, f64::max)
        .clamp(1.0, AXIS_LIMIT)
}

/// The pixel column of `x` on an axis up to `xmax`.
fn x_px(x: f64, xmax: f64) -> f64 {
    ML + x / xmax * (W - ML - MR)
}

/// The grid lines and ticks of both axes, the axes and their labels.
fn line_axes(out: &mut String, c: &LineChart, y: &YAxis, xmax: f64) {
    for t in &y.ticks {
        let py = y.px(*t);
        let _ = write!(
            out,
            r#"<line x1="{ML}" x2="{:.1}" y1="{py:.1}" y2="{py:.1}" class="grid"/><text x="{:.1}" y="{:.1}" class="yt">{}</text>"#,
            W - MR,
            ML - 6.0,
            py + 4.0,
            number::axis(*t)
        );
    }
    let xstep = match c.x_axis {
        XAxis::Seconds => nice_step(xmax, 6.0),
        XAxis::Runs | XAxis::Levels(_) => nice_step(xmax, 6.0).max(1.0),
    };
    for x in ticks(0.0, xmax + 1e-9, xstep) {
        let px = x_px(x, xmax);
        let _ = write!(
            out,
            r#"<line x1="{px:.1}" x2="{px:.1}" y1="{:.1}" y2="{:.1}" class="tick"/><text x="{px:.1}" y="{:.1}" class="xt">{}</text>"#,
            H - MB,
            H - MB + 4.0,
            H - MB + 16.0,
            number::axis(x)
        );
    }
    let _ = write!(
        out,
        r#"<line x1="{ML}" x2="{ML}" y1="{MT}" y2="{:.1}" class="axis"/><line x1="{ML}" x2="{:.1}" y1="{:.1}" y2="{:.1}" class="axis"/>"#,
        H - MB,
        W - MR,
        H - MB,
        H - MB
    );
    let (pw, ph) = (W - ML - MR, H - MT - MB);
    let _ = write!(
        out,
        r#"<text x="{:.1}" y="{:.1}" class="xl">{}</text><text x="14" y="{:.1}" class="yl" transform="rotate(-90 14 {:.1})">{}</text>"#,
        ML + pw / 2.0,
        H - 6.0,
        c.x_axis.label(),
        MT + ph / 2.0,
        MT + ph / 2.0,
        esc(&c.y_label)
    );
}

/// One target's line as a path, broken where a value is missing; None when nothing draws.
fn line_path(c: &LineChart, l: &Line, y: &YAxis, xmax: f64) -> Option<String> {
    let t = &c.targets[l.target];
    let mut d = String::with_capacity(l.points.len() * 14);
    let mut pen_down = false;
    for (px, py) in &l.points {
        if !py.is_finite() || (c.log_y && *py <= 0.0) {
            pen_down = false;
            continue;
        }
        // "l0 0" after a move: an isolated second still shows, as a round cap.
        let _ = write!(
            d,
            "{}{:.1} {:.1}{}",
            if pen_down { "L" } else { "M" },
            x_px(*px, xmax),
            y.px(py.clamp(y.lo, y.hi)),
            if pen_down { "" } else { "l0 0" }
        );
        pen_down = true;
    }
    if d.is_empty() {
        return None;
    }
    // A single point draws nothing as a path: give it a dot.
    let dot = l.points.iter().filter(|p| p.1.is_finite()).count() == 1;
    let dash = if t.dash.is_empty() {
        String::new()
    } else {
        format!(r#" stroke-dasharray="{}""#, t.dash)
    };
    Some(format!(
        r#"<path d="{d}" class="ln{}" stroke="{}"{dash} data-t="{}"><title>{}</title></path>"#,
        if dot { " dot" } else { "" },
        t.colour,
        l.target,
        esc(&t.name)
    ))
}

/// Over the lines, so the hover title is reachable: a thin visible line and a wide
/// transparent one to point at.
fn line_markers(out: &mut String, c: &LineChart, xmax: f64) {
    for m in c.markers.iter().filter(|m| m.x >= 0.0 && m.x <= xmax) {
        let x = x_px(m.x, xmax);
        let _ = write!(
            out,
            r#"<g class="mark" data-x="{}"><title>{}</title><line x1="{x:.1}" x2="{x:.1}" y1="{MT}" y2="{:.1}" class="mk"/><line x1="{x:.1}" x2="{x:.1}" y1="{MT}" y2="{:.1}" class="mkh"/></g>"#,
            m.x,
            esc(&m.title),
            H - MB,
            H - MB
        );
    }
}

pub fn line_svg(c: &LineChart) -> String {
    let mut out = String::with_capacity(4096);
    svg_open(&mut out, W, H, &c.title);
    let _ = write!(
        out,
        r#"<text x="{ML}" y="16" class="ct">{}</text>"#,
        esc(&c.title)
    );
    let xmax = x_max(c);
    let y = YAxis::of(c);
    line_axes(&mut out, c, &y, xmax);
    if let Some((r, label)) = &c.reference {
        if *r > y.lo && *r <= y.hi {
            let py = y.px(*r);
            let _ = write!(
                out,
                r#"<line x1="{ML}" x2="{:.1}" y1="{py:.1}" y2="{py:.1}" class="ref"><title>{}</title></line>"#,
                W - MR,
                esc(label)
            );
        }
    }
    for l in &c.lines {
        if let Some(path) = line_path(c, l, &y, xmax) {
            out.push_str(&path);
        }
    }
    line_markers(&mut out, c, xmax);
    out.push_str("</svg>");
    out
}

pub struct BarChart<'a> {
    pub title: String,
    pub categories: Vec<String>,
    /// Per target shown: its value for each category (None: no result).
    pub series: Vec<(usize, Vec<Option<f64>>)>,
    /// Drawn as a dashed line (1.0 for relative values).
    pub reference: f64,
    pub x_label: String,
    pub targets: &'a [TargetLabel],
}

/// Monospace label font: 12 px, about 7.3 px per character, so label width is known in advance
/// and no name is ever cut.
const CHAR_W: f64 = 7.3;
const BAR_H: f64 = 12.0;

/// Where a bar chart's parts go: sizes from the longest label and the number of bars, and the
/// value axis from the values.
struct BarLayout {
    label_w: f64,
    plot_w: f64,
    w: f64,
    h: f64,
    top: f64,
    group_h: f64,
    plot_h: f64,
    lo: f64,
    hi: f64,
    step: f64,
}

impl BarLayout {
    fn of(c: &BarChart) -> BarLayout {
        let label_w = c
            .categories
            .iter()
            .map(|s| s.chars().count())
            .max()
            .unwrap_or(1) as f64
            * CHAR_W
            + 14.0;
        let legend_w = c
            .series
            .iter()
            .map(|(t, _)| c.targets[*t].name.chars().count())
            .max()
            .unwrap_or(1) as f64
            * CHAR_W
            + 40.0;
        let plot_w = 440.0;
        let right = 46.0;
        let w = (label_w + plot_w + right).max(legend_w + 20.0);
        let legend_h = c.series.len() as f64 * 16.0 + 6.0;
        let top = 26.0 + legend_h;
        let group_h = c.series.len().max(1) as f64 * BAR_H + 10.0;
        let plot_h = c.categories.len() as f64 * group_h;
        let h = top + plot_h + 40.0;
        let (lo, hi, step) = bar_range(c);
        BarLayout {
            label_w,
            plot_w,
            w,
            h,
            top,
            group_h,
            plot_h,
            lo,
            hi,
            step,
        }
    }

    /// The pixel column of value `v`.
    fn x(&self, v: f64) -> f64 {
        self.label_w + (v - self.lo) / (self.hi - self.lo) * self.plot_w
    }
}

/// The value axis's ends and step. It starts just below the smallest value, not at zero:
/// differences of a few percent stay visible (the original's charts and the blog posts do the
/// same).
fn bar_range(c: &BarChart) -> (f64, f64, f64) {
    let vals = c
        .series
        .iter()
        .flat_map(|(_, v)| v.iter().flatten().copied())
        .filter(|v| v.is_finite());
    let (mut lo, mut hi) = vals
        .map(|v| v.clamp(-AXIS_LIMIT, AXIS_LIMIT))
        .fold((c.reference, c.reference), |(a, b), v| (a.min(v), b.max(v)));
    let step = nice_step(hi - lo, 5.0).max(0.01);
    lo = ((lo - step * 0.5) / step).floor() * step;
    hi = ((hi + step * 0.5) / step).ceil() * step;
    if lo < 0.0 {
        lo = 0.0;
    }
    (lo, hi, step)
}

/// A colour square and the name of each target, above the plot.
fn bar_legend(out: &mut String, c: &BarChart) {
    for (i, (ti, _)) in c.series.iter().enumerate() {
        let t = &c.targets[*ti];
        let y = 26.0 + i as f64 * 16.0;
        let _ = write!(
            out,
            r#"<g data-t="{ti}"><rect x="4" y="{y:.1}" width="12" height="12" fill="{}"/><text x="22" y="{:.1}" class="lg">{}</text></g>"#,
            t.colour,
            y + 10.0,
            esc(&t.name)
        );
    }
}

/// The value axis: grid lines, ticks and its label.
fn bar_axis(out: &mut String, c: &BarChart, l: &BarLayout) {
    let (top, plot_h) = (l.top, l.plot_h);
    for v in ticks(l.lo, l.hi + 1e-9, l.step) {
        let x = l.x(v);
        let _ = write!(
            out,
            r#"<line x1="{x:.1}" x2="{x:.1}" y1="{top:.1}" y2="{:.1}" class="grid"/><text x="{x:.1}" y="{:.1}" class="xt">{}</text>"#,
            top + plot_h,
            top + plot_h + 14.0,
            number::axis((v * 1000.0).round() / 1000.0)
        );
    }
    let _ = write!(
        out,
        r#"<text x="{:.1}" y="{:.1}" class="xl">{}</text>"#,
        l.label_w + l.plot_w / 2.0,
        l.h - 8.0,
        esc(&c.x_label)
    );
}

/// Category `ci`'s label and one bar per target, or the words "no result".
fn bar_group(out: &mut String, c: &BarChart, l: &BarLayout, ci: usize, cat: &str) {
    let label_w = l.label_w;
    let gy = l.top + ci as f64 * l.group_h;
    let _ = write!(
        out,
        r#"<text x="{:.1}" y="{:.1}" class="bl">{}</text>"#,
        label_w - 8.0,
        gy + l.group_h / 2.0 + 3.0,
        esc(cat)
    );
    for (si, (ti, vals)) in c.series.iter().enumerate() {
        let t = &c.targets[*ti];
        let y = gy + 5.0 + si as f64 * BAR_H;
        match vals.get(ci).copied().flatten().filter(|v| v.is_finite()) {
            Some(v) => {
                let x1 = l.x(v.clamp(l.lo, l.hi));
                let _ = write!(
                    out,
                    r#"<g data-t="{ti}"><rect x="{label_w:.1}" y="{y:.1}" width="{:.1}" height="{:.1}" fill="{}"><title>{}: {} = {v:.2}</title></rect><text x="{:.1}" y="{:.1}" class="bv">{v:.2}</text></g>"#,
                    (x1 - label_w).max(0.5),
                    BAR_H - 2.0,
                    t.colour,
                    esc(&t.name),
                    esc(cat),
                    x1 + 3.0,
                    y + BAR_H - 3.0
                );
            }
            None => {
                let _ = write!(
                    out,
                    r#"<g data-t="{ti}"><text x="{:.1}" y="{:.1}" class="bv">no result ({})</text></g>"#,
                    label_w + 3.0,
                    y + BAR_H - 3.0,
                    esc(&t.name)
                );
            }
        }
    }
}

pub fn bar_svg(c: &BarChart) -> String {
    let l = BarLayout::of(c);
    let mut out = String::with_capacity(8192);
    svg_open(&mut out, l.w, l.h, &c.title);
    let _ = write!(
        out,
        r#"<text x="4" y="16" class="ct">{}</text>"#,
        esc(&c.title)
    );
    bar_legend(&mut out, c);
    bar_axis(&mut out, c, &l);
    for (ci, cat) in c.categories.iter().enumerate() {
        bar_group(&mut out, c, &l, ci, cat);
    }
    let rx = l.x(c.reference);
    let (top, label_w) = (l.top, l.label_w);
    let _ = write!(
        out,
        r#"<line x1="{rx:.1}" x2="{rx:.1}" y1="{top:.1}" y2="{:.1}" class="ref"/><line x1="{label_w:.1}" x2="{label_w:.1}" y1="{top:.1}" y2="{:.1}" class="axis"/>"#,
        top + l.plot_h,
        top + l.plot_h
    );
    out.push_str("</svg>");
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn targets(n: usize) -> Vec<TargetLabel> {
        (0..n)
            .map(|i| {
                let (colour, dash) = super::super::rules::palette(i, n);
                TargetLabel {
                    name: format!("t<{i}>"),
                    dir: String::new(),
                    suite: "ibench".into(),
                    engine: String::new(),
                    version: String::new(),
                    config_name: String::new(),
                    status: "ok".into(),
                    colour,
                    dash,
                }
            })
            .collect()
    }

    #[test]
    fn reduce_keeps_spikes_and_bounds_points() {
        let t: Vec<f64> = (1..=1800).map(|i| i as f64).collect();
        let mut y = vec![1.0; 1800];
        y[1000] = 500.0;
        let r = reduce(&t, &y, Agg::Max, MAX_POINTS);
        assert!(r.len() <= MAX_POINTS);
        assert!(r.iter().any(|p| p.1 == 500.0), "the spike survives");
        let r = reduce(&t, &y, Agg::Mean, MAX_POINTS);
        assert!(r.iter().all(|p| p.1 < 500.0));
        assert_eq!(r.last().unwrap().0, 1800.0);
        assert_eq!(points_per_line(2), MAX_POINTS);
        assert_eq!(points_per_line(50), 240);
        assert!(reduce(&t, &y, Agg::Max, points_per_line(50)).len() <= 240);
        let short = reduce(&[1.0, 2.0], &[f64::NAN, 3.0], Agg::Mean, MAX_POINTS);
        assert!(short[0].1.is_nan() && short[1].1 == 3.0);
    }

    #[test]
    fn line_chart_draws_every_target_escaped() {
        let ts = targets(2);
        let c = LineChart {
            title: "inserts/s".into(),
            x_axis: XAxis::Seconds,
            y_label: "rows/s".into(),
            log_y: false,
            lines: vec![
                Line {
                    target: 0,
                    points: vec![(1.0, 10.0), (2.0, f64::NAN), (3.0, 12.0), (4.0, 11.0)],
                },
                Line {
                    target: 1,
                    points: vec![(1.0, 20.0)],
                },
            ],
            reference: Some((15.0, "target".into())),
            markers: Vec::new(),
            targets: &ts,
        };
        let s = line_svg(&c);
        assert!(s.starts_with("<svg") && s.ends_with("</svg>"));
        assert_eq!(s.matches("<path").count(), 2);
        assert!(s.contains("t&lt;0&gt;"), "names are escaped");
        assert!(
            s.contains(r#"d="M"#) && s.matches('M').count() >= 3,
            "NaN breaks the line"
        );
        assert!(s.contains("class=\"ln dot\""), "a one-point line is a dot");
        assert!(s.contains("class=\"ref\""));
        let log = line_svg(&LineChart {
            log_y: true,
            reference: None,
            ..c
        });
        assert!(log.contains(">10<") && log.contains(">100<"), "{log}");
    }

    /// Found by the test suite under load: a step whose operations never completed (a failed
    /// l.i1) has only zeros, which a logarithmic latency axis leaves out, and the axis's tick
    /// loop started from 0 and never ended (memory grew until the report was killed).
    #[test]
    fn a_log_chart_with_no_positive_value_is_drawn_empty() {
        let ts = targets(1);
        for points in [vec![(1.0, 0.0), (2.0, 0.0)], vec![(1.0, f64::NAN)], vec![]] {
            let s = line_svg(&LineChart {
                title: "largest latency".into(),
                x_axis: XAxis::Seconds,
                y_label: "ms".into(),
                log_y: true,
                lines: vec![Line { target: 0, points }],
                reference: None,
                markers: Vec::new(),
                targets: &ts,
            });
            assert!(s.starts_with("<svg") && s.ends_with("</svg>"), "{s}");
            assert!(s.contains(">1<") && s.contains(">10<"), "{s}");
        }
    }

    /// Series values come from result files: huge, tiny and infinite values draw a chart with a
    /// bounded number of ticks (they once made tick loops run for ever or allocate without end).
    #[test]
    fn extreme_values_draw_a_bounded_chart() {
        let ts = targets(1);
        let extremes = [
            vec![(1e300, 1.0), (f64::INFINITY, 2.0)],
            vec![(1.0, f64::MAX), (2.0, 5e-324)],
            vec![(1.0, -f64::MAX), (2.0, f64::MAX)],
            vec![(f64::MAX, f64::MIN_POSITIVE)],
        ];
        for points in extremes {
            for log_y in [false, true] {
                let s = line_svg(&LineChart {
                    title: "t".into(),
                    x_axis: XAxis::Seconds,
                    y_label: "y".into(),
                    log_y,
                    lines: vec![Line {
                        target: 0,
                        points: points.clone(),
                    }],
                    reference: None,
                    markers: Vec::new(),
                    targets: &ts,
                });
                assert!(s.ends_with("</svg>"));
                assert!(s.matches("class=\"grid\"").count() <= MAX_TICKS + 2, "{s}");
                assert!(s.matches("class=\"tick\"").count() <= MAX_TICKS + 2, "{s}");
            }
        }
        let s = bar_svg(&BarChart {
            title: "t".into(),
            categories: vec!["a".into()],
            series: vec![(0, vec![Some(-f64::MAX), Some(f64::MAX)])],
            reference: 1.0,
            x_label: "x".into(),
            targets: &ts,
        });
        assert!(s.matches("class=\"grid\"").count() <= MAX_TICKS + 2, "{s}");
        assert_eq!(ticks(0.0, f64::INFINITY, 1.0), Vec::<f64>::new());
        assert_eq!(ticks(0.0, 1e9, 1.0), vec![0.0, 1e9]);
        assert_eq!(ticks(0.0, 2.0, 1.0), vec![0.0, 1.0, 2.0]);
    }

    #[test]
    fn markers_are_vertical_lines_with_titles_and_runs_tick_whole() {
        let ts = targets(1);
        let s = line_svg(&LineChart {
            title: "history".into(),
            x_axis: XAxis::Runs,
            y_label: "rows/s".into(),
            log_y: false,
            lines: vec![Line {
                target: 0,
                points: vec![(1.0, 10.0), (2.0, 10.0), (3.0, 20.0)],
            }],
            reference: None,
            markers: vec![
                Marker {
                    x: 3.0,
                    title: "+100% <p>".into(),
                },
                Marker {
                    x: 9.0,
                    title: "off the chart".into(),
                },
            ],
            targets: &ts,
        });
        assert_eq!(s.matches(r#"class="mark""#).count(), 1, "{s}");
        assert!(s.contains(r#"data-x="3""#) && s.contains("+100% &lt;p&gt;"));
        // The marker's x is the point's x.
        let px = |tag: &str| {
            s.split(tag)
                .nth(1)
                .unwrap()
                .split('"')
                .next()
                .unwrap()
                .to_string()
        };
        assert_eq!(
            px(r#"class="mark" data-x="3"><title>+100% &lt;p&gt;</title><line x1=""#),
            "626.0"
        );
        assert!(s.contains("L626.0 "), "{s}");
        assert!(s.contains(">run<"));
        assert!(!s.contains(">0.5<") && !s.contains(">2.5<"), "{s}");
    }

    #[test]
    fn bar_chart_axis_is_not_at_zero_and_labels_are_whole() {
        let ts = targets(3);
        let long = "points-notcovered-si.pre_range=100".to_string();
        let c = BarChart {
            title: "point queries".into(),
            categories: vec![long.clone(), "hot-points_range=100".into()],
            series: vec![
                (1, vec![Some(0.91), Some(1.08)]),
                (2, vec![None, Some(1.2)]),
            ],
            reference: 1.0,
            x_label: "QPS relative to t0".into(),
            targets: &ts,
        };
        let s = bar_svg(&c);
        assert!(s.contains(&format!(">{long}<")), "label in full");
        assert!(
            !s.contains(r#"class="xt">0<"#),
            "axis does not start at zero: {s}"
        );
        assert!(s.contains("no result (t&lt;2&gt;)"));
        assert_eq!(
            s.matches("<rect").count(),
            3 + 2,
            "3 bars + 2 legend swatches"
        );
        // The SVG is wide enough for the longest label plus the plot.
        let w: f64 = s
            .split("width=\"")
            .nth(1)
            .unwrap()
            .split('"')
            .next()
            .unwrap()
            .parse()
            .unwrap();
        assert!(w >= long.len() as f64 * CHAR_W + 440.0);
    }
}
