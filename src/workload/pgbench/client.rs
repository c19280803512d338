//! One pgbench client: a connection running one script a transaction, drawn by weight, its
//! commands in order (pgbench's doCustom without the state machine: a role runs on a thread
//! of its own). A serialization failure or deadlock is retried with the same random draws up
//! to --max-tries, then counted as a failed transaction, and the client goes on, as pgbench
//! 15's; any other error of the server fails the step.

use std::sync::atomic::{AtomicU64, Ordering::Relaxed};
use std::sync::Arc;
use std::time::{Duration, Instant};

use super::eval::{Env, Value, Var};
use super::expr::Symbols;
use super::prng::PgPrng;
use super::script::{Gset, Kind, Part, Script, Sleep};
use super::QueryMode;
use crate::dbms::{Conn, DbError, Dbms, Keep, Param, Rows, SqlDialect, StmtId};
use crate::runner::{ErrorClass, OpError, OpOutcome, Role};

/// What a `\gset` query may return: a row or a few, small.
const KEEP_GSET: Keep = Keep {
    rows: 100_000,
    value: 64 << 10,
    total: 16 << 20,
};

/// A command's count and time, for pgbench -r's latency per statement.
#[derive(Debug, Default)]
pub struct CommandStats {
    pub count: AtomicU64,
    pub ns: AtomicU64,
}

/// A script's transactions, as the clients count them.
#[derive(Debug, Default)]
pub struct ScriptStats {
    /// Transactions that ended without an error.
    pub ok: AtomicU64,
    /// SQL commands sent by those transactions.
    pub statements: AtomicU64,
    pub serialization_failures: AtomicU64,
    pub deadlock_failures: AtomicU64,
    /// Errors --ignore-errors lets the run go on after (a lock wait timeout, SQLite busy).
    pub other_failures: AtomicU64,
    /// Tries after the first, over all transactions.
    pub retries: AtomicU64,
    /// Transactions that needed more than one try.
    pub retried: AtomicU64,
    pub commands: Vec<CommandStats>,
}

/// What every client of a run step shares: the scripts and their counters.
#[derive(Debug)]
pub struct Shared {
    pub scripts: Vec<Script>,
    pub symbols: Symbols,
    pub stats: Vec<ScriptStats>,
    /// Connections made when the clients started (pgbench's initial connection time).
    pub initial_connect_ns: AtomicU64,
    pub initial_connects: AtomicU64,
    /// Connections made for a transaction (-C).
    pub connect_ns: AtomicU64,
    pub connects: AtomicU64,
}

impl Shared {
    pub fn new(scripts: Vec<Script>, symbols: Symbols) -> Shared {
        let stats = scripts
            .iter()
            .map(|s| ScriptStats {
                commands: s.commands.iter().map(|_| CommandStats::default()).collect(),
                ..ScriptStats::default()
            })
            .collect();
        Shared {
            scripts,
            symbols,
            stats,
            initial_connect_ns: AtomicU64::new(0),
            initial_connects: AtomicU64::new(0),
            connect_ns: AtomicU64::new(0),
            connects: AtomicU64::new(0),
        }
    }
}

/// When a client stops.
#[derive(Debug, Clone, Copy)]
pub enum Until {
    /// This long after its first transaction started.
    Time(Duration),
    /// This many transactions.
    Transactions(u64),
}

pub struct ClientSpec {
    pub scale: u64,
    /// pgbench's :client_id, from 0.
    pub client_id: u64,
    pub mode: QueryMode,
    pub until: Until,
    pub max_tries: u64,
    /// A new connection for each transaction (-C).
    pub connect: bool,
    pub seed: u64,
    /// :default_seed and :random_seed, the same on every client.
    pub default_seed: i64,
}

/// How a failed try is counted.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Failure {
    Serialization,
    Deadlock,
    /// Another error --ignore-errors lets the run go on after.
    Other,
}

/// Why a script stopped before its end.
enum Stopped {
    Db(DbError),
    /// An expression, a variable or a `\gset` that went wrong: the step fails.
    Script(String),
}

