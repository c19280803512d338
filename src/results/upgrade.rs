//! Step files of schema 1 in the shape of schema 2, on read: schema 1 kept the Insert
//! Benchmark's part of a step among every step's fields (`parameters.rows_per_commit`,
//! `planned_rows`, `rate_per_client`, `deletes`, `queries`, and the top-level `sla`); schema 2
//! keeps it under `ibench`, as sysbench's and TPC-C's parts already were under their names.
//! Schema 1 is closed, so which steps were the Insert Benchmark's is told by the step names it
//! wrote, a list that cannot grow.

use serde_json::{Map, Value};

use crate::suites::Suite;

/// The members schema 1 had for the Insert Benchmark's part, inside `parameters`.
const IBENCH_PARAMETERS: [&str; 5] = [
    "rows_per_commit",
    "planned_rows",
    "rate_per_client",
    "deletes",
    "queries",
];

/// The names schema 1 gave the Insert Benchmark's steps: l.i0, l.x, l.i1, l.i2, qr<N>, qp<N>.
fn ibench_step(name: &str) -> bool {
    matches!(name, "l.i0" | "l.x" | "l.i1" | "l.i2")
        || ["qr", "qp"].iter().any(|p| {
            name.strip_prefix(p)
                .is_some_and(|n| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()))
        })
}

/// `step` (a schema-1 step file's members) made schema 2's: the Insert Benchmark's part moved
/// under `ibench` for its steps, and dropped from other suites' (their load steps carried it
/// with nothing in it).
pub fn step_v1(step: &mut Map<String, Value>) {
    let is_ibench = step
        .get("step")
        .and_then(Value::as_str)
        .is_some_and(ibench_step)
        && !step.contains_key(Suite::Sysbench.name())
        && !step.contains_key(Suite::Tpcc.name());
    let mut part = Map::new();
    if let Some(Value::Object(p)) = step.get_mut("parameters") {
        for k in IBENCH_PARAMETERS {
            if let Some(v) = p.remove(k) {
                part.insert(k.to_string(), v);
            }
        }
    }
    let sla = step.remove("sla").unwrap_or(Value::Null);
    if is_ibench {
        part.insert("sla".into(), sla);
        step.insert(Suite::Ibench.name().into(), Value::Object(part));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn the_insert_benchmarks_part_moves_under_ibench() {
        let mut s = json!({
            "step": "qr100",
            "parameters": {"clients": 1, "tables": ["pi1"], "rows_per_commit": 50,
                "planned_rows": 0, "rate_per_client": 100, "deletes": true, "queries": "range"},
            "sla": {"met": true},
        });
        step_v1(s.as_object_mut().unwrap());
        assert_eq!(
            s,
            json!({
                "step": "qr100",
                "parameters": {"clients": 1, "tables": ["pi1"]},
                "ibench": {"rows_per_commit": 50, "planned_rows": 0, "rate_per_client": 100,
                    "deletes": true, "queries": "range", "sla": {"met": true}},
            })
        );
        // Another suite's load step keeps none of it.
        let mut load = json!({"step": "load", "parameters": {"clients": 1, "tables": [],
            "rows_per_commit": 1000}, "sla": null});
        step_v1(load.as_object_mut().unwrap());
        assert_eq!(
            load,
            json!({"step": "load", "parameters": {"clients": 1, "tables": []}})
        );
        assert!(ibench_step("qp1000") && !ibench_step("qp") && !ibench_step("run"));
    }
}
