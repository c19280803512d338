//! The on-disk result format (documented in docs/results.md). One directory per run and target:
//! `run.json`, and per step `steps/<step>.json` + `steps/<step>.series.csv`, each written
//! atomically (temporary file + rename) the moment the step ends. Every JSON file carries
//! `schema`; readers refuse versions from the future.

pub mod campaign;
pub mod config_source;
pub mod hardware;
pub mod metric;
pub mod profile;
pub mod series;
pub mod slurm;
pub mod status;
pub mod tpcc;

pub use campaign::CampaignCell;
pub use config_source::{ConfigSource, ScaledSetting};
pub use status::{RunStatus, Status};

use std::collections::BTreeMap;
use std::fs;
use std::io::Write;
use std::path::Path;

use serde::{de::DeserializeOwned, Deserialize, Serialize};

use crate::error::{BadInput, SchemaTooNew};

pub const SCHEMA: u32 = 1;

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct Tool {
    pub name: String,
    pub version: String,
    pub git_revision: String,
}

/// The line after which a MySQL-family target's `config_text` holds what the server itself
/// reported (SHOW GLOBAL VARIABLES, one `name = value` a line); the config file's text is
/// before it.
pub const MYSQL_REPORTED_SETTINGS: &str =
    "# effective settings reported by the server (SHOW GLOBAL VARIABLES):";

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct TargetInfo {
    pub name: String,
    pub engine: String,
    /// What the engine itself reports (`sqlite_version()`, `SELECT version()`).
    pub version: String,
    pub config_name: String,
    /// The effective configuration as the engine reports it.
    pub config_text: String,
    /// A built-in published config (docs/configs.md): its source, the published host, the
    /// memory scale and each setting not given as published. Absent for other configs and in
    /// older files.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub config_source: Option<ConfigSource>,
    /// How the server was reached and, when dbperf managed it, where it ran and how it stopped.
    #[serde(default)]
    pub server: Option<ServerRecord>,
    /// A build from dbperf's build cache (`dbperf fetch`): its build.json as it was when the run
    /// began (engine, version, where it came from, sha256 of the download; docs/fetch.md).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub build: Option<serde_json::Value>,
}

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
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
    /// PostgreSQL: the options dbperf passed to initdb beyond its own (data directory, user,
    /// trust authentication, UTF8, no locale). Absent in older files and for other engines.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub initdb: Option<Vec<String>>,
    /// `--server-memory`: the cap on what the server could hold in memory, page cache and
    /// shared memory included, and the cgroup file that held it. Absent when uncapped.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub memory_cap: Option<MemoryCapRecord>,
}

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct MemoryCapRecord {
    pub bytes: u64,
    /// `cgroup v2 memory.max` or `cgroup v1 memory.limit_in_bytes`.
    pub enforced_by: String,
}

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct RunFile {
    pub schema: u32,
    pub tool: Tool,
    pub command_line: Vec<String>,
    pub target: TargetInfo,
    pub suite: crate::suites::Suite,
    pub preset: String,
    /// Every parameter of the suite, after preset and flags.
    pub parameters: serde_json::Value,
    pub steps_planned: Vec<String>,
    pub host: serde_json::Value,
    pub started_at: String,
    pub ended_at: Option<String>,
    pub status: RunStatus,
    pub failed_step: Option<String>,
    pub error: Option<String>,
    /// Peak resident memory of the dbperf process (VmHWM), KiB.
    pub client_peak_rss_kb: Option<u64>,
    /// Conditions found during the run that change what the numbers mean (the host's state
    /// changed, the CPU clock sagged, PCIe errors rose). Absent in older files, read as empty.
    #[serde(default)]
    pub warnings: Vec<String>,
    /// The campaign cell this run is (docs/campaigns.md); absent in older files.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub campaign: Option<CampaignCell>,
    /// The values of the run's swept axes in this cell (`clients` = `4`, `read_ahead_kb` =
    /// `128`, `setting.innodb_page_size` = `8k`); a report compares only results equal on every
    /// axis but the one compared. Empty without a sweep, and in older files.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub axes: BTreeMap<String, String>,
}

/// What a sysbench sweep's level adds to a step's label: `point-query_range=100_threads=8`.
pub const THREADS_SUFFIX: &str = "_threads=";

/// What a TPC-C sweep's level adds to its run step's label: `run_connections=4`.
pub const CONNECTIONS_SUFFIX: &str = "_connections=";

