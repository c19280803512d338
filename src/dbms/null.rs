//! The hidden `null` target: a DBMS that answers every statement at once, or with a scripted
//! latency, error, panic or stall, so tests of the run loop (campaigns, resume, failures) finish
//! in milliseconds. Not listed among the engines; never a benchmark result.
//!
//! Its config is the script, actions joined by '.': `null:sleep-2ms.fail-at-500` sleeps 2 ms per
//! operation and fails the 500th operation of the target (counted over every connection).

use crate::engines::Engine;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;

use super::{Conn, DbError, Dbms, Dialect, Keep, Param, Rows, SqlDialect, StmtId, Timeouts};
use crate::error::bad_input;

#[derive(Debug, Clone, Default, PartialEq)]
pub struct Script {
    pub sleep: Duration,
    /// The Nth operation fails with a fatal error.
    pub fail_at: Option<u64>,
    /// Every Nth operation fails with a transient error (a lock conflict).
    pub transient_every: Option<u64>,
    /// The Nth operation panics.
    pub panic_at: Option<u64>,
    /// The Nth operation gets no answer (a server that stopped answering): it waits the
    /// statement timeout and fails as a connection to a stalled server does.
    pub stall_at: Option<u64>,
    /// The Nth operation hangs for an hour, deaf to timeouts, and the target stops answering
    /// (a client thread stuck where no socket deadline reaches: the step watchdog's case).
    pub hang_at: Option<u64>,
    /// The Nth operation hangs for an hour, deaf to timeouts, while the target still answers
    /// new connections (a server that keeps a statement going: the watchdog's limit on one
    /// operation is what ends it).
    pub wedge_at: Option<u64>,
    /// Connecting fails.
    pub refuse_connections: bool,
    /// The post-load maintenance changes two settings, then fails (as a lost connection part
    /// way through InnoDB's cleanup would): both must still be put back.
    pub cleanup_fail: bool,
    /// Putting back the first of those settings fails: the second must be put back anyway.
    pub restore_fail: bool,
    /// The post-load maintenance gets no answer: it fails after the statement timeout as a
    /// statement to a stalled server does (`Fault::NoAnswer`).
    pub cleanup_stall: bool,
}

/// The settings the null target "changes" in its post-load maintenance, with the statements
/// that put them back, in the order to run them.
pub const NULL_RESTORE: [&str; 2] = ["SET GLOBAL null_b = 2", "SET GLOBAL null_a = 1"];

fn number(action: &str, prefix: &str) -> Option<u64> {
    action.strip_prefix(prefix)?.parse().ok()
}

impl Script {
    pub fn parse(config: &str) -> anyhow::Result<Script> {
        let mut s = Script::default();
        for a in config.split('.').filter(|a| !a.is_empty()) {
            if a == "instant" {
            } else if let Some(n) = a.strip_prefix("sleep-").and_then(|r| r.strip_suffix("ms")) {
                s.sleep = Duration::from_millis(n.parse().unwrap_or(0));
            } else if let Some(n) = a.strip_prefix("sleep-").and_then(|r| r.strip_suffix("us")) {
                s.sleep = Duration::from_micros(n.parse().unwrap_or(0));
            } else if let Some(n) = number(a, "fail-at-") {
                s.fail_at = Some(n);
            } else if let Some(n) = number(a, "transient-every-") {
                s.transient_every = Some(n.max(1));
            } else if let Some(n) = number(a, "panic-at-") {
                s.panic_at = Some(n);
            } else if let Some(n) = number(a, "stall-at-") {
                s.stall_at = Some(n);
            } else if let Some(n) = number(a, "hang-at-") {
                s.hang_at = Some(n);
            } else if let Some(n) = number(a, "wedge-at-") {
                s.wedge_at = Some(n);
            } else if a == "refuse" {
                s.refuse_connections = true;
            } else if a == "cleanup-fail" {
                s.cleanup_fail = true;
            } else if a == "restore-fail" {
                s.restore_fail = true;
            } else if a == "cleanup-stall" {
                s.cleanup_stall = true;
            } else {
                return bad_input(format!(
                    "null target: unknown action '{a}' (instant, sleep-<N>ms, sleep-<N>us, \
                     fail-at-<N>, transient-every-<N>, panic-at-<N>, stall-at-<N>, hang-at-<N>, \
                     wedge-at-<N>, refuse, cleanup-fail, restore-fail, cleanup-stall)"
                ));
            }
        }
        Ok(s)
    }
}

pub struct Null {
    config: String,
    script: Script,
    ops: Arc<AtomicU64>,
    timeouts: Timeouts,
    hung: Arc<AtomicBool>,
}

impl Null {
    pub fn open(config: &str) -> anyhow::Result<Null> {
        Ok(Null {
            config: config.to_string(),
            script: Script::parse(config)?,
            ops: Arc::new(AtomicU64::new(0)),
            timeouts: Timeouts::default(),
            hung: Arc::new(AtomicBool::new(false)),
        })
    }

    pub fn with_timeouts(mut self, timeouts: Timeouts) -> Null {
        self.timeouts = timeouts;
        self
    }
}

struct NullConn {
    script: Script,
    ops: Arc<AtomicU64>,
    stmts: usize,
    timeouts: Timeouts,
    hung: Arc<AtomicBool>,
}

