//! Embedded SQLite through rusqlite with the bundled library, so the default target needs nothing
//! installed. A config is a named list of pragmas applied to every connection, so WAL+NORMAL can
//! be compared with DELETE+FULL the way my.cnf variants are compared.

use crate::engines::Engine;
use std::path::{Path, PathBuf};
use std::time::Duration;

use rusqlite::{Connection, ErrorCode, OpenFlags, Statement};

use super::{Conn, DbError, Dbms, Dialect, Keep, Param, Rows, SqlDialect, StmtId};
use crate::error::bad_input;

/// A built-in config: pragmas in the order they are applied.
pub struct Config {
    pub name: &'static str,
    pub about: &'static str,
    pub pragmas: &'static [(&'static str, &'static str)],
}

pub const CONFIGS: &[Config] = &[
    Config {
        name: "wal-normal",
        about: "WAL journal, fsync at checkpoints only (the usual production choice; default)",
        pragmas: &[
            ("journal_mode", "wal"),
            ("synchronous", "normal"),
            ("cache_size", "-16384"),
            ("busy_timeout", "10000"),
        ],
    },
    Config {
        name: "wal-full",
        about: "WAL journal, fsync of the WAL at every commit",
        pragmas: &[
            ("journal_mode", "wal"),
            ("synchronous", "full"),
            ("cache_size", "-16384"),
            ("busy_timeout", "10000"),
        ],
    },
    Config {
        name: "wal-off",
        about: "WAL journal, no fsync at all (not durable; shows the cost of durability)",
        pragmas: &[
            ("journal_mode", "wal"),
            ("synchronous", "off"),
            ("cache_size", "-16384"),
            ("busy_timeout", "10000"),
        ],
    },
    Config {
        name: "delete-full",
        about: "rollback journal deleted at each commit, fsync at every commit (SQLite's own defaults, bigger cache)",
        pragmas: &[
            ("journal_mode", "delete"),
            ("synchronous", "full"),
            ("cache_size", "-16384"),
            ("busy_timeout", "10000"),
        ],
    },
    Config {
        name: "defaults",
        about: "SQLite's compiled-in defaults (2 MB cache, rollback journal, FULL), plus a busy timeout",
        pragmas: &[("busy_timeout", "10000")],
    },
];

/// Pragmas a config may set. SQLite silently ignores unknown pragmas, so a typo would otherwise
/// benchmark a config nobody asked for.
const KNOWN_PRAGMAS: &[&str] = &[
    "analysis_limit",
    "auto_vacuum",
    "automatic_index",
    "busy_timeout",
    "cache_size",
    "cache_spill",
    "cell_size_check",
    "journal_mode",
    "journal_size_limit",
    "locking_mode",
    "max_page_count",
    "mmap_size",
    "page_size",
    "secure_delete",
    "synchronous",
    "temp_store",
    "threads",
    "wal_autocheckpoint",
];

/// Pragmas always shown in the effective config, whether set or not.
const REPORTED_PRAGMAS: &[&str] = &[
    "journal_mode",
    "synchronous",
    "page_size",
    "cache_size",
    "wal_autocheckpoint",
    "mmap_size",
    "locking_mode",
    "temp_store",
    "auto_vacuum",
    "journal_size_limit",
    "max_page_count",
];

pub struct Sqlite {
    path: PathBuf,
    config_name: String,
    pragmas: Vec<(String, String)>,
    busy_timeout: Duration,
    dialect: SqliteDialect,
}