/// A step's label without its sweep level, and the level: `("point-query_range=100", Some(8))`
/// for sysbench's `_threads=8`, `("run", Some(4))` for TPC-C's `_connections=4`.
pub fn split_level(label: &str) -> (&str, Option<u64>) {
    for suffix in [THREADS_SUFFIX, CONNECTIONS_SUFFIX] {
        if let Some((base, n)) = label.rsplit_once(suffix) {
            if let Ok(n) = n.parse() {
                return (base, Some(n));
            }
        }
    }
    (label, None)
}

/// A short name for a cell's values of swept axes, for its directory and a report's label:
/// `c4` (clients), `ra128` (read_ahead_kb), `sched-none` (io_scheduler), `name=value` for a
/// server setting, joined with `.`; characters a file name should not hold become `_`.
pub fn axes_label(axes: &BTreeMap<String, String>) -> String {
    let part = |k: &str, v: &str| match k {
        "clients" => format!("c{v}"),
        "read_ahead_kb" => format!("ra{v}"),
        "io_scheduler" => format!("sched-{v}"),
        _ => format!("{}={v}", k.strip_prefix("setting.").unwrap_or(k)),
    };
    let label: String = axes
        .iter()
        .map(|(k, v)| part(k, v))
        .collect::<Vec<_>>()
        .join(".");
    label
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || "._=+-".contains(c) {
                c
            } else {
                '_'
            }
        })
        .collect()
}

/// The most axes one result may carry: a run sweeps a concurrency, two host settings and one
/// server setting at most.
const MAX_AXES: usize = 8;

/// The longest axis name or value: what a sweep's parser lets through (`spec::parse_vary`).
const MAX_AXIS_TEXT: usize = 64;

/// What is wrong with a result's `axes`, in words that end a sentence; None when they are what
/// a sweep writes. Axes become section titles, table ids, file names and columns, and the
/// numeric ones are divided by: a value edited into run.json or campaign.json must not make a
/// per-client figure infinite, a level vanish from Scaling or a report of megabytes.
pub fn axes_problem(axes: &BTreeMap<String, String>) -> Option<String> {
    if axes.len() > MAX_AXES {
        return Some(format!(
            "it has {} axes, more than the {MAX_AXES} a run can sweep",
            axes.len()
        ));
    }
    axes.iter().find_map(|(k, v)| axis_problem(k, v))
}

fn axis_problem(key: &str, value: &str) -> Option<String> {
    let plain = |s: &str, extra: &str| {
        !s.is_empty()
            && s.len() <= MAX_AXIS_TEXT
            && s.chars()
                .all(|c| c.is_ascii_alphanumeric() || extra.contains(c))
    };
    let name = key.strip_prefix("setting.").unwrap_or(key);
    if !plain(name, "_-.") {
        return Some(format!(
            "axis {} is not an axis name (letters, digits and _-., at most {MAX_AXIS_TEXT})",
            crate::untrusted::shown(key)
        ));
    }
    if !plain(value, "_.+:/-") {
        return Some(format!(
            "axis {key} has the value {}, not a plain value (letters, digits and _.+:/-, at \
             most {MAX_AXIS_TEXT})",
            crate::untrusted::shown(value)
        ));
    }
    let range = match key {
        "clients" | "threads" => 1..=1_000_000,
        // What `--read-ahead-kb` takes: 0 (none) to 1 GiB.
        "read_ahead_kb" => 0..=1 << 20,
        _ => return None,
    };
    // The canonical spelling only: `04` and `4` would be two levels of one value.
    match value.parse::<u64>() {
        Ok(n) if range.contains(&n) && n.to_string() == value => None,
        _ => Some(format!(
            "axis {key} has the value {}, not a whole number from {} to {}",
            crate::untrusted::shown(value),
            range.start(),
            range.end()
        )),
    }
}

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct Headline {
    pub metric: String,
    pub value: f64,
    pub unit: String,
}

