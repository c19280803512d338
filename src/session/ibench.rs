//! The Insert Benchmark as a `Suite`: its steps, their progress view, and their step files.

use std::collections::BTreeMap;
use std::sync::atomic::Ordering;
use std::sync::Arc;

use super::events::{Display, Note, Tick};
use super::measure::{Measured, StepSetup, Ticker};
use super::suite::{
    cleanup_record, count_rows, op_stats, round3, status_of, FinishCx, Steps, Suite,
};
use crate::dbms::Dbms;
use crate::metrics;
use crate::results::{Headline, IbenchStep, Payload, Sla, Status, StepFile, StepParameters};
use crate::runner::{SecondRow, StepMeasurement};
use crate::workload::common::cleanup::Cleanup;
use crate::workload::ibench::{
    Ibench, IbenchParams, Prepared, StepDef, StepName, StepOutcome, DELETE, INSERT, KINDS, QUERY,
    SLA_FRACTION,
};

pub struct IbenchSuite {
    pub params: IbenchParams,
    /// One level of a `--clients` sweep: each level is its own cell with a fresh load, since
    /// rows and tables are per client.
    pub sweep: bool,
}

impl Suite for IbenchSuite {
    fn suite(&self) -> crate::suites::Suite {
        crate::suites::Suite::Ibench
    }

    fn preset(&self) -> &str {
        &self.params.preset
    }

    fn parameters(&self) -> anyhow::Result<serde_json::Value> {
        Ok(serde_json::to_value(&self.params)?)
    }

    fn step_names(&self) -> Vec<String> {
        self.params.steps.clone()
    }

    fn connections(&self) -> u64 {
        // qr/qp steps: a query, an insert and a delete connection per client; and dbperf's own.
        self.params.clients * 3 + 2
    }

    fn axes(&self) -> BTreeMap<String, String> {
        let mut a = BTreeMap::new();
        if self.sweep {
            a.insert("clients".to_string(), self.params.clients.to_string());
        }
        a
    }

    fn needs_existing_tables(&self) -> Option<String> {
        match self.params.step_names().first() {
            Some(first) if *first != StepName::Li0 => {
                Some("the steps must begin with l.i0".to_string())
            }
            _ => None,
        }
    }

    fn check_tables(&self, dbms: &Arc<dyn Dbms>) -> anyhow::Result<()> {
        match self.params.step_names().first() {
            Some(first) if *first != StepName::Li0 => {
                Ibench::new(self.params.clone(), dbms.clone()).check_tables(first)
            }
            _ => Ok(()),
        }
    }

    fn on(&self, dbms: Arc<dyn Dbms>) -> Box<dyn Steps> {
        let names = self.params.step_names();
        let all = self.params.all_step_names();
        Box::new(IbenchSteps {
            ib: Ibench::new(self.params.clone(), dbms.clone()),
            dbms,
            names,
            all,
            current: None,
        })
    }
}

struct IbenchSteps {
    ib: Ibench,
    dbms: Arc<dyn Dbms>,
    names: Vec<StepName>,
    all: Vec<StepName>,
    /// The step in progress: its definition and what was gathered before it.
    current: Option<(StepDef, Prepared)>,
}

impl Steps for IbenchSteps {
    fn count(&self) -> usize {
        self.names.len()
    }

    fn name(&self, i: usize) -> String {
        self.names[i].to_string()
    }

    fn begin(&mut self, i: usize) -> anyhow::Result<StepSetup> {
        let name = &self.names[i];
        let def = self.ib.params.step_def(name);
        let prepared = self.ib.prepare(&def)?;
        // The index among all steps seeds the data, so a step's rows do not depend on which
        // other steps run.
        let step_index = self.all.iter().position(|n| n == name).unwrap_or(i) as u64;
        let plan = self.ib.plan(&def, step_index);
        let display = if def.name == StepName::Lx {
            Display::Spinner {
                message: "inserting one batch, then building the secondary indexes".into(),
            }
        } else {
            Display::Bar {
                total: def.planned_rows(),
            }
        };
        let setup = StepSetup {
            name: def.name.to_string(),
            plan,
            kinds: def.kinds().into_iter().map(|k| (k, KINDS[k])).collect(),
            queries_per_op: None,
            warmup_s: 0,
            display,
            ticker: Box::new(IbenchTicker {
                def: def.clone(),
                rows_done: 0,
            }),
            warnings: prepared.warnings.clone(),
            runs_long: def.name == StepName::Lx,
        };
        self.current = Some((def, prepared));
        Ok(setup)
    }

