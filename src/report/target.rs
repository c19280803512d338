//! A target's results as a report reads them: `run.json` and its steps, with what the report
//! derives from each step file. `input` fills these in; every section reads them.

use std::collections::BTreeMap;
use std::path::PathBuf;

use crate::results::series::Series;
use crate::results::{Headline, OpStats, Payload, RunFile, Status, StepParameters};

/// One target's result: `run.json` plus its step files, in the order they were planned.
#[derive(Debug, Clone)]
pub struct TargetResult {
    pub dir: PathBuf,
    pub run: RunFile,
    pub steps: Vec<StepView>,
    /// Problems met while reading (unreadable step file, missing series): said in the report.
    pub warnings: Vec<String>,
    /// A campaign's repeats of this target, by round, when there was more than one: this
    /// result's steps are then their medians (`rounds::merge`). Empty otherwise.
    pub repeats: Vec<TargetResult>,
}

impl TargetResult {
    pub fn name(&self) -> &str {
        &self.run.target.name
    }

    /// Its name with its values of a sweep's axes (`pg.default · c4`), where names alone would
    /// not tell results apart.
    pub fn shown_name(&self) -> String {
        shown_name(&self.run)
    }

    pub fn step(&self, name: &str) -> Option<&StepView> {
        self.steps.iter().find(|s| s.name == name)
    }

    /// Planned but without a step file: the target stopped before it (failed or interrupted).
    pub fn planned(&self, name: &str) -> bool {
        self.run.steps_planned.iter().any(|s| s == name)
    }

    /// The campaign round this result is (1-based); None outside a campaign.
    pub fn round(&self) -> Option<u32> {
        self.run.campaign.as_ref().map(|c| c.round)
    }
}

/// A result's name with its values of a sweep's axes (`pg.default · c4`), also before it is a
/// `TargetResult` (warnings of reading it).
pub fn shown_name(run: &RunFile) -> String {
    if run.axes.is_empty() {
        run.target.name.clone()
    } else {
        format!(
            "{} · {}",
            run.target.name,
            crate::results::axes_label(&run.axes)
        )
    }
}

/// One step as a report needs it: the step file's numbers, with what the report derives from
/// them (metric columns, the series). Its suite's part is `payload`, which only that suite's
/// section reads.
#[derive(Debug, Clone)]
pub struct StepView {
    pub name: String,
    /// The suite of the result it is a step of (its run.json's).
    pub suite: crate::suites::Suite,
    pub status: Status,
    pub error: Option<String>,
    pub warnings: Vec<String>,
    pub duration_s: f64,
    pub headline: Headline,
    pub parameters: StepParameters,
    pub ops: BTreeMap<String, OpStats>,
    pub rate_percentiles: BTreeMap<String, Option<f64>>,
    /// Hardware cost per operation and the like: the step's `hardware` object mapped to metric
    /// keys, and the top-level numbers of a `metrics` object; None = not measured.
    pub metrics: BTreeMap<String, Option<f64>>,
    /// Why hardware figures are missing (`hardware.missing`), e.g. no server CPU for SQLite.
    pub not_measured: Vec<String>,
    /// CPU figures resting on fewer than 100 clock ticks (`host`, `server`): rough.
    pub rough_cpu: Vec<&'static str>,
    /// IO of each device holding the target's data or logs (`hardware.per_device`).
    pub devices: Vec<crate::results::hardware::DeviceIo>,
    /// The summary group a result written some other way names (docs/report.md); dbperf's
    /// own steps carry theirs in their payload.
    pub group: Option<String>,
    /// Taken with `--profile`: perf sampling changes throughput by a few percent.
    pub profiled: bool,
    /// What the step's suite measured in its own terms (`results::Payload`).
    pub payload: Option<Payload>,
    pub series: Option<Series>,
    /// What says whether the step ran in memory or was IO-bound (docs/metrics.md).
    pub residency: crate::analysis::residency::Evidence,
}

impl StepView {
    pub fn ok(&self) -> bool {
        self.status == Status::Ok
    }
}
