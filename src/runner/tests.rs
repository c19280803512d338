//! Engine behaviour with roles that do no I/O: counting, pacing, coupling, stopping, failing.

use super::*;
use std::sync::atomic::AtomicU64;

struct Counter {
    left: u64,
    kind: usize,
    rows: u64,
    work: Duration,
    done: Arc<AtomicU64>,
}

impl Role for Counter {
    fn op(&mut self) -> Result<OpOutcome, OpError> {
        if self.left == 0 {
            return Ok(OpOutcome::Finished);
        }
        self.left -= 1;
        if !self.work.is_zero() {
            thread::sleep(self.work);
        }
        self.done.fetch_add(1, Ordering::Relaxed);
        Ok(OpOutcome::Done {
            kind: self.kind,
            rows: self.rows,
        })
    }
}

fn counter(
    left: u64,
    kind: usize,
    rows: u64,
    work: Duration,
    done: &Arc<AtomicU64>,
) -> RoleFactory {
    let done = done.clone();
    Box::new(move || {
        Ok(Box::new(Counter {
            left,
            kind,
            rows,
            work,
            done,
        }) as Box<dyn Role>)
    })
}

fn spec(name: &str, pace: Pace, lifetime: Lifetime, make: RoleFactory) -> RoleSpec {
    RoleSpec {
        name: name.to_string(),
        pace,
        lifetime,
        permits_to: None,
        make,
    }
}

struct Rows(Vec<SecondRow>);
impl Observer for Rows {
    fn on_second(&mut self, row: &SecondRow) {
        self.0.push(row.clone());
    }
}

fn no_interrupt() -> Arc<AtomicBool> {
    Arc::new(AtomicBool::new(false))
}

#[test]
fn closed_roles_do_exactly_their_work() {
    let done = Arc::new(AtomicU64::new(0));
    let plan = StepPlan {
        kinds: vec!["insert"],
        roles: (0..3)
            .map(|i| {
                spec(
                    &format!("c{i}"),
                    Pace::Closed,
                    Lifetime::Primary,
                    counter(1000, 0, 100, Duration::ZERO, &done),
                )
            })
            .collect(),
        target_rows_per_s: None,
        paced_kind: None,
    };
    let m = run_step(plan, &mut (), &no_interrupt());
    assert!(m.failure.is_none());
    assert_eq!(m.kinds[0].ops, 3000);
    assert_eq!(m.kinds[0].rows, 300_000);
    assert_eq!(m.kinds[0].latency.len(), 3000);
    assert_eq!(done.load(Ordering::Relaxed), 3000);
}

#[test]
fn paced_role_hits_its_rate_and_follower_matches_it() {
    let done = Arc::new(AtomicU64::new(0));
    let (tx, rx) = mpsc::sync_channel(16);
    let mut inserter = spec(
        "ins",
        Pace::Rate { ops_per_s: 40.0 },
        Lifetime::Primary,
        counter(60, 0, 50, Duration::from_micros(200), &done),
    );
    inserter.permits_to = Some(tx);
    let deleter = spec(
        "del",
        Pace::Follow(rx),
        Lifetime::Primary,
        counter(u64::MAX, 1, 50, Duration::from_micros(100), &done),
    );
    let query = spec(
        "qry",
        Pace::Closed,
        Lifetime::Background,
        counter(u64::MAX, 2, 10, Duration::from_millis(1), &done),
    );
    let plan = StepPlan {
        kinds: vec!["insert", "delete", "query"],
        roles: vec![inserter, deleter, query],
        target_rows_per_s: Some(2000.0),
        paced_kind: Some(0),
    };
    let mut rows = Rows(Vec::new());
    let m = run_step(plan, &mut rows, &no_interrupt());
    assert!(m.failure.is_none(), "{:?}", m.failure);
    assert_eq!(m.kinds[0].ops, 60);
    assert_eq!(m.kinds[1].ops, 60, "one delete per insert");
    // 60 ops at 40/s: the last is due at 1.475 s, so the step cannot end sooner; a busy host
    // may run it later (the upper bound only catches a pacer that lost its schedule).
    let secs = m.duration.as_secs_f64();
    assert!((1.47..5.0).contains(&secs), "duration {secs}");
    assert!(
        m.kinds[2].ops > 0,
        "query role ran until the writers were done"
    );
    // One row per full second and one for the partial tail.
    let full = secs.floor() as usize;
    assert_eq!(rows.0.len(), full + 1, "{secs} s");
    assert_eq!(rows.0[0].target_rows_per_s, Some(2000.0));
    // Never ahead of the schedule: 40 ops are due in the first second (one more at its very
    // end at most); behind it on a busy host.
    let first = rows.0[0].achieved_rows_per_s.unwrap();
    assert!(first > 0.0 && first <= 2050.0, "first second {first}");
    assert!(rows.0[full].interval_s < 1.0);
    let total: u64 = rows.0.iter().map(|r| r.kinds[0].ops).sum();
    assert_eq!(total, 60, "every op lands in exactly one second");
}

