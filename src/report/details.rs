//! Who was compared, where, and what makes the comparison shaky: the targets table (versions,
//! configs with their full text on demand, host fingerprints and warnings) and the report's
//! warnings when results come from different hosts, host settings, parameters or dbperf builds.

use std::collections::BTreeMap;

use serde_json::Value;

use super::model::{Better, Block, Cell, Column, Kind, Row, Section, Table};
use super::target::TargetResult;
use crate::engines::Family;
use crate::json::Flatten;
use crate::results::RunFile;

/// Keys that say which machine it was; a difference means "different hosts".
const IDENTITY: &[&str] = &["hostname", "cpu_model", "cpus_online", "cores", "memory_kb"];

/// Values that move by themselves or name the run, not the host's state.
const VOLATILE: &[&str] = &[
    "during_run",
    "warnings",
    "aer",
    "cur_khz",
    "hw_cur_khz",
    "steal_pct_since_boot",
    "path",
    "note",
];

/// How a host fingerprint or a run's parameters are compared: the volatile keys left out,
/// named elements (cpufreq policies, block devices) matched by name.
const FLAT: Flatten = Flatten {
    skip: VOLATILE,
    element_names: Some(&["name", "mount_point", "device"]),
};

fn flatten(v: &Value) -> BTreeMap<String, String> {
    let mut m = BTreeMap::new();
    crate::json::flatten(v, &FLAT, String::new(), &mut m);
    m
}

/// "key: a (t1, t2) vs b (t3)" for every key whose values differ between targets.
fn differences(
    items: &[(&str, BTreeMap<String, String>)],
    keys: impl Fn(&str) -> bool,
) -> Vec<String> {
    let mut all: Vec<&String> = items.iter().flat_map(|(_, m)| m.keys()).collect();
    all.sort();
    all.dedup();
    let mut out = Vec::new();
    for k in all.into_iter().filter(|k| keys(k)) {
        let mut groups: Vec<(String, Vec<&str>)> = Vec::new();
        for (name, m) in items {
            let v = m.get(k).cloned().unwrap_or_else(|| "(absent)".into());
            match groups.iter_mut().find(|g| g.0 == v) {
                Some(g) => g.1.push(name),
                None => groups.push((v, vec![name])),
            }
        }
        if groups.len() > 1 {
            let shown: Vec<String> = groups
                .iter()
                .map(|(v, ns)| format!("{} ({})", shorten(v), ns.join(", ")))
                .collect();
            out.push(format!("{k}: {}", shown.join(" vs ")));
        }
    }
    out
}

fn shorten(s: &str) -> String {
    if s.chars().count() > 80 {
        format!("{}…", s.chars().take(77).collect::<String>())
    } else {
        s.to_string()
    }
}

fn listed(mut d: Vec<String>, max: usize) -> String {
    let more = d.len().saturating_sub(max);
    d.truncate(max);
    let mut s = d.join("; ");
    if more > 0 {
        s.push_str(&format!("; and {more} more (see the targets table)"));
    }
    s
}

/// The host fingerprint's field a swept host axis sets, as a key suffix.
fn host_field(axis: &str) -> Option<&'static str> {
    match axis {
        "read_ahead_kb" => Some(".read_ahead_kb"),
        "io_scheduler" => Some(".scheduler"),
        _ => None,
    }
}

/// Sentences that change how the comparison should be read.
pub fn warnings(all: &[TargetResult]) -> Vec<String> {
    let names: Vec<String> = all.iter().map(|t| t.shown_name()).collect();
    // What a sweep varies on purpose is no warning.
    let swept: Vec<&String> = all.iter().flat_map(|t| t.run.axes.keys()).collect();
    let mut out = host_warnings(all, &names, &swept);
    out.extend(parameter_warnings(all, &names, &swept));
    out.extend(build_warning(all, &names));
    out.extend(profiled_warning(all));
    out.extend(repeated_warning(all));
    for (t, name) in all.iter().zip(&names) {
        out.extend(run_warnings(t, name));
    }
    once_each(out)
}

