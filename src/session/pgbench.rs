//! pgbench as a `Suite`: the init (`pgbench -i`), then a run step per level of clients, each
//! after pgbench's vacuum of branches and tellers and truncation of history (unless
//! --no-vacuum).

use std::sync::atomic::Ordering::Relaxed;
use std::sync::Arc;
use std::time::{Duration, Instant};

use super::events::{Display, Tick};
use super::measure::{Measured, StepSetup, Ticker};
use super::suite::{count_rows, op_stats, round3, status_of, FinishCx, Steps, Suite};
use crate::dbms::{Dbms, SqlDialect};
use crate::engines::Engine;
use crate::metrics;
use crate::results::pgbench::{PgbenchCommand, PgbenchInit, PgbenchInitStep, PgbenchRun};
use crate::results::pgbench::{PgbenchScript, PgbenchStep};
use crate::results::{Headline, Payload, Status, StepFile, StepParameters};
use crate::runner::{Lifetime, Pace, Role, RoleSpec, SecondRow, StepPlan};
use crate::workload::common::rand::stream_seed;
use crate::workload::pgbench::client::{Client, ClientSpec, Shared, Until};
use crate::workload::pgbench::expr::Symbols;
use crate::workload::pgbench::init::{self, InitStep, Loader};
use crate::workload::pgbench::{script, PgbenchParams, Source, INIT, INSERT, SCRIPT_KINDS};

pub struct PgbenchSuite {
    pub params: PgbenchParams,
}

impl Suite for PgbenchSuite {
    fn suite(&self) -> crate::suites::Suite {
        crate::suites::Suite::Pgbench
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
        self.params.clients.iter().copied().max().unwrap_or(1) + 2
    }

    fn needs_existing_tables(&self) -> Option<String> {
        (!self.params.init).then(|| "--no-init cannot be used with it".to_string())
    }

    fn check_tables(&self, dbms: &Arc<dyn Dbms>) -> anyhow::Result<()> {
        if self.params.init {
            return Ok(());
        }
        let mut conn = dbms.connect()?;
        for t in init::TABLES {
            let sql = dbms.dialect().table_exists_sql(t);
            if conn.query_i64(&sql)?.unwrap_or(0) == 0 {
                return crate::error::bad_input(format!(
                    "--no-init needs pgbench's tables, and table {t} is missing"
                ));
            }
        }
        Ok(())
    }

    fn refuses(&self, targets: &[crate::spec::target::Target]) -> Option<String> {
        let steps = init::steps_of(&self.params.init_steps).ok()?;
        for t in targets {
            let d = match t.engine {
                Engine::Postgres | Engine::Null => continue,
                Engine::Sqlite => SqlDialect::Sqlite,
                Engine::MariaDb | Engine::MySql => {
                    SqlDialect::MySql(crate::dbms::mysql::Storage::InnoDb)
                }
            };
            if self.params.fillfactor != 100 {
                return Some(format!(
                    "--fillfactor is PostgreSQL's, and target {} is {}",
                    t.name,
                    t.engine.entry().product
                ));
            }
            if let Some(why) = steps.iter().find_map(|s| init::refused(*s, d)) {
                return Some(format!("--init-steps: {why}, and target {} is not", t.name));
            }
        }
        None
    }

    fn on(&self, dbms: Arc<dyn Dbms>) -> Box<dyn Steps> {
        let mut steps = Vec::new();
        if self.params.init {
            steps.push(None);
        }
        if self.params.run {
            steps.extend(self.params.clients.iter().map(|&c| Some(c)));
        }
        Box::new(PgbenchSteps {
            p: self.params.clone(),
            dbms,
            steps,
            shared: None,
            init_times: Vec::new(),
            generate_started: None,
        })
    }
}

struct PgbenchSteps {
    p: PgbenchParams,
    dbms: Arc<dyn Dbms>,
    /// None for the init, else the run step's clients.
    steps: Vec<Option<u64>>,
    /// The run step's scripts and counters.
    shared: Option<Arc<Shared>>,
    /// The init's steps done so far, with their seconds.
    init_times: Vec<PgbenchInitStep>,
    generate_started: Option<Instant>,
}

