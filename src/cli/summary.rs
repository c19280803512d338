//! The terminal summary at the end of a run: per step the headline and, per operation type,
//! latency p50/p99/max and the SLA verdict.

use comfy_table::{presets::UTF8_FULL_CONDENSED, CellAlignment, Table};

use crate::results::StepFile;

/// Thousands separators for rates; a few significant digits for small values.
pub fn fmt_num(v: f64) -> String {
    if !v.is_finite() {
        return "-".into();
    }
    if v.abs() >= 100.0 {
        let s = format!("{:.0}", v);
        let (sign, digits) = s.strip_prefix('-').map(|d| ("-", d)).unwrap_or(("", &s));
        let mut out = String::new();
        for (i, c) in digits.chars().enumerate() {
            if i > 0 && (digits.len() - i) % 3 == 0 {
                out.push(',');
            }
            out.push(c);
        }
        format!("{sign}{out}")
    } else if v.abs() >= 10.0 {
        format!("{v:.1}")
    } else {
        format!("{v:.2}")
    }
}

pub fn fmt_int(n: u64) -> String {
    if n >= 100 {
        fmt_num(n as f64)
    } else {
        n.to_string()
    }
}

/// Milliseconds from microseconds, 3 significant digits.
pub fn fmt_ms(us: f64) -> String {
    let ms = us / 1000.0;
    if ms >= 100.0 {
        format!("{ms:.0}")
    } else if ms >= 10.0 {
        format!("{ms:.1}")
    } else if ms >= 1.0 {
        format!("{ms:.2}")
    } else {
        format!("{ms:.3}")
    }
}

pub struct TargetSteps<'a> {
    pub target: &'a str,
    pub steps: &'a [StepFile],
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
            let sla = match &s.sla {
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
            };
            let mut first = true;
            let ops: Vec<_> = if s.ops.is_empty() {
                vec![None]
            } else {
                s.ops.iter().map(Some).collect()
            };
            for op in ops {
                let mut row: Vec<String> = vec![];
                if multi {
                    row.push(if first {
                        ts.target.to_string()
                    } else {
                        String::new()
                    });
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
                t.add_row(row);
                first = false;
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
