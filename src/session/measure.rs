//! One `measure()` for every step of every suite: the per-second series, the host's per-second
//! samples, the DBMS's counters and /proc snapshots around the runner's run, and the events the
//! CLI draws progress from.

use std::path::{Path, PathBuf};
use std::sync::atomic::AtomicBool;
use std::sync::Arc;
use std::time::Duration;

use super::events::{Display, Events, Note, StepBegins, Tick};
use crate::dbms::{self, DbError, Dbms, Fault};
use crate::host::monitor::Monitor;
use crate::metrics;
use crate::profile::{Profiler, Recording, Who};
use crate::results::hardware::{DbmsCounters, Hardware};
use crate::results::profile::StepProfile;
use crate::results::series::{SecondKind, SecondRow, SeriesWriter};
use crate::runner::{self, StepMeasurement, StepPlan};

/// Where a target's cost is read from: /proc for the host, its data devices and the managed
/// server, and the DBMS's own counters.
pub struct CostSources {
    pub dbms: Arc<dyn Dbms>,
    pub sources: metrics::Sources,
    /// Where the data lives on this host (None for an external server).
    pub data_dir: Option<PathBuf>,
}

/// Turns the runner's seconds into what a progress view shows; each suite has its own.
pub trait Ticker {
    fn tick(&mut self, row: &runner::SecondRow) -> Tick;
}

/// A step ready to be measured: its plan and how its progress and series look.
pub struct StepSetup {
    pub name: String,
    pub plan: StepPlan,
    /// Series columns: (index into the plan's kinds, name).
    pub kinds: Vec<(usize, &'static str)>,
    /// sysbench: statements per operation, for the series' queries_per_s column.
    pub queries_per_op: Option<u64>,
    /// Seconds of warm-up at the start whose cost is left out (sysbench's --warmup-time).
    pub warmup_s: u64,
    pub display: Display,
    pub ticker: Box<dyn Ticker>,
    /// Conditions found before the step that change what its numbers mean.
    pub warnings: Vec<String>,
    /// Its operations may legitimately take long (l.x's index builds, sysbench's load): the
    /// watchdog gives each --ddl-timeout, not the statement timeout.
    pub runs_long: bool,
}

/// What the runner measured, and the host and DBMS counters around it.
pub struct Measured {
    pub m: StepMeasurement,
    /// At the step's start, or at the end of its warm-up when `after_warmup`.
    before: metrics::Snapshot,
    after: metrics::Snapshot,
    counters_before: metrics::Counters,
    counters_after: metrics::Counters,
    /// Whether the cost interval starts at the end of the warm-up rather than the step's start.
    pub after_warmup: bool,
    /// The series file's name, when it was written whole.
    pub series_file: Option<String>,
    pub warnings: Vec<String>,
    /// The CPU profile of the measured time, with --profile.
    pub profile: Option<StepProfile>,
    /// The files holding the engine's status reports at the end of the step.
    pub diagnostics: Vec<String>,
}

impl Measured {
    /// Whether the step failed because the server stalled (by its failure's type).
    pub fn stalled(&self) -> bool {
        self.m
            .cause
            .as_deref()
            .and_then(|c| dbms::fault_of(c))
            .is_some_and(Fault::is_stall)
    }

    /// Seconds between the two /proc snapshots.
    pub fn interval_s(&self) -> f64 {
        self.after.secs_since(&self.before)
    }

    /// The interval's hardware cost and DBMS counter deltas, normalised by `work` (the
    /// operations within that interval).
    pub fn cost(&self, src: &CostSources, work: &metrics::Work) -> (Hardware, DbmsCounters) {
        let mut hw = metrics::hardware(&src.sources, &self.before, &self.after, work);
        let counters = metrics::dbms_counters(
            src.dbms.engine(),
            self.counters_before.clone(),
            self.counters_after.clone(),
            src.data_dir.as_deref(),
            &mut hw,
        );
        (hw, counters)
    }
}

/// What measuring a step needs from the target around it.
pub struct MeasureCx<'a> {
    pub target: &'a str,
    pub steps_dir: &'a Path,
    pub monitor: &'a mut Monitor,
    pub cost: &'a CostSources,
    pub events: &'a mut dyn Events,
    pub interrupt: &'a Arc<AtomicBool>,
    /// A step with no operation for this long whose target does not answer is failed; also
    /// each benchmark statement's deadline (--statement-timeout).
    pub quiet: Duration,
    /// The deadline of statements allowed to run long (--ddl-timeout).
    pub ddl: Duration,
    /// perf, when the run profiles.
    pub profiler: Option<&'a Profiler>,
}

