//! A benchmark suite as the run loop drives it. The Insert Benchmark and the sysbench suite each
//! implement it; the loop (target lifecycle, measuring, writing, failure bookkeeping) is shared.

use std::collections::BTreeMap;
use std::sync::atomic::AtomicBool;
use std::sync::Arc;

use super::events::{Events, Note};
use super::measure::{CostSources, Measured, StepSetup};
use crate::dbms::{Dbms, Fault};
use crate::results::{
    encode_histogram, percentiles, CleanupRecord, IbenchBuckets, OpStats, Status, StepFile,
};
use crate::runner::recorder::KindStats;
use crate::runner::StepMeasurement;
use crate::workload::common::cleanup::Cleanup;

/// A suite with every parameter fixed, before any target is open.
pub trait Suite: Send + Sync {
    /// Which registered suite it is: the `suite` of run.json.
    fn suite(&self) -> crate::suites::Suite;
    fn preset(&self) -> &str;
    /// Every parameter after preset and flags, for run.json.
    fn parameters(&self) -> anyhow::Result<serde_json::Value>;
    /// The steps a target runs, in order.
    fn step_names(&self) -> Vec<String>;
    /// The first step continues on tables that must exist already. Then a server dbperf starts
    /// empty cannot be a target; the sentence says why.
    fn needs_existing_tables(&self) -> Option<String>;
    /// Says in one sentence which tables are missing.
    fn check_tables(&self, dbms: &Arc<dyn Dbms>) -> anyhow::Result<()>;
    /// The suite on one open target.
    fn on(&self, dbms: Arc<dyn Dbms>) -> Box<dyn Steps>;
    /// Why the suite cannot run on one of these targets, in one sentence.
    fn refuses(&self, _targets: &[crate::spec::target::Target]) -> Option<String> {
        None
    }
    /// The most connections it opens at once to one target (its workers and a few of its
    /// own), so a server started with fewer is refused before anything runs.
    fn connections(&self) -> u64;
    /// Its values of the run's swept axes: the Insert Benchmark at one level of a `--clients`
    /// sweep is `clients` = `4`. Empty without a sweep.
    fn axes(&self) -> BTreeMap<String, String> {
        BTreeMap::new()
    }
}

/// What finishing a step may use: the target's cost sources, the interrupt, listeners.
pub struct FinishCx<'a> {
    pub target: &'a str,
    pub cost: &'a CostSources,
    pub interrupt: &'a Arc<AtomicBool>,
    pub count_rows: bool,
    pub events: &'a mut dyn Events,
    /// Set by `finish` when the untimed work after the step (the cleanup and wait) failed with
    /// a fault: the run tells a server that stopped answering by it, as by the measured
    /// failure's (`Measured::stalled`).
    pub cleanup_fault: Option<Fault>,
}

impl FinishCx<'_> {
    pub fn note(&mut self, n: Note) {
        self.events.note(self.target, &n);
    }
}

/// A suite's steps on one target.
pub trait Steps {
    fn count(&self) -> usize;
    fn name(&self, i: usize) -> String;
    /// Untimed work before step `i` and the plan of its measured part. An error fails the step
    /// before it starts.
    fn begin(&mut self, i: usize) -> anyhow::Result<StepSetup>;
    /// The step file from what was measured, after any untimed work that follows the step
    /// (cleanup and wait, counting rows).
    fn finish(&mut self, i: usize, m: Measured, started_at: String, cx: &mut FinishCx) -> StepFile;
    /// The step file of a step that failed before it started.
    fn failed_before(&self, i: usize, error: String, started_at: String) -> StepFile;
}

/// Rows in each table (untimed, --count-rows), or None with a note when counting failed.
pub fn count_rows(
    dbms: &Arc<dyn Dbms>,
    tables: &[String],
    cx: &mut FinishCx,
) -> Option<BTreeMap<String, u64>> {
    let r = (|| -> anyhow::Result<BTreeMap<String, u64>> {
        let mut conn = dbms.connect()?;
        // Full counts may take long: bounded by --ddl-timeout.
        conn.set_budget(crate::dbms::Budget::Long);
        let mut out = BTreeMap::new();
        for t in tables {
            let n = conn
                .query_i64(&format!("SELECT count(*) FROM {t}"))?
                .unwrap_or(0);
            out.insert(t.clone(), n as u64);
        }
        Ok(out)
    })();
    match r {
        Ok(r) => Some(r),
        Err(e) => {
            cx.note(Note::Warning(format!("could not count rows: {e:#}")));
            None
        }
    }
}

/// `x` rounded to 3 decimals, as every rate in the result files.
pub fn round3(x: f64) -> f64 {
    (x * 1000.0).round() / 1000.0
}

/// How a step ended, from what its measurement says.
pub fn status_of(m: &StepMeasurement) -> Status {
    if m.failure.is_some() {
        Status::Failed
    } else if m.interrupted {
        Status::Interrupted
    } else {
        Status::Ok
    }
}

/// An operation type's figures over `secs` of measured time.
pub fn op_stats(k: &KindStats, secs: f64) -> OpStats {
    let secs = secs.max(1e-9);
    OpStats {
        count: k.ops,
        rows: k.rows,
        errors: k.errors,
        retried: k.retried,
        ignored: k.ignored,
        failed: k.failed,
        error_samples: k.error_samples.clone(),
        ops_per_s: round3(k.ops as f64 / secs),
        rows_per_s: round3(k.rows as f64 / secs),
        latency_us: percentiles(&k.latency, k.max_latency_ns),
        service_us: percentiles(&k.service, k.max_service_ns),
        ibench_buckets: IbenchBuckets::from_counts(&k.buckets),
        max_ms: round3(k.max_latency_ns as f64 / 1e6),
        hdr_latency: encode_histogram(&k.latency),
    }
}

/// The step file's record of an untimed cleanup and wait after a step.
pub fn cleanup_record(c: &Cleanup) -> CleanupRecord {
    CleanupRecord {
        budget_s: c.budget_s,
        rule: c.rule.clone(),
        actions: c.actions.clone(),
        work_s: round3(c.work_s),
        slept_s: round3(c.slept_s),
        error: c.error.clone(),
    }
}
