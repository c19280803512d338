//! MySQL's and MariaDB's view of a stall: the processlist, InnoDB's transactions and lock
//! waits with who holds each lock, InnoDB's monitor with its history list length, and the
//! purge lag limit it is held against. Lock waits are read where each server keeps them:
//! MySQL 8.0+ in performance_schema.data_lock_waits, MariaDB in
//! information_schema.INNODB_LOCK_WAITS (MySQL removed it in 8.0).

use super::super::stall::{history_length, LockWait, Purge, StallState};
use super::{rows, to_text, Mysql, Storage, TextRow};
use crate::dbms::{Budget, KEEP, KEEP_REPORT};
use crate::engines::Engine;
use std::time::Duration;

/// The waiter, its statement, the holder, its command and transaction state, its statement,
/// the object and mode, seconds waited: the columns both servers' lock-wait queries give.
const COLUMNS: &str = "CAST(r.trx_mysql_thread_id AS CHAR), LEFT(COALESCE(r.trx_query, ''), 300), \
     CAST(b.trx_mysql_thread_id AS CHAR), \
     CONCAT(COALESCE(p.COMMAND, '?'), ', transaction ', b.trx_state), \
     LEFT(COALESCE(b.trx_query, ''), 300)";

fn lock_waits_sql(engine: Engine) -> String {
    match engine {
        Engine::MySql => format!(
            "SELECT {COLUMNS}, CONCAT(l.OBJECT_SCHEMA, '.', l.OBJECT_NAME, ' (', l.LOCK_MODE, \
             ')'), CAST(TIMESTAMPDIFF(SECOND, r.trx_wait_started, NOW()) AS CHAR) \
             FROM performance_schema.data_lock_waits w \
             JOIN information_schema.INNODB_TRX r \
               ON r.trx_id = w.REQUESTING_ENGINE_TRANSACTION_ID \
             JOIN information_schema.INNODB_TRX b \
               ON b.trx_id = w.BLOCKING_ENGINE_TRANSACTION_ID \
             JOIN performance_schema.data_locks l \
               ON l.ENGINE_LOCK_ID = w.REQUESTING_ENGINE_LOCK_ID \
             LEFT JOIN information_schema.PROCESSLIST p ON p.ID = b.trx_mysql_thread_id"
        ),
        _ => format!(
            "SELECT {COLUMNS}, CONCAT(l.lock_table, ' (', l.lock_mode, ')'), \
             CAST(TIMESTAMPDIFF(SECOND, r.trx_wait_started, NOW()) AS CHAR) \
             FROM information_schema.INNODB_LOCK_WAITS w \
             JOIN information_schema.INNODB_TRX r ON r.trx_id = w.requesting_trx_id \
             JOIN information_schema.INNODB_TRX b ON b.trx_id = w.blocking_trx_id \
             JOIN information_schema.INNODB_LOCKS l ON l.lock_id = w.requested_lock_id \
             LEFT JOIN information_schema.PROCESSLIST p ON p.ID = b.trx_mysql_thread_id"
        ),
    }
}

fn lock_wait(r: &TextRow) -> LockWait {
    let t = |i| to_text(Some(r), i);
    LockWait {
        waiter: t(0),
        waiter_query: t(1),
        holder: t(2),
        holder_state: t(3),
        holder_query: t(4),
        object: t(5),
        waited_s: t(6).parse().ok(),
    }
}

/// Rows as tab-separated lines, or why they could not be read.
fn table(rows: Result<Vec<TextRow>, crate::dbms::DbError>) -> String {
    match rows {
        Ok(rs) => rs
            .iter()
            .map(|r| {
                let cells: Vec<String> = (0..r.len()).map(|i| to_text(Some(r), i)).collect();
                format!("{}\n", cells.join("\t"))
            })
            .collect(),
        Err(e) => format!("could not be read: {e}\n"),
    }
}

/// The server's view of a stall from a connection of the snapshot's own.
pub(super) fn state(m: &Mysql, within: Duration) -> StallState {
    let mut conn = match m.open_snapshot(within) {
        Ok(c) => c,
        Err(e) => {
            return StallState {
                reports: vec![("processlist", format!("could not be read: {e}\n"))],
                ..Default::default()
            }
        }
    };
    let b = Budget::Operation;
    let mut reports = vec![(
        "processlist",
        table(rows(
            &mut conn,
            "SELECT ID, USER, DB, COMMAND, TIME, STATE, LEFT(INFO, 300) \
             FROM information_schema.PROCESSLIST WHERE ID <> CONNECTION_ID()",
            b,
            KEEP,
        )),
    )];
    let mut state = StallState::default();
    if m.storage == Storage::InnoDb {
        reports.push((
            "innodb_trx",
            table(rows(
                &mut conn,
                "SELECT trx_mysql_thread_id, trx_state, trx_started, trx_wait_started, \
                 trx_rows_locked, trx_rows_modified, LEFT(trx_query, 300) \
                 FROM information_schema.INNODB_TRX",
                b,
                KEEP,
            )),
        ));
        let waits = rows(&mut conn, &lock_waits_sql(m.engine), b, KEEP);
        if let Ok(w) = &waits {
            state.lock_waits = w.iter().map(lock_wait).collect();
        }
        reports.push(("lock_waits", table(waits)));
        let status = rows(&mut conn, "SHOW ENGINE INNODB STATUS", b, KEEP_REPORT);
        let text = match status {
            Ok(rs) => rs.first().map(|r| to_text(Some(r), 2)).unwrap_or_default(),
            Err(e) => format!("could not be read: {e}\n"),
        };
        let lag = rows(&mut conn, "SELECT @@innodb_max_purge_lag", b, KEEP)
            .ok()
            .and_then(|r| to_text(r.first(), 0).parse().ok());
        state.purge = history_length(&text)
            .zip(lag)
            .map(|(history_length, max_purge_lag)| Purge {
                history_length,
                max_purge_lag,
            });
        reports.push(("innodb_status", text));
    }
    state.reports = reports;
    state
}
