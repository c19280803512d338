//! The results history (docs/history.md): result directories imported into one database, a
//! SQLite file by default or a shared PostgreSQL database, and read back as series (one target's
//! step x operation x metric over time) for change-point detection. It reads result directories
//! and its database only; it never runs a benchmark. `page` draws the series and their change
//! points as a self-contained HTML page.

pub mod changes;
pub mod import;
pub mod location;
pub mod page;
pub mod store;

use std::path::{Path, PathBuf};

pub use changes::Change;
pub use location::{Location, DEFAULT_FILE};

use crate::error::BadInput;
use crate::report::number;
use import::{Imported, Measurement, RunRecord};
use store::{lit, lit_opt, Store};

/// Version of the tables below; a database from a newer dbperf is refused.
pub const SCHEMA: u32 = 1;

const DDL: &str = "
CREATE TABLE IF NOT EXISTS dbperf_history_meta (
    key TEXT PRIMARY KEY,
    value TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS dbperf_runs (
    run_id TEXT PRIMARY KEY,
    target TEXT NOT NULL,
    engine TEXT NOT NULL,
    version TEXT NOT NULL,
    build TEXT NOT NULL,
    config_name TEXT NOT NULL,
    host_fingerprint TEXT NOT NULL,
    hostname TEXT,
    suite TEXT NOT NULL,
    preset TEXT NOT NULL,
    campaign TEXT,
    round INTEGER,
    started_at TEXT NOT NULL,
    ended_at TEXT,
    status TEXT NOT NULL,
    tool_version TEXT NOT NULL,
    tool_revision TEXT NOT NULL,
    source TEXT NOT NULL,
    imported_at TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS dbperf_measurements (
    run_id TEXT NOT NULL REFERENCES dbperf_runs (run_id),
    target TEXT NOT NULL,
    step TEXT NOT NULL,
    op TEXT NOT NULL,
    metric TEXT NOT NULL,
    value DOUBLE PRECISION NOT NULL,
    unit TEXT NOT NULL,
    PRIMARY KEY (run_id, step, op, metric)
);
CREATE INDEX IF NOT EXISTS dbperf_measurements_series
    ON dbperf_measurements (target, step, op, metric);
";

pub struct History {
    store: Box<dyn Store>,
    pub location: Location,
}

/// What one `add` did.
#[derive(Debug, Default)]
pub struct Added {
    /// (target directory, target, measurements) imported now.
    pub imported: Vec<(PathBuf, String, usize)>,
    /// Target directories whose run was in the history already.
    pub already: Vec<(PathBuf, String)>,
    /// Steps left out, "<dir>: <step>: <why>".
    pub skipped: Vec<String>,
}

/// Which series to read; None = all.
#[derive(Debug, Clone, Default)]
pub struct Filter {
    pub target: Option<String>,
    pub step: Option<String>,
    pub op: Option<String>,
    pub metric: Option<String>,
}

/// One run's value in a series.
#[derive(Debug, Clone, PartialEq)]
pub struct Point {
    pub run_id: String,
    pub build: String,
    pub config_name: String,
    pub started_at: String,
    pub host_fingerprint: String,
    pub value: f64,
}

/// One target's step x operation x metric, oldest run first.
#[derive(Debug, Clone, PartialEq)]
pub struct Series {
    pub target: String,
    pub step: String,
    pub op: String,
    pub metric: String,
    pub unit: String,
    pub points: Vec<Point>,
}

impl History {
    /// Opens (and on first use creates) the history database; on PostgreSQL each statement
    /// must end within `deadline` of its start.
    pub fn open(location: Location, deadline: std::time::Duration) -> anyhow::Result<History> {
        if let Location::Sqlite(p) = &location {
            if p.is_dir() {
                return Err(BadInput(format!(
                    "--db {} is a directory; give a file (e.g. {}/{DEFAULT_FILE})",
                    p.display(),
                    p.display()
                ))
                .into());
            }
        }
        let mut store = store::open(&location, deadline)?;
        store.batch(DDL)?;
        store.exec(&format!(
            "INSERT INTO dbperf_history_meta (key, value) VALUES ('schema', '{SCHEMA}') \
             ON CONFLICT (key) DO NOTHING"
        ))?;
        let found = store.query("SELECT value FROM dbperf_history_meta WHERE key = 'schema'")?;
        let v: u32 = found
            .first()
            .and_then(|r| r.first().cloned().flatten())
            .and_then(|v| v.parse().ok())
            .unwrap_or(0);
        if v > SCHEMA {
            return Err(BadInput(format!(
                "the history database ({}) has schema {v}, newer than this dbperf understands ({SCHEMA}); upgrade dbperf",
                location.describe()
            ))
            .into());
        }
        Ok(History { store, location })
    }

    /// Imports target result directories (from `find_targets`); a run already in the history is
    /// left as it is.
    pub fn add(&mut self, targets: Vec<PathBuf>) -> anyhow::Result<Added> {
        let mut added = Added::default();
        for dir in targets {
            let im = import::read(&dir)?;
            for s in &im.skipped {
                added.skipped.push(format!("{}: {s}", dir.display()));
            }
            let name = im.run.target.clone();
            let n = im.rows.len();
            if self.insert(&im)? {
                added.imported.push((dir, name, n));
            } else {
                added.already.push((dir, name));
            }
        }
        Ok(added)
    }

    /// One transaction per run: its row and all its measurements, or nothing. false when the
    /// run was there already.
    fn insert(&mut self, im: &Imported) -> anyhow::Result<bool> {
        self.store.batch("BEGIN")?;
        let done = (|| -> anyhow::Result<bool> {
            if self.store.exec(&insert_run(&im.run))? == 0 {
                return Ok(false);
            }
            for chunk in im.rows.chunks(200) {
                self.store.exec(&insert_measurements(&im.run, chunk))?;
            }
            Ok(true)
        })();
        match done {
            Ok(true) => {
                self.store.batch("COMMIT")?;
                Ok(true)
            }
            Ok(false) => {
                self.store.batch("ROLLBACK")?;
                Ok(false)
            }
            Err(e) => {
                let _ = self.store.batch("ROLLBACK");
                Err(e)
            }
        }
    }

    /// Runs in the history.
    pub fn run_count(&mut self) -> anyhow::Result<u64> {
        let rows = self.store.query("SELECT count(*) FROM dbperf_runs")?;
        Ok(rows
            .first()
            .and_then(|r| r.first().cloned().flatten())
            .and_then(|v| v.parse().ok())
            .unwrap_or(0))
    }

    /// The series that pass `f`, each oldest run first (by start time, then run id).
    pub fn series(&mut self, f: &Filter) -> anyhow::Result<Vec<Series>> {
        let mut cond = Vec::new();
        for (col, v) in [
            ("m.target", &f.target),
            ("m.step", &f.step),
            ("m.op", &f.op),
            ("m.metric", &f.metric),
        ] {
            if let Some(v) = v {
                cond.push(format!("{col} = {}", lit(v)));
            }
        }
        let where_ = if cond.is_empty() {
            String::new()
        } else {
            format!("WHERE {}", cond.join(" AND "))
        };
        let rows = self.store.query(&format!(
            "SELECT m.target, m.step, m.op, m.metric, m.unit, m.value, r.run_id, r.build, \
                    r.config_name, r.started_at, r.host_fingerprint \
             FROM dbperf_measurements m JOIN dbperf_runs r ON r.run_id = m.run_id {where_} \
             ORDER BY m.target, m.step, m.op, m.metric, r.started_at, r.run_id"
        ))?;
        let mut out: Vec<Series> = Vec::new();
        for r in rows {
            let t = |i: usize| r.get(i).cloned().flatten().unwrap_or_default();
            // Import stores finite values only; a database edited by hand, or a PostgreSQL one
            // (which takes NaN), may hold others: they are left out like missing ones.
            let Some(value) = t(5).parse::<f64>().ok().filter(|v| v.is_finite()) else {
                continue;
            };
            let point = Point {
                run_id: t(6),
                build: t(7),
                config_name: t(8),
                started_at: t(9),
                host_fingerprint: t(10),
                value,
            };
            match out.last_mut() {
                Some(s)
                    if s.target == t(0) && s.step == t(1) && s.op == t(2) && s.metric == t(3) =>
                {
                    s.points.push(point)
                }
                _ => out.push(Series {
                    target: t(0),
                    step: t(1),
                    op: t(2),
                    metric: t(3),
                    unit: t(4),
                    points: vec![point],
                }),
            }
        }
        Ok(out)
    }
}

fn insert_run(r: &RunRecord) -> String {
    let now = time::OffsetDateTime::now_utc()
        .format(&time::format_description::well_known::Rfc3339)
        .unwrap_or_default();
    format!(
        "INSERT INTO dbperf_runs (run_id, target, engine, version, build, config_name, \
         host_fingerprint, hostname, suite, preset, campaign, round, started_at, ended_at, status, \
         tool_version, tool_revision, source, imported_at) VALUES ({}, {}, {}, {}, {}, {}, {}, {}, \
         {}, {}, {}, {}, {}, {}, {}, {}, {}, {}, {}) ON CONFLICT (run_id) DO NOTHING",
        lit(&r.run_id),
        lit(&r.target),
        lit(&r.engine),
        lit(&r.version),
        lit(&r.build),
        lit(&r.config_name),
        lit(&r.host_fingerprint),
        lit_opt(r.hostname.as_deref()),
        lit(&r.suite),
        lit(&r.preset),
        lit_opt(r.campaign.as_deref()),
        r.round.map_or("NULL".into(), |v| v.to_string()),
        lit(&r.started_at),
        lit_opt(r.ended_at.as_deref()),
        lit(&r.status),
        lit(&r.tool_version),
        lit(&r.tool_revision),
        lit(&r.source),
        lit(&now),
    )
}

fn insert_measurements(r: &RunRecord, rows: &[Measurement]) -> String {
    let values: Vec<String> = rows
        .iter()
        .map(|m| {
            format!(
                "({}, {}, {}, {}, {}, {}, {})",
                lit(&r.run_id),
                lit(&r.target),
                lit(&m.step),
                lit(&m.op),
                lit(&m.metric),
                number::exact(m.value),
                lit(&m.unit)
            )
        })
        .collect();
    format!(
        "INSERT INTO dbperf_measurements (run_id, target, step, op, metric, value, unit) VALUES {}",
        values.join(", ")
    )
}

/// Every target result directory in or under each of `dirs`; bad input when one holds none.
/// Called before the database is opened, so a mistyped directory creates no database.
pub fn find_targets(dirs: &[PathBuf]) -> anyhow::Result<Vec<PathBuf>> {
    let mut targets = Vec::new();
    for d in dirs {
        targets.extend(import::target_dirs(d)?);
    }
    Ok(targets)
}

/// The default location: `dbperf-history.sqlite` in the current directory.
pub fn default_location() -> Location {
    Location::Sqlite(Path::new(DEFAULT_FILE).to_path_buf())
}
