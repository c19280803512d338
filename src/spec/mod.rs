//! What to run: presets, targets and the Insert Benchmark parameters, validated with errors a
//! user can act on. Nothing here opens a connection.

pub mod campaign;
pub mod config_file;
pub mod presets;
pub mod sysbench;
pub mod target;

use crate::error::bad_input;
/// The Insert Benchmark's delete statement form is a parameter of what to run.
pub use crate::workload::ibench::DeleteForm;
pub use crate::workload::ibench::StatementForms;
use crate::workload::ibench::{IbenchParams, StepName};

/// Flags that override a preset; `None` keeps the preset's value or the original's default.
#[derive(Debug, Default, Clone)]
pub struct IbenchOverrides {
    pub clients: Option<u64>,
    pub shared_table: bool,
    pub deletes: Option<bool>,
    pub delete_form: Option<DeleteForm>,
    pub rows_l_i0: Option<u64>,
    pub rows_l_i1: Option<u64>,
    pub rows_l_i2: Option<u64>,
    pub query_seconds: Option<u64>,
    pub rates: Option<Vec<u64>>,
    pub wait_seconds: Option<u64>,
    pub seed: Option<u64>,
    pub data_length_min: Option<u64>,
    pub data_length_max: Option<u64>,
    pub data_random_pct: Option<u64>,
    pub resync_get_min: Option<u64>,
    pub rows_per_query: Option<u64>,
    pub steps: Option<Vec<String>>,
    pub statement_forms: Option<StatementForms>,
}

/// The original's default seed (iibench.py --seed).
pub const DEFAULT_SEED: u64 = 3_221_223_452;

/// The longest a measured step, a warm-up or a cleanup budget may be (30 days): far beyond any
/// benchmark's, and small enough that no clock arithmetic on it can overflow.
pub const MAX_STEP_SECONDS: u64 = 30 * 86_400;
/// The longest a pause between cells or a server's start may take (a day).
pub const MAX_WAIT_SECONDS: u64 = 86_400;

/// A duration option (a flag or a campaign field, named as the user wrote it), checked against
/// its bound: one sentence, exit 2, never a panic further on.
pub fn check_seconds(name: &str, v: u64, max: u64) -> anyhow::Result<u64> {
    if v > max {
        let days = match max / 86_400 {
            1 => "a day".to_string(),
            n => format!("{n} days"),
        };
        return bad_input(format!(
            "{name} {v} is more than {max} seconds ({days}), the most dbperf takes"
        ));
    }
    Ok(v)
}

