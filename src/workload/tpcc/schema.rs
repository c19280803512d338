//! The nine tables in each SQL dialect, with the columns, keys and secondary indexes
//! sysbench-tpcc creates (tpcc_common.lua, one table set), and the few statement forms that
//! differ by dialect. They live with the suite, not in the adapters: a dialect with no SQL here
//! fails to compile.

use crate::dbms::mysql::Storage;
use crate::dbms::SqlDialect;

/// In the order they are created; dropped in the reverse order.
pub const TABLES: [&str; 9] = [
    "warehouse",
    "district",
    "customer",
    "history",
    "orders",
    "new_orders",
    "order_line",
    "stock",
    "item",
];

/// Column types that differ: MySQL's tinyint and datetime, PostgreSQL's smallint and timestamp
/// (SQLite takes either by affinity).
struct Types {
    tiny: &'static str,
    time: &'static str,
    /// After each CREATE TABLE's closing parenthesis.
    suffix: String,
}

fn types(d: SqlDialect) -> Types {
    match d {
        SqlDialect::MySql(storage) => Types {
            tiny: "tinyint",
            time: "datetime",
            suffix: format!(" ENGINE = {}", storage.table_engine()),
        },
        SqlDialect::Postgres | SqlDialect::Sqlite | SqlDialect::Null => Types {
            tiny: "smallint",
            time: "timestamp",
            suffix: String::new(),
        },
    }
}

/// DROP and CREATE of every table, then the secondary indexes, as sysbench-tpcc's prepare.
pub fn create(d: SqlDialect) -> Vec<String> {
    let Types { tiny, time, suffix } = types(d);
    // Those that reference others first: a table the foreign keys of an earlier run's
    // tables still reference cannot be dropped.
    let mut out: Vec<String> = [
        "order_line",
        "new_orders",
        "history",
        "orders",
        "customer",
        "stock",
        "district",
        "item",
        "warehouse",
    ]
    .iter()
    .map(|t| format!("DROP TABLE IF EXISTS {t}"))
    .collect();
    let tables = [
        "warehouse (w_id smallint not null, w_name varchar(10), w_street_1 varchar(20), \
         w_street_2 varchar(20), w_city varchar(20), w_state char(2), w_zip char(9), \
         w_tax decimal(4,2), w_ytd decimal(12,2), primary key (w_id))"
            .to_string(),
        format!(
            "district (d_id {tiny} not null, d_w_id smallint not null, d_name varchar(10), \
             d_street_1 varchar(20), d_street_2 varchar(20), d_city varchar(20), \
             d_state char(2), d_zip char(9), d_tax decimal(4,2), d_ytd decimal(12,2), \
             d_next_o_id int, primary key (d_w_id, d_id))"
        ),
        format!(
            "customer (c_id int not null, c_d_id {tiny} not null, c_w_id smallint not null, \
             c_first varchar(16), c_middle char(2), c_last varchar(16), \
             c_street_1 varchar(20), c_street_2 varchar(20), c_city varchar(20), \
             c_state char(2), c_zip char(9), c_phone char(16), c_since {time}, \
             c_credit char(2), c_credit_lim bigint, c_discount decimal(4,2), \
             c_balance decimal(12,2), c_ytd_payment decimal(12,2), c_payment_cnt smallint, \
             c_delivery_cnt smallint, c_data text, PRIMARY KEY(c_w_id, c_d_id, c_id))"
        ),
        format!(
            "history (h_c_id int, h_c_d_id {tiny}, h_c_w_id smallint, h_d_id {tiny}, \
             h_w_id smallint, h_date {time}, h_amount decimal(6,2), h_data varchar(24))"
        ),
        format!(
            "orders (o_id int not null, o_d_id {tiny} not null, o_w_id smallint not null, \
             o_c_id int, o_entry_d {time}, o_carrier_id {tiny}, o_ol_cnt {tiny}, \
             o_all_local {tiny}, PRIMARY KEY(o_w_id, o_d_id, o_id))"
        ),
        format!(
            "new_orders (no_o_id int not null, no_d_id {tiny} not null, \
             no_w_id smallint not null, PRIMARY KEY(no_w_id, no_d_id, no_o_id))"
        ),
        format!(
            "order_line (ol_o_id int not null, ol_d_id {tiny} not null, \
             ol_w_id smallint not null, ol_number {tiny} not null, ol_i_id int, \
             ol_supply_w_id smallint, ol_delivery_d {time}, ol_quantity {tiny}, \
             ol_amount decimal(6,2), ol_dist_info char(24), \
             PRIMARY KEY(ol_w_id, ol_d_id, ol_o_id, ol_number))"
        ),
        "stock (s_i_id int not null, s_w_id smallint not null, s_quantity smallint, \
         s_dist_01 char(24), s_dist_02 char(24), s_dist_03 char(24), s_dist_04 char(24), \
         s_dist_05 char(24), s_dist_06 char(24), s_dist_07 char(24), s_dist_08 char(24), \
         s_dist_09 char(24), s_dist_10 char(24), s_ytd decimal(8,0), s_order_cnt smallint, \
         s_remote_cnt smallint, s_data varchar(50), PRIMARY KEY(s_w_id, s_i_id))"
            .to_string(),
        "item (i_id int not null, i_im_id int, i_name varchar(24), i_price decimal(5,2), \
         i_data varchar(50), PRIMARY KEY(i_id))"
            .to_string(),
    ];
    out.extend(tables.iter().map(|t| format!("CREATE TABLE {t}{suffix}")));
    out.extend(
        [
            "idx_customer ON customer (c_w_id,c_d_id,c_last,c_first)",
            "idx_orders ON orders (o_w_id,o_d_id,o_c_id,o_id)",
            "fkey_stock_2 ON stock (s_i_id)",
            "fkey_order_line_2 ON order_line (ol_supply_w_id,ol_i_id)",
            "fkey_history_1 ON history (h_c_w_id,h_c_d_id,h_c_id)",
            "fkey_history_2 ON history (h_w_id,h_d_id)",
        ]
        .iter()
        .map(|i| format!("CREATE INDEX {i}")),
    );
    out
}

