//! The sysbench-style microbenchmarks (spec §5): the `sbtest<N>` tables, their load, and every
//! microbenchmark of the original's 2024 and current lists, run in the original's order. The
//! microbenchmarks themselves are data (`catalog`), as are the run orders (`order`).

pub mod catalog;
pub mod keys;
pub mod order;
pub mod roles;
pub mod sql;

use std::sync::atomic::{AtomicBool, AtomicU64};
use std::sync::Arc;
use std::time::Duration;

use serde::Serialize;

use crate::dbms::Dbms;
use crate::error::bad_input;
use crate::runner::{Lifetime, Pace, Role, RoleSpec, StepMeasurement, StepPlan};
use crate::workload::common::rand::{rng, stream_seed};
use crate::workload::common::{cleanup::Cleanup, rates::interval_rate_percentiles};
use catalog::{Keys, Metric, Microbenchmark, RangeUse};
use keys::{KeyGen, Zipf};
use order::{Entry, RunOrder, Secs, Threads, Variant};
use roles::{Loader, Runner, RunnerSpec, Stop, EVENT, INDEX, INSERT, KINDS, WARMUP};

/// The step that creates and fills the tables.
pub const LOAD: &str = "load";
/// Rows per INSERT statement of the load.
pub const LOAD_BATCH: u64 = 100;
/// sysbench's default --rand-zipfian-exp.
pub const ZIPF_EXP: f64 = 0.8;
/// The IN-list and BETWEEN sizes a user may ask for: PostgreSQL and MySQL take at most 65535
/// parameters per statement.
pub const MAX_LIST: u64 = 65_535;

/// How `k` is drawn when the tables are loaded.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum KValues {
    /// sysbench 1.0's default distribution ("special"), which its `prepare` uses because the
    /// original passes no --rand-type to it.
    Special,
    Uniform,
}

#[derive(Debug, Clone, Serialize)]
pub struct SysbenchParams {
    pub preset: String,
    pub run_order: RunOrder,
    /// Threads of each microbenchmark that takes the given count; with several levels, the
    /// lowest.
    pub threads: u64,
    /// A concurrency sweep (`--threads 1,2,8`): every such microbenchmark runs once per level,
    /// in ascending order, right after the one before (the test is the outer loop, the thread
    /// count the inner one, as the original's run.sh loops); empty without a sweep.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub thread_levels: Vec<u64>,
    pub tables: u64,
    /// Rows per table.
    pub rows: u64,
    pub read_seconds: u64,
    pub write_seconds: u64,
    /// Duration of scan.warm and scan.warmpre (60 s in the original).
    pub warm_seconds: u64,
    /// sysbench's --warmup-time: events run but are not counted, at the start of every test.
    pub warmup_seconds: u64,
    pub prepared: bool,
    /// The original's usepk: 1 = PRIMARY KEY (id); 0 = id only in a secondary index.
    pub usepk: u8,
    pub k_values: KValues,
    pub zipfian_exp: f64,
    /// Budget of each "postwrite" cleanup + wait; null = min(1200, 60 + tables x rows / 1e6).
    pub postwrite_seconds: Option<u64>,
    pub seed: u64,
    /// Whether the run creates and loads the tables first.
    pub load: bool,
    pub load_batch_rows: u64,
    /// Labels of the microbenchmarks to run, in run order.
    pub tests: Vec<String>,
}

/// One microbenchmark run of the plan.
#[derive(Debug, Clone)]
pub struct Planned {
    pub entry: Entry,
    pub bench: &'static Microbenchmark,
    /// The range was given by the user (`<test>_range=<N>`), not taken from the run order.
    pub custom_range: bool,
    /// Its level of a concurrency sweep; None without one (or for a test whose thread count
    /// is the number of tables).
    pub level: Option<u64>,
}

impl Planned {
    /// The original's label, and `_threads=<N>` after it for a level of a sweep.
    pub fn label(&self) -> String {
        match self.level {
            Some(t) => crate::suites::Suite::Sysbench.level_label(&self.entry.label(), t),
            None => self.entry.label(),
        }
    }
}

