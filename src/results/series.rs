//! `steps/<step>.series.csv`: one row per second, streamed to a temporary file during the step
//! (memory stays constant in the run length) and renamed into place when the step ends.

use std::fs::{self, File};
use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};

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
        let mut out = BufWriter::new(super::create_fresh(&tmp)?);
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
        out.write_all(header.as_bytes())?;
        Ok(SeriesWriter {
            tmp,
            path,
            out,
            kinds,
            queries_per_op,
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

    pub fn finish(mut self) -> std::io::Result<PathBuf> {
        self.out.flush()?;
        self.out.get_ref().sync_all()?;
        fs::rename(&self.tmp, &self.path)?;
        Ok(self.path)
    }
}
