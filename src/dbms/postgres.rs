//! PostgreSQL through dbperf's own protocol client (`pg_wire`), which costs less client CPU per
//! query than libpq (docs/performance.md). Statements are prepared once per connection;
//! integer parameters travel in binary, typed by what the server inferred for each placeholder,
//! strings and timestamps as text.

use super::pg_wire::{PgError, PgWire, Prepared};
use super::wire_error::PgServer;
use super::{
    Budget, Conn, DbError, Dbms, Dialect, Endpoint, Keep, Param, Rows, SqlDialect, StmtId,
    Timeouts, KEEP, SKIP,
};
use crate::engines::Engine;

/// Errors that are worth counting and going on by default: serialization failure and deadlock
/// (what pgbench retries), lock not available, and a unique violation (sysbench's PostgreSQL
/// driver restarts the event on it: concurrent delete+insert of one id in write-only and
/// read-write). Everything else (a lost connection above all) fails the step.
pub fn transient_sqlstate(code: &str) -> bool {
    matches!(code, "40001" | "40P01" | "55P03" | "23505")
}

fn map_err(e: PgError) -> DbError {
    let (transient, code, fault) = match &e {
        // A FATAL error ended the session: nothing to go on with, whatever its code.
        PgError::Server(PgServer { code, fatal, .. }) => {
            (!fatal && transient_sqlstate(code), Some(code.clone()), None)
        }
        PgError::Cut { fault, .. } => (false, None, Some(*fault)),
        _ => (false, None, None),
    };
    DbError {
        message: e.to_string(),
        transient,
        code,
        fault,
        lost: e.lost(),
    }
}

/// True when the server accepts connections: it answers and is not starting up, shutting down
/// or recovering (57P03). A refused login still means the server is up, as for libpq's PQping.
pub fn ping(ep: &Endpoint) -> bool {
    // Readiness is polled: a server that does not answer soon is asked again, not waited on.
    let quick = Timeouts {
        connect: std::time::Duration::from_secs(5),
        statement: std::time::Duration::from_secs(5),
        ..Timeouts::default()
    };
    match PgWire::connect(ep, quick) {
        Ok(_) => true,
        Err(PgError::Server(PgServer { code, .. })) => code != "57P03",
        Err(_) => false,
    }
}

pub struct PgConn {
    wire: PgWire,
    stmts: Vec<Prepared>,
    /// How long its statements may take (`Conn::set_budget`); `execute_batch` is always long.
    budget: Budget,
}

impl PgConn {
    pub fn connect(ep: &Endpoint) -> Result<PgConn, DbError> {
        PgConn::connect_with(ep, Timeouts::default())
    }

    pub fn connect_with(ep: &Endpoint, timeouts: Timeouts) -> Result<PgConn, DbError> {
        let wire = PgWire::connect(ep, timeouts).map_err(|e| {
            let lost = e.lost_at_login();
            let mut d = map_err(e);
            d.lost = lost;
            d.message = format!(
                "cannot connect to PostgreSQL ({}): {}",
                ep.describe(),
                d.message
            );
            d.transient = false;
            d.code = None;
            d
        })?;
        Ok(PgConn {
            wire,
            stmts: Vec::new(),
            budget: Budget::Operation,
        })
    }

    /// First column of every row, as text ("" for NULL); within `keep`.
    pub fn query_strings(&mut self, sql: &str, keep: Keep) -> Result<Vec<String>, DbError> {
        let mut out = Vec::new();
        self.wire_rows_kept(sql, keep, |cols| {
            let v = cols.first().copied().flatten().unwrap_or_default();
            out.push(String::from_utf8_lossy(v).into_owned());
        })?;
        Ok(out)
    }

    /// Runs SQL text, handing each row's columns to `row`; more rows or bytes than `keep` fail
    /// the statement (`Fault::TooMuch`) and close the connection.
    pub fn wire_rows_kept(
        &mut self,
        sql: &str,
        keep: Keep,
        row: impl FnMut(&[Option<&[u8]>]),
    ) -> Result<(), DbError> {
        self.wire
            .simple_query(sql, self.budget, keep, row)
            .map_err(map_err)
    }

    /// (rows read, the command tag's count)
    fn run(&mut self, stmt: StmtId, params: &[Param]) -> Result<(u64, u64), DbError> {
        let st = self.stmts.get(stmt).ok_or_else(|| DbError {
            message: format!("no statement {stmt}"),
            transient: false,
            code: None,
            fault: None,
            lost: None,
        })?;
        self.wire.execute(st, params, self.budget).map_err(map_err)
    }
}

