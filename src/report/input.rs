//! Reading result directories for a report, through the results room's one reader
//! (`results::read_run`, `results::read_step_file`, the journal): the same gate and the same
//! structs as every other reader. Strict about what would make a comparison wrong (not a result,
//! a schema from the future, two results with one name); a step file that cannot be read becomes
//! a gap with a warning, not an abort.

use crate::analysis::residency::CacheHits;
use std::collections::BTreeMap;
use std::fs;
use std::path::{Path, PathBuf};

use serde_json::Value;

use super::target::{StepView, TargetResult};
use super::{hosts, rounds};
use crate::error::BadInput;
use crate::results::campaign::{read_journal, CellState, JOURNAL};
use crate::results::hardware::Hardware;
use crate::results::metric::Metric;
use crate::results::series::{read_series, Series};
use crate::results::{self, StepFile};

/// How results are read together.
#[derive(Debug, Clone, Copy, Default)]
pub struct LoadOptions {
    /// Report results from hosts whose hardware differs, each row labelled with its host.
    pub allow_mixed_hosts: bool,
}

/// Reads every input with the default options.
pub fn load(inputs: &[PathBuf]) -> anyhow::Result<Vec<TargetResult>> {
    load_with(inputs, LoadOptions::default())
}

/// The target directories the inputs stand for, in row order: each input's in turn, and the
/// cells of several shards of one campaign in its plan order.
fn input_dirs(inputs: &[PathBuf]) -> anyhow::Result<Vec<PathBuf>> {
    let mut dirs: Vec<PathBuf> = Vec::new();
    let mut planned: Vec<Option<usize>> = Vec::new();
    // A run directory with no result yet (a shard just started, or one with no cells of its
    // own) adds nothing, and the campaign's report says it is not complete; only when no input
    // has anything is there nothing to report.
    let mut nothing_yet: Option<anyhow::Error> = None;
    for p in inputs {
        if results::present(&p.join(JOURNAL)) && !results::present(&p.join("run.json")) {
            let found = journal_dirs(p)?;
            if found.is_empty() {
                nothing_yet.get_or_insert(no_cell_yet(p));
            }
            for (d, order) in found {
                dirs.push(d);
                planned.push(Some(order));
            }
        } else {
            for d in target_dirs(p)? {
                dirs.push(d);
                planned.push(None);
            }
        }
    }
    if let (true, Some(e)) = (dirs.is_empty(), nothing_yet) {
        return Err(e);
    }
    // Shards of one campaign given together: their cells in the campaign's plan order, so the
    // rows are those of the unsharded campaign.
    if inputs.len() > 1 && planned.iter().all(|o| o.is_some()) {
        let mut both: Vec<(Option<usize>, PathBuf)> = planned.into_iter().zip(dirs).collect();
        both.sort_by_key(|(o, _)| *o);
        dirs = both.into_iter().map(|(_, d)| d).collect();
    }
    Ok(dirs)
}

/// Every target directory read, in their order. Targets are independent: read them on every
/// core (series CSVs dominate the time).
fn load_targets(dirs: &[PathBuf]) -> anyhow::Result<Vec<TargetResult>> {
    let mut results: Vec<Option<anyhow::Result<TargetResult>>> = Vec::new();
    results.resize_with(dirs.len(), || None);
    let threads = std::thread::available_parallelism()
        .map(|n| n.get())
        .unwrap_or(1)
        .min(dirs.len().max(1));
    let chunk = dirs.len().div_ceil(threads).max(1);
    std::thread::scope(|s| {
        for (ds, out) in dirs.chunks(chunk).zip(results.chunks_mut(chunk)) {
            s.spawn(move || {
                for (d, o) in ds.iter().zip(out.iter_mut()) {
                    *o = Some(load_target(d));
                }
            });
        }
    });
    results
        .into_iter()
        .map(|r| r.expect("every target was read"))
        .collect()
}

/// Repeats of one target (a campaign's rounds) become one row; anything else with one name
/// twice would make two rows no reader could tell apart.
fn merge_rounds(read: Vec<TargetResult>) -> anyhow::Result<Vec<TargetResult>> {
    let mut groups: Vec<Vec<TargetResult>> = Vec::new();
    for t in read {
        let same = groups.iter_mut().find(|g| {
            g[0].name() == t.name() && g[0].run.suite == t.run.suite && g[0].run.axes == t.run.axes
        });
        match same {
            Some(g) if t.round().is_some() && g.iter().all(|x| x.round() != t.round()) => {
                g.push(t)
            }
            Some(g) => {
                return Err(BadInput(format!(
                    "two results have the same target name {} ({} and {}); a report needs distinct names",
                    t.name(),
                    g[0].dir.display(),
                    t.dir.display()
                ))
                .into())
            }
            None => groups.push(vec![t]),
        }
    }
    Ok(groups
        .into_iter()
        .map(|g| {
            if g.len() == 1 {
                g.into_iter().next().expect("one")
            } else {
                rounds::merge(g)
            }
        })
        .collect())
}

