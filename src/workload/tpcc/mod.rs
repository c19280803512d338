//! TPC-C, the order-entry workload every peer runs (docs/tpcc.md): nine tables, a parallel load
//! of `warehouses`, and the five transactions with each statement as Percona's sysbench-tpcc
//! sends it (SQL text with the values written in), back to back on every connection (no keying
//! or think time: "TPC-C-like", as the peers say). After each measured step the consistency
//! conditions of the TPC-C specification (clause 3.3.2) are checked and recorded.

pub mod check;
pub mod data;
pub mod load;
pub mod schema;
pub mod txn;

use serde::{Deserialize, Serialize};

/// The specification's fixed cardinalities (clause 1.2).
pub const ITEMS: u64 = 100_000;
pub const DISTRICTS: u64 = 10;
pub const CUSTOMERS: u64 = 3_000;
/// Orders per district at the start, and the first of them still undelivered (new orders).
pub const ORDERS: u64 = 3_000;
pub const FIRST_NEW_ORDER: u64 = 2_101;

/// Operation types of the runner, indexes into `KINDS`.
pub const NEW_ORDER: usize = 0;
pub const PAYMENT: usize = 1;
pub const ORDER_STATUS: usize = 2;
pub const DELIVERY: usize = 3;
pub const STOCK_LEVEL: usize = 4;
/// A New-Order rolled back on purpose (an unused item number, 1% of them).
pub const ROLLED_BACK: usize = 5;
/// Any transaction during the warm-up.
pub const WARMUP: usize = 6;
/// One multi-row INSERT of the load.
pub const INSERT: usize = 7;
pub const KINDS: [&str; 8] = [
    "new_order",
    "payment",
    "order_status",
    "delivery",
    "stock_level",
    "new_order_rollback",
    "warmup",
    "insert",
];
/// The five transactions, in `KINDS`' order.
pub const TRANSACTIONS: [usize; 5] = [NEW_ORDER, PAYMENT, ORDER_STATUS, DELIVERY, STOCK_LEVEL];

/// The step that creates and fills the tables.
pub const LOAD: &str = "load";
/// The measured step; with a sweep, one per level (`run_connections=4`).
pub const RUN: &str = "run";

/// Which share of each transaction the connections draw.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, clap::ValueEnum)]
#[serde(rename_all = "snake_case")]
pub enum Mix {
    /// The specification's minimums: New-Order 45%, Payment 43%, the other three 4% each.
    Standard,
    /// sysbench-tpcc's event: 10:10:1:1:1 of 23.
    Sysbench,
}

impl Mix {
    /// Weights in `TRANSACTIONS`' order.
    pub fn weights(self) -> [u64; 5] {
        match self {
            Mix::Standard => [45, 43, 4, 4, 4],
            Mix::Sysbench => [10, 10, 1, 1, 1],
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            Mix::Standard => "standard",
            Mix::Sysbench => "sysbench", // not a suite: sysbench-tpcc's mix
        }
    }

    /// The transaction for a draw uniform in [0, sum of weights).
    pub fn pick(self, draw: u64) -> usize {
        let mut at = draw;
        for (i, w) in self.weights().into_iter().enumerate() {
            if at < w {
                return TRANSACTIONS[i];
            }
            at -= w;
        }
        NEW_ORDER
    }

    pub fn total(self) -> u64 {
        self.weights().iter().sum()
    }
}

/// The isolation level every connection sets, as sysbench-tpcc's --trx_level (RR by default).
/// SQLite's transactions are always serializable; the level is not set there.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, clap::ValueEnum)]
pub enum Isolation {
    #[value(name = "rc")]
    #[serde(rename = "rc")]
    ReadCommitted,
    #[value(name = "rr")]
    #[serde(rename = "rr")]
    RepeatableRead,
    #[value(name = "ser")]
    #[serde(rename = "ser")]
    Serializable,
}

impl Isolation {
    pub fn sql(self) -> &'static str {
        match self {
            Isolation::ReadCommitted => "READ COMMITTED",
            Isolation::RepeatableRead => "REPEATABLE READ",
            Isolation::Serializable => "SERIALIZABLE",
        }
    }
}

/// Every parameter of a TPC-C run, after preset and flags (run.json's `parameters`).
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct TpccParams {
    pub preset: String,
    pub warehouses: u64,
    /// Connections running transactions; more than one value is a sweep (one run step each,
    /// after one load).
    pub connections: Vec<u64>,
    /// Connections loading warehouses in parallel (one on SQLite, which has one writer).
    pub load_connections: u64,
    pub run_seconds: u64,
    pub warmup_seconds: u64,
    pub mix: Mix,
    pub isolation: Isolation,
    /// sysbench-tpcc's use_fk: foreign keys created after the load (not on SQLite or MyRocks,
    /// which do not enforce them).
    pub foreign_keys: bool,
    /// Check the specification's consistency conditions after each run step (untimed).
    pub check: bool,
    /// Create and load the tables (false: use those of an earlier run's --work-dir).
    pub load: bool,
    pub seed: u64,
}

impl TpccParams {
    /// The steps, in order: the load, then a run step per level.
    pub fn step_names(&self) -> Vec<String> {
        let mut out = Vec::new();
        if self.load {
            out.push(LOAD.to_string());
        }
        out.extend(self.connections.iter().map(|&c| self.run_label(c)));
        out
    }

    /// `run`, or `run_connections=N` in a sweep.
    pub fn run_label(&self, connections: u64) -> String {
        if self.connections.len() > 1 {
            crate::suites::Suite::Tpcc.level_label(RUN, connections)
        } else {
            RUN.to_string()
        }
    }

    /// The table names, in the order they are created.
    pub fn table_names(&self) -> Vec<String> {
        schema::TABLES.iter().map(|t| t.to_string()).collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mixes_draw_each_transaction_by_its_weight() {
        for mix in [Mix::Standard, Mix::Sysbench] {
            let mut n = [0u64; 5];
            for d in 0..mix.total() {
                n[mix.pick(d)] += 1;
            }
            assert_eq!(n, mix.weights(), "{mix:?}");
        }
        assert_eq!(Mix::Standard.total(), 100);
        assert_eq!(Mix::Sysbench.total(), 23);
    }

    #[test]
    fn run_steps_are_labelled_by_their_level_only_in_a_sweep() {
        let mut p = TpccParams {
            preset: "smoke".into(),
            warehouses: 1,
            connections: vec![2],
            load_connections: 1,
            run_seconds: 1,
            warmup_seconds: 0,
            mix: Mix::Standard,
            isolation: Isolation::RepeatableRead,
            foreign_keys: true,
            check: true,
            load: true,
            seed: 1,
        };
        assert_eq!(p.step_names(), ["load", "run"]);
        p.connections = vec![1, 4];
        p.load = false;
        assert_eq!(p.step_names(), ["run_connections=1", "run_connections=4"]);
        assert_eq!(
            crate::results::split_level("run_connections=4"),
            ("run", Some(4))
        );
    }
}
