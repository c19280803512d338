//! Write amplification from a step's counters: what the device wrote against what the DBMS says
//! it wrote (its log plus its data pages), the log bytes per log sync, and how much a sync
//! smaller than a filesystem page pads the real log write (definitions: docs/metrics.md).

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

/// Filesystem page: a synced write smaller than this still writes (at least) this much.
pub const FS_PAGE: f64 = 4096.0;

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct WriteAmp {
    /// Which counters were used, in words (engines name them differently).
    pub log_counter: Option<String>,
    pub data_counter: Option<String>,
    pub log_bytes: Option<f64>,
    pub log_syncs: Option<f64>,
    pub data_bytes: Option<f64>,
    pub device_write_bytes: Option<f64>,
    /// device_write_bytes / (log_bytes + data_bytes).
    pub amplification: Option<f64>,
    pub log_bytes_per_sync: Option<f64>,
    /// Bytes the log syncs write when each rounds up to FS_PAGE: syncs × ceil(per sync / 4096)
    /// × 4096; and that over log_bytes.
    pub padded_log_bytes: Option<f64>,
    pub padding_factor: Option<f64>,
    pub notes: Vec<String>,
}

fn get(c: &BTreeMap<String, f64>, k: &str) -> Option<f64> {
    c.get(k).copied()
}

/// `delta`: the step's counter differences (names as `Dbms::counters` gives them);
/// `device_write_bytes`: bytes written to the data device in the same interval, if known;
/// `innodb_page_size`: the server's, in bytes, if known (16 KiB is assumed otherwise).
pub fn analyse(
    engine: &str,
    delta: &BTreeMap<String, f64>,
    device_write_bytes: Option<f64>,
    innodb_page_size: Option<f64>,
) -> WriteAmp {
    let mut notes = Vec::new();
    let (log_counter, log_bytes, log_syncs) = match engine {
        "postgres" => (
            Some("pg_stat_wal.wal_bytes (WAL LSN difference where absent)"),
            get(delta, "wal_bytes").or_else(|| get(delta, "wal_lsn_bytes")),
            get(delta, "wal_sync"),
        ),
        "mariadb" | "mysql" if delta.contains_key("rocksdb_wal_bytes") => (
            Some("rocksdb_wal_bytes"),
            get(delta, "rocksdb_wal_bytes"),
            get(delta, "rocksdb_wal_synced"),
        ),
        "mariadb" | "mysql" => {
            if !delta.contains_key("innodb_os_log_fsyncs") {
                notes.push(
                    "Innodb_os_log_fsyncs does not exist on this server (MariaDB 10.8+ removed \
                     it): log bytes per sync and the padding estimate are not available"
                        .into(),
                );
            }
            (
                Some("Innodb_os_log_written"),
                get(delta, "innodb_os_log_written"),
                get(delta, "innodb_os_log_fsyncs"),
            )
        }
        _ => {
            notes.push(format!(
                "{engine} reports no log or page write counters: only the device's bytes are known"
            ));
            (None, None, None)
        }
    };
    let (data_counter, data_bytes) = match engine {
        "postgres" => {
            let pages: f64 = [
                "buffers_written_checkpoint",
                "buffers_written_bgwriter",
                "buffers_written_backend",
            ]
            .iter()
            .filter_map(|k| get(delta, k))
            .sum();
            (
                Some("pg_stat_bgwriter/pg_stat_checkpointer buffers written × 8 KiB"),
                Some(pages * 8192.0),
            )
        }
        "mariadb" | "mysql" if delta.contains_key("rocksdb_wal_bytes") => (
            Some("rocksdb_flush_write_bytes + rocksdb_compact_write_bytes"),
            Some(
                get(delta, "rocksdb_flush_write_bytes").unwrap_or(0.0)
                    + get(delta, "rocksdb_compact_write_bytes").unwrap_or(0.0),
            ),
        ),
        "mariadb" | "mysql" => {
            let page = innodb_page_size.filter(|p| *p > 0.0).unwrap_or_else(|| {
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
        _ => (None, None),
    };
    let dbms_bytes = match (log_bytes, data_bytes) {
        (Some(l), Some(d)) => Some(l + d),
        (Some(l), None) => Some(l),
        _ => None,
    };
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
        notes,
    }
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
        let w = analyse("mysql", &d, Some(24_000_000.0), Some(16384.0));
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
        let w = analyse("mariadb", &m(&[("innodb_os_log_written", 1e6)]), None, None);
        assert_eq!(w.log_syncs, None);
        assert_eq!(w.padding_factor, None);
        assert_eq!(w.amplification, None);
        assert!(w.notes.iter().any(|n| n.contains("10.8")));
        let w = analyse("sqlite", &BTreeMap::new(), Some(1e6), None);
        assert_eq!(w.amplification, None);
        assert!(w.notes[0].contains("sqlite"));
        let w = analyse(
            "postgres",
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

    #[test]
    fn innodb_pages_are_counted_at_the_servers_page_size() {
        let d = m(&[
            ("innodb_pages_written", 10.0),
            ("innodb_dblwr_pages_written", 2.0),
        ]);
        let w = analyse("mariadb", &d, None, Some(4096.0));
        assert_eq!(w.data_bytes, Some(12.0 * 4096.0));
        assert!(!w.notes.iter().any(|n| n.contains("innodb_page_size")));
        let w = analyse("mariadb", &d, None, None);
        assert_eq!(w.data_bytes, Some(12.0 * 16384.0));
        assert!(w
            .notes
            .iter()
            .any(|n| n.contains("innodb_page_size unknown")));
    }
}
