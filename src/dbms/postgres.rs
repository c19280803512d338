//! PostgreSQL through libpq (pq-sys, built from source without OpenSSL): the PostgreSQL project's
//! own client, the one sysbench and pgbench use, and the cheapest per operation of the Rust
//! options measured (shared/spec/drivers.md). Statements are prepared once per connection;
//! integer parameters travel in binary, typed by what the server inferred for each placeholder,
//! strings and timestamps as text.

use std::ffi::{CStr, CString};
use std::io::Write;
use std::os::raw::{c_char, c_int};
use std::ptr;

use pq_sys as pq;

use super::{Conn, DbError, Dbms, Dialect, Endpoint, Param, StmtId, Transport};

const INT2: pq::Oid = 21;
const INT4: pq::Oid = 23;
const INT8: pq::Oid = 20;

/// Errors that are worth counting and going on: serialization failure, deadlock, lock not
/// available. Everything else (a lost connection above all) fails the step.
pub fn transient_sqlstate(code: &str) -> bool {
    matches!(code, "40001" | "40P01" | "55P03")
}

/// libpq's keyword/value connection parameters for an endpoint.
fn conn_params(ep: &Endpoint) -> (Vec<CString>, Vec<CString>) {
    let mut kv: Vec<(&str, String)> = Vec::new();
    match &ep.transport {
        Transport::Tcp { host, port } => {
            kv.push(("host", host.clone()));
            kv.push(("port", port.to_string()));
        }
        Transport::Socket { path } => {
            // A socket file `.s.PGSQL.<port>` names its directory and port; a directory alone
            // means the default port.
            let name = path.file_name().and_then(|n| n.to_str()).unwrap_or("");
            match name.strip_prefix(".s.PGSQL.") {
                Some(port) => {
                    kv.push(("host", path.parent().unwrap_or(path).display().to_string()));
                    kv.push(("port", port.to_string()));
                }
                None => kv.push(("host", path.display().to_string())),
            }
        }
    }
    kv.push(("user", ep.user.clone()));
    kv.push(("dbname", ep.database.clone()));
    if let Some(p) = &ep.password {
        kv.push(("password", p.clone()));
    }
    kv.push(("application_name", "dbperf".into()));
    kv.push(("connect_timeout", "10".into()));
    let keys = kv.iter().map(|(k, _)| CString::new(*k).unwrap()).collect();
    let vals = kv
        .iter()
        .map(|(_, v)| CString::new(v.replace('\0', "")).unwrap())
        .collect();
    (keys, vals)
}

fn ptrs(v: &[CString]) -> Vec<*const c_char> {
    v.iter()
        .map(|c| c.as_ptr())
        .chain(std::iter::once(ptr::null()))
        .collect()
}

/// True when the server accepts connections.
pub fn ping(ep: &Endpoint) -> bool {
    let (k, v) = conn_params(ep);
    let (kp, vp) = (ptrs(&k), ptrs(&v));
    // SAFETY: null-terminated arrays of valid C strings that outlive the call.
    unsafe { pq::PQpingParams(kp.as_ptr(), vp.as_ptr(), 0) == pq::PGPing::PQPING_OK }
}

struct Prepared {
    name: CString,
    types: Vec<pq::Oid>,
}

pub struct PgConn {
    conn: *mut pq::PGconn,
    stmts: Vec<Prepared>,
    arena: Vec<u8>,
    spans: Vec<(usize, c_int)>,
    values: Vec<*const c_char>,
    lengths: Vec<c_int>,
    formats: Vec<c_int>,
}

/// Frees a result however the caller leaves.
struct Res(*mut pq::PGresult);

impl Drop for Res {
    fn drop(&mut self) {
        if !self.0.is_null() {
            // SAFETY: a result from libpq, freed once.
            unsafe { pq::PQclear(self.0) }
        }
    }
}

fn cstr(p: *const c_char) -> String {
    if p.is_null() {
        return String::new();
    }
    // SAFETY: libpq returns NUL-terminated strings valid until the result/conn is freed.
    unsafe { CStr::from_ptr(p).to_string_lossy().trim_end().to_string() }
}

