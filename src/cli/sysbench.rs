//! `dbperf run --suite sysbench`: its flags and `--list`.

use clap::{Args, ValueEnum};

use super::flags::OnOff;
use crate::spec::{self, presets, sysbench::SysbenchOverrides};
use crate::workload::sysbench::order::RunOrder;
use crate::workload::sysbench::{KValues, SysbenchParams};

#[derive(Clone, Copy, Debug, ValueEnum, PartialEq)]
pub enum RunOrderArg {
    /// The original's current list (all_small.sh at HEAD): 32 reported tests without .pre.
    Current,
    /// The 2024 list (all_small.sh at 23aa3363): 42 reported tests.
    #[value(name = "2024")]
    Y2024,
}

#[derive(Clone, Copy, Debug, ValueEnum, PartialEq)]
pub enum KValuesArg {
    /// Uniform over [1, rows]: sysbench 1.1's default, which the original's prepare uses (it
    /// needs 1.1 and passes no --rand-type).
    Uniform,
    /// sysbench 1.0's default ("special", still an option in 1.1): 75% of k values in the
    /// middle 1% of [1, rows].
    Special,
}

/// Flags of the sysbench suite (`--suite sysbench`): the group `sysbench` holds them all.
#[derive(Args, Debug, Default)]
#[command(next_help_heading = "sysbench suite (--suite sysbench)")]
#[group(id = super::given::SYSBENCH, multiple = true)]
pub struct SysbenchArgs {
    /// Microbenchmarks to run, comma-separated: names (`read-only`, `point-query.pre`), labels
    /// (`read-only_range=100`) or globs (`'read-only*'`), always in run order; `<name>_range=<N>`
    /// with a range the run order does not have runs that test with range N too
    /// [default: the whole run order].
    #[arg(long, value_delimiter = ',', value_name = "NAMES")]
    pub tests: Option<Vec<String>>,

    /// List the microbenchmarks (with --tests, the selected ones) in run order, with their
    /// group and statements, and exit.
    #[arg(long)]
    pub list: bool,

    /// Which of the original's lists to run, in its order [default: current].
    #[arg(long, value_enum)]
    pub run_order: Option<RunOrderArg>,

    /// Connections (threads) per microbenchmark, or a list of them for a sweep (`1,2,8`: each
    /// microbenchmark runs at each count in turn, after one load); point-query.warm and the
    /// 2024 scan use one per table, as the original [default: preset's].
    #[arg(long, value_name = "N[,N...]", value_parser = spec::parse_levels)]
    pub threads: Option<spec::Levels>,

    /// Tables sbtest1..sbtestN [default: preset's].
    #[arg(long, value_name = "N")]
    pub tables: Option<u64>,

    /// Rows per table (suffixes k, M allowed) [default: preset's].
    #[arg(long, value_parser = spec::parse_count, value_name = "ROWS")]
    pub rows: Option<u64>,

    /// Seconds of each read-only microbenchmark (and of write-only, as in the original), after
    /// its warm-up [default: preset's].
    #[arg(long, value_parser = spec::parse_count, value_name = "SECONDS")]
    pub read_seconds: Option<u64>,

    /// Seconds of each write microbenchmark, after its warm-up [default: preset's].
    #[arg(long, value_parser = spec::parse_count, value_name = "SECONDS")]
    pub write_seconds: Option<u64>,

    /// Seconds of scan.warm and scan.warmpre (60 in the original) [default: preset's].
    #[arg(long, value_parser = spec::parse_count, value_name = "SECONDS")]
    pub warm_seconds: Option<u64>,

    /// sysbench's --warmup-time: seconds of uncounted events at the start of every
    /// microbenchmark (5 in the original) [default: preset's].
    #[arg(long, value_parser = spec::parse_count, value_name = "SECONDS")]
    pub warmup_seconds: Option<u64>,

