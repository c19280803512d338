//! One adapter per database engine: how to connect, run prepared statements, and the SQL dialect
//! the benchmarks need (DDL, delete form, post-load cleanup). Benchmarks write their statements
//! against `Conn` and `Dialect`; adding an engine means one file here and one line in `open`.

pub mod ignore;
mod keep;
pub mod mysql;
pub mod mysql_auth;
mod mysql_packet;
pub mod mysql_wire;
mod net;
pub mod null;
mod open;
mod pg_wire;
pub mod postgres;
pub mod rows;
pub mod sqlite;
pub mod stall;
pub mod wire_error;

pub use keep::{Keep, CELL_COST, KEEP, KEEP_REPORT, SKIP};
/// The bound on what a server's length fields can make a client allocate (tests/fuzz.rs checks it).
pub use net::MAX_MESSAGE;
pub use open::{create_database, open_embedded, EmbeddedConfig, ServerAdapter};
pub use rows::Rows;
pub use stall::StallState;

use crate::engines::Engine;
use std::fmt;
use std::sync::atomic::AtomicBool;
use std::sync::Arc;
use std::time::Duration;

/// A statement parameter. Borrowed so a batch of rows binds without copying its strings.
#[derive(Debug, Clone, Copy)]
pub enum Param<'a> {
    Int(i64),
    Text(&'a str),
    /// `YYYY-MM-DD HH:MM:SS`, for engines that type timestamps.
    DateTime(&'a str),
}

#[derive(Debug, Clone)]
pub struct DbError {
    pub message: String,
    /// Whether the run goes on after it (counted): by default lock waits that timed out,
    /// deadlocks, serialization failures and write conflicts, as sysbench and pgbench; what
    /// `--ignore-errors` lists otherwise.
    pub transient: bool,
    /// The server's code for the error (MySQL's error number, PostgreSQL's SQLSTATE, SQLite's
    /// primary result code); None for a connection failure or an error of dbperf's own.
    pub code: Option<String>,
    /// Where dbperf itself ended the statement, why: what the run acts on, never the message's
    /// text. None for the server's own errors and for a lost connection.
    pub fault: Option<Fault>,
    /// Where the connection failed or was never made, whose fault that is (`Lost`), decided
    /// where the error is made. None for the server's own errors to a statement, for errors of
    /// dbperf's own and for a connection that ended for neither reason (the run was stopped).
    pub lost: Option<Lost>,
}

/// Why dbperf itself ended a statement or a step, as a type: what the run acts on, never the
/// sentence's text.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Fault {
    /// The server did not answer within --statement-timeout: a benchmark statement past its
    /// deadline (however many bytes arrived meanwhile), or a server silent that long that does
    /// not answer a new connection either (`no_answer`, `stopped_answering`).
    NoAnswer,
    /// A statement allowed to run long (an index build, VACUUM, a load) did not finish within
    /// --ddl-timeout (`long_statement`).
    LongStatement,
    /// An operation of a step was under way past its limit, whether or not the server answers
    /// (`overdue`, the step watchdog).
    Overdue,
    /// The server sent more rows or bytes than dbperf keeps from a query it reads whole
    /// (`keep::KEEP`); the connection was closed.
    TooMuch,
}

impl Fault {
    /// Whether the server stalled (its log tail says why, so the step's error carries it).
    pub fn is_stall(self) -> bool {
        matches!(
            self,
            Fault::NoAnswer | Fault::LongStatement | Fault::Overdue
        )
    }
}

/// Whose fault a failed connection is: a target described wrongly (bad input) or a server that
/// misbehaves (a failure of the run). Decided where the error is made, by how the connection
/// failed (the io error's kind, what the protocol client met), never by the sentence.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Lost {
    /// The server was not reached or would not take this login: nothing listens there, the name
    /// has no address, the login was refused (a wrong password, an unknown database), or it asks
    /// for a login dbperf's client does not speak.
    Refused,
    /// The server was reached and then misbehaved: it sent what the protocol does not allow,
    /// went silent, hung up or reset the connection.
    ServerFault,
}

