//! The Insert Benchmark (spec §1-2): ten steps over tables that are loaded in PK order, indexed,
//! then used as queues (inserts at the top, deletes at the bottom) while queries run.

pub mod roles;
pub mod rows;
pub mod sql;

use std::fmt;
use std::sync::atomic::{AtomicBool, AtomicI64, Ordering};
use std::sync::{mpsc, Arc};

use serde::Serialize;

use crate::dbms::Dbms;
use crate::engines::{Engine, Family};
use crate::error::bad_input;
use crate::runner::{Lifetime, Pace, Role, RoleFactory, RoleSpec, StepMeasurement, StepPlan};
use crate::workload::common::cleanup::{cleanup_and_wait, Cleanup};
use crate::workload::common::rand::{rng, stream_seed};
use crate::workload::common::rates::interval_rate_percentiles;
use roles::{
    insert_sql, BatchWriter, Deleter, Indexer, Inserter, Querier, QueryMode, RangeQuery, Sql,
};
use rows::{random_buffer, DataParams, RowGen};
pub use sql::{DeleteForm, IndexDef};

/// Operation types, indexes into `KINDS`.
pub const INSERT: usize = 0;
pub const DELETE: usize = 1;
pub const QUERY: usize = 2;
pub const INDEX: usize = 3;
pub const KINDS: [&str; 4] = ["insert", "delete", "query", "index"];

/// The three secondary indexes, in the original's order (spec §1.3).
pub const INDEXES: [IndexDef; 3] = [
    IndexDef {
        suffix: "marketsegment",
        columns: &["productid", "customerid", "price"],
    },
    IndexDef {
        suffix: "registersegment",
        columns: &["cashregisterid", "customerid", "price"],
    },
    IndexDef {
        suffix: "pdc",
        columns: &["price", "dateandtime", "customerid"],
    },
];

/// Rows per insert statement (= per transaction) of each step kind (spec §2.2).
const RPC_L_I0: u64 = 100;
const RPC_L_X: u64 = 100;
const RPC_L_I1: u64 = 50;
const RPC_L_I2: u64 = 5;
const RPC_QUERY_STEPS: u64 = 50;
/// How far the inserter may run ahead of its deleter (the original's two queues of 8).
const DELETE_LAG: usize = 16;

/// Which statements are prepared (docs/ibench.md, "Statement forms").
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum StatementForms {
    /// As the original's drivers run iibench.py: INSERTs and DELETEs as SQL text; queries
    /// prepared on PostgreSQL (and SQLite), text on MySQL/MariaDB.
    Original,
    /// Every statement prepared once per connection.
    Prepared,
}

impl StatementForms {
    /// Whether the queries of a step are prepared on this engine.
    pub fn prepares_queries(self, engine: Engine) -> bool {
        // As the original's drivers: MySQLdb sends text, psycopg2 and sqlite3 prepare.
        let original_prepares = match engine.family() {
            Family::MySql => false,
            Family::Postgres | Family::Embedded => true,
        };
        self == StatementForms::Prepared || original_prepares
    }

    pub fn prepares_writes(self) -> bool {
        self == StatementForms::Prepared
    }
}

#[derive(Debug, Clone, Serialize)]
pub struct IbenchParams {
    pub preset: String,
    pub clients: u64,
    pub shared_table: bool,
    pub deletes: bool,
    pub delete_form: DeleteForm,
    /// Rows per client.
    pub rows_l_i0: u64,
    pub rows_l_i1: u64,
    pub rows_l_i2: u64,
    pub query_seconds: u64,
    /// Background insert rates per client (rows/s), one qr/qp pair each.
    pub rates: Vec<u64>,
    pub wait_seconds: Option<u64>,
    pub seed: u64,
    pub data_length_min: u64,
    pub data_length_max: u64,
    pub data_random_pct: u64,
    pub resync_get_min: u64,
    pub rows_per_query: u64,
    pub cashregisters: u64,
    pub products: u64,
    pub customers: u64,
    pub max_price: u64,
    /// Steps to run, in benchmark order.
    pub steps: Vec<String>,
    pub statement_forms: StatementForms,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum StepName {
    Li0,
    Lx,
    Li1,
    Li2,
    Qr(u64),
    Qp(u64),
}

impl fmt::Display for StepName {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            StepName::Li0 => f.write_str("l.i0"),
            StepName::Lx => f.write_str("l.x"),
            StepName::Li1 => f.write_str("l.i1"),
            StepName::Li2 => f.write_str("l.i2"),
            StepName::Qr(r) => write!(f, "qr{r}"),
            StepName::Qp(r) => write!(f, "qp{r}"),
        }
    }
}

