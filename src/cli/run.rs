//! `dbperf run`: targets x steps, one result directory per target, a summary at the end.

use std::fs;
use std::io::IsTerminal;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, OnceLock};

use clap::{Args, ValueEnum};

use super::progress::StepProgress;
use super::record::{step_file, StepRecord};
use super::summary::{fmt_num, table, TargetSteps};
use super::{EXIT_FAILED, EXIT_INTERRUPTED, EXIT_OK};
use crate::dbms::{self, Dbms, DeleteForm};
use crate::engine;
use crate::error::{bad_input, is_bad_input, BadInput};
use crate::host::monitor::Monitor;
use crate::metrics;
use crate::results::{
    self, series::SeriesWriter, RunFile, ServerRecord, StepFile, TargetInfo, Tool, SCHEMA,
};
use crate::server;
use crate::spec::{self, presets, target::Target, IbenchOverrides};
use crate::workload::ibench::{Ibench, IbenchParams, StepName, KINDS};

#[derive(Clone, Copy, Debug, ValueEnum, PartialEq)]
pub enum Suite {
    /// The Insert Benchmark: l.i0, l.x, l.i1, l.i2, then qr/qp pairs at each rate.
    Ibench,
    /// The sysbench-style microbenchmarks in the original's run order (docs/sysbench.md).
    Sysbench,
}

#[derive(Clone, Copy, Debug, ValueEnum, PartialEq)]
pub enum OnOff {
    On,
    Off,
}

#[derive(Clone, Copy, Debug, ValueEnum)]
pub enum DeleteFormArg {
    /// 2024 form: delete the N lowest PKs at or above the estimated minimum.
    Current,
    /// Pre-2024 form: delete the PK range [min, min + N).
    Old,
}

#[derive(Args, Debug)]
pub struct RunArgs {
    /// Benchmark suite to run.
    #[arg(long, value_enum, default_value = "ibench")]
    pub suite: Suite,

    /// Sizes and durations (see --list-presets); each is overridable by the flags below. The
    /// sysbench suite has its own presets: quick, 1u.1t, 4u.1t, 4u.4t.
    #[arg(long, default_value = "quick")]
    pub preset: String,

    /// List the presets with their sizes, and the SQLite configs, then exit.
    #[arg(long)]
    pub list_presets: bool,

    /// Target to benchmark, repeatable: ENGINE[:CONFIG], e.g. `sqlite`, `sqlite:delete-full`.
    /// SQLite configs: wal-normal (default), wal-full, wal-off, delete-full, defaults.
    /// Targets run one after another, each into its own result directory.
    #[arg(long = "target", value_name = "TARGET")]
    pub targets: Vec<String>,

    /// Extra SQLite pragma for every sqlite target, repeatable: --pragma cache_size=-65536.
    #[arg(long = "pragma", value_name = "KEY=VALUE", value_parser = spec::target::parse_setting)]
    pub pragmas: Vec<(String, String)>,

    /// Steps to run, comma-separated, always in benchmark order
    /// (l.i0,l.x,l.i1,l.i2,qr100,qp100,qr500,qp500,qr1000,qp1000).
    #[arg(long, value_delimiter = ',', value_name = "STEPS")]
    pub steps: Option<Vec<String>>,

    /// Number of clients; each has its own connections (1 for loads, 2 for l.i1/l.i2, 3 for
    /// qr/qp) and, unless --shared-table, its own table piN.
    #[arg(long, value_name = "N")]
    pub clients: Option<u64>,

    /// All clients share table pi1 (the original's only1t=yes). Turns deletes off.
    #[arg(long)]
    pub shared_table: bool,

    /// Delete as many rows as are inserted in l.i1, l.i2 and qr/qp, so tables stay the same size
    /// [default: on, off with --shared-table].
    #[arg(long, value_enum)]
    pub deletes: Option<OnOff>,

    /// Delete statement form.
    #[arg(long, value_enum, default_value = "current")]
    pub delete_form: DeleteFormArg,

    /// Rows each client inserts in l.i0 (suffixes k, M, G allowed).
    #[arg(long, value_parser = spec::parse_count, value_name = "ROWS")]
    pub rows_l_i0: Option<u64>,

    /// Rows each client inserts in l.i1.
    #[arg(long, value_parser = spec::parse_count, value_name = "ROWS")]
    pub rows_l_i1: Option<u64>,

    /// Rows each client inserts in l.i2.
    #[arg(long, value_parser = spec::parse_count, value_name = "ROWS")]
    pub rows_l_i2: Option<u64>,

    /// Nominal seconds of each qr/qp step: the background inserter must insert this many
    /// seconds' worth of rows at its rate, so a DBMS that cannot keep up takes longer.
    #[arg(long, value_parser = spec::parse_count, value_name = "SECONDS")]
    pub query_seconds: Option<u64>,

    /// Background insert rates per client in rows/s, one qr/qp pair each.
    #[arg(long, value_delimiter = ',', value_parser = spec::parse_count, value_name = "RATES")]
    pub rates: Option<Vec<u64>>,

    /// Budget of the cleanup + wait after l.i2 [default: preset's, else the original's
    /// min(1200, 60 + l.i0 rows / 1e6)].
    #[arg(long, value_parser = spec::parse_count, value_name = "SECONDS")]
    pub wait_seconds: Option<u64>,

    /// Seed for all generated data and query parameters; same seed, same data.
    #[arg(long)]
    pub seed: Option<u64>,

    /// Shortest data column value [default: 10].
    #[arg(long, value_name = "CHARS")]
    pub data_length_min: Option<u64>,

