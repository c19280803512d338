//! `dbperf run`: flags into a session request, the session's events onto the terminal, then the
//! summary table and the report. The run loop itself is `session`'s.

use std::io::IsTerminal;
use std::path::{Path, PathBuf};
use std::sync::atomic::AtomicBool;
use std::sync::Arc;
use std::time::Duration;

use clap::{ArgGroup, Args, ValueEnum};

use super::flags::OnOff;
use super::given::{Given, IBENCH, WORKLOAD};
use super::render::Terminal;
use super::summary::{fmt_num, table, TargetSteps};
use super::{EXIT_FAILED, EXIT_INTERRUPTED, EXIT_OK};
use crate::error::bad_input;
use crate::results::campaign::{Invocation, Shard};
use crate::session::{self, Exit, IbenchSuite, IgnoreErrors, Request, SysbenchSuite};
use crate::spec::{self, presets, target::Target, DeleteForm, IbenchOverrides, StatementForms};
use crate::suites::Suite;

/// `--suite` takes the registry's names, with their help.
impl ValueEnum for Suite {
    fn value_variants<'a>() -> &'a [Self] {
        const ALL: [Suite; crate::suites::REGISTRY.len()] = {
            let mut all = [Suite::DEFAULT; crate::suites::REGISTRY.len()];
            let mut i = 0;
            while i < all.len() {
                all[i] = crate::suites::REGISTRY[i].suite;
                i += 1;
            }
            all
        };
        &ALL
    }

    fn to_possible_value(&self) -> Option<clap::builder::PossibleValue> {
        Some(clap::builder::PossibleValue::new(self.name()).help(self.entry().help))
    }
}

#[derive(Clone, Copy, Debug, ValueEnum, PartialEq)]
pub enum ProfileScopeArg {
    /// Every CPU, the sampled processes' stacks kept when folding.
    System,
    /// Attached to the processes.
    Processes,
}

#[derive(Clone, Copy, Debug, ValueEnum, PartialEq)]
pub enum DeleteFormArg {
    /// 2024 form: delete the N lowest PKs at or above the estimated minimum.
    Current,
    /// Pre-2024 form: delete the PK range [min, min + N).
    Old,
}

#[derive(Clone, Copy, Debug, ValueEnum, PartialEq)]
pub enum StatementFormsArg {
    /// What the original sends on each engine.
    Original,
    /// Every statement prepared.
    Prepared,
}

/// `dbperf run`'s options. Those that say what a suite does are declared in a group (`ibench`,
/// `sysbench`, `workload` for those of every suite), which is how the run knows which were given
/// with the wrong suite or beside a campaign that decides them.
#[derive(Args, Debug)]
#[command(args_override_self = true,
          group(ArgGroup::new(WORKLOAD).multiple(true)),
          group(ArgGroup::new(IBENCH).multiple(true)))]
pub struct RunArgs {
    /// Benchmark suite to run.
    #[arg(long, value_enum, default_value_t = Suite::DEFAULT, group = WORKLOAD)]
    pub suite: Suite,

    /// Sizes and durations (see --list-presets); each is overridable by the flags below. The
    /// sysbench suite has its own presets: quick, 1u.1t, 4u.1t, 4u.4t.
    #[arg(long, default_value = "quick")]
    pub preset: String,

    /// List the presets with their sizes, the SQLite configs and the built-in published server
    /// configs, then exit.
    #[arg(long)]
    pub list_presets: bool,

    /// Target to benchmark, repeatable: ENGINE[:CONFIG], e.g. `sqlite`, `sqlite:delete-full`.
    /// SQLite configs: wal-normal (default), wal-full, wal-off, delete-full, defaults. Server
    /// configs: default, and the published ones (`postgres@16:cx9a2`, `mariadb@10.11:cz11a`;
    /// --list-presets, docs/configs.md). Targets run one after another, each into its own result directory.
    #[arg(long = "target", value_name = "TARGET", group = WORKLOAD)]
    pub targets: Vec<String>,

    /// Read-ahead (KB) of the block devices under each cell's data, or a list for a sweep
    /// (`0,128,4096`): every cell runs at each value, set before it and put back exactly after
    /// (as root; docs/campaigns.md). A campaign's `read_ahead_kb = [...]`.
    #[arg(long, value_name = "KB[,KB...]", value_parser = spec::parse_kb_list, group = WORKLOAD)]
    pub read_ahead_kb: Option<spec::KbList>,

