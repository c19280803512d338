//! TPC-C as a `Suite`: the load, then a run step per level of connections, each followed
//! (untimed) by the specification's consistency checks.

use std::collections::BTreeMap;
use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::Duration;

use super::events::{Display, Tick};
use super::measure::{Measured, StepSetup, Ticker};
use super::suite::{count_rows, op_stats, round3, status_of, FinishCx, Steps, Suite};
use crate::dbms::{Dbms, SqlDialect};
use crate::metrics;
use crate::results::tpcc::{TpccStep, TpccTransaction};
use crate::results::{Headline, Payload, Status, StepFile, StepParameters};
use crate::runner::{Lifetime, Pace, Role, RoleSpec, SecondRow, StepPlan};
use crate::workload::common::rand::{rng, stream_seed};
use crate::workload::common::stop::Stop;
use crate::workload::tpcc::txn::{Client, ClientSpec, Counts};
use crate::workload::tpcc::{check, load, schema, TpccParams};
use crate::workload::tpcc::{INSERT, KINDS, NEW_ORDER, ROLLED_BACK, TRANSACTIONS, WARMUP};

pub struct TpccSuite {
    pub params: TpccParams,
}

impl Suite for TpccSuite {
    fn suite(&self) -> crate::suites::Suite {
        crate::suites::Suite::Tpcc
    }

    fn preset(&self) -> &str {
        &self.params.preset
    }

    fn parameters(&self) -> anyhow::Result<serde_json::Value> {
        Ok(serde_json::to_value(&self.params)?)
    }

    fn step_names(&self) -> Vec<String> {
        self.params.step_names()
    }

    fn connections(&self) -> u64 {
        let p = &self.params;
        let most = p.connections.iter().copied().max().unwrap_or(1);
        most.max(p.load_connections) + 2
    }

    fn needs_existing_tables(&self) -> Option<String> {
        (!self.params.load).then(|| "--skip-load cannot be used with it".to_string())
    }

    fn check_tables(&self, dbms: &Arc<dyn Dbms>) -> anyhow::Result<()> {
        if self.params.load {
            return Ok(());
        }
        let mut conn = dbms.connect()?;
        for t in schema::TABLES {
            let sql = dbms.dialect().table_exists_sql(t);
            if conn.query_i64(&sql)?.unwrap_or(0) == 0 {
                return crate::error::bad_input(format!(
                    "--skip-load needs the TPC-C tables, and table {t} is missing"
                ));
            }
        }
        Ok(())
    }

    fn on(&self, dbms: Arc<dyn Dbms>) -> Box<dyn Steps> {
        let mut steps = Vec::new();
        if self.params.load {
            steps.push(None);
        }
        steps.extend(self.params.connections.iter().map(|&c| Some(c)));
        Box::new(TpccSteps {
            p: self.params.clone(),
            dbms,
            steps,
            counts: None,
            orders_before: None,
        })
    }
}

struct TpccSteps {
    p: TpccParams,
    dbms: Arc<dyn Dbms>,
    /// None for the load, else the run step's connections.
    steps: Vec<Option<u64>>,
    counts: Option<Arc<Counts>>,
    /// The districts' order numbers before the run step under way.
    orders_before: Option<u64>,
}

impl TpccSteps {
    fn load_connections(&self) -> u64 {
        match self.dbms.dialect().sql() {
            // One writer at a time: more connections would only wait on each other.
            SqlDialect::Sqlite => 1,
            _ => self.p.load_connections.min(self.p.warehouses).max(1),
        }
    }

    fn load_setup(&mut self) -> anyhow::Result<StepSetup> {
        let mut conn = self.dbms.connect()?;
        conn.set_budget(crate::dbms::Budget::Long);
        for s in schema::create(self.dbms.dialect().sql()) {
            conn.execute_batch(&s)?;
        }
        let n = self.load_connections();
        let roles = (0..n)
            .map(|k| {
                let (dbms, w, seed) = (self.dbms.clone(), self.p.warehouses, self.p.seed);
                RoleSpec {
                    name: format!("load{}", k + 1),
                    pace: Pace::Closed,
                    lifetime: Lifetime::Primary,
                    permits_to: None,
                    make: Box::new(move || {
                        Ok(Box::new(load::Loader::new(dbms, w, k, n, seed)?) as Box<dyn Role>)
                    }),
                }
            })
            .collect();
        let total = load::planned_rows(self.p.warehouses);
        Ok(StepSetup {
            name: crate::workload::tpcc::LOAD.into(),
            plan: StepPlan {
                kinds: KINDS.to_vec(),
                roles,
                target_rows_per_s: None,
                paced_kind: None,
            },
            kinds: vec![(INSERT, KINDS[INSERT])],
            queries_per_op: None,
            warmup_s: 0,
            display: Display::Bar { total },
            ticker: Box::new(TpccTicker {
                load: Some(total),
                done: 0,
            }),
            warnings: Vec::new(),
            runs_long: true,
        })
    }

