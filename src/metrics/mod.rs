//! What each operation cost the machine: host CPU and context switches, IO on the data
//! directory's block devices, CPU of the DBMS server (its whole process tree) and of dbperf
//! itself, from /proc snapshots at the start and end of a step (definitions: docs/metrics.md).

pub mod proc;
pub mod series;
pub mod writeamp;

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::time::Instant;

use serde::{Deserialize, Serialize};

use proc::{DiskIo, HostCpu, ProcCpu, Tree, USER_HZ};

/// Where to read from, resolved once per target.
pub struct Sources {
    proc_root: PathBuf,
    /// Whole-disk names (`nvme0n1`, `vda`, a dm device's slaves resolved) holding the data.
    pub devices: BTreeSet<String>,
    pub data_dir: Option<PathBuf>,
    pub server_pid: Option<u32>,
    pub cpus: usize,
}

impl Sources {
    /// `data_dir`: where the target's data lives (SQLite's directory, the server's datadir);
    /// `server_pid`: the managed server's main process (None for embedded or external targets).
    pub fn new(data_dir: Option<&Path>, server_pid: Option<u32>) -> Sources {
        let roots = crate::host::Roots::default();
        let devices = data_dir
            .map(|d| {
                // Only the disks at the bottom of the chain: a dm device and its slaves see the
                // same IO, and counting both would double it.
                crate::host::block::data_dir(&roots, d)
                    .devices
                    .iter()
                    .filter(|b| b.underlying)
                    .map(|b| b.name.clone())
                    .collect()
            })
            .unwrap_or_default();
        Sources {
            proc_root: roots.proc.clone(),
            devices,
            data_dir: data_dir.map(Path::to_path_buf),
            server_pid,
            cpus: std::thread::available_parallelism().map_or(1, |n| n.get()),
        }
    }
}

/// The counters at one instant.
pub struct Snapshot {
    at: Instant,
    wall: std::time::SystemTime,
    host: Option<HostCpu>,
    disk: DiskIo,
    /// Times in microseconds (getrusage).
    client: Option<ProcCpu>,
    /// Times in ticks of 1/USER_HZ s (/proc).
    server: Option<Tree>,
}

impl Snapshot {
    pub fn take(s: &Sources) -> Snapshot {
        Snapshot {
            at: Instant::now(),
            wall: std::time::SystemTime::now(),
            host: proc::host_cpu(&s.proc_root),
            disk: proc::disk_io(&s.proc_root, &s.devices),
            client: Some(proc::own_usage_us(&s.proc_root)),
            server: s.server_pid.map(|p| proc::tree(&s.proc_root, p)),
        }
    }

    /// Seconds from `earlier` to this snapshot.
    pub fn secs_since(&self, earlier: &Snapshot) -> f64 {
        self.at.duration_since(earlier.at).as_secs_f64()
    }
}

/// Hardware cost of one step, stored in `steps/<step>.json` as `hardware`.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct Hardware {
    /// Seconds between the two snapshots (the measured part of the step).
    pub interval_s: f64,
    /// What "op" is for `per_op`: insert (rows), query, or indexed_row (l.x).
    pub op: String,
    pub op_count: f64,
    pub cpus: usize,
    /// Block devices whose IO is counted (those holding the data directory).
    pub devices: Vec<String>,
    pub host: Option<HostRates>,
    pub io: Option<IoRates>,
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
#[serde(deny_unknown_fields)]
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
}

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct IoRates {
    pub reads_per_s: f64,
    pub read_kb_per_s: f64,
    pub writes_per_s: f64,
    pub write_kb_per_s: f64,
    pub flushes_per_s: f64,
}

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct CpuUse {
    pub user_s: f64,
    pub system_s: f64,
    pub voluntary_cs: u64,
    pub involuntary_cs: u64,
    /// Resident set at the end of the step, KiB (the server: summed over its processes).
    pub rss_kb: u64,
}

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
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
#[serde(deny_unknown_fields)]
pub struct PerInsert {
    pub rows: u64,
    pub writes: f64,
    pub write_kb: f64,
}

/// The original's 21 summary columns minus p50/p99/tag (those live in the step file already).
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Default)]
#[serde(deny_unknown_fields)]
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
#[serde(deny_unknown_fields)]
pub struct DbmsCounters {
    /// End minus start, per counter both snapshots have.
    pub delta: std::collections::BTreeMap<String, f64>,
    /// Values at the end of the step (sizes read as they are).
    pub end: std::collections::BTreeMap<String, f64>,
    pub write_amplification: writeamp::WriteAmp,
    /// Why counters are missing (the query failed, or the engine has none).
    pub error: Option<String>,
}

