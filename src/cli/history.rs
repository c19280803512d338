//! `dbperf history add|changes|report`: import result directories into a history database, find
//! where each series changed, and draw the series with their changes (docs/history.md).

use std::io::Read;
use std::path::PathBuf;

use clap::{Args, Subcommand, ValueEnum};

use crate::analysis::changepoint::{self, Options};
use crate::error::bad_input;
use crate::history::{self, changes, page, Filter, History, Location, Series};

#[derive(Subcommand, Debug)]
pub enum HistoryCommand {
    /// Import result directories (a run's `--out` directory or one target's directory) into
    /// the history database. A run imported before is left as it is.
    Add(AddArgs),
    /// Find change points in each series (target x step x operation x metric over time):
    /// where it moved, between which builds, by how much, and how sure.
    Changes(ChangesArgs),
    /// Write DIR/index.html, a self-contained page with a chart per series (change points
    /// marked, segment means drawn) and a table of each series' changes, and DIR/changes.json
    /// (as `changes --format json`).
    Report(ReportArgs),
    /// Change points of series read from standard input, one series a line (numbers separated
    /// by commas, spaces or tabs; at most 64 MiB in all); prints the 0-based indices of each
    /// line's changes, comma-separated. For scripts and benchmarks.
    Detect(DetectArgs),
}

#[derive(Args, Debug)]
pub struct DbArg {
    /// The history database: a SQLite file, or a PostgreSQL URL
    /// (postgres://USER@HOST:PORT/DATABASE; the password from PGPASSWORD)
    /// [default: ./dbperf-history.sqlite].
    #[arg(long, value_name = "PATH|URL")]
    pub db: Option<String>,
    /// Seconds a statement on a PostgreSQL history may take from its start, however the server
    /// sends its bytes (and the server's own statement_timeout); past it the command fails.
    #[arg(long, default_value_t = 60, value_name = "SECONDS",
          value_parser = clap::value_parser!(u64).range(1..=86_400))]
    pub statement_timeout: u64,
}

impl DbArg {
    fn deadline(&self) -> std::time::Duration {
        std::time::Duration::from_secs(self.statement_timeout)
    }
}

#[derive(Args, Debug)]
pub struct AddArgs {
    /// Result directories.
    #[arg(value_name = "DIR", required = true)]
    pub dirs: Vec<PathBuf>,
    #[command(flatten)]
    pub db: DbArg,
}

#[derive(Clone, Copy, Debug, ValueEnum, PartialEq)]
pub enum Format {
    Text,
    Json,
    Csv,
}

/// The largest --min-runs: far beyond any history, and small enough that no sum of it wraps.
const MAX_MIN_RUNS: usize = 1_000_000;

#[derive(Args, Debug, Clone)]
pub struct DetectorArgs {
    /// A change is reported when its p-value is at most this (docs/history.md, "Method").
    #[arg(long, default_value_t = 0.005, value_name = "P")]
    pub alpha: f64,
    /// No longer used: the detector's p-values come from its tests' limiting laws, not from
    /// permutations. Given, it is refused with a sentence rather than ignored.
    #[arg(long, value_name = "N", hide = true)]
    pub permutations: Option<u64>,
    /// Fewest runs on either side of a change.
    #[arg(long, default_value_t = 3, value_name = "N")]
    pub min_runs: usize,
}

impl DetectorArgs {
    fn options(&self) -> anyhow::Result<Options> {
        if !(self.alpha > 0.0 && self.alpha < 1.0) {
            return bad_input(format!(
                "--alpha {}: give a p-value between 0 and 1",
                self.alpha
            ));
        }
        if self.permutations.is_some() {
            return bad_input(
                "--permutations: the detector no longer draws permutations (its p-values come \
                 from its tests' limiting laws, docs/history.md); leave the option out",
            );
        }
        if !(2..=MAX_MIN_RUNS).contains(&self.min_runs) {
            return bad_input(format!(
                "--min-runs {}: give 2 (a side needs a mean and a spread) to {MAX_MIN_RUNS}",
                self.min_runs
            ));
        }
        Ok(Options {
            alpha: self.alpha,
            min_size: self.min_runs,
        })
    }
}