impl PgbenchSteps {
    fn dialect(&self) -> SqlDialect {
        self.dbms.dialect().sql()
    }

    fn load_connections(&self) -> u64 {
        match self.dialect() {
            // One writer at a time: more connections would only wait on each other.
            SqlDialect::Sqlite => 1,
            _ => self.p.clients.iter().copied().max().unwrap_or(1).max(1),
        }
    }

    /// Runs one init step's statements, timed.
    fn init_statements(&mut self, step: InitStep, letter: char) -> anyhow::Result<()> {
        let t0 = Instant::now();
        let mut conn = self.dbms.connect()?;
        conn.set_budget(crate::dbms::Budget::Long);
        for s in init::statements(step, self.dialect(), self.p.scale, self.p.fillfactor) {
            conn.execute_batch(&s)?;
        }
        self.init_times.push(PgbenchInitStep {
            letter: letter.to_string(),
            name: step.name().into(),
            seconds: round3(t0.elapsed().as_secs_f64()),
        });
        Ok(())
    }

    /// The init's steps before its generation run here, the generation is the measured
    /// part, and the steps after it run in `finish_init`.
    fn init_setup(&mut self) -> anyhow::Result<StepSetup> {
        self.init_times.clear();
        let letters: Vec<char> = self.p.init_steps.chars().filter(|c| *c != ' ').collect();
        let mut generate = None;
        for &c in &letters {
            let Some(step) = InitStep::of(c) else {
                continue;
            };
            if step.generates() {
                generate = Some(step);
                break;
            }
            self.init_statements(step, c)?;
        }
        self.generate_started = Some(Instant::now());
        if generate.is_some() {
            let mut conn = self.dbms.connect()?;
            conn.set_budget(crate::dbms::Budget::Long);
            for s in init::truncate(self.dialect()) {
                conn.execute_batch(&s)?;
            }
        }
        let n = if generate.is_some() {
            self.load_connections()
        } else {
            1
        };
        let server = generate == Some(InitStep::ServerGenerate);
        let roles = (0..n)
            .map(|k| {
                let (dbms, scale) = (self.dbms.clone(), self.p.scale);
                let (k, n) = if generate.is_some() { (k, n) } else { (0, 0) };
                RoleSpec {
                    name: format!("load{}", k + 1),
                    pace: Pace::Closed,
                    lifetime: Lifetime::Primary,
                    permits_to: None,
                    make: Box::new(move || {
                        let l = if n == 0 {
                            Loader::none(&dbms)?
                        } else {
                            Loader::new(&dbms, scale, k, n, server)?
                        };
                        Ok(Box::new(l) as Box<dyn Role>)
                    }),
                }
            })
            .collect();
        let total = init::planned_rows(self.p.scale);
        Ok(StepSetup {
            name: INIT.into(),
            plan: StepPlan {
                kinds: crate::workload::pgbench::kinds(),
                roles,
                target_rows_per_s: None,
                paced_kind: None,
            },
            kinds: vec![(INSERT, "insert")],
            queries_per_op: None,
            warmup_s: 0,
            display: Display::Bar { total },
            ticker: Box::new(PgbenchTicker {
                load: Some(total),
                done: 0,
                scripts: 0,
            }),
            warnings: Vec::new(),
            runs_long: true,
        })
    }

    /// The scripts as this target is sent them, their variables numbered together.
    fn scripts(&self) -> anyhow::Result<Shared> {
        let mut symbols = Symbols::default();
        for name in ["scale", "client_id", "default_seed", "random_seed"] {
            symbols.slot(name);
        }
        let mut out = Vec::new();
        for s in &self.p.scripts {
            let text = match &s.source {
                Source::Builtin(b) => b.text_for(self.dialect()),
                Source::File { text, .. } => text.clone(),
            };
            let parsed = script::parse(&s.name(), s.weight, &text, &mut symbols)
                .or_else(crate::error::bad_input)?;
            out.push(parsed);
        }
        Ok(Shared::new(out, symbols))
    }

