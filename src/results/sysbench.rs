//! sysbench's part of a step file: what a microbenchmark step ran and its numbers in
//! sysbench's terms (docs/sysbench.md defines every field).

use serde::{Deserialize, Serialize};

/// A sysbench microbenchmark step (docs/sysbench.md defines every field).
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct SysbenchStep {
    /// The microbenchmark, e.g. `point-query`.
    pub test: String,
    /// `""`, `"pre"`, `"warm"` or `"warmpre"`.
    pub variant: String,
    /// The original's report label `<test>[.<variant>]_range=<R>`, equal to the step name.
    pub label: String,
    pub range: u64,
    /// `unused`, `in_list`, `between` or `range_size`.
    pub range_use: String,
    /// The range was asked for with `--tests <test>_range=<R>`, not taken from the run order.
    pub custom_range: bool,
    /// `point`, `range`, `range_agg` or `write`.
    pub group: String,
    pub group_title: String,
    /// The original's 2024 three-way split by name: `point`, `range` or `write`.
    pub group_2024: String,
    /// false for the warm-ups (`.warm`, `.warmpre`), which the original does not report.
    pub reported: bool,
    /// The original's Lua script and flags.
    pub original: String,
    /// Every event is one transaction (BEGIN ... COMMIT).
    pub transaction: bool,
    /// `uniform` or `zipfian`.
    pub keys: String,
    pub prepared: bool,
    pub threads: u64,
    pub tables: u64,
    pub rows_per_table: u64,
    /// Planned seconds of measurement; null when every thread runs one event.
    pub planned_s: Option<u64>,
    pub warmup_s: f64,
    /// The statements of one event on sbtest1, as sent.
    pub statements: Vec<SysbenchStatement>,
    pub statements_per_event: u64,
    pub events: u64,
    pub events_per_s: f64,
    pub warmup_events: u64,
    pub queries: u64,
    pub queries_per_s: f64,
    pub reads: u64,
    pub writes: u64,
    pub other: u64,
    pub errors: u64,
    pub scan_rows_per_s: Option<f64>,
}

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct SysbenchStatement {
    pub sql: String,
    pub per_event: u64,
    pub prepared: bool,
}