/// Reads every input, each a target's result directory (`R/<target>`, holding run.json) or a run
/// directory (`R`: the cells of its campaign.json in plan order, or else every target in it in
/// the order they ran). Row order is the order given; a campaign's repeats of a target are one
/// row (their medians).
pub fn load_with(inputs: &[PathBuf], opts: LoadOptions) -> anyhow::Result<Vec<TargetResult>> {
    let dirs = input_dirs(inputs)?;
    let mut read = load_targets(&dirs)?;
    hosts::check(&mut read, opts.allow_mixed_hosts)?;
    merge_rounds(read)
}

/// The target directories an input stands for.
fn target_dirs(p: &Path) -> anyhow::Result<Vec<PathBuf>> {
    if results::present(&p.join("run.json")) {
        return Ok(vec![p.to_path_buf()]);
    }
    if !p.exists() {
        return Err(BadInput(format!("{} does not exist", p.display())).into());
    }
    let mut found: Vec<(String, PathBuf)> = Vec::new();
    if let Ok(entries) = fs::read_dir(p) {
        for e in entries.flatten() {
            let d = e.path();
            if results::present(&d.join("run.json")) {
                found.push((started_at(&d), d));
            } else if d.is_dir() {
                // A campaign's repeats, `<target>/r<k>`, when its journal is gone.
                for r in fs::read_dir(&d).into_iter().flatten().flatten() {
                    let rd = r.path();
                    let is_round = r
                        .file_name()
                        .to_str()
                        .and_then(|n| n.strip_prefix('r'))
                        .is_some_and(|k| !k.is_empty() && k.bytes().all(|b| b.is_ascii_digit()));
                    if is_round && results::present(&rd.join("run.json")) {
                        found.push((started_at(&rd), rd));
                    }
                }
            }
        }
    }
    if found.is_empty() {
        return Err(BadInput(format!(
            "{} is not a dbperf result directory: neither it nor any directory in it has a run.json",
            p.display()
        ))
        .into());
    }
    found.sort();
    Ok(found.into_iter().map(|(_, d)| d).collect())
}

/// When a target started, which orders the targets of a run directory as `dbperf run` was given
/// them. A run.json that does not read sorts first; reading it for the report says why.
fn started_at(d: &Path) -> String {
    results::read_run(d)
        .map(|r| r.started_at)
        .unwrap_or_default()
}

/// A run directory with a journal: its cells in plan order, those that left a result. Cells of
/// other shards, failed attempts kept aside (`.attempts`) and cells never started are not part
/// of it.
fn journal_dirs(p: &Path) -> anyhow::Result<Vec<(PathBuf, usize)>> {
    let j = read_journal(p)
        .map_err(|e| BadInput(format!("cannot read {}: {e:#}", p.join(JOURNAL).display())))?;
    let dirs: Vec<(PathBuf, usize)> = j
        .cells
        .iter()
        .filter(|c| !matches!(c.state, CellState::Elsewhere | CellState::Planned))
        .map(|c| (p.join(&c.id), c.order))
        .filter(|(d, _)| results::present(&d.join("run.json")))
        .collect();
    Ok(dirs)
}

/// The error for a run directory with no result yet, when no other input has one either.
fn no_cell_yet(p: &Path) -> anyhow::Error {
    let cells = read_journal(p).map(|j| j.cells.len()).unwrap_or(0);
    BadInput(format!(
        "{} has no finished cell yet (its campaign.json lists {cells} cells, none with a result)",
        p.display()
    ))
    .into()
}

