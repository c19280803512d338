//! pgbench's built-in scripts, as pgbench 15 holds them (`pgbench --show-script NAME`), and
//! each dialect's form: the MySQL family has no `END` (its COMMIT is the same statement);
//! PostgreSQL and SQLite run the text as it is (docs/pgbench.md, "What each engine is sent").

use serde::{Deserialize, Serialize};

use crate::dbms::SqlDialect;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum Builtin {
    #[serde(rename = "tpcb-like")]
    TpcbLike,
    #[serde(rename = "simple-update")]
    SimpleUpdate,
    #[serde(rename = "select-only")]
    SelectOnly,
}

pub const ALL: [Builtin; 3] = [
    Builtin::TpcbLike,
    Builtin::SimpleUpdate,
    Builtin::SelectOnly,
];

const TPCB_LIKE: &str = "\\set aid random(1, 100000 * :scale)
\\set bid random(1, 1 * :scale)
\\set tid random(1, 10 * :scale)
\\set delta random(-5000, 5000)
BEGIN;
UPDATE pgbench_accounts SET abalance = abalance + :delta WHERE aid = :aid;
SELECT abalance FROM pgbench_accounts WHERE aid = :aid;
UPDATE pgbench_tellers SET tbalance = tbalance + :delta WHERE tid = :tid;
UPDATE pgbench_branches SET bbalance = bbalance + :delta WHERE bid = :bid;
INSERT INTO pgbench_history (tid, bid, aid, delta, mtime) VALUES (:tid, :bid, :aid, :delta, CURRENT_TIMESTAMP);
END;
";

const SIMPLE_UPDATE: &str = "\\set aid random(1, 100000 * :scale)
\\set bid random(1, 1 * :scale)
\\set tid random(1, 10 * :scale)
\\set delta random(-5000, 5000)
BEGIN;
UPDATE pgbench_accounts SET abalance = abalance + :delta WHERE aid = :aid;
SELECT abalance FROM pgbench_accounts WHERE aid = :aid;
INSERT INTO pgbench_history (tid, bid, aid, delta, mtime) VALUES (:tid, :bid, :aid, :delta, CURRENT_TIMESTAMP);
END;
";

const SELECT_ONLY: &str = "\\set aid random(1, 100000 * :scale)
SELECT abalance FROM pgbench_accounts WHERE aid = :aid;
";

impl Builtin {
    pub fn name(self) -> &'static str {
        match self {
            Builtin::TpcbLike => "tpcb-like",
            Builtin::SimpleUpdate => "simple-update",
            Builtin::SelectOnly => "select-only",
        }
    }

    /// pgbench's description in `--builtin list`.
    pub fn description(self) -> &'static str {
        match self {
            Builtin::TpcbLike => "<builtin: TPC-B (sort of)>",
            Builtin::SimpleUpdate => "<builtin: simple update>",
            Builtin::SelectOnly => "<builtin: select only>",
        }
    }

    /// The script as pgbench holds it.
    pub fn text(self) -> &'static str {
        match self {
            Builtin::TpcbLike => TPCB_LIKE,
            Builtin::SimpleUpdate => SIMPLE_UPDATE,
            Builtin::SelectOnly => SELECT_ONLY,
        }
    }

    /// The script as `dialect` is sent it.
    pub fn text_for(self, dialect: SqlDialect) -> String {
        match dialect {
            SqlDialect::MySql(_) => self.text().replace("\nEND;\n", "\nCOMMIT;\n"),
            SqlDialect::Postgres | SqlDialect::Sqlite | SqlDialect::Null => self.text().into(),
        }
    }

    /// The built-in `name` names, by a prefix that names one only, as pgbench's -b.
    pub fn find(name: &str) -> Result<Builtin, String> {
        let names = || ALL.map(Builtin::name).join(", ");
        if let Some(b) = ALL.into_iter().find(|b| b.name() == name) {
            return Ok(b);
        }
        let hits: Vec<Builtin> = ALL
            .into_iter()
            .filter(|b| !name.is_empty() && b.name().starts_with(name))
            .collect();
        match hits[..] {
            [one] => Ok(one),
            [] => Err(format!(
                "no built-in script {}; they are {}",
                crate::untrusted::shown(name),
                names()
            )),
            _ => Err(format!(
                "{} names more than one built-in script ({})",
                crate::untrusted::shown(name),
                names()
            )),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn built_ins_are_found_by_a_unique_prefix() {
        assert_eq!(Builtin::find("tpcb-like"), Ok(Builtin::TpcbLike));
        assert_eq!(Builtin::find("sel"), Ok(Builtin::SelectOnly));
        assert!(Builtin::find("s").unwrap_err().contains("more than one"));
        assert!(Builtin::find("nope")
            .unwrap_err()
            .contains("tpcb-like, simple-update"));
    }

    #[test]
    fn the_mysql_family_commits_where_pgbench_ends() {
        use crate::dbms::mysql::Storage;
        let t = Builtin::TpcbLike.text_for(SqlDialect::MySql(Storage::InnoDb));
        assert!(t.ends_with("COMMIT;\n") && !t.contains("END;"), "{t}");
        assert_eq!(
            Builtin::SelectOnly.text_for(SqlDialect::Postgres),
            SELECT_ONLY
        );
    }
}
