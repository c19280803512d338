//! How results scale with concurrency and change with a swept setting (docs/report.md,
//! "Scaling"): for a `--clients` sweep of the Insert Benchmark (one result per level) and a
//! `--threads` sweep of sysbench (one step per level), each step's throughput at every level,
//! the throughput per client or thread relative to the lowest level (1.00 = scales linearly),
//! and the host CPU and context switches each operation cost; for a swept read-ahead,
//! scheduler or server setting, each step's throughput, disk reads per operation and KB per
//! disk read at every value. A curve is one target at every level, other axes equal.

use std::collections::BTreeMap;

use super::chart::{self, Line, LineChart, XAxis};
use super::model::{Better, Block, Cell, Chart, Column, Kind, Row, Section, Table, TargetLabel};
use super::number;
use super::rules;
use super::target::TargetResult;
use crate::results::metric::Metric;
use crate::results::{axes_label, split_level, Status};
use crate::suites::{Levels, Suite};

/// One target at every level of a sweep: (level, result, step) for each step it ran.
struct Curve {
    label: String,
    /// step (without its level) -> level -> (result, step name)
    points: BTreeMap<String, BTreeMap<u64, (usize, String)>>,
    /// Step order, as the first result ran them.
    order: Vec<String>,
}

/// The scaling sections of `all`: the Insert Benchmark's and sysbench's, when they swept
/// concurrency; and one per swept setting (read-ahead, scheduler, a server setting).
pub fn sections(all: &[TargetResult]) -> Vec<Section> {
    let mut out = Vec::new();
    let mut cell_axes = Vec::new();
    for suite in Suite::all() {
        let sweep = &suite.entry().sweep;
        let curves = match sweep.levels {
            Levels::Cells { axis } => {
                cell_axes.push(axis);
                cell_curves(all, suite, axis)
            }
            Levels::Steps { .. } => level_curves(all, suite),
        };
        out.extend(section(suite, curves, all));
    }
    let mut keys: Vec<&String> = all
        .iter()
        .flat_map(|t| t.run.axes.keys())
        .filter(|k| !cell_axes.contains(&k.as_str()))
        .collect();
    keys.sort();
    keys.dedup();
    for key in keys {
        for suite in Suite::all() {
            out.extend(by_setting(all, suite, key));
        }
    }
    out
}

/// A swept setting's values as the report orders them: by number when they all are numbers
/// (read_ahead_kb, a size), else in the order the results came.
fn ordered_values(all: &[TargetResult], suite: Suite, key: &str) -> Vec<String> {
    let mut values: Vec<String> = Vec::new();
    for t in all.iter().filter(|t| t.run.suite == suite) {
        if let Some(v) = t.run.axes.get(key) {
            if !values.contains(v) {
                values.push(v.clone());
            }
        }
    }
    if values.iter().all(|v| v.parse::<f64>().is_ok()) {
        values.sort_by(|a, b| {
            let n = |x: &String| x.parse::<f64>().unwrap_or(0.0);
            n(a).total_cmp(&n(b))
        });
    }
    values
}

/// Rows of one figure: a row per step and curve, a column per value.
type Rows = Vec<(String, Vec<Option<f64>>)>;

/// A curve of a swept setting: one target, the other axes equal, named by them; the result at
/// each value of the setting.
type SettingCurve = (String, BTreeMap<String, usize>);

/// `suite`'s results as curves over the values of `key`.
fn setting_curves(all: &[TargetResult], suite: Suite, key: &str) -> Vec<SettingCurve> {
    let mut curves: Vec<SettingCurve> = Vec::new();
    for (i, t) in all.iter().enumerate().filter(|(_, t)| t.run.suite == suite) {
        let Some(v) = t.run.axes.get(key) else {
            continue;
        };
        let mut rest = t.run.axes.clone();
        rest.remove(key);
        let label = if rest.is_empty() {
            t.name().to_string()
        } else {
            format!("{} · {}", t.name(), axes_label(&rest))
        };
        match curves.iter_mut().find(|(l, _)| *l == label) {
            Some((_, m)) => {
                m.insert(v.clone(), i);
            }
            None => curves.push((label, BTreeMap::from([(v.clone(), i)]))),
        }
    }
    curves
}

