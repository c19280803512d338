//! `dbperf run --suite sysbench`: its flags, `--list`, and running the load and every selected
//! microbenchmark on one target, one step file each.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::atomic::Ordering;
use std::sync::Arc;

use clap::{Args, ValueEnum};
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};

use super::record::{op_stats, round3};
use super::run::{
    begin_target, end_target, finish_step, now_rfc3339, OnOff, Sampling, Started, TargetRun,
};
use super::summary::fmt_num;
use crate::dbms::Dbms;
use crate::engine::{self, Observer, SecondRow, StepMeasurement, StepPlan};
use crate::error::{bad_input, BadInput};
use crate::metrics;
use crate::results::{
    series::SeriesWriter, CleanupRecord, Headline, ServerRecord, StepFile, StepParameters,
    SysbenchStatement, SysbenchStep, SCHEMA,
};
use crate::server;
use crate::spec::{self, presets, sysbench::SysbenchOverrides, target::Target};
use crate::workload::sysbench::order::RunOrder;
use crate::workload::sysbench::roles::{EVENT, INDEX, INSERT, KINDS, WARMUP};
use crate::workload::sysbench::{group_2024, KValues, Planned, Sysbench, SysbenchParams, LOAD};

#[derive(Clone, Copy, Debug, ValueEnum, PartialEq)]
pub enum RunOrderArg {
    /// The original's current list (all_small.sh at HEAD): 32 reported tests without .pre.
    Current,
    /// The 2024 list (all_small.sh at 23aa3363): 42 reported tests.
    #[value(name = "2024")]
    Y2024,
}

#[derive(Clone, Copy, Debug, ValueEnum, PartialEq)]
pub enum KValuesArg {
    /// sysbench 1.0's default distribution, which its prepare uses (the original passes no
    /// --rand-type to it): 75% of k values in the middle 1% of [1, rows].
    Special,
    /// Uniform over [1, rows].
    Uniform,
}

/// Flags of the sysbench suite (`--suite sysbench`).
#[derive(Args, Debug, Default)]
#[command(next_help_heading = "sysbench suite (--suite sysbench)")]
pub struct SysbenchArgs {
    /// Microbenchmarks to run, comma-separated: names (`read-only`, `point-query.pre`), labels
    /// (`read-only_range=100`) or globs (`'read-only*'`), always in run order; `<name>_range=<N>`
    /// with a range the run order does not have runs that test with range N too
    /// [default: the whole run order].
    #[arg(long, value_delimiter = ',', value_name = "NAMES")]
    pub tests: Option<Vec<String>>,

    /// List the microbenchmarks (with --tests, the selected ones) in run order, with their
    /// group and statements, and exit.
    #[arg(long)]
    pub list: bool,

    /// Which of the original's lists to run, in its order [default: current].
    #[arg(long, value_enum)]
    pub run_order: Option<RunOrderArg>,

    /// Connections (threads) per microbenchmark; point-query.warm and the 2024 scan use one per
    /// table, as the original [default: preset's].
    #[arg(long, value_name = "N")]
    pub threads: Option<u64>,

    /// Tables sbtest1..sbtestN [default: preset's].
    #[arg(long, value_name = "N")]
    pub tables: Option<u64>,

    /// Rows per table (suffixes k, M allowed) [default: preset's].
    #[arg(long, value_parser = spec::parse_count, value_name = "ROWS")]
    pub rows: Option<u64>,

    /// Seconds of each read-only microbenchmark (and of write-only, as in the original), after
    /// its warm-up [default: preset's].
    #[arg(long, value_parser = spec::parse_count, value_name = "SECONDS")]
    pub read_seconds: Option<u64>,

    /// Seconds of each write microbenchmark, after its warm-up [default: preset's].
    #[arg(long, value_parser = spec::parse_count, value_name = "SECONDS")]
    pub write_seconds: Option<u64>,

    /// Seconds of scan.warm and scan.warmpre (60 in the original) [default: preset's].
    #[arg(long, value_parser = spec::parse_count, value_name = "SECONDS")]
    pub warm_seconds: Option<u64>,