/// Runs one step's plan with its series, progress and host sampling, between two snapshots of
/// the host and the DBMS's counters. With a warm-up, the first snapshot is taken again when the
/// warm-up's last second has been collected, so the cost leaves the warm-up out. A series that
/// cannot be written is reported and left out; the step still runs.
pub fn measure(setup: StepSetup, cx: &mut MeasureCx) -> Measured {
    let StepSetup {
        name,
        plan,
        kinds,
        queries_per_op,
        warmup_s,
        display,
        ticker,
        warnings,
        runs_long,
    } = setup;
    cx.events.step_begins(&StepBegins {
        target: cx.target.to_string(),
        step: name.clone(),
        display,
    });
    let mut files = StepFiles::open(cx, &name, kinds, queries_per_op);
    cx.monitor.step_begins(&name);
    // Counters first and last, so their queries fall outside the /proc interval, which the
    // runner bounds to its measured time (on_start, on_end).
    let counters_before = counters(&cx.cost.dbms, cx.quiet);
    let mut obs = Observer {
        ticker,
        series: files.series.take(),
        series_error: None,
        host_series: files.host_series.take(),
        cost: cx.cost,
        monitor: cx.monitor,
        events: &mut *cx.events,
        warmup: (warmup_s > 0).then(|| std::time::Duration::from_secs(warmup_s)),
        snapshot_within: cx.quiet,
        start: None,
        end: None,
        at_warmup_end: None,
        // Attached before the step, sampling from the measured start (on_start) only.
        recording: cx.profiler.map(|p| {
            p.attach(
                &|| profiled_pids(p.who, &cx.cost.sources),
                cx.steps_dir,
                &name,
            )
        }),
    };
    let limits = Limits {
        statement: cx.quiet,
        ddl: cx.ddl,
        statements_per_op: queries_per_op.unwrap_or(1),
        runs_long,
    };
    let stall_found = super::stall::Slot::default();
    let on_stall = super::stall::hook(
        cx.cost.dbms.clone(),
        cx.steps_dir,
        &name,
        cx.quiet,
        stall_found.clone(),
    );
    let mut m = runner::run_step_watched(
        plan,
        &mut obs,
        cx.interrupt,
        Some(watchdog(&cx.cost.dbms, &limits, on_stall)),
    );
    let stall = stall_found.lock().unwrap_or_else(|e| e.into_inner()).take();
    if let (Some(f), Some(s)) = (m.failure.as_mut(), &stall) {
        f.push_str(&s.sentence);
    }
    let Observer {
        series,
        series_error,
        host_series,
        start,
        end,
        at_warmup_end,
        recording,
        ..
    } = obs;
    files.series = series;
    files.host_series = host_series;
    let ended = Ended {
        start,
        end,
        at_warmup_end,
        counters_before,
        recording,
        series_error,
        stall,
    };
    conclude(cx, &name, m, ended, files, warnings)
}

/// What the observer kept of a step that has ended.
struct Ended {
    start: Option<metrics::Snapshot>,
    end: Option<metrics::Snapshot>,
    at_warmup_end: WarmupMark,
    counters_before: metrics::Counters,
    recording: Option<Recording>,
    series_error: Option<std::io::Error>,
    /// What the stall snapshot found, when the step stalled.
    stall: Option<super::stall::Found>,
}

/// After the measured time: the profile folded, the cost interval chosen, the last counters
/// and the engine's reports read, the files closed.
fn conclude(
    cx: &mut MeasureCx,
    name: &str,
    m: StepMeasurement,
    ended: Ended,
    mut files: StepFiles,
    warnings: Vec<String>,
) -> Measured {
    // Folding resolves symbols: after the measured time, outside every interval.
    let profile = ended.recording.map(|r| r.finish(cx.steps_dir, name));
    let after = ended
        .end
        .unwrap_or_else(|| metrics::Snapshot::take(&cx.cost.sources));
    let before = ended
        .start
        .unwrap_or_else(|| metrics::Snapshot::take(&cx.cost.sources));
    // A step that ended within a second of its warm-up (stopped, failed) keeps the whole step.
    let (before, counters_before, after_warmup) = match ended.at_warmup_end {
        Some((s, c)) if after.secs_since(&s) >= 0.5 => (s, c, true),
        _ => (before, ended.counters_before, false),
    };
    // The same snapshots however the step ended: a failed or interrupted step's are the ones
    // that say why.
    let reachable = reachable(cx, &m);
    let within = snapshot_within(cx, &m);
    let counters_after = reachable
        .clone()
        .and_then(|()| counters(&cx.cost.dbms, within));
    cx.monitor.step_ends();
    // After the last counters: the reports are for reading, and the time they take is nobody's.
    let mut warnings = warnings;
    let mut diagnostics = match &reachable {
        Ok(()) => write_diagnostics(
            cx.steps_dir,
            name,
            cx.cost.dbms.diagnostics(within),
            &mut files.failures,
        ),
        Err(e) => {
            warnings.push(format!(
                "the engine's status reports were not read: {}",
                e.message
            ));
            Vec::new()
        }
    };
    if let Some(s) = ended.stall {
        diagnostics.extend(s.file);
        files.failures.extend(s.not_written);
    }
    let series_file = files.finish(ended.series_error);
    let warnings = files.report(cx, warnings, profile.as_ref());
    Measured {
        m,
        before,
        after,
        counters_before,
        counters_after,
        after_warmup,
        series_file,
        warnings,
        profile,
        diagnostics,
    }
}

