//! The sysbench microbenchmarks as a `Suite`: the load, then every selected microbenchmark, one
//! step file each.

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use super::events::{Display, Note, Tick};
use super::measure::{Measured, StepSetup, Ticker};
use super::suite::{
    cleanup_record, count_rows, op_stats, round3, status_of, FinishCx, Steps, Suite,
};
use crate::dbms::Dbms;
use crate::metrics;
use crate::results::hardware::{DbmsCounters, Hardware};
use crate::results::{
    Headline, Payload, Status, StepFile, StepParameters, SysbenchStatement, SysbenchStep,
};
use crate::runner::SecondRow;
use crate::workload::sysbench::roles::{EVENT, INDEX, INSERT, KINDS, WARMUP};
use crate::workload::sysbench::{group_2024, Outcome, Planned, Sysbench, SysbenchParams, LOAD};

pub struct SysbenchSuite {
    pub params: SysbenchParams,
}

impl Suite for SysbenchSuite {
    fn suite(&self) -> crate::suites::Suite {
        crate::suites::Suite::Sysbench
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
        let most = self
            .params
            .planned()
            .iter()
            .map(|t| self.params.threads_of(t))
            .max()
            .unwrap_or(1);
        most + 2
    }

    fn needs_existing_tables(&self) -> Option<String> {
        (!self.params.load).then(|| "--skip-load cannot be used with it".to_string())
    }

    fn check_tables(&self, dbms: &Arc<dyn Dbms>) -> anyhow::Result<()> {
        if self.params.load {
            return Ok(());
        }
        Sysbench::new(self.params.clone(), dbms.clone()).check_tables()
    }

    fn refuses(&self, targets: &[crate::spec::target::Target]) -> Option<String> {
        let t = targets
            .iter()
            .find(|t| !t.engine.entry().ids_without_primary_key)?;
        (self.params.usepk == 0).then(|| {
            format!(
                "--usepk 0 needs a server target: {} assigns ids only to an INTEGER PRIMARY \
                 KEY, and target {} is {}",
                t.engine.entry().product,
                t.name,
                t.engine.entry().product
            )
        })
    }

    fn on(&self, dbms: Arc<dyn Dbms>) -> Box<dyn Steps> {
        let mut steps: Vec<Step> = Vec::new();
        if self.params.load {
            steps.push(Step::Load);
        }
        steps.extend(self.params.planned().into_iter().map(Step::Test));
        Box::new(SysbenchSteps {
            sb: Sysbench::new(self.params.clone(), dbms.clone()),
            dbms,
            steps,
            partial: None,
        })
    }
}

enum Step {
    Load,
    Test(Planned),
}

struct SysbenchSteps {
    sb: Sysbench,
    dbms: Arc<dyn Dbms>,
    steps: Vec<Step>,
    /// Statements completed within failed events of the step in progress.
    partial: Option<Arc<AtomicU64>>,
}

impl SysbenchSteps {
    /// The microbenchmark's position in the run (1-based), which seeds its random streams.
    fn test_index(&self, i: usize) -> u64 {
        let loads = usize::from(self.sb.params.load);
        (i - loads) as u64 + 1
    }
}

impl Steps for SysbenchSteps {
    fn count(&self) -> usize {
        self.steps.len()
    }

    fn name(&self, i: usize) -> String {
        match &self.steps[i] {
            Step::Load => LOAD.to_string(),
            Step::Test(t) => t.label(),
        }
    }

    fn begin(&mut self, i: usize) -> anyhow::Result<StepSetup> {
        let p = &self.sb.params;
        match &self.steps[i] {
            Step::Load => {
                let total = p.rows * p.tables;
                Ok(StepSetup {
                    name: LOAD.to_string(),
                    plan: self.sb.load_plan(),
                    kinds: [INSERT, INDEX].iter().map(|&k| (k, KINDS[k])).collect(),
                    queries_per_op: None,
                    warmup_s: 0,
                    display: Display::Bar { total },
                    ticker: Box::new(SysbenchTicker::load(total)),
                    warnings: Vec::new(),
                    // Multi-row inserts into tables without a limit on their size, and the
                    // index builds.
                    runs_long: true,
                })
            }
            Step::Test(t) => {
                let (plan, partial) = self.sb.test_plan(t, self.test_index(i));
                self.partial = Some(partial);
                let planned_s = p.seconds_of(&t.entry);
                let spe = t.bench.statements_per_event();
                Ok(StepSetup {
                    name: t.label(),
                    plan,
                    kinds: [EVENT, WARMUP].iter().map(|&k| (k, KINDS[k])).collect(),
                    queries_per_op: Some(spe),
                    warmup_s: if planned_s.is_some() {
                        p.warmup_seconds
                    } else {
                        0
                    },
                    display: Display::Bar {
                        total: planned_s.map(|s| s + p.warmup_seconds).unwrap_or(1),
                    },
                    ticker: Box::new(SysbenchTicker::test(spe)),
                    warnings: Vec::new(),
                    // A full scan per event (scan) may take longer than the statement timeout.
                    runs_long: t.bench.reads_whole_tables(),
                })
            }
        }
    }

