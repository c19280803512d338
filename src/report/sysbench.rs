//! The sysbench report (spec §5.7, §3.4): per group of microbenchmarks (point; range without
//! aggregation; range with aggregation; writes) QPS absolute and relative to the base, a bar
//! chart of relative QPS and summary statistics; then per microbenchmark the metrics table
//! (cpu/o cs/o r/o rKB/o wKB/o o/s) absolute and relative. What is read from a result is in
//! docs/report.md ("sysbench results").

use super::chart::{self, BarChart};
use super::common::{
    metric_columns, metric_rows, metric_value, not_measured, rel_legend, relative_rows, rough_cpu,
    sanitize, state, State, SB_METRICS,
};
use super::confidence;
use super::context::Ctx;

/// The suite's name, which its tables' ids and the export's `suite` column carry.
const SYSBENCH: &str = crate::suites::Suite::Sysbench.name();
use super::model::{Better, Block, Cell, Chart, Column, Kind, Mark, Row, Section, Table};
use super::number;
use super::rules::{quartiles, rel_cell};
use super::target::{StepView, TargetResult};
use crate::analysis::summary;

/// The summary groups, in the order the blog posts show them.
pub const GROUPS: [(&str, &str); 4] = [
    ("point", "Point queries"),
    ("range", "Range queries without aggregation"),
    ("range_agg", "Range queries with aggregation"),
    ("write", "Writes"),
];

/// A group named by a result, in any of the spellings a writer might choose.
pub fn normalize_group(g: &str) -> Option<&'static str> {
    let g = g.to_ascii_lowercase();
    if g.contains("point") {
        Some("point")
    } else if g.contains("write") || g.contains("update") || g.contains("insert") {
        Some("write")
    } else if g.contains("agg") {
        let without = [
            "without", "w/o", "noagg", "no-agg", "no_agg", "no agg", "nonagg", "non-agg",
        ]
        .iter()
        .any(|w| g.contains(w));
        Some(if without { "range" } else { "range_agg" })
    } else if g.contains("range") || g.contains("scan") {
        Some("range")
    } else {
        None
    }
}

/// The group of a microbenchmark by its name, as spec §5.7 lists the members; used only when the
/// result does not say.
pub fn group_from_name(label: &str) -> Option<&'static str> {
    let base = label.split("_range=").next().unwrap_or(label);
    let base = base.split('.').next().unwrap_or(base);
    if base.starts_with("point") || base == "random-points" || base == "hot-points" {
        Some("point")
    } else if base.starts_with("range-") || base == "scan" {
        Some("range")
    } else if base.starts_with("read-only") {
        Some("range_agg")
    } else if base.starts_with("update")
        || base == "delete"
        || base == "insert"
        || base.starts_with("read-write")
        || base == "write-only"
    {
        Some("write")
    } else {
        None
    }
}

/// A `.pre` run: on the fresh tables, before the writes (`point-query.pre_range=100`).
fn is_pre(label: &str) -> bool {
    label
        .split_once("_range=")
        .map_or(label, |(t, _)| t)
        .ends_with(".pre")
}

fn qps(s: &StepView) -> Option<f64> {
    Some(s.headline.value)
}

/// sysbench's part of a step file; None for its load.
fn part(s: &StepView) -> Option<&crate::results::SysbenchStep> {
    match &s.payload {
        Some(crate::results::Payload::Sysbench(p)) => Some(p),
        _ => None,
    }
}

/// The summary group a step names: its sysbench part's, or a result written some other way's.
fn stated_group(s: &StepView) -> Option<&str> {
    part(s).map(|p| p.group.as_str()).or(s.group.as_deref())
}

/// The microbenchmarks the targets ran or planned, in their order, less those the original
/// does not report; and whether the `.pre` runs were left out.
fn step_names(ctx: &Ctx, ts: &[&TargetResult]) -> (Vec<String>, bool) {
    let mut names: Vec<String> = Vec::new();
    for t in ts {
        for n in t
            .run
            .steps_planned
            .iter()
            .chain(t.steps.iter().map(|s| &s.name))
        {
            if !names.contains(n) {
                names.push(n.clone());
            }
        }
    }
    // The original reports neither its warm-ups (.warm, .warmpre) nor dbperf's load.
    names.retain(|n| {
        n != "load"
            && !ts
                .iter()
                .any(|t| t.step(n).and_then(part).is_some_and(|p| !p.reported))
    });
    // Its report of the current run order leaves the `.pre` runs out too (32 columns); the 2024
    // report kept them (42).
    let current = ts
        .iter()
        .any(|t| t.run.parameters.get("run_order").and_then(|v| v.as_str()) != Some("2024"));
    let pre_hidden = !ctx.show_pre && current && names.iter().any(|n| is_pre(n));
    if pre_hidden {
        names.retain(|n| !is_pre(n));
    }
    (names, pre_hidden)
}

