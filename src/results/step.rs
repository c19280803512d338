//! A step file (`steps/<step>.json`, docs/results.md): the fields every step of every suite has
//! (status, timing, the headline, latency per operation type, hardware, counters, the series)
//! and one payload its suite owns (`Payload`), which only that suite's driver fills and only its
//! report section reads.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use super::payload::Payload;
use super::{hardware, profile, Status, SCHEMA};

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
pub struct CleanupRecord {
    pub budget_s: u64,
    pub rule: String,
    pub actions: Vec<String>,
    pub work_s: f64,
    pub slept_s: f64,
    pub error: Option<String>,
}

/// What every step has of its setup: how many connections ran it, on which tables.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct StepParameters {
    pub clients: u64,
    pub tables: Vec<String>,
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
    /// Percentiles of the per-second rate of the headline's operation (docs/metrics.md).
    #[serde(default)]
    pub interval_rate_percentiles: BTreeMap<String, Option<f64>>,
    /// The untimed cleanup and wait after the step, where its suite has one.
    #[serde(default)]
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
    /// `--server-memory`: the cap as the kernel held it at the end of the step (read back from
    /// the server's cgroup); absent when uncapped and in older files.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub memory_cap: Option<super::StepMemoryCap>,
    /// What the step's suite measured in its own terms, under the suite's name (`ibench`,
    /// `sysbench`, `tpcc`); absent where the suite has nothing of its own (a suite's load).
    #[serde(flatten, with = "super::payload::flat")]
    pub payload: Option<Payload>,
}

impl StepFile {
    /// A step file with what every step has and nothing measured: a step's drivers fill in
    /// what they measured (and `payload`) from here.
    pub fn blank(
        step: String,
        started_at: String,
        headline: Headline,
        parameters: StepParameters,
    ) -> StepFile {
        StepFile {
            schema: SCHEMA,
            step,
            status: Status::Ok,
            error: None,
            warnings: Vec::new(),
            started_at,
            duration_s: 0.0,
            headline,
            parameters,
            ops: BTreeMap::new(),
            interval_rate_percentiles: BTreeMap::new(),
            cleanup: None,
            table_rows: None,
            series_file: None,
            hardware: None,
            dbms: None,
            profile: None,
            diagnostics: Vec::new(),
            metrics: None,
            group: None,
            memory_cap: None,
            payload: None,
        }
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