    fn run_setup(&mut self, i: usize, clients: u64) -> anyhow::Result<StepSetup> {
        if !self.p.no_vacuum {
            let mut conn = self.dbms.connect()?;
            conn.set_budget(crate::dbms::Budget::Long);
            for s in init::before_run(self.dialect()) {
                conn.execute_batch(&s)?;
            }
        }
        let shared = Arc::new(self.scripts()?);
        self.shared = Some(shared.clone());
        let p = &self.p;
        let until = match (p.time_s, p.transactions) {
            (_, Some(t)) => Until::Transactions(t),
            (t, None) => Until::Time(Duration::from_secs(t.unwrap_or(1))),
        };
        let default_seed = stream_seed(p.seed, 0, 0, 7) as i64;
        let roles = (0..clients)
            .map(|c| {
                let spec = ClientSpec {
                    scale: p.scale,
                    client_id: c,
                    mode: p.query_mode,
                    until,
                    max_tries: p.max_tries,
                    connect: p.connect,
                    seed: stream_seed(p.seed, 2 + i as u64, c + 1, 0),
                    default_seed,
                };
                let (dbms, shared) = (self.dbms.clone(), shared.clone());
                RoleSpec {
                    name: format!("c{}", c + 1),
                    pace: match p.rate {
                        Some(r) => Pace::Rate {
                            ops_per_s: r / clients as f64,
                        },
                        None => Pace::Closed,
                    },
                    lifetime: Lifetime::Primary,
                    permits_to: None,
                    make: Box::new(move || {
                        Ok(Box::new(Client::new(dbms, shared, spec)?) as Box<dyn Role>)
                    }),
                }
            })
            .collect();
        let n = shared.scripts.len();
        let kinds = (0..n).map(|k| (k, SCRIPT_KINDS[k])).collect();
        let total = match until {
            Until::Time(d) => d.as_secs(),
            Until::Transactions(t) => t.saturating_mul(clients),
        };
        Ok(StepSetup {
            name: p.run_label(clients),
            plan: StepPlan {
                kinds: crate::workload::pgbench::kinds(),
                roles,
                target_rows_per_s: None,
                paced_kind: None,
            },
            kinds,
            queries_per_op: None,
            warmup_s: 0,
            display: Display::Bar { total },
            ticker: Box::new(PgbenchTicker {
                load: matches!(until, Until::Transactions(_)).then_some(total),
                done: 0,
                scripts: n,
            }),
            warnings: Vec::new(),
            runs_long: false,
        })
    }
}

impl Steps for PgbenchSteps {
    fn count(&self) -> usize {
        self.steps.len()
    }

    fn name(&self, i: usize) -> String {
        match self.steps[i] {
            None => INIT.to_string(),
            Some(c) => self.p.run_label(c),
        }
    }

    fn begin(&mut self, i: usize) -> anyhow::Result<StepSetup> {
        match self.steps[i] {
            None => self.init_setup(),
            Some(c) => self.run_setup(i, c),
        }
    }

    fn finish(&mut self, i: usize, m: Measured, started_at: String, cx: &mut FinishCx) -> StepFile {
        match self.steps[i] {
            None => self.finish_init(m, started_at, cx),
            Some(c) => self.finish_run(i, c, m, started_at, cx),
        }
    }

    fn failed_before(&self, i: usize, error: String, started_at: String) -> StepFile {
        self.step_file(i, started_at, Status::Failed, Some(error))
    }
}

