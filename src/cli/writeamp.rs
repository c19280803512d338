//! `dbperf writeamp`: the write-amplification figures of finished steps, or of counters a DBA
//! collected by hand, with what they mean (docs/metrics.md, "Write amplification").

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use clap::Args;
use serde::Deserialize;

use crate::engines::{Engine, Family};
use crate::error::bad_input;
use crate::metrics::writeamp::{analyse, parse_status_text, WriteAmp, STATUS_TEXT_MAX};

#[derive(Args, Debug)]
pub struct WriteampArgs {
    /// A result directory (`<out>/<target>`), one step file (`steps/<step>.json`), or a JSON file
    /// of counters: {"engine": "mysql", "delta": {"innodb_os_log_written": ...}} or with
    /// "start" and "end" instead of "delta", and optionally "device_write_bytes" and
    /// "innodb_page_size"
    #[arg(value_name = "PATH", required_unless_present = "start")]
    pub path: Option<PathBuf>,

    /// The text of SHOW GLOBAL STATUS before the interval, as the mysql/mariadb client prints
    /// it (boxed table, -B tab-separated, or \G); with --end and --engine.
    #[arg(long, value_name = "FILE", requires_all = ["end", "engine"], conflicts_with = "path")]
    pub start: Option<PathBuf>,

    /// The text of SHOW GLOBAL STATUS after the interval.
    #[arg(long, value_name = "FILE", requires = "start")]
    pub end: Option<PathBuf>,

    /// mariadb or mysql, for --start/--end.
    #[arg(long, value_name = "ENGINE", requires = "start")]
    pub engine: Option<String>,

    /// Bytes the data device wrote over the interval (iostat's kB_wrtn × 1024), for --start/--end.
    #[arg(long, value_name = "BYTES", requires = "start")]
    pub device_write_bytes: Option<f64>,
}

/// Counters given by hand.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct CounterFile {
    engine: Engine,
    #[serde(default)]
    delta: Option<BTreeMap<String, f64>>,
    #[serde(default)]
    start: Option<BTreeMap<String, f64>>,
    #[serde(default)]
    end: Option<BTreeMap<String, f64>>,
    #[serde(default)]
    device_write_bytes: Option<f64>,
    /// InnoDB's page size in bytes (SELECT @@innodb_page_size); also read from "end".
    #[serde(default)]
    innodb_page_size: Option<f64>,
}

/// Counters from two SHOW GLOBAL STATUS texts.
fn status_texts(a: &WriteampArgs, start: &Path) -> anyhow::Result<i32> {
    let name = a.engine.as_deref().unwrap_or_default();
    let Some(engine) = Engine::parse(name).filter(|e| e.family() == Family::MySql) else {
        return bad_input(format!(
            "--engine {name}: SHOW GLOBAL STATUS text is MariaDB's or MySQL's ({})",
            Engine::names(
                Engine::listed().filter(|e| e.family() == Family::MySql),
                " or "
            )
        ));
    };
    let read = |p: &Path| -> anyhow::Result<BTreeMap<String, f64>> {
        let text = read_bounded(p, STATUS_TEXT_MAX as u64, "a SHOW GLOBAL STATUS text")?;
        parse_status_text(&text)
            .map_err(|e| crate::error::BadInput(format!("{} {e}", p.display())).into())
    };
    let end_path = a.end.as_deref().expect("clap requires --end with --start");
    let (s, e) = (read(start)?, read(end_path)?);
    let delta: BTreeMap<String, f64> = e
        .iter()
        .filter_map(|(k, v)| s.get(k).map(|x| (k.clone(), v - x)))
        .collect();
    if let Some((k, _)) = delta
        .iter()
        .find(|(k, d)| **d < 0.0 && k.as_str() != "uptime")
    {
        return bad_input(format!(
            "{k} went down between {} and {}: the files are swapped, or the server restarted in between",
            start.display(),
            end_path.display()
        ));
    }
    let page = e.get("innodb_page_size").copied();
    print(
        engine.name(),
        &analyse(engine, &delta, a.device_write_bytes, page),
    );
    Ok(super::EXIT_OK)
}

/// A counters JSON or step file larger than this is refused (a step file with its histograms is
/// well under a MiB).
const COUNTERS_JSON_MAX: u64 = 64 << 20;

/// The file's text through `untrusted`: a regular file (a FIFO would hang the read, /dev/zero
/// never end it) of at most `max` bytes, checked before and while reading.
fn read_bounded(p: &Path, max: u64, what: &'static str) -> anyhow::Result<String> {
    crate::untrusted::read_text(
        p,
        crate::untrusted::Limit {
            max,
            what,
            links: crate::untrusted::Links::Follow,
        },
    )
}

/// Every step of a result directory that recorded DBMS counters.
fn result_dir(p: &Path) -> anyhow::Result<i32> {
    let run = crate::results::read_run(p).map_err(|e| {
        crate::error::BadInput(format!(
            "{} is not a dbperf result directory: {e:#}",
            p.display()
        ))
    })?;
    let mut any = false;
    for s in &run.steps_planned {
        if !crate::results::present(&p.join("steps").join(format!("{s}.json"))) {
            continue;
        }
        let step = crate::results::read_step(p, s)?;
        if let Some(c) = &step.dbms {
            any = true;
            print(&format!("{} {s}", run.target.name), &c.write_amplification);
        }
    }
    if !any {
        return bad_input(format!(
            "{} has no step with DBMS counters (results from before dbperf recorded them)",
            p.display()
        ));
    }
    Ok(super::EXIT_OK)
}

