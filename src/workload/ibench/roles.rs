//! The connections of one Insert Benchmark client (spec §1.1, §2.3): the inserter, the deleter
//! that follows it, the query thread, and l.x's index builder.

use std::sync::atomic::{AtomicI64, Ordering};
use std::sync::Arc;

use super::rows::{Batch, RowGen};
use super::DeleteForm;
use super::{DELETE, INDEX, INSERT, QUERY};
use crate::dbms::{Conn, DbError, Dialect, Param, StmtId};
use crate::runner::{ErrorClass, OpError, OpOutcome, Role};
use crate::workload::common::rand::{below, Rand};

/// An ignorable error skips the operation (the original has no transactions to restart).
fn op_err(kind: usize, e: DbError) -> OpError {
    OpError {
        kind,
        class: if e.transient {
            ErrorClass::Ignored
        } else {
            ErrorClass::Failed
        },
        cause: (!e.transient).then(|| e.as_cause()),
        message: e.message,
    }
}

/// How a statement reaches the server: prepared once and executed with parameters, or sent as
/// SQL text with its values written in (parsed and planned every time), as the original's
/// iibench.py does for most statements (docs/ibench.md, "Statement forms").
pub enum Sql {
    Prepared(StmtId),
    Text {
        /// The SQL between the parameters: one more part than parameters.
        parts: Vec<String>,
        /// The statement as sent, reused from one execution to the next.
        buf: String,
        /// MySQL reads backslashes in string literals as escapes.
        backslash_escapes: bool,
    },
}

/// Writes the i-th (1-based) parameter's place into a statement.
pub type Placeholder<'a> = &'a dyn Fn(usize) -> String;

/// Marks a parameter's place while a template is split into its parts.
const HOLE: &str = "\u{1}";

impl Sql {
    /// `sql` built by `template` with a placeholder per parameter (`$1` or `?` when prepared).
    pub fn new(
        conn: &mut dyn Conn,
        prepared: bool,
        d: &dyn Dialect,
        template: &dyn Fn(Placeholder) -> String,
    ) -> Result<Sql, DbError> {
        if prepared {
            let sql = template(&|i| d.placeholder(i));
            return Ok(Sql::Prepared(conn.prepare(&sql)?));
        }
        let sql = template(&|_| HOLE.to_string());
        Ok(Sql::Text {
            parts: sql.split(HOLE).map(String::from).collect(),
            buf: String::with_capacity(sql.len() + 64),
            backslash_escapes: d.backslash_escapes(),
        })
    }

    fn render(&mut self, params: &[Param]) -> Option<&str> {
        let Sql::Text {
            parts,
            buf,
            backslash_escapes,
        } = self
        else {
            return None;
        };
        buf.clear();
        for (i, part) in parts.iter().enumerate() {
            buf.push_str(part);
            if let Some(p) = params.get(i) {
                literal(buf, p, *backslash_escapes);
            }
        }
        Some(buf.as_str())
    }

    /// Runs a statement that returns no rows; the rows it changed.
    pub fn execute(&mut self, conn: &mut dyn Conn, params: &[Param]) -> Result<u64, DbError> {
        match self {
            Sql::Prepared(id) => conn.execute(*id, params),
            text => {
                let sql = text.render(params).expect("a text statement");
                conn.run_text(sql)
            }
        }
    }

    /// Runs a query and fetches every row; the rows fetched.
    pub fn query(&mut self, conn: &mut dyn Conn, params: &[Param]) -> Result<u64, DbError> {
        match self {
            Sql::Prepared(id) => conn.query(*id, params),
            text => {
                let sql = text.render(params).expect("a text statement");
                conn.run_text(sql)
            }
        }
    }
}

/// A parameter as an SQL literal.
fn literal(out: &mut String, p: &Param, backslash_escapes: bool) {
    use std::fmt::Write;
    match p {
        Param::Int(i) => {
            let _ = write!(out, "{i}");
        }
        Param::Text(s) | Param::DateTime(s) => quoted(out, s, backslash_escapes),
    }
}

fn quoted(out: &mut String, s: &str, backslash_escapes: bool) {
    out.push('\'');
    for c in s.chars() {
        match c {
            '\'' => out.push_str("''"),
            '\\' if backslash_escapes => out.push_str("\\\\"),
            c => out.push(c),
        }
    }
    out.push('\'');
}