/// Each microbenchmark with its summary group: the one a result states, else the one its name
/// implies (those are returned too, for the warning), else "other".
fn grouped(ts: &[&TargetResult], names: &[String]) -> (Vec<(String, &'static str)>, Vec<String>) {
    let mut inferred = Vec::new();
    let mut group_of = |n: &str| -> &'static str {
        let stated = ts
            .iter()
            .filter_map(|t| t.step(n))
            .find_map(|s| stated_group(s).and_then(normalize_group));
        match stated {
            Some(g) => g,
            None => match group_from_name(n) {
                Some(g) => {
                    inferred.push(n.to_string());
                    g
                }
                None => "other",
            },
        }
    };
    let groups = names.iter().map(|n| (n.clone(), group_of(n))).collect();
    (groups, inferred)
}

pub fn build(ctx: &Ctx) -> Section {
    let ts: Vec<&TargetResult> = ctx.idx.iter().map(|i| &ctx.all[*i]).collect();
    let (names, pre_hidden) = step_names(ctx, &ts);
    let (groups, inferred) = grouped(&ts, &names);

    let mut sec = Section::new(SYSBENCH, "sysbench microbenchmarks");
    sec.blocks.push(Block::Text(format!(
        "QPS per microbenchmark (the step's headline: statements per second, BEGIN/COMMIT included where the test has them; for scan its rows/s), {} microbenchmarks in {} groups. Rows: targets in the order given.",
        names.len(),
        GROUPS.iter().filter(|(g, _)| groups.iter().any(|x| x.1 == *g)).count()
    )));
    if pre_hidden {
        sec.blocks.push(Block::Text(
            "The `.pre` runs (on the fresh tables, before the writes) are left out, as the original's report of this run order does; `dbperf report --show-pre` shows them.".into(),
        ));
    }
    if !inferred.is_empty() {
        sec.blocks.push(Block::Warnings(vec![format!(
            "the results do not name the group of {}; it was taken from the name as spec §5.7 lists the members",
            inferred.join(", ")
        )]));
    }
    let all_groups = GROUPS.iter().copied().chain([("other", "Other steps")]);
    for (g, title) in all_groups {
        let members: Vec<&String> = groups.iter().filter(|x| x.1 == g).map(|x| &x.0).collect();
        if members.is_empty() {
            continue;
        }
        sec.sub.push(group_section(ctx, g, title, &members));
    }
    sec.sub.push(metrics_section(ctx, &names));
    if ctx.relative {
        sec.sub.push(latency_section(ctx, &names));
    }
    sec
}

/// Latency against the base per microbenchmark (docs/statistics.md, "Latency"): one table each,
/// and one line for them all, as thirty copies of it would drown the tables.
fn latency_section(ctx: &Ctx, names: &[String]) -> Section {
    let mut sec = Section::new("sysbench-latency", "Latency relative to the base");
    let mut tally = confidence::Tally::default();
    for n in names {
        let mut ops: Vec<&String> = Vec::new();
        for &i in &ctx.idx {
            if let State::Ok(s) = state(&ctx.all[i], n) {
                for k in s.ops.keys() {
                    if !ops.contains(&k) {
                        ops.push(k);
                    }
                }
            }
        }
        for op in ops {
            let id = format!("sysbench-{}-lat-{}", sanitize(n), sanitize(op));
            let (t, x) = super::latency::table(ctx, &id, SYSBENCH, n, op);
            tally.add(x);
            sec.blocks.push(Block::Table(t));
        }
    }
    if tally.compared > 0 {
        sec.blocks
            .push(Block::Text(super::latency::sentence(&tally)));
    }
    sec
}

fn new_table(id: String, title: String, kind: Kind, columns: Vec<Column>) -> Table {
    Table {
        id,
        title,
        kind,
        suite: SYSBENCH,
        step: None,
        op: None,
        row_header: "target".into(),
        columns,
        rows: Vec::new(),
        legend: None,
        source: None,
        base: None,
    }
}