/// The rows of one figure by a setting: a row per step and curve with a value at any `values`.
fn setting_rows(
    all: &[TargetResult],
    curves: &[SettingCurve],
    values: &[String],
    f: &dyn Fn(&TargetResult, &str) -> Option<f64>,
) -> Rows {
    let mut steps: Vec<&String> = Vec::new();
    for (_, m) in curves {
        for &i in m.values() {
            for s in &all[i].run.steps_planned {
                if !steps.contains(&s) {
                    steps.push(s);
                }
            }
        }
    }
    let mut rows = Vec::new();
    for s in steps {
        for (label, m) in curves {
            let cells: Vec<Option<f64>> = values
                .iter()
                .map(|v| m.get(v).and_then(|i| f(&all[*i], s)))
                .collect();
            if cells.iter().all(Option::is_none) {
                continue;
            }
            let row = if curves.len() > 1 {
                format!("{s} · {label}")
            } else {
                s.clone()
            };
            rows.push((row, cells));
        }
    }
    rows
}

/// KB per disk read of a step: what a read-ahead or page size does to each read.
fn kb_per_read(t: &TargetResult, s: &str) -> Option<f64> {
    let r = metric(t, s, Metric::Rpq)?;
    let kb = metric(t, s, Metric::Rkbpq)?;
    (r > 0.0).then(|| kb / r)
}

/// How each step's throughput and disk reads change with one swept setting: a row per step and
/// target (other axes equal), a column per value. Disk reads per operation and KB per disk
/// read show what the setting does to IO (a larger read-ahead reads more per read, a smaller
/// page less).
fn by_setting(all: &[TargetResult], suite: Suite, key: &str) -> Option<Section> {
    let title = suite.entry().title;
    let values = ordered_values(all, suite, key);
    if values.len() < 2 {
        return None;
    }
    let curves = setting_curves(all, suite, key);
    let figure = |f: &dyn Fn(&TargetResult, &str) -> Option<f64>| -> Rows {
        setting_rows(all, &curves, &values, f)
    };
    let name = key.strip_prefix("setting.").unwrap_or(key);
    let mut sec = Section::new(
        format!("by-{}-{suite}", key.replace('.', "-")),
        format!("{title} by {name}"),
    );
    sec.blocks.push(Block::Text(format!(
        "Each step at every value of {name}, per target (other axes equal). Disk reads per \
         operation and KB per disk read show what the setting does to IO."
    )));
    let tables: [(&str, &str, &str, Better, Rows); 3] = [
        (
            "throughput",
            "throughput",
            "",
            Better::Higher,
            figure(&|t, s| headline(t, s, 0)),
        ),
        (
            "reads",
            "disk reads per operation",
            "reads/op",
            Better::Lower,
            figure(&|t, s| metric(t, s, Metric::Rpq)),
        ),
        (
            "kb-per-read",
            "KB per disk read",
            "KB",
            Better::Neither,
            figure(&kb_per_read),
        ),
    ];
    for (k, what, unit, better, rows) in tables {
        // No disk reads at all (everything cached): no table of KB per read.
        if rows.is_empty() {
            continue;
        }
        sec.blocks.push(Block::Table(value_table(
            suite.name(),
            &format!("by.{key}.{suite}.{k}"),
            &format!("{what} by {name}"),
            unit,
            better,
            &values,
            rows,
        )));
    }
    Some(sec)
}

/// Curves of a sweep whose levels are cells (the Insert Benchmark's `--clients`): `suite`'s
/// results of one target (other axes equal) at each value of `axis`.
fn cell_curves(all: &[TargetResult], suite: Suite, axis: &str) -> Vec<Curve> {
    let mut curves: Vec<(String, Curve)> = Vec::new();
    for (i, t) in all.iter().enumerate().filter(|(_, t)| t.run.suite == suite) {
        let Some(level) = t.run.axes.get(axis).and_then(|c| c.parse::<u64>().ok()) else {
            continue;
        };
        let mut rest = t.run.axes.clone();
        rest.remove(axis);
        let label = if rest.is_empty() {
            t.name().to_string()
        } else {
            format!("{} · {}", t.name(), axes_label(&rest))
        };
        let key = label.clone();
        let c = match curves.iter_mut().find(|(k, _)| *k == key) {
            Some((_, c)) => c,
            None => {
                curves.push((
                    key,
                    Curve {
                        label,
                        points: BTreeMap::new(),
                        order: t.run.steps_planned.clone(),
                    },
                ));
                &mut curves.last_mut().expect("pushed").1
            }
        };
        for s in &t.run.steps_planned {
            c.points
                .entry(s.clone())
                .or_default()
                .insert(level, (i, s.clone()));
        }
    }
    curves.into_iter().map(|(_, c)| c).collect()
}

