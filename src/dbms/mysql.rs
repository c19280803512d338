//! MySQL and MariaDB, with InnoDB or MyRocks, through dbperf's own protocol client
//! (`mysql_wire`: binary protocol for prepared statements). One file covers both servers: for the Insert Benchmark
//! they speak the same SQL, and what differs is the storage engine, plus a few server variables
//! the post-load cleanup touches.
//!
//! What differs from SQLite and PostgreSQL, and between the engines:
//! * Deletes use the 2024 statement as the original writes it for MySQL,
//!   `DELETE ... WHERE transactionid >= ? ORDER BY transactionid ASC LIMIT ?`; SQLite's bundled
//!   build and PostgreSQL lack `ORDER BY ... LIMIT` on DELETE and need a subquery.
//! * Range queries name their covering index with `FORCE INDEX`, as the original does, so every
//!   server and version reads the same index whatever its statistics say. PostgreSQL and SQLite
//!   take no hint.
//! * l.x builds the three secondary indexes with ONE `ALTER TABLE` on InnoDB (one scan of the
//!   table feeds all three) and with one `ALTER TABLE` per index on MyRocks, as the original
//!   does.
//! * Post-load cleanup (spec §2.4): InnoDB gets `ANALYZE TABLE` and aggressive dirty-page
//!   flushing during the wait, restored afterwards; MyRocks gets `ANALYZE TABLE`, a wait for
//!   running compactions, a memtable flush and an L0 compaction. MariaDB 10.11 lacks several of
//!   the variables and tables the original uses with Oracle MySQL and FB MyRocks; each missing
//!   one is skipped or replaced by its nearest equivalent, and the step records which.
//! * Transport: exactly the one the endpoint names (the `mysql` crate used before silently
//!   reconnected a TCP connection to 127.0.0.1 over the unix socket unless told not to).
//! * Lock waits that time out (1205) and deadlocks (1213) are transient. MyRocks reports its
//!   snapshot conflicts as 1213 too ("... (snapshot conflict)"), checked on MariaDB 10.11.

mod stall;

use crate::engines::Engine;
use std::time::{Duration, Instant};

use super::mysql_wire::{Prepared, Wire, WireError};
use super::{
    Budget, Conn, DbError, Dbms, Dialect, Endpoint, Keep, Param, Rows, SqlDialect, StmtId,
    Timeouts, KEEP, KEEP_REPORT, SKIP,
};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Storage {
    InnoDb,
    RocksDb,
}

impl Storage {
    /// The name `CREATE TABLE ... engine=` takes.
    pub fn table_engine(self) -> &'static str {
        match self {
            Storage::InnoDb => "innodb",
            Storage::RocksDb => "rocksdb",
        }
    }
}

/// "ERROR <code> (<sqlstate>): <message>" for server errors, as the mysql client prints them.
fn map_err(e: WireError) -> DbError {
    super::mysql_wire::into_db(e)
}

/// The config file as dbperf started the server with it, with the value of any secret-looking
/// option replaced: a `[client]` section may carry a password, and this text goes to results.
fn redact_config_file(text: &str) -> String {
    let mut out = String::with_capacity(text.len() + 1);
    for line in text.lines() {
        let key = line.split('=').next().unwrap_or("").trim();
        if line.contains('=') && super::is_secret_setting(key) {
            out.push_str(&format!("{key} = (not recorded)\n"));
        } else {
            out.push_str(line);
            out.push('\n');
        }
    }
    out
}

/// `name = value` per line, sorted by name, credentials left out. Values are made single-line
/// so each variable stays one line of the result file.
fn format_variables(mut vars: Vec<(String, String)>) -> String {
    vars.retain(|(k, _)| !super::is_secret_setting(k));
    vars.sort();
    let mut out = String::new();
    for (k, v) in vars {
        out.push_str(&k);
        out.push_str(" = ");
        out.push_str(&v.replace('\n', "\\n"));
        out.push('\n');
    }
    out
}

/// A value read back from the server that is put into `SET GLOBAL ... = <value>` unquoted (the
/// numeric variables refuse quoted strings), so it must be a plain number.
fn plain_number(v: &str) -> bool {
    !v.is_empty()
        && v.chars()
            .all(|c| c.is_ascii_digit() || c == '.' || c == '-')
}