fn load_target(dir: &Path) -> anyhow::Result<TargetResult> {
    // A suite this dbperf does not know is refused by run.json's reader (`suites::Suite`).
    let run = results::read_run(dir)?;
    let mut names: Vec<String> = run.steps_planned.clone();
    // Step files that were not planned (an older or hand-made result) are still shown.
    if let Ok(entries) = fs::read_dir(dir.join("steps")) {
        let mut extra: Vec<String> = entries
            .flatten()
            .filter_map(|e| e.file_name().into_string().ok())
            .filter(|n| !n.starts_with('.') && n.ends_with(".json"))
            .map(|n| n.trim_end_matches(".json").to_string())
            .filter(|n| !names.contains(n))
            .collect();
        extra.sort();
        names.extend(extra);
    }
    let mut steps = Vec::new();
    let mut warnings = Vec::new();
    for name in &names {
        let p = dir.join("steps").join(format!("{name}.json"));
        if !results::present(&p) {
            continue;
        }
        match results::read_step_file(&p) {
            Ok(f) => {
                warnings.extend(cap_not_held(&run, &f));
                let (s, w) = step_view(dir, run.suite, f);
                warnings.extend(w);
                steps.push(s);
            }
            Err(e) if crate::error::is_schema_too_new(&e) => return Err(e),
            Err(e) => warnings.push(format!(
                "{}: step {name} left out: {e}",
                super::target::shown_name(&run)
            )),
        }
    }
    Ok(TargetResult {
        dir: dir.to_path_buf(),
        run,
        steps,
        warnings,
        repeats: Vec::new(),
    })
}

/// The warning of a step whose server was not held to its memory cap, as the kernel said at
/// the end of the step (its `memory_cap`).
fn cap_not_held(run: &results::RunFile, f: &StepFile) -> Option<String> {
    let w = f.memory_cap.as_ref()?.warning()?;
    Some(format!(
        "{}: step {}: {w}",
        super::target::shown_name(run),
        f.step
    ))
}

/// The per-second series a step file names, or the warning why it cannot be read.
fn step_series(dir: &Path, f: &StepFile) -> (Option<Series>, Option<String>) {
    let Some(name) = &f.series_file else {
        return (None, None);
    };
    match results::beside(&dir.join("steps"), name).and_then(|p| read_series(&p)) {
        Ok(s) => (Some(s), None),
        Err(e) => (
            None,
            Some(format!(
                "{}: no per-second series for step {} ({e})",
                dir.display(),
                f.step
            )),
        ),
    }
}

/// Which CPU figures rest on few ticks: /proc counts CPU in 10 ms ticks, and under 100 of
/// them one tick moves a figure by 1% or more.
fn rough_cpu(hw: Option<&Hardware>) -> Vec<&'static str> {
    let few = |t: Option<u64>| t.is_some_and(|t| t < 100);
    let mut rough_cpu = Vec::new();
    if let Some(h) = hw {
        if few(h.host.as_ref().and_then(|x| x.busy_ticks)) {
            rough_cpu.push("host");
        }
        if few(h.server.as_ref().and_then(|x| x.ticks)) {
            rough_cpu.push("server");
        }
    }
    rough_cpu
}

/// The step's metrics by key: its hardware's, then the top-level numbers of its own `metrics`
/// object (a result written some other way).
fn step_metrics(f: &StepFile) -> BTreeMap<String, Option<f64>> {
    let mut metrics = hardware_metrics(f.hardware.as_ref());
    for (k, x) in f.metrics.iter().flatten() {
        match x {
            Value::Number(n) => {
                metrics.insert(k.clone(), n.as_f64());
            }
            Value::Null => {
                metrics.insert(k.clone(), None);
            }
            // Nested objects (counter groups and the like) are not table columns.
            _ => {}
        }
    }
    metrics
}

/// What the residency section reads of a step: its operations, reads, cache hits and size.
fn residency_evidence(
    f: &StepFile,
    metrics: &BTreeMap<String, Option<f64>>,
) -> crate::analysis::residency::Evidence {
    crate::analysis::residency::Evidence {
        ops: f.hardware.as_ref().map(|h| h.op_count),
        reads_per_op: metrics.get(Metric::RPerOp.key()).copied().flatten(),
        read_kb_per_op: metrics.get(Metric::RkbPerOp.key()).copied().flatten(),
        cache: f.dbms.as_ref().and_then(cache_hits),
        // What the DBMS reports as its data's size, else its directory's (dbgb1, dbgb2).
        data_bytes: [Metric::Dbgb1, Metric::Dbgb2]
            .iter()
            .find_map(|m| metrics.get(m.key()).copied().flatten().filter(|g| *g > 0.0))
            .map(|gib| gib * (1u64 << 30) as f64),
    }
}

