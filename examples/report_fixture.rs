//! Writes synthetic but schema-valid Insert Benchmark results for timing `dbperf report`: N
//! targets x the ten steps, with per-second series as long as the cached-small preset's (l.i0
//! 100 s, l.x 30 s, l.i1 1000 s, l.i2 500 s, each qr/qp 1800 s), written through dbperf's own
//! result types and series writer so they are exactly what `dbperf run` writes. Numbers differ
//! per target (a few percent to 2x) and per second, deterministically; each step also carries a
//! `hardware` object as dbperf's metrics write it. Run by bench/report-speed.sh.
//!
//! Usage: report_fixture OUT [TARGETS=50] [SERIES_SCALE=1.0]

use std::collections::BTreeMap;
use std::path::Path;

use dbperf::results::series::{SecondKind, SecondRow};
use dbperf::results::{
    self, series::SeriesWriter, Headline, IbenchBuckets, IbenchStep, OpStats, RunFile, Sla,
    StepFile, StepParameters, TargetInfo, Tool, SCHEMA,
};
use dbperf::runner::recorder::new_histogram;

/// xorshift: the same fixture on every machine.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> f64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        (self.0 >> 11) as f64 / (1u64 << 53) as f64
    }
}

struct StepDef {
    name: &'static str,
    seconds: f64,
    kinds: &'static [&'static str],
    /// Headline rate of target 0.
    rate: f64,
    rows_per_commit: u64,
    paced: Option<u64>,
}

const STEPS: [StepDef; 10] = [
    StepDef {
        name: "l.i0",
        seconds: 100.0,
        kinds: &["insert"],
        rate: 400_000.0,
        rows_per_commit: 100,
        paced: None,
    },
    StepDef {
        name: "l.x",
        seconds: 30.0,
        kinds: &["insert", "index"],
        rate: 900_000.0,
        rows_per_commit: 100,
        paced: None,
    },
    StepDef {
        name: "l.i1",
        seconds: 1000.0,
        kinds: &["insert", "delete"],
        rate: 20_000.0,
        rows_per_commit: 50,
        paced: None,
    },
    StepDef {
        name: "l.i2",
        seconds: 500.0,
        kinds: &["insert", "delete"],
        rate: 8_000.0,
        rows_per_commit: 5,
        paced: None,
    },
    StepDef {
        name: "qr100",
        seconds: 1800.0,
        kinds: &["insert", "delete", "query"],
        rate: 120_000.0,
        rows_per_commit: 50,
        paced: Some(100),
    },
    StepDef {
        name: "qp100",
        seconds: 1800.0,
        kinds: &["insert", "delete", "query"],
        rate: 130_000.0,
        rows_per_commit: 50,
        paced: Some(100),
    },
    StepDef {
        name: "qr500",
        seconds: 1800.0,
        kinds: &["insert", "delete", "query"],
        rate: 115_000.0,
        rows_per_commit: 50,
        paced: Some(500),
    },
    StepDef {
        name: "qp500",
        seconds: 1800.0,
        kinds: &["insert", "delete", "query"],
        rate: 125_000.0,
        rows_per_commit: 50,
        paced: Some(500),
    },
    StepDef {
        name: "qr1000",
        seconds: 1800.0,
        kinds: &["insert", "delete", "query"],
        rate: 110_000.0,
        rows_per_commit: 50,
        paced: Some(1000),
    },
    StepDef {
        name: "qp1000",
        seconds: 1800.0,
        kinds: &["insert", "delete", "query"],
        rate: 120_000.0,
        rows_per_commit: 50,
        paced: Some(1000),
    },
];

fn op_stats(rng: &mut Rng, count: u64, rows: u64, secs: f64, base_us: f64, hdr: &str) -> OpStats {
    let q = |f: f64| (base_us * f * 1000.0).round() / 1000.0;
    let mut b = [0u64; 10];
    b[0] = count * 7 / 10;
    b[1] = count * 2 / 10;
    b[2] = count - b[0] - b[1];
    OpStats {
        count,
        rows,
        errors: 0,
        retried: 0,
        ignored: 0,
        failed: 0,
        error_samples: Vec::new(),
        ops_per_s: count as f64 / secs,
        rows_per_s: rows as f64 / secs,
        latency_us: results::Percentiles {
            mean: q(1.1),
            p50: q(1.0),
            p90: q(1.6),
            p99: q(3.0 + rng.next()),
            p99_9: q(9.0),
            p99_99: q(20.0),
            max: q(40.0 + 10.0 * rng.next()),
        },
        service_us: results::Percentiles {
            mean: q(1.0),
            p50: q(0.9),
            p90: q(1.5),
            p99: q(2.8),
            p99_9: q(8.0),
            p99_99: q(18.0),
            max: q(38.0),
        },
        ibench_buckets: IbenchBuckets::from_counts(&b),
        max_ms: q(45.0) / 1000.0,
        hdr_latency: hdr.to_string(),
    }
}

