//! What a step cost, as stored in `steps/<step>.json` (`hardware` and `dbms`): plain data
//! that the metrics room fills in and readers take as they are (definitions: docs/metrics.md).

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

/// Hardware cost of one step, stored in `steps/<step>.json` as `hardware`.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct Hardware {
    /// Seconds between the two snapshots, taken when the engine started and ended the
    /// measured part of the step.
    pub interval_s: f64,
    /// The step's measured seconds (its `duration_s`) the interval stands for; the difference
    /// is the time the snapshots themselves took. Absent in older files.
    #[serde(default)]
    pub measured_s: Option<f64>,
    /// What "op" is for `per_op`: insert (rows), query, or indexed_row (l.x).
    pub op: String,
    pub op_count: f64,
    pub cpus: usize,
    /// Block devices whose IO is counted (those holding the data directory and its logs).
    pub devices: Vec<String>,
    pub host: Option<HostRates>,
    /// IO summed over `devices`.
    pub io: Option<IoRates>,
    /// Each device's IO on its own, as iostat -x shows it, with what it holds. Absent in older
    /// files.
    #[serde(default)]
    pub per_device: Vec<DeviceIo>,
    pub client: Option<CpuUse>,
    pub server: Option<CpuUse>,
    pub per_op: PerOp,
    /// Writes per inserted row (the original's wpi, wkbpi: per insert in every step).
    pub per_insert: Option<PerInsert>,
    /// Bytes the data directory takes on disk at the end of the step (`du`), logs included.
    pub data_dir_bytes: Option<u64>,
    /// The original's summary columns for this step (docs/metrics.md), null where unknown.
    pub ibench_row: IbenchRow,
    /// The sysbench metrics columns (cpu/o, cs/o, r/o, rKB/o, wKB/o, o/s) for this step's op.
    pub sysbench_row: SysbenchRow,
    /// Why a figure is missing (e.g. an external server: no server CPU).
    pub missing: Vec<String>,
}

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct HostRates {
    /// Share of all CPUs' time, percent: user (incl. nice), system (incl. irq, softirq),
    /// iowait, idle, steal.
    pub user_pct: f64,
    pub system_pct: f64,
    pub iowait_pct: f64,
    pub idle_pct: f64,
    pub steal_pct: f64,
    /// user + system + steal: what vmstat's us + sy (+ st) add up to.
    pub busy_pct: f64,
    pub cs_per_s: f64,
    /// Busy CPU time of all CPUs in clock ticks: the resolution of the CPU figures (rough below
    /// 100). Absent in older files.
    #[serde(default)]
    pub busy_ticks: Option<u64>,
}

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct IoRates {
    pub reads_per_s: f64,
    pub read_kb_per_s: f64,
    pub writes_per_s: f64,
    pub write_kb_per_s: f64,
    pub flushes_per_s: f64,
    /// iostat's extended columns over the interval: mean ms per completed read and write
    /// (null when none completed), mean requests in flight summed over the devices (aqu-sz),
    /// and the share of time the devices had a request in flight, averaged over them (%util).
    /// Absent in older files.
    #[serde(default)]
    pub r_await_ms: Option<f64>,
    #[serde(default)]
    pub w_await_ms: Option<f64>,
    #[serde(default)]
    pub aqu_sz: Option<f64>,
    #[serde(default)]
    pub util_pct: Option<f64>,
}

/// What a device holds of the target's files.
#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq, Eq, PartialOrd, Ord)]
#[serde(rename_all = "lowercase")]
pub enum DeviceRole {
    /// The data directory.
    Data,
    /// A log directory outside it: PostgreSQL's pg_wal, InnoDB's redo, the binlog, MyRocks' WAL.
    Log,
}

impl DeviceRole {
    pub fn as_str(self) -> &'static str {
        match self {
            DeviceRole::Data => "data",
            DeviceRole::Log => "log",
        }
    }
}

/// One block device's IO over the interval.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct DeviceIo {
    pub device: String,
    pub holds: Vec<DeviceRole>,
    #[serde(flatten)]
    pub io: IoRates,
}

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct CpuUse {
    pub user_s: f64,
    pub system_s: f64,
    pub voluntary_cs: u64,
    pub involuntary_cs: u64,
    /// Resident set at the end of the step, KiB (the server: summed over its processes).
    pub rss_kb: u64,
    /// CPU time in clock ticks (1/100 s): the figures' resolution. Below 100 ticks (1 s of
    /// CPU) they are rough; the report marks them. Absent in older files.
    #[serde(default)]
    pub ticks: Option<u64>,
}

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct PerOp {
    /// CPU of every process on the host, µs per op (the original's cpupq).
    pub host_cpu_us: Option<f64>,
    pub client_cpu_us: Option<f64>,
    pub server_cpu_us: Option<f64>,
    /// Host context switches per op (cspq).
    pub cs: Option<f64>,
    pub reads: Option<f64>,
    pub read_kb: Option<f64>,
    pub writes: Option<f64>,
    pub write_kb: Option<f64>,
}

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct PerInsert {
    pub rows: u64,
    pub writes: f64,
    pub write_kb: f64,
}

