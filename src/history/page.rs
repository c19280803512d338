//! `dbperf history report`: the series and their change points as one self-contained page
//! (DIR/index.html, inline CSS and SVG, no script, nothing fetched) with the changes beside it
//! as JSON (DIR/changes.json, the output of `changes --format json`). It looks like the run
//! report: same stylesheet, same charts.

use std::collections::HashMap;
use std::fmt::Write;
use std::io::Read;
use std::path::{Path, PathBuf};

use super::changes::{self, Change};
use super::{Filter, Series};
use crate::analysis::changepoint::Options;
use crate::error::BadInput;
use crate::report::chart::{self, Agg, Line, LineChart, Marker, XAxis};
use crate::report::escape::esc;
use crate::report::html::CSS;
use crate::report::model::TargetLabel;
use crate::report::number;

pub const INDEX: &str = "index.html";
pub const CHANGES: &str = "changes.json";
/// In every page's head: how `check_out` knows a directory holds a report of dbperf's own.
const GENERATOR: &str = r#"<meta name="generator" content="dbperf history report">"#;

/// Everything a page shows.
pub struct Page<'a> {
    pub series: &'a [Series],
    pub changes: &'a [Change],
    /// Where the history is (`Location::describe`).
    pub history: String,
    pub filter: &'a Filter,
    pub opts: &'a Options,
    /// Smallest relative change shown (a fraction; 0 = all).
    pub min_change: f64,
}

/// Bad input unless `dir` is new, empty, or holds only a report this command wrote (which is
/// then replaced): another report or anything of the user's is never overwritten. Checked as
/// every output directory is (no link, nothing another user could change), and read without
/// blocking (a FIFO planted as index.html is not a page).
pub fn check_out(dir: &Path) -> anyhow::Result<()> {
    let refuse = |why: &str| -> anyhow::Result<()> {
        Err(BadInput(format!("--out {} {why}", dir.display())).into())
    };
    if std::fs::symlink_metadata(dir).is_err() {
        return crate::safe_fs::check_dir(dir);
    }
    if !dir.is_dir() {
        return refuse("is not a directory; give a new or empty directory");
    }
    let d = crate::safe_fs::open_dir(dir, crate::safe_fs::Also::Nobody)?;
    let names: Vec<String> = match d.names() {
        Ok(n) => n.iter().map(|n| n.to_string_lossy().into_owned()).collect(),
        Err(e) => return refuse(&format!("cannot be read ({e})")),
    };
    if names.is_empty() {
        return Ok(());
    }
    // A killed write leaves `.<file>.tmp` (the next write removes it).
    let ours = |n: &String| {
        [INDEX, CHANGES]
            .iter()
            .any(|f| n == f || *n == format!(".{f}.tmp"))
    };
    if names.iter().all(ours) && is_our_page(&d) {
        return Ok(());
    }
    refuse(
        "is not empty and holds no earlier `dbperf history report`; give a new or empty directory",
    )
}

fn is_our_page(dir: &crate::safe_fs::Dir) -> bool {
    let mut head = [0u8; 1024];
    let Ok(mut f) = dir.open_file(INDEX) else {
        return false;
    };
    let n = f.read(&mut head).unwrap_or(0);
    String::from_utf8_lossy(&head[..n]).contains(GENERATOR)
}

/// Writes changes.json, then index.html (each atomically: a reader sees the old file or the
/// whole new one), into `dir`, created when missing. Call `check_out` first.
pub fn write(dir: &Path, page: &Page) -> anyhow::Result<Vec<PathBuf>> {
    let out = crate::safe_fs::output_dir(dir)?;
    let mut written = Vec::new();
    for (name, text) in [
        (CHANGES, changes::to_json(page.changes)),
        (INDEX, render(page)),
    ] {
        let path = dir.join(name);
        out.write_atomic(name, text.as_bytes())
            .map_err(|e| crate::safe_fs::write_error(&path, e))?;
        written.push(path);
    }
    Ok(written)
}

type Key<'a> = (&'a str, &'a str, &'a str, &'a str);

/// A series as the page shows it: its anchor id and its changes.
type Shown<'a> = (String, &'a Series, Vec<&'a Change>);