pub struct Client {
    dbms: Arc<dyn Dbms>,
    conn: Box<dyn Conn>,
    dialect: SqlDialect,
    shared: Arc<Shared>,
    spec: ClientSpec,
    vars: Vec<Option<Var>>,
    rng: PgPrng,
    choose: PgPrng,
    /// Per script and command, its statement on this connection (prepared mode).
    prepared: Vec<Vec<Option<StmtId>>>,
    sql: String,
    rows: Rows,
    done: u64,
    end: Option<Instant>,
}

impl Client {
    pub fn new(
        dbms: Arc<dyn Dbms>,
        shared: Arc<Shared>,
        spec: ClientSpec,
    ) -> anyhow::Result<Client> {
        let t0 = Instant::now();
        let conn = dbms.connect()?;
        shared
            .initial_connect_ns
            .fetch_add(t0.elapsed().as_nanos() as u64, Relaxed);
        shared.initial_connects.fetch_add(1, Relaxed);
        let mut vars = vec![None; shared.symbols.len()];
        let mut put = |name: &str, v: i64| {
            if let Some(s) = shared.symbols.find(name) {
                vars[s] = Some(Var::Value(Value::Int(v)));
            }
        };
        put("scale", spec.scale as i64);
        put("client_id", spec.client_id as i64);
        put("default_seed", spec.default_seed);
        put("random_seed", spec.default_seed);
        let prepared = shared
            .scripts
            .iter()
            .map(|s| vec![None; s.commands.len()])
            .collect();
        Ok(Client {
            dialect: dbms.dialect().sql(),
            dbms,
            conn,
            rng: PgPrng::seed(spec.seed),
            choose: PgPrng::seed(spec.seed ^ 0x5EED_C400_5E00),
            shared,
            spec,
            vars,
            prepared,
            sql: String::with_capacity(1024),
            rows: Rows::default(),
            done: 0,
            end: None,
        })
    }

    /// pgbench's chooseScript: a weighted draw.
    fn choose_script(&mut self) -> usize {
        let scripts = &self.shared.scripts;
        if scripts.len() == 1 {
            return 0;
        }
        let total: u64 = scripts.iter().map(|s| s.weight).sum();
        let mut w = self.choose.range(0, total - 1) as i64;
        for (i, s) in scripts.iter().enumerate() {
            w -= s.weight as i64;
            if w < 0 {
                return i;
            }
        }
        scripts.len() - 1
    }

    fn failure_of(&self, e: &DbError) -> Option<Failure> {
        let code = e.code.as_deref();
        match (self.dialect, code) {
            (SqlDialect::Postgres, Some("40001")) => Some(Failure::Serialization),
            (SqlDialect::Postgres, Some("40P01")) => Some(Failure::Deadlock),
            (SqlDialect::MySql(_), Some("1213")) => Some(Failure::Deadlock),
            _ if e.transient => Some(Failure::Other),
            _ => None,
        }
    }

    /// Runs script `s` once: Ok with the SQL commands it sent.
    fn run_script(&mut self, s: usize) -> Result<u64, Stopped> {
        let shared = self.shared.clone();
        let script = &shared.scripts[s];
        let mut sent = 0;
        let mut pc = 0;
        while pc < script.commands.len() {
            let cmd = &script.commands[pc];
            let t0 = Instant::now();
            let here = |e: String| Stopped::Script(format!("{}:{}: {e}", script.name, cmd.line));
            let mut next = pc + 1;
            match &cmd.kind {
                Kind::Sql { parts, gset } => {
                    self.sql_command(s, pc, parts, gset.as_ref())
                        .map_err(|e| match e {
                            Stopped::Script(m) => here(m),
                            db => db,
                        })?;
                    sent += 1;
                }
                Kind::Set { slot, expr } => {
                    let v = self.env(s, pc).eval(expr).map_err(here)?;
                    self.vars[*slot] = Some(Var::Value(v));
                }
                Kind::Sleep(sleep) => {
                    let us = match sleep {
                        Sleep::Micros(us) => *us,
                        Sleep::Var { slot, per_unit } => {
                            let v = self.var_value(*slot).map_err(here)?.int().map_err(here)?;
                            (v.max(0) as u64).saturating_mul(*per_unit)
                        }
                    };
                    std::thread::sleep(Duration::from_micros(us));
                }
                Kind::If { expr, next: to } => {
                    if !self.env(s, pc).eval(expr).map_err(here)?.truth() {
                        next = self.branch(s, *to).map_err(here)?;
                    }
                }
                Kind::Elif { end, .. } | Kind::Else { end } => next = end + 1,
                Kind::Endif => {}
            }
            let st = &shared.stats[s].commands[pc];
            st.count.fetch_add(1, Relaxed);
            st.ns.fetch_add(t0.elapsed().as_nanos() as u64, Relaxed);
            pc = next;
        }
        Ok(sent)
    }

