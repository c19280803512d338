//! The fault suite (docs/reliability.md, "The fault suite"): the dbperf binary against managed
//! PostgreSQL and MariaDB servers that are killed, stopped or cut off, against hostile servers on
//! 127.0.0.1, with a result disk that fills up, and interrupted by Ctrl-C. Every case is bounded
//! in time and gives one row: what was expected, what happened, and four figures that must be
//! zero or bounded whatever the fault: steps lost, processes left, panics, time to fail.
//!
//! The rows are printed as a Markdown table; with FAULTS_TABLE=<path> the table is also written
//! there (docs/reliability.md carries one from a real run). FAULTS_ONLY=<text> runs only the
//! cases whose name contains it.

mod disk;
mod hostile;
mod launch;
mod reset;
mod servers;

use std::fs::File;
use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::os::fd::AsRawFd;
use std::path::{Path, PathBuf};
use std::process::{Child, Stdio};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::thread;
use std::time::{Duration, Instant};

use crate::common::*;
use dbperf::results::{self, Status};
use disk::*;
use hostile::*;
use launch::*;
use reset::*;
use servers::*;

// ---- rows ----

/// One case's line in the table, and what it checks.
struct Row {
    case: String,
    expected: String,
    observed: String,
    /// Steps that had ended before the fault whose files are missing or no longer read as ok,
    /// plus result files (JSON) that do not parse.
    steps_lost: usize,
    /// Server (or other) processes of the case still there after dbperf ended.
    processes_left: usize,
    /// "panicked" in dbperf's stderr.
    panics: usize,
    /// From the fault to the moment the case's outcome was there (see each case).
    time_to_fail: Duration,
    bound: Duration,
    /// What did not match `expected` (empty when it did).
    problems: Vec<String>,
    /// Why the case could not run here (the row is printed, not checked).
    skipped: Option<String>,
}

impl Row {
    fn new(case: &str, expected: &str, bound_s: u64) -> Row {
        Row {
            case: case.into(),
            expected: expected.into(),
            observed: String::new(),
            steps_lost: 0,
            processes_left: 0,
            panics: 0,
            time_to_fail: Duration::ZERO,
            bound: Duration::from_secs(bound_s),
            problems: Vec::new(),
            skipped: None,
        }
    }

    fn skip(mut self, why: &str) -> Row {
        self.skipped = Some(why.into());
        self
    }

    /// Records a mismatch with the expectation unless `ok`.
    fn check(&mut self, ok: bool, what: impl Into<String>) {
        if !ok {
            self.problems.push(what.into());
        }
    }

    fn invariants_hold(&self) -> Vec<String> {
        let mut bad = self.problems.clone();
        if self.steps_lost != 0 {
            bad.push(format!("{} steps lost", self.steps_lost));
        }
        if self.processes_left != 0 {
            bad.push(format!("{} processes left", self.processes_left));
        }
        if self.panics != 0 {
            bad.push(format!("{} panics", self.panics));
        }
        if self.time_to_fail >= self.bound {
            bad.push(format!(
                "took {:.1} s, over the bound of {} s",
                self.time_to_fail.as_secs_f64(),
                self.bound.as_secs()
            ));
        }
        bad
    }
}

fn table(rows: &[Row]) -> String {
    let mut t = String::from(
        "| case | expected | observed | steps lost | processes left | panics | time to fail (bound) |\n\
         |---|---|---|---|---|---|---|\n",
    );
    for r in rows {
        let cell = |s: &str| s.replace('|', "\\|").replace('\n', " ");
        let (observed, figures) = match &r.skipped {
            Some(why) => (format!("skipped: {why}"), "- | - | - | -".to_string()),
            None => (
                r.observed.clone(),
                format!(
                    "{} | {} | {} | {:.2} s (< {} s)",
                    r.steps_lost,
                    r.processes_left,
                    r.panics,
                    r.time_to_fail.as_secs_f64(),
                    r.bound.as_secs()
                ),
            ),
        };
        t.push_str(&format!(
            "| {} | {} | {} | {figures} |\n",
            cell(&r.case),
            cell(&r.expected),
            cell(&observed)
        ));
    }
    t
}

