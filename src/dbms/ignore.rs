//! `--ignore-errors`: which server errors the run goes on after (counted) instead of failing the
//! step, with sysbench's `--mysql-ignore-errors` semantics: a list of error codes, `all`, or
//! `none`. Without it each adapter's default applies (sysbench's and pgbench's: deadlocks, lock
//! wait timeouts, serialization failures, write conflicts). A lost connection or a server that
//! stopped answering has no code and is never ignored.

use std::sync::Arc;
use std::time::{Duration, Instant};

use super::{Budget, Conn, DbError, Dbms, Dialect, Keep, Param, Rows, StmtId};
use crate::error::bad_input;

#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub enum IgnoreErrors {
    /// Each engine's own list (docs/reliability.md).
    #[default]
    Default,
    /// Every error the server reports with a code.
    All,
    /// Only these codes (none: every error fails the step).
    Codes(Vec<String>),
}

impl IgnoreErrors {
    pub fn parse(s: &str) -> anyhow::Result<IgnoreErrors> {
        let s = s.trim();
        match s {
            "all" => return Ok(IgnoreErrors::All),
            "none" | "" => return Ok(IgnoreErrors::Codes(Vec::new())),
            _ => {}
        }
        let mut codes = Vec::new();
        for c in s.split(',').map(str::trim) {
            let ok = !c.is_empty() && c.len() <= 5 && c.chars().all(|x| x.is_ascii_alphanumeric());
            if !ok {
                return bad_input(format!(
                    "--ignore-errors: '{c}' is not an error code (MySQL error numbers such as \
                     1213, PostgreSQL SQLSTATEs such as 40P01, SQLite result codes such as 5; \
                     or all, or none)"
                ));
            }
            codes.push(c.to_ascii_uppercase());
        }
        Ok(IgnoreErrors::Codes(codes))
    }

    /// Whether the run goes on after `e`.
    pub fn ignorable(&self, e: &DbError) -> bool {
        match self {
            IgnoreErrors::Default => e.transient,
            IgnoreErrors::All => e.code.is_some(),
            IgnoreErrors::Codes(c) => e.code.as_ref().is_some_and(|x| c.contains(x)),
        }
    }

    /// `dbms` with this policy deciding which errors are ignorable (`DbError::transient`).
    pub fn apply(&self, dbms: Arc<dyn Dbms>) -> Arc<dyn Dbms> {
        if *self == IgnoreErrors::Default {
            return dbms;
        }
        Arc::new(Classified {
            inner: dbms,
            policy: Arc::new(self.clone()),
        })
    }
}

struct Classified {
    inner: Arc<dyn Dbms>,
    policy: Arc<IgnoreErrors>,
}

struct ClassifiedConn {
    inner: Box<dyn Conn>,
    policy: Arc<IgnoreErrors>,
}

impl ClassifiedConn {
    fn class<T>(&self, r: Result<T, DbError>) -> Result<T, DbError> {
        r.map_err(|mut e| {
            e.transient = self.policy.ignorable(&e);
            e
        })
    }
}

impl Conn for ClassifiedConn {
    fn execute_batch(&mut self, sql: &str) -> Result<(), DbError> {
        let r = self.inner.execute_batch(sql);
        self.class(r)
    }
    fn prepare(&mut self, sql: &str) -> Result<StmtId, DbError> {
        let r = self.inner.prepare(sql);
        self.class(r)
    }
    fn execute(&mut self, stmt: StmtId, params: &[Param]) -> Result<u64, DbError> {
        let r = self.inner.execute(stmt, params);
        self.class(r)
    }
    fn query(&mut self, stmt: StmtId, params: &[Param]) -> Result<u64, DbError> {
        let r = self.inner.query(stmt, params);
        self.class(r)
    }
    fn query_i64(&mut self, sql: &str) -> Result<Option<i64>, DbError> {
        let r = self.inner.query_i64(sql);
        self.class(r)
    }
    fn run_text(&mut self, sql: &str) -> Result<u64, DbError> {
        let r = self.inner.run_text(sql);
        self.class(r)
    }
    fn text_rows(&mut self, sql: &str, keep: Keep, out: &mut Rows) -> Result<u64, DbError> {
        let r = self.inner.text_rows(sql, keep, out);
        self.class(r)
    }
    fn set_budget(&mut self, budget: Budget) {
        self.inner.set_budget(budget);
    }
}

impl Dbms for Classified {
    fn engine(&self) -> crate::engines::Engine {
        self.inner.engine()
    }
    fn connect(&self) -> anyhow::Result<Box<dyn Conn>> {
        Ok(Box::new(ClassifiedConn {
            inner: self.inner.connect()?,
            policy: self.policy.clone(),
        }))
    }
    fn version(&self) -> anyhow::Result<String> {
        self.inner.version()
    }
    fn config_name(&self) -> &str {
        self.inner.config_name()
    }
    fn config_text(&self) -> anyhow::Result<String> {
        self.inner.config_text()
    }
    fn dialect(&self) -> &dyn Dialect {
        self.inner.dialect()
    }
    fn maintain_after_load(
        &self,
        tables: &[String],
        deadline: Instant,
        done: &mut Vec<String>,
        restore: &mut Vec<String>,
    ) -> Result<(), DbError> {
        self.inner
            .maintain_after_load(tables, deadline, done, restore)
    }
    fn counters(&self, within: Duration) -> Result<Vec<(String, f64)>, DbError> {
        self.inner.counters(within)
    }
    fn diagnostics(&self, within: Duration) -> Vec<(&'static str, String)> {
        self.inner.diagnostics(within)
    }
    fn stall_state(&self, within: Duration) -> super::StallState {
        self.inner.stall_state(within)
    }
    fn answers(&self, within: Duration) -> bool {
        self.inner.answers(within)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn err(code: Option<&str>, transient: bool) -> DbError {
        DbError {
            message: "x".into(),
            transient,
            code: code.map(str::to_string),
            fault: None,
            lost: None,
        }
    }

    #[test]
    fn lists_all_and_none_as_sysbench_reads_them() {
        let l = IgnoreErrors::parse("1213, 40p01").unwrap();
        assert!(l.ignorable(&err(Some("1213"), false)));
        assert!(l.ignorable(&err(Some("40P01"), false)));
        assert!(
            !l.ignorable(&err(Some("1205"), true)),
            "the list replaces the default"
        );
        let none = IgnoreErrors::parse("none").unwrap();
        assert!(!none.ignorable(&err(Some("1213"), true)));
        let all = IgnoreErrors::parse("all").unwrap();
        assert!(all.ignorable(&err(Some("1064"), false)));
        assert!(
            !all.ignorable(&err(None, false)),
            "a lost connection is never ignored"
        );
        assert!(IgnoreErrors::Default.ignorable(&err(Some("1213"), true)));
        assert!(IgnoreErrors::parse("12;13").is_err());
        assert!(IgnoreErrors::parse("1213,").is_err());
    }
}