/// Everything a step does, derived from the parameters.
#[derive(Debug, Clone)]
pub struct StepDef {
    pub name: StepName,
    /// Rows each running client inserts (rounded up to whole batches).
    pub rows_per_client: u64,
    pub rows_per_commit: u64,
    pub rate_per_client: Option<u64>,
    pub deletes: bool,
    pub queries: Option<QueryMode>,
    /// Clients that run this step (l.x on a shared table runs one).
    pub clients: u64,
}

impl StepDef {
    pub fn rounds_per_client(&self) -> u64 {
        self.rows_per_client.div_ceil(self.rows_per_commit)
    }

    pub fn planned_rows(&self) -> u64 {
        self.rounds_per_client() * self.rows_per_commit * self.clients
    }

    pub fn headline(&self) -> (&'static str, &'static str) {
        match self.name {
            StepName::Lx => ("indexed_rows_per_s", "rows/s"),
            StepName::Qr(_) | StepName::Qp(_) => ("queries_per_s", "queries/s"),
            _ => ("inserts_per_s", "rows/s"),
        }
    }

    /// Operation types this step performs.
    pub fn kinds(&self) -> Vec<usize> {
        let mut k = vec![INSERT];
        if self.deletes {
            k.push(DELETE);
        }
        if self.queries.is_some() {
            k.push(QUERY);
        }
        if self.name == StepName::Lx {
            k.push(INDEX);
        }
        k
    }
}

impl IbenchParams {
    pub fn all_step_names(&self) -> Vec<StepName> {
        let mut v = vec![StepName::Li0, StepName::Lx, StepName::Li1, StepName::Li2];
        for &r in &self.rates {
            v.push(StepName::Qr(r));
            v.push(StepName::Qp(r));
        }
        v
    }

    pub fn step_names(&self) -> Vec<StepName> {
        self.all_step_names()
            .into_iter()
            .filter(|s| self.steps.contains(&s.to_string()))
            .collect()
    }

    pub fn tables(&self) -> Vec<String> {
        let n = if self.shared_table { 1 } else { self.clients };
        (1..=n).map(|i| format!("pi{i}")).collect()
    }

    fn table_of(&self, client: u64) -> String {
        if self.shared_table {
            "pi1".to_string()
        } else {
            format!("pi{client}")
        }
    }

    pub fn step_def(&self, name: &StepName) -> StepDef {
        let base = StepDef {
            name: name.clone(),
            rows_per_client: 0,
            rows_per_commit: 0,
            rate_per_client: None,
            deletes: false,
            queries: None,
            clients: self.clients,
        };
        match *name {
            StepName::Li0 => StepDef {
                rows_per_client: self.rows_l_i0,
                rows_per_commit: RPC_L_I0,
                ..base
            },
            StepName::Lx => StepDef {
                rows_per_client: RPC_L_X,
                rows_per_commit: RPC_L_X,
                clients: if self.shared_table { 1 } else { self.clients },
                ..base
            },
            StepName::Li1 => StepDef {
                rows_per_client: self.rows_l_i1,
                rows_per_commit: RPC_L_I1,
                deletes: self.deletes,
                ..base
            },
            StepName::Li2 => StepDef {
                rows_per_client: self.rows_l_i2,
                rows_per_commit: RPC_L_I2,
                deletes: self.deletes,
                ..base
            },
            StepName::Qr(rate) | StepName::Qp(rate) => StepDef {
                rows_per_client: self.query_seconds * rate,
                // The original lowers the batch to the rate when the rate is below one batch/s.
                rows_per_commit: RPC_QUERY_STEPS.min(rate),
                rate_per_client: Some(rate),
                deletes: self.deletes,
                queries: Some(if matches!(name, StepName::Qr(_)) {
                    QueryMode::Range
                } else {
                    QueryMode::Point
                }),
                ..base
            },
        }
    }

