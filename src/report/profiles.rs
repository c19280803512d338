//! CPU profiles in the report: per step and target a flame graph, and against the base target a
//! differential flame graph and the functions whose CPU per operation changed most
//! (docs/profiles.md). Reads the step files' `profile` and the folded files beside them.

use std::collections::BTreeMap;

use base64::Engine as _;

use super::model::{Better, Block, Cell, Chart, Column, Kind, Row, Section, Table};
use super::target::TargetResult;
use crate::profile::{diff, flame};

/// Functions listed per step and target against the base.
const TOP: usize = 15;

/// What a result's profile is diffed against: the report's base target at the same suite and
/// axes (a sweep's level 4 against the base at level 4, never level 1: the difference would be
/// the level's), or the first result there when the base did not run at that level, as each
/// suite's section chooses (`Ctx::suite_base`).
fn peer_base(all: &[TargetResult], base: usize, i: usize) -> usize {
    let t = &all[i];
    let peers = || {
        (0..all.len())
            .filter(|j| all[*j].run.suite == t.run.suite && all[*j].run.axes == t.run.axes)
    };
    peers()
        .find(|j| all[*j].name() == all[base].name())
        .or_else(|| peers().next())
        .unwrap_or(i)
}

/// A result in a table id: its name, and its level when it has one.
fn id_name(t: &TargetResult) -> String {
    if t.run.axes.is_empty() {
        t.name().to_string()
    } else {
        format!("{}.{}", t.name(), crate::results::axes_label(&t.run.axes))
    }
}

/// A result's profile of `step`, when it has one.
fn load(t: &TargetResult, step: &str) -> Option<diff::Profile> {
    diff::load(&t.dir.join("steps").join(format!("{step}.json"))).ok()
}

/// A result's flame graph of one step, with its samples and what may be missing from them.
fn flame_chart(name: &str, step: &str, p: &diff::Profile) -> Option<Chart> {
    let unresolved = crate::profile::fold::stats(&p.stacks).unresolved;
    let mut subtitle = format!(
        "{} samples, {} with an unresolved leaf [in brackets]",
        p.samples(),
        unresolved
    );
    if let Some(share) = p.perf_cpu_share {
        subtitle.push_str(&format!(
            "; perf itself used {:.2}% of the host's CPU",
            share * 100.0
        ));
    }
    if let Some(why) = &p.partial {
        subtitle.push_str(&format!("; partial: {why}"));
    }
    let svg = flame::svg(
        &flame::lines(&p.stacks),
        &format!("{name} {step}: CPU flame graph"),
        Some(subtitle),
        "samples",
    )
    .ok()?;
    Some(chart(format!("{name} {step} flame graph"), &svg, false))
}

/// The differential flame graph of a result's profile `p` against its base's `bp`.
fn differential_chart(
    (name, base_name): (&str, &str),
    step: &str,
    bp: &diff::Profile,
    p: &diff::Profile,
) -> Option<Chart> {
    let (unit, lines) = diff::differential_lines(bp, p);
    let count = match unit {
        diff::Unit::UsPerOp => "CPU ns/op",
        diff::Unit::PctOfSamples => "1/100 % of samples",
    };
    let svg = flame::svg(
        &lines,
        &format!("{name} vs {base_name} {step}: differential flame graph"),
        Some(format!(
            "widths: {name}; red grew, blue shrank ({count} per {})",
            p.op
        )),
        count,
    )
    .ok()?;
    Some(chart(
        format!("{name} vs {base_name} {step} differential flame graph"),
        &svg,
        true,
    ))
}

