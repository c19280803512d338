//! Presets are data (`presets.toml`, compiled in) so adding one is adding a table there.

use serde::Deserialize;

use crate::error::bad_input;

/// The built-in SQLite configs (`--target sqlite:NAME`), for listing with the presets.
pub use crate::dbms::sqlite::CONFIGS as SQLITE_CONFIGS;

/// The built-in published server configs (`--target postgres@16:cx9a2`), for listing with the
/// presets: the config's name, its target (engine and storage engine), the versions it is
/// for, and the mytools file of the newest of them.
pub fn server_configs() -> Vec<[String; 4]> {
    crate::server::configs::published_list()
        .into_iter()
        .map(|c| {
            let mut target = c.kind.engine().name().to_string();
            if c.rocksdb {
                target.push_str("+rocksdb");
            }
            [
                c.name.to_string(),
                target,
                c.versions.to_string(),
                c.source.to_string(),
            ]
        })
        .collect()
}

#[derive(Debug, Clone, Deserialize, serde::Serialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct Preset {
    #[serde(skip_deserializing)]
    pub name: String,
    pub description: String,
    pub rows_l_i0: u64,
    pub rows_l_i1: u64,
    pub rows_l_i2: u64,
    pub query_seconds: u64,
    pub wait_seconds: Option<u64>,
}

const PRESETS_TOML: &str = include_str!("presets.toml");

/// The table of sysbench presets inside presets.toml.
const SYSBENCH: &str = "sysbench";

/// A sysbench preset: the setup (threads, tables) and the sizes and durations.
#[derive(Debug, Clone, Deserialize, serde::Serialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct SysbenchPreset {
    #[serde(skip_deserializing)]
    pub name: String,
    pub description: String,
    pub threads: u64,
    pub tables: u64,
    pub rows: u64,
    pub read_seconds: u64,
    pub write_seconds: u64,
    pub warm_seconds: u64,
    pub warmup_seconds: u64,
    pub postwrite_seconds: Option<u64>,
}

pub fn sysbench_all() -> Vec<SysbenchPreset> {
    let mut table: toml::Table = toml::from_str(PRESETS_TOML).expect("presets.toml parses");
    let Some(toml::Value::Table(sb)) = table.remove(SYSBENCH) else {
        return Vec::new();
    };
    sb.into_iter()
        .map(|(name, v)| {
            let mut p: SysbenchPreset = v.try_into().expect("sysbench preset fields");
            p.name = name;
            p
        })
        .collect()
}

pub fn sysbench_get(name: &str) -> anyhow::Result<SysbenchPreset> {
    let all = sysbench_all();
    match all.iter().find(|p| p.name == name) {
        Some(p) => Ok(p.clone()),
        None => {
            let names: Vec<&str> = all.iter().map(|p| p.name.as_str()).collect();
            bad_input(format!(
                "unknown sysbench preset '{name}'; sysbench presets are: {} (see dbperf run \
                 --list-presets)",
                names.join(", ")
            ))
        }
    }
}

pub fn all() -> Vec<Preset> {
    let table: toml::Table = toml::from_str(PRESETS_TOML).expect("presets.toml parses");
    table
        .into_iter()
        .filter(|(name, _)| name != SYSBENCH)
        .map(|(name, v)| {
            let mut p: Preset = v.try_into().expect("preset fields");
            p.name = name;
            p
        })
        .collect()
}

pub fn get(name: &str) -> anyhow::Result<Preset> {
    let all = all();
    match all.iter().find(|p| p.name == name) {
        Some(p) => Ok(p.clone()),
        None => {
            let names: Vec<&str> = all.iter().map(|p| p.name.as_str()).collect();
            bad_input(format!(
                "unknown preset '{name}'; presets are: {} (see dbperf run --list-presets)",
                names.join(", ")
            ))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn presets_parse_and_quick_comes_first() {
        let all = all();
        assert_eq!(all[0].name, "quick");
        let cs = get("cached-small").unwrap();
        assert_eq!(
            (cs.rows_l_i0, cs.rows_l_i1, cs.rows_l_i2),
            (30_000_000, 40_000_000, 10_000_000)
        );
        assert_eq!(cs.query_seconds, 1800);
        assert_eq!(
            cs.wait_seconds, None,
            "full scale uses the original's formula"
        );
        assert!(crate::error::is_bad_input(&get("nope").unwrap_err()));
    }

    #[test]
    fn sysbench_presets_are_the_blogs_setups() {
        let names: Vec<String> = sysbench_all().into_iter().map(|p| p.name).collect();
        assert_eq!(names, ["quick", "1u.1t", "4u.1t", "4u.4t"]);
        let p = sysbench_get("4u.4t").unwrap();
        assert_eq!((p.threads, p.tables), (4, 4));
        assert!(all().iter().all(|p| p.name != "sysbench"));
        assert!(crate::error::is_bad_input(
            &sysbench_get("cached-small").unwrap_err()
        ));
    }
}