    /// The cleanup + wait budget between l.i2 and qr100, and how it was chosen.
    pub fn wait_budget(&self) -> (u64, String) {
        match self.wait_seconds {
            Some(s) => (
                s,
                format!("{s} s (preset {} or --wait-seconds)", self.preset),
            ),
            None => {
                let nr1 = self.rows_l_i0 * self.clients;
                let s = (60 + nr1 / 1_000_000).min(1200);
                (s, format!("min(1200, 60 + {nr1} / 1e6) = {s} s"))
            }
        }
    }

    fn data_params(&self) -> DataParams {
        DataParams {
            len_min: self.data_length_min,
            len_max: self.data_length_max,
            random_pct: self.data_random_pct,
            cashregisters: self.cashregisters,
            products: self.products,
            customers: self.customers,
            max_price: self.max_price,
        }
    }
}

/// What a step produced, in the benchmark's own terms.
#[derive(Debug, Clone)]
pub struct StepOutcome {
    pub headline_metric: &'static str,
    pub headline_unit: &'static str,
    pub headline_value: f64,
    /// (target rows/s, achieved rows/s, met) for qr/qp steps.
    pub sla: Option<(f64, f64, bool)>,
    /// e.g. ("ips_p99_interval", Some(812.0)).
    pub interval_percentiles: Vec<(String, Option<f64>)>,
}

/// SLA rule: the background insert rate must reach 95% of its target (spec §2.5).
pub const SLA_FRACTION: f64 = 0.95;

/// Untimed state gathered before a step.
#[derive(Debug, Default, Clone)]
pub struct Prepared {
    /// Rows in the tables before l.x (l.x reports indexed rows per second).
    pub rows_before: u64,
    /// Things that make this step's numbers mean something other than usual.
    pub warnings: Vec<String>,
}

pub struct Ibench {
    pub params: IbenchParams,
    dbms: Arc<dyn Dbms>,
    buffer: Arc<[u8]>,
}

impl Ibench {
    pub fn new(params: IbenchParams, dbms: Arc<dyn Dbms>) -> Ibench {
        let buffer = random_buffer(params.seed);
        Ibench {
            params,
            dbms,
            buffer,
        }
    }

    /// Untimed work before a step: l.i0 (re)creates the tables; other steps check they exist.
    pub fn prepare(&self, def: &StepDef) -> anyhow::Result<Prepared> {
        let mut conn = self.dbms.connect()?;
        // Counts whole tables (l.x): bounded by --ddl-timeout, not the statement timeout.
        conn.set_budget(crate::dbms::Budget::Long);
        let d = self.dbms.dialect();
        let tables = self.params.tables();
        if def.name == StepName::Li0 {
            for t in &tables {
                for sql in sql::create_table(d.sql(), t) {
                    conn.execute_batch(&sql)?;
                }
            }
            return Ok(Prepared::default());
        }
        self.check_tables_on(conn.as_mut(), &def.name)?;
        let mut p = Prepared::default();
        if def.queries == Some(QueryMode::Range) {
            for t in &tables {
                for ix in &INDEXES {
                    let name = format!("{t}_{}", ix.suffix);
                    if conn.query_i64(&d.index_exists_sql(t, &name))? != Some(1) {
                        p.warnings.push(format!(
                            "index {name} does not exist, so range queries on it scan the table \
                             (l.x builds the secondary indexes)"
                        ));
                    }
                }
            }
        }
        if def.name == StepName::Lx {
            for t in &tables {
                p.rows_before += conn
                    .query_i64(&format!("SELECT count(*) FROM {t}"))?
                    .unwrap_or(0) as u64;
            }
        }
        Ok(p)
    }

