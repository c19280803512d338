//! The runner (the load engine): every connection is a role on its own OS thread. Roles are paced (open loop,
//! see `pacer`), run flat out (closed loop), or follow another role's completions through a
//! bounded channel. The runner times each operation, records it per operation type, publishes
//! one row per second, and decides when a step is over. It knows nothing about SQL: a role is
//! anything that can perform one operation and say which type it was and how many rows it moved.

pub mod pacer;
pub mod recorder;
#[cfg(test)]
mod tests;

use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::mpsc::{self, Receiver, RecvTimeoutError, SyncSender};
use std::sync::{Arc, Barrier, Mutex, OnceLock};
use std::thread;
use std::time::{Duration, Instant};

use pacer::{Clock, Pacer, RealClock};
use recorder::{Interval, KindStats};

/// How a role decides when to start its next operation.
pub enum Pace {
    /// Flat out: the next operation starts when the previous one ends.
    Closed,
    /// Open loop at a fixed rate of operations per second.
    Rate { ops_per_s: f64 },
    /// One operation per permit received from another role; latency is measured from the time
    /// carried by the permit (when the work became due). Ends when the sender is gone.
    Follow(Receiver<Duration>),
}

/// Whether a role's end matters for the end of the step.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Lifetime {
    /// The step ends when every primary role has finished its own work.
    Primary,
    /// Runs until every primary role has finished (e.g. the query thread of qr/qp steps).
    Background,
}

pub enum OpOutcome {
    /// One operation of type `kind` (an index into `StepPlan::kinds`) moved `rows` rows.
    Done { kind: usize, rows: u64 },
    /// The role has no more work.
    Finished,
}

#[derive(Debug, Clone)]
pub struct OpError {
    pub kind: usize,
    pub message: String,
    pub class: ErrorClass,
    /// The error itself, when the step's failure should carry it to the run (which acts on its
    /// type, found by downcast: see `StepMeasurement::cause`).
    pub cause: Option<Cause>,
}

/// What a step failed of, for whoever runs the step to tell by its type; the runner only
/// carries it.
pub type Cause = Arc<dyn std::error::Error + Send + Sync>;

/// What an error did to the run: counted per class and operation type (docs/metrics.md,
/// "Errors").
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ErrorClass {
    /// The unit of work was rolled back and a new one started (sysbench's restarted event).
    Retried,
    /// The operation was skipped and the role went on with the next one.
    Ignored,
    /// The step fails.
    Failed,
}

/// One connection's behaviour. Created on its own thread (connections and prepared statements
/// need not be `Send`).
pub trait Role {
    /// Untimed bookkeeping before an operation (e.g. re-reading min(pk) every N rounds). Time it
    /// takes still delays the operation and so shows in its latency from the intended start.
    fn before_op(&mut self) -> Result<(), OpError> {
        Ok(())
    }
    fn op(&mut self) -> Result<OpOutcome, OpError>;
}

pub type RoleFactory = Box<dyn FnOnce() -> anyhow::Result<Box<dyn Role>> + Send>;

pub struct RoleSpec {
    pub name: String,
    pub pace: Pace,
    pub lifetime: Lifetime,
    /// After each operation (successful or not), send a permit to a follower.
    pub permits_to: Option<SyncSender<Duration>>,
    pub make: RoleFactory,
}

pub struct StepPlan {
    /// Names of operation types, e.g. ["insert", "delete", "query"].
    pub kinds: Vec<&'static str>,
    pub roles: Vec<RoleSpec>,
    /// Sum of the row rates the paced roles aim at, for the per-second achieved-vs-target.
    pub target_rows_per_s: Option<f64>,
    /// The operation type whose rows are compared with the target.
    pub paced_kind: Option<usize>,
}

/// One operation type in one second, all roles together.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct SecondKind {
    pub ops: u64,
    pub rows: u64,
    pub errors: u64,
    pub p99_ns: u64,
    pub max_ns: u64,
}

#[derive(Debug, Clone)]
pub struct SecondRow {
    /// 0-based second of the step.
    pub index: u64,
    /// Length of this interval in seconds: 1 except for the last, partial one.
    pub interval_s: f64,
    /// One entry per `StepPlan::kinds`.
    pub kinds: Vec<SecondKind>,
    pub target_rows_per_s: Option<f64>,
    /// Rows of the paced operation type per second in this interval.
    pub achieved_rows_per_s: Option<f64>,
}

