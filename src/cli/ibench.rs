//! `dbperf run --suite ibench`: the Insert Benchmark's flags.

use clap::{Args, ValueEnum};

use super::flags::OnOff;
use crate::spec::ibench::{DeleteForm, StatementForms};
use crate::spec::{self, ibench::IbenchOverrides};

#[derive(Clone, Copy, Debug, ValueEnum, PartialEq)]
pub enum DeleteFormArg {
    /// 2024 form: delete the N lowest PKs at or above the estimated minimum.
    Current,
    /// Pre-2024 form: delete the PK range [min, min + N).
    Old,
}

#[derive(Clone, Copy, Debug, ValueEnum, PartialEq)]
pub enum StatementFormsArg {
    /// What the original sends on each engine.
    Original,
    /// Every statement prepared.
    Prepared,
}

/// Flags of the Insert Benchmark (`--suite ibench`, the default): the group `ibench` holds
/// them all.
#[derive(Args, Debug)]
#[group(id = super::given::IBENCH, multiple = true)]
pub struct IbenchArgs {
    /// Steps to run, comma-separated, always in benchmark order
    /// (l.i0,l.x,l.i1,l.i2,qr100,qp100,qr500,qp500,qr1000,qp1000).
    #[arg(long, value_delimiter = ',', value_name = "STEPS")]
    pub steps: Option<Vec<String>>,

    /// Number of clients; each has its own connections (1 for loads, 2 for l.i1/l.i2, 3 for
    /// qr/qp) and, unless --shared-table, its own table piN. A list (`1,4`) is a sweep: each
    /// level is its own cell with a fresh load (rows are per client, so the data grows with the
    /// level unless --shared-table).
    #[arg(long, value_name = "N[,N...]", value_parser = spec::parse_levels)]
    pub clients: Option<spec::Levels>,

    /// All clients share table pi1 (the original's only1t=yes). Turns deletes off.
    #[arg(long)]
    pub shared_table: bool,

    /// Delete as many rows as are inserted in l.i1, l.i2 and qr/qp, so tables stay the same size
    /// [default: on, off with --shared-table].
    #[arg(long, value_enum)]
    pub deletes: Option<OnOff>,

    /// Delete statement form.
    #[arg(long, value_enum, default_value = "current")]
    pub delete_form: DeleteFormArg,

    /// Which statements are prepared: `original` sends what the original's iibench.py sends
    /// (INSERTs and DELETEs as SQL text, queries prepared on PostgreSQL and SQLite and as text
    /// on MySQL/MariaDB); `prepared` prepares every statement [default: original].
    #[arg(long, value_enum, value_name = "FORMS")]
    pub statement_forms: Option<StatementFormsArg>,

    /// Rows each client inserts in l.i0 (suffixes k, M, G allowed).
    #[arg(long, value_parser = spec::parse_count, value_name = "ROWS")]
    pub rows_l_i0: Option<u64>,

    /// Rows each client inserts in l.i1.
    #[arg(long, value_parser = spec::parse_count, value_name = "ROWS")]
    pub rows_l_i1: Option<u64>,

    /// Rows each client inserts in l.i2.
    #[arg(long, value_parser = spec::parse_count, value_name = "ROWS")]
    pub rows_l_i2: Option<u64>,

    /// Nominal seconds of each qr/qp step: the background inserter must insert this many
    /// seconds' worth of rows at its rate, so a DBMS that cannot keep up takes longer.
    #[arg(long, value_parser = spec::parse_count, value_name = "SECONDS")]
    pub query_seconds: Option<u64>,

    /// Background insert rates per client in rows/s, one qr/qp pair each.
    #[arg(long, value_delimiter = ',', value_parser = spec::parse_count, value_name = "RATES")]
    pub rates: Option<Vec<u64>>,

    /// Budget of the cleanup + wait after l.i2 [default: preset's, else the original's
    /// min(1200, 60 + l.i0 rows / 1e6)].
    #[arg(long, value_parser = spec::parse_count, value_name = "SECONDS")]
    pub wait_seconds: Option<u64>,

    /// Shortest data column value [default: 10].
    #[arg(long, value_name = "CHARS")]
    pub data_length_min: Option<u64>,

    /// Longest data column value [default: 20].
    #[arg(long, value_name = "CHARS")]
    pub data_length_max: Option<u64>,

    /// Share of the data column that is random (the rest is 'a's) [default: 50].
    #[arg(long, value_name = "PCT")]
    pub data_random_pct: Option<u64>,

    /// Re-read min(transactionid) every N delete rounds; 0 = only once [default: 1000].
    #[arg(long, value_name = "N")]
    pub resync_get_min: Option<u64>,

    /// LIMIT of range queries and IN-list length of point queries [default: 10].
    #[arg(long, value_name = "N")]
    pub rows_per_query: Option<u64>,
}

impl IbenchArgs {
    /// The Insert Benchmark's flags, at `clients` (one level of a sweep, or the one count given).
    pub fn overrides(&self, clients: Option<u64>, seed: Option<u64>) -> IbenchOverrides {
        IbenchOverrides {
            clients,
            shared_table: self.shared_table,
            deletes: self.deletes.map(|d| d == OnOff::On),
            delete_form: Some(match self.delete_form {
                DeleteFormArg::Current => DeleteForm::Current,
                DeleteFormArg::Old => DeleteForm::Old,
            }),
            rows_l_i0: self.rows_l_i0,
            rows_l_i1: self.rows_l_i1,
            rows_l_i2: self.rows_l_i2,
            query_seconds: self.query_seconds,
            rates: self.rates.clone(),
            wait_seconds: self.wait_seconds,
            seed,
            data_length_min: self.data_length_min,
            data_length_max: self.data_length_max,
            data_random_pct: self.data_random_pct,
            resync_get_min: self.resync_get_min,
            rows_per_query: self.rows_per_query,
            steps: self.steps.clone(),
            statement_forms: self.statement_forms.map(|f| match f {
                StatementFormsArg::Original => StatementForms::Original,
                StatementFormsArg::Prepared => StatementForms::Prepared,
            }),
        }
    }
}
