//! Write amplification from a step's counters: what the device wrote against what the DBMS says
//! it wrote (its log plus its data pages), the log bytes per log sync, and how much a sync
//! smaller than a filesystem page pads the real log write (definitions: docs/metrics.md).

use std::collections::BTreeMap;

use crate::engines::{Engine, Family};

pub use crate::results::hardware::{SnapshotAt, WriteAmp};

/// Filesystem page: a synced write smaller than this still writes (at least) this much.
pub const FS_PAGE: f64 = 4096.0;

fn get(c: &BTreeMap<String, f64>, k: &str) -> Option<f64> {
    c.get(k).copied()
}

/// `delta`: the step's counter differences (names as `Dbms::counters` gives them);
/// `device_write_bytes`: bytes written to the data device in the same interval, if known;
/// `page_size`: the server's page size in bytes, if known: `innodb_page_size` (16 KiB assumed
/// otherwise), PostgreSQL's `block_size` (8 KiB assumed otherwise).
pub fn analyse(
    engine: Engine,
    delta: &BTreeMap<String, f64>,
    device_write_bytes: Option<f64>,
    page_size: Option<f64>,
) -> WriteAmp {
    let mut notes = Vec::new();
    let family = engine.family();
    let rocksdb = delta.contains_key("rocksdb_wal_bytes");
    let (log_counter, log_bytes, log_syncs) = match family {
        Family::Postgres => (
            Some("pg_stat_wal.wal_bytes (WAL LSN difference where absent)"),
            get(delta, "wal_bytes").or_else(|| get(delta, "wal_lsn_bytes")),
            get(delta, "wal_sync"),
        ),
        Family::MySql if rocksdb => (
            Some("rocksdb_wal_bytes"),
            get(delta, "rocksdb_wal_bytes"),
            get(delta, "rocksdb_wal_synced"),
        ),
        Family::MySql => {
            // Both snapshots were taken (`without_counters` otherwise), and asked for it.
            if !delta.contains_key("innodb_os_log_fsyncs") {
                let since = match engine {
                    Engine::MariaDb => " (MariaDB 10.8+ removed it)",
                    _ => "",
                };
                notes.push(format!(
                    "Innodb_os_log_fsyncs does not exist on this {engine} server{since}: log \
                     bytes per sync and the padding estimate are not available"
                ));
            }
            (
                Some("Innodb_os_log_written"),
                get(delta, "innodb_os_log_written"),
                get(delta, "innodb_os_log_fsyncs"),
            )
        }
        Family::Embedded => {
            notes.push(format!(
                "{engine} reports no log or page write counters: only the device's bytes are known"
            ));
            (None, None, None)
        }
    };
    let (data_counter, data_bytes) = match family {
        Family::Postgres => {
            let pages: f64 = [
                "buffers_written_checkpoint",
                "buffers_written_bgwriter",
                "buffers_written_backend",
            ]
            .iter()
            .filter_map(|k| get(delta, k))
            .sum();
            let block = page_size.filter(|p| *p > 0.0).unwrap_or_else(|| {
                notes.push("block_size unknown: buffers counted as 8 KiB".to_string());
                8192.0
            });
            (
                Some(
                    "buffers written by checkpointer, bgwriter and backends (pg_stat_checkpointer, \
                     pg_stat_bgwriter, pg_stat_io) × block_size",
                ),
                Some(pages * block),
            )
        }
        Family::MySql if rocksdb => (
            Some("rocksdb_flush_write_bytes + rocksdb_compact_write_bytes"),
            Some(
                get(delta, "rocksdb_flush_write_bytes").unwrap_or(0.0)
                    + get(delta, "rocksdb_compact_write_bytes").unwrap_or(0.0),
            ),
        ),
        Family::MySql => {
            let page = page_size.filter(|p| *p > 0.0).unwrap_or_else(|| {
                notes.push("innodb_page_size unknown: pages counted as 16 KiB".to_string());
                16384.0
            });
            (
                Some("(Innodb_pages_written + Innodb_dblwr_pages_written) × innodb_page_size"),
                Some(
                    (get(delta, "innodb_pages_written").unwrap_or(0.0)
                        + get(delta, "innodb_dblwr_pages_written").unwrap_or(0.0))
                        * page,
                ),
            )
        }
        Family::Embedded => (None, None),
    };
    // The binary log is a second log on MariaDB/MySQL: what the DBMS wrote includes it.
    let binlog_bytes = match family {
        Family::MySql => get(delta, "binlog_bytes_written")
            .or_else(|| get(delta, crate::results::hardware::BINLOG_FILE_BYTES))
            .filter(|b| *b > 0.0),
        Family::Postgres | Family::Embedded => None,
    };
    if binlog_bytes.is_some() && !delta.contains_key("binlog_bytes_written") {
        notes.push(
            "binlog bytes from performance_schema's binlog file instrument (MySQL has no \
             Binlog_bytes_written)"
                .into(),
        );
    }
    let binlog_syncs = binlog_bytes.and(get(delta, "binlog_group_commits"));
    let binlog_bytes_per_sync = match (binlog_bytes, binlog_syncs) {
        (Some(b), Some(s)) if s > 0.0 => Some(b / s),
        _ => None,
    };
    if binlog_bytes.is_some() && binlog_syncs.is_none() {
        notes.push(
            "the server counts no binlog group commits (MySQL): binlog bytes per sync are not \
             available"
                .into(),
        );
    }
    let dbms_bytes = match (log_bytes, data_bytes) {
        (Some(l), Some(d)) => Some(l + d),
        (Some(l), None) => Some(l),
        _ => None,
    }
    .map(|b| b + binlog_bytes.unwrap_or(0.0));
    let amplification = match (device_write_bytes, dbms_bytes) {
        (Some(dev), Some(db)) if db > 0.0 => Some(dev / db),
        _ => None,
    };
    if device_write_bytes.is_none() {
        notes.push("the device's writes are unknown (external server or no block device)".into());
    }
    let per_sync = match (log_bytes, log_syncs) {
        (Some(b), Some(s)) if s > 0.0 => Some(b / s),
        _ => None,
    };
    let padded = match (per_sync, log_syncs) {
        (Some(p), Some(s)) => Some(s * (p / FS_PAGE).ceil().max(1.0) * FS_PAGE),
        _ => None,
    };
    let padding_factor = match (padded, log_bytes) {
        (Some(p), Some(b)) if b > 0.0 => Some(p / b),
        _ => None,
    };
    if let (Some(p), Some(f)) = (per_sync, padding_factor) {
        if p < FS_PAGE {
            notes.push(format!(
                "each log sync wrote {p:.0} bytes on average, less than a {FS_PAGE:.0}-byte \
                 filesystem page: the device writes a whole page per sync, so the real log write \
                 rate is about {f:.1}x the DBMS's own counter. Group commit (more clients per \
                 sync) or a larger commit batch lowers it."
            ));
        }
    }
    WriteAmp {
        log_counter: log_counter.map(str::to_string),
        data_counter: data_counter.map(str::to_string),
        log_bytes,
        log_syncs,
        data_bytes,
        device_write_bytes,
        amplification,
        log_bytes_per_sync: per_sync,
        padded_log_bytes: padded,
        padding_factor,
        binlog_bytes,
        binlog_syncs,
        binlog_bytes_per_sync,
        notes,
    }
}

