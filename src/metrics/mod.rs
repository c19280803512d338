//! What each operation cost the machine: host CPU and context switches, IO on the data
//! directory's block devices, CPU of the DBMS server (its whole process tree) and of dbperf
//! itself, from /proc snapshots at the start and end of a step (definitions: docs/metrics.md).

pub mod proc;
pub mod series;
pub mod writeamp;

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::time::Instant;

use crate::engines::{Engine, Family};

pub use crate::results::hardware::{
    CpuUse, DbmsCounters, DeviceIo, DeviceRole, Hardware, HostRates, IbenchRow, IoRates,
    MissingSnapshot, NotTaken, PerInsert, PerOp, SnapshotAt, SysbenchRow,
};

/// A snapshot of the DBMS's counters that was not taken: why, as a type, and its sentence.
#[derive(Debug, Clone, PartialEq)]
pub struct NotRead {
    pub why: NotTaken,
    pub message: String,
}

/// One snapshot of the DBMS's counters, by name, or why there is none.
pub type Counters = Result<Vec<(String, f64)>, NotRead>;

use proc::{DiskIo, HostCpu, ProcCpu, Tree, USER_HZ};

/// Where to read from, resolved once per target.
pub struct Sources {
    proc_root: PathBuf,
    /// Whole-disk names (`nvme0n1`, `vda`, a dm device's slaves resolved) holding the data
    /// directory or a log directory outside it.
    pub devices: BTreeSet<String>,
    /// What each of `devices` holds.
    pub roles: BTreeMap<String, Vec<DeviceRole>>,
    pub data_dir: Option<PathBuf>,
    pub server_pid: Option<u32>,
    pub cpus: usize,
}

impl Sources {
    /// `data_dir`: where the target's data lives (SQLite's directory, the server's datadir);
    /// `log_dirs`: where the server writes logs, as it reports them (`Dbms::log_dirs`);
    /// `server_pid`: the managed server's main process (None for embedded or external targets).
    pub fn new(data_dir: Option<&Path>, log_dirs: &[PathBuf], server_pid: Option<u32>) -> Sources {
        let roots = crate::host::Roots::default();
        // Only the disks at the bottom of the chain: a dm device and its slaves see the same
        // IO, and counting both would double it.
        let disks = |d: &Path| -> Vec<String> {
            crate::host::block::data_dir(&roots, d)
                .devices
                .iter()
                .filter(|b| b.underlying)
                .map(|b| b.name.clone())
                .collect()
        };
        let mut roles: BTreeMap<String, Vec<DeviceRole>> = BTreeMap::new();
        let mut hold = |dir: &Path, role: DeviceRole| {
            for disk in disks(dir) {
                let r = roles.entry(disk).or_default();
                if !r.contains(&role) {
                    r.push(role);
                    r.sort();
                }
            }
        };
        if let Some(d) = data_dir {
            hold(d, DeviceRole::Data);
            // A log on its own device, linked from the data directory (PostgreSQL's pg_wal
            // made with initdb --waldir): its writes are the DBMS's too.
            for log in ["pg_wal", "pg_xlog"] {
                let l = d.join(log);
                if l.is_symlink() {
                    if let Ok(target) = l.canonicalize() {
                        hold(&target, DeviceRole::Log);
                    }
                }
            }
            for l in log_dirs {
                if let Ok(target) = l.canonicalize() {
                    hold(&target, DeviceRole::Log);
                }
            }
        }
        Sources {
            proc_root: roots.proc.clone(),
            devices: roles.keys().cloned().collect(),
            roles,
            data_dir: data_dir.map(Path::to_path_buf),
            server_pid,
            cpus: proc::stat_cpus(&roots.proc)
                .unwrap_or_else(|| std::thread::available_parallelism().map_or(1, |n| n.get())),
        }
    }
}

