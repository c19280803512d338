//! `dbperf run --suite tpcc`: its flags and presets (docs/tpcc.md).

use clap::Args;

use super::flags::OnOff;
use crate::error::bad_input;
use crate::spec;
use crate::workload::tpcc::{self, Isolation, Mix, TpccParams, PRESETS};

/// Flags of TPC-C (`--suite tpcc`): the group `tpcc` holds them all.
#[derive(Args, Debug, Default)]
#[command(next_help_heading = "TPC-C (--suite tpcc)")]
#[group(id = crate::suites::Suite::Tpcc.name(), multiple = true)]
pub struct TpccArgs {
    /// Warehouses loaded (about 100 MB each) and drawn from [default: preset's].
    #[arg(long, value_parser = spec::parse_count, value_name = "N")]
    pub warehouses: Option<u64>,

    /// Connections running transactions (HammerDB's virtual users, sysbench-tpcc's threads), or
    /// a list for a sweep (`1,2,8`: a run step at each count, after one load) [default:
    /// preset's].
    #[arg(long, value_name = "N[,N...]", value_parser = spec::parse_levels)]
    pub connections: Option<spec::Levels>,

    /// Connections loading warehouses in parallel (one on SQLite) [default: --connections'
    /// largest].
    #[arg(long, value_name = "N")]
    pub load_connections: Option<u64>,

    /// Seconds measured in each run step, after its ramp-up [default: preset's].
    #[arg(long, value_parser = spec::parse_count, value_name = "SECONDS")]
    pub run_seconds: Option<u64>,

    /// Seconds of transactions at the start of each run step that are not counted (HammerDB's
    /// ramp-up) [default: preset's].
    #[arg(long, value_parser = spec::parse_count, value_name = "SECONDS")]
    pub rampup_seconds: Option<u64>,

    /// Which share of each transaction: `standard` (New-Order 45%, Payment 43%, the others 4%
    /// each) or `sysbench` (sysbench-tpcc's 10:10:1:1:1) [default: standard].
    #[arg(long, value_enum)]
    pub mix: Option<Mix>,

    /// Isolation level of every connection, as sysbench-tpcc's --trx_level (not set on SQLite,
    /// always serializable) [default: rr].
    #[arg(long, value_enum)]
    pub isolation: Option<Isolation>,

    /// sysbench-tpcc's foreign keys, added after the load (PostgreSQL checks them; MySQL and
    /// MariaDB connections turn the checks off as sysbench-tpcc's do; none on SQLite or MyRocks)
    /// [default: on].
    #[arg(long, value_enum, value_name = "ON|OFF")]
    pub foreign_keys: Option<OnOff>,

    /// Check the specification's consistency conditions after each run step (untimed; reads
    /// whole tables) [default: on].
    #[arg(long, value_enum, value_name = "ON|OFF")]
    pub check: Option<OnOff>,
}

impl TpccArgs {
    /// The parameters after preset and flags.
    pub fn params(&self, preset: &str, seed: Option<u64>) -> anyhow::Result<TpccParams> {
        let Some(p) = tpcc::preset(preset) else {
            let names: Vec<&str> = PRESETS.iter().map(|p| p.name).collect();
            return bad_input(format!(
                "TPC-C has no preset {}; it has {}",
                crate::untrusted::shown(preset),
                names.join(", ")
            ));
        };
        let warehouses = self.warehouses.unwrap_or(p.warehouses);
        // Warehouse ids are smallint columns, as sysbench-tpcc creates them.
        if !(1..=i16::MAX as u64).contains(&warehouses) {
            return bad_input(format!(
                "--warehouses must be between 1 and {} (warehouse ids are smallint columns)",
                i16::MAX
            ));
        }
        let connections = match &self.connections {
            Some(l) => l.0.clone(),
            None => vec![p.connections],
        };
        let most = connections.iter().copied().max().unwrap_or(1);
        if most > 1024 {
            return bad_input("--connections must be at most 1024");
        }
        let load_connections = self.load_connections.unwrap_or(most);
        if load_connections == 0 || load_connections > 1024 {
            return bad_input("--load-connections must be between 1 and 1024");
        }
        // A year: longer than any run, short enough that no deadline computed from it overflows.
        const MOST_SECONDS: u64 = 366 * 24 * 3600;
        let run_seconds = self.run_seconds.unwrap_or(p.run_seconds);
        if !(1..=MOST_SECONDS).contains(&run_seconds) {
            return bad_input(format!(
                "--run-seconds must be between 1 and {MOST_SECONDS} (a year)"
            ));
        }
        let warmup_seconds = self.rampup_seconds.unwrap_or(p.warmup_seconds);
        if warmup_seconds > MOST_SECONDS {
            return bad_input(format!(
                "--rampup-seconds must be at most {MOST_SECONDS} (a year)"
            ));
        }
        Ok(TpccParams {
            preset: p.name.to_string(),
            warehouses,
            connections,
            load_connections,
            run_seconds,
            warmup_seconds,
            mix: self.mix.unwrap_or(Mix::Standard),
            isolation: self.isolation.unwrap_or(Isolation::RepeatableRead),
            foreign_keys: self.foreign_keys != Some(OnOff::Off),
            check: self.check != Some(OnOff::Off),
            load: true,
            seed: seed.unwrap_or(spec::DEFAULT_SEED),
        })
    }
}

/// The TPC-C presets, for --list-presets.
pub fn preset_table() -> comfy_table::Table {
    let mut t = comfy_table::Table::new();
    t.load_style(comfy_table::presets::UTF8_FULL_CONDENSED);
    t.set_header([
        "TPC-C preset",
        "warehouses",
        "connections",
        "run s",
        "ramp-up s",
        "description",
    ]);
    for p in PRESETS {
        t.add_row([
            p.name.to_string(),
            p.warehouses.to_string(),
            p.connections.to_string(),
            p.run_seconds.to_string(),
            p.warmup_seconds.to_string(),
            p.about.to_string(),
        ]);
    }
    t
}