pub fn ibench_params(
    preset: &presets::Preset,
    o: &IbenchOverrides,
) -> anyhow::Result<IbenchParams> {
    let clients = o.clients.unwrap_or(1);
    if clients == 0 {
        return bad_input("--clients must be at least 1");
    }
    if clients > 1024 {
        return bad_input(format!(
            "--clients {clients} is more than 1024; each client opens up to 3 connections"
        ));
    }
    let deletes = match (o.deletes, o.shared_table) {
        (Some(true), true) => return bad_input(
            "--deletes on cannot be combined with --shared-table: every client's deleter would \
                 remove the same lowest rows (the original refuses this too)",
        ),
        (Some(d), _) => d,
        (None, shared) => !shared,
    };
    let rates = o.rates.clone().unwrap_or_else(|| vec![100, 500, 1000]);
    if rates.is_empty() || rates.contains(&0) {
        return bad_input("--rates needs one or more positive rows/s values, e.g. 100,500,1000");
    }
    let mut sorted = rates.clone();
    sorted.sort_unstable();
    sorted.dedup();
    if sorted.len() != rates.len() {
        return bad_input("--rates has a repeated value; each rate names two steps (qrN, qpN)");
    }
    let query_seconds = o.query_seconds.unwrap_or(preset.query_seconds);
    if query_seconds == 0 {
        return bad_input("--query-seconds must be at least 1");
    }
    check_seconds("--query-seconds", query_seconds, MAX_STEP_SECONDS)?;
    // Each qr/qp step's background inserter inserts this many seconds' worth of rows.
    const MAX_QUERY_STEP_ROWS: u64 = 1_000_000_000_000_000;
    if let Some(r) = rates.iter().find(|r| {
        r.checked_mul(query_seconds)
            .is_none_or(|n| n > MAX_QUERY_STEP_ROWS)
    }) {
        return bad_input(format!(
            "--rates {r} for --query-seconds {query_seconds} is more than 10^15 rows per client \
             and step"
        ));
    }
    if let Some(w) = o.wait_seconds {
        check_seconds("--wait-seconds", w, MAX_STEP_SECONDS)?;
    }
    let dmin = o.data_length_min.unwrap_or(10);
    let dmax = o.data_length_max.unwrap_or(20);
    if dmin == 0 || dmin > dmax || dmax > 4000 {
        return bad_input(format!(
            "data length must satisfy 1 <= min <= max <= 4000 (the column is varchar(4000)), got {dmin}..{dmax}"
        ));
    }
    let pct = o.data_random_pct.unwrap_or(50);
    if pct > 100 {
        return bad_input(format!("--data-random-pct must be 0..100, got {pct}"));
    }
    let rows_per_query = o.rows_per_query.unwrap_or(10);
    if rows_per_query == 0 || rows_per_query > 1000 {
        return bad_input(format!(
            "--rows-per-query must be 1..1000, got {rows_per_query}"
        ));
    }
    let rows_l_i0 = o.rows_l_i0.unwrap_or(preset.rows_l_i0);
    let rows_l_i1 = o.rows_l_i1.unwrap_or(preset.rows_l_i1);
    let rows_l_i2 = o.rows_l_i2.unwrap_or(preset.rows_l_i2);
    let mut params = IbenchParams {
        preset: preset.name.clone(),
        clients,
        shared_table: o.shared_table,
        deletes,
        delete_form: o.delete_form.unwrap_or(DeleteForm::Current),
        rows_l_i0,
        rows_l_i1,
        rows_l_i2,
        query_seconds,
        rates,
        wait_seconds: o.wait_seconds.or(preset.wait_seconds),
        seed: o.seed.unwrap_or(DEFAULT_SEED),
        data_length_min: dmin,
        data_length_max: dmax,
        data_random_pct: pct,
        resync_get_min: o.resync_get_min.unwrap_or(1000),
        rows_per_query,
        cashregisters: 1000,
        products: 10_000,
        customers: 100_000,
        max_price: 500,
        steps: Vec::new(),
        statement_forms: o.statement_forms.unwrap_or(StatementForms::Original),
    };
    let all: Vec<String> = params
        .all_step_names()
        .iter()
        .map(StepName::to_string)
        .collect();
    params.steps = match &o.steps {
        None => all,
        Some(sel) => {
            for s in sel {
                if !all.contains(s) {
                    return bad_input(format!("unknown step '{s}'; steps are: {}", all.join(", ")));
                }
            }
            // Steps always run in the benchmark's order, whatever order they were named in.
            all.into_iter().filter(|s| sel.contains(s)).collect()
        }
    };
    for (name, rows) in [
        ("l.i0", rows_l_i0),
        ("l.i1", rows_l_i1),
        ("l.i2", rows_l_i2),
    ] {
        if rows == 0 && params.steps.iter().any(|s| s == name) {
            return bad_input(format!(
                "{name} would insert 0 rows; give it rows or leave it out of --steps"
            ));
        }
    }
    Ok(params)
}