/// Differences of two counter snapshots, and the write amplification they imply with the
/// device's bytes written from `hw`.
pub fn dbms_counters(
    engine: &str,
    start: Result<Vec<(String, f64)>, String>,
    end: Result<Vec<(String, f64)>, String>,
    data_dir: Option<&Path>,
    hw: &mut Hardware,
) -> DbmsCounters {
    let (start, end, error) = match (start, end) {
        (Ok(a), Ok(b)) => (a, b, None),
        (Err(e), _) | (_, Err(e)) => (Vec::new(), Vec::new(), Some(e)),
    };
    let a: std::collections::BTreeMap<String, f64> = start.into_iter().collect();
    let end: std::collections::BTreeMap<String, f64> = end.into_iter().collect();
    let delta = end
        .iter()
        .filter_map(|(k, v)| a.get(k).map(|s| (k.clone(), v - s)))
        .collect();
    // dbgb1 as the original: the DBMS's own size where it is exact (PostgreSQL, SQLite); for
    // the MySQL family the files, `du` of <datadir>/ib (InnoDB) plus <datadir>/.rocksdb (MyRocks).
    let size = match (engine, data_dir) {
        ("mariadb" | "mysql", Some(d)) => Some(
            (proc::dir_size_on_disk(&d.join("ib")).unwrap_or(0)
                + proc::dir_size_on_disk(&d.join(".rocksdb")).unwrap_or(0)) as f64,
        ),
        ("mariadb" | "mysql", None) => None,
        _ => end.get("database_size_bytes").copied(),
    };
    if let Some(size) = size {
        hw.ibench_row.dbgb1 = Some(size / 1024.0 / 1024.0 / 1024.0);
        hw.missing.retain(|m| !m.starts_with("dbgb1"));
    }
    let device = hw
        .io
        .as_ref()
        .map(|i| i.write_kb_per_s * 1024.0 * hw.interval_s);
    DbmsCounters {
        write_amplification: writeamp::analyse(
            engine,
            &delta,
            device,
            end.get("innodb_page_size").copied(),
        ),
        delta,
        end,
        error,
    }
}

/// The original sysbench report's metrics (SB/an.sh): per op, o/s = the op rate.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Default)]
#[serde(deny_unknown_fields)]
pub struct SysbenchRow {
    /// (us + sy %) / (o/s): a CPU-per-op proxy, not µs (the original omits ncpu × 10^4).
    pub cpu_o: Option<f64>,
    pub cs_o: Option<f64>,
    pub r_o: Option<f64>,
    pub rkb_o: Option<f64>,
    pub wkb_o: Option<f64>,
    pub o_s: f64,
}

/// What the step did, for normalising.
pub struct Work<'a> {
    pub op: &'a str,
    pub op_count: f64,
    pub inserted_rows: u64,
    pub is_query_step: bool,
}

/// `per_s`: units of `d`'s times per second (USER_HZ for /proc, 10^6 for getrusage).
fn cpu_use(d: &ProcCpu, per_s: f64) -> CpuUse {
    CpuUse {
        user_s: d.utime as f64 / per_s,
        system_s: d.stime as f64 / per_s,
        voluntary_cs: d.voluntary_cs,
        involuntary_cs: d.involuntary_cs,
        rss_kb: d.rss_kb,
    }
}

fn per(x: f64, n: f64) -> Option<f64> {
    (n > 0.0).then(|| x / n)
}

