//! `dbperf run`'s flags. Those of one suite are in its own flattened struct (`cli/ibench.rs`,
//! `cli/sysbench.rs`), declared in the clap group named as the suite, so a flag given with
//! the wrong suite is found by the registry's walk over the groups (`cli/what.rs`).

use std::path::PathBuf;

use clap::{ArgGroup, Args, ValueEnum};

use super::given::{Given, WORKLOAD};
use crate::results::campaign::Shard;
use crate::session;
use crate::spec;
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

/// `dbperf run`'s options. Those that say what a suite does are declared in a group (`ibench`,
/// `sysbench`, `workload` for those of every suite), which is how the run knows which were given
/// with the wrong suite or beside a campaign that decides them.
#[derive(Args, Debug)]
#[command(args_override_self = true,
          group(ArgGroup::new(WORKLOAD).multiple(true)))]
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

    #[command(flatten)]
    pub ibench: super::ibench::IbenchArgs,

    /// Seed for all generated data and query parameters; same seed, same data.
    #[arg(long, alias = "random-seed", group = WORKLOAD)]
    pub seed: Option<u64>,

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
    /// so it wins; those dbperf sets itself (--array, --dependency, --output...) are refused
    /// however sbatch would read them (docs/campaigns.md, "Slurm").
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

    #[command(flatten)]
    pub tpcc: super::tpcc::TpccArgs,

    #[command(flatten)]
    pub pgbench: super::pgbench::PgbenchArgs,

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