    /// Longest data column value [default: 20].
    #[arg(long, value_name = "CHARS")]
    pub data_length_max: Option<u64>,

    /// Share of the data column that is random (the rest is 'a's) [default: 50].
    #[arg(long, value_name = "PCT")]
    pub data_random_pct: Option<u64>,

    /// Re-read min(transactionid) every N delete rounds; 0 = only once [default: 1000].
    #[arg(long, value_name = "N")]
    pub resync_get_min: Option<u64>,

    /// LIMIT of range queries and IN-list length of point queries [default: 10].
    #[arg(long, value_name = "N")]
    pub rows_per_query: Option<u64>,

    /// Root of the result directory [default: results/<time>-ibench-<preset>].
    #[arg(long, value_name = "DIR")]
    pub out: Option<PathBuf>,

    /// Where databases live [default: <out>/work, deleted after the run]. A given work dir is
    /// kept, so a later run can continue on it (e.g. --steps qr100 after a load).
    #[arg(long, value_name = "DIR")]
    pub work_dir: Option<PathBuf>,

    /// Keep the databases after the run.
    #[arg(long)]
    pub keep_data: bool,

    /// No progress bars (they are also off when stderr is not a terminal).
    #[arg(long)]
    pub no_progress: bool,

    /// How the benchmark connects to a server: TCP on 127.0.0.1 (as the original) or the unix
    /// socket in the server's private directory.
    #[arg(long, value_enum, default_value = "tcp")]
    pub transport: TransportArg,

    /// OS user that managed servers run as when dbperf runs as root [default: dbperf, created
    /// as a system user if missing]. Servers never run as root.
    #[arg(long, value_name = "USER")]
    pub server_user: Option<String>,

    /// Targets and configs file (see docs/targets.md) [default: ./dbperf.toml when it exists].
    #[arg(long, value_name = "FILE")]
    pub config_file: Option<PathBuf>,

    /// After each step, count the rows in every table (untimed) and record them beside the
    /// inserted and deleted counts. Reads whole tables: for checking a setup, not for results.
    #[arg(long)]
    pub count_rows: bool,

    /// Skip the CPU calibration loop timed before and after each target (about 0.15 s of CPU
    /// per target); the run then records no CPU-speed drift (docs/host.md).
    #[arg(long)]
    pub no_calibration: bool,

    /// Seconds a managed server may take to start answering.
    #[arg(long, default_value_t = 120, value_name = "SECONDS")]
    pub server_start_timeout: u64,

    /// Seconds to pause between targets, so one target's write-back and compaction do not
    /// spill into the next one's measurements (the original sleeps 600-1200 s).
    #[arg(long, default_value_t = 0, value_name = "SECONDS")]
    pub pause_between: u64,

    #[command(flatten)]
    pub sysbench: super::sysbench::SysbenchArgs,
}

#[derive(Clone, Copy, Debug, ValueEnum, PartialEq)]
pub enum TransportArg {
    Tcp,
    Socket,
}

/// Set by Ctrl-C; every role and wait checks it.
fn interrupt_flag() -> Arc<AtomicBool> {
    static FLAG: OnceLock<Arc<AtomicBool>> = OnceLock::new();
    FLAG.get_or_init(|| {
        let flag = Arc::new(AtomicBool::new(false));
        let f = flag.clone();
        let _ = ctrlc::set_handler(move || {
            if f.swap(true, Ordering::SeqCst) {
                eprintln!("\ninterrupted again: killing the servers dbperf started and exiting");
                crate::server::process::kill_all_registered();
                std::process::exit(EXIT_INTERRUPTED);
            }
            eprintln!("\ninterrupted: stopping the step and writing what was measured (Ctrl-C again to quit now)");
        });
        flag
    })
    .clone()
}

fn overrides(a: &RunArgs) -> IbenchOverrides {
    IbenchOverrides {
        clients: a.clients,
        shared_table: a.shared_table,
        deletes: a.deletes.map(|d| d == OnOff::On),
        delete_form: Some(match a.delete_form {
            DeleteFormArg::Current => DeleteForm::Current,
            DeleteFormArg::Old => DeleteForm::Old,
        }),
        rows_l_i0: a.rows_l_i0,
        rows_l_i1: a.rows_l_i1,
        rows_l_i2: a.rows_l_i2,
        query_seconds: a.query_seconds,
        rates: a.rates.clone(),
        wait_seconds: a.wait_seconds,
        seed: a.seed,
        data_length_min: a.data_length_min,
        data_length_max: a.data_length_max,
        data_random_pct: a.data_random_pct,
        resync_get_min: a.resync_get_min,
        rows_per_query: a.rows_per_query,
        steps: a.steps.clone(),
    }
}

/// Insert Benchmark flags make no sense with the sysbench suite; say so rather than ignore them.
fn refuse_ibench_flags(a: &RunArgs) -> anyhow::Result<()> {
    let given = [
        (a.steps.is_some(), "--steps"),
        (
            a.clients.is_some(),
            "--clients (the sysbench suite has --threads)",
        ),
        (a.shared_table, "--shared-table"),
        (a.deletes.is_some(), "--deletes"),
        (
            a.rows_l_i0.is_some(),
            "--rows-l-i0 (the sysbench suite has --rows)",
        ),
        (a.rows_l_i1.is_some(), "--rows-l-i1"),
        (a.rows_l_i2.is_some(), "--rows-l-i2"),
        (a.query_seconds.is_some(), "--query-seconds"),
        (a.rates.is_some(), "--rates"),
        (a.wait_seconds.is_some(), "--wait-seconds"),
        (a.data_length_min.is_some(), "--data-length-min"),
        (a.data_length_max.is_some(), "--data-length-max"),
        (a.data_random_pct.is_some(), "--data-random-pct"),
        (a.resync_get_min.is_some(), "--resync-get-min"),
        (a.rows_per_query.is_some(), "--rows-per-query"),
    ];
    match given.into_iter().find(|(g, _)| *g) {
        Some((_, flag)) => bad_input(format!(
            "{flag} is an Insert Benchmark flag and does not apply to --suite sysbench"
        )),
        None => Ok(()),
    }
}