impl Conn for PgConn {
    fn execute_batch(&mut self, sql: &str) -> Result<(), DbError> {
        self.wire
            .simple_query(sql, Budget::Long, SKIP, |_| {})
            .map_err(map_err)
    }

    fn prepare(&mut self, sql: &str) -> Result<StmtId, DbError> {
        let st = self.wire.prepare(sql, self.budget).map_err(map_err)?;
        self.stmts.push(st);
        Ok(self.stmts.len() - 1)
    }

    fn execute(&mut self, stmt: StmtId, params: &[Param]) -> Result<u64, DbError> {
        Ok(self.run(stmt, params)?.1)
    }

    fn query(&mut self, stmt: StmtId, params: &[Param]) -> Result<u64, DbError> {
        Ok(self.run(stmt, params)?.0)
    }

    fn run_text(&mut self, sql: &str) -> Result<u64, DbError> {
        let (rows, count) = self
            .wire
            .simple_query_walk(sql, self.budget)
            .map_err(map_err)?;
        Ok(rows.max(count))
    }

    fn text_rows(&mut self, sql: &str, keep: Keep, out: &mut Rows) -> Result<u64, DbError> {
        out.start(keep);
        // The wire client counts against the same `keep` and closes the connection first.
        let mut refused = None;
        self.wire_rows_kept(sql, keep, |cols| {
            if refused.is_none() {
                refused = out.push(cols).err();
            }
        })?;
        match refused {
            Some(message) => Err(super::rows::too_much(message)),
            None => Ok(out.len() as u64),
        }
    }

    fn query_i64(&mut self, sql: &str) -> Result<Option<i64>, DbError> {
        let mut first: Option<Option<String>> = None;
        self.wire_rows_kept(sql, KEEP, |cols| {
            if first.is_none() {
                first = Some(
                    cols.first()
                        .copied()
                        .flatten()
                        .map(|v| String::from_utf8_lossy(v).into_owned()),
                );
            }
        })?;
        match first.flatten() {
            None => Ok(None),
            Some(v) => v.trim().parse().map(Some).map_err(|_| DbError {
                message: format!("expected an integer, got {}", crate::untrusted::shown(&v)),
                transient: false,
                code: None,
                fault: None,
                lost: None,
            }),
        }
    }

    fn set_budget(&mut self, budget: Budget) {
        self.budget = budget;
    }
}

/// Each session waiting on a lock with each session blocking it, as `stall::LockWait`'s JSON.
const PG_LOCK_WAITS: &str = "SELECT json_build_object(\
     'waiter', w.pid::text, 'waiter_query', left(coalesce(w.query, ''), 300), \
     'holder', h.pid::text, 'holder_state', coalesce(h.state, ''), \
     'holder_query', left(coalesce(h.query, ''), 300), \
     'object', coalesce((SELECT coalesce(l.relation::regclass::text, l.locktype) || ' (' \
         || l.mode || ')' FROM pg_locks l WHERE l.pid = w.pid AND NOT l.granted LIMIT 1), \
         'a lock'), \
     'waited_s', extract(epoch FROM now() - w.query_start)::float8)::text \
     FROM pg_stat_activity w CROSS JOIN LATERAL unnest(pg_blocking_pids(w.pid)) AS b(pid) \
     JOIN pg_stat_activity h ON h.pid = b.pid";

pub struct Postgres {
    endpoint: Endpoint,
    /// The engine of the PostgreSQL family this server is, as the target named it: passed in,
    /// so a second engine of the family is recorded as itself.
    engine: Engine,
    config_name: String,
    config_file: String,
    dialect: PgDialect,
    timeouts: Timeouts,
}

impl Postgres {
    pub fn new(
        endpoint: Endpoint,
        engine: Engine,
        config_name: &str,
        config_file: &str,
    ) -> Postgres {
        Postgres {
            endpoint,
            engine,
            config_name: config_name.into(),
            config_file: config_file.into(),
            dialect: PgDialect,
            timeouts: Timeouts::default(),
        }
    }

    /// How long its connections wait on the server (default: `Timeouts::default()`).
    pub fn with_timeouts(mut self, timeouts: Timeouts) -> Postgres {
        self.timeouts = timeouts;
        self
    }

    fn pg(&self) -> Result<PgConn, DbError> {
        PgConn::connect_with(&self.endpoint, self.timeouts.clone())
    }