    /// sysbench's --warmup-time: seconds of uncounted events at the start of every
    /// microbenchmark (5 in the original) [default: preset's].
    #[arg(long, value_parser = spec::parse_count, value_name = "SECONDS")]
    pub warmup_seconds: Option<u64>,

    /// Budget of each "postwrite" cleanup + wait [default: preset's, else the original's
    /// min(1200, 60 + tables x rows / 1e6)].
    #[arg(long, value_parser = spec::parse_count, value_name = "SECONDS")]
    pub postwrite_seconds: Option<u64>,

    /// Prepared statements (sysbench's default); off = every statement sent as SQL text
    /// (--db-ps-mode=disable) [default: on].
    #[arg(long, value_enum, value_name = "ON|OFF")]
    pub prepared: Option<OnOff>,

    /// The original's usepk: 1 = PRIMARY KEY (id); 0 = id only in a secondary index (its Lua's
    /// --secondary: InnoDB and MyRocks cluster on a hidden row id, PostgreSQL's table has no
    /// primary key). PostgreSQL and MySQL/MariaDB targets only [default: 1].
    #[arg(long, value_name = "0|1", value_parser = clap::value_parser!(u8).range(0..=1))]
    pub usepk: Option<u8>,

    /// How the load draws k [default: special].
    #[arg(long, value_enum)]
    pub k_values: Option<KValuesArg>,

    /// Use the tables already there (an external server, or --work-dir from an earlier run)
    /// instead of creating and loading them.
    #[arg(long)]
    pub skip_load: bool,
}

impl SysbenchArgs {
    /// The first sysbench flag given, for refusing it with the Insert Benchmark.
    fn first_given(&self) -> Option<&'static str> {
        [
            (self.tests.is_some(), "--tests"),
            (self.list, "--list"),
            (self.run_order.is_some(), "--run-order"),
            (self.threads.is_some(), "--threads"),
            (self.tables.is_some(), "--tables"),
            (self.rows.is_some(), "--rows"),
            (self.read_seconds.is_some(), "--read-seconds"),
            (self.write_seconds.is_some(), "--write-seconds"),
            (self.warm_seconds.is_some(), "--warm-seconds"),
            (self.warmup_seconds.is_some(), "--warmup-seconds"),
            (self.postwrite_seconds.is_some(), "--postwrite-seconds"),
            (self.prepared.is_some(), "--prepared"),
            (self.usepk.is_some(), "--usepk"),
            (self.k_values.is_some(), "--k-values"),
            (self.skip_load, "--skip-load"),
        ]
        .into_iter()
        .find(|(given, _)| *given)
        .map(|(_, name)| name)
    }

    pub fn refuse_with_ibench(&self) -> anyhow::Result<()> {
        match self.first_given() {
            Some(flag) => bad_input(format!(
                "{flag} belongs to the sysbench suite; add --suite sysbench (the default suite is \
                 the Insert Benchmark)"
            )),
            None => Ok(()),
        }
    }

    pub fn params(&self, preset: &str, seed: Option<u64>) -> anyhow::Result<SysbenchParams> {
        let preset = presets::sysbench_get(preset)?;
        let o = SysbenchOverrides {
            run_order: match self.run_order {
                Some(RunOrderArg::Y2024) => RunOrder::Y2024,
                _ => RunOrder::Current,
            },
            tests: self.tests.clone(),
            threads: self.threads,
            tables: self.tables,
            rows: self.rows,
            read_seconds: self.read_seconds,
            write_seconds: self.write_seconds,
            warm_seconds: self.warm_seconds,
            warmup_seconds: self.warmup_seconds,
            postwrite_seconds: self.postwrite_seconds,
            prepared: self.prepared != Some(OnOff::Off),
            usepk: self.usepk.unwrap_or(1),
            k_values: match self.k_values {
                Some(KValuesArg::Uniform) => KValues::Uniform,
                _ => KValues::Special,
            },
            seed,
            skip_load: self.skip_load,
        };
        spec::sysbench::sysbench_params(&preset, &o)
    }
}