/// Told what happens while a step runs, on the thread that called `run_step`.
pub trait Observer {
    fn on_second(&mut self, row: &SecondRow);
    /// The roles were released: measured time starts now.
    fn on_start(&mut self) {}
    /// The last role finished: measured time ends now (connections close after this).
    fn on_end(&mut self) {}
    /// Asked once, at the start: when (after the start) `on_mark` should be called, e.g. at the
    /// end of a warm-up.
    fn mark_after(&self) -> Option<Duration> {
        None
    }
    fn on_mark(&mut self) {}
}

impl Observer for () {
    fn on_second(&mut self, _row: &SecondRow) {}
}

pub struct StepMeasurement {
    /// From the moment all roles were released until the last one finished.
    pub duration: Duration,
    /// Indexed like `StepPlan::kinds`.
    pub kinds: Vec<KindStats>,
    /// Per full second: (ops, rows) for each kind, flattened (second-major).
    pub per_second: Vec<(u64, u64)>,
    pub seconds: usize,
    pub failure: Option<String>,
    /// What `failure` was, when it is known as a value.
    pub cause: Option<Cause>,
    pub interrupted: bool,
}

impl StepMeasurement {
    /// (ops, rows) of `kind` in each full second.
    pub fn second_counts(&self, kind: usize) -> Vec<(u64, u64)> {
        let n = self.kinds.len();
        (0..self.seconds)
            .map(|s| self.per_second[s * n + kind])
            .collect()
    }
}

struct Shared {
    interrupt: Arc<AtomicBool>,
    abort: AtomicBool,
    primaries_left: AtomicUsize,
    primaries_done: AtomicBool,
    failure: Mutex<Option<(String, Option<Cause>)>>,
    /// Told of the step's first failure before any role is told to stop (`Watchdog::on_failure`).
    on_failure: Option<OnFailure>,
    ready: Barrier,
    go: Barrier,
    start: OnceLock<Instant>,
}

impl Shared {
    fn fail(&self, msg: String) {
        self.fail_with(msg, None);
    }

    /// The step's first failure wins; every role stops. The first is told to `on_failure`
    /// before that, with the failure's lock held: a role failing meanwhile waits, so the
    /// step's connections are still as they were at the failure.
    fn fail_with(&self, msg: String, cause: Option<Cause>) {
        let mut f = self.failure.lock().unwrap_or_else(|e| e.into_inner());
        if f.is_none() {
            if let Some(hook) = &self.on_failure {
                hook(cause.as_ref());
            }
            *f = Some((msg, cause));
        }
        self.abort.store(true, Ordering::SeqCst);
    }

    fn stopping(&self) -> bool {
        self.abort.load(Ordering::Relaxed) || self.interrupt.load(Ordering::Relaxed)
    }
}

/// Per kind, two slots by parity of the second an operation completed in: the role fills the
/// current second's slot while the collector empties the previous one.
type Intervals = Arc<Vec<[Mutex<Slot>; 2]>>;

/// How long after a second ends the collector reads it, so operations that completed in it but
/// were recorded a moment later (a descheduled thread) still count in the right second.
const GRACE: Duration = Duration::from_millis(250);

#[derive(Default)]
struct Slot {
    /// The second the pending data belongs to.
    second: u64,
    iv: Interval,
}

impl Slot {
    #[inline]
    fn target(&mut self, second: u64) -> &mut Interval {
        // An empty slot is claimed for this second. A slot still holding data the collector has
        // not read keeps its second: in the rare case of a collector more than 0.75 s late the
        // data is reported in a neighbouring second, never lost.
        if self.iv.is_empty() {
            self.second = second;
        }
        &mut self.iv
    }
}

fn new_slots(nkinds: usize) -> Intervals {
    Arc::new(
        (0..nkinds)
            .map(|_| [Mutex::new(Slot::default()), Mutex::new(Slot::default())])
            .collect(),
    )
}

