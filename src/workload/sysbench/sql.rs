//! sysbench's tables in each SQL dialect, as the original's oltp_common.lua creates them for
//! each driver. They live with the suite, not in the adapters: an adapter says which SQL it
//! speaks (`Dialect::sql`); a dialect with no statements here fails to compile.

use crate::dbms::SqlDialect;

/// Drop and create table `sbtest<n>` (id auto-assigned, `k`, `c CHAR(120)`, `pad CHAR(60)`).
/// With `primary_key`, PRIMARY KEY (id); without (the original's usepk=0, its Lua's
/// --secondary), id is only in a secondary index.
pub fn create_table(d: SqlDialect, t: &str, n: u64, primary_key: bool) -> Vec<String> {
    let drop = format!("DROP TABLE IF EXISTS {t}");
    match d {
        SqlDialect::Postgres => {
            let columns = "id SERIAL, k INTEGER DEFAULT '0' NOT NULL, \
                           c CHAR(120) DEFAULT '' NOT NULL, pad CHAR(60) DEFAULT '' NOT NULL";
            if primary_key {
                vec![
                    drop,
                    format!("CREATE TABLE {t}({columns}, PRIMARY KEY (id))"),
                ]
            } else {
                vec![
                    drop,
                    format!("CREATE TABLE {t}({columns})"),
                    format!("CREATE INDEX xid{n} ON {t}(id)"),
                ]
            }
        }
        SqlDialect::MySql(storage) => {
            // Without a primary key InnoDB and MyRocks cluster on a hidden row id, and id's
            // AUTO_INCREMENT is served by the secondary KEY (id).
            let key = if primary_key { "PRIMARY KEY" } else { "KEY" };
            vec![
                drop,
                format!(
                    "CREATE TABLE {t}(id INTEGER NOT NULL AUTO_INCREMENT, \
                     k INTEGER DEFAULT '0' NOT NULL, c CHAR(120) DEFAULT '' NOT NULL, \
                     pad CHAR(60) DEFAULT '' NOT NULL, {key} (id)) /*! ENGINE = {} */",
                    storage.table_engine()
                ),
            ]
        }
        // id is the rowid (INTEGER PRIMARY KEY): rows loaded without an id get 1, 2, 3 ... as
        // with AUTO_INCREMENT and SERIAL, and a point select by id is one b-tree descent.
        // SQLite assigns ids only to that column, so usepk=0 is refused before a run starts.
        SqlDialect::Sqlite => vec![
            drop,
            format!(
                "CREATE TABLE {t}(id INTEGER PRIMARY KEY, k INTEGER DEFAULT '0' NOT NULL, \
                 c CHAR(120) DEFAULT '' NOT NULL, pad CHAR(60) DEFAULT '' NOT NULL)"
            ),
        ],
        SqlDialect::Null => vec![format!("CREATE TABLE {t} (id INTEGER)")],
    }
}

/// sysbench's secondary index on `k`, built right after the table is loaded.
pub fn create_index(t: &str, n: u64) -> String {
    format!("CREATE INDEX k_{n} ON {t}(k)")
}

/// oltp_insert on MySQL names `id` with the value 0 so AUTO_INCREMENT assigns it; on
/// PostgreSQL it leaves `id` out (SERIAL), as SQLite must (0 would be a real rowid).
pub fn insert_names_id(d: SqlDialect) -> bool {
    match d {
        SqlDialect::MySql(_) => true,
        SqlDialect::Postgres | SqlDialect::Sqlite | SqlDialect::Null => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::dbms::mysql::Storage;

    #[test]
    fn without_a_primary_key_id_is_a_secondary_index() {
        assert_eq!(
            create_table(SqlDialect::Postgres, "sbtest1", 1, false)[2],
            "CREATE INDEX xid1 ON sbtest1(id)"
        );
        let my = create_table(SqlDialect::MySql(Storage::RocksDb), "sbtest2", 2, false);
        assert!(
            my[1].contains(", KEY (id)) /*! ENGINE = rocksdb */"),
            "{}",
            my[1]
        );
        assert!(
            create_table(SqlDialect::MySql(Storage::InnoDb), "sbtest1", 1, true)[1]
                .contains("PRIMARY KEY (id)) /*! ENGINE = innodb */")
        );
        assert!(insert_names_id(SqlDialect::MySql(Storage::InnoDb)));
        assert!(!insert_names_id(SqlDialect::Sqlite));
    }
}
