//! The engine's maintenance after a write-heavy step, then a wait: the Insert Benchmark's between
//! l.i2 and qr100, sysbench's "postwrite". Any suite may use it.

use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use crate::dbms::{Dbms, Fault};

/// The record of an untimed cleanup and wait after a step: the Insert Benchmark's between l.i2
/// and qr100, sysbench's "postwrite".
#[derive(Debug, Clone)]
pub struct Cleanup {
    pub budget_s: u64,
    pub rule: String,
    pub actions: Vec<String>,
    pub work_s: f64,
    pub slept_s: f64,
    pub error: Option<String>,
    /// The fault of the first of its failures that carries one: what the run acts on (a server
    /// that stopped answering), never `error`'s text.
    pub fault: Option<Fault>,
}

/// The engine's post-load maintenance on `tables`, then sleep what is left of `budget_s`,
/// measured from when it started; settings changed for the wait are put back after it, even
/// after an interrupt. Shared by the Insert Benchmark (after l.i2) and sysbench ("postwrite").
pub fn cleanup_and_wait(
    dbms: &dyn Dbms,
    tables: &[String],
    budget_s: u64,
    rule: String,
    interrupt: &AtomicBool,
) -> Cleanup {
    let start = Instant::now();
    let deadline = start + Duration::from_secs(budget_s);
    let mut actions = Vec::new();
    let mut restore = Vec::new();
    let failed = dbms
        .maintain_after_load(tables, deadline, &mut actions, &mut restore)
        .err();
    let mut fault = failed.as_ref().and_then(|e| e.fault);
    let mut error = failed.map(|e| e.message);
    let work_s = start.elapsed().as_secs_f64();
    while Instant::now() < deadline && !interrupt.load(Ordering::Relaxed) {
        std::thread::sleep((deadline - Instant::now()).min(Duration::from_millis(50)));
    }
    let slept_s = (start.elapsed().as_secs_f64() - work_s).max(0.0);
    // Whatever failed above, every setting that was changed is put back.
    if let Err((msg, restore_fault)) = restore_settings(dbms, &restore, &mut actions) {
        fault = fault.or(restore_fault);
        error = Some(match error {
            Some(first) => format!("{first}; {msg}"),
            None => msg,
        });
    }
    Cleanup {
        budget_s,
        rule,
        actions,
        work_s,
        slept_s,
        error,
        fault,
    }
}

/// Runs each statement of `restore`, adding those that succeeded to `actions`. One that cannot
/// be run does not keep the others from being restored; the error names each failure, with the
/// fault of the first that carries one.
fn restore_settings(
    dbms: &dyn Dbms,
    restore: &[String],
    actions: &mut Vec<String>,
) -> Result<(), (String, Option<Fault>)> {
    if restore.is_empty() {
        return Ok(());
    }
    let mut failed = Vec::new();
    let mut fault = None;
    match dbms.connect() {
        Ok(mut c) => {
            for sql in restore {
                match c.execute_batch(sql) {
                    Ok(()) => actions.push(sql.clone()),
                    Err(e) => {
                        fault = fault.or(e.fault);
                        failed.push(format!("{sql}: {}", e.message));
                    }
                }
            }
        }
        Err(e) => {
            fault = crate::dbms::fault_of(e.as_ref());
            failed.push(format!("{} (connecting: {e:#})", restore.join("; ")));
        }
    }
    if failed.is_empty() {
        return Ok(());
    }
    let msg = format!(
        "could not restore settings after the wait: {}",
        failed.join("; ")
    );
    Err((msg, fault))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_cleanup_the_server_does_not_answer_carries_its_fault() {
        use crate::dbms::null::Null;
        use crate::dbms::{no_answer, Timeouts};
        let stop = AtomicBool::new(false);
        let statement = Duration::from_millis(10);
        let d = Null::open("cleanup-stall")
            .unwrap()
            .with_timeouts(Timeouts::with_statement(statement));
        let c = cleanup_and_wait(&d, &[], 0, String::new(), &stop);
        assert_eq!(c.fault, Some(Fault::NoAnswer));
        assert_eq!(c.error, Some(no_answer(statement)));
        // A failure that is not dbperf's cut carries none.
        let d = Null::open("cleanup-fail.restore-fail").unwrap();
        let c = cleanup_and_wait(&d, &[], 0, String::new(), &stop);
        assert!(c.error.is_some());
        assert_eq!(c.fault, None);
    }

    #[test]
    fn settings_changed_before_a_cleanup_failure_are_all_put_back() {
        use crate::dbms::null::{Null, NULL_RESTORE};
        let stop = AtomicBool::new(false);
        let d = Null::open("cleanup-fail").unwrap();
        let c = cleanup_and_wait(&d, &[], 0, String::new(), &stop);
        assert_eq!(
            c.actions[2..],
            NULL_RESTORE.map(String::from),
            "{:?}",
            c.actions
        );
        let e = c.error.unwrap();
        assert!(e.contains("part way") && !e.contains("restore"), "{e}");

        // One setting that cannot be put back does not keep the other from being restored.
        let d = Null::open("cleanup-fail.restore-fail").unwrap();
        let c = cleanup_and_wait(&d, &[], 0, String::new(), &stop);
        assert_eq!(
            c.actions.last().unwrap(),
            NULL_RESTORE[1],
            "{:?}",
            c.actions
        );
        assert!(!c.actions.contains(&NULL_RESTORE[0].to_string()));
        let e = c.error.unwrap();
        assert!(e.contains("part way") && e.contains(NULL_RESTORE[0]), "{e}");
    }
}