/// A group's absolute QPS table, each column's top and bottom quarter marked; with the
/// values, `[row][column]`.
fn qps_table(
    ctx: &Ctx,
    g: &str,
    title: &str,
    members: &[&String],
    cols: &[Column],
) -> (Table, Vec<Vec<Option<f64>>>) {
    let mut abs = new_table(
        format!("sysbench-{}-qps", sanitize(g)),
        format!("{title}: QPS"),
        Kind::Absolute,
        cols.to_vec(),
    );
    let mut grid: Vec<Vec<Option<f64>>> = Vec::new();
    for &i in &ctx.idx {
        let t = &ctx.all[i];
        let mut cells = Vec::new();
        let mut vals = Vec::new();
        for m in members {
            match state(t, m) {
                State::Ok(s) => {
                    let v = qps(s);
                    cells.push(match v {
                        Some(v) => Cell::num(v, number::rate(v)),
                        None => Cell::gap("no QPS in the step file"),
                    });
                    vals.push(v);
                }
                State::No(c) => {
                    cells.push(c);
                    vals.push(None);
                }
            }
        }
        grid.push(vals);
        abs.rows.push(Row {
            label: t.name().into(),
            target: Some(i),
            cells,
            note: None,
        });
    }
    for c in 0..members.len() {
        let col: Vec<Option<f64>> = grid.iter().map(|r| r[c]).collect();
        for (r, m) in quartiles(&col, &vec![true; col.len()], true, true)
            .into_iter()
            .enumerate()
        {
            if m != Mark::None {
                abs.rows[r].cells[c].mark = m;
            }
        }
    }
    abs.legend = Some(
        "Per column: green = top quarter of the range, red = bottom quarter (none when min >= 0.8 x max).".into(),
    );
    (abs, grid)
}

/// The row index of the base target among the section's targets.
fn base_row(ctx: &Ctx) -> usize {
    ctx.idx
        .iter()
        .position(|i| *i == ctx.suite_base())
        .unwrap_or(0)
}

/// One target's QPS against the base's for each member, each called faster or slower only on
/// its interval; with the ratios.
fn relative_qps_row(
    ctx: &Ctx,
    r: usize,
    i: usize,
    members: &[&String],
    grid: &[Vec<Option<f64>>],
    tally: &mut confidence::Tally,
) -> (Row, Vec<Option<f64>>) {
    let bi = base_row(ctx);
    let t = &ctx.all[i];
    let base_t = &ctx.all[ctx.suite_base()];
    let mut row_ratios = Vec::new();
    let cells = members
        .iter()
        .enumerate()
        .map(|(c, m)| match state(t, m) {
            State::Ok(_) => {
                let mut cell = rel_cell(grid[r][c], grid[bi][c], Better::Higher, ctx.thresholds);
                if r != bi {
                    tally.add(confidence::judge_speed(
                        &mut cell,
                        t,
                        base_t,
                        m,
                        ctx.thresholds,
                    ));
                }
                row_ratios.push(match cell.value {
                    super::model::Value::Num(v) => Some(v),
                    _ => None,
                });
                cell
            }
            State::No(cell) => {
                row_ratios.push(None);
                cell
            }
        })
        .collect();
    let row = Row {
        label: t.name().into(),
        target: Some(i),
        cells,
        note: None,
    };
    (row, row_ratios)
}

/// A group's QPS relative to the base, with the ratios `[row][column]` and what was called.
fn relative_qps_table(
    ctx: &Ctx,
    rel_id: &str,
    title: &str,
    members: &[&String],
    cols: &[Column],
    grid: &[Vec<Option<f64>>],
) -> (Table, Vec<Vec<Option<f64>>>, confidence::Tally) {
    let mut rel = new_table(
        rel_id.to_string(),
        format!("{title}: QPS relative to the base"),
        Kind::Relative,
        Column::ratios(cols),
    );
    let mut ratios: Vec<Vec<Option<f64>>> = Vec::new();
    let mut tally = confidence::Tally::default();
    for (r, &i) in ctx.idx.iter().enumerate() {
        let (row, row_ratios) = relative_qps_row(ctx, r, i, members, grid, &mut tally);
        ratios.push(row_ratios);
        rel.rows.push(row);
    }
    rel.legend = Some(rel_legend(ctx));
    rel.base = Some(ctx.base_name().into());
    (rel, ratios, tally)
}