/// What the report takes from a step file, and the per-second series it names.
pub(crate) fn step_view(
    dir: &Path,
    suite: crate::suites::Suite,
    f: StepFile,
) -> (StepView, Vec<String>) {
    let (series, warning) = step_series(dir, &f);
    let metrics = step_metrics(&f);
    let residency = residency_evidence(&f, &metrics);
    let hw = f.hardware.as_ref();
    let view = StepView {
        group: f.group,
        profiled: f.profile.is_some(),
        not_measured: hw.map(|h| h.missing.clone()).unwrap_or_default(),
        rough_cpu: rough_cpu(hw),
        devices: hw.map(|h| h.per_device.clone()).unwrap_or_default(),
        payload: f.payload,
        suite,
        name: f.step,
        status: f.status,
        error: f.error,
        warnings: f.warnings,
        duration_s: f.duration_s,
        headline: f.headline,
        parameters: f.parameters,
        ops: f.ops,
        rate_percentiles: f.interval_rate_percentiles,
        metrics,
        series,
        residency,
    };
    (view, warning.into_iter().collect())
}

/// Hits and misses of the DBMS's cache over the step, from its counters' deltas: MyRocks'
/// block cache where it was used, else InnoDB's buffer pool (read requests include the misses)
/// or PostgreSQL's shared_buffers.
fn cache_hits(d: &crate::results::hardware::DbmsCounters) -> Option<CacheHits> {
    let get = |k: &str| {
        d.delta
            .get(k)
            .copied()
            .filter(|v| v.is_finite() && *v >= 0.0)
    };
    let pair = |hits: Option<f64>, misses: Option<f64>| {
        Some(CacheHits {
            hits: hits?,
            misses: misses?,
        })
        .filter(|c| c.hits + c.misses > 0.0)
    };
    let rocks = pair(
        get("rocksdb_block_cache_hit"),
        get("rocksdb_block_cache_miss"),
    );
    let reads = get("innodb_buffer_pool_reads");
    let innodb = pair(
        get("innodb_buffer_pool_read_requests")
            .zip(reads)
            .map(|(all, r)| (all - r).max(0.0)),
        reads,
    );
    rocks
        .or(innodb)
        .or_else(|| pair(get("blks_hit"), get("blks_read")))
}

/// The step file's `hardware` object (docs/metrics.md, "Hardware cost per step") as the metric
/// keys the report's columns read: every `Metric` a report column shows (not ips and qps, which
/// the report takes from `ops`, nor what only the history keeps). A figure not measured stays a
/// key with no value; one whose section is absent (no `io`) is no key at all.
fn hardware_metrics(hw: Option<&Hardware>) -> BTreeMap<String, Option<f64>> {
    let Some(hw) = hw else {
        return BTreeMap::new();
    };
    Metric::ALL
        .into_iter()
        .filter(|m| m.column().is_some())
        .filter_map(|m| Some((m.key().to_string(), m.read(hw)?)))
        .collect()
}

/// Result files for unit tests: those release 3be8b90 wrote (tests/golden/), with the few
/// fields a test is about changed.
#[cfg(test)]
pub(crate) mod fixtures {
    use serde_json::Value;

    const RUN: &str =
        include_str!("../../tests/golden/release-3be8b90/ibench/sqlite.wal-normal/run.json");
    const STEP: &str =
        include_str!("../../tests/golden/release-3be8b90/ibench/sqlite.wal-normal/steps/l.i0.json");

    /// run.json of target `name`, planning only l.i0.
    pub fn run_json(name: &str, started: &str) -> Value {
        let mut v: Value = serde_json::from_str(RUN).unwrap();
        v["target"]["name"] = name.into();
        v["started_at"] = started.into();
        v["steps_planned"] = serde_json::json!(["l.i0"]);
        v["warnings"] = serde_json::json!([]);
        v
    }

    pub fn run_file(name: &str) -> crate::results::RunFile {
        serde_json::from_value(run_json(name, "2026-01-01T00:00:00Z")).unwrap()
    }

    /// A step file of `step` whose headline and insert rate are `v`, naming no series.
    pub fn named_step_json(step: &str, v: f64) -> Value {
        let mut s = step_json(v);
        s["step"] = step.into();
        s
    }

    /// An l.i0 step file whose headline and insert rate are `v`, naming no series.
    pub fn step_json(v: f64) -> Value {
        let mut s: Value = serde_json::from_str(STEP).unwrap();
        s["headline"]["value"] = v.into();
        s["ops"]["insert"]["ops_per_s"] = v.into();
        s["series_file"] = Value::Null;
        s
    }
}

#[cfg(test)]
mod tests {
    use super::fixtures::{run_json, step_json};
    use super::*;