pub(super) fn now_rfc3339() -> String {
    time::OffsetDateTime::now_utc()
        .format(&time::format_description::well_known::Rfc3339)
        .unwrap_or_default()
}

fn list_presets() {
    let mut t = comfy_table::Table::new();
    t.load_style(comfy_table::presets::UTF8_FULL_CONDENSED);
    t.set_header([
        "preset",
        "l.i0 rows",
        "l.i1 rows",
        "l.i2 rows",
        "qr/qp s",
        "wait s",
        "description",
    ]);
    for p in presets::all() {
        t.add_row([
            p.name.clone(),
            fmt_num(p.rows_l_i0 as f64),
            fmt_num(p.rows_l_i1 as f64),
            fmt_num(p.rows_l_i2 as f64),
            p.query_seconds.to_string(),
            p.wait_seconds
                .map(|w| w.to_string())
                .unwrap_or_else(|| "formula".into()),
            p.description.clone(),
        ]);
    }
    out!("{t}");
    out!("Rows are per client. 'formula' = min(1200, 60 + total l.i0 rows / 1e6) seconds.\n");
    let mut sb = comfy_table::Table::new();
    sb.load_style(comfy_table::presets::UTF8_FULL_CONDENSED);
    sb.set_header([
        "sysbench preset",
        "threads",
        "tables",
        "rows/table",
        "read s",
        "write s",
        "warm-up s",
        "description",
    ]);
    for p in presets::sysbench_all() {
        sb.add_row([
            p.name.clone(),
            p.threads.to_string(),
            p.tables.to_string(),
            fmt_num(p.rows as f64),
            p.read_seconds.to_string(),
            p.write_seconds.to_string(),
            p.warmup_seconds.to_string(),
            p.description.clone(),
        ]);
    }
    out!("{sb}");
    out!("For --suite sysbench (docs/sysbench.md).\n");
    let mut c = comfy_table::Table::new();
    c.load_style(comfy_table::presets::UTF8_FULL_CONDENSED);
    c.set_header([
        "SQLite config (--target sqlite:NAME)",
        "pragmas",
        "what it is",
    ]);
    for cfg in crate::dbms::sqlite::CONFIGS {
        let pragmas: Vec<String> = cfg
            .pragmas
            .iter()
            .map(|(k, v)| format!("{k}={v}"))
            .collect();
        c.add_row([
            cfg.name.to_string(),
            pragmas.join(" "),
            cfg.about.to_string(),
        ]);
    }
    out!("{c}");
}

/// The suite a run executes, with every parameter after preset and flags.
pub(super) enum Workload {
    Ibench(IbenchParams),
    Sysbench(crate::workload::sysbench::SysbenchParams),
}

impl Workload {
    fn suite(&self) -> &'static str {
        match self {
            Workload::Ibench(_) => "ibench",
            Workload::Sysbench(_) => "sysbench",
        }
    }

    fn preset(&self) -> &str {
        match self {
            Workload::Ibench(p) => &p.preset,
            Workload::Sysbench(p) => &p.preset,
        }
    }

    fn steps(&self) -> Vec<String> {
        match self {
            Workload::Ibench(p) => p.steps.clone(),
            Workload::Sysbench(p) => p.step_names(),
        }
    }

    fn parameters(&self) -> anyhow::Result<serde_json::Value> {
        Ok(match self {
            Workload::Ibench(p) => serde_json::to_value(p)?,
            Workload::Sysbench(p) => serde_json::to_value(p)?,
        })
    }

    /// The run continues on tables that must exist already.
    fn needs_existing_tables(&self) -> bool {
        match self {
            Workload::Ibench(p) => p
                .step_names()
                .first()
                .is_some_and(|first| *first != StepName::Li0),
            Workload::Sysbench(p) => !p.load,
        }
    }

    /// Says in one sentence which tables are missing.
    fn check_tables(&self, dbms: &Arc<dyn Dbms>) -> anyhow::Result<()> {
        match self {
            Workload::Ibench(p) => match p.step_names().first() {
                Some(first) if *first != StepName::Li0 => {
                    Ibench::new(p.clone(), dbms.clone()).check_tables(first)
                }
                _ => Ok(()),
            },
            Workload::Sysbench(p) if !p.load => {
                crate::workload::sysbench::Sysbench::new(p.clone(), dbms.clone()).check_tables()
            }
            Workload::Sysbench(_) => Ok(()),
        }
    }
}