/// Different machines, or the same machine with other software or settings than a sweep sets.
fn host_warnings(all: &[TargetResult], names: &[String], swept: &[&String]) -> Vec<String> {
    let mut out = Vec::new();
    let hosts: Vec<(&str, BTreeMap<String, String>)> = all
        .iter()
        .zip(names)
        .map(|(t, n)| (n.as_str(), flatten(&t.run.host)))
        .collect();
    let ident = differences(&hosts, |k| IDENTITY.contains(&k));
    if !ident.is_empty() {
        out.push(format!(
            "These results come from different hosts, so differences may be the machines' and not the DBMS's: {}.",
            listed(ident, 4)
        ));
    }
    // A swept host setting (a device's read_ahead_kb, its scheduler) differs on purpose.
    let swept_fields: Vec<&str> = swept.iter().filter_map(|a| host_field(a)).collect();
    let swept_host = |k: &str| swept_fields.iter().any(|f| k.ends_with(f));
    let settings = differences(&hosts, |k| !IDENTITY.contains(&k) && !swept_host(k));
    if !settings.is_empty() {
        out.push(format!(
            "Host software or settings differ between these results (dbperf host show explains each): {}.",
            listed(settings, 6)
        ));
    }
    out
}

/// Results of one suite run with other parameters than a sweep varies.
fn parameter_warnings(all: &[TargetResult], names: &[String], swept: &[&String]) -> Vec<String> {
    let mut out = Vec::new();
    for suite in crate::suites::Suite::all() {
        let params: Vec<(&str, BTreeMap<String, String>)> = all
            .iter()
            .zip(names)
            .filter(|(t, _)| t.run.suite == suite)
            .map(|(t, n)| (n.as_str(), flatten(&t.run.parameters)))
            .collect();
        let d = differences(&params, |k| {
            !k.starts_with("steps") && k != "preset" && !swept.iter().any(|s| *s == k)
        });
        if !d.is_empty() {
            out.push(format!(
                "The {suite} results were run with different parameters, so their numbers are not directly comparable: {}.",
                listed(d, 6)
            ));
        }
    }
    out
}

/// Results measured by different dbperf builds.
fn build_warning(all: &[TargetResult], names: &[String]) -> Option<String> {
    let tools: Vec<(&str, BTreeMap<String, String>)> = all
        .iter()
        .zip(names)
        .map(|(t, n)| {
            let v = format!("{} ({})", t.run.tool.version, t.run.tool.git_revision);
            (n.as_str(), BTreeMap::from([("dbperf".to_string(), v)]))
        })
        .collect();
    let d = differences(&tools, |_| true);
    (!d.is_empty()).then(|| {
        format!(
            "Different dbperf builds measured these results (docs/metrics.md may have changed between them): {}.",
            listed(d, 2)
        )
    })
}

/// Some targets profiled and others not: sampling moves throughput.
fn profiled_warning(all: &[TargetResult]) -> Option<String> {
    let profiled = |t: &TargetResult| t.steps.iter().any(|s| s.profiled);
    if !all.iter().any(profiled) || all.iter().all(profiled) {
        return None;
    }
    let (with, without): (Vec<&TargetResult>, Vec<&TargetResult>) =
        all.iter().partition(|t| profiled(t));
    let names = |v: Vec<&TargetResult>| listed(v.iter().map(|t| t.shown_name()).collect(), 6);
    Some(format!(
        "Some targets were profiled (--profile) and others not, and sampling changes throughput by a few percent either way (docs/profiles.md, Overhead): profiled {}; not profiled {}.",
        names(with),
        names(without)
    ))
}

/// Which targets are the median of several rounds.
fn repeated_warning(all: &[TargetResult]) -> Option<String> {
    let repeated: Vec<String> = all
        .iter()
        .filter(|t| !t.repeats.is_empty())
        .map(|t| format!("{} ({} rounds)", t.shown_name(), t.repeats.len()))
        .collect();
    (!repeated.is_empty()).then(|| {
        format!(
            "Repeated targets are shown as the median of their rounds, each round in the Repeats section: {}.",
            listed(repeated, 6)
        )
    })
}

/// How one target's run ended when not ok, and the warnings it carries. Results of a sweep
/// share a target name: `name` is the one shown, with its level.
fn run_warnings(t: &TargetResult, name: &str) -> Vec<String> {
    let mut out = Vec::new();
    match t.run.status.as_str() {
        "failed" => out.push(format!(
            "{name}: step {} failed ({}); the steps after it did not run, every other step is reported.",
            t.run.failed_step.as_deref().unwrap_or("?"),
            super::common::first_line(t.run.error.as_deref().unwrap_or("no error recorded"))
        )),
        "interrupted" => out.push(format!(
            "{name}: the run was interrupted (Ctrl-C); steps after the interrupted one did not run."
        )),
        "running" => out.push(format!(
            "{name}: run.json still says running, so dbperf was killed or is still running; the steps that finished are reported."
        )),
        _ => {}
    }
    for w in &t.run.warnings {
        out.push(format!("{name}: {w}"));
    }
    out.extend(t.warnings.iter().cloned());
    out
}

