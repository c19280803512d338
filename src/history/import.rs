//! From a target's result directory to history rows: the run (who, what build, which host, when)
//! and its measurements, one per step x operation x metric (docs/history.md, "Metrics").

use std::path::{Path, PathBuf};

use sha2::{Digest, Sha256};

use crate::analysis::variance;
use crate::error::BadInput;
use crate::results::metric::Metric;
use crate::results::series::{read_series, Series};
use crate::results::{self, RunFile, StepFile};

/// One run of one target, as the `dbperf_runs` table holds it.
#[derive(Debug, Clone, PartialEq)]
pub struct RunRecord {
    /// sha256 of target name, start time and dbperf revision: the same run imported twice is
    /// recognised, wherever its directory was copied to.
    pub run_id: String,
    pub target: String,
    pub engine: String,
    pub version: String,
    /// The build's identity: `engine@version (origin, sha256)` for a cached build, else the
    /// version the engine reported.
    pub build: String,
    pub config_name: String,
    pub host_fingerprint: String,
    pub hostname: Option<String>,
    pub suite: String,
    pub preset: String,
    pub campaign: Option<String>,
    pub round: Option<u32>,
    /// Normalised to nanosecond digits, so text order is time order.
    pub started_at: String,
    pub ended_at: Option<String>,
    pub status: String,
    pub tool_version: String,
    pub tool_revision: String,
    pub source: String,
}

#[derive(Debug, Clone, PartialEq)]
pub struct Measurement {
    pub step: String,
    /// Operation type (`insert`, `query`, ...) or "" for a figure of the whole step.
    pub op: String,
    pub metric: String,
    pub value: f64,
    pub unit: String,
}

pub struct Imported {
    pub run: RunRecord,
    pub rows: Vec<Measurement>,
    /// Steps not imported (failed, interrupted, never written), with why.
    pub skipped: Vec<String>,
}

/// Every target result directory under `p`: `p` itself when it holds run.json, else the
/// directories below it (a run directory, a campaign's cells), three levels deep at most.
pub fn target_dirs(p: &Path) -> anyhow::Result<Vec<PathBuf>> {
    if !p.is_dir() {
        return Err(BadInput(format!("{} is not a directory", p.display())).into());
    }
    let mut out = Vec::new();
    walk(p, 0, &mut out)?;
    if out.is_empty() {
        return Err(BadInput(format!(
            "{} holds no dbperf result (no run.json in it or below it)",
            p.display()
        ))
        .into());
    }
    out.sort();
    Ok(out)
}

fn walk(p: &Path, depth: u32, out: &mut Vec<PathBuf>) -> anyhow::Result<()> {
    if results::present(&p.join("run.json")) {
        out.push(p.to_path_buf());
        return Ok(());
    }
    if depth >= 3 {
        return Ok(());
    }
    let entries =
        std::fs::read_dir(p).map_err(|e| BadInput(format!("cannot read {}: {e}", p.display())))?;
    for e in entries.flatten() {
        let path = e.path();
        // Servers' data directories (`work/`) hold no results and can be large.
        if e.file_type().is_ok_and(|t| t.is_dir()) && e.file_name() != "work" {
            walk(&path, depth + 1, out)?;
        }
    }
    Ok(())
}

pub fn read(dir: &Path) -> anyhow::Result<Imported> {
    let run = results::read_run(dir)?;
    let record = run_record(&run, dir);
    let mut rows = Vec::new();
    let mut skipped = Vec::new();
    let mut seen = std::collections::BTreeSet::new();
    for step in &run.steps_planned {
        if !seen.insert(step.as_str()) {
            continue;
        }
        if !results::present(&dir.join("steps").join(format!("{step}.json"))) {
            skipped.push(format!("{step}: not run"));
            continue;
        }
        let s = results::read_step(dir, step)?;
        if s.status != "ok" {
            skipped.push(format!("{step}: {}", s.status));
            continue;
        }
        // A series that cannot be read (missing, damaged, not a plain name beside the step
        // file, over the caps) only costs the step its `cv_per_s`, as the report shows no chart.
        let series = match s
            .series_file
            .as_ref()
            .map(|f| results::beside(&dir.join("steps"), f).and_then(|p| read_series(&p)))
        {
            Some(Ok(series)) => Some(series),
            Some(Err(e)) => {
                skipped.push(format!("{step}: per-second series left out: {e}"));
                None
            }
            None => None,
        };
        step_rows(&s, series.as_ref(), &mut rows);
    }
    Ok(Imported {
        run: record,
        rows,
        skipped,
    })
}