impl Sqlite {
    pub fn open(config: &super::EmbeddedConfig, work_dir: &Path) -> anyhow::Result<Sqlite> {
        let config_name = config.config_name.to_string();
        // (pragma, value, line of the config text it came from: None for --pragma).
        let declared: Option<Vec<(String, String, Option<usize>)>> = config.text.map(|text| {
            text.lines()
                .enumerate()
                .map(|(i, l)| (i + 1, l.trim()))
                .filter(|(_, l)| !l.is_empty() && !l.starts_with('#'))
                .map(|(n, l)| match l.split_once('=') {
                    Some((k, v)) => (k.trim().to_string(), v.trim().to_string(), Some(n)),
                    None => (l.to_string(), String::new(), Some(n)),
                })
                .collect()
        });
        let builtin = CONFIGS.iter().find(|c| c.name == config_name).map(|c| {
            c.pragmas
                .iter()
                .map(|(k, v)| (k.to_string(), v.to_string(), None))
                .collect()
        });
        let Some(base): Option<Vec<(String, String, Option<usize>)>> = declared.or(builtin) else {
            let names: Vec<&str> = CONFIGS.iter().map(|c| c.name).collect();
            return bad_input(format!(
                "unknown SQLite config '{config_name}'; built-in configs are: {} (or declare \
                 [config.{config_name}] in dbperf.toml)",
                names.join(", ")
            ));
        };
        let flags = config
            .settings
            .iter()
            .map(|(k, v)| (k.clone(), v.clone(), None));
        let mut pragmas: Vec<(String, String)> = Vec::new();
        for (k, v, line) in base.into_iter().chain(flags) {
            let k = k.to_ascii_lowercase();
            // A config's text may come from a file dbperf.toml names, which need not be a
            // config at all: its lines are named by number, never quoted.
            if !KNOWN_PRAGMAS.contains(&k.as_str()) {
                return bad_input(match line {
                    Some(n) => format!(
                        "config '{config_name}', line {n}: not a SQLite pragma dbperf accepts \
                         ({})",
                        KNOWN_PRAGMAS.join(", ")
                    ),
                    None => format!(
                        "unknown SQLite pragma '{k}'; dbperf accepts: {}",
                        KNOWN_PRAGMAS.join(", ")
                    ),
                });
            }
            if v.is_empty()
                || !v
                    .chars()
                    .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_')
            {
                return bad_input(match line {
                    Some(n) => format!(
                        "config '{config_name}', line {n}: pragma {k} needs a plain value \
                         (letters, digits, '-' or '_')"
                    ),
                    None => format!(
                        "pragma {k} needs a plain value (letters, digits, '-' or '_'), got '{v}'"
                    ),
                });
            }
            match pragmas.iter_mut().find(|(pk, _)| *pk == k) {
                Some(p) => p.1 = v,
                None => pragmas.push((k, v)),
            }
        }
        let busy_ms = match pragmas.iter().find(|(k, _)| k == "busy_timeout") {
            Some((_, v)) => match v.parse::<u64>() {
                Ok(ms) => ms,
                Err(_) => return bad_input("busy_timeout must be a whole number of milliseconds"),
            },
            None => 0,
        };
        // busy_timeout is implemented by dbperf's own busy handler (see `busy_wait`).
        pragmas.retain(|(k, _)| k != "busy_timeout");
        Ok(Sqlite {
            path: work_dir.join("ib.sqlite"),
            config_name,
            pragmas,
            busy_timeout: Duration::from_millis(busy_ms),
            dialect: SqliteDialect,
        })
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    fn open_connection(&self) -> Result<Connection, DbError> {
        let flags = OpenFlags::SQLITE_OPEN_READ_WRITE
            | OpenFlags::SQLITE_OPEN_CREATE
            | OpenFlags::SQLITE_OPEN_NO_MUTEX;
        let mut conn = Connection::open_with_flags(&self.path, flags).map_err(map_err)?;
        for (k, v) in &self.pragmas {
            // journal_mode answers with a row; query it so the answer can be checked.
            let got: Option<String> = conn
                .query_row(&format!("PRAGMA {k}={v}"), [], |r| {
                    r.get::<_, rusqlite::types::Value>(0)
                })
                .map(|v| match v {
                    rusqlite::types::Value::Text(s) => Some(s),
                    rusqlite::types::Value::Integer(i) => Some(i.to_string()),
                    _ => None,
                })
                .or_else(|e| match e {
                    rusqlite::Error::QueryReturnedNoRows => Ok(None),
                    e => Err(map_err(e)),
                })?;
            if k == "journal_mode" {
                if let Some(got) = got {
                    if !got.eq_ignore_ascii_case(v) {
                        return Err(DbError {
                            message: format!("SQLite refused journal_mode={v} (it is {got})"),
                            transient: false,
                            code: None,
                            fault: None,
                            lost: None,
                        });
                    }
                }
            }
        }
        let budget = self.busy_timeout;
        conn.busy_handler(Some(move |n: i32| busy_wait(n, budget)))
            .map_err(map_err)?;
        Ok(conn)
    }
}

/// Busy handler: SQLite's built-in one sleeps 1, 2, 5, 10 ... 100 ms between tries, which makes a
/// writer that waits behind a 1 ms commit lose several ms. Poll every 50 µs for the first 10 ms,
/// then every 1 ms, until the config's busy_timeout is spent.
fn busy_wait(n: i32, budget: Duration) -> bool {
    let n = n.max(0) as u64;
    let spent = if n < 200 {
        Duration::from_micros(50 * n)
    } else {
        Duration::from_millis(10 + (n - 200))
    };
    if spent >= budget {
        return false;
    }
    std::thread::sleep(if n < 200 {
        Duration::from_micros(50)
    } else {
        Duration::from_millis(1)
    });
    true
}

fn map_err(e: rusqlite::Error) -> DbError {
    let transient = matches!(
        e.sqlite_error_code(),
        Some(ErrorCode::DatabaseBusy) | Some(ErrorCode::DatabaseLocked)
    );
    let code = match &e {
        rusqlite::Error::SqliteFailure(f, _) => Some((f.extended_code & 0xff).to_string()),
        _ => None,
    };
    DbError {
        message: e.to_string(),
        transient,
        code,
        fault: None,
        lost: None,
    }
}

impl Dbms for Sqlite {
    fn engine(&self) -> Engine {
        Engine::Sqlite
    }

