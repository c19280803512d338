//! The values of a query's rows, kept as text: what a workload reads back and then writes (TPC-C
//! reads a district's next order number, an item's price, a stock's quantity). Every adapter
//! hands each row to `Rows::push` as the text protocol sends it (SQLite's typed values are
//! written as text), after the row has been counted against the caller's `Keep`, so a server
//! that floods cannot grow it past the bound. One buffer is reused from statement to statement.

use super::keep::Tally;
use super::{DbError, Keep};

/// The rows of one statement. Cleared by the adapter before each statement.
#[derive(Debug, Default)]
pub struct Rows {
    columns: usize,
    bytes: Vec<u8>,
    /// (start, end) into `bytes` per cell, row after row; None for NULL.
    cells: Vec<Option<(usize, usize)>>,
    tally: Option<Tally>,
}

/// Why a value could not be read as the workload needs it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ValueError {
    /// The row or column is not there.
    Missing { row: usize, column: usize },
    /// The value is NULL.
    Null { row: usize, column: usize },
    /// The value is not a number of the kind asked for (shown escaped and cut).
    NotANumber { shown: String },
}

impl std::fmt::Display for ValueError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ValueError::Missing { row, column } => {
                write!(
                    f,
                    "the server returned no value at row {row}, column {column}"
                )
            }
            ValueError::Null { row, column } => {
                write!(f, "the server returned NULL at row {row}, column {column}")
            }
            ValueError::NotANumber { shown } => {
                write!(f, "the server returned {shown} where a number belongs")
            }
        }
    }
}

impl Rows {
    /// Forgets the last statement's rows and bounds the next one's by `keep`.
    pub fn start(&mut self, keep: Keep) {
        self.columns = 0;
        self.bytes.clear();
        self.cells.clear();
        self.tally = Some(Tally::new(keep));
    }

    /// Keeps one row, after counting it against the statement's `Keep`: past it, the sentence
    /// the statement fails with.
    pub fn push(&mut self, values: &[Option<&[u8]>]) -> Result<(), String> {
        if let Some(t) = &mut self.tally {
            t.row(values)?;
        }
        if self.cells.is_empty() {
            self.columns = values.len();
        }
        // A later row with another width would misplace every cell after it: kept square.
        for i in 0..self.columns {
            let cell = values.get(i).copied().flatten().map(|v| {
                let at = self.bytes.len();
                self.bytes.extend_from_slice(v);
                (at, self.bytes.len())
            });
            self.cells.push(cell);
        }
        Ok(())
    }