/// Matches `*` (any run of characters) and `?` (one character).
pub fn glob(pattern: &str, s: &str) -> bool {
    fn go(p: &[u8], s: &[u8]) -> bool {
        match (p.first(), s.first()) {
            (None, None) => true,
            (Some(b'*'), _) => go(&p[1..], s) || (!s.is_empty() && go(p, &s[1..])),
            (Some(b'?'), Some(_)) => go(&p[1..], &s[1..]),
            (Some(a), Some(b)) if a == b => go(&p[1..], &s[1..]),
            _ => false,
        }
    }
    go(pattern.as_bytes(), s.as_bytes())
}

/// The microbenchmarks to run: the run order's entries that any selector matches (by label,
/// `read-only_range=100`, or by name with its suffix, `read-only`, `point-query.pre`; `*` and `?`
/// are wildcards), in run order. A selector `<name>_range=<N>` whose range the run order does
/// not have runs that test with range N right after the order's entries of that name.
pub fn select(
    order: RunOrder,
    selectors: Option<&[String]>,
    rows: u64,
) -> anyhow::Result<Vec<Planned>> {
    let entries = order.entries();
    let planned = |e: &Entry, custom: bool| Planned {
        entry: *e,
        bench: catalog::find(e.test).expect("run orders name catalog tests"),
        custom_range: custom,
        level: None,
    };
    let Some(selectors) = selectors else {
        return Ok(entries.iter().map(|e| planned(e, false)).collect());
    };
    let mut chosen = vec![false; entries.len()];
    // (index of the entry it follows, the entry)
    let mut custom: Vec<(usize, Entry)> = Vec::new();
    for sel in selectors {
        let sel = sel.trim();
        if sel.is_empty() {
            return bad_input("--tests has an empty name");
        }
        let mut any = false;
        for (i, e) in entries.iter().enumerate() {
            if glob(sel, &e.label()) || glob(sel, &e.name()) {
                chosen[i] = true;
                any = true;
            }
        }
        if any {
            continue;
        }
        let (name, range) = match sel.rsplit_once("_range=") {
            Some((n, r)) => (n, Some(r)),
            None => (sel, None),
        };
        let (test, variant) = split_variant(name);
        let Some(bench) = catalog::find(test) else {
            return bad_input(format!(
                "unknown microbenchmark '{sel}'; `dbperf run --suite sysbench --list` lists them"
            ));
        };
        let last = entries
            .iter()
            .rposition(|e| e.test == test && e.variant == variant);
        let Some(last) = last else {
            let other = match order {
                RunOrder::Y2024 => RunOrder::Current,
                RunOrder::Current => RunOrder::Y2024,
            };
            return bad_input(format!(
                "{name} is not in the {} run order{}",
                order.name(),
                if other.entries().iter().any(|e| e.name() == name) {
                    format!(" (it is in --run-order {})", other.name())
                } else {
                    String::new()
                }
            ));
        };
        let Some(range) = range else {
            return bad_input(format!(
                "'{sel}' matches no microbenchmark of the run order"
            ));
        };
        let r: u64 = match range.parse() {
            Ok(r) if r > 0 => r,
            _ => {
                return bad_input(format!(
                    "'{sel}': the range must be a positive whole number, got '{range}'"
                ))
            }
        };
        match bench.range {
            RangeUse::Unused => {
                return bad_input(format!(
                    "{test} takes no range (its label always says range=100, which the original \
                     passes and the script ignores), so '{sel}' makes no sense"
                ))
            }
            RangeUse::InList if r > MAX_LIST => {
                return bad_input(format!(
                    "'{sel}': an IN-list of {r} values is more than the {MAX_LIST} parameters a \
                     statement can have"
                ))
            }
            RangeUse::Between | RangeUse::RangeSize if r > rows => {
                return bad_input(format!(
                    "'{sel}': a range of {r} rows is wider than the {rows} rows per table"
                ))
            }
            _ => {}
        }
        let e = Entry {
            range: r,
            ..entries[last]
        };
        if !custom.iter().any(|(_, c)| c.label() == e.label()) {
            custom.push((last, e));
        }
    }
    let mut out = Vec::new();
    for (i, e) in entries.iter().enumerate() {
        if chosen[i] {
            out.push(planned(e, false));
        }
        for (_, c) in custom.iter().filter(|(at, _)| *at == i) {
            let mut p = planned(c, true);
            // A custom run is one measurement; the cleanup stays with the original entry.
            p.entry.postwrite = false;
            out.push(p);
        }
    }
    Ok(out)
}