/// The warnings in their order, each once: the same sentence twice (two rounds that warn alike)
/// tells the reader nothing more. A set, as a run.json may hold any number of warnings.
fn once_each(warnings: Vec<String>) -> Vec<String> {
    let mut seen = std::collections::HashSet::new();
    warnings
        .into_iter()
        .filter(|w| seen.insert(w.clone()))
        .collect()
}

fn host_line(h: &Value) -> String {
    let s = |k: &str| h.get(k).and_then(|v| v.as_str()).unwrap_or("?").to_string();
    let n = |k: &str| h.get(k).and_then(|v| v.as_u64());
    format!(
        "{} · {} × {} CPUs · {:.1} GiB · {}",
        s("hostname"),
        s("cpu_model"),
        n("cpus_online")
            .map(|x| x.to_string())
            .unwrap_or("?".into()),
        n("memory_kb").unwrap_or(0) as f64 / 1024.0 / 1024.0,
        s("kernel")
    )
}

fn host_more(h: &Value) -> String {
    flatten(h)
        .into_iter()
        .filter(|(k, _)| !k.ends_with("_available"))
        .map(|(k, v)| format!("{k} = {v}"))
        .collect::<Vec<_>>()
        .join("\n")
}

// ---- build provenance (dbperf fetch) ----

/// "zonky (npm ...) 13.23": who built it, so builds of different families stand apart; open it
/// for the whole build.json (source, sha256, loader).
fn build_cell(b: Option<&Value>) -> Cell {
    let Some(b) = b else {
        return Cell::text("—");
    };
    let s = |k: &str| b.get(k).and_then(|v| v.as_str()).unwrap_or("?");
    let mut text = format!("{} {}", s("family"), s("version"));
    if b.get("loader").is_some_and(|l| !l.is_null()) {
        text.push_str(" (own loader and libc)");
    }
    let mut c = Cell::text(text);
    c.more = serde_json::to_string_pretty(b).ok();
    c
}

fn build_column() -> Column {
    Column::new(
        "build",
        "build",
        "",
        "where the build came from (dbperf fetch); open it for its build.json",
        Better::Neither,
    )
}

// ---- end of build provenance ----

/// The config's name, and for the MySQL family whether the binary log was on: MySQL writes
/// one by default and MariaDB does not, and it doubles the syncs of a commit, so a comparison
/// must show it where a reader looks, not only in the settings.
fn config_label(name: &str, text: &str) -> String {
    match effective_setting(text, "log_bin") {
        Some("ON") => {
            let sync = effective_setting(text, "sync_binlog").unwrap_or("?");
            format!("{name} · binlog on (sync_binlog {sync})")
        }
        Some("OFF") => format!("{name} · binlog off"),
        _ => name.to_string(),
    }
}

/// A setting from the part of the config text that the server reported itself (after the
/// adapter's last marker line), so a config file's own lines never count.
fn effective_setting<'a>(text: &'a str, name: &str) -> Option<&'a str> {
    let (_, reported) = text.rsplit_once(crate::results::MYSQL_REPORTED_SETTINGS)?;
    reported.lines().find_map(|l| {
        let (k, v) = l.split_once(" = ")?;
        (k == name).then_some(v.trim())
    })
}

/// The targets table's columns, with the build's after the engine's when any target has one.
fn columns(builds: bool) -> Vec<Column> {
    let mut cols = vec![
        Column::new("suite", "suite", "", "benchmark suite", Better::Neither),
        Column::new("engine", "engine", "", "DBMS engine", Better::Neither),
        Column::new(
            "version",
            "version",
            "",
            "version string the DBMS reported",
            Better::Neither,
        ),
        Column::new(
            "config",
            "config",
            "",
            "config name (MariaDB/MySQL: and whether the binary log was on); open it for the effective settings",
            Better::Neither,
        ),
        Column::new(
            "parameters",
            "parameters",
            "",
            "preset; open it for every parameter",
            Better::Neither,
        ),
        Column::new("status", "status", "", "how the run ended", Better::Neither),
        Column::new(
            "dbperf",
            "dbperf",
            "",
            "dbperf version (git revision) that measured it",
            Better::Neither,
        ),
        Column::new(
            "started",
            "started",
            "",
            "when the target started (UTC)",
            Better::Neither,
        ),
        Column::new(
            "host",
            "host",
            "",
            "host fingerprint; open it for every field",
            Better::Neither,
        ),
        Column::new(
            "host_warnings",
            "host warnings",
            "",
            "what on the host spoils comparisons (docs/host.md)",
            Better::Neither,
        ),
        Column::new("dir", "result", "", "result directory", Better::Neither),
    ];
    if builds {
        cols.insert(3, build_column());
    }
    cols
}