/// Fails a step that has stopped making progress, two ways:
/// * no operation completed (nor failed) for `quiet`, and `alive` says the target does not
///   answer either. A target that answers resets this clock;
/// * one operation (with its bookkeeping, `Role::before_op`) has been under way for `op_limit`,
///   whether or not the target answers: a statement a server keeps alive with a trickle, a
///   connection stuck where no socket deadline reaches.
pub struct Watchdog {
    pub quiet: Duration,
    /// Whether the target still answers; may take up to about `quiet` to say.
    pub alive: Box<dyn Fn() -> bool + Send>,
    /// The step's failure when the target does not answer.
    pub no_answer: Failure,
    /// The longest one operation may be under way: the step's statements' deadline and a
    /// margin (a long one for steps that build indexes or load).
    pub op_limit: Duration,
    /// The step's failure when an operation is under way past `op_limit`.
    pub overdue: Failure,
    /// Called once with the cause of the step's first failure (a role's or the watchdog's),
    /// before any role is told to stop: what the server is doing at that moment can still be
    /// seen. It runs on the failing thread and should be bounded by a deadline of its own.
    pub on_failure: Option<OnFailure>,
}

/// What a step's first failure is told to (`Watchdog::on_failure`).
pub type OnFailure = Box<dyn Fn(Option<&Cause>) + Send + Sync>;

/// A step's failure decided outside its roles: its sentence and what it was.
#[derive(Debug, Clone)]
pub struct Failure {
    pub message: String,
    pub cause: Option<Cause>,
}

/// Runs one step to its end and returns what was measured. Never panics on role failures: a
/// role that cannot start or hits a fatal error stops the step and is reported in `failure`.
pub fn run_step(
    plan: StepPlan,
    observer: &mut dyn Observer,
    interrupt: &Arc<AtomicBool>,
) -> StepMeasurement {
    run_step_watched(plan, observer, interrupt, None)
}

