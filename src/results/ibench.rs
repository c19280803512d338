//! The Insert Benchmark's part of a step file (docs/ibench.md): the step's shape (rows per
//! commit, planned rows, the target rate, deletes, queries) and the SLA of the background
//! inserts of a qr/qp step.

use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct IbenchStep {
    pub rows_per_commit: u64,
    pub planned_rows: u64,
    pub rate_per_client: Option<u64>,
    pub deletes: bool,
    pub queries: Option<String>,
    /// The background inserts of a qr/qp step against their target rate; null elsewhere.
    pub sla: Option<Sla>,
}

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct Sla {
    pub target_rows_per_s: f64,
    pub achieved_rows_per_s: f64,
    pub ratio: f64,
    pub required_ratio: f64,
    /// null when the step did not run to its end (failed or interrupted): a partial step's rate
    /// says nothing about whether the target was sustained.
    pub met: Option<bool>,
}
