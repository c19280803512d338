//! `pgbench -i`: its tables with pgbench 15's columns and filler widths, and its steps (`-I`,
//! default `dtgvp`): d drop, t create, g generate on the client, G generate on the server
//! (PostgreSQL), v vacuum (analyze), p primary keys, f foreign keys. The client-side generation
//! is dbperf's parallel load: connection k of n inserts its share of the accounts in
//! multi-row INSERTs (pgbench COPYs them on one connection); the first also the branches and
//! tellers. The data is pgbench's, which draws no random numbers: balances 0, the accounts'
//! filler blank, the branches' and tellers' NULL.

use std::fmt::Write;
use std::sync::Arc;

use super::{ACCOUNTS, BRANCHES, INSERT, TELLERS};
use crate::dbms::{Conn, Dbms, SqlDialect};
use crate::runner::{ErrorClass, OpError, OpOutcome, Role};

pub const TABLES: [&str; 4] = [
    "pgbench_branches",
    "pgbench_tellers",
    "pgbench_accounts",
    "pgbench_history",
];

/// One of `-I`'s letters.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum InitStep {
    Drop,
    Tables,
    ClientGenerate,
    ServerGenerate,
    Vacuum,
    PrimaryKeys,
    ForeignKeys,
}

impl InitStep {
    pub fn of(letter: char) -> Option<InitStep> {
        Some(match letter {
            'd' => InitStep::Drop,
            't' => InitStep::Tables,
            'g' => InitStep::ClientGenerate,
            'G' => InitStep::ServerGenerate,
            'v' => InitStep::Vacuum,
            'p' => InitStep::PrimaryKeys,
            'f' => InitStep::ForeignKeys,
            _ => return None,
        })
    }

    /// What pgbench -i prints for it.
    pub fn name(self) -> &'static str {
        match self {
            InitStep::Drop => "drop tables",
            InitStep::Tables => "create tables",
            InitStep::ClientGenerate => "client-side generate",
            InitStep::ServerGenerate => "server-side generate",
            InitStep::Vacuum => "vacuum",
            InitStep::PrimaryKeys => "primary keys",
            InitStep::ForeignKeys => "foreign keys",
        }
    }

    pub fn generates(self) -> bool {
        matches!(self, InitStep::ClientGenerate | InitStep::ServerGenerate)
    }
}

/// The steps of an `-I` string, or the letter that is none.
pub fn steps_of(letters: &str) -> Result<Vec<InitStep>, String> {
    let mut out = Vec::new();
    for c in letters.chars().filter(|c| *c != ' ') {
        match InitStep::of(c) {
            Some(s) => out.push(s),
            None => {
                return Err(format!(
                    "--init-steps: {} is not an init step (they are d, t, g, G, v, p, f)",
                    crate::untrusted::shown(&c.to_string())
                ))
            }
        }
    }
    if out.iter().filter(|s| s.generates()).count() > 1 {
        return Err("--init-steps: generate the data once (g or G, not both)".into());
    }
    Ok(out)
}

/// Why `step` cannot run on `dialect`, if it cannot.
pub fn refused(step: InitStep, d: SqlDialect) -> Option<&'static str> {
    match (step, d) {
        (InitStep::ServerGenerate, SqlDialect::Postgres | SqlDialect::Null) => None,
        (InitStep::ServerGenerate, _) => Some("G (server-side generate) needs PostgreSQL"),
        (InitStep::ForeignKeys, SqlDialect::Sqlite) => {
            Some("f (foreign keys) cannot be added to SQLite tables after they are made")
        }
        _ => None,
    }
}

/// The statements of one init step other than the generation.
pub fn statements(step: InitStep, d: SqlDialect, scale: u64, fillfactor: u64) -> Vec<String> {
    let list = TABLES.join(", ");
    match step {
        InitStep::Drop => match d {
            SqlDialect::Sqlite => TABLES
                .iter()
                .map(|t| format!("drop table if exists {t}"))
                .collect(),
            _ => vec![format!(
                "drop table if exists pgbench_accounts, pgbench_branches, pgbench_history, \
                 pgbench_tellers"
            )],
        },
        InitStep::Tables => create(d, scale, fillfactor),
        InitStep::Vacuum => match d {
            SqlDialect::Postgres | SqlDialect::Null => TABLES
                .iter()
                .map(|t| format!("vacuum analyze {t}"))
                .collect(),
            SqlDialect::MySql(_) => vec![format!("analyze table {list}")],
            SqlDialect::Sqlite => vec!["analyze".into()],
        },
        InitStep::PrimaryKeys => [
            ("pgbench_branches", "bid"),
            ("pgbench_tellers", "tid"),
            ("pgbench_accounts", "aid"),
        ]
        .iter()
        .map(|(t, c)| match d {
            SqlDialect::Sqlite => format!("create unique index {t}_pkey on {t} ({c})"),
            _ => format!("alter table {t} add primary key ({c})"),
        })
        .collect(),
        InitStep::ForeignKeys => [
            ("pgbench_tellers", "bid", "pgbench_branches", "bid"),
            ("pgbench_accounts", "bid", "pgbench_branches", "bid"),
            ("pgbench_history", "bid", "pgbench_branches", "bid"),
            ("pgbench_history", "tid", "pgbench_tellers", "tid"),
            ("pgbench_history", "aid", "pgbench_accounts", "aid"),
        ]
        .iter()
        .map(|(t, c, r, rc)| {
            format!("alter table {t} add constraint {t}_{c}_fkey foreign key ({c}) references {r} ({rc})")
        })
        .collect(),
        InitStep::ClientGenerate | InitStep::ServerGenerate => Vec::new(),
    }
}