/// Counters given by hand (`c`, read from `p`): their deltas, given or from start and end,
/// keys in lower case, and the page size given or among the end's counters.
fn counter_file(p: &Path, c: CounterFile) -> anyhow::Result<i32> {
    let page_size = c.innodb_page_size.or_else(|| {
        c.end.as_ref().and_then(|e| {
            e.iter()
                .find(|(k, _)| {
                    k.eq_ignore_ascii_case("innodb_page_size")
                        || k.eq_ignore_ascii_case("block_size")
                })
                .map(|(_, v)| *v)
        })
    });
    let delta = match (c.delta, c.start, c.end) {
        (Some(d), None, None) => d,
        (None, Some(s), Some(e)) => e
            .iter()
            .filter_map(|(k, v)| s.get(k).map(|x| (k.to_ascii_lowercase(), v - x)))
            .collect(),
        _ => {
            return bad_input(format!(
                "{}: give either \"delta\" or both \"start\" and \"end\"",
                p.display()
            ))
        }
    };
    let delta = delta
        .into_iter()
        .map(|(k, v)| (k.to_ascii_lowercase(), v))
        .collect();
    print(
        c.engine.name(),
        &analyse(c.engine, &delta, c.device_write_bytes, page_size),
    );
    Ok(super::EXIT_OK)
}

pub fn run(a: WriteampArgs) -> anyhow::Result<i32> {
    if let Some(start) = a.start.as_deref() {
        return status_texts(&a, start);
    }
    let p = a
        .path
        .as_deref()
        .expect("clap requires PATH without --start");
    if p.is_dir() {
        return result_dir(p);
    }
    let text = read_bounded(p, COUNTERS_JSON_MAX, "a step file or a counters file")?;
    let v: serde_json::Value = serde_json::from_str(&text).map_err(|e| {
        crate::error::BadInput(format!(
            "{} is not JSON: {}",
            p.display(),
            crate::untrusted::json_error(&e)
        ))
    })?;
    if v.get("step").is_some() && v.get("schema").is_some() {
        return step_file(p);
    }
    let c: CounterFile = serde_json::from_value(v).map_err(|e| {
        crate::error::BadInput(format!(
            "{} is neither a step file nor counters {{\"engine\", \"delta\" or \"start\"+\"end\"}}: {}",
            p.display(),
            crate::untrusted::json_error(&e)
        ))
    })?;
    counter_file(p, c)
}

fn step_file(p: &Path) -> anyhow::Result<i32> {
    // Through the results gate: a file from a newer dbperf is refused, not misread.
    let step = crate::results::read_step_file(p)?;
    match &step.dbms {
        Some(c) => {
            print(&step.step, &c.write_amplification);
            Ok(super::EXIT_OK)
        }
        None => bad_input(format!("{} has no DBMS counters", p.display())),
    }
}

fn mb(b: Option<f64>) -> String {
    b.map_or("-".into(), |b| format!("{:.1} MiB", b / 1048576.0))
}

fn print(label: &str, w: &WriteAmp) {
    out!("{label}");
    out!(
        "  DBMS log written     {}{}",
        mb(w.log_bytes),
        w.log_counter
            .as_deref()
            .map(|c| format!("  ({c})"))
            .unwrap_or_default()
    );
    out!(
        "  DBMS pages written   {}{}",
        mb(w.data_bytes),
        w.data_counter
            .as_deref()
            .map(|c| format!("  ({c})"))
            .unwrap_or_default()
    );
    out!("  device wrote         {}", mb(w.device_write_bytes));
    out!(
        "  amplification        {}",
        w.amplification.map_or("-".into(), |a| format!(
            "{a:.2}x (device / DBMS log + pages{})",
            if w.binlog_bytes.is_some() {
                " + binlog"
            } else {
                ""
            }
        ))
    );
    out!(
        "  log syncs            {}",
        w.log_syncs.map_or("-".into(), |s| format!(
            "{s:.0}, {:.0} bytes each on average",
            w.log_bytes_per_sync.unwrap_or(0.0)
        ))
    );
    out!(
        "  padded log estimate  {}",
        match (w.padded_log_bytes, w.padding_factor) {
            (Some(p), Some(f)) => format!("{} ({f:.2}x the log counter)", mb(Some(p))),
            _ => "-".into(),
        }
    );
    if let Some(b) = w.binlog_bytes {
        out!(
            "  binlog written       {}{}",
            mb(Some(b)),
            match (w.binlog_syncs, w.binlog_bytes_per_sync) {
                (Some(s), Some(p)) => format!(", {s:.0} group commits, {p:.0} bytes each"),
                _ => String::new(),
            }
        );
    }
    for n in &w.notes {
        out!("  note: {n}");
    }
}
