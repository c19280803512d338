//! `dbperf report`: result directories in, report.html / report.md (and CSV, JSON) out.

use std::path::{Path, PathBuf};

use clap::{Args, ValueEnum};

use super::{EXIT_FAILED, EXIT_OK};
use crate::error::bad_input;
use crate::report::{self, rules::Thresholds, Format, Options};

#[derive(Clone, Copy, Debug, ValueEnum, PartialEq)]
pub enum FormatArg {
    /// report.html: one self-contained page with tables and charts.
    Html,
    /// report.md: the tables in Markdown.
    #[value(alias = "markdown")]
    Md,
    /// report.csv: every table cell as one line.
    Csv,
    /// report.json: every table.
    Json,
}

#[derive(Args, Debug)]
pub struct ReportArgs {
    /// Result directories: a run's --out directory (every target in it, in the order they ran)
    /// or one target's directory in it. Rows follow the order given.
    #[arg(required = true, value_name = "RESULT_DIR")]
    pub inputs: Vec<PathBuf>,

    /// Target every relative number is against (its name, e.g. sqlite.wal-normal)
    /// [default: the first input].
    #[arg(long, value_name = "TARGET")]
    pub base: Option<String>,

    /// Directory to write the report files into.
    #[arg(long, value_name = "DIR", default_value = ".")]
    pub out: PathBuf,

    /// Output formats, comma-separated.
    #[arg(long, value_enum, value_delimiter = ',', default_value = "html,md")]
    pub format: Vec<FormatArg>,

    /// Relative values at or below LOW and at or above HIGH are highlighted.
    #[arg(long, value_name = "LOW,HIGH", default_value = "0.95,1.05")]
    pub thresholds: String,

    /// Flag a per-second rate whose coefficient of variation exceeds this many percent.
    #[arg(long, value_name = "PCT", default_value_t = 10.0)]
    pub cv_flag: f64,

    /// Title of the report [default: the targets compared].
    #[arg(long)]
    pub title: Option<String>,

    /// Report results from hosts with different hardware together (shards of a campaign on
    /// unlike machines); each row is then labelled with its host. Refused otherwise.
    #[arg(long)]
    pub allow_mixed_hosts: bool,

    /// sysbench: show the `.pre` runs, which the original's report of the current run order
    /// leaves out (runs of the 2024 order always show them).
    #[arg(long)]
    pub show_pre: bool,

    /// Write the report only when the inputs are a whole campaign: every shard's directory
    /// given and every cell ended. Otherwise say what is missing, write nothing and exit 1
    /// (for jobs that must not publish half a campaign).
    #[arg(long)]
    pub complete: bool,
}

fn thresholds(s: &str) -> anyhow::Result<Thresholds> {
    let parts: Vec<&str> = s.split(',').map(str::trim).collect();
    let parsed: Vec<Option<f64>> = parts.iter().map(|p| p.parse::<f64>().ok()).collect();
    match parsed.as_slice() {
        [Some(low), Some(high)] if *low > 0.0 && *low < 1.0 && *high > 1.0 && high.is_finite() => {
            Ok(Thresholds {
                low: *low,
                high: *high,
            })
        }
        _ => bad_input(format!(
            "--thresholds {s} is not LOW,HIGH with 0 < LOW < 1 < HIGH (e.g. 0.95,1.05)"
        )),
    }
}

pub fn run(a: ReportArgs) -> anyhow::Result<i32> {
    let t = thresholds(&a.thresholds)?;
    if !(a.cv_flag.is_finite() && a.cv_flag >= 0.0) {
        return bad_input(format!("--cv-flag {} is not a percentage", a.cv_flag));
    }
    let mut formats: Vec<Format> = Vec::new();
    for f in &a.format {
        let f = match f {
            FormatArg::Html => Format::Html,
            FormatArg::Md => Format::Markdown,
            FormatArg::Csv => Format::Csv,
            FormatArg::Json => Format::Json,
        };
        if !formats.contains(&f) {
            formats.push(f);
        }
    }
    let opts = Options {
        base: a.base,
        thresholds: t,
        cv_flag_pct: a.cv_flag,
        title: a.title,
        allow_mixed_hosts: a.allow_mixed_hosts,
        show_pre: a.show_pre,
        complete: a.complete,
    };
    let g = report::generate(&a.inputs, &a.out, &formats, &opts)?;
    for x in &g.incomplete {
        say!("incomplete: {}", crate::untrusted::printable(x));
    }
    for p in &g.files {
        out!("{}", p.display());
    }
    if a.complete && !g.incomplete.is_empty() {
        say!("no report written: --complete, and the campaign is not complete");
        return Ok(EXIT_FAILED);
    }
    Ok(EXIT_OK)
}

/// The end of `dbperf run`: a report of the targets it just ran, into its result directory. A
/// report that cannot be written is a warning; the run's outcome stands.
pub fn after_run(out: &Path, dirs: &[PathBuf], base: Option<&str>) {
    match report::after_run(out, dirs, base) {
        Ok(files) => {
            if let Some(f) = files.first() {
                out!("Report: {}", f.display());
            }
        }
        Err(e) => say!("warning: no report was written: {e:#}"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn thresholds_parse_and_refuse_nonsense() {
        assert_eq!(
            thresholds("0.9,1.1").unwrap(),
            Thresholds {
                low: 0.9,
                high: 1.1
            }
        );
        for bad in ["1.05,0.95", "0.95", "a,b", "0,1.05", "0.95,1", "0.95,inf"] {
            assert!(thresholds(bad).is_err(), "{bad}");
        }
    }
}