    /// The I/O scheduler of those devices' disks, or a list for a sweep (`none,mq-deadline`);
    /// with --read-ahead-kb, every combination. A campaign's `io_scheduler = [...]`.
    #[arg(long, value_name = "NAME[,NAME...]", value_parser = spec::parse_schedulers,
          group = WORKLOAD)]
    pub io_scheduler: Option<spec::Schedulers>,

    /// A server setting swept over, SETTING=VALUE,VALUE...: every target runs once per value,
    /// with `SETTING = VALUE` after its config's lines (`innodb_page_size=4k,8k,16k`, given to
    /// the install step as the config's install-time options are; a SQLite pragma for SQLite).
    /// A campaign's `vary = { setting = "...", values = [...] }`.
    #[arg(long, value_name = "SETTING=V,V...", value_parser = spec::target::parse_vary,
          group = WORKLOAD)]
    pub vary: Option<spec::target::Vary>,

    /// Cap what each managed server may hold in memory, page cache and shared memory included
    /// (a memory cgroup per server, as root): `512M`, `2G`. Makes a run IO-bound on a host
    /// with more RAM than data; the server's config is sized for the cap, not the host
    /// (docs/io-bound.md). A campaign's `server_memory = "512M"`.
    #[arg(long, value_name = "SIZE", value_parser = spec::parse_server_memory, group = WORKLOAD)]
    pub server_memory: Option<u64>,

    /// Extra SQLite pragma for every sqlite target, repeatable: --pragma cache_size=-65536.
    #[arg(long = "pragma", value_name = "KEY=VALUE", value_parser = spec::target::parse_setting,
          group = WORKLOAD)]
    pub pragmas: Vec<(String, String)>,

    /// Steps to run, comma-separated, always in benchmark order
    /// (l.i0,l.x,l.i1,l.i2,qr100,qp100,qr500,qp500,qr1000,qp1000).
    #[arg(long, value_delimiter = ',', value_name = "STEPS", group = IBENCH)]
    pub steps: Option<Vec<String>>,

    /// Number of clients; each has its own connections (1 for loads, 2 for l.i1/l.i2, 3 for
    /// qr/qp) and, unless --shared-table, its own table piN. A list (`1,4`) is a sweep: each
    /// level is its own cell with a fresh load (rows are per client, so the data grows with the
    /// level unless --shared-table).
    #[arg(long, value_name = "N[,N...]", value_parser = spec::parse_levels, group = IBENCH)]
    pub clients: Option<spec::Levels>,

    /// All clients share table pi1 (the original's only1t=yes). Turns deletes off.
    #[arg(long, group = IBENCH)]
    pub shared_table: bool,

    /// Delete as many rows as are inserted in l.i1, l.i2 and qr/qp, so tables stay the same size
    /// [default: on, off with --shared-table].
    #[arg(long, value_enum, group = IBENCH)]
    pub deletes: Option<OnOff>,

    /// Delete statement form.
    #[arg(long, value_enum, default_value = "current", group = IBENCH)]
    pub delete_form: DeleteFormArg,

    /// Which statements are prepared: `original` sends what the original's iibench.py sends
    /// (INSERTs and DELETEs as SQL text, queries prepared on PostgreSQL and SQLite and as text
    /// on MySQL/MariaDB); `prepared` prepares every statement [default: original].
    #[arg(long, value_enum, value_name = "FORMS", group = IBENCH)]
    pub statement_forms: Option<StatementFormsArg>,

    /// Rows each client inserts in l.i0 (suffixes k, M, G allowed).
    #[arg(long, value_parser = spec::parse_count, value_name = "ROWS", group = IBENCH)]
    pub rows_l_i0: Option<u64>,

    /// Rows each client inserts in l.i1.
    #[arg(long, value_parser = spec::parse_count, value_name = "ROWS", group = IBENCH)]
    pub rows_l_i1: Option<u64>,

    /// Rows each client inserts in l.i2.
    #[arg(long, value_parser = spec::parse_count, value_name = "ROWS", group = IBENCH)]
    pub rows_l_i2: Option<u64>,

    /// Nominal seconds of each qr/qp step: the background inserter must insert this many
    /// seconds' worth of rows at its rate, so a DBMS that cannot keep up takes longer.
    #[arg(long, value_parser = spec::parse_count, value_name = "SECONDS", group = IBENCH)]
    pub query_seconds: Option<u64>,

    /// Background insert rates per client in rows/s, one qr/qp pair each.
    #[arg(long, value_delimiter = ',', value_parser = spec::parse_count, value_name = "RATES", group = IBENCH)]
    pub rates: Option<Vec<u64>>,

    /// Budget of the cleanup + wait after l.i2 [default: preset's, else the original's
    /// min(1200, 60 + l.i0 rows / 1e6)].
    #[arg(long, value_parser = spec::parse_count, value_name = "SECONDS", group = IBENCH)]
    pub wait_seconds: Option<u64>,

    /// Seed for all generated data and query parameters; same seed, same data.
    #[arg(long, group = WORKLOAD)]
    pub seed: Option<u64>,

    /// Shortest data column value [default: 10].
    #[arg(long, value_name = "CHARS", group = IBENCH)]
    pub data_length_min: Option<u64>,

    /// Longest data column value [default: 20].
    #[arg(long, value_name = "CHARS", group = IBENCH)]
    pub data_length_max: Option<u64>,

    /// Share of the data column that is random (the rest is 'a's) [default: 50].
    #[arg(long, value_name = "PCT", group = IBENCH)]
    pub data_random_pct: Option<u64>,

    /// Re-read min(transactionid) every N delete rounds; 0 = only once [default: 1000].
    #[arg(long, value_name = "N", group = IBENCH)]
    pub resync_get_min: Option<u64>,

    /// LIMIT of range queries and IN-list length of point queries [default: 10].
    #[arg(long, value_name = "N", group = IBENCH)]
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

    /// Fetch a build a `--target ENGINE@VERSION` names when it is not in the build cache
    /// (docs/fetch.md); without it such a target is refused with the `dbperf fetch` to run.
    #[arg(long)]
    pub fetch: bool,

    /// The build cache `ENGINE@VERSION` targets come from [default:
    /// $XDG_CACHE_HOME/dbperf/dbms, else ~/.cache/dbperf/dbms].
    #[arg(long, value_name = "DIR")]
    pub cache_dir: Option<PathBuf>,

    /// After each step, count the rows in every table (untimed) and record them beside the
    /// inserted and deleted counts. Reads whole tables: for checking a setup, not for results.
    #[arg(long)]
    pub count_rows: bool,

    /// Skip the CPU calibration loop timed before and after each target (about 0.15 s of CPU
    /// per target); the run then records no CPU-speed drift (docs/host.md).
    #[arg(long)]
    pub no_calibration: bool,

    /// Seconds a managed server may take to start answering.
    #[arg(long, default_value_t = 120, value_name = "SECONDS",
          value_parser = clap::value_parser!(u64).range(1..=86_400))]
    pub server_start_timeout: u64,

    /// Seconds a benchmark statement may take from its start, however the server sends its
    /// bytes; past it the statement and its step fail. Statements allowed to run long (index
    /// builds, VACUUM, loads) wait longer while the server answers a new connection after this
    /// long without a byte, up to --ddl-timeout (docs/reliability.md).
    #[arg(long, default_value_t = 60, value_name = "SECONDS",
          value_parser = clap::value_parser!(u64).range(1..=86_400))]
    pub statement_timeout: u64,

    /// Seconds a statement allowed to run long (DDL, an index build, VACUUM, ANALYZE, a load, a
    /// full count) may take from its start, even while the server answers; it must be at least
    /// the statement timeout.
    #[arg(long, default_value_t = 86_400, value_name = "SECONDS",
          value_parser = clap::value_parser!(u64).range(1..=2_592_000))]
    pub ddl_timeout: u64,

    /// Seconds connecting and logging in may take, as one deadline for the whole login (TCP
    /// connect, greeting, authentication), however the server trickles its bytes.
    #[arg(long, default_value_t = 30, value_name = "SECONDS",
          value_parser = clap::value_parser!(u64).range(1..=3_600))]
    pub connect_timeout: u64,

    /// Server errors after which the run goes on instead of failing the step: a comma-separated
    /// list of codes (MySQL error numbers, PostgreSQL SQLSTATEs), `all`, or `none`, as
    /// sysbench's --mysql-ignore-errors. Default: each engine's (MySQL/MariaDB 1213,1020,1205;
    /// PostgreSQL 40001,40P01,55P03,23505; SQLite busy and locked). Counted per operation type
    /// as retried or ignored (docs/reliability.md).
    #[arg(long, value_name = "CODES|all|none")]
    pub ignore_errors: Option<String>,

    /// Seconds to pause between targets, so one target's write-back and compaction do not
    /// spill into the next one's measurements (the original sleeps 600-1200 s).
    #[arg(long, default_value_t = 0, value_name = "SECONDS",
          value_parser = clap::value_parser!(u64).range(0..=86_400))]
    pub pause_between: u64,

    /// Run the campaign declared as [campaign.NAME] in dbperf.toml: its targets, suites,
    /// preset, overrides, repeats and base (docs/campaigns.md). --preset and --repeats given
    /// here override the campaign's.
    #[arg(long, value_name = "NAME")]
    pub campaign: Option<String>,

    /// Run every target N times, in interleaved rounds (round 2 in a rotated order, ...), each
    /// time with a fresh server and fresh data [default: 1, or the campaign's].
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(1..))]
    pub repeats: Option<u32>,

    /// Continue the run in DIR where it stopped (killed, interrupted, rebooted): finished cells
    /// are kept, the cell that was running is redone from scratch, failed cells are retried once.
    /// Every other option is taken from the run being continued.
    #[arg(long, value_name = "DIR")]
    pub resume: Option<PathBuf>,

    /// With --resume: do not retry failed cells.
    #[arg(long)]
    pub no_retry: bool,

    /// Run only every Nth cell of the plan, starting with the Kth (K/N, 1-based): one shard of a
    /// campaign spread over N hosts; `dbperf report` merges the shards' directories.
    #[arg(long, value_name = "K/N", value_parser = session::plan::parse_shard)]
    pub shard: Option<Shard>,

    /// Submit the run to Slurm instead of running it here: one job array of N tasks, task K
    /// running shard K/N into OUT/sK, and a job after them that writes OUT/report once every
    /// shard is done (docs/campaigns.md, "Slurm"). With --resume OUT: submit again only the
    /// shards that are not done.
    #[arg(long, value_name = "N", num_args = 0..=1, default_missing_value = "0",
          value_parser = clap::value_parser!(u32).range(0..=1000))]
    pub slurm: Option<u32>,

    /// With --slurm: one option for sbatch, repeatable: its partition, time limit, account or
    /// the like, as in `--sbatch-arg=--partition=bench`. It comes after dbperf's own options,
    /// so it wins.
    #[arg(
        long,
        value_name = "ARG",
        allow_hyphen_values = true,
        requires = "slurm"
    )]
    pub sbatch_arg: Vec<String>,

    /// Target the report's relative numbers are against [default: the campaign's base, else
    /// the first target].
    #[arg(long, value_name = "TARGET")]
    pub base: Option<String>,

    /// Sample CPU stacks with `perf record -g` during each step's measured time: the server's
    /// processes (default), dbperf itself (client) or both; folded into
    /// steps/<step>.profile.folded and drawn as flame graphs in the report (docs/profiles.md).
    /// Without a usable perf: a warning, and the run goes on without profiles.
    #[arg(long, value_enum, value_name = "WHOSE", num_args = 0..=1, default_missing_value = "server")]
    pub profile: Option<ProfileArg>,

    /// Samples per second with --profile.
    #[arg(long, default_value_t = 99, value_name = "HZ",
          value_parser = clap::value_parser!(u32).range(1..=10000))]
    pub profile_hz: u32,

    /// With --profile: how perf samples. `system` samples every CPU (`perf record -a`) and
    /// keeps the sampled processes' stacks: the cheaper way, used when allowed (root, or
    /// perf_event_paranoid 0 or less). `processes` attaches to the processes (`-p`), which
    /// costs them CPU at every context switch (docs/profiles.md).
    #[arg(long, value_enum, value_name = "HOW", requires = "profile")]
    pub profile_scope: Option<ProfileScopeArg>,

    /// With --profile: the most perf may write per step (bytes, or with K, M, G: binary
    /// units). Sampling stops there and the step's profile says it covers the step's first
    /// part only.
    #[arg(long, default_value = crate::profile::DEFAULT_MAX_SIZE, value_name = "SIZE",
          value_parser = crate::spec::parse_size, requires = "profile")]
    pub profile_max_size: u64,

    /// With --profile: stop with exit 2 before anything runs when perf cannot profile here.
    #[arg(long, requires = "profile")]
    pub require_profile: bool,

    #[command(flatten)]
    pub sysbench: super::sysbench::SysbenchArgs,

    /// The options the command line gave (set by `cli::parse`).
    #[arg(skip)]
    pub given: Given,

    /// The command line's words after the program's name, which the journal keeps.
    #[arg(skip)]
    pub argv: Vec<String>,
}

