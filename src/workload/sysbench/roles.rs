//! The connections of the sysbench suite: the loader (sysbench's `prepare`) and the event
//! runner, one per thread, that executes a microbenchmark's events back to back (closed loop) as
//! sysbench's worker threads do.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Instant;

use super::catalog::{Arg, Counter, Microbenchmark, TableChoice};
use super::keys::{digit_groups, KeyGen, C_GROUPS, PAD_GROUPS};
use crate::dbms::{Conn, DbError, Dbms, Dialect, Param, StmtId};
use crate::runner::{ErrorClass, OpError, OpOutcome, Role};
use crate::workload::common::rand::{below, Rand};
pub use crate::workload::common::stop::Stop;

/// Operation types, indexes into `KINDS`.
pub const EVENT: usize = 0;
pub const WARMUP: usize = 1;
pub const INSERT: usize = 2;
pub const INDEX: usize = 3;
pub const KINDS: [&str; 4] = ["event", "warmup", "insert", "index"];

/// How a statement is sent.
#[derive(Debug, Clone)]
pub enum Exec {
    Prepared(StmtId),
    /// SQL text in pieces around the parameters (one more piece than parameters); the values
    /// are written in as literals each time.
    Text(Vec<String>),
}

/// A statement's SQL for one table, with `?` for each parameter in order (args first, then the
/// IN-list), before the engine's placeholders are put in.
pub fn expand(sql: &str, table: &str, list_len: usize, names_id: bool) -> String {
    let list = vec!["?"; list_len].join(", ");
    sql.replace("{t}", table)
        .replace("{list}", &list)
        .replace("{idcol}", if names_id { "id, " } else { "" })
        .replace("{idval}", if names_id { "0, " } else { "" })
}

/// `?`s replaced by the engine's placeholders: what is prepared.
pub fn with_placeholders(sql: &str, d: &dyn Dialect) -> String {
    let mut out = String::with_capacity(sql.len() + 16);
    let mut i = 0;
    for (n, piece) in sql.split('?').enumerate() {
        if n > 0 {
            i += 1;
            out.push_str(&d.placeholder(i));
        }
        out.push_str(piece);
    }
    out
}

/// Prepares `sql` (in `?` form) or keeps it as text pieces.
pub fn compile(
    conn: &mut dyn Conn,
    d: &dyn Dialect,
    sql: &str,
    text: bool,
) -> Result<Exec, DbError> {
    if text {
        return Ok(Exec::Text(sql.split('?').map(str::to_string).collect()));
    }
    Ok(Exec::Prepared(conn.prepare(&with_placeholders(sql, d))?))
}

/// A statement of an event, compiled for every table.
pub struct CStmt {
    per_table: Vec<Exec>,
    args: &'static [Arg],
    list: Option<(Arg, usize)>,
    counter: Counter,
}

pub struct CBlock {
    repeat: u32,
    stmts: Vec<CStmt>,
}

/// Everything a runner needs besides its connection, prepared before the step.
#[derive(Clone)]
pub struct RunnerSpec {
    pub bench: &'static Microbenchmark,
    pub tables: Vec<String>,
    pub rows: u64,
    pub range: u64,
    pub prepared: bool,
    pub keys: KeyGen,
    pub stop: Stop,
    /// 0-based thread number (oltp_scan's table is thread mod tables).
    pub thread: u64,
    /// Statements completed within events that then failed (they count as queries, as in
    /// sysbench).
    pub partial: Arc<AtomicU64>,
}

pub struct Runner {
    conn: Box<dyn Conn>,
    blocks: Vec<CBlock>,
    begin: Option<Exec>,
    commit: Option<Exec>,
    st: State,
}

/// The runner's mutable state, apart from the compiled plan so both can be borrowed at once.
struct State {
    rng: Rand,
    keys: KeyGen,
    range: i64,
    hot_base: i64,
    ntables: u64,
    fixed_table: Option<usize>,
    stop: Stop,
    clock: Option<(Instant, Instant)>,
    events: u64,
    last_key: i64,
    ints: Vec<i64>,
    c: String,
    pad: String,
    int_params: Vec<Param<'static>>,
    sql: String,
    partial: Arc<AtomicU64>,
}