/// The original's 21 summary columns minus p50/p99/tag (those live in the step file already).
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Default)]
pub struct IbenchRow {
    pub ips: Option<f64>,
    pub qps: Option<f64>,
    pub rps: Option<f64>,
    pub rmbps: Option<f64>,
    pub wps: Option<f64>,
    pub wmbps: Option<f64>,
    pub rpq: Option<f64>,
    pub rkbpq: Option<f64>,
    pub wpi: Option<f64>,
    pub wkbpi: Option<f64>,
    pub csps: Option<f64>,
    pub cpups: Option<f64>,
    pub cspq: Option<f64>,
    pub cpupq: Option<f64>,
    /// Database size, GB: not yet measured (needs the DBMS's own size query).
    pub dbgb1: Option<f64>,
    /// Data directory on disk, GB.
    pub dbgb2: Option<f64>,
    /// Server RSS, GB.
    pub rss: Option<f64>,
}

/// The DBMS's counters over a step (`dbms` in the step file).
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct DbmsCounters {
    /// End minus start, per counter both snapshots have.
    pub delta: BTreeMap<String, f64>,
    /// Values at the end of the step (sizes read as they are).
    pub end: BTreeMap<String, f64>,
    pub write_amplification: WriteAmp,
    /// Why counters are missing (the query failed, or the engine has none).
    pub error: Option<String>,
    /// Which of the step's two counter snapshots was not taken, and why, as a type: a missing
    /// snapshot is never read as a counter the server lacks. Absent when both were taken.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub missing: Option<MissingSnapshot>,
}

/// A counter snapshot of a step that was not taken.
#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq, Eq)]
pub struct MissingSnapshot {
    pub at: SnapshotAt,
    pub why: NotTaken,
}

/// Which end of a step a snapshot belongs to.
#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum SnapshotAt {
    Start,
    End,
}

/// Why a snapshot of the server was not taken.
#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum NotTaken {
    /// The server did not answer a new connection within the snapshot's deadline (a stalled,
    /// stopped or killed server).
    NoAnswer,
    /// The server answered, and the snapshot's query failed (its sentence is `error`).
    Failed,
}

impl std::fmt::Display for SnapshotAt {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            SnapshotAt::Start => "start",
            SnapshotAt::End => "end",
        })
    }
}

/// The original sysbench report's metrics (SB/an.sh): per op, o/s = the op rate.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Default)]
pub struct SysbenchRow {
    /// (us + sy %) / (o/s): a CPU-per-op proxy, not µs (the original omits ncpu × 10^4).
    pub cpu_o: Option<f64>,
    pub cs_o: Option<f64>,
    pub r_o: Option<f64>,
    pub rkb_o: Option<f64>,
    pub wkb_o: Option<f64>,
    pub o_s: f64,
}

/// The counter of bytes written to the binary log's files that Oracle MySQL's adapter reads
/// from performance_schema (`wait/io/file/sql/binlog`): MySQL has no Binlog_bytes_written.
pub const BINLOG_FILE_BYTES: &str = "binlog_file_bytes_written";

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct WriteAmp {
    /// Which counters were used, in words (engines name them differently).
    pub log_counter: Option<String>,
    pub data_counter: Option<String>,
    pub log_bytes: Option<f64>,
    pub log_syncs: Option<f64>,
    pub data_bytes: Option<f64>,
    pub device_write_bytes: Option<f64>,
    /// device_write_bytes / (log_bytes + data_bytes).
    pub amplification: Option<f64>,
    pub log_bytes_per_sync: Option<f64>,
    /// Bytes the log syncs write when each rounds up to FS_PAGE: syncs × ceil(per sync / 4096)
    /// × 4096; and that over log_bytes.
    pub padded_log_bytes: Option<f64>,
    pub padding_factor: Option<f64>,
    /// MariaDB/MySQL binary log: `Binlog_bytes_written` and, on MariaDB,
    /// `Binlog_group_commits` (one binlog sync each when sync_binlog = 1); null when the
    /// server has no binlog or does not count it. Absent in older files.
    #[serde(default)]
    pub binlog_bytes: Option<f64>,
    #[serde(default)]
    pub binlog_syncs: Option<f64>,
    #[serde(default)]
    pub binlog_bytes_per_sync: Option<f64>,
    pub notes: Vec<String>,
}