    fn finish(
        &mut self,
        i: usize,
        measured: Measured,
        started_at: String,
        cx: &mut FinishCx,
    ) -> StepFile {
        match &self.steps[i] {
            Step::Load => self.finish_load(measured, started_at, cx),
            Step::Test(t) => {
                let t = t.clone();
                self.finish_test(&t, measured, started_at, cx)
            }
        }
    }

    fn failed_before(&self, i: usize, error: String, started_at: String) -> StepFile {
        let p = &self.sb.params;
        let headline = Headline {
            metric: "queries_per_s".into(),
            value: 0.0,
            unit: "queries/s".into(),
        };
        let mut f = StepFile::blank(
            self.name(i),
            started_at,
            headline,
            self.parameters(p.threads),
        );
        f.status = Status::Failed;
        f.error = Some(error);
        f
    }
}

impl SysbenchSteps {
    /// Every step's setup: its threads and the tables.
    fn parameters(&self, clients: u64) -> StepParameters {
        StepParameters {
            clients,
            tables: self.sb.params.table_names(),
        }
    }

    fn finish_load(
        &mut self,
        measured: Measured,
        started_at: String,
        cx: &mut FinishCx,
    ) -> StepFile {
        let p = &self.sb.params;
        let m = &measured.m;
        let status = status_of(m);
        let secs = m.duration.as_secs_f64();
        let mut ops = BTreeMap::new();
        for k in [INSERT, INDEX] {
            ops.insert(KINDS[k].to_string(), op_stats(&m.kinds[k], secs));
        }
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
        let table_rows = (cx.count_rows && status != Status::Failed)
            .then(|| count_rows(&self.dbms, &p.table_names(), cx))
            .flatten();
        let headline = Headline {
            metric: "inserts_per_s".into(),
            value: round3(self.sb.load_rate(m)),
            unit: "rows/s".into(),
        };
        let mut f = StepFile::blank(LOAD.into(), started_at, headline, self.parameters(1));
        f.status = status;
        f.error = m.failure.clone();
        f.warnings = measured.warnings.clone();
        f.duration_s = round3(secs);
        f.ops = ops;
        f.table_rows = table_rows;
        f.series_file = measured.series_file.clone();
        f.hardware = Some(hw);
        f.dbms = Some(counters);
        f
    }

    fn finish_test(
        &mut self,
        t: &Planned,
        measured: Measured,
        started_at: String,
        cx: &mut FinishCx,
    ) -> StepFile {
        let p = &self.sb.params;
        let label = t.label();
        let m = &measured.m;
        let partial = self
            .partial
            .take()
            .map(|x| x.load(Ordering::Relaxed))
            .unwrap_or(0);
        let o = self.sb.outcome(t, m, partial);
        let (hw, counters) = cost(t, &measured, &o, cx);
        let mut status = status_of(m);
        let mut error = m.failure.clone();
        let cleanup = if t.entry.postwrite && status == Status::Ok {
            let (budget_s, _) = p.postwrite_budget();
            cx.note(Note::CleanupWait { budget_s });
            let c = self.sb.postwrite(cx.interrupt);
            // Ctrl-C during the cleanup ends its wait with an error: interrupted, not failed.
            if cx.interrupt.load(Ordering::SeqCst) {
                status = Status::Interrupted;
            } else if let Some(err) = &c.error {
                status = Status::Failed;
                error = Some(format!("postwrite cleanup failed: {err}"));
                cx.cleanup_fault = c.fault;
            }
            Some(cleanup_record(&c))
        } else {
            None
        };
        let mut ops = BTreeMap::new();
        ops.insert(
            KINDS[EVENT].to_string(),
            op_stats(&m.kinds[EVENT], o.measured_s),
        );
        let threads = p.threads_of(t);
        let sysbench = self.step_record(t, &o);
        let table_rows = (cx.count_rows && status != Status::Failed)
            .then(|| count_rows(&self.dbms, &p.table_names(), cx))
            .flatten();
        let headline = Headline {
            metric: o.headline_metric.into(),
            value: round3(o.headline_value),
            unit: o.headline_unit.into(),
        };
        let mut f = StepFile::blank(label, started_at, headline, self.parameters(threads));
        f.status = status;
        f.error = error;
        f.warnings = measured.warnings.clone();
        f.duration_s = round3(o.measured_s);
        f.ops = ops;
        f.interval_rate_percentiles = o.interval_percentiles.iter().cloned().collect();
        f.cleanup = cleanup;
        f.table_rows = table_rows;
        f.series_file = measured.series_file.clone();
        f.payload = Some(Payload::Sysbench(sysbench));
        f.hardware = Some(hw);
        f.dbms = Some(counters);
        f
    }