/// Latency summary in microseconds.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
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
pub struct OpStats {
    pub count: u64,
    pub rows: u64,
    pub errors: u64,
    /// `errors` by what each did (docs/metrics.md, "Errors"): the unit of work rolled back and
    /// restarted, the operation skipped, the step failed. Absent in older files: 0.
    #[serde(default)]
    pub retried: u64,
    #[serde(default)]
    pub ignored: u64,
    #[serde(default)]
    pub failed: u64,
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
pub struct CleanupRecord {
    pub budget_s: u64,
    pub rule: String,
    pub actions: Vec<String>,
    pub work_s: f64,
    pub slept_s: f64,
    pub error: Option<String>,
}

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
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
pub struct StepFile {
    pub schema: u32,
    pub step: String,
    pub status: Status,
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
    pub hardware: Option<hardware::Hardware>,
    /// The DBMS's own counters over the step and the write amplification they imply.
    #[serde(default)]
    pub dbms: Option<hardware::DbmsCounters>,
    /// What a sysbench microbenchmark step ran and its numbers in sysbench's terms; absent in
    /// Insert Benchmark steps, in the sysbench `load` step and in files written before the
    /// sysbench suite existed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sysbench: Option<SysbenchStep>,
    /// What a TPC-C run step measured (docs/tpcc.md); absent in other suites' steps and in
    /// the TPC-C load.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tpcc: Option<tpcc::TpccStep>,
    /// The CPU profile of the step's measured time, with `dbperf run --profile`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub profile: Option<profile::StepProfile>,
    /// Files beside this one holding the engine's own status reports at the end of the step
    /// (`<step>.<report>.txt`: SHOW ENGINE INNODB STATUS, SHOW GLOBAL STATUS, RocksDB's stats,
    /// PostgreSQL's pg_stat views), for a person to read; nothing is computed from them.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub diagnostics: Vec<String>,
    /// Metrics of results written some other way than by dbperf (docs/report.md): top-level
    /// numbers become report columns. dbperf itself never writes it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub metrics: Option<serde_json::Map<String, serde_json::Value>>,
    /// The sysbench summary group of results written some other way (dbperf writes
    /// `sysbench.group`); never written by dbperf.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub group: Option<String>,
}

/// A sysbench microbenchmark step (docs/sysbench.md defines every field).
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
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
pub struct SysbenchStatement {
    pub sql: String,
    pub per_event: u64,
    pub prepared: bool,
}

/// Writes JSON to `path` atomically and durably: readers see the old file or the whole new one,
/// also after a crash or a power cut (the file and then its directory are synced).
pub fn write_json_atomic<T: Serialize>(path: &Path, value: &T) -> std::io::Result<()> {
    let mut text = serde_json::to_vec_pretty(value).map_err(std::io::Error::other)?;
    text.push(b'\n');
    write_atomic(path, &text)
}

/// Writes `bytes` to `path` atomically and durably (see [`write_json_atomic`]). The temporary
/// file beside it is created new (O_EXCL | O_NOFOLLOW: a symlink planted in its place is
/// refused), so nothing but a file of dbperf's own is ever written through.
pub fn write_atomic(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    let mut tmp = path.as_os_str().to_owned();
    tmp.push(".tmp");
    let tmp = std::path::PathBuf::from(tmp);
    // A temporary file left by a dbperf killed mid-write (or anything else at that name: a
    // symlink is removed, never followed).
    let _ = fs::remove_file(&tmp);
    let written = (|| {
        let mut f = crate::safe_fs::create_new(&tmp, 0o644)?;
        f.write_all(bytes)?;
        f.sync_all()?;
        fs::rename(&tmp, path)
    })();
    if written.is_err() {
        // A full disk leaves no half-written temporary file behind.
        let _ = fs::remove_file(&tmp);
    }
    written?;
    if let Some(dir) = path.parent() {
        if let Ok(d) = fs::File::open(if dir.as_os_str().is_empty() {
            Path::new(".")
        } else {
            dir
        }) {
            let _ = d.sync_all();
        }
    }
    Ok(())
}

/// The most any JSON result file may be (run.json, a step file, campaign.json). dbperf's own
/// are a few KiB to a few hundred (a step's latency histograms); parsing costs a few times the
/// text, so a made-up file costs at most a few hundred MiB of memory, once.
pub const JSON_MAX: u64 = 16 << 20;

/// A JSON result file, as `untrusted` reads it: no link, no FIFO or device, at most `JSON_MAX`.
pub const JSON_FILE: crate::untrusted::Limit = crate::untrusted::Limit {
    max: JSON_MAX,
    what: "a dbperf result file",
    links: crate::untrusted::Links::Refuse,
};

/// Only the `schema` of a file; every other member is skipped without being kept.
#[derive(Deserialize)]
struct SchemaOnly {
    #[serde(default)]
    schema: Option<serde_json::Value>,
}

/// The one gate every reader of result files passes (`read_run`, `read_step`, the journal and
/// the report): a regular file of at most `JSON_MAX` bytes (`untrusted`), JSON with a `schema`
/// no newer than this dbperf's. Errors are bad input: one sentence naming the file.
fn read_gated(path: &Path) -> anyhow::Result<String> {
    schema_checked(path, crate::untrusted::read_text(path, JSON_FILE)?)
}

/// A record that drives an action (`what` names it: the journal on `--resume`, the Slurm
/// submission) through the same gate, refused unless the user running dbperf wrote it
/// (`safe_fs::acting_record`).
fn read_gated_record(path: &Path, what: &str) -> anyhow::Result<String> {
    schema_checked(
        path,
        crate::untrusted::read_record_text(path, JSON_FILE, what)?,
    )
}

fn schema_checked(path: &Path, text: String) -> anyhow::Result<String> {
    let probe: SchemaOnly = serde_json::from_str(&text).map_err(|e| {
        BadInput(if e.is_data() {
            format!(
                "{} is not a dbperf result (it is not a JSON object)",
                path.display()
            )
        } else {
            format!(
                "{} is not a dbperf result: {}",
                path.display(),
                crate::untrusted::json_error(&e)
            )
        })
    })?;
    match probe.schema.as_ref().and_then(|s| s.as_u64()) {
        Some(s) if s <= SCHEMA as u64 => Ok(text),
        Some(s) => Err(SchemaTooNew(format!(
            "{} has result schema {s}, newer than this dbperf understands ({SCHEMA}); upgrade \
             dbperf to read it",
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

/// A result file as JSON, through the gate (`read_gated`).
pub fn read_checked(path: &Path) -> anyhow::Result<serde_json::Value> {
    let text = read_gated(path)?;
    serde_json::from_str(&text).map_err(|e| {
        BadInput(format!(
            "{} is not a dbperf result: {}",
            path.display(),
            crate::untrusted::json_error(&e)
        ))
        .into()
    })
}

/// A result file parsed straight into its type (no intermediate JSON tree, which would cost
/// many times the text).
pub(crate) fn read_versioned<T: DeserializeOwned>(path: &Path) -> anyhow::Result<T> {
    parse_versioned(path, &read_gated(path)?)
}

/// A record that drives an action (see `read_gated_record`), parsed straight into its type.
pub(crate) fn read_versioned_record<T: DeserializeOwned>(
    path: &Path,
    what: &str,
) -> anyhow::Result<T> {
    parse_versioned(path, &read_gated_record(path, what)?)
}

pub(crate) fn parse_versioned<T: DeserializeOwned>(path: &Path, text: &str) -> anyhow::Result<T> {
    serde_json::from_str(text).map_err(|e| {
        BadInput(format!(
            "{} does not match the result schema: {}",
            path.display(),
            crate::untrusted::json_error(&e)
        ))
        .into()
    })
}

/// A run.json that did not read because it names a suite this dbperf does not know (a newer
/// dbperf's): said so, since the schema error alone would not tell a person what to do.
fn unknown_suite(path: &Path, text: &str) -> Option<anyhow::Error> {
    #[derive(serde::Deserialize)]
    struct SuiteOnly {
        suite: String,
    }
    let named: SuiteOnly = serde_json::from_str(text).ok()?;
    unknown_suite_named(
        path,
        std::iter::once(named.suite.as_str()),
        "is a result of",
    )
}

/// The first of `names` that is no registered suite, as the reason `path` (which `what` it)
/// did not read; None when every name is known.
pub(crate) fn unknown_suite_named<'a>(
    path: &Path,
    mut names: impl Iterator<Item = &'a str>,
    what: &str,
) -> Option<anyhow::Error> {
    let name = names.find(|n| crate::suites::Suite::parse(n).is_none())?;
    Some(
        BadInput(format!(
            "{} {what} suite {}, which this dbperf does not know: it cannot report, import or \
             resume it; upgrade dbperf",
            path.display(),
            crate::untrusted::shown(name)
        ))
        .into(),
    )
}

pub fn read_run(dir: &Path) -> anyhow::Result<RunFile> {
    let path = dir.join("run.json");
    let text = read_gated(&path)?;
    let run: RunFile = match parse_versioned(&path, &text) {
        Ok(run) => run,
        Err(e) => return Err(unknown_suite(&path, &text).unwrap_or(e)),
    };
    // A target's name names directories and rows: a plain name, of printable characters.
    let name = &run.target.name;
    if !crate::untrusted::plain_name(name) || name.chars().any(char::is_control) {
        return Err(BadInput(format!(
            "{} does not match the result schema: its target name is not a plain name",
            path.display()
        ))
        .into());
    }
    // Step names become file names (`steps/<step>.json`): a name that is not plain would read
    // a file outside the result directory.
    if let Some(bad) = run
        .steps_planned
        .iter()
        .find(|s| !crate::untrusted::plain_name(s))
    {
        return Err(BadInput(format!(
            "{} does not match the result schema: step name {} is not a plain file name",
            path.display(),
            crate::untrusted::shown(bad)
        ))
        .into());
    }
    if let Some(why) = axes_problem(&run.axes) {
        return Err(BadInput(format!(
            "{} does not match the result schema: {why}",
            path.display()
        ))
        .into());
    }
    Ok(run)
}

pub fn read_step(dir: &Path, step: &str) -> anyhow::Result<StepFile> {
    if !crate::untrusted::plain_name(step) {
        return Err(BadInput(format!(
            "step name {} in {} is not a plain file name",
            crate::untrusted::shown(step),
            dir.display()
        ))
        .into());
    }
    read_step_file(&dir.join("steps").join(format!("{step}.json")))
}

/// A step file given by its path (`dbperf writeamp <file>`, the report's extra step files).
pub fn read_step_file(path: &Path) -> anyhow::Result<StepFile> {
    read_versioned(path)
}

/// Whether `p` names anything at all, a link or a FIFO included: result directories are found,
/// and planned steps told from steps never run, by what is there, and whatever it is is then
/// read through the gate, which says what is wrong with it (a FIFO, a link, too large).
pub fn present(p: &Path) -> bool {
    fs::symlink_metadata(p).is_ok()
}

/// The file a step file names beside itself (its series, its folded profile): only a plain
/// name in the same directory, never a path.
pub fn beside(step_file_dir: &Path, name: &str) -> anyhow::Result<std::path::PathBuf> {
    if crate::untrusted::plain_name(name) {
        Ok(step_file_dir.join(name))
    } else {
        Err(BadInput(format!(
            "{} names the file {}, which is not a plain file name in that directory",
            step_file_dir.display(),
            crate::untrusted::shown(name)
        ))
        .into())
    }
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
    use std::io::Read;
    const V2: u32 = 0x1c84_9313;
    const V2_DEFLATE: u32 = 0x1c84_9314;
    /// The V2 header: cookie, payload length, normalizing offset, digits, low, high, ratio.
    const HEADER: usize = 40;
    /// Far above any histogram dbperf writes (a few hundred KiB at most uncompressed).
    const MAX_BYTES: u64 = 4 << 20;
    let be32 = |b: &[u8], at: usize| {
        b.get(at..at + 4)
            .map(|x| u32::from_be_bytes([x[0], x[1], x[2], x[3]]))
    };
    let bytes = base64::engine::general_purpose::STANDARD.decode(s)?;
    // hdrhistogram allocates the payload length the header states before reading it: a damaged
    // or made-up file could ask for 4 GiB in 40 bytes (found by tests/fuzz.rs). So the payload
    // is inflated here, within a bound, and its length checked against the bytes really there.
    let v2 = match be32(&bytes, 0) {
        Some(V2_DEFLATE) => {
            let mut out = Vec::new();
            flate2::read::ZlibDecoder::new(bytes.get(8..).unwrap_or_default())
                .take(MAX_BYTES)
                .read_to_end(&mut out)
                .map_err(|e| anyhow::anyhow!("bad histogram: {e}"))?;
            out
        }
        Some(V2) => bytes,
        _ => anyhow::bail!("bad histogram: not an HdrHistogram V2 encoding"),
    };
    match be32(&v2, 4) {
        Some(len) if len as usize <= v2.len().saturating_sub(HEADER) => {}
        _ => anyhow::bail!("bad histogram: its header announces more counts than it holds"),
    }
    // The precision decides the size of the counts array (27 MiB at 5 digits over an hour):
    // dbperf records 3.
    match be32(&v2, 12) {
        Some(d) if d <= 3 => {}
        d => anyhow::bail!(
            "bad histogram: {} significant digits, dbperf records 3",
            d.unwrap_or(0)
        ),
    }
    let mut d = hdrhistogram::serialization::Deserializer::new();
    d.deserialize(&mut &v2[..])
        .map_err(|e| anyhow::anyhow!("bad histogram: {e:?}"))
}

#[cfg(test)]
mod tests;