pub struct Mysql {
    endpoint: Endpoint,
    /// A MySQL-family engine: its registry entry's `mysql` facts name it in messages.
    engine: Engine,
    storage: Storage,
    config_name: String,
    config_file: String,
    dialect: MysqlDialect,
    timeouts: Timeouts,
}

impl Mysql {
    /// `config_file` is the my.cnf text dbperf started the server with, or "" when dbperf does
    /// not manage the server.
    pub fn new(
        endpoint: Endpoint,
        engine: Engine,
        storage: Storage,
        config_name: &str,
        config_file: &str,
    ) -> Mysql {
        Mysql {
            endpoint,
            engine,
            storage,
            config_name: config_name.to_string(),
            config_file: config_file.to_string(),
            dialect: MysqlDialect { storage },
            timeouts: Timeouts::default(),
        }
    }

    /// How long its connections wait on the server (default: `Timeouts::default()`).
    pub fn with_timeouts(mut self, timeouts: Timeouts) -> Mysql {
        self.timeouts = timeouts;
        self
    }

    pub fn endpoint(&self) -> &Endpoint {
        &self.endpoint
    }

    pub fn storage(&self) -> Storage {
        self.storage
    }

    /// How messages name the server (MySQL, MariaDB).
    fn brand(&self) -> &'static str {
        self.engine
            .mysql()
            .map_or(self.engine.entry().product, |m| m.brand)
    }

    fn open(&self) -> Result<Wire, DbError> {
        self.open_with(self.timeouts.clone())
    }

    /// A connection of a snapshot's own, bounded by `within` (`Timeouts::snapshot`).
    fn open_snapshot(&self, within: Duration) -> Result<Wire, DbError> {
        self.open_with(self.timeouts.snapshot(within))
    }

    fn open_with(&self, timeouts: Timeouts) -> Result<Wire, DbError> {
        let e = &self.endpoint;
        super::mysql_auth::connect(e, timeouts).map_err(|err| {
            let lost = err.lost_at_login();
            let mut d = map_err(err);
            d.lost = lost;
            d.message = format!(
                "cannot connect to {} at {}: {}",
                self.brand(),
                e.describe(),
                d.message
            );
            d
        })
    }
}

/// A row of a text result: each column as text, None for NULL.
type TextRow = Vec<Option<String>>;

fn text_row(cols: &[Option<&[u8]>]) -> TextRow {
    cols.iter()
        .map(|c| c.map(|b| String::from_utf8_lossy(b).into_owned()))
        .collect()
}

/// Runs a text query and returns every row of every result set (these are small: settings,
/// counts, ANALYZE output), within `keep`. Any statement's error is returned.
fn rows(conn: &mut Wire, sql: &str, budget: Budget, keep: Keep) -> Result<Vec<TextRow>, DbError> {
    let mut out = Vec::new();
    conn.query_text(sql, budget, keep, |cols| out.push(text_row(cols)))
        .map_err(map_err)?;
    Ok(out)
}

/// Runs a text query and returns its first row, or None when there is none; the other rows are
/// read and dropped.
fn first_row(conn: &mut Wire, sql: &str, budget: Budget) -> Result<Option<TextRow>, DbError> {
    let mut first = None;
    conn.query_text(sql, budget, KEEP, |cols| {
        if first.is_none() {
            first = Some(text_row(cols));
        }
    })
    .map_err(map_err)?;
    Ok(first)
}

/// Column `i` as text; "" for NULL or a missing column.
fn to_text(row: Option<&TextRow>, i: usize) -> String {
    row.and_then(|r| r.get(i).cloned().flatten())
        .unwrap_or_default()
}

/// The value of a global variable, or None when this server does not have it.
fn global_variable(conn: &mut Wire, name: &str) -> Result<Option<String>, DbError> {
    let row = first_row(
        conn,
        &format!("SHOW GLOBAL VARIABLES WHERE Variable_name = '{name}'"),
        Budget::Operation,
    )?;
    Ok(row.map(|r| to_text(Some(&r), 1)))
}

fn exec(conn: &mut Wire, sql: &str, done: &mut Vec<String>) -> Result<(), DbError> {
    drain_text(conn, sql)?;
    done.push(sql.to_string());
    Ok(())
}

/// Runs statements read only for their end (DDL, SET, maintenance), which may run long.
fn drain_text(conn: &mut Wire, sql: &str) -> Result<(), DbError> {
    conn.query_text(sql, Budget::Long, SKIP, |_| {})
        .map_err(map_err)?;
    Ok(())
}

