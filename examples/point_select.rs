//! Point query by primary key, prepared, one connection, closed loop, through dbperf's real client
//! path: `engine::run_step` with one role whose operation is `SELECT c FROM sbtest1 WHERE id = ?`
//! on dbperf's own PostgreSQL or MySQL/MariaDB protocol client. The engine's per-operation
//! bookkeeping (two clock reads, two HDR records, the ibench bucket, the per-second slot) is
//! therefore part of what is measured, as it would be in a dbperf workload.
//!
//! The table is sysbench's (`sysbench oltp_point_select --tables=1 --table-size=N prepare`), so
//! dbperf, sysbench and pgbench read the same rows. Ids are uniform in [1, table size].
//!
//! Prints one JSON line: operations, elapsed seconds and the process's own
//! getrusage(RUSAGE_SELF) user/system seconds over the timed part only (from just before the
//! first query to just after the last; connecting and preparing are outside it). Run by
//! bench/client-overhead, which also measures the whole process from the outside.
//!
//! ```sh
//! cargo run --release --example point_select -- --engine postgres --host 127.0.0.1 --port 5432 \
//!     --user dbperf --database ib --seconds 15
//! cargo run --release --example point_select -- --engine mariadb --socket /path/mysqld.sock \
//!     --user root --database ib --seconds 15
//! ```

use std::path::PathBuf;
use std::sync::atomic::AtomicBool;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use anyhow::{bail, Context};
use clap::Parser;

use dbperf::dbms::{Conn, Dbms, Endpoint, Param, ServerAdapter, StmtId, Transport};
use dbperf::engines::Engine;
use dbperf::runner::{
    run_step, ErrorClass, Lifetime, OpError, OpOutcome, Pace, Role, RoleSpec, StepPlan,
};
use dbperf::workload::common::rand::{below, rng, Rand};

#[derive(Parser)]
#[command(
    about = "Prepared point selects on sysbench's sbtest1 through dbperf's engine and adapters"
)]
struct Args {
    /// postgres, mariadb or mysql
    #[arg(long)]
    engine: String,
    /// TCP host (give --host and --port, or --socket)
    #[arg(long)]
    host: Option<String>,
    #[arg(long)]
    port: Option<u16>,
    /// Unix socket: PostgreSQL's `.s.PGSQL.<port>` file (or its directory), MySQL's socket file
    #[arg(long)]
    socket: Option<PathBuf>,
    #[arg(long)]
    user: String,
    #[arg(long, default_value = "ib")]
    database: String,
    /// Rows in sbtest1: ids are drawn uniformly from [1, table-size]
    #[arg(long, default_value_t = 100_000)]
    table_size: u64,
    /// Seconds of queries, by the role's own clock
    #[arg(long, default_value_t = 15.0)]
    seconds: f64,
    #[arg(long, default_value_t = 1)]
    seed: u64,
}

/// getrusage(RUSAGE_SELF): (user, system) seconds of the whole process, every thread.
fn rusage_self() -> (f64, f64) {
    // SAFETY: getrusage fills the zeroed struct it is given.
    let ru = unsafe {
        let mut ru: libc::rusage = std::mem::zeroed();
        libc::getrusage(libc::RUSAGE_SELF, &mut ru);
        ru
    };
    let s = |t: libc::timeval| t.tv_sec as f64 + t.tv_usec as f64 * 1e-6;
    (s(ru.ru_utime), s(ru.ru_stime))
}

/// The role checks its clock once per this many queries (a few ms at most past the end).
const CHECK_EVERY: u64 = 64;

/// What the role measured itself, handed back to main when it finishes.
#[derive(Default, Clone, Copy)]
struct Timed {
    ops: u64,
    rows: u64,
    elapsed_s: f64,
    user_s: f64,
    sys_s: f64,
}

struct PointSelect {
    conn: Box<dyn Conn>,
    stmt: StmtId,
    rng: Rand,
    table_size: u64,
    run_for: Duration,
    /// Set at the first operation: (wall clock, user, sys).
    began: Option<(Instant, f64, f64)>,
    ops: u64,
    rows: u64,
    out: Arc<Mutex<Timed>>,
}