fn split_variant(name: &str) -> (&str, Variant) {
    for v in [Variant::Pre, Variant::Warm, Variant::Warmpre] {
        if let Some(t) = name.strip_suffix(v.suffix()) {
            return (t, v);
        }
    }
    (name, Variant::Plain)
}

impl SysbenchParams {
    pub fn table_names(&self) -> Vec<String> {
        (1..=self.tables).map(|i| format!("sbtest{i}")).collect()
    }

    /// The plan as the selection made it (validated when the parameters were made).
    pub fn planned(&self) -> Vec<Planned> {
        let sel: Vec<String> = self.tests.clone();
        let once = select(self.run_order, Some(&sel), self.rows).expect("labels were validated");
        if self.thread_levels.len() < 2 {
            return once;
        }
        let mut out = Vec::new();
        for p in once {
            match p.entry.threads {
                Threads::Given => out.extend(self.thread_levels.iter().map(|&t| Planned {
                    level: Some(t),
                    ..p.clone()
                })),
                Threads::Tables => out.push(p),
            }
        }
        out
    }

    /// Step names in order: `load` (when loading), then every microbenchmark's label.
    pub fn step_names(&self) -> Vec<String> {
        let mut v = Vec::new();
        if self.load {
            v.push(LOAD.to_string());
        }
        v.extend(self.planned().iter().map(Planned::label));
        v
    }

    /// Its threads: its sweep level, or the given count, or one per table.
    pub fn threads_of(&self, p: &Planned) -> u64 {
        match (p.level, p.entry.threads) {
            (Some(t), _) => t,
            (None, Threads::Given) => self.threads,
            (None, Threads::Tables) => self.tables,
        }
    }

    /// Planned seconds of measurement (after the warm-up); None for one event per thread.
    pub fn seconds_of(&self, e: &Entry) -> Option<u64> {
        match e.secs {
            Secs::Read => Some(self.read_seconds),
            Secs::Write => Some(self.write_seconds),
            Secs::Warm => Some(self.warm_seconds),
            Secs::OneEvent => None,
        }
    }

    /// The "postwrite" budget and how it was chosen (spec §5.6).
    pub fn postwrite_budget(&self) -> (u64, String) {
        match self.postwrite_seconds {
            Some(s) => (
                s,
                format!("{s} s (preset {} or --postwrite-seconds)", self.preset),
            ),
            None => {
                let total = self.tables * self.rows;
                let s = (60 + total / 1_000_000).min(1200);
                (s, format!("min(1200, 60 + {total} / 1e6) = {s} s"))
            }
        }
    }
}

/// What a microbenchmark produced, in sysbench's terms.
#[derive(Debug, Clone)]
pub struct Outcome {
    pub headline_metric: &'static str,
    pub headline_unit: &'static str,
    pub headline_value: f64,
    /// Measured seconds: the step's time minus the warm-up.
    pub measured_s: f64,
    pub events: u64,
    pub warmup_events: u64,
    pub queries: u64,
    /// (read, write, other) statements.
    pub counts: [u64; 3],
    pub errors: u64,
    pub scan_rows_per_s: Option<f64>,
    /// `qps_p50_interval` ...: the original's percentiles of the per-second rate (spec §2.6)
    /// over the measured full seconds; empty for scans, whose metric is not a rate of events.
    pub interval_percentiles: Vec<(String, Option<f64>)>,
}

pub struct Sysbench {
    pub params: SysbenchParams,
    dbms: Arc<dyn Dbms>,
}