/// The bar chart of every other target's relative QPS, one bar group per member.
fn qps_chart(ctx: &Ctx, title: &str, members: &[&String], ratios: &[Vec<Option<f64>>]) -> Chart {
    let others: Vec<(usize, Vec<Option<f64>>)> = ctx
        .idx
        .iter()
        .zip(ratios)
        .filter(|(i, _)| **i != ctx.suite_base())
        .map(|(i, r)| (*i, r.clone()))
        .collect();
    let chart_title = format!("{title}: QPS relative to {}", ctx.base_name());
    Chart {
        title: chart_title.clone(),
        svg: chart::bar_svg(&BarChart {
            title: chart_title,
            categories: members.iter().map(|m| m.to_string()).collect(),
            series: others,
            reference: 1.0,
            x_label: format!("QPS relative to {} (axis not from zero)", ctx.base_name()),
            targets: ctx.labels,
        }),
        base_dependent: true,
    }
}

/// Average, median, min, max and standard deviation of each target's relative QPS over the
/// group (`source`: the relative table they are read from).
fn stats_table(
    ctx: &Ctx,
    g: &str,
    title: &str,
    members: usize,
    ratios: &[Vec<Option<f64>>],
    source: String,
) -> Table {
    let stat_cols = vec![
        Column::new(
            "avg",
            "average",
            "",
            "mean of the relative QPS of the group",
            Better::Higher,
        ),
        Column::new("median", "median", "", "median", Better::Higher),
        Column::new("min", "min", "", "smallest", Better::Higher),
        Column::new("max", "max", "", "largest", Better::Higher),
        Column::new(
            "stddev",
            "stddev",
            "",
            "population standard deviation",
            Better::Neither,
        ),
    ];
    let mut st = new_table(
        format!("sysbench-{}-stats", sanitize(g)),
        format!("{title}: summary statistics of relative QPS"),
        Kind::Stats,
        stat_cols,
    );
    st.source = Some(source);
    st.base = Some(ctx.base_name().into());
    for (r, &i) in ctx.idx.iter().enumerate() {
        let vals: Vec<f64> = ratios[r].iter().flatten().copied().collect();
        let cells = match summary::of(&vals) {
            Some(s) => s.iter().map(|v| Cell::num(*v, format!("{v:.2}"))).collect(),
            None => vec![Cell::gap("no relative QPS for this target"); 5],
        };
        st.rows.push(Row {
            label: ctx.all[i].name().into(),
            target: Some(i),
            cells,
            note: None,
        });
    }
    st.legend = Some(format!(
        "Over the relative QPS of the {members} microbenchmarks of the group that have a ratio (`inf` and gaps left out); standard deviation of the population."
    ));
    st
}

/// A summary group: its QPS, and against a base its relative QPS, their chart and statistics.
fn group_section(ctx: &Ctx, g: &str, title: &str, members: &[&String]) -> Section {
    let mut sec = Section::new(format!("sysbench-{}", sanitize(g)), title);
    let cols: Vec<Column> = members
        .iter()
        .map(|m| Column::new(m, m, "QPS", "queries per second", Better::Higher))
        .collect();
    let (abs, grid) = qps_table(ctx, g, title, members, &cols);
    sec.blocks.push(Block::Table(abs));
    if !ctx.relative {
        return sec;
    }
    let rel_id = format!("sysbench-{}-qps-rel", sanitize(g));
    let (rel, ratios, tally) = relative_qps_table(ctx, &rel_id, title, members, &cols, &grid);
    sec.blocks.push(Block::Table(rel));
    if let Some(t) = tally.sentence() {
        sec.blocks.push(Block::Text(t));
    }
    sec.blocks
        .push(Block::Charts(vec![qps_chart(ctx, title, members, &ratios)]));
    sec.blocks.push(Block::Table(stats_table(
        ctx,
        g,
        title,
        members.len(),
        &ratios,
        rel_id,
    )));
    sec
}

/// The metric columns of a microbenchmark's steps, and o/s (the QPS) last; each with the keys
/// to read.
fn metrics_columns(steps: &[&StepView]) -> Vec<(Column, Vec<String>)> {
    let mut cols = metric_columns(steps, SB_METRICS);
    cols.push((
        Column::new(
            "o/s",
            "o/s",
            "",
            "operations per second: the QPS",
            Better::Higher,
        ),
        Vec::new(),
    ));
    cols
}

/// A step's value of a metrics column: o/s is its QPS, the others are read by their keys.
fn metrics_value(s: &StepView, (col, names): &(Column, Vec<String>)) -> Option<f64> {
    if col.key == "o/s" {
        qps(s)
    } else {
        metric_value(s, names)
    }
}

