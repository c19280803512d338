//! iostat -x per device: the metrics tables add the target's devices up; this table shows each
//! on its own with what it holds, so a log device saturated beside an idle data device (or the
//! reverse) is visible.

use super::common::{state, State};
use super::context::Ctx;
use super::model::{Better, Cell, Column, Kind, Row, Table};
use super::number;
use crate::results::hardware::{DeviceIo, IoRates};

type Field = fn(&IoRates) -> Option<f64>;

const COLUMNS: &[(&str, &str, &str, &str, Field)] = &[
    ("r_s", "r/s", "", "reads completed per second", |i| {
        Some(i.reads_per_s)
    }),
    ("rkb_s", "rkB/s", "", "KB read per second", |i| {
        Some(i.read_kb_per_s)
    }),
    ("w_s", "w/s", "", "writes completed per second", |i| {
        Some(i.writes_per_s)
    }),
    ("wkb_s", "wkB/s", "", "KB written per second", |i| {
        Some(i.write_kb_per_s)
    }),
    ("f_s", "f/s", "", "flush requests per second", |i| {
        Some(i.flushes_per_s)
    }),
    (
        "r_await",
        "r_await",
        "ms",
        "mean time per completed read, queue included",
        |i| i.r_await_ms,
    ),
    (
        "w_await",
        "w_await",
        "ms",
        "mean time per completed write, queue included",
        |i| i.w_await_ms,
    ),
    ("aqu_sz", "aqu-sz", "", "mean requests in flight", |i| {
        i.aqu_sz
    }),
    (
        "util",
        "%util",
        "",
        "share of the time the device had a request in flight",
        |i| i.util_pct,
    ),
];

/// Each target's devices for `step` (targets whose step did not run are left out); None when
/// no target has per-device figures, or when `only_if_several` and none has two devices or more.
pub fn table(ctx: &Ctx, suite: &'static str, step: &str, only_if_several: bool) -> Option<Table> {
    let mut rows = Vec::new();
    let mut several = false;
    for &i in &ctx.idx {
        let tr = &ctx.all[i];
        let State::Ok(s) = state(tr, step) else {
            continue;
        };
        several |= s.devices.len() > 1;
        for d in &s.devices {
            rows.push(Row {
                label: format!("{} · {}", tr.name(), label(d)),
                target: Some(i),
                cells: COLUMNS
                    .iter()
                    .map(|(_, _, _, _, f)| match f(&d.io) {
                        Some(v) => Cell::num(v, number::sig(v)),
                        None => Cell::gap("none completed"),
                    })
                    .collect(),
                note: None,
            });
        }
    }
    if rows.is_empty() || (only_if_several && !several) {
        return None;
    }
    Some(Table {
        id: format!("{suite}-{}-devices", super::common::sanitize(step)),
        title: format!("{step}: IO per device"),
        kind: Kind::Info,
        suite,
        step: Some(step.into()),
        op: None,
        row_header: "target · device (holds)".into(),
        columns: COLUMNS
            .iter()
            .map(|(k, l, u, h, _)| Column::new(k, l, u, h, Better::Neither))
            .collect(),
        rows,
        legend: Some(
            "iostat -x's columns for each block device under the target's data directory and its log directories (data, log), over the step's measured time; the metrics tables add these devices up (docs/metrics.md).".into(),
        ),
        source: None,
        base: None,
    })
}

fn label(d: &DeviceIo) -> String {
    let holds: Vec<&str> = d.holds.iter().map(|r| r.as_str()).collect();
    format!("{} ({})", d.device, holds.join(", "))
}