pub fn run(args: RunArgs) -> anyhow::Result<i32> {
    if args.list_presets {
        list_presets();
        return Ok(EXIT_OK);
    }
    let workload = match args.suite {
        Suite::Ibench => {
            args.sysbench.refuse_with_ibench()?;
            let preset = presets::get(&args.preset)?;
            Workload::Ibench(spec::ibench_params(&preset, &overrides(&args))?)
        }
        Suite::Sysbench => {
            refuse_ibench_flags(&args)?;
            let params = args.sysbench.params(&args.preset, args.seed)?;
            if args.sysbench.list {
                super::sysbench::print_list(&params);
                return Ok(EXIT_OK);
            }
            Workload::Sysbench(params)
        }
    };
    let target_specs = if args.targets.is_empty() {
        vec!["sqlite".to_string()]
    } else {
        args.targets.clone()
    };
    let file = spec::config_file::load(args.config_file.as_deref())?;
    let mut targets: Vec<Target> = Vec::new();
    for s in &target_specs {
        let t = file.resolve(s, &args.pragmas)?;
        if targets.iter().any(|x| x.name == t.name) {
            return bad_input(format!("target {} is given twice", t.name));
        }
        targets.push(t);
    }
    if let (Workload::Sysbench(p), Some(t)) =
        (&workload, targets.iter().find(|t| t.engine == "sqlite"))
    {
        if p.usepk == 0 {
            return bad_input(format!(
                "--usepk 0 needs a server target: SQLite assigns ids only to an INTEGER PRIMARY \
                 KEY, and target {} is SQLite",
                t.name
            ));
        }
    }
    let out = match &args.out {
        Some(p) => p.clone(),
        None => default_out(workload.suite(), workload.preset()),
    };
    let out_existed = out.exists();
    create_dir(&out, "result directory")?;
    for t in &targets {
        if out.join(&t.name).join("run.json").exists() {
            return bad_input(format!(
                "{} already holds a result for target {}; choose another --out",
                out.display(),
                t.name
            ));
        }
    }
    let (work, delete_work) = match &args.work_dir {
        Some(w) => (w.clone(), false),
        None => (out.join("work"), !args.keep_data),
    };
    create_dir(&work, "work directory")?;
    let show = !args.no_progress && std::io::stderr().is_terminal();
    let interrupt = interrupt_flag();

    // Everything a user can get wrong about a target is checked before the first step runs; if
    // something is wrong, directories this run created are removed again.
    let opened = match open_targets(&targets, &workload, &work, &args) {
        Ok(o) => o,
        Err(e) => {
            if delete_work {
                let _ = fs::remove_dir_all(&work);
            }
            if !out_existed {
                let _ = fs::remove_dir(&out);
            }
            return Err(e);
        }
    };

    let mut results: Vec<(String, Vec<StepFile>)> = Vec::new();
    let mut code = EXIT_OK;
    let mut fatal: Option<anyhow::Error> = None;
    let socket = args.transport == TransportArg::Socket;
    for (i, (t, prepared)) in opened.into_iter().enumerate() {
        if i > 0 && args.pause_between > 0 {
            eprintln!("pausing {} s before the next target", args.pause_between);
            let until =
                std::time::Instant::now() + std::time::Duration::from_secs(args.pause_between);
            while std::time::Instant::now() < until && !interrupt.load(Ordering::SeqCst) {
                std::thread::sleep(std::time::Duration::from_millis(50));
            }
        }
        if interrupt.load(Ordering::SeqCst) {
            break;
        }
        let steps = workload.steps();
        eprintln!("== {} ({} steps: {})", t.name, steps.len(), steps.join(" "));
        let ctx = TargetRun {
            workload: &workload,
            out: &out,
            show,
            interrupt: &interrupt,
            count_rows: args.count_rows,
            calibrate: !args.no_calibration,
            work: &work,
        };
        let r = match prepared {
            Prepared::Open(dbms) => {
                let record = t.external.as_ref().map(|e| ServerRecord {
                    managed: false,
                    binary: None,
                    datadir: None,
                    os_user: None,
                    pid: None,
                    connection: e.endpoint.describe(),
                    start_s: None,
                    stopped: None,
                });
                run_workload(t, dbms, record, None, &ctx)
            }
            Prepared::Server(plan) => {
                match start_server(t, &plan, &work.join(&t.name).join("server"), socket) {
                    Ok((mut running, dbms, record)) => {
                        let r = run_workload(t, dbms, Some(record), Some(&mut running), &ctx);
                        running.stop();
                        r
                    }
                    Err(e) => {
                        eprintln!("error: target {} could not start: {e:#}", t.name);
                        record_start_failure(t, &plan, &format!("{e:#}"), &ctx)?;
                        code = EXIT_FAILED;
                        continue;
                    }
                }
            }
        };
        match r {
            Ok((steps, status)) => {
                if status == "failed" {
                    code = EXIT_FAILED;
                }
                results.push((t.name.clone(), steps));
            }
            Err(e) if is_bad_input(&e) => {
                fatal = Some(e);
                break;
            }
            Err(e) => {
                eprintln!("error: target {}: {e:#}", t.name);
                code = EXIT_FAILED;
            }
        }
    }
    if delete_work {
        let _ = fs::remove_dir_all(&work);
    } else if args.keep_data || args.work_dir.is_some() {
        eprintln!("databases kept in {}", work.display());
    }
    if let Some(e) = fatal {
        return Err(e);
    }
    let summaries: Vec<TargetSteps> = results
        .iter()
        .map(|(n, s)| TargetSteps {
            target: n,
            steps: s,
        })
        .collect();
    if summaries.iter().any(|s| !s.steps.is_empty()) {
        out!("{}", table(&summaries));
    }
    out!("Results: {}", out.display());
    super::report::after_run(&out, &targets);
    if interrupt.load(Ordering::SeqCst) {
        return Ok(EXIT_INTERRUPTED);
    }
    Ok(code)
}

/// A target ready to run: an embedded engine or external server already open, or a server to
/// start.
enum Prepared {
    Open(Arc<dyn Dbms>),
    Server(Box<server::Plan>),
}