/// `ANALYZE TABLE` answers with rows rather than an error when it fails on a table.
fn analyze(conn: &mut Wire, table: &str, done: &mut Vec<String>) -> Result<(), DbError> {
    let sql = format!("ANALYZE TABLE {table}");
    let failure = rows(conn, &sql, Budget::Long, KEEP)?
        .iter()
        .find(|r| to_text(Some(r), 2).eq_ignore_ascii_case("error"))
        .map(|r| to_text(Some(r), 3));
    if let Some(msg) = failure {
        return Err(DbError {
            message: format!("{sql}: {msg}"),
            transient: false,
            code: None,
            fault: None,
            lost: None,
        });
    }
    done.push(sql);
    Ok(())
}

impl Mysql {
    /// InnoDB: fresh statistics, then flush dirty pages hard during the wait so qr100 does not
    /// start with a checkpoint backlog left by the load. Returns the statements that put the
    /// three settings back to exactly what they were.
    ///
    /// The statement that puts a setting back is pushed onto `restore` the moment its SET has
    /// succeeded, and the list is kept in the order to run it (last change first), so a failure
    /// part way (a later SET, a lost connection) still leaves the caller every change to undo.
    fn cleanup_innodb(
        &self,
        conn: &mut Wire,
        tables: &[String],
        done: &mut Vec<String>,
        restore: &mut Vec<String>,
    ) -> Result<(), DbError> {
        for t in tables {
            analyze(conn, t, done)?;
        }
        // The low-water mark goes first when lowering (it may not exceed the maximum) and last
        // when restoring, so neither SET is silently clamped by the server.
        const SETTINGS: [(&str, &str); 3] = [
            ("innodb_max_dirty_pages_pct_lwm", "1"),
            ("innodb_max_dirty_pages_pct", "1"),
            ("innodb_idle_flush_pct", "100"),
        ];
        for (name, value) in SETTINGS {
            let Some(old) = global_variable(conn, name)? else {
                // MariaDB has no innodb_idle_flush_pct (MySQL 8.0.18+ only).
                done.push(format!(
                    "-- {name} does not exist on this server: not changed"
                ));
                continue;
            };
            if !plain_number(&old) {
                return Err(DbError {
                    message: format!(
                        "{name} is '{old}', not a number dbperf can restore after the wait"
                    ),
                    transient: false,
                    code: None,
                    fault: None,
                    lost: None,
                });
            }
            exec(conn, &format!("SET GLOBAL {name} = {value}"), done)?;
            restore.insert(0, format!("SET GLOBAL {name} = {old}"));
        }
        Ok(())
    }

    /// MyRocks: fresh statistics, let running compactions finish, flush the memtable and compact
    /// L0, all within the wait budget.
    fn cleanup_rocksdb(
        &self,
        conn: &mut Wire,
        tables: &[String],
        deadline: Instant,
        done: &mut Vec<String>,
    ) -> Result<(), DbError> {
        for t in tables {
            analyze(conn, t, done)?;
        }

        // FB MyRocks lists running compactions; MariaDB's MyRocks (10.11) has no such table, and
        // the closest it offers is the per-column-family "compaction pending" property.
        let has_active = conn_i64(
            conn,
            "SELECT count(*) FROM information_schema.TABLES WHERE table_schema = \
             'information_schema' AND table_name = 'ROCKSDB_ACTIVE_COMPACTION_STATS'",
            Budget::Operation,
        )? == Some(1);
        let poll_sql = if has_active {
            "SELECT count(*) FROM information_schema.rocksdb_active_compaction_stats"
        } else {
            "SELECT count(*) FROM information_schema.rocksdb_cfstats \
             WHERE stat_type = 'COMPACTION_PENDING' AND value > 0"
        };
        let start = Instant::now();
        let mut polls = 0u64;
        loop {
            let running = conn_i64(conn, poll_sql, Budget::Operation)?.unwrap_or(0);
            polls += 1;
            let waited = start.elapsed().as_secs_f64();
            if running == 0 {
                done.push(format!(
                    "{poll_sql} -- 0 after {polls} poll(s) ({waited:.1} s)"
                ));
                break;
            }
            let now = Instant::now();
            if now >= deadline {
                done.push(format!(
                    "{poll_sql} -- still {running} at the deadline, after {polls} poll(s) ({waited:.1} s)"
                ));
                break;
            }
            std::thread::sleep((deadline - now).min(Duration::from_secs(1)));
        }

        exec(
            conn,
            "SET GLOBAL rocksdb_force_flush_memtable_now = 1",
            done,
        )?;
        let pause = deadline
            .saturating_duration_since(Instant::now())
            .min(Duration::from_secs(20));
        std::thread::sleep(pause);
        done.push(format!(
            "-- slept {:.1} s after the flush",
            pause.as_secs_f64()
        ));

        // rocksdb_compact_lzero_now is FB MyRocks; MariaDB has the older variable that flushes
        // the memtable and then compacts L0, which after the flush above does the same.
        if global_variable(conn, "rocksdb_compact_lzero_now")?.is_some() {
            exec(conn, "SET GLOBAL rocksdb_compact_lzero_now = 1", done)?;
        } else if global_variable(conn, "rocksdb_force_flush_memtable_and_lzero_now")?.is_some() {
            done.push(
                "-- rocksdb_compact_lzero_now does not exist on this server: using \
                 rocksdb_force_flush_memtable_and_lzero_now"
                    .to_string(),
            );
            exec(
                conn,
                "SET GLOBAL rocksdb_force_flush_memtable_and_lzero_now = 1",
                done,
            )?;
        } else {
            done.push(
                "-- neither rocksdb_compact_lzero_now nor rocksdb_force_flush_memtable_and_lzero_now \
                 exists on this server: L0 not compacted"
                    .to_string(),
            );
        }
        Ok(())
    }
}

