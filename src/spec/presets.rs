//! Presets are data (`presets.toml`, compiled in, one table per suite named as the suite is) so
//! adding one is adding a table there; each suite's module of `spec` reads its own.

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
            let mut target = c.engine.name().to_string();
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
    /// Fixed in most presets; set from the memory cap in one `sized_by_cap`.
    #[serde(default)]
    pub rows_l_i0: u64,
    #[serde(default)]
    pub rows_l_i1: u64,
    #[serde(default)]
    pub rows_l_i2: u64,
    pub query_seconds: u64,
    pub wait_seconds: Option<u64>,
    /// IO-bound at any size: the rows follow from `--server-memory` when the run is planned.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sized_by_cap: Option<CapSizing>,
}

/// How a preset's data is sized from the server's memory cap: `data_multiple` times the cap at
/// `row_bytes` per row (table and indexes, as the engines store a row of the suite), so the data
/// cannot stay in memory. The Insert Benchmark's l.i1 and l.i2 insert a fraction of l.i0, as
/// the original's IO-bound setup does (800M rows, then 4M and 1M).
#[derive(Debug, Clone, Copy, Deserialize, serde::Serialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct CapSizing {
    pub data_multiple: u64,
    pub row_bytes: u64,
    #[serde(default)]
    pub l_i1_divisor: Option<u64>,
    #[serde(default)]
    pub l_i2_divisor: Option<u64>,
}

impl CapSizing {
    /// Rows that hold `data_multiple` times `cap` bytes.
    pub fn rows(&self, cap: u64) -> u64 {
        (cap / self.row_bytes.max(1)).saturating_mul(self.data_multiple)
    }
}

/// A preset sized from the cap needs one: refused with a sentence that says so.
fn needs_cap(name: &str) -> anyhow::Error {
    crate::error::BadInput(format!(
        "preset {name} sizes its data from the server's memory cap: give --server-memory (e.g. \
         --server-memory 512M, as root; docs/io-bound.md)"
    ))
    .into()
}

impl Preset {
    /// This preset for a run whose servers are capped at `cap` bytes (`--server-memory`) with
    /// `clients` clients: rows are per client, so the data of all clients is what the sizing
    /// asks for (and the same at every level of a `--clients` sweep).
    pub fn for_cap(mut self, cap: Option<u64>, clients: u64) -> anyhow::Result<Preset> {
        let Some(sizing) = self.sized_by_cap else {
            return Ok(self);
        };
        let Some(cap) = cap else {
            return Err(needs_cap(&self.name));
        };
        let rows = (sizing.rows(cap) / clients.max(1)).max(1);
        self.rows_l_i0 = rows;
        self.rows_l_i1 = (rows / sizing.l_i1_divisor.unwrap_or(1).max(1)).max(1);
        self.rows_l_i2 = (rows / sizing.l_i2_divisor.unwrap_or(1).max(1)).max(1);
        Ok(self)
    }
}

const PRESETS_TOML: &str = include_str!("presets.toml");

/// A sysbench preset: the setup (threads, tables) and the sizes and durations.
#[derive(Debug, Clone, Deserialize, serde::Serialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct SysbenchPreset {
    #[serde(skip_deserializing)]
    pub name: String,
    pub description: String,
    pub threads: u64,
    pub tables: u64,
    /// Per table; set from the memory cap in one `sized_by_cap`.
    #[serde(default)]
    pub rows: u64,
    pub read_seconds: u64,
    pub write_seconds: u64,
    pub warm_seconds: u64,
    pub warmup_seconds: u64,
    pub postwrite_seconds: Option<u64>,
    /// IO-bound at any size: `rows` follows from `--server-memory` when the run is planned.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sized_by_cap: Option<CapSizing>,
}

impl SysbenchPreset {
    /// This preset for a run whose servers are capped at `cap` bytes: rows per table so that
    /// all tables together (`tables`, the preset's unless `--tables` says otherwise) hold the
    /// data the sizing asks for.
    pub fn for_cap(
        mut self,
        cap: Option<u64>,
        tables: Option<u64>,
    ) -> anyhow::Result<SysbenchPreset> {
        let Some(sizing) = self.sized_by_cap else {
            return Ok(self);
        };
        let Some(cap) = cap else {
            return Err(needs_cap(&self.name));
        };
        self.rows = (sizing.rows(cap) / tables.unwrap_or(self.tables).max(1)).max(1);
        Ok(self)
    }
}

/// A suite's presets as `dbperf run --list-presets` shows them: a table and a line after it.
pub struct Listing {
    pub header: Vec<String>,
    pub rows: Vec<Vec<Listed>>,
    pub note: String,
}

/// One cell of a listing.
pub enum Listed {
    Text(String),
    /// A count of rows, the CLI's to format; None when it is sized from a memory cap that was
    /// not given ("from cap").
    Rows(Option<u64>),
}

impl From<String> for Listed {
    fn from(s: String) -> Listed {
        Listed::Text(s)
    }
}