/// The `DbError` an error of any layer is or wraps (its `source` chain, as a step's failure
/// cause made from an `anyhow::Error`).
fn db_error_in<'a>(e: &'a (dyn std::error::Error + 'static)) -> Option<&'a DbError> {
    let mut at = Some(e);
    while let Some(e) = at {
        if let Some(d) = e.downcast_ref::<DbError>() {
            return Some(d);
        }
        at = e.source();
    }
    None
}

/// The fault carried by an error of any layer (`db_error_in`).
pub fn fault_of(e: &(dyn std::error::Error + 'static)) -> Option<Fault> {
    db_error_in(e).and_then(|d| d.fault)
}

/// Whose fault a failed connection is, carried by an error of any layer (`db_error_in`).
pub fn lost_of(e: &(dyn std::error::Error + 'static)) -> Option<Lost> {
    db_error_in(e).and_then(|d| d.lost)
}

/// How long one statement may take, from when it is sent.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Budget {
    /// A benchmark statement (an insert batch, a delete, a query, a sysbench statement, their
    /// prepare and bookkeeping): --statement-timeout from its start, whatever the server sends
    /// meanwhile, so a trickle cannot hold it.
    Operation,
    /// A statement that may legitimately take long (DDL, an index build, VACUUM, ANALYZE, a
    /// load, a full count): it waits while the server answers a new connection after each
    /// --statement-timeout of silence, but never past --ddl-timeout from its start, however the
    /// bytes arrive.
    Long,
}

impl fmt::Display for DbError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for DbError {}

impl DbError {
    /// This error as the cause of a step's failure, which the run tells by its type
    /// (`fault_of`).
    pub fn as_cause(&self) -> Arc<dyn std::error::Error + Send + Sync> {
        Arc::new(self.clone())
    }
}

/// How long dbperf waits on a server (docs/reliability.md).
#[derive(Debug, Clone)]
pub struct Timeouts {
    /// Connecting and logging in, as one deadline.
    pub connect: Duration,
    /// The longest a statement waits for the server's next bytes (or for room to send) before
    /// dbperf checks whether the server still answers a new connection: if it does not, the
    /// statement fails with `no_answer`; if it does, the statement goes on waiting (an index
    /// build or a VACUUM may take longer than any timeout). A benchmark statement
    /// (`Budget::Operation`) is also bounded by it from its start, whatever arrives.
    pub statement: Duration,
    /// The most a statement allowed to run long (`Budget::Long`: DDL, maintenance, loads) may
    /// take from its start, even while the server answers (--ddl-timeout).
    pub ddl: Duration,
    /// The run's stop flag (set by Ctrl-C): a wait on the server that is under way gives up
    /// within a fraction of a second once it is set, instead of at its deadline.
    pub stop: Option<Arc<AtomicBool>>,
}

impl Default for Timeouts {
    fn default() -> Self {
        Timeouts {
            connect: Duration::from_secs(30),
            statement: Duration::from_secs(60),
            ddl: DEFAULT_DDL_TIMEOUT,
            stop: None,
        }
    }
}

/// --ddl-timeout's default: a day, longer than any index build or VACUUM of the benchmarks'
/// tables on a healthy server, short enough that an unattended campaign is not held for ever.
pub const DEFAULT_DDL_TIMEOUT: Duration = Duration::from_secs(24 * 3600);

impl Timeouts {
    pub fn with_statement(statement: Duration) -> Timeouts {
        Timeouts {
            statement,
            ..Timeouts::default()
        }
    }

    /// A snapshot's waits (counters, status reports, the state at a stall): the login and each
    /// statement bounded by `within`, and not cut by the run's stop flag, so a step stopped by
    /// Ctrl-C or failed still gets them, each in bounded time.
    pub fn snapshot(&self, within: Duration) -> Timeouts {
        Timeouts {
            connect: within.min(self.connect),
            statement: within,
            ddl: within,
            stop: None,
        }
    }
}

/// What a wait on the server ends with when the run is asked to stop (Ctrl-C) while it waits.
pub const STOPPED_WAITING: &str = "stopped waiting for the server: dbperf was interrupted";

/// The sentence a statement fails with when the server stopped answering.
pub fn no_answer(statement: Duration) -> String {
    format!(
        "the server did not answer within {} (--statement-timeout)",
        seconds(statement)
    )
}

/// The sentence a step fails with when no operation completed for `quiet` and the server does
/// not answer a new connection either.
pub fn stopped_answering(quiet: Duration) -> String {
    format!(
        "the server stopped answering: no operation completed for {} and it does not answer a \
         new connection (--statement-timeout)",
        seconds(quiet)
    )
}

/// The sentence a statement allowed to run long fails with past --ddl-timeout
/// (`Fault::LongStatement`).
pub fn long_statement(ddl: Duration) -> String {
    format!(
        "the server did not finish the statement within {} (--ddl-timeout)",
        seconds(ddl)
    )
}

/// The sentence a step fails with when one of its operations has been under way for `limit`
/// (`Fault::Overdue`): `option` names what sets the limit.
pub fn overdue(limit: Duration, option: &str) -> String {
    format!(
        "the step made no progress: an operation has been under way for {} without finishing \
         ({option})",
        seconds(limit)
    )
}

/// `from + d`, or a time as far as the clock allows when that overflows: a deadline from an
/// option never panics.
pub fn later(from: std::time::Instant, d: Duration) -> std::time::Instant {
    from.checked_add(d)
        .or_else(|| from.checked_add(Duration::from_secs(u64::from(u32::MAX))))
        .unwrap_or(from)
}

/// "60 s", "2.5 s".
pub fn seconds(d: Duration) -> String {
    if d.subsec_millis() == 0 {
        format!("{} s", d.as_secs())
    } else {
        format!("{:.1} s", d.as_secs_f64())
    }
}

/// Index into a connection's prepared statements.
pub type StmtId = usize;

/// One connection, used by one thread.
pub trait Conn {
    /// Runs one or more statements that return no rows (DDL, pragmas, maintenance).
    fn execute_batch(&mut self, sql: &str) -> Result<(), DbError>;
    fn prepare(&mut self, sql: &str) -> Result<StmtId, DbError>;
    /// Executes a prepared statement that returns no rows; returns the rows it changed.
    fn execute(&mut self, stmt: StmtId, params: &[Param]) -> Result<u64, DbError>;
    /// Executes a prepared query and fetches every column of every row; returns rows fetched.
    fn query(&mut self, stmt: StmtId, params: &[Param]) -> Result<u64, DbError>;
    /// Runs a query returning one integer (or NULL).
    fn query_i64(&mut self, sql: &str) -> Result<Option<i64>, DbError>;
    /// Runs one statement given as SQL text, without preparing it (the server parses and plans
    /// it every time), and fetches every column of every row. Returns the rows fetched or, for a
    /// statement that returns no rows, the rows it changed. This is sysbench's `con:query()`
    /// and its `--db-ps-mode=disable`.
    fn run_text(&mut self, sql: &str) -> Result<u64, DbError>;
    /// Runs one statement given as SQL text, as `run_text`, and keeps its rows' values in
    /// `out` (cleared first) as text, None for NULL: what a workload reads back and then writes.
    /// Rows past `keep` fail the statement (`Fault::TooMuch`; a server's connection is closed).
    /// Returns the rows fetched.
    fn text_rows(&mut self, sql: &str, keep: Keep, out: &mut Rows) -> Result<u64, DbError>;
    /// How long this connection's statements may take from now on (`Budget::Operation` until
    /// told otherwise); `execute_batch` is always `Budget::Long`. Connections that load, count
    /// whole tables or run maintenance say `Budget::Long`. Embedded engines have no server to
    /// wait on: nothing to set.
    fn set_budget(&mut self, _budget: Budget) {}
}

/// Which SQL an adapter speaks. Each suite writes its statements for every dialect itself
/// (src/workload/*/sql.rs), as sysbench's Lua does for each driver, so a new suite touches no
/// adapter, and a new dialect fails to compile where a suite has no statements for it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SqlDialect {
    Postgres,
    /// MySQL and MariaDB, with the storage engine a table is created with.
    MySql(mysql::Storage),
    Sqlite,
    /// The null target's: statements it reads as its script's cues.
    Null,
}

/// What a suite needs of an engine's SQL besides its own statements: the dialect, how
/// parameters are written, how text literals escape, and the catalog queries that say whether
/// a table or an index exists.
pub trait Dialect: Send + Sync {
    /// Which SQL the suites write for this engine.
    fn sql(&self) -> SqlDialect;
    /// Placeholder for the `i`-th (1-based) parameter.
    fn placeholder(&self, i: usize) -> String;
    fn table_exists_sql(&self, table: &str) -> String;
    /// One integer: 1 when the named index exists.
    fn index_exists_sql(&self, table: &str, index: &str) -> String;
    /// Whether a backslash in an SQL string literal is an escape (MySQL's default), so text
    /// statements must double it.
    fn backslash_escapes(&self) -> bool {
        false
    }
}

/// A connected target: everything a benchmark needs from a database engine.
pub trait Dbms: Send + Sync {
    fn engine(&self) -> Engine;
    fn connect(&self) -> anyhow::Result<Box<dyn Conn>>;
    /// The version string the engine itself reports.
    fn version(&self) -> anyhow::Result<String>;
    fn config_name(&self) -> &str;
    /// The effective configuration as text (what the engine reports back, not what was asked).
    fn config_text(&self) -> anyhow::Result<String>;
    fn dialect(&self) -> &dyn Dialect;
    /// The engine's maintenance after a bulk load (fresh statistics, a checkpoint, a flushed
    /// memtable), to be finished by `deadline` where it waits for the engine; the Insert
    /// Benchmark runs it between l.i2 and qr100 (spec §2.4). Appends each statement to `done` once it has succeeded, so a failure
    /// part way still records what was done. Returns statements to run after the wait (settings
    /// changed for the wait and restored afterwards).
    fn maintain_after_load(
        &self,
        tables: &[String],
        deadline: std::time::Instant,
        done: &mut Vec<String>,
        restore: &mut Vec<String>,
    ) -> Result<(), DbError>;
    /// The engine's cumulative counters (log bytes and syncs, pages and bytes written, blocks
    /// read, ...) and sizes, by name; a step records the difference of two snapshots
    /// (docs/metrics.md, "DBMS counters"). Names differ by engine and version: only those this
    /// server has are returned. A snapshot: on a connection of its own, waiting at most `within`
    /// for the login and each statement (`Timeouts::snapshot`).
    fn counters(&self, _within: Duration) -> Result<Vec<(String, f64)>, DbError> {
        Ok(Vec::new())
    }
    /// The engine's own status reports, kept beside each step's file as the original's scripts
    /// keep them (SHOW ENGINE INNODB STATUS, SHOW GLOBAL STATUS, RocksDB's stats, PostgreSQL's
    /// pg_stat views): (a short name for the file, the text), for a person to read after the
    /// run. A report that cannot be read is its name with a sentence saying why. A snapshot, as
    /// `counters`.
    fn diagnostics(&self, _within: Duration) -> Vec<(&'static str, String)> {
        Vec::new()
    }
    /// The server's own view of a stall (`stall`): every session and what it waits on, the
    /// lock waits with who holds them, the engine's status. A snapshot, as `counters`. Empty
    /// for an engine with no sessions to show.
    fn stall_state(&self, _within: Duration) -> StallState {
        StallState::default()
    }
    /// Directories outside the data directory where the server writes its logs (InnoDB's redo,
    /// the binlog, MyRocks' WAL), as the server reports them, so their devices' IO is counted
    /// with the data's. Empty when every log lives in the data directory or cannot be asked.
    fn log_dirs(&self) -> Vec<std::path::PathBuf> {
        Vec::new()
    }
    /// Whether the server answers a new connection within `within` (without logging in): the
    /// sign of life the step watchdog asks for. Embedded engines always answer.
    fn answers(&self, _within: Duration) -> bool {
        true
    }
}

/// Setting names whose values may be credentials; their values never go into results (which
/// are shared). `wsrep_sst_auth` holds `user:password` for Galera without saying so in its name.
pub fn is_secret_setting(name: &str) -> bool {
    let n = name.to_ascii_lowercase();
    n.contains("password")
        || n.contains("passphrase")
        || n.contains("secret")
        || n == "wsrep_sst_auth"
}

/// How to reach a server. Exactly one transport is used and recorded: a client library that
/// silently switches (the `mysql` crate preferred the unix socket) must be told not to.
#[derive(Clone, PartialEq)]
pub struct Endpoint {
    pub transport: Transport,
    pub user: String,
    /// Never written to results, logs or reports.
    pub password: Option<String>,
    pub database: String,
}

/// Shows whether there is a password, never the password: a `{:?}` anywhere stays safe.
impl std::fmt::Debug for Endpoint {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Endpoint")
            .field("transport", &self.transport)
            .field("user", &self.user)
            .field("password", &self.password.as_ref().map(|_| "(set)"))
            .field("database", &self.database)
            .finish()
    }
}