/// Multi-row INSERT of a fixed batch size, one statement per transaction (autocommit).
pub struct BatchWriter {
    stmt: Option<StmtId>,
    /// Text form: `INSERT ... VALUES ` then the rows written in; reused.
    text: Option<(String, usize, bool)>,
    gen: RowGen,
    batch: Batch,
    rows: usize,
}

pub fn insert_sql(table: &str, rows: usize, ph: &dyn Fn(usize) -> String) -> String {
    let mut sql = format!(
        "INSERT INTO {table} (dateandtime,cashregisterid,customerid,productid,price,data) VALUES "
    );
    let mut i = 1;
    for r in 0..rows {
        if r > 0 {
            sql.push(',');
        }
        sql.push('(');
        for c in 0..6 {
            if c > 0 {
                sql.push(',');
            }
            sql.push_str(&ph(i));
            i += 1;
        }
        sql.push(')');
    }
    sql
}

impl BatchWriter {
    pub fn new(conn: &mut dyn Conn, sql: &str, gen: RowGen, rows: usize) -> Result<Self, DbError> {
        Ok(BatchWriter {
            stmt: Some(conn.prepare(sql)?),
            text: None,
            gen,
            batch: Batch::default(),
            rows,
        })
    }

    /// The original's text INSERT: `VALUES ('<ts>',<cr>,<cust>,<prod>,<price>.00,'<data>'),...`
    /// (iibench.py formats the price with two decimals).
    pub fn text(table: &str, d: &dyn Dialect, gen: RowGen, rows: usize) -> BatchWriter {
        let head = format!(
            "INSERT INTO {table} (dateandtime,cashregisterid,customerid,productid,price,data) VALUES "
        );
        let len = head.len();
        BatchWriter {
            stmt: None,
            text: Some((head, len, d.backslash_escapes())),
            gen,
            batch: Batch::default(),
            rows,
        }
    }

    pub fn write(&mut self, conn: &mut dyn Conn) -> Result<u64, DbError> {
        self.gen.fill(&mut self.batch, self.rows);
        let b = &self.batch;
        if let Some((sql, head, backslash)) = self.text.as_mut() {
            use std::fmt::Write;
            sql.truncate(*head);
            for (i, (cols, data)) in b.cols.iter().zip(&b.data).enumerate() {
                let [cashregisterid, customerid, productid, price] = *cols;
                if i > 0 {
                    sql.push(',');
                }
                sql.push('(');
                quoted(sql, &b.dateandtime, *backslash);
                let _ = write!(
                    sql,
                    ",{cashregisterid},{customerid},{productid},{price}.00,"
                );
                quoted(sql, data, *backslash);
                sql.push(')');
            }
            return conn.run_text(sql);
        }
        let stmt = self.stmt.expect("a prepared writer");
        let mut params: Vec<Param> = Vec::with_capacity(self.rows * 6);
        for (cols, data) in b.cols.iter().zip(&b.data) {
            let [cashregisterid, customerid, productid, price] = *cols;
            params.extend_from_slice(&[
                Param::DateTime(&b.dateandtime),
                Param::Int(cashregisterid),
                Param::Int(customerid),
                Param::Int(productid),
                Param::Int(price),
                Param::Text(data),
            ]);
        }
        conn.execute(stmt, &params)
    }
}

pub struct Inserter {
    pub conn: Box<dyn Conn>,
    pub writer: BatchWriter,
    pub rounds_left: u64,
}

impl Role for Inserter {
    fn op(&mut self) -> Result<OpOutcome, OpError> {
        if self.rounds_left == 0 {
            return Ok(OpOutcome::Finished);
        }
        self.rounds_left -= 1;
        let rows = self
            .writer
            .write(self.conn.as_mut())
            .map_err(|e| op_err(INSERT, e))?;
        Ok(OpOutcome::Done { kind: INSERT, rows })
    }
}

/// Deletes `rows` rows from the low end of the PK once per insert batch, so the table is a
/// queue of constant size (spec §1.6).
pub struct Deleter {
    pub conn: Box<dyn Conn>,
    pub stmt: Sql,
    pub min_sql: String,
    pub form: DeleteForm,
    pub rows: i64,
    pub resync_every: u64,
    pub rounds: u64,
    pub min_est: i64,
    /// Published for the point-query thread, which draws ids at or above it.
    pub shared_min: Arc<AtomicI64>,
}

