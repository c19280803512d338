#!/usr/bin/env bash
# One shard of a dbperf campaign per Slurm array task, for those who write their own job
# script (docs/campaigns.md, "Slurm"). `dbperf run --campaign C --out DIR --slurm N` writes and
# submits the same thing, with the array's size, the binary's path and a report job filled in.
#
#   cd ~/bench            # the directory holding dbperf.toml: every task starts here
#   sbatch campaign-slurm.sh
#
# Edit before submitting:
#   * campaign, out: the [campaign.NAME] of dbperf.toml, and a directory every node reaches;
#   * shards: equal to the array's size (--array=1-N below): a smaller array never runs the
#     last shards (`dbperf report --complete` then says which are missing);
#   * dbperf: the binary's absolute path, or export DBPERF=... before sbatch (a job's PATH is
#     not your shell's; a bare `dbperf` fails every task with "exec: dbperf: not found");
#   * --time: within your partition's limit (sbatch refuses a longer one); a task stopped by it
#     is continued by submitting it again (sbatch --array=K campaign-slurm.sh).
#
# Every task needs a whole, quiet node: --exclusive. --open-mode=append keeps the log of a task
# Slurm requeued (after a node failure) instead of overwriting it.
#SBATCH --job-name=dbperf-pg-versions
#SBATCH --array=1-4
#SBATCH --exclusive
#SBATCH --time=1-00:00:00
#SBATCH --output=dbperf-%A-%a.log
#SBATCH --open-mode=append
set -euo pipefail

campaign=pg-versions
shards=4
out=/shared/results/${campaign}
dbperf=${DBPERF:-/usr/local/bin/dbperf}

shard=${SLURM_ARRAY_TASK_ID:?run this as an array job}
dir=${out}/s${shard}
[ -x "${dbperf}" ] || { echo "no dbperf at ${dbperf}: set dbperf= in this script or export DBPERF" >&2; exit 2; }
cd "${SLURM_SUBMIT_DIR:-.}"
if [ -f "${dir}/campaign.json" ]; then
    # A resubmitted or requeued task (the node died, the time limit hit): continue where it stopped.
    exec "${dbperf}" run --resume "${dir}" --no-progress
fi
exec "${dbperf}" run --campaign "${campaign}" --shard "${shard}/${shards}" --out "${dir}" --no-progress

# Once every task has ended (--complete: exit 1, and no report, while a shard is missing or
# unfinished):
#   dbperf report /shared/results/pg-versions/s* --complete --out /shared/results/pg-versions/report
