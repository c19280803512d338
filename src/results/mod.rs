//! The on-disk result format (documented in docs/results.md). One directory per run and target:
//! `run.json`, and per step `steps/<step>.json` + `steps/<step>.series.csv`, each written
//! atomically (temporary file + rename) the moment the step ends. Every JSON file carries
//! `schema`; readers refuse versions from the future.

pub mod series;

use std::collections::BTreeMap;
use std::fs;
use std::io::Write;
use std::path::Path;

use serde::{de::DeserializeOwned, Deserialize, Serialize};

pub const SCHEMA: u32 = 1;

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct Tool {
    pub name: String,
    pub version: String,
    pub git_revision: String,
}

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct TargetInfo {
    pub name: String,
    pub engine: String,
    /// What the engine itself reports (`sqlite_version()`, `SELECT version()`).
    pub version: String,
    pub config_name: String,
    /// The effective configuration as the engine reports it.
    pub config_text: String,
    /// How the server was reached and, when dbperf managed it, where it ran and how it stopped.
    #[serde(default)]
    pub server: Option<ServerRecord>,
}

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct ServerRecord {
    /// true when dbperf initialised, started and stopped it.
    pub managed: bool,
    /// The server binary (managed mode).
    pub binary: Option<String>,
    pub datadir: Option<String>,
    /// The OS user it ran as (managed mode, when dbperf ran as root).
    pub os_user: Option<String>,
    pub pid: Option<u32>,
    /// Transport, address, database user and database; never a password.
    pub connection: String,
    pub start_s: Option<f64>,
    pub stopped: Option<String>,
}

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct RunFile {
    pub schema: u32,
    pub tool: Tool,
    pub command_line: Vec<String>,
    pub target: TargetInfo,
    pub suite: String,
    pub preset: String,
    /// Every parameter of the suite, after preset and flags.
    pub parameters: serde_json::Value,
    pub steps_planned: Vec<String>,
    pub host: serde_json::Value,
    pub started_at: String,
    pub ended_at: Option<String>,
    /// running | ok | failed | interrupted
    pub status: String,
    pub failed_step: Option<String>,
    pub error: Option<String>,
    /// Peak resident memory of the dbperf process (VmHWM), KiB.
    pub client_peak_rss_kb: Option<u64>,
    /// Conditions found during the run that change what the numbers mean (the host's state
    /// changed, the CPU clock sagged, PCIe errors rose). Absent in older files, read as empty.
    #[serde(default)]
    pub warnings: Vec<String>,
}

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct Headline {
    pub metric: String,
    pub value: f64,
    pub unit: String,
}

/// Latency summary in microseconds.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct Percentiles {
    pub mean: f64,
    pub p50: f64,
    pub p90: f64,
    pub p99: f64,
    pub p99_9: f64,
    pub p99_99: f64,
    pub max: f64,
}

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct OpStats {
    pub count: u64,
    pub rows: u64,
    pub errors: u64,
    pub error_samples: Vec<String>,
    pub ops_per_s: f64,
    pub rows_per_s: f64,
    /// From the intended start (open loop) or the actual start (closed loop).
    pub latency_us: Percentiles,
    /// From the actual start of each operation.
    pub service_us: Percentiles,
    /// The original's ten response-time buckets (counts), on latency.
    pub ibench_buckets: IbenchBuckets,
    /// Largest single latency, milliseconds (the original's maxop).
    pub max_ms: f64,
    /// The full latency histogram: HdrHistogram V2 + DEFLATE, base64, nanoseconds.
    pub hdr_latency: String,
}

/// Counts of operations per response-time bucket, upper bounds inclusive (spec §2.7).
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Default)]
#[serde(deny_unknown_fields)]
pub struct IbenchBuckets {
    pub le_256us: u64,
    pub le_1ms: u64,
    pub le_4ms: u64,
    pub le_16ms: u64,
    pub le_64ms: u64,
    pub le_256ms: u64,
    pub le_1s: u64,
    pub le_4s: u64,
    pub le_16s: u64,
    pub gt_16s: u64,
}

impl IbenchBuckets {
    pub fn from_counts(c: &[u64; 10]) -> IbenchBuckets {
        IbenchBuckets {
            le_256us: c[0],
            le_1ms: c[1],
            le_4ms: c[2],
            le_16ms: c[3],
            le_64ms: c[4],
            le_256ms: c[5],
            le_1s: c[6],
            le_4s: c[7],
            le_16s: c[8],
            gt_16s: c[9],
        }
    }