/// Curves of a sweep within one result (sysbench's `--threads`, TPC-C's `--connections`): each
/// of `suite`'s results' steps at their levels.
fn level_curves(all: &[TargetResult], suite: Suite) -> Vec<Curve> {
    let mut out = Vec::new();
    for (i, t) in all.iter().enumerate() {
        if t.run.suite != suite {
            continue;
        }
        let mut c = Curve {
            label: if t.run.axes.is_empty() {
                t.name().to_string()
            } else {
                format!("{} · {}", t.name(), axes_label(&t.run.axes))
            },
            points: BTreeMap::new(),
            order: Vec::new(),
        };
        for s in &t.run.steps_planned {
            let (base, level) = split_level(s);
            let Some(level) = level else { continue };
            if !c.order.iter().any(|o| o == base) {
                c.order.push(base.to_string());
            }
            c.points
                .entry(base.to_string())
                .or_default()
                .insert(level, (i, s.clone()));
        }
        if !c.points.is_empty() {
            out.push(c);
        }
    }
    out
}

/// A figure of one step at one level: the value, or None when the step did not end ok or did
/// not measure it.
type Figure = fn(&TargetResult, &str, u64) -> Option<f64>;

fn headline(t: &TargetResult, step: &str, _level: u64) -> Option<f64> {
    t.step(step)
        .filter(|s| s.status == Status::Ok)
        .map(|s| s.headline.value)
}

fn metric(t: &TargetResult, step: &str, m: Metric) -> Option<f64> {
    t.step(step)
        .filter(|s| s.status == Status::Ok)
        .and_then(|s| s.metrics.get(m.key()).copied().flatten())
}

fn cpu(t: &TargetResult, step: &str, _level: u64) -> Option<f64> {
    metric(t, step, Metric::Cpupq)
}

fn cs(t: &TargetResult, step: &str, _level: u64) -> Option<f64> {
    metric(t, step, Metric::Cspq)
}

/// The Insert Benchmark's rows loaded by l.i0 at each level: they grow with the clients (a
/// table per client) unless the clients share one table.
fn rows_loaded(t: &TargetResult, step: &str, _level: u64) -> Option<f64> {
    t.step(step).and_then(super::suite::loaded_rows)
}

/// Every level any curve has, in order.
fn levels_of(curves: &[Curve]) -> Vec<u64> {
    let mut levels: Vec<u64> = curves
        .iter()
        .flat_map(|c| c.points.values().flat_map(|m| m.keys().copied()))
        .collect();
    levels.sort_unstable();
    levels.dedup();
    levels
}

/// The steps some curve ran at more than one level, in the curves' order.
fn swept_steps(curves: &[Curve]) -> Vec<String> {
    let mut steps: Vec<String> = Vec::new();
    for c in curves {
        for s in &c.order {
            if !steps.contains(s) && c.points.get(s).is_some_and(|m| m.len() > 1) {
                steps.push(s.clone());
            }
        }
    }
    steps
}

/// What a scaling section's tables are made of: its steps, curves and levels, over `all`.
struct Sweep<'a> {
    suite: Suite,
    word: &'static str,
    steps: Vec<String>,
    curves: Vec<Curve>,
    levels: Vec<u64>,
    all: &'a [TargetResult],
}