fn run_record(run: &RunFile, dir: &Path) -> RunRecord {
    let t = &run.target;
    let id = hex(&Sha256::digest(
        format!("{}\n{}\n{}", t.name, run.started_at, run.tool.git_revision).as_bytes(),
    ));
    RunRecord {
        run_id: id[..32].to_string(),
        target: t.name.clone(),
        engine: t.engine.clone(),
        version: t.version.clone(),
        build: build_of(run),
        config_name: t.config_name.clone(),
        host_fingerprint: host_fingerprint(&run.host),
        hostname: run
            .host
            .get("hostname")
            .and_then(|h| h.as_str())
            .map(String::from),
        suite: run.suite.name().to_string(),
        preset: run.preset.clone(),
        campaign: run.campaign.as_ref().and_then(|c| c.campaign.clone()),
        round: run.campaign.as_ref().map(|c| c.round),
        started_at: normalise_time(&run.started_at),
        ended_at: run.ended_at.as_deref().map(normalise_time),
        status: run.status.as_str().to_string(),
        tool_version: run.tool.version.clone(),
        tool_revision: run.tool.git_revision.clone(),
        source: std::fs::canonicalize(dir)
            .unwrap_or_else(|_| dir.to_path_buf())
            .display()
            .to_string(),
    }
}

/// `target.build` names a cached build by engine, version and the sha256 of its download; a
/// build from elsewhere is known by the version it reports.
fn build_of(run: &RunFile) -> String {
    let Some(b) = &run.target.build else {
        return run.target.version.clone();
    };
    let s = |k: &str| b.get(k).and_then(|v| v.as_str());
    let mut out = match (s("engine"), s("version")) {
        (Some(e), Some(v)) => format!("{e}@{v}"),
        _ => run.target.version.clone(),
    };
    let mut about: Vec<&str> = Vec::new();
    if let Some(f) = s("family") {
        about.push(f);
    }
    if let Some(sha) = s("sha256") {
        about.push(&sha[..sha.len().min(12)]);
    }
    if !about.is_empty() {
        out.push_str(&format!(" ({})", about.join(", ")));
    }
    out
}

/// sha256 (first 16 hex digits) of the host as it was set up, without what belongs to one run:
/// `during_run`, the warnings, and the result directory's path in `storage`.
pub fn host_fingerprint(host: &serde_json::Value) -> String {
    let mut h = host.clone();
    if let Some(o) = h.as_object_mut() {
        o.remove("during_run");
        o.remove("warnings");
        if let Some(st) = o.get_mut("storage").and_then(|s| s.as_array_mut()) {
            for s in st {
                if let Some(so) = s.as_object_mut() {
                    so.remove("path");
                }
            }
        }
    }
    let mut text = String::new();
    canonical(&h, &mut text);
    hex(&Sha256::digest(text.as_bytes()))[..16].to_string()
}

/// JSON with object keys sorted, whatever order the file had them in.
fn canonical(v: &serde_json::Value, out: &mut String) {
    match v {
        serde_json::Value::Object(o) => {
            let mut keys: Vec<&String> = o.keys().collect();
            keys.sort();
            out.push('{');
            for (i, k) in keys.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                out.push_str(&serde_json::Value::String((*k).clone()).to_string());
                out.push(':');
                canonical(&o[*k], out);
            }
            out.push('}');
        }
        serde_json::Value::Array(a) => {
            out.push('[');
            for (i, x) in a.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                canonical(x, out);
            }
            out.push(']');
        }
        other => out.push_str(&other.to_string()),
    }
}

fn hex(b: &[u8]) -> String {
    b.iter().map(|x| format!("{x:02x}")).collect()
}