    /// A connection of a snapshot's own, bounded by `within` (`Timeouts::snapshot`).
    fn pg_snapshot(&self, within: std::time::Duration) -> Result<PgConn, DbError> {
        PgConn::connect_with(&self.endpoint, self.timeouts.snapshot(within))
    }
}

impl Dbms for Postgres {
    fn engine(&self) -> Engine {
        self.engine
    }

    fn connect(&self) -> anyhow::Result<Box<dyn Conn>> {
        Ok(Box::new(self.pg()?))
    }

    fn version(&self) -> anyhow::Result<String> {
        Ok(self.pg()?.query_strings("SELECT version()", KEEP)?.join(""))
    }

    fn config_name(&self) -> &str {
        &self.config_name
    }

    fn config_text(&self) -> anyhow::Result<String> {
        let rows = self.pg()?.query_strings(
            "SELECT name || ' = ' || setting || coalesce(' ' || unit, '') || '  # ' || source \
             FROM pg_settings WHERE source NOT IN ('default', 'override') \
             OR name IN ('data_checksums', 'block_size', 'wal_block_size', 'wal_segment_size') \
             ORDER BY name",
            KEEP,
        )?;
        let mut out = self.config_file.clone();
        // The initdb-time settings are listed whatever their source: they differ between
        // versions (PostgreSQL 18 turned checksums on) and change what a write costs.
        out.push_str("\n# effective settings not at their built-in default, and the data directory's initdb-time settings (pg_settings):\n");
        for r in rows
            .iter()
            .filter(|r| !super::is_secret_setting(r.split(' ').next().unwrap_or("")))
        {
            out.push_str(r);
            out.push('\n');
        }
        Ok(out)
    }

    fn dialect(&self) -> &dyn Dialect {
        &self.dialect
    }

    fn answers(&self, within: std::time::Duration) -> bool {
        super::pg_wire::answers(&self.endpoint, within, self.timeouts.stop.as_deref())
    }

    /// Every other session with its wait event, the locks, each session blocked with the one
    /// blocking it (`pg_blocking_pids`), and the progress views of what may run long.
    fn stall_state(&self, within: std::time::Duration) -> super::StallState {
        let mut c = match self.pg_snapshot(within) {
            Ok(c) => c,
            Err(e) => {
                return super::StallState {
                    reports: vec![("pg_stat_activity", format!("could not be read: {e}\n"))],
                    ..Default::default()
                }
            }
        };
        let version = c
            .query_i64("SELECT current_setting('server_version_num')::int")
            .ok()
            .flatten()
            .unwrap_or(0);
        let mut lines = |sql: &str| match c.query_strings(sql, KEEP) {
            Ok(rows) => Ok(rows),
            Err(e) => Err(format!("could not be read: {e}\n")),
        };
        let text = |r: &Result<Vec<String>, String>| match r {
            Ok(rows) => rows.iter().map(|l| format!("{l}\n")).collect(),
            Err(e) => e.clone(),
        };
        let mut reports = Vec::new();
        for (name, sql) in [
            ("pg_stat_activity", "SELECT row_to_json(a)::text FROM pg_stat_activity a WHERE a.pid <> pg_backend_pid()"),
            ("pg_locks", "SELECT row_to_json(l)::text FROM pg_locks l WHERE l.pid IS DISTINCT FROM pg_backend_pid()"),
        ] {
            reports.push((name, text(&lines(sql))));
        }
        let waits = lines(PG_LOCK_WAITS);
        let lock_waits = waits
            .as_ref()
            .map(|rows| {
                rows.iter()
                    .filter_map(|r| serde_json::from_str(r).ok())
                    .collect()
            })
            .unwrap_or_default();
        reports.push(("lock_waits", text(&waits)));
        for (view, since) in [
            ("pg_stat_progress_create_index", 120_000),
            ("pg_stat_progress_vacuum", 0),
            ("pg_stat_progress_analyze", 130_000),
            ("pg_stat_progress_copy", 140_000),
        ] {
            if version >= since {
                let sql = format!("SELECT row_to_json(v)::text FROM {view} v");
                reports.push((view, text(&lines(&sql))));
            }
        }
        super::StallState {
            reports,
            lock_waits,
            purge: None,
        }
    }

