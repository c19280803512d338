//! Reading result directories for a report. Strict about what would make a comparison wrong (not
//! a result, a schema from the future, two results with one name), tolerant of everything else:
//! fields this dbperf does not know are ignored or shown as they come (hardware metrics, other
//! suites), and a step file that cannot be read becomes a gap with a warning, not an abort.

use std::collections::BTreeMap;
use std::fs;
use std::path::{Path, PathBuf};

use serde::Deserialize;
use serde_json::Value;

use crate::error::BadInput;
use crate::results::SCHEMA;

/// One target's result: `run.json` plus its step files, in the order they were planned.
#[derive(Debug, Clone)]
pub struct TargetResult {
    pub dir: PathBuf,
    pub run: RunView,
    pub steps: Vec<StepView>,
    /// Problems met while reading (unreadable step file, missing series): said in the report.
    pub warnings: Vec<String>,
}

impl TargetResult {
    pub fn name(&self) -> &str {
        &self.run.target.name
    }

    pub fn step(&self, name: &str) -> Option<&StepView> {
        self.steps.iter().find(|s| s.name == name)
    }

    /// Planned but without a step file: the target stopped before it (failed or interrupted).
    pub fn planned(&self, name: &str) -> bool {
        self.run.steps_planned.iter().any(|s| s == name)
    }
}

#[derive(Debug, Clone, Deserialize)]
pub struct RunView {
    pub schema: u64,
    #[serde(default)]
    pub tool: Option<ToolView>,
    pub target: TargetView,
    #[serde(default = "ibench")]
    pub suite: String,
    #[serde(default)]
    pub preset: String,
    #[serde(default)]
    pub parameters: Value,
    #[serde(default)]
    pub steps_planned: Vec<String>,
    #[serde(default)]
    pub host: Value,
    #[serde(default)]
    pub started_at: String,
    #[serde(default)]
    pub ended_at: Option<String>,
    #[serde(default)]
    pub status: String,
    #[serde(default)]
    pub failed_step: Option<String>,
    #[serde(default)]
    pub error: Option<String>,
    #[serde(default)]
    pub client_peak_rss_kb: Option<u64>,
    #[serde(default)]
    pub warnings: Vec<String>,
}

fn ibench() -> String {
    "ibench".into()
}

#[derive(Debug, Clone, Deserialize)]
pub struct ToolView {
    #[serde(default)]
    pub version: String,
    #[serde(default)]
    pub git_revision: String,
}

#[derive(Debug, Clone, Deserialize)]
pub struct TargetView {
    pub name: String,
    #[serde(default)]
    pub engine: String,
    #[serde(default)]
    pub version: String,
    #[serde(default)]
    pub config_name: String,
    #[serde(default)]
    pub config_text: String,
}

#[derive(Debug, Clone, Deserialize)]
pub struct Headline {
    #[serde(default)]
    pub metric: String,
    pub value: f64,
    #[serde(default)]
    pub unit: String,
}

#[derive(Debug, Clone, Deserialize)]
pub struct LatencyView {
    #[serde(default)]
    pub mean: f64,
    #[serde(default)]
    pub p50: f64,
    #[serde(default)]
    pub p90: f64,
    #[serde(default)]
    pub p99: f64,
    #[serde(default)]
    pub p99_9: f64,
    #[serde(default)]
    pub p99_99: f64,
    #[serde(default)]
    pub max: f64,
}

#[derive(Debug, Clone, Deserialize)]
pub struct OpView {
    #[serde(default)]
    pub count: u64,
    #[serde(default)]
    pub rows: u64,
    #[serde(default)]
    pub errors: u64,
    #[serde(default)]
    pub ops_per_s: f64,
    #[serde(default)]
    pub rows_per_s: f64,
    #[serde(default)]
    pub latency_us: Option<LatencyView>,
    #[serde(default)]
    pub service_us: Option<LatencyView>,
    #[serde(default)]
    pub ibench_buckets: Option<crate::results::IbenchBuckets>,
    #[serde(default)]
    pub max_ms: Option<f64>,
}

#[derive(Debug, Clone, Deserialize)]
pub struct SlaView {
    pub target_rows_per_s: f64,
    pub achieved_rows_per_s: f64,
    #[serde(default)]
    pub ratio: f64,
    #[serde(default = "required_ratio")]
    pub required_ratio: f64,
    #[serde(default)]
    pub met: Option<bool>,
}

fn required_ratio() -> f64 {
    0.95
}

