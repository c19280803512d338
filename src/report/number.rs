//! Every way the report (and the history) writes a number as text, each a named style. Where
//! two styles differ, each says why it exists; a table picks the style of what its column holds.
//! The reports of `tests/golden.rs` pin every style to the byte.

/// Rates (rows/s, queries/s, reads/s): integers with thousands separators from 100 up (the
/// original rounds ips/qps to integers), 1 decimal from 10, 2 below. A rate is read against
/// other rates, so its decimals are fixed by size rather than kept significant as in `sig`.
pub fn rate(v: f64) -> String {
    if !v.is_finite() {
        return "—".into();
    }
    if v.abs() >= 100.0 {
        group_thousands(&format!("{v:.0}"))
    } else if v.abs() >= 10.0 {
        format!("{v:.1}")
    } else {
        format!("{v:.2}")
    }
}

/// Counts (operations): every digit, with thousands separators.
pub fn int(n: u64) -> String {
    group_thousands(&n.to_string())
}

fn group_thousands(s: &str) -> String {
    let (sign, digits) = s.strip_prefix('-').map(|d| ("-", d)).unwrap_or(("", s));
    let mut out = String::with_capacity(s.len() + s.len() / 3);
    out.push_str(sign);
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i) % 3 == 0 {
            out.push(',');
        }
        out.push(c);
    }
    out
}

/// Any measured quantity (µs per op, GB, IO per op, ...): 3 significant digits, at least 0
/// decimals. Such figures run from 0.0007 to millions, and a small one must not read as 0.00.
pub fn sig(v: f64) -> String {
    if !v.is_finite() {
        return "—".into();
    }
    let a = v.abs();
    if a >= 1000.0 {
        group_thousands(&format!("{v:.0}"))
    } else if a >= 100.0 {
        format!("{v:.0}")
    } else if a >= 10.0 {
        format!("{v:.1}")
    } else if a >= 1.0 {
        format!("{v:.2}")
    } else if a == 0.0 {
        "0".into()
    } else {
        // Three significant digits: 0.500, 0.0710.
        let decimals = (2 - a.log10().floor() as i32).clamp(3, 12) as usize;
        format!("{v:.decimals$}")
    }
}

/// Latencies in milliseconds, as the terminal summary shows them: 3 decimals below 1 ms, which
/// is the microsecond the histograms resolve, where `sig` would print digits of no meaning.
pub fn ms(ms: f64) -> String {
    if !ms.is_finite() {
        "—".into()
    } else if ms >= 100.0 {
        group_thousands(&format!("{ms:.0}"))
    } else {
        under_100_ms(ms)
    }
}

/// Milliseconds under 100: 3 significant digits, down to the microsecond.
fn under_100_ms(ms: f64) -> String {
    if ms >= 10.0 {
        format!("{ms:.1}")
    } else if ms >= 1.0 {
        format!("{ms:.2}")
    } else {
        format!("{ms:.3}")
    }
}

/// The original's `pct:` cell: 3 decimals, `nonzero` when above 0 but rounding to 0.000.
pub fn bucket_pct(pct: f64) -> String {
    let s = format!("{pct:.3}");
    if pct > 0.0 && s == "0.000" {
        "nonzero".into()
    } else {
        s
    }
}

/// The Repeats table's headlines: whole numbers from 100 up, 2 decimals below, no separators.
/// It prints each round's number beside the median and min/max, where a fixed, short shape
/// reads better than `rate`'s three steps (and its reports are pinned to the byte).
pub fn whole_or_2(v: f64) -> String {
    if !v.is_finite() {
        "—".into()
    } else if v.abs() >= 100.0 {
        format!("{v:.0}")
    } else {
        format!("{v:.2}")
    }
}

/// Chart axes: 1.2M, 350k, 0.5. An axis label has a few characters' room, so large numbers
/// take a suffix and trailing zeros go.
pub fn axis(v: f64) -> String {
    let a = v.abs();
    let trim = |s: String| {
        if s.contains('.') {
            s.trim_end_matches('0').trim_end_matches('.').to_string()
        } else {
            s
        }
    };
    if a >= 1e9 {
        trim(format!("{:.2}", v / 1e9)) + "G"
    } else if a >= 1e6 {
        trim(format!("{:.2}", v / 1e6)) + "M"
    } else if a >= 1e4 {
        trim(format!("{:.1}", v / 1e3)) + "k"
    } else if a >= 1.0 || a == 0.0 {
        trim(format!("{v:.2}"))
    } else {
        trim(format!("{v:.4}"))
    }
}

/// The terminal's summary and progress: `rate`'s shape, with `-` for a missing figure (a
/// terminal may not show `—`).
pub fn terminal(v: f64) -> String {
    if v.is_finite() {
        rate(v)
    } else {
        "-".into()
    }
}

/// Counts in the terminal: every digit, separated from 100 up.
pub fn terminal_int(n: u64) -> String {
    if n >= 100 {
        int(n)
    } else {
        n.to_string()
    }
}

/// Latencies in the terminal, in milliseconds from the histograms' microseconds: 3 significant
/// digits, no separators (a column of latencies is read down, and stays narrow).
pub fn terminal_ms_of_us(us: f64) -> String {
    let ms = us / 1000.0;
    if ms >= 100.0 {
        format!("{ms:.0}")
    } else {
        under_100_ms(ms)
    }
}

/// A value of a series `history detect` reads: whole from 100 up, else 2 or 4 decimals, no
/// separators, so the answer can be pasted back as input.
pub fn series_value(v: f64) -> String {
    if v.abs() >= 100.0 {
        format!("{v:.0}")
    } else if v.abs() >= 1.0 {
        format!("{v:.2}")
    } else {
        format!("{v:.4}")
    }
}

/// A finite number as text that reads back as the very same number (Rust prints the shortest
/// representation that round-trips): the history's SQL literals, which both engines must read
/// back exactly. Not for people: 0.1 + 0.2 prints as 0.30000000000000004.
pub fn exact(v: f64) -> String {
    debug_assert!(v.is_finite());
    format!("{v:?}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_style() {
        assert_eq!(bucket_pct(0.0001), "nonzero");
        assert_eq!(bucket_pct(0.0), "0.000");
        assert_eq!(bucket_pct(99.9996), "100.000");
        assert_eq!(rate(1234567.4), "1,234,567");
        assert_eq!(rate(99.991), "100.0");
        assert_eq!(rate(5.123), "5.12");
        assert_eq!(sig(0.0071), "0.00710");
        assert_eq!(ms(0.0071), "0.007");
        assert_eq!(ms(3178.4), "3,178");
        assert_eq!(sig(12.345), "12.3");
        assert_eq!(sig(0.5), "0.500");
        assert_eq!(exact(0.1), "0.1");
        assert_eq!(exact(1e300).parse::<f64>().unwrap(), 1e300);
    }
}