    fn run_setup(&mut self, i: usize, connections: u64) -> anyhow::Result<StepSetup> {
        let p = &self.p;
        self.orders_before = check::order_numbers(&self.dbms).ok();
        let counts = Arc::new(Counts::default());
        self.counts = Some(counts.clone());
        let stop = Stop::Time {
            warmup: Duration::from_secs(p.warmup_seconds),
            run: Duration::from_secs(p.run_seconds),
        };
        let roles = (0..connections)
            .map(|c| {
                let spec = ClientSpec {
                    warehouses: p.warehouses,
                    mix: p.mix,
                    isolation: p.isolation,
                    stop,
                    counts: counts.clone(),
                };
                let dbms = self.dbms.clone();
                let seed = stream_seed(p.seed, 2 + i as u64, c + 1, 0);
                RoleSpec {
                    name: format!("c{}", c + 1),
                    pace: Pace::Closed,
                    lifetime: Lifetime::Primary,
                    permits_to: None,
                    make: Box::new(move || {
                        Ok(Box::new(Client::new(dbms, spec, rng(seed))?) as Box<dyn Role>)
                    }),
                }
            })
            .collect();
        let mut kinds: Vec<(usize, &'static str)> =
            TRANSACTIONS.iter().map(|&k| (k, KINDS[k])).collect();
        kinds.push((ROLLED_BACK, KINDS[ROLLED_BACK]));
        kinds.push((WARMUP, KINDS[WARMUP]));
        Ok(StepSetup {
            name: p.run_label(connections),
            plan: StepPlan {
                kinds: KINDS.to_vec(),
                roles,
                target_rows_per_s: None,
                paced_kind: None,
            },
            kinds,
            queries_per_op: None,
            warmup_s: p.warmup_seconds,
            display: Display::Bar {
                total: p.run_seconds + p.warmup_seconds,
            },
            ticker: Box::new(TpccTicker {
                load: None,
                done: 0,
            }),
            warnings: Vec::new(),
            runs_long: false,
        })
    }
}

impl Steps for TpccSteps {
    fn count(&self) -> usize {
        self.steps.len()
    }

    fn name(&self, i: usize) -> String {
        match self.steps[i] {
            None => crate::workload::tpcc::LOAD.to_string(),
            Some(c) => self.p.run_label(c),
        }
    }

    fn begin(&mut self, i: usize) -> anyhow::Result<StepSetup> {
        match self.steps[i] {
            None => self.load_setup(),
            Some(c) => self.run_setup(i, c),
        }
    }

    fn finish(&mut self, i: usize, m: Measured, started_at: String, cx: &mut FinishCx) -> StepFile {
        match self.steps[i] {
            None => self.finish_load(m, started_at, cx),
            Some(c) => self.finish_run(i, c, m, started_at, cx),
        }
    }

    fn failed_before(&self, i: usize, error: String, started_at: String) -> StepFile {
        let mut f = self.step_file(i, started_at, Status::Failed, Some(error));
        f.headline.value = 0.0;
        f
    }
}

impl TpccSteps {
    /// A step file with its parameters and no figures.
    fn step_file(
        &self,
        i: usize,
        started_at: String,
        status: Status,
        error: Option<String>,
    ) -> StepFile {
        let (metric, unit, clients) = match self.steps[i] {
            None => ("inserts_per_s", "rows/s", self.load_connections()),
            Some(c) => ("nopm", "New-Orders/min", c),
        };
        let headline = Headline {
            metric: metric.into(),
            value: 0.0,
            unit: unit.into(),
        };
        let parameters = StepParameters {
            clients,
            tables: self.p.table_names(),
        };
        let mut f = StepFile::blank(self.name(i), started_at, headline, parameters);
        f.status = status;
        f.error = error;
        f
    }