#[derive(Debug, Clone, Deserialize)]
struct StepFileView {
    step: String,
    #[serde(default)]
    status: String,
    #[serde(default)]
    error: Option<String>,
    #[serde(default)]
    warnings: Vec<String>,
    #[serde(default)]
    duration_s: f64,
    #[serde(default)]
    headline: Option<Headline>,
    #[serde(default)]
    parameters: Value,
    #[serde(default)]
    ops: BTreeMap<String, OpView>,
    #[serde(default)]
    interval_rate_percentiles: BTreeMap<String, Option<f64>>,
    #[serde(default)]
    sla: Option<SlaView>,
    #[serde(default)]
    metrics: Value,
    #[serde(default)]
    hardware: Value,
    #[serde(default)]
    group: Option<String>,
    #[serde(default)]
    qps: Option<f64>,
    #[serde(default)]
    series_file: Option<String>,
    /// sysbench steps as dbperf writes them: `group`, `reported`, ... (docs/sysbench.md).
    #[serde(default)]
    sysbench: Value,
}

/// One step as a report needs it.
#[derive(Debug, Clone)]
pub struct StepView {
    pub name: String,
    /// ok | failed | interrupted
    pub status: String,
    pub error: Option<String>,
    pub warnings: Vec<String>,
    pub duration_s: f64,
    pub headline: Option<Headline>,
    pub parameters: Value,
    pub ops: BTreeMap<String, OpView>,
    pub rate_percentiles: BTreeMap<String, Option<f64>>,
    pub sla: Option<SlaView>,
    /// Hardware cost per operation and the like: the step's `hardware` object mapped to metric
    /// keys, and the top-level numbers of a `metrics` object; None = not measured.
    pub metrics: BTreeMap<String, Option<f64>>,
    /// Why hardware figures are missing (`hardware.missing`), e.g. no server CPU for SQLite.
    pub not_measured: Vec<String>,
    /// sysbench: the summary group the result names (docs/report.md).
    pub group: Option<String>,
    /// sysbench: a `qps` field, used when there is no headline.
    pub qps: Option<f64>,
    /// sysbench: false for the original's unreported warm-up runs (`.warm`, `.warmpre`).
    pub reported: bool,
    pub series: Option<Series>,
}

impl StepView {
    pub fn ok(&self) -> bool {
        self.status == "ok"
    }
}

/// The columns of a step's per-second series a report draws: per operation type its rate and
/// its largest latency in each second.
#[derive(Debug, Clone, Default)]
pub struct Series {
    /// End of each row, seconds from the step start.
    pub t: Vec<f64>,
    /// Length of each row, seconds: 1 except the last, partial one.
    pub dt: Vec<f64>,
    /// Whether the row is a full second.
    pub full: Vec<bool>,
    pub kinds: Vec<KindSeries>,
    /// qr/qp: the background insert target, rows/s.
    pub target_rows_per_s: Option<f64>,
}

#[derive(Debug, Clone)]
pub struct KindSeries {
    pub kind: String,
    /// Rows/s for insert and delete (the original's i_ips, i_dps), operations/s otherwise.
    pub rate: Vec<f64>,
    /// Largest latency in the second, ms; NaN when none completed.
    pub max_ms: Vec<f64>,
}

impl Series {
    pub fn kind(&self, k: &str) -> Option<&KindSeries> {
        self.kinds.iter().find(|x| x.kind == k)
    }
}

/// Reads every input, each a target's result directory (`R/<target>`, holding run.json) or a run
/// directory (`R`, every target in it, in the order they ran). Row order is the order given.
pub fn load(inputs: &[PathBuf]) -> anyhow::Result<Vec<TargetResult>> {
    let mut dirs: Vec<PathBuf> = Vec::new();
    for p in inputs {
        dirs.extend(target_dirs(p)?);
    }
    let mut results: Vec<Option<anyhow::Result<TargetResult>>> = Vec::new();
    results.resize_with(dirs.len(), || None);
    // Targets are independent: read them on every core (series CSVs dominate the time).
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
    let mut out: Vec<TargetResult> = Vec::new();
    for r in results {
        let t = r.expect("every target was read")?;
        if let Some(prev) = out.iter().find(|x| x.name() == t.name()) {
            return Err(BadInput(format!(
                "two results have the same target name {} ({} and {}); a report needs distinct names",
                t.name(),
                prev.dir.display(),
                t.dir.display()
            ))
            .into());
        }
        out.push(t);
    }
    Ok(out)
}

