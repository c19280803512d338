//! The Insert Benchmark's statements in each SQL dialect, as iibench.py writes them for each
//! DBMS. They live with the suite, not in the adapters: an adapter says which SQL it speaks
//! (`Dialect::sql`) and its generic capabilities (placeholders, catalog queries); a dialect
//! with no statements here fails to compile.

use crate::dbms::mysql::Storage;
use crate::dbms::SqlDialect;

/// The Insert Benchmark's two delete statements (spec §1.6).
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum DeleteForm {
    /// Since 2024-04: delete the `n` lowest PKs at or above the estimated minimum.
    /// Parameters: (min, n).
    Current,
    /// Before 2024-04: delete the PK range [min, min + n); fewer rows when PKs have gaps.
    /// Parameters: (min, min + n).
    Old,
}

/// A secondary index: name suffix and columns in order.
pub struct IndexDef {
    pub suffix: &'static str,
    pub columns: &'static [&'static str],
}

/// Drop and create an Insert Benchmark table.
pub fn create_table(d: SqlDialect, t: &str) -> Vec<String> {
    let drop = format!("DROP TABLE IF EXISTS {t}");
    match d {
        SqlDialect::Postgres => vec![
            drop,
            format!(
                "CREATE TABLE {t} (transactionid bigserial PRIMARY KEY, \
                 dateandtime timestamp without time zone, cashregisterid int NOT NULL, \
                 customerid int NOT NULL, productid int NOT NULL, price int NOT NULL, \
                 data varchar(4000))"
            ),
            // As the original: one sequence round trip per 1000 ids instead of per row.
            format!("ALTER SEQUENCE {t}_transactionid_seq CACHE 1000"),
        ],
        SqlDialect::MySql(storage) => vec![
            drop,
            format!(
                "CREATE TABLE {t} (transactionid bigint not null auto_increment, \
                 dateandtime datetime, cashregisterid int not null, customerid int not null, \
                 productid int not null, price int not null, data varchar(4000), \
                 primary key (transactionid)) engine={}",
                storage.table_engine()
            ),
        ],
        // transactionid is the rowid (INTEGER PRIMARY KEY): new rows get max+1, so inserts are
        // in PK order as with auto_increment. Rows are only deleted from the low end, so ids
        // are never reused. dateandtime is TEXT 'YYYY-MM-DD HH:MM:SS', which sorts by time.
        SqlDialect::Sqlite => vec![
            drop,
            format!(
                "CREATE TABLE {t} (transactionid INTEGER PRIMARY KEY, dateandtime TEXT, \
                 cashregisterid INTEGER NOT NULL, customerid INTEGER NOT NULL, \
                 productid INTEGER NOT NULL, price INTEGER NOT NULL, data TEXT)"
            ),
        ],
        SqlDialect::Null => vec![format!("CREATE TABLE {t} (transactionid INTEGER)")],
    }
}

/// Statements that build the secondary indexes (one op each in l.x).
pub fn create_indexes(d: SqlDialect, t: &str, indexes: &[IndexDef]) -> Vec<String> {
    match d {
        SqlDialect::MySql(storage) => {
            let adds: Vec<String> = indexes
                .iter()
                .map(|ix| format!("ADD INDEX {t}_{} ({})", ix.suffix, ix.columns.join(", ")))
                .collect();
            match storage {
                Storage::InnoDb if adds.is_empty() => Vec::new(),
                // As the original: InnoDB builds them in one ALTER, MyRocks one at a time.
                Storage::InnoDb => vec![format!("ALTER TABLE {t} {}", adds.join(", "))],
                Storage::RocksDb => adds
                    .into_iter()
                    .map(|a| format!("ALTER TABLE {t} {a}"))
                    .collect(),
            }
        }
        SqlDialect::Postgres | SqlDialect::Sqlite | SqlDialect::Null => indexes
            .iter()
            .map(|ix| {
                format!(
                    "CREATE INDEX {t}_{} ON {t} ({})",
                    ix.suffix,
                    ix.columns.join(", ")
                )
            })
            .collect(),
    }
}

