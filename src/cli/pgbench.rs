//! `dbperf run --suite pgbench`: its flags, named as pgbench's long options where dbperf has
//! no flag of that name already (docs/pgbench.md).

use clap::Args;

use crate::spec;
use crate::workload::pgbench::{PgbenchParams, QueryMode};

/// Flags of pgbench (`--suite pgbench`): the group `pgbench` holds them all.
#[derive(Args, Debug, Default)]
#[command(next_help_heading = "pgbench (--suite pgbench)")]
#[group(id = crate::suites::Suite::Pgbench.name(), multiple = true)]
pub struct PgbenchArgs {
    /// pgbench -s: the scale factor, 100,000 accounts each [default: preset's].
    #[arg(long, value_parser = spec::parse_count, value_name = "N")]
    pub scale: Option<u64>,

    /// pgbench -c: clients running scripts, or a list for a sweep (`1,2,4`): a run step at
    /// each count after ONE init, not a fresh init per level as the Insert Benchmark's
    /// --clients [default: preset's].
    #[arg(long, value_name = "N[,N...]", value_parser = spec::parse_levels)]
    pub client: Option<spec::Levels>,

    /// pgbench -T: seconds of each run step [default: preset's].
    #[arg(long, value_parser = spec::parse_count, value_name = "SECONDS")]
    pub time: Option<u64>,

    /// pgbench -t: transactions each client runs, instead of --time.
    #[arg(long, value_parser = spec::parse_count, value_name = "N")]
    pub transactions: Option<u64>,

    /// pgbench -b: a built-in script (tpcb-like, simple-update, select-only, or a prefix
    /// naming one) with its weight, repeatable [default: tpcb-like].
    #[arg(long, value_name = "NAME[@W]")]
    pub builtin: Vec<String>,

    /// pgbench -f: a script file with its weight, repeatable (pgbench 15's script language;
    /// \shell and \setshell are refused).
    #[arg(long, value_name = "FILE[@W]")]
    pub file: Vec<String>,

    /// pgbench -M: `simple` (the text with values written in) or `prepared` (prepared once
    /// per connection, values bound) [default: simple].
    #[arg(long, value_enum, alias = "protocol")]
    pub query_mode: Option<QueryMode>,

    /// pgbench -I: the init's steps: d drop, t tables, g generate (client), G generate
    /// (server, PostgreSQL), v vacuum, p primary keys, f foreign keys [default: dtgvp].
    #[arg(long, value_name = "LETTERS")]
    pub init_steps: Option<String>,

    /// pgbench -F: the fillfactor of branches, tellers and accounts (PostgreSQL only)
    /// [default: 100].
    #[arg(long, value_name = "PCT")]
    pub fillfactor: Option<u64>,

    /// pgbench -i: run the init step only.
    #[arg(long)]
    pub init_only: bool,

    /// Run no init: the tables of an earlier run's --work-dir (or of a server given by
    /// --target) are used as they are.
    #[arg(long)]
    pub no_init: bool,

    /// pgbench -n: no vacuum of branches and tellers and no truncation of history before each
    /// run step.
    #[arg(long)]
    pub no_vacuum: bool,

    /// pgbench -R: transactions per second over all clients, open loop (latency counted
    /// from each transaction's intended start).
    #[arg(long, value_name = "TPS")]
    pub rate: Option<f64>,

    /// pgbench -L: transactions slower than this (ms) are counted late.
    #[arg(long, value_name = "MS")]
    pub latency_limit: Option<f64>,

    /// pgbench --max-tries: tries of a transaction that met a serialization failure or a
    /// deadlock [default: 1].
    #[arg(long, value_name = "N")]
    pub max_tries: Option<u64>,

    /// pgbench -C: a new connection for each transaction, its time measured.
    #[arg(long)]
    pub connect: bool,
}

impl PgbenchArgs {
    /// The parameters after preset and flags.
    pub fn params(&self, preset: &str, seed: Option<u64>) -> anyhow::Result<PgbenchParams> {
        spec::pgbench::pgbench_params(
            preset,
            &spec::pgbench::PgbenchOverrides {
                scale: self.scale,
                clients: self.client.as_ref().map(|l| l.0.clone()),
                time_s: self.time,
                transactions: self.transactions,
                builtins: self.builtin.clone(),
                files: self.file.clone(),
                query_mode: self.query_mode,
                init_steps: self.init_steps.clone(),
                fillfactor: self.fillfactor,
                init_only: self.init_only,
                no_init: self.no_init,
                no_vacuum: self.no_vacuum,
                rate: self.rate,
                latency_limit_ms: self.latency_limit,
                max_tries: self.max_tries,
                connect: self.connect,
                seed,
            },
        )
    }
}
