//! The "In memory or IO-bound" section: per target and step, the disk reads per operation, KB
//! per read, the DBMS cache's hit ratio, the data size and the memory cap, and the verdict
//! `analysis::residency` draws from them (docs/metrics.md). Shown when a run was capped
//! (`--server-memory`), used an io-bound preset, or a step read from disk; with the warnings for
//! a capped or io-bound step that was served from memory all the same.

use super::model::{Better, Block, Cell, Column, Kind, Row, Section, Table};
use super::number;
use super::target::{StepView, TargetResult};
use crate::analysis::residency::{classify, Residency};

/// Steps that append rows in key order: they read next to nothing from disk however little
/// memory the server has, so "served from memory" says nothing about them.
const APPENDING_LOADS: [&str; 2] = ["l.i0", "load"];

/// The memory cap of a result's server in bytes, when it had one.
fn cap_bytes(t: &TargetResult) -> Option<u64> {
    t.run
        .target
        .server
        .as_ref()?
        .memory_cap
        .as_ref()
        .map(|c| c.bytes)
}

/// Whether the result was meant to be IO-bound: capped, or an io-bound preset.
fn meant_io_bound(t: &TargetResult) -> bool {
    cap_bytes(t).is_some() || t.run.preset.starts_with("io-bound")
}

/// The data's size in GiB.
fn data_gib(s: &StepView) -> Option<f64> {
    s.residency.data_bytes.map(|b| b / (1u64 << 30) as f64)
}

fn verdict(s: &StepView) -> Residency {
    if s.ok() {
        classify(&s.residency)
    } else {
        Residency::Unknown
    }
}

pub fn section(all: &[TargetResult]) -> Option<Section> {
    let shown = all.iter().any(|t| {
        meant_io_bound(t)
            || t.steps
                .iter()
                .any(|s| matches!(verdict(s), Residency::IoBound | Residency::SomeIo))
    });
    if !shown {
        return None;
    }
    let col = |k: &str, l: &str, u: &str, h: &str| Column::new(k, l, u, h, Better::Neither);
    let columns = vec![
        col("residency", "verdict", "", "IO-bound from 0.1 disk reads per operation or when the step read its data's whole size from disk in reads of 64 KB or more, in memory below 0.01 reads per operation and 1% of the data, some IO between; unknown without device figures or under 1000 operations (docs/metrics.md)"),
        col("reads_per_op", "reads/op", "", "reads of the devices under the data per operation"),
        col("kb_per_read", "KB/read", "KB", "KB read per device read"),
        col("read_pct", "read", "% of data", "what the step read from those devices over the data's size"),
        col("hit_pct", "cache hits", "%", "hits of the DBMS's cache (shared_buffers, buffer pool, block cache) over its lookups; a miss is a read from the OS, from disk or the page cache"),
        col("data_gib", "data", "GiB", "the data's size at the end of the step (as the DBMS reports it, else its directory)"),
        col("cap_mib", "cap", "MiB", "--server-memory: what the server could hold in memory, page cache included"),
    ];
    // Every figure here is a count or a size: a negative one (a tampered file) is no figure.
    let num = |v: Option<f64>, why: &str| match v.filter(|x| x.is_finite() && *x >= 0.0) {
        Some(x) => Cell::num(x, number::sig(x)),
        None => Cell::gap(why),
    };
    let mut rows = Vec::new();
    for (i, t) in all.iter().enumerate() {
        let cap = cap_bytes(t).map(|b| (b >> 20) as f64);
        for s in &t.steps {
            let e = &s.residency;
            rows.push(Row {
                label: format!("{} · {}", t.shown_name(), s.name),
                target: Some(i),
                cells: vec![
                    Cell::text(verdict(s).label()),
                    num(e.reads_per_op, "no device figures"),
                    num(e.kb_per_read(), "no reads"),
                    num(e.read_share().map(|x| x * 100.0), "not measured"),
                    num(
                        e.cache.and_then(|c| c.ratio()).map(|r| r * 100.0),
                        "no cache counters",
                    ),
                    num(data_gib(s), "not measured"),
                    num(cap, "uncapped"),
                ],
                note: None,
            });
        }
    }
    let mut sec = Section::new("residency", "In memory or IO-bound");
    sec.blocks.push(Block::Text(
        "Whether each step ran from memory or waited for the disk, by measurement: the disk \
         reads per operation decide, the cache hit ratio, data size and cap say why. A \
         PostgreSQL cache miss may be served by the page cache: only disk reads make a step \
         IO-bound."
            .into(),
    ));
    sec.blocks.push(Block::Table(Table {
        id: "residency".into(),
        title: "In memory or IO-bound, per step".into(),
        kind: Kind::Info,
        suite: "",
        step: None,
        op: None,
        row_header: "target · step".into(),
        columns,
        rows,
        legend: None,
        source: None,
        base: None,
    }));
    Some(sec)
}

/// A warning for each step of a capped or io-bound-preset result that was served from memory
/// all the same (appending loads aside): its numbers are an in-memory result.
pub fn warnings(all: &[TargetResult]) -> Vec<String> {
    let mut out = Vec::new();
    for t in all.iter().filter(|t| meant_io_bound(t)) {
        let why = match cap_bytes(t) {
            Some(b) => format!("ran under a {} MiB memory cap", b >> 20),
            None => format!("ran with preset {}", t.run.preset),
        };
        for s in &t.steps {
            if APPENDING_LOADS.contains(&s.name.as_str()) || verdict(s) != Residency::InMemory {
                continue;
            }
            let size = match (data_gib(s), cap_bytes(t)) {
                (Some(g), Some(b)) if g * 1024.0 <= (b >> 20) as f64 => {
                    format!("; its data ({:.0} MiB) fits under the cap", g * 1024.0)
                }
                _ => String::new(),
            };
            out.push(format!(
                "{}: step {} {why} but made {} disk reads per operation: it was served \
                 from memory, so its numbers are an in-memory result{size}.",
                t.shown_name(),
                s.name,
                number::sig(s.residency.reads_per_op.unwrap_or(0.0))
            ));
        }
    }
    out
}