    /// Rows in every table now (a full count: untimed, for checking, not for results).
    pub fn count_rows(&self) -> anyhow::Result<std::collections::BTreeMap<String, u64>> {
        let mut conn = self.dbms.connect()?;
        conn.set_budget(crate::dbms::Budget::Long);
        let mut out = std::collections::BTreeMap::new();
        for t in self.params.tables() {
            let n = conn
                .query_i64(&format!("SELECT count(*) FROM {t}"))?
                .unwrap_or(0);
            out.insert(t, n as u64);
        }
        Ok(out)
    }

    /// Steps after l.i0 continue on existing tables; say clearly when they are not there.
    pub fn check_tables(&self, step: &StepName) -> anyhow::Result<()> {
        let mut conn = self.dbms.connect()?;
        self.check_tables_on(conn.as_mut(), step)
    }

    fn check_tables_on(
        &self,
        conn: &mut dyn crate::dbms::Conn,
        step: &StepName,
    ) -> anyhow::Result<()> {
        let d = self.dbms.dialect();
        for t in &self.params.tables() {
            if conn.query_i64(&d.table_exists_sql(t))? != Some(1) {
                return bad_input(format!(
                    "step {step} needs table {t}, which does not exist yet: include l.i0 in --steps, \
                     or point --work-dir at a database kept by an earlier run"
                ));
            }
        }
        Ok(())
    }

    /// The roles of a step: per client an inserter, its deleter and a query thread as the step
    /// needs (1, 2 or 3 busy connections per client, as the original).
    pub fn plan(&self, def: &StepDef, step_index: u64) -> StepPlan {
        let p = &self.params;
        let mut roles = Vec::new();
        for client in 1..=def.clients {
            let table = p.table_of(client);
            let shared_min = Arc::new(AtomicI64::new(0));
            let seed = |role: u64| stream_seed(p.seed, step_index, client, role);
            let (permits_tx, permits_rx) = if def.deletes {
                let (tx, rx) = mpsc::sync_channel(DELETE_LAG);
                (Some(tx), Some(rx))
            } else {
                (None, None)
            };
            let writer =
                self.writer_factory(&table, def.rows_per_commit as usize, seed(0), step_index);
            let conn_dbms = self.dbms.clone();
            let make: RoleFactory = if def.name == StepName::Lx {
                let ddl = sql::create_indexes(self.dbms.dialect().sql(), &table, &INDEXES);
                Box::new(move || {
                    let mut conn = conn_dbms.connect()?;
                    let w = writer(conn.as_mut())?;
                    Ok(Box::new(Indexer {
                        conn,
                        writer: Some(w),
                        ddl,
                        next_ddl: 0,
                    }) as Box<dyn Role>)
                })
            } else {
                let rounds = def.rounds_per_client();
                Box::new(move || {
                    let mut conn = conn_dbms.connect()?;
                    let w = writer(conn.as_mut())?;
                    Ok(Box::new(Inserter {
                        conn,
                        writer: w,
                        rounds_left: rounds,
                    }) as Box<dyn Role>)
                })
            };
            let pace = match def.rate_per_client {
                Some(rate) => Pace::Rate {
                    ops_per_s: rate as f64 / def.rows_per_commit as f64,
                },
                None => Pace::Closed,
            };
            roles.push(RoleSpec {
                name: format!("c{client}.inserter"),
                pace,
                lifetime: Lifetime::Primary,
                permits_to: permits_tx,
                make,
            });
            if let Some(rx) = permits_rx {
                roles.push(RoleSpec {
                    name: format!("c{client}.deleter"),
                    pace: Pace::Follow(rx),
                    lifetime: Lifetime::Primary,
                    permits_to: None,
                    make: self.deleter_factory(&table, def.rows_per_commit, shared_min.clone()),
                });
            }
            if let Some(mode) = def.queries {
                roles.push(RoleSpec {
                    name: format!("c{client}.query"),
                    pace: Pace::Closed,
                    lifetime: Lifetime::Background,
                    permits_to: None,
                    make: self.querier_factory(&table, mode, seed(2), shared_min),
                });
            }
        }
        StepPlan {
            kinds: KINDS.to_vec(),
            roles,
            target_rows_per_s: def.rate_per_client.map(|r| (r * def.clients) as f64),
            paced_kind: def.rate_per_client.map(|_| INSERT),
        }
    }