impl Sweep<'_> {
    /// A row per step and curve, a column per level: figure `f` at each.
    fn rows(&self, f: Figure) -> Rows {
        let mut rows = Vec::new();
        for s in &self.steps {
            for c in self.curves.iter().filter(|c| c.points.contains_key(s)) {
                let at = &c.points[s];
                let values = self
                    .levels
                    .iter()
                    .map(|l| at.get(l).and_then(|(i, step)| f(&self.all[*i], step, *l)))
                    .collect();
                let label = if self.curves.len() > 1 {
                    format!("{s} · {}", c.label)
                } else {
                    s.clone()
                };
                rows.push((label, values));
            }
        }
        rows
    }

    fn table(&self, key: &str, title: &str, unit: &str, better: Better, rows: Rows) -> Table {
        let suite = self.suite;
        table(
            suite.name(),
            &format!("scaling.{suite}.{key}"),
            title,
            unit,
            better,
            &self.levels,
            rows,
        )
    }

    /// Throughput, CPU and context switches per operation by level; after throughput, the
    /// throughput per client or thread relative to the lowest level.
    fn figure_tables(&self) -> Vec<Table> {
        let word = self.word;
        let figures: [(&str, &str, &str, Figure, Better); 3] = [
            ("throughput", "throughput", "", headline, Better::Higher),
            ("cpu", "host CPU per operation", "µs/op", cpu, Better::Lower),
            (
                "cs",
                "context switches per operation",
                "cs/op",
                cs,
                Better::Lower,
            ),
        ];
        let mut out = Vec::new();
        for (key, what, unit, f, better) in figures {
            let rows = self.rows(f);
            out.push(self.table(
                key,
                &format!("{what} by {word}s"),
                unit,
                better,
                rows.clone(),
            ));
            if key == "throughput" {
                let per: Rows = rows
                    .into_iter()
                    .map(|(label, v)| (label, per_level(&self.levels, &v)))
                    .collect();
                out.push(self.table(
                    &format!("per-{word}"),
                    &format!("throughput per {word}, relative to the lowest level"),
                    "",
                    Better::Higher,
                    per,
                ));
            }
        }
        out
    }

    /// A suite whose load grows with the level (one table per client) says how much each
    /// level loaded.
    fn rows_loaded_table(&self) -> Option<Table> {
        let load =
            super::suite::loading_step(self.suite).filter(|l| self.steps.iter().any(|s| s == l))?;
        Some(
            self.table(
                "rows",
                &format!("rows each level loaded ({load})"),
                "rows",
                Better::Neither,
                self.rows(rows_loaded)
                    .into_iter()
                    .filter(|(l, _)| l.starts_with(load))
                    .collect(),
            ),
        )
    }
}

fn section(suite: Suite, curves: Vec<Curve>, all: &[TargetResult]) -> Option<Section> {
    let sweep = &suite.entry().sweep;
    let axis = XAxis::Levels(sweep.nouns);
    let levels = levels_of(&curves);
    if levels.len() < 2 {
        return None;
    }
    let word = sweep.noun;
    let steps = swept_steps(&curves);
    let mut sec = Section::new(
        format!("scaling-{suite}"),
        format!("Scaling: {} by {word}s", suite.entry().title),
    );
    sec.blocks.push(Block::Text(format!(
        "Each step at every level of the sweep, per target. 'Per {word}' is the throughput per \
         {word} relative to the lowest level the target has a value at: 1.00 scales linearly, \
         below it each added {word} brings less."
    )));
    let sweep = Sweep {
        suite,
        word,
        steps,
        curves,
        levels,
        all,
    };
    sec.blocks
        .extend(sweep.figure_tables().into_iter().map(Block::Table));
    if let Some(t) = sweep.rows_loaded_table() {
        sec.blocks.push(Block::Table(t));
    }
    sec.blocks.push(Block::Charts(charts(
        &sweep.steps,
        &sweep.curves,
        &sweep.levels,
        axis,
        all,
    )));
    Some(sec)
}

/// (v_L / L) / (v_lowest / lowest) for each level L, where "lowest" is the lowest level at
/// which this curve has a value: the columns are every curve's levels, and a curve that starts
/// higher (another run's sweep) or whose lowest level failed still scales from its own start.
fn per_level(levels: &[u64], v: &[Option<f64>]) -> Vec<Option<f64>> {
    let base = levels
        .iter()
        .zip(v)
        .find_map(|(l, x)| Some((*l, (*x)?)))
        .filter(|(_, b)| *b > 0.0)
        .map(|(l, b)| b / l as f64);
    levels
        .iter()
        .zip(v)
        .map(|(l, x)| Some(x.as_ref()? / *l as f64 / base?))
        .collect()
}