    fn connect(&self) -> anyhow::Result<Box<dyn Conn>> {
        let conn = self.open_connection()?;
        Ok(Box::new(SqliteConn {
            cell: Cell::new(conn, |_| Vec::new()),
        }))
    }

    fn version(&self) -> anyhow::Result<String> {
        Ok(rusqlite::version().to_string())
    }

    fn config_name(&self) -> &str {
        &self.config_name
    }

    fn config_text(&self) -> anyhow::Result<String> {
        let conn = self.open_connection()?;
        let mut out = String::new();
        for p in REPORTED_PRAGMAS {
            let v: String = conn
                .query_row(&format!("PRAGMA {p}"), [], |r| {
                    r.get::<_, rusqlite::types::Value>(0)
                })
                .map(|v| match v {
                    rusqlite::types::Value::Integer(i) => i.to_string(),
                    rusqlite::types::Value::Text(s) => s,
                    other => format!("{other:?}"),
                })
                .unwrap_or_else(|e| format!("unavailable ({e})"));
            out.push_str(&format!("{p} = {v}\n"));
        }
        out.push_str(&format!(
            "busy_timeout = {} (dbperf busy handler: 50 µs polls, then 1 ms)\n",
            self.busy_timeout.as_millis()
        ));
        for (k, v) in &self.pragmas {
            if !REPORTED_PRAGMAS.contains(&k.as_str()) {
                out.push_str(&format!("{k} = {v} (as set)\n"));
            }
        }
        Ok(out)
    }

    fn dialect(&self) -> &dyn Dialect {
        &self.dialect
    }

    /// SQLite keeps no cumulative write counters across connections: its sizes instead (the
    /// database's pages and the WAL file), whose differences are the growth over a step.
    fn counters(&self, _within: std::time::Duration) -> Result<Vec<(String, f64)>, DbError> {
        let conn = self.open_connection()?;
        let pages: i64 = conn
            .query_row("PRAGMA page_count", [], |r| r.get(0))
            .map_err(map_err)?;
        let page_size: i64 = conn
            .query_row("PRAGMA page_size", [], |r| r.get(0))
            .map_err(map_err)?;
        let mut out = vec![(
            "database_size_bytes".to_string(),
            (pages * page_size) as f64,
        )];
        let mut wal = self.path.clone().into_os_string();
        wal.push("-wal");
        if let Ok(m) = std::fs::metadata(&wal) {
            out.push(("wal_file_bytes".into(), m.len() as f64));
        }
        Ok(out)
    }

    fn maintain_after_load(
        &self,
        _tables: &[String],
        _deadline: std::time::Instant,
        done: &mut Vec<String>,
        _restore: &mut Vec<String>,
    ) -> Result<(), DbError> {
        // The counterpart of VACUUM ANALYZE + CHECKPOINT: fresh planner statistics and a WAL
        // folded back into the database file, so qr100 does not start behind a big WAL.
        let mut conn = self.connect().map_err(|e| DbError {
            message: format!("{e:#}"),
            transient: false,
            code: None,
            fault: None,
            lost: None,
        })?;
        conn.execute_batch("ANALYZE")?;
        done.push("ANALYZE".to_string());
        let wal =
            conn.query_i64("SELECT count(*) FROM pragma_journal_mode WHERE journal_mode = 'wal'")?;
        if wal == Some(1) {
            conn.query_i64("PRAGMA wal_checkpoint(TRUNCATE)")?;
            done.push("PRAGMA wal_checkpoint(TRUNCATE)".to_string());
        }
        Ok(())
    }
}

type Stmts<'a> = Vec<Statement<'a>>;

self_cell::self_cell!(
    /// A connection with its prepared statements: statements borrow the connection, so both live
    /// in one self-referential cell and are addressed by index (no SQL hashing per execution).
    struct Cell {
        owner: Connection,
        #[not_covariant]
        dependent: Stmts,
    }
);

pub struct SqliteConn {
    cell: Cell,
}

fn bind(st: &mut Statement<'_>, params: &[Param]) -> rusqlite::Result<()> {
    for (i, p) in params.iter().enumerate() {
        match *p {
            Param::Int(v) => st.raw_bind_parameter(i + 1, v)?,
            Param::Text(s) | Param::DateTime(s) => st.raw_bind_parameter(i + 1, s)?,
        }
    }
    Ok(())
}

impl Conn for SqliteConn {
    fn execute_batch(&mut self, sql: &str) -> Result<(), DbError> {
        self.cell.borrow_owner().execute_batch(sql).map_err(map_err)
    }