struct Failing {
    after: u64,
}
impl Role for Failing {
    fn op(&mut self) -> Result<OpOutcome, OpError> {
        if self.after == 0 {
            return Err(OpError {
                kind: 0,
                message: "disk full".into(),
                class: ErrorClass::Failed,
                cause: None,
            });
        }
        self.after -= 1;
        thread::sleep(Duration::from_millis(1));
        Ok(OpOutcome::Done { kind: 0, rows: 1 })
    }
}

#[test]
fn a_fatal_error_stops_every_role_and_is_reported() {
    let done = Arc::new(AtomicU64::new(0));
    let plan = StepPlan {
        kinds: vec!["insert", "query"],
        roles: vec![
            spec(
                "c1.inserter",
                Pace::Closed,
                Lifetime::Primary,
                Box::new(|| Ok(Box::new(Failing { after: 5 }) as Box<dyn Role>)),
            ),
            spec(
                "c2.inserter",
                Pace::Closed,
                Lifetime::Primary,
                counter(u64::MAX, 0, 1, Duration::from_millis(1), &done),
            ),
        ],
        target_rows_per_s: None,
        paced_kind: None,
    };
    let m = run_step(plan, &mut (), &no_interrupt());
    let f = m.failure.expect("failure recorded");
    assert!(f.contains("c1.inserter") && f.contains("disk full"), "{f}");
    assert_eq!(m.kinds[0].errors, 1);
    // The failure stops the other connection: far sooner than its endless loop.
    assert!(m.duration < Duration::from_secs(10));
}

#[test]
fn a_role_that_cannot_start_fails_the_step_without_deadlock() {
    let done = Arc::new(AtomicU64::new(0));
    let plan = StepPlan {
        kinds: vec!["insert"],
        roles: vec![
            spec(
                "bad",
                Pace::Closed,
                Lifetime::Primary,
                Box::new(|| anyhow::bail!("connection refused")),
            ),
            spec(
                "good",
                Pace::Closed,
                Lifetime::Primary,
                counter(u64::MAX, 0, 1, Duration::from_millis(1), &done),
            ),
        ],
        target_rows_per_s: None,
        paced_kind: None,
    };
    let m = run_step(plan, &mut (), &no_interrupt());
    let f = m.failure.unwrap();
    assert!(
        f.contains("bad: could not start: connection refused"),
        "{f}"
    );
}

