//! What a server shows of itself at a stall (`Dbms::stall_state`): every session and what it
//! waits on, the lock waits with who holds each lock, the engine's status; and the one
//! sentence those figures support about why the step stopped making progress.

use serde::Deserialize;

/// The server's own view of a moment, from a connection of its own.
#[derive(Debug, Clone, Default)]
pub struct StallState {
    /// (a short name for the section, its text), for a person to read: the sessions, the lock
    /// waits, the engine's status. A view that could not be read is its name with why.
    pub reports: Vec<(&'static str, String)>,
    /// Sessions waiting on a lock another session holds.
    pub lock_waits: Vec<LockWait>,
    /// InnoDB's undo history not yet purged, and the config's `innodb_max_purge_lag` past
    /// which DML is delayed (0: no limit), when the server has them.
    pub purge: Option<Purge>,
}

/// One session waiting on a lock, and the session holding it.
#[derive(Debug, Clone, PartialEq, Deserialize)]
pub struct LockWait {
    /// The waiting session's id (PostgreSQL's pid, MySQL's processlist id).
    pub waiter: String,
    /// Its statement, cut to a few hundred characters.
    pub waiter_query: String,
    /// The holding session's id.
    pub holder: String,
    /// What the holder is doing: PostgreSQL's `state` ("idle in transaction"), MySQL's
    /// command ("Sleep") and transaction state.
    pub holder_state: String,
    /// Its statement, if it runs one (empty when it sits idle in its transaction).
    pub holder_query: String,
    /// The object locked and the mode asked for ("pi1 (RowExclusiveLock)").
    pub object: String,
    /// How long the waiter has waited, seconds, when the server says.
    pub waited_s: Option<f64>,
}

/// InnoDB's purge state.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Purge {
    /// "History list length" of SHOW ENGINE INNODB STATUS.
    pub history_length: u64,
    /// `innodb_max_purge_lag`.
    pub max_purge_lag: u64,
}

impl StallState {
    /// The likely cause the figures show, in one sentence; None when they show none.
    pub fn likely_cause(&self) -> Option<String> {
        if let Some(w) = self.lock_waits.first() {
            let holder = if w.holder_query.is_empty() {
                format!("{}, running no statement", w.holder_state)
            } else {
                format!("{}: `{}`", w.holder_state, w.holder_query)
            };
            let waited = w
                .waited_s
                .map_or("waits".to_string(), |s| format!("has waited {s:.0} s"));
            let more = match self.lock_waits.len() - 1 {
                0 => String::new(),
                n => format!(" ({n} more lock waits)"),
            };
            return Some(format!(
                "a lock wait: session {} (`{}`) {waited} for a lock on {} that session {} \
                 ({holder}) holds{more}",
                w.waiter, w.waiter_query, w.object, w.holder
            ));
        }
        match self.purge {
            Some(p) if p.max_purge_lag > 0 && p.history_length > p.max_purge_lag => Some(format!(
                "a purge-lag delay: InnoDB's history list length is {}, past \
                 innodb_max_purge_lag = {}, so every insert, update and delete is delayed \
                 (innodb_max_purge_lag_delay) until purge catches up",
                p.history_length, p.max_purge_lag
            )),
            _ => None,
        }
    }

    /// The state as one text file: each report under its name.
    pub fn text(&self) -> String {
        let mut out = String::new();
        if let Some(c) = self.likely_cause() {
            out.push_str(&format!("likely cause: {c}\n\n"));
        }
        if let Some(p) = self.purge {
            out.push_str(&format!(
                "InnoDB history list length {}, innodb_max_purge_lag {}\n\n",
                p.history_length, p.max_purge_lag
            ));
        }
        for (name, text) in &self.reports {
            out.push_str(&format!("== {name}\n{text}\n"));
        }
        out
    }
}

/// "History list length N" in the text of SHOW ENGINE INNODB STATUS.
pub fn history_length(innodb_status: &str) -> Option<u64> {
    innodb_status.lines().find_map(|l| {
        l.trim()
            .strip_prefix("History list length")
            .and_then(|n| n.trim().parse().ok())
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn wait() -> LockWait {
        LockWait {
            waiter: "41".into(),
            waiter_query: "INSERT INTO pi1 ...".into(),
            holder: "17".into(),
            holder_state: "idle in transaction".into(),
            holder_query: String::new(),
            object: "pi1 (RowExclusiveLock)".into(),
            waited_s: Some(7.2),
        }
    }

    #[test]
    fn a_lock_wait_names_the_holder_and_the_waiter() {
        let s = StallState {
            lock_waits: vec![wait(), wait()],
            ..Default::default()
        };
        let c = s.likely_cause().unwrap();
        assert_eq!(
            c,
            "a lock wait: session 41 (`INSERT INTO pi1 ...`) has waited 7 s for a lock on pi1 \
             (RowExclusiveLock) that session 17 (idle in transaction, running no statement) \
             holds (1 more lock waits)"
        );
        assert!(c.contains("(1 more lock waits)"), "{c}");
    }

    #[test]
    fn a_purge_lag_is_a_cause_only_past_its_limit() {
        let mut s = StallState {
            purge: Some(Purge {
                history_length: 600_000,
                max_purge_lag: 500_000,
            }),
            ..Default::default()
        };
        assert!(s.likely_cause().unwrap().contains("600000, past"));
        s.purge = Some(Purge {
            history_length: 2_666,
            max_purge_lag: 500_000,
        });
        assert_eq!(s.likely_cause(), None);
        s.purge = Some(Purge {
            history_length: 2_666,
            max_purge_lag: 0,
        });
        assert_eq!(s.likely_cause(), None);
    }

    #[test]
    fn the_history_length_is_read_from_innodb_status() {
        let t = "------------\nTRANSACTIONS\n------------\nTrx id counter 123\n\
                 Purge done for trx's n:o < 120 undo n:o < 0 state: running\n\
                 History list length 2666\n";
        assert_eq!(history_length(t), Some(2666));
        assert_eq!(history_length("nothing"), None);
    }
}