/// One snapshot of the DBMS's counters, on a connection of its own within `within`; a server
/// that did not answer in time is told apart by the error's type.
fn counters(dbms: &Arc<dyn Dbms>, within: Duration) -> metrics::Counters {
    dbms.counters(within).map_err(|e| metrics::NotRead {
        why: match e.fault {
            Some(f) if f.is_stall() => metrics::NotTaken::NoAnswer,
            _ => metrics::NotTaken::Failed,
        },
        message: e.to_string(),
    })
}

/// How long each end snapshot of an interrupted step may wait: Ctrl-C asked to stop, and a
/// stopping run's liveness probe says yes at once (it judges no server), so a hung server is
/// met by this deadline instead.
const INTERRUPTED_SNAPSHOT: Duration = Duration::from_secs(2);

/// Each end snapshot's deadline: --statement-timeout, or [`INTERRUPTED_SNAPSHOT`] at most
/// after Ctrl-C.
fn snapshot_within(cx: &MeasureCx, m: &StepMeasurement) -> Duration {
    if m.interrupted {
        cx.quiet.min(INTERRUPTED_SNAPSHOT)
    } else {
        cx.quiet
    }
}

/// Whether the end-of-step snapshots can be taken. A step that ended by itself reached its
/// server a moment ago; a failed or interrupted one first asks whether the server answers a
/// new connection (no login), so a stopped or hung server costs one deadline, not one per
/// snapshot, and each snapshot not taken says why.
fn reachable(cx: &MeasureCx, m: &StepMeasurement) -> Result<(), metrics::NotRead> {
    if m.failure.is_none() && !m.interrupted {
        return Ok(());
    }
    if cx.cost.dbms.answers(cx.quiet) {
        return Ok(());
    }
    Err(metrics::NotRead {
        why: metrics::NotTaken::NoAnswer,
        message: format!(
            "not taken: the server did not answer a new connection within {}",
            dbms::seconds(cx.quiet)
        ),
    })
}

/// A step's per-second files (the runner's series and the host's samples), with the files that
/// could not be written. A file that fails is left out; the step still runs.
struct StepFiles {
    name: String,
    series: Option<SeriesWriter>,
    host_series: Option<metrics::series::HostSeries>,
    /// "file: why" of each file not written whole.
    failures: Vec<String>,
}