impl PgConn {
    pub fn connect(ep: &Endpoint) -> Result<PgConn, DbError> {
        let (k, v) = conn_params(ep);
        let (kp, vp) = (ptrs(&k), ptrs(&v));
        // SAFETY: as in `ping`; the returned connection is owned by PgConn and finished on drop.
        let conn = unsafe { pq::PQconnectdbParams(kp.as_ptr(), vp.as_ptr(), 0) };
        let c = PgConn {
            conn,
            stmts: Vec::new(),
            arena: Vec::with_capacity(8192),
            spans: Vec::new(),
            values: Vec::new(),
            lengths: Vec::new(),
            formats: Vec::new(),
        };
        // SAFETY: conn is a valid (possibly failed) connection object.
        if conn.is_null() || unsafe { pq::PQstatus(conn) } != pq::ConnStatusType::CONNECTION_OK {
            return Err(DbError {
                message: format!(
                    "cannot connect to PostgreSQL ({}): {}",
                    ep.describe(),
                    c.conn_error()
                ),
                transient: false,
            });
        }
        Ok(c)
    }

    fn conn_error(&self) -> String {
        if self.conn.is_null() {
            return "out of memory".into();
        }
        // SAFETY: valid connection.
        cstr(unsafe { pq::PQerrorMessage(self.conn) })
    }

    fn error(&self, res: &Res) -> DbError {
        if res.0.is_null() {
            return DbError {
                message: self.conn_error(),
                transient: false,
            };
        }
        // SAFETY: valid result.
        let (state, msg) = unsafe {
            (
                cstr(pq::PQresultErrorField(res.0, pq::PG_DIAG_SQLSTATE as c_int)),
                cstr(pq::PQresultErrorMessage(res.0)),
            )
        };
        // SAFETY: valid connection.
        let broken = unsafe { pq::PQstatus(self.conn) } != pq::ConnStatusType::CONNECTION_OK;
        let message = if msg.is_empty() {
            self.conn_error()
        } else {
            msg
        };
        DbError {
            message: if state.is_empty() {
                message
            } else {
                format!("{message} (SQLSTATE {state})")
            },
            transient: !broken && transient_sqlstate(&state),
        }
    }

    fn exec(&mut self, sql: &str) -> Result<Res, DbError> {
        let c = CString::new(sql).map_err(|_| DbError {
            message: "NUL in SQL".into(),
            transient: false,
        })?;
        // SAFETY: valid connection and C string.
        let res = Res(unsafe { pq::PQexec(self.conn, c.as_ptr()) });
        self.check(res)
    }

    fn check(&self, res: Res) -> Result<Res, DbError> {
        if res.0.is_null() {
            return Err(self.error(&res));
        }
        // SAFETY: valid result.
        match unsafe { pq::PQresultStatus(res.0) } {
            pq::ExecStatusType::PGRES_COMMAND_OK | pq::ExecStatusType::PGRES_TUPLES_OK => Ok(res),
            _ => Err(self.error(&res)),
        }
    }

    /// First column of every row, as text.
    pub fn query_strings(&mut self, sql: &str) -> Result<Vec<String>, DbError> {
        let res = self.exec(sql)?;
        // SAFETY: valid tuples result; indexes within bounds.
        unsafe {
            let n = pq::PQntuples(res.0);
            Ok((0..n).map(|r| cstr(pq::PQgetvalue(res.0, r, 0))).collect())
        }
    }

    fn run_prepared(&mut self, stmt: StmtId, params: &[Param]) -> Result<Res, DbError> {
        let st = self.stmts.get(stmt).ok_or_else(|| DbError {
            message: format!("no statement {stmt}"),
            transient: false,
        })?;
        if st.types.len() != params.len() {
            return Err(DbError {
                message: format!(
                    "statement takes {} parameters, got {}",
                    st.types.len(),
                    params.len()
                ),
                transient: false,
            });
        }
        self.arena.clear();
        self.spans.clear();
        self.formats.clear();
        for (p, &ty) in params.iter().zip(&st.types) {
            let start = self.arena.len();
            let binary = match (*p, ty) {
                (Param::Int(v), INT8) => {
                    self.arena.extend_from_slice(&v.to_be_bytes());
                    true
                }
                (Param::Int(v), INT4) if i32::try_from(v).is_ok() => {
                    self.arena.extend_from_slice(&(v as i32).to_be_bytes());
                    true
                }
                (Param::Int(v), INT2) if i16::try_from(v).is_ok() => {
                    self.arena.extend_from_slice(&(v as i16).to_be_bytes());
                    true
                }
                (Param::Int(v), _) => {
                    let _ = write!(self.arena, "{v}\0");
                    false
                }
                (Param::Text(s) | Param::DateTime(s), _) => {
                    self.arena.extend_from_slice(s.as_bytes());
                    self.arena.push(0);
                    false
                }
            };
            self.spans
                .push((start, (self.arena.len() - start) as c_int));
            self.formats.push(binary as c_int);
        }
        // Pointers are taken only now: the arena may have moved while it grew.
        let base = self.arena.as_ptr();
        self.values.clear();
        self.lengths.clear();
        for &(off, len) in &self.spans {
            // SAFETY: off is within the arena.
            self.values.push(unsafe { base.add(off) } as *const c_char);
            self.lengths.push(len);
        }
        let st = &self.stmts[stmt];
        // SAFETY: arrays of params.len() entries that outlive the call; text values are
        // NUL-terminated, binary ones have lengths.
        let res = Res(unsafe {
            pq::PQexecPrepared(
                self.conn,
                st.name.as_ptr(),
                params.len() as c_int,
                self.values.as_ptr(),
                self.lengths.as_ptr(),
                self.formats.as_ptr(),
                0,
            )
        });
        self.check(res)
    }
}

