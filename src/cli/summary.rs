//! The terminal summary at the end of a run: per step the headline and, per operation type,
//! latency p50/p99/max and the SLA verdict.

use comfy_table::{presets::UTF8_FULL_CONDENSED, CellAlignment, Table};

use crate::results::{Payload, Sla, StepFile};

pub use crate::report::number::{
    terminal as fmt_num, terminal_int as fmt_int, terminal_ms_of_us as fmt_ms,
};

pub struct TargetSteps<'a> {
    pub target: &'a str,
    pub steps: &'a [StepFile],
}

/// The SLA of an Insert Benchmark qr/qp step; other suites' steps have none.
fn sla_of(p: &Payload) -> Option<&Sla> {
    match p {
        Payload::Ibench(i) => i.sla.as_ref(),
        Payload::Sysbench(_) | Payload::Tpcc(_) | Payload::Pgbench(_) => None,
    }
}

/// The SLA column of a step: met or missed and by how much, n/a when it was not judged.
fn sla_text(s: &StepFile) -> String {
    match s.payload.as_ref().and_then(sla_of) {
        Some(x) if x.met == Some(true) => format!("met ({:.0}%)", x.ratio * 100.0),
        Some(x) if x.met == Some(false) => {
            format!(
                "MISSED ({:.0}% of {})",
                x.ratio * 100.0,
                fmt_num(x.target_rows_per_s)
            )
        }
        Some(_) => format!("n/a ({})", s.status),
        None => "-".into(),
    }
}

/// A step's rows: one per operation type (one with dashes when it has none); the target
/// (with several), the step and its headline and SLA on the first only.
fn step_rows(target: Option<&str>, s: &StepFile) -> Vec<Vec<String>> {
    let sla = sla_text(s);
    let ops: Vec<_> = if s.ops.is_empty() {
        vec![None]
    } else {
        s.ops.iter().map(Some).collect()
    };
    let mut rows = Vec::new();
    for (i, op) in ops.into_iter().enumerate() {
        let first = i == 0;
        let mut row: Vec<String> = vec![];
        if let Some(t) = target {
            row.push(if first { t.to_string() } else { String::new() });
        }
        if first {
            row.extend([
                s.step.clone(),
                s.status.to_string(),
                fmt_num(s.headline.value),
                s.headline.unit.clone(),
            ]);
        } else {
            row.extend([String::new(), String::new(), String::new(), String::new()]);
        }
        match op {
            Some((name, o)) => row.extend([
                name.clone(),
                fmt_int(o.count),
                fmt_ms(o.latency_us.p50),
                fmt_ms(o.latency_us.p99),
                fmt_ms(o.latency_us.max),
                o.errors.to_string(),
            ]),
            None => row.extend(["-", "-", "-", "-", "-", "-"].map(String::from)),
        }
        row.push(if first { sla.clone() } else { String::new() });
        rows.push(row);
    }
    rows
}

pub fn table(targets: &[TargetSteps]) -> String {
    let mut t = Table::new();
    t.load_style(UTF8_FULL_CONDENSED);
    let multi = targets.len() > 1;
    let mut header = vec![];
    if multi {
        header.push("target");
    }
    header.extend([
        "step", "status", "headline", "unit", "op", "count", "p50 ms", "p99 ms", "max ms",
        "errors", "SLA",
    ]);
    t.set_header(header);
    for ts in targets {
        for s in ts.steps {
            for row in step_rows(multi.then_some(ts.target), s) {
                t.add_row(row);
            }
        }
    }
    let offset = if multi { 1 } else { 0 };
    for c in [
        2 + offset,
        5 + offset,
        6 + offset,
        7 + offset,
        8 + offset,
        9 + offset,
    ] {
        if let Some(col) = t.column_mut(c) {
            col.set_cell_alignment(CellAlignment::Right);
        }
    }
    t.to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers_read_well() {
        assert_eq!(fmt_num(1234567.8), "1,234,568");
        assert_eq!(fmt_num(123.4), "123");
        assert_eq!(fmt_num(12.34), "12.3");
        assert_eq!(fmt_num(0.5), "0.50");
        assert_eq!(fmt_ms(250.0), "0.250");
        assert_eq!(fmt_ms(12_345.0), "12.3");
        assert_eq!(fmt_ms(1_500_000.0), "1500");
    }
}