impl StepFiles {
    fn open(
        cx: &MeasureCx,
        name: &str,
        kinds: Vec<(usize, &'static str)>,
        queries_per_op: Option<u64>,
    ) -> StepFiles {
        let mut failures = Vec::new();
        let series =
            match SeriesWriter::create_with_queries(cx.steps_dir, name, kinds, queries_per_op) {
                Ok(s) => Some(s),
                Err(e) => {
                    failures.push(format!("{name}.series.csv: {e}"));
                    None
                }
            };
        let host_series =
            match metrics::series::HostSeries::create(cx.steps_dir, name, &cx.cost.sources) {
                Ok(s) => Some(s),
                Err(e) => {
                    failures.push(format!("{name}.host.csv: {e}"));
                    None
                }
            };
        StepFiles {
            name: name.to_string(),
            series,
            host_series,
            failures,
        }
    }

    /// Closes both files; the series file's name when it was written whole. `series_error`:
    /// a row the series could not take during the step.
    fn finish(&mut self, series_error: Option<std::io::Error>) -> Option<String> {
        let name = &self.name;
        let mut series_file = None;
        match (self.series.take(), series_error) {
            (_, Some(e)) => self.failures.push(format!("{name}.series.csv: {e}")),
            (Some(s), None) => match s.finish() {
                Ok(p) => series_file = p.file_name().map(|f| f.to_string_lossy().to_string()),
                Err(e) => self.failures.push(format!("{name}.series.csv: {e}")),
            },
            (None, None) => {}
        }
        if let Some(h) = self.host_series.take() {
            if let Err(e) = h.finish() {
                self.failures.push(format!("{name}.host.csv: {e}"));
            }
        }
        series_file
    }

    /// Tells the user of each file not written, and returns the step's warnings with them and
    /// the profile's failure added.
    fn report(
        self,
        cx: &mut MeasureCx,
        mut warnings: Vec<String>,
        profile: Option<&StepProfile>,
    ) -> Vec<String> {
        for w in &self.failures {
            cx.events.note(
                cx.target,
                &Note::WriteFailed(format!("{}: {w}", cx.steps_dir.display())),
            );
        }
        if let Some(e) = profile.and_then(|p| p.error.as_ref()) {
            warnings.push(format!("CPU profile: {e}"));
        }
        warnings.extend(
            self.failures
                .into_iter()
                .map(|w| format!("not written: {w}")),
        );
        warnings
    }
}

/// Room past an operation's own deadlines before the step watchdog fails it: the deadlines are
/// checked between waits of 0.2 s, and the watchdog looks once a second.
const WATCHDOG_MARGIN: Duration = Duration::from_secs(5);

/// What bounds the operations of one step.
struct Limits {
    statement: Duration,
    ddl: Duration,
    /// A sysbench event is several statements, each with its own deadline.
    statements_per_op: u64,
    runs_long: bool,
}

/// A step's watchdog: a step whose target stops answering is failed after the statement timeout
/// (`stopped_answering`), and one with an operation under way past its deadlines and a margin
/// is failed whether or not the target answers (`overdue`).
fn watchdog(target: &Arc<dyn Dbms>, l: &Limits, on_failure: runner::OnFailure) -> runner::Watchdog {
    let quiet = l.statement;
    let (op_limit, option) = if l.runs_long {
        (l.ddl, "--ddl-timeout".to_string())
    } else {
        let n = u32::try_from(l.statements_per_op.max(1)).unwrap_or(u32::MAX);
        let option = if n > 1 {
            format!("--statement-timeout for each of its {n} statements")
        } else {
            "--statement-timeout".to_string()
        };
        (quiet.saturating_mul(n), option)
    };
    let op_limit = op_limit.saturating_add(WATCHDOG_MARGIN);
    let option = format!("{option}, plus {}", dbms::seconds(WATCHDOG_MARGIN));
    let failure = |message: String, fault: Fault| runner::Failure {
        cause: Some(
            DbError {
                message: message.clone(),
                transient: false,
                code: None,
                fault: Some(fault),
                lost: None,
            }
            .as_cause(),
        ),
        message,
    };
    let target = target.clone();
    runner::Watchdog {
        quiet,
        alive: Box::new(move || target.answers(quiet)),
        no_answer: failure(dbms::stopped_answering(quiet), Fault::NoAnswer),
        op_limit,
        overdue: failure(dbms::overdue(op_limit, &option), Fault::Overdue),
        on_failure: Some(on_failure),
    }
}

/// A status report larger than this is cut (a server decides its size; SHOW ENGINE INNODB
/// STATUS is tens of KiB, the largest pg_stat view a few hundred).
const DIAGNOSTIC_MAX_BYTES: usize = 4 << 20;

/// Writes each report to `<step>.<report>.txt` beside the step file; returns the names written.
fn write_diagnostics(
    dir: &Path,
    step: &str,
    reports: Vec<(&'static str, String)>,
    write_failures: &mut Vec<String>,
) -> Vec<String> {
    let mut written = Vec::new();
    for (report, mut text) in reports {
        if text.len() > DIAGNOSTIC_MAX_BYTES {
            let mut cut = DIAGNOSTIC_MAX_BYTES;
            while !text.is_char_boundary(cut) {
                cut -= 1;
            }
            text.truncate(cut);
            text.push_str("\n[cut by dbperf at 4 MiB]\n");
        }
        let file = format!("{step}.{report}.txt");
        // The server wrote it: its control characters are shown, not obeyed, by whoever cats it.
        let text = crate::untrusted::printable(&text);
        match crate::results::write_atomic(&dir.join(&file), text.as_bytes()) {
            Ok(()) => written.push(file),
            Err(e) => write_failures.push(format!("{file}: {e}")),
        }
    }
    written
}

/// The processes a step's profile samples: the server's tree as it is at the measured start
/// (perf follows what they fork later) and/or dbperf. An embedded DBMS runs inside dbperf, so
/// its server is dbperf; an external server has no process here to sample.
fn profiled_pids(who: Who, sources: &metrics::Sources) -> Vec<u32> {
    let me = std::process::id();
    let server = || -> Vec<u32> {
        match sources.server_pid {
            Some(root) => {
                let mut p: Vec<u32> = metrics::proc::tree(Path::new("/proc"), root)
                    .per_pid
                    .into_keys()
                    .collect();
                p.sort_unstable();
                p
            }
            None if sources.data_dir.is_some() => vec![me],
            None => Vec::new(),
        }
    };
    let mut pids = match who {
        Who::Server => server(),
        Who::Client => vec![me],
        Who::Both => {
            let mut p = server();
            p.push(me);
            p
        }
    };
    pids.dedup();
    pids
}

type WarmupMark = Option<(metrics::Snapshot, metrics::Counters)>;

/// Fed by the runner on the thread that runs the step: /proc snapshots at the measured start,
/// the end of the warm-up and the measured end; once a second the series row, a host sample
/// and a tick for the listeners.
struct Observer<'a, 'e> {
    ticker: Box<dyn Ticker>,
    series: Option<SeriesWriter>,
    series_error: Option<std::io::Error>,
    /// Per-second host samples; None when not taken or once a write failed.
    host_series: Option<metrics::series::HostSeries>,
    cost: &'a CostSources,
    monitor: &'a mut Monitor,
    events: &'a mut (dyn Events + 'e),
    warmup: Option<std::time::Duration>,
    /// Each counter snapshot's deadline.
    snapshot_within: Duration,
    start: Option<metrics::Snapshot>,
    end: Option<metrics::Snapshot>,
    at_warmup_end: WarmupMark,
    recording: Option<Recording>,
}

impl runner::Observer for Observer<'_, '_> {
    fn on_start(&mut self) {
        if let Some(r) = self.recording.as_mut() {
            r.begin();
        }
        self.start = Some(metrics::Snapshot::take(&self.cost.sources));
    }