/// sysbench-tpcc's foreign keys (use_fk=1), added after the load (its prepare adds them before,
/// but loading warehouses in parallel would then insert stock before its items exist). None
/// where the engine does not keep them: SQLite adds no constraint to a table, MyRocks refuses.
pub fn foreign_keys(d: SqlDialect) -> Vec<String> {
    match d {
        SqlDialect::Postgres | SqlDialect::MySql(Storage::InnoDb) => [
            "new_orders ADD CONSTRAINT fkey_new_orders_1 FOREIGN KEY(no_w_id,no_d_id,no_o_id) \
             REFERENCES orders(o_w_id,o_d_id,o_id)",
            "orders ADD CONSTRAINT fkey_orders_1 FOREIGN KEY(o_w_id,o_d_id,o_c_id) \
             REFERENCES customer(c_w_id,c_d_id,c_id)",
            "customer ADD CONSTRAINT fkey_customer_1 FOREIGN KEY(c_w_id,c_d_id) \
             REFERENCES district(d_w_id,d_id)",
            "history ADD CONSTRAINT fkey_history_1 FOREIGN KEY(h_c_w_id,h_c_d_id,h_c_id) \
             REFERENCES customer(c_w_id,c_d_id,c_id)",
            "history ADD CONSTRAINT fkey_history_2 FOREIGN KEY(h_w_id,h_d_id) \
             REFERENCES district(d_w_id,d_id)",
            "district ADD CONSTRAINT fkey_district_1 FOREIGN KEY(d_w_id) REFERENCES warehouse(w_id)",
            "order_line ADD CONSTRAINT fkey_order_line_1 FOREIGN KEY(ol_w_id,ol_d_id,ol_o_id) \
             REFERENCES orders(o_w_id,o_d_id,o_id)",
            "order_line ADD CONSTRAINT fkey_order_line_2 FOREIGN KEY(ol_supply_w_id,ol_i_id) \
             REFERENCES stock(s_w_id,s_i_id)",
            "stock ADD CONSTRAINT fkey_stock_1 FOREIGN KEY(s_w_id) REFERENCES warehouse(w_id)",
            "stock ADD CONSTRAINT fkey_stock_2 FOREIGN KEY(s_i_id) REFERENCES item(i_id)",
        ]
        .iter()
        .map(|f| format!("ALTER TABLE {f}"))
        .collect(),
        SqlDialect::MySql(Storage::RocksDb) | SqlDialect::Sqlite | SqlDialect::Null => Vec::new(),
    }
}