/// `2026-11-24T12:13:15.5Z` -> `2026-11-24T12:13:15.500000000Z`: dbperf writes UTC with up to
/// nine fraction digits, and text comparison is only time order at a fixed width.
pub fn normalise_time(t: &str) -> String {
    let Some(body) = t.strip_suffix('Z') else {
        return t.to_string();
    };
    let (whole, frac) = body.split_once('.').unwrap_or((body, ""));
    if whole.len() != 19 || frac.len() > 9 || !frac.bytes().all(|b| b.is_ascii_digit()) {
        return t.to_string();
    }
    format!("{whole}.{frac:0<9}Z")
}

fn push(
    rows: &mut Vec<Measurement>,
    step: &str,
    op: &str,
    metric: &str,
    v: Option<f64>,
    unit: &str,
) {
    if let Some(value) = v.filter(|x| x.is_finite()) {
        rows.push(Measurement {
            step: step.to_string(),
            op: op.to_string(),
            metric: metric.to_string(),
            value,
            unit: unit.to_string(),
        });
    }
}

/// The hardware figures history keeps per step (docs/history.md, "Metrics"), each with its unit
/// before "per <op>".
const HARDWARE: [(Metric, &str); 6] = [
    (Metric::HostCpuUsPerOp, "us "),
    (Metric::ClientCpuUsPerOp, "us "),
    (Metric::ServerCpuUsPerOp, "us "),
    (Metric::CsPerOp, ""),
    (Metric::ReadKbPerOp, "KB "),
    (Metric::WriteKbPerOp, "KB "),
];

fn step_rows(s: &StepFile, parsed: Option<&Series>, rows: &mut Vec<Measurement>) {
    let st = s.step.as_str();
    push(
        rows,
        st,
        "",
        "headline",
        Some(s.headline.value),
        &s.headline.unit,
    );
    push(rows, st, "", "duration_s", Some(s.duration_s), "s");
    if let Some(hw) = &s.hardware {
        let per = format!("per {}", hw.op);
        for (m, unit) in HARDWARE {
            push(rows, st, "", m.key(), m.value(hw), &format!("{unit}{per}"));
        }
    }
    for (op, o) in &s.ops {
        push(rows, st, op, "ops_per_s", Some(o.ops_per_s), "ops/s");
        if o.rows != o.count {
            push(rows, st, op, "rows_per_s", Some(o.rows_per_s), "rows/s");
        }
        if o.count > 0 {
            push(rows, st, op, "p50_us", Some(o.latency_us.p50), "us");
            push(rows, st, op, "p99_us", Some(o.latency_us.p99), "us");
            push(rows, st, op, "p99_9_us", Some(o.latency_us.p99_9), "us");
            push(rows, st, op, "max_us", Some(o.latency_us.max), "us");
        }
        // How steady the rate was inside the run: a change here is a change in spread that
        // the run's mean hides.
        let cv = parsed.and_then(|p| {
            let k = p.kind(op)?;
            let full: Vec<f64> = k
                .rate
                .iter()
                .zip(&p.full)
                .filter(|(v, f)| **f && v.is_finite())
                .map(|(v, _)| *v)
                .collect();
            variance::of(&full)?.cv
        });
        push(rows, st, op, "cv_per_s", cv, "ratio");
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn times_sort_as_text() {
        let a = normalise_time("2026-11-24T12:13:15.5Z");
        let b = normalise_time("2026-11-24T12:13:15.57637855Z");
        let c = normalise_time("2026-11-24T12:13:16Z");
        assert_eq!(a, "2026-11-24T12:13:15.500000000Z");
        assert!(a < b && b < c, "{a} {b} {c}");
        assert_eq!(normalise_time("yesterday"), "yesterday");
    }

    #[test]
    fn the_fingerprint_ignores_what_belongs_to_one_run() {
        let a = serde_json::json!({"cpu_model": "x", "during_run": {"a": 1},
            "storage": [{"path": "/tmp/a", "fstype": "ext4"}]});
        let b = serde_json::json!({"storage": [{"fstype": "ext4", "path": "/tmp/b"}],
            "during_run": {"a": 2}, "cpu_model": "x"});
        let c = serde_json::json!({"cpu_model": "y", "storage": [{"fstype": "ext4"}]});
        assert_eq!(host_fingerprint(&a), host_fingerprint(&b));
        assert_ne!(host_fingerprint(&a), host_fingerprint(&c));
    }
}
