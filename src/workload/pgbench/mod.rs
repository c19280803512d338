//! pgbench's workloads (docs/pgbench.md): the tables `pgbench -i` makes, its three built-in
//! scripts statement for statement, and the user's own script files in pgbench 15's script
//! language, run by clients as pgbench's are (one script a transaction, drawn by weight).

pub mod builtin;
pub mod client;
pub mod columns;
pub mod eval;
pub mod expr;
pub mod init;
pub mod prng;
pub mod script;

use serde::{Deserialize, Serialize};

/// The step that makes the tables (`pgbench -i`).
pub const INIT: &str = "init";
/// A measured step; with a sweep, one per level (`run_clients=4`).
pub const RUN: &str = "run";

/// The most scripts one run draws from (each is an operation type of its own).
pub const MOST_SCRIPTS: usize = 16;

/// Operation types: one per script, in the order given, then the init's inserts.
pub const SCRIPT_KINDS: [&str; MOST_SCRIPTS] = [
    "script1", "script2", "script3", "script4", "script5", "script6", "script7", "script8",
    "script9", "script10", "script11", "script12", "script13", "script14", "script15", "script16",
];
pub const INSERT: usize = MOST_SCRIPTS;
pub fn kinds() -> Vec<&'static str> {
    let mut k = SCRIPT_KINDS.to_vec();
    k.push("insert");
    k
}

/// Rows per branch, teller and account at scale 1, as pgbench's nbranches/ntellers/naccounts.
pub const BRANCHES: u64 = 1;
pub const TELLERS: u64 = 10;
pub const ACCOUNTS: u64 = 100_000;

/// pgbench's -M: how SQL commands travel.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, clap::ValueEnum)]
#[serde(rename_all = "lowercase")]
pub enum QueryMode {
    /// The text with each variable's value written in, one simple query a command.
    Simple,
    /// Prepared once per connection with a placeholder per variable, then executed with the
    /// values bound.
    Prepared,
}

impl QueryMode {
    pub fn name(self) -> &'static str {
        match self {
            QueryMode::Simple => "simple",
            QueryMode::Prepared => "prepared",
        }
    }
}

/// Where a script comes from.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Source {
    Builtin(builtin::Builtin),
    /// A file's path and its text as read when the run started.
    File {
        path: String,
        text: String,
    },
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ScriptSpec {
    pub source: Source,
    pub weight: u64,
}

impl ScriptSpec {
    /// The built-in's name or the file's path.
    pub fn name(&self) -> String {
        match &self.source {
            Source::Builtin(b) => b.name().to_string(),
            Source::File { path, .. } => path.clone(),
        }
    }
}

/// Every parameter of a pgbench run, after preset and flags (run.json's `parameters`).
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct PgbenchParams {
    pub preset: String,
    pub scale: u64,
    /// Clients running scripts; more than one value is a sweep (one run step each, after one
    /// init).
    pub clients: Vec<u64>,
    /// Seconds of each run step (pgbench -T); None with `transactions`.
    pub time_s: Option<u64>,
    /// Transactions each client runs (pgbench -t); None with `time_s`.
    pub transactions: Option<u64>,
    pub scripts: Vec<ScriptSpec>,
    pub query_mode: QueryMode,
    /// pgbench -I: the init's steps, a letter each.
    pub init_steps: String,
    pub fillfactor: u64,
    /// Run the init step (false: the tables of an earlier run's --work-dir).
    pub init: bool,
    /// Run the script steps (false: --init-only).
    pub run: bool,
    /// pgbench -n: no vacuum of branches and tellers and no truncation of history before a
    /// run step.
    pub no_vacuum: bool,
    /// pgbench -R: transactions per second over all clients, open loop.
    pub rate: Option<f64>,
    /// pgbench -L, in milliseconds: transactions slower than this are counted late.
    pub latency_limit_ms: Option<f64>,
    /// pgbench --max-tries: tries of a transaction that hit a serialization failure or a
    /// deadlock.
    pub max_tries: u64,
    /// pgbench -C: a new connection for each transaction.
    pub connect: bool,
    pub seed: u64,
}

impl PgbenchParams {
    /// The steps, in order: the init, then a run step per level.
    pub fn step_names(&self) -> Vec<String> {
        let mut out = Vec::new();
        if self.init {
            out.push(INIT.to_string());
        }
        if self.run {
            out.extend(self.clients.iter().map(|&c| self.run_label(c)));
        }
        out
    }

    /// `run`, or `run_clients=N` in a sweep.
    pub fn run_label(&self, clients: u64) -> String {
        if self.clients.len() > 1 {
            crate::suites::Suite::Pgbench.level_label(RUN, clients)
        } else {
            RUN.to_string()
        }
    }

    pub fn table_names(&self) -> Vec<String> {
        init::TABLES.iter().map(|t| t.to_string()).collect()
    }
}