fn conn_i64(conn: &mut Wire, sql: &str, budget: Budget) -> Result<Option<i64>, DbError> {
    let Some(row) = first_row(conn, sql, budget)? else {
        return Ok(None);
    };
    let Some(Some(v)) = row.into_iter().next() else {
        return Ok(None);
    };
    v.trim().parse::<i64>().map(Some).map_err(|_| DbError {
        message: format!(
            "{sql}: the first column is {}, not an integer",
            crate::untrusted::shown(&v)
        ),
        transient: false,
        code: None,
        fault: None,
        lost: None,
    })
}

impl Dbms for Mysql {
    fn engine(&self) -> Engine {
        self.engine
    }

    fn connect(&self) -> anyhow::Result<Box<dyn Conn>> {
        let conn = self.open()?;
        Ok(Box::new(MysqlConn {
            conn,
            stmts: Vec::new(),
            budget: Budget::Operation,
        }))
    }

    fn version(&self) -> anyhow::Result<String> {
        let mut conn = self.open()?;
        let row = first_row(&mut conn, "SELECT version()", Budget::Operation)?;
        Ok(to_text(row.as_ref(), 0))
    }

    fn config_name(&self) -> &str {
        &self.config_name
    }

    fn config_text(&self) -> anyhow::Result<String> {
        let mut conn = self.open()?;
        let vars = rows(&mut conn, "SHOW GLOBAL VARIABLES", Budget::Operation, KEEP)?
            .iter()
            .map(|r| (to_text(Some(r), 0), to_text(Some(r), 1)))
            .collect();
        let mut out = redact_config_file(&self.config_file);
        out.push_str(crate::results::MYSQL_REPORTED_SETTINGS);
        out.push('\n');
        out.push_str(&format_variables(vars));
        Ok(out)
    }

    fn dialect(&self) -> &dyn Dialect {
        &self.dialect
    }

    fn answers(&self, within: Duration) -> bool {
        super::mysql_wire::answers(&self.endpoint, within, self.timeouts.stop.as_deref())
    }

