//! The MySQL family's published configs (published.rs has the types): the settings of each,
//! on which versions, and why one is not given as published.

use super::published::{
    added, before, between, dropped, from, kept, memory, v, How, Published, Setting, Source, C8R32,
};
use super::version::Version;
use crate::engines::Engine;

/// Why a setting naming a place is not given: dbperf puts the data, logs and sockets itself.
const PATH: &str = "a path on the published host; dbperf sets where the server's files go";

/// The binary log stays on as published, named in the data directory.
const BINLOG: Setting = Setting {
    name: "log_bin",
    value: "/data/m/my/binlogs/bl",
    how: How::Changed(
        "binlog",
        "a path on the published host; the binary log stays on, named binlog in the data directory",
    ),
};

/// The published MySQL-family servers ran through mysqld_safe with jemalloc.
const MALLOC: Setting = dropped(
    "malloc-lib",
    "/usr/lib/x86_64-linux-gnu/libjemalloc.so",
    "of the mysqld_safe section: the published servers ran with jemalloc; dbperf starts the \
     server itself, with the allocator it was built with",
);

// ---------------------------------------------------------------------------------------------
// The MySQL family's InnoDB configs: my.cnf.cz11a_c8r32 and cz10a (cz11a without the purge
// lag). MariaDB's files are one text for 10.5 ... 10.11
// (bench/conf/arc/oct24/c8r32/ma101110_rel_withdbg/etc/my.cnf.cz11a_c8r32); for 11.x the studies
// name them cz11b / cz10b (.../ma110401_rel/etc/my.cnf.cz11b_c8r32, .../ma110701_rel_withdbg/...):
// the same settings but innodb_flush_method, replaced by the *_buffering and *_write_through
// settings, and from 11.6 innodb_snapshot_isolation=OFF (11.6 turned it on by default).

const MY_HEAD: &[Setting] = &[
    kept("sql_mode", "no_engine_substitution,no_unsigned_subtraction"),
    kept("default_tmp_storage_engine", "MyISAM"),
    dropped("tmpdir", "/data/m/my", PATH),
];

const MARIADB_QUERY_CACHE: &[Setting] =
    &[kept("query_cache_size", "0"), kept("query_cache_type", "0")];

const MY_LOGS: &[Setting] = &[
    kept("long_query_time", "5"),
    BINLOG,
    kept("max_binlog_size", "256M"),
    kept("server_id", "77"),
    kept("binlog_format", "ROW"),
    dropped("datadir", "/data/m/my/data", PATH),
    kept("innodb_file_per_table", "1"),
    dropped("innodb_data_home_dir", "/data/m/my/data", PATH),
    kept("innodb_data_file_path", "ibdata1:512M:autoextend"),
    dropped("innodb_log_group_home_dir", "/data/m/my/txlogs", PATH),
    kept("slow_query_log", "1"),
    kept("performance_schema", "1"),
];

/// MariaDB takes `default_authentication_plugin` and ignores it with a warning.
const MARIADB_AUTH: &[Setting] = &[
    kept("ssl", "0"),
    dropped(
        "default_authentication_plugin",
        "mysql_native_password",
        "MariaDB has no such setting (it ignores the line with a warning)",
    ),
];

const MYSQL_AUTH: &[Setting] = &[
    before(
        "ssl",
        "0",
        v(8, 4, 0),
        "MySQL 8.4 removed the --ssl option; the published files for 8.4 and 9.x comment it out",
    ),
    before(
        "default_authentication_plugin",
        "mysql_native_password",
        v(8, 4, 0),
        "MySQL 8.4 removed it; the published file for 8.4 sets mysql_native_password=ON instead",
    ),
];

const MY_CHARSET: &[Setting] = &[
    kept("character_set_server", "latin1"),
    kept("collation_server", "latin1_swedish_ci"),
    kept("eq_range_index_dive_limit", "10"),
    kept("innodb_fast_shutdown", "1"),
    kept("innodb_doublewrite", "1"),
];

const MARIADB_FLUSH_METHOD: &[Setting] = &[before(
    "innodb_flush_method",
    "O_DIRECT_NO_FSYNC",
    v(11, 0, 0),
    "deprecated in MariaDB 11.0; the published files for 11.x give the \
     innodb_*_buffering and innodb_*_write_through settings below instead",
)];

const MYSQL_FLUSH_METHOD: &[Setting] = &[kept("innodb_flush_method", "O_DIRECT_NO_FSYNC")];