impl Runner {
    pub fn new(dbms: Arc<dyn Dbms>, spec: RunnerSpec, rng: Rand) -> anyhow::Result<Runner> {
        let mut conn = dbms.connect()?;
        let d = dbms.dialect();
        let names_id = super::sql::insert_names_id(d.sql());
        let b = spec.bench;
        if b.reads_whole_tables() {
            conn.set_budget(crate::dbms::Budget::Long);
        }
        let mut blocks = Vec::new();
        for block in b.blocks {
            let mut stmts = Vec::new();
            for s in block.stmts {
                let list_len = match (s.list, s.list_len) {
                    (None, _) => 0,
                    (Some(_), Some(n)) => n as usize,
                    (Some(_), None) => spec.range as usize,
                };
                let mut per_table = Vec::with_capacity(spec.tables.len());
                for t in &spec.tables {
                    let sql = expand(s.sql, t, list_len, names_id);
                    per_table.push(compile(conn.as_mut(), d, &sql, s.text || !spec.prepared)?);
                }
                stmts.push(CStmt {
                    per_table,
                    args: s.args,
                    list: s.list.map(|a| (a, list_len)),
                    counter: s.counter,
                });
            }
            blocks.push(CBlock {
                repeat: block.repeat,
                stmts,
            });
        }
        // sysbench prepares BEGIN and COMMIT too; its MySQL driver falls back to text where the
        // server cannot prepare a statement, and so does dbperf.
        let (begin, commit) = if b.trx {
            let mut tx = |sql: &str| -> Result<Exec, DbError> {
                if !spec.prepared {
                    return compile(conn.as_mut(), d, sql, true);
                }
                compile(conn.as_mut(), d, sql, false)
                    .or_else(|_| compile(conn.as_mut(), d, sql, true))
            };
            (Some(tx("BEGIN")?), Some(tx("COMMIT")?))
        } else {
            (None, None)
        };
        let ntables = spec.tables.len() as u64;
        let fixed_table = match b.tables {
            TableChoice::Random => None,
            TableChoice::ThreadModTables => Some((spec.thread % ntables) as usize),
        };
        Ok(Runner {
            conn,
            blocks,
            begin,
            commit,
            st: State {
                rng,
                keys: spec.keys,
                range: spec.range as i64,
                hot_base: (spec.rows / 2) as i64,
                ntables,
                fixed_table,
                stop: spec.stop,
                clock: None,
                events: 0,
                last_key: 0,
                ints: Vec::new(),
                c: String::with_capacity(128),
                pad: String::with_capacity(64),
                int_params: Vec::new(),
                sql: String::new(),
                partial: spec.partial,
            },
        })
    }
}

/// Values generated for one statement: integers, and whether `c` / `pad` are used (their text
/// is in the state's buffers).
#[derive(Clone, Copy)]
enum V {
    Int(i64),
    C,
    Pad,
}

impl State {
    #[inline]
    fn value(&mut self, a: Arg, pos: usize) -> V {
        match a {
            Arg::Key => {
                self.last_key = self.keys.next(&mut self.rng);
                V::Int(self.last_key)
            }
            Arg::KeyPlusRangeMinus1 => V::Int(self.last_key + self.range - 1),
            Arg::KeyPlusRange => V::Int(self.last_key + self.range),
            Arg::LastKey => V::Int(self.last_key),
            Arg::Hot => V::Int(self.hot_base + pos as i64 + 1),
            Arg::C => {
                digit_groups(&mut self.rng, C_GROUPS, &mut self.c);
                V::C
            }
            Arg::Pad => {
                digit_groups(&mut self.rng, PAD_GROUPS, &mut self.pad);
                V::Pad
            }
        }
    }

    fn table(&mut self) -> usize {
        match self.fixed_table {
            Some(t) => t,
            None if self.ntables == 1 => 0,
            None => below(&mut self.rng, self.ntables) as usize,
        }
    }
}

/// Statements with up to this many parameters bind them from an array on the stack.
const MAX_STACK_PARAMS: usize = 16;