    pub fn len(&self) -> usize {
        self.cells.len().checked_div(self.columns).unwrap_or(0)
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The value's bytes; None for NULL or a cell that is not there.
    pub fn get(&self, row: usize, column: usize) -> Option<&[u8]> {
        if column >= self.columns {
            return None;
        }
        let (s, e) = (*self.cells.get(row * self.columns + column)?)?;
        Some(&self.bytes[s..e])
    }

    /// The value as text (bytes that are not UTF-8 replaced).
    pub fn text(&self, row: usize, column: usize) -> Result<String, ValueError> {
        Ok(String::from_utf8_lossy(self.value(row, column)?).into_owned())
    }

    /// The value as an integer. A decimal with a zero fraction (`3001.00`, SQLite's `12.0`)
    /// is one.
    pub fn int(&self, row: usize, column: usize) -> Result<i64, ValueError> {
        let v = self.value(row, column)?;
        let c = parse_hundredths(v)?;
        if c % 100 != 0 {
            return Err(not_a_number(v));
        }
        Ok(c / 100)
    }

    /// The value in hundredths (cents), rounded half away from zero: decimals of money and
    /// rates (`-10.00`, `0.1`, `19.995`).
    pub fn hundredths(&self, row: usize, column: usize) -> Result<i64, ValueError> {
        parse_hundredths(self.value(row, column)?)
    }

    fn value(&self, row: usize, column: usize) -> Result<&[u8], ValueError> {
        if row >= self.len() || column >= self.columns {
            return Err(ValueError::Missing { row, column });
        }
        self.get(row, column)
            .ok_or(ValueError::Null { row, column })
    }
}

fn not_a_number(v: &[u8]) -> ValueError {
    ValueError::NotANumber {
        shown: crate::untrusted::shown(&String::from_utf8_lossy(&v[..v.len().min(64)])),
    }
}

/// `[-]digits[.digits]` in hundredths, rounded half away from zero at the third decimal. At most
/// 15 integer digits, so nothing overflows.
pub fn parse_hundredths(v: &[u8]) -> Result<i64, ValueError> {
    let t = v.trim_ascii();
    let (neg, t) = match t.first() {
        Some(b'-') => (true, &t[1..]),
        Some(b'+') => (false, &t[1..]),
        _ => (false, t),
    };
    let (whole, frac) = match t.iter().position(|&b| b == b'.') {
        Some(p) => (&t[..p], &t[p + 1..]),
        None => (t, &t[t.len()..]),
    };
    let digits = |s: &[u8]| s.iter().all(u8::is_ascii_digit);
    if (whole.is_empty() && frac.is_empty()) || whole.len() > 15 || !digits(whole) || !digits(frac)
    {
        return Err(not_a_number(v));
    }
    let mut n: i64 = 0;
    for &b in whole {
        n = n * 10 + i64::from(b - b'0');
    }
    let d = |i: usize| frac.get(i).map_or(0, |b| i64::from(b - b'0'));
    n = n * 100 + d(0) * 10 + d(1);
    if d(2) >= 5 {
        n += 1;
    }
    Ok(if neg { -n } else { n })
}

/// Hundredths as a decimal literal: `-1234` is `-12.34`.
pub fn hundredths_text(c: i64) -> String {
    let sign = if c < 0 { "-" } else { "" };
    let a = c.unsigned_abs();
    format!("{sign}{}.{:02}", a / 100, a % 100)
}

/// The error a statement fails with once `Rows::push` refused a row: the server sent more than
/// the caller keeps.
pub fn too_much(message: String) -> DbError {
    DbError {
        message,
        transient: false,
        code: None,
        fault: Some(super::Fault::TooMuch),
        lost: None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::dbms::KEEP;

    #[test]
    fn values_read_back_by_row_and_column() {
        let mut r = Rows::default();
        r.start(KEEP);
        r.push(&[Some(b"3001"), None, Some(b"-10.00")]).unwrap();
        r.push(&[Some(b"12.0"), Some(b"x"), Some(b"0.125")])
            .unwrap();
        assert_eq!(r.len(), 2);
        assert_eq!(r.int(0, 0), Ok(3001));
        assert_eq!(r.int(1, 0), Ok(12));
        assert_eq!(r.hundredths(0, 2), Ok(-1000));
        assert_eq!(r.hundredths(1, 2), Ok(13));
        assert_eq!(r.text(1, 1).unwrap(), "x");
        assert_eq!(r.int(0, 1), Err(ValueError::Null { row: 0, column: 1 }));
        assert!(matches!(r.int(2, 0), Err(ValueError::Missing { .. })));
        assert!(matches!(r.int(1, 1), Err(ValueError::NotANumber { .. })));
        assert!(matches!(r.int(1, 2), Err(ValueError::NotANumber { .. })));
        r.start(KEEP);
        assert!(r.is_empty());
        assert_eq!(r.get(0, 0), None);
    }

    #[test]
    fn decimals_parse_to_hundredths_without_overflow() {
        for (t, c) in [
            ("0", 0),
            ("-0.005", -1),
            ("19.994", 1999),
            ("19.995", 2000),
            (".5", 50),
            ("7.", 700),
            (" 42 ", 4200),
        ] {
            assert_eq!(parse_hundredths(t.as_bytes()), Ok(c), "{t}");
        }
        for t in [
            "",
            "-",
            ".",
            "1e5",
            "1.2.3",
            "9999999999999999",
            "--1",
            "NaN",
        ] {
            assert!(parse_hundredths(t.as_bytes()).is_err(), "{t}");
        }
        assert_eq!(hundredths_text(-1234), "-12.34");
        assert_eq!(hundredths_text(5), "0.05");
        assert_eq!(hundredths_text(i64::MIN), "-92233720368547758.08");
    }

    #[test]
    fn a_flood_is_refused_at_the_bound() {
        let mut r = Rows::default();
        r.start(Keep { rows: 2, ..KEEP });
        r.push(&[Some(b"1")]).unwrap();
        r.push(&[Some(b"1")]).unwrap();
        assert!(r.push(&[Some(b"1")]).is_err());
    }
}