    /// Where a false `\if` or `\elif` goes on: the first `\elif` of the chain that holds, the
    /// `\else`, or the `\endif`.
    fn branch(&mut self, s: usize, mut at: usize) -> Result<usize, String> {
        let shared = self.shared.clone();
        loop {
            match &shared.scripts[s].commands[at].kind {
                Kind::Elif { expr, next, .. } => {
                    if self.env(s, at).eval(expr)?.truth() {
                        return Ok(at + 1);
                    }
                    at = *next;
                }
                _ => return Ok(at + 1),
            }
        }
    }

    fn env(&mut self, s: usize, pc: usize) -> Env<'_> {
        Env {
            vars: &self.vars,
            names: &self.shared.symbols,
            rng: &mut self.rng,
            at: (s, pc + 1),
        }
    }

    fn var_value(&self, slot: usize) -> Result<Value, String> {
        match &self.vars[slot] {
            Some(v) => v.value(),
            None => Err(format!(
                "undefined variable \"{}\"",
                self.shared.symbols.name(slot)
            )),
        }
    }

    fn sql_command(
        &mut self,
        s: usize,
        pc: usize,
        parts: &[Part],
        gset: Option<&Gset>,
    ) -> Result<(), Stopped> {
        // Rows kept for \gset travel as text in every mode: dbperf's prepared statements
        // return no values.
        if self.spec.mode == QueryMode::Simple || gset.is_some() || self.control(parts) {
            self.sql.clear();
            for p in parts {
                match p {
                    Part::Text(t) => self.sql.push_str(t),
                    Part::Var { slot, name } => match &self.vars[*slot] {
                        Some(v) => self.sql.push_str(&v.text()),
                        // pgbench leaves an unknown :name as it is.
                        None => {
                            self.sql.push(':');
                            self.sql.push_str(name);
                        }
                    },
                }
            }
            return match gset {
                None => self
                    .conn
                    .run_text(&self.sql)
                    .map(|_| ())
                    .map_err(Stopped::Db),
                Some(g) => {
                    self.conn
                        .text_rows(&self.sql, KEEP_GSET, &mut self.rows)
                        .map_err(Stopped::Db)?;
                    self.assign(g).map_err(Stopped::Script)
                }
            };
        }
        let stmt = match self.prepared[s][pc] {
            Some(st) => st,
            None => {
                let mut n = 0;
                let text: String = parts
                    .iter()
                    .map(|p| match p {
                        Part::Text(t) => t.clone(),
                        Part::Var { .. } => {
                            n += 1;
                            self.dbms.dialect().placeholder(n)
                        }
                    })
                    .collect();
                let st = self.conn.prepare(&text).map_err(Stopped::Db)?;
                self.prepared[s][pc] = Some(st);
                st
            }
        };
        let mut values = Vec::new();
        for p in parts {
            if let Part::Var { slot, .. } = p {
                let v = self.var_value(*slot).map_err(Stopped::Script)?;
                values.push(v);
            }
        }
        let texts: Vec<String> = values.iter().map(|v| v.text()).collect();
        let params: Vec<Param> = values
            .iter()
            .zip(&texts)
            .map(|(v, t)| match v {
                Value::Int(i) => Param::Int(*i),
                _ => Param::Text(t),
            })
            .collect();
        self.conn
            .query(stmt, &params)
            .map(|_| ())
            .map_err(Stopped::Db)
    }

    /// Transaction control on the MySQL family goes as text: its server prepares no BEGIN.
    fn control(&self, parts: &[Part]) -> bool {
        match self.dialect {
            SqlDialect::MySql(_) => {}
            SqlDialect::Postgres | SqlDialect::Sqlite | SqlDialect::Null => return false,
        }
        let Some(Part::Text(t)) = parts.first() else {
            return false;
        };
        let word = t
            .trim_start()
            .split(|c: char| !c.is_ascii_alphabetic())
            .next();
        word.is_some_and(|w| {
            ["begin", "commit", "end", "rollback", "start"]
                .iter()
                .any(|k| w.eq_ignore_ascii_case(k))
        })
    }

    /// The rows of a `\gset` (exactly one) or `\aset` (each, the last winning) into variables.
    fn assign(&mut self, g: &Gset) -> Result<(), String> {
        let n = self.rows.len();
        if !g.all && n != 1 {
            return Err(format!("\\gset expected one row, got {n}"));
        }
        for r in 0..n {
            for (c, &slot) in g.columns.iter().enumerate() {
                self.vars[slot] = Some(match self.rows.get(r, c) {
                    Some(v) => Var::Text(String::from_utf8_lossy(v).into_owned()),
                    None => Var::Value(Value::Null),
                });
            }
        }
        Ok(())
    }

    fn reconnect(&mut self) -> Result<(), OpError> {
        let t0 = Instant::now();
        let conn = self.dbms.connect().map_err(|e| OpError {
            kind: 0,
            class: ErrorClass::Failed,
            cause: None,
            message: format!("connecting for a transaction (--connect): {e:#}"),
        })?;
        self.conn = conn;
        for p in &mut self.prepared {
            p.iter_mut().for_each(|x| *x = None);
        }
        let sh = &self.shared;
        sh.connect_ns
            .fetch_add(t0.elapsed().as_nanos() as u64, Relaxed);
        sh.connects.fetch_add(1, Relaxed);
        Ok(())
    }

    fn finished(&mut self) -> bool {
        match self.spec.until {
            Until::Transactions(n) => self.done >= n,
            Until::Time(d) => {
                let now = Instant::now();
                now >= *self.end.get_or_insert(now + d)
            }
        }
    }
}