    fn write(p: &Path, v: serde_json::Value) {
        fs::create_dir_all(p.parent().unwrap()).unwrap();
        fs::write(p, v.to_string()).unwrap();
    }

    #[test]
    fn a_run_directory_stands_for_its_targets_in_run_order() {
        let d = tempfile::tempdir().unwrap();
        write(
            &d.path().join("zz/run.json"),
            run_json("zz", "2026-01-01T00:00:01Z"),
        );
        write(
            &d.path().join("aa/run.json"),
            run_json("aa", "2026-01-01T00:00:02Z"),
        );
        fs::create_dir_all(d.path().join("work")).unwrap();
        let r = load(&[d.path().to_path_buf()]).unwrap();
        let names: Vec<&str> = r.iter().map(|t| t.name()).collect();
        assert_eq!(names, ["zz", "aa"]);
        // Given one by one, the order given wins.
        let r = load(&[d.path().join("aa"), d.path().join("zz")]).unwrap();
        let names: Vec<&str> = r.iter().map(|t| t.name()).collect();
        assert_eq!(names, ["aa", "zz"]);
    }

    #[test]
    fn bad_inputs_are_one_sentence_of_bad_input() {
        let d = tempfile::tempdir().unwrap();
        let check = |inputs: &[PathBuf], want: &str| {
            let e = load(inputs).unwrap_err();
            assert!(crate::error::is_bad_input(&e), "{e}");
            let s = e.to_string();
            assert!(s.contains(want), "{s}");
            assert!(!s.contains('\n'), "one sentence: {s}");
        };
        fs::create_dir_all(d.path().join("empty")).unwrap();
        check(
            &[d.path().join("empty")],
            "is not a dbperf result directory",
        );
        check(&[d.path().join("nope")], "does not exist");
        write(
            &d.path().join("future/run.json"),
            serde_json::json!({"schema": 99}),
        );
        check(
            &[d.path().join("future")],
            "newer than this dbperf understands",
        );
        write(&d.path().join("a/run.json"), run_json("same", "x"));
        write(&d.path().join("b/run.json"), run_json("same", "y"));
        check(
            &[d.path().join("a"), d.path().join("b")],
            "same target name same",
        );
        write(
            &d.path().join("c/run.json"),
            serde_json::json!({"schema": 1}),
        );
        check(&[d.path().join("c")], "does not match the result schema");
        let mut sb = run_json("sb", "x");
        sb["suite"] = "tpc-e".into();
        write(&d.path().join("s/run.json"), sb);
        check(&[d.path().join("s")], "cannot report");
        // A step file from the future is refused too, not skipped.
        write(&d.path().join("f/run.json"), run_json("f", "x"));
        let mut future = step_json(1.0);
        future["schema"] = 7.into();
        write(&d.path().join("f/steps/l.i0.json"), future);
        check(&[d.path().join("f")], "schema 7");
    }

    fn round_json(name: &str, round: u32, host: &str, cpu: &str) -> serde_json::Value {
        let mut r = run_json(name, &format!("2026-01-01T00:00:0{round}Z"));
        r["campaign"] = serde_json::json!({"campaign": "c", "cell": format!("{name}/r{round}"),
            "round": round, "rounds": 2, "attempt": 1});
        r["host"] = serde_json::json!({"hostname": host, "cpu_model": cpu, "cpus_online": 2});
        r
    }

    #[test]
    fn rounds_of_one_target_are_one_row_of_medians_and_a_round_twice_is_refused() {
        let d = tempfile::tempdir().unwrap();
        for (r, v) in [(1, 100.0), (2, 300.0), (3, 110.0)] {
            let dir = d.path().join(format!("t/r{r}"));
            write(&dir.join("run.json"), round_json("t", r, "h1", "x"));
            write(&dir.join("steps/l.i0.json"), step_json(v));
        }
        // No journal: the `<target>/r<k>` directories are found anyway.
        let all = load(&[d.path().to_path_buf()]).unwrap();
        assert_eq!(all.len(), 1);
        let t = &all[0];
        assert_eq!(t.repeats.len(), 3);
        assert_eq!(t.dir, d.path().join("t"));
        let s = t.step("l.i0").unwrap();
        assert_eq!(s.headline.value, 110.0);
        assert_eq!(s.ops["insert"].ops_per_s, 110.0);
        // The same round twice is not a repeat.
        let e = load(&[d.path().join("t/r1"), d.path().join("t/r1")]).unwrap_err();
        assert!(e.to_string().contains("same target name t"), "{e}");
    }