    /// The statistics views the original's scripts save per step, one JSON object per row so
    /// every column keeps its name.
    fn diagnostics(&self, within: std::time::Duration) -> Vec<(&'static str, String)> {
        // (view, first version that has it, filter)
        const VIEWS: [(&str, i64, &str); 9] = [
            ("pg_stat_database", 0, " WHERE datname = current_database()"),
            ("pg_stat_bgwriter", 0, ""),
            ("pg_stat_checkpointer", 170_000, ""),
            ("pg_stat_wal", 140_000, ""),
            ("pg_stat_io", 160_000, ""),
            ("pg_stat_user_tables", 0, ""),
            ("pg_stat_user_indexes", 0, ""),
            ("pg_statio_user_tables", 0, ""),
            ("pg_statio_user_indexes", 0, ""),
        ];
        let mut c = match self.pg_snapshot(within) {
            Ok(c) => c,
            Err(e) => return vec![("pg_stat", format!("could not be read: {e}\n"))],
        };
        let version = c
            .query_i64("SELECT current_setting('server_version_num')::int")
            .ok()
            .flatten()
            .unwrap_or(0);
        VIEWS
            .iter()
            .filter(|(_, since, _)| version >= *since)
            .map(|(view, _, filter)| {
                let sql = format!("SELECT row_to_json(v)::text FROM {view} v{filter}");
                let text = match c.query_strings(&sql, KEEP) {
                    Ok(rows) => rows.iter().map(|r| format!("{r}\n")).collect(),
                    Err(e) => format!("could not be read: {e}\n"),
                };
                (*view, text)
            })
            .collect()
    }

    fn counters(&self, within: std::time::Duration) -> Result<Vec<(String, f64)>, DbError> {
        let mut c = self.pg_snapshot(within)?;
        let version = c
            .query_i64("SELECT current_setting('server_version_num')::int")?
            .unwrap_or(0);
        let mut sql = vec![
            "SELECT 'wal_lsn_bytes', pg_wal_lsn_diff(pg_current_wal_lsn(), '0/0')::text".to_string(),
            format!("SELECT 'database_size_bytes', pg_database_size(current_database())::text"),
            "SELECT 'blks_read', blks_read::text FROM pg_stat_database WHERE datname = current_database()".into(),
            "SELECT 'blks_hit', blks_hit::text FROM pg_stat_database WHERE datname = current_database()".into(),
            "SELECT 'xact_commit', xact_commit::text FROM pg_stat_database WHERE datname = current_database()".into(),
            // Pages are counted at the server's block size (8 KiB unless built otherwise).
            "SELECT 'block_size', current_setting('block_size')".into(),
        ];
        if version >= 140_000 {
            sql.push("SELECT 'wal_records', wal_records::text FROM pg_stat_wal".into());
            sql.push("SELECT 'wal_fpi', wal_fpi::text FROM pg_stat_wal".into());
            sql.push("SELECT 'wal_bytes', wal_bytes::text FROM pg_stat_wal".into());
        }
        if (140_000..180_000).contains(&version) {
            // PostgreSQL 18 moved WAL writes and syncs to pg_stat_io.
            sql.push("SELECT 'wal_write', wal_write::text FROM pg_stat_wal".into());
            sql.push("SELECT 'wal_sync', wal_sync::text FROM pg_stat_wal".into());
        }
        if version >= 160_000 {
            // Relation IO by every backend type: blocks read, written, extended, and fsyncs.
            for c in ["reads", "writes", "extends", "fsyncs"] {
                sql.push(format!(
                    "SELECT 'io_relation_{c}', coalesce(sum({c}), 0)::text FROM pg_stat_io \
                     WHERE object = 'relation'"
                ));
            }
        }
        if version >= 180_000 {
            sql.push(
                "SELECT 'wal_write', sum(writes)::text FROM pg_stat_io WHERE object = 'wal'".into(),
            );
            sql.push(
                "SELECT 'wal_sync', sum(fsyncs)::text FROM pg_stat_io WHERE object = 'wal'".into(),
            );
        }
        if version >= 170_000 {
            // PostgreSQL 17 moved the checkpointer's counters to pg_stat_checkpointer and dropped
            // buffers_backend: the backends' relation writes are in pg_stat_io.
            sql.push("SELECT 'buffers_written_checkpoint', buffers_written::text FROM pg_stat_checkpointer".into());
            sql.push(
                "SELECT 'buffers_written_bgwriter', buffers_clean::text FROM pg_stat_bgwriter"
                    .into(),
            );
            sql.push(
                "SELECT 'buffers_written_backend', coalesce(sum(writes), 0)::text FROM pg_stat_io \
                 WHERE object = 'relation' AND backend_type NOT IN ('checkpointer', 'background writer')"
                    .into(),
            );
        } else {
            sql.push("SELECT 'buffers_written_checkpoint', buffers_checkpoint::text FROM pg_stat_bgwriter".into());
            sql.push(
                "SELECT 'buffers_written_bgwriter', buffers_clean::text FROM pg_stat_bgwriter"
                    .into(),
            );
            sql.push(
                "SELECT 'buffers_written_backend', buffers_backend::text FROM pg_stat_bgwriter"
                    .into(),
            );
        }
        let mut out = Vec::new();
        for q in sql {
            let mut pair: Option<(String, f64)> = None;
            c.wire_rows_kept(&q, KEEP, |cols| {
                if let (Some(Some(k)), Some(Some(v))) = (cols.first(), cols.get(1)) {
                    if let Ok(v) = String::from_utf8_lossy(v).parse::<f64>() {
                        pair = Some((String::from_utf8_lossy(k).into_owned(), v));
                    }
                }
            })?;
            out.extend(pair);
        }
        Ok(out)
    }