    fn finish_load(
        &mut self,
        measured: Measured,
        started_at: String,
        cx: &mut FinishCx,
    ) -> StepFile {
        let m = &measured.m;
        let mut status = status_of(m);
        let mut error = m.failure.clone();
        let secs = m.duration.as_secs_f64();
        let inserted = m.kinds[INSERT].rows;
        let (hw, counters) = measured.cost(
            cx.cost,
            &metrics::Work {
                op: "insert",
                op_count: inserted,
                inserted_rows: inserted,
                is_query_step: false,
                measured_s: secs,
            },
        );
        // The foreign keys, once every table is full (untimed).
        if status == Status::Ok && self.p.foreign_keys {
            if let Err(e) = self.add_foreign_keys() {
                status = Status::Failed;
                error = Some(format!("adding the foreign keys failed: {e:#}"));
            }
        }
        let mut f = self.step_file(0, started_at, status, error);
        f.warnings = measured.warnings.clone();
        f.duration_s = round3(secs);
        f.headline.value = round3(inserted as f64 / secs.max(1e-9));
        f.ops
            .insert(KINDS[INSERT].to_string(), op_stats(&m.kinds[INSERT], secs));
        f.table_rows = (cx.count_rows && status == Status::Ok)
            .then(|| count_rows(&self.dbms, &self.p.table_names(), cx))
            .flatten();
        f.series_file = measured.series_file.clone();
        f.hardware = Some(hw);
        f.dbms = Some(counters);
        f
    }

    fn add_foreign_keys(&self) -> anyhow::Result<()> {
        let mut conn = self.dbms.connect()?;
        conn.set_budget(crate::dbms::Budget::Long);
        for s in schema::foreign_keys(self.dbms.dialect().sql()) {
            conn.execute_batch(&s)?;
        }
        Ok(())
    }