/// `--list`: the selected microbenchmarks in run order.
pub fn print_list(p: &SysbenchParams) {
    let mut t = comfy_table::Table::new();
    t.load_style(comfy_table::presets::UTF8_FULL_CONDENSED);
    t.set_header([
        "#",
        "label",
        "group",
        "event",
        "stmts/event",
        "threads",
        "seconds",
        "original",
    ]);
    for (i, pl) in p.planned().iter().enumerate() {
        let e = &pl.entry;
        let b = pl.bench;
        let mut label = pl.label();
        if !e.variant.reported() {
            label.push_str(" (not reported)");
        }
        if e.postwrite {
            label.push_str(" + postwrite");
        }
        t.add_row([
            (i + 1).to_string(),
            label,
            b.group.title().to_string(),
            if b.trx { "trx" } else { "autocommit" }.to_string(),
            b.statements_per_event().to_string(),
            p.threads_of(e).to_string(),
            p.seconds_of(e)
                .map(|s| s.to_string())
                .unwrap_or_else(|| "1 event".into()),
            b.original.to_string(),
        ]);
    }
    out!("{t}");
    out!(
        "Run order {}: the load, then these; {} reported. Groups and statements: docs/sysbench.md.",
        p.run_order.name(),
        p.planned()
            .iter()
            .filter(|x| x.entry.variant.reported())
            .count()
    );
}

/// The live view of a step and its series file.
struct Progress {
    bar: ProgressBar,
    series: Option<SeriesWriter>,
    series_error: Option<std::io::Error>,
    name: String,
    queries_per_event: u64,
    load_rows: u64,
    load: bool,
    log: bool,
    done: u64,
}

impl Progress {
    fn new(
        name: &str,
        series: SeriesWriter,
        length: u64,
        load: bool,
        qpe: u64,
        show: bool,
    ) -> Self {
        let bar = ProgressBar::new(length.max(1));
        bar.set_style(
            ProgressStyle::with_template("{prefix} [{bar:28}] {percent:>3}% {elapsed} {msg}")
                .unwrap()
                .progress_chars("=> "),
        );
        bar.set_prefix(name.to_string());
        if !show {
            bar.set_draw_target(ProgressDrawTarget::hidden());
        }
        Progress {
            bar,
            series: Some(series),
            series_error: None,
            name: name.to_string(),
            queries_per_event: qpe,
            load_rows: length,
            load,
            log: !show,
            done: 0,
        }
    }

    fn finish(mut self) -> std::io::Result<()> {
        self.bar.finish_and_clear();
        if let Some(e) = self.series_error.take() {
            return Err(e);
        }
        if let Some(s) = self.series.take() {
            s.finish()?;
        }
        Ok(())
    }
}

/// Seconds between status lines when no progress bar is shown.
const LOG_EVERY_S: u64 = 60;

impl Observer for Progress {
    fn on_second(&mut self, row: &SecondRow) {
        if let Some(s) = self.series.as_mut() {
            if let Err(e) = s.row(row) {
                self.series_error = Some(e);
                self.series = None;
            }
        }
        let secs = row.interval_s.max(1e-9);
        let k = &row.kinds;
        let msg = if self.load {
            self.done += k[INSERT].rows;
            self.bar.set_position(self.done.min(self.load_rows));
            format!("{} rows/s", fmt_num(k[INSERT].rows as f64 / secs))
        } else {
            self.done += 1;
            self.bar.set_position(self.done);
            let events = k[EVENT].ops + k[WARMUP].ops;
            let mut m = format!(
                "{} queries/s  {} events/s",
                fmt_num((events * self.queries_per_event) as f64 / secs),
                fmt_num(events as f64 / secs)
            );
            if k[WARMUP].ops > 0 {
                m.push_str("  (warm-up)");
            }
            m
        };
        let errors: u64 = k.iter().map(|x| x.errors).sum();
        let msg = if errors > 0 {
            format!("{msg}  {errors} errors")
        } else {
            msg
        };
        if self.log && (row.index + 1) % LOG_EVERY_S == 0 {
            eprintln!("{} {:>5} s  {msg}", self.name, row.index + 1);
        }
        self.bar.set_message(msg);
    }
}

