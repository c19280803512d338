#!/usr/bin/env bash
# Wall time of `dbperf history detect --stdin` on a history of 10,000 runs x 100 series (white
# noise with three steps each; goal: under 1 s), and of ruptures' PELT (its C implementation) on
# the same data for a ratio. Setup as run.sh (CP_VENV, DBPERF). dbperf is stopped after
# TIMEOUT seconds (default 120) and then timed on one series to estimate the whole.
# Usage: bench/changepoints/speed.sh [series, default 100] [points, default 10000]
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/setup.sh"
"$python" "$here/bench.py" --speed --dbperf "$dbperf" --series "${1:-100}" --points "${2:-10000}" \
    --timeout "${TIMEOUT:-120}"