    fn finish_run(
        &mut self,
        i: usize,
        connections: u64,
        measured: Measured,
        started_at: String,
        cx: &mut FinishCx,
    ) -> StepFile {
        let p = &self.p;
        let m = &measured.m;
        let mut status = status_of(m);
        let mut error = m.failure.clone();
        let warmup = p.warmup_seconds as f64;
        let measured_s = (m.duration.as_secs_f64() - warmup).max(1e-9);
        let counts = self.counts.take().unwrap_or_default();
        let new_orders = m.kinds[NEW_ORDER].ops;
        let (hw, counters) = measured.cost(
            cx.cost,
            &metrics::Work {
                op: "new_order",
                op_count: new_orders,
                inserted_rows: 0,
                is_query_step: true,
                measured_s: if measured.after_warmup {
                    measured_s
                } else {
                    m.duration.as_secs_f64()
                },
            },
        );
        let ended: u64 =
            TRANSACTIONS.iter().map(|&k| m.kinds[k].ops).sum::<u64>() + m.kinds[ROLLED_BACK].ops;
        let per_minute = |n: u64| round3(n as f64 * 60.0 / measured_s);
        let mut transactions = BTreeMap::new();
        for &k in &TRANSACTIONS {
            let mut count = m.kinds[k].ops;
            let mut retried = m.kinds[k].retried;
            if k == NEW_ORDER {
                count += m.kinds[ROLLED_BACK].ops;
                retried += m.kinds[ROLLED_BACK].retried;
            }
            let statements = counts.statements[k].load(Ordering::Relaxed);
            transactions.insert(
                KINDS[k].to_string(),
                TpccTransaction {
                    count,
                    share: round3(count as f64 / ended.max(1) as f64),
                    per_minute: per_minute(count),
                    retried,
                    statements_per_transaction: (count > 0)
                        .then(|| round3(statements as f64 / count as f64)),
                },
            );
        }
        let new_orders_step = new_orders + counts.warmup_new_orders.load(Ordering::Relaxed);
        let after = check::order_numbers(&self.dbms).ok();
        let new_orders_in_database = match (self.orders_before, after) {
            (Some(b), Some(a)) => Some(a.saturating_sub(b)),
            _ => None,
        };
        // Not after Ctrl-C: the checks read whole tables (minutes at 100 warehouses), and a
        // stopped run should stop now.
        let consistency = if p.check && status == Status::Ok {
            match check::run(&self.dbms) {
                Ok(c) => c,
                Err(e) => {
                    status = Status::Failed;
                    error = Some(format!("the consistency checks could not run: {e:#}"));
                    Vec::new()
                }
            }
        } else {
            Vec::new()
        };
        if status == Status::Ok {
            let broken: Vec<String> = consistency
                .iter()
                .filter(|c| !c.held)
                .map(|c| c.condition.to_string())
                .collect();
            if !broken.is_empty() {
                // Figures from a database that broke the specification's conditions are no
                // result to compare: the step fails, its figures kept.
                status = Status::Failed;
                error = Some(format!(
                    "the database broke TPC-C consistency condition(s) {} after the step \
                     (docs/tpcc.md, \"Consistency conditions\")",
                    broken.join(", ")
                ));
            }
        }
        let retried = TRANSACTIONS
            .iter()
            .chain([ROLLED_BACK].iter())
            .map(|&k| m.kinds[k].retried)
            .sum();
        let tpcc = TpccStep {
            warehouses: p.warehouses,
            connections,
            mix: p.mix.name().into(),
            isolation: serde_json::to_value(p.isolation)
                .ok()
                .and_then(|v| v.as_str().map(String::from))
                .unwrap_or_default(),
            planned_s: p.run_seconds,
            warmup_s: warmup,
            measured_s: round3(measured_s),
            nopm: per_minute(new_orders),
            tpm: per_minute(ended),
            new_orders,
            rolled_back: m.kinds[ROLLED_BACK].ops,
            retried,
            transactions,
            new_orders_step,
            new_orders_in_database,
            consistency,
        };
        let mut f = self.step_file(i, started_at, status, error);
        f.warnings = measured.warnings.clone();
        f.warnings.extend(run_warnings(p, &tpcc));
        f.duration_s = round3(measured_s);
        f.headline.value = tpcc.nopm;
        for &k in TRANSACTIONS.iter().chain([ROLLED_BACK].iter()) {
            f.ops
                .insert(KINDS[k].to_string(), op_stats(&m.kinds[k], measured_s));
        }
        f.table_rows = (cx.count_rows && status != Status::Failed)
            .then(|| count_rows(&self.dbms, &p.table_names(), cx))
            .flatten();
        f.series_file = measured.series_file.clone();
        f.payload = Some(Payload::Tpcc(tpcc));
        f.hardware = Some(hw);
        f.dbms = Some(counters);
        f
    }
}

/// What changes how a run step's figures read: a measured time well past the plan (the step
/// waited for transactions under way, a lock held them), and a mix that drifted from the one
/// asked for (retried transactions are replaced by a new draw, so the types that conflict most
/// lose share, as in sysbench-tpcc, and NOPM rises).
fn run_warnings(p: &TpccParams, t: &TpccStep) -> Vec<String> {
    let mut out = Vec::new();
    let planned = p.run_seconds as f64;
    if t.measured_s > planned + (0.1 * planned).max(1.0) {
        out.push(format!(
            "the measured time ({:.1} s) ran well past the planned {planned} s: transactions \
             under way at the end were waited for, and NOPM and TPM are over the longer time",
            t.measured_s
        ));
    }
    let total: u64 = t.transactions.values().map(|x| x.count).sum();
    if total >= 100 {
        let weights = p.mix.weights();
        for (k, w) in crate::results::tpcc::TRANSACTIONS.iter().zip(weights) {
            let asked = w as f64 / p.mix.total() as f64;
            let got = t.transactions.get(*k).map_or(0.0, |x| x.share);
            if (got - asked).abs() > 0.2 * asked && (got - asked).abs() > 0.02 {
                out.push(format!(
                    "{k} was {:.1}% of the transactions where the {} mix asks for {:.1}% \
                     (retried transactions are replaced by a new draw)",
                    got * 100.0,
                    p.mix.name(),
                    asked * 100.0
                ));
            }
        }
    }
    out
}

/// Progress: rows of the load, or seconds of a run step with its transactions per second.
struct TpccTicker {
    load: Option<u64>,
    done: u64,
}

impl Ticker for TpccTicker {
    fn tick(&mut self, row: &SecondRow) -> Tick {
        let secs = row.interval_s.max(1e-9);
        let k = &row.kinds;
        let errors = k.iter().map(|x| x.errors).sum();
        match self.load {
            Some(total) => {
                self.done += k[INSERT].rows;
                Tick {
                    second: row.index,
                    position: self.done.min(total),
                    rates: vec![(k[INSERT].rows as f64 / secs, "rows/s")],
                    target: None,
                    errors,
                    warmup: false,
                }
            }
            None => {
                self.done += 1;
                let all: u64 = TRANSACTIONS
                    .iter()
                    .chain([ROLLED_BACK, WARMUP].iter())
                    .map(|&t| k[t].ops)
                    .sum();
                Tick {
                    second: row.index,
                    position: self.done,
                    rates: vec![
                        (k[NEW_ORDER].ops as f64 * 60.0 / secs, "NOPM"),
                        (all as f64 / secs, "trx/s"),
                    ],
                    target: None,
                    errors,
                    warmup: k[WARMUP].ops > 0,
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn the_step_file_names_the_transactions_as_the_runner_does() {
        use crate::workload::tpcc::{KINDS, TRANSACTIONS};
        let runner: Vec<&str> = TRANSACTIONS.iter().map(|&k| KINDS[k]).collect();
        assert_eq!(runner, crate::results::tpcc::TRANSACTIONS);
    }
}