/// pgbench's four tables, in its order, with its columns; accounts' aid is a bigint from
/// scale 20,000 on, as pgbench makes it.
fn create(d: SqlDialect, scale: u64, fillfactor: u64) -> Vec<String> {
    let aid = if scale >= 20_000 { "bigint" } else { "int" };
    let tables = [
        (
            "pgbench_history",
            format!("tid int,bid int,aid {aid},delta int,mtime timestamp,filler char(22)"),
            false,
        ),
        (
            "pgbench_tellers",
            "tid int not null,bid int,tbalance int,filler char(84)".to_string(),
            true,
        ),
        (
            "pgbench_accounts",
            format!("aid {aid} not null,bid int,abalance int,filler char(84)"),
            true,
        ),
        (
            "pgbench_branches",
            "bid int not null,bbalance int,filler char(88)".to_string(),
            true,
        ),
    ];
    tables
        .iter()
        .map(|(t, cols, ff)| {
            let tail = match d {
                SqlDialect::Postgres | SqlDialect::Null if *ff => {
                    format!(" with (fillfactor={fillfactor})")
                }
                SqlDialect::MySql(s) => format!(" engine={}", s.table_engine()),
                _ => String::new(),
            };
            format!("create table {t}({cols}){tail}")
        })
        .collect()
}

/// The truncation that starts pgbench's generation.
pub fn truncate(d: SqlDialect) -> Vec<String> {
    match d {
        SqlDialect::Sqlite => TABLES.iter().map(|t| format!("delete from {t}")).collect(),
        SqlDialect::MySql(_) => TABLES
            .iter()
            .map(|t| format!("truncate table {t}"))
            .collect(),
        _ => vec![format!(
            "truncate table pgbench_accounts, pgbench_branches, pgbench_history, pgbench_tellers"
        )],
    }
}

/// pgbench's server-side generation (G), for PostgreSQL.
fn server_generate(scale: u64) -> Vec<String> {
    vec![
        format!(
            "insert into pgbench_branches(bid,bbalance) select bid, 0 from generate_series(1, \
             {}) as bid",
            BRANCHES * scale
        ),
        format!(
            "insert into pgbench_tellers(tid,bid,tbalance) select tid, (tid - 1) / {TELLERS} + \
             1, 0 from generate_series(1, {}) as tid",
            TELLERS * scale
        ),
        format!(
            "insert into pgbench_accounts(aid,bid,abalance,filler) select aid, (aid - 1) / \
             {ACCOUNTS} + 1, 0, '' from generate_series(1, {}) as aid",
            ACCOUNTS * scale
        ),
    ]
}

/// What pgbench runs before each run step unless -n: branches and tellers vacuumed, history
/// emptied (on the MySQL family and SQLite only the latter: they have no vacuum).
pub fn before_run(d: SqlDialect) -> Vec<String> {
    match d {
        SqlDialect::Postgres | SqlDialect::Null => vec![
            "vacuum pgbench_branches".into(),
            "vacuum pgbench_tellers".into(),
            "truncate pgbench_history".into(),
        ],
        SqlDialect::MySql(_) => vec!["truncate table pgbench_history".into()],
        SqlDialect::Sqlite => vec!["delete from pgbench_history".into()],
    }
}

/// Rows per INSERT: 1,000 accounts are about 100 KB of SQL.
const BATCH: u64 = 1_000;

/// The rows the init inserts at `scale`.
pub fn planned_rows(scale: u64) -> u64 {
    (BRANCHES + TELLERS + ACCOUNTS) * scale
}

/// One loading connection: its share of the accounts, and for the first the branches and
/// tellers; or, for G, the server's three statements.
pub struct Loader {
    conn: Box<dyn Conn>,
    /// Statements still to send whole (the branches and tellers, or G's).
    whole: Vec<(String, u64)>,
    /// The next account and the last of this connection's.
    next: u64,
    last: u64,
    sql: String,
}