#[derive(Clone, Copy, Debug, ValueEnum, PartialEq)]
pub enum ProfileArg {
    Server,
    Client,
    Both,
}

#[derive(Clone, Copy, Debug, ValueEnum, PartialEq)]
pub enum TransportArg {
    Tcp,
    Socket,
}

/// Set by Ctrl-C or SIGTERM (cli/signals.rs); the session checks it between and within steps.
fn interrupt_flag() -> Arc<AtomicBool> {
    super::signals::stop_flag("stopping the step and writing what was measured")
}

/// The Insert Benchmark's flags, at `clients` (one level of a sweep, or the one count given).
fn overrides(a: &RunArgs, clients: Option<u64>) -> IbenchOverrides {
    IbenchOverrides {
        clients,
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
        statement_forms: a.statement_forms.map(|f| match f {
            StatementFormsArg::Original => StatementForms::Original,
            StatementFormsArg::Prepared => StatementForms::Prepared,
        }),
    }
}

/// A flag of another suite than `chosen` (`--threads` with the Insert Benchmark) makes no
/// sense: said in one sentence naming the suite it belongs to, rather than ignored. Walks the
/// registry, so a new suite's flags are refused with the others by their clap group.
fn refuse_other_suites_flags(a: &RunArgs, chosen: Suite) -> anyhow::Result<()> {
    for owner in Suite::all().filter(|s| *s != chosen) {
        let Some(flag) = a.given.first_in(owner.name()) else {
            continue;
        };
        // Some have a counterpart in the chosen suite a person may have meant.
        let hint = match chosen.entry().counterparts.iter().find(|(f, _)| *f == flag) {
            Some((_, c)) => format!(" ({} has {c})", chosen.entry().product),
            None => String::new(),
        };
        let default = if a.given.has("suite") {
            ""
        } else {
            " (the default suite)"
        };
        return bad_input(format!(
            "{flag}{hint} is {} and does not apply to --suite {chosen}{default}; add --suite \
             {owner} to run {}",
            owner.entry().a_flag,
            owner.entry().product
        ));
    }
    Ok(())
}