    /// VACUUM ANALYZE every table in parallel (INDEX_CLEANUP ON from PostgreSQL 12), then
    /// CHECKPOINT, as the original's vac_pg.
    fn maintain_after_load(
        &self,
        tables: &[String],
        _deadline: std::time::Instant,
        done: &mut Vec<String>,
        _restore: &mut Vec<String>,
    ) -> Result<(), DbError> {
        let version = self
            .pg()?
            .query_i64("SELECT current_setting('server_version_num')::int")?
            .unwrap_or(0);
        let opts = if version >= 120_000 {
            "ANALYZE, INDEX_CLEANUP ON"
        } else {
            "ANALYZE"
        };
        let results: Vec<(String, Result<(), DbError>)> = std::thread::scope(|s| {
            let handles: Vec<_> = tables
                .iter()
                .map(|t| {
                    let sql = format!("VACUUM ({opts}) {t}");
                    s.spawn(move || {
                        let r = self.pg().and_then(|mut c| c.execute_batch(&sql));
                        (sql, r)
                    })
                })
                .collect();
            handles
                .into_iter()
                .map(|h| {
                    h.join().unwrap_or_else(|_| {
                        let e = DbError {
                            message: "a VACUUM thread panicked".into(),
                            transient: false,
                            code: None,
                            fault: None,
                            lost: None,
                        };
                        ("VACUUM".into(), Err(e))
                    })
                })
                .collect()
        });
        for (sql, r) in results {
            r?;
            done.push(sql);
        }
        self.pg()?.execute_batch("CHECKPOINT")?;
        done.push("CHECKPOINT".into());
        Ok(())
    }
}

/// Creates the benchmark database if it does not exist, connecting to `postgres`.
pub fn ensure_database(admin: &Endpoint, name: &str) -> Result<(), DbError> {
    let mut c = PgConn::connect(admin)?;
    let exists = c.query_i64(&format!(
        "SELECT count(*) FROM pg_database WHERE datname = '{name}'"
    ))?;
    if exists != Some(1) {
        c.execute_batch(&format!("CREATE DATABASE {name}"))?;
    }
    Ok(())
}

pub struct PgDialect;

impl Dialect for PgDialect {
    fn sql(&self) -> SqlDialect {
        SqlDialect::Postgres
    }

    fn placeholder(&self, i: usize) -> String {
        format!("${i}")
    }

    fn table_exists_sql(&self, t: &str) -> String {
        format!("SELECT (to_regclass('{t}') IS NOT NULL)::int")
    }

    fn index_exists_sql(&self, _t: &str, index: &str) -> String {
        format!("SELECT (to_regclass('{index}') IS NOT NULL)::int")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_lock_conflicts_are_transient() {
        assert!(transient_sqlstate("40P01") && transient_sqlstate("40001"));
        assert!(
            transient_sqlstate("23505"),
            "as sysbench's PostgreSQL driver"
        );
        assert!(
            !transient_sqlstate("57P01"),
            "admin shutdown fails the step"
        );
        assert!(!transient_sqlstate("42P01"));
    }

    #[test]
    fn secret_settings_are_told_by_name() {
        assert!(
            crate::dbms::is_secret_setting("ssl_passphrase_command")
                && !crate::dbms::is_secret_setting("shared_buffers")
        );
    }
}