    /// What the original's scripts save per step: every status counter, and the storage
    /// engine's own report (InnoDB's monitor, or MyRocks' compaction and memtable statistics).
    fn diagnostics(&self, within: Duration) -> Vec<(&'static str, String)> {
        let mut conn = match self.open_snapshot(within) {
            Ok(c) => c,
            Err(e) => return vec![("global_status", format!("could not be read: {e}\n"))],
        };
        let status = match rows(&mut conn, "SHOW GLOBAL STATUS", Budget::Operation, KEEP) {
            Ok(rs) => rs
                .iter()
                .map(|r| format!("{}\t{}\n", to_text(Some(r), 0), to_text(Some(r), 1)))
                .collect(),
            Err(e) => format!("could not be read: {e}\n"),
        };
        let (report, sql) = match self.storage {
            Storage::InnoDb => ("innodb_status", "SHOW ENGINE INNODB STATUS"),
            Storage::RocksDb => ("rocksdb_status", "SHOW ENGINE ROCKSDB STATUS"),
        };
        // Rows of (Type, Name, Status); InnoDB answers with one, MyRocks with one per column
        // family and one for the whole DB.
        let engine = match rows(&mut conn, sql, Budget::Operation, KEEP_REPORT) {
            Ok(rs) => rs
                .iter()
                .map(|r| {
                    format!(
                        "== {} {}\n{}\n",
                        to_text(Some(r), 0),
                        to_text(Some(r), 1),
                        to_text(Some(r), 2)
                    )
                })
                .collect(),
            Err(e) => format!("could not be read: {e}\n"),
        };
        vec![("global_status", status), (report, engine)]
    }

    fn stall_state(&self, within: Duration) -> super::StallState {
        stall::state(self, within)
    }

    fn log_dirs(&self) -> Vec<std::path::PathBuf> {
        let Ok(mut conn) = self.open() else {
            return Vec::new();
        };
        let Ok(vars) = rows(
            &mut conn,
            "SHOW GLOBAL VARIABLES WHERE Variable_name IN ('datadir', \
             'innodb_log_group_home_dir', 'log_bin_basename', 'rocksdb_wal_dir')",
            Budget::Operation,
            KEEP,
        ) else {
            return Vec::new();
        };
        let vars: Vec<(String, String)> = vars
            .iter()
            .map(|r| {
                (
                    to_text(Some(r), 0).to_ascii_lowercase(),
                    to_text(Some(r), 1),
                )
            })
            .collect();
        log_dirs_from(&vars)
    }

    fn counters(&self, within: Duration) -> Result<Vec<(String, f64)>, DbError> {
        let mut conn = self.open_snapshot(within)?;
        // InnoDB's log and data writes (Innodb_os_log_fsyncs is gone from MariaDB 10.8+: then
        // it is simply absent), the binlog, MyRocks' write path, and both engines' cache hits
        // and misses (in memory or IO-bound, docs/metrics.md).
        let status = rows(
            &mut conn,
            "SHOW GLOBAL STATUS WHERE Variable_name IN ('Innodb_os_log_written', \
             'Innodb_os_log_fsyncs', 'Innodb_data_written', 'Innodb_data_writes', \
             'Innodb_data_read', 'Innodb_data_reads', 'Innodb_dblwr_pages_written', \
             'Innodb_pages_written', 'Innodb_buffer_pool_reads', 'Binlog_bytes_written', \
             'Innodb_buffer_pool_read_requests', 'rocksdb_block_cache_hit', \
             'rocksdb_block_cache_miss', 'Binlog_group_commits', \
             'Innodb_data_fsyncs', 'Com_commit') OR Variable_name LIKE 'rocksdb\\_bytes\\_written' \
             OR Variable_name LIKE 'rocksdb\\_wal\\_%' \
             OR Variable_name LIKE 'rocksdb\\_compact\\_%\\_bytes' \
             OR Variable_name LIKE 'rocksdb\\_flush\\_write\\_bytes'",
            Budget::Operation,
            KEEP,
        )?;
        let mut out: Vec<(String, f64)> = status
            .iter()
            .filter_map(|r| {
                let v = to_text(Some(r), 1).parse::<f64>().ok()?;
                Some((to_text(Some(r), 0).to_ascii_lowercase(), v))
            })
            .collect();
        if let Some(size) = conn_i64(
            &mut conn,
            "SELECT CAST(coalesce(sum(data_length + index_length), 0) AS SIGNED) \
             FROM information_schema.TABLES WHERE table_schema = DATABASE()",
            Budget::Operation,
        )? {
            // From the engines' statistics: InnoDB's lag until refreshed, MyRocks' stay 0 until
            // the memtable is flushed. dbgb1 comes from the files instead (metrics).
            out.push(("information_schema_size_bytes".into(), size as f64));
        }
        // Oracle MySQL has no Binlog_bytes_written: its binlog file instrument counts the bytes
        // (on by default; with performance_schema off the binlog bytes are simply absent).
        if !out.iter().any(|(k, _)| k == "binlog_bytes_written") {
            if let Ok(Some(b)) = conn_i64(
                &mut conn,
                "SELECT CAST(SUM_NUMBER_OF_BYTES_WRITE AS SIGNED) FROM \
                 performance_schema.file_summary_by_event_name \
                 WHERE EVENT_NAME = 'wait/io/file/sql/binlog'",
                Budget::Operation,
            ) {
                out.push((crate::results::hardware::BINLOG_FILE_BYTES.into(), b as f64));
            }
        }
        // Pages written are counted in pages; their size is the server's (4-64 KiB).
        if let Ok(Some(page)) = conn_i64(&mut conn, "SELECT @@innodb_page_size", Budget::Operation)
        {
            out.push(("innodb_page_size".into(), page as f64));
        }
        Ok(out)
    }