    #[test]
    fn unlike_hardware_is_refused_unless_allowed_then_rows_name_their_host() {
        let d = tempfile::tempdir().unwrap();
        write(
            &d.path().join("a/run.json"),
            round_json("t", 1, "h1", "EPYC"),
        );
        write(
            &d.path().join("b/run.json"),
            round_json("t", 2, "h2", "Xeon"),
        );
        // Alike hardware under two hostnames is one machine type: the rounds merge.
        write(
            &d.path().join("c/run.json"),
            round_json("t", 2, "h3", "EPYC"),
        );
        let all = load(&[d.path().join("a"), d.path().join("c")]).unwrap();
        assert_eq!(all.len(), 1);
        let inputs = [d.path().join("a"), d.path().join("b")];
        let e = load(&inputs).unwrap_err();
        assert!(crate::error::is_bad_input(&e));
        assert!(e.to_string().contains("--allow-mixed-hosts"), "{e}");
        assert!(e.to_string().contains("EPYC (h1) vs Xeon (h2)"), "{e}");
        let all = load_with(
            &inputs,
            LoadOptions {
                allow_mixed_hosts: true,
            },
        )
        .unwrap();
        let names: Vec<&str> = all.iter().map(|t| t.name()).collect();
        assert_eq!(names, ["t @h1", "t @h2"]);
    }

    #[test]
    fn hardware_cost_becomes_metric_columns() {
        let mut hw: Hardware = serde_json::from_value(step_json(5.0)["hardware"].clone()).unwrap();
        hw.ibench_row.cpupq = Some(12.5);
        hw.ibench_row.rss = None;
        hw.ibench_row.wpi = Some(0.25);
        hw.per_op.client_cpu_us = Some(4.0);
        hw.per_op.server_cpu_us = Some(f64::NAN);
        hw.sysbench_row.cpu_o = Some(0.01);
        let m = hardware_metrics(Some(&hw));
        assert_eq!(m.get("cpupq"), Some(&Some(12.5)));
        assert_eq!(m.get("wpi"), Some(&Some(0.25)));
        assert_eq!(m.get("rss_gb"), Some(&None));
        assert_eq!(m.get("client_cpu_us_per_op"), Some(&Some(4.0)));
        assert_eq!(
            m.get("server_cpu_us_per_op"),
            Some(&None),
            "NaN is not measured"
        );
        assert_eq!(m.get("cpu_per_op"), Some(&Some(0.01)));
        assert!(m.contains_key("util_pct"));
        assert!(!m.contains_key("ips") && !m.contains_key("qps") && !m.contains_key("o_s"));
        assert!(
            !m.contains_key("read_kb_per_op"),
            "history's name, no column"
        );
        hw.io = None;
        let m = hardware_metrics(Some(&hw));
        assert!(!m.contains_key("util_pct"), "no io section: no key");
        assert!(hardware_metrics(None).is_empty());
    }

    #[test]
    fn an_unreadable_step_is_a_warning_and_metrics_are_read_as_they_come() {
        let d = tempfile::tempdir().unwrap();
        let mut r = run_json("t", "x");
        r["steps_planned"] = serde_json::json!(["l.i0", "l.x"]);
        write(&d.path().join("t/run.json"), r);
        let mut step = step_json(5.0);
        step["metrics"] = serde_json::json!({"cpupq": 12.5, "rss_gb": null, "counters": {"x": 1}});
        step["hardware"]["host"]["busy_ticks"] = 12.into();
        step["hardware"]["server"] = step["hardware"]["client"].clone();
        step["hardware"]["server"]["ticks"] = 500.into();
        step["some_future_field"] = serde_json::json!([1, 2]);
        write(&d.path().join("t/steps/l.i0.json"), step);
        fs::write(d.path().join("t/steps/l.x.json"), "{not json").unwrap();
        let t = load(&[d.path().join("t")]).unwrap().remove(0);
        assert_eq!(t.steps.len(), 1);
        assert!(
            t.warnings[0].contains("step l.x left out"),
            "{:?}",
            t.warnings
        );
        let m = &t.steps[0].metrics;
        assert_eq!(m.get("cpupq"), Some(&Some(12.5)));
        assert_eq!(m.get("rss_gb"), Some(&None));
        assert!(!m.contains_key("counters"));
        assert_eq!(
            t.steps[0].rough_cpu,
            ["host"],
            "12 ticks are rough, 500 are not"
        );
    }
}