impl Drop for PgConn {
    fn drop(&mut self) {
        if !self.conn.is_null() {
            // SAFETY: owned connection, finished once.
            unsafe { pq::PQfinish(self.conn) }
        }
    }
}

impl Conn for PgConn {
    fn execute_batch(&mut self, sql: &str) -> Result<(), DbError> {
        self.exec(sql).map(|_| ())
    }

    fn prepare(&mut self, sql: &str) -> Result<StmtId, DbError> {
        let name = CString::new(format!("dbperf{}", self.stmts.len())).unwrap();
        let q = CString::new(sql).map_err(|_| DbError {
            message: "NUL in SQL".into(),
            transient: false,
        })?;
        // SAFETY: valid connection and C strings; no parameter types given, the server infers.
        let res =
            Res(unsafe { pq::PQprepare(self.conn, name.as_ptr(), q.as_ptr(), 0, ptr::null()) });
        self.check(res)?;
        // SAFETY: as above.
        let desc = self.check(Res(unsafe {
            pq::PQdescribePrepared(self.conn, name.as_ptr())
        }))?;
        // SAFETY: valid describe result.
        let types = unsafe {
            let n = pq::PQnparams(desc.0);
            (0..n).map(|i| pq::PQparamtype(desc.0, i)).collect()
        };
        self.stmts.push(Prepared { name, types });
        Ok(self.stmts.len() - 1)
    }

    fn execute(&mut self, stmt: StmtId, params: &[Param]) -> Result<u64, DbError> {
        let res = self.run_prepared(stmt, params)?;
        // SAFETY: valid command result; PQcmdTuples returns "" (never null) when there is no
        // count. Parsed in place: no allocation per statement.
        let digits = unsafe { CStr::from_ptr(pq::PQcmdTuples(res.0)) }.to_bytes();
        Ok(digits
            .iter()
            .take_while(|d| d.is_ascii_digit())
            .fold(0u64, |n, d| n * 10 + (d - b'0') as u64))
    }

    fn query(&mut self, stmt: StmtId, params: &[Param]) -> Result<u64, DbError> {
        let res = self.run_prepared(stmt, params)?;
        // SAFETY: valid tuples result, indexes within bounds.
        unsafe {
            let (rows, cols) = (pq::PQntuples(res.0), pq::PQnfields(res.0));
            for r in 0..rows {
                for c in 0..cols {
                    std::hint::black_box(*pq::PQgetvalue(res.0, r, c));
                }
            }
            Ok(rows as u64)
        }
    }

    fn query_i64(&mut self, sql: &str) -> Result<Option<i64>, DbError> {
        let res = self.exec(sql)?;
        // SAFETY: valid result, row 0 checked to exist.
        unsafe {
            if pq::PQntuples(res.0) == 0 || pq::PQgetisnull(res.0, 0, 0) == 1 {
                return Ok(None);
            }
            let v = cstr(pq::PQgetvalue(res.0, 0, 0));
            v.parse().map(Some).map_err(|_| DbError {
                message: format!("expected an integer, got '{v}'"),
                transient: false,
            })
        }
    }
}

pub struct Postgres {
    endpoint: Endpoint,
    config_name: String,
    config_file: String,
    dialect: PgDialect,
}