pub fn hardware(s: &Sources, a: &Snapshot, b: &Snapshot, w: &Work) -> Hardware {
    let secs = b.at.duration_since(a.at).as_secs_f64().max(1e-9);
    let mut missing = Vec::new();
    let n = w.op_count;

    let host_d = match (a.host, b.host) {
        (Some(x), Some(y)) => Some(HostCpu {
            user: y.user.saturating_sub(x.user),
            nice: y.nice.saturating_sub(x.nice),
            system: y.system.saturating_sub(x.system),
            idle: y.idle.saturating_sub(x.idle),
            iowait: y.iowait.saturating_sub(x.iowait),
            irq: y.irq.saturating_sub(x.irq),
            softirq: y.softirq.saturating_sub(x.softirq),
            steal: y.steal.saturating_sub(x.steal),
            ctxt: y.ctxt.saturating_sub(x.ctxt),
        }),
        _ => {
            missing.push("host CPU: /proc/stat is not readable".into());
            None
        }
    };
    let host = host_d.map(|d| {
        let t = d.total().max(1) as f64;
        let pct = |v: u64| v as f64 / t * 100.0;
        HostRates {
            user_pct: pct(d.user + d.nice),
            system_pct: pct(d.system + d.irq + d.softirq),
            iowait_pct: pct(d.iowait),
            idle_pct: pct(d.idle),
            steal_pct: pct(d.steal),
            busy_pct: pct(d.busy()),
            cs_per_s: d.ctxt as f64 / secs,
        }
    });
    // Busy CPU time of the whole host in the interval, seconds: ticks are per CPU.
    let host_busy_s = host_d.map(|d| d.busy() as f64 / USER_HZ);

    let io = if s.devices.is_empty() {
        missing.push(match &s.data_dir {
            Some(d) => format!(
                "IO: no block device found for {} (tmpfs, overlay or a network filesystem)",
                d.display()
            ),
            None => "IO: the data directory is not on this host (external server)".into(),
        });
        None
    } else {
        let (x, y) = (a.disk, b.disk);
        Some(IoRates {
            reads_per_s: y.reads.saturating_sub(x.reads) as f64 / secs,
            read_kb_per_s: y.read_bytes.saturating_sub(x.read_bytes) as f64 / 1024.0 / secs,
            writes_per_s: y.writes.saturating_sub(x.writes) as f64 / secs,
            write_kb_per_s: y.write_bytes.saturating_sub(x.write_bytes) as f64 / 1024.0 / secs,
            flushes_per_s: y.flushes.saturating_sub(x.flushes) as f64 / secs,
        })
    };

    let client = match (&a.client, &b.client) {
        (Some(x), Some(y)) => Some(cpu_use(
            &ProcCpu {
                utime: y.utime.saturating_sub(x.utime),
                stime: y.stime.saturating_sub(x.stime),
                voluntary_cs: y.voluntary_cs.saturating_sub(x.voluntary_cs),
                involuntary_cs: y.involuntary_cs.saturating_sub(x.involuntary_cs),
                rss_kb: y.rss_kb,
            },
            1e6,
        )),
        _ => None,
    };
    let server = match (&a.server, &b.server) {
        (Some(x), Some(y)) => Some(cpu_use(&y.delta(x), USER_HZ)),
        _ => {
            if s.server_pid.is_none() && s.data_dir.is_none() {
                missing.push(
                    "server CPU and RSS: the server is external (dbperf knows no pid)".into(),
                );
            }
            None
        }
    };
    let data_dir_bytes = s.data_dir.as_deref().and_then(proc::dir_size_on_disk);

    let per_op = PerOp {
        host_cpu_us: host_busy_s.and_then(|b| per(b * 1e6, n)),
        client_cpu_us: client
            .as_ref()
            .and_then(|c| per((c.user_s + c.system_s) * 1e6, n)),
        server_cpu_us: server
            .as_ref()
            .and_then(|c| per((c.user_s + c.system_s) * 1e6, n)),
        cs: host.as_ref().and_then(|h| per(h.cs_per_s * secs, n)),
        reads: io.as_ref().and_then(|i| per(i.reads_per_s * secs, n)),
        read_kb: io.as_ref().and_then(|i| per(i.read_kb_per_s * secs, n)),
        writes: io.as_ref().and_then(|i| per(i.writes_per_s * secs, n)),
        write_kb: io.as_ref().and_then(|i| per(i.write_kb_per_s * secs, n)),
    };
    let ins = w.inserted_rows as f64;
    let per_insert = match &io {
        Some(i) if w.inserted_rows > 0 && w.op != "indexed_row" => Some(PerInsert {
            rows: w.inserted_rows,
            writes: i.writes_per_s * secs / ins,
            write_kb: i.write_kb_per_s * secs / ins,
        }),
        _ => None,
    };
    let rate = n / secs;
    let gb = |b: f64| b / 1024.0 / 1024.0 / 1024.0;
    let ibench_row = IbenchRow {
        ips: Some(if w.is_query_step { ins / secs } else { rate }),
        qps: Some(if w.is_query_step { rate } else { 0.0 }),
        rps: io.as_ref().map(|i| i.reads_per_s),
        rmbps: io.as_ref().map(|i| i.read_kb_per_s / 1024.0),
        wps: io.as_ref().map(|i| i.writes_per_s),
        wmbps: io.as_ref().map(|i| i.write_kb_per_s / 1024.0),
        rpq: per_op.reads,
        rkbpq: per_op.read_kb,
        wpi: per_insert.as_ref().map(|p| p.writes),
        wkbpi: per_insert.as_ref().map(|p| p.write_kb),
        csps: host.as_ref().map(|h| h.cs_per_s),
        cpups: host.as_ref().map(|h| h.user_pct + h.system_pct),
        cspq: per_op.cs,
        // us + sy over all CPUs, as the original: cpups/100 × ncpu × 10^6 / op-rate.
        cpupq: host.as_ref().and_then(|h| {
            per(
                (h.user_pct + h.system_pct) / 100.0 * s.cpus as f64 * 1e6,
                rate,
            )
        }),
        dbgb1: None,
        dbgb2: data_dir_bytes.map(|b| gb(b as f64)),
        rss: server.as_ref().map(|c| gb(c.rss_kb as f64 * 1024.0)),
    };
    let sysbench_row = SysbenchRow {
        cpu_o: host
            .as_ref()
            .and_then(|h| per(h.user_pct + h.system_pct, rate)),
        cs_o: per_op.cs,
        r_o: per_op.reads,
        rkb_o: per_op.read_kb,
        wkb_o: per_op.write_kb,
        o_s: rate,
    };
    missing.push("dbgb1 (the DBMS's own size of the database): not measured yet".into());
    Hardware {
        interval_s: secs,
        op: w.op.to_string(),
        op_count: n,
        cpus: s.cpus,
        devices: s.devices.iter().cloned().collect(),
        host,
        io,
        client,
        server,
        per_op,
        per_insert,
        data_dir_bytes,
        ibench_row,
        sysbench_row,
        missing,
    }
}