/// The counters at one instant.
pub struct Snapshot {
    at: Instant,
    wall: std::time::SystemTime,
    host: Option<HostCpu>,
    disk: BTreeMap<String, DiskIo>,
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

/// Differences of two counter snapshots, and the write amplification they imply with the
/// device's bytes written from `hw`. A snapshot not taken leaves every counter out and says so
/// (`missing`), never as a counter the server lacks.
pub fn dbms_counters(
    engine: Engine,
    start: Counters,
    end: Counters,
    data_dir: Option<&Path>,
    hw: &mut Hardware,
) -> DbmsCounters {
    let (start, end, missing) = match (start, end) {
        (Ok(a), Ok(b)) => (a, b, None),
        (Err(e), _) => (Vec::new(), Vec::new(), Some((SnapshotAt::Start, e))),
        (_, Err(e)) => (Vec::new(), Vec::new(), Some((SnapshotAt::End, e))),
    };
    let a: std::collections::BTreeMap<String, f64> = start.into_iter().collect();
    let end: std::collections::BTreeMap<String, f64> = end.into_iter().collect();
    let delta = end
        .iter()
        .filter_map(|(k, v)| a.get(k).map(|s| (k.clone(), v - s)))
        .collect();
    // dbgb1 as the original: the DBMS's own size where it is exact (PostgreSQL, SQLite); for
    // the MySQL family the files, `du` of <datadir>/ib (InnoDB) plus <datadir>/.rocksdb (MyRocks).
    let size = match (engine.family(), data_dir) {
        (Family::MySql, Some(d)) => Some(
            (proc::dir_size_on_disk(&d.join("ib")).unwrap_or(0)
                + proc::dir_size_on_disk(&d.join(".rocksdb")).unwrap_or(0)) as f64,
        ),
        (Family::MySql, None) => None,
        (Family::Postgres | Family::Embedded, _) => end.get("database_size_bytes").copied(),
    };
    if let Some(size) = size {
        hw.ibench_row.dbgb1 = Some(size / 1024.0 / 1024.0 / 1024.0);
        hw.missing.retain(|m| !m.starts_with("dbgb1"));
    }
    let device = hw
        .io
        .as_ref()
        .map(|i| i.write_kb_per_s * 1024.0 * hw.interval_s);
    let write_amplification = match &missing {
        Some((at, e)) => writeamp::without_counters(*at, &e.message, device),
        None => writeamp::analyse(
            engine,
            &delta,
            device,
            end.get("innodb_page_size")
                .or_else(|| end.get("block_size"))
                .copied(),
        ),
    };
    DbmsCounters {
        write_amplification,
        delta,
        end,
        error: missing.as_ref().map(|(_, e)| e.message.clone()),
        missing: missing.map(|(at, e)| MissingSnapshot { at, why: e.why }),
    }
}

/// What the step did, for normalising.
pub struct Work<'a> {
    pub op: &'a str,
    /// Operations in the interval, as the engine counted them.
    pub op_count: u64,
    pub inserted_rows: u64,
    pub is_query_step: bool,
    /// The step's measured time, which the interval should match (its duration_s).
    pub measured_s: f64,
}

/// `per_s`: units of `d`'s times per second (USER_HZ for /proc, 10^6 for getrusage).
fn cpu_use(d: &ProcCpu, per_s: f64) -> CpuUse {
    let (user_s, system_s) = (d.utime as f64 / per_s, d.stime as f64 / per_s);
    CpuUse {
        user_s,
        system_s,
        voluntary_cs: d.voluntary_cs,
        involuntary_cs: d.involuntary_cs,
        rss_kb: d.rss_kb,
        // /proc charges CPU time a tick at a time, so the tick count is the resolution;
        // getrusage (the client) is finer and needs no mark.
        ticks: (per_s == USER_HZ).then_some(d.utime + d.stime),
    }
}

fn per(x: f64, n: f64) -> Option<f64> {
    (n > 0.0).then(|| x / n)
}

/// iostat -x's columns from counter differences over `secs`; `devices` is how many were added
/// up in `d` (%util is their mean, aqu-sz their sum).
fn io_rates(d: &DiskIo, secs: f64, devices: usize) -> IoRates {
    IoRates {
        reads_per_s: d.reads as f64 / secs,
        read_kb_per_s: d.read_bytes as f64 / 1024.0 / secs,
        writes_per_s: d.writes as f64 / secs,
        write_kb_per_s: d.write_bytes as f64 / 1024.0 / secs,
        flushes_per_s: d.flushes as f64 / secs,
        r_await_ms: per(d.read_ms as f64, d.reads as f64),
        w_await_ms: per(d.write_ms as f64, d.writes as f64),
        aqu_sz: Some(d.queue_ms as f64 / (secs * 1000.0)),
        util_pct: Some(d.busy_ms as f64 / (secs * 1000.0 * devices.max(1) as f64) * 100.0),
    }
}

pub fn hardware(s: &Sources, a: &Snapshot, b: &Snapshot, w: &Work) -> Hardware {
    let secs = b.at.duration_since(a.at).as_secs_f64().max(1e-9);
    let mut missing = Vec::new();
    let n = w.op_count as f64;

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
            busy_ticks: Some(d.busy()),
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
        let d = proc::total(&b.disk).since(&proc::total(&a.disk));
        Some(io_rates(&d, secs, s.devices.len()))
    };
    let per_device = s
        .roles
        .iter()
        .map(|(name, holds)| {
            let zero = DiskIo::default();
            let d = b
                .disk
                .get(name)
                .unwrap_or(&zero)
                .since(a.disk.get(name).unwrap_or(&zero));
            DeviceIo {
                device: name.clone(),
                holds: holds.clone(),
                io: io_rates(&d, secs, 1),
            }
        })
        .collect();

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
        measured_s: Some(w.measured_s),
        op: w.op.to_string(),
        op_count: n,
        cpus: s.cpus,
        devices: s.devices.iter().cloned().collect(),
        host,
        io,
        per_device,
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
