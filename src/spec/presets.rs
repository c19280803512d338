//! Presets are data (`presets.toml`, compiled in) so adding one is adding a table there.

use serde::Deserialize;

use crate::error::bad_input;

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

pub fn all() -> Vec<Preset> {
    let table: toml::Table = toml::from_str(PRESETS_TOML).expect("presets.toml parses");
    table
        .into_iter()
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
}
