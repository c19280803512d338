#!/usr/bin/env bash
# One shard of a dbperf campaign per Slurm array task (docs/campaigns.md, "Slurm").
#
#   sbatch examples/campaign-slurm.sh
#
# Every task needs a whole, quiet node: --exclusive. dbperf.toml (with [campaign.pg-versions])
# and the dbperf binary must be reachable from every node, results go to a shared directory.
#SBATCH --job-name=dbperf-pg-versions
#SBATCH --array=1-4
#SBATCH --exclusive
#SBATCH --time=2-00:00:00
#SBATCH --output=dbperf-%A-%a.log
set -euo pipefail

campaign=pg-versions
shards=4
shard=${SLURM_ARRAY_TASK_ID:?run this as an array job}
out=/shared/results/${campaign}/s${shard}

cd "${SLURM_SUBMIT_DIR:-.}"
if [ -f "${out}/campaign.json" ]; then
    # A resubmitted task (the node died, the time limit hit): continue where it stopped.
    exec dbperf run --resume "${out}" --no-progress
fi
exec dbperf run --campaign "${campaign}" --shard "${shard}/${shards}" --out "${out}" --no-progress

# Once every task has ended:
#   dbperf report /shared/results/pg-versions/s* --out /shared/results/pg-versions/report
