//! A step's CPU profile as recorded in `steps/<step>.json` (`profile`): how the samples were
//! taken; the stacks themselves are in the folded file beside it (docs/profiles.md).

use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
pub struct StepProfile {
    /// Whose CPU was sampled: `server` (the managed server's process tree, or dbperf itself for
    /// an embedded DBMS), `client` (dbperf) or `both`.
    pub processes: String,
    /// The perf event sampled: `cycles`, or `cpu-clock` where hardware counters are missing.
    pub event: String,
    /// Samples per second asked of perf.
    pub hz: u32,
    /// The perf command line, as run.
    pub command: String,
    /// The processes perf was attached to (their children forked later are followed).
    pub pids: Vec<u32>,
    /// `<step>.profile.folded` in the same directory; None when nothing could be folded.
    pub folded_file: Option<String>,
    /// Stacks sampled.
    pub samples: u64,
    /// Samples whose leaf frame could not be resolved to a function.
    #[serde(default)]
    pub unresolved_samples: u64,
    /// perf's own CPU time (all its threads) over the measured time, seconds: the profiler's
    /// cost in user space. Its cost in the kernel (taking each sample) is charged to the
    /// sampled processes and is not in this figure.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub perf_cpu_s: Option<f64>,
    /// `perf_cpu_s` as a share of the host's CPU time over the measured time (the window's
    /// length × the host's CPUs), 0..1.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub perf_cpu_share: Option<f64>,
    /// Why the profile is missing or partial.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
}