    /// The step file's `sysbench` section: what the test is and what it counted.
    fn step_record(&self, t: &Planned, o: &Outcome) -> SysbenchStep {
        let p = &self.sb.params;
        let (e, b, label) = (&t.entry, t.bench, t.label());
        let planned_s = p.seconds_of(e);
        let statements = self
            .sb
            .statements(t)
            .into_iter()
            .map(|(sql, per_event, prepared)| SysbenchStatement {
                sql,
                per_event,
                prepared,
            })
            .collect();
        SysbenchStep {
            test: b.name.into(),
            variant: e.variant.suffix().trim_start_matches('.').to_string(),
            group_2024: group_2024(&label).into(),
            label,
            range: e.range,
            range_use: json_word(&b.range),
            custom_range: t.custom_range,
            group: b.group.key().into(),
            group_title: b.group.title().into(),
            reported: e.variant.reported(),
            original: b.original.into(),
            transaction: b.trx,
            keys: json_word(&b.keys),
            prepared: p.prepared,
            threads: p.threads_of(t),
            tables: p.tables,
            rows_per_table: p.rows,
            planned_s,
            warmup_s: if planned_s.is_some() {
                p.warmup_seconds as f64
            } else {
                0.0
            },
            statements,
            statements_per_event: b.statements_per_event(),
            events: o.events,
            events_per_s: round3(o.events as f64 / o.measured_s),
            warmup_events: o.warmup_events,
            queries: o.queries,
            queries_per_s: round3(o.queries as f64 / o.measured_s),
            reads: o.counts[0],
            writes: o.counts[1],
            other: o.counts[2],
            errors: o.errors,
            scan_rows_per_s: o.scan_rows_per_s.map(round3),
        }
    }
}

/// The test's cost over the measured interval: from the end of the warm-up (exactly the
/// measured statements), or the whole step when it had no warm-up or ended within it.
fn cost(t: &Planned, measured: &Measured, o: &Outcome, cx: &FinishCx) -> (Hardware, DbmsCounters) {
    let b = t.bench;
    let (op_count, inserted, measured_s) = if measured.after_warmup {
        (o.queries, b.inserts_per_event() * o.events, o.measured_s)
    } else {
        let all_events = o.events + o.warmup_events;
        (
            o.queries + o.warmup_events * b.statements_per_event(),
            b.inserts_per_event() * all_events,
            measured.m.duration.as_secs_f64(),
        )
    };
    measured.cost(
        cx.cost,
        &metrics::Work {
            op: "query",
            op_count,
            inserted_rows: inserted,
            is_query_step: true,
            measured_s,
        },
    )
}

/// A unit enum's serde name (`"in_list"`, `"zipfian"`).
fn json_word<T: serde::Serialize>(v: &T) -> String {
    serde_json::to_value(v)
        .ok()
        .and_then(|v| v.as_str().map(String::from))
        .unwrap_or_default()
}

/// Progress of a sysbench step: rows of the load, or seconds of a microbenchmark.
struct SysbenchTicker {
    load: Option<u64>,
    queries_per_event: u64,
    done: u64,
}

impl SysbenchTicker {
    fn load(total: u64) -> Self {
        SysbenchTicker {
            load: Some(total),
            queries_per_event: 0,
            done: 0,
        }
    }

    fn test(queries_per_event: u64) -> Self {
        SysbenchTicker {
            load: None,
            queries_per_event,
            done: 0,
        }
    }
}

impl Ticker for SysbenchTicker {
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
                let events = k[EVENT].ops + k[WARMUP].ops;
                Tick {
                    second: row.index,
                    position: self.done,
                    rates: vec![
                        ((events * self.queries_per_event) as f64 / secs, "queries/s"),
                        (events as f64 / secs, "events/s"),
                    ],
                    target: None,
                    errors,
                    warmup: k[WARMUP].ops > 0,
                }
            }
        }
    }
}