/// `run_step` with a watchdog. When it fires, the roles are told to stop and are waited for
/// `quiet` more; roles still stuck after that are left behind (their thread ends when its call
/// returns) so the step ends in bounded time, without their counts.
pub fn run_step_watched(
    plan: StepPlan,
    observer: &mut dyn Observer,
    interrupt: &Arc<AtomicBool>,
    mut watchdog: Option<Watchdog>,
) -> StepMeasurement {
    let nkinds = plan.kinds.len();
    let target = plan_target(&plan.target_rows_per_s, plan.paced_kind);
    let nroles = plan.roles.len();
    let primaries = plan
        .roles
        .iter()
        .filter(|r| r.lifetime == Lifetime::Primary)
        .count();
    let shared = Arc::new(Shared {
        interrupt: interrupt.clone(),
        abort: AtomicBool::new(false),
        primaries_left: AtomicUsize::new(primaries),
        primaries_done: AtomicBool::new(primaries == 0),
        failure: Mutex::new(None),
        on_failure: watchdog.as_mut().and_then(|w| w.on_failure.take()),
        ready: Barrier::new(nroles + 1),
        go: Barrier::new(nroles + 1),
        start: OnceLock::new(),
    });
    let (done_tx, done_rx) = mpsc::channel::<usize>();
    let mut handles = Vec::with_capacity(nroles);
    let mut all_intervals: Vec<Intervals> = Vec::with_capacity(nroles);
    let mut all_busy: Vec<Arc<Busy>> = Vec::with_capacity(nroles);
    for (index, spec) in plan.roles.into_iter().enumerate() {
        let intervals = new_slots(nkinds);
        all_intervals.push(intervals.clone());
        let busy = Arc::new(Busy::default());
        all_busy.push(busy.clone());
        let shared = shared.clone();
        let done_tx = done_tx.clone();
        let name = spec.name.clone();
        let h = thread::Builder::new()
            .name(name)
            .spawn(move || {
                let (report, role) = run_role(spec, &shared, &intervals, &busy, nkinds);
                let _ = done_tx.send(index);
                // Closing the connection (for SQLite in WAL mode: a checkpoint) happens after the
                // role reported its end, so it is not part of the measured step time. A role
                // that panicked may panic again closing: that must not lose its counts.
                if catch_unwind(AssertUnwindSafe(|| drop(role))).is_err() {
                    shared.fail("a role panicked while closing its connection".into());
                }
                report
            })
            .expect("spawn role thread");
        handles.push(h);
    }
    drop(done_tx);

    shared.ready.wait();
    let start = Instant::now();
    shared.start.set(start).expect("start set once");
    shared.go.wait();
    observer.on_start();
    let mut mark = observer.mark_after().map(|d| start + d);

    // Collector: one row per second of step time, read GRACE after the second ends, until every
    // role has finished; then the remaining seconds and the partial last one.
    let mut acc: Vec<Interval> = (0..nkinds).map(|_| Interval::default()).collect();
    let mut per_second = Vec::new();
    let mut next: u64 = 0;
    let mut finished = 0;
    let mut ended = vec![false; nroles];
    // Watchdog: when something last happened, and when waiting for stuck roles stops.
    let mut last_progress = Instant::now();
    let mut give_up: Option<Instant> = None;
    let mut emit = |observer: &mut dyn Observer,
                    second: u64,
                    interval_s: f64,
                    per_second: &mut Vec<(u64, u64)>,
                    last: bool| {
        let row = collect_second(&all_intervals, &mut acc, second, interval_s, &target, last);
        for k in &row.kinds {
            per_second.push((k.ops, k.rows));
        }
        observer.on_second(&row);
        row.kinds.iter().any(|k| k.ops > 0 || k.errors > 0)
    };
    let end = loop {
        if finished == nroles {
            break Instant::now();
        }
        if give_up.is_some_and(|g| Instant::now() >= g) {
            break Instant::now();
        }
        let tick = start + Duration::from_secs(next + 1) + GRACE;
        let wake = mark.map_or(tick, |m| m.min(tick));
        let wake = give_up.map_or(wake, |g| g.min(wake));
        match done_rx.recv_timeout(wake.saturating_duration_since(Instant::now())) {
            Ok(i) => {
                finished += 1;
                ended[i] = true;
                last_progress = Instant::now();
            }
            Err(RecvTimeoutError::Timeout) if mark.is_some_and(|m| Instant::now() >= m) => {
                mark = None;
                observer.on_mark();
            }
            Err(RecvTimeoutError::Timeout) if give_up.is_some() => {}
            Err(RecvTimeoutError::Timeout) => {
                let moved = emit(observer, next, 1.0, &mut per_second, false);
                next += 1;
                if moved {
                    last_progress = Instant::now();
                }
                if let Some(w) = &watchdog {
                    let overdue = all_busy.iter().any(|b| b.under_way_for(start) > w.op_limit);
                    if overdue {
                        shared.fail_with(w.overdue.message.clone(), w.overdue.cause.clone());
                        give_up = Some(later(w.quiet));
                    } else if last_progress.elapsed() >= w.quiet {
                        if (w.alive)() {
                            last_progress = Instant::now();
                        } else {
                            shared
                                .fail_with(w.no_answer.message.clone(), w.no_answer.cause.clone());
                            give_up = Some(later(w.quiet));
                        }
                    }
                }
            }
            Err(RecvTimeoutError::Disconnected) => break Instant::now(),
        }
    };
    observer.on_end();
    let elapsed = end - start;
    let full_seconds = elapsed.as_secs();
    let tail = elapsed - Duration::from_secs(full_seconds);
    while next < full_seconds {
        let last = next + 1 == full_seconds && tail.is_zero();
        emit(observer, next, 1.0, &mut per_second, last);
        next += 1;
    }
    if !tail.is_zero() && nroles > 0 {
        emit(observer, next, tail.as_secs_f64(), &mut Vec::new(), true);
    }

    let mut kinds: Vec<KindStats> = (0..nkinds).map(|_| KindStats::default()).collect();
    for (h, ended) in handles.into_iter().zip(ended) {
        if !ended && give_up.is_some() {
            // Stuck in a call that does not return: left behind, not waited for.
            continue;
        }
        match h.join() {
            Ok(report) => {
                for (k, stats) in report.into_iter().enumerate() {
                    if let Some(s) = stats {
                        kinds[k].merge(&s);
                    }
                }
            }
            Err(_) => shared.fail("a role thread panicked".to_string()),
        }
    }
    let (failure, cause) = shared.failure.lock().unwrap().take().unzip();
    StepMeasurement {
        duration: elapsed,
        kinds,
        per_second,
        seconds: full_seconds as usize,
        failure,
        cause: cause.flatten(),
        interrupted: interrupt.load(Ordering::SeqCst),
    }
}

/// `d` from now; a duration too long for the clock is a year (options bound it far below).
fn later(d: Duration) -> Instant {
    let now = Instant::now();
    now.checked_add(d)
        .unwrap_or_else(|| now + Duration::from_secs(365 * 86_400))
}

fn plan_target(t: &Option<f64>, k: Option<usize>) -> Option<(f64, usize)> {
    match (t, k) {
        (Some(t), Some(k)) => Some((*t, k)),
        _ => None,
    }
}

