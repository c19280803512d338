//! `<out>/slurm/submit.json`: a campaign handed to Slurm (`dbperf run --slurm N`), so a later
//! `dbperf run --resume <out> --slurm` knows the shards, the command every task runs and the
//! jobs already submitted (docs/campaigns.md, "Slurm").

use std::path::Path;

use serde::{Deserialize, Serialize};

use super::Tool;
use crate::error::BadInput;

/// The directory under a Slurm campaign's output that holds its scripts, logs and record.
pub const SLURM_DIR: &str = "slurm";
pub const SUBMIT_FILE: &str = "submit.json";
/// The most shards `--slurm` takes (and a record may name).
pub const MAX_SHARDS: u32 = 1000;

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Submission {
    pub schema: u32,
    pub tool: Tool,
    /// `[campaign.<name>]` of dbperf.toml; null for a run of `--target`s.
    pub campaign: Option<String>,
    /// N: task K runs `--shard K/N` into `<out>/s<K>`.
    pub shards: u32,
    /// The directory the tasks start in (where dbperf.toml is found).
    pub cwd: String,
    /// `dbperf run`'s arguments as given, without --slurm, --sbatch-arg and --out: each task
    /// adds its --shard and --out.
    pub args: Vec<String>,
    /// Options for sbatch, in the order given, after dbperf's own.
    pub sbatch_args: Vec<String>,
    /// Every submission, the first and each resubmission, in order.
    pub jobs: Vec<Submitted>,
}

/// One `sbatch` of the shards and the report job after them.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Submitted {
    pub at: String,
    /// The array job's id.
    pub array: String,
    /// The shards (array indices) it runs.
    pub shards: Vec<u32>,
    /// The report job's id.
    pub report: String,
}

/// A Slurm job id as `sbatch --parsable` prints it (`123`, or `123;cluster`): digits only.
pub fn job_id_ok(id: &str) -> bool {
    !id.is_empty() && id.len() <= 20 && id.bytes().all(|b| b.is_ascii_digit())
}

/// The record of `out`, through the results gate, as a record that drives an action: it is
/// refused unless the user running dbperf wrote it (its arguments go into job scripts). Its job
/// ids and shard numbers are checked, since they go to squeue and name directories; its
/// arguments are the caller's to parse again.
pub fn read_submission(out: &Path) -> anyhow::Result<Submission> {
    let path = out.join(SLURM_DIR).join(SUBMIT_FILE);
    let s: Submission = super::read_versioned_record(&path, "the Slurm submission")?;
    let ids_ok = s.jobs.iter().all(|j| {
        job_id_ok(&j.array)
            && job_id_ok(&j.report)
            && j.shards.iter().all(|k| (1..=s.shards).contains(k))
    });
    if s.shards == 0 || s.shards > MAX_SHARDS || s.jobs.len() > MAX_SHARDS as usize || !ids_ok {
        return Err(BadInput(format!(
            "{} does not match the result schema: its shards or job ids are not what sbatch gives",
            path.display()
        ))
        .into());
    }
    Ok(s)
}

pub fn write_submission(out: &Path, s: &Submission) -> std::io::Result<()> {
    super::write_json_atomic(&out.join(SLURM_DIR).join(SUBMIT_FILE), s)
}