impl Sysbench {
    pub fn new(params: SysbenchParams, dbms: Arc<dyn Dbms>) -> Sysbench {
        Sysbench { params, dbms }
    }

    /// Without a load the tables must be there already; say clearly when they are not.
    pub fn check_tables(&self) -> anyhow::Result<()> {
        let mut conn = self.dbms.connect()?;
        let d = self.dbms.dialect();
        for t in self.params.table_names() {
            if conn.query_i64(&d.table_exists_sql(&t))? != Some(1) {
                return bad_input(format!(
                    "--skip-load needs table {t}, which does not exist: load it with a run without \
                     --skip-load (and --work-dir or --keep-data for SQLite)"
                ));
            }
        }
        Ok(())
    }

    /// The load: one connection, tables one after another (sysbench `prepare`, as the original
    /// runs it, with one thread).
    pub fn load_plan(&self) -> StepPlan {
        let p = &self.params;
        let dbms = self.dbms.clone();
        let tables = p.table_names();
        let (rows, batch, primary_key) = (p.rows, p.load_batch_rows, p.usepk == 1);
        let keys = match p.k_values {
            KValues::Special => KeyGen::Special { n: p.rows },
            KValues::Uniform => KeyGen::Uniform { n: p.rows },
        };
        let seed = stream_seed(p.seed, 0, 0, 0);
        StepPlan {
            kinds: KINDS.to_vec(),
            roles: vec![RoleSpec {
                name: "loader".into(),
                pace: Pace::Closed,
                lifetime: Lifetime::Primary,
                permits_to: None,
                make: Box::new(move || {
                    Ok(Box::new(Loader::new(
                        dbms,
                        tables,
                        rows,
                        batch,
                        keys,
                        primary_key,
                        rng(seed),
                    )?) as Box<dyn Role>)
                }),
            }],
            target_rows_per_s: None,
            paced_kind: None,
        }
    }

    /// One runner per thread, each its own connection, flat out. Returns the plan and the
    /// counter of statements completed within failed events.
    pub fn test_plan(&self, t: &Planned, step_index: u64) -> (StepPlan, Arc<AtomicU64>) {
        let p = &self.params;
        let e = &t.entry;
        let b = t.bench;
        let key_rows = b.key_rows.unwrap_or(p.rows);
        let keys = match b.keys {
            Keys::Uniform => KeyGen::Uniform { n: key_rows },
            Keys::Zipfian => KeyGen::Zipfian(Zipf::new(key_rows, p.zipfian_exp)),
        };
        let stop = match p.seconds_of(e) {
            Some(s) => Stop::Time {
                warmup: Duration::from_secs(p.warmup_seconds),
                run: Duration::from_secs(s),
            },
            None => Stop::Events(1),
        };
        let partial = Arc::new(AtomicU64::new(0));
        let mut roles = Vec::new();
        for thread in 0..p.threads_of(t) {
            let spec = RunnerSpec {
                bench: b,
                tables: p.table_names(),
                rows: p.rows,
                range: e.range,
                prepared: p.prepared,
                keys: keys.clone(),
                stop,
                thread,
                partial: partial.clone(),
            };
            let dbms = self.dbms.clone();
            let seed = stream_seed(p.seed, step_index, thread + 1, 0);
            roles.push(RoleSpec {
                name: format!("t{}", thread + 1),
                pace: Pace::Closed,
                lifetime: Lifetime::Primary,
                permits_to: None,
                make: Box::new(move || {
                    Ok(Box::new(Runner::new(dbms, spec, rng(seed))?) as Box<dyn Role>)
                }),
            });
        }
        (
            StepPlan {
                kinds: KINDS.to_vec(),
                roles,
                target_rows_per_s: None,
                paced_kind: None,
            },
            partial,
        )
    }