/// Parses a count with an optional decimal suffix: `30M`, `100k`, `1_000_000`, `2G`.
pub fn parse_count(s: &str) -> Result<u64, String> {
    let t = s.trim().replace('_', "");
    let (num, mult) = match t.chars().last() {
        Some('k') | Some('K') => (&t[..t.len() - 1], 1_000u64),
        Some('m') | Some('M') => (&t[..t.len() - 1], 1_000_000),
        Some('g') | Some('G') => (&t[..t.len() - 1], 1_000_000_000),
        _ => (t.as_str(), 1),
    };
    let n: u64 = num
        .parse()
        .map_err(|_| format!("'{s}' is not a count (examples: 1000, 100k, 30M)"))?;
    n.checked_mul(mult)
        .ok_or_else(|| format!("'{s}' is too large"))
}

/// Concurrency levels of a sweep: `--clients 1,4`, `--threads 1,2,8` (a campaign's
/// `threads = [1, 2, 8]` arrives comma-joined). Each a whole number of at least 1, none twice, at
/// most `MAX_LEVELS` of them; returned in ascending order, the lowest first (what per-client
/// figures are relative to).
pub fn parse_levels(s: &str) -> Result<Levels, String> {
    let mut out = Vec::new();
    for part in s.split(',') {
        let p = part.trim();
        if p.is_empty() {
            return Err(format!("'{s}' has an empty level; write levels like 1,2,8"));
        }
        let n: u64 = p
            .parse()
            .map_err(|_| format!("'{p}' is not a whole number of clients or threads"))?;
        if n == 0 {
            return Err(format!("'{s}': a level must be at least 1"));
        }
        if out.contains(&n) {
            return Err(format!("'{s}' names {n} twice"));
        }
        out.push(n);
    }
    if out.len() > MAX_LEVELS {
        return Err(format!("'{s}' has more than {MAX_LEVELS} levels"));
    }
    out.sort_unstable();
    Ok(Levels(out))
}

/// Read-ahead values of a sweep (`--read-ahead-kb 0,128,4096`), in KB: whole numbers, 0 (none)
/// allowed, none twice, at most `MAX_LEVELS` of them, each at most 1 GiB; ascending.
pub fn parse_kb_list(s: &str) -> Result<KbList, String> {
    let parts: Vec<&str> = s.split(',').map(str::trim).collect();
    let mut out = Vec::new();
    for part in parts {
        let n: u64 = part
            .parse()
            .map_err(|_| format!("'{part}' is not a whole number of KB"))?;
        out.push(n);
    }
    kb_list(&out).map_err(|e| format!("'{s}' {e}"))
}

/// Read-ahead values given as a list (a campaign's `read_ahead_kb = [0, 128]`), checked as
/// `parse_kb_list` checks each.
pub fn kb_list(values: &[u64]) -> Result<KbList, String> {
    let mut out = Vec::new();
    for &n in values {
        if n > 1 << 20 {
            return Err(format!("has {n} KB of read-ahead, more than 1 GiB"));
        }
        if out.contains(&n) {
            return Err(format!("names {n} twice"));
        }
        out.push(n);
    }
    if out.len() > MAX_LEVELS {
        return Err(format!("has more than {MAX_LEVELS} values"));
    }
    out.sort_unstable();
    Ok(KbList(out))
}

/// Read-ahead values of a sweep, in KB, ascending.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct KbList(pub Vec<u64>);

/// I/O scheduler names of a sweep, as given.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Schedulers(pub Vec<String>);

/// I/O scheduler names of a sweep (`--io-scheduler none,mq-deadline`): as the kernel names
/// them, none twice, at most `MAX_LEVELS`.
pub fn parse_schedulers(s: &str) -> Result<Schedulers, String> {
    let parts: Vec<String> = s.split(',').map(|p| p.trim().to_string()).collect();
    schedulers(&parts).map_err(|e| format!("'{s}' {e}"))
}