impl NullConn {
    fn op(&mut self) -> Result<(), DbError> {
        let n = self.ops.fetch_add(1, Ordering::Relaxed) + 1;
        if !self.script.sleep.is_zero() {
            std::thread::sleep(self.script.sleep);
        }
        if self.script.panic_at == Some(n) {
            panic!("null target: scripted panic at operation {n}");
        }
        if self.script.hang_at == Some(n) {
            self.hung.store(true, Ordering::SeqCst);
            std::thread::sleep(Duration::from_secs(3600));
        }
        if self.script.wedge_at == Some(n) {
            std::thread::sleep(Duration::from_secs(3600));
        }
        if self.script.stall_at == Some(n) {
            return Err(stall(self.timeouts.statement));
        }
        if self.script.fail_at == Some(n) {
            return Err(DbError {
                message: format!("null target: scripted failure at operation {n}"),
                transient: false,
                code: None,
                fault: None,
                lost: None,
            });
        }
        if self
            .script
            .transient_every
            .is_some_and(|e| n.is_multiple_of(e))
        {
            return Err(DbError {
                message: format!("null target: scripted lock conflict at operation {n}"),
                transient: true,
                // SQL's serialization failure, so --ignore-errors can name it.
                code: Some("40001".into()),
                fault: None,
                lost: None,
            });
        }
        Ok(())
    }
}

/// Waits `statement` and fails as a statement to a server that stopped answering does.
fn stall(statement: Duration) -> DbError {
    std::thread::sleep(statement);
    DbError {
        message: super::no_answer(statement),
        transient: false,
        code: None,
        fault: Some(super::Fault::NoAnswer),
        lost: None,
    }
}

impl Conn for NullConn {
    fn execute_batch(&mut self, sql: &str) -> Result<(), DbError> {
        if self.script.restore_fail && sql == NULL_RESTORE[0] {
            return Err(DbError {
                message: "null target: scripted failure restoring a setting".into(),
                transient: false,
                code: None,
                fault: None,
                lost: None,
            });
        }
        Ok(())
    }

    fn prepare(&mut self, _sql: &str) -> Result<StmtId, DbError> {
        self.stmts += 1;
        Ok(self.stmts - 1)
    }

    fn execute(&mut self, _stmt: StmtId, params: &[Param]) -> Result<u64, DbError> {
        self.op()?;
        Ok(params.len().max(1) as u64)
    }

    fn query(&mut self, _stmt: StmtId, _params: &[Param]) -> Result<u64, DbError> {
        self.op()?;
        Ok(1)
    }

    fn query_i64(&mut self, _sql: &str) -> Result<Option<i64>, DbError> {
        // Tables and indexes exist, counts and minimums are 1.
        Ok(Some(1))
    }

    fn run_text(&mut self, _sql: &str) -> Result<u64, DbError> {
        self.op()?;
        Ok(1)
    }

    fn text_rows(&mut self, _sql: &str, keep: Keep, out: &mut Rows) -> Result<u64, DbError> {
        // No rows: the null target has no data to read back.
        out.start(keep);
        self.op()?;
        Ok(0)
    }
}

pub struct NullDialect;

impl Dialect for NullDialect {
    fn sql(&self) -> SqlDialect {
        SqlDialect::Null
    }
    fn placeholder(&self, _i: usize) -> String {
        "?".into()
    }
    fn table_exists_sql(&self, table: &str) -> String {
        format!("SELECT 1 FROM {table}")
    }
    fn index_exists_sql(&self, _table: &str, _index: &str) -> String {
        "SELECT 1".into()
    }
}

impl Dbms for Null {
    fn engine(&self) -> Engine {
        Engine::Null
    }

    fn connect(&self) -> anyhow::Result<Box<dyn Conn>> {
        if self.script.refuse_connections {
            anyhow::bail!("null target: scripted refusal to connect");
        }
        Ok(Box::new(NullConn {
            script: self.script.clone(),
            ops: self.ops.clone(),
            stmts: 0,
            timeouts: self.timeouts.clone(),
            hung: self.hung.clone(),
        }))
    }

    fn version(&self) -> anyhow::Result<String> {
        Ok("null (dbperf's test target)".into())
    }

    fn config_name(&self) -> &str {
        &self.config
    }

    fn config_text(&self) -> anyhow::Result<String> {
        Ok(format!("{:?}", self.script))
    }

    fn dialect(&self) -> &dyn Dialect {
        &NullDialect
    }

    fn answers(&self, _within: Duration) -> bool {
        !self.hung.load(Ordering::SeqCst)
    }

    fn maintain_after_load(
        &self,
        _tables: &[String],
        _deadline: std::time::Instant,
        done: &mut Vec<String>,
        restore: &mut Vec<String>,
    ) -> Result<(), DbError> {
        if self.script.cleanup_stall {
            return Err(stall(self.timeouts.statement));
        }
        if self.script.cleanup_fail {
            for sql in NULL_RESTORE.iter().rev() {
                done.push(sql.replace(" = 1", " = 0").replace(" = 2", " = 0"));
                restore.insert(0, sql.to_string());
            }
            return Err(DbError {
                message: "null target: scripted failure part way through the cleanup".into(),
                transient: false,
                code: None,
                fault: None,
                lost: None,
            });
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn scripts_parse_and_refuse_typos() {
        let s = Script::parse("sleep-2ms.fail-at-500.transient-every-7").unwrap();
        assert_eq!(s.sleep, Duration::from_millis(2));
        assert_eq!((s.fail_at, s.transient_every), (Some(500), Some(7)));
        assert!(Script::parse("fial-at-3").is_err());
    }

    #[test]
    fn the_nth_operation_fails_over_all_connections() {
        let d = Null::open("fail-at-3").unwrap();
        let mut a = d.connect().unwrap();
        let mut b = d.connect().unwrap();
        assert!(a.execute(0, &[]).is_ok());
        assert!(b.execute(0, &[]).is_ok());
        let e = a.query(0, &[]).unwrap_err();
        assert!(!e.transient && e.message.contains("operation 3"));
        assert!(b.execute(0, &[]).is_ok());
    }
}