/// Where a target's cost is read from: /proc for the host, its data devices and the managed
/// server, and the DBMS's own counters.
struct Env<'a> {
    dbms: &'a Arc<dyn Dbms>,
    sources: metrics::Sources,
    data_dir: Option<PathBuf>,
}

/// What the engine measured, and the host and DBMS counters around it.
struct Measured {
    m: StepMeasurement,
    /// At the step's start, or at the end of its warm-up when `after_warmup`.
    before: metrics::Snapshot,
    after: metrics::Snapshot,
    counters_before: Result<Vec<(String, f64)>, String>,
    counters_after: Result<Vec<(String, f64)>, String>,
    /// Whether the interval starts at the end of the warm-up rather than at the step's start.
    after_warmup: bool,
}

impl Measured {
    /// The interval's hardware cost and DBMS counter deltas, normalised by `work` (the
    /// operations within that interval).
    fn cost(&self, env: &Env, work: &metrics::Work) -> (metrics::Hardware, metrics::DbmsCounters) {
        let mut hw = metrics::hardware(&env.sources, &self.before, &self.after, work);
        let counters = metrics::dbms_counters(
            env.dbms.engine(),
            self.counters_before.clone(),
            self.counters_after.clone(),
            env.data_dir.as_deref(),
            &mut hw,
        );
        (hw, counters)
    }

    fn interval_s(&self) -> f64 {
        self.after.secs_since(&self.before)
    }
}

/// Runs one step's plan with its series, progress and host sampling, between two snapshots of
/// the host and the DBMS's counters. With `warmup_s`, the first snapshot is taken again when the
/// warm-up's last second has been collected, so the cost leaves the warm-up out.
#[allow(clippy::too_many_arguments)]
fn measure(
    st: &mut Started,
    env: &Env,
    name: &str,
    kinds: Vec<usize>,
    qpe: Option<u64>,
    plan: StepPlan,
    length: u64,
    warmup_s: u64,
    load: bool,
    ctx: &TargetRun,
) -> anyhow::Result<Measured> {
    let kinds = kinds.into_iter().map(|k| (k, KINDS[k])).collect();
    let series = SeriesWriter::create_with_queries(&st.steps_dir, name, kinds, qpe)
        .map_err(|e| BadInput(format!("cannot write into {}: {e}", st.steps_dir.display())))?;
    let mut progress = Progress::new(name, series, length, load, qpe.unwrap_or(0), ctx.show);
    st.monitor.step_begins(name);
    // Counters first and last, so their queries fall outside the /proc interval.
    let counters_before = env.dbms.counters().map_err(|e| e.to_string());
    let before = metrics::Snapshot::take(&env.sources);
    let host_series = metrics::series::HostSeries::create(&st.steps_dir, name, &env.sources)
        .map_err(|e| BadInput(format!("cannot write into {}: {e}", st.steps_dir.display())))?;
    let mut at_warmup_end = None;
    let mut mark = || {
        let counters = env.dbms.counters().map_err(|e| e.to_string());
        at_warmup_end = Some((metrics::Snapshot::take(&env.sources), counters));
    };
    let m = engine::run_step(
        plan,
        &mut Sampling {
            progress: &mut progress,
            monitor: &mut st.monitor,
            host_series: Some(host_series),
            sources: Some(&env.sources),
            at_second: (warmup_s > 0).then_some((warmup_s - 1, &mut mark as &mut dyn FnMut())),
        },
        ctx.interrupt,
    );
    let after = metrics::Snapshot::take(&env.sources);
    // A step that ended within a second of its warm-up (stopped, failed) keeps the whole step.
    let (before, counters_before, after_warmup) = match at_warmup_end {
        Some((s, c)) if after.secs_since(&s) >= 0.5 => (s, c, true),
        _ => (before, counters_before, false),
    };
    let counters_after = if m.failure.is_some() {
        Err("not read: the step failed".to_string())
    } else {
        env.dbms.counters().map_err(|e| e.to_string())
    };
    st.monitor.step_ends();
    progress.finish()?;
    Ok(Measured {
        m,
        before,
        after,
        counters_before,
        counters_after,
        after_warmup,
    })
}