impl PgbenchSteps {
    fn step_file(
        &self,
        i: usize,
        started_at: String,
        status: Status,
        error: Option<String>,
    ) -> StepFile {
        let (metric, unit, clients) = match self.steps[i] {
            None => ("inserts_per_s", "rows/s", self.load_connections()),
            Some(c) => ("tps", "trx/s", c),
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

    fn finish_init(
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
        let letters: Vec<char> = self.p.init_steps.chars().filter(|c| *c != ' ').collect();
        let at = letters
            .iter()
            .position(|c| InitStep::of(*c).is_some_and(|s| s.generates()));
        if let (Some(g), Some(t0)) = (at, self.generate_started) {
            let step = InitStep::of(letters[g]).unwrap_or(InitStep::ClientGenerate);
            self.init_times.push(PgbenchInitStep {
                letter: letters[g].to_string(),
                name: step.name().into(),
                seconds: round3(t0.elapsed().as_secs_f64()),
            });
            if status == Status::Ok {
                for &c in &letters[g + 1..] {
                    let Some(step) = InitStep::of(c) else {
                        continue;
                    };
                    if let Err(e) = self.init_statements(step, c) {
                        status = Status::Failed;
                        error = Some(format!(
                            "the init's step {c} ({}) failed: {e:#}",
                            step.name()
                        ));
                        break;
                    }
                }
            }
        }
        let mut f = self.step_file(0, started_at, status, error);
        f.warnings = measured.warnings.clone();
        f.duration_s = round3(secs);
        f.headline.value = round3(inserted as f64 / secs.max(1e-9));
        f.ops
            .insert("insert".into(), op_stats(&m.kinds[INSERT], secs));
        f.table_rows = (cx.count_rows && status == Status::Ok)
            .then(|| count_rows(&self.dbms, &self.p.table_names(), cx))
            .flatten();
        f.series_file = measured.series_file.clone();
        f.payload = Some(Payload::Pgbench(PgbenchStep {
            init: Some(PgbenchInit {
                scale: self.p.scale,
                fillfactor: self.p.fillfactor,
                init_steps: self.p.init_steps.clone(),
                connections: self.load_connections(),
                steps: self.init_times.clone(),
            }),
            run: None,
        }));
        f.hardware = Some(hw);
        f.dbms = Some(counters);
        f
    }

    fn finish_run(
        &mut self,
        i: usize,
        clients: u64,
        measured: Measured,
        started_at: String,
        cx: &mut FinishCx,
    ) -> StepFile {
        let m = &measured.m;
        let status = status_of(m);
        let secs = m.duration.as_secs_f64().max(1e-9);
        let shared = self.shared.take();
        let run = shared.as_ref().map(|s| self.run_part(s, clients, m, secs));
        let ok = run.as_ref().map_or(0, |r| r.transactions);
        let (hw, counters) = measured.cost(
            cx.cost,
            &metrics::Work {
                op: "transaction",
                op_count: ok,
                inserted_rows: 0,
                is_query_step: true,
                measured_s: secs,
            },
        );
        let mut f = self.step_file(i, started_at, status, m.failure.clone());
        f.warnings = measured.warnings.clone();
        f.duration_s = round3(secs);
        f.headline.value = run.as_ref().map_or(0.0, |r| r.tps);
        if let Some(s) = &shared {
            for (k, sc) in s.scripts.iter().enumerate() {
                f.ops
                    .insert(op_name(s, k, &sc.name), op_stats(&m.kinds[k], secs));
            }
        }
        f.table_rows = (cx.count_rows && status != Status::Failed)
            .then(|| count_rows(&self.dbms, &self.p.table_names(), cx))
            .flatten();
        f.series_file = measured.series_file.clone();
        f.payload = Some(Payload::Pgbench(PgbenchStep { init: None, run }));
        f.hardware = Some(hw);
        f.dbms = Some(counters);
        f
    }

    fn run_part(
        &self,
        s: &Shared,
        clients: u64,
        m: &crate::runner::StepMeasurement,
        secs: f64,
    ) -> PgbenchRun {
        let p = &self.p;
        let sum = |f: &dyn Fn(&crate::workload::pgbench::client::ScriptStats) -> u64| {
            s.stats.iter().map(f).sum::<u64>()
        };
        let ok = sum(&|x| x.ok.load(Relaxed));
        let (ser, dead, other) = (
            sum(&|x| x.serialization_failures.load(Relaxed)),
            sum(&|x| x.deadlock_failures.load(Relaxed)),
            sum(&|x| x.other_failures.load(Relaxed)),
        );
        let limit_ns = p.latency_limit_ms.map(|ms| (ms * 1e6) as u64);
        let late = limit_ns.map(|l| {
            (0..s.scripts.len())
                .map(|k| {
                    m.kinds[k]
                        .latency
                        .count_between(l.saturating_add(1), u64::MAX)
                })
                .sum()
        });
        let mean_ms = |ns: u64, n: u64| (n > 0).then(|| round3(ns as f64 / n as f64 / 1e6));
        PgbenchRun {
            scale: p.scale,
            clients,
            query_mode: p.query_mode.name().into(),
            planned_s: p.time_s.filter(|_| p.transactions.is_none()),
            transactions_per_client: p.transactions,
            measured_s: round3(secs),
            tps: round3(ok as f64 / secs),
            initial_connection_ms: mean_ms(
                s.initial_connect_ns.load(Relaxed),
                s.initial_connects.load(Relaxed),
            )
            .unwrap_or(0.0),
            connection_ms: p
                .connect
                .then(|| mean_ms(s.connect_ns.load(Relaxed), s.connects.load(Relaxed)))
                .flatten(),
            transactions: ok,
            failed: ser + dead + other,
            serialization_failures: ser,
            deadlock_failures: dead,
            other_failures: other,
            retries: sum(&|x| x.retries.load(Relaxed)),
            retried: sum(&|x| x.retried.load(Relaxed)),
            max_tries: p.max_tries,
            latency_limit_ms: p.latency_limit_ms,
            late,
            rate: p.rate,
            scripts: s
                .scripts
                .iter()
                .zip(&s.stats)
                .enumerate()
                .map(|(k, (sc, st))| {
                    let n = st.ok.load(Relaxed);
                    PgbenchScript {
                        name: op_name(s, k, &sc.name),
                        weight: sc.weight,
                        kind: SCRIPT_KINDS[k].into(),
                        transactions: n,
                        failed: st.serialization_failures.load(Relaxed)
                            + st.deadlock_failures.load(Relaxed)
                            + st.other_failures.load(Relaxed),
                        tps: round3(n as f64 / secs),
                        statements_per_transaction: (n > 0)
                            .then(|| round3(st.statements.load(Relaxed) as f64 / n as f64)),
                        commands: sc
                            .commands
                            .iter()
                            .zip(&st.commands)
                            .map(|(c, cs)| PgbenchCommand {
                                line: c.line as u64,
                                text: c.text.clone(),
                                count: cs.count.load(Relaxed),
                                latency_ms: mean_ms(cs.ns.load(Relaxed), cs.count.load(Relaxed)),
                            })
                            .collect(),
                    }
                })
                .collect(),
        }
    }
}

/// A script's name in the step file: its own, or with `#k` when an earlier script has it.
fn op_name(s: &Shared, k: usize, name: &str) -> String {
    if s.scripts[..k].iter().any(|x| x.name == name) {
        format!("{name}#{}", k + 1)
    } else {
        name.to_string()
    }
}

/// Progress: rows of the init, seconds or transactions of a run step with its TPS.
struct PgbenchTicker {
    /// The bar's total when it counts rows or transactions rather than seconds.
    load: Option<u64>,
    done: u64,
    /// Script kinds of a run step (0 for the init).
    scripts: usize,
}

impl Ticker for PgbenchTicker {
    fn tick(&mut self, row: &SecondRow) -> Tick {
        let secs = row.interval_s.max(1e-9);
        let k = &row.kinds;
        let errors = k.iter().map(|x| x.errors).sum();
        let (count, unit) = if self.scripts == 0 {
            (k[INSERT].rows, "rows/s")
        } else {
            (k[..self.scripts].iter().map(|x| x.ops).sum(), "tps")
        };
        self.done += match self.load {
            Some(_) => count,
            None => 1,
        };
        Tick {
            second: row.index,
            position: self.load.map_or(self.done, |t| self.done.min(t)),
            rates: vec![(count as f64 / secs, unit)],
            target: None,
            errors,
            warmup: false,
        }
    }
}
