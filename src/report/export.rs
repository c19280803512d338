//! `--format csv|json`: every table of the report as data. CSV is long ("tidy"): one line per
//! cell, so a spreadsheet pivots it and pandas filters it; JSON keeps the tables whole.

use serde_json::{json, Value as J};

use super::model::{Doc, Table, Value};

const HEADER: &str =
    "table,title,suite,step,op,base,row,target,column,label,unit,value,text,mark,note\n";

use crate::untrusted::csv_field as field;

fn value_text(v: Value) -> String {
    match v {
        Value::Num(x) => format!("{x}"),
        Value::Inf => "inf".into(),
        Value::Missing => String::new(),
    }
}

pub fn csv(doc: &Doc) -> String {
    let mut o = String::from(HEADER);
    for t in doc.tables() {
        for r in &t.rows {
            let target = r.target.map(|i| doc.targets[i].name.as_str()).unwrap_or("");
            for (c, cell) in t.columns.iter().zip(&r.cells) {
                let fields = [
                    t.id.as_str(),
                    &t.title,
                    t.suite,
                    t.step.as_deref().unwrap_or(""),
                    t.op.as_deref().unwrap_or(""),
                    t.base.as_deref().unwrap_or(""),
                    &r.label,
                    target,
                    &c.key,
                    &c.label,
                    &c.unit,
                    &value_text(cell.value),
                    &cell.text,
                    &cell.mark.name(),
                    cell.note.as_deref().unwrap_or(""),
                ];
                let line: Vec<String> = fields.iter().map(|f| field(f)).collect();
                o.push_str(&line.join(","));
                o.push('\n');
            }
        }
    }
    o
}

fn table_json(doc: &Doc, t: &Table) -> J {
    json!({
        "id": t.id,
        "title": t.title,
        "kind": t.kind,
        "suite": t.suite,
        "step": t.step,
        "op": t.op,
        "base": t.base,
        "row_header": t.row_header,
        "source": t.source,
        "legend": t.legend,
        "columns": t.columns,
        "rows": t.rows.iter().map(|r| json!({
            "label": r.label,
            "target": r.target.map(|i| doc.targets[i].name.clone()),
            "note": r.note,
            "cells": r.cells.iter().map(|c| json!({
                "value": match c.value {
                    Value::Num(x) => json!(x),
                    Value::Inf => json!("inf"),
                    Value::Missing => J::Null,
                },
                "text": c.text,
                "mark": c.mark.name(),
                "note": c.note,
            })).collect::<Vec<_>>(),
        })).collect::<Vec<_>>(),
    })
}

pub fn json(doc: &Doc) -> String {
    let mut v = json!({
        "report_schema": 1,
        "title": doc.title,
        "generated_by": doc.generated_by,
        "base": doc.base_name(),
        "thresholds": { "low": doc.worse, "high": doc.better },
        "targets": doc.targets,
        "warnings": doc.warnings,
        "tables": doc.tables().into_iter().map(|t| table_json(doc, t)).collect::<Vec<_>>(),
    });
    // Only when there is something to say, so a whole campaign's report.json is as before.
    if !doc.incomplete.is_empty() {
        v["incomplete"] = json!(doc.incomplete);
    }
    let mut s = serde_json::to_string_pretty(&v).unwrap_or_default();
    s.push('\n');
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn csv_fields_are_quoted_when_needed() {
        assert_eq!(field("a,b"), "\"a,b\"");
        assert_eq!(field("say \"x\""), "\"say \"\"x\"\"\"");
        assert_eq!(field("plain"), "plain");
        assert_eq!(value_text(Value::Inf), "inf");
        assert_eq!(value_text(Value::Missing), "");
    }
}
