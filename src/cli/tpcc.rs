//! `dbperf run --suite tpcc`: its flags and presets (docs/tpcc.md).

use clap::Args;

use super::flags::OnOff;
use crate::spec;
use crate::workload::tpcc::{Isolation, Mix, TpccParams};

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
        let on = |f: Option<OnOff>| f.map(|x| x != OnOff::Off);
        spec::tpcc::tpcc_params(
            preset,
            &spec::tpcc::TpccOverrides {
                warehouses: self.warehouses,
                connections: self.connections.as_ref().map(|l| l.0.clone()),
                load_connections: self.load_connections,
                run_seconds: self.run_seconds,
                rampup_seconds: self.rampup_seconds,
                mix: self.mix,
                isolation: self.isolation,
                foreign_keys: on(self.foreign_keys),
                check: on(self.check),
                seed,
            },
        )
    }
}