/// A key of one suite in a campaign's table of another (`threads` under ibench): said in the
/// campaign's terms, not the command line's.
fn refuse_other_suites_keys(campaign: &str, suite: Suite, a: &RunArgs) -> anyhow::Result<()> {
    for owner in Suite::all().filter(|s| *s != suite) {
        if let Some(flag) = a.given.first_in(owner.name()) {
            return bad_input(format!(
                "campaign {campaign}: {} belongs to the {owner} suite, not in \
                 [campaign.{campaign}.{suite}]",
                flag.trim_start_matches("--").replace('-', "_")
            ));
        }
    }
    Ok(())
}

/// Servers and their tools run in other directories (PostgreSQL in its data directory), so
/// every path dbperf hands on is made absolute against the directory dbperf was started in.
/// --ddl-timeout, which bounds the statements that may run longer than the others.
fn ddl_timeout(a: &RunArgs) -> anyhow::Result<Duration> {
    if a.ddl_timeout < a.statement_timeout {
        return bad_input(format!(
            "--ddl-timeout {} is shorter than --statement-timeout {}: it bounds the statements \
             allowed to run longer than the others, so it must be at least as long",
            a.ddl_timeout, a.statement_timeout
        ));
    }
    Ok(Duration::from_secs(a.ddl_timeout))
}

