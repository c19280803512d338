//! What a TPC-C run step measured, in the terms the peers report (docs/tpcc.md defines every
//! field): New-Orders per minute (NOPM, HammerDB's headline) and transactions per minute (TPM),
//! each transaction type's count and statements, and the consistency conditions checked after
//! the step.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

/// The five transactions as `transactions` and the step's `ops` name them.
pub const TRANSACTIONS: [&str; 5] = [
    "new_order",
    "payment",
    "order_status",
    "delivery",
    "stock_level",
];

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct TpccStep {
    pub warehouses: u64,
    pub connections: u64,
    /// `standard` or `sysbench`.
    pub mix: String,
    /// `rc`, `rr` or `ser` (not set on SQLite, whose transactions are serializable).
    pub isolation: String,
    pub planned_s: u64,
    pub warmup_s: f64,
    /// The time the figures are over: the step's time after the warm-up.
    pub measured_s: f64,
    /// New-Orders committed per minute of measured time.
    pub nopm: f64,
    /// Transactions that ended (committed, or rolled back on purpose) per minute.
    pub tpm: f64,
    /// New-Orders committed in the measured time.
    pub new_orders: u64,
    /// New-Orders rolled back on purpose (an unused item), in the measured time.
    pub rolled_back: u64,
    /// Transactions rolled back after a deadlock, serialization failure or lock wait timeout
    /// and replaced by a new one, in the measured time.
    pub retried: u64,
    /// Per transaction type (`new_order`, `payment`, `order_status`, `delivery`,
    /// `stock_level`).
    pub transactions: BTreeMap<String, TpccTransaction>,
    /// New-Orders committed over the whole step, warm-up included, as dbperf counted them.
    pub new_orders_step: u64,
    /// What the districts' next order numbers grew by over the whole step: equal to
    /// `new_orders_step` when every committed New-Order is in the database. Null when they
    /// could not be read.
    pub new_orders_in_database: Option<u64>,
    /// The specification's consistency conditions after the step; empty with --check off.
    pub consistency: Vec<TpccCheck>,
}

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct TpccTransaction {
    /// Ended in the measured time (committed, or for New-Order also rolled back on purpose).
    pub count: u64,
    /// Its share of all transactions that ended.
    pub share: f64,
    pub per_minute: f64,
    pub retried: u64,
    /// Statements sent per transaction that ended, BEGIN and COMMIT (or ROLLBACK) included.
    pub statements_per_transaction: Option<f64>,
}

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct TpccCheck {
    /// The condition's number in clause 3.3.2.
    pub condition: u8,
    /// What the condition says.
    pub holds: String,
    pub held: bool,
    /// Warehouses, districts, orders, lines or customers that break it; null when the check
    /// could not run.
    pub violations: Option<u64>,
    pub error: Option<String>,
}
