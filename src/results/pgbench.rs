//! What a pgbench step measured, in pgbench's terms (docs/pgbench.md defines every field): the
//! init's steps and their times, and for a run step the TPS pgbench 15 prints (without the
//! initial connection time), the initial connection time, each script's transactions and its
//! commands' latency (pgbench -r), failures and retries by kind, late transactions.

use serde::{Deserialize, Serialize};

/// The operation type of the first script's transactions (`PgbenchScript::kind`).
pub const FIRST_KIND: &str = "script1";

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct PgbenchStep {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub init: Option<PgbenchInit>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub run: Option<PgbenchRun>,
}

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct PgbenchInit {
    pub scale: u64,
    pub fillfactor: u64,
    /// `-I`'s letters.
    pub init_steps: String,
    /// Connections the generation used.
    pub connections: u64,
    /// Each step as pgbench -i reports it, with its seconds.
    pub steps: Vec<PgbenchInitStep>,
}

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct PgbenchInitStep {
    pub letter: String,
    pub name: String,
    pub seconds: f64,
}

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct PgbenchRun {
    pub scale: u64,
    pub clients: u64,
    /// `simple` or `prepared`.
    pub query_mode: String,
    /// -T's seconds, or null with -t.
    pub planned_s: Option<u64>,
    /// -t's transactions per client, or null with -T.
    pub transactions_per_client: Option<u64>,
    /// The step's measured time: from when every client was connected to the last end.
    pub measured_s: f64,
    /// Transactions that ended without an error per second of measured time: pgbench 15's
    /// "tps (without initial connection time)". The step's headline.
    pub tps: f64,
    /// The mean time a client took to connect before the step started, in ms.
    pub initial_connection_ms: f64,
    /// With --connect: the mean time of a transaction's connection, in ms.
    pub connection_ms: Option<f64>,
    /// Transactions that ended without an error.
    pub transactions: u64,
    /// Transactions that failed after their last try.
    pub failed: u64,
    pub serialization_failures: u64,
    pub deadlock_failures: u64,
    /// Failures of other kinds --ignore-errors lets the run go on after.
    pub other_failures: u64,
    /// Tries after the first, over all transactions.
    pub retries: u64,
    /// Transactions that needed more than one try.
    pub retried: u64,
    pub max_tries: u64,
    /// With --latency-limit: the limit (ms) and the transactions slower than it.
    pub latency_limit_ms: Option<f64>,
    pub late: Option<u64>,
    /// --rate's transactions per second, or null (closed loop).
    pub rate: Option<f64>,
    pub scripts: Vec<PgbenchScript>,
}

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct PgbenchScript {
    /// The built-in's name or the file's path.
    pub name: String,
    pub weight: u64,
    /// The operation type its transactions are in `ops` and the series: `script1`, ...
    pub kind: String,
    pub transactions: u64,
    pub failed: u64,
    pub tps: f64,
    /// SQL commands sent per transaction that ended without an error.
    pub statements_per_transaction: Option<f64>,
    pub commands: Vec<PgbenchCommand>,
}

/// One command of a script, as pgbench -r reports it.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct PgbenchCommand {
    pub line: u64,
    pub text: String,
    /// Times it ran, in transactions that ended or failed.
    pub count: u64,
    /// Its mean time, from sending it to its result, in ms.
    pub latency_ms: Option<f64>,
}