    #[allow(clippy::type_complexity)]
    fn writer_factory(
        &self,
        table: &str,
        rows: usize,
        seed: u64,
        step_index: u64,
    ) -> impl FnOnce(&mut dyn crate::dbms::Conn) -> anyhow::Result<BatchWriter> + Send + 'static
    {
        let d = self.dbms.clone();
        let sql = insert_sql(table, rows, &|i| d.dialect().placeholder(i));
        let buf = self.buffer.clone();
        let dp = self.params.data_params();
        let prepared = self.params.statement_forms.prepares_writes();
        let table = table.to_string();
        move |conn| {
            let gen = RowGen::new(seed, buf, dp, step_index);
            if prepared {
                Ok(BatchWriter::new(conn, &sql, gen, rows)?)
            } else {
                Ok(BatchWriter::text(&table, d.dialect(), gen, rows))
            }
        }
    }

    fn deleter_factory(&self, table: &str, rows: u64, shared_min: Arc<AtomicI64>) -> RoleFactory {
        let dbms = self.dbms.clone();
        let min_sql = format!("SELECT min(transactionid) FROM {table}");
        let form = self.params.delete_form;
        let resync_every = self.params.resync_get_min;
        let prepared = self.params.statement_forms.prepares_writes();
        let table = table.to_string();
        Box::new(move || {
            let mut conn = dbms.connect()?;
            let d = dbms.dialect();
            let stmt = Sql::new(conn.as_mut(), prepared, d, &|ph| {
                sql::delete_with(d.sql(), &table, form, ph)
            })?;
            Ok(Box::new(Deleter {
                conn,
                stmt,
                min_sql,
                form,
                rows: rows as i64,
                resync_every,
                rounds: 0,
                min_est: 0,
                shared_min,
            }) as Box<dyn Role>)
        })
    }

    fn querier_factory(
        &self,
        table: &str,
        mode: QueryMode,
        seed: u64,
        shared_min: Arc<AtomicI64>,
    ) -> RoleFactory {
        let dbms = self.dbms.clone();
        let p = self.params.clone();
        let limit = p.rows_per_query;
        let table = table.to_string();
        let prepared = p.statement_forms.prepares_queries(dbms.engine());
        let min_sql = format!("SELECT min(transactionid) FROM {table}");
        let max_sql = format!("SELECT max(transactionid) FROM {table}");
        Box::new(move || {
            let mut conn = dbms.connect()?;
            let d = dbms.dialect();
            let mut ranges = Vec::new();
            let mut point_stmt = None;
            match mode {
                QueryMode::Range => {
                    for (i, (_, domain)) in range_queries(&table, d, &p).iter().enumerate() {
                        let stmt = Sql::new(conn.as_mut(), prepared, d, &|ph| {
                            range_queries_with(&table, d, &p, ph).swap_remove(i).0
                        })?;
                        ranges.push(RangeQuery {
                            stmt,
                            domain: *domain,
                        });
                    }
                }
                QueryMode::Point => {
                    point_stmt = Some(Sql::new(conn.as_mut(), prepared, d, &|ph| {
                        let in_list: Vec<String> = (1..=limit as usize).map(ph).collect();
                        format!(
                            "SELECT transactionid, productid, data FROM {table} WHERE \
                             transactionid IN ({})",
                            in_list.join(",")
                        )
                    })?)
                }
            }
            // Start from the real minimum so the first point queries do not ask for rows the
            // deleter removed before its first estimate was published.
            let min = conn.query_i64(&min_sql)?.unwrap_or(0);
            shared_min.fetch_max(min, Ordering::Relaxed);
            Ok(Box::new(Querier {
                conn,
                mode,
                ranges,
                point_stmt,
                rows_per_query: limit as usize,
                rng: rng(seed),
                max_sql,
                max_pk: 0,
                queries: 0,
                shared_min,
                ids: Vec::with_capacity(limit as usize),
            }) as Box<dyn Role>)
        })
    }