impl Role for Deleter {
    fn before_op(&mut self) -> Result<(), OpError> {
        let resync = self.rounds == 0
            || (self.resync_every > 0 && self.rounds.is_multiple_of(self.resync_every));
        if resync {
            self.min_est = self
                .conn
                .query_i64(&self.min_sql)
                .map_err(|e| op_err(DELETE, e))?
                .unwrap_or(0);
        }
        Ok(())
    }

    fn op(&mut self) -> Result<OpOutcome, OpError> {
        let lo = self.min_est;
        let second = match self.form {
            DeleteForm::Current => self.rows,
            DeleteForm::Old => lo + self.rows,
        };
        self.rounds += 1;
        self.min_est += self.rows;
        self.shared_min.store(self.min_est, Ordering::Relaxed);
        let rows = self
            .stmt
            .execute(self.conn.as_mut(), &[Param::Int(lo), Param::Int(second)])
            .map_err(|e| op_err(DELETE, e))?;
        Ok(OpOutcome::Done { kind: DELETE, rows })
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum QueryMode {
    /// Short index-only range scans on the three covering secondary indexes (qr steps).
    Range,
    /// IN-lists of PK values (qp steps).
    Point,
}

/// Range query shapes (spec §1.7): (start value domain, SQL).
pub struct RangeQuery {
    pub stmt: Sql,
    pub domain: u64,
}

/// The query thread: flat out, one statement per operation, every row fetched.
pub struct Querier {
    pub conn: Box<dyn Conn>,
    pub mode: QueryMode,
    pub ranges: Vec<RangeQuery>,
    pub point_stmt: Option<Sql>,
    pub rows_per_query: usize,
    pub rng: Rand,
    pub max_sql: String,
    pub max_pk: i64,
    pub queries: u64,
    pub shared_min: Arc<AtomicI64>,
    /// The IN-list, reused from query to query (integers borrow nothing).
    pub ids: Vec<Param<'static>>,
}

impl Role for Querier {
    fn before_op(&mut self) -> Result<(), OpError> {
        if self.mode == QueryMode::Point && self.queries.is_multiple_of(100) {
            self.max_pk = self
                .conn
                .query_i64(&self.max_sql)
                .map_err(|e| op_err(QUERY, e))?
                .unwrap_or(0);
        }
        Ok(())
    }

    fn op(&mut self) -> Result<OpOutcome, OpError> {
        self.queries += 1;
        let rows = match self.mode {
            QueryMode::Range => {
                let g = below(&mut self.rng, self.ranges.len() as u64) as usize;
                let q = &mut self.ranges[g];
                let start = below(&mut self.rng, q.domain) as i64;
                q.stmt.query(self.conn.as_mut(), &[Param::Int(start)])
            }
            QueryMode::Point => {
                // Ids uniform in [min estimate, max), as the original.
                let lo = self.shared_min.load(Ordering::Relaxed);
                let span = (self.max_pk - lo).max(1) as u64;
                self.ids.clear();
                for _ in 0..self.rows_per_query {
                    self.ids
                        .push(Param::Int(lo + below(&mut self.rng, span) as i64));
                }
                let stmt = self.point_stmt.as_mut().expect("point queries are set up");
                stmt.query(self.conn.as_mut(), &self.ids)
            }
        };
        let rows = rows.map_err(|e| op_err(QUERY, e))?;
        Ok(OpOutcome::Done { kind: QUERY, rows })
    }
}

/// l.x: one batch of 100 rows, then the secondary index DDL, one operation per statement.
pub struct Indexer {
    pub conn: Box<dyn Conn>,
    pub writer: Option<BatchWriter>,
    pub ddl: Vec<String>,
    pub next_ddl: usize,
}

impl Role for Indexer {
    fn op(&mut self) -> Result<OpOutcome, OpError> {
        if let Some(mut w) = self.writer.take() {
            let rows = w.write(self.conn.as_mut()).map_err(|e| op_err(INSERT, e))?;
            return Ok(OpOutcome::Done { kind: INSERT, rows });
        }
        let Some(sql) = self.ddl.get(self.next_ddl) else {
            return Ok(OpOutcome::Finished);
        };
        self.next_ddl += 1;
        self.conn.execute_batch(sql).map_err(|e| op_err(INDEX, e))?;
        Ok(OpOutcome::Done {
            kind: INDEX,
            rows: 0,
        })
    }
}