fn status_of(m: &StepMeasurement) -> &'static str {
    if m.failure.is_some() {
        "failed"
    } else if m.interrupted {
        "interrupted"
    } else {
        "ok"
    }
}

fn count_rows(dbms: &Arc<dyn Dbms>, p: &SysbenchParams) -> Option<BTreeMap<String, u64>> {
    let r = (|| -> anyhow::Result<BTreeMap<String, u64>> {
        let mut conn = dbms.connect()?;
        let mut out = BTreeMap::new();
        for t in p.table_names() {
            let n = conn
                .query_i64(&format!("SELECT count(*) FROM {t}"))?
                .unwrap_or(0);
            out.insert(t, n as u64);
        }
        Ok(out)
    })();
    match r {
        Ok(r) => Some(r),
        Err(e) => {
            eprintln!("could not count rows: {e:#}");
            None
        }
    }
}

/// Runs the load (unless skipped) and every selected microbenchmark on one target.
pub(super) fn run_target(
    target: &Target,
    dbms: Arc<dyn Dbms>,
    p: &SysbenchParams,
    record: Option<ServerRecord>,
    running: Option<&mut server::Running>,
    ctx: &TargetRun,
) -> anyhow::Result<(Vec<StepFile>, &'static str)> {
    let sb = Sysbench::new(p.clone(), dbms.clone());
    let mut st = begin_target(target, &dbms, &record, ctx)?;
    // Where the target's data lives, for IO and size: the server's datadir, SQLite's directory,
    // or nowhere on this host for an external server.
    let data_dir = match (&running, target.external.is_some()) {
        (Some(r), _) => Some(r.datadir.clone()),
        (None, true) => None,
        (None, false) => Some(ctx.work.join(&target.name)),
    };
    let env = Env {
        dbms: &dbms,
        sources: metrics::Sources::new(data_dir.as_deref(), running.as_ref().map(|r| r.pid)),
        data_dir,
    };
    let mut steps: Vec<StepFile> = Vec::new();
    let mut status = "ok";
    let tables = p.table_names();
    let rows_after = |st_status: &str| {
        (ctx.count_rows && st_status != "failed")
            .then(|| count_rows(&dbms, p))
            .flatten()
    };
    if p.load && !ctx.interrupt.load(Ordering::SeqCst) {
        let started_at = now_rfc3339();
        let total = p.rows * p.tables;
        let measured = measure(
            &mut st,
            &env,
            LOAD,
            vec![INSERT, INDEX],
            None,
            sb.load_plan(),
            total,
            0,
            true,
            ctx,
        )?;
        let m = &measured.m;
        let step_status = status_of(m);
        let secs = m.duration.as_secs_f64();
        let mut ops = BTreeMap::new();
        for k in [INSERT, INDEX] {
            ops.insert(KINDS[k].to_string(), op_stats(&m.kinds[k], secs));
        }
        let inserted = m.kinds[INSERT].rows;
        let (hw, counters) = measured.cost(
            &env,
            &metrics::Work {
                op: "insert",
                op_count: inserted as f64,
                inserted_rows: inserted,
                is_query_step: false,
            },
        );
        let sf = StepFile {
            schema: SCHEMA,
            step: LOAD.into(),
            status: step_status.into(),
            error: m.failure.clone(),
            warnings: Vec::new(),
            started_at,
            duration_s: round3(secs),
            headline: Headline {
                metric: "inserts_per_s".into(),
                value: round3(sb.load_rate(m)),
                unit: "rows/s".into(),
            },
            parameters: StepParameters {
                clients: 1,
                tables: tables.clone(),
                rows_per_commit: p.load_batch_rows,
                planned_rows: total,
                rate_per_client: None,
                deletes: false,
                queries: None,
            },
            ops,
            interval_rate_percentiles: BTreeMap::new(),
            sla: None,
            cleanup: None,
            table_rows: rows_after(step_status),
            series_file: Some(format!("{LOAD}.series.csv")),
            sysbench: None,
            hardware: Some(hw),
            dbms: Some(counters),
        };
        finish_step(&st.steps_dir, &sf)?;
        eprintln!(
            "{LOAD} {:.1} s  {} rows/s ({} rows in {} table(s), index on k included)  {}",
            sf.duration_s,
            fmt_num(sf.headline.value),
            fmt_num(total as f64),
            p.tables,
            step_status.to_uppercase()
        );
        steps.push(sf);
        match step_status {
            "failed" => {
                st.run.failed_step = Some(LOAD.into());
                st.run.error = m.failure.clone();
                status = "failed";
            }
            "interrupted" => status = "interrupted",
            _ => {}
        }
    }
    if status == "ok" {
        for (i, t) in p.planned().iter().enumerate() {
            if ctx.interrupt.load(Ordering::SeqCst) {
                status = "interrupted";
                break;
            }
            let sf = run_test(&mut st, &env, &sb, t, i as u64 + 1, ctx, &rows_after)?;
            eprintln!("{}", line(&sf));
            let step_status = sf.status.clone();
            if step_status == "failed" {
                st.run.failed_step = Some(sf.step.clone());
                st.run.error = sf.error.clone();
            }
            steps.push(sf);
            match step_status.as_str() {
                "failed" => {
                    status = "failed";
                    break;
                }
                "interrupted" => {
                    status = "interrupted";
                    break;
                }
                _ => {}
            }
        }
    }
    end_target(st, status, running, record.as_ref())?;
    Ok((steps, status))
}