fn collect_second(
    all: &[Intervals],
    acc: &mut [Interval],
    index: u64,
    interval_s: f64,
    target: &Option<(f64, usize)>,
    last: bool,
) -> SecondRow {
    for role in all {
        for (k, slots) in role.iter().enumerate() {
            for (parity, slot) in slots.iter().enumerate() {
                // The last row also takes anything recorded late into the other slot, so no
                // operation is missing from the series when the step ends.
                if !last && parity as u64 != index & 1 {
                    continue;
                }
                let mut g = slot.lock().unwrap();
                if !g.iv.is_empty() && g.second <= index {
                    acc[k].drain_from(&mut g.iv);
                }
            }
        }
    }
    let kinds: Vec<SecondKind> = acc
        .iter_mut()
        .map(|a| {
            let row = SecondKind {
                ops: a.ops,
                rows: a.rows,
                errors: a.errors,
                p99_ns: a.p99_ns(),
                max_ns: a.max_ns,
            };
            a.ops = 0;
            a.rows = 0;
            a.errors = 0;
            a.max_ns = 0;
            a.hist.reset();
            row
        })
        .collect();
    let (target_rows_per_s, achieved_rows_per_s) = match target {
        Some((t, k)) => (Some(*t), Some(kinds[*k].rows as f64 / interval_s)),
        None => (None, None),
    };
    SecondRow {
        index,
        interval_s,
        kinds,
        target_rows_per_s,
        achieved_rows_per_s,
    }
}

/// When a role's current operation began, for the watchdog: nanoseconds since the step's start
/// plus one, 0 between operations. On its own cache line: every role writes its own twice per
/// operation.
#[derive(Default)]
#[repr(align(64))]
struct Busy(AtomicU64);

impl Busy {
    fn begin(&self, now: Duration) {
        let ns = u64::try_from(now.as_nanos()).unwrap_or(u64::MAX - 1);
        self.0.store(ns + 1, Ordering::Relaxed);
    }

    fn end(&self) {
        self.0.store(0, Ordering::Relaxed);
    }

    /// How long the current operation has been under way (zero between operations).
    fn under_way_for(&self, start: Instant) -> Duration {
        match self.0.load(Ordering::Relaxed) {
            0 => Duration::ZERO,
            at => start.elapsed().saturating_sub(Duration::from_nanos(at - 1)),
        }
    }
}

fn run_role(
    spec: RoleSpec,
    shared: &Shared,
    intervals: &Intervals,
    busy: &Busy,
    nkinds: usize,
) -> (Vec<Option<KindStats>>, Option<Box<dyn Role>>) {
    let mut stats: Vec<Option<KindStats>> = (0..nkinds).map(|_| None).collect();
    let RoleSpec {
        name,
        pace,
        lifetime,
        permits_to,
        make,
    } = spec;
    // A panic in a role is the role's failure: caught here so the other roles are not left
    // waiting on the barriers or for this primary's end.
    let role = match catch_unwind(AssertUnwindSafe(make)) {
        Ok(Ok(r)) => Some(r),
        Ok(Err(e)) => {
            let message = format!("{name}: could not start: {e:#}");
            let cause: Box<dyn std::error::Error + Send + Sync> = e.into();
            shared.fail_with(message, Some(Cause::from(cause)));
            None
        }
        Err(p) => {
            shared.fail(format!(
                "{name}: panicked while starting: {}",
                panic_text(&p)
            ));
            None
        }
    };
    shared.ready.wait();
    shared.go.wait();
    let start = *shared.start.get().expect("start is set before go");
    let mut role = role;
    if let Some(role) = role.as_mut() {
        pacer::tighten_timer_slack();
        let closed = matches!(pace, Pace::Closed);
        let ran = catch_unwind(AssertUnwindSafe(|| {
            let run = RoleRun {
                name: &name,
                shared,
                intervals,
                busy,
                start,
            };
            role_loop(&run, role.as_mut(), pace, lifetime, permits_to, &mut stats)
        }));
        if let Err(p) = ran {
            shared.fail(format!("{name}: panicked: {}", panic_text(&p)));
        }
        if closed {
            // Closed loop: latency and service time are the same numbers, recorded once.
            for s in stats.iter_mut().flatten() {
                s.service = s.latency.clone();
                s.max_service_ns = s.max_latency_ns;
            }
        }
    }
    if lifetime == Lifetime::Primary && shared.primaries_left.fetch_sub(1, Ordering::SeqCst) == 1 {
        shared.primaries_done.store(true, Ordering::SeqCst);
    }
    (stats, role)
}