/// The config's label (the binary log's state, a memory cap it was sized for), open for its
/// full text.
fn config_cell(run: &RunFile) -> Cell {
    // The binary log is the MySQL family's: its state is part of what the config is.
    let family = crate::engines::Engine::parse(&run.target.engine).map(|e| e.family());
    let mut label = match family {
        Some(Family::MySql) => config_label(&run.target.config_name, &run.target.config_text),
        Some(Family::Postgres | Family::Embedded) | None => run.target.config_name.clone(),
    };
    // A config sized for a cap is not the one written for the host (nor, for a published
    // config, the published setup): the label says so.
    if let Some(cap) = run
        .target
        .server
        .as_ref()
        .and_then(|s| s.memory_cap.as_ref())
    {
        label.push_str(&format!(" · sized for a {} MiB cap", cap.bytes >> 20));
    }
    let mut config = Cell::text(label);
    config.more = (!run.target.config_text.is_empty()).then(|| run.target.config_text.clone());
    config
}

/// The preset, open for every parameter.
fn parameters_cell(run: &RunFile) -> Cell {
    let mut params = Cell::text(if run.preset.is_empty() {
        "—".to_string()
    } else {
        format!("preset {}", run.preset)
    });
    if let Value::Object(m) = &run.parameters {
        params.more = Some(
            m.iter()
                .map(|(k, v)| format!("{k} = {v}"))
                .collect::<Vec<_>>()
                .join("\n"),
        );
    }
    params
}

fn status_text(run: &RunFile) -> String {
    match run.status.as_str() {
        "failed" => format!(
            "failed at {}: {}",
            run.failed_step.as_deref().unwrap_or("?"),
            run.error.as_deref().unwrap_or("")
        ),
        s => s.to_string(),
    }
}

/// How many warnings the host fingerprint carries, open for their messages.
fn host_warnings_cell(host: &Value) -> Cell {
    let hw: Vec<String> = host
        .get("warnings")
        .and_then(|w| w.as_array())
        .map(|a| {
            a.iter()
                .filter_map(|w| w.get("message").and_then(|m| m.as_str()))
                .map(String::from)
                .collect()
        })
        .unwrap_or_default();
    let mut hwc = Cell::text(hw.len().to_string());
    hwc.more = (!hw.is_empty()).then(|| hw.join("\n"));
    hwc
}

/// Target `i`'s row of the targets table.
fn row(i: usize, r: &TargetResult, builds: bool) -> Row {
    let run = &r.run;
    let mut host = Cell::text(host_line(&run.host));
    host.more = Some(host_more(&run.host));
    let mut cells = vec![
        Cell::text(run.suite.name()),
        Cell::text(&run.target.engine),
        Cell::text(&run.target.version),
        config_cell(run),
        parameters_cell(run),
        Cell::text(status_text(run)),
        Cell::text(format!("{} ({})", run.tool.version, run.tool.git_revision)),
        Cell::text(
            run.started_at
                .get(..19)
                .unwrap_or(&run.started_at)
                .replace('T', " "),
        ),
        host,
        host_warnings_cell(&run.host),
        Cell::text(r.dir.display().to_string()),
    ];
    if builds {
        cells.insert(3, build_cell(run.target.build.as_ref()));
    }
    Row {
        label: r.shown_name(),
        target: Some(i),
        cells,
        note: None,
    }
}

pub fn section(all: &[TargetResult]) -> Section {
    let builds = all.iter().any(|r| r.run.target.build.is_some());
    let t = Table {
        id: "targets".into(),
        title: "Targets".into(),
        kind: Kind::Info,
        suite: "",
        step: None,
        op: None,
        row_header: "target".into(),
        columns: columns(builds),
        rows: all
            .iter()
            .enumerate()
            .map(|(i, r)| row(i, r, builds))
            .collect(),
        legend: None,
        source: None,
        base: None,
    };
    let mut sec = Section::new("details", "Host and target details");
    sec.blocks.push(Block::Table(t));
    sec
}

#[cfg(test)]
mod tests {
    #[test]
    fn the_config_cell_says_whether_the_binary_log_was_on() {
        let mark = crate::results::MYSQL_REPORTED_SETTINGS;
        let on = format!("log_bin = OFF\n{mark}\nlog_bin = ON\nsync_binlog = 1\n");
        assert_eq!(
            super::config_label("default", &on),
            "default · binlog on (sync_binlog 1)"
        );
        let off = format!("skip_log_bin\n{mark}\nlog_bin = OFF\n");
        assert_eq!(super::config_label("default", &off), "default · binlog off");
        // PostgreSQL's and SQLite's texts have no such line; a config's own text never counts.
        assert_eq!(super::config_label("cx9a2", "log_bin = ON\n"), "cx9a2");
    }

