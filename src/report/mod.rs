//! Reports: turn result directories into what a database developer publishes — what got faster
//! or slower, and why (docs/report.md). Reads result files only, never a DBMS, so a report can
//! be rebuilt anywhere from the directories alone.
//!
//! In layers, each importing only its own and lower ones (docs/architecture.md, "A report"):
//! loading (`input` reads and checks results into `target`'s types, `hosts`, `rounds`); the
//! parts of a document (`model`, `rules`, `number`, `escape`, `chart`); the sections built from
//! them (`ibench`, `sysbench`, `details`, ... with `analysis` for the statistics); and `html`,
//! `markdown` and `export` (CSV, JSON), which write the one model out.

pub mod bisect;
pub mod chart;
mod common;
mod completeness;
mod confidence;
mod context;
mod details;
mod devices;
pub mod escape;
mod export;
mod hosts;
pub mod html;
mod ibench;
pub mod input;
mod latency;
mod markdown;
pub mod model;
pub mod number;
mod pgbench;
mod profiles;
mod repeats;
mod residency;
mod rounds;
pub mod rules;
mod scaling;
mod suite;
mod sysbench;
mod target;
mod tpcc;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use crate::error::BadInput;
use crate::suites::Suite;
use context::Ctx;
use model::{Block, Doc, Section, TargetLabel};
use rules::Thresholds;
use target::TargetResult;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    Html,
    Markdown,
    Csv,
    Json,
}

impl Format {
    pub fn file_name(self) -> &'static str {
        match self {
            Format::Html => "report.html",
            Format::Markdown => "report.md",
            Format::Csv => "report.csv",
            Format::Json => "report.json",
        }
    }
}

#[derive(Debug, Clone)]
pub struct Options {
    /// Target every relative number is against; the first input when None.
    pub base: Option<String>,
    pub thresholds: Thresholds,
    /// A per-second rate whose coefficient of variation is above this (percent) is flagged.
    pub cv_flag_pct: f64,
    pub title: Option<String>,
    /// Report results from different hardware together, rows labelled by host.
    pub allow_mixed_hosts: bool,
    /// Show the sysbench `.pre` runs even of the current run order, whose original report
    /// leaves them out.
    pub show_pre: bool,
    /// Write nothing when the inputs are not a whole campaign (`dbperf report --complete`).
    pub complete: bool,
}

impl Default for Options {
    fn default() -> Self {
        Options {
            base: None,
            thresholds: Thresholds::default(),
            cv_flag_pct: 10.0,
            title: None,
            allow_mixed_hosts: false,
            show_pre: false,
            complete: false,
        }
    }
}

fn title(all: &[TargetResult]) -> String {
    let names: Vec<String> = all.iter().map(|t| t.shown_name()).collect();
    if names.len() <= 4 {
        format!("dbperf report: {}", names.join(" vs "))
    } else {
        format!(
            "dbperf report: {} targets ({} … {})",
            names.len(),
            names[0],
            names[names.len() - 1]
        )
    }
}

/// The index of the `--base` target, the first when none is named.
fn base_index(all: &[TargetResult], base: Option<&str>) -> anyhow::Result<usize> {
    let Some(b) = base else {
        return Ok(0);
    };
    let found = all.iter().position(|t| t.name() == b).ok_or_else(|| {
        BadInput(format!(
            "base {b} is not among the inputs ({})",
            all.iter().map(|t| t.name()).collect::<Vec<_>>().join(", ")
        ))
    })?;
    Ok(found)
}

/// Each target's name, colour and identity as the page shows them.
fn target_labels(all: &[TargetResult]) -> Vec<TargetLabel> {
    all.iter()
        .enumerate()
        .map(|(i, t)| {
            let (colour, dash) = rules::palette(i, all.len());
            TargetLabel {
                name: t.shown_name(),
                dir: t.dir.display().to_string(),
                suite: t.run.suite.name().to_string(),
                engine: t.run.target.engine.clone(),
                version: t.run.target.version.clone(),
                config_name: t.run.target.config_name.clone(),
                status: t.run.status.as_str().to_string(),
                colour,
                dash,
            }
        })
        .collect()
}

