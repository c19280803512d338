//! `bisect.json`: what `dbperf bisect` asked for, the path its search took and how it ended
//! (docs/bisect.md). Written at the start (how to resume it) and again after every
//! measurement, atomically; the measurements themselves are ordinary campaign cells in the
//! bisect directory's batch directories (`m01`, `m02`, ...).

use std::path::Path;

use serde::{Deserialize, Serialize};

use super::campaign::Invocation;
use super::Tool;

pub const BISECT_FILE: &str = "bisect.json";

/// A comparison of two builds on the judged figure, as the noise-aware verdict calls it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Verdict {
    /// The whole 95% interval of the ratio is beyond a threshold, on rounds enough.
    Changed,
    /// The whole interval is within the thresholds, on rounds enough: no change of that size.
    Same,
    /// Neither yet: the interval crosses a threshold, or rests on too few rounds.
    Unsure,
}

impl Verdict {
    pub fn word(self) -> &'static str {
        match self {
            Verdict::Changed => "changed",
            Verdict::Same => "same",
            Verdict::Unsure => "unsure",
        }
    }
}

/// How a bisect ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Outcome {
    /// Two adjacent builds (adjacent once failed builds are skipped) between which it changed.
    Culprit,
    /// The ends differ, but a range's two halves each differ from nothing: spread over builds.
    Gradual,
    /// The ends are not a confirmed change: nothing to bisect.
    NoChange,
    /// The round budget ran out before a verdict, or an end could not be measured.
    Undecided,
}

impl Outcome {
    pub fn word(self) -> &'static str {
        match self {
            Outcome::Culprit => "culprit",
            Outcome::Gradual => "gradual",
            Outcome::NoChange => "no_change",
            Outcome::Undecided => "undecided",
        }
    }
}

/// Two targets by name, in the list's order.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Pair {
    pub before: String,
    pub after: String,
}

/// A build as measured so far.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Measured {
    pub target: String,
    /// Rounds with a result for the judged step.
    pub rounds: u32,
    /// The judged figure: the median over its rounds (None until one round has it).
    pub value: Option<f64>,
    /// The smallest and largest round.
    pub min: Option<f64>,
    pub max: Option<f64>,
    /// It failed to start or to run the step: skipped, as `git bisect skip` does.
    pub failed: bool,
}

/// One verdict the search used.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Judged {
    pub before: String,
    pub after: String,
    /// after / before of the judged figure (medians over rounds).
    pub ratio: Option<f64>,
    /// Its 95% interval, when there is one.
    pub lo: Option<f64>,
    pub hi: Option<f64>,
    pub verdict: Verdict,
    /// What the interval rested on, or why there was none.
    pub note: String,
}

/// One measurement of the search: a batch of builds run together, interleaved.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Batch {
    /// Its campaign directory under the bisect directory (`m01`).
    pub dir: String,
    pub targets: Vec<String>,
    pub rounds: u32,
    /// Why it was measured ("both ends", "the middle of a and b", "more rounds for ...").
    pub why: String,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct BisectFile {
    pub schema: u32,
    pub tool: Tool,
    pub created_at: String,
    /// How it was asked for, so `--resume` asks again.
    pub invocation: Invocation,
    /// The ordered builds, oldest first.
    pub targets: Vec<String>,
    /// The judged step and figure (`headline`, or a metric key).
    pub step: String,
    pub metric: String,
    /// A ratio beyond these is a change (default the verdict's 0.95 and 1.05).
    pub low: f64,
    pub high: f64,
    /// Rounds of a first measurement of a build, and the most a build is given.
    pub first_rounds: u32,
    pub max_rounds: u32,
    /// None while the search runs.
    #[serde(default)]
    pub outcome: Option<Outcome>,
    /// The culprit pair (outcome `culprit`).
    #[serde(default)]
    pub culprit: Option<Pair>,
    /// The range a `gradual` change is spread over, or the pair left open (`undecided`).
    #[serde(default)]
    pub range: Option<Pair>,
    /// A second change found on the way: the half not bisected.
    #[serde(default)]
    pub second: Option<Pair>,
    /// The ending in one sentence.
    #[serde(default)]
    pub sentence: String,
    /// Each build measured, in the order first measured.
    #[serde(default)]
    pub measured: Vec<Measured>,
    /// The measurements in the order they ran.
    #[serde(default)]
    pub batches: Vec<Batch>,
    /// The verdicts the search went by, in the order it asked for them.
    #[serde(default)]
    pub path: Vec<Judged>,
}

pub fn write_bisect(dir: &Path, f: &BisectFile) -> std::io::Result<()> {
    super::write_json_atomic(&dir.join(BISECT_FILE), f)
}

/// The bisect file of `dir` as a record that drives an action (`--resume` runs its command line
/// again): refused unless the user running dbperf wrote it.
pub fn read_own_bisect(dir: &Path) -> anyhow::Result<BisectFile> {
    super::read_versioned_record(&dir.join(BISECT_FILE), "a bisect's record")
}

/// The bisect file of `dir`, read for a report: whoever wrote it.
pub fn read_bisect(dir: &Path) -> anyhow::Result<BisectFile> {
    let path = dir.join(BISECT_FILE);
    super::parse_versioned(&path, &super::read_gated(&path)?)
}
