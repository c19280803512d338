//! The sentences that open the Insert Benchmark's section and each step's: what was run, with
//! which parameters, and what the headline is.

use super::steps::{is_qrqp, part};
use crate::report::context::Ctx;
use crate::report::number;

/// The base target's parameters in a sentence.
pub fn describe_run(ctx: &Ctx) -> String {
    let t = &ctx.all[ctx.suite_base()];
    let p = &t.run.parameters;
    let n = |k: &str| p.get(k).and_then(|v| v.as_u64());
    let mut parts = Vec::new();
    if let Some(c) = n("clients") {
        parts.push(format!(
            "{c} client{}{}",
            if c == 1 { "" } else { "s" },
            if p.get("shared_table").and_then(|v| v.as_bool()) == Some(true) {
                " sharing one table"
            } else {
                ", one table each"
            }
        ));
    }
    let rows: Vec<String> = [
        ("l.i0", "rows_l_i0"),
        ("l.i1", "rows_l_i1"),
        ("l.i2", "rows_l_i2"),
    ]
    .iter()
    .filter_map(|(s, k)| n(k).map(|v| format!("{s} {}", number::rate(v as f64))))
    .collect();
    if !rows.is_empty() {
        parts.push(format!("rows per client: {}", rows.join(", ")));
    }
    if let Some(q) = n("query_seconds") {
        let rates: Vec<String> = p
            .get("rates")
            .and_then(|r| r.as_array())
            .map(|a| {
                a.iter()
                    .filter_map(|x| x.as_u64())
                    .map(|x| x.to_string())
                    .collect()
            })
            .unwrap_or_default();
        parts.push(format!(
            "qr/qp steps of {q} s with background inserts at {} rows/s per client",
            rates.join(", ")
        ));
    }
    if let Some(d) = p.get("deletes").and_then(|v| v.as_bool()) {
        parts.push(if d {
            "deletes keep the tables the same size".to_string()
        } else {
            "no deletes".to_string()
        });
    }
    format!(
        "Parameters of {} (preset {}): {}. Headline per step: inserts/s for l.i0, l.i1, l.i2; indexed rows/s for l.x; queries/s for qr/qp. Definitions: docs/metrics.md; how to read this report: docs/report.md.",
        t.name(),
        if t.run.preset.is_empty() { "?" } else { &t.run.preset },
        parts.join("; ")
    )
}

/// What the step does and what its headline counts.
pub fn describe_step(ctx: &Ctx, step: &str) -> String {
    let sv = ctx
        .idx
        .iter()
        .filter_map(|i| ctx.all[*i].step(step))
        .find(|s| s.ok())
        .or_else(|| ctx.idx.iter().find_map(|i| ctx.all[*i].step(step)));
    let p = sv.and_then(part);
    let deletes = p.is_some_and(|p| p.deletes);
    let rpc = p
        .map(|p| p.rows_per_commit)
        .map(|r| format!("{r} rows per statement"))
        .unwrap_or_else(|| "batches".into());
    match step {
        "l.i0" => format!("Load in primary-key order, {rpc}, no secondary indexes, as fast as possible. Headline: inserts/s."),
        "l.x" => "Creates the three secondary indexes. Headline: indexed rows/s (rows in the tables / step time).".into(),
        "l.i1" | "l.i2" => format!(
            "Inserts, {rpc}{}, with the three secondary indexes in place, as fast as possible. Headline: inserts/s.",
            if deletes { ", each batch followed by a delete of as many rows" } else { "" }
        ),
        s if is_qrqp(s) => format!(
            "{} queries, back to back, one thread per client, while background inserters add {} rows/s per client{}. Headline: queries/s; the background inserts must reach 95% of their target (SLA).",
            if s.starts_with("qr") { "Range" } else { "Point" },
            p.and_then(|p| p.rate_per_client).map(|r| r.to_string()).unwrap_or_else(|| s[2..].to_string()),
            if deletes { " and deleters remove as many" } else { "" }
        ),
        _ => "A step this report has no description for.".into(),
    }
}