#[test]
fn interrupt_stops_the_step_promptly() {
    let done = Arc::new(AtomicU64::new(0));
    let interrupt = no_interrupt();
    let flag = interrupt.clone();
    thread::spawn(move || {
        thread::sleep(Duration::from_millis(300));
        flag.store(true, Ordering::SeqCst);
    });
    let plan = StepPlan {
        kinds: vec!["insert"],
        roles: vec![spec(
            "slow",
            Pace::Rate { ops_per_s: 0.1 },
            Lifetime::Primary,
            counter(u64::MAX, 0, 1, Duration::ZERO, &done),
        )],
        target_rows_per_s: None,
        paced_kind: None,
    };
    let m = run_step(plan, &mut (), &interrupt);
    assert!(m.interrupted);
    assert_eq!(
        m.kinds[0].ops, 1,
        "op 0 is due at once, op 1 only after 10 s"
    );
    // Stopped at the interrupt (0.3 s), not at the next op's due time (10 s).
    assert!(m.duration < Duration::from_secs(5));
}

/// Waits (as a blocked read does) until the run is stopped, then fails as the read does.
struct CutShort(Arc<AtomicBool>);

impl Role for CutShort {
    fn op(&mut self) -> Result<OpOutcome, OpError> {
        while !self.0.load(Ordering::SeqCst) {
            thread::sleep(Duration::from_millis(5));
        }
        Err(OpError {
            kind: 0,
            message: "stopped waiting for the server".into(),
            class: ErrorClass::Failed,
            cause: None,
        })
    }
}

#[test]
fn an_operation_cut_short_by_the_stop_interrupts_the_step_instead_of_failing_it() {
    let interrupt = no_interrupt();
    let flag = interrupt.clone();
    thread::spawn(move || {
        thread::sleep(Duration::from_millis(200));
        flag.store(true, Ordering::SeqCst);
    });
    let seen = interrupt.clone();
    let plan = StepPlan {
        kinds: vec!["insert"],
        roles: vec![spec(
            "blocked",
            Pace::Closed,
            Lifetime::Primary,
            Box::new(move || Ok(Box::new(CutShort(seen)) as Box<dyn Role>)),
        )],
        target_rows_per_s: None,
        paced_kind: None,
    };
    let m = run_step(plan, &mut (), &interrupt);
    assert!(m.interrupted);
    assert_eq!(m.failure, None);
    assert_eq!(m.kinds[0].errors, 0);
}

fn record_at(slots: &Intervals, second: u64, latency_ns: u64) {
    slots[0][(second & 1) as usize]
        .lock()
        .unwrap()
        .target(second)
        .record(latency_ns, 1);
}

#[test]
fn late_records_are_reported_later_never_lost() {
    let slots = new_slots(1);
    let all = vec![slots.clone()];
    let mut acc = vec![Interval::default()];
    let ops = |row: SecondRow| row.kinds[0].ops;
    record_at(&slots, 0, 1_000);
    assert_eq!(ops(collect_second(&all, &mut acc, 0, 1.0, &None, false)), 1);
    // An operation of second 0 recorded after second 0 was read (a descheduled thread).
    record_at(&slots, 0, 2_000);
    record_at(&slots, 1, 3_000);
    assert_eq!(ops(collect_second(&all, &mut acc, 1, 1.0, &None, false)), 1);
    // Read with second 2, one row late.
    let row = collect_second(&all, &mut acc, 2, 1.0, &None, false);
    assert_eq!((row.kinds[0].ops, row.kinds[0].max_ns), (1, 2_000));
    // A late record of second 1 at the very end lands in the last row, though it is the other
    // slot's parity.
    record_at(&slots, 1, 4_000);
    record_at(&slots, 3, 5_000);
    assert_eq!(ops(collect_second(&all, &mut acc, 3, 0.5, &None, true)), 2);
}

#[test]
fn per_second_p99_never_exceeds_the_seconds_max() {
    let slots = new_slots(1);
    let all = vec![slots.clone()];
    let mut acc = vec![Interval::default()];
    for ns in [1_000_001u64, 1_000_003, 1_000_007] {
        record_at(&slots, 0, ns);
    }
    let row = collect_second(&all, &mut acc, 0, 1.0, &None, true);
    assert_eq!(row.kinds[0].max_ns, 1_000_007);
    assert!(row.kinds[0].p99_ns <= 1_000_007);
}