/// Which series to read and how to find their changes: shared by `changes` and `report`.
#[derive(Args, Debug)]
pub struct SeriesArgs {
    /// Only this target's series.
    #[arg(long, value_name = "TARGET")]
    pub target: Option<String>,
    /// Only this step's series (l.i0, qr100, point-query_range=100, ...).
    #[arg(long, value_name = "STEP")]
    pub step: Option<String>,
    /// Only this operation type's series (insert, query, ...); `-` for figures of the whole
    /// step (headline, CPU per op).
    #[arg(long, value_name = "OP")]
    pub op: Option<String>,
    /// Only this metric (headline, ops_per_s, p99_us, cv_per_s, ...; docs/history.md).
    #[arg(long, value_name = "METRIC")]
    pub metric: Option<String>,
    /// Leave out changes smaller than this, percent of the mean before.
    #[arg(long, default_value_t = 0.0, value_name = "PCT")]
    pub min_change: f64,
    #[command(flatten)]
    pub detector: DetectorArgs,
    #[command(flatten)]
    pub db: DbArg,
}

#[derive(Args, Debug)]
pub struct ChangesArgs {
    #[arg(long, value_enum, default_value_t = Format::Text)]
    pub format: Format,
    #[command(flatten)]
    pub series: SeriesArgs,
}

#[derive(Args, Debug)]
pub struct ReportArgs {
    /// Directory for index.html and changes.json: new, empty, or one an earlier `history
    /// report` wrote (its two files are replaced).
    #[arg(long, value_name = "DIR")]
    pub out: PathBuf,
    #[command(flatten)]
    pub series: SeriesArgs,
}

#[derive(Args, Debug)]
pub struct DetectArgs {
    /// Read the series from standard input (the only source).
    #[arg(long, required = true)]
    pub stdin: bool,
    #[command(flatten)]
    pub detector: DetectorArgs,
}

fn location(db: &DbArg) -> anyhow::Result<Location> {
    match &db.db {
        Some(s) => Location::parse(s),
        None => Ok(history::default_location()),
    }
}

pub fn run(cmd: HistoryCommand) -> anyhow::Result<i32> {
    match cmd {
        HistoryCommand::Add(a) => add(a),
        HistoryCommand::Changes(a) => changes_cmd(a),
        HistoryCommand::Report(a) => report(a),
        HistoryCommand::Detect(a) => detect(a),
    }
}

fn add(a: AddArgs) -> anyhow::Result<i32> {
    let loc = location(&a.db)?;
    let targets = history::find_targets(&a.dirs)?;
    let mut h = History::open(loc, a.db.deadline())?;
    let added = h.add(targets)?;
    for (dir, target, n) in &added.imported {
        out!("imported  {target}  {n} measurements  ({})", dir.display());
    }
    for (dir, target) in &added.already {
        out!("already   {target}  ({})", dir.display());
    }
    for s in &added.skipped {
        out!("skipped   {s}");
    }
    out!(
        "{} run(s) imported, {} already there; {} run(s) in {}",
        added.imported.len(),
        added.already.len(),
        h.run_count()?,
        h.location.describe()
    );
    Ok(super::EXIT_OK)
}

/// What `changes` and `report` read, checked: bad input before anything is opened.
struct Checked {
    opts: Options,
    min_change: f64,
    location: Location,
    deadline: std::time::Duration,
    filter: Filter,
}

fn check(a: SeriesArgs) -> anyhow::Result<Checked> {
    let opts = a.detector.options()?;
    if !(a.min_change >= 0.0 && a.min_change.is_finite()) {
        return bad_input(format!(
            "--min-change {}: give a percentage, 0 or more",
            a.min_change
        ));
    }
    let location = location(&a.db)?;
    if let Location::Sqlite(p) = &location {
        if !p.is_file() {
            return bad_input(format!(
                "there is no history database at {}: import results first with `dbperf history add DIR`",
                p.display()
            ));
        }
    }
    Ok(Checked {
        opts,
        min_change: a.min_change / 100.0,
        location,
        deadline: a.db.deadline(),
        filter: Filter {
            target: a.target,
            step: a.step,
            op: a.op.map(|o| if o == "-" { String::new() } else { o }),
            metric: a.metric,
        },
    })
}

/// The series that pass the filter and their changes.
fn find(c: &Checked) -> anyhow::Result<(String, Vec<Series>, Vec<changes::Change>)> {
    let mut h = History::open(c.location.clone(), c.deadline)?;
    let series = h.series(&c.filter)?;
    let found = changes::find(&series, &c.opts, c.min_change);
    for name in &found.cut_short {
        say!("{name}: {CUT_SHORT}");
    }
    Ok((h.location.describe(), series, found.changes))
}