type Opened<'a> = Vec<(&'a Target, Prepared)>;

fn open_targets<'a>(
    targets: &'a [Target],
    workload: &Workload,
    work: &Path,
    args: &RunArgs,
) -> anyhow::Result<Opened<'a>> {
    let mut opened = Vec::new();
    let mut user = None;
    for t in targets {
        let twork = work.join(&t.name);
        if let Some(ext) = &t.external {
            let dbms = external_dbms(t, &ext.endpoint);
            // Fail now, with one sentence, if the server cannot be reached.
            dbms.connect()
                .map_err(|e| BadInput(format!("target {}: {e:#}", t.name)))?;
            workload.check_tables(&dbms)?;
            opened.push((t, Prepared::Open(dbms)));
            continue;
        }
        if t.is_server() {
            if workload.needs_existing_tables() {
                return bad_input(match workload {
                    Workload::Ibench(_) => format!(
                        "target {} is a server dbperf starts empty, so the steps must begin with l.i0",
                        t.name
                    ),
                    Workload::Sysbench(_) => format!(
                        "target {} is a server dbperf starts empty, so --skip-load cannot be used with it",
                        t.name
                    ),
                });
            }
            if user.is_none() {
                user = Some(server::process::server_user(args.server_user.as_deref())?);
            }
            let plan = server::Plan::for_target(
                t,
                user.clone().flatten(),
                std::time::Duration::from_secs(args.server_start_timeout),
                Some(interrupt_flag()),
            )?;
            create_dir(&twork, "work directory")?;
            opened.push((t, Prepared::Server(Box::new(plan))));
            continue;
        }
        create_dir(&twork, "work directory")?;
        let dbms = dbms::open_embedded(t, &twork)?;
        // A run that starts after the load continues on an existing database.
        workload.check_tables(&dbms)?;
        opened.push((t, Prepared::Open(dbms)));
    }
    Ok(opened)
}

fn mysql_kind(t: &Target) -> (crate::dbms::mysql::Flavor, crate::dbms::mysql::Storage) {
    use crate::dbms::mysql::{Flavor, Storage};
    let flavor = if t.engine == "mysql" {
        Flavor::MySql
    } else {
        Flavor::MariaDb
    };
    let storage = if t.rocksdb() {
        Storage::RocksDb
    } else {
        Storage::InnoDb
    };
    (flavor, storage)
}

/// The adapter for a server dbperf does not manage (its config file is unknown to dbperf; the
/// effective settings are still read from the server).
fn external_dbms(t: &Target, ep: &crate::dbms::Endpoint) -> Arc<dyn Dbms> {
    if t.engine == "postgres" {
        Arc::new(crate::dbms::postgres::Postgres::new(
            ep.clone(),
            &t.config,
            "",
        ))
    } else {
        let (flavor, storage) = mysql_kind(t);
        Arc::new(crate::dbms::mysql::Mysql::new(
            ep.clone(),
            flavor,
            storage,
            &t.config,
            "",
        ))
    }
}

/// Starts a managed server, creates the benchmark database and opens the adapter.
fn start_server(
    t: &Target,
    plan: &server::Plan,
    dir: &Path,
    socket: bool,
) -> anyhow::Result<(server::Running, Arc<dyn Dbms>, ServerRecord)> {
    let started = std::time::Instant::now();
    let running = plan.start(dir)?;
    let start_s = started.elapsed().as_secs_f64();
    let ep = running.endpoint(socket, server::DATABASE);
    let dbms: Arc<dyn Dbms> = match plan.kind {
        server::Kind::Postgres => {
            crate::dbms::postgres::ensure_database(
                &running.endpoint(socket, "postgres"),
                server::DATABASE,
            )
            .map_err(|e| anyhow::anyhow!("creating database {}: {e}", server::DATABASE))?;
            Arc::new(crate::dbms::postgres::Postgres::new(
                ep.clone(),
                &plan.config_name,
                &plan.config_text,
            ))
        }
        kind => {
            use crate::dbms::mysql::{Flavor, Mysql, Storage};
            let flavor = if kind == server::Kind::MySql {
                Flavor::MySql
            } else {
                Flavor::MariaDb
            };
            let storage = if plan.rocksdb {
                Storage::RocksDb
            } else {
                Storage::InnoDb
            };
            let admin = Mysql::new(running.endpoint(socket, "mysql"), flavor, storage, "", "");
            admin
                .connect()
                .and_then(|mut c| {
                    Ok(c.execute_batch(&format!(
                        "CREATE DATABASE IF NOT EXISTS {}",
                        server::DATABASE
                    ))?)
                })
                .map_err(|e| anyhow::anyhow!("creating database {}: {e:#}", server::DATABASE))?;
            Arc::new(Mysql::new(
                ep.clone(),
                flavor,
                storage,
                &plan.config_name,
                &plan.config_text,
            ))
        }
    };
    eprintln!(
        "{:>7} started {} (pid {}) in {start_s:.1} s; connecting over {}",
        "",
        plan.layout.server.display(),
        running.pid,
        ep.describe()
    );
    let record = ServerRecord {
        managed: true,
        binary: Some(plan.layout.server.display().to_string()),
        datadir: Some(running.datadir.display().to_string()),
        os_user: plan.user.as_ref().map(|u| u.name.clone()),
        pid: Some(running.pid),
        connection: ep.describe(),
        start_s: Some(crate::cli::record::round3(start_s)),
        stopped: None,
    };
    let _ = t;
    Ok((running, dbms, record))
}