/// What each connection runs once: the isolation level as sysbench-tpcc sets it and, on MySQL
/// and MariaDB, its FOREIGN_KEY_CHECKS=0 (so the keys are not checked there, as with it).
pub fn session(d: SqlDialect, isolation: super::Isolation) -> Vec<String> {
    match d {
        // Literals are written for standard strings, whatever the server's config says (with
        // them off, a backslash in a value read back would end its literal early).
        SqlDialect::Postgres => vec![
            format!(
                "SET SESSION CHARACTERISTICS AS TRANSACTION ISOLATION LEVEL {}",
                isolation.sql()
            ),
            "SET standard_conforming_strings = on".to_string(),
        ],
        SqlDialect::MySql(_) => vec![
            format!(
                "SET SESSION TRANSACTION ISOLATION LEVEL {}",
                isolation.sql()
            ),
            "SET FOREIGN_KEY_CHECKS=0".to_string(),
        ],
        SqlDialect::Sqlite | SqlDialect::Null => Vec::new(),
    }
}

/// The statement forms that differ by dialect.
#[derive(Debug, Clone, Copy)]
pub struct Forms {
    /// The current time: NOW(), SQLite's datetime('now').
    pub now: &'static str,
    /// After a row lock's SELECT: " FOR UPDATE", nothing on SQLite (it locks the database).
    pub for_update: &'static str,
    /// What starts a transaction that writes: BEGIN, SQLite's BEGIN IMMEDIATE (a deferred one
    /// that then writes fails at once with SQLITE_BUSY when another connection writes, without
    /// waiting for it).
    pub begin_write: &'static str,
    /// Whether a backslash in a string literal is an escape (MySQL's default).
    pub backslash_escapes: bool,
}

pub fn forms(d: SqlDialect) -> Forms {
    match d {
        SqlDialect::Postgres | SqlDialect::Null => Forms {
            now: "NOW()",
            for_update: " FOR UPDATE",
            begin_write: "BEGIN",
            backslash_escapes: false,
        },
        SqlDialect::MySql(_) => Forms {
            now: "NOW()",
            for_update: " FOR UPDATE",
            begin_write: "BEGIN",
            backslash_escapes: true,
        },
        SqlDialect::Sqlite => Forms {
            now: "datetime('now')",
            for_update: "",
            begin_write: "BEGIN IMMEDIATE",
            backslash_escapes: false,
        },
    }
}

/// Text the server returned, as a literal to write back: only printable ASCII other than quotes
/// and backslashes is kept (the rest becomes `?`), so no server setting that changes how
/// literals are read (standard_conforming_strings, NO_BACKSLASH_ESCAPES) can make a value end
/// its literal. The load writes letters and digits only, so a consistent database loses nothing.
pub fn push_read_back(out: &mut String, s: &str, f: &Forms) {
    let clean: String = s
        .chars()
        .map(|c| {
            if (c.is_ascii_graphic() || c == ' ') && c != '\'' && c != '\\' {
                c
            } else {
                '?'
            }
        })
        .collect();
    push_literal(out, &clean, f);
}

/// `s` as a string literal appended to `out`: quotes doubled, backslashes too where they escape.
pub fn push_literal(out: &mut String, s: &str, f: &Forms) {
    out.push('\'');
    for ch in s.chars() {
        if ch == '\'' || (ch == '\\' && f.backslash_escapes) {
            out.push(ch);
        }
        out.push(ch);
    }
    out.push('\'');
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_dialect_creates_nine_tables_and_six_indexes() {
        for d in [
            SqlDialect::Postgres,
            SqlDialect::MySql(Storage::InnoDb),
            SqlDialect::MySql(Storage::RocksDb),
            SqlDialect::Sqlite,
        ] {
            let s = create(d);
            assert_eq!(
                s.iter().filter(|x| x.starts_with("CREATE TABLE")).count(),
                9
            );
            assert_eq!(
                s.iter().filter(|x| x.starts_with("CREATE INDEX")).count(),
                6
            );
        }
        assert_eq!(foreign_keys(SqlDialect::Postgres).len(), 10);
        assert!(foreign_keys(SqlDialect::MySql(Storage::RocksDb)).is_empty());
    }

    #[test]
    fn literals_escape_what_the_dialect_reads_as_special() {
        let mut s = String::new();
        push_literal(&mut s, "a'b\\c", &forms(SqlDialect::MySql(Storage::InnoDb)));
        assert_eq!(s, "'a''b\\\\c'");
        s.clear();
        push_literal(&mut s, "a'b\\c", &forms(SqlDialect::Postgres));
        assert_eq!(s, "'a''b\\c'");
        // What a server returned cannot end its literal, whatever the server's string mode.
        s.clear();
        push_read_back(
            &mut s,
            "x\\'; DROP TABLE t; --é\n",
            &forms(SqlDialect::Postgres),
        );
        assert_eq!(s, "'x??; DROP TABLE t; --??'");
    }
}