impl Role for PointSelect {
    fn op(&mut self) -> Result<OpOutcome, OpError> {
        // The role's own clock is read every CHECK_EVERY operations only, so the stop test adds
        // next to nothing to what is measured (the engine reads the clock twice per operation).
        if self.ops.is_multiple_of(CHECK_EVERY) {
            let now = Instant::now();
            let (t0, u0, s0) = *self.began.get_or_insert_with(|| {
                let (u, s) = rusage_self();
                (now, u, s)
            });
            if now - t0 >= self.run_for {
                let (u1, s1) = rusage_self();
                *self.out.lock().unwrap() = Timed {
                    ops: self.ops,
                    rows: self.rows,
                    elapsed_s: (now - t0).as_secs_f64(),
                    user_s: u1 - u0,
                    sys_s: s1 - s0,
                };
                return Ok(OpOutcome::Finished);
            }
        }
        let id = 1 + below(&mut self.rng, self.table_size) as i64;
        let rows = self
            .conn
            .query(self.stmt, &[Param::Int(id)])
            .map_err(|e| OpError {
                kind: 0,
                class: if e.transient {
                    ErrorClass::Ignored
                } else {
                    ErrorClass::Failed
                },
                message: e.message,
                cause: None,
            })?;
        self.ops += 1;
        self.rows += rows;
        Ok(OpOutcome::Done { kind: 0, rows })
    }
}

fn main() -> anyhow::Result<()> {
    let a = Args::parse();
    let transport = match (&a.host, a.port, &a.socket) {
        (Some(h), Some(p), None) => Transport::Tcp {
            host: h.clone(),
            port: p,
        },
        (None, None, Some(s)) => Transport::Socket { path: s.clone() },
        _ => bail!("give --host and --port, or --socket"),
    };
    let endpoint = Endpoint {
        transport,
        user: a.user.clone(),
        password: None,
        database: a.database.clone(),
    };
    let engine = Engine::parse(&a.engine)
        .filter(|e| e.is_server())
        .ok_or_else(|| {
            anyhow::anyhow!("unknown engine {}: postgres, mariadb or mysql", a.engine)
        })?;
    let dbms: Arc<dyn Dbms> = ServerAdapter {
        engine,
        rocksdb: false,
        config_name: "external",
        config_text: "",
        timeouts: Default::default(),
    }
    .open(&endpoint)?;
    let placeholder = dbms.dialect().placeholder(1);
    let sql = format!("SELECT c FROM sbtest1 WHERE id = {placeholder}");
    let out = Arc::new(Mutex::new(Timed::default()));
    let role_out = out.clone();
    let (table_size, seed) = (a.table_size.max(1), a.seed);
    let run_for = Duration::from_secs_f64(a.seconds);
    let plan = StepPlan {
        kinds: vec!["point_select"],
        roles: vec![RoleSpec {
            name: "point_select".into(),
            pace: Pace::Closed,
            lifetime: Lifetime::Primary,
            permits_to: None,
            make: Box::new(move || {
                let mut conn = dbms.connect()?;
                let stmt = conn.prepare(&sql).context("prepare")?;
                Ok(Box::new(PointSelect {
                    conn,
                    stmt,
                    rng: rng(seed),
                    table_size,
                    run_for,
                    began: None,
                    ops: 0,
                    rows: 0,
                    out: role_out,
                }) as Box<dyn Role>)
            }),
        }],
        target_rows_per_s: None,
        paced_kind: None,
    };
    let m = run_step(plan, &mut (), &Arc::new(AtomicBool::new(false)));
    if let Some(f) = m.failure {
        bail!("point select failed: {f}");
    }
    let t = *out.lock().unwrap();
    let k = &m.kinds[0];
    if k.ops != t.ops {
        bail!("engine counted {} operations, the role {}", k.ops, t.ops);
    }
    if t.rows != t.ops {
        bail!(
            "{} of {} queries found no row: is sbtest1 prepared with --table-size={}?",
            t.ops - t.rows,
            t.ops,
            table_size
        );
    }
    let us = |s: f64| s * 1e6 / t.ops.max(1) as f64;
    println!(
        "{{\"ops\": {}, \"elapsed_s\": {:.6}, \"user_s\": {:.6}, \"sys_s\": {:.6}, \
         \"qps\": {:.1}, \"user_us_per_op\": {:.3}, \"sys_us_per_op\": {:.3}, \
         \"p50_us\": {:.1}, \"p99_us\": {:.1}, \"engine_duration_s\": {:.6}}}",
        t.ops,
        t.elapsed_s,
        t.user_s,
        t.sys_s,
        t.ops as f64 / t.elapsed_s,
        us(t.user_s),
        us(t.sys_s),
        k.latency.value_at_quantile(0.5) as f64 / 1e3,
        k.latency.value_at_quantile(0.99) as f64 / 1e3,
        m.duration.as_secs_f64(),
    );
    Ok(())
}