/// A preset's row count for a listing: unknown when it is sized from the memory cap and none
/// was given.
pub fn listed_rows(sized: bool, cap: Option<u64>, n: u64) -> Listed {
    Listed::Rows((!sized || cap.is_some()).then_some(n))
}

/// A suite's presets in the order presets.toml gives them, each named by its table's key.
pub fn of_suite<P: serde::de::DeserializeOwned + Named>(suite: crate::suites::Suite) -> Vec<P> {
    let mut table: toml::Table = toml::from_str(PRESETS_TOML).expect("presets.toml parses");
    let Some(toml::Value::Table(presets)) = table.remove(suite.name()) else {
        return Vec::new();
    };
    presets
        .into_iter()
        .map(|(name, v)| {
            let mut p: P = v.try_into().expect("preset fields");
            p.set_name(name);
            p
        })
        .collect()
}

/// A preset of presets.toml: named by its table's key.
pub trait Named {
    fn name(&self) -> &str;
    fn set_name(&mut self, name: String);
}

/// `name` among `all`, or None.
fn find<P: Named + Clone>(all: &[P], name: &str) -> Option<P> {
    all.iter().find(|p| p.name() == name).cloned()
}

/// The names of `all`, for a sentence that offers them.
pub fn names<P: Named>(all: &[P]) -> String {
    all.iter().map(Named::name).collect::<Vec<_>>().join(", ")
}

macro_rules! named {
    ($t:ty) => {
        impl Named for $t {
            fn name(&self) -> &str {
                &self.name
            }
            fn set_name(&mut self, name: String) {
                self.name = name;
            }
        }
    };
}
named!(Preset);
named!(SysbenchPreset);

pub fn sysbench_all() -> Vec<SysbenchPreset> {
    of_suite(crate::suites::Suite::Sysbench)
}

pub fn sysbench_get(name: &str) -> anyhow::Result<SysbenchPreset> {
    let all = sysbench_all();
    match find(&all, name) {
        Some(p) => Ok(p),
        None => bad_input(format!(
            "unknown sysbench preset '{name}'; sysbench presets are: {} (see dbperf run \
             --list-presets)",
            names(&all)
        )),
    }
}

/// The Insert Benchmark's presets.
pub fn all() -> Vec<Preset> {
    of_suite(crate::suites::Suite::Ibench)
}

pub fn get(name: &str) -> anyhow::Result<Preset> {
    let all = all();
    match find(&all, name) {
        Some(p) => Ok(p),
        None => bad_input(format!(
            "unknown preset '{name}'; presets are: {} (see dbperf run --list-presets)",
            names(&all)
        )),
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
        assert_eq!(names, ["quick", "1u.1t", "4u.1t", "4u.4t", "io-bound"]);
        let p = sysbench_get("4u.4t").unwrap();
        assert_eq!((p.threads, p.tables), (4, 4));
        assert!(all().iter().all(|p| p.name != "sysbench"));
        assert!(crate::error::is_bad_input(
            &sysbench_get("cached-small").unwrap_err()
        ));
    }

    /// Issue 34: the io-bound presets hold about four times the cap, and without a cap they
    /// are refused with a sentence rather than run at some size.
    #[test]
    fn io_bound_presets_are_sized_from_the_cap() {
        let ib = get("io-bound")
            .unwrap()
            .for_cap(Some(512 << 20), 1)
            .unwrap();
        // Rows are per client: two clients hold the same data as one.
        let two = get("io-bound")
            .unwrap()
            .for_cap(Some(512 << 20), 2)
            .unwrap();
        assert_eq!(two.rows_l_i0, ib.rows_l_i0 / 2);
        assert_eq!(ib.rows_l_i0, (512 << 20) / 300 * 4);
        assert_eq!(ib.rows_l_i1, ib.rows_l_i0 / 100);
        assert_eq!(ib.rows_l_i2, ib.rows_l_i0 / 400);
        let sb = sysbench_get("io-bound")
            .unwrap()
            .for_cap(Some(512 << 20), None)
            .unwrap();
        assert_eq!(sb.rows, (512 << 20) / 250 * 4);
        // Found by an outside review: --tables 8 made eight tables of that size.
        let eight = sysbench_get("io-bound")
            .unwrap()
            .for_cap(Some(512 << 20), Some(8))
            .unwrap();
        assert_eq!(eight.rows, sb.rows / 8);
        for e in [
            get("io-bound").unwrap().for_cap(None, 1).unwrap_err(),
            sysbench_get("io-bound")
                .unwrap()
                .for_cap(None, None)
                .unwrap_err(),
        ] {
            assert!(crate::error::is_bad_input(&e), "{e}");
            assert!(e.to_string().contains("--server-memory"), "{e}");
        }
        // Every other preset is as written, capped or not.
        let q = get("quick").unwrap();
        assert_eq!(q.clone().for_cap(Some(1 << 30), 4).unwrap(), q);
    }
}