fn report(a: ReportArgs) -> anyhow::Result<i32> {
    let c = check(a.series)?;
    page::check_out(&a.out)?;
    let (history, series, found) = find(&c)?;
    let written = page::write(
        &a.out,
        &page::Page {
            series: &series,
            changes: &found,
            history,
            filter: &c.filter,
            opts: &c.opts,
            min_change: c.min_change,
        },
    )?;
    for p in &written {
        out!("{}", p.display());
    }
    if series.is_empty() {
        out!("no series match (dbperf history add imports results); the page says so");
    } else {
        out!("{} change(s) in {} series", found.len(), series.len());
    }
    Ok(super::EXIT_OK)
}

fn changes_cmd(a: ChangesArgs) -> anyhow::Result<i32> {
    let c = check(a.series)?;
    let opts = c.opts;
    let (_, series, found) = find(&c)?;
    match a.format {
        Format::Json => write_stdout(&changes::to_json(&found)),
        Format::Csv => write_stdout(&changes::to_csv(&found)),
        Format::Text => {
            if series.is_empty() {
                out!("no series match (dbperf history add imports results)");
                return Ok(super::EXIT_OK);
            }
            for c in &found {
                out!(
                    "{}: {} at run {} of {} ({}); {} {} -> {} {}",
                    changes::series_name(c),
                    changes::size_text(c),
                    c.index + 1,
                    c.runs,
                    changes::p_text(c.p_value),
                    crate::report::number::series_value(c.mean_before),
                    c.unit,
                    crate::report::number::series_value(c.mean_after),
                    c.unit,
                );
                out!(
                    "    before: {} ({}, run {})",
                    c.build_before,
                    c.started_before,
                    &c.run_before[..c.run_before.len().min(12)]
                );
                out!(
                    "    after:  {} ({}, run {}){}{}",
                    c.build_after,
                    c.started_after,
                    &c.run_after[..c.run_after.len().min(12)],
                    if c.host_changed {
                        "; the host changed"
                    } else {
                        ""
                    },
                    if c.config_changed {
                        "; the config changed"
                    } else {
                        ""
                    },
                );
            }
            out!(
                "{} change(s) in {} series (CUSUM binary segmentation allowing for autocorrelation \
                 and trends, alpha {}; docs/history.md)",
                found.len(),
                series.len(),
                opts.alpha
            );
        }
    }
    Ok(super::EXIT_OK)
}

/// All of `text` to stdout; a closed stdout is not an error (see `out!`).
fn write_stdout(text: &str) {
    use std::io::Write;
    let _ = std::io::stdout().lock().write_all(text.as_bytes());
}

/// Series from standard input, bounded: an input longer than this (all lines) is refused.
const DETECT_MAX_BYTES: u64 = 64 << 20;

fn detect(a: DetectArgs) -> anyhow::Result<i32> {
    let opts = a.detector.options()?;
    let mut text = String::new();
    std::io::stdin()
        .take(DETECT_MAX_BYTES + 1)
        .read_to_string(&mut text)
        .or_else(|e| bad_input(format!("standard input is not text: {e}")))?;
    if text.len() as u64 > DETECT_MAX_BYTES {
        return bad_input("standard input is over 64 MiB");
    }
    // The whole batch is read before the first answer: a bad line is refused with nothing
    // printed, not after the answers of the lines above it.
    let mut batch = Vec::new();
    for (n, line) in text.lines().enumerate() {
        batch.push(series_of(line).map_err(|tok| {
            crate::error::BadInput(format!(
                "line {}: {} is not a number",
                n + 1,
                crate::untrusted::shown(tok)
            ))
        })?);
    }
    for (n, x) in batch.iter().enumerate() {
        let found = changepoint::detect(x, &opts);
        if !found.complete {
            say!("line {}: {CUT_SHORT}", n + 1);
        }
        let idx: Vec<String> = found.changes.iter().map(|c| c.index.to_string()).collect();
        out!("{}", idx.join(","));
    }
    Ok(super::EXIT_OK)
}

/// What is said of a series whose change-point search stopped at its budget of work.
const CUT_SHORT: &str = "the change-point search stopped at its budget of work \
    (docs/history.md, \"Method\", item 9): changes in the segments it did not reach are missing";

/// The numbers of one line (separated by commas, spaces or tabs), or the first token that is
/// not a finite number.
fn series_of(line: &str) -> Result<Vec<f64>, &str> {
    line.split([',', ' ', '\t'])
        .filter(|t| !t.is_empty())
        .map(|tok| match tok.parse::<f64>() {
            Ok(v) if v.is_finite() => Ok(v),
            _ => Err(tok),
        })
        .collect()
}