/// Absolute, with `.` and `..` folded away as the shell's `cd` does: a run directory is
/// recorded in the journal, and a resume checks what it holds lies lexically inside it.
pub(super) fn absolute(p: &Path) -> anyhow::Result<PathBuf> {
    use std::path::Component;
    let abs = std::path::absolute(p)
        .or_else(|e| bad_input(format!("cannot resolve the path {}: {e}", p.display())))?;
    let mut out = PathBuf::new();
    for c in abs.components() {
        match c {
            Component::ParentDir => {
                out.pop();
            }
            Component::CurDir => {}
            other => out.push(other),
        }
    }
    Ok(out)
}

fn default_out(name: &str, preset: &str) -> PathBuf {
    let fmt = time::macros::format_description!("[year][month][day]-[hour][minute][second]");
    let stamp = time::OffsetDateTime::now_utc()
        .format(&fmt)
        .unwrap_or_default();
    let base = PathBuf::from("results").join(format!("{stamp}-{name}-{preset}"));
    let mut p = base.clone();
    let mut i = 2;
    while p.exists() {
        p = PathBuf::from(format!("{}-{i}", base.display()));
        i += 1;
    }
    p
}

/// The suite `a` asks for, with every parameter after preset and flags: the Insert Benchmark
/// once per level of a `--clients` sweep.
fn suite_of(a: &RunArgs) -> anyhow::Result<Vec<Arc<dyn session::Suite>>> {
    refuse_other_suites_flags(a, a.suite)?;
    Ok(match a.suite {
        Suite::Ibench => {
            let preset = presets::get(&a.preset)?;
            let levels: Vec<Option<u64>> = match &a.clients {
                Some(l) => l.0.iter().map(|&n| Some(n)).collect(),
                None => vec![None],
            };
            let sweep = levels.len() > 1;
            let mut out: Vec<Arc<dyn session::Suite>> = Vec::new();
            for clients in levels {
                let preset = preset
                    .clone()
                    .for_cap(a.server_memory, clients.unwrap_or(1))?;
                out.push(Arc::new(IbenchSuite {
                    params: spec::ibench_params(&preset, &overrides(a, clients))?,
                    sweep,
                }));
            }
            out
        }
        Suite::Sysbench => {
            vec![Arc::new(SysbenchSuite {
                params: a.sysbench.params(&a.preset, a.seed, a.server_memory)?,
            })]
        }
    })
}

/// The first flag given that sets what a suite does (not how the run is organised).
fn workload_flag(a: &RunArgs) -> Option<&str> {
    std::iter::once(WORKLOAD)
        .chain(Suite::all().map(Suite::name))
        .find_map(|g| a.given.first_in(g))
}