#[derive(Debug, Clone, PartialEq)]
pub enum Transport {
    Tcp { host: String, port: u16 },
    Socket { path: std::path::PathBuf },
}

impl Endpoint {
    /// For results and messages: everything but the password.
    pub fn describe(&self) -> String {
        match &self.transport {
            Transport::Tcp { host, port } => format!(
                "tcp {host}:{port} user {} database {}",
                self.user, self.database
            ),
            Transport::Socket { path } => {
                format!(
                    "unix socket {} user {} database {}",
                    path.display(),
                    self.user,
                    self.database
                )
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::{fault_of, lost_of, DbError, Lost};

    #[test]
    fn an_errors_kinds_are_found_through_the_context_around_it() {
        let e = anyhow::Error::from(DbError {
            message: "lost connection to the server (it closed the connection)".into(),
            transient: false,
            code: None,
            fault: None,
            lost: Some(Lost::ServerFault),
        })
        .context("target t");
        assert_eq!(lost_of(e.as_ref()), Some(Lost::ServerFault));
        assert_eq!(fault_of(e.as_ref()), None);
        assert_eq!(lost_of(anyhow::anyhow!("no DbError").as_ref()), None);
    }

    #[test]
    fn an_endpoints_debug_form_shows_no_password() {
        let ep = super::Endpoint {
            transport: super::Transport::Tcp {
                host: "127.0.0.1".into(),
                port: 1,
            },
            user: "u".into(),
            password: Some("hunter2".into()),
            database: "d".into(),
        };
        let d = format!("{ep:?}");
        assert!(!d.contains("hunter2") && d.contains("(set)"), "{d}");
    }
}