fn run_stmt(
    conn: &mut dyn Conn,
    exec: &Exec,
    counter: Counter,
    params: &[Param],
    sql: &mut String,
) -> Result<u64, DbError> {
    match exec {
        Exec::Prepared(id) => match counter {
            Counter::Read => conn.query(*id, params),
            _ => conn.execute(*id, params),
        },
        Exec::Text(pieces) => {
            sql.clear();
            for (i, piece) in pieces.iter().enumerate() {
                if i > 0 {
                    literal(sql, &params[i - 1]);
                }
                sql.push_str(piece);
            }
            conn.run_text(sql)
        }
    }
}

/// A parameter as an SQL literal (the values are digits and '-', but quotes are escaped anyway).
fn literal(out: &mut String, p: &Param) {
    use std::fmt::Write;
    match *p {
        Param::Int(v) => {
            let _ = write!(out, "{v}");
        }
        Param::Text(s) | Param::DateTime(s) => {
            out.push('\'');
            for ch in s.chars() {
                if ch == '\'' {
                    out.push('\'');
                }
                out.push(ch);
            }
            out.push('\'');
        }
    }
}

/// Runs one statement with freshly generated values.
fn statement(
    conn: &mut dyn Conn,
    st: &mut State,
    s: &CStmt,
    table: usize,
    vals: &mut [V; MAX_STACK_PARAMS],
) -> Result<u64, DbError> {
    let exec = &s.per_table[table];
    let list_len = s.list.map(|(_, n)| n).unwrap_or(0);
    let n = s.args.len() + list_len;
    if n <= MAX_STACK_PARAMS {
        for (i, &a) in s.args.iter().enumerate() {
            vals[i] = st.value(a, i);
        }
        if let Some((a, len)) = s.list {
            for j in 0..len {
                vals[s.args.len() + j] = st.value(a, j);
            }
        }
        let mut params = [Param::Int(0); MAX_STACK_PARAMS];
        for (p, v) in params.iter_mut().zip(vals.iter()).take(n) {
            *p = match *v {
                V::Int(x) => Param::Int(x),
                V::C => Param::Text(&st.c),
                V::Pad => Param::Text(&st.pad),
            };
        }
        return run_stmt(conn, exec, s.counter, &params[..n], &mut st.sql);
    }
    // Long IN-lists: integers only in every catalog row, in one reused vector.
    let mut ints = std::mem::take(&mut st.ints);
    ints.clear();
    let mut strings = Vec::new();
    for (i, &a) in s.args.iter().enumerate() {
        match st.value(a, i) {
            V::Int(x) => ints.push(x),
            v => strings.push((i, v)),
        }
    }
    if let Some((a, len)) = s.list {
        for j in 0..len {
            match st.value(a, j) {
                V::Int(x) => ints.push(x),
                v => strings.push((s.args.len() + j, v)),
            }
        }
    }
    let result = if strings.is_empty() {
        let mut params = std::mem::take(&mut st.int_params);
        params.clear();
        params.extend(ints.iter().map(|&x| Param::Int(x)));
        let r = run_stmt(conn, exec, s.counter, &params, &mut st.sql);
        st.int_params = params;
        r
    } else {
        // Not reached by the catalog; correct, if allocating, for a future row that mixes text
        // parameters with a long list.
        let mut params: Vec<Param> = ints.iter().map(|&x| Param::Int(x)).collect();
        for (at, v) in strings {
            let p = match v {
                V::C => Param::Text(&st.c),
                _ => Param::Text(&st.pad),
            };
            params.insert(at, p);
        }
        let mut sql = std::mem::take(&mut st.sql);
        let r = run_stmt(conn, exec, s.counter, &params, &mut sql);
        st.sql = sql;
        r
    };
    st.ints = ints;
    result
}