/// One microbenchmark's metrics: absolute, against a base relative, and its devices when a
/// target has several.
fn step_metrics(ctx: &Ctx, n: &str) -> Vec<Block> {
    let mut blocks = Vec::new();
    let steps: Vec<&StepView> = ctx
        .idx
        .iter()
        .filter_map(|i| match state(&ctx.all[*i], n) {
            State::Ok(s) => Some(s),
            State::No(_) => None,
        })
        .collect();
    let cols = metrics_columns(&steps);
    let columns: Vec<Column> = cols.iter().map(|c| c.0.clone()).collect();
    let id = format!("sysbench-m-{}", sanitize(n));
    let mut abs = new_table(
        id.clone(),
        format!("{n}: metrics"),
        Kind::Absolute,
        columns.clone(),
    );
    abs.step = Some(n.to_string());
    let (rows, values, rounds) =
        metric_rows(ctx, n, cols.len(), &|s, c| metrics_value(s, &cols[c]));
    abs.rows = rows;
    blocks.push(Block::Table(abs.clone()));
    if ctx.relative {
        let mut rel = new_table(
            format!("{id}-rel"),
            format!("{n}: metrics relative to the base"),
            Kind::Relative,
            Column::ratios(&columns),
        );
        rel.step = Some(n.to_string());
        let (rows, tally) = relative_rows(&abs, &values, &rounds, base_row(ctx), &columns, ctx);
        rel.rows = rows;
        rel.legend = Some(rel_legend(ctx));
        rel.base = Some(ctx.base_name().into());
        blocks.push(Block::Table(rel));
        if let Some(t) = tally.sentence() {
            blocks.push(Block::Text(t));
        }
    }
    // One device per target repeats the columns above; several (a log device of its own)
    // are worth a table each microbenchmark.
    if let Some(t) = super::devices::table(ctx, SYSBENCH, n, true) {
        blocks.push(Block::Table(t));
    }
    blocks
}

fn metrics_section(ctx: &Ctx, names: &[String]) -> Section {
    let mut sec = Section::new("sysbench-metrics", "Metrics per microbenchmark");
    let steps: Vec<(usize, &StepView)> = ctx
        .idx
        .iter()
        .flat_map(|i| ctx.all[*i].steps.iter().map(move |s| (*i, s)))
        .collect();
    if let Some(t) = not_measured(ctx, &steps) {
        sec.blocks.push(Block::Text(t));
    }
    if let Some(t) = rough_cpu(ctx, &steps) {
        sec.blocks.push(Block::Text(t));
    }
    if !steps
        .iter()
        .any(|(_, s)| s.metrics.values().any(|v| v.is_some()))
    {
        sec.blocks.push(Block::Text(
            "No hardware metrics (cpu/o, cs/o, r/o, rKB/o, wKB/o) in these results; o/s is the QPS above. The tables appear when step files carry them (docs/report.md).".into(),
        ));
        return sec;
    }
    for n in names {
        sec.blocks.extend(step_metrics(ctx, n));
    }
    sec
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn groups_from_the_result_in_any_spelling() {
        assert_eq!(normalize_group("point"), Some("point"));
        assert_eq!(normalize_group("Point queries"), Some("point"));
        assert_eq!(normalize_group("range_agg"), Some("range_agg"));
        assert_eq!(
            normalize_group("range queries with aggregation"),
            Some("range_agg")
        );
        assert_eq!(
            normalize_group("range queries without aggregation"),
            Some("range")
        );
        assert_eq!(normalize_group("range-noagg"), Some("range"));
        assert_eq!(normalize_group("range"), Some("range"));
        assert_eq!(normalize_group("writes"), Some("write"));
        assert_eq!(normalize_group("load"), None);
    }

    #[test]
    fn groups_from_names_follow_the_spec() {
        for (n, g) in [
            ("point-query_range=100", "point"),
            ("point-query.pre_range=100", "point"),
            ("random-points_range=1000", "point"),
            ("hot-points_range=100", "point"),
            ("points-notcovered-si_range=100", "point"),
            ("range-covered-pk_range=100", "range"),
            ("scan_range=100", "range"),
            ("read-only_range=10000", "range_agg"),
            ("read-only-count_range=1000", "range_agg"),
            ("read-write_range=10", "write"),
            ("update-zipf_range=100", "write"),
            ("write-only_range=10000", "write"),
            ("delete_range=100", "write"),
            ("insert_range=100", "write"),
        ] {
            assert_eq!(group_from_name(n), Some(g), "{n}");
        }
        assert_eq!(group_from_name("load"), None);
    }
}