/// Each suite's sections. Relative numbers compare results equal on every swept axis: a
/// section per combination of the axes' values (one, without a sweep).
fn suite_sections(
    all: &[TargetResult],
    labels: &[TargetLabel],
    base: usize,
    opts: &Options,
) -> Vec<Section> {
    let mut sections = Vec::new();
    for suite in Suite::all() {
        let mut combos: Vec<&BTreeMap<String, String>> = Vec::new();
        for t in all.iter().filter(|t| t.run.suite == suite) {
            if !combos.contains(&&t.run.axes) {
                combos.push(&t.run.axes);
            }
        }
        for axes in &combos {
            let idx: Vec<usize> = (0..all.len())
                .filter(|i| all[*i].run.suite == suite && all[*i].run.axes == **axes)
                .collect();
            let ctx = Ctx {
                all,
                labels,
                relative: idx.len() > 1,
                idx,
                base,
                thresholds: opts.thresholds,
                cv_flag_pct: opts.cv_flag_pct,
                show_pre: opts.show_pre,
            };
            let mut sec = match suite {
                Suite::Ibench => ibench::build(&ctx),
                Suite::Sysbench => sysbench::build(&ctx),
                Suite::Tpcc => tpcc::build(&ctx),
                Suite::Pgbench => pgbench::build(&ctx),
            };
            if combos.len() > 1 {
                at_axes(&mut sec, axes);
            }
            sections.push(sec);
        }
    }
    sections
}

/// Builds the document for results already read.
pub fn build(all: &[TargetResult], opts: &Options) -> anyhow::Result<Doc> {
    if all.is_empty() {
        return Err(BadInput("no results to report".into()).into());
    }
    let base = base_index(all, opts.base.as_deref())?;
    let labels = target_labels(all);
    let mut sections = suite_sections(all, &labels, base, opts);
    sections.extend(scaling::sections(all));
    sections.extend(residency::section(all));
    sections.extend(repeats::section(all));
    sections.extend(profiles::section(all, base));
    sections.push(details::section(all));
    Ok(Doc {
        title: opts.title.clone().unwrap_or_else(|| title(all)),
        generated_by: format!("dbperf {}", crate::version_string()),
        targets: labels,
        base,
        worse: opts.thresholds.low,
        better: opts.thresholds.high,
        warnings: [details::warnings(all), residency::warnings(all)].concat(),
        incomplete: Vec::new(),
        sections,
    })
}

/// A section of the results at one combination of the swept axes: its title says which, and
/// its (and its tables') ids carry it, so sections of several combinations stay apart.
fn at_axes(sec: &mut Section, axes: &BTreeMap<String, String>) {
    let words: Vec<String> = axes.iter().map(|(k, v)| format!("{k} {v}")).collect();
    sec.title = format!("{} · {}", sec.title, words.join(", "));
    at_axes_ids(sec, &crate::results::axes_label(axes));
}

/// The ids of a section of `at_axes`'s, its tables' and its subsections'.
fn at_axes_ids(sec: &mut Section, label: &str) {
    sec.id = format!("{}-{label}", sec.id);
    for b in &mut sec.blocks {
        if let Block::Table(t) = b {
            t.id = format!("{}.{label}", t.id);
            if let Some(s) = t.source.as_mut() {
                *s = format!("{s}.{label}");
            }
        }
    }
    for s in &mut sec.sub {
        at_axes_ids(s, label);
    }
}

/// Writes the document in each format into `out`; returns the files written.
pub fn write(doc: &Doc, out: &Path, formats: &[Format]) -> anyhow::Result<Vec<PathBuf>> {
    let dir = crate::safe_fs::output_dir(out)?;
    let mut written = Vec::new();
    for f in formats {
        let text = match f {
            Format::Html => html::render(doc),
            Format::Markdown => markdown::render(doc),
            Format::Csv => export::csv(doc),
            Format::Json => export::json(doc),
        };
        let path = out.join(f.file_name());
        // A directory that exists but cannot take the file (a full disk) is not the user's
        // input: exit 1, and no half-written report left behind.
        dir.write_atomic(f.file_name(), text.as_bytes())
            .map_err(|e| crate::safe_fs::write_error(&path, e))?;
        written.push(path);
    }
    Ok(written)
}