    /// The step's headline, SLA and interval-rate percentiles from what the runner measured.
    pub fn outcome(&self, def: &StepDef, m: &StepMeasurement, prepared: &Prepared) -> StepOutcome {
        let secs = m.duration.as_secs_f64().max(1e-9);
        let (metric, unit) = def.headline();
        let inserted = m.kinds[INSERT].rows as f64;
        let value = match def.name {
            StepName::Lx => (prepared.rows_before as f64 + inserted) / secs,
            StepName::Qr(_) | StepName::Qp(_) => m.kinds[QUERY].ops as f64 / secs,
            _ => inserted / secs,
        };
        let sla = def.rate_per_client.map(|r| {
            let target = (r * def.clients) as f64;
            let achieved = inserted / secs;
            (target, achieved, achieved >= SLA_FRACTION * target)
        });
        let mut interval_percentiles = Vec::new();
        let mut add = |prefix: &str, series: Vec<f64>| {
            for (p, v) in interval_rate_percentiles(&series) {
                interval_percentiles.push((format!("{prefix}_p{p}_interval"), v));
            }
        };
        let rows_of = |k: usize| {
            m.second_counts(k)
                .into_iter()
                .map(|(_, r)| r as f64)
                .collect()
        };
        add("ips", rows_of(INSERT));
        if def.deletes {
            add("dps", rows_of(DELETE));
        }
        if def.queries.is_some() {
            add(
                "qps",
                m.second_counts(QUERY)
                    .into_iter()
                    .map(|(o, _)| o as f64)
                    .collect(),
            );
        }
        StepOutcome {
            headline_metric: metric,
            headline_unit: unit,
            headline_value: value,
            sla,
            interval_percentiles,
        }
    }

    /// After l.i2: the engine's maintenance, then sleep what is left of the wait budget, measured
    /// from when cleanup started (spec §2.4). Stops early on interrupt.
    pub fn cleanup_and_wait(&self, interrupt: &AtomicBool) -> Cleanup {
        let (budget_s, rule) = self.params.wait_budget();
        cleanup_and_wait(
            self.dbms.as_ref(),
            &self.params.tables(),
            budget_s,
            rule,
            interrupt,
        )
    }
}

/// The three range queries with the start-value domain of each. Each reads one covering index
/// (spec §1.7): select, filter on the first column and order by exactly the index's columns;
/// the register query uses a strict `>`.
pub fn range_queries(
    table: &str,
    d: &dyn crate::dbms::Dialect,
    p: &IbenchParams,
) -> Vec<(String, u64)> {
    range_queries_with(table, d, p, &|i| d.placeholder(i))
}