fn default_out(suite: &str, preset: &str) -> PathBuf {
    let fmt = time::macros::format_description!("[year][month][day]-[hour][minute][second]");
    let stamp = time::OffsetDateTime::now_utc()
        .format(&fmt)
        .unwrap_or_default();
    let base = PathBuf::from("results").join(format!("{stamp}-{suite}-{preset}"));
    let mut p = base.clone();
    let mut i = 2;
    while p.exists() {
        p = PathBuf::from(format!("{}-{i}", base.display()));
        i += 1;
    }
    p
}

pub(super) fn create_dir(p: &Path, what: &str) -> anyhow::Result<()> {
    if let Err(e) = fs::create_dir_all(p) {
        return bad_input(format!("cannot create {what} {}: {e}", p.display()));
    }
    let probe = p.join(".dbperf-write-test");
    if let Err(e) = fs::write(&probe, b"") {
        return bad_input(format!("cannot write into {what} {}: {e}", p.display()));
    }
    let _ = fs::remove_file(probe);
    Ok(())
}

pub(super) struct TargetRun<'a> {
    pub workload: &'a Workload,
    pub out: &'a Path,
    pub show: bool,
    pub interrupt: &'a Arc<AtomicBool>,
    pub count_rows: bool,
    pub calibrate: bool,
    /// Databases live in `<work>/<target>`: the data directory whose devices the host record
    /// describes.
    pub work: &'a Path,
}

fn new_run_file(
    target: &Target,
    engine: &str,
    ctx: &TargetRun,
    host: serde_json::Value,
) -> anyhow::Result<RunFile> {
    Ok(RunFile {
        schema: SCHEMA,
        tool: Tool {
            name: "dbperf".into(),
            version: env!("CARGO_PKG_VERSION").into(),
            git_revision: crate::git_revision().into(),
        },
        command_line: std::env::args().collect(),
        target: TargetInfo {
            name: target.name.clone(),
            engine: engine.into(),
            version: "unknown (not started)".into(),
            config_name: target.config.clone(),
            config_text: String::new(),
            server: None,
        },
        suite: ctx.workload.suite().into(),
        preset: ctx.workload.preset().into(),
        parameters: ctx.workload.parameters()?,
        steps_planned: ctx.workload.steps(),
        host,
        started_at: now_rfc3339(),
        ended_at: None,
        status: "running".into(),
        failed_step: None,
        error: None,
        client_peak_rss_kb: None,
        warnings: Vec::new(),
    })
}

/// A server that would not start still leaves a result saying why (with its log's last lines).
fn record_start_failure(
    t: &Target,
    plan: &server::Plan,
    error: &str,
    ctx: &TargetRun,
) -> anyhow::Result<()> {
    let tdir = ctx.out.join(&t.name);
    create_dir(&tdir, "result directory")?;
    let host = crate::host::fingerprint(&Default::default(), &[ctx.work.join(&t.name)]);
    let mut run = new_run_file(t, plan.kind.name(), ctx, serde_json::to_value(host)?)?;
    run.target.config_text = plan.config_text.clone();
    run.status = "failed".into();
    run.error = Some(format!("server did not start: {error}"));
    run.ended_at = Some(now_rfc3339());
    results::write_json_atomic(&tdir.join("run.json"), &run).map_err(|e| {
        BadInput(format!(
            "cannot write {}: {e}",
            tdir.join("run.json").display()
        ))
    })?;
    Ok(())
}

/// A target in progress: where its results go, its run file, and the host monitor.
pub(super) struct Started {
    pub tdir: PathBuf,
    pub steps_dir: PathBuf,
    pub run: RunFile,
    pub monitor: Monitor,
}

impl Started {
    pub fn write_run(&self) -> anyhow::Result<()> {
        let p = self.tdir.join("run.json");
        results::write_json_atomic(&p, &self.run)
            .map_err(|e| BadInput(format!("cannot write {}: {e}", p.display())).into())
    }
}

/// Creates the target's result directory, starts watching the host and writes the first
/// run.json (status `running`).
pub(super) fn begin_target(
    target: &Target,
    dbms: &Arc<dyn Dbms>,
    record: &Option<ServerRecord>,
    ctx: &TargetRun,
) -> anyhow::Result<Started> {
    crate::host::reset_own_peak_rss(&Default::default());
    let tdir = ctx.out.join(&target.name);
    let steps_dir = tdir.join("steps");
    create_dir(&steps_dir, "result directory")?;
    let monitor = Monitor::start(
        Default::default(),
        vec![ctx.work.join(&target.name)],
        ctx.calibrate,
    );
    eprintln!("{:>7} host: {}", "", monitor.summary());
    let host = serde_json::to_value(monitor.fingerprint())?;
    let mut run = new_run_file(target, dbms.engine(), ctx, host)?;
    run.target.version = dbms.version()?;
    run.target.config_name = dbms.config_name().into();
    run.target.config_text = dbms.config_text()?;
    run.target.server = record.clone();
    let started = Started {
        tdir,
        steps_dir,
        run,
        monitor,
    };
    started.write_run()?;
    Ok(started)
}