    /// Budget of each "postwrite" cleanup + wait [default: preset's, else the original's
    /// min(1200, 60 + tables x rows / 1e6)].
    #[arg(long, value_parser = spec::parse_count, value_name = "SECONDS")]
    pub postwrite_seconds: Option<u64>,

    /// Prepared statements (sysbench's default); off = every statement sent as SQL text
    /// (--db-ps-mode=disable) [default: on].
    #[arg(long, value_enum, value_name = "ON|OFF")]
    pub prepared: Option<OnOff>,

    /// The original's usepk: 1 = PRIMARY KEY (id); 0 = id only in a secondary index (its Lua's
    /// --secondary: InnoDB and MyRocks cluster on a hidden row id, PostgreSQL's table has no
    /// primary key). PostgreSQL and MySQL/MariaDB targets only [default: 1].
    #[arg(long, value_name = "0|1", value_parser = clap::value_parser!(u8).range(0..=1))]
    pub usepk: Option<u8>,

    /// How the load draws k [default: uniform].
    #[arg(long, value_enum)]
    pub k_values: Option<KValuesArg>,

    /// Use the tables already there (an external server, or --work-dir from an earlier run)
    /// instead of creating and loading them.
    #[arg(long)]
    pub skip_load: bool,
}

impl SysbenchArgs {
    /// The parameters after preset and flags; `cap` (`--server-memory`) sizes a preset sized
    /// from it.
    pub fn params(
        &self,
        preset: &str,
        seed: Option<u64>,
        cap: Option<u64>,
    ) -> anyhow::Result<SysbenchParams> {
        let preset = presets::sysbench_get(preset)?.for_cap(cap, self.tables)?;
        let o = SysbenchOverrides {
            run_order: match self.run_order {
                Some(RunOrderArg::Y2024) => RunOrder::Y2024,
                _ => RunOrder::Current,
            },
            tests: self.tests.clone(),
            threads: self.threads.clone(),
            tables: self.tables,
            rows: self.rows,
            read_seconds: self.read_seconds,
            write_seconds: self.write_seconds,
            warm_seconds: self.warm_seconds,
            warmup_seconds: self.warmup_seconds,
            postwrite_seconds: self.postwrite_seconds,
            prepared: self.prepared != Some(OnOff::Off),
            usepk: self.usepk.unwrap_or(1),
            k_values: match self.k_values {
                Some(KValuesArg::Special) => KValues::Special,
                _ => KValues::Uniform,
            },
            seed,
            skip_load: self.skip_load,
        };
        spec::sysbench::sysbench_params(&preset, &o)
    }
}

/// `--list`: the selected microbenchmarks in run order.
pub fn print_list(p: &SysbenchParams) {
    let mut t = comfy_table::Table::new();
    t.load_style(comfy_table::presets::UTF8_FULL_CONDENSED);
    t.set_header([
        "#",
        "label",
        "group",
        "event",
        "stmts/event",
        "threads",
        "seconds",
        "original",
    ]);
    for (i, pl) in p.planned().iter().enumerate() {
        let e = &pl.entry;
        let b = pl.bench;
        let mut label = pl.label();
        if !e.variant.reported() {
            label.push_str(" (not reported)");
        }
        if e.postwrite {
            label.push_str(" + postwrite");
        }
        t.add_row([
            (i + 1).to_string(),
            label,
            b.group.title().to_string(),
            if b.trx { "trx" } else { "autocommit" }.to_string(),
            b.statements_per_event().to_string(),
            p.threads_of(pl).to_string(),
            p.seconds_of(e)
                .map(|s| s.to_string())
                .unwrap_or_else(|| "1 event".into()),
            b.original.to_string(),
        ]);
    }
    out!("{t}");
    out!(
        "Run order {}: the load, then these; {} reported. Groups and statements: docs/sysbench.md.",
        p.run_order.name(),
        p.planned()
            .iter()
            .filter(|x| x.entry.variant.reported())
            .count()
    );
}
