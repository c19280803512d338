//! What the run loop tells whoever watches it: the CLI renders these as progress bars, lines and
//! summaries; a test records them. Every method has a no-op default, so a listener implements
//! only what it shows (criterion's `Report` pattern).

use crate::results::{RunStatus, StepFile};

/// One cell of the campaign, in the order it runs.
#[derive(Debug, Clone, PartialEq)]
pub struct PlannedCell {
    /// Position in the whole plan, 1-based.
    pub number: usize,
    pub id: String,
    pub target: String,
    pub suite: crate::suites::Suite,
    /// Its values of the swept axes (`c4.ra128`); empty without a sweep.
    pub axes: String,
    pub round: u32,
    pub rounds: u32,
    /// Run by this invocation (false: another shard's, or already done).
    pub here: bool,
    pub state: String,
}

/// What the run will do, before anything starts.
#[derive(Debug, Clone)]
pub struct PlanView {
    pub campaign: Option<String>,
    pub cells: Vec<PlannedCell>,
    /// `Some((k, n))` for `--shard k/n`.
    pub shard: Option<(u32, u32)>,
    pub resumed: bool,
}

/// A cell starting: `cell 7/24  postgres@16.4 default  round 2/3  ETA 5h10m`.
#[derive(Debug, Clone)]
pub struct CellBegins {
    /// 1-based position in the whole campaign plan (also after a resume and in a shard, which
    /// run only some of its cells), and how many cells the plan has.
    pub index: usize,
    pub of: usize,
    pub target: String,
    pub suite: crate::suites::Suite,
    /// Its values of the swept axes (`c4.ra128`); empty without a sweep.
    pub axes: String,
    pub round: u32,
    pub rounds: u32,
    /// Estimated seconds until this invocation's last cell ends; None before any cell ended.
    pub eta_s: Option<f64>,
    pub attempt: u32,
}

/// How a step's progress is drawn.
#[derive(Debug, Clone, PartialEq)]
pub enum Display {
    /// A bar that fills to `total` units (rows or seconds).
    Bar { total: u64 },
    /// Work of unknown length (l.x builds indexes): a spinner with a message.
    Spinner { message: String },
}

#[derive(Debug, Clone)]
pub struct StepBegins {
    pub target: String,
    pub step: String,
    pub display: Display,
}

/// One second of a step, in neutral terms: where the bar is and the rates to show.
#[derive(Debug, Clone, Default)]
pub struct Tick {
    /// 0-based second of the step.
    pub second: u64,
    /// Bar position (rows done, or seconds).
    pub position: u64,
    /// Rates to show, each with its unit label (`ins/s`, `queries/s`).
    pub rates: Vec<(f64, &'static str)>,
    /// The paced rate the step aims at (background inserts), rows/s.
    pub target: Option<f64>,
    pub errors: u64,
    /// Inside a warm-up whose events are not counted.
    pub warmup: bool,
}

/// Things worth a line, by kind, so renderers can choose how to show them.
#[derive(Debug, Clone, PartialEq)]
pub enum Note {
    /// A target's steps are about to run.
    TargetBegins {
        steps: Vec<String>,
    },
    /// The host's state when the target began (one line).
    Host(String),
    ServerStarted {
        binary: String,
        pid: u32,
        start_s: f64,
        connection: String,
    },
    /// The target could not begin (its server did not start): recorded, the run goes on.
    TargetFailed(String),
    Warning(String),
    /// Something on the host during the run that makes results vary (also in run.json).
    HostWarning(String),
    /// A step's untimed cleanup and wait.
    CleanupWait {
        budget_s: u64,
    },
    /// The managed server had exited when the target ended; the end of its log.
    ServerExited {
        log_tail: String,
    },
    Calibration {
        before_ms: f64,
        after_ms: f64,
        drift_pct: f64,
    },
    Pausing {
        seconds: u64,
    },
    /// Databases left in place for later runs.
    DataKept(String),
    /// Servers left by an earlier dbperf, found and stopped.
    LeftoverStopped(String),
    /// Host settings a killed dbperf left changed, put back (one line each).
    HostPutBack(String),
    /// A result file could not be written (disk full, ...): the run goes on, exits 1.
    WriteFailed(String),
}

/// How a target's run ended.
#[derive(Debug, Clone)]
pub struct TargetEnds {
    pub target: String,
    pub status: RunStatus,
}

pub trait Events {
    fn plan(&mut self, _plan: &PlanView) {}
    fn cell_begins(&mut self, _c: &CellBegins) {}
    fn note(&mut self, _target: &str, _note: &Note) {}
    fn step_begins(&mut self, _s: &StepBegins) {}
    fn second(&mut self, _t: &Tick) {}
    fn step_ends(&mut self, _target: &str, _step: &StepFile) {}
    fn target_ends(&mut self, _t: &TargetEnds) {}
}

/// Listens to nothing.
pub struct Quiet;

impl Events for Quiet {}

/// Keeps every event, for tests of the run loop.
#[derive(Default)]
pub struct Recorder {
    pub log: Vec<String>,
    pub steps: Vec<(String, StepFile)>,
    pub seconds: usize,
}

impl Events for Recorder {
    fn plan(&mut self, p: &PlanView) {
        for c in &p.cells {
            self.log
                .push(format!("plan {} {} here={}", c.number, c.id, c.here));
        }
    }
    fn cell_begins(&mut self, c: &CellBegins) {
        self.log.push(format!(
            "cell {}/{} {} round {}/{}",
            c.index, c.of, c.target, c.round, c.rounds
        ));
    }
    fn note(&mut self, target: &str, n: &Note) {
        self.log.push(format!("note {target}: {n:?}"));
    }
    fn step_begins(&mut self, s: &StepBegins) {
        self.log.push(format!("step {} {}", s.target, s.step));
    }
    fn second(&mut self, _t: &Tick) {
        self.seconds += 1;
    }
    fn step_ends(&mut self, target: &str, s: &StepFile) {
        self.log
            .push(format!("end {target} {} {}", s.step, s.status.as_str()));
        self.steps.push((target.to_string(), s.clone()));
    }
    fn target_ends(&mut self, t: &TargetEnds) {
        self.log
            .push(format!("target {} {}", t.target, t.status.as_str()));
    }
}