/// Every series with its changes and id: those with changes first, each group in the
/// history's order; ids follow that order.
fn ordered<'a>(page: &Page<'a>) -> Vec<Shown<'a>> {
    let mut by_series: HashMap<Key, Vec<&Change>> = HashMap::new();
    for c in page.changes {
        by_series
            .entry((&c.target, &c.step, &c.op, &c.metric))
            .or_default()
            .push(c);
    }
    let of = |s: &Series| -> Vec<&Change> {
        by_series
            .get(&(
                s.target.as_str(),
                s.step.as_str(),
                s.op.as_str(),
                s.metric.as_str(),
            ))
            .cloned()
            .unwrap_or_default()
    };
    let (changed, steady): (Vec<&Series>, Vec<&Series>) =
        page.series.iter().partition(|s| !of(s).is_empty());
    changed
        .iter()
        .chain(steady.iter())
        .enumerate()
        .map(|(i, s)| (format!("s{}", i + 1), *s, of(s)))
        .collect()
}

/// The page's head, its title and what it was made from and how.
fn head(o: &mut String, page: &Page) {
    let title = "History of results";
    let _ = write!(
        o,
        r#"<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
{GENERATOR}<link rel="icon" href="data:,"><title>{title}</title><style>{CSS}</style></head>
<body>
<h1>{title}</h1><p class="gen">{} series and {} change(s) from {}, generated by dbperf {}. How to read it: docs/history.md in dbperf.</p>
"#,
        page.series.len(),
        page.changes.len(),
        esc(&page.history),
        esc(&crate::version_string())
    );
    let _ = write!(
        o,
        r#"<p class="legend">{}. {}</p>"#,
        esc(&filters(page.filter)),
        esc(&method(page.opts, page.min_change))
    );
}