    /// The step's numbers in sysbench's terms. QPS counts every statement of every completed
    /// event (BEGIN and COMMIT included) plus the statements that completed in events that then
    /// failed, over the measured time (after the warm-up).
    pub fn outcome(&self, t: &Planned, m: &StepMeasurement, partial: u64) -> Outcome {
        let p = &self.params;
        let b = t.bench;
        let warmup = match p.seconds_of(&t.entry) {
            Some(_) => p.warmup_seconds as f64,
            None => 0.0,
        };
        let measured_s = (m.duration.as_secs_f64() - warmup).max(1e-9);
        let ev = &m.kinds[EVENT];
        let events = ev.ops;
        // read/write/other count the statements of completed events; the total also has the
        // statements that completed in events that then failed, as sysbench's total does.
        let counts = b.counts().map(|c| c * events);
        let queries = counts.iter().sum::<u64>() + partial;
        let qps = queries as f64 / measured_s;
        let scan_rows_per_s = match b.metric {
            Metric::Qps => None,
            Metric::ScanRows => Some(match t.entry.secs {
                // 2024: one pass per thread over its table; all rows / elapsed time.
                Secs::OneEvent => (p.rows * p.tables) as f64 / m.duration.as_secs_f64().max(1e-9),
                // Current: rows of one table / mean time of one scan (per scanning thread).
                _ => {
                    let mean_s = ev.latency.mean() / 1e9;
                    if events == 0 || mean_s <= 0.0 {
                        0.0
                    } else {
                        p.rows as f64 / mean_s
                    }
                }
            }),
        };
        let (metric, unit, value) = match scan_rows_per_s {
            Some(v) => ("scan_rows_per_s", "rows/s", v),
            None => ("queries_per_s", "queries/s", qps),
        };
        let interval_percentiles = if scan_rows_per_s.is_some() {
            Vec::new()
        } else {
            // Full seconds after the warm-up; statements of failed events are not in them.
            let spe = b.statements_per_event() as f64;
            let per_second: Vec<f64> = m
                .second_counts(EVENT)
                .into_iter()
                .skip(warmup as usize)
                .map(|(ops, _)| ops as f64 * spe)
                .collect();
            interval_rate_percentiles(&per_second)
                .into_iter()
                .map(|(p, v)| (format!("qps_p{p}_interval"), v))
                .collect()
        };
        Outcome {
            headline_metric: metric,
            headline_unit: unit,
            headline_value: value,
            measured_s,
            events,
            warmup_events: m.kinds[WARMUP].ops,
            queries,
            counts,
            errors: ev.errors + m.kinds[WARMUP].errors,
            scan_rows_per_s,
            interval_percentiles,
        }
    }

    /// The load's headline: rows / (load + index) time, as the original's "Load seconds is S
    /// ... R ips".
    pub fn load_rate(&self, m: &StepMeasurement) -> f64 {
        m.kinds[INSERT].rows as f64 / m.duration.as_secs_f64().max(1e-9)
    }

    pub fn load_kinds() -> Vec<usize> {
        vec![INSERT, INDEX]
    }

    pub fn test_kinds() -> Vec<usize> {
        vec![EVENT, WARMUP]
    }

    /// "postwrite" (spec §5.6): the same maintenance as after the Insert Benchmark's l.i2, then
    /// sleep what is left of the budget.
    pub fn postwrite(&self, interrupt: &AtomicBool) -> Cleanup {
        let (budget, rule) = self.params.postwrite_budget();
        crate::workload::common::cleanup::cleanup_and_wait(
            self.dbms.as_ref(),
            &self.params.table_names(),
            budget,
            rule,
            interrupt,
        )
    }

    /// Statements of one event on sbtest1, as this engine receives them, with how many times
    /// each runs per event.
    pub fn statements(&self, t: &Planned) -> Vec<(String, u64, bool)> {
        let d = self.dbms.dialect();
        let names_id = sql::insert_names_id(d.sql());
        let mut out = Vec::new();
        let prepared = self.params.prepared;
        if t.bench.trx {
            out.push(("BEGIN".to_string(), 1, prepared));
        }
        for b in t.bench.blocks {
            for s in b.stmts {
                let len = match (s.list, s.list_len) {
                    (None, _) => 0,
                    (Some(_), Some(n)) => n as usize,
                    (Some(_), None) => t.entry.range as usize,
                };
                let sql = roles::expand(s.sql, "sbtest1", len, names_id);
                let as_prepared = prepared && !s.text;
                let sql = if as_prepared {
                    roles::with_placeholders(&sql, d)
                } else {
                    sql
                };
                match out.iter_mut().find(|(q, _, _)| *q == sql) {
                    Some(x) => x.1 += b.repeat as u64,
                    None => out.push((sql, b.repeat as u64, as_prepared)),
                }
            }
        }
        if t.bench.trx {
            out.push(("COMMIT".to_string(), 1, prepared));
        }
        out
    }
}

