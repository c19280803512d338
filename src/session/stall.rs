//! A stall diagnosed before anything is killed: when a step's first failure is a stall (a
//! statement past --statement-timeout, an operation overdue, a server that stopped answering),
//! the server's own view of that moment is read from a fresh connection while the step's
//! connections are still as they were (`runner::Watchdog::on_failure`), written beside the step
//! file, and its likely cause added to the step's error.

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use crate::dbms::{self, Dbms};
use crate::runner::{Cause, OnFailure};

/// What the stall snapshot found, for the step's error and file list.
#[derive(Debug, Clone, PartialEq)]
pub(super) struct Found {
    /// Appended to the step's error: the likely cause, or "no cause found", and the file.
    pub sentence: String,
    /// `<step>.stall.txt`, when written.
    pub file: Option<String>,
    /// "file: why" when it could not be written.
    pub not_written: Option<String>,
}

/// Where the hook leaves what it found, for `measure` to read after the step.
pub(super) type Slot = Arc<Mutex<Option<Found>>>;

/// The hook the runner calls with the step's first failure: a snapshot when it is a stall,
/// within `within` for each of its waits, into `<step>.stall.txt` in `dir`.
pub(super) fn hook(
    target: Arc<dyn Dbms>,
    dir: &Path,
    step: &str,
    within: Duration,
    slot: Slot,
) -> OnFailure {
    let dir: PathBuf = dir.to_path_buf();
    let step = step.to_string();
    Box::new(move |cause: Option<&Cause>| {
        let stalled = cause
            .and_then(|c| dbms::fault_of(c.as_ref()))
            .is_some_and(dbms::Fault::is_stall);
        if !stalled {
            return;
        }
        let found = snapshot(&*target, &dir, &step, within);
        *slot.lock().unwrap_or_else(|e| e.into_inner()) = Some(found);
    })
}

/// The longest each wait of the stall snapshot takes: it runs while the step's other
/// connections wait for it, and reads several views.
const WAIT_MAX: Duration = Duration::from_secs(10);

fn snapshot(target: &dyn Dbms, dir: &Path, step: &str, within: Duration) -> Found {
    let within = within.min(WAIT_MAX);
    if !target.answers(within) {
        return Found {
            sentence: format!(
                "; the server's state at the stall was not read: it did not answer a new \
                 connection within {}",
                dbms::seconds(within)
            ),
            file: None,
            not_written: None,
        };
    }
    let state = target.stall_state(within);
    if state.reports.is_empty() {
        // An engine with no sessions to show (embedded).
        return Found {
            sentence: "; at the stall, no cause found".into(),
            file: None,
            not_written: None,
        };
    }
    let file = format!("{step}.stall.txt");
    // The server wrote it: its control characters are shown, not obeyed.
    let text = crate::untrusted::printable(&state.text()).into_owned();
    let (file, not_written) = match crate::results::write_atomic(&dir.join(&file), text.as_bytes())
    {
        Ok(()) => (Some(file), None),
        Err(e) => (None, Some(format!("{file}: {e}"))),
    };
    let cause = state
        .likely_cause()
        .map_or("no cause found".to_string(), |c| {
            format!("likely cause: {c}")
        });
    let place = file.as_ref().map_or(String::new(), |f| {
        format!(" (the server's state then: {f})")
    });
    Found {
        sentence: format!("; at the stall, {cause}{place}"),
        file,
        not_written,
    }
}