    fn prepare(&mut self, sql: &str) -> Result<StmtId, DbError> {
        self.cell.with_dependent_mut(|conn, stmts| {
            let st = conn.prepare(sql).map_err(map_err)?;
            stmts.push(st);
            Ok(stmts.len() - 1)
        })
    }

    fn execute(&mut self, stmt: StmtId, params: &[Param]) -> Result<u64, DbError> {
        self.cell.with_dependent_mut(|_, stmts| {
            let st = &mut stmts[stmt];
            bind(st, params).map_err(map_err)?;
            st.raw_execute().map(|n| n as u64).map_err(map_err)
        })
    }

    fn query(&mut self, stmt: StmtId, params: &[Param]) -> Result<u64, DbError> {
        self.cell.with_dependent_mut(|_, stmts| {
            let st = &mut stmts[stmt];
            bind(st, params).map_err(map_err)?;
            let ncols = st.column_count();
            let mut rows = st.raw_query();
            let mut n = 0u64;
            // Touch every column, as a client fetching the result would.
            while let Some(row) = rows.next().map_err(map_err)? {
                for c in 0..ncols {
                    std::hint::black_box(row.get_ref(c).map_err(map_err)?);
                }
                n += 1;
            }
            Ok(n)
        })
    }

    fn run_text(&mut self, sql: &str) -> Result<u64, DbError> {
        let conn = self.cell.borrow_owner();
        // Compiled anew every time, as a server parses an unprepared statement.
        let mut st = conn.prepare(sql).map_err(map_err)?;
        let ncols = st.column_count();
        if ncols == 0 {
            return st.raw_execute().map(|n| n as u64).map_err(map_err);
        }
        let mut rows = st.raw_query();
        let mut n = 0u64;
        while let Some(row) = rows.next().map_err(map_err)? {
            for c in 0..ncols {
                std::hint::black_box(row.get_ref(c).map_err(map_err)?);
            }
            n += 1;
        }
        Ok(n)
    }

    fn text_rows(&mut self, sql: &str, keep: Keep, out: &mut Rows) -> Result<u64, DbError> {
        out.start(keep);
        let conn = self.cell.borrow_owner();
        let mut st = conn.prepare(sql).map_err(map_err)?;
        let ncols = st.column_count();
        if ncols == 0 {
            st.raw_execute().map_err(map_err)?;
            return Ok(0);
        }
        let mut rows = st.raw_query();
        // SQLite's values are typed: written as the text a server's text protocol would send.
        let mut texts: Vec<Option<Vec<u8>>> = Vec::with_capacity(ncols);
        while let Some(row) = rows.next().map_err(map_err)? {
            texts.clear();
            for c in 0..ncols {
                texts.push(as_text(row.get_ref(c).map_err(map_err)?));
            }
            let cols: Vec<Option<&[u8]>> = texts.iter().map(|t| t.as_deref()).collect();
            out.push(&cols).map_err(super::rows::too_much)?;
        }
        Ok(out.len() as u64)
    }

    fn query_i64(&mut self, sql: &str) -> Result<Option<i64>, DbError> {
        self.cell
            .borrow_owner()
            .query_row(sql, [], |r| r.get::<_, Option<i64>>(0))
            .map_err(map_err)
    }
}

/// A typed value as a text protocol sends it: integers and reals in decimal (Rust's shortest
/// form that reads back exactly, never an exponent), text and blobs as their bytes.
fn as_text(v: rusqlite::types::ValueRef<'_>) -> Option<Vec<u8>> {
    use rusqlite::types::ValueRef;
    match v {
        ValueRef::Null => None,
        ValueRef::Integer(i) => Some(i.to_string().into_bytes()),
        ValueRef::Real(f) => Some(f.to_string().into_bytes()),
        ValueRef::Text(t) | ValueRef::Blob(t) => Some(t.to_vec()),
    }
}

pub struct SqliteDialect;

impl Dialect for SqliteDialect {
    fn sql(&self) -> SqlDialect {
        SqlDialect::Sqlite
    }

    fn placeholder(&self, _i: usize) -> String {
        "?".to_string()
    }

    fn table_exists_sql(&self, t: &str) -> String {
        format!("SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name = '{t}'")
    }

    fn index_exists_sql(&self, t: &str, index: &str) -> String {
        format!("SELECT count(*) FROM sqlite_master WHERE type = 'index' AND tbl_name = '{t}' AND name = '{index}'")
    }
}