    pub fn counts(&self) -> [u64; 10] {
        [
            self.le_256us,
            self.le_1ms,
            self.le_4ms,
            self.le_16ms,
            self.le_64ms,
            self.le_256ms,
            self.le_1s,
            self.le_4s,
            self.le_16s,
            self.gt_16s,
        ]
    }
}

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct Sla {
    pub target_rows_per_s: f64,
    pub achieved_rows_per_s: f64,
    pub ratio: f64,
    pub required_ratio: f64,
    /// null when the step did not run to its end (failed or interrupted): a partial step's rate
    /// says nothing about whether the target was sustained.
    pub met: Option<bool>,
}

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct CleanupRecord {
    pub budget_s: u64,
    pub rule: String,
    pub actions: Vec<String>,
    pub work_s: f64,
    pub slept_s: f64,
    pub error: Option<String>,
}

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct StepParameters {
    pub clients: u64,
    pub tables: Vec<String>,
    pub rows_per_commit: u64,
    pub planned_rows: u64,
    pub rate_per_client: Option<u64>,
    pub deletes: bool,
    pub queries: Option<String>,
}

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct StepFile {
    pub schema: u32,
    pub step: String,
    /// ok | failed | interrupted
    pub status: String,
    pub error: Option<String>,
    /// Conditions that change what the numbers mean (e.g. range queries without their index).
    #[serde(default)]
    pub warnings: Vec<String>,
    pub started_at: String,
    pub duration_s: f64,
    pub headline: Headline,
    pub parameters: StepParameters,
    pub ops: BTreeMap<String, OpStats>,
    pub interval_rate_percentiles: BTreeMap<String, Option<f64>>,
    pub sla: Option<Sla>,
    pub cleanup: Option<CleanupRecord>,
    /// Rows in each table after the step, counted only with --count-rows.
    #[serde(default)]
    pub table_rows: Option<BTreeMap<String, u64>>,
    /// null when the step failed before it started.
    pub series_file: Option<String>,
    /// What the step cost the host, the server and dbperf (docs/metrics.md, "Hardware").
    #[serde(default)]
    pub hardware: Option<crate::metrics::Hardware>,
    /// The DBMS's own counters over the step and the write amplification they imply.
    #[serde(default)]
    pub dbms: Option<crate::metrics::DbmsCounters>,
    /// What a sysbench microbenchmark step ran and its numbers in sysbench's terms; absent in
    /// Insert Benchmark steps, in the sysbench `load` step and in files written before the
    /// sysbench suite existed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sysbench: Option<SysbenchStep>,
}

/// A sysbench microbenchmark step (docs/sysbench.md defines every field).
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct SysbenchStep {
    /// The microbenchmark, e.g. `point-query`.
    pub test: String,
    /// `""`, `"pre"`, `"warm"` or `"warmpre"`.
    pub variant: String,
    /// The original's report label `<test>[.<variant>]_range=<R>`, equal to the step name.
    pub label: String,
    pub range: u64,
    /// `unused`, `in_list`, `between` or `range_size`.
    pub range_use: String,
    /// The range was asked for with `--tests <test>_range=<R>`, not taken from the run order.
    pub custom_range: bool,
    /// `point`, `range`, `range_agg` or `write`.
    pub group: String,
    pub group_title: String,
    /// The original's 2024 three-way split by name: `point`, `range` or `write`.
    pub group_2024: String,
    /// false for the warm-ups (`.warm`, `.warmpre`), which the original does not report.
    pub reported: bool,
    /// The original's Lua script and flags.
    pub original: String,
    /// Every event is one transaction (BEGIN ... COMMIT).
    pub transaction: bool,
    /// `uniform` or `zipfian`.
    pub keys: String,
    pub prepared: bool,
    pub threads: u64,
    pub tables: u64,
    pub rows_per_table: u64,
    /// Planned seconds of measurement; null when every thread runs one event.
    pub planned_s: Option<u64>,
    pub warmup_s: f64,
    /// The statements of one event on sbtest1, as sent.
    pub statements: Vec<SysbenchStatement>,
    pub statements_per_event: u64,
    pub events: u64,
    pub events_per_s: f64,
    pub warmup_events: u64,
    pub queries: u64,
    pub queries_per_s: f64,
    pub reads: u64,
    pub writes: u64,
    pub other: u64,
    pub errors: u64,
    pub scan_rows_per_s: Option<f64>,
}

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct SysbenchStatement {
    pub sql: String,
    pub per_event: u64,
    pub prepared: bool,
}