fn table(
    suite: &'static str,
    id: &str,
    title: &str,
    unit: &str,
    better: Better,
    levels: &[u64],
    rows: Rows,
) -> Table {
    let values: Vec<String> = levels.iter().map(u64::to_string).collect();
    value_table(suite, id, title, unit, better, &values, rows)
}

/// A table of a figure at each value of an axis: a row per step (and target), a column per
/// value.
fn value_table(
    suite: &'static str,
    id: &str,
    title: &str,
    unit: &str,
    better: Better,
    values: &[String],
    rows: Rows,
) -> Table {
    Table {
        id: id.to_string(),
        title: title.to_string(),
        kind: Kind::Scaling,
        suite,
        step: None,
        op: None,
        row_header: "step".into(),
        columns: values
            .iter()
            .map(|v| Column::new(v, v, unit, title, better))
            .collect(),
        rows: rows
            .into_iter()
            .map(|(label, values)| Row {
                label,
                target: None,
                cells: values
                    .into_iter()
                    .map(|v| match v {
                        Some(x) => Cell::num(x, number::sig(x)),
                        None => Cell::gap("not measured at this level (failed, or not run)"),
                    })
                    .collect(),
                note: None,
            })
            .collect(),
        legend: None,
        source: None,
        base: None,
    }
}

/// A chart per step (the first twelve): throughput against the level, a line per curve.
fn charts(
    steps: &[String],
    curves: &[Curve],
    levels: &[u64],
    axis: XAxis,
    all: &[TargetResult],
) -> Vec<Chart> {
    let labels: Vec<TargetLabel> = curves
        .iter()
        .enumerate()
        .map(|(i, c)| {
            let (colour, dash) = rules::palette(i, curves.len());
            TargetLabel {
                name: c.label.clone(),
                dir: String::new(),
                suite: String::new(),
                engine: String::new(),
                version: String::new(),
                config_name: String::new(),
                status: String::new(),
                colour,
                dash,
            }
        })
        .collect();
    steps
        .iter()
        .take(12)
        .map(|s| {
            let lines = curves
                .iter()
                .enumerate()
                .filter_map(|(k, c)| {
                    let at = c.points.get(s)?;
                    let points = levels
                        .iter()
                        .filter_map(|l| {
                            let (i, step) = at.get(l)?;
                            Some((*l as f64, headline(&all[*i], step, *l)?))
                        })
                        .collect();
                    Some(Line { target: k, points })
                })
                .collect();
            let unit = curves
                .iter()
                .find_map(|c| c.points.get(s)?.values().next())
                .and_then(|(i, step)| all[*i].step(step))
                .map(|v| v.headline.unit.clone())
                .unwrap_or_default();
            Chart {
                title: format!("{s}: throughput by level"),
                base_dependent: false,
                svg: chart::line_svg(&LineChart {
                    title: s.clone(),
                    x_axis: axis,
                    y_label: unit,
                    log_y: false,
                    lines,
                    reference: None,
                    markers: Vec::new(),
                    targets: &labels,
                }),
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn per_level_is_relative_to_the_lowest() {
        let v = per_level(&[1, 2, 4], &[Some(100.0), Some(180.0), None]);
        assert_eq!(v[0], Some(1.0));
        assert!((v[1].unwrap() - 0.9).abs() < 1e-12);
        assert_eq!(v[2], None);
    }

    /// Found by an outside review (issue 33): a curve without a value at the lowest column (a
    /// `--clients 2,4` run beside a `--clients 1,2` one, or a failed lowest level) had no
    /// per-client figures at all.
    #[test]
    fn per_level_starts_at_each_curves_own_lowest_level() {
        let v = per_level(&[1, 2, 4], &[None, Some(100.0), Some(160.0)]);
        assert_eq!(v[0], None);
        assert_eq!(v[1], Some(1.0));
        assert!((v[2].unwrap() - 0.8).abs() < 1e-12);
        // No throughput at its start: nothing to be relative to.
        assert_eq!(
            per_level(&[1, 2], &[Some(0.0), Some(5.0)]),
            vec![None, None]
        );
        assert_eq!(per_level(&[1, 2], &[None, None]), vec![None, None]);
    }
}