    fn finish(
        &mut self,
        i: usize,
        measured: Measured,
        started_at: String,
        cx: &mut FinishCx,
    ) -> StepFile {
        let (def, prepared) = self.current.take().expect("finish follows begin");
        let m = &measured.m;
        let outcome = self.ib.outcome(&def, m, &prepared);
        let mut status = status_of(m);
        let mut error = m.failure.clone();
        let follows_query = self.names[i + 1..]
            .iter()
            .any(|n| matches!(n, StepName::Qr(_) | StepName::Qp(_)));
        let cleanup = if def.name == StepName::Li2 && status == Status::Ok && follows_query {
            let (budget_s, _) = self.ib.params.wait_budget();
            cx.note(Note::CleanupWait { budget_s });
            let c = self.ib.cleanup_and_wait(cx.interrupt);
            // Ctrl-C during the cleanup ends its wait with an error: the step was interrupted,
            // not failed (its measured part ended ok).
            if cx.interrupt.load(Ordering::SeqCst) {
                status = Status::Interrupted;
            } else if let Some(e) = &c.error {
                status = Status::Failed;
                error = Some(format!("cleanup after l.i2 failed: {e}"));
                cx.cleanup_fault = c.fault;
            }
            Some(c)
        } else {
            None
        };
        let table_rows = (cx.count_rows && status != Status::Failed)
            .then(|| count_rows(&self.dbms, &self.ib.params.tables(), cx))
            .flatten();
        let mut warnings = prepared.warnings.clone();
        warnings.extend(measured.warnings.iter().cloned());
        let mut sf = step_file(StepRecord {
            params: &self.ib.params,
            def: &def,
            started_at,
            measurement: Some(m),
            outcome: Some(&outcome),
            cleanup: cleanup.as_ref(),
            status,
            error,
            warnings,
            table_rows,
        });
        sf.series_file = measured.series_file.clone();
        let is_query = matches!(def.name, StepName::Qr(_) | StepName::Qp(_));
        let inserted = m.kinds[INSERT].rows;
        // The engine's own counts: rows for inserts, rows indexed for l.x (those there before
        // plus its batch), queries for qr/qp.
        let (op, op_count) = match def.name {
            StepName::Lx => ("indexed_row", prepared.rows_before + inserted),
            _ if is_query => ("query", m.kinds[QUERY].ops),
            _ => ("insert", inserted),
        };
        let (hw, counters) = measured.cost(
            cx.cost,
            &metrics::Work {
                op,
                op_count,
                inserted_rows: inserted,
                is_query_step: is_query,
                measured_s: m.duration.as_secs_f64(),
            },
        );
        sf.hardware = Some(hw);
        sf.dbms = Some(counters);
        sf
    }

    fn failed_before(&self, i: usize, error: String, started_at: String) -> StepFile {
        let def = self.ib.params.step_def(&self.names[i]);
        step_file(StepRecord {
            params: &self.ib.params,
            def: &def,
            started_at,
            measurement: None,
            outcome: None,
            cleanup: None,
            status: Status::Failed,
            error: Some(error),
            warnings: Vec::new(),
            table_rows: None,
        })
    }
}

/// Progress of an Insert Benchmark step: rows inserted against the plan, and the rates.
struct IbenchTicker {
    def: StepDef,
    rows_done: u64,
}

impl Ticker for IbenchTicker {
    fn tick(&mut self, row: &SecondRow) -> Tick {
        let secs = row.interval_s.max(1e-9);
        let k = &row.kinds;
        self.rows_done += k[INSERT].rows;
        let mut rates = Vec::new();
        if self.def.queries.is_some() {
            rates.push((k[QUERY].ops as f64 / secs, "q/s"));
        }
        rates.push((k[INSERT].rows as f64 / secs, "ins/s"));
        if self.def.deletes {
            rates.push((k[DELETE].rows as f64 / secs, "del/s"));
        }
        Tick {
            second: row.index,
            position: self.rows_done.min(self.def.planned_rows()),
            rates,
            target: row.target_rows_per_s,
            errors: k.iter().map(|x| x.errors).sum(),
            warmup: false,
        }
    }
}

/// Every step's setup: its clients and their tables.
fn parameters(p: &IbenchParams, def: &StepDef) -> StepParameters {
    StepParameters {
        clients: def.clients,
        tables: p.tables().into_iter().take(def.clients as usize).collect(),
    }
}

/// The Insert Benchmark's part of the step file: the step's shape and its SLA.
fn payload(def: &StepDef, sla: Option<Sla>) -> Payload {
    Payload::Ibench(IbenchStep {
        rows_per_commit: def.rows_per_commit,
        planned_rows: def.planned_rows(),
        rate_per_client: def.rate_per_client,
        deletes: def.deletes,
        queries: def.queries.map(|q| format!("{q:?}").to_lowercase()),
        sla,
    })
}

struct StepRecord<'a> {
    params: &'a IbenchParams,
    def: &'a StepDef,
    started_at: String,
    measurement: Option<&'a StepMeasurement>,
    outcome: Option<&'a StepOutcome>,
    cleanup: Option<&'a Cleanup>,
    status: Status,
    error: Option<String>,
    warnings: Vec<String>,
    table_rows: Option<BTreeMap<String, u64>>,
}

fn step_file(r: StepRecord) -> StepFile {
    let step = r.def.name.to_string();
    let (metric, unit) = r.def.headline();
    let secs = r
        .measurement
        .map(|m| m.duration.as_secs_f64())
        .unwrap_or(0.0);
    let mut ops = BTreeMap::new();
    if let Some(m) = r.measurement {
        for k in r.def.kinds() {
            ops.insert(KINDS[k].to_string(), op_stats(&m.kinds[k], secs));
        }
    }
    let outcome = r.outcome;
    let sla = outcome
        .and_then(|o| o.sla)
        .map(|(target, achieved, met)| Sla {
            target_rows_per_s: target,
            achieved_rows_per_s: round3(achieved),
            ratio: round3(achieved / target),
            required_ratio: SLA_FRACTION,
            met: (r.status == Status::Ok).then_some(met),
        });
    let headline = Headline {
        metric: metric.to_string(),
        value: round3(outcome.map(|o| o.headline_value).unwrap_or(0.0)),
        unit: unit.to_string(),
    };
    let mut f = StepFile::blank(step, r.started_at, headline, parameters(r.params, r.def));
    f.status = r.status;
    f.error = r.error;
    f.warnings = r.warnings;
    f.duration_s = round3(secs);
    f.ops = ops;
    f.interval_rate_percentiles = outcome
        .map(|o| o.interval_percentiles.iter().cloned().collect())
        .unwrap_or_default();
    f.cleanup = r.cleanup.map(cleanup_record);
    f.table_rows = r.table_rows;
    f.payload = Some(payload(r.def, sla));
    f
}
