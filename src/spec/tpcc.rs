//! TPC-C's parameters from a preset and the flags, validated with errors a user can act on.

use serde::Deserialize;

use super::bounds::DEFAULT_SEED;
use super::presets::{names, of_suite, Listed, Listing};
use crate::error::bad_input;
use crate::suites::Suite;
use crate::workload::tpcc::{Isolation, Mix, TpccParams};

/// A TPC-C preset: sizes and durations by name (presets.toml's `[tpcc.<name>]`).
#[derive(Debug, Clone, Deserialize, serde::Serialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct TpccPreset {
    #[serde(skip_deserializing)]
    pub name: String,
    pub description: String,
    pub warehouses: u64,
    pub connections: u64,
    pub run_seconds: u64,
    /// HammerDB's ramp-up: transactions at the start of each run step that are not counted.
    pub warmup_seconds: u64,
}

impl super::presets::Named for TpccPreset {
    fn name(&self) -> &str {
        &self.name
    }
    fn set_name(&mut self, name: String) {
        self.name = name;
    }
}

pub fn presets() -> Vec<TpccPreset> {
    of_suite(Suite::Tpcc)
}

/// Flags that override a TPC-C preset; `None` keeps the preset's value or the default.
#[derive(Debug, Clone, Default)]
pub struct TpccOverrides {
    pub warehouses: Option<u64>,
    pub connections: Option<Vec<u64>>,
    pub load_connections: Option<u64>,
    pub run_seconds: Option<u64>,
    pub rampup_seconds: Option<u64>,
    pub mix: Option<Mix>,
    pub isolation: Option<Isolation>,
    pub foreign_keys: Option<bool>,
    pub check: Option<bool>,
    pub seed: Option<u64>,
}

/// A year: longer than any run, short enough that no deadline computed from it overflows.
const MOST_SECONDS: u64 = 366 * 24 * 3600;

/// Connections beyond this are a typo rather than a benchmark.
const MOST_CONNECTIONS: u64 = 1024;

pub fn tpcc_params(preset: &str, o: &TpccOverrides) -> anyhow::Result<TpccParams> {
    let all = presets();
    let Some(p) = all.iter().find(|p| p.name == preset) else {
        return bad_input(format!(
            "TPC-C has no preset {}; it has {}",
            crate::untrusted::shown(preset),
            names(&all)
        ));
    };
    let warehouses = o.warehouses.unwrap_or(p.warehouses);
    // Warehouse ids are smallint columns, as sysbench-tpcc creates them.
    if !(1..=i16::MAX as u64).contains(&warehouses) {
        return bad_input(format!(
            "--warehouses must be between 1 and {} (warehouse ids are smallint columns)",
            i16::MAX
        ));
    }
    let connections = o.connections.clone().unwrap_or(vec![p.connections]);
    let most = connections.iter().copied().max().unwrap_or(1);
    if most > MOST_CONNECTIONS {
        return bad_input(format!("--connections must be at most {MOST_CONNECTIONS}"));
    }
    let load_connections = o.load_connections.unwrap_or(most);
    if load_connections == 0 || load_connections > MOST_CONNECTIONS {
        return bad_input(format!(
            "--load-connections must be between 1 and {MOST_CONNECTIONS}"
        ));
    }
    let (run_seconds, warmup_seconds) = durations(p, o)?;
    Ok(TpccParams {
        preset: p.name.clone(),
        warehouses,
        connections,
        load_connections,
        run_seconds,
        warmup_seconds,
        mix: o.mix.unwrap_or(Mix::Standard),
        isolation: o.isolation.unwrap_or(Isolation::RepeatableRead),
        foreign_keys: o.foreign_keys.unwrap_or(true),
        check: o.check.unwrap_or(true),
        load: true,
        seed: o.seed.unwrap_or(DEFAULT_SEED),
    })
}

/// The seconds measured in each run step and those of its ramp-up, bounded.
fn durations(p: &TpccPreset, o: &TpccOverrides) -> anyhow::Result<(u64, u64)> {
    let run_seconds = o.run_seconds.unwrap_or(p.run_seconds);
    if !(1..=MOST_SECONDS).contains(&run_seconds) {
        return bad_input(format!(
            "--run-seconds must be between 1 and {MOST_SECONDS} (a year)"
        ));
    }
    let warmup_seconds = o.rampup_seconds.unwrap_or(p.warmup_seconds);
    if warmup_seconds > MOST_SECONDS {
        return bad_input(format!(
            "--rampup-seconds must be at most {MOST_SECONDS} (a year)"
        ));
    }
    Ok((run_seconds, warmup_seconds))
}

/// The presets as `--list-presets` shows them.
pub fn listing() -> Listing {
    Listing {
        header: [
            "TPC-C preset",
            "warehouses",
            "connections",
            "run s",
            "ramp-up s",
            "description",
        ]
        .map(String::from)
        .to_vec(),
        rows: presets()
            .into_iter()
            .map(|p| {
                [
                    p.name,
                    p.warehouses.to_string(),
                    p.connections.to_string(),
                    p.run_seconds.to_string(),
                    p.warmup_seconds.to_string(),
                    p.description,
                ]
                .into_iter()
                .map(Listed::Text)
                .collect()
            })
            .collect(),
        note: "For --suite tpcc (docs/tpcc.md).\n".into(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn presets_run_from_a_smoke_test_to_the_authors_setup() {
        let names: Vec<String> = presets().into_iter().map(|p| p.name).collect();
        assert_eq!(names, ["smoke", "quick", "w10", "w100.vu1", "w100.vu6"]);
        let p = tpcc_params("w100.vu6", &TpccOverrides::default()).unwrap();
        assert_eq!((p.warehouses, p.connections.clone()), (100, vec![6]));
        assert_eq!((p.run_seconds, p.warmup_seconds), (7_200, 300));
        let e = tpcc_params("nope", &TpccOverrides::default()).unwrap_err();
        assert!(crate::error::is_bad_input(&e), "{e}");
        assert!(e.to_string().contains("it has smoke, quick"), "{e}");
    }
}