/// I/O scheduler names given as a list (a campaign's `io_scheduler = ["none", "bfq"]`): each
/// one kernel name, so one holding a comma is refused, never split.
pub fn schedulers(values: &[String]) -> Result<Schedulers, String> {
    let mut out: Vec<String> = Vec::new();
    for part in values {
        if part.is_empty()
            || part.len() > 32
            || !part
                .chars()
                .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-' || c == '_')
        {
            return Err(format!(
                "has {}, which is not an I/O scheduler name (none, mq-deadline, bfq, kyber)",
                crate::untrusted::shown(part)
            ));
        }
        if out.contains(part) {
            return Err(format!("names {part} twice"));
        }
        out.push(part.clone());
    }
    if out.len() > MAX_LEVELS {
        return Err(format!("has more than {MAX_LEVELS} values"));
    }
    Ok(Schedulers(out))
}

/// The most levels one sweep may have.
pub const MAX_LEVELS: usize = 16;

/// Concurrency levels, ascending, at least one.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Levels(pub Vec<u64>);

impl Levels {
    pub fn lowest(&self) -> u64 {
        self.0[0]
    }

    pub fn highest(&self) -> u64 {
        *self.0.last().expect("at least one level")
    }
}

/// Parses a size in bytes with an optional binary suffix, as perf's `--max-size` takes it:
/// `2G`, `512M`, `200K`, `4096` (bytes; `B` allowed).
pub fn parse_size(s: &str) -> Result<u64, String> {
    let t = s.trim().replace('_', "");
    // `512M`, `512MB` and `512MiB` are one size: binary units, as PostgreSQL and my.cnf read
    // them.
    let t = t
        .strip_suffix("iB")
        .or_else(|| t.strip_suffix("ib"))
        .filter(|x| x.ends_with(|c: char| "kKmMgGtT".contains(c)))
        .or_else(|| {
            t.strip_suffix(['B', 'b'])
                .filter(|x| x.ends_with(|c: char| "kKmMgGtT".contains(c)))
        })
        .unwrap_or(&t)
        .to_string();
    let (num, shift) = match t.chars().last().map(|c| c.to_ascii_uppercase()) {
        Some('K') => (&t[..t.len() - 1], 10),
        Some('M') => (&t[..t.len() - 1], 20),
        Some('G') => (&t[..t.len() - 1], 30),
        Some('T') => (&t[..t.len() - 1], 40),
        Some('B') => (&t[..t.len() - 1], 0),
        _ => (t.as_str(), 0),
    };
    let n: u64 = num
        .parse()
        .map_err(|_| format!("'{s}' is not a size (examples: 2G, 512M, 200K)"))?;
    n.checked_mul(1u64 << shift)
        .filter(|b| *b > 0)
        .ok_or_else(|| format!("'{s}' is not a size from 1 byte up (examples: 2G, 512M)"))
}

/// The smallest `--server-memory`: below it a managed server does not start with any config
/// dbperf writes (the MySQL family's own buffers and a connection's memory take tens of MiB).
pub const MIN_SERVER_MEMORY: u64 = 64 << 20;