/// As `range_queries`, with `ph` writing the parameter's place.
pub fn range_queries_with(
    table: &str,
    d: &dyn crate::dbms::Dialect,
    p: &IbenchParams,
    ph: &dyn Fn(usize) -> String,
) -> Vec<(String, u64)> {
    let limit = p.rows_per_query;
    let shapes = [
        (">=", p.products),
        (">", p.cashregisters),
        (">=", p.max_price),
    ];
    INDEXES
        .iter()
        .zip(shapes)
        .map(|(ix, (cmp, domain))| {
            let cols = ix.columns.join(", ");
            let sql = format!(
                "SELECT {cols} FROM {table}{} WHERE {} {cmp} {} ORDER BY {cols} LIMIT {limit}",
                sql::index_hint(d.sql(), &format!("{table}_{}", ix.suffix)),
                ix.columns[0],
                ph(1)
            );
            (sql, domain)
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::spec::ibench::{ibench_params, IbenchOverrides};
    use crate::spec::presets;

    fn params(o: IbenchOverrides) -> IbenchParams {
        ibench_params(&presets::get("cached-small").unwrap(), &o).unwrap()
    }

    #[test]
    fn step_table_matches_the_original() {
        let p = params(IbenchOverrides {
            clients: Some(4),
            ..Default::default()
        });
        let d = |n| p.step_def(&n);
        let li0 = d(StepName::Li0);
        assert_eq!(
            (li0.rows_per_commit, li0.deletes, li0.planned_rows()),
            (100, false, 120_000_000)
        );
        let lx = d(StepName::Lx);
        assert_eq!(
            (lx.rows_per_client, lx.clients, lx.kinds()),
            (100, 4, vec![INSERT, INDEX])
        );
        let li1 = d(StepName::Li1);
        assert_eq!((li1.rows_per_commit, li1.deletes), (50, true));
        assert_eq!(d(StepName::Li2).rows_per_commit, 5);
        let qr = d(StepName::Qr(500));
        assert_eq!(
            (qr.rows_per_commit, qr.rate_per_client, qr.rows_per_client),
            (50, Some(500), 900_000)
        );
        assert_eq!(qr.queries, Some(QueryMode::Range));
        assert_eq!(qr.kinds(), vec![INSERT, DELETE, QUERY]);
        assert_eq!(d(StepName::Qp(100)).queries, Some(QueryMode::Point));
        assert_eq!(p.tables(), vec!["pi1", "pi2", "pi3", "pi4"]);
    }

    #[test]
    fn rates_below_one_batch_shrink_the_batch() {
        let p = params(IbenchOverrides {
            rates: Some(vec![20]),
            ..Default::default()
        });
        assert_eq!(p.step_def(&StepName::Qr(20)).rows_per_commit, 20);
    }

    #[test]
    fn shared_table_runs_l_x_once() {
        let p = params(IbenchOverrides {
            clients: Some(3),
            shared_table: true,
            ..Default::default()
        });
        assert_eq!(p.tables(), vec!["pi1"]);
        assert_eq!(p.step_def(&StepName::Lx).clients, 1);
        assert!(!p.step_def(&StepName::Li1).deletes);
    }

    #[test]
    fn wait_budget_uses_the_2024_formula_at_full_scale() {
        let p = params(IbenchOverrides::default());
        assert_eq!(p.wait_budget().0, 90);
        let p = params(IbenchOverrides {
            clients: Some(50),
            ..Default::default()
        });
        assert_eq!(p.wait_budget().0, 1200, "capped");
        let q =
            ibench_params(&presets::get("quick").unwrap(), &IbenchOverrides::default()).unwrap();
        assert_eq!(q.wait_budget().0, 1);
    }

    #[test]
    fn range_queries_are_the_originals() {
        let p = params(IbenchOverrides::default());
        let q = range_queries("pi1", &crate::dbms::sqlite::SqliteDialect, &p);
        assert_eq!(
            q,
            [
                ("SELECT productid, customerid, price FROM pi1 WHERE productid >= ? ORDER BY productid, customerid, price LIMIT 10".to_string(), 10_000),
                ("SELECT cashregisterid, customerid, price FROM pi1 WHERE cashregisterid > ? ORDER BY cashregisterid, customerid, price LIMIT 10".to_string(), 1_000),
                ("SELECT price, dateandtime, customerid FROM pi1 WHERE price >= ? ORDER BY price, dateandtime, customerid LIMIT 10".to_string(), 500),
            ]
        );
    }

    #[test]
    fn insert_statement_has_six_placeholders_per_row() {
        let sql = insert_sql("pi1", 3, &|_| "?".into());
        assert_eq!(sql.matches('?').count(), 18);
        assert!(sql.starts_with("INSERT INTO pi1 (dateandtime,cashregisterid,customerid,productid,price,data) VALUES (?,"));
        let pg = insert_sql("pi1", 2, &|i| format!("${i}"));
        assert!(pg.ends_with("$12)"));
    }
}