/// Stops a managed server, records how it ended and what the host did, and writes the final
/// run.json.
pub(super) fn end_target(
    st: Started,
    status: &str,
    mut running: Option<&mut server::Running>,
    record: Option<&ServerRecord>,
) -> anyhow::Result<()> {
    let Started {
        tdir,
        mut run,
        monitor,
        ..
    } = st;
    if let (Some(running), Some(record)) = (running.as_mut(), record) {
        let died = !running.alive();
        let how = running.stop();
        if died && status == "failed" {
            let tail = running.log_tail(15);
            eprintln!("the server had exited; the end of its log:\n{tail}");
            if let Some(e) = run.error.as_mut() {
                e.push_str(&format!(" (the server had exited; its log ends:\n{tail})"));
            }
        }
        let mut r = record.clone();
        r.stopped = Some(if died {
            format!("exited during the run; {how}")
        } else {
            how
        });
        run.target.server = Some(r);
    }
    let (host_record, host_warnings) = monitor.finish();
    if let Some(c) = &host_record.calibration {
        eprintln!(
            "{:>7} host: calibration loop {:.1} ms before the run, {:.1} ms after ({:+.1}%)",
            "", c.before_ms, c.after_ms, c.drift_pct
        );
    }
    for w in &host_warnings {
        eprintln!("{:>7} host warning: {w}", "");
    }
    if let Some(h) = run.host.as_object_mut() {
        h.insert("during_run".into(), serde_json::to_value(&host_record)?);
    }
    run.warnings = host_warnings;
    run.status = status.into();
    run.ended_at = Some(now_rfc3339());
    run.client_peak_rss_kb = crate::host::own_peak_rss_kb(&Default::default());
    let p = tdir.join("run.json");
    results::write_json_atomic(&p, &run)
        .map_err(|e| BadInput(format!("cannot write {}: {e}", p.display())).into())
}

/// Runs the run's suite on one target.
fn run_workload(
    target: &Target,
    dbms: Arc<dyn Dbms>,
    record: Option<ServerRecord>,
    running: Option<&mut server::Running>,
    ctx: &TargetRun,
) -> anyhow::Result<(Vec<StepFile>, &'static str)> {
    match ctx.workload {
        Workload::Ibench(p) => {
            let ib = Ibench::new(p.clone(), dbms.clone());
            run_target(target, dbms, ib, record, running, ctx)
        }
        Workload::Sysbench(p) => super::sysbench::run_target(target, dbms, p, record, running, ctx),
    }
}

