//! Turns what the engine measured and what the workload concluded into the step file.

use std::collections::BTreeMap;

use crate::engine::recorder::KindStats;
use crate::engine::StepMeasurement;
use crate::results::{
    encode_histogram, percentiles, CleanupRecord, Headline, IbenchBuckets, OpStats, Sla, StepFile,
    StepParameters, SCHEMA,
};
use crate::workload::ibench::{Cleanup, IbenchParams, StepDef, StepOutcome, KINDS, SLA_FRACTION};

pub fn op_stats(k: &KindStats, secs: f64) -> OpStats {
    let secs = secs.max(1e-9);
    OpStats {
        count: k.ops,
        rows: k.rows,
        errors: k.errors,
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

pub fn round3(x: f64) -> f64 {
    (x * 1000.0).round() / 1000.0
}

pub fn parameters(p: &IbenchParams, def: &StepDef) -> StepParameters {
    let tables = p.tables();
    StepParameters {
        clients: def.clients,
        tables: tables.into_iter().take(def.clients as usize).collect(),
        rows_per_commit: def.rows_per_commit,
        planned_rows: def.planned_rows(),
        rate_per_client: def.rate_per_client,
        deletes: def.deletes,
        queries: def.queries.map(|q| format!("{q:?}").to_lowercase()),
    }
}

pub struct StepRecord<'a> {
    pub params: &'a IbenchParams,
    pub def: &'a StepDef,
    pub started_at: String,
    pub measurement: Option<&'a StepMeasurement>,
    pub outcome: Option<&'a StepOutcome>,
    pub cleanup: Option<&'a Cleanup>,
    pub status: &'a str,
    pub error: Option<String>,
    pub warnings: Vec<String>,
    pub table_rows: Option<std::collections::BTreeMap<String, u64>>,
}

pub fn step_file(r: StepRecord) -> StepFile {
    let step = r.def.name.to_string();
    let (metric, unit) = r.def.headline();
    let secs = r
        .measurement
        .map(|m| m.duration.as_secs_f64())
        .unwrap_or(0.0);
    let mut ops = BTreeMap::new();
    if let Some(m) = r.measurement {
        for k in r.def.kinds() {
            ops.insert(KINDS[k].to_string(), op_stats(&m.kinds[k], secs));
        }
    }
    let outcome = r.outcome;
    StepFile {
        schema: SCHEMA,
        step: step.clone(),
        status: r.status.to_string(),
        error: r.error,
        warnings: r.warnings,
        started_at: r.started_at,
        duration_s: round3(secs),
        headline: Headline {
            metric: metric.to_string(),
            value: round3(outcome.map(|o| o.headline_value).unwrap_or(0.0)),
            unit: unit.to_string(),
        },
        parameters: parameters(r.params, r.def),
        ops,
        interval_rate_percentiles: outcome
            .map(|o| o.interval_percentiles.iter().cloned().collect())
            .unwrap_or_default(),
        sla: outcome
            .and_then(|o| o.sla)
            .map(|(target, achieved, met)| Sla {
                target_rows_per_s: target,
                achieved_rows_per_s: round3(achieved),
                ratio: round3(achieved / target),
                required_ratio: SLA_FRACTION,
                met: (r.status == "ok").then_some(met),
            }),
        cleanup: r.cleanup.map(|c| CleanupRecord {
            budget_s: c.budget_s,
            rule: c.rule.clone(),
            actions: c.actions.clone(),
            work_s: round3(c.work_s),
            slept_s: round3(c.slept_s),
            error: c.error.clone(),
        }),
        table_rows: r.table_rows,
        series_file: r.measurement.map(|_| format!("{step}.series.csv")),
        hardware: None,
        dbms: None,
        sysbench: None,
    }
}