/// What the run is: its suites, targets, rounds and base, from the flags or a campaign.
struct What {
    name: String,
    suites: Vec<Arc<dyn session::Suite>>,
    /// A server setting swept over.
    vary: Option<spec::target::Vary>,
    /// Host settings swept over.
    hosts: Vec<session::host_axes::HostSetting>,
    /// `--server-memory`: a cap on every managed server, over a target's own.
    server_memory: Option<u64>,
    target_specs: Vec<String>,
    rounds: u32,
    pause_between: u64,
    base: Option<String>,
    campaign: Option<String>,
}

fn what(a: &RunArgs, file: &spec::config_file::ConfigFile) -> anyhow::Result<What> {
    let Some(name) = &a.campaign else {
        let suites = suite_of(a)?;
        return Ok(What {
            // The directory adds the preset: `<date>-ibench-quick`.
            name: suites[0].suite().name().to_string(),
            suites,
            vary: a.vary.clone(),
            server_memory: a.server_memory,
            hosts: session::host_axes::combinations(
                a.read_ahead_kb.as_ref().map_or(&[][..], |k| &k.0),
                a.io_scheduler.as_ref().map_or(&[][..], |s| &s.0),
            ),
            target_specs: if a.targets.is_empty() {
                vec![crate::engines::Engine::DEFAULT.name().to_string()]
            } else {
                a.targets.clone()
            },
            rounds: a.repeats.unwrap_or(1),
            pause_between: a.pause_between,
            base: a.base.clone(),
            campaign: None,
        });
    };
    if let Some(flag) = workload_flag(a) {
        return bad_input(format!(
            "{flag} is decided by campaign {name}; change it in dbperf.toml's [campaign.{name}]"
        ));
    }
    let c = file.campaign(name)?;
    // --preset given when the run started (its journal's command line, on --resume) overrides
    // the campaign's.
    let preset_given = a.given.has("preset");
    let mut suites = Vec::new();
    for &s in &c.suites {
        let mut argv = vec![
            "dbperf".to_string(),
            "run".into(),
            "--suite".into(),
            s.name().to_string(),
        ];
        if let Some(p) = c.preset.as_ref().filter(|_| !preset_given) {
            argv.extend(["--preset".to_string(), p.clone()]);
        } else if preset_given {
            argv.extend(["--preset".to_string(), a.preset.clone()]);
        }
        argv.extend(c.args.get(&s).cloned().unwrap_or_default());
        // A preset sized from the cap is sized from the campaign's.
        if let Some(cap) = c.server_memory {
            argv.extend(["--server-memory".to_string(), cap.to_string()]);
        }
        let parsed = match super::parse(&argv) {
            Ok(super::Cli {
                command: super::Command::Run(r),
            }) => r,
            Ok(_) => unreachable!("the arguments name the run command"),
            Err(e) => {
                let first = e.to_string();
                let first = first
                    .lines()
                    .next()
                    .unwrap_or_default()
                    .trim_start_matches("error: ");
                return bad_input(format!("campaign {name}, {s}: {first}"));
            }
        };
        refuse_other_suites_keys(name, s, &parsed)?;
        suites.extend(suite_of(&parsed)?);
    }
    Ok(What {
        name: name.clone(),
        suites,
        vary: c.vary.clone(),
        server_memory: c.server_memory,
        hosts: session::host_axes::combinations(&c.read_ahead_kb, &c.io_scheduler),
        target_specs: c.targets.clone(),
        rounds: a.repeats.unwrap_or(c.repeats),
        pause_between: c.pause_between.unwrap_or(a.pause_between),
        base: a.base.clone().or(c.base.clone()),
        campaign: Some(name.clone()),
    })
}

/// What a run of `a` would be, checked as far as it can be without this host: dbperf.toml,
/// the campaign, its suites' flags and its targets' definitions (`dbperf run --slurm` checks
/// before it submits; builds and memory caps are the nodes' to check).
pub(super) fn check_plan(a: &RunArgs) -> anyhow::Result<()> {
    let file = spec::config_file::load(a.config_file.as_deref())?;
    let w = what(a, &file)?;
    for s in &w.target_specs {
        file.resolve(s, &a.pragmas)?;
    }
    Ok(())
}

/// `--resume DIR`: the arguments of the run being continued, parsed again in its working
/// directory, with DIR as its output.
fn resumed(a: &RunArgs) -> anyhow::Result<(RunArgs, Invocation, PathBuf)> {
    let dir = absolute(a.resume.as_deref().expect("called with --resume"))?;
    let journal = session::read_journal(&dir)?;
    let inv = journal.invocation.clone();
    if std::env::set_current_dir(&inv.cwd).is_err() {
        return bad_input(format!(
            "the run in {} was started in {}, which no longer exists",
            dir.display(),
            inv.cwd
        ));
    }
    let argv = std::iter::once("dbperf".to_string()).chain(inv.args.iter().cloned());
    match super::parse(argv) {
        Ok(super::Cli {
            command: super::Command::Run(r),
        }) if r.resume.is_none() => Ok((*r, inv, dir)),
        _ => bad_input(format!(
            "{} records arguments this dbperf cannot read: {}",
            dir.join("campaign.json").display(),
            inv.args.join(" ")
        )),
    }
}