/// The original's three-way split by name (`sum_qps_csv.sh`): "point" when the label contains
/// point, "write" when it contains delete, insert, update or write, else "range".
pub fn group_2024(label: &str) -> &'static str {
    if label.contains("point") {
        "point"
    } else if ["delete", "insert", "update", "write"]
        .iter()
        .any(|w| label.contains(w))
    {
        "write"
    } else {
        "range"
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn globs() {
        assert!(glob("read-only*", "read-only-simple_range=1000"));
        assert!(glob("point-query", "point-query"));
        assert!(!glob("point-query", "point-query.pre"));
        assert!(glob("*.pre", "point-query.pre"));
        assert!(glob("range-?overed-pk", "range-covered-pk"));
        assert!(!glob("scan", "scan.warm"));
    }

    fn labels(order: RunOrder, sel: &[&str], rows: u64) -> anyhow::Result<Vec<String>> {
        let sel: Vec<String> = sel.iter().map(|s| s.to_string()).collect();
        Ok(select(order, Some(&sel), rows)?
            .iter()
            .map(Planned::label)
            .collect())
    }

    #[test]
    fn selection_keeps_run_order() {
        let l = labels(
            RunOrder::Current,
            &["insert", "point-query", "read-only_range=100"],
            10_000,
        )
        .unwrap();
        assert_eq!(
            l,
            [
                "read-only_range=100",
                "point-query_range=100",
                "insert_range=100"
            ]
        );
        let l = labels(RunOrder::Y2024, &["point-query*"], 10_000).unwrap();
        assert_eq!(
            l,
            [
                "point-query.warm_range=100",
                "point-query.pre_range=100",
                "point-query_range=100"
            ]
        );
    }

    #[test]
    fn a_custom_range_follows_its_test() {
        let l = labels(
            RunOrder::Current,
            &["random-points_range=50", "hot-points"],
            10_000,
        )
        .unwrap();
        assert_eq!(l, ["random-points_range=50", "hot-points_range=100"]);
        let p = select(
            RunOrder::Current,
            Some(&["read-only_range=7".to_string()]),
            100,
        )
        .unwrap();
        assert!(p[0].custom_range && p[0].entry.range == 7);
    }

    #[test]
    fn nonsense_is_bad_input() {
        for (sel, words) in [
            ("no-such-test", "unknown microbenchmark"),
            ("point-query_range=7", "takes no range"),
            ("random-points_range=0", "positive whole number"),
            ("random-points_range=x", "positive whole number"),
            ("read-only_range=20000", "wider than the 10000 rows"),
            ("random-points_range=70000", "65535"),
            ("read-only-simple", "(it is in --run-order current)"),
        ] {
            let order = if sel == "read-only-simple" {
                RunOrder::Y2024
            } else {
                RunOrder::Current
            };
            let e = labels(order, &[sel], 10_000).unwrap_err();
            assert!(crate::error::is_bad_input(&e), "{sel}");
            assert!(e.to_string().contains(words), "{sel}: {e}");
        }
    }

    #[test]
    fn original_groups_by_name() {
        assert_eq!(group_2024("hot-points_range=100"), "point");
        assert_eq!(group_2024("update-one_range=100"), "write");
        assert_eq!(group_2024("read-write_range=10"), "write");
        assert_eq!(group_2024("scan_range=100"), "range");
        assert_eq!(group_2024("read-only_range=10"), "range");
    }
}
