//! The two databases a history can live in, behind the four things the history needs: run a
//! statement, count what it changed, read rows as text, and transactions. Statements are SQL
//! text with literals quoted here (`lit`), in the dialect both engines share.

use std::path::Path;
use std::time::Duration;

use anyhow::Context;

use super::location::Location;
use crate::dbms::postgres::PgConn;
use crate::dbms::{Budget, Conn, Keep, Lost, Timeouts};
use crate::error::BadInput;

/// The most one history query reads. It reads every measurement of the series asked for (a
/// thousand runs of one target's full Insert Benchmark are about 800,000), so it keeps more than
/// a benchmark's setup query (`keep::KEEP`), and still no more than this, however many rows a
/// server sends or a database file holds: a larger history is read a filter at a time.
pub const HISTORY_KEEP: Keep = Keep {
    rows: 1_000_000,
    value: 64 << 10,
    total: 256 << 20,
};

/// The longest a login to a history server may take.
const CONNECT: Duration = Duration::from_secs(30);

/// A row as text: NULL is None.
pub type Row = Vec<Option<String>>;

pub trait Store {
    /// Statements separated by `;`, no result.
    fn batch(&mut self, sql: &str) -> anyhow::Result<()>;
    /// One statement; rows it inserted, updated or deleted.
    fn exec(&mut self, sql: &str) -> anyhow::Result<u64>;
    fn query(&mut self, sql: &str) -> anyhow::Result<Vec<Row>>;
}

/// Opens the store; `deadline` bounds each statement on a PostgreSQL history from its start,
/// however the server trickles its bytes (`--statement-timeout`).
pub fn open(loc: &Location, deadline: Duration) -> anyhow::Result<Box<dyn Store>> {
    match loc {
        Location::Sqlite(path) => {
            check_file(path)?;
            // O_NOFOLLOW too: a link made at the name after the check is refused by SQLite.
            let flags = rusqlite::OpenFlags::SQLITE_OPEN_READ_WRITE
                | rusqlite::OpenFlags::SQLITE_OPEN_CREATE
                | rusqlite::OpenFlags::SQLITE_OPEN_NO_MUTEX
                | rusqlite::OpenFlags::SQLITE_OPEN_NOFOLLOW;
            let conn = rusqlite::Connection::open_with_flags(path, flags)
                .with_context(|| format!("cannot open the history database {}", path.display()))?;
            // SQLite reads the file only at the first statement: a file that is not a database
            // is the user's mistake (exit 2), found here by its error code.
            if let Err(rusqlite::Error::SqliteFailure(e, _)) =
                conn.query_row("SELECT count(*) FROM sqlite_master", [], |r| {
                    r.get::<_, i64>(0)
                })
            {
                if e.code == rusqlite::ErrorCode::NotADatabase {
                    return Err(BadInput(format!(
                        "--db {} is not an SQLite database (nor empty); give a history database \
                         or a new file name",
                        path.display()
                    ))
                    .into());
                }
            }
            // Another dbperf importing at the same time waits for it instead of failing.
            conn.busy_timeout(std::time::Duration::from_secs(30))?;
            Ok(Box::new(Sqlite { conn, deadline }))
        }
        Location::Postgres(ep) => {
            let timeouts = Timeouts {
                connect: CONNECT.min(deadline),
                statement: deadline,
                ddl: deadline,
                stop: None,
            };
            let mut conn = PgConn::connect_with(ep, timeouts).map_err(|e| {
                // Nothing listening, no such database, a wrong password: the location the
                // user gave is wrong (exit 2); a server that broke the login is a failure.
                if e.lost == Some(Lost::Refused) {
                    anyhow::Error::from(BadInput(format!("history database: {e}")))
                } else {
                    anyhow::anyhow!("history database: {e}")
                }
            })?;
            // Every statement within --statement-timeout of its start, whatever arrives.
            conn.set_budget(Budget::Operation);
            // Literals are quoted the standard way (no backslash escapes), whatever the server's
            // default; a lock held by another importer is waited for, boundedly; and the server
            // gives up on a statement when dbperf would.
            let ms = deadline.as_millis();
            conn.execute_batch(&format!(
                "SET standard_conforming_strings = on; SET lock_timeout = '{ms}ms'; \
                 SET statement_timeout = '{ms}ms'"
            ))
            .map_err(|e| anyhow::anyhow!("history database: {e}"))?;
            Ok(Box::new(Postgres(conn)))
        }
    }
}

/// A SQLite history file is written as root as often as not: it must be in a directory nobody
/// else can change (so no other user can plant a link at its name, or at its journal's), and,
/// when it exists, a regular file that is not a link (SQLite would block reading a FIFO).
fn check_file(path: &Path) -> anyhow::Result<()> {
    let dir = match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d,
        _ => Path::new("."),
    };
    crate::safe_fs::open_dir(dir, crate::safe_fs::Also::Nobody)
        .map_err(|e| BadInput(format!("--db {}: {e:#}", path.display())))?;
    let Ok(m) = std::fs::symlink_metadata(path) else {
        return Ok(());
    };
    if m.file_type().is_symlink() {
        return Err(BadInput(format!(
            "--db {} is a symbolic link; give the file it points to",
            path.display()
        ))
        .into());
    }
    if !m.is_file() {
        return Err(BadInput(format!(
            "--db {} is not a regular file, so not an SQLite database",
            path.display()
        ))
        .into());
    }
    use std::os::unix::fs::MetadataExt;
    // SAFETY: geteuid has no preconditions.
    let me = unsafe { libc::geteuid() };
    if (m.uid() != 0 && m.uid() != me) || crate::safe_fs::others_may_write(&m) {
        return Err(BadInput(format!(
            "--db {} belongs to another user or others can write to it ({}, mode {:o}): a \
             history dbperf writes is its own user's; copy it, or give another file",
            path.display(),
            crate::safe_fs::user_name(m.uid()),
            m.mode() & 0o7777
        ))
        .into());
    }
    Ok(())
}