/// What a role's loop reports to, besides its own counts.
#[derive(Clone, Copy)]
struct RoleRun<'a> {
    name: &'a str,
    shared: &'a Shared,
    intervals: &'a Intervals,
    busy: &'a Busy,
    /// The step's start, shared by every role.
    start: Instant,
}

fn role_loop(
    run: &RoleRun,
    role: &mut dyn Role,
    pace: Pace,
    lifetime: Lifetime,
    permits_to: Option<SyncSender<Duration>>,
    stats: &mut [Option<KindStats>],
) {
    let RoleRun {
        name,
        shared,
        intervals,
        busy,
        start,
    } = *run;
    let clock = RealClock { start };
    let stop = || {
        shared.stopping()
            || (lifetime == Lifetime::Background && shared.primaries_done.load(Ordering::Relaxed))
    };
    let mut pacer = match &pace {
        Pace::Rate { ops_per_s } => Some(Pacer::new(*ops_per_s)),
        _ => None,
    };
    let mut permits_to = permits_to;
    let closed = matches!(pace, Pace::Closed);
    loop {
        if stop() {
            break;
        }
        let due = match (&pace, pacer.as_mut()) {
            (Pace::Rate { .. }, Some(p)) => match p.wait_next(&clock, &stop) {
                Some(d) => d,
                None => break,
            },
            (Pace::Follow(rx), _) => match recv_permit(rx, &stop) {
                Some(d) => d,
                None => break,
            },
            _ => Duration::MAX,
        };
        busy.begin(clock.now());
        let before = role.before_op();
        busy.end();
        if let Err(e) = before {
            if interrupted(shared) || record_error(name, e, clock.now(), shared, intervals, stats) {
                break;
            }
        }
        let begin = clock.now();
        // Closed loop: nothing was due before the operation started, so latency = service time.
        let due = due.min(begin);
        busy.begin(begin);
        let result = role.op();
        busy.end();
        let end = clock.now();
        match result {
            Ok(OpOutcome::Done { kind, rows }) => {
                let latency = (end - due).as_nanos() as u64;
                let s = stats[kind].get_or_insert_with(KindStats::default);
                if closed {
                    s.record_latency(latency, rows);
                } else {
                    s.record(latency, (end - begin).as_nanos() as u64, rows);
                }
                let sec = end.as_secs();
                intervals[kind][(sec & 1) as usize]
                    .lock()
                    .unwrap()
                    .target(sec)
                    .record(latency, rows);
            }
            Ok(OpOutcome::Finished) => break,
            Err(e) => {
                if interrupted(shared) || record_error(name, e, end, shared, intervals, stats) {
                    break;
                }
            }
        }
        if let Some(tx) = &permits_to {
            if tx.send(end).is_err() {
                // The follower is gone (it failed or was stopped); keep going without it.
                permits_to = None;
            }
        }
    }
}

/// Whether the run was asked to stop: an operation that fails then was most likely cut short by
/// the stop itself (a wait on the server gives up), so it ends the role without counting as the
/// step's failure; the step is interrupted.
fn interrupted(shared: &Shared) -> bool {
    shared.interrupt.load(Ordering::Relaxed)
}

/// Counts an error; returns true if it was fatal (the role must stop).
fn record_error(
    name: &str,
    e: OpError,
    at: Duration,
    shared: &Shared,
    intervals: &Intervals,
    stats: &mut [Option<KindStats>],
) -> bool {
    stats[e.kind]
        .get_or_insert_with(KindStats::default)
        .record_error(&e.message, e.class);
    let sec = at.as_secs();
    intervals[e.kind][(sec & 1) as usize]
        .lock()
        .unwrap()
        .target(sec)
        .errors += 1;
    let fatal = e.class == ErrorClass::Failed;
    if fatal {
        shared.fail_with(format!("{name}: {}", e.message), e.cause);
    }
    fatal
}

/// The message a panic was raised with.
fn panic_text(p: &Box<dyn std::any::Any + Send>) -> String {
    p.downcast_ref::<&str>()
        .map(|s| s.to_string())
        .or_else(|| p.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "(no message)".into())
}

fn recv_permit(rx: &Receiver<Duration>, stop: &dyn Fn() -> bool) -> Option<Duration> {
    loop {
        if stop() {
            return None;
        }
        match rx.recv_timeout(Duration::from_millis(20)) {
            Ok(d) => return Some(d),
            Err(RecvTimeoutError::Timeout) => continue,
            Err(RecvTimeoutError::Disconnected) => return None,
        }
    }
}