/// The summary's lists: each series with changes and what they were, then links to the
/// series without one.
fn summary(o: &mut String, page: &Page, ordered: &[Shown]) {
    let changed = ordered.iter().filter(|x| !x.2.is_empty()).count();
    let steady = ordered.len() - changed;
    let _ = write!(
        o,
        "<p>{} change(s) in {} of {} series.</p>",
        page.changes.len(),
        changed,
        page.series.len()
    );
    if changed > 0 {
        o.push_str("<ul>");
        for (id, s, cs) in ordered.iter().filter(|x| !x.2.is_empty()) {
            let what: Vec<String> = cs.iter().map(|c| short(c)).collect();
            let _ = write!(
                o,
                r##"<li><a href="#{id}">{}</a>: {}</li>"##,
                esc(&name(s)),
                esc(&what.join("; "))
            );
        }
        o.push_str("</ul>");
    }
    if steady > 0 {
        let _ = write!(
            o,
            r#"<p>Without a change ({}):</p><nav class="toc">"#,
            steady
        );
        for (id, s, _) in ordered.iter().filter(|x| x.2.is_empty()) {
            // The space lets a long list wrap between links.
            let _ = write!(o, r##"<a href="#{id}">{}</a> "##, esc(&name(s)));
        }
        o.push_str("</nav>");
    }
}

pub fn render(page: &Page) -> String {
    let ordered = ordered(page);
    let mut o = String::with_capacity(64 * 1024 + page.series.len() * 8 * 1024);
    head(&mut o, page);
    o.push_str(r#"<section id="summary"><h2>Summary</h2>"#);
    if page.series.is_empty() {
        o.push_str(
            "<p>No series in the history passes the filters, so there is nothing to chart. \
             <code>dbperf history add DIR</code> imports results; check the filters' spelling \
             against <code>dbperf history changes</code>.</p></section>\n",
        );
        o.push_str("</body></html>\n");
        return o;
    }
    summary(&mut o, page, &ordered);
    o.push_str("</section>\n<section id=\"series\"><h2>Series</h2>\n");
    for (id, s, cs) in &ordered {
        series_section(&mut o, id, s, cs);
    }
    o.push_str("</section>\n</body></html>\n");
    o
}

fn name(s: &Series) -> String {
    changes::name(&s.target, &s.step, &s.op, &s.metric)
}

fn rel(c: &Change) -> String {
    changes::size_text(c)
}

/// "-20.1% at run 15 (3.50.13 → 3.50.14)"
fn short(c: &Change) -> String {
    format!(
        "{} at run {} ({} → {})",
        rel(c),
        c.index + 1,
        c.build_before,
        c.build_after
    )
}

fn filters(f: &Filter) -> String {
    let given: Vec<String> = [
        ("target", &f.target),
        ("step", &f.step),
        ("op", &f.op),
        ("metric", &f.metric),
    ]
    .iter()
    .filter_map(|(k, v)| {
        v.as_ref().map(|v| {
            let v = if *k == "op" && v.is_empty() { "-" } else { v };
            format!("--{k} {v}")
        })
    })
    .collect();
    if given.is_empty() {
        "All series".into()
    } else {
        format!("Series of {}", given.join(" "))
    }
}

fn method(o: &Options, min_change: f64) -> String {
    let mut s = format!(
        "Change points by binary segmentation with CUSUM tests that allow for autocorrelated noise and trends (alpha {}, at least {} runs either side)",
        o.alpha, o.min_size
    );
    if min_change > 0.0 {
        let _ = write!(s, "; changes under {}% left out", min_change * 100.0);
    }
    s.push('.');
    s
}

/// Chart of one series: its values by run, the segment means between the changes shown as a
/// step line, and a vertical line at the first run after each change.
fn series_svg(s: &Series, cs: &[&Change]) -> String {
    let labels: Vec<TargetLabel> = [("value", "#4e79a7", ""), ("segment mean", "#e15759", "6 3")]
        .iter()
        .map(|(n, colour, dash)| TargetLabel {
            name: n.to_string(),
            dir: String::new(),
            suite: String::new(),
            engine: String::new(),
            version: String::new(),
            config_name: String::new(),
            status: String::new(),
            colour: colour.to_string(),
            dash: dash.to_string(),
        })
        .collect();
    let values: Vec<f64> = s.points.iter().map(|p| p.value).collect();
    let runs: Vec<f64> = (1..=values.len()).map(|i| i as f64).collect();
    let mut lines = vec![Line {
        target: 0,
        points: chart::reduce(&runs, &values, Agg::Mean, chart::MAX_POINTS),
    }];
    if !cs.is_empty() {
        lines.push(Line {
            target: 1,
            points: step_line(&values, cs),
        });
    }
    chart::line_svg(&LineChart {
        title: name(s),
        x_axis: XAxis::Runs,
        y_label: s.unit.clone(),
        log_y: false,
        lines,
        reference: None,
        markers: cs
            .iter()
            .map(|c| Marker {
                x: (c.index + 1) as f64,
                title: marker_title(c),
            })
            .collect(),
        targets: &labels,
    })
}

/// Segment means as (run, mean) corners: flat over each segment, rising or falling at the
/// first run after a change (where its marker is).
fn step_line(values: &[f64], cs: &[&Change]) -> Vec<(f64, f64)> {
    let mut bounds: Vec<usize> = cs.iter().map(|c| c.index).collect();
    bounds.sort_unstable();
    bounds.dedup();
    bounds.push(values.len());
    let mut out = Vec::new();
    let mut start = 0;
    for end in bounds {
        if end <= start || end > values.len() {
            continue;
        }
        let seg = &values[start..end];
        let mean = seg.iter().sum::<f64>() / seg.len() as f64;
        out.push(((start + 1) as f64, mean));
        // To the next segment's first run; the last segment ends at its own last run.
        let to = if end == values.len() { end } else { end + 1 };
        out.push((to as f64, mean));
        start = end;
    }
    out
}

fn marker_title(c: &Change) -> String {
    let mut t = format!(
        "change at run {}: {} ({}); build {} → {}",
        c.index + 1,
        rel(c),
        changes::p_text(c.p_value),
        c.build_before,
        c.build_after
    );
    if c.host_changed {
        t.push_str("; the host changed");
    }
    if c.config_changed {
        t.push_str("; the config changed");
    }
    t
}

fn series_section(o: &mut String, id: &str, s: &Series, cs: &[&Change]) {
    let _ = write!(
        o,
        r#"<section id="{id}"><h3>{}</h3><p class="gen">{} run(s), {} to {}</p><figure>{}</figure>"#,
        esc(&name(s)),
        s.points.len(),
        esc(s.points.first().map_or("", |p| p.started_at.as_str())),
        esc(s.points.last().map_or("", |p| p.started_at.as_str())),
        series_svg(s, cs)
    );
    if cs.is_empty() {
        o.push_str("<p>No change found.</p></section>\n");
        return;
    }
    let _ = write!(
        o,
        r#"<div class="tw"><table class="t"><caption>Change points</caption><thead><tr><th>run</th><th>build before → after</th><th>mean before → after<span class="u">{}</span></th><th>change (95% interval)</th><th>p-value</th><th>host changed</th><th>config changed</th></tr></thead><tbody>"#,
        esc(&s.unit)
    );
    let yes = |b: bool| if b { "yes" } else { "no" };
    for c in cs {
        let _ = write!(
            o,
            r#"<tr><th>{} of {}</th><td class="txt">{} → {}</td><td>{} → {}</td><td class="txt">{}</td><td>{}</td><td>{}</td><td>{}</td></tr>"#,
            c.index + 1,
            c.runs,
            esc(&c.build_before),
            esc(&c.build_after),
            number::axis(c.mean_before),
            number::axis(c.mean_after),
            esc(&rel(c)),
            esc(&changes::p_text(c.p_value)),
            yes(c.host_changed),
            yes(c.config_changed)
        );
    }
    o.push_str("</tbody></table></div></section>\n");
}

#[cfg(test)]
mod tests {
    use super::super::Point;
    use super::*;

    fn series(metric: &str, values: &[f64]) -> Series {
        Series {
            target: "t<1>".into(),
            step: "l.i0".into(),
            op: String::new(),
            metric: metric.into(),
            unit: "rows/s".into(),
            points: values
                .iter()
                .enumerate()
                .map(|(i, v)| Point {
                    run_id: format!("r{i}"),
                    build: format!("3.{i}"),
                    config_name: "c".into(),
                    started_at: format!("2026-01-{:02}T00:00:00Z", i + 1),
                    host_fingerprint: "h".into(),
                    value: *v,
                })
                .collect(),
        }
    }

    #[test]
    fn changed_series_come_first_with_a_marker_and_a_table() {
        let flat = series("p99_us", &[5.0; 12]);
        let v: Vec<f64> = (0..12)
            .map(|i| if i < 6 { 100.0 } else { 80.0 } + (i % 3) as f64)
            .collect();
        let stepped = series("headline", &v);
        let all = [flat, stepped];
        let opts = Options::default();
        let found = changes::find(&all, &opts, 0.0).changes;
        assert_eq!(found.len(), 1, "{found:?}");
        let filter = Filter::default();
        let html = render(&Page {
            series: &all,
            changes: &found,
            history: "test".into(),
            filter: &filter,
            opts: &opts,
            min_change: 0.0,
        });
        assert_eq!(html.matches("<svg").count(), 2);
        assert_eq!(html.matches(r#"class="mark""#).count(), 1);
        assert!(html.contains(r#"data-x="7""#), "first run after the change");
        let changed = html.find(r#"<section id="s1"><h3>t&lt;1&gt; l.i0 headline"#);
        let steady = html.find(r#"<section id="s2"><h3>t&lt;1&gt; l.i0 p99_us"#);
        assert!(changed.is_some() && steady.is_some() && changed < steady);
        assert!(html.contains("<th>7 of 12</th>") && html.contains("3.5 → 3.6"));
        assert!(!html.contains("src=") && !html.contains(r#"href="http"#));
        assert!(html.contains(GENERATOR));
    }

    #[test]
    fn the_step_line_is_flat_per_segment_and_jumps_at_the_marker() {
        let v = [1.0, 3.0, 10.0, 10.0, 10.0];
        let c = Change {
            target: String::new(),
            step: String::new(),
            op: String::new(),
            metric: String::new(),
            unit: String::new(),
            index: 2,
            runs: 5,
            run_before: String::new(),
            build_before: String::new(),
            started_before: String::new(),
            run_after: String::new(),
            build_after: String::new(),
            started_after: String::new(),
            mean_before: 2.0,
            mean_after: 10.0,
            kind: crate::analysis::changepoint::ChangeKind::Level,
            relative: Some(4.0),
            relative_low: Some(3.0),
            relative_high: Some(5.0),
            sd_before: 1.0,
            sd_after: 1.0,
            p_value: 0.01,
            host_changed: false,
            config_changed: false,
        };
        assert_eq!(
            step_line(&v, &[&c]),
            [(1.0, 2.0), (3.0, 2.0), (3.0, 10.0), (5.0, 10.0)]
        );
    }

    #[test]
    fn only_an_empty_directory_or_our_own_report_is_written_into() {
        let tmp = tempfile::tempdir().unwrap();
        let d = tmp.path().join("r");
        check_out(&d).unwrap();
        std::fs::create_dir(&d).unwrap();
        check_out(&d).unwrap();
        let (opts, filter) = (Options::default(), Filter::default());
        let page = Page {
            series: &[],
            changes: &[],
            history: "h".into(),
            filter: &filter,
            opts: &opts,
            min_change: 0.0,
        };
        write(&d, &page).unwrap();
        check_out(&d).expect("our own report is replaced");
        std::fs::write(d.join("notes.txt"), "mine").unwrap();
        let e = check_out(&d).unwrap_err();
        assert!(crate::error::is_bad_input(&e));
        std::fs::remove_file(d.join("notes.txt")).unwrap();
        std::fs::write(d.join(INDEX), "<html>someone else's</html>").unwrap();
        assert!(check_out(&d).is_err(), "an index.html not of ours");
        let f = tmp.path().join("file");
        std::fs::write(&f, "x").unwrap();
        assert!(check_out(&f).is_err());
    }
}