    fn maintain_after_load(
        &self,
        tables: &[String],
        deadline: Instant,
        done: &mut Vec<String>,
        restore: &mut Vec<String>,
    ) -> Result<(), DbError> {
        let mut conn = self.open()?;
        match self.storage {
            Storage::InnoDb => self.cleanup_innodb(&mut conn, tables, done, restore),
            Storage::RocksDb => self.cleanup_rocksdb(&mut conn, tables, deadline, done),
        }
    }
}

pub struct MysqlConn {
    conn: Wire,
    stmts: Vec<Prepared>,
    /// How long its statements may take (`Conn::set_budget`); `execute_batch` is always long.
    budget: Budget,
}

impl Conn for MysqlConn {
    fn execute_batch(&mut self, sql: &str) -> Result<(), DbError> {
        drain_text(&mut self.conn, sql)
    }

    fn prepare(&mut self, sql: &str) -> Result<StmtId, DbError> {
        let st = self.conn.prepare(sql, self.budget).map_err(map_err)?;
        self.stmts.push(st);
        Ok(self.stmts.len() - 1)
    }

    fn execute(&mut self, stmt: StmtId, params: &[Param]) -> Result<u64, DbError> {
        let (_, done) = self
            .conn
            .execute(&mut self.stmts[stmt], params, self.budget)
            .map_err(map_err)?;
        Ok(done.affected)
    }

    fn query(&mut self, stmt: StmtId, params: &[Param]) -> Result<u64, DbError> {
        let (rows, _) = self
            .conn
            .execute(&mut self.stmts[stmt], params, self.budget)
            .map_err(map_err)?;
        Ok(rows)
    }

    fn query_i64(&mut self, sql: &str) -> Result<Option<i64>, DbError> {
        conn_i64(&mut self.conn, sql, self.budget)
    }

    fn run_text(&mut self, sql: &str) -> Result<u64, DbError> {
        let (rows, done) = self
            .conn
            .query_text_walk(sql, self.budget)
            .map_err(map_err)?;
        Ok(if rows > 0 { rows } else { done.affected })
    }

    fn text_rows(&mut self, sql: &str, keep: Keep, out: &mut Rows) -> Result<u64, DbError> {
        out.start(keep);
        // The wire client counts against the same `keep` and closes the connection first.
        let mut refused = None;
        self.conn
            .query_text(sql, self.budget, keep, |cols| {
                if refused.is_none() {
                    refused = out.push(cols).err();
                }
            })
            .map_err(map_err)?;
        match refused {
            Some(message) => Err(super::rows::too_much(message)),
            None => Ok(out.len() as u64),
        }
    }

    fn set_budget(&mut self, budget: Budget) {
        self.budget = budget;
    }
}

pub struct MysqlDialect {
    storage: Storage,
}

impl Dialect for MysqlDialect {
    fn sql(&self) -> SqlDialect {
        SqlDialect::MySql(self.storage)
    }

    fn placeholder(&self, _i: usize) -> String {
        "?".to_string()
    }

    fn backslash_escapes(&self) -> bool {
        true
    }

    fn table_exists_sql(&self, t: &str) -> String {
        format!(
            "SELECT count(*) FROM information_schema.TABLES \
             WHERE table_schema = DATABASE() AND table_name = '{t}'"
        )
    }

    fn index_exists_sql(&self, t: &str, index: &str) -> String {
        // STATISTICS has one row per index column: count the index once.
        format!(
            "SELECT count(DISTINCT index_name) FROM information_schema.STATISTICS \
             WHERE table_schema = DATABASE() AND table_name = '{t}' AND index_name = '{index}'"
        )
    }
}