fn write_target(out: &Path, i: usize, scale: f64, hdr: &str) -> std::io::Result<()> {
    let name = format!("sqlite.cfg{i:02}");
    let dir = out.join(&name);
    let steps_dir = dir.join("steps");
    std::fs::create_dir_all(&steps_dir)?;
    let mut rng = Rng(0x9e37_79b9_7f4a_7c15 ^ (i as u64 + 1).wrapping_mul(0x2545_f491_4f6c_dd1d));
    // Targets differ by up to about 2x, so every highlight rule has something to show.
    let factor = 0.6 + 0.8 * rng.next();
    let steps: Vec<String> = STEPS.iter().map(|s| s.name.to_string()).collect();
    let run = RunFile {
        schema: SCHEMA,
        tool: Tool {
            name: "dbperf".into(),
            version: env!("CARGO_PKG_VERSION").into(),
            git_revision: "fixture".into(),
        },
        command_line: vec!["report_fixture".into()],
        target: TargetInfo {
            name: name.clone(),
            engine: dbperf::engines::Engine::Sqlite.name().into(),
            version: "3.54.1".into(),
            config_name: format!("cfg{i:02}"),
            config_text: format!(
                "journal_mode = wal\nsynchronous = 1\ncache_size = -{}\n",
                16384 * (i + 1)
            ),
            config_source: None,
            server: None,
            build: None,
        },
        suite: dbperf::suites::Suite::Ibench,
        preset: "cached-small".into(),
        parameters: serde_json::json!({
            "clients": 1, "deletes": true, "preset": "cached-small", "query_seconds": 1800,
            "rates": [100, 500, 1000], "rows_l_i0": 30_000_000, "rows_l_i1": 40_000_000,
            "rows_l_i2": 10_000_000, "shared_table": false, "steps": steps
        }),
        steps_planned: steps.clone(),
        host: serde_json::json!({
            "hostname": "bench", "cpu_model": "fixture", "cpus_online": 2, "memory_kb": 24684096,
            "kernel": "6.1", "os": "Debian GNU/Linux 12 (bookworm)", "warnings": []
        }),
        started_at: format!("2026-01-01T00:{:02}:{:02}Z", i / 60, i % 60),
        ended_at: Some("2026-01-02T00:00:00Z".into()),
        status: dbperf::results::RunStatus::Ok,
        failed_step: None,
        error: None,
        client_peak_rss_kb: Some(30_000),
        warnings: Vec::new(),
        campaign: None,
        axes: Default::default(),
    };
    results::write_json_atomic(&dir.join("run.json"), &run)?;
    for s in &STEPS {
        let secs = (s.seconds * scale).max(2.0);
        let n = secs.ceil() as u64;
        let kinds: Vec<(usize, &'static str)> = s.kinds.iter().copied().enumerate().collect();
        let mut w = SeriesWriter::create(&steps_dir, s.name, kinds)?;
        let rate = s.rate * factor;
        for sec in 0..n {
            let interval = if sec + 1 == n {
                secs - (n - 1) as f64
            } else {
                1.0
            };
            let interval = if interval <= 0.0 { 1.0 } else { interval };
            let row_kinds = s
                .kinds
                .iter()
                .map(|k| {
                    let r = match (*k, s.paced) {
                        ("query", _) => rate * (0.85 + 0.3 * rng.next()),
                        ("insert" | "delete", Some(p)) => p as f64,
                        ("index", _) => 0.0,
                        _ if s.name == "l.x" => 100.0,
                        _ => rate * (0.8 + 0.4 * rng.next()),
                    };
                    let rows = (r * interval) as u64;
                    let rpc = if *k == "query" { 1 } else { s.rows_per_commit };
                    SecondKind {
                        ops: rows / rpc.max(1),
                        rows,
                        errors: 0,
                        p99_ns: (50_000.0 * (1.0 + rng.next())) as u64,
                        max_ns: (200_000.0 * (1.0 + 20.0 * rng.next().powi(8))) as u64,
                    }
                })
                .collect();
            w.row(&SecondRow {
                index: sec,
                interval_s: interval,
                kinds: row_kinds,
                target_rows_per_s: s.paced.map(|p| p as f64),
                achieved_rows_per_s: s.paced.map(|p| p as f64),
            })?;
        }
        w.finish()?;
        let mut ops = BTreeMap::new();
        for k in s.kinds {
            let (count, rows, lat) = match (*k, s.paced) {
                ("query", _) => {
                    let c = (rate * secs) as u64;
                    (c, c * 10, 8.0)
                }
                ("index", _) => (3, 0, 5_000_000.0),
                (_, Some(p)) => (
                    (p as f64 * secs) as u64 / 50,
                    (p as f64 * secs) as u64,
                    900.0,
                ),
                _ if s.name == "l.x" => (1, 100, 500.0),
                _ => {
                    let rows = (rate * secs) as u64;
                    (rows / s.rows_per_commit, rows, 60.0 / factor)
                }
            };
            ops.insert(
                k.to_string(),
                op_stats(&mut rng, count, rows, secs, lat, hdr),
            );
        }
        let mut pct = BTreeMap::new();
        let r = if s.paced.is_some() { "qps" } else { "ips" };
        for p in [50, 75, 90, 95, 99] {
            pct.insert(
                format!("{r}_p{p}_interval"),
                Some((rate * (1.0 - p as f64 / 300.0)).round()),
            );
        }
        let sla = s.paced.map(|p| {
            // Every seventh target misses the SLA at the highest rate.
            let achieved = if p == 1000 && i % 7 == 3 {
                900.0
            } else {
                p as f64
            };
            Sla {
                target_rows_per_s: p as f64,
                achieved_rows_per_s: achieved,
                ratio: achieved / p as f64,
                required_ratio: 0.95,
                met: Some(achieved >= 0.95 * p as f64),
            }
        });
        let headline = Headline {
            metric: if s.paced.is_some() {
                "queries_per_s"
            } else if s.name == "l.x" {
                "indexed_rows_per_s"
            } else {
                "inserts_per_s"
            }
            .into(),
            value: if s.name == "l.x" {
                rate
            } else {
                (rate * 1000.0).round() / 1000.0
            },
            unit: if s.paced.is_some() {
                "queries/s"
            } else {
                "rows/s"
            }
            .into(),
        };
        let parameters = StepParameters {
            clients: 1,
            tables: vec!["pi1".into()],
        };
        let part = IbenchStep {
            rows_per_commit: s.rows_per_commit,
            planned_rows: 0,
            rate_per_client: s.paced,
            deletes: s.kinds.contains(&"delete"),
            queries: s.paced.map(|_| {
                if s.name.starts_with("qr") {
                    "range"
                } else {
                    "point"
                }
                .into()
            }),
            sla,
        };
        let mut file = serde_json::json!({
            "schema": SCHEMA,
            "step": s.name,
            "status": "ok",
            "error": null,
            "warnings": [],
            "started_at": "2026-01-01T00:00:00Z",
            "duration_s": secs,
            "headline": headline,
            "parameters": parameters,
            "ops": ops,
            "interval_rate_percentiles": pct,
            "cleanup": null,
            "table_rows": null,
            "series_file": format!("{}.series.csv", s.name),
        });
        file[dbperf::suites::Suite::Ibench.name()] = serde_json::json!(part);
        // The core must read back as this dbperf's StepFile: the fixture is a valid result.
        serde_json::from_value::<StepFile>(file.clone()).expect("a valid step file");
        // Hardware cost as dbperf's metrics write it (docs/metrics.md), so the report's metric
        // columns are part of what is timed.
        let op_rate = if s.paced.is_some() {
            rate
        } else {
            rate.max(1.0)
        };
        file["hardware"] = serde_json::json!({
            "ibench_row": {
                "rps": 10.0 * factor, "rmbps": 0.1, "wps": 1500.0 * factor, "wmbps": 300.0,
                "rpq": 10.0 * factor / op_rate, "rkbpq": 40.0 / op_rate, "wpi": 0.1 * factor,
                "wkbpi": 20.0 * factor, "csps": 40_000.0, "cpups": 80.0 * factor,
                "cspq": 40_000.0 / op_rate, "cpupq": 1.6e6 / op_rate, "dbgb1": 4.0, "dbgb2": 4.2,
                "rss": null
            },
            "per_op": { "client_cpu_us": 0.5e6 / op_rate, "server_cpu_us": null },
            "sysbench_row": { "cpu_o": 80.0 / op_rate, "o_s": op_rate },
            "missing": ["server CPU: embedded target"]
        });
        results::write_json_atomic(&steps_dir.join(format!("{}.json", s.name)), &file)?;
    }
    Ok(())
}

fn main() -> std::io::Result<()> {
    let args: Vec<String> = std::env::args().collect();
    let Some(out) = args.get(1) else {
        eprintln!("usage: report_fixture OUT [TARGETS=50] [SERIES_SCALE=1.0]");
        std::process::exit(2);
    };
    let n: usize = args.get(2).and_then(|s| s.parse().ok()).unwrap_or(50);
    let scale: f64 = args.get(3).and_then(|s| s.parse().ok()).unwrap_or(1.0);
    let mut h = new_histogram();
    for v in 1..2000u64 {
        h.record(v * v * 50).expect("in range");
    }
    let hdr = results::encode_histogram(&h);
    let out = Path::new(out);
    for i in 0..n {
        write_target(out, i, scale, &hdr)?;
    }
    println!("{n} targets x {} steps in {}", STEPS.len(), out.display());
    Ok(())
}