/// One step's profiles: each result's flame graph, and against its base the differential one
/// and the functions that changed most. The sub-section, when it has a chart, and whether any
/// result held a profile of the step.
fn step_section(all: &[TargetResult], base: usize, step: &str) -> (Option<Section>, bool) {
    let mut sub = Section::new(format!("profile-{step}"), format!("Step {step}"));
    let mut any = false;
    // Each base's profile of the step, read once (a sweep has a base per level).
    let mut base_profiles: BTreeMap<usize, Option<diff::Profile>> = BTreeMap::new();
    let mut charts = Vec::new();
    for (i, t) in all.iter().enumerate() {
        let Some(p) = load(t, step) else { continue };
        let name = t.shown_name();
        any = true;
        charts.extend(flame_chart(&name, step, &p));
        let b = peer_base(all, base, i);
        if b == i {
            continue;
        }
        let Some(bp) = base_profiles
            .entry(b)
            .or_insert_with(|| load(&all[b], step))
        else {
            continue;
        };
        let base_name = all[b].shown_name();
        charts.extend(differential_chart((&name, &base_name), step, bp, &p));
        sub.blocks.push(Block::Table(table(
            step,
            (&id_name(t), &name),
            &base_name,
            &diff::compare(bp, &p, TOP),
        )));
    }
    if charts.is_empty() {
        return (None, any);
    }
    sub.blocks.insert(0, Block::Charts(charts));
    (Some(sub), any)
}

/// The section, or None when no result holds a profile.
pub fn section(all: &[TargetResult], base: usize) -> Option<Section> {
    let mut s = Section::new("profiles", "CPU profiles");
    let mut any = false;
    let mut steps: Vec<&String> = Vec::new();
    for t in all {
        for st in &t.steps {
            if !steps.contains(&&st.name) {
                steps.push(&st.name);
            }
        }
    }
    for step in steps {
        let (sub, found) = step_section(all, base, step);
        any |= found;
        s.sub.extend(sub);
    }
    any.then_some(s)
}

/// The flame graph in a frame of its own: inferno's search and zoom script then works as in a
/// standalone SVG, however many graphs the page holds.
fn chart(title: String, svg: &str, base_dependent: bool) -> Chart {
    let height = svg
        .split_once("height=\"")
        .and_then(|(_, r)| r.split_once('"'))
        .and_then(|(h, _)| h.parse::<u32>().ok())
        .unwrap_or(600)
        .min(4000);
    let data = base64::engine::general_purpose::STANDARD.encode(svg);
    Chart {
        svg: format!(
            r#"<iframe class="flame" title="{}" style="width:100%;border:0" height="{}" src="data:image/svg+xml;base64,{data}"></iframe>"#,
            title.replace('"', "&quot;").replace('<', "&lt;"),
            height + 8
        ),
        title,
        base_dependent,
    }
}

/// The functions of `target` (its id and its shown name) against `base` (its shown name).
fn table(step: &str, (id, target): (&str, &str), base: &str, d: &diff::Diff) -> Table {
    let u = d.unit.label();
    let col = |k: &str, l: &str, h: &str| Column::new(k, l, u, h, Better::Lower);
    let f = |x: f64| Cell::num(x, format!("{x:.3}"));
    Table {
        id: format!("profile-{step}-{id}"),
        title: format!(
            "{target} vs {base}, {step}: functions whose CPU per operation changed most"
        ),
        kind: Kind::Absolute,
        suite: "profile",
        step: Some(step.to_string()),
        op: None,
        row_header: "function".into(),
        columns: vec![
            col(
                "base_self",
                &format!("{base} self"),
                "CPU in the function itself, base",
            ),
            col(
                "new_self",
                &format!("{target} self"),
                "CPU in the function itself",
            ),
            col(
                "change_self",
                "change self",
                "self CPU per op, target minus base",
            ),
            col(
                "base_total",
                &format!("{base} total"),
                "with what it called, base",
            ),
            col(
                "new_total",
                &format!("{target} total"),
                "with what it called",
            ),
        ],
        rows: d
            .rows
            .iter()
            .map(|r| Row {
                label: r.function.clone(),
                target: None,
                cells: vec![
                    f(r.base_self),
                    f(r.new_self),
                    f(r.change_self()),
                    f(r.base_total),
                    f(r.new_total),
                ],
                note: None,
            })
            .collect(),
        legend: Some(
            "Share of the samples times the step's CPU per operation of the processes sampled; \
             [bracketed] frames could not be resolved to a function."
                .into(),
        ),
        source: None,
        base: Some(base.to_string()),
    }
}
