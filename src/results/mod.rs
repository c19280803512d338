//! The on-disk result format (documented in docs/results.md). One directory per run and target:
//! `run.json`, and per step `steps/<step>.json` + `steps/<step>.series.csv`, each written
//! atomically (temporary file + rename) the moment the step ends. Every JSON file carries
//! `schema`; readers refuse versions from the future.

pub mod bisect;
pub mod campaign;
pub mod config_source;
pub mod hardware;
pub mod ibench;
pub mod memory_cap;
pub mod metric;
pub mod payload;
pub mod pgbench;
pub mod profile;
pub mod series;
pub mod slurm;
pub mod status;
mod step;
pub mod sysbench;
pub mod tpcc;
mod upgrade;

pub use campaign::CampaignCell;
pub use config_source::{ConfigSource, ScaledSetting};
pub use ibench::{IbenchStep, Sla};
pub use memory_cap::StepMemoryCap;
pub use payload::Payload;
pub use status::{RunStatus, Status};
pub use step::{
    decode_histogram, encode_histogram, percentiles, us, CleanupRecord, Headline, IbenchBuckets,
    OpStats, Percentiles, StepFile, StepParameters,
};
pub use sysbench::{SysbenchStatement, SysbenchStep};

use std::collections::BTreeMap;
use std::fs;
use std::io::Write;
use std::path::Path;

use serde::{de::DeserializeOwned, Deserialize, Serialize};

use crate::error::{BadInput, SchemaTooNew};

/// 2 since the step file keeps its suite's part under the suite's name (`ibench`, `sysbench`,
/// `tpcc`); schema-1 step files are read in that shape (`upgrade`).
pub const SCHEMA: u32 = 2;

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

/// A step's label without its sweep level, and the level: `("point-query_range=100", Some(8))`
/// for sysbench's `_threads=8`, `("run", Some(4))` for TPC-C's `_connections=4`: every suffix
/// a suite's sweep adds (`suites::Sweep`).
pub fn split_level(label: &str) -> (&str, Option<u64>) {
    for suffix in crate::suites::Suite::all().filter_map(crate::suites::Suite::level_suffix) {
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
/// One of schema 1 is read in schema 2's shape (`upgrade::step_v1`).
pub fn read_step_file(path: &Path) -> anyhow::Result<StepFile> {
    let text = read_gated(path)?;
    if schema_of(&text) >= 2 {
        return parse_versioned(path, &text);
    }
    let mut v: serde_json::Value = parse_versioned(path, &text)?;
    if let Some(m) = v.as_object_mut() {
        upgrade::step_v1(m);
    }
    serde_json::from_value(v).map_err(|e| {
        BadInput(format!(
            "{} does not match the result schema: {}",
            path.display(),
            crate::untrusted::json_error(&e)
        ))
        .into()
    })
}

/// The `schema` of a file the gate let through (it has one, no newer than this dbperf's).
fn schema_of(text: &str) -> u64 {
    serde_json::from_str::<SchemaOnly>(text)
        .ok()
        .and_then(|p| p.schema)
        .and_then(|s| s.as_u64())
        .unwrap_or(0)
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

#[cfg(test)]
mod tests;