pub fn run(args: RunArgs) -> anyhow::Result<i32> {
    if args.list_presets {
        list_presets(args.server_memory);
        return Ok(EXIT_OK);
    }
    if args.suite == Suite::Sysbench && args.sysbench.list {
        refuse_other_suites_flags(&args, Suite::Sysbench)?;
        super::sysbench::print_list(&args.sysbench.params(
            &args.preset,
            args.seed,
            args.server_memory,
        )?);
        return Ok(EXIT_OK);
    }
    let show = !args.no_progress && std::io::stderr().is_terminal();
    let start = start(args)?;
    let file = spec::config_file::load(start.args.config_file.as_deref())?;
    let w = what(&start.args, &file)?;
    let targets = targets(&start.args, &file, &w)?;
    let req = request(start, w, targets)?;
    let mut term = Terminal::new(show);
    let outcome = session::run(req, &mut term)?;
    Ok(finish(&outcome))
}

/// How the run starts: afresh from the command line, or continued from its journal.
struct Start {
    /// The run's arguments: the command line's, or on --resume the journal's.
    args: RunArgs,
    invocation: Invocation,
    resume_dir: Option<PathBuf>,
    retry_failed: bool,
}

fn start(args: RunArgs) -> anyhow::Result<Start> {
    // --no-retry is the resuming command's, not the resumed run's.
    let retry_failed = !args.no_retry;
    if args.resume.is_none() {
        let invocation = Invocation {
            args: args.argv.clone(),
            cwd: std::env::current_dir()
                .map(|d| d.display().to_string())
                .unwrap_or_default(),
        };
        return Ok(Start {
            args,
            invocation,
            resume_dir: None,
            retry_failed,
        });
    }
    // The run's own arguments are in its journal; others would be silently ignored.
    if let Some(extra) = args
        .given
        .first_other_than(&["resume", "no_retry", "no_progress"])
    {
        return bad_input(format!(
            "{extra} cannot go with --resume: a resumed run keeps the arguments it was \
             started with (only --no-retry and --no-progress may be added)"
        ));
    }
    let (args, invocation, dir) = resumed(&args)?;
    Ok(Start {
        args,
        invocation,
        resume_dir: Some(dir),
        retry_failed,
    })
}

/// The run's targets, resolved (builds fetched where asked), each accepted by every suite.
fn targets(
    a: &RunArgs,
    file: &spec::config_file::ConfigFile,
    w: &What,
) -> anyhow::Result<Vec<Target>> {
    let mut targets: Vec<Target> = Vec::new();
    let cache = crate::fetch::Cache::locate(a.cache_dir.as_deref())?;
    let builds = crate::fetch::ResolveOptions {
        cache: &cache,
        fetch: a.fetch,
    };
    for s in &w.target_specs {
        let mut t = file.resolve(s, &a.pragmas)?;
        if let Some(bytes) = w.server_memory {
            spec::target::cap_memory(&mut t, bytes, "--server-memory")?;
        }
        crate::fetch::resolve_target(&mut t, &builds, &mut |l: &str| say!("{l}"))?;
        if targets.iter().any(|x| x.name == t.name) {
            return bad_input(format!("target {} is given twice", t.name));
        }
        targets.push(t);
    }
    for s in &w.suites {
        if let Some(e) = s.refuses(&targets) {
            return bad_input(e);
        }
    }
    // Refused before anything is made: a cap that cannot be set must not become an uncapped run.
    session::check_memory_caps(&targets)?;
    if let Some(v) = &w.vary {
        let mut each = Vec::new();
        for t in &targets {
            for value in &v.values {
                each.push(t.with_setting(&v.setting, value)?);
            }
        }
        targets = each;
    }
    if let Some(b) = &w.base {
        if !targets.iter().any(|t| &t.name == b) {
            return bad_input(format!(
                "base target {b} is not one of the run's targets ({})",
                targets
                    .iter()
                    .map(|t| t.name.as_str())
                    .collect::<Vec<_>>()
                    .join(", ")
            ));
        }
    }
    Ok(targets)
}