/// The delete of `form`; `ph` writes the i-th parameter's place (a placeholder, or where a
/// text statement puts the value). DELETE ... ORDER BY ... LIMIT is MySQL's; elsewhere the
/// PostgreSQL shape of the 2024 statement.
pub fn delete_with(
    d: SqlDialect,
    t: &str,
    form: DeleteForm,
    ph: &dyn Fn(usize) -> String,
) -> String {
    let (p1, p2) = (ph(1), ph(2));
    match (form, d) {
        (DeleteForm::Current, SqlDialect::MySql(_)) => format!(
            "DELETE FROM {t} WHERE transactionid >= {p1} ORDER BY transactionid ASC LIMIT {p2}"
        ),
        (DeleteForm::Current, SqlDialect::Postgres | SqlDialect::Sqlite | SqlDialect::Null) => {
            format!(
                "DELETE FROM {t} WHERE transactionid IN (SELECT transactionid FROM {t} \
                 WHERE transactionid >= {p1} ORDER BY transactionid ASC LIMIT {p2})"
            )
        }
        (DeleteForm::Old, _) => {
            format!("DELETE FROM {t} WHERE transactionid >= {p1} AND transactionid < {p2}")
        }
    }
}

/// Text placed after `FROM t` to force a covering index, where the engine needs one (with a
/// leading space), else empty. PostgreSQL's and SQLite's planners pick the covering index on
/// their own (checked by a test).
pub fn index_hint(d: SqlDialect, index: &str) -> String {
    match d {
        SqlDialect::MySql(_) => format!(" FORCE INDEX ({index})"),
        SqlDialect::Postgres | SqlDialect::Sqlite | SqlDialect::Null => String::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::workload::ibench::INDEXES;

    fn placeholders(d: SqlDialect, t: &str, form: DeleteForm) -> String {
        let ph = |i: usize| match d {
            SqlDialect::Postgres => format!("${i}"),
            _ => "?".to_string(),
        };
        delete_with(d, t, form, &ph)
    }

    #[test]
    fn create_table_names_the_storage_engine() {
        for (s, engine) in [(Storage::InnoDb, "innodb"), (Storage::RocksDb, "rocksdb")] {
            let ddl = create_table(SqlDialect::MySql(s), "pi1");
            assert_eq!(ddl[0], "DROP TABLE IF EXISTS pi1");
            assert_eq!(
                ddl[1],
                format!(
                    "CREATE TABLE pi1 (transactionid bigint not null auto_increment, \
                     dateandtime datetime, cashregisterid int not null, customerid int not null, \
                     productid int not null, price int not null, data varchar(4000), \
                     primary key (transactionid)) engine={engine}"
                )
            );
        }
    }

    #[test]
    fn innodb_builds_all_indexes_in_one_alter() {
        let d = SqlDialect::MySql(Storage::InnoDb);
        assert_eq!(
            create_indexes(d, "pi1", &INDEXES),
            vec![
                "ALTER TABLE pi1 ADD INDEX pi1_marketsegment (productid, customerid, price), \
                 ADD INDEX pi1_registersegment (cashregisterid, customerid, price), \
                 ADD INDEX pi1_pdc (price, dateandtime, customerid)"
            ]
        );
        assert!(create_indexes(d, "pi1", &[]).is_empty());
    }

    #[test]
    fn myrocks_builds_one_index_per_alter_and_others_create_each() {
        assert_eq!(
            create_indexes(SqlDialect::MySql(Storage::RocksDb), "pi2", &INDEXES[..2]),
            vec![
                "ALTER TABLE pi2 ADD INDEX pi2_marketsegment (productid, customerid, price)",
                "ALTER TABLE pi2 ADD INDEX pi2_registersegment (cashregisterid, customerid, price)",
            ]
        );
        assert_eq!(
            create_indexes(SqlDialect::Postgres, "pi1", &INDEXES[2..]),
            vec!["CREATE INDEX pi1_pdc ON pi1 (price, dateandtime, customerid)"]
        );
    }

    #[test]
    fn delete_forms_sequence_cache_and_hint() {
        let my = SqlDialect::MySql(Storage::InnoDb);
        assert_eq!(
            placeholders(my, "pi1", DeleteForm::Current),
            "DELETE FROM pi1 WHERE transactionid >= ? ORDER BY transactionid ASC LIMIT ?"
        );
        assert_eq!(
            placeholders(my, "pi1", DeleteForm::Old),
            "DELETE FROM pi1 WHERE transactionid >= ? AND transactionid < ?"
        );
        assert!(placeholders(SqlDialect::Postgres, "pi1", DeleteForm::Current)
            .contains("IN (SELECT transactionid FROM pi1 WHERE transactionid >= $1 ORDER BY transactionid ASC LIMIT $2)"));
        assert_eq!(
            create_table(SqlDialect::Postgres, "pi1")[2],
            "ALTER SEQUENCE pi1_transactionid_seq CACHE 1000"
        );
        assert_eq!(index_hint(my, "pi1_pdc"), " FORCE INDEX (pi1_pdc)");
        assert_eq!(index_hint(SqlDialect::Sqlite, "pi1_pdc"), "");
    }
}