impl Role for Client {
    fn op(&mut self) -> Result<OpOutcome, OpError> {
        if self.finished() {
            return Ok(OpOutcome::Finished);
        }
        self.done += 1;
        let s = self.choose_script();
        if self.spec.connect {
            self.reconnect().map_err(|e| OpError { kind: s, ..e })?;
        }
        let start_rng = self.rng;
        let shared = self.shared.clone();
        let stats = &shared.stats[s];
        let mut tries = 1;
        loop {
            let r = self.run_script(s);
            let e = match r {
                Ok(sent) => {
                    stats.ok.fetch_add(1, Relaxed);
                    stats.statements.fetch_add(sent, Relaxed);
                    if tries > 1 {
                        stats.retried.fetch_add(1, Relaxed);
                    }
                    return Ok(OpOutcome::Done { kind: s, rows: 1 });
                }
                Err(Stopped::Script(message)) => {
                    return Err(OpError {
                        kind: s,
                        class: ErrorClass::Failed,
                        cause: None,
                        message,
                    })
                }
                Err(Stopped::Db(e)) => e,
            };
            let Some(failure) = self.failure_of(&e) else {
                return Err(OpError {
                    kind: s,
                    class: ErrorClass::Failed,
                    cause: Some(e.as_cause()),
                    message: e.message,
                });
            };
            // The transaction is over either way: a retry starts a new one.
            let _ = self.conn.run_text("ROLLBACK");
            let retry = matches!(failure, Failure::Serialization | Failure::Deadlock)
                && tries < self.spec.max_tries;
            if retry {
                tries += 1;
                stats.retries.fetch_add(1, Relaxed);
                self.rng = start_rng;
                continue;
            }
            if tries > 1 {
                stats.retried.fetch_add(1, Relaxed);
            }
            let counter = match failure {
                Failure::Serialization => &stats.serialization_failures,
                Failure::Deadlock => &stats.deadlock_failures,
                Failure::Other => &stats.other_failures,
            };
            counter.fetch_add(1, Relaxed);
            return Err(OpError {
                kind: s,
                class: ErrorClass::Ignored,
                cause: None,
                message: e.message,
            });
        }
    }
}