/// A string as an SQL literal: single quotes doubled. NUL, which neither engine stores in text,
/// is dropped.
pub fn lit(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 2);
    out.push('\'');
    for c in s.chars() {
        match c {
            '\'' => out.push_str("''"),
            '\0' => {}
            c => out.push(c),
        }
    }
    out.push('\'');
    out
}

pub fn lit_opt(s: Option<&str>) -> String {
    s.map_or_else(|| "NULL".into(), lit)
}

/// A row of a query that failed: past its deadline (the progress handler interrupted it), a
/// sentence that says so.
fn interrupted(e: rusqlite::Error, deadline: Duration) -> anyhow::Error {
    match &e {
        rusqlite::Error::SqliteFailure(f, _)
            if f.code == rusqlite::ErrorCode::OperationInterrupted =>
        {
            anyhow::anyhow!(
                "history database: a statement did not finish within {} (--statement-timeout)",
                crate::dbms::seconds(deadline)
            )
        }
        _ => anyhow::Error::from(e).context("history database"),
    }
}

/// A query of a SQLite history past `HISTORY_KEEP`.
fn too_much() -> BadInput {
    BadInput(format!(
        "the history database holds more for one query than dbperf reads ({} rows, {} KiB a \
         value, {} MiB in all); choose fewer series with --target, --step, --op or --metric",
        HISTORY_KEEP.rows,
        HISTORY_KEEP.value >> 10,
        HISTORY_KEEP.total >> 20
    ))
}

struct Sqlite {
    conn: rusqlite::Connection,
    /// Each statement's, from its start (`--statement-timeout`): a database file can hold a
    /// view that never ends.
    deadline: Duration,
}

impl Sqlite {
    /// Arms the deadline for the statement about to run: SQLite asks the handler every few
    /// thousand steps of its virtual machine, and a true answer interrupts the statement.
    fn arm(&mut self) -> anyhow::Result<()> {
        let start = std::time::Instant::now();
        let deadline = self.deadline;
        self.conn
            .progress_handler(10_000, Some(move || start.elapsed() > deadline))
            .context("history database")
    }

    fn error(&self, e: rusqlite::Error) -> anyhow::Error {
        interrupted(e, self.deadline)
    }
}

impl Store for Sqlite {
    fn batch(&mut self, sql: &str) -> anyhow::Result<()> {
        self.arm()?;
        self.conn.execute_batch(sql).map_err(|e| self.error(e))
    }

    fn exec(&mut self, sql: &str) -> anyhow::Result<u64> {
        self.arm()?;
        Ok(self.conn.execute(sql, []).map_err(|e| self.error(e))? as u64)
    }

    fn query(&mut self, sql: &str) -> anyhow::Result<Vec<Row>> {
        use rusqlite::types::ValueRef;
        self.arm()?;
        let mut st = self.conn.prepare(sql).context("history database")?;
        let n = st.column_count();
        let mut rows = st.query([])?;
        let mut out = Vec::new();
        let (mut rows_read, mut bytes) = (0u64, 0usize);
        while let Some(r) = rows.next().map_err(|e| interrupted(e, self.deadline))? {
            let mut row = Vec::with_capacity(n);
            for i in 0..n {
                row.push(match r.get_ref(i)? {
                    ValueRef::Null => None,
                    ValueRef::Integer(v) => Some(v.to_string()),
                    ValueRef::Real(v) => Some(format!("{v:?}")),
                    ValueRef::Text(t) | ValueRef::Blob(t) => {
                        Some(crate::untrusted::one_line(&String::from_utf8_lossy(t)).into_owned())
                    }
                });
            }
            rows_read += 1;
            let longest = row.iter().flatten().map(String::len).max().unwrap_or(0);
            bytes = bytes.saturating_add(row.iter().flatten().map(String::len).sum());
            bytes = bytes.saturating_add(row.len() * crate::dbms::CELL_COST);
            if rows_read > HISTORY_KEEP.rows
                || longest > HISTORY_KEEP.value
                || bytes > HISTORY_KEEP.total
            {
                return Err(too_much().into());
            }
            out.push(row);
        }
        Ok(out)
    }
}

struct Postgres(PgConn);

impl Store for Postgres {
    fn batch(&mut self, sql: &str) -> anyhow::Result<()> {
        // As a statement of --statement-timeout, not a long one of --ddl-timeout, which the
        // history does not have.
        self.0
            .run_text(sql)
            .map(|_| ())
            .map_err(|e| anyhow::anyhow!("history database: {e}"))
    }

    fn exec(&mut self, sql: &str) -> anyhow::Result<u64> {
        self.0
            .run_text(sql)
            .map_err(|e| anyhow::anyhow!("history database: {e}"))
    }

    fn query(&mut self, sql: &str) -> anyhow::Result<Vec<Row>> {
        let mut out = Vec::new();
        self.0
            .wire_rows_kept(sql, HISTORY_KEEP, |cols| {
                out.push(
                    cols.iter()
                        .map(|c| {
                            c.map(|b| {
                                crate::untrusted::one_line(&String::from_utf8_lossy(b)).into_owned()
                            })
                        })
                        .collect(),
                )
            })
            .map_err(|e| anyhow::anyhow!("history database: {e}"))?;
        Ok(out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn literals_are_quoted() {
        assert_eq!(lit("it's"), "'it''s'");
        assert_eq!(lit("a\0b"), "'ab'");
        assert_eq!(lit_opt(None), "NULL");
    }
}