impl Runner {
    /// One event: BEGIN, every block on its table, COMMIT. Returns rows fetched or changed, or
    /// the error and how many statements had completed before it.
    fn event(&mut self) -> Result<u64, (DbError, u64)> {
        let Runner {
            conn,
            blocks,
            begin,
            commit,
            st,
            ..
        } = self;
        let conn = conn.as_mut();
        let mut done = 0u64;
        let mut rows = 0u64;
        let mut vals = [V::Int(0); MAX_STACK_PARAMS];
        if let Some(b) = begin {
            run_stmt(conn, b, Counter::Other, &[], &mut st.sql).map_err(|e| (e, done))?;
            done += 1;
        }
        for block in blocks.iter() {
            let table = st.table();
            for _ in 0..block.repeat {
                for s in &block.stmts {
                    rows += statement(conn, st, s, table, &mut vals).map_err(|e| (e, done))?;
                    done += 1;
                }
            }
        }
        if let Some(c) = commit {
            run_stmt(conn, c, Counter::Other, &[], &mut st.sql).map_err(|e| (e, done))?;
        }
        Ok(rows)
    }
}

impl Role for Runner {
    fn op(&mut self) -> Result<OpOutcome, OpError> {
        let kind = match self.st.stop {
            Stop::Events(n) => {
                if self.st.events >= n {
                    return Ok(OpOutcome::Finished);
                }
                EVENT
            }
            Stop::Time { warmup, run } => {
                let now = Instant::now();
                let (warm_until, end) = *self
                    .st
                    .clock
                    .get_or_insert_with(|| (now + warmup, now + warmup + run));
                if now >= end {
                    return Ok(OpOutcome::Finished);
                }
                // An event belongs to the phase it started in.
                if now < warm_until {
                    WARMUP
                } else {
                    EVENT
                }
            }
        };
        self.st.events += 1;
        match self.event() {
            Ok(rows) => Ok(OpOutcome::Done { kind, rows }),
            Err((e, done)) => {
                // The transient errors (deadlocks, lock wait timeouts, serialization
                // failures), as --ignore-errors decides them: sysbench rolls back and
                // restarts the event instead of stopping.
                let ignorable = e.transient;
                if ignorable {
                    if kind == EVENT {
                        self.st.partial.fetch_add(done, Ordering::Relaxed);
                    }
                    if self.begin.is_some() {
                        // As sysbench: roll back and go on with a new event. A failure here
                        // shows in the next event.
                        let _ = self.conn.run_text("ROLLBACK");
                    }
                }
                Err(OpError {
                    kind,
                    // As sysbench: the event is rolled back and a new one started.
                    class: if ignorable {
                        ErrorClass::Retried
                    } else {
                        ErrorClass::Failed
                    },
                    cause: (!ignorable).then(|| e.as_cause()),
                    message: e.message,
                })
            }
        }
    }
}

/// sysbench's `prepare`: every table created, filled with `rows` rows in multi-row INSERTs
/// (autocommit), then its index on `k` built, one table after another on one connection.
pub struct Loader {
    conn: Box<dyn Conn>,
    dbms: Arc<dyn Dbms>,
    tables: Vec<String>,
    rows: u64,
    batch: u64,
    rng: Rand,
    keys: KeyGen,
    primary_key: bool,
    /// (table index, rows loaded into it, its index built)
    at: (usize, u64, bool),
    /// (rows per statement, statement) for the current table.
    stmts: Vec<(u64, StmtId)>,
    cs: Vec<String>,
    pads: Vec<String>,
    ks: Vec<i64>,
}

impl Loader {
    pub fn new(
        dbms: Arc<dyn Dbms>,
        tables: Vec<String>,
        rows: u64,
        batch: u64,
        keys: KeyGen,
        primary_key: bool,
        rng: Rand,
    ) -> anyhow::Result<Loader> {
        let mut conn = dbms.connect()?;
        // Loads may take long (docs/reliability.md): bounded by --ddl-timeout.
        conn.set_budget(crate::dbms::Budget::Long);
        Ok(Loader {
            conn,
            dbms,
            tables,
            rows,
            batch,
            rng,
            keys,
            primary_key,
            at: (0, 0, false),
            stmts: Vec::new(),
            cs: Vec::new(),
            pads: Vec::new(),
            ks: Vec::new(),
        })
    }