/// The log directories among a server's variables: relative ones are under `datadir`; the
/// binlog's is its basename's directory; an empty value is the default (in the data directory).
fn log_dirs_from(vars: &[(String, String)]) -> Vec<std::path::PathBuf> {
    use std::path::{Path, PathBuf};
    let get = |k: &str| {
        vars.iter()
            .find(|(n, _)| n == k)
            .map(|(_, v)| v.trim())
            .filter(|v| !v.is_empty() && *v != "NULL")
    };
    let Some(datadir) = get("datadir") else {
        return Vec::new();
    };
    let datadir = Path::new(datadir);
    let mut dirs: Vec<PathBuf> = Vec::new();
    let mut add = |p: PathBuf| {
        if !dirs.contains(&p) {
            dirs.push(p);
        }
    };
    for k in ["innodb_log_group_home_dir", "rocksdb_wal_dir"] {
        if let Some(v) = get(k) {
            add(datadir.join(v));
        }
    }
    if let Some(parent) = get("log_bin_basename").and_then(|b| Path::new(b).parent()) {
        add(datadir.join(parent));
    }
    dirs
}

#[cfg(test)]
mod tests {
    use super::*;

    fn dialect(storage: Storage) -> MysqlDialect {
        MysqlDialect { storage }
    }

    #[test]
    fn existence_checks_stay_in_the_current_database() {
        let d = dialect(Storage::RocksDb);
        let t = d.table_exists_sql("pi1");
        assert!(t.contains("information_schema.TABLES") && t.contains("table_schema = DATABASE()"));
        let i = d.index_exists_sql("pi1", "pi1_pdc");
        assert!(
            i.starts_with("SELECT count(DISTINCT index_name) FROM information_schema.STATISTICS")
        );
        assert!(i.contains("index_name = 'pi1_pdc'") && i.contains("table_schema = DATABASE()"));
    }

    #[test]
    fn credentials_never_reach_the_config_text() {
        let vars = vec![
            ("report_password".to_string(), "hunter2".to_string()),
            ("wsrep_sst_auth".to_string(), "root:hunter2".to_string()),
            ("Some_SECRET_key".to_string(), "x".to_string()),
            ("strict_password_validation".to_string(), "ON".to_string()),
            ("max_connections".to_string(), "151".to_string()),
            (
                "innodb_buffer_pool_size".to_string(),
                "268435456".to_string(),
            ),
            ("odd".to_string(), "a\nb".to_string()),
        ];
        assert_eq!(
            format_variables(vars),
            "innodb_buffer_pool_size = 268435456\nmax_connections = 151\nodd = a\\nb\n"
        );
        let file = "[mysqld]\ninnodb_buffer_pool_size=1G\n[client]\npassword = hunter2\n";
        let red = redact_config_file(file);
        assert!(!red.contains("hunter2"));
        assert!(red.contains("innodb_buffer_pool_size=1G\n"));
        assert!(red.contains("password = (not recorded)\n"));
        assert_eq!(redact_config_file(""), "");
    }

    #[test]
    fn restore_values_must_be_plain_numbers() {
        assert!(plain_number("90.000000"));
        assert!(plain_number("0"));
        assert!(!plain_number(""));
        assert!(!plain_number("1; DROP TABLE t"));
    }

    #[test]
    fn log_directories_are_read_from_the_servers_variables() {
        let v = |pairs: &[(&str, &str)]| -> Vec<(String, String)> {
            pairs
                .iter()
                .map(|(a, b)| (a.to_string(), b.to_string()))
                .collect()
        };
        // Defaults: everything in the data directory.
        let d = super::log_dirs_from(&v(&[
            ("datadir", "/d/"),
            ("innodb_log_group_home_dir", "./"),
            ("log_bin_basename", ""),
            ("rocksdb_wal_dir", ""),
        ]));
        assert_eq!(d, vec![std::path::PathBuf::from("/d/./")]);
        let d = super::log_dirs_from(&v(&[
            ("datadir", "/d/"),
            ("innodb_log_group_home_dir", "/redo"),
            ("log_bin_basename", "/bl/binlog"),
            ("rocksdb_wal_dir", "wal"),
        ]));
        assert_eq!(
            d,
            ["/redo", "/d/wal", "/bl"]
                .map(std::path::PathBuf::from)
                .to_vec()
        );
        assert!(super::log_dirs_from(&v(&[("innodb_log_group_home_dir", "/r")])).is_empty());
    }
}