const MY_INNODB: &[Setting] = &[
    kept("innodb_autoinc_lock_mode", "2"),
    kept("innodb_flush_neighbors", "0"),
    kept("innodb_buffer_pool_load_at_startup", "OFF"),
    kept("innodb_buffer_pool_dump_at_shutdown", "OFF"),
    kept("innodb_purge_threads", "4"),
    kept("innodb_flush_log_at_trx_commit", "2"),
    kept("sync_binlog", "0"),
];

const MARIADB_SIZES: &[Setting] = &[
    memory("innodb_buffer_pool_size", "23G"),
    kept("innodb_log_file_size", "30G"),
    kept("innodb_max_dirty_pages_pct_lwm", "80"),
    kept("innodb_max_dirty_pages_pct", "90"),
    kept("innodb_io_capacity", "10000"),
    kept("innodb_io_capacity_max", "20000"),
    kept("innodb_adaptive_hash_index", "OFF"),
    kept("innodb_read_io_threads", "4"),
    kept("innodb_write_io_threads", "4"),
    kept("innodb_undo_tablespaces", "32"),
    before(
        "innodb_change_buffering",
        "none",
        v(11, 0, 0),
        "MariaDB 11.0 removed the change buffer; 11.x ignores the setting with a warning",
    ),
    kept("innodb_checksum_algorithm", "crc32"),
    kept("innodb_lru_scan_depth", "5000"),
];

/// In MySQL's cz11a files for 8.0.30 and later (bench/conf/arc/oct24/c8r32/my8032_rel/etc/);
/// the files for 8.0.18 ... 8.0.29 give the redo log as 15 files of 2G
/// (.../my8028_rel_o2nofp/etc/my.cnf.cz11a_c8r32), those before 8.0.18 lack the idle flush.
const MYSQL_SIZES: &[Setting] = &[
    kept("innodb_dedicated_server", "ON"),
    memory("innodb_buffer_pool_size", "23G"),
    kept("innodb_max_dirty_pages_pct_lwm", "80"),
    kept("innodb_max_dirty_pages_pct", "90"),
    from(
        "innodb_idle_flush_pct",
        "1",
        v(8, 0, 18),
        "MySQL has it from 8.0.18; the published files before it comment it out",
    ),
    kept("innodb_io_capacity", "10000"),
    kept("innodb_io_capacity_max", "20000"),
    kept("innodb_adaptive_hash_index", "OFF"),
    kept("innodb_page_cleaners", "4"),
    kept("innodb_read_io_threads", "4"),
    kept("innodb_write_io_threads", "4"),
    kept("innodb_buffer_pool_instances", "4"),
    before(
        "innodb_log_files_in_group",
        "15",
        v(8, 0, 30),
        "the redo log is sized by innodb_redo_log_capacity from 8.0.30 (9.x has no such \
         setting); 15 files of 2G are its 30G",
    ),
    before(
        "innodb_log_file_size",
        "2G",
        v(8, 0, 30),
        "given as innodb_redo_log_capacity=30G from 8.0.30, as the published files do",
    ),
    from(
        "innodb_redo_log_capacity",
        "30G",
        v(8, 0, 30),
        "MySQL has it from 8.0.30; before, the redo log is innodb_log_files_in_group × \
         innodb_log_file_size (15 × 2G)",
    ),
    kept("loose_innodb_log_writer_threads", "OFF"),
];

const PURGE_LAG: &[Setting] = &[
    kept("innodb_max_purge_lag", "500000"),
    kept("innodb_max_purge_lag_delay", "1000000"),
];

const MARIADB_11: &[Setting] = &[
    from(
        "innodb_log_file_buffering",
        "1",
        v(11, 0, 0),
        "the published files give it for MariaDB 11.x, with innodb_flush_method gone",
    ),
    from(
        "innodb_log_file_write_through",
        "0",
        v(11, 0, 0),
        "MariaDB has it from 11.0",
    ),
    from(
        "innodb_data_file_buffering",
        "0",
        v(11, 0, 0),
        "MariaDB has it from 11.0",
    ),
    from(
        "innodb_data_file_write_through",
        "0",
        v(11, 0, 0),
        "MariaDB has it from 11.0",
    ),
];

/// In cz11b for 11.7 (bench/conf/arc/oct24/c8r32/ma110701_rel_withdbg/etc/my.cnf.cz11b_c8r32).
const MARIADB_SNAPSHOT: &[Setting] = &[from(
    "innodb_snapshot_isolation",
    "OFF",
    v(11, 6, 0),
    "the published files set it from 11.6, which turned it on by default (off before)",
)];