/// The target directories an input stands for.
fn target_dirs(p: &Path) -> anyhow::Result<Vec<PathBuf>> {
    if p.join("run.json").is_file() {
        return Ok(vec![p.to_path_buf()]);
    }
    if !p.exists() {
        return Err(BadInput(format!("{} does not exist", p.display())).into());
    }
    let mut found: Vec<(String, PathBuf)> = Vec::new();
    if let Ok(entries) = fs::read_dir(p) {
        for e in entries.flatten() {
            let d = e.path();
            if d.join("run.json").is_file() {
                // Ordered by when each target started, which is the order `dbperf run` was given.
                let started = read_json(&d.join("run.json"))
                    .ok()
                    .and_then(|v| {
                        v.get("started_at")
                            .and_then(|s| s.as_str())
                            .map(String::from)
                    })
                    .unwrap_or_default();
                found.push((started, d));
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

fn read_json(path: &Path) -> anyhow::Result<Value> {
    let text = fs::read_to_string(path)
        .map_err(|e| BadInput(format!("cannot read {}: {e}", path.display())))?;
    serde_json::from_str(&text)
        .map_err(|e| BadInput(format!("{} is not a dbperf result: {e}", path.display())).into())
}

/// Refuses files from a newer dbperf and files that are not results at all.
fn check_schema(path: &Path, v: &Value) -> anyhow::Result<()> {
    match v.get("schema").and_then(|s| s.as_u64()) {
        Some(s) if s <= SCHEMA as u64 => Ok(()),
        Some(s) => Err(BadInput(format!(
            "{} has result schema {s}, newer than this dbperf understands ({SCHEMA}); upgrade dbperf to report it",
            path.display()
        ))
        .into()),
        None => Err(BadInput(format!(
            "{} is not a dbperf result (it has no schema field)",
            path.display()
        ))
        .into()),
    }
}

fn load_target(dir: &Path) -> anyhow::Result<TargetResult> {
    let path = dir.join("run.json");
    let v = read_json(&path)?;
    check_schema(&path, &v)?;
    let run: RunView = serde_json::from_value(v).map_err(|e| {
        BadInput(format!(
            "{} does not match the result schema: {e}",
            path.display()
        ))
    })?;
    if run.suite != "ibench" && run.suite != "sysbench" {
        return Err(BadInput(format!(
            "{} is a result of suite {:?}, which this dbperf cannot report; upgrade dbperf",
            path.display(),
            run.suite
        ))
        .into());
    }
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
        if !p.is_file() {
            continue;
        }
        match load_step(dir, &p) {
            Ok((s, w)) => {
                warnings.extend(w);
                steps.push(s);
            }
            Err(e) if crate::error::is_bad_input(&e) && e.to_string().contains("newer than") => {
                return Err(e)
            }
            Err(e) => warnings.push(format!("{}: step {name} left out: {e}", run.target.name)),
        }
    }
    Ok(TargetResult {
        dir: dir.to_path_buf(),
        run,
        steps,
        warnings,
    })
}

fn load_step(dir: &Path, path: &Path) -> anyhow::Result<(StepView, Vec<String>)> {
    let v = read_json(path)?;
    check_schema(path, &v)?;
    let f: StepFileView = serde_json::from_value(v)
        .map_err(|e| anyhow::anyhow!("{} does not match the result schema: {e}", path.display()))?;
    let mut warnings = Vec::new();
    let series = match &f.series_file {
        Some(name) => {
            let p = dir.join("steps").join(name);
            match fs::read_to_string(&p) {
                Ok(text) => Some(parse_series(&text)),
                Err(e) => {
                    warnings.push(format!(
                        "{}: no per-second series for step {} ({e})",
                        dir.display(),
                        f.step
                    ));
                    None
                }
            }
        }
        None => None,
    };
    let mut metrics = hardware_metrics(&f.hardware);
    let not_measured = f
        .hardware
        .get("missing")
        .and_then(|m| m.as_array())
        .map(|a| {
            a.iter()
                .filter_map(|x| x.as_str().map(String::from))
                .collect()
        })
        .unwrap_or_default();
    if let Value::Object(m) = &f.metrics {
        for (k, x) in m {
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
    }
    Ok((
        StepView {
            name: f.step,
            status: if f.status.is_empty() {
                "ok".into()
            } else {
                f.status
            },
            error: f.error,
            warnings: f.warnings,
            duration_s: f.duration_s,
            headline: f.headline,
            parameters: f.parameters,
            ops: f.ops,
            rate_percentiles: f.interval_rate_percentiles,
            sla: f.sla,
            metrics,
            not_measured,
            // dbperf writes the group inside the step's `sysbench` object; a top-level `group`
            // is read too.
            group: f
                .sysbench
                .get("group")
                .and_then(|g| g.as_str())
                .map(String::from)
                .or(f.group),
            qps: f.qps,
            reported: f
                .sysbench
                .get("reported")
                .and_then(|r| r.as_bool())
                .unwrap_or(true),
            series,
        },
        warnings,
    ))
}

/// The step file's `hardware` object (docs/metrics.md, "Hardware cost per step") as the metric
/// keys the report's columns read: the original's summary columns from `ibench_row` (not ips
/// and qps, which the report takes from `ops`), client and server CPU per op from `per_op`, and
/// the sysbench columns from `sysbench_row`. A null stays a key with no value.
fn hardware_metrics(hw: &Value) -> BTreeMap<String, Option<f64>> {
    const MAP: &[(&str, &str, &str)] = &[
        ("ibench_row", "rps", "rps"),
        ("ibench_row", "rmbps", "rmbps"),
        ("ibench_row", "wps", "wps"),
        ("ibench_row", "wmbps", "wmbps"),
        ("ibench_row", "rpq", "rpq"),
        ("ibench_row", "rkbpq", "rkbpq"),
        ("ibench_row", "wpi", "wpi"),
        ("ibench_row", "wkbpi", "wkbpi"),
        ("ibench_row", "csps", "csps"),
        ("ibench_row", "cpups", "cpups"),
        ("ibench_row", "cspq", "cspq"),
        ("ibench_row", "cpupq", "cpupq"),
        ("ibench_row", "dbgb1", "dbgb1"),
        ("ibench_row", "dbgb2", "dbgb2"),
        ("ibench_row", "rss", "rss_gb"),
        ("per_op", "client_cpu_us", "client_cpu_us_per_op"),
        ("per_op", "server_cpu_us", "server_cpu_us_per_op"),
        ("sysbench_row", "cpu_o", "cpu_per_op"),
        ("sysbench_row", "cs_o", "cs_per_op"),
        ("sysbench_row", "r_o", "r_per_op"),
        ("sysbench_row", "rkb_o", "rkb_per_op"),
        ("sysbench_row", "wkb_o", "wkb_per_op"),
    ];
    let mut out = BTreeMap::new();
    for (group, field, key) in MAP {
        if let Some(v) = hw.get(group).and_then(|g| g.get(field)) {
            match v {
                Value::Number(n) => {
                    out.insert(key.to_string(), n.as_f64());
                }
                Value::Null => {
                    out.insert(key.to_string(), None);
                }
                _ => {}
            }
        }
    }
    out
}

/// Parses only the columns a report draws; unknown columns are skipped, empty cells are NaN.
pub fn parse_series(text: &str) -> Series {
    let mut lines = text.lines();
    let header: Vec<&str> = lines.next().unwrap_or("").split(',').collect();
    let col = |name: &str| header.iter().position(|h| *h == name);
    let interval = col("interval_s");
    let target = col("target_rows_per_s");
    // Kinds in header order; rows/s for the row-moving kinds, operations/s for the rest.
    let mut kinds: Vec<(String, usize, Option<usize>)> = Vec::new();
    for h in &header {
        if let Some(k) = h.strip_suffix("_ops_per_s") {
            let rate_col = if k == "insert" || k == "delete" {
                col(&format!("{k}_rows_per_s"))
            } else {
                None
            }
            .or_else(|| col(h));
            if let Some(rc) = rate_col {
                kinds.push((k.to_string(), rc, col(&format!("{k}_max_us"))));
            }
        }
    }
    let mut s = Series {
        kinds: kinds
            .iter()
            .map(|(k, _, _)| KindSeries {
                kind: k.clone(),
                rate: Vec::new(),
                max_ms: Vec::new(),
            })
            .collect(),
        ..Series::default()
    };
    let wanted = header.len();
    let mut fields: Vec<&str> = Vec::with_capacity(wanted);
    let num =
        |x: Option<&&str>| -> f64 { x.and_then(|v| v.parse::<f64>().ok()).unwrap_or(f64::NAN) };
    let mut t = 0.0;
    for line in lines {
        if line.is_empty() {
            continue;
        }
        fields.clear();
        fields.extend(line.split(','));
        let dt = interval.map(|i| num(fields.get(i))).unwrap_or(1.0);
        let dt = if dt.is_finite() { dt } else { 1.0 };
        t += dt;
        s.t.push(t);
        s.dt.push(dt);
        s.full.push(dt >= 0.999);
        for ((_, rc, mc), ks) in kinds.iter().zip(s.kinds.iter_mut()) {
            ks.rate.push(num(fields.get(*rc)));
            let m = mc.map(|i| num(fields.get(i)) / 1000.0).unwrap_or(f64::NAN);
            ks.max_ms.push(if m > 0.0 { m } else { f64::NAN });
        }
        if s.target_rows_per_s.is_none() {
            if let Some(ti) = target {
                let v = num(fields.get(ti));
                if v.is_finite() {
                    s.target_rows_per_s = Some(v);
                }
            }
        }
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn series_keeps_rates_and_max_latency_per_kind() {
        let csv = "second,interval_s,insert_ops_per_s,insert_rows_per_s,insert_errors,insert_p99_us,insert_max_us,query_ops_per_s,query_rows_per_s,query_errors,query_p99_us,query_max_us,target_rows_per_s,achieved_rows_per_s\n\
                   1,1.000,2.0,100.0,0,5360.3,5360.3,134845.0,1347968.0,0,9.1,1372.6,100.0,100.0\n\
                   2,0.250,0.0,0.0,0,0.0,0.0,4.0,40.0,0,9.1,20.0,100.0,0.0\n";
        let s = parse_series(csv);
        assert_eq!(s.t, vec![1.0, 1.25]);
        assert_eq!(s.full, vec![true, false]);
        assert_eq!(s.target_rows_per_s, Some(100.0));
        let ins = s.kind("insert").unwrap();
        assert_eq!(ins.rate, vec![100.0, 0.0]);
        assert!((ins.max_ms[0] - 5.3603).abs() < 1e-9);
        assert!(ins.max_ms[1].is_nan(), "no insert completed: no latency");
        let q = s.kind("query").unwrap();
        assert_eq!(q.rate, vec![134845.0, 4.0], "queries/s, not rows/s");
    }

    fn write(p: &Path, v: serde_json::Value) {
        fs::create_dir_all(p.parent().unwrap()).unwrap();
        fs::write(p, v.to_string()).unwrap();
    }

    fn run_json(name: &str, started: &str) -> serde_json::Value {
        serde_json::json!({
            "schema": 1, "target": {"name": name, "engine": "sqlite"},
            "suite": "ibench", "steps_planned": ["l.i0"], "started_at": started, "status": "ok"
        })
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
        sb["suite"] = "tpcc".into();
        write(&d.path().join("s/run.json"), sb);
        check(&[d.path().join("s")], "cannot report");
        // A step file from the future is refused too, not skipped.
        write(&d.path().join("f/run.json"), run_json("f", "x"));
        write(
            &d.path().join("f/steps/l.i0.json"),
            serde_json::json!({"schema": 7, "step": "l.i0"}),
        );
        check(&[d.path().join("f")], "schema 7");
    }

    #[test]
    fn hardware_cost_becomes_metric_columns() {
        let hw = serde_json::json!({
            "ibench_row": {"ips": 5.0, "qps": null, "cpupq": 12.5, "rss": null, "wpi": 0.25},
            "per_op": {"host_cpu_us": 11.0, "client_cpu_us": 4.0, "server_cpu_us": null},
            "sysbench_row": {"cpu_o": 0.01, "o_s": 5.0},
            "missing": ["server CPU: embedded"]
        });
        let m = hardware_metrics(&hw);
        assert_eq!(m.get("cpupq"), Some(&Some(12.5)));
        assert_eq!(m.get("wpi"), Some(&Some(0.25)));
        assert_eq!(m.get("rss_gb"), Some(&None));
        assert_eq!(m.get("client_cpu_us_per_op"), Some(&Some(4.0)));
        assert_eq!(m.get("server_cpu_us_per_op"), Some(&None));
        assert_eq!(m.get("cpu_per_op"), Some(&Some(0.01)));
        assert!(!m.contains_key("ips") && !m.contains_key("qps") && !m.contains_key("o_s"));
        assert!(hardware_metrics(&Value::Null).is_empty());
    }

    #[test]
    fn an_unreadable_step_is_a_warning_and_metrics_are_read_as_they_come() {
        let d = tempfile::tempdir().unwrap();
        let mut r = run_json("t", "x");
        r["steps_planned"] = serde_json::json!(["l.i0", "l.x"]);
        write(&d.path().join("t/run.json"), r);
        write(
            &d.path().join("t/steps/l.i0.json"),
            serde_json::json!({"schema": 1, "step": "l.i0", "status": "ok",
                "headline": {"metric": "inserts_per_s", "value": 5.0, "unit": "rows/s"},
                "metrics": {"cpupq": 12.5, "rss_gb": null, "counters": {"x": 1}},
                "some_future_field": [1, 2]}),
        );
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
    }
}