/// Runs every Insert Benchmark step on one target. Returns its step files and final status; Err
/// only when nothing could be measured (bad input, or the target could not even be opened).
fn run_target(
    target: &Target,
    dbms: Arc<dyn Dbms>,
    ib: Ibench,
    record: Option<ServerRecord>,
    running: Option<&mut server::Running>,
    ctx: &TargetRun,
) -> anyhow::Result<(Vec<StepFile>, &'static str)> {
    let TargetRun {
        show, interrupt, ..
    } = *ctx;
    let params = &ib.params;
    let names = params.step_names();
    let mut st = begin_target(target, &dbms, &record, ctx)?;
    let steps_dir = st.steps_dir.clone();

    // Where the target's data lives, for IO and size: the server's datadir, SQLite's directory,
    // or nowhere on this host for an external server.
    let data_dir = match (&running, target.external.is_some()) {
        (Some(r), _) => Some(r.datadir.clone()),
        (None, true) => None,
        (None, false) => Some(ctx.work.join(&target.name)),
    };
    let sources = metrics::Sources::new(data_dir.as_deref(), running.as_ref().map(|r| r.pid));
    let all = params.all_step_names();
    let mut steps: Vec<StepFile> = Vec::new();
    let mut status = "ok";
    for (i, name) in names.iter().enumerate() {
        if interrupt.load(Ordering::SeqCst) {
            status = "interrupted";
            break;
        }
        let def = params.step_def(name);
        let step_index = all.iter().position(|n| n == name).unwrap_or(i) as u64;
        let started_at = now_rfc3339();
        let record =
            |m,
             o,
             c,
             st: &'static str,
             err: Option<String>,
             warnings: Vec<String>,
             table_rows: Option<std::collections::BTreeMap<String, u64>>| {
                step_file(StepRecord {
                    params,
                    def: &def,
                    started_at: started_at.clone(),
                    measurement: m,
                    outcome: o,
                    cleanup: c,
                    status: st,
                    error: err,
                    warnings,
                    table_rows,
                })
            };
        let prepared = match ib.prepare(&def) {
            Ok(p) => p,
            Err(e) => {
                let sf = record(
                    None,
                    None,
                    None,
                    "failed",
                    Some(format!("before the step: {e:#}")),
                    Vec::new(),
                    None,
                );
                finish_step(&steps_dir, &sf)?;
                eprintln!(
                    "{:>7} FAILED before it started: {e:#}",
                    def.name.to_string()
                );
                st.run.failed_step = Some(def.name.to_string());
                st.run.error = sf.error.clone();
                steps.push(sf);
                status = "failed";
                break;
            }
        };
        for w in &prepared.warnings {
            eprintln!("{:>7} warning: {w}", def.name.to_string());
        }
        let kinds = def.kinds().into_iter().map(|k| (k, KINDS[k])).collect();
        let series = SeriesWriter::create(&steps_dir, &def.name.to_string(), kinds)
            .map_err(|e| BadInput(format!("cannot write into {}: {e}", steps_dir.display())))?;
        let mut progress = StepProgress::new(&def, series, show);
        let plan = ib.plan(&def, step_index);
        st.monitor.step_begins(&def.name.to_string());
        // Counters first and last, so their queries fall outside the /proc interval.
        let counters_before = dbms.counters().map_err(|e| e.to_string());
        let before = metrics::Snapshot::take(&sources);
        let host_series =
            metrics::series::HostSeries::create(&steps_dir, &def.name.to_string(), &sources)
                .map_err(|e| BadInput(format!("cannot write into {}: {e}", steps_dir.display())))?;
        let m = engine::run_step(
            plan,
            &mut Sampling {
                progress: &mut progress,
                monitor: &mut st.monitor,
                host_series: Some(host_series),
                sources: Some(&sources),
                at_second: None,
            },
            interrupt,
        );
        let after = metrics::Snapshot::take(&sources);
        let counters_after = if m.failure.is_some() {
            Err("not read: the step failed".to_string())
        } else {
            dbms.counters().map_err(|e| e.to_string())
        };
        st.monitor.step_ends();
        progress.finish()?;
        let outcome = ib.outcome(&def, &m, &prepared);
        let mut step_status = if m.failure.is_some() {
            "failed"
        } else if m.interrupted {
            "interrupted"
        } else {
            "ok"
        };
        let mut error = m.failure.clone();
        let follows_query = names[i + 1..]
            .iter()
            .any(|n| matches!(n, StepName::Qr(_) | StepName::Qp(_)));
        let cleanup = if *name == StepName::Li2 && step_status == "ok" && follows_query {
            let (budget, _) = params.wait_budget();
            eprintln!(
                "{:>7} cleanup and wait (budget {budget} s) before the query steps",
                ""
            );
            let c = ib.cleanup_and_wait(interrupt);
            if let Some(e) = &c.error {
                step_status = "failed";
                error = Some(format!("cleanup after l.i2 failed: {e}"));
            } else if interrupt.load(Ordering::SeqCst) {
                step_status = "interrupted";
            }
            Some(c)
        } else {
            None
        };
        let table_rows = if ctx.count_rows && step_status != "failed" {
            match ib.count_rows() {
                Ok(r) => Some(r),
                Err(e) => {
                    eprintln!("{:>7} could not count rows: {e:#}", def.name.to_string());
                    None
                }
            }
        } else {
            None
        };
        let mut sf = record(
            Some(&m),
            Some(&outcome),
            cleanup.as_ref(),
            step_status,
            error,
            prepared.warnings.clone(),
            table_rows,
        );
        let is_query = matches!(def.name, StepName::Qr(_) | StepName::Qp(_));
        let mut hw = metrics::hardware(
            &sources,
            &before,
            &after,
            &metrics::Work {
                op: match def.name {
                    StepName::Lx => "indexed_row",
                    _ if is_query => "query",
                    _ => "insert",
                },
                op_count: sf.headline.value * sf.duration_s,
                inserted_rows: sf.ops.get("insert").map_or(0, |o| o.rows),
                is_query_step: is_query,
            },
        );
        sf.dbms = Some(metrics::dbms_counters(
            dbms.engine(),
            counters_before,
            counters_after,
            data_dir.as_deref(),
            &mut hw,
        ));
        sf.hardware = Some(hw);
        finish_step(&steps_dir, &sf)?;
        eprintln!("{}", step_line(&sf));
        steps.push(sf);
        match step_status {
            "failed" => {
                st.run.failed_step = Some(def.name.to_string());
                st.run.error = steps.last().and_then(|s| s.error.clone());
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
    end_target(st, status, running, record.as_ref())?;
    Ok((steps, status))
}

/// Feeds the progress view and samples the host's CPU frequency on the engine's once-a-second
/// tick, so sampling costs no thread of its own and happens only while a step is measured.
pub(super) struct Sampling<'a> {
    pub progress: &'a mut dyn engine::Observer,
    pub monitor: &'a mut Monitor,
    /// Per-second host samples; None when not taken or once a write failed (the samples are
    /// lost, the step goes on).
    pub host_series: Option<metrics::series::HostSeries>,
    pub sources: Option<&'a metrics::Sources>,
    /// Called once, when the given full second of the step has ended (the end of a warm-up).
    pub at_second: Option<(u64, &'a mut dyn FnMut())>,
}

impl Drop for Sampling<'_> {
    fn drop(&mut self) {
        if let Some(h) = self.host_series.take() {
            let _ = h.finish();
        }
    }
}

impl engine::Observer for Sampling<'_> {
    fn on_second(&mut self, row: &engine::SecondRow) {
        self.progress.on_second(row);
        if let (Some(h), Some(s)) = (self.host_series.as_mut(), self.sources) {
            if h.sample(s).is_err() {
                self.host_series = None;
            }
        }
        // The last, partial row is reported after the load has stopped.
        if row.interval_s >= 0.999 {
            self.monitor.second();
            if let Some((second, f)) = self.at_second.as_mut() {
                if row.index == *second {
                    f();
                }
            }
        }
    }
}

pub(super) fn finish_step(steps_dir: &Path, sf: &StepFile) -> anyhow::Result<()> {
    let p = steps_dir.join(format!("{}.json", sf.step));
    results::write_json_atomic(&p, sf)
        .map_err(|e| BadInput(format!("cannot write {}: {e}", p.display())).into())
}

pub(super) fn step_line(s: &StepFile) -> String {
    let mut line = format!(
        "{:>7} {:>7.1} s  {} {}",
        s.step,
        s.duration_s,
        fmt_num(s.headline.value),
        s.headline.unit
    );
    if let Some(sla) = &s.sla {
        line.push_str(&format!(
            "  background inserts {} of {} rows/s ({})",
            fmt_num(sla.achieved_rows_per_s),
            fmt_num(sla.target_rows_per_s),
            match sla.met {
                Some(true) => "SLA met",
                Some(false) => "SLA MISSED",
                None => "SLA not judged: step incomplete",
            }
        ));
    }
    if s.status != "ok" {
        line.push_str(&format!("  {}", s.status.to_uppercase()));
        if let Some(e) = &s.error {
            line.push_str(&format!(": {e}"));
        }
    }
    line
}