impl Loader {
    /// Connection `k` of `n` at `scale`; `server` for G (only the first connection works).
    pub fn new(
        dbms: &Arc<dyn Dbms>,
        scale: u64,
        k: u64,
        n: u64,
        server: bool,
    ) -> anyhow::Result<Loader> {
        let mut conn = dbms.connect()?;
        conn.set_budget(crate::dbms::Budget::Long);
        let total = ACCOUNTS * scale;
        let (mut next, mut last) = (k * total / n + 1, (k + 1) * total / n);
        let mut whole = Vec::new();
        if server {
            (next, last) = (1, 0);
            if k == 0 {
                let rows = [BRANCHES * scale, TELLERS * scale, ACCOUNTS * scale];
                whole = server_generate(scale).into_iter().zip(rows).collect();
            }
        } else if k == 0 {
            whole = small_tables(scale);
        }
        whole.reverse();
        Ok(Loader {
            conn,
            whole,
            next,
            last,
            sql: String::with_capacity(128 * BATCH as usize),
        })
    }

    /// A connection with nothing to insert (an init without g or G).
    pub fn none(dbms: &Arc<dyn Dbms>) -> anyhow::Result<Loader> {
        Ok(Loader {
            conn: dbms.connect()?,
            whole: Vec::new(),
            next: 1,
            last: 0,
            sql: String::new(),
        })
    }

    fn fill_accounts(&mut self) -> u64 {
        self.sql.clear();
        self.sql
            .push_str("insert into pgbench_accounts(aid,bid,abalance,filler) values ");
        let end = (self.next + BATCH - 1).min(self.last);
        for aid in self.next..=end {
            if aid > self.next {
                self.sql.push(',');
            }
            let _ = write!(self.sql, "({aid},{},0,'')", (aid - 1) / ACCOUNTS + 1);
        }
        let rows = end + 1 - self.next;
        self.next = end + 1;
        rows
    }
}

/// The branches' and tellers' INSERTs, a batch each, with their rows.
fn small_tables(scale: u64) -> Vec<(String, u64)> {
    let mut out = Vec::new();
    let batches = |n: u64| {
        (1..=n)
            .step_by(BATCH as usize)
            .map(move |s| (s, (s + BATCH - 1).min(n)))
    };
    for (from, to) in batches(BRANCHES * scale) {
        let rows: Vec<String> = (from..=to).map(|b| format!("({b},0)")).collect();
        out.push((
            format!(
                "insert into pgbench_branches(bid,bbalance) values {}",
                rows.join(",")
            ),
            to + 1 - from,
        ));
    }
    for (from, to) in batches(TELLERS * scale) {
        let rows: Vec<String> = (from..=to)
            .map(|t| format!("({t},{},0)", (t - 1) / TELLERS + 1))
            .collect();
        out.push((
            format!(
                "insert into pgbench_tellers(tid,bid,tbalance) values {}",
                rows.join(",")
            ),
            to + 1 - from,
        ));
    }
    out
}

impl Role for Loader {
    fn op(&mut self) -> Result<OpOutcome, OpError> {
        let rows = if let Some((sql, rows)) = self.whole.pop() {
            self.sql = sql;
            rows
        } else if self.next <= self.last {
            self.fill_accounts()
        } else {
            return Ok(OpOutcome::Finished);
        };
        match self.conn.run_text(&self.sql) {
            Ok(_) => Ok(OpOutcome::Done { kind: INSERT, rows }),
            Err(e) => Err(OpError {
                kind: INSERT,
                class: ErrorClass::Failed,
                cause: Some(e.as_cause()),
                message: e.message,
            }),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn init_steps_read_as_pgbench_reads_them() {
        use InitStep::*;
        assert_eq!(
            steps_of("dtgvp").unwrap(),
            [Drop, Tables, ClientGenerate, Vacuum, PrimaryKeys]
        );
        assert!(steps_of("dtx")
            .unwrap_err()
            .contains("\"x\" is not an init step"));
        assert!(steps_of("gG").unwrap_err().contains("once"));
        assert!(refused(ServerGenerate, SqlDialect::Sqlite).is_some());
        assert!(refused(ServerGenerate, SqlDialect::Postgres).is_none());
    }

    #[test]
    fn tables_have_pgbenchs_columns_and_fillfactor() {
        let t = create(SqlDialect::Postgres, 1, 90);
        assert_eq!(
            t[2],
            "create table pgbench_accounts(aid int not null,bid int,abalance int,filler \
             char(84)) with (fillfactor=90)"
        );
        assert!(!t[0].contains("fillfactor"), "history has none");
        assert!(create(SqlDialect::Postgres, 20_000, 100)[2].contains("aid bigint"));
        use crate::dbms::mysql::Storage;
        assert!(create(SqlDialect::MySql(Storage::RocksDb), 1, 100)[3].ends_with("engine=rocksdb"));
    }

    #[test]
    fn the_small_tables_have_a_row_per_branch_and_ten_tellers_each() {
        let s = small_tables(2);
        assert_eq!(s.iter().map(|x| x.1).collect::<Vec<_>>(), [2, 20]);
        assert!(s[1].0.ends_with("(19,2,0),(20,2,0)"), "{}", s[1].0);
        assert_eq!(planned_rows(1), 100_011);
    }
}