fn request(start: Start, w: What, targets: Vec<Target>) -> anyhow::Result<Request> {
    let a = &start.args;
    let out = match (&start.resume_dir, &a.out) {
        (Some(d), _) => d.clone(),
        (None, Some(p)) => absolute(p)?,
        (None, None) => absolute(&default_out(&w.name, &a.preset))?,
    };
    Ok(Request {
        suites: w.suites,
        targets,
        out,
        work_dir: a.work_dir.as_deref().map(absolute).transpose()?,
        keep_data: a.keep_data,
        socket: a.transport == TransportArg::Socket,
        server_user: a.server_user.clone(),
        count_rows: a.count_rows,
        calibrate: !a.no_calibration,
        server_start_timeout: Duration::from_secs(a.server_start_timeout),
        statement_timeout: Duration::from_secs(a.statement_timeout),
        ddl_timeout: ddl_timeout(a)?,
        connect_timeout: Duration::from_secs(a.connect_timeout),
        ignore_errors: match &a.ignore_errors {
            Some(s) => IgnoreErrors::parse(s)?,
            None => IgnoreErrors::Default,
        },
        pause_between: Duration::from_secs(w.pause_between),
        rounds: w.rounds,
        shard: a.shard,
        campaign: w.campaign,
        base: w.base,
        resume: start.resume_dir.is_some(),
        retry_failed: start.retry_failed,
        interrupt: interrupt_flag(),
        profile: profile_settings(a),
        invocation: start.invocation,
        hosts: w.hosts,
        host_roots: crate::host::Roots::default(),
    })
}

fn profile_settings(a: &RunArgs) -> Option<crate::profile::Settings> {
    a.profile.map(|w| crate::profile::Settings {
        who: match w {
            ProfileArg::Server => crate::profile::Who::Server,
            ProfileArg::Client => crate::profile::Who::Client,
            ProfileArg::Both => crate::profile::Who::Both,
        },
        hz: a.profile_hz,
        max_bytes: a.profile_max_size,
        require: a.require_profile,
        scope: a.profile_scope.map(|s| match s {
            ProfileScopeArg::System => crate::profile::Scope::System,
            ProfileScopeArg::Processes => crate::profile::Scope::Processes,
        }),
    })
}

/// The summary table, what could not be written, the report; the exit code.
fn finish(outcome: &session::Outcome) -> i32 {
    let summaries: Vec<TargetSteps> = outcome
        .cells
        .iter()
        .map(|c| TargetSteps {
            target: &c.id,
            steps: &c.steps,
        })
        .collect();
    if summaries.iter().any(|s| !s.steps.is_empty()) {
        out!("{}", table(&summaries));
    }
    for f in &outcome.write_failures {
        out!("NOT WRITTEN: {f}");
    }
    out!("Results: {}", outcome.out.display());
    super::report::after_run(&outcome.out, &outcome.result_dirs, outcome.base.as_deref());
    match outcome.exit {
        Exit::Ok => EXIT_OK,
        Exit::Failed => EXIT_FAILED,
        Exit::Interrupted => EXIT_INTERRUPTED,
    }
}

/// The presets; one sized from the memory cap shows its rows for `cap`, or says "from cap".
fn list_presets(cap: Option<u64>) {
    let rows = |sized: bool, n: u64| match (sized, cap) {
        (true, None) => "from cap".to_string(),
        _ => fmt_num(n as f64),
    };
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
        let sized = p.sized_by_cap.is_some();
        let p = p.clone().for_cap(cap, 1).unwrap_or(p);
        t.add_row([
            p.name.clone(),
            rows(sized, p.rows_l_i0),
            rows(sized, p.rows_l_i1),
            rows(sized, p.rows_l_i2),
            p.query_seconds.to_string(),
            p.wait_seconds
                .map(|w| w.to_string())
                .unwrap_or_else(|| "formula".into()),
            p.description.clone(),
        ]);
    }
    out!("{t}");
    out!(
        "Rows are per client. 'formula' = min(1200, 60 + total l.i0 rows / 1e6) seconds. 'from \
         cap': sized from --server-memory when the run is planned (give it with \
         --list-presets to see the rows).\n"
    );
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
        let sized = p.sized_by_cap.is_some();
        let p = p.clone().for_cap(cap, None).unwrap_or(p);
        sb.add_row([
            p.name.clone(),
            p.threads.to_string(),
            p.tables.to_string(),
            rows(sized, p.rows),
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
    for cfg in presets::SQLITE_CONFIGS {
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
    let mut p = comfy_table::Table::new();
    p.load_style(comfy_table::presets::UTF8_FULL_CONDENSED);
    p.set_header([
        "published config (--target ENGINE@VERSION:NAME)",
        "engine",
        "versions",
        "newest source in github.com/mdcallag/mytools",
    ]);
    for row in presets::server_configs() {
        p.add_row(row);
    }
    out!("{p}");
    out!("Written for the server's version, memory scaled to this host's RAM (docs/configs.md).");
}