/// In the 8.4 files only (bench/conf/arc/oct24/c8r32/my8406_rel_o2nofp/etc/): 9.0 removed the
/// mysql_native_password plugin, and the files for 9.x comment it out.
const MYSQL_NATIVE: &[Setting] = &[between(
    "mysql_native_password",
    "ON",
    (v(8, 4, 0), v(9, 0, 0)),
    "the plugin's switch is in MySQL 8.4 only (9.0 removed the plugin, 8.0 has it on)",
)];

/// cz12a after cz11a's settings (bench/conf/arc/oct24/c8r32/my97/etc/my.cnf.cz12a_c8r32).
const MYSQL_CZ12A_EXTRA: &[Setting] = &[
    from(
        "innodb_doublewrite_pages",
        "128",
        v(8, 0, 20),
        "MySQL has it from 8.0.20",
    ),
    kept("innodb_numa_interleave", "ON"),
    kept("innodb_log_buffer_size", "64M"),
    kept("innodb_change_buffering", "all"),
    kept("innodb_change_buffer_max_size", "25"),
    from(
        "innodb_use_fdatasync",
        "ON",
        v(8, 0, 26),
        "MySQL has it from 8.0.26",
    ),
];

/// cz13a after cz12a's (bench/conf/arc/oct24/c8r32/my97/etc/my.cnf.cz13a_c8r32).
const MYSQL_CZ13A_EXTRA: &[Setting] = &[
    kept("enforce_gtid_consistency", "OFF"),
    kept("gtid_mode", "OFF"),
];

const MARIADB_SUPPORTED: (Version, Version) = (v(10, 5, 0), v(11, 9, 0));
const MYSQL_SUPPORTED: (Version, Version) = (v(8, 0, 11), v(10, 0, 0));

const MARIADB_CZ11A_SOURCES: &[Source] = &[
    Source {
        from: v(10, 5, 0),
        path: "bench/conf/arc/oct24/c8r32/ma101110_rel_withdbg/etc/my.cnf.cz11a_c8r32",
    },
    Source {
        from: v(11, 0, 0),
        path: "bench/conf/arc/oct24/c8r32/ma110401_rel/etc/my.cnf.cz11b_c8r32",
    },
    Source {
        from: v(11, 6, 0),
        path: "bench/conf/arc/oct24/c8r32/ma110701_rel_withdbg/etc/my.cnf.cz11b_c8r32",
    },
];

const MARIADB_CZ10A_SOURCES: &[Source] = &[
    Source {
        from: v(10, 5, 0),
        path: "bench/conf/arc/oct24/c8r32/ma101110_rel_withdbg/etc/my.cnf.cz10a_c8r32",
    },
    Source {
        from: v(11, 0, 0),
        path: "bench/conf/arc/oct24/c8r32/ma110401_rel/etc/my.cnf.cz10b_c8r32",
    },
];

const MYSQL_CZ11A_SOURCES: &[Source] = &[
    Source {
        from: v(8, 0, 11),
        path: "bench/conf/arc/oct24/c8r32/my8017_rel_o2nofp/etc/my.cnf.cz11a_c8r32",
    },
    Source {
        from: v(8, 0, 18),
        path: "bench/conf/arc/oct24/c8r32/my8028_rel_o2nofp/etc/my.cnf.cz11a_c8r32",
    },
    Source {
        from: v(8, 0, 30),
        path: "bench/conf/arc/oct24/c8r32/my8032_rel/etc/my.cnf.cz11a_c8r32",
    },
    Source {
        from: v(8, 4, 0),
        path: "bench/conf/arc/oct24/c8r32/my8406_rel_o2nofp/etc/my.cnf.cz11a_c8r32",
    },
    Source {
        from: v(9, 0, 0),
        path: "bench/conf/arc/oct24/c8r32/my9400_rel_o2nofp/etc/my.cnf.cz11a_c8r32",
    },
];

const MARIADB_CZ11A: Published = Published {
    name: "cz11a",
    engine: Engine::MariaDb,
    rocksdb: false,
    host: &C8R32,
    from: MARIADB_SUPPORTED.0,
    before: MARIADB_SUPPORTED.1,
    versions: "10.5 to 11.8",
    sources: MARIADB_CZ11A_SOURCES,
    parts: &[
        MY_HEAD,
        MARIADB_QUERY_CACHE,
        MY_LOGS,
        MARIADB_AUTH,
        MY_CHARSET,
        MARIADB_FLUSH_METHOD,
        MY_INNODB,
        MARIADB_SIZES,
        PURGE_LAG,
        MARIADB_11,
        MARIADB_SNAPSHOT,
        &[MALLOC],
    ],
};

