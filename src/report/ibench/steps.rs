//! What the Insert Benchmark's tables share: its steps in order, what each is about, its
//! operation types and per-second rates, and the shape of its tables.

use crate::report::model::{Column, Kind, Table};
use crate::report::target::{StepView, TargetResult};
use crate::results::{IbenchStep, Payload, Sla};

/// The Insert Benchmark's part of a step file; None for another suite's step.
pub fn part(s: &StepView) -> Option<&IbenchStep> {
    match &s.payload {
        Some(Payload::Ibench(p)) => Some(p),
        _ => None,
    }
}

/// The SLA of a qr/qp step's background inserts.
pub fn sla(s: &StepView) -> Option<&Sla> {
    part(s).and_then(|p| p.sla.as_ref())
}

const LOADS: [&str; 4] = ["l.i0", "l.x", "l.i1", "l.i2"];

/// A query step, qr<rate> or qp<rate>.
pub fn is_qrqp(step: &str) -> bool {
    (step.starts_with("qr") || step.starts_with("qp"))
        && step.get(2..).is_some_and(|r| r.parse::<u64>().is_ok())
}

/// Steps of all targets: the loads in benchmark order, then qr/qp in the order they ran.
pub fn step_order(ts: &[&TargetResult]) -> Vec<String> {
    let mut names: Vec<String> = Vec::new();
    for t in ts {
        let files = t.steps.iter().map(|s| &s.name);
        for n in t.run.steps_planned.iter().chain(files) {
            if !names.contains(n) {
                names.push(n.clone());
            }
        }
    }
    let rank = |n: &str| LOADS.iter().position(|l| *l == n).unwrap_or(LOADS.len());
    names.sort_by_key(|n| rank(n));
    names
}

/// An Insert Benchmark table with no rows yet.
pub fn table(
    id: String,
    title: String,
    kind: Kind,
    step: Option<&str>,
    columns: Vec<Column>,
) -> Table {
    Table {
        id,
        title,
        kind,
        suite: crate::suites::Suite::Ibench.name(),
        step: step.map(String::from),
        op: None,
        row_header: "target".into(),
        columns,
        rows: Vec::new(),
        legend: None,
        source: None,
        base: None,
    }
}

/// The step's headline: inserts/s, indexed rows/s (l.x) or queries/s (qr/qp).
pub fn headline(s: &StepView) -> Option<f64> {
    Some(s.headline.value)
}

/// The operation the step is about: queries for qr/qp, the index build for l.x, inserts else.
pub fn main_op(step: &str) -> &'static str {
    if is_qrqp(step) {
        "query"
    } else if step == "l.x" {
        "index"
    } else {
        "insert"
    }
}

/// Operation types of a step, in the original's order.
pub fn op_kinds(steps: &[&StepView]) -> Vec<String> {
    let mut out = Vec::new();
    for k in ["insert", "delete", "query", "index"] {
        if steps.iter().any(|s| s.ops.contains_key(k)) {
            out.push(k.to_string());
        }
    }
    for s in steps {
        for k in s.ops.keys() {
            if !out.contains(k) {
                out.push(k.clone());
            }
        }
    }
    out
}

/// An operation type in words, plural.
pub fn op_title(op: &str) -> &str {
    match op {
        "insert" => "inserts",
        "delete" => "deletes",
        "query" => "queries",
        "index" => "index builds",
        o => o,
    }
}

/// The per-second rates a step draws, with their names.
pub const RATES: [(&str, &str, &str); 3] = [
    ("insert", "inserts/s", "rows/s"),
    ("delete", "deletes/s", "rows/s"),
    ("query", "queries/s", "queries/s"),
];

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn qrqp_names() {
        assert!(is_qrqp("qr100") && is_qrqp("qp1000"));
        assert!(!is_qrqp("qrx") && !is_qrqp("l.i0") && !is_qrqp("qp"));
    }
}