/// Writes JSON to `path` atomically: readers see the old file or the whole new one.
pub fn write_json_atomic<T: Serialize>(path: &Path, value: &T) -> std::io::Result<()> {
    let mut text = serde_json::to_vec_pretty(value).map_err(std::io::Error::other)?;
    text.push(b'\n');
    let tmp = path.with_extension("json.tmp");
    {
        let mut f = fs::File::create(&tmp)?;
        f.write_all(&text)?;
        f.sync_all()?;
    }
    fs::rename(&tmp, path)
}

fn read_versioned<T: DeserializeOwned>(path: &Path) -> anyhow::Result<T> {
    let text = fs::read_to_string(path)
        .map_err(|e| anyhow::anyhow!("cannot read {}: {e}", path.display()))?;
    let v: serde_json::Value = serde_json::from_str(&text)
        .map_err(|e| anyhow::anyhow!("{} is not JSON: {e}", path.display()))?;
    match v.get("schema").and_then(|s| s.as_u64()) {
        Some(s) if s as u32 <= SCHEMA => {}
        Some(s) => anyhow::bail!(
            "{} has result schema {s}, newer than this dbperf understands ({SCHEMA}); upgrade dbperf",
            path.display()
        ),
        None => anyhow::bail!("{} is not a dbperf result (no schema field)", path.display()),
    }
    serde_json::from_value(v)
        .map_err(|e| anyhow::anyhow!("{} does not match the result schema: {e}", path.display()))
}

pub fn read_run(dir: &Path) -> anyhow::Result<RunFile> {
    read_versioned(&dir.join("run.json"))
}

pub fn read_step(dir: &Path, step: &str) -> anyhow::Result<StepFile> {
    read_versioned(&dir.join("steps").join(format!("{step}.json")))
}

/// Microseconds with 3 decimals (ns precision is noise at this resolution).
pub fn us(ns: u64) -> f64 {
    (ns as f64 / 1000.0 * 1000.0).round() / 1000.0
}

pub fn percentiles(h: &hdrhistogram::Histogram<u64>, exact_max_ns: u64) -> Percentiles {
    if h.is_empty() {
        return Percentiles {
            mean: 0.0,
            p50: 0.0,
            p90: 0.0,
            p99: 0.0,
            p99_9: 0.0,
            p99_99: 0.0,
            max: 0.0,
        };
    }
    // HDR reports the top of a value's bucket, which can exceed the exact maximum by up to 0.1%;
    // no percentile may claim more than the slowest operation took.
    let q = |x: f64| us(h.value_at_quantile(x).min(exact_max_ns));
    Percentiles {
        mean: (h.mean() / 1000.0 * 1000.0).round() / 1000.0,
        p50: q(0.5),
        p90: q(0.9),
        p99: q(0.99),
        p99_9: q(0.999),
        p99_99: q(0.9999),
        max: us(exact_max_ns),
    }
}

pub fn encode_histogram(h: &hdrhistogram::Histogram<u64>) -> String {
    use base64::Engine;
    use hdrhistogram::serialization::{Serializer, V2DeflateSerializer};
    let mut buf = Vec::new();
    V2DeflateSerializer::new()
        .serialize(h, &mut buf)
        .expect("serializing to memory");
    base64::engine::general_purpose::STANDARD.encode(buf)
}

pub fn decode_histogram(s: &str) -> anyhow::Result<hdrhistogram::Histogram<u64>> {
    use base64::Engine;
    let bytes = base64::engine::general_purpose::STANDARD.decode(s)?;
    let mut d = hdrhistogram::serialization::Deserializer::new();
    d.deserialize(&mut &bytes[..])
        .map_err(|e| anyhow::anyhow!("bad histogram: {e:?}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn histograms_round_trip() {
        let mut h = crate::engine::recorder::new_histogram();
        for v in [1_500u64, 20_000, 3_000_000, 9_000_000_000] {
            h.record(v).unwrap();
        }
        let back = decode_histogram(&encode_histogram(&h)).unwrap();
        assert_eq!(back.len(), 4);
        assert_eq!(back.value_at_quantile(0.5), h.value_at_quantile(0.5));
    }

    #[test]
    fn future_schema_is_refused_with_a_sentence() {
        let dir = tempfile::tempdir().unwrap();
        fs::write(dir.path().join("run.json"), r#"{"schema": 99}"#).unwrap();
        let e = read_run(dir.path()).unwrap_err().to_string();
        assert!(e.contains("schema 99") && e.contains("upgrade"), "{e}");
    }

    #[test]
    fn atomic_write_leaves_no_temporary_file() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("x.json");
        write_json_atomic(&p, &serde_json::json!({"schema": 1})).unwrap();
        let names: Vec<_> = fs::read_dir(dir.path())
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .collect();
        assert_eq!(names, vec![std::ffi::OsString::from("x.json")]);
    }
}