const MARIADB_CZ10A: Published = Published {
    name: "cz10a",
    sources: MARIADB_CZ10A_SOURCES,
    parts: &[
        MY_HEAD,
        MARIADB_QUERY_CACHE,
        MY_LOGS,
        MARIADB_AUTH,
        MY_CHARSET,
        MARIADB_FLUSH_METHOD,
        MY_INNODB,
        MARIADB_SIZES,
        MARIADB_11,
        &[MALLOC],
    ],
    ..MARIADB_CZ11A
};

const MYSQL_CZ11A: Published = Published {
    name: "cz11a",
    engine: Engine::MySql,
    rocksdb: false,
    host: &C8R32,
    from: MYSQL_SUPPORTED.0,
    before: MYSQL_SUPPORTED.1,
    versions: "8.0.11 to 9.x",
    sources: MYSQL_CZ11A_SOURCES,
    parts: &[
        MY_HEAD,
        MY_LOGS,
        MYSQL_AUTH,
        MY_CHARSET,
        MYSQL_FLUSH_METHOD,
        MY_INNODB,
        MYSQL_SIZES,
        PURGE_LAG,
        MYSQL_NATIVE,
        &[MALLOC],
    ],
};

const MYSQL_CZ10A: Published = Published {
    name: "cz10a",
    // One text for every 8.0 release the studies ran (8.0.0 ... 8.0.40).
    sources: &[Source {
        from: v(8, 0, 11),
        path: "bench/conf/arc/oct24/c8r32/my8036_rel_o2nofp/etc/my.cnf.cz10a_c8r32",
    }],
    parts: &[
        MY_HEAD,
        MY_LOGS,
        MYSQL_AUTH,
        MY_CHARSET,
        MYSQL_FLUSH_METHOD,
        MY_INNODB,
        MYSQL_SIZES,
        MYSQL_NATIVE,
        &[MALLOC],
    ],
    ..MYSQL_CZ11A
};

const MYSQL_CZ12A: Published = Published {
    name: "cz12a",
    sources: &[
        Source {
            from: v(8, 0, 11),
            path: "bench/conf/arc/oct24/c8r32/my8028_rel_o2nofp/etc/my.cnf.cz12a_c8r32",
        },
        Source {
            from: v(8, 0, 30),
            path: "bench/conf/arc/oct24/c8r32/my8040_rel/etc/my.cnf.cz12a_c8r32",
        },
        Source {
            from: v(8, 4, 0),
            path: "bench/conf/arc/oct24/c8r32/my8406_rel_o2nofp/etc/my.cnf.cz12a_c8r32",
        },
        Source {
            from: v(9, 0, 0),
            path: "bench/conf/arc/oct24/c8r32/my97/etc/my.cnf.cz12a_c8r32",
        },
    ],
    parts: &[
        MY_HEAD,
        MY_LOGS,
        MYSQL_AUTH,
        MY_CHARSET,
        MYSQL_FLUSH_METHOD,
        MY_INNODB,
        MYSQL_SIZES,
        PURGE_LAG,
        MYSQL_CZ12A_EXTRA,
        MYSQL_NATIVE,
        &[MALLOC],
    ],
    ..MYSQL_CZ11A
};

const MYSQL_CZ13A: Published = Published {
    name: "cz13a",
    sources: &[Source {
        from: v(8, 0, 11),
        path: "bench/conf/arc/oct24/c8r32/my97/etc/my.cnf.cz13a_c8r32",
    }],
    parts: &[
        MY_HEAD,
        MY_LOGS,
        MYSQL_AUTH,
        MY_CHARSET,
        MYSQL_FLUSH_METHOD,
        MY_INNODB,
        MYSQL_SIZES,
        PURGE_LAG,
        MYSQL_CZ12A_EXTRA,
        MYSQL_CZ13A_EXTRA,
        MYSQL_NATIVE,
        &[MALLOC],
    ],
    ..MYSQL_CZ11A
};

// ---------------------------------------------------------------------------------------------
// MyRocks: my.cnf.cza1_c8r32, published for Facebook's MySQL 8.0.32 (the text is the same in
// every bench/conf/arc/oct24/c8r32/fbmy8032_*/etc/my.cnf.cza1_c8r32), given to MariaDB's
// MyRocks: it has no rocksdb_max_background_compactions / _flushes, only their sum.

