//! `steps/<step>.series.csv`: one row per second, streamed to a temporary file during the step
//! (memory stays constant in the run length) and renamed into place when the step ends; and its
//! one reader (`read_series`), beside the writer so the columns written are the columns read.

use std::fs::{self, File};
use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};

use crate::error::BadInput;

/// One operation type in one second (all connections together), as the series file stores it.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct SecondKind {
    pub ops: u64,
    pub rows: u64,
    pub errors: u64,
    pub p99_ns: u64,
    pub max_ns: u64,
}

/// One row of the series: a second of the step (the last one may be partial).
#[derive(Debug, Clone, PartialEq)]
pub struct SecondRow {
    /// 0-based second of the step.
    pub index: u64,
    /// Length of this interval in seconds: 1 except for the last, partial one.
    pub interval_s: f64,
    /// Indexed like the step's operation types.
    pub kinds: Vec<SecondKind>,
    pub target_rows_per_s: Option<f64>,
    pub achieved_rows_per_s: Option<f64>,
}

pub struct SeriesWriter {
    tmp: PathBuf,
    path: PathBuf,
    out: BufWriter<File>,
    /// (column index in the engine's kinds, name)
    kinds: Vec<(usize, &'static str)>,
    /// sysbench steps: statements per operation, for a `queries_per_s` column over all kinds.
    queries_per_op: Option<u64>,
    /// Renamed into place: nothing to clean up when dropped.
    done: bool,
}

/// A writer dropped before `finish` (a write failed, e.g. the disk is full) takes its partial
/// temporary file with it.
impl Drop for SeriesWriter {
    fn drop(&mut self) {
        if !self.done {
            let _ = fs::remove_file(&self.tmp);
        }
    }
}

impl SeriesWriter {
    pub fn create(
        steps_dir: &Path,
        step: &str,
        kinds: Vec<(usize, &'static str)>,
    ) -> std::io::Result<Self> {
        Self::create_with_queries(steps_dir, step, kinds, None)
    }

    /// As `create`, plus a last column `queries_per_s`: operations of every listed kind times
    /// `queries_per_op` per second (sysbench's per-interval QPS).
    pub fn create_with_queries(
        steps_dir: &Path,
        step: &str,
        kinds: Vec<(usize, &'static str)>,
        queries_per_op: Option<u64>,
    ) -> std::io::Result<Self> {
        let path = steps_dir.join(format!("{step}.series.csv"));
        let tmp = steps_dir.join(format!(".{step}.series.csv.tmp"));
        // A stale temporary file (a dbperf killed mid-step) or a link at its name is unlinked,
        // never followed; the file is made new.
        let mut out = BufWriter::new(crate::safe_fs::create_replacing(&tmp, 0o644)?);
        let mut header = String::from("second,interval_s");
        for (_, k) in &kinds {
            for col in ["ops_per_s", "rows_per_s", "errors", "p99_us", "max_us"] {
                header.push_str(&format!(",{k}_{col}"));
            }
        }
        header.push_str(",target_rows_per_s,achieved_rows_per_s");
        if queries_per_op.is_some() {
            header.push_str(",queries_per_s");
        }
        header.push('\n');
        if let Err(e) = out.write_all(header.as_bytes()) {
            let _ = fs::remove_file(&tmp);
            return Err(e);
        }
        Ok(SeriesWriter {
            tmp,
            path,
            out,
            kinds,
            queries_per_op,
            done: false,
        })
    }

    pub fn row(&mut self, r: &SecondRow) -> std::io::Result<()> {
        let mut line = format!("{},{:.3}", r.index + 1, r.interval_s);
        for &(i, _) in &self.kinds {
            let k = &r.kinds[i];
            line.push_str(&format!(
                ",{:.1},{:.1},{},{:.1},{:.1}",
                k.ops as f64 / r.interval_s,
                k.rows as f64 / r.interval_s,
                k.errors,
                k.p99_ns as f64 / 1000.0,
                k.max_ns as f64 / 1000.0
            ));
        }
        let opt = |v: Option<f64>| v.map(|x| format!("{x:.1}")).unwrap_or_default();
        line.push_str(&format!(
            ",{},{}",
            opt(r.target_rows_per_s),
            opt(r.achieved_rows_per_s)
        ));
        if let Some(q) = self.queries_per_op {
            let ops: u64 = self.kinds.iter().map(|&(i, _)| r.kinds[i].ops).sum();
            line.push_str(&format!(",{:.1}", (ops * q) as f64 / r.interval_s));
        }
        line.push('\n');
        self.out.write_all(line.as_bytes())?;
        // One row a second: flushing each keeps the temporary file a live feed (`tail -f`).
        self.out.flush()
    }

    /// Renames the series into place; on an error the temporary file goes (see `Drop`).
    pub fn finish(mut self) -> std::io::Result<PathBuf> {
        self.out.flush()?;
        self.out.get_ref().sync_all()?;
        fs::rename(&self.tmp, &self.path)?;
        self.done = true;
        Ok(self.path.clone())
    }
}

/// The columns of a step's per-second series a report draws: per operation type its rate and
/// its largest latency in each second.
#[derive(Debug, Clone, Default)]
pub struct Series {
    /// End of each row, seconds from the step start.
    pub t: Vec<f64>,
    /// Length of each row, seconds: 1 except the last, partial one.
    pub dt: Vec<f64>,
    /// Whether the row is a full second.
    pub full: Vec<bool>,
    pub kinds: Vec<KindSeries>,
    /// qr/qp: the background insert target, rows/s.
    pub target_rows_per_s: Option<f64>,
}

#[derive(Debug, Clone)]
pub struct KindSeries {
    pub kind: String,
    /// Rows/s for insert and delete (the original's i_ips, i_dps), operations/s otherwise.
    pub rate: Vec<f64>,
    /// Largest latency in the second, ms; NaN when none completed.
    pub max_ms: Vec<f64>,
    /// The second's 99th percentile latency, ms (`<kind>_p99_us`); NaN when none completed or
    /// the file has no such column.
    pub p99_ms: Vec<f64>,
}

impl Series {
    pub fn kind(&self, k: &str) -> Option<&KindSeries> {
        self.kinds.iter().find(|x| x.kind == k)
    }
}

/// The most of a series file (`<step>.series.csv`) a report reads: dbperf writes one row of a
/// few hundred bytes a second, so a day-long step is some 20 MiB.
pub const SERIES_MAX: u64 = 256 << 20;
/// Rows: 12 days of seconds. The series is kept in memory whole (a few dozen bytes a row per
/// operation type), so this, not the file's size, bounds what a made-up file costs.
pub const SERIES_ROWS_MAX: usize = 1 << 20;
/// The longest line (a header with every operation type's columns is under 1 KiB).
pub const SERIES_LINE_MAX: usize = 64 << 10;
/// Operation types read from a series; dbperf writes at most four.
pub const SERIES_KINDS_MAX: usize = 16;

const SERIES_FILE: crate::untrusted::Limit = crate::untrusted::Limit {
    max: SERIES_MAX,
    what: "a dbperf series file",
    links: crate::untrusted::Links::Refuse,
};

/// Reads a series file within the caps above, line by line (the text is never held whole).
pub fn read_series(path: &Path) -> anyhow::Result<Series> {
    use std::io::{BufRead, BufReader, Read};
    let (f, _) = crate::untrusted::open(path, SERIES_FILE)?;
    let mut r = BufReader::new(f.take(SERIES_MAX));
    let mut line = Vec::new();
    let mut parser: Option<SeriesParser> = None;
    let bad =
        |why: String| -> anyhow::Error { BadInput(format!("{} {why}", path.display())).into() };
    for n in 1.. {
        line.clear();
        let got = (&mut r)
            .take(SERIES_LINE_MAX as u64 + 1)
            .read_until(b'\n', &mut line)
            .map_err(|e| bad(format!("cannot be read: {e}")))?;
        if got == 0 {
            break;
        }
        if line.len() > SERIES_LINE_MAX {
            return Err(bad(format!(
                "has a line (line {n}) longer than {}, so it is not a dbperf series",
                crate::untrusted::size(SERIES_LINE_MAX as u64)
            )));
        }
        let text = std::str::from_utf8(&line)
            .map_err(|_| bad(format!("is not text (line {n} is not UTF-8)")))?
            .trim_end_matches(['\n', '\r']);
        match parser.as_mut() {
            None => parser = Some(SeriesParser::new(text)),
            Some(p) if p.full() => {
                return Err(bad(format!(
                    "has more than {SERIES_ROWS_MAX} rows (one a second: 12 days), more than a \
                     report reads"
                )))
            }
            Some(p) => p.row(text),
        }
    }
    Ok(parser.map(SeriesParser::finish).unwrap_or_default())
}

/// Parses only the columns a report draws; unknown columns are skipped, empty cells are NaN.
/// Rows past `SERIES_ROWS_MAX` are left out.
pub fn parse_series(text: &str) -> Series {
    let mut lines = text.lines();
    let mut p = SeriesParser::new(lines.next().unwrap_or(""));
    for line in lines {
        if p.full() {
            break;
        }
        p.row(line);
    }
    p.finish()
}

/// A series read row by row: the header decides which columns are kept.
struct SeriesParser {
    interval: Option<usize>,
    target: Option<usize>,
    /// Per kind: its rate column, max and p99 columns.
    cols: Vec<(usize, Option<usize>, Option<usize>)>,
    s: Series,
    t: f64,
}

impl SeriesParser {
    fn new(header_line: &str) -> SeriesParser {
        let header: Vec<&str> = header_line.split(',').collect();
        let col = |name: &str| header.iter().position(|h| *h == name);
        // Kinds in header order; rows/s for the row-moving kinds, operations/s for the rest.
        let mut kinds = Vec::new();
        let mut cols = Vec::new();
        for h in &header {
            if kinds.len() == SERIES_KINDS_MAX {
                break;
            }
            let Some(k) = h.strip_suffix("_ops_per_s") else {
                continue;
            };
            let rate_col = if k == "insert" || k == "delete" {
                col(&format!("{k}_rows_per_s"))
            } else {
                None
            }
            .or_else(|| col(h));
            if let Some(rc) = rate_col {
                kinds.push(KindSeries {
                    kind: k.to_string(),
                    rate: Vec::new(),
                    max_ms: Vec::new(),
                    p99_ms: Vec::new(),
                });
                cols.push((rc, col(&format!("{k}_max_us")), col(&format!("{k}_p99_us"))));
            }
        }
        SeriesParser {
            interval: col("interval_s"),
            target: col("target_rows_per_s"),
            cols,
            s: Series {
                kinds,
                ..Series::default()
            },
            t: 0.0,
        }
    }

    fn full(&self) -> bool {
        self.s.t.len() >= SERIES_ROWS_MAX
    }

    fn row(&mut self, line: &str) {
        if line.is_empty() {
            return;
        }
        // A number of the file: anything else, infinities included, is a gap.
        let num = |fields: &[&str], i: usize| -> f64 {
            fields
                .get(i)
                .and_then(|v| v.parse::<f64>().ok())
                .filter(|v| v.is_finite())
                .unwrap_or(f64::NAN)
        };
        let fields: Vec<&str> = line.split(',').collect();
        // An interval is a second or its part; anything else counts as a second, so the time
        // axis stays finite and in order whatever the file says.
        let dt = self
            .interval
            .map(|i| num(&fields, i))
            .filter(|d| (0.0..=1e6).contains(d))
            .unwrap_or(1.0);
        self.t += dt;
        self.s.t.push(self.t);
        self.s.dt.push(dt);
        self.s.full.push(dt >= 0.999);
        for ((rc, mc, pc), ks) in self.cols.iter().zip(self.s.kinds.iter_mut()) {
            ks.rate.push(num(&fields, *rc));
            let ms = |c: &Option<usize>| c.map(|i| num(&fields, i) / 1000.0).unwrap_or(f64::NAN);
            let (m, p) = (ms(mc), ms(pc));
            ks.max_ms.push(if m > 0.0 { m } else { f64::NAN });
            ks.p99_ms.push(if p > 0.0 { p } else { f64::NAN });
        }
        if self.s.target_rows_per_s.is_none() {
            if let Some(ti) = self.target {
                let v = num(&fields, ti);
                if v.is_finite() {
                    self.s.target_rows_per_s = Some(v);
                }
            }
        }
    }

    fn finish(self) -> Series {
        self.s
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn series_keeps_rates_and_max_latency_per_kind() {
        let csv = "second,interval_s,insert_ops_per_s,insert_rows_per_s,insert_errors,insert_p99_us,insert_max_us,query_ops_per_s,query_rows_per_s,query_errors,query_p99_us,query_max_us,target_rows_per_s,achieved_rows_per_s\n\
                   1,1.000,2.0,100.0,0,5360.3,5360.3,134845.0,1347968.0,0,9.1,1372.6,100.0,100.0\n\
                   2,0.250,0.0,0.0,0,0.0,0.0,4.0,40.0,0,9.1,20.0,100.0,0.0\n";
        let s = parse_series(csv);
        assert_eq!(s.t, vec![1.0, 1.25]);
        assert_eq!(s.full, vec![true, false]);
        assert_eq!(s.target_rows_per_s, Some(100.0));
        let ins = s.kind("insert").unwrap();
        assert_eq!(ins.rate, vec![100.0, 0.0]);
        assert!((ins.max_ms[0] - 5.3603).abs() < 1e-9);
        assert!(ins.max_ms[1].is_nan(), "no insert completed: no latency");
        assert!((ins.p99_ms[0] - 5.3603).abs() < 1e-9);
        assert!(ins.p99_ms[1].is_nan(), "no insert completed: no p99");
        let q = s.kind("query").unwrap();
        assert_eq!(q.rate, vec![134845.0, 4.0], "queries/s, not rows/s");
        assert!((q.p99_ms[0] - 0.0091).abs() < 1e-12);
    }
}
