//! The two databases a history can live in, behind the four things the history needs: run a
//! statement, count what it changed, read rows as text, and transactions. Statements are SQL
//! text with literals quoted here (`lit`), in the dialect both engines share.

use anyhow::Context;

use super::location::Location;
use crate::dbms::postgres::PgConn;
use crate::dbms::Conn;
use crate::error::BadInput;

/// A row as text: NULL is None.
pub type Row = Vec<Option<String>>;

pub trait Store {
    /// Statements separated by `;`, no result.
    fn batch(&mut self, sql: &str) -> anyhow::Result<()>;
    /// One statement; rows it inserted, updated or deleted.
    fn exec(&mut self, sql: &str) -> anyhow::Result<u64>;
    fn query(&mut self, sql: &str) -> anyhow::Result<Vec<Row>>;
}

pub fn open(loc: &Location) -> anyhow::Result<Box<dyn Store>> {
    match loc {
        Location::Sqlite(path) => {
            // Only a regular file (or none yet): SQLite would block reading a FIFO.
            if let Ok(m) = std::fs::metadata(path) {
                if !m.is_file() {
                    return Err(BadInput(format!(
                        "--db {} is not a regular file, so not an SQLite database",
                        path.display()
                    ))
                    .into());
                }
            }
            let conn = rusqlite::Connection::open(path)
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
            Ok(Box::new(Sqlite(conn)))
        }
        Location::Postgres(ep) => {
            let mut conn = PgConn::connect(ep).map_err(|e| anyhow::anyhow!("{e}"))?;
            // Its statements are bounded by the server's statement_timeout below, not by a
            // benchmark statement's.
            conn.set_budget(crate::dbms::Budget::Long);
            // Literals are quoted the standard way (no backslash escapes), whatever the server's
            // default; and a lock held by another importer is waited for, boundedly.
            conn.execute_batch(
                "SET standard_conforming_strings = on; SET lock_timeout = '60s'; \
                 SET statement_timeout = '300s'",
            )
            .map_err(|e| anyhow::anyhow!("history database: {e}"))?;
            Ok(Box::new(Postgres(conn)))
        }
    }
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

struct Sqlite(rusqlite::Connection);

impl Store for Sqlite {
    fn batch(&mut self, sql: &str) -> anyhow::Result<()> {
        self.0.execute_batch(sql).context("history database")
    }

    fn exec(&mut self, sql: &str) -> anyhow::Result<u64> {
        Ok(self.0.execute(sql, []).context("history database")? as u64)
    }

    fn query(&mut self, sql: &str) -> anyhow::Result<Vec<Row>> {
        use rusqlite::types::ValueRef;
        let mut st = self.0.prepare(sql).context("history database")?;
        let n = st.column_count();
        let mut rows = st.query([])?;
        let mut out = Vec::new();
        while let Some(r) = rows.next()? {
            let mut row = Vec::with_capacity(n);
            for i in 0..n {
                row.push(match r.get_ref(i)? {
                    ValueRef::Null => None,
                    ValueRef::Integer(v) => Some(v.to_string()),
                    ValueRef::Real(v) => Some(format!("{v:?}")),
                    ValueRef::Text(t) | ValueRef::Blob(t) => {
                        Some(String::from_utf8_lossy(t).into_owned())
                    }
                });
            }
            out.push(row);
        }
        Ok(out)
    }
}

struct Postgres(PgConn);

impl Store for Postgres {
    fn batch(&mut self, sql: &str) -> anyhow::Result<()> {
        self.0
            .execute_batch(sql)
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
            .wire_rows(sql, |cols| {
                out.push(
                    cols.iter()
                        .map(|c| c.map(|b| String::from_utf8_lossy(b).into_owned()))
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