/// Runs a step on another thread; None when it did not end within `secs` (a hang).
fn within(secs: u64, plan: StepPlan) -> Option<StepMeasurement> {
    let (tx, rx) = mpsc::channel();
    thread::spawn(move || {
        let _ = tx.send(run_step(plan, &mut (), &no_interrupt()));
    });
    rx.recv_timeout(Duration::from_secs(secs)).ok()
}

struct Panics;
impl Role for Panics {
    fn op(&mut self) -> Result<OpOutcome, OpError> {
        panic!("scripted role panic");
    }
}

#[test]
fn a_role_that_panics_while_starting_fails_the_step_without_hanging() {
    let done = Arc::new(AtomicU64::new(0));
    let plan = StepPlan {
        kinds: vec!["insert"],
        roles: vec![
            spec(
                "ok",
                Pace::Closed,
                Lifetime::Primary,
                counter(u64::MAX, 0, 1, Duration::from_millis(1), &done),
            ),
            spec(
                "bad",
                Pace::Closed,
                Lifetime::Primary,
                Box::new(|| panic!("cannot even start")),
            ),
        ],
        target_rows_per_s: None,
        paced_kind: None,
    };
    let m = within(10, plan).expect("the step ended");
    let f = m.failure.unwrap();
    assert!(
        f.contains("bad: panicked while starting: cannot even start"),
        "{f}"
    );
}

#[test]
fn a_primary_that_panics_ends_the_step_and_its_background_roles() {
    let done = Arc::new(AtomicU64::new(0));
    let plan = StepPlan {
        kinds: vec!["insert", "query"],
        roles: vec![
            spec(
                "ins",
                Pace::Closed,
                Lifetime::Primary,
                Box::new(|| Ok(Box::new(Panics) as Box<dyn Role>)),
            ),
            spec(
                "qry",
                Pace::Closed,
                Lifetime::Background,
                counter(u64::MAX, 1, 1, Duration::from_millis(1), &done),
            ),
        ],
        target_rows_per_s: None,
        paced_kind: None,
    };
    let m = within(10, plan).expect("the step ended");
    let f = m.failure.unwrap();
    assert!(f.contains("ins: panicked: scripted role panic"), "{f}");
}

#[derive(Debug)]
struct Marker;

impl std::fmt::Display for Marker {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("marker")
    }
}

impl std::error::Error for Marker {}

/// A watchdog whose target always answers (so only the limit on one operation can fire); roles
/// still stuck 1 s after it fired are left behind.
fn answering(op_limit: Duration) -> Watchdog {
    Watchdog {
        quiet: Duration::from_secs(1),
        alive: Box::new(|| true),
        no_answer: Failure {
            message: "no answer".into(),
            cause: None,
        },
        op_limit,
        overdue: Failure {
            message: "overdue".into(),
            cause: Some(Arc::new(Marker)),
        },
        on_failure: None,
    }
}

/// The first failure is told of before any role stops: the other connections still work
/// while it looks (what the stall snapshot reads), and it is told once.
#[test]
fn the_first_failure_is_told_before_the_roles_stop() {
    let done = Arc::new(AtomicU64::new(0));
    let plan = StepPlan {
        kinds: vec!["insert"],
        roles: vec![
            spec(
                "busy",
                Pace::Closed,
                Lifetime::Primary,
                counter(u64::MAX, 0, 1, Duration::from_millis(1), &done),
            ),
            spec(
                "stuck",
                Pace::Closed,
                Lifetime::Primary,
                counter(1, 0, 1, Duration::from_secs(20), &done),
            ),
        ],
        target_rows_per_s: None,
        paced_kind: None,
    };
    let told = Arc::new(AtomicU64::new(0));
    let advanced = Arc::new(AtomicBool::new(false));
    let mut w = answering(Duration::from_secs(1));
    let (t, a, d) = (told.clone(), advanced.clone(), done.clone());
    w.on_failure = Some(Box::new(move |cause| {
        assert!(cause.is_some_and(|c| c.is::<Marker>()));
        t.fetch_add(1, Ordering::SeqCst);
        let before = d.load(Ordering::SeqCst);
        std::thread::sleep(Duration::from_millis(300));
        a.store(d.load(Ordering::SeqCst) > before, Ordering::SeqCst);
    }));
    let m = run_step_watched(plan, &mut (), &no_interrupt(), Some(w));
    assert_eq!(m.failure.as_deref(), Some("overdue"));
    assert_eq!(told.load(Ordering::SeqCst), 1);
    assert!(
        advanced.load(Ordering::SeqCst),
        "the busy role was stopped before the hook"
    );
}