    use super::*;

    fn target(name: &str, host: Value, params: Value) -> TargetResult {
        let mut run = crate::report::input::fixtures::run_file(name);
        run.host = host;
        run.parameters = params;
        run.tool.version = "0.1.0".into();
        run.tool.git_revision = "abc".into();
        TargetResult {
            dir: name.into(),
            run,
            steps: Vec::new(),
            warnings: Vec::new(),
            repeats: Vec::new(),
        }
    }

    #[test]
    fn builds_show_their_family() {
        let mut a = target("a", serde_json::json!({}), serde_json::json!({}));
        a.run.target.build = Some(
            serde_json::json!({"family": "debian bullseye", "version": "13.23",
            "loader": null, "sha256": "ab"}),
        );
        let b = target("b", serde_json::json!({}), serde_json::json!({}));
        let sec = section(&[a, b]);
        let Block::Table(t) = &sec.blocks[0] else {
            panic!("a table")
        };
        assert_eq!(t.columns[3].key, "build");
        assert_eq!(t.rows[0].cells[3].text, "debian bullseye 13.23");
        assert!(t.rows[0].cells[3]
            .more
            .as_ref()
            .unwrap()
            .contains("\"sha256\": \"ab\""));
        assert_eq!(t.rows[1].cells[3].text, "—");
        let plain = section(&[target("c", serde_json::json!({}), serde_json::json!({}))]);
        let Block::Table(t) = &plain.blocks[0] else {
            panic!("a table")
        };
        assert!(t.columns.iter().all(|c| c.key != "build"));
    }

    #[test]
    fn profiled_and_unprofiled_targets_side_by_side_are_said() {
        let with_steps = |name: &str, profiled: bool| {
            let mut t = target(name, serde_json::json!({}), serde_json::json!({}));
            let mut f: crate::results::StepFile =
                serde_json::from_value(crate::report::input::fixtures::step_json(1.0)).unwrap();
            if profiled {
                f.profile = Some(crate::results::profile::StepProfile {
                    processes: "server".into(),
                    command: "perf record -a".into(),
                    ..Default::default()
                });
            }
            t.steps.push(
                crate::report::input::step_view(
                    std::path::Path::new("."),
                    crate::suites::Suite::Ibench,
                    f,
                )
                .0,
            );
            t
        };
        let w = warnings(&[with_steps("a", true), with_steps("b", false)]);
        assert_eq!(w.len(), 1, "{w:?}");
        assert!(w[0].contains("profiled a; not profiled b"), "{}", w[0]);
        assert!(warnings(&[with_steps("a", true), with_steps("b", true)]).is_empty());
        assert!(warnings(&[with_steps("a", false), with_steps("b", false)]).is_empty());
    }

    #[test]
    fn same_host_different_paths_is_no_warning() {
        let h = |p: &str| {
            serde_json::json!({"hostname": "vm", "cpu_model": "X", "thp": {"enabled": "madvise"},
                "storage": [{"path": p, "mount_point": "/", "fstype": "ext4"}],
                "during_run": {"steal_pct": 1.0}, "warnings": [{"message": "vm"}]})
        };
        let all = [
            target("a", h("/r/work/a"), serde_json::json!({"clients": 1})),
            target("b", h("/r/work/b"), serde_json::json!({"clients": 1})),
        ];
        assert!(warnings(&all).is_empty(), "{:?}", warnings(&all));
    }

    #[test]
    fn different_hosts_settings_and_parameters_are_named() {
        let all = [
            target(
                "a",
                serde_json::json!({"hostname": "vm1", "thp": {"enabled": "madvise"}}),
                serde_json::json!({"clients": 1, "steps": ["l.i0"]}),
            ),
            target(
                "b",
                serde_json::json!({"hostname": "vm2", "thp": {"enabled": "always"}}),
                serde_json::json!({"clients": 4, "steps": ["l.x"]}),
            ),
        ];
        let w = warnings(&all);
        assert_eq!(w.len(), 3, "{w:?}");
        assert!(w[0].contains("different hosts") && w[0].contains("hostname: vm1 (a) vs vm2 (b)"));
        assert!(
            w[1].contains("thp.enabled: madvise (a) vs always (b)"),
            "{}",
            w[1]
        );
        assert!(w[2].contains("clients: 1 (a) vs 4 (b)") && !w[2].contains("steps"));
    }
}