    fn stmt(&mut self, table: &str, n: u64) -> Result<StmtId, DbError> {
        if let Some(&(_, id)) = self.stmts.iter().find(|(k, _)| *k == n) {
            return Ok(id);
        }
        let mut sql = format!("INSERT INTO {table}(k, c, pad) VALUES ");
        for r in 0..n {
            if r > 0 {
                sql.push(',');
            }
            sql.push_str("(?, ?, ?)");
        }
        let sql = with_placeholders(&sql, self.dbms.dialect());
        let id = self.conn.prepare(&sql)?;
        self.stmts.push((n, id));
        Ok(id)
    }

    fn insert(&mut self, table: usize, n: u64) -> Result<u64, DbError> {
        let name = self.tables[table].clone();
        let id = self.stmt(&name, n)?;
        let n = n as usize;
        self.cs.resize_with(n, String::new);
        self.pads.resize_with(n, String::new);
        self.ks.clear();
        for i in 0..n {
            self.ks.push(self.keys.next(&mut self.rng));
            digit_groups(&mut self.rng, C_GROUPS, &mut self.cs[i]);
            digit_groups(&mut self.rng, PAD_GROUPS, &mut self.pads[i]);
        }
        let mut params = Vec::with_capacity(n * 3);
        for i in 0..n {
            params.extend_from_slice(&[
                Param::Int(self.ks[i]),
                Param::Text(&self.cs[i]),
                Param::Text(&self.pads[i]),
            ]);
        }
        self.conn.execute(id, &params)
    }
}

fn fatal(kind: usize, e: DbError) -> OpError {
    OpError {
        kind,
        class: ErrorClass::Failed,
        cause: Some(e.as_cause()),
        message: e.message,
    }
}

impl Role for Loader {
    fn op(&mut self) -> Result<OpOutcome, OpError> {
        let (t, loaded, indexed) = self.at;
        if t >= self.tables.len() {
            return Ok(OpOutcome::Finished);
        }
        if loaded == 0 && self.stmts.is_empty() {
            let d = self.dbms.dialect();
            for sql in
                super::sql::create_table(d.sql(), &self.tables[t], t as u64 + 1, self.primary_key)
            {
                self.conn
                    .execute_batch(&sql)
                    .map_err(|e| fatal(INSERT, e))?;
            }
        }
        if loaded < self.rows {
            let n = self.batch.min(self.rows - loaded);
            let rows = self.insert(t, n).map_err(|e| fatal(INSERT, e))?;
            self.at.1 += n;
            return Ok(OpOutcome::Done { kind: INSERT, rows });
        }
        if !indexed {
            let sql = super::sql::create_index(&self.tables[t], t as u64 + 1);
            self.conn.execute_batch(&sql).map_err(|e| fatal(INDEX, e))?;
            self.at.2 = true;
            return Ok(OpOutcome::Done {
                kind: INDEX,
                rows: 0,
            });
        }
        self.at = (t + 1, 0, false);
        self.stmts.clear();
        self.op()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn templates_expand_per_engine() {
        let sql = expand(
            "INSERT INTO {t} ({idcol}k, c, pad) VALUES ({idval}?, ?, ?)",
            "sbtest3",
            0,
            true,
        );
        assert_eq!(
            sql,
            "INSERT INTO sbtest3 (id, k, c, pad) VALUES (0, ?, ?, ?)"
        );
        let sql = expand(
            "INSERT INTO {t} ({idcol}k, c, pad) VALUES ({idval}?, ?, ?)",
            "sbtest3",
            0,
            false,
        );
        assert_eq!(sql, "INSERT INTO sbtest3 (k, c, pad) VALUES (?, ?, ?)");
        let sql = expand(
            "SELECT c FROM {t} WHERE id IN ({list})",
            "sbtest1",
            3,
            false,
        );
        assert_eq!(sql, "SELECT c FROM sbtest1 WHERE id IN (?, ?, ?)");
        let pg = crate::dbms::postgres::PgDialect;
        assert_eq!(
            with_placeholders("UPDATE sbtest1 SET c=? WHERE id IN (?, ?)", &pg),
            "UPDATE sbtest1 SET c=$1 WHERE id IN ($2, $3)"
        );
    }

    #[test]
    fn literals_are_quoted() {
        let mut s = String::new();
        literal(&mut s, &Param::Int(-5));
        literal(&mut s, &Param::Text("a'b"));
        assert_eq!(s, "-5'a''b'");
    }
}