#[test]
fn an_operation_under_way_past_its_limit_fails_the_step_while_the_target_answers() {
    let done = Arc::new(AtomicU64::new(0));
    let plan = StepPlan {
        kinds: vec!["insert"],
        roles: vec![
            // Other connections keep completing operations: the step is not quiet.
            spec(
                "busy",
                Pace::Closed,
                Lifetime::Primary,
                counter(u64::MAX, 0, 1, Duration::from_millis(1), &done),
            ),
            spec(
                "stuck",
                Pace::Closed,
                Lifetime::Primary,
                counter(1, 0, 1, Duration::from_secs(20), &done),
            ),
        ],
        target_rows_per_s: None,
        paced_kind: None,
    };
    let t = Instant::now();
    let m = run_step_watched(
        plan,
        &mut (),
        &no_interrupt(),
        Some(answering(Duration::from_secs(1))),
    );
    assert_eq!(m.failure.as_deref(), Some("overdue"));
    assert!(m.cause.as_deref().is_some_and(|c| c.is::<Marker>()));
    // The stuck role is left behind: the step ends after the limit, not after its 20 s.
    assert!(t.elapsed() < Duration::from_secs(10), "{:?}", t.elapsed());
    assert!(done.load(Ordering::Relaxed) > 0);
}

#[test]
fn a_paced_role_waiting_for_its_next_operation_is_not_overdue() {
    let done = Arc::new(AtomicU64::new(0));
    let plan = StepPlan {
        kinds: vec!["insert"],
        roles: vec![spec(
            "slow",
            Pace::Rate { ops_per_s: 0.5 },
            Lifetime::Primary,
            counter(2, 0, 1, Duration::ZERO, &done),
        )],
        target_rows_per_s: None,
        paced_kind: None,
    };
    // Two instant operations 2 s apart: waiting for the second is not an operation under way.
    let m = run_step_watched(
        plan,
        &mut (),
        &no_interrupt(),
        Some(answering(Duration::from_millis(500))),
    );
    assert_eq!(m.failure, None);
    assert_eq!(done.load(Ordering::Relaxed), 2);
}

#[test]
fn a_roles_failure_carries_its_cause() {
    struct Fails;
    impl Role for Fails {
        fn op(&mut self) -> Result<OpOutcome, OpError> {
            Err(OpError {
                kind: 0,
                message: "boom".into(),
                class: ErrorClass::Failed,
                cause: Some(Arc::new(Marker)),
            })
        }
    }
    let plan = StepPlan {
        kinds: vec!["insert"],
        roles: vec![spec(
            "r",
            Pace::Closed,
            Lifetime::Primary,
            Box::new(|| Ok(Box::new(Fails) as Box<dyn Role>)),
        )],
        target_rows_per_s: None,
        paced_kind: None,
    };
    let m = run_step(plan, &mut (), &no_interrupt());
    assert_eq!(m.failure.as_deref(), Some("r: boom"));
    assert!(m.cause.as_deref().is_some_and(|c| c.is::<Marker>()));
}