const CZA1_SETTINGS: &[Setting] = &[
    kept("sql_mode", "no_engine_substitution,no_unsigned_subtraction"),
    kept("default_tmp_storage_engine", "MyISAM"),
    dropped("tmpdir", "/data/m/fbmy/data", PATH),
    kept("long_query_time", "5"),
    Setting {
        value: "/data/m/fbmy/binlogs/bl",
        ..BINLOG
    },
    kept("max_binlog_size", "128M"),
    kept("server_id", "77"),
    dropped("datadir", "/data/m/fbmy/data", PATH),
    kept("slow_query_log", "0"),
    kept("performance_schema", "1"),
    kept("ssl", "0"),
    dropped(
        "default_authentication_plugin",
        "mysql_native_password",
        "MariaDB has no such setting (it ignores the line with a warning)",
    ),
    kept("character_set_server", "latin1"),
    kept("collation_server", "latin1_swedish_ci"),
    kept("binlog_format", "ROW"),
    kept("binlog_checksum", "crc32"),
    kept("eq_range_index_dive_limit", "10"),
    dropped(
        "rocksdb",
        "",
        "the plugin's switch: dbperf loads MyRocks itself (--plugin-load-add=ha_rocksdb.so)",
    ),
    kept("default-storage-engine", "rocksdb"),
    kept("skip-innodb", ""),
    kept("default-tmp-storage-engine", "MyISAM"),
    dropped("rocksdb_wal_dir", "/data/m/fbmy/txlogs", PATH),
    kept("transaction-isolation", "READ-COMMITTED"),
    kept("sync_binlog", "0"),
    kept("rocksdb_flush_log_at_trx_commit", "2"),
    memory("rocksdb_block_cache_size", "20G"),
    dropped(
        "rocksdb_max_background_compactions",
        "3",
        "MariaDB's MyRocks has no such setting; rocksdb_max_background_jobs below is the sum",
    ),
    dropped(
        "rocksdb_max_background_flushes",
        "1",
        "MariaDB's MyRocks has no such setting; rocksdb_max_background_jobs below is the sum",
    ),
    added(
        "rocksdb_max_background_jobs",
        "4",
        "MariaDB's MyRocks counts flushes and compactions together: 3 + 1 as published",
    ),
    kept(
        "rocksdb_default_cf_options",
        "level_compaction_dynamic_level_bytes=true;block_based_table_factory={cache_index_and_filter_blocks=1;filter_policy=bloomfilter:10:false;whole_key_filtering=1};optimize_filters_for_hits=true;max_write_buffer_number=4;write_buffer_size=32m;max_bytes_for_level_base=256m;compression_per_level=kNoCompression;bottommost_compression=kLZ4Compression",
    ),
    kept("rocksdb_block_size", "8192"),
    kept("rocksdb_cache_index_and_filter_with_high_priority", "ON"),
    kept("rocksdb_cache_high_pri_pool_ratio", "0.5"),
    kept("rocksdb_max_subcompactions", "2"),
    kept("rocksdb_compaction_sequential_deletes", "14999"),
    kept("rocksdb_compaction_sequential_deletes_count_sd", "ON"),
    kept("rocksdb_compaction_sequential_deletes_window", "15000"),
    kept("rocksdb_merge_combine_read_size", "64M"),
    MALLOC,
];

const MARIADB_CZA1: Published = Published {
    name: "cza1",
    engine: Engine::MariaDb,
    rocksdb: true,
    host: &C8R32,
    from: MARIADB_SUPPORTED.0,
    before: MARIADB_SUPPORTED.1,
    versions: "10.5 to 11.8",
    sources: &[Source {
        from: v(10, 5, 0),
        path: "bench/conf/arc/oct24/c8r32/fbmy8032_rel_o2nofp_241023_b72c7e5f_971/etc/my.cnf.cza1_c8r32",
    }],
    parts: &[CZA1_SETTINGS],
};

/// The MySQL family's published configs, in the order they are listed.
pub const MYSQL_FAMILY: &[Published] = &[
    MARIADB_CZ11A,
    MARIADB_CZ10A,
    MYSQL_CZ11A,
    MYSQL_CZ10A,
    MYSQL_CZ12A,
    MYSQL_CZ13A,
    MARIADB_CZA1,
];