/// `--server-memory`: a size as `parse_size` takes it, at least `MIN_SERVER_MEMORY`, and no more
/// than a cgroup limit can say.
pub fn parse_server_memory(s: &str) -> Result<u64, String> {
    let b = parse_size(s)?;
    if b < MIN_SERVER_MEMORY {
        return Err(format!(
            "'{s}' is less than the {} MiB a managed server needs to start",
            MIN_SERVER_MEMORY >> 20
        ));
    }
    if b > 1 << 50 {
        return Err(format!("'{s}' is more than a memory cap can be (1024T)"));
    }
    Ok(b)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn levels_are_sorted_and_bad_lists_refused() {
        assert_eq!(parse_levels("8, 1,2").unwrap(), Levels(vec![1, 2, 8]));
        assert_eq!(parse_levels("4").unwrap().lowest(), 4);
        for bad in ["", "1,,2", "0", "1,0", "2,2", "a", "-1", "1.5"] {
            assert!(parse_levels(bad).is_err(), "{bad}");
        }
        let many: Vec<String> = (1..=17).map(|i| i.to_string()).collect();
        assert!(parse_levels(&many.join(",")).is_err());
    }

    #[test]
    fn a_server_memory_cap_is_a_size_a_server_can_start_in() {
        assert_eq!(parse_server_memory("256M"), Ok(256 << 20));
        assert_eq!(parse_server_memory("256MB"), Ok(256 << 20));
        assert_eq!(parse_server_memory("256MiB"), Ok(256 << 20));
        assert_eq!(parse_server_memory("1T"), Ok(1 << 40));
        assert!(parse_server_memory("1025T").unwrap_err().contains("1024T"));
        assert_eq!(parse_server_memory("64M"), Ok(64 << 20));
        assert!(parse_server_memory("63M").unwrap_err().contains("64 MiB"));
        assert!(parse_server_memory("2P").is_err());
        assert!(parse_server_memory("lots").is_err());
    }

    #[test]
    fn sizes_take_binary_suffixes() {
        assert_eq!(parse_size("2G"), Ok(2 << 30));
        assert_eq!(parse_size("200k"), Ok(200 << 10));
        assert_eq!(parse_size("4096"), Ok(4096));
        assert_eq!(parse_size("1B"), Ok(1));
        for bad in ["0", "-1M", "x", "99999999999G"] {
            assert!(parse_size(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn counts_take_suffixes() {
        assert_eq!(parse_count("30M"), Ok(30_000_000));
        assert_eq!(parse_count("100k"), Ok(100_000));
        assert_eq!(parse_count("1_000"), Ok(1000));
        assert!(parse_count("-5").is_err());
        assert!(parse_count("x").is_err());
    }

    fn quick() -> presets::Preset {
        presets::get("quick").unwrap()
    }

    #[test]
    fn defaults_follow_the_original() {
        let p = ibench_params(&quick(), &IbenchOverrides::default()).unwrap();
        assert_eq!(
            p.steps.join(","),
            "l.i0,l.x,l.i1,l.i2,qr100,qp100,qr500,qp500,qr1000,qp1000"
        );
        assert!(p.deletes);
        assert_eq!(p.delete_form, DeleteForm::Current);
        assert_eq!(
            (p.data_length_min, p.data_length_max, p.data_random_pct),
            (10, 20, 50)
        );
        assert_eq!(p.resync_get_min, 1000);
    }

    #[test]
    fn shared_table_turns_deletes_off_and_refuses_them() {
        let o = IbenchOverrides {
            shared_table: true,
            ..Default::default()
        };
        assert!(!ibench_params(&quick(), &o).unwrap().deletes);
        let o = IbenchOverrides {
            shared_table: true,
            deletes: Some(true),
            ..Default::default()
        };
        assert!(crate::error::is_bad_input(
            &ibench_params(&quick(), &o).unwrap_err()
        ));
    }

    #[test]
    fn impossible_values_are_bad_input() {
        let cases = [
            IbenchOverrides {
                clients: Some(0),
                ..Default::default()
            },
            IbenchOverrides {
                rates: Some(vec![0]),
                ..Default::default()
            },
            IbenchOverrides {
                rates: Some(vec![100, 500, 100]),
                ..Default::default()
            },
            IbenchOverrides {
                query_seconds: Some(0),
                ..Default::default()
            },
            IbenchOverrides {
                steps: Some(vec!["l.i9".into()]),
                ..Default::default()
            },
            IbenchOverrides {
                data_length_min: Some(30),
                ..Default::default()
            },
            IbenchOverrides {
                rows_l_i0: Some(0),
                ..Default::default()
            },
        ];
        for o in cases {
            let e = ibench_params(&quick(), &o).unwrap_err();
            assert!(crate::error::is_bad_input(&e), "{o:?}: {e}");
        }
    }

    #[test]
    fn selected_steps_keep_benchmark_order_and_rates_rename_steps() {
        let o = IbenchOverrides {
            rates: Some(vec![200]),
            steps: Some(vec!["qp200".into(), "l.i0".into()]),
            ..Default::default()
        };
        assert_eq!(
            ibench_params(&quick(), &o).unwrap().steps,
            vec!["l.i0", "qp200"]
        );
    }
}