    fn on_end(&mut self) {
        self.end = Some(metrics::Snapshot::take(&self.cost.sources));
        if let Some(r) = self.recording.as_mut() {
            r.stop();
        }
    }

    fn mark_after(&self) -> Option<std::time::Duration> {
        self.warmup
    }

    fn on_mark(&mut self) {
        let counters = counters(&self.cost.dbms, self.snapshot_within);
        self.at_warmup_end = Some((metrics::Snapshot::take(&self.cost.sources), counters));
    }

    fn on_second(&mut self, row: &runner::SecondRow) {
        if let Some(s) = self.series.as_mut() {
            if let Err(e) = s.row(&series_row(row)) {
                self.series_error = Some(e);
                self.series = None;
            }
        }
        if let Some(h) = self.host_series.as_mut() {
            if h.sample(&self.cost.sources).is_err() {
                self.host_series = None;
            }
        }
        // The last, partial row is reported after the load has stopped.
        if row.interval_s >= 0.999 {
            self.monitor.second();
        }
        let tick = self.ticker.tick(row);
        self.events.second(&tick);
    }
}

fn series_row(r: &runner::SecondRow) -> SecondRow {
    SecondRow {
        index: r.index,
        interval_s: r.interval_s,
        kinds: r
            .kinds
            .iter()
            .map(|k| SecondKind {
                ops: k.ops,
                rows: k.rows,
                errors: k.errors,
                p99_ns: k.p99_ns,
                max_ns: k.max_ns,
            })
            .collect(),
        target_rows_per_s: r.target_rows_per_s,
        achieved_rows_per_s: r.achieved_rows_per_s,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A status report is the server's text: its escape sequences are shown, not obeyed, when
    /// someone cats the file.
    #[test]
    fn a_status_report_is_written_as_printable_text() {
        let d = tempfile::tempdir().unwrap();
        let mut failures = Vec::new();
        let written = write_diagnostics(
            d.path(),
            "l.i0",
            vec![("innodb", "INNODB\u{1b}[2J\nMONITOR\r\tend\n".to_string())],
            &mut failures,
        );
        assert_eq!(written, ["l.i0.innodb.txt"]);
        assert!(failures.is_empty());
        let text = std::fs::read_to_string(d.path().join("l.i0.innodb.txt")).unwrap();
        assert_eq!(text, "INNODB\\u{1b}[2J\nMONITOR\\u{d}\tend\n");
    }
}