type Case = (&'static str, fn(&str) -> Row);

/// Every case: adding one is one function and one line here.
const CASES: &[Case] = &[
    ("server SIGKILLed mid-step (PostgreSQL)", |n| {
        killed(n, Engine::Postgres)
    }),
    ("server SIGKILLed mid-step (MariaDB)", |n| {
        killed(n, Engine::Mariadb)
    }),
    (
        "server SIGSTOPped past --statement-timeout (PostgreSQL)",
        |n| stopped(n, Engine::Postgres),
    ),
    (
        "server SIGSTOPped past --statement-timeout (MariaDB)",
        |n| stopped(n, Engine::Mariadb),
    ),
    (
        "backends SIGSTOPped, the server still answering (PostgreSQL)",
        backends_stopped,
    ),
    ("connection reset mid-step by a proxy (PostgreSQL)", |n| {
        reset(n, Engine::Postgres)
    }),
    ("connection reset mid-step by a proxy (MariaDB)", |n| {
        reset(n, Engine::Mariadb)
    }),
    ("disk full on --out (SQLite, two targets)", disk_full),
    ("dbperf SIGINT once (PostgreSQL)", sigint_once),
    ("dbperf SIGINT twice (PostgreSQL)", sigint_twice),
    (
        "dbperf SIGINT while the server is SIGSTOPped (PostgreSQL)",
        sigint_stopped,
    ),
    ("dbperf SIGTERM (PostgreSQL)", sigterm_once),
    (
        "dbperf SIGKILL, its server left to the kernel (PostgreSQL)",
        sigkill,
    ),
    ("hostile PostgreSQL: absurd message length", |n| {
        hostile(n, Hostile::AbsurdLength, Engine::Postgres)
    }),
    ("hostile PostgreSQL: truncated message", |n| {
        hostile(n, Hostile::Truncated, Engine::Postgres)
    }),
    ("hostile PostgreSQL: silence", |n| {
        hostile(n, Hostile::Silence, Engine::Postgres)
    }),
    ("hostile PostgreSQL: endless authentication", |n| {
        hostile(n, Hostile::EndlessAuth, Engine::Postgres)
    }),
    ("hostile MariaDB: endless 16 MiB packet pieces", |n| {
        hostile(n, Hostile::AbsurdLength, Engine::Mariadb)
    }),
    ("hostile MariaDB: truncated greeting", |n| {
        hostile(n, Hostile::Truncated, Engine::Mariadb)
    }),
    ("hostile MariaDB: silence", |n| {
        hostile(n, Hostile::Silence, Engine::Mariadb)
    }),
    ("hostile MariaDB: endless authentication", |n| {
        hostile(n, Hostile::EndlessAuth, Engine::Mariadb)
    }),
    ("hostile PostgreSQL: endless rows to a setup query", |n| {
        endless_rows(n, Engine::Postgres)
    }),
    ("hostile MariaDB: endless rows to a setup query", |n| {
        endless_rows(n, Engine::Mariadb)
    }),
    (
        "hostile PostgreSQL: a trickle during a benchmark statement",
        |n| trickle(n, Engine::Postgres),
    ),
    (
        "hostile MariaDB: a trickle during a benchmark statement",
        |n| trickle(n, Engine::Mariadb),
    ),
    ("external PostgreSQL target where nothing listens", |n| {
        hostile(n, Hostile::NothingListens, Engine::Postgres)
    }),
];

/// Cases at once: most of a case's time is waiting (a timeout, a deadline, a server starting),
/// and no more than this many servers start together on a 2-core machine.
const PARALLEL: usize = 4;

#[test]
fn fault_suite() {
    let only = std::env::var("FAULTS_ONLY").unwrap_or_default();
    let cases: Vec<(usize, Case)> = CASES
        .iter()
        .copied()
        .enumerate()
        .filter(|(_, (name, _))| name.contains(&only))
        .collect();
    let next = Arc::new(AtomicUsize::new(0));
    let rows: Arc<Mutex<Vec<(usize, Row)>>> = Arc::new(Mutex::new(Vec::new()));
    let cases = Arc::new(cases);
    let workers: Vec<_> = (0..PARALLEL)
        .map(|_| {
            let (next, rows, cases) = (next.clone(), rows.clone(), cases.clone());
            thread::spawn(move || loop {
                let i = next.fetch_add(1, Ordering::SeqCst);
                let Some(&(order, (name, case))) = cases.get(i) else {
                    return;
                };
                let t = Instant::now();
                let row = std::panic::catch_unwind(|| case(name)).unwrap_or_else(|p| {
                    let mut r = Row::new(name, "", 1);
                    let msg = p
                        .downcast_ref::<String>()
                        .cloned()
                        .or_else(|| p.downcast_ref::<&str>().map(|s| s.to_string()))
                        .unwrap_or_default();
                    r.observed = format!("the test itself failed: {msg}");
                    r.problems.push(r.observed.clone());
                    r
                });
                eprintln!("{name}: {:.1} s", t.elapsed().as_secs_f64());
                rows.lock().unwrap().push((order, row));
            })
        })
        .collect();
    for w in workers {
        w.join().unwrap();
    }
    let mut rows = std::mem::take(&mut *rows.lock().unwrap());
    rows.sort_by_key(|(order, _)| *order);
    let rows: Vec<Row> = rows.into_iter().map(|(_, r)| r).collect();
    let t = table(&rows);
    println!("{t}");
    if let Ok(path) = std::env::var("FAULTS_TABLE") {
        std::fs::write(&path, &t).unwrap_or_else(|e| panic!("{path}: {e}"));
    }
    let failed: Vec<String> = rows
        .iter()
        .filter(|r| r.skipped.is_none())
        .filter_map(|r| {
            let bad = r.invariants_hold();
            (!bad.is_empty()).then(|| format!("{}: {}", r.case, bad.join("; ")))
        })
        .collect();
    assert!(failed.is_empty(), "\n{}", failed.join("\n"));
}
