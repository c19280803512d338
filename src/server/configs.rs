//! Built-in server configs. Defaults differ between versions and builds (MySQL 8 has the binlog
//! on, MariaDB off; MyRocks' block cache is 512 MB), so every setting that decides durability,
//! logging or memory is written out here, and the report shows the text.

use super::Kind;

/// (name, text) of the built-in config for an engine.
pub fn builtin(kind: Kind, rocksdb: bool, name: &str) -> Option<String> {
    match (name, kind) {
        ("default", _) => Some(default(kind, rocksdb)),
        // MySQL's own default: the binary log on and synced at every commit, as a replica
        // source runs; `default` turns it off so MySQL and MariaDB are compared alike.
        ("binlog", Kind::MariaDb | Kind::MySql) => {
            Some(default(kind, rocksdb).replace("skip_log_bin\n", "log_bin\nsync_binlog = 1\n"))
        }
        _ => None,
    }
}

fn default(kind: Kind, rocksdb: bool) -> String {
    String::from(match (kind, rocksdb) {
        (Kind::Postgres, _) => {
            "\
shared_buffers = 512MB
max_connections = 200
fsync = on
synchronous_commit = on
full_page_writes = on
wal_compression = off
max_wal_size = 4GB
min_wal_size = 1GB
checkpoint_timeout = 15min
autovacuum = on
"
        }
        (Kind::MariaDb, false) => {
            "\
innodb_buffer_pool_size = 1G
innodb_log_file_size = 512M
innodb_flush_log_at_trx_commit = 1
innodb_doublewrite = 1
skip_log_bin
max_connections = 500
"
        }
        // innodb_log_file_size is gone in MySQL 9 (8.0.30 replaced it); the same 512 MB of
        // redo as MariaDB's single log file.
        (Kind::MySql, false) => {
            "\
innodb_buffer_pool_size = 1G
innodb_redo_log_capacity = 512M
innodb_flush_log_at_trx_commit = 1
innodb_doublewrite = 1
skip_log_bin
max_connections = 500
"
        }
        (Kind::MariaDb | Kind::MySql, true) => {
            "\
rocksdb_block_cache_size = 1G
rocksdb_flush_log_at_trx_commit = 1
innodb_buffer_pool_size = 64M
skip_log_bin
max_connections = 500
"
        }
    })
}

/// my.cnf lines as mysqld command-line options (every server runs with --no-defaults).
pub fn mycnf_options(text: &str) -> Vec<String> {
    text.lines()
        .map(str::trim)
        .filter(|l| {
            !l.is_empty() && !l.starts_with('#') && !l.starts_with(';') && !l.starts_with('[')
        })
        .map(|l| match l.split_once('=') {
            Some((k, v)) => format!("--{}={}", k.trim(), v.trim()),
            None => format!("--{l}"),
        })
        .collect()
}

/// The config's options that fix how the data files are laid out when they are made: the
/// install step (mariadb-install-db, mysqld --initialize) must see them, or the server finds
/// its redo log, undo or system tablespace missing (or with another page size) at its start.
/// The redo log's size is left to the server, which resizes it at its start.
pub fn mycnf_init_options(text: &str) -> Vec<String> {
    const AT_INIT: &[&str] = &[
        "innodb_log_group_home_dir",
        "innodb_data_home_dir",
        "innodb_data_file_path",
        "innodb_undo_directory",
        "innodb_undo_tablespaces",
        "innodb_page_size",
        "innodb_checksum_algorithm",
        "lower_case_table_names",
    ];
    mycnf_options(text)
        .into_iter()
        .filter(|o| AT_INIT.contains(&option_name(o).as_str()))
        .collect()
}

/// An option's name as mysqld reads it: `--init-file=x` and `--init_file=x` are `init_file`.
fn option_name(option: &str) -> String {
    option
        .trim_start_matches("--")
        .split('=')
        .next()
        .unwrap_or_default()
        .replace('-', "_")
}

/// Whether the my.cnf `text` sets the option `name` (written with underscores).
pub fn mycnf_sets(text: &str, name: &str) -> bool {
    mycnf_options(text).iter().any(|o| option_name(o) == name)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_install_step_gets_the_options_that_lay_out_the_files() {
        let o = mycnf_init_options(
            "innodb_buffer_pool_size = 1G\ninnodb-log-group-home-dir = /redo\ninnodb_page_size=4k\nskip_log_bin\n",
        );
        assert_eq!(
            o,
            ["--innodb-log-group-home-dir=/redo", "--innodb_page_size=4k"]
        );
    }

    #[test]
    fn an_option_is_found_whichever_way_it_is_spelt() {
        assert!(mycnf_sets("init-file = /x.sql\n", "init_file"));
        assert!(mycnf_sets("[mysqld]\ninit_file=/x.sql\n", "init_file"));
        assert!(!mycnf_sets(
            "# init_file = /x.sql\ninit_connect = x\n",
            "init_file"
        ));
    }

    #[test]
    fn mycnf_lines_become_options() {
        let o = mycnf_options("[mysqld]\n# c\ninnodb_buffer_pool_size = 1G\nskip_log_bin\n; x\n\n");
        assert_eq!(o, ["--innodb_buffer_pool_size=1G", "--skip_log_bin"]);
    }

    #[test]
    fn durability_and_binlog_are_explicit() {
        for (k, r) in [
            (Kind::MariaDb, false),
            (Kind::MySql, false),
            (Kind::MariaDb, true),
        ] {
            let t = builtin(k, r, "default").unwrap();
            assert!(
                t.contains("skip_log_bin") && t.contains("flush_log_at_trx_commit = 1"),
                "{t}"
            );
        }
        assert!(builtin(Kind::Postgres, false, "default")
            .unwrap()
            .contains("synchronous_commit = on"));
        assert!(builtin(Kind::Postgres, false, "cx1").is_none());
        assert!(builtin(Kind::Postgres, false, "binlog").is_none());
        for (k, r) in [(Kind::MySql, false), (Kind::MariaDb, true)] {
            let t = builtin(k, r, "binlog").unwrap();
            assert!(
                !t.contains("skip_log_bin") && t.contains("log_bin\nsync_binlog = 1"),
                "{t}"
            );
        }
    }
}
