//! PostgreSQL's published configs (published.rs has the types): the settings of each, on which
//! versions, and why one is not given as published.

use super::published::{between, from, kept, memory, v, Published, Setting, Source, C8R32};
use super::version::Version;
use crate::engines::Engine;

// ---------------------------------------------------------------------------------------------
// PostgreSQL: conf.diff.cx9a2_c8r32 (PostgreSQL 10 to 17) and its successors cx10a (12 to 18)
// and cx10b (18, io_method=sync). The text of cx9a2 is the same for 13.13 ... 17beta1
// (bench/conf/arc/oct24/c8r32/pg163_def/conf.diff.cx9a2_c8r32); the file for 12
// (.../pg1219_def/...) comments out autovacuum_vacuum_insert_scale_factor, which 12 lacks.

const PG_SUPPORTED: (Version, Version) = (v(12, 0, 0), v(19, 0, 0));

const PG_HEAD: &[Setting] = &[
    kept("huge_pages", "off"),
    kept("max_parallel_workers_per_gather", "0"),
    kept("max_parallel_workers", "0"),
    kept("checkpoint_warning", "1800s"),
    kept("wal_sync_method", "fdatasync"),
    kept("wal_level", "'replica'"),
    kept("full_page_writes", "on"),
    kept("track_io_timing", "on"),
    kept("synchronous_commit", "off"),
    memory("shared_buffers", "23GB"),
    kept("bgwriter_lru_maxpages", "2000"),
    kept("bgwriter_delay", "100ms"),
    kept("wal_compression", "off"),
    kept("max_wal_size", "40GB"),
    kept("min_wal_size", "20GB"),
    kept("log_autovacuum_min_duration", "0"),
    kept("log_checkpoints", "on"),
    kept("checkpoint_timeout", "1800s"),
    kept("checkpoint_completion_target", "0.9"),
    kept("autovacuum_max_workers", "4"),
    kept("autovacuum_naptime", "10s"),
];

const PG_COST_DELAY_2MS: &[Setting] = &[kept("autovacuum_vacuum_cost_delay", "2ms")];
const PG_COST_DELAY_1MS: &[Setting] = &[kept("autovacuum_vacuum_cost_delay", "1ms")];

const PG_TAIL: &[Setting] = &[
    kept("autovacuum_vacuum_cost_limit", "4000"),
    kept("autovacuum_vacuum_scale_factor", "0.05"),
    from(
        "autovacuum_vacuum_insert_scale_factor",
        "0.05",
        v(13, 0, 0),
        "PostgreSQL has it from 13; the published files for 10 to 12 leave it out",
    ),
    kept("autovacuum_work_mem", "256MB"),
];

/// cx10a after cx9a2's settings (bench/conf/arc/oct24/c8r32/pg172_o2nofp/conf.diff.cx10a_c8r32;
/// the files for 12 to 15 and for 18 leave vacuum_buffer_usage_limit out).
const PG_CX10A: &[Setting] = &[
    between(
        "vacuum_buffer_usage_limit",
        "256MB",
        (v(16, 0, 0), v(18, 0, 0)),
        "PostgreSQL has it from 16; the published files have it for 16 and 17 only",
    ),
    kept("jit", "off"),
];

/// cx10b after cx9a2's settings (bench/conf/arc/may25.pg18/pn53/conf.diff.cx10b_c8r32).
const PG_CX10B: &[Setting] = &[
    from(
        "io_method",
        "'sync'",
        v(18, 0, 0),
        "PostgreSQL has it from 18 (earlier versions do synchronous IO, as 'sync' does)",
    ),
    kept("jit", "off"),
];

/// The studies ran PostgreSQL 10 and 11 with cx9a2 too (their files for 10.23 and 11.22 hold the
/// same settings as 12's), so cx9a2 alone reaches back to 10.
const CX9A2: Published = Published {
    name: "cx9a2",
    engine: Engine::Postgres,
    rocksdb: false,
    host: &C8R32,
    from: v(10, 0, 0),
    before: PG_SUPPORTED.1,
    versions: "10 to 18",
    sources: &[
        Source {
            from: v(10, 0, 0),
            path: "bench/conf/arc/may24.pn53.pg17/conf.diff.cx9a2_c8r32.pg1023",
        },
        Source {
            from: v(11, 0, 0),
            path: "bench/conf/arc/may24.pn53.pg17/conf.diff.cx9a2_c8r32.pg1122",
        },
        Source {
            from: v(12, 0, 0),
            path: "bench/conf/arc/oct24/c8r32/pg1219_def/conf.diff.cx9a2_c8r32",
        },
        Source {
            from: v(13, 0, 0),
            path: "bench/conf/arc/oct24/c8r32/pg163_def/conf.diff.cx9a2_c8r32",
        },
    ],
    parts: &[PG_HEAD, PG_COST_DELAY_2MS, PG_TAIL],
};

const CX10A: Published = Published {
    name: "cx10a",
    engine: Engine::Postgres,
    rocksdb: false,
    host: &C8R32,
    from: PG_SUPPORTED.0,
    before: PG_SUPPORTED.1,
    versions: "12 to 18",
    sources: &[
        Source {
            from: v(12, 0, 0),
            path: "bench/conf/arc/oct24/c8r32/pg1219_o2nofp/conf.diff.cx10a_c8r32",
        },
        Source {
            from: v(13, 0, 0),
            path: "bench/conf/arc/oct24/c8r32/pg157_o2nofp/conf.diff.cx10a_c8r32",
        },
        Source {
            from: v(16, 0, 0),
            path: "bench/conf/arc/oct24/c8r32/pg172_o2nofp/conf.diff.cx10a_c8r32",
        },
        Source {
            from: v(18, 0, 0),
            path: "bench/conf/arc/oct24/c8r32/pg18_o2nofp/conf.diff.cx10a_c8r32",
        },
    ],
    parts: &[PG_HEAD, PG_COST_DELAY_1MS, PG_TAIL, PG_CX10A],
};

const CX10B: Published = Published {
    name: "cx10b",
    engine: Engine::Postgres,
    rocksdb: false,
    host: &C8R32,
    from: PG_SUPPORTED.0,
    before: PG_SUPPORTED.1,
    versions: "12 to 18",
    sources: &[Source {
        from: v(18, 0, 0),
        path: "bench/conf/arc/may25.pg18/pn53/conf.diff.cx10b_c8r32",
    }],
    parts: &[PG_HEAD, PG_COST_DELAY_1MS, PG_TAIL, PG_CX10B],
};

/// PostgreSQL's published configs, in the order they are listed.
pub const POSTGRES: &[Published] = &[CX9A2, CX10A, CX10B];