/// What `generate` did.
#[derive(Debug, Default)]
pub struct Generated {
    /// The files written; none when `Options::complete` held them back.
    pub files: Vec<PathBuf>,
    /// What the inputs lack of their campaign (`Doc::incomplete`).
    pub incomplete: Vec<String>,
}

/// `dbperf report`: read, build, write (with `complete`, only a whole campaign).
pub fn generate(
    inputs: &[PathBuf],
    out: &Path,
    formats: &[Format],
    opts: &Options,
) -> anyhow::Result<Generated> {
    let all = input::load_with(
        inputs,
        input::LoadOptions {
            allow_mixed_hosts: opts.allow_mixed_hosts,
        },
    )?;
    let mut doc = build(&all, opts)?;
    doc.incomplete = completeness::gaps(inputs);
    let files = if opts.complete && !doc.incomplete.is_empty() {
        Vec::new()
    } else {
        write(&doc, out, formats)?
    };
    Ok(Generated {
        files,
        incomplete: doc.incomplete,
    })
}

/// The report `dbperf run` writes into its result directory for the targets it just ran (base:
/// the first). Targets that left no run.json are skipped.
pub fn after_run(out: &Path, dirs: &[PathBuf], base: Option<&str>) -> anyhow::Result<Vec<PathBuf>> {
    if dirs.is_empty() {
        return Ok(Vec::new());
    }
    let g = generate(
        dirs,
        out,
        &[Format::Html, Format::Markdown],
        &Options {
            base: base.map(String::from),
            ..Options::default()
        },
    )?;
    Ok(g.files)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;
    use std::fs;

    fn target(root: &Path, name: &str, suite: &str, step: &str, value: f64) -> PathBuf {
        let d = root.join(name);
        fs::create_dir_all(d.join("steps")).unwrap();
        let mut run = input::fixtures::run_json(name, "2026-01-01T00:00:00Z");
        run["suite"] = json!(suite);
        run["steps_planned"] = json!([step]);
        fs::write(d.join("run.json"), run.to_string()).unwrap();
        let mut s = input::fixtures::named_step_json(step, value);
        s["headline"] = json!({"metric": "queries_per_s", "value": value, "unit": "queries/s"});
        fs::write(d.join("steps").join(format!("{step}.json")), s.to_string()).unwrap();
        d
    }

    #[test]
    fn each_suite_is_relative_to_the_base_or_else_its_first_target() {
        let tmp = tempfile::tempdir().unwrap();
        let dirs = [
            target(tmp.path(), "ib1", "ibench", "qr100", 100.0),
            target(tmp.path(), "sb1", "sysbench", "point-query_range=100", 10.0),
            target(tmp.path(), "ib2", "ibench", "qr100", 150.0),
            target(tmp.path(), "sb2", "sysbench", "point-query_range=100", 5.0),
        ];
        let all = input::load(&dirs).unwrap();
        let doc = build(
            &all,
            &Options {
                base: Some("sb2".into()),
                ..Options::default()
            },
        )
        .unwrap();
        let tables = doc.tables();
        let find = |id: &str| *tables.iter().find(|t| t.id == id).unwrap();
        let ib = find("ibench-tput-rel");
        assert_eq!(
            ib.base.as_deref(),
            Some("ib1"),
            "sb2 ran no Insert Benchmark"
        );
        assert_eq!(ib.rows[1].cells[0].text, "1.50");
        let sb = find("sysbench-point-qps-rel");
        assert_eq!(sb.base.as_deref(), Some("sb2"));
        assert_eq!(sb.rows[0].cells[0].text, "2.00");
        // Rows of each suite in the order given, only that suite's targets.
        let labels: Vec<&str> = sb.rows.iter().map(|r| r.label.as_str()).collect();
        assert_eq!(labels, ["sb1", "sb2"]);
        assert!(doc.warnings.is_empty(), "{:?}", doc.warnings);
        let e = build(
            &all,
            &Options {
                base: Some("nope".into()),
                ..Options::default()
            },
        )
        .unwrap_err();
        assert!(crate::error::is_bad_input(&e));
    }
}