impl Postgres {
    pub fn new(endpoint: Endpoint, config_name: &str, config_file: &str) -> Postgres {
        Postgres {
            endpoint,
            config_name: config_name.into(),
            config_file: config_file.into(),
            dialect: PgDialect,
        }
    }

    fn pg(&self) -> Result<PgConn, DbError> {
        PgConn::connect(&self.endpoint)
    }
}

impl Dbms for Postgres {
    fn engine(&self) -> &'static str {
        "postgres"
    }

    fn connect(&self) -> anyhow::Result<Box<dyn Conn>> {
        Ok(Box::new(self.pg()?))
    }

    fn version(&self) -> anyhow::Result<String> {
        Ok(self.pg()?.query_strings("SELECT version()")?.join(""))
    }

    fn config_name(&self) -> &str {
        &self.config_name
    }

    fn config_text(&self) -> anyhow::Result<String> {
        let rows = self.pg()?.query_strings(
            "SELECT name || ' = ' || setting || coalesce(' ' || unit, '') || '  # ' || source \
             FROM pg_settings WHERE source NOT IN ('default', 'override') ORDER BY name",
        )?;
        let mut out = self.config_file.clone();
        out.push_str("\n# effective settings not at their built-in default (pg_settings):\n");
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

    /// VACUUM ANALYZE every table in parallel (INDEX_CLEANUP ON from PostgreSQL 12), then
    /// CHECKPOINT, as the original's vac_pg.
    fn ibench_cleanup(
        &self,
        tables: &[String],
        _deadline: std::time::Instant,
        done: &mut Vec<String>,
    ) -> Result<Vec<String>, DbError> {
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
                .map(|h| h.join().expect("vacuum thread"))
                .collect()
        });
        for (sql, r) in results {
            r?;
            done.push(sql);
        }
        self.pg()?.execute_batch("CHECKPOINT")?;
        done.push("CHECKPOINT".into());
        Ok(Vec::new())
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
    fn placeholder(&self, i: usize) -> String {
        format!("${i}")
    }

    fn ibench_create_table(&self, t: &str) -> Vec<String> {
        vec![
            format!("DROP TABLE IF EXISTS {t}"),
            format!(
                "CREATE TABLE {t} (transactionid bigserial PRIMARY KEY, \
                 dateandtime timestamp without time zone, cashregisterid int NOT NULL, \
                 customerid int NOT NULL, productid int NOT NULL, price int NOT NULL, \
                 data varchar(4000))"
            ),
            // As the original: one sequence round trip per 1000 ids instead of per row.
            format!("ALTER SEQUENCE {t}_transactionid_seq CACHE 1000"),
        ]
    }

    fn index_hint(&self, _index: &str) -> String {
        String::new()
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
    use crate::dbms::DeleteForm;

    #[test]
    fn socket_files_name_directory_and_port() {
        let ep = Endpoint {
            transport: Transport::Socket {
                path: "/tmp/x/run/.s.PGSQL.5544".into(),
            },
            user: "u".into(),
            password: Some("pw".into()),
            database: "ib".into(),
        };
        let (k, v) = conn_params(&ep);
        let kv: Vec<(String, String)> = k
            .iter()
            .zip(&v)
            .map(|(a, b)| (a.to_str().unwrap().into(), b.to_str().unwrap().into()))
            .collect();
        assert!(kv.contains(&("host".into(), "/tmp/x/run".into())));
        assert!(kv.contains(&("port".into(), "5544".into())));
        assert!(kv.contains(&("password".into(), "pw".into())));
        assert!(
            !ep.describe().contains("pw"),
            "descriptions never show the password"
        );
    }

    #[test]
    fn only_lock_conflicts_are_transient() {
        assert!(transient_sqlstate("40P01") && transient_sqlstate("40001"));
        assert!(
            !transient_sqlstate("57P01"),
            "admin shutdown fails the step"
        );
        assert!(!transient_sqlstate("42P01"));
    }

    #[test]
    fn sequence_cache_and_delete_forms() {
        let d = PgDialect;
        assert_eq!(
            d.ibench_create_table("pi1")[2],
            "ALTER SEQUENCE pi1_transactionid_seq CACHE 1000"
        );
        assert!(d
            .ibench_delete("pi1", DeleteForm::Current)
            .contains("ORDER BY transactionid ASC LIMIT $2"));
        assert!(
            crate::dbms::is_secret_setting("ssl_passphrase_command")
                && !crate::dbms::is_secret_setting("shared_buffers")
        );
    }
}