/// The write amplification of a step whose counter snapshot at `at` was not taken (`why`):
/// only the device's bytes are known, and the note says which snapshot is missing rather than
/// which counter.
pub fn without_counters(at: SnapshotAt, why: &str, device_write_bytes: Option<f64>) -> WriteAmp {
    WriteAmp {
        log_counter: None,
        data_counter: None,
        log_bytes: None,
        log_syncs: None,
        data_bytes: None,
        device_write_bytes,
        amplification: None,
        log_bytes_per_sync: None,
        padded_log_bytes: None,
        padding_factor: None,
        binlog_bytes: None,
        binlog_syncs: None,
        binlog_bytes_per_sync: None,
        notes: vec![format!(
            "the DBMS's counters were not read at the step's {at} ({why}): write amplification, \
             log bytes per sync and the padding estimate are not available"
        )],
    }
}

/// Longest `SHOW GLOBAL STATUS` text read: a server prints under 2,000 rows of short lines.
pub const STATUS_TEXT_MAX: usize = 4 << 20;

/// Counters from the text of `SHOW GLOBAL STATUS` (or `SHOW STATUS`) as the mysql/mariadb
/// client prints it: the boxed table (`| Innodb_os_log_written | 123 |`), batch output
/// (`mysql -B`, tab-separated) or `\G` output (`Variable_name: x` / `Value: 123`). Names are
/// lower-cased; rows whose value is not a number are skipped. Err when nothing was found.
pub fn parse_status_text(text: &str) -> Result<BTreeMap<String, f64>, String> {
    if text.len() > STATUS_TEXT_MAX {
        return Err(format!(
            "is {} bytes, more than SHOW GLOBAL STATUS prints ({STATUS_TEXT_MAX} at most)",
            text.len()
        ));
    }
    let mut out = BTreeMap::new();
    let mut pending: Option<String> = None;
    for line in text.lines() {
        let l = line.trim();
        // \G output: a name line, then its value line.
        if let Some(n) = l.strip_prefix("Variable_name:") {
            pending = Some(n.trim().to_ascii_lowercase());
            continue;
        }
        if let Some(v) = l.strip_prefix("Value:") {
            if let (Some(n), Ok(x)) = (pending.take(), v.trim().parse::<f64>()) {
                // As in the table formats: "NaN" or "inf" is no counter.
                if x.is_finite() {
                    out.insert(n, x);
                }
            }
            continue;
        }
        let fields: Vec<&str> = l
            .trim_matches('|')
            .split(['|', '\t'])
            .map(str::trim)
            .filter(|f| !f.is_empty())
            .collect();
        let fields = if fields.len() == 1 {
            fields[0].split_whitespace().collect()
        } else {
            fields
        };
        if let [name, value] = fields.as_slice() {
            let ok_name = name.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_');
            if let (true, Ok(x)) = (ok_name, value.parse::<f64>()) {
                if x.is_finite() {
                    out.insert(name.to_ascii_lowercase(), x);
                }
            }
        }
    }
    if out.is_empty() {
        return Err("has no `name value` rows of SHOW GLOBAL STATUS".into());
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn m(kv: &[(&str, f64)]) -> BTreeMap<String, f64> {
        kv.iter().map(|(k, v)| (k.to_string(), *v)).collect()
    }

    #[test]
    fn small_syncs_pad_the_log_to_whole_pages() {
        // 1000 commits of 512 bytes each, 10 MB of pages, 24 MB at the device.
        let d = m(&[
            ("innodb_os_log_written", 512_000.0),
            ("innodb_os_log_fsyncs", 1000.0),
            ("innodb_pages_written", 500.0),
            ("innodb_dblwr_pages_written", 100.0),
        ]);
        let w = analyse(Engine::MySql, &d, Some(24_000_000.0), Some(16384.0));
        assert_eq!(w.data_bytes, Some(600.0 * 16384.0));
        assert_eq!(w.log_bytes_per_sync, Some(512.0));
        assert_eq!(w.padded_log_bytes, Some(1000.0 * 4096.0));
        assert_eq!(w.padding_factor, Some(8.0));
        let amp = w.amplification.unwrap();
        assert!((amp - 24_000_000.0 / (512_000.0 + 600.0 * 16384.0)).abs() < 1e-9);
        assert!(w.notes.iter().any(|n| n.contains("8.0x")), "{:?}", w.notes);
    }

    #[test]
    fn missing_counters_are_said_not_guessed() {
        let w = analyse(
            Engine::MariaDb,
            &m(&[("innodb_os_log_written", 1e6)]),
            None,
            None,
        );
        assert_eq!(w.log_syncs, None);
        assert_eq!(w.padding_factor, None);
        assert_eq!(w.amplification, None);
        assert!(w.notes.iter().any(|n| n.contains("10.8")));
        let w = analyse(Engine::Sqlite, &BTreeMap::new(), Some(1e6), None);
        assert_eq!(w.amplification, None);
        assert!(w.notes[0].contains("sqlite"));
        let w = analyse(
            Engine::Postgres,
            &m(&[
                ("wal_bytes", 8192.0 * 10.0),
                ("wal_sync", 2.0),
                ("buffers_written_checkpoint", 10.0),
            ]),
            Some(8192.0 * 40.0),
            None,
        );
        assert_eq!(w.amplification, Some(2.0));
        assert_eq!(w.padding_factor, Some(1.0));
    }

    /// A step whose end snapshot was not taken (a failed step on a stalled server) says so,
    /// never that the server lacks a counter.
    #[test]
    fn a_missing_snapshot_is_not_a_missing_counter() {
        let w = without_counters(SnapshotAt::End, "the server did not answer", Some(1e6));
        assert_eq!(w.device_write_bytes, Some(1e6));
        assert_eq!(w.log_syncs, None);
        assert_eq!(w.notes.len(), 1);
        assert!(
            w.notes[0].contains("not read at the step's end"),
            "{:?}",
            w.notes
        );
        assert!(!w.notes[0].contains("does not exist"), "{:?}", w.notes);
        let w = analyse(
            Engine::MySql,
            &m(&[("innodb_os_log_written", 1e6)]),
            None,
            None,
        );
        let note = w
            .notes
            .iter()
            .find(|n| n.contains("Innodb_os_log_fsyncs"))
            .unwrap();
        assert!(note.contains("this mysql server:"), "{note}");
        assert!(!note.contains("MariaDB"), "{note}");
    }

    #[test]
    fn mysqls_binlog_bytes_come_from_its_file_instrument() {
        let w = analyse(
            Engine::MySql,
            &m(&[
                ("innodb_os_log_written", 1000.0),
                ("innodb_os_log_fsyncs", 2.0),
                (crate::results::hardware::BINLOG_FILE_BYTES, 3000.0),
            ]),
            Some(8000.0),
            Some(16384.0),
        );
        assert_eq!(w.binlog_bytes, Some(3000.0));
        assert_eq!(w.binlog_syncs, None);
        assert!(
            w.notes.iter().any(|n| n.contains("performance_schema")),
            "{:?}",
            w.notes
        );
    }

    #[test]
    fn the_binlog_counts_as_dbms_writes_with_its_bytes_per_sync() {
        let d = m(&[
            ("innodb_os_log_written", 1000.0),
            ("innodb_os_log_fsyncs", 10.0),
            ("binlog_bytes_written", 3000.0),
            ("binlog_group_commits", 6.0),
        ]);
        let w = analyse(Engine::MariaDb, &d, Some(8000.0), Some(16384.0));
        assert_eq!(w.binlog_bytes, Some(3000.0));
        assert_eq!(w.binlog_bytes_per_sync, Some(500.0));
        assert_eq!(w.amplification, Some(2.0), "8000 / (1000 + 3000)");
        let w = analyse(
            Engine::MySql,
            &m(&[
                ("innodb_os_log_written", 1.0),
                ("binlog_bytes_written", 5.0),
            ]),
            None,
            None,
        );
        assert_eq!(w.binlog_syncs, None);
        assert!(w.notes.iter().any(|n| n.contains("group commits")));
        let w = analyse(
            Engine::MariaDb,
            &m(&[("binlog_bytes_written", 0.0)]),
            None,
            None,
        );
        assert_eq!(w.binlog_bytes, None, "no binlog");
    }

    #[test]
    fn status_text_in_every_client_format() {
        let boxed = "+----------------------+-------+\n| Variable_name        | Value |\n+----------------------+-------+\n| Innodb_os_log_written | 1536 |\n| Innodb_buffer_pool_dump_status | Dumping of buffer pool not started |\n| Uptime | 20 |\n+---+---+\n";
        let c = parse_status_text(boxed).unwrap();
        assert_eq!(c.get("innodb_os_log_written"), Some(&1536.0));
        assert_eq!(c.get("uptime"), Some(&20.0));
        assert_eq!(c.len(), 2);
        let batch = "Variable_name\tValue\nBinlog_bytes_written\t99\nInnodb_page_size\t16384\n";
        let c = parse_status_text(batch).unwrap();
        assert_eq!(c.get("binlog_bytes_written"), Some(&99.0));
        let g = "*** 1. row ***\nVariable_name: Innodb_pages_written\n        Value: 7\n";
        assert_eq!(
            parse_status_text(g).unwrap().get("innodb_pages_written"),
            Some(&7.0)
        );
        assert!(parse_status_text("hello\n").is_err());
        assert!(parse_status_text(&"x".repeat(STATUS_TEXT_MAX + 1)).is_err());
    }

    /// Found by tests/fuzz.rs: `\G` output took "NaN" and "inf" as counter values (the table
    /// formats did not), which then printed as NaN MiB.
    #[test]
    fn status_text_values_are_finite_in_every_format() {
        let g = "Variable_name: Innodb_os_log_written\n        Value: NaN\n\
                 Variable_name: Innodb_pages_written\nValue: inf\nVariable_name: Uptime\nValue: 3\n";
        let c = parse_status_text(g).unwrap();
        assert_eq!(c.len(), 1, "{c:?}");
        assert_eq!(c.get("uptime"), Some(&3.0));
    }

    #[test]
    fn innodb_pages_are_counted_at_the_servers_page_size() {
        let d = m(&[
            ("innodb_pages_written", 10.0),
            ("innodb_dblwr_pages_written", 2.0),
        ]);
        let w = analyse(Engine::MariaDb, &d, None, Some(4096.0));
        assert_eq!(w.data_bytes, Some(12.0 * 4096.0));
        assert!(!w.notes.iter().any(|n| n.contains("innodb_page_size")));
        let w = analyse(Engine::MariaDb, &d, None, None);
        assert_eq!(w.data_bytes, Some(12.0 * 16384.0));
        assert!(w
            .notes
            .iter()
            .any(|n| n.contains("innodb_page_size unknown")));
    }
}