#[allow(clippy::too_many_arguments)]
fn run_test(
    st: &mut Started,
    env: &Env,
    sb: &Sysbench,
    t: &Planned,
    step_index: u64,
    ctx: &TargetRun,
    rows_after: &dyn Fn(&str) -> Option<BTreeMap<String, u64>>,
) -> anyhow::Result<StepFile> {
    let p = &sb.params;
    let label = t.label();
    let e = &t.entry;
    let b = t.bench;
    let started_at = now_rfc3339();
    let (plan, partial) = sb.test_plan(t, step_index);
    let spe = b.statements_per_event();
    let planned_s = p.seconds_of(e);
    let length = planned_s.map(|s| s + p.warmup_seconds).unwrap_or(1);
    let measured = measure(
        st,
        env,
        &label,
        vec![EVENT, WARMUP],
        Some(spe),
        plan,
        length,
        if planned_s.is_some() {
            p.warmup_seconds
        } else {
            0
        },
        false,
        ctx,
    )?;
    let m = &measured.m;
    let o = sb.outcome(t, m, partial.load(Ordering::Relaxed));
    let (op_count, inserted) = if measured.after_warmup {
        // The cost interval starts when the collector has read the warm-up's last second, a
        // fraction of a second into the measured time: scale the measured statements to it, so a
        // figure per statement is the interval's rate over the measured rate (as the original
        // divides its monitors' per-second averages by sysbench's QPS).
        let scale = measured.interval_s() / o.measured_s;
        (
            o.queries as f64 * scale,
            ((b.inserts_per_event() * o.events) as f64 * scale).round() as u64,
        )
    } else {
        // No warm-up, or the step ended within it: the interval is the whole step.
        let all_events = o.events + o.warmup_events;
        (
            (o.queries + o.warmup_events * spe) as f64,
            b.inserts_per_event() * all_events,
        )
    };
    let (hw, counters) = measured.cost(
        env,
        &metrics::Work {
            op: "query",
            op_count,
            inserted_rows: inserted,
            is_query_step: true,
        },
    );
    let mut step_status = status_of(m);
    let mut error = m.failure.clone();
    let cleanup = if e.postwrite && step_status == "ok" {
        let (budget, _) = p.postwrite_budget();
        eprintln!("{label} postwrite: cleanup and wait (budget {budget} s)");
        let c = sb.postwrite(ctx.interrupt);
        if let Some(err) = &c.error {
            step_status = "failed";
            error = Some(format!("postwrite cleanup failed: {err}"));
        } else if ctx.interrupt.load(Ordering::SeqCst) {
            step_status = "interrupted";
        }
        Some(CleanupRecord {
            budget_s: c.budget_s,
            rule: c.rule.clone(),
            actions: c.actions.clone(),
            work_s: round3(c.work_s),
            slept_s: round3(c.slept_s),
            error: c.error.clone(),
        })
    } else {
        None
    };
    let mut ops = BTreeMap::new();
    ops.insert(
        KINDS[EVENT].to_string(),
        op_stats(&m.kinds[EVENT], o.measured_s),
    );
    let threads = p.threads_of(e);
    let statements = sb
        .statements(t)
        .into_iter()
        .map(|(sql, per_event, prepared)| SysbenchStatement {
            sql,
            per_event,
            prepared,
        })
        .collect();
    let variant = e.variant.suffix().trim_start_matches('.').to_string();
    let sysbench = SysbenchStep {
        test: b.name.into(),
        variant,
        label: label.clone(),
        range: e.range,
        range_use: serde_json::to_value(b.range)?
            .as_str()
            .unwrap_or_default()
            .into(),
        custom_range: t.custom_range,
        group: b.group.key().into(),
        group_title: b.group.title().into(),
        group_2024: group_2024(&label).into(),
        reported: e.variant.reported(),
        original: b.original.into(),
        transaction: b.trx,
        keys: serde_json::to_value(b.keys)?
            .as_str()
            .unwrap_or_default()
            .into(),
        prepared: p.prepared,
        threads,
        tables: p.tables,
        rows_per_table: p.rows,
        planned_s,
        warmup_s: if planned_s.is_some() {
            p.warmup_seconds as f64
        } else {
            0.0
        },
        statements,
        statements_per_event: spe,
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
    };
    Ok(StepFile {
        schema: SCHEMA,
        step: label.clone(),
        status: step_status.into(),
        error,
        warnings: Vec::new(),
        started_at,
        duration_s: round3(o.measured_s),
        headline: Headline {
            metric: o.headline_metric.into(),
            value: round3(o.headline_value),
            unit: o.headline_unit.into(),
        },
        parameters: StepParameters {
            clients: threads,
            tables: p.table_names(),
            rows_per_commit: 0,
            planned_rows: 0,
            rate_per_client: None,
            deletes: false,
            queries: None,
        },
        ops,
        interval_rate_percentiles: o.interval_percentiles.iter().cloned().collect(),
        sla: None,
        cleanup,
        table_rows: rows_after(step_status),
        series_file: Some(format!("{label}.series.csv")),
        sysbench: Some(sysbench),
        hardware: Some(hw),
        dbms: Some(counters),
    })
    .and_then(|sf| {
        finish_step(&st.steps_dir, &sf)?;
        Ok(sf)
    })
}

/// One line per finished microbenchmark.
fn line(s: &StepFile) -> String {
    let Some(sb) = &s.sysbench else {
        return super::run::step_line(s);
    };
    let p99 = s
        .ops
        .get(KINDS[EVENT])
        .map(|o| super::summary::fmt_ms(o.latency_us.p99))
        .unwrap_or_else(|| "-".into());
    let mut line = format!(
        "{} {:.1} s  {} {}  {} events/s  p99 {p99} ms",
        s.step,
        s.duration_s,
        fmt_num(s.headline.value),
        s.headline.unit,
        fmt_num(sb.events_per_s)
    );
    if sb.errors > 0 {
        line.push_str(&format!("  {} errors", sb.errors));
    }
    if s.status != "ok" {
        line.push_str(&format!("  {}", s.status.to_uppercase()));
        if let Some(e) = &s.error {
            line.push_str(&format!(": {e}"));
        }
    }
    line
}
